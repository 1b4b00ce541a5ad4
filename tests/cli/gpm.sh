#!/bin/sh
# GPM profiling metrics (docs/profiling.md) end to end on the fake NVML's
# tests/scenarios/gpm.scn: two H100s at 100 % utilisation, one training and
# one spinning on one SM, and an A100 without GPM. status shows a profiling
# line for the H100s only, status --json has the metrics with rates in
# bytes/s (NVML's MiB/s converted), watch shows SM activity and tensor
# (smact, tensor) next to utilisation, query has the prof.* fields, serve exports
# gpuscope_gpu_prof_*, and the samples are freed at exit. Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
bin=$O/gpuscope
lib=$O/fakenvml/current/libnvidia-ml.so.1
if [ ! -x "$bin" ] || [ ! -f "$lib" ] || ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP needs $bin, $lib and python3"
	exit 0
fi
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/# /' "$f" | head -n 30; done
}
check() { # check "what" command...; on failure shows $tmp/out and $tmp/err
	what=$1; shift
	if "$@"; then ok "$what"; else not_ok "$what" "$tmp/out" "$tmp/err"; fi
}
fake="GPUSCOPE_PROC_ROOT=tests/fixtures/proc GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty
GPUSCOPE_PASSWD=tests/fixtures/passwd TZ=UTC GPUSCOPE_NVML=$lib FAKE_NVML_TIME=0
FAKE_NVML_EPOCH=1767225600 GPUSCOPE_CLOCK=1767225600 FAKE_NVML_SCENARIO=tests/scenarios/gpm.scn"
# shellcheck disable=SC2086
run() { env $fake "$@"; }
# the profiling line of GPU $1 in $tmp/out (the line after its PCIe line)
prof_line() {
	awk -v g="$1" '$1 == g && /NVIDIA/ { on = 1; next } on && /^  [0-9]/ { exit }
		on && /SM act/ { print; exit }' "$tmp/out"
}

# 1. status: a profiling line for each H100, none for the A100
run "$bin" status --no-processes >"$tmp/out" 2>"$tmp/err"
check "status: exit 0" test $? = 0
check "status: GPU 0 (training): SM act 93%, Tensor 63%, DRAM 48%" \
	sh -c "echo '$(prof_line 0)' | grep -q 'SM act 93%  Occ 42%  Tensor 63%  DRAM 48%'"
check "status: GPU 1 (a spinning thread): Util 100% but SM act 1%, Tensor 0%" \
	sh -c "echo '$(prof_line 1)' | grep -q 'SM act 1%   Occ 0%   Tensor 0%'"
check "status: traffic line, MiB/s as bytes/s, NVLink unknown where N/A" \
	sh -c "grep -q 'PCIe TX 812M/s RX 3.0G/s  NVLink TX 115G/s RX 119G/s' '$tmp/out' &&
		grep -q 'PCIe TX 512K/s RX 205K/s  NVLink TX - RX -' '$tmp/out'"
check "status: no profiling line for the A100 (no GPM)" \
	test "$(grep -c 'SM act' "$tmp/out")" = 2

# 2. status --json: the values, bytes per second, null without GPM
run "$bin" status --json >"$tmp/out" 2>"$tmp/err"
cat >"$tmp/want.py" <<'EOF'
import json, sys
g = json.load(open(sys.argv[1]))["gpus"]
MiB = 1 << 20
want = [
    {"prof_graphics_active_percent": 99.5, "prof_sm_active_percent": 93.2,
     "prof_sm_occupancy_percent": 41.5, "prof_tensor_active_percent": 62.8,
     "prof_dram_active_percent": 47.5, "prof_fp64_active_percent": 0,
     "prof_fp32_active_percent": 11.2, "prof_fp16_active_percent": 8.5,
     "prof_pcie_tx_bytes_per_second": 812.5 * MiB, "prof_pcie_rx_bytes_per_second": 3100 * MiB,
     "prof_nvlink_tx_bytes_per_second": 118000 * MiB,
     "prof_nvlink_rx_bytes_per_second": 121500 * MiB},
    {"prof_sm_active_percent": 0.8, "prof_graphics_active_percent": 100,
     "prof_nvlink_tx_bytes_per_second": None, "prof_pcie_rx_bytes_per_second": 0.2 * MiB},
    {k: None for k in g[0] if k.startswith("prof_")},
]
bad = ["GPU %d %s: %r, want %r" % (i, k, g[i].get(k, "missing"), v)
       for i, w in enumerate(want) for k, v in w.items()
       if not (g[i].get(k, "missing") == v or (v is not None and isinstance(g[i].get(k), (int, float))
               and abs(g[i][k] - v) <= 1e-6 * abs(v)))]
