// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: the data path.
 *
 * Submission builds the work requests of a command in its PDU and links
 * them to the queue's pending chain; the chain is posted with one
 * ib_post_send() when blk-mq says the batch is complete (bd->last or
 * ->commit_rqs), so a batch of N commands costs one doorbell, not N.  A
 * plug's requests come all at once (->queue_rqs): one lock, one doorbell.
 *
 * A request completes only when nothing the HCA may still touch is
 * outstanding: its SEND completion, its response and, when the target did
 * not invalidate the MR for us, our own LOCAL_INV (XRDMA_REQ_* bits).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "xrdma.h"
#include <trace/events/nvme_xrdma.h>

/* Report a failed work request and recover. */
static void xrdma_wr_error(struct xrdma_queue *queue, struct ib_wc *wc,
			   const char *what)
{
	struct xrdma_ctrl *ctrl = queue->ctrl;

	xrdma_stat_inc(queue, wr_errors);
	if (wc->status == IB_WC_WR_FLUSH_ERR) {
		/*
		 * The echo of a stop, or of a connection the CM gave up
		 * before it was published (a reject moves the QP to the
		 * error state): the news came another way.
		 */
		if (!test_bit(XRDMA_Q_ALLOCATED, &queue->flags) ||
		    test_bit(XRDMA_Q_STOPPED, &queue->flags))
			return;
	} else if (nvme_ctrl_state(&ctrl->ctrl) == NVME_CTRL_LIVE) {
		xrdma_qinfo_rl(queue, "%s failed: %s (%d)\n", what,
			       ib_wc_status_msg(wc->status), wc->status);
	}
	xrdma_connection_failed(ctrl);
}

/**
 * xrdma_unmap_data() - release what a request's data holds
 * @queue: the queue it was issued on
 * @rq: the request, ending or going back to the block layer
 *
 * Clears its read pool slot, returns its MR, unmaps and frees its
 * scatterlist.
 */
void xrdma_unmap_data(struct xrdma_queue *queue, struct request *rq)
{
	struct xrdma_request *req = blk_mq_rq_to_pdu(rq);

	if (req->kind == XRDMA_DATA_POOL) {
		xrdma_pool_clear(queue, rq);
		req->kind = XRDMA_DATA_NONE;
	}
	xrdma_frwr_put(queue, req);
	if (req->nents) {
		ib_dma_unmap_sg(queue->dev->ibdev, req->sgt.sgl, req->sgt.nents,
				rq_dma_dir(rq));
		req->nents = 0;
	}
	if (req->sgt.sgl) {
		sg_free_table_chained(&req->sgt, XRDMA_INLINE_SG_CNT);
		req->sgt.sgl = NULL;
	}
}

static void xrdma_complete_rq(struct request *rq)
{
	struct xrdma_request *req = blk_mq_rq_to_pdu(rq);
	struct xrdma_queue *queue = req->queue;

	/*
	 * Whatever ends a request still waiting claims it first; should
	 * nvme-core end one by a way of its own, its command id still moves
	 * on.  Core advances the generation only for a completion from the
	 * wire.
	 */
	if (atomic_read(&req->waiting))
		xrdma_req_claim(rq);
	xrdma_unmap_data(queue, rq);
	xrdma_stat_inc(queue, completed);
	nvme_complete_rq(rq);
}

/*
 * Give a request that is ours to end to nvme-core with its status.  With
 * CONFIG_FAIL_IO_TIMEOUT and io-timeout-fail set, core may swallow the
 * completion to play a lost one: the request stays in flight, for the
 * timeout handler to end through a cancel, which ends only what it can
 * claim.  Such a request (in flight once core took it) is marked
 * XRDMA_REQ_LOST, which no arrival clears, so the cancel claims it.  One
 * core did complete, or that is already reused, is left alone.
 */
static void xrdma_req_to_core(struct xrdma_request *req)
{
	struct request *rq = blk_mq_rq_from_pdu(req);

	if (!nvme_try_complete_req(rq, req->status, req->result)) {
		xrdma_complete_rq(rq);
		return;
	}
	if (!IS_ENABLED(CONFIG_FAIL_IO_TIMEOUT) ||
	    !test_bit(QUEUE_FLAG_FAIL_IO, &rq->q->queue_flags) ||
	    blk_mq_rq_state(rq) != MQ_RQ_IN_FLIGHT)
		return;
	if (!atomic_cmpxchg(&req->waiting, 0, XRDMA_REQ_LOST))
		xrdma_qwarn_rl(req->queue,
			       "command id %#x: completion withheld by fault injection, ended at its timeout\n",
			       nvme_cid(rq));
}

