#!/usr/bin/env bash
# The speed benchmark of 'gpuscope doctor' over an hour's recording (issue 6;
# see docs/performance.md; bench/klog.sh measures the kernel log).
#
#   bench/doctor-recording.sh [ROUNDS]     (default 10)
#
# 1. Records 3600 samples (an hour at gpuscope record's default interval) of
#    the demo's 8 busy H100s and their processes through the fake NVML
#    library, 0.05 s apart (3 minutes; kept in build/bench/doctor-8x3600.rec
#    and reused).
# 2. Times ROUNDS runs of
#      gpuscope doctor --recording doctor-8x3600.rec --since +0 --log /dev/null
#    (health and workload patterns over every sample, an empty kernel log) by
#    bench/wait4run.c, and prints the median and the goal's verdict: the hour
#    of 8 GPUs in under a second.
set -euo pipefail

cd "$(dirname "$0")/.."
. bench/lib.sh
ROUNDS=${1:-${BENCH_ROUNDS:-10}}
O=build
OUT=$O/bench
FAKE=$O/fakenvml/current/libnvidia-ml.so.1
REC=$OUT/doctor-8x3600.rec

case $ROUNDS in
'' | *[!0-9]* | 0)
	echo "usage: bench/doctor-recording.sh [ROUNDS]  (ROUNDS >= 1)" >&2
	exit 2
	;;
esac
if [ ! -x $O/gpuscope ] || [ ! -f $FAKE ]; then
	echo "== building (make all)"
	make --no-print-directory all >/dev/null
fi
mkdir -p "$OUT"
build_wait4run "$OUT"

if [ ! -s "$REC" ] || [ "$($O/gpuscope replay "$REC" info | awk '$1 == "samples" { print $2 }')" != 3600 ]; then
	echo "== recording 3600 samples of 8 GPUs (3 minutes)"
	rm -f "$REC" "$REC".[0-9]*
	GPUSCOPE_NVML=$FAKE FAKE_NVML_SCENARIO=data/demo/h100x8.scn \
		$O/gpuscope record -q -d 0.05 -c 3600 --max-size 0 -o "$REC" >/dev/null || [ $? = 1 ]
fi
: >"$OUT/doctor-rec.runs"
for ((i = 0; i < ROUNDS; i++)); do
	$OUT/wait4run "$OUT/r.1" $O/gpuscope doctor --recording "$REC" --since +0 --log /dev/null >"$OUT/doctor-rec.out" || true
	cat "$OUT/r.1" >>"$OUT/doctor-rec.runs"
done
rm -f "$OUT/r.1"
wr=$(median "$OUT/doctor-rec.runs" 1)
echo
echo "machine: $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "command: bench/doctor-recording.sh $ROUNDS   (medians of $ROUNDS interleaved runs)"
awk -v w="$wr" -v r="$(median "$OUT/doctor-rec.runs" 4)" 'BEGIN {
	printf "doctor over 3600 samples of 8 GPUs:  wall %7.1f ms  peak RSS %6.1f MiB   goal < 1 s: %s\n", w * 1000, r / 1024, (w < 1) ? "PASS" : "FAIL" }'
echo "findings: $(grep -cE '^(ERROR|WARN|INFO)' "$OUT/doctor-rec.out") (see $OUT/doctor-rec.out)"
