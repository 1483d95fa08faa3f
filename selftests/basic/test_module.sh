#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# nvme-xrdma loads and unloads cleanly: modprobe, /sys/module/nvme_xrdma,
# refcount 0, modprobe -r, then five more load/unload rounds; afterwards
# no module reference or RDMA resource is left and dmesg is clean.
# Needs no rig. Skips if the module is not installed (tools/vm/run
# installs drivers/nvme/host/xrdma/nvme-xrdma.ko when it was built).

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

readonly MOD=nvme-xrdma
readonly SYSMOD=/sys/module/nvme_xrdma
readonly ROUNDS=5

cleanup() {
	module_loaded "$MOD" && modprobe -r "$MOD" 2>/dev/null
	test_end
}
trap cleanup EXIT

TEST_RIG=0
TEST_CMDS="modinfo"
TEST_MODULES=$MOD
test_begin 10
if module_loaded "$MOD"; then
	modprobe -r "$MOD" 2>/dev/null ||
		ktap_exit_fail_msg "$MOD is loaded and cannot be removed"
fi

module_gone() {
	! module_loaded "$MOD"
}

t_vermagic() {
	local vm
	vm=$(modinfo -F vermagic "$MOD")
	echo "$(modinfo -n "$MOD"): vermagic $vm"
	[[ ${vm%% *} == "$(uname -r)" ]]
}

t_load() {
	modprobe "$MOD"
}

t_sysfs() {
	wait_for 5 module_loaded "$MOD" || {
		echo "$SYSMOD missing"
		return 1
	}
	echo "initstate $(<"$SYSMOD/initstate")"
	[[ $(<"$SYSMOD/initstate") == live ]]
}

# The test guest loads it with its hooks' static keys on (run_selftests.sh),
# so that arming a fault or delay patches no code under traffic. The
# production flavour has no hooks (package/test_dkms.sh checks that).
t_hooks() {
	local v
	if ! modinfo -F parm "$MOD" | grep -q '^test_hooks:'; then
		# shellcheck disable=SC2034 # ktap_test_result reads it
		KTAP_REASON="the production flavour, without hooks (make XRDMA_TEST_HOOKS=1 builds them in)"
		return "$KSFT_SKIP"
	fi
	if [[ ! -f /etc/modprobe.d/xrdma-selftests.conf ]]; then
		# shellcheck disable=SC2034 # ktap_test_result reads it
		KTAP_REASON="not run by run_selftests.sh in the guest"
		return "$KSFT_SKIP"
	fi
	v=$(<"$SYSMOD/parameters/test_hooks")
	echo "test_hooks $v"
	[[ $v == Y ]]
}

t_refcnt() {
	local r
	r=$(module_refcnt "$MOD")
	echo "refcnt $r"
	[[ $r == 0 ]]
}

t_unload() {
	modprobe -r "$MOD" || return 1
	wait_for 10 module_gone || {
		echo "$SYSMOD still present"
		return 1
	}
}

t_rounds() {
	local i r
	for ((i = 1; i <= ROUNDS; i++)); do
		modprobe "$MOD" || {
			echo "round $i: load failed"
			return 1
		}
		r=$(module_refcnt "$MOD")
		[[ $r == 0 ]] || {
			echo "round $i: refcnt $r after load"
			return 1
		}
		modprobe -r "$MOD" || {
			echo "round $i: unload failed"
			return 1
		}
		wait_for 10 module_gone || {
			echo "round $i: still loaded after modprobe -r"
			return 1
		}
	done
	echo "$ROUNDS rounds done"
}

t_not_loaded() {
	module_gone || modprobe -r "$MOD"
	module_gone
}

ktap_run "vermagic matches $(uname -r)" t_vermagic
ktap_run "modprobe $MOD" t_load
ktap_run "$SYSMOD present and live" t_sysfs
ktap_run "fault and delay hooks on from the load" t_hooks
ktap_run "refcount is 0 while unused" t_refcnt
ktap_run "modprobe -r $MOD" t_unload
ktap_run "load/unload $ROUNDS times" t_rounds
ktap_run "module not loaded at the end" t_not_loaded
ktap_run "no leaked module references or RDMA resources" leak_check
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_finished
