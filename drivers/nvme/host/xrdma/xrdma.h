/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xrdma: NVMe over Fabrics RDMA host transport - private definitions.
 *
 * Object model (one prefix, xrdma_, on every symbol):
 *
 *   xrdma_device   one per ib_device in use, refcounted, owns the PD
 *   xrdma_ctrl     one per NVMe controller, embeds struct nvme_ctrl
 *   xrdma_queue    one per NVMe queue (qid 0 is admin): cm_id, QP, CQ,
 *                  a command ring and a response ring mapped once for the
 *                  life of the connection
 *   xrdma_request  the blk-mq PDU of one NVMe command
 */
#ifndef _XRDMA_H
#define _XRDMA_H

#include <linux/blk-mq.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jump_label.h>
#include <linux/nvme-rdma.h>
#include <linux/scatterlist.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "nvme.h"
#include "fabrics.h"
#include "compat.h"
/* the build's flavour: XRDMA_TEST_HOOKS in the test one (the Makefile) */
#include "xrdma_flavour.h"

/* Tunables that are part of the design, not of the wire. */
#define XRDMA_CM_RESOLVE_MS	3000	/* address and route resolution */
#define XRDMA_CM_ESTABLISH_MS	10000	/* REQ sent -> ESTABLISHED/REJECTED */
#define XRDMA_STALE_RETRIES	5	/* quick retries of a stale-conn reject */
#define XRDMA_STALE_DELAY_MS	20
#define XRDMA_PORT_WAIT_MS	10000	/* teardown held for a down port */
#define XRDMA_SHUTDOWN_MS	1000	/* a delete's shutdown, at most */
#define XRDMA_DELETE_GRACE_MS	1000	/* a delete waits for commands */
#define XRDMA_PROBE_MS		250	/* ... and then for a Keep Alive */
#define XRDMA_SILENT_MS		30000	/* an unanswered shutdown counts */
#define XRDMA_DOWN_WAIT_MS	5000	/* going down: deletions waited for */
#define XRDMA_DRAIN_MS		5000	/* bounded QP drain */
#define XRDMA_DRAIN_SLACK_MS	3000	/* a resize waits the I/O timeout + */
#define XRDMA_MAX_FR_PAGES	256	/* 1 MiB per I/O with 4 KiB pages */
#define XRDMA_MAX_INLINE_SGE	16	/* in-capsule data segments */
#define XRDMA_INLINE_SG_CNT	2	/* scatterlist entries in the PDU */
/* the I/O tag set has sqsize tags on 6.12, one kept for Connect: 2 + 1 */
#define XRDMA_MIN_QUEUE_DEPTH	3
/* the kernel's: 256 on 6.12, 128 on 6.1 (as its nvmet-rdma offers) */
#define XRDMA_MAX_QUEUE_SIZE	NVME_RDMA_MAX_QUEUE_SIZE

/**
 * struct xrdma_device - an RDMA device shared by all queues on it
 * @ibdev: the RDMA device
 * @ref: one reference per queue bound to the device
 * @entry: link in the global device list
 * @max_fr_pages: pages one FRWR MR may map (bounded by XRDMA_MAX_FR_PAGES)
 * @max_inline_sge: data SGEs a SEND may carry after the command SGE
 * @max_rd_atom: responder resources to offer the target (it RDMA-READs)
 */
struct xrdma_device {
	struct ib_device	*ibdev;
	struct kref		ref;
	struct list_head	entry;
	u32			max_fr_pages;
	u32			max_inline_sge;
	u8			max_rd_atom;
};

#include "counters.h"

/* Local failures fault.c can inject, one debugfs knob each (test flavour). */
enum xrdma_fault {
	XRDMA_FAULT_POST_SEND,
	XRDMA_FAULT_POST_RECV,
	XRDMA_FAULT_MR_EXHAUSTED,
	XRDMA_FAULT_DMA_MAP,
	XRDMA_FAULT_CQ_ERROR,
	XRDMA_FAULT_DRAIN,
	XRDMA_FAULT_POST_SEND_REG,
	XRDMA_FAULT_AEN,
	XRDMA_FAULT_QUIESCE_HOLD,
	XRDMA_FAULT_LIVE_HOLD,
	XRDMA_FAULT_CREATE_QP,
	XRDMA_FAULT_IO_SETUP_HOLD,
	XRDMA_FAULT_DMA_MAP_LAST,
	XRDMA_FAULT_RESIZE_SHORT,
	XRDMA_FAULT_SHORT_PAGE_LIST,
	XRDMA_FAULT_NR
};

