#!/bin/sh
# The log corpus, scored: real excerpts from public issue threads and forums
# (tests/logs/corpus/<set>/, one per file, listed in the set's index.tsv with
# the cause the thread concluded; see tests/logs/corpus/README.md), each
# judged by 'gpuscope doctor --log FILE --json'. Only the findings about the
# log (ids log.*) count:
# - a positive row scores when a warning or error finding has an id of its
#   "expect" column; a healthy row ("healthy") scores when no finding is an
#   error;
# - an over-claim is a warning or error finding whose id is in neither
#   "expect" nor "also": printed and counted, per set.
# Prints the score of each set and of all ("# corpus nvidia: 52/60 = 86.7 %"),
# the misses with what was found, and TAP: per set, the index is well formed,
# doctor ran on every excerpt, the score is at least the set's floor in
# tests/logs/corpus/floor.tsv, and no healthy excerpt has an error.
# CORPUS_SET=NAME scores that set only; CORPUS_VERBOSE=1 prints every row.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
bin=$O/gpuscope
if [ ! -x "$bin" ] || ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP needs $bin and python3"
	exit 0
fi
# the machine's own set-up must not leak into the findings: a fixture tree
# and no NVML (--log judges the text alone; the set-up checks are not log.*
# anyway and are not counted)
exec env GPUSCOPE_PROC_ROOT=tests/fixtures/proc GPUSCOPE_SYSFS_ROOT=tests/fixtures/sys-empty \
	GPUSCOPE_PASSWD=tests/fixtures/passwd GPUSCOPE_NVML=/nonexistent/libnvidia-ml.so.1 TZ=UTC \
	python3 - "$bin" tests/logs/corpus "${CORPUS_SET:-}" "${CORPUS_VERBOSE:-0}" <<'EOF'
import json, os, subprocess, sys
sys.path.insert(0, "tests/logs")
import doctorlog  # noqa: E402

binary, top, only, verbose = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
COLS = ["file", "expect", "also", "cause", "source", "shape"]
RANK = {"error": 2, "warning": 1}


def ids_of(field):
    field = field.strip()
    if field in ("", "-"):
        return set()
    return {i.strip() for i in field.split(",") if i.strip()}


def read_floors():
    floors = {}
    path = os.path.join(top, "floor.tsv")
    if not os.path.exists(path):
        return floors
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        f = line.split("\t")
        if f[0] == "set":
            continue
        try:
            floors[f[0]] = float(f[1])
        except (IndexError, ValueError):
            print("# floor.tsv: bad line %r" % line)
    return floors


def read_index(setdir):
    """The rows of setdir/index.tsv, and the problems of the ones that are not well formed."""
    rows, bad = [], []
    path = os.path.join(setdir, "index.tsv")
    seen = set()
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip("\n").rstrip("\r")
            if not line or line.startswith("#"):
                continue
            f = line.split("\t")
            if f[0] == "file":
                if f != COLS:
                    bad.append("line %d: header is not %s" % (n, " ".join(COLS)))
                continue
            if len(f) != len(COLS):
                bad.append("line %d: %d columns, not %d" % (n, len(f), len(COLS)))
                continue
            row = dict(zip(COLS, f))
            if not os.path.isfile(os.path.join(setdir, row["file"])):
                bad.append("line %d: no file %s" % (n, row["file"]))
                continue
            if row["file"] in seen:
                bad.append("line %d: %s listed twice" % (n, row["file"]))
                continue
            seen.add(row["file"])
            if not ids_of(row["expect"]):
                bad.append("line %d: %s: empty expect" % (n, row["file"]))
                continue
            if not row["source"].strip() or row["source"].strip() == "-":
                bad.append("line %d: %s: no source" % (n, row["file"]))
            rows.append(row)
    listed = seen | {"index.tsv"}
    for name in sorted(os.listdir(setdir)):
        if name not in listed and not name.startswith("."):
            bad.append("%s is not in index.tsv" % name)
    return rows, bad


def judge(path):
    return doctorlog.judge(binary, path)


def shown(found):
    return ", ".join("%s(%s)" % (i, s) for i, s in found) or "nothing"


known = set()
try:
    p = subprocess.run([binary, "doctor", "--list"], capture_output=True, timeout=30)
    known = {l.split()[0] for l in p.stdout.decode("utf-8", "replace").splitlines() if l.strip()}
except Exception:
    pass

floors = read_floors()
sets = sorted(d for d in os.listdir(top)
              if os.path.isfile(os.path.join(top, d, "index.tsv")) and (not only or d == only))
tap = []
tot_score = tot_rows = tot_over = 0
for s in sets:
    setdir = os.path.join(top, s)
    rows, bad = read_index(setdir)
    for b in bad:
        print("# %s/index.tsv: %s" % (s, b))
    tap.append((not bad, "corpus %s: index.tsv well formed (%d rows)" % (s, len(rows))))
    score = over = 0
    failed_runs, healthy_err, unknown = [], [], set()
    for row in rows:
        expect, also = ids_of(row["expect"]), ids_of(row["also"])
        healthy = expect == {"healthy"}
        if known:
            unknown |= {i for i in (expect | also) if i != "healthy" and i not in known}
        found, problem = judge(os.path.join(setdir, row["file"]))
        name = "%s/%s" % (s, row["file"])
        if problem:
            failed_runs.append(name)
            print("# FAILED %s: %s" % (name, problem))
            continue
        loud = [(i, sev) for i, sev in found if sev in RANK]
        if healthy:
            errs = [(i, sev) for i, sev in loud if sev == "error"]
            hit = not errs
            if errs:
                healthy_err.append(name)
        else:
            hit = any(i in expect for i, _ in loud)
        extra = [(i, sev) for i, sev in loud if i not in expect and i not in also]
        score += hit
        over += len(extra)
        if not hit:
            print("# miss %s: expect %s; found %s  [%s]" %
                  (name, row["expect"], shown(found), row["cause"]))
        elif verbose:
            print("# hit  %s: %s" % (name, shown(found)))
        if extra:
            print("# over-claim %s: %s (expect %s, also %s)" %
                  (name, shown(extra), row["expect"], row["also"]))
    n = len(rows)
    pct = 100.0 * score / n if n else 0.0
    print("# corpus %s: %d/%d = %.1f %%, %d over-claims" % (s, score, n, pct, over))
    if unknown:
        print("# corpus %s: ids not in 'gpuscope doctor --list': %s" % (s, " ".join(sorted(unknown))))
    tot_score, tot_rows, tot_over = tot_score + score, tot_rows + n, tot_over + over
    tap.append((not failed_runs, "corpus %s: doctor --log read every excerpt (%d failed)" %
                (s, len(failed_runs))))
    floor = floors.get(s)
    if floor is None:
        tap.append((True, "corpus %s: %.1f %% (no floor in floor.tsv yet)" % (s, pct)))
    else:
        tap.append((pct >= floor, "corpus %s: %.1f %% >= floor %.1f %%" % (s, pct, floor)))
    tap.append((not healthy_err, "corpus %s: no healthy excerpt has an error (%s)" %
                (s, ", ".join(healthy_err) or "none has")))
if tot_rows:
    print("# corpus all: %d/%d = %.1f %%, %d over-claims" %
          (tot_score, tot_rows, 100.0 * tot_score / tot_rows, tot_over))
print("1..%d" % len(tap))
fail = 0
for k, (good, what) in enumerate(tap, 1):
    print("%s %d - %s" % ("ok" if good else "not ok", k, what))
    fail += not good
sys.exit(1 if fail else 0)
EOF
