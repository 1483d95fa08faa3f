# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The frame of every xrdma selftest (sourced, not run): all libs, and
#
#   test_begin PLAN   KTAP header; skip (exit 4) unless root with the
#                     commands in TEST_CMDS and the modules in
#                     TEST_MODULES; unless TEST_RIG=0 (a test of the module
#                     alone) also inside the test VM with the rig's
#                     commands and modules, the rig up and /dev/nvme-fabrics;
#                     a scratch dir ($TEST_TMP); then the plan, the leak
#                     snapshot and the dmesg mark every test ends by
#                     checking against (leak_check, dmesg_check)
#   test_end [TR...]  the end of a test's EXIT trap: stop a background
#                     fio ($FIO_PID), turn every delay point off, delete
#                     leftover controllers of the transports, release the
#                     rig, remove scratch state
#   delay_set POINT MS  hold the driver at its delay point POINT (delay.c)
#                     for MS milliseconds from now on; 0 turns it off
#   connect_subsys TR NQN [OPTS...]  connect over TR to NQN on the rig's
#                     port (nvme-cli OPTS), wait until live; sets CTRL
#   connect_ram TR [OPTS...]  the same to the RAM subsystem; sets CTRL and
#                     DEV (its namespace)
#   fio_verify NAME [FIO-ARGS...]  write $DEV and verify it with crc32c
#   fio_wait SECONDS  wait, bounded, for the background fio to end;
#                     status 1 if it is still running
#   fio_start_verified NAME [FIO-ARGS...]  crc32c-verified random writes
#                     on $DEV in the background ($FIO_PID), output in
#                     $TEST_TMP/NAME.fio; ARGS may override (the last wins)
#   fio_stop_verified OUT  stop the background fio at a loop boundary and
#                     let it verify what it wrote; status 1 if it hangs or
#                     OUT (its output) reports an error
#   link_delete_under_io RXE  random writes on $DEV in the background, then
#                     "rdma link delete RXE": it must return within 10 s,
#                     $CTRL be gone and fio ended within 60 s (times
#                     XRDMA_TIMEOUT_SCALE); clears CTRL
#   timed_live WHAT   wait for $CTRL to be live again, say how long it took
#   BADTARGET         the misbehaving target (tools/badtarget): beside the
#                     xrdma tests in an installed copy, else in the tree;
#                     $XRDMA_BADTARGET overrides
#   badtarget_listening LOG  the badtarget started with its output in LOG
#                     listens within 10 s (times XRDMA_TIMEOUT_SCALE)
#   no_remote_inv     nvme-xrdma's commands ask for no remote
#                     invalidation (its test hook no_remote_inv is set,
#                     XRDMA_NO_REMOTE_INV=1 in run_selftests.sh): nvmet-rdma
#                     answers with a plain SEND, the host invalidates

FRAME_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=ktap.sh
. "$FRAME_LIB/ktap.sh"
# shellcheck source=env.sh
. "$FRAME_LIB/env.sh"
# shellcheck source=leak.sh
. "$FRAME_LIB/leak.sh"
# shellcheck source=nvme.sh
. "$FRAME_LIB/nvme.sh"
# shellcheck source=rig.sh
. "$FRAME_LIB/rig.sh"

BADTARGET=$FRAME_LIB/../xrdma/badtarget
[[ -x $BADTARGET ]] || BADTARGET=$FRAME_LIB/../../tools/badtarget/badtarget
BADTARGET=${XRDMA_BADTARGET:-$BADTARGET}

# Loading libibverbs and its providers alone takes about 15 s on the
# debug kernel.
badtarget_listening() {
	wait_for $((10 * ${XRDMA_TIMEOUT_SCALE:-1})) grep -q "listening on" "$1"
}

no_remote_inv() {
	[[ $(cat /sys/module/nvme_xrdma/parameters/no_remote_inv \
		2>/dev/null) == Y ]]
}

TEST_CMDS=${TEST_CMDS:-}
TEST_MODULES=${TEST_MODULES:-nvme_xrdma}
TEST_RIG=${TEST_RIG:-1}

test_begin() {
	local want_cmds="modprobe $TEST_CMDS" want_mods=$TEST_MODULES
	ktap_print_header
	require_root
	if ((TEST_RIG)); then
		require_vm
		want_cmds+=" nvme rdma ip fio"
		[[ -n $RIG_PROVIDER_MOD ]] || ktap_exit_fail_msg \
			"unknown XRDMA_PROVIDER=$RIG_PROVIDER (rxe or siw)"
		want_mods+=" dummy $RIG_PROVIDER_MOD null_blk nvmet_rdma"
	fi
	# shellcheck disable=SC2086 # word lists on purpose
	require_cmd $want_cmds
	# shellcheck disable=SC2086
	require_module $want_mods
	if ((TEST_RIG)); then
		ktap_quiet rig_acquire || ktap_exit_fail_msg "rig setup failed"
		ktap_quiet nvme_fabrics_load ||
			ktap_exit_fail_msg "no /dev/nvme-fabrics"
	fi
	make_test_tmp
	ktap_set_plan "$1"
	leak_snapshot
	dmesg_mark
}

