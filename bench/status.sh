#!/usr/bin/env bash
# The speed benchmark of 'gpuscope status --json' against gpustat and nvitop
# (see docs/performance.md). 'make bench' runs it after building.
#
#   bench/status.sh [ROUNDS]        (default 30; or BENCH_ROUNDS=N)
#
# 1. Makes build/bench-venv with gpustat and nvitop from PyPI, pinned, unless
#    it is there already with those pins.
# 2. Starts BENCH_PROCS (200) sleeping processes, and writes a scenario for
#    the fake NVML library (BENCH_GPUS, 8, busy H100s) whose GPU processes are
#    those pids, so that every tool finds each of them in the real /proc.
#    They are killed on exit, however the script ends.
# 3. Runs ROUNDS rounds of gpuscope status --json, gpustat --json, nvitop -1
#    (and gpuscope --version and --no-processes, to see where its time goes),
#    interleaved, each measured as a whole process (wall, user+sys CPU, peak
#    RSS) by bench/wait4run.c; checks what each tool printed; prints medians,
#    ratios and the goals' verdicts, with the machine and the command.
#
# The report is also written to build/bench/report.txt, every sample to
# build/bench/results.json, and the last output of each tool to build/bench/.
# Exit status 0 when the benchmark ran, whether or not gpuscope met its goals
# (they are reported, PASS or FAIL, not asserted); non-zero when it could not
# run or a tool did not see every GPU.
set -euo pipefail

cd "$(dirname "$0")/.."
. bench/lib.sh
ROUNDS=${1:-${BENCH_ROUNDS:-30}}
GPUS=${BENCH_GPUS:-8}
PROCS=${BENCH_PROCS:-200}
O=build
OUT=$O/bench
VENV=$O/bench-venv
FAKE=$O/fakenvml/current/libnvidia-ml.so.1
# tested together; psutil pinned too, as both tools lean on it
PINS="gpustat==1.1.1 nvitop==1.7.2 nvidia-ml-py==13.615.71 psutil==7.2.2"

case $ROUNDS in
'' | *[!0-9]*)
	echo "usage: bench/status.sh [ROUNDS]" >&2
	exit 2
	;;
esac
if [ "$ROUNDS" -lt 1 ]; then
	echo "bench/status.sh: ROUNDS must be at least 1" >&2
	exit 2
fi

if [ ! -x $O/gpuscope ] || [ ! -f $FAKE ]; then
	echo "== building (make all)"
	make --no-print-directory all >/dev/null
fi
mkdir -p "$OUT"

# --- the Python tools ---------------------------------------------------------
if [ ! -x $VENV/bin/gpustat ] || [ ! -x $VENV/bin/nvitop ] ||
	[ "$(cat $VENV/.bench-pins 2>/dev/null)" != "$PINS" ]; then
	echo "== creating $VENV ($PINS)"
	rm -rf "$VENV"
	if ! python3 -m venv "$VENV"; then
		echo "bench/status.sh: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2
		exit 1
	fi
	# shellcheck disable=SC2086
	if ! "$VENV/bin/pip" install --quiet --disable-pip-version-check $PINS; then
		echo "bench/status.sh: could not install $PINS from PyPI" >&2
		rm -rf "$VENV"
		exit 1
	fi
	echo "$PINS" >$VENV/.bench-pins
fi

# --- the harness ----------------------------------------------------------------
# static, so that the peak RSS it passes on to what it runs is a few hundred KiB
build_wait4run "$OUT"

# --- the processes --------------------------------------------------------------
PIDS=()
RUN=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	if [ -n "$RUN" ]; then
		kill "$RUN" 2>/dev/null || true
	fi
	stop_sleepers
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_sleepers "$PROCS" "$OUT/pids"

SCN=$OUT/h100x${GPUS}-${PROCS}.scn
python3 bench/make-scenario.py --gpus "$GPUS" --procs "$PROCS" --pids-file "$OUT/pids" \
	-o "$SCN" --expect "$OUT/expected.json"

echo "== $ROUNDS rounds"
CMD="bench/status.sh $ROUNDS"
if [ -n "${MAKELEVEL:-}" ]; then
	CMD="make bench (bench/status.sh $ROUNDS)"
fi
if [ "$GPUS" != 8 ] || [ "$PROCS" != 200 ]; then
	CMD="BENCH_GPUS=$GPUS BENCH_PROCS=$PROCS $CMD"
fi
# in the background, so that a signal to this script ends it (and the
# sleepers) at once, not when the rounds are over
python3 bench/run.py --rounds "$ROUNDS" --gpus "$GPUS" --procs "$PROCS" \
	--scenario "$SCN" --expect "$OUT/expected.json" --fake-lib "$FAKE" --venv "$VENV" \
	--outdir "$OUT" --wait4run "$OUT/wait4run" --command "$CMD" &
RUN=$!
rc=0
wait "$RUN" || rc=$?
RUN=
exit "$rc"
