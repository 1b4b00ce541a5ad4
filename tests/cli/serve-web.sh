#!/bin/sh
# gpuscope serve's web page in headless Chromium, on the fake NVML with
# tests/scenarios/serve-web.scn (GPU 0 climbs, GPU 1 falls, GPU 2 falls off
# the bus at t = 2): / is data/web/index.html; the page shows a card per GPU
# with its name, the lost GPU loudly and its readings as "-", numbers equal
# to the scenario's at the sample's time, the processes sorted by GPU memory,
# doctor's findings (set-up and log ones from /api/v1/findings, health and
# workload live from /api/v1/findings/live, worst first, each with its full
# text; markup in a finding shown as text, never run); behind a path prefix (a small proxy that also slows the
# API down, so that real time passes under Chromium's virtual time) it comes
# back after two failed polls, gathers samples and its numbers move with the
# scenario; at 390 px it has no horizontal overflow; with the API down it
# says so in its banner. Screenshots go to $GPUSCOPE_ARTEFACTS (default
# $O/artefacts). Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
bin=$O/gpuscope
chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ ! -x "$bin" ] || ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP needs $bin and python3"
	exit 0
fi
if [ -z "$chromium" ]; then
	echo "1..0 # SKIP needs chromium (Debian package chromium)"
	exit 0
fi
if ! "$bin" serve --help >/dev/null 2>&1; then
	echo "1..0 # SKIP $bin has no serve command"
	exit 0
fi
start=$(date +%s)
tmp=$(mktemp -d)
art=${GPUSCOPE_ARTEFACTS:-$O/artefacts}
mkdir -p "$art"
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift
	for f in "$@"; do [ -f "$f" ] && sed 's/^/# /' "$f" | head -n 20; done
}
# the lines "PASS what" and "FAIL what" of a check as TAP
report() {
	while IFS= read -r line; do
		case $line in
		PASS\ *) ok "${line#PASS }" ;;
		FAIL\ *) not_ok "${line#FAIL }" ;;
		*) echo "# $line" ;;
		esac
	done <"$1"
}
# browse NAME URL [chromium options]: the DOM after 6 s of virtual time in
# $tmp/NAME.html, Chromium's messages in $tmp/NAME.err
browse() {
	name=$1 url=$2; shift 2
	timeout -k 5 40 "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
		--hide-scrollbars --no-first-run --no-default-browser-check --disable-extensions \
		--disable-background-networking --disable-component-update --disable-sync --mute-audio \
		--user-data-dir="$tmp/chrome-$name" --virtual-time-budget=6000 "$@" \
		--dump-dom "$url" >"$tmp/$name.html" 2>"$tmp/$name.err"
}

cat >"$tmp/helper.py" <<'EOF'
import html.parser, json, math, re, sys, threading, time, urllib.error, urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# The scenario's ramps (tests/scenarios/serve-web.scn): key -> (from, to) over t = 0..90.
MiB, GiB = 1048576, 1073741824
RAMPS = {
    0: {"util": (10, 100), "memory": (8192 * MiB, 73728 * MiB), "temp": (40, 85), "power": (100, 700)},
    1: {"util": (95, 5), "memory": (61440 * MiB, 4096 * MiB), "temp": (75, 45), "power": (400, 100)},
}
LIMIT = {0: 700, 1: 400}
TOTAL = {0: 81559 * MiB, 1: 81920 * MiB}
NAMES = ["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA L4"]
PROCS = [  # sorted by GPU memory, most first: pid, user, GPU, memory, SM %, container
    ("3003", "1001", "1", "24.0 GiB", "41", "containerd 5075dfe85ac5"),
    ("2002", "root", "1", "20.0 GiB", "55", "docker 635a3e8a6cfa"),
    ("1001", "alice", "0", "6.0 GiB", "88", "–"),
]


def ramp(a, b, t):
    return a + (b - a) * min(max(t, 0), 90) / 90


def rnd(v):
    return math.floor(v + 0.5)


class Node:
    def __init__(self, tag, attrs):
        self.tag, self.attrs, self.kids, self.parts = tag, dict(attrs), [], []

    def text(self):
        return "".join(p if isinstance(p, str) else p.text() for p in self.parts)

    def all(self, pred):
        for k in self.kids:
            if pred(k):
                yield k
            yield from k.all(pred)


