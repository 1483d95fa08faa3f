// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: transport attributes of a controller, in a named group:
 *
 *   /sys/class/nvme/nvmeN/xrdma/<attribute>
 *
 * The group sits next to nvme core's controller attributes and lives as
 * long as the controller device, so every attribute must also make sense
 * while the controller is connecting, resetting or being deleted, when the
 * queues may not be allocated: such attributes then read "none" or 0.
 * The controller's event counters are here; the data path counters of its
 * queues are in debugfs.
 * See Documentation/ABI/testing/sysfs-class-nvme-xrdma.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/sysfs.h>

#include "xrdma.h"

static struct xrdma_ctrl *xrdma_dev_to_ctrl(struct device *dev)
{
	struct nvme_ctrl *nctrl = dev_get_drvdata(dev);

	return to_xrdma_ctrl(nctrl);
}

/*
 * Show something that exists only while queue @qid is allocated.  The
 * queue's stop_lock keeps it from being torn down under us; @show runs
 * only if the queue is allocated, else @none is shown.
 */
static ssize_t xrdma_queue_attr_show(struct device *dev, char *buf, int qid,
				     const char *none,
				     ssize_t (*show)(struct xrdma_queue *,
						     char *))
{
	struct xrdma_ctrl *ctrl = xrdma_dev_to_ctrl(dev);
	struct xrdma_queue *queue;
	ssize_t ret;

	if (qid >= READ_ONCE(ctrl->ctrl.queue_count))
		return sysfs_emit(buf, "%s\n", none);

	queue = &ctrl->queues[qid];
	ret = mutex_lock_interruptible(&queue->stop_lock);
	if (ret)
		return ret;
	if (test_bit(XRDMA_Q_ALLOCATED, &queue->flags))
		ret = show(queue, buf);
	else
		ret = sysfs_emit(buf, "%s\n", none);
	mutex_unlock(&queue->stop_lock);
	return ret;
}

static ssize_t xrdma_show_ibdev(struct xrdma_queue *queue, char *buf)
{
	return sysfs_emit(buf, "%s\n", dev_name(&queue->dev->ibdev->dev));
}

static ssize_t xrdma_rdma_device_show(struct device *dev,
				      struct device_attribute *attr,
				      char *buf)
{
	return xrdma_queue_attr_show(dev, buf, 0, "none", xrdma_show_ibdev);
}

static ssize_t xrdma_show_port(struct xrdma_queue *queue, char *buf)
{
	return sysfs_emit(buf, "%u\n", queue->cm_id->port_num);
}

static ssize_t xrdma_rdma_port_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	return xrdma_queue_attr_show(dev, buf, 0, "0", xrdma_show_port);
}

/**
 * xrdma_sysfs_note_qp() - keep what the device made of a new connection
 * @queue: a queue whose connection was just established, not published
 *
 * The admin queue's QP got its ACK timeout (rdma_cm's choice, or the
 * module's ack_timeout) and its retry count when it was established: ask
 * the device once, now, and let qp_ack_timeout and qp_retry_count show
 * the copy.  Asked at each read, the query ran under the queue's
 * stop_lock, and on some devices it is a firmware command: any user could
 * then issue those at will, and a queue stop would wait for one a wedged
 * device does not answer.  A device that cannot tell leaves 0.
 */
void xrdma_sysfs_note_qp(struct xrdma_queue *queue)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	int ret;

	WRITE_ONCE(queue->qp_timeout, 0);
	WRITE_ONCE(queue->qp_retry_cnt, 0);
	if (queue->qid)
		return;
	ret = ib_query_qp(queue->qp, &attr, IB_QP_TIMEOUT | IB_QP_RETRY_CNT,
			  &init);
	if (ret) {
		xrdma_qdbg(queue, "cannot query the QP's ACK timeout: %d\n",
			   ret);
		return;
	}
	WRITE_ONCE(queue->qp_timeout, attr.timeout);
	WRITE_ONCE(queue->qp_retry_cnt, attr.retry_cnt);
}

/*
 * What xrdma_sysfs_note_qp() kept, 0 while the admin queue is not
 * allocated.  No stop_lock: a read may show the values of a connection
 * that is going away, as any read may be stale a moment later.
 */
static ssize_t xrdma_show_qp_attr(struct device *dev, char *buf,
				  bool timeout)
{
	struct xrdma_queue *queue = &xrdma_dev_to_ctrl(dev)->queues[0];
	u8 val = 0;

	if (test_bit(XRDMA_Q_ALLOCATED, &queue->flags))
		val = timeout ? READ_ONCE(queue->qp_timeout) :
				READ_ONCE(queue->qp_retry_cnt);
	return sysfs_emit(buf, "%u\n", val);
}

