#!/bin/sh
# gpuscope queue's command line against a daemon of its own on the fake NVML
# (tests/scenarios/queue.scn): option parsing and its one-line errors (exit
# 2), a daemon that cannot be reached (exit 3), refusals (exit 1, with
# {"ok": false} on stdout under --json), what submit sends (argv, cwd,
# GPUs, memory, mode, --after, --time, --name, --output) as show --json reads
# it back, the ls table and its GPU lines (80 columns on a terminal, reasons
# whole in a pipe), --state/-u/--me, why, hold/release/cancel, submit --wait
# and its exit codes, logs (-f, --err, --json), history, events (--json is
# one object per line, -f follows), the admin commands as root and refused
# to a user. The queue's behaviour (placement, preemption, restarts,
# security) is tests/cli/queue-{e2e,security,crash,race}.sh's. Prints TAP.
# The cases without a daemon run everywhere; the rest need root and a
# writable cgroup v2 hierarchy (as CI has), else they are one skip.
set -u
# shellcheck source=tests/queue/lib.sh
. "$(dirname "$0")/../queue/lib.sh"

# can this machine run a daemon of the test's own? (q_require prints nothing when it can)
can_daemon=0
if [ "$(id -u)" = 0 ]; then
	cg=$(q_cg2)
	if [ -n "$cg" ] && mkdir "$cg/gpuscope-test-$$" 2>/dev/null; then
		rmdir "$cg/gpuscope-test-$$"
		can_daemon=1
	fi
fi
if [ ! -x "$bin" ]; then
	echo "1..0 # SKIP needs $bin"
	exit 0
fi
if [ "$can_daemon" = 1 ]; then
	q_require
else
	tmp=$(mktemp -d /tmp/gsq.XXXXXX)
	trap 'rm -rf "$tmp"' EXIT
	trap 'exit 1' INT TERM HUP
	sock=$tmp/q.sock
	GPUSCOPE_QUEUE_SOCKET=$sock
	export GPUSCOPE_QUEUE_SOCKET
	cd "$tmp" || exit 2
fi

# run WANT-EXIT WHAT CMD...: stdout in $tmp/o, stderr in $tmp/e
run() {
	want=$1 what=$2
	shift 2
	"$@" >"$tmp/o" 2>"$tmp/e"
	rc=$?
	if [ "$rc" -eq "$want" ]; then ok "$what (exit $rc)"; else not_ok "$what: exit $rc, wanted $want" "$tmp/o" "$tmp/e"; fi
}
# err_line WHAT PATTERN: stderr is one line "gpuscope queue: ..." matching PATTERN, or (with
# usage) that line then the usage
err_line() {
	first=$(head -n 1 "$tmp/e")
	if echo "$first" | grep -q '^gpuscope queue: ' && echo "$first" | grep -q -- "$2" &&
		{ [ "$(wc -l <"$tmp/e")" -eq 1 ] || sed -n 2p "$tmp/e" | grep -q '^usage: gpuscope queue'; }; then
		ok "$1: one line naming '$2'"
	else
		not_ok "$1: not one error line naming '$2'" "$tmp/e"
	fi
}
# json_ok WHAT EXPR: $tmp/o is JSON and EXPR (d = it) holds
json_ok() {
	if jtest "$2" <"$tmp/o" 2>"$tmp/jerr"; then ok "$1"; else not_ok "$1" "$tmp/o" "$tmp/jerr"; fi
}

# every client call ends within a minute (a client that would hang fails its case)
q() { qs=$1; shift; timeout -k 5 60 "$bin" queue "$qs" --socket "$sock" "$@"; }
qas() {
	u=$1 qs=$2
	shift 2
	timeout -k 5 60 setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups -- "$bin" queue "$qs" --socket "$sock" "$@"
}

# --- 1. without a daemon: usage (2), unreachable (3) ---
Q() { timeout -k 5 60 "$bin" queue "$@"; }
run 0 "queue --help" Q --help
if grep -q '^usage: gpuscope queue' "$tmp/o" && grep -q 'submit' "$tmp/o" && grep -q -- '--gpu-mem' "$tmp/o"; then
	ok "queue --help lists the commands and options"
