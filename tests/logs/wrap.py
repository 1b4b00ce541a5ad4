#!/usr/bin/env python3
"""Re-wrap a log excerpt in every shape a log is pasted in.

    wrap.py --list              the shapes' names, one a line
    wrap.py IN OUTDIR           OUTDIR/<shape>.log for every shape of IN

Each line of IN is kept as it is (with whatever prefix it already has) and
wrapped in the shape's own prefix: the journal's output formats and host
tags, syslog and rsyslog, kmsg records, kubectl, CRI, docker and docker
compose prefixes, Go's klog, colour escapes, Markdown quotes and code
fences, indentation, CRLF; the
journal's JSON export (json, json-pretty, json-seq); gzip; an
nvidia-bug-report log, whose kernel lines are given twice (the kernel-log
scan, then dmesg) as the real report does. `gpuscope doctor --log` must
find the same (id, severity) set in each as in IN (tests/cli/log-shapes.sh).
The times are made up: 2026-11-30 10:00:00 UTC, a millisecond a line.
"""
import gzip
import json
import os
import sys
import time

BASE = 1796032800  # 2026-11-30 10:00:00 UTC
HOST = "gpu-node-7"


def stamp(i):
    return BASE + i / 1000.0


def iso(i, sep="T", frac=6, zone="+0000"):
    t = stamp(i)
    s = time.strftime("%Y-%m-%d" + sep + "%H:%M:%S", time.gmtime(int(t)))
    if frac:
        s += ".%0*d" % (frac, round((t - int(t)) * 10**frac))
    return s + zone


def syslog(i, precise=False):
    t = stamp(i)
    s = time.strftime("%b %e %H:%M:%S", time.gmtime(int(t)))
    if precise:
        s += ".%06d" % round((t - int(t)) * 1e6)
    return s


def per_line(fmt):
    def wrap(lines):
        return "".join(fmt(i, l) + "\n" for i, l in enumerate(lines))

    return wrap


def fenced(lines):
    return "```text\n" + "".join(l + "\n" for l in lines) + "```\n"


def journal_json(style):
    def wrap(lines):
        out = []
        for i, l in enumerate(lines):
            rec = {
                "__REALTIME_TIMESTAMP": str(int(stamp(i) * 1e6)),
                "_HOSTNAME": HOST,
                "_TRANSPORT": "kernel",
                "SYSLOG_IDENTIFIER": "kernel",
                "PRIORITY": "3",
            }
            try:
                l.encode("utf-8")
                rec["MESSAGE"] = l
            except UnicodeEncodeError:
                rec["MESSAGE"] = list(l.encode("utf-8", "surrogateescape"))
            if style == "pretty":
                out.append(json.dumps(rec, indent=8) + "\n")
            elif style == "seq":
                out.append("\x1e" + json.dumps(rec) + "\n")
            else:
                out.append(json.dumps(rec) + "\n")
        return "".join(out)

    return wrap


def bug_report(lines):
    sep = "_" * 44 + "\n\n"
    head = (
        "Start of NVIDIA bug report log file.  Please include this file, along\n"
        "with a detailed description of your problem, when reporting a graphics\n"
        "driver bug via the NVIDIA Linux forum.\n\n"
        "nvidia-bug-report.sh Version: 34000000\n\n"
    )
    scan = "Scanning kernel log files for NVIDIA kernel messages:\n\n  journalctl -b -0:\n"
    scan += "".join("%s %s kernel: %s\n" % (syslog(i), HOST, l) for i, l in enumerate(lines))
    b64 = 'base64 "/var/log/nvidia-installer.log"\n\nU3RhcnQgb2YgTlZJRElBIGluc3RhbGw=\nTlZSTTogWGlkIDc5\n\n'
    dmesg = "dmesg:\n\n" + "".join(l + "\n" for l in lines)
    return head + sep + "*** /proc/version\n\nLinux version 6.8.0\n\n" + sep + scan + "\n" + sep + b64 + sep + dmesg


