// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: the I/O queue set of a reconnect.  A reconnect may be granted
 * another number of I/O queues than the tag set has hardware queues:
 * the namespaces are frozen and drained, the tag set is resized, and the
 * queues it gained are started.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>

#include "xrdma.h"

/*
 * One slice of the wait for the frozen namespace queues to drain: true
 * once every one of them is empty.  Since 7.3 core's own wait always runs
 * the controller's whole I/O timeout, so the queues are waited for here,
 * the slice shared among them in turn; before, core waits a slice itself.
 */
static bool xrdma_ns_drained(struct nvme_ctrl *nctrl, long slice)
{
#ifdef XRDMA_HAVE_CTRL_TIMEOUTS
	struct nvme_ns *ns;
	int idx;

	idx = srcu_read_lock(&nctrl->srcu);
	list_for_each_entry_srcu(ns, &nctrl->namespaces, list,
				 srcu_read_lock_held(&nctrl->srcu)) {
		slice = blk_mq_freeze_queue_wait_timeout(ns->queue, slice);
		if (slice <= 0)
			break;
	}
	srcu_read_unlock(&nctrl->srcu, idx);
	return slice > 0;
#else
	return nvme_wait_freeze_timeout(nctrl, slice) > 0;
#endif
}

/*
 * Wait for the request queues to drain: a command sent meanwhile is
 * answered or times out within the I/O timeout of being sent, a little
 * later than the wait began, and blk-mq's timer may fire up to a second
 * late.  A timeout in the setup ends the wait at once (the setup has
 * failed: what was ended comes back for the next attempt, and what waits
 * for a stopped queue would never drain on this one), so the bound is the
 * I/O timeout and a slack, and only what never reaches the wire waits it
 * out.  Since 7.3 the I/O timeout is the controller's own, the same the
 * namespaces' commands have: without the slack the wait would end with
 * theirs, and a reconnect would give up on a command that was about to
 * time out and end the attempt anyway.
 */
static bool xrdma_wait_drained(struct xrdma_ctrl *ctrl)
{
	unsigned long deadline = jiffies + xrdma_io_timeout(&ctrl->ctrl) +
				 msecs_to_jiffies(XRDMA_DRAIN_SLACK_MS);

	do {
		if (xrdma_ns_drained(&ctrl->ctrl, HZ / 10))
			return true;
	} while (!xrdma_setup_failed(ctrl) && time_before(jiffies, deadline));
	return false;
}

/*
 * Resize the I/O tag set to the I/O queues.  blk-mq says nothing when it
 * cannot allocate for more hardware queues: it keeps the old count, and a
 * queue past it has no hctx to carry its Connect.  Such an attempt fails,
 * as one short of memory; the next one tries again.
 */
static int xrdma_update_nr_hw_queues(struct xrdma_ctrl *ctrl)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	struct blk_mq_tag_set *set = nctrl->tagset;
	u32 nr = nctrl->queue_count - 1;

	/* fault/resize_short: the growth falls back as blk-mq's would */
	if (nr <= set->nr_hw_queues ||
	    !xrdma_fault(&ctrl->queues[1], XRDMA_FAULT_RESIZE_SHORT))
		blk_mq_update_nr_hw_queues(set, nr);
	if (set->nr_hw_queues == nr)
		return 0;
	dev_warn(nctrl->device,
		 "cannot resize the I/O tag set to %u hardware queues, it kept %u (short of memory): retrying the connection\n",
		 nr, set->nr_hw_queues);
	return -ENOMEM;
}

/**
 * xrdma_resize_io_queues() - fit the I/O tag set to a reconnect's queues
 * @ctrl: the controller, in a reconnect
 * @started: the I/O queues started already (those the tag set had)
 *
 * A reconnect may be granted another queue count than the tag set has:
 * drain the request queues, resize the tag set, start the new queues.
 * The resize reallocates the tag maps the end work walks, so it runs
 * under tagset_lock and not at all once the end work ended the attempt.
 * The queues are frozen and drained by then: an end work waiting on the
 * lock waits for no command.  tagset_lock is a leaf: teardown_lock would
 * order a frozen queue before rdma_cm's handler_mutex (design note, setup
 * step 3).
 *
 * Since 7.3 the resize also takes the tag set's update_nr_hwq_lock for
 * writing, which add_disk() and del_gendisk() hold for reading.  Neither
 * waits for this reconnect there: add_disk() does no I/O under it (the
 * partition scan comes after), and a namespace is on the controller's
 * list until after its del_gendisk(), whose wait for the queue to drain
 * is the wait that was bounded here already.  A queue that cannot drain
 * (I/O that waits for the controller to be live) fails the attempt in
 * xrdma_wait_drained(), before the lock is asked for.
 *
 * Return: 0 once the queues past @started are started too, else the
 * attempt's error.
 */
int xrdma_resize_io_queues(struct xrdma_ctrl *ctrl, int started)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	int ret = 0;

	nvme_start_freeze(nctrl);
	xrdma_unquiesce_io_queues(nctrl);
	if (!xrdma_wait_drained(ctrl)) {
		nvme_unfreeze(nctrl);
		if (xrdma_setup_failed(ctrl))
			return -ECONNRESET;
		dev_warn(nctrl->device,
			 "I/O did not drain for the queue resize, retrying the connection\n");
		return -ENODEV;
	}
	mutex_lock(&ctrl->tagset_lock);
	if (xrdma_setup_failed(ctrl)) {
		ret = -ECONNRESET;
	} else {
		xrdma_delay(XRDMA_DELAY_RESIZE);
		ret = xrdma_update_nr_hw_queues(ctrl);
	}
	mutex_unlock(&ctrl->tagset_lock);
	nvme_unfreeze(nctrl);
	if (ret)
		return ret;
	return xrdma_start_io_queues(ctrl, started + 1, nctrl->queue_count);
}
