// SPDX-License-Identifier: GPL-2.0
/* XRDMA_HAVE_MAP_SG_RQ: blk_rq_map_sg() takes no request queue (7.3) */
#include <linux/build_bug.h>
#include <linux/blk-mq.h>

static_assert(__builtin_types_compatible_p(typeof(&blk_rq_map_sg),
	int (*)(struct request *, struct scatterlist *)));
