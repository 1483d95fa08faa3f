// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: controller lifecycle.
 *
 *   create -> setup(new) -> LIVE
 *   LIVE -> error_recovery -> teardown -> CONNECTING -> reconnect(delay)
 *   LIVE -> reset -> shutdown(no CC.SHN) -> CONNECTING -> setup
 *   any -> delete -> shutdown(CC.SHN) -> free
 *
 * Queue setup and teardown follow the order nvme core expects; every
 * failure unwinds exactly what was built, so a failed setup leaves the
 * controller in the same state as a torn-down one.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inet.h>
#include <linux/module.h>

#include "xrdma.h"
#include "trace.h"

#define XRDMA_SGLS_KEYED	BIT(2)	/* Identify SGLS: keyed data block */
#define XRDMA_SGLS_OFFSET	BIT(20)	/* Identify SGLS: in-capsule offset */

static struct nvme_ctrl_ops xrdma_ctrl_ops;

static size_t xrdma_cmd_size(void)
{
	return sizeof(struct xrdma_request) +
	       sizeof(struct scatterlist) * XRDMA_INLINE_SG_CNT;
}

static void xrdma_free_ctrl(struct nvme_ctrl *nctrl)
{
	struct xrdma_ctrl *ctrl = to_xrdma_ctrl(nctrl);

	xrdma_debugfs_ctrl_del(ctrl);
	/* fabrics frees the options of a controller that failed creation */
	if (xrdma_ctrl_list_del(ctrl))
		nvmf_free_options(nctrl->opts);
	kfree(ctrl->queues);
	kfree(ctrl);
}

/* --- taking an association down --------------------------------------- */

/* How far xrdma_ctrl_disconnect() goes beyond dropping the connection. */
enum {
	XRDMA_DOWN_DISABLE	= BIT(0),	/* clear CC.EN first */
	XRDMA_DOWN_SHUTDOWN	= BIT(1),	/* ... with an orderly CC.SHN */
	XRDMA_DOWN_REMOVE	= BIT(2),	/* and drop the tag sets */
};

/*
 * Releasing a connection sends a DREQ, which must not go out through a
 * port that is down (xrdma_cm_port_up()).  Error recovery has already
 * ended every request, so core can fail over meanwhile; only the release
 * waits for the port, at most XRDMA_PORT_WAIT_MS, or until a delete.
 */
static void xrdma_ctrl_wait_port(struct xrdma_ctrl *ctrl)
{
	struct xrdma_queue *queue = &ctrl->queues[0];
	unsigned long start = jiffies;
	unsigned long end = start + msecs_to_jiffies(XRDMA_PORT_WAIT_MS);
	enum nvme_ctrl_state state;
	bool up;

	if (!test_bit(XRDMA_Q_ALLOCATED, &queue->flags) ||
	    xrdma_cm_port_up(queue))
		return;
	dev_info(ctrl->ctrl.device,
		 "%s port %u is down: releasing the connections once it is back (at most %d ms)\n",
		 dev_name(&queue->cm_id->device->dev), queue->cm_id->port_num,
		 XRDMA_PORT_WAIT_MS);
	atomic_inc(&ctrl->port_waits);
	trace_xrdma_state(ctrl, "port_wait");
	do {
		msleep(100);
		up = xrdma_cm_port_up(queue);
		state = nvme_ctrl_state(&ctrl->ctrl);
	} while (!up && time_before(jiffies, end) &&
		 state != NVME_CTRL_DELETING && state != NVME_CTRL_DELETING_NOIO);
	dev_info(ctrl->ctrl.device, "port %s after %u ms\n",
		 up ? "back" : "still down",
		 jiffies_to_msecs(jiffies - start));
}

/*
 * The one way down, from any partial state: whatever a failed or complete
 * xrdma_ctrl_connect() built is found from the queue flags and the tag set
 * pointers.  Order: hold back new commands, say goodbye if the admin queue
 * can still carry it, flush every QP, end what is outstanding, reopen the
 * request queues so core can retry or fail over, release.
 */
