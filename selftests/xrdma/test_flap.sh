#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Link flaps under verified I/O: while fio writes and verifies crc32c on
# the RAM namespace, the rxe netdev goes down for 1.5 s and up again, 20
# times; after each flap the controller must be LIVE again (the time from
# "link up" to LIVE is reported per flap, with the median and maximum).
# The port events (PORT_ERR, PORT_ACTIVE) must start a recovery for every
# flap and reconnect as soon as the port is back: median under 1 s, the
# reconnect_delay.  From the kernel log's own timestamps:
# the median time from rxe's "set down" to the error recovery must be
# under 100 ms, and from "set active" to the reconnect attempt under
# 0.5 s.  No I/O may hang, every acknowledged write must read
# back intact, and a verified pass over the namespace after the storm
# must succeed.
#
# rdma_rxe in this kernel cannot survive any CM message (REQ, DREQ, REJ)
# posted while its netdev is down: the send fails for want of a route, the
# GSI QP (QP1) moves to the error state, the failed send completes as
# "flushed", so ib_mad never runs its recovery, and QP1's receive buffers
# are flushed and never reposted.  From then on no connection through that
# rxe device can be made ("rdma res show qp" shows "lqpn 1 type GSI state
# ERR") until it is deleted and added again.  xrdma therefore sends no CM
# message through a down port (see xrdma_cm_port_up()); the test flaps
# only once the controller is LIVE again, and if QP1 still ends up in the
# error state (the target's own DREQ, say) it says so.
#
# On siw (XRDMA_PROVIDER=siw), which logs nothing of its own port, the
# link's times come from siw's netdev notifier through dynamic debug
# ("siw: event 2" down, "siw: event 1" up), logged where rxe logs them.
# Since 7.x ib_core dispatches the port events from its own netdev
# notifier and neither provider logs them: where the kernel log has none
# of those lines, the test's own marks, written to /dev/kmsg just before
# each "ip link set", stand for them.
#
# XRDMA_FLAP_TR=rdma runs the same storm against the in-kernel host.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

# XRDMA_FLAP_TR=rdma runs the same storm against the in-kernel host
readonly TR=${XRDMA_FLAP_TR:-xrdma}
readonly FLAPS=${XRDMA_FLAPS:-20}
CTRL=
DEV=

# the kernel log lines of the link going down and coming up
if rig_iwarp; then
	readonly SIW_DYNDBG="module siw func siw_netdev_event"
	# at the end of the line (awk -v turns \\n into a newline)
	readonly LOG_DOWN="net $RIG_NETDEV: siw: event 2\\n"
	readonly LOG_UP="net $RIG_NETDEV: siw: event 1\\n"
else
	readonly LOG_DOWN="infiniband $RIG_RXE: set down"
	readonly LOG_UP="infiniband $RIG_RXE: set active"
fi
# ours, where the provider logs nothing (7.x)
readonly MARK_DOWN="xrdma-selftest: $RIG_NETDEV down"
readonly MARK_UP="xrdma-selftest: $RIG_NETDEV up"

cleanup() {
	rig_iwarp && echo "$SIW_DYNDBG -p" >/proc/dynamic_debug/control
	ip link set "$RIG_NETDEV" up 2>/dev/null
	# addresses and GIDs back as the rig had them, for the next test
	rig_setup_net >/dev/null 2>&1
	test_end "$TR"
}
trap cleanup EXIT

TEST_CMDS="ip"
TEST_MODULES="nvme_$TR"
test_begin 9

t_connect() {
	if rig_iwarp; then
		echo "$SIW_DYNDBG +p" >/proc/dynamic_debug/control || return 1
	fi
	# reconnect every second, give up only after 5 minutes
	connect_ram "$TR" -c 1 -l 300 -k 5
}

# gsi_state: the state of the rxe device's GSI QP (QP1), e.g. "RTS".
gsi_state() {
	rdma res show qp lqpn 1 2>/dev/null |
		awk '{ for (i = 1; i < NF; i++) if ($i == "state") print $(i + 1) }'
}

# live_ms CTRL SECONDS: wait for CTRL to be LIVE, looking every 20 ms
# (wait_for backs off to 500 ms, which would add up to half a second to
# the time measured); print the milliseconds waited.  Fails after SECONDS.
live_ms() {
	local t0 state
	t0=$(now_ms)
	while :; do
		read -r state <"/sys/class/nvme/$1/state" 2>/dev/null
		[[ ${state:-} == live ]] && break
		(($(now_ms) - t0 >= $2 * 1000)) && return 1
		sleep 0.02
	done
	echo "$(($(now_ms) - t0))"
}

