// SPDX-License-Identifier: GPL-2.0
/* XRDMA_HAVE_IB_DEVICE_GET_NETDEV: ib_device_get_netdev() is public (6.12) */
#include <linux/build_bug.h>
#include <rdma/ib_verbs.h>

static_assert(__builtin_types_compatible_p(typeof(&ib_device_get_netdev),
	struct net_device *(*)(struct ib_device *, u32)));
