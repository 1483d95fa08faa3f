// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: debugfs statistics.
 *
 *   /sys/kernel/debug/nvme-xrdma/nvmeN/stats          sums over its queues
 *   /sys/kernel/debug/nvme-xrdma/nvmeN/reset_stats    write 1 to zero them
 *   /sys/kernel/debug/nvme-xrdma/nvmeN/q<qid>/stats   one queue
 *   /sys/kernel/debug/nvme-xrdma/nvmeN/fault/          see fault.c
 *   /sys/kernel/debug/nvme-xrdma/delay/                see delay.c
 *
 * fault/ and delay/ exist in the test flavour alone (XRDMA_TEST_HOOKS=1).
 *
 * Every stats file prints one "name value" line per counter.
 *
 * The queue structures live in ctrl->queues for the whole life of the
 * controller, so their counters may be read at any time, even while a
 * queue is torn down or reconnected; nothing a teardown frees (cm_id, QP,
 * CQ, device) is looked at.  The counters are read without locks, so a
 * snapshot is not atomic as a whole, and "inflight" is an estimate.
 *
 * As the debugfs API asks, failures to create files are not checked: an
 * error pointer stored as a directory only makes the calls below no-ops.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/jump_label.h>
#include <linux/kstrtox.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>

#include "xrdma.h"

/* Serialises creating and removing the directories and their pointers. */
static DEFINE_MUTEX(xrdma_debugfs_mutex);
static struct dentry *xrdma_debugfs_root;

static const char * const xrdma_stat_names[] = {
	XRDMA_QUEUE_STATS(XRDMA_STAT_NAME)
};

/* The struct is one u64 per name: show it as an array. */
static_assert(ARRAY_SIZE(xrdma_stat_names) == XRDMA_STAT_NR);

/* Add the counters of @queue, all CPUs, to @v. */
static void xrdma_stats_add(struct xrdma_queue *queue, u64 *v)
{
	struct xrdma_queue_stats st;
	const u64 *c = (const u64 *)&st;
	int i;

	xrdma_queue_stats_read(queue, &st);
	for (i = 0; i < XRDMA_STAT_NR; i++)
		v[i] += c[i];
}

static void xrdma_stats_print(struct seq_file *m, const u64 *v)
{
	const struct xrdma_queue_stats *st = (const void *)v;
	int i;

	for (i = 0; i < XRDMA_STAT_NR; i++)
		seq_printf(m, "%s %llu\n", xrdma_stat_names[i], v[i]);
	/* unlocked reads, or a reset, may see a completion first */
	seq_printf(m, "inflight %llu\n", st->submitted > st->completed ?
		   st->submitted - st->completed : 0);
	/* work requests per doorbell, times 100 */
	seq_printf(m, "wrs_per_post %llu\n",
		   st->posts ? div64_u64(st->wrs * 100, st->posts) : 0);
}

static const char *xrdma_poll_ctx_name(enum ib_poll_context ctx)
{
	switch (ctx) {
	case IB_POLL_SOFTIRQ:
		return "softirq";
	case IB_POLL_WORKQUEUE:
		return "workqueue";
	case IB_POLL_DIRECT:
		return "direct";
	default:
		return "other";
	}
}