# link_set up|down: the rig's netdev up or down through the ip process
# started by t_flaps (no fork between the kernel-log mark and the change:
# under TCG starting ip takes longer than what is measured), then wait
# for the change to show
link_set() {
	local mark=$MARK_DOWN want=0 flags n
	[[ $1 == up ]] && mark=$MARK_UP want=1
	echo "$mark" >/dev/kmsg
	echo "link set dev $RIG_NETDEV $1" >&"${IPB[1]}"
	for ((n = 0; n < 250; n++)); do
		read -r flags <"/sys/class/net/$RIG_NETDEV/flags"
		(((flags & 1) == want)) && return 0
		sleep 0.02
	done
	echo "$RIG_NETDEV not $1 after 5 s"
	return 1
}

FLAP_MS=()
t_flaps() {
	local i ms fd rc=0
	# keep the IPv6 address (and its GID) across the flaps
	sysctl -qw "net.ipv6.conf.$RIG_NETDEV.keep_addr_on_down=1"
	coproc IPB { ip -force -batch - 2>&1; }
	fio_start_verified flap --bsrange=4k-128k
	sleep 3
	for ((i = 1; i <= FLAPS; i++)); do
		link_set down || rc=1
		sleep 1.5
		link_set up || rc=1
		if ! ms=$(live_ms "$CTRL" 60); then
			echo "flap $i: controller $(nvme_ctrl_state "$CTRL")" \
				"60 s after link up; rxe GSI QP: $(gsi_state)"
			rc=1
			break
		fi
		FLAP_MS+=("$ms")
		sleep 1
		fio_running || {
			echo "fio ended after flap $i"
			rc=1
			break
		}
	done
	echo "$((i - 1)) flaps done; live again after (ms): ${FLAP_MS[*]}"
	fd=${IPB[1]}
	exec {fd}>&-
	wait "$IPB_PID"
	return "$rc"
}

