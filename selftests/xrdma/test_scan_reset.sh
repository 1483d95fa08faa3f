#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Namespaces the target adds while the controller is being reset.  The
# target enables several namespaces at once (one AEN, one scan that
# allocates a request queue per namespace) and the host resets the
# controller at the same moment: the scan adds request queues to the I/O
# tag set while the reset has it quiesced (the fault knob quiesce_hold
# keeps it so for a second).  blk-mq in 6.12 does not
# quiesce a queue that joins a quiesced tag set, so ending the quiesce
# must not take that queue's depth below zero (WARN in
# blk_mq_unquiesce_queue()).  Every round ends live with all namespaces,
# which then go away again; the kernel log must stay clean.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

readonly TR=xrdma
readonly ROUNDS=${XRDMA_SCAN_ROUNDS:-10}
readonly NS_EXTRA=8
readonly SUBSYS=$RIG_NVMET/subsystems/$RIG_NQN_RAM
CTRL=
DEV=
FAULT=

# ns_del: the extra namespaces off the target, and their null_blk devices.
ns_del() {
	local n
	for ((n = 2; n <= NS_EXTRA + 1; n++)); do
		if [[ -d $SUBSYS/namespaces/$n ]]; then
			echo 0 >"$SUBSYS/namespaces/$n/enable" 2>/dev/null
			rmdir "$SUBSYS/namespaces/$n" 2>/dev/null
		fi
	done
}

cleanup() {
	[[ -e $FAULT/quiesce_hold ]] && echo 0 >"$FAULT/quiesce_hold"
	ns_del
	local n
	for ((n = 2; n <= NS_EXTRA + 1; n++)); do
		rig_del_nullb "xrdma_scan$n" >/dev/null 2>&1
	done
	test_end "$TR"
}
trap cleanup EXIT

test_begin 5

ns_add() {
	local n
	for ((n = 2; n <= NS_EXTRA + 1; n++)); do
		mkdir "$SUBSYS/namespaces/$n" &&
			echo "/dev/xrdma_scan$n" \
				>"$SUBSYS/namespaces/$n/device_path" &&
			echo 1 >"$SUBSYS/namespaces/$n/enable" || return 1
	done
}

ns_count() {
	nvme_ctrl_namespaces "$CTRL" | wc -l
}

# ns_count_is N: the controller has N namespaces.
ns_count_is() {
	(($(ns_count) == $1))
}

t_connect() {
	local n
	for ((n = 2; n <= NS_EXTRA + 1; n++)); do
		rig_add_nullb "xrdma_scan$n" 16 0 || return 1
	done
	connect_ram "$TR" -c 1 -l 60 || return 1
	FAULT=/sys/kernel/debug/nvme-xrdma/$CTRL/fault
	[[ -e $FAULT/quiesce_hold ]] || {
		echo "no $FAULT/quiesce_hold"
		return 1
	}
}

t_rounds() {
	local i n mark
	ktap_require CTRL "no controller" || return
	for ((i = 1; i <= ROUNDS; i++)); do
		mark=$(dmesg | wc -l)
		# one AEN and one scan per namespace, the reset in the middle
		ns_add &
		sleep "0.$((2 + i % 4))"
		echo 1 >"$FAULT/quiesce_hold" &&
			echo 1 >"/sys/class/nvme/$CTRL/reset_controller" || return 1
		wait $! || return 1
		nvme_wait_state "$CTRL" live 60 || return 1
		wait_for 60 ns_count_is $((NS_EXTRA + 1)) || {
			# a scan ended by the reset: the next AEN or rescan finds
			# the rest
			nvme ns-rescan "/dev/$CTRL"
			wait_for 30 ns_count_is $((NS_EXTRA + 1)) || {
				echo "round $i: $(ns_count) namespaces"
				return 1
			}
		}
		if dmesg | tail -n +$((mark + 1)) | grep -qE "$DMESG_BAD_RE"; then
			echo "round $i: kernel log has problems"
			return 1
		fi
		ns_del
		wait_for 60 ns_count_is 1 || {
			nvme ns-rescan "/dev/$CTRL"
			wait_for 30 ns_count_is 1 || return 1
		}
	done
	echo "$ROUNDS rounds of $NS_EXTRA namespaces added across a reset"
}

t_verify() {
	ktap_require CTRL "no controller" || return
	fio_verify after --rw=write || return 1
	nvme_disconnect "$CTRL" || return 1
	CTRL=
}

ktap_run "connect to the RAM subsystem, $NS_EXTRA spare null_blk devices" \
	t_connect
ktap_run "namespaces added across a reset, $ROUNDS rounds" t_rounds
ktap_run "verified I/O after it, disconnect" t_verify
ktap_run "RDMA resources and module refs back to baseline" leak_check
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_finished
