// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: connection management steps.
 *
 * Each step below issues one rdma_cm call and waits, bounded, for the event
 * that ends it, so a black-holed peer costs a known, short time; queue.c
 * strings the steps together.  The event handler only reports the outcome
 * of the awaited step, and turns events on an established connection into
 * error recovery.
 *
 * Down ports: a CM message posted while the port is down does not just get
 * lost on rdma_rxe: the failed send moves the device's GSI QP (QP1) to the
 * error state for good, and no connection through that device can be made
 * again until it is re-created.  So no connect request, no DREQ and no CM id
 * destruction (which sends a DREQ) goes out while xrdma_cm_port_up() says
 * false; xrdma_cm_wait_port() holds a release back until the port is back,
 * and a CM id released while its port is down anyway (a delete, a failed
 * attempt, a wait that ran out) is parked until it is (xrdma_cm_park()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/inetdevice.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_cm.h>

#include "xrdma.h"
#include <trace/events/nvme_xrdma.h>

/*
 * How soon an RC connection whose peer went silent fails with "retry
 * exceeded": each unacknowledged packet is resent after the local ACK
 * timeout, 4.096 us * 2^ack_timeout, retry_count times.  By default
 * (0) rdma_cm chooses it: on RoCE a packet lifetime of 16, so about 4.3 s
 * with 7 retries; on InfiniBand it comes from the subnet manager.  A value
 * also sets the RoCE packet lifetime, and so the CM's own retry timers:
 * with 16 (2.1 s), the first link flap of test_flap wedged rxe's GSI QP
 * (a CM retry through the down port, it seems), so it is not the default
 * until that is understood.  Never "no timer".
 */
static u8 ack_timeout;
module_param(ack_timeout, byte, 0644);
MODULE_PARM_DESC(ack_timeout,
		 "local ACK timeout of new RC connections, 4.096 us * 2^N, 1 to 30 (default 0: rdma_cm's choice, 17 on RoCE)");

static u8 retry_count = 7;
module_param(retry_count, byte, 0644);
MODULE_PARM_DESC(retry_count,
		 "transport retries of new RC connections before \"retry exceeded\", 0 to 7 (default 7)");

static void xrdma_cm_step_done(struct xrdma_queue *queue, int error)
{
	queue->cm_error = error;
	complete(&queue->cm_done);
}

/* Fail the awaited step, saying why (read once the waiter wakes). */
static __printf(3, 4) void xrdma_cm_step_failed(struct xrdma_queue *queue,
						int error, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vsnprintf(queue->cm_why, sizeof(queue->cm_why), fmt, args);
	va_end(args);
	xrdma_cm_step_done(queue, error);
}

/*
 * A distinct errno per cause, for nvme-cli and scripts: no address, no
 * route, unreachable, timed out (refused is a reject, see below).
 */
static int xrdma_cm_event_errno(struct rdma_cm_event *ev)
{
	switch (ev->status) {
	case -ETIMEDOUT:
	case -ENETUNREACH:
	case -EHOSTUNREACH:
	case -EADDRNOTAVAIL:
		return ev->status;
	}
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_ERROR:
		/* -ENODEV: no RDMA device where the route leaves */
		return ev->status == -ENODEV ? -ENETUNREACH : -EADDRNOTAVAIL;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return -ENETUNREACH;
	default:
		return -EHOSTUNREACH;
	}
}

static int xrdma_cm_rejected(struct xrdma_queue *queue,
			     struct rdma_cm_event *ev)
{
	struct rdma_cm_id *cm_id = queue->cm_id;
	const struct nvme_rdma_cm_rej *rej;
	u8 len = 0;

	xrdma_count(queue->ctrl, rejects);
	if (ev->status == IB_CM_REJ_STALE_CONN) {
		xrdma_qinfo(queue, "connect rejected as stale connection, retrying\n");
		return -ESTALE;
	}

