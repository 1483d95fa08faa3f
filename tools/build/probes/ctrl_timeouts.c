// SPDX-License-Identifier: GPL-2.0
/*
 * XRDMA_HAVE_CTRL_TIMEOUTS: each controller has its own admin and I/O
 * timeouts, which the user may change in sysfs, and
 * nvme_wait_freeze_timeout() waits the I/O one (7.3)
 */
#include <linux/build_bug.h>
#include "nvme.h"

static_assert(__builtin_types_compatible_p(typeof(&nvme_wait_freeze_timeout),
					   int (*)(struct nvme_ctrl *)));

u32 xrdma_probe(struct nvme_ctrl *ctrl);
u32 xrdma_probe(struct nvme_ctrl *ctrl)
{
	return ctrl->admin_timeout + ctrl->io_timeout;
}