/**
 * struct xrdma_rsp_slot - one posted receive buffer of a queue
 * @cqe: completion cookie
 * @queue: the queue the slot belongs to
 * @index: position in the response ring
 */
struct xrdma_rsp_slot {
	struct ib_cqe		cqe;
	struct xrdma_queue	*queue;
	u32			index;
};

/*
 * Queue lifecycle bits, in the order they are set.  A queue slot in
 * ctrl->queues is reused for every association; between two, and before
 * the first, it is STOPPED and nothing else.
 */
enum xrdma_queue_flags {
	XRDMA_Q_CONNECTED,	/* RC connection established */
	XRDMA_Q_ALLOCATED,	/* cm_id, QP, CQ, rings; clears STOPPED */
	XRDMA_Q_LIVE,		/* fabrics Connect succeeded */
	XRDMA_Q_STOPPED,	/* disconnected and drained, or not allocated */
	/*
	 * Apart from the life cycle: rdma_cm told the queue's CM id, still
	 * its own, that the device goes; its release then destroys it, never
	 * parks it (cm.c, under the parked ids' mutex; cleared for a new id).
	 */
	XRDMA_Q_DEVICE_REMOVED,
};

/**
 * struct xrdma_queue - one NVMe queue over one RC QP
 * @ctrl: owning controller
 * @qid: NVMe queue id (0 = admin)
 * @flags: enum xrdma_queue_flags
 * @size: entries in the command and response rings (queue depth)
 * @inline_size: in-capsule data bytes usable on this queue (0 = none)
 * @inline_sge: data SGEs an in-capsule SEND may carry
 * @qp: the RC queue pair
 * @dev: RDMA device (reference held while allocated)
 * @lkey: local DMA lkey of @pd, for the rings and in-capsule data
 * @sqes: command ring, one 64-byte SQE per tag
 * @sqes_dma: DMA address of @sqes
 * @sq_lock: protects the pending WR chain (@pend_head, @pend_tail, @pend_nr)
 *	and the kept MRs (@kept_mrs, @nr_kept_mrs)
 * @pend_head: first WR not yet posted (doorbell batching)
 * @pend_tail: where the next WR is linked
 * @pend_nr: WRs on the pending chain
 * @kept_mrs: MRs of commands whose REG_MR may have been posted without
 *	their SEND, out of the pool until the QP is flushed (frwr.c)
 * @nr_kept_mrs: entries on @kept_mrs
 * @pool_slot: read pool bytes per tag (0: no pool, reads use FRWR)
 * @pool_tags: tags that have a slot in the read pool
 * @pool: the read pool's pages, slot after slot (pool.c)
 * @pool_mr: the MR of the read pool, registered for remote write
 * @pool_cqe: completion cookie of @pool_mr's unsignaled REG_MR
 * @stats: per-CPU data path counters
 * @cq: completion queue for both directions
 * @cq_ctx: where @cq's completions are handled: IB_POLL_DIRECT on a poll
 *	queue, reaped by blk-mq ->poll; else see cq_workqueue
 * @poll_lock: held by whoever reaps or frees an IB_POLL_DIRECT @cq
 * @rx_at: jiffies of the last response accepted on this queue, for a
 *	deletion that must tell a silent target from a slow one (delete.c)
 * @tags: the tags responses are matched to, set once the queue may send
 *	commands (xrdma_queue_start()), NULL before and once stopped
 * @cqes: response ring
 * @cqes_dma: DMA address of @cqes
 * @slots: receive descriptors, one per @cqes entry
 * @aen_cqe: SEND completion cookie of the AEN command (admin queue)
 * @cm_id: rdma_cm identifier
 * @pd: protection domain of this queue's QP and MRs alone, so that no
 *	other connection, of this controller or another, can use an rkey of
 *	this queue once its QP is in the error state
 * @cm_done: completes when the awaited CM event arrived
 * @cm_error: result of the awaited CM step
 * @cm_why: what ended the awaited CM step if it failed, for the log
 * @crqsize: receive queue size the target announced in its CM reply
 * @qp_timeout: the local ACK timeout exponent of the admin queue's QP, as
 *	the device reported it once the connection was established; sysfs
 *	shows this copy (xrdma_sysfs_note_qp())
 * @qp_retry_cnt: the transport retry count of that QP, the same way
 * @drain_cqe: completion of the drain markers
 * @drain_done: completes each time a drain marker was reaped
 * @drain_left: drain markers posted and not reaped yet (delay point
 *	drain_done holds the poller that reaped the last one)
 * @stop_lock: serialises stop and free against sysfs readers; a drain
 *	may hold it for seconds
 * @on_ibdev: the RDMA device of the connection while the queue is
 *	allocated, else NULL: compared, never followed, by the device and
 *	port walks, which hold xrdma_ctrl_mutex and must not wait for
 *	@stop_lock, which a drain may hold for seconds
 * @on_port: the port of that connection
 * @debugfs: this queue's debugfs directory
 * @connect_work: sets up an I/O queue's connection on xrdma_connect_wq
 * @connect_ret: what @connect_work's xrdma_queue_alloc() returned
 * @short_of: the device resource (CQ, QP, MRs) the last attempt could not
 *	get, NULL if none: such an I/O queue may be done without
 */
