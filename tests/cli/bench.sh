#!/bin/sh
# gpuscope bench matmul end to end, on this machine's CPU for real: --size
# 256 --json parses as gpuscope.bench/1, has the three kernels (the BLAS row
# measured, or with its reason), every check passes, every GFLOP/s is above 0
# and the CPU's peak is derived; every key it prints is in docs/bench.md; the
# table says why there is no GPU column; bad options and sizes exit 2 with
# one line; a fixture cpuinfo sets the peak; a BLAS that gets one element
# wrong is an error line and exit 1; SIGINT stops it cleanly. OpenCL on
# PoCL (--opencl-cpu): naive and tiled, kernel only and end to end, checked
# against the CPU, at 128 and at 100 (no multiple of the tile); a read-back
# made wrong (GPUSCOPE_BENCH_CORRUPT) is caught; no loader (GPUSCOPE_OPENCL
# at nothing) is a GPU line with the reason and exit 0. CUDA on the fake
# libcuda.so.1 (an H100 at realtime 0): naive and tiled, kernel only at the
# scenario's rate on the device's clock and end to end, checked ok, against
# the spec sheet's and the clock-derived peak; cublas unavailable with the
# library's reason, or measured on the fake cuBLASLt; a corrupted tiled
# read-back caught; a failed launch a failed row, exit 3, the CPU rows
# still there. Prints TAP, with the figures measured here as comments.
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
# no NVIDIA driver's libcuda.so.1 in the cases below unless a case names one
export GPUSCOPE_CUDA=/nonexistent/libcuda.so.1
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
pass_if() { # what, the file to show on failure, then the test command
	what=$1 file=$2; shift 2
	if "$@"; then ok "$what"; else not_ok "$what" "$file"; fi
}
one_line() { # the error is one line starting "gpuscope: "
	if [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q '^gpuscope: ' "$tmp/err"; then ok "$1: one line on stderr"; else not_ok "$1: not one error line" "$tmp/err"; fi
}

# 1. usage errors: one line, exit 2, before anything is measured
for case in "matmul --size 0|--size 0" "matmul --size 99999|--size 99999" "matmul --size abc|--size abc" \
	"matmul --size -5|negative size" "matmul --threads 0|--threads 0" "matmul --frobnicate|unknown option" \
	"matmul --size|--size without a value" "matmul --size 64 --sweep|--size with --sweep" \
	"frobnicate|an unknown test" "matmul extra|an extra argument"; do
	args=${case%%|*} what=${case#*|}
	# shellcheck disable=SC2086
	expect 2 "refused: $what" "$bin" bench $args
	one_line "$what"
done
expect 0 "bench --help" "$bin" bench --help
pass_if "--help lists --sweep" "$tmp/out" grep -q -- '--sweep' "$tmp/out"

# 2. the JSON document at 256, measured here
expect 0 "bench matmul --size 256 --json" "$bin" bench matmul --size 256 --json
cp "$tmp/out" "$tmp/bench.json"
if command -v python3 >/dev/null 2>&1; then
	if python3 - "$tmp/bench.json" >"$tmp/py" 2>&1 <<'EOF'; then
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "gpuscope.bench/1", d["schema"]
assert d["test"] == "matmul" and d["precision"] == "fp32"
rows = {r["kernel"]: r for r in d["results"] if r["device"] == "cpu"}
assert sorted(rows) == ["blas", "blocked", "naive"], sorted(rows)
assert all(r["size"] == 256 for r in d["results"])
assert all(r["device"] == "cpu" or r["device"].startswith("opencl:") for r in d["results"])
assert all(r["clock"] == "host" for r in d["results"] if r["device"] == "cpu" and r["status"] == "measured")
for k in ("naive", "blocked"):
    r = rows[k]
    assert r["status"] == "measured", (k, r["status"])
    assert r["best_gflops"] > 0 and r["median_gflops"] > 0, k
    assert r["best_seconds"] <= r["median_seconds"], k
    assert r["runs"] >= 3, (k, r["runs"])
    assert r["check"]["ok"] and r["check"]["elements_wrong"] == 0, (k, r["check"])
    assert r["check"]["sampled"] == 256
assert rows["naive"]["threads"] == 1
assert rows["blocked"]["check"]["compared_with"] == "naive"
assert rows["blocked"]["check"]["elements_compared"] == 256 * 256
assert rows["blocked"]["check"]["max_error_ratio"] < 1
b = rows["blas"]
if d["blas"]["available"]:
    assert b["status"] == "measured" and b["best_gflops"] > 0 and b["check"]["ok"], b
    assert d["blas"]["library"].startswith("/"), d["blas"]
    print("blas: %s %s" % (d["blas"]["name"], d["blas"]["library"]))
else:
    assert b["status"] == "unavailable" and "apt install" in b["reason"], b
    assert d["blas"]["reason"] == b["reason"]
    print("blas: none (%s)" % b["reason"])
assert d["errors"] == 0 and d["stopped"] is False
g = d["gpu"]
assert g["opencl_cpu"] is False
assert all(not x["cpu_device"] for x in g["devices"]), g["devices"]
assert "/nonexistent/libcuda.so.1" in g["cuda_reason"], g
if not g["devices"]:
    assert g["measured"] is False and "OpenCL: no OpenCL" in g["reason"], g
    assert g["reason"].startswith("CUDA: ") and g["opencl_reason"] in g["reason"], g
print("gpu: %s" % (g["reason"] or ", ".join(x["name"] for x in g["devices"])))
c = d["cpu"]
assert c["cpus"] >= 1 and c["fp32_lanes"] >= 1 and c["peak_derivation"]
if c["peak_gflops"] is not None:
    assert c["peak_gflops"] > 0
    assert abs(c["peak_gflops"] - c["cpus"] * c["clock_mhz"] / 1000 * c["fp32_lanes"] * 2) < 0.01
    for r in d["results"]:
        if r["status"] == "measured":
            assert abs(r["percent_of_peak"] - 100 * r["best_gflops"] / c["peak_gflops"]) < 0.1
print("cpu: %s; %s" % (c["model"], c["peak_derivation"]))
for r in d["results"]:
    if r["status"] == "measured":
        print("N=256 %-7s %8.2f GFLOP/s best, %8.2f median, %s %% of peak, %d runs"
              % (r["kernel"], r["best_gflops"], r["median_gflops"], r["percent_of_peak"], r["runs"]))
EOF
		ok "the document has the three kernels, checked, with GFLOP/s above 0 and the peak"
		sed 's/^/# /' "$tmp/py"
	else
		not_ok "the document is not what it should be" "$tmp/py" "$tmp/bench.json"
	fi
	if sed -n '/"blas"/,/}/p' "$tmp/bench.json" | grep -q '"available": false'; then
		skip_missing "no system BLAS here to measure (Debian: apt install libopenblas0)"
	else
		ok "a system BLAS was measured"
	fi
else
	skip_missing "python3 is not here to parse JSON"
fi
# 2b. OpenCL on PoCL, taken with --opencl-cpu: the rows of the CPU device
have_pocl=0
expect 0 "bench matmul --size 128 --opencl-cpu --json" "$bin" bench matmul --size 128 --opencl-cpu --json
cp "$tmp/out" "$tmp/ocl.json"
if command -v python3 >/dev/null 2>&1 &&
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if any(x["cpu_device"] for x in d["gpu"]["devices"]) else 1)' "$tmp/ocl.json" 2>/dev/null; then
	have_pocl=1
	if python3 - "$tmp/ocl.json" >"$tmp/py" 2>&1 <<'EOF'; then
import json, sys
d = json.load(open(sys.argv[1]))
g = d["gpu"]
assert g["measured"] is True and g["reason"] is None and g["opencl_cpu"] is True, g
assert g["opencl_reason"] is None and g["cuda_reason"], g
cpu = [x for x in g["devices"] if x["cpu_device"]][0]
assert cpu["api"] == "opencl" and cpu["id"].startswith("opencl:"), cpu
assert cpu["units"] >= 1 and cpu["name"] and cpu["driver"], cpu
assert cpu["peak_gflops"] is None and "CPU device" in cpu["peak_derivation"], cpu
assert cpu["spec_gflops"] is None and cpu["spec_row"] is None and "CPU device" in cpu["spec_derivation"], cpu
assert cpu["tile"] == 16 and 1 <= cpu["naive_block"] <= 16 and cpu["error"] is None, cpu
assert cpu["cublaslt"] is None and cpu["cublaslt_reason"] is None, cpu
rows = [r for r in d["results"] if r["device"] == cpu["id"]]
got = sorted((r["kernel"], r["scope"]) for r in rows)
assert got == [("naive", "end_to_end"), ("naive", "kernel"), ("tiled", "end_to_end"), ("tiled", "kernel")], got
for r in rows:
    assert r["status"] == "measured" and r["size"] == 128, r
    assert r["best_gflops"] > 0 and r["median_gflops"] > 0 and r["runs"] >= 3, r
    assert r["percent_of_peak"] is None and r["percent_of_spec"] is None and r["threads"] is None, r
    assert r["clock"] == ("device" if r["scope"] == "kernel" else "host"), r
    assert (r["host_best_seconds"] is not None) == (r["scope"] == "kernel"), r
    c = r["check"]
    # naive and tiled each equal the CPU's naive result, element by element: so each other
    assert c["ok"] and c["compared_with"] == "naive" and c["elements_compared"] == 128 * 128, c
    assert c["elements_wrong"] == 0 and c["max_error_ratio"] < 1 and c["sampled"] == 256, c
    print("N=128 %s %-5s %-10s %7.2f GFLOP/s best, %7.2f median, %d runs"
          % (r["device"], r["kernel"], r["scope"], r["best_gflops"], r["median_gflops"], r["runs"]))
assert all(r["scope"] == "kernel" for r in d["results"] if r["device"] == "cpu")
assert d["errors"] == 0 and d["failures"] == 0
print("opencl: %s (driver %s), %d compute units, %s MHz"
      % (cpu["name"], cpu["driver"], cpu["units"], cpu["clock_mhz"]))
EOF
		ok "PoCL: naive and tiled, kernel only and end to end, checked against the CPU"
		sed 's/^/# /' "$tmp/py"
	else
		not_ok "the OpenCL rows are not what they should be" "$tmp/py" "$tmp/ocl.json"
	fi
else
	skip_missing "no CPU OpenCL device here (Debian: apt install pocl-opencl-icd ocl-icd-libopencl1)"
fi
if [ "$have_pocl" = 1 ]; then
	expect 0 "--size 100 --opencl-cpu (no multiple of the tile)" "$bin" bench matmul --size 100 --opencl-cpu
	cp "$tmp/out" "$tmp/ocl100"
	rows=$(grep -cE '^ +100  opencl:[0-9]+ (naive|tiled)( e2e)? +- .* ok \(= naive\)$' "$tmp/ocl100")
	pass_if "N=100: the four OpenCL rows of each device agree with naive" "$tmp/ocl100" [ "$rows" -ge 4 ]
	pass_if "N=100: the device is named, its peak is not made up" "$tmp/ocl100" \
		grep -q '^      peak  none: a CPU device .*(% PEAK is -)$' "$tmp/ocl100"
	expect 1 "a wrong OpenCL read-back (GPUSCOPE_BENCH_CORRUPT=tiled): exit 1" \
		env GPUSCOPE_BENCH_CORRUPT=tiled "$bin" bench matmul --size 40 --opencl-cpu --json
	pass_if "the error line names the kernel, the device, the size and the element" "$tmp/err" \
		grep -q '^gpuscope: bench matmul: tiled on opencl:[0-9]* (kernel only) at N=40 is wrong: 1 of 1600 elements checked against naive .*worst C\[1\]\[2\]' "$tmp/err"
	pass_if "and the naive rows are still right" "$tmp/err" sh -c "! grep -q 'naive on opencl' '$tmp/err'"
	expect 0 "without --opencl-cpu" "$bin" bench matmul --size 16
	if grep -q '^GPU   none on OpenCL: ' "$tmp/out"; then
		pass_if "the CPU device is left out, and the GPU line says how to take it" "$tmp/out" \
			grep -q '^GPU   none on OpenCL: no OpenCL GPU: .* CPU device.* (skipped: --opencl-cpu takes them)' "$tmp/out"
	else
		ok "an OpenCL GPU is here: the CPU device is not the only one to leave out"
	fi
fi
# no loader: the GPU line says why, and the CPU rows are all there
expect 0 "GPUSCOPE_OPENCL at no file: exit 0" env GPUSCOPE_OPENCL="$tmp/none/libOpenCL.so.1" "$bin" bench matmul --size 32 --opencl-cpu
pass_if "the GPU line names the library and the package" "$tmp/out" \
	grep -q "^GPU   none on OpenCL: no OpenCL: cannot load $tmp/none/libOpenCL.so.1 .*apt install ocl-icd-libopencl1" "$tmp/out"
rows=$(grep -cE '^ +32  (naive|blocked|blas) ' "$tmp/out")
pass_if "and the CPU rows are there" "$tmp/out" [ "$rows" -eq 3 ]

# 2c. CUDA on the fake libcuda.so.1: an H100 whose matmul rate (20 TFLOP/s)
# bench must find again on the device's clock (no launch overhead, no sleeping)
fake=$O/fakecuda/libcuda.so.1
if [ -f "$fake" ] && command -v python3 >/dev/null 2>&1; then
	sed -e 's/^launch_us = .*/launch_us = 0/' -e 's/^realtime = .*/realtime = 0/' \
		tests/fakecuda/scenarios/h100.scn >"$tmp/h100.scn"
	expect 0 "bench matmul --size 128 --json on the fake H100" env GPUSCOPE_CUDA="$PWD/$fake" \
		GPUSCOPE_FAKECUDA_SCENARIO="$tmp/h100.scn" GPUSCOPE_OPENCL=/nonexistent GPUSCOPE_CUBLASLT= \
		"$bin" bench matmul --size 128 --json
	cp "$tmp/out" "$tmp/cuda.json"
	if python3 - "$tmp/cuda.json" >"$tmp/py" 2>&1 <<'EOF'; then
import json, sys
d = json.load(open(sys.argv[1]))
g = d["gpu"]
assert g["measured"] is True and g["cuda_reason"] is None and g["opencl_reason"], g
dev = g["devices"][0]
assert len(g["devices"]) == 1 and dev["id"] == "cuda:0" and dev["api"] == "cuda", dev
assert dev["name"] == "NVIDIA H100 80GB HBM3" and dev["compute_capability"] == "9.0", dev
assert dev["units"] == 132 and dev["clock_mhz"] == 1980 and dev["cpu_device"] is False, dev
assert dev["spec_row"] and abs(dev["spec_gflops"] - 67000) < 1, dev
# 132 SMs x 128 FP32 FMA lanes x 2 x 1980 MHz
assert abs(dev["peak_gflops"] - 132 * 256 * 1980 / 1000) < 0.2 and "1980 MHz" in dev["peak_derivation"], dev
assert dev["error"] is None and dev["cublaslt"] is None and dev["cublaslt_reason"], dev
rows = {(r["kernel"], r["scope"]): r for r in d["results"] if r["device"] == "cuda:0"}
assert sorted(rows) == sorted((k, s) for k in ("naive", "tiled", "cublas") for s in ("kernel", "end_to_end")), sorted(rows)
for k in ("naive", "tiled"):
    for s in ("kernel", "end_to_end"):
        r = rows[(k, s)]
        assert r["status"] == "measured" and r["size"] == 128 and r["runs"] >= 3, r
        c = r["check"]
        assert c["ok"] and c["compared_with"] == "naive" and c["elements_compared"] == 128 * 128, c
        assert c["elements_wrong"] == 0 and c["sampled"] == 256, c
        assert abs(r["percent_of_peak"] - 100 * r["best_gflops"] / dev["peak_gflops"]) < 0.01, r
        assert abs(r["percent_of_spec"] - 100 * r["best_gflops"] / dev["spec_gflops"]) < 0.01, r
    r = rows[(k, "kernel")]
    # the device's clock: the scenario's 20 TFLOP/s, 2 N^3 counted
    assert r["clock"] == "device" and abs(r["best_gflops"] - 20000) < 200, r
    assert r["host_best_seconds"] > r["best_seconds"], r
    assert rows[(k, "end_to_end")]["clock"] == "host", rows[(k, "end_to_end")]
    print("N=128 cuda:0 %-5s kernel %8.1f GFLOP/s (device clock; %.3g s on the host), e2e %6.2f GFLOP/s"
          % (k, r["best_gflops"], r["host_best_seconds"], rows[(k, "end_to_end")]["best_gflops"]))
for s in ("kernel", "end_to_end"):
    r = rows[("cublas", s)]
    assert r["status"] == "unavailable" and r["reason"] == "unavailable: " + dev["cublaslt_reason"], r
assert d["errors"] == 0 and d["failures"] == 0
print("cublas: %s" % dev["cublaslt_reason"])
EOF
		ok "fake H100: naive and tiled, kernel only at the scenario's rate and end to end, checked, against both peaks"
		sed 's/^/# /' "$tmp/py"
	else
		not_ok "the CUDA rows are not what they should be" "$tmp/py" "$tmp/cuda.json"
	fi
	lt=$(ls "$O"/fakecublaslt/libcublasLt.so.* 2>/dev/null | head -n 1)
	if [ -n "$lt" ]; then
		expect 0 "with the fake cuBLASLt" env GPUSCOPE_CUDA="$PWD/$fake" GPUSCOPE_FAKECUDA_SCENARIO="$tmp/h100.scn" \
			GPUSCOPE_OPENCL=/nonexistent GPUSCOPE_CUBLASLT="$PWD/$lt" "$bin" bench matmul --size 100 --json
		cp "$tmp/out" "$tmp/cublas.json"
		pass_if "cublas: kernel only and end to end, measured and equal to naive" "$tmp/cublas.json" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
dev = d["gpu"]["devices"][0]
assert dev["cublaslt"] and dev["cublaslt_library"] and dev["cublaslt_reason"] is None, dev
rows = [r for r in d["results"] if r["device"] == "cuda:0" and r["kernel"] == "cublas"]
assert sorted(r["scope"] for r in rows) == ["end_to_end", "kernel"], rows
for r in rows:
    c = r["check"]
    assert r["status"] == "measured" and c["ok"] and c["compared_with"] == "naive", r
    assert c["elements_compared"] == 100 * 100 and c["elements_wrong"] == 0, r
' "$tmp/cublas.json"
	else
		skip_missing "no fake cuBLASLt built ($O/fakecublaslt/libcublasLt.so.*)"
	fi
	expect 1 "a wrong CUDA read-back (GPUSCOPE_BENCH_CORRUPT=tiled): exit 1" env GPUSCOPE_CUDA="$PWD/$fake" \
		GPUSCOPE_FAKECUDA_SCENARIO="$tmp/h100.scn" GPUSCOPE_OPENCL=/nonexistent GPUSCOPE_BENCH_CORRUPT=tiled \
		"$bin" bench matmul --size 40 --json
	pass_if "the error line names tiled on cuda:0, the size and the element" "$tmp/err" \
		grep -q '^gpuscope: bench matmul: tiled on cuda:0 (kernel only) at N=40 is wrong: 1 of 1600 elements checked against naive .*worst C\[1\]\[2\]' "$tmp/err"
	pass_if "and naive on cuda:0 is still right" "$tmp/err" sh -c "! grep -q 'naive on cuda' '$tmp/err'"
	pass_if "the document counts both tiled rows" "$tmp/out" grep -q '"errors": 2' "$tmp/out"
	# the fake's launch fault, on the tiled kernel's first launch: the context is lost
	sed -e 's/^realtime = .*/realtime = 0/' -e 's/^fault = .*/fault = launch_failed gs_matmul_tiled 1/' \
		tests/fakecuda/scenarios/fault-launch.scn >"$tmp/launch.scn"
	expect 3 "a failed launch: exit 3" env GPUSCOPE_CUDA="$PWD/$fake" GPUSCOPE_FAKECUDA_SCENARIO="$tmp/launch.scn" \
		GPUSCOPE_OPENCL=/nonexistent "$bin" bench matmul --size 64
	pass_if "the failed row has the error" "$tmp/out" \
		grep -qE '^ +64  cuda:0 tiled +- +cu[A-Za-z]+: CUDA_ERROR_LAUNCH_FAILED \(719\)' "$tmp/out"
	pass_if "naive ran before it, checked" "$tmp/out" grep -qE '^ +64  cuda:0 naive +- .* ok \(= naive\)$' "$tmp/out"
	pass_if "the rows after it say the device was lost" "$tmp/out" \
		grep -qE '^ +64  cuda:0 naive e2e +- +not run: cuda:0 was lost' "$tmp/out"
	rows=$(grep -cE '^ +64  (naive|blocked|blas) .* ok' "$tmp/out")
	pass_if "the CPU rows are all there" "$tmp/out" [ "$rows" -eq 3 ]
	pass_if "one error line names the call" "$tmp/err" \
		grep -q '^gpuscope: bench matmul: tiled on cuda:0 (kernel only) at N=64: .*CUDA_ERROR_LAUNCH_FAILED' "$tmp/err"
else
	skip_missing "no fake libcuda.so.1 ($fake) or no python3"
fi

# every key printed is documented
missing=""
for k in $(cat "$tmp/bench.json" "$tmp/ocl.json" "$tmp/cuda.json" "$tmp/cublas.json" 2>/dev/null | grep -oE '^ *"[a-z_0-9]+":' | tr -d ' ":' | sort -u); do
	grep -q "\`$k\`" docs/bench.md || missing="$missing $k"
done
if [ -z "$missing" ]; then ok "every key of gpuscope.bench/1 is in docs/bench.md"; else not_ok "keys missing from docs/bench.md:$missing"; fi

# 3. the table
expect 0 "bench matmul --size 200 (the table)" "$bin" bench matmul --size 200 --threads 2
cp "$tmp/out" "$tmp/table"
cp "$tmp/err" "$tmp/table.err"
pass_if "the table has its columns" "$tmp/table" \
	grep -q '^ *SIZE  *KERNEL .*BEST GFLOP/s.*MEDIAN.*% PEAK.*CHECK' "$tmp/table"
rows=$(grep -cE '^ +200  (naive|blocked|blas) ' "$tmp/table")
pass_if "a row per kernel" "$tmp/table" [ "$rows" -eq 3 ]
pass_if "blocked ran on 2 threads and agrees with naive" "$tmp/table" \
	grep -qE '^ +200  blocked +2 .* ok \(= naive\)$' "$tmp/table"
pass_if "a GPU line: the OpenCL devices, or why there are none" "$tmp/table" \
	grep -qE '^GPU   (none on OpenCL: no OpenCL|opencl:0 )' "$tmp/table"
pass_if "and why there is no CUDA device" "$tmp/table" \
	grep -q '^GPU   none on CUDA: .*/nonexistent/libcuda.so.1' "$tmp/table"
pass_if "the peak's derivation is shown" "$tmp/table" \
	grep -q '^      peak .* x .* MHz .* FP32 lane.* = .* GFLOP/s' "$tmp/table"
pass_if "nothing on stderr when it is not a terminal" "$tmp/table.err" [ ! -s "$tmp/table.err" ]

# 4. the peak from a fixture cpuinfo (and no cpufreq)
mkdir -p "$tmp/proc" "$tmp/sys"
printf 'processor\t: 0\nmodel name\t: Fixture CPU\ncpu MHz\t\t: 2500.000\nflags\t\t: fpu sse sse2 avx avx2 fma avx512f\n' >"$tmp/proc/cpuinfo"
expect 0 "with GPUSCOPE_PROC_ROOT's cpuinfo" env GPUSCOPE_PROC_ROOT="$tmp/proc" GPUSCOPE_SYSFS_ROOT="$tmp/sys" \
	"$bin" bench matmul --size 32 --json
if command -v python3 >/dev/null 2>&1; then
	if python3 -c '
import json, os, sys
d = json.load(open(sys.argv[1]))
c = d["cpu"]
n = len(os.sched_getaffinity(0))
assert c["model"] == "Fixture CPU" and c["isa"] == "avx512f" and c["fp32_lanes"] == 16, c
assert c["clock_mhz"] == 2500 and c["clock_source"] == "cpuinfo \"cpu MHz\"", c
assert abs(c["peak_gflops"] - n * 2.5 * 16 * 2) < 0.01, (c["peak_gflops"], n)
' "$tmp/out" 2>"$tmp/py"; then
		ok "peak = CPUs x 2500 MHz x 16 lanes x 2 from the fixture"
	else
		not_ok "the fixture's peak" "$tmp/py" "$tmp/out"
	fi
else
	skip_missing "python3 is not here to parse JSON"
fi

# 5. a wrong result: a BLAS whose cblas_sgemm gets one element wrong is caught
mkdir -p "$tmp/lib"
cat >"$tmp/badblas.c" <<'EOF'
/* a fake libopenblas.so.0: the right product, but for C[1][2], off by 1 */
void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a,
                 int lda, const float *b, int ldb, float beta, float *c, int ldc);
