#!/usr/bin/env bash
# The scrape benchmark of 'gpuscope serve' against nvitop-exporter (a Python
# exporter built on nvitop and nvidia-ml-py), on the same fake NVML library
# and the same scenario. A report, not a test.
#
#   bench/serve.sh [SECONDS]     (default 30: wrk runs SECONDS against each tool)
#   bench/serve.sh 600           steady mode (SECONDS >= 120): gpuscope alone,
#                                wrk in one-minute runs, RSS and requests/s
#                                sampled after each minute, to show no growth
#
# 1. Makes $O/bench-serve-venv with nvitop-exporter from PyPI, pinned, unless
#    it is there already with those pins (O defaults to build).
# 2. Starts BENCH_PROCS (200) sleeping processes and writes the scenario of
#    bench/status.sh (bench/make-scenario.py: BENCH_GPUS, 8, busy H100s) whose
#    GPU processes are those pids, so that both exporters resolve every one of
#    them in the real /proc (user, command). Killed on exit.
# 3. Starts each exporter pinned to CPU 0 (taskset -c 0), collecting every
#    second: 'gpuscope serve -d 1 --processes 50', 'gpuscope serve -d 1
#    --processes 200' (every process, as nvitop-exporter exports them all) and
#    'nvitop-exporter --interval 1'; checks that its /metrics shows every GPU
#    (and, for nvitop-exporter, if it cannot, says which NVML calls failed:
#    the fake's FAKE_NVML_LOG); after BENCH_WARMUP seconds runs
#    'wrk -t1 -c8 -dSECONDS --latency' pinned to CPU 1 against /metrics and
#    reads requests/s and the latency percentiles from wrk, the exporter's RSS
#    (VmRSS, VmHWM) before and after, its CPU time per scrape, and the size of
#    one scrape (the body, text format 0.0.4: wrk sends no Accept header).
#
# The report goes to stdout and $O/bench/serve-report.txt; wrk's output and
# one scrape of each tool are kept in $O/bench/. Goals (gpuscope): at least
# 2000 scrapes/s on one core, p99 under 5 ms, RSS under 16 MiB.
# Each server runs BENCH_WARMUP (35) seconds before it is measured: gpuscope
# serve's memory settles once its window of 30 samples for doctor is full.
# Environment: O (build directory), BENCH_GPUS, BENCH_PROCS, BENCH_CONNECTIONS (8),
# BENCH_WARMUP (35).
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
SECONDS_PER_RUN=${1:-30}
GPUS=${BENCH_GPUS:-8}
PROCS=${BENCH_PROCS:-200}
CONNS=${BENCH_CONNECTIONS:-8}
# seconds each server runs before it is measured: gpuscope serve keeps the last 30
# samples for doctor's checks over time and runs doctor every 30 s, so its memory
# settles after about 30 collections
WARMUP=${BENCH_WARMUP:-35}
O=${O:-build}
OUT=$O/bench
VENV=$O/bench-serve-venv
FAKE=$O/fakenvml/current/libnvidia-ml.so.1
PINS="nvitop-exporter==1.7.2 nvitop==1.7.2 nvidia-ml-py==13.615.71 prometheus_client==0.26.0 psutil==7.2.2"

case $SECONDS_PER_RUN$WARMUP in
'' | *[!0-9]*)
	echo "usage: bench/serve.sh [SECONDS]" >&2
	exit 2
	;;
esac
if [ "$SECONDS_PER_RUN" -lt 1 ]; then
	echo "bench/serve.sh: SECONDS must be at least 1" >&2
	exit 2
fi
STEADY=0
if [ "$SECONDS_PER_RUN" -ge 120 ]; then
	STEADY=1
fi
for tool in wrk taskset curl python3; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "bench/serve.sh: $tool is missing (Debian: apt-get install wrk util-linux curl python3)" >&2
		exit 1
	fi
done
if [ ! -x "$O/gpuscope" ] || [ ! -f "$FAKE" ]; then
	echo "== building (make O=$O all)"
	make --no-print-directory O="$O" all >/dev/null
