// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: the list of fully created controllers, and what reaches all of
 * them at once: an RDMA device going away, a port going down or up, a
 * target that left a shutdown unanswered, the system going down.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include <linux/reboot.h>
#include <linux/wait.h>

#include "xrdma.h"

/* Fully created controllers; also covers each one's entry. */
static LIST_HEAD(xrdma_ctrl_list);
static DEFINE_MUTEX(xrdma_ctrl_mutex);

/* A reboot, halt or power-off has begun: no controller reconnects. */
static bool xrdma_going_down;
/* Deletions the going down started and waits for (@down_delete set). */
static atomic_t xrdma_down_pending = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(xrdma_down_wait);

/**
 * xrdma_ctrl_list_add() - list a controller that has been created
 * @ctrl: the controller, live
 */
void xrdma_ctrl_list_add(struct xrdma_ctrl *ctrl)
{
	mutex_lock(&xrdma_ctrl_mutex);
	list_add_tail(&ctrl->entry, &xrdma_ctrl_list);
	mutex_unlock(&xrdma_ctrl_mutex);
}

/**
 * xrdma_ctrl_list_del() - unlink a controller that is being freed
 * @ctrl: the controller
 *
 * Return: true if it was listed, that is, fully created.
 */
bool xrdma_ctrl_list_del(struct xrdma_ctrl *ctrl)
{
	bool listed;

	mutex_lock(&xrdma_ctrl_mutex);
	listed = !list_empty(&ctrl->entry);
	list_del_init(&ctrl->entry);
	mutex_unlock(&xrdma_ctrl_mutex);
	return listed;
}

/**
 * xrdma_ctrl_list_barrier() - wait for the walks of the list under way
 *
 * A walk (xrdma_port_event()) may act on a controller it found in a state
 * that has changed since: once this returns, every walk that began before
 * the change is over, and the next ones see it.
 */
void xrdma_ctrl_list_barrier(void)
{
	mutex_lock(&xrdma_ctrl_mutex);
	mutex_unlock(&xrdma_ctrl_mutex);
}

/**
 * xrdma_ctrl_is_duplicate() - whether a listed controller reaches @opts
 * @opts: the options of a controller being created
 *
 * Return: true if one already connects to what @opts names.
 */
bool xrdma_ctrl_is_duplicate(struct nvmf_ctrl_options *opts)
{
	struct xrdma_ctrl *ctrl;
	bool found = false;

	mutex_lock(&xrdma_ctrl_mutex);
	list_for_each_entry(ctrl, &xrdma_ctrl_list, entry) {
		if (nvmf_ip_options_match(&ctrl->ctrl, opts)) {
			found = true;
			break;
		}
	}
	mutex_unlock(&xrdma_ctrl_mutex);
	return found;
}

/*
 * Whether a queue of @ctrl is on @ibdev (and on @port, unless it is 0).
 * Call with xrdma_ctrl_mutex, which keeps the queue array (a controller
 * is unlisted before it is freed).  Reads each queue's snapshot of its
 * device, not its CM id: waiting for a queue's stop_lock here would hold
 * every connect and free behind a drain, which may take seconds.
 */
static bool xrdma_ctrl_uses_device(struct xrdma_ctrl *ctrl,
				   struct ib_device *ibdev, u32 port)
{
	u32 qid;

	lockdep_assert_held(&xrdma_ctrl_mutex);
	for (qid = 0; qid < ctrl->nr_queue_slots; qid++) {
		struct xrdma_queue *queue = &ctrl->queues[qid];

		if (READ_ONCE(queue->on_ibdev) == ibdev &&
		    (!port || READ_ONCE(queue->on_port) == port))
			return true;
	}
	return false;
}

/**
 * xrdma_delete_ctrls() - delete controllers and wait until they are gone
 * @ibdev: delete the controllers with a queue on this RDMA device, or all
 *	of them if NULL
 */
void xrdma_delete_ctrls(struct ib_device *ibdev)
{
	struct xrdma_ctrl *ctrl;
	bool any = false;

	mutex_lock(&xrdma_ctrl_mutex);
	list_for_each_entry(ctrl, &xrdma_ctrl_list, entry) {
		if (ibdev && !xrdma_ctrl_uses_device(ctrl, ibdev, 0))
			continue;
		if (ibdev)
			dev_info(ctrl->ctrl.device,
				 "RDMA device %s removed, deleting controller\n",
				 dev_name(&ibdev->dev));
		nvme_delete_ctrl(&ctrl->ctrl);
		any = true;
	}
	mutex_unlock(&xrdma_ctrl_mutex);
	if (any)
		flush_workqueue(nvme_delete_wq);
}

/**
 * xrdma_ctrls_note_silent() - a target left a shutdown unanswered
 * @ctrl: the controller whose shutdown got no answer
 *
 * Every other controller to the same address and service id remembers
 * when, for its own deletion (xrdma_target_known_silent()).
 */
void xrdma_ctrls_note_silent(struct xrdma_ctrl *ctrl)
{
	struct nvmf_ctrl_options *opts = ctrl->ctrl.opts;
	unsigned long now = jiffies ?: 1;
	struct xrdma_ctrl *other;

	mutex_lock(&xrdma_ctrl_mutex);
	list_for_each_entry(other, &xrdma_ctrl_list, entry) {
		if (other == ctrl ||
		    strcmp(other->ctrl.opts->traddr, opts->traddr) ||
		    strcmp(other->ctrl.opts->trsvcid, opts->trsvcid))
			continue;
		WRITE_ONCE(other->silent_at, now);
	}
	mutex_unlock(&xrdma_ctrl_mutex);
}

