/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xrdma: the newest kernel's API (7.3) on the older ones (Debian's 6.12
 * and Debian 12's 6.1).
 *
 * The driver is written against 7.3.  What another kernel lacks is made
 * here from what it has, chosen by the XRDMA_HAVE_* defines that the
 * build's feature probes (tools/build/probe) generate: a probe compiles
 * against the target's headers or it does not, whatever their version
 * says.  Where a kernel does not just spell a thing otherwise but behaves
 * otherwise, the code that depends on it says so at the spot; grep for
 * XRDMA_HAVE_.  On 7.3 every define is set and nothing here is used.
 */
#ifndef _XRDMA_COMPAT_H
#define _XRDMA_COMPAT_H

#include <linux/blk-mq.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/nvme-rdma.h>
#include <rdma/rdma_cm.h>

#include "nvme.h"
#include "fabrics.h"
#include "xrdma_have.h"

#ifdef XRDMA_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#ifdef XRDMA_HAVE_STR_PLURAL
#include <linux/string_choices.h>
#else
static inline const char *xrdma_str_plural(size_t n)
{
	return n == 1 ? "" : "s";
}

#define str_plural xrdma_str_plural
#endif

#ifndef kzalloc_obj
/* since 7.x one object is allocated by the type of its variable */
#define kzalloc_obj(obj, gfp)	kzalloc(sizeof(obj), gfp)
#endif

#ifndef XRDMA_HAVE_MAP_SG_RQ
/* before 7.3 the request's own queue is named too */
static inline int xrdma_blk_rq_map_sg(struct request *rq,
				      struct scatterlist *sgl)
{
	return blk_rq_map_sg(rq->q, rq, sgl);
}

#define blk_rq_map_sg xrdma_blk_rq_map_sg
#endif

/*
 * A run of reconnect attempts ended with @attempts of them.  Since 7.3
 * the controller's diag/reconnect_count is the attempts of past runs,
 * which the transport adds up, plus the failed ones of the current run.
 */
static inline void xrdma_reconnects_done(struct nvme_ctrl *ctrl,
					 unsigned int attempts)
{
#ifdef XRDMA_HAVE_CTRL_DIAG
	atomic_long_add(attempts, &ctrl->acc_reconnects);
#endif
	ctrl->nr_reconnects = 0;
}

/*
 * The controller's I/O command timeout, in jiffies: since 7.3 its own,
 * which the user may change in sysfs (io_timeout); before, the nvme_core
 * parameter's.
 */
static inline unsigned long xrdma_io_timeout(struct nvme_ctrl *ctrl)
{
#ifdef XRDMA_HAVE_CTRL_TIMEOUTS
	return READ_ONCE(ctrl->io_timeout);
#else
	return NVME_IO_TIMEOUT;
#endif
}

#ifndef XRDMA_HAVE_SCT_SC_MASK
#define NVME_SCT_SC_MASK	0x07ff	/* status code type and code */
#endif

#ifndef XRDMA_HAVE_TAGSET_QUIESCE
/* the same calls under their older names (ctrl.c: how 6.1 quiesces) */
#define nvme_quiesce_io_queues		nvme_stop_queues
#define nvme_unquiesce_io_queues	nvme_start_queues
#define nvme_quiesce_admin_queue	nvme_stop_admin_queue
#define nvme_unquiesce_admin_queue	nvme_start_admin_queue
#endif

#ifndef XRDMA_HAVE_DISABLE_CTRL_SHUTDOWN
static inline int xrdma_nvme_disable_ctrl(struct nvme_ctrl *ctrl, bool shutdown)
{
	return shutdown ? nvme_shutdown_ctrl(ctrl) : nvme_disable_ctrl(ctrl);
}

#define nvme_disable_ctrl xrdma_nvme_disable_ctrl
#endif

#ifndef XRDMA_HAVE_INIT_CTRL_FINISH_BOOL
/*
 * No resume from suspend on fabrics.  6.1 starts keep-alive later, in
 * nvme_start_ctrl(): see xrdma_configure_admin_queue().
 */
static inline int xrdma_nvme_init_ctrl_finish(struct nvme_ctrl *ctrl,
					      bool was_suspended)
{
	return nvme_init_ctrl_finish(ctrl);
}

#define nvme_init_ctrl_finish xrdma_nvme_init_ctrl_finish
#endif

#ifndef XRDMA_HAVE_ADD_CTRL
/*
 * 6.1's nvme_init_ctrl() also names and registers the device, and holds
 * the reference 6.12's nvme_add_ctrl() takes: nothing is left to do.
 * Who frees on a failed nvme_init_ctrl(): see xrdma_create_ctrl().
 */
static inline int xrdma_nvme_add_ctrl(struct nvme_ctrl *ctrl)
{
	return 0;
}

#define nvme_add_ctrl xrdma_nvme_add_ctrl
#endif

