#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two actors of the controller life cycle at once, each window held open
# by a delay point (/sys/kernel/debug/nvme-xrdma/delay/, delay.c), so that
# the interleaving happens on every run.  Each is named (XRDMA_RACES) after
# the interleaving it holds open:
# - parked-free: a creation that fails while its port is down parks the
#   admin queue's CM id, which holds a controller reference; fabrics frees
#   the options when the creation returns, and the parked id, released once
#   the port is back, drops the last reference: the free must not read the
#   options (slub poison made it walk past the queue array);
# - remove-during-free: an RDMA device removed while a disconnected
#   controller is being freed: the removal walks the controller list and
#   must not find the controller whose queues are gone;
# - delete-during-port-up: a controller deleted while a port-up event is
#   taking its waiting reconnect off the timer to run it now: no reconnect
#   may run once the deletion began, nor outlive the controller;
# - end-during-submit: a read started and held before it is linked to its
#   queue (delay point queue_rq) while its controller's deletion, its target
#   silent, stops the queue and ends the commands: the cancel ends the read,
#   and the submitter, finding its queue stopped, must not end it a second
#   time (blk-mq WARNs on a request freed twice);
# - stop-before-connect: a connection of a setup lost (tools/badtarget
#   idle-dreq) before the I/O queues' fabrics Connects, held back meanwhile:
#   the abort stops every queue first, and a stopped queue must not publish
#   its tags (xrdma_queue_free() warns if a queue is freed with them
#   published);
# - end-during-resize: a reconnect granted fewer I/O queues, its resize of
#   the tag set held (delay point resize) while the attempt's connections
#   are lost: the end work's walk of the tag set must wait for the resize,
#   which reallocates the maps it walks;
# - park-during-removal: a setup on an RDMA device being removed, after our
#   client let go of the device (delay point remove_one), fails with its
#   port down and parks its admin queue's CM id: rdma_cm's removal must end
#   the parked id at once, not wait for its 60 s deadline;
# - removal-during-stop: an RDMA device removed while a reset's queue stop
#   is held in its drain: the removal walks the controllers holding their
#   list's mutex, which connects and frees need too, and must not wait for
#   the stop;
# - reset-behind-handler: a reset while the handler of one read's response
#   is held before it copies the data out of the read pool, the other read's
#   response queued behind it: the stop withdraws the queue's tags only once
#   its drain is through, so the queued response still finds its command
#   (before the fix: "bad response (no command sent yet)");
# - drain-timeout-in-handler: a reset whose I/O queue drain times out
#   (fault/drain) while the handler of a read's response is held before it
#   copies the data out of the read pool: the stop must wait out that
#   handler before the cancel ends the read and the free takes the pool
#   (before the fix, the handler woke to a freed pool and oopsed); the read
#   returns what was written.
# - qp-read: a read of the admin queue's qp_ack_timeout and qp_retry_count
#   (sysfs, any user) while a reset's stop of the admin queue is held
#   after its drain, stop_lock held: the read shows what the connection
#   was given, at once; it must not wait for the stop (the values used to
#   be asked of the device under stop_lock, on some devices a firmware
#   command that a wedged device leaves a stop waiting on).
# - linv: a LOCAL_INV posted during a deletion's drain: against a target
#   that never invalidates remotely (tools/badtarget no-inv), two reads
#   answered, the handler of the first (through the read pool) held at
#   rsp_copy, the second's (FRWR) queued behind it, the target then stopped;
#   the deletion finds it silent and stops the queues during the hold, so
#   the second read's handler runs inside the drain and posts its LOCAL_INV
#   on the flushed QP.  The poller is held once it reaped the drain's last
#   marker (delay point drain_done) while the deletion frees the tag set and
#   then the queue: the LOCAL_INV's flush must be handled before the drain
#   returns, not by that poller afterwards, through the freed request
#   (before the fix: a NULL call in __ib_process_cq(), init_on_free having
#   zeroed the request's pages).
# - go-live: a connection lost between a setup's last check and its
#   change to LIVE (delay point go_live): a new discovery controller on
#   badtarget no-aen, which once live sends nothing of its own, its target
#   killed during the hold and started again; the controller must not stay
#   live on a queue the lost connection stopped, with nobody to recover
#   it: the attempt fails, or the live controller recovers, and it answers
#   an Identify again;
# - removal-while-owned: an RDMA device removed while a setup still owns
#   its admin queue's CM id (the setup held at io_setup, the device's
#   netdev down): rdma_cm tells the owned id of the removal and waits for
#   it; the setup fails with its port down, and its release must destroy
#   the id at once, not park it for a port that never comes back (60 s).
# Each subtest checks the kernel log for what the window must show, so a
# subtest that did not reach its window fails instead of passing.
#
# The second path (a dummy netdev with its own rxe device) is the one
# taken down: rxe's GSI QP may wedge when a CM message meets its netdev
# going down, and the path goes at the end.
# XRDMA_RACES=parked-free,delete-during-port-up runs some, by the names
# above.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/frame.sh
. "$DIR/../lib/frame.sh"

