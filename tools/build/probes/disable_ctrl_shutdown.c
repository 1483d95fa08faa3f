// SPDX-License-Identifier: GPL-2.0
/* XRDMA_HAVE_DISABLE_CTRL_SHUTDOWN: nvme_disable_ctrl(ctrl, shutdown) */
#include <linux/build_bug.h>
#include "nvme.h"

static_assert(__builtin_types_compatible_p(typeof(&nvme_disable_ctrl),
					   int (*)(struct nvme_ctrl *, bool)));
