#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The system going down while controllers keep reconnecting (it must not
# hang: a guest with a dead target reboots in seconds), the host's half:
# after the guest that ran prepare.sh powered itself off, read its
# console log.
#
#   check.sh GUEST_OUTPUT CONSOLE_LOG
#
# Prints the guest's KTAP, then its own, then one line that counts both:
# "N passed, N failed, N skipped". From the mark prepare.sh left on:
#   - each controller that was reconnecting is deleted when the system goes
#     down ("system going down: deleting the controller, not connected"),
#     and the going down says it waited for them;
#   - the guest is powered off ("reboot: Power down") within 10 s
#     (times XRDMA_TIMEOUT_SCALE) of the mark;
#   - no WARN, BUG, oops, KASAN report or hung task.
# With XRDMA_REBOOT_TR=rdma only the time is printed (nvme-rdma has no
# such handling); the log checks are skipped.

set -u
readonly OUT=${1:?guest output} CON=${2:?console log}
readonly TR=${XRDMA_REBOOT_TR:-xrdma}
readonly N=4
readonly LIMIT_MS=$((10000 * ${XRDMA_TIMEOUT_SCALE:-1}))
readonly MARK="xrdma-reboot: powering off with $N $TR controllers reconnecting"

pass=0
fail=0
skip=0
no=1
result() {
	if [[ $1 == skip ]]; then
		echo "ok $no $2 # SKIP $TR"
		skip=$((skip + 1))
	elif (($1 == 0)); then
		echo "ok $no $2"
		pass=$((pass + 1))
	else
		echo "not ok $no $2"
		fail=$((fail + 1))
	fi
	no=$((no + 1))
}

# The console log from the mark on.
after_mark() {
	awk -v m="$MARK" 'on { print } index($0, m) { on = 1 }' "$CON"
}

# stamp PATTERN: the kernel timestamp (ms) of the first line of standard
# input that has PATTERN, empty if none.
stamp() {
	awk -v p="$1" 'index($0, p) {
		if (match($0, /\[ *[0-9]+\.[0-9]+\]/)) {
			t = substr($0, RSTART + 1, RLENGTH - 2)
			printf "%d\n", t * 1000
			exit
		}
	}'
}

cat "$OUT"
echo "TAP version 13"
echo "# reboot: the guest's console log ($CON)"
echo "1..4"

t0=$(stamp "$MARK" <"$CON" 2>/dev/null)
if [[ -n $t0 ]]; then
	result 0 "the guest marked its log before going down"
else
	echo "# no line '$MARK'"
	result 1 "the guest marked its log before going down"
fi

if [[ $TR != xrdma ]]; then
	result skip "the controllers that were reconnecting are deleted"
else
	n=$(after_mark | grep -c "system going down: deleting the controller, not connected")
	echo "# $n of $N controllers deleted as the system went down"
	after_mark | grep "system going down: .* deleted in\|deletions still running" |
		sed 's/^/# /'
	((n == N)) && after_mark | grep -q "system going down: $N controllers not connected deleted in"
	result $? "the controllers that were reconnecting are deleted"
fi

t1=$(after_mark | stamp "reboot: Power down")
if [[ -n ${t0:-} && -n $t1 ]]; then
	echo "# $TR: powered off $((t1 - t0)) ms after the mark (limit $LIMIT_MS ms)"
	((t1 - t0 <= LIMIT_MS))
	result $? "powered off in bounded time"
else
	echo "# no 'reboot: Power down' after the mark"
	result 1 "powered off in bounded time"
fi

pat='WARNING:|BUG:|Oops|KASAN|general protection|blocked for more than'
after_mark | grep -E "$pat" | head -n 5 | sed 's/^/# /'
! after_mark | grep -qE "$pat"
result $? "no kernel warnings while going down"

guest_skip=$(grep -cE '^ok [0-9]+ .* # SKIP' "$OUT")
guest_pass=$(($(grep -cE '^ok [0-9]+ ' "$OUT") - guest_skip))
guest_fail=$(grep -cE '^not ok [0-9]+ ' "$OUT")
# a guest that did not get through its plan counts as one failure
grep -q '^# Totals: ' "$OUT" || guest_fail=$((guest_fail + 1))
echo "$((pass + guest_pass)) passed, $((fail + guest_fail)) failed, $((skip + guest_skip)) skipped"
((fail + guest_fail == 0))
