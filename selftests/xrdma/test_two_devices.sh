#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One controller whose queues sit on two RDMA devices, and the removal of
# either device, which must not hang.  xrdma resolves every queue's
# address on its own, so the admin queue and the I/O queues of one
# controller may land on different devices when the route to the target
# changes between them.
#
# The rig: a second dummy netdev xrdma-rig2 with its own rxe2, and an nvmet
# port listening on 0.0.0.0:4431 (every device) with the RAM subsystem.
# The target address MOVE_IP first lives on one netdev; the controller is
# reset with fault/io_setup_hold armed, which holds the setup after its
# admin queue is live; MOVE_IP is then added to the other netdev too
# (Linux finds the newest of two equal addresses first, so the I/O queues
# resolve there, while the admin queue keeps the GID it had), the hold is
# released and the I/O queues connect through the other device.  Checked:
# the host's CM ids are split as expected ("rdma res show cm_id"), data
# written across both devices verifies, and "rdma link delete" of the I/O
# queues' device, then (second round, roles swapped) of the admin queue's
# device, removes the controller within seconds, under I/O, without a hang,
# a warning or a leak.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

readonly TR=xrdma
readonly SCALE=${XRDMA_TIMEOUT_SCALE:-1}
readonly NETDEV_B=xrdma-rig2
readonly RXE_B=${RIG_PROVIDER}2
readonly IP_B=198.51.100.1
readonly PORT_B=12
readonly PORT_ANY=13
readonly SVC_ANY=4431
readonly MOVE_IP=198.51.100.9
readonly DBG=/sys/kernel/debug/nvme-xrdma
CTRL=
DEV=
PATH_B=0
RESET_PID=

cleanup() {
	[[ -n $FIO_PID ]] && kill "$FIO_PID" 2>/dev/null
	[[ -n $CTRL && -w $DBG/$CTRL/fault/io_setup_hold ]] &&
		echo 0 >"$DBG/$CTRL/fault/io_setup_hold"
	[[ -n $RESET_PID ]] && wait "$RESET_PID"
	nvme_delete_ctrls "$TR"
	t_unsetup >/dev/null
	test_end "$TR"
}
trap cleanup EXIT

TEST_CMDS="ip rdma"
test_begin 10

# host_cm_ids RXE: how many of xrdma's CM ids are on RXE.
host_cm_ids() {
	rdma res show cm_id 2>/dev/null |
		grep "comm \[nvme_xrdma\]" | grep -c "link $1/"
}

# netdev_of RXE
netdev_of() {
	if [[ $1 == "$RXE_B" ]]; then
		echo "$NETDEV_B"
	else
		echo "$RIG_NETDEV"
	fi
}

t_setup() {
	rig_add_path "$NETDEV_B" "$RXE_B" "$IP_B" "$PORT_B" || return 1
	PATH_B=1
	rig_add_port "$PORT_ANY" ipv4 0.0.0.0 "$SVC_ANY" &&
		rig_link "$PORT_ANY" "$RIG_NQN_RAM"
}

no_ctrl_left() {
	! nvme_find_ctrl "$RIG_NQN_RAM" "$TR" >/dev/null
}

t_unsetup() {
	local rc=0
	ip addr del "$MOVE_IP/32" dev "$RIG_NETDEV" 2>/dev/null
	ip addr del "$MOVE_IP/32" dev "$NETDEV_B" 2>/dev/null
	rig_del_port "$PORT_ANY" || rc=1
	if ((PATH_B)); then
		rig_del_path "$NETDEV_B" "$RXE_B" "$PORT_B" || rc=1
	fi
	PATH_B=0
	return "$rc"
}

