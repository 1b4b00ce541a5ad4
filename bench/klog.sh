#!/usr/bin/env bash
# The speed of doctor's kernel-log check (issue 6): generates a synthetic
# kernel log of SIZE MB (default 100) in mixed formats (dmesg, dmesg -T,
# syslog with and without the kernel's stamp, ISO/journal, kmsg records),
# about 0.1% of its lines from the GPU drivers (NVIDIA Xid, a fall off the
# bus, a GSP timeout, amdgpu, AER), with one storm of 20,000 Xid 31 lines;
# then times, on one core,
#   klog_bench   klog_next() alone, and dr_check_klog() (bench/klog_bench.c)
#   doctor       the whole 'gpuscope doctor --log FILE --json'
# and prints MB/s. The goal: over 200 MB/s reading and decoding.
# Then (issue 15) logs of 3,000, 10,000 and 100,000 lines in which every
# line is a pair of PCI address and Xid of its own (codes that point at
# one another: 45 after 48 or NVLink, 63/64 after 48, 94/95, 154 after a
# fatal one), one finding per line, through the whole 'gpuscope doctor
# --only klog --log FILE --json', in lines/s: the report must stay linear
# in its events (it was cubic: 2,000 such lines took 194 s).
#
#   bench/klog.sh [SIZE_MB]        (O=build-dir, default build)
set -euo pipefail

cd "$(dirname "$0")/.."
SIZE=${1:-100}
O=${O:-build}
OUT=$O/bench
LOG=$OUT/klog-$SIZE.log
mkdir -p "$OUT"
[ -f "$O/libgpuscope.a" ] || make O="$O" -j"$(nproc)" all >/dev/null

${CC:-cc} -std=gnu11 -O2 -D_GNU_SOURCE -Isrc -o "$OUT/klog_bench" bench/klog_bench.c \
	"$O/libgpuscope.a" -ldl -lpthread -lm -ljansson -lz

if [ ! -s "$LOG" ]; then
	python3 - "$LOG.tmp" "$SIZE" <<'PY'
import random, sys
path, size = sys.argv[1], int(sys.argv[2]) * 1000 * 1000
rnd = random.Random(6)
noise = [
    "usb 1-4: new high-speed USB device number %d using xhci_hcd",
    "EXT4-fs (nvme0n1p2): mounted filesystem with ordered data mode. Quota mode: none.",
    "IPv6: ADDRCONF(NETDEV_CHANGE): eth%d: link becomes ready",
    "audit: type=1400 audit(1700000000.%03d:123): apparmor=\"STATUS\" operation=\"profile_load\"",
    "systemd-journald[%d]: Received client request to flush runtime journal.",
    "perf: interrupt took too long (%d > 2500), lowering kernel.perf_event_max_sample_rate",
]
gpu = [
    "NVRM: Xid (PCI:0000:%02x:00): 13, pid=%d, name=train, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address",
    "NVRM: Xid (PCI:0000:%02x:00): 48, pid=%d, name=train, An uncorrectable double bit error (DBE) has been detected",
    "NVRM: Xid (PCI:0000:%02x:00): 45, pid=%d, name=train, Ch 00000008",
    "NVRM: Xid (PCI:0000:%02x:00): 119, pid=%d, name=python, Timeout after 6s of waiting for RPC response from GPU0 GSP! Expected function 76 (GSP_RM_CONTROL)",
    "NVRM: GPU 0000:%02x:00.0: GPU has fallen off the bus.",
    "amdgpu 0000:%02x:00.0: amdgpu: GPU reset begin! %d",
    "pcieport 0000:%02x:01.0: AER: Corrected error message received from 0000:00:01.%d",
]
def stamp(i, t):
    k = i % 5
    if k == 0: return "[%12.6f] " % t
    if k == 1: return "[Mon Nov 30 %02d:%02d:%02d 2026] " % (t // 3600 % 24, t // 60 % 60, t % 60)
    if k == 2: return "Nov 30 %02d:%02d:%02d host kernel: [%12.6f] " % (t // 3600 % 24, t // 60 % 60, t % 60, t)
    if k == 3: return "2026-11-30T%02d:%02d:%02d.%06d+00:00 host kernel: " % (t // 3600 % 24, t // 60 % 60, t % 60, i % 1000000)
    return "6,%d,%d,-;" % (i, int(t * 1e6))
n, i, t, storm = 0, 0, 1.0, False
with open(path, "w") as f:
    while n < size:
        i += 1
        t += 0.001
        if not storm and n > size // 2:
            storm = True
            for j in range(20000):
                line = stamp(i, t) + "NVRM: Xid (PCI:0000:41:00): 31, pid=%d, name=a.out, Ch 00000010, intr 10000000. MMU Fault: ENGINE GRAPHICS\n" % (1000 + j % 7)
                f.write(line); n += len(line); i += 1
            continue
        if rnd.random() < 0.001:
            msg = rnd.choice(gpu).replace("%02x", "%02x" % rnd.choice((0x18, 0x3b, 0x41))).replace("%d", str(rnd.randrange(1, 99999)))
        else:
            msg = rnd.choice(noise).replace("%03d", "123").replace("%d", str(rnd.randrange(1, 999)))
        line = stamp(i, t) + msg + "\n"
        f.write(line); n += len(line)
PY
	mv "$LOG.tmp" "$LOG"
fi

echo "== $LOG ($(du -m "$LOG" | cut -f1) MB), one core"
taskset -c 0 "$OUT/klog_bench" "$LOG"
if [ -x "$O/gpuscope" ]; then
	start=$(date +%s.%N)
	taskset -c 0 "$O/gpuscope" doctor --log "$LOG" --json >/dev/null || true
	end=$(date +%s.%N)
	awk -v s="$start" -v e="$end" -v f="$(stat -c %s "$LOG")" \
		'BEGIN { printf "doctor   whole run %.3f s: %.0f MB/s\n", e - s, f / 1e6 / (e - s) }'
fi

# distinct (PCI address, Xid) pairs: one event, and one finding, per line
for lines in 3000 10000 100000; do
	PAIRS=$OUT/klog-pairs-$lines.log
	if [ ! -s "$PAIRS" ]; then
		python3 - "$PAIRS.tmp" "$lines" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
codes = [8, 13, 31, 43, 45, 48, 63, 64, 74, 79, 94, 95, 119, 154]
with open(path, "w") as f:
    for i in range(n):
        g, k = divmod(i, len(codes))
        c = codes[k]
        addr = "%04x:%02x:%02x" % (g // (256 * 32), g // 32 % 256, g % 32)
        if c == 154:
            tail = "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)"
        else:
            tail = "pid=%d, name=train, Ch 00000008" % (1000 + i)
        f.write("[%12.6f] NVRM: Xid (PCI:%s): %d, %s\n" % (1 + i * 0.001, addr, c, tail))
PY
		mv "$PAIRS.tmp" "$PAIRS"
	fi
	if [ -x "$O/gpuscope" ]; then
		start=$(date +%s.%N)
		taskset -c 0 "$O/gpuscope" doctor --only klog --log "$PAIRS" --json >/dev/null || true
		end=$(date +%s.%N)
		awk -v s="$start" -v e="$end" -v n="$lines" \
			'BEGIN { printf "pairs  %7d lines, one finding each: %.3f s, %.0f lines/s\n", n, e - s, n / (e - s) }'
	fi
done
