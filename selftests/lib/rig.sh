# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The shared NVMe-oF/RDMA test rig (sourced, not run). Inside the guest:
#
#   dummy netdev $RIG_NETDEV   192.0.2.1/24 (TEST-NET-1), 2001:db8::1/64
#   soft-RoCE    $RIG_RXE      "rdma link add rxe0 type rxe netdev ..."
#                (or soft-iWARP "siw0 type siw" with XRDMA_PROVIDER=siw)
#   null_blk     xrdma_null    1 GiB, no memory backing (fast, data lost)
#                xrdma_ram     memory backed, data can be verified
#   nvmet        $RIG_NQN_NULL namespace 1 -> /dev/xrdma_null
#                $RIG_NQN_RAM  namespace 1 -> /dev/xrdma_ram
#                both with attr_allow_any_host=1
#   nvmet port   $RIG_PORT     rdma/ipv4 192.0.2.1:4420, both subsystems
#
# Host and target share init_net and the one rxe device; rxe loops
# same-MAC traffic back internally. The guest is isolated, so the
# documentation address ranges are safe to use.
#
# XRDMA_PROVIDER=siw (default rxe) puts soft-iWARP (siw.ko, "make siw",
# installed by tools/vm/run) in rxe's place: the devices are then named
# siwN instead of rxeN (${RIG_PROVIDER}N), and the connections are TCP
# (over the loopback). Tests add devices with rig_rdma_link_add;
# rig_iwarp tells the providers apart.
#
# Extra objects on demand: rig_add_nullb, rig_add_subsys, rig_add_port,
# rig_link, and the ready-made rig_add_ipv6_port, rig_add_param_port,
# rig_add_rdma_subsys and rig_add_path (a second netdev and rxe device
# with its own port, for multipath). Every object is pushed on a stack in $RIG_STATE;
# rig_del_* remove single ones, rig_teardown pops everything, disconnects
# host controllers of the rig, removes the rxe link and netdev and unloads
# every module loaded since rig setup started.
#
# rig_setup is idempotent. Needs lib/env.sh and lib/nvme.sh.

RIG_PROVIDER=${XRDMA_PROVIDER:-rxe}
case $RIG_PROVIDER in
rxe) RIG_PROVIDER_MOD=rdma_rxe ;;
siw) RIG_PROVIDER_MOD=siw ;;
*) RIG_PROVIDER_MOD= ;;	# test_begin fails
esac
RIG_STATE=${RIG_STATE:-/run/xrdma-rig}
RIG_NETDEV=${RIG_NETDEV:-xrdma-rig0}
RIG_RXE=${RIG_RXE:-${RIG_PROVIDER}0}
RIG_IP4=${RIG_IP4:-192.0.2.1}
RIG_IP6=${RIG_IP6:-2001:db8::1}
RIG_TRSVCID=${RIG_TRSVCID:-4420}
RIG_PORT=${RIG_PORT:-1}
RIG_NQN_NULL=${RIG_NQN_NULL:-nqn.2026-11.io.xrdma:null}
RIG_NQN_RAM=${RIG_NQN_RAM:-nqn.2026-11.io.xrdma:ram}
RIG_NQN_RDMA=${RIG_NQN_RDMA:-nqn.2026-11.io.xrdma:rdma}
RIG_NULL_MB=${RIG_NULL_MB:-1024}
RIG_RAM_MB=${RIG_RAM_MB:-128}
RIG_BLOCKSIZE=${RIG_BLOCKSIZE:-512}

readonly RIG_CFS=/sys/kernel/config
readonly RIG_NVMET=$RIG_CFS/nvmet
readonly RIG_NULLB=$RIG_CFS/nullb

rig_log() {
	echo "rig: $*"
}

# Record an object on the teardown stack.
rig_push() {
	echo "$*" >>"$RIG_STATE/stack"
}

# Drop one object from the stack (exact line match).
rig_forget() {
	local tmp=$RIG_STATE/stack.tmp
	[[ -f $RIG_STATE/stack ]] || return 0
	grep -vxF -- "$*" "$RIG_STATE/stack" >"$tmp"
	mv -f "$tmp" "$RIG_STATE/stack"
}

# rig_write VALUE FILE: write a configfs/sysfs attribute, loudly on error.
rig_write() {
	echo "$1" >"$2" 2>/dev/null && return 0
	rig_log "writing '$1' to $2 failed"
	return 1
}

rig_is_up() {
	[[ -f $RIG_STATE/up ]] &&
		[[ -d $RIG_NVMET/ports/$RIG_PORT/subsystems/$RIG_NQN_RAM ]] &&
		rig_rxe_active
}

