#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bad requests to "xrdma": each must fail with a specific errno and a
# clear log line, quickly, with no splat and nothing leaked; and targets
# that restrict us (no in-capsule data, small queues) must still work, as
# must one that allows more in-capsule data after a reconnect.  A target
# (tools/badtarget) whose Identify says MAXCMD 1 is refused with a line
# that names it; one that says MAXCMD 0, no limit, works at the depth the
# rest allows.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

readonly TR=xrdma
readonly NQN_CLOSED=nqn.2026-11.io.xrdma:closed
readonly DISC_NQN=nqn.2014-08.org.nvmexpress.discovery
readonly BT_PORT=4427
readonly BT_NQN=nqn.2026-11.io.xrdma:limits
BT_PID=

cleanup() {
	[[ -n $BT_PID ]] && kill -KILL "$BT_PID" 2>/dev/null
	rig_del_subsys "$NQN_CLOSED" >/dev/null 2>&1
	rig_del_port 7 >/dev/null 2>&1
	rig_del_port 8 >/dev/null 2>&1
	rig_del_port 9 >/dev/null 2>&1
	test_end "$TR"
}
trap cleanup EXIT

TEST_CMDS="$BADTARGET dd cmp"
test_begin 23

# try OPTIONS: write a connect request; print the error, status 0 if the
# controller was created.
try() {
	(echo "transport=$TR,hostnqn=$NVME_HOSTNQN,hostid=$NVME_HOSTID,$1" \
		>/dev/nvme-fabrics) 2>&1
}

# expect_fail ERRNO-TEXT LOG-REGEX OPTIONS [MAX-SECONDS]; a subshell, so
# its own dmesg mark does not move the test's.
expect_fail() (
	local want=$1 log=$2 opts=$3 max=${4:-10} out t0 ms
	dmesg_mark
	t0=$(now_ms)
	if out=$(try "$opts"); then
		echo "accepted: $opts"
		nvme_delete_ctrls "$TR"
		return 1
	fi
	ms=$(($(now_ms) - t0))
	echo "$opts -> ${out##*: } in $ms ms"
	[[ $out == *"$want"* ]] || {
		echo "expected '$want'"
		return 1
	}
	((ms <= max * 1000)) || {
		echo "took longer than $max s"
		return 1
	}
	dmesg_since_mark | grep -qE "$log" || {
		echo "no log line matching '$log':"
		dmesg_since_mark | tail -n 5
		return 1
	}
)

OK="traddr=$RIG_IP4,trsvcid=$RIG_TRSVCID"

ktap_run "unknown option: EINVAL" expect_fail "Invalid argument" \
	"unknown parameter" "$OK,nqn=$RIG_NQN_NULL,no_such_option=1"
ktap_run "malformed traddr: EINVAL" expect_fail "Invalid argument" \
	"invalid traddr" "traddr=192.0.2.300,nqn=$RIG_NQN_NULL"
ktap_run "host name as traddr: EINVAL" expect_fail "Invalid argument" \
	"invalid traddr" "traddr=target.example,nqn=$RIG_NQN_NULL"
ktap_run "IPv6 with an unknown scope: EINVAL" expect_fail \
	"Invalid argument" "invalid traddr" \
	"traddr=fe80::1%nosuchif0,nqn=$RIG_NQN_NULL"
ktap_run "queue_size out of range: EINVAL" expect_fail "Invalid argument" \
	"queue_size|Invalid" "$OK,nqn=$RIG_NQN_NULL,queue_size=4096"
ktap_run "nr_io_queues=0: EINVAL" expect_fail "Invalid argument" \
	"nr_io_queues|Invalid" "$OK,nqn=$RIG_NQN_NULL,nr_io_queues=0"
ktap_run "negative tos: EINVAL" expect_fail "Invalid argument" \
	"type of service" "$OK,nqn=$RIG_NQN_NULL,tos=-5"
