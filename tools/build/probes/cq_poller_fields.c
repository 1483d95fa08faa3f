// SPDX-License-Identifier: GPL-2.0
/*
 * XRDMA_HAVE_CQ_POLLER_FIELDS: struct ib_cq holds the poller ib_core runs
 * its handlers from, an irq_poll "iop" (IB_POLL_SOFTIRQ) or a work_struct
 * "work" (the workqueue contexts), which xrdma_cq_wait_poller() waits out
 * (6.1)
 */
#include <linux/build_bug.h>
#include <linux/irq_poll.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

static_assert(__builtin_types_compatible_p(typeof(((struct ib_cq *)0)->iop),
					   struct irq_poll));
static_assert(__builtin_types_compatible_p(typeof(((struct ib_cq *)0)->work),
					   struct work_struct));
