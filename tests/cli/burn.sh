#!/bin/sh
# gpuscope burn end to end. Usage errors exit 2 with one line; no device
# (no libcuda, no OpenCL loader) exits 3 with one line. On PoCL for real
# (--opencl-cpu --duration 3 --json): gpuscope.burn/1, GEMMs compared with
# nothing wrong, the reference checked on the host, memtest patterns with
# no bad word, a pass; --memtest alone; every key it prints is in
# docs/burn.md; SIGTERM stops it with 143 and the verdict so far. On the fake
# libcuda.so.1 (tests/fakecuda): one corrupted element is exit 1 and the
# count; a device whose launch fails is reported lost while the other
# finishes and passes; -i picks one; with the fake NVML the sensors are
# matched by UUID and PCI bus id and --record writes a recording. With the
# fake cuBLASLt: bf16, tf32, fp16 and tensor pass with a rate, its corrupt
# fault is exit 1 and the count, a 7.5 device refuses bf16 with the reason
# while the other burns, a missing library is the reason and exit 3; PoCL
# refuses tensor precisions. Prints TAP.
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
# shellcheck source=tests/skip.inc
. ./tests/skip.inc
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/# /' "$f" | head -n 30; done
}
expect() { # expected exit status, what, the command; output in $tmp/out, $tmp/err
	want=$1 what=$2; shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq "$want" ]; then ok "$what (exit $rc)"; else not_ok "$what: exit $rc, wanted $want" "$tmp/out" "$tmp/err"; fi
}
one_line() {
	if [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q '^gpuscope: ' "$tmp/err"; then ok "$1: one line on stderr"; else not_ok "$1: not one error line" "$tmp/err"; fi
}
first_line() { # a usage error: the reason first (the usage may follow)
	if head -n 1 "$tmp/err" | grep -q '^gpuscope: '; then ok "$1: the reason first"; else not_ok "$1: no reason first" "$tmp/err"; fi
}
# a python3 check of $tmp/out's JSON: what, then the expression (d is the document)
json_ok() {
	what=$1 expr=$2
	if python3 -c "import json,sys; d=json.load(open('$tmp/out')); g=lambda d: d['devices'][0]['gemm']; sys.exit(0 if ($expr) else 1)" 2>"$tmp/py"; then
		ok "$what"
	else
		not_ok "$what" "$tmp/out" "$tmp/py"
	fi
}
nodev="env GPUSCOPE_CUDA=/nonexistent GPUSCOPE_OPENCL=/nonexistent GPUSCOPE_NVML=/nonexistent"

# 1. usage errors: one line, exit 2, before any device is opened
for case in "--duration 0|--duration 0" "--duration abc|--duration abc" "--precision fp8|fp8 (no burn precision)" \
	"--precision int3|an unknown precision" "--memtest --no-memtest|--memtest with --no-memtest" \
	"--frobnicate|unknown option" "extra|an extra argument" "--size 5|--size 5" "--duration|--duration without a value"; do
	args=${case%%|*} what=${case#*|}
	# shellcheck disable=SC2086
	expect 2 "refused: $what" $nodev "$bin" burn $args
	first_line "$what"
done
expect 0 "burn --help" "$bin" burn --help
if grep -q -- '--memtest' "$tmp/out"; then ok "--help lists --memtest"; else not_ok "--help lists --memtest" "$tmp/out"; fi

# 2. no device at all
# shellcheck disable=SC2086
expect 3 "no device: exit 3" $nodev "$bin" burn --duration 2
one_line "no device"
if grep -q 'no device to burn' "$tmp/err"; then ok "no device: says so"; else not_ok "no device: says so" "$tmp/err"; fi

# 3. PoCL, for real
pocl() { GPUSCOPE_CUDA=/nonexistent GPUSCOPE_NVML=/nonexistent "$bin" burn --opencl-cpu "$@"; }
pocl --duration 3 --json >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 3 ] && grep -q 'no device to burn' "$tmp/err"; then
	skip_missing "no OpenCL CPU device (Debian: pocl-opencl-icd, ocl-icd-libopencl1)"
else
	if [ "$rc" -eq 0 ]; then ok "PoCL: --duration 3 --json passes (exit 0)"; else not_ok "PoCL: exit $rc" "$tmp/out" "$tmp/err"; fi
	json_ok "PoCL: schema gpuscope.burn/1, verdict pass" "d['schema'] == 'gpuscope.burn/1' and d['verdict'] == 'pass'"
	json_ok "PoCL: GEMMs compared, none wrong" \
		"all(x['gemm']['gemms'] > 0 and x['gemm']['wrong_elements'] == 0 and x['gemm']['tflops'] > 0 for x in d['devices'])"
	json_ok "PoCL: the reference checked on 64 elements" \
		"all(x['gemm']['reference']['checked'] and x['gemm']['reference']['sampled'] == 64 and x['gemm']['reference']['wrong'] == 0 for x in d['devices'])"
	json_ok "PoCL: memtest patterns, no bad word" \
		"all(x['memtest']['patterns'] >= 2 and x['memtest']['bad_words'] == 0 and x['memtest']['words_checked'] > 0 for x in d['devices'])"
	json_ok "PoCL: a CPU device, its memory within 64 MiB and a few" \
		"all(x['cpu'] and x['memory_bytes'] <= 72 * 2**20 for x in d['devices'])"
	json_ok "PoCL: it ran about its duration" "2.5 <= d['elapsed_seconds'] < 30 and not d['stopped']"
	python3 - "$tmp/out" docs/burn.md >"$tmp/keys" 2>&1 <<'EOF'
import json, re, sys
doc = open(sys.argv[2]).read()
keys = set()
def walk(v):
    if isinstance(v, dict):
        for k, x in v.items():
            keys.add(k)
            walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
walk(json.load(open(sys.argv[1])))
missing = sorted(k for k in keys if not re.search(r'`' + re.escape(k) + r'`', doc))
print(" ".join(missing))
sys.exit(1 if missing else 0)
EOF
	if [ $? -eq 0 ]; then ok "every key of the document is in docs/burn.md"; else not_ok "keys missing from docs/burn.md" "$tmp/keys"; fi
	expect 0 "PoCL: --memtest alone" pocl --duration 2 --memtest --json
	json_ok "--memtest: no GEMM, patterns checked" \
		"all(x['gemm'] is None and x['memtest']['patterns'] > 0 for x in d['devices']) and d['memtest'] == 'only'"
	expect 0 "PoCL: the text report" pocl --duration 2 --no-memtest
	if grep -q '^verdict: PASS' "$tmp/out"; then ok "text: verdict PASS"; else not_ok "text: verdict PASS" "$tmp/out"; fi

	# 4. a signal (SIGTERM: a script's background job ignores SIGINT): 143, the verdict so far
	GPUSCOPE_CUDA=/nonexistent GPUSCOPE_NVML=/nonexistent "$bin" burn --opencl-cpu --duration 60 --json >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	sleep 3
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	if [ "$rc" -eq 143 ]; then ok "SIGTERM: exit 143"; else not_ok "SIGTERM: exit $rc, wanted 143" "$tmp/out" "$tmp/err"; fi
	json_ok "SIGTERM: the document says stopped, by which signal" "d['stopped'] and d['signal'] == 15 and d['elapsed_seconds'] < 30"
fi

# 5. the fake libcuda.so.1
fake=$O/fakecuda/libcuda.so.1
if [ ! -f "$fake" ]; then
	echo "ok $((n = n + 1)) # SKIP no $fake (mk/fakecuda.mk builds it)"
else
	cat >"$tmp/corrupt.scn" <<'EOF'
[system]
[device]
name = NVIDIA H100 80GB HBM3
memory = 1073741824
[device]
name = NVIDIA H100 80GB HBM3
memory = 1073741824
fault = corrupt gs_matmul_tiled 100 20 5
EOF
	cat >"$tmp/lost.scn" <<'EOF'
[system]
[device]
name = NVIDIA H100 80GB HBM3
memory = 1073741824
uuid = GPU-0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0
pci_bus_id = 0000:18:00.0
[device]
name = NVIDIA H100 80GB HBM3
memory = 1073741824
pci_bus_id = 0000:2a:00.0
fault = launch_failed gs_matmul_tiled 30
EOF
	fk() { scn=$1; shift; GPUSCOPE_CUDA=$fake GPUSCOPE_FAKECUDA_SCENARIO=$scn GPUSCOPE_OPENCL=/nonexistent \
		GPUSCOPE_NVML=/nonexistent "$bin" burn --duration 2 --size 64 --memory 4M "$@"; }
	expect 1 "fake CUDA: one corrupted element is a FAIL" fk "$tmp/corrupt.scn" --json
	json_ok "the corrupted element counted on its device only" \
		"d['devices'][1]['gemm']['wrong_elements'] == 1 and d['devices'][1]['verdict'] == 'fail' and d['devices'][0]['verdict'] == 'pass' and d['verdict'] == 'fail'"
	expect 1 "fake CUDA: a failed launch is a lost device" fk "$tmp/lost.scn" --json
	json_ok "lost: reported with its error, the other device finished" \
		"d['devices'][1]['state'] == 'lost' and 'CUDA_ERROR_LAUNCH_FAILED' in d['devices'][1]['error'] and d['devices'][0]['verdict'] == 'pass' and d['devices'][0]['gemm']['gemms'] > 0"
	if grep -q 'cuda:1.*lost.*CUDA_ERROR_LAUNCH_FAILED' "$tmp/err"; then ok "lost: a line on stderr"; else not_ok "lost: a line on stderr" "$tmp/err"; fi
	expect 0 "-i cuda:0 burns the healthy one alone" fk "$tmp/lost.scn" -i cuda:0 --json
	json_ok "-i: one device" "len(d['devices']) == 1 and d['devices'][0]['id'] == 'cuda:0'"
	expect 0 "-i by PCI bus id" fk "$tmp/lost.scn" -i 0000:18:00.0 --json
	expect 2 "-i naming no device" fk "$tmp/lost.scn" -i cuda:7
	one_line "-i naming no device"
	fnvml=$O/fakenvml/current/libnvidia-ml.so.1
	if [ -f "$fnvml" ]; then
		GPUSCOPE_CUDA=$fake GPUSCOPE_FAKECUDA_SCENARIO=$tmp/lost.scn GPUSCOPE_OPENCL=/nonexistent \
			GPUSCOPE_NVML=$fnvml FAKE_NVML_SCENARIO=tests/scenarios/h100x2.scn \
			"$bin" burn --duration 3 --size 64 --memory 4M -i cuda:0 --json --record "$tmp/r.rec" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		if [ "$rc" -eq 0 ]; then ok "with the fake NVML: pass (exit 0)"; else not_ok "with the fake NVML: exit $rc" "$tmp/out" "$tmp/err"; fi
		json_ok "sensors matched by UUID: GPU 0, its power and throttle reason" \
			"d['devices'][0]['sensors']['gpu_index'] == 0 and d['devices'][0]['sensors']['power_max_w'] > 0 and 'sw_power_cap' in d['devices'][0]['sensors']['throttle_reasons']"
		json_ok "health checked over the samples, the GPU not burnt left out" \
			"d['health']['checked'] and d['health']['samples'] >= 2 and d['health']['worst'] != 'error'"
		if [ -s "$tmp/r.rec" ] && "$bin" replay "$tmp/r.rec" info >/dev/null 2>&1; then ok "--record: a recording replay reads"; else not_ok "--record: no recording" "$tmp/err"; fi
	fi

	# 6. tensor precisions through the fake cuBLASLt (tests/fakecublaslt)
	lt=$O/fakecublaslt/libcublasLt.so.13
	if [ ! -f "$lt" ]; then
		echo "ok $((n = n + 1)) # SKIP no $lt (mk/fakecublaslt.mk builds it)"
	else
		cat >"$tmp/tc.scn" <<'EOF'
[system]
[device]
name = NVIDIA H100 80GB HBM3
memory = 1073741824
[device]
name = Tesla T4
memory = 1073741824
compute_capability = 7.5
EOF
		echo 'corrupt = 0 0' >"$tmp/ltbad.scn"
		: >"$tmp/ltok.scn"
		ft() { ltscn=$1; shift; GPUSCOPE_CUBLASLT=$PWD/$lt GPUSCOPE_FAKECUBLASLT_SCENARIO=$ltscn fk "$tmp/tc.scn" "$@"; }
		for p in bf16 tf32 fp16; do
			expect 0 "fake cuBLASLt: --precision $p passes" ft "$tmp/ltok.scn" -i cuda:0 --precision $p --json
			json_ok "$p: GEMMs through cuBLASLt compared, none wrong, a rate, the reference checked" \
				"d['precision'] == '$p' and d['method']['gemm_kernel'] == 'cublasLtMatmul' and g(d)['precision'] == '$p' and g(d)['library'].startswith('cuBLASLt ') and g(d)['gemms'] > 0 and g(d)['wrong_elements'] == 0 and g(d)['tflops'] > 0 and g(d)['reference']['checked'] and g(d)['reference']['wrong'] == 0 and d['verdict'] == 'pass'"
		done
		expect 0 "fake cuBLASLt: --precision tensor passes (text)" ft "$tmp/ltok.scn" -i cuda:0 --precision tensor
		if grep -q 'precision  bf16, cuBLASLt' "$tmp/out" && grep -q 'TFLOP/s; 0 wrong' "$tmp/out"; then ok "tensor: bf16 on sm_90, its rate"; else not_ok "tensor: not bf16 or no rate" "$tmp/out"; fi
		expect 1 "fake cuBLASLt: a corrupted element (corrupt = 0 0) is a FAIL" ft "$tmp/ltbad.scn" -i cuda:0 --precision bf16 --json
		json_ok "corrupt: the reference's wrong element counted" \
			"g(d)['reference']['wrong'] == 1 and d['devices'][0]['verdict'] == 'fail'"
		expect 1 "corrupt, text: FAIL" ft "$tmp/ltbad.scn" -i cuda:0 --precision bf16
		if grep -q 'WRONG (1 of them)' "$tmp/out"; then ok "corrupt, text: the count"; else not_ok "corrupt, text: no count" "$tmp/out"; fi
		expect 3 "bf16 on a 7.5 device: could not run" ft "$tmp/ltok.scn" -i cuda:1 --precision bf16
		if grep -q 'cuda:1.*bf16 needs tensor cores of compute capability 8.0 or later; this device is 7.5' "$tmp/err"; then ok "bf16 on 7.5: the reason"; else not_ok "bf16 on 7.5: no reason" "$tmp/err"; fi
		expect 0 "tensor on both: each its best" ft "$tmp/ltok.scn" --precision tensor --json
		json_ok "tensor: bf16 on 9.0, fp16 on 7.5, both pass" \
			"[x['gemm']['precision'] for x in d['devices']] == ['bf16', 'fp16'] and all(x['verdict'] == 'pass' and x['gemm']['gemms'] > 0 for x in d['devices'])"
		expect 3 "bf16 on both: the 7.5 one cannot, the other burns" ft "$tmp/ltok.scn" --precision bf16 --json
		json_ok "bf16: cuda:0 passes, cuda:1 an error with its reason" \
			"d['devices'][0]['verdict'] == 'pass' and d['devices'][0]['gemm']['gemms'] > 0 and d['devices'][1]['verdict'] == 'error' and 'compute capability 8.0' in d['devices'][1]['error'] and d['verdict'] == 'error'"
		GPUSCOPE_CUBLASLT=$tmp/none/libcublasLt.so.13 fk "$tmp/tc.scn" -i cuda:0 --precision tensor >"$tmp/out" 2>"$tmp/err"
		rc=$?
		if [ "$rc" -eq 3 ]; then ok "no cuBLASLt: exit 3"; else not_ok "no cuBLASLt: exit $rc, wanted 3" "$tmp/out" "$tmp/err"; fi
		one_line "no cuBLASLt"
		if grep -q "bf16: cannot load .*libcublasLt.so.13" "$tmp/err"; then ok "no cuBLASLt: the reason"; else not_ok "no cuBLASLt: no reason" "$tmp/err"; fi
	fi
fi

# 7. OpenCL devices refuse tensor precisions (PoCL)
pocl --duration 2 --precision tensor >"$tmp/out" 2>"$tmp/err"
rc=$?
if ! grep -q 'no device to burn' "$tmp/err"; then
	if [ "$rc" -eq 3 ] && grep -q 'opencl:.*tensor precisions run through cuBLASLt on CUDA devices' "$tmp/err"; then
		ok "PoCL: tensor refused with the reason (exit 3)"
	else
		not_ok "PoCL: tensor: exit $rc" "$tmp/out" "$tmp/err"
	fi
fi

echo "1..$n"
[ "$fail" -eq 0 ]
