#!/bin/sh
# gpuscope record and replay against a hostile or broken file system: one
# writer always, even when a second recorder starts in the middle of a
# rotation (strace holds the first one there); a damaged, unrelated or
# strange file beside a recording is passed over with a warning and the
# rest replays; a dangling symbolic link is never followed to create its
# target; a FIFO in a recording's place is refused at once. Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
# shellcheck source=tests/skip.inc
. ./tests/skip.inc
n=0 fail=0
bin=$O/gpuscope
if [ ! -x "$bin" ] || ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP needs $bin and python3"
	exit 0
fi
if ! command -v strace >/dev/null 2>&1; then
	skip_missing "needs strace (apt-get install strace)"
	echo "1..$n"
	[ $fail = 0 ]
	exit
fi
tmp=$(mktemp -d)
pids=""
cleanup() {
	# shellcheck disable=SC2086
	[ -z "$pids" ] || kill $pids 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/# /' "$f" | head -n 20; done
}
check() { # check "what" command...; on failure shows $tmp/out and $tmp/err
	what=$1; shift
	if "$@"; then ok "$what"; else not_ok "$what" "$tmp/out" "$tmp/err"; fi
}
fake=$O/fakenvml/current/libnvidia-ml.so.1
fixed="GPUSCOPE_NVML=$fake FAKE_NVML_TIME=0 FAKE_NVML_EPOCH=1767225600
GPUSCOPE_CLOCK=1767225600 GPUSCOPE_PROC_ROOT=tests/fixtures/proc TZ=UTC
GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty GPUSCOPE_PASSWD=tests/fixtures/passwd
FAKE_NVML_SCENARIO=tests/scenarios/h100x2.scn"
# shellcheck disable=SC2086
fx() { env $fixed "$@"; }

# A scenario whose recording fills 64 KiB in about two seconds: 8 GPUs and
# 60 processes (sleeping children, found in the real /proc) whose values move.
: >"$tmp/pids"
for _ in $(seq 60); do
	sleep 300 &
	pids="$pids $!"
	echo $! >>"$tmp/pids"
done
python3 bench/make-scenario.py --gpus 8 --procs 60 --pids-file "$tmp/pids" |
	awk '$1 == "temperature" { print "temperature = sine 45 82 1.3"; next }
	$1 == "power_usage" { print "power_usage = sine 150000 700000 0.7"; next }
	$1 == "sm_util" { print "sm_util = sine 0 100 0.9"; next }
	$1 == "used_memory" { print "used_memory = sine 400 30000 1.1"; next }
	{ print }' >"$tmp/moving.scn"
mv() { env GPUSCOPE_NVML="$fake" FAKE_NVML_SCENARIO="$tmp/moving.scn" TZ=UTC "$@"; }

# 1. one writer, always: while the first recorder rotates (strace holds each
# of its flock() calls after the first for 1.5 s), a second one is refused
rec=$tmp/one.rec
# (LeakSanitizer cannot run under ptrace: off for this one run of a SAN=1 build)
strace -f -qq -o /dev/null -e trace=flock -e inject=flock:delay_enter=1500000:when=2+ \
	env ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0" \
	GPUSCOPE_NVML="$fake" FAKE_NVML_SCENARIO="$tmp/moving.scn" \
	"$bin" record -q -c 70 -d 0.05 --max-size 64k --keep 3 -o "$rec" 2>"$tmp/err1" &
first=$!
i=0
while [ ! -e "$rec.1" ] && [ $i -lt 300 ]; do
	sleep 0.05
	i=$((i + 1))
done
mv "$bin" record -q -c 3 -d 0.05 -o "$rec" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a second recorder started during a rotation is refused (exit non-zero, 'another process')" \
	sh -c "[ -e '$rec.1' ] && [ $rc != 0 ] && grep -q 'another process' '$tmp/err'"
wait $first
rc=$?
cp "$tmp/err1" "$tmp/err"
check "the first recorder ends well (exit 0)" [ $rc = 0 ]
mv "$bin" replay "$rec" watch --format ndjson >"$tmp/nd" 2>"$tmp/err"
python3 - "$tmp/nd" >"$tmp/out" 2>&1 <<'PY'
import json, sys
t = [d["time"] for d in (json.loads(l) for l in open(sys.argv[1]) if l.strip()) if d["index"] == 0]
bad = [i for i in range(1, len(t)) if t[i] < t[i - 1]]
print(len(t), "samples;", "backwards at", bad[:5] if bad else "none")
sys.exit(1 if bad or len(t) != 70 else 0)
PY
rc=$?
check "its 70 samples replay in order: no other writer's in between" [ $rc = 0 ]

