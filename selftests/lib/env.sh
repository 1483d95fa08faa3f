# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Environment helpers for the xrdma selftests (sourced, not run):
# prerequisites (skip with exit 4 when missing), deadline polling and the
# dmesg/taint check every test runs at its end.
#
# Needs lib/ktap.sh sourced first.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
export LC_ALL=C

# --------------------------------------------------------------- prerequisites

require_root() {
	[[ $(id -u) -eq 0 ]] || ktap_exit_skip_msg "must be root"
}

# require_cmd CMD...
require_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 ||
			ktap_exit_skip_msg "missing command: $c"
	done
}

# module_available NAME: loaded, built in, or installed for this kernel.
module_available() {
	[[ -d /sys/module/${1//-/_} ]] || modinfo -n "$1" >/dev/null 2>&1
}

# require_module MODULE...
require_module() {
	local m
	for m in "$@"; do
		module_available "$m" || ktap_exit_skip_msg "missing module: $m"
	done
}

# The rig creates netdevs, RDMA devices and NVMe targets and loads
# modules: only do that inside the disposable test VM unless told to.
require_vm() {
	[[ -n ${XRDMA_VM:-} || -n ${XRDMA_RIG_ALLOW_HOST:-} ]] ||
		ktap_exit_skip_msg "not inside tools/vm/run" \
			"(set XRDMA_RIG_ALLOW_HOST=1 to run on this machine)"
}

# --------------------------------------------------------------- polling

# pid_gone PID: the process has exited.
pid_gone() {
	! kill -0 "$1" 2>/dev/null
}

# Current time in milliseconds.
now_ms() {
	local us=${EPOCHREALTIME//[!0-9]/}
	echo $((us / 1000))
}

# wait_for SECONDS CMD...: poll CMD until it succeeds or the deadline
# passes. Starts at 50 ms between polls, backs off to 500 ms.
wait_for() {
	local limit_ms=$(($1 * 1000)) start delay=0.05
	shift
	start=$(now_ms)
	while :; do
		"$@" && return 0
		(($(now_ms) - start >= limit_ms)) && return 1
		sleep "$delay"
		case $delay in
		0.05) delay=0.1 ;;
		0.1) delay=0.2 ;;
		*) delay=0.5 ;;
		esac
	done
}

# --------------------------------------------------------------- dmesg

# Kernel log lines that fail a test. slub_debug reports read
# "BUG <cache> (<taint>): <what>"; hung tasks "INFO: task ... blocked for
# more than N seconds".
DMESG_BAD_RE='WARNING:|BUG:|BUG [^ ]+ \(|kernel BUG at|KFENCE|general protection|Call Trace|Oops|soft lockup|hard LOCKUP|hung_task|blocked for more than|UBSAN|list_(add|del) corruption|Poison overwritten|Redzone overwritten|refcount_t:|rcu: INFO|detected stalls'
# Lines matching this (ERE) are never counted; tests may extend it.
DMESG_IGNORE_RE=${DMESG_IGNORE_RE:-}

# Taint bits that are expected: O (out-of-tree, 12), E (unsigned, 13),
# N (test module, 18).
TAINT_EXPECTED=$(((1 << 12) | (1 << 13) | (1 << 18)))
readonly TAINT_LETTERS=PFSRMBUDAWCIOELKXTN

DMESG_MARK=
DMESG_TAINT0=0

# kmsg_mark WHAT: write a unique line naming WHAT into the kernel log and
# print it, for dmesg_since.
kmsg_mark() {
	local mark
	mark="xrdma-selftest: $1 $$ $(now_ms)"
	echo "$mark" >/dev/kmsg
	echo "$mark"
}

# dmesg_mark [TAG]: remember "now" in the kernel log (and the taint).
dmesg_mark() {
	DMESG_MARK=$(kmsg_mark "mark ${1:-${0##*/}}")
	DMESG_TAINT0=$(</proc/sys/kernel/tainted)
}

# dmesg_since MARK: the kernel log after the last line holding MARK (all
# of it if MARK scrolled away or is empty).
dmesg_since() {
	dmesg | awk -v m="$1" '
		{ lines[NR] = $0 }
		m != "" && index($0, m) { start = NR }
		END { for (i = start + 1; i <= NR; i++) print lines[i] }'
}

# Kernel log since the mark.
dmesg_since_mark() {
	dmesg_since "$DMESG_MARK"
}

# taint_letters BITS: "W" for 1<<9 and so on.
taint_letters() {
	local bits=$1 i out=
	for ((i = 0; i < ${#TAINT_LETTERS}; i++)); do
		((bits & (1 << i))) && out+=${TAINT_LETTERS:i:1}
	done
	echo "$out"
}

# Lockdep reports known not to be ours: "WANTED|HELD" lock class pairs,
# space-separated, matched in either order.
#   nvmet_config_sem and &id_priv->handler_mutex (the target, nvmet-rdma
#   with rdma_cm; seen once in make check-debug, in test_flap): a port
#   disabled through configfs destroys its listening CM id under
#   nvmet_config_sem, and a fabrics Connect that reaches the target before
#   it has handled ESTABLISHED is executed from its CM handler, with the
#   new CM id's handler_mutex held, and takes nvmet_config_sem. Both
#   mutexes are of one lock class but never the same one; no host frame
#   is in either chain, and any host that sends its Connect when the QP
#   is up (nvme-rdma does) can be the one that meets it.
DMESG_KNOWN_LOCKDEP='nvmet_config_sem|&id_priv->handler_mutex'

# dmesg_drop_known: filter a kernel log (stdin to stdout) by dropping each
# complete lockdep "circular locking dependency" report (up to the end of
# its stack backtrace) whose lock pair is in DMESG_KNOWN_LOCKDEP and in
# which no line names xrdma code (an xrdma_ symbol or the nvme_xrdma
# module); one line says what was dropped. Anything else is kept as it is.
dmesg_drop_known() {
	awk -v known="$DMESG_KNOWN_LOCKDEP" '
	function lockname(line,    n) {
		if (!match(line, /[0-9a-f]+ \(.*\)\{/))
			return ""
		n = substr(line, RSTART, RLENGTH)
		sub(/^[0-9a-f]+ \(/, "", n)
		sub(/\)\{$/, "", n)
		return n
	}
	function flush(    i, ok, k, nk) {
		ok = 0
		if (done && !ours && want != "" && held != "") {
			nk = split(known, k, " ")
			for (i = 1; i <= nk; i++)
				if (k[i] == want "|" held || k[i] == held "|" want)
					ok = 1
		}
		if (ok)
			print "xrdma-selftest: dropped a known lockdep report" \
			      " (not xrdma): " want " while holding " held
		else
			for (i = 1; i <= nb; i++)
				print blk[i]
		nb = inblk = done = ours = bt = 0
		want = held = expect = ""
	}
	# the rule of "=" lockdep prints above its title belongs to the report
	!inblk && /WARNING: possible circular locking dependency detected/ {
		inblk = 1
		if (rule != "")
			blk[++nb] = rule
		rule = ""
	}
	!inblk && rule != "" { print rule; rule = "" }
	!inblk && /\] =+[[:space:]]*$/ { rule = $0; next }
	!inblk { print; next }
	{
		blk[++nb] = $0
		if (/xrdma_[a-z]|\[nvme_xrdma\]/)
			ours = 1
		if (expect != "" && (n = lockname($0)) != "") {
			if (expect == "want") want = n; else held = n
			expect = ""
		}
		if (/is trying to acquire lock:/) expect = "want"
		if (/but task is already holding lock:/) expect = "held"
		if (/stack backtrace:/) bt = 1
		if (bt && /<\/TASK>/) { done = 1; flush() }
	}
	END {
		if (inblk)
			flush()
		if (rule != "")
			print rule
	}'
}

# dmesg_check: fail (and show the lines) if the kernel log since the mark
# has a warning, BUG, oops, KFENCE/slub report, lockup or hung task, or if
# the kernel picked up an unexpected taint. Known lockdep reports of code
# that is not ours are dropped first (dmesg_drop_known) and said so.
dmesg_check() {
	local log bad new rc=0
	log=$(dmesg_since_mark | dmesg_drop_known)
	grep 'xrdma-selftest: dropped a known' <<<"$log"
	bad=$(grep -E "$DMESG_BAD_RE" <<<"$log")
	[[ -n $DMESG_IGNORE_RE && -n $bad ]] &&
		bad=$(grep -Ev "$DMESG_IGNORE_RE" <<<"$bad")
	if [[ -n $bad ]]; then
		echo "kernel log has problems since the mark:"
		# The first report with some context, then all matching lines.
		grep -E -m1 -A25 "$DMESG_BAD_RE" <<<"$log"
		echo "--- all matching lines:"
		head -n 40 <<<"$bad"
		rc=1
	fi
	new=$(($(</proc/sys/kernel/tainted) & ~DMESG_TAINT0 & ~TAINT_EXPECTED))
	if ((new)); then
		echo "kernel newly tainted: $(taint_letters "$new") ($new)"
		rc=1
	fi
	return "$rc"
}

# --------------------------------------------------------------- misc

# Per-test scratch directory, removed by env_cleanup.
TEST_TMP=
make_test_tmp() {
	TEST_TMP=$(mktemp -d "/tmp/xrdma-selftest.${0##*/}.XXXXXX")
}

env_cleanup() {
	[[ -n $TEST_TMP && -d $TEST_TMP ]] && rm -rf "$TEST_TMP"
	TEST_TMP=
	core_param_restore
}

# nvme-core parameters ------------------------------------------------

# The value each nvme_core parameter had before core_param first changed
# it, by name; env_cleanup puts them back.
declare -gA CORE_PARAM0=()

# core_param NAME VALUE: set nvme_core's module parameter NAME to VALUE,
# keeping the value it had first for core_param_restore
core_param() {
	local f=/sys/module/nvme_core/parameters/$1
	if [[ -z ${CORE_PARAM0[$1]+set} ]]; then
		CORE_PARAM0[$1]=$(<"$f") || return 1
	fi
	echo "$2" >"$f"
}

# core_param_restore: every parameter core_param changed gets its first
# value back (if nvme_core is still loaded)
core_param_restore() {
	local p f
	for p in "${!CORE_PARAM0[@]}"; do
		f=/sys/module/nvme_core/parameters/$p
		[[ -w $f ]] && echo "${CORE_PARAM0[$p]}" >"$f"
	done
	CORE_PARAM0=()
}

# Module helpers ------------------------------------------------------

module_loaded() {
	[[ -d /sys/module/${1//-/_} ]]
}

# module_refcnt NAME: the raw /sys/module/NAME/refcnt, or -1 if absent.
module_refcnt() {
	local f=/sys/module/${1//-/_}/refcnt
	if [[ -r $f ]]; then cat "$f"; else echo -1; fi
}
