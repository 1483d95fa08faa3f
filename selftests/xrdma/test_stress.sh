#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The life-cycle actors at once: a controller that must
# survive (ctrl_loss_tmo=-1) carries crc32c-verified writes while, each at
# random intervals in its own loop,
#   reset     the survivor is reset;
#   second    a second controller (null subsystem) is connected and
#             deleted, sometimes mid-I/O, sometimes mid-connect;
#   device    a second RDMA device is added and deleted;
#   pathb     path B (its own netdev and rxe device) flaps under a third
#             controller, and connects are started while it is down: each
#             must fail, and within 10 s (it must not wait for a CM reply
#             through the down port; address resolution gives up after
#             3 s);
#   patha     (siw only) the survivor's own link flaps;
#   target    the target changes the survivor's queue count (attr_qid_max,
#             which makes nvmet drop its controllers) or unlinks and
#             relinks the null subsystem;
#   bad       tools/badtarget plays one of its scenarios to a fourth
#             controller.
# Afterwards: the survivor live, no verify error, every other controller
# gone, RDMA resources and module refs at baseline, no kernel warning.
# The count of each actor's rounds is printed.
#
# Afterwards also: no actor saw a wrong outcome (pathb's connects).
#
# XRDMA_STRESS_SECS (default 120) sets the duration, XRDMA_STRESS_SEED
# the random seed (printed), XRDMA_STRESS_ACTORS a comma list of actors.
# On rxe the survivor's link stays up: rxe's GSI QP may wedge when a CM
# message meets its netdev going down, so only path B flaps there. siw's
# CM is TCP, so with XRDMA_PROVIDER=siw path A flaps too (patha).
#
# On siw the survivor writes 4 KiB, which travel inside the command
# capsule. 6.12's nvmet-rdma over siw never frees a queue the target
# disconnects itself (target: a qid_max change, an unlink) while an RDMA
# READ of a host's write is outstanding: siw's graceful close (RTS to
# CLOSING) drops the connection without flushing the READs that wait for
# their responses, and nvmet_sq_destroy() waits for their commands before
# the QP is drained. Whatever the host: nvme-rdma hung it after 6 qid_max
# changes under verified writes, xrdma after 10.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

readonly TR=xrdma
readonly SCALE=${XRDMA_TIMEOUT_SCALE:-1}
readonly SECS=${XRDMA_STRESS_SECS:-120}
readonly SEED=${XRDMA_STRESS_SEED:-$$}
if rig_iwarp; then
	readonly ACTORS=${XRDMA_STRESS_ACTORS:-reset,second,device,pathb,patha,target,bad}
else
	readonly ACTORS=${XRDMA_STRESS_ACTORS:-reset,second,device,pathb,target,bad}
fi
readonly NETDEV_B=xrdma-rig6
readonly RXE_B=${RIG_PROVIDER}6
readonly IP_B=198.18.1.1
readonly PORT_B=16
readonly NETDEV_D=xrdma-rig7
readonly RXE_D=${RIG_PROVIDER}7
readonly BT_PORT=4426
readonly BT_NQN=nqn.2026-11.io.xrdma:stress
readonly BT_SCENARIOS=(replay-cid unknown-cid short-capsule bad-status
	est-dreq dreq-mid-io idle-dreq aen-storm slow-write read-no-data good)
QID_MAX=$RIG_NVMET/subsystems/$RIG_NQN_RAM/attr_qid_max
QID_MAX0=
CTRL=
DEV=
PATH_B=0
PIDS=()
STOP=

