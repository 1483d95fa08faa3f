// SPDX-License-Identifier: GPL-2.0
/*
 * badtarget: queue resources, receive buffers and responses.
 */
#include "badtarget.h"

/* ------------------------------------------------------------ queues */

int setup_device(struct ibv_context *ctx)
{
	if (verbs)
		return verbs == ctx ? 0 : -1;
	verbs = ctx;
	if (ibv_query_device(ctx, &dev_attr)) {
		logmsg("ibv_query_device: %s", strerror(errno));
		return -1;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		logmsg("ibv_alloc_pd: %s", strerror(errno));
		return -1;
	}
	ram_mr = ibv_reg_mr(pd, ram, RAM_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (!ram_mr) {
		logmsg("ibv_reg_mr(ram): %s", strerror(errno));
		return -1;
	}
	comp_ch = ibv_create_comp_channel(ctx);
	if (!comp_ch) {
		logmsg("ibv_create_comp_channel: %s", strerror(errno));
		return -1;
	}
	fcntl(comp_ch->fd, F_SETFL, fcntl(comp_ch->fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

int post_recv(struct queue *q, int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(q->ring + slot * slot_size()),
		.length = slot_size(),
		.lkey = q->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = WR_ID(WR_RECV, slot), .sg_list = &sge, .num_sge = 1,
	}, *bad;

	return ibv_post_recv(q->id->qp, &wr, &bad);
}

void queue_free(struct queue *q)
{
	struct queue **pp;
	struct ctrl *c = ctrl_of(q);

	slow_write_forget(q);
	if (c && c->admin == q) {
		c->admin = NULL;
		c->naers = 0;
		c->used = false;
	}
	for (pp = &queues; *pp; pp = &(*pp)->next) {
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	}
	if (q->id && q->id->qp)
		rdma_destroy_qp(q->id);
	if (q->cq)
		ibv_destroy_cq(q->cq);
	if (q->mr)
		ibv_dereg_mr(q->mr);
	free(q->mem);
	free(q->cmds);
	if (q->id)
		rdma_destroy_id(q->id);
	dbg("queue %u freed", q->qid);
	free(q);
}

struct queue *queue_alloc(struct rdma_cm_id *id, const struct cm_req *req)
{
	struct ibv_qp_init_attr qa = { 0 };
	struct queue *q;
	size_t memsz;
	int i;

	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->id = id;
	q->qid = req->qid;
	q->size = req->hrqsize;
	q->hsqsize = req->hsqsize;
	q->cntlid = -1;
	q->ncmds = 2 * q->size + 16;
	id->context = q;

	memsz = (size_t)q->size * slot_size() +
		(size_t)q->ncmds * (CQE_SIZE * 4 + SCRATCH);
	q->mem = aligned_alloc(4096, (memsz + 4095) & ~(size_t)4095);
	q->cmds = calloc(q->ncmds, sizeof(*q->cmds));
	if (!q->mem || !q->cmds)
		goto fail;
	memset(q->mem, 0, memsz);
	q->ring = q->mem;
	for (i = 0; i < q->ncmds; i++) {
		uint8_t *base = q->mem + (size_t)q->size * slot_size() +
				(size_t)i * (CQE_SIZE * 4 + SCRATCH);

		q->cmds[i].rsp = base;
		q->cmds[i].buf = base + CQE_SIZE * 4;
	}
	q->mr = ibv_reg_mr(pd, q->mem, memsz, IBV_ACCESS_LOCAL_WRITE);
	if (!q->mr) {
		logmsg("ibv_reg_mr: %s", strerror(errno));
		goto fail;
	}
	q->cq = ibv_create_cq(verbs, q->size + 3 * q->ncmds, q, comp_ch, 0);
	if (!q->cq) {
		logmsg("ibv_create_cq: %s", strerror(errno));
		goto fail;
	}
	if (ibv_req_notify_cq(q->cq, 0))
		goto fail;
	qa.send_cq = q->cq;
	qa.recv_cq = q->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 2 * q->ncmds;
	qa.cap.max_recv_wr = q->size;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, pd, &qa)) {
		logmsg("rdma_create_qp: %s", strerror(errno));
		goto fail;
	}
	for (i = 0; i < q->size; i++)
		if (post_recv(q, i))
			goto fail;
	q->next = queues;
	queues = q;
	return q;
fail:
	q->id = NULL;		/* the caller rejects and destroys it */
	id->context = NULL;
	if (id->qp)
		rdma_destroy_qp(id);
	if (q->cq)
		ibv_destroy_cq(q->cq);
	if (q->mr)
		ibv_dereg_mr(q->mr);
	free(q->mem);
	free(q->cmds);
	free(q);
	return NULL;
}

int cmd_get(struct queue *q)
{
	int i;

	for (i = 0; i < q->ncmds; i++) {
		if (!q->cmds[i].busy) {
			q->cmds[i].busy = true;
			return i;
		}
	}
	logmsg("queue %u: out of command slots", q->qid);
	return -1;
}

/* ------------------------------------------------------------ responses */

void fill_cqe(struct queue *q, uint8_t *cqe, uint16_t cid,
	      uint16_t status, uint64_t result)
{
	memset(cqe, 0, CQE_SIZE);
	put64(cqe, result);
	q->sqhd = (q->sqhd + 1) % (q->hsqsize + 1);
	put16(cqe + 8, q->sqhd);
	put16(cqe + 10, q->qid);
	put16(cqe + 12, cid);
	put16(cqe + 14, status << 1);
}

/*
 * Post an optional RDMA WRITE of @wlen bytes (from @src/@lkey to the
 * command's keyed SGL) and a SEND of @rsplen bytes of slot @i's response
 * buffer, with invalidation of @inv_rkey unless it is 0.
 */
static int post_rsp(struct queue *q, int i, const void *src, uint32_t lkey,
		    uint32_t wlen, uint32_t rsplen, uint32_t inv_rkey)
{
	struct cmd *c = &q->cmds[i];
	struct ibv_sge wsge = {
		.addr = (uintptr_t)src, .length = wlen, .lkey = lkey,
	};
	struct ibv_sge ssge = {
		.addr = (uintptr_t)c->rsp, .length = rsplen, .lkey = q->mr->lkey,
	};
	struct ibv_send_wr send = {
		.wr_id = WR_ID(WR_SEND, i), .sg_list = &ssge, .num_sge = 1,
		.opcode = inv_rkey ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr write = {
		.wr_id = WR_ID(WR_WRITE, i), .sg_list = &wsge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .next = &send,
	}, *bad;

	send.invalidate_rkey = inv_rkey;
	/* libsiw (rdma-core 44) sends the STag of wr.rdma.rkey instead */
	send.wr.rdma.rkey = inv_rkey;
	write.wr.rdma.remote_addr = c->addr;
	write.wr.rdma.rkey = c->rkey;
	if (ibv_post_send(q->id->qp, wlen ? &write : &send, &bad)) {
		logmsg("queue %u: ibv_post_send: %s", q->qid, strerror(errno));
		c->busy = false;
		return -1;
	}
	return 0;
}

/* An extra response with its own slot (replays, early responses). */
void send_extra(struct queue *q, const uint8_t *cqe, uint32_t len,
		uint32_t inv_rkey)
{
	int i = cmd_get(q);

	if (i < 0)
		return;
	memcpy(q->cmds[i].rsp, cqe, CQE_SIZE);
	post_rsp(q, i, NULL, 0, 0, len, inv_rkey);
}

/*
 * Complete command slot @i: data to the host first (@src, @wlen bytes),
 * then the response.  This is where the per-response misbehaviours are.
 */
void complete(struct queue *q, int i, uint16_t status,
	      uint64_t result, const void *src, uint32_t lkey,
	      uint32_t wlen)
{
	struct cmd *c = &q->cmds[i];
	uint16_t cid = get16(c->sqe + 2);
	uint8_t op = c->sqe[0];
	bool io_read = q->qid && op == OP_READ;
	/* no-inv: the host asked for it, it gets a plain SEND all the same */
	uint32_t inv = c->inv && c->len && scenario != S_NO_INV ? c->rkey : 0;
	uint32_t rsplen = CQE_SIZE;

	if (scenario == S_SILENT) {
		c->busy = false;
		return;
	}
	fill_cqe(q, c->rsp, cid, status, result);

	if (io_read && misbehave(S_UNKNOWN_CID, "answering a Read with command id never sent"))
		put16(c->rsp + 12, cid ^ 0x0800);
	if (io_read && misbehave(S_SHORT_CAPSULE, "answering a Read with an 8-byte capsule"))
		rsplen = 8;
	if (io_read && misbehave(S_LONG_CAPSULE, "answering a Read with a 64-byte capsule"))
		rsplen = CQE_SIZE * 4;
	if (io_read && misbehave(S_BAD_STATUS, "answering a Read with status 0x45ff (DNR), SQ head 0xffff, SQ id 0x7777")) {
		put16(c->rsp + 8, 0xffff);
		put16(c->rsp + 10, 0x7777);
		put16(c->rsp + 14, (0x05ff | SC_DNR) << 1);
	}
	if (io_read && admin_rkey && c->len &&
	    misbehave(S_INV_WRONG_RKEY, "answering a Read with SEND_WITH_INV of the admin queue's rkey")) {
		logmsg("  rkey %#x instead of %#x", admin_rkey, c->rkey);
		inv = admin_rkey;
	}
	if (!q->qid && op == ADM_KEEP_ALIVE && admin_rkey &&
	    misbehave(S_INV_NO_MR, "answering a Keep Alive with SEND_WITH_INV")) {
		logmsg("  rkey %#x", admin_rkey);
		inv = admin_rkey;
	}
	if (post_rsp(q, i, src, lkey, wlen, rsplen, inv))
		return;
	if (io_read && misbehave(S_REPLAY_CID, "sending a Read's response twice")) {
		uint8_t cqe[CQE_SIZE];

		memcpy(cqe, c->rsp, CQE_SIZE);
		send_extra(q, cqe, CQE_SIZE, 0);
	}
}