static int xrdma_queue_stats_show(struct seq_file *m, void *unused)
{
	struct xrdma_queue *queue = m->private;
	u64 v[XRDMA_STAT_NR] = { };

	xrdma_stats_add(queue, v);
	xrdma_stats_print(m, v);
	seq_printf(m, "depth %u\n", READ_ONCE(queue->size));
	seq_printf(m, "crqsize %u\n", READ_ONCE(queue->crqsize));
	seq_printf(m, "kept_mrs %u\n", READ_ONCE(queue->nr_kept_mrs));
	seq_printf(m, "cq_context %s\n",
		   xrdma_poll_ctx_name(READ_ONCE(queue->cq_ctx)));
	seq_printf(m, "read_pool %u\n", READ_ONCE(queue->pool_slot));
	seq_printf(m, "read_pool_tags %u\n", READ_ONCE(queue->pool_tags));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(xrdma_queue_stats);

static int xrdma_ctrl_stats_show(struct seq_file *m, void *unused)
{
	struct xrdma_ctrl *ctrl = m->private;
	u32 count = READ_ONCE(ctrl->ctrl.queue_count);
	u64 v[XRDMA_STAT_NR] = { };
	u32 i, allocated = 0;

	/* queue_count never exceeds the size of the queues array */
	for (i = 0; i < count; i++) {
		struct xrdma_queue *queue = &ctrl->queues[i];

		if (!test_bit(XRDMA_Q_ALLOCATED, &queue->flags))
			continue;
		xrdma_stats_add(queue, v);
		allocated++;
	}
	seq_printf(m, "queues %u\n", allocated);
	xrdma_stats_print(m, v);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(xrdma_ctrl_stats);

/*
 * Zero one queue's counters.  An update racing with the reset may survive
 * it, which is fine for a debugging aid.
 */
static void xrdma_queue_reset_stats(struct xrdma_queue *queue)
{
	int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(queue->stats, cpu), 0,
		       sizeof(struct xrdma_queue_stats));
}

/* "echo 1 > reset_stats": zero every queue's counters. */
static int xrdma_reset_stats_set(void *data, u64 val)
{
	struct xrdma_ctrl *ctrl = data;
	u32 n = READ_ONCE(ctrl->ctrl.queue_count);
	u32 i;

	if (val != 1)
		return -EINVAL;
	for (i = 0; i < n; i++)
		xrdma_queue_reset_stats(&ctrl->queues[i]);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(xrdma_reset_stats_fops, NULL, xrdma_reset_stats_set,
			 "%llu\n");

/* Is @dir a directory we created, still there?  Call with the mutex. */
static bool xrdma_debugfs_present(struct dentry *dir)
{
	/* removing the root removed everything below it */
	return !IS_ERR_OR_NULL(xrdma_debugfs_root) && !IS_ERR_OR_NULL(dir);
}

static void __xrdma_debugfs_queue_add(struct xrdma_queue *queue)
{
	struct xrdma_ctrl *ctrl = queue->ctrl;
	char name[16];

	lockdep_assert_held(&xrdma_debugfs_mutex);

	/* no controller directory yet (or any more), or already added */
	if (!ctrl || !xrdma_debugfs_present(ctrl->debugfs) || queue->debugfs)
		return;

	snprintf(name, sizeof(name), "q%u", queue->qid);
	queue->debugfs = debugfs_create_dir(name, ctrl->debugfs);
	debugfs_create_file("stats", 0444, queue->debugfs, queue,
			    &xrdma_queue_stats_fops);
}

/**
 * xrdma_debugfs_queue_add() - create the debugfs directory of a queue
 * @queue: a queue that was just allocated
 *
 * Creates q<qid>/stats below the controller's directory.  Does nothing if
 * the controller has no directory (yet): xrdma_debugfs_ctrl_add() then
 * adds the directories of the queues allocated by that time.
 */
void xrdma_debugfs_queue_add(struct xrdma_queue *queue)
{
	mutex_lock(&xrdma_debugfs_mutex);
	__xrdma_debugfs_queue_add(queue);
	mutex_unlock(&xrdma_debugfs_mutex);
}

/**
 * xrdma_debugfs_queue_del() - remove the debugfs directory of a queue
 * @queue: a queue about to be freed
 *
 * Waits for readers of the queue's files to finish.  Safe if the directory
 * was never created, or was already removed with the controller's.
 */
void xrdma_debugfs_queue_del(struct xrdma_queue *queue)
{
	struct xrdma_ctrl *ctrl = queue->ctrl;

	mutex_lock(&xrdma_debugfs_mutex);
	/* if the controller's directory is gone, so is the queue's */
	if (ctrl && xrdma_debugfs_present(ctrl->debugfs))
		debugfs_remove(queue->debugfs);
	queue->debugfs = NULL;
	mutex_unlock(&xrdma_debugfs_mutex);
}

/**
 * xrdma_debugfs_ctrl_add() - create the debugfs directory of a controller
 * @ctrl: a controller whose device (nvmeN) was added
 *
 * Creates nvmeN/ with its stats and reset_stats files, fault/ (test
 * flavour), and the directories of the queues already allocated.  Does
 * nothing if already called.
 */
void xrdma_debugfs_ctrl_add(struct xrdma_ctrl *ctrl)
{
	struct dentry *dir;
	u32 i;

	mutex_lock(&xrdma_debugfs_mutex);
	if (IS_ERR_OR_NULL(xrdma_debugfs_root) || ctrl->debugfs)
		goto out_unlock;

	dir = debugfs_create_dir(dev_name(ctrl->ctrl.device),
				 xrdma_debugfs_root);
	ctrl->debugfs = dir;
	debugfs_create_file("stats", 0444, dir, ctrl,
			    &xrdma_ctrl_stats_fops);
	debugfs_create_file_unsafe("reset_stats", 0200, dir, ctrl,
				   &xrdma_reset_stats_fops);
	xrdma_fault_add(ctrl, dir);

	for (i = 0; ctrl->queues && i < ctrl->ctrl.queue_count; i++) {
		struct xrdma_queue *queue = &ctrl->queues[i];

		if (test_bit(XRDMA_Q_ALLOCATED, &queue->flags))
			__xrdma_debugfs_queue_add(queue);
	}
out_unlock:
	mutex_unlock(&xrdma_debugfs_mutex);
}

/**
 * xrdma_debugfs_ctrl_del() - remove the debugfs directory of a controller
 * @ctrl: the controller
 *
 * Removes the directory with everything below it, waiting for readers of
 * its files to finish.  Safe to call more than once, and if
 * xrdma_debugfs_ctrl_add() never ran.
 */
void xrdma_debugfs_ctrl_del(struct xrdma_ctrl *ctrl)
{
	u32 i;

	mutex_lock(&xrdma_debugfs_mutex);
	if (xrdma_debugfs_present(ctrl->debugfs))
		debugfs_remove(ctrl->debugfs);
	ctrl->debugfs = NULL;
	/* the queue directories went with it */
	for (i = 0; ctrl->queues && i < ctrl->ctrl.queue_count; i++)
		ctrl->queues[i].debugfs = NULL;
	mutex_unlock(&xrdma_debugfs_mutex);
}

/**
 * xrdma_debugfs_init() - create the nvme-xrdma debugfs directory
 *
 * Failure (or debugfs being disabled) is not an error: the module works
 * without its statistics files.
 */
void xrdma_debugfs_init(void)
{
	mutex_lock(&xrdma_debugfs_mutex);
	xrdma_debugfs_root = debugfs_create_dir("nvme-xrdma", NULL);
	xrdma_hooks_init(xrdma_debugfs_root);
	mutex_unlock(&xrdma_debugfs_mutex);
}

/**
 * xrdma_debugfs_exit() - remove the nvme-xrdma debugfs directory
 *
 * Removes everything below it too, should a controller directory remain.
 */
void xrdma_debugfs_exit(void)
{
	mutex_lock(&xrdma_debugfs_mutex);
	debugfs_remove(xrdma_debugfs_root);
	xrdma_debugfs_root = NULL;
	mutex_unlock(&xrdma_debugfs_mutex);
}