cleanup() {
	[[ -n $STOP ]] && touch "$STOP"
	local p
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	pkill -KILL -f "badtarget --port $BT_PORT" 2>/dev/null
	ip link set "$NETDEV_B" up 2>/dev/null
	[[ ,$ACTORS, == *,patha,* ]] && path_a_up
	[[ -n $QID_MAX0 ]] && echo "$QID_MAX0" >"$QID_MAX"
	rig_link "$RIG_PORT" "$RIG_NQN_NULL" >/dev/null 2>&1
	nvme_delete_ctrls "$TR"
	rdma link delete "$RXE_D" 2>/dev/null
	ip link del "$NETDEV_D" 2>/dev/null
	((PATH_B)) && rig_del_path "$NETDEV_B" "$RXE_B" "$PORT_B"
	test_end "$TR"
}
trap cleanup EXIT

TEST_CMDS="ip rdma fio dd $BADTARGET"
test_begin 6

# ------------------------------------------------------------ actors

# running: the stress is not over yet.
running() {
	[[ ! -e $STOP ]]
}

# nap MIN MAX: sleep a random MIN..MAX seconds (tenths), or less if over.
nap() {
	local t=$(($1 * 10 + RANDOM % (($2 - $1) * 10 + 1)))
	while ((t-- > 0)) && running; do
		sleep 0.1
	done
}

# count ACTOR WHAT: one more round of ACTOR's WHAT.
count() {
	echo "$2" >>"$TEST_TMP/count.$1"
}

# wrong ACTOR WHAT...: a wrong outcome, which fails the stress.
wrong() {
	local a=$1
	shift
	echo "$a: $*" | tee -a "$TEST_TMP/wrong"
}

# ctrls_of NQN [TRADDR]: controllers to NQN other than the survivor.
ctrls_of() {
	nvme_find_ctrl "$1" "$TR" "${2:-}" 2>/dev/null | grep -vx "$CTRL"
}

a_reset() {
	while running; do
		nap 4 12
		running || break
		[[ $(nvme_ctrl_state "$CTRL") == live ]] || continue
		echo 1 >"/sys/class/nvme/$CTRL/reset_controller" 2>/dev/null &&
			count reset reset
	done
}

second_shown() {
	[[ -n $(ctrls_of "$RIG_NQN_NULL" "$RIG_IP4") ]]
}

a_second() {
	local c mode pid
	while running; do
		nap 1 5
		running || break
		mode=$((RANDOM % 3))
		nvme_connect "$TR" "$RIG_IP4" "$RIG_NQN_NULL" --duplicate-connect \
			-l 2 >/dev/null 2>&1 &
		pid=$!
		if ((mode == 0)); then
			# mid-connect: delete it as soon as it shows
			wait_for 10 second_shown
			for c in $(ctrls_of "$RIG_NQN_NULL" "$RIG_IP4"); do
				nvme_delete_ctrl "$c"
			done
			wait "$pid"
			count second mid-connect
			continue
		fi
		wait "$pid" || continue
		count second connect
		for c in $(ctrls_of "$RIG_NQN_NULL" "$RIG_IP4"); do
			if ((mode == 1)) && [[ -b /dev/${c}n1 ]]; then
				dd if="/dev/${c}n1" of=/dev/null bs=64k count=256 \
					iflag=direct 2>/dev/null &
				sleep 0.$((RANDOM % 9 + 1))
				count second mid-io
			fi
			nvme_delete_ctrl "$c"
		done
		wait
	done
}

a_device() {
	ip link add "$NETDEV_D" type dummy 2>/dev/null
	ip link set "$NETDEV_D" up
	while running; do
		nap 2 8
		running || break
		rig_rdma_link_add "$RXE_D" "$NETDEV_D" || continue
		nap 1 4
		rdma link delete "$RXE_D" && count device add-delete
	done
}

