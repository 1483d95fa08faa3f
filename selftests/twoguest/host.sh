#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The host side of the two-guest test (tools/vm/twoguest; not in the
# default list of run_selftests.sh, it needs the second guest): xrdma
# against a target we did not build. This guest runs our kernel and
# module; the other one runs Debian 12's 6.1 kernel with Linux's
# nvmet-rdma (twoguest/target.sh). A QEMU network link joins their eth0
# NICs, each with rdma_rxe on it: the topology of two machines.
#
# Checks: the target answers and runs another kernel; nvme discover over
# xrdma lists its subsystems; connect; crc32c-verified I/O at 4k, 64k and
# 1M; a link flap (this side's NIC down 3 s, up) under verified writes,
# the controller live again and the data intact; a target restart (nvmet
# torn down and its modules unloaded on the target, then set up again,
# within ctrl_loss_tmo): the controller is not live while the target is
# down, reconnects when it is back, and verified I/O and discovery work
# again; disconnect; the target tears down without a warning in its
# kernel log; leaks and dmesg here.
#
# XRDMA_TWOGUEST_TR=rdma runs the same against the in-kernel host
# (nvme-rdma): what the target's side shows with a host we did not write.
# XRDMA_TWOGUEST_SAME=1 (twoguest --all61): both guests boot Debian's 6.1,
# so the target runs this guest's kernel, still not one we built.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

readonly TR=${XRDMA_TWOGUEST_TR:-xrdma}
readonly SAME=${XRDMA_TWOGUEST_SAME:-0}
TARGET_KERNEL="another kernel"
((SAME)) && TARGET_KERNEL="this guest's kernel"
readonly NIC=eth0 RXE=rxe0 HOST_IP=192.0.2.2 HOST_IP6=2001:db8::2
readonly TARGET_IP=$RIG_IP4
readonly CTL_PORT=${XRDMA_TWOGUEST_CTL_PORT:-4499}
# the target guest boots at the same time as this one, more slowly
readonly TARGET_WAIT=${XRDMA_TWOGUEST_TARGET_WAIT:-600}
CTRL=
DEV=
TARGET_QUIT=0

# target_cmd CMD [SECONDS]: send CMD to the target's control server, print
# its one-line answer.
target_cmd() {
	# shellcheck disable=SC2016  # expanded by the inner bash
	timeout "${2:-120}" bash -c '
		exec 3<>"/dev/tcp/$1/$2" || exit 1
		echo "$3" >&3
		read -r reply <&3 || exit 1
		echo "$reply"' target_cmd "$TARGET_IP" "$CTL_PORT" "$1" 2>/dev/null
}

cleanup() {
	[[ -n $FIO_PID ]] && kill "$FIO_PID" 2>/dev/null
	ip link set "$NIC" up 2>/dev/null
	nvme_delete_ctrls "$TR"
	((TARGET_QUIT)) || target_cmd quit 300 >/dev/null
	if module_loaded ib_core && rdma link show "$RXE/1" >/dev/null 2>&1; then
		rdma link delete "$RXE"
	fi
	test_end "$TR"
}
trap cleanup EXIT

TEST_RIG=0
TEST_CMDS="nvme rdma ip fio timeout"
TEST_MODULES="nvme_$TR rdma_rxe virtio_net"
test_begin 16

ctrl_not_live() {
	! nvme_state_is "$CTRL" live
}

host_gid() {
	rig_has_gid "$HOST_IP" "$RXE"
}

t_net() {
	modprobe virtio_net || return 1
	wait_for 10 test -d "/sys/class/net/$NIC" || {
		echo "no $NIC (is the guest started with tools/vm/run --nic?)"
		return 1
	}
	# the IPv6 address (and its GID) stays across a link flap
	sysctl -qw "net.ipv6.conf.$NIC.keep_addr_on_down=1"
	ip addr replace "$HOST_IP/24" dev "$NIC" &&
		ip -6 addr replace "$HOST_IP6/64" dev "$NIC" nodad &&
		ip link set "$NIC" up || return 1
	modprobe rdma_rxe && rdma link add "$RXE" type rxe netdev "$NIC" ||
		return 1
	if ! wait_for 30 rig_rxe_active "$RXE" || ! wait_for 30 host_gid; then
		rdma link show
		return 1
	fi
	echo "$RXE on $NIC ($(cat "/sys/class/net/$NIC/address")), $HOST_IP"
	nvme_fabrics_load || return 1
	# what the end of the test compares against: rxe0 is up
	leak_snapshot
}

target_ready() {
	[[ $(target_cmd hello 20) == "ready "* ]]
}