# ---------------------------------------------------------------- netdev/rxe

# rig_iwarp: the provider is soft-iWARP (siw).
rig_iwarp() {
	[[ $RIG_PROVIDER == siw ]]
}

# rig_rdma_link_add NAME NETDEV: an RDMA device of the provider on NETDEV.
rig_rdma_link_add() {
	modprobe "$RIG_PROVIDER_MOD" &&
		rdma link add "$1" type "$RIG_PROVIDER" netdev "$2"
}

# The GID of an IP address as sysfs prints it (IPv4 is v4-mapped).
rig_gid_of() {
	local ip=$1 a b c d
	if [[ $ip == *.* ]]; then
		IFS=. read -r a b c d <<<"$ip"
		printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' \
			"$a" "$b" "$c" "$d"
	else
		rig_expand_ip6 "$ip"
	fi
}

# rig_expand_ip6 ADDR: full 8-group lower-case form "2001:0db8:...".
rig_expand_ip6() {
	local addr=$1 head tail groups=() out=() i n
	if [[ $addr == *::* ]]; then
		head=${addr%%::*}
		tail=${addr#*::}
	else
		head=$addr
		tail=
	fi
	IFS=: read -r -a groups <<<"$head"
	out=("${groups[@]}")
	IFS=: read -r -a groups <<<"$tail"
	n=$((8 - ${#out[@]} - ${#groups[@]}))
	for ((i = 0; i < n; i++)); do out+=(0); done
	out+=("${groups[@]}")
	for ((i = 0; i < 8; i++)); do
		printf '%04x' "0x${out[i]:-0}"
		((i < 7)) && printf ':'
	done
	echo
}

# rig_has_gid IP [RXE]: the rxe port has a GID for IP (RoCE v2 or v1).
rig_has_gid() {
	local gid
	gid=$(rig_gid_of "$1")
	grep -qx "$gid" /sys/class/infiniband/"${2:-$RIG_RXE}"/ports/1/gids/* \
		2>/dev/null
}

# rig_addr_ready IP [RXE]: the RDMA device can be reached at IP: rxe has
# a GID for it (filled from netdev events, asynchronously); iWARP
# addresses by IP alone (siw has one GID, from the MAC address).
rig_addr_ready() {
	rig_iwarp || rig_has_gid "$@"
}

# rig_rxe_active [RXE]: the port of the rig's RDMA device (or RXE) is up.
rig_rxe_active() {
	rdma link show "${1:-$RIG_RXE}/1" 2>/dev/null | grep -q "state ACTIVE"
}

rig_setup_net() {
	if ! ip link show "$RIG_NETDEV" >/dev/null 2>&1; then
		ip link add "$RIG_NETDEV" type dummy || return 1
		rig_push netdev "$RIG_NETDEV"
	fi
	ip addr replace "$RIG_IP4/24" dev "$RIG_NETDEV" || return 1
	ip -6 addr replace "$RIG_IP6/64" dev "$RIG_NETDEV" nodad || return 1
	ip link set "$RIG_NETDEV" up || return 1

	if ! rdma link show "$RIG_RXE/1" >/dev/null 2>&1; then
		rig_rdma_link_add "$RIG_RXE" "$RIG_NETDEV" || return 1
		rig_push rxe "$RIG_RXE"
	fi
	wait_for 30 rig_rxe_active || {
		rig_log "$RIG_RXE port not ACTIVE"
		rdma link show
		return 1
	}
	wait_for 30 rig_addr_ready "$RIG_IP4" || {
		rig_log "no GID for $RIG_IP4 on $RIG_RXE"
		return 1
	}
	wait_for 30 rig_addr_ready "$RIG_IP6" || {
		rig_log "no GID for $RIG_IP6 on $RIG_RXE"
		return 1
	}
}

# ---------------------------------------------------------------- null_blk

# rig_add_nullb NAME SIZE_MB MEMORY_BACKED(0|1): /dev/NAME via configfs.
rig_add_nullb() {
	local name=$1 mb=$2 mem=$3 d=$RIG_NULLB/$1
	if [[ ! -d $RIG_NULLB ]]; then
		# nr_devices=0: no default nullb0, only what we configure.
		modprobe null_blk nr_devices=0 || return 1
	fi
	[[ -d $d ]] && return 0
	mkdir "$d" || return 1
	rig_push nullb "$name"
	rig_write "$mb" "$d/size" &&
		rig_write "$mem" "$d/memory_backed" &&
		rig_write "$RIG_BLOCKSIZE" "$d/blocksize" &&
		rig_write 1 "$d/irqmode" &&
		rig_write 1 "$d/power" || return 1
	wait_for 10 test -b "/dev/$name"
}

rig_del_nullb() {
	local d=$RIG_NULLB/$1
	if [[ -d $d ]]; then
		echo 0 >"$d/power" 2>/dev/null
		rmdir "$d" || return 1
	fi
	rig_forget nullb "$1"
}

# ---------------------------------------------------------------- nvmet

# rig_add_subsys NQN BLOCKDEV: subsystem with namespace 1 on BLOCKDEV.
rig_add_subsys() {
	local nqn=$1 dev=$2 s=$RIG_NVMET/subsystems/$1
	[[ -d $s ]] && return 0
	mkdir "$s" || return 1
	rig_push subsys "$nqn"
	rig_write 1 "$s/attr_allow_any_host" || return 1
	mkdir "$s/namespaces/1" || return 1
	# RIG_NS_FIXED_UUID=1: the namespace UUID derived from the NQN, not
	# random, so that a target set up again is the same namespace to the
	# host, as with a real target (a changed UUID makes nvme-core drop the
	# namespace on reconnect: "identifiers changed for nsid 1")
	if [[ -n ${RIG_NS_FIXED_UUID:-} ]]; then
		rig_write "$(rig_ns_uuid "$nqn")" "$s/namespaces/1/device_uuid" ||
			return 1
	fi
	rig_write "$dev" "$s/namespaces/1/device_path" &&
		rig_write 1 "$s/namespaces/1/enable"
}

# rig_ns_uuid NQN: a UUID that only depends on NQN.
rig_ns_uuid() {
	local h
	h=$(md5sum <<<"$1")
	echo "${h:0:8}-${h:8:4}-${h:12:4}-${h:16:4}-${h:20:12}"
}

rig_del_subsys() {
	local nqn=$1 s=$RIG_NVMET/subsystems/$1 p ns
	# Unlink from every port first.
	for p in "$RIG_NVMET"/ports/*/subsystems/"$nqn"; do
		[[ -L $p ]] && rm -f "$p"
	done
	if [[ -d $s ]]; then
		for ns in "$s"/namespaces/*; do
			[[ -d $ns ]] || continue
			echo 0 >"$ns/enable" 2>/dev/null
			rmdir "$ns"
		done
		rm -f "$s"/allowed_hosts/* 2>/dev/null
		rmdir "$s" || return 1
	fi
	rig_forget subsys "$nqn"
}

# rig_add_port ID ADRFAM TRADDR TRSVCID [param_name=value...]
# e.g. rig_add_port 3 ipv4 192.0.2.1 4421 param_inline_data_size=8192
# Parameters must be set before a subsystem is linked (port enable).
rig_add_port() {
	local id=$1 fam=$2 addr=$3 svc=$4 p=$RIG_NVMET/ports/$1 kv
	shift 4
	[[ -d $p ]] && return 0
	mkdir "$p" || return 1
	rig_push port "$id"
	rig_write rdma "$p/addr_trtype" &&
		rig_write "$fam" "$p/addr_adrfam" &&
		rig_write "$addr" "$p/addr_traddr" &&
		rig_write "$svc" "$p/addr_trsvcid" || return 1
	for kv in "$@"; do
		rig_write "${kv#*=}" "$p/${kv%%=*}" || return 1
	done
}

rig_del_port() {
	local id=$1 p=$RIG_NVMET/ports/$1 l
	if [[ -d $p ]]; then
		for l in "$p"/subsystems/*; do
			[[ -L $l ]] || continue
			rm -f "$l"
			rig_forget link "$id" "${l##*/}"
		done
		rmdir "$p" || return 1
	fi
	rig_forget port "$id"
}

# rig_link PORT NQN: expose a subsystem on a port (enables the port).
rig_link() {
	local l=$RIG_NVMET/ports/$1/subsystems/$2
	[[ -L $l ]] && return 0
	ln -s "$RIG_NVMET/subsystems/$2" "$l" || return 1
	rig_push link "$1" "$2"
}

rig_unlink() {
	rm -f "$RIG_NVMET/ports/$1/subsystems/$2"
	rig_forget link "$1" "$2"
}

# rig_port_close / rig_port_open: take both rig subsystems off the rig's
# port (which disables it and deletes its controllers) and put them back.
# The first link enables the port, so the RAM subsystem, which the tests'
# reconnecting controllers use, comes first: a reconnect landing while only
# the other one is linked would get a Connect status with DNR and nvme-core
# would give up for good.
rig_port_close() {
	rig_unlink "$RIG_PORT" "$RIG_NQN_NULL"
	rig_unlink "$RIG_PORT" "$RIG_NQN_RAM"
}

rig_port_open() {
	rig_link "$RIG_PORT" "$RIG_NQN_RAM" && rig_link "$RIG_PORT" "$RIG_NQN_NULL"
}

# Ready-made extras ------------------------------------------------------

# IPv6 port (default id 2) on [2001:db8::1]:4420 exposing NQN (default ram).
rig_add_ipv6_port() {
	local id=${1:-2} nqn=${2:-$RIG_NQN_RAM}
	rig_add_port "$id" ipv6 "$RIG_IP6" "$RIG_TRSVCID" && rig_link "$id" "$nqn"
}

# rig_add_param_port ID TRSVCID INLINE_DATA_SIZE MAX_QUEUE_SIZE [NQN]
# A port with target parameters (-1 means the target's default).
# 6.1's nvmet has no param_max_queue_size: -1 (its default) writes nothing.
rig_add_param_port() {
	local id=$1 svc=$2 inl=$3 mqs=$4 nqn=${5:-$RIG_NQN_RAM}
	local params=("param_inline_data_size=$inl")

	[[ $mqs == -1 ]] || params+=("param_max_queue_size=$mqs")
	rig_add_port "$id" ipv4 "$RIG_IP4" "$svc" "${params[@]}" &&
		rig_link "$id" "$nqn"
}

# rig_has_port_param NAME: the target's ports have attribute NAME.
rig_has_port_param() {
	[[ -e $RIG_NVMET/ports/$RIG_PORT/$1 ]]
}

# A subsystem of its own (own memory-backed null_blk), for in-kernel
# nvme-rdma next to xrdma without sharing a multipath head.
rig_add_rdma_subsys() {
	local nqn=${1:-$RIG_NQN_RDMA} port=${2:-$RIG_PORT}
	rig_add_nullb xrdma_rdma 64 1 &&
		rig_add_subsys "$nqn" /dev/xrdma_rdma &&
		rig_link "$port" "$nqn"
}

rig_del_rdma_subsys() {
	local nqn=${1:-$RIG_NQN_RDMA}
	rig_del_subsys "$nqn" && rig_del_nullb xrdma_rdma
}

# rig_add_path NETDEV RXE IP4 PORT [NQN]: a second way to the target, for
# multipath: a dummy netdev with IP4/24, its own rxe device, and an nvmet
# port on IP4:4420 exposing NQN (default ram). Taking NETDEV down cuts
# this path alone.
rig_add_path() {
	local nd=$1 rxe=$2 ip=$3 id=$4 nqn=${5:-$RIG_NQN_RAM}
	if ! ip link show "$nd" >/dev/null 2>&1; then
		ip link add "$nd" type dummy || return 1
		rig_push netdev "$nd"
	fi
	ip addr replace "$ip/24" dev "$nd" && ip link set "$nd" up || return 1
	if ! rdma link show "$rxe/1" >/dev/null 2>&1; then
		rig_rdma_link_add "$rxe" "$nd" || return 1
		rig_push rxe "$rxe"
	fi
	wait_for 30 rig_rxe_active "$rxe" || {
		rig_log "$rxe port not ACTIVE"
		return 1
	}
	wait_for 30 rig_addr_ready "$ip" "$rxe" || {
		rig_log "no GID for $ip on $rxe"
		return 1
	}
	rig_add_port "$id" ipv4 "$ip" "$RIG_TRSVCID" && rig_link "$id" "$nqn"
}

# rig_del_path NETDEV RXE PORT: undo rig_add_path.
rig_del_path() {
	local nd=$1 rxe=$2 id=$3 rc=0
	rig_del_port "$id" || rc=1
	if module_loaded ib_core && rdma link show "$rxe/1" >/dev/null 2>&1; then
		rdma link delete "$rxe" || rc=1
	fi
	rig_forget rxe "$rxe"
	if ip link show "$nd" >/dev/null 2>&1; then
		ip link del "$nd" || rc=1
	fi
	rig_forget netdev "$nd"
	return "$rc"
}

# ---------------------------------------------------------------- setup

rig_setup() {
	if rig_is_up; then
		return 0
	fi
	if [[ -f $RIG_STATE/stack ]]; then
		rig_log "stale rig state, tearing down first"
		rig_teardown
	fi
	mkdir -p "$RIG_STATE"
	: >"$RIG_STATE/stack"
	# Modules present before we start: everything else we unload later.
	cut -d' ' -f1 /proc/modules | sort >"$RIG_STATE/modules.before"

	rig_setup_net || return 1
	modprobe nvmet_rdma || return 1
	rig_add_nullb xrdma_null "$RIG_NULL_MB" 0 || return 1
	rig_add_nullb xrdma_ram "$RIG_RAM_MB" 1 || return 1
	rig_add_subsys "$RIG_NQN_NULL" /dev/xrdma_null || return 1
	rig_add_subsys "$RIG_NQN_RAM" /dev/xrdma_ram || return 1
	rig_add_port "$RIG_PORT" ipv4 "$RIG_IP4" "$RIG_TRSVCID" || return 1
	rig_link "$RIG_PORT" "$RIG_NQN_NULL" || return 1
	rig_link "$RIG_PORT" "$RIG_NQN_RAM" || return 1
	touch "$RIG_STATE/up"
	rig_log "up: $RIG_RXE on $RIG_NETDEV, port $RIG_PORT" \
		"rdma $RIG_IP4:$RIG_TRSVCID, $RIG_NQN_NULL, $RIG_NQN_RAM"
}

# ---------------------------------------------------------------- teardown

# Unload, in dependency order, every module loaded since rig setup began.
rig_unload_modules() {
	local before=$RIG_STATE/modules.before m mods progress left
	[[ -f $before ]] || return 0
	while :; do
		progress=0
		left=
		mapfile -t mods < <(cut -d' ' -f1 /proc/modules)
		for m in "${mods[@]}"; do
			grep -qxF "$m" "$before" && continue
			if [[ $(module_refcnt "$m") == 0 ]] && rmmod "$m" 2>/dev/null; then
				progress=1
			else
				left+=" $m"
			fi
		done
		((progress)) || break
	done
	if [[ -n $left ]]; then
		rig_log "modules still loaded:$left"
		return 1
	fi
}

# Remove everything the rig created. Returns 1 if something stayed.
rig_teardown() {
	local line kind a b rc=0
	[[ -d $RIG_STATE ]] || return 0
	# Host controllers would otherwise start reconnecting to a target
	# that is going away.
	nvme_delete_ctrls rdma xrdma

	if [[ -f $RIG_STATE/stack ]]; then
		while [[ -s $RIG_STATE/stack ]]; do
			# Pop first (rig_del_* forget their line too), then remove.
			line=$(tail -n 1 "$RIG_STATE/stack")
			sed -i '$d' "$RIG_STATE/stack"
			read -r kind a b <<<"$line"
			case $kind in
			link) rig_unlink "$a" "$b" ;;
			port) rig_del_port "$a" ;;
			subsys) rig_del_subsys "$a" ;;
			nullb) rig_del_nullb "$a" ;;
			rxe)
				rdma link delete "$a" 2>/dev/null ||
					! rdma link show "$a/1" >/dev/null 2>&1
				;;
			netdev) ip link del "$a" 2>/dev/null ;;
			*) false ;;
			esac || {
				rig_log "could not remove $line"
				rc=1
			}
		done
	fi
	rm -f "$RIG_STATE/up"
	rig_unload_modules || rc=1
	rig_leftovers && rc=1
	rm -rf "$RIG_STATE"
	return "$rc"
}

