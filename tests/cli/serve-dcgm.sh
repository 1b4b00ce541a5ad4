#!/bin/sh
# serve --names dcgm as a drop-in for dcgm-exporter: a real Prometheus
# scrapes `gpuscope serve --names dcgm` on the fake NVML
# (tests/scenarios/dcgm.scn) and every query of dcgm-exporter's own Grafana
# dashboard (tests/fixtures/dcgm-dashboard-queries.txt, with its source)
# must return data, with the template variables ($instance, $gpu) set to the
# serve target and the scenario's GPUs. The values must be in dcgm-exporter's
# units (MiB, MHz, W, C, %, mJ) and carry its labels (gpu, UUID, pci_bus_id,
# device, modelName, Hostname, DCGM_FI_DRIVER_VERSION); DCGM_FI_DEV_XID_ERRORS
# must become the scenario's Xid; process 1001's Slurm job (77, from its
# cgroup in tests/fixtures/dcgm-proc) must be the hpc_job label of GPU 0's
# series; no gpuscope_ family is served; --names takes only gpuscope or
# dcgm. Then the default names give the job's gpuscope_job_gpu_memory_bytes
# and gpuscope_gpu_allocation, and AMD and Intel fixtures (no NVML) give the
# dashboard's metrics that have a meaning there under the same names, and
# MIG instances (tests/scenarios/mig.scn) their GPU_I_PROFILE / GPU_I_ID.
# A query whose metric serve does not export at all fails, naming the
# query, the metric and what it needs. Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
bin=$O/gpuscope
fake=$O/fakenvml/current/libnvidia-ml.so.1
fixture=tests/fixtures/dcgm-dashboard-queries.txt
for need in prometheus python3 curl; do
	if ! command -v "$need" >/dev/null 2>&1; then
		echo "1..0 # SKIP needs $need (Debian: apt-get install prometheus curl python3)"
		exit 0
	fi
done
if [ ! -x "$bin" ] || [ ! -f "$fake" ]; then
	echo "1..0 # SKIP needs $bin and $fake"
	exit 0
fi
# shellcheck source=tests/prom.inc
. ./tests/prom.inc

# 1. --names takes gpuscope or dcgm only
"$bin" serve --names prometheus --listen 127.0.0.1:0 >/dev/null 2>"$tmp/names.err"
rc=$?
if [ "$rc" = 2 ] && grep -q -- "--names takes gpuscope (the default) or dcgm" "$tmp/names.err"; then
	ok "--names prometheus: usage error (exit 2) naming the choices"
else
	not_ok "--names prometheus: exit $rc" "$tmp/names.err"
fi

# 2. Prometheus, with an empty list of targets for now
start_prometheus dcgm

# 3. serve --names dcgm on the fake library; scenario time 0 is now
: >"$tmp/serve.err"
epoch=$(python3 -c 'import time; print("%.3f" % time.time())')
GPUSCOPE_NVML=$fake FAKE_NVML_SCENARIO=tests/scenarios/dcgm.scn FAKE_NVML_EPOCH=$epoch \
	GPUSCOPE_PROC_ROOT=tests/fixtures/dcgm-proc GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty \
	GPUSCOPE_PASSWD=tests/fixtures/passwd \
	"$bin" serve --names dcgm --listen 127.0.0.1:0 -d 0.5 >"$tmp/serve.out" 2>"$tmp/serve.err" &
serve_pid=$!
i=0 addr=""
while [ -z "$addr" ]; do
	addr=$(sed -n 's|^gpuscope serve: listening on http://\([0-9.]*:[0-9][0-9]*\)/.*|\1|p' "$tmp/serve.err")
	[ -n "$addr" ] && break
	i=$((i + 1))
	if [ "$i" -gt 100 ] || ! kill -0 "$serve_pid" 2>/dev/null; then
		bail "serve --names dcgm did not say where it listens within 10 s" "$tmp/serve.err"
	fi
	sleep 0.1
done
ok "serve --names dcgm listens on $addr"
printf '[{"targets": ["%s"], "labels": {}}]\n' "$addr" >"$tmp/targets.json.new"
mv "$tmp/targets.json.new" "$tmp/targets.json"

