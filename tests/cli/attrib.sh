#!/bin/sh
# Attribution of real processes on the fake NVML: three sleeps the fake
# reports as GPU processes (FAKE_NVML_LIVE_DIR), one moved into a cgroup
# named as Slurm's cgroup/v2 plugin names a step
# (<cgroup2>/system.slice/<node>_slurmstepd.scope/job_77/step_0/user/task_0),
# one into a v1 hierarchy of the test's own (a named one, mounted under the
# temporary folder) as cgroup/v1 names one (/slurm/uid_0/job_88/step_batch),
# one started with SLURM_JOB_ID in its environment (proctrack/linuxproc, no
# cgroup plugin). 'gpuscope status --json' must give each its job, step and
# user, and the status table its Job column. Then a process in a Kubernetes
# pod's cgroup (systemd driver, containerd; under a parent of the test's own)
# with the kubelet's files of tests/fixtures/kubelet under GPUSCOPE_ROOT: its
# pod's namespace and name and its container's name. Needs root (cgroups);
# prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
repo=$(pwd)
bin=$O/gpuscope
lib=$O/fakenvml/current/libnvidia-ml.so.1
if [ ! -x "$bin" ] || [ ! -f "$lib" ]; then
	echo "1..0 # SKIP needs $bin and $lib"
	exit 0
fi
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && tail -n 25 "$f" | sed 's/^/# /'; done
}
skip_or_fail() { # what cannot run here: a failure where nothing may be skipped
	if [ "${GPUSCOPE_NO_SKIP:-}" = 1 ]; then not_ok "$1 (GPUSCOPE_NO_SKIP=1)"; else n=$((n + 1)); echo "ok $n # SKIP $1"; fi
}
if [ "$(id -u)" != 0 ]; then
	skip_or_fail "moving processes between cgroups needs root"
	echo "1..$n"
	[ $fail -eq 0 ]
	exit $?
fi
command -v python3 >/dev/null 2>&1 || { echo "Bail out! python3 is needed to read the JSON (scripts/install-deps.sh)"; exit 1; }