	rej = rdma_consumer_reject_data(cm_id, ev, &len);
	if (rej && len >= sizeof(*rej)) {
		u16 sts = le16_to_cpu(rej->sts);

		snprintf(queue->cm_why, sizeof(queue->cm_why),
			 "connect rejected by target: %s (cm %d), NVMe-RDMA status %u (%s)",
			 rdma_reject_msg(cm_id, ev->status), ev->status, sts,
			 nvme_rdma_cm_msg(sts));
	} else {
		snprintf(queue->cm_why, sizeof(queue->cm_why),
			 "connect rejected: %s (cm %d)",
			 rdma_reject_msg(cm_id, ev->status), ev->status);
	}
	return -ECONNREFUSED;
}

/*
 * The target's CM reply tells how many commands it can receive.  Fewer
 * than our depth would stall the queue in RNR retries once it is full:
 * such a connection is refused.
 */
static int xrdma_cm_established(struct xrdma_queue *queue,
				struct rdma_cm_event *ev)
{
	const struct nvme_rdma_cm_rep *rep = ev->param.conn.private_data;
	u16 crqsize = 0;

	if (rep && ev->param.conn.private_data_len >= sizeof(*rep) &&
	    rep->recfmt == cpu_to_le16(NVME_RDMA_CM_FMT_1_0))
		crqsize = le16_to_cpu(rep->crqsize);
	WRITE_ONCE(queue->crqsize, crqsize);
	if (crqsize && crqsize < queue->size) {
		snprintf(queue->cm_why, sizeof(queue->cm_why),
			 "target can receive %u commands, fewer than our queue depth %u",
			 crqsize, queue->size);
		return -EPROTO;
	}
	return 0;
}

/*
 * An established connection is gone: flush the QP at once rather than
 * when the teardown gets to it.  Never wait for a stop or free under way:
 * they flush anyway, and freeing destroys this CM id, which waits for this
 * handler.
 */
static void xrdma_cm_flush(struct xrdma_queue *queue)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	if (!mutex_trylock(&queue->stop_lock))
		return;
	if (test_bit(XRDMA_Q_ALLOCATED, &queue->flags) &&
	    !test_bit(XRDMA_Q_STOPPED, &queue->flags))
		ib_modify_qp(queue->qp, &attr, IB_QP_STATE);
	mutex_unlock(&queue->stop_lock);
}

static int xrdma_cm_parked_event(struct rdma_cm_id *cm_id,
				 struct rdma_cm_event *ev);
static bool xrdma_cm_note_removal(struct xrdma_queue *queue,
				  struct rdma_cm_id *cm_id);

static int xrdma_cm_handler(struct rdma_cm_id *cm_id,
			    struct rdma_cm_event *ev)
{
	struct xrdma_queue *queue = cm_id->context;
	int ret;

	/* a parked id (xrdma_cm_park()) is no longer its queue's */
	if (READ_ONCE(queue->cm_id) != cm_id ||
	    (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL &&
	     !xrdma_cm_note_removal(queue, cm_id)))
		return xrdma_cm_parked_event(cm_id, ev);