readonly TR=xrdma
readonly SCALE=${XRDMA_TIMEOUT_SCALE:-1}
readonly NETDEV_B=xrdma-rig4
readonly RXE_B=${RIG_PROVIDER}4
readonly IP_B=198.18.0.1
readonly PORT_B=14
readonly NETDEV_C=xrdma-rig5
readonly RXE_C=${RIG_PROVIDER}5
readonly IP_C=198.18.1.1
readonly PORT_C=15
ALL_RACES=parked-free,remove-during-free,delete-during-port-up
ALL_RACES+=,end-during-submit,stop-before-connect,end-during-resize
ALL_RACES+=,park-during-removal,removal-during-stop,reset-behind-handler
ALL_RACES+=,drain-timeout-in-handler,qp-read,linv,go-live
ALL_RACES+=,removal-while-owned
readonly RACES=${XRDMA_RACES:-$ALL_RACES}
readonly QID_MAX=$RIG_NVMET/subsystems/$RIG_NQN_RAM/attr_qid_max
readonly BT_PORT=4425
readonly BT_NQN=nqn.2026-11.io.xrdma:races
readonly DISC_NQN=nqn.2014-08.org.nvmexpress.discovery
CTRL=
QID_MAX0=
PATH_B=0
PATH_C=0
BG_PID=
BT_PID=
RM_PID=

cleanup() {
	[[ -n $BT_PID ]] && kill -KILL "$BT_PID" 2>/dev/null
	[[ -n $RM_PID ]] && wait "$RM_PID"
	# every delay point off first, so nothing below is held: this one
	# counts, test_end's own comes after the deletions
	delay_reset
	[[ -n $BG_PID ]] && wait "$BG_PID"
	nvme_delete_ctrls "$TR"
	[[ -n $QID_MAX0 ]] && echo "$QID_MAX0" >"$QID_MAX"
	rig_port_open 2>/dev/null
	((PATH_C)) && rig_del_path "$NETDEV_C" "$RXE_C" "$PORT_C"
	ip link del "$NETDEV_C" 2>/dev/null
	((PATH_B)) && rig_del_path "$NETDEV_B" "$RXE_B" "$PORT_B"
	test_end "$TR"
}
trap cleanup EXIT

TEST_CMDS="ip rdma $BADTARGET"
test_begin 18

# race NAME: whether XRDMA_RACES asks for it; a subtest it leaves out skips.
race() {
	[[ ,$RACES, == *,$1,* ]] && return 0
	# shellcheck disable=SC2034 # ktap_test_result reads it
	KTAP_REASON="not in XRDMA_RACES"
	return "$KSFT_SKIP"
}

# race_mark NAME: where logged and since_race start looking (the test's
# own mark stays for dmesg_check).
RACE_MARK=
race_mark() {
	RACE_MARK=$(kmsg_mark "race $1")
}

# since_race: the kernel log since race_mark.
since_race() {
	dmesg_since "$RACE_MARK"
}

# logged ERE: a kernel line since race_mark matches ERE.
logged() {
	since_race | grep -Eq "$1"
}

# race_clean: no WARNING or BUG since race_mark; shows any.
race_clean() {
	logged "WARNING|BUG" || return 0
	since_race | grep -E -A3 "WARNING|BUG" | sed 's/^/  /'
	return 1
}

# race_order ERE: the last word of each kernel line since race_mark that
# ERE matches, in order, on one line.
race_order() {
	since_race | grep -oE "$1" | sed 's/.* //' | tr '\n' ' '
}

# race_begin_c NAME: a subtest whose race needs a controller (CTRL, on the
# RAM subsystem) and the dummy netdev for device C; marks the race.
race_begin_c() {
	race "$1" || return
	connect_subsys "$TR" "$RIG_NQN_RAM" || return 1
	race_mark "$1"
	ip link add "$NETDEV_C" type dummy && ip link set "$NETDEV_C" up
}

# link_b up|down, and for up wait until the port is ACTIVE again
link_b() {
	ip link set "$NETDEV_B" "$1" || return 1
	[[ $1 == up ]] || return 0
	wait_for 30 rig_rxe_active "$RXE_B"
}

# Path B: a dummy netdev with its own rxe device and an nvmet port.
t_path_b() {
	# the delay points come with the module
	modprobe nvme-xrdma && [[ -d $XRDMA_DELAY_DIR ]] || return 1
	rig_add_path "$NETDEV_B" "$RXE_B" "$IP_B" "$PORT_B" || return 1
	PATH_B=1
}

# connect_held ADDR MS WHILE...: nvme connect to ADDR, its setup held MS
# ms at io_setup, and meanwhile WHILE... takes the path away: the connect
# must fail.
connect_held() {
	local addr=$1 ms=$2 out=$TEST_TMP/connect.out rc=0
	shift 2
	delay_set io_setup "$ms" || return 1
	nvme_connect "$TR" "$addr" "$RIG_NQN_RAM" >"$out" 2>&1 &
	BG_PID=$!
	wait_for $((30 * SCALE)) logged "delay point io_setup" || {
		echo "the setup never reached the io_setup delay point"
		rc=1
	}
	"$@" || rc=1
	wait_for $((30 * SCALE)) pid_gone "$BG_PID" || {
		echo "nvme connect still blocked"
		rc=1
	}
	if wait "$BG_PID"; then
		echo "nvme connect succeeded with its path gone"
		rc=1
	fi
	BG_PID=
	sed 's/^/  /' "$out"
	delay_set io_setup 0
	return "$rc"
}

