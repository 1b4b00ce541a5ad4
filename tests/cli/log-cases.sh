#!/bin/sh
# Small scenario logs for the message tables and decoders, one TAP line each:
# tests/logs/cases/<agent>/<id>--<what>.log must give the finding <id> as an
# error or a warning from 'gpuscope doctor --log FILE --json' (other ids may
# be there too); healthy--<what>.log must give no error and no warning about
# the log (ids log.*). Unlike tests/logs/corpus/ (real pastes, scored), these
# are the tables' own cases and must all pass. Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
bin=$O/gpuscope
if [ ! -x "$bin" ] || ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP needs $bin and python3"
	exit 0
fi
exec env GPUSCOPE_PROC_ROOT=tests/fixtures/proc GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty \
	GPUSCOPE_PASSWD=tests/fixtures/passwd GPUSCOPE_NVML=/nonexistent/libnvidia-ml.so.1 TZ=UTC \
	python3 - "$bin" tests/logs/cases <<'EOF'
import glob, json, os, subprocess, sys
sys.path.insert(0, "tests/logs")
import doctorlog  # noqa: E402

binary, top = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(os.path.join(top, "*", "*.log")))
if not files:
    print("1..0 # SKIP no cases in %s" % top)
    sys.exit(0)


def judge(path):
    return doctorlog.judge(binary, path)


print("1..%d" % len(files))
fail = 0
for k, path in enumerate(files, 1):
    name = os.path.relpath(path, top)
    want = os.path.basename(path).split("--", 1)[0]
    found, problem = judge(path)
    loud = [(i, s) for i, s in found if s in ("error", "warning")]
    shown = ", ".join("%s(%s)" % f for f in found) or "nothing"
    if problem:
        good, what = False, "%s: %s" % (name, problem)
    elif "--" not in os.path.basename(path):
        good, what = False, "%s: name is not <id>--<what>.log or healthy--<what>.log" % name
    elif want == "healthy":
        good, what = not loud, "%s: no error or warning (found %s)" % (name, shown)
    else:
        good, what = any(i == want for i, _ in loud), "%s: %s as error or warning (found %s)" % (
            name, want, shown)
    print("%s %d - %s" % ("ok" if good else "not ok", k, what))
    fail += not good
sys.exit(1 if fail else 0)
EOF