VOID = {"meta", "link", "br", "img", "input", "hr", "source", "col", "area", "base", "wbr"}


class Tree(html.parser.HTMLParser):
    def __init__(self, text):
        super().__init__()
        self.root = Node("#root", {})
        self.stack = [self.root]
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs)
        self.stack[-1].kids.append(n)
        self.stack[-1].parts.append(n)
        if tag not in VOID:
            self.stack.append(n)

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        self.stack[-1].parts.append(data)


class Checker:
    def __init__(self, path):
        self.root = Tree(open(path, encoding="utf-8").read()).root
        self.body = next(self.root.all(lambda n: n.tag == "body"), Node("body", {}))

    def check(self, what, cond, detail=""):
        print(("PASS " if cond else "FAIL ") + what + ("" if cond or not detail else ": " + str(detail)))
        return cond

    def find(self, pred, under=None):
        return list((under or self.root).all(pred))

    def attr(self, k, v):
        return lambda n: n.attrs.get(k) == v

    def cards(self):
        return {n.attrs["data-gpu-index"]: n for n in self.find(lambda n: "data-gpu-index" in n.attrs)}

    def value(self, card, m):
        v = self.find(self.attr("data-value", m), card)
        return (v[0].attrs.get("data-num"), v[0].text().strip()) if v else (None, None)

    def points(self, card, m):
        c = self.find(lambda n: n.tag == "canvas" and n.attrs.get("data-metric") == m, card)
        return int(c[0].attrs.get("data-points") or 0) if c else -1

    def banner(self):
        b = self.find(self.attr("id", "banner"))
        return b[0] if b else None

    def samples(self):
        return int(self.body.attrs.get("data-samples") or 0)

    def last_time(self):
        return float(self.body.attrs.get("data-last-time") or 0)

    # the numbers of GPUs 0 and 1 are the scenario's at the sample's time
    def numbers(self, epoch, label=None):
        t = self.last_time() - float(epoch)
        cards, bad = self.cards(), []
        for g, ramps in RAMPS.items():
            for m, (a, b) in ramps.items():
                num, txt = self.value(cards.get(str(g)), m) if str(g) in cards else (None, None)
                lo, hi = sorted((ramp(a, b, t - 0.5), ramp(a, b, t + 0.5)))
                slack = {"memory": MiB, "power": 0.5}.get(m, 1)
                try:
                    v = float(num)
                except (TypeError, ValueError):
                    bad.append("GPU %d %s: %r" % (g, m, num))
                    continue
                if not lo - slack <= v <= hi + slack:
                    bad.append("GPU %d %s = %s, scenario %.2f..%.2f at t = %.2f" % (g, m, v, lo, hi, t))
                want = {"util": "%d %%" % rnd(v), "temp": "%d °C" % rnd(v),
                        "power": "%d / %d W" % (rnd(v), LIMIT[g]),
                        "memory": "%.1f / %.1f GiB" % (v / GiB, TOTAL[g] / GiB)}[m]
                if txt != want:
                    bad.append("GPU %d %s shows %r, wanted %r" % (g, m, txt, want))
        if label:
            self.check("%s: the numbers are the scenario's at t = %.1f" % (label, t), not bad, "; ".join(bad))
        return {(g, m): float(self.value(cards[str(g)], m)[0] or "nan")
                for g in RAMPS for m in RAMPS[g] if str(g) in cards}


