#!/bin/sh
# The kubelet's pod-resources API end to end: a real gRPC server (grpcio,
# from PyPI into $O/podres-venv, its stubs generated from tests/podres/
# api.proto by grpcio-tools) plays the kubelet on a unix socket under a
# temporary root, and `gpuscope status --json` on the fake NVML's idle
# GPUs (tests/scenarios/queue.scn) shows the pods it allocated them to: by
# UUID, by a time-sliced replica's "UUID::N", none for the others. Faults:
# a failed gRPC status is one note; a server that accepts and never
# answers costs its deadline and one note, not a hang; no socket is
# neither note nor allocation; a socket this user may not use is one note
# (as root: gpuscope run as nobody). Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
bin=$O/gpuscope
fake=$O/fakenvml/current/libnvidia-ml.so.1
if [ ! -x "$bin" ] || [ ! -f "$fake" ]; then
	echo "1..0 # SKIP needs $bin and $fake"
	exit 0
fi
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
# shellcheck source=tests/skip.inc
. ./tests/skip.inc
tmp=$(mktemp -d)
srv=""
cleanup() {
	[ -z "$srv" ] || kill "$srv" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/# /' "$f" | head -n 20; done
}

# the Python side, made once: grpcio and its code generator, pinned
venv=$O/podres-venv
py=""
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import grpc, grpc_tools, google.protobuf' 2>/dev/null; then
	py=$venv/bin/python
elif python3 -m venv "$venv" >"$tmp/venv.log" 2>&1 &&
	"$venv/bin/pip" install -q --disable-pip-version-check "grpcio==1.85.3" "grpcio-tools==1.85.1" "protobuf==7.36.2" >>"$tmp/venv.log" 2>&1; then
	py=$venv/bin/python
fi
if [ -z "$py" ]; then
	sed 's/^/# /' "$tmp/venv.log" 2>/dev/null | tail -n 5
	skip_missing "grpcio could not be installed into $venv (pip, network)"
	echo "1..$n"
	[ "$fail" -eq 0 ]
	exit
fi
mkdir -p "$tmp/stubs" "$tmp/root/var/lib/kubelet/pod-resources"
if ! "$py" -m grpc_tools.protoc -I tests/podres --python_out="$tmp/stubs" tests/podres/api.proto >"$tmp/protoc.log" 2>&1; then
	not_ok "stubs generated from tests/podres/api.proto" "$tmp/protoc.log"
	echo "1..$n"
	exit 1
fi
sock=$tmp/root/var/lib/kubelet/pod-resources/kubelet.sock

# start ARGS...: the server on $sock, waiting until it listens
start() {
	rm -f "$sock"
	"$py" tests/podres/server.py "$tmp/stubs" "$sock" "$@" >"$tmp/server.out" 2>"$tmp/server.err" &
	srv=$!
	i=0
	# (a loaded machine takes seconds to start Python and import grpcio)
	while [ $i -lt 300 ] && ! grep -q ready "$tmp/server.out" 2>/dev/null; do
		sleep 0.2
		i=$((i + 1))
	done
	grep -q ready "$tmp/server.out" ||
		not_ok "the server listens ($*) after $i tries" "$tmp/server.out" "$tmp/server.err"
}
stop() {
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	srv=""
}
# status: gpuscope status --json under the root; sets $rc, $secs
status() {
	t0=$(date +%s.%N)
	GPUSCOPE_ROOT=$tmp/root GPUSCOPE_PROC_ROOT=tests/fixtures/proc GPUSCOPE_SYSFS_ROOT=$tmp/root/sys \
		GPUSCOPE_NVML=$fake FAKE_NVML_SCENARIO=tests/scenarios/queue.scn \
		timeout -k 5 30 "$bin" status --json >"$tmp/out.json" 2>"$tmp/err"
	rc=$?
	secs=$(echo "$t0 $(date +%s.%N)" | awk '{ printf "%.1f", $2 - $1 }')
}
# check WHAT PYTHON-EXPRESSION: true of d (the document), alloc(i) (GPU i's allocated_to)
check() {
	if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
alloc = lambda i: d["gpus"][i]["allocated_to"]
sys.exit(0 if eval(sys.argv[2]) else 1)' "$tmp/out.json" "$2" 2>"$tmp/chk"; then
		ok "$1"
	else
		not_ok "$1 ($2)" "$tmp/out.json" "$tmp/chk"
	fi
}