else not_ok "queue --help lists the commands and options" "$tmp/o"; fi
run 0 "queue submit --help" Q submit --help
grep -q '^usage: gpuscope queue submit' "$tmp/o" && ok "submit --help is submit's usage" || not_ok "submit --help is submit's usage" "$tmp/o"
run 2 "an unknown queue command" Q frobnicate
err_line "an unknown queue command" "'frobnicate' is not a queue command"
run 2 "submit without a command" Q submit --gpus 1
err_line "submit without a command" "needs a COMMAND"
run 2 "--gpus x" Q submit --gpus x -- true
err_line "--gpus x" "--gpus takes a whole number"
run 2 "--gpus 17" Q submit --gpus 17 -- true
run 2 "--gpu-mem 20Q" Q submit --gpu-mem 20Q -- true
err_line "--gpu-mem 20Q" "--gpu-mem takes a size"
run 2 "--time soon" Q submit --time soon -- true
err_line "--time soon" "--time takes a duration"
run 2 "--priority high" Q submit --priority high -- true
run 2 "--exclusive with --shared" Q submit --exclusive --shared -- true
err_line "--exclusive with --shared" "give one"
run 2 "--gpus 2 with one --gpu" Q submit --gpus 2 --gpu 0 -- true
err_line "--gpus 2 with one --gpu" "disagree"
run 2 "--after x" Q submit --after 1,x -- true
err_line "--after x" "'x' is not a job id"
run 2 "--after 1," Q submit --after 1, -- true
run 2 "cancel abc" Q cancel abc
err_line "cancel abc" "'abc' is not a job id"
run 2 "cancel --signal BOGUS" Q cancel 1 --signal BOGUS
err_line "cancel --signal BOGUS" "--signal takes a signal"
run 2 "show without a job" Q show
err_line "show without a job" "needs a job id"
run 2 "show 1 2" Q show 1 2
err_line "show 1 2" "unexpected argument '2'"
run 2 "drain without a GPU" Q drain
err_line "drain without a GPU" "needs a GPU"
run 2 "ls --signal" Q ls --signal INT
err_line "ls --signal" "takes no option --signal"
run 2 "an unknown option" Q ls --frob
err_line "an unknown option" "unknown option '--frob'"
run 2 "--socket without a value" Q ls --socket
err_line "--socket without a value" "needs a value"
run 2 "ls --state bogus" Q ls --state running,bogus
err_line "ls --state bogus" "--state takes state names"
run 2 "history --since bogus" Q history --since yesterday
run 2 "history -n 0" Q history -n 0
run 2 "events --after x" Q events --after x
run 2 "--me with -u" Q ls --me -u root
run 2 "usage error with --json" Q show nope --json
json_ok "a usage error with --json is {ok: false, code: usage} on stdout" \
	'd["ok"] is False and d["code"] == "usage" and "not a job id" in d["error"]'
run 2 "an argument that is not UTF-8" Q submit -- echo "$(printf 'caf\351')"
err_line "an argument that is not UTF-8" "argument 2 of the command is not UTF-8"
env "$(printf 'GSQ_BAD=\351')" timeout 60 "$bin" queue submit --socket "$tmp/none.sock" -- true >"$tmp/o" 2>"$tmp/e"
if [ $? -eq 3 ] && grep -q "GSQ_BAD is not UTF-8 text: the job will not have it" "$tmp/e"; then
	ok "a variable that is not UTF-8 is left behind, and said so"
else not_ok "a variable that is not UTF-8 is left behind, and said so" "$tmp/e"; fi
# options after COMMAND are its own: submit reaches the (missing) daemon
run 3 "options after COMMAND are the command's" Q submit --socket "$tmp/none.sock" -- true --gpus x
run 3 "no daemon" Q ls --socket "$tmp/none.sock"
err_line "no daemon" "no daemon is running"
run 3 "no daemon, --json" Q ls --json --socket "$tmp/none.sock"
json_ok "no daemon, --json: {ok: false, error, code unreachable} on stdout" 'd["ok"] is False and "cannot reach" in d["error"] and d["code"] == "unreachable"'
GPUSCOPE_QUEUE_SOCKET=$tmp/env.sock run 3 "GPUSCOPE_QUEUE_SOCKET" Q ping
err_line "GPUSCOPE_QUEUE_SOCKET is the default socket" "$tmp/env.sock"
run 3 "--socket before the command" Q --socket "$tmp/none2.sock" ping
err_line "--socket before the command" "none2.sock"
: >"$tmp/notasock"
run 3 "a socket that is a file" Q ping --socket "$tmp/notasock"