def first(argv):
    epoch, findings = argv[2], json.load(open(argv[3]))
    c = Checker(argv[1])
    cards = c.cards()
    c.check("a card per GPU, data-gpu-index 0..2", sorted(cards) == ["0", "1", "2"], sorted(cards))
    names = [next(iter(c.find(lambda n: "gname" in n.attrs.get("class", ""), cards[i])), Node("x", {})).text()
             for i in sorted(cards)]
    c.check("the cards have the scenario's names", names == NAMES, names)
    buses = [next(iter(c.find(lambda n: "bus" in n.attrs.get("class", "").split(), cards[i])), Node("x", {})).text()
             for i in sorted(cards)]
    c.check("and their bus ids", buses == ["00000000:18:00.0", "00000000:3B:00.0", "00000000:5E:00.0"], buses)
    states = [cards[i].attrs.get("data-state") for i in sorted(cards)]
    c.check("GPUs 0 and 1 are ok, GPU 2 lost", states == ["ok", "ok", "lost"], states)
    if "2" in cards:
        st = next(iter(c.find(lambda n: "state" in n.attrs.get("class", "").split(), cards["2"])), Node("x", {}))
        c.check("the lost GPU says so loudly (LOST, in a card marked bad, with the reason)",
                st.text() == "LOST" and "bad" in cards["2"].attrs.get("class", "")
                and "fallen off the bus" in cards["2"].text(), (st.text(), cards["2"].attrs))
        vals = [c.value(cards["2"], m) for m in ("util", "memory", "power", "temp")]
        pts = [c.points(cards["2"], m) for m in ("util", "memory", "power", "temp")]
        c.check("its null readings show as '–', never 0, and draw no point",
                all(v == ("", "–") for v in vals) and max(pts) == 0, (vals, pts))
    c.numbers(epoch, "direct")
    rows = c.find(lambda n: n.tag == "tr" and "data-pid" in n.attrs,
                  next(iter(c.find(c.attr("id", "procs"))), Node("x", {})))
    got = []
    for r in rows:
        td = [k.text() for k in r.kids if k.tag == "td"]
        got.append((td[0], td[1], td[2], td[3], td[4], td[6]) if len(td) == 7 else tuple(td))
    c.check("the process table has the scenario's processes, most GPU memory first", got == PROCS, got)
    cmd = [k for k in rows[2].kids if k.tag == "td"][5].text() if len(rows) == 3 else ""
    c.check("with their command lines", cmd.startswith("/home/alice/.venv/bin/python3 -m torch.distributed.run"), cmd)
    live = lambda i: i.startswith("health.") or i.startswith("workload.")
    want = sorted(f["id"] for f in findings["findings"] if f["severity"] != "ok" and not live(f["id"]))
    lis = c.find(lambda n: n.tag == "li" and "data-id" in n.attrs)
    shown = sorted(n.attrs["data-id"] for n in lis if n.attrs.get("data-source") == "doctor")
    c.check("the set-up and log findings are /api/v1/findings' (%d not ok)" % len(want), shown == want, (shown, want))
    byid = {(n.attrs["data-id"], n.attrs.get("data-gpu")): n for n in lis if n.attrs.get("data-source") == "live"}
    c.check("health and workload come live from /api/v1/findings/live",
            all(live(i) for i, g in byid) and c.body.attrs.get("data-live-time"), sorted(byid))
    lost = byid.get(("health.gpu.lost", "2"))
    c.check("the lost GPU 2 is a live error finding with its GPU",
            lost is not None and lost.attrs.get("data-severity") == "error" and "GPU 2" in lost.text(), sorted(byid))
    c.check("... and its full text: evidence, meaning, what to do",
            lost is not None and all(w in lost.text() for w in ("Evidence", "Meaning", "What to do", "fallen off the bus")),
            lost and lost.text())
    sev = [n.attrs.get("data-severity") for n in lis]
    order = {"error": 0, "warning": 1, "info": 2}
    c.check("worst first", [order[x] for x in sev] == sorted(order[x] for x in sev), sev)
    b = c.banner()
    c.check("no banner", b is not None and "hidden" in b.attrs, b and b.text())
    json.dump({"t": c.last_time(), "v": {"%d %s" % k: v for k, v in c.numbers(epoch).items()}},
              open(argv[4], "w"))


