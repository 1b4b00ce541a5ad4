#!/bin/sh
# gpuscope top's other views and keys: help, the detail of a GPU (every
# field with its unit), the GPU list's focus, chart metrics, the findings
# pane, pause, the interval; colour, NO_COLOR and --color=never (reverse
# video and bold only), TERM=xterm-256color, --demo; every way out (q,
# F10, Ctrl-C, SIGTERM) restores the terminal; a recording replayed to its
# end; usage errors.
. "$(dirname "$0")/lib.inc"

start 100 50 -- -d 0.3
check "started" '^F1Help'
keys '?'
check "?: the help screen" '^ Keys of gpuscope top'
check "help: lists the quit keys" 'q F10 +quit'
check "help: lists the kill keys" 'k F9 +send a signal to the selected process'
check "help: lists the sort keys" 'F6  < > , . +choose the sort column'
keys q
check "q in help goes back, not out" '^F1Help'
keys F1
check "F1: help again" '^ Keys of gpuscope top'
keys Escape
check "Esc: back" '^History'

keys d
check "d: the detail of GPU 0" '^ GPU 0  NVIDIA H100 80GB HBM3  state: ok'
check "detail: identity strings" '^   uuid +GPU-0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0'
check "detail: the field count" '^ Fields: [0-9]+ of [0-9]+ reported'
check "detail: memory in binary units" 'memory_total_bytes +79\.6 GiB'
check "detail: power with its unit" 'power_draw_watts +[0-9.]+ W +power draw'
keys NPage
check "detail: PCIe link" 'pcie_link_width_max +16 '
keys End
check "detail: clock event reasons, named" 'on +SW power cap +clocks are lowered to stay under the power limit'
check "detail: the GPU's processes" 'Processes: 2 on this GPU'
keys Right
check "Right: GPU 1" '^ GPU 1  NVIDIA H100 80GB HBM3'
keys a
check "a: unknown fields too" 'reported \(a: hide the others\)'
check "a: an unknown field is '-'" ' - +'
keys Escape
check "Esc: back to the main view" '^History'

keys Tab Down
keys Enter
check "Tab, Down, Enter: the detail of the GPU chosen in the GPU list" '^ GPU 1  NVIDIA'
keys Escape Tab

keys c
check "c: chart of memory used" '^History: memory used \(%\)'
keys c
check "c: chart of power draw" '^History: power draw \(W\)'
keys c
check "c: chart of temperature" '^History: temperature \(°C\)'
keys C
check "C: back to power" '^History: power draw'
keys F3 F3 F3
check "F3: on to the memory clock" '^History: memory clock \(MHz\)'

keys f
wait_gone '^Findings' 3
ok $? "f: hides the findings pane"
keys f
check "f again: the pane is back" '^Findings  [0-9]+ \(F: full text\)'

keys ' '
check "space: paused" 'PAUSED'
keys ' '
wait_gone 'PAUSED' 3
ok $? "space again: running"
keys +
check "+: a longer interval" 'every 0\.5s'
keys - - -
check "- three times: shorter" 'every 0\.1s'

keys F10
rc=$(wait_exit)
[ "$rc" = 0 ]
ok $? "F10: quits with status 0 ($rc)"
check "the terminal is back: the shell's screen, not top's" 'after-top rc=0'
check_not "nothing of top is left on it" 'F1Help|gpuscope top'
[ "$(T display -p '#{cursor_flag}')" = 1 ]
ok $? "the cursor is visible again"

# help on a short terminal: scrolling reaches its last line
start 100 20
check "short terminal: up" '^F1Help'
keys '?'
check "short terminal: the help" '^ Keys of gpuscope top'
keys NPage NPage NPage
check "short terminal: the help scrolls to its last line" 'q F10 +quit'
keys q q
wait_exit >/dev/null

# colour, or reverse and bold without it
start 80 24
check "colour: up" '^F1Help'
has_colour
ok $? "colour by default on a colour terminal"
start 80 24 NO_COLOR=1
check "NO_COLOR: up" '^F1Help'
has_colour
ok $((!$?)) "NO_COLOR: no colour at all"
screen_e | grep -q "$(printf '\033')\\[[0-9;]*7m"
ok $? "NO_COLOR: reverse video marks the title and the selection"
start 80 24 -- --color=never
check "--color=never: up" '^F1Help'
has_colour
ok $((!$?)) "--color=never: no colour"
start 80 24 NO_COLOR=1 -- --color=always
check "NO_COLOR with --color=always: up" '^F1Help'
has_colour
ok $? "--color=always wins over NO_COLOR"
start 80 24 TERM=vt100
check "TERM=vt100 (no colours): up" '^F1Help'
has_colour
ok $((!$?)) "TERM=vt100: no colour"
start 80 24 TERM=dumb
rc=$(wait_exit)
[ "$rc" = 2 ] && grep -q "the terminal 'dumb' cannot place the cursor" "$TMP/err"
ok $? "TERM=dumb: refused with the reason, exit 2 ($rc)"
start 80 24 TERM=xterm-256color
check "TERM=xterm-256color: the full screen" '^Findings  [0-9]+ \(F: full text\)'
check "TERM=xterm-256color: the keys" '^F1Help'

