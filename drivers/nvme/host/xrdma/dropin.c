// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: the transport name, and drop-in mode (transport_name=rdma) kept
 * exclusive with the in-tree nvme-rdma.
 *
 * nvmf_register_transport() takes a second "rdma" without a word and
 * nvme-fabrics then uses the first one registered, so the two modules
 * must never be registered at the same time. Both directions:
 *
 * - nvme-rdma loading while we are (to be) registered: a module notifier
 *   fails its MODULE_STATE_COMING, which load_module() turns into a failed
 *   load before any of its code runs;
 * - nvme-rdma already there when we load: its module kobject is in the
 *   module kset (ours is too), from before its init until after its exit,
 *   and also for a built-in nvme-rdma (it has parameters).
 *
 * The notifier is registered first, so a load that passed its COMING call
 * before that has not registered its transport yet either: it has only
 * its kobject still to add, then its init to run. The kset is therefore
 * looked at once before we register (the usual case, nothing to undo) and
 * once after: if it is not there then, its init comes after our
 * registration, ours stays first in the list and keeps serving "rdma", and
 * its LIVE event is logged.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/notifier.h>
#include <linux/string.h>

#include "xrdma.h"

#define XRDMA_INTREE_MOD	"nvme_rdma"

static bool xrdma_dropin;

static int xrdma_dropin_notify(struct notifier_block *nb, unsigned long state,
			       void *data)
{
	struct module *mod = data;

	if (strcmp(mod->name, XRDMA_INTREE_MOD))
		return NOTIFY_DONE;
	if (state == MODULE_STATE_COMING) {
		/* nvme-fabrics asks for nvme-rdma on every -t rdma connect */
		pr_err_ratelimited("refusing to load nvme_rdma: nvme_xrdma serves transport \"rdma\" (transport_name=rdma); unload nvme-xrdma first\n");
		return notifier_from_errno(-EBUSY);
	}
	if (state == MODULE_STATE_LIVE)
		pr_warn("nvme_rdma was loaded at the same time as nvme_xrdma with transport_name=rdma and registered \"rdma\" too; if nvme_xrdma loaded, it registered first and serves \"rdma\": rmmod nvme_rdma\n");
	return NOTIFY_DONE;
}

static struct notifier_block xrdma_dropin_nb = {
	.notifier_call	= xrdma_dropin_notify,
};

/* Is nvme-rdma loaded, loading past its COMING notifiers, or built in? */
static bool xrdma_intree_present(void)
{
	struct kobject *kobj;

	kobj = kset_find_obj(THIS_MODULE->mkobj.kobj.kset, XRDMA_INTREE_MOD);
	if (!kobj)
		return false;
	kobject_put(kobj);
	return true;
}

/**
 * xrdma_dropin_check() - refuse drop-in mode while nvme-rdma is present
 *
 * Called before and again after registering the fabrics transport; no-op
 * unless the transport name is "rdma".
 *
 * Return: 0, or -EBUSY (logged) if nvme-rdma is loaded.
 */
int xrdma_dropin_check(void)
{
	if (!xrdma_dropin || !xrdma_intree_present())
		return 0;
	pr_err("transport_name=rdma refused: nvme-rdma is loaded and registered \"rdma\"; disconnect its controllers and modprobe -r nvme-rdma, or load nvme-xrdma without transport_name\n");
	return -EBUSY;
}

/**
 * xrdma_dropin_init() - accept the transport name, guard drop-in mode
 * @name: the transport_name parameter
 *
 * Only "xrdma" and "rdma" are accepted: any other name is either an
 * in-tree transport's ("tcp", "fc", "loop"), which nvme-fabrics would
 * hand to us or to that module depending on load order, or one nothing
 * (nvme-cli, discovery log pages) ever asks for. For "rdma" the module
 * notifier keeps nvme-rdma out from now on, and xrdma_dropin_check() runs.
 *
 * Return: 0, -EINVAL for another name, -EBUSY if nvme-rdma is loaded.
 */
int xrdma_dropin_init(const char *name)
{
	int ret;

	if (!name || (strcmp(name, "xrdma") && strcmp(name, "rdma"))) {
		pr_err("invalid transport_name \"%s\": use xrdma (the default) or rdma (in place of nvme-rdma)\n",
		       name ? name : "");
		return -EINVAL;
	}
	if (strcmp(name, "rdma"))
		return 0;

	ret = register_module_notifier(&xrdma_dropin_nb);
	if (ret)
		return ret;
	xrdma_dropin = true;
	ret = xrdma_dropin_check();
	if (ret)
		xrdma_dropin_exit();
	return ret;
}

/**
 * xrdma_dropin_exit() - let nvme-rdma load again
 *
 * Called once our transport is unregistered, and on every failed load.
 */
void xrdma_dropin_exit(void)
{
	if (!xrdma_dropin)
		return;
	unregister_module_notifier(&xrdma_dropin_nb);
	xrdma_dropin = false;
}