# 4. the exposition: dcgm-exporter's names only, the text format even when OpenMetrics is asked for
i=0
while :; do
	curl -s -o "$tmp/metrics.txt" -D "$tmp/metrics.hdr" \
		-H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' \
		"http://$addr/metrics"
	grep -q '^DCGM_FI_DEV_GPU_UTIL{' "$tmp/metrics.txt" && break
	i=$((i + 1))
	[ "$i" -gt 100 ] && break
	sleep 0.1
done
if grep -qi '^content-type: text/plain; version=0.0.4' "$tmp/metrics.hdr" &&
	grep -q '^# TYPE DCGM_FI_DEV_GPU_UTIL gauge$' "$tmp/metrics.txt" &&
	! grep -q 'gpuscope_' "$tmp/metrics.txt"; then
	ok "GET /metrics (OpenMetrics asked for): text/plain 0.0.4, DCGM_FI_* families, no gpuscope_ family"
else
	not_ok "GET /metrics under --names dcgm" "$tmp/metrics.hdr" "$tmp/metrics.txt"
fi

# 5. what Prometheus stored: the dashboard's queries, values, labels
python3 - "$prom" "$addr" "$epoch" "$n" "$tmp" "$fixture" <<'EOF'
import json
import sys
import time
import urllib.parse
import urllib.request

prom, addr, epoch, n, tmp, fixture = sys.argv[1:7]
epoch, n = float(epoch), int(n)
fail = 0
JOB = 'job="dcgm"'
# the metrics that another part of issue 20 fills, should serve not export them yet
NEEDS = {
    "DCGM_FI_PROF_": "the gpm part (GF_PROF_* from NVML GPM)",
    "DCGM_FI_DEV_XID_ERRORS": "NVML Xid events",
}


def report(cond, what, detail=None, skip=None):
    global n, fail
    n += 1
    if skip is not None:  # what the check needs is missing: a failure, with the reason
        fail += 1
        print("not ok %d - %s: %s" % (n, what, skip))
    elif cond:
        print("ok %d - %s" % (n, what))
    else:
        fail += 1
        print("not ok %d - %s" % (n, what))
        if detail is not None:
            for line in str(detail).splitlines()[:20]:
                print("# " + line)
    with open(tmp + "/py-count", "w") as f:
        f.write("%d %d\n" % (n, fail))
    sys.stdout.flush()
    return cond


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def api(path, **params):
    d = json.loads(get(prom + path + "?" + urllib.parse.urlencode(params, doseq=True)))
    if d.get("status") != "success":
        raise RuntimeError("%s: %s" % (path, d))
    return d["data"]


def q(expr):
    return [(r["metric"], float(r["value"][1])) for r in api("/api/v1/query", query=expr)["result"]]


def exported(metric):
    return any(line.startswith(metric + "{") or line.startswith(metric + " ")
               for line in get("http://%s/metrics" % addr).splitlines())


def needs(metric):
    for prefix, what in NEEDS.items():
        if metric.startswith(prefix):
            return what
    return "a field the backend does not fill"


# the target is up
deadline = time.time() + 20
up = False
while time.time() < deadline and not up:
    ts = [t for t in api("/api/v1/targets")["activeTargets"] if t["labels"].get("job") == "dcgm"]
    up = len(ts) == 1 and ts[0]["health"] == "up"
    if not up:
        time.sleep(0.2)
report(up, "Prometheus scrapes serve --names dcgm", ts)
time.sleep(3.5)  # a few scrapes, and the Xid of scenario time 2

instance, gpu = addr.replace(".", "\\\\."), "0|1"
queries = []
with open(fixture) as f:
    for line in f:
        line = line.rstrip("\n")
        if line and not line.startswith("#"):
            kind, _, query = line.partition("\t")
            queries.append((kind, query))
report(len(queries) == 10, "the fixture lists the dashboard's 8 panel and 2 variable queries",
       queries)
for kind, query in queries:
    if kind == "expr":
        expr = query.replace("$instance", instance).replace("$gpu", gpu)
        metric = next(w for w in expr.replace("(", " ").replace("{", " ").split() if w.startswith("DCGM_"))
        r = []
        deadline = time.time() + 10
        while time.time() < deadline:
            r = q(expr)
            if r:
                break
            time.sleep(0.5)
        if not r and not exported(metric):
            report(False, "dashboard query %s" % query,
                   skip="%s is not exported yet (needs %s)" % (metric, needs(metric)))
            continue
        report(len(r) >= 1, "dashboard query %s returns data (%d series)" % (query, len(r)), expr)
    else:
        metric, _, label = query[len("label_values("):-1].partition(", ")
        vals = api("/api/v1/label/%s/values" % label, **{"match[]": metric})
        want = addr if label == "instance" else "0"
        report(want in vals and (label != "gpu" or "1" in vals),
               "dashboard variable %s gives %s" % (query, vals), vals)

