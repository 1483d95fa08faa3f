// SPDX-License-Identifier: GPL-2.0
/*
 * XRDMA_HAVE_SHOULD_RECONNECT_STATUS: nvmf_should_reconnect() is given the
 * attempt's status and refuses a "do not retry" one (6.12)
 */
#include <linux/build_bug.h>
#include "nvme.h"
#include "fabrics.h"

static_assert(__builtin_types_compatible_p(typeof(&nvmf_should_reconnect),
					   bool (*)(struct nvme_ctrl *, int)));