if [ "$can_daemon" != 1 ]; then
	skip "the cases with a daemon need root and a writable cgroup v2 hierarchy"
	q_done
	exit $?
fi

# --- 2. with a daemon ---
q_users a
ua=gsq_a_$$
q_conf
q_start || { q_done; exit 1; }

run 0 "ping" q ping
grep -q "you are uid 0, an admin" "$tmp/o" && ok "ping: root is uid 0 and an admin" || not_ok "ping says who" "$tmp/o"
run 0 "ping --json" q ping --json
json_ok "ping --json" 'd["ok"] is True and d["uid"] == 0 and d["admin"] is True and d["version"]'

# submit: what it prints and what it sends
run 0 "submit" q submit --hold -- sh -c 'echo "a b"'
grep -qE '^submitted job [0-9]+$' "$tmp/o" && ok "submit prints 'submitted job N'" || not_ok "submit prints 'submitted job N'" "$tmp/o"
j1=$(sed -n 's/^submitted job //p' "$tmp/o")
run 0 "submit --parsable" q submit --parsable --hold --name hello -- echo hi
grep -qxE '[0-9]+' "$tmp/o" && ok "--parsable prints the id alone" || not_ok "--parsable prints the id alone" "$tmp/o"
j2=$(cat "$tmp/o")
# (held, and after a held job: released, it still waits)
run 0 "submit --json" q submit --json --hold --after "$j2" -- true
json_ok "submit --json: {ok, job: {id, state held}}" 'd["ok"] is True and isinstance(d["job"]["id"], int) and d["job"]["state"] == "held"'
j3=$(jpy 'd["job"]["id"]' <"$tmp/o")
run 0 "show --json" q show --json "$j1"
json_ok "argv, cwd and env reach the daemon as given" \
	"d['job']['argv'] == ['sh', '-c', 'echo \"a b\"'] and d['job']['cwd'] == '$PWD' and d['job']['id'] == $j1"
GSQ_PROBE=xyz q submit --hold --json -- true >"$tmp/o" 2>"$tmp/e"
jp=$(jpy 'd["job"]["id"]' <"$tmp/o")
q show --json "$jp" >"$tmp/o" 2>"$tmp/e"
json_ok "the environment is sent (show's env has GSQ_PROBE)" 'd["job"].get("env", {}).get("GSQ_PROBE") == "xyz"'
q submit --json --hold --gpu-mem 20G -- true >"$tmp/o" 2>"$tmp/e"
json_ok "--gpu-mem 20G alone: one GPU, shared, 21474836480 bytes" \
	'd["job"]["gpus"] == 1 and d["job"]["mode"] == "shared" and d["job"]["gpu_mem"] == 21474836480'
q submit --json --hold --gpu-mem 20G --exclusive -- true >"$tmp/o" 2>"$tmp/e"
json_ok "--gpu-mem with --exclusive stays exclusive" 'd["job"]["mode"] == "exclusive"'
u2=$(uuid_of 2)
q submit --json --hold --gpu 2 -- true >"$tmp/o" 2>"$tmp/e"
json_ok "--gpu 2 (an index): one GPU, the daemon's UUID of GPU 2" "d['job']['gpus'] == 1 and d['job']['want_uuids'] == ['$u2']"
q submit --json --hold --gpus 3 --priority 5 --time 1:30:00 --grace 5 --name "my job" \
	--after "$j1,$j2" --after "$j3" --preemptible --requeue -o out.txt -e err.txt -- true >"$tmp/o" 2>"$tmp/e"
