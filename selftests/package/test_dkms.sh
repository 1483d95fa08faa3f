#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The guest's half of the package test. package/host_dkms.sh, on the
# machine, installed the Debian package with apt in a throw-away root (the
# DKMS builds, the second ABI's refusing module, apt remove and purge, all
# checked there, at native speed) and kept, from before the removal, the
# nvme-xrdma DKMS installed for the pinned kernel, the module index its
# depmod wrote, the modprobe.d file and the module's GNU build ID in the
# directory XRDMA_DKMS_STATE names. Here, in a guest running that kernel,
# they are put in place as the package left them: "modinfo -n" must find
# the module in updates/dkms, "nvme connect -t xrdma" must autoload it
# (the loaded module's build ID is the one the host half recorded), it
# must have no test hooks (no fault/ or delay/ in debugfs, no test_hooks
# or no_remote_inv parameter: the package builds the production
# flavour), verified I/O
# must work, and the module must unload.
#
# tools/vm/selftests runs both halves (make check; alone:
# tools/vm/selftests --package), this one in a guest booted with no module
# of the tree (tools/vm/run --no-ko); any nvme-xrdma of the tree is set
# aside all the same. Skips (exit 4) without XRDMA_DKMS_STATE. About a
# minute under TCG.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

readonly TR=xrdma
readonly MOD=nvme-xrdma
readonly CONF=/etc/modprobe.d/nvme-xrdma.conf
# what run_selftests.sh writes for a module with test hooks
readonly TEST_CONF=/etc/modprobe.d/xrdma-selftests.conf
readonly DBG=/sys/kernel/debug/nvme-xrdma
KREL=$(uname -r)
readonly KREL MODTREE=/lib/modules/$KREL
readonly STATE=${XRDMA_DKMS_STATE:-}

SAVED=
PLACED=

