#!/usr/bin/env bash
# The speed benchmark of 'gpuscope doctor' (see docs/performance.md).
#
#   bench/doctor.sh [ROUNDS]        (default 30; or BENCH_ROUNDS=N)
#
# Runs ROUNDS rounds, interleaved, of
#   fixture  gpuscope doctor on tests/fixtures/doctor/machines/h100x8: eight
#            H100s through the fake NVML library (data/demo/h100x8.scn), and
#            three Python environments (a venv with torch 2.5.1+cu124 and its
#            twelve nvidia-* wheels, a conda env with torch 2.5.1, and the
#            system's dist-packages with TensorFlow, JAX and CuPy), a CUDA
#            toolkit, device nodes and a kernel log
#   here     gpuscope doctor on this machine as it is
# each measured as a whole process (wall, user+sys CPU, peak RSS) by
# bench/wait4run.c, and prints medians with the machine and the command.
# Then, under strace, counts the programs each run executes: gpuscope itself
# and nothing else (no Python interpreter, no nvidia-smi, no nvcc, no ffmpeg).
# The goal (issue 5): under 300 ms wall on the fixture machine, no Python.
# Exit status 0 when the benchmark ran (the goal is reported, not asserted).
set -euo pipefail

cd "$(dirname "$0")/.."
. bench/lib.sh
ROUNDS=${1:-${BENCH_ROUNDS:-30}}
O=build
OUT=$O/bench
FAKE=$O/fakenvml/current/libnvidia-ml.so.1
MACHINE=tests/fixtures/doctor/machines/h100x8

case $ROUNDS in
'' | *[!0-9]* | 0)
	echo "usage: bench/doctor.sh [ROUNDS]  (ROUNDS >= 1)" >&2
	exit 2
	;;
esac
if [ ! -x $O/gpuscope ] || [ ! -f $FAKE ]; then
	echo "== building (make all)"
	make --no-print-directory all >/dev/null
fi
mkdir -p "$OUT"
build_wait4run "$OUT"

root=$(pwd)/$MACHINE
fixture=(env -i GPUSCOPE_NVML="$(pwd)/$FAKE" FAKE_NVML_SCENARIO="$(pwd)/data/demo/h100x8.scn"
	GPUSCOPE_ROOT="$root" PATH=/home/user/venv/bin:/usr/local/cuda/bin:/usr/bin:/bin
	HOME=/home/user VIRTUAL_ENV=/home/user/venv CONDA_PREFIX=/opt/conda/envs/train
	"$(pwd)/$O/gpuscope" doctor)
here=("$(pwd)/$O/gpuscope" doctor)

# what the fixture run finds: 8 GPUs, 3 environments
"${fixture[@]}" >"$OUT/doctor-fixture.txt" || true
envs=$(grep -cE '^ok +(torch|TensorFlow) ' "$OUT/doctor-fixture.txt" || true)
if ! grep -q '^ok     8 NVIDIA GPUs' "$OUT/doctor-fixture.txt" || [ "$envs" -lt 3 ]; then
	echo "bench/doctor.sh: the fixture run did not see 8 GPUs and 3 environments:" >&2
	cat "$OUT/doctor-fixture.txt" >&2
	exit 1
fi

: >"$OUT/doctor-fixture.runs"
: >"$OUT/doctor-here.runs"
for ((i = 0; i < ROUNDS; i++)); do
	$OUT/wait4run "$OUT/doctor-fixture.runs.1" "${fixture[@]}" >/dev/null || true
	cat "$OUT/doctor-fixture.runs.1" >>"$OUT/doctor-fixture.runs"
	$OUT/wait4run "$OUT/doctor-here.runs.1" "${here[@]}" >/dev/null || true
	cat "$OUT/doctor-here.runs.1" >>"$OUT/doctor-here.runs"
done
rm -f "$OUT"/doctor-*.runs.1

report() {
	local f=$1 what=$2 wall cpu rss
	wall=$(median "$f" 1)
	cpu=$(median_cpu "$f")
	rss=$(median "$f" 4)
	awk -v w="$wall" -v c="$cpu" -v r="$rss" -v what="$what" 'BEGIN {
		printf "%-34s wall %7.2f ms   cpu %7.2f ms   peak RSS %6.1f MiB\n", what, w * 1000, c * 1000, r / 1024 }'
}

echo
echo "machine: $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "command: bench/doctor.sh $ROUNDS   (medians of $ROUNDS interleaved runs)"
report "$OUT/doctor-fixture.runs" "doctor, fixture (8 GPUs, 3 envs)"
report "$OUT/doctor-here.runs" "doctor, this machine"
awk -v w="$(median "$OUT/doctor-fixture.runs" 1)" 'BEGIN {
	printf "goal: fixture under 300 ms wall: %s (%.0f times under)\n", w < 0.3 ? "PASS" : "FAIL", 0.3 / w }'

if command -v strace >/dev/null 2>&1; then
	strace -f -qq -e trace=execve -o "$OUT/doctor-exec.txt" "${fixture[@]}" >/dev/null || true
	n=$(grep -c 'execve(' "$OUT/doctor-exec.txt" || true)
	others=$(grep 'execve(' "$OUT/doctor-exec.txt" | grep -v '/gpuscope"' | grep -v '"/usr/bin/env"' || true)
	# env -i itself is one exec, gpuscope the other
	if [ -z "$others" ]; then
		echo "programs executed by a fixture run: none besides gpuscope (strace: $n execve, env included): PASS"
	else
		echo "programs executed by a fixture run besides gpuscope: FAIL"
		echo "$others"
	fi
else
	echo "strace is not installed: the no-Python check was skipped"
fi
