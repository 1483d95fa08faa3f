// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: fault injection for the local failures no target can provoke.
 *
 *   /sys/kernel/debug/nvme-xrdma/nvmeN/fault/post_send     ib_post_send()
 *   /sys/kernel/debug/nvme-xrdma/nvmeN/fault/post_recv     ib_post_recv()
 *   /sys/kernel/debug/nvme-xrdma/nvmeN/fault/mr_exhausted  ib_mr_pool_get()
 *   /sys/kernel/debug/nvme-xrdma/nvmeN/fault/dma_map       ib_dma_map_sg()
 *   /sys/kernel/debug/nvme-xrdma/nvmeN/fault/dma_map_last  ib_dma_map_sg()
 *                                                          of a batch's
 *                                                          last request
 *   /sys/kernel/debug/nvme-xrdma/nvmeN/fault/cq_error      a receive completion
 *   /sys/kernel/debug/nvme-xrdma/nvmeN/fault/drain         a QP drain
 *   /sys/kernel/debug/nvme-xrdma/nvmeN/fault/post_send_reg ib_post_send()
 *                                                          of a REG_MR chain
 *   /sys/kernel/debug/nvme-xrdma/nvmeN/fault/aen           the AEN's post
 *   /sys/kernel/debug/nvme-xrdma/nvmeN/fault/quiesce_hold  a teardown of
 *                                                          the I/O queues
 *   /sys/kernel/debug/nvme-xrdma/nvmeN/fault/live_hold     an I/O queue's
 *                                                          Connect success
 *   /sys/kernel/debug/nvme-xrdma/nvmeN/fault/create_qp     rdma_create_qp()
 *                                                          of one I/O queue
 *   /sys/kernel/debug/nvme-xrdma/nvmeN/fault/io_setup_hold a controller
 *                                                          setup, before
 *                                                          its I/O queues
 *   /sys/kernel/debug/nvme-xrdma/nvmeN/fault/resize_short  a reconnect's
 *                                                          growth of the
 *                                                          I/O tag set
 *   /sys/kernel/debug/nvme-xrdma/nvmeN/fault/short_page_list
 *                                                          the FRWR page
 *                                                          list an I/O
 *                                                          queue's device
 *                                                          allows
 *
 * Writing N to a file makes the next N such calls on the controller's I/O
 * queues fail as the provider would report it (-ENOMEM, no MR, no mapped
 * entries, a completion with IB_WC_GENERAL_ERR, a drain that times out
 * at once); reading it gives what is left.  post_send_reg fails half way:
 * the next N doorbells whose chain holds a REG_MR post the chain up to and
 * including its first REG_MR and refuse the rest, that REG_MR's SEND
 * first, as a full send queue would.  dma_map_last fails the mapping of
 * the next N requests that ->queue_rq gets as the last of their batch
 * (bd->last), the one after which blk-mq calls no ->commit_rqs.  The
 * admin queue is never hit, so the controller can always recover, but by
 * aen, which fails the post of the Asynchronous Event Request that only
 * the admin queue carries.
 * quiesce_hold fails nothing: the next N teardowns keep the I/O queues
 * quiesced for a second, the window in which a namespace scan may add a
 * request queue to the tag set (xrdma_teardown_io_queues()).  live_hold
 * fails nothing either: after the next N successful fabrics Connects of an
 * I/O queue, the queue waits 200 ms before it goes live, the window in
 * which a lost connection may stop it (xrdma_queue_start()).
 * create_qp is no count but a queue id: writing K makes the next QP
 * creation of I/O queue K fail with -ENOMEM, as a device out of QPs would,
 * whichever order the I/O queues connect in.  io_setup_hold is no count
 * either: while it is not 0, a controller setup (connect, reset or
 * reconnect) whose admin queue is live waits, for 30 s at most, before
 * its I/O queues resolve their addresses: the window in which a test moves
 * the target's address to another RDMA device, so that one controller has
 * queues on two devices (xrdma_fault_io_setup_hold()).  resize_short
 * makes the next N reconnects that grow the I/O tag set leave it at its
 * old count of hardware queues, as blk_mq_update_nr_hw_queues() does
 * when it cannot allocate for more (it returns nothing, and falls back).
 * short_page_list makes the next N I/O queue setups find their device's
 * FRWR page list one page shorter than it is: the queues of one
 * controller on two providers, the admin queue's rxe allowing one page
 * more per MR than the I/O queues' siw.
 * Debian's kernel has no CONFIG_FAULT_INJECTION: this is our own.
 *
 * One hook is module-wide, a module parameter, so that it survives the
 * module's reloads in a test run:
 *
 *   /sys/module/nvme_xrdma/parameters/no_remote_inv
 *
 * Set, the commands sent from then on ask for no remote invalidation:
 * nvmet-rdma, which otherwise always invalidates, answers them with a
 * plain SEND, and each FRWR command ends with our own LOCAL_INV, as
 * against a target that never invalidates remotely.
 *
 * Built in the test flavour alone (make XRDMA_TEST_HOOKS=1): the module
 * an admin installs has none of these files, no no_remote_inv and no
 * hooks (xrdma.h).
 * Cost when off: the hooks sit behind one static key, a no-op jump until
 * the first time any controller arms a fault or no_remote_inv is set (or
 * from the load, with test_hooks=1: delay.c); it then stays on until
 * the module is unloaded, and an unarmed hook costs an atomic read.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/jump_label.h>
