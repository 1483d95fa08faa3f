#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the xrdma selftests (inside the test VM: tools/vm/run -- $0).
#
#   run_selftests.sh [-l] [TEST...]
#
# TEST is a path like basic/test_module.sh (relative to this directory, or
# any path to a test script); default: every */test_*.sh in name order.
# -l lists the tests and exits.
#
# Semantics follow the kselftest runner: each test runs under
# "timeout --foreground" with the limit from the settings file of its
# directory ("timeout=N", see test_timeout below). Its output is shown
# with a "# " prefix (so its own KTAP nests), and the result becomes one
# top-level line:
#   exit 0   -> ok N name
#   exit 4   -> ok N name # SKIP
#   timeout  -> not ok N name # TIMEOUT
#   other    -> not ok N name # exit=RC
# Processes a test leaves behind in its process group are killed.
#
# The last line is "P passed, F failed, S skipped", counted over SUBTESTS
# (the "ok"/"not ok" lines of each test's own KTAP). A test that skips as
# a whole ("1..0 # SKIP") counts as one skipped; a test that fails without
# any failing subtest (crash, timeout, bail out, plan not met) adds one
# failure; so does a rig teardown that leaves something behind.
#
# XRDMA_NO_REMOTE_INV=1 runs the tests with nvme-xrdma's test hook
# no_remote_inv set: the commands ask for no remote invalidation, so that
# nvmet-rdma answers as a target that never invalidates remotely would,
# and every FRWR command ends with the host's own LOCAL_INV.
#
# The rig (lib/rig.sh) is brought up by the first test that needs it and
# stays up (XRDMA_RIG_PERSIST=1) until all tests ran; then it is torn down
# and must leave nothing behind. Exit status: 0 if nothing failed, else 1.

set -u

SELFTESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
readonly SELFTESTS

# shellcheck source=lib/frame.sh
. "$SELFTESTS/lib/frame.sh"

export XRDMA_RIG_PERSIST=1

# ---------------------------------------------------------------- tests

list=0
if [[ ${1:-} == -l ]]; then
	list=1
	shift
fi