def second(argv):
    epoch, before = argv[2], json.load(open(argv[3]))
    c = Checker(argv[1])
    b = c.banner()
    c.check("behind a path prefix, after two failed polls: the banner went away",
            b is not None and "hidden" in b.attrs, b and b.text())
    cards = c.cards()
    c.check("the cards are there", sorted(cards) == ["0", "1", "2"], sorted(cards))
    c.check("it gathered samples (%d)" % c.samples(), c.samples() >= 3, c.samples())
    pts = [c.points(cards[g], m) for g in ("0", "1") if g in cards for m in ("util", "memory", "power", "temp")]
    c.check("each chart of GPUs 0 and 1 has a point per sample (%s)" % pts,
            len(pts) == 8 and min(pts) == c.samples(), (pts, c.samples()))
    dt = c.last_time() - before["t"]
    c.check("its sample is %.1f s newer than the first page's" % dt, dt >= 1.5, dt)
    now = c.numbers(epoch, "behind the prefix")
    v0 = before["v"]
    moved = [(k, v0.get("%d %s" % k), v) for k, v in now.items()]
    up = all(v > w for (g, m), w, v in moved if g == 0)
    down = all(v < w for (g, m), w, v in moved if g == 1)
    c.check("the numbers moved with the scenario: GPU 0 up, GPU 1 down", up and down and len(moved) == 8, moved)


def phone(argv):
    c = Checker(argv[1])
    a = c.body.attrs
    c.check("in a 390 px frame the page is 390 px wide", a.get("data-inner-width") == "390", a)
    c.check("and nothing overflows sideways (scrollWidth %s)" % a.get("data-inner-scroll"),
            a.get("data-inner-scroll") == "390" and a.get("data-inner-overflow") == "0", a)
    c.check("it shows the three cards", a.get("data-inner-cards") == "3", a)


def down(argv):
    c = Checker(argv[1])
    b = c.banner()
    txt = b.text() if b else ""
    c.check("with the API down the banner says 'cannot reach gpuscope serve: ...'",
            b is not None and "hidden" not in b.attrs and txt.startswith("cannot reach gpuscope serve: "), txt)
    c.check("and no sample is counted", c.samples() == 0, c.samples())


def wait(argv):  # wait until the server has seen GPU 2 lost
    url, deadline = argv[1], time.time() + 20
    while time.time() < deadline:
        try:
            d = json.load(urllib.request.urlopen(url + "api/v1/status", timeout=5))
            if len(d["gpus"]) == 3 and d["gpus"][2]["state"] == "lost":
                json.dump(json.load(urllib.request.urlopen(url + "api/v1/findings", timeout=5)),
                          open(argv[2], "w"))
                page = urllib.request.urlopen(url, timeout=5)
                ctype = page.headers.get("Content-Type", "")
                same = page.read() == open("data/web/index.html", "rb").read()
                print("PASS / is data/web/index.html, as text/html" if same and ctype.startswith("text/html")
                      else "FAIL / is %s, as %s" % ("data/web/index.html" if same else
                                                    "not data/web/index.html (rebuild?)", ctype))
                return
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.2)
    print("FAIL the server never reported GPU 2 lost")


PHONE = b"""<!doctype html><html><body style="margin:0">
<iframe id="f" src="/gs/?interval=0.25" style="border:0;width:390px;height:844px;display:block"></iframe>
<script>
setInterval(function () {
  try {
    var d = document.getElementById("f").contentDocument, e = d.documentElement, b = d.body;
    var s = document.body;
    s.setAttribute("data-inner-width", e.clientWidth);
    s.setAttribute("data-inner-scroll", Math.max(b.scrollWidth, e.scrollWidth));
    s.setAttribute("data-inner-overflow", b.getAttribute("data-overflow"));
    s.setAttribute("data-inner-cards", d.querySelectorAll("[data-gpu-index]").length);
  } catch (err) { document.body.setAttribute("data-error", err.message); }
}, 100);
</script></body></html>
"""


# findings with markup in them, as a process name or a log line could bring
EVIL = '<img src=x onerror="document.body.setAttribute(\'data-pwned\',1)"><b>bold</b>'
EVIL_LIVE = {"schema": "gpuscope.findings/1", "time": 1, "samples": 6, "worst": "warning", "findings": [
    {"id": "workload.suspect_process", "severity": "warning", "gpu": 0,
     "title": "Possible cryptominer or unwanted process on GPU 0: pid 7 (" + EVIL + ")",
     "evidence": ["name: " + EVIL], "meaning": EVIL, "action": EVIL}]}
