#!/bin/sh
# -i / --id that names no GPU ('', ',', ' , ': an empty variable in a health
# check) is a usage error in every command that takes it: exit 2 and one
# line on stderr naming the option, nothing on stdout, before any GPU is
# read; live (status, query, watch, record, serve, top) and replayed
# (replay FILE status|watch|record|top). A real selection still works.
# Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
bin=$O/gpuscope
if [ ! -x "$bin" ]; then
	echo "1..0 # SKIP needs $bin"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/# /' "$f" | head -n 10; done
}
fixed() {
	GPUSCOPE_NVML=$O/fakenvml/current/libnvidia-ml.so.1 FAKE_NVML_TIME=0 FAKE_NVML_EPOCH=1767225600 \
		GPUSCOPE_CLOCK=1767225600 GPUSCOPE_PROC_ROOT=tests/fixtures/proc TZ=UTC \
		GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty GPUSCOPE_PASSWD=tests/fixtures/passwd \
		FAKE_NVML_SCENARIO=tests/scenarios/h100x2.scn "$@"
}
# refused ID COMMAND...: the command with -i ID must exit 2 with one line naming -i
refused() {
	id=$1; shift
	fixed timeout 20 "$@" -i "$id" </dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
	# shellcheck disable=SC2046
	set -- $(echo "$*" | sed "s|^$bin|gpuscope|; s|$tmp/||g")
	if [ $rc = 2 ] && { [ ! -s "$tmp/out" ] || { case " $* " in *" --json "*) grep -q '"schema":"gpuscope.error/1"' "$tmp/out" ;; *) false ;; esac; }; } && [ "$(wc -l <"$tmp/err")" = 1 ] &&
		grep -q -- "-i/--id '$id' names no GPU" "$tmp/err"; then
		ok "$* -i '$id': usage error, one line naming -i (exit 2)"
	else
		not_ok "$* -i '$id': exit 2 with one line naming -i, nothing on stdout (exit $rc)" \
			"$tmp/out" "$tmp/err"
	fi
}

if fixed "$bin" record -q -d 0.05 -c 2 -o "$tmp/h.rec" >/dev/null 2>"$tmp/err" && [ -s "$tmp/h.rec" ]; then
	ok "a recording to replay"
else
	not_ok "record for the replays" "$tmp/err"
fi
for id in "" "," " , "; do
	refused "$id" "$bin" status
	refused "$id" "$bin" status --json
	refused "$id" "$bin" query --query-gpu=index,name --format=csv
	refused "$id" "$bin" watch -c 1 -d 0.05 --format csv
	refused "$id" "$bin" record -q -c 1 -d 0.05 -o "$tmp/x.rec"
	refused "$id" "$bin" serve --listen 127.0.0.1:0
	refused "$id" "$bin" replay "$tmp/h.rec" status
	refused "$id" "$bin" replay "$tmp/h.rec" watch --format csv
	refused "$id" "$bin" replay "$tmp/h.rec" record -q -o "$tmp/y.rec"
done
fixed "$bin" status --id= </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc = 2 ] && [ ! -s "$tmp/out" ] && grep -q -- "-i/--id '' names no GPU" "$tmp/err"; then
	ok "status --id= (the long option, empty): exit 2"
else
	not_ok "status --id=: exit 2 (exit $rc)" "$tmp/out" "$tmp/err"
fi
if [ -f "$tmp/x.rec" ] || [ -f "$tmp/y.rec" ]; then
	not_ok "a refused record wrote no file"
else
	ok "a refused record wrote no file"
fi

# top needs a terminal: script(1) gives it one
if command -v script >/dev/null 2>&1; then
	for sub in "" "replay $tmp/h.rec"; do
		# shellcheck disable=SC2086
		fixed script -qec "TERM=xterm timeout 20 $bin $sub top -i ','" /dev/null </dev/null >"$tmp/out" 2>&1
		rc=$?
		if [ $rc = 2 ] && grep -q -- "-i/--id ',' names no GPU" "$tmp/out"; then
			ok "${sub:+$sub }top -i ',': usage error (exit 2)"
		else
			not_ok "${sub:+$sub }top -i ',': exit 2 naming -i (exit $rc)" "$tmp/out"
		fi
	done
else
	ok "# SKIP top -i: needs script(1)"
	ok "# SKIP replay top -i: needs script(1)"
fi

# a selection that names a GPU still selects it
fixed "$bin" query --query-gpu=index --format=csv,noheader -i ",1," >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc = 0 ] && [ "$(cat "$tmp/out")" = 1 ]; then
	ok "-i ',1,': GPU 1 alone"
else
	not_ok "-i ',1,' selects GPU 1 (exit $rc)" "$tmp/out" "$tmp/err"
fi

echo "1..$n"
[ "$fail" -eq 0 ]
