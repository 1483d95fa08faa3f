// SPDX-License-Identifier: GPL-2.0
/*
 * xrdma: the read pool of an I/O queue (module parameter read_pool).
 *
 * A small read can go without a memory registration of its own: each tag
 * of the queue owns a slot of read_pool bytes in a buffer that is
 * registered once per connection, for remote write only.  A read that
 * fits its slot sends a keyed SGL naming the slot and asks for no
 * invalidation; its response copies the slot into the request's pages.
 *
 * What the target may write: the pool, for as long as the connection
 * lives, and nothing else.  The request's own pages are never registered,
 * and a slot reaches them only through the copy made when the response
 * for that very command arrives: a write into a slot before or after that
 * changes no memory of the host's but the slot.  The price is the copy.
 *
 * What a reader may get: what the target wrote for its command, or zeros.
 * The pages are zeroed when allocated, and a slot's span is cleared when
 * its read ends, however it ends, so a target that answers success
 * without writing (or writing less) cannot hand the reader what an
 * earlier read left there, perhaps another user's data.  The CPU writes
 * the slots too, so they are mapped bidirectional.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "xrdma.h"

static unsigned int read_pool;

/*
 * Refuse a slot size out of range when it is written, not at the next
 * connect: 4294967295 rounded up to a page wrapped to 0, and the pool
 * silently got 4 KiB slots.
 */
static int xrdma_read_pool_set(const char *val, const struct kernel_param *kp)
{
	unsigned int slot;
	int ret;

	ret = kstrtouint(val, 0, &slot);
	if (ret)
		return ret;
	if (slot && (slot < SZ_4K || slot > SZ_64K)) {
		pr_warn("read_pool=%u refused: 0 (off), or 4096 to 65536 bytes\n",
			slot);
		return -EINVAL;
	}
	WRITE_ONCE(*(unsigned int *)kp->arg, slot);
	return 0;
}

static const struct kernel_param_ops xrdma_read_pool_ops = {
	.set	= xrdma_read_pool_set,
	.get	= param_get_uint,
};
module_param_cb(read_pool, &xrdma_read_pool_ops, &read_pool, 0644);
MODULE_PARM_DESC(read_pool,
		 "bytes of read pool per tag of an I/O queue: reads up to this size use it instead of a memory registration (0: off, else 4096 to 65536, rounded up to 4 KiB steps; read at connect)");

/*
 * Tags that get a slot: the slot of @tag starts @tag * slot bytes into
 * the pool's one MR, which may map as many pages as the device allows
 * (not only the max_fr_pages of an I/O's MR): 512 on rdma_rxe, so every
 * tag of a 128-deep queue with 16 KiB slots.
 */
static u32 xrdma_pool_slots(struct xrdma_queue *queue, u32 slot)
{
	u32 max_pages = queue->dev->ibdev->attrs.max_fast_reg_page_list_len;

	return min_t(u32, queue->size, max_pages / (slot >> PAGE_SHIFT));
}

/* The pool's REG_MR is unsignaled: a completion is an error. */
static void xrdma_pool_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct xrdma_queue *queue = cq->cq_context;

	/* a flush is the echo of a stop: the news came another way */
	if (wc->status == IB_WC_WR_FLUSH_ERR)
		return;
	xrdma_qerr_rl(queue, "read pool REG_MR failed: %s\n",
		      ib_wc_status_msg(wc->status));
	xrdma_connection_failed(queue->ctrl);
}

/* Give back pages [0, @n) of the pool, and the array. */
static void xrdma_pool_put_pages(struct xrdma_queue *queue, u32 n)
{
	struct ib_device *ibdev = queue->dev->ibdev;
	u32 i;

	for (i = 0; i < n; i++) {
		ib_dma_unmap_page(ibdev, queue->pool[i].dma, PAGE_SIZE,
				  DMA_BIDIRECTIONAL);
		__free_page(queue->pool[i].page);
	}
	kvfree(queue->pool);
	queue->pool = NULL;
}