EVIL_REPORT = {"schema": "gpuscope.doctor/1", "time": 1, "worst": "error", "exit_code": 2, "findings": [
    {"id": "log.nvidia.xid", "severity": "error", "title": "Xid 79 " + EVIL, "evidence": [EVIL],
     "meaning": None, "action": None}]}


def evil(argv):
    c = Checker(argv[1])
    ul = next(iter(c.find(c.attr("id", "findings"))), Node("x", {}))
    lis = c.find(lambda n: n.tag == "li" and "data-id" in n.attrs, ul)
    c.check("markup in findings is shown as text: both findings there",
            sorted(n.attrs["data-id"] for n in lis) == ["log.nvidia.xid", "workload.suspect_process"],
            [n.attrs for n in lis])
    c.check("... no element made of it (no img, no b)", not c.find(lambda n: n.tag in ("img", "b"), ul),
            [n.tag for n in c.find(lambda n: True, ul)])
    c.check("... its text literal", EVIL in ul.text(), ul.text()[:300])
    c.check("... and nothing ran", "data-pwned" not in c.body.attrs, c.body.attrs)


def proxy(argv):
    """/gs/X, /flaky/X, /down/X: the server's /X; the API answers 0.15 s late,
    under /flaky/ its first two status polls get 503, under /down/ 502."""
    up, failed = argv[1], [0]

    class H(BaseHTTPRequestHandler):
        def answer(self, code, ctype, body):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/phone.html":
                return self.answer(200, "text/html", PHONE)
            if self.path.startswith("/evil/api/v1/findings"):
                return self.answer(200, "application/json", json.dumps(EVIL_LIVE if "live" in self.path
                                                                       else EVIL_REPORT).encode())
            if self.path.startswith("/evil/"):
                self.path = "/gs/" + self.path[len("/evil/"):]
            m = re.match(r"/(gs|flaky|down)/(.*)", self.path)
            if not m:
                return self.answer(404, "text/plain", b"no\n")
            where, rest = m.groups()
            if rest.startswith("api/"):
                if where == "down":
                    return self.answer(502, "text/plain", b"down\n")
                if where == "flaky" and rest.startswith("api/v1/status") and failed[0] < 2:
                    failed[0] += 1
                    return self.answer(503, "text/plain", b"not yet\n")
                time.sleep(0.15)
            try:
                r = urllib.request.urlopen(up + rest, timeout=10)
                code, ctype, body = r.status, r.headers.get("Content-Type", ""), r.read()
            except urllib.error.HTTPError as e:
                code, ctype, body = e.code, e.headers.get("Content-Type", ""), e.read()
            except OSError as e:
                code, ctype, body = 502, "text/plain", str(e).encode()
            self.answer(code, ctype, body)

        def log_message(self, *a):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


{"first": first, "second": second, "phone": phone, "down": down, "wait": wait, "proxy": proxy,
 "evil": evil}[sys.argv[1]](sys.argv[1:])
EOF

# 1. the server, on the fake NVML, time 0 of the scenario now
epoch=$(date +%s)
: >"$tmp/serve.err"
env GPUSCOPE_NVML="$O/fakenvml/current/libnvidia-ml.so.1" GPUSCOPE_PROC_ROOT=tests/fixtures/proc \
	GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty GPUSCOPE_PASSWD=tests/fixtures/passwd \
	FAKE_NVML_SCENARIO=tests/scenarios/serve-web.scn FAKE_NVML_EPOCH="$epoch" \
	"$bin" serve --listen 127.0.0.1:0 -d 0.2 >"$tmp/serve.out" 2>"$tmp/serve.err" &
server=$!
pids="$pids $server"
port=""
i=0
while [ $i -lt 100 ] && [ -z "$port" ]; do
	port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9][0-9]*\)/.*|\1|p' "$tmp/serve.err")
	[ -n "$port" ] || sleep 0.1
	i=$((i + 1))
done
if [ -z "$port" ]; then
	not_ok "serve did not say where it listens" "$tmp/serve.err"
	echo "1..$n"
	exit 1