#ifndef XRDMA_HAVE_SHOULD_RECONNECT_STATUS
/*
 * 6.1 counts the attempts only.  6.12 also gives up on a status the
 * target marked "do not retry", and on a failed authentication: without
 * that, a connect the target refused for good would be tried until
 * ctrl_loss_tmo, and xrdma_reconnect_status() would have nothing to lift.
 */
static inline bool xrdma_nvmf_should_reconnect(struct nvme_ctrl *ctrl,
					       int status)
{
	if (status > 0 && (status & NVME_STATUS_DNR))
		return false;
	if (status == -EKEYREJECTED || status == -ENOKEY)
		return false;
	return nvmf_should_reconnect(ctrl);
}

#define nvmf_should_reconnect xrdma_nvmf_should_reconnect
#endif

#ifndef XRDMA_HAVE_NVMF_MAP_QUEUES
/* compat.c: the I/O queues of each hctx type, as fabrics hands them out */
unsigned int xrdma_nvmf_nr_io_queues(struct nvmf_ctrl_options *opts);
void xrdma_nvmf_set_io_queues(struct nvmf_ctrl_options *opts, u32 nr,
			      u32 io_queues[HCTX_MAX_TYPES]);
void xrdma_nvmf_map_queues(struct blk_mq_tag_set *set, struct nvme_ctrl *ctrl,
			   u32 io_queues[HCTX_MAX_TYPES]);
#define nvmf_nr_io_queues	xrdma_nvmf_nr_io_queues
#define nvmf_set_io_queues	xrdma_nvmf_set_io_queues
#define nvmf_map_queues		xrdma_nvmf_map_queues
#endif

#ifndef XRDMA_HAVE_RQ_LIST
/*
 * 6.1 chains a plug's requests through rq_next from a bare head pointer,
 * with macros of the names 6.12 gives to functions on a head-and-tail
 * list.  The list type is ours here (see xrdma_mq_queue_rqs()); the macros
 * are not used after this point.
 */
#undef rq_list_add_tail
#undef rq_list_pop
#undef rq_list_peek
#undef rq_list_empty
#define rq_list			xrdma_rq_list
#define rq_list_add_tail	xrdma_rq_list_add_tail
#define rq_list_pop		xrdma_rq_list_pop
#define rq_list_peek		xrdma_rq_list_peek
#define rq_list_empty		xrdma_rq_list_empty

/**
 * struct xrdma_rq_list - requests chained through rq_next, head and tail
 * @head: the first request, NULL if the list is empty
 * @tail: the last request
 */
struct xrdma_rq_list {
	struct request *head;
	struct request *tail;
};

static inline bool xrdma_rq_list_empty(const struct xrdma_rq_list *rl)
{
	return !rl->head;
}

static inline struct request *xrdma_rq_list_peek(struct xrdma_rq_list *rl)
{
	return rl->head;
}

static inline void xrdma_rq_list_add_tail(struct xrdma_rq_list *rl,
					  struct request *rq)
{
	rq->rq_next = NULL;
	if (rl->tail)
		rl->tail->rq_next = rq;
	else
		rl->head = rq;
	rl->tail = rq;
}

static inline struct request *xrdma_rq_list_pop(struct xrdma_rq_list *rl)
{
	struct request *rq = rl->head;

	if (!rq)
		return NULL;
	rl->head = rq->rq_next;
	if (!rl->head)
		rl->tail = NULL;
	rq->rq_next = NULL;
	return rq;
}
#endif

/*
 * An I/O queue's connect request names the controller it joins.  Older
 * headers keep those two bytes in rsvd[], at the same place on the wire.
 */
static inline void xrdma_cm_req_set_cntlid(struct nvme_rdma_cm_req *req,
					   u16 cntlid)
{
#ifdef XRDMA_HAVE_CM_REQ_CNTLID
	req->cntlid = cpu_to_le16(cntlid);
#else
	put_unaligned_le16(cntlid, req->rsvd);
#endif
}

/*
 * The netdev under @cm_id's port, with a reference, or NULL.  6.1 keeps
 * ib_device_get_netdev() to its RDMA core; there the netdev the route was
 * resolved over stands in.  On rxe and siw that is the port's own.  Over
 * a VLAN or a bond on RoCE it is the upper device, which goes down with
 * the port's; on InfiniBand it is the IPoIB device.  Before the route is
 * resolved there is none, and the caller treats that as unknown.
 */
static inline struct net_device *xrdma_cm_id_netdev(struct rdma_cm_id *cm_id)
{
#ifdef XRDMA_HAVE_IB_DEVICE_GET_NETDEV
	return ib_device_get_netdev(cm_id->device, cm_id->port_num);
#else
	struct rdma_dev_addr *addr = &cm_id->route.addr.dev_addr;

	if (!addr->bound_dev_if || !addr->net)
		return NULL;
	return dev_get_by_index(addr->net, addr->bound_dev_if);
#endif
}

#endif /* _XRDMA_COMPAT_H */
