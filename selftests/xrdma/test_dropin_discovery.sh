#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Discovery and autoconnect in drop-in mode, as a user of Debian 12's
# nvme-cli runs them: nvme-xrdma loaded with transport_name=rdma,
# nvme-rdma not loaded, nvme-cli without host NQN options (it reads
# /etc/nvme, here a tmpfs over it with the test's hostnqn and hostid,
# removed at the end; the host's /etc/nvme is never written).
#   - nvme discover -t rdma lists the rig's subsystems, the discovery
#     controller being xrdma's ("via rdma" in its "new ctrl" line);
#   - nvme connect-all -t rdma, and nvme connect-all without arguments
#     from /etc/nvme/discovery.conf, create one controller per subsystem,
#     each with transport "rdma" and xrdma's sysfs group xrdma/, with
#     verified I/O on the RAM namespace;
#   - nvme connect-all --persistent leaves a discovery controller over
#     xrdma; a subsystem linked to the port on the target makes it send a
#     discovery-log-change AEN and the kernel the uevent
#     NVME_AEN=0x70f002 with NVME_TRTYPE=rdma, NVME_TRADDR, NVME_TRSVCID,
#     within XRDMA_AEN_BOUND seconds (default 10; captured with
#     "udevadm monitor --kernel --property");
#   - the udev rule and the unit nvme-cli ships (70-nvmf-autoconnect.rules,
#     nvmf-connect@.service, found with dpkg -L nvme-cli and read when the
#     test runs) then create the new subsystem's controller over xrdma,
#     without duplicating the others; and after a reset of the discovery
#     controller its NVME_EVENT=rediscover uevent does the same.
# The guest runs neither udevd nor systemd (tools/vm/init is PID 1), so
# both are EMULATED (lib/autoconnect.sh): the rules file is evaluated for
# the captured uevent's properties, its RUN line ("systemctl start
# nvmf-connect@....service") is turned into the unit's ExecStart= with
# systemd's name mangling, specifiers and variables, and that is run in
# the foreground. The modules loaded at the start are loaded again at the
# end; module references, RDMA resources and dmesg are then checked.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"
# shellcheck source=../lib/dropin.sh
. "$DIR/../lib/dropin.sh"
# shellcheck source=../lib/autoconnect.sh
. "$DIR/../lib/autoconnect.sh"

readonly DISC_NQN=nqn.2014-08.org.nvmexpress.discovery
readonly NEW_NQN=nqn.2026-11.io.xrdma:added
readonly NEW_NULLB=xrdma_added
readonly ETC_NVME=/etc/nvme
# NVME_AEN of a discovery log change: log page 0x70, notice 0xf0, type 2
readonly AEN_DISC_CHANGE=0x70f002
AEN_BOUND=${XRDMA_AEN_BOUND:-10}

CTRL=
DEV=
DC=
DC_PATH=
ETC_MOUNTED=0
ETC_MADE=0
UEVENTS=
AEN_PROPS=
RULES=

cleanup() {
	uev_stop
	nvme_delete_ctrls rdma xrdma >/dev/null 2>&1
	rig_del_subsys "$NEW_NQN" >/dev/null 2>&1
	rig_del_nullb "$NEW_NULLB" >/dev/null 2>&1
	etc_restore >/dev/null 2>&1
	((DROPIN_RESTORED)) || dropin_restore >/dev/null 2>&1
	test_end xrdma rdma
}
trap cleanup EXIT

TEST_CMDS="udevadm stdbuf systemd-escape dpkg env timeout mount umount findmnt dd"
TEST_MODULES="nvme_xrdma"
test_begin 13

# ---------------------------------------------------------------- helpers

# rdma_ctrls NQN: the controllers of NQN with transport "rdma".
rdma_ctrls() {
	nvme_find_ctrl "$1" rdma "$RIG_IP4"
}

