// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: deleting a controller in bounded time when its target stopped
 * answering: the commands it holds, and a shutdown it ignores.
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

/**
 * xrdma_delete_work() - end the commands a deletion would wait for in vain
 * @work: ctrl->delete_work, queued when a deletion starts
 *
 * A deletion waits for the commands in flight.  One that a target that
 * stopped answering holds would end only by its timeout (30 s for I/O,
 * per command): once a command is older than the grace, stop the queues
 * and end them all, as multipath would fail them over anyway.  Looks
 * again every grace while the deletion goes on.
 */
void xrdma_delete_work(struct work_struct *work)
{
	struct xrdma_ctrl *ctrl = container_of(to_delayed_work(work),
					       struct xrdma_ctrl, delete_work);
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	unsigned long grace = msecs_to_jiffies(XRDMA_DELETE_GRACE_MS);

	if (!xrdma_ctrl_has_stale(ctrl, grace)) {
		queue_delayed_work(nvme_wq, &ctrl->delete_work, grace);
		return;
	}
	dev_warn(nctrl->device,
		 "deleting: commands outstanding for over %u ms, ending them\n",
		 XRDMA_DELETE_GRACE_MS);
	mutex_lock(&ctrl->teardown_lock);
	xrdma_queues_end_all(ctrl);
	mutex_unlock(&ctrl->teardown_lock);
}

/**
 * xrdma_shutdown_work() - end a deletion's shutdown the target ignores
 * @work: ctrl->shutdown_work, queued for the time the shutdown may take
 *
 * Each property access would wait for the admin timeout (60 s).  The
 * admin tag set lives until the deletion has cancelled this work.  The
 * other controllers of the target are told, so that their deletions do
 * not wait for a shutdown in vain too (xrdma_ctrls_note_silent()).
 */
void xrdma_shutdown_work(struct work_struct *work)
{
	struct xrdma_ctrl *ctrl = container_of(to_delayed_work(work),
					       struct xrdma_ctrl, shutdown_work);

	dev_warn(ctrl->ctrl.device,
		 "deleting: no shutdown within %u ms, ending it\n",
		 XRDMA_SHUTDOWN_MS);
	xrdma_ctrls_note_silent(ctrl);
	xrdma_queue_stop(&ctrl->queues[0]);
	nvme_cancel_admin_tagset(&ctrl->ctrl);
}
