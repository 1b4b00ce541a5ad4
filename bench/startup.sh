#!/usr/bin/env bash
# What gpuscope costs before it does anything, side by side with an empty C
# program: start-up of 'gpuscope --version', and 'gpuscope status --json' on
# the 8-GPU, 200-process machine of bench/status.sh (see docs/performance.md).
#
#   bench/startup.sh [RUNS]        (default 300; or BENCH_RUNS=N)
#   O=build-x bench/startup.sh     (the build directory; default build)
#   BENCH_BEFORE=OLD/gpuscope bench/startup.sh   (also another build's
#                                  --version and status --json, in the same
#                                  runs: before and after side by side)
#
# 1. Builds an empty C program (int main(void) { return 0; }) with the same
#    compiler and -O2, dynamically linked as gpuscope is.
# 2. Starts BENCH_PROCS (200) sleeping processes and writes a scenario of
#    BENCH_GPUS (8) busy H100s whose processes are those pids
#    (bench/make-scenario.py), as bench/status.sh does.
# 3. One hyperfine run (-N: no shell in between) of the three commands,
#    RUNS runs each after 30 warm-up runs: medians and ratios to the empty
#    program.
# 4. RUNS interleaved rounds of the three commands under bench/wait4run.c
#    (user + system CPU time of each whole process, from wait4()): the median
#    CPU per run of each.
#
# The report goes to the terminal and to $O/bench/startup-report.txt,
# hyperfine's JSON to $O/bench/startup-hyperfine.json. Exit status 0 when it
# ran: the goals are reported, not asserted (timings depend on the machine).
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
RUNS=${1:-${BENCH_RUNS:-300}}
GPUS=${BENCH_GPUS:-8}
PROCS=${BENCH_PROCS:-200}
O=${O:-build}
OUT=$O/bench
BIN=$PWD/$O/gpuscope
FAKE=$PWD/$O/fakenvml/current/libnvidia-ml.so.1

case $RUNS in
'' | *[!0-9]*)
	echo "usage: bench/startup.sh [RUNS]" >&2
	exit 2
	;;
esac
[ "$RUNS" -ge 10 ] || {
	echo "bench/startup.sh: RUNS must be at least 10" >&2
	exit 2
}
command -v hyperfine >/dev/null 2>&1 || {
	echo "bench/startup.sh: needs hyperfine (apt-get install hyperfine)" >&2
	exit 1
}
if [ ! -x "$BIN" ] || [ ! -f "$FAKE" ]; then
	echo "== building (make O=$O all)"
	make --no-print-directory O="$O" all >/dev/null
fi
mkdir -p "$OUT"
build_wait4run "$OUT"

EMPTY=$PWD/$OUT/empty
printf 'int main(void) { return 0; }\n' >"$OUT/empty.c"
${CC:-cc} -O2 -o "$EMPTY" "$OUT/empty.c"

# shellcheck disable=SC2034 # filled and read by bench/lib.sh
PIDS=()
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	stop_sleepers
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_sleepers "$PROCS" "$OUT/startup-pids"
SCN=$PWD/$OUT/startup-h100x${GPUS}-${PROCS}.scn
python3 bench/make-scenario.py --gpus "$GPUS" --procs "$PROCS" --pids-file "$OUT/startup-pids" \
	-o "$SCN" >/dev/null

# the environment of every command, the empty program's too
unset NO_COLOR GPUSCOPE_PROC_ROOT GPUSCOPE_SYSFS_ROOT GPUSCOPE_ROOT FAKE_NVML_TIME FAKE_NVML_LOG
export GPUSCOPE_NVML=$FAKE FAKE_NVML_SCENARIO=$SCN LANG=C.UTF-8 LC_ALL=C.UTF-8

# check that status sees every GPU and process before timing it
"$BIN" status --json >"$OUT/startup-status.json"
seen=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["gpus"]), len(d["processes"]))' \
	"$OUT/startup-status.json")
if [ "$seen" != "$GPUS $PROCS" ]; then
	echo "bench/startup.sh: status --json saw $seen GPUs and processes, not $GPUS $PROCS" >&2
	exit 1
