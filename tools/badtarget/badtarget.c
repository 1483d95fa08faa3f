// SPDX-License-Identifier: GPL-2.0
/*
 * badtarget: a small user-space NVMe over Fabrics RDMA target that can be
 * told to misbehave, so the host transport's wire checks get exercised.
 *
 *   badtarget [--addr IP] [--port N] [--nqn NQN] [--scenario NAME] [-v]
 *
 * It speaks just enough of the NVMe/RDMA binding for a Linux host: the CM
 * private data, fabrics Connect (data by RDMA READ), Property Get/Set,
 * Identify, Set/Get Features, Get Log Page, Keep Alive, Async Event
 * Requests and Read/Write/Flush on a 64 MiB RAM namespace with 512-byte
 * blocks.  All data travels through keyed SGLs (IOCCSZ 4: no in-capsule
 * data), but for huge-ioccsz, whose receive buffers also take a Connect's
 * data in the capsule.  One thread, one event loop over the CM channel and a shared
 * completion channel.
 *
 * Scenarios (one per run, --scenario; "good" behaves): see usage() and
 * selftests/xrdma/bad_target_scenarios.sh for what the host must do with each
 * (test_bad_input.sh for maxcmd-0 and maxcmd-1, limits a connect meets).
 * Misbehaviour is one-shot unless said otherwise (no-inv and admin-ctrl
 * are for the whole run), so the host can recover and reconnect to a
 * target that behaves again.
 *
 * SIGTERM or SIGINT stops it: every connection is torn down, exit 0.
 */
#include "badtarget.h"

const char *const scenario_names[S_NR] = {
	[S_GOOD] = "good",
	[S_REPLAY_CID] = "replay-cid",
	[S_UNKNOWN_CID] = "unknown-cid",
	[S_EARLY_RSP] = "early-rsp",
	[S_SHORT_CAPSULE] = "short-capsule",
	[S_LONG_CAPSULE] = "long-capsule",
	[S_BAD_STATUS] = "bad-status",
	[S_INV_WRONG_RKEY] = "inv-wrong-rkey",
	[S_INV_NO_MR] = "inv-no-mr",
	[S_SMALL_CRQSIZE] = "small-crqsize",
	[S_REJ_GARBAGE] = "rej-garbage",
	[S_EST_DREQ] = "est-dreq",
	[S_SILENT] = "silent",
	[S_MQES_SHRINK] = "mqes-shrink",
	[S_MORE_QUEUES] = "more-queues",
	[S_AEN_STORM] = "aen-storm",
	[S_DREQ_MID_IO] = "dreq-mid-io",
	[S_HUGE_IOCCSZ] = "huge-ioccsz",
	[S_IDLE_DREQ] = "idle-dreq",
	[S_CROSS_QUEUE_WRITE] = "cross-queue-write",
	[S_REPLAY_OLD_CID] = "replay-old-cid",
	[S_SETUP_TIMEOUT] = "setup-timeout",
	[S_READ_FROM_READ] = "read-from-read",
	[S_WRITE_TO_WRITE] = "write-to-write",
	[S_TIMEOUT_STORM] = "timeout-storm",
	[S_READ_NO_DATA] = "read-no-data",
	[S_SLOW_WRITE] = "slow-write",
	[S_DROP_SETUPS] = "drop-setups",
	[S_MAXCMD_0] = "maxcmd-0",
	[S_MAXCMD_1] = "maxcmd-1",
	[S_NO_INV] = "no-inv",
	[S_ADMIN_CTRL] = "admin-ctrl",
	[S_NO_AEN] = "no-aen",
};

