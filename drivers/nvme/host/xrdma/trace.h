/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xrdma: tracepoints, in their own trace system "nvme_xrdma".
 *
 *   echo 1 > /sys/kernel/tracing/events/nvme_xrdma/enable
 *
 * Every event records the controller instance (N of /dev/nvmeN) so the
 * events of several controllers can be told apart, and the queue id where
 * there is one.  Objects are only dereferenced in TP_fast_assign, that is
 * while the event is enabled.
 */
#include "xrdma.h"

#undef TRACE_SYSTEM
#define TRACE_SYSTEM nvme_xrdma

#if !defined(_XRDMA_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _XRDMA_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_cm.h>
#include <trace/misc/rdma.h>

TRACE_DEFINE_ENUM(XRDMA_DATA_NONE);
TRACE_DEFINE_ENUM(XRDMA_DATA_INLINE);
TRACE_DEFINE_ENUM(XRDMA_DATA_FRWR);

#define xrdma_show_data_kind(kind)				\
	__print_symbolic(kind,					\
			 { XRDMA_DATA_NONE,	"none" },	\
			 { XRDMA_DATA_INLINE,	"inline" },	\
			 { XRDMA_DATA_FRWR,	"frwr" })

TRACE_DEFINE_ENUM(XRDMA_REQ_SEND);
TRACE_DEFINE_ENUM(XRDMA_REQ_RESP);
TRACE_DEFINE_ENUM(XRDMA_REQ_INV);

#define xrdma_show_waiting(bits)			\
	__print_flags(bits, "|",			\
		      { XRDMA_REQ_SEND,	"SEND" },	\
		      { XRDMA_REQ_RESP,	"RESP" },	\
		      { XRDMA_REQ_INV,	"INV" })

TRACE_DEFINE_ENUM(NVME_CTRL_NEW);
TRACE_DEFINE_ENUM(NVME_CTRL_LIVE);
TRACE_DEFINE_ENUM(NVME_CTRL_RESETTING);
TRACE_DEFINE_ENUM(NVME_CTRL_CONNECTING);
TRACE_DEFINE_ENUM(NVME_CTRL_DELETING);
TRACE_DEFINE_ENUM(NVME_CTRL_DELETING_NOIO);
TRACE_DEFINE_ENUM(NVME_CTRL_DEAD);

#define xrdma_show_ctrl_state(state)					\
	__print_symbolic(state,						\
		{ NVME_CTRL_NEW,		"new" },		\
		{ NVME_CTRL_LIVE,		"live" },		\
		{ NVME_CTRL_RESETTING,		"resetting" },		\
		{ NVME_CTRL_CONNECTING,		"connecting" },		\
		{ NVME_CTRL_DELETING,		"deleting" },		\
		{ NVME_CTRL_DELETING_NOIO,	"deleting_noio" },	\
		{ NVME_CTRL_DEAD,		"dead" })

TRACE_EVENT(xrdma_cm_event,
	    TP_PROTO(struct xrdma_queue *queue,
		     enum rdma_cm_event_type event, int status),

	    TP_ARGS(queue, event, status),

	    TP_STRUCT__entry(__field(int, instance)
			     __field(u16, qid)
			     __field(unsigned int, event)
			     __field(int, status)),

	    TP_fast_assign(__entry->instance = queue->ctrl->ctrl.instance;
			   __entry->qid = queue->qid;
			   __entry->event = event;
			   __entry->status = status;),

	    TP_printk("nvme%d qid=%u event=%s status=%d",
		      __entry->instance, __entry->qid,
		      rdma_show_cm_event(__entry->event), __entry->status)
);

