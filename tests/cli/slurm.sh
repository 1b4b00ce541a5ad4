#!/bin/sh
# contrib/slurm against a real Slurm, on the fake NVML. First doctor's
# --fail-on and --skip (what a site drains for). Then the test starts its
# own munged (a key and socket of its own), slurmctld and slurmd (Debian's,
# one node, ports of its own, everything under a temporary folder) with
# contrib/slurm's health check, prolog and epilog, and checks that: a job's
# GPU process shows its Slurm job id in 'gpuscope status --json' and in
# 'gpuscope serve'; the epilog finds its GPU clean after it; the prolog
# refuses a GPU a foreign process holds (drained "gpuscope-prolog: ...");
# the health check drains the node when a GPU is lost ("gpuscope:
# health.gpu.lost: ...") and resumes it when the GPU is back, but leaves a
# drain of an admin alone; the epilog drains a node whose GPU memory did not
# come back. Everything it starts is stopped on the way out. Prints TAP.
# shellcheck disable=SC2086 # $logs is a list of files
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
tmp=$(mktemp -d /tmp/gpuscope-slurm.XXXXXX) || exit 2
chmod 755 "$tmp" # munged wants its socket's folder open to all
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && tail -n 25 "$f" | sed 's/^/# /'; done
}
done_tap() {
	echo "1..$n"
	[ $fail -eq 0 ]
	exit $?
}

# the fake's server: two H100s, the driver holding 600 MiB on each
scenario() { # scenario FILE [LOST-GPU|hang]: a GPU lost, or every GPU call hanging (a wedged driver)
	{
		printf '[system]\ndriver_version = 590.48.01\nnvml_version = 13.590.48.01\ncuda_version = 13010\n'
		if [ "${2:-}" = hang ]; then printf 'delay = nvmlDeviceGet* 600000\n'; fi
		for g in 0 1; do
			printf '\n[gpu %s]\nname = NVIDIA H100 80GB HBM3\n' $g
			printf 'uuid = GPU-5a1e000%s-0000-4000-8000-00000000000%s\n' $g $g
			printf 'pci_bus_id = 00000000:%s:00.0\npci_device_id = 0x233010DE\n' $((18 + g))
			printf 'architecture = 9\ncompute_capability = 9.0\nmemory_total = 81559 MiB\n'
			printf 'memory_used = 600 MiB\nutil_gpu = 0\ntemperature = 34\npstate = 0\n'
			printf 'persistence_mode = 1\ncompute_mode = 0\nmig_mode = 0\n'
			if [ "${2:-}" = $g ]; then printf 'lost = 0\n'; fi
		done
	} >"$1.tmp" && mv -f "$1.tmp" "$1"
}
mkdir -p "$tmp/live"
scenario "$tmp/gpu.scn"
fakenv() {
	env GPUSCOPE_NVML="$repo/$lib" FAKE_NVML_SCENARIO="$tmp/gpu.scn" FAKE_NVML_LIVE_DIR="$tmp/live" "$@"
}

# 1. doctor --fail-on, --skip
scenario "$tmp/lost.scn" 1
doc() { # doc SCENARIO ARGS...: doctor's exit status in $rc, its report in $tmp/doc.out
	sc=$1; shift
	env GPUSCOPE_NVML="$repo/$lib" FAKE_NVML_SCENARIO="$tmp/$sc.scn" timeout 20 "$bin" doctor --only health --json "$@" \
		>"$tmp/doc.out" 2>"$tmp/doc.err"
	rc=$?
}
doc lost
if [ $rc = 2 ] && grep -q '"id":"health.gpu.lost"' "$tmp/doc.out"; then ok "doctor: a lost GPU is an error (exit 2)"; else not_ok "doctor on a lost GPU: exit $rc, want 2 and health.gpu.lost" "$tmp/doc.out" "$tmp/doc.err"; fi
doc lost --skip health.gpu.lost
if [ $rc = 0 ] && ! grep -q 'health.gpu.lost' "$tmp/doc.out" && grep -q '"exit_code":0' "$tmp/doc.out"; then
	ok "--skip health.gpu.lost: out of the report, exit 0"