tmp=$(mktemp -d /tmp/gpuscope-attrib.XXXXXX) || exit 2
node=gpuscope-attrib-$$
cg2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
made_slice=''
scope=''
v1=''
kpar=''
pids=''
pod_=6fa3721d_437e_fd25_5304_7aeca39e0ae7
ctr=5075dfe85ac5f7189c6a2213f7c76df37b6656e460b2b4ff072d74fc2b90e5ef
kscope=kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod$pod_.slice/cri-containerd-$ctr.scope
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	if [ -n "$scope" ]; then
		rmdir "$scope/job_77/step_0/user/task_0" "$scope/job_77/step_0/user" "$scope/job_77/step_0" \
			"$scope/job_77" "$scope" 2>/dev/null
		[ -n "$made_slice" ] && rmdir "$cg2/system.slice" 2>/dev/null
	fi
	if [ -n "$v1" ]; then
		rmdir "$v1/slurm/uid_0/job_88/step_batch" "$v1/slurm/uid_0/job_88" "$v1/slurm/uid_0" "$v1/slurm" 2>/dev/null
		umount "$v1" 2>/dev/null
	fi
	if [ -n "$kpar" ]; then
		d=$kpar/$kscope
		while [ "$d" != "$kpar" ]; do rmdir "$d" 2>/dev/null; d=${d%/*}; done
		rmdir "$kpar" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

cat >"$tmp/gpu.scn" <<'EOF'
[system]
driver_version = 590.48.01
nvml_version = 13.590.48.01
cuda_version = 13010

[gpu 0]
name = NVIDIA H100 80GB HBM3
uuid = GPU-5a1e0000-0000-4000-8000-000000000000
pci_bus_id = 00000000:18:00.0
architecture = 9
memory_total = 81559 MiB
memory_used = 600 MiB
util_gpu = 10
EOF
mkdir -p "$tmp/live"
fakenv() {
	env GPUSCOPE_NVML="$repo/$lib" FAKE_NVML_SCENARIO="$tmp/gpu.scn" FAKE_NVML_LIVE_DIR="$tmp/live" "$@"
}
gpu_proc() { # gpu_proc PID MIB: the fake lists PID on GPU 0
	echo "0 $2" >"$tmp/live/.$1" && mv -f "$tmp/live/.$1" "$tmp/live/$1"
}

# 1. cgroup v2, a node-named scope as on a host of several slurmd
v2pid=''
if [ -n "$cg2" ]; then
	[ -d "$cg2/system.slice" ] || made_slice=1
	scope=$cg2/system.slice/${node}_slurmstepd.scope
	if mkdir -p "$scope/job_77/step_0/user/task_0"; then
		sleep 300 &
		v2pid=$!
		pids="$pids $v2pid"
		echo "$v2pid" >"$scope/job_77/step_0/user/task_0/cgroup.procs" || v2pid=''
	fi
fi
if [ -n "$v2pid" ] && grep -q "^0::/system.slice/${node}_slurmstepd.scope/job_77/step_0/user/task_0\$" "/proc/$v2pid/cgroup"; then
	gpu_proc "$v2pid" 1000
	ok "a process in Slurm's v2 step cgroup (pid $v2pid)"
else
	not_ok "could not place a process in $scope/job_77/step_0/user/task_0 (cgroup2 at '${cg2:-none}')"
	v2pid=''
fi

# 2. cgroup v1: a named hierarchy of our own, laid out as Slurm's cgroup/v1
v1pid=''
v1=$tmp/cg1
mkdir -p "$v1"
if mount -t cgroup -o "none,name=$node" cgroup "$v1" 2>"$tmp/mount.err" && mkdir -p "$v1/slurm/uid_0/job_88/step_batch"; then
	sleep 300 &
	v1pid=$!
	pids="$pids $v1pid"
	echo "$v1pid" >"$v1/slurm/uid_0/job_88/step_batch/cgroup.procs" || v1pid=''
else
	v1=''
fi
if [ -n "$v1pid" ] && grep -q ":name=$node:/slurm/uid_0/job_88/step_batch\$" "/proc/$v1pid/cgroup"; then
	gpu_proc "$v1pid" 2000
	ok "a process in Slurm's v1 job cgroup (pid $v1pid)"
else
	not_ok "could not place a process in a v1 hierarchy laid out as Slurm's" "$tmp/mount.err"
	v1pid=''
fi

# 3. no job cgroup: the environment
env SLURM_JOB_ID=99 SLURM_STEP_ID=4 SLURM_JOB_USER=carol sleep 300 &
envpid=$!
pids="$pids $envpid"
gpu_proc "$envpid" 3000

# 4. a process of no job
sleep 300 &
nojob=$!
pids="$pids $nojob"
gpu_proc "$nojob" 500

fakenv timeout 20 "$bin" status --json >"$tmp/status.json" 2>"$tmp/status.err"
rc=$?
[ $rc = 0 ] || not_ok "status --json: exit $rc" "$tmp/status.err"
slurm_of() { # slurm_of PID: the "slurm" member of its process object, as JSON
	python3 -c '
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except ValueError as e:
    print("not JSON: %s" % e); sys.exit(0)
p = [p for p in doc.get("processes") or [] if p.get("pid") == int(sys.argv[2])]
print("no process" if not p else json.dumps(p[0].get("slurm", "(no member)"), sort_keys=True))
' "$tmp/status.json" "$1"
}
want() { # want PID WHAT JSON
	got=$(slurm_of "$1")
	if [ "$got" = "$3" ]; then ok "status --json: $2: $got"; else not_ok "status --json: $2: got $got, want $3" "$tmp/status.json"; fi
}
[ -n "$v2pid" ] && want "$v2pid" "cgroup v2 step" '{"job": "77", "step": "0", "user": "root"}'
[ -n "$v1pid" ] && want "$v1pid" "cgroup v1 batch step, user from uid_0" '{"job": "88", "step": "batch", "user": "root"}'
want "$envpid" "SLURM_* in the environment" '{"job": "99", "step": "4", "user": "carol"}'
want "$nojob" "no job" 'null'

# the table: a Job column, job.step as sacct writes it
fakenv env COLUMNS=160 timeout 20 "$bin" status >"$tmp/status.txt" 2>"$tmp/status.err"
if grep -q ' Job ' "$tmp/status.txt"; then ok "status: a Job column"; else not_ok "status: no Job column" "$tmp/status.txt"; fi
row() { # row PID CELL
	if awk -v pid="$1" -v cell="$2" '$2 == pid { for (i = 3; i <= NF; i++) if ($i == cell) f = 1 } END { exit !f }' "$tmp/status.txt"; then
		ok "status: process $1 shows $2"
	else
		not_ok "status: process $1 does not show $2" "$tmp/status.txt"
	fi
}
[ -n "$v2pid" ] && row "$v2pid" 77.0
[ -n "$v1pid" ] && row "$v1pid" 88.batch
row "$envpid" 99.4

# without any job, no Job column
for p in $v2pid $v1pid $envpid; do rm -f "$tmp/live/$p"; done
fakenv env COLUMNS=160 timeout 20 "$bin" status >"$tmp/status.txt" 2>"$tmp/status.err"
if grep -q "$nojob" "$tmp/status.txt" && ! grep -q ' Job ' "$tmp/status.txt"; then
	ok "status: no job, no Job column"
else
	not_ok "status: a Job column with no job, or process $nojob missing" "$tmp/status.txt"
fi

# 5. Kubernetes: the pod uid and container id from the cgroup, names from the kubelet's files
kpid=''
if [ -n "$cg2" ]; then
	kpar=$cg2/gpuscope-attrib-$$.slice
	if mkdir -p "$kpar/$kscope"; then
		sleep 300 &
		kpid=$!
		pids="$pids $kpid"
		echo "$kpid" >"$kpar/$kscope/cgroup.procs" || kpid=''
	fi
fi
mkdir -p "$tmp/kroot"
cp -R tests/fixtures/kubelet/var "$tmp/kroot/"
if [ -n "$kpid" ] && grep -q "cri-containerd-$ctr.scope\$" "/proc/$kpid/cgroup"; then
	gpu_proc "$kpid" 700
	fakenv env GPUSCOPE_ROOT="$tmp/kroot" GPUSCOPE_PROC_ROOT=/proc GPUSCOPE_SYSFS_ROOT=/sys \
		timeout 20 "$bin" status --json >"$tmp/k8s.json" 2>"$tmp/k8s.err"
	got=$(python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
p = [p for p in doc.get("processes") or [] if p.get("pid") == int(sys.argv[2])]
print("no process" if not p else json.dumps({"container": p[0].get("container"), "pod": p[0].get("pod")}, sort_keys=True))
' "$tmp/k8s.json" "$kpid" 2>&1)
	want='{"container": {"id": "5075dfe85ac5", "name": "trainer", "pod_uid": "6fa3721d-437e-fd25-5304-7aeca39e0ae7", "runtime": "containerd"}, "pod": {"name": "llama-train-0", "namespace": "ml", "uid": "6fa3721d-437e-fd25-5304-7aeca39e0ae7"}}'
	if [ "$got" = "$want" ]; then ok "status --json: pod ml/llama-train-0, container trainer"; else not_ok "status --json: Kubernetes: got $got, want $want" "$tmp/k8s.json" "$tmp/k8s.err"; fi
	fakenv env GPUSCOPE_ROOT="$tmp/kroot" GPUSCOPE_PROC_ROOT=/proc GPUSCOPE_SYSFS_ROOT=/sys COLUMNS=160 \
		timeout 20 "$bin" status >"$tmp/status.txt" 2>"$tmp/k8s.err"
	row "$kpid" ml/llama-train-0
else
	not_ok "could not place a process in $kpar/$kscope"
fi

echo "1..$n"
[ $fail -eq 0 ]
