// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: controller lifecycle.
 *
 *   create -> setup(new) -> LIVE
 *   LIVE -> error recovery -> teardown -> CONNECTING -> reconnect(delay)
 *   LIVE -> reset -> teardown(disable) -> CONNECTING -> setup
 *   any -> delete -> teardown(shut down, remove) -> free
 *
 * Queue setup and teardown follow the order nvme core expects.  There is
 * one way down, xrdma_teardown_ctrl(), from any partial state: a failed
 * setup leaves the controller as a torn-down one.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/sched/mm.h>

#include "xrdma.h"
#include <trace/events/nvme_xrdma.h>

#define XRDMA_SGLS_KEYED	BIT(2)	/* Identify SGLS: keyed data block */
#define XRDMA_SGLS_OFFSET	BIT(20)	/* Identify SGLS: in-capsule offset */

static struct nvme_ctrl_ops xrdma_ctrl_ops;

/* A request PDU with room for the command SGE and @inline_sge data SGEs. */
static size_t xrdma_cmd_size(u8 inline_sge)
{
	struct xrdma_request *req;

	return struct_size(req, sge, 1 + inline_sge);
}

/* The most in-capsule data SGEs any of the I/O queues just set up uses. */
static u8 xrdma_io_inline_sge(struct xrdma_ctrl *ctrl)
{
	u32 most = 0;
	int qid;

	for (qid = 1; qid < ctrl->ctrl.queue_count; qid++)
		most = max(most, ctrl->queues[qid].inline_sge);
	return most;
}

/*
 * The last reference is gone.  Unlisted first: a walker of the list (device
 * removal, port events) holds the list's lock while it looks at a
 * controller's queues, so none is left inside this one once it is
 * unlisted, and none finds the queues freed below.  Nothing here reads the
 * options of a controller that was never listed: fabrics freed them when
 * its creation failed, and the last reference may go long after, with a
 * CM id parked while the port was down.
 */
static void xrdma_free_ctrl(struct nvme_ctrl *nctrl)
{
	struct xrdma_ctrl *ctrl = to_xrdma_ctrl(nctrl);
	bool listed = xrdma_ctrl_list_del(ctrl);

	xrdma_debugfs_ctrl_del(ctrl);
	xrdma_queues_free(ctrl);
	if (listed)
		nvmf_free_options(nctrl->opts);
	mutex_destroy(&ctrl->tagset_lock);
	mutex_destroy(&ctrl->teardown_lock);
	kfree(ctrl);
}

/* --- teardown ------------------------------------------------------------ */

#ifdef XRDMA_HAVE_TAGSET_QUIESCE
/**
 * xrdma_unquiesce_io_queues() - release the I/O queues a teardown stopped
 * @nctrl: the controller
 *
 * nvme_unquiesce_io_queues() for a tag set that may have grown meanwhile.
 * A scan under way when recovery or a reset quiesces the I/O queues goes
 * on adding namespaces, and blk-mq since 6.12 does not quiesce a request
 * queue that joins a quiesced tag set: unquiescing that one too would take
 * its depth below zero (WARN in blk_mq_unquiesce_queue()).  Only the
 * queues that are quiesced are released; the tag list lock keeps the set
 * as blk_mq_unquiesce_tagset() would.
 */
void xrdma_unquiesce_io_queues(struct nvme_ctrl *nctrl)
{
	struct blk_mq_tag_set *set = nctrl->tagset;
	struct request_queue *q;

	if (!set || !test_and_clear_bit(NVME_CTRL_STOPPED, &nctrl->flags))
		return;
	mutex_lock(&set->tag_list_lock);
	list_for_each_entry(q, &set->tag_list, tag_set_list) {
		if (!blk_queue_skip_tagset_quiesce(q) && blk_queue_quiesced(q))
			blk_mq_unquiesce_queue(q);
	}
	mutex_unlock(&set->tag_list_lock);
}
#else
/*
 * 6.1 quiesces the namespaces' request queues one by one and marks each
 * one it quiesced (NVME_NS_STOPPED): it releases only those, so a
 * namespace a scan added meanwhile is safe as it is.
 */
void xrdma_unquiesce_io_queues(struct nvme_ctrl *nctrl)
{
	nvme_unquiesce_io_queues(nctrl);
}
#endif

