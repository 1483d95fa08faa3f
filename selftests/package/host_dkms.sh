#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The machine's half of the package test (package/test_dkms.sh is the
# guest's): what an admin runs, "apt install ./nvme-xrdma-dkms_*.deb"
# (built by "make deb" at the top of the tree), then "apt remove" and
# "apt purge", at native speed in a throw-away root on this machine: an
# overlay of / (its upper layer on a tmpfs) in a private mount namespace,
# chrooted into, with /proc, a read-only /sys and /dev. In that root,
# "uname -r" says the pinned kernel (a wrapper in place of /usr/bin/uname)
# so that the package's postinst builds for that kernel alone, as on a
# machine that runs it (in a chroot it would build for every kernel).
#
# DKMS must build and install nvme-xrdma for the pinned kernel into
# updates/dkms, with the layout guard, without the test hooks (no fault
# or delay symbol, no test_hooks or no_remote_inv parameter: the
# production flavour), and
# install the modprobe.d file with nothing active. A second installed 6.12 ABI (tools/setup,
# /etc/xrdma-kver2), whose private nvme headers linux-source-6.12 does not
# hold, gets what its installation runs, the kernel's DKMS hook: the hook
# must succeed (Debian 12's dkms fails it, and with it the kernel's
# postinst, for a module it skips) and install for that kernel an
# nvme-xrdma that refuses to load and says why, naming linux-source-6.12.
# Debian 12's 6.1 (headers and image from tools/setup: its XRDMA_K61,
# else the newest 6.1 with headers) gets the transport from its DKMS
# hook, a 6.1 module (vermagic), the private headers taken from
# linux-source-6.1 and the layout checked against the BTF of its
# nvme-core (the base from /boot/vmlinuz: its headers have no vmlinux);
# with linux-source-6.1 removed, a module that refuses to load and names
# linux-source-6.1 (a root without a 6.1 kernel, the trixie one, skips
# those two). "apt remove" must leave no nvme-xrdma module behind, the
# purge no modprobe.d file; and nothing of it may reach the machine's own
# root file system: its module trees, /var/lib/dkms, /usr/src,
# /etc/modprobe.d and dpkg's status are compared with what they were
# before, and no mount of ours may show outside the namespace.
#
# Before the removal, the module DKMS installed for the pinned kernel,
# the module index its depmod wrote and the modprobe.d file are copied to
# STATEDIR, with the module's GNU build ID: the guest's half
# (XRDMA_DKMS_STATE=STATEDIR) puts them in place, has
# "nvme connect -t xrdma" autoload that module and does verified I/O.
# tools/vm/selftests runs both halves (make check; alone:
# tools/vm/selftests --package). The 6.1 module is kept the same way in
# STATEDIR/k61, for package/test_dkms.sh in a guest booted with 6.1.
#
#   selftests/package/host_dkms.sh STATEDIR
#
# XRDMA_DKMS_ROOT=DIR makes the throw-away root an overlay of DIR instead
# of /: the Debian 13 root of tools/vm/trixie-root (make
# check-trixie-package), with its own dkms, gcc and kernels, which its
# /etc/xrdma-kver and /etc/xrdma-kver2 name (the ABI suffix, +deb12 or
# +deb13, from its /etc/os-release). DIR must be left as it was, too.
# XRDMA_DKMS_KREL=ABI makes another kernel installed there the one the
# root runs: 7.3.4+deb13-amd64, which tools/vm/kbuild-root installs from
# trixie-backports with linux-source-7.3 (make check-kernels).
#
# Root only (skips, exit 4, otherwise). apt runs offline: the package's
# dependencies (dkms, linux-source-6.12, dwarves; linux-source-6.1 too)
# are installed by tools/setup. XRDMA_DKMS_DEB names the .deb (default:
# the one at the top of the tree); skips without one. Prints KTAP; exit
# status as ktap_finished's. About 2 to 3 minutes on 2 cores, most of it the DKMS
# build for the pinned kernel (the headers unpacked from
# linux-source-6.12's tarball, the layout guard, the module) and two
# depmod runs; the 6.1 build adds about a minute.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/ktap.sh
. "$DIR/../lib/ktap.sh"

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C

