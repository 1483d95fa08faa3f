#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Queue lifetimes that outlast a connection:
# - a reconnect may be granted more queues than the controller's creation
#   was (a CPU came online meanwhile): the queue array must hold them
#   (KFENCE/slub redzones, or an oops, if it does not); once with a CPU
#   taken offline by the test, once with CPUs present but left offline at
#   boot (tools/vm/run --cpus 4 --append maxcpus=1; the subtest skips
#   without such CPUs), poll queues asked beyond the CPUs online, grown by
#   a reset and a forced reconnect. One CPU online at boot:
#   blk-mq spreads a kind's queues over the present CPUs and refuses a
#   Connect on an hctx with no CPU online (-EXDEV), so two queues of a
#   kind with CPUs offline cannot connect;
# - a reconnect granted fewer queues (the target's attr_qid_max), then
#   more again: the poll queue goes and comes back, blk-mq maps only the
#   queues there are, and I/O, polled I/O too, goes on (a queue's CQ
#   must match the hctx type blk-mq maps it to, or its Connect is never
#   polled);
# - blk-mq polls a requeued polled bio while the controller reconnects,
#   that is while the poll queue is stopped or freed: io_uring hipri reads
#   on a poll queue through resets and target outages must not oops. Needs
#   native multipath off (it turns polled bios into plain ones on failover),
#   so nvme-core, which the target uses too, is reloaded with multipath=N
#   under a rig built anew for that part;
# - in that part too, a reconnect granted fewer queues while I/O is queued
#   on the queue that goes: those requests end as a path error instead of
#   stalling the resize until ctrl_loss_tmo.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

readonly TR=xrdma
readonly CPU1=/sys/devices/system/cpu/cpu1/online
CTRL=
DEV=
MPATH_CHANGED=
CPU_HOTPLUG=
# shellcheck disable=SC2034 # ktap_require reads it
[[ -w $CPU1 ]] && CPU_HOTPLUG=1
QID_MAX=$RIG_NVMET/subsystems/$RIG_NQN_RAM/attr_qid_max
QID_MAX0=
ONLINED=()

# CPUs present but offline (left so at boot: maxcpus=), by number
offline_cpus() {
	local c
	for c in /sys/devices/system/cpu/cpu[0-9]*; do
		[[ -w $c/online && $(<"$c/online") == 0 ]] && echo "${c##*cpu}"
	done
}
BOOT_OFFLINE=$(offline_cpus | xargs)

# cpus_online 0|1: take the CPUs this test brought online offline again
# (0), or bring $1... online (1 CPU...), remembering them
cpus_online() {
	local c on=$1
	shift
	if ((on)); then
		for c in "$@"; do
			echo 1 >"/sys/devices/system/cpu/cpu$c/online" || return 1
			ONLINED+=("$c")
		done
		return 0
	fi
	for c in "${ONLINED[@]}"; do
		echo 0 >"/sys/devices/system/cpu/cpu$c/online" || return 1
	done
	ONLINED=()
}

# nvme_multipath Y|N: nvme-core with native multipath on (its default) or
# off, under a rig set up anew (nvmet uses nvme-core too). No controller
# may exist.
nvme_multipath() {
	local m
	rig_teardown || return 1
	for m in nvme_xrdma nvme_rdma nvme_tcp nvme_fabrics nvme nvme_core; do
		module_loaded "$m" || continue
		modprobe -r "$m" && continue
		echo "$m: refcnt $(<"/sys/module/$m/refcnt"), holders:" \
			"$(ls "/sys/module/$m/holders")"
		return 1
	done
	if [[ $1 != Y ]]; then
		modprobe nvme_core multipath="$1" || return 1
	fi
	ktap_quiet rig_setup && nvme_fabrics_load
}