	trace_xrdma_cm_event(queue, ev->event, ev->status);
	xrdma_qdbg(queue, "cm event %s (%d), status %d\n",
		   rdma_event_msg(ev->event), ev->event, ev->status);

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		xrdma_cm_step_done(queue, 0);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		ret = xrdma_cm_established(queue, ev);
		/* before the waiter wakes: a DREQ may follow at once */
		if (!ret)
			set_bit(XRDMA_Q_CONNECTED, &queue->flags);
		xrdma_cm_step_done(queue, ret);
		break;
	case RDMA_CM_EVENT_REJECTED:
		xrdma_cm_step_done(queue, xrdma_cm_rejected(queue, ev));
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		if (ev->event == RDMA_CM_EVENT_ADDR_ERROR &&
		    ev->status == -ENODEV)
			xrdma_cm_step_failed(queue, xrdma_cm_event_errno(ev),
					     "no RDMA device where the route to it leaves");
		else
			xrdma_cm_step_failed(queue, xrdma_cm_event_errno(ev),
					     "%s (status %d)",
					     rdma_event_msg(ev->event),
					     ev->status);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/*
		 * The ib_client removal callback has deleted the listed
		 * controllers on the device.  A connect step in progress
		 * fails at once; a controller being set up (not listed yet)
		 * fails its setup at once and releases the device.  Cleared
		 * as for a disconnect: a queue not published yet never is.
		 */
		if (!test_and_clear_bit(XRDMA_Q_CONNECTED, &queue->flags)) {
			xrdma_cm_step_failed(queue, -ENODEV,
					     "RDMA device removed");
			break;
		}
		xrdma_cm_flush(queue);
		xrdma_connection_failed(queue->ctrl);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	default:
		/*
		 * Cleared here so that a queue lost between ESTABLISHED and
		 * its publication (xrdma_queue_publish()) is never used.
		 */
		if (!test_and_clear_bit(XRDMA_Q_CONNECTED, &queue->flags)) {
			/* mid-connect: fail the awaited step */
			xrdma_cm_step_failed(queue, -ECONNRESET, "%s",
					     rdma_event_msg(ev->event));
			break;
		}
		if (test_bit(XRDMA_Q_LIVE, &queue->flags))
			xrdma_qinfo(queue, "%s, recovering\n",
				    rdma_event_msg(ev->event));
		xrdma_cm_flush(queue);
		xrdma_connection_failed(queue->ctrl);
		break;
	}
	/* Never return non-zero: the cm_id is ours to destroy. */
	return 0;
}

/* Get ready for the event that ends the next step. */
static void xrdma_cm_arm(struct xrdma_queue *queue)
{
	reinit_completion(&queue->cm_done);
	queue->cm_error = -ETIMEDOUT;
	queue->cm_why[0] = '\0';
}

/* Wait, bounded, for the event of a step that was issued with @ret. */
static int xrdma_cm_wait(struct xrdma_queue *queue, int ret,
			 enum rdma_cm_event_type event, unsigned int ms)
{
	long left;

	if (ret) {
		snprintf(queue->cm_why, sizeof(queue->cm_why),
			 "rdma_cm refused the step");
		return ret;
	}
	left = wait_for_completion_killable_timeout(&queue->cm_done,
						    msecs_to_jiffies(ms));
	if (left == 0) {
		snprintf(queue->cm_why, sizeof(queue->cm_why),
			 "timed out after %u ms waiting for CM event %s",
			 ms, rdma_event_msg(event));
		return -ETIMEDOUT;
	}
	if (left < 0) {
		snprintf(queue->cm_why, sizeof(queue->cm_why),
			 "interrupted by a fatal signal");
		return -EINTR;
	}
	return queue->cm_error;
}

/*
 * The one line a failed connect attempt of a queue logs: where to, from
 * where, through which device, port and GID (once the address resolved),
 * the step, what ended it, and the errno the attempt fails with.
 */
static void xrdma_cm_failed(struct xrdma_queue *queue, const char *step,
			    int ret)
{
	struct rdma_cm_id *cm_id = queue->cm_id;
	struct sockaddr *dst = &queue->ctrl->addr.sa;
	union ib_gid sgid, dgid;

	if (!cm_id->device) {
		xrdma_qerr(queue, "cannot connect to %pISpc: %s: %s: %pe\n",
			   dst, step, queue->cm_why, ERR_PTR(ret));
		return;
	}
	rdma_read_gids(cm_id, &sgid, &dgid);
	xrdma_qerr(queue,
		   "cannot connect to %pISpc from %pISc via %s port %u (GID %pI6c): %s: %s: %pe\n",
		   dst, &cm_id->route.addr.src_addr,
		   dev_name(&cm_id->device->dev), cm_id->port_num, sgid.raw,
		   step, queue->cm_why, ERR_PTR(ret));
}

