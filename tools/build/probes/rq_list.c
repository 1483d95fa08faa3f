// SPDX-License-Identifier: GPL-2.0
/* XRDMA_HAVE_RQ_LIST: ->queue_rqs takes a struct rq_list (6.12) */
#include <linux/build_bug.h>
#include <linux/blk-mq.h>

static_assert(__builtin_types_compatible_p(
	typeof(((struct blk_mq_ops *)NULL)->queue_rqs),
	void (*)(struct rq_list *)));
