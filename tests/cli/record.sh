#!/bin/sh
# gpuscope record and replay on the fake NVML: what is replayed is what was
# seen live (status --json and watch --format ndjson, exactly), a recording
# cut at every byte offset of its last record still replays the samples
# before it, recordings append and refuse files that are not recordings,
# SIGTERM ends a recording in order, --at and --from find the right sample,
# the minutes before a GPU fell off the bus are there to see, with its Xid
# counts, and a recording of format version 1 still replays. Prints TAP.
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
fixed="GPUSCOPE_NVML=$O/fakenvml/current/libnvidia-ml.so.1 FAKE_NVML_TIME=0 FAKE_NVML_EPOCH=1767225600
GPUSCOPE_CLOCK=1767225600 GPUSCOPE_PROC_ROOT=tests/fixtures/proc TZ=UTC
GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty GPUSCOPE_PASSWD=tests/fixtures/passwd
FAKE_NVML_SCENARIO=tests/scenarios/h100x2.scn"
live="GPUSCOPE_NVML=$O/fakenvml/current/libnvidia-ml.so.1 GPUSCOPE_PROC_ROOT=tests/fixtures/proc TZ=UTC
GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty GPUSCOPE_PASSWD=tests/fixtures/passwd"
# shellcheck disable=SC2086
fx() { env $fixed "$@"; }

# 1. what is replayed is what was seen live
fx "$bin" record -q -c 3 -d 0.05 -o "$tmp/a.rec" >"$tmp/out" 2>"$tmp/err"
check "record -c 3 writes a recording (exit 0, nothing on stdout)" \
	sh -c "[ $? = 0 ] && [ -s '$tmp/a.rec' ] && [ ! -s '$tmp/out' ]"
fx "$bin" status --json >"$tmp/live.json" 2>"$tmp/err"
fx "$bin" replay "$tmp/a.rec" status --json >"$tmp/out" 2>>"$tmp/err"
check "replay FILE status --json: the first sample is status --json, byte for byte" \
	cmp -s "$tmp/live.json" "$tmp/out"
fx "$bin" status >"$tmp/live.txt" 2>"$tmp/err"
fx "$bin" replay "$tmp/a.rec" status >"$tmp/out" 2>>"$tmp/err"
check "replay FILE status: the table, byte for byte" cmp -s "$tmp/live.txt" "$tmp/out"
fx "$bin" watch -c 3 -d 0.05 --format ndjson >"$tmp/live.nd" 2>"$tmp/err"
fx "$bin" replay "$tmp/a.rec" watch --format ndjson >"$tmp/out" 2>>"$tmp/err"
check "replay FILE watch --format ndjson: every sample as watched live" cmp -s "$tmp/live.nd" "$tmp/out"
fx "$bin" replay "$tmp/a.rec" record -q -o "$tmp/b.rec" 2>"$tmp/err"
fx "$bin" replay "$tmp/b.rec" watch --format ndjson >"$tmp/out" 2>>"$tmp/err"
check "a recording replayed into a new recording replays the same" cmp -s "$tmp/live.nd" "$tmp/out"

# 2. appending, and refusing what is not a recording
fx "$bin" record -q -c 2 -d 0.05 -o "$tmp/a.rec" 2>"$tmp/err"
fx "$bin" replay "$tmp/a.rec" watch --format csv,noheader --fields index >"$tmp/out" 2>>"$tmp/err"
check "recording into an existing recording appends (5 samples of 2 GPUs)" \
	sh -c "[ \$(wc -l <'$tmp/out') = 10 ]"