/* Drop what arrived; the last one to arrive ends the request. */
static void xrdma_req_arrived(struct xrdma_request *req, int what)
{
	if (atomic_fetch_andnot(what, &req->waiting) != what)
		return;
	xrdma_req_to_core(req);
}

/*
 * End a command whose capsule never reached the target as a path error,
 * or, while a setup runs, give it back as a failed setup's cancel does
 * (xrdma_requeue_taken()): no retry is spent on it.
 */
static void xrdma_end_unsent(struct xrdma_request *req)
{
	struct request *rq = blk_mq_rq_from_pdu(req);

	if (!xrdma_req_claim(rq) || xrdma_requeue_taken(rq))
		return;
	req->status = cpu_to_le16(NVME_SC_HOST_PATH_ERROR << 1);
	xrdma_req_to_core(req);
}

static void xrdma_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct xrdma_request *req =
		container_of(wc->wr_cqe, struct xrdma_request, send_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		xrdma_wr_error(req->queue, wc, "SEND");
		return;
	}
	xrdma_req_arrived(req, XRDMA_REQ_SEND);
}

static void xrdma_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct xrdma_request *req =
		container_of(wc->wr_cqe, struct xrdma_request, reg_cqe);

	/* REG_MR is unsignaled: a completion here is always an error */
	xrdma_wr_error(req->queue, wc, "REG_MR");
}

static void xrdma_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct xrdma_request *req =
		container_of(wc->wr_cqe, struct xrdma_request, inv_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		xrdma_wr_error(req->queue, wc, "LOCAL_INV");
		return;
	}
	xrdma_req_arrived(req, XRDMA_REQ_INV);
}

/*
 * Account for the MR of a request whose response just arrived.  Return
 * false if the response names an rkey we never handed out.
 */
static bool xrdma_handle_inv(struct xrdma_queue *queue,
			     struct xrdma_request *req, struct ib_wc *wc)
{
	if (wc->wc_flags & IB_WC_WITH_INVALIDATE) {
		if (unlikely(!req->mr ||
			     wc->ex.invalidate_rkey != req->mr->rkey)) {
			xrdma_qerr_rl(queue, "target invalidated rkey %#x, not ours (%#x)\n",
				      wc->ex.invalidate_rkey,
				      req->mr ? req->mr->rkey : 0);
			return false;
		}
		xrdma_stat_inc(queue, remote_inv);
		return true;
	}
	if (!req->mr)
		return true;

	/* the target left the MR valid: invalidate it before completing */
	atomic_or(XRDMA_REQ_INV, &req->waiting);
	if (unlikely(xrdma_frwr_local_inv(queue, req))) {
		xrdma_qerr_rl(queue, "cannot post LOCAL_INV for rkey %#x\n",
			      req->mr->rkey);
		return false;
	}
	xrdma_stat_inc(queue, local_inv);
	return true;
}

static void xrdma_bad_response(struct xrdma_queue *queue, const char *why,
			       u16 cid)
{
	xrdma_stat_inc(queue, bad_rsp);
	xrdma_qerr_rl(queue, "bad response (%s, command id %#x), recovering\n",
		      why, cid);
	xrdma_connection_failed(queue->ctrl);
}

/*
 * Match a response to the command it answers.  Return the request, NULL
 * for the AEN (handed to core here), or an error pointer for a response
 * that was refused (recovery is under way).
 */
static struct xrdma_request *xrdma_process_rsp(struct xrdma_queue *queue,
					       struct nvme_completion *cqe,
					       struct ib_wc *wc)
{
	struct xrdma_request *req;
	struct blk_mq_tags *tags;
	struct request *rq;
	u16 cid = cqe->command_id;

	if (unlikely(nvme_is_aen_req(queue->qid, cid))) {
		if (wc->wc_flags & IB_WC_WITH_INVALIDATE) {
			xrdma_bad_response(queue, "invalidate on AEN", cid);
			return ERR_PTR(-EPROTO);
		}
		nvme_complete_async_event(&queue->ctrl->ctrl, cqe->status,
					  &cqe->result);
		return NULL;
	}

