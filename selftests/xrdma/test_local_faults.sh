#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Local failures no target can provoke, injected through the debugfs knobs
# of fault.c (/sys/kernel/debug/nvme-xrdma/nvmeN/fault/) while fio writes
# and verifies crc32c on the RAM namespace:
#
#   mr_exhausted  no MR: the command waits (BLK_STS_RESOURCE), no recovery
#   dma_map       no mapping: a path error, multipath retries, no recovery
#   dma_map_last  no mapping for the last request of a batch, the idle
#                 queue's doorbell rung for the ones before it
#   post_send     the doorbell refused: commands end unsent, recovery
#   post_recv     a receive not reposted: recovery
#   cq_error      a receive completes in error: recovery
#   drain         a QP drain times out during a reset: the QP is reset
#                 before the teardown ends its commands and unmaps
#                 their memory
#   post_send_reg a doorbell posts the chain up to its first REG_MR and
#                 refuses the rest: recovery, and the MR whose REG_MR went
#                 out without its SEND stays out of the pool until its QP
#                 is gone: the debugfs counters mr_kept and
#                 mr_released, kept_mrs of every queue back to 0, the
#                 MRs of "rdma res show mr" back to their count
#   aen           the AEN's post fails at a reset's reconnect: recovery,
#                 after which the AEN is armed again: a
#                 namespace added on the target must show up on the host
#   create_qp     (a queue id, not a count) the QP creation of I/O queue 2
#                 fails at a reset's reconnect, as on a device out of QPs:
#                 the controller goes on with 1 of its 2 I/O queues, says
#                 so in one line, no reconnect attempt fails, I/O is
#                 verified; the next reset brings both back
#   resize_short  a reset that must grow the I/O tag set back to 2
#                 queues (create_qp left it at 1) finds it kept at 1, as
#                 blk-mq leaves it when it cannot allocate for more: that
#                 attempt fails with a log line naming the counts, without
#                 a WARN, and the next one grows it; I/O is verified
#   short_page_list a reset whose I/O queues find their device's FRWR page
#                 list one page shorter than the admin queue's device
#                 (siw's next to rxe's): a 1 MiB O_DIRECT read, one
#                 segment over 257 pages from a buffer 512 bytes into a
#                 huge page, which the block layer lets through by the
#                 admin queue's limit, must not fail; the queues that
#                 could not map it must not carry it
#
# Each knob must be consumed, leave the controller LIVE with the effect
# named above, and cost no data: the verified fio sees no error.  Then,
# with the I/O queues idle, post_recv and post_send each fail the next two
# attempts of a reset in the I/O queues' setup (receives half posted, a
# fabrics Connect never sent): the third attempt must connect.  The I/O
# queues connect in parallel, so every one of them posts its receives in
# an attempt: post_recv is armed with two faults per I/O queue; the
# fabrics Connects go in order, the first failed one ends the attempt.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

readonly TR=xrdma
readonly KNOBS="post_send post_recv mr_exhausted dma_map cq_error drain post_send_reg aen
	quiesce_hold live_hold create_qp dma_map_last resize_short short_page_list"
readonly AEN_NS=$RIG_NVMET/subsystems/$RIG_NQN_RAM/namespaces/2
CTRL=
DEV=
FAULT=
SCHED0=()
HUGE0=

cleanup() {
	local k
	for k in $KNOBS; do
		[[ -e $FAULT/$k ]] && echo 0 >"$FAULT/$k"
	done
	sched_restore
	aen_ns_del
	[[ -n $HUGE0 ]] && echo "$HUGE0" >/proc/sys/vm/nr_hugepages
	test_end "$TR"
}
trap cleanup EXIT

test_begin 20

counter() {
	nvme_ctrl_attr "$CTRL" "xrdma/$1"
}

qstat() {
	awk -v n="$1" '$1 == n { print $2 }' \
		"/sys/kernel/debug/nvme-xrdma/$CTRL/stats"
}

knob_spent() {
	(($(cat "$FAULT/$1") == 0))
}

t_connect() {
	connect_ram "$TR" -c 1 -l 120 -k 5 || return 1
	FAULT=/sys/kernel/debug/nvme-xrdma/$CTRL/fault
	fio_start_verified lf
}

t_knobs() {
	local k v
	for k in $KNOBS; do
		v=$(cat "$FAULT/$k") || return 1
		[[ $v == 0 ]] || {
			echo "$k reads '$v', not 0"
			return 1
		}
	done
	if echo 1000001 >"$FAULT/post_send" 2>/dev/null; then
		echo "an out-of-range budget was accepted"
		return 1
	fi
	echo "knobs: $(cd "$FAULT" && echo *)"
}