# connect_subsys TR NQN [OPTS...]: connect to NQN at $NVME_TRADDR (default
# $RIG_IP4), set CTRL, wait for LIVE.
connect_subsys() {
	local tr=$1 nqn=$2 addr=${NVME_TRADDR:-$RIG_IP4}
	shift 2
	nvme_connect "$tr" "$addr" "$nqn" "$@" || return 1
	CTRL=$(nvme_find_ctrl "$nqn" "$tr" "$addr" | tail -n 1)
	[[ -n $CTRL ]] || {
		echo "no $tr controller for $nqn in /sys/class/nvme"
		return 1
	}
	echo "controller $CTRL: $(nvme_ctrl_attr "$CTRL" address)"
	nvme_wait_state "$CTRL" live
}

connect_ram() {
	connect_subsys "$1" "$RIG_NQN_RAM" "${@:2}" || return 1
	# shellcheck disable=SC2034 # for the test that sourced us
	DEV=$(nvme_wait_ns "$CTRL")
}

# fio_verify NAME [FIO-ARGS...]: write 8 MiB of $DEV (ARGS may say
# otherwise: the last of an option counts) and read it back verified with
# crc32c. Prints fio's err= line; on failure (fio's status or a verify
# error) the end of its output, status 1.
fio_verify() {
	local name=$1 out rc
	shift
	# fio would write a regular file where the namespace went away
	[[ -b $DEV ]] || {
		echo "fio $name: no block device '$DEV'"
		return 1
	}
	out=$(fio --name="$name" --filename="$DEV" --ioengine=libaio \
		--direct=1 --size=8M --verify=crc32c --do_verify=1 \
		--verify_fatal=1 "$@" 2>&1)
	rc=$?
	if ((rc)) || grep -qE 'verify: bad|crc32c: verify failed' <<<"$out"; then
		tail -n 30 <<<"$out"
		echo "fio $name failed (exit $rc)"
		return 1
	fi
	grep -E 'err=' <<<"$out" | head -n 1
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

fio_start_verified() {
	local name=$1
	shift
	fio --name="$name" --filename="$DEV" --direct=1 --ioengine=libaio \
		--rw=randwrite --bsrange=4k-64k --iodepth=16 --size=32M \
		--loops=1000 --verify=crc32c --verify_backlog=256 \
		--do_verify=1 --verify_fatal=1 "$@" >"$TEST_TMP/$name.fio" 2>&1 &
	FIO_PID=$!
}

fio_stop_verified() {
	local out=$1
	kill -INT "$FIO_PID" 2>/dev/null
	if ! fio_wait 180; then
		echo "fio hung"
		kill -9 "$FIO_PID"
		FIO_PID=
		return 1
	fi
	# stopped by SIGINT: judged by what it reports, not its status
	wait "$FIO_PID"
	FIO_PID=
	if grep -qE 'verify: bad|crc32c: verify failed|err= *[1-9]' "$out"; then
		tail -n 30 "$out"
		return 1
	fi
	grep -E 'err=' "$out" | head -n 1
}

link_delete_under_io() {
	local scale=${XRDMA_TIMEOUT_SCALE:-1} start took rc=0
	# no verify: the writes in flight when the device goes fail
	fio --name=gone --filename="$DEV" --direct=1 --ioengine=libaio \
		--rw=randwrite --bs=4k --iodepth=16 --size=16M --time_based \
		--runtime=60 >"$TEST_TMP/gone.fio" 2>&1 &
	FIO_PID=$!
	sleep 2
	start=$(now_ms)
	rdma link delete "$1" || rc=1
	took=$(($(now_ms) - start))
	echo "rdma link delete $1 took $took ms"
	((took < 10000 * scale)) || {
		echo "rdma link delete blocked"
		rc=1
	}
	wait_for $((60 * scale)) nvme_ctrl_gone "$CTRL" || {
		echo "controller $CTRL not removed"
		rc=1
	}
	echo "controller removed $(($(now_ms) - start)) ms after link delete"
	fio_wait $((60 * scale)) || {
		echo "fio still blocked after the device went away"
		rc=1
	}
	wait "$FIO_PID"
	FIO_PID=
	CTRL=
	return "$rc"
}

timed_live() {
	local t0
	t0=$(now_ms)
	nvme_wait_state "$CTRL" live 120 || return 1
	echo "$1: live again after $(($(now_ms) - t0)) ms"
}

readonly XRDMA_DELAY_DIR=/sys/kernel/debug/nvme-xrdma/delay

delay_set() {
	echo "$2" >"$XRDMA_DELAY_DIR/$1"
}

delay_reset() {
	local p
	for p in "$XRDMA_DELAY_DIR"/*; do
		[[ -w $p ]] && echo 0 >"$p"
	done
	return 0
}

test_end() {
	[[ -n $FIO_PID ]] && kill "$FIO_PID" 2>/dev/null
	delay_reset
	nvme_delete_ctrls "$@"
	rig_release
	env_cleanup
	leak_cleanup
}
