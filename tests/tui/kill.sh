#!/bin/sh
# Sending signals from gpuscope top: the fake driver lists two sleeping
# children of this test as GPU processes, read from the machine's /proc.
# A signal is chosen from a list, then confirmed: "n" sends nothing, "y"
# sends it (SIGTERM, then SIGKILL, checked by the children's exit status).
# Refused, with a reason: another user's process when top does not run as
# root, processes of a fixture /proc (not this machine's), --read-only.
. "$(dirname "$0")/lib.inc"

sleep 1000 &
K1=$!
sleep 1000 &
K2=$!
sleep 1000 &
K3=$!
CHILDREN="$K1 $K2 $K3"

SCN=$TMP/kill.scn
{
	echo "[gpu]"
	echo "name = NVIDIA H100 80GB HBM3"
	echo "memory_total = 81559 MiB"
	echo "memory_used = 600 MiB"
	echo "util_gpu = 3"
	echo "util_memory = 1"
	for p in $K1 $K2 $K3; do
		echo "[process $p]"
		echo "gpu = 0"
		echo "used_memory = 200 MiB"
		echo "name = sleep"
	done
} >"$SCN"

# state of a process: R, S, Z ..., or "gone"
state() {
	s=$(sed -e 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
	echo "${s:-gone}"
}

# until $1 has exited (a zombie until this shell waits for it)
wait_dead() {
	i=0
	while [ $i -lt 100 ]; do
		case $(state "$1") in
		Z | gone) return 0 ;;
		esac
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# select_pid PID: filter the list down to that process
select_pid() {
	keys /
	keys -l "$1"
	keys Enter
	wait_for "1 of 3 process, filter '$1'" 3
}

start 200 30 GPUSCOPE_PROC_ROOT= GPUSCOPE_PASSWD= -- -d 0.3
check "the children are listed as GPU processes of this machine" "^  0 +$K1 C +[a-z0-9]+ +200MiB .* sleep 1000"
select_pid "$K2"
ok $? "filtered to $K2"
keys k
check "k: the list of signals for that process" "Signal for $K2 sleep"
check "the list names what each signal does" 'SIGKILL +end it now; it cannot clean up'
keys Enter
check "Enter: asks before sending SIGTERM" "Send SIGTERM to process $K2 sleep of user [a-z0-9]+\\?"
keys n
check "n: nothing sent, and it says so" 'no signal sent'
[ "$(state "$K2")" = S ]
ok $? "n: the process still runs ($(state "$K2"))"
keys Escape

# a question that is not on the screen (too small a terminal) is not answered
select_pid "$K2"
keys k Enter
check "the question, before the terminal shrinks" "Send SIGTERM to process $K2"
T resize-window -x 30 -y 6
check "too small: the question is not shown" 'terminal too small'
keys y
sleep 0.5
[ "$(state "$K2")" = S ]
ok $? "too small: y sends nothing ($(state "$K2"))"
T resize-window -x 200 -y 30
check "the question is back with the room for it" "Send SIGTERM to process $K2"
keys n
check "n: nothing sent" 'no signal sent'
keys Escape

select_pid "$K1"
keys F9
check "F9: the list of signals" "Signal for $K1 sleep"
keys Enter
check "the question" "Send SIGTERM to process $K1"
keys y
check "y: sent, and it says so" "sent SIGTERM to process $K1 \\(sleep\\)"
wait_dead "$K1"
ok $? "the process has ended ($(state "$K1"))"
wait "$K1"
rc=$?
[ "$rc" = 143 ]
ok $? "by SIGTERM (exit status $rc)"
check "it leaves the list" "0 of [23] processes, filter '$K1'"
keys Escape

select_pid "$K2"
keys k Down Down Down Down
keys Enter
check "the fifth signal of the list: SIGKILL" "Send SIGKILL to process $K2"
keys y
check "sent SIGKILL" "sent SIGKILL to process $K2"
wait_dead "$K2"
ok $? "the process has ended ($(state "$K2"))"
wait "$K2"
rc=$?
[ "$rc" = 137 ]
ok $? "by SIGKILL (exit status $rc)"
keys q
wait_exit >/dev/null

# another user's process: top runs unprivileged (as nobody when the test
# runs as root; else K3 stands for a process of root's, pid 1)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
	RUNAS="setpriv --reuid=65534 --regid=65534 --clear-groups" \
		start 200 30 GPUSCOPE_PROC_ROOT= GPUSCOPE_PASSWD= -- -d 0.3
	victim=$K3
	owner=root
elif [ "$(id -u)" != 0 ]; then
	sed -e "s/^\\[process $K3\\]/[process 1]/" "$SCN" >"$SCN.1" && mv "$SCN.1" "$SCN"
	start 200 30 GPUSCOPE_PROC_ROOT= GPUSCOPE_PASSWD= -- -d 0.3
	victim=1
	owner=root
else
	victim=""
fi
if [ -n "$victim" ]; then
	select_pid "$victim"
	keys k
	check "another user's process: refused, with the reason" "process $victim belongs to $owner: only root may signal another user's process"
	check_not "no signal menu" "Signal for $victim"
	[ "$(state "$K3")" = S ]
	ok $? "it still runs"
	keys q
	wait_exit >/dev/null
else
	skip_missing "root without setpriv (util-linux): cannot run top as another user"
fi

# processes of a fixture /proc are not this machine's
SCN=$ROOT/tests/scenarios/h100x2.scn
start 100 30 -- -d 0.3
check "fixture: up" '^  0 +1001 '
keys k
check "fixture /proc: refused" "processes are read from '.*tests/fixtures/proc', not this machine's /proc"
SCN=$TMP/kill.scn
start 100 30 GPUSCOPE_PROC_ROOT= GPUSCOPE_PASSWD= -- --read-only
check "--read-only: up" 'GPU +PID'
keys k
check "--read-only: refused" 'read-only \(--read-only\): top sends no signals'
keys q
wait_exit >/dev/null

done_testing
