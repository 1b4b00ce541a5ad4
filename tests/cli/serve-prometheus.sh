#!/bin/sh
# gpuscope serve scraped by a real Prometheus server. serve runs on the fake
# NVML library with tests/scenarios/serve.scn (three GPUs whose readings
# change at scenario time 14, processes from tests/fixtures/proc, GPU 2 lost at
# time 20); a Prometheus of its own (temp config and storage, scrape interval
# 1 s, the target handed over through a file_sd file once serve is listening)
# scrapes it, and the values read back through Prometheus's query API must be
# the scenario's: bytes, watts, celsius, ratios 0-1, a rising energy counter,
# the GPU labels, the process series with pid/user/command, gpuscope_gpu_up 0
# and gpuscope_gpu_state{state="lost"} for the lost GPU while the others keep
# being served, the target up with no scrape error (Prometheus asks for
# OpenMetrics first) and quick scrapes. The exposition itself must pass
# 'promtool check metrics', and OpenMetrics must be served when asked for.
# Skipped when the binary, python3, prometheus or promtool is missing.
# Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
bin=$O/gpuscope
fake=$O/fakenvml/current/libnvidia-ml.so.1
for need in prometheus promtool python3 curl; do
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

# 1. Prometheus, with an empty list of targets for now
start_prometheus gpuscope

# 2. serve on the fake library; scenario time 0 is now
: >"$tmp/serve.err" # there before the first look at it
epoch=$(python3 -c 'import time; print("%.3f" % time.time())')
GPUSCOPE_NVML=$fake FAKE_NVML_SCENARIO=tests/scenarios/serve.scn FAKE_NVML_EPOCH=$epoch \
	GPUSCOPE_PROC_ROOT=tests/fixtures/proc GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty \
	GPUSCOPE_PASSWD=tests/fixtures/passwd \
	"$bin" serve --listen 127.0.0.1:0 -d 0.5 >"$tmp/serve.out" 2>"$tmp/serve.err" &
serve_pid=$!
i=0 addr=""
while [ -z "$addr" ]; do
	addr=$(sed -n 's|^gpuscope serve: listening on http://\([0-9.]*:[0-9][0-9]*\)/.*|\1|p' "$tmp/serve.err")
	[ -n "$addr" ] && break
	i=$((i + 1))
	if [ "$i" -gt 100 ] || ! kill -0 "$serve_pid" 2>/dev/null; then
		bail "serve --listen 127.0.0.1:0 did not say where it listens within 10 s" "$tmp/serve.err"
	fi
	sleep 0.1
done
case $addr in
*:0) not_ok "serve says it listens on port 0 ($addr)" ;;
*) ok "serve --listen 127.0.0.1:0 listens on $addr" ;;
esac
printf '[{"targets": ["%s"], "labels": {}}]\n' "$addr" >"$tmp/targets.json.new"
mv "$tmp/targets.json.new" "$tmp/targets.json"

# 3. the exposition itself
code=$(curl -s -o "$tmp/metrics.txt" -D "$tmp/metrics.hdr" -w '%{http_code}' "http://$addr/metrics")
if [ "$code" = 200 ] && grep -qi '^content-type: text/plain; version=0.0.4' "$tmp/metrics.hdr"; then
	ok "GET /metrics: 200, text/plain; version=0.0.4"
else
	not_ok "GET /metrics: $code" "$tmp/metrics.hdr"
fi
promtool check metrics <"$tmp/metrics.txt" >"$tmp/lint" 2>&1
rc=$?
# promtool exits 1 when it cannot parse the exposition, 3 when it finds lint
# problems. Every lint rule checks a convention docs/metrics.md promises
# (HELP on every family, _total on counters only, base units, snake_case), so
# every finding counts.
if [ "$rc" -eq 0 ] && [ ! -s "$tmp/lint" ]; then
	ok "promtool check metrics: no problem"
