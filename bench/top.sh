#!/usr/bin/env bash
# What 'gpuscope top' costs while it runs, side by side with nvitop: each
# runs for a minute at a one-second interval in a private tmux server, on
# the fake NVML library with BENCH_GPUS (8) busy H100s and BENCH_PROCS
# (1000) GPU processes (sleeping children of this script, so both tools
# find each of them in the real /proc).
#
#   bench/top.sh [ROUNDS]     (default 3; or BENCH_ROUNDS=N)
#   O=build-x bench/top.sh    (the build directory; default build)
#
# For each tool and round: the average CPU % of its process over the
# minute (utime + stime from /proc/PID/stat, over wall time, counted from
# its first frame) and its peak RSS (VmHWM from /proc/PID/status), plus
# the lines of processes it shows (a check that it sees them). The rounds
# alternate the tools; the report gives each round and the medians. Also
# written to $O/bench/top-report.txt, with the last screen of each tool.
# Exit status 0 when it ran: the figures are a report, not a test.
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
ROUNDS=${1:-${BENCH_ROUNDS:-3}}
GPUS=${BENCH_GPUS:-8}
PROCS=${BENCH_PROCS:-1000}
SECONDS_PER_RUN=${BENCH_SECONDS:-60}
O=${O:-build}
OUT=$O/bench
VENV=$O/bench-venv
FAKE=$PWD/$O/fakenvml/current/libnvidia-ml.so.1
BIN=$PWD/$O/gpuscope
# the pins of bench/status.sh
PINS="gpustat==1.1.1 nvitop==1.7.2 nvidia-ml-py==13.615.71 psutil==7.2.2"
SOCK=gpuscope-bench-top-$$

case $ROUNDS in
'' | *[!0-9]*)
	echo "usage: bench/top.sh [ROUNDS]" >&2
	exit 2
	;;
esac
[ "$ROUNDS" -ge 1 ] || {
	echo "bench/top.sh: ROUNDS must be at least 1" >&2
	exit 2
}
command -v tmux >/dev/null 2>&1 || {
	echo "bench/top.sh: needs tmux (apt-get install tmux)" >&2
	exit 1
}
if [ ! -x "$BIN" ] || [ ! -f "$FAKE" ]; then
	echo "== building (make O=$O all)"
	make --no-print-directory O="$O" all >/dev/null
fi
mkdir -p "$OUT"

if [ ! -x "$VENV/bin/nvitop" ] || [ "$(cat "$VENV/.bench-pins" 2>/dev/null)" != "$PINS" ]; then
	echo "== creating $VENV ($PINS)"
	rm -rf "$VENV"
	python3 -m venv "$VENV"
	# shellcheck disable=SC2086
	"$VENV/bin/pip" install --quiet --disable-pip-version-check $PINS
	echo "$PINS" >"$VENV/.bench-pins"
fi

PIDS=()
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	tmux -L "$SOCK" kill-server 2>/dev/null || true
	stop_sleepers
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_sleepers "$PROCS" "$OUT/top-pids"
SCN=$PWD/$OUT/top-h100x${GPUS}-${PROCS}.scn
python3 bench/make-scenario.py --gpus "$GPUS" --procs "$PROCS" --pids-file "$OUT/top-pids" \
	-o "$SCN" >/dev/null

printf 'set -g status off\nset -g default-terminal screen\n' >"$OUT/tmux.conf"
HZ=$(getconf CLK_TCK)

# cpu_ticks PID: utime + stime
cpu_ticks() {
	sed -e 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# run_one NAME: one minute of one tool; prints "cpu_percent hwm_kib rows"
run_one() {
	local name=$1 cmd pid t0 t1 c0 c1 hwm rows
	case $name in
	gpuscope)
		cmd="exec env GPUSCOPE_NVML='$FAKE' '$BIN' top -d 1"
		;;
	nvitop)
		cmd="exec env LD_LIBRARY_PATH='$(dirname "$FAKE")' '$PWD/$VENV/bin/nvitop' -m full --interval 1"
		;;
	esac
	cat >"$OUT/top-run.sh" <<EOF