	/* no tags before xrdma_queue_start(): nothing can be answered yet */
	tags = READ_ONCE(queue->tags);
	if (unlikely(!tags)) {
		xrdma_bad_response(queue, "no command sent yet", cid);
		return ERR_PTR(-EPROTO);
	}
	rq = nvme_find_rq(tags, cid);
	if (unlikely(!rq)) {
		xrdma_bad_response(queue, "unknown command id", cid);
		return ERR_PTR(-EPROTO);
	}
	/* an idle, cancelled or timed-out request waits for nothing */
	req = blk_mq_rq_to_pdu(rq);
	if (unlikely(req->queue != queue ||
		     blk_mq_rq_state(rq) != MQ_RQ_IN_FLIGHT ||
		     !(atomic_read(&req->waiting) & XRDMA_REQ_RESP))) {
		xrdma_bad_response(queue, "command not in flight", cid);
		return ERR_PTR(-EPROTO);
	}

	req->status = cqe->status;
	req->result = cqe->result;
	trace_xrdma_recv(queue, cid, le16_to_cpu(cqe->status),
			 wc->wc_flags & IB_WC_WITH_INVALIDATE);
	if (unlikely(!xrdma_handle_inv(queue, req, wc))) {
		xrdma_bad_response(queue, "invalidation", cid);
		return ERR_PTR(-EPROTO);
	}
	/* the data came before the response: take it out of the pool */
	if (req->kind == XRDMA_DATA_POOL &&
	    !(le16_to_cpu(cqe->status) >> 1)) {
		xrdma_delay(XRDMA_DELAY_RSP_COPY);
		xrdma_pool_copy(queue, rq);
	}
	return req;
}

/**
 * xrdma_recv_done() - a response capsule arrived
 * @cq: the completion queue
 * @wc: the receive completion
 *
 * Nothing in the response is trusted: the length, the command id (tag and
 * generation) and the invalidated rkey are all checked, and anything off
 * starts error recovery instead of completing a request.  The receive
 * buffer is posted again before the request completes.
 */
void xrdma_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct xrdma_rsp_slot *slot =
		container_of(wc->wr_cqe, struct xrdma_rsp_slot, cqe);
	struct xrdma_queue *queue = slot->queue;
	struct ib_device *ibdev = queue->dev->ibdev;
	u64 dma = xrdma_cqe_dma(queue, slot->index);
	struct nvme_completion *cqe = &queue->cqes[slot->index];
	struct xrdma_request *req;

	if (xrdma_fault(queue, XRDMA_FAULT_CQ_ERROR))
		wc->status = IB_WC_GENERAL_ERR;
	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		xrdma_wr_error(queue, wc, "RECV");
		return;
	}
	if (unlikely(wc->byte_len < sizeof(*cqe))) {
		xrdma_bad_response(queue, "short capsule", 0xffff);
		return;
	}

	ib_dma_sync_single_for_cpu(ibdev, dma, sizeof(*cqe), DMA_FROM_DEVICE);
	req = xrdma_process_rsp(queue, cqe, wc);
	if (IS_ERR(req))
		return;

	WRITE_ONCE(queue->rx_at, jiffies);
	ib_dma_sync_single_for_device(ibdev, dma, sizeof(*cqe),
				      DMA_FROM_DEVICE);
	if (unlikely(xrdma_queue_post_recv(queue, slot))) {
		xrdma_qerr_rl(queue, "cannot repost receive\n");
		xrdma_connection_failed(queue->ctrl);
	}
	if (req)
		xrdma_req_arrived(req, XRDMA_REQ_RESP);
}

/* No data: a keyed descriptor with zero length and key. */
static void xrdma_set_null_sgl(struct nvme_command *c)
{
	struct nvme_keyed_sgl_desc *sg = &c->common.dptr.ksgl;

	sg->addr = 0;
	put_unaligned_le24(0, sg->length);
	put_unaligned_le32(0, sg->key);
	sg->type = NVME_KEY_SGL_FMT_DATA_DESC << 4;
}

/* In-capsule data: the pages ride in the same SEND as the command. */
static void xrdma_map_inline(struct xrdma_queue *queue,
			     struct xrdma_request *req, struct request *rq)
{
	struct nvme_sgl_desc *sg = &req->cmd.common.dptr.sgl;
	u32 lkey = queue->lkey;
	struct scatterlist *sgl;
	int i;

