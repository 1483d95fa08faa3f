# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# NVMe host-side helpers for the xrdma selftests (sourced, not run):
# connect/disconnect through nvme-cli, and sysfs lookups of controllers
# and namespaces. Works with and without native multipath.
#
# Needs lib/env.sh. The host NQN/ID default to fixed values so tests do
# not depend on /etc/nvme of the machine whose root the VM shares.

NVME_TRSVCID=${NVME_TRSVCID:-4420}
NVME_HOSTNQN=${NVME_HOSTNQN:-nqn.2014-08.org.nvmexpress:uuid:6d8e1f3a-52b4-4c7e-9a0d-3f2b7c1e5a90}
NVME_HOSTID=${NVME_HOSTID:-6d8e1f3a-52b4-4c7e-9a0d-3f2b7c1e5a90}
NVME_TIMEOUT=${NVME_TIMEOUT:-60}

# /dev/nvme-fabrics exists only once nvme-fabrics is loaded (nvme-cli
# does not load it; nvmf-autoconnect.service does the same modprobe).
nvme_fabrics_load() {
	[[ -c /dev/nvme-fabrics ]] && return 0
	modprobe nvme-fabrics || return 1
	wait_for 10 test -c /dev/nvme-fabrics
}

# nvme_connect TRANSPORT TRADDR NQN [nvme-cli options...]
nvme_connect() {
	local tr=$1 addr=$2 nqn=$3
	shift 3
	nvme_fabrics_load || return 1
	echo "nvme connect -t $tr -a $addr -s $NVME_TRSVCID -n $nqn${*:+ $*}"
	nvme connect -t "$tr" -a "$addr" -s "$NVME_TRSVCID" -n "$nqn" \
		--hostnqn="$NVME_HOSTNQN" --hostid="$NVME_HOSTID" "$@"
}

# nvme_ctrl_attr CTRL ATTR: one sysfs attribute of /sys/class/nvme/CTRL.
nvme_ctrl_attr() {
	cat "/sys/class/nvme/$1/$2" 2>/dev/null
}

# nvme_find_ctrl NQN TRANSPORT [TRADDR]: print the controller name(s)
# (nvmeN) connected to NQN over TRANSPORT (and TRADDR); status 1 if none.
nvme_find_ctrl() {
	local nqn=$1 tr=$2 addr=${3:-} d n found=1
	for d in /sys/class/nvme/nvme*; do
		[[ -e $d/subsysnqn ]] || continue
		n=${d##*/}
		[[ $(nvme_ctrl_attr "$n" subsysnqn) == "$nqn" ]] || continue
		[[ $(nvme_ctrl_attr "$n" transport) == "$tr" ]] || continue
		if [[ -n $addr ]]; then
			[[ ,$(nvme_ctrl_attr "$n" address), == *,traddr=$addr,* ]] ||
				continue
		fi
		echo "$n"
		found=0
	done
	return "$found"
}

# nvme_ctrl_state CTRL: "live", "connecting", ... or "gone".
nvme_ctrl_state() {
	local s
	s=$(nvme_ctrl_attr "$1" state) || s=
	echo "${s:-gone}"
}

nvme_state_is() {
	[[ $(nvme_ctrl_state "$1") == "$2" ]]
}

# nvme_wait_state CTRL STATE [SECONDS]
nvme_wait_state() {
	wait_for "${3:-$NVME_TIMEOUT}" nvme_state_is "$1" "$2" && return 0
	echo "$1: state '$(nvme_ctrl_state "$1")', wanted '$2'"
	return 1
}

nvme_ctrl_gone() {
	[[ ! -e /sys/class/nvme/$1 ]]
}

# nvme_ctrl_namespaces CTRL: block devices (nvmeXnY) of CTRL's namespaces.
# Without multipath they sit under the controller; with it, the shared
# head disks sit under the subsystem and the controller has hidden
# per-path nodes (nvmeXcYnZ).
nvme_ctrl_namespaces() {
	local ctrl=$1 d s
	for d in "/sys/class/nvme/$ctrl"/nvme*n*; do
		[[ -e $d ]] || continue
		d=${d##*/}
		[[ $d == *c*n* ]] || echo "$d"
	done
	for s in /sys/class/nvme-subsystem/*; do
		[[ -e $s/$ctrl ]] || continue
		for d in "$s"/nvme*n*; do
			[[ -e $d ]] && echo "${d##*/}"
		done
	done
}

# Succeeds (printing /dev/NAME) once CTRL has a namespace block device
# that exists in /dev and has a non-zero size.
nvme_ns_ready() {
	local ns
	for ns in $(nvme_ctrl_namespaces "$1"); do
		[[ -b /dev/$ns ]] || continue
		[[ $(cat "/sys/class/block/$ns/size" 2>/dev/null) -gt 0 ]] || continue
		echo "/dev/$ns"
		return 0
	done
	return 1
}

# nvme_wait_ns CTRL [SECONDS]: print the first namespace block device.
nvme_wait_ns() {
	local dev
	wait_for "${2:-$NVME_TIMEOUT}" nvme_ns_ready "$1" >/dev/null || {
		echo "$1: no namespace block device" >&2
		return 1
	}
	dev=$(nvme_ns_ready "$1") && echo "$dev"
}

# nvme_disconnect CTRL [SECONDS]: "nvme disconnect -d" and wait until
# the controller is gone.
nvme_disconnect() {
	local ctrl=$1
	echo "nvme disconnect -d $ctrl"
	nvme disconnect -d "$ctrl" || return 1
	wait_for "${2:-$NVME_TIMEOUT}" nvme_ctrl_gone "$ctrl" && return 0
	echo "$ctrl still present (state $(nvme_ctrl_state "$ctrl"))"
	return 1
}

# nvme_delete_ctrl CTRL: delete through sysfs (cleanup paths), no wait.
nvme_delete_ctrl() {
	[[ -e /sys/class/nvme/$1/delete_controller ]] || return 0
	echo 1 >"/sys/class/nvme/$1/delete_controller" 2>/dev/null
}

# nvme_delete_ctrls TRANSPORT...: delete every fabrics controller using one
# of the transports, and wait (bounded) for them to disappear.
nvme_delete_ctrls() {
	local d n tr t gone=()
	for d in /sys/class/nvme/nvme*; do
		[[ -e $d/transport ]] || continue
		n=${d##*/}
		tr=$(nvme_ctrl_attr "$n" transport)
		for t in "$@"; do
			[[ $tr == "$t" ]] || continue
			echo "deleting leftover controller $n ($tr)"
			nvme_delete_ctrl "$n"
			gone+=("$n")
		done
	done
	for n in "${gone[@]}"; do
		wait_for "$NVME_TIMEOUT" nvme_ctrl_gone "$n" ||
			echo "controller $n did not go away"
	done
	return 0
}
