#!/bin/sh
# Golden-output tests: each directory here is one case.
#   cmd            the arguments to gpuscope, on one line (shell words)
#   env            optional KEY=VALUE lines added to the defaults below
#   clean-env      when present, nothing of the caller's environment is kept
#                  (doctor reads PATH, HOME, VIRTUAL_ENV, DISPLAY, ...)
#   expected.out   stdout, expected.err stderr, expected.rc the exit code
# In cmd and env, @O@ is the build directory and @ROOT@ the repository.
# The run uses the fake NVML library, fixture /proc and /sys roots, a fixed
# clock and TZ=UTC, so the output is the same on every machine. Paths of
# the build directory print as BUILD/. UPDATE=1 rewrites the expected files.
# Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
bin=$ROOT/$O/gpuscope
n=0 fail=0
if [ ! -x "$bin" ]; then
	echo "1..0 # SKIP $O/gpuscope is not built"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

for dir in tests/golden/*/; do
	case=$(basename "$dir")
	n=$((n + 1))
	# a directory that is not a whole case fails (UPDATE=1 writes the expected files)
	if [ ! -f "$dir/cmd" ] || { [ "${UPDATE:-0}" != 1 ] &&
		{ [ ! -f "$dir/expected.out" ] || [ ! -f "$dir/expected.rc" ]; }; }; then
		fail=$((fail + 1))
		echo "not ok $n - $case: a case needs cmd, expected.out and expected.rc"
		continue
	fi
	envfile=$tmp/env
	{
		echo "GPUSCOPE_NVML=@O@/fakenvml/current/libnvidia-ml.so.1"
		echo "FAKE_NVML_TIME=0"
		echo "FAKE_NVML_EPOCH=1767225600"
		echo "GPUSCOPE_CLOCK=1767225600"
		echo "GPUSCOPE_PROC_ROOT=@ROOT@/tests/fixtures/proc"
		echo "GPUSCOPE_SYSFS_ROOT=@ROOT@/tests/fixtures/sys-empty"
		echo "GPUSCOPE_PASSWD=@ROOT@/tests/fixtures/passwd"
		echo "TZ=UTC"
		echo "LC_ALL=C.UTF-8"
		echo "COLUMNS=80"
		[ -f "$dir/env" ] && cat "$dir/env"
	} | sed -e "s|@O@|$ROOT/$O|g" -e "s|@ROOT@|$ROOT|g" >"$envfile"
	args=$(head -n 1 "$dir/cmd" | sed -e "s|@O@|$ROOT/$O|g" -e "s|@ROOT@|$ROOT|g")
	(
		unset NO_COLOR FAKE_NVML_SCENARIO FAKE_NVML_LOG GPUSCOPE_NVML TERM
		if [ -f "$dir/clean-env" ]; then
			for v in $(env | sed -n 's/^\([A-Za-z_][A-Za-z_0-9]*\)=.*/\1/p'); do
				case $v in
				*SAN_OPTIONS) ;; # the sanitizers' settings stay
				*) unset "$v" 2>/dev/null ;;
				esac
			done
		fi
		while IFS= read -r kv; do
			[ -n "$kv" ] && export "$kv"
		done <"$envfile"
		eval "set -- $args"
		exec "$bin" "$@"
	) >"$tmp/out" 2>"$tmp/err"
	rc=$?
	# build paths differ between build/ and build-san/
	for f in out err; do
		sed -e "s|$ROOT/$O/|BUILD/|g" -e "s|$ROOT/|ROOT/|g" \
			-e "s|/[^\"]*/gpuscope-demo-[A-Za-z0-9]*/|TMP/gpuscope-demo-XXXXXX/|g" "$tmp/$f" >"$tmp/$f.n"
	done
	echo "$rc" >"$tmp/rc"
	if [ "${UPDATE:-0}" = 1 ]; then
		cp "$tmp/out.n" "$dir/expected.out"
		cp "$tmp/err.n" "$dir/expected.err"
		cp "$tmp/rc" "$dir/expected.rc"
	fi
	bad=""
	cmp -s "$tmp/out.n" "$dir/expected.out" || bad="$bad stdout"
	cmp -s "$tmp/err.n" "$dir/expected.err" || bad="$bad stderr"
	cmp -s "$tmp/rc" "$dir/expected.rc" || bad="$bad exit-code($rc)"
	if [ -z "$bad" ]; then
		echo "ok $n - $case"
	else
		fail=$((fail + 1))
		echo "not ok $n - $case:$bad differ"
		for f in out err; do
			diff -u "$dir/expected.$f" "$tmp/$f.n" 2>/dev/null | head -n 40 | sed 's/^/# /'
		done
	fi
done
if [ "$n" -eq 0 ]; then
	n=1 fail=1
	echo "not ok 1 - no golden cases in tests/golden"
fi
echo "1..$n"
[ "$fail" -eq 0 ]
