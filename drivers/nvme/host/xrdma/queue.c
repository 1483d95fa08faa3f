// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: queue resources and lifetime.
 *
 * A queue owns one RC QP and one CQ for both directions, a command ring
 * (one 64-byte SQE per tag) and a response ring (one CQE per receive).
 * Both rings are DMA-mapped once per connection, not once per I/O.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/module.h>
#include <rdma/mr_pool.h>

#include "xrdma.h"

/*
 * Send WRs per command: REG_MR, SEND and LOCAL_INV; two more per queue,
 * the drain and the read pool's registration.
 */
#define XRDMA_SEND_WR_PER_CMD	3

static int cq_workqueue = -1;
module_param(cq_workqueue, int, 0644);
MODULE_PARM_DESC(cq_workqueue,
		 "where completions are handled: 1 ib_comp_wq, 0 softirq, -1 (default) ib_comp_wq on software RDMA devices (rdma_rxe, siw), softirq on the others; read at connect");

static bool xrdma_queue_is_poll(struct xrdma_queue *queue)
{
	struct xrdma_ctrl *ctrl = queue->ctrl;

	return queue->qid > ctrl->io_queues[HCTX_TYPE_DEFAULT] +
			    ctrl->io_queues[HCTX_TYPE_READ];
}

/* The receive WR of response ring slot @slot. */
static void xrdma_queue_recv_wr(struct xrdma_queue *queue,
				struct xrdma_rsp_slot *slot,
				struct ib_recv_wr *wr, struct ib_sge *sge)
{
	sge->addr = xrdma_cqe_dma(queue, slot->index);
	sge->length = sizeof(struct nvme_completion);
	sge->lkey = queue->lkey;
	wr->next = NULL;
	wr->wr_cqe = &slot->cqe;
	wr->sg_list = sge;
	wr->num_sge = 1;
}

/**
 * xrdma_queue_post_recv() - (re)post one receive buffer
 * @queue: the queue
 * @slot: the ring slot to post
 *
 * Return: 0 or the ib_post_recv() error.
 */
int xrdma_queue_post_recv(struct xrdma_queue *queue,
			  struct xrdma_rsp_slot *slot)
{
	struct ib_recv_wr wr;
	struct ib_sge sge;

	xrdma_queue_recv_wr(queue, slot, &wr, &sge);
	if (xrdma_fault(queue, XRDMA_FAULT_POST_RECV))
		return -ENOMEM;
	return ib_post_recv(queue->qp, &wr, NULL);
}

/* Receives posted per ib_post_recv() call when the ring is filled. */
#define XRDMA_RECV_BATCH	16

/* Post the whole receive ring, XRDMA_RECV_BATCH WRs per call, not one. */
static int xrdma_queue_fill_recv(struct xrdma_queue *queue)
{
	struct ib_recv_wr wr[XRDMA_RECV_BATCH];
	struct ib_sge sge[XRDMA_RECV_BATCH];
	u32 i, k, n;
	int ret;

	for (i = 0; i < queue->size; i += n) {
		n = min_t(u32, XRDMA_RECV_BATCH, queue->size - i);
		for (k = 0; k < n; k++) {
			xrdma_queue_recv_wr(queue, &queue->slots[i + k],
					    &wr[k], &sge[k]);
			if (k)
				wr[k - 1].next = &wr[k];
		}
		if (xrdma_fault(queue, XRDMA_FAULT_POST_RECV))
			return -ENOMEM;
		ret = ib_post_recv(queue->qp, wr, NULL);
		if (ret)
			return ret;
	}
	return 0;
}

