#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tearing down under load: controller reset under verified I/O, module
# unload with live controllers, and "rdma link delete" of the RDMA device
# under I/O (controllers removed, outstanding I/O failed, no hang); then
# the device is added back and xrdma connects again.  The device goes once
# more while a controller is still being set up (not listed yet, its
# fabrics Connect unanswered by tools/badtarget): the removal must not
# wait for that Connect (30 to 60 s).  RDMA resources and module
# references must come back to where they were.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

readonly TR=xrdma
readonly BT_PORT=4421
readonly BT_NQN=nqn.2026-11.io.xrdma:silent
CTRL=
BT_PID=
TEST_CMDS=$BADTARGET

cleanup() {
	[[ -z $BT_PID ]] || kill -KILL "$BT_PID" 2>/dev/null
	test_end "$TR"
}
trap cleanup EXIT

test_begin 10

# bg_fio DEV SECONDS [ARGS]: verified random writes in the background.
bg_fio() {
	fio --name=bg --filename="$1" --direct=1 --ioengine=libaio \
		--rw=randwrite --bs=4k --bsrange=4k-128k --iodepth=16 \
		--size=16M --time_based --runtime="$2" --verify=crc32c \
		--do_verify=1 --verify_fatal=1 "${@:3}" >"$TEST_TMP/bg.fio" 2>&1 &
	FIO_PID=$!
}

t_reset_under_io() {
	local i rc=0
	connect_ram "$TR" || return 1
	bg_fio "$DEV" 40
	for i in 1 2 3; do
		sleep 3
		echo "reset $i"
		echo 1 >"/sys/class/nvme/$CTRL/reset_controller" || rc=1
		nvme_wait_state "$CTRL" live || rc=1
	done
	wait "$FIO_PID" || {
		echo "fio failed across resets"
		tail -n 20 "$TEST_TMP/bg.fio"
		rc=1
	}
	FIO_PID=
	grep 'err=' "$TEST_TMP/bg.fio"
	nvme_disconnect "$CTRL" || rc=1
	CTRL=
	return "$rc"
}

t_unload_live() {
	local c1 c2 rc=0
	connect_subsys "$TR" "$RIG_NQN_RAM" || return 1
	c1=$CTRL
	connect_subsys "$TR" "$RIG_NQN_NULL" || return 1
	c2=$CTRL
	CTRL=
	modprobe -r nvme-xrdma || {
		echo "modprobe -r with live controllers failed"
		return 1
	}
	for c in "$c1" "$c2"; do
		nvme_ctrl_gone "$c" || {
			echo "$c still there after unload"
			rc=1
		}
	done
	modprobe nvme-xrdma || rc=1
	return "$rc"
}

t_link_delete() {
	connect_ram "$TR" && link_delete_under_io "$RIG_RXE"
}

t_link_back() {
	rig_rdma_link_add "$RIG_RXE" "$RIG_NETDEV" || return 1
	wait_for 30 rig_rxe_active || return 1
	wait_for 30 rig_addr_ready "$RIG_IP4" || return 1
	# nvmet-rdma drops its listener with the device: re-enable the port
	rig_port_close
	rig_port_open || return 1
	wait_for 30 connect_subsys "$TR" "$RIG_NQN_RAM" || return 1
	nvme_disconnect "$CTRL" || return 1
	CTRL=
}

# mod_age MOD: the place of MOD in /proc/modules, which lists the newest
# first; a module not listed (built in, or not loaded) is the oldest.
mod_age() {
	awk -v m="$1" '$1 == m { print NR; f = 1; exit }
		END { if (!f) print 1000000 }' /proc/modules
}

