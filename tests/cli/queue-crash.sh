#!/bin/sh
# gpuscope queued killed with SIGKILL at each step of a job's life, then
# restarted on the same state: jobs queued, held, running (their processes
# live on through the daemon's death, with the same pids, and are adopted),
# ending while the daemon is down (exit codes 0, 3, 42 and a signal kept by
# the supervisor), exiting (waiting for their GPU memory), at their time
# limit (the supervisor's backstop), and a burst of submissions killed
# mid-start (each job runs exactly once, none lost); the events say what
# happened while the daemon was down. Prints TAP.
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/queue/lib.sh
. "$top/tests/queue/lib.sh"
q_require
q_users a
ua=gsq_a_$$
q_conf "resume_queue = yes" "cleanup_timeout = 10s"
q_start || { q_done; exit 1; }
out=$tmp/out
u3=$(uuid_of 3)
pidof_job() { cat "$out/$1.pid" 2>/dev/null; }

# --- one kill with jobs at every step
r0=$(subas "$ua" --gpus 1 -- sh -c "echo \$\$ >$out/r0.pid; sleep 20; exit 0")
r3=$(subas "$ua" --gpus 1 -- sh -c "echo \$\$ >$out/r3.pid; sleep 20; exit 3")
# r42 and rsig end once $out/go exists, which the test makes after the kill (however slow the start)
r42=$(subas "$ua" --gpus 0 -- sh -c "echo \$\$ >$out/r42.pid; while [ ! -e $out/go ]; do sleep 0.1; done; exit 42")
rsig=$(subas "$ua" --gpus 0 -- sh -c "echo \$\$ >$out/rsig.pid; while [ ! -e $out/go ]; do sleep 0.1; done; kill -KILL \$\$")
rt=$(subas "$ua" --gpus 0 --time 6 -- sleep 30)
x=$(subas "$ua" --gpu "$u3" --gpu-mem 4G --shared -- sh "$hog" 2000 1 5 --leak)
# submitted last: a 4-GPU job waits behind all of these (and reserves the GPUs)
q1=$(subas "$ua" --gpus 4 -- true)
h1=$(subas "$ua" --hold -- true)
wait_st "$x" 15 exiting
for j in $r0 $r3 $r42 $rsig $rt; do wait_st "$j" 10 running "done" failed timeout; done
states="$(st "$r0") $(st "$r3") $(st "$r42") $(st "$rsig") $(st "$q1") $(st "$h1") $(st "$x")"
if [ "$states" = "running running running running queued held exiting" ]; then
	ok "before the kill: running x4, queued, held, exiting"
else
	q events >"$tmp/ev0" 2>&1
	not_ok "before the kill: not running x4, queued, held, exiting ($states)" "$tmp/ev0"