static int xrdma_queue_alloc_rings(struct xrdma_queue *queue)
{
	struct ib_device *ibdev = queue->dev->ibdev;
	size_t sq_bytes = queue->size * sizeof(struct nvme_command);
	size_t cq_bytes = queue->size * sizeof(struct nvme_completion);
	u32 i;

	queue->sqes = kzalloc(sq_bytes, GFP_KERNEL);
	if (!queue->sqes)
		goto out;
	queue->sqes_dma = ib_dma_map_single(ibdev, queue->sqes, sq_bytes,
					    DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ibdev, queue->sqes_dma))
		goto out_free_sqes;

	queue->cqes = kzalloc(cq_bytes, GFP_KERNEL);
	if (!queue->cqes)
		goto out_unmap_sqes;
	queue->cqes_dma = ib_dma_map_single(ibdev, queue->cqes, cq_bytes,
					    DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(ibdev, queue->cqes_dma))
		goto out_free_cqes;

	queue->slots = kcalloc(queue->size, sizeof(*queue->slots),
			       GFP_KERNEL);
	if (!queue->slots)
		goto out_unmap_cqes;
	for (i = 0; i < queue->size; i++) {
		queue->slots[i].index = i;
		queue->slots[i].queue = queue;
		queue->slots[i].cqe.done = xrdma_recv_done;
	}
	return 0;

out_unmap_cqes:
	ib_dma_unmap_single(ibdev, queue->cqes_dma, cq_bytes, DMA_FROM_DEVICE);
out_free_cqes:
	kfree(queue->cqes);
out_unmap_sqes:
	ib_dma_unmap_single(ibdev, queue->sqes_dma, sq_bytes, DMA_TO_DEVICE);
out_free_sqes:
	kfree(queue->sqes);
out:
	return -ENOMEM;
}

static void xrdma_queue_free_rings(struct xrdma_queue *queue)
{
	struct ib_device *ibdev = queue->dev->ibdev;

	kfree(queue->slots);
	ib_dma_unmap_single(ibdev, queue->cqes_dma,
			    queue->size * sizeof(struct nvme_completion),
			    DMA_FROM_DEVICE);
	kfree(queue->cqes);
	ib_dma_unmap_single(ibdev, queue->sqes_dma,
			    queue->size * sizeof(struct nvme_command),
			    DMA_TO_DEVICE);
	kfree(queue->sqes);
}

/*
 * Where the CQ's completions are handled.  A software device (no DMA
 * device of its own: rdma_rxe, siw) calls the CQ's handler from its own
 * kworker, where softirq context means waking ksoftirqd, a thread of
 * normal priority, for every burst; ib_comp_wq's high-priority kworker on
 * the same CPU comes sooner (performance notes, make bench).  Hardware
 * calls the handler from its interrupt, where softirq runs at once.
 */
static enum ib_poll_context xrdma_queue_poll_ctx(struct xrdma_queue *queue,
						 struct ib_device *ibdev)
{
	int wq = READ_ONCE(cq_workqueue);

	if (queue->qid && xrdma_queue_is_poll(queue))
		return IB_POLL_DIRECT;
	if (wq < 0)
		wq = ib_uses_virt_dma(ibdev);
	return wq ? IB_POLL_WORKQUEUE : IB_POLL_SOFTIRQ;
}

static int xrdma_queue_create_cq(struct xrdma_queue *queue)
{
	struct ib_device *ibdev = queue->dev->ibdev;
	int vector = queue->qid ? (queue->qid - 1) % ibdev->num_comp_vectors
				: 0;
	/* every send WR and every receive may complete, plus the drain */
	u32 cq_size = (XRDMA_SEND_WR_PER_CMD + 1) * queue->size + 2;

	/*
	 * A CQ of its own per queue rather than one from the shared pool:
	 * pool CQs outlive the queue, which hides leaks in "rdma res".
	 */
	/* debugfs reads it at any time */
	WRITE_ONCE(queue->cq_ctx, xrdma_queue_poll_ctx(queue, ibdev));
	queue->cq = ib_alloc_cq(ibdev, queue, cq_size, vector, queue->cq_ctx);
	if (IS_ERR(queue->cq)) {
		int ret = PTR_ERR(queue->cq);

		queue->cq = NULL;
		return ret;
	}
	return 0;
}