static void xrdma_ctrl_disconnect(struct xrdma_ctrl *ctrl, unsigned int how)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	bool admin_live = test_bit(XRDMA_Q_LIVE, &ctrl->queues[0].flags);
	int qid;

	nvme_stop_keep_alive(nctrl);
	flush_work(&nctrl->async_event_work);

	nvme_quiesce_io_queues(nctrl);
	nvme_sync_io_queues(nctrl);
	if (nctrl->admin_tagset) {
		nvme_quiesce_admin_queue(nctrl);
		blk_sync_queue(nctrl->admin_q);
	}

	if ((how & XRDMA_DOWN_DISABLE) && admin_live)
		nvme_disable_ctrl(nctrl, how & XRDMA_DOWN_SHUTDOWN);

	for (qid = nctrl->queue_count - 1; qid >= 0; qid--)
		xrdma_queue_stop(&ctrl->queues[qid]);

	if (nctrl->tagset)
		nvme_cancel_tagset(nctrl);
	if (nctrl->admin_tagset)
		nvme_cancel_admin_tagset(nctrl);
	nvme_unquiesce_io_queues(nctrl);
	if (nctrl->admin_tagset)
		nvme_unquiesce_admin_queue(nctrl);

	if (how & XRDMA_DOWN_REMOVE) {
		if (nctrl->tagset)
			nvme_remove_io_tag_set(nctrl);
		if (nctrl->admin_tagset)
			nvme_remove_admin_tag_set(nctrl);
		nctrl->tagset = NULL;
		nctrl->admin_tagset = NULL;
	}

	if (!(how & XRDMA_DOWN_REMOVE))
		xrdma_ctrl_wait_port(ctrl);
	for (qid = nctrl->queue_count - 1; qid >= 0; qid--)
		xrdma_queue_free(&ctrl->queues[qid]);
	ctrl->dev = NULL;
	nvme_auth_stop(nctrl);
}

/* --- bringing an association up ----------------------------------------- */

/* Connect queues [first, end) with the fabrics Connect command. */
static int xrdma_start_queues(struct xrdma_ctrl *ctrl, int first, int end)
{
	int qid, ret = 0;

	for (qid = first; qid < end && !ret; qid++)
		ret = xrdma_queue_start(&ctrl->queues[qid]);
	return ret;
}

/*
 * Admin queue, admin tag set on the first connect, fabrics Connect,
 * CC.EN, then Identify and keep-alive through core.  No unwinding here:
 * the caller disconnects whatever got built.
 */
static int xrdma_connect_admin(struct xrdma_ctrl *ctrl)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	int ret;

	ret = xrdma_queue_alloc(ctrl, 0, NVME_AQ_DEPTH);
	if (ret)
		return ret;
	ctrl->dev = ctrl->queues[0].dev;
	ctrl->max_fr_pages = ctrl->dev->max_fr_pages;
	nctrl->numa_node = ibdev_to_node(ctrl->dev->ibdev);

	if (!nctrl->admin_tagset) {
		ret = nvme_alloc_admin_tag_set(nctrl, &ctrl->admin_tag_set,
					       &xrdma_admin_mq_ops,
					       xrdma_cmd_size());
		if (ret)
			return ret;
	}

	ret = xrdma_queue_start(&ctrl->queues[0]);
	if (!ret)
		ret = nvme_enable_ctrl(nctrl);
	if (ret)
		return ret;

	/* what one I/O may span; core builds its queue limits from these */
	nctrl->max_segments = ctrl->max_fr_pages;
	nctrl->max_hw_sectors = ctrl->max_fr_pages << (PAGE_SHIFT - SECTOR_SHIFT);

	return nvme_init_ctrl_finish(nctrl, false);
}

