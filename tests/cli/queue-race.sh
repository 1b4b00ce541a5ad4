#!/bin/sh
# gpuscope queue under races: 20 submitters at once (two users and root),
# 10 jobs each: every id distinct, every job run, none lost; meanwhile
# shared jobs on one 48 GB GPU that together would not fit (one of them
# allocating late) never overlap in time (each writes its start and end
# into its output), and a foreign process that appears mid-way is counted:
# a job that would no longer fit beside it waits until it is gone. Prints TAP.
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/queue/lib.sh
. "$top/tests/queue/lib.sh"
q_require
q_users a b
ua=gsq_a_$$ ub=gsq_b_$$
q_conf
q_start || { q_done; exit 1; }
out=$tmp/out
u2=$(uuid_of 2) u3=$(uuid_of 3)
stamp='date +%s.%N'

# the jobs that must not overlap on GPU 2: 30G each on a 45 GiB GPU
pair() { # NAME EXTRA-HOG-ARGS...: a 30G shared job on GPU 2 writing NAME.start/NAME.end
	nm=$1; shift
	sub --gpu "$u2" --gpu-mem 30G --shared --name "$nm" -- \
		sh -c "$stamp >$out/$nm.start; sh $hog 30720 $*; $stamp >$out/$nm.end"
}

# --- 20 submitters x 10 jobs
i=1 subpids=""
while [ $i -le 20 ]; do
	case $((i % 3)) in
	0) who=root ;;
	1) who=$ua ;;
	*) who=$ub ;;
	esac
	(
		k=0
		while [ $k -lt 10 ]; do
			# half CPU jobs, half 1G shared GPU jobs
			if [ $((k % 2)) = 0 ]; then ask="--gpus 0"; else ask="--gpu-mem 1G"; fi
			if [ "$who" = root ]; then
				# shellcheck disable=SC2086
				sub $ask -- true
			else
				# shellcheck disable=SC2086
				subas "$who" $ask -- true
			fi
			k=$((k + 1))
		done >"$tmp/ids.$i" 2>"$tmp/sub.$i.err"
	) &
	subpids="$subpids $!"
	if [ $i -eq 5 ]; then pair A 2 >"$tmp/pairA" & subpids="$subpids $!"; fi
	if [ $i -eq 10 ]; then pair B 2 --late 1 >"$tmp/pairB" & subpids="$subpids $!"; fi
	if [ $i -eq 15 ]; then pair C 2 >"$tmp/pairC" & subpids="$subpids $!"; fi
	i=$((i + 1))
done
# (not a bare wait: the daemon is a child of this shell too)
for p in $subpids; do wait "$p"; done
cat "$tmp"/ids.* >"$tmp/ids"
total=$(grep -c . "$tmp/ids")
check "20 x 10 submissions: 200 ids ($(cat "$tmp"/sub.*.err | head -n 3 | tr '\n' ' '))" test "$total" -eq 200
check "all ids distinct" test "$(sort -u "$tmp/ids" | grep -c .)" -eq "$total"
check "every id a number" sh -c "! grep -qv '^[0-9][0-9]*\$' '$tmp/ids'"
# wait for all to end
end=$(($(date +%s) + 60))
while :; do
	q ls --json --all >"$tmp/ls" 2>/dev/null
	left=$(jpy 'len([j for j in d["jobs"] if j["state"] not in ("done", "failed", "cancelled", "timeout")])' <"$tmp/ls")
	[ "$left" = 0 ] && break
	[ "$(date +%s)" -ge "$end" ] && break
	sleep 1
done
q history --json --all -n 1000 >"$tmp/hist" 2>&1
check "all 200 jobs ran and ended done, none lost" python3 -c "
import json
h = {j['id']: j for j in json.load(open('$tmp/hist'))['jobs']}
ids = [int(l) for l in open('$tmp/ids') if l.strip()]
missing = [i for i in ids if i not in h]
bad = [(i, h[i]['state']) for i in ids if i in h and h[i]['state'] != 'done']
assert not missing, 'missing: %s' % missing[:10]
assert not bad, 'not done: %s' % bad[:10]"

# --- the shared jobs that would not fit together never overlapped
for nm in A B C; do wait_true 30 test -s "$out/$nm.end"; done
check "the 30G pair jobs all ran" test -s "$out/A.end" -a -s "$out/B.end" -a -s "$out/C.end"
check "30G jobs on a 45 GiB GPU never ran at the same time (late allocator included)" python3 -c "
iv = []
for nm in 'ABC':
    iv.append((float(open('$out/%s.start' % nm).read()), float(open('$out/%s.end' % nm).read()), nm))
iv.sort()
for (s1, e1, n1), (s2, e2, n2) in zip(iv, iv[1:]):
    assert s2 >= e1, '%s [%f, %f] overlaps %s [%f, %f]' % (n1, s1, e1, n2, s2, e2)"

# --- a foreign process appears mid-way
d=$(sub --gpu "$u3" --gpu-mem 10G --shared -- sh "$hog" 10240)
wait_st "$d" 10 running
bg env CUDA_VISIBLE_DEVICES="$u3" sh "$hog" 30000
foreign=$!
sleep 1
e=$(sub --gpu "$u3" --gpu-mem 10G --shared --output "$out/e.out" -- sh -c "$stamp; true")
sleep 1.5
check "a foreign 30000 MiB process appeared: a 10G job no longer fits beside it and waits" test "$(st "$e")" = queued
kill "$foreign"
gone=$(date +%s)
expect_st "the foreign process gone: the job runs" "$e" 10 "done"
check "it started after the foreign process ended" python3 -c "
import sys; sys.exit(not (float(open('$out/e.out').read()) >= $gone - 1))"
q cancel "$d" >/dev/null 2>&1
q_stop TERM
q_done
