// SPDX-License-Identifier: GPL-2.0
/*
 * badtarget: where a scenario misbehaves in the commands of cmd.c: the
 * responses held, replayed, late or without their data, the disconnects,
 * the RDMA accesses the host must refuse, and their timers.
 */
#include "badtarget.h"

/* AENs: notice, namespace attribute changed, changed namespace list log. */
void aen_send(struct ctrl *ct)
{
	struct queue *q = ct->admin;

	while (q && ct->naers && ct->aens_sent < AEN_STORM) {
		int i = ct->aers[--ct->naers];

		ct->aens_sent++;
		complete(q, i, SC_SUCCESS, 0x00040002, NULL, 0, 0);
		if (ct->aens_sent == AEN_STORM)
			logmsg("scenario aen-storm: %d AENs completed", AEN_STORM);
	}
}

/* Set @t to @ms from now. */
void due_in(struct timespec *t, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += ms / 1000;
	t->tv_nsec += (long)(ms % 1000) * 1000000;
	if (t->tv_nsec >= 1000000000) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000;
	}
}

/* Whether the time @t has come. */
bool is_due(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t->tv_sec ||
	       (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

/*
 * replay-old-cid: the Read held unanswered on the first association, and
 * how far the replays of its command id got.
 */
static struct {
	int phase;	/* 0 nothing held, 1 held, 2 idle replay sent, 3 done */
	int assoc;	/* the association it was held on */
	int idle_assoc;	/* the one the idle tag got the old id on */
	uint16_t qid, cid;
} held;

#define CID_TAG(cid)	((cid) & 0x0fff)

/*
 * Hold the first Read of HOLD_LBA: the host times it out, cancels it and
 * reconnects.  On an association after the one the idle tag got the old id
 * on (replay_on_connect()), answer the next Read that uses the
 * same tag with the held command id instead (the generation the tag had
 * before): the host must refuse it unless that Read has exactly that id.
 * True if slot @i is taken care of.
 */
bool replay_old_cid(struct queue *q, int i, uint64_t slba)
{
	struct cmd *c = &q->cmds[i];
	uint16_t cid = get16(c->sqe + 2);
	uint8_t cqe[CQE_SIZE];

	if (scenario != S_REPLAY_OLD_CID || c->sqe[0] != OP_READ)
		return false;
	if (held.phase == 0 && slba == HOLD_LBA) {
		held.phase = 1;
		held.assoc = associations;
		held.qid = q->qid;
		held.cid = cid;
		logmsg("scenario replay-old-cid: holding Read command id %#x (tag %u) on queue %u, association %d",
		       cid, CID_TAG(cid), q->qid, associations);
		return true;	/* the slot stays busy: never answered */
	}
	/* not on the association the idle replay ends: the host may drop it */
	if (held.phase != 2 || associations <= held.idle_assoc ||
	    q->qid != held.qid || CID_TAG(cid) != CID_TAG(held.cid))
		return false;
	held.phase = 3;
	logmsg("scenario replay-old-cid: association %d: answering Read command id %#x on queue %u with the old command id %#x (%s generation)",
	       associations, cid, q->qid, held.cid,
	       cid == held.cid ? "same" : "other");
	fill_cqe(q, cqe, held.cid, SC_SUCCESS, 0);
	send_extra(q, cqe, CQE_SIZE, 0);
	return true;		/* held too; the recovery ends it */
}

/*
 * setup-timeout: hold a Read of HOLD_LBA on an association, and the retry
 * of it on the next association too, which the host sends while that one
 * is being set up (its I/O queues started, the controller not yet LIVE):
 * the host times it out there.  At most one per association, 4 in all.
 * True if slot @i is held.
 */
bool setup_timeout(struct queue *q, int i, uint64_t slba)
{
	static int held_n, held_assoc;
	struct cmd *c = &q->cmds[i];

	if (scenario != S_SETUP_TIMEOUT || c->sqe[0] != OP_READ ||
	    slba != HOLD_LBA || held_n == 4 || held_assoc == associations)
		return false;
	held_n++;
	held_assoc = associations;
	logmsg("scenario setup-timeout: holding Read command id %#x on queue %u, association %d (%d of 4)",
	       get16(c->sqe + 2), q->qid, associations, held_n);
	return true;		/* the slot stays busy: never answered */
}

/*
 * timeout-storm: hold every Read of the second MiB (LBAs 2048 to 4095) on
 * the first association that gets one, answer them on the next ones: a
 * host that sent a queue full of them times them all out at once, and must
 * not flood its log with a line for each.  True if slot @i is held.
 */
bool timeout_storm(struct queue *q, int i, uint64_t slba)
{
	static int storm_assoc;

	if (scenario != S_TIMEOUT_STORM || q->cmds[i].sqe[0] != OP_READ ||
	    slba < STORM_LBA || slba >= 2 * STORM_LBA)
		return false;
	if (!storm_assoc) {
		storm_assoc = associations;
		logmsg("scenario timeout-storm: holding every Read of the second MiB on association %d",
		       associations);
	}
	return storm_assoc == associations;
}

/*
 * read-no-data: a Read of the third MiB gets a success response and no
 * data at all, so the host's buffer keeps whatever it held: a host that
 * reads through buffers it reuses must not hand their old contents to the
 * reader, perhaps another user's data.  True if slot @i was answered.
 */
bool read_no_data(struct queue *q, int i, uint64_t slba)
{
	if (scenario != S_READ_NO_DATA || q->cmds[i].sqe[0] != OP_READ ||
	    slba < NODATA_LBA || slba >= NODATA_LBA + STORM_LBA)
		return false;
	if (!misbehaved)
		logmsg("scenario read-no-data: answering Reads of the third MiB without their data");
	misbehaved = true;
	complete(q, i, SC_SUCCESS, 0, NULL, 0, 0);
	return true;
}

/*
 * slow-write: the first Write whose data arrived is answered SLOW_WRITE_MS
 * late (slow_write_due(), from the event loop), every other command at
 * once: a live target that is slow with one command, which a deletion
 * must not take for a dead one.
 */
static struct queue *slow_q;
static int slow_i;
static struct timespec slow_due;

bool slow_write(struct queue *q, int i)
{
	if (scenario != S_SLOW_WRITE || misbehaved)
		return false;
	misbehaved = true;
	slow_q = q;
	slow_i = i;
	due_in(&slow_due, SLOW_WRITE_MS);
	logmsg("scenario slow-write: holding Write command id %#x on queue %u for %d ms",
	       get16(q->cmds[i].sqe + 2), q->qid, SLOW_WRITE_MS);
	return true;
}

static void slow_write_due(void)
{
	if (!slow_q || !is_due(&slow_due))
		return;
	logmsg("scenario slow-write: answering the held Write");
	complete(slow_q, slow_i, SC_SUCCESS, 0, NULL, 0, 0);
	slow_q = NULL;
}

void slow_write_forget(struct queue *q)
{
	if (slow_q != q)
		return;
	logmsg("scenario slow-write: the held Write's queue went first");
	slow_q = NULL;
}

/*
 * drop-setups: the first Read of HOLD_LBA disconnects the live association
 * (the host recovers); on each of the next DROP_SETUPS associations, I/O
 * queue 2's fabrics Connect is held, so the setup waits with queue 1
 * live, and the association is disconnected when the Read comes again on
 * it (the host lets it through queue 1 during the setup), or 2 s after
 * the held Connect.  Every failed setup takes that Read back: a host must
 * not spend one of the Read's retries each time, or a few failed setups
 * would fail it long before ctrl_loss_tmo.
 */
static int drop_cntlid = -1;	/* the association to disconnect */
static int drop_count;
static bool drop_held;		/* its queue 2's Connect is held */
static struct timespec drop_due;

static void drop_association(int cntlid, const char *why)
{
	struct queue *q;

	for (q = queues; q; q = q->next)
		if (q->cntlid == cntlid && q->established && !q->dead)
			rdma_disconnect(q->id);
	drop_count++;
	logmsg("scenario drop-setups: association %d disconnected (%s), %d of %d",
	       associations, why, drop_count, DROP_SETUPS + 1);
	drop_cntlid = -1;
	drop_held = false;
}

/* A new association: one of those to disconnect during its setup? */
void drop_setups_admin(int cntlid)
{
	if (scenario == S_DROP_SETUPS && drop_count &&
	    drop_count <= DROP_SETUPS)
		drop_cntlid = cntlid;
}

bool drop_setups_connect(struct queue *q, int i, int cntlid)
{
	if (q->qid != 2 || cntlid != drop_cntlid)
		return false;
	drop_held = true;
	due_in(&drop_due, 2000);
	logmsg("scenario drop-setups: holding I/O queue 2's Connect (command id %#x)",
	       get16(q->cmds[i].sqe + 2));
	return true;
}

bool drop_setups_read(struct queue *q, int i, uint64_t slba)
{
	if (scenario != S_DROP_SETUPS || q->cmds[i].sqe[0] != OP_READ ||
	    slba != HOLD_LBA || drop_count > DROP_SETUPS)
		return false;
	if (!drop_count) {
		drop_association(q->cntlid, "the first Read of LBA 98760");
		return true;
	}
	if (q->cntlid != drop_cntlid)
		return false;
	drop_association(q->cntlid, "the Read came during the setup");
	return true;
}

static void drop_setups_due(void)
{
	if (drop_held && is_due(&drop_due))
		drop_association(drop_cntlid, "no Read within 2 s");
}

void scenario_timers(void)
{
	slow_write_due();
	drop_setups_due();
}

/*
 * replay-old-cid: the fabrics Connect of I/O queue @q of a later
 * association is being answered.  The held command's tag is idle (the
 * controller cannot be live before this queue is): send the old command
 * id to it, ahead of the Connect's response.
 */
void replay_on_connect(struct queue *q)
{
	uint8_t cqe[CQE_SIZE];

	if (scenario != S_REPLAY_OLD_CID || held.phase != 1 ||
	    q->qid != held.qid || associations <= held.assoc)
		return;
	held.phase = 2;
	held.idle_assoc = associations;
	logmsg("scenario replay-old-cid: association %d: queue %u connecting, sending the old command id %#x to the idle tag",
	       associations, q->qid, held.cid);
	fill_cqe(q, cqe, held.cid, SC_SUCCESS, 0);
	send_extra(q, cqe, CQE_SIZE, 0);
}

/* Disconnect mid-transfer: half the data moves, then the DREQ. */
bool dreq_mid_io(struct queue *q, int i, bool write)
{
	struct cmd *c = &q->cmds[i];
	uint64_t slba = get64(c->sqe + 40);
	struct ibv_sge sge = {
		.addr = (uintptr_t)(ram + (slba << LBA_SHIFT)),
		.length = c->len / 2, .lkey = ram_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = WR_ID(WR_WRITE, i), .sg_list = &sge, .num_sge = 1,
		.opcode = write ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
	}, *bad;

	if (c->len < (512u << 10) ||
	    !misbehave(S_DREQ_MID_IO, "disconnecting in the middle of a transfer"))
		return false;
	logmsg("  %s of %u bytes, disconnecting after %u", write ? "Write" : "Read",
	       c->len, write ? SCRATCH : c->len / 2);
	wr.wr.rdma.remote_addr = c->addr;
	wr.wr.rdma.rkey = c->rkey;
	if (write) {		/* into a scratch copy: the RAM stays intact */
		sge.addr = (uintptr_t)c->buf;
		sge.length = SCRATCH;
		sge.lkey = q->mr->lkey;
	}
	ibv_post_send(q->id->qp, &wr, &bad);
	rdma_disconnect(q->id);
	return true;
}

/*
 * An RDMA operation on an I/O command's buffer, with the command's own
 * rkey, that the host must refuse (remote access error):
 * cross-queue-write  a WRITE into a Read's buffer through another
 *                    connection of the host, the admin queue's: refused by
 *                    a host that gives each connection its own protection
 *                    domain, let through by one that shares a domain;
 * read-from-read     a READ from a Read's buffer through its own connection
 *                    (both: the first Read of PROBE_LBA);
 * write-to-write     a WRITE into a Write's buffer through its own
 *                    connection: refused by a host whose registration
 *                    grants only the access the command needs.
 * The completion says which (poll_cq()).
 */
const char *foreign_op;		/* "read" or "write": a failed completion
				 * need not say its opcode */

void foreign_access(struct queue *q, int i, bool write_cmd,
		    uint64_t slba)
{
	struct cmd *c = &q->cmds[i];
	struct ctrl *ct = ctrl_of(q);
	struct queue *via = q;
	static uint8_t pattern[SCRATCH];
	static struct ibv_mr *pattern_mr;
	struct ibv_sge sge = {
		.addr = (uintptr_t)pattern, .length = SCRATCH,
	};
	struct ibv_send_wr wr = {
		.wr_id = WR_ID(WR_FOREIGN, 0), .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (!c->len || !c->rkey)
		return;
	switch (scenario) {
	case S_CROSS_QUEUE_WRITE:
		via = ct ? ct->admin : NULL;
		if (write_cmd || slba != PROBE_LBA || !via || via->dead ||
		    !misbehave(scenario, "writing into a Read's buffer through the admin queue's connection"))
			return;
		break;
	case S_READ_FROM_READ:
		if (write_cmd || slba != PROBE_LBA ||
		    !misbehave(scenario, "reading a Read's buffer through its own connection"))
			return;
		wr.opcode = IBV_WR_RDMA_READ;
		break;
	case S_WRITE_TO_WRITE:
		if (!write_cmd ||
		    !misbehave(scenario, "writing into a Write's buffer through its own connection"))
			return;
		break;
	default:
		return;
	}
	if (!pattern_mr) {
		memset(pattern, 0xdb, sizeof(pattern));
		pattern_mr = ibv_reg_mr(pd, pattern, sizeof(pattern),
					IBV_ACCESS_LOCAL_WRITE);
		if (!pattern_mr) {
			logmsg("  ibv_reg_mr: %s", strerror(errno));
			return;
		}
	}
	foreign_op = wr.opcode == IBV_WR_RDMA_READ ? "read" : "write";
	sge.lkey = pattern_mr->lkey;
	sge.length = c->len < SCRATCH ? c->len : SCRATCH;
	wr.wr.rdma.remote_addr = c->addr;
	wr.wr.rdma.rkey = c->rkey;
	logmsg("  queue %u's rkey %#x, %u bytes, through queue %u", q->qid,
	       c->rkey, sge.length, via->qid);
	if (ibv_post_send(via->id->qp, &wr, &bad))
		logmsg("  ibv_post_send: %s", strerror(errno));
	else
		via->foreign_pending = true;
}