readonly MOD=nvme-xrdma
readonly PKG=nvme-xrdma-dkms
readonly CONF=/etc/modprobe.d/nvme-xrdma.conf
TOP=$(cd "$DIR/../.." && pwd -P)
readonly TOP
LOWER=$(readlink -f "${XRDMA_DKMS_ROOT:-/}")
# Debian's 6.12 ABIs: <version>+deb<release>-amd64
DEB_REL=$(sed -n 's/^VERSION_ID="*\([0-9]*\).*/\1/p' "$LOWER/etc/os-release" \
	2>/dev/null)
KSUFFIX=+deb${DEB_REL:-12}-amd64
KREL=$(cat "$LOWER/etc/xrdma-kver" 2>/dev/null || echo 6.12.117)$KSUFFIX
# another installed kernel of the root as the one it runs, e.g. the
# trixie root's 7.3.4+deb13-amd64 from trixie-backports
KREL=${XRDMA_DKMS_KREL:-$KREL}
KREL2=$(cat "$LOWER/etc/xrdma-kver2" 2>/dev/null)
KREL2=${KREL2:+$KREL2$KSUFFIX}
# Debian 12's 6.1: tools/setup's ABI (XRDMA_K61), else the newest 6.1
# whose headers are installed in the root
K61=${XRDMA_K61:+$XRDMA_K61-amd64}
if [[ -z $K61 ]]; then
	K61=$(find "$LOWER/lib/modules" -mindepth 1 -maxdepth 1 \
		-name '6.1.*-amd64' -printf '%f\n' 2>/dev/null | sort -V | tail -n 1)
fi
[[ -z $K61 || -e $LOWER/lib/modules/$K61/build/include ]] || K61=
readonly LOWER KSUFFIX KREL KREL2 K61

STATE=${1:-}
DEB=${XRDMA_DKMS_DEB:-}
if [[ -z $DEB ]]; then
	for f in "$TOP"/nvme-xrdma-dkms_*_all.deb; do
		[[ -f $f ]] && DEB=$f
	done
fi

# ------------------------------------------------------------ namespace

# Everything below runs in a private mount namespace: the overlay, the
# tmpfs under it and the chroot's mounts exist only there, and go with
# the namespace if a cleanup is cut short.
if [[ -z ${XRDMA_DKMS_UNSHARED:-} ]]; then
	[[ -n $STATE && -d $STATE ]] || {
		echo "usage: ${0##*/} STATEDIR (an existing directory)" >&2
		exit 2
	}
	if (($(id -u) != 0)); then
		ktap_print_header
		ktap_exit_skip_msg "must be root"
	fi
	for c in unshare chroot mount apt dpkg-query modinfo readelf nm xz; do
		command -v "$c" >/dev/null || {
			ktap_print_header
			ktap_exit_skip_msg "missing command: $c"
		}
	done
	[[ -x $LOWER/usr/bin/env ]] || {
		ktap_print_header
		ktap_exit_skip_msg "$LOWER is not a root file system"
	}
	[[ -f $DEB ]] || {
		ktap_print_header
		ktap_exit_skip_msg \
			"no package ${DEB:-$TOP/nvme-xrdma-dkms_*_all.deb}: run make deb"
	}
	STATE=$(cd "$STATE" && pwd -P)
	XRDMA_DKMS_UNSHARED=1 exec unshare -m --propagation private -- \
		"$DIR/${BASH_SOURCE[0]##*/}" "$STATE"
fi

TMPD=
ROOT=
ROOT_BEFORE=
# 1: the second ABI is not installed in the root but in its apt cache,
# to install after the package (a trixie root, whose dkms builds for
# every installed kernel when the package is installed)
KREL2_LATE=