/**
 * xrdma_cm_create_id() - create the CM id of a queue
 * @queue: queue with ctrl and qid set
 *
 * Return: 0 or a negative errno.
 */
int xrdma_cm_create_id(struct xrdma_queue *queue)
{
	struct nvmf_ctrl_options *opts = queue->ctrl->ctrl.opts;
	struct rdma_cm_id *cm_id;
	u8 timeout;

	cm_id = rdma_create_id(&init_net, xrdma_cm_handler, queue,
			       RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(cm_id)) {
		xrdma_qerr(queue, "rdma_create_id: %ld\n", PTR_ERR(cm_id));
		return PTR_ERR(cm_id);
	}
	/* the slot's previous id, if its device went, is gone: not this one */
	clear_bit(XRDMA_Q_DEVICE_REMOVED, &queue->flags);
	if (opts->tos >= 0)
		rdma_set_service_type(cm_id, opts->tos);
	/* before route resolution: on RoCE it sets the packet lifetime too */
	timeout = READ_ONCE(ack_timeout);
	if (timeout)
		rdma_set_ack_timeout(cm_id, min_t(u8, timeout, 30));
	queue->cm_id = cm_id;
	init_completion(&queue->cm_done);
	return 0;
}

/*
 * A CM id whose port went down: destroying it would send a DREQ through
 * that port.  It waits here, without its QP, until the port is active,
 * the device goes away or XRDMA_PARK_MS passed.  The reference on the
 * controller keeps the queue slot, the id's event context, in memory; the
 * event handler ignores an id that is no longer its queue's.
 */
struct xrdma_parked_id {
	struct list_head	entry;
	struct rdma_cm_id	*cm_id;
	struct nvme_ctrl	*ctrl;
	unsigned long		deadline;
};

#define XRDMA_PARK_MS		60000

static LIST_HEAD(xrdma_parked_ids);
static DEFINE_MUTEX(xrdma_parked_mutex);
static void xrdma_parked_work_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(xrdma_parked_work, xrdma_parked_work_fn);

/*
 * An event for a parked id.  Only the removal of its device matters:
 * rdma_cm's removal waits for every id on the device, and an id parked
 * after xrdma_remove_one() released the device's ids would hold it until
 * its deadline (up to 60 s), its port state cached down.  Taken off the
 * list here, it is rdma_cm's to destroy (the non-zero return); one that a
 * release took off the list first is that release's.  An id is published
 * as parked (queue->cm_id no longer it) and put on the list in one hold
 * of xrdma_parked_mutex, so an event that finds it parked finds it listed.
 */
static int xrdma_cm_parked_event(struct rdma_cm_id *cm_id,
				 struct rdma_cm_event *ev)
{
	struct xrdma_parked_id *p, *found = NULL;

	if (ev->event != RDMA_CM_EVENT_DEVICE_REMOVAL)
		return 0;
	mutex_lock(&xrdma_parked_mutex);
	list_for_each_entry(p, &xrdma_parked_ids, entry) {
		if (p->cm_id == cm_id) {
			found = p;
			list_del(&p->entry);
			break;
		}
	}
	mutex_unlock(&xrdma_parked_mutex);
	if (!found)
		return 0;
	nvme_put_ctrl(found->ctrl);
	kfree(found);
	return 1;
}

/*
 * The removal of the device of an id its queue still owns: its release,
 * to come, must destroy it rather than park it, or rdma_cm's removal waits
 * for it until its deadline, for a port that never comes back (no DREQ
 * can leave through a device that goes anyway).  Noted under the mutex
 * under which xrdma_cm_park() decides.
 *
 * Return: false if the id was parked meanwhile: the parked path has it.
 */
static bool xrdma_cm_note_removal(struct xrdma_queue *queue,
				  struct rdma_cm_id *cm_id)
{
	bool owned;

