// SPDX-License-Identifier: GPL-2.0
/*
 * XRDMA_HAVE_CTRL_DIAG: core's diag/ attribute group, whose reconnect
 * count adds acc_reconnects, kept by the transport, to nr_reconnects (7.3)
 */
#include "nvme.h"

const struct attribute_group *xrdma_probe(struct nvme_ctrl *ctrl);
const struct attribute_group *xrdma_probe(struct nvme_ctrl *ctrl)
{
	atomic_long_add(ctrl->nr_reconnects, &ctrl->acc_reconnects);
	return &nvme_dev_diag_attrs_group;
}