# Processes still inside the throw-away root are ours (nothing else
# enters it): stop them, then unmount it all (the chroot's mounts, the
# overlay, the tmpfs) and remove the directory.
teardown_root() {
	local p
	[[ -n $TMPD ]] || return 0
	if [[ -n $ROOT ]]; then
		for p in /proc/[0-9]*; do
			[[ $(readlink "$p/root" 2>/dev/null) == "$ROOT" ]] &&
				kill -KILL "${p##*/}" 2>/dev/null
		done
	fi
	if mountpoint -q "$TMPD/t"; then
		umount -R "$TMPD/t" || umount -R -l "$TMPD/t" || return 1
	fi
	# never into a mount that is still there
	rm -rf --one-file-system "$TMPD"
	TMPD=
	ROOT=
}
trap 'teardown_root' EXIT
# a time limit (tools/vm/selftests) or ^C: the EXIT trap still runs
trap 'exit 143' TERM INT HUP

# in_root CMD...: CMD in the throw-away root, with the environment of a
# root login and nothing of ours.
in_root() {
	chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		DEBIAN_FRONTEND=noninteractive "$@"
}

# What the package could change on the machine's root file system (B
# empty) or on the root B the throw-away one is an overlay of.
root_state() {
	local b=${1:-} k
	for k in "$KREL" ${KREL2:+"$KREL2"} ${K61:+"$K61"}; do
		find "$b/lib/modules/$k" -maxdepth 1 -name 'modules.*' \
			-printf '%p %s %T@\n' 2>/dev/null
		find "$b/lib/modules/$k/updates" -printf '%p %s %T@\n' 2>/dev/null
	done
	find "$b/var/lib/dkms" "$b/usr/src" "$b/etc/modprobe.d" \
		-printf '%p %s %T@\n' 2>/dev/null
	sha256sum "$b/var/lib/dpkg/status"
	ls -l "$b/var/lib/dpkg/info/$PKG".* 2>/dev/null
}

# the machine's root and, if another, the one under the overlay
all_state() {
	root_state
	if [[ $LOWER != / ]]; then root_state "$LOWER"; fi
}

# ko_cat KO: a (compressed) module file, uncompressed to stdout
ko_cat() {
	case $1 in
	*.xz) xz -dc "$1" ;;
	*.zst) zstd -dcq "$1" ;;
	*) cat "$1" ;;
	esac
}

# build_id KO: the GNU build ID of a (compressed) module file.
build_id() {
	local ko=$1
	ko_cat "$ko" >"$TMPD/t/id.ko" || return 1
	readelf -n "$TMPD/t/id.ko" | awk '/Build ID:/ { print $3 }'
}

# apt's chatter out, the rest of its output (and dkms's) kept
apt_out() {
	grep -vE '^(Reading|Building|Selecting|\(Reading)|readelf: Warning|^$|^WARNING: apt does not have|^Note, selecting' |
		tail -n "$1"
}

