#!/bin/sh
# 2000 processes, 20 of them DRM clients (amdgpu, i915 and xe in turn), the
# fixture of the speed benchmark (bench/fdinfo/make-fixture.py, seed 1):
# gpuscope --root finds exactly the AMD GPU's clients, with each open file
# counted once (a dup'd fd is the same client), both when DRM's debugfs
# lists of clients name the processes (root) and when every process's fds
# are examined (no debugfs). Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
bin=$O/gpuscope
if [ ! -x "$bin" ] || ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP needs $bin and python3"
	exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
python3 bench/fdinfo/make-fixture.py "$dir/fx" --procs 2000 --drm 20 --seed 1 \
	--e2e-sys tests/fixtures/amd-dgpu/sys >"$dir/summary" || {
	echo "Bail out! cannot write the fixture"
	exit 1
}
for root in e2e e2e-walk; do
	GPUSCOPE_NVML=/nonexistent "$bin" --root "$dir/fx/$root" --json >"$dir/$root.json" 2>"$dir/$root.err"
	echo $? >"$dir/$root.rc"
done
python3 - "$dir" <<'EOF'
import json
import os
import sys

d = sys.argv[1]
manifest = {int(k): v for k, v in json.load(open(os.path.join(d, "fx", "manifest.json"))).items()}
VRAM = 155068 * 1024  # drm-resident-vram of every amdgpu client in the fixture
GTT = 20 * 1048576    # drm-resident-gtt
amd = {pid: m for pid, m in manifest.items() if m["driver"] == "amdgpu"}
n = 0


def ok(cond, what):
    global n
    n += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n, what))


ok(len(manifest) == 20 and len(amd) >= 5, "the fixture: 20 DRM processes, %d of them amdgpu" % len(amd))
for root, how in (("e2e", "debugfs lists"), ("e2e-walk", "a walk of /proc")):
    rc = open(os.path.join(d, root + ".rc")).read().strip()
    err = open(os.path.join(d, root + ".err")).read()
    ok(rc == "0" and err == "", "%s: exit 0, nothing on stderr (%s %r)" % (how, rc, err[:200]))
    try:
        doc = json.load(open(os.path.join(d, root + ".json")))
    except ValueError as e:
        ok(False, "%s: JSON: %s" % (how, e))
        continue
    ok(len(doc["gpus"]) == 1 and doc["gpus"][0]["vendor"] == "amd", "%s: one AMD GPU" % how)
    procs = doc["processes"]
    pids = sorted(p["pid"] for p in procs)
    ok(pids == sorted(amd), "%s: exactly the amdgpu clients (%s)" % (how, pids))
    ok(all(p["type"] == "drm" for p in procs), "%s: all of type drm" % how)
    bad = [(p["pid"], p["gpu_memory_bytes"], amd[p["pid"]]["clients"]) for p in procs
           if p["pid"] in amd and p["gpu_memory_bytes"] != VRAM * amd[p["pid"]]["clients"]]
    ok(not bad, "%s: VRAM = clients x 155068 KiB, a dup'd fd counted once %s" % (how, bad))
    bad = [p["pid"] for p in procs
           if p["pid"] in amd and p["gpu_system_memory_bytes"] != GTT * amd[p["pid"]]["clients"]]
    ok(not bad, "%s: GTT = clients x 20 MiB %s" % (how, bad))
    ok(all(p["command"] and p["command"].startswith("/usr/bin/proc") for p in procs),
       "%s: each with its command line" % how)
print("1..%d" % n)
EOF