struct xrdma_queue {
	/* read by both sides */
	struct xrdma_ctrl	*ctrl;
	u16			qid;
	unsigned long		flags;
	u32			size;
	u32			inline_size;
	u32			inline_sge;

	/* submission: every ->queue_rq touches these */
	struct ib_qp		*qp;
	struct xrdma_device	*dev;
	u32			lkey;
	struct nvme_command	*sqes;
	u64			sqes_dma;
	spinlock_t		sq_lock;	/* see kernel-doc */
	struct ib_send_wr	*pend_head;
	struct ib_send_wr	**pend_tail;
	u32			pend_nr;
	struct list_head	kept_mrs;
	u32			nr_kept_mrs;
	u32			pool_slot;
	u32			pool_tags;
	struct xrdma_pool_page	*pool;
	struct ib_mr		*pool_mr;
	struct ib_cqe		pool_cqe;
	struct xrdma_queue_stats __percpu *stats;

	/* completion: every response touches these */
	struct ib_cq		*cq ____cacheline_aligned_in_smp;
	enum ib_poll_context	cq_ctx;
	spinlock_t		poll_lock;	/* see kernel-doc */
	unsigned long		rx_at;
	struct blk_mq_tags	*tags;
	struct nvme_completion	*cqes;
	u64			cqes_dma;
	struct xrdma_rsp_slot	*slots;
	struct ib_cqe		aen_cqe;

	/* connection setup and teardown */
	struct rdma_cm_id	*cm_id ____cacheline_aligned_in_smp;
	struct ib_pd		*pd;
	struct completion	cm_done;
	int			cm_error;
	char			cm_why[128];
	u16			crqsize;
	u8			qp_timeout;
	u8			qp_retry_cnt;
	struct ib_cqe		drain_cqe;
	struct completion	drain_done;
	atomic_t		drain_left;
	struct mutex		stop_lock;	/* see kernel-doc */
	struct ib_device	*on_ibdev;
	u32			on_port;
	struct dentry		*debugfs;
	struct work_struct	connect_work;
	int			connect_ret;
	const char		*short_of;
};

/* What a request is still waiting for before it may complete. */
enum {
	XRDMA_REQ_SEND	= BIT(0),	/* SEND completion of the capsule */
	XRDMA_REQ_RESP	= BIT(1),	/* response capsule */
	XRDMA_REQ_INV	= BIT(2),	/* LOCAL_INV completion */
	/* nothing: core swallowed its completion, a cancel ends it */
	XRDMA_REQ_LOST	= BIT(3),
};

/* How a request's data travels; also used for tracing. */
enum xrdma_data_kind {
	XRDMA_DATA_NONE,
	XRDMA_DATA_INLINE,
	XRDMA_DATA_FRWR,
	XRDMA_DATA_POOL,
};

/**
 * struct xrdma_pool_page - a page of a queue's read pool
 * @page: the page
 * @dma: its DMA address
 */
struct xrdma_pool_page {
	struct page	*page;
	u64		dma;
};

/**
 * struct xrdma_request - blk-mq PDU of one NVMe command
 * @nreq: nvme core's per-request data; must come first
 * @queue: queue the request was issued on
 * @cmd: the SQE as nvme core builds it; copied into the command ring
 * @waiting: XRDMA_REQ_* bits still outstanding
 * @kind: enum xrdma_data_kind
 * @status: NVMe status from the response
 * @result: NVMe result from the response
 * @mr: FRWR memory region, or NULL
 * @nents: DMA-mapped scatterlist entries, 0 if none
 * @sgt: scatterlist of the data
 * @send_cqe: SEND completion cookie
 * @inv_cqe: LOCAL_INV completion cookie
 * @reg_cqe: REG_MR cookie (unsignaled: only errors complete)
 * @reg_wr: REG_MR work request
 * @send_wr: SEND work request
 * @first_sgl: inline scatterlist storage (more is chained on demand)
 * @sge: command SGE followed by as many in-capsule data SGEs as the tag
 *	set has room for (xrdma_ctrl.pdu_inline_sge, none on the admin queue)
 */
