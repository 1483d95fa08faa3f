# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The common frame of an xrdma selftest (sourced, not run): all libs, and
#
#   test_begin PLAN   KTAP header; skip (exit 4) unless root in the test
#                     VM with the commands in TEST_CMDS and the modules in
#                     TEST_MODULES; the rig up, /dev/nvme-fabrics, a
#                     scratch dir; then the plan, the leak snapshot and
#                     the dmesg mark every test ends by checking against
#   test_end TR...    the end of a test's EXIT trap: stop a background
#                     fio ($FIO_PID), delete leftover controllers of the
#                     transports, release the rig, remove scratch state
#   fio_wait SECONDS  wait, bounded, for the background fio to end;
#                     status 1 if it is still running

TEST_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=ktap.sh
. "$TEST_LIB/ktap.sh"
# shellcheck source=env.sh
. "$TEST_LIB/env.sh"
# shellcheck source=leak.sh
. "$TEST_LIB/leak.sh"
# shellcheck source=nvme.sh
. "$TEST_LIB/nvme.sh"
# shellcheck source=rig.sh
. "$TEST_LIB/rig.sh"

TEST_CMDS=${TEST_CMDS:-}
TEST_MODULES=${TEST_MODULES:-nvme_xrdma}

test_begin() {
	ktap_print_header
	require_root
	require_vm
	# shellcheck disable=SC2086 # word lists on purpose
	require_cmd nvme rdma fio $TEST_CMDS
	# shellcheck disable=SC2086
	require_module dummy rdma_rxe null_blk nvmet_rdma $TEST_MODULES

	ktap_quiet rig_acquire || ktap_exit_fail_msg "rig setup failed"
	ktap_quiet nvme_fabrics_load || ktap_exit_fail_msg "no /dev/nvme-fabrics"
	make_test_tmp
	ktap_set_plan "$1"
	leak_snapshot
	dmesg_mark
}

# connect_ram TR [nvme-cli options...]: connect to the rig's RAM subsystem
# over TR and wait for it; sets CTRL and DEV (its namespace).
connect_ram() {
	local tr=$1
	shift
	nvme_connect "$tr" "$RIG_IP4" "$RIG_NQN_RAM" "$@" || return 1
	CTRL=$(nvme_find_ctrl "$RIG_NQN_RAM" "$tr" "$RIG_IP4") || return 1
	nvme_wait_state "$CTRL" live || return 1
	# shellcheck disable=SC2034 # for the test that sourced us
	DEV=$(nvme_wait_ns "$CTRL")
}

FIO_PID=

fio_running() {
	[[ -n $FIO_PID ]] && kill -0 "$FIO_PID" 2>/dev/null
}

fio_wait() {
	wait_for "$1" eval '! fio_running' && return 0
	echo "fio (pid $FIO_PID) still running after $1 s"
	return 1
}

test_end() {
	[[ -n $FIO_PID ]] && kill "$FIO_PID" 2>/dev/null
	nvme_delete_ctrls "$@"
	rig_release
	env_cleanup
	leak_cleanup
}