# connect_parks ADDR MS DOWN...: connect_held, DOWN... taking the path
# down: the connect fails and parks its admin queue's CM id.
connect_parks() {
	local rc=0
	connect_held "$@" || rc=1
	logged "its connection is released once the port is back" || {
		echo "no CM id was parked: the window was not reached"
		rc=1
	}
	return "$rc"
}

# parked-free: connect through path B, the setup held after its admin queue
# is live; path B goes down meanwhile, the creation fails and parks the
# admin queue's CM id; then the port comes back and the parked id is
# released.
t_parked_free() {
	local rc=0
	race parked-free || return
	ktap_require PATH_B "no path B" || return
	race_mark parked-free
	connect_parks "$IP_B" $((3000 * SCALE)) link_b down || rc=1
	link_b up || rc=1
	# the parked work looks every 500 ms; the free follows the release
	sleep 3
	nvme_find_ctrl "$RIG_NQN_RAM" "$TR" "$IP_B" && {
		echo "a controller of the failed connect is still listed"
		rc=1
	}
	return "$rc"
}

# remove-during-free: a disconnect's free held once the queue array is gone,
# while another RDMA device is added and removed.
t_remove_during_free() {
	local c rc=0
	race_begin_c remove-during-free || return
	c=$CTRL
	delay_set queues_free $((3000 * SCALE)) || return 1
	nvme disconnect -d "$c" >"$TEST_TMP/free.disconnect" 2>&1 &
	BG_PID=$!
	wait_for $((20 * SCALE)) logged "delay point queues_free" || {
		echo "the free never reached the queues_free delay point"
		rc=1
	}
	rig_rdma_link_add "$RXE_C" "$NETDEV_C" || rc=1
	rdma link delete "$RXE_C" || rc=1
	wait_for $((30 * SCALE)) pid_gone "$BG_PID" || rc=1
	wait "$BG_PID" || rc=1
	BG_PID=
	CTRL=
	delay_set queues_free 0
	ip link del "$NETDEV_C" || rc=1
	nvme_ctrl_gone "$c" || {
		echo "$c still there"
		rc=1
	}
	return "$rc"
}

# delete-during-port-up: a controller on path B waits out a long
# reconnect_delay; path B comes back, and while the port-up event holds the
# reconnect it took off the timer, the controller is deleted.
t_delete_during_port_up() {
	local c rc=0
	race delete-during-port-up || return
	ktap_require PATH_B "no path B" || return
	NVME_TRADDR=$IP_B connect_subsys "$TR" "$RIG_NQN_RAM" \
		--reconnect-delay=60 --ctrl-loss-tmo=600 || return 1
	c=$CTRL
	race_mark delete-during-port-up
	link_b down || rc=1
	# the teardown holds the release up to 10 s for the port to come back
	wait_for $((30 * SCALE)) logged "$c: reconnect attempt 1 .* in 60 s" || {
		echo "$c never scheduled its reconnect"
		rc=1
	}
	race_mark port-back
	delay_set port_up $((3000 * SCALE)) || return 1
	link_b up || rc=1
	wait_for $((20 * SCALE)) logged "delay point port_up" || {
		echo "the port-up event never reached the port_up delay point"
		rc=1
	}
	nvme_disconnect "$c" $((30 * SCALE)) || rc=1
	CTRL=
	delay_set port_up 0
	# the held reconnect would have been queued by now: give it time
	sleep 4
	if logged "$c: (reconnect attempt|reconnect succeeded|not going live)"; then
		echo "$c reconnected while or after being deleted:"
		since_race | grep "$c:" | sed 's/^/  /'
		rc=1
	fi
	return "$rc"
}

# stop-before-connect: a new controller to badtarget idle-dreq: I/O queue 1
# is disconnected while queue 2 connects; the fabrics Connects wait at
# io_start meanwhile, so the abort has stopped every queue before the first
# Connect.
t_stop_before_connect() {
	local log=$TEST_TMP/bt.stop-before-connect.log rc=0
	race stop-before-connect || return
	race_mark stop-before-connect
	"$BADTARGET" --port "$BT_PORT" --nqn "$BT_NQN" --scenario idle-dreq \
		>"$log" 2>&1 &
	BT_PID=$!
	badtarget_listening "$log" || return 1
	delay_set io_start $((1500 * SCALE)) || return 1
	if NVME_TRSVCID=$BT_PORT nvme_connect "$TR" "$RIG_IP4" "$BT_NQN"; then
		echo "the connect succeeded: idle-dreq did not disconnect"
		rc=1
	fi
	delay_set io_start 0
	kill -TERM "$BT_PID"
	wait "$BT_PID"
	BT_PID=
	sed 's/^/  /' "$log"
	logged "delay point io_start" || {
		echo "the setup never reached the io_start delay point"
		rc=1
	}
	logged "connection failed while connecting" || {
		echo "no abort: the window was not reached"
		rc=1
	}
	race_clean || rc=1
	return "$rc"
}