struct xrdma_request {
	struct nvme_request	nreq;
	struct xrdma_queue	*queue;
	struct nvme_command	cmd;
	atomic_t		waiting;
	u8			kind;
	__le16			status;
	union nvme_result	result;
	struct ib_mr		*mr;
	int			nents;
	struct sg_table		sgt;
	struct ib_cqe		send_cqe;
	struct ib_cqe		inv_cqe;
	struct ib_cqe		reg_cqe;
	struct ib_reg_wr	reg_wr;
	struct ib_send_wr	send_wr;
	struct scatterlist	first_sgl[XRDMA_INLINE_SG_CNT];
	struct ib_sge		sge[];
};

/**
 * union xrdma_sockaddr - an IPv4 or IPv6 socket address, and no bigger
 * @sa: the generic view
 * @in: IPv4
 * @in6: IPv6
 */
union xrdma_sockaddr {
	struct sockaddr		sa;
	struct sockaddr_in	in;
	struct sockaddr_in6	in6;
};

/**
 * struct xrdma_ctrl - an NVMe controller reached over RDMA
 * @ctrl: nvme core controller
 * @queues: queue array, index = qid, one entry per queue the options allow
 * @nr_queue_slots: entries in @queues, fixed at creation: the free of a
 *	controller whose creation failed runs after fabrics freed the options
 *	(a parked CM id may hold the last reference)
 * @tag_set: I/O tag set
 * @admin_tag_set: admin tag set
 * @err_work: error recovery
 * @end_work: the only way, besides a teardown, that queues are stopped and
 *	commands ended in bulk; it acts on @end_why (cancel.c)
 * @end_why: the reasons requested since @end_work last ran, a mask of
 *	BIT(enum xrdma_end_why); a teardown clears it, having ended all
 * @end_tagset: the I/O tag set for @end_work to walk, published with a
 *	release once nvme-core allocated it (xrdma_publish_tagsets()) and
 *	cleared under @teardown_lock before it is freed
 * @end_admin_tagset: the same for the admin tag set
 * @delete_work: asks for the end of the commands a deletion would wait
 *	for in vain
 * @shutdown_work: asks for the end of a deletion's shutdown the target
 *	does not answer
 * @teardown_lock: held by whoever stops queues or ends commands in bulk
 *	(a teardown, @end_work): each walks or frees the tag sets
 * @tagset_lock: a leaf under @teardown_lock, held around each walk of a
 *	tag set's commands and by a resize of the I/O tag set, which runs
 *	with the namespaces' queues frozen and so may take no lock that is
 *	held while a CM id is destroyed (@teardown_lock is)
 * @reconnect_work: delayed reconnect attempt
 * @entry: link in the controller list (xrdma_ctrl_mutex)
 * @addr: target address
 * @src_addr: source address (host_traddr)
 * @io_queues: I/O queues per hctx type
 * @use_inline: the target accepts in-capsule data
 * @max_fr_pages: pages one I/O may span, as the block layer was told: the
 *	FRWR limit of the device of a new controller's first admin queue,
 *	kept for its lifetime; every queue's MRs map this (plus a page for
 *	a misaligned head) and a queue whose device cannot is not used
 * @pdu_inline_sge: in-capsule data SGEs an I/O request has room for:
 *	XRDMA_MAX_INLINE_SGE until the I/O tag set is created, then what its
 *	queues could use then, which bounds every later association's
 * @setup_timed_out: a command of the current setup timed out (the
 *	attempt then fails with -ETIMEDOUT, see xrdma_setup_status())
 * @setup_aborted: a connection of the current setup failed
 *	(XRDMA_END_LOST): the attempt fails with -ECONNRESET
 * @down_delete: 1 while the system going down waits for this
 *	controller's deletion (xrdma_ctrls_going_down())
 * @probe_at: jiffies at which a deletion sent a Keep Alive to learn
 *	whether the target still answers, 0 if none is out (delete.c)
 * @silent_at: jiffies at which another controller's shutdown to the same
 *	target address went unanswered, 0 if none did
 * @counters: lifetime event counters (sysfs)
 * @debugfs: this controller's debugfs directory
 * @faults: armed fault injections per kind (fault.c, test flavour only)
 */