printf 'precious\n' >"$tmp/notes.txt"
fx "$bin" record -q -c 1 -o "$tmp/notes.txt" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a file that is not a recording is refused (exit 2), and left as it was" \
	sh -c "[ $rc = 2 ] && grep -q 'notes.txt' '$tmp/err' && [ \"\$(cat '$tmp/notes.txt')\" = precious ]"
fx "$bin" record -q -c 1 -o "$tmp/no/such/dir.rec" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a file that cannot be created: one line naming it, exit 3" \
	sh -c "[ $rc = 3 ] && [ \$(wc -l <'$tmp/err') = 1 ] && grep -q 'dir.rec' '$tmp/err'"
fx "$bin" replay "$tmp/none.rec" status >"$tmp/out" 2>"$tmp/err"
rc=$?
check "replay of a missing file: one line naming it, exit 3" \
	sh -c "[ $rc = 3 ] && [ \$(wc -l <'$tmp/err') = 1 ] && grep -q 'none.rec' '$tmp/err'"
fx "$bin" replay "$tmp/notes.txt" status >"$tmp/out" 2>"$tmp/err"
rc=$?
check "replay of a file that is not a recording: one line, exit 3" \
	sh -c "[ $rc = 3 ] && [ \$(wc -l <'$tmp/err') = 1 ]"

GPUSCOPE_NVML=/nonexistent GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty "$bin" record -q -c 1 -o "$tmp/none.rec" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "no GPU: exit 4 with the reason, and no empty recording left behind" \
	sh -c "[ $rc = 4 ] && grep -q 'no GPU found' '$tmp/err' && [ ! -e '$tmp/none.rec' ]"

# 3. cut at every byte offset of its last record: the samples before it replay
fx "$bin" record -q -c 3 -d 0.05 -o "$tmp/c.rec" 2>"$tmp/err"
s3=$(wc -c <"$tmp/c.rec")
fx "$bin" record -q -c 1 -d 0.05 -o "$tmp/c.rec" 2>>"$tmp/err"
s4=$(wc -c <"$tmp/c.rec")
bad=""
off=$s3
while [ "$off" -lt "$s4" ]; do
	head -c "$off" "$tmp/c.rec" >"$tmp/cut.rec"
	lines=$("$bin" replay "$tmp/cut.rec" watch --format csv,noheader --fields index 2>"$tmp/err.cut" | wc -l)
	if [ "$lines" != 6 ] || [ -s "$tmp/err.cut" ]; then
		bad="$bad $off"
	fi
	off=$((off + 1))
done
check "cut at each of the $((s4 - s3)) byte offsets of the last record: 3 samples, no error${bad:+ (failed at$bad)}" [ -z "$bad" ]
head -c "$((s4 - 3))" "$tmp/c.rec" >"$tmp/torn.rec"
fx "$bin" record -q -c 1 -d 0.05 -o "$tmp/torn.rec" 2>"$tmp/err"
"$bin" replay "$tmp/torn.rec" watch --format csv,noheader --fields index >"$tmp/out" 2>>"$tmp/err"
check "recording onto a torn last record drops it and goes on (3 + 1 samples)" \
	sh -c "[ \$(wc -l <'$tmp/out') = 8 ] && [ ! -s '$tmp/err' ]"

# 4. SIGTERM ends a recording in order
env $live FAKE_NVML_SCENARIO=tests/scenarios/h100x2.scn "$bin" record -q -d 0.1 -o "$tmp/t.rec" 2>"$tmp/err" &
pid=$!
sleep 0.8
kill -s TERM "$pid"
wait "$pid"
rc=$?
"$bin" replay "$tmp/t.rec" info >"$tmp/out" 2>>"$tmp/err"
check "SIGTERM: exit 0, the samples so far all readable" \
	sh -c "[ $rc = 0 ] && grep -Eq '^samples +([4-9]|[1-9][0-9])\$' '$tmp/out'"

# 5. a GPU falls off the bus: the minutes before it are in the recording
cat >"$tmp/lost.scn" <<'EOF'
[gpu]
name = steady
temperature = 40
[gpu]
name = doomed
uuid = GPU-doomed
temperature = ramp 50 90 0 1.2
power_usage = ramp 100000 450000 0 1.2
lost = 1.2
EOF
env $live FAKE_NVML_SCENARIO="$tmp/lost.scn" "$bin" record -q -c 8 -d 0.25 -o "$tmp/l.rec" 2>"$tmp/err"
rc=$?
"$bin" replay "$tmp/l.rec" watch --format ndjson --fields temperature.gpu,power.draw >"$tmp/out" 2>>"$tmp/err"
check "recording through a GPU loss (exit 1): temperatures and power rise, then it is lost" \
	python3 - "$tmp/out" "$rc" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert sys.argv[2] == "1", sys.argv[2]
doomed = [r for r in rows if r["index"] == 1]
assert len(doomed) == 8, len(doomed)
before = [r for r in doomed if r["state"] == "ok"]
after = [r for r in doomed if r["state"] == "lost"]
assert len(before) >= 3 and len(after) >= 2 and doomed.index(after[0]) == len(before), doomed
temps = [r["temperature.gpu"] for r in before]
assert temps == sorted(temps) and temps[-1] > temps[0], temps
assert all(r["temperature.gpu"] is None for r in after), after
assert all(r["state"] == "ok" for r in rows if r["index"] == 0)
EOF
"$bin" replay "$tmp/l.rec" info >"$tmp/out" 2>"$tmp/err"
check "replay info: samples, span, GPUs, and that one is lost" \
	sh -c "grep -q '^samples  *8\$' '$tmp/out' && grep -q 'GPU-doomed' '$tmp/out' && grep -q '^lost ' '$tmp/out'"

# 6. --at / --from find the sample at or before a time
for at in 1767225600 2026-01-01T00:00:00Z 2026-01-01T00:00Z "00:00" "00:00:00" "-0s" "+0s" "-1h" ; do
	fx "$bin" replay "$tmp/a.rec" status --json --at "$at" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	case $at in
	-1h) check "--at $at (before the recording): usage error naming its span" \
		sh -c "[ $rc = 2 ] && grep -q 'runs from 2026-01-01 00:00:00' '$tmp/err'" ;;
	*) check "--at $at finds the sample of 2026-01-01 00:00:00 UTC" \
		sh -c "[ $rc = 0 ] && grep -q '\"time_iso\": \"2026-01-01T00:00:00' '$tmp/out'" ;;
	esac
done
fx "$bin" replay "$tmp/a.rec" status --at "+1d" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "--at after the end: the last sample, with a note, exit 0 (exit $rc)" \
	sh -c "[ $rc = 0 ] && grep -q 'after the end' '$tmp/err' && [ -s '$tmp/out' ]"