# dropin_ctrls NQN...: each NQN has exactly one controller, live, with
# transport "rdma" and xrdma's sysfs group; nvme-rdma is not loaded.
dropin_ctrls() {
	local nqn c n rc=0
	for nqn in "$@"; do
		c=$(rdma_ctrls "$nqn")
		n=$(grep -c . <<<"$c")
		if ((n != 1)); then
			echo "$nqn: $n rdma controllers${c:+ (${c//$'\n'/ })}"
			rc=1
			continue
		fi
		nvme_wait_state "$c" live || rc=1
		if [[ ! -d /sys/class/nvme/$c/xrdma ]]; then
			echo "$nqn: $c has no xrdma/ group: not xrdma's"
			rc=1
			continue
		fi
		echo "$nqn: $c, transport $(nvme_ctrl_attr "$c" transport)," \
			"xrdma on $(nvme_ctrl_attr "$c" xrdma/rdma_device)"
	done
	if module_loaded "$RMOD"; then
		echo "$RMOD is loaded"
		rc=1
	fi
	return "$rc"
}

# all_rdma_ctrls: every controller with transport "rdma".
all_rdma_ctrls() {
	local d
	for d in /sys/class/nvme/nvme*; do
		[[ $(nvme_ctrl_attr "${d##*/}" transport) == rdma ]] &&
			echo "${d##*/}"
	done
	return 0
}

disconnect_rdma() {
	local c rc=0
	for c in $(all_rdma_ctrls); do
		nvme_disconnect "$c" >/dev/null || rc=1
	done
	return "$rc"
}

# no_rdma_ctrls: nothing left over from an earlier step.
no_rdma_ctrls() {
	local c found=0
	for c in $(all_rdma_ctrls); do
		echo "controller $c ($(nvme_ctrl_attr "$c" subsysnqn)) left over"
		found=1
	done
	return "$found"
}

no_disc_ctrl() {
	! rdma_ctrls "$DISC_NQN" >/dev/null
}

etc_restore() {
	if ((ETC_MOUNTED)); then
		umount "$ETC_NVME" || return 1
		ETC_MOUNTED=0
	fi
	if ((ETC_MADE)); then
		rmdir "$ETC_NVME" || return 1
		ETC_MADE=0
	fi
}

# nvme_cli ARGS...: nvme-cli as a user types it, the command shown.
nvme_cli() {
	echo "nvme $*"
	nvme "$@"
}

# ---------------------------------------------------------------- subtests

t_dropin() {
	dropin_save || return 1
	dropin_load || return 1
	! module_loaded "$RMOD"
}

t_etc_nvme() {
	if [[ ! -d $ETC_NVME ]]; then
		mkdir "$ETC_NVME" || return 1
		ETC_MADE=1
	fi
	mount -t tmpfs -o mode=0755,size=1m xrdma-etc-nvme "$ETC_NVME" ||
		return 1
	ETC_MOUNTED=1
	echo "$NVME_HOSTNQN" >"$ETC_NVME/hostnqn" &&
		echo "$NVME_HOSTID" >"$ETC_NVME/hostid" || return 1
	findmnt -n "$ETC_NVME"
	ls -l "$ETC_NVME"
}

t_discover() {
	local out nqn rc=0 line
	no_rdma_ctrls || return 1
	log_mark
	out=$(nvme_cli discover -t rdma -a "$RIG_IP4" -s "$RIG_TRSVCID" 2>&1)
	rc=$?
	for nqn in "$RIG_NQN_NULL" "$RIG_NQN_RAM"; do
		grep -q "subnqn: *$nqn\$" <<<"$out" || {
			echo "$nqn missing from the discovery log"
			rc=1
		}
	done
	((rc)) && echo "$out"
	line=$(log_has "new ctrl: NQN \"$DISC_NQN\", addr $RIG_IP4:$RIG_TRSVCID") ||
		rc=1
	echo "$line"
	[[ $line == *"via rdma" ]] || {
		echo "the discovery controller was not xrdma's (no \"via rdma\")"
		rc=1
	}
	wait_for 10 no_disc_ctrl || {
		echo "discovery controller left behind"
		rc=1
	}
	module_loaded "$RMOD" && {
		echo "$RMOD got loaded"
		rc=1
	}
	return "$rc"
}

