# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Leak checks for the xrdma selftests (sourced, not run).
#
# leak_snapshot records a "resource state" after the rig is up; after its
# own teardown a test calls leak_check, which waits (nvmet-rdma releases
# queues asynchronously) until the state is identical again, and shows a
# diff if it never is. The state is:
#
#   - RDMA restrack objects ("rdma res show pd|cq|qp|mr|cm_id|ctx|srq")
#     counted per type, device and owning module. The target keeps its
#     listening cm_id, hence the snapshot after rig setup. CQs of ib_core
#     (MAD, shared CQ pool) are not counted, see leak_rdma_state;
#   - for nvme_xrdma, nvme_rdma, nvme_fabrics, nvme_core, ib_core and
#     rdma_cm the module references that are not module dependencies:
#     /sys/module/M/refcnt minus the entries of /sys/module/M/holders.
#     A dependent module loaded meanwhile therefore does not count, an
#     unloaded or never loaded module counts as 0;
#   - the number of NVMe controllers and NVMe subsystems on the host side.
#
# Needs lib/env.sh.

LEAK_MODULES=${LEAK_MODULES:-"nvme_xrdma nvme_rdma nvme_fabrics nvme_core ib_core rdma_cm"}
LEAK_DIR=${LEAK_DIR:-/run/xrdma-selftest/leak.$$}
LEAK_TIMEOUT=${LEAK_TIMEOUT:-30}

# RDMA restrack objects counted per type, device and owner, e.g.
# "rdma qp rxe0 [rdma_cm] 2". Kernel owners print as "[module]"; user
# space ones as the command name. CQs owned by ib_core are left out: those
# are the MAD agent's and the shared CQ pool's (ib_cq_pool_get), which
# stays allocated until the device goes away, whoever used it.
leak_rdma_state() {
	local t
	for t in pd cq qp mr cm_id ctx srq; do
		rdma res show "$t" 2>/dev/null | awk -v t="$t" '
			{
				dev = "-"; comm = "-"
				for (i = 1; i < NF; i++) {
					if ($i == "link" || $i == "dev") {
						dev = $(i + 1)
						sub("/.*", "", dev)
					}
					if ($i == "comm")
						comm = $(i + 1)
				}
				if (t == "cq" && comm == "[ib_core]")
					next
				n[dev " " comm]++
			}
			END { for (k in n) print "rdma", t, k, n[k] }'
	done | sort
}

# Print the current resource state, one "key value..." per line.
leak_state() {
	local m d ref holders n
	if command -v rdma >/dev/null && module_loaded ib_core; then
		leak_rdma_state
	fi
	for m in $LEAK_MODULES; do
		d=/sys/module/$m
		if [[ -r $d/refcnt ]]; then
			ref=$(<"$d/refcnt")
			holders=$(find "$d/holders" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
			echo "module $m $((ref - holders))"
		else
			echo "module $m 0"
		fi
	done
	n=$(find /sys/class/nvme -mindepth 1 -maxdepth 1 -name 'nvme*' 2>/dev/null | wc -l)
	echo "nvme ctrls $n"
	n=$(find /sys/class/nvme-subsystem -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
	echo "nvme subsystems $n"
}

# leak_snapshot [NAME]
leak_snapshot() {
	mkdir -p "$LEAK_DIR"
	leak_state >"$LEAK_DIR/${1:-baseline}"
}

leak_same() {
	leak_state >"$LEAK_DIR/${1:-baseline}.now"
	cmp -s "$LEAK_DIR/${1:-baseline}" "$LEAK_DIR/${1:-baseline}.now"
}

# leak_check [NAME [SECONDS]]: 0 if the state is back to the snapshot.
leak_check() {
	local name=${1:-baseline} limit=${2:-$LEAK_TIMEOUT}
	[[ -r $LEAK_DIR/$name ]] || {
		echo "no leak snapshot '$name'"
		return 1
	}
	wait_for "$limit" leak_same "$name" && return 0
	echo "resources not back to the snapshot after ${limit}s:"
	diff -U0 "$LEAK_DIR/$name" "$LEAK_DIR/$name.now" | tail -n +3
	if command -v rdma >/dev/null; then
		local t
		for t in qp cm_id; do
			echo "rdma res show $t:"
			rdma res show "$t" 2>&1 | head -n 20
		done
	fi
	return 1
}

leak_cleanup() {
	rm -rf "$LEAK_DIR"
}