json_ok "--gpus --priority --time --grace --name --after (twice) --preemptible --requeue -o -e" \
	"(lambda j: j['gpus'] == 3 and j['priority'] == 5 and j['time_limit'] == 5400 and j['grace'] == 5 and j['name'] == 'my job' and j['after'] == [$j1, $j2, $j3] and j['preemptible'] is True and j['requeue'] is True and j['output'] == '$PWD/out.txt' and j['error'] == '$PWD/err.txt')(d['job'])"
run 1 "an unknown GPU is refused" q submit --gpu GPU-ffff -- true
err_line "an unknown GPU" "unknown GPU"
run 1 "more memory than any GPU" q submit --gpu-mem 900G -- true
run 1 "more GPUs than the machine has" q submit --gpus 9 -- true
run 1 "refused, --json" q submit --json --gpu-mem 900G -- true
json_ok "a refusal with --json is the daemon's {ok: false, error, code}" 'd["ok"] is False and d["error"] and d["code"]'

# ls
run 0 "ls" q ls
head -n 1 "$tmp/o" | grep -q '^ JOBID USER     NAME       STATE     GPUS     MEM PRIO     TIME REASON/EST.START$' &&
	ok "ls: the header" || not_ok "ls: the header" "$tmp/o"
grep -qE "^ +$j2 root +hello +held " "$tmp/o" && ok "ls: a held job's line" || not_ok "ls: a held job's line" "$tmp/o"
if [ "$(grep -cE '^  [0-3] NVIDIA ' "$tmp/o")" -eq 4 ]; then ok "ls: one line per GPU"; else not_ok "ls: one line per GPU" "$tmp/o"; fi
grep -qE '^[0-9]+ running, [0-9]+ queued$' "$tmp/o" && ok "ls: the count of jobs" || not_ok "ls: the count of jobs" "$tmp/o"
grep -q "release $j2')" "$tmp/o" && ok "ls in a pipe: reasons are whole" || not_ok "ls in a pipe: reasons are whole" "$tmp/o"
run 0 "queue (no command) is ls" timeout 60 "$bin" queue --socket "$sock"
head -n 1 "$tmp/o" | grep -q '^ JOBID' && ok "queue alone prints the ls table" || not_ok "queue alone prints the ls table" "$tmp/o"
run 0 "ls --json" q ls --json
json_ok "ls --json: jobs, gpus (4, with uuid, total, flags), daemon" \
	'd["ok"] is True and len(d["gpus"]) == 4 and all("uuid" in g and "total" in g and "flags" in g for g in d["gpus"]) and "paused" in d["daemon"] and any(j["id"] == '"$j1"' for j in d["jobs"])'
run 0 "ls --state held --json" q ls --state held --json
json_ok "--state held: held jobs only" 'len(d["jobs"]) > 0 and all(j["state"] == "held" for j in d["jobs"])'
run 2 "ls --state done: an end, which ls does not list" q ls --state "done"
err_line "ls --state done" "queue history"
run 0 "ls -u nobody-here" q ls -u "gsq_none_$$" --json
json_ok "-u USER: that user's jobs only" 'd["jobs"] == []'
run 0 "ls --me" q ls --me --json
json_ok "--me: mine (root's)" 'len(d["jobs"]) > 0 and all(j["uid"] == 0 for j in d["jobs"])'
run 0 "ls --json --compact" q ls --json --compact
[ "$(wc -l <"$tmp/o")" -eq 1 ] && ok "--compact: one line" || not_ok "--compact: one line" "$tmp/o"
if command -v script >/dev/null 2>&1; then
	COLUMNS=80 script -qc "stty cols 80 2>/dev/null; '$bin' queue ls --socket '$sock'" /dev/null >"$tmp/tty" 2>&1
	if python3 - "$tmp/tty" <<'EOF'; then ok "ls on an 80-column terminal: every line fits, long reasons cut"; else not_ok "ls on an 80-column terminal" "$tmp/tty"; fi
