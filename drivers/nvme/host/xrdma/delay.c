// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: delay points, which widen the windows in which two actors of the
 * controller life cycle meet, so that a test hits the interleaving every
 * time instead of once in a thousand runs.
 *
 *   /sys/kernel/debug/nvme-xrdma/delay/<point>    milliseconds, 0 = off
 *
 * io_setup       a setup whose admin queue is live, before its I/O queues
 *                (any controller, one being created too: fault/io_setup_hold
 *                cannot be armed before the controller exists)
 * queues_free    the free of a controller, once its queue array is gone
 * port_up        a port-up event, between taking a waiting reconnect off
 *                its timer and queueing it to run now
 * io_start       a setup whose I/O queues are connected, before their
 *                fabrics Connects
 * queue_stop     the stop of a queue, after its drain, stop_lock held
 * rsp_copy       a response to a read through the read pool, before its
 *                data is copied out of the slot (in the CQ's handler)
 * queue_rq       a command of an I/O queue, started, before it is linked
 *                to its queue's send chain (under blk-mq's RCU read lock)
 * remove_one     the removal of an RDMA device, after our client let go
 *                of it and before rdma_cm's removal runs
 * resize         a reconnect's resize of the I/O tag set, tagset_lock
 *                held, before blk_mq_update_nr_hw_queues()
 * drain_done     a CQ's poller that just reaped the last marker of its
 *                queue's drain, before it reaps what comes after in the
 *                CQ (the stop goes on without it)
 * go_live        a setup whose queues all came up, between its check that
 *                no connection was lost and no command timed out, and its
 *                change to LIVE (teardown_lock held)
 *
 * Each point holds for its value every time it is passed, and logs it
 * before and after:
 * it sleeps where it may, and busy-waits where it may not (rsp_copy and
 * drain_done in a softirq or a direct poll, queue_rq always: preemptible() does not see
 * a preemptible RCU read lock), for XRDMA_DELAY_ATOMIC_MAX_MS at most.
 * The values are module-wide, not per controller.  Cost when off: one
 * static key, a no-op jump until a point is first set, as for fault.c.
 * Built in the test flavour alone (make XRDMA_TEST_HOOKS=1), as fault.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/jump_label.h>

#include "xrdma.h"

DEFINE_STATIC_KEY_FALSE(xrdma_delay_key);

/* Longest a point may hold: a test's window, never a hang. */
#define XRDMA_DELAY_MAX_MS	30000
/* ... and where it may not sleep: well within the soft lockup detector's */
#define XRDMA_DELAY_ATOMIC_MAX_MS	5000

static const char * const xrdma_delay_names[XRDMA_DELAY_NR] = {
	[XRDMA_DELAY_IO_SETUP]		= "io_setup",
	[XRDMA_DELAY_QUEUES_FREE]	= "queues_free",
	[XRDMA_DELAY_PORT_UP]		= "port_up",
	[XRDMA_DELAY_IO_START]		= "io_start",
	[XRDMA_DELAY_QUEUE_STOP]	= "queue_stop",
	[XRDMA_DELAY_RSP_COPY]		= "rsp_copy",
	[XRDMA_DELAY_QUEUE_RQ]		= "queue_rq",
	[XRDMA_DELAY_REMOVE_ONE]	= "remove_one",
	[XRDMA_DELAY_RESIZE]		= "resize",
	[XRDMA_DELAY_DRAIN_DONE]	= "drain_done",
	[XRDMA_DELAY_GO_LIVE]		= "go_live",
};

/* Points passed in a read-side critical section, which must not sleep */
static const bool xrdma_delay_busy[XRDMA_DELAY_NR] = {
	[XRDMA_DELAY_QUEUE_RQ]		= true,
};

static atomic_t xrdma_delay_ms[XRDMA_DELAY_NR];

/**
 * __xrdma_delay() - hold at a delay point that is set (the armed path)
 * @point: the point passed
 *
 * Only reached through xrdma_delay() once a point was set.
 */
void __xrdma_delay(enum xrdma_delay_point point)
{
	unsigned int ms = atomic_read(&xrdma_delay_ms[point]);

	if (!ms)
		return;
	if (preemptible() && !xrdma_delay_busy[point]) {
		pr_info("delay point %s: holding %u ms\n",
			xrdma_delay_names[point], ms);
		msleep(ms);
	} else {
		ms = min(ms, XRDMA_DELAY_ATOMIC_MAX_MS);
		pr_info("delay point %s: holding %u ms, busy\n",
			xrdma_delay_names[point], ms);
		mdelay(ms);
	}
	pr_info("delay point %s: released\n", xrdma_delay_names[point]);
}

static int xrdma_delay_get(void *data, u64 *val)
{
	*val = atomic_read(data);
	return 0;
}

static int xrdma_delay_set(void *data, u64 val)
{
	if (val > XRDMA_DELAY_MAX_MS)
		return -ERANGE;
	if (val)
		static_branch_enable(&xrdma_delay_key);
	atomic_set(data, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(xrdma_delay_fops, xrdma_delay_get, xrdma_delay_set,
			 "%llu\n");

/*
 * The fault and delay hooks' static keys, on from the start.  Arming a hook
 * otherwise turns its key on under traffic, which patches the text that
 * other CPUs run; under QEMU's multi-threaded TCG that can leave a stale
 * int3 in another vCPU's translated code ("Oops: int3" at a hook).  Test
 * rigs load the module with it; it costs the hot path an atomic read.
 */
static bool test_hooks;
module_param(test_hooks, bool, 0444);
MODULE_PARM_DESC(test_hooks,
		 "turn the fault and delay hooks on at load, so arming one patches no code (test rigs; default off)");

/**
 * xrdma_hooks_init() - the module-wide part of the fault and delay hooks
 * @root: the module's debugfs directory, which removes delay/ with itself
 *
 * Turns the hooks' static keys on if test_hooks asks, and creates the
 * delay/ directory.
 */
void xrdma_hooks_init(struct dentry *root)
{
	struct dentry *dir;
	int i;

	if (test_hooks) {
		static_branch_enable(&xrdma_fault_key);
		static_branch_enable(&xrdma_delay_key);
	}
	dir = debugfs_create_dir("delay", root);
	for (i = 0; i < XRDMA_DELAY_NR; i++)
		debugfs_create_file_unsafe(xrdma_delay_names[i], 0600, dir,
					   &xrdma_delay_ms[i],
					   &xrdma_delay_fops);
}
