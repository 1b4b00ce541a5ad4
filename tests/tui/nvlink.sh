#!/bin/sh
# gpuscope top's detail of a GPU with NVLink (tests/scenarios/nvlink.scn at
# t = 160 s): a line per link that is up or carries data or errors, a link
# that went down marked DOWN, and the links that never came up left out.
. "$(dirname "$0")/lib.inc"

SCN=$ROOT/tests/scenarios/nvlink.scn
start 150 60 FAKE_NVML_TIME=160 -- -d 0.3
check "started" '^F1Help'
keys d
check "d: the detail of GPU 0" '^ GPU 0  NVIDIA H100 80GB HBM3  state: ok'
keys End
check "detail: the NVLink section" '^ NVLink \(counters since the driver loaded'
check "detail: link 0 up, its data and errors" \
	'^   link 0  up   tx 156 MiB +rx 312 MiB +crc flit 2500  crc data 150  replay 500  recovery 1$'
check "detail: link 2 down, its counters kept" '^   link 2  DOWN tx 469 MiB'
check_not "detail: a link that never came up is left out" '^   link 4 '
keys Right
check "Right: GPU 1, all four links up" '^   link 3  up   tx 16(\.0)? MiB'
keys Escape q
rc=$(wait_exit 8)
[ "$rc" = 0 ]
ok $? "Esc, q: quits ($rc)"
done_testing
