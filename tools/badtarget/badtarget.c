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
 * data).  One thread, one event loop over the CM channel and a shared
 * completion channel.
 *
 * Scenarios (one per run, --scenario; "good" behaves): see usage() and
 * selftests/xrdma/test_bad_target.sh for what the host must do with each.
 * Misbehaviour is one-shot unless said otherwise, so the host can recover
 * and reconnect to a target that behaves again.
 *
 * SIGTERM or SIGINT stops it: every connection is torn down, exit 0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* ------------------------------------------------------------ wire format */

#define SQE_SIZE	64
#define CQE_SIZE	16
#define AQ_DEPTH	32	/* admin queue entries (NVME_AQ_DEPTH) */
#define LBA_SHIFT	9
#define RAM_SIZE	(64u << 20)
#define SCRATCH		4096	/* per-command buffer for admin data */
#define MAX_IOQ		8	/* I/O queues granted at most */
#define MAX_CTRLS	64
#define NQN_LEN		256
#define AEN_STORM	100	/* AENs completed by aen-storm */

/* CM private data (NVMe over Fabrics RDMA transport binding) */
struct cm_req {
	uint16_t recfmt, qid, hrqsize, hsqsize, cntlid;
	uint8_t rsvd[22];
} __attribute__((packed));

struct cm_rep {
	uint16_t recfmt, crqsize;
	uint8_t rsvd[28];
} __attribute__((packed));

struct cm_rej {
	uint16_t recfmt, sts;
} __attribute__((packed));

/* opcodes */
enum {
	OP_FLUSH = 0x00, OP_WRITE = 0x01, OP_READ = 0x02,
	ADM_GET_LOG = 0x02, ADM_IDENTIFY = 0x06, ADM_ABORT = 0x08,
	ADM_SET_FEAT = 0x09, ADM_GET_FEAT = 0x0a, ADM_AER = 0x0c,
	ADM_KEEP_ALIVE = 0x18, OP_FABRICS = 0x7f,
	FCT_PROP_SET = 0x00, FCT_CONNECT = 0x01, FCT_PROP_GET = 0x04,
};

/* status codes (before the shift by one for the phase bit) */
enum {
	SC_SUCCESS = 0x0, SC_INVALID_OPCODE = 0x1, SC_INVALID_FIELD = 0x2,
	SC_INTERNAL = 0x6, SC_INVALID_NS = 0xb, SC_LBA_RANGE = 0x80,
	SC_CONNECT_INVALID_PARAM = 0x182, SC_DNR = 0x4000,
};

/* properties */
enum { PROP_CAP = 0x00, PROP_VS = 0x08, PROP_CC = 0x14, PROP_CSTS = 0x1c };

static uint16_t get16(const uint8_t *p) { return p[0] | p[1] << 8; }
static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get64(const uint8_t *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}
static void put16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v);
	put16(p + 2, v >> 16);
}
static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v);
	put32(p + 4, v >> 32);
}

/* ------------------------------------------------------------ scenarios */

enum scenario {
	S_GOOD, S_REPLAY_CID, S_UNKNOWN_CID, S_EARLY_RSP, S_SHORT_CAPSULE,
	S_LONG_CAPSULE, S_BAD_STATUS, S_INV_WRONG_RKEY, S_INV_NO_MR,
	S_SMALL_CRQSIZE, S_REJ_GARBAGE, S_EST_DREQ, S_SILENT, S_MQES_SHRINK,
	S_MORE_QUEUES, S_AEN_STORM, S_DREQ_MID_IO, S_NR
};

static const char *const scenario_names[S_NR] = {
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
};

static enum scenario scenario = S_GOOD;
static bool misbehaved;		/* the one-shot misbehaviour happened */
static int verbose;
static volatile sig_atomic_t stop;