# siw makes its TCP connection inside rdma_connect(), blocking: a peer
# that never answers holds the call for the SYN retries (about 130 s),
# where no bound of the host's can end it; a refusal (RST) is that call's
# error, not a REJECTED event.
t_unreachable() {
	if rig_iwarp; then
		# shellcheck disable=SC2034 # ktap_test_result reads it
		KTAP_REASON="siw's rdma_connect() waits out TCP's SYN retries"
		return "$KSFT_SKIP"
	fi
	expect_fail "Connection timed out" \
		"cannot connect to 192\.0\.2\.99:4420 from $RIG_IP4 via $RIG_RXE port 1 .*: -ETIMEDOUT" \
		"traddr=192.0.2.99,trsvcid=4420,nqn=$RIG_NQN_NULL" 20
}
if rig_iwarp; then
	REFUSED="rdma_cm refused the step: -ECONNREFUSED"
else
	REFUSED="connect rejected: .*: -ECONNREFUSED"
fi
ktap_run "unreachable address: ETIMEDOUT within 20 s" t_unreachable
ktap_run "no listener on the port: ECONNREFUSED" expect_fail \
	"Connection refused" \
	"cannot connect to $RIG_IP4:4999 from $RIG_IP4 via $RIG_RXE port 1 \(GID [0-9a-f:.]+\): connection: $REFUSED" \
	"traddr=$RIG_IP4,trsvcid=4999,nqn=$RIG_NQN_NULL"

# A route that leaves through an interface with no RDMA device on it.
t_no_rdma_route() {
	local rc=0
	ip link add xrdma-norxe type dummy || return 1
	ip addr add 198.51.100.1/24 dev xrdma-norxe &&
		ip link set xrdma-norxe up || rc=1
	((rc)) || expect_fail "Network is unreachable" \
		"cannot connect to 198\.51\.100\.2:4420: address resolution: no RDMA device .*: -ENETUNREACH" \
		"traddr=198.51.100.2,trsvcid=4420,nqn=$RIG_NQN_NULL" || rc=1
	ip link del xrdma-norxe || rc=1
	return "$rc"
}
ktap_run "route through an interface without RDMA: ENETUNREACH" \
	t_no_rdma_route
ktap_run "unknown subsystem NQN: EIO with the NQN logged" expect_fail \
	"Input/output error" "subsysnqn \"nqn.2026-11.io.xrdma:none\"" \
	"$OK,nqn=nqn.2026-11.io.xrdma:none"

ktap_run "I/O subsystem NQN with 'discovery': EINVAL" expect_fail \
	"Invalid argument" "$RIG_NQN_NULL is not a discovery controller" \
	"$OK,nqn=$RIG_NQN_NULL,discovery"

# The discovery NQN to a port that serves I/O subsystems: nvmet answers
# discovery on every port, so this is a discovery controller (admin queue
# only, no namespaces, no keep-alive), never an I/O controller.
t_discovery_on_io_port() {
	local rc=0 ctrl
	try "$OK,nqn=$DISC_NQN" >/dev/null || {
		echo "discovery controller on the I/O port refused"
		return 1
	}
	ctrl=$(nvme_find_ctrl "$DISC_NQN" "$TR" "$RIG_IP4") || return 1
	[[ $(nvme_ctrl_attr "$ctrl" queue_count) == 1 ]] || {
		echo "queue_count $(nvme_ctrl_attr "$ctrl" queue_count), want 1"
		rc=1
	}
	[[ -z $(nvme_ctrl_namespaces "$ctrl") ]] || {
		echo "a discovery controller with namespaces"
		rc=1
	}
	nvme_delete_ctrl "$ctrl" || rc=1
	return "$rc"
}
ktap_run "discovery NQN to an I/O port: discovery controller only" \
	t_discovery_on_io_port

t_huge_nr_io_queues() {
	local rc=0 ctrl want=$(($(nproc) + 1))
	try "$OK,nqn=$RIG_NQN_NULL,nr_io_queues=100000" >/dev/null || {
		echo "nr_io_queues=100000 refused"
		return 1
	}
	ctrl=$(nvme_find_ctrl "$RIG_NQN_NULL" "$TR" "$RIG_IP4") || return 1
	nvme_wait_state "$ctrl" live || rc=1
	[[ $(nvme_ctrl_attr "$ctrl" queue_count) == "$want" ]] || {
		echo "queue_count $(nvme_ctrl_attr "$ctrl" queue_count)," \
			"want $want (one I/O queue per CPU)"
		rc=1
	}
	nvme_delete_ctrl "$ctrl" || rc=1
	return "$rc"
}
ktap_run "nr_io_queues=100000: clamped to one per CPU" t_huge_nr_io_queues