	for_each_sg(req->sgt.sgl, sgl, req->nents, i) {
		req->sge[i + 1].addr = sg_dma_address(sgl);
		req->sge[i + 1].length = sg_dma_len(sgl);
		req->sge[i + 1].lkey = lkey;
	}
	sg->addr = cpu_to_le64(queue->ctrl->ctrl.icdoff);
	sg->length = cpu_to_le32(blk_rq_payload_bytes(rq));
	sg->type = (NVME_SGL_FMT_DATA_DESC << 4) | NVME_SGL_FMT_OFFSET;
	req->kind = XRDMA_DATA_INLINE;
}

static bool xrdma_use_inline(struct xrdma_queue *queue,
			     struct xrdma_request *req, struct request *rq)
{
	return queue->inline_size && rq_data_dir(rq) == WRITE &&
	       blk_rq_payload_bytes(rq) <= queue->inline_size &&
	       req->nents <= queue->inline_sge;
}

static int xrdma_map_data(struct xrdma_queue *queue, struct request *rq,
			  bool last)
{
	struct xrdma_request *req = blk_mq_rq_to_pdu(rq);
	int ret;

	req->cmd.common.flags |= NVME_CMD_SGL_METABUF;
	req->mr = NULL;
	req->nents = 0;
	req->kind = XRDMA_DATA_NONE;
	if (!blk_rq_nr_phys_segments(rq)) {
		xrdma_set_null_sgl(&req->cmd);
		return 0;
	}
	if (xrdma_pool_fits(queue, rq)) {
		xrdma_pool_map(queue, req, rq);
		return 0;
	}

	req->sgt.sgl = req->first_sgl;
	ret = sg_alloc_table_chained(&req->sgt, blk_rq_nr_phys_segments(rq),
				     req->sgt.sgl, XRDMA_INLINE_SG_CNT);
	if (ret) {
		req->sgt.sgl = NULL;
		return -ENOMEM;
	}
	req->sgt.nents = blk_rq_map_sg(rq, req->sgt.sgl);

	req->nents = xrdma_fault(queue, XRDMA_FAULT_DMA_MAP) ||
		     (last && xrdma_fault(queue, XRDMA_FAULT_DMA_MAP_LAST)) ? 0 :
		     ib_dma_map_sg(queue->dev->ibdev, req->sgt.sgl,
				   req->sgt.nents, rq_dma_dir(rq));
	if (unlikely(req->nents <= 0)) {
		req->nents = 0;
		ret = -EIO;
		goto out_free_table;
	}

	if (xrdma_use_inline(queue, req, rq)) {
		xrdma_map_inline(queue, req, rq);
		return 0;
	}
	ret = xrdma_frwr_map(queue, req, rq);
	if (ret)
		goto out_unmap;
	return 0;

out_unmap:
	ib_dma_unmap_sg(queue->dev->ibdev, req->sgt.sgl, req->sgt.nents,
			rq_dma_dir(rq));
	req->nents = 0;
out_free_table:
	sg_free_table_chained(&req->sgt, XRDMA_INLINE_SG_CNT);
	req->sgt.sgl = NULL;
	return ret;
}

/*
 * Fail the commands whose WRs the HCA refused: no SEND went out, so the
 * target never saw them.  Their REG_MR, if any, may have been posted, and
 * may still run until the QP is flushed: their MRs stay out of the pool
 * until then.  The next WR is read before a command ends, as its end may
 * hand its PDU to a new command.
 */
static void xrdma_fail_unposted(struct xrdma_queue *queue,
				const struct ib_send_wr *bad)
{
	const struct ib_send_wr *next;
	struct xrdma_request *req;

	for (; bad; bad = next) {
		next = bad->next;
		if (bad->opcode != IB_WR_SEND)
			continue;
		req = container_of(bad, struct xrdma_request, send_wr);
		xrdma_frwr_keep(queue, req);
		xrdma_end_unsent(req);
	}
}

/*
 * Post the pending chain with one doorbell.  Called with sq_lock held.
 * The chain is empty unless the queue runs: submission links only while
 * the queue is not stopped, and xrdma_queue_stop() empties it, under
 * sq_lock, once STOPPED is set.  A flush in between posts to a QP that
 * lives until xrdma_queue_free(), after the stop, whose drain flushes it.
 *
 * Return: the WRs the HCA refused, for xrdma_post_failed() once sq_lock
 * is dropped (their requests complete, and may be resubmitted from there),
 * or NULL.
 */
