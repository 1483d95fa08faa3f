/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvme-xrdma tracepoints, in their own trace system "nvme_xrdma".
 *
 *   echo 1 > /sys/kernel/tracing/events/nvme_xrdma/enable
 *
 * Every event records the controller instance (N of /dev/nvmeN) so the
 * events of several controllers can be told apart, and the queue id where
 * there is one.  Objects are only dereferenced in TP_fast_assign, that is
 * while the event is enabled.  Include the driver's xrdma.h first: the
 * events take its objects.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM nvme_xrdma

#if !defined(_TRACE_NVME_XRDMA_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_NVME_XRDMA_H

#include <linux/tracepoint.h>
#include <rdma/ib_cm.h>
#include <trace/misc/rdma.h>

TRACE_DEFINE_ENUM(XRDMA_DATA_NONE);
TRACE_DEFINE_ENUM(XRDMA_DATA_INLINE);
TRACE_DEFINE_ENUM(XRDMA_DATA_FRWR);
TRACE_DEFINE_ENUM(XRDMA_DATA_POOL);

#define xrdma_show_data_kind(kind)				\
	__print_symbolic(kind,					\
			 { XRDMA_DATA_NONE,	"none" },	\
			 { XRDMA_DATA_INLINE,	"inline" },	\
			 { XRDMA_DATA_FRWR,	"frwr" },	\
			 { XRDMA_DATA_POOL,	"pool" })

TRACE_DEFINE_ENUM(XRDMA_REQ_SEND);
TRACE_DEFINE_ENUM(XRDMA_REQ_RESP);
TRACE_DEFINE_ENUM(XRDMA_REQ_INV);

#define xrdma_show_waiting(bits)			\
	__print_flags(bits, "|",			\
		      { XRDMA_REQ_SEND,	"SEND" },	\
		      { XRDMA_REQ_RESP,	"RESP" },	\
		      { XRDMA_REQ_INV,	"INV" })

TRACE_DEFINE_ENUM(XRDMA_EV_ERROR_RECOVERY);
TRACE_DEFINE_ENUM(XRDMA_EV_RECONNECT);
TRACE_DEFINE_ENUM(XRDMA_EV_RESET);
TRACE_DEFINE_ENUM(XRDMA_EV_CONNECTED);
TRACE_DEFINE_ENUM(XRDMA_EV_DELETE);
TRACE_DEFINE_ENUM(XRDMA_EV_PORT_WAIT);

#define xrdma_show_ctrl_event(ev)					\
	__print_symbolic(ev,						\
		{ XRDMA_EV_ERROR_RECOVERY,	"error_recovery" },	\
		{ XRDMA_EV_RECONNECT,		"reconnect" },		\
		{ XRDMA_EV_RESET,		"reset" },		\
		{ XRDMA_EV_CONNECTED,		"connected" },		\
		{ XRDMA_EV_DELETE,		"delete" },		\
		{ XRDMA_EV_PORT_WAIT,		"port_wait" })

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

/*
 * Events about one command: where it is, what it is, and one more value,
 * by default enum xrdma_data_kind; an event may print it its own way.
 */
DECLARE_EVENT_CLASS(xrdma_rq_class,
		    TP_PROTO(struct xrdma_queue *queue, struct request *rq,
			     unsigned int val),

		    TP_ARGS(queue, rq, val),

		    TP_STRUCT__entry(__field(int, instance)
				     __field(u16, qid)
				     __field(u16, cid)
				     __field(u8, opcode)
				     __field(unsigned int, bytes)
				     __field(unsigned int, val)),

		    /* nvme_req(rq)->cmd is the PDU's SQE (xrdma_request.cmd) */
		    TP_fast_assign(__entry->instance = queue->ctrl->ctrl.instance;
				   __entry->qid = queue->qid;
				   __entry->cid = nvme_cid(rq);
				   __entry->opcode = nvme_req(rq)->cmd->common.opcode;
				   __entry->bytes = blk_rq_payload_bytes(rq);
				   __entry->val = val;),

		    TP_printk("nvme%d qid=%u cid=%#x opcode=%#x data=%s bytes=%u",
			      __entry->instance, __entry->qid, __entry->cid,
			      __entry->opcode,
			      xrdma_show_data_kind(__entry->val),
			      __entry->bytes)
);

/* a command handed to the queue */
DEFINE_EVENT(xrdma_rq_class, xrdma_queue_rq,
	     TP_PROTO(struct xrdma_queue *queue, struct request *rq,
		      unsigned int val),

	     TP_ARGS(queue, rq, val)
);

/* a command timed out; val is the XRDMA_REQ_* bits it still waits for */
DEFINE_EVENT_PRINT(xrdma_rq_class, xrdma_timeout,
		   TP_PROTO(struct xrdma_queue *queue, struct request *rq,
			    unsigned int val),

		   TP_ARGS(queue, rq, val),

		   TP_printk("nvme%d qid=%u cid=%#x opcode=%#x waiting=%s",
			     __entry->instance, __entry->qid, __entry->cid,
			     __entry->opcode,
			     xrdma_show_waiting(__entry->val))
);

TRACE_EVENT(xrdma_state,
	    TP_PROTO(struct xrdma_ctrl *ctrl, enum xrdma_ctrl_event event),

	    TP_ARGS(ctrl, event),

	    TP_STRUCT__entry(__field(int, instance)
			     __field(unsigned int, event)),

	    TP_fast_assign(__entry->instance = ctrl->ctrl.instance;
			   __entry->event = event;),

	    TP_printk("nvme%d %s", __entry->instance,
		      xrdma_show_ctrl_event(__entry->event))
);

#endif /* _TRACE_NVME_XRDMA_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
