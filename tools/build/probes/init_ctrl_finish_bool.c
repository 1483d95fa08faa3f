// SPDX-License-Identifier: GPL-2.0
/* XRDMA_HAVE_INIT_CTRL_FINISH_BOOL: nvme_init_ctrl_finish(ctrl, was_suspended) */
#include <linux/build_bug.h>
#include "nvme.h"

static_assert(__builtin_types_compatible_p(typeof(&nvme_init_ctrl_finish),
					   int (*)(struct nvme_ctrl *, bool)));
