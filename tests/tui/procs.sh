#!/bin/sh
# gpuscope top's process list (the fixture machine: 6 processes on 2 GPUs,
# users alice, bob and root): sorting by a column and back, inverted, by
# the sort menu and by its keys; the text, user and GPU filters and Esc;
# the parent/child tree (6006 is a child of 1001); moving the selection.
. "$(dirname "$0")/lib.inc"

# The pids of the process rows, in screen order, on one line.
pids() {
	screen | sed -n '/^GPU  *PID/,$p' | awk 'NR > 1 && $2 ~ /^[0-9]+$/ { printf "%s ", $2 }'
}

# check_order DESCRIPTION "PID PID ...": the rows come to be in that order.
check_order() {
	i=0
	while [ $i -lt 60 ] && [ "$(pids)" != "$2 " ]; do
		sleep 0.05
		i=$((i + 1))
	done
	[ "$(pids)" = "$2 " ]
	ok $? "$1 ($(pids))"
}

start 200 50 -- -d 0.3
check "the list is up" '6 processes, sorted by GPU-Mem ▼'
check_order "by GPU memory, largest first (the default)" "1001 3003 2002 4004 6006 7007"
keys N
check "N: sorted by PID" 'sorted by PID ▲'
check_order "N: by PID, smallest first" "1001 2002 3003 4004 6006 7007"
keys I
check "I: inverted" 'sorted by PID ▼'
check_order "I: by PID, largest first" "7007 6006 4004 3003 2002 1001"
keys '>'
check "'>': the next column (Type)" 'sorted by Type ▲'
keys '<' '<'
check "'<' twice: the column before PID (GPU)" 'sorted by GPU ▲'
check_order "by GPU, then by PID" "1001 6006 2002 3003 4004 7007"
keys F6
check "F6: the sort menu" 'Sort by'
keys End Up Up Up Up Enter
check "the menu's choice: RSS" 'sorted by RSS ▼'
check_order "by RSS, largest first, unknown last" "1001 2002 3003 4004 6006 7007"
keys P
check "P: by CPU %" 'sorted by CPU% ▼'
check_order "by CPU %, largest first" "1001 4004 2002 3003 6006 7007"
keys T
check "T: by running time" 'sorted by Time ▼'
keys M
check "M: by GPU memory again" 'sorted by GPU-Mem ▼'

keys /
check "/: the filter prompt" '^Filter:'
keys -l vllm
check "typing narrows the list as it goes" "1 of 6 process, filter 'vllm'"
keys Enter
check_order "Enter keeps the filter: the vllm server only" "3003"
keys Escape
check "Esc clears the filters" '6 processes, sorted'
keys /
keys -l 4004
keys Enter
check_order "a pid is a filter too" "4004"
keys Escape
keys u
check "u: the user menu, every user" 'Show the processes of'
check "the users of the processes are listed" '│alice +│'
keys Down Down Enter
check "u, alice: two processes" '2 of 6 processes, user alice'
check_order "alice's processes" "1001 6006"
keys Escape
keys 1
check "1: GPU 1 only" '4 of 6 processes, GPU 1'
check_order "GPU 1's processes" "3003 2002 4004 7007"
keys g
check "g after GPU 1: every GPU again" '6 processes, sorted'
keys g
check "g: GPU 0" '2 of 6 processes, GPU 0'
keys 7
check "a GPU that does not exist says so" 'there is no GPU 7'
keys Escape

keys t
check "t: the tree" 'tree, sorted by GPU-Mem'
check "the child under its parent" '^  0 +6006 .*└─\[cuda-worker\]'
check_order "the tree's order: 6006 right after 1001" "1001 6006 3003 2002 4004 7007"
keys F5
check "F5: flat again" '6 processes, sorted by GPU-Mem'
check_not "no branches when flat" '└─'

keys Down Down
check "Down: the third row is selected; Enter shows its GPU" '6 processes'
keys Enter
check "Enter on a process: its GPU's detail (GPU 1)" '^ GPU 1  NVIDIA H100 80GB HBM3  state: ok'
keys Escape
check "Esc: back" '6 processes'

start 80 24 -- -d 0.3 --no-processes
check "--no-processes: GPUs, no process table" '^F1Help'
check_not "--no-processes: no header" 'PID Type'
keys t
check "--no-processes: the process keys say why they do nothing" 'processes are off'
keys q
wait_exit >/dev/null

done_testing