t_root() {
	ROOT_BEFORE=$(all_state)
	TMPD=$(mktemp -d /var/tmp/xrdma-dkms-root.XXXXXX) || return 1
	mkdir "$TMPD/t" &&
		mount -t tmpfs -o mode=0755 xrdma-dkms "$TMPD/t" || return 1
	mkdir "$TMPD/t/upper" "$TMPD/t/work" "$TMPD/t/root" || return 1
	# the upper layer on its own file system: one on the root file
	# system would be inside the lower layer
	mount -t overlay xrdma-dkms \
		-o "lowerdir=$LOWER,upperdir=$TMPD/t/upper,workdir=$TMPD/t/work" \
		"$TMPD/t/root" || return 1
	ROOT=$TMPD/t/root
	mount -t proc proc "$ROOT/proc" &&
		mount --bind /sys "$ROOT/sys" &&
		mount -o remount,bind,ro "$ROOT/sys" &&
		mount --rbind /dev "$ROOT/dev" || return 1
	echo "throw-away root $ROOT (overlay of $LOWER, upper layer on a tmpfs)"

	# in place of /usr/bin/uname: debconf runs the maintainer scripts
	# with a PATH of its own. ROOT is checked again: a slip here must
	# never touch the machine's own uname.
	[[ $ROOT == "$TMPD"/t/root && -d $ROOT/usr/bin ]] || return 1
	mkdir -p "$ROOT/usr/lib/xrdma-dkms" &&
		mv "$ROOT/usr/bin/uname" "$ROOT/usr/lib/xrdma-dkms/uname" ||
		return 1
	printf '%s\n' '#!/bin/sh' \
		"# the throw-away root of selftests/package/host_dkms.sh runs $KREL" \
		'real=/usr/lib/xrdma-dkms/uname' \
		"\$real \"\$@\" | sed \"s/\$(\$real -r)/$KREL/\"" \
		>"$ROOT/usr/bin/uname" || return 1
	chmod 0755 "$ROOT/usr/bin/uname" || return 1
	echo "uname -r there: $(in_root uname -r)"
	[[ $(in_root uname -r) == "$KREL" ]] || return 1

	local cache=$ROOT/var/cache/apt/archives
	if [[ -n $KREL2 && ! -e $ROOT/lib/modules/$KREL2/build/include ]] &&
		compgen -G "$cache/linux-image-${KREL2}_*.deb" >/dev/null &&
		compgen -G "$cache/linux-headers-${KREL2}_*.deb" >/dev/null
	then
		KREL2_LATE=1
		echo "second ABI $KREL2: in apt's cache, installed after the package"
	fi
	[[ -n $KREL2 && ( -n $KREL2_LATE ||
		-e $ROOT/lib/modules/$KREL2/build/include ) ]] || {
		echo "no second 6.12 ABI with headers (${KREL2:-none}):" \
			"run tools/setup (tools/vm/trixie-root for a trixie root)"
		return 1
	}
	# shellcheck disable=SC2016 # dpkg-query's format
	if in_root dpkg-query -W -f='${Status}\n' "$PKG" 2>/dev/null |
		grep -q ' installed'; then
		echo "$PKG is installed on this machine: remove it first"
		return 1
	fi
	[[ ! -e $ROOT/var/lib/dkms/$MOD ]] || {
		echo "/var/lib/dkms/$MOD exists on this machine: dkms remove it first"
		return 1
	}
	# a module of "make install" (in the throw-away root only); the
	# package's depmod rebuilds the index. (A second ABI still to be
	# installed has no module tree yet.)
	find "$ROOT/lib/modules/$KREL" "$ROOT/lib/modules/$KREL2" \
		${K61:+"$ROOT/lib/modules/$K61"} \
		-name "$MOD.ko*" -print -delete 2>/dev/null
	mkdir -p "$ROOT/tmp/xrdma-dkms" &&
		cp "$DEB" "$ROOT/tmp/xrdma-dkms/" || return 1
}

t_install() {
	ktap_require ROOT "no throw-away root" || return
	local t0=$SECONDS out rc
	out=$(in_root apt install -y --no-install-recommends \
		"/tmp/xrdma-dkms/${DEB##*/}" 2>&1)
	rc=$?
	apt_out 25 <<<"$out"
	echo "apt install: exit $rc in $((SECONDS - t0)) s"
	((rc == 0)) || return 1
	in_root dkms status "$MOD" 2>/dev/null
	in_root dkms status "$MOD" -k "$KREL" 2>/dev/null | grep -q ": installed"
}

t_location() {
	ktap_require ROOT "no throw-away root" || return
	local path
	path=$(in_root modinfo -k "$KREL" -n "$MOD") || return 1
	echo "modinfo -k $KREL -n $MOD: $path"
	[[ $path == "/lib/modules/$KREL/updates/dkms/$MOD.ko"* ]]
}

# The package builds the production flavour: none of the symbols of the
# fault and delay hooks (fault.c, delay.c, the static keys, the
# test_hooks and no_remote_inv parameters) in the module's symbol table,
# which must be there (a symbol every flavour has), and neither
# parameter in modinfo.
t_no_hooks() {
	ktap_require ROOT "no throw-away root" || return
	local ko syms hooks parm
	ko=$(find "$ROOT/lib/modules/$KREL/updates/dkms" -name "$MOD.ko*" |
		head -n 1)
	[[ -n $ko ]] || { echo "no $MOD in updates/dkms of $KREL"; return 1; }
	ko_cat "$ko" >"$TMPD/t/hooks.ko" || return 1
	syms=$(nm "$TMPD/t/hooks.ko") || return 1
	grep -q ' xrdma_debugfs_init$' <<<"$syms" ||
		{ echo "no symbol table in ${ko#"$ROOT"}"; return 1; }
	echo "${ko#"$ROOT"}: $(wc -l <<<"$syms") symbols"
	hooks=$(grep -E 'xrdma_(fault|delay|hooks)|test_hooks|remote_inv' \
		<<<"$syms")
	parm=$(modinfo -F parm "$ko" | grep -E '^(test_hooks|no_remote_inv):')
	[[ -z $hooks && -z $parm ]] && return 0
	echo "test hooks in the package's module:"
	head -n 10 <<<"$hooks"
	[[ -z $parm ]] || echo "modinfo: parm $parm"
	return 1
}