# inject KNOB N EXPECT: arm N faults; wait until spent and LIVE; EXPECT
# is "recover" (at least one recovery more) or "keep" (none).
inject() {
	local knob=$1 n=$2 expect=$3 rec0 rec d0
	rec0=$(counter recoveries)
	d0=$(dmesg | wc -l)
	echo "$n" >"$FAULT/$knob" || return 1
	wait_for 60 knob_spent "$knob" || {
		echo "$knob: $(cat "$FAULT/$knob") of $n faults never fired"
		return 1
	}
	nvme_wait_state "$CTRL" live 120 || return 1
	fio_running || {
		echo "fio stopped"
		tail -n 20 "$TEST_TMP/lf.fio"
		return 1
	}
	rec=$(counter recoveries)
	echo "$knob x$n: recoveries $rec0 -> $rec"
	dmesg | tail -n +"$d0" | grep -m1 "injected fault: $knob" || {
		echo "no log line for the injected $knob fault"
		return 1
	}
	case $expect in
	recover) ((rec > rec0)) ;;
	keep) ((rec == rec0)) ;;
	esac
}

mr_count() {
	rdma res show mr 2>/dev/null | grep -c .
}

mr_count_is() {
	(($(mr_count) == $1))
}

# MRs kept out of the pool by any queue now (debugfs q<qid>/stats)
kept_now() {
	cat /sys/kernel/debug/nvme-xrdma/"$CTRL"/q*/stats |
		awk '$1 == "kept_mrs" { n += $2 } END { print n + 0 }'
}

t_mr() {
	local b0
	b0=$(qstat busy)
	inject mr_exhausted 200 keep || return 1
	echo "busy $b0 -> $(qstat busy)"
	(($(qstat busy) >= b0 + 200))
}

t_dma() {
	inject dma_map 3 keep
}

t_post_send() {
	inject post_send 1 recover
}

t_post_recv() {
	inject post_recv 1 recover
}

t_cq_error() {
	inject cq_error 1 recover
}

# A REG_MR posted without its SEND: its MR must not go back to the pool
# while the QP may still run that REG_MR, and must be back, deregistered
# with the pool, once the recovery tore the QP down.
t_post_send_reg() {
	local m0 k0 r0 k r
	m0=$(mr_count)
	k0=$(qstat mr_kept) r0=$(qstat mr_released)
	[[ -n $k0 && -n $r0 ]] || {
		echo "no mr_kept or mr_released counter in the stats"
		return 1
	}
	inject post_send_reg 1 recover || return 1
	k=$(qstat mr_kept) r=$(qstat mr_released)
	echo "MRs kept $k0 -> $k, released $r0 -> $r, kept now $(kept_now)"
	((k > k0)) || {
		echo "the MR of the REG_MR posted alone went back to the pool"
		return 1
	}
	if ((r != k || $(kept_now) != 0)); then
		echo "kept MRs not released with their QP"
		return 1
	fi
	wait_for 30 mr_count_is "$m0" || {
		echo "MRs: $m0 before, $(mr_count) after the recovery"
		return 1
	}
	echo "MRs: $m0 before and after"
}

t_verified() {
	fio_stop_verified "$TEST_TMP/lf.fio" || return 1
	fio_verify after --rw=randwrite --bsrange=4k-128k --iodepth=16
}

