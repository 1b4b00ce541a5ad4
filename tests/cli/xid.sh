#!/bin/sh
# NVIDIA Xid errors through NVML's events, end to end on the fake NVML: the
# scenario's Xids are counted per GPU and code in watch --format ndjson and
# status --json ("xid_errors"), only those after gpuscope started, through
# the plain nvmlEventSetWait of an old library too; a GPU without events and
# a GeForce are not watched (null); a replayed recording shows what it
# recorded; a 17th code goes to the 16th entry; a lost GPU keeps its count;
# and a wait stuck in the driver does not hold up the end of the program.
# Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
bin=$O/gpuscope
if [ ! -x "$bin" ] || ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP needs $bin and python3"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
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
base="GPUSCOPE_PROC_ROOT=tests/fixtures/proc GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty
GPUSCOPE_PASSWD=tests/fixtures/passwd TZ=UTC"
# scenario time runs from the first nvmlInit, ten times as fast: the Xids of
# xid.scn (t = 1, 2, 3 s) arrive 0.1 to 0.3 s after gpuscope starts
# shellcheck disable=SC2086
fast() { env -u FAKE_NVML_TIME -u FAKE_NVML_EPOCH $base GPUSCOPE_NVML=$O/fakenvml/current/libnvidia-ml.so.1 FAKE_NVML_SPEED=10 "$@"; }
# shellcheck disable=SC2086
fixed() {
	env $base GPUSCOPE_NVML=$O/fakenvml/current/libnvidia-ml.so.1 FAKE_NVML_TIME=0 \
		FAKE_NVML_EPOCH=1767225600 GPUSCOPE_CLOCK=1767225600 "$@"
}
# the xid_errors of every GPU in the last sample of watch --format ndjson (or in status --json)
last_xids='import json, sys
lines = open(sys.argv[1]).read().splitlines()
if lines and lines[0].startswith("{\"schema\":\"gpuscope.watch"):
    docs = [json.loads(l) for l in lines]
    gpus = {d["index"]: d for d in docs}
else:
    gpus = {g["index"]: g for g in json.loads(open(sys.argv[1]).read())["gpus"]}
want = json.loads(sys.argv[2])
got = [gpus[i]["xid_errors"] for i in sorted(gpus)]
if got != want:
    sys.exit("got %r, want %r" % (got, want))'
expect_xids() { # expect_xids "what" file json-of-the-list-per-GPU
	if python3 -c "$last_xids" "$2" "$3" 2>"$tmp/why"; then ok "$1"; else not_ok "$1" "$tmp/why" "$tmp/err"; fi
}

# 1. watch: the counts of xid.scn, per GPU and code, in the order first seen
fast FAKE_NVML_SCENARIO=tests/scenarios/xid.scn "$bin" watch -c 8 -d 0.2 --format ndjson >"$tmp/out" 2>"$tmp/err"
check "watch --format ndjson on xid.scn: exit 0, 8 samples of 2 GPUs" \
	sh -c "[ $? = 0 ] && [ \$(wc -l <'$tmp/out') = 16 ]"
expect_xids "GPU 1 saw Xid 79 once and Xid 13 twice; GPU 0, watched, saw none" "$tmp/out" \
	'[[], [{"xid": 79, "count": 1}, {"xid": 13, "count": 2}]]'
check "the counts only grow, sample after sample, and never pass the scenario's" \
	python3 - "$tmp/out" <<'EOF'
import json, sys
prev = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    got = {e["xid"]: e["count"] for e in d["xid_errors"]}
    assert all(got.get(k, 0) >= v for k, v in prev.get(d["index"], {}).items()), (prev, got)
    assert got.get(79, 0) <= 1 and got.get(13, 0) <= 2 and set(got) <= {79, 13}, got
    prev[d["index"]] = got
EOF

# 2. status --json: watched GPUs show [] under a fixed clock; others null
fixed FAKE_NVML_SCENARIO=tests/scenarios/xid.scn "$bin" status --json >"$tmp/out" 2>"$tmp/err"
expect_xids "status --json, fixed clock: both GPUs watched, none seen" "$tmp/out" '[[], []]'
fixed FAKE_NVML_SCENARIO=tests/scenarios/h100x2.scn "$bin" status --json >"$tmp/out" 2>"$tmp/err"
expect_xids "GPUs without NVML events: xid_errors null" "$tmp/out" '[null, null]'
fixed FAKE_NVML_SCENARIO=tests/scenarios/geforce.scn "$bin" status --json >"$tmp/out" 2>"$tmp/err"
expect_xids "a GeForce: null" "$tmp/out" '[null]'
cat >"$tmp/geforce.scn" <<'EOF'
[gpu]
name = NVIDIA GeForce RTX 4090
brand = 5
xid = 0.5:13
[gpu]
name = events off
xid = 0.5:13
event_types = N/A
EOF
fast FAKE_NVML_SCENARIO="$tmp/geforce.scn" "$bin" watch -c 4 -d 0.2 --format ndjson >"$tmp/out" 2>"$tmp/err"
expect_xids "Xids on a GeForce and on a GPU with event_types = N/A: not watched, null" "$tmp/out" \
	'[null, null]'