static const struct ib_send_wr *xrdma_flush_pending(struct xrdma_queue *queue)
{
	struct ib_send_wr *head = queue->pend_head;
	const struct ib_send_wr *bad = NULL;
	int ret;

	lockdep_assert_held(&queue->sq_lock);
	if (!head)
		return NULL;
	xrdma_stat_inc(queue, posts);
	xrdma_stat_add(queue, wrs, queue->pend_nr);
	trace_xrdma_post(queue, queue->pend_nr);
	xrdma_queue_pend_reset(queue);

	ret = xrdma_post_send(queue, head, &bad);
	if (likely(!ret))
		return NULL;
	xrdma_qerr_rl(queue, "ib_post_send failed: %d\n", ret);
	/* a provider that fails before posting anything may not say so */
	return bad ?: head;
}

/* The WRs from @bad on were not posted: end their commands, recover. */
static void xrdma_post_failed(struct xrdma_queue *queue,
			      const struct ib_send_wr *bad)
{
	xrdma_fail_unposted(queue, bad);
	xrdma_connection_failed(queue->ctrl);
}

/* Post the pending chain if @flush, drop sq_lock, end what was refused. */
static void xrdma_sq_unlock(struct xrdma_queue *queue, bool flush)
	__releases(&queue->sq_lock)
{
	const struct ib_send_wr *bad = flush ? xrdma_flush_pending(queue) :
					       NULL;

	spin_unlock(&queue->sq_lock);
	if (unlikely(bad))
		xrdma_post_failed(queue, bad);
}

static void xrdma_commit_rqs(struct blk_mq_hw_ctx *hctx)
{
	struct xrdma_queue *queue = hctx->driver_data;

	spin_lock(&queue->sq_lock);
	xrdma_sq_unlock(queue, true);
}

/*
 * Copy @cmd into command ring slot @slot and build the SEND that carries
 * it: @sge[0] is the slot, @sge[1 .. nsge - 1] in-capsule data.
 */
static void xrdma_build_send(struct xrdma_queue *queue,
			     const struct nvme_command *cmd, u32 slot,
			     struct ib_send_wr *wr, struct ib_sge *sge,
			     int nsge, struct ib_cqe *cqe)
{
	u64 dma = xrdma_sqe_dma(queue, slot);

	/* the slot is the device's since its last SEND: synced back first */
	ib_dma_sync_single_for_cpu(queue->dev->ibdev, dma, sizeof(*cmd),
				   DMA_TO_DEVICE);
	memcpy(&queue->sqes[slot], cmd, sizeof(*cmd));
	ib_dma_sync_single_for_device(queue->dev->ibdev, dma, sizeof(*cmd),
				      DMA_TO_DEVICE);

	sge[0].addr = dma;
	sge[0].length = sizeof(*cmd);
	sge[0].lkey = queue->lkey;

	wr->next = NULL;
	wr->wr_cqe = cqe;
	wr->sg_list = sge;
	wr->num_sge = nsge;
	wr->opcode = IB_WR_SEND;
	wr->send_flags = IB_SEND_SIGNALED;
}

/* The WRs of a command: REG_MR for keyed data, then the SEND. */
static void xrdma_build_wrs(struct xrdma_queue *queue,
			    struct xrdma_request *req, struct request *rq)
{
	int nsge = 1 + (req->kind == XRDMA_DATA_INLINE ? req->nents : 0);

	xrdma_build_send(queue, &req->cmd, rq->tag, &req->send_wr, req->sge,
			 nsge, &req->send_cqe);
	if (req->kind == XRDMA_DATA_FRWR)
		req->reg_wr.wr.next = &req->send_wr;
}

/* Count @req's command and link its WRs to the pending chain. */
static void xrdma_link_req(struct xrdma_queue *queue,
			   struct xrdma_request *req)
{
	struct ib_send_wr *first = &req->send_wr;

	lockdep_assert_held(&queue->sq_lock);
	xrdma_stat_inc(queue, submitted);
	switch (req->kind) {
	case XRDMA_DATA_NONE:
		xrdma_stat_inc(queue, no_data);
		break;
	case XRDMA_DATA_INLINE:
		xrdma_stat_inc(queue, inline_data);
		break;
	case XRDMA_DATA_POOL:
		xrdma_stat_inc(queue, pool);
		break;
	case XRDMA_DATA_FRWR:
		xrdma_stat_inc(queue, frwr);
		first = &req->reg_wr.wr;
		queue->pend_nr++;
		break;
	}
	*queue->pend_tail = first;
	queue->pend_tail = &req->send_wr.next;
	queue->pend_nr++;
}