static const char *const scenario_help[S_NR] = {
	[S_GOOD] = "behave",
	[S_REPLAY_CID] = "answer the first Read, then send that response again",
	[S_UNKNOWN_CID] = "answer the first Read with a command id never sent",
	[S_EARLY_RSP] = "a response on queues 0 and 1 right after accepting, before Connect",
	[S_SHORT_CAPSULE] = "answer the first Read with an 8-byte SEND",
	[S_LONG_CAPSULE] = "answer the first Read with a 64-byte SEND",
	[S_BAD_STATUS] = "answer the first Read with an undefined status (DNR), bogus SQ head and id",
	[S_INV_WRONG_RKEY] = "answer the first Read with SEND_WITH_INV naming another rkey",
	[S_INV_NO_MR] = "answer the first Keep Alive with SEND_WITH_INV",
	[S_SMALL_CRQSIZE] = "reply to every connect with crqsize below hsqsize",
	[S_REJ_GARBAGE] = "reject every connect with garbage private data",
	[S_EST_DREQ] = "accept every connect, then disconnect at once",
	[S_SILENT] = "accept every connect, never answer a command",
	[S_MQES_SHRINK] = "CAP.MQES and MAXCMD 31/32 from the second association on",
	[S_MORE_QUEUES] = "grant more I/O queues than asked",
	[S_AEN_STORM] = "complete every AER at once, " "100 times",
	[S_DREQ_MID_IO] = "disconnect in the middle of the first transfer of 512 KiB or more",
	[S_HUGE_IOCCSZ] = "Identify IOCCSZ 0x10000005 (16 * IOCCSZ overflows 32 bits) and SGL offsets",
	[S_IDLE_DREQ] = "disconnect I/O queue 1, idle, when queue 2's connect request comes",
	[S_CROSS_QUEUE_WRITE] = "RDMA WRITE into the buffer of the first Read of LBA 800 through the admin queue's\n"
		"                  connection, then answer it",
	[S_REPLAY_OLD_CID] = "never answer the first Read of LBA 98760; after the reconnect send its\n"
		"                  command id: to the idle tag, then over the tag's next Read",
	[S_SETUP_TIMEOUT] = "never answer a Read of LBA 98760, at most one per association and\n"
		"                  4 in all: the one the host retries after the recovery is held too",
	[S_READ_FROM_READ] = "RDMA READ from the buffer of the first Read of LBA 800 through its own connection,\n"
		"                  then answer it",
	[S_WRITE_TO_WRITE] = "RDMA WRITE into the first Write's buffer through its own connection, then serve it",
	[S_TIMEOUT_STORM] = "never answer a Read of the second MiB on the first association that gets one",
	[S_READ_NO_DATA] = "answer every Read of the third MiB with success, writing no data",
	[S_SLOW_WRITE] = "answer the first Write 2 s late, every other command at once; take 2 s\n"
		"                  over a shutdown (CSTS.SHST 01 until then)",
	[S_DROP_SETUPS] = "disconnect at the first Read of LBA 98760, then hold I/O queue 2's Connect on\n"
		"                  the next 6 associations and disconnect each when that Read comes again",
	[S_MAXCMD_0] = "Identify MAXCMD 0 (no limit given), CAP.MQES 127",
	[S_MAXCMD_1] = "Identify MAXCMD 1: one command at a time per queue",
	[S_NO_INV] = "never invalidate the host's rkey: every response a plain SEND, as from a target\n"
		"                  that does not invalidate remotely (SPDK's on a software device, for one)",
	[S_ADMIN_CTRL] = "an administrative controller (Identify CNTRLTYPE 3), which has no I/O queues:\n"
		"                  Set Features Number of Queues and every I/O queue's Connect refused",
	[S_NO_AEN] = "Identify OAES 0: no event to configure, so a host with no I/O queues and no\n"
		"                  keep alive sends nothing once it is live",
};


enum scenario scenario = S_GOOD;
bool misbehaved;		/* the one-shot misbehaviour happened */
bool multi_ctrl;		/* --multi-ctrl: CMIC and NMIC say so */
int verbose;
volatile sig_atomic_t stop;
struct rdma_event_channel *cm_ch;
struct ibv_comp_channel *comp_ch;
struct rdma_cm_id *listen_id;
struct ibv_context *verbs;
struct ibv_pd *pd;
struct ibv_device_attr dev_attr;
uint8_t *ram;
struct ibv_mr *ram_mr;
struct queue *queues;
struct ctrl ctrls[MAX_CTRLS];
int next_cntlid = 1;
int associations;
char subnqn[NQN_LEN] = "nqn.2026-11.io.xrdma:bad";
/* rkey of the admin queue's last command with data, for the inv-* cases */
uint32_t admin_rkey;

