#!/bin/sh
# The one prepared run on the H200 the device tool sometimes lends (15
# minutes of device time in all, one chip: ../../README's "device" notes,
# docs/performance.md). From the repository root on that machine:
#
#   sh bench/device/h200.sh            (writes everything under $OUT)
#
# It builds gpuscope there (a prebuilt build-device/gpuscope carried along
# is used when the build cannot be made: that machine reaches no package
# mirror), then runs, each under a time limit so that one hung step cannot
# spend the loan:
#   1. nvidia-smi -q and -L, for comparison           (seconds)
#   2. gpuscope bench --quick --json, and the table   (about 40 s)
#   3. gpuscope bench matmul                          (about 30 s)
#   4. gpuscope burn --duration 60 --json             (about 70 s)
#   5. gpuscope status and doctor afterwards          (seconds)
# about 4 minutes in all. Every step's output and exit status go to $OUT;
# summary.txt lists them. Nothing is installed and nothing is changed on the
# machine but the build directory and the bench store, which goes to $OUT
# (GPUSCOPE_BENCH_DIR).
set -u
OUT=${OUT:-/tmp/gpuscope-device}
mkdir -p "$OUT"
export GPUSCOPE_BENCH_DIR="$OUT/store"
summary="$OUT/summary.txt"
: >"$summary"

step() {
	name=$1
	limit=$2
	shift 2
	start=$(date +%s.%N)
	timeout -k 5 "$limit" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
	rc=$?
	end=$(date +%s.%N)
	printf '%-22s rc=%-4s %6.1f s  %s\n' "$name" "$rc" "$(awk "BEGIN { print $end - $start }")" "$*" >>"$summary"
}

{
	date -u
	uname -a
	nproc
	free -g
	cat /proc/cpuinfo | grep -m1 'model name'
} >"$OUT/machine.txt" 2>&1
step nvidia-smi-q 60 nvidia-smi -q
step nvidia-smi-L 30 nvidia-smi -L

G=""
if step build 300 make -j"$(nproc)" O=build-device build-device/gpuscope && [ -x build-device/gpuscope ]; then
	G=build-device/gpuscope
elif [ -x prebuilt/gpuscope ]; then
	G=prebuilt/gpuscope
	echo "build failed (see build.err): using prebuilt/gpuscope" >>"$summary"
else
	echo "no gpuscope: the build failed (build.err) and no prebuilt/gpuscope was carried" >>"$summary"
	cat "$summary"
	exit 1
fi
"$G" --version >"$OUT/version.txt" 2>&1

step bench-quick-json 150 "$G" bench --quick --json --plot "$OUT/roofline.svg"
step bench-quick-table 150 "$G" bench --quick stream fma mma h2d d2h launch
step bench-matmul 120 "$G" bench matmul
step burn 120 "$G" burn --duration 60 --json
step status 30 "$G" status
step doctor 60 "$G" doctor
cat "$summary"