static void xrdma_queue_destroy_cq(struct xrdma_queue *queue)
{
	struct ib_cq *cq = queue->cq;

	/* no poller may be inside the CQ, nor find it, once it goes */
	spin_lock(&queue->poll_lock);
	queue->cq = NULL;
	spin_unlock(&queue->poll_lock);
	ib_free_cq(cq);
}

/**
 * xrdma_queue_poll() - reap a poll queue's completions for blk-mq ->poll
 * @queue: the queue of a polled hctx, in any state
 *
 * blk-mq polls a bio as long as it is outstanding, and a bio requeued by a
 * teardown stays outstanding while the controller reconnects, when the
 * queue is stopped or its CQ freed.  poll_lock keeps the CQ from going
 * away under a poller and pollers out of a stopped queue, whose CQ only
 * the drain reaps.  A polled bio may also have landed on a queue with a
 * softirq CQ (a reconnect granted no poll queue): softirq reaps that one.
 *
 * Return: the number of completions processed.
 */
int xrdma_queue_poll(struct xrdma_queue *queue)
{
	int n = 0;

	if (!spin_trylock(&queue->poll_lock))
		return 0;
	if (queue->cq && queue->cq_ctx == IB_POLL_DIRECT &&
	    !test_bit(XRDMA_Q_STOPPED, &queue->flags))
		n = ib_process_cq_direct(queue->cq, queue->cq->cqe);
	spin_unlock(&queue->poll_lock);
	return n;
}

static int xrdma_queue_create_qp(struct xrdma_queue *queue)
{
	struct ib_qp_init_attr attr = { };
	int ret;

	attr.event_handler = NULL;
	attr.qp_type = IB_QPT_RC;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.send_cq = queue->cq;
	attr.recv_cq = queue->cq;
	attr.cap.max_send_wr = XRDMA_SEND_WR_PER_CMD * queue->size + 2;
	/* the ring, and one drain marker: the second goes once the first did */
	attr.cap.max_recv_wr = queue->size + 1;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_send_sge = 1 + queue->inline_sge;

	if (xrdma_fault(queue, XRDMA_FAULT_CREATE_QP))
		return -ENOMEM;
	ret = rdma_create_qp(queue->cm_id, queue->pd, &attr);
	if (ret)
		return ret;
	queue->qp = queue->cm_id->qp;
	return 0;
}

static void xrdma_queue_destroy_qp(struct xrdma_queue *queue)
{
	rdma_destroy_qp(queue->cm_id);
	queue->qp = NULL;
}

/*
 * Last of a connection's IB resources: its protection domain, if it got
 * one, and its reference on the device.
 */
static void xrdma_queue_put_dev(struct xrdma_queue *queue)
{
	if (queue->pd)
		ib_dealloc_pd(queue->pd);
	queue->pd = NULL;
	xrdma_device_put(queue->dev);
	queue->dev = NULL;
}

/*
 * The I/O requests have room for the in-capsule SGEs the controller's
 * first association could use (xrdma_ctrl.pdu_inline_sge): a target that
 * allows more after a reconnect gets no more than that.
 */
static void xrdma_queue_fit_inline(struct xrdma_queue *queue)
{
	u32 room = queue->ctrl->pdu_inline_sge * SZ_4K;

	if (queue->inline_size <= room)
		return;
	if (queue->qid == 1)
		xrdma_qinfo(queue,
			    "target allows %u bytes of in-capsule data, the requests set up at creation have room for %u: sending %u\n",
			    queue->inline_size, room, room);
	WRITE_ONCE(queue->inline_size, room);
}

/*
 * Undo xrdma_queue_create_ib() on a drained queue.  What a completion
 * handler may touch (the MRs, the read pool, the rings) goes only once the
 * CQ is freed, which waits out its last handler:
 * the MRs are taken off the QP first, as its destruction wants none of its
 * pool in use, and deregistered after.
 */
