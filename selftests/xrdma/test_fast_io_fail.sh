#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fast_io_fail_tmo: while the controller reconnects (the target's port
# was taken away), I/O must fail on time when fast_io_fail_tmo is set,
# and must wait for the reconnect (and then succeed) when it is not.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

readonly TR=xrdma
readonly FAIL_TMO=3
CTRL=
DEV=
DD_PID=
T_PRE=
T_OUT=

cleanup() {
	[[ -n $DD_PID ]] && kill "$DD_PID" 2>/dev/null
	rig_port_open >/dev/null 2>&1
	test_end "$TR"
}
trap cleanup EXIT

TEST_CMDS="dd"
test_begin 5

# connect [OPTION=VALUE,...]: reconnect every second for a minute. Written
# to /dev/nvme-fabrics directly: Debian 12's nvme-cli (2.4) has no
# --fast_io_fail_tmo.
connect() {
	local o="transport=$TR,traddr=$RIG_IP4,trsvcid=$NVME_TRSVCID"
	o+=",nqn=$RIG_NQN_RAM,hostnqn=$NVME_HOSTNQN,hostid=$NVME_HOSTID"
	o+=",reconnect_delay=1,ctrl_loss_tmo=60${1:+,$1}"
	echo "connect: $o"
	echo "$o" >/dev/nvme-fabrics || return 1
	CTRL=$(nvme_find_ctrl "$RIG_NQN_RAM" "$TR" "$RIG_IP4") || return 1
	nvme_wait_state "$CTRL" live || return 1
	DEV=$(nvme_wait_ns "$CTRL")
}

# outage: take the port away and wait until the controller reconnects;
# then start one direct read in the background (DD_PID).  The controller
# entered CONNECTING, which starts the fast_io_fail timer, after T_PRE
# (taken before the port was closed, then before each read of its state
# that was not CONNECTING) and before T_OUT (after the first read that
# was).  On the debug kernel the two are over a second apart.
outage() {
	local t end
	T_PRE=$(now_ms)
	rig_port_close
	end=$(($(now_ms) + 30000))
	while :; do
		t=$(now_ms)
		nvme_state_is "$CTRL" connecting && break
		T_PRE=$t
		((t < end)) || {
			echo "controller is $(nvme_ctrl_state "$CTRL"), not connecting"
			return 1
		}
		sleep 0.05
	done
	T_OUT=$(now_ms)
	dd if="$DEV" of=/dev/null bs=4k count=1 iflag=direct status=none \
		2>"$TEST_TMP/dd.err" &
	DD_PID=$!
}

# dd_wait SECONDS: wait for the read; its status, 124 if still running.
dd_wait() {
	wait_for "$1" eval "! kill -0 $DD_PID 2>/dev/null" || return 124
	wait "$DD_PID"
	local rc=$?
	DD_PID=
	return "$rc"
}

t_fast_fail() {
	local ms rc t
	connect "fast_io_fail_tmo=$FAIL_TMO" || return 1
	outage || return 1
	dd_wait $((FAIL_TMO + 10))
	rc=$?
	t=$(now_ms)
	ms=$((t - T_OUT))
	if ((rc == 124)); then
		echo "read still pending $ms ms into the outage"
		return 1
	fi
	echo "read failed (status $rc: $(cat "$TEST_TMP/dd.err")) $ms ms" \
		"after the controller was seen reconnecting," \
		"$((t - T_PRE)) ms after it was last seen not reconnecting"
	((rc != 0)) || {
		echo "read succeeded with the target gone"
		return 1
	}
	# due at FAIL_TMO s; allow one reconnect attempt of slack
	((t - T_PRE >= (FAIL_TMO - 1) * 1000 && ms <= (FAIL_TMO + 3) * 1000)) || {
		echo "expected about ${FAIL_TMO} s"
		return 1
	}
}
ktap_run "fast_io_fail_tmo=$FAIL_TMO: queued I/O fails after ~$FAIL_TMO s" \
	t_fast_fail

t_back() {
	ktap_require CTRL "no controller" || return
	rig_port_open || return 1
	nvme_wait_state "$CTRL" live 30 || return 1
	dd if="$DEV" of=/dev/null bs=4k count=1 iflag=direct status=none ||
		return 1
	nvme_disconnect "$CTRL" || return 1
	CTRL=
}
ktap_run "I/O works again once the port is back" t_back

t_no_fast_fail() {
	local rc
	connect || return 1
	outage || return 1
	dd_wait $((FAIL_TMO + 4))
	rc=$?
	((rc == 124)) || {
		echo "read ended (status $rc) without fast_io_fail_tmo"
		return 1
	}
	echo "read still queued $(($(now_ms) - T_OUT)) ms into the outage"
	rig_port_open || return 1
	dd_wait 30
	rc=$?
	((rc == 0)) || {
		echo "queued read failed (status $rc) after the reconnect"
		return 1
	}
	echo "queued read completed $(($(now_ms) - T_OUT)) ms into the outage"
	nvme_disconnect "$CTRL" || return 1
	CTRL=
}
ktap_run "no fast_io_fail_tmo: queued I/O waits and completes" t_no_fast_fail

ktap_run "RDMA resources and module refs back to baseline" leak_check
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_finished
