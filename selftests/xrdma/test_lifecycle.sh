#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Queue lifetimes that outlast a connection:
# - a reconnect may be granted more queues than the controller's creation
#   was (a CPU came online meanwhile): the queue array must hold them
#   (KFENCE/slub redzones, or an oops, if it does not);
# - blk-mq polls a requeued polled bio while the controller reconnects,
#   that is while the poll queue is stopped or freed: io_uring hipri reads
#   on a poll queue through resets and target outages must not oops. Needs
#   native multipath off (it turns polled bios into plain ones on failover),
#   so nvme-core, which the target uses too, is reloaded with multipath=N
#   under a rig built anew for that part.

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
	if [[ -n $MPATH_CHANGED ]]; then
		nvme_delete_ctrls "$TR"
		nvme_multipath Y
	fi
	test_end "$TR"
}
trap cleanup EXIT

TEST_CMDS="fio"
test_begin 7

# reset_live: reset $CTRL and wait until it is live again.
reset_live() {
	echo 1 >"/sys/class/nvme/$CTRL/reset_controller" || return 1
	nvme_wait_state "$CTRL" live 60
}

t_cpu_more_queues() {
	local before after
	ktap_require CPU_HOTPLUG "no hotpluggable cpu1" || return
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

# the poll queue's submissions, from debugfs
poll_submitted() {
	local q
	q=$(nvme_ctrl_attr "$CTRL" queue_count)
	awk '$1 == "submitted" { print $2 }' \
		"/sys/kernel/debug/nvme-xrdma/$CTRL/q$((q - 1))/stats"
}

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
