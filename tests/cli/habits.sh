#!/bin/sh
# The habits of nvidia-smi and node_exporter users, on the fake NVML:
# gpuscope -L prints nvidia-smi -L's lines (MIG devices under their GPU at
# nvidia-smi's columns, checked against a real capture when one is beside
# the project), -l SEC / -lms MS repeat status and query until SIGINT or
# SIGTERM from one collector (query's CSV header once), -f FILE writes there
# (emptied first, rounds appended), status --format prom passes promtool and
# is replaced whole with -f (a reader never sees half a file, no temp file
# stays), a FIFO, directory or symlink as -f of prom is one clear error, and
# serve takes node_exporter's --web.listen-address and --web.config.file.
# Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
. tests/skip.inc
bin=$O/gpuscope
if [ ! -x "$bin" ] || ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP needs $bin and python3"
	exit 0
fi
tmp=$(mktemp -d)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/# /' "$f" | head -n 15; done
}
check() { # check "what" command...: files shown on failure: $tmp/out $tmp/err
	what=$1; shift
	if "$@"; then ok "$what"; else not_ok "$what" "$tmp/out" "$tmp/err"; fi
}
live="GPUSCOPE_NVML=$O/fakenvml/current/libnvidia-ml.so.1 FAKE_NVML_TIME=0
	FAKE_NVML_EPOCH=1767225600 GPUSCOPE_PROC_ROOT=tests/fixtures/proc TZ=UTC
	GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty GPUSCOPE_PASSWD=tests/fixtures/passwd"
fake() {
	# shellcheck disable=SC2086
	env $live FAKE_NVML_SCENARIO=${SCN:-tests/scenarios/h100x2.scn} "$@"
}
# bg OUT ERR COMMAND...: start it in the background with SIGINT at its default
# (a background job of sh would ignore it); its pid in $bpid
sigdfl='import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])'
bg() {
	o=$1 e=$2; shift 2
	# shellcheck disable=SC2086
	env $live FAKE_NVML_SCENARIO=tests/scenarios/h100x2.scn python3 -c "$sigdfl" "$@" >"$o" 2>"$e" &
	bpid=$!
	pids="$pids $bpid"
}
# stop SIG PID: send it and wait (10 s at most); its exit status in $brc
stop() {
	kill -s "$1" "$2" 2>/dev/null
	i=0
	while kill -0 "$2" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	kill -s KILL "$2" 2>/dev/null # still there after 10 s: the failure shows as 137
	wait "$2"
	brc=$?
}

# 1. -L: nvidia-smi -L's lines
fake "$bin" -L >"$tmp/out" 2>"$tmp/err"
rc=$?
check "-L: one 'GPU N: NAME (UUID: GPU-...)' line per GPU, exit 0" \
	sh -c "[ $rc = 0 ] && [ \$(wc -l <'$tmp/out') = 2 ] && [ ! -s '$tmp/err' ] &&
		! grep -vqE '^GPU [0-9]+: NVIDIA H100 80GB HBM3 \(UUID: GPU-[0-9a-f-]{36}\)$' '$tmp/out'"
fake "$bin" --list-gpus -i 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
check "--list-gpus -i 1: only GPU 1" \
	sh -c "[ $rc = 0 ] && [ \$(wc -l <'$tmp/out') = 1 ] && grep -q '^GPU 1: ' '$tmp/out'"
fake "$bin" -L -i 7 >"$tmp/out" 2>"$tmp/err"
rc=$?
check "-L -i 7 (no such GPU): exit 2, nothing on stdout" \
	sh -c "[ $rc = 2 ] && [ ! -s '$tmp/out' ] && grep -q \"no GPU matches '7'\" '$tmp/err'"
SCN=tests/scenarios/no-gpus.scn fake "$bin" -L >"$tmp/out" 2>"$tmp/err"
rc=$?
check "-L without a GPU: exit 4 as status, the reason on stderr" \
	sh -c "[ $rc = 4 ] && [ ! -s '$tmp/out' ] && grep -q 'no GPU' '$tmp/err'"

# MIG devices under their GPU, at the columns of a real nvidia-smi -L
SCN=tests/scenarios/mig.scn fake "$bin" -L >"$tmp/mig" 2>"$tmp/err"
rc=$?
real=$(ls ../shared/fixtures/real/nvidia-smi/linux-*mig*.txt 2>/dev/null | head -n 1)
if [ -n "$real" ]; then
	grep -E '^  MIG ' "$real" >"$tmp/real-mig"
	src="the real capture $(basename "$real")"
