#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Proves the rig with the in-kernel host: "nvme connect -t rdma" to the
# RAM-backed subsystem, wait for the namespace, write and verify data
# with fio (crc32c; large sequential writes and 4 KiB random writes that
# use in-capsule data), check the data survives a reconnect (the target
# really stores it), "nvme disconnect", then: RDMA resources and module
# references back to the snapshot taken after rig setup, dmesg clean.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

readonly TR=rdma

CTRL=
DEV=

trap 'test_end "$TR"' EXIT

TEST_CMDS="dd cmp"
TEST_MODULES=nvme_rdma
test_begin 8

t_connect() {
	connect_subsys "$TR" "$RIG_NQN_RAM"
}

t_namespace() {
	ktap_require CTRL "no controller" || return
	DEV=$(nvme_wait_ns "$CTRL") || return 1
	echo "namespace $DEV, $(blockdev --getsize64 "$DEV") bytes," \
		"lba $(blockdev --getss "$DEV")"
}

t_fio_seq() {
	ktap_require DEV "no namespace" || return
	fio_verify seq128k --rw=write --bs=128k --iodepth=8
}

t_fio_rand() {
	ktap_require DEV "no namespace" || return
	fio_verify rand4k --rw=randwrite --bs=4k --iodepth=16 --offset=16M
}

t_persist() {
	ktap_require DEV "no namespace" || return
	local pat=$TEST_TMP/pattern
	head -c 4M /dev/urandom >"$pat" || return 1
	dd if="$pat" of="$DEV" bs=1M seek=32 oflag=direct status=none || return 1
	nvme_disconnect "$CTRL" || return 1
	CTRL=
	DEV=
	connect_ram "$TR" || return 1
	dd if="$DEV" bs=1M skip=32 count=4 iflag=direct status=none |
		cmp - "$pat" || return 1
	echo "4 MiB pattern read back intact after reconnect"
}

t_disconnect() {
	ktap_require CTRL "no controller" || return
	local dev=$DEV
	nvme_disconnect "$CTRL" || return 1
	CTRL=
	DEV=
	if [[ -n $dev ]]; then
		wait_for 10 test ! -e "$dev" || {
			echo "$dev still exists"
			return 1
		}
	fi
}

ktap_run "nvme connect -t $TR to $RIG_NQN_RAM" t_connect
ktap_run "namespace block device appears" t_namespace
ktap_run "fio 128k sequential write, crc32c verify" t_fio_seq
ktap_run "fio 4k random write (in-capsule), crc32c verify" t_fio_rand
ktap_run "data survives disconnect and reconnect" t_persist
ktap_run "nvme disconnect" t_disconnect
ktap_run "RDMA resources and module refs back to baseline" leak_check
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_finished
