#!/bin/sh
# Does 'gpuscope query' print what nvidia-smi printed? For each real capture
# in $SHARED/fixtures/real/nvidia-smi and each state (idle, load):
#
#  1. capture2scn.py turns the capture into a scenario for the fake NVML
#     library (and a /proc tree for its processes);
#  2. gpuscope, loading the fake, answers --query-gpu with every field that
#     both the capture's CSV and gpuscope have, with its clock and time zone
#     set to the capture's, and compare.py checks it value by value;
#  3. the same for --query-compute-apps.
#
# Prints TAP; a check that needs $O/gpuscope or the fake library is skipped
# while they are not built. Fields left out are listed with the reason as
# "#" lines. Run from anywhere: O (default build) and SHARED (default
# ../shared) are relative to the repository root.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
O=${O:-build}
case $O in /*) ;; *) O=$root/$O ;; esac
SHARED=${SHARED:-../shared}
case $SHARED in /*) ;; *) SHARED=$root/$SHARED ;; esac
PYTHON=${PYTHON:-python3}
capdir=$SHARED/fixtures/real/nvidia-smi
bin=$O/gpuscope
fake=$O/fakenvml/current/libnvidia-ml.so.1

n=0
failed=0

ok() {
	n=$((n + 1))
	echo "ok $n - $*"
}

not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $*"
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

# indent a file as TAP comments
comment() {
	[ -s "$1" ] && sed 's/^/#   /' "$1"
	return 0
}

if ! ls "$capdir"/*.txt >/dev/null 2>&1; then
	echo "1..0 # SKIP no nvidia-smi captures in $capdir"
	exit 0
fi
if ! command -v "$PYTHON" >/dev/null 2>&1; then
	echo "1..0 # SKIP $PYTHON not found"
	exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuscope-conformance.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

why=
[ -x "$bin" ] || why="$bin is not built"
[ -f "$fake" ] || why="${why:+$why; }$fake is not built"
helpfail=
if [ -z "$why" ] && ! "$bin" query --help-query-gpu >"$tmp/help" 2>"$tmp/help.err"; then
	# a failure, not a reason to skip: said once here, the comparisons skipped
	helpfail="'gpuscope query --help-query-gpu' failed: $(head -n 1 "$tmp/help.err")"
	why=$helpfail
fi

# run gpuscope on the fake with scenario $1, clock $2, time zone $3, proc root $4, then the query
run_gpuscope() {
	scn=$1 clock=$2 tz=$3 proc=$4
	shift 4
	mkdir -p "$tmp/sys"
	env GPUSCOPE_NVML="$fake" FAKE_NVML_SCENARIO="$scn" FAKE_NVML_TIME=0 \
		GPUSCOPE_CLOCK="$clock" GPUSCOPE_PROC_ROOT="$proc" GPUSCOPE_SYSFS_ROOT="$tmp/sys" \
		TZ="${tz:-UTC0}" "$bin" query "$@"
}

[ -z "$helpfail" ] || not_ok "$helpfail"
if "$PYTHON" "$here/t_capture2scn.py" "$capdir" >"$tmp/self" 2>&1; then
	ok "capture2scn.py maps every capture onto the scenario format"
else
	not_ok "capture2scn.py maps every capture onto the scenario format"
	grep -v '^ok ' "$tmp/self" | sed 's/^/#   /'
fi

for cap in "$capdir"/*.txt; do
	name=$(basename "$cap" .txt)
	for state in idle load; do
		d=$tmp/$name.$state
		mkdir -p "$d"
		if ! "$PYTHON" "$here/capture2scn.py" "$cap" "$state" --unmapped "$d/unmapped" \
			--proc-root "$d/proc" --meta "$d/meta" >"$d/scn" 2>"$d/err"; then
			not_ok "$name $state: capture2scn.py failed"
			comment "$d/err"
			continue
		fi
		CAP_TZ='' GPU_CLOCK='' APPS_CLOCK=''
		# shellcheck source=/dev/null
		. "$d/meta"

		# --query-gpu
		if [ -n "$why" ]; then
			skip "$name $state: query-gpu" "$why"
		else
			fields=$("$PYTHON" "$here/compare.py" fields "$cap" "$state" "$tmp/help" \
				"$d/unmapped" "$d/notes")
			run_gpuscope "$d/scn" "$GPU_CLOCK" "$CAP_TZ" "$d/proc" \
				--query-gpu="$fields" --format=csv >"$d/gpu.out" 2>"$d/gpu.err"
			rc=$?
			"$PYTHON" "$here/compare.py" gpu "$cap" "$state" "$fields" "$d/gpu.out" >"$d/diff"
			crc=$?
			if [ $rc -eq 0 ] && [ $crc -eq 0 ]; then
				ok "$name $state: query-gpu, $(echo "$fields" | tr ',' '\n' | wc -l) fields"
			else
				not_ok "$name $state: query-gpu (exit status $rc)"
				cat "$d/diff"
				comment "$d/gpu.err"
			fi
			cat "$d/notes"
		fi

		# --query-compute-apps
		if [ -n "$why" ]; then
			skip "$name $state: query-compute-apps" "$why"
			continue
		fi
		apps=timestamp,gpu_name,gpu_bus_id,gpu_serial,gpu_uuid,pid,process_name,used_gpu_memory
		notime=
		if [ -z "$APPS_CLOCK" ]; then
			# no process: nothing to time; or a zone we do not know
			apps=${apps#timestamp,}
			notime=--no-timestamp
		fi
		run_gpuscope "$d/scn" "$APPS_CLOCK" "$CAP_TZ" "$d/proc" \
			--query-compute-apps="$apps" --format=csv >"$d/apps.out" 2>"$d/apps.err"
		rc=$?
		"$PYTHON" "$here/compare.py" apps "$cap" "$state" "$d/apps.out" $notime >"$d/adiff"
		crc=$?
		if [ $rc -eq 0 ] && [ $crc -eq 0 ]; then
			ok "$name $state: query-compute-apps, $(($(wc -l <"$d/apps.out") - 1)) processes"
			cat "$d/adiff"
		else
			not_ok "$name $state: query-compute-apps (exit status $rc)"
			cat "$d/adiff"
			comment "$d/apps.err"
		fi
	done
done

echo "1..$n"
[ "$failed" -eq 0 ]
