#!/bin/sh
# A GPU that falls off the bus while gpuscope top runs: it is marked LOST,
# loudly, with the driver's reason, while the other GPU keeps updating (its
# utilisation steps from 11 % to 77 % after the loss); a GPU that answers
# too slowly is marked as not responding and does not hold up the screen.
. "$(dirname "$0")/lib.inc"

SCN=$TMP/lost.scn
cat >"$SCN" <<'EOF'
[system]
driver_version = 590.48.01
cuda_version = 13010

[gpu]
name = NVIDIA A100-SXM4-40GB
uuid = GPU-27b94a00-ed54-5c24-b1fd-1054085de32a
memory_total = 40960 MiB
memory_used = 1024 MiB
util_gpu = steps 0:11 3:77
util_memory = 5
temperature = 36
temp_slowdown = 90
power_usage = 66920
power_limit_enforced = 400000

[gpu]
name = NVIDIA A100-SXM4-40GB
uuid = GPU-3c5e7a91-1b2d-4e6f-8a0c-9d1e2f3a4b5c
memory_total = 40960 MiB
memory_used = 30000 MiB
util_gpu = 100
util_memory = 60
temperature = 71
temp_slowdown = 90
power_usage = 380000
power_limit_enforced = 400000
lost = 1.5
EOF

start 80 24 -- -d 0.2
check "both GPUs are read at first" '^ 1 A100-SXM4-40GB  GFX' 3
check "GPU 0 at 11 %" 'UTL\[\|* *11%\]' 3
check "GPU 1 comes to be shown as LOST" '^ 1 A100-SXM4-40GB +LOST' 5
check "with the reason" 'GPU is lost \(fallen off the bus\)' 3
check "GPU 0 goes on updating after the loss: 77 %" 'UTL\[\|* *77%\]' 6
check "GPU 1 is still LOST" '^ 1 A100-SXM4-40GB +LOST'
check "its chart says so too" '^ 1 LOST'
has_colour
ok $? "in colour"
keys d Right
check "the detail of a lost GPU says what to do" 'state: LOST'
check "... and why" 'reboot, then check its power'
keys Escape

# a GPU whose readings take 3 s with a deadline of 0.5 s
SCN=$TMP/slow.scn
sed -e 's/^lost = 1.5$/delay = nvmlDeviceGetTemperature* 3000 from 1/' "$TMP/lost.scn" >"$SCN"
start 80 24 -- -d 0.2 --timeout 0.5
check "a slow GPU is marked as not responding (stale)" '^ 1 A100-SXM4-40GB +NOT RESPONDING \(stale\)' 8
check "the other keeps updating: 77 %" 'UTL\[\|* *77%\]' 6
keys q
rc=$(wait_exit 8)
[ "$rc" = 0 ]
ok $? "q quits though a GPU hangs ($rc)"

done_testing