import re, sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
lines = [re.sub(r"\x1b\[[0-9;]*m", "", l).rstrip("\r") for l in text.split("\n")]
lines = [l for l in lines if l]
sys.exit(0 if lines and all(len(l) <= 80 for l in lines) and any(l.endswith("\u2026") or l.endswith("+") for l in lines) else 1)
EOF
else
	skip_missing "ls on a terminal: needs script (util-linux)"
fi

# show, why, hold, release, cancel
run 0 "show" q show "$j2"
grep -q '^state: *held$' "$tmp/o" && grep -q '^name: *hello$' "$tmp/o" && grep -q '^command: *echo hi$' "$tmp/o" &&
	ok "show: state, name, command" || not_ok "show: state, name, command" "$tmp/o"
run 1 "show of a job that does not exist" q show 999999
err_line "show 999999" "999999"
run 1 "show 999999 --json" q show 999999 --json
json_ok "show 999999 --json: {ok: false, code: notfound}" 'd["ok"] is False and d["code"] == "notfound"'
run 0 "why" q why "$j2"
grep -q "^job $j2 is held" "$tmp/o" && [ "$(wc -l <"$tmp/o")" -eq 1 ] && ok "why: one sentence" || not_ok "why: one sentence" "$tmp/o"
run 0 "why --json" q why "$j2" --json
json_ok "why --json: job, state, code, reason, est_start" "d['job'] == $j2 and d['state'] == 'held' and d['code'] == 'held' and d['reason'] and 'est_start' in d"
run 0 "release" q release "$j3"
grep -qx "released job $j3" "$tmp/o" && ok "release: 'released job N'" || not_ok "release prints" "$tmp/o"
run 0 "hold" q hold "$j3"
grep -qx "held job $j3" "$tmp/o" && ok "hold: 'held job N'" || not_ok "hold prints" "$tmp/o"
run 0 "cancel --signal INT --json" q cancel "$j3" --signal SIGINT --json
json_ok "cancel --json: done and failed" "d['done'] == [$j3] and d['failed'] == []"
run 0 "cancel two" q cancel "$j1" "$j2"
[ "$(grep -c '^cancelled job ' "$tmp/o")" -eq 2 ] && ok "cancel: a line per job" || not_ok "cancel: a line per job" "$tmp/o"
run 1 "cancel of an ended job and a missing one" q cancel "$j1" 999999
grep -q "^gpuscope queue: job 999999: " "$tmp/e" && ok "cancel: one error line per job refused" || not_ok "cancel: one error line per job refused" "$tmp/e"

# jobs that run (no GPU, so that none of the GPU policy is in the way): --wait, logs, history
run 7 "submit --wait: the job's exit status" q submit --wait --gpus 0 -- sh -c 'exit 7'
grep -q "exit 7" "$tmp/e" && ok "--wait says how a failed job ended" || not_ok "--wait says how a failed job ended" "$tmp/e"
run 0 "submit --wait of a job that succeeds" q submit --wait --parsable --gpus 0 -- sh -c 'echo line1; echo line2; echo oops >&2'
jw=$(cat "$tmp/o")
run 137 "submit --wait of a job killed by SIGKILL: 128 + 9" q submit --wait --gpus 0 -- sh -c 'kill -9 $$'
run 0 "logs" q logs "$jw"
printf 'line1\nline2\noops\n' | cmp -s - "$tmp/o" && ok "logs: the job's output as written" || not_ok "logs: the job's output" "$tmp/o"
run 0 "logs --json" q logs --json "$jw"
json_ok "logs --json: data, offset, eof" '"line1" in d["data"] and d["eof"] is True and d["offset"] >= 12'
je=$(q submit --parsable --gpus 0 -e err.txt -- sh -c 'echo out; echo err >&2')
wait_st "$je" 20 "done" failed
run 0 "logs --err" q logs --err "$je"
grep -qx err "$tmp/o" && ! grep -qx out "$tmp/o" && ok "logs --err: the job's standard error" || not_ok "logs --err" "$tmp/o"
jf=$(q submit --parsable --gpus 0 -- sh -c 'echo first; sleep 1; echo second')
run 0 "logs -f follows until the job ends" q logs -f "$jf"
printf 'first\nsecond\n' | cmp -s - "$tmp/o" && ok "logs -f: everything, then the end" || not_ok "logs -f" "$tmp/o" "$tmp/e"
run 0 "history" q history
head -n 1 "$tmp/o" | grep -q '^ JOBID USER     NAME       STATE     EXIT  GPUS  ENDED' && grep -qE "^ +$jw root .* done +0 " "$tmp/o" &&
	ok "history: the table, with the done job and its exit" || not_ok "history: the table" "$tmp/o"
