# shellcheck shell=sh
# Sourced by the gpuscope queue suites (tests/cli/queue-*.sh, bench/queue.sh):
# TAP counters and checks, test users, a daemon of the test's own on the
# fake NVML (tests/scenarios/queue.scn, live processes in $live), the
# client as root or as a test user, JSON look-ups, and a cleanup that runs
# on every exit: the daemon and every process of the test killed, the
# test's cgroups removed, its users and group deleted.
#
# A suite sets nothing before sourcing it, then calls q_require (prints
# "1..0 # SKIP why" and exits when not root or without a writable cgroup v2
# hierarchy), q_users, q_conf and q_start.
set -u
O=${O:-build}
top=${top:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top" || exit 2
case $O in
/*) obin=$O ;;
*) obin=$top/$O ;;
esac
bin=$obin/gpuscope
fakelib=$obin/fakenvml/current/libnvidia-ml.so.1
hog=$top/tests/queue/gpuhog.sh
scn=$top/tests/scenarios/queue.scn
n=0 fail=0
tmp="" qd="" bgpids="" q_usr="" q_grp="" cgroot="" sock=""
ok() { n=$((n + 1)); echo "ok $n - $1"; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
# shellcheck source=tests/skip.inc
. ./tests/skip.inc
not_ok() { # what, then files whose head explains it
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/# /' "$f" | tail -n 25; done
}
check() { # what, then a command that must succeed
	what=$1; shift
	if "$@" >"$tmp/chk" 2>&1; then ok "$what"; else not_ok "$what" "$tmp/chk" "$tmp/qd.log"; fi
}
# the end of a suite: the plan, and the exit status
q_done() {
	echo "1..$n"
	[ "$fail" -eq 0 ]
}

# The cgroup v2 mount point, from /proc/self/mountinfo (never assumed).
q_cg2() {
	awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } ; break } }' /proc/self/mountinfo
}

q_require() {
	if [ "$(id -u)" != 0 ]; then
		echo "1..0 # SKIP needs root (creates users, runs jobs as them, makes cgroups)"
		exit 0
	fi
	cg2=$(q_cg2)
	if [ -z "$cg2" ] || ! mkdir "$cg2/gpuscope-test-$$" 2>/dev/null; then
		echo "1..0 # SKIP needs a writable cgroup v2 hierarchy (none in /proc/self/mountinfo, or read-only)"
		exit 0
	fi
	rmdir "$cg2/gpuscope-test-$$"
	missing=""
	for f in "$bin" "$fakelib" "$hog" "$scn"; do [ -e "$f" ] || missing="$missing $f"; done
	for c in python3 setpriv useradd groupadd userdel timeout; do
		command -v $c >/dev/null 2>&1 || missing="$missing $c"
	done
	if [ -n "$missing" ]; then
		# root with cgroups: the suite must run; what it lacks is a failure
		echo "not ok 1 - the queue suite cannot run: missing$missing (build with make, install python3 and util-linux)"
		echo "1..1"
		exit 1
	fi
	# a python3 that the test users can run too (pyenv shims live in root's home)
	upy=""
	for p in /usr/bin/python3 /usr/local/bin/python3 "$(command -v python3)"; do
		if [ -x "$p" ] && setpriv --reuid=65534 --regid=65534 --clear-groups "$p" -c '' 2>/dev/null; then
			upy=$p
			break
		fi
	done
	tmp=$(mktemp -d /tmp/gsq.XXXXXX)
	chmod 755 "$tmp"
	trap q_cleanup EXIT
	trap 'exit 1' INT TERM HUP
	live=$tmp/live
	mkdir -p "$live" "$tmp/w" "$tmp/out"
	chmod 1777 "$live" "$tmp/out"
	chmod 755 "$tmp/w"
	cgroot=$cg2/gpuscope-test-$$
	sock=$tmp/q.sock
	epoch=$(date +%s)
	FAKE_NVML_LIVE_DIR=$live
	GPUSCOPE_QUEUE_SOCKET=$sock
	export FAKE_NVML_LIVE_DIR GPUSCOPE_QUEUE_SOCKET
	unset GPUSCOPE_QUEUE_CONF CUDA_VISIBLE_DEVICES NVIDIA_VISIBLE_DEVICES 2>/dev/null
	# jobs are submitted from a directory every test user may enter
	cd "$tmp/w" || exit 2
}

# q_users SUFFIX...: users gsq_SUFFIX_$$ ($ua, $ub, ... by the caller), and
# the admin group gsq_adm_$$ ($adm_group); a user whose SUFFIX ends in "+adm"
# is put in it: q_users a b c+adm
q_users() {
	adm_group=gsq_adm_$$
	groupadd "$adm_group" || { not_ok "groupadd $adm_group"; return 1; }
	q_grp=$adm_group
	for s in "$@"; do
		case $s in
		*+adm) u=gsq_${s%+adm}_$$ extra="-G $adm_group" ;;
		*) u=gsq_${s}_$$ extra="" ;;
		esac
		# shellcheck disable=SC2086
		useradd -M -N -s /bin/sh $extra "$u" || { not_ok "useradd $u"; return 1; }
		q_usr="$q_usr $u"
	done
}

# q_conf [KEY = VALUE lines...]: the test's config in $conf
q_conf() {
	conf=$tmp/q.conf
	{
		# the test's keys; one given as an argument replaces it
		for kv in "socket = $sock" "state_dir = $tmp/state" "cgroup_root = $cgroot" \
			"admin_group = ${adm_group:-gsq_adm_$$}" "sample_interval = 0.2s" "grace = 1s" \
			"cleanup_timeout = 3s" "mem_margin = 256M"; do
			k=${kv%% =*}
			given=""
			for l in "$@"; do case $l in "$k "* | "$k="*) given=1 ;; esac; done
			[ -n "$given" ] || echo "$kv"
		done
		for l in "$@"; do echo "$l"; done
	} >"$conf"
}

# q_start [SCENARIO]: start the daemon ($qd), wait until it answers ping
q_start() {
	s=${1:-$scn}
	echo "--- start $(date +%T.%N)" >>"$tmp/qd.log"
	env GPUSCOPE_NVML="$fakelib" FAKE_NVML_SCENARIO="$s" FAKE_NVML_LIVE_DIR="$live" \
		FAKE_NVML_EPOCH="$epoch" "$bin" queued --config "$conf" >>"$tmp/qd.log" 2>&1 &
	qd=$!
	i=0
	while [ $i -lt 100 ]; do
		if "$bin" queue ls --socket "$sock" --json >/dev/null 2>&1; then
			# and a first sample of the GPUs
			j=0
			while [ $j -lt 50 ]; do
				q_ls_gpus | grep -q . && return 0
				sleep 0.1
				j=$((j + 1))
			done
			return 0
		fi
		kill -0 "$qd" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	not_ok "the daemon did not start" "$tmp/qd.log"
	return 1
}
# q_stop [SIGNAL]: stop the daemon (default KILL) and wait for it
q_stop() {
	[ -n "$qd" ] || return 0
	kill -"${1:-KILL}" "$qd" 2>/dev/null
	wait "$qd" 2>/dev/null
	qd=""
}

# the client as root: q ARGS...; as a user: as USER q ARGS..., or as USER CMD
q() { qs=$1; shift; "$bin" queue "$qs" --socket "$sock" "$@"; }
as() {
	u=$1; shift
	setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups -- "$@"
}
# as a user, the client: qas USER ARGS...
qas() {
	u=$1; shift
	qs=$1; shift
	setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups -- "$bin" queue "$qs" --socket "$sock" "$@"
}
# sub [ARGS...] -- COMMAND: submit as root, print the id
sub() { q submit --parsable "$@"; }
subas() { u=$1; shift; qas "$u" submit --parsable "$@"; }

# jpy EXPR: python3 evaluates EXPR with d = the JSON on stdin; prints it
# (lists joined with ",", None as "null", booleans lowercase)
jpy() {
	python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except Exception as e:
    print("BADJSON: %s" % e)
    sys.exit(1)
def f(v):
    if v is None: return "null"
    if v is True: return "true"
    if v is False: return "false"
    if isinstance(v, list): return ",".join(f(x) for x in v)
    return str(v)
try:
    print(f(eval(sys.argv[1])))
except Exception as e:
    print("ERR: %r" % e)
    sys.exit(1)
' "$1"
}
# jtest EXPR: succeeds when EXPR (d = the JSON on stdin) is true
jtest() { python3 -c 'import json, sys; d = json.load(sys.stdin); sys.exit(0 if eval(sys.argv[1]) else 1)' "$1"; }
# jj JOB EXPR: EXPR with j = the job (show --json)
jj() { q show --json "$1" 2>/dev/null | jpy "(lambda j: $2)(d['job'])"; }
st() { jj "$1" 'j["state"]'; }
# the GPUs, one line each: INDEX UUID USED AVAILABLE JOBS FLAGS
q_ls_gpus() {
	q ls --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
for g in d.get("gpus", []):
    print(g["index"], g["uuid"], g.get("used"), g.get("available"),
          ",".join(str(x) for x in g.get("jobs", [])) or "-",
          ",".join(g.get("flags", [])) or "-")
' 2>/dev/null
}
uuid_of() { q_ls_gpus | awk -v i="$1" '$1 == i { print $2 }'; }
flags_of() { q_ls_gpus | awk -v i="$1" '$1 == i { print $6 }'; }
has_flag() { flags_of "$1" | grep -q "$2"; }
no_flag() { f=$(flags_of "$1") && [ -n "$f" ] && ! echo "$f" | grep -q "$2"; }

# all_events FILE: every event so far, one JSON object a line (events --json
# answers a page at a time: page on with --after the last id)
all_events() {
	: >"$1"
	ev_after=0
	ev_pages=0
	while [ $ev_pages -lt 200 ]; do
		q events --json --after "$ev_after" >"$tmp/evpage" 2>/dev/null || break
		grep '"kind"' "$tmp/evpage" >"$tmp/evpage2"
		[ -s "$tmp/evpage2" ] || break
		cat "$tmp/evpage2" >>"$1"
		ev_last=$(tail -n 1 "$tmp/evpage2" | jpy 'd.get("event", d)["id"]')
		[ "$ev_last" -gt "$ev_after" ] 2>/dev/null || break
		ev_after=$ev_last
		ev_pages=$((ev_pages + 1))
	done
}
# wait_st JOB TIMEOUT STATE...: until the job is in one of the states
wait_st() {
	wj=$1 wt=$2; shift 2
	end=$(($(date +%s) + wt))
	while :; do
		cur=$(st "$wj")
		for s in "$@"; do [ "$cur" = "$s" ] && return 0; done
		[ "$(date +%s)" -ge "$end" ] && { echo "job $wj: state '$cur', waited ${wt}s for: $*" >"$tmp/why"; return 1; }
		sleep 0.2
	done
}
# expect_st WHAT JOB TIMEOUT STATE...: a TAP case of wait_st
expect_st() {
	what=$1; shift
	if wait_st "$@"; then ok "$what"; else
		q show "$1" >>"$tmp/why" 2>&1
		not_ok "$what" "$tmp/why" "$tmp/qd.log"
	fi
}
# wait_true TIMEOUT CMD...: until CMD succeeds
wait_true() {
	wt=$1; shift
	end=$(($(date +%s) + wt))
	while ! "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.2
	done
}
# run a background helper that cleanup kills
bg() { "$@" & bgpids="$bgpids $!"; }

# the pids of processes that belong to this test (their command line or
# cgroup names its tmp dir or cgroup): kill them by id at the end
q_our_pids() {
	for d in /proc/[0-9]*; do
		p=${d#/proc/}
		[ "$p" = $$ ] && continue
		if grep -q "gpuscope-test-$$" "$d/cgroup" 2>/dev/null ||
			{ tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null | grep -q "$tmp/"; then
			echo "$p"
		fi
	done
}

q_cleanup() {
	cd / || true
	[ -n "$qd" ] && kill -9 "$qd" 2>/dev/null
	for p in $bgpids; do kill -9 "$p" 2>/dev/null; done
	if [ -n "$cgroot" ] && [ -d "$cgroot" ]; then
		find "$cgroot" -name cgroup.kill 2>/dev/null | while read -r f; do echo 1 >"$f" 2>/dev/null; done
	fi
	if [ -n "$tmp" ]; then
		for p in $(q_our_pids); do kill -9 "$p" 2>/dev/null; done
	fi
	if [ -n "$cgroot" ] && [ -d "$cgroot" ]; then
		i=0
		while [ -d "$cgroot" ] && [ $i -lt 20 ]; do
			find "$cgroot" -depth -type d -exec rmdir {} \; 2>/dev/null
			[ -d "$cgroot" ] && sleep 0.1
			i=$((i + 1))
		done
	fi
	for u in $q_usr; do userdel "$u" 2>/dev/null; done
	[ -n "$q_grp" ] && groupdel "$q_grp" 2>/dev/null
	[ -n "$tmp" ] && rm -rf "$tmp"
}