fi
p0=$(pidof_job r0) p3=$(pidof_job r3)
q_stop KILL
ok "kill -9 of the daemon"
sleep 0.5
check "daemon dead: r0's process lives on (pid $p0)" kill -0 "$p0"
check "daemon dead: r3's process lives on (pid $p3)" kill -0 "$p3"
# the exiting job's memory comes back while the daemon is down; r42, rsig and rt end meanwhile
for f in $(grep -l leak "$live"/* 2>/dev/null); do rm -f "$f"; done
p42=$(pidof_job r42) psig=$(pidof_job rsig)
: >"$out/go"
wait_true 12 sh -c "! kill -0 $p42 && ! kill -0 $psig"
# and rt's time limit (6 s, the supervisor's backstop 2 s later) passes
sleep 3
check "daemon down: r42's process ended by itself" sh -c "! kill -0 $p42 2>/dev/null"
q_start || { q_done; exit 1; }
ok "restart on the same state"
check "after restart: r0 adopted, running" test "$(st "$r0")" = running
check "after restart: r3 adopted, running" test "$(st "$r3")" = running
check "after restart: r0 is the same process ($p0)" kill -0 "$p0"
expect_st "ended while down: exit 42 -> failed" "$r42" 10 failed
check "ended while down: exit_code 42" test "$(jj "$r42" 'j["exit_code"]')" = 42
expect_st "ended while down: killed by a signal -> failed" "$rsig" 10 failed
check "ended while down: exit_signal 9" test "$(jj "$rsig" 'j["exit_signal"]')" = 9
expect_st "the time limit kept while the daemon was down: timeout" "$rt" 10 timeout
expect_st "exiting at the kill: carried on to failed" "$x" 10 failed
check "exiting at the kill: exit_code 5" test "$(jj "$x" 'j["exit_code"]')" = 5
check "held stays held" test "$(st "$h1")" = held
expect_st "r0 ends: done" "$r0" 25 "done"
check "r0: exit_code 0" test "$(jj "$r0" 'j["exit_code"]')" = 0
expect_st "r3 ends: failed" "$r3" 10 failed
check "r3: exit_code 3" test "$(jj "$r3" 'j["exit_code"]')" = 3
expect_st "the queued job resumed and ran" "$q1" 15 "done"
all_events "$tmp/ev"
check "events: a daemon-start event" grep -q "daemon-start" "$tmp/ev"
check "events: daemon-start says how long it was down" python3 -c "
import json, re
starts = []
for l in open('$tmp/ev'):
    e = json.loads(l); e = e.get('event', e)
    if e.get('kind') == 'daemon-start':
        starts.append(e)
assert len(starts) >= 2, starts
t = json.dumps(starts[-1])
assert re.search(r'down', t), t"
if python3 -c "
import json
hits = []
for l in open('$tmp/ev'):
    e = json.loads(l); e = e.get('event', e)
    if e.get('job') == $r42 and 'down' in json.dumps(e):
        hits.append(e)
assert hits"; then ok "events: r42's end was noticed as while the daemon was down"; else
	not_ok "events: no event of r42 (job $r42) says it ended while the daemon was down" "$tmp/ev"; fi
check "events: jobs adopted" grep -qi "adopt" "$tmp/ev"
q cancel "$h1" >/dev/null 2>&1

# --- a burst of submissions killed mid-start: every job runs exactly once, none lost
ids=""
i=0
while [ $i -lt 12 ]; do
	ids="$ids $(subas "$ua" --gpus 0 -- sh -c "echo run >>$out/once.\$GPUSCOPE_JOB_ID; exit $((i % 4))")"
	i=$((i + 1))
done
q_stop KILL
q_start || { q_done; exit 1; }
i=0 lost="" wrong="" twice=""
for j in $ids; do
	if wait_st "$j" 15 "done" failed; then
		c=$(jj "$j" 'j["exit_code"]')
		[ "$c" = $((i % 4)) ] || wrong="$wrong $j:$c"
		[ "$(wc -l <"$out/once.$j" 2>/dev/null)" = 1 ] || twice="$twice $j"
	else lost="$lost $j"; fi
	i=$((i + 1))
done
check "burst: all 12 jobs ended (lost:$lost)" test -z "$lost"
check "burst: exit codes right (wrong:$wrong)" test -z "$wrong"
check "burst: each job ran exactly once (not:$twice)" test -z "$twice"
nj=$(subas "$ua" --gpus 0 -- true)
max=$(echo "$ids" | tr ' ' '\n' | sort -n | tail -n1)
check "after restarts: a new job's id ($nj) is above every old one ($max)" test "$nj" -gt "$max"

# --- killed while a job is starting, twice in a row
s1=$(subas "$ua" --gpus 1 -- sh -c "echo run >>$out/s1.runs; sleep 2; exit 7")
q_stop KILL
q_start || { q_done; exit 1; }
q_stop KILL
q_start || { q_done; exit 1; }
expect_st "killed twice around a start: the job ends" "$s1" 15 failed
check "killed twice around a start: exit_code 7" test "$(jj "$s1" 'j["exit_code"]')" = 7
check "killed twice around a start: ran once" test "$(wc -l <"$out/s1.runs")" = 1
q_stop TERM
q_done
