#!/bin/sh
# gpuscope queue end to end, as root, on the fake NVML with real processes
# (tests/scenarios/queue.scn: GPUs 0,1 H100 80 GB on NVLink, 2,3 L40S 48 GB
# on one PCIe switch; jobs register their GPU memory with
# tests/queue/gpuhog.sh): admission (exclusive jobs spread, shared ones
# pack, a late allocator holds its declared memory from launch, a foreign
# process is counted), placement by UUID and the job's CUDA variables, a
# 2-GPU job on the NVLink pair (else the switch pair), priorities, fair
# share, backfill, preemption with requeue, dirty GPUs, a lost GPU, cancel
# of a whole process tree, time limits, exit codes, logs -f, --after,
# hold/release, why, history, events and --json. Prints TAP.
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/queue/lib.sh
. "$top/tests/queue/lib.sh"
q_require
q_users a b
ua=gsq_a_$$ ub=gsq_b_$$
q_conf
q_start || { q_done; exit 1; }
out=$tmp/out

u0=$(uuid_of 0) u1=$(uuid_of 1) u2=$(uuid_of 2) u3=$(uuid_of 3)
if [ -n "$u0" ] && [ -n "$u3" ]; then ok "ls --json lists the scenario's 4 GPUs"; else
	q ls --json >"$tmp/ls" 2>&1; not_ok "ls --json does not list 4 GPUs" "$tmp/ls"
fi
# idx JOB: the GPU indices a job was given
idx() { jj "$1" 'j["gpu_indices"]'; }
# cancel_all JOB...: cancel and wait for the end
cancel_all() {
	q cancel "$@" >/dev/null 2>&1
	for cj in "$@"; do wait_st "$cj" 10 cancelled "done" failed timeout; done
}

# --- exit codes
j0=$(sub -- true)
j3=$(sub -- sh -c 'exit 3')
j9=$(sub -- sh -c 'kill -9 $$')
jx=$(sub -- /nonexistent/command)
expect_st "true: done" "$j0" 10 "done"
check "true: exit_code 0" test "$(jj "$j0" 'j["exit_code"]')" = 0
expect_st "exit 3: failed" "$j3" 10 failed
check "exit 3: exit_code 3" test "$(jj "$j3" 'j["exit_code"]')" = 3
expect_st "kill -9 \$\$: failed" "$j9" 10 failed
check "killed by a signal: exit_signal 9" test "$(jj "$j9" 'j["exit_signal"]')" = 9
expect_st "a command that does not exist: failed" "$jx" 10 failed
jj "$jx" 'j["reason"]' >"$tmp/r"
check "a command that does not exist: the reason says so" grep -qi "nonexistent\|no such\|not found\|cannot" "$tmp/r"
q show "$j3" >"$tmp/show" 2>&1
check "show: exit 0 and names the job's state" grep -qi "failed" "$tmp/show"

# --- placement by UUID, and the environment the job sees
je=$(sub --gpu "$u2" --output "$out/env.out" -- sh -c 'env; echo cwd=$(pwd)')
expect_st "--gpu UUID: the job ran" "$je" 10 "done"
check "--gpu UUID: given GPU 2" test "$(idx "$je")" = 2
check "CUDA_VISIBLE_DEVICES is the GPU's UUID" grep -qx "CUDA_VISIBLE_DEVICES=$u2" "$out/env.out"
check "NVIDIA_VISIBLE_DEVICES is the GPU's UUID" grep -qx "NVIDIA_VISIBLE_DEVICES=$u2" "$out/env.out"
check "CUDA_DEVICE_ORDER=PCI_BUS_ID" grep -qx "CUDA_DEVICE_ORDER=PCI_BUS_ID" "$out/env.out"
check "GPUSCOPE_JOB_ID is the job's id" grep -qx "GPUSCOPE_JOB_ID=$je" "$out/env.out"
check "the job runs in the directory it was submitted from" grep -qx "cwd=$tmp/w" "$out/env.out"
jn=$(sub --gpu 3 --output "$out/idx.out" -- sh -c 'echo "$CUDA_VISIBLE_DEVICES"')
expect_st "--gpu 3 (an index): ran" "$jn" 10 "done"
check "--gpu 3: resolved to GPU 3's UUID" grep -qx "$u3" "$out/idx.out"
pfx=$(printf %s "$u1" | cut -c1-12)
jp=$(sub --gpu "$pfx" -- true)
expect_st "--gpu with a unique UUID prefix: ran" "$jp" 10 "done"
check "--gpu prefix: given GPU 1" test "$(idx "$jp")" = 1
j0g=$(sub --gpus 0 --output "$out/cpu.out" -- sh -c 'echo "cvd=[$CUDA_VISIBLE_DEVICES]"')
expect_st "--gpus 0: ran" "$j0g" 10 "done"
check "--gpus 0: CUDA_VISIBLE_DEVICES is empty (sees no GPU)" grep -qx "cvd=\[\]" "$out/cpu.out"