else
	not_ok "promtool check metrics: exit $rc" "$tmp/lint"
fi
curl -s -o "$tmp/om.txt" -D "$tmp/om.hdr" -H 'Accept: application/openmetrics-text; version=1.0.0' "http://$addr/metrics"
if grep -qi '^content-type: application/openmetrics-text; version=1.0.0' "$tmp/om.hdr" &&
	[ "$(tail -n 1 "$tmp/om.txt")" = "# EOF" ] && [ "$(tail -c 1 "$tmp/om.txt" | od -An -c | tr -d ' ')" = '\n' ]; then
	ok "Accept: application/openmetrics-text: OpenMetrics 1.0.0, ending in '# EOF'"
else
	not_ok "Accept: application/openmetrics-text" "$tmp/om.hdr"
	tail -n 3 "$tmp/om.txt" | sed 's/^/# tail: /'
fi
if grep -q '^# TYPE gpuscope_gpu_energy_joules counter$' "$tmp/om.txt" &&
	grep -q '^gpuscope_gpu_energy_joules_total{' "$tmp/om.txt" &&
	grep -q '^# TYPE gpuscope_gpu_energy_joules_total counter$' "$tmp/metrics.txt"; then
	ok "OpenMetrics names a counter's family without _total, the text format with it"
else
	not_ok "counter family names in OpenMetrics / text" "$tmp/om.txt"
fi
# what Prometheus 2.x sends; and plain text/plain
curl -s -o /dev/null -D "$tmp/neg.hdr" \
	-H 'Accept: application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1' \
	"http://$addr/metrics"
curl -s -o /dev/null -D "$tmp/plain.hdr" -H 'Accept: text/plain' "http://$addr/metrics"
if grep -qi '^content-type: application/openmetrics-text; version=1.0.0' "$tmp/neg.hdr" &&
	grep -qi '^content-type: text/plain; version=0.0.4' "$tmp/plain.hdr"; then
	ok "Prometheus's Accept header gets OpenMetrics, Accept: text/plain the text format"
else
	not_ok "content negotiation" "$tmp/neg.hdr" "$tmp/plain.hdr"
fi
code=$(curl -s -o "$tmp/healthz" -w '%{http_code}' "http://$addr/healthz")
if [ "$code" = 200 ]; then ok "/healthz: 200"; else not_ok "/healthz: $code" "$tmp/healthz"; fi

# 4. what Prometheus stored
python3 - "$prom" "$addr" "$epoch" "$n" "$tmp" <<'EOF'
import json
import sys
import time
import urllib.parse
import urllib.request

prom, addr, epoch, n, tmp = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
MIB = 1024 * 1024
fail = 0
JOB = 'job="gpuscope"'


def ok(cond, what, detail=None):
    global n, fail
    n += 1
    if not cond:
        fail += 1
    with open(tmp + "/py-count", "w") as f:  # so far, should this script stop half-way
        f.write("%d %d\n" % (n, fail))
    if cond:
        print("ok %d - %s" % (n, what))
    else:
        print("not ok %d - %s" % (n, what))
        if detail is not None:
            for line in str(detail).splitlines()[:20]:
                print("# " + line)
    sys.stdout.flush()
    return cond


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def api(path, **params):
    d = json.loads(get(prom + path + "?" + urllib.parse.urlencode(params)))
    if d.get("status") != "success":
        raise RuntimeError("%s: %s" % (path, d))
    return d["data"]


def q(expr, t=None):
    """Instant query: list of (labels, value)."""
    params = {"query": expr}
    if t is not None:
        params["time"] = "%.3f" % t
    data = api("/api/v1/query", **params)
    return [(r["metric"], float(r["value"][1])) for r in data["result"]]


def one(expr, t=None):
    """The value of an expression that must give one series; None otherwise."""
    r = q(expr, t)
    return r[0][1] if len(r) == 1 else None


def stime():
    return time.time() - epoch