t_recovered() {
	local rec sorted n now
	n=${#FLAP_MS[@]}
	((n == FLAPS)) || {
		echo "only $n of $FLAPS flaps recovered"
		return 1
	}
	mapfile -t sorted < <(printf '%s\n' "${FLAP_MS[@]}" | sort -n)
	echo "link up to LIVE: median ${sorted[n / 2]} ms," \
		"max ${sorted[n - 1]} ms over $n flaps"
	[[ $TR == xrdma ]] || return 0
	rec=$(cat "/sys/class/nvme/$CTRL/xrdma/recoveries")
	echo "$rec recoveries," \
		"$(cat "/sys/class/nvme/$CTRL/xrdma/port_waits") port waits"
	# the port event starts a recovery even with no I/O in flight
	((rec >= FLAPS)) || {
		echo "only $rec of $FLAPS flaps started an error recovery"
		return 1
	}
	# the recovery that waited for the port reconnects at once, not
	# after reconnect_delay (1 s) ...
	now=$(dmesg_since_mark | grep -c "nvme $CTRL: reconnect attempt 1 of [0-9]* in 0 s")
	echo "$now of $n reconnects scheduled at once (port back)"
	((now >= n)) || {
		echo "a reconnect waited for reconnect_delay"
		return 1
	}
	# ... and is live again well within a second
	((sorted[n / 2] < 1000 * ${XRDMA_TIMEOUT_SCALE:-1})) || {
		echo "median link up to LIVE over 1000 ms"
		return 1
	}
}

# port_event_ms: from the kernel's own timestamps since the test's mark,
# per flap "DOWN UP ATTEMPT": ms from rxe's "set down" (LOG_DOWN) to this
# controller's "starting error recovery" (0 where the netdev notifier
# started it first), from "set active" (LOG_UP) to its queues "mapped"
# again, and from "set active" to xrdma's reconnect attempt (- for
# nvme-rdma, which logs none).  No poll step of ours is in these.
port_event_ms() {
	local ldown=$LOG_DOWN lup=$LOG_UP
	if ! dmesg_since_mark | grep -qF "${LOG_DOWN%\\n}"; then
		ldown=$MARK_DOWN lup=$MARK_UP
	fi
	dmesg_since_mark | awk -v ldown="$ldown" -v lup="$lup" -v c="nvme $CTRL: " '
		BEGIN { d = "-"; a = "-" }
		function ms(a, b) { return int((b - a) * 1000 + 0.5) }
		function t() { s = $0; sub(/^\[ */, "", s); sub(/\].*/, "", s); return s + 0 }
		index($0 "\n", ldown) {
			down = t(); dn = 1
			# the netdev notifier may have come first (at most 0.5 s)
			if (rec != "" && down - rec <= 0.5) { d = 0; dn = 0 }
			rec = ""
		}
		index($0, c "starting error recovery") {
			if (dn) { d = ms(down, t()); dn = 0 } else rec = t()
		}
		index($0 "\n", lup) { up = t(); un = 1; a = "-" }
		un && index($0, c "reconnect attempt") && a == "-" { a = ms(up, t()) }
		un && index($0, c "mapped ") {
			print d, ms(up, t()), a; un = 0; d = "-"
		}'
}

# median of the arguments (numbers; "-" left out)
median() {
	local v
	mapfile -t v < <(printf '%s\n' "$@" | grep -v '^-$' | sort -n)
	((${#v[@]})) && echo "${v[${#v[@]} / 2]}"
}

# A dead path is noticed at once: the port event starts the recovery
# within 100 ms, and the port coming back its reconnect within 0.5 s
# (medians; the bounds times XRDMA_TIMEOUT_SCALE).  nvme-rdma, which does
# not watch the port, gets the same figures printed.
t_port_events() {
	local down=() up=() att=() d u a n md ma scale=${XRDMA_TIMEOUT_SCALE:-1}
	while read -r d u a; do
		down+=("$d") up+=("$u") att+=("$a")
	done < <(port_event_ms)
	n=${#up[@]}
	echo "$n flaps: link down to error recovery (ms): ${down[*]}"
	echo "link up to queues mapped (ms): ${up[*]}; median $(median "${up[@]}")"
	[[ $TR == xrdma ]] || return 0
	echo "link up to reconnect attempt (ms): ${att[*]}"
	((n == FLAPS)) || {
		echo "$n of $FLAPS flaps found in the kernel log"
		return 1
	}
	md=$(median "${down[@]}") ma=$(median "${att[@]}")
	echo "medians: recovery $md ms after link down (bound $((100 * scale)))," \
		"reconnect attempt $ma ms after link up (bound $((500 * scale)))"
	((${md:-100000} <= 100 * scale && ${ma:-100000} <= 500 * scale))
}

# Since 7.3 core's diag/ group counts every reconnect attempt, the
# transport adding up those of each run (acc_reconnects): after the flaps
# at least one per flap
t_diag() {
	local f=/sys/class/nvme/$CTRL/diag/reconnect_count n
	ktap_require CTRL "controller gone" || return
	if [[ ! -r $f ]]; then
		# shellcheck disable=SC2034 # ktap_test_result reads it
		KTAP_REASON="no diag/ group in this kernel's nvme core"
		return "$KSFT_SKIP"
	fi
	n=$(<"$f")
	echo "diag/reconnect_count $n after $FLAPS flaps," \
		"reset_count $(<"${f%/*}/reset_count")"
	[[ $TR == xrdma ]] || return 0
	((n >= FLAPS))
}

t_fio_done() {
	fio_stop_verified "$TEST_TMP/flap.fio"
}

t_verify_all() {
	ktap_require CTRL "controller gone" || return
	# write a known pattern after the storm and read it all back
	fio --name=after --filename="$DEV" --direct=1 --ioengine=libaio \
		--rw=write --bs=128k --iodepth=8 --size=32M --verify=crc32c \
		--do_verify=1 --verify_fatal=1 >"$TEST_TMP/after.fio" 2>&1 || {
		tail -n 20 "$TEST_TMP/after.fio"
		return 1
	}
	nvme_disconnect "$CTRL" || return 1
	CTRL=
}

ktap_run "connect with reconnect_delay 1, ctrl_loss_tmo 300" t_connect
ktap_run "$FLAPS link flaps under verified random writes" t_flaps
ktap_run "live again after every flap" t_recovered
ktap_run "port events: recovery and reconnect at once (kernel log)" t_port_events
ktap_run "diag/reconnect_count counts the reconnects" t_diag
ktap_run "fio finished, no verify error" t_fio_done
ktap_run "verified write and read after the flaps, disconnect" t_verify_all
ktap_run "RDMA resources and module refs back to baseline" leak_check
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_finished