/*
 * Everything of ->queue_rq but the linking: check, set up and map the
 * command and build its WRs.  Return BLK_STS_OK with *ready set when the
 * request is started and its WRs are to be linked; with *ready false, any
 * status (BLK_STS_OK included: a command ended as a path error) for a
 * request that was not started, whose setup is undone.  @last: ->queue_rq
 * got it as the last of a batch (only fault/dma_map_last looks).
 */
static blk_status_t xrdma_prep_rq(struct xrdma_queue *queue,
				  struct request *rq, bool *ready, bool last)
{
	struct xrdma_request *req = blk_mq_rq_to_pdu(rq);
	struct nvme_ctrl *nctrl = &queue->ctrl->ctrl;
	blk_status_t status;
	int ret;

	*ready = false;
	if (!nvme_check_ready(nctrl, rq,
			      test_bit(XRDMA_Q_LIVE, &queue->flags))) {
		/*
		 * A reconnect granted fewer I/O queues: this hctx has no
		 * queue any more (never live), and the resize that drops it
		 * waits for its requests.  End them as a path error
		 * (multipath fails them over, otherwise they fail after
		 * nvme-core's retries) rather than requeue them until
		 * ctrl_loss_tmo, the resize stalled all that time.
		 */
		if (queue->qid >= READ_ONCE(nctrl->queue_count)) {
			xrdma_qwarn_rl(queue, "queue not granted again: failing its requests\n");
			return nvme_host_path_error(rq);
		}
		return nvme_fail_nonready_command(nctrl, rq);
	}

	if (WARN_ON_ONCE(rq->tag >= queue->size))
		return BLK_STS_IOERR;

	req->queue = queue;
	status = nvme_setup_cmd(rq->q->queuedata, rq);
	if (status)
		return status;

	ret = xrdma_map_data(queue, rq, last);
	if (unlikely(ret)) {
		nvme_cleanup_cmd(rq);
		if (ret == -ENOMEM || ret == -EAGAIN) {
			xrdma_stat_inc(queue, busy);
			return BLK_STS_RESOURCE;
		}
		xrdma_qerr_rl(queue, "cannot map data: %d\n", ret);
		/* a path error lets multipath try another path */
		return ret == -EIO ? nvme_host_path_error(rq) : BLK_STS_IOERR;
	}

	atomic_set(&req->waiting, XRDMA_REQ_SEND | XRDMA_REQ_RESP);
	xrdma_build_wrs(queue, req, rq);
	nvme_start_request(rq);
	/*
	 * the stop and its cancel may come now, before the link: both may
	 * want to end this request, and only the one that claims it does
	 */
	if (queue->qid)
		xrdma_delay(XRDMA_DELAY_QUEUE_RQ);
	trace_xrdma_queue_rq(queue, rq, req->kind);
	*ready = true;
	return BLK_STS_OK;
}

/*
 * The stop emptied the chain before these commands were linked, and the
 * cancel that followed it did not see them: end them here, or they wait
 * for their timeout.  A stopped queue in use has lost its connection: end
 * the setup, or recover.
 */
static void xrdma_submit_stopped(struct xrdma_queue *queue,
				 struct request *rq, struct rq_list *more)
{
	do {
		xrdma_end_unsent(blk_mq_rq_to_pdu(rq));
	} while (more && (rq = rq_list_pop(more)));
	xrdma_connection_failed(queue->ctrl);
}

static blk_status_t xrdma_queue_rq(struct blk_mq_hw_ctx *hctx,
				   const struct blk_mq_queue_data *bd)
{
	struct xrdma_queue *queue = hctx->driver_data;
	blk_status_t status;
	bool ready;

	status = xrdma_prep_rq(queue, bd->rq, &ready, bd->last);
	if (unlikely(!ready)) {
		/*
		 * Nothing to link, but what is pending must not wait: blk-mq
		 * calls ->commit_rqs after a refusal, not after the last
		 * request of a batch returned BLK_STS_OK.
		 */
		if (bd->last || status != BLK_STS_OK)
			xrdma_commit_rqs(hctx);
		return status;
	}

	spin_lock(&queue->sq_lock);
	if (unlikely(test_bit(XRDMA_Q_STOPPED, &queue->flags))) {
		spin_unlock(&queue->sq_lock);
		xrdma_submit_stopped(queue, bd->rq, NULL);
		return BLK_STS_OK;
	}
	xrdma_link_req(queue, blk_mq_rq_to_pdu(bd->rq));
	xrdma_sq_unlock(queue, bd->last);
	return BLK_STS_OK;
}