/* Ask the target for queues and connect as many RC QPs as it grants. */
static int xrdma_alloc_io_queues(struct xrdma_ctrl *ctrl)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	unsigned int wanted = nvmf_nr_io_queues(nctrl->opts);
	int granted = wanted, qid, ret;

	ret = nvme_set_queue_count(nctrl, &granted);
	if (ret)
		return ret;
	if (!granted) {
		dev_err(nctrl->device, "target granted no I/O queues\n");
		return -ENOSPC;
	}
	if (granted < wanted)
		dev_warn(nctrl->device, "target granted %d of %u I/O queues\n",
			 granted, wanted);

	nctrl->queue_count = granted + 1;
	nvmf_set_io_queues(nctrl->opts, granted, ctrl->io_queues);
	dev_info(nctrl->device,
		 "creating %d I/O queues: %u default, %u read, %u poll, depth %u\n",
		 granted, ctrl->io_queues[HCTX_TYPE_DEFAULT],
		 ctrl->io_queues[HCTX_TYPE_READ],
		 ctrl->io_queues[HCTX_TYPE_POLL], nctrl->sqsize + 1);

	for (qid = 1; qid < nctrl->queue_count; qid++) {
		ret = xrdma_queue_alloc(ctrl, qid, nctrl->sqsize + 1);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * A reconnect may be granted another queue count than the tag set has:
 * drain the request queues, resize the tag set, start the new queues.
 */
static int xrdma_resize_io(struct xrdma_ctrl *ctrl, int started)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;

	nvme_start_freeze(nctrl);
	nvme_unquiesce_io_queues(nctrl);
	if (!nvme_wait_freeze_timeout(nctrl, NVME_IO_TIMEOUT)) {
		nvme_unfreeze(nctrl);
		dev_warn(nctrl->device,
			 "I/O did not drain for the queue resize, retrying the connection\n");
		return -ENODEV;
	}
	blk_mq_update_nr_hw_queues(nctrl->tagset, nctrl->queue_count - 1);
	nvme_unfreeze(nctrl);
	return xrdma_start_queues(ctrl, started + 1, nctrl->queue_count);
}

static int xrdma_connect_io(struct xrdma_ctrl *ctrl)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	bool first = !nctrl->tagset;
	int started, ret;

	ret = xrdma_alloc_io_queues(ctrl);
	if (ret)
		return ret;

	if (first) {
		ret = nvme_alloc_io_tag_set(nctrl, &ctrl->tag_set, &xrdma_mq_ops,
					    nctrl->opts->nr_poll_queues ?
					    HCTX_MAX_TYPES : 2,
					    xrdma_cmd_size());
		if (ret)
			return ret;
	}

	/* Connect travels on the hctx of its queue: start what exists */
	started = nctrl->queue_count - 1;
	if (!first)
		started = min_t(int, started, ctrl->tag_set.nr_hw_queues);
	ret = xrdma_start_queues(ctrl, 1, started + 1);
	if (ret || first)
		return ret;
	return xrdma_resize_io(ctrl, started);
}

/* What Identify said, checked against what we can do. */
static int xrdma_check_ctrl(struct xrdma_ctrl *ctrl, bool first)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	size_t asked = nctrl->opts->queue_size;
	u32 depth = nctrl->sqsize + 1;	/* core clamped it to CAP.MQES */

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

	if (first && asked > depth)
		dev_warn(nctrl->device,
			 "queue_size %zu exceeds the controller's limit (CAP.MQES), using %u\n",
			 asked, depth);
	if (depth > XRDMA_MAX_QUEUE_SIZE) {
		dev_warn(nctrl->device,
			 "queue depth %u exceeds the transport limit, using %u\n",
			 depth, XRDMA_MAX_QUEUE_SIZE);
		depth = XRDMA_MAX_QUEUE_SIZE;
	}
	if (depth > nctrl->maxcmd) {
		dev_warn(nctrl->device,
			 "queue depth %u exceeds MAXCMD, using %u\n",
			 depth, nctrl->maxcmd);
		depth = nctrl->maxcmd;
	}
	nctrl->sqsize = depth - 1;

	ctrl->use_inline = (nctrl->sgls & XRDMA_SGLS_OFFSET) &&
			   nctrl->ioccsz * 16 > sizeof(struct nvme_command);
	return 0;
}