	mutex_lock(&xrdma_parked_mutex);
	owned = READ_ONCE(queue->cm_id) == cm_id;
	if (owned)
		set_bit(XRDMA_Q_DEVICE_REMOVED, &queue->flags);
	mutex_unlock(&xrdma_parked_mutex);
	return owned;
}

/* Whether @cm_id's port can carry CM messages now (true if unknown). */
static bool xrdma_cm_id_port_up(struct rdma_cm_id *cm_id)
{
	enum ib_port_state state;

	/*
	 * The cached state, updated by ib_core on every port event: asking
	 * the driver (ib_query_port()) takes the RTNL on RoCE devices and
	 * makes rxe log the link speed each time.
	 */
	struct net_device *ndev;
	bool up;

	if (!cm_id || !cm_id->device ||
	    ib_get_cached_port_state(cm_id->device, cm_id->port_num, &state))
		return true;
	if (state != IB_PORT_ACTIVE)
		return false;
	/*
	 * rdma_rxe marks its port down from its own netdev notifier, which
	 * runs after the netdev was closed: a message posted in between
	 * fails as on a down port.  So a port on a netdev that is not
	 * running is down too.
	 */
	ndev = xrdma_cm_id_netdev(cm_id);
	if (!ndev)
		return true;
	up = netif_running(ndev);
	dev_put(ndev);
	return up;
}

/**
 * xrdma_cm_release_parked() - destroy parked CM ids whose time has come
 * @ibdev: only those on this device, or any if NULL
 * @force: all of them, whatever their port's state
 *
 * Without @force, an id goes once its port is active or its deadline has
 * passed; the work looks again while any is left.
 */
void xrdma_cm_release_parked(struct ib_device *ibdev, bool force)
{
	struct xrdma_parked_id *p, *tmp;
	LIST_HEAD(done);

	mutex_lock(&xrdma_parked_mutex);
	list_for_each_entry_safe(p, tmp, &xrdma_parked_ids, entry) {
		if (ibdev && p->cm_id->device != ibdev)
			continue;
		if (!force && !xrdma_cm_id_port_up(p->cm_id) &&
		    time_before(jiffies, p->deadline))
			continue;
		list_move(&p->entry, &done);
	}
	if (!list_empty(&xrdma_parked_ids))
		queue_delayed_work(system_wq, &xrdma_parked_work, HZ / 2);
	mutex_unlock(&xrdma_parked_mutex);

	list_for_each_entry_safe(p, tmp, &done, entry) {
		rdma_destroy_id(p->cm_id);
		nvme_put_ctrl(p->ctrl);
		kfree(p);
	}
}

static void xrdma_parked_work_fn(struct work_struct *work)
{
	xrdma_cm_release_parked(NULL, false);
}

/**
 * xrdma_cm_port_active() - a port is back: release what waits for it now
 */
void xrdma_cm_port_active(void)
{
	mod_delayed_work(system_wq, &xrdma_parked_work, 0);
}

/**
 * xrdma_cm_exit() - release every parked CM id (module unload)
 *
 * Called once no device is left to us: nothing can park or kick any more.
 */
void xrdma_cm_exit(void)
{
	cancel_delayed_work_sync(&xrdma_parked_work);
	xrdma_cm_release_parked(NULL, true);
}

/*
 * Park @queue's CM id.  Return: false if it is not to be parked (its
 * device is being removed) or cannot be; the caller destroys it then.
 */
