#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The target is reconfigured under a live xrdma controller while verified
# I/O runs, and is back within ctrl_loss_tmo: the controller must survive
# each way, with its data. Meanwhile the target answers the reconnects'
# fabrics Connect with "do not retry" statuses: the subsystem is unlinked
# from a port that other subsystems keep enabled (invalid subsystem), the
# host is not allowed (yet), the subsystem is rebuilt step by step with the
# port enabled before the host is allowed. A new controller gives up on
# such a status at once; a reconnecting one keeps trying, and says so.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

readonly TR=xrdma
readonly ROUNDS=${XRDMA_RECONF_ROUNDS:-3}
readonly SUBSYS=$RIG_NVMET/subsystems/$RIG_NQN_RAM
CTRL=
DEV=
ROUND_LINES=0

cleanup() {
	echo 1 >"$SUBSYS/attr_allow_any_host" 2>/dev/null
	rig_port_open >/dev/null 2>&1
	test_end "$TR"
}
trap cleanup EXIT

test_begin 9

# rejected_meanwhile: the controller is still there, reconnecting, and
# logged since line ROUND_LINES of the kernel log that it keeps trying
# after a "do not retry" Connect status.
rejected_meanwhile() {
	local state
	state=$(nvme_ctrl_state "$CTRL")
	[[ $state == connecting || $state == resetting ]] || {
		echo "controller $CTRL is '$state', expected reconnecting"
		return 1
	}
	dmesg | tail -n +$((ROUND_LINES + 1)) |
		grep -q "retrying until ctrl_loss_tmo" || {
		echo "no Connect rejection was retried"
		return 1
	}
}

t_connect() {
	connect_ram "$TR" -c 1 -l 120 -k 5 || return 1
	fio_start_verified reconf
	sleep 2
}

t_unlink() {
	local i
	ktap_require CTRL "no controller" || return
	for ((i = 1; i <= ROUNDS; i++)); do
		ROUND_LINES=$(dmesg | wc -l)
		# the null subsystem keeps the port enabled
		rig_unlink "$RIG_PORT" "$RIG_NQN_RAM"
		wait_for 30 eval "! nvme_state_is $CTRL live" || return 1
		sleep 4
		rejected_meanwhile || return 1
		rig_link "$RIG_PORT" "$RIG_NQN_RAM" || return 1
		timed_live "round $i, subsystem linked again" || return 1
	done
}

t_host() {
	local i
	ktap_require CTRL "no controller" || return
	for ((i = 1; i <= ROUNDS; i++)); do
		ROUND_LINES=$(dmesg | wc -l)
		echo 0 >"$SUBSYS/attr_allow_any_host" || return 1
		# fails (ENETRESET) as the reset does not end live
		echo 1 >"/sys/class/nvme/$CTRL/reset_controller" 2>/dev/null
		sleep 4
		rejected_meanwhile || return 1
		echo 1 >"$SUBSYS/attr_allow_any_host" || return 1
		timed_live "round $i, host allowed again" || return 1
	done
}

t_rebuild() {
	local ns=$SUBSYS/namespaces/1 serial uuid nguid
	ktap_require CTRL "no controller" || return
	ROUND_LINES=$(dmesg | wc -l)
	# the same subsystem and namespace identity, or the host drops the
	# namespace as another one
	serial=$(<"$SUBSYS/attr_serial")
	uuid=$(<"$ns/device_uuid")
	nguid=$(<"$ns/device_nguid")
	# all down: the port, then the subsystem (the data stays in null_blk)
	rig_port_close
	wait_for 30 eval "! nvme_state_is $CTRL live" || return 1
	rig_del_subsys "$RIG_NQN_RAM" || return 1
	sleep 2
	# up again step by step: the port first (no such subsystem yet) ...
	rig_link "$RIG_PORT" "$RIG_NQN_NULL" || return 1
	sleep 3
	# ... the subsystem and its namespace, the host not allowed yet ...
	rig_add_subsys "$RIG_NQN_RAM" /dev/xrdma_ram || return 1
	echo 0 >"$SUBSYS/attr_allow_any_host" &&
		echo "$serial" >"$SUBSYS/attr_serial" &&
		echo 0 >"$ns/enable" &&
		echo "$uuid" >"$ns/device_uuid" &&
		echo "$nguid" >"$ns/device_nguid" &&
		echo 1 >"$ns/enable" || return 1
	rig_link "$RIG_PORT" "$RIG_NQN_RAM" || return 1
	sleep 3
	rejected_meanwhile || return 1
	# ... and last the host
	echo 1 >"$SUBSYS/attr_allow_any_host" || return 1
	timed_live "target rebuilt" || return 1
	DEV=$(nvme_wait_ns "$CTRL" 60)
}

t_fio_done() {
	ktap_require FIO_PID "no fio" || return
	fio_running || {
		echo "fio ended during the reconfigurations"
		tail -n 20 "$TEST_TMP/reconf.fio"
		return 1
	}
	fio_stop_verified "$TEST_TMP/reconf.fio"
}

t_verify_all() {
	ktap_require CTRL "no controller" || return
	nvme_wait_state "$CTRL" live 10 || return 1
	[[ -b $DEV ]] || {
		echo "no namespace block device $DEV"
		return 1
	}
	fio_verify after --rw=write --bs=128k --iodepth=8 --size=32M || return 1
	echo "rejected connects $(nvme_ctrl_attr "$CTRL" xrdma/rejects)," \
		"failed reconnects $(nvme_ctrl_attr "$CTRL" xrdma/failed_reconnects)"
	nvme_disconnect "$CTRL" || return 1
	CTRL=
}

t_new_gives_up() {
	local t0 rc
	# a controller that never was live: the first rejection is final
	echo 0 >"$SUBSYS/attr_allow_any_host" || return 1
	t0=$(now_ms)
	nvme_connect "$TR" "$RIG_IP4" "$RIG_NQN_RAM" -c 1 -l 120
	rc=$?
	echo 1 >"$SUBSYS/attr_allow_any_host"
	echo "connect status $rc after $(($(now_ms) - t0)) ms"
	((rc != 0)) || return 1
	! nvme_find_ctrl "$RIG_NQN_RAM" "$TR" >/dev/null
}

ktap_run "connect, verified random writes in the background" t_connect
ktap_run "subsystem unlinked and linked again, $ROUNDS times" t_unlink
ktap_run "host not allowed across a reset, $ROUNDS times" t_host
ktap_run "subsystem rebuilt, port enabled before the host is allowed" \
	t_rebuild
ktap_run "fio finished, no verify error" t_fio_done
ktap_run "verified write and read after it all, disconnect" t_verify_all
ktap_run "a new controller gives up on the first rejection" t_new_gives_up
ktap_run "RDMA resources and module refs back to baseline" leak_check
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_finished