# connect_on RXE: MOVE_IP on RXE's netdev alone, connect to it through the
# wildcard port: every queue on RXE.
connect_on() {
	local nd other n
	nd=$(netdev_of "$1")
	other=$RIG_NETDEV
	[[ $nd == "$RIG_NETDEV" ]] && other=$NETDEV_B
	ip addr del "$MOVE_IP/32" dev "$other" 2>/dev/null
	ip addr replace "$MOVE_IP/32" dev "$nd" || return 1
	wait_for 30 rig_addr_ready "$MOVE_IP" "$1" || {
		echo "no GID for $MOVE_IP on $1"
		return 1
	}
	NVME_TRADDR=$MOVE_IP NVME_TRSVCID=$SVC_ANY connect_ram "$TR" \
		--nr-io-queues=2 || return 1
	n=$(host_cm_ids "$1")
	echo "$CTRL: $n CM ids on $1, queue_count $(
		nvme_ctrl_attr "$CTRL" queue_count)"
	((n >= 2)) || {
		rdma res show cm_id
		return 1
	}
}

# held: the kernel log since line LOG0 says CTRL's setup holds. A line
# count, not dmesg_mark: a new mark would move the one the final
# dmesg_check starts from.
LOG0=0
held() {
	dmesg | tail -n +$((LOG0 + 1)) |
		grep -q "$CTRL: injected fault: io_setup_hold"
}

# split ADMIN_RXE IO_RXE: reset the controller (all on ADMIN_RXE) holding
# its setup after the admin queue; add MOVE_IP to IO_RXE's netdev; release.
split() {
	local hold=$DBG/$CTRL/fault/io_setup_hold nd n_admin n_io
	local admin_dev=$1 io_dev=$2
	nd=$(netdev_of "$io_dev")
	LOG0=$(dmesg | wc -l)
	echo 1 >"$hold" || return 1
	# the write returns when the reset is done: after the hold
	echo 1 >"/sys/class/nvme/$CTRL/reset_controller" &
	RESET_PID=$!
	wait_for $((20 * SCALE)) held || {
			echo "the setup never reached the hold"
			echo 0 >"$hold"
			return 1
		}
	ip addr add "$MOVE_IP/32" dev "$nd" || return 1
	wait_for 30 rig_addr_ready "$MOVE_IP" "$io_dev" || {
		echo "no GID for $MOVE_IP on $io_dev"
		echo 0 >"$hold"
		return 1
	}
	echo 0 >"$hold"
	wait "$RESET_PID" || {
		echo "reset_controller failed"
		return 1
	}
	RESET_PID=
	nvme_wait_state "$CTRL" live $((30 * SCALE)) || return 1
	n_admin=$(host_cm_ids "$admin_dev")
	n_io=$(host_cm_ids "$io_dev")
	echo "after the reset: $n_admin CM id(s) on $admin_dev, $n_io on $io_dev"
	if ((n_admin != 1 || n_io < 1)); then
		echo "queues not split as wanted (1 on $admin_dev, the rest on $io_dev)"
		rdma res show cm_id
		return 1
	fi
	DEV=$(nvme_wait_ns "$CTRL") || return 1
	fio_verify split --rw=randwrite --bsrange=4k-128k --iodepth=16
}

rxe_b_back() {
	rig_rdma_link_add "$RXE_B" "$NETDEV_B" || return 1
	wait_for 30 rig_rxe_active "$RXE_B"
}

t_split_io() {
	connect_on "$RIG_RXE" && split "$RIG_RXE" "$RXE_B"
}

t_split_admin() {
	rxe_b_back || return 1
	connect_on "$RXE_B" && split "$RXE_B" "$RIG_RXE"
}

ktap_run "second device and a port on every device" t_setup
ktap_run "admin queue on $RIG_RXE, I/O queues on $RXE_B, data verified" \
	t_split_io
ktap_run "rdma link delete of the I/O queues' device removes it" \
	link_delete_under_io "$RXE_B"
ktap_run "admin queue on $RXE_B, I/O queues on $RIG_RXE, data verified" \
	t_split_admin
ktap_run "rdma link delete of the admin queue's device removes it" \
	link_delete_under_io "$RXE_B"
ktap_run "no controller left" no_ctrl_left
ktap_run "second device and the port on every device removed" t_unsetup
ktap_run "RDMA resources and module refs back to baseline" leak_check
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_run "rxe device is the rig's again" rig_rxe_active
ktap_finished