def target():
    ts = [t for t in api("/api/v1/targets")["activeTargets"] if t["labels"].get("job") == "gpuscope"]
    return ts[0] if len(ts) == 1 else None


def near(a, b, tol=1e-9):
    return a is not None and abs(a - b) <= tol * max(1.0, abs(b))


# the target is found and scraped
deadline = time.time() + 20
t = None
while time.time() < deadline:
    t = target()
    if t and t["health"] == "up":
        break
    time.sleep(0.2)
ok(t is not None and t["health"] == "up",
   "Prometheus scrapes the target (up %.1f s after serve started)" % stime(), json.dumps(t))

# wait for the loss of GPU 2 (scenario time 20) to reach Prometheus
lost_at = None
while stime() < 45:
    if stime() > 20 and one('gpuscope_gpu_up{%s,gpu="2"}' % JOB) == 0:
        lost_at = time.time()
        break
    time.sleep(0.25)
ok(lost_at is not None, "gpuscope_gpu_up of GPU 2 goes to 0 after the scenario loses it "
   "(scenario time %.1f, lost at 20)" % stime())
time.sleep(2.5)  # a few more scrapes after the loss
now = time.time()
# Readings change at scenario time 14. A sample Prometheus stored at 13 or before was
# collected before 14 whenever it was scraped; one stored at 18 was scraped after 17 and
# collected at 16.5 or later (collections every 0.5 s, scrapes every second), before the loss.
before, after = epoch + 13, epoch + 18

# the target
t = target()
ok(t is not None and t["health"] == "up" and t["lastError"] == "",
   "the target is up with no scrape error (Prometheus negotiates OpenMetrics first)", json.dumps(t))
ok(one("up{%s}" % JOB) == 1, "up{%s} == 1" % JOB)
ok(one("min_over_time(up{%s}[1m])" % JOB) == 1, "no scrape failed since the first")
sd = one("scrape_duration_seconds{%s}" % JOB)
sdmax = one("max_over_time(scrape_duration_seconds{%s}[1m])" % JOB)
ok(sd is not None and sd < 0.1, "scrape_duration_seconds %.4f < 0.1 (max over the run %.4f)"
   % (sd if sd is not None else -1, sdmax if sdmax is not None else -1))
# no sample dropped: duplicates, out of order, out of bounds
pm = {}
for line in get(prom + "/metrics").splitlines():
    if line.startswith("prometheus_target_scrapes_"):
        name, _, v = line.rpartition(" ")
        pm[name] = float(v)
bad = {k: v for k, v in pm.items() if v != 0}
ok(pm and not bad, "Prometheus dropped no sample (prometheus_target_scrapes_* all 0)", bad)
# Prometheus stored every sample of the exposition
scraped = one("scrape_samples_scraped{%s}" % JOB)
text = get("http://%s/metrics" % addr)
lines = [line for line in text.splitlines() if line and not line.startswith("#")]
ok(scraped == len(lines), "scrape_samples_scraped %s == %d sample lines of /metrics" % (scraped, len(lines)))

# labels of each GPU
want = {
    "0": {"uuid": "GPU-5e4b0c1a-2d3f-4a5b-8c6d-7e8f90a1b2c3", "pci_bus_id": "00000000:18:00.0",
          "name": "NVIDIA H100 80GB HBM3"},
    "1": {"uuid": "GPU-a1b2c3d4-e5f6-4708-9a1b-2c3d4e5f6071", "pci_bus_id": "00000000:3B:00.0",
          "name": "NVIDIA A100-SXM4-40GB"},
    "2": {"uuid": "GPU-0f1e2d3c-4b5a-4968-8776-655443322110", "pci_bus_id": "00000000:5D:00.0",
          "name": "NVIDIA L4"},
}
for g, w in want.items():
    w = dict(w, gpu=g, vendor="nvidia", driver="nvidia", job="gpuscope", instance=addr,
             __name__="gpuscope_gpu_temperature_gpu_celsius")
    r = q('gpuscope_gpu_temperature_gpu_celsius{%s,gpu="%s"}' % (JOB, g), after)
    ok(len(r) == 1 and r[0][0] == w, "GPU %s: labels gpu, uuid, pci_bus_id, name, vendor, driver" % g,
       r and json.dumps(r[0][0], sort_keys=True))