void logmsg(const char *fmt, ...)
{
	struct timespec ts;
	va_list ap;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("badtarget[%ld.%03ld]: ", (long)ts.tv_sec, ts.tv_nsec / 1000000);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* Take the one-shot misbehaviour of scenario @s: true the first time. */
bool misbehave(enum scenario s, const char *what)
{
	if (scenario != s || misbehaved)
		return false;
	misbehaved = true;
	logmsg("scenario %s: %s", scenario_names[s], what);
	return true;
}

/* ------------------------------------------------------------ CM */

/* The caller destroys @id once the event is acked. */
static void reject(struct rdma_cm_id *id, uint16_t sts)
{
	struct cm_rej rej = { .recfmt = 0, .sts = sts };

	logmsg("rejecting a connect request: NVMe-RDMA status %u", sts);
	rdma_reject(id, &rej, sizeof(rej));
}

static void reject_garbage(struct rdma_cm_id *id)
{
	static int n;
	static const uint8_t junk[] = {
		0x34, 0x12, 0xef, 0xbe, 0xad, 0xde, 0x55, 0xaa,
	};

	switch (n++ % 3) {
	case 0:
		logmsg("scenario rej-garbage: REJ with 1 byte of private data");
		rdma_reject(id, junk + 2, 1);
		break;
	case 1:
		logmsg("scenario rej-garbage: REJ with record format 0x1234");
		rdma_reject(id, junk, sizeof(junk));
		break;
	default:
		logmsg("scenario rej-garbage: REJ without private data");
		rdma_reject(id, NULL, 0);
		break;
	}
}

/*
 * Accept or reject a connect request.  The id of a rejected request (or
 * the queue of a failed accept) is destroyed by the caller after the event
 * is acked: rdma_destroy_id() waits for that.
 */
/* early-rsp: a success for command id 0x10, never sent yet. */
static void early_rsp(struct queue *q)
{
	uint8_t cqe[CQE_SIZE];

	misbehaved = true;
	logmsg("scenario early-rsp: a response on queue %u before its Connect",
	       q->qid);
	fill_cqe(q, cqe, 0x10, SC_SUCCESS, 0);
	send_extra(q, cqe, CQE_SIZE, 0);
}

static void cm_event(void);

/*
 * The host sets up the RC connections of its I/O queues in parallel and
 * sends their fabrics Connects once all of them are established: while
 * queue 2 is not accepted, an established queue 1 has had no command and
 * the host has no I/O tag set.  Queue 2's request may come before queue
 * 1's, or before its RTU: handle CM events (at most 2 s) until queue 1,
 * without a Connect yet, is established.
 */
static struct queue *wait_idle_q1(void)
{
	struct pollfd pfd = { .fd = cm_ch->fd, .events = POLLIN };
	struct queue *q1;
	int ms;

	for (ms = 0; ms <= 2000; ms += 10) {
		for (q1 = queues; q1; q1 = q1->next)
			if (q1->qid == 1 && q1->cntlid < 0)
				break;
		if (q1 && q1->established)
			return q1;
		if (poll(&pfd, 1, 10) > 0)
			cm_event();
	}
	return NULL;
}

/*
 * Queue 1, established and idle, loses its connection while queue 2 is
 * not accepted yet: nothing the host waits for fails with it.  Queue 2
 * is accepted half a second later, so that the host has handled the loss
 * before it could send queue 1's Connect.
 */
static void idle_dreq(struct queue *q1)
{
	if (q1 && misbehave(S_IDLE_DREQ, "disconnecting the idle I/O queue 1")) {
		rdma_disconnect(q1->id);
		/* let the host act on it before queue 2 is up */
		usleep(500 * 1000);
	}
}

static void connect_request(struct rdma_cm_event *ev, bool *destroy_id,
			    struct queue **free_q)
{
	struct rdma_cm_id *id = ev->id;
	const struct cm_req *req = ev->param.conn.private_data;
	struct rdma_conn_param cp = { 0 };
	struct cm_rep rep = { 0 };
	struct queue *q, *q1 = NULL;

	if (scenario == S_REJ_GARBAGE) {
		reject_garbage(id);
		*destroy_id = true;
		return;
	}
	if (setup_device(id->verbs)) {
		reject(id, 6);
		*destroy_id = true;
		return;
	}
	if (!req || ev->param.conn.private_data_len < sizeof(*req)) {
		reject(id, 1);		/* invalid length */
		*destroy_id = true;
		return;
	}
	if (req->recfmt != 0) {
		reject(id, 2);
		*destroy_id = true;
		return;
	}
	if (req->hrqsize < 1 || req->hrqsize > 1024 ||
	    (req->qid == 0 && req->hrqsize > AQ_DEPTH)) {
		reject(id, 5);
		*destroy_id = true;
		return;
	}
	q = queue_alloc(id, req);
	if (!q) {
		reject(id, 6);
		*destroy_id = true;
		return;
	}
	rep.recfmt = 0;
	rep.crqsize = q->size;
	if (scenario == S_SMALL_CRQSIZE) {
		rep.crqsize = q->hsqsize / 4 ? q->hsqsize / 4 : 1;
		logmsg("scenario small-crqsize: queue %u: crqsize %u, hsqsize %u",
		       q->qid, rep.crqsize, q->hsqsize);
	}
	cp.private_data = &rep;
	cp.private_data_len = sizeof(rep);
	cp.responder_resources = ev->param.conn.initiator_depth;
	if (cp.responder_resources > dev_attr.max_qp_rd_atom)
		cp.responder_resources = dev_attr.max_qp_rd_atom;
	cp.initiator_depth = ev->param.conn.responder_resources;
	if (cp.initiator_depth > dev_attr.max_qp_init_rd_atom)
		cp.initiator_depth = dev_attr.max_qp_init_rd_atom;
	if (!cp.initiator_depth)
		cp.initiator_depth = 1;
	cp.rnr_retry_count = 7;
	cp.flow_control = 1;
	dbg("queue %u: connect request, hrqsize %u hsqsize %u", q->qid,
	    q->size, q->hsqsize);
	if ((scenario == S_IDLE_DREQ || scenario == S_EARLY_RSP) &&
	    q->qid == 2 && associations == 1)
		q1 = wait_idle_q1();
	if (scenario == S_IDLE_DREQ)
		idle_dreq(q1);
	if (rdma_accept(id, &cp)) {
		logmsg("rdma_accept: %s", strerror(errno));
		*free_q = q;
		return;
	}
	/*
	 * The QP is ready to send once accepted: this response goes out
	 * right behind the CM reply, before the host can have sent its
	 * fabrics Connect; on the first I/O queue of the first association
	 * also before the host has an I/O tag set (it connects every I/O
	 * queue first).  Command id 0x10 (tag 16): should it arrive after
	 * the Connect, it still cannot match it.
	 */
	if (scenario == S_EARLY_RSP && q->qid <= 1 && associations <= 1 &&
	    !(q->qid == 0 && associations == 1))
		early_rsp(q);
	/*
	 * The host connects all I/O queues before it allocates the I/O tag
	 * set: until queue 2 is up, queue 1 has no tag set behind it.
	 */
	if (scenario == S_EARLY_RSP && q1)
		early_rsp(q1);
}

static void established(struct queue *q)
{
	q->established = true;
	dbg("queue %u: established", q->qid);
	if (scenario == S_EST_DREQ) {
		logmsg("scenario est-dreq: queue %u established, disconnecting",
		       q->qid);
		rdma_disconnect(q->id);
	}
}

/*
 * A host that refuses a foreign_access() may end the connection before
 * its NAK reaches this side (seen on a slow debug kernel): the WR then
 * completes flushed once the disconnect puts the QP in error.  Wait for
 * that completion (1 s at most) before the queue is freed, so that the
 * log says what became of it.
 */
static void reap_foreign(struct queue *q)
{
	int i;

	for (i = 0; i < 100 && q->foreign_pending; i++) {
		poll_cq(q);
		if (q->foreign_pending)
			usleep(10000);
	}
}

static void cm_event(void)
{
	struct rdma_cm_event *ev, copy;
	struct queue *q;

	if (rdma_get_cm_event(cm_ch, &ev))
		return;
	copy = *ev;
	q = ev->id ? ev->id->context : NULL;
	dbg("cm event %s (%d) status %d", rdma_event_str(ev->event), ev->event,
	    ev->status);
	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST: {
		bool destroy_id = false;
		struct queue *free_q = NULL;

		connect_request(ev, &destroy_id, &free_q);
		rdma_ack_cm_event(ev);
		if (destroy_id)
			rdma_destroy_id(copy.id);
		if (free_q)
			queue_free(free_q);
		return;
	}
	case RDMA_CM_EVENT_ESTABLISHED:
		rdma_ack_cm_event(ev);
		if (q)
			established(q);
		return;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		rdma_ack_cm_event(ev);
		if (q && copy.id != listen_id) {
			if (copy.event == RDMA_CM_EVENT_DISCONNECTED) {
				rdma_disconnect(q->id);
				reap_foreign(q);
			} else {
				logmsg("queue %u: %s", q->qid,
				       rdma_event_str(copy.event));
			}
			dbg("queue %u: %s", q->qid, rdma_event_str(copy.event));
			queue_free(q);
		}
		if (copy.event == RDMA_CM_EVENT_DEVICE_REMOVAL)
			stop = 1;
		return;
	default:
		rdma_ack_cm_event(ev);
		return;
	}
}