struct xrdma_ctrl {
	struct nvme_ctrl	ctrl;
	struct xrdma_queue	*queues;
	u32			nr_queue_slots;
	struct blk_mq_tag_set	tag_set;
	struct blk_mq_tag_set	admin_tag_set;
	struct work_struct	err_work;
	struct work_struct	end_work;
	unsigned long		end_why;
	struct blk_mq_tag_set	*end_tagset;
	struct blk_mq_tag_set	*end_admin_tagset;
	struct delayed_work	delete_work;
	struct delayed_work	shutdown_work;
	struct mutex		teardown_lock;	/* see kernel-doc */
	struct mutex		tagset_lock;	/* see kernel-doc */
	struct delayed_work	reconnect_work;
	struct list_head	entry;
	union xrdma_sockaddr	addr;
	union xrdma_sockaddr	src_addr;
	u32			io_queues[HCTX_MAX_TYPES];
	bool			use_inline;
	u32			max_fr_pages;
	u8			pdu_inline_sge;
	bool			setup_timed_out;
	bool			setup_aborted;
	atomic_t		down_delete;
	unsigned long		probe_at;
	unsigned long		silent_at;
	struct xrdma_ctrl_counters counters;
	struct dentry		*debugfs;
#ifdef XRDMA_TEST_HOOKS
	atomic_t		faults[XRDMA_FAULT_NR];
#endif
};

/* What a controller went through, for the xrdma_state tracepoint. */
enum xrdma_ctrl_event {
	XRDMA_EV_ERROR_RECOVERY,
	XRDMA_EV_RECONNECT,
	XRDMA_EV_RESET,
	XRDMA_EV_CONNECTED,
	XRDMA_EV_DELETE,
	XRDMA_EV_PORT_WAIT,
};

