#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian package as an admin uses it: "apt install ./nvme-xrdma-dkms_*.deb"
# (built by "make deb" at the top of the tree) must have DKMS build and
# install nvme-xrdma for the running 6.12 kernel into updates/dkms, with
# the layout guard; "nvme connect -t xrdma" must autoload that module and
# verified I/O must work; "apt remove" must leave no nvme-xrdma module
# behind, and the purge no modprobe.d file. A second installed 6.12 ABI
# (tools/setup installs one, /etc/xrdma-kver2), whose private nvme
# headers linux-source-6.12 does not hold, gets what its installation
# runs, the kernel's DKMS hook: the hook must succeed (Debian 12's dkms
# fails it, and with it the kernel's postinst, for a module it skips)
# and install for that kernel an nvme-xrdma that refuses to load.
#
# The guest's /usr is the host's, read only: /usr/src and /usr/share/doc
# get tmpfs overlays for dpkg. The module tools/vm/run installed into
# updates/ is set aside while the package is tested and put back after,
# with the module index. apt runs offline: the package's dependencies
# (dkms, linux-source-6.12, dwarves) are installed on the host by
# tools/setup. XRDMA_DKMS_DEB names the .deb (default: the one at the top
# of the tree); skips (exit 4) without one. Runtime under TCG: the DKMS
# build at "apt install", 8 to 15 min, dominates; the second ABI's
# refusal module and depmod over its module tree, and the removal, a few
# minutes each (12 to 30 min in all, 1747 s in one CI run;
# package/settings: 2700).

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

readonly TR=xrdma
readonly MOD=nvme-xrdma
readonly PKG=nvme-xrdma-dkms
KREL=$(uname -r)
readonly KREL MODTREE=/lib/modules/$KREL
KREL2=$(cat /etc/xrdma-kver2 2>/dev/null)
KREL2=${KREL2:+$KREL2+deb12-amd64}
readonly KREL2
TOP=$(cd "$DIR/../.." && pwd -P)
readonly TOP

SAVED=
MOUNTS=()

cleanup() {
	local m
	if dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null | grep -q installed; then
		echo "# cleanup: purging $PKG"
		dpkg --purge "$PKG" >/dev/null 2>&1
	fi
	modprobe -r "$MOD" 2>/dev/null
	# the module and index tools/vm/run installed
	if [[ -n $SAVED ]]; then
		cp -a "$SAVED"/updates/. "$MODTREE/updates/" 2>/dev/null
		cp -a "$SAVED"/modules.* "$MODTREE/"
	fi
	for m in "${MOUNTS[@]}"; do
		umount "$m" 2>/dev/null || umount -l "$m"
	done
}

# shellcheck disable=SC2034 # read by test_begin
TEST_CMDS="apt dpkg dkms modinfo readelf xz od"
TEST_MODULES="nvme_fabrics"
DEB=${XRDMA_DKMS_DEB:-}
if [[ -z $DEB ]]; then
	for f in "$TOP"/nvme-xrdma-dkms_*_all.deb; do
		[[ -f $f ]] && DEB=$f
	done
fi
[[ -f $DEB ]] || { ktap_print_header; ktap_exit_skip_msg \
	"no package ${DEB:-$TOP/nvme-xrdma-dkms_*_all.deb}: run make deb"; }
# before test_end, which removes $TEST_TMP (the overlays, the saved module)
trap 'nvme_delete_ctrls "$TR"; cleanup; test_end "$TR"' EXIT

test_begin 12

