#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Connect options of "nvme connect -t xrdma": each accepted option is
# reflected in sysfs (core attributes and our xrdma/ group), nvme-cli's
# list, list-subsys and id-ctrl work, options that do not apply to RDMA
# are refused with EINVAL, and a duplicate connect is refused unless
# asked for. Ends with the leak and dmesg checks.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

readonly TR=xrdma
CTRL=

cleanup() {
	test_end "$TR"
}
trap cleanup EXIT

test_begin 15

# expect FILE VALUE: sysfs attribute of $CTRL equals VALUE.
expect() {
	local got
	got=$(cat "/sys/class/nvme/$CTRL/$1" 2>/dev/null)
	if [[ $got != "$2" ]]; then
		echo "$1: got '$got', expected '$2'"
		return 1
	fi
	echo "$1 = $got"
}

# expect_max_io_kb KB: the largest I/O the transport allows, as the block
# layer of $CTRL's namespace shows it.
expect_max_io_kb() {
	local dev got

	dev=$(nvme_wait_ns "$CTRL") || return 1
	got=$(cat "/sys/block/${dev##*/}/queue/max_hw_sectors_kb")
	if [[ $got != "$1" ]]; then
		echo "max_hw_sectors_kb: got '$got', expected '$1'"
		return 1
	fi
	echo "max_hw_sectors_kb = $got"
}

connect_null() {
	connect_subsys "$TR" "$RIG_NQN_NULL" "$@"
}

nvme_none_left() {
	if nvme_find_ctrl "$RIG_NQN_NULL" "$TR" >/dev/null; then
		echo "controllers left: $(nvme_find_ctrl "$RIG_NQN_NULL" "$TR")"
		return 1
	fi
}

disconnect() {
	[[ -n $CTRL ]] || return 0
	nvme_disconnect "$CTRL" || return 1
	CTRL=
}

t_defaults() {
	local rc=0
	connect_null || return 1
	expect transport xrdma || rc=1
	expect address "traddr=$RIG_IP4,trsvcid=$RIG_TRSVCID" || rc=1
	expect state live || rc=1
	# 128 by default: the target's default MQES caps it too
	expect sqsize 127 || rc=1
	expect kato 5 || rc=1
	expect xrdma/rdma_device "$RIG_RXE" || rc=1
	expect xrdma/rdma_port 1 || rc=1
	expect_max_io_kb 1024 || rc=1
	expect xrdma/inline_data_size 4096 || rc=1
	disconnect || rc=1
	return "$rc"
}

t_queue_options() {
	local rc=0
	# 1 default + 1 read + 1 poll queue, depth 64, kato 7
	connect_null -i 1 -W 1 -P 1 -Q 64 -k 7 -c 3 -l 30 || return 1
	expect queue_count 4 || rc=1
	expect sqsize 63 || rc=1
	expect kato 7 || rc=1
	expect reconnect_delay 3 || rc=1
	expect ctrl_loss_tmo 30 || rc=1
	expect xrdma/nr_default_queues 1 || rc=1
	expect xrdma/nr_read_queues 1 || rc=1
	expect xrdma/nr_poll_queues 1 || rc=1
	disconnect || rc=1
	return "$rc"
}

t_queue_size_clamp() {
	local rc=0
	# the target allows 128 unless its port says otherwise
	connect_null -Q 1024 || return 1
	expect sqsize 127 || rc=1
	dmesg_since_mark | grep -q "queue_size 1024 exceeds" || {
		echo "no log line about clamping queue_size"
		rc=1
	}
	disconnect || rc=1
	return "$rc"
}

t_more_options() {
	local rc=0
	connect_null --tos=32 --disable-sqflow --host-traddr="$RIG_IP4" ||
		return 1
	# nvme-cli 2.3 has no flag for it; the attribute is writable
	echo 5 >"/sys/class/nvme/$CTRL/fast_io_fail_tmo" || rc=1
	expect address \
		"traddr=$RIG_IP4,trsvcid=$RIG_TRSVCID,host_traddr=$RIG_IP4" ||
		rc=1
	expect fast_io_fail_tmo 5 || rc=1
	expect hostnqn "$NVME_HOSTNQN" || rc=1
	disconnect || rc=1
	return "$rc"
}

# fabrics_write OPTIONS: create a controller the way nvme-cli does, by
# writing an option string to /dev/nvme-fabrics; errors go to stdout.
# The target address is FABRICS_TRADDR, the rig's IPv4 one by default.
fabrics_write() {
	nvme_fabrics_load || return 1
	(echo "transport=$TR,traddr=${FABRICS_TRADDR:-$RIG_IP4},nqn=$RIG_NQN_NULL,hostnqn=$NVME_HOSTNQN,hostid=$NVME_HOSTID${1:+,$1}" \
		>/dev/nvme-fabrics) 2>&1
}

