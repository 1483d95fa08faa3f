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

/* --- admin queue -------------------------------------------------------- */

static void xrdma_teardown_admin_queue(struct xrdma_ctrl *ctrl, bool remove)
{
	nvme_quiesce_admin_queue(&ctrl->ctrl);
	blk_sync_queue(ctrl->ctrl.admin_q);
	xrdma_queue_stop(&ctrl->queues[0]);
	nvme_cancel_admin_tagset(&ctrl->ctrl);
	if (remove) {
		nvme_unquiesce_admin_queue(&ctrl->ctrl);
		nvme_remove_admin_tag_set(&ctrl->ctrl);
	}
	xrdma_queue_free(&ctrl->queues[0]);
	ctrl->dev = NULL;
}

static int xrdma_configure_admin_queue(struct xrdma_ctrl *ctrl, bool new)
{
	int ret;

	ret = xrdma_queue_alloc(ctrl, 0, NVME_AQ_DEPTH);
	if (ret)
		return ret;

	ctrl->dev = ctrl->queues[0].dev;
	ctrl->ctrl.numa_node = ibdev_to_node(ctrl->dev->ibdev);
	ctrl->max_fr_pages = ctrl->dev->max_fr_pages;

	if (new) {
		ret = nvme_alloc_admin_tag_set(&ctrl->ctrl, &ctrl->admin_tag_set,
					       &xrdma_admin_mq_ops,
					       xrdma_cmd_size());
		if (ret)
			goto out_free_queue;
	}

	ret = xrdma_queue_start(&ctrl->queues[0]);
	if (ret)
		goto out_remove_tag_set;

	ret = nvme_enable_ctrl(&ctrl->ctrl);
	if (ret)
		goto out_stop_queue;

	/* core derives the block limits from these in init_ctrl_finish */
	ctrl->ctrl.max_segments = ctrl->max_fr_pages;
	ctrl->ctrl.max_hw_sectors = ctrl->max_fr_pages << (PAGE_SHIFT - 9);

	nvme_unquiesce_admin_queue(&ctrl->ctrl);

	ret = nvme_init_ctrl_finish(&ctrl->ctrl, false);
	if (ret)
		goto out_quiesce;
	return 0;

out_quiesce:
	nvme_quiesce_admin_queue(&ctrl->ctrl);
	blk_sync_queue(ctrl->ctrl.admin_q);
out_stop_queue:
	xrdma_queue_stop(&ctrl->queues[0]);
	nvme_cancel_admin_tagset(&ctrl->ctrl);
out_remove_tag_set:
	if (new)
		nvme_remove_admin_tag_set(&ctrl->ctrl);
out_free_queue:
	xrdma_queue_free(&ctrl->queues[0]);
	ctrl->dev = NULL;
	return ret;
}

/* --- I/O queues ---------------------------------------------------------- */

static void xrdma_stop_io_queues(struct xrdma_ctrl *ctrl)
{
	int i;

	for (i = 1; i < ctrl->ctrl.queue_count; i++)
		xrdma_queue_stop(&ctrl->queues[i]);
}

static void xrdma_free_io_queues(struct xrdma_ctrl *ctrl)
{
	int i;

	for (i = 1; i < ctrl->ctrl.queue_count; i++)
		xrdma_queue_free(&ctrl->queues[i]);
}

static void xrdma_teardown_io_queues(struct xrdma_ctrl *ctrl, bool remove)
{
	if (ctrl->ctrl.queue_count < 2)
		return;
	nvme_quiesce_io_queues(&ctrl->ctrl);
	nvme_sync_io_queues(&ctrl->ctrl);
	xrdma_stop_io_queues(ctrl);
	nvme_cancel_tagset(&ctrl->ctrl);
	if (remove && ctrl->ctrl.tagset) {
		nvme_unquiesce_io_queues(&ctrl->ctrl);
		nvme_remove_io_tag_set(&ctrl->ctrl);
	}
	xrdma_free_io_queues(ctrl);
}