cleanup() {
	[[ -n $FIO_PID ]] && kill "$FIO_PID" 2>/dev/null
	rig_port_open >/dev/null 2>&1
	[[ -w $CPU1 ]] && echo 1 >"$CPU1"
	[[ -n $QID_MAX0 ]] && echo "$QID_MAX0" >"$QID_MAX"
	if ((${#ONLINED[@]})); then
		nvme_delete_ctrls "$TR"
		cpus_online 0
	fi
	if [[ -n $MPATH_CHANGED ]]; then
		nvme_delete_ctrls "$TR"
		nvme_multipath Y
	fi
	test_end "$TR"
}
trap cleanup EXIT

TEST_CMDS="fio"
test_begin 10

# reset_live: reset $CTRL and wait until it is live again.
reset_live() {
	echo 1 >"/sys/class/nvme/$CTRL/reset_controller" || return 1
	nvme_wait_state "$CTRL" live 60
}

t_cpu_more_queues() {
	local before after
	ktap_require CPU_HOTPLUG "no hotpluggable cpu1" || return
	[[ -z $BOOT_OFFLINE ]] || {
		# shellcheck disable=SC2034 # ktap_test_result reads it
		KTAP_REASON="CPUs $BOOT_OFFLINE offline since boot"
		return "$KSFT_SKIP"
	}
	echo 0 >"$CPU1" || return 1
	# one CPU online: one queue of each kind is all it may ask for (poll
	# queues only: a second default queue would map to no online CPU)
	connect_ram "$TR" -P 2 || return 1
	before=$(nvme_ctrl_attr "$CTRL" queue_count)
	echo 1 >"$CPU1" || return 1
	reset_live || return 1
	after=$(nvme_ctrl_attr "$CTRL" queue_count)
	echo "queue_count $before with one CPU online, $after after a reset" \
		"with two"
	((after > before)) || {
		echo "the reset did not ask for more queues"
		return 1
	}
	fio_verify verify --rw=write --bs=64k --iodepth=8 --size=16M || return 1
	nvme_disconnect "$CTRL" || return 1
	CTRL=
}
ktap_run "CPU onlined: a reset takes more queues than creation did" \
	t_cpu_more_queues

# want_queues NR_IO NR_WRITE NR_POLL ONLINE: "DEFAULT READ POLL" queues for
# these options with ONLINE CPUs when the target grants all asked: the
# count asked is clamped to the CPUs online (nvmf_nr_io_queues()), the
# kinds are handed out from the options as given (nvmf_set_io_queues())
want_queues() {
	local nio=$1 nw=$2 np=$3 on=$4 g d r=0 p=0
	g=$((nio + (nw < on ? nw : on) + (np < on ? np : on)))
	if ((nw && nio < g)); then
		r=$nio
		d=$((nw < g - r ? nw : g - r))
	else
		d=$((nio < g ? nio : g))
	fi
	((np && g > d + r)) && p=$((np < g - d - r ? np : g - d - r))
	echo "$d $r $p"
}

# expect_queues "DEFAULT READ POLL": the controller's queues by kind, its
# queue_count, and as many poll hctxs in blk-mq (debugfs) as poll queues
expect_queues() {
	local want=$1 got polls ns d w
	got="$(nvme_ctrl_attr "$CTRL" xrdma/nr_default_queues)"
	got+=" $(nvme_ctrl_attr "$CTRL" xrdma/nr_read_queues)"
	got+=" $(nvme_ctrl_attr "$CTRL" xrdma/nr_poll_queues)"
	read -r -a w <<<"$want"
	want+=" $((w[0] + w[1] + w[2] + 1))"
	got+=" $(nvme_ctrl_attr "$CTRL" queue_count)"
	for ns in "/sys/class/nvme/$CTRL/"nvme*n*; do
		d=/sys/kernel/debug/block/${ns##*/}
		[[ -d $d ]] || continue
		polls=$(grep -lx poll "$d"/hctx*/type 2>/dev/null | wc -l)
		want+=" ${w[2]}"
		got+=" $polls"
		break
	done
	echo "default read poll queue_count [poll hctxs]: $got"
	[[ $got == "$want" ]] || {
		echo "expected $want"
		return 1
	}
}

# the poll queues' submissions, from debugfs (poll queues come last)
poll_submitted() {
	local q n p sum=0
	n=$(nvme_ctrl_attr "$CTRL" queue_count)
	p=$(nvme_ctrl_attr "$CTRL" xrdma/nr_poll_queues)
	for ((q = n - p; q < n; q++)); do
		sum=$((sum + $(awk '$1 == "submitted" { print $2 }' \
			"/sys/kernel/debug/nvme-xrdma/$CTRL/q$q/stats")))
	done
	echo "$sum"
}

# verified I/O, and verified io_uring hipri I/O through a poll queue
io_verified() {
	local sub0 sub1
	fio_verify verify --rw=write --bs=64k --iodepth=8 --size=16M ||
		return 1
	(($(nvme_ctrl_attr "$CTRL" xrdma/nr_poll_queues))) || return 0
	sub0=$(poll_submitted)
	fio_verify hipri --ioengine=io_uring --hipri --rw=randwrite \
		--bs=4k --iodepth=8 --size=4M || return 1
	sub1=$(poll_submitted)
	echo "poll queue: $((sub1 - sub0)) commands"
	((sub1 > sub0))
}

# reconnect_live: close the target port until the controller reconnects,
# reopen it, wait until it is live again
reconnect_live() {
	rig_port_close || return 1
	nvme_wait_state "$CTRL" connecting 30 || return 1
	rig_port_open || return 1
	nvme_wait_state "$CTRL" live 60
}

t_cpu_boot_offline() {
	local cpus n0 np
	ktap_require BOOT_OFFLINE \
		"no CPU present but offline (boot with maxcpus=1)" || return
	read -r -a cpus <<<"$BOOT_OFFLINE"
	n0=$(nproc)
	# more poll queues than CPUs online, as many as there will be
	np=$((n0 + ${#cpus[@]}))
	connect_ram "$TR" -P "$np" -Q 32 || return 1
	echo "$n0 CPUs online, CPUs ${cpus[*]} offline: -P $np"
	expect_queues "$(want_queues "$n0" 0 "$np" "$n0")" || return 1
	io_verified || return 1
	# every CPU online, then a reset
	cpus_online 1 "${cpus[@]}" || return 1
	reset_live || return 1
	echo "$(nproc) CPUs online"
	expect_queues "$(want_queues "$n0" 0 "$np" "$(nproc)")" || return 1
	io_verified || return 1
	# and a reconnect
	reconnect_live || return 1
	expect_queues "$(want_queues "$n0" 0 "$np" "$(nproc)")" || return 1
	io_verified || return 1
	nvme_disconnect "$CTRL" || return 1
	CTRL=
	cpus_online 0
}
ktap_run "CPUs offline since boot onlined: a reset and a reconnect take more queues" \
	t_cpu_boot_offline

# qid_max_live MAX N: the target grants up to MAX I/O queues (that forces
# a reconnect); wait until the controller is live with N of them
qid_max_live() {
	echo "$1" >"$QID_MAX" || return 1
	wait_for 60 eval "[[ \$(nvme_ctrl_attr \$CTRL queue_count) == $(($2 + 1)) ]] &&
		nvme_state_is \$CTRL live" && return 0
	echo "$CTRL: state $(nvme_ctrl_state "$CTRL"), queue_count" \
		"$(nvme_ctrl_attr "$CTRL" queue_count), wanted $(($2 + 1))"
	return 1
}

t_fewer_queues() {
	(($(nproc) >= 2)) || {
		# shellcheck disable=SC2034 # ktap_test_result reads it
		KTAP_REASON="one CPU online"
		return "$KSFT_SKIP"
	}
	QID_MAX0=$(<"$QID_MAX") || return 1
	connect_ram "$TR" -i 2 -P 1 -Q 32 || return 1
	expect_queues "2 0 1" || return 1
	io_verified || return 1
	# no queue left for polling: the poll map must go with it
	qid_max_live 2 2 || return 1
	expect_queues "2 0 0" || return 1
	reset_live || return 1
	expect_queues "2 0 0" || return 1
	io_verified || return 1
	qid_max_live 1 1 || return 1
	expect_queues "1 0 0" || return 1
	io_verified || return 1
	# and back
	qid_max_live "$QID_MAX0" 3 || return 1
	expect_queues "2 0 1" || return 1
	reset_live || return 1
	expect_queues "2 0 1" || return 1
	io_verified || return 1
	nvme_disconnect "$CTRL" || return 1
	CTRL=
}
ktap_run "a reconnect granted fewer queues, then more: poll queue gone and back" \
	t_fewer_queues

t_no_multipath() {
	MPATH_CHANGED=1
	nvme_multipath N || return 1
	echo "nvme_core multipath $(</sys/module/nvme_core/parameters/multipath)"
}
ktap_run "nvme-core reloaded without native multipath" t_no_multipath

t_poll_connect() {
	local poll
	connect_ram "$TR" -P 1 -c 1 -l 60 || return 1
	poll=$(</sys/block/"${DEV##*/}"/queue/io_poll)
	echo "$DEV io_poll $poll, poll queues" \
		"$(nvme_ctrl_attr "$CTRL" xrdma/nr_poll_queues)"
	((poll == 1))
}
ktap_run "connect with one poll queue, reconnect_delay 1" t_poll_connect

t_poll_storm() {
	local i rc=0 sub0 sub1
	ktap_require CTRL "no controller" || return
	sub0=$(poll_submitted)
	fio --name=hipri --filename="$DEV" --direct=1 --ioengine=io_uring \
		--hipri --rw=randread --bs=4k --iodepth=16 --size=64M \
		--time_based --runtime=600 >"$TEST_TMP/hipri.fio" 2>&1 &
	FIO_PID=$!
	sleep 3
	for ((i = 1; i <= 3; i++)); do
		reset_live || rc=1
		sleep 1
	done
	for ((i = 1; i <= 2; i++)); do
		rig_port_close || rc=1
		nvme_wait_state "$CTRL" connecting 30 || rc=1
		# a few failed attempts: the poll queue is freed meanwhile
		sleep 4
		rig_port_open || rc=1
		nvme_wait_state "$CTRL" live 60 || rc=1
		sleep 1
	done
	fio_running || {
		echo "fio ended early"
		tail -n 20 "$TEST_TMP/hipri.fio"
		rc=1
	}
	fio_stop_verified "$TEST_TMP/hipri.fio" || rc=1
	sub1=$(poll_submitted)
	echo "poll queue: $((sub1 - sub0)) commands in this connection;" \
		"$(grep -E 'read: IOPS' "$TEST_TMP/hipri.fio")"
	((sub1 > sub0)) || {
		echo "nothing went through the poll queue"
		rc=1
	}
	return "$rc"
}
ktap_run "io_uring hipri reads through 3 resets and 2 outages" t_poll_storm

# Without multipath nothing fails a request over: one queued on an hctx
# whose queue a reconnect is not granted again must end (in error), or
# the resize waits for it until the attempt gives up, attempt after
# attempt, until ctrl_loss_tmo.
t_fewer_no_multipath() {
	local t0 ms rc=0
	ktap_require CTRL "no controller" || return
	(($(nproc) >= 2)) || {
		# shellcheck disable=SC2034 # ktap_test_result reads it
		KTAP_REASON="one CPU online"
		return "$KSFT_SKIP"
	}
	expect_queues "2 0 1" || return 1
	QID_MAX0=$(<"$QID_MAX") || return 1
	# one job per CPU: each hctx has requests queued when the link goes
	fio --name=queued --filename="$DEV" --direct=1 --ioengine=libaio \
		--rw=randread --bs=4k --iodepth=32 --numjobs=2 \
		--cpus_allowed=0-1 --cpus_allowed_policy=split \
		--time_based --runtime=600 >"$TEST_TMP/queued.fio" 2>&1 &
	FIO_PID=$!
	sleep 2
	t0=$(now_ms)
	echo 1 >"$QID_MAX" || return 1
	wait_for 25 eval "[[ \$(nvme_ctrl_attr \$CTRL queue_count) == 2 ]] &&
		nvme_state_is \$CTRL live" || rc=1
	ms=$(($(now_ms) - t0))
	echo "live with $(($(nvme_ctrl_attr "$CTRL" queue_count) - 1)) I/O" \
		"queue(s) after $ms ms (limit 25 s), state" \
		"$(nvme_ctrl_state "$CTRL")"
	kill -INT "$FIO_PID" 2>/dev/null
	fio_wait 60 || rc=1
	FIO_PID=
	grep -E 'err=' "$TEST_TMP/queued.fio" | head -n 2
	qid_max_live "$QID_MAX0" 3 || return 1
	io_verified || return 1
	return "$rc"
}
ktap_run "without multipath, a reconnect granted fewer queues with I/O queued on the lost one: live in 25 s" \
	t_fewer_no_multipath

t_poll_after() {
	ktap_require CTRL "no controller" || return
	fio_verify verify --rw=write --bs=64k --iodepth=8 --size=16M || return 1
	nvme_disconnect "$CTRL" || return 1
	CTRL=
	nvme_multipath Y || return 1
	MPATH_CHANGED=
}
ktap_run "verified I/O after the storm, multipath back on" t_poll_after

ktap_run "RDMA resources and module refs back to baseline" leak_check
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_finished
