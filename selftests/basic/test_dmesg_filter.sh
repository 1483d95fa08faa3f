#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The dmesg check's filter of known lockdep reports (lib/env.sh,
# dmesg_drop_known) drops exactly what it claims to and nothing more.
# It feeds the filter a report lockdep printed in make check-debug (the
# target's nvmet_config_sem vs rdma_cm's handler_mutex, trimmed of its
# "?" frames), as it is and changed in the ways that must keep it:
# an xrdma frame in it, another lock pair, a report cut short. Text only:
# no root, rig or guest needed.

set -u
DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../lib/ktap.sh
. "$DIR/../lib/ktap.sh"
# shellcheck source=../lib/env.sh
. "$DIR/../lib/env.sh"

# The report, between two ordinary kernel log lines.
sample() {
	echo '[ 3362.400000] nvme nvme0: Successfully reconnected (1 attempt)'
	cat <<'LOG'
[ 3362.493569] ======================================================
[ 3362.493651] WARNING: possible circular locking dependency detected
[ 3362.494274] 6.12.117-xrdma-debug #1 Tainted: G           O
[ 3362.494406] ------------------------------------------------------
[ 3362.494496] kworker/0:3/3709 is trying to acquire lock:
[ 3362.494665] ffffffffc0788230 (nvmet_config_sem){++++}-{3:3}, at: nvmet_find_get_subsys+0x1a8/0x520 [nvmet]
[ 3362.497102]
[ 3362.497102] but task is already holding lock:
[ 3362.497289] ff110000025dd420 (&id_priv->handler_mutex){+.+.}-{3:3}, at: cma_ib_handler+0xaa/0x640 [rdma_cm]
[ 3362.497533]
[ 3362.497533] which lock already depends on the new lock.
[ 3362.497533]
[ 3362.497642]
[ 3362.497642] the existing dependency chain (in reverse order) is:
[ 3362.497809]
[ 3362.497809] -> #1 (&id_priv->handler_mutex){+.+.}-{3:3}:
[ 3362.498144]        __mutex_lock+0x19c/0xc80
[ 3362.498769]        rdma_destroy_id+0x16/0x20 [rdma_cm]
[ 3362.498871]        nvmet_rdma_disable_port+0x35/0x2b0 [nvmet_rdma]
[ 3362.498948]        nvmet_rdma_remove_port+0x41/0x60 [nvmet_rdma]
[ 3362.499120]        nvmet_disable_port+0x116/0x1b0 [nvmet]
[ 3362.499286]        nvmet_port_subsys_drop_link+0x234/0x2e0 [nvmet]
[ 3362.499387]        configfs_unlink+0x37e/0x7a0
[ 3362.499461]        vfs_unlink+0x291/0x8c0
[ 3362.499523]        do_unlinkat+0x425/0x620
[ 3362.499575]        __x64_sys_unlinkat+0x8f/0xd0
[ 3362.499629]        do_syscall_64+0xc1/0x1d0
[ 3362.499685]        entry_SYSCALL_64_after_hwframe+0x4b/0x53
[ 3362.499799]
[ 3362.499799] -> #0 (nvmet_config_sem){++++}-{3:3}:
[ 3362.499914]        __lock_acquire+0x26c0/0x3f30
[ 3362.500049]        lock_acquire+0x191/0x4e0
[ 3362.500107]        down_read+0x9a/0x330
[ 3362.500214]        nvmet_find_get_subsys+0x1a8/0x520 [nvmet]
[ 3362.500299]        nvmet_ctrl_find_get+0xa7/0x460 [nvmet]
[ 3362.500378]        nvmet_execute_io_connect+0x1ba/0x440 [nvmet]
[ 3362.500459]        nvmet_rdma_execute_command+0x180/0x460 [nvmet_rdma]
[ 3362.500530]        nvmet_rdma_handle_command+0x4c3/0xc50 [nvmet_rdma]
[ 3362.500601]        nvmet_rdma_cm_handler+0x82f/0x3880 [nvmet_rdma]
[ 3362.500669]        cma_cm_event_handler+0x7d/0x210 [rdma_cm]
[ 3362.500753]        cma_ib_handler+0x215/0x640 [rdma_cm]
[ 3362.500834]        cm_process_work+0x3b/0x390 [ib_cm]
[ 3362.500922]        cm_work_handler+0x667/0xc260 [ib_cm]
[ 3362.501060]        process_one_work+0x852/0x1810
[ 3362.501152]        worker_thread+0x58f/0xfa0
[ 3362.501268]        kthread+0x280/0x340
[ 3362.501323]        ret_from_fork+0x2c/0x70
[ 3362.501382]        ret_from_fork_asm+0x11/0x20
[ 3362.501466]
[ 3362.501466] other info that might help us debug this:
[ 3362.501466]
[ 3362.501616]  Possible unsafe locking scenario:
[ 3362.501616]
[ 3362.501684]        CPU0                    CPU1
[ 3362.501738]        ----                    ----
[ 3362.501888]   lock(&id_priv->handler_mutex);
[ 3362.502032]                                lock(nvmet_config_sem);
[ 3362.502181]                                lock(&id_priv->handler_mutex);
[ 3362.502290]   rlock(nvmet_config_sem);
[ 3362.502384]
[ 3362.502384]  *** DEADLOCK ***
[ 3362.502384]
[ 3362.502497] 3 locks held by kworker/0:3/3709:
[ 3362.502603]  #0: ff11000005465548 ((wq_completion)ib_cm){+.+.}-{0:0}, at: process_one_work+0xf33/0x1810
[ 3362.502832]  #1: ff1100001e297d90 ((work_completion)(&(&work->work)->work)){+.+.}-{0:0}, at: process_one_work+0x7dd/0x1810
[ 3362.502986]  #2: ff110000025dd420 (&id_priv->handler_mutex){+.+.}-{3:3}, at: cma_ib_handler+0xaa/0x640 [rdma_cm]
[ 3362.503229]
[ 3362.503229] stack backtrace:
[ 3362.503539] CPU: 0 UID: 0 PID: 3709 Comm: kworker/0:3 Tainted: G           O       6.12.117-xrdma-debug #1
[ 3362.503672] Tainted: [O]=OOT_MODULE
[ 3362.503692] Hardware name: QEMU Standard PC (Q35 + ICH9, 2009), BIOS 1.16.2-debian-1.16.2-1 04/01/2014
[ 3362.503853] Workqueue: ib_cm cm_work_handler [ib_cm]
[ 3362.504113] Call Trace:
[ 3362.504178]  <TASK>
[ 3362.504263]  dump_stack_lvl+0x66/0x90
[ 3362.504337]  print_circular_bug+0x53b/0x820
[ 3362.504360]  check_noncircular+0x308/0x3f0
[ 3362.504459]  __lock_acquire+0x26c0/0x3f30
[ 3362.504546]  lock_acquire+0x191/0x4e0
[ 3362.504648]  down_read+0x9a/0x330
[ 3362.504727]  nvmet_find_get_subsys+0x1a8/0x520 [nvmet]
[ 3362.504813]  nvmet_ctrl_find_get+0xa7/0x460 [nvmet]
[ 3362.504888]  nvmet_execute_io_connect+0x1ba/0x440 [nvmet]
[ 3362.504921]  nvmet_rdma_execute_command+0x180/0x460 [nvmet_rdma]
[ 3362.504943]  nvmet_rdma_handle_command+0x4c3/0xc50 [nvmet_rdma]
[ 3362.504978]  nvmet_rdma_cm_handler+0x82f/0x3880 [nvmet_rdma]
[ 3362.505210]  cma_cm_event_handler+0x7d/0x210 [rdma_cm]
[ 3362.505247]  cma_ib_handler+0x215/0x640 [rdma_cm]
[ 3362.505345]  cm_process_work+0x3b/0x390 [ib_cm]
[ 3362.505434]  cm_work_handler+0x667/0xc260 [ib_cm]
[ 3362.505752]  kthread+0x280/0x340
[ 3362.505780]  ret_from_fork+0x2c/0x70
[ 3362.505809]  ret_from_fork_asm+0x11/0x20
[ 3362.505864]  </TASK>
LOG
	echo '[ 3363.000000] nvme nvme0: new ctrl: NQN "nqn.test"'
}