t_connect_all() {
	local rc=0 c
	no_rdma_ctrls || return 1
	nvme_cli connect-all -t rdma -a "$RIG_IP4" -s "$RIG_TRSVCID" || rc=1
	dropin_ctrls "$RIG_NQN_NULL" "$RIG_NQN_RAM" || rc=1
	c=$(rdma_ctrls "$RIG_NQN_RAM" | head -n 1)
	if [[ -n $c ]]; then
		DEV=$(nvme_wait_ns "$c") &&
			fio_verify connect-all --rw=randwrite --bs=4k --iodepth=16 \
				--size=4M || rc=1
	fi
	wait_for 10 no_disc_ctrl || {
		echo "discovery controller left behind"
		rc=1
	}
	disconnect_rdma || rc=1
	return "$rc"
}

t_conf() {
	local rc=0
	no_rdma_ctrls || return 1
	echo "--transport=rdma --traddr=$RIG_IP4 --trsvcid=$RIG_TRSVCID" \
		>"$ETC_NVME/discovery.conf" || return 1
	echo "$ETC_NVME/discovery.conf: $(<"$ETC_NVME/discovery.conf")"
	nvme_cli connect-all || rc=1
	dropin_ctrls "$RIG_NQN_NULL" "$RIG_NQN_RAM" || rc=1
	wait_for 10 no_disc_ctrl || {
		echo "discovery controller left behind"
		rc=1
	}
	disconnect_rdma || rc=1
	rm -f "$ETC_NVME/discovery.conf"
	return "$rc"
}

