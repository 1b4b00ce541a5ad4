#!/bin/sh
# Every file gpuscope reads from outside, with a FIFO in its place: for each
# command below, strace lists the files it opens under the fixture trees
# (a /sys, /proc and /etc/passwd of an AMD card through --root; the fake
# NVML's two H100s with a fixture /proc), then each of those files in turn
# is replaced by a FIFO that no one writes, and the command must end by
# itself (no hang, no crash) with the others intact. Prints TAP: one line
# per command and tree, naming every file that made it hang.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
# shellcheck source=tests/skip.inc
. ./tests/skip.inc
n=0 fail=0
bin=$O/gpuscope
if [ ! -x "$bin" ] || ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP needs $bin and python3"
	exit 0
fi
if ! command -v strace >/dev/null 2>&1; then
	skip_missing "needs strace (apt-get install strace)"
	echo "1..$n"
	[ $fail = 0 ]
	exit
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
python3 - "$bin" "$O" "$tmp" <<'PY'
import os, re, shutil, subprocess, sys

bin, O, tmp = sys.argv[1:4]
fake = os.path.join(O, "fakenvml/current/libnvidia-ml.so.1")
amd = os.path.join(tmp, "amd")
shutil.copytree("tests/fixtures/amd-dgpu", amd, symlinks=True)
nv = os.path.join(tmp, "nv")
os.makedirs(nv)
shutil.copytree("tests/fixtures/proc", nv + "/proc", symlinks=True)
shutil.copytree("tests/fixtures/sys-empty", nv + "/sys", symlinks=True)
shutil.copy("tests/fixtures/passwd", nv + "/passwd")
base = {k: v for k, v in os.environ.items()
        if not k.startswith(("GPUSCOPE_", "FAKE_NVML_"))}
base.update(TZ="UTC", NO_COLOR="1")
trees = {
    "amd": (amd, dict(base, GPUSCOPE_NVML="/nonexistent/libnvidia-ml.so.1"), ["--root", amd]),
    "nvidia": (nv, dict(base, GPUSCOPE_NVML=fake, FAKE_NVML_SCENARIO="tests/scenarios/h100x2.scn",
                        GPUSCOPE_PROC_ROOT=nv + "/proc", GPUSCOPE_SYSFS_ROOT=nv + "/sys",
                        GPUSCOPE_PASSWD=nv + "/passwd"), []),
}
commands = [
    ["status", "--json", "--timeout", "1"],
    ["status", "--timeout", "1"],
    ["query", "--query-gpu=index,name,utilization.gpu,temperature.gpu", "--format=csv"],
    ["watch", "-c", "2", "-d", "0.1", "--timeout", "1", "--format", "csv"],
    ["doctor", "--json"],
]
opened = re.compile(r'open(?:at)?\((?:AT_FDCWD|\d+), "([^"]+)",.*\) = \d+')
n = fail = 0

def run(env, argv, limit):
    try:
        p = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=limit)
        return p.returncode, p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return None, ""

for tree, (root, env, pre) in trees.items():
    for cmd in commands:
        argv = [bin] + pre + cmd
        log = os.path.join(tmp, "strace.log")
        subprocess.run(["strace", "-f", "-qq", "-e", "trace=open,openat", "-o", log] + argv,
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        files = set()
        for line in open(log, errors="replace"):
            m = opened.search(line)
            if not m:
                continue
            # relative openat()s (fdinfo under an open /proc) are resolved by hand
            path = m.group(1)
            if not path.startswith("/"):
                continue
            real = os.path.realpath(path)
            if real.startswith(root + "/") and os.path.isfile(real) and not os.path.islink(real):
                files.add(real)
        fdinfo = [os.path.join(d, f) for d, _, fs in os.walk(root + "/proc")
                  if d.endswith("/fdinfo") for f in fs]
        if cmd[0] == "status" and "--json" in cmd:
            files.update(os.path.realpath(f) for f in fdinfo)
        hung, crashed = [], []
        for f in sorted(files):
            keep = f + ".keep"
            os.rename(f, keep)
            os.mkfifo(f)
            try:
                rc, err = run(env, argv, 20)
            finally:
                os.unlink(f)
                os.rename(keep, f)
            rel = os.path.relpath(f, root)
            if rc is None:
                hung.append(rel)
            elif rc < 0 or rc > 4 or "AddressSanitizer" in err:
                crashed.append("%s (exit %s)" % (rel, rc))
        n += 1
        what = "%s tree, gpuscope %s: each of its %d files as a FIFO" % (tree, " ".join(cmd), len(files))
        if hung or crashed or not files:
            fail += 1
            print("not ok %d - %s" % (n, what))
            for h in hung:
                print("# hung (20 s): " + h)
            for c in crashed:
                print("# crashed: " + c)
            if not files:
                print("# strace saw no file opened under " + root)
        else:
            print("ok %d - %s" % (n, what))
        sys.stdout.flush()
print("1..%d" % n)
sys.exit(1 if fail else 0)
PY