# values in dcgm-exporter's units
def one(expr):
    r = q(expr)
    return r[0][1] if len(r) == 1 else None


for expr, want, what in [
    ('DCGM_FI_DEV_FB_USED{%s,gpu="0"}', 40000, "FB_USED in MiB"),
    ('DCGM_FI_DEV_FB_RESERVED{%s,gpu="0"}', 479, "FB_RESERVED in MiB"),
    ('DCGM_FI_DEV_SM_CLOCK{%s,gpu="0"} * 1000000', 1755e6, "SM_CLOCK in MHz (the dashboard's * 1000000 gives Hz)"),
    ('DCGM_FI_DEV_MEM_CLOCK{%s,gpu="0"}', 2619, "MEM_CLOCK in MHz"),
    ('DCGM_FI_DEV_POWER_USAGE{%s,gpu="0"}', 300, "POWER_USAGE in W"),
    ('sum(DCGM_FI_DEV_POWER_USAGE{%s})', 420, "POWER_USAGE summed over the GPUs"),
    ('DCGM_FI_DEV_GPU_TEMP{%s,gpu="1"}', 45, "GPU_TEMP in C"),
    ('DCGM_FI_DEV_MEMORY_TEMP{%s,gpu="0"}', 60, "MEMORY_TEMP in C"),
    ('DCGM_FI_DEV_GPU_UTIL{%s,gpu="0"}', 37, "GPU_UTIL in %"),
    ('DCGM_FI_DEV_MEM_COPY_UTIL{%s,gpu="0"}', 20, "MEM_COPY_UTIL in %"),
]:
    v = one(expr % JOB)
    report(v is not None and abs(v - want) < 1e-6 * max(1, want), "%s: %s = %s" % (what, expr % JOB, v))
e = one('DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{%s,gpu="0"}' % JOB)
t = time.time() - epoch
# the scenario's energy ramps from 1e9 mJ (NVML's unit) by 300 J/s: dcgm-exporter's mJ are NVML's
report(e is not None and 1e9 <= e <= 1e9 + 300e3 * (t + 1),
       "TOTAL_ENERGY_CONSUMPTION in mJ (%s at scenario time %.1f)" % (e, t))
r = q('DCGM_FI_DEV_GPU_TEMP{%s,gpu="0"}' % JOB)
want = {"__name__": "DCGM_FI_DEV_GPU_TEMP", "gpu": "0", "UUID": "GPU-5e4b0c1a-2d3f-4a5b-8c6d-7e8f90a1b2c3",
        "pci_bus_id": "00000000:18:00.0", "device": "nvidia0", "modelName": "NVIDIA H100 80GB HBM3",
        "DCGM_FI_DRIVER_VERSION": "590.48.01", "job": "dcgm", "instance": addr}
got = dict(r[0][0]) if len(r) == 1 else {}
host = got.pop("Hostname", None)
job = got.pop("hpc_job", None)
report(got == want and host, "dcgm-exporter's labels: gpu, UUID, pci_bus_id, device, modelName, Hostname, "
       "DCGM_FI_DRIVER_VERSION", json.dumps(r))
# process 1001 on GPU 0 runs in Slurm job 77 (tests/fixtures/dcgm-proc); GPU 1's process in none
if "hpc_job=" in get("http://%s/metrics" % addr) or job is not None:
    r1 = q('DCGM_FI_DEV_GPU_TEMP{%s,gpu="1"}' % JOB)
    report(job == "77" and len(r1) == 1 and "hpc_job" not in r1[0][0],
           'hpc_job="77" on the series of the GPU the job runs on, and only there', json.dumps(r + r1))
else:
    report(False, "hpc_job label", skip="no process has a Slurm job yet (needs the attrib part: "
           "Slurm job from the cgroup)")