# sched_set NAME: every namespace of $CTRL (the paths' request queues)
# gets I/O scheduler NAME; sched_restore puts back what they had
sched_set() {
	local f
	for f in "/sys/class/nvme/$CTRL"/nvme*n*/queue/scheduler; do
		[[ -e $f ]] || continue
		SCHED0+=("$f" "$(sed 's/.*\[\(.*\)\].*/\1/' "$f")")
		echo "$1" >"$f" || return 1
	done
	((${#SCHED0[@]})) || {
		echo "no namespace of $CTRL to set a scheduler on"
		return 1
	}
}

sched_restore() {
	local i
	for ((i = 0; i < ${#SCHED0[@]}; i += 2)); do
		[[ -e ${SCHED0[i]} ]] && echo "${SCHED0[i + 1]}" >"${SCHED0[i]}"
	done
	SCHED0=()
}

# A lost doorbell: blk-mq calls no ->commit_rqs after the last request of
# a batch returned BLK_STS_OK, as one does that ->queue_rq ends at once as a
# path error without linking it (no mapping): the requests linked before
# it must be posted then, not with the next request.  mq-deadline makes
# blk-mq hand the batch to ->queue_rq one by one; nvme-core's max_retries
# at 0 fails the ended request instead of resubmitting it (which would
# post them too), and the queue is idle after it.  Before the fix the
# others waited for their timeout (30 s) and a recovery.  Three rounds of
# 8 Reads submitted at once on one CPU, the last of each batch unmapped.
t_dma_last() {
	local i rec0 rec t0 ms d0 err rc=0 out=$TEST_TMP/last.fio
	d0=$(dmesg | wc -l)
	core_param max_retries 0 || return 1
	sched_set mq-deadline || rc=1
	rec0=$(counter recoveries)
	for ((i = 1; i <= 3 && rc == 0; i++)); do
		echo 1 >"$FAULT/dma_map_last" || rc=1
		t0=$(now_ms)
		timeout 60 taskset -c 0 fio --name=last --filename="$DEV" \
			--direct=1 --ioengine=libaio --rw=randread --bs=4k \
			--iodepth=8 --iodepth_batch_submit=8 --number_ios=8 \
			--size=8M >"$out" 2>&1
		ms=$(($(now_ms) - t0))
		# fio stops at the first error (ENOLINK for a path error) once
		# the Reads in flight are back: "err=67 (file: ..."
		err=$(grep -m1 -o 'err= *[0-9]*' "$out")
		err=${err##*[= ]}
		echo "round $i: 8 Reads in $ms ms, fio err=${err:-none}"
		knob_spent dma_map_last || {
			echo "the dma_map_last fault never fired"
			rc=1
		}
		# the unmapped Read must fail: resubmitted, it would post the
		# others itself
		((${err:-0} != 0)) || {
			echo "the unmapped Read did not fail"
			tail -n 20 "$out"
			rc=1
		}
		((ms < 20000)) || {
			echo "the Reads before the unmapped one waited"
			rc=1
		}
	done
	core_param_restore
	sched_restore
	rec=$(counter recoveries)
	echo "recoveries $rec0 -> $rec"
	((rec == rec0)) || rc=1
	dmesg | tail -n +"$d0" | grep -m1 "injected fault: dma_map_last" ||
		rc=1
	return "$rc"
}

# reset_with_fault KNOB N WHAT: arm N faults of KNOB, reset, wait until
# they fired and the controller is live again (WHAT names it in the log)
reset_with_fault() {
	local knob=$1 n=$2
	echo "$n" >"$FAULT/$knob" || return 1
	# may fail with ENETRESET: the write reports how the first attempt ended
	echo 1 2>/dev/null >"/sys/class/nvme/$CTRL/reset_controller"
	wait_for 60 knob_spent "$knob" || {
		echo "$knob: $(cat "$FAULT/$knob") of $n faults never fired"
		return 1
	}
	timed_live "$3"
}

# reset_failing KNOB PER: with the I/O queues idle, arm 2 * PER faults
# (PER: how many one attempt consumes) and reset: the first two attempts
# fail in the I/O queues' setup (posting receives, or the fabrics
# Connect), the third connects.
reset_failing() {
	local knob=$1 n=$((2 * $2)) f0 f
	f0=$(counter failed_reconnects)
	echo "$knob: $n faults, $2 per attempt"
	reset_with_fault "$knob" "$n" "reset with $knob failing" || return 1
	f=$(counter failed_reconnects)
	echo "failed reconnects $f0 -> $f"
	((f == f0 + 2)) || return 1
	DEV=$(nvme_wait_ns "$CTRL" 60) || return 1
	fio_verify "reset-$knob" --rw=randwrite --bs=16k --iodepth=8
}

# A drain that does not finish: the QP is reset, the commands it held end
# and are retried after the reconnect, with their data intact.
t_drain() {
	fio_start_verified dr || return 1
	sleep 2
	reset_with_fault drain 1 "reset with a drain timing out" || return 1
	dmesg | grep -m1 "QP reset: none of its work requests" || {
		echo "no QP reset logged"
		return 1
	}
	sleep 2
	fio_stop_verified "$TEST_TMP/dr.fio"
}

aen_ns_add() {
	rig_add_nullb xrdma_aen 16 0 || return 1
	mkdir "$AEN_NS" &&
		echo /dev/xrdma_aen >"$AEN_NS/device_path" &&
		echo 1 >"$AEN_NS/enable"
}

aen_ns_del() {
	if [[ -d $AEN_NS ]]; then
		echo 0 >"$AEN_NS/enable"
		rmdir "$AEN_NS"
	fi
	[[ -d $RIG_NULLB/xrdma_aen ]] && rig_del_nullb xrdma_aen
}

ns_count_is() {
	(($(nvme_ctrl_namespaces "$CTRL" | wc -l) == $1))
}

# The AEN's post fails at the reconnect of a reset: without a recovery
# nothing would post it again, and the namespace added on the target
# afterwards would stay unknown to the host.
t_aen() {
	local rec0 rec n0 ok=1
	rec0=$(counter recoveries)
	reset_with_fault aen 1 "reset with the AEN post failing" || return 1
	rec=$(counter recoveries)
	echo "recoveries $rec0 -> $rec"
	((rec > rec0)) || {
		echo "a failed AEN post started no recovery"
		ok=0
	}
	dmesg | grep -m1 "cannot post AEN" || {
		echo "no log line for the failed AEN post"
		ok=0
	}
	# the reconnect's own namespace scan must not be what finds it
	sleep 3
	n0=$(nvme_ctrl_namespaces "$CTRL" | wc -l)
	aen_ns_add || return 1
	if wait_for 30 ns_count_is $((n0 + 1)); then
		echo "namespace 2 appeared: the AEN was armed again"
	else
		echo "namespaces $n0 -> $(nvme_ctrl_namespaces "$CTRL" | wc -l) 30 s after namespace 2 was added: no AEN armed"
		ok=0
	fi
	aen_ns_del || return 1
	((ok)) && wait_for 30 ns_count_is "$n0"
}

io_queues() {
	echo $(($(nvme_ctrl_attr "$CTRL" queue_count) - 1))
}

# two_io_queues: skips the subtest unless the controller has 2 I/O queues.
two_io_queues() {
	local n
	n=$(io_queues)
	((n == 2)) && return 0
	# shellcheck disable=SC2034 # ktap_test_result reads it
	KTAP_REASON="$n I/O queues, 2 needed (2 CPUs)"
	return "$KSFT_SKIP"
}

# reset_faulted KNOB VALUE WHAT: KNOB armed with VALUE, then a reset (WHAT
# names it); the fault must fire and the controller be live again.  The
# write fails (ENETRESET) if the reset's own attempt does, which a fault
# may make it do: the next attempt is the reconnect's.
reset_faulted() {
	echo "$2" >"$FAULT/$1" || return 1
	echo 1 2>/dev/null >"/sys/class/nvme/$CTRL/reset_controller"
	wait_for 60 knob_spent "$1" || {
		echo "the $1 fault never fired"
		return 1
	}
	timed_live "$3"
}

# A device that has no QP for I/O queue 2 at a reconnect: the controller
# goes on with the one it got instead of failing the attempt.
t_create_qp() {
	local f0 f d0 n
	two_io_queues || return
	n=$(io_queues)
	f0=$(counter failed_reconnects)
	d0=$(dmesg | wc -l)
	reset_faulted create_qp 2 "reset with no QP for I/O queue 2" ||
		return 1
	f=$(counter failed_reconnects)
	echo "I/O queues $n -> $(io_queues), failed reconnects $f0 -> $f"
	dmesg | tail -n +"$d0" | grep -m1 "using 1 of 2 I/O queues: queue 2 got no QP" || {
		echo "no log line for the fewer queues"
		return 1
	}
	((f == f0 && $(io_queues) == 1)) || return 1
	DEV=$(nvme_wait_ns "$CTRL" 60) || return 1
	fio_verify fewer-queues --rw=randwrite --bs=16k --iodepth=8 || return 1
	echo 1 >"/sys/class/nvme/$CTRL/reset_controller" || return 1
	timed_live "reset with QPs for both" || return 1
	echo "I/O queues after the next reset: $(io_queues)"
	(($(io_queues) == 2)) || return 1
	DEV=$(nvme_wait_ns "$CTRL" 60) || return 1
	fio_verify both-queues --rw=randwrite --bs=16k --iodepth=8
}

# A reset whose reconnect must grow the I/O tag set from 1 hardware queue
# to 2 and cannot: the attempt must fail as one short of memory (it used
# to start queue 2 past the set's hardware queues, and WARN), and the next
# attempt grow the set.
t_resize_short() {
	local f0 f d0 rc=0
	two_io_queues || return
	d0=$(dmesg | wc -l)
	reset_faulted create_qp 2 "reset with no QP for I/O queue 2" ||
		return 1
	(($(io_queues) == 1)) || {
		echo "$(io_queues) I/O queues, not 1, after the reset without a QP"
		return 1
	}
	f0=$(counter failed_reconnects)
	reset_faulted resize_short 1 \
		"reset whose growth of the tag set fell back" || return 1
	f=$(counter failed_reconnects)
	echo "I/O queues 1 -> $(io_queues), failed reconnects $f0 -> $f"
	dmesg | tail -n +"$d0" | grep -m1 "injected fault: resize_short" ||
		rc=1
	dmesg | tail -n +"$d0" |
		grep -m1 "cannot resize the I/O tag set to 2 hardware queues, it kept 1" || {
		echo "no log line for the attempt the tag set could not grow for"
		rc=1
	}
	if dmesg | tail -n +"$d0" | grep -E -A3 "WARNING|BUG"; then
		echo "a splat instead of a failed attempt"
		rc=1
	fi
	((f == f0 + 1 && $(io_queues) == 2)) || rc=1
	DEV=$(nvme_wait_ns "$CTRL" 60) || return 1
	fio_verify grown --rw=randwrite --bs=16k --iodepth=8 || rc=1
	return "$rc"
}

# I/O queues on a device whose FRWR page list is one page shorter than
# the admin queue's: the request queues were given the admin queue's
# device's limit, 256 pages and a misaligned head.  A 1 MiB read 512 bytes
# into a huge page is one segment over 257 pages: the queues on the
# shorter device could map only 256 of them, and the read failed for good
# (EIO).  Such queues must not carry the controller's I/O; the reconnect
# after them, on full-length devices again, must.
t_short_page_list() {
	local out=$TEST_TMP/short.fio d0 rc
	d0=$(dmesg | wc -l)
	HUGE0=$(cat /proc/sys/vm/nr_hugepages)
	echo $((HUGE0 + 2)) >/proc/sys/vm/nr_hugepages
	reset_faulted short_page_list "$(io_queues)" \
		"reset with the I/O queues on a shorter page list" || return 1
	DEV=$(nvme_wait_ns "$CTRL" 60) || return 1
	fio --name=misaligned --filename="$DEV" --ioengine=psync --direct=1 \
		--rw=read --bs=1M --size=1M --offset=1M --mem=shmhuge \
		--iomem_align=512 >"$out" 2>&1
	rc=$?
	echo "$HUGE0" >/proc/sys/vm/nr_hugepages
	HUGE0=
	grep -m1 -E "err=" "$out"
	dmesg | tail -n +"$d0" | grep -m2 -E "not using it|I/O Error|print_req_error"
	((rc == 0)) || {
		tail -n 5 "$out"
		echo "the misaligned 1 MiB read failed (fio exit $rc)"
		return 1
	}
	nvme_wait_state "$CTRL" live 30
}

t_disconnect() {
	nvme_disconnect "$CTRL" || return 1
	CTRL=
}

ktap_run "connect, verified fio in the background" t_connect
ktap_run "fault knobs, 0 by default, bounded" t_knobs
ktap_run "MR pool exhausted: commands wait, no recovery" t_mr
ktap_run "DMA mapping error: path error retried, no recovery" t_dma
ktap_run "ib_post_send failure: recovery" t_post_send
ktap_run "ib_post_recv failure: recovery" t_post_recv
ktap_run "receive completion in error: recovery" t_cq_error
ktap_run "REG_MR posted without its SEND: MR kept until the QP is gone" \
	t_post_send_reg
ktap_run "the fio loop verified, and a pass after it" t_verified
ktap_run "last of a batch unmapped: the ones before it posted" t_dma_last
ktap_run "receives not posted: two resets fail, the third connects" \
	reset_failing post_recv "$(io_queues)"
ktap_run "Connect not sent: two resets fail, the third connects" \
	reset_failing post_send 1
ktap_run "a drain timing out resets the QP, I/O verified" t_drain
ktap_run "AEN post failure: recovery, the AEN armed again" t_aen
ktap_run "no QP for I/O queue 2: connected with fewer queues" t_create_qp
ktap_run "a tag set that cannot grow: the attempt fails, the next grows it" \
	t_resize_short
ktap_run "I/O queues on a shorter FRWR page list: a misaligned 1 MiB read" \
	t_short_page_list
ktap_run "nvme disconnect" t_disconnect
ktap_run "RDMA resources and module refs back to baseline" leak_check
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_finished
