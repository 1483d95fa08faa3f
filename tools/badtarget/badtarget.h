/* SPDX-License-Identifier: GPL-2.0 */
/*
 * badtarget: what its files share: the wire format, the scenarios, the
 * connection state.  badtarget.c: scenarios, CM and main loop; queue.c:
 * queue resources and responses; cmd.c: the commands; scenario.c: where
 * a scenario misbehaves in them.
 */
#ifndef BADTARGET_H
#define BADTARGET_H

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
/* huge-ioccsz: room for the in-capsule data a host may send (64 KiB) */
#define ICD_MAX		(64 * 1024)
#define CQE_SIZE	16
#define AQ_DEPTH	32	/* admin queue entries (NVME_AQ_DEPTH) */
#define LBA_SHIFT	9
#define RAM_SIZE	(64u << 20)
#define SCRATCH		4096	/* per-command buffer for admin data */
#define MAX_IOQ		8	/* I/O queues granted at most */
#define MAX_CTRLS	64
#define NQN_LEN		256
#define AEN_STORM	100	/* AENs completed by aen-storm */
/* replay-old-cid holds the first Read of this LBA (4 KiB block 12345) */
#define HOLD_LBA	98760
#define STORM_LBA	2048	/* timeout-storm: the second MiB */
#define NODATA_LBA	4096	/* read-no-data: the third MiB */
#define SLOW_WRITE_MS	2000	/* slow-write: how long the Write is held */
#define SLOW_SHN_MS	2000	/* ... and how long a shutdown takes */
#define DROP_SETUPS	6	/* drop-setups: setups disconnected */
/*
 * cross-queue-write and read-from-read touch the buffer of the first Read
 * of this LBA (4 KiB block 100, the test's own Read once the controller
 * is live), not of whatever Read comes first (the partition scan's, while
 * nvme connect returns)
 */
#define PROBE_LBA	800

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

static inline uint16_t get16(const uint8_t *p) { return p[0] | p[1] << 8; }
static inline uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t get64(const uint8_t *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}
static inline void put16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static inline void put32(uint8_t *p, uint32_t v)
{
	put16(p, v);
	put16(p + 2, v >> 16);
}
static inline void put64(uint8_t *p, uint64_t v)
{
	put32(p, v);
	put32(p + 4, v >> 32);
}


/* ------------------------------------------------------------ scenarios */

enum scenario {
	S_GOOD, S_REPLAY_CID, S_UNKNOWN_CID, S_EARLY_RSP, S_SHORT_CAPSULE,
	S_LONG_CAPSULE, S_BAD_STATUS, S_INV_WRONG_RKEY, S_INV_NO_MR,
	S_SMALL_CRQSIZE, S_REJ_GARBAGE, S_EST_DREQ, S_SILENT, S_MQES_SHRINK,
	S_MORE_QUEUES, S_AEN_STORM, S_DREQ_MID_IO, S_HUGE_IOCCSZ, S_IDLE_DREQ,
	S_CROSS_QUEUE_WRITE, S_REPLAY_OLD_CID, S_SETUP_TIMEOUT, S_READ_FROM_READ,
	S_WRITE_TO_WRITE, S_TIMEOUT_STORM, S_READ_NO_DATA,
	S_SLOW_WRITE, S_DROP_SETUPS, S_MAXCMD_0, S_MAXCMD_1, S_NO_INV,
	S_ADMIN_CTRL, S_NO_AEN, S_NR
};

void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define dbg(...) do { if (verbose) logmsg(__VA_ARGS__); } while (0)
bool misbehave(enum scenario s, const char *what);

/* ------------------------------------------------------------ state */

enum wr_kind { WR_RECV = 1, WR_SEND, WR_READ, WR_WRITE, WR_FOREIGN };
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
	struct timespec shn_due;	/* slow-write: CSTS.SHST complete */
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
	uint8_t *ring;		/* size receive buffers of slot_size() */
	struct cmd *cmds;
	int ncmds;
	bool established, dead;
	bool foreign_pending;	/* a foreign_access() WR not completed yet */
};

extern const char *const scenario_names[S_NR];
extern enum scenario scenario;

/* Bytes of one receive buffer: the command, and in-capsule data if any. */
static inline size_t slot_size(void)
{
	return SQE_SIZE + (scenario == S_HUGE_IOCCSZ ? ICD_MAX : 0);
}
extern bool misbehaved;		/* the one-shot misbehaviour happened */
extern bool multi_ctrl;
extern int verbose;
extern volatile sig_atomic_t stop;
extern struct rdma_event_channel *cm_ch;
extern struct ibv_comp_channel *comp_ch;
extern struct rdma_cm_id *listen_id;
extern struct ibv_context *verbs;
extern struct ibv_pd *pd;
extern struct ibv_device_attr dev_attr;
extern uint8_t *ram;
extern struct ibv_mr *ram_mr;
extern struct queue *queues;
extern struct ctrl ctrls[MAX_CTRLS];
extern int next_cntlid;
extern int associations;
extern char subnqn[NQN_LEN];
/* rkey of the admin queue's last command with data, for the inv-* cases */
extern uint32_t admin_rkey;

static inline struct ctrl *ctrl_of(struct queue *q)
{
	if (q->cntlid < 0)
		return NULL;
	return &ctrls[q->cntlid % MAX_CTRLS];
}

/* queue.c */
int setup_device(struct ibv_context *ctx);
int post_recv(struct queue *q, int slot);
void queue_free(struct queue *q);
struct queue *queue_alloc(struct rdma_cm_id *id, const struct cm_req *req);
int cmd_get(struct queue *q);
void fill_cqe(struct queue *q, uint8_t *cqe, uint16_t cid,
	      uint16_t status, uint64_t result);
void send_extra(struct queue *q, const uint8_t *cqe, uint32_t len,
		uint32_t inv_rkey);
void complete(struct queue *q, int i, uint16_t status,
	      uint64_t result, const void *src, uint32_t lkey,
	      uint32_t wlen);

/* cmd.c */
void poll_cq(struct queue *q);

/* scenario.c */
void aen_send(struct ctrl *ct);
void due_in(struct timespec *t, int ms);
bool is_due(const struct timespec *t);
bool replay_old_cid(struct queue *q, int i, uint64_t slba);
bool setup_timeout(struct queue *q, int i, uint64_t slba);
bool timeout_storm(struct queue *q, int i, uint64_t slba);
bool read_no_data(struct queue *q, int i, uint64_t slba);
bool slow_write(struct queue *q, int i);
void slow_write_forget(struct queue *q);
void drop_setups_admin(int cntlid);
bool drop_setups_connect(struct queue *q, int i, int cntlid);
bool drop_setups_read(struct queue *q, int i, uint64_t slba);
void scenario_timers(void);
void replay_on_connect(struct queue *q);
bool dreq_mid_io(struct queue *q, int i, bool write);
extern const char *foreign_op;
void foreign_access(struct queue *q, int i, bool write_cmd,
		    uint64_t slba);

#endif /* BADTARGET_H */