static void xrdma_queue_destroy_ib(struct xrdma_queue *queue)
{
	struct ib_qp *qp = queue->qp;
	struct ib_mr *mr, *tmp;
	unsigned long flags;
	LIST_HEAD(mrs);

	/* no REG_MR runs any more: the kept MRs go with the pool */
	xrdma_frwr_release_kept(queue);
	spin_lock_irqsave(&qp->mr_lock, flags);
	list_splice_init(&qp->rdma_mrs, &mrs);
	spin_unlock_irqrestore(&qp->mr_lock, flags);

	xrdma_queue_destroy_qp(queue);
	xrdma_queue_destroy_cq(queue);

	list_for_each_entry_safe(mr, tmp, &mrs, qp_entry) {
		list_del(&mr->qp_entry);
		ib_dereg_mr(mr);
	}
	xrdma_pool_free(queue);
	xrdma_queue_free_rings(queue);
	xrdma_queue_put_dev(queue);
}

/*
 * Pages one MR of the queue's device may map; the test hook
 * short_page_list takes one off, as a device with a shorter FRWR page
 * list than the admin queue's would have.
 */
static u32 xrdma_queue_dev_fr_pages(struct xrdma_queue *queue)
{
	u32 pages = queue->dev->max_fr_pages;

	if (xrdma_fault(queue, XRDMA_FAULT_SHORT_PAGE_LIST))
		pages--;
	return pages;
}

/*
 * Every queue's MRs map what one I/O of the controller may span: the limit
 * its first admin queue's device set.  The block layer was told that
 * limit, and the requests already built with it (requeued across a
 * reconnect, or waiting for one) are split by it.  A queue whose device
 * has a shorter FRWR page list, because the route moved or the queues of
 * one controller resolved to different devices, could map only part of
 * such a request, which would then fail for good.  Such a queue is not
 * used: its setup fails like a path that is down, so that a reconnect
 * tries again and multipath fails over.  Lowering the limit instead would
 * not reach the requests already split by the old one.
 */
static int xrdma_queue_check_fr_pages(struct xrdma_queue *queue)
{
	struct xrdma_ctrl *ctrl = queue->ctrl;
	u32 pages = xrdma_queue_dev_fr_pages(queue);

	/* the admin queue of a new controller comes first and sets it */
	if (!ctrl->max_fr_pages)
		ctrl->max_fr_pages = pages;
	if (pages >= ctrl->max_fr_pages)
		return 0;
	xrdma_qerr(queue,
		   "%s maps at most %u pages per I/O, the controller needs %u: not using it\n",
		   dev_name(&queue->dev->ibdev->dev), pages,
		   ctrl->max_fr_pages);
	return -EOPNOTSUPP;
}

/*
 * Create the IB resources of a queue whose address is resolved: bind the
 * device, create its protection domain, CQ, QP, rings and MR pool, and
 * post the whole receive ring, so the target may answer as soon as we are
 * connected.  Nothing is left allocated on error; if the device refused
 * the CQ, the QP or the MRs, short_of names which.
 */