#include <linux/moduleparam.h>
#include <linux/ratelimit.h>

#include "xrdma.h"

DEFINE_STATIC_KEY_FALSE(xrdma_fault_key);

static bool xrdma_no_remote_inv;

/**
 * __xrdma_want_remote_inv() - whether commands ask for remote invalidation
 *	(the slow path of xrdma_want_remote_inv())
 *
 * Only called once a fault hook was used (xrdma_fault_key).
 *
 * Return: false while no_remote_inv is set.
 */
bool __xrdma_want_remote_inv(void)
{
	return !READ_ONCE(xrdma_no_remote_inv);
}

static int xrdma_no_remote_inv_set(const char *val,
				   const struct kernel_param *kp)
{
	int ret = param_set_bool(val, kp);

	if (!ret && READ_ONCE(xrdma_no_remote_inv))
		static_branch_enable(&xrdma_fault_key);
	return ret;
}

static const struct kernel_param_ops xrdma_no_remote_inv_ops = {
	.set	= xrdma_no_remote_inv_set,
	.get	= param_get_bool,
};
module_param_cb(no_remote_inv, &xrdma_no_remote_inv_ops,
		&xrdma_no_remote_inv, 0644);
MODULE_PARM_DESC(no_remote_inv,
		 "test rigs: ask the target for no remote invalidation, so that every FRWR command ends with our own LOCAL_INV, as against a target that never invalidates remotely (default off; read per command)");

/* Most a single write may arm: enough for any test, bounded for atomic_t. */
#define XRDMA_FAULT_MAX		1000000

static const char * const xrdma_fault_names[XRDMA_FAULT_NR] = {
	[XRDMA_FAULT_POST_SEND]		= "post_send",
	[XRDMA_FAULT_POST_RECV]		= "post_recv",
	[XRDMA_FAULT_MR_EXHAUSTED]	= "mr_exhausted",
	[XRDMA_FAULT_DMA_MAP]		= "dma_map",
	[XRDMA_FAULT_CQ_ERROR]		= "cq_error",
	[XRDMA_FAULT_DRAIN]		= "drain",
	[XRDMA_FAULT_POST_SEND_REG]	= "post_send_reg",
	[XRDMA_FAULT_AEN]		= "aen",
	[XRDMA_FAULT_QUIESCE_HOLD]	= "quiesce_hold",
	[XRDMA_FAULT_LIVE_HOLD]		= "live_hold",
	[XRDMA_FAULT_CREATE_QP]		= "create_qp",
	[XRDMA_FAULT_IO_SETUP_HOLD]	= "io_setup_hold",
	[XRDMA_FAULT_DMA_MAP_LAST]	= "dma_map_last",
	[XRDMA_FAULT_RESIZE_SHORT]	= "resize_short",
	[XRDMA_FAULT_SHORT_PAGE_LIST]	= "short_page_list",
};

#define XRDMA_FAULT_RS \
	RATELIMIT_STATE_INIT(xrdma_fault_rs, DEFAULT_RATELIMIT_INTERVAL, \
			     DEFAULT_RATELIMIT_BURST)

static struct ratelimit_state xrdma_fault_rs[XRDMA_FAULT_NR] = {
	[0 ... XRDMA_FAULT_NR - 1] = XRDMA_FAULT_RS,
};

/**
 * __xrdma_fault() - whether to fail this call (the armed slow path)
 * @queue: the queue the call is for
 * @fault: which call
 *
 * Only reached through xrdma_fault() once fault injection was used.
 *
 * Return: true if the caller must fail as the provider would.
 */
