#!/bin/sh
# make run: show the real GPUs, or the built-in demo when this machine has none.
bin=${1:-build/gpuscope}
"$bin"
rc=$?
if [ "$rc" -eq 4 ]; then
	echo
	echo "gpuscope: no usable GPU here (reason above), so here is the simulated demo: $bin --demo"
	echo
	"$bin" --demo
	rc=$?
fi
exit "$rc"