/* Stop the I/O queues and end what they had outstanding. */
static void xrdma_teardown_io_queues(struct xrdma_ctrl *ctrl, bool remove)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	int qid;

	lockdep_assert_held(&ctrl->teardown_lock);
	nvme_quiesce_io_queues(nctrl);
	nvme_sync_io_queues(nctrl);
	if (nctrl->queue_count > 1 &&
	    xrdma_fault(&ctrl->queues[1], XRDMA_FAULT_QUIESCE_HOLD))
		msleep(MSEC_PER_SEC);
	for (qid = nctrl->queue_count - 1; qid > 0; qid--)
		xrdma_queue_stop(&ctrl->queues[qid]);
	if (nctrl->tagset)
		xrdma_cancel_tagset(ctrl, nctrl->tagset);
	/* core may now retry or fail over what was cancelled */
	xrdma_unquiesce_io_queues(nctrl);
	if (remove && nctrl->tagset) {
		WRITE_ONCE(ctrl->end_tagset, NULL);
		nvme_remove_io_tag_set(nctrl);
		nctrl->tagset = NULL;
	}
}

/* Stop the admin queue and end what it had outstanding. */
static void xrdma_teardown_admin_queue(struct xrdma_ctrl *ctrl, bool remove)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;

	lockdep_assert_held(&ctrl->teardown_lock);
	if (nctrl->admin_tagset) {
		nvme_quiesce_admin_queue(nctrl);
		blk_sync_queue(nctrl->admin_q);
	}
	xrdma_queue_stop(&ctrl->queues[0]);
	if (!nctrl->admin_tagset)
		return;
	xrdma_cancel_tagset(ctrl, nctrl->admin_tagset);
	nvme_unquiesce_admin_queue(nctrl);
	if (remove) {
		WRITE_ONCE(ctrl->end_admin_tagset, NULL);
		nvme_remove_admin_tag_set(nctrl);
		nctrl->admin_tagset = NULL;
	}
}

/*
 * Another controller's shutdown to this target address went unanswered,
 * and this one has had no response on its admin queue since that shutdown
 * was sent: its own would wait XRDMA_SHUTDOWN_MS in vain as well, and a
 * disconnect-all of many controllers would add those waits up.
 */
static bool xrdma_target_known_silent(struct xrdma_ctrl *ctrl)
{
	unsigned long at = READ_ONCE(ctrl->silent_at);
	unsigned long sent = at - msecs_to_jiffies(XRDMA_SHUTDOWN_MS);

	if (!at || time_after(jiffies, at + msecs_to_jiffies(XRDMA_SILENT_MS)) ||
	    time_after(READ_ONCE(ctrl->queues[0].rx_at), sent))
		return false;
	dev_info(ctrl->ctrl.device,
		 "deleting without a shutdown: the target did not answer another controller's shutdown %u ms ago, nor this controller since\n",
		 jiffies_to_msecs(jiffies - at));
	return true;
}

/*
 * The one way down, from any partial state: whatever a failed or complete
 * xrdma_setup_ctrl() built is found from the queue flags and the tag set
 * pointers.  @disable clears CC.EN (with an orderly shutdown, CC.SHN, when
 * the controller goes for good) if the admin queue can still carry it;
 * @remove drops the tag sets.  The queues are released last, once their
 * port can carry the DREQs (xrdma_cm_wait_port(); a removal does not wait).
 * The disable runs without teardown_lock: the end work may have to end its
 * commands (a timeout, an unanswered shutdown).  Having ended everything,
 * the teardown drops what was requested of the end work.
 *
 * Return: true if the release waited for a port that is back now.
 */
static bool xrdma_teardown_ctrl(struct xrdma_ctrl *ctrl, bool disable,
				bool remove)
{
	unsigned int shutdown_tmo = msecs_to_jiffies(XRDMA_SHUTDOWN_MS);
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	bool port_back = false;
	int qid;

	nvme_stop_keep_alive(nctrl);
	flush_work(&nctrl->async_event_work);

	mutex_lock(&ctrl->teardown_lock);
	xrdma_teardown_io_queues(ctrl, remove);
	mutex_unlock(&ctrl->teardown_lock);
	if (disable && test_bit(XRDMA_Q_LIVE, &ctrl->queues[0].flags) &&
	    !(remove && xrdma_target_known_silent(ctrl))) {
		/* a target that stopped answering must not hold a delete */
		if (remove)
			queue_delayed_work(nvme_wq, &ctrl->shutdown_work,
					   shutdown_tmo);
		nvme_disable_ctrl(nctrl, remove);
		if (remove)
			cancel_delayed_work_sync(&ctrl->shutdown_work);
	}
	mutex_lock(&ctrl->teardown_lock);
	xrdma_teardown_admin_queue(ctrl, remove);

	if (!remove)
		port_back = xrdma_cm_wait_port(&ctrl->queues[0]);
	for (qid = nctrl->queue_count - 1; qid >= 0; qid--)
		xrdma_queue_free(&ctrl->queues[qid]);
	WRITE_ONCE(ctrl->end_why, 0);
	mutex_unlock(&ctrl->teardown_lock);
	nvme_auth_stop(nctrl);
	return port_back;
}