/**
 * xrdma_port_event() - react at once to an RDMA port going down or up
 * @ibdev: the device
 * @port: the port
 * @up: the port is ACTIVE again
 *
 * Down: a live controller with a queue on that port starts error recovery
 * now instead of when a retry-exceeded completion, a command timeout or
 * keep-alive tells it, seconds later.  Up: a controller sleeping out its
 * reconnect_delay tries now.  Which device a reconnect will resolve to is
 * not known before it resolves: every waiting controller tries, and one
 * that fails waits its delay again.
 */
void xrdma_port_event(struct ib_device *ibdev, u32 port, bool up)
{
	struct xrdma_ctrl *ctrl;

	mutex_lock(&xrdma_ctrl_mutex);
	list_for_each_entry(ctrl, &xrdma_ctrl_list, entry) {
		struct nvme_ctrl *nctrl = &ctrl->ctrl;

		if (up) {
			/*
			 * Only a reconnect that is waiting, not running, and
			 * not once a deletion began: xrdma_stop_ctrl() waits
			 * for this walk before it cancels the reconnect.
			 */
			if (nvme_ctrl_state(nctrl) != NVME_CTRL_CONNECTING ||
			    !cancel_delayed_work(&ctrl->reconnect_work))
				continue;
			dev_info(nctrl->device,
				 "%s port %u is active: reconnecting now\n",
				 dev_name(&ibdev->dev), port);
			xrdma_delay(XRDMA_DELAY_PORT_UP);
			queue_delayed_work(nvme_wq, &ctrl->reconnect_work, 0);
			continue;
		}
		if (nvme_ctrl_state(nctrl) != NVME_CTRL_LIVE ||
		    !xrdma_ctrl_uses_device(ctrl, ibdev, port))
			continue;
		dev_warn(nctrl->device, "%s port %u is down: recovering\n",
			 dev_name(&ibdev->dev), port);
		xrdma_error_recovery(ctrl);
	}
	mutex_unlock(&xrdma_ctrl_mutex);
}

/**
 * xrdma_system_going_down() - whether a reboot, halt or power-off began
 *
 * Return: true from then on: a controller that loses its connection is
 * deleted instead of reconnecting (xrdma_ctrls_going_down()).
 */
bool xrdma_system_going_down(void)
{
	return READ_ONCE(xrdma_going_down);
}

/**
 * xrdma_ctrl_down_deleted() - a controller's deletion is done
 * @ctrl: the controller, torn down
 *
 * Wakes the going down if it waits for this deletion; any other deletion
 * passes through.
 */
void xrdma_ctrl_down_deleted(struct xrdma_ctrl *ctrl)
{
	if (atomic_xchg(&ctrl->down_delete, 0) &&
	    atomic_dec_and_test(&xrdma_down_pending))
		wake_up(&xrdma_down_wait);
}

/*
 * The system is going down (the reboot notifiers run from reboot(2),
 * after user space stopped, before the devices are shut down): nothing
 * reconnects from now on, and every controller that is not connected now
 * (resetting, recovering or waiting to reconnect) is deleted rather than
 * left to reconnect while the devices under it go away.  Its requests fail
 * at once.  The deletions are waited for up to XRDMA_DOWN_WAIT_MS; live
 * controllers stay as they are.
 */
static int xrdma_ctrls_going_down(struct notifier_block *nb,
				  unsigned long code, void *unused)
{
	unsigned long start = jiffies;
	struct xrdma_ctrl *ctrl;
	int n = 0;
	long left;

	WRITE_ONCE(xrdma_going_down, true);
	mutex_lock(&xrdma_ctrl_mutex);
	list_for_each_entry(ctrl, &xrdma_ctrl_list, entry) {
		enum nvme_ctrl_state state = nvme_ctrl_state(&ctrl->ctrl);

		if (state != NVME_CTRL_RESETTING &&
		    state != NVME_CTRL_CONNECTING)
			continue;
		atomic_inc(&xrdma_down_pending);
		atomic_set(&ctrl->down_delete, 1);
		if (nvme_delete_ctrl(&ctrl->ctrl)) {
			/* being deleted already: not ours to wait for */
			xrdma_ctrl_down_deleted(ctrl);
			continue;
		}
		dev_info(ctrl->ctrl.device,
			 "system going down: deleting the controller, not connected\n");
		n++;
	}
	mutex_unlock(&xrdma_ctrl_mutex);
	if (!n)
		return NOTIFY_DONE;

	left = wait_event_timeout(xrdma_down_wait,
				  !atomic_read(&xrdma_down_pending),
				  msecs_to_jiffies(XRDMA_DOWN_WAIT_MS));
	if (left)
		pr_info("system going down: %d controller%s not connected deleted in %u ms\n",
			n, str_plural(n), jiffies_to_msecs(jiffies - start));
	else
		pr_warn("system going down: %d of %d controller deletions still running after %u ms, not waiting longer\n",
			atomic_read(&xrdma_down_pending), n, XRDMA_DOWN_WAIT_MS);
	return NOTIFY_DONE;
}

static struct notifier_block xrdma_reboot_nb = {
	.notifier_call	= xrdma_ctrls_going_down,
};

/**
 * xrdma_ctrls_init() - watch for the system going down
 *
 * Return: 0 or a negative errno.
 */
int xrdma_ctrls_init(void)
{
	return register_reboot_notifier(&xrdma_reboot_nb);
}

/**
 * xrdma_ctrls_exit() - stop watching for the system going down
 */
void xrdma_ctrls_exit(void)
{
	unregister_reboot_notifier(&xrdma_reboot_nb);
}
