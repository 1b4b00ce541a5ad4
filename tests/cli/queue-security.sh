#!/bin/sh
# gpuscope queue's security, as root with real users made for the test
# (gsq_a_PID, gsq_b_PID, and gsq_c_PID in the admin group gsq_adm_PID): a
# user cannot cancel, hold, release, show, read the logs of another's job,
# nor act as another with a forged "uid" in a raw request (identity comes
# from SO_PEERCRED); the admin group can; jobs run as their owner with the
# owner's groups and a sanitised environment, their output files are
# opened as the owner (a root-only path fails and is not created, a
# symlink is not followed by logs); admin operations are refused to users;
# bad input (an unknown GPU, more memory or GPUs than exist, a priority
# above the cap, a queue quota, malformed JSON, a 2 MiB line, a socket
# flood, a client that never sends, half a line) gets a clear error,
# changes nothing, and the daemon stays up. Prints TAP.
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/queue/lib.sh
. "$top/tests/queue/lib.sh"
q_require
q_users a b c+adm
ua=gsq_a_$$ ub=gsq_b_$$ uc=gsq_c_$$
ida=$(id -u "$ua") idb=$(id -u "$ub") idc=$(id -u "$uc")
admgid=$(getent group "$adm_group" | cut -d: -f3)
q_conf "max_priority = 0" "max_clients = 64" "max_request = 1M" "" "[user $ub]" "max_queued_jobs = 3"
q_start || { q_done; exit 1; }
out=$tmp/out
raw() { # USER MODE [ARG]: tests/queue/qraw.py as USER
	ru=$1 rm=$2; shift 2
	as "$ru" "${upy:-python3}" "$top/tests/queue/qraw.py" "$rm" "$sock" "$@"
}
if [ -z "$upy" ]; then
	skip_missing "a python3 that the test users can run (/usr/bin/python3): raw-request cases run as root"
	raw() { rm=$2; shift 2; python3 "$top/tests/queue/qraw.py" "$rm" "$sock" "$@"; }
fi
# the queue as root sees it: "ID STATE USER" per job, sorted
snap() { q ls --json --all 2>/dev/null | jpy 'sorted("%s %s %s" % (j["id"], j["state"], j["user"]) for j in d["jobs"])'; }
alive() { kill -0 "$qd" 2>/dev/null && q ls --json >/dev/null 2>&1; }

check "the socket is mode 0666 (every user may connect)" test "$(stat -c %a "$sock")" = 666

# --- jobs run as their owner, with their groups; output owned by the owner
ja=$(subas "$ua" --output "$out/a.out" -- sh -c 'id -u; id -G; echo "user=$USER logname=$LOGNAME home=$HOME"; sleep 60')
[ -n "$ja" ] && ok "user a submits (job $ja)" || not_ok "user a cannot submit"
wait_st "$ja" 10 running
wait_true 5 test -s "$out/a.out"
check "the job runs as its owner (id -u = $ida)" test "$(sed -n 1p "$out/a.out")" = "$ida"
check "the output file is owned by the user" test "$(stat -c %u "$out/a.out")" = "$ida"
check "USER and LOGNAME are the owner's" grep -q "user=$ua logname=$ua" "$out/a.out"
home=$(getent passwd "$ua" | cut -d: -f6)
check "HOME is the owner's passwd home" grep -q "home=$home\$" "$out/a.out"
check "the job's owner and uid in show" test "$(jj "$ja" 'j["user"]')/$(jj "$ja" 'j["uid"]')" = "$ua/$ida"
jc=$(subas "$uc" --output "$out/c.out" -- sh -c 'id -u; id -G')
wait_st "$jc" 10 "done"
check "a job runs with its owner's supplementary groups (admin gid $admgid)" \
	sh -c "sed -n 2p '$out/c.out' | tr ' ' '\n' | grep -qx '$admgid'"
check "... and its uid ($idc)" test "$(sed -n 1p "$out/c.out")" = "$idc"

# --- a user cannot act on another's job
denied='denied|not yours|not allowed|permission|owner|admin'
jh=$(subas "$ua" --hold -- true)
before=$(snap)
for op in "cancel $ja" "hold $ja" "release $jh" "cancel $jh"; do
	# shellcheck disable=SC2086
	qas "$ub" $op >"$tmp/o" 2>"$tmp/e"
	rc=$?
	if [ "$rc" -ne 0 ] && grep -qiE "$denied" "$tmp/e"; then ok "user b: $op (a's job) refused (exit $rc): $(head -c 100 "$tmp/e")"; else
		not_ok "user b: $op of a's job: exit $rc, not refused as not b's" "$tmp/e" "$tmp/o"; fi
