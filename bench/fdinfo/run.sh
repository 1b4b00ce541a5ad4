#!/bin/sh
# The fdinfo scanner's speed goals (a benchmark, not a test): on a fixture
# /proc of 2000 processes, 20 of them holding DRM fds, a full snapshot (the
# walk and every read) under 15 ms of CPU and a steady-state tick (index
# cached) under 3 ms. Also measured on this machine's real /proc, with
# BENCH_SPAWN (300) extra sleeping processes of BENCH_SPAWN_FDS (20) fds
# each, where discovery uses fstatat() on procfs instead of readlink().
# The fixture's processes hold BENCH_MIN_FDS..BENCH_MAX_FDS (5..60) fds.
#
#   bench/fdinfo/run.sh [ITERS]        (default 200)
#
# Builds $O/libgpuscope.a (O=build) and $O/bench/fdinfo/bench_fdinfo,
# writes the fixture to $O/bench/fdinfo/fixture (bench/fdinfo/make-fixture.py,
# seed 1), prints the report and keeps it in $O/bench/fdinfo/report.txt.
set -eu
cd "$(dirname "$0")/../.."
O=${O:-build}
ITERS=${1:-200}
SPAWN=${BENCH_SPAWN:-300}
SPAWN_FDS=${BENCH_SPAWN_FDS:-20}
MIN_FDS=${BENCH_MIN_FDS:-5}
MAX_FDS=${BENCH_MAX_FDS:-60}
out=$O/bench/fdinfo
mkdir -p "$out"
make -s "$O/libgpuscope.a"
${CC:-cc} -std=gnu11 -O2 -g -D_GNU_SOURCE -Isrc -Wall -Wextra -o "$out/bench_fdinfo" \
	bench/fdinfo/bench_fdinfo.c "$O/libgpuscope.a" -lm -lpthread -ldl
python3 bench/fdinfo/make-fixture.py "$out/fixture" --procs 2000 --drm 20 \
	--min-fds "$MIN_FDS" --max-fds "$MAX_FDS" --seed 1 >"$out/fixture.txt"
{
	echo "fdinfo scanner benchmark, $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), kernel $(uname -r)"
	echo "fixture on $(stat -f -c %T "$out/fixture"): $(cat "$out/fixture.txt")"
	echo "command: BENCH_MIN_FDS=$MIN_FDS BENCH_MAX_FDS=$MAX_FDS BENCH_SPAWN=$SPAWN bench/fdinfo/run.sh $ITERS"
	echo
	echo "fixture /proc (fd links read with readlinkat):"
	"$out/bench_fdinfo" --proc "$out/fixture/proc" --sys "$out/fixture/sys" --iters "$ITERS"
	echo
	echo "real /proc (fstatat on procfs), with $SPAWN extra processes of $SPAWN_FDS fds:"
	"$out/bench_fdinfo" --proc /proc --sys /sys --iters "$ITERS" --spawn "$SPAWN" \
		--spawn-fds "$SPAWN_FDS" --raw
	echo
	echo "goals: full < 15 ms, steady < 3 ms (fixture)"
} | tee "$out/report.txt"
