#!/bin/sh
# With --json, every error is a JSON document on stdout too (schema
# gpuscope.error/1, docs/json-schema.md): for each command that takes --json
# and each kind of error (a bad option, an unknown command, no GPU, a driver
# that hangs while starting), stdout is exactly one JSON document whose
# exit_code is the exit status and whose messages are the stderr lines,
# which stay as they were; a command that succeeded or wrote its own
# document (a lost GPU, doctor's findings, queue's errors) gets nothing
# more, and without --json stdout stays empty. Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
bin=$O/gpuscope
if [ ! -x "$bin" ] || ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP needs $bin and python3"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/# /' "$f" | head -n 20; done
}
fake=$O/fakenvml/current/libnvidia-ml.so.1
scn=tests/scenarios/h100x2.scn
# no GPU: no NVIDIA library, no DRM device
nogpu() { GPUSCOPE_NVML=/nonexistent GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty "$@"; }
# the fake NVML with scenario $scn
fx() {
	GPUSCOPE_NVML=$fake FAKE_NVML_SCENARIO=$scn GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty \
		GPUSCOPE_PROC_ROOT=tests/fixtures/proc GPUSCOPE_PASSWD=tests/fixtures/passwd TZ=UTC "$@"
}
# a driver whose nvmlInit hangs for a minute; one GPU of faults.scn lost from the start
awk '{ print } /^\[system\]/ { print "delay = nvmlInit_v2 60000" }' tests/scenarios/h100x2.scn >"$tmp/hang.scn"
sed 's/^lost = 10$/lost = 0/' tests/scenarios/faults.scn >"$tmp/lost.scn"

# error_doc WHAT COMMAND CODE gpuscope-args...: run it; stdout must be one
# gpuscope.error/1 document for COMMAND with error.code CODE, exit_code the
# exit status, error.message the first "gpuscope: " line of stderr and
# errors all of them, in order
error_doc() {
	what=$1 cmd=$2 code=$3
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if python3 - "$tmp/out" "$tmp/err" "$rc" "$cmd" "$code" <<'PY'; then ok "$what: one error document (exit $rc)"; else not_ok "$what" "$tmp/out" "$tmp/err"; fi
import json, sys
out, err, rc, cmd, code = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
d = json.loads(open(out).read())  # exactly one document: anything after it is an error
said = [l[len("gpuscope: "):] for l in open(err).read().splitlines() if l.startswith("gpuscope: ")]
want = {"schema": "gpuscope.error/1", "command": cmd, "exit_code": rc}
for k, v in want.items():
    if d.get(k) != v:
        sys.exit("%s: %r, not %r" % (k, d.get(k), v))
if rc == 0 or not said:
    sys.exit("exit %d, stderr said %r" % (rc, said))
if d["error"] != {"code": code, "message": said[0]}:
    sys.exit("error: %r (stderr: %r)" % (d["error"], said[0]))
if d["errors"] != said:
    sys.exit("errors: %r, stderr: %r" % (d["errors"], said))
if not isinstance(d["time"], (int, float)) or d["time"] <= 0 or not d["gpuscope_version"]:
    sys.exit("time or gpuscope_version: %r %r" % (d["time"], d["gpuscope_version"]))
if set(d) - {"schema", "gpuscope_version", "time", "hostname", "command", "exit_code", "error", "errors"}:
    sys.exit("members: %r" % sorted(d))
PY
}

# own_doc WHAT SCHEMA RC gpuscope-args...: exit RC and stdout exactly the command's own document
own_doc() {
	what=$1 schema=$2 want=$3
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" = "$want" ] && python3 - "$tmp/out" "$schema" <<'PY'; then ok "$what: its own document only (exit $rc)"; else not_ok "$what (exit $rc)" "$tmp/out" "$tmp/err"; fi
import json, sys
d = json.loads(open(sys.argv[1]).read())
schema = sys.argv[2]
if schema == "-":  # queue's reply: {"ok": false, ...}
    sys.exit(d.get("ok") is not False or "schema" in d)
sys.exit(d.get("schema") != schema)
PY
}