t_default_trsvcid() {
	local rc=0 out
	# nvme-cli fills no port for unknown transports: we default to 4420
	out=$(fabrics_write) || {
		echo "plain connect failed: $out"
		return 1
	}
	CTRL=$(nvme_find_ctrl "$RIG_NQN_NULL" "$TR" "$RIG_IP4") || return 1
	expect address "traddr=$RIG_IP4,trsvcid=4420" || rc=1
	disconnect || rc=1
	return "$rc"
}

t_ipv6() {
	local rc=0 port=6
	rig_add_ipv6_port "$port" "$RIG_NQN_NULL" || return 1
	nvme_connect "$TR" "$RIG_IP6" "$RIG_NQN_NULL" || rc=1
	CTRL=$(nvme_find_ctrl "$RIG_NQN_NULL" "$TR" "$RIG_IP6") || rc=1
	if [[ -n $CTRL ]]; then
		expect address "traddr=$RIG_IP6,trsvcid=4420" || rc=1
		disconnect || rc=1
	fi
	# host_iface picks an IPv6 source of that interface
	nvme_connect "$TR" "$RIG_IP6" "$RIG_NQN_NULL" \
		--host-iface="$RIG_NETDEV" || rc=1
	CTRL=$(nvme_find_ctrl "$RIG_NQN_NULL" "$TR" "$RIG_IP6") || rc=1
	if [[ -n $CTRL ]]; then
		expect address \
			"traddr=$RIG_IP6,trsvcid=4420,host_iface=$RIG_NETDEV" ||
			rc=1
		disconnect || rc=1
	fi
	rig_unlink "$port" "$RIG_NQN_NULL"
	rig_del_port "$port"
	return "$rc"
}

# A link-local target address with its scope (fe80::X%IFACE): nvmet
# listens on it, the connect resolves through that interface,
# and sysfs gives the address back as it was written.
t_ipv6_scope() {
	local rc=0 port=7 ll out
	ll=$(ip -6 -o addr show dev "$RIG_NETDEV" scope link |
		awk '{ sub("/.*", "", $4); print $4; exit }')
	if [[ -z $ll ]]; then
		echo "$RIG_NETDEV has no link-local address"
		ip -6 addr show dev "$RIG_NETDEV"
		return 1
	fi
	ll+=%$RIG_NETDEV
	rig_add_port "$port" ipv6 "$ll" 4420 &&
		rig_link "$port" "$RIG_NQN_NULL" || rc=1
	if ((rc == 0)); then
		out=$(FABRICS_TRADDR=$ll fabrics_write trsvcid=4420) || {
			echo "connect to $ll failed: $out"
			rc=1
		}
	fi
	CTRL=$(nvme_find_ctrl "$RIG_NQN_NULL" "$TR" "$ll") || rc=1
	if [[ -n $CTRL ]]; then
		expect address "traddr=$ll,trsvcid=4420" || rc=1
		expect state live || rc=1
		disconnect || rc=1
	fi
	rig_unlink "$port" "$RIG_NQN_NULL"
	rig_del_port "$port"
	return "$rc"
}

t_nvme_cli() {
	local rc=0 dev
	connect_null || return 1
	dev=$(nvme_wait_ns "$CTRL") || rc=1
	nvme list | grep -q "${dev:-none}" || {
		echo "nvme list does not show $dev"
		rc=1
	}
	nvme list-subsys | grep -q "$TR traddr=$RIG_IP4" || {
		echo "nvme list-subsys does not show the $TR path"
		nvme list-subsys
		rc=1
	}
	nvme id-ctrl "/dev/$CTRL" | grep -q "^subnqn *: $RIG_NQN_NULL" || {
		echo "nvme id-ctrl failed"
		rc=1
	}
	disconnect || rc=1
	return "$rc"
}

t_duplicate() {
	local rc=0 out n
	# nvme-cli 2.3 refuses on its own; ask the kernel directly
	out=$(fabrics_write) || return 1
	out=$(fabrics_write) && {
		echo "second connect without duplicate_connect succeeded"
		rc=1
	}
	[[ $out == *"Operation already in progress"* ]] || {
		echo "expected EALREADY, got: $out"
		rc=1
	}
	dmesg_since_mark | grep -q 'already connected to' || {
		echo "no log line for the duplicate"
		rc=1
	}
	fabrics_write duplicate_connect || rc=1
	n=$(nvme_find_ctrl "$RIG_NQN_NULL" "$TR" | wc -l)
	[[ $n == 2 ]] || {
		echo "expected 2 controllers, found $n"
		rc=1
	}
	nvme_delete_ctrls "$TR"
	CTRL=
	return "$rc"
}