# uverbs_removal_waits: whether "rdma link delete" would wait for
# badtarget, a user-space verbs process, to close the device before
# telling it the device goes. ib_uverbs lets a removal go on at once
# only where the provider can disassociate a user context (its
# ..._disassociate_ucontext op: rxe has one in 7.3, not before);
# otherwise it waits for the process's files to close. ib_core removes
# its clients newest first: with ib_uverbs loaded after rdma_cm (rxe no
# longer pulls it in at load), that wait comes before rdma_cm sends the
# DEVICE_REMOVAL event on which badtarget lets go, and the removal never
# ends. Where rdma_cm is the newer of the two, badtarget gets the event
# first and the removal completes without disassociation.
uverbs_removal_waits() {
	if grep -Eq "[[:space:]]${RIG_PROVIDER}_[a-z_]*disassociate_ucontext([[:space:]]|$)" \
		/proc/kallsyms; then
		echo "$RIG_PROVIDER_MOD disassociates user contexts"
		return 1
	fi
	if (($(mod_age rdma_cm) < $(mod_age ib_uverbs))); then
		echo "rdma_cm loaded after ib_uverbs: its removal event comes first"
		return 1
	fi
}

# A connect whose Connect the target never answers, on the device that
# is removed: rdma link delete returns in seconds, not after the admin
# timeout, and the connect fails. Skipped where the removal would wait
# for badtarget itself (above): the device still goes, with badtarget
# stopped first, for the next subtest to add it back.
t_link_delete_connecting() {
	local start took cpid rc=0
	"$BADTARGET" --port "$BT_PORT" --nqn "$BT_NQN" --scenario silent \
		>"$TEST_TMP/bt.log" 2>&1 &
	BT_PID=$!
	badtarget_listening "$TEST_TMP/bt.log" || return 1
	if uverbs_removal_waits; then
		kill -TERM "$BT_PID"
		wait_for 10 pid_gone "$BT_PID" || kill -KILL "$BT_PID"
		wait "$BT_PID"
		BT_PID=
		rdma link delete "$RIG_RXE" || return 1
		# shellcheck disable=SC2034 # ktap_test_result reads it
		KTAP_REASON="$RIG_PROVIDER_MOD cannot disassociate a user context and ib_uverbs was loaded after rdma_cm: the removal would wait for badtarget to close the device"
		return "$KSFT_SKIP"
	fi
	NVME_TRSVCID=$BT_PORT nvme_connect "$TR" "$RIG_IP4" "$BT_NQN" \
		>"$TEST_TMP/connect.out" 2>&1 &
	cpid=$!
	wait_for 20 grep -q "admin queue connected" "$TEST_TMP/bt.log" || rc=1
	sleep 1
	start=$(now_ms)
	rdma link delete "$RIG_RXE" || rc=1
	took=$(($(now_ms) - start))
	echo "rdma link delete took $took ms"
	((took < 10000)) || rc=1
	wait_for 20 pid_gone "$cpid" || {
		echo "nvme connect still blocked"
		rc=1
	}
	if wait "$cpid"; then
		echo "nvme connect succeeded"
		rc=1
	fi
	sed 's/^/  /' "$TEST_TMP/connect.out"
	wait_for 10 pid_gone "$BT_PID" || kill -KILL "$BT_PID"
	wait "$BT_PID"
	BT_PID=
	sed 's/^/  /' "$TEST_TMP/bt.log"
	return "$rc"
}

no_ctrl_left() {
	! nvme_find_ctrl "$RIG_NQN_RAM" "$TR" >/dev/null &&
		! nvme_find_ctrl "$RIG_NQN_NULL" "$TR" >/dev/null
}

t_leak() {
	# the target's listener is new: compare what the host owns
	leak_check
}

ktap_run "reset_controller 3 times under verified I/O" t_reset_under_io
ktap_run "module unload with two live controllers" t_unload_live
ktap_run "rdma link delete under I/O removes the controller" t_link_delete
ktap_run "device added back, xrdma connects again" t_link_back
ktap_run "rdma link delete while a controller is set up" \
	t_link_delete_connecting
ktap_run "device added back again, xrdma connects" t_link_back
ktap_run "no controller left" no_ctrl_left
ktap_run "RDMA resources and module refs back to baseline" t_leak
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_run "rxe device is the rig's again" rig_rxe_active
ktap_finished
