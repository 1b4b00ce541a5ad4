#!/bin/sh
# Does gpuscope read real AMD and Intel cards as LACT reads them? For every
# card tree of LACT's test snapshots in $SHARED/fixtures/real/lact/sysfs,
# lact.py builds a sysfs root, runs 'gpuscope status --json --no-processes'
# on it and compares VRAM, clocks, power, temperatures, fan and PCIe link
# with LACT's own reading (lact/expected/*.snap); differences are failures
# unless lact.py's NOTES (LACT reads another quantity) or GAPS (not read by
# gpuscope yet, owned by another module) explain them. Also: lact.py's own
# self-check, and the amd-suspended fixture read by the whole program with
# inotify watching that nothing of the card but its identity is opened.
#
# Prints TAP. Checks that need $O/gpuscope are skipped while it is not
# built, the LACT ones while $SHARED is absent. Run from anywhere: O
# (default build) and SHARED (default ../shared) are relative to the
# repository root.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
O=${O:-build}
case $O in /*) ;; *) O=$root/$O ;; esac
SHARED=${SHARED:-../shared}
case $SHARED in /*) ;; *) SHARED=$root/$SHARED ;; esac
PYTHON=${PYTHON:-python3}
lact=$SHARED/fixtures/real/lact
bin=$O/gpuscope

n=0
failed=0

if ! command -v "$PYTHON" >/dev/null 2>&1; then
	echo "1..0 # SKIP $PYTHON not found"
	exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuscope-lact.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# run a lact.py command and renumber its TAP into ours
part() {
	"$PYTHON" "$here/lact.py" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok "* | "not ok "*)
			n=$((n + 1))
			case $line in "not ok "*) failed=$((failed + 1)) ;; esac
			echo "$line" | sed -E "s/^(not )?ok [0-9]+/\\1ok $n/"
			;;
		1..*) ;;
		*) echo "$line" ;;
		esac
	done <"$tmp/out"
	if [ "$rc" -ne 0 ] && ! grep -q '^not ok' "$tmp/out"; then
		n=$((n + 1))
		failed=$((failed + 1))
		echo "not ok $n - lact.py $1 exited $rc"
		sed 's/^/#   /' "$tmp/err"
	fi
}

# a case that cannot run here (gpuscope not built, no snapshots): a skip,
# or a failure under GPUSCOPE_NO_SKIP=1 (CI)
skip() {
	n=$((n + 1))
	if [ "${GPUSCOPE_NO_SKIP:-0}" = 1 ]; then
		failed=$((failed + 1))
		echo "not ok $n - $1: $2 (GPUSCOPE_NO_SKIP=1: a skip is a failure)"
	else
		echo "ok $n - $1 # SKIP $2"
	fi
}

part selftest

if [ ! -x "$bin" ]; then
	skip "amd-suspended read by gpuscope" "$bin is not built"
else
	part suspended "$bin" "$root/tests/fixtures/amd-suspended"
fi

if [ ! -d "$lact/sysfs" ] || [ ! -d "$lact/expected" ]; then
	skip "LACT's real cards" "no LACT snapshots in $lact"
elif [ ! -x "$bin" ]; then
	skip "LACT's real cards" "$bin is not built"
else
	part run "$lact" "$bin"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