done
check "a's held job still held" test "$(st "$jh")" = held
qas "$ub" show "$ja" >"$tmp/o" 2>"$tmp/e"
rc=$?
check "user b: show of a's job refused (exit $rc)" sh -c "test $rc -ne 0 && grep -qiE '$denied' '$tmp/e'"
qas "$ub" logs "$ja" >"$tmp/o" 2>"$tmp/e"
rc=$?
check "user b: logs of a's job refused (exit $rc)" sh -c "test $rc -ne 0 && grep -qiE '$denied' '$tmp/e'"
check "user b: no byte of a's output" test ! -s "$tmp/o"
qas "$ub" ls --json >"$tmp/o" 2>&1
check "user b: ls shows a's job (everyone sees the queue)" jtest "$ja in [j['id'] for j in d['jobs']]" <"$tmp/o"
check "user b: ls does not show a's environment" sh -c "! grep -q '\"env\"' '$tmp/o'"
check "a's job still running after b's attempts" test "$(st "$ja")" = running
check "nothing changed (ls before/after)" test "$(snap)" = "$before"
q cancel "$jh" >/dev/null 2>&1

# --- a forged uid in a raw request is ignored
raw "$ub" send "{\"op\":\"submit\",\"argv\":[\"/bin/sh\",\"-c\",\"id -u\"],\"cwd\":\"$tmp/w\",\"env\":{},\"hold\":true,\"uid\":$ida,\"user\":\"$ua\",\"gid\":0}" >"$tmp/forge" 2>&1
fj=$(head -n1 "$tmp/forge" | jpy 'd["job"]["id"]')
check "forged submit: the job is the sender's (b), not a's" test "$(jj "$fj" 'j["uid"]')/$(jj "$fj" 'j["user"]')" = "$idb/$ub"
raw "$ub" send "{\"op\":\"cancel\",\"jobs\":[$ja],\"uid\":$ida,\"user\":\"$ua\"}" >"$tmp/forge2" 2>&1
check "forged cancel of a's job with a's uid: refused" python3 -c "
import json, sys
d = json.loads(open('$tmp/forge2').readline())
sys.exit(0 if (d.get('ok') is False or (d.get('failed') and not d.get('done'))) else 1)"
raw "$ub" send '{"op":"ping","uid":0}' >"$tmp/ping" 2>&1
check "ping: the daemon says who the caller is (b, not admin)" \
	test "$(head -n1 "$tmp/ping" | jpy '[d["uid"], d["admin"]]')" = "$idb,false"
raw "$uc" send '{"op":"ping"}' >"$tmp/ping" 2>&1
check "ping: a member of the admin group is admin" test "$(head -n1 "$tmp/ping" | jpy 'd["admin"]')" = true
check "a's job still running" test "$(st "$ja")" = running
q cancel "$fj" >/dev/null 2>&1

# --- the admin group can
qas "$uc" show "$ja" >"$tmp/o" 2>&1
check "admin c: show of a's job" test $? -eq 0
qas "$uc" logs "$ja" >"$tmp/o" 2>&1
check "admin c: logs of a's job" grep -qx "$ida" "$tmp/o"
qas "$uc" hold "$ja" >"$tmp/o" 2>&1
qas "$uc" cancel "$ja" >"$tmp/o" 2>&1
check "admin c: cancel of a's job (exit 0)" test $? -eq 0
expect_st "admin c: a's job cancelled" "$ja" 10 cancelled

# --- admin operations
for op in "drain 0" "resume 0" "clean 0" "pause" "unpause" "reload"; do
	# shellcheck disable=SC2086
	qas "$ua" $op >"$tmp/o" 2>"$tmp/e"
	rc=$?
	if [ "$rc" -ne 0 ] && grep -qiE "$denied" "$tmp/e"; then ok "user a: $op refused (exit $rc)"; else not_ok "user a: $op: exit $rc, not refused as not admin" "$tmp/e" "$tmp/o"; fi