# --- each error kind, each command that takes --json
error_doc "status --json, no GPU" status no_gpu nogpu "$bin" status --json
error_doc "--json (status by default), no GPU" status no_gpu nogpu "$bin" --json
error_doc "status -j --compact, no GPU" status no_gpu nogpu "$bin" status -j --compact
error_doc "status --json --bogus" status usage "$bin" status --json --bogus
error_doc "--bogus --json (status by default)" status usage "$bin" --bogus --json
error_doc "status --json, an operand" status usage "$bin" status --json extra
error_doc "status --json --timeout x" status usage "$bin" status --json --timeout x
error_doc "--demo status --json -i 99: no such GPU" status usage "$bin" --demo status --json -i 99
error_doc "an unknown command with --json" frobnicate usage "$bin" frobnicate --json
t0=$(date +%s)
scn=$tmp/hang.scn error_doc "status --json, a driver that hangs while starting" status runtime \
	fx timeout 20 "$bin" status --json --timeout 0.2
t1=$(date +%s)
if [ $((t1 - t0)) -lt 10 ]; then ok "the hang ends at its bound ($((t1 - t0)) s)"; else not_ok "the hang took $((t1 - t0)) s"; fi
error_doc "replay FILE status --json, no such recording" "replay status" runtime \
	"$bin" replay "$tmp/none.rec" status --json
error_doc "doctor --json --bogus" doctor cannot_run "$bin" doctor --json --bogus
error_doc "doctor --json --watch x" doctor cannot_run "$bin" doctor --json --watch x
error_doc "fit --json --bogus" fit usage "$bin" fit --json --bogus
error_doc "fit --json, an unknown model" fit usage "$bin" fit no-such-model-xyz --json
error_doc "specs --json, no such GPU" specs usage "$bin" specs --json zzz-no-such-gpu
error_doc "specs --json --bogus" specs usage "$bin" specs --json --bogus
error_doc "bench --json --bogus" bench usage "$bin" bench --json --bogus
error_doc "bench matmul --json --size x" "bench matmul" usage "$bin" bench matmul --json --size x
error_doc "burn --json --duration x" burn usage "$bin" burn --json --duration x

# --- the stderr lines stay as they are
nogpu "$bin" status >"$tmp/out1" 2>"$tmp/err1"
rc1=$?
nogpu "$bin" status --json >"$tmp/out2" 2>"$tmp/err2"
rc2=$?
if [ "$rc1" = 4 ] && [ "$rc2" = 4 ] && [ ! -s "$tmp/out1" ] && cmp -s "$tmp/err1" "$tmp/err2"; then
	ok "no GPU: stderr the same with and without --json, stdout empty without"
else
	not_ok "no GPU: stderr differs with --json, or stdout not empty without (exit $rc1, $rc2)" "$tmp/out1" "$tmp/err2"
fi
"$bin" status --bogus >"$tmp/out1" 2>"$tmp/err1"
"$bin" status --bogus --json >"$tmp/out2" 2>"$tmp/err2"
if [ ! -s "$tmp/out1" ] && cmp -s "$tmp/err1" "$tmp/err2"; then
	ok "a bad option: stderr (message and usage) the same with --json"
else
	not_ok "a bad option: stderr differs with --json" "$tmp/err1" "$tmp/err2"
fi

# --- nothing added when the command succeeded or wrote its own document
own_doc "--demo --json" gpuscope.status/1 0 "$bin" --demo --json
scn=$tmp/lost.scn own_doc "status --json, a GPU lost" gpuscope.status/1 1 fx "$bin" status --json
scn=$tmp/lost.scn own_doc "doctor --json, findings" gpuscope.doctor/1 2 fx "$bin" doctor --json --only health
own_doc "queue ls --json, no daemon" - 3 "$bin" queue ls --json --socket "$tmp/none.sock"
own_doc "queue --json --bogus" - 2 "$bin" queue --json --bogus
own_doc "specs --json" gpuscope.specs/1 0 "$bin" specs --json h100
if fx "$bin" record -q -c 1 -d 0.05 -o "$tmp/h.rec" >/dev/null 2>"$tmp/err"; then
	own_doc "replay FILE status --json" gpuscope.status/1 0 "$bin" replay "$tmp/h.rec" status --json
else
	not_ok "record a sample to replay" "$tmp/err"
fi

# --- commands without --json get nothing
"$bin" query --json >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" = 2 ] && [ ! -s "$tmp/out" ]; then ok "query --json (query has no --json): stdout empty"; else not_ok "query --json: exit $rc" "$tmp/out"; fi
nogpu "$bin" status --json 2>/dev/null | python3 -m json.tool >"$tmp/out" 2>"$tmp/err"
if grep -q '"gpuscope.error/1"' "$tmp/out"; then ok "status --json | python3 -m json.tool reads the error"; else not_ok "the pipe read nothing" "$tmp/out" "$tmp/err"; fi

echo "1..$n"
[ "$fail" -eq 0 ]