# end-during-submit: a controller on badtarget, which then stops (SIGSTOP)
# with a read in flight; a second read held 5 s at queue_rq, started and not
# linked; meanwhile the controller is deleted, and a second later, the first
# read stale and the target silent, the deletion ends the commands.
t_end_during_submit() {
	local log=$TEST_TMP/bt.end-during-submit.log c dev a b order rc=0
	race end-during-submit || return
	"$BADTARGET" --port "$BT_PORT" --nqn "$BT_NQN" >"$log" 2>&1 &
	BT_PID=$!
	badtarget_listening "$log" || return 1
	NVME_TRSVCID=$BT_PORT connect_subsys "$TR" "$BT_NQN" -c 1 -k 15 ||
		return 1
	c=$CTRL
	dev=$(nvme_wait_ns "$c") || return 1
	race_mark end-during-submit
	kill -STOP "$BT_PID"
	dd if="$dev" of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null &
	a=$!
	mkfifo "$TEST_TMP/end-during-submit.fifo" || return 1
	sleep 1.5
	# The deletion is set off now and runs into the hold: while the CPU
	# of the held read spins, a program to start or a file of the shared
	# root to read waits for it (virtio-fs ends its requests in work on
	# that CPU), so only builtins on tmpfs: a 1.5 s read of a silent FIFO,
	# then the write to sysfs.
	(
		exec 3<>"$TEST_TMP/end-during-submit.fifo"
		read -rt 1.5 -u 3
		echo 1 >"/sys/class/nvme/$c/delete_controller"
	) &
	# the longest a point may busy-wait; only I/O queues stop there
	delay_set queue_rq 5000 || return 1
	dd if="$dev" of=/dev/null bs=4k count=1 skip=1 iflag=direct \
		2>/dev/null &
	b=$!
	wait_for $((10 * SCALE)) logged "delay point queue_rq: holding" || {
		echo "no read reached the queue_rq delay point"
		rc=1
	}
	delay_set queue_rq 0
	wait_for $((30 * SCALE)) nvme_ctrl_gone "$c" || {
		echo "$c still there"
		rc=1
	}
	CTRL=
	if ! wait_for $((20 * SCALE)) pid_gone "$a" ||
		! wait_for 10 pid_gone "$b"; then
		echo "a read still hangs"
		rc=1
	fi
	kill -CONT "$BT_PID"
	kill -TERM "$BT_PID"
	wait "$BT_PID"
	BT_PID=
	# the end of the commands must fall inside the hold
	order=$(race_order "queue_rq: (holding|released)|ending them")
	echo "order: $order"
	[[ $order =~ ^(holding )+them\ (released )+$ ]] || {
		echo "the deletion did not end the commands while a read was held"
		rc=1
	}
	race_clean || rc=1
	return "$rc"
}

# end-during-resize: a controller with two I/O queues; the subsystem's
# qid_max lowered to 1, on which nvmet drops it: the reconnect, granted one,
# resizes the tag set and is held 3 s there; meanwhile the port drops the
# subsystem, and the end work ends the attempt, which it logs once it walked
# the tag set.
t_end_during_resize() {
	local c order rc=0
	race end-during-resize || return
	connect_subsys "$TR" "$RIG_NQN_RAM" -i 2 --reconnect-delay=1 ||
		return 1
	c=$CTRL
	race_mark end-during-resize
	QID_MAX0=$(<"$QID_MAX")
	delay_set resize $((3000 * SCALE)) || return 1
	echo 1 >"$QID_MAX" || rc=1
	wait_for $((30 * SCALE)) logged "delay point resize: holding" || {
		echo "no reconnect reached the resize delay point"
		rc=1
	}
	rig_port_close || rc=1
	wait_for $((30 * SCALE)) logged "attempt ended" || {
		echo "the attempt did not end"
		rc=1
	}
	delay_set resize 0
	order=$(race_order "resize: (holding|released)|attempt ended")
	echo "order: $order"
	[[ $order =~ ^holding\ released\ (ended )+$ ]] || {
		echo "the end work did not wait for the resize"
		rc=1
	}
	echo "$QID_MAX0" >"$QID_MAX" || rc=1
	QID_MAX0=
	rig_port_open || rc=1
	nvme_wait_state "$c" live $((60 * SCALE)) || rc=1
	race_clean || rc=1
	nvme_disconnect "$c" $((30 * SCALE)) || rc=1
	CTRL=
	return "$rc"
}

