#!/usr/bin/env bash
# What 'gpuscope top' costs while it runs, side by side with nvtop and
# nvitop: each runs for a minute at a one-second interval in a private tmux server, on
# the fake NVML library with BENCH_GPUS (8) busy H100s and BENCH_PROCS
# (1000) GPU processes (sleeping children of this script, so both tools
# find each of them in the real /proc).
#
#   bench/top.sh [ROUNDS]     (default 3; or BENCH_ROUNDS=N)
#   O=build-x bench/top.sh    (the build directory; default build)
#   NVTOP_SRC=DIR bench/top.sh   (nvtop built from its source tree DIR, with
#                             cmake, NVIDIA only, into $O/bench/nvtop-build;
#                             without it, the nvtop on PATH; none: skipped)
#   BENCH_TOOLS="gpuscope nvtop" bench/top.sh   (only these)
#   BENCH_BEFORE=OLD/gpuscope bench/top.sh   (also another build's top, as
#                             the tool "before": before and after side by side)
#
# nvtop is a comparator only: it is built outside this tree from a source
# given here (e.g. a checkout of github.com/Syllo/nvtop at tag 3.3.2) and
# runs with LD_LIBRARY_PATH at the fake NVML library, as nvitop does.
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
TOOLS=${BENCH_TOOLS:-gpuscope nvtop nvitop}
BEFORE=${BENCH_BEFORE:-}
if [ -n "$BEFORE" ]; then
	[ -x "$BEFORE" ] || {
		echo "bench/top.sh: BENCH_BEFORE=$BEFORE is not a program" >&2
		exit 2
	}
	TOOLS="$TOOLS before"
fi

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
mkdir -p "$OUT" "$OUT/nvtop-home"

NVTOP=
case " $TOOLS " in
*" nvtop "*)
	if [ -n "${NVTOP_SRC:-}" ]; then
		NVTOP=$PWD/$OUT/nvtop-build/src/nvtop
		if [ ! -x "$NVTOP" ]; then
			echo "== building nvtop from $NVTOP_SRC (cmake, NVIDIA support only)"
			cmake -S "$NVTOP_SRC" -B "$OUT/nvtop-build" -DCMAKE_BUILD_TYPE=Release \
				-DNVIDIA_SUPPORT=ON -DAMDGPU_SUPPORT=OFF -DINTEL_SUPPORT=OFF -DMSM_SUPPORT=OFF \
				-DPANFROST_SUPPORT=OFF -DPANTHOR_SUPPORT=OFF -DASCEND_SUPPORT=OFF \
				-DV3D_SUPPORT=OFF -DTPU_SUPPORT=OFF >"$OUT/nvtop-cmake.log"
			cmake --build "$OUT/nvtop-build" -j "$(nproc)" >"$OUT/nvtop-build.log"
		fi
	elif command -v nvtop >/dev/null 2>&1; then
		NVTOP=$(command -v nvtop)
	fi
	if [ -z "$NVTOP" ]; then
		echo "== no nvtop (set NVTOP_SRC to its source, or install it): skipped"
		TOOLS=${TOOLS//nvtop/}
	else
		echo "== nvtop: $NVTOP ($("$NVTOP" --version 2>&1 | head -1))"
	fi
	;;
esac

case " $TOOLS " in
*" nvitop "*) ;;
*) VENV= ;;
esac
if [ -n "$VENV" ] && { [ ! -x "$VENV/bin/nvitop" ] || [ "$(cat "$VENV/.bench-pins" 2>/dev/null)" != "$PINS" ]; }; then
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
	before)
		cmd="exec env GPUSCOPE_NVML='$FAKE' '$BEFORE' top -d 1"
		;;
	nvtop)
		# -d: tenths of a second
		cmd="exec env LD_LIBRARY_PATH='$(dirname "$FAKE")' HOME='$PWD/$OUT/nvtop-home' '$NVTOP' -d 10"
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

echo "== $ROUNDS rounds of ${SECONDS_PER_RUN} s per tool ($TOOLS), $GPUS GPUs, $PROCS processes, interval 1 s, 200x50"
: >"$OUT/top-results.txt"
for r in $(seq "$ROUNDS"); do
	# the order rotates: no tool always first, or always after the same one
	read -r -a order <<<"$TOOLS"
	k=$(((r - 1) % ${#order[@]}))
	order=("${order[@]:k}" "${order[@]:0:k}")
	for name in "${order[@]}"; do
		res=$(run_one "$name")
		echo "$name $res" >>"$OUT/top-results.txt"
		printf '   round %d %-8s  CPU %6s %%   peak RSS %6.1f MiB   process lines on screen %s\n' \
			"$r" "$name" "$(echo "$res" | cut -d' ' -f1)" \
			"$(echo "$res" | awk '{ print $2 / 1024 }')" "$(echo "$res" | cut -d' ' -f3)"
	done
done

{
	echo "gpuscope top vs $(echo "$TOOLS" | sed "s/gpuscope //; s/ / and /"): $GPUS GPUs, $PROCS processes (fake NVML, real /proc),"
	echo "interval 1 s, 200x50 tmux pane, ${SECONDS_PER_RUN} s per run, $ROUNDS rounds (medians)"
	echo "machine: $(nproc) CPUs, $(uname -sr); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
	[ -z "$NVTOP" ] || echo "nvtop: $NVTOP ($("$NVTOP" --version 2>&1 | head -1))"
	[ -z "$BEFORE" ] || echo "before: $BEFORE top -d 1"
	case " $TOOLS " in *" nvitop "*) echo "nvitop: $PINS" ;; esac
	printf '%-10s %14s %16s\n' tool "CPU % (avg)" "peak RSS (MiB)"
	for name in $TOOLS; do
		cpu=$(awk -v n="$name" '$1 == n { print $2 }' "$OUT/top-results.txt" | median_stdin)
		rss=$(awk -v n="$name" '$1 == n { print $3 / 1024 }' "$OUT/top-results.txt" | median_stdin)
		printf '%-10s %14.2f %16.1f\n' "$name" "$cpu" "$rss"
	done
	echo "command: ${NVTOP_SRC:+NVTOP_SRC=$NVTOP_SRC }${BENCH_BEFORE:+BENCH_BEFORE=$BENCH_BEFORE }O=$O bench/top.sh $ROUNDS"
} | tee "$OUT/top-report.txt"
