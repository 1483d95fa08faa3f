#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The target side of the two-guest test (tools/vm/twoguest). Runs as the
# command of a guest on another kernel (Debian 12's 6.1, not the one we
# build for) with a virtio-net NIC, eth0, linked to the host guest:
#
#   rdma_rxe on eth0 (192.0.2.1/24, 2001:db8::1/64), then the rig of
#   lib/rig.sh on it: Linux's nvmet-rdma with the RAM and null subsystems
#   on port 1, rdma 192.0.2.1:4420;
#   a control server on TCP port $XRDMA_TWOGUEST_CTL_PORT (default 4499,
#   busybox nc) that takes one command per connection and answers one
#   line:
#     hello   "ready <kernel release>" once the target is set up
#     stop    nvmet torn down: ports, subsystems, null_blk, and the modules
#             (nvmet-rdma, nvmet, null_blk) unloaded; rxe stays.
#             "stopped" or "error: ..."
#     start   nvmet set up again as before, with the same namespace
#             UUIDs; "started" or "error: ..."
#     diag    the QPs, CM ids and neighbours of eth0 to the log;
#             "diag done"
#     quit    everything torn down, the kernel log checked for warnings
#             since boot; "clean" or "error: ..."; then this script ends
#
# Exit status 0 after a clean "quit", 1 otherwise (no quit within
# $XRDMA_TWOGUEST_LIMIT seconds, default 1400, included).

set -u
SELF=$(readlink -f "${BASH_SOURCE[0]}")
DIR=${SELF%/*}
# shellcheck source=../lib/ktap.sh
. "$DIR/../lib/ktap.sh"
# shellcheck source=../lib/env.sh
. "$DIR/../lib/env.sh"
# shellcheck source=../lib/nvme.sh
. "$DIR/../lib/nvme.sh"
export RIG_NETDEV=eth0 RIG_RXE=rxe0 RIG_IP4=192.0.2.1 RIG_IP6=2001:db8::1
# a restarted target keeps its namespace UUIDs, as a real one does
export RIG_NS_FIXED_UUID=1
# shellcheck source=../lib/rig.sh
. "$DIR/../lib/rig.sh"

readonly CTL_PORT=${XRDMA_TWOGUEST_CTL_PORT:-4499}
readonly LIMIT=${XRDMA_TWOGUEST_LIMIT:-1400}
readonly STATE=/run/xrdma-twoguest

say() {
	echo "target: $*" >&2
}

# nvmet gone: no nvmet module, so no port, subsystem or controller left
nvmet_gone() {
	! module_loaded nvmet && ! module_loaded nvmet_rdma &&
		! module_loaded null_blk
}

t_stop() {
	rig_teardown
	# rig_teardown also counts the rxe device on eth0, which stays, as
	# a leftover: judge by what the restart must remove
	nvmet_gone || {
		echo "error: still loaded: $(grep -oE '^(nvmet[a-z_]*|null_blk) ' /proc/modules | tr -d '\n')"
		return 1
	}
	echo stopped
}

t_start() {
	rig_setup || {
		echo "error: rig setup failed"
		return 1
	}
	touch "$STATE/ready"
	echo started
}

t_quit() {
	local bad
	rm -f "$STATE/ready"
	if [[ -d $RIG_STATE ]]; then
		rig_teardown
		nvmet_gone || {
			echo "error: nvmet modules still loaded"
			return 1
		}
	fi
	rdma link delete "$RIG_RXE" || {
		echo "error: cannot delete $RIG_RXE"
		return 1
	}
	# shellcheck source=/dev/null
	. "$STATE/mark"
	if ! bad=$(dmesg_check); then
		echo "$bad" >&2
		echo "error: kernel log: $(grep -m1 -E "$DMESG_BAD_RE" <<<"$bad")"
		return 1
	fi
	echo clean
}

# One control connection (busybox nc -e): the command on stdin, the answer
# (last line of the command's output) on stdout, the rest to the log.
serve() {
	local cmd out rc
	read -r -t 30 cmd || return 1
	exec 3>&1 1>&2 </dev/null
	say "command '$cmd'"
	case $cmd in
	hello)
		if [[ -f $STATE/ready ]]; then
			out="ready $(uname -r)"
		else
			out=booting
		fi
		;;
	stop | start | quit)
		out=$("t_$cmd" 2>&1)
		rc=$?
		echo "${out//$'\n'/$'\n'  }" >&2
		out=$(tail -n 1 <<<"$out")
		if [[ $cmd == quit ]]; then
			echo "$rc" >"$STATE/result"
		fi
		;;
	diag)
		# what a failed reconnect needs to be told apart: the QPs
		# (the GSI QP's state among them), the CM ids, the neighbours
		{
			rdma res show qp
			rdma res show cm_id
			ip neigh show dev "$RIG_NETDEV"
		} 2>&1 | sed 's/^/  /' >&2
		out="diag done"
		;;
	*) out="error: unknown command '$cmd'" ;;
	esac
	say "answer '$out'"
	echo "$out" >&3
}

if [[ -n ${XRDMA_TWOGUEST_SERVE:-} ]]; then
	serve
	exit
fi

# ---------------------------------------------------------------- main

mkdir -p "$STATE"
dmesg_mark twoguest-target
printf 'DMESG_MARK=%q\nDMESG_TAINT0=%q\n' "$DMESG_MARK" "$DMESG_TAINT0" >"$STATE/mark"
say "kernel $(uname -r), $(nproc) cpus"

setup() {
	modprobe virtio_net || return 1
	wait_for 10 test -d "/sys/class/net/$RIG_NETDEV" || {
		say "no $RIG_NETDEV: $(ls /sys/class/net)"
		return 1
	}
	ip link set "$RIG_NETDEV" up || return 1
	# rxe first, outside the rig's stack: a restart (stop/start) keeps it
	modprobe rdma_rxe && rdma link add "$RIG_RXE" type rxe netdev "$RIG_NETDEV" || return 1
	t_start >/dev/null
}

if ! setup; then
	say "setup failed"
	rig_teardown
	exit 1
fi
say "ready: $RIG_RXE on $RIG_NETDEV ($(cat "/sys/class/net/$RIG_NETDEV/address")), nvmet-rdma on $RIG_IP4:$RIG_TRSVCID"

XRDMA_TWOGUEST_SERVE=1 busybox nc -ll -p "$CTL_PORT" -e "$SELF" &
nc_pid=$!
if ! wait_for "$LIMIT" test -f "$STATE/result"; then
	say "no quit within $LIMIT s"
	echo 1 >"$STATE/result"
	rig_teardown
fi
kill "$nc_pid" 2>/dev/null
wait "$nc_pid" 2>/dev/null
rc=$(<"$STATE/result")
say "exit $rc"
exit "$rc"