/* --- setup --------------------------------------------------------------- */

/**
 * xrdma_start_io_queues() - send the fabrics Connect on I/O queues
 * @ctrl: the controller, in a setup
 * @first: the first queue id
 * @end: one past the last queue id
 *
 * Return: 0, or the first queue's error (the rest are not started).
 */
int xrdma_start_io_queues(struct xrdma_ctrl *ctrl, int first, int end)
{
	int qid, ret = 0;

	for (qid = first; qid < end && !ret; qid++)
		ret = xrdma_queue_start(&ctrl->queues[qid]);
	return ret;
}

/*
 * Admin queue, admin tag set for a new controller, fabrics Connect, CC.EN,
 * then Identify and keep-alive through core.
 */
static int xrdma_configure_admin_queue(struct xrdma_ctrl *ctrl, bool new)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	struct xrdma_device *dev;
	int ret;

	ret = xrdma_queue_alloc(ctrl, 0, NVME_AQ_DEPTH);
	if (ret)
		return ret;
	dev = ctrl->queues[0].dev;
	nctrl->numa_node = ibdev_to_node(dev->ibdev);

	if (new) {
		ret = nvme_alloc_admin_tag_set(nctrl, &ctrl->admin_tag_set,
					       &xrdma_admin_mq_ops,
					       xrdma_cmd_size(0));
		if (ret)
			return ret;
		xrdma_publish_tagsets(ctrl);
	}

	ret = xrdma_queue_start(&ctrl->queues[0]);
	if (!ret)
		ret = nvme_enable_ctrl(nctrl);
	if (ret)
		return ret;

	/* core lowers it to this association's CAP.MQES: start from the ask */
	nctrl->sqsize = nctrl->opts->queue_size - 1;
	/*
	 * What one I/O may span, in the 4 KiB pages the MRs map: the limit
	 * of this controller, not of this association's device, which the
	 * queues were checked against (xrdma_queue_check_fr_pages()).
	 */
	nctrl->max_segments = ctrl->max_fr_pages;
	nctrl->max_hw_sectors = ctrl->max_fr_pages <<
				(ilog2(SZ_4K) - SECTOR_SHIFT);

	/*
	 * 6.12 starts keep-alive here, 6.1 only in nvme_start_ctrl(): there
	 * the I/O queues connect without it.  Their setup is bounded by our
	 * own timeouts, and the target counts the Connects as traffic.
	 */
	return nvme_init_ctrl_finish(nctrl, false);
}

/* What Identify said, checked against what we can do. */
static int xrdma_check_ctrl(struct xrdma_ctrl *ctrl)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;

	if (nctrl->icdoff) {
		dev_err(nctrl->device,
			"target wants in-capsule data at offset %u: not supported\n",
			nctrl->icdoff);
		return -EOPNOTSUPP;
	}
	if (!(nctrl->sgls & XRDMA_SGLS_KEYED)) {
		dev_err(nctrl->device,
			"target does not support keyed SGL data blocks\n");
		return -EOPNOTSUPP;
	}
	ctrl->use_inline = (nctrl->sgls & XRDMA_SGLS_OFFSET) &&
			   xrdma_ctrl_icd_bytes(ctrl);
	/*
	 * An administrative controller has no I/O queues: none to ask for
	 * (Number of Queues is not one of its features) or to connect, and
	 * so no namespace scan.  Where the core knows this it has already
	 * set the count; older cores leave it to us.
	 */
	if (nctrl->cntrltype == NVME_CTRL_ADMIN && nctrl->queue_count > 1) {
		dev_info(nctrl->device,
			 "administrative controller: no I/O queues\n");
		nctrl->queue_count = 1;
	}
	return 0;
}

/*
 * The I/O queue depth: what was asked, within every limit.  The tag set
 * keeps the depth of the controller's creation, and its tags must fit in
 * every later association's rings: a target that now allows fewer is
 * refused until it allows enough again.  One that allows fewer commands
 * than a tag set can work with is refused outright: MAXCMD 1 used to give
 * queues of one entry, and on 6.1 MAXCMD 0 a 0's based size of 0xffff.
 */