static void cq_event(void)
{
	struct ibv_cq *cq;
	void *ctx;

	while (!ibv_get_cq_event(comp_ch, &cq, &ctx)) {
		struct queue *q = ctx;

		ibv_ack_cq_events(cq, 1);
		ibv_req_notify_cq(cq, 0);
		poll_cq(q);
	}
}

/* ------------------------------------------------------------ main */

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	int s;

	fprintf(f, "usage: badtarget [--addr IP] [--port N] [--nqn NQN] [--scenario NAME] [--multi-ctrl] [-v]\n"
		"  defaults: 192.0.2.1, 4421, %s, good\n"
		"  --multi-ctrl: the subsystem may have several controllers of one host,\n"
		"  its namespace shared (without it, a second one is refused by the host)\n"
		"scenarios:\n", subnqn);
	for (s = 0; s < S_NR; s++)
		fprintf(f, "  %-15s %s\n", scenario_names[s], scenario_help[s]);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "nqn", required_argument, NULL, 'n' },
		{ "scenario", required_argument, NULL, 's' },
		{ "multi-ctrl", no_argument, NULL, 'm' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "list", no_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	const char *addr = "192.0.2.1", *port = "4421";
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sigaction sa = { .sa_handler = on_signal };
	int o, s;

	while ((o = getopt_long(argc, argv, "a:p:n:s:mvhl", opts, NULL)) != -1) {
		switch (o) {
		case 'a':
			addr = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		case 'n':
			snprintf(subnqn, sizeof(subnqn), "%s", optarg);
			break;
		case 's':
			for (s = 0; s < S_NR; s++)
				if (!strcmp(optarg, scenario_names[s]))
					break;
			if (s == S_NR) {
				fprintf(stderr, "badtarget: unknown scenario '%s'\n", optarg);
				usage(stderr);
				return 2;
			}
			scenario = s;
			break;
		case 'm':
			multi_ctrl = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'l':
			for (s = 0; s < S_NR; s++)
				printf("%s\n", scenario_names[s]);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
		fprintf(stderr, "badtarget: bad IPv4 address '%s'\n", addr);
		return 2;
	}
	sin.sin_port = htons(atoi(port));
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	ram = aligned_alloc(4096, RAM_SIZE);
	if (!ram) {
		perror("badtarget: ram");
		return 1;
	}
	memset(ram, 0, RAM_SIZE);
	cm_ch = rdma_create_event_channel();
	if (!cm_ch) {
		perror("badtarget: rdma_create_event_channel");
		return 1;
	}
	fcntl(cm_ch->fd, F_SETFL, fcntl(cm_ch->fd, F_GETFL) | O_NONBLOCK);
	if (rdma_create_id(cm_ch, &listen_id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listen_id, (struct sockaddr *)&sin) ||
	    rdma_listen(listen_id, 64)) {
		perror("badtarget: listen");
		return 1;
	}
	if (listen_id->verbs && setup_device(listen_id->verbs))
		return 1;
	logmsg("listening on %s:%s, nqn %s, scenario %s", addr, port, subnqn,
	       scenario_names[scenario]);

	while (!stop) {
		struct pollfd pfd[2] = {
			{ .fd = cm_ch->fd, .events = POLLIN },
			{ .fd = comp_ch ? comp_ch->fd : -1, .events = POLLIN },
		};

		if (poll(pfd, 2, 50) < 0) {
			if (errno == EINTR)
				continue;
			perror("badtarget: poll");
			break;
		}
		if (pfd[0].revents & POLLIN)
			cm_event();
		if (pfd[1].revents & POLLIN)
			cq_event();
		scenario_timers();
	}

	logmsg("stopping (%d associations)", associations);
	while (queues) {
		struct queue *q = queues;

		if (q->established)
			rdma_disconnect(q->id);
		queue_free(q);
	}
	rdma_destroy_id(listen_id);
	if (ram_mr)
		ibv_dereg_mr(ram_mr);
	if (comp_ch)
		ibv_destroy_comp_channel(comp_ch);
	if (pd)
		ibv_dealloc_pd(pd);
	rdma_destroy_event_channel(cm_ch);
	free(ram);
	return 0;
}