# --- a foreign process is counted; exclusive jobs spread over the rest
bg env CUDA_VISIBLE_DEVICES="$u3" sh "$hog" 2000
foreign=$!
sleep 1
e1=$(sub --gpus 1 --exclusive -- sh "$hog" 1000)
e2=$(sub --gpus 1 --exclusive -- sh "$hog" 1000)
e3=$(sub --gpus 1 --exclusive -- sh "$hog" 1000)
e4=$(sub --gpus 1 --exclusive -- sh "$hog" 1000)
for e in $e1 $e2 $e3; do wait_st "$e" 10 running; done
sleep 1
got="$(idx "$e1") $(idx "$e2") $(idx "$e3")"
sorted=$(echo "$got" | tr ' ' '\n' | sort -n | tr '\n' ' ')
check "3 exclusive jobs spread over GPUs 0,1,2 ($got), not the foreign one's" test "$sorted" = "0 1 2 "
check "a 4th exclusive job waits (GPU 3 has a foreign process)" test "$(st "$e4")" = queued
q why "$e4" >"$tmp/why4" 2>&1
check "why: says why the 4th waits" test -s "$tmp/why4"
kill "$foreign" 2>/dev/null
expect_st "the foreign process gone: the 4th starts" "$e4" 10 running
check "the 4th is on GPU 3" test "$(idx "$e4")" = 3
cancel_all "$e1" "$e2" "$e3" "$e4"

# --- shared jobs pack
s1=$(sub --gpu-mem 10G -- sh "$hog" 10240)
s2=$(sub --gpu-mem 10G -- sh "$hog" 10240)
wait_st "$s1" 10 running && wait_st "$s2" 10 running
check "two shared 10G jobs run" test "$(st "$s1")/$(st "$s2")" = running/running
check "shared jobs pack on one GPU ($(idx "$s1") and $(idx "$s2"))" test "$(idx "$s1")" = "$(idx "$s2")"
cancel_all "$s1" "$s2"

# --- a late allocator holds its declared memory from launch
l1=$(sub --gpu "$u2" --gpu-mem 30G --shared -- sh "$hog" 30720 --late 2)
wait_st "$l1" 10 running
l2=$(sub --gpu "$u2" --gpu-mem 30G --shared -- sh "$hog" 30720)
sleep 1
check "before it allocates: a second 30G job on the 48G GPU waits" test "$(st "$l2")" = queued
sleep 2.5
check "after it allocates: still waits" test "$(st "$l2")" = queued
q why "$l2" >"$tmp/whyl" 2>&1
jj "$l2" 'j["reason"]' >>"$tmp/whyl"
check "why: the reason names the GPU" grep -qiE "GPU ?#?2([^0-9]|$)|$u2" "$tmp/whyl"
q cancel "$l1" >/dev/null 2>&1
expect_st "the late allocator cancelled: the second starts" "$l2" 10 running
cancel_all "$l1" "$l2"

# --- after launch: a process on a GPU the job was not given is reported
mj=$(sub --gpu "$u2" --gpu-mem 2G --shared -- sh "$hog" 1000 --gpu 3)
wait_st "$mj" 10 running
wait_true 5 sh -c "'$bin' queue show --socket '$sock' --json $mj | grep -q 'GPU 3'"
jj "$mj" 'j["reason"]' >"$tmp/mr"
check "misplaced: the job's reason says its process uses GPU 3, not given to it" grep -q "GPU 3" "$tmp/mr"
all_events "$tmp/mev"
if python3 -c "
import json
ks = [json.loads(l) for l in open('$tmp/mev') if l.strip()]
ks = [e.get('event', e) for e in ks]
assert any(e.get('kind') == 'misplaced' and e.get('job') == $mj for e in ks)"; then ok "misplaced: an event"; else
	grep "\"job\": *$mj," "$tmp/mev" >"$tmp/mev.j"
	not_ok "misplaced: no event of job $mj (its events below)" "$tmp/mev.j"