fi

NAMES=(empty version status)
CMDS=("$EMPTY" "$BIN --version" "$BIN status --json")
HF=(-n empty "${CMDS[0]}" -n version "${CMDS[1]}" -n status "${CMDS[2]}")
BEFORE=${BENCH_BEFORE:-}
if [ -n "$BEFORE" ]; then
	[ -x "$BEFORE" ] || {
		echo "bench/startup.sh: BENCH_BEFORE=$BEFORE is not a program" >&2
		exit 2
	}
	NAMES+=(before-version before-status)
	CMDS+=("$BEFORE --version" "$BEFORE status --json")
	HF+=(-n before-version "${CMDS[3]}" -n before-status "${CMDS[4]}")
fi

echo "== hyperfine: $RUNS runs of each, side by side"
hyperfine -N --warmup 30 --runs "$RUNS" --style basic --output=null \
	--export-json "$OUT/startup-hyperfine.json" "${HF[@]}" >"$OUT/startup-hyperfine.txt"

echo "== wait4run: $RUNS interleaved rounds of CPU time"
for n in "${NAMES[@]}"; do : >"$OUT/startup-cpu-$n.txt"; done
for r in $(seq "$RUNS"); do
	for k in "${!NAMES[@]}"; do
		i=$(((k + r) % ${#NAMES[@]}))
		# shellcheck disable=SC2086 # the commands are words
		"$OUT/wait4run" "$OUT/startup-w4r.txt" ${CMDS[$i]} >/dev/null
		cat "$OUT/startup-w4r.txt" >>"$OUT/startup-cpu-${NAMES[$i]}.txt"
	done
done

{
	echo "gpuscope start-up and status --json, side by side with an empty C program"
	echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr); load: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "gpuscope: $(readelf -d "$BIN" 2>/dev/null | awk '/NEEDED/ { gsub(/[][]/, "", $5); printf "%s ", $5 }')"
	echo "scenario: $GPUS H100s, $PROCS processes (sleepers, real /proc), fake NVML"
	echo "hyperfine -N --warmup 30 --runs $RUNS (wall), then $RUNS interleaved wait4run rounds (CPU)"
	[ -z "$BEFORE" ] || echo "before: $BEFORE: $(readelf -d "$BEFORE" 2>/dev/null | awk '/NEEDED/ { gsub(/[][]/, "", $5); printf "%s ", $5 }')"
	python3 - "$OUT" "$RUNS" "${NAMES[@]}" <<'EOF'
import json, statistics, sys
out, runs, names = sys.argv[1], sys.argv[2], sys.argv[3:]
res = {r["command"]: r for r in json.load(open(out + "/startup-hyperfine.json"))["results"]}
cpu = {}
for n in names:
    rows = [l.split() for l in open("%s/startup-cpu-%s.txt" % (out, n)) if l.strip()]
    cpu[n] = statistics.median(float(r[1]) + float(r[2]) for r in rows) * 1e3
base = res["empty"]["median"]
print("%-28s %12s %10s %14s %16s" % ("command", "median ms", "x empty", "mean user+sys", "median CPU (ms)"))
labels = {"empty": "empty C program", "version": "gpuscope --version",
          "status": "gpuscope status --json", "before-version": "before: --version",
          "before-status": "before: status --json"}
for n in names:
    r = res[n]
    print("%-28s %12.3f %10.2f %14.3f %16.3f" % (labels[n], r["median"] * 1e3, r["median"] / base,
                                                  (r["user"] + r["system"]) * 1e3, cpu[n]))
v = res["version"]["median"] / base
print("goal: --version within 1.5x of the empty program: %.2fx: %s" % (v, "PASS" if v <= 1.5 else "FAIL"))
print("goal: status --json under 6 ms of CPU: %.2f ms: %s" % (cpu["status"], "PASS" if cpu["status"] < 6 else "FAIL"))
EOF
	echo "commands: $EMPTY | $BIN --version | $BIN status --json"
	echo "command: O=$O bench/startup.sh $RUNS"
} | tee "$OUT/startup-report.txt"
