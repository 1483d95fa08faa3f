#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The target misbehaves under a connected xrdma controller: its port is
# removed and re-added while verified I/O runs, the namespace is disabled
# and enabled again, and nvmet-rdma is unloaded and reloaded.  Each time
# the controller must recover on its own (reconnect_delay 1 s), I/O must
# resume with intact data, and nothing may hang or leak.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

readonly TR=xrdma
CTRL=
DEV=

cleanup() {
	modprobe nvmet_rdma 2>/dev/null
	rig_port_open >/dev/null 2>&1
	echo 1 >"$RIG_NVMET/subsystems/$RIG_NQN_RAM/namespaces/1/enable" 2>/dev/null
	test_end "$TR"
}
trap cleanup EXIT

test_begin 8

# vio NAME OFFSET: a short verified write+read pass.
vio() {
	fio_verify "$1" --rw=randwrite --bsrange=4k-64k --iodepth=16 \
		--offset="$2"
}

t_connect() {
	connect_ram "$TR" -c 1 -l 300 -k 5
}

t_port_bounce() {
	local rc=0
	# writes with verification keep running across the outage
	fio --name=bounce --filename="$DEV" --direct=1 --ioengine=libaio \
		--rw=randwrite --bsrange=4k-64k --iodepth=16 --size=16M \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --loops=4 \
		>"$TEST_TMP/bounce.fio" 2>&1 &
	FIO_PID=$!
	sleep 3
	rig_port_close
	wait_for 30 eval "! nvme_state_is $CTRL live" || {
		echo "controller did not notice the port going away"
		rc=1
	}
	echo "controller $(nvme_ctrl_state "$CTRL") with the port gone"
	sleep 3
	rig_port_open || rc=1
	timed_live "port re-added" || rc=1
	if ! fio_wait 300; then
		echo "fio hung after the port came back"
		rc=1
	fi
	wait "$FIO_PID" || {
		tail -n 20 "$TEST_TMP/bounce.fio"
		rc=1
	}
	FIO_PID=
	return "$rc"
}

t_ns_toggle() {
	local ns=$RIG_NVMET/subsystems/$RIG_NQN_RAM/namespaces/1
	echo 0 >"$ns/enable" || return 1
	sleep 2
	echo 1 >"$ns/enable" || return 1
	# the controller stays (or comes back) live, the namespace returns
	timed_live "namespace re-enabled" || return 1
	DEV=$(nvme_wait_ns "$CTRL" 60) || return 1
	vio ns 32M
}

t_target_reload() {
	local rc=0
	rig_port_close
	wait_for 30 eval "! nvme_state_is $CTRL live" || rc=1
	# nothing holds nvmet-rdma once its port is disabled
	wait_for 30 modprobe -r nvmet_rdma || {
		echo "cannot unload nvmet_rdma"
		return 1
	}
	sleep 2
	modprobe nvmet_rdma || return 1
	rig_port_open || return 1
	timed_live "nvmet-rdma reloaded" || rc=1
	DEV=$(nvme_wait_ns "$CTRL" 60) || rc=1
	vio reload 48M || rc=1
	return "$rc"
}

t_counted() {
	local rec rej
	rec=$(cat "/sys/class/nvme/$CTRL/xrdma/recoveries")
	rej=$(cat "/sys/class/nvme/$CTRL/xrdma/rejects")
	echo "recoveries $rec, rejected connects $rej"
	((rec >= 2))
}

t_disconnect() {
	nvme_disconnect "$CTRL" || return 1
	CTRL=
}

ktap_run "connect with reconnect_delay 1" t_connect
ktap_run "port removed and re-added under verified I/O" t_port_bounce
ktap_run "namespace disabled and re-enabled" t_ns_toggle
ktap_run "nvmet-rdma unloaded and reloaded" t_target_reload
ktap_run "recoveries and rejects counted" t_counted
ktap_run "nvme disconnect" t_disconnect
ktap_run "RDMA resources and module refs back to baseline" leak_check
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_finished
