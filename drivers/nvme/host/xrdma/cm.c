// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: connection management.
 *
 * The connecting thread drives every rdma_cm step itself (resolve address,
 * create the QP, resolve route, connect) and waits for each step's event
 * with a bound, so a black-holed peer costs a known, short time.  The CM
 * event handler only reports the outcome of the awaited step, and turns
 * events on an established connection into error recovery.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_cm.h>

#include "xrdma.h"
#include "trace.h"

static void xrdma_cm_step_done(struct xrdma_queue *queue, int error)
{
	queue->cm_error = error;
	complete(&queue->cm_done);
}

static int xrdma_cm_rejected(struct xrdma_queue *queue,
			     struct rdma_cm_event *ev)
{
	struct nvme_ctrl *nctrl = &queue->ctrl->ctrl;
	struct rdma_cm_id *cm_id = queue->cm_id;
	const struct nvme_rdma_cm_rej *rej;
	u8 len = 0;

	atomic_inc(&queue->ctrl->rejects);
	if (ev->status == IB_CM_REJ_STALE_CONN) {
		dev_info(nctrl->device,
			 "queue %d: connect rejected as stale connection, retrying\n",
			 queue->qid);
		return -ESTALE;
	}

	rej = rdma_consumer_reject_data(cm_id, ev, &len);
	if (rej && len >= sizeof(*rej)) {
		u16 sts = le16_to_cpu(rej->sts);

		dev_err(nctrl->device,
			"queue %d: connect rejected by target: %s (cm %d), NVMe-RDMA status %u (%s)\n",
			queue->qid, rdma_reject_msg(cm_id, ev->status),
			ev->status, sts, nvme_rdma_cm_msg(sts));
	} else {
		dev_err(nctrl->device,
			"queue %d: connect rejected: %s (cm %d)\n", queue->qid,
			rdma_reject_msg(cm_id, ev->status), ev->status);
	}
	return -ECONNREFUSED;
}

/* The target's CM reply tells how many commands it can receive. */
static void xrdma_cm_established(struct xrdma_queue *queue,
				 struct rdma_cm_event *ev)
{
	const struct nvme_rdma_cm_rep *rep = ev->param.conn.private_data;

	queue->crqsize = 0;
	if (!rep || ev->param.conn.private_data_len < sizeof(*rep) ||
	    rep->recfmt != cpu_to_le16(NVME_RDMA_CM_FMT_1_0))
		return;
	queue->crqsize = le16_to_cpu(rep->crqsize);
	if (queue->crqsize && queue->crqsize < queue->size)
		dev_warn(queue->ctrl->ctrl.device,
			 "queue %d: target receive queue %u is smaller than our depth %u\n",
			 queue->qid, queue->crqsize, queue->size);
}

static int xrdma_cm_handler(struct rdma_cm_id *cm_id,
			    struct rdma_cm_event *ev)
{
	struct xrdma_queue *queue = cm_id->context;
	struct nvme_ctrl *nctrl = &queue->ctrl->ctrl;

	trace_xrdma_cm_event(queue, ev->event, ev->status);
	dev_dbg(nctrl->device, "queue %d: cm event %s (%d), status %d\n",
		queue->qid, rdma_event_msg(ev->event), ev->event, ev->status);

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		xrdma_cm_step_done(queue, 0);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		xrdma_cm_established(queue, ev);
		xrdma_cm_step_done(queue, 0);
		break;
	case RDMA_CM_EVENT_REJECTED:
		xrdma_cm_step_done(queue, xrdma_cm_rejected(queue, ev));
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		dev_err(nctrl->device, "queue %d: %s (status %d)\n",
			queue->qid, rdma_event_msg(ev->event), ev->status);
		xrdma_cm_step_done(queue, ev->status == -ETIMEDOUT ?
				   -ETIMEDOUT : -EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/*
		 * The ib_client removal callback deletes live controllers;
		 * a connect in progress just fails, and fast.
		 */
		if (!test_bit(XRDMA_Q_CONNECTED, &queue->flags))
			xrdma_cm_step_done(queue, -ENODEV);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	default:
		if (!test_bit(XRDMA_Q_CONNECTED, &queue->flags)) {
			/* mid-connect: fail the awaited step */
			xrdma_cm_step_done(queue, -ECONNRESET);
			break;
		}
		if (test_bit(XRDMA_Q_LIVE, &queue->flags))
			dev_info(nctrl->device, "queue %d: %s, recovering\n",
				 queue->qid, rdma_event_msg(ev->event));
		xrdma_error_recovery(queue->ctrl);
		break;
	}
	/* Never return non-zero: the cm_id is ours to destroy. */
	return 0;
}

