#!/bin/sh
# Every shape of log gives the same findings: each excerpt of
# tests/logs/corpus/**/*.log and of tests/fixtures/doctor/klog/*.log,
# re-wrapped by tests/logs/wrap.py in every shape (the journal's formats and
# JSON, syslog, rsyslog, kmsg, kubectl, CRI, docker compose, Markdown,
# CRLF, gzip, an nvidia-bug-report log), must give `gpuscope doctor --log F
# --json` the same set of (id, severity) as the excerpt itself. Then the
# loader's own cases: a gzip'd bug report made from an excerpt (gzip -n),
# an amdgpu devcoredump and an Xe one, a gzip bomb, a NUL byte, a binary
# file, a directory, a device, a pipe, and --log judging the text alone
# (no set-up finding of this machine unless --only asks). Prints TAP.
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
fix=tests/fixtures/doctor/logs

# 1. every excerpt in every shape: one case per excerpt (python3 drives the runs)
python3 - "$bin" "$tmp" >"$tmp/shapes.tap" <<'EOF'
import concurrent.futures, glob, json, os, subprocess, sys

bin, tmp = sys.argv[1], sys.argv[2]
logs = sorted(glob.glob("tests/logs/corpus/**/*.log", recursive=True))
logs += sorted(glob.glob("tests/fixtures/doctor/klog/*.log"))
shapes = subprocess.run([sys.executable, "tests/logs/wrap.py", "--list"], capture_output=True,
                        text=True, check=True).stdout.split()


def findings(path):
    p = subprocess.run([bin, "doctor", "--log", path, "--json"], capture_output=True, text=True)
    if p.returncode not in (0, 1, 2):
        return "exit %d: %s" % (p.returncode, p.stderr.strip())
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        return "not JSON: %s" % e
    return sorted({(f["id"], f["severity"]) for f in doc["findings"]})


def one(i):
    log = logs[i]
    out = os.path.join(tmp, "w%d" % i)
    subprocess.run([sys.executable, "tests/logs/wrap.py", log, out], check=True)
    want = findings(log)
    bad = []
    for s in shapes:
        f = os.path.join(out, s if s.endswith(".gz") else s + ".log")
        got = findings(f)
        if got != want:
            bad.append("%s: %s" % (s, got))
    return log, want, bad


with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    results = list(pool.map(one, range(len(logs))))
for log, want, bad in results:
    if bad:
        print("not ok - %s: %d of %d shapes differ" % (log, len(bad), len(shapes)))
        print("#   plain: %s" % (want,))
        for b in bad[:6]:
            print("#   %s" % b)
    else:
        print("ok - %s: the same %d finding(s) in %d shapes" % (log, len(want), len(shapes)))
EOF
while IFS= read -r line; do
	case $line in
	"ok - "*) ok "${line#ok - }" ;;
	"not ok - "*)
		n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - ${line#not ok - }" ;;
	*) echo "$line" ;;
	esac
done <"$tmp/shapes.tap"
[ -s "$tmp/shapes.tap" ] || not_ok "the shapes' driver printed nothing"

ids() { # the (id severity) pairs of doctor --log $1 --json
	"$bin" doctor --log "$1" --json 2>"$tmp/err" | python3 -c '
import json, sys
for f in json.load(sys.stdin)["findings"]:
    print(f["id"], f["severity"])' | sort -u
}

# 2. a gzip'd nvidia-bug-report (made from an excerpt with gzip -n)
if [ -f "$fix/bug-report-fallen.log.gz" ] &&
	ids "$fix/bug-report-fallen.log.gz" >"$tmp/out" && grep -q "^log.nvidia.fallen_off_bus error" "$tmp/out"; then
	ok "nvidia-bug-report.log.gz: fallen off the bus, read through zlib"
else not_ok "nvidia-bug-report.log.gz" "$tmp/out" "$tmp/err"; fi
"$bin" doctor --log "$fix/bug-report-fallen.log.gz" >"$tmp/out" 2>&1
if grep -q "lines about it 2 times" "$tmp/out"; then
	ok "the kernel lines the report repeats in its sections are counted once"
else not_ok "bug report: repeats across sections" "$tmp/out"; fi

# 3. devcoredumps: amdgpu's ring timeout with its process; Xe's hang
if ids "$fix/amdgpu-devcoredump.txt" >"$tmp/out" && grep -q "^log.amdgpu.ring_timeout error" "$tmp/out"; then
	ok "amdgpu devcoredump: log.amdgpu.ring_timeout"
else not_ok "amdgpu devcoredump" "$tmp/out" "$tmp/err"; fi
"$bin" doctor --log "$fix/amdgpu-devcoredump.txt" >"$tmp/out" 2>&1
if grep -q "soft_recovery_p" "$tmp/out"; then ok "amdgpu devcoredump: the process is named"; else not_ok "amdgpu devcoredump: process" "$tmp/out"; fi
if ids "$fix/xe-devcoredump.txt" >"$tmp/out" && grep -q "^log.intel.gpu_hang" "$tmp/out"; then
	ok "Xe devcoredump: log.intel.gpu_hang"
