// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: ending requests without their response.  Only two actors stop
 * queues and end commands in bulk, each under the controller's
 * teardown_lock: a teardown (ctrl.c), which nvme-core's state machine runs
 * one at a time, and the end work here.  Everything else that finds the
 * commands will not be answered (a lost connection, the timeout handler, a
 * deletion waiting on a silent target, an unanswered shutdown) only
 * requests the end work, with its reason (xrdma_ctrl_end()).  Every end of
 * a single request, these included, claims it first.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "xrdma.h"
#include <trace/events/nvme_xrdma.h>

/**
 * xrdma_req_claim() - take a request from the wire, to end it without
 *	its response
 * @rq: a started request
 *
 * Only the caller that moves the waiting bits to 0 may end the request
 * (the last arrival of what it waits for, in request.c, is the other way
 * to win).  A cancel, a failed post and a submitter that finds its queue
 * stopped may meet a response on one request; each claims before it
 * completes, so none completes it twice (blk-mq would end, and free, a
 * request twice).  The command id's generation moves on: a late or
 * replayed response for it must not match the next command on the tag.
 *
 * Return: true if the caller won the request and must end it.
 */
bool xrdma_req_claim(struct request *rq)
{
	struct xrdma_request *req = blk_mq_rq_to_pdu(rq);

	if (!atomic_xchg(&req->waiting, 0))
		return false;
	if (!(req->queue->ctrl->ctrl.quirks & NVME_QUIRK_SKIP_CID_GEN))
		nvme_req(rq)->genctr++;
	return true;
}

/**
 * xrdma_requeue_taken() - give a claimed request back to the block layer
 *	while a setup runs, if it may go back
 * @rq: the request, claimed (xrdma_req_claim())
 *
 * A setup that fails takes back what it let through its queues: nvme-core
 * passes I/O to a queue once its fabrics Connect succeeded, before the
 * controller is live.  Ended as aborted, such a command would spend one of
 * its retries per failed attempt, and a few attempts would fail it long
 * before ctrl_loss_tmo; the recovery that started the attempts spent one
 * already, as nvme-rdma's does.  So it goes back to the block layer as it
 * is, unless it is one of core's own commands, one that multipath fails
 * over, or one that must not be retried.  The same holds for one
 * submitted as its queue stopped.
 *
 * Return: true if @rq went back; else the caller ends it.
 */
bool xrdma_requeue_taken(struct request *rq)
{
	struct xrdma_request *req = blk_mq_rq_to_pdu(rq);
	struct xrdma_queue *queue = req->queue;

	if (nvme_ctrl_state(&queue->ctrl->ctrl) != NVME_CTRL_CONNECTING ||
	    blk_rq_is_passthrough(rq) || (rq->cmd_flags & REQ_NVME_MPATH) ||
	    blk_noretry_request(rq))
		return false;
	xrdma_unmap_data(queue, rq);
	xrdma_stat_inc(queue, completed);
	xrdma_stat_inc(queue, requeued);
	nvme_cleanup_cmd(rq);
	blk_mq_requeue_request(rq, true);
	return true;
}

static bool xrdma_cancel_rq(struct request *rq, void *data)
{
	if (!xrdma_req_claim(rq) || xrdma_requeue_taken(rq))
		return true;
	nvme_req(rq)->status = NVME_SC_HOST_ABORTED_CMD;
	nvme_req(rq)->flags |= NVME_REQ_CANCELLED;
	blk_mq_complete_request(rq);
	return true;
}

/**
 * xrdma_cancel_tagset() - end every command of a tag set still on the wire
 * @ctrl: the controller, its teardown_lock held
 * @set: the I/O or admin tag set, its queues stopped
 *
 * Each command is ended once, whoever else tries (xrdma_req_claim()), as
 * "aborted by host", which nvme-core retries or fails over; returns once
 * the completions it started are done.
 */
void xrdma_cancel_tagset(struct xrdma_ctrl *ctrl, struct blk_mq_tag_set *set)
{
	lockdep_assert_held(&ctrl->teardown_lock);
	/* not during a resize, which reallocates the tag maps walked here */
	mutex_lock(&ctrl->tagset_lock);
	blk_mq_tagset_busy_iter(set, xrdma_cancel_rq, NULL);
	blk_mq_tagset_wait_completed_request(set);
	mutex_unlock(&ctrl->tagset_lock);
}

/**
 * xrdma_publish_tagsets() - let the end work walk the tag sets core made
 * @ctrl: the controller, after nvme_alloc_admin_tag_set() or
 *	nvme_alloc_io_tag_set() returned, in the same thread
 *
 * nvme-core sets ctrl->tagset and ctrl->admin_tagset with plain stores at
 * the end of their allocation, and the end work runs beside the setup
 * that allocates them, under none of its locks: a lost admin queue asks
 * for it while the admin tag set is being made.  Reading core's pointers
 * there would be a data race and, on a weakly ordered CPU, could find a
 * set whose initialisation is not visible yet.  Our copies are stored
 * with a release after core's allocation returned and loaded with an
 * acquire, so whoever finds one finds the whole set.  A teardown clears
 * them under teardown_lock, which the end work holds, before the sets go.
 */
void xrdma_publish_tagsets(struct xrdma_ctrl *ctrl)
{
	/* pairs with the acquires of xrdma_queues_end_all() */
	smp_store_release(&ctrl->end_admin_tagset, ctrl->ctrl.admin_tagset);
	/* as above: the set's initialisation before the pointer */
	smp_store_release(&ctrl->end_tagset, ctrl->ctrl.tagset);
}

