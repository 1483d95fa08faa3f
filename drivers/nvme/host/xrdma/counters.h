/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xrdma: the counters, each defined once, on one line.
 *
 * Each list below is an X-macro: it calls X(name) for every counter, and
 * the generators after it turn one list into struct fields, the names
 * debugfs prints, or sysfs attributes.  checkpatch cannot parse X-macros
 * (it takes a list for a complex value, X for a reused argument, a field
 * name for an expression), so this file alone is checked without those
 * tests (see the top Makefile).
 */
#ifndef _XRDMA_COUNTERS_H
#define _XRDMA_COUNTERS_H

/*
 * Data path counters of a queue, per CPU (struct xrdma_queue_stats),
 * summed in debugfs: nvmeN/stats and nvmeN/q<qid>/stats.
 */
#define XRDMA_QUEUE_STATS(X)						\
	X(submitted)	/* commands handed to the queue */		\
	X(no_data)	/* ... with no data */				\
	X(inline_data)	/* ... with in-capsule data */			\
	X(frwr)		/* ... with FRWR-registered data */		\
	X(pool)		/* ... read through the read pool */		\
	X(batched)	/* ... linked a plug at once (->queue_rqs) */	\
	X(posts)	/* ib_post_send() calls */			\
	X(wrs)		/* work requests in those calls */		\
	X(busy)		/* BLK_STS_RESOURCE returned */			\
	X(completed)	/* commands completed */			\
	X(remote_inv)	/* MRs the target invalidated */		\
	X(local_inv)	/* MRs we invalidated */			\
	X(wr_errors)	/* failed work requests */			\
	X(bad_rsp)	/* responses refused */				\
	X(timeouts)	/* commands that timed out */			\
	X(mr_kept)	/* MRs kept out of the pool after a failed post */ \
	X(mr_released)	/* ... returned once their QP was flushed */	\
	X(requeued)	/* commands a failed setup took back, requeued */

/*
 * Lifetime event counters of a controller (struct xrdma_ctrl_counters),
 * shown in sysfs: /sys/class/nvme/nvmeN/xrdma/<name>.
 */
#define XRDMA_CTRL_COUNTERS(X)						\
	X(recoveries)		/* error recoveries started */		\
	X(failed_reconnects)	/* reset/reconnect attempts that failed */ \
	X(stale_retries)	/* stale-connection rejects retried */	\
	X(rejects)		/* connect requests the target rejected */ \
	X(port_waits)		/* releases held back for a down port */

/* generators */
#define XRDMA_STAT_FIELD(name)		u64 name;
#define XRDMA_COUNTER_FIELD(name)	atomic_t name;
#define XRDMA_STAT_NAME(name)		#name,

/* sysfs.c: one attribute, and its entry in the group's list */
#define XRDMA_COUNTER_ATTR(name)					\
	static struct xrdma_counter_attr xrdma_attr_##name = {		\
		.attr	= __ATTR(name, 0444, xrdma_counter_show, NULL),	\
		.offset	= offsetof(struct xrdma_ctrl_counters, name),	\
	};
#define XRDMA_COUNTER_ATTR_PTR(name)	(&xrdma_attr_##name.attr.attr),

/*
 * struct xrdma_queue_stats: data path counters of one queue on one CPU
 * (plain comment: kernel-doc cannot see generated members).  One u64 per
 * entry of XRDMA_QUEUE_STATS().  Per CPU, so neither the
 * submission nor the completion side shares a cache line or an atomic
 * with the other for them.
 */
struct xrdma_queue_stats {
	XRDMA_QUEUE_STATS(XRDMA_STAT_FIELD)
};

#define XRDMA_STAT_NR	(sizeof(struct xrdma_queue_stats) / sizeof(u64))

/*
 * struct xrdma_ctrl_counters: lifetime event counters of a controller,
 * one atomic_t per entry of XRDMA_CTRL_COUNTERS().
 */
struct xrdma_ctrl_counters {
	XRDMA_CTRL_COUNTERS(XRDMA_COUNTER_FIELD)
};

#define xrdma_stat_inc(queue, name)	this_cpu_inc((queue)->stats->name)
#define xrdma_stat_add(queue, name, n)	this_cpu_add((queue)->stats->name, n)
#define xrdma_count(ctrl, name)		atomic_inc(&(ctrl)->counters.name)

#endif /* _XRDMA_COUNTERS_H */
