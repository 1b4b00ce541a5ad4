#!/bin/sh
# gpuscope watch on the fake NVML: the CSV is nvidia-smi's query CSV line for
# line, each ndjson line is a JSON document of its own whose members are
# those of status --json, lines are flushed as they are written (a pipe
# sees the first sample before the second is due), Ctrl-C ends cleanly, a
# GPU lost mid-run is marked and the others go on, --findings adds doctor's
# health and workload findings as records of their own when they change,
# and bad options are usage errors. Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
bin=$O/gpuscope
if [ ! -x "$bin" ] || ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP needs $bin and python3"
	exit 0
fi
tmp=$(mktemp -d)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/# /' "$f" | head -n 20; done
}
check() { # check "what" command... ; files shown on failure: $tmp/out $tmp/err
	what=$1; shift
	if "$@"; then ok "$what"; else not_ok "$what" "$tmp/out" "$tmp/err"; fi
}
fixed() {
	GPUSCOPE_NVML=$O/fakenvml/current/libnvidia-ml.so.1 FAKE_NVML_TIME=0 FAKE_NVML_EPOCH=1767225600 \
		GPUSCOPE_CLOCK=1767225600 GPUSCOPE_PROC_ROOT=tests/fixtures/proc TZ=UTC \
		GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty GPUSCOPE_PASSWD=tests/fixtures/passwd \
		FAKE_NVML_SCENARIO=tests/scenarios/h100x2.scn "$@"
}
# scenario time runs with the clock from the first nvmlInit; "env $live cmd &"
# makes $! the command itself
live="GPUSCOPE_NVML=$O/fakenvml/current/libnvidia-ml.so.1 GPUSCOPE_PROC_ROOT=tests/fixtures/proc
GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty GPUSCOPE_PASSWD=tests/fixtures/passwd"

fields=timestamp,index,name,utilization.gpu,memory.used,power.draw,temperature.gpu,clocks.sm,pstate,pcie.link.gen.gpucurrent

# 1. csv: the query CSV, header once, then every sample
fixed "$bin" watch -c 3 -d 0.05 --format csv --fields $fields >"$tmp/out" 2>"$tmp/err"
rc=$?
fixed "$bin" query --query-gpu=$fields --format=csv >"$tmp/q" 2>>"$tmp/err"
{ cat "$tmp/q"; tail -n +2 "$tmp/q"; tail -n +2 "$tmp/q"; } >"$tmp/want"
check "watch --format csv is query's CSV: header once, 3 samples of 2 GPUs" \
	sh -c "[ $rc = 0 ] && cmp -s '$tmp/out' '$tmp/want'"
fixed "$bin" watch -c 2 -d 0.05 --format csv,noheader,nounits --fields $fields >"$tmp/out" 2>"$tmp/err"
fixed "$bin" query --query-gpu=$fields --format=csv,noheader,nounits >"$tmp/q" 2>>"$tmp/err"
check "csv,noheader,nounits as query spells it" sh -c "cat '$tmp/q' '$tmp/q' | cmp -s - '$tmp/out'"

# 2. ndjson: each line a document; its device members are status --json's
fixed "$bin" watch -c 2 -d 0.05 --format ndjson >"$tmp/out" 2>"$tmp/err"
fixed "$bin" status --json --no-processes >"$tmp/status.json" 2>>"$tmp/err"
check "ndjson: one valid document per GPU per sample, members equal to status --json" \
	python3 - "$tmp/out" "$tmp/status.json" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
status = json.load(open(sys.argv[2]))
assert len(lines) == 4, len(lines)
for i, line in enumerate(lines):
    d = json.loads(line)
    assert d["schema"] == "gpuscope.watch/1"
    assert d["time"] == status["time"], (d["time"], status["time"])
    assert d["hostname"] == status["hostname"]
    want = status["gpus"][i % 2]
    for k, v in want.items():
        assert d.get(k) == v, (k, d.get(k), v)
EOF
fixed "$bin" watch -c 1 --format ndjson --fields index,memory.used,power.draw,name,pstate,ecc.errors.corrected.volatile.total >"$tmp/out" 2>"$tmp/err"
check "ndjson --fields: typed values (numbers, strings, null for unknown)" \
	python3 - "$tmp/out" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 2
