#!/bin/sh
# Nothing hangs past --timeout: a driver whose nvmlShutdown never returns
# (the fake's delay fault) holds no command past its bound, and the output
# is written before the driver is shut down; processes a hung GPU could not
# list are unknown, not none. Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
bin=$O/gpuscope
if [ ! -x "$bin" ] || ! command -v python3 >/dev/null 2>&1 || ! command -v curl >/dev/null 2>&1; then
	echo "1..0 # SKIP needs $bin, python3 and curl"
	exit 0
fi
tmp=$(mktemp -d)
pid=""
cleanup() {
	[ -z "$pid" ] || kill "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/# /' "$f" | head -n 20; done
}
check() { # check "what" command...; on failure shows $tmp/out and $tmp/err
	what=$1; shift
	if "$@"; then ok "$what"; else not_ok "$what" "$tmp/out" "$tmp/err"; fi
}
# the two H100s, whose driver takes 60 s to shut down
awk '{ print } /^\[system\]/ { print "delay = nvmlShutdown 60000" }' tests/scenarios/h100x2.scn >"$tmp/shut.scn"
env="GPUSCOPE_NVML=$O/fakenvml/current/libnvidia-ml.so.1 FAKE_NVML_SCENARIO=$tmp/shut.scn
GPUSCOPE_PROC_ROOT=tests/fixtures/proc GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty
GPUSCOPE_PASSWD=tests/fixtures/passwd TZ=UTC"
# shellcheck disable=SC2086
fx() { env $env "$@"; }
now() { python3 -c 'import time; print(time.monotonic())'; }
took() { python3 -c 'import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))' "$1" "$(now)"; }

# timeout 15 ends the command if it waits for nvmlShutdown (60 s)
t0=$(now)
fx timeout 15 "$bin" status --json --timeout 1 >"$tmp/out" 2>"$tmp/err"
rc=$? s=$(took "$t0")
check "status --json: the whole document is out, exit 0, within the bound (took $s s)" \
	sh -c "[ $rc = 0 ] && python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); sys.exit(len(d[\"gpus\"]) != 2)' '$tmp/out'"
fx timeout 15 "$bin" status --timeout 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
check "status: the table is out, exit 0" sh -c "[ $rc = 0 ] && grep -q 'H100' '$tmp/out'"
fx timeout 25 "$bin" query --query-gpu=index,name --format=csv,noheader >"$tmp/out" 2>"$tmp/err"
rc=$?
check "query: its lines are out, exit 0 (the default 5 s bound)" sh -c "[ $rc = 0 ] && [ \$(wc -l <'$tmp/out') = 2 ]"
for cmd in watch record; do
	if [ $cmd = watch ]; then
		# shellcheck disable=SC2086 # (not fx: $! must be gpuscope's pid, not a subshell's)
		env $env "$bin" watch -d 0.1 --timeout 1 --format csv >"$tmp/out" 2>"$tmp/err" &
	else
		# shellcheck disable=SC2086
		env $env "$bin" record -q -d 0.1 --timeout 1 -o "$tmp/a.rec" >"$tmp/out" 2>"$tmp/err" &
	fi
	pid=$!
	sleep 1
	t0=$(now)
	kill -TERM "$pid"
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 150 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	s=$(took "$t0")
	if kill -0 "$pid" 2>/dev/null; then
		not_ok "$cmd ends on SIGTERM within 15 s: still running" "$tmp/err"
		kill -KILL "$pid"
	else
		ok "$cmd ends on SIGTERM within 15 s (took $s s)"
	fi
	wait "$pid" 2>/dev/null
	pid=""
done
fx "$bin" replay "$tmp/a.rec" info >"$tmp/out" 2>"$tmp/err"
check "the recording holds its samples" grep -q '^samples' "$tmp/out"
t0=$(now)
fx timeout 40 "$bin" doctor --json >"$tmp/out" 2>"$tmp/err"
rc=$? s=$(took "$t0")
check "doctor ends within its bound and writes its findings (took $s s)" \
	sh -c "[ $rc != 124 ] && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' '$tmp/out'"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# shellcheck disable=SC2086
env $env "$bin" serve --listen "127.0.0.1:$port" --timeout 1 >"$tmp/serve.log" 2>&1 &
pid=$!
i=0
# until the first sample is in: before it, serve answers 503 "no sample yet"
while ! { curl -s -m 2 -o "$tmp/out" "http://127.0.0.1:$port/metrics" &&
	grep -q '^gpuscope_gpu_info' "$tmp/out"; } && [ $i -lt 150 ]; do
	sleep 0.1
	i=$((i + 1))
done
cp "$tmp/serve.log" "$tmp/err"
check "serve starts listening and answers /metrics within 15 s" grep -q '^gpuscope_gpu_info' "$tmp/out"
kill "$pid"
wait "$pid" 2>/dev/null
pid=""

# a process query that never returns: unknown is not none
awk '{ print } /^\[system\]/ { print "delay = nvmlDeviceGetComputeRunningProcesses* 30000" }' \
	tests/scenarios/h100x2.scn >"$tmp/procs.scn"
fx FAKE_NVML_SCENARIO="$tmp/procs.scn" timeout 20 "$bin" status --json --timeout 1 >"$tmp/out" 2>"$tmp/err"
check "status --json, every GPU's process query hung: processes null, a note names the GPUs" \
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not (d["processes"] is None and any("GPU 0 and GPU 1 are unknown" in n for n in d["notes"])))' "$tmp/out"
fx FAKE_NVML_SCENARIO="$tmp/procs.scn" timeout 20 "$bin" status --timeout 1 >"$tmp/out" 2>"$tmp/err"
check "status: says the processes are unknown, not that none use the GPUs" \
	sh -c "grep -q 'processes of GPU 0 and GPU 1 are unknown' '$tmp/out' && ! grep -q 'no processes are using' '$tmp/out'"
# only GPU 1's query hangs (its [gpu] section is the second)
awk '{ print } /^\[gpu\]/ && ++g == 2 { print "delay = nvmlDeviceGetComputeRunningProcesses* 30000" }' \
	tests/scenarios/h100x2.scn >"$tmp/procs1.scn"
fx FAKE_NVML_SCENARIO="$tmp/procs1.scn" timeout 20 "$bin" status --json --timeout 1 >"$tmp/out" 2>"$tmp/err"
check "status --json, GPU 1's query hung: GPU 0's processes listed, a note names GPU 1" \
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
p = d["processes"]
sys.exit(not (p and all(x["gpu_index"] == 0 for x in p) and
              any("processes of GPU 1 are unknown" in n for n in d["notes"])))' "$tmp/out"

echo "1..$n"
[ $fail = 0 ]