/* Log with the controller device and the queue id as prefix. */
#define xrdma_queue_log(level, queue, fmt, ...)				\
({									\
	const struct xrdma_queue *__q = (queue);			\
									\
	dev_##level(__q->ctrl->ctrl.device, "queue %d: " fmt, __q->qid,	\
		    ##__VA_ARGS__);					\
})
#define xrdma_qerr(queue, fmt, ...)					\
	xrdma_queue_log(err, queue, fmt, ##__VA_ARGS__)
#define xrdma_qinfo(queue, fmt, ...)					\
	xrdma_queue_log(info, queue, fmt, ##__VA_ARGS__)
#define xrdma_qdbg(queue, fmt, ...)					\
	xrdma_queue_log(dbg, queue, fmt, ##__VA_ARGS__)
/* completion paths: one bad target must not flood the log */
#define xrdma_qerr_rl(queue, fmt, ...)					\
	xrdma_queue_log(err_ratelimited, queue, fmt, ##__VA_ARGS__)
#define xrdma_qwarn_rl(queue, fmt, ...)					\
	xrdma_queue_log(warn_ratelimited, queue, fmt, ##__VA_ARGS__)
#define xrdma_qinfo_rl(queue, fmt, ...)					\
	xrdma_queue_log(info_ratelimited, queue, fmt, ##__VA_ARGS__)

static inline struct xrdma_ctrl *to_xrdma_ctrl(struct nvme_ctrl *nctrl)
{
	return container_of(nctrl, struct xrdma_ctrl, ctrl);
}

/*
 * Start error recovery of a live controller, from any context (completion
 * handlers included); only the first caller while LIVE gets it going.  The
 * work function counts, traces and logs it.
 */
static inline void xrdma_error_recovery(struct xrdma_ctrl *ctrl)
{
	if (nvme_change_ctrl_state(&ctrl->ctrl, NVME_CTRL_RESETTING))
		queue_work(nvme_reset_wq, &ctrl->err_work);
}

/**
 * enum xrdma_end_why - why the commands of a controller that is not live
 *	are to be ended without their responses (xrdma_ctrl_end())
 * @XRDMA_END_LOST: a connection of a setup failed; its commands would
 *	get no answer
 * @XRDMA_END_TIMEOUT: a command timed out while the controller was not
 *	live; nothing else would end it
 * @XRDMA_END_DELETE: a deletion gives up on a silent target: the commands
 *	it waits for, or its shutdown, went unanswered
 */
enum xrdma_end_why {
	XRDMA_END_LOST,
	XRDMA_END_TIMEOUT,
	XRDMA_END_DELETE,
};

void xrdma_ctrl_end(struct xrdma_ctrl *ctrl, enum xrdma_end_why why);

/*
 * A connection of @ctrl cannot go on (a failed work request, a refused
 * response, the CM said so), from any context.  A live controller
 * recovers; one being set up has its commands ended at once, as nothing
 * else would end them before their timeout.
 */
static inline void xrdma_connection_failed(struct xrdma_ctrl *ctrl)
{
	if (nvme_ctrl_state(&ctrl->ctrl) == NVME_CTRL_CONNECTING)
		xrdma_ctrl_end(ctrl, XRDMA_END_LOST);
	else
		xrdma_error_recovery(ctrl);
}

/* Sum @queue's data-path counters over the CPUs into @sum. */
static inline void xrdma_queue_stats_read(struct xrdma_queue *queue,
					  struct xrdma_queue_stats *sum)
{
	u64 *v = (u64 *)sum;
	int cpu, i;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const u64 *c = (const u64 *)per_cpu_ptr(queue->stats, cpu);

		for (i = 0; i < XRDMA_STAT_NR; i++)
			v[i] += READ_ONCE(c[i]);
	}
}

/* Empty the chain of work requests waiting for the next doorbell. */
static inline void xrdma_queue_pend_reset(struct xrdma_queue *queue)
{
	queue->pend_head = NULL;
	queue->pend_tail = &queue->pend_head;
	queue->pend_nr = 0;
}

/*
 * In-capsule data bytes the target takes after the command: IOCCSZ is in
 * 16-byte units and the target's to choose, so computed in u64 (a u32
 * product wraps) and capped; xrdma_queue_create_ib() caps it by the
 * device.
 */
static inline u32 xrdma_ctrl_icd_bytes(const struct xrdma_ctrl *ctrl)
{
	u64 capsule = (u64)ctrl->ctrl.ioccsz * 16;

	if (capsule <= sizeof(struct nvme_command))
		return 0;
	return min_t(u64, capsule - sizeof(struct nvme_command), SZ_1G);
}

/* DMA address of command ring slot @i. */
static inline u64 xrdma_sqe_dma(struct xrdma_queue *queue, u32 i)
{
	return queue->sqes_dma + i * sizeof(struct nvme_command);
}

/* DMA address of response ring slot @i. */
static inline u64 xrdma_cqe_dma(struct xrdma_queue *queue, u32 i)
{
	return queue->cqes_dma + i * sizeof(struct nvme_completion);
}

/* device.c */
struct xrdma_device *xrdma_device_get(struct rdma_cm_id *cm_id);
void xrdma_device_put(struct xrdma_device *dev);

/* cm.c */
int xrdma_cm_create_id(struct xrdma_queue *queue);
int xrdma_cm_resolve_addr(struct xrdma_queue *queue);
int xrdma_cm_resolve_route(struct xrdma_queue *queue);
int xrdma_cm_establish(struct xrdma_queue *queue);
void xrdma_cm_disconnect(struct xrdma_queue *queue);
void xrdma_cm_destroy_id(struct xrdma_queue *queue, bool req_sent);
bool xrdma_cm_port_up(struct xrdma_queue *queue);
bool xrdma_cm_wait_port(struct xrdma_queue *queue);
void xrdma_cm_release_parked(struct ib_device *ibdev, bool force);
void xrdma_cm_port_active(void);
void xrdma_cm_exit(void);

/* frwr.c */
int xrdma_frwr_map(struct xrdma_queue *queue, struct xrdma_request *req,
		   struct request *rq);
void xrdma_frwr_put(struct xrdma_queue *queue, struct xrdma_request *req);
int xrdma_frwr_local_inv(struct xrdma_queue *queue, struct xrdma_request *req);
void xrdma_frwr_keep(struct xrdma_queue *queue, struct xrdma_request *req);
void xrdma_frwr_release_kept(struct xrdma_queue *queue);

/* pool.c */
void xrdma_pool_alloc(struct xrdma_queue *queue);
void xrdma_pool_free(struct xrdma_queue *queue);
int xrdma_pool_register(struct xrdma_queue *queue);
void xrdma_pool_map(struct xrdma_queue *queue, struct xrdma_request *req,
		    struct request *rq);
void xrdma_pool_copy(struct xrdma_queue *queue, struct request *rq);
void xrdma_pool_clear(struct xrdma_queue *queue, struct request *rq);

/*
 * Can @rq read through @queue's pool?  Inline: without a pool, the data
 * path pays one test, not a call.
 */
static inline bool xrdma_pool_fits(struct xrdma_queue *queue,
				   struct request *rq)
{
	return queue->pool_slot && rq_data_dir(rq) == READ &&
	       rq->tag < queue->pool_tags &&
	       blk_rq_payload_bytes(rq) <= queue->pool_slot;
}

/*
 * A connection of this setup was lost, or one of its commands timed out:
 * either way the end work stops the queues, and the attempt must end, not
 * go LIVE with them.
 */
static inline bool xrdma_setup_failed(struct xrdma_ctrl *ctrl)
{
	return READ_ONCE(ctrl->setup_aborted) ||
	       READ_ONCE(ctrl->setup_timed_out);
}

/* ctrl.c, for the resize */
int xrdma_start_io_queues(struct xrdma_ctrl *ctrl, int first, int end);
void xrdma_unquiesce_io_queues(struct nvme_ctrl *nctrl);

/* drain.c */
bool xrdma_queue_drain(struct xrdma_queue *queue);
void xrdma_queue_fence_cq(struct xrdma_queue *queue);

/* resize.c */
int xrdma_resize_io_queues(struct xrdma_ctrl *ctrl, int started);

/* connect.c */
extern struct workqueue_struct *xrdma_connect_wq;
int xrdma_alloc_io_queues(struct xrdma_ctrl *ctrl);
void xrdma_queue_connect_work(struct work_struct *work);

/* queue.c */
int xrdma_queues_alloc(struct xrdma_ctrl *ctrl);
void xrdma_queues_free(struct xrdma_ctrl *ctrl);
int xrdma_queue_alloc(struct xrdma_ctrl *ctrl, int qid, u32 size);
void xrdma_queue_free(struct xrdma_queue *queue);
int xrdma_queue_start(struct xrdma_queue *queue);
void xrdma_queue_stop(struct xrdma_queue *queue);
int xrdma_queue_post_recv(struct xrdma_queue *queue,
			  struct xrdma_rsp_slot *slot);
int xrdma_queue_poll(struct xrdma_queue *queue);

/* request.c */
extern const struct blk_mq_ops xrdma_mq_ops;
extern const struct blk_mq_ops xrdma_admin_mq_ops;
void xrdma_recv_done(struct ib_cq *cq, struct ib_wc *wc);
void xrdma_submit_async_event(struct nvme_ctrl *nctrl);
void xrdma_unmap_data(struct xrdma_queue *queue, struct request *rq);

/* cancel.c */
bool xrdma_req_claim(struct request *rq);
bool xrdma_requeue_taken(struct request *rq);
void xrdma_cancel_tagset(struct xrdma_ctrl *ctrl, struct blk_mq_tag_set *set);
void xrdma_publish_tagsets(struct xrdma_ctrl *ctrl);
void xrdma_end_work(struct work_struct *work);
enum blk_eh_timer_return xrdma_timeout(struct request *rq);

/* delete.c */
void xrdma_delete_work(struct work_struct *work);
void xrdma_shutdown_work(struct work_struct *work);

/* ctrl.c */
extern struct nvmf_transport_ops xrdma_transport;
void xrdma_set_transport_name(const char *name);

/* ctrls.c */
void xrdma_ctrl_list_add(struct xrdma_ctrl *ctrl);
bool xrdma_ctrl_list_del(struct xrdma_ctrl *ctrl);
void xrdma_ctrl_list_barrier(void);
bool xrdma_ctrl_is_duplicate(struct nvmf_ctrl_options *opts);
void xrdma_delete_ctrls(struct ib_device *ibdev);
void xrdma_port_event(struct ib_device *ibdev, u32 port, bool up);
void xrdma_ctrls_note_silent(struct xrdma_ctrl *ctrl);
bool xrdma_system_going_down(void);
void xrdma_ctrl_down_deleted(struct xrdma_ctrl *ctrl);
int xrdma_ctrls_init(void);
void xrdma_ctrls_exit(void);

/* sysfs.c */
extern const struct attribute_group *xrdma_dev_attr_groups[];
void xrdma_sysfs_note_qp(struct xrdma_queue *queue);

/* debugfs.c */
void xrdma_debugfs_init(void);
void xrdma_debugfs_exit(void);
void xrdma_debugfs_ctrl_add(struct xrdma_ctrl *ctrl);
void xrdma_debugfs_ctrl_del(struct xrdma_ctrl *ctrl);
void xrdma_debugfs_queue_add(struct xrdma_queue *queue);
void xrdma_debugfs_queue_del(struct xrdma_queue *queue);

/* dropin.c */
int xrdma_dropin_init(const char *name);
int xrdma_dropin_check(void);
void xrdma_dropin_exit(void);

/* Named points where a test widens a race window (delay.c). */
enum xrdma_delay_point {
	XRDMA_DELAY_IO_SETUP,
	XRDMA_DELAY_QUEUES_FREE,
	XRDMA_DELAY_PORT_UP,
	XRDMA_DELAY_IO_START,
	XRDMA_DELAY_QUEUE_STOP,
	XRDMA_DELAY_RSP_COPY,
	XRDMA_DELAY_QUEUE_RQ,
	XRDMA_DELAY_REMOVE_ONE,
	XRDMA_DELAY_RESIZE,
	XRDMA_DELAY_DRAIN_DONE,
	XRDMA_DELAY_GO_LIVE,
	XRDMA_DELAY_NR
};

/*
 * The fault and delay hooks exist in the test flavour alone (make
 * XRDMA_TEST_HOOKS=1, which the selftests load).  The module an admin
 * installs has none: below, each hook is an empty inline that leaves no
 * code, no debugfs file and no symbol behind.
 */
#ifdef XRDMA_TEST_HOOKS
/* fault.c */
DECLARE_STATIC_KEY_FALSE(xrdma_fault_key);
bool __xrdma_fault(struct xrdma_queue *queue, enum xrdma_fault fault);
int __xrdma_fault_post_send(struct xrdma_queue *queue,
			    struct ib_send_wr *head,
			    const struct ib_send_wr **bad);
void __xrdma_fault_io_setup_hold(struct xrdma_ctrl *ctrl);
void xrdma_fault_add(struct xrdma_ctrl *ctrl, struct dentry *parent);
bool __xrdma_want_remote_inv(void);

/* delay.c */
DECLARE_STATIC_KEY_FALSE(xrdma_delay_key);
void __xrdma_delay(enum xrdma_delay_point point);
void xrdma_hooks_init(struct dentry *root);

/* Hold here if a test asked to.  A no-op jump until a point is set. */
static inline void xrdma_delay(enum xrdma_delay_point point)
{
	if (static_branch_unlikely(&xrdma_delay_key))
		__xrdma_delay(point);
}

/* Should this call fail?  A no-op jump until a fault is first armed. */
static inline bool xrdma_fault(struct xrdma_queue *queue,
			       enum xrdma_fault fault)
{
	return static_branch_unlikely(&xrdma_fault_key) &&
	       __xrdma_fault(queue, fault);
}

/* ib_post_send() of a chain, through fault.c once a fault was armed */
static inline int xrdma_post_send(struct xrdma_queue *queue,
				  struct ib_send_wr *head,
				  const struct ib_send_wr **bad)
{
	if (static_branch_unlikely(&xrdma_fault_key))
		return __xrdma_fault_post_send(queue, head, bad);
	return ib_post_send(queue->qp, head, bad);
}

/* Hold a setup before its I/O queues while fault/io_setup_hold is set. */
static inline void xrdma_fault_io_setup_hold(struct xrdma_ctrl *ctrl)
{
	if (static_branch_unlikely(&xrdma_fault_key))
		__xrdma_fault_io_setup_hold(ctrl);
}

/*
 * Whether a command asks the target to invalidate its MR (the keyed SGL
 * descriptor's Invalidate Key bit): always, but with the test hook
 * no_remote_inv set (fault.c).
 */
static inline bool xrdma_want_remote_inv(void)
{
	return !static_branch_unlikely(&xrdma_fault_key) ||
	       __xrdma_want_remote_inv();
}
#else /* the production flavour: no hooks */
static inline void xrdma_delay(enum xrdma_delay_point point)
{
}

static inline bool xrdma_fault(struct xrdma_queue *queue,
			       enum xrdma_fault fault)
{
	return false;
}

static inline int xrdma_post_send(struct xrdma_queue *queue,
				  struct ib_send_wr *head,
				  const struct ib_send_wr **bad)
{
	return ib_post_send(queue->qp, head, bad);
}

static inline void xrdma_fault_io_setup_hold(struct xrdma_ctrl *ctrl)
{
}

static inline void xrdma_fault_add(struct xrdma_ctrl *ctrl,
				   struct dentry *parent)
{
}

static inline void xrdma_hooks_init(struct dentry *root)
{
}

static inline bool xrdma_want_remote_inv(void)
{
	return true;
}
#endif /* XRDMA_TEST_HOOKS */

#endif /* _XRDMA_H */
