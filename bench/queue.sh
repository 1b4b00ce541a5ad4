#!/bin/sh
# The gpuscope queue benchmark: N short jobs (`true`) through a daemon of its
# own on the fake NVML (tests/scenarios/queue.scn, 4 GPUs), submitted by P
# parallel submitters with the real client (one `gpuscope queue submit`
# process per job), in two variants: --gpus 0 (CPU jobs: the queue's own
# cost) and --gpus 1 (each job given a GPU exclusively, so at most 4 run at
# once and every start waits for a GPU to come back). A report, not a test.
#
#   bench/queue.sh [N [P]]     N jobs per variant (default 10000), P submitters (default 8)
#   BENCH_IDLE=S               seconds the idle daemon is watched (default 10)
#   BENCH_VARIANTS="0 1"       which --gpus variants run
#
# Measured: submit-to-start latency (the daemon's own submit_time and
# start_time of each job, from `queue history --json`) median, p95 and max;
# throughput (jobs/s from the first submission to the last job's end, and
# submissions/s as the clients saw them); the daemon's CPU (utime + stime
# of /proc/PID/stat) and RSS (VmRSS, and VmHWM) idle for BENCH_IDLE seconds
# and under the load. Must run as root (jobs run in cgroups). The report goes
# to stdout and $O/bench/queue-report.txt.
top=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-10000}
P=${2:-8}
IDLE=${BENCH_IDLE:-10}
VARIANTS=${BENCH_VARIANTS:-0 1}
# shellcheck source=tests/queue/lib.sh
. "$top/tests/queue/lib.sh"
q_require
# the bench's history must hold every job: keep them all
q_conf "history_keep = 30d" "max_queued_jobs = 0" "max_clients = 256"
q_start || exit 1
mkdir -p "$obin/bench"
report=$obin/bench/queue-report.txt
hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$qd/stat"; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$qd/status"; }
hwm_kib() { awk '/^VmHWM:/ { print $2 }' "/proc/$qd/status"; }
now() { date +%s.%N; }

{
	echo "gpuscope queue benchmark: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n1)), $(uname -r)"
	echo "N=$N jobs per variant, P=$P submitters, sample_interval 0.2 s, fake NVML with 4 GPUs"
} | tee "$report"

# --- idle
sleep 2
c0=$(cpu_ticks)
t0=$(now)
sleep "$IDLE"
c1=$(cpu_ticks)
t1=$(now)
idle_cpu=$(awk -v a="$c0" -v b="$c1" -v t0="$t0" -v t1="$t1" -v hz="$hz" 'BEGIN { printf "%.2f", 100 * (b - a) / hz / (t1 - t0) }')
idle_rss=$(rss_kib)
echo "idle ${IDLE} s: daemon CPU ${idle_cpu}% of one core, RSS ${idle_rss} KiB" | tee -a "$report"

rows=""
for v in $VARIANTS; do
	# --- load
	per=$((N / P))
	extra=$((N - per * P))
	: >"$tmp/rss.$v"
	(while kill -0 "$qd" 2>/dev/null; do rss_kib >>"$tmp/rss.$v"; sleep 1; done) &
	sampler=$!
	c0=$(cpu_ticks)
	t0=$(now)
	i=1
	subpids=""
	while [ $i -le "$P" ]; do
		cnt=$per
		[ $i -eq 1 ] && cnt=$((per + extra))
		(
			k=0
			while [ $k -lt "$cnt" ]; do
				"$bin" queue submit --socket "$sock" --parsable --gpus "$v" -- true || echo "submit failed" >&2
				k=$((k + 1))
			done >"$tmp/ids.$v.$i" 2>"$tmp/err.$v.$i"
		) &
		subpids="$subpids $!"
		i=$((i + 1))
	done
	for f in $subpids; do wait "$f"; done
	t_sub=$(now)
	# every job ended?
	while :; do
		left=$(q ls --json --all 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(len([j for j in d["jobs"] if j["state"] not in ("done", "failed", "cancelled", "timeout")]))' 2>/dev/null)
		[ "$left" = 0 ] && break
		kill -0 "$qd" 2>/dev/null || { echo "the daemon died" | tee -a "$report"; exit 1; }
		sleep 1
	done
	t_end=$(now)
	c1=$(cpu_ticks)
	kill "$sampler" 2>/dev/null
	wait "$sampler" 2>/dev/null
	cat "$tmp"/ids."$v".* >"$tmp/ids.$v"
	q history --json --all -n $((N * 3)) >"$tmp/hist.$v" 2>"$tmp/hist.$v.err"
	row=$(python3 - "$tmp/ids.$v" "$tmp/hist.$v" "$t0" "$t_sub" "$t_end" "$c0" "$c1" "$hz" "$tmp/rss.$v" "$(hwm_kib)" "$v" <<'EOF'
import json, sys
ids_f, hist_f, t0, t_sub, t_end, c0, c1, hz, rss_f, hwm, v = sys.argv[1:]
t0, t_sub, t_end = float(t0), float(t_sub), float(t_end)
ids = [int(l) for l in open(ids_f) if l.strip()]
h = {j["id"]: j for j in json.load(open(hist_f))["jobs"]}
lat, states = [], {}
for i in ids:
    j = h.get(i)
    if not j:
        states["missing"] = states.get("missing", 0) + 1
        continue
    states[j["state"]] = states.get(j["state"], 0) + 1
    if j.get("start_time") and j.get("submit_time"):
        lat.append(j["start_time"] - j["submit_time"])
lat.sort()
def pct(p):
    return lat[min(len(lat) - 1, int(p * len(lat)))] * 1000 if lat else float("nan")
rss = [int(l) for l in open(rss_f) if l.strip()]
cpu = (int(c1) - int(c0)) / int(hz)
wall = t_end - t0
print("--gpus %s %7d %9.1f %9.1f %9.1f %8.1f %8.1f %7.1f %6.1f%% %8d %8s  %s" % (
    v, len(ids), pct(0.5), pct(0.95), (lat[-1] * 1000 if lat else float("nan")),
    len(ids) / (t_sub - t0), len(ids) / wall, wall, 100 * cpu / wall,
    max(rss) if rss else 0, hwm, " ".join("%s=%d" % kv for kv in sorted(states.items()))))
EOF
)
	rows="$rows
$row"
	echo "$row" | tee -a "$report"
done
{
	echo
	echo "variant     jobs  p50 ms    p95 ms    max ms   sub/s   jobs/s  wall s  d.CPU  RSS KiB  HWM KiB  states"
	echo "$rows" | sed '/^$/d'
	echo "(latency: the daemon's start_time - submit_time; sub/s: as the $P clients saw it;"
	echo " jobs/s: from the first submission to the last end; d.CPU: the daemon's CPU over the wall time,"
	echo " RSS: the largest of one-second samples; idle: ${idle_cpu}% CPU, ${idle_rss} KiB over ${IDLE} s)"
	idle2=$(rss_kib)
	echo "after the load: RSS ${idle2} KiB"
} | tee -a "$report"
q_stop TERM