static int xrdma_queue_create_ib(struct xrdma_queue *queue)
{
	int ret;

	queue->dev = xrdma_device_get(queue->cm_id);
	if (IS_ERR(queue->dev)) {
		ret = PTR_ERR(queue->dev);
		queue->dev = NULL;
		xrdma_qerr(queue, "no usable RDMA device: %d\n", ret);
		return ret;
	}
	ret = xrdma_queue_check_fr_pages(queue);
	if (ret)
		goto out_put_dev;
	queue->pd = ib_alloc_pd(queue->dev->ibdev, 0);
	if (IS_ERR(queue->pd)) {
		ret = PTR_ERR(queue->pd);
		queue->pd = NULL;
		xrdma_qerr(queue, "cannot allocate a protection domain: %d\n",
			   ret);
		goto out_put_dev;
	}
	queue->lkey = queue->pd->local_dma_lkey;

	/* MRs and in-capsule data are built of 4 KiB pages whatever PAGE_SIZE */
	WRITE_ONCE(queue->inline_size,
		   min_t(u32, queue->inline_size,
			 queue->dev->max_inline_sge * SZ_4K));
	xrdma_queue_fit_inline(queue);
	/*
	 * As many data SGEs as aligned 4 KiB pages fill it, no more: every
	 * send WQE carries room for them.  Less aligned data goes through
	 * FRWR.
	 */
	queue->inline_sge = DIV_ROUND_UP(queue->inline_size, SZ_4K);

	ret = xrdma_queue_create_cq(queue);
	if (ret) {
		xrdma_qerr(queue, "cannot create CQ: %d\n", ret);
		queue->short_of = "CQ";
		goto out_put_dev;
	}

	ret = xrdma_queue_create_qp(queue);
	if (ret) {
		xrdma_qerr(queue, "cannot create QP: %d\n", ret);
		queue->short_of = "QP";
		goto out_destroy_cq;
	}

	ret = xrdma_queue_alloc_rings(queue);
	if (ret)
		goto out_destroy_qp;

	xrdma_pool_alloc(queue);

	/* one extra page in each MR for a misaligned first segment */
	ret = ib_mr_pool_init(queue->qp, &queue->qp->rdma_mrs, queue->size,
			      IB_MR_TYPE_MEM_REG,
			      queue->ctrl->max_fr_pages + 1, 0);
	if (ret) {
		xrdma_qerr(queue, "cannot allocate %u MRs: %d\n",
			   queue->size, ret);
		queue->short_of = "MRs";
		goto out_free_pool;
	}

	ret = xrdma_queue_fill_recv(queue);
	if (ret) {
		xrdma_qerr(queue, "cannot post receive: %d\n", ret);
		goto out_destroy_ib;
	}
	return 0;

out_destroy_ib:
	/* flush what was posted, then free it all in the order of a stop */
	xrdma_queue_drain(queue);
	xrdma_queue_destroy_ib(queue);
	return ret;
out_free_pool:
	xrdma_pool_free(queue);
	xrdma_queue_free_rings(queue);
out_destroy_qp:
	xrdma_queue_destroy_qp(queue);
out_destroy_cq:
	xrdma_queue_destroy_cq(queue);
out_put_dev:
	xrdma_queue_put_dev(queue);
	return ret;
}

/*
 * Mark an established queue allocated, so that stop and free act on it,
 * unless its connection is already gone: a DISCONNECTED event between
 * ESTABLISHED and here found nothing to flush and no one to tell, and the
 * fabrics Connect would wait out its timeout.  Under stop_lock, so that
 * an event after this finds the queue allocated.
 */
static int xrdma_queue_publish(struct xrdma_queue *queue)
{
	int ret = 0;

	mutex_lock(&queue->stop_lock);
	if (test_bit(XRDMA_Q_CONNECTED, &queue->flags)) {
		set_bit(XRDMA_Q_ALLOCATED, &queue->flags);
		clear_bit(XRDMA_Q_STOPPED, &queue->flags);
		WRITE_ONCE(queue->on_port, queue->cm_id->port_num);
		WRITE_ONCE(queue->on_ibdev, queue->cm_id->device);
	} else {
		xrdma_qerr(queue, "connection lost as soon as established\n");
		ret = -ECONNRESET;
	}
	mutex_unlock(&queue->stop_lock);
	return ret;
}

/*
 * One attempt at an RC connection: CM id, address, IB resources, route,
 * connect request.  On failure nothing is left allocated.
 */
