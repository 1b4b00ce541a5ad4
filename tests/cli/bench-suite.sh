#!/bin/sh
# gpuscope bench (the suite) end to end on the fake libcuda.so.1
# (tests/fakecuda/, docs/fake-cuda.md) and for real on PoCL: the figures of
# a scenario come back through bench's byte and FLOP counting within 1 %,
# held against the spec sheet's row; the JSON (gpuscope.bench/1) has every
# key docs/bench.md lists; the store keeps them; --plot writes an SVG; a
# corrupted element is a wrong result (exit 1), a failed launch a lost
# device (exit 1, the tests after it failed); -i picks devices (-i list
# lists them); a GPU the fake NVML shows busy with other processes is
# refused (exit 3) unless --force, and then its figures say the power cap
# held it down; no device is exit 4 with both reasons; SIGINT stops it
# (exit 130). Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
bin=$O/gpuscope
fake=$O/fakecuda/libcuda.so.1
if [ ! -x "$bin" ] || [ ! -f "$fake" ]; then
	echo "1..0 # SKIP needs $bin and $fake"
	exit 0
fi
PY=${PY:-python3}
command -v "$PY" >/dev/null 2>&1 || PY=python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
# shellcheck source=tests/skip.inc
. ./tests/skip.inc
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/# /' "$f" | head -n 40; done
}
expect() { # expected exit status, what, the command; output in $tmp/out, $tmp/err
	want=$1 what=$2; shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq "$want" ]; then ok "$what (exit $rc)"; else not_ok "$what: exit $rc, wanted $want" "$tmp/out" "$tmp/err"; fi
}
pyck() { # what, then a python expression over d (the JSON of $tmp/out)
	what=$1 expr=$2
	if "$PY" -c "import json,sys; d=json.load(open('$tmp/out')); sys.exit(0 if ($expr) else 1)" 2>"$tmp/pyerr"; then
		ok "$what"
	else
		not_ok "$what" "$tmp/out" "$tmp/pyerr"
	fi
}

# the fake NVML is not in the way unless a case asks for it; no OpenCL
export GPUSCOPE_NVML=/nonexistent GPUSCOPE_OPENCL=/nonexistent
export GPUSCOPE_CUDA="$PWD/$fake" GPUSCOPE_BENCH_DIR="$tmp/store"
unset GPUSCOPE_FAKECUDA_LOG

# an H100 whose rates bench must find again: no launch overhead, no sleeping
sed -e 's/^launch_us = .*/launch_us = 0/' -e 's/^realtime = .*/realtime = 0/' \
	tests/fakecuda/scenarios/h100.scn >"$tmp/h100.scn"
export GPUSCOPE_FAKECUDA_SCENARIO="$tmp/h100.scn"

# 1. no device at all
GPUSCOPE_CUDA=/nonexistent expect 4 "no device" "$bin" bench --quick
if grep -q '^no GPU to measure' "$tmp/out" && grep -q "CUDA: cannot load '/nonexistent'" "$tmp/out" && grep -q 'OpenCL: no OpenCL' "$tmp/out"; then
	ok "no device: the table says why, for CUDA and for OpenCL"
else
	not_ok "no device: no reasons" "$tmp/out"
fi

# 2. the figures of the scenario, through bench's counting
expect 0 "quick stream, fma, copies and latency on the fake H100" \
	"$bin" bench --quick --json --plot "$tmp/roof.svg" stream fma.fp32 fma.fp64 mma.bf16 h2d.pinned d2h.pinned launch
pyck "schema gpuscope.bench/1, test suite, one device cuda:0" \
	"d['schema']=='gpuscope.bench/1' and d['test']=='suite' and [x['id'] for x in d['devices']]==['cuda:0']"
R="{r['test']: r for r in d['devices'][0]['results']}"
pyck "the tests asked for, and only those" \
	"sorted($R)==sorted(['stream.copy','stream.mul','stream.add','stream.triad','stream.dot','fma.fp32','fma.fp64','mma.bf16','h2d.pinned','d2h.pinned','launch.latency'])"
pyck "every test measured" "all(r['status']=='measured' for r in d['devices'][0]['results'])"
pyck "triad at the scenario's 3000 GB/s within 1 %" "abs($R['stream.triad']['best']/3000-1) < 0.01"
pyck "copy at 3000 GB/s too (2 x 4 x n bytes)" "abs($R['stream.copy']['best']/3000-1) < 0.01"
pyck "fma.fp32 at 60 TFLOP/s within 1 %" "abs($R['fma.fp32']['best']/60000-1) < 0.01"
pyck "mma.bf16 at 700 TFLOP/s within 1 %" "abs($R['mma.bf16']['best']/700000-1) < 0.01"
pyck "h2d.pinned at 55 GB/s, d2h at 50" "abs($R['h2d.pinned']['best']/55-1) < 0.01 and abs($R['d2h.pinned']['best']/50-1) < 0.01"
pyck "held against the H100 SXM5 row: triad spec 3350 GB/s, percent 89.6" \
	"d['devices'][0]['spec_row']=='H100 SXM5 80GB' and $R['stream.triad']['spec']==3350 and abs($R['stream.triad']['percent_of_spec']-89.6)<0.1"