/* Link the started requests of @batch, all @queue's, at once; empty it. */
static void xrdma_submit_batch(struct xrdma_queue *queue,
			       struct rq_list *batch)
{
	struct request *rq = rq_list_pop(batch);
	unsigned int n = 0;

	spin_lock(&queue->sq_lock);
	if (unlikely(test_bit(XRDMA_Q_STOPPED, &queue->flags))) {
		spin_unlock(&queue->sq_lock);
		xrdma_submit_stopped(queue, rq, batch);
		return;
	}
	do {
		xrdma_link_req(queue, blk_mq_rq_to_pdu(rq));
		n++;
	} while ((rq = rq_list_pop(batch)));
	xrdma_sq_unlock(queue, true);
	xrdma_stat_add(queue, batched, n);
}

/*
 * Set up the requests at the head of @rqlist that share the first one's
 * hardware queue, and take them off it: the started ones to @batch, the
 * ones blk-mq is to issue alone to @requeue.  Return their queue.
 */
static struct xrdma_queue *xrdma_prep_run(struct rq_list *rqlist,
					  struct rq_list *batch,
					  struct rq_list *requeue)
{
	struct blk_mq_hw_ctx *hctx = rq_list_peek(rqlist)->mq_hctx;
	struct xrdma_queue *queue = hctx->driver_data;
	struct request *rq;
	blk_status_t status;
	bool ready;

	while ((rq = rq_list_peek(rqlist)) && rq->mq_hctx == hctx) {
		rq_list_pop(rqlist);
		status = xrdma_prep_rq(queue, rq, &ready, false);
		if (ready)
			rq_list_add_tail(batch, rq);
		else if (status != BLK_STS_OK)
			rq_list_add_tail(requeue, rq);
	}
	return queue;
}

/*
 * ->queue_rqs: a plug's requests, all of one request queue, maybe of
 * several hardware queues.  Each run of one queue's requests is set up
 * without the lock, then linked under one sq_lock and posted with one
 * doorbell.  A request that cannot be set up now was not started: it goes
 * back in @rqlist, and blk-mq issues it through ->queue_rq, which sets it
 * up again and returns its status.  One that setup ended is done.
 */
static void xrdma_queue_rqs(struct rq_list *rqlist)
{
	struct rq_list requeue = {};

	while (!rq_list_empty(rqlist)) {
		struct rq_list batch = {};
		struct xrdma_queue *queue;

		queue = xrdma_prep_run(rqlist, &batch, &requeue);
		if (!rq_list_empty(&batch))
			xrdma_submit_batch(queue, &batch);
	}
	*rqlist = requeue;
}

#ifdef XRDMA_HAVE_RQ_LIST
#define xrdma_mq_queue_rqs	xrdma_queue_rqs
#else
/*
 * 6.1 hands ->queue_rqs the head of the plug's chain and issues what is
 * chained there afterwards through ->queue_rq: the same run over the
 * head-and-tail list of compat.h.
 */
static void xrdma_mq_queue_rqs(struct request **head)
{
	struct rq_list rqlist = { .head = *head, .tail = *head };

	while (rqlist.tail && rqlist.tail->rq_next)
		rqlist.tail = rqlist.tail->rq_next;
	xrdma_queue_rqs(&rqlist);
	*head = rqlist.head;
}
#endif

static void xrdma_aen_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct xrdma_queue *queue =
		container_of(wc->wr_cqe, struct xrdma_queue, aen_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS))
		xrdma_wr_error(queue, wc, "AEN SEND");
}

/**
 * xrdma_submit_async_event() - post the Asynchronous Event Request
 * @nctrl: the controller
 *
 * The AER has no blk-mq tag: it uses the admin ring slot past the tag set
 * (command id NVME_AQ_BLK_MQ_DEPTH) so its response is recognised.
 * Nothing would post it again before the next reconnect, so a post that
 * fails starts error recovery, after which nvme core, once the controller
 * is live again, asks for it anew.
 */
