# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Drop-in mode (nvme-xrdma transport_name=rdma) for the tests that switch
# between it and the in-tree nvme-rdma (sourced, not run, after
# lib/frame.sh):
#
#   dropin_save      remember which of nvme-rdma and nvme-xrdma (with its
#                    transport_name) are loaded, then unload both
#   dropin_mods_off  delete the controllers of both, unload both
#   dropin_load      unload both, load nvme-xrdma transport_name=rdma
#   dropin_restore   unload both, load again what dropin_save found
#   log_mark / log_has TEXT   TEXT in the kernel log since log_mark

readonly XMOD=nvme-xrdma
readonly RMOD=nvme-rdma
readonly XPARAM=/sys/module/nvme_xrdma/parameters/transport_name

# modules loaded when the test started, "" if not; nvme-xrdma's
# transport_name
DROPIN_HAD_RDMA=
DROPIN_HAD_XRDMA=
# set once dropin_restore ran (the EXIT trap runs it otherwise)
# shellcheck disable=SC2034 # for the test that sourced us
DROPIN_RESTORED=0

dropin_mods_off() {
	nvme_delete_ctrls xrdma rdma
	if module_loaded "$XMOD"; then
		modprobe -r "$XMOD" || return 1
	fi
	if module_loaded "$RMOD"; then
		modprobe -r "$RMOD" || return 1
	fi
	! module_loaded "$XMOD" && ! module_loaded "$RMOD"
}

dropin_save() {
	module_loaded "$RMOD" && DROPIN_HAD_RDMA=1
	module_loaded "$XMOD" && DROPIN_HAD_XRDMA=$(<"$XPARAM")
	echo "loaded at start: ${DROPIN_HAD_RDMA:+$RMOD }${DROPIN_HAD_XRDMA:+$XMOD ($DROPIN_HAD_XRDMA)}"
	dropin_mods_off
}

dropin_load() {
	dropin_mods_off || return 1
	modprobe "$XMOD" transport_name=rdma || return 1
	echo "transport_name $(<"$XPARAM")"
	[[ $(<"$XPARAM") == rdma ]]
}

dropin_restore() {
	# shellcheck disable=SC2034
	DROPIN_RESTORED=1
	dropin_mods_off || return 1
	if [[ -n $DROPIN_HAD_RDMA ]]; then
		modprobe "$RMOD" || return 1
	fi
	if [[ -n $DROPIN_HAD_XRDMA ]]; then
		modprobe "$XMOD" transport_name="$DROPIN_HAD_XRDMA" || return 1
	fi
}

LOG_MARK=
log_mark() {
	LOG_MARK=$(kmsg_mark dropin)
}

log_has() {
	dmesg | awk -v m="$LOG_MARK" 'index($0, m) { p = 1; next } p' |
		grep -F -- "$1" && return 0
	echo "not in the kernel log: $1"
	return 1
}