t_modprobe_conf() {
	ktap_require ROOT "no throw-away root" || return
	local f=$ROOT$CONF
	[[ -f $f ]] || { echo "no $CONF"; return 1; }
	grep -n 'transport_name=rdma' "$f"
	# installed, but nothing active: the drop-in line is commented out
	! grep -vE '^[[:space:]]*(#|$)' "$f"
}

# A second ABI installed after the package: in a trixie root, apt
# installs its image and headers (offline, from the root's apt cache) and
# dpkg runs their DKMS hooks; where it is installed already (the machine's
# second ABI, tools/setup), the kernel postinst hook that dpkg runs when
# that kernel is installed or updated.
t_second_abi() {
	ktap_require ROOT "no throw-away root" || return
	local out rc ver log ko desc what
	if [[ -n $KREL2_LATE ]]; then
		what="apt install linux-image-$KREL2 linux-headers-$KREL2"
		out=$(in_root apt install -y --no-install-recommends \
			"linux-image-$KREL2" "linux-headers-$KREL2" 2>&1)
		rc=$?
		out=$(grep -E -i 'dkms|nvme-xrdma|autoinstall|error' <<<"$out")
	else
		what="/etc/kernel/postinst.d/dkms $KREL2"
		out=$(in_root /etc/kernel/postinst.d/dkms "$KREL2" \
			"/boot/vmlinuz-$KREL2" 2>&1)
		rc=$?
	fi
	grep -vE 'readelf: Warning|^Sign|^Signing|^Public' <<<"$out" | tail -n 8
	echo "$what: exit $rc"
	((rc == 0)) || return 1
	in_root dkms status "$MOD" 2>/dev/null
	in_root dkms status "$MOD" -k "$KREL2" 2>/dev/null | grep -q ": installed" ||
		return 1
	# shellcheck disable=SC2016 # dpkg-query's format
	ver=$(in_root dpkg-query -W -f='${Version}' "$PKG") || return 1
	log=$ROOT/var/lib/dkms/$MOD/$ver/$KREL2/x86_64/log/make.log
	grep "^dkms: " "$log" || { echo "no reason in ${log#"$ROOT"}"; return 1; }
	ko=$(find "$ROOT/lib/modules/$KREL2/updates/dkms" -name "$MOD.ko*" |
		head -n 1)
	[[ -n $ko ]] || { echo "no $MOD in updates/dkms of $KREL2"; return 1; }
	desc=$(modinfo -F description "$ko") || return 1
	echo "${ko#"$ROOT"}: $desc"
	[[ $desc == *"not built for this kernel"* ]] || return 1
	# what to install: the linux-source of its series
	echo "names: $(sources "$ko")"
	[[ $(sources "$ko") == linux-source-6.12 ]] || return 1
	# the pinned kernel's module is the transport
	desc=$(in_root modinfo -k "$KREL" -F description "$MOD") || return 1
	echo "$(in_root modinfo -k "$KREL" -n "$MOD"): $desc"
	[[ $desc != *"not built for this kernel"* ]]
}

# sources KO: the linux-source packages a (compressed) module names
sources() {
	ko_cat "$1" | grep -a -o 'linux-source-[0-9.]*[0-9]' | sort -u | tr '\n' ' ' |
		sed 's/ $//'
}

# dkms_hook KERNEL: what dpkg runs when KERNEL is installed or updated
dkms_hook() {
	local out rc
	out=$(in_root /etc/kernel/postinst.d/dkms "$1" "/boot/vmlinuz-$1" 2>&1)
	rc=$?
	grep -vE 'readelf: Warning|^Sign|^Signing|^Public' <<<"$out" | tail -n 8
	echo "/etc/kernel/postinst.d/dkms $1: exit $rc"
	return "$rc"
}