# removal_waited T0 HOLD WHAT: once the removal of device C (RM_PID),
# started at T0, is through, whether it took less than HOLD ms (the
# window, WHAT) plus 20 s, which a CM id parked for its 60 s exceeds;
# and that no controller of the failed connect is listed.  Path C goes.
removal_waited() {
	local t0=$1 hold=$2 ms rc=0
	wait_for 90 pid_gone "$RM_PID"
	ms=$(($(now_ms) - t0))
	wait "$RM_PID" || rc=1
	RM_PID=
	echo "removing $RXE_C took $ms ms, $hold ms of it $3"
	((ms < hold + 20000)) || {
		echo "rdma_cm's removal waited for a parked id"
		rc=1
	}
	nvme_find_ctrl "$RIG_NQN_RAM" "$TR" "$IP_C" && {
		echo "a controller of the failed connect is still listed"
		rc=1
	}
	rig_del_path "$NETDEV_C" "$RXE_C" "$PORT_C" || rc=1
	PATH_C=0
	return "$rc"
}

# park-during-removal: device C, with an nvmet port on it, removed; our
# client's removal held 10 s at remove_one after it released the device's
# parked ids. Meanwhile a connect through device C, held at io_setup, its
# netdev taken down: the creation fails and parks the admin queue's CM id.
t_park_during_removal() {
	local hold=$((10000 * SCALE)) t0 rc=0
	race park-during-removal || return
	((hold <= 30000)) || hold=30000
	rig_add_path "$NETDEV_C" "$RXE_C" "$IP_C" "$PORT_C" || return 1
	PATH_C=1
	race_mark park-during-removal
	delay_set remove_one "$hold" || return 1
	t0=$(now_ms)
	rdma link delete "$RXE_C" &
	RM_PID=$!
	wait_for $((20 * SCALE)) logged "delay point remove_one: holding" || {
		echo "the removal never reached the remove_one delay point"
		rc=1
	}
	delay_set remove_one 0
	connect_parks "$IP_C" $((2000 * SCALE)) ip link set "$NETDEV_C" down ||
		rc=1
	if logged "delay point remove_one: released"; then
		echo "the id was parked after the hold: the window was missed"
		rc=1
	fi
	# without a fix, rdma_cm's removal waits out the parked id's 60 s
	removal_waited "$t0" "$hold" "held at remove_one" || rc=1
	return "$rc"
}

# removal-during-stop: a reset whose queue stops are each held 6 s, and
# meanwhile another RDMA device added and removed: the removal must not wait
# for the stop.
t_removal_during_stop() {
	local c t0 ms rc=0
	race_begin_c removal-during-stop || return
	c=$CTRL
	rig_rdma_link_add "$RXE_C" "$NETDEV_C" || rc=1
	delay_set queue_stop $((6000 * SCALE)) || return 1
	nvme reset "/dev/$c" >"$TEST_TMP/stop.reset" 2>&1 &
	BG_PID=$!
	wait_for $((20 * SCALE)) logged "delay point queue_stop" || {
		echo "the reset never reached the queue_stop delay point"
		rc=1
	}
	t0=$(now_ms)
	rdma link delete "$RXE_C" || rc=1
	ms=$(($(now_ms) - t0))
	delay_set queue_stop 0
	echo "removing $RXE_C took $ms ms, a queue stop held for 6000 ms"
	((ms < 2000 * SCALE)) || {
		echo "the removal waited for the held stop"
		rc=1
	}
	wait "$BG_PID" || rc=1
	BG_PID=
	ip link del "$NETDEV_C" || rc=1
	nvme_wait_state "$c" live $((60 * SCALE)) || rc=1
	nvme_disconnect "$c" $((30 * SCALE)) || rc=1
	CTRL=
	return "$rc"
}

# connect_pooled [WQ [NQN [OPTS...]]]: a controller on NQN (the RAM
# subsystem), one I/O queue, its reads through the read pool and its CQs
# on a workqueue (WQ 1, the default: handlers that may sleep at a delay
# point; 0 softirq); then the module's defaults again.
connect_pooled() {
	local mp=/sys/module/nvme_xrdma/parameters rc=0
	local nqn=${2:-$RIG_NQN_RAM}
	echo 4096 >"$mp/read_pool" && echo "${1:-1}" >"$mp/cq_workqueue" ||
		rc=1
	((rc)) || connect_subsys "$TR" "$nqn" -i 1 "${@:3}" || rc=1
	echo 0 >"$mp/read_pool"
	echo -1 >"$mp/cq_workqueue"
	return "$rc"
}

# reset_while_held CTRL: once a response's handler holds at rsp_copy, the
# point off (the hold in progress goes on, a read's retry is not held),
# and CTRL reset.
reset_while_held() {
	local rc=0
	wait_for $((20 * SCALE)) logged "delay point rsp_copy: holding" || {
		echo "no response reached the rsp_copy delay point"
		rc=1
	}
	delay_set rsp_copy 0
	nvme reset "/dev/$1" >"$TEST_TMP/reset.out" 2>&1 || rc=1
	return "$rc"
}

