#!/bin/sh
# Run the whole test suite. Every test program prints TAP; O names the build
# directory (default build). It ends with two lines:
#   gpuscope tests: PASS (N ok, 0 failed, S suites skipped: NAME (WHY), ...; C cases skipped)
#   tests: N passed, F failed, K skipped
# (or "gpuscope tests: FAIL (N ok, F failed: NAMES, ...)"). .ci/run greps the
# first; the second, alone on the last line, is for a CI harness: passed and
# skipped count cases (skipped adds the skipped suites), failed counts "not
# ok" cases and suites that failed without one. A suite whose plan is 1..0
# ("1..0 # SKIP why") is a skipped suite, named with its reason; a suite
# whose plan is not the number of cases it ran fails.
#
# GPUSCOPE_NO_SKIP=1 (CI sets it): a skipped suite is a failure, and so is a
# case skipped for want of something an install provides (the tests that
# can skip so read it too: skip_missing in tests/harness.h). Skips that do
# not depend on the machine (by design) stay skips.
#
# Python tests need NVIDIA's nvidia-ml-py; it is installed into $O/venv
# from PyPI on the first run. Without network they are skipped suites, unless
# GPUSCOPE_REQUIRE_PYNVML=1 or GPUSCOPE_NO_SKIP=1, which make that a failure.
set -u
O=${O:-build}
export O
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
log=$O/test-logs
mkdir -p "$log"
pass=0 fail=0 skipped=0 failed_tests=""
suites_skipped=0 skipped_list="" cases_failed=0 other_failed=0
# GPUSCOPE_NO_SKIP=1 (CI): a skipped suite is a failure; so is a case that
# skips for want of something an install provides (the tests check it too)
no_skip=${GPUSCOPE_NO_SKIP:-0}
[ "$no_skip" = 1 ] && GPUSCOPE_REQUIRE_PYNVML=1
export GPUSCOPE_NO_SKIP="$no_skip"

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
	echo "FAIL pynvml-setup                 nvidia-ml-py is required (GPUSCOPE_REQUIRE_PYNVML=1 or GPUSCOPE_NO_SKIP=1) but could not be installed"
	fail=$((fail + 1))
	other_failed=$((other_failed + 1))
	failed_tests="$failed_tests pynvml-setup"
fi
export PY

# one skipped suite: counted, named with its reason; a failure under GPUSCOPE_NO_SKIP=1
suite_skipped() {
	name=$1
	why=$2
	if [ "$no_skip" = 1 ]; then
		fail=$((fail + 1))
		other_failed=$((other_failed + 1))
		failed_tests="$failed_tests $name"
		printf 'FAIL %-28s skipped (%s), and GPUSCOPE_NO_SKIP=1\n' "$name" "$why"
	else
		printf 'skip %-28s %s\n' "$name" "$why"
	fi
	suites_skipped=$((suites_skipped + 1))
	skipped_list="$skipped_list${skipped_list:+, }$name ($why)"
}

# run one TAP-producing command; count its lines. A plan of 1..0 is a
# skipped suite; a plan that is not the number of cases run is a failure.
run() {
	name=$1
	shift
	out=$log/$name.tap
	"$@" >"$out" 2>&1
	rc=$?
	ok=$(grep -c '^ok ' "$out")
	sk=$(grep -ci '^ok .*# *skip' "$out")
	bad=$(grep -c '^not ok ' "$out")
	bail=$(grep -c '^Bail out!' "$out")
	plan=$(grep -E '^1\.\.[0-9]+' "$out" | tail -n 1)
	planned=$(printf '%s\n' "$plan" | sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p')
	cases_failed=$((cases_failed + bad))
	if [ "$bad" -eq 0 ] && [ "$rc" -eq 0 ] && [ "$bail" -eq 0 ] && [ "$planned" = 0 ] && [ "$ok" -eq 0 ]; then
		why=$(printf '%s\n' "$plan" | sed -n 's/^1\.\.0[[:space:]]*#[[:space:]]*[Ss][Kk][Ii][Pp][[:space:]]*//p')
		suite_skipped "$name" "${why:-no reason given}"
		return
	fi
	if [ "$bad" -gt 0 ] || [ "$rc" -ne 0 ] || [ "$bail" -gt 0 ] || [ -z "$plan" ] ||
		[ "$planned" != $((ok + bad)) ]; then
		fail=$((fail + 1))
		failed_tests="$failed_tests $name"
		[ "$bad" -gt 0 ] || other_failed=$((other_failed + 1))
		why="exit $rc"
		[ -n "$plan" ] || why="$why, no plan"
		[ -z "$plan" ] || [ "$planned" = $((ok + bad)) ] || why="$why, planned $planned but ran $((ok + bad))"
		[ "$bail" -eq 0 ] || why="$why, bailed out"
		printf 'FAIL %-28s %s ok, %s not ok, %s (log: %s)\n' "$name" "$ok" "$bad" "$why" "$out"
		grep -iE '^not ok|^#|^Bail out!' "$out" | head -n 40 | sed 's/^/    /'
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
	suite_skipped fake-nvml "no nvidia-ml-py"
	suite_skipped pynvml-crosscheck "no nvidia-ml-py"
fi
run conformance sh tests/conformance/run.sh
run conformance-lact sh tests/conformance/lact.sh

# the closing lines: ours (.ci/run greps "^gpuscope tests: PASS"), then the
# plain one a CI harness reads, alone on the last line
if [ "$suites_skipped" -eq 1 ]; then
	sks="1 suite skipped: $skipped_list"
elif [ "$suites_skipped" -gt 1 ]; then
	sks="$suites_skipped suites skipped: $skipped_list"
else
	sks="0 suites skipped"
fi
cks="$skipped case$([ "$skipped" -eq 1 ] || echo s) skipped"
if [ "$fail" -eq 0 ]; then
	echo "gpuscope tests: PASS ($pass ok, 0 failed, $sks; $cks)"
else
	echo "gpuscope tests: FAIL ($pass ok, $fail failed:$failed_tests, $sks; $cks)"
fi
echo "tests: $pass passed, $((cases_failed + other_failed)) failed, $((skipped + suites_skipped)) skipped"
[ "$fail" -eq 0 ]