static int xrdma_clamp_queue_size(struct xrdma_ctrl *ctrl, bool new)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	size_t asked = nctrl->opts->queue_size;
	u32 depth = nctrl->sqsize + 1;	/* core clamped it to CAP.MQES */

	if (new && asked > depth)
		dev_warn(nctrl->device,
			 "queue_size %zu exceeds the controller's limit (CAP.MQES), using %u\n",
			 asked, depth);
	if (depth > XRDMA_MAX_QUEUE_SIZE) {
		dev_warn(nctrl->device,
			 "queue depth %u exceeds the transport limit, using %u\n",
			 depth, XRDMA_MAX_QUEUE_SIZE);
		depth = XRDMA_MAX_QUEUE_SIZE;
	}
	/* 0 sets no limit: how 6.12's core reads it, and 6.1's does not */
	if (!nctrl->maxcmd) {
		dev_warn(nctrl->device,
			 "target reports MAXCMD 0, no limit: using queue depth %u\n",
			 depth);
		nctrl->maxcmd = depth;
	}
	if (depth > nctrl->maxcmd) {
		dev_warn(nctrl->device,
			 "queue depth %u exceeds MAXCMD, using %u\n",
			 depth, nctrl->maxcmd);
		depth = nctrl->maxcmd;
	}
	if (depth < XRDMA_MIN_QUEUE_DEPTH && nctrl->queue_count > 1) {
		dev_err(nctrl->device,
			"target allows a queue depth of %u (MAXCMD %u, CAP.MQES %llu): an I/O queue needs %u, not connecting with it\n",
			depth, nctrl->maxcmd, NVME_CAP_MQES(nctrl->cap),
			XRDMA_MIN_QUEUE_DEPTH);
		return -EINVAL;
	}
	if (!new && nctrl->tagset && depth < ctrl->tag_set.queue_depth) {
		dev_err(nctrl->device,
			"target now allows a queue depth of %u, the I/O queues need %u: not reconnecting with it\n",
			depth, ctrl->tag_set.queue_depth);
		return -EINVAL;
	}
	nctrl->sqsize = depth - 1;
	return 0;
}

/* I/O queues, the I/O tag set for a new controller, fabrics Connects. */
static int xrdma_configure_io_queues(struct xrdma_ctrl *ctrl, bool new)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	int started, ret;

	ret = xrdma_alloc_io_queues(ctrl);
	if (ret)
		return ret;

	/*
	 * The tag set gets sqsize tags on 6.12, sqsize + 1 on 6.1 (both with
	 * one reserved for Connect): either fits the rings, one entry per
	 * tag, of sqsize + 1 entries, and the target's queue of that size.
	 * xrdma_clamp_queue_size() compares the depth the tag set has.
	 */
	if (new) {
		ctrl->pdu_inline_sge = xrdma_io_inline_sge(ctrl);
		ret = nvme_alloc_io_tag_set(nctrl, &ctrl->tag_set, &xrdma_mq_ops,
					    nctrl->opts->nr_poll_queues ?
					    HCTX_MAX_TYPES : 2,
					    xrdma_cmd_size(ctrl->pdu_inline_sge));
		if (ret)
			return ret;
		xrdma_publish_tagsets(ctrl);
	}

	/* Connect travels on the hctx of its queue: start what exists */
	started = nctrl->queue_count - 1;
	if (!new)
		started = min_t(int, started, ctrl->tag_set.nr_hw_queues);
	xrdma_delay(XRDMA_DELAY_IO_START);
	ret = xrdma_start_io_queues(ctrl, 1, started + 1);
	if (ret || new)
		return ret;
	return xrdma_resize_io_queues(ctrl, started);
}

/*
 * What nvme connect is told about a failed attempt.  The core reports an
 * ended command as -EINTR or as "aborted by host" (which the fabrics code
 * turns into -EIO): if a command timed out, the target stopped answering;
 * any other cancel came from a lost connection (XRDMA_END_LOST).
 * The target's own NVMe statuses pass unchanged.
 */
static int xrdma_setup_status(struct xrdma_ctrl *ctrl, int ret, bool aborted)
{
	if (ret && READ_ONCE(ctrl->setup_timed_out))
		return -ETIMEDOUT;
	if (ret == -EINTR || (ret && aborted))
		return -ECONNRESET;
	return ret;
}

/*
 * The last step of a setup, under teardown_lock.  The end work decides
 * under that lock, from the controller's state, whether a lost connection
 * or a timeout ends the attempt (CONNECTING: it stops every queue) or
 * recovers a live controller: checked and changed here under it too, the
 * attempt either was ended and does not go live, or goes live and the end
 * work, once it gets the lock, recovers it.  Never both: a controller live
 * on queues the end work stopped would wait for a command of its own to
 * notice, and one with no I/O queue, no keep alive and no event to
 * configure sends none.
 */