d = json.loads(lines[0])
assert d["index"] == 0 and d["memory.used"] == 71234, d
assert isinstance(d["power.draw"], float) and d["name"] == "NVIDIA H100 80GB HBM3", d
assert d["pstate"] == "P0" and d["state"] == "ok", d
assert "ecc.errors.corrected.volatile.total" in d
EOF

# 3. table: two header lines, one line per GPU
fixed "$bin" watch -c 2 -d 0.05 >"$tmp/out" 2>"$tmp/err"
check "table: header (labels, units), then one aligned line per GPU and sample" \
	python3 - "$tmp/out" <<'EOF'
import sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 6, lines
assert lines[0].split()[:4] == ["#", "time", "gpu", "gpu"], lines[0]
assert lines[1].split()[:3] == ["#", "HH:MM:SS", "idx"], lines[1]
rows = [l.split() for l in lines[2:]]
assert [r[1] for r in rows] == ["0", "1", "0", "1"], rows
assert rows[0][0] == "00:00:00" and rows[0][2] == "100", rows[0]
assert all(len(l) <= 80 for l in lines), [len(l) for l in lines]
EOF

# 4. flushed per line: the first sample reaches a pipe long before the second is due
# (started with SIGINT at its default: a background job of sh would ignore it)
sigdfl='import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])'
mkfifo "$tmp/fifo"
env $live FAKE_NVML_SCENARIO=tests/scenarios/h100x2.scn python3 -c "$sigdfl" "$bin" watch -d 60 --format csv >"$tmp/fifo" 2>"$tmp/err4" &
wpid=$!
pids="$pids $wpid"
exec 3<"$tmp/fifo"
timeout 10 head -n 3 <&3 >"$tmp/out"
check "each line is flushed at once (3 lines through a pipe within 10 s, interval 60 s)" \
	sh -c "[ \$(wc -l <'$tmp/out') = 3 ]"

# 5. SIGINT, SIGTERM and SIGHUP end it in order: exit 0, whole lines
kill -s INT "$wpid" 2>/dev/null
t0=$(date +%s)
wait "$wpid" 2>/dev/null
rc=$?
exec 3<&-
check "SIGINT while waiting 60 s for the next sample ends watch at once with exit 0" \
	sh -c "[ $rc = 0 ] && [ \$((\$(date +%s) - $t0)) -lt 10 ]"
for sig in TERM HUP; do
	env $live FAKE_NVML_SCENARIO=tests/scenarios/h100x2.scn "$bin" watch -d 0.1 --format csv >"$tmp/out5" 2>"$tmp/err" &
	wpid=$!
	sleep 0.6
	kill -s "$sig" "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
	rc=$?
	check "SIG$sig while sampling every 0.1 s ends watch with exit 0 and whole lines" \
		sh -c "[ $rc = 0 ] && [ \$(wc -l <'$tmp/out5') -ge 5 ] && [ \"\$(tail -c 1 '$tmp/out5' | od -An -c | tr -d ' ')\" = '\\n' ]"
done

# 6. a GPU lost mid-run: marked, the other one keeps its readings, exit 1
cat >"$tmp/lost.scn" <<'EOF'
[gpu]
name = steady
temperature = 40
power_usage = 100000
[gpu]
name = doomed
temperature = ramp 50 60 0 1
power_usage = 200000
lost = 0.6
EOF
env $live FAKE_NVML_SCENARIO="$tmp/lost.scn" "$bin" watch -d 0.25 -c 6 --format csv,noheader --fields index,name,temperature.gpu >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a GPU lost mid-run: '[GPU is lost]' after the loss, the other one still read, exit 1" \
	python3 - "$tmp/out" "$rc" <<'EOF'
import sys
lines = open(sys.argv[1]).read().splitlines()
assert sys.argv[2] == "1", sys.argv[2]
assert len(lines) == 12, lines
one = [l for l in lines if l.startswith("1, ")]
zero = [l for l in lines if l.startswith("0, ")]
assert all(l == "0, steady, 40" for l in zero), zero
assert "lost" not in one[0] and "[GPU is lost]" in one[-1], one
EOF
env $live FAKE_NVML_SCENARIO="$tmp/lost.scn" "$bin" watch -d 0.25 -c 5 >"$tmp/out" 2>"$tmp/err"
check "table marks the lost GPU [lost]" grep -q '^ *[0-9:]* *1 .*\[lost\]$' "$tmp/out"

