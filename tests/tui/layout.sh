#!/bin/sh
# gpuscope top's layout: two GPUs at 80x24, 120x40 and 200x60 (title, bars,
# charts, findings, processes, keys, nothing past the edge); sixteen GPUs at
# 80x24 in compact mode, one line each, with the processes still there; the
# layout key; a command line with control and wide characters; resizing
# with the window; a terminal that is too small.
. "$(dirname "$0")/lib.inc"

start 80 24 -- -d 0.2
check "80x24: the title bar" '^ gpuscope top  gpu-node-01 .* 2 GPUs  every 0.2s  SIMULATED'
check "80x24: GPU 0 with its clock" '^ 0 H100 80GB HBM3  P0  SM [0-9]+ MHz'
check "80x24: bars for utilisation, memory, power, temperature" 'UTL\[.*\] MEM\[.*\] PWR\[.*698/700W\] TMP\[.*74/89°C\]'
check "80x24: history charts, one per GPU" '^History: GPU utilisation \(%\), last'
check "80x24: the findings pane, one line with the worst finding" '^Findings  [0-9]+ \(F: full text\)  error   GPU 1 '
check "80x24: the process table's header" '^GPU +PID Type User +GPU-Mem GPU% +CPU% +RSS +Time Command'
check "80x24: a process row" '^  0 +1001 C +alice +70120MiB +97 +40\.0 +2\.2G'
check "80x24: the keys at the bottom" '^F1Help +F2Setup +F3Chart +F4Filter +F5Tree +F6SortBy +F9Kill +F10Quit'
check_size 80 24 "80x24: the screen fits"
screen | sed -n 24p | grep -q '^F1Help'
ok $? "80x24: the keys are on the last line"

start 120 40 -- -d 0.2
check "120x40: the bus id beside the name" '^ 0 H100 80GB HBM3  00000000:18:00\.0  P0'
check "120x40: a clock event reason" 'Clocks held: SW power cap'
check "120x40: the container column" 'Container +Command'
check_size 120 40 "120x40: the screen fits"
# two-row charts or more: the scale line under each GPU's value
check "120x40: charts with a scale" '^   max  100%'

start 200 60 -- -d 0.2
check "200x60: all columns and the whole command" 'python3 -m torch\.distributed\.run'
check "200x60: sorted by GPU memory, largest first" 'sorted by GPU-Mem ▼'
check_size 200 60 "200x60: the screen fits"
h=$(screen | awk '/^History/ { h = NR } /^Findings/ { f = NR } END { print f - h }')
[ "$h" -ge 10 ]
ok $? "200x60: tall charts ($h lines)"

SCN=$TMP/gpus16.scn
make_gpus_scenario 16 "$SCN"
start 80 24 -- -d 0.2
check "16 GPUs at 80x24: compact, GPU 15 on one line" '^15 H100 80GB H… UTL\[.*\] MEM\[.*\] PWR\[.*\] TMP\[.*\]'
lines=$(screen | grep -cE '^ ?[0-9]+ H100 80GB H… UTL\[')
[ "$lines" -eq 16 ]
ok $? "16 GPUs at 80x24: one line each, all 16 shown ($lines)"
check "16 GPUs at 80x24: the process table is still there" '^GPU +PID Type User'
check_size 80 24 "16 GPUs at 80x24: the screen fits"
keys m
check "m: the full layout, two lines per GPU" '^   UTL\['
check "m: says so" 'layout: full'
keys m
check "m again: compact" 'layout: compact'
keys m
check "m a third time: automatic" 'layout: auto'
check "automatic: compact again with 16 GPUs" '^15 H100 80GB H… UTL\['

# a command line with a tab, a newline, an escape sequence and wide characters
SCN=$ROOT/tests/scenarios/h100x2.scn
cp -R "$ROOT/tests/fixtures/proc" "$TMP/proc"
printf 'python3\0-c\0print(1)\tx\ny\033[31mRED\0\346\225\260\346\215\256\350\256\255\347\273\203\0' >"$TMP/proc/1001/cmdline"
start 160 30 "GPUSCOPE_PROC_ROOT=$TMP/proc"
check "control characters in a command line are shown as '?', wide ones fit" '^  0 +1001 .* python3 -c print\(1\)\?x\?y\?\[31mRED 数据训练$'
check_size 160 30 "the screen still fits"
check "the next row is still the next process" '^  1 +3003 C '

start 80 24 -- -d 0.2
check "resize: starts at 80x24" '^F1Help'
T resize-window -x 200 -y 60
check "resize: redrawn at 200x60 (the keys at the new bottom)" 'Container +Command'
wait_for 'python3 -m torch\.distributed\.run' 3
screen | sed -n 60p | grep -q '^F1Help'
ok $? "resize: the keys are on line 60"
check_size 200 60 "resize: the screen fits 200x60"
T resize-window -x 80 -y 24
wait_gone 'Container +Command' 3
check "resize: back at 80x24" '^GPU +PID Type User +GPU-Mem GPU% +CPU%'
screen | sed -n 24p | grep -q '^F1Help'
ok $? "resize: the keys are on line 24 again"
check_size 80 24 "resize: the screen fits 80x24 again"
T resize-window -x 30 -y 6
check "a terminal too small says so" 'terminal too small'
T resize-window -x 80 -y 24
check "and recovers" '^F1Help'
keys q
rc=$(wait_exit)
[ "$rc" = 0 ]
ok $? "q: exit status 0 ($rc)"

done_testing