static bool xrdma_cm_park(struct xrdma_queue *queue)
{
	struct xrdma_parked_id *p = kzalloc(sizeof(*p), GFP_NOIO);
	struct rdma_cm_id *cm_id = queue->cm_id;
	struct xrdma_ctrl *ctrl = queue->ctrl;

	if (!p)
		return false;
	mutex_lock(&xrdma_parked_mutex);
	if (test_bit(XRDMA_Q_DEVICE_REMOVED, &queue->flags)) {
		mutex_unlock(&xrdma_parked_mutex);
		kfree(p);
		dev_info(ctrl->ctrl.device,
			 "queue %d: %s is being removed: releasing its connection now, its port down\n",
			 queue->qid, dev_name(&cm_id->device->dev));
		return false;
	}
	p->cm_id = cm_id;
	p->ctrl = &ctrl->ctrl;
	p->deadline = jiffies + msecs_to_jiffies(XRDMA_PARK_MS);
	nvme_get_ctrl(p->ctrl);
	dev_info(ctrl->ctrl.device,
		 "queue %d: %s port %u is down: its connection is released once the port is back\n",
		 queue->qid, dev_name(&cm_id->device->dev), cm_id->port_num);
	/* from here an event for the id takes the parked path */
	WRITE_ONCE(queue->cm_id, NULL);
	list_add_tail(&p->entry, &xrdma_parked_ids);
	queue_delayed_work(system_wq, &xrdma_parked_work, HZ / 2);
	mutex_unlock(&xrdma_parked_mutex);
	return true;
}

/**
 * xrdma_cm_destroy_id() - release the CM id of a queue
 * @queue: queue whose QP is already destroyed
 * @req_sent: a connect request went out on it, so its destruction sends
 *	a DREQ or a REJ; parked instead while its port is down (see above),
 *	unless its device is being removed
 */
void xrdma_cm_destroy_id(struct xrdma_queue *queue, bool req_sent)
{
	if (req_sent && !xrdma_cm_id_port_up(queue->cm_id) &&
	    xrdma_cm_park(queue))
		return;
	rdma_destroy_id(queue->cm_id);
	WRITE_ONCE(queue->cm_id, NULL);
}

/*
 * host_iface: its index and, unless host_traddr chose the source (@src
 * NULL), a source address of it in the target's family, looked up anew for
 * every connect since interfaces and addresses come and go.  Routes may
 * still leave through another interface: xrdma_cm_check_iface() checks
 * where the address resolved.
 */
static int xrdma_cm_iface_addr(struct xrdma_queue *queue,
			       union xrdma_sockaddr *src, int *ifindex)
{
	struct xrdma_ctrl *ctrl = queue->ctrl;
	const char *name = ctrl->ctrl.opts->host_iface;
	struct net_device *ndev;
	int ret = 0;

	ndev = dev_get_by_name(&init_net, name);
	if (!ndev) {
		snprintf(queue->cm_why, sizeof(queue->cm_why),
			 "host_iface %s: no such interface", name);
		return -ENODEV;
	}
	*ifindex = ndev->ifindex;
	if (!src)
		goto out_put;
	memset(src, 0, sizeof(*src));
	if (ctrl->addr.sa.sa_family == AF_INET) {
		struct sockaddr_in *sin = &src->in;
		__be32 dst = ctrl->addr.in.sin_addr.s_addr;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = inet_select_addr(ndev, dst,
							RT_SCOPE_LINK);
		if (!sin->sin_addr.s_addr)
			ret = -EADDRNOTAVAIL;
	} else if (IS_ENABLED(CONFIG_IPV6)) {
		struct sockaddr_in6 *sin6 = &src->in6;
		struct sockaddr_in6 *dst = &ctrl->addr.in6;

		sin6->sin6_family = AF_INET6;
		if (ipv6_dev_get_saddr(&init_net, ndev, &dst->sin6_addr, 0,
				       &sin6->sin6_addr))
			ret = -EADDRNOTAVAIL;
		else if (ipv6_addr_type(&sin6->sin6_addr) & IPV6_ADDR_LINKLOCAL)
			sin6->sin6_scope_id = ndev->ifindex;
	} else {
		ret = -EAFNOSUPPORT;
	}
	if (ret)
		snprintf(queue->cm_why, sizeof(queue->cm_why),
			 "host_iface %s has no address of the target's family",
			 name);
out_put:
	dev_put(ndev);
	return ret;
}