# k61_module: the module DKMS installed for $K61, its vermagic and
# description shown
K61_KO=
k61_module() {
	local vm
	K61_KO=$(find "$ROOT/lib/modules/$K61/updates/dkms" -name "$MOD.ko*" \
		2>/dev/null | head -n 1)
	[[ -n $K61_KO ]] || { echo "no $MOD in updates/dkms of $K61"; return 1; }
	vm=$(modinfo -F vermagic "$K61_KO") || return 1
	echo "${K61_KO#"$ROOT"}: vermagic $vm; $(modinfo -F description "$K61_KO")"
	# a module for that kernel: vermagic starts with its release
	[[ $vm == "$K61 "* ]]
}

k61_log() {
	# shellcheck disable=SC2016 # dpkg-query's format
	echo "$ROOT/var/lib/dkms/$MOD/$(in_root dpkg-query -W -f='${Version}' \
		"$PKG")/$K61/x86_64/log/make.log"
}

# Debian 12's 6.1: its DKMS hook builds the transport, from
# linux-source-6.1, with the layout guard (XRDMA_REQUIRE_BTF=1: no BTF
# base, no module; 6.1's comes from /boot/vmlinuz-$K61).
t_k61() {
	ktap_require ROOT "no throw-away root" || return
	KTAP_REASON="no 6.1 kernel with headers in $LOWER"
	[[ -n $K61 ]] || return "$KSFT_SKIP"
	local t0=$SECONDS log
	dkms_hook "$K61" || return 1
	echo "built in $((SECONDS - t0)) s"
	in_root dkms status "$MOD" -k "$K61" 2>/dev/null | grep ": installed" ||
		return 1
	log=$(k61_log)
	grep -m1 "HDRS.*/linux-source-6\.1\.tar" "$log" ||
		{ echo "not from linux-source-6.1 (${log#"$ROOT"})"; return 1; }
	if grep "^dkms: " "$log"; then
		echo "refused (${log#"$ROOT"})"
		return 1
	fi
	k61_module || return 1
	[[ $(modinfo -F description "$K61_KO") != *"not built for this kernel"* ]] ||
		return 1
	# for a 6.1 guest (package/test_dkms.sh, XRDMA_DKMS_STATE=STATEDIR/k61)
	keep "$K61" "$STATE/k61"
}

# The same kernel without linux-source-6.1 (removed in the throw-away
# root; the package's dependency is met by linux-source-6.12): the hook
# still succeeds, with a module that refuses to load and names
# linux-source-6.1, not linux-source-6.12.
t_k61_refuse() {
	ktap_require ROOT "no throw-away root" || return
	KTAP_REASON="no 6.1 kernel with headers in $LOWER"
	[[ -n $K61 ]] || return "$KSFT_SKIP"
	local ver log
	in_root dpkg --purge linux-source-6.1 >/dev/null 2>&1 || return 1
	# shellcheck disable=SC2016 # dpkg-query's format
	ver=$(in_root dpkg-query -W -f='${Version}' "$PKG") || return 1
	in_root dkms remove "$MOD/$ver" -k "$K61" >/dev/null 2>&1 || return 1
	dkms_hook "$K61" || return 1
	in_root dkms status "$MOD" -k "$K61" 2>/dev/null | grep ": installed" ||
		return 1
	log=$(k61_log)
	grep "^dkms: " "$log" || { echo "no reason in ${log#"$ROOT"}"; return 1; }
	k61_module || return 1
	[[ $(modinfo -F description "$K61_KO") == *"not built for this kernel"* ]] ||
		return 1
	echo "names: $(sources "$K61_KO")"
	[[ $(sources "$K61_KO") == linux-source-6.1 ]]
}

# For the guest: the module DKMS installed for the pinned kernel, the
# module index of its depmod, the modprobe.d file, the build ID.
t_keep() {
	ktap_require ROOT "no throw-away root" || return
	keep "$KREL" "$STATE"
}