# a choice of GPUs, an interval in milliseconds
start 80 24 -- -i 1 -d 500ms
check "-d 500ms: every 0.5 s" ' every 0\.5s'

check "-i 1: one GPU" ' 1 GPU  every 0\.5s'
check "-i 1: it is GPU 1" '^ 1 H100 80GB HBM3'
check "-i 1: its processes only" '^  1 +3003 '
check_not "-i 1: no process of GPU 0" '^  0 +1001 '
keys q
wait_exit >/dev/null
start 80 24 -- -i 7
rc=$(wait_exit)
[ "$rc" = 2 ] && grep -q "'7'" "$TMP/err"
ok $? "-i 7: no such GPU, exit 2 before the screen is taken ($rc: $(cat "$TMP/err"))"

# every way out ends the same way
start 80 24
check "for Ctrl-C: up" '^F1Help'
keys C-c
rc=$(wait_exit)
[ "$rc" = 0 ]
ok $? "Ctrl-C: a clean exit ($rc)"
check "Ctrl-C: the terminal is back" 'after-top rc=0'
start 80 24
check "for SIGTERM: up" '^F1Help'
kill -TERM "$(cat "$TMP/pid")"
rc=$(wait_exit)
[ "$rc" = 0 ]
ok $? "SIGTERM: a clean exit ($rc)"
check "SIGTERM: the terminal is back" 'after-top rc=0'

# the built-in demo through the global option
PREFIX=--demo start 100 30
check "--demo: eight simulated GPUs" '8 GPUs .*SIMULATED'
check "--demo: processes" 'GPU +PID Type User'
keys q
wait_exit >/dev/null

# a recording, replayed to its end
(
	export GPUSCOPE_NVML="$FAKE" FAKE_NVML_SCENARIO="$SCN"
	export GPUSCOPE_PROC_ROOT="$ROOT/tests/fixtures/proc" GPUSCOPE_SYSFS_ROOT="$ROOT/tests/fixtures/sys-empty"
	export GPUSCOPE_PASSWD="$ROOT/tests/fixtures/passwd"
	"$BIN" record -o "$TMP/r.rec" -d 0.1 -c 6 --quiet
) >"$TMP/record.out" 2>&1
rc=$?
n=$((n + 1))
if [ "$rc" = 0 ] && [ -s "$TMP/r.rec" ]; then
	echo "ok $n - gpuscope record made a recording to replay"
else
	fail=$((fail + 1))
	echo "not ok $n - gpuscope record made no recording (exit $rc)"
	sed 's/^/# record: /' "$TMP/record.out" | head -n 20
fi
if [ -s "$TMP/r.rec" ]; then
	PREFIX="replay $TMP/r.rec" start 80 24
	check "replay: says so in the title, with the sample's time" 'gpuscope top .* replay 20[0-9-]+ [0-9:]{8} '
	check "replay: the end of the recording in the title" '^ gpuscope top .* end of recording *$'
	check "replay: the end of the recording" 'end of recording'
	check "replay: the last frame stays" '^  0 +1001 '
	keys +
	check "replay: + explains the pace is the recording's" 'keeps the pace of its recording'
	keys k
	check "replay: nothing to signal" 'from a recording, not running here'
	keys t
	check "replay: no tree without live parents" 'recording holds no parent pids'
	keys q
	rc=$(wait_exit)
	[ "$rc" = 0 ]
	ok $? "replay: q quits ($rc)"
fi

# usage errors: no terminal, a bad option, a bad interval
"$BIN" top </dev/null >"$TMP/out" 2>"$TMP/err2"
rc=$?
[ $rc = 2 ] && grep -q 'top needs a terminal' "$TMP/err2"
ok $? "no terminal: exit 2 and why ($rc)"
"$BIN" top --bogus >"$TMP/out" 2>"$TMP/err2"
rc=$?
[ $rc = 2 ] && grep -q "unknown option '--bogus'" "$TMP/err2"
ok $? "a bad option: exit 2 ($rc)"
"$BIN" top -d 0 >"$TMP/out" 2>"$TMP/err2"
rc=$?
[ $rc = 2 ] && grep -q -- '--interval takes a duration from 0.1 s to 1 d' "$TMP/err2"
ok $? "a bad interval: exit 2 ($rc)"
"$BIN" top --help | grep -q -- '-d, --interval=SEC'
ok $? "--help documents -d"

done_testing
