#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "nvme connect -t xrdma" reaches our module: with nvme-xrdma not loaded,
# fabrics must autoload it (request_module("nvme-xrdma")) and find the
# registered "xrdma" transport, i.e. dmesg must not say "no handler found
# for transport xrdma". The connect itself may succeed (then the
# controller must go live and disconnect) or fail with a clear error
# while the transport is incomplete; a failed connect skips the
# live/disconnect subtests. The module must unload afterwards (no
# controller or reference left), RDMA resources must be back at the
# snapshot and dmesg clean.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

readonly TR=xrdma
readonly MOD=nvme-xrdma
readonly NQN=$RIG_NQN_RAM

CTRL=
CONNECT_RC=
CONNECT_OUT=

trap 'test_end "$TR"' EXIT

# /dev/nvme-fabrics must exist for nvme-cli; test_begin loads nvme-fabrics,
# which does not load any transport.
TEST_MODULES="nvme_fabrics $MOD"
test_begin 9

t_not_loaded() {
	if module_loaded "$MOD"; then
		echo "$MOD already loaded, removing it"
		modprobe -r "$MOD" || return 1
	fi
	! module_loaded "$MOD"
}

t_connect() {
	CONNECT_OUT=$(nvme_connect "$TR" "$RIG_IP4" "$NQN" 2>&1)
	CONNECT_RC=$?
	echo "$CONNECT_OUT"
	echo "nvme connect exit status $CONNECT_RC"
	# The assertion of this subtest: the transport was found.
	if dmesg_since_mark | grep -F "no handler found for transport"; then
		return 1
	fi
	return 0
}

t_autoloaded() {
	module_loaded "$MOD" || {
		echo "$MOD was not loaded by the connect"
		return 1
	}
	echo "$MOD loaded, refcnt $(module_refcnt "$MOD")"
}

t_outcome() {
	if ((CONNECT_RC == 0)); then
		CTRL=$(nvme_find_ctrl "$NQN" "$TR" "$RIG_IP4") || {
			echo "connect said success but there is no $TR controller"
			return 1
		}
		echo "connected: $CTRL"
		return 0
	fi
	# A failure must say why: nvme-cli prints the errno text.
	local msg
	msg=$(grep -v '^nvme connect' <<<"$CONNECT_OUT" | grep -E '[[:alpha:]]')
	if [[ -z $msg ]]; then
		echo "connect failed (exit $CONNECT_RC) without an error message"
		return 1
	fi
	echo "connect failed with: $msg"
	dmesg_since_mark | grep -iE 'nvme|xrdma' | tail -n 5
	return 0
}

t_live() {
	ktap_require CTRL "connect failed (exit ${CONNECT_RC:-?})" || return
	echo "$CTRL address: $(nvme_ctrl_attr "$CTRL" address)"
	nvme_wait_state "$CTRL" live
}

t_disconnect() {
	ktap_require CTRL "connect failed (exit ${CONNECT_RC:-?})" || return
	nvme_disconnect "$CTRL" || return 1
	CTRL=
}

t_unload() {
	local r
	r=$(module_refcnt "$MOD")
	echo "refcnt $r"
	modprobe -r "$MOD" || return 1
	! module_loaded "$MOD"
}

ktap_run "$MOD not loaded before the connect" t_not_loaded
ktap_run "nvme connect -t $TR finds a transport handler" t_connect
ktap_run "$MOD was autoloaded by the connect" t_autoloaded
ktap_run "connect succeeded or failed with a clear error" t_outcome
ktap_run "controller over $TR goes live" t_live
ktap_run "nvme disconnect" t_disconnect
ktap_run "$MOD unloads afterwards" t_unload
ktap_run "RDMA resources and module refs back to baseline" leak_check
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_finished