pyck "fma.fp64 above its spec (60 of 34 TFLOP/s) is flagged" "$R['fma.fp64']['above_100_percent'] is True"
pyck "the clock-derived peak comes with its derivation" "$R['fma.fp32']['clock_peak']>0 and '132' in $R['fma.fp32']['clock_peak_how']"
pyck "without NVML the copies are held against the sheet's link (Gen5 x16: 63 GB/s)" \
	"abs($R['h2d.pinned']['spec']-63.0)<0.1 and $R['h2d.pinned']['link'] is None"
pyck "the store file is named" "d['devices'][0]['saved_to'].endswith('GPU-5f0c6f13-8a3d-4b1e-9c2a-0123456789ab.json')"
cp "$tmp/out" "$tmp/suite.json"
if [ -f "$tmp/store/GPU-5f0c6f13-8a3d-4b1e-9c2a-0123456789ab.json" ] &&
	"$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d['schema']=='gpuscope.bench.store/1' and any(f['test']=='stream.triad' for f in d['figures']) else 1)" \
		"$tmp/store/GPU-5f0c6f13-8a3d-4b1e-9c2a-0123456789ab.json" 2>"$tmp/pyerr"; then
	ok "the store keeps the figures under the GPU's UUID"
else
	not_ok "no store record" "$tmp/pyerr"
fi
if "$PY" -c "import sys,xml.dom.minidom as m; t=m.parse(sys.argv[1]).toxml(); sys.exit(0 if 'cuda:0' in t and t.count('<circle')>=5 else 1)" "$tmp/roof.svg" 2>"$tmp/pyerr"; then
	ok "--plot: a roofline SVG with the device's points"
else
	not_ok "--plot: no picture" "$tmp/pyerr"
fi
# every key of the document is in docs/bench.md
"$PY" - "$tmp/suite.json" >"$tmp/keys" <<'PYEOF'
import json, sys
def walk(v, out):
    if isinstance(v, dict):
        for k, x in v.items():
            out.add(k); walk(x, out)
    elif isinstance(v, list):
        for x in v: walk(x, out)
keys = set(); walk(json.load(open(sys.argv[1])), keys)
doc = open("docs/bench.md").read()
for k in sorted(k for k in keys if "`%s`" % k not in doc):
    print(k)
PYEOF
if [ ! -s "$tmp/keys" ]; then ok "every key of the JSON is in docs/bench.md"; else not_ok "keys missing from docs/bench.md" "$tmp/keys"; fi

# 3. the table
expect 0 "the table" "$bin" bench --quick --no-save stream.triad h2d.pinned
if grep -q '^cuda:0  NVIDIA H100 80GB HBM3' "$tmp/out" && grep -q 'stream.triad *[0-9]' "$tmp/out" && grep -q 'spec sheet: H100 SXM5 80GB' "$tmp/out"; then
	ok "the table names the device, its row and the figures"
else
	not_ok "the table" "$tmp/out"
fi
if grep -q 'kept in' "$tmp/out"; then not_ok "--no-save: still kept" "$tmp/out"; else ok "--no-save keeps nothing"; fi

# 4. a wrong element, a lost device
sed -e 's/^launch_us = .*/launch_us = 0/' -e 's/^realtime = .*/realtime = 0/' \
	tests/fakecuda/scenarios/fault-corrupt.scn >"$tmp/corrupt.scn"
GPUSCOPE_FAKECUDA_SCENARIO="$tmp/corrupt.scn" expect 1 "a corrupted triad element is a wrong result" \
	"$bin" bench --quick --no-save --json stream fma.fp32
# BabelStream checks its three arrays once, after the last repetition: an
# element triad got wrong is wrong in what every kernel after it read
pyck "the stream tests wrong, with the element; fma.fp32 measured" \
	"all($R[t]['status']=='wrong' for t in ['stream.copy','stream.triad','stream.dot']) and 'b[1000]' in $R['stream.triad']['why'] and $R['fma.fp32']['status']=='measured'"
if grep -q 'stream.triad wrong' "$tmp/err"; then ok "an error line names the wrong test"; else not_ok "no error line for the wrong test" "$tmp/err"; fi
sed -e 's/^fault = .*/fault = corrupt gs_mma_bf16 0 30/' "$tmp/corrupt.scn" >"$tmp/mma.scn"
GPUSCOPE_FAKECUDA_SCENARIO="$tmp/mma.scn" expect 1 "a corrupted mma result is a wrong result" \
	"$bin" bench --quick --no-save --json mma.bf16 mma.fp16