/* The resolved address must leave through host_iface, not just start there. */
static int xrdma_cm_check_iface(struct xrdma_queue *queue, int ifindex)
{
	int bound = queue->cm_id->route.addr.dev_addr.bound_dev_if;

	if (bound == ifindex)
		return 0;
	snprintf(queue->cm_why, sizeof(queue->cm_why),
		 "the route leaves through interface index %d, not through host_iface %s",
		 bound, queue->ctrl->ctrl.opts->host_iface);
	return -ENETUNREACH;
}

/**
 * xrdma_cm_resolve_addr() - bind the CM id to a device and an active port
 * @queue: queue with a fresh CM id
 *
 * The source is host_traddr if given, else an address of host_iface if
 * given; with host_iface the resolution must go through that interface.
 *
 * Return: 0, -ENETDOWN if the address resolved to a port that is not
 * active, -ENODEV, -EADDRNOTAVAIL or -ENETUNREACH if host_iface does not
 * exist, has no address or is not the way to the target, or another
 * negative errno.
 */
int xrdma_cm_resolve_addr(struct xrdma_queue *queue)
{
	struct xrdma_ctrl *ctrl = queue->ctrl;
	unsigned int mask = ctrl->ctrl.opts->mask;
	union xrdma_sockaddr iface_src;
	struct sockaddr *src = NULL;
	int ifindex = 0;
	int ret;

	if (mask & NVMF_OPT_HOST_TRADDR)
		src = &ctrl->src_addr.sa;
	if (mask & NVMF_OPT_HOST_IFACE) {
		ret = xrdma_cm_iface_addr(queue, src ? NULL : &iface_src,
					  &ifindex);
		if (ret) {
			xrdma_cm_failed(queue, "source", ret);
			return ret;
		}
		if (!src)
			src = &iface_src.sa;
	}

	xrdma_cm_arm(queue);
	ret = rdma_resolve_addr(queue->cm_id, src,
				&ctrl->addr.sa,
				XRDMA_CM_RESOLVE_MS);
	ret = xrdma_cm_wait(queue, ret, RDMA_CM_EVENT_ADDR_RESOLVED,
			    XRDMA_CM_RESOLVE_MS + 1000);
	if (ret) {
		xrdma_cm_failed(queue, "address resolution", ret);
		return ret;
	}

	if (mask & NVMF_OPT_HOST_IFACE) {
		ret = xrdma_cm_check_iface(queue, ifindex);
		if (ret) {
			xrdma_cm_failed(queue, "source", ret);
			return ret;
		}
	}

	if (!xrdma_cm_port_up(queue)) {
		snprintf(queue->cm_why, sizeof(queue->cm_why),
			 "port not active, not connecting now");
		xrdma_cm_failed(queue, "address resolution", -ENETDOWN);
		return -ENETDOWN;
	}
	return 0;
}

/**
 * xrdma_cm_resolve_route() - resolve the route of a bound CM id
 * @queue: queue whose address is resolved
 *
 * Return: 0 or a negative errno.
 */
int xrdma_cm_resolve_route(struct xrdma_queue *queue)
{
	int ret;

	xrdma_cm_arm(queue);
	ret = rdma_resolve_route(queue->cm_id, XRDMA_CM_RESOLVE_MS);
	ret = xrdma_cm_wait(queue, ret, RDMA_CM_EVENT_ROUTE_RESOLVED,
			    XRDMA_CM_RESOLVE_MS + 1000);
	if (ret)
		xrdma_cm_failed(queue, "route resolution", ret);
	return ret;
}

/**
 * xrdma_cm_establish() - send the connect request and wait for the reply
 * @queue: queue with a resolved route, a QP and a posted receive ring
 *
 * The private data carries the NVMe-oF RDMA connect request: queue id,
 * our receive ring size and send queue size, and the controller id.
 *
 * Return: 0, -ESTALE for a stale-connection reject (worth retrying at
 * once), or another negative errno.
 */