bool __xrdma_fault(struct xrdma_queue *queue, enum xrdma_fault fault)
{
	atomic_t *armed = &queue->ctrl->faults[fault];
	bool admin = fault == XRDMA_FAULT_AEN;

	/* the AEN is the admin queue's; any other fault is the I/O queues' */
	if (!queue->qid != admin)
		return false;
	if (fault == XRDMA_FAULT_CREATE_QP) {
		/* armed with the qid of the queue to hit */
		if (atomic_cmpxchg(armed, queue->qid, 0) != queue->qid)
			return false;
	} else if (atomic_dec_if_positive(armed) < 0) {
		return false;
	}
	/* one budget per kind: a burst of one must not mute the others */
	if (__ratelimit(&xrdma_fault_rs[fault]))
		xrdma_qinfo(queue, "injected fault: %s\n",
			    xrdma_fault_names[fault]);
	return true;
}

/**
 * __xrdma_fault_post_send() - ib_post_send() of a chain, faults armed
 * @queue: the queue
 * @head: the chain
 * @bad: set to the first WR not posted, as ib_post_send() does
 *
 * Only called once fault injection was used (xrdma_fault_key): post_send
 * refuses the whole chain, post_send_reg the part after its first REG_MR.
 *
 * Return: 0 or the error the post failed with.
 */
int __xrdma_fault_post_send(struct xrdma_queue *queue,
			    struct ib_send_wr *head,
			    const struct ib_send_wr **bad)
{
	struct ib_send_wr *reg, *rest;
	int ret;

	if (__xrdma_fault(queue, XRDMA_FAULT_POST_SEND))
		return -ENOMEM;
	for (reg = head; reg; reg = reg->next)
		if (reg->opcode == IB_WR_REG_MR && reg->next)
			break;
	if (!reg || !__xrdma_fault(queue, XRDMA_FAULT_POST_SEND_REG))
		return ib_post_send(queue->qp, head, bad);

	/* ours again once posted or refused: restore the link either way */
	rest = reg->next;
	reg->next = NULL;
	ret = ib_post_send(queue->qp, head, bad);
	reg->next = rest;
	if (ret)
		return ret;
	*bad = rest;
	return -ENOMEM;
}

/* Longest io_setup_hold keeps a setup waiting. */
#define XRDMA_FAULT_HOLD_MS	(30 * MSEC_PER_SEC)

/**
 * __xrdma_fault_io_setup_hold() - wait while fault/io_setup_hold is set
 * @ctrl: a controller being set up, its admin queue live
 *
 * Only called once fault injection was used (xrdma_fault_key).  Returns
 * when the knob is 0 again, the controller is being deleted, or after
 * XRDMA_FAULT_HOLD_MS.
 */
void __xrdma_fault_io_setup_hold(struct xrdma_ctrl *ctrl)
{
	atomic_t *hold = &ctrl->faults[XRDMA_FAULT_IO_SETUP_HOLD];
	unsigned long end;

	if (!atomic_read(hold))
		return;
	dev_info(ctrl->ctrl.device,
		 "injected fault: io_setup_hold, I/O queues wait until it is 0\n");
	end = jiffies + msecs_to_jiffies(XRDMA_FAULT_HOLD_MS);
	while (atomic_read(hold) && time_before(jiffies, end)) {
		enum nvme_ctrl_state state = nvme_ctrl_state(&ctrl->ctrl);

		if (state == NVME_CTRL_DELETING ||
		    state == NVME_CTRL_DELETING_NOIO)
			break;
		msleep(100);
	}
}

static int xrdma_fault_get(void *data, u64 *val)
{
	*val = atomic_read(data);
	return 0;
}

static int xrdma_fault_set(void *data, u64 val)
{
	if (val > XRDMA_FAULT_MAX)
		return -ERANGE;
	if (val)
		static_branch_enable(&xrdma_fault_key);
	atomic_set(data, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(xrdma_fault_fops, xrdma_fault_get, xrdma_fault_set,
			 "%llu\n");

/**
 * xrdma_fault_add() - create a controller's fault/ directory
 * @ctrl: the controller
 * @parent: its debugfs directory
 *
 * Removed with @parent.
 */
void xrdma_fault_add(struct xrdma_ctrl *ctrl, struct dentry *parent)
{
	struct dentry *dir = debugfs_create_dir("fault", parent);
	int i;

	for (i = 0; i < XRDMA_FAULT_NR; i++)
		debugfs_create_file_unsafe(xrdma_fault_names[i], 0600, dir,
					   &ctrl->faults[i],
					   &xrdma_fault_fops);
}
