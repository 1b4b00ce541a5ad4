#!/bin/sh
# Terminal escape sequences planted in text from outside gpuscope (issue 15
# item 12): a window-title change (ESC ] 0 ; ... BEL), a screen clear
# (ESC [ 2 J), an OSC 52 clipboard write and C1 controls (CSI as U+009B and
# as a lone byte 0x9B) in a GPU's product name and the driver's version (the
# fake NVML), the host name and a process's command line (a fixture /proc),
# and a process name in the kernel log. No ESC, BEL, other C0 control, DEL
# or C1 control may reach stdout from doctor's report (live, and over a
# recording), the status table and its header, replay info, watch and query
# CSV, live or replayed; each output must still show the name (its visible
# part), so that the check is not passed by leaving it out. Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
bin=$O/gpuscope
if [ ! -x "$bin" ] || ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP needs $bin and python3"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/# /' "$f" | head -n 10 | od -c | head -n 12 | sed 's/^/# /'; done
}

# the planted sequences: title, clear, clipboard, CSI as U+009B and as a lone byte
evil='\033]0;pwned\007\033[2J\033]52;c;aGFjaw==\007\302\2331m\2332J'
# a scenario: one H100 whose name and driver version carry them, a process on it
{
	printf '[system]\ndriver_version = 590.48.01%b\nnvml_version = 13.590.48.01\ncuda_version = 13010\n\n' "$evil"
	printf '[gpu]\nname = NVIDIA H100 %bHBM3\n' "$evil"
	printf 'uuid = GPU-0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0\npci_bus_id = 00000000:3B:00.0\n'
	printf 'memory_total = 81559 MiB\nmemory_used = 1024 MiB\nutil_gpu = 50\ntemperature = 60\n\n'
	printf '[process 1001]\ngpu = 0\ntype = compute\nused_memory = 1000 MiB\nname = train%b.py\n' "$evil"
} >"$tmp/evil.scn"
# a /proc whose host name and process 1001's command line carry them
cp -r tests/fixtures/proc "$tmp/proc"
printf 'gpu-%bnode\n' "$evil" >"$tmp/proc/sys/kernel/hostname"
printf 'python%b\000train.py\000' "$evil" >"$tmp/proc/1001/cmdline"
# a kernel log: an Xid on that GPU from a process so named
printf '[  100.000000] NVRM: Xid (PCI:0000:3b:00): 13, pid=1001, name=evil%b, Graphics SM Warp Exception\n' \
	"$evil" >"$tmp/kern.log"

fake() {
	GPUSCOPE_NVML=$O/fakenvml/current/libnvidia-ml.so.1 FAKE_NVML_TIME=0 FAKE_NVML_EPOCH=1767225600 \
		GPUSCOPE_CLOCK=1767225600 GPUSCOPE_PROC_ROOT="$tmp/proc" TZ=UTC \
		GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty GPUSCOPE_PASSWD=tests/fixtures/passwd \
		FAKE_NVML_SCENARIO="$tmp/evil.scn" "$@"
}

# clean FILE WORD...: no control character in FILE (newlines aside), and each WORD in it
cat >"$tmp/clean.py" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
bad = []
for i, b in enumerate(data):
    if (b < 0x20 and b != 0x0A) or b == 0x7F:
        bad.append("byte 0x%02x at %d" % (b, i))
text = data.decode("utf-8", "surrogateescape")
for i, ch in enumerate(text):
    c = ord(ch)
    if 0x80 <= c <= 0x9F:
        bad.append("C1 U+%04X at character %d" % (c, i))
    elif 0xDC80 <= c <= 0xDC9F:  # a lone byte 0x80..0x9F
        bad.append("C1 byte 0x%02x at character %d" % (c - 0xDC00, i))
for word in sys.argv[2:]:
    if word.encode() not in data:
        bad.append("'%s' is not shown" % word)
if bad:
    print("; ".join(bad[:6]))
    sys.exit(1)
PY
# check WHAT WORDS COMMAND...: the command's stdout is clean and shows WORDS
check() {
	what=$1 words=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	# shellcheck disable=SC2086
	if why=$(python3 "$tmp/clean.py" "$tmp/out" $words); then
		ok "$what: no control character on stdout (exit $rc)"
	else
		not_ok "$what: $why (exit $rc)" "$tmp/out" "$tmp/err"
	fi
}

check "doctor's report: the kernel log's process name, the GPU's name" "evil pwned H100" \
	fake "$bin" doctor --only klog --log "$tmp/kern.log"
check "status: header (host, driver) and table" "gpu- node 590.48.01 H100 python" \
	fake "$bin" status
check "status --compact" "gpu- H100" fake "$bin" status --compact
check "query --query-gpu CSV: name, driver, host" "H100 590.48.01 gpu-" \
	fake "$bin" query --query-gpu=name,driver_version,hostname --format=csv
check "query --query-compute-apps CSV: process name" "python" \
	fake "$bin" query --query-compute-apps=pid,process_name --format=csv
check "watch --format csv" "H100 590.48.01 gpu-" \
	fake "$bin" watch -c 2 -d 0.05 --format csv --fields index,name,driver_version,hostname
check "watch (table)" "H100" fake "$bin" watch -c 1 -d 0.05 --fields index,name

if fake "$bin" record -q -d 0.05 -c 3 -o "$tmp/evil.rec" >/dev/null 2>"$tmp/err" && [ -s "$tmp/evil.rec" ]; then
	ok "a recording of the planted names"
else
	not_ok "record of the planted names" "$tmp/err"
fi
check "replay info: host and GPU name of the recording" "gpu- node H100" \
	"$bin" replay "$tmp/evil.rec" info
check "replay status" "gpu- H100 python" "$bin" replay "$tmp/evil.rec" status
check "replay watch --format csv" "H100 gpu-" \
	"$bin" replay "$tmp/evil.rec" watch --format csv --fields index,name,hostname
check "doctor over the recording, with the kernel log" "evil pwned" \
	"$bin" doctor --recording "$tmp/evil.rec" --since +0 --log "$tmp/kern.log"

# the JSON escapes rather than replaces: the name is kept, as \u001b
fake "$bin" status --json >"$tmp/out" 2>"$tmp/err"
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if "\x1b]0;pwned\x07" in d["gpus"][0]["name"] else 1)' "$tmp/out"; then
	ok "status --json keeps the name as it is, escaped"
else
	not_ok "status --json: the name escaped, not altered" "$tmp/out" "$tmp/err"
fi

echo "1..$n"
[ "$fail" -eq 0 ]