if len(want[2]) != 12:
    bad.append("%d prof_ keys, want 12" % len(want[2]))
sys.exit("\n".join(bad) or None)
EOF
check "status --json: the metrics of gpm.scn, rates in bytes/s, null on the A100" \
	sh -c "python3 '$tmp/want.py' '$tmp/out' 2>'$tmp/err'"

# 3. watch: smact and tensor next to utilisation
run "$bin" watch -c 1 --fields utilization.gpu,prof.sm_active,prof.tensor_active,utilization.memory \
	>"$tmp/out" 2>"$tmp/err"
check "watch --fields ...prof.sm_active,prof.tensor_active: labelled smact, tensor" \
	sh -c "head -n 1 '$tmp/out' | grep -q 'gpu   gpu  smact  tensor   mem'"
check "watch: 93 and 63 on GPU 0, 1 and 0 on GPU 1, - on the A100" \
	sh -c "sed -n 3p '$tmp/out' | grep -Eq '^ +00:00:00 +0 +100 +93 +63 ' &&
		sed -n 4p '$tmp/out' | grep -Eq '^ +00:00:00 +1 +100 +1 +0 ' &&
		sed -n 5p '$tmp/out' | grep -Eq '^ +00:00:00 +2 +100 +- +- '"

# 4. query: the prof.* fields
run "$bin" query --query-gpu=index,prof.sm_active,prof.tensor_active,prof.pcie.rx,prof.nvlink.tx \
	--format=csv,noheader >"$tmp/out" 2>"$tmp/err"
check "query: prof.* fields, rates in MiB/s, [N/A] without GPM" \
	sh -c "printf '%s\n' '0, 93 %, 63 %, 3100 MiB/s, 118000 MiB/s' '1, 1 %, 0 %, 0 MiB/s, [N/A]' \
		'2, [N/A], [N/A], [N/A], [N/A]' | cmp -s - '$tmp/out'"

# 5. every sample allocated is freed, none is used after it is freed
run FAKE_NVML_LOG="$tmp/log" "$bin" status >/dev/null 2>"$tmp/err"
check "the fake's log: 4 samples allocated (2 per H100) and 4 freed, all calls succeeded" \
	sh -c "[ \$(grep -c '^nvmlGpmSampleAlloc - 0$' '$tmp/log') = 4 ] &&
		[ \$(grep -c '^nvmlGpmSampleFree - 0$' '$tmp/log') = 4 ] &&
		! grep '^nvmlGpm' '$tmp/log' | grep -v ' 0$'"

# 6. serve: gpuscope_gpu_prof_* series
if command -v curl >/dev/null 2>&1; then
	# not through run(): $! must be gpuscope itself, for the kill below
	# shellcheck disable=SC2086
	env $fake "$bin" serve --listen 127.0.0.1:0 2>"$tmp/err" &
	pid=$!
	url="" i=0
	while [ -z "$url" ] && [ $i -lt 100 ] && kill -0 "$pid" 2>/dev/null; do
		sleep 0.1
		url=$(sed -n 's|.*listening on \(https*://[^ ]*\).*|\1|p' "$tmp/err")
		i=$((i + 1))
	done
	got=0 i=0
	while [ -n "$url" ] && [ $i -lt 100 ]; do
		curl -s -m 2 "${url}metrics" >"$tmp/out" 2>/dev/null
		grep -q '^gpuscope_gpu_prof_sm_active_ratio{.*} 0.932' "$tmp/out" && { got=1; break; }
		sleep 0.1
		i=$((i + 1))
	done
	check "serve: gpuscope_gpu_prof_sm_active_ratio 0.932 and tensor 0.628 on GPU 0" \
		sh -c "[ $got = 1 ] && grep -q '^gpuscope_gpu_prof_tensor_active_ratio{.*} 0.628' '$tmp/out'"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	pid=""
else
	[ -n "${GPUSCOPE_NO_SKIP:-}" ] && not_ok "serve: curl is not installed"
	echo "ok $((n = n + 1)) - serve # SKIP needs curl"
fi

echo "1..$n"
[ "$fail" = 0 ]