static int xrdma_go_live(struct xrdma_ctrl *ctrl)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;

	lockdep_assert_held(&ctrl->teardown_lock);
	/*
	 * A connection lost with nothing in flight ended nothing; an I/O
	 * command that timed out after the queues started left its queue
	 * stopped (the end work stops the queues to end it), whether or not
	 * the drain then succeeded: going live, the controller would keep a
	 * dead queue.
	 */
	if (xrdma_setup_failed(ctrl))
		return -ECONNRESET;
	xrdma_delay(XRDMA_DELAY_GO_LIVE);
	if (!nvme_change_ctrl_state(nctrl, NVME_CTRL_LIVE)) {
		/* a delete won the race */
		dev_info(nctrl->device, "not going live: controller state %d\n",
			 nvme_ctrl_state(nctrl));
		return -EINVAL;
	}
	return 0;
}

/*
 * Build the whole association and go LIVE.  A new controller also gets its
 * tag sets; if its setup fails they go again.
 */
static int xrdma_setup_ctrl(struct xrdma_ctrl *ctrl, bool new)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	bool aborted;
	int ret;

	WRITE_ONCE(ctrl->setup_timed_out, false);
	WRITE_ONCE(ctrl->setup_aborted, false);

	ret = xrdma_configure_admin_queue(ctrl, new);
	if (ret)
		goto out_teardown;
	ret = xrdma_check_ctrl(ctrl);
	if (!ret)
		ret = xrdma_clamp_queue_size(ctrl, new);
	if (ret)
		goto out_teardown;
	xrdma_delay(XRDMA_DELAY_IO_SETUP);
	if (nctrl->queue_count > 1) {
		xrdma_fault_io_setup_hold(ctrl);
		ret = xrdma_configure_io_queues(ctrl, new);
		if (ret)
			goto out_teardown;
	}

	mutex_lock(&ctrl->teardown_lock);
	ret = xrdma_go_live(ctrl);
	mutex_unlock(&ctrl->teardown_lock);
	if (ret)
		goto out_teardown;
	trace_xrdma_state(ctrl, XRDMA_EV_CONNECTED);
	nvme_start_ctrl(nctrl);
	return 0;

out_teardown:
	/* an abort the teardown's own stops may queue is no cause */
	aborted = READ_ONCE(ctrl->setup_aborted);
	xrdma_teardown_ctrl(ctrl, false, new);
	/* the connections are gone: no end can be requested after this one */
	cancel_work_sync(&ctrl->end_work);
	return xrdma_setup_status(ctrl, ret, aborted);
}

/* --- recovery, reconnect, reset, delete ---------------------------------- */

/* @now: the path is known to be back, skip reconnect_delay */
static void xrdma_schedule_reconnect(struct xrdma_ctrl *ctrl, int status,
				     bool now)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	unsigned int delay = now ? 0 : nctrl->opts->reconnect_delay;
	int limit = nctrl->opts->max_reconnects;

	if (nvme_ctrl_state(nctrl) != NVME_CTRL_CONNECTING)
		return;

	if (xrdma_system_going_down()) {
		dev_info(nctrl->device,
			 "system going down: deleting the controller instead of reconnecting\n");
		nvme_delete_ctrl(nctrl);
		return;
	}
	if (!nvmf_should_reconnect(nctrl, status)) {
		dev_info(nctrl->device,
			 "giving up after %d reconnect attempts (status %d), deleting controller\n",
			 nctrl->nr_reconnects, status);
		nvme_delete_ctrl(nctrl);
		return;
	}
	if (limit < 0)
		dev_info(nctrl->device,
			 "reconnect attempt %d in %u s (no limit)\n",
			 nctrl->nr_reconnects + 1, delay);
	else
		dev_info(nctrl->device, "reconnect attempt %d of %d in %u s\n",
			 nctrl->nr_reconnects + 1, limit, delay);
	queue_delayed_work(nvme_wq, &ctrl->reconnect_work, delay * HZ);
}

/*
 * A controller that was live meets a target being reconfigured: its
 * subsystem not (yet) on the port, the host not (yet) allowed.  The target
 * rejects the fabrics Connect with "do not retry", which is final for a
 * new controller, not for this one: it keeps trying until ctrl_loss_tmo.
 */
static int xrdma_reconnect_status(struct xrdma_ctrl *ctrl, int status)
{
	u16 sc = status & NVME_SCT_SC_MASK;

	if (status <= 0 || !(status & NVME_STATUS_DNR) ||
	    sc < NVME_SC_CONNECT_FORMAT || sc > NVME_SC_CONNECT_INVALID_HOST)
		return status;
	dev_info(ctrl->ctrl.device,
		 "fabrics Connect rejected with status %#x (do not retry): the target may be reconfiguring, retrying until ctrl_loss_tmo\n",
		 status);
	return status & ~NVME_STATUS_DNR;
}

