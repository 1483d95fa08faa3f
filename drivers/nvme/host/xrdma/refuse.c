// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-xrdma for a kernel it cannot be built for.
 *
 * DKMS builds every module for every kernel that gets installed, and
 * Debian 12's dkms (3.0.10) fails the kernel's installation when a module
 * skips one (BUILD_EXCLUSIVE_*: "dkms autoinstall" exits 11, and so does
 * the kernel's postinst hook).  The transport needs the private nvme host
 * headers of exactly the kernel it runs on, and linux-source-6.12 holds
 * one version at a time; so, where they do not match (or the layout guard
 * fails), the top-level Makefile's "dkms" target builds this instead: a
 * module of the same name that refuses to load and says why.  Nothing of
 * nvme-core is touched, so a wrong structure layout can do no harm.
 */
#include <linux/module.h>
#include <linux/utsname.h>

#include "xrdma_refuse.h"	/* XRDMA_REFUSE_WHY, XRDMA_REFUSE_VERSION */

static int __init xrdma_refuse_init(void)
{
	pr_err("nvme-xrdma: not built for this kernel: %s\n", XRDMA_REFUSE_WHY);
	pr_err("nvme-xrdma: install the linux-source-6.12 of this kernel's version, then: dkms install --force nvme-xrdma/%s -k %s\n",
	       XRDMA_REFUSE_VERSION, init_utsname()->release);
	return -ENOPKG;
}
module_init(xrdma_refuse_init);

MODULE_DESCRIPTION("nvme-xrdma, not built for this kernel (see the kernel log when it is loaded)");
MODULE_LICENSE("GPL");
