#!/bin/sh
# The table of commands and options (src/cmd/cli.h, cli_table*.c), from which
# the completions and the man pages are made, held against the code both
# ways, so that neither can drift from the other:
#  (a) code -> table: every entry of the getopt_long() tables of src/cmd/*.c
#      is in the table for the command that parses it, with the same has-arg,
#      and so is every letter of its short options string (and back);
#  (b) table -> code: every option of the table is taken by its command
#      ('gpuscope CMD --opt=VALUE --help' does not answer "unknown option"),
#      every choice of a CLI_CHOICE option is (exit 0), and every option that
#      'gpuscope CMD --help' shows is in the table;
#  (c) every command of main.c's dispatch has an entry, and every entry a
#      dispatch. The table comes from the hidden 'gpuscope __cli-table'.
# Prints TAP; each failure says which command and option drifted.
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

BIN=$bin TMP=$tmp python3 - <<'EOF'
import concurrent.futures, glob, os, re, subprocess, sys

BIN, TMP = os.environ["BIN"], os.environ["TMP"]
n = 0
failed = 0


def tap(ok, what, why=()):
    global n, failed
    n += 1
    if not ok:
        failed += 1
    print(("ok %d - %s" if ok else "not ok %d - %s") % (n, what))
    for w in list(why)[:40]:
        print("# " + w)
    if len(why) > 40:
        print("# ... and %d more" % (len(why) - 40))


def run(args, timeout=15):
    try:
        p = subprocess.run([BIN] + args, stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=timeout, env=ENV)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return 124, "", "(timed out after %d s)" % timeout


# no GPU is read: every run below stops at --help or at a bad option
ENV = dict(os.environ, GPUSCOPE_NVML="/nonexistent/libnvidia-ml.so.1",
           GPUSCOPE_QUEUE_SOCKET=os.path.join(TMP, "no.sock"), NO_COLOR="1",
           XDG_CONFIG_HOME=TMP, XDG_DATA_HOME=TMP, HOME=TMP)
open(os.path.join(TMP, "file"), "w").close()

# --- the table ---
rc, out, err = run(["__cli-table"])
tap(rc == 0 and out, "gpuscope __cli-table prints the table", err.splitlines())
if rc != 0:
    print("1..%d" % n)
    sys.exit(1)
cmds = {}      # name -> {"operand", "hidden", "choices"}
opts = {}      # command -> {long: row}
shorts = {}    # command -> {letter: long}
for line in out.splitlines():
    f = line.split("\t")
    if len(f) != 8:
        tap(False, "__cli-table line has 8 fields", [repr(line)])
        continue
    c, lng, sh, arg, val, lst, hid, ch = f
    if lng == "":
        cmds[c] = {"operand": val, "hidden": hid == "hidden",
                   "choices": [] if ch == "-" else ch.split(",")}
        opts.setdefault(c, {})
        shorts.setdefault(c, {})
        continue
    row = {"long": lng, "short": "" if sh == "-" else sh, "arg": arg, "value": val,
           "list": lst == "list", "hidden": hid == "hidden",
           "choices": [] if ch == "-" else ch.split(",")}
    opts.setdefault(c, {})[lng] = row
    if row["short"]:
        shorts.setdefault(c, {})[row["short"]] = lng
glob_opts, glob_shorts = opts.get("*", {}), shorts.get("*", {})
top = sorted(c for c in cmds if " " not in c and not cmds[c]["hidden"])


def family(c):
    """c and its subcommands ("queue": "queue submit", ...)."""
    return [x for x in cmds if x == c or x.startswith(c + " ")]


def lookup(c, lng):
    return opts.get(c, {}).get(lng) or glob_opts.get(lng)


def lookup_short(c, s):
    if s in shorts.get(c, {}):
        return opts[c][shorts[c][s]]
    if s in glob_shorts:
        return glob_opts[glob_shorts[s]]
    return None


# --- (c) main.c's dispatch against the table ---
main_c = open("src/cmd/main.c").read()
dispatch = set(re.findall(r'!strcmp\(args\[1\], "([^"]+)"\)', main_c))
dispatch = {d for d in dispatch if not d.startswith("__")}
why = ["'%s' is dispatched in main.c but has no entry in the table" % d
       for d in sorted(dispatch - set(top))]