run 0 "history -n 1 --json" q history -n 1 --json
json_ok "history -n 1: one job, ended" 'len(d["jobs"]) == 1 and d["jobs"][0]["state"] in ("done", "failed", "cancelled", "timeout")'
run 0 "history --since -1h --all" q history --since -1h --all --json
json_ok "history --since -1h: the jobs of the test" "any(j['id'] == $jw for j in d['jobs'])"

# events
run 0 "events" q events
grep -qE "job $jw +root +(start|done|exit)" "$tmp/o" && ok "events: one line per event" || not_ok "events: one line per event" "$tmp/o"
run 0 "events --json" q events --json
if python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    assert isinstance(e["id"], int) and e["kind"] and "time" in e and "job" in e
    n += 1
sys.exit(0 if n > 3 else 1)
' "$tmp/o" 2>"$tmp/jerr"; then ok "events --json: one EVENT object per line"; else not_ok "events --json: ndjson of EVENTs" "$tmp/o" "$tmp/jerr"; fi
last=$(tail -n 1 "$tmp/o" | jpy 'd["id"]')
run 0 "events --after LAST" q events --after "$last"
[ ! -s "$tmp/o" ] && ok "events --after the last: nothing" || not_ok "events --after the last: nothing" "$tmp/o"
q events -f --json --after "$last" >"$tmp/follow" 2>&1 &
fpid=$!
bgpids="$bgpids $fpid"
sleep 0.5
jn=$(q submit --parsable --hold -- true)
i=0
while [ $i -lt 50 ] && ! grep -q "\"job\": *${jn}[,}]" "$tmp/follow" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
if grep -q "\"job\": *${jn}[,}]" "$tmp/follow" && kill -0 "$fpid" 2>/dev/null; then
	ok "events -f: a new job's event arrives, and it keeps following"
else not_ok "events -f: a new job's event arrives" "$tmp/follow"; fi
kill "$fpid" 2>/dev/null
wait "$fpid" 2>/dev/null

# admin commands: root may, a user may not
run 0 "drain" q drain 3 --reason "cli test"
has_flag 3 drained && ok "drain: the GPU is drained" || not_ok "drain: the GPU is drained" "$tmp/o"
run 0 "resume" q resume 3
no_flag 3 drained && ok "resume: it is not" || not_ok "resume: not drained" "$tmp/o"
run 0 "pause" q pause
q ls --json | jtest 'd["daemon"]["paused"] is True' && ok "pause: ls says paused" || not_ok "pause: ls says paused"
q ls | grep -q 'the queue is paused' && ok "pause: the table says so" || not_ok "pause: the table says so"
run 0 "unpause" q unpause
q ls --json | jtest 'd["daemon"]["paused"] is False' && ok "unpause" || not_ok "unpause"
run 0 "reload" q reload
run 0 "clean of a GPU that is not dirty" q clean 0
run 1 "a user may not drain" qas "$ua" drain 0
err_line "drain as a user" "."
run 1 "a user may not pause" qas "$ua" pause --json
json_ok "refused to a user: code denied" 'd["ok"] is False and d["code"] == "denied"'
run 0 "a user may list everyone's jobs" qas "$ua" ls --json
json_ok "a user's ls has root's jobs" "any(j['uid'] == 0 for j in d['jobs'])"
run 1 "a user may not show root's job" qas "$ua" show "$jw"
run 0 "a user: ping" qas "$ua" ping --json
json_ok "ping as a user: not an admin, their uid" "d['admin'] is False and d['uid'] == $(id -u "$ua")"

# the daemon gone: exit 3
q_stop KILL
run 3 "the daemon killed: exit 3" q ls
err_line "the daemon killed" "no daemon is running"
q_done