/* Negotiate the queue count with the target and connect every queue. */
static int xrdma_alloc_io_queues(struct xrdma_ctrl *ctrl)
{
	struct nvmf_ctrl_options *opts = ctrl->ctrl.opts;
	unsigned int wanted = nvmf_nr_io_queues(opts);
	int nr = wanted, i, ret;

	ret = nvme_set_queue_count(&ctrl->ctrl, &nr);
	if (ret)
		return ret;
	if (!nr) {
		dev_err(ctrl->ctrl.device, "target granted no I/O queues\n");
		return -ENOSPC;
	}
	if (nr < wanted)
		dev_warn(ctrl->ctrl.device,
			 "target granted %d of %u I/O queues\n", nr, wanted);

	ctrl->ctrl.queue_count = nr + 1;
	nvmf_set_io_queues(opts, nr, ctrl->io_queues);
	dev_info(ctrl->ctrl.device,
		 "creating %d I/O queues: %u default, %u read, %u poll, depth %u\n",
		 nr, ctrl->io_queues[HCTX_TYPE_DEFAULT],
		 ctrl->io_queues[HCTX_TYPE_READ],
		 ctrl->io_queues[HCTX_TYPE_POLL], ctrl->ctrl.sqsize + 1);

	for (i = 1; i < ctrl->ctrl.queue_count; i++) {
		ret = xrdma_queue_alloc(ctrl, i, ctrl->ctrl.sqsize + 1);
		if (ret)
			goto out_free;
	}
	return 0;

out_free:
	while (--i >= 1)
		xrdma_queue_free(&ctrl->queues[i]);
	return ret;
}

static int xrdma_start_io_queues(struct xrdma_ctrl *ctrl, int first, int end)
{
	int i, ret;

	for (i = first; i < end; i++) {
		ret = xrdma_queue_start(&ctrl->queues[i]);
		if (ret)
			goto out_stop;
	}
	return 0;

out_stop:
	while (--i >= first)
		xrdma_queue_stop(&ctrl->queues[i]);
	return ret;
}

static int xrdma_configure_io_queues(struct xrdma_ctrl *ctrl, bool new)
{
	int nr_hw, ret;

	ret = xrdma_alloc_io_queues(ctrl);
	if (ret)
		return ret;

	if (new) {
		ret = nvme_alloc_io_tag_set(&ctrl->ctrl, &ctrl->tag_set,
					    &xrdma_mq_ops,
					    ctrl->ctrl.opts->nr_poll_queues ?
					    HCTX_MAX_TYPES : 2,
					    xrdma_cmd_size());
		if (ret)
			goto out_free_queues;
	}

	/*
	 * Connect needs an hctx per queue: start what the tag set has now,
	 * grow it, then start the rest.
	 */
	nr_hw = new ? ctrl->ctrl.queue_count - 1 :
		min_t(int, ctrl->tag_set.nr_hw_queues,
		      ctrl->ctrl.queue_count - 1);
	ret = xrdma_start_io_queues(ctrl, 1, nr_hw + 1);
	if (ret)
		goto out_cleanup_tag_set;

	if (!new) {
		nvme_start_freeze(&ctrl->ctrl);
		nvme_unquiesce_io_queues(&ctrl->ctrl);
		if (!nvme_wait_freeze_timeout(&ctrl->ctrl, NVME_IO_TIMEOUT)) {
			/* I/O is stuck somewhere; let recovery run again */
			nvme_unfreeze(&ctrl->ctrl);
			ret = -ENODEV;
			goto out_stop_queues;
		}
		blk_mq_update_nr_hw_queues(ctrl->ctrl.tagset,
					   ctrl->ctrl.queue_count - 1);
		nvme_unfreeze(&ctrl->ctrl);
		ret = xrdma_start_io_queues(ctrl, nr_hw + 1,
					    ctrl->ctrl.queue_count);
		if (ret)
			goto out_stop_queues;
	}
	return 0;

out_stop_queues:
	nvme_quiesce_io_queues(&ctrl->ctrl);
	nvme_sync_io_queues(&ctrl->ctrl);
	xrdma_stop_io_queues(ctrl);
out_cleanup_tag_set:
	nvme_cancel_tagset(&ctrl->ctrl);
	if (new) {
		nvme_unquiesce_io_queues(&ctrl->ctrl);
		nvme_remove_io_tag_set(&ctrl->ctrl);
	}
out_free_queues:
	xrdma_free_io_queues(ctrl);
	return ret;
}

/* --- setup and teardown of the whole controller --------------------------- */