a_pathb() {
	local c before t0 ms
	while running; do
		if [[ -z $(ctrls_of "$RIG_NQN_NULL" "$IP_B") ]]; then
			nvme_connect "$TR" "$IP_B" "$RIG_NQN_NULL" -l 10 -c 1 \
				--duplicate-connect >/dev/null 2>&1 &&
				count pathb connect
		fi
		nap 2 6
		running || break
		ip link set "$NETDEV_B" down
		count pathb flap
		# a connect through a port that is down fails at once: no
		# controller, and no wait for a CM reply (XRDMA_CM_ESTABLISH_MS).
		# Straight to the kernel: nvme-cli (libnvme 1.3) refuses it as
		# "already connected" while pathb's controller is there, even
		# with --duplicate-connect.
		before=$(ctrls_of "$RIG_NQN_NULL" "$IP_B")
		t0=$(now_ms)
		if echo "transport=$TR,traddr=$IP_B,trsvcid=$RIG_TRSVCID,nqn=$RIG_NQN_NULL,hostnqn=$NVME_HOSTNQN,hostid=$NVME_HOSTID,duplicate_connect" \
			2>"$TEST_TMP/pathb.down" >/dev/nvme-fabrics; then
			wrong pathb "connected through a port that is down"
			for c in $(ctrls_of "$RIG_NQN_NULL" "$IP_B"); do
				grep -qx "$c" <<<"$before" || nvme_delete_ctrl "$c"
			done
		fi
		ms=$(($(now_ms) - t0))
		echo "connect with the port down: $ms ms," \
			"$(sed 's/.*write error: //' "$TEST_TMP/pathb.down")"
		((ms <= 10000 * SCALE)) ||
			wrong pathb "a connect with the port down took $ms ms"
		count pathb connect-down
		nap 1 3
		ip link set "$NETDEV_B" up
		wait_for 30 rig_rxe_active "$RXE_B"
	done
	for c in $(ctrls_of "$RIG_NQN_NULL" "$IP_B"); do
		nvme_delete_ctrl "$c"
	done
}

# path_a_up: the rig's netdev up, its IPv6 address back (gone with the
# link on the way down)
path_a_up() {
	ip link set "$RIG_NETDEV" up 2>/dev/null
	rig_setup_net >/dev/null 2>&1
}

# iWARP only: the survivor's own link (path A) flaps; on rxe a CM message
# meeting the netdev going down can wedge the device's GSI QP
a_patha() {
	rig_iwarp || {
		wrong patha "path A flaps only on iWARP (XRDMA_PROVIDER=siw)"
		return
	}
	while running; do
		nap 5 15
		running || break
		ip link set "$RIG_NETDEV" down
		count patha flap
		nap 1 3
		path_a_up
		wait_for 30 rig_rxe_active || wrong patha "$RIG_RXE not ACTIVE"
	done
}

a_target() {
	while running; do
		nap 8 20
		running || break
		if ((RANDOM % 2)); then
			echo $((RANDOM % 2 + 1)) >"$QID_MAX" && count target qid_max
		else
			rig_unlink "$RIG_PORT" "$RIG_NQN_NULL" >/dev/null 2>&1
			nap 1 3
			rig_link "$RIG_PORT" "$RIG_NQN_NULL" >/dev/null 2>&1 &&
				count target relink
		fi
	done
}