#!/bin/sh
unset NO_COLOR GPUSCOPE_PROC_ROOT GPUSCOPE_SYSFS_ROOT GPUSCOPE_ROOT FAKE_NVML_TIME FAKE_NVML_LOG
export FAKE_NVML_SCENARIO='$SCN' LANG=C.UTF-8 LC_ALL=C.UTF-8
echo \$\$ >'$OUT/top-pid'
$cmd
EOF
	chmod 755 "$OUT/top-run.sh"
	rm -f "$OUT/top-pid"
	tmux -L "$SOCK" -f "$OUT/tmux.conf" new-session -d -x 200 -y 50 "$OUT/top-run.sh"
	for _ in $(seq 100); do
		[ -s "$OUT/top-pid" ] && break
		sleep 0.1
	done
	pid=$(cat "$OUT/top-pid")
	# from the first frame that lists processes
	for _ in $(seq 300); do
		if tmux -L "$SOCK" capture-pane -p | grep -q 'sleep'; then
			break
		fi
		sleep 0.1
	done
	t0=$(date +%s.%N)
	c0=$(cpu_ticks "$pid")
	sleep "$SECONDS_PER_RUN"
	t1=$(date +%s.%N)
	c1=$(cpu_ticks "$pid")
	hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")
	tmux -L "$SOCK" capture-pane -p >"$OUT/top-screen-$name.txt"
	rows=$(grep -c 'sleep' "$OUT/top-screen-$name.txt" || true)
	tmux -L "$SOCK" send-keys q
	for _ in $(seq 50); do
		[ -d "/proc/$pid" ] || break
		sleep 0.1
	done
	tmux -L "$SOCK" kill-server 2>/dev/null || true
	awk -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" -v hz="$HZ" -v hwm="$hwm" -v r="$rows" \
		'BEGIN { printf "%.2f %d %d\n", (c1 - c0) / hz / (t1 - t0) * 100, hwm, r }'
}

median_stdin() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "== $ROUNDS rounds of ${SECONDS_PER_RUN} s per tool, $GPUS GPUs, $PROCS processes, interval 1 s, 200x50"
: >"$OUT/top-results.txt"
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then order="gpuscope nvitop"; else order="nvitop gpuscope"; fi
	for name in $order; do
		res=$(run_one "$name")
		echo "$name $res" >>"$OUT/top-results.txt"
		printf '   round %d %-8s  CPU %6s %%   peak RSS %6.1f MiB   process lines on screen %s\n' \
			"$r" "$name" "$(echo "$res" | cut -d' ' -f1)" \
			"$(echo "$res" | awk '{ print $2 / 1024 }')" "$(echo "$res" | cut -d' ' -f3)"
	done
done

{
	echo "gpuscope top vs nvitop: $GPUS GPUs, $PROCS processes (fake NVML, real /proc),"
	echo "interval 1 s, 200x50 tmux pane, ${SECONDS_PER_RUN} s per run, $ROUNDS rounds (medians)"
	echo "machine: $(nproc) CPUs, $(uname -sr); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
	printf '%-10s %14s %16s\n' tool "CPU % (avg)" "peak RSS (MiB)"
	for name in gpuscope nvitop; do
		cpu=$(awk -v n="$name" '$1 == n { print $2 }' "$OUT/top-results.txt" | median_stdin)
		rss=$(awk -v n="$name" '$1 == n { print $3 / 1024 }' "$OUT/top-results.txt" | median_stdin)
		printf '%-10s %14.2f %16.1f\n' "$name" "$cpu" "$rss"
	done
	echo "command: O=$O bench/top.sh $ROUNDS"
} | tee "$OUT/top-report.txt"
