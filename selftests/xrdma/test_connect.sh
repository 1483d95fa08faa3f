#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Connect time, xrdma beside the in-kernel nvme-rdma.  The
# I/O queues' RC connections (address and route resolution, connect
# request) are set up in parallel; the fabrics Connects follow in order.
#
#   overlap      4 I/O queues: from the nvme_xrdma:xrdma_cm_event trace,
#                each I/O queue's connection runs from its ADDR_RESOLVED
#                to its ESTABLISHED event; the connections of at least
#                half of the pairs of queues must overlap in time, and the
#                phase from the first start to the last end must be
#                shorter than 2/3 of the sum of their times (one after
#                another, as before, no pair overlaps and the phase is
#                longer than the sum)
#   1, 2, 4      the fabrics write of a connect with 1, 2 and 4 I/O
#                queues (nr_io_queues=2,nr_write_queues=2: the guest has
#                2 CPUs), timed over XRDMA_CONN_REPS runs (3) for each
#                transport; the best is printed, with the I/O queue phase
#                of xrdma (first ADDR_RESOLVED to last ESTABLISHED of the
#                I/O queues), and xrdma's 4-queue connect must take at
#                most 1.5 times nvme-rdma's plus 500 ms.  The I/O queue
#                phase is not held against 4 times that of 1 queue: in
#                this rig each connection's setup is CPU work (rxe, the
#                MR pool) on 2 emulated CPUs, so 4 overlapping setups take
#                about as long as 4 in a row (4 queues: 133 ms, 1 queue:
#                30 ms, while the overlap check above saw the phase at 97
#                ms of 383 ms of their own times); where the setup waits
#                on the network, overlapping is what saves the time
#   16 at once   16 controllers (duplicate_connect, 2 I/O queues each)
#                connected by 16 concurrent fabrics writes, per transport:
#                all live, xrdma at most 1.5 times nvme-rdma's plus 2 s
#
# Times are printed as "# ..." lines; under TCG only the ratios mean much.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

readonly REPS=${XRDMA_CONN_REPS:-3}
readonly SCALE=${XRDMA_TIMEOUT_SCALE:-1}
readonly TRACE=/sys/kernel/tracing/instances/xrdma_connect
CTRL=
declare -A BEST

cleanup() {
	[[ -d $TRACE ]] && rmdir "$TRACE"
	rig_del_rdma_subsys >/dev/null 2>&1
	test_end xrdma rdma
}
trap cleanup EXIT

TEST_MODULES="nvme_rdma nvme_xrdma"
test_begin 6
ktap_quiet rig_add_rdma_subsys ||
	ktap_exit_fail_msg "cannot add the nvme-rdma subsystem"

# nqn_of TR: the subsystem each transport connects to (no shared head)
nqn_of() {
	if [[ $1 == rdma ]]; then
		echo "$RIG_NQN_RDMA"
	else
		echo "$RIG_NQN_RAM"
	fi
}

# queue_opts N: fabrics options for N I/O queues on 2 CPUs
queue_opts() {
	case $1 in
	1) echo nr_io_queues=1 ;;
	2) echo nr_io_queues=2 ;;
	4) echo nr_io_queues=2,nr_write_queues=2 ;;
	esac
}

# fabrics_connect TR OPTS: one connect through /dev/nvme-fabrics
fabrics_connect() {
	echo "transport=$1,traddr=$RIG_IP4,trsvcid=$RIG_TRSVCID,nqn=$(nqn_of "$1"),hostnqn=$NVME_HOSTNQN,hostid=$NVME_HOSTID,$2" \
		>/dev/nvme-fabrics
}

trace_on() {
	modprobe nvme-xrdma || return 1
	[[ -d $TRACE ]] || mkdir "$TRACE" || return 1
	echo 1 >"$TRACE/events/nvme_xrdma/xrdma_cm_event/enable" &&
		echo >"$TRACE/trace"
}

# io_phase: from the trace, "PHASE_MS OVERLAPPING_PAIRS QUEUES SUM_MS" of
# the I/O queues' connections (ADDR_RESOLVED to ESTABLISHED of each qid >
# 0): the phase from the first start to the last end, and the sum of the
# connections' own times (one after another, the phase is longer)
io_phase() {
	sed -nE 's/.* ([0-9]+\.[0-9]+): xrdma_cm_event: nvme[0-9]+ qid=([0-9]+) event=([A-Z_]+).*/\1 \2 \3/p' \
		"$TRACE/trace" | awk '
	$2 == 0 { next }
	$3 == "ADDR_RESOLVED" && !($2 in s) { s[$2] = $1 + 0 }
	$3 == "ESTABLISHED" { e[$2] = $1 + 0 }
	END {
		n = 0; first = -1; last = -1; sum = 0
		for (q in s) {
			if (!(q in e))
				continue
			id[n++] = q
			sum += e[q] - s[q]
			if (first < 0 || s[q] < first)
				first = s[q]
			if (e[q] > last)
				last = e[q]
		}
		pairs = 0
		for (i = 0; i < n; i++)
			for (j = i + 1; j < n; j++)
				if (s[id[i]] < e[id[j]] && s[id[j]] < e[id[i]])
					pairs++
		printf "%d %d %d %d\n", n ? (last - first) * 1000 + 0.5 : -1,
			pairs, n, sum * 1000 + 0.5
	}'
}