# reset-behind-handler: two 4 KiB reads at once; the first response's
# handler held 3 s (less than the drain's 5 s) before its copy-out, and a
# reset meanwhile.
t_reset_behind_handler() {
	local c dev a b in=$TEST_TMP/read.in rc=0
	race reset-behind-handler || return
	connect_pooled || return 1
	c=$CTRL
	dev=$(nvme_wait_ns "$c") || return 1
	head -c 8192 /dev/urandom >"$in"
	dd if="$in" of="$dev" bs=8k count=1 oflag=direct status=none ||
		return 1
	race_mark reset-behind-handler
	delay_set rsp_copy 3000 || return 1
	dd if="$dev" of="$TEST_TMP/read.0" bs=4k count=1 iflag=direct \
		status=none &
	a=$!
	dd if="$dev" of="$TEST_TMP/read.1" bs=4k count=1 skip=1 iflag=direct \
		status=none &
	b=$!
	reset_while_held "$c" || rc=1
	if ! wait "$a" || ! wait "$b"; then
		echo "a read failed"
		rc=1
	fi
	cat "$TEST_TMP/read.0" "$TEST_TMP/read.1" | cmp - "$in" || rc=1
	nvme_wait_state "$c" live $((60 * SCALE)) || rc=1
	logged "delay point rsp_copy: released" || rc=1
	if logged "bad response|drain timed out"; then
		since_race | grep -E "bad response|drain timed out" |
			sed 's/^/  /'
		rc=1
	fi
	nvme_disconnect "$c" $((30 * SCALE)) || rc=1
	CTRL=
	return "$rc"
}

# drain-timeout-in-handler CQ_WORKQUEUE: one 4 KiB read through the read
# pool (one slot per tag), its response's handler held 3 s; a reset
# meanwhile, its I/O queue's drain failing at once.  With 1 the handler runs
# on the CQ's workqueue, the reset's drain gives up while it is held, and
# the stop must wait it out.  With 0 it runs in softirq, and the reset's
# quiesce (an RCU grace period) waits the handler out before the drain: that
# run checks that the fence of an idle irq_poll works and costs no data.
t_drain_timeout_in_handler() {
	local wq=$1 c dev pid rc=0
	local fault out=$TEST_TMP/drain.out in=$TEST_TMP/drain.in
	race drain-timeout-in-handler || return
	connect_pooled "$wq" || return 1
	c=$CTRL
	fault=/sys/kernel/debug/nvme-xrdma/$c/fault
	dev=$(nvme_wait_ns "$c") || return 1
	head -c 4096 /dev/urandom >"$in"
	dd if="$in" of="$dev" bs=4k count=1 oflag=direct status=none ||
		return 1
	race_mark drain-timeout-in-handler
	echo 1 >"$fault/drain" || return 1
	delay_set rsp_copy $((3000 * SCALE)) || return 1
	dd if="$dev" of="$out" bs=4k count=1 iflag=direct status=none &
	pid=$!
	reset_while_held "$c" || rc=1
	wait "$pid" || {
		echo "the read failed"
		rc=1
	}
	cmp "$in" "$out" || rc=1
	nvme_wait_state "$c" live $((60 * SCALE)) || rc=1
	# the window: the drain gave up while the handler was held
	since_race | grep -E "delay point rsp_copy|drain timed out|fenced" |
		sed 's/^/  /'
	if ((wq)); then
		since_race | awk '/delay point rsp_copy: holding/ { h = 1 }
			h && /QP drain timed out/ { d = 1 }
			d && /delay point rsp_copy: released/ { r = 1 }
			r && /completion handlers fenced/ { ok = 1 }
			END { exit !ok }' || {
			echo "the drain did not time out while the handler was held"
			rc=1
		}
	else
		if ! logged "delay point rsp_copy: holding .* busy" ||
			! logged "completion handlers fenced"; then
			echo "no busy hold in softirq, or no fence"
			rc=1
		fi
	fi
	nvme_disconnect "$c" $((30 * SCALE)) || rc=1
	CTRL=
	return "$rc"
}

# stops_held N: N queue stops reached the queue_stop delay point since
# race_mark, and N - 1 of them were released.
stops_held() {
	(($(since_race | grep -c "delay point queue_stop: holding") == $1 &&
		$(since_race | grep -c "delay point queue_stop: released") ==
		$1 - 1))
}

# read_qp_attrs: the admin queue's QP attributes into QP_ATTRS, the time
# the reads took into QP_MS (builtins only: no program to start).
QP_ATTRS=
QP_MS=0
read_qp_attrs() {
	local d=/sys/class/nvme/$1/xrdma a r t0
	t0=$(now_ms)
	read -r a <"$d/qp_ack_timeout" && read -r r <"$d/qp_retry_count" ||
		return 1
	QP_MS=$(($(now_ms) - t0))
	QP_ATTRS="qp_ack_timeout $a, qp_retry_count $r"
}