/* One attempt from CONNECTING; on failure the next one is scheduled. */
static void xrdma_reconnect_ctrl(struct xrdma_ctrl *ctrl,
				 enum xrdma_ctrl_event ev)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	const char *what = ev == XRDMA_EV_RESET ? "reset" : "reconnect";
	unsigned int noio;
	int ret;

	trace_xrdma_state(ctrl, ev);
	/*
	 * The namespaces may hold swap or a file system under writeback:
	 * reclaim must not wait for I/O on the controller being rebuilt.
	 */
	noio = memalloc_noio_save();
	ret = xrdma_setup_ctrl(ctrl, false);
	memalloc_noio_restore(noio);
	if (ret) {
		nctrl->nr_reconnects++;
		xrdma_count(ctrl, failed_reconnects);
		dev_info(nctrl->device, "%s attempt %d failed: %d\n", what,
			 nctrl->nr_reconnects, ret);
		xrdma_schedule_reconnect(ctrl,
					 xrdma_reconnect_status(ctrl, ret), false);
		return;
	}
	if (nctrl->nr_reconnects)
		dev_info(nctrl->device, "%s succeeded after %d failed attempt%s\n",
			 what, nctrl->nr_reconnects,
			 nctrl->nr_reconnects == 1 ? "" : "s");
	/*
	 * The failed attempts and this one; a reset's own first attempt is
	 * counted by core as a reset (7.3's diag/reset_count), not here.
	 */
	xrdma_reconnects_done(nctrl, nctrl->nr_reconnects +
				     (ev == XRDMA_EV_RECONNECT));
}

static void xrdma_reconnect_work(struct work_struct *work)
{
	struct xrdma_ctrl *ctrl = container_of(to_delayed_work(work),
					       struct xrdma_ctrl,
					       reconnect_work);

	/* a deletion owns the controller now (xrdma_stop_ctrl()) */
	if (nvme_ctrl_state(&ctrl->ctrl) != NVME_CTRL_CONNECTING)
		return;
	xrdma_reconnect_ctrl(ctrl, XRDMA_EV_RECONNECT);
}

/* Started by xrdma_error_recovery(), with the controller RESETTING. */
static void xrdma_err_work(struct work_struct *work)
{
	struct xrdma_ctrl *ctrl = container_of(work, struct xrdma_ctrl,
					       err_work);
	bool port_back;

	xrdma_count(ctrl, recoveries);
	trace_xrdma_state(ctrl, XRDMA_EV_ERROR_RECOVERY);
	dev_warn(ctrl->ctrl.device, "starting error recovery (#%d)\n",
		 atomic_read(&ctrl->counters.recoveries));

	port_back = xrdma_teardown_ctrl(ctrl, false, false);
	/* a delete that came in meanwhile owns the controller now */
	if (nvme_change_ctrl_state(&ctrl->ctrl, NVME_CTRL_CONNECTING))
		xrdma_schedule_reconnect(ctrl, 0, port_back);
}

static void xrdma_reset_work(struct work_struct *work)
{
	struct xrdma_ctrl *ctrl = container_of(work, struct xrdma_ctrl,
					       ctrl.reset_work);

	nvme_stop_ctrl(&ctrl->ctrl);
	xrdma_teardown_ctrl(ctrl, true, false);
	if (nvme_change_ctrl_state(&ctrl->ctrl, NVME_CTRL_CONNECTING))
		xrdma_reconnect_ctrl(ctrl, XRDMA_EV_RESET);
}

/* core: no more recovery or reconnect work may run after this */
static void xrdma_stop_ctrl(struct nvme_ctrl *nctrl)
{
	struct xrdma_ctrl *ctrl = to_xrdma_ctrl(nctrl);
	enum nvme_ctrl_state state = nvme_ctrl_state(nctrl);

	/* recovery may still schedule a reconnect: let it finish first */
	flush_work(&ctrl->err_work);
	/*
	 * and a port-up event that took it off its timer, which would queue
	 * it again past the cancel below
	 */
	xrdma_ctrl_list_barrier();
	cancel_delayed_work_sync(&ctrl->reconnect_work);
	cancel_work_sync(&ctrl->end_work);
	/* core now removes the namespaces, which waits for their I/O */
	if (state == NVME_CTRL_DELETING || state == NVME_CTRL_DELETING_NOIO)
		queue_delayed_work(nvme_wq, &ctrl->delete_work,
				   msecs_to_jiffies(XRDMA_DELETE_GRACE_MS));
}