t_host_not_allowed() {
	rig_add_subsys "$NQN_CLOSED" /dev/xrdma_null || return 1
	# the subsystem admits no host at all
	echo 0 >"$RIG_NVMET/subsystems/$NQN_CLOSED/attr_allow_any_host" ||
		return 1
	rig_link "$RIG_PORT" "$NQN_CLOSED" || return 1
	expect_fail "Input/output error" "cannot connect to $NQN_CLOSED" \
		"$OK,nqn=$NQN_CLOSED"
	local rc=$?
	rig_del_subsys "$NQN_CLOSED"
	return "$rc"
}
ktap_run "host not allowed by the target: EIO" t_host_not_allowed

t_no_inline() {
	local rc=0 frwr
	rig_add_param_port 7 4407 0 -1 "$RIG_NQN_RAM" || return 1
	NVME_TRSVCID=4407 connect_subsys "$TR" "$RIG_NQN_RAM" || return 1
	[[ $(cat "/sys/class/nvme/$CTRL/xrdma/inline_data_size") == 0 ]] || {
		echo "inline_data_size not 0 with the target's inline disabled"
		rc=1
	}
	frwr=$(awk '$1 == "inline_data" { print $2 }' \
		"/sys/kernel/debug/nvme-xrdma/$CTRL/stats")
	dd if=/dev/zero of="$(nvme_wait_ns "$CTRL")" bs=4k count=64 \
		oflag=direct status=none || rc=1
	[[ $(awk '$1 == "inline_data" { print $2 }' \
		"/sys/kernel/debug/nvme-xrdma/$CTRL/stats") == "$frwr" ]] || {
		echo "in-capsule writes sent to a target that refuses them"
		rc=1
	}
	nvme_disconnect "$CTRL" || rc=1
	rig_del_port 7
	return "$rc"
}
ktap_run "target without in-capsule data: writes use FRWR" t_no_inline

# A request's room for in-capsule data is fixed when the controller is
# created: a reconnect to a port that now allows more keeps the first
# size, says so, and its 16 KiB writes verify.
t_inline_grows() {
	local rc=0 p=$RIG_NVMET/ports/9 got
	rig_add_param_port 9 4409 4096 -1 "$RIG_NQN_RAM" || return 1
	NVME_TRSVCID=4409 connect_ram "$TR" -c 1 -l 60 || return 1
	echo "in-capsule data size at creation:" \
		"$(cat "/sys/class/nvme/$CTRL/xrdma/inline_data_size")"
	# the port's last subsystem gone: it is disabled, the host reconnects
	rig_unlink 9 "$RIG_NQN_RAM"
	wait_for 30 eval "! nvme_state_is $CTRL live" || rc=1
	echo 16384 >"$p/param_inline_data_size" || rc=1
	rig_link 9 "$RIG_NQN_RAM" || rc=1
	nvme_wait_state "$CTRL" live 60 || rc=1
	got=$(cat "/sys/class/nvme/$CTRL/xrdma/inline_data_size")
	echo "in-capsule data size after the reconnect: $got"
	[[ $got == 4096 ]] || rc=1
	dmesg_since_mark | grep "target allows 16384 bytes of in-capsule" ||
		rc=1
	fio_verify inline --rw=randwrite --bs=16k --iodepth=16 || rc=1
	nvme_disconnect "$CTRL" || rc=1
	rig_del_port 9
	return "$rc"
}
ktap_run "in-capsule size kept when a reconnect is allowed more" \
	t_inline_grows

t_small_queue() {
	local rc=0
	if ! rig_has_port_param param_max_queue_size; then
		# shellcheck disable=SC2034 # ktap_test_result reads it
		KTAP_REASON="the target has no param_max_queue_size (6.1)"
		return "$KSFT_SKIP"
	fi
	rig_add_param_port 8 4408 -1 16 "$RIG_NQN_NULL" || return 1
	NVME_TRSVCID=4408 connect_subsys "$TR" "$RIG_NQN_NULL" || return 1
	[[ $(cat "/sys/class/nvme/$CTRL/sqsize") == 15 ]] || {
		echo "sqsize $(cat "/sys/class/nvme/$CTRL/sqsize"), expected 15"
		rc=1
	}
	nvme_disconnect "$CTRL" || rc=1
	rig_del_port 8
	return "$rc"
}
ktap_run "target with max queue size 16: depth clamped, works" t_small_queue

