// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: the I/O queues of an association, connected in parallel.
 *
 * Each I/O queue's RC connection (CM id, address resolution, IB
 * resources, route resolution, connect request, each step waiting for its
 * CM event) is set up by a work item of its own on xrdma_connect_wq, all
 * at once; the controller's setup waits for every one of them.  The
 * fabrics Connect commands follow in order (ctrl.c).
 *
 * The workqueue is our own: the setup runs from nvme_wq for a reconnect
 * and must not wait for work queued behind itself.  It may reclaim
 * memory for a controller being rebuilt, hence WQ_MEM_RECLAIM.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/workqueue.h>

#include "xrdma.h"

struct workqueue_struct *xrdma_connect_wq;

/**
 * xrdma_queue_connect_work() - set up one I/O queue's RC connection
 * @work: the queue's connect_work
 *
 * Runs for a reconnect too, whose namespaces may hold swap or a file
 * system under writeback: like the reconnect itself (ctrl.c), it
 * allocates without starting I/O.  A new controller loses nothing by it.
 */
void xrdma_queue_connect_work(struct work_struct *work)
{
	struct xrdma_queue *queue = container_of(work, struct xrdma_queue,
						 connect_work);
	struct xrdma_ctrl *ctrl = queue->ctrl;
	unsigned int noio;

	noio = memalloc_noio_save();
	queue->connect_ret = xrdma_queue_alloc(ctrl, queue->qid,
					       ctrl->ctrl.sqsize + 1);
	memalloc_noio_restore(noio);
}

/* How many I/O queues of each hctx type @nr queues make. */
static void xrdma_set_io_queues(struct xrdma_ctrl *ctrl, unsigned int nr)
{
	/*
	 * it only sets the types it hands queues to: a reconnect granted
	 * fewer must not keep the last grant's count for the others
	 */
	memset(ctrl->io_queues, 0, sizeof(ctrl->io_queues));
	nvmf_set_io_queues(ctrl->ctrl.opts, nr, ctrl->io_queues);
}

/*
 * Disconnect and free the I/O queues in [first, end) that connected.
 * Under teardown_lock, as the end work may stop them meanwhile.
 */
static void xrdma_release_io_queues(struct xrdma_ctrl *ctrl, int first,
				    int end)
{
	int qid;

	mutex_lock(&ctrl->teardown_lock);
	for (qid = end - 1; qid >= first; qid--) {
		struct xrdma_queue *queue = &ctrl->queues[qid];

		if (queue->connect_ret)
			continue;
		xrdma_queue_stop(queue);
		xrdma_queue_free(queue);
	}
	mutex_unlock(&ctrl->teardown_lock);
}

/*
 * I/O queue @ok could not get a device resource that the queues before it
 * got: go on with those, I/O queues 1 to ok - 1.  The types are handed out
 * again for that count; a poll queue stays a poll queue, as nvmf hands
 * out default and read queues first.
 */
static void xrdma_fewer_io_queues(struct xrdma_ctrl *ctrl, int ok)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	struct xrdma_queue *failed = &ctrl->queues[ok];
	int wanted = nctrl->queue_count - 1;

	xrdma_release_io_queues(ctrl, ok + 1, nctrl->queue_count);
	mutex_lock(&ctrl->teardown_lock);
	WRITE_ONCE(nctrl->queue_count, ok);
	xrdma_set_io_queues(ctrl, ok - 1);
	mutex_unlock(&ctrl->teardown_lock);
	dev_warn(nctrl->device,
		 "using %d of %d I/O queues: queue %d got no %s from %s (%pe)\n",
		 ok - 1, wanted, ok, failed->short_of,
		 dev_name(&ctrl->queues[0].dev->ibdev->dev),
		 ERR_PTR(failed->connect_ret));
}

/**
 * xrdma_alloc_io_queues() - ask for I/O queues and connect them in parallel
 * @ctrl: the controller, its admin queue live and its depth chosen
 *
 * Asks the target for the I/O queues the options want and connects as
 * many as it granted, all at once.  If an I/O queue but the first cannot
 * get its CQ, QP or MRs from the device, the queues before it are used.
 * On any other failure no I/O queue is left connected.
 *
 * Return: 0 or a negative errno.
 */
int xrdma_alloc_io_queues(struct xrdma_ctrl *ctrl)
{
	struct nvme_ctrl *nctrl = &ctrl->ctrl;
	unsigned int wanted = nvmf_nr_io_queues(nctrl->opts);
	int granted = wanted, end, qid, ok, ret;

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
	xrdma_set_io_queues(ctrl, granted);
	dev_info(nctrl->device,
		 "creating %d I/O queues: %u default, %u read, %u poll, depth %u\n",
		 granted, ctrl->io_queues[HCTX_TYPE_DEFAULT],
		 ctrl->io_queues[HCTX_TYPE_READ],
		 ctrl->io_queues[HCTX_TYPE_POLL], nctrl->sqsize + 1);

	end = nctrl->queue_count;
	for (qid = 1; qid < end; qid++)
		queue_work(xrdma_connect_wq, &ctrl->queues[qid].connect_work);
	for (qid = 1; qid < end; qid++)
		flush_work(&ctrl->queues[qid].connect_work);

	/* the queues before the first that failed are usable */
	for (ok = 1; ok < end; ok++)
		if (ctrl->queues[ok].connect_ret)
			break;
	if (ok == end)
		return 0;
	ret = ctrl->queues[ok].connect_ret;
	if (ok == 1 || !ctrl->queues[ok].short_of)
		goto out_release;
	xrdma_fewer_io_queues(ctrl, ok);
	return 0;

out_release:
	xrdma_release_io_queues(ctrl, 1, end);
	return ret;
}