/* Issue one CM step and wait, bounded, for the event that ends it. */
static int xrdma_cm_wait(struct xrdma_queue *queue,
			 enum rdma_cm_event_type event, unsigned int ms)
{
	long left;

	left = wait_for_completion_killable_timeout(&queue->cm_done,
						    msecs_to_jiffies(ms));
	if (left == 0) {
		dev_err(queue->ctrl->ctrl.device,
			"queue %d: timed out after %u ms waiting for CM event %s\n",
			queue->qid, ms, rdma_event_msg(event));
		return -ETIMEDOUT;
	}
	if (left < 0)
		return -EINTR;
	return queue->cm_error;
}

static void xrdma_cm_arm(struct xrdma_queue *queue)
{
	reinit_completion(&queue->cm_done);
	queue->cm_error = -ETIMEDOUT;
}

static int xrdma_cm_request(struct xrdma_queue *queue)
{
	struct xrdma_ctrl *ctrl = queue->ctrl;
	struct rdma_conn_param param = { };
	struct nvme_rdma_cm_req req = { };

	req.recfmt = cpu_to_le16(NVME_RDMA_CM_FMT_1_0);
	req.qid = cpu_to_le16(queue->qid);
	/* our receive ring size, and our send queue size (0's based) */
	req.hrqsize = cpu_to_le16(queue->size);
	req.hsqsize = cpu_to_le16(queue->size - 1);
	if (queue->qid)
		req.cntlid = cpu_to_le16(ctrl->ctrl.cntlid);

	param.private_data = &req;
	param.private_data_len = sizeof(req);
	param.flow_control = 1;
	/* the target RDMA-READs our write data: offer it read credits */
	param.responder_resources = queue->dev->max_rd_atom;
	param.initiator_depth = 0;
	param.retry_count = 7;
	param.rnr_retry_count = 7;

	return rdma_connect(queue->cm_id, &param);
}

/**
 * xrdma_cm_port_up() - whether a queue's port can carry CM messages now
 * @queue: a queue with a CM id bound to a device
 *
 * A CM message posted while the port is down does not just get lost on
 * rdma_rxe: the failed send moves the device's GSI QP (QP1) to the error
 * state for good, and no connection through that device can be made again
 * until it is re-created.  So no connect request, no DREQ and no CM id
 * destruction (which sends a DREQ) goes out while this says false.
 *
 * Return: true if the port is ACTIVE, or if that cannot be told.
 */
bool xrdma_cm_port_up(struct xrdma_queue *queue)
{
	enum ib_port_state state;

	/*
	 * The cached state, updated by ib_core on every port event: asking
	 * the driver (ib_query_port()) takes the RTNL on RoCE devices and
	 * makes rxe log the link speed each time.
	 */
	if (!queue->cm_id || !queue->cm_id->device ||
	    ib_get_cached_port_state(queue->cm_id->device,
				     queue->cm_id->port_num, &state))
		return true;
	return state == IB_PORT_ACTIVE;
}

/* No connect request through a port that is down (see above). */
static int xrdma_cm_port_active(struct xrdma_queue *queue)
{
	if (xrdma_cm_port_up(queue))
		return 0;
	dev_info(queue->ctrl->ctrl.device,
		 "queue %d: %s port %u is not active, not connecting now\n",
		 queue->qid, dev_name(&queue->cm_id->device->dev),
		 queue->cm_id->port_num);
	return -ENETDOWN;
}