cleanup() {
	modprobe -r "$MOD" 2>/dev/null
	# what was there before, back in place
	if [[ -n $PLACED ]]; then
		rm -f "$MODTREE/updates/dkms/$MOD.ko"* "$CONF"
	fi
	if [[ -n $SAVED ]]; then
		cp -a "$SAVED"/modules.* "$MODTREE/"
		cp -a "$SAVED"/updates/. "$MODTREE/updates/" 2>/dev/null
		[[ ! -f $SAVED/${TEST_CONF##*/} ]] ||
			cp -a "$SAVED/${TEST_CONF##*/}" "$TEST_CONF"
	fi
}

# shellcheck disable=SC2034 # read by test_begin
TEST_CMDS="modinfo readelf xz od"
# shellcheck disable=SC2034
TEST_MODULES="nvme_fabrics"
[[ -n $STATE ]] || { ktap_print_header; ktap_exit_skip_msg \
	"no XRDMA_DKMS_STATE: the host half (package/host_dkms.sh) did not run; tools/vm/selftests --package runs both"; }
# before test_end, which removes $TEST_TMP (the saved index)
trap 'nvme_delete_ctrls "$TR"; cleanup; test_end "$TR"' EXIT

test_begin 8

t_setup() {
	local want
	want=$(cat "$STATE/krel" 2>/dev/null)
	[[ $want == "$KREL" ]] || {
		echo "the host half built for '${want:-nothing}', this guest runs $KREL"
		return 1
	}
	[[ -s $STATE/build-id && -d $STATE/lib/modules/$KREL/updates/dkms ]] || {
		echo "no DKMS module in $STATE (the host half failed)"
		return 1
	}
	modprobe -r "$MOD" 2>/dev/null
	! module_loaded "$MOD" || { echo "$MOD is loaded and stays"; return 1; }
	SAVED=$TEST_TMP/saved
	mkdir -p "$SAVED/updates"
	cp -a "$MODTREE"/modules.* "$SAVED/" || return 1
	mkdir -p "$MODTREE/updates" || return 1
	# a module tools/vm/run installed, not in the DKMS index anyway
	find "$MODTREE/updates" -maxdepth 1 -name "$MOD.ko*" \
		-exec mv {} "$SAVED/updates/" \; -print
	# the module loads with the options the package leaves, none of
	# the test guest's
	if [[ -f $TEST_CONF ]]; then
		mv "$TEST_CONF" "$SAVED/" || return 1
		echo "set aside $TEST_CONF"
	fi
	PLACED=1
	cp -a "$STATE/lib/modules/$KREL/updates/dkms" "$MODTREE/updates/" &&
		cp -a "$STATE/lib/modules/$KREL"/modules.* "$MODTREE/" &&
		cp -a "$STATE/${CONF##*/}" "$CONF" || return 1
	find "$MODTREE/updates" -name "$MOD.ko*"
}

t_location() {
	local path
	path=$(modinfo -n "$MOD") || return 1
	echo "modinfo -n $MOD: $path"
	[[ $path == "$MODTREE/updates/dkms/$MOD.ko"* ]]
}

t_autoload() {
	! module_loaded "$MOD" || return 1
	connect_ram "$TR" || return 1
	module_loaded "$MOD" || { echo "$MOD not loaded by the connect"; return 1; }
	# the module has no MODULE_VERSION, hence no srcversion: compare
	# the loaded module's GNU build ID with the one of the file DKMS
	# installed, as the host half read it, and with the file here
	local ko want file got
	want=$(cat "$STATE/build-id")
	ko=$(modinfo -n "$MOD") || return 1
	case $ko in
	*.xz) xz -dc "$ko" ;;
	*.zst) zstd -dcq "$ko" ;;
	*) cat "$ko" ;;
	esac >"$TEST_TMP/dkms.ko"
	file=$(readelf -n "$TEST_TMP/dkms.ko" | awk '/Build ID:/ { print $3 }')
	got=$(od -An -tx1 -v /sys/module/nvme_xrdma/notes/.note.gnu.build-id |
		tr -d ' \n' | tail -c "${#want}")
	echo "loaded module build ID $got, $ko $file, DKMS on the host $want"
	[[ -n $want && $got == "$want" && $file == "$want" ]]
}

# The package builds the production flavour: the loaded module has
# its debugfs directory and the controller's, but no fault/ and no
# delay/ in them, and no test_hooks or no_remote_inv parameter.
t_no_hooks() {
	ktap_require CTRL "no controller" || return
	local f bad=0
	[[ -d $DBG/$CTRL ]] || { echo "no $DBG/$CTRL"; return 1; }
	for f in "$DBG" "$DBG/$CTRL"; do
		echo "$f: $(find "$f" -mindepth 1 -maxdepth 1 -printf '%f ')"
	done
	for f in "$DBG/delay" "$DBG/$CTRL/fault" \
		/sys/module/nvme_xrdma/parameters/{test_hooks,no_remote_inv}; do
		[[ ! -e $f ]] || { echo "test hook present: $f"; bad=1; }
	done
	((!bad))
}

t_io() {
	ktap_require CTRL "no controller" || return
	fio_verify dkms --size=4M --bs=64k --rw=randwrite
}

t_disconnect() {
	ktap_require CTRL "no controller" || return
	nvme_disconnect "$CTRL" || return 1
	CTRL=
	modprobe -r "$MOD" && ! module_loaded "$MOD"
}

ktap_run "the DKMS module of the host half and its module index in place" t_setup
ktap_run "modinfo -n $MOD is in updates/dkms" t_location
ktap_run "nvme connect -t $TR autoloads the DKMS module" t_autoload
ktap_run "the DKMS module has no test hooks: no fault/ or delay/ in debugfs, no test_hooks or no_remote_inv parameter" \
	t_no_hooks
ktap_run "verified I/O over the DKMS module" t_io
ktap_run "disconnect and unload" t_disconnect
ktap_run "RDMA resources and module refs back to baseline" leak_check
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_finished
