#!/usr/bin/env python3
"""Compare 'gpuscope query' with the nvidia-smi output of a capture.

usage:
  compare.py fields CAPTURE STATE HELP UNMAPPED NOTES
      Print the --query-gpu list to ask gpuscope for: every field of the
      capture's query-gpu CSV that gpuscope supports (HELP is the output of
      'gpuscope query --help-query-gpu') and the scenario expresses
      (UNMAPPED is capture2scn.py's --unmapped file), in the capture's order.
      Write to NOTES one "# " line per field left out, with the reason.
  compare.py gpu CAPTURE STATE FIELDS OUTPUT
      Compare gpuscope's --format=csv OUTPUT for FIELDS with the capture's
      CSV, field by field; print "# " lines for each difference and exit 1
      if there is any.
  compare.py apps CAPTURE STATE OUTPUT [--no-timestamp]
      The same for --query-compute-apps with the capture's fields. Rows are
      matched by pid (nvidia-smi lists them in driver order, gpuscope in its
      own). A process_name holding a space is left out of the comparison:
      gpuscope's model keeps the command line joined by spaces, so the end
      of argv[0] cannot be found.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capture import Capture, split_csv_line  # noqa: E402


def read_help(path):
    """Names (main names and aliases) listed by --help-query-gpu."""
    names = set()
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            s = line.strip()
            if re.fullmatch(r'"[^"]+"( or "[^"]+")*', s):
                names.update(re.findall(r'"([^"]+)"', s))
    return names


def read_unmapped(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            field, _, why = line.rstrip("\n").partition("\t")
            if field:
                out[field] = why
    return out


def read_output(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = [l.rstrip("\n") for l in f if l.strip()]
    if not lines:
        return None, []
    return split_csv_line(lines[0]), [split_csv_line(l) for l in lines[1:]]


def cmd_fields(cap_path, state, help_path, unmapped_path, notes_path):
    cap = Capture(cap_path)
    csv = cap.query_gpu(state)
    supported = read_help(help_path)
    unmapped = read_unmapped(unmapped_path)
    want, unsupported, notes, seen = [], [], [], set()
    for field in csv.fields:
        if field in seen:
            continue
        seen.add(field)
        if field not in supported:
            unsupported.append(field)
        elif field in unmapped:
            notes.append("# left out %s: not expressible in a scenario: %s" % (field, unmapped[field]))
        else:
            want.append(field)
    if unsupported:
        notes.append("# left out, not supported by gpuscope (%d): %s" % (len(unsupported), ", ".join(unsupported)))
    with open(notes_path, "w", encoding="utf-8") as f:
        f.write("\n".join(notes) + ("\n" if notes else ""))
    print(",".join(want))
    return 0


def compare_table(exp_header, exp_rows, out_path, key=None, skip=None):
    """
    Compare expected (header, rows) with gpuscope's output. key: index of the
    column that pairs rows (None: in order); skip(row, col): leave a cell out.
    Returns the list of differences.
    """
    header, rows = read_output(out_path)
    diffs = []
    if header is None:
        return ["gpuscope printed nothing"]
    if header != exp_header:
        for i in range(max(len(header), len(exp_header))):
            a = exp_header[i] if i < len(exp_header) else "(none)"
            b = header[i] if i < len(header) else "(none)"
            if a != b:
                diffs.append("header column %d: nvidia-smi '%s', gpuscope '%s'" % (i + 1, a, b))
        return diffs
    if key is None:
        pairs = list(zip(exp_rows, rows))
        if len(rows) != len(exp_rows):
            diffs.append("nvidia-smi printed %d rows, gpuscope %d" % (len(exp_rows), len(rows)))
    else:
        got = {r[key]: r for r in rows if len(r) > key}
        exp = {r[key]: r for r in exp_rows if len(r) > key}
        for k in sorted(set(exp) - set(got)):
            diffs.append("row %s: printed by nvidia-smi only" % k)
        for k in sorted(set(got) - set(exp)):
            diffs.append("row %s: printed by gpuscope only" % k)
        pairs = [(exp[k], got[k]) for k in exp if k in got]
    for n, (e, g) in enumerate(pairs):
        label = e[key] if key is not None else str(n)
        if len(g) != len(e):
            diffs.append("row %s: %d values from gpuscope, %d expected" % (label, len(g), len(e)))
            continue
        for c, (a, b) in enumerate(zip(e, g)):
            if a == b or (skip and skip(e, c)):
                continue
            diffs.append("row %s, %s: nvidia-smi '%s', gpuscope '%s'" % (label, exp_header[c], a, b))
    return diffs


def cmd_gpu(cap_path, state, fields, out_path):
    csv = Capture(cap_path).query_gpu(state)
    cols = [csv.column(f) for f in fields.split(",") if f]
    header = [csv.header[c] for c in cols]
    rows = [[r[c] for c in cols] for r in csv.rows]
    diffs = compare_table(header, rows, out_path)
    for d in diffs:
        print("#   " + d)
    return 1 if diffs else 0


def cmd_apps(cap_path, state, out_path, no_timestamp):
    csv = Capture(cap_path).query_apps(state)
    if csv is None:
        print("#   the capture has no query-compute-apps CSV")
        return 1
    cols = [i for i, f in enumerate(csv.fields) if not (no_timestamp and f == "timestamp")]
    header = [csv.header[c] for c in cols]
    rows = [[r[c] for c in cols] for r in csv.rows]
    fields = [csv.fields[c] for c in cols]
    key = fields.index("pid") if "pid" in fields else None
    name_col = fields.index("process_name") if "process_name" in fields else None
    spaced = [r for r in rows if name_col is not None and " " in r[name_col]]

    def skip(row, col):
        return col == name_col and " " in row[col]

    diffs = compare_table(header, rows, out_path, key=key, skip=skip)
    for r in spaced:
        print("# process_name of pid %s not compared: '%s' holds a space" % (r[key] if key is not None else "?",
                                                                           r[name_col]))
    for d in diffs:
        print("#   " + d)
    return 1 if diffs else 0


def main(argv):
    if len(argv) >= 6 and argv[0] == "fields":
        return cmd_fields(*argv[1:6])
    if len(argv) == 5 and argv[0] == "gpu":
        return cmd_gpu(*argv[1:5])
    if len(argv) in (4, 5) and argv[0] == "apps":
        return cmd_apps(argv[1], argv[2], argv[3], "--no-timestamp" in argv[4:])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