if exported("DCGM_FI_DEV_XID_ERRORS"):
    x = None
    deadline = time.time() + 10
    while time.time() < deadline and x != 79:
        x = one('DCGM_FI_DEV_XID_ERRORS{%s,gpu="0"}' % JOB)
        time.sleep(0.5)
    report(x == 79 and one('DCGM_FI_DEV_XID_ERRORS{%s,gpu="1"}' % JOB) in (0, None),
           "XID_ERRORS: the last Xid of GPU 0 (79)", x)
else:
    report(False, "XID_ERRORS", skip="DCGM_FI_DEV_XID_ERRORS is not exported (needs NVML Xid events)")
ts = [t for t in api("/api/v1/targets")["activeTargets"] if t["labels"].get("job") == "dcgm"]
report(len(ts) == 1 and ts[0]["health"] == "up" and ts[0]["lastError"] == "",
       "the target is up with no scrape error", ts)
EOF
prc=$?
if [ -f "$tmp/py-count" ]; then
	read -r n pyfail <"$tmp/py-count"
	fail=$((fail + pyfail))
fi
if [ "$prc" -ne 0 ]; then
	not_ok "the Prometheus checks stopped half-way (python exit $prc)" "$tmp/prometheus.log"
fi
if ! kill -0 "$serve_pid" 2>/dev/null; then
	not_ok "serve died during the test" "$tmp/serve.err"
else
	ok "serve ran throughout"
fi

# 6. the default names: the job's series keyed by job, not pid
: >"$tmp/serve2.err"
GPUSCOPE_NVML=$fake FAKE_NVML_SCENARIO=tests/scenarios/dcgm.scn FAKE_NVML_EPOCH=$epoch \
	GPUSCOPE_PROC_ROOT=tests/fixtures/dcgm-proc GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty \
	GPUSCOPE_PASSWD=tests/fixtures/passwd \
	"$bin" serve --listen 127.0.0.1:0 -d 0.5 >/dev/null 2>"$tmp/serve2.err" &
serve_pid="$serve_pid $!"
i=0 addr2=""
while [ -z "$addr2" ] && [ "$i" -lt 100 ]; do
	addr2=$(sed -n 's|^gpuscope serve: listening on http://\([0-9.]*:[0-9][0-9]*\)/.*|\1|p' "$tmp/serve2.err")
	i=$((i + 1))
	sleep 0.1
done
i=0
while [ -n "$addr2" ] && [ "$i" -lt 100 ]; do
	curl -s -o "$tmp/default.txt" "http://$addr2/metrics"
	grep -q '^gpuscope_gpu_up' "$tmp/default.txt" && break
	i=$((i + 1))
	sleep 0.1
done
# 30000 MiB of process 1001, in job 77 on GPU 0
if grep -q '^gpuscope_job_gpu_memory_bytes{gpu="0",uuid="GPU-5e4b0c1a-2d3f-4a5b-8c6d-7e8f90a1b2c3",hpc_job="77"} 31457280000$' "$tmp/default.txt" &&
	grep -q '^gpuscope_gpu_allocation{gpu="0",uuid="GPU-5e4b0c1a-2d3f-4a5b-8c6d-7e8f90a1b2c3",hpc_job="77",source="process"} 1$' "$tmp/default.txt" &&
	! grep -q '^DCGM_' "$tmp/default.txt"; then
	ok "default names: gpuscope_job_gpu_memory_bytes and gpuscope_gpu_allocation of job 77, no DCGM_ family"
else
	not_ok "default names: the job's series" "$tmp/serve2.err" "$tmp/default.txt"
fi