why += ["'%s' is in the table but main.c does not dispatch it" % c
        for c in sorted(set(top) - dispatch)]
tap(not why, "(c) the commands of main.c's dispatch are the table's top-level commands", why)
why = []
for o in glob_opts.values():
    if '"--%s"' % o["long"] not in main_c and '"--%s=' % o["long"] not in main_c:
        why.append("global option --%s is in the table, main.c does not take it" % o["long"])
    if o["short"] and '"-%s"' % o["short"] not in main_c:
        why.append("global option -%s is in the table, main.c does not take it" % o["short"])
tap(not why, "(a) the global options of the table are main.c's", why)

# --- (a) the getopt_long() tables of src/cmd/*.c -> the table ---
# which command parses each file's tables ("*": the options every command takes)
FILE_CMD = {
    "status.c": "status", "query.c": "query", "top.c": "top", "watch.c": "watch",
    "record.c": "record", "doctor.c": "doctor", "serve.c": "serve", "fit.c": "fit",
    "specs.c": "specs", "bench.c": "bench matmul", "bench_suite.c": "bench",
    "burn.c": "burn", "queued.c": "queued", "queue.c": "queue", "listgpus.c": "-L",
    "completion.c": "completion", "manpage.c": "*", "cli_dump.c": "*",
}
HASARG = {"no_argument": "none", "required_argument": "required",
          "optional_argument": "optional"}
entry_re = re.compile(r'\{\s*"([^"]+)",\s*(no_argument|required_argument|optional_argument)\s*,')


def short_letters(s):
    """'":d:i:h"' -> {"d": "required", "i": "required", "h": "none"}"""
    res, i = {}, 0
    s = s.lstrip("+-:")
    while i < len(s):
        ch, i = s[i], i + 1
        kind = "none"
        if s[i:i + 2] == "::":
            kind, i = "optional", i + 2
        elif s[i:i + 1] == ":":
            kind, i = "required", i + 1
        res[ch] = kind
    return res


code_opts = {}  # command -> {long: has-arg} as the code has them
for path in sorted(glob.glob("src/cmd/*.c")):
    name = os.path.basename(path)
    src = open(path).read()
    tables = re.findall(r"struct option\s+\w+\[\]\s*=\s*\{(.*?)\n\s*\};", src, re.S)
    if not tables:
        continue
    cmd = FILE_CMD.get(name)
    if cmd is None:
        tap(False, "(a) %s: its getopt_long() table belongs to a command" % path,
            ["add %s to FILE_CMD in tests/cli/cli-table.sh" % name])
        continue
    # queue.c's one table serves every subcommand: an option there must be in
    # the table of at least one of them; each subcommand is probed in (b).
    # -L (listgpus.c) is an option of all commands, and the table has no
    # options of an option: its own -i and --timeout must be status's.
    cmdset = family(cmd) if cmd == "queue" else ["*", "status"] if cmd == "-L" else [cmd]
    why = []
    if cmd not in ("*", "-L") and cmd not in cmds:
        why.append("%s has no entry in the table" % cmd)
    for t in tables:
        for lng, arg in entry_re.findall(t):
            arg = HASARG[arg]
            code_opts.setdefault(cmd, {})[lng] = arg
            rows = [r for r in (lookup(c, lng) for c in cmdset) if r]
            if not rows:
                why.append("%s: --%s (%s) is in %s, not in the table" % (cmd, lng, arg, name))
            elif not any(r["arg"] == arg for r in rows):
                why.append("%s: --%s is %s in %s, %s in the table"
                           % (cmd, lng, arg, name, rows[0]["arg"]))
    # the short options strings of getopt_long() (queue.c: the strings of "shorts = ...")
    strs = re.findall(r'getopt_long\(\s*\w+\s*,\s*\w+\s*,\s*"([^"]*)"', src)
    for m in re.finditer(r"\bshorts\s*=([^;]*);", src):
        strs += re.findall(r'"([+:][^"]*)"', m.group(1))
    seen = {}
    for s in strs:
        for ch, kind in short_letters(s).items():
            seen[ch] = kind
            rows = [r for r in (lookup_short(c, ch) for c in cmdset) if r]
            if not rows:
                why.append("%s: -%s is in the short options \"%s\" of %s, not in the table"
                           % (cmd, ch, s, name))
            elif not any(r["arg"] == kind for r in rows):
                why.append("%s: -%s is %s in \"%s\" of %s, %s in the table"
                           % (cmd, ch, kind, s, name, rows[0]["arg"]))
    # back: the table's short letters and long names are the code's
    if cmd not in ("*", "-L") and strs:
        for c in cmdset:
            for ch, lng in shorts.get(c, {}).items():
                if ch not in seen:
                    why.append("%s: -%s (--%s) is in the table, not in the short options of %s"
                               % (c, ch, lng, name))
            for lng, r in opts.get(c, {}).items():
                if lng not in code_opts.get(cmd, {}):
                    why.append("%s: --%s is in the table, not in the getopt_long() table of %s"
                               % (c, lng, name))
    tap(not why, "(a) %s: its getopt_long() options are the table's for %s" % (path, cmd), why)