/*
 * Build the whole association and go LIVE.  The first connect also
 * creates the tag sets; a failed first connect takes them down again.
 */
static int xrdma_ctrl_connect(struct xrdma_ctrl *ctrl)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	bool first = !nctrl->admin_tagset;
	int ret;

	ret = xrdma_connect_admin(ctrl);
	if (!ret)
		ret = xrdma_check_ctrl(ctrl, first);
	if (!ret && nctrl->queue_count > 1)
		ret = xrdma_connect_io(ctrl);
	if (ret)
		goto out_disconnect;

	if (!nvme_change_ctrl_state(nctrl, NVME_CTRL_LIVE)) {
		/* a delete won the race */
		dev_info(nctrl->device, "not going live: controller state %d\n",
			 nvme_ctrl_state(nctrl));
		ret = -EINVAL;
		goto out_disconnect;
	}
	trace_xrdma_state(ctrl, "connected");
	nvme_start_ctrl(nctrl);
	return 0;

out_disconnect:
	xrdma_ctrl_disconnect(ctrl, first ? XRDMA_DOWN_REMOVE : 0);
	return ret;
}

/* --- recovery, reconnect, reset, delete ------------------------------------ */

static void xrdma_schedule_reconnect(struct xrdma_ctrl *ctrl, int status)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	unsigned int delay = nctrl->opts->reconnect_delay;
	int limit = nctrl->opts->max_reconnects;

	if (nvme_ctrl_state(nctrl) != NVME_CTRL_CONNECTING)
		return;

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

/* One attempt from CONNECTING; on failure the next one is scheduled. */
static void xrdma_ctrl_attempt(struct xrdma_ctrl *ctrl, const char *what)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	int ret;

	trace_xrdma_state(ctrl, what);
	ret = xrdma_ctrl_connect(ctrl);
	if (ret) {
		nctrl->nr_reconnects++;
		atomic_inc(&ctrl->reconnect_attempts);
		dev_info(nctrl->device, "%s attempt %d failed: %d\n", what,
			 nctrl->nr_reconnects, ret);
		xrdma_schedule_reconnect(ctrl, ret);
		return;
	}
	if (nctrl->nr_reconnects)
		dev_info(nctrl->device, "%s succeeded after %d failed attempt%s\n",
			 what, nctrl->nr_reconnects,
			 nctrl->nr_reconnects == 1 ? "" : "s");
	nctrl->nr_reconnects = 0;
}

static void xrdma_reconnect_work(struct work_struct *work)
{
	struct xrdma_ctrl *ctrl = container_of(to_delayed_work(work),
					       struct xrdma_ctrl,
					       reconnect_work);

	xrdma_ctrl_attempt(ctrl, "reconnect");
}

static void xrdma_err_work(struct work_struct *work)
{
	struct xrdma_ctrl *ctrl = container_of(work, struct xrdma_ctrl,
					       err_work);

	xrdma_ctrl_disconnect(ctrl, 0);
	/* a delete that came in meanwhile owns the controller now */
	if (nvme_change_ctrl_state(&ctrl->ctrl, NVME_CTRL_CONNECTING))
		xrdma_schedule_reconnect(ctrl, 0);
}

/**
 * xrdma_error_recovery() - start error recovery of a live controller
 * @ctrl: the controller
 *
 * Safe from any context, including completion handlers; only the first
 * caller while LIVE starts recovery.
 */
void xrdma_error_recovery(struct xrdma_ctrl *ctrl)
{
	if (!nvme_change_ctrl_state(&ctrl->ctrl, NVME_CTRL_RESETTING))
		return;
	atomic_inc(&ctrl->recoveries);
	trace_xrdma_state(ctrl, "error_recovery");
	dev_warn(ctrl->ctrl.device, "starting error recovery (#%d)\n",
		 atomic_read(&ctrl->recoveries));
	queue_work(nvme_reset_wq, &ctrl->err_work);
}