/* What Identify said, checked against what we can do. */
static int xrdma_check_ctrl(struct xrdma_ctrl *ctrl, bool new)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	struct nvmf_ctrl_options *opts = nctrl->opts;
	u32 depth;

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

	/* core already clamped sqsize to CAP.MQES; say so */
	depth = nctrl->sqsize + 1;
	if (new && opts->queue_size > depth)
		dev_warn(nctrl->device,
			 "queue_size %zu exceeds the controller's limit (CAP.MQES), using %u\n",
			 opts->queue_size, depth);
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

static int xrdma_setup_ctrl(struct xrdma_ctrl *ctrl, bool new)
{
	enum nvme_ctrl_state state;
	int ret;

	ret = xrdma_configure_admin_queue(ctrl, new);
	if (ret)
		return ret;

	ret = xrdma_check_ctrl(ctrl, new);
	if (ret)
		goto out_teardown_admin;

	if (ctrl->ctrl.queue_count > 1) {
		ret = xrdma_configure_io_queues(ctrl, new);
		if (ret)
			goto out_teardown_admin;
	}

	if (!nvme_change_ctrl_state(&ctrl->ctrl, NVME_CTRL_LIVE)) {
		/* only a delete that raced with us may get here */
		state = nvme_ctrl_state(&ctrl->ctrl);
		dev_info(ctrl->ctrl.device,
			 "not going live: controller state %d\n", state);
		ret = -EINVAL;
		goto out_teardown_io;
	}

	trace_xrdma_state(ctrl, "connected");
	nvme_start_ctrl(&ctrl->ctrl);
	return 0;

out_teardown_io:
	xrdma_teardown_io_queues(ctrl, new);
out_teardown_admin:
	nvme_stop_keep_alive(&ctrl->ctrl);
	xrdma_teardown_admin_queue(ctrl, new);
	return ret;
}

/* Tear everything down; @shutdown: orderly CC.SHN and drop the tag sets. */
static void xrdma_shutdown(struct xrdma_ctrl *ctrl, bool shutdown)
{
	xrdma_teardown_io_queues(ctrl, shutdown);
	nvme_quiesce_admin_queue(&ctrl->ctrl);
	nvme_disable_ctrl(&ctrl->ctrl, shutdown);
	xrdma_teardown_admin_queue(ctrl, shutdown);
}

/* --- recovery, reconnect, reset, delete ------------------------------------ */

static void xrdma_reconnect_or_remove(struct xrdma_ctrl *ctrl, int status)
{
	struct nvmf_ctrl_options *opts = ctrl->ctrl.opts;

	if (nvme_ctrl_state(&ctrl->ctrl) != NVME_CTRL_CONNECTING)
		return;

	if (nvmf_should_reconnect(&ctrl->ctrl, status)) {
		if (opts->max_reconnects < 0)
			dev_info(ctrl->ctrl.device,
				 "reconnect attempt %d in %u s (no limit)\n",
				 ctrl->ctrl.nr_reconnects + 1,
				 opts->reconnect_delay);
		else
			dev_info(ctrl->ctrl.device,
				 "reconnect attempt %d of %d in %u s\n",
				 ctrl->ctrl.nr_reconnects + 1,
				 opts->max_reconnects, opts->reconnect_delay);
		queue_delayed_work(nvme_wq, &ctrl->reconnect_work,
				   opts->reconnect_delay * HZ);
		return;
	}

	dev_info(ctrl->ctrl.device,
		 "giving up after %d reconnect attempts (status %d), deleting controller\n",
		 ctrl->ctrl.nr_reconnects, status);
	nvme_delete_ctrl(&ctrl->ctrl);
}

static void xrdma_reconnect_work(struct work_struct *work)
{
	struct xrdma_ctrl *ctrl = container_of(to_delayed_work(work),
					       struct xrdma_ctrl,
					       reconnect_work);
	int ret;

	++ctrl->ctrl.nr_reconnects;
	atomic_inc(&ctrl->reconnect_attempts);
	trace_xrdma_state(ctrl, "reconnect");
	ret = xrdma_setup_ctrl(ctrl, false);
	if (ret) {
		dev_info(ctrl->ctrl.device, "reconnect attempt %d failed: %d\n",
			 ctrl->ctrl.nr_reconnects, ret);
		xrdma_reconnect_or_remove(ctrl, ret);
		return;
	}
	dev_info(ctrl->ctrl.device, "reconnected after %d attempt%s\n",
		 ctrl->ctrl.nr_reconnects,
		 ctrl->ctrl.nr_reconnects == 1 ? "" : "s");
	ctrl->ctrl.nr_reconnects = 0;
}