# bad LOG: the lines of LOG the dmesg check would fail on
bad() {
	grep -E "$DMESG_BAD_RE" <<<"$1"
}

t_known_dropped() {
	local out
	out=$(sample | dmesg_drop_known)
	echo "$out"
	[[ -z $(bad "$out") ]] &&
		grep -q '^xrdma-selftest: dropped a known lockdep report (not xrdma): nvmet_config_sem while holding &id_priv->handler_mutex$' <<<"$out" &&
		grep -q 'Successfully reconnected' <<<"$out" &&
		grep -q 'new ctrl' <<<"$out" &&
		(($(wc -l <<<"$out") == 3))
}

# kept WHAT SED: the sample changed by SED is passed through whole
kept() {
	local out
	out=$(sample | sed "$2" | dmesg_drop_known)
	if grep -q 'dropped a known' <<<"$out"; then
		echo "$1: dropped"
		return 1
	fi
	(($(wc -l <<<"$out") == $(sample | sed "$2" | wc -l))) &&
		[[ -n $(bad "$out") ]]
}

t_no_report() {
	local log
	log=$(sample | sed -n '1,2p;$p')
	[[ $(dmesg_drop_known <<<"$log") == "$log" ]]
}

ktap_print_header
ktap_set_plan 5
ktap_run "the known nvmet report is dropped, one line says so" t_known_dropped
ktap_run "kept with an xrdma frame in it" kept xrdma \
	's/^\(.*\)nvmet_rdma_handle_command+0x4c3\/0xc50 \[nvmet_rdma\]$/&\n\1xrdma_queue_recv_done+0x10\/0x80 [nvme_xrdma]/'
ktap_run "kept with another lock pair" kept pair \
	's/(nvmet_config_sem)/(nvmet_subsystems_lock)/'
ktap_run "kept when the report is cut short" kept short '/<\/TASK>/d'
ktap_run "a log without a report passes as it is" t_no_report
ktap_finished