for args in "--at" "--at soon status" "--speed fast watch" "watch --format xml" "nosuchcmd" ""; do
	# shellcheck disable=SC2086
	fx "$bin" replay ${args:+"$tmp/a.rec"} $args >"$tmp/out" 2>"$tmp/err"
	rc=$?
	check "replay ${args:-(no file)}: usage error, exit 2" sh -c "[ $rc = 2 ] && grep -q '^gpuscope: ' '$tmp/err'"
done

# 7. Xid errors: what a post-mortem of a GPU that fell off the bus needs
# a fixed clock: both GPUs of xid.scn watched, none seen yet ([], not null), as live
# shellcheck disable=SC2086
fxid() { env $fixed FAKE_NVML_SCENARIO=tests/scenarios/xid.scn "$@"; }
fxid "$bin" record -q -c 3 -d 0.05 -o "$tmp/x.rec" 2>"$tmp/err"
fxid "$bin" watch -c 3 -d 0.05 --format ndjson >"$tmp/live.nd" 2>>"$tmp/err"
fxid "$bin" replay "$tmp/x.rec" watch --format ndjson >"$tmp/out" 2>>"$tmp/err"
check "xid.scn, fixed clock: replay watch --format ndjson is live watch, byte for byte (xid_errors [])" \
	sh -c "cmp -s '$tmp/live.nd' '$tmp/out' && grep -q '\"xid_errors\":\[\]' '$tmp/out'"
# the scenario's clock ten times as fast: Xid 79, then 13 twice, on GPU 1
# shellcheck disable=SC2086
fast() { env -u FAKE_NVML_TIME -u FAKE_NVML_EPOCH $live FAKE_NVML_SPEED=10 FAKE_NVML_SCENARIO=tests/scenarios/xid.scn "$@"; }
fast "$bin" record -q -c 8 -d 0.2 -o "$tmp/xf.rec" 2>"$tmp/err"
fast "$bin" watch -c 8 -d 0.2 --format ndjson >"$tmp/live.nd" 2>>"$tmp/err"
"$bin" replay "$tmp/xf.rec" watch --format ndjson >"$tmp/out" 2>>"$tmp/err"
check "xid.scn recorded and replayed: the Xid counts come back, as live watch shows them" \
	python3 - "$tmp/out" "$tmp/live.nd" <<'EOF'
import json, sys
def per_gpu(path):
    rows = [json.loads(l) for l in open(path)]
    return [[r["xid_errors"] for r in rows if r["index"] == i] for i in (0, 1)]
rep, live = per_gpu(sys.argv[1]), per_gpu(sys.argv[2])
want = [[], [{"xid": 79, "count": 1}, {"xid": 13, "count": 2}]]
assert len(rep[0]) == len(rep[1]) == 8, rep
assert [rep[0][-1], rep[1][-1]] == want, ("replayed", rep[0][-1], rep[1][-1])
assert [live[0][-1], live[1][-1]] == want, ("live", live[0][-1], live[1][-1])
assert all(x is not None for x in rep[0] + rep[1]), ("a replayed GPU not watched", rep)
counts = [sum(e["count"] for e in x) for x in rep[1]]
assert counts == sorted(counts) and counts[0] < counts[-1], counts
EOF
"$bin" replay "$tmp/xf.rec" status --json --at +1d >"$tmp/out" 2>"$tmp/err"
check "replay FILE status --json --at +1d: the last sample's Xid counts" \
	python3 -c 'import json, sys
g = json.load(open(sys.argv[1]))["gpus"]
assert [x["xid_errors"] for x in g] == [[], [{"xid": 79, "count": 1}, {"xid": 13, "count": 2}]], g' "$tmp/out"

# 8. a recording of format version 1 (made before the Xid counts) still replays
fx "$bin" replay tests/fixtures/record/v1-h100x2.gsr watch --format ndjson >"$tmp/out" 2>"$tmp/err"
fx "$bin" watch -c 3 -d 0.05 --format ndjson >"$tmp/live.nd" 2>>"$tmp/err"
check "a version 1 recording replays as live watch shows its scenario, byte for byte" \
	sh -c "cmp -s '$tmp/live.nd' '$tmp/out' && [ ! -s '$tmp/err' ]"
# the same values as the gpuscope that made it showed; fields added since are unknown (null) in it
check "and as the gpuscope that made it replayed it (tests/fixtures/record/v1-h100x2.ndjson)" \
	python3 -c 'import json, sys
old = [json.loads(l) for l in open(sys.argv[1])]
new = [json.loads(l) for l in open(sys.argv[2])]
assert len(old) == len(new), (len(old), len(new))
for o, n in zip(old, new):
    added = {k: v for k, v in n.items() if k not in o}
    assert all(v is None for v in added.values()), added
    assert {k: v for k, v in n.items() if k in o} == o, (o, n)
    assert list(k for k in n if k in o) == list(o), "key order"' \
	tests/fixtures/record/v1-h100x2.ndjson "$tmp/out"

echo "1..$n"
[ "$fail" -eq 0 ]
