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
#include <linux/nvme-rdma.h>
#include <linux/scatterlist.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "nvme.h"
#include "fabrics.h"

/* Tunables that are part of the design, not of the wire. */
#define XRDMA_CM_RESOLVE_MS	3000	/* address and route resolution */
#define XRDMA_CM_ESTABLISH_MS	10000	/* REQ sent -> ESTABLISHED/REJECTED */
#define XRDMA_STALE_RETRIES	5	/* quick retries of a stale-conn reject */
#define XRDMA_STALE_DELAY_MS	20
#define XRDMA_PORT_WAIT_MS	10000	/* teardown held for a down port */
#define XRDMA_DRAIN_MS		5000	/* bounded QP drain */
#define XRDMA_MAX_FR_PAGES	256	/* 1 MiB per I/O with 4 KiB pages */
#define XRDMA_MAX_INLINE_SGE	16	/* in-capsule data segments */
#define XRDMA_INLINE_SG_CNT	2	/* scatterlist entries in the PDU */
#define XRDMA_MAX_QUEUE_SIZE	NVME_RDMA_MAX_QUEUE_SIZE

extern const char *xrdma_transport_name;

/**
 * struct xrdma_device - an RDMA device shared by all queues on it
 * @ibdev: the RDMA device
 * @pd: protection domain for every QP and MR of ours on @ibdev
 * @ref: one reference per queue bound to the device
 * @entry: link in the global device list
 * @max_fr_pages: pages one FRWR MR may map (bounded by XRDMA_MAX_FR_PAGES)
 * @max_inline_sge: data SGEs a SEND may carry after the command SGE
 * @max_rd_atom: responder resources to offer the target (it RDMA-READs)
 */
struct xrdma_device {
	struct ib_device	*ibdev;
	struct ib_pd		*pd;
	struct kref		ref;
	struct list_head	entry;
	u32			max_fr_pages;
	u32			max_inline_sge;
	u8			max_rd_atom;
};

/* Per-queue counters, shown in debugfs. */
struct xrdma_queue_stats {
	/* submission side, written under sq_lock */
	u64	submitted;
	u64	no_data;
	u64	inline_data;
	u64	frwr;
	u64	posts;		/* ib_post_send calls */
	u64	wrs;		/* work requests in those calls */
	u64	busy;		/* BLK_STS_RESOURCE returned */
	/* completion side */
	atomic64_t completed;
	atomic64_t remote_inv;
	atomic64_t local_inv;
	atomic64_t wr_errors;
	atomic64_t bad_rsp;
	atomic64_t timeouts;
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

enum xrdma_queue_flags {
	XRDMA_Q_ALLOCATED,	/* cm_id, QP and rings exist */
	XRDMA_Q_CONNECTED,	/* RC connection established */
	XRDMA_Q_LIVE,		/* fabrics Connect succeeded */
	XRDMA_Q_STOPPED,	/* disconnected and drained */
};

/**
 * struct xrdma_queue - one NVMe queue over one RC QP
 * @ctrl: owning controller
 * @qid: NVMe queue id (0 = admin)
 * @flags: enum xrdma_queue_flags
 * @size: entries in the command and response rings (queue depth)
 * @inline_size: in-capsule data bytes usable on this queue (0 = none)
 * @cm_id: rdma_cm identifier
 * @cm_done: completes when the awaited CM event arrived
 * @cm_error: result of the awaited CM step
 * @dev: RDMA device (reference held while allocated)
 * @qp: the RC queue pair
 * @cq: completion queue for both directions
 * @cq_size: entries requested for @cq
 * @poll_direct: @cq is IB_POLL_DIRECT, reaped by blk-mq ->poll
 * @sqes: command ring, one 64-byte SQE per tag
 * @sqes_dma: DMA address of @sqes
 * @cqes: response ring
 * @cqes_dma: DMA address of @cqes
 * @slots: receive descriptors, one per @cqes entry
 * @aen_cqe: SEND completion cookie of the AEN command (admin queue)
 * @drain_cqe: completion of the drain marker
 * @drain_done: completes when the drain marker was reaped
 * @stop_lock: serialises stop and free against the timeout handler and
 *	sysfs readers
 * @sq_lock: protects the pending WR chain and submission stats
 * @pend_head: first WR not yet posted (doorbell batching)
 * @pend_tail: where the next WR is linked
 * @pend_nr: WRs on the pending chain
 * @crqsize: receive queue size the target announced in its CM reply
 * @stats: counters for debugfs
 * @debugfs: this queue's debugfs directory
 */
struct xrdma_queue {
	struct xrdma_ctrl	*ctrl;
	u16			qid;
	unsigned long		flags;
	u32			size;
	u32			inline_size;

	struct rdma_cm_id	*cm_id;
	struct completion	cm_done;
	int			cm_error;

	struct xrdma_device	*dev;
	struct ib_qp		*qp;
	struct ib_cq		*cq;
	u32			cq_size;
	bool			poll_direct;

	struct nvme_command	*sqes;
	u64			sqes_dma;
	struct nvme_completion	*cqes;
	u64			cqes_dma;
	struct xrdma_rsp_slot	*slots;
	struct ib_cqe		aen_cqe;
	struct ib_cqe		drain_cqe;
	struct completion	drain_done;

	struct mutex		stop_lock;	/* see kernel-doc */
	spinlock_t		sq_lock;	/* see kernel-doc */
	struct ib_send_wr	*pend_head;
	struct ib_send_wr	**pend_tail;
	u32			pend_nr;
	u16			crqsize;

