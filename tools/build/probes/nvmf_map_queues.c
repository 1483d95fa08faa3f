// SPDX-License-Identifier: GPL-2.0
/*
 * XRDMA_HAVE_NVMF_MAP_QUEUES: fabrics counts, hands out and maps the I/O
 * queues of each hctx type (nvmf_nr_io_queues() and friends, 6.12)
 */
#include <linux/build_bug.h>
#include "nvme.h"
#include "fabrics.h"

static_assert(__builtin_types_compatible_p(typeof(&nvmf_nr_io_queues),
	unsigned int (*)(struct nvmf_ctrl_options *)));
static_assert(__builtin_types_compatible_p(typeof(&nvmf_set_io_queues),
	void (*)(struct nvmf_ctrl_options *, u32, u32 *)));
static_assert(__builtin_types_compatible_p(typeof(&nvmf_map_queues),
	void (*)(struct blk_mq_tag_set *, struct nvme_ctrl *, u32 *)));