# 7. --findings: doctor's findings, a record of their own when they change
fixed "$bin" watch --format ndjson --findings -c 3 >"$tmp/out" 2>"$tmp/err"
check "--findings: exit 0" test $? -eq 0
check "--findings: one findings record (the clock stands still: worked out once)" \
	test "$(grep -c '"schema":"gpuscope.findings/1"' "$tmp/out")" = 1
check "--findings: every line a document; the findings record follows the first sample's GPU lines" python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
kinds = [l["schema"] for l in lines]
assert kinds[:3] == ["gpuscope.watch/1", "gpuscope.watch/1", "gpuscope.findings/1"], kinds
assert kinds.count("gpuscope.watch/1") == 6, kinds
' "$tmp/out"
check "--findings: worst first, the GPU of each, the doctor's members" python3 -c '
import json, sys
rec = [json.loads(l) for l in open(sys.argv[1]) if "gpuscope.findings/1" in l][0]
assert set(rec) == {"schema", "time", "samples", "worst", "findings"}, rec.keys()
assert rec["worst"] == "error" and rec["samples"] == 1, rec
f = rec["findings"]
assert f[0]["id"] == "health.ecc.uncorrectable" and f[0]["gpu"] == 1, f[0]
order = {"error": 2, "warning": 1, "info": 0}
assert [order[x["severity"]] for x in f] == sorted((order[x["severity"]] for x in f), reverse=True)
for x in f:
    assert set(x) == {"id", "severity", "gpu", "title", "evidence", "meaning", "action"}, x
    assert x["severity"] != "ok" and not x["id"].startswith("setup.") and not x["id"].startswith("log.")
' "$tmp/out"
GPUSCOPE_NVML=$O/fakenvml/current/libnvidia-ml.so.1 FAKE_NVML_SCENARIO=tests/scenarios/workload-starved.scn \
	FAKE_NVML_EPOCH=$(date +%s) FAKE_NVML_SPEED=10 GPUSCOPE_PROC_ROOT=tests/fixtures/doctor/proc-workload \
	GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty GPUSCOPE_PASSWD=tests/fixtures/passwd \
	"$bin" watch --format ndjson --findings -d 0.1 -c 40 >"$tmp/out" 2>"$tmp/err"
check "--findings over a starved GPU: a later record names workload.starved; each record a change" python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if "gpuscope.findings/1" in l]
assert len(recs) >= 2, len(recs)
assert not any(x["id"] == "workload.starved" for x in recs[0]["findings"])
assert any(x["id"] == "workload.starved" and x["gpu"] == 0 for x in recs[-1]["findings"]), recs[-1]
key = lambda r: [(x["id"], x["severity"], x["title"]) for x in r["findings"]]
assert all(key(a) != key(b) for a, b in zip(recs, recs[1:])), "a record that changes nothing"
' "$tmp/out"
for args in "--findings" "--format csv --findings"; do
	# shellcheck disable=SC2086
	fixed "$bin" watch $args -c 1 >"$tmp/out" 2>"$tmp/err"
	rc=$?
	check "watch $args: usage error, it needs ndjson (exit 2)" \
		sh -c "[ $rc = 2 ] && [ ! -s '$tmp/out' ] && grep -q 'needs --format ndjson' '$tmp/err'"
done

# 8. usage errors
for args in "--format xml" "--fields memory.usde" "--fields ," "-c 0" "-c -3" "-d 0" "-d fast" "stray" "--bogus" "-d"; do
	# shellcheck disable=SC2086
	fixed "$bin" watch $args >"$tmp/out" 2>"$tmp/err"
	rc=$?
	check "watch $args: usage error (exit 2, one line)" \
		sh -c "[ $rc = 2 ] && [ ! -s '$tmp/out' ] && grep -q '^gpuscope: ' '$tmp/err'"
done
fixed "$bin" watch --fields memory.usde >/dev/null 2>"$tmp/err"
check "an unknown field suggests the close one" grep -q "memory.used" "$tmp/err"
fixed "$bin" watch -i 7 -c 1 >/dev/null 2>"$tmp/err"
rc=$?
check "-i naming no GPU: exit 2 naming it" sh -c "[ $rc = 2 ] && grep -q \"'7'\" '$tmp/err'"

echo "1..$n"
[ "$fail" -eq 0 ]
