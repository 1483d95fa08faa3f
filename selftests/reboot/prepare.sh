#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The system going down while controllers keep reconnecting to a target
# that is gone (they must stop reconnecting and let it go down in
# seconds), the guest's half. tools/vm/selftests runs it as the whole job
# of a guest of its own, not through run_selftests.sh,
# whose rig teardown would delete the controllers first:
#
#   - N controllers to the rig's RAM subsystem, reconnect_delay 1 s and
#     ctrl_loss_tmo 600 s: left alone they reconnect for ten minutes;
#   - a direct read of the namespace, started once the target is gone, so
#     that a request waits for a path when the system goes down;
#   - the subsystems taken off the target's port: every controller
#     reconnecting, every attempt rejected;
#   - a mark in the kernel log, then exit: tools/vm/init powers the guest
#     off (sysrq o, which runs the reboot notifiers).
#
# check.sh then reads the guest's console log on the host.
# XRDMA_REBOOT_TR=rdma does the same with nvme-rdma.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

readonly TR=${XRDMA_REBOOT_TR:-xrdma}
readonly N=4
# check.sh looks for this line
readonly MARK="xrdma-reboot: powering off with $N $TR controllers reconnecting"

TEST_MODULES=nvme_$TR
test_begin 3

t_connect() {
	local i c
	for ((i = 1; i <= N; i++)); do
		echo "transport=$TR,traddr=$RIG_IP4,trsvcid=$RIG_TRSVCID,nqn=$RIG_NQN_RAM,hostnqn=$NVME_HOSTNQN,hostid=$NVME_HOSTID,nr_io_queues=1,reconnect_delay=1,ctrl_loss_tmo=600,duplicate_connect" \
			>/dev/nvme-fabrics || {
			echo "connect $i failed"
			return 1
		}
	done
	for c in $(nvme_find_ctrl "$RIG_NQN_RAM" "$TR"); do
		nvme_wait_state "$c" live || return 1
		CTRL=$c
	done
	DEV=$(nvme_wait_ns "$CTRL") || return 1
	echo "$N controllers live, namespace $DEV"
}

t_reconnecting() {
	local c rc=0
	ktap_require DEV "no controllers" || return
	rig_port_close || return 1
	for c in $(nvme_find_ctrl "$RIG_NQN_RAM" "$TR"); do
		wait_for 30 nvme_state_is "$c" connecting || {
			echo "$c: state $(nvme_ctrl_state "$c"), not connecting"
			rc=1
		}
	done
	return "$rc"
}

# The read waits for a path; it is no child of ours when the guest goes
# down (setsid), so that nothing waits for it here.
t_read_waits() {
	ktap_require DEV "no controllers" || return
	setsid dd if="$DEV" of=/dev/null bs=4k count=1 iflag=direct \
		</dev/null >/dev/null 2>&1 &
	sleep 3
	pgrep -f "dd if=$DEV" >/dev/null || {
		echo "the read did not wait for a path"
		return 1
	}
	sleep 2
}

ktap_run "$N $TR controllers live" t_connect
ktap_run "all of them reconnecting, the target gone" t_reconnecting
ktap_run "a read waiting for a path" t_read_waits

echo "$MARK" >/dev/kmsg
ktap_finished