/* core: namespaces are gone; shut the controller down for good */
static void xrdma_delete_ctrl(struct nvme_ctrl *nctrl)
{
	struct xrdma_ctrl *ctrl = to_xrdma_ctrl(nctrl);

	trace_xrdma_state(ctrl, XRDMA_EV_DELETE);
	cancel_delayed_work_sync(&ctrl->delete_work);
	xrdma_teardown_ctrl(ctrl, true, true);
	/* what delete_work or a timeout requested is done, or moot */
	cancel_work_sync(&ctrl->end_work);
	xrdma_ctrl_down_deleted(ctrl);
}

#ifdef XRDMA_HAVE_CTRL_VIRT_BOUNDARY
/*
 * An FRWR page list maps whole pages of the MR's page size, and a buffer
 * whose segments leave a gap inside such a page cannot be mapped at all:
 * the block layer must split I/O at that page boundary, admin commands
 * included (their buffers go through the same MRs).
 */
static unsigned long xrdma_get_virt_boundary(struct nvme_ctrl *nctrl,
					     bool is_admin)
{
	return SZ_4K - 1;
}
#endif

static struct nvme_ctrl_ops xrdma_ctrl_ops = {
	.name			= "xrdma",
	.module			= THIS_MODULE,
	.flags			= NVME_F_FABRICS,
	.dev_attr_groups	= xrdma_dev_attr_groups,
	.reg_read32		= nvmf_reg_read32,
	.reg_read64		= nvmf_reg_read64,
	.reg_write32		= nvmf_reg_write32,
	.free_ctrl		= xrdma_free_ctrl,
	.submit_async_event	= xrdma_submit_async_event,
	.subsystem_reset	= nvmf_subsystem_reset,
	.delete_ctrl		= xrdma_delete_ctrl,
	.stop_ctrl		= xrdma_stop_ctrl,
	.get_address		= nvmf_get_address,
#ifdef XRDMA_HAVE_CTRL_VIRT_BOUNDARY
	/* 7.3: core asks every transport; 6.12 set the 4 KiB boundary itself */
	.get_virt_boundary	= xrdma_get_virt_boundary,
#endif
};

/* --- creation ------------------------------------------------------------ */

/* "traddr"/"host_traddr" are numeric IPv4 or IPv6 (with %scope). */
static int xrdma_parse_sockaddr(const char *what, const char *addr,
				const char *port, union xrdma_sockaddr *sa)
{
	struct sockaddr_storage ss;
	int ret = inet_pton_with_scope(&init_net, AF_UNSPEC, addr, port, &ss);

	if (ret) {
		pr_err("invalid %s \"%s\"%s%s: expected a numeric IPv4 or IPv6 address\n",
		       what, addr, port ? " port " : "", port ? port : "");
		return ret;
	}
	/* AF_INET or AF_INET6: both fit */
	memcpy(sa, &ss, sizeof(*sa));
	return 0;
}

static int xrdma_parse_addrs(struct xrdma_ctrl *ctrl,
			     struct nvmf_ctrl_options *opts)
{
	int ret;

	/* nvme-cli fills in a port only for "rdma" and "tcp" */
	if (!(opts->mask & NVMF_OPT_TRSVCID)) {
		opts->trsvcid = kasprintf(GFP_KERNEL, "%d", NVME_RDMA_IP_PORT);
		if (!opts->trsvcid)
			return -ENOMEM;
		opts->mask |= NVMF_OPT_TRSVCID;
	}

	ret = xrdma_parse_sockaddr("traddr", opts->traddr, opts->trsvcid,
				   &ctrl->addr);
	if (!ret && (opts->mask & NVMF_OPT_HOST_TRADDR))
		ret = xrdma_parse_sockaddr("host_traddr", opts->host_traddr,
					   NULL, &ctrl->src_addr);
	return ret;
}

static struct xrdma_ctrl *xrdma_alloc_ctrl(struct nvmf_ctrl_options *opts)
{
	struct xrdma_ctrl *ctrl;
	int ret;

	ctrl = kzalloc_obj(*ctrl, GFP_KERNEL);
	if (!ctrl)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&ctrl->entry);
	ctrl->pdu_inline_sge = XRDMA_MAX_INLINE_SGE;
	ctrl->ctrl.opts = opts;

	ret = xrdma_parse_addrs(ctrl, opts);
	if (ret)
		goto out_free_ctrl;

	if (!opts->duplicate_connect && xrdma_ctrl_is_duplicate(opts)) {
		pr_err("already connected to %s at %s:%s (use duplicate_connect to add another)\n",
		       opts->subsysnqn, opts->traddr, opts->trsvcid);
		ret = -EALREADY;
		goto out_free_ctrl;
	}

	INIT_DELAYED_WORK(&ctrl->reconnect_work, xrdma_reconnect_work);
	INIT_WORK(&ctrl->err_work, xrdma_err_work);
	INIT_WORK(&ctrl->end_work, xrdma_end_work);
	INIT_DELAYED_WORK(&ctrl->delete_work, xrdma_delete_work);
	INIT_DELAYED_WORK(&ctrl->shutdown_work, xrdma_shutdown_work);
	mutex_init(&ctrl->teardown_lock);
	mutex_init(&ctrl->tagset_lock);
	INIT_WORK(&ctrl->ctrl.reset_work, xrdma_reset_work);

	/* an upper bound until the target says how many it grants */
	ctrl->ctrl.queue_count = nvmf_nr_io_queues(opts) + 1;
	ctrl->ctrl.sqsize = opts->queue_size - 1;
	ctrl->ctrl.kato = opts->kato;

	ret = xrdma_queues_alloc(ctrl);
	if (ret)
		goto out_destroy_lock;
	return ctrl;