# 7. AMD and Intel (fixture sysfs, no NVML) under the same names: the dashboard's panels
# that have a meaning there
vendor_check() { # FIXTURE WHAT METRIC...
	fixture_root=$1 what=$2
	shift 2
	: >"$tmp/v.err"
	GPUSCOPE_NVML=/nonexistent GPUSCOPE_PASSWD=tests/fixtures/passwd \
		"$bin" --root "$fixture_root" serve --names dcgm --listen 127.0.0.1:0 >/dev/null 2>"$tmp/v.err" &
	vpid=$!
	serve_pid="$serve_pid $vpid"
	i=0 vaddr=""
	while [ -z "$vaddr" ] && [ "$i" -lt 100 ]; do
		vaddr=$(sed -n 's|^gpuscope serve: listening on http://\([0-9.]*:[0-9][0-9]*\)/.*|\1|p' "$tmp/v.err")
		i=$((i + 1))
		sleep 0.1
	done
	missing="" i=0
	while [ -n "$vaddr" ] && [ "$i" -lt 50 ]; do
		curl -s -o "$tmp/v.txt" "http://$vaddr/metrics"
		missing=""
		for m in "$@"; do
			grep -q "^$m{gpu=\"[0-9]*\",.*device=\"card[0-9]*\"" "$tmp/v.txt" || missing="$missing $m"
		done
		[ -z "$missing" ] && break
		i=$((i + 1))
		sleep 0.1
	done
	kill "$vpid" 2>/dev/null
	wait "$vpid" 2>/dev/null
	if [ -n "$vaddr" ] && [ -z "$missing" ]; then
		ok "$what under dcgm-exporter's names:$(printf ' %s' "$@" | sed 's/DCGM_FI_DEV_//g')"
	else
		not_ok "$what under dcgm-exporter's names: missing$missing" "$tmp/v.err" "$tmp/v.txt"
	fi
}
vendor_check tests/fixtures/amd-dgpu "AMD Radeon RX 7800 XT" DCGM_FI_DEV_GPU_TEMP \
	DCGM_FI_DEV_POWER_USAGE DCGM_FI_DEV_SM_CLOCK DCGM_FI_DEV_GPU_UTIL DCGM_FI_DEV_FB_USED \
	DCGM_FI_DEV_FB_FREE DCGM_FI_DEV_MEM_CLOCK DCGM_FI_DEV_PCIE_REPLAY_COUNTER
vendor_check tests/fixtures/intel-xe "Intel (xe)" DCGM_FI_DEV_GPU_TEMP DCGM_FI_DEV_POWER_USAGE \
	DCGM_FI_DEV_SM_CLOCK DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION

# 8. MIG (tests/scenarios/mig.scn): each GPU instance a series of its own, labelled with its
# parent GPU and GPU_I_PROFILE / GPU_I_ID, as dcgm-exporter
: >"$tmp/mig.err"
GPUSCOPE_NVML=$fake FAKE_NVML_SCENARIO=tests/scenarios/mig.scn \
	GPUSCOPE_PROC_ROOT=tests/fixtures/proc GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty \
	GPUSCOPE_PASSWD=tests/fixtures/passwd \
	"$bin" serve --names dcgm --listen 127.0.0.1:0 >/dev/null 2>"$tmp/mig.err" &
mpid=$!
serve_pid="$serve_pid $mpid"
i=0 maddr=""
while [ -z "$maddr" ] && [ "$i" -lt 100 ]; do
	maddr=$(sed -n 's|^gpuscope serve: listening on http://\([0-9.]*:[0-9][0-9]*\)/.*|\1|p' "$tmp/mig.err")
	i=$((i + 1))
	sleep 0.1
done
i=0
while [ -n "$maddr" ] && [ "$i" -lt 50 ]; do
	curl -s -o "$tmp/mig.txt" "http://$maddr/metrics"
	grep -q '^DCGM_FI_DEV_FB_USED' "$tmp/mig.txt" && break
	i=$((i + 1))
	sleep 0.1
done
kill "$mpid" 2>/dev/null
wait "$mpid" 2>/dev/null
mig_ids=$(sed -n 's/^DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-44444444-5555-6666-7777-888888888888",.*GPU_I_PROFILE="\([^"]*\)",GPU_I_ID="\([0-9]*\)".*/\1:\2/p' "$tmp/mig.txt" | sort | tr '\n' ' ')
# one FB_USED series only: the collector made no MIG device (the mig part of the work)
if [ "$(grep -c '^DCGM_FI_DEV_FB_USED{' "$tmp/mig.txt")" = 1 ]; then
	not_ok "MIG instances: the collector lists no MIG device" "$tmp/mig.txt"
elif [ -n "$mig_ids" ]; then
	ok "MIG: FB_USED per GPU instance, with the parent's gpu and UUID: $mig_ids"
else
	not_ok "MIG: no FB_USED series with GPU_I_PROFILE and GPU_I_ID" "$tmp/mig.err" "$tmp/mig.txt"
fi
echo "1..$n"
[ "$fail" -eq 0 ]