# one_connect TR N: connect TR with N I/O queues, print the ms it took,
# check the queue count, disconnect
one_connect() {
	local tr=$1 n=$2 t0 ms qc
	[[ $tr == xrdma ]] && { trace_on || return 1; }
	t0=$(now_ms)
	fabrics_connect "$tr" "$(queue_opts "$n")" || return 1
	ms=$(($(now_ms) - t0))
	CTRL=$(nvme_find_ctrl "$(nqn_of "$tr")" "$tr" | tail -n 1)
	[[ -n $CTRL ]] || return 1
	qc=$(nvme_ctrl_attr "$CTRL" queue_count)
	nvme_disconnect "$CTRL" >/dev/null || return 1
	CTRL=
	((qc == n + 1)) || {
		echo "$tr: $((qc - 1)) I/O queues, not $n" >&2
		return 1
	}
	echo "$ms"
}

t_overlap() {
	local p
	trace_on || return 1
	fabrics_connect xrdma "$(queue_opts 4)" || return 1
	CTRL=$(nvme_find_ctrl "$RIG_NQN_RAM" xrdma | tail -n 1)
	nvme_disconnect "$CTRL" >/dev/null || return 1
	CTRL=
	read -r -a p <<<"$(io_phase)"
	echo "4 I/O queues: I/O queue phase ${p[0]} ms, ${p[1]} of 6 pairs of connections overlapping, their own times add up to ${p[3]} ms"
	((p[2] == 4)) || {
		echo "${p[2]} I/O queues in the trace, not 4"
		grep xrdma_cm_event "$TRACE/trace" | head -n 40
		return 1
	}
	((p[1] >= 3 && p[3] * 2 >= p[0] * 3)) || {
		echo "not parallel: fewer than 3 pairs overlap, or the phase is" \
			"longer than 2/3 of the sum"
		return 1
	}
}

t_times() {
	local tr n r ms best p phase
	for tr in xrdma rdma; do
		for n in 1 2 4; do
			best='' phase=''
			for ((r = 0; r < REPS; r++)); do
				ms=$(one_connect "$tr" "$n") || return 1
				[[ -z $best ]] || ((ms < best)) && best=$ms
				if [[ $tr == xrdma ]]; then
					read -r -a p <<<"$(io_phase)"
					[[ -z $phase ]] || ((p[0] < phase)) &&
						phase=${p[0]}
				fi
			done
			BEST[$tr.$n]=$best
			echo "$tr, $n I/O queues: connect $best ms (best of $REPS)${phase:+, I/O queue phase $phase ms}"
		done
	done
}

t_vs_rdma() {
	ktap_require "BEST[rdma.4]" "no times" || return
	local x=${BEST[xrdma.4]} r=${BEST[rdma.4]}
	echo "4 I/O queues: xrdma $x ms, nvme-rdma $r ms"
	((x <= r * 3 / 2 + 500 * SCALE))
}

# all_at_once TR: 16 concurrent connects, print the ms until all returned
all_at_once() {
	local tr=$1 i t0 ms pids=() rc=0 n
	t0=$(now_ms)
	for i in $(seq 16); do
		fabrics_connect "$tr" nr_io_queues=2,duplicate_connect &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || rc=1
	done
	ms=$(($(now_ms) - t0))
	n=$(nvme_find_ctrl "$(nqn_of "$tr")" "$tr" | wc -l)
	for CTRL in $(nvme_find_ctrl "$(nqn_of "$tr")" "$tr"); do
		nvme_state_is "$CTRL" live || rc=1
		nvme_delete_ctrl "$CTRL"
	done
	CTRL=
	wait_for 60 ctrls_gone "$tr" || rc=1
	echo "$tr: 16 controllers at once: $n live, $ms ms" >&2
	((n == 16 && rc == 0)) && echo "$ms"
}

ctrls_gone() {
	! nvme_find_ctrl "$(nqn_of "$1")" "$1" >/dev/null
}

t_sixteen() {
	local x r
	x=$(all_at_once xrdma) || return 1
	r=$(all_at_once rdma) || return 1
	echo "16 controllers at once: xrdma $x ms, nvme-rdma $r ms"
	((x <= r * 3 / 2 + 2000 * SCALE))
}

ktap_run "4 I/O queues connect in parallel (trace)" t_overlap
ktap_run "connect times at 1, 2 and 4 I/O queues, both transports" t_times
ktap_run "4 I/O queues: xrdma no slower than nvme-rdma" t_vs_rdma
ktap_run "16 controllers connected at once, both transports" t_sixteen
ktap_run "RDMA resources and module refs back to baseline" leak_check
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_finished
