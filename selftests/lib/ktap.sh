# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# KTAP output helpers for the xrdma shell selftests (sourced, not run).
#
# The names and their meaning are those of the kernel's
# tools/testing/selftests/kselftest/ktap_helpers.sh (ktap_print_header,
# ktap_set_plan, ktap_test_pass/fail/skip/result, ktap_print_msg,
# ktap_skip_all, ktap_exit_fail_msg, ktap_print_totals, ktap_finished,
# KTAP_CNT_*, KSFT_*); the implementation is ours. Ours only: ktap_run,
# ktap_quiet, ktap_prefix, ktap_require and ktap_exit_skip_msg.
#
# A test using these prints, in order:
#
#   TAP version 13
#   1..N
#   # diagnostics start with "# "
#   ok 1 description
#   not ok 2 description
#   ok 3 description # SKIP reason
#   # Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0
#
# and exits with the kselftest codes: 0 if nothing failed, 1 if anything
# failed (or the plan was not met), 4 if everything was skipped.
#
# Typical use (lib/frame.sh's test_begin prints the header and the plan):
#
#   ktap_print_header
#   ktap_set_plan 2
#   ktap_run "module loads" t_load
#   ktap_run "module unloads" t_unload
#   ktap_finished
#
# A subtest function returns 0 (pass), $KSFT_SKIP (skip; set KTAP_REASON
# first) or anything else (fail). Its stdout and stderr are shown as "# "
# diagnostics. It runs in the test's shell, so variables it sets are seen
# by later subtests.

# shellcheck disable=SC2034  # the codes are used by the scripts sourcing us
KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

KTAP_TESTNO=1
KTAP_CNT_PASS=0
KTAP_CNT_FAIL=0
KTAP_CNT_SKIP=0
KSFT_NUM_TESTS=
KTAP_REASON=

ktap_print_header() {
	echo "TAP version 13"
}

# ktap_set_plan N
ktap_set_plan() {
	KSFT_NUM_TESTS=$1
	echo "1..$1"
}

# ktap_print_msg TEXT...: one "# " line per line of TEXT.
ktap_print_msg() {
	local line
	while IFS= read -r line; do
		echo "# $line"
	done <<<"$*"
}

# Filter: prefix every line of stdin with "# " (unbuffered).
ktap_prefix() {
	sed -u 's/^/# /'
}

# ktap_quiet CMD...: run CMD (a function may set state) in this shell with
# its output shown as diagnostics; returns CMD's status. For setup steps
# that are not subtests of their own.
ktap_quiet() {
	local rc fd pfx
	exec {fd}> >(ktap_prefix)
	# the prefixer's pid: "$@" may start background jobs of its own, and
	# those must not hold the prefixer's pipe open (close $fd for "$@")
	pfx=$!
	"$@" >&"$fd" 2>&1 {fd}>&-
	rc=$?
	exec {fd}>&-
	wait "$pfx" 2>/dev/null
	return "$rc"
}

# ktap_test_line RESULT DESCRIPTION: the next numbered result line.
ktap_test_line() {
	echo "$1 $KTAP_TESTNO $2"
	KTAP_TESTNO=$((KTAP_TESTNO + 1))
}

# ktap_test_pass DESCRIPTION
ktap_test_pass() {
	KTAP_CNT_PASS=$((KTAP_CNT_PASS + 1))
	ktap_test_line ok "$1"
}

# ktap_test_fail DESCRIPTION
ktap_test_fail() {
	KTAP_CNT_FAIL=$((KTAP_CNT_FAIL + 1))
	ktap_test_line "not ok" "$1"
}

# ktap_test_skip DESCRIPTION [REASON]
ktap_test_skip() {
	KTAP_CNT_SKIP=$((KTAP_CNT_SKIP + 1))
	ktap_test_line ok "$1 # SKIP ${2:-}"
}

# ktap_test_result DESCRIPTION CMD...: run CMD, one result line for its
# status: 0 pass, $KSFT_SKIP skip (reason in KTAP_REASON), else fail.
# Returns CMD's status.
ktap_test_result() {
	local desc=$1 rc
	shift
	KTAP_REASON=
	"$@"
	rc=$?
	case $rc in
	0) ktap_test_pass "$desc" ;;
	"$KSFT_SKIP") ktap_test_skip "$desc" "$KTAP_REASON" ;;
	*) ktap_test_fail "$desc" ;;
	esac
	return "$rc"
}

# ktap_run DESCRIPTION FUNCTION [ARGS...]: one subtest, run in this shell
# (so the function may set state) with its output as diagnostics. With
# XRDMA_SUBTESTS set (an ERE), a subtest whose description does not match
# is skipped: a guest that only needs one subtest of a test (the
# offline-CPU guest of make check) names it and the checks it ends with.
ktap_run() {
	local desc=$1
	shift
	if [[ -n ${XRDMA_SUBTESTS:-} && ! $desc =~ $XRDMA_SUBTESTS ]]; then
		ktap_test_skip "$desc" "not in XRDMA_SUBTESTS"
		return "$KSFT_SKIP"
	fi
	ktap_test_result "$desc" ktap_quiet "$@"
}

# ktap_require VAR REASON: in a subtest, "ktap_require CTRL 'no controller'
# || return" skips the subtest when an earlier one did not set VAR.
ktap_require() {
	[[ -n ${!1:-} ]] && return 0
	KTAP_REASON=$2
	return "$KSFT_SKIP"
}

# ktap_skip_all REASON: the plan line of a test skipped as a whole.
ktap_skip_all() {
	echo "1..0 # SKIP $*"
}

# ktap_exit_skip_msg REASON: skip the whole test and exit (status 4).
ktap_exit_skip_msg() {
	ktap_skip_all "$@"
	exit "$KSFT_SKIP"
}

# ktap_exit_fail_msg REASON: abort the whole test as failed ("Bail out!").
ktap_exit_fail_msg() {
	echo "Bail out! $*"
	ktap_print_totals
	exit "$KSFT_FAIL"
}

ktap_print_totals() {
	echo "# Totals: pass:$KTAP_CNT_PASS fail:$KTAP_CNT_FAIL xfail:0 xpass:0" \
		"skip:$KTAP_CNT_SKIP error:0"
}

# Print the totals and exit with the kselftest code for the counts.
ktap_finished() {
	local ran=$((KTAP_TESTNO - 1))
	if [[ -n $KSFT_NUM_TESTS ]] && ((ran != KSFT_NUM_TESTS)); then
		ktap_print_msg "planned $KSFT_NUM_TESTS tests but ran $ran"
		KTAP_CNT_FAIL=$((KTAP_CNT_FAIL + 1))
	fi
	ktap_print_totals
	if ((KTAP_CNT_FAIL)); then
		exit "$KSFT_FAIL"
	elif ((KTAP_CNT_PASS == 0 && KTAP_CNT_SKIP > 0)); then
		exit "$KSFT_SKIP"
	fi
	exit "$KSFT_PASS"
}
