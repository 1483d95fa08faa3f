// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: deleting a controller in bounded time when its target stopped
 * answering: the commands it holds, and a shutdown it ignores.
 *
 * A target is silent when nothing at all comes back from it, not when one
 * command is old: a busy but live target keeps its commands, the
 * writeback of the namespaces going away and its shutdown.
 * Every queue notes when it last accepted a response (rx_at); a deletion
 * that finds a command older than the grace and no response since the
 * grace began asks the target with a Keep Alive before it gives up.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "xrdma.h"

/* What xrdma_ctrl_has_stale() looks for, and whether it found one. */
struct xrdma_stale_search {
	unsigned long	started_before;
	bool		found;
};

static bool xrdma_rq_stale(struct request *rq, void *data)
{
	struct xrdma_stale_search *search = data;

	if (blk_mq_rq_state(rq) == MQ_RQ_IN_FLIGHT &&
	    time_before_eq(rq->deadline - rq->timeout,
			   search->started_before))
		search->found = true;
	return !search->found;
}

/* Whether a command of either tag set has been out for @age jiffies. */
static bool xrdma_ctrl_has_stale(struct xrdma_ctrl *ctrl, unsigned long age)
{
	struct xrdma_stale_search search = { .started_before = jiffies - age };

	if (ctrl->ctrl.tagset)
		blk_mq_tagset_busy_iter(ctrl->ctrl.tagset, xrdma_rq_stale,
					&search);
	if (!search.found && ctrl->ctrl.admin_tagset)
		blk_mq_tagset_busy_iter(ctrl->ctrl.admin_tagset,
					xrdma_rq_stale, &search);
	return search.found;
}

/* Whether any queue of @ctrl accepted a response after @since. */
static bool xrdma_ctrl_heard_after(struct xrdma_ctrl *ctrl,
				   unsigned long since)
{
	u32 qid;

	/* every slot: they live as long as the controller */
	for (qid = 0; qid < ctrl->nr_queue_slots; qid++)
		if (time_after(READ_ONCE(ctrl->queues[qid].rx_at), since))
			return true;
	return false;
}

static enum rq_end_io_ret xrdma_probe_done(struct request *rq,
					   blk_status_t status,
					   const struct io_comp_batch *iob)
{
	return RQ_END_IO_FREE;
}

#ifndef XRDMA_HAVE_END_IO_BATCH
/* before 7.3 ->end_io was not given the completion batch */
static enum rq_end_io_ret xrdma_probe_done_unbatched(struct request *rq,
						     blk_status_t status)
{
	return xrdma_probe_done(rq, status, NULL);
}

#define xrdma_probe_done xrdma_probe_done_unbatched
#endif

/*
 * Ask the target for a sign of life: a Keep Alive on the admin queue (core
 * stopped its own before the deletion), with the tag reserved for it.  Its
 * response counts in rx_at like any other; a teardown cancels it.
 */
static bool xrdma_probe(struct xrdma_ctrl *ctrl)
{
	struct nvme_command c = { .common.opcode = nvme_admin_keep_alive };
	struct request *rq;

	if (!test_bit(XRDMA_Q_LIVE, &ctrl->queues[0].flags))
		return false;
	rq = blk_mq_alloc_request(ctrl->ctrl.admin_q, nvme_req_op(&c),
				  BLK_MQ_REQ_RESERVED | BLK_MQ_REQ_NOWAIT);
	if (IS_ERR(rq))
		return false;
	nvme_init_request(rq, &c);
	rq->end_io = xrdma_probe_done;
	blk_execute_rq_nowait(rq, false);
	return true;
}

/**
 * xrdma_delete_work() - end the commands a deletion would wait for in vain
 * @work: ctrl->delete_work, queued when a deletion starts
 *
 * A deletion waits for the commands in flight.  One that a target that
 * stopped answering holds would end only by its timeout (30 s for I/O,
 * per command): once a command is older than the grace, no response came
 * during the grace, and the Keep Alive sent then gets none within
 * XRDMA_PROBE_MS either, the end work stops the queues and ends them all,
 * as multipath would fail them over anyway.  Looks again every grace while
 * the deletion goes on.
 */
void xrdma_delete_work(struct work_struct *work)
{
	struct xrdma_ctrl *ctrl = container_of(to_delayed_work(work),
					       struct xrdma_ctrl, delete_work);
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	unsigned long grace = msecs_to_jiffies(XRDMA_DELETE_GRACE_MS);
	unsigned long window = msecs_to_jiffies(XRDMA_PROBE_MS);
	unsigned long probe_at = ctrl->probe_at;
	unsigned long again = grace;

	ctrl->probe_at = 0;
	if (!xrdma_ctrl_has_stale(ctrl, grace))
		goto out_again;
	if (probe_at) {
		/* slow, not silent: the old command may stay */
		if (xrdma_ctrl_heard_after(ctrl, probe_at - 1))
			goto out_again;
		if (time_before(jiffies, probe_at + window)) {
			ctrl->probe_at = probe_at;
			again = probe_at + window - jiffies;
			goto out_again;
		}
	} else {
		if (xrdma_ctrl_heard_after(ctrl, jiffies - grace))
			goto out_again;
		if (xrdma_probe(ctrl)) {
			ctrl->probe_at = jiffies ?: 1;
			again = window;
			goto out_again;
		}
	}
	dev_warn(nctrl->device,
		 "deleting: commands outstanding for over %u ms and the target silent, ending them\n",
		 XRDMA_DELETE_GRACE_MS);
	xrdma_ctrl_end(ctrl, XRDMA_END_DELETE);
	return;

out_again:
	queue_delayed_work(nvme_wq, &ctrl->delete_work, again);
}

/**
 * xrdma_shutdown_work() - have the end work end a deletion's shutdown
 *	the target ignores
 * @work: ctrl->shutdown_work, queued for the time the shutdown may take
 *
 * Each property access would wait for the admin timeout (60 s).  A
 * target that answered since the shutdown began is slow, not silent: it
 * gets what nvme-core's shutdown_timeout allows, not a shorter bound of
 * ours, which would mark it silent.  The other controllers of the target
 * are told, so that their deletions do not wait for a shutdown in vain
 * too (xrdma_ctrls_note_silent()).
 */
void xrdma_shutdown_work(struct work_struct *work)
{
	struct xrdma_ctrl *ctrl = container_of(to_delayed_work(work),
					       struct xrdma_ctrl, shutdown_work);
	unsigned long bound = msecs_to_jiffies(XRDMA_SHUTDOWN_MS);

	if (time_after(READ_ONCE(ctrl->queues[0].rx_at), jiffies - bound)) {
		queue_delayed_work(nvme_wq, &ctrl->shutdown_work, bound);
		return;
	}

	dev_warn(ctrl->ctrl.device,
		 "deleting: no shutdown within %u ms, ending it\n",
		 XRDMA_SHUTDOWN_MS);
	xrdma_ctrls_note_silent(ctrl);
	xrdma_ctrl_end(ctrl, XRDMA_END_DELETE);
}
