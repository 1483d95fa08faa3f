// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: a queue's QP drained, with a bound: the markers that tell when
 * every work request has completed and its handler run, and what is done
 * when they do not come.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/interrupt.h>
#include <linux/irq_poll.h>

#include "xrdma.h"

static void xrdma_drain_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct xrdma_queue *queue = container_of(wc->wr_cqe,
						 struct xrdma_queue, drain_cqe);

	complete(&queue->drain_done);
	/* the drain may return now: what this poller reaps next comes after */
	if (atomic_dec_and_test(&queue->drain_left))
		xrdma_delay(XRDMA_DELAY_DRAIN_DONE);
}

/*
 * A drain that did not finish leaves the HCA free to run the WRs it still
 * holds, and the teardown is about to unmap and reuse their memory.
 * RESET stops the QP whatever it holds, without completions.  A
 * completion already in the CQ may still be handled: the stop fences the
 * handler running, and one started later finds no tags to match.
 */
static void xrdma_queue_reset_qp(struct xrdma_queue *queue)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };
	int ret;

	ret = ib_modify_qp(queue->qp, &attr, IB_QP_STATE);
	if (ret)
		xrdma_qerr(queue, "cannot reset QP: %d\n", ret);
	else
		xrdma_qerr(queue, "QP reset: none of its work requests runs any more\n");
}

/* A drain's markers: the receive side's, then one on each side. */
#define XRDMA_DRAIN_MARKERS	3

/* Post a drain marker on the send side (@send) or the receive side. */
static int xrdma_drain_post(struct xrdma_queue *queue, bool send)
{
	struct ib_rdma_wr swr = {
		.wr = {
			.wr_cqe = &queue->drain_cqe,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
		},
	};
	struct ib_recv_wr rwr = { .wr_cqe = &queue->drain_cqe };
	int ret;

	ret = send ? ib_post_send(queue->qp, &swr.wr, NULL) :
		     ib_post_recv(queue->qp, &rwr, NULL);
	if (ret)
		xrdma_qerr(queue, "cannot post the %s drain marker: %d\n",
			   send ? "send" : "receive", ret);
	return ret;
}

/* Wait for @n more markers until @deadline: false if they did not come. */
static bool xrdma_drain_wait(struct xrdma_queue *queue, int n,
			     unsigned long deadline)
{
	while (n) {
		long left = deadline - jiffies;

		if (left <= 0) {
			xrdma_qerr(queue, "QP drain timed out after %u ms\n",
				   XRDMA_DRAIN_MS);
			return false;
		}
		if (queue->cq_ctx == IB_POLL_DIRECT) {
			spin_lock(&queue->poll_lock);
			ib_process_cq_direct(queue->cq, queue->cq->cqe);
			spin_unlock(&queue->poll_lock);
			left = min_t(long, left, msecs_to_jiffies(5));
		}
		if (wait_for_completion_timeout(&queue->drain_done, left))
			n--;
	}
	return true;
}

/**
 * xrdma_queue_drain() - flush a queue's QP and handle every completion
 * @queue: the queue, its QP moved to ERR here
 *
 * Flush every posted WR, with a bound, and handle every completion.  The
 * QP is moved to the error state, then:
 *
 * 1. a marker is posted on the receive side.  Once it is reaped, no
 *    response handler runs any more (the CQ is polled in order, by one
 *    poller at a time), but those that ran meanwhile may have posted
 *    behind any marker that was already there: a LOCAL_INV for a command
 *    the target did not invalidate, a receive in the place of theirs.
 * 2. a marker is posted on each side, behind all of those.  Once both
 *    are reaped, every WR of the queue has completed and been handled;
 *    the handlers of flushes post nothing.
 *
 * Both sides at once, as a single step, would let a LOCAL_INV's flush
 * come after the drain, into a request the teardown may have freed.  If
 * the drain fails, the QP is reset and false returned: a handler may
 * still be running, copying into memory the free is about to take, which
 * the caller fences with xrdma_queue_fence_cq().
 *
 * Return: true if every WR completed and was handled.
 */
bool xrdma_queue_drain(struct xrdma_queue *queue)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	unsigned long deadline = jiffies + msecs_to_jiffies(XRDMA_DRAIN_MS);
	int ret;

	queue->drain_cqe.done = xrdma_drain_done;
	init_completion(&queue->drain_done);
	atomic_set(&queue->drain_left, XRDMA_DRAIN_MARKERS);

	ret = ib_modify_qp(queue->qp, &attr, IB_QP_STATE);
	if (ret) {
		xrdma_qerr(queue, "cannot move QP to error: %d\n", ret);
		goto out_reset;
	}
	if (xrdma_drain_post(queue, false))
		goto out_reset;
	if (xrdma_fault(queue, XRDMA_FAULT_DRAIN))
		deadline = jiffies;
	if (!xrdma_drain_wait(queue, 1, deadline))
		goto out_reset;
	if (xrdma_drain_post(queue, true) || xrdma_drain_post(queue, false) ||
	    !xrdma_drain_wait(queue, 2, deadline))
		goto out_reset;
	return true;

out_reset:
	xrdma_queue_reset_qp(queue);
	return false;
}

#ifndef XRDMA_HAVE_CQ_POLLER_FIELDS
#error "struct ib_cq lost its iop/work poller: see xrdma_cq_wait_poller()"
#endif

/*
 * Wait for a run of @cq's poller in progress to end; one queued later
 * still runs.  ib_core has no call for it short of ib_free_cq(), so this
 * reaches into the ib_cq, the one place in xrdma that does: it disables
 * and enables again the irq_poll of an IB_POLL_SOFTIRQ CQ (cq->iop), which
 * waits for a poll under way, and cancels the work of a workqueue CQ
 * (cq->work), which waits for a run under way, as ib_free_cq() does in its
 * first step.  It breaks if ib_core stops keeping that poller in the
 * ib_cq: moves it into a private structure of cq.c, polls IB_POLL_SOFTIRQ
 * CQs by other means than irq_poll (a BH workqueue, say), or shares one
 * poller among several CQs.  The build then stops at the #error above
 * (the cq_poller_fields probe fails); a helper in ib_core that waits out
 * a CQ's handler, as the first half of ib_free_cq(), would replace this.
 */
static void xrdma_cq_wait_poller(struct ib_cq *cq, enum ib_poll_context ctx)
{
	switch (ctx) {
	case IB_POLL_SOFTIRQ:
		irq_poll_disable(&cq->iop);
		irq_poll_enable(&cq->iop);
		break;
	case IB_POLL_WORKQUEUE:
	case IB_POLL_UNBOUND_WORKQUEUE:
		cancel_work_sync(&cq->work);
		break;
	default:
		break;
	}
}

/**
 * xrdma_queue_fence_cq() - wait out a late completion handler
 * @queue: the queue whose drain timed out
 *
 * Wait out a completion handler of the queue that is still running after
 * a drain that did not finish, and keep its poller from running again
 * until it is rescheduled (xrdma_cq_wait_poller()).  A direct CQ is
 * polled under poll_lock, which the caller takes.  A handler started
 * after this finds the tags withdrawn and ends at once; it is waited out
 * by ib_free_cq() before the MRs and the read pool are freed
 * (xrdma_queue_destroy_ib()).
 */
void xrdma_queue_fence_cq(struct xrdma_queue *queue)
{
	xrdma_cq_wait_poller(queue->cq, queue->cq_ctx);
	xrdma_qerr(queue, "completion handlers fenced after the drain timeout\n");
}