int xrdma_cm_establish(struct xrdma_queue *queue)
{
	struct nvme_rdma_cm_req req = {
		.recfmt		= cpu_to_le16(NVME_RDMA_CM_FMT_1_0),
		.qid		= cpu_to_le16(queue->qid),
		.hrqsize	= cpu_to_le16(queue->size),
		.hsqsize	= cpu_to_le16(queue->size - 1),	/* 0's based */
	};
	struct rdma_conn_param param = {
		.private_data		= &req,
		.private_data_len	= sizeof(req),
		.flow_control		= 1,
		/* the target RDMA-READs our write data: offer it credits */
		.responder_resources	= queue->dev->max_rd_atom,
		.initiator_depth	= 0,
		.retry_count		= min_t(u8, READ_ONCE(retry_count), 7),
		.rnr_retry_count	= 7,	/* receiver not ready: forever */
	};
	int ret;

	if (queue->qid)
		xrdma_cm_req_set_cntlid(&req, queue->ctrl->ctrl.cntlid);

	xrdma_cm_arm(queue);
	ret = rdma_connect(queue->cm_id, &param);
	ret = xrdma_cm_wait(queue, ret, RDMA_CM_EVENT_ESTABLISHED,
			    XRDMA_CM_ESTABLISH_MS);
	if (ret && ret != -ESTALE)
		xrdma_cm_failed(queue, "connection", ret);
	return ret;
}

/**
 * xrdma_cm_disconnect() - say goodbye, if the port can carry it
 * @queue: queue with a CM id
 *
 * The QP drain that follows flushes the QP either way.
 */
void xrdma_cm_disconnect(struct xrdma_queue *queue)
{
	clear_bit(XRDMA_Q_CONNECTED, &queue->flags);
	if (xrdma_cm_port_up(queue))
		rdma_disconnect(queue->cm_id);
}

/**
 * xrdma_cm_port_up() - whether a queue's port can carry CM messages now
 * @queue: a queue with a CM id bound to a device
 *
 * Return: true if the port is ACTIVE, or if that cannot be told.
 */
bool xrdma_cm_port_up(struct xrdma_queue *queue)
{
	return xrdma_cm_id_port_up(queue->cm_id);
}

/**
 * xrdma_cm_wait_port() - hold a release back while the port is down
 * @queue: the admin queue of a controller being torn down, still allocated
 *
 * Releasing a connection sends a DREQ, which must not go out through a
 * port that is down.  The requests have already been ended, so core can
 * fail over meanwhile; only the release waits for the port, polling every
 * 100 ms for at most XRDMA_PORT_WAIT_MS, or until a delete comes in.
 *
 * Return: true if the port was down and is back: a reconnect may go now.
 */
bool xrdma_cm_wait_port(struct xrdma_queue *queue)
{
	struct xrdma_ctrl *ctrl = queue->ctrl;
	unsigned long start = jiffies;
	unsigned long end = start + msecs_to_jiffies(XRDMA_PORT_WAIT_MS);
	enum nvme_ctrl_state state;
	bool up;

	if (!test_bit(XRDMA_Q_ALLOCATED, &queue->flags) ||
	    xrdma_cm_port_up(queue))
		return false;
	dev_info(ctrl->ctrl.device,
		 "%s port %u is down: releasing the connections once it is back (at most %d ms)\n",
		 dev_name(&queue->cm_id->device->dev), queue->cm_id->port_num,
		 XRDMA_PORT_WAIT_MS);
	xrdma_count(ctrl, port_waits);
	trace_xrdma_state(ctrl, XRDMA_EV_PORT_WAIT);
	do {
		msleep(100);
		up = xrdma_cm_port_up(queue);
		state = nvme_ctrl_state(&ctrl->ctrl);
	} while (!up && time_before(jiffies, end) &&
		 state != NVME_CTRL_DELETING && state != NVME_CTRL_DELETING_NOIO);
	dev_info(ctrl->ctrl.device, "port %s after %u ms\n",
		 up ? "back" : "still down",
		 jiffies_to_msecs(jiffies - start));
	return up;
}
