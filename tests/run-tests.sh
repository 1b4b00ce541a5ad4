#!/bin/sh
# Run the whole test suite and print one closing line that CI looks for:
#   "gpuscope tests: PASS (N ok, 0 failed, S skipped)" or "gpuscope tests: FAIL (...)"
# Every test program prints TAP. O names the build directory (default build).
#
# Python tests need NVIDIA's nvidia-ml-py; it is installed into $O/venv
# from PyPI on the first run. Without network they are skipped, unless
# GPUSCOPE_REQUIRE_PYNVML=1 (CI), which makes that a failure.
set -u
O=${O:-build}
export O
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
log=$O/test-logs
mkdir -p "$log"
pass=0 fail=0 skipped=0 failed_tests=""

# the Python side: a venv with nvidia-ml-py (pinned), made once
PY=""
if [ -x "$O/venv/bin/python" ] && "$O/venv/bin/python" -c 'import pynvml' 2>/dev/null; then
	PY=$O/venv/bin/python
elif command -v python3 >/dev/null 2>&1; then
	if python3 -m venv "$O/venv" >"$log/venv.log" 2>&1 &&
		"$O/venv/bin/pip" install -q --disable-pip-version-check "nvidia-ml-py==13.615.71" >>"$log/venv.log" 2>&1; then
		PY=$O/venv/bin/python
	else
		echo "# could not install nvidia-ml-py into $O/venv (see $log/venv.log): pynvml tests skipped"
	fi
fi
if [ -z "$PY" ] && [ "${GPUSCOPE_REQUIRE_PYNVML:-0}" = 1 ]; then
	echo "not ok - nvidia-ml-py is required (GPUSCOPE_REQUIRE_PYNVML=1) but could not be installed"
	fail=$((fail + 1))
	failed_tests="$failed_tests pynvml-setup"
fi
export PY

# run one TAP-producing command; count its lines
run() {
	name=$1
	shift
	out=$log/$name.tap
	"$@" >"$out" 2>&1
	rc=$?
	ok=$(grep -c '^ok ' "$out")
	sk=$(grep -c '^ok .*# SKIP' "$out")
	bad=$(grep -c '^not ok ' "$out")
	plan=$(grep -E '^1\.\.[0-9]+' "$out" | tail -n 1)
	if [ "$bad" -gt 0 ] || [ "$rc" -ne 0 ] || [ -z "$plan" ]; then
		fail=$((fail + 1))
		failed_tests="$failed_tests $name"
		printf 'FAIL %-28s %s ok, %s not ok, exit %s (log: %s)\n' "$name" "$ok" "$bad" "$rc" "$out"
		grep -E '^not ok|^#' "$out" | head -n 40 | sed 's/^/    /'
	else
		printf 'ok   %-28s %s ok%s\n' "$name" "$ok" "$([ "$sk" -gt 0 ] && echo ", $sk skipped")"
	fi
	pass=$((pass + ok - sk))
	skipped=$((skipped + sk))
}

for t in "$O"/tests/t_*; do
	[ -x "$t" ] || continue
	run "$(basename "$t")" "$t"
done
for t in tests/cli/*.sh; do
	[ -f "$t" ] || continue
	run "cli-$(basename "$t" .sh)" sh "$t"
done
for t in tests/tui/*.sh; do
	[ -f "$t" ] || continue
	run "tui-$(basename "$t" .sh)" sh "$t"
done
run golden sh tests/golden/run.sh
if [ -n "$PY" ]; then
	run fake-nvml "$PY" tests/fakenvml/test_fake.py
	run pynvml-crosscheck "$PY" tests/pynvml/crosscheck.py
else
	echo "ok   fake-nvml, pynvml-crosscheck    # SKIP no nvidia-ml-py"
fi
run conformance sh tests/conformance/run.sh
run conformance-lact sh tests/conformance/lact.sh

if [ "$fail" -eq 0 ]; then
	echo "gpuscope tests: PASS ($pass ok, 0 failed, $skipped skipped)"
	exit 0
fi
echo "gpuscope tests: FAIL ($pass ok, $fail failed:$failed_tests, $skipped skipped)"
exit 1
