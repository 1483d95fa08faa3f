# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# KTAP output helpers for the xrdma shell selftests (sourced, not run).
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
# Typical use:
#
#   ktap_header
#   ktap_plan 2
#   ktap_run "module loads" t_load
#   ktap_run "module unloads" t_unload
#   ktap_finish
#
# A subtest function returns 0 (pass), $KSFT_SKIP (skip; set KTAP_REASON
# first) or anything else (fail). Its stdout and stderr are shown as "# "
# diagnostics. It runs in the test's shell, so variables it sets are seen
# by later subtests.

# shellcheck disable=SC2034  # the codes are used by the scripts sourcing us
KSFT_PASS=0
KSFT_FAIL=1
KSFT_XFAIL=2
KSFT_XPASS=3
KSFT_SKIP=4

KTAP_NUM=0
KTAP_PASS=0
KTAP_FAIL=0
KTAP_SKIP=0
KTAP_PLAN=
KTAP_HEADER_DONE=0
KTAP_REASON=

# "TAP version 13" (what kselftest prints), once.
ktap_header() {
	((KTAP_HEADER_DONE)) && return 0
	echo "TAP version 13"
	KTAP_HEADER_DONE=1
}

# ktap_plan N
ktap_plan() {
	KTAP_PLAN=$1
	echo "1..$1"
}

# ktap_diag TEXT...: one "# " line per line of TEXT.
ktap_diag() {
	local line
	while IFS= read -r line; do
		echo "# $line"
	done <<<"$*"
}

# Filter: prefix every line of stdin with "# " (unbuffered).
ktap_prefix() {
	sed -u 's/^/# /'
}

# ktap_cmd CMD...: run CMD with its output as diagnostics; CMD's status.
ktap_cmd() {
	"$@" 2>&1 | ktap_prefix
	return "${PIPESTATUS[0]}"
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

ktap_pass() {
	KTAP_NUM=$((KTAP_NUM + 1))
	KTAP_PASS=$((KTAP_PASS + 1))
	echo "ok $KTAP_NUM $*"
}

ktap_fail() {
	KTAP_NUM=$((KTAP_NUM + 1))
	KTAP_FAIL=$((KTAP_FAIL + 1))
	echo "not ok $KTAP_NUM $*"
}

# ktap_skip DESCRIPTION REASON
ktap_skip() {
	KTAP_NUM=$((KTAP_NUM + 1))
	KTAP_SKIP=$((KTAP_SKIP + 1))
	echo "ok $KTAP_NUM $1 # SKIP ${2:-}"
}

# ktap_result RC DESCRIPTION: 0 pass, $KSFT_SKIP skip (reason in
# KTAP_REASON), anything else fail.
ktap_result() {
	local rc=$1
	shift
	case $rc in
	0) ktap_pass "$*" ;;
	"$KSFT_SKIP") ktap_skip "$*" "${KTAP_REASON:-}" ;;
	*) ktap_fail "$*" ;;
	esac
}

# ktap_run DESCRIPTION FUNCTION [ARGS...]: run one subtest.
ktap_run() {
	local desc=$1 rc
	shift
	KTAP_REASON=
	# Run in this shell (so the function may set state), output through
	# a "# " prefixer; ktap_quiet waits for it so lines stay in order.
	ktap_quiet "$@"
	rc=$?
	ktap_result "$rc" "$desc"
	return "$rc"
}

# ktap_require VAR REASON: in a subtest, "ktap_require CTRL 'no controller'
# || return" skips the subtest when an earlier one did not set VAR.
ktap_require() {
	[[ -n ${!1:-} ]] && return 0
	KTAP_REASON=$2
	return "$KSFT_SKIP"
}

# ktap_skip_all REASON: the whole test is skipped ("1..0 # SKIP").
ktap_skip_all() {
	ktap_header
	echo "1..0 # SKIP $*"
	exit "$KSFT_SKIP"
}

# ktap_bail REASON: abort the whole test as failed.
ktap_bail() {
	ktap_header
	echo "Bail out! $*"
	exit "$KSFT_FAIL"
}

# Print totals and exit with the kselftest code for the counts.
ktap_finish() {
	local rc
	if [[ -n $KTAP_PLAN ]] && ((KTAP_NUM != KTAP_PLAN)); then
		ktap_diag "planned $KTAP_PLAN tests but ran $KTAP_NUM"
		KTAP_FAIL=$((KTAP_FAIL + 1))
	fi
	echo "# Totals: pass:$KTAP_PASS fail:$KTAP_FAIL xfail:0 xpass:0" \
		"skip:$KTAP_SKIP error:0"
	if ((KTAP_FAIL)); then
		rc=$KSFT_FAIL
	elif ((KTAP_PASS == 0 && KTAP_SKIP > 0)); then
		rc=$KSFT_SKIP
	else
		rc=$KSFT_PASS
	fi
	exit "$rc"
}