static ssize_t xrdma_qp_ack_timeout_show(struct device *dev,
					 struct device_attribute *attr,
					 char *buf)
{
	return xrdma_show_qp_attr(dev, buf, true);
}

static ssize_t xrdma_qp_retry_count_show(struct device *dev,
					 struct device_attribute *attr,
					 char *buf)
{
	return xrdma_show_qp_attr(dev, buf, false);
}

static ssize_t xrdma_show_inline_size(struct xrdma_queue *queue, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(queue->inline_size));
}

static ssize_t xrdma_inline_data_size_show(struct device *dev,
					   struct device_attribute *attr,
					   char *buf)
{
	/* all I/O queues are set up alike: queue 1 speaks for them */
	return xrdma_queue_attr_show(dev, buf, 1, "0", xrdma_show_inline_size);
}

static ssize_t xrdma_show_io_queues(struct device *dev, char *buf,
				    enum hctx_type type)
{
	struct xrdma_ctrl *ctrl = xrdma_dev_to_ctrl(dev);

	return sysfs_emit(buf, "%u\n", READ_ONCE(ctrl->io_queues[type]));
}

static ssize_t xrdma_nr_default_queues_show(struct device *dev,
					    struct device_attribute *attr,
					    char *buf)
{
	return xrdma_show_io_queues(dev, buf, HCTX_TYPE_DEFAULT);
}

static ssize_t xrdma_nr_read_queues_show(struct device *dev,
					 struct device_attribute *attr,
					 char *buf)
{
	return xrdma_show_io_queues(dev, buf, HCTX_TYPE_READ);
}

static ssize_t xrdma_nr_poll_queues_show(struct device *dev,
					 struct device_attribute *attr,
					 char *buf)
{
	return xrdma_show_io_queues(dev, buf, HCTX_TYPE_POLL);
}

/* Like DEVICE_ATTR_RO(), with the xrdma_ prefix on the variable and show. */
#define XRDMA_ATTR_RO(_name)						\
	struct device_attribute xrdma_attr_##_name =			\
		__ATTR(_name, 0444, xrdma_##_name##_show, NULL)

static XRDMA_ATTR_RO(rdma_device);
static XRDMA_ATTR_RO(rdma_port);
static XRDMA_ATTR_RO(inline_data_size);
static XRDMA_ATTR_RO(qp_ack_timeout);
static XRDMA_ATTR_RO(qp_retry_count);
static XRDMA_ATTR_RO(nr_default_queues);
static XRDMA_ATTR_RO(nr_read_queues);
static XRDMA_ATTR_RO(nr_poll_queues);

/* One attribute per entry of XRDMA_CTRL_COUNTERS(). */
struct xrdma_counter_attr {
	struct device_attribute	attr;
	size_t			offset;
};

static ssize_t xrdma_counter_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	struct xrdma_counter_attr *ca =
		container_of(attr, struct xrdma_counter_attr, attr);
	struct xrdma_ctrl *ctrl = xrdma_dev_to_ctrl(dev);
	atomic_t *counter = (void *)&ctrl->counters + ca->offset;

	return sysfs_emit(buf, "%d\n", atomic_read(counter));
}

XRDMA_CTRL_COUNTERS(XRDMA_COUNTER_ATTR)

static struct attribute *xrdma_attrs[] = {
	&xrdma_attr_rdma_device.attr,
	&xrdma_attr_rdma_port.attr,
	&xrdma_attr_inline_data_size.attr,
	&xrdma_attr_qp_ack_timeout.attr,
	&xrdma_attr_qp_retry_count.attr,
	&xrdma_attr_nr_default_queues.attr,
	&xrdma_attr_nr_read_queues.attr,
	&xrdma_attr_nr_poll_queues.attr,
	XRDMA_CTRL_COUNTERS(XRDMA_COUNTER_ATTR_PTR)
	NULL
};

static const struct attribute_group xrdma_attr_group = {
	.name	= "xrdma",
	.attrs	= xrdma_attrs,
};

/*
 * The controller device's groups (nvme_ctrl_ops.dev_attr_groups): nvme
 * core's own attributes (and its diag/ group where core has one), then
 * ours.
 */
const struct attribute_group *xrdma_dev_attr_groups[] = {
	&nvme_dev_attrs_group,
#ifdef XRDMA_HAVE_CTRL_DIAG
	&nvme_dev_diag_attrs_group,	/* 7.3: error, reset, reconnect counts */
#endif
	&xrdma_attr_group,
	NULL
};