static int xrdma_queue_establish(struct xrdma_queue *queue)
{
	bool req_sent = false;
	int ret;

	queue->short_of = NULL;
	ret = xrdma_cm_create_id(queue);
	if (ret)
		return ret;

	ret = xrdma_cm_resolve_addr(queue);
	if (ret)
		goto out_destroy_id;

	ret = xrdma_queue_create_ib(queue);
	if (ret)
		goto out_destroy_id;

	ret = xrdma_cm_resolve_route(queue);
	if (ret)
		goto out_destroy_ib;

	req_sent = true;
	ret = xrdma_cm_establish(queue);
	if (ret)
		goto out_disconnect;

	xrdma_sysfs_note_qp(queue);
	ret = xrdma_queue_publish(queue);
	if (ret)
		goto out_drain;
	return 0;

out_drain:
	xrdma_queue_drain(queue);
out_disconnect:
	xrdma_cm_disconnect(queue);
out_destroy_ib:
	xrdma_queue_destroy_ib(queue);
out_destroy_id:
	xrdma_cm_destroy_id(queue, req_sent);
	return ret;
}

/**
 * xrdma_queue_alloc() - set up one queue's RC connection
 * @ctrl: the controller
 * @qid: NVMe queue id
 * @size: queue depth (1's based)
 *
 * A stale-connection reject, common right after a target restart, is
 * retried a few times at once instead of failing the whole attempt.
 *
 * Return: 0 or a negative errno.
 */
int xrdma_queue_alloc(struct xrdma_ctrl *ctrl, int qid, u32 size)
{
	struct xrdma_queue *queue = &ctrl->queues[qid];
	int tries = 0;
	int ret;

	/*
	 * A queue slot is reused across reconnects: start clean.  STOPPED
	 * stays set until the queue is allocated, so nothing is posted to
	 * it before (xrdma_queue_rq()) and no poller reaps its CQ.
	 */
	clear_bit(XRDMA_Q_CONNECTED, &queue->flags);
	clear_bit(XRDMA_Q_LIVE, &queue->flags);
	/* debugfs reads both at any time, without a lock */
	WRITE_ONCE(queue->size, size);
	WRITE_ONCE(queue->crqsize, 0);

	for (;;) {
		/* in-capsule data: I/O queues only, what IOCCSZ leaves */
		WRITE_ONCE(queue->inline_size, qid && ctrl->use_inline ?
			   xrdma_ctrl_icd_bytes(ctrl) : 0);
		ret = xrdma_queue_establish(queue);
		if (ret != -ESTALE || ++tries > XRDMA_STALE_RETRIES)
			break;
		xrdma_count(ctrl, stale_retries);
		msleep(XRDMA_STALE_DELAY_MS * tries);
	}
	if (ret)
		return ret == -ESTALE ? -ECONNREFUSED : ret;

	xrdma_debugfs_queue_add(queue);
	return 0;
}

/**
 * xrdma_queue_start() - send the fabrics Connect command on a queue
 * @queue: an allocated queue
 *
 * The queue goes live when its Connect succeeds, unless it was stopped.
 *
 * Return: 0, a negative errno (-ECONNRESET: stopped meanwhile) or a
 * positive NVMe status.
 */