r = q('gpuscope_gpu_info{%s,gpu="0"}' % JOB)
ok(len(r) == 1 and r[0][1] == 1 and r[0][0].get("serial") == "1652323007001"
   and r[0][0].get("vbios") == "96.00.A5.00.01" and r[0][0].get("driver_version") == "590.48.01",
   "gpuscope_gpu_info: 1, with serial, vbios, driver_version", r)
ok(one("gpuscope_gpus{%s}" % JOB) == 3, "gpuscope_gpus == 3")

# readings before and after scenario time 14
ts = one("timestamp(gpuscope_gpus{%s})" % JOB, before)
late = ("none: it began too late; Prometheus 2's discovery and scrape managers may each "
        "wait 5 s before they scrape a new file_sd target")
ok(ts is not None, "Prometheus has a sample from before scenario time 13 "
   "(the latest of them at scenario time %s)" % ("%.1f" % (ts - epoch) if ts is not None else late))
checks = [
    ("gpuscope_gpu_memory_used_bytes", "0", 40000 * MIB, 60000 * MIB),
    ("gpuscope_gpu_memory_total_bytes", "0", 81559 * MIB, 81559 * MIB),
    ("gpuscope_gpu_memory_reserved_bytes", "0", 479 * MIB, 479 * MIB),
    ("gpuscope_gpu_power_draw_watts", "0", 300, 650.5),
    ("gpuscope_gpu_temperature_gpu_celsius", "0", 50, 70),
    ("gpuscope_gpu_utilization_gpu_ratio", "0", 0.37, 1.0),
    ("gpuscope_gpu_utilization_memory_ratio", "0", 0.20, 0.20),
    ("gpuscope_gpu_power_limit_watts", "0", 700, 700),
    ("gpuscope_gpu_clock_graphics_hertz", "0", 1755e6, 1755e6),
    ("gpuscope_gpu_memory_used_bytes", "1", 2048 * MIB, 2048 * MIB),
    ("gpuscope_gpu_utilization_gpu_ratio", "1", 0.05, 0.05),
    ("gpuscope_gpu_power_draw_watts", "1", 120, 120),
    ("gpuscope_gpu_temperature_gpu_celsius", "2", 40, 40),
]
for metric, g, v0, v1 in checks:
    a = one('%s{%s,gpu="%s"}' % (metric, JOB, g), before)
    b = one('%s{%s,gpu="%s"}' % (metric, JOB, g), after)
    ok(near(a, v0) and near(b, v1), "GPU %s %s: %s at t=13, %s at t=18 (got %s, %s)"
       % (g, metric, v0, v1, a, b))

# the energy counter: joules, growing at the scenario's 300 J/s and 120 J/s
for g, base, watts in (("0", 1000000, 300), ("1", 500000, 120)):
    e = 'gpuscope_gpu_energy_joules_total{%s,gpu="%s"}' % (JOB, g)
    a, b, c = one(e, before), one(e, after), one(e, now)
    ok(a is not None and b is not None and c is not None and base <= a < b < c <= base + watts * 60,
       "GPU %s energy counter rises (joules): %s < %s < %s" % (g, a, b, c))
    rate = one("rate(%s[6s])" % e, after)
    ok(rate is not None and 0.7 * watts < rate < 1.3 * watts,
       "GPU %s rate(energy) %s is about the scenario's %d J/s" % (g, rate, watts))