a_bad() {
	local s log pid c
	while running; do
		nap 2 6
		running || break
		s=${BT_SCENARIOS[RANDOM % ${#BT_SCENARIOS[@]}]}
		log=$TEST_TMP/bt.$s.log
		"$BADTARGET" --port "$BT_PORT" --nqn "$BT_NQN" --scenario "$s" \
			>"$log" 2>&1 &
		pid=$!
		if badtarget_listening "$log"; then
			NVME_TRSVCID=$BT_PORT nvme_connect "$TR" "$RIG_IP4" \
				"$BT_NQN" -l 5 -c 1 >/dev/null 2>&1
			for c in $(ctrls_of "$BT_NQN"); do
				[[ -b /dev/${c}n1 ]] && dd if="/dev/${c}n1" \
					of=/dev/null bs=4k count=64 iflag=direct \
					2>/dev/null
				nvme_delete_ctrl "$c"
				wait_for 30 nvme_ctrl_gone "$c"
			done
			count bad "$s"
		fi
		kill -TERM "$pid" 2>/dev/null
		wait_for 10 pid_gone "$pid" || kill -KILL "$pid"
		wait "$pid" 2>/dev/null
	done
}

# ------------------------------------------------------------ subtests

t_setup() {
	modprobe nvme-xrdma || return 1
	rig_add_path "$NETDEV_B" "$RXE_B" "$IP_B" "$PORT_B" "$RIG_NQN_NULL" ||
		return 1
	PATH_B=1
	QID_MAX0=$(<"$QID_MAX")
	connect_ram "$TR" --ctrl-loss-tmo=-1 -c 1 || return 1
	local bs=()
	rig_iwarp && bs=(--bsrange=4k-4k)
	fio_start_verified survivor --size=64M "${bs[@]}"
	echo "survivor $CTRL ($DEV), seed $SEED, $SECS s, actors $ACTORS"
}

t_stress() {
	local a rc=0
	ktap_require CTRL "no survivor" || return
	RANDOM=$SEED
	STOP=$TEST_TMP/stop
	for a in ${ACTORS//,/ }; do
		declare -F "a_$a" >/dev/null || {
			echo "unknown actor $a"
			return 1
		}
		RANDOM=$((SEED + ${#PIDS[@]}))
		"a_$a" >"$TEST_TMP/actor.$a.log" 2>&1 &
		PIDS+=($!)
	done
	sleep "$SECS"
	touch "$STOP"
	for a in "${PIDS[@]}"; do
		wait_for $((120 * SCALE)) pid_gone "$a" || {
			echo "an actor (pid $a) did not stop"
			rc=1
		}
	done
	PIDS=()
	for a in ${ACTORS//,/ }; do
		echo "$a: $(sort "$TEST_TMP/count.$a" 2>/dev/null | uniq -c |
			awk '{ printf "%s %s, ", $2, $1 }')"
		tail -n 3 "$TEST_TMP/actor.$a.log" | sed 's/^/  /'
	done
	if [[ -s $TEST_TMP/wrong ]]; then
		echo "wrong outcomes:"
		sed 's/^/  /' "$TEST_TMP/wrong"
		rc=1
	fi
	echo "survivor recoveries $(nvme_ctrl_attr "$CTRL" xrdma/recoveries)," \
		"reconnects failed $(nvme_ctrl_attr "$CTRL" xrdma/failed_reconnects)"
	return "$rc"
}

t_survivor() {
	local c rc=0
	ktap_require CTRL "no survivor" || return
	[[ -n $QID_MAX0 ]] && echo "$QID_MAX0" >"$QID_MAX"
	rig_link "$RIG_PORT" "$RIG_NQN_NULL" >/dev/null 2>&1
	timed_live "survivor" || rc=1
	fio_stop_verified "$TEST_TMP/survivor.fio" || rc=1
	for c in $(ctrls_of "$RIG_NQN_NULL") $(ctrls_of "$BT_NQN"); do
		nvme_delete_ctrl "$c"
	done
	nvme_disconnect "$CTRL" || rc=1
	CTRL=
	return "$rc"
}

others() {
	nvme_find_ctrl "$RIG_NQN_NULL" "$TR"
	nvme_find_ctrl "$BT_NQN" "$TR"
}

others_gone() {
	[[ -z $(others) ]]
}

t_nothing_left() {
	local left
	wait_for $((60 * SCALE)) others_gone
	left=$(others)
	[[ -z $left ]] || {
		echo "controllers left: $left"
		return 1
	}
	rdma link delete "$RXE_D" 2>/dev/null
	ip link del "$NETDEV_D" 2>/dev/null
	rig_del_path "$NETDEV_B" "$RXE_B" "$PORT_B" || return 1
	PATH_B=0
}

ktap_run "survivor connected, verified writes started" t_setup
ktap_run "the actors at once" t_stress
ktap_run "the survivor is live, its data verified" t_survivor
ktap_run "no other controller left" t_nothing_left
ktap_run "RDMA resources and module refs back to baseline" leak_check
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_finished
