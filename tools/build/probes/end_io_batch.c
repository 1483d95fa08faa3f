// SPDX-License-Identifier: GPL-2.0
/* XRDMA_HAVE_END_IO_BATCH: a request's ->end_io is given the batch (7.3) */
#include <linux/build_bug.h>
#include <linux/blk-mq.h>

static_assert(__builtin_types_compatible_p(rq_end_io_fn,
	enum rq_end_io_ret (struct request *, blk_status_t,
			    const struct io_comp_batch *)));
