#!/bin/sh
# gpuscope top's findings pane: doctor's health and workload checks over
# top's own samples, live. The two H100s of h100x2 (uncorrectable ECC
# errors, a downtrained link, a pending row remap, a process named like a
# kernel thread) are listed worst first with their GPU and id; F opens a
# finding's full text (evidence, meaning, what to do), Left/Right go to the
# others, Esc closes it; a pane of one line shows the worst finding; a GPU
# starved by its input (workload-starved, played ten times as fast) comes to
# show workload.starved; a replayed recording shows its own findings; a
# healthy GPU shows "nothing found", and F says there is nothing to show.
. "$(dirname "$0")/lib.inc"

start 100 50 -- -d 0.2
check "started" '^F1Help'
check "the pane counts the findings" '^Findings  [0-9]+ \(F: full text\)'
check "worst first: the error of GPU 1" '^  error   GPU 1 health\.ecc\.uncorrectable  2 uncorrectable ECC errors'
screen | grep -A1 '^Findings' | tail -n 1 | grep -q '^  error '
ok $? "the first line under the header is the error"
check "a warning with its GPU and id" '^  warning GPU 1 health\.pcie\.downtrained  PCIe link below its maximum'
check_not "no ok line in the pane" 'health\.ok|workload\.ok'

keys F
check "F: the full text of the first finding" 'Finding 1 of [0-9]+: health\.ecc\.uncorrectable'
check "... its severity and GPU" 'error, GPU 1'
check "... its evidence" 'Evidence:'
check "... what it means" 'Meaning: '
check "... what to do" 'What to do: '
check "... and where to read more" "gpuscope doctor --explain health\\.ecc\\.uncorrectable"
keys Right
check "Right: the next finding" 'Finding 2 of [0-9]+: '
keys Left
check "Left: back to the first" 'Finding 1 of [0-9]+: health\.ecc'
keys Escape
wait_gone 'Finding 1 of' 3
ok $? "Esc closes it"
keys '?'
check "help: lists F" 'F +a finding.s full text: evidence, meaning, what to do'
keys Escape
check_size 100 50 "the screen fits"

start 80 24 -- -d 0.2
check "80x24: the worst finding on the pane's one line" '^Findings  [0-9]+ \(F: full text\)  error   GPU 1 health\.ecc'
check_size 80 24 "80x24: the screen fits"
keys F
check "80x24: F opens the text" 'Finding 1 of'
check_size 80 24 "80x24: the dialog fits"
keys Down Down Down PageDown
check "80x24: it scrolls" 'Up/Down: scroll'
keys q
wait_gone 'Finding 1 of' 3
ok $? "q closes it, and top goes on"
check "top still runs" '^F1Help'

SCN=$ROOT/tests/scenarios/workload-starved.scn
start 100 40 FAKE_NVML_EPOCH="$(date +%s)" FAKE_NVML_SPEED=10 \
	GPUSCOPE_PROC_ROOT="$ROOT/tests/fixtures/doctor/proc-workload" -- -d 0.1
check "a starved GPU comes to show workload.starved" '^  warning GPU 0 workload\.starved' 20
keys F
check "F: the starved GPU's text" 'Finding 1 of [0-9]+: workload\.starved' 5
check "... with its causes" 'input'

# a recording replayed: its findings, said to come from the recording
(
	export GPUSCOPE_NVML="$FAKE" FAKE_NVML_SCENARIO="$ROOT/tests/scenarios/h100x2.scn"
	export GPUSCOPE_PROC_ROOT="$ROOT/tests/fixtures/proc" GPUSCOPE_SYSFS_ROOT="$ROOT/tests/fixtures/sys-empty"
	export GPUSCOPE_PASSWD="$ROOT/tests/fixtures/passwd"
	"$BIN" record -o "$TMP/r.rec" -d 0.1 -c 12 --quiet
) >"$TMP/record.out" 2>&1
if [ -s "$TMP/r.rec" ]; then
	PREFIX="replay $TMP/r.rec" start 100 50
	check "replay: the recording's findings in the pane" '^  error   GPU 1 health\.ecc\.uncorrectable' 10
	check "replay: to its end" 'end of recording'
	keys F
	check "replay: F opens the text" 'Finding 1 of [0-9]+: health\.ecc\.uncorrectable'
	keys Escape
	keys q
	wait_exit >/dev/null
else
	ok 1 "gpuscope record made no recording to replay"
fi

SCN=$ROOT/tests/scenarios/geforce.scn
start 100 40 -- -d 0.1
check "a healthy GPU: nothing found" '^Findings  nothing found' 10
sleep 1.5
check "... still nothing after workload's six samples" '^Findings  nothing found' 
keys F
check "F with no finding says so" 'no finding to show'

keys q
rc=$(wait_exit)
[ "$rc" = 0 ]
ok $? "q quits with status 0 ($rc)"
done_testing