void xrdma_submit_async_event(struct nvme_ctrl *nctrl)
{
	struct xrdma_queue *queue = &to_xrdma_ctrl(nctrl)->queues[0];
	struct nvme_command c = { };
	struct ib_send_wr wr;
	struct ib_sge sge;
	int ret;

	if (!test_bit(XRDMA_Q_LIVE, &queue->flags))
		return;

	c.common.opcode = nvme_admin_async_event;
	c.common.command_id = NVME_AQ_BLK_MQ_DEPTH;
	c.common.flags |= NVME_CMD_SGL_METABUF;
	xrdma_set_null_sgl(&c);

	queue->aen_cqe.done = xrdma_aen_send_done;
	xrdma_build_send(queue, &c, NVME_AQ_BLK_MQ_DEPTH, &wr, &sge, 1,
			 &queue->aen_cqe);
	ret = xrdma_fault(queue, XRDMA_FAULT_AEN) ? -ENOMEM :
	      ib_post_send(queue->qp, &wr, NULL);
	if (unlikely(ret)) {
		/* nvme core arms it again once the controller is live again */
		xrdma_qerr_rl(queue, "cannot post AEN: %d, recovering\n", ret);
		xrdma_connection_failed(to_xrdma_ctrl(nctrl));
	}
}

static int xrdma_poll(struct blk_mq_hw_ctx *hctx, struct io_comp_batch *iob)
{
	struct xrdma_queue *queue = hctx->driver_data;

	/* a polled bio outlives a teardown: see xrdma_queue_poll() */
	return xrdma_queue_poll(queue);
}

static int xrdma_init_request(struct blk_mq_tag_set *set, struct request *rq,
			      unsigned int hctx_idx, int numa_node)
{
	struct nvme_ctrl *nctrl = set->driver_data;
	struct xrdma_request *req = blk_mq_rq_to_pdu(rq);

	nvme_req(rq)->ctrl = nctrl;
	nvme_req(rq)->cmd = &req->cmd;
	req->sgt.sgl = NULL;
	req->send_cqe.done = xrdma_send_done;
	req->inv_cqe.done = xrdma_inv_done;
	req->reg_cqe.done = xrdma_reg_done;
	return 0;
}

#ifndef XRDMA_HAVE_INIT_REQUEST_INT_NODE
/* before 7.3 the NUMA node came unsigned */
static int xrdma_init_request_unsigned(struct blk_mq_tag_set *set,
				       struct request *rq,
				       unsigned int hctx_idx,
				       unsigned int numa_node)
{
	return xrdma_init_request(set, rq, hctx_idx, numa_node);
}

#define xrdma_init_request xrdma_init_request_unsigned
#endif

static int xrdma_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			   unsigned int hctx_idx)
{
	struct xrdma_ctrl *ctrl = to_xrdma_ctrl(data);

	hctx->driver_data = &ctrl->queues[hctx_idx + 1];
	return 0;
}

static int xrdma_init_admin_hctx(struct blk_mq_hw_ctx *hctx, void *data,
				 unsigned int hctx_idx)
{
	struct xrdma_ctrl *ctrl = to_xrdma_ctrl(data);

	hctx->driver_data = &ctrl->queues[0];
	return 0;
}

/*
 * nvmf_map_queues() leaves the poll map alone when there is no poll queue,
 * and blk-mq has cleared its CPU table: a reconnect granted too few queues
 * for poll queues would send every polled bio to hctx 0 as a poll hctx.
 */
static void xrdma_map_queues(struct blk_mq_tag_set *set)
{
	struct xrdma_ctrl *ctrl = to_xrdma_ctrl(set->driver_data);

	if (set->nr_maps > HCTX_TYPE_POLL && !ctrl->io_queues[HCTX_TYPE_POLL])
		set->map[HCTX_TYPE_POLL].nr_queues = 0;
	nvmf_map_queues(set, &ctrl->ctrl, ctrl->io_queues);
}

const struct blk_mq_ops xrdma_mq_ops = {
	.queue_rq	= xrdma_queue_rq,
	.queue_rqs	= xrdma_mq_queue_rqs,
	.commit_rqs	= xrdma_commit_rqs,
	.complete	= xrdma_complete_rq,
	.init_request	= xrdma_init_request,
	.init_hctx	= xrdma_init_hctx,
	.timeout	= xrdma_timeout,
	.map_queues	= xrdma_map_queues,
	.poll		= xrdma_poll,
};

const struct blk_mq_ops xrdma_admin_mq_ops = {
	.queue_rq	= xrdma_queue_rq,
	.commit_rqs	= xrdma_commit_rqs,
	.complete	= xrdma_complete_rq,
	.init_request	= xrdma_init_request,
	.init_hctx	= xrdma_init_admin_hctx,
	.timeout	= xrdma_timeout,
};