out_destroy_lock:
	mutex_destroy(&ctrl->tagset_lock);
	mutex_destroy(&ctrl->teardown_lock);
out_free_ctrl:
	kfree(ctrl);
	return ERR_PTR(ret);
}

static struct nvme_ctrl *xrdma_create_ctrl(struct device *dev,
					   struct nvmf_ctrl_options *opts)
{
	struct xrdma_ctrl *ctrl;
	int ret;

	ctrl = xrdma_alloc_ctrl(opts);
	if (IS_ERR(ctrl))
		return ERR_CAST(ctrl);

	/*
	 * A failed nvme_init_ctrl() leaves the controller ours to free, on
	 * 6.1 as on 6.12: 6.1's also registers the device, but on failure
	 * drops only the reference it took itself, so ->free_ctrl does not
	 * run (the device's own reference is never released).
	 */
	ret = nvme_init_ctrl(&ctrl->ctrl, dev, &xrdma_ctrl_ops, 0);
	if (ret) {
		xrdma_queues_free(ctrl);
		mutex_destroy(&ctrl->tagset_lock);
		mutex_destroy(&ctrl->teardown_lock);
		kfree(ctrl);
		return ERR_PTR(ret);
	}
	/* from here on the last nvme_put_ctrl() frees ctrl */

	ret = nvme_add_ctrl(&ctrl->ctrl);
	if (ret)
		goto out_put_ctrl;

	if (!nvme_change_ctrl_state(&ctrl->ctrl, NVME_CTRL_CONNECTING)) {
		ret = -EINVAL;
		goto out_uninit_ctrl;
	}
	xrdma_debugfs_ctrl_add(ctrl);

	ret = xrdma_setup_ctrl(ctrl, true);
	if (ret) {
		dev_err(ctrl->ctrl.device,
			"cannot connect to %s at %pISpcs: %d\n",
			opts->subsysnqn, &ctrl->addr.sa, ret);
		goto out_uninit_ctrl;
	}

	dev_info(ctrl->ctrl.device,
		 "new ctrl: NQN \"%s\", addr %pISpcs, hostnqn: %s, via %s\n",
		 nvmf_ctrl_subsysnqn(&ctrl->ctrl), &ctrl->addr.sa,
		 opts->host->nqn, xrdma_transport.name);
	xrdma_ctrl_list_add(ctrl);
	return &ctrl->ctrl;

out_uninit_ctrl:
	nvme_uninit_ctrl(&ctrl->ctrl);
out_put_ctrl:
	nvme_put_ctrl(&ctrl->ctrl);
	/* a positive NVMe status means nothing to the fabrics write() */
	return ERR_PTR(ret > 0 ? -EIO : ret);
}

/* Options beyond the generic set, as for any RDMA fabrics host. */
#define XRDMA_OPTS	(NVMF_OPT_TRSVCID | NVMF_OPT_HOST_TRADDR | \
			 NVMF_OPT_HOST_IFACE | \
			 NVMF_OPT_NR_WRITE_QUEUES | NVMF_OPT_NR_POLL_QUEUES | \
			 NVMF_OPT_RECONNECT_DELAY | NVMF_OPT_CTRL_LOSS_TMO | \
			 NVMF_OPT_TOS)

/* .name is set at load time: see xrdma_set_transport_name() */
struct nvmf_transport_ops xrdma_transport = {
	.module		= THIS_MODULE,
	.create_ctrl	= xrdma_create_ctrl,
	.required_opts	= NVMF_OPT_TRADDR,
	.allowed_opts	= XRDMA_OPTS,
};

/**
 * xrdma_set_transport_name() - choose the name we register and report
 * @name: fabrics transport name (sysfs "transport" shows it too)
 */
void xrdma_set_transport_name(const char *name)
{
	xrdma_transport.name = name;
	xrdma_ctrl_ops.name = name;
}