/**
 * xrdma_cm_connect() - connect a queue: CM id, QP and rings, RC connection
 * @queue: queue with ctrl, qid and size set
 *
 * On success the queue has an established connection and its receive ring
 * is posted.  On failure nothing is left allocated.
 *
 * Return: 0, -ESTALE for a stale-connection reject (worth retrying at
 * once), or another negative errno.
 */
int xrdma_cm_connect(struct xrdma_queue *queue)
{
	struct xrdma_ctrl *ctrl = queue->ctrl;
	struct nvmf_ctrl_options *opts = ctrl->ctrl.opts;
	struct sockaddr *src = NULL;
	int ret;

	queue->cm_id = rdma_create_id(&init_net, xrdma_cm_handler, queue,
				      RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(queue->cm_id)) {
		ret = PTR_ERR(queue->cm_id);
		dev_err(ctrl->ctrl.device, "queue %d: rdma_create_id: %d\n",
			queue->qid, ret);
		return ret;
	}
	if (opts->tos >= 0)
		rdma_set_service_type(queue->cm_id, opts->tos);
	if (opts->mask & NVMF_OPT_HOST_TRADDR)
		src = (struct sockaddr *)&ctrl->src_addr;

	xrdma_cm_arm(queue);
	ret = rdma_resolve_addr(queue->cm_id, src,
				(struct sockaddr *)&ctrl->addr,
				XRDMA_CM_RESOLVE_MS);
	if (!ret)
		ret = xrdma_cm_wait(queue, RDMA_CM_EVENT_ADDR_RESOLVED,
				    XRDMA_CM_RESOLVE_MS + 1000);
	if (ret) {
		dev_err(ctrl->ctrl.device,
			"queue %d: cannot resolve address %pISpcs: %d\n",
			queue->qid, &ctrl->addr, ret);
		goto out_destroy_id;
	}

	ret = xrdma_cm_port_active(queue);
	if (ret)
		goto out_destroy_id;

	ret = xrdma_queue_create_ib(queue);
	if (ret)
		goto out_destroy_id;

	xrdma_cm_arm(queue);
	ret = rdma_resolve_route(queue->cm_id, XRDMA_CM_RESOLVE_MS);
	if (!ret)
		ret = xrdma_cm_wait(queue, RDMA_CM_EVENT_ROUTE_RESOLVED,
				    XRDMA_CM_RESOLVE_MS + 1000);
	if (ret) {
		dev_err(ctrl->ctrl.device,
			"queue %d: cannot resolve route to %pISpcs: %d\n",
			queue->qid, &ctrl->addr, ret);
		goto out_destroy_ib;
	}

	xrdma_cm_arm(queue);
	ret = xrdma_cm_request(queue);
	if (!ret)
		ret = xrdma_cm_wait(queue, RDMA_CM_EVENT_ESTABLISHED,
				    XRDMA_CM_ESTABLISH_MS);
	if (ret) {
		if (ret != -ESTALE)
			dev_err(ctrl->ctrl.device,
				"queue %d: RDMA connection to %pISpcs failed: %d\n",
				queue->qid, &ctrl->addr, ret);
		goto out_destroy_ib;
	}
	set_bit(XRDMA_Q_CONNECTED, &queue->flags);
	return 0;

out_destroy_ib:
	rdma_disconnect(queue->cm_id);
	xrdma_queue_destroy_ib(queue);
out_destroy_id:
	rdma_destroy_id(queue->cm_id);
	queue->cm_id = NULL;
	return ret;
}

/**
 * xrdma_cm_destroy() - release a queue's CM id
 * @queue: queue whose IB resources are already destroyed
 */
void xrdma_cm_destroy(struct xrdma_queue *queue)
{
	rdma_destroy_id(queue->cm_id);
	queue->cm_id = NULL;
}