else
	not_ok "--skip health.gpu.lost: exit $rc, want 0 and no such finding" "$tmp/doc.out" "$tmp/doc.err"
fi
doc lost --skip 'health.gpu.*,log.unread'
if [ $rc = 0 ] && ! grep -q 'health.gpu.lost' "$tmp/doc.out"; then ok "--skip with a prefix and a list"; else not_ok "--skip health.gpu.*: exit $rc" "$tmp/doc.out" "$tmp/doc.err"; fi
doc lost --skip health.gpu.lozt
if [ $rc = 3 ] && grep -q "'health.gpu.lozt'" "$tmp/doc.err" && grep -q -- "--list" "$tmp/doc.err" && grep -q '"schema":"gpuscope.error/1"' "$tmp/doc.out"; then
	ok "--skip of an unknown id: exit 3, the id named, --list pointed at"
else
	not_ok "--skip health.gpu.lozt: exit $rc, want 3 and a line naming it" "$tmp/doc.err"
fi
doc lost --fail-on sometimes
if [ $rc = 3 ] && grep -q "error or warning" "$tmp/doc.err"; then ok "--fail-on sometimes: exit 3"; else not_ok "--fail-on sometimes: exit $rc" "$tmp/doc.err"; fi
doc lost --fail-on error
if [ $rc = 2 ]; then ok "--fail-on error: an error still exits 2"; else not_ok "--fail-on error with an error: exit $rc" "$tmp/doc.err"; fi
cat >"$tmp/warn.scn" <<'EOF'
[system]
driver_version = 590.48.01

[gpu]
name = NVIDIA H100 80GB HBM3
uuid = GPU-5a1e0000-0000-4000-8000-000000000000
pci_bus_id = 00000000:18:00.0
memory_total = 81559 MiB
memory_used = 600 MiB
temperature = 86
temp_slowdown = 89
temp_shutdown = 92
EOF
doc warn
w=$rc
doc warn --fail-on error
e=$rc
doc warn --fail-on warning
if [ $w = 1 ] && [ $e = 0 ] && [ $rc = 1 ] && grep -q '"severity":"warning"' "$tmp/doc.out"; then
	ok "a warning: exit 1, with --fail-on error 0, with --fail-on warning 1"
else
	not_ok "a warning: exit $w / --fail-on error $e / --fail-on warning $rc, want 1 0 1" "$tmp/doc.out" "$tmp/doc.err"
fi

# 2. a Slurm of our own
if [ "$(id -u)" != 0 ] || ! command -v munged >/dev/null 2>&1 || ! command -v slurmctld >/dev/null 2>&1 ||
	! command -v slurmd >/dev/null 2>&1 || ! command -v sbatch >/dev/null 2>&1; then
	if [ "${GPUSCOPE_NO_SKIP:-0}" = 1 ]; then
		not_ok "Slurm: needs root, munged, slurmctld, slurmd and sbatch (scripts/install-deps.sh check)"
	else
		ok "# SKIP Slurm: needs root, munged, slurmctld, slurmd and sbatch (scripts/install-deps.sh check)"
	fi
	rm -rf "$tmp"
	done_tap
fi