static void xrdma_err_work(struct work_struct *work)
{
	struct xrdma_ctrl *ctrl = container_of(work, struct xrdma_ctrl,
					       err_work);

	nvme_stop_keep_alive(&ctrl->ctrl);
	flush_work(&ctrl->ctrl.async_event_work);
	xrdma_teardown_io_queues(ctrl, false);
	/* queued and new I/O fails over or waits in core from here */
	nvme_unquiesce_io_queues(&ctrl->ctrl);
	xrdma_teardown_admin_queue(ctrl, false);
	nvme_unquiesce_admin_queue(&ctrl->ctrl);
	nvme_auth_stop(&ctrl->ctrl);

	if (!nvme_change_ctrl_state(&ctrl->ctrl, NVME_CTRL_CONNECTING))
		return;	/* deleting */
	xrdma_reconnect_or_remove(ctrl, 0);
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
	int ret;

	trace_xrdma_state(ctrl, "reset");
	nvme_stop_ctrl(&ctrl->ctrl);
	xrdma_shutdown(ctrl, false);

	if (!nvme_change_ctrl_state(&ctrl->ctrl, NVME_CTRL_CONNECTING))
		return;	/* deleting */

	ret = xrdma_setup_ctrl(ctrl, false);
	if (ret) {
		++ctrl->ctrl.nr_reconnects;
		dev_warn(ctrl->ctrl.device, "reset failed: %d\n", ret);
		xrdma_reconnect_or_remove(ctrl, ret);
	}
}

static void xrdma_stop_ctrl(struct nvme_ctrl *nctrl)
{
	struct xrdma_ctrl *ctrl = to_xrdma_ctrl(nctrl);

	flush_work(&ctrl->err_work);
	cancel_delayed_work_sync(&ctrl->reconnect_work);
}

static void xrdma_delete_ctrl(struct nvme_ctrl *nctrl)
{
	struct xrdma_ctrl *ctrl = to_xrdma_ctrl(nctrl);

	trace_xrdma_state(ctrl, "delete");
	xrdma_shutdown(ctrl, true);
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

static int xrdma_parse_addrs(struct xrdma_ctrl *ctrl,
			     struct nvmf_ctrl_options *opts)
{
	int ret;

	/* nvme-cli fills a default port only for "rdma" and "tcp" */
	if (!(opts->mask & NVMF_OPT_TRSVCID)) {
		opts->trsvcid = kstrdup(__stringify(NVME_RDMA_IP_PORT),
					GFP_KERNEL);
		if (!opts->trsvcid)
			return -ENOMEM;
		opts->mask |= NVMF_OPT_TRSVCID;
	}

	ret = inet_pton_with_scope(&init_net, AF_UNSPEC, opts->traddr,
				   opts->trsvcid, &ctrl->addr);
	if (ret) {
		pr_err("invalid traddr/trsvcid \"%s\"/\"%s\": expected an IPv4 or IPv6 address and a port\n",
		       opts->traddr, opts->trsvcid);
		return ret;
	}

	if (opts->mask & NVMF_OPT_HOST_TRADDR) {
		ret = inet_pton_with_scope(&init_net, AF_UNSPEC,
					   opts->host_traddr, NULL,
					   &ctrl->src_addr);
		if (ret) {
			pr_err("invalid host_traddr \"%s\": expected an IPv4 or IPv6 address\n",
			       opts->host_traddr);
			return ret;
		}
	}
	return 0;
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

	ret = xrdma_setup_ctrl(ctrl, true);
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

struct nvmf_transport_ops xrdma_transport = {
	.name		= "xrdma",
	.module		= THIS_MODULE,
	.required_opts	= NVMF_OPT_TRADDR,
	.allowed_opts	= NVMF_OPT_TRSVCID | NVMF_OPT_RECONNECT_DELAY |
			  NVMF_OPT_HOST_TRADDR | NVMF_OPT_CTRL_LOSS_TMO |
			  NVMF_OPT_NR_WRITE_QUEUES | NVMF_OPT_NR_POLL_QUEUES |
			  NVMF_OPT_TOS,
	.create_ctrl	= xrdma_create_ctrl,
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
