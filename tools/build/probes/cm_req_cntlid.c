// SPDX-License-Identifier: GPL-2.0
/* XRDMA_HAVE_CM_REQ_CNTLID: struct nvme_rdma_cm_req names its cntlid (6.12) */
#include <linux/build_bug.h>
#include <linux/nvme-rdma.h>

static_assert(sizeof(((struct nvme_rdma_cm_req *)NULL)->cntlid) == 2);