# dpkg writes below /usr/src and /usr/share/doc; $TEST_TMP is removed at
# the end, the overlays are gone by then
writable() {
	local d=$1 up
	up=$TEST_TMP/ovl${d//\//_}
	mkdir -p "$up/u" "$up/w"
	mount -t overlay "xrdma-dkms${d//\//_}" \
		-o "lowerdir=$d,upperdir=$up/u,workdir=$up/w" "$d" || return 1
	MOUNTS=("$d" "${MOUNTS[@]}")
}

t_setup() {
	modprobe -r "$MOD" 2>/dev/null
	writable /usr/src && writable /usr/share/doc || return 1
	SAVED=$TEST_TMP/saved
	mkdir -p "$SAVED/updates"
	cp -a "$MODTREE"/modules.* "$SAVED/" || return 1
	# no depmod (slow under TCG): the package's runs one
	find "$MODTREE/updates" -maxdepth 1 -name "$MOD.ko*" \
		-exec mv {} "$SAVED/updates/" \; -print
	[[ -z $(find "$MODTREE" -name "$MOD.ko*") ]]
}

t_install() {
	local t0 out rc
	t0=$(now_ms)
	out=$(DEBIAN_FRONTEND=noninteractive apt install -y \
		--no-install-recommends "$DEB" 2>&1)
	rc=$?
	# (dkms greps vmlinux for clang with readelf, which warns)
	grep -vE '^(Reading|Building|Selecting|\(Reading)|readelf: Warning' \
		<<<"$out" | tail -n 25
	echo "apt install: exit $rc in $((($(now_ms) - t0) / 1000)) s"
	((rc == 0)) || return 1
	dkms status "$MOD" 2>/dev/null
	dkms status "$MOD" -k "$KREL" 2>/dev/null | grep -q ": installed"
}

t_location() {
	local path
	path=$(modinfo -n "$MOD") || return 1
	echo "modinfo -n $MOD: $path"
	[[ $path == "$MODTREE/updates/dkms/$MOD.ko"* ]]
}

t_modprobe_conf() {
	local f=/etc/modprobe.d/nvme-xrdma.conf
	[[ -f $f ]] || { echo "no $f"; return 1; }
	grep -n 'transport_name=rdma' "$f"
	# installed, but nothing active: the drop-in line is commented out
	! grep -vE '^[[:space:]]*(#|$)' "$f"
}

# The kernel postinst hook of a second ABI: dpkg runs it when that kernel
# is installed or updated, with the package already in place.
t_second_abi() {
	local out rc ver log ko desc
	[[ -n $KREL2 && -e /lib/modules/$KREL2/build/include ]] || {
		echo "no second 6.12 ABI with headers (${KREL2:-none}): run tools/setup"
		return 1
	}
	writable "/lib/modules/$KREL2" || return 1
	out=$(/etc/kernel/postinst.d/dkms "$KREL2" "/boot/vmlinuz-$KREL2" 2>&1)
	rc=$?
	grep -vE 'readelf: Warning|^Sign|^Signing|^Public' <<<"$out" | tail -n 8
	echo "/etc/kernel/postinst.d/dkms $KREL2: exit $rc"
	((rc == 0)) || return 1
	dkms status "$MOD" 2>/dev/null
	dkms status "$MOD" -k "$KREL2" 2>/dev/null | grep -q ": installed" ||
		return 1
	ver=$(dpkg-query -W -f='${Version}' "$PKG") || return 1
	log=/var/lib/dkms/$MOD/$ver/$KREL2/x86_64/log/make.log
	grep "^dkms: " "$log" || { echo "no reason in $log"; return 1; }
	ko=$(find "/lib/modules/$KREL2/updates/dkms" -name "$MOD.ko*" | head -n 1)
	desc=$(modinfo -F description "$ko") || return 1
	echo "$ko: $desc"
	[[ $desc == *"not built for this kernel"* ]] || return 1
	# the running kernel's module is the transport
	desc=$(modinfo -F description "$MOD") || return 1
	echo "$(modinfo -n "$MOD"): $desc"
	[[ $desc != *"not built for this kernel"* ]]
}

t_autoload() {
	! module_loaded "$MOD" || return 1
	connect_ram "$TR" || return 1
	module_loaded "$MOD" || { echo "$MOD not loaded by the connect"; return 1; }
	# the module has no MODULE_VERSION, hence no srcversion: compare
	# the loaded module's GNU build ID with the DKMS file's
	local ko want got
	ko=$(find "$MODTREE/updates/dkms" -name "$MOD.ko*" | head -n 1)
	[[ -n $ko ]] || return 1
	case $ko in
	*.xz) xz -dc "$ko" ;;
	*.zst) zstd -dcq "$ko" ;;
	*) cat "$ko" ;;
	esac >"$TEST_TMP/dkms.ko"
	want=$(readelf -n "$TEST_TMP/dkms.ko" | awk '/Build ID:/ { print $3 }')
	got=$(od -An -tx1 -v /sys/module/nvme_xrdma/notes/.note.gnu.build-id |
		tr -d ' \n' | tail -c "${#want}")
	echo "loaded module build ID $got, $ko $want"
	[[ -n $want && $got == "$want" ]]
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

t_remove() {
	local out rc left
	out=$(DEBIAN_FRONTEND=noninteractive apt remove -y "$PKG" 2>&1)
	rc=$?
	grep -vE '^(Reading|Building|\(Reading)|readelf: Warning' <<<"$out" |
		tail -n 12
	((rc == 0)) || return 1
	left=$(find "$MODTREE" ${KREL2:+"/lib/modules/$KREL2"} /var/lib/dkms \
		-name "$MOD.ko*" 2>/dev/null)
	[[ -z $left ]] || { echo "left behind: $left"; return 1; }
	! modinfo -n "$MOD" 2>/dev/null || { echo "modinfo still finds $MOD"; return 1; }
	[[ -z $(dkms status "$MOD" 2>/dev/null) ]]
}

t_purge() {
	DEBIAN_FRONTEND=noninteractive apt purge -y "$PKG" >/dev/null 2>&1 ||
		return 1
	[[ ! -e /etc/modprobe.d/nvme-xrdma.conf ]]
}

ktap_run "the module of tools/vm/run set aside, /usr/src writable" t_setup
ktap_run "apt install ./${DEB##*/}: DKMS builds and installs" t_install
ktap_run "modinfo -n $MOD is in updates/dkms" t_location
ktap_run "/etc/modprobe.d/nvme-xrdma.conf installed, nothing active" \
	t_modprobe_conf
ktap_run "a second 6.12 ABI ($KREL2): its DKMS hook succeeds, the module refuses to load" \
	t_second_abi
ktap_run "nvme connect -t $TR autoloads the DKMS module" t_autoload
ktap_run "verified I/O over the DKMS module" t_io
ktap_run "disconnect and unload" t_disconnect
ktap_run "apt remove leaves no $MOD module behind" t_remove
ktap_run "apt purge removes the modprobe.d file" t_purge
ktap_run "RDMA resources and module refs back to baseline" leak_check
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_finished