/* Map pages [0, @n) of the pool into its MR, at offset 0 on. */
static int xrdma_pool_map_mr(struct xrdma_queue *queue, u32 n)
{
	struct sg_table sgt;
	struct scatterlist *sg;
	int ret;
	u32 i;

	if (sg_alloc_table(&sgt, n, GFP_KERNEL))
		return -ENOMEM;
	for_each_sg(sgt.sgl, sg, n, i) {
		sg_dma_address(sg) = queue->pool[i].dma;
		sg_dma_len(sg) = PAGE_SIZE;
	}
	ret = ib_map_mr_sg(queue->pool_mr, sgt.sgl, n, NULL, PAGE_SIZE);
	sg_free_table(&sgt);
	return ret == n ? 0 : -EINVAL;
}

/**
 * xrdma_pool_alloc() - allocate and map the read pool of a queue
 * @queue: an I/O queue whose PD and QP exist
 *
 * A queue without a pool (the parameter is 0, or memory or an MR is
 * short) reads through FRWR; that is not an error.
 */
void xrdma_pool_alloc(struct xrdma_queue *queue)
{
	struct ib_device *ibdev = queue->dev->ibdev;
	u32 slot = READ_ONCE(read_pool);
	u32 tags, npages, i;

	WRITE_ONCE(queue->pool_slot, 0);
	WRITE_ONCE(queue->pool_tags, 0);
	queue->pool_cqe.done = xrdma_pool_reg_done;
	if (!queue->qid || !slot)
		return;
	/* the setter keeps it in 4 KiB .. 64 KiB: no wrap */
	slot = clamp_t(u32, round_up(slot, PAGE_SIZE), PAGE_SIZE, SZ_64K);
	tags = xrdma_pool_slots(queue, slot);
	npages = tags * (slot >> PAGE_SHIFT);
	if (!npages)
		goto out;

	queue->pool = kvcalloc(npages, sizeof(*queue->pool), GFP_KERNEL);
	if (!queue->pool)
		goto out;
	for (i = 0; i < npages; i++) {
		struct page *page = alloc_page(GFP_KERNEL | __GFP_ZERO);
		u64 dma;

		if (!page)
			goto out_put_pages;
		dma = ib_dma_map_page(ibdev, page, 0, PAGE_SIZE,
				      DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(ibdev, dma)) {
			__free_page(page);
			goto out_put_pages;
		}
		queue->pool[i].page = page;
		queue->pool[i].dma = dma;
	}

	queue->pool_mr = ib_alloc_mr(queue->pd, IB_MR_TYPE_MEM_REG, npages);
	if (IS_ERR(queue->pool_mr))
		goto out_put_pages;
	if (xrdma_pool_map_mr(queue, npages))
		goto out_dereg;
	WRITE_ONCE(queue->pool_slot, slot);
	WRITE_ONCE(queue->pool_tags, tags);
	return;

out_dereg:
	ib_dereg_mr(queue->pool_mr);
out_put_pages:
	xrdma_pool_put_pages(queue, i);
out:
	queue->pool_mr = NULL;
	xrdma_qinfo(queue, "no read pool: reads use memory registration\n");
}

/**
 * xrdma_pool_free() - release the read pool of a queue
 * @queue: a queue whose QP is flushed, or never connected
 */
void xrdma_pool_free(struct xrdma_queue *queue)
{
	if (!queue->pool_slot)
		return;
	ib_dereg_mr(queue->pool_mr);
	queue->pool_mr = NULL;
	xrdma_pool_put_pages(queue,
			     queue->pool_tags * (queue->pool_slot >> PAGE_SHIFT));
	WRITE_ONCE(queue->pool_slot, 0);
	WRITE_ONCE(queue->pool_tags, 0);
}

/**
 * xrdma_pool_register() - post the registration of a queue's read pool
 * @queue: a connected queue, before its fabrics Connect
 *
 * Unsignaled: the SQ runs in order, so it is done before the first
 * command that names the pool.
 *
 * Return: 0 or the ib_post_send() error.
 */