# keep KERNEL DIR: the module DKMS installed for KERNEL, the module index
# of its depmod, the modprobe.d file and the build ID, into DIR
keep() {
	local krel=$1 dir=$2 src=$ROOT/lib/modules/$1 ko id
	ko=$(find "$src/updates/dkms" -name "$MOD.ko*" 2>/dev/null | head -n 1)
	[[ -n $ko ]] || { echo "no $MOD in updates/dkms of $krel"; return 1; }
	rm -rf "${dir:?}/lib" "$dir/build-id"
	mkdir -p "$dir/lib/modules/$krel/updates/dkms" &&
		cp -a "$ko" "$dir/lib/modules/$krel/updates/dkms/" &&
		cp -a "$src"/modules.* "$dir/lib/modules/$krel/" &&
		cp -a "$ROOT$CONF" "$dir/" || return 1
	id=$(build_id "$ko")
	[[ -n $id ]] || { echo "no build ID in ${ko#"$ROOT"}"; return 1; }
	echo "$krel" >"$dir/krel"
	echo "$id" >"$dir/build-id"
	echo "kept ${ko#"$ROOT"} (build ID $id) and its module index in $dir"
}

t_remove() {
	ktap_require ROOT "no throw-away root" || return
	local out rc left
	out=$(in_root apt remove -y "$PKG" 2>&1)
	rc=$?
	apt_out 12 <<<"$out"
	((rc == 0)) || return 1
	left=$(find "$ROOT/lib/modules/$KREL" "$ROOT/lib/modules/$KREL2" \
		${K61:+"$ROOT/lib/modules/$K61"} \
		"$ROOT/var/lib/dkms" -name "$MOD.ko*" 2>/dev/null)
	[[ -z $left ]] || { echo "left behind: $left"; return 1; }
	! in_root modinfo -k "$KREL" -n "$MOD" 2>/dev/null ||
		{ echo "modinfo still finds $MOD"; return 1; }
	[[ -z $(in_root dkms status "$MOD" 2>/dev/null) ]]
}

t_purge() {
	ktap_require ROOT "no throw-away root" || return
	in_root apt purge -y "$PKG" >/dev/null 2>&1 || return 1
	[[ ! -e $ROOT$CONF ]]
}

t_no_leak() {
	local after
	teardown_root || { echo "the throw-away root did not unmount"; return 1; }
	[[ -n $ROOT_BEFORE ]] || return 1
	after=$(all_state)
	if [[ $after != "$ROOT_BEFORE" ]]; then
		echo "changed on the machine's root file system or under the overlay:"
		diff <(echo "$ROOT_BEFORE") <(echo "$after") | head -n 20
		return 1
	fi
	# the host's mount namespace (PID 1's) never saw our mounts
	! grep -w xrdma-dkms /proc/1/mountinfo
}

T0=$SECONDS
ktap_print_header
ktap_print_msg "package ${DEB##*/}, kernels $KREL, ${KREL2:-none} and ${K61:-no 6.1}"
ktap_set_plan 12
ktap_run "a throw-away root: an overlay of $LOWER in a private mount namespace, uname -r $KREL" t_root
ktap_run "apt install ./${DEB##*/}: DKMS builds and installs" t_install
ktap_run "modinfo -n $MOD is in updates/dkms" t_location
ktap_run "the DKMS module has no test hooks: no fault or delay symbol, no test_hooks or no_remote_inv parameter" \
	t_no_hooks
ktap_run "$CONF installed, nothing active" t_modprobe_conf
ktap_run "a second 6.12 ABI ($KREL2)${KREL2_LATE:+ installed after the package}: its DKMS hook succeeds, the module refuses to load" \
	t_second_abi
ktap_run "Debian 12's 6.1 (${K61:-none}): its DKMS hook builds the transport from linux-source-6.1, a 6.1 module" \
	t_k61
ktap_run "6.1 without linux-source-6.1: the module refuses to load and names linux-source-6.1" \
	t_k61_refuse
ktap_run "the DKMS module and its module index kept for the guest" t_keep
ktap_run "apt remove leaves no $MOD module behind" t_remove
ktap_run "apt purge removes the modprobe.d file" t_purge
ktap_run "nothing reached the machine's root file system" t_no_leak
ktap_print_msg "host half: $((SECONDS - T0)) s"
ktap_finished