# Print (and succeed) if anything of the rig is still around: its netdevs
# (xrdma-rig*, rig_add_path's too), rxe links on them, configfs objects.
rig_leftovers() {
	local found=1 d l
	for d in /sys/class/net/*; do
		[[ ${d##*/} == "$RIG_NETDEV" || ${d##*/} == xrdma-rig* ]] ||
			continue
		rig_log "leftover netdev ${d##*/}"
		found=0
	done
	# (Any rdma netlink request autoloads ib_core: only ask if loaded.)
	if module_loaded ib_core; then
		while read -r l; do
			rig_log "leftover rdma $l"
			found=0
		done < <(rdma link show 2>/dev/null |
			grep -E "^link $RIG_RXE/|netdev (xrdma-rig|$RIG_NETDEV)")
	fi
	for d in "$RIG_NVMET"/ports/* "$RIG_NVMET"/subsystems/* "$RIG_NULLB"/*; do
		[[ -d $d ]] || continue
		[[ ${d##*/} == features ]] && continue
		rig_log "leftover configfs ${d#"$RIG_CFS"/}"
		found=0
	done
	return "$found"
}

# For tests run on their own (not from run_selftests.sh, which exports
# XRDMA_RIG_PERSIST=1 and tears down once at the end): tear the rig down
# again if this test brought it up.
RIG_OWNED=0
rig_acquire() {
	rig_is_up || RIG_OWNED=1
	rig_setup
}

rig_release() {
	if ((RIG_OWNED)) && [[ -z ${XRDMA_RIG_PERSIST:-} ]]; then
		rig_teardown
	fi
	RIG_OWNED=0
}