t_target() {
	local t0 krel same=0
	t0=$(now_ms)
	wait_for "$TARGET_WAIT" target_ready || {
		echo "no answer 'ready' from the target at $TARGET_IP:$CTL_PORT" \
			"within $TARGET_WAIT s (last: '$(target_cmd hello 20)')"
		return 1
	}
	krel=$(target_cmd hello)
	krel=${krel#ready }
	echo "target ready after $((($(now_ms) - t0) / 1000)) s: kernel $krel" \
		"(here: $(uname -r))"
	# a target we did not build: another kernel than ours, or this one
	# where both boot Debian's
	[[ -n $krel ]] || return 1
	[[ $krel == "$(uname -r)" ]] && same=1
	((same == SAME)) || {
		echo "the target's kernel is not $TARGET_KERNEL, as asked"
		return 1
	}
}

# discover: both rig subsystems of the target in its discovery log
t_discover() {
	local out nqn rc=0
	out=$(nvme discover -t "$TR" -a "$TARGET_IP" -s "$RIG_TRSVCID" \
		--hostnqn="$NVME_HOSTNQN" --hostid="$NVME_HOSTID" 2>&1) || {
		echo "$out"
		return 1
	}
	for nqn in "$RIG_NQN_NULL" "$RIG_NQN_RAM"; do
		grep -q "subnqn: *$nqn" <<<"$out" || {
			echo "$nqn missing from the discovery log"
			rc=1
		}
	done
	grep -qE 'trtype: *rdma' <<<"$out" || {
		echo "no rdma entry in the discovery log"
		rc=1
	}
	((rc)) && echo "$out"
	grep -cE '^=+Discovery Log Entry' <<<"$out" |
		sed 's/$/ discovery log entries/'
	return "$rc"
}

t_connect() {
	# reconnect every second for up to two minutes: the target restart
	# must finish within ctrl_loss_tmo
	connect_ram "$TR" -c 1 -l 120 -k 5 || return 1
	echo "namespace $DEV"
}

t_io_4k() {
	ktap_require DEV "no namespace" || return
	fio_verify io4k --rw=randwrite --bs=4k --iodepth=16 --size=8M
}

t_io_64k() {
	ktap_require DEV "no namespace" || return
	fio_verify io64k --rw=randwrite --bs=64k --iodepth=8 --size=16M
}

t_io_1m() {
	ktap_require DEV "no namespace" || return
	fio_verify io1m --rw=write --bs=1M --iodepth=4 --size=32M
}

# diag: this side's QPs, CM ids and neighbours, and the target's (in its
# log, shown at the end)
diag() {
	rdma res show qp
	rdma res show cm_id
	ip neigh show dev "$NIC"
	target_cmd diag 20
}

t_flap() {
	local t0
	ktap_require DEV "no namespace" || return
	fio_start_verified flap --bsrange=4k-128k
	sleep 3
	fio_running || {
		tail -n 20 "$TEST_TMP/flap.fio"
		return 1
	}
	ip link set "$NIC" down || return 1
	echo "$NIC down"
	# the port event starts the recovery: the controller leaves LIVE
	wait_for 30 ctrl_not_live || {
		echo "controller still live with $NIC down"
		ip link set "$NIC" up
		return 1
	}
	echo "controller $(nvme_ctrl_state "$CTRL") with $NIC down"
	sleep 3
	ip link set "$NIC" up || return 1
	t0=$(now_ms)
	nvme_wait_state "$CTRL" live 90 || {
		echo "controller $(nvme_ctrl_state "$CTRL") 90 s after link up"
		diag
		return 1
	}
	echo "link up to live: $(($(now_ms) - t0)) ms"
	sleep 3
	fio_running || {
		echo "fio ended during the flap"
		tail -n 20 "$TEST_TMP/flap.fio"
		return 1
	}
}

t_flap_fio() {
	ktap_require FIO_PID "no fio running" || return
	fio_stop_verified "$TEST_TMP/flap.fio"
}

t_restart() {
	local reply t0
	ktap_require CTRL "no controller" || return
	t0=$(now_ms)
	reply=$(target_cmd stop 300)
	echo "target: stop -> '$reply'"
	[[ $reply == stopped ]] || return 1
	# nvmet is gone on the target: the controller cannot be live, and
	# must still be there (reconnecting)
	wait_for 30 ctrl_not_live || {
		echo "controller still live without a target"
		return 1
	}
	echo "controller $(nvme_ctrl_state "$CTRL") while the target is down"
	sleep 5
	[[ $(nvme_ctrl_state "$CTRL") != gone ]] || {
		echo "controller deleted while the target was down"
		return 1
	}
	reply=$(target_cmd start 300)
	echo "target: start -> '$reply'"
	[[ $reply == started ]] || return 1
	timed_live "after the target restart" || return 1
	echo "target restart to live: $((($(now_ms) - t0) / 1000)) s" \
		"(ctrl_loss_tmo 120 s)"
	DEV=$(nvme_wait_ns "$CTRL") || return 1
}

t_io_after() {
	ktap_require DEV "no namespace" || return
	fio_verify after --rw=randwrite --bs=64k --iodepth=8 --size=16M
}

t_disconnect() {
	ktap_require CTRL "no controller" || return
	nvme_disconnect "$CTRL" || return 1
	CTRL=
	DEV=
}

t_target_quit() {
	local reply
	reply=$(target_cmd quit 300)
	TARGET_QUIT=1
	echo "target: quit -> '$reply'"
	[[ $reply == clean ]]
}

t_rxe_del() {
	rdma link delete "$RXE" || return 1
	ip addr flush dev "$NIC"
}

ktap_run "$RXE on $NIC, $HOST_IP" t_net
ktap_run "the target answers, on $TARGET_KERNEL" t_target
ktap_run "nvme discover -t $TR lists the target's subsystems" t_discover
ktap_run "connect over $TR (reconnect_delay 1, ctrl_loss_tmo 120)" t_connect
ktap_run "verified I/O, 4k random writes" t_io_4k
ktap_run "verified I/O, 64k random writes" t_io_64k
ktap_run "verified I/O, 1M sequential writes" t_io_1m
ktap_run "link flap on $NIC under verified writes, live again" t_flap
ktap_run "fio after the flap: no I/O or verify error" t_flap_fio
ktap_run "target restart (nvmet down and up): reconnects" t_restart
ktap_run "verified I/O after the target restart" t_io_after
ktap_run "discovery after the target restart" t_discover
ktap_run "disconnect" t_disconnect
ktap_run "the target tears down without kernel warnings" t_target_quit
ktap_run "RDMA resources and module refs back to baseline" leak_check
ktap_run "$RXE removed; no kernel warnings, oopses or new taint" \
	eval 't_rxe_del && dmesg_check'
ktap_finished
