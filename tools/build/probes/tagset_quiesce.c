// SPDX-License-Identifier: GPL-2.0
/*
 * XRDMA_HAVE_TAGSET_QUIESCE: the I/O queues are quiesced as one tag set,
 * marked by NVME_CTRL_STOPPED (6.12), and renamed nvme_{un,}quiesce_*
 */
#include "nvme.h"

int xrdma_probe(struct nvme_ctrl *ctrl, struct request_queue *q);
int xrdma_probe(struct nvme_ctrl *ctrl, struct request_queue *q)
{
	nvme_quiesce_io_queues(ctrl);
	nvme_unquiesce_admin_queue(ctrl);
	return test_bit(NVME_CTRL_STOPPED, &ctrl->flags) +
	       blk_queue_skip_tagset_quiesce(q);
}