static void xrdma_reset_work(struct work_struct *work)
{
	struct xrdma_ctrl *ctrl = container_of(work, struct xrdma_ctrl,
					       ctrl.reset_work);

	nvme_stop_ctrl(&ctrl->ctrl);
	xrdma_ctrl_disconnect(ctrl, XRDMA_DOWN_DISABLE);
	if (nvme_change_ctrl_state(&ctrl->ctrl, NVME_CTRL_CONNECTING))
		xrdma_ctrl_attempt(ctrl, "reset");
}

/* core: no more recovery or reconnect work may run after this */
static void xrdma_stop_ctrl(struct nvme_ctrl *nctrl)
{
	struct xrdma_ctrl *ctrl = to_xrdma_ctrl(nctrl);

	/* recovery may still schedule a reconnect: let it finish first */
	flush_work(&ctrl->err_work);
	cancel_delayed_work_sync(&ctrl->reconnect_work);
}

/* core: namespaces are gone; shut the controller down for good */
static void xrdma_delete_ctrl(struct nvme_ctrl *nctrl)
{
	trace_xrdma_state(to_xrdma_ctrl(nctrl), "delete");
	xrdma_ctrl_disconnect(to_xrdma_ctrl(nctrl), XRDMA_DOWN_DISABLE |
			      XRDMA_DOWN_SHUTDOWN | XRDMA_DOWN_REMOVE);
}

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
};

/* --- creation ------------------------------------------------------------ */

/* "traddr"/"host_traddr" are numeric IPv4 or IPv6 (with %scope). */
static int xrdma_parse_sockaddr(const char *what, const char *addr,
				const char *port, struct sockaddr_storage *ss)
{
	int ret = inet_pton_with_scope(&init_net, AF_UNSPEC, addr, port, ss);

	if (ret)
		pr_err("invalid %s \"%s\"%s%s: expected a numeric IPv4 or IPv6 address\n",
		       what, addr, port ? " port " : "", port ? port : "");
	return ret;
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
	int i, ret;

	ctrl = kzalloc(sizeof(*ctrl), GFP_KERNEL);
	if (!ctrl)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&ctrl->entry);
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
	INIT_WORK(&ctrl->ctrl.reset_work, xrdma_reset_work);

	/* an upper bound until the target says how many it grants */
	ctrl->ctrl.queue_count = nvmf_nr_io_queues(opts) + 1;
	ctrl->ctrl.sqsize = opts->queue_size - 1;
	ctrl->ctrl.kato = opts->kato;

	ctrl->queues = kcalloc(ctrl->ctrl.queue_count, sizeof(*ctrl->queues),
			       GFP_KERNEL);
	if (!ctrl->queues) {
		ret = -ENOMEM;
		goto out_free_ctrl;
	}
	for (i = 0; i < ctrl->ctrl.queue_count; i++) {
		mutex_init(&ctrl->queues[i].stop_lock);
		spin_lock_init(&ctrl->queues[i].sq_lock);
	}
	return ctrl;

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

	ret = nvme_init_ctrl(&ctrl->ctrl, dev, &xrdma_ctrl_ops, 0);
	if (ret) {
		kfree(ctrl->queues);
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

	ret = xrdma_ctrl_connect(ctrl);
	if (ret) {
		dev_err(ctrl->ctrl.device,
			"cannot connect to %s at %pISpcs: %d\n",
			opts->subsysnqn, &ctrl->addr, ret);
		goto out_uninit_ctrl;
	}

	dev_info(ctrl->ctrl.device,
		 "new ctrl: NQN \"%s\", addr %pISpcs, hostnqn: %s, via %s\n",
		 nvmf_ctrl_subsysnqn(&ctrl->ctrl), &ctrl->addr,
		 opts->host->nqn, xrdma_transport_name);
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
