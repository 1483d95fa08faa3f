// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: FRWR memory regions of the data path.
 *
 * A command with keyed data takes an MR from its queue's pool, registers
 * its pages with a REG_MR posted just before its SEND, and gives the MR
 * back when it completes: the target invalidated it, or our LOCAL_INV did.
 *
 * A post that failed half way is the exception: the REG_MR of
 * a command may have been posted when its SEND was not.  The HCA may run
 * that REG_MR at any time until the QP is flushed, and it reads the MR's
 * page list when it does: back in the pool, the MR would be handed to the
 * next command, which rewrites that page list, and the stale REG_MR would
 * then map the next command's pages under a key of its own.  Such an MR is
 * kept out of the pool on the queue's kept list until the queue is torn
 * down, when its QP is drained or reset, and only then returned (for the
 * pool to deregister with the others).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <rdma/mr_pool.h>

#include "xrdma.h"

/**
 * xrdma_frwr_map() - register a command's mapped data with FRWR
 * @queue: the queue
 * @req: the command, its scatterlist DMA-mapped (@req->nents entries)
 * @rq: its block request
 *
 * Takes an MR from the pool, maps the pages into it, builds the REG_MR
 * (not linked) and the keyed SGL asking the target to invalidate (but
 * with the test hook no_remote_inv set).
 *
 * Return: 0, -EAGAIN if the pool is empty, or the ib_map_mr_sg() error.
 */
int xrdma_frwr_map(struct xrdma_queue *queue, struct xrdma_request *req,
		   struct request *rq)
{
	struct nvme_keyed_sgl_desc *sg = &req->cmd.common.dptr.ksgl;
	int n;

	req->mr = xrdma_fault(queue, XRDMA_FAULT_MR_EXHAUSTED) ? NULL :
		  ib_mr_pool_get(queue->qp, &queue->qp->rdma_mrs);
	if (unlikely(!req->mr))
		return -EAGAIN;

	n = ib_map_mr_sg(req->mr, req->sgt.sgl, req->nents, NULL, SZ_4K);
	if (unlikely(n < req->nents)) {
		xrdma_frwr_put(queue, req);
		return n < 0 ? n : -EINVAL;
	}
	ib_update_fast_reg_key(req->mr, ib_inc_rkey(req->mr->rkey));

	req->reg_wr.wr.next = NULL;
	req->reg_wr.wr.opcode = IB_WR_REG_MR;
	req->reg_wr.wr.wr_cqe = &req->reg_cqe;
	req->reg_wr.wr.num_sge = 0;
	req->reg_wr.wr.send_flags = 0;
	req->reg_wr.mr = req->mr;
	req->reg_wr.key = req->mr->rkey;
	/* the target reads what we write, and writes what we read */
	req->reg_wr.access = rq_data_dir(rq) == WRITE ? IB_ACCESS_REMOTE_READ :
			     IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;

	sg->addr = cpu_to_le64(req->mr->iova);
	put_unaligned_le24(req->mr->length, sg->length);
	put_unaligned_le32(req->mr->rkey, sg->key);
	sg->type = NVME_KEY_SGL_FMT_DATA_DESC << 4;
	if (xrdma_want_remote_inv())
		sg->type |= NVME_SGL_FMT_INVALIDATE;
	req->kind = XRDMA_DATA_FRWR;
	return 0;
}

/**
 * xrdma_frwr_put() - give a command's MR, if any, back to the pool
 * @queue: the queue
 * @req: the command; nothing the HCA holds refers to its MR any more
 */
void xrdma_frwr_put(struct xrdma_queue *queue, struct xrdma_request *req)
{
	if (req->mr) {
		ib_mr_pool_put(queue->qp, &queue->qp->rdma_mrs, req->mr);
		req->mr = NULL;
	}
}

/**
 * xrdma_frwr_local_inv() - post our own LOCAL_INV of a command's MR
 * @queue: the queue
 * @req: the command, whose response came without invalidating its MR
 *
 * Return: 0 or the ib_post_send() error.
 */
int xrdma_frwr_local_inv(struct xrdma_queue *queue, struct xrdma_request *req)
{
	struct ib_send_wr wr = {
		.wr_cqe = &req->inv_cqe,
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = req->mr->rkey,
	};

	return ib_post_send(queue->qp, &wr, NULL);
}

/**
 * xrdma_frwr_keep() - keep the MR of an unposted command out of the pool
 * @queue: the queue, whose QP may still run the command's REG_MR
 * @req: a command whose SEND was not posted, about to be ended
 *
 * The MR goes on @queue's kept list (its pool link, mr->qp_entry, is free
 * while it is out of the pool) until xrdma_frwr_release_kept().  The
 * command then completes without it.
 */
void xrdma_frwr_keep(struct xrdma_queue *queue, struct xrdma_request *req)
{
	struct ib_mr *mr = req->mr;

	if (!mr)
		return;
	req->mr = NULL;
	spin_lock(&queue->sq_lock);
	list_add_tail(&mr->qp_entry, &queue->kept_mrs);
	WRITE_ONCE(queue->nr_kept_mrs, queue->nr_kept_mrs + 1);
	spin_unlock(&queue->sq_lock);
	xrdma_stat_inc(queue, mr_kept);
	xrdma_qinfo_rl(queue, "rkey %#x kept out of the MR pool until the QP is gone\n",
		       mr->rkey);
}

/**
 * xrdma_frwr_release_kept() - return the kept MRs once the QP is flushed
 * @queue: a queue being torn down: stopped (its QP drained or reset), or
 *	never started, and its MR pool not destroyed yet
 *
 * Called before ib_mr_pool_destroy(), which then deregisters them with
 * the rest of the pool, and before the QP is destroyed, which expects
 * every MR of its pool back.
 */
void xrdma_frwr_release_kept(struct xrdma_queue *queue)
{
	struct ib_mr *mr, *tmp;
	LIST_HEAD(kept);

	spin_lock(&queue->sq_lock);
	list_splice_init(&queue->kept_mrs, &kept);
	WRITE_ONCE(queue->nr_kept_mrs, 0);
	spin_unlock(&queue->sq_lock);

	list_for_each_entry_safe(mr, tmp, &kept, qp_entry) {
		list_del(&mr->qp_entry);
		ib_mr_pool_put(queue->qp, &queue->qp->rdma_mrs, mr);
		xrdma_stat_inc(queue, mr_released);
	}
}