fi
if ! "$O/gpuscope" serve --help >/dev/null 2>&1; then
	echo "bench/serve.sh: $O/gpuscope has no serve command" >&2
	exit 1
fi
mkdir -p "$OUT"
# the server on CPU 0, wrk on CPU 1 (on one CPU both share it, and the report says so)
SRV_CPU=0
CLI_CPU=1
if [ "$(nproc)" -lt 2 ]; then
	CLI_CPU=0
fi

# --- nvitop-exporter --------------------------------------------------------------
if [ "$STEADY" -eq 0 ]; then
	if [ ! -x "$VENV/bin/nvitop-exporter" ] || [ "$(cat "$VENV/.bench-pins" 2>/dev/null)" != "$PINS" ]; then
		echo "== creating $VENV ($PINS)"
		rm -rf "$VENV"
		if ! python3 -m venv "$VENV"; then
			echo "bench/serve.sh: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2
			exit 1
		fi
		# shellcheck disable=SC2086
		if ! "$VENV/bin/pip" install --quiet --disable-pip-version-check $PINS; then
			echo "bench/serve.sh: could not install $PINS from PyPI" >&2
			rm -rf "$VENV"
			exit 1
		fi
		echo "$PINS" >"$VENV/.bench-pins"
	fi
fi

# --- the processes and the scenario -------------------------------------------------
PIDS=()
SRV=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	if [ -n "$SRV" ]; then
		kill "$SRV" 2>/dev/null || true
		wait "$SRV" 2>/dev/null || true
	fi
	stop_sleepers
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_sleepers "$PROCS" "$OUT/serve-pids"
SCN=$OUT/serve-h100x${GPUS}-${PROCS}.scn
python3 bench/make-scenario.py --gpus "$GPUS" --procs "$PROCS" --pids-file "$OUT/serve-pids" -o "$SCN"

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# status_kib PID FIELD: VmRSS or VmHWM of PID in KiB
status_kib() {
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"
}
# uptime_s PID: seconds since PID started
uptime_s() {
	local hz start now
	hz=$(getconf CLK_TCK)
	start=$(sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $20 }')
	now=$(awk '{ print int($1 * '"$hz"') }' /proc/uptime)
	echo $(((now - start) / hz))
}
# cpu_ticks PID: user + system clock ticks of PID (all its threads)
cpu_ticks() {
	sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# wait_up URL PID SECONDS: until URL answers 200 with a GPU in it
wait_up() {
	local i=0
	while [ $i -lt $(($3 * 10)) ]; do
		if ! kill -0 "$2" 2>/dev/null; then
			return 1
		fi
		# (not curl | grep -q: with pipefail, curl's SIGPIPE would fail the pipeline)
		if curl -fs -o "$OUT/serve-wait.metrics" "$1" 2>/dev/null &&
			grep -q -e '^gpuscope_gpu_up{' -e '^gpu_utilization_Percentage{' "$OUT/serve-wait.metrics"; then
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# bench_tool NAME URL: warm up, measure, append a result line to $OUT/serve-results
bench_tool() {
	local name=$1 url=$2 slug rss0 hwm0 rss1 hwm1 t0 t1 bytes
	slug=$(echo "$name" | tr -c 'A-Za-z0-9\n' '-')
	curl -s -o "$OUT/serve-$slug.metrics" "$url"
	bytes=$(wc -c <"$OUT/serve-$slug.metrics")
	# the server has run WARMUP seconds; then a short wrk run, so that the figures are
	# those of a server that has answered before
	while [ "$(uptime_s "$SRV")" -lt "$WARMUP" ]; do
		sleep 1
	done
	taskset -c $CLI_CPU wrk -t1 -c"$CONNS" -d2s "$url" >/dev/null
	rss0=$(status_kib "$SRV" VmRSS)
	hwm0=$(status_kib "$SRV" VmHWM)
	t0=$(cpu_ticks "$SRV")
	echo "== $name: wrk -t1 -c$CONNS -d${SECONDS_PER_RUN}s --latency $url"
	taskset -c $CLI_CPU wrk -t1 -c"$CONNS" -d"${SECONDS_PER_RUN}s" --latency "$url" >"$OUT/serve-$slug.wrk"
	t1=$(cpu_ticks "$SRV")
	rss1=$(status_kib "$SRV" VmRSS)
	hwm1=$(status_kib "$SRV" VmHWM)
	echo "$name|$OUT/serve-$slug.wrk|$rss0|$hwm0|$rss1|$hwm1|$((t1 - t0))|$bytes|$OUT/serve-$slug.metrics" >>"$OUT/serve-results"
}

CMD="bench/serve.sh $SECONDS_PER_RUN"
if [ "$GPUS" != 8 ] || [ "$PROCS" != 200 ] || [ "$CONNS" != 8 ] || [ "$WARMUP" != 35 ]; then
	CMD="BENCH_GPUS=$GPUS BENCH_PROCS=$PROCS BENCH_CONNECTIONS=$CONNS BENCH_WARMUP=$WARMUP $CMD"
fi
if [ "$O" != build ]; then
	CMD="O=$O $CMD"
fi
: >"$OUT/serve-results"
: >"$OUT/serve-steady"
ENVV=(env -u LD_LIBRARY_PATH -u LD_PRELOAD -u GPUSCOPE_PROC_ROOT -u FAKE_NVML_TIME -u FAKE_NVML_EPOCH
	-u FAKE_NVML_SPEED FAKE_NVML_SCENARIO="$PWD/$SCN")

# --- gpuscope serve -------------------------------------------------------------------
# start_gpuscope PROCESSES: gpuscope serve -d 1 --processes PROCESSES on CPU 0; sets SRV and addr
start_gpuscope() {
	: >"$OUT/serve-gpuscope.err"
	"${ENVV[@]}" GPUSCOPE_NVML="$PWD/$FAKE" taskset -c $SRV_CPU "$O/gpuscope" serve --listen 127.0.0.1:0 \
		-d 1 --processes "$1" >"$OUT/serve-gpuscope.out" 2>"$OUT/serve-gpuscope.err" &
	SRV=$!
	addr=""
	for _ in $(seq 100); do
		addr=$(sed -n 's|^gpuscope serve: listening on http://\([0-9.]*:[0-9][0-9]*\)/.*|\1|p' "$OUT/serve-gpuscope.err")
		[ -n "$addr" ] && break
		kill -0 "$SRV" 2>/dev/null || break
		sleep 0.1
	done
	if [ -z "$addr" ] || ! wait_up "http://$addr/metrics" "$SRV" 15; then
		echo "bench/serve.sh: gpuscope serve did not come up:" >&2
		tail -n 20 "$OUT/serve-gpuscope.err" >&2
		exit 1
	fi
	sleep 1.5 # a collection with the processes' CPU figures
	curl -s "http://$addr/metrics" >"$OUT/serve-gpuscope.check"
	local ngpu nseries nresolved
	ngpu=$(grep -c '^gpuscope_gpu_up{.*} 1$' "$OUT/serve-gpuscope.check" || true)
	nseries=$(grep -c '^gpuscope_process_gpu_memory_bytes{' "$OUT/serve-gpuscope.check" || true)
	nresolved=$(grep '^gpuscope_process_gpu_memory_bytes{' "$OUT/serve-gpuscope.check" | grep -c 'user="' || true)
	echo "== gpuscope serve --processes $1 on $addr (pid $SRV): $ngpu GPUs up, $nseries process series ($nresolved with a user)"
	if [ "$ngpu" -ne "$GPUS" ]; then
		echo "bench/serve.sh: gpuscope serve shows $ngpu GPUs up, not $GPUS" >&2
		exit 1
	fi
}
stop_server() {
	kill "$SRV"
	wait "$SRV" 2>/dev/null || true
	SRV=
}

start_gpuscope 50
if [ "$STEADY" -eq 0 ]; then
	bench_tool "gpuscope serve" "http://$addr/metrics"
	stop_server
	# the same content as nvitop-exporter, which exports every process
	start_gpuscope "$PROCS"
	bench_tool "gpuscope --processes $PROCS" "http://$addr/metrics"
else
	minutes=$((SECONDS_PER_RUN / 60))
	echo "== steady: $minutes one-minute wrk runs against gpuscope serve"
	curl -s -o "$OUT/serve-gpuscope-serve.metrics" "http://$addr/metrics"
	while [ "$(uptime_s "$SRV")" -lt "$WARMUP" ]; do
		sleep 1
	done
	echo "0|-|$(status_kib "$SRV" VmRSS)|$(status_kib "$SRV" VmHWM)|$(cpu_ticks "$SRV")" >>"$OUT/serve-steady"
	for m in $(seq "$minutes"); do
		taskset -c $CLI_CPU wrk -t1 -c"$CONNS" -d60s --latency "http://$addr/metrics" >"$OUT/serve-steady-$m.wrk"
		echo "$m|$OUT/serve-steady-$m.wrk|$(status_kib "$SRV" VmRSS)|$(status_kib "$SRV" VmHWM)|$(cpu_ticks "$SRV")" >>"$OUT/serve-steady"
		echo "   minute $m: $(awk '/^Requests\/sec/ { print $2 " req/s" }' "$OUT/serve-steady-$m.wrk"), VmRSS $(status_kib "$SRV" VmRSS) KiB"
	done
fi
stop_server

# --- nvitop-exporter ------------------------------------------------------------------
NVX_NOTE=""
if [ "$STEADY" -eq 0 ]; then
	port=$(free_port)
	rm -f "$OUT/serve-nvitop.nvml.log"
	"${ENVV[@]}" LD_LIBRARY_PATH="$PWD/$(dirname "$FAKE")" FAKE_NVML_LOG="$PWD/$OUT/serve-nvitop.nvml.log" \
		taskset -c $SRV_CPU "$VENV/bin/nvitop-exporter" --bind-address 127.0.0.1 --port "$port" --interval 1 \
		>"$OUT/serve-nvitop.out" 2>"$OUT/serve-nvitop.err" &
	SRV=$!
	if wait_up "http://127.0.0.1:$port/metrics" "$SRV" 30; then
		# the logging of every NVML call costs time: restart without it for the measurement
		kill "$SRV"
		wait "$SRV" 2>/dev/null || true
		"${ENVV[@]}" LD_LIBRARY_PATH="$PWD/$(dirname "$FAKE")" \
			taskset -c $SRV_CPU "$VENV/bin/nvitop-exporter" --bind-address 127.0.0.1 --port "$port" --interval 1 \
			>"$OUT/serve-nvitop.out" 2>"$OUT/serve-nvitop.err" &
		SRV=$!
		if ! wait_up "http://127.0.0.1:$port/metrics" "$SRV" 30; then
			echo "bench/serve.sh: nvitop-exporter did not come up again" >&2
			tail -n 20 "$OUT/serve-nvitop.err" >&2
			exit 1
		fi
		sleep 3 # a few whole collections, processes included
		curl -s "http://127.0.0.1:$port/metrics" >"$OUT/serve-nvitop.check"
		nvgpu=$(grep -c '^gpu_utilization_Percentage{' "$OUT/serve-nvitop.check" || true)
		nvproc=$(grep -c '^process_info_info{' "$OUT/serve-nvitop.check" || true)
		echo "== nvitop-exporter on 127.0.0.1:$port (pid $SRV): $nvgpu GPUs, $nvproc process series"
		bench_tool "nvitop-exporter" "http://127.0.0.1:$port/metrics"
		stop_server
	else
		# say exactly why: its stderr, and the NVML calls that failed
		NVX_NOTE="nvitop-exporter did not serve GPU metrics within 30 s on the fake library"
		echo "== $NVX_NOTE; its stderr:"
		tail -n 30 "$OUT/serve-nvitop.err" | sed 's/^/   /'
		if [ -s "$OUT/serve-nvitop.nvml.log" ]; then
			echo "   NVML calls that did not return NVML_SUCCESS (function gpu code, count):"
			awk '$3 != 0' "$OUT/serve-nvitop.nvml.log" | sort | uniq -c | sort -rn | head -n 20 | sed 's/^/   /'
		else
			echo "   it made no NVML call (is the fake library loaded? LD_LIBRARY_PATH=$(dirname "$FAKE"))"
		fi
		kill "$SRV" 2>/dev/null || true
		wait "$SRV" 2>/dev/null || true
		SRV=
	fi
fi

# --- the report ------------------------------------------------------------------------
python3 - "$OUT" "$CMD" "$STEADY" "$GPUS" "$PROCS" "$CONNS" "$SRV_CPU" "$CLI_CPU" "$NVX_NOTE" \
	"$(getconf CLK_TCK)" "$("$O/gpuscope" --version 2>&1 | head -n 1)" "$WARMUP" <<'EOF' | tee "$OUT/serve-report.txt"
import os
import platform
import re
import subprocess
import sys
import time

out, cmd, steady, gpus, procs, conns, srv_cpu, cli_cpu, nvx_note, hz, version, warmup = sys.argv[1:]
steady = steady == "1"
hz = float(hz)


def sh(c):
    try:
        return subprocess.run(c, shell=True, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


def to_ms(s):
    m = re.match(r"([\d.]+)(us|ms|s|m)$", s)
    if not m:
        return float("nan")
    v = float(m.group(1))
    return v * {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3}[m.group(2)]


def parse_wrk(path):
    text = open(path).read()
    r = {"rps": float("nan"), "p50": float("nan"), "p99": float("nan"), "requests": 0, "errors": ""}
    m = re.search(r"^Requests/sec:\s+([\d.]+)", text, re.M)
    if m:
        r["rps"] = float(m.group(1))
    for q in ("50", "99"):
        m = re.search(r"^\s+%s%%\s+(\S+)" % q, text, re.M)
        if m:
            r["p" + q] = to_ms(m.group(1))
    m = re.search(r"^\s+(\d+) requests in", text, re.M)
    if m:
        r["requests"] = int(m.group(1))
    errs = re.findall(r"^\s+(Socket errors:.*|Non-2xx or 3xx responses:.*)$", text, re.M)
    r["errors"] = "; ".join(errs)
    return r


cpu = ""
for line in open("/proc/cpuinfo"):
    if line.startswith("model name"):
        cpu = line.split(":", 1)[1].strip()
        break


def p(line=""):
    print(line)


p("gpuscope serve scrape benchmark (%s)" % time.strftime("%Y-%m-%d %H:%M:%S %z"))
p("machine: %s CPUs (nproc), %s, kernel %s, %s; load average at the end %s"
  % (sh("nproc"), cpu or "unknown CPU", platform.release(), sh(". /etc/os-release && echo \"$PRETTY_NAME\""),
     " ".join(open("/proc/loadavg").read().split()[:3])))
p("command: %s" % cmd)
p("scenario: %s H100 GPUs, %s processes on them (bench/make-scenario.py), fake NVML library;"
  % (gpus, procs))
p("          the processes are real sleeping processes, so both tools resolve them in /proc")
p("servers pinned to CPU %s (taskset), collecting every second, measured after %s s of uptime;"
  % (srv_cpu, warmup))
p("wrk -t1 -c%s --latency pinned to CPU %s%s"
  % (conns, cli_cpu, "  (ONE CPU: it shares it with the server)" if srv_cpu == cli_cpu else ""))
p("gpuscope: %s; nvitop-exporter: %s" % (version, "1.7.2 (pinned, with nvidia-ml-py 13.615.71)" if not steady else "not run"))

if not steady:
    rows = []
    for line in open(os.path.join(out, "serve-results")):
        name, wrk, rss0, hwm0, rss1, hwm1, ticks, nbytes, metrics = line.rstrip("\n").split("|")
        w = parse_wrk(wrk)
        series = sum(1 for l in open(metrics) if l.strip() and not l.startswith("#"))
        rows.append(dict(name=name, rss0=int(rss0), hwm0=int(hwm0), rss1=int(rss1), hwm1=int(hwm1),
                         cpu_us=(int(ticks) / hz) / w["requests"] * 1e6 if w["requests"] else float("nan"),
                         bytes=int(nbytes), series=series, **w))
    p("")
    p("%-26s %10s %9s %9s %12s %12s %10s %8s %11s" % ("tool", "requests/s", "p50 ms", "p99 ms",
                                                      "RSS KiB", "peak KiB", "bytes", "samples",
                                                      "CPU us/req"))
    for r in rows:
        p("%-26s %10.0f %9.3f %9.3f %5d->%-6d %12d %10d %8d %11.0f" % (
            r["name"], r["rps"], r["p50"], r["p99"], r["rss0"], r["rss1"], r["hwm1"], r["bytes"],
            r["series"], r["cpu_us"]))
        if r["errors"]:
            p("  %s: wrk: %s" % (r["name"], r["errors"]))
    p("(RSS: VmRSS before -> after the wrk run; peak: VmHWM after it; bytes and samples: one scrape of /metrics,")
    p(" text format; CPU: the server's user+system time during the run / requests answered)")
    g = next((r for r in rows if r["name"] == "gpuscope serve"), None)
    n = next((r for r in rows if r["name"] == "nvitop-exporter"), None)
    if g and n:
        p("")
        p("nvitop-exporter exports every process (it has no limit); gpuscope serve the top 50 by default.")
        for r in rows:
            if r is not n:
                p("%s / nvitop-exporter: %.0fx the requests/s, p99 %.0fx lower, peak RSS %.1fx smaller"
                  % (r["name"], r["rps"] / n["rps"], n["p99"] / r["p99"], n["hwm1"] / r["hwm1"]))
    if nvx_note:
        p("")
        p("nvitop-exporter: " + nvx_note)
    if g:
        p("")
        p("goals (gpuscope; a report, not a test):")
        p("  >= 2000 scrapes/s on one core: %s (%.0f)" % ("PASS" if g["rps"] >= 2000 else "FAIL", g["rps"]))
        p("  p99 < 5 ms:                    %s (%.3f ms)" % ("PASS" if g["p99"] < 5 else "FAIL", g["p99"]))
        p("  RSS < 16 MiB:                  %s (peak %d KiB)" % ("PASS" if g["hwm1"] < 16384 else "FAIL", g["hwm1"]))
else:
    p("")
    p("steady mode: gpuscope serve alone, one-minute wrk runs")
    p("%6s %10s %9s %9s %9s %9s %11s" % ("minute", "requests/s", "p50 ms", "p99 ms", "RSS KiB", "peak KiB",
                                         "CPU us/req"))
    prev = None
    first = last = None
    for line in open(os.path.join(out, "serve-steady")):
        m, wrk, rss, hwm, ticks = line.rstrip("\n").split("|")
        if wrk == "-":
            p("%6s %10s %9s %9s %9s %9s %11s" % (m, "-", "-", "-", rss, hwm, "-"))
            prev = int(ticks)
            continue
        w = parse_wrk(wrk)
        cpu_us = (int(ticks) - prev) / hz / w["requests"] * 1e6 if w["requests"] else float("nan")
        prev = int(ticks)
        p("%6s %10.0f %9.3f %9.3f %9s %9s %11.0f" % (m, w["rps"], w["p50"], w["p99"], rss, hwm, cpu_us))
        if first is None:
            first = int(rss)
        last = int(rss)
        if w["errors"]:
            p("  wrk: " + w["errors"])
    if first is not None:
        p("VmRSS after the first minute %d KiB, after the last %d KiB: %+d KiB" % (first, last, last - first))
EOF