# replay parses its three options by hand: is_replay_opt(a, "--speed", ...)
src = open("src/cmd/replay.c").read()
code = set(re.findall(r'is_replay_opt\(\s*a\s*,\s*"--([^"]+)"', src))
why = ["replay: --%s is parsed by replay.c, not in the table" % o
       for o in sorted(code - set(opts.get("replay", {})))]
why += ["replay: --%s is in the table, replay.c does not parse it" % o
        for o in sorted(set(opts.get("replay", {})) - code)]
why += ["replay: --%s takes a value in replay.c, not in the table" % o
        for o in sorted(code & set(opts.get("replay", {})))
        if opts["replay"][o]["arg"] != "required"]
tap(code and not why, "(a) src/cmd/replay.c: its options are the table's for replay", why)

# --- (b) the table -> the code, by running each command ---
VALUE = {"string": "x", "number": "1", "seconds": "1", "size": "64M", "time": "-10m",
         "file": os.path.join(TMP, "file"), "dir": TMP, "gpu": "0", "field-gpu": "index",
         "field-app": "pid", "doctor-id": "health", "model": "7b", "spec-gpu": "h100",
         "bench-test": "stream", "user": "root", "addr": "127.0.0.1:0", "command": "true",
         "job": "1", "subcommand": "x"}
COMPLAINT = re.compile(r"unknown option|unrecognized option|does not take|takes no option|"
                       r"is not a gpuscope command|not an option", re.I)


def value_of(r):
    if r["value"] == "choice":
        return r["choices"][0] if r["choices"] else "x"
    return VALUE.get(r["value"], "x")


def probe(c, args):
    """Run 'gpuscope C ARGS --help'; the complaint about an option, or None."""
    rc, out, err = run(c.split() + args + ["--help"])
    m = COMPLAINT.search(err)
    if m or rc == 124:
        return "'gpuscope %s %s --help' answered %d: %s" % (
            c, " ".join(args), rc, (err.strip().splitlines() or ["?"])[0])
    return None


def help_options(text):
    """The options a --help text names, less those of quoted other commands."""
    def drop(m):
        w = m.group(1).split()
        return " " if w and (w[0] == "gpuscope" or w[0] in top) else m.group(0)
    text = re.sub(r"'([^'\n]*)'", drop, text)
    longs = set(re.findall(r"(?<![\w-])--([a-zA-Z][a-zA-Z0-9.-]*[a-zA-Z0-9])", text))
    # a short option where options are listed: "  -d, --interval", "[-d SEC]",
    # "| -L", "-u, --user" (not "journalctl's -o" in a sentence)
    shs = set(re.findall(r"(?:^[ \t]*|\[|\|[ \t]?)-([a-zA-Z])(?![\w-])", text, re.M))
    shs |= set(re.findall(r"(?<![\w-])-([a-zA-Z]), --", text))
    return longs, shs


