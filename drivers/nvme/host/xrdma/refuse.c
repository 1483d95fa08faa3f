// SPDX-License-Identifier: GPL-2.0
/*
 * nvme-xrdma for a kernel it cannot be built for.
 *
 * DKMS builds every module for every kernel that gets installed, and
 * Debian 12's dkms (3.0.10) fails the kernel's installation when a module
 * skips one (BUILD_EXCLUSIVE_*: "dkms autoinstall" exits 11, and so does
 * the kernel's postinst hook).  The transport needs the private nvme host
 * headers of exactly the kernel it runs on, from the linux-source package
 * of its series (linux-source-6.1 or linux-source-6.12), which holds one
 * version at a time; so, for a kernel of another series, or where that
 * package is missing or does not match (or the layout guard fails), the
 * top-level Makefile's "dkms" target builds this instead: a module of the
 * same name that refuses to load and says why and what to install.
 * Nothing of nvme-core is touched, so a wrong structure layout can do no
 * harm.
 */
#include <linux/module.h>
#include <linux/utsname.h>

/*
 * XRDMA_REFUSE_WHY, _VERSION (the package's), _SERIES (those it builds
 * for) and, for a kernel of one of them, _SOURCE (the linux-source
 * package of its series) and _UPSTREAM (the kernel's upstream version)
 */
#include "xrdma_refuse.h"

static int __init xrdma_refuse_init(void)
{
	pr_err("nvme-xrdma: not built for this kernel: %s\n", XRDMA_REFUSE_WHY);
#ifdef XRDMA_REFUSE_SOURCE
	pr_err("nvme-xrdma: install the %s of Linux %s (this kernel's version), then: dkms install --force nvme-xrdma/%s -k %s\n",
	       XRDMA_REFUSE_SOURCE, XRDMA_REFUSE_UPSTREAM,
	       XRDMA_REFUSE_VERSION, init_utsname()->release);
#else
	pr_err("nvme-xrdma: nvme-xrdma %s builds for these Linux series only: %s\n",
	       XRDMA_REFUSE_VERSION, XRDMA_REFUSE_SERIES);
#endif
	return -ENOPKG;
}
module_init(xrdma_refuse_init);

MODULE_DESCRIPTION("nvme-xrdma, not built for this kernel (see the kernel log when it is loaded)");
MODULE_LICENSE("GPL");
