#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Discovery over xrdma (admin-only discovery controller, discovery log
# page listing both rig subsystems) and coexistence with the in-kernel
# nvme-rdma host: both connected at the same time, to separate subsystems
# on the same port, both doing verified I/O, then both disconnected.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

X_CTRL=
R_CTRL=

cleanup() {
	rig_del_rdma_subsys >/dev/null 2>&1
	test_end xrdma rdma
}
trap cleanup EXIT

TEST_MODULES="nvme_rdma nvme_xrdma"
test_begin 8
ktap_quiet rig_add_rdma_subsys ||
	ktap_exit_fail_msg "cannot add the nvme-rdma subsystem"

t_discover() {
	local out rc=0 nqn
	out=$(nvme discover -t xrdma -a "$RIG_IP4" -s "$RIG_TRSVCID" \
		--hostnqn="$NVME_HOSTNQN" --hostid="$NVME_HOSTID" 2>&1) || {
		echo "$out"
		return 1
	}
	for nqn in "$RIG_NQN_NULL" "$RIG_NQN_RAM" "$RIG_NQN_RDMA"; do
		grep -q "subnqn: *$nqn" <<<"$out" || {
			echo "$nqn missing from the discovery log"
			rc=1
		}
	done
	grep -q "trtype: *rdma" <<<"$out" || rc=1
	((rc)) && echo "$out"
	# the discovery controller went away again
	wait_for 10 eval '! nvme_find_ctrl nqn.2014-08.org.nvmexpress.discovery xrdma >/dev/null' || {
		echo "discovery controller left behind"
		rc=1
	}
	return "$rc"
}

t_persistent_discovery() {
	local c rc=0
	nvme_connect xrdma "$RIG_IP4" nqn.2014-08.org.nvmexpress.discovery \
		--keep-alive-tmo=5 || return 1
	c=$(nvme_find_ctrl nqn.2014-08.org.nvmexpress.discovery xrdma) ||
		return 1
	nvme_wait_state "$c" live || rc=1
	[[ $(nvme_ctrl_attr "$c" queue_count) == 1 ]] || {
		echo "discovery controller has I/O queues"
		rc=1
	}
	# discovery log page (0x70) over the persistent controller
	nvme get-log "/dev/$c" --log-id=0x70 --log-len=4096 --raw-binary |
		grep -aq "$RIG_NQN_RAM" || {
		echo "log page through the persistent controller failed"
		rc=1
	}
	nvme_disconnect "$c" || rc=1
	return "$rc"
}

t_both_connect() {
	nvme_connect xrdma "$RIG_IP4" "$RIG_NQN_RAM" || return 1
	nvme_connect rdma "$RIG_IP4" "$RIG_NQN_RDMA" || return 1
	X_CTRL=$(nvme_find_ctrl "$RIG_NQN_RAM" xrdma) || return 1
	R_CTRL=$(nvme_find_ctrl "$RIG_NQN_RDMA" rdma) || return 1
	nvme_wait_state "$X_CTRL" live && nvme_wait_state "$R_CTRL" live
	echo "xrdma: $X_CTRL, rdma: $R_CTRL"
}

t_both_io() {
	local xd rd pids=() rc=0 p
	xd=$(nvme_wait_ns "$X_CTRL") || return 1
	rd=$(nvme_wait_ns "$R_CTRL") || return 1
	for d in "$xd" "$rd"; do
		fio --name="both-${d##*/}" --filename="$d" --direct=1 \
			--ioengine=libaio --rw=randwrite --bs=4k --bsrange=4k-64k \
			--iodepth=16 --size=8M --verify=crc32c --do_verify=1 \
			--verify_fatal=1 >"$TEST_TMP/${d##*/}.fio" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || rc=1
	done
	((rc)) && tail -n 20 "$TEST_TMP"/*.fio
	grep -h 'err=' "$TEST_TMP"/*.fio
	return "$rc"
}

t_both_disconnect() {
	nvme_disconnect "$X_CTRL" && nvme_disconnect "$R_CTRL"
}

make_test_tmp
ktap_run "nvme discover -t xrdma lists every subsystem" t_discover
ktap_run "persistent discovery controller (admin queue only)" t_persistent_discovery
ktap_run "xrdma and in-kernel nvme-rdma connected at once" t_both_connect
ktap_run "verified I/O on both at the same time" t_both_io
ktap_run "both disconnect" t_both_disconnect
ktap_run "nvme-rdma subsystem removed" rig_del_rdma_subsys
ktap_run "RDMA resources and module refs back to baseline" leak_check
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_finished