# 2. what lies beside a recording: damaged, unrelated, a directory, a FIFO
rec=$tmp/two.rec
mv "$bin" record -q -c 60 -d 0.05 --max-size 64k --keep 2 -o "$rec" 2>"$tmp/err"
mv "$bin" replay "$rec" watch --format csv,noheader --fields index >"$tmp/all" 2>"$tmp/err"
whole=$(wc -l <"$tmp/all")
mv "$bin" replay "$rec.1" watch --format csv,noheader --fields index >"$tmp/out" 2>"$tmp/err"
older=$(wc -l <"$tmp/out")
check "the recording rotated once (FILE.1 and FILE)" sh -c "[ -s '$rec.1' ] && [ -s '$rec' ] && [ $older -gt 0 ] && [ $whole -gt $older ]"
# one flipped bit in FILE.1's header
python3 -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[9] ^= 4; open(p, "wb").write(b)' "$rec.1"
printf 'not a recording\n' >"$rec.3"
mkdir "$rec.2"
mv "$bin" replay "$rec" watch --format csv,noheader --fields index >"$tmp/out" 2>"$tmp/err"
rc=$?
want=$((whole - older))
check "replay FILE: FILE's samples still replay past a damaged FILE.1, a directory FILE.2 and an unrelated FILE.3" \
	sh -c "[ $rc = 0 ] && [ \$(wc -l <'$tmp/out') = $want ]"
check "... and says which files it passed over" \
	sh -c "grep -q 'warning:.*two.rec.1' '$tmp/err' && grep -q 'warning:.*two.rec.2' '$tmp/err' && grep -q 'warning:.*two.rec.3' '$tmp/err'"
mv "$bin" replay "$rec" info >"$tmp/out" 2>"$tmp/err"
rc=$?
check "replay FILE info reads the rest" sh -c "[ $rc = 0 ] && grep -q \"^samples *$((want / 8))\$\" '$tmp/out'"
mv timeout 60 "$bin" doctor --recording "$rec" --since 0 >"$tmp/out" 2>"$tmp/err"
rc=$?
check "doctor --recording FILE reads the rest (not refused)" \
	sh -c "[ $rc != 124 ] && ! grep -q 'damaged header' '$tmp/out' && grep -q 'warning:.*two.rec.1' '$tmp/err'"
rm -f "$rec.1"
mkfifo "$rec.1"
mv timeout 10 "$bin" replay "$rec" info >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a FIFO named FILE.1 is passed over at once (no wait for a writer)" \
	sh -c "[ $rc = 0 ] && grep -q 'warning:.*two.rec.1' '$tmp/err'"

# 3. FIFOs and links in a recording's place
mkfifo "$tmp/fifo"
fx timeout 10 "$bin" replay "$tmp/fifo" info >"$tmp/out" 2>"$tmp/err"
rc=$?
check "replay FIFO is refused at once (exit 3, 'not a regular file')" \
	sh -c "[ $rc = 3 ] && grep -q 'not a regular file' '$tmp/err'"
fx timeout 10 "$bin" doctor --recording "$tmp/fifo" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "doctor --recording FIFO is refused at once" sh -c "[ $rc != 124 ] && [ $rc != 0 ] && grep -q 'not a regular file' '$tmp/err'"
fx timeout 10 "$bin" record -q -c 1 -o "$tmp/fifo" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "record -o FIFO is refused at once" sh -c "[ $rc != 124 ] && [ $rc != 0 ] && grep -q 'not a regular file' '$tmp/err'"
ln -s "$tmp/nowhere/target.rec" "$tmp/dangling.rec"
ln -s "$tmp/missing.rec" "$tmp/dangling2.rec"
fx "$bin" record -q -c 1 -o "$tmp/dangling2.rec" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "record -o DANGLING-LINK is refused (exit 2, names the link), its target not created" \
	sh -c "[ $rc = 2 ] && [ ! -e '$tmp/missing.rec' ] && grep -q 'symbolic link' '$tmp/err'"
fx "$bin" record -q -c 1 -o "$tmp/dangling.rec" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "... also when the link's directory does not exist" sh -c "[ $rc != 0 ] && [ ! -e '$tmp/nowhere' ]"
fx "$bin" record -q -c 1 -o "$tmp/real.rec" 2>"$tmp/err"
ln -s "$tmp/real.rec" "$tmp/link.rec"
fx "$bin" record -q -c 1 -o "$tmp/link.rec" >"$tmp/out" 2>"$tmp/err"
fx "$bin" replay "$tmp/real.rec" info >"$tmp/out" 2>>"$tmp/err"
check "a link to an existing recording is still followed (appended to: 2 samples)" \
	grep -q '^samples *2$' "$tmp/out"

echo "1..$n"
[ $fail = 0 ]