fi
ok "serve listens on 127.0.0.1:$port"
url=http://127.0.0.1:$port/
direct=$url # browse() sets url
python3 "$tmp/helper.py" proxy "$url" >"$tmp/proxy.port" 2>"$tmp/proxy.err" &
pids="$pids $!"
python3 "$tmp/helper.py" wait "$url" "$tmp/findings.json" >"$tmp/check" 2>&1
report "$tmp/check"
i=0
while [ $i -lt 50 ] && [ ! -s "$tmp/proxy.port" ]; do sleep 0.1; i=$((i + 1)); done
proxy=http://127.0.0.1:$(head -n 1 "$tmp/proxy.port")

# 2. the page straight from the server
if browse first "$url?interval=0.25" --window-size=1280,1600 && [ -s "$tmp/first.html" ]; then
	python3 "$tmp/helper.py" first "$tmp/first.html" "$epoch" "$tmp/findings.json" "$tmp/first.json" >"$tmp/check" 2>&1
	report "$tmp/check"
else
	not_ok "chromium did not render $url" "$tmp/first.err"
fi

# 3. behind a prefix, slowed down, two failed polls first; the desktop screenshot
sleep 2
if browse second "$proxy/flaky/?interval=0.25" --window-size=1280,1600 \
	--screenshot="$art/serve-web.png" && [ -s "$tmp/second.html" ] && [ -f "$tmp/first.json" ]; then
	python3 "$tmp/helper.py" second "$tmp/second.html" "$epoch" "$tmp/first.json" >"$tmp/check" 2>&1
	report "$tmp/check"
else
	not_ok "chromium did not render $proxy/flaky/ (or the first page failed)" "$tmp/second.err"
fi

# 4. a phone: the page in a 390x844 frame; the phone screenshot
if browse phone "$proxy/phone.html" --window-size=390,844 --screenshot="$art/serve-web-phone.png" &&
	[ -s "$tmp/phone.html" ]; then
	python3 "$tmp/helper.py" phone "$tmp/phone.html" >"$tmp/check" 2>&1
	report "$tmp/check"
else
	not_ok "chromium did not render $proxy/phone.html" "$tmp/phone.err"
fi

# 5. the API down
if browse down "$proxy/down/" --window-size=1280,800 && [ -s "$tmp/down.html" ]; then
	python3 "$tmp/helper.py" down "$tmp/down.html" >"$tmp/check" 2>&1
	report "$tmp/check"
else
	not_ok "chromium did not render $proxy/down/" "$tmp/down.err"
fi

# 6. findings whose texts hold markup (the proxy answers both findings endpoints)
if browse evil "$proxy/evil/" --window-size=1280,1600 && [ -s "$tmp/evil.html" ]; then
	python3 "$tmp/helper.py" evil "$tmp/evil.html" >"$tmp/check" 2>&1
	report "$tmp/check"
else
	not_ok "chromium did not render $proxy/evil/" "$tmp/evil.err"
fi

# 7. the live findings endpoint itself
python3 - "$direct" >"$tmp/check" 2>&1 <<'PY'
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "api/v1/findings/live", timeout=5))
ok = d.get("schema") == "gpuscope.findings/1" and set(d) == {"schema", "time", "samples", "worst", "findings"}
print(("PASS" if ok else "FAIL") + " /api/v1/findings/live is a gpuscope.findings/1 document: %s" % sorted(d))
ids = [(f["id"], f["gpu"], f["severity"]) for f in d["findings"]]
print(("PASS" if ("health.gpu.lost", 2, "error") in ids else "FAIL") + " ... naming GPU 2 lost: %s (time %s)" % (ids, d["time"]))
print(("PASS" if d["worst"] == "error" and d["samples"] >= 2 else "FAIL")
      + " ... worst error, over %s samples" % d["samples"])
print(("PASS" if all(i.split(".")[0] in ("health", "workload") for i, g, s in ids) else "FAIL")
      + " ... health and workload findings only")
PY
report "$tmp/check"

if kill -0 "$server" 2>/dev/null; then
	ok "serve still runs"
else
	not_ok "serve died" "$tmp/serve.err"
fi
echo "# screenshots: $art/serve-web.png, $art/serve-web-phone.png"
echo "# took $(($(date +%s) - start)) s"
echo "1..$n"
[ "$fail" -eq 0 ]
