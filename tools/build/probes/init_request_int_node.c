// SPDX-License-Identifier: GPL-2.0
/* XRDMA_HAVE_INIT_REQUEST_INT_NODE: ->init_request's NUMA node is an int (7.3) */
#include <linux/build_bug.h>
#include <linux/blk-mq.h>

static_assert(__builtin_types_compatible_p(
	typeof(((struct blk_mq_ops *)NULL)->init_request),
	int (*)(struct blk_mq_tag_set *, struct request *, unsigned int, int)));