node=$(hostname -s)
base=$((20000 + $$ % 20000))
export SLURM_CONF="$tmp/slurm.conf"
serve_pid='' hog_pid=''
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	[ -z "$serve_pid" ] || kill "$serve_pid" 2>/dev/null
	[ -z "$hog_pid" ] || kill "$hog_pid" 2>/dev/null
	timeout 5 scancel --quiet --user=root >/dev/null 2>&1
	i=0
	while [ -n "$(timeout 5 squeue -h 2>/dev/null)" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	for d in slurmd slurmctld munged; do
		f=$tmp/$d.pid
		[ -s "$f" ] || continue
		p=$(cat "$f")
		kill "$p" 2>/dev/null || continue
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		kill -9 "$p" 2>/dev/null
	done
	# what slurmd left (slurmstepd, the jobs' processes): they inherit its GPUSCOPE_SLURM_TEST
	for e in /proc/[0-9]*/environ; do
		p=${e#/proc/}
		p=${p%/environ}
		if { tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qx "GPUSCOPE_SLURM_TEST=$tmp"; then
			kill "$p" 2>/dev/null
		fi
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

mkdir -p "$tmp/munge" "$tmp/sock" "$tmp/state" "$tmp/spool" "$tmp/dev"
chmod 700 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 600 "$tmp/munge/munge.key"
# the GPUs' device files for gres.conf (slurmd wants character devices; they are /dev/null's)
if ! mknod "$tmp/dev/nvidia0" c 1 3 || ! mknod "$tmp/dev/nvidia1" c 1 3; then
	not_ok "mknod $tmp/dev/nvidia0: slurmd's GPUs need character devices"
	done_tap
fi
cat >"$tmp/gpuscope-slurm.env" <<EOF
GPUSCOPE=$repo/$bin
GPUSCOPE_TIMEOUT=8
GPUSCOPE_EPILOG_WAIT=3
GPUSCOPE_SLURM_LOG=$tmp/gpuscope-slurm.log
GPUSCOPE_SLURM_NODE=$node
export GPUSCOPE_NVML=$repo/$lib FAKE_NVML_SCENARIO=$tmp/gpu.scn FAKE_NVML_LIVE_DIR=$tmp/live
export SLURM_CONF=$tmp/slurm.conf
EOF
for s in healthcheck prolog epilog; do
	printf '#!/bin/sh\nGPUSCOPE_SLURM_ENV=%s exec %s "$@"\n' "$tmp/gpuscope-slurm.env" \
		"$repo/contrib/slurm/gpuscope-$s" >"$tmp/$s"
	chmod 755 "$tmp/$s"
done
cat >"$tmp/slurm.conf" <<EOF
ClusterName=gpuscope
SlurmctldHost=localhost
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SrunPortRange=$((base + 2))-$((base + 40))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/sock/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
GresTypes=gpu
HealthCheckProgram=$tmp/healthcheck
HealthCheckInterval=2
HealthCheckNodeState=ANY
Prolog=$tmp/prolog
Epilog=$tmp/epilog
PrologFlags=Alloc
NodeName=$node NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
cat >"$tmp/gres.conf" <<EOF
AutoDetect=off
Name=gpu File=$tmp/dev/nvidia[0-1]
EOF

logs="$tmp/gpuscope-slurm.log $tmp/slurmd.log $tmp/slurmctld.log"
if timeout 10 munged --socket="$tmp/sock/munge.sock" --key-file="$tmp/munge/munge.key" \
	--log-file="$tmp/munge/munged.log" --pid-file="$tmp/munged.pid" --seed-file="$tmp/munge/seed" &&
	timeout 20 slurmctld -i && GPUSCOPE_SLURM_TEST=$tmp timeout 20 slurmd; then
	ok "munged, slurmctld and slurmd started (ports $base, $((base + 1)))"
else
	not_ok "munged, slurmctld or slurmd did not start" "$tmp/munge/munged.log" "$tmp/slurmctld.log" "$tmp/slurmd.log"
	done_tap
fi

# node_is RE SECONDS: wait until "State=... Reason=..." of the node matches RE
node_line() {
	timeout 5 scontrol show node "$node" 2>/dev/null | sed -n 's/^ *State=\([^ ]*\).*/State=\1/p; s/^ *Reason=/Reason=/p' | tr '\n' ' '
}
node_is() {
	end=$(($(date +%s) + $2))
	while [ "$(date +%s)" -le $end ]; do
		line=$(node_line)
		echo "$line" | grep -Eq -- "$1" && return 0
		sleep 0.5
	done
	return 1
}
if node_is '^State=IDLE ' 30; then ok "the node is idle: $line"; else not_ok "the node did not come up idle: $line" $logs; done_tap; fi

# 3. a job's GPU process, attributed to the job
cat >"$tmp/job.sh" <<EOF
#!/bin/sh
FAKE_NVML_LIVE_DIR=$tmp/live exec sh $repo/tests/queue/gpuhog.sh 2000 60
EOF
job=$(timeout 10 sbatch --parsable --gres=gpu:1 -o "$tmp/job-%j.out" "$tmp/job.sh" 2>"$tmp/sbatch.err")
jobpid=''
i=0
while [ -n "$job" ] && [ $i -lt 100 ]; do
	for f in "$tmp"/live/[0-9]*; do [ -f "$f" ] && jobpid=${f##*/}; done
	[ -n "$jobpid" ] && break
	sleep 0.2
	i=$((i + 1))
done
if [ -n "$jobpid" ]; then ok "job $job runs on a GPU (pid $jobpid)"; else not_ok "job '$job' did not start its GPU process" "$tmp/sbatch.err" $logs; fi
if [ -n "$jobpid" ]; then
	fakenv timeout 20 "$bin" status --json >"$tmp/status.json" 2>"$tmp/status.err"
	got=$(python3 -c '
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except ValueError as e:
    print("not JSON: %s" % e); sys.exit(0)
p = [p for p in doc.get("processes", []) if p.get("pid") == int(sys.argv[2])]
print("no process %s" % sys.argv[2] if not p else "slurm %s" % json.dumps(p[0].get("slurm", "(no member)")))
' "$tmp/status.json" "$jobpid")
	case $got in
	"slurm {\"job\": \"$job\""*) ok "status --json: process $jobpid is of Slurm job $job ($got)" ;;
	"no process"* | "not JSON"*) not_ok "status --json: $got" "$tmp/status.json" "$tmp/status.err" ;;
	*) not_ok "status --json: process $jobpid has $got, want {\"job\": \"$job\"} (attribution: src/core/procinfo.c)" "$tmp/status.json" ;;
	esac
	: >"$tmp/serve.err"
	env GPUSCOPE_NVML="$repo/$lib" FAKE_NVML_SCENARIO="$tmp/gpu.scn" FAKE_NVML_LIVE_DIR="$tmp/live" \
		"$bin" serve --listen 127.0.0.1:0 2>"$tmp/serve.err" &
	serve_pid=$!
	url='' i=0
	while [ -z "$url" ] && [ $i -lt 100 ] && kill -0 "$serve_pid" 2>/dev/null; do
		url=$(sed -n 's|.*listening on \(https*://[^ ]*\).*|\1|p' "$tmp/serve.err")
		sleep 0.1
		i=$((i + 1))
	done
	got=''
	i=0
	while [ -n "$url" ] && [ $i -lt 20 ]; do
		curl -s -m 2 "${url%/}/metrics" >"$tmp/metrics" 2>/dev/null
		got=$(grep "hpc_job=\"$job\"" "$tmp/metrics" | head -n 1)
		[ -n "$got" ] && break
		sleep 0.5
		i=$((i + 1))
	done
	if [ -n "$got" ]; then
		ok "serve: a series with hpc_job=\"$job\": $(echo "$got" | cut -c 1-100)"
	elif [ -z "$url" ]; then
		not_ok "serve did not start" "$tmp/serve.err"
	else
		not_ok "serve: no series with hpc_job=\"$job\" (labels: src/front/prom.c)" "$tmp/metrics"
	fi
	kill "$serve_pid" 2>/dev/null
	wait "$serve_pid" 2>/dev/null
	serve_pid=''
	timeout 10 scancel "$job"
	if node_is '^State=IDLE ' 20 && grep -q "gpuscope-epilog.*job $job: GPUs 0 are clean" "$tmp/gpuscope-slurm.log"; then
		ok "after the job the epilog found its GPU clean"
	else
		not_ok "the epilog after job $job did not find GPU 0 clean ($line)" $logs
	fi
fi

# 4. the prolog refuses a GPU that a foreign process holds
FAKE_NVML_LIVE_DIR=$tmp/live sh tests/queue/gpuhog.sh 100 60 --gpu 1 &
hog_pid=$!
while [ ! -f "$tmp/live/$hog_pid" ] && kill -0 "$hog_pid" 2>/dev/null; do sleep 0.1; done
job=$(timeout 10 sbatch --parsable --gres=gpu:2 -o "$tmp/job-%j.out" --wrap 'sleep 1' 2>"$tmp/sbatch.err")
if node_is "DRAIN.*Reason=gpuscope-prolog: job $job: GPU 1: foreign process $hog_pid" 30; then
	ok "the prolog drained the node for a foreign process: $line"
else
	not_ok "the prolog did not refuse GPU 1 held by $hog_pid ($line)" $logs
fi
kill "$hog_pid" 2>/dev/null
wait "$hog_pid" 2>/dev/null
hog_pid=''
rm -f "$tmp/live"/[0-9]*
timeout 10 scancel "$job"
sleep 3 # health checks run: not theirs to resume
if node_line | grep -q "Reason=gpuscope-prolog"; then ok "the health check leaves the prolog's drain alone"; else not_ok "the prolog's drain went: $(node_line)" $logs; fi
timeout 10 scontrol update nodename="$node" state=resume
node_is '^State=IDLE ' 20 || not_ok "the node did not resume: $line" $logs

# 5. the health check: a lost GPU drains, its return resumes
scenario "$tmp/gpu.scn" 1
if node_is 'DRAIN.*Reason=gpuscope: health.gpu.lost: ' 30; then ok "GPU 1 lost: the health check drained the node: $line"; else not_ok "GPU 1 lost: no drain by the health check ($line)" $logs; fi
scenario "$tmp/gpu.scn"
if node_is '^State=IDLE ' 30 && ! node_line | grep -q DRAIN; then ok "GPU 1 back: the health check resumed the node: $line"; else not_ok "GPU 1 back: the node stays drained ($line)" $logs; fi

# a driver that hangs: doctor is given up on after GPUSCOPE_TIMEOUT, and the node drained
scenario "$tmp/gpu.scn" hang
if node_is 'DRAIN.*Reason=gpuscope: doctor.timeout: gpuscope doctor did not answer within 8 s' 40; then
	ok "a hung driver: the health check gave up on doctor and drained the node: $line"
else
	not_ok "a hung driver: no drain for doctor.timeout ($line)" $logs
fi
scenario "$tmp/gpu.scn"
if node_is '^State=IDLE ' 40 && ! node_line | grep -q DRAIN; then ok "the driver answers again: resumed"; else not_ok "the driver answers again: the node stays drained ($line)" $logs; fi

# 6. an admin's drain stays, fault or none
timeout 10 scontrol update nodename="$node" state=drain reason="admin: new cables"
scenario "$tmp/gpu.scn" 1
sleep 5
scenario "$tmp/gpu.scn"
sleep 5
if node_line | grep -q "DRAIN.*Reason=admin: new cables" && grep -q "drained already by someone else" "$tmp/gpuscope-slurm.log"; then
	ok "an admin's drain is left alone through a fault and its end"
else
	not_ok "an admin's drain was changed: $(node_line)" $logs
fi
timeout 10 scontrol update nodename="$node" state=resume
node_is '^State=IDLE ' 20 || not_ok "the node did not resume: $line" $logs

# 7. the epilog drains a node whose GPU memory did not come back
cat >"$tmp/leak.sh" <<EOF
#!/bin/sh
FAKE_NVML_LIVE_DIR=$tmp/live exec sh $repo/tests/queue/gpuhog.sh 3000 1 --leak
EOF
job=$(timeout 10 sbatch --parsable --gres=gpu:1 -o "$tmp/job-%j.out" "$tmp/leak.sh" 2>"$tmp/sbatch.err")
if node_is "DRAIN.*Reason=gpuscope-epilog: job $job: GPU 0: 3600 MiB still in use after 3 s" 40; then
	ok "the epilog drained the node for memory that did not come back: $line"
else
	not_ok "job $job leaked 3000 MiB: no drain by the epilog ($line)" $logs
fi
rm -f "$tmp/live"/[0-9]*

done_tap