SHAPES = {
    "journal-short": per_line(lambda i, l: "%s %s kernel: %s" % (syslog(i), HOST, l)),
    "journal-short-iso": per_line(lambda i, l: "%s %s kernel: %s" % (iso(i, frac=0), HOST, l)),
    "journal-short-iso-precise": per_line(lambda i, l: "%s %s kernel: %s" % (iso(i), HOST, l)),
    "journal-short-precise": per_line(lambda i, l: "%s %s kernel: %s" % (syslog(i, True), HOST, l)),
    "journal-short-full": per_line(
        lambda i, l: "%s %s kernel: %s"
        % (time.strftime("%a %Y-%m-%d %H:%M:%S UTC", time.gmtime(int(stamp(i)))), HOST, l)
    ),
    "journal-short-monotonic": per_line(lambda i, l: "[%12.6f] %s kernel: %s" % (12 + i / 1000.0, HOST, l)),
    "journal-short-unix": per_line(lambda i, l: "%.6f %s kernel: %s" % (stamp(i), HOST, l)),
    "journal-json": journal_json("json"),
    "journal-json-pretty": journal_json("pretty"),
    "journal-json-seq": journal_json("seq"),
    "grep-rn-syslog": per_line(lambda i, l: "/var/log/kern.log:%d:%s %s kernel: %s" % (i + 1, syslog(i), HOST, l)),
    "syslog-priority": per_line(lambda i, l: "<3>%s %s kernel: %s" % (syslog(i), HOST, l)),
    "rsyslog-rfc5424": per_line(lambda i, l: "<3>1 %s %s kernel - - - %s" % (iso(i, zone="+00:00"), HOST, l)),
    "kmsg": per_line(lambda i, l: "3,%d,%d,-;%s" % (i, 12000000 + i * 1000, l)),
    "dmesg-x": per_line(lambda i, l: "kern  :err   : %s" % l),
    "dmesg-delta": per_line(lambda i, l: "[  +0.%06d] %s" % (1000 * (i % 999), l)),
    "cjk-syslog": per_line(
        lambda i, l: "%d\u6708 %s %s kernel: %s"
        % (time.gmtime(int(stamp(i))).tm_mon, time.strftime("%e %H:%M:%S", time.gmtime(int(stamp(i)))), HOST, l)
    ),
    "absl-stamp": per_line(lambda i, l: "%s: %s" % (iso(i, sep=" ", zone=""), l)),
    "talos-kmsg": per_line(lambda i, l: "kern:     err: [%sZ]: %s" % (iso(i, frac=9, zone=""), l)),
    "kubectl-timestamps": per_line(lambda i, l: "%sZ %s" % (iso(i, frac=9, zone=""), l)),
    "kubectl-prefix": per_line(lambda i, l: "[pod/trainer-7d9f/main] %s" % l),
    "kubectl-prefix-timestamps": per_line(
        lambda i, l: "[pod/trainer-7d9f/main] %sZ %s" % (iso(i, frac=9, zone=""), l)
    ),
    "cri": per_line(lambda i, l: "%sZ stderr F %s" % (iso(i, frac=9, zone=""), l)),
    "docker-compose": per_line(lambda i, l: "trainer-1  | %s" % l),
    "go-klog": per_line(
        lambda i, l: "E%s%06d       1 main.go:%d] %s"
        % (time.strftime("%m%d %H:%M:%S.", time.gmtime(int(stamp(i)))), (i * 1000) % 1000000, 100 + i, l)
    ),
    "ansi-colour": per_line(lambda i, l: "\x1b[32m[%12.6f]\x1b[0m \x1b[1m%s\x1b[0m" % (12 + i / 1000.0, l)),
    "markdown-quote": per_line(lambda i, l: "> %s" % l),
    "markdown-nested-quote": per_line(lambda i, l: "> > %s" % l),
    "markdown-fence": fenced,
    "indented": per_line(lambda i, l: "    %s" % l),
    "crlf": per_line(lambda i, l: l + "\r"),
    "quoted-fenced-journal": lambda lines: "".join(
        "> " + x + "\n" for x in fenced(["%s %s kernel: %s" % (syslog(i), HOST, l) for i, l in enumerate(lines)]).splitlines()
    ),
    "bug-report": bug_report,
}
GZIPPED = {"bug-report.gz": "bug-report", "journal-json.gz": "journal-json"}


def main(argv):
    if len(argv) == 2 and argv[1] == "--list":
        for name in list(SHAPES) + list(GZIPPED):
            print(name)
        return 0
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1], "rb") as f:
        text = f.read().decode("utf-8", "surrogateescape")
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    os.makedirs(argv[2], exist_ok=True)
    for name, wrap in SHAPES.items():
        with open(os.path.join(argv[2], name + ".log"), "wb") as f:
            f.write(wrap(lines).encode("utf-8", "surrogateescape"))
    for name, base in GZIPPED.items():
        data = SHAPES[base](lines).encode("utf-8", "surrogateescape")
        with open(os.path.join(argv[2], name), "wb") as f:
            f.write(gzip.compress(data, mtime=0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
