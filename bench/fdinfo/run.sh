#!/bin/sh
# The fdinfo scanner's speed goals (a benchmark, not a test): on a fixture
# /proc of 2000 processes, 20 of them holding DRM fds, a full snapshot (the
# index and every read) under 15 ms of CPU and a steady-state tick (index
# cached) under 3 ms. The fixture is measured twice: with DRM's debugfs
# lists of clients (root), which name the processes to look at, and
# without them, where every process's fds are examined. Also measured on this machine's real /proc, with
# BENCH_SPAWN (300) extra sleeping processes of BENCH_SPAWN_FDS (20) fds
# each, where discovery uses fstatat() on procfs instead of readlink().
# The fixture's processes hold BENCH_MIN_FDS..BENCH_MAX_FDS (5..60) fds.
#
#   bench/fdinfo/run.sh [ITERS]        (default 200)
#
# Builds $O/libgpuscope.a (O=build), $O/gpuscope and $O/bench/fdinfo/bench_fdinfo,
# writes the fixture to $O/bench/fdinfo/fixture (bench/fdinfo/make-fixture.py,
# seed 1), prints the report and keeps it in $O/bench/fdinfo/report.txt.
# Besides the scanner alone (bench_fdinfo), it times BENCH_E2E_RUNS (30) whole
# runs of `gpuscope --root ... --json` on the fixture with bench/wait4run.c:
# the DRM backend, the window of two samples, every process's details, JSON.
set -eu
cd "$(dirname "$0")/../.."
O=${O:-build}
ITERS=${1:-200}
SPAWN=${BENCH_SPAWN:-300}
SPAWN_FDS=${BENCH_SPAWN_FDS:-20}
MIN_FDS=${BENCH_MIN_FDS:-5}
MAX_FDS=${BENCH_MAX_FDS:-60}
E2E_RUNS=${BENCH_E2E_RUNS:-30}
out=$O/bench/fdinfo
mkdir -p "$out"
make -s "$O/libgpuscope.a"
${CC:-cc} -std=gnu11 -O2 -g -D_GNU_SOURCE -Isrc -Wall -Wextra -o "$out/bench_fdinfo" \
	bench/fdinfo/bench_fdinfo.c "$O/libgpuscope.a" -lm -lpthread -ldl
python3 bench/fdinfo/make-fixture.py "$out/fixture" --procs 2000 --drm 20 \
	--min-fds "$MIN_FDS" --max-fds "$MAX_FDS" --seed 1 \
	--e2e-sys tests/fixtures/amd-dgpu/sys >"$out/fixture.txt"
make -s "$O/gpuscope"
${CC:-cc} -O2 -static -o "$out/wait4run" bench/wait4run.c 2>/dev/null ||
	${CC:-cc} -O2 -o "$out/wait4run" bench/wait4run.c

# Whole runs of gpuscope --root ROOT --json: median wall and CPU (user + system) ms.
e2e() {
	root=$1
	n=$E2E_RUNS
	: >"$out/e2e.txt"
	GPUSCOPE_NVML=/nonexistent "$O/gpuscope" --root "$root" --json >"$out/e2e.json"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("  gpuscope --root %s --json: %d GPU, %d processes" % (sys.argv[2], len(d["gpus"]), len(d["processes"])))' \
		"$out/e2e.json" "$root"
	while [ "$n" -gt 0 ]; do
		GPUSCOPE_NVML=/nonexistent "$out/wait4run" "$out/e2e.one" "$O/gpuscope" --root "$root" --json >/dev/null
		cat "$out/e2e.one" >>"$out/e2e.txt"
		n=$((n - 1))
	done
	sort -n -k1 "$out/e2e.txt" | awk '{ w[NR] = $1 } END { printf "  wall: median %.1f ms", w[int((NR + 1) / 2)] * 1000 }'
	awk '{ print $2 + $3 }' "$out/e2e.txt" | sort -n |
		awk '{ c[NR] = $1 } END { printf "   CPU: median %.2f ms, min %.2f ms (%d runs)\n", c[int((NR + 1) / 2)] * 1000, c[1] * 1000, NR }'
}
{
	echo "fdinfo scanner benchmark, $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), kernel $(uname -r)"
	echo "fixture on $(stat -f -c %T "$out/fixture"): $(cat "$out/fixture.txt")"
	echo "command: BENCH_MIN_FDS=$MIN_FDS BENCH_MAX_FDS=$MAX_FDS BENCH_SPAWN=$SPAWN bench/fdinfo/run.sh $ITERS"
	echo
	echo "fixture /proc, as root with debugfs (fd links read with readlinkat):"
	"$out/bench_fdinfo" --proc "$out/fixture/proc" --sys "$out/fixture/sys" --iters "$ITERS"
	echo
	echo "fixture /proc, no debugfs (a container, or root without debugfs mounted):"
	"$out/bench_fdinfo" --proc "$out/fixture/proc" --sys "$out/fixture/sys-walk" --iters "$ITERS"
	echo
	echo "whole snapshots, the fixture's AMD GPU (tests/fixtures/amd-dgpu) and its 2000 processes:"
	echo " with debugfs:"
	e2e "$out/fixture/e2e"
	echo " without debugfs:"
	e2e "$out/fixture/e2e-walk"
	echo
	echo "real /proc (fstatat on procfs), with $SPAWN extra processes of $SPAWN_FDS fds:"
	"$out/bench_fdinfo" --proc /proc --sys /sys --iters "$ITERS" --spawn "$SPAWN" \
		--spawn-fds "$SPAWN_FDS" --raw
	echo
	echo "goals: full < 15 ms, steady < 3 ms (fixture)"
} | tee "$out/report.txt"