TRACE_EVENT(xrdma_recv,
	    TP_PROTO(struct xrdma_queue *queue, u16 cid, u16 status,
		     bool remote_inv),

	    TP_ARGS(queue, cid, status, remote_inv),

	    TP_STRUCT__entry(__field(int, instance)
			     __field(u16, qid)
			     __field(u16, cid)
			     __field(u16, status)
			     __field(bool, remote_inv)),

	    TP_fast_assign(__entry->instance = queue->ctrl->ctrl.instance;
			   __entry->qid = queue->qid;
			   __entry->cid = cid;
			   __entry->status = status;
			   __entry->remote_inv = remote_inv;),

	    /* bit 0 of the status field is the phase tag */
	    TP_printk("nvme%d qid=%u cid=%#x status=%#x remote_inv=%d",
		      __entry->instance, __entry->qid, __entry->cid,
		      __entry->status >> 1, __entry->remote_inv)
);

TRACE_EVENT(xrdma_post,
	    TP_PROTO(struct xrdma_queue *queue, u32 nr_wr),

	    TP_ARGS(queue, nr_wr),

	    TP_STRUCT__entry(__field(int, instance)
			     __field(u16, qid)
			     __field(u32, nr_wr)),

	    TP_fast_assign(__entry->instance = queue->ctrl->ctrl.instance;
			   __entry->qid = queue->qid;
			   __entry->nr_wr = nr_wr;),

	    TP_printk("nvme%d qid=%u nr_wr=%u",
		      __entry->instance, __entry->qid, __entry->nr_wr)
);

TRACE_EVENT(xrdma_queue_rq,
	    TP_PROTO(struct xrdma_queue *queue, struct request *rq,
		     struct xrdma_request *req),

	    TP_ARGS(queue, rq, req),

	    TP_STRUCT__entry(__field(int, instance)
			     __field(u16, qid)
			     __field(u16, cid)
			     __field(u8, opcode)
			     __field(u8, kind)
			     __field(unsigned int, bytes)),

	    TP_fast_assign(__entry->instance = queue->ctrl->ctrl.instance;
			   __entry->qid = queue->qid;
			   __entry->cid = nvme_cid(rq);
			   __entry->opcode = req->cmd.common.opcode;
			   __entry->kind = req->kind;
			   __entry->bytes = blk_rq_payload_bytes(rq);),

	    TP_printk("nvme%d qid=%u cid=%#x opcode=%#x data=%s bytes=%u",
		      __entry->instance, __entry->qid, __entry->cid,
		      __entry->opcode, xrdma_show_data_kind(__entry->kind),
		      __entry->bytes)
);

TRACE_EVENT(xrdma_timeout,
	    TP_PROTO(struct xrdma_queue *queue, struct request *rq,
		     int waiting),

	    TP_ARGS(queue, rq, waiting),

	    TP_STRUCT__entry(__field(int, instance)
			     __field(u16, qid)
			     __field(u16, cid)
			     __field(u8, opcode)
			     __field(unsigned int, waiting)),

	    /* nvme_req(rq)->cmd is the PDU's SQE (xrdma_request.cmd) */
	    TP_fast_assign(__entry->instance = queue->ctrl->ctrl.instance;
			   __entry->qid = queue->qid;
			   __entry->cid = nvme_cid(rq);
			   __entry->opcode = nvme_req(rq)->cmd->common.opcode;
			   __entry->waiting = waiting;),

	    TP_printk("nvme%d qid=%u cid=%#x opcode=%#x waiting=%s",
		      __entry->instance, __entry->qid, __entry->cid,
		      __entry->opcode, xrdma_show_waiting(__entry->waiting))
);

TRACE_EVENT(xrdma_state,
	    TP_PROTO(struct xrdma_ctrl *ctrl, const char *what),

	    TP_ARGS(ctrl, what),

	    TP_STRUCT__entry(__field(int, instance)
			     __field(unsigned int, state)
			     __string(what, what)),

	    TP_fast_assign(__entry->instance = ctrl->ctrl.instance;
			   __entry->state = nvme_ctrl_state(&ctrl->ctrl);
			   __assign_str(what);),

	    TP_printk("nvme%d %s state=%s",
		      __entry->instance, __get_str(what),
		      xrdma_show_ctrl_state(__entry->state))
);

#endif /* _XRDMA_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace

#include <trace/define_trace.h>
