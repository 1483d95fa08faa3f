// SPDX-License-Identifier: GPL-2.0
/* XRDMA_HAVE_LINUX_UNALIGNED_H: <linux/unaligned.h>, not <asm/unaligned.h> */
#include <linux/unaligned.h>