t_persistent() {
	local rc=0
	no_rdma_ctrls || return 1
	nvme_cli connect-all -t rdma -a "$RIG_IP4" -s "$RIG_TRSVCID" \
		--persistent || rc=1
	dropin_ctrls "$RIG_NQN_NULL" "$RIG_NQN_RAM" "$DISC_NQN" || return 1
	DC=$(rdma_ctrls "$DISC_NQN")
	# the uevents' DEVPATH (udevadm shows DEVNAME as /dev/...)
	DC_PATH=$(readlink -f "/sys/class/nvme/$DC")
	DC_PATH=${DC_PATH#/sys}
	echo "persistent discovery controller $DC: kato" \
		"$(nvme_ctrl_attr "$DC" kato), cntrltype" \
		"$(nvme_ctrl_attr "$DC" cntrltype)"
	return "$rc"
}

# The new subsystem exists before the test links it to the port: only
# the link changes the port's discovery log.
t_aen() {
	local t0 ms rc=0 kv
	ktap_require DC "no persistent discovery controller" || return
	UEVENTS=$TEST_TMP/uevents
	uev_start "$UEVENTS"
	uev_sync "$DC" "$UEVENTS" || return 1
	rig_add_nullb "$NEW_NULLB" 32 1 &&
		rig_add_subsys "$NEW_NQN" "/dev/$NEW_NULLB" || return 1
	t0=$(now_ms)
	rig_link "$RIG_PORT" "$NEW_NQN" || return 1
	if ! wait_for "$AEN_BOUND" uev_find "$UEVENTS" "DEVPATH=$DC_PATH" \
		"NVME_AEN=$AEN_DISC_CHANGE" >"$TEST_TMP/aen.props"; then
		echo "no NVME_AEN=$AEN_DISC_CHANGE uevent on $DC within $AEN_BOUND s; captured:"
		cat "$UEVENTS"
		return 1
	fi
	ms=$(($(now_ms) - t0))
	AEN_PROPS=$TEST_TMP/aen.props
	echo "uevent on $DC $ms ms after the link (polled):"
	cat "$AEN_PROPS"
	for kv in NVME_TRTYPE=rdma "NVME_TRADDR=$RIG_IP4" \
		"NVME_TRSVCID=$RIG_TRSVCID"; do
		grep -qxF "$kv" "$AEN_PROPS" || {
			echo "the uevent lacks $kv"
			rc=1
		}
	done
	return "$rc"
}

# run_rule PROPS: the udev rule and the unit for the uevent in PROPS.
run_rule() {
	local runs n line rc=0
	runs=$(udev_eval "$RULES" "$1") || return 1
	n=$(grep -c . <<<"$runs")
	echo "udev (emulated): $RULES: $n RUN"
	((n == 1)) || {
		echo "$runs"
		return 1
	}
	while IFS= read -r line; do
		echo "udev (emulated): RUN $line"
		systemctl_run "$line" || rc=1
	done <<<"$runs"
	return "$rc"
}

t_rule_aen() {
	local runs dev rc=0
	ktap_require AEN_PROPS "no AEN uevent captured" || return
	RULES=$(pkg_file nvme-cli '/rules\.d/[^/]*nvmf-autoconnect\.rules$') || {
		echo "$RULES"
		return 1
	}
	# The rules match only what they should: not the synthetic event.
	uev_find "$UEVENTS" "SYNTH_UUID=$UEV_SYNC_UUID" >"$TEST_TMP/synth.props" ||
		return 1
	runs=$(udev_eval "$RULES" "$TEST_TMP/synth.props") || return 1
	if [[ -n $runs ]]; then
		echo "the rules RUN for a synthetic change event: $runs"
		return 1
	fi
	run_rule "$AEN_PROPS" || rc=1
	dropin_ctrls "$RIG_NQN_NULL" "$RIG_NQN_RAM" "$NEW_NQN" "$DISC_NQN" ||
		return 1
	[[ $(rdma_ctrls "$DISC_NQN") == "$DC" ]] || rc=1
	dev=$(nvme_wait_ns "$(rdma_ctrls "$NEW_NQN")") &&
		dd if="$dev" of=/dev/null bs=4k count=16 iflag=direct status=none ||
		rc=1
	return "$rc"
}

t_rule_rediscover() {
	local c
	ktap_require RULES "no rules file" || return
	c=$(rdma_ctrls "$NEW_NQN") || return 1
	nvme_disconnect "$c" || return 1
	echo 1 >"/sys/class/nvme/$DC/reset_controller" || return 1
	if ! wait_for 60 uev_find "$UEVENTS" "DEVPATH=$DC_PATH" \
		NVME_EVENT=rediscover >"$TEST_TMP/rediscover.props"; then
		echo "no NVME_EVENT=rediscover uevent on $DC within 60 s"
		tail -n 40 "$UEVENTS"
		return 1
	fi
	cat "$TEST_TMP/rediscover.props"
	nvme_wait_state "$DC" live || return 1
	run_rule "$TEST_TMP/rediscover.props" || return 1
	dropin_ctrls "$RIG_NQN_NULL" "$RIG_NQN_RAM" "$NEW_NQN" "$DISC_NQN"
}

t_cleanup() {
	local rc=0
	uev_stop
	disconnect_rdma || rc=1
	no_rdma_ctrls || rc=1
	rig_del_subsys "$NEW_NQN" || rc=1
	rig_del_nullb "$NEW_NULLB" || rc=1
	etc_restore || rc=1
	if findmnt -n "$ETC_NVME" >/dev/null; then
		echo "$ETC_NVME is still mounted"
		rc=1
	fi
	return "$rc"
}

ktap_run "drop-in mode: $XMOD transport_name=rdma, $RMOD not loaded" t_dropin
ktap_run "$ETC_NVME on a tmpfs with the test's hostnqn and hostid" t_etc_nvme
ktap_run "nvme discover -t rdma lists the subsystems, over xrdma" t_discover
ktap_run "nvme connect-all -t rdma: a controller per subsystem over xrdma" t_connect_all
ktap_run "nvme connect-all from $ETC_NVME/discovery.conf does the same" t_conf
ktap_run "nvme connect-all --persistent: discovery controller over xrdma" t_persistent
ktap_run "subsystem added: discovery log change AEN uevent within $AEN_BOUND s" t_aen
ktap_run "nvmf-autoconnect rule + nvmf-connect@.service (emulated) connect it" t_rule_aen
ktap_run "discovery controller reset: rediscover uevent, rule + unit reconnect" t_rule_rediscover
ktap_run "all disconnected, subsystem removed, $ETC_NVME unmounted" t_cleanup
ktap_run "modules loaded at the start loaded again" dropin_restore
ktap_run "RDMA resources and module refs back to baseline" leak_check
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_finished
