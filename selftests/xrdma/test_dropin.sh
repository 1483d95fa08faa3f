#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Drop-in mode (transport_name=rdma) never shares the name "rdma" with
# the in-kernel nvme-rdma, whichever loads first:
#   - nvme-rdma loaded: nvme-xrdma transport_name=rdma fails to load with
#     its log line, and nvme-rdma keeps serving -t rdma;
#   - nvme-xrdma transport_name=rdma loaded: modprobe nvme-rdma fails with
#     our log line, -t rdma is served by xrdma (the controller has the
#     xrdma/ sysfs group) with verified I/O, and after unloading xrdma
#     nvme-rdma loads again;
#   - any transport_name but xrdma and rdma fails to load.
# The nvme-rdma/nvme-xrdma modules loaded at the start are loaded again
# at the end (with their transport_name); module references, RDMA
# resources and dmesg are then checked against the start.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"
# shellcheck source=../lib/dropin.sh
. "$DIR/../lib/dropin.sh"

readonly MSG_REFUSED='transport_name=rdma refused: nvme-rdma is loaded'
readonly MSG_KEPT_OUT='refusing to load nvme_rdma: nvme_xrdma serves transport "rdma"'

CTRL=
DEV=

cleanup() {
	((DROPIN_RESTORED)) || dropin_restore >/dev/null 2>&1
	test_end xrdma rdma
}
trap cleanup EXIT

TEST_MODULES="nvme_rdma nvme_xrdma"
test_begin 11

# Connect -t rdma to the RAM subsystem; WANT is "xrdma" or "nvme-rdma".
rdma_served_by() {
	local want=$1 rc=0
	connect_ram rdma || return 1
	if [[ -d /sys/class/nvme/$CTRL/xrdma ]]; then
		echo "$CTRL: served by xrdma"
		[[ $want == xrdma ]] || rc=1
	else
		echo "$CTRL: served by nvme-rdma (no xrdma/ group)"
		[[ $want == nvme-rdma ]] || rc=1
	fi
	fio_verify "dropin-$want" --rw=randwrite --bs=4k --iodepth=16 \
		--size=4M || rc=1
	nvme_disconnect "$CTRL" || rc=1
	CTRL=
	DEV=
	return "$rc"
}

t_refused_after_rdma() {
	local rc=0
	dropin_mods_off || return 1
	modprobe "$RMOD" || return 1
	log_mark
	if modprobe "$XMOD" transport_name=rdma; then
		echo "$XMOD transport_name=rdma loaded next to $RMOD"
		rc=1
	fi
	log_has "$MSG_REFUSED" || rc=1
	if module_loaded "$XMOD"; then
		echo "$XMOD is loaded"
		rc=1
	fi
	return "$rc"
}

t_rdma_still_serves() {
	module_loaded "$XMOD" && { modprobe -r "$XMOD" || return 1; }
	module_loaded "$RMOD" || modprobe "$RMOD" || return 1
	rdma_served_by nvme-rdma
}

t_rdma_kept_out() {
	local rc=0
	module_loaded "$XMOD" || return 1
	log_mark
	if modprobe "$RMOD"; then
		echo "$RMOD loaded next to $XMOD transport_name=rdma"
		rc=1
	fi
	log_has "$MSG_KEPT_OUT" || rc=1
	if module_loaded "$RMOD"; then
		echo "$RMOD is loaded"
		modprobe -r "$RMOD"
		rc=1
	fi
	return "$rc"
}

# nvme-fabrics asks for nvme-rdma on this connect too: kept out again.
t_dropin_serves() {
	local rc=0
	module_loaded "$XMOD" || return 1
	rdma_served_by xrdma || rc=1
	if module_loaded "$RMOD"; then
		echo "$RMOD got loaded by the connect"
		rc=1
	fi
	return "$rc"
}

t_rdma_after_unload() {
	dropin_mods_off || return 1
	modprobe "$RMOD" || return 1
	modprobe -r "$RMOD"
}

t_other_names() {
	local name rc=0
	dropin_mods_off || return 1
	for name in tcp fc loop foo; do
		log_mark
		if modprobe "$XMOD" transport_name="$name"; then
			echo "$XMOD transport_name=$name loaded"
			modprobe -r "$XMOD"
			rc=1
			continue
		fi
		log_has "invalid transport_name \"$name\"" || rc=1
	done
	return "$rc"
}

ktap_run "nvme-rdma and nvme-xrdma unloaded" dropin_save
ktap_run "transport_name=rdma refused while nvme-rdma is loaded" t_refused_after_rdma
ktap_run "nvme-rdma still serves -t rdma" t_rdma_still_serves
ktap_run "modprobe $XMOD transport_name=rdma" dropin_load
ktap_run "modprobe nvme-rdma refused while xrdma serves rdma" t_rdma_kept_out
ktap_run "-t rdma is served by xrdma, verified I/O" t_dropin_serves
ktap_run "after unloading xrdma nvme-rdma loads again" t_rdma_after_unload
ktap_run "transport_name tcp, fc, loop, foo refused" t_other_names
ktap_run "modules loaded at the start loaded again" dropin_restore
ktap_run "RDMA resources and module refs back to baseline" leak_check
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_finished