def check_command(c):
    why = []
    for lng, r in sorted(opts[c].items()):
        if r["arg"] == "none":
            forms = [["--" + lng]] + ([["-" + r["short"]]] if r["short"] else [])
        elif r["arg"] == "optional":
            v = value_of(r)
            forms = [["--%s=%s" % (lng, v)]] + ([["-" + r["short"] + v]] if r["short"] else [])
        else:
            v = value_of(r)
            forms = [["--%s=%s" % (lng, v)]] + ([["-" + r["short"], v]] if r["short"] else [])
        for f in forms:
            w = probe(c, f)
            if w:
                why.append("%s: %s is in the table, not taken: %s" % (c, f[0], w))
        # each choice is a value the command takes: with --help after it, exit 0
        if r["value"] == "choice" and r["arg"] != "none":
            for ch in r["choices"]:
                v = ch if not r["list"] or ch == r["choices"][0] else r["choices"][0] + "," + ch
                rc, out, err = run(c.split() + ["--%s=%s" % (lng, v), "--help"])
                if rc != 0:
                    why.append("%s: --%s=%s (a choice of the table) answered %d: %s" % (
                        c, lng, v, rc, (err.strip().splitlines() or ["?"])[0]))
    # the operand's choices: subcommands, a choice, or (replay) the command after FILE
    for ch in cmds[c]["choices"]:
        op = cmds[c]["operand"]
        if op == "subcommand":
            rc, out, err = run(c.split() + [ch, "--help"])
            bad = rc != 0
        elif op == "choice":
            rc, out, err = run(c.split() + [ch])
            bad = rc != 0
        else:
            rc, out, err = run(c.split() + [os.path.join(TMP, "none.rec"), ch, "--help"])
            bad = bool(COMPLAINT.search(err)) or "cannot replay" in err
        if bad or rc == 124:
            why.append("%s: operand '%s' (a choice of the table) answered %d: %s" % (
                c, ch, rc, (err.strip().splitlines() or ["?"])[0]))
    # what --help shows is in the table (a command's page covers its subcommands)
    rc, out, err = run(c.split() + ["--help"])
    if rc != 0:
        why.append("%s: 'gpuscope %s --help' answered %d: %s" % (
            c, c, rc, (err.strip().splitlines() or ["?"])[0]))
    longs, shs = help_options(out)
    fam = family(c)
    for lng in sorted(longs):
        if not any(lookup(x, lng) for x in fam):
            why.append("%s: --%s is in 'gpuscope %s --help', not in the table" % (c, lng, c))
    for s in sorted(shs):
        if not any(lookup_short(x, s) for x in fam):
            why.append("%s: -%s is in 'gpuscope %s --help', not in the table" % (c, s, c))
    return why


# each command's runs are independent: four at a time
pool = concurrent.futures.ThreadPoolExecutor(max_workers=4)
shown = [c for c in sorted(cmds) if not cmds[c]["hidden"] and c != "*"]
for c, why in zip(shown, pool.map(check_command, shown)):
    tap(not why, "(b) %s: the table's options are taken, and its --help's are the table's" % c,
        why)

# gpuscope --help names options of every command: each is one of the table's
rc, out, err = run(["--help"])
longs, shs = help_options(out.replace("'", " "))
why = ["--%s is in 'gpuscope --help', in no command's table" % o for o in sorted(longs)
       if not any(lookup(c, o) for c in cmds)]
why += ["-%s is in 'gpuscope --help', in no command's table" % o for o in sorted(shs)
        if not any(lookup_short(c, o) for c in cmds)]
tap(rc == 0 and not why, "(b) the options of 'gpuscope --help' are the table's", why)

# queue's subcommands share one getopt table: which of its options each takes
# (it answers "takes no option" for the others) is what its table entry lists
qsubs = [c for c in cmds if c.startswith("queue ")]
def check_queue_sub(c):
    why = []
    for lng, arg in sorted(code_opts["queue"].items()):
        r = next((x for x in (lookup(q, lng) for q in family("queue")) if x), None)
        f = ["--" + lng] if arg == "none" else ["--%s=%s" % (lng, value_of(r) if r else "1")]
        rc, out, err = run(c.split() + f + ["--help"])
        taken = not COMPLAINT.search(err)
        listed = lookup(c, lng) is not None or lookup("queue", lng) is not None
        if taken and not listed:
            why.append("%s takes --%s, its table entry does not list it" % (c, lng))
        elif listed and not taken:
            why.append("%s: --%s is in the table, not taken: %s"
                       % (c, lng, (err.strip().splitlines() or ["?"])[0]))
    return why


if "queue" in code_opts and qsubs:
    why = sum(pool.map(check_queue_sub, sorted(qsubs)), [])
    tap(not why, "(a) queue: each subcommand's options of queue.c are its table entry's", why)

print("1..%d" % n)
sys.exit(1 if failed else 0)
EOF