else not_ok "Xe devcoredump" "$tmp/out" "$tmp/err"; fi
if ids "$fix/i915-error-state.txt" >"$tmp/out" && grep -q "^log.intel.gpu_hang" "$tmp/out"; then
	ok "i915 error state (/sys/class/drm/card0/error): log.intel.gpu_hang"
else not_ok "i915 error state" "$tmp/out" "$tmp/err"; fi

# 4. bad input: one line on stderr, exit 3, never a crash
head -c 300000000 /dev/zero | gzip -c >"$tmp/bomb.gz"
"$bin" doctor --log "$tmp/bomb.gz" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc = 3 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "bomb.gz: inflates to over" "$tmp/err"; then
	ok "a gzip bomb: one-line error, exit 3"
else not_ok "gzip bomb (exit $rc)" "$tmp/err"; fi
printf 'NVRM: Xid (PCI:0000:3b:00): 79, pid=1, \000GPU has fallen off the bus.\n[   1.0] NVRM: Xid (PCI:0000:3c:00): 79, pid=1, GPU has fallen off the bus.\n' >"$tmp/nul.log"
if ids "$tmp/nul.log" >"$tmp/out" && grep -q "^log.nvidia.fallen_off_bus error" "$tmp/out"; then
	ok "a NUL byte does not end the log"
else not_ok "NUL byte" "$tmp/out" "$tmp/err"; fi
head -c 200000 "$bin" >"$tmp/binary.log"
"$bin" doctor --log "$tmp/binary.log" --json >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -le 2 ]; then ok "a binary file: read, no crash (exit $rc)"; else not_ok "binary file (exit $rc)" "$tmp/err"; fi
python3 -c 'import sys; sys.stdout.write("NVRM: " + "x" * 5000000 + "\n")' >"$tmp/long.log"
"$bin" doctor --log "$tmp/long.log" --json >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -le 2 ]; then ok "a 5 MB line: no crash (exit $rc)"; else not_ok "huge line (exit $rc)" "$tmp/err"; fi
for bad in "$tmp" /dev/zero "$tmp/missing.log"; do
	"$bin" doctor --log "$bad" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc = 3 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q -- "--log $bad: " "$tmp/err"; then
		ok "--log $bad: one-line error naming it, exit 3"
	else not_ok "--log $bad (exit $rc)" "$tmp/err"; fi
done
"$bin" doctor --log /dev/null --json >"$tmp/out" 2>"$tmp/err"
if grep -q '"id":"log.ok"' "$tmp/out"; then ok "--log /dev/null: an empty log"; else not_ok "--log /dev/null" "$tmp/out" "$tmp/err"; fi
printf '\037\213garbage' >"$tmp/bad.gz"
"$bin" doctor --log "$tmp/bad.gz" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc = 3 ] && grep -q "not valid gzip" "$tmp/err"; then ok "corrupt gzip: one-line error"; else not_ok "corrupt gzip (exit $rc)" "$tmp/err"; fi
printf '\375\067zXZ\000\000' >"$tmp/k.xz"
"$bin" doctor --log "$tmp/k.xz" >"$tmp/out" 2>"$tmp/err"
if grep -q "compressed with xz" "$tmp/err"; then ok "xz: says how to unpack it"; else not_ok "xz" "$tmp/err"; fi

# 5. a pipe, as --log <(journalctl -k) gives
if [ -e /dev/fd/0 ]; then
	printf 'Nov 30 10:00:00 h kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n' >"$tmp/p.log"
	mkfifo "$tmp/fifo"
	cat "$tmp/p.log" >"$tmp/fifo" &
	if ids "$tmp/fifo" >"$tmp/out" && grep -q "^log.nvidia.fallen_off_bus error" "$tmp/out"; then
		ok "a named pipe is read"
	else not_ok "named pipe" "$tmp/out" "$tmp/err"; fi
	wait
fi

# 6. --log judges the text alone; --only brings set-up checks back
printf 'NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n' >"$tmp/one.log"
GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty "$bin" doctor --log "$tmp/one.log" --json >"$tmp/out" 2>"$tmp/err"
if python3 -c '
import json, sys
ids = [f["id"] for f in json.load(open(sys.argv[1]))["findings"]]
sys.exit(0 if ids and all(i.startswith("log.") for i in ids) else 1)' "$tmp/out"; then
	ok "--log alone: only log.* findings"
else not_ok "--log alone" "$tmp/out" "$tmp/err"; fi
"$bin" doctor --log "$tmp/one.log" --only klog,pci --json >"$tmp/out" 2>"$tmp/err"
if grep -q '"id":"log.nvidia.fallen_off_bus"' "$tmp/out" && grep -q '"id":"setup\.' "$tmp/out"; then
	ok "--log with --only klog,pci: the set-up check asked for runs too"
else not_ok "--log --only" "$tmp/out" "$tmp/err"; fi

echo "1..$n"
[ $fail = 0 ]