# read_pool takes 0 (off) or 4096 to 65536: another value is refused
# when written (4294967295 used to be taken, and wrap to 4 KiB slots at
# the next connect), and the parameter keeps its value.
t_read_pool_range() {
	local p=/sys/module/nvme_xrdma/parameters/read_pool v v0 err rc=0
	modprobe nvme-xrdma || return 1
	v0=$(<"$p")
	for v in 4294967295 65537 4095 1; do
		if err=$( (echo "$v" >"$p") 2>&1); then
			echo "read_pool=$v accepted, reads $(<"$p")"
			echo "$v0" >"$p"
			rc=1
			continue
		fi
		echo "read_pool=$v: ${err##*: }, reads $(<"$p")"
		[[ $err == *"Invalid argument"* && $(<"$p") == "$v0" ]] || rc=1
	done
	for v in 4096 65536 0; do
		if ! echo "$v" >"$p" || [[ $(<"$p") != "$v" ]]; then
			echo "read_pool=$v not taken"
			rc=1
		fi
	done
	echo "$v0" >"$p"
	return "$rc"
}
ktap_run "read_pool out of range: EINVAL, the value kept" t_read_pool_range

# bt_start SCENARIO: badtarget misbehaving so on BT_PORT.
bt_start() {
	local log=$TEST_TMP/bt.$1.log
	"$BADTARGET" --port "$BT_PORT" --nqn "$BT_NQN" --scenario "$1" \
		>"$log" 2>&1 &
	BT_PID=$!
	badtarget_listening "$log" && return 0
	cat "$log"
	return 1
}

# bt_stop: the target exits 0 on SIGTERM; its log shown.
bt_stop() {
	local rc=0
	kill -TERM "$BT_PID"
	wait "$BT_PID" || rc=1
	BT_PID=
	sed 's/^/  /' "$TEST_TMP"/bt.*.log
	rm -f "$TEST_TMP"/bt.*.log
	return "$rc"
}

BT_OPTS="traddr=$RIG_IP4,trsvcid=$BT_PORT,nqn=$BT_NQN"

t_maxcmd_1() {
	local rc=0
	bt_start maxcmd-1 || return 1
	expect_fail "Invalid argument" \
		"target allows a queue depth of 1 \(MAXCMD 1, CAP.MQES 127\): an I/O queue needs 3" \
		"$BT_OPTS" || rc=1
	bt_stop || rc=1
	return "$rc"
}
ktap_run "target with MAXCMD 1: EINVAL, the limit logged" t_maxcmd_1

# MAXCMD 0 gives no limit: the depth is what queue_size and CAP.MQES
# allow (128), a 64 KiB write reads back.
t_maxcmd_0() {
	local rc=0 ctrl dev mark in=$TEST_TMP/maxcmd0.in out=$TEST_TMP/maxcmd0.out
	bt_start maxcmd-0 || return 1
	mark=$(kmsg_mark "maxcmd-0")
	if try "$BT_OPTS" >/dev/null; then
		ctrl=$(nvme_find_ctrl "$BT_NQN" "$TR" "$RIG_IP4")
		nvme_wait_state "$ctrl" live || rc=1
		echo "sqsize $(nvme_ctrl_attr "$ctrl" sqsize)"
		[[ $(nvme_ctrl_attr "$ctrl" sqsize) == 127 ]] || rc=1
		head -c 65536 /dev/urandom >"$in"
		dev=$(nvme_wait_ns "$ctrl") &&
			dd if="$in" of="$dev" bs=64k oflag=direct status=none &&
			dd if="$dev" of="$out" bs=64k count=1 iflag=direct \
				status=none && cmp "$in" "$out" || rc=1
		nvme_delete_ctrl "$ctrl" || rc=1
	else
		echo "refused:"
		dmesg_since "$mark" | grep -E "nvme[0-9]+: " | tail -n 5
		rc=1
	fi
	dmesg_since "$mark" |
		grep -E "MAXCMD 0|maximum outstanding commands is 0" || rc=1
	bt_stop || rc=1
	return "$rc"
}
ktap_run "target with MAXCMD 0 (no limit): works at depth 128" t_maxcmd_0

ktap_run "RDMA resources and module refs back to baseline" leak_check
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_finished