# 3. only what happens after gpuscope started counts
now=$(date +%s)
fast FAKE_NVML_EPOCH=$((now - 100)) FAKE_NVML_SCENARIO=tests/scenarios/xid.scn "$bin" watch -c 4 -d 0.2 --format ndjson >"$tmp/out" 2>"$tmp/err"
expect_xids "Xids from before gpuscope started are not counted" "$tmp/out" '[[], []]'

# 4. an old library: no nvmlEventSetWait_v2, the plain wait instead
env -u FAKE_NVML_TIME -u FAKE_NVML_EPOCH $base GPUSCOPE_NVML=$O/fakenvml/legacy/libnvidia-ml.so.1 FAKE_NVML_SPEED=10 \
	FAKE_NVML_SCENARIO=tests/scenarios/xid.scn "$bin" watch -c 8 -d 0.2 --format ndjson >"$tmp/out" 2>"$tmp/err"
expect_xids "a library without nvmlEventSetWait_v2: the same counts through nvmlEventSetWait" "$tmp/out" \
	'[[], [{"xid": 79, "count": 1}, {"xid": 13, "count": 2}]]'

# 5. at most 16 codes: a 17th is added to the 16th entry
codes=""
for c in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 1; do codes="$codes 5:$c"; done
printf '[gpu]\nname = busy\nxid =%s\n' "$codes" >"$tmp/many.scn"
fast FAKE_NVML_SCENARIO="$tmp/many.scn" "$bin" watch -c 6 -d 0.2 --format ndjson >"$tmp/out" 2>"$tmp/err"
expect_xids "17 codes: 16 entries, the 17th counted in the 16th, a repeat where it was first seen" "$tmp/out" \
	"[[{\"xid\": 1, \"count\": 2}$(for c in 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do printf ', {"xid": %s, "count": 1}' $c; done), {\"xid\": 16, \"count\": 2}]]"

# 6. a GPU that falls off the bus keeps the Xid that said so
printf '[gpu]\nname = falling\ntemperature = 40\nxid = 5:79\nlost = 6\n' >"$tmp/lost.scn"
fast FAKE_NVML_SCENARIO="$tmp/lost.scn" "$bin" watch -c 8 -d 0.2 --format ndjson >"$tmp/out" 2>"$tmp/err"
check "the GPU is lost by the last sample" python3 -c '
import json, sys
d = json.loads(open(sys.argv[1]).read().splitlines()[-1])
assert d["state"] == "lost", d["state"]' "$tmp/out"
expect_xids "a lost GPU still shows its Xid 79" "$tmp/out" '[[{"xid": 79, "count": 1}]]'

# 7. a replayed recording shows what was recorded: both GPUs watched, none seen yet
# (tests/cli/record.sh replays the counts themselves)
fixed FAKE_NVML_SCENARIO=tests/scenarios/xid.scn "$bin" record -q -c 2 -d 0.05 -o "$tmp/x.rec" >"$tmp/out" 2>"$tmp/err"
"$bin" replay "$tmp/x.rec" status --json >"$tmp/out" 2>"$tmp/err"
expect_xids "replay FILE status --json: xid_errors as recorded, [] (watched, none seen)" "$tmp/out" '[[], []]'

# 8. an event wait stuck in the driver does not hold up the end
printf '[system]\ndelay = nvmlEventSetWait* 4000\n' >"$tmp/stuck.scn"
sed -n '/^\[gpu\]/,$p' tests/scenarios/xid.scn >>"$tmp/stuck.scn"
t0=$(python3 -c 'import time; print(time.time())')
fixed FAKE_NVML_SCENARIO="$tmp/stuck.scn" "$bin" status --json >"$tmp/out" 2>"$tmp/err"
rc=$?
t1=$(python3 -c 'import time; print(time.time())')
check "status ends within 3 s while the event thread waits 4 s in the driver (exit $rc)" \
	python3 -c 'import sys; sys.exit(not (sys.argv[1] == "0" and float(sys.argv[3]) - float(sys.argv[2]) < 3))' "$rc" "$t0" "$t1"
expect_xids "and its GPUs are watched" "$tmp/out" '[[], []]'

echo "1..$n"
[ "$fail" -eq 0 ]
