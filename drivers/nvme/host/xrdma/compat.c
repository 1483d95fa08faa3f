// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: what an older kernel's fabrics library lacks (see compat.h).
 *
 * 6.12's fabrics code counts, hands out and maps the I/O queues of each
 * hctx type for every transport; 6.1 left it to each one.  These follow
 * 6.12's rules, so that a controller gets the same queues on both: the
 * read queues (nr_io_queues) come first when write queues were asked for
 * and there are more queues than read queues, then the default ones, then
 * the poll queues from what is left.  Without write queues the default
 * queues serve reads too.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>

#include "xrdma.h"

#ifndef XRDMA_HAVE_NVMF_MAP_QUEUES

/**
 * xrdma_nvmf_nr_io_queues() - the I/O queues the options ask for
 * @opts: the controller's options
 *
 * Return: of each kind (read/write, write, poll) at most one per online
 * CPU, summed.
 */
unsigned int xrdma_nvmf_nr_io_queues(struct nvmf_ctrl_options *opts)
{
	unsigned int cpus = num_online_cpus();

	return min(opts->nr_io_queues, cpus) +
	       min(opts->nr_write_queues, cpus) +
	       min(opts->nr_poll_queues, cpus);
}

/**
 * xrdma_nvmf_set_io_queues() - share @nr granted I/O queues among the types
 * @opts: the controller's options
 * @nr: I/O queues the target granted
 * @io_queues: queues per hctx type; only the types given some are set
 */
void xrdma_nvmf_set_io_queues(struct nvmf_ctrl_options *opts, u32 nr,
			      u32 io_queues[HCTX_MAX_TYPES])
{
	u32 left = nr;

	if (opts->nr_write_queues && nr > opts->nr_io_queues) {
		io_queues[HCTX_TYPE_READ] = opts->nr_io_queues;
		left -= opts->nr_io_queues;
		io_queues[HCTX_TYPE_DEFAULT] = min(left, opts->nr_write_queues);
	} else {
		io_queues[HCTX_TYPE_DEFAULT] = min(left, opts->nr_io_queues);
	}
	left -= io_queues[HCTX_TYPE_DEFAULT];
	if (opts->nr_poll_queues && left)
		io_queues[HCTX_TYPE_POLL] = min(left, opts->nr_poll_queues);
}

/* One map: @nr hardware queues from @first, spread over the CPUs. */
static void xrdma_map_type(struct blk_mq_queue_map *map, u32 nr, u32 first)
{
	map->nr_queues = nr;
	map->queue_offset = first;
	blk_mq_map_queues(map);
}

/**
 * xrdma_nvmf_map_queues() - map the CPUs to the hctxs of each type
 * @set: the I/O tag set
 * @ctrl: its controller
 * @io_queues: queues per hctx type, from xrdma_nvmf_set_io_queues()
 *
 * The hctxs are numbered default, read, poll.  Without read queues of
 * their own, reads map to the default ones.  The poll map is left alone
 * when there is no poll queue (the caller clears it).
 */
void xrdma_nvmf_map_queues(struct blk_mq_tag_set *set, struct nvme_ctrl *ctrl,
			   u32 io_queues[HCTX_MAX_TYPES])
{
	u32 def = io_queues[HCTX_TYPE_DEFAULT];
	u32 read = io_queues[HCTX_TYPE_READ];
	u32 poll = io_queues[HCTX_TYPE_POLL];
	bool split = ctrl->opts->nr_write_queues && read;

	xrdma_map_type(&set->map[HCTX_TYPE_DEFAULT], def, 0);
	xrdma_map_type(&set->map[HCTX_TYPE_READ], split ? read : def,
		       split ? def : 0);
	if (ctrl->opts->nr_poll_queues && poll)
		xrdma_map_type(&set->map[HCTX_TYPE_POLL], poll, def + read);
	dev_info(ctrl->device, "mapped %u/%u/%u default/read/poll queues\n",
		 def, split ? read : 0, poll);
}

#endif /* !XRDMA_HAVE_NVMF_MAP_QUEUES */