fi
cancel_all "$mj"

# --- a 2-GPU job on the NVLink pair, else the switch pair
n2=$(sub --gpus 2 -- sleep 30)
wait_st "$n2" 10 running
check "a 2-GPU job on all-free GPUs gets the NVLink pair 0,1 ($(idx "$n2"))" test "$(idx "$n2")" = "0,1"
cancel_all "$n2"
b0=$(sub --gpu "$u0" -- sleep 30)
wait_st "$b0" 10 running
n2=$(sub --gpus 2 -- sleep 30)
wait_st "$n2" 10 running
check "with GPU 0 taken, a 2-GPU job gets the PCIe switch pair 2,3 ($(idx "$n2"))" test "$(idx "$n2")" = "2,3"
cancel_all "$b0" "$n2"

# --- priorities: a higher priority goes first
blk=$(sub --gpus 4 -- sleep 60)
wait_st "$blk" 10 running
pl=$(sub --gpus 4 --priority 1 -- sleep 2)
ph=$(sub --gpus 4 --priority 5 -- sleep 2)
sleep 0.5
q cancel "$blk" >/dev/null
wait_true 10 sh -c "'$bin' queue ls --socket '$sock' --json | grep -q '\"running\"'"
expect_st "priority 5 starts first" "$ph" 10 running "done"
pls=$(st "$pl")
check "priority 1 still waits ($pls)" test "$pls" = queued
wait_st "$pl" 15 "done"
pst=$(jj "$ph" 'j["start_time"]') lst=$(jj "$pl" 'j["start_time"]')
check "priority 5 started before priority 1 ($pst < $lst)" python3 -c "import sys; sys.exit(not ($pst < $lst))"

# --- fair share: the user with less usage goes first
fa=$(subas "$ua" --gpus 4 -- sleep 1)
expect_st "user a runs a job (usage)" "$fa" 10 "done"
blk=$(sub --gpus 4 -- sleep 60)
wait_st "$blk" 10 running
fa2=$(subas "$ua" --gpus 4 -- sleep 2)
sleep 0.3
fb2=$(subas "$ub" --gpus 4 -- sleep 3)
sleep 0.5
q cancel "$blk" >/dev/null
expect_st "fair share: user b (no usage) starts first though submitted later" "$fb2" 10 running "done"
check "fair share: user a waits" test "$(st "$fa2")" = queued
wait_st "$fa2" 15 "done"

# --- backfill: a big job blocked, a short --time job backfills, one without --time waits
r1=$(sub --gpus 3 --time 8 -- sleep 3)
wait_st "$r1" 10 running
big=$(sub --gpus 4 -- sleep 1)
bs=$(sub --gpus 1 --time 2 -- sleep 1)
bl=$(sub --gpus 1 -- sleep 1)
sleep 1
check "backfill: the big job waits" test "$(st "$big")" = queued
expect_st "backfill: a short --time job runs on the free GPU" "$bs" 5 running "done"
bls=$(st "$bl")
check "backfill: a job without --time waits (it would delay the big one): $bls" test "$bls" = queued
expect_st "backfill: the big job starts when the GPUs are free" "$big" 15 running "done"
wait_st "$big" 10 "done"
expect_st "backfill: the job without --time runs last" "$bl" 10 "done"
bst=$(jj "$big" 'j["start_time"]') lst=$(jj "$bl" 'j["start_time"]')
check "backfill: start order big ($bst) before no-time ($lst)" python3 -c "import sys; sys.exit(not ($bst <= $lst))"

# --- preemption
pre=$(sub --gpu "$u0" --preemptible --name low -- sh "$hog" 2000 2 0)
wait_st "$pre" 10 running
sleep 0.5
hi=$(sub --gpu "$u0" --priority 10 --name high -- sh "$hog" 1000 2 0)
expect_st "preemption: the high-priority job starts" "$hi" 15 running "done"
pres=$(st "$pre")
check "preemption: the low job was requeued (queued again): $pres" test "$pres" = queued
prr=$(jj "$pre" 'j["restarts"]')
check "preemption: same id, restarts=1 ($prr)" test "$prr" = 1
expect_st "preemption: the low job runs again" "$pre" 15 running
expect_st "preemption: and finishes" "$pre" 15 "done"
prr=$(jj "$pre" 'j["restarts"]')/$(jj "$pre" 'j["exit_code"]')
check "preemption: done with restarts=1, exit 0 ($prr)" test "$prr" = 1/0

