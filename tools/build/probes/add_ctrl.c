// SPDX-License-Identifier: GPL-2.0
/*
 * XRDMA_HAVE_ADD_CTRL: nvme_add_ctrl() registers the controller's device
 * (6.12); without it nvme_init_ctrl() does
 */
#include <linux/build_bug.h>
#include "nvme.h"

static_assert(__builtin_types_compatible_p(typeof(&nvme_add_ctrl),
					   int (*)(struct nvme_ctrl *)));