# processes
procs = {r[0]["pid"]: r for r in q("gpuscope_process_gpu_memory_bytes{%s}" % JOB, after)}
pw = {
    "1001": ({"gpu": "0", "uuid": want["0"]["uuid"], "user": "alice", "command": "python3"}, 50000 * MIB),
    "2002": ({"gpu": "1", "uuid": want["1"]["uuid"], "user": "root", "command": "tritonserver",
              "container": "635a3e8a6cfa"}, 1024 * MIB),
    "4004": ({"gpu": "1", "uuid": want["1"]["uuid"], "user": "bob", "command": "a) (b c",
              "container": "aea66f069d4f"}, 512 * MIB),
    "5005": ({"gpu": "2", "uuid": want["2"]["uuid"], "user": "root", "command": "ollama"}, 2900 * MIB),
}
ok(sorted(procs) == sorted(pw), "process series at t=18: pids %s" % sorted(procs))
for pid, (labels, v) in pw.items():
    r = procs.get(pid)
    got = r and {k: x for k, x in r[0].items() if k not in ("__name__", "job", "instance", "pid")}
    ok(r is not None and got == labels and r[1] == v,
       "process %s: labels gpu, uuid, user, command%s, %d bytes" % (pid, ", container" if "container" in labels else "", v),
       r and json.dumps(r, sort_keys=True))
a = one('gpuscope_process_gpu_memory_bytes{%s,pid="1001"}' % JOB, before)
ok(a == 30000 * MIB, "process 1001: 30000 MiB before scenario time 14 (got %s)" % a)
sm = {r[0]["pid"]: r[1] for r in q("gpuscope_process_sm_utilization_ratio{%s}" % JOB, after)}
ok(near(sm.get("1001"), 0.80) and near(sm.get("2002"), 0.05),
   "gpuscope_process_sm_utilization_ratio: 0.8 for 1001, 0.05 for 2002 (a ratio)", sm)

# the loss: GPU 2 is down and lost, the others keep being served
up = {r[0]["gpu"]: r[1] for r in q("gpuscope_gpu_up{%s}" % JOB)}
ok(up == {"0": 1, "1": 1, "2": 0}, "gpuscope_gpu_up: GPU 0 and 1 up, GPU 2 down", up)
st = [(r[0].get("gpu"), r[0].get("state"), r[1]) for r in q("gpuscope_gpu_state{%s}" % JOB)]
ok(st == [("2", "lost", 1)], 'gpuscope_gpu_state{gpu="2",state="lost"} 1 and no other state series', st)
ok(q('gpuscope_gpu_temperature_gpu_celsius{%s,gpu="2"}' % JOB) == []
   and q('gpuscope_gpu_energy_joules_total{%s,gpu="2"}' % JOB) == [],
   "the lost GPU has no readings any more")
ok(len(q('gpuscope_gpu_info{%s,gpu="2"}' % JOB)) == 1, "the lost GPU keeps its gpuscope_gpu_info")
ok(q('gpuscope_process_gpu_memory_bytes{%s,gpu="2"}' % JOB) == [],
   "the lost GPU's process is no longer exported")
ts = one('timestamp(gpuscope_gpu_temperature_gpu_celsius{%s,gpu="0"})' % JOB, now)
e0 = one('gpuscope_gpu_energy_joules_total{%s,gpu="0"}' % JOB, lost_at)
e1 = one('gpuscope_gpu_energy_joules_total{%s,gpu="0"}' % JOB, now)
ok(ts is not None and now - ts < 2.5 and e0 is not None and e1 is not None and e1 > e0,
   "GPU 0 is still scraped after the loss (last sample %.1f s old, energy %s -> %s)"
   % (now - ts if ts else -1, e0, e1))
ok(one('gpuscope_gpu_temperature_gpu_celsius{%s,gpu="1"}' % JOB) == 45, "GPU 1 still reads 45 C")
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
echo "1..$n"
[ "$fail" -eq 0 ]