int xrdma_pool_register(struct xrdma_queue *queue)
{
	struct ib_reg_wr wr = {
		.wr = {
			.opcode = IB_WR_REG_MR,
			.wr_cqe = &queue->pool_cqe,
		},
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};

	if (!queue->pool_slot)
		return 0;
	ib_update_fast_reg_key(queue->pool_mr,
			       ib_inc_rkey(queue->pool_mr->rkey));
	wr.mr = queue->pool_mr;
	wr.key = queue->pool_mr->rkey;
	return ib_post_send(queue->qp, &wr.wr, NULL);
}

/**
 * xrdma_pool_map() - point a read's keyed SGL at its slot
 * @queue: the queue
 * @req: the command
 * @rq: its request, for which xrdma_pool_fits() is true
 */
void xrdma_pool_map(struct xrdma_queue *queue, struct xrdma_request *req,
		    struct request *rq)
{
	struct nvme_keyed_sgl_desc *sg = &req->cmd.common.dptr.ksgl;

	sg->addr = cpu_to_le64(queue->pool_mr->iova +
			       (u64)rq->tag * queue->pool_slot);
	put_unaligned_le24(blk_rq_payload_bytes(rq), sg->length);
	put_unaligned_le32(queue->pool_mr->rkey, sg->key);
	sg->type = (NVME_KEY_SGL_FMT_DATA_DESC << 4) | NVME_SGL_FMT_ADDRESS;
	req->kind = XRDMA_DATA_POOL;
}

/* The first page of @rq's slot. */
static struct xrdma_pool_page *xrdma_pool_slot(struct xrdma_queue *queue,
					       struct request *rq)
{
	return &queue->pool[rq->tag * (queue->pool_slot >> PAGE_SHIFT)];
}

/**
 * xrdma_pool_copy() - copy a read's data from its slot to its pages
 * @queue: the queue
 * @rq: a request read through the pool, whose response arrived
 */
void xrdma_pool_copy(struct xrdma_queue *queue, struct request *rq)
{
	struct xrdma_pool_page *pp = xrdma_pool_slot(queue, rq);
	struct ib_device *ibdev = queue->dev->ibdev;
	u32 left = blk_rq_payload_bytes(rq);
	struct req_iterator iter;
	struct bio_vec bv;
	u32 off = 0;

	rq_for_each_segment(bv, rq, iter) {
		u32 done = 0;

		while (done < bv.bv_len && left) {
			u32 in_page = off & ~PAGE_MASK;
			u32 n = min3(bv.bv_len - done,
				     (u32)PAGE_SIZE - in_page, left);
			void *dst;

			ib_dma_sync_single_for_cpu(ibdev, pp->dma + in_page,
						   n, DMA_BIDIRECTIONAL);
			dst = bvec_kmap_local(&bv);
			memcpy(dst + done, page_address(pp->page) + in_page,
			       n);
			kunmap_local(dst);
			ib_dma_sync_single_for_device(ibdev, pp->dma + in_page,
						      n, DMA_BIDIRECTIONAL);
			done += n;
			left -= n;
			off += n;
			if (!(off & ~PAGE_MASK))
				pp++;
		}
	}
}

/**
 * xrdma_pool_clear() - zero the span of a slot a read used
 * @queue: the queue
 * @rq: a request read through the pool, ending (its data copied or not)
 *
 * The target can no longer write there for this command: it answered, or
 * the queue was stopped and its QP flushed.
 */
void xrdma_pool_clear(struct xrdma_queue *queue, struct request *rq)
{
	struct xrdma_pool_page *pp = xrdma_pool_slot(queue, rq);
	struct ib_device *ibdev = queue->dev->ibdev;
	u32 left = blk_rq_payload_bytes(rq);

	for (; left; pp++) {
		u32 n = min_t(u32, left, PAGE_SIZE);

		ib_dma_sync_single_for_cpu(ibdev, pp->dma, n,
					   DMA_BIDIRECTIONAL);
		memset(page_address(pp->page), 0, n);
		ib_dma_sync_single_for_device(ibdev, pp->dma, n,
					      DMA_BIDIRECTIONAL);
		left -= n;
	}
}