# --- a dirty GPU: memory that does not come back
dj=$(sub --gpu "$u2" --gpu-mem 4G --shared -- sh "$hog" 2000 1 0 --leak)
expect_st "dirty: the leaking job ends (done, after cleanup_timeout)" "$dj" 15 "done"
check "dirty: GPU 2 flagged dirty in ls" has_flag 2 dirty
q ls >"$tmp/ls" 2>&1
check "dirty: the ls table says so" grep -qi dirty "$tmp/ls"
dw=$(sub --gpu "$u2" --gpu-mem 1G --shared -- sleep 1)
sleep 1
check "dirty: nothing starts on it" test "$(st "$dw")" = queued
check "dirty: the waiting job's code is dirty" test "$(jj "$dw" 'j["code"]')" = dirty
qas "$ua" clean 2 >"$tmp/cl" 2>&1
check "dirty: queue clean by a non-admin is refused" test $? -ne 0
check "dirty: still dirty" has_flag 2 dirty
q clean 2 >"$tmp/cl" 2>&1
check "dirty: queue clean as admin (exit 0)" test $? -eq 0
expect_st "dirty: cleaned, the waiting job runs" "$dw" 10 running "done"
check "dirty: flag gone" no_flag 2 dirty
rm -f "$(grep -l leak "$live"/* 2>/dev/null | head -n1)"
# the memory comes back by itself: dirty clears without an admin
dj2=$(sub --gpu "$u3" --gpu-mem 4G --shared -- sh "$hog" 2000 1 0 --leak)
wait_st "$dj2" 15 "done"
wait_true 5 has_flag 3 dirty
for f in $(grep -l leak "$live"/* 2>/dev/null); do rm -f "$f"; done
if wait_true 8 no_flag 3 dirty; then
	ok "dirty: clears by itself when the memory comes back"
else not_ok "dirty: did not clear by itself after the memory came back" "$tmp/qd.log"; fi

# --- cancel kills the whole tree (children that ignore SIGTERM, one in its own session)
ct=$(sub --output "$out/tree.out" -- sh -c "trap '' TERM; for i in 1 2 3; do sleep 300 & echo \$! >>$out/tree.pids; done; setsid sleep 300 & echo \$! >>$out/tree.pids; wait")
wait_st "$ct" 10 running
wait_true 5 sh -c "test \$(wc -l <'$out/tree.pids') -ge 4"
q cancel "$ct" >"$tmp/c" 2>&1
expect_st "cancel: cancelled" "$ct" 10 cancelled
# alive: not gone and not a zombie waiting for its reaper
live_pid() { pst=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) && [ -n "$pst" ] && [ "$pst" != Z ]; }
alive=""
for p in $(cat "$out/tree.pids" 2>/dev/null); do live_pid "$p" && alive="$alive $p($(ps -o stat=,cmd= -p "$p"))"; done
check "cancel: every process of the tree is gone (left:$alive)" test -z "$alive"
check "cancel: the tree had 4 children" test "$(wc -l <"$out/tree.pids")" -eq 4
left=$(find "$cgroot" -name cgroup.procs -path "*job-$ct*" -exec cat {} + 2>/dev/null)
check "cancel: the job's cgroup is empty or gone" test -z "$left"

# --- time limit
tl=$(sub --time 2 -- sh -c "trap '' TERM; sleep 30")
expect_st "--time 2: timeout" "$tl" 12 timeout
dur=$(jj "$tl" 'round(j["end_time"] - j["start_time"])')
check "--time 2: ended after 2 s plus grace, not sooner, not much later (${dur}s)" test "$dur" -ge 2 -a "$dur" -le 7

# --- logs -f
lj=$(sub --output "$out/lj.out" --error "$out/lj.err" -- sh -c 'echo one; sleep 1; echo two; echo oops >&2; sleep 1; echo three')
timeout 15 "$bin" queue logs --socket "$sock" -f "$lj" >"$tmp/logs" 2>"$tmp/logs.err"
rc=$?
check "logs -f: ends with the job (exit $rc)" test "$rc" -eq 0
check "logs -f: all the output in order" test "$(tr '\n' ' ' <"$tmp/logs")" = "one two three "
le=$(sub -- sh -c 'echo out; echo err >&2')
wait_st "$le" 10 "done"
q logs --err "$le" >"$tmp/le" 2>&1
# stderr goes with stdout unless --error: either the err stream has it, or the out stream does
q logs "$le" >>"$tmp/le" 2>&1
check "logs: the job's stderr is kept" grep -qx err "$tmp/le"
ee=$(sub --error "$out/ee.err" --output "$out/ee.out" -- sh -c 'echo out; echo err >&2')
wait_st "$ee" 10 "done"
q logs --err "$ee" >"$tmp/lee" 2>&1
check "logs --err with --error FILE: the err stream" test "$(cat "$tmp/lee")" = err
check "--output/--error: the files" test "$(cat "$out/ee.out")/$(cat "$out/ee.err")" = out/err

# --- --after
a1=$(sub -- sleep 3)
a2=$(sub --after "$a1" -- true)
sleep 0.5
check "--after: waits while its dependency runs" test "$(st "$a2")" = queued
check "--after: code dependency" test "$(jj "$a2" 'j["code"]')" = dependency
q why "$a2" >"$tmp/whya" 2>&1
check "why --after: names the job it waits for" grep -q "$a1" "$tmp/whya"
expect_st "--after: runs after" "$a2" 10 "done"
check "--after: started after the dependency ended" \
	python3 -c "import sys; sys.exit(not ($(jj "$a2" 'j["start_time"]') >= $(jj "$a1" 'j["end_time"]')))"

# --- hold / release
h1=$(sub --hold -- true)
sleep 0.5
check "--hold: held" test "$(st "$h1")" = held
q why "$h1" >"$tmp/whyh" 2>&1
check "why: a held job says held" grep -qi held "$tmp/whyh"
q release "$h1" >/dev/null 2>&1
expect_st "release: runs" "$h1" 10 "done"
blk=$(sub --gpus 4 -- sleep 60)
wait_st "$blk" 10 running
h2=$(sub --gpus 1 -- true)
q hold "$h2" >/dev/null 2>&1
check "hold of a queued job: held" test "$(st "$h2")" = held
q cancel "$blk" >/dev/null
sleep 1.5
check "a held job does not start when GPUs free" test "$(st "$h2")" = held
q cancel "$h2" >/dev/null 2>&1
expect_st "cancel of a held job: cancelled at once" "$h2" 3 cancelled

# --- history, events, --json
q history --json >"$tmp/hist" 2>&1
check "history --json parses" python3 -m json.tool "$tmp/hist"
check "history: has terminal jobs, newest first" python3 -c "
import json, sys
d = json.load(open('$tmp/hist'))
ids = [j['id'] for j in d['jobs']]
assert $j0 in ids and $h1 in ids, ids
ends = [j['end_time'] for j in d['jobs']]
by_end = all(a >= b for a, b in zip(ends, ends[1:]))
by_id = all(a > b for a, b in zip(ids, ids[1:]))
assert by_end or by_id, 'not newest first: %s' % list(zip(ids, ends))[:20]
assert all(j['state'] in ('done', 'failed', 'cancelled', 'timeout') for j in d['jobs'])
"
for c in "ls" "show $j3" "why $a2" "submit --hold -- true" "history" "cancel $blk"; do
	# shellcheck disable=SC2086
	set -- $c
	sc=$1
	shift
	"$bin" queue "$sc" --socket "$sock" --json "$@" >"$tmp/js" 2>"$tmp/js.err"
	check "$sc --json parses" python3 -m json.tool "$tmp/js"
done
all_events "$tmp/ev"
check "events --json: one JSON object a line" python3 -c "
import json
evs = [json.loads(l) for l in open('$tmp/ev') if l.strip()]
kinds = set()
for e in evs:
    e = e.get('event', e)
    kinds.add(e.get('kind'))
assert len(evs) > 10, len(evs)
assert 'submit' in kinds, kinds
"
check "events: a dirty GPU was an event" grep -q '"kind": *"dirty"' "$tmp/ev"

# --- a GPU lost mid-job: failed or requeued by its policy, the GPU drained
q_stop TERM
lost=$tmp/lost.scn
awk '{ print } /^\[gpu 3\]/ { print "lost = 8" }' "$scn" >"$lost"
epoch=$(date +%s)
q_conf "jobs_per_gpu = 2"
q_start "$lost"
g1=$(sub --gpu "$u3" --gpu-mem 2G --shared -- sh "$hog" 1000)
# not pinned: it packs beside g1 on GPU 3 (the least room that fits), and may go elsewhere after
g2=$(sub --gpu-mem 2G --shared --requeue -- sh "$hog" 1000)
wait_st "$g1" 5 running
wait_st "$g2" 5 running
check "GPU lost: both jobs on GPU 3 first ($(idx "$g2"))" test "$(idx "$g2")" = 3
# jobs_per_gpu = 2: shared jobs that declare no memory take slots
k1=$(sub --gpu "$u2" --shared -- sleep 30)
k2=$(sub --gpu "$u2" --shared -- sleep 30)
k3=$(sub --gpu "$u2" --shared -- sleep 30)
wait_st "$k1" 5 running
wait_st "$k2" 5 running
ks="$(st "$k1") $(st "$k2") $(st "$k3")"
check "jobs_per_gpu = 2: two shared jobs run on GPU 2, a third waits ($ks)" test "$ks" = "running running queued"
q cancel "$k1" "$k2" "$k3" >/dev/null 2>&1
expect_st "GPU lost: the job is failed" "$g1" 15 failed
jj "$g1" 'j["reason"]' >"$tmp/lr"
check "GPU lost: the reason says the GPU was lost" grep -qi lost "$tmp/lr"
expect_st "GPU lost: the --requeue job is requeued and runs again" "$g2" 10 running
check "GPU lost: requeued with restarts=1" test "$(jj "$g2" 'j["restarts"]')" = 1
check "GPU lost: it runs on another GPU now ($(idx "$g2"))" test "$(idx "$g2")" != 3
f3=$(flags_of 3)
check "GPU lost: GPU 3 flagged lost and drained ($f3)" sh -c "echo '$f3' | grep -q lost && echo '$f3' | grep -q drained"
all_events "$tmp/ev2"
check "GPU lost: an event kept" grep -q '"kind": *"gpu-lost"' "$tmp/ev2"
q cancel "$g2" >/dev/null 2>&1
q_stop TERM

# --- preemption by suspending to host memory (CUDA checkpoint, on the fake libcuda)
if [ -f "$obin/fakecuda/libcuda.so.1" ]; then
	GPUSCOPE_CUDA=$obin/fakecuda/libcuda.so.1
	FAKE_CUDA_CHECKPOINT_DIR=$tmp/ck
	export GPUSCOPE_CUDA FAKE_CUDA_CHECKPOINT_DIR
	mkdir -p "$tmp/ck" && chmod 1777 "$tmp/ck"
	q_conf "preempt_mode = checkpoint"
	epoch=$(date +%s)
	q_start
	cl=$(sub --gpu "$u0" --preemptible --output "$out/ck.out" -- \
		sh -c "echo \$\$ >$out/ck.pid; echo running >\$FAKE_CUDA_CHECKPOINT_DIR/\$\$; exec sh $hog 2000 10")
	wait_st "$cl" 10 running
	sleep 0.5
	ckpid=$(cat "$out/ck.pid" 2>/dev/null)
	ch=$(sub --gpu "$u0" --priority 10 -- sh "$hog" 1000 2)
	expect_st "checkpoint: the low job is suspended, not killed" "$cl" 15 suspended
	expect_st "checkpoint: the high-priority job runs on its GPU" "$ch" 15 running "done"
	check "checkpoint: the suspended job's process lives on ($ckpid)" kill -0 "$ckpid"
	expect_st "checkpoint: the low job resumes once the GPU is free" "$cl" 20 running
	check "checkpoint: the same process resumed ($ckpid), not a restart" \
		test "$(jj "$cl" 'j["restarts"]')" = 0 -a -d "/proc/$ckpid"
	expect_st "checkpoint: the low job finishes" "$cl" 20 "done"
	check "checkpoint: done with restarts 0, exit 0" test "$(jj "$cl" '[j["restarts"], j["exit_code"]]')" = 0,0
	q_stop TERM
else
	skip_missing "checkpoint preemption needs $obin/fakecuda/libcuda.so.1 (make)"
fi
q_done