else
	# nvidia-smi -L's documented shape, as in the captures of H100 and H200 MIG
	printf '  MIG 3g.40gb     Device  0: (UUID: MIG-00000000-0000-0000-0000-000000000000)\n  MIG 1c.3g.71gb  Device  1: (UUID: MIG-00000001-0000-0000-0000-000000000001)\n' >"$tmp/real-mig"
	src="nvidia-smi's format"
fi
cp "$tmp/mig" "$tmp/out"
# the columns where "Device" and "(UUID:" start must be the real ones
check "-L on MIG: GPU line, then each MIG device at the columns of $src" \
	sh -c "[ $rc = 0 ] && head -n 1 '$tmp/mig' | grep -qE '^GPU 0: .* \(UUID: GPU-' &&
		[ \$(grep -cE '^  MIG [0-9]g\.[0-9]+gb +Device +[0-9]+: \(UUID: MIG-[0-9a-f-]+\)$' '$tmp/mig') = 2 ] &&
		[ \"\$(awk '/^  MIG /{ print index(\$0, \"Device\") \" \" index(\$0, \"(UUID: MIG-\") }' '$tmp/mig' | sort -u)\" = \"\$(awk '/^  MIG /{ print index(\$0, \"Device\") \" \" index(\$0, \"(UUID: MIG-\") }' '$tmp/real-mig' | sort -u)\" ]"

# AMD and Intel GPUs after the NVIDIA ones, with the ids -i takes
env GPUSCOPE_NVML=$O/fakenvml/current/libnvidia-ml.so.1 FAKE_NVML_SCENARIO=tests/scenarios/h100x2.scn \
	GPUSCOPE_SYSFS_ROOT=tests/fixtures/mixed/sys GPUSCOPE_PROC_ROOT=tests/fixtures/mixed/proc \
	"$bin" -L >"$tmp/out" 2>"$tmp/err"
rc=$?
check "-L on a mixed machine: NVIDIA first, then AMD and Intel with their PCI ids" \
	sh -c "[ $rc = 0 ] && [ \$(wc -l <'$tmp/out') = 4 ] && head -n 2 '$tmp/out' | grep -c 'UUID: GPU-' | grep -qx 2 &&
		tail -n 2 '$tmp/out' | grep -q 'AMD Radeon.*(PCI: 00000000:03:00.0, amdgpu card1)' &&
		tail -n 2 '$tmp/out' | grep -q '(PCI: 00000000:00:02.0, i915 card0)'"

# 2. -l SEC: rounds until SIGINT, from one collector; the CSV header once
q="query --query-gpu=index,name,memory.used --format=csv"
bg "$tmp/out" "$tmp/err" "$bin" $q -l 1
sleep 2.5
stop INT "$bpid"
check "query -l 1, SIGINT after 2.5 s: exit 0, the header once, 3 rounds of 2 GPUs" \
	sh -c "[ $brc = 0 ] && [ \$(grep -c '^index, name' '$tmp/out') = 1 ] &&
		head -n 1 '$tmp/out' | grep -q '^index, name' && [ \$(grep -c '^[01], NVIDIA' '$tmp/out') = 6 ]"
bg "$tmp/out" "$tmp/err" "$bin" status --json --compact -l 1
sleep 2.5
stop INT "$bpid"
check "status --json --compact -l 1, SIGINT after 2.5 s: exit 0, 3 documents" \
	sh -c "[ $brc = 0 ] && [ \$(grep -c '^{\"schema\":\"gpuscope.status/1\"' '$tmp/out') = 3 ]"
bg "$tmp/out" "$tmp/err" "$bin" status -l
sleep 1.5
stop TERM "$bpid"
check "status -l alone is nvidia-smi's 5 s: one table in 1.5 s, SIGTERM ends it (exit 0)" \
	sh -c "[ $brc = 0 ] && [ \$(grep -c '^NVIDIA driver' '$tmp/out') = 1 ]"

# -lms MS (nvidia-smi's spelling) and --loop-ms
bg "$tmp/out" "$tmp/err" "$bin" $q,noheader -lms 200
sleep 1.5
stop TERM "$bpid"
r=$(grep -c '^0, NVIDIA' "$tmp/out")
check "query -lms 200 for 1.5 s: SIGTERM ends it (exit 0), rounds every 200 ms ($r)" \
	sh -c "[ $brc = 0 ] && [ $r -ge 3 ] && [ $r -le 9 ] && ! grep -q '^index' '$tmp/out'"
bg "$tmp/out" "$tmp/err" "$bin" status --json --compact -lms=300
sleep 1.2
stop TERM "$bpid"
check "status -lms=300 is taken too" sh -c "[ $brc = 0 ] && [ \$(wc -l <'$tmp/out') -ge 2 ]"
for bad in "--loop-ms=0" "--loop-ms=abc" "-l 0" "--loop=-1"; do
	# shellcheck disable=SC2086
	fake timeout 10 "$bin" status $bad >"$tmp/out" 2>"$tmp/err"
	rc=$?
	check "status $bad: exit 2, one line naming the option" \
		sh -c "[ $rc = 2 ] && [ ! -s '$tmp/out' ] && [ \$(wc -l <'$tmp/err') = 1 ] && grep -q 'loop' '$tmp/err'"
done

# 3. -f FILE: the output there, not on stdout; emptied first, rounds appended
fake "$bin" query --query-gpu=index,name --format=csv >"$tmp/expect" 2>/dev/null
echo "old content" >"$tmp/q.csv"
fake "$bin" query --query-gpu=index,name --format=csv -f "$tmp/q.csv" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "query -f FILE: FILE holds what stdout would have, stdout empty, the old content gone" \
	sh -c "[ $rc = 0 ] && [ ! -s '$tmp/out' ] && cmp -s '$tmp/expect' '$tmp/q.csv'"
echo "old content" >"$tmp/q.csv"
bg "$tmp/out" "$tmp/err" "$bin" query --query-gpu=index,name --format=csv -f "$tmp/q.csv" -l 1
sleep 2.5
stop INT "$bpid"
check "query -f FILE -l 1: emptied once, then each round appended (header once, 3 rounds)" \
	sh -c "[ $brc = 0 ] && [ ! -s '$tmp/out' ] && ! grep -q 'old content' '$tmp/q.csv' &&
		[ \$(grep -c '^index' '$tmp/q.csv') = 1 ] && [ \$(grep -c '^[01], NVIDIA' '$tmp/q.csv') = 6 ]"
fake "$bin" status --json -f "$tmp/s.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "status --json --filename FILE: one JSON document in FILE" \
	sh -c "[ $rc = 0 ] && [ ! -s '$tmp/out' ] && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' '$tmp/s.json'"
fake "$bin" query --query-gpu=index -f "$tmp/none/q.csv" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "query -f in a missing directory: exit 3, one line naming the file" \
	sh -c "[ $rc = 3 ] && [ \$(wc -l <'$tmp/err') = 1 ] && grep -q \"cannot open -f '$tmp/none/q.csv'\" '$tmp/err'"

# 4. status --format prom: node_exporter's textfile format
fake "$bin" status --format prom >"$tmp/g.prom" 2>"$tmp/err"
rc=$?
cp "$tmp/g.prom" "$tmp/out"
if ! command -v promtool >/dev/null 2>&1; then
	skip_missing "promtool is not installed (scripts/install-deps.sh installs it)"
else
	promtool check metrics <"$tmp/g.prom" >"$tmp/err" 2>&1
	prc=$?
	check "status --format prom passes 'promtool check metrics'" sh -c "[ $rc = 0 ] && [ $prc = 0 ]"
fi
# a sample line is NAME{LABELS} VALUE: a third field would be a timestamp
check "status --format prom: gpuscope_ names (none of node_exporter's), no timestamps" \
	sh -c "grep -q '^gpuscope_gpus ' '$tmp/g.prom' && ! grep -v '^#' '$tmp/g.prom' | grep -qv '^gpuscope_' &&
		! grep -v '^#' '$tmp/g.prom' | sed 's/{.*}//' | awk 'NF != 2 { bad = 1 } END { exit !bad }'"
fake "$bin" status --format=json >"$tmp/out" 2>&1
check "--format=json is --json" sh -c "head -c 40 '$tmp/out' | grep -q '\"schema\"'"
fake "$bin" status --format=xml >"$tmp/out" 2>"$tmp/err"
rc=$?
check "--format=xml: exit 2, one line" sh -c "[ $rc = 2 ] && grep -q 'table, json or prom' '$tmp/err'"

# atomic -f: a reader never sees half a file, and no temp file stays
dir=$tmp/textfile
mkdir "$dir"
fake "$bin" status --format prom -f "$dir/gpu.prom" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "status --format prom -f FILE: FILE is the exposition, nothing else in its directory" \
	sh -c "[ $rc = 0 ] && [ ! -s '$tmp/out' ] && [ \$(ls '$dir') = gpu.prom ] && cmp -s '$dir/gpu.prom' '$tmp/g.prom'"
bg "$tmp/out" "$tmp/err" "$bin" status --format prom -f "$dir/gpu.prom" -lms 20
python3 - "$dir/gpu.prom" >"$tmp/reads" 2>&1 <<'PY'
import os, sys, time
path = sys.argv[1]
end, reads, bad = time.time() + 2.5, 0, 0
want = open(path).read().count("\n# TYPE ")
while time.time() < end:
    try:
        text = open(path).read()
    except FileNotFoundError:
        bad += 1
        continue
    reads += 1
    # whole: ends with a newline and holds every family a complete file holds
    if not text.endswith("\n") or text.count("\n# TYPE ") != want:
        bad += 1
print(reads, bad)
PY
stop TERM "$bpid"
set -- $(cat "$tmp/reads")
check "prom -f FILE -lms 20 while read ${1:-0} times in 2.5 s: every read a whole file (${2:-?} partial or missing)" \
	sh -c "[ $brc = 0 ] && [ '${1:-0}' -gt 20 ] && [ '${2:-1}' = 0 ]"
check "after SIGTERM no FILE.tmp.PID is left in the directory" sh -c "[ \"\$(ls '$dir')\" = gpu.prom ]"

# the targets a rename would wrongly replace: one clear line, exit 3, before any GPU is read
mkfifo "$tmp/fifo"
mkdir "$tmp/adir"
ln -s "$dir/gpu.prom" "$tmp/link"
for t in fifo:"named pipe" adir:"directory" link:"symbolic link"; do
	f=${t%%:*} what=${t#*:}
	fake timeout 10 "$bin" status --format prom -f "$tmp/$f" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	check "prom -f at a $what: exit 3, one line saying so" \
		sh -c "[ $rc = 3 ] && [ \$(wc -l <'$tmp/err') = 1 ] && grep -q \"'$tmp/$f' is a $what\" '$tmp/err'"
done
check "the symlink and its target were left alone" sh -c "[ -L '$tmp/link' ] && [ -f '$dir/gpu.prom' ]"
fake "$bin" status --format prom -f "$tmp/nodir/gpu.prom" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "prom -f in a directory it cannot write: exit 3, one line naming the directory's problem" \
	sh -c "[ $rc = 3 ] && [ \$(wc -l <'$tmp/err') = 1 ] && grep -q 'directory must be writable' '$tmp/err'"

# 5. serve: node_exporter's spellings
serve_check() { # WHAT FLAGS...: start serve, read /metrics
	what=$1; shift
	bg "$tmp/s.out" "$tmp/s.err" "$bin" serve "$@"
	url="" i=0
	while [ -z "$url" ] && [ $i -lt 100 ] && kill -0 "$bpid" 2>/dev/null; do
		sleep 0.1; i=$((i + 1))
		url=$(sed -n 's|.*listening on \(https*://[^ ]*\).*|\1|p' "$tmp/s.err"); url=${url%/}
	done
	code=$(curl -s -o "$tmp/out" -w '%{http_code}' "${url:-http://127.0.0.1:1}/metrics")
	auth=$(curl -s -o /dev/null -w '%{http_code}' -u prometheus:s3cret "${url:-http://127.0.0.1:1}/metrics")
	stop TERM "$bpid"
	cp "$tmp/s.err" "$tmp/err"
}
if ! command -v curl >/dev/null 2>&1; then
	skip_missing "curl is not installed"
else
	serve_check x --web.listen-address=127.0.0.1:0
	check "serve --web.listen-address=127.0.0.1:0 listens there and serves /metrics" \
		sh -c "echo '$url' | grep -q '^http://127.0.0.1:[1-9]' && [ '$code' = 200 ] && grep -q '^gpuscope_gpus ' '$tmp/out'"
	serve_check x --web.listen-address 127.0.0.1:0
	check "serve --web.listen-address ADDR (space form)" sh -c "[ '$code' = 200 ]"
	hash=$(echo 's3cret' | "$bin" serve --hash-password)
	printf 'basic_auth_users:\n  prometheus: %s\n' "$hash" >"$tmp/web.yml"
	serve_check x --web.listen-address=127.0.0.1:0 --web.config.file="$tmp/web.yml"
	check "serve --web.config.file=FILE: its basic auth is asked (401 without, 200 with)" \
		sh -c "[ '$code' = 401 ] && [ '$auth' = 200 ]"
	serve_check x --web.listen-address=127.0.0.1:0 --web.config.file "$tmp/web.yml"
	check "serve --web.config.file FILE (space form)" sh -c "[ '$code' = 401 ] && [ '$auth' = 200 ]"
fi

echo "1..$n"
[ "$fail" = 0 ]
