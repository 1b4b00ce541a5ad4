#!/usr/bin/env bash
# How fast the flight recorder's file grows (see docs/performance.md): 8 busy
# H100s and 50 processes on the fake NVML library, every value that moves on
# a real machine moving (utilisation, power, temperatures, clocks, memory,
# energy, each process's SM and memory use; CPU time and RSS of 50 real
# processes, each using a little CPU all the time), recorded with the default
# options.
#
#   bench/record.sh [SAMPLES]       (default 600; or BENCH_SAMPLES=N)
#
# Prints bytes per sample over the whole recording (keyframes included) and
# the sizes of keyframes and deltas as the file grew, with the machine and
# the command. Exit status 0 when it ran; the goal (< 2 KiB a sample) is
# reported, not asserted.
set -euo pipefail

cd "$(dirname "$0")/.."
SAMPLES=${1:-${BENCH_SAMPLES:-600}}
GPUS=${BENCH_GPUS:-8}
PROCS=${BENCH_PROCS:-50}
O=build
OUT=$O/bench
FAKE=$O/fakenvml/current/libnvidia-ml.so.1
case $SAMPLES in
'' | *[!0-9]*)
	echo "usage: bench/record.sh [SAMPLES]" >&2
	exit 2
	;;
esac
if [ ! -x $O/gpuscope ] || [ ! -f $FAKE ]; then
	make --no-print-directory all >/dev/null
fi
mkdir -p "$OUT"
pids=()
cleanup() { [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null; true; }
trap cleanup EXIT INT TERM
# processes that use a little CPU all the time (a few % in all), so that their
# CPU time and CPU % change in every sample, as a real job's do
for _ in $(seq "$PROCS"); do
	if command -v perl >/dev/null 2>&1; then
		perl -e 'while (1) { select(undef, undef, undef, 0.05); for (1 .. 10000) { } }' &
	else
		sleep 100000 &
	fi
	pids+=($!)
done
printf '%s\n' "${pids[@]}" >"$OUT/record-pids.txt"
# constant values made to move, each GPU at its own period
python3 bench/make-scenario.py --gpus "$GPUS" --procs "$PROCS" --pids-file "$OUT/record-pids.txt" |
	awk '
	/^\[gpu/ { g++ }
	/^\[process/ { p++ }
	function per(base) { return base + (g * 7 + p * 3) % 13 }
	$1 == "temperature" { print "temperature = sine 45 82 " per(90); next }
	$1 == "memory_temperature" { print "memory_temperature = sine 40 70 " per(120); next }
	$1 == "power_usage" { print "power_usage = sine 150000 700000 " per(11); next }
	$1 == "power_instant" { print "power_instant = sine 140000 700000 " per(5); next }
	$1 == "energy" { print "energy = ramp 48000000000 108480000000 0 86400"; next }
	$1 == "util_gpu" { print "util_gpu = square 3 100 " per(6) " 0.7"; next }
	$1 == "util_memory" { print "util_memory = sine 5 60 " per(9); next }
	$1 == "clock_sm" || $1 == "clock_graphics" { print $1 " = sine 1410 1980 " per(17); next }
	$1 == "memory_used" { print "memory_used = sine 20000 78000 " per(300); next }
	$1 == "sm_util" { print "sm_util = sine 0 100 " per(8); next }
	$1 == "mem_util" { print "mem_util = sine 0 50 " per(10); next }
	$1 == "used_memory" { print "used_memory = sine 400 30000 " per(600); next }
	{ print }' >"$OUT/record.scn"

rec=$OUT/bench.rec
rm -f "$rec" "$rec".[0-9]*
echo "== recording $SAMPLES samples of $GPUS GPUs and $PROCS processes (interval 0.1 s)"
GPUSCOPE_NVML=$FAKE FAKE_NVML_SCENARIO=$OUT/record.scn \
	$O/gpuscope record -q -d 0.1 -c "$SAMPLES" -o "$rec" --max-size 0 >/dev/null || [ $? = 1 ]
size=$(stat -c %s "$rec")
$O/gpuscope replay "$rec" info >"$OUT/record-info.txt"
read -r n < <(awk '$1 == "samples" { print $2 }' "$OUT/record-info.txt")
# check: the recording replays, with the processes
procs=$($O/gpuscope replay "$rec" status --json --at +5s | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["processes"]))')
echo
echo "machine: $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "command: bench/record.sh $SAMPLES   (gpuscope record -d 0.1 -c $SAMPLES, defaults: keyframe every 60)"
echo "samples recorded:     $n ($procs processes in a sample)"
echo "file size:            $size bytes"
awk -v s="$size" -v n="$n" 'BEGIN {
	b = s / n
	printf "bytes per sample:     %.0f (%.2f KiB)  goal < 2048: %s\n", b, b / 1024, b < 2048 ? "PASS" : "FAIL"
}'