# qp-read: a controller with one I/O queue; a reset whose queue stops are
# each held 6 s after their drain (the I/O queue's, then the admin
# queue's); while the admin queue's stop holds, its QP attributes read.
t_qp_read() {
	local c n live rc=0
	race qp-read || return
	connect_subsys "$TR" "$RIG_NQN_RAM" -i 1 || return 1
	c=$CTRL
	n=$(nvme_ctrl_attr "$c" queue_count)
	read_qp_attrs "$c" || return 1
	live=$QP_ATTRS
	echo "live: $live"
	race_mark qp-read
	delay_set queue_stop $((6000 * SCALE)) || return 1
	nvme reset "/dev/$c" >"$TEST_TMP/qp-read.reset" 2>&1 &
	BG_PID=$!
	if wait_for $((30 * SCALE)) stops_held "$n"; then
		read_qp_attrs "$c" || rc=1
		echo "while the admin queue's stop is held: $QP_ATTRS, read in $QP_MS ms"
		((QP_MS < 2000 * SCALE)) || {
			echo "the read waited for the queue stop"
			rc=1
		}
		[[ $QP_ATTRS == "$live" ]] || {
			echo "not what the connection was given"
			rc=1
		}
	else
		echo "the reset never held its admin queue's stop (stop $n of $n)"
		rc=1
	fi
	delay_set queue_stop 0
	wait "$BG_PID" || rc=1
	BG_PID=
	nvme_wait_state "$c" live $((60 * SCALE)) || rc=1
	read_qp_attrs "$c" || rc=1
	echo "live again: $QP_ATTRS"
	race_clean || rc=1
	nvme_disconnect "$c" $((30 * SCALE)) || rc=1
	CTRL=
	return "$rc"
}

# The LOCAL_INV race: the window of the first hold (rsp_copy, 4 s) must
# take in the deletion's wait for a stale command and an unanswered Keep
# Alive (1.25 s) and end within the drain's 5 s; the second (drain_done,
# 5 s) the deletion's path from the drain to the free of the tag set.
t_linv() {
	local log=$TEST_TMP/bt.linv.log c dev a b del ra=ok rb=ok rc=0
	local held=$((5000 * SCALE))
	race linv || return
	((held <= 30000)) || held=30000
	"$BADTARGET" --port "$BT_PORT" --nqn "$BT_NQN" --scenario no-inv -v \
		>"$log" 2>&1 &
	BT_PID=$!
	badtarget_listening "$log" || return 1
	NVME_TRSVCID=$BT_PORT connect_pooled 1 "$BT_NQN" -k 15 || return 1
	c=$CTRL
	dev=$(nvme_wait_ns "$c") || return 1
	# the partition scan's reads are through before the holds are set
	sleep 1
	race_mark linv
	delay_set drain_done "$held" || return 1
	delay_set rsp_copy 4000 || return 1
	dd if="$dev" of=/dev/null bs=4k count=1 iflag=direct status=none &
	a=$!
	wait_for 10 logged "delay point rsp_copy: holding" || {
		echo "the pool read's response never reached rsp_copy"
		rc=1
	}
	delay_set rsp_copy 0
	# 8 KiB, more than a pool slot: FRWR, answered without invalidation
	dd if="$dev" of=/dev/null bs=8k count=1 skip=1 iflag=direct \
		status=none &
	b=$!
	wait_for 5 grep -q "queue 1: cmd 0x2 .* len 8192" "$log" || {
		echo "the target never got the FRWR read"
		rc=1
	}
	# its response is on the wire: the target falls silent after it
	sleep 0.2
	kill -STOP "$BT_PID"
	echo 1 >"/sys/class/nvme/$c/delete_controller" &
	del=$!
	wait_for $((60 * SCALE)) nvme_ctrl_gone "$c" || {
		echo "$c still there"
		rc=1
	}
	CTRL=
	wait "$del" || rc=1
	wait "$a" || ra=failed
	wait "$b" || rb=failed
	echo "pool read $ra, FRWR read $rb"
	kill -CONT "$BT_PID"
	kill -TERM "$BT_PID"
	wait "$BT_PID"
	BT_PID=
	delay_set drain_done 0
	since_race | grep -E "delay point|ending them|drain timed out" |
		sed 's/^/  /'
	# the stop's drain began inside the first hold, the poller was held
	# after it, and the drain did not time out
	since_race | awk '/delay point rsp_copy: holding/ { h = 1 }
		h && /ending them/ { e = 1 }
		e && /delay point rsp_copy: released/ { r = 1 }
		r && /delay point drain_done: holding/ { ok = 1 }
		/QP drain timed out/ { ok = 0; exit }
		END { exit !ok }' || {
		echo "the deletion did not stop the queue while the handler was held"
		rc=1
	}
	race_clean || rc=1
	return "$rc"
}

# bt_no_aen LOG: badtarget no-aen on BT_PORT as the discovery subsystem.
bt_no_aen() {
	"$BADTARGET" --port "$BT_PORT" --nqn "$DISC_NQN" --scenario no-aen \
		>"$1" 2>&1 &
	BT_PID=$!
	badtarget_listening "$1"
}