cat >"$tmp/pods.json" <<'JSON'
[
 {"name": "train-0", "namespace": "ml", "containers": [
   {"name": "sidecar"},
   {"name": "trainer", "devices": [
     {"resource": "example.com/nic", "ids": ["GPU-5a1e0001-0000-4000-8000-000000000001"]},
     {"resource": "nvidia.com/gpu", "ids": ["GPU-5a1e0000-0000-4000-8000-000000000000"]}]}]},
 {"name": "notebook-5d8f", "namespace": "research", "containers": [
   {"name": "jupyter", "devices": [
     {"resource": "nvidia.com/gpu", "ids": ["GPU-5a1e0002-0000-4000-8000-000000000002::1"]}]}]},
 {"name": "web", "namespace": "default", "containers": [{"name": "nginx"}]}
]
JSON

start "$tmp/pods.json"
status
if [ "$rc" -eq 0 ]; then ok "status with a kubelet (exit 0)"; else not_ok "status with a kubelet: exit $rc" "$tmp/err"; fi
check "GPU 0 is idle: no processes" 'not [p for p in d.get("processes", []) if p["gpu_index"] == 0]'
check "GPU 0 allocated by UUID to ml/train-0/trainer" \
	'alloc(0) == {"namespace": "ml", "pod": "train-0", "container": "trainer"}'
check "GPU 1: a non-GPU resource naming its UUID is not an allocation" 'alloc(1) is None'
check "GPU 2 allocated through a time-sliced replica" \
	'alloc(2) == {"namespace": "research", "pod": "notebook-5d8f", "container": "jupyter"}'
check "GPU 3 unallocated" 'alloc(3) is None'
check "no note" 'd["notes"] == []'
stop

start --status 14
status
check "a failed gRPC status: one note naming it" \
	'[x for x in d["notes"] if "gRPC status 14: pod resources are unavailable" in x] and alloc(0) is None'
stop

start --hang
status
if [ "$rc" -eq 0 ] && awk -v s="$secs" 'BEGIN { exit !(s < 5.0) }'; then
	ok "a kubelet that never answers: status returns in $secs s"
else
	not_ok "a kubelet that never answers: exit $rc after $secs s" "$tmp/err"
fi
check "a kubelet that never answers: one note" \
	'len([x for x in d["notes"] if "did not answer within 2.0 s" in x]) == 1'
stop

# a socket this user may not connect to (root's, mode 0600; gpuscope run as nobody)
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
	start "$tmp/pods.json"
	chmod 0600 "$sock"
	chmod 0755 "$tmp" "$tmp/root"
	GPUSCOPE_ROOT=$tmp/root GPUSCOPE_PROC_ROOT=tests/fixtures/proc GPUSCOPE_SYSFS_ROOT=$tmp/root/sys \
		GPUSCOPE_NVML=$fake FAKE_NVML_SCENARIO=tests/scenarios/queue.scn \
		timeout -k 5 30 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$bin" status --json >"$tmp/out.json" 2>"$tmp/err"
	check "permission denied: one note saying so" \
		'[x for x in d["notes"] if "permission denied" in x and "kubelet.sock" in x] and alloc(0) is None'
	stop
else
	ok "# SKIP permission denied needs root (to make a socket another user cannot use) and setpriv"
fi

rm -f "$sock"
status
check "no socket: no note, no allocation" 'd["notes"] == [] and alloc(0) is None'

echo "1..$n"
[ "$fail" -eq 0 ]