done
check "user a's refusals left GPU 0 undrained" no_flag 0 drained
qas "$uc" drain 0 --reason "e2e test" >"$tmp/o" 2>&1
check "admin c: drain 0" has_flag 0 drained
qas "$uc" resume 0 >"$tmp/o" 2>&1
check "admin c: resume 0" no_flag 0 drained

# --- files are opened as the owner
mkdir -p "$tmp/rootonly" && chmod 700 "$tmp/rootonly"
jr=$(subas "$ua" --output "$tmp/rootonly/x.out" -- echo hi 2>"$tmp/r")
if [ -n "$jr" ]; then
	expect_st "--output in a root-only directory: the job fails" "$jr" 10 failed
	jj "$jr" 'j["reason"]' >"$tmp/r"
else ok "--output in a root-only directory: refused at submit"; fi
check "... and the file is not created" test ! -e "$tmp/rootonly/x.out"
check "... the reason names the output file" grep -q "x.out" "$tmp/r"
ln -s /etc/gsq-created-$$ "$out/link.out"
jl=$(subas "$ua" --output "$out/link.out" -- echo hi)
wait_st "$jl" 10 failed "done"
check "--output as a symlink into /etc: nothing created there" test ! -e "/etc/gsq-created-$$"
rm -f "$out/link.out" "/etc/gsq-created-$$"
jo=$(subas "$ua" --output "$out/swap.out" -- echo public)
wait_st "$jo" 10 "done"
as "$ua" sh -c "rm -f '$out/swap.out' && ln -s /etc/shadow '$out/swap.out'"
qas "$ua" logs "$jo" >"$tmp/o" 2>&1
check "logs: a symlink swapped in for the output is not followed (no /etc/shadow)" sh -c "! grep -q '^root:' '$tmp/o'"
rm -f "$out/swap.out"

# --- the environment: the user's, less what must not cross, GPU variables replaced
js=$(env SUDO_USER=root SUDO_UID=0 CUDA_VISIBLE_DEVICES=7 NVIDIA_VISIBLE_DEVICES=all \
	ROCR_VISIBLE_DEVICES=1 GPU_DEVICE_ORDINAL=3 SSH_AUTH_SOCK=/tmp/agent GPUSCOPE_JOB_ID=999 \
	MY_SETTING=kept LD_LIBRARY_PATH=/opt/mine \
	setpriv --reuid="$ua" --regid="$(id -g "$ua")" --init-groups -- \
	"$bin" queue submit --socket "$sock" --parsable --gpus 1 --output "$out/env.out" -- env)
wait_st "$js" 10 "done"
gu=$(jj "$js" 'j["gpu_uuids"][0] if j["gpu_uuids"] else ""')
check "env: CUDA_VISIBLE_DEVICES replaced by the job's GPU" grep -qx "CUDA_VISIBLE_DEVICES=$gu" "$out/env.out"
check "env: NVIDIA_VISIBLE_DEVICES replaced" grep -qx "NVIDIA_VISIBLE_DEVICES=$gu" "$out/env.out"
check "env: SUDO_* removed" sh -c "! grep -q '^SUDO_' '$out/env.out'"
check "env: ROCR_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL, SSH_AUTH_SOCK removed" \
	sh -c "! grep -qE '^(ROCR_VISIBLE_DEVICES|GPU_DEVICE_ORDINAL|SSH_AUTH_SOCK)=' '$out/env.out'"
check "env: GPUSCOPE_JOB_ID is the real id, not the user's" grep -qx "GPUSCOPE_JOB_ID=$js" "$out/env.out"
check "env: the user's own variables kept (MY_SETTING, LD_LIBRARY_PATH)" \
	sh -c "grep -qx MY_SETTING=kept '$out/env.out' && grep -qx LD_LIBRARY_PATH=/opt/mine '$out/env.out'"