# go-live: the setup of a new discovery controller (no I/O queue, no keep
# alive, and from badtarget no-aen no event to configure) held 3 s at
# go_live; meanwhile the target is killed, its exit disconnecting the
# admin queue, and started again.
t_go_live() {
	local log=$TEST_TMP/bt.go-live.log out=$TEST_TMP/go-live.connect
	local c rc=0
	race go-live || return
	race_mark go-live
	bt_no_aen "$log.0" || return 1
	delay_set go_live $((3000 * SCALE)) || return 1
	NVME_TRSVCID=$BT_PORT nvme_connect "$TR" "$RIG_IP4" "$DISC_NQN" \
		--reconnect-delay=1 >"$out" 2>&1 &
	BG_PID=$!
	wait_for $((30 * SCALE)) logged "delay point go_live: holding" || {
		echo "the setup never reached the go_live delay point"
		rc=1
	}
	delay_set go_live 0
	# its exit, not a message of the shell's, says it is gone
	kill -KILL "$BT_PID"
	wait "$BT_PID" 2>/dev/null
	BT_PID=
	bt_no_aen "$log.1" || rc=1
	wait_for $((30 * SCALE)) pid_gone "$BG_PID" || rc=1
	if ! wait "$BG_PID"; then
		BG_PID=
		sed 's/^/  /' "$out"
		# the attempt failed: nothing may be left of it
		if nvme_find_ctrl "$DISC_NQN" "$TR" "$RIG_IP4"; then
			echo "a controller of the failed connect is listed"
			rc=1
		fi
		return "$rc"
	fi
	BG_PID=
	c=$(nvme_find_ctrl "$DISC_NQN" "$TR" "$RIG_IP4" | tail -n 1)
	CTRL=$c
	logged "delay point go_live: released" || rc=1
	logged "$c: connection failed while connecting: attempt ended" &&
		echo "$c: the lost connection ended the attempt during the hold"
	# live, its connection lost: it must recover, with no command of its
	# own to find the queue stopped
	wait_for $((10 * SCALE)) logged "$c: starting error recovery" || {
		echo "$c: '$(nvme_ctrl_state "$c")' with its admin queue stopped, no recovery in $((10 * SCALE)) s"
		rc=1
	}
	if ((rc == 0)); then
		nvme_wait_state "$c" live $((30 * SCALE)) || rc=1
		nvme id-ctrl "/dev/$c" >/dev/null || {
			echo "$c: no answer to Identify once live again"
			rc=1
		}
	fi
	since_race | grep -E "$c: |delay point go_live" | sed 's/^/  /'
	race_clean || rc=1
	nvme_disconnect "$c" $((30 * SCALE)) || rc=1
	CTRL=
	kill -TERM "$BT_PID"
	wait "$BT_PID"
	BT_PID=
	return "$rc"
}

# down_remove_c: device C's netdev down, then the device removed in the
# background (RM_PID, from T0), which must still wait 2 s later: for the
# CM id of the setup held meanwhile.
T0=
down_remove_c() {
	T0=$(now_ms)
	ip link set "$NETDEV_C" down || return 1
	rdma link delete "$RXE_C" &
	RM_PID=$!
	sleep 2
	pid_gone "$RM_PID" || return 0
	echo "the removal was through while the setup was held: the window was missed"
	return 1
}

# removal-while-owned: a connect through device C held at io_setup once
# its admin queue is connected; meanwhile device C's netdev goes down and
# the device is removed.
t_rm_owned() {
	local hold=$((6000 * SCALE)) rc=0
	race removal-while-owned || return
	((hold <= 30000)) || hold=30000
	rig_add_path "$NETDEV_C" "$RXE_C" "$IP_C" "$PORT_C" || return 1
	PATH_C=1
	race_mark removal-while-owned
	connect_held "$IP_C" "$hold" down_remove_c || rc=1
	# without a fix, rdma_cm's removal waits out a parked id's 60 s
	removal_waited "$T0" "$hold" "the setup held" || rc=1
	since_race | grep -E "delay point io_setup|$RXE_C" | sed 's/^/  /'
	return "$rc"
}

t_leak() {
	if ((PATH_B)); then
		rig_del_path "$NETDEV_B" "$RXE_B" "$PORT_B" || return 1
		PATH_B=0
	fi
	leak_check
}

ktap_run "module loaded, path B added" t_path_b
ktap_run "a creation failing with its port down, its parked CM id released later" t_parked_free
ktap_run "an RDMA device removed while a controller is freed" t_remove_during_free
ktap_run "a controller deleted while a port-up event queues its reconnect" t_delete_during_port_up
ktap_run "a command ended by a deletion while its submitter is held" t_end_during_submit
ktap_run "a queue stopped before its fabrics Connect publishes no tags" t_stop_before_connect
ktap_run "a reconnect's resize of the tag set while its attempt ends" t_end_during_resize
ktap_run "a CM id parked while rdma_cm's device removal is due" t_park_during_removal
ktap_run "an RDMA device removed while a queue stop is held" t_removal_during_stop
ktap_run "a response queued behind a held handler during a reset" t_reset_behind_handler
ktap_run "a drain timing out while a read's response is in its handler" t_drain_timeout_in_handler 1
ktap_run "the same on softirq CQs: a fence of an idle irq_poll" t_drain_timeout_in_handler 0
ktap_run "QP attributes read while the admin queue's stop is held" t_qp_read
ktap_run "a LOCAL_INV posted during a deletion's drain, the tag set freed before the CQ" t_linv
ktap_run "a connection lost between a setup's last check and its change to LIVE" t_go_live
ktap_run "an RDMA device removed while a held setup still owns its CM id, its port down" t_rm_owned
ktap_run "RDMA resources and module refs back to baseline" t_leak
ktap_run "no kernel warnings, oopses or new taint" dmesg_check
ktap_finished
