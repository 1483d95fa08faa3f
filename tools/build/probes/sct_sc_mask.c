// SPDX-License-Identifier: GPL-2.0
/* XRDMA_HAVE_SCT_SC_MASK: NVME_SCT_SC_MASK, an enum value (6.12) */
#include <linux/nvme.h>

int xrdma_probe(void);
int xrdma_probe(void)
{
	return NVME_SCT_SC_MASK;
}
