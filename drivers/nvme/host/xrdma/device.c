// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: the RDMA device cache.  Every queue bound to an ib_device holds a
 * reference on one xrdma_device, which holds what we derived from the
 * device's attributes.  Protection domains are per queue (queue.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "xrdma.h"

static LIST_HEAD(xrdma_device_list);
static DEFINE_MUTEX(xrdma_device_mutex);

static void xrdma_device_release(struct kref *ref)
{
	struct xrdma_device *dev = container_of(ref, struct xrdma_device, ref);

	mutex_lock(&xrdma_device_mutex);
	list_del(&dev->entry);
	mutex_unlock(&xrdma_device_mutex);
	kfree(dev);
}

/**
 * xrdma_device_put() - drop a queue's reference on its device
 * @dev: the device
 */
void xrdma_device_put(struct xrdma_device *dev)
{
	kref_put(&dev->ref, xrdma_device_release);
}

/* Check what we need of the device and derive our limits from it. */
static int xrdma_device_probe(struct xrdma_device *dev)
{
	const struct ib_device_attr *attr = &dev->ibdev->attrs;

	if (!(attr->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS)) {
		pr_err("%s: no fast registration (FRWR) support, cannot use it\n",
		       dev_name(&dev->ibdev->dev));
		return -EOPNOTSUPP;
	}
	if (attr->max_send_sge < 2) {
		pr_err("%s: needs at least 2 send SGEs, has %d\n",
		       dev_name(&dev->ibdev->dev), attr->max_send_sge);
		return -EOPNOTSUPP;
	}

	/* One page is kept in reserve for a misaligned first segment. */
	dev->max_fr_pages = min_t(u32, XRDMA_MAX_FR_PAGES,
				  attr->max_fast_reg_page_list_len - 1);
	dev->max_inline_sge = min_t(u32, XRDMA_MAX_INLINE_SGE,
				    attr->max_send_sge - 1);
	dev->max_rd_atom = min_t(u32, attr->max_qp_rd_atom, U8_MAX);
	return 0;
}

/**
 * xrdma_device_get() - find or create the device behind a resolved cm_id
 * @cm_id: a cm_id whose address was resolved (cm_id->device is set)
 *
 * Return: a referenced device, or an ERR_PTR.
 */
struct xrdma_device *xrdma_device_get(struct rdma_cm_id *cm_id)
{
	struct xrdma_device *dev;
	int ret;

	mutex_lock(&xrdma_device_mutex);
	list_for_each_entry(dev, &xrdma_device_list, entry) {
		if (dev->ibdev == cm_id->device &&
		    kref_get_unless_zero(&dev->ref))
			goto out_unlock;
	}

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev) {
		dev = ERR_PTR(-ENOMEM);
		goto out_unlock;
	}
	dev->ibdev = cm_id->device;
	kref_init(&dev->ref);

	ret = xrdma_device_probe(dev);
	if (ret)
		goto out_free;

	list_add(&dev->entry, &xrdma_device_list);
	goto out_unlock;

out_free:
	kfree(dev);
	dev = ERR_PTR(ret);
out_unlock:
	mutex_unlock(&xrdma_device_mutex);
	return dev;
}