# --- bad input: a clear error, nothing changed, the daemon up
before=$(snap)
bad() { # what, pattern the error must match, client args...
	what=$1 pat=$2; shift 2
	qas "$ua" "$@" >"$tmp/o" 2>"$tmp/e"
	rc=$?
	if [ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/e")" -eq 1 ] && grep -qiE "$pat" "$tmp/e"; then
		ok "$what: refused in one line (exit 1)"
	else not_ok "$what: exit $rc, wanted 1 and one line matching '$pat'" "$tmp/e" "$tmp/o"; fi
}
bad "an unknown GPU" "gpu" submit --gpu GPU-00000000-dead-beef-0000-000000000000 -- true
bad "an unknown GPU index" "gpu" submit --gpu 9 -- true
bad "more memory than any GPU has" "memory|GiB|GB|gpu" submit --gpu-mem 200G -- true
bad "more GPUs than exist" "gpu" submit --gpus 5 -- true
bad "a priority above the cap" "priorit" submit --priority 5 -- true
bad "cancel of a job that does not exist" "99999|not found|no such|unknown" cancel 99999
bad "show of a job that does not exist" "99999|not found|no such|unknown" show 99999
check "the refused submissions stored nothing" test "$(snap)" = "$before"
for i in 1 2 3; do subas "$ub" --hold -- true >/dev/null 2>&1; done
qas "$ub" submit --hold -- true >"$tmp/o" 2>"$tmp/e"
rc=$?
check "quota: a 4th queued job of b (max_queued_jobs = 3) refused (exit $rc)" test "$rc" -eq 1
check "quota: the error says so" grep -qiE "quota|max_queued|queued jobs|limit" "$tmp/e"
before=$(snap)
raw "$ua" send '{"op":"submit","argv":' >"$tmp/o" 2>&1
check "malformed JSON: an error response" python3 -c "
import json; d = json.loads(open('$tmp/o').readline()); assert d['ok'] is False and d['error'], d"
check "malformed JSON: then the connection is closed" grep -qx closed "$tmp/o"
raw "$ua" send '[1,2,3]' >"$tmp/o" 2>&1
check "a JSON array, not an object: an error" grep -q '"ok": *false' "$tmp/o"
raw "$ua" send '{"op":"no-such-op"}' >"$tmp/o" 2>&1
check "an unknown op: an error" grep -q '"ok": *false' "$tmp/o"
for req in '{"op":"submit","argv":[]}' '{"op":"submit","argv":"true"}' \
	'{"op":"submit","argv":["true"],"cwd":"relative"}' \
	'{"op":"submit","argv":["true"],"cwd":"/tmp","gpus":-1}' \
	'{"op":"submit","argv":["true"],"cwd":"/tmp","gpus":"x"}' \
	'{"op":"submit","argv":["true"],"cwd":"/tmp","env":[1]}' \
	'{"op":"submit","argv":["true"],"cwd":"/tmp","mode":"weird"}' \
	'{"op":"cancel","jobs":"all"}' '{"op":"show","job":"x"}' '{"op":"logs","job":-3}'; do
	raw "$ua" send "$req" >"$tmp/o" 2>&1
	# refused as a whole, or (cancel) each id refused with nothing done
	if { grep -q '"ok": *false' "$tmp/o" && grep -q '"error"' "$tmp/o"; } ||
		grep -q '"done": *\[\],"failed": *\[{' "$tmp/o"; then ok "bad args refused: $req: $(head -c 120 "$tmp/o")"; else
		not_ok "bad args not refused: $req" "$tmp/o"; fi
done
raw "$ua" big 2097152 >"$tmp/o" 2>&1
check "a 2 MiB line: refused or closed, no crash" sh -c "grep -q '\"ok\": *false' '$tmp/o' || grep -qx closed '$tmp/o'"
check "after the 2 MiB line: the daemon is up" alive
raw "$ua" half >/dev/null 2>&1
check "half a line then close: the daemon is up" alive
as "$ua" "${upy:-python3}" "$top/tests/queue/qraw.py" idle "$sock" 5 >"$tmp/idle" 2>&1 &
idler=$!
sleep 0.5
t0=$(date +%s)
q ls --json >"$tmp/o" 2>&1
t1=$(date +%s)
check "a client that never sends does not block others (ls in $((t1 - t0))s)" test $((t1 - t0)) -le 2
wait "$idler"
raw "$ua" flood 200 >"$tmp/flood" 2>&1
check "200 connections at once: every one answered or refused, none hung ($(cat "$tmp/flood"))" \
	grep -q "hung=0" "$tmp/flood"
check "200 connections: some beyond max_clients (64) refused" sh -c "! grep -q 'refused=0 closed=0' '$tmp/flood'"
check "after the flood: the daemon is up and answers" alive
check "bad input changed nothing (ls before/after)" test "$(snap)" = "$before"
check "the daemon never died" kill -0 "$qd"
q_stop TERM
q_done
