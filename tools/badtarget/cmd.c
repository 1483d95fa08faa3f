// SPDX-License-Identifier: GPL-2.0
/*
 * badtarget: the commands (scenario.c: where a scenario misbehaves in them).
 */
#include "badtarget.h"

/* ------------------------------------------------------------ commands */

static void identify(struct queue *q, int i, struct ctrl *ct)
{
	struct cmd *c = &q->cmds[i];
	uint8_t *d = c->buf;
	uint8_t cns = c->sqe[40];
	uint32_t nsid = get32(c->sqe + 4);
	uint64_t nblocks = RAM_SIZE >> LBA_SHIFT;
	uint16_t maxcmd = ct->mqes + 1;
	uint32_t len = c->len < SCRATCH ? c->len : SCRATCH;

	memset(d, 0, SCRATCH);
	switch (cns) {
	case 0x00:		/* namespace */
		if (nsid != 1) {
			complete(q, i, SC_INVALID_NS | SC_DNR, 0, NULL, 0, 0);
			return;
		}
		put64(d + 0, nblocks);
		put64(d + 8, nblocks);
		put64(d + 16, nblocks);
		d[25] = 0;	/* one LBA format */
		d[26] = 0;
		d[30] = multi_ctrl;	/* NMIC: shared */
		memcpy(d + 104, "badtarget-nguid1", 16);
		d[128 + 2] = LBA_SHIFT;	/* lbaf[0].ds */
		break;
	case 0x01:		/* controller */
		put16(d + 0, 0x1b36);
		put16(d + 2, 0x1b36);
		memcpy(d + 4, "badtarget0001       ", 20);
		memset(d + 24, ' ', 40);
		memcpy(d + 24, "xrdma bad target", 16);
		memcpy(d + 64, "1.0     ", 8);
		d[76] = multi_ctrl << 1;	/* CMIC: multiple controllers */
		d[77] = 0;	/* MDTS: no limit */
		put16(d + 78, ct->cntlid);
		put32(d + 80, 0x00010300);
		/* OAES: namespace attribute notices */
		put32(d + 92, scenario == S_NO_AEN ? 0 : 1 << 8);
		d[111] = 1;	/* CNTRLTYPE: I/O controller */
		if (scenario == S_ADMIN_CTRL)
			d[111] = 3;	/* administrative controller */
		d[259] = 3;	/* AERL: 4 outstanding */
		d[262] = 0;	/* ELPE */
		put16(d + 320, 10);	/* KAS: 1 s */
		d[512] = 0x66;
		d[513] = 0x44;
		if (scenario == S_MAXCMD_0 || scenario == S_MAXCMD_1) {
			/* every time; logged the first */
			maxcmd = scenario == S_MAXCMD_1;
			misbehave(scenario, maxcmd ? "Identify MAXCMD 1" :
				  "Identify MAXCMD 0");
		}
		put16(d + 514, maxcmd);
		put32(d + 516, 1);	/* NN */
		put32(d + 536, 1 << 2);	/* SGLS: keyed data block */
		memcpy(d + 768, subnqn, strnlen(subnqn, NQN_LEN - 1));
		put32(d + 1792, 4);	/* IOCCSZ: the SQE only */
		if (scenario == S_HUGE_IOCCSZ) {
			/* every time; logged the first */
			misbehave(S_HUGE_IOCCSZ, "IOCCSZ 0x10000005, SGLS offsets");
			put32(d + 536, 1 << 2 | 1 << 20);
			put32(d + 1792, 0x10000005);
		}
		put32(d + 1796, 1);	/* IORCSZ */
		put16(d + 1800, 0);	/* ICDOFF */
		d[1803] = 1;	/* MSDBD */
		break;
	case 0x02:		/* active namespace list */
		if (nsid < 1)
			put32(d, 1);
		break;
	case 0x03:		/* namespace identification descriptors */
		if (nsid != 1) {
			complete(q, i, SC_INVALID_NS | SC_DNR, 0, NULL, 0, 0);
			return;
		}
		d[0] = 0x03;	/* UUID */
		d[1] = 16;
		memcpy(d + 4, "\x6b\x61\x64\x74\x61\x72\x67\x65\x74\x2d\x75\x75\x69\x64\x2d\x31", 16);
		d[20] = 0x02;	/* NGUID */
		d[21] = 16;
		memcpy(d + 24, "badtarget-nguid1", 16);
		d[40] = 0x04;	/* CSI */
		d[41] = 1;
		d[44] = 0;	/* NVM */
		break;
	default:
		complete(q, i, SC_INVALID_FIELD | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	complete(q, i, SC_SUCCESS, 0, d, q->mr->lkey, len);
}

static void features(struct queue *q, int i, struct ctrl *ct, bool set)
{
	struct cmd *c = &q->cmds[i];
	uint8_t fid = c->sqe[40];
	uint32_t dw11 = get32(c->sqe + 44);
	uint32_t val;

	switch (fid) {
	case 0x07: {		/* number of queues */
		if (scenario == S_ADMIN_CTRL) {
			/* not a feature of a controller without I/O queues */
			logmsg("scenario admin-ctrl: %s Features Number of Queues refused",
			       set ? "Set" : "Get");
			complete(q, i, SC_INVALID_FIELD | SC_DNR, 0, NULL, 0, 0);
			return;
		}
		if (set) {
			uint32_t nsq = dw11 & 0xffff, ncq = dw11 >> 16;
			uint32_t g = nsq < ncq ? nsq : ncq;

			if (g > MAX_IOQ - 1)
				g = MAX_IOQ - 1;
			if (scenario == S_MORE_QUEUES) {
				g = (nsq < ncq ? nsq : ncq) + 4;
				logmsg("scenario more-queues: asked for %u I/O queues, granting %u",
				       (nsq < ncq ? nsq : ncq) + 1, g + 1);
			}
			ct->nr_queues = g | g << 16;
		}
		val = ct->nr_queues;
		break;
	}
	case 0x0b:		/* asynchronous event configuration */
		if (set)
			ct->aec = dw11;
		val = ct->aec;
		break;
	case 0x0f:		/* keep alive timer */
		if (set)
			ct->kato = dw11;
		val = ct->kato;
		break;
	default:
		complete(q, i, SC_INVALID_FIELD | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	complete(q, i, SC_SUCCESS, val, NULL, 0, 0);
}

static void get_log(struct queue *q, int i)
{
	struct cmd *c = &q->cmds[i];
	uint8_t lid = c->sqe[40];
	uint32_t numd = (get32(c->sqe + 40) >> 16 | (get32(c->sqe + 44) & 0xffff) << 16) + 1;
	uint64_t bytes = (uint64_t)numd * 4;
	uint32_t len;

	if (lid != 0x01 && lid != 0x02 && lid != 0x04) {
		complete(q, i, SC_INVALID_FIELD | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	if (bytes > c->len)
		bytes = c->len;
	len = bytes < SCRATCH ? bytes : SCRATCH;
	memset(c->buf, 0, SCRATCH);
	complete(q, i, SC_SUCCESS, 0, c->buf, q->mr->lkey, len);
}

static void prop_set(struct queue *q, int i, struct ctrl *ct)
{
	struct cmd *c = &q->cmds[i];
	uint32_t off = get32(c->sqe + 44);
	uint64_t val = get64(c->sqe + 48);

	if (off != PROP_CC) {
		complete(q, i, SC_INVALID_FIELD | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	ct->cc = val;
	if (val & 1)
		ct->csts |= 1;		/* RDY follows EN */
	else
		ct->csts &= ~1u;
	if (val & (3 << 14) && scenario == S_SLOW_WRITE) {
		/*
		 * A shutdown in progress for SLOW_SHN_MS, while every property
		 * read is answered: slow, not silent, so a deletion waits
		 * for it.
		 */
		ct->csts = (ct->csts & ~0xcu) | 0x4;
		due_in(&ct->shn_due, SLOW_SHN_MS);
		logmsg("controller %u: shutdown (CC.SHN), complete in %d ms",
		       ct->cntlid, SLOW_SHN_MS);
	} else if (val & (3 << 14)) {
		ct->csts = (ct->csts & ~0xcu) | 0x8;	/* shutdown complete */
		logmsg("controller %u: shutdown (CC.SHN)", ct->cntlid);
	} else {
		ct->csts &= ~0xcu;
	}
	dbg("CC %#x -> CSTS %#x", ct->cc, ct->csts);
	complete(q, i, SC_SUCCESS, 0, NULL, 0, 0);
}

static void prop_get(struct queue *q, int i, struct ctrl *ct)
{
	struct cmd *c = &q->cmds[i];
	uint32_t off = get32(c->sqe + 44);
	uint64_t val;

	switch (off) {
	case PROP_CAP:
		/* MQES, CQR, TO 5 s, CSS NVM */
		val = ct->mqes | 1ull << 16 | 10ull << 24 | 1ull << 37;
		break;
	case PROP_VS:
		val = 0x00010300;
		break;
	case PROP_CC:
		val = ct->cc;
		break;
	case PROP_CSTS:
		if ((ct->csts & 0xc) == 0x4 && is_due(&ct->shn_due)) {
			ct->csts = (ct->csts & ~0xcu) | 0x8;
			logmsg("controller %u: shutdown complete", ct->cntlid);
		}
		val = ct->csts;
		break;
	default:
		complete(q, i, SC_INVALID_FIELD | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	complete(q, i, SC_SUCCESS, val, NULL, 0, 0);
}

/* The Connect data has arrived (RDMA READ into the slot's buffer). */
static void connect_cmd(struct queue *q, int i)
{
	struct cmd *c = &q->cmds[i];
	uint16_t qid = get16(c->sqe + 42);
	uint16_t sqsize = get16(c->sqe + 44);
	uint16_t cntlid = get16(c->buf + 16);
	const char *nqn = (const char *)c->buf + 256;
	struct ctrl *ct;

	if (c->len < 1024 || qid != q->qid || strncmp(nqn, subnqn, NQN_LEN) ||
	    q->cntlid >= 0) {
		logmsg("queue %u: Connect refused (qid %u, nqn %.64s)", q->qid,
		       qid, nqn);
		complete(q, i, SC_CONNECT_INVALID_PARAM | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	if (qid == 0) {
		ct = &ctrls[next_cntlid % MAX_CTRLS];
		memset(ct, 0, sizeof(*ct));
		ct->used = true;
		ct->cntlid = next_cntlid++;
		ct->admin = q;
		ct->mqes = 127;
		ct->nr_queues = 0;
		if (scenario == S_MQES_SHRINK && associations > 0) {
			ct->mqes = 31;
			logmsg("scenario mqes-shrink: association %d gets MQES %u, MAXCMD %u",
			       associations + 1, ct->mqes, ct->mqes + 1);
		}
		associations++;
		q->cntlid = ct->cntlid;
		drop_setups_admin(ct->cntlid);
		logmsg("controller %u: admin queue connected (sqsize %u, kato %u ms)",
		       ct->cntlid, sqsize, get32(c->sqe + 48));
		complete(q, i, SC_SUCCESS, ct->cntlid, NULL, 0, 0);
		return;
	}
	if (scenario == S_ADMIN_CTRL) {
		logmsg("scenario admin-ctrl: I/O queue %u Connect refused", qid);
		complete(q, i, SC_CONNECT_INVALID_PARAM | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	ct = &ctrls[cntlid % MAX_CTRLS];
	if (!ct->used || ct->cntlid != cntlid || !ct->admin ||
	    qid > (ct->nr_queues & 0xffff) + 1 || sqsize > ct->mqes) {
		logmsg("queue %u: Connect for controller %u refused (sqsize %u)",
		       qid, cntlid, sqsize);
		complete(q, i, SC_CONNECT_INVALID_PARAM | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	q->cntlid = cntlid;
	dbg("controller %u: I/O queue %u connected (sqsize %u)", cntlid, qid, sqsize);
	replay_on_connect(q);
	if (!drop_setups_connect(q, i, cntlid))
		complete(q, i, SC_SUCCESS, 0, NULL, 0, 0);
}

/* Start an RDMA READ of the command's data into @dst. */
static void read_data(struct queue *q, int i, void *dst, uint32_t lkey)
{
	struct cmd *c = &q->cmds[i];
	struct ibv_sge sge = {
		.addr = (uintptr_t)dst, .length = c->len, .lkey = lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = WR_ID(WR_READ, i), .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.rdma.remote_addr = c->addr;
	wr.wr.rdma.rkey = c->rkey;
	if (ibv_post_send(q->id->qp, &wr, &bad)) {
		logmsg("queue %u: RDMA READ: %s", q->qid, strerror(errno));
		c->busy = false;
	}
}

static void nvm_cmd(struct queue *q, int i, bool data_ready)
{
	struct cmd *c = &q->cmds[i];
	uint8_t op = c->sqe[0];
	uint64_t slba = get64(c->sqe + 40);
	uint32_t nlb = (get32(c->sqe + 48) & 0xffff) + 1;
	uint64_t nblocks = RAM_SIZE >> LBA_SHIFT;
	uint32_t bytes = nlb << LBA_SHIFT;
	uint8_t *p;

	switch (op) {
	case OP_FLUSH:
		complete(q, i, SC_SUCCESS, 0, NULL, 0, 0);
		return;
	case OP_READ:
	case OP_WRITE:
		break;
	default:
		complete(q, i, SC_INVALID_OPCODE | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	if (get32(c->sqe + 4) != 1) {
		complete(q, i, SC_INVALID_NS | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	if (slba >= nblocks || nlb > nblocks - slba) {
		complete(q, i, SC_LBA_RANGE | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	if (bytes != c->len) {
		complete(q, i, SC_INVALID_FIELD | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	if (replay_old_cid(q, i, slba) || setup_timeout(q, i, slba) ||
	    timeout_storm(q, i, slba) || read_no_data(q, i, slba) ||
	    drop_setups_read(q, i, slba))
		return;
	if (!data_ready && dreq_mid_io(q, i, op == OP_WRITE))
		return;
	p = ram + (slba << LBA_SHIFT);
	if (op == OP_READ || !data_ready)
		foreign_access(q, i, op == OP_WRITE, slba);
	if (op == OP_READ)
		complete(q, i, SC_SUCCESS, 0, p, ram_mr->lkey, bytes);
	else if (!data_ready)
		read_data(q, i, p, ram_mr->lkey);
	else if (!slow_write(q, i))
		complete(q, i, SC_SUCCESS, 0, NULL, 0, 0);
}

static void admin_cmd(struct queue *q, int i, struct ctrl *ct)
{
	struct cmd *c = &q->cmds[i];

	switch (c->sqe[0]) {
	case ADM_IDENTIFY:
		identify(q, i, ct);
		break;
	case ADM_SET_FEAT:
		features(q, i, ct, true);
		break;
	case ADM_GET_FEAT:
		features(q, i, ct, false);
		break;
	case ADM_GET_LOG:
		get_log(q, i);
		break;
	case ADM_KEEP_ALIVE:
		complete(q, i, SC_SUCCESS, 0, NULL, 0, 0);
		break;
	case ADM_ABORT:
		complete(q, i, SC_SUCCESS, 1, NULL, 0, 0);
		break;
	case ADM_AER:
		if (ct->naers >= (int)(sizeof(ct->aers) / sizeof(ct->aers[0]))) {
			complete(q, i, 0x5 | SC_DNR, 0, NULL, 0, 0);	/* AER limit */
			break;
		}
		ct->aers[ct->naers++] = i;	/* held */
		if (scenario == S_AEN_STORM)
			aen_send(ct);
		break;
	default:
		complete(q, i, SC_INVALID_OPCODE | SC_DNR, 0, NULL, 0, 0);
		break;
	}
}

/*
 * Run command slot @i.  @data_ready: the host's data (write, Connect) has
 * been read into place.
 */
static void run_cmd(struct queue *q, int i, bool data_ready)
{
	struct cmd *c = &q->cmds[i];
	struct ctrl *ct = ctrl_of(q);
	uint8_t op = c->sqe[0];

	if (op == OP_FABRICS) {
		uint8_t fct = c->sqe[4];

		if (fct == FCT_CONNECT) {
			if (!data_ready && c->len >= 1024) {
				c->len = 1024;
				read_data(q, i, c->buf, q->mr->lkey);
			} else {
				connect_cmd(q, i);
			}
			return;
		}
		if (!ct || q->qid) {
			complete(q, i, SC_INVALID_OPCODE | SC_DNR, 0, NULL, 0, 0);
			return;
		}
		if (fct == FCT_PROP_GET)
			prop_get(q, i, ct);
		else if (fct == FCT_PROP_SET)
			prop_set(q, i, ct);
		else
			complete(q, i, SC_INVALID_OPCODE | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	if (!ct) {			/* nothing before Connect */
		complete(q, i, SC_CONNECT_INVALID_PARAM | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	if (q->qid)
		nvm_cmd(q, i, data_ready);
	else
		admin_cmd(q, i, ct);
}

static void recv_cmd(struct queue *q, int slot)
{
	const uint8_t *sqe = q->ring + slot * slot_size();
	uint32_t icd_len = 0;
	struct cmd *c;
	bool icd;
	int i = cmd_get(q);

	if (i < 0) {
		post_recv(q, slot);
		return;
	}
	c = &q->cmds[i];
	memcpy(c->sqe, sqe, SQE_SIZE);
	/* in-capsule data (huge-ioccsz only): taken before the slot is reused */
	icd = c->sqe[39] == 0x01 && scenario == S_HUGE_IOCCSZ;
	if (icd) {
		uint64_t off = get64(c->sqe + 24);

		icd_len = get32(c->sqe + 32);
		if (off > ICD_MAX || icd_len > ICD_MAX - off || icd_len > SCRATCH)
			icd_len = UINT32_MAX;
		else
			memcpy(c->buf, sqe + SQE_SIZE + off, icd_len);
	}
	if (post_recv(q, slot))
		logmsg("queue %u: ibv_post_recv: %s", q->qid, strerror(errno));

	c->addr = c->len = c->rkey = 0;
	c->inv = false;
	if ((c->sqe[39] >> 4) == 0x4) {		/* keyed data block */
		c->addr = get64(c->sqe + 24);
		c->len = c->sqe[32] | c->sqe[33] << 8 | c->sqe[34] << 16;
		c->rkey = get32(c->sqe + 35);
		c->inv = (c->sqe[39] & 0xf) == 0xf;
		if (c->len && !q->qid)
			admin_rkey = c->rkey;
	} else if (icd) {
		/* only a Connect's: no I/O path reads data from c->buf */
		if (icd_len == UINT32_MAX || c->sqe[0] != OP_FABRICS) {
			logmsg("queue %u: in-capsule data of opcode %#x not taken",
			       q->qid, c->sqe[0]);
			complete(q, i, SC_INVALID_FIELD | SC_DNR, 0, NULL, 0, 0);
			return;
		}
		c->len = icd_len;
		run_cmd(q, i, true);
		return;
	} else if (c->sqe[0] != ADM_AER && c->sqe[0] != ADM_KEEP_ALIVE &&
		   (c->sqe[39] >> 4) != 0) {
		logmsg("queue %u: SGL type %#x not supported", q->qid, c->sqe[39]);
		complete(q, i, SC_INVALID_FIELD | SC_DNR, 0, NULL, 0, 0);
		return;
	}
	dbg("queue %u: cmd %#x cid %#x len %u", q->qid, c->sqe[0],
	    get16(c->sqe + 2), c->len);
	run_cmd(q, i, false);
}

void poll_cq(struct queue *q)
{
	struct ibv_wc wc[16];
	int n, k;

	while ((n = ibv_poll_cq(q->cq, 16, wc)) > 0) {
		for (k = 0; k < n; k++) {
			uint32_t kind = wc[k].wr_id >> 32;
			int idx = (uint32_t)wc[k].wr_id;

			if (kind == WR_FOREIGN) {
				q->foreign_pending = false;
				logmsg("scenario %s: the host %s the %s: %s",
				       scenario_names[scenario],
				       wc[k].status == IBV_WC_SUCCESS ?
				       "let through" : "refused",
				       foreign_op,
				       ibv_wc_status_str(wc[k].status));
			}
			if (wc[k].status != IBV_WC_SUCCESS) {
				if (!q->dead && wc[k].status != IBV_WC_WR_FLUSH_ERR)
					logmsg("queue %u: %s completion: %s", q->qid,
					       kind == WR_RECV ? "RECV" : "send queue",
					       ibv_wc_status_str(wc[k].status));
				q->dead = true;
				continue;
			}
			switch (kind) {
			case WR_RECV:
				if (!q->dead)
					recv_cmd(q, idx);
				break;
			case WR_READ:
				if (!q->dead)
					run_cmd(q, idx, true);
				break;
			case WR_SEND:
				q->cmds[idx].busy = false;
				break;
			default:
				break;
			}
		}
	}
}