tests=()
if (($#)); then
	for t in "$@"; do
		if [[ -f $t ]]; then
			tests+=("$(readlink -f "$t")")
		elif [[ -f $SELFTESTS/$t ]]; then
			tests+=("$SELFTESTS/$t")
		elif [[ -f $SELFTESTS/${t#selftests/} ]]; then
			tests+=("$SELFTESTS/${t#selftests/}")
		else
			echo "run_selftests: no such test: $t" >&2
			exit 2
		fi
	done
else
	for t in "$SELFTESTS"/*/test_*.sh; do
		[[ -f $t ]] && tests+=("$t")
	done
fi

# Name relative to selftests/, e.g. basic/test_module.sh.
test_name() {
	local n=${1#"$SELFTESTS"/}
	echo "$n"
}

if ((list)); then
	for t in "${tests[@]}"; do test_name "$t"; done
	exit 0
fi

# In the guest (/etc is a throw-away overlay there), nvme-xrdma loads with
# its fault and delay hooks on: arming one then patches no code under
# traffic, which under multi-threaded TCG can leave a stale int3 behind
# ("Oops: int3" at a hook). So does no_remote_inv with
# XRDMA_NO_REMOTE_INV=1: as an option, it holds across the reloads of a
# test. Not on a real machine's /etc, and not for a module of the
# production flavour, which has none of these hooks (make without
# XRDMA_TEST_HOOKS=1): the tests that arm one fail on it.
readonly NO_REMOTE_INV=${XRDMA_NO_REMOTE_INV:-0}
if [[ $(findmnt -n -o FSTYPE /etc 2>/dev/null) == overlay ]] &&
	[[ ! -e /sys/module/nvme_xrdma ]]; then
	if modinfo -F parm nvme_xrdma 2>/dev/null | grep -q '^test_hooks:'; then
		echo "options nvme_xrdma test_hooks=1 no_remote_inv=$NO_REMOTE_INV" \
			>/etc/modprobe.d/xrdma-selftests.conf
	elif modinfo -n nvme_xrdma >/dev/null 2>&1; then
		echo "run_selftests: $(modinfo -n nvme_xrdma) has no test hooks" \
			"(built without XRDMA_TEST_HOOKS=1): the tests that arm a" \
			"fault or a delay point fail" >&2
	fi
fi

# The time limit of test $1: "timeout=N" from the settings file of its
# directory (45 s without one, as in kselftest), or XRDMA_TIMEOUT for every
# test (kselftest's --override-timeout; make soak). XRDMA_TIMEOUT_SCALE=N
# multiplies it (the debug kernel is slow).
test_timeout() {
	local t=${XRDMA_TIMEOUT:-} s
	s=$(dirname "$1")/settings
	if [[ -z $t && -r $s ]]; then
		t=$(sed -n 's/^timeout=\([0-9]\+\)$/\1/p' "$s" | tail -n 1)
	fi
	echo "$((${t:-45} * ${XRDMA_TIMEOUT_SCALE:-1}))"
}

# ---------------------------------------------------------------- run

# kmemleak (the debug-kernel tier, make check-debug): before a test, report
# and forget every suspect so far; after it, scan again. Anything new
# fails the test. An object becomes a suspect once a scan finds it
# unreferenced and it is older than 5 s, hence the wait.
readonly KMEMLEAK=/sys/kernel/debug/kmemleak
kmemleak_scan() {
	[[ -w $KMEMLEAK ]] || return 0
	sleep 6
	echo scan >"$KMEMLEAK" && echo scan >"$KMEMLEAK"
}
kmemleak_forget() {
	[[ -w $KMEMLEAK ]] || return 0
	kmemleak_scan
	echo clear >"$KMEMLEAK"
}
kmemleak_suspects() {
	[[ -r $KMEMLEAK ]] || return 0
	kmemleak_scan
	cat "$KMEMLEAK"
}

work=$(mktemp -d /tmp/xrdma-selftests.XXXXXX)
trap 'rm -rf "$work"' EXIT

passed=0
failed=0
skipped=0
suite_start=$(now_ms)

ktap_print_header
ktap_print_msg "kernel $(uname -r), $(nproc) cpus, $(awk '/MemTotal/ { print int($2 / 1024) " MiB" }' /proc/meminfo)"
if ko=$(modinfo -n nvme-xrdma 2>/dev/null); then
	ver=$(modinfo -F version nvme-xrdma)
	ktap_print_msg "nvme-xrdma: $ko${ver:+ version $ver}," \
		"sha256 $(sha256sum <"$ko" | cut -c1-12)"
else
	ktap_print_msg "nvme-xrdma: not installed"
fi
((NO_REMOTE_INV)) &&
	ktap_print_msg "no_remote_inv=1: commands ask for no remote invalidation"
ktap_set_plan "${#tests[@]}"

# A lockdep kernel (make check-debug) must start with lockdep on. A report
# before the first test, at boot say, switches it off for every test of
# the boot, and no test sees it: each looks only at what the log gained
# while it ran.
if [[ -r /proc/lockdep_stats ]] &&
	[[ $(awk '$1 == "debug_locks:" { print $2 }' /proc/lockdep_stats) == 0 ]]; then
	ktap_print_msg "lockdep is off before the first test, after:"
	dmesg | grep -m1 -A2 -E 'BUG:|WARNING:|possible circular' |
		ktap_prefix
	failed=$((failed + 1))
fi

num=0
for t in "${tests[@]}"; do
	num=$((num + 1))
	name=$(test_name "$t")
	limit=$(test_timeout "$t")
	log=$work/$num.log
	fifo=$work/$num.fifo
	echo "# selftests: ${name%/*}: ${name##*/}"
	if [[ ! -x $t ]]; then
		echo "not ok $num $name # exit=126 (not executable)"
		failed=$((failed + 1))
		continue
	fi

	kmemleak_forget
	start=$(now_ms)
	mkfifo "$fifo"
	# The test runs as its own process group (job control on just for
	# this launch), so what it leaves behind can be killed by group id.
	set -m
	(cd "$(dirname "$t")" &&
		exec timeout --foreground -k 10 "$limit" "$t") \
		</dev/null >"$fifo" 2>&1 &
	tpid=$!
	set +m
	# Live output, prefixed; the raw copy is parsed for subtest results.
	tee "$log" <"$fifo" | ktap_prefix &
	rpid=$!
	wait "$tpid"
	rc=$?
	if kill -0 -- "-$tpid" 2>/dev/null; then
		echo "# $name: killing processes it left behind"
		kill -TERM -- "-$tpid" 2>/dev/null
		wait_for 5 eval "! kill -0 -- -$tpid 2>/dev/null"
		kill -KILL -- "-$tpid" 2>/dev/null
	fi
	wait "$rpid"
	rm -f "$fifo"
	secs=$((($(now_ms) - start) / 1000))

	# Subtest results at the test's own top level (no indentation).
	read -r sp sf ss < <(awk '
		/^ok [0-9]+/ { if ($0 ~ /# [Ss][Kk][Ii][Pp]/) s++; else p++ }
		/^not ok [0-9]+/ { f++ }
		/^1\.\.0 # SKIP/ { s++ }
		END { print p + 0, f + 0, s + 0 }' "$log")
	passed=$((passed + sp))
	failed=$((failed + sf))
	skipped=$((skipped + ss))

	leaks=$(kmemleak_suspects)
	if [[ -n $leaks ]]; then
		echo "# $name: kmemleak reports $(grep -c '^unreferenced object' <<<"$leaks") suspects:"
		head -n 60 <<<"$leaks" | ktap_prefix
		((rc == 0 || rc == KSFT_SKIP)) && rc=1
		((sf == 0)) || failed=$((failed + 1))
	fi

	timed_out=0
	if ((rc == 124 || (rc == 137 && secs >= limit))); then
		timed_out=1
	fi
	if ((rc == 0)); then
		echo "ok $num $name"
	elif ((rc == KSFT_SKIP)); then
		echo "ok $num $name # SKIP"
	elif ((timed_out)); then
		echo "not ok $num $name # TIMEOUT ${limit} seconds"
	else
		echo "not ok $num $name # exit=$rc"
	fi
	if ((rc != 0 && rc != KSFT_SKIP && sf == 0)); then
		failed=$((failed + 1))
	fi
	echo "# $name: ${secs}s"
done

# ---------------------------------------------------------------- teardown

dmesg_mark teardown
teardown_out=$(rig_teardown 2>&1)
teardown_rc=$?
if [[ -n $teardown_out ]]; then
	ktap_print_msg "$teardown_out"
fi
if ((teardown_rc)); then
	ktap_print_msg "rig teardown left things behind"
	failed=$((failed + 1))
fi
if ! splat=$(dmesg_check); then
	ktap_print_msg "kernel problems during teardown:"
	ktap_print_msg "$splat"
	failed=$((failed + 1))
fi

ktap_print_msg "total time $((($(now_ms) - suite_start) / 1000))s"
echo "$passed passed, $failed failed, $skipped skipped"
((failed == 0))