pyck "mma.bf16 wrong against the analytic sum, mma.fp16 measured" \
	"$R['mma.bf16']['status']=='wrong' and 'want 131072' in $R['mma.bf16']['why'] and $R['mma.fp16']['status']=='measured'"
sed -e 's/^realtime = .*/realtime = 0/' tests/fakecuda/scenarios/fault-launch.scn >"$tmp/launch.scn"
GPUSCOPE_FAKECUDA_SCENARIO="$tmp/launch.scn" expect 1 "a failed launch: the device is lost" \
	"$bin" bench --quick --no-save --json stream launch
pyck "the tests after the loss failed, saying the device is lost" \
	"$R['launch.latency']['status']=='failed' and 'lost' in $R['launch.latency']['why'] and d['devices'][0]['error']"

# 5. -i
sed -e 's/^realtime = .*/realtime = 0/' tests/fakecuda/scenarios/two.scn >"$tmp/two.scn"
GPUSCOPE_FAKECUDA_SCENARIO="$tmp/two.scn" expect 0 "-i list" "$bin" bench -i list
if grep -q '^0  cuda:0 ' "$tmp/out" && grep -q '^1  cuda:1 .*A100' "$tmp/out"; then ok "-i list lists both devices"; else not_ok "-i list" "$tmp/out"; fi
GPUSCOPE_FAKECUDA_SCENARIO="$tmp/two.scn" expect 0 "-i cuda:1" "$bin" bench --quick --no-save --json -i cuda:1 stream.triad
pyck "-i cuda:1 measures the A100 alone" "[x['name'] for x in d['devices']]==['NVIDIA A100-SXM4-40GB']"
GPUSCOPE_FAKECUDA_SCENARIO="$tmp/two.scn" expect 0 "-i by UUID prefix" "$bin" bench --quick --no-save --json -i GPU-a1000000 stream.triad
pyck "the UUID prefix names the A100" "[x['id'] for x in d['devices']]==['cuda:1']"
GPUSCOPE_FAKECUDA_SCENARIO="$tmp/two.scn" expect 2 "-i an id of nothing" "$bin" bench -i cuda:7
if [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "cuda:7" "$tmp/err"; then ok "-i: one line naming the id"; else not_ok "-i: the error" "$tmp/err"; fi

# 6. a GPU that others use (the fake NVML's GPU 0 has four processes and is
# held at its power cap; the fake CUDA device gets its UUID)
sed -e 's/^uuid = .*/uuid = GPU-0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0/' "$tmp/h100.scn" >"$tmp/busy.scn"
nvml_env() {
	GPUSCOPE_NVML="$PWD/$O/fakenvml/current/libnvidia-ml.so.1" FAKE_NVML_SCENARIO=tests/scenarios/h100x2.scn \
		GPUSCOPE_PROC_ROOT=tests/fixtures/proc GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty \
		GPUSCOPE_FAKECUDA_SCENARIO="$tmp/busy.scn" "$@"
}
nvml_env expect 3 "a GPU others use is refused" "$bin" bench --quick --no-save stream.triad
if grep -q 'in use by pid 1001' "$tmp/err" && grep -q -- '--force' "$tmp/err"; then ok "the refusal says who and how to go on"; else not_ok "the refusal" "$tmp/err"; fi
nvml_env expect 0 "--force measures it" "$bin" bench --quick --no-save --json --force fma.fp32 stream.triad
pyck "sampled by NVML: the power cap held it down, the clock seen is 1755 MHz" \
	"d['devices'][0]['sampled'] and 'SW power cap' in $R['fma.fp32']['held_down_by'] and $R['fma.fp32']['observed']['sm_clock_mhz_mean']==1755 and $R['fma.fp32']['clock_observed']"
nvml_env expect 0 "--force: copies" "$bin" bench --quick --no-save --json --force h2d.pinned
pyck "with NVML the copies are held against the link as trained (Gen5 x16 here)" \
	"abs($R['h2d.pinned']['link']-63.0)<0.5 and $R['h2d.pinned']['percent_of_link']>0"

# a GPU lost mid-run with the Xid NVML saw (tests/scenarios/xid.scn: Xid 79 on
# its second GPU at t = 5 s; the run starts at t = 4)
sed -e 's/^uuid = .*/uuid = GPU-0b1c2d3e-4f50-6172-8394-a5b6c7d8e901/' -e 's/^realtime = .*/realtime = 0/' \
	tests/fakecuda/scenarios/fault-launch.scn >"$tmp/xid.scn"
GPUSCOPE_NVML="$PWD/$O/fakenvml/current/libnvidia-ml.so.1" FAKE_NVML_SCENARIO=tests/scenarios/xid.scn \
	FAKE_NVML_EPOCH=$(($(date +%s) - 4)) GPUSCOPE_PROC_ROOT=tests/fixtures/proc \
	GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty GPUSCOPE_FAKECUDA_SCENARIO="$tmp/xid.scn" \
	expect 1 "a GPU lost mid-run" "$bin" bench --quick --no-save --force stream
if grep -q 'stopped: device lost: .*CUDA_ERROR_LAUNCH_FAILED.*NVML reported Xid 79' "$tmp/out"; then
	ok "the lost GPU is reported with the Xid NVML saw"
else
	not_ok "no Xid with the lost GPU" "$tmp/out"
fi

# 7. GPU to GPU: an NVLink pair, a PCIe pair, a pair without peer access
sed -e 's/^realtime = .*/realtime = 0/' tests/fakecuda/scenarios/p2p.scn >"$tmp/p2p.scn"
GPUSCOPE_FAKECUDA_SCENARIO="$tmp/p2p.scn" expect 0 "p2p on three fake GPUs" "$bin" bench --quick --no-save --json p2p
P="{(p['test'], p['src'], p['dst']): p for p in d['p2p']}"
pyck "p2p: each direction and both ways of the two peer pairs, one line for the third" "len(d['p2p'])==7"
pyck "p2p: the NVLink pair at the scenario's 200 GB/s each way and 400 both ways" \
	"abs($P[('p2p.ce','cuda:0','cuda:1')]['median']/200-1)<0.01 and abs($P[('p2p.ce.bidir','cuda:0','cuda:1')]['median']/400-1)<0.01 and $P[('p2p.ce','cuda:0','cuda:1')]['link']=='NVLink'"
pyck "p2p: the PCIe pair at 25 GB/s" "abs($P[('p2p.ce','cuda:2','cuda:0')]['median']/25-1)<0.01 and $P[('p2p.ce','cuda:2','cuda:0')]['link']=='PCIe'"
pyck "p2p: a pair without peer access says so and is not measured" \
	"$P[('p2p','cuda:1','cuda:2')]['status']=='unsupported' and 'no peer access' in $P[('p2p','cuda:1','cuda:2')]['why']"
cp "$tmp/out" "$tmp/p2p.json"
"$PY" - "$tmp/p2p.json" >"$tmp/keys" <<'PYEOF'
import json, sys
keys = set()
for p in json.load(open(sys.argv[1]))["p2p"]:
    keys.update(p)
doc = open("docs/bench.md").read()
for k in sorted(k for k in keys if "`%s`" % k not in doc):
    print(k)
PYEOF
if [ ! -s "$tmp/keys" ]; then ok "every key of p2p is in docs/bench.md"; else not_ok "p2p keys missing from docs/bench.md" "$tmp/keys"; fi
GPUSCOPE_FAKECUDA_SCENARIO="$tmp/p2p.scn" expect 0 "p2p: the table" "$bin" bench --quick --no-save p2p
if grep -q 'cuda:0   <> cuda:1   NVLink  *400.0 GB/s' "$tmp/out"; then ok "p2p: the table's both-ways line"; else not_ok "p2p: the table" "$tmp/out"; fi

# 8. PoCL for real
unset GPUSCOPE_OPENCL
GPUSCOPE_CUDA=/nonexistent expect 0 "PoCL: --opencl-cpu measures for real" \
	"$bin" bench --quick --no-save --json --opencl-cpu stream.triad fma.fp32 launch
pyck "PoCL: triad, fma.fp32 and latency measured and checked" \
	"d['devices'][0]['api']=='opencl' and all($R[t]['status']=='measured' and $R[t]['best']>0 for t in ['stream.triad','fma.fp32','launch.latency'])"
"$PY" -c "import json; d=json.load(open('$tmp/out')); [print('# PoCL %s: %.4g %s' % (r['test'], r['best'], r['unit'])) for r in d['devices'][0]['results']]" 2>/dev/null
export GPUSCOPE_OPENCL=/nonexistent

# 9. SIGINT
sed -e 's/^realtime = .*/realtime = 1/' "$tmp/h100.scn" >"$tmp/slow.scn"
GPUSCOPE_FAKECUDA_SCENARIO="$tmp/slow.scn" "$bin" bench --no-save --json >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 2
kill -INT "$pid"
wait "$pid"
rc=$?
if [ "$rc" -eq 130 ]; then ok "SIGINT: exit 130"; else not_ok "SIGINT: exit $rc" "$tmp/err"; fi
pyck "SIGINT: the document says it stopped, with what was measured" "d['stopped'] is True"

echo "1..$n"
[ "$fail" -eq 0 ]
