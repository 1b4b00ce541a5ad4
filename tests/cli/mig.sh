#!/bin/sh
# MIG devices (tests/scenarios/mig.scn: an H100 split into two 3g.40gb
# instances): status lists them in a "MIG devices" table under the GPU and
# their processes as GPU:MIG, JSON as devices with a "mig" object, -i takes
# "G:M" and MIG UUIDs, and the fake refuses a [mig] section without a GPU
# instance id. Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
bin=$O/gpuscope
if [ ! -x "$bin" ]; then
	echo "1..0 # SKIP needs $bin"
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
check() { # check DESCRIPTION FILE... -- a test command
	d=$1; shift
	if "$@"; then ok "$d"; else not_ok "$d" "$tmp/out" "$tmp/err"; fi
}
fixed() {
	GPUSCOPE_NVML=$O/fakenvml/current/libnvidia-ml.so.1 FAKE_NVML_TIME=0 FAKE_NVML_EPOCH=1767225600 \
		GPUSCOPE_CLOCK=1767225600 GPUSCOPE_PROC_ROOT=tests/fixtures/proc TZ=UTC \
		GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty GPUSCOPE_PASSWD=tests/fixtures/passwd \
		FAKE_NVML_SCENARIO=${SCN:-tests/scenarios/mig.scn} "$@"
}

fixed "$bin" status >"$tmp/out" 2>"$tmp/err"
check "status exits 0" test $? = 0
check "one GPU block: MIG devices are not GPUs" \
	test "$(grep -c '^  [0-9]  NVIDIA' "$tmp/out")" = 1
check "a MIG devices table with GPU, GI, CI and MIG columns" \
	grep -q '^MIG devices  GPU  GI  CI  MIG  Profile     SM  Memory-Usage$' "$tmp/out"
check "MIG device 0: GPU 0, GI 1, CI 0, its profile and memory" \
	grep -Eq '^ +0 +1 +0 +0  3g\.40gb +60  20013 / 40448 MiB$' "$tmp/out"
check "MIG device 1: GPU 0, GI 2, CI 0" \
	grep -Eq '^ +0 +2 +0 +1  3g\.40gb +60  9013 / 40448 MiB$' "$tmp/out"
check "the process of GPU instance 1 is on 0:0" grep -Eq '^0:0 +1001 C ' "$tmp/out"
check "the process of GPU instance 2 is on 0:1" grep -Eq '^0:1 +2002 C ' "$tmp/out"

fixed "$bin" status --json >"$tmp/out" 2>"$tmp/err"
check "status --json exits 0" test $? = 0
if command -v python3 >/dev/null 2>&1; then
	check "JSON: MIG devices with parent, instance ids and profile; processes with mig_device" \
		python3 - "$tmp/out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
g = d["gpus"]
assert len(g) == 3, len(g)
assert g[0]["mig"] is None and g[0]["mig_mode"] is True
m = g[1]["mig"]
assert m == {"parent": 0, "gpu_instance": 1, "compute_instance": 0, "profile": "3g.40gb",
             "sm_count": 60}, m
assert g[2]["mig"]["gpu_instance"] == 2 and g[2]["index"] == 1
assert g[1]["uuid"].startswith("MIG-") and g[1]["spec"] is None
assert g[1]["memory_total_bytes"] == 40448 * 1048576, g[1]["memory_total_bytes"]
assert g[1]["utilization_gpu_percent"] is None
p = {x["pid"]: x for x in d["processes"]}
assert p[1001]["gpu_index"] == 0 and p[1001]["gpu_uuid"] == g[0]["uuid"]
assert p[1001]["mig_device"] == {"index": 0, "uuid": g[1]["uuid"]}, p[1001]["mig_device"]
assert p[2002]["mig_device"]["index"] == 1
EOF
else
	not_ok "JSON checks need python3 (scripts/install-deps.sh installs it)"
fi

fixed "$bin" query --query-gpu=index,uuid,count --format=csv,noheader >"$tmp/out" 2>"$tmp/err"
check "query --query-gpu: one row, count 1 (MIG devices are not GPUs, as in nvidia-smi)" \
	test "$(cat "$tmp/out")" = "0, GPU-44444444-5555-6666-7777-888888888888, 1"
fixed "$bin" query --query-compute-apps=pid,gpu_uuid --format=csv,noheader >"$tmp/out" 2>"$tmp/err"
check "query --query-compute-apps: a MIG process on its GPU's UUID" \
	grep -qx "2002, GPU-44444444-5555-6666-7777-888888888888" "$tmp/out"

fixed timeout 20 "$bin" watch -c 1 >"$tmp/out" 2>"$tmp/err"
check "watch: a row per MIG device, named GPU:MIG, with its memory" \
	sh -c "grep -Eq '^  00:00:00  0:1 .* 9013 +40448 ' '$tmp/out' &&
		test \"\$(grep -c '^  00:00:00 ' '$tmp/out')\" = 3"

fixed "$bin" fit llama-3-8b >"$tmp/out" 2>"$tmp/err"
check "fit: the MIG devices are the targets (CUDA runs on them), not the GPU" \
	sh -c "grep -q '^0:0 NVIDIA H100' '$tmp/out' && grep -q '^0:1 NVIDIA H100' '$tmp/out' &&
		! grep -q '^0 NVIDIA H100' '$tmp/out'"

fixed "$bin" status -i 0:1 >"$tmp/out" 2>"$tmp/err"
check "-i 0:1: MIG device 1 and its GPU" \
	sh -c "grep -Eq '^ +0 +2 +0 +1  3g' '$tmp/out' && ! grep -Eq '^ +0 +1 +0 +0  3g' '$tmp/out'"
check "-i 0:1: only its own process" \
	sh -c "grep -q ' 2002 ' '$tmp/out' && ! grep -q ' 1001 ' '$tmp/out'"
fixed "$bin" status -i MIG-6e1c8b0a >"$tmp/out" 2>"$tmp/err"
check "-i MIG-<uuid prefix> selects that MIG device" grep -Eq '^ +0 +2 +0 +1  3g' "$tmp/out"
fixed "$bin" status -i 1 >"$tmp/out" 2>"$tmp/err"
check "-i 1 is no GPU: MIG devices have no index of their own (exit 2)" \
	sh -c "test $? = 2 && grep -q 'from 0 to 0' '$tmp/err'"

printf '[gpu]\nmig_mode = 1\n[mig]\nprofile = 1g.10gb\n' >"$tmp/bad.scn"
SCN=$tmp/bad.scn fixed "$bin" status >"$tmp/out" 2>"$tmp/err"
check "the fake refuses a [mig] section without gpu_instance, naming the line" \
	grep -q "bad.scn:3: \[mig\] needs a 'gpu_instance' key" "$tmp/err"

echo "1..$n"
[ "$fail" = 0 ]