	struct xrdma_queue_stats stats;
	struct dentry		*debugfs;
};

/* What a request is still waiting for before it may complete. */
enum {
	XRDMA_REQ_SEND	= BIT(0),	/* SEND completion of the capsule */
	XRDMA_REQ_RESP	= BIT(1),	/* response capsule */
	XRDMA_REQ_INV	= BIT(2),	/* LOCAL_INV completion */
};

/* How a request's data travels; also used for tracing. */
enum xrdma_data_kind {
	XRDMA_DATA_NONE,
	XRDMA_DATA_INLINE,
	XRDMA_DATA_FRWR,
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
 * @sge: command SGE followed by in-capsule data SGEs
 * @first_sgl: inline scatterlist storage (more is chained on demand)
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
	struct ib_sge		sge[1 + XRDMA_MAX_INLINE_SGE];
	struct scatterlist	first_sgl[];
};

/**
 * struct xrdma_ctrl - an NVMe controller reached over RDMA
 * @ctrl: nvme core controller
 * @queues: queue array, index = qid
 * @dev: RDMA device of the admin queue (valid while it is allocated)
 * @tag_set: I/O tag set
 * @admin_tag_set: admin tag set
 * @err_work: error recovery
 * @reconnect_work: delayed reconnect attempt
 * @entry: link in the controller list
 * @addr: target address
 * @src_addr: source address (host_traddr)
 * @io_queues: I/O queues per hctx type
 * @max_fr_pages: FRWR pages per I/O for this controller
 * @use_inline: the target accepts in-capsule data
 * @stale_retries: stale-connection rejects retried (lifetime)
 * @recoveries: error recoveries started (lifetime)
 * @reconnect_attempts: failed connect attempts after the first (lifetime)
 * @rejects: connect requests the target rejected (lifetime)
 * @port_waits: releases held back for a port that was down (lifetime)
 * @debugfs: this controller's debugfs directory
 */
struct xrdma_ctrl {
	struct nvme_ctrl	ctrl;
	struct xrdma_queue	*queues;
	struct xrdma_device	*dev;
	struct blk_mq_tag_set	tag_set;
	struct blk_mq_tag_set	admin_tag_set;
	struct work_struct	err_work;
	struct delayed_work	reconnect_work;
	struct list_head	entry;
	struct sockaddr_storage	addr;
	struct sockaddr_storage	src_addr;
	u32			io_queues[HCTX_MAX_TYPES];
	u32			max_fr_pages;
	bool			use_inline;
	atomic_t		stale_retries;
	atomic_t		recoveries;
	atomic_t		reconnect_attempts;
	atomic_t		rejects;
	atomic_t		port_waits;
	struct dentry		*debugfs;
};

/* Empty the chain of work requests waiting for the next doorbell. */
static inline void xrdma_queue_pend_reset(struct xrdma_queue *queue)
{
	queue->pend_head = NULL;
	queue->pend_tail = &queue->pend_head;
	queue->pend_nr = 0;
}

static inline struct xrdma_ctrl *to_xrdma_ctrl(struct nvme_ctrl *nctrl)
{
	return container_of(nctrl, struct xrdma_ctrl, ctrl);
}

/* main.c */
void xrdma_ctrl_list_add(struct xrdma_ctrl *ctrl);
bool xrdma_ctrl_list_del(struct xrdma_ctrl *ctrl);
bool xrdma_ctrl_is_duplicate(struct nvmf_ctrl_options *opts);

/* device.c */
struct xrdma_device *xrdma_device_get(struct rdma_cm_id *cm_id);
void xrdma_device_put(struct xrdma_device *dev);

/* queue.c */
int xrdma_queue_alloc(struct xrdma_ctrl *ctrl, int qid, u32 size);
void xrdma_queue_free(struct xrdma_queue *queue);
void xrdma_queue_stop(struct xrdma_queue *queue);
int xrdma_queue_start(struct xrdma_queue *queue);
int xrdma_queue_post_recv(struct xrdma_queue *queue,
			  struct xrdma_rsp_slot *slot);
int xrdma_queue_create_ib(struct xrdma_queue *queue);
void xrdma_queue_destroy_ib(struct xrdma_queue *queue);

/* cm.c */
int xrdma_cm_connect(struct xrdma_queue *queue);
void xrdma_cm_destroy(struct xrdma_queue *queue);
bool xrdma_cm_port_up(struct xrdma_queue *queue);

/* request.c */
extern const struct blk_mq_ops xrdma_mq_ops;
extern const struct blk_mq_ops xrdma_admin_mq_ops;
void xrdma_recv_done(struct ib_cq *cq, struct ib_wc *wc);
void xrdma_submit_async_event(struct nvme_ctrl *nctrl);
void xrdma_wr_error(struct xrdma_queue *queue, struct ib_wc *wc,
		    const char *what);

/* ctrl.c */
extern struct nvmf_transport_ops xrdma_transport;
void xrdma_error_recovery(struct xrdma_ctrl *ctrl);
void xrdma_set_transport_name(const char *name);

/* sysfs.c */
extern const struct attribute_group *xrdma_dev_attr_groups[];

/* debugfs.c */
void xrdma_debugfs_init(void);
void xrdma_debugfs_exit(void);
void xrdma_debugfs_ctrl_add(struct xrdma_ctrl *ctrl);
void xrdma_debugfs_ctrl_del(struct xrdma_ctrl *ctrl);
void xrdma_debugfs_queue_add(struct xrdma_queue *queue);
void xrdma_debugfs_queue_del(struct xrdma_queue *queue);

#endif /* _XRDMA_H */