t_ack_timeout() {
	local rc=0 par=/sys/module/nvme_xrdma/parameters
	connect_null || return 1
	# what the RDMA device says the connection got
	# ack_timeout 0: rdma_cm's choice, a timer in any case
	(($(cat "/sys/class/nvme/$CTRL/xrdma/qp_ack_timeout") > 0)) || {
		echo "no ACK timer on the QP"
		rc=1
	}
	echo "xrdma/qp_ack_timeout = $(cat "/sys/class/nvme/$CTRL/xrdma/qp_ack_timeout") (rdma_cm's)"
	expect xrdma/qp_retry_count 7 || rc=1
	disconnect || rc=1
	echo 12 >"$par/ack_timeout" && echo 3 >"$par/retry_count" || rc=1
	if connect_null; then
		expect xrdma/qp_ack_timeout 12 || rc=1
		expect xrdma/qp_retry_count 3 || rc=1
		disconnect || rc=1
	else
		rc=1
	fi
	echo 0 >"$par/ack_timeout"
	echo 7 >"$par/retry_count"
	return "$rc"
}

# fails_with OPTIONS ERRNO-TEXT LOG: a connect with OPTIONS fails with that
# error and leaves the LOG pattern in dmesg.
fails_with() {
	local out
	if out=$(fabrics_write "$1"); then
		echo "'$1' was accepted"
		nvme_delete_ctrls "$TR"
		return 1
	fi
	if [[ $out != *"$2"* ]]; then
		echo "'$1': expected '$2', got: $out"
		return 1
	fi
	if ! dmesg_since_mark | grep -q "$3"; then
		echo "'$1': no log line '$3'"
		return 1
	fi
	echo "'$1' refused: $2"
}

t_host_iface() {
	local rc=0 out
	out=$(fabrics_write "host_iface=$RIG_NETDEV") || {
		echo "connect with host_iface=$RIG_NETDEV failed: $out"
		return 1
	}
	CTRL=$(nvme_find_ctrl "$RIG_NQN_NULL" "$TR" "$RIG_IP4") || return 1
	expect address \
		"traddr=$RIG_IP4,trsvcid=4420,host_iface=$RIG_NETDEV" || rc=1
	expect state live || rc=1
	disconnect || rc=1
	# lo has no address the target can be reached from through lo
	fails_with "host_iface=lo" "Network is unreachable" \
		"not through host_iface lo" || rc=1
	fails_with "host_iface=xrdma-nosuch" "No such device" \
		"host_iface xrdma-nosuch: no such interface" || rc=1
	# host_traddr chooses the source, host_iface must still be the way
	fails_with "host_traddr=$RIG_IP4,host_iface=lo" \
		"Network is unreachable" "not through host_iface lo" || rc=1
	return "$rc"
}

# refused OPTIONS...: writing them to /dev/nvme-fabrics fails with EINVAL.
refused() {
	local out
	if out=$(fabrics_write "$1"); then
		echo "'$1' was accepted"
		nvme_delete_ctrls "$TR"
		return 1
	fi
	if [[ $out != *"Invalid argument"* ]]; then
		echo "'$1' was not refused with EINVAL: $out"
		return 1
	fi
	echo "'$1' refused: EINVAL"
}

t_refused() {
	local rc=0
	nvme_fabrics_load || return 1
	refused "hdr_digest" || rc=1
	refused "data_digest" || rc=1
	refused "traddr=not-an-address" || rc=1
	refused "queue_size=8" || rc=1
	refused "nr_io_queues=0" || rc=1
	dmesg_since_mark | grep -q 'invalid traddr' || {
		echo "no log line for the bad address"
		rc=1
	}
	return "$rc"
}

ktap_run "defaults reflected in sysfs" t_defaults
ktap_run "nr_io/write/poll_queues, queue_size, kato, reconnect_delay, ctrl_loss_tmo" t_queue_options
ktap_run "queue_size clamped to the controller's limit, with a log line" t_queue_size_clamp
ktap_run "tos, disable_sqflow, host_traddr, fast_io_fail_tmo" t_more_options
ktap_run "trsvcid defaults to 4420" t_default_trsvcid
ktap_run "IPv6 target address" t_ipv6
ktap_run "IPv6 link-local target address with a scope" t_ipv6_scope
ktap_run "nvme list, list-subsys, id-ctrl" t_nvme_cli
ktap_run "duplicate connect refused unless duplicate_connect" t_duplicate
ktap_run "ack_timeout and retry_count reach the QP" t_ack_timeout
ktap_run "host_iface picks the source interface; a wrong one is refused" t_host_iface
ktap_run "options that do not apply are refused" t_refused
ktap_run "no controller left" nvme_none_left
ktap_run "RDMA resources and module refs back to baseline" leak_check
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_finished