int xrdma_queue_start(struct xrdma_queue *queue)
{
	struct xrdma_ctrl *ctrl = queue->ctrl;
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	struct blk_mq_tag_set *set = queue->qid ? &ctrl->tag_set
						: &ctrl->admin_tag_set;
	int hctx = queue->qid ? queue->qid - 1 : 0;
	bool stopped;
	int ret;

	if (WARN_ON_ONCE(hctx >= set->nr_hw_queues))
		return -EINVAL;
	/*
	 * Responses are matched to this queue's tags from now on, unless a
	 * lost connection stopped the queue first (xrdma_end_work() stops
	 * from the last queue down, the setup starts from the first up): the
	 * tags are published and withdrawn under stop_lock, with the state,
	 * so that a queue stopped first never publishes them again.
	 */
	mutex_lock(&queue->stop_lock);
	stopped = test_bit(XRDMA_Q_STOPPED, &queue->flags);
	if (!stopped)
		WRITE_ONCE(queue->tags, set->tags[hctx]);
	mutex_unlock(&queue->stop_lock);
	if (stopped) {
		xrdma_qinfo(queue, "stopped before its fabrics Connect: not starting\n");
		return -ECONNRESET;
	}

	ret = xrdma_pool_register(queue);
	if (ret) {
		xrdma_qerr(queue, "cannot register the read pool: %d\n", ret);
		return ret;
	}
	if (queue->qid)
		ret = nvmf_connect_io_queue(nctrl, queue->qid);
	else
		ret = nvmf_connect_admin_queue(nctrl);
	if (ret > 0) {
		xrdma_qinfo(queue, "fabrics Connect failed: NVMe status %#x\n",
			    ret);
		return ret;
	}
	if (ret) {
		xrdma_qinfo(queue, "fabrics Connect failed: %d\n", ret);
		return ret;
	}
	if (xrdma_fault(queue, XRDMA_FAULT_LIVE_HOLD))
		msleep(200);
	/*
	 * A lost connection may have stopped the queue after the Connect's
	 * response came in (xrdma_end_work()): a stopped queue never goes
	 * live, or the block layer sends it requests that can only be ended
	 * again, each end one of nvme-core's retries.
	 */
	mutex_lock(&queue->stop_lock);
	stopped = test_bit(XRDMA_Q_STOPPED, &queue->flags);
	if (!stopped)
		set_bit(XRDMA_Q_LIVE, &queue->flags);
	mutex_unlock(&queue->stop_lock);
	if (stopped) {
		xrdma_qinfo(queue, "stopped as its Connect succeeded: not going live\n");
		return -ECONNRESET;
	}
	return 0;
}

/**
 * xrdma_queue_stop() - disconnect a queue and flush its work requests
 * @queue: the queue
 *
 * Idempotent.  After it returns no completion handler of this queue runs
 * any more (but the drain's own, returning from its last marker, with
 * nothing of the queue's left to reap): every WR posted to it, the
 * LOCAL_INVs and receives its handlers posted during the drain included,
 * has completed and been handled, or the QP was reset and the handler
 * running fenced.  No poller is inside its CQ, and WRs not posted yet
 * never will be.  Only the owner of the way down stops queues: a teardown
 * or the end work (cancel.c), each under the controller's teardown_lock.
 */
void xrdma_queue_stop(struct xrdma_queue *queue)
{
	bool drained;

	lockdep_assert_held(&queue->ctrl->teardown_lock);
	mutex_lock(&queue->stop_lock);
	if (test_bit(XRDMA_Q_ALLOCATED, &queue->flags) &&
	    !test_and_set_bit(XRDMA_Q_STOPPED, &queue->flags)) {
		clear_bit(XRDMA_Q_LIVE, &queue->flags);
		spin_lock(&queue->sq_lock);
		xrdma_queue_pend_reset(queue);
		spin_unlock(&queue->sq_lock);
		xrdma_cm_disconnect(queue);
		drained = xrdma_queue_drain(queue);
		/* wait out a poller that got in before STOPPED was set */
		spin_lock(&queue->poll_lock);
		spin_unlock(&queue->poll_lock);
		xrdma_delay(XRDMA_DELAY_QUEUE_STOP);
		/*
		 * Withdrawn once no completion handler runs: a response that
		 * came in before the flush still finds its command, instead
		 * of counting as a bad response and ending the association.
		 * After a drain timeout a handler may still run, copying into
		 * a request the cancel would end: withdrawn first, so that no
		 * handler starts on a command again, then fenced.
		 */
		WRITE_ONCE(queue->tags, NULL);
		if (!drained)
			xrdma_queue_fence_cq(queue);
	}
	mutex_unlock(&queue->stop_lock);
}

/**
 * xrdma_queue_free() - release everything a queue holds
 * @queue: a stopped (or never started) queue; its controller's
 *	teardown_lock held, as the end work may walk the queue array
 */