void
cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
            const float *b, int ldb, float beta, float *c, int ldc)
{
	(void)order, (void)ta, (void)tb, (void)alpha, (void)beta, (void)n;
	for (int i = 0; i < m; i++)
		for (int j = 0; j < m; j++) {
			float s = 0;
			for (int p = 0; p < k; p++)
				s += a[i * lda + p] * b[p * ldb + j];
			c[i * ldc + j] = s + (i == 1 && j == 2);
		}
}
EOF
if ${CC:-cc} -shared -fPIC -o "$tmp/lib/libopenblas.so.0" "$tmp/badblas.c" 2>"$tmp/cc.err"; then
	expect 1 "a wrong BLAS result: exit 1" env LD_LIBRARY_PATH="$tmp/lib" "$bin" bench matmul --size 40 --json
	pass_if "the error line names the kernel, the size and the element" "$tmp/err" \
		grep -q '^gpuscope: bench matmul: blas at N=40 is wrong: 1 of 1600 elements checked against naive .*worst C\[1\]\[2\]' "$tmp/err"
	pass_if "and the document counts it" "$tmp/out" grep -q '"errors": 1' "$tmp/out"
else
	skip_missing "no C compiler to build a wrong BLAS"
fi

# 6. Ctrl-C: what was measured is printed, exit 130
"$bin" bench matmul --size 2048 >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 1
kill -INT "$pid" 2>/dev/null
wait "$pid"
rc=$?
if [ "$rc" -eq 130 ] && grep -q 'stopped by signal 2' "$tmp/out" && grep -qE '^ +2048  naive .*stopped' "$tmp/out"; then
	ok "SIGINT stops it cleanly: the rows so far, exit 130"
else
	not_ok "SIGINT: exit $rc" "$tmp/out" "$tmp/err"
fi

echo "1..$n"
[ "$fail" -eq 0 ]