static void logmsg(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static void logmsg(const char *fmt, ...)
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

#define dbg(...) do { if (verbose) logmsg(__VA_ARGS__); } while (0)

/* Take the one-shot misbehaviour of scenario @s: true the first time. */
static bool misbehave(enum scenario s, const char *what)
{
	if (scenario != s || misbehaved)
		return false;
	misbehaved = true;
	logmsg("scenario %s: %s", scenario_names[s], what);
	return true;
}

/* ------------------------------------------------------------ state */

enum wr_kind { WR_RECV = 1, WR_SEND, WR_READ, WR_WRITE };
#define WR_ID(kind, idx)	((uint64_t)(kind) << 32 | (uint32_t)(idx))

struct cmd {
	uint8_t sqe[SQE_SIZE];
	uint8_t *rsp;		/* CQE_SIZE * 4 bytes, registered */
	uint8_t *buf;		/* SCRATCH bytes, registered */
	bool busy;
	/* the keyed SGL of the command */
	uint64_t addr;
	uint32_t len, rkey;
	bool inv;
};

struct ctrl {
	bool used;
	uint16_t cntlid;
	struct queue *admin;
	uint32_t cc, csts;
	uint32_t nr_queues;	/* feature 0x07 result */
	uint32_t aec, kato;
	uint16_t mqes;		/* 0's based */
	int aers[8];		/* command slots of held AERs */
	int naers;
	int aens_sent;
};

struct queue {
	struct queue *next;
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *mem;
	uint16_t qid, size, hsqsize, sqhd;
	int cntlid;		/* after the fabrics Connect, else -1 */
	uint8_t *ring;		/* size * SQE_SIZE receive buffers */
	struct cmd *cmds;
	int ncmds;
	bool established, dead;
};

static struct rdma_event_channel *cm_ch;
static struct ibv_comp_channel *comp_ch;
static struct rdma_cm_id *listen_id;
static struct ibv_context *verbs;
static struct ibv_pd *pd;
static struct ibv_device_attr dev_attr;
static uint8_t *ram;
static struct ibv_mr *ram_mr;
static struct queue *queues;
static struct ctrl ctrls[MAX_CTRLS];
static int next_cntlid = 1;
static int associations;
static char subnqn[NQN_LEN] = "nqn.2026-11.io.xrdma:bad";
/* rkey of the admin queue's last command with data, for the inv-* cases */
static uint32_t admin_rkey;

static struct ctrl *ctrl_of(struct queue *q)
{
	if (q->cntlid < 0)
		return NULL;
	return &ctrls[q->cntlid % MAX_CTRLS];
}

/* ------------------------------------------------------------ queues */

static int setup_device(struct ibv_context *ctx)
{
	if (verbs)
		return verbs == ctx ? 0 : -1;
	verbs = ctx;
	if (ibv_query_device(ctx, &dev_attr)) {
		logmsg("ibv_query_device: %s", strerror(errno));
		return -1;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		logmsg("ibv_alloc_pd: %s", strerror(errno));
		return -1;
	}
	ram_mr = ibv_reg_mr(pd, ram, RAM_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (!ram_mr) {
		logmsg("ibv_reg_mr(ram): %s", strerror(errno));
		return -1;
	}
	comp_ch = ibv_create_comp_channel(ctx);
	if (!comp_ch) {
		logmsg("ibv_create_comp_channel: %s", strerror(errno));
		return -1;
	}
	fcntl(comp_ch->fd, F_SETFL, fcntl(comp_ch->fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

static int post_recv(struct queue *q, int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(q->ring + slot * SQE_SIZE),
		.length = SQE_SIZE,
		.lkey = q->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = WR_ID(WR_RECV, slot), .sg_list = &sge, .num_sge = 1,
	}, *bad;

	return ibv_post_recv(q->id->qp, &wr, &bad);
}

static void queue_free(struct queue *q)
{
	struct queue **pp;
	struct ctrl *c = ctrl_of(q);

	if (c && c->admin == q) {
		c->admin = NULL;
		c->naers = 0;
		c->used = false;
	}
	for (pp = &queues; *pp; pp = &(*pp)->next) {
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	}
	if (q->id && q->id->qp)
		rdma_destroy_qp(q->id);
	if (q->cq)
		ibv_destroy_cq(q->cq);
	if (q->mr)
		ibv_dereg_mr(q->mr);
	free(q->mem);
	free(q->cmds);
	if (q->id)
		rdma_destroy_id(q->id);
	dbg("queue %u freed", q->qid);
	free(q);
}

static struct queue *queue_alloc(struct rdma_cm_id *id, const struct cm_req *req)
{
	struct ibv_qp_init_attr qa = { 0 };
	struct queue *q;
	size_t memsz;
	int i;

	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->id = id;
	q->qid = req->qid;
	q->size = req->hrqsize;
	q->hsqsize = req->hsqsize;
	q->cntlid = -1;
	q->ncmds = 2 * q->size + 16;
	id->context = q;

	memsz = (size_t)q->size * SQE_SIZE +
		(size_t)q->ncmds * (CQE_SIZE * 4 + SCRATCH);
	q->mem = aligned_alloc(4096, (memsz + 4095) & ~(size_t)4095);
	q->cmds = calloc(q->ncmds, sizeof(*q->cmds));
	if (!q->mem || !q->cmds)
		goto fail;
	memset(q->mem, 0, memsz);
	q->ring = q->mem;
	for (i = 0; i < q->ncmds; i++) {
		uint8_t *base = q->mem + (size_t)q->size * SQE_SIZE +
				(size_t)i * (CQE_SIZE * 4 + SCRATCH);

		q->cmds[i].rsp = base;
		q->cmds[i].buf = base + CQE_SIZE * 4;
	}
	q->mr = ibv_reg_mr(pd, q->mem, memsz, IBV_ACCESS_LOCAL_WRITE);
	if (!q->mr) {
		logmsg("ibv_reg_mr: %s", strerror(errno));
		goto fail;
	}
	q->cq = ibv_create_cq(verbs, q->size + 3 * q->ncmds, q, comp_ch, 0);
	if (!q->cq) {
		logmsg("ibv_create_cq: %s", strerror(errno));
		goto fail;
	}
	if (ibv_req_notify_cq(q->cq, 0))
		goto fail;
	qa.send_cq = q->cq;
	qa.recv_cq = q->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 2 * q->ncmds;
	qa.cap.max_recv_wr = q->size;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, pd, &qa)) {
		logmsg("rdma_create_qp: %s", strerror(errno));
		goto fail;
	}
	for (i = 0; i < q->size; i++)
		if (post_recv(q, i))
			goto fail;
	q->next = queues;
	queues = q;
	return q;
fail:
	q->id = NULL;		/* the caller rejects and destroys it */
	id->context = NULL;
	if (id->qp)
		rdma_destroy_qp(id);
	if (q->cq)
		ibv_destroy_cq(q->cq);
	if (q->mr)
		ibv_dereg_mr(q->mr);
	free(q->mem);
	free(q->cmds);
	free(q);
	return NULL;
}

static int cmd_get(struct queue *q)
{
	int i;

	for (i = 0; i < q->ncmds; i++) {
		if (!q->cmds[i].busy) {
			q->cmds[i].busy = true;
			return i;
		}
	}
	logmsg("queue %u: out of command slots", q->qid);
	return -1;
}

/* ------------------------------------------------------------ responses */

static void fill_cqe(struct queue *q, uint8_t *cqe, uint16_t cid,
		     uint16_t status, uint64_t result)
{
	memset(cqe, 0, CQE_SIZE);
	put64(cqe, result);
	q->sqhd = (q->sqhd + 1) % (q->hsqsize + 1);
	put16(cqe + 8, q->sqhd);
	put16(cqe + 10, q->qid);
	put16(cqe + 12, cid);
	put16(cqe + 14, status << 1);
}

/*
 * Post an optional RDMA WRITE of @wlen bytes (from @src/@lkey to the
 * command's keyed SGL) and a SEND of @rsplen bytes of slot @i's response
 * buffer, with invalidation of @inv_rkey unless it is 0.
 */
static int post_rsp(struct queue *q, int i, const void *src, uint32_t lkey,
		    uint32_t wlen, uint32_t rsplen, uint32_t inv_rkey)
{
	struct cmd *c = &q->cmds[i];
	struct ibv_sge wsge = {
		.addr = (uintptr_t)src, .length = wlen, .lkey = lkey,
	};
	struct ibv_sge ssge = {
		.addr = (uintptr_t)c->rsp, .length = rsplen, .lkey = q->mr->lkey,
	};
	struct ibv_send_wr send = {
		.wr_id = WR_ID(WR_SEND, i), .sg_list = &ssge, .num_sge = 1,
		.opcode = inv_rkey ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr write = {
		.wr_id = WR_ID(WR_WRITE, i), .sg_list = &wsge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .next = &send,
	}, *bad;

	send.invalidate_rkey = inv_rkey;
	write.wr.rdma.remote_addr = c->addr;
	write.wr.rdma.rkey = c->rkey;
	if (ibv_post_send(q->id->qp, wlen ? &write : &send, &bad)) {
		logmsg("queue %u: ibv_post_send: %s", q->qid, strerror(errno));
		c->busy = false;
		return -1;
	}
	return 0;
}

/* An extra response with its own slot (replays, early responses). */
static void send_extra(struct queue *q, const uint8_t *cqe, uint32_t len,
		       uint32_t inv_rkey)
{
	int i = cmd_get(q);

	if (i < 0)
		return;
	memcpy(q->cmds[i].rsp, cqe, CQE_SIZE);
	post_rsp(q, i, NULL, 0, 0, len, inv_rkey);
}

/*
 * Complete command slot @i: data to the host first (@src, @wlen bytes),
 * then the response.  This is where the per-response misbehaviours are.
 */
static void complete(struct queue *q, int i, uint16_t status,
		     uint64_t result, const void *src, uint32_t lkey,
		     uint32_t wlen)
{
	struct cmd *c = &q->cmds[i];
	uint16_t cid = get16(c->sqe + 2);
	uint8_t op = c->sqe[0];
	bool io_read = q->qid && op == OP_READ;
	uint32_t inv = c->inv && c->len ? c->rkey : 0;
	uint32_t rsplen = CQE_SIZE;

	if (scenario == S_SILENT) {
		c->busy = false;
		return;
	}
	fill_cqe(q, c->rsp, cid, status, result);

	if (io_read && misbehave(S_UNKNOWN_CID, "answering a Read with command id never sent"))
		put16(c->rsp + 12, cid ^ 0x0800);
	if (io_read && misbehave(S_SHORT_CAPSULE, "answering a Read with an 8-byte capsule"))
		rsplen = 8;
	if (io_read && misbehave(S_LONG_CAPSULE, "answering a Read with a 64-byte capsule"))
		rsplen = CQE_SIZE * 4;
	if (io_read && misbehave(S_BAD_STATUS, "answering a Read with status 0x45ff (DNR), SQ head 0xffff, SQ id 0x7777")) {
		put16(c->rsp + 8, 0xffff);
		put16(c->rsp + 10, 0x7777);
		put16(c->rsp + 14, (0x05ff | SC_DNR) << 1);
	}
	if (io_read && admin_rkey && c->len &&
	    misbehave(S_INV_WRONG_RKEY, "answering a Read with SEND_WITH_INV of the admin queue's rkey")) {
		logmsg("  rkey %#x instead of %#x", admin_rkey, c->rkey);
		inv = admin_rkey;
	}
	if (!q->qid && op == ADM_KEEP_ALIVE && admin_rkey &&
	    misbehave(S_INV_NO_MR, "answering a Keep Alive with SEND_WITH_INV")) {
		logmsg("  rkey %#x", admin_rkey);
		inv = admin_rkey;
	}
	if (post_rsp(q, i, src, lkey, wlen, rsplen, inv))
		return;
	if (io_read && misbehave(S_REPLAY_CID, "sending a Read's response twice")) {
		uint8_t cqe[CQE_SIZE];

		memcpy(cqe, c->rsp, CQE_SIZE);
		send_extra(q, cqe, CQE_SIZE, 0);
	}
}

/* ------------------------------------------------------------ commands */

static void identify(struct queue *q, int i, struct ctrl *ct)
{
	struct cmd *c = &q->cmds[i];
	uint8_t *d = c->buf;
	uint8_t cns = c->sqe[40];
	uint32_t nsid = get32(c->sqe + 4);
	uint64_t nblocks = RAM_SIZE >> LBA_SHIFT;
	uint16_t maxcmd = ct->mqes + 1;
	uint32_t len = c->len < SCRATCH ? c->len : SCRATCH;

	memset(d, 0, SCRATCH);
	switch (cns) {
	case 0x00:		/* namespace */
		if (nsid != 1) {
			complete(q, i, SC_INVALID_NS | SC_DNR, 0, NULL, 0, 0);
			return;
		}
		put64(d + 0, nblocks);
		put64(d + 8, nblocks);
		put64(d + 16, nblocks);
		d[25] = 0;	/* one LBA format */
		d[26] = 0;
		memcpy(d + 104, "badtarget-nguid1", 16);
		d[128 + 2] = LBA_SHIFT;	/* lbaf[0].ds */
		break;
	case 0x01:		/* controller */
		put16(d + 0, 0x1b36);
		put16(d + 2, 0x1b36);
		memcpy(d + 4, "badtarget0001       ", 20);
		memset(d + 24, ' ', 40);
		memcpy(d + 24, "xrdma bad target", 16);
		memcpy(d + 64, "1.0     ", 8);
		d[77] = 0;	/* MDTS: no limit */
		put16(d + 78, ct->cntlid);
		put32(d + 80, 0x00010300);
		put32(d + 92, 1 << 8);	/* OAES: namespace attribute notices */
		d[111] = 1;	/* CNTRLTYPE: I/O controller */
		d[259] = 3;	/* AERL: 4 outstanding */
		d[262] = 0;	/* ELPE */
		put16(d + 320, 10);	/* KAS: 1 s */
		d[512] = 0x66;
		d[513] = 0x44;
		put16(d + 514, maxcmd);
		put32(d + 516, 1);	/* NN */
		put32(d + 536, 1 << 2);	/* SGLS: keyed data block */
		memcpy(d + 768, subnqn, strnlen(subnqn, NQN_LEN - 1));
		put32(d + 1792, 4);	/* IOCCSZ: the SQE only */
		put32(d + 1796, 1);	/* IORCSZ */
		put16(d + 1800, 0);	/* ICDOFF */
		d[1803] = 1;	/* MSDBD */
		break;
	case 0x02:		/* active namespace list */
		if (nsid < 1)
			put32(d, 1);
		break;
	case 0x03:		/* namespace identification descriptors */
		if (nsid != 1) {
			complete(q, i, SC_INVALID_NS | SC_DNR, 0, NULL, 0, 0);
			return;
		}
		d[0] = 0x03;	/* UUID */
		d[1] = 16;
		memcpy(d + 4, "\x6b\x61\x64\x74\x61\x72\x67\x65\x74\x2d\x75\x75\x69\x64\x2d\x31", 16);
		d[20] = 0x02;	/* NGUID */
		d[21] = 16;
		memcpy(d + 24, "badtarget-nguid1", 16);
		d[40] = 0x04;	/* CSI */
		d[41] = 1;
		d[44] = 0;	/* NVM */
		break;
	default:
		complete(q, i, SC_INVALID_FIELD | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	complete(q, i, SC_SUCCESS, 0, d, q->mr->lkey, len);
}

static void features(struct queue *q, int i, struct ctrl *ct, bool set)
{
	struct cmd *c = &q->cmds[i];
	uint8_t fid = c->sqe[40];
	uint32_t dw11 = get32(c->sqe + 44);
	uint32_t val;

	switch (fid) {
	case 0x07: {		/* number of queues */
		if (set) {
			uint32_t nsq = dw11 & 0xffff, ncq = dw11 >> 16;
			uint32_t g = nsq < ncq ? nsq : ncq;

			if (g > MAX_IOQ - 1)
				g = MAX_IOQ - 1;
			if (scenario == S_MORE_QUEUES) {
				g = (nsq < ncq ? nsq : ncq) + 4;
				logmsg("scenario more-queues: asked for %u I/O queues, granting %u",
				       (nsq < ncq ? nsq : ncq) + 1, g + 1);
			}
			ct->nr_queues = g | g << 16;
		}
		val = ct->nr_queues;
		break;
	}
	case 0x0b:		/* asynchronous event configuration */
		if (set)
			ct->aec = dw11;
		val = ct->aec;
		break;
	case 0x0f:		/* keep alive timer */
		if (set)
			ct->kato = dw11;
		val = ct->kato;
		break;
	default:
		complete(q, i, SC_INVALID_FIELD | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	complete(q, i, SC_SUCCESS, val, NULL, 0, 0);
}

static void get_log(struct queue *q, int i)
{
	struct cmd *c = &q->cmds[i];
	uint8_t lid = c->sqe[40];
	uint32_t numd = (get32(c->sqe + 40) >> 16 | (get32(c->sqe + 44) & 0xffff) << 16) + 1;
	uint64_t bytes = (uint64_t)numd * 4;
	uint32_t len;

	if (lid != 0x01 && lid != 0x02 && lid != 0x04) {
		complete(q, i, SC_INVALID_FIELD | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	if (bytes > c->len)
		bytes = c->len;
	len = bytes < SCRATCH ? bytes : SCRATCH;
	memset(c->buf, 0, SCRATCH);
	complete(q, i, SC_SUCCESS, 0, c->buf, q->mr->lkey, len);
}

/* AENs: notice, namespace attribute changed, changed namespace list log. */
static void aen_send(struct ctrl *ct)
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

static void prop_set(struct queue *q, int i, struct ctrl *ct)
{
	struct cmd *c = &q->cmds[i];
	uint32_t off = get32(c->sqe + 44);
	uint64_t val = get64(c->sqe + 48);

	if (off != PROP_CC) {
		complete(q, i, SC_INVALID_FIELD | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	ct->cc = val;
	if (val & 1)
		ct->csts |= 1;		/* RDY follows EN */
	else
		ct->csts &= ~1u;
	if (val & (3 << 14))
		ct->csts = (ct->csts & ~0xcu) | 0x8;	/* shutdown complete */
	else
		ct->csts &= ~0xcu;
	dbg("CC %#x -> CSTS %#x", ct->cc, ct->csts);
	complete(q, i, SC_SUCCESS, 0, NULL, 0, 0);
}

static void prop_get(struct queue *q, int i, struct ctrl *ct)
{
	struct cmd *c = &q->cmds[i];
	uint32_t off = get32(c->sqe + 44);
	uint64_t val;

	switch (off) {
	case PROP_CAP:
		/* MQES, CQR, TO 5 s, CSS NVM */
		val = ct->mqes | 1ull << 16 | 10ull << 24 | 1ull << 37;
		break;
	case PROP_VS:
		val = 0x00010300;
		break;
	case PROP_CC:
		val = ct->cc;
		break;
	case PROP_CSTS:
		val = ct->csts;
		break;
	default:
		complete(q, i, SC_INVALID_FIELD | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	complete(q, i, SC_SUCCESS, val, NULL, 0, 0);
}

/* The Connect data has arrived (RDMA READ into the slot's buffer). */
static void connect_cmd(struct queue *q, int i)
{
	struct cmd *c = &q->cmds[i];
	uint16_t qid = get16(c->sqe + 42);
	uint16_t sqsize = get16(c->sqe + 44);
	uint16_t cntlid = get16(c->buf + 16);
	const char *nqn = (const char *)c->buf + 256;
	struct ctrl *ct;

	if (c->len < 1024 || qid != q->qid || strncmp(nqn, subnqn, NQN_LEN) ||
	    q->cntlid >= 0) {
		logmsg("queue %u: Connect refused (qid %u, nqn %.64s)", q->qid,
		       qid, nqn);
		complete(q, i, SC_CONNECT_INVALID_PARAM | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	if (qid == 0) {
		ct = &ctrls[next_cntlid % MAX_CTRLS];
		memset(ct, 0, sizeof(*ct));
		ct->used = true;
		ct->cntlid = next_cntlid++;
		ct->admin = q;
		ct->mqes = 127;
		ct->nr_queues = 0;
		if (scenario == S_MQES_SHRINK && associations > 0) {
			ct->mqes = 31;
			logmsg("scenario mqes-shrink: association %d gets MQES %u, MAXCMD %u",
			       associations + 1, ct->mqes, ct->mqes + 1);
		}
		associations++;
		q->cntlid = ct->cntlid;
		logmsg("controller %u: admin queue connected (sqsize %u, kato %u ms)",
		       ct->cntlid, sqsize, get32(c->sqe + 48));
		complete(q, i, SC_SUCCESS, ct->cntlid, NULL, 0, 0);
		return;
	}
	ct = &ctrls[cntlid % MAX_CTRLS];
	if (!ct->used || ct->cntlid != cntlid || !ct->admin ||
	    qid > (ct->nr_queues & 0xffff) + 1 || sqsize > ct->mqes) {
		logmsg("queue %u: Connect for controller %u refused (sqsize %u)",
		       qid, cntlid, sqsize);
		complete(q, i, SC_CONNECT_INVALID_PARAM | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	q->cntlid = cntlid;
	dbg("controller %u: I/O queue %u connected (sqsize %u)", cntlid, qid, sqsize);
	complete(q, i, SC_SUCCESS, 0, NULL, 0, 0);
}

/* Start an RDMA READ of the command's data into @dst. */
static void read_data(struct queue *q, int i, void *dst, uint32_t lkey)
{
	struct cmd *c = &q->cmds[i];
	struct ibv_sge sge = {
		.addr = (uintptr_t)dst, .length = c->len, .lkey = lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = WR_ID(WR_READ, i), .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.rdma.remote_addr = c->addr;
	wr.wr.rdma.rkey = c->rkey;
	if (ibv_post_send(q->id->qp, &wr, &bad)) {
		logmsg("queue %u: RDMA READ: %s", q->qid, strerror(errno));
		c->busy = false;
	}
}

/* Disconnect mid-transfer: half the data moves, then the DREQ. */
static bool dreq_mid_io(struct queue *q, int i, bool write)
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

static void nvm_cmd(struct queue *q, int i, bool data_ready)
{
	struct cmd *c = &q->cmds[i];
	uint8_t op = c->sqe[0];
	uint64_t slba = get64(c->sqe + 40);
	uint32_t nlb = (get32(c->sqe + 48) & 0xffff) + 1;
	uint64_t nblocks = RAM_SIZE >> LBA_SHIFT;
	uint32_t bytes = nlb << LBA_SHIFT;
	uint8_t *p;

	switch (op) {
	case OP_FLUSH:
		complete(q, i, SC_SUCCESS, 0, NULL, 0, 0);
		return;
	case OP_READ:
	case OP_WRITE:
		break;
	default:
		complete(q, i, SC_INVALID_OPCODE | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	if (get32(c->sqe + 4) != 1) {
		complete(q, i, SC_INVALID_NS | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	if (slba >= nblocks || nlb > nblocks - slba) {
		complete(q, i, SC_LBA_RANGE | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	if (bytes != c->len) {
		complete(q, i, SC_INVALID_FIELD | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	if (!data_ready && dreq_mid_io(q, i, op == OP_WRITE))
		return;
	p = ram + (slba << LBA_SHIFT);
	if (op == OP_READ)
		complete(q, i, SC_SUCCESS, 0, p, ram_mr->lkey, bytes);
	else if (!data_ready)
		read_data(q, i, p, ram_mr->lkey);
	else
		complete(q, i, SC_SUCCESS, 0, NULL, 0, 0);
}

static void admin_cmd(struct queue *q, int i, struct ctrl *ct)
{
	struct cmd *c = &q->cmds[i];

	switch (c->sqe[0]) {
	case ADM_IDENTIFY:
		identify(q, i, ct);
		break;
	case ADM_SET_FEAT:
		features(q, i, ct, true);
		break;
	case ADM_GET_FEAT:
		features(q, i, ct, false);
		break;
	case ADM_GET_LOG:
		get_log(q, i);
		break;
	case ADM_KEEP_ALIVE:
		complete(q, i, SC_SUCCESS, 0, NULL, 0, 0);
		break;
	case ADM_ABORT:
		complete(q, i, SC_SUCCESS, 1, NULL, 0, 0);
		break;
	case ADM_AER:
		if (ct->naers >= (int)(sizeof(ct->aers) / sizeof(ct->aers[0]))) {
			complete(q, i, 0x5 | SC_DNR, 0, NULL, 0, 0);	/* AER limit */
			break;
		}
		ct->aers[ct->naers++] = i;	/* held */
		if (scenario == S_AEN_STORM)
			aen_send(ct);
		break;
	default:
		complete(q, i, SC_INVALID_OPCODE | SC_DNR, 0, NULL, 0, 0);
		break;
	}
}

/*
 * Run command slot @i.  @data_ready: the host's data (write, Connect) has
 * been read into place.
 */
static void run_cmd(struct queue *q, int i, bool data_ready)
{
	struct cmd *c = &q->cmds[i];
	struct ctrl *ct = ctrl_of(q);
	uint8_t op = c->sqe[0];

	if (op == OP_FABRICS) {
		uint8_t fct = c->sqe[4];

		if (fct == FCT_CONNECT) {
			if (!data_ready && c->len >= 1024) {
				c->len = 1024;
				read_data(q, i, c->buf, q->mr->lkey);
			} else {
				connect_cmd(q, i);
			}
			return;
		}
		if (!ct || q->qid) {
			complete(q, i, SC_INVALID_OPCODE | SC_DNR, 0, NULL, 0, 0);
			return;
		}
		if (fct == FCT_PROP_GET)
			prop_get(q, i, ct);
		else if (fct == FCT_PROP_SET)
			prop_set(q, i, ct);
		else
			complete(q, i, SC_INVALID_OPCODE | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	if (!ct) {			/* nothing before Connect */
		complete(q, i, SC_CONNECT_INVALID_PARAM | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	if (q->qid)
		nvm_cmd(q, i, data_ready);
	else
		admin_cmd(q, i, ct);
}

static void recv_cmd(struct queue *q, int slot)
{
	const uint8_t *sqe = q->ring + slot * SQE_SIZE;
	struct cmd *c;
	int i = cmd_get(q);

	if (i < 0) {
		post_recv(q, slot);
		return;
	}
	c = &q->cmds[i];
	memcpy(c->sqe, sqe, SQE_SIZE);
	if (post_recv(q, slot))
		logmsg("queue %u: ibv_post_recv: %s", q->qid, strerror(errno));

	c->addr = c->len = c->rkey = 0;
	c->inv = false;
	if ((c->sqe[39] >> 4) == 0x4) {		/* keyed data block */
		c->addr = get64(c->sqe + 24);
		c->len = c->sqe[32] | c->sqe[33] << 8 | c->sqe[34] << 16;
		c->rkey = get32(c->sqe + 35);
		c->inv = (c->sqe[39] & 0xf) == 0xf;
		if (c->len && !q->qid)
			admin_rkey = c->rkey;
	} else if (c->sqe[0] != ADM_AER && c->sqe[0] != ADM_KEEP_ALIVE &&
		   (c->sqe[39] >> 4) != 0) {
		logmsg("queue %u: SGL type %#x not supported", q->qid, c->sqe[39]);
		complete(q, i, SC_INVALID_FIELD | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	dbg("queue %u: cmd %#x cid %#x len %u", q->qid, c->sqe[0],
	    get16(c->sqe + 2), c->len);
	run_cmd(q, i, false);
}

static void poll_cq(struct queue *q)
{
	struct ibv_wc wc[16];
	int n, k;

	while ((n = ibv_poll_cq(q->cq, 16, wc)) > 0) {
		for (k = 0; k < n; k++) {
			uint32_t kind = wc[k].wr_id >> 32;
			int idx = (uint32_t)wc[k].wr_id;

			if (wc[k].status != IBV_WC_SUCCESS) {
				if (!q->dead && wc[k].status != IBV_WC_WR_FLUSH_ERR)
					logmsg("queue %u: %s completion: %s", q->qid,
					       kind == WR_RECV ? "RECV" : "send queue",
					       ibv_wc_status_str(wc[k].status));
				q->dead = true;
				continue;
			}
			switch (kind) {
			case WR_RECV:
				if (!q->dead)
					recv_cmd(q, idx);
				break;
			case WR_READ:
				if (!q->dead)
					run_cmd(q, idx, true);
				break;
			case WR_SEND:
				q->cmds[idx].busy = false;
				break;
			default:
				break;
			}
		}
	}
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

static void connect_request(struct rdma_cm_event *ev, bool *destroy_id,
			    struct queue **free_q)
{
	struct rdma_cm_id *id = ev->id;
	const struct cm_req *req = ev->param.conn.private_data;
	struct rdma_conn_param cp = { 0 };
	struct cm_rep rep = { 0 };
	struct queue *q;

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
	 * set: the request for queue 2 means queue 1 is up on the host and
	 * has no tag set behind it yet.
	 */
	if (scenario == S_EARLY_RSP && q->qid == 2 && associations == 1) {
		struct queue *q1;

		for (q1 = queues; q1; q1 = q1->next)
			if (q1->qid == 1 && q1->cntlid < 0 && q1->established)
				early_rsp(q1);
	}
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
			if (copy.event == RDMA_CM_EVENT_DISCONNECTED)
				rdma_disconnect(q->id);
			else
				logmsg("queue %u: %s", q->qid,
				       rdma_event_str(copy.event));
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

	fprintf(f, "usage: badtarget [--addr IP] [--port N] [--nqn NQN] [--scenario NAME] [-v]\n"
		"  defaults: 192.0.2.1, 4421, %s, good\nscenarios:\n", subnqn);
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
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "list", no_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	const char *addr = "192.0.2.1", *port = "4421";
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct sigaction sa = { .sa_handler = on_signal };
	int o, s;

	while ((o = getopt_long(argc, argv, "a:p:n:s:vhl", opts, NULL)) != -1) {
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

		if (poll(pfd, 2, 200) < 0) {
			if (errno == EINTR)
				continue;
			perror("badtarget: poll");
			break;
		}
		if (pfd[0].revents & POLLIN)
			cm_event();
		if (pfd[1].revents & POLLIN)
			cq_event();
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