void xrdma_queue_free(struct xrdma_queue *queue)
{
	lockdep_assert_held(&queue->ctrl->teardown_lock);
	mutex_lock(&queue->stop_lock);
	/*
	 * a stopped queue matches no response: a later association must not
	 * match one against tag maps a resize may have freed
	 */
	if (WARN_ON_ONCE(READ_ONCE(queue->tags)))
		WRITE_ONCE(queue->tags, NULL);
	if (test_and_clear_bit(XRDMA_Q_ALLOCATED, &queue->flags)) {
		WRITE_ONCE(queue->on_ibdev, NULL);
		xrdma_debugfs_queue_del(queue);
		xrdma_queue_destroy_ib(queue);
		xrdma_cm_destroy_id(queue, true);
	}
	mutex_unlock(&queue->stop_lock);
}

/* Prepare a queue slot for the life of its controller: 0 or -ENOMEM. */
static int xrdma_queue_init(struct xrdma_ctrl *ctrl, int qid)
{
	struct xrdma_queue *queue = &ctrl->queues[qid];

	queue->stats = alloc_percpu(struct xrdma_queue_stats);
	if (!queue->stats)
		return -ENOMEM;
	queue->ctrl = ctrl;
	queue->qid = qid;
	mutex_init(&queue->stop_lock);
	spin_lock_init(&queue->sq_lock);
	spin_lock_init(&queue->poll_lock);
	INIT_LIST_HEAD(&queue->kept_mrs);
	INIT_WORK(&queue->connect_work, xrdma_queue_connect_work);
	xrdma_queue_pend_reset(queue);
	/* not allocated yet: see xrdma_queue_alloc() */
	set_bit(XRDMA_Q_STOPPED, &queue->flags);
	return 0;
}

/* Undo xrdma_queue_init() on a freed queue. */
static void xrdma_queue_exit(struct xrdma_queue *queue)
{
	mutex_destroy(&queue->stop_lock);
	free_percpu(queue->stats);
	queue->stats = NULL;
}

/*
 * Slots in ctrl->queues: every queue the options could ever ask for.  The
 * count of I/O queues asked for at connect time is clamped to the CPUs
 * online then (nvmf_nr_io_queues()), which may be more on a reconnect
 * than at creation; it never exceeds the possible CPUs.
 */
static int xrdma_queues_max(struct nvmf_ctrl_options *opts)
{
	return min(opts->nr_io_queues, nr_cpu_ids) +
	       min(opts->nr_write_queues, nr_cpu_ids) +
	       min(opts->nr_poll_queues, nr_cpu_ids) + 1;
}

/**
 * xrdma_queues_free() - free a controller's queue array
 * @ctrl: the controller, every queue freed
 */
void xrdma_queues_free(struct xrdma_ctrl *ctrl)
{
	u32 nr = ctrl->nr_queue_slots;

	while (nr--)
		xrdma_queue_exit(&ctrl->queues[nr]);
	kfree(ctrl->queues);
	ctrl->queues = NULL;
	xrdma_delay(XRDMA_DELAY_QUEUES_FREE);
}

/**
 * xrdma_queues_alloc() - a new controller's queue array, every slot ready
 * @ctrl: the controller, its options set
 *
 * The slot count is kept in @ctrl: the options may be gone by the free.
 *
 * Return: 0 or -ENOMEM.
 */
int xrdma_queues_alloc(struct xrdma_ctrl *ctrl)
{
	int nr = xrdma_queues_max(ctrl->ctrl.opts);
	int qid, ret;

	ctrl->queues = kcalloc(nr, sizeof(*ctrl->queues), GFP_KERNEL);
	if (!ctrl->queues)
		return -ENOMEM;
	for (qid = 0; qid < nr; qid++) {
		ret = xrdma_queue_init(ctrl, qid);
		if (ret)
			goto out_exit;
	}
	ctrl->nr_queue_slots = nr;
	return 0;

out_exit:
	while (qid--)
		xrdma_queue_exit(&ctrl->queues[qid]);
	kfree(ctrl->queues);
	ctrl->queues = NULL;
	return ret;
}