/* Stop every queue and end every command; the tag sets stay meanwhile. */
static void xrdma_queues_end_all(struct xrdma_ctrl *ctrl)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	struct blk_mq_tag_set *set;
	int qid;

	for (qid = nctrl->queue_count - 1; qid >= 0; qid--)
		xrdma_queue_stop(&ctrl->queues[qid]);
	/* pairs with xrdma_publish_tagsets(): a set found is initialised */
	set = smp_load_acquire(&ctrl->end_tagset);
	if (set)
		xrdma_cancel_tagset(ctrl, set);
	/* the same for the admin tag set */
	set = smp_load_acquire(&ctrl->end_admin_tagset);
	if (set)
		xrdma_cancel_tagset(ctrl, set);
}

/**
 * xrdma_ctrl_end() - request the end of a controller's commands
 * @ctrl: the controller
 * @why: what will not be answered
 *
 * From any context (the timeout handler and completion handlers
 * included): the reason is noted and the end work queued, which does the
 * rest.  A teardown that ends everything first clears the request.
 */
void xrdma_ctrl_end(struct xrdma_ctrl *ctrl, enum xrdma_end_why why)
{
	set_bit(why, &ctrl->end_why);
	queue_work(nvme_reset_wq, &ctrl->end_work);
}

/**
 * xrdma_end_work() - stop the queues and end the commands, as requested
 * @work: ctrl->end_work, queued by xrdma_ctrl_end()
 *
 * A controller that went live meanwhile lost a queue, or had a command
 * time out, during the setup that just succeeded: it recovers instead.
 * Otherwise every queue is stopped and every command ended.  No quiesce:
 * a setup or nvme-core's deletion waits on these very queues; a
 * submission that races the stop finds its queue stopped and ends its own
 * request, after claiming it.  A lost connection also fails the setup
 * under way (xrdma_setup_failed()).
 */
void xrdma_end_work(struct work_struct *work)
{
	struct xrdma_ctrl *ctrl = container_of(work, struct xrdma_ctrl,
					       end_work);
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	enum nvme_ctrl_state state;
	bool abort = false;
	unsigned long why;

	mutex_lock(&ctrl->teardown_lock);
	why = xchg(&ctrl->end_why, 0);
	state = nvme_ctrl_state(nctrl);
	if (state == NVME_CTRL_LIVE) {
		mutex_unlock(&ctrl->teardown_lock);
		if (why & (BIT(XRDMA_END_LOST) | BIT(XRDMA_END_TIMEOUT)))
			xrdma_error_recovery(ctrl);
		return;
	}
	/* each lost queue requests; the attempt is ended and logged once */
	if (state == NVME_CTRL_CONNECTING && (why & BIT(XRDMA_END_LOST)) &&
	    !READ_ONCE(ctrl->setup_aborted)) {
		WRITE_ONCE(ctrl->setup_aborted, true);
		abort = true;
	}
	/* a controller is CONNECTING before it has a command (NEW: none) */
	if (why)
		xrdma_queues_end_all(ctrl);
	mutex_unlock(&ctrl->teardown_lock);
	/* logged once done: a resize under way holds the end's walk up */
	if (abort)
		dev_info(nctrl->device,
			 "connection failed while connecting: attempt ended\n");
}

/**
 * xrdma_timeout() - blk-mq's timeout handler, both tag sets
 * @rq: the request that timed out
 *
 * Nothing is ended here: a live controller recovers, and the end work
 * ends the commands of one that is not (a setup under way then fails).
 *
 * Return: BLK_EH_RESET_TIMER.
 */
enum blk_eh_timer_return xrdma_timeout(struct request *rq)
{
	struct xrdma_request *req = blk_mq_rq_to_pdu(rq);
	struct xrdma_queue *queue = req->queue;
	struct xrdma_ctrl *ctrl = queue->ctrl;
	int waiting = atomic_read(&req->waiting);
	struct xrdma_queue_stats st;

	xrdma_stat_inc(queue, timeouts);
	xrdma_queue_stats_read(queue, &st);
	trace_xrdma_timeout(queue, rq, waiting);
	/* a whole queue may time out at once: one line per command, limited */
	xrdma_qwarn_rl(queue,
		       "command id %#x opcode %#x timed out (waiting for%s%s%s; %lld of %llu commands outstanding), controller %s\n",
		       nvme_cid(rq), req->cmd.common.opcode,
		       waiting & XRDMA_REQ_SEND ? " send" : "",
		       waiting & XRDMA_REQ_RESP ? " response" : "",
		       waiting & XRDMA_REQ_INV ? " invalidate" : "",
		       (long long)(st.submitted - st.completed), st.submitted,
		       nvme_ctrl_state(&ctrl->ctrl) == NVME_CTRL_LIVE ?
		       "live: recovering" : "not live: aborting");

	if (nvme_ctrl_state(&ctrl->ctrl) != NVME_CTRL_LIVE) {
		/*
		 * Connecting, resetting or deleting: nobody else would end
		 * this request.  The end work stops the queues, so the HCA is
		 * done with the buffers, then ends it; a setup under way must
		 * not go LIVE with a stopped queue (xrdma_setup_failed()).
		 */
		WRITE_ONCE(ctrl->setup_timed_out, true);
		xrdma_ctrl_end(ctrl, XRDMA_END_TIMEOUT);
		return BLK_EH_RESET_TIMER;
	}
	/* recovery cancels every request once the queues are drained */
	xrdma_error_recovery(ctrl);
	return BLK_EH_RESET_TIMER;
}
