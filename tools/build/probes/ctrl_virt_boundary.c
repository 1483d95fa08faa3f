// SPDX-License-Identifier: GPL-2.0
/*
 * XRDMA_HAVE_CTRL_VIRT_BOUNDARY: the transport gives core the virtual
 * boundary of its data buffers through nvme_ctrl_ops, and core calls the
 * op unconditionally (7.3)
 */
#include <linux/build_bug.h>
#include "nvme.h"

static_assert(__builtin_types_compatible_p(
	typeof(((struct nvme_ctrl_ops *)NULL)->get_virt_boundary),
	unsigned long (*)(struct nvme_ctrl *, bool)));
