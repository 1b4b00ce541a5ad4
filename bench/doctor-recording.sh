#!/usr/bin/env bash
# The speed benchmark of 'gpuscope doctor' over a recording and a kernel log
# (issue 6; see docs/performance.md).
#
#   bench/doctor-recording.sh [ROUNDS]     (default 10)
#
# 1. Records 3600 samples (an hour at gpuscope record's default interval) of
#    the demo's 8 busy H100s and their processes through the fake NVML
#    library, 0.05 s apart (3 minutes; kept in build/bench/doctor-8x3600.rec
#    and reused).
# 2. Writes a 100 MB kernel log (build/bench/kernel-100M.log): ordinary
#    kernel messages in dmesg, syslog and journal formats, one GPU line in a
#    thousand (Xid storms, AER, amdgpu, i915).
# 3. Times ROUNDS runs of
#      gpuscope doctor --recording doctor-8x3600.rec --since +0 --log /dev/null
#      gpuscope doctor --recording doctor-8x3600.rec --since -1s --log kernel-100M.log
#    (the second reads one sample: the log's cost alone), by bench/wait4run.c,
#    and prints medians, the log's MB/s and the goals' verdicts: the hour of 8
#    GPUs in under a second, the log at over 200 MB/s on one core.
set -euo pipefail

cd "$(dirname "$0")/.."
ROUNDS=${1:-${BENCH_ROUNDS:-10}}
O=build
OUT=$O/bench
FAKE=$O/fakenvml/current/libnvidia-ml.so.1
REC=$OUT/doctor-8x3600.rec
LOG=$OUT/kernel-100M.log

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
if [ ! -x $OUT/wait4run ] || [ bench/wait4run.c -nt $OUT/wait4run ]; then
	${CC:-cc} -O2 -static -o $OUT/wait4run bench/wait4run.c 2>/dev/null ||
		${CC:-cc} -O2 -o $OUT/wait4run bench/wait4run.c
fi

if [ ! -s "$REC" ] || [ "$($O/gpuscope replay "$REC" info | awk '$1 == "samples" { print $2 }')" != 3600 ]; then
	echo "== recording 3600 samples of 8 GPUs (3 minutes)"
	rm -f "$REC" "$REC".[0-9]*
	GPUSCOPE_NVML=$FAKE FAKE_NVML_SCENARIO=data/demo/h100x8.scn \
		$O/gpuscope record -q -d 0.05 -c 3600 --max-size 0 -o "$REC" >/dev/null || [ $? = 1 ]
fi
if [ ! -s "$LOG" ] || [ "$(stat -c %s "$LOG")" -lt 100000000 ]; then
	echo "== writing a 100 MB kernel log"
	python3 - "$LOG" <<'PY'
import random, sys
random.seed(5)
plain = [
    "usb 1-1: new high-speed USB device number %d using xhci_hcd",
    "EXT4-fs (nvme0n1p2): mounted filesystem with ordered data mode. Quota mode: none.",
    "audit: type=1400 audit(1764500000.%03d:42): apparmor=\"STATUS\" operation=\"profile_load\"",
    "IPv6: ADDRCONF(NETDEV_CHANGE): eth%d: link becomes ready",
    "systemd[1]: Started session-%d.scope - Session of User alice.",
    "TCP: request_sock_TCP: Possible SYN flooding on port %d. Sending cookies.",
]
gpu = [
    "NVRM: Xid (PCI:0000:18:00): 13, pid=%d, name=python, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address",
    "NVRM: Xid (PCI:0000:3b:00): 31, pid=%d, name=python, Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f_12340000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
    "pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.%d",
    "amdgpu 0000:03:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:%d pasid:32769)",
    "i915 0000:00:02.0: [drm] GPU HANG: ecode 12:1:85dffffb, in chrome [%d]",
]
out = open(sys.argv[1], "w")
size, t, n = 0, 0.0, 0
while size < 100_000_000:
    t += random.random() * 0.01
    n += 1
    msg = (random.choice(gpu) if n % 1000 == 0 else random.choice(plain)) % (n % 65536)
    fmt = n % 3
    if fmt == 0:
        line = "[%12.6f] %s\n" % (t, msg)
    elif fmt == 1:
        s = int(t)
        line = "Nov 30 %02d:%02d:%02d gpu-07 kernel: %s\n" % (s // 3600 % 24, s // 60 % 60, s % 60, msg)
    else:
        s = int(t)
        line = "2026-11-30T%02d:%02d:%02d.%06d+00:00 gpu-07 kernel: %s\n" % (s // 3600 % 24, s // 60 % 60, s % 60, int(t * 1e6) % 1000000, msg)
    out.write(line)
    size += len(line)
out.close()
PY
fi

: >"$OUT/doctor-rec.runs"
: >"$OUT/doctor-log.runs"
for ((i = 0; i < ROUNDS; i++)); do
	$OUT/wait4run "$OUT/r.1" $O/gpuscope doctor --recording "$REC" --since +0 --log /dev/null >"$OUT/doctor-rec.out" || true
	cat "$OUT/r.1" >>"$OUT/doctor-rec.runs"
	$OUT/wait4run "$OUT/r.1" $O/gpuscope doctor --recording "$REC" --since -1s --log "$LOG" >"$OUT/doctor-log.out" || true
	cat "$OUT/r.1" >>"$OUT/doctor-log.runs"
done
rm -f "$OUT/r.1"
median() { sort -g -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
wr=$(median "$OUT/doctor-rec.runs" 1)
wl=$(median "$OUT/doctor-log.runs" 1)
cl=$(awk '{ print $2 + $3 }' "$OUT/doctor-log.runs" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
mb=$(stat -c %s "$LOG")
echo
echo "machine: $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "command: bench/doctor-recording.sh $ROUNDS   (medians of $ROUNDS interleaved runs)"
awk -v w="$wr" -v r="$(median "$OUT/doctor-rec.runs" 4)" 'BEGIN {
	printf "doctor over 3600 samples of 8 GPUs:  wall %7.1f ms  peak RSS %6.1f MiB   goal < 1 s: %s\n", w * 1000, r / 1024, w < 1 ? "PASS" : "FAIL" }'
awk -v w="$wl" -v c="$cl" -v b="$mb" 'BEGIN {
	printf "doctor --log of %.0f MB:             wall %7.1f ms  cpu %7.1f ms  %.0f MB/s   goal > 200 MB/s: %s\n",
		b / 1e6, w * 1000, c * 1000, b / 1e6 / w, b / 1e6 / w > 200 ? "PASS" : "FAIL" }'
echo "findings from the log: $(grep -cE '^(ERROR|WARN|INFO)' "$OUT/doctor-log.out") (see $OUT/doctor-log.out)"
