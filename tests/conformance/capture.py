"""Read nvidia_gpu_exporter's nvidia-smi capture files.

A capture (shared/fixtures/real/nvidia-smi/*.txt, see the README there) is a
short header ("collected_at: 2026-07-14T08:12:38Z", ...) followed by one
section per command:

    ################################################################################
    # load :: query-gpu (csv, what the exporter parses)
    # $ nvidia-smi --query-gpu=timestamp,... --format=csv
    ################################################################################
    <output>

This module splits a capture into sections and parses the ones the
conformance tests need: the query-gpu and query-compute-apps CSV, the -q
tree (for what the CSV lacks), the --help-query-* field lists, and the
time zone the CSV timestamps were printed in. Standard library only.
"""

import datetime
import re

RULE = "#" * 80


class Section:
    def __init__(self, name, command, lines):
        self.name = name  # "load :: query-gpu (csv, what the exporter parses)"
        self.command = command  # "nvidia-smi --query-gpu=... --format=csv", or None
        self.lines = lines  # output lines, without their newlines

    @property
    def state(self):
        return self.name.split(" :: ", 1)[0]

    @property
    def title(self):
        return self.name.split(" :: ", 1)[1]


class Csv:
    """One --query-* CSV: the fields asked for, the header and the rows (lists of strings)."""

    def __init__(self, fields, header, rows):
        self.fields = fields
        self.header = header
        self.rows = rows

    def column(self, field):
        return self.fields.index(field) if field in self.fields else None

    def row_dict(self, i):
        return dict(zip(self.fields, self.rows[i]))


def split_csv_line(line):
    # nvidia-smi neither quotes nor escapes: values are joined by ", "
    return line.split(", ")


class Capture:
    def __init__(self, path):
        self.path = path
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        self.header = {}
        self.sections = {}
        self._parse(text.split("\n"))

    def _parse(self, lines):
        i = 0
        # header: "key:   value" lines before the first section
        while i < len(lines) and not self._section_at(lines, i):
            m = re.match(r"^([a-z_ /]+):\s+(.*)$", lines[i])
            if m:
                self.header[m.group(1).strip()] = m.group(2).strip()
            i += 1
        while i < len(lines):
            if not self._section_at(lines, i):
                i += 1
                continue
            name = lines[i + 1][2:].strip()
            j = i + 2
            command = None
            while j < len(lines) and lines[j] != RULE:
                if lines[j].startswith("# $ "):
                    command = lines[j][4:]
                j += 1
            j += 1
            body = []
            while j < len(lines) and not self._section_at(lines, j):
                body.append(lines[j])
                j += 1
            while body and not body[-1].strip():
                body.pop()
            self.sections[name] = Section(name, command, body)
            i = j

    @staticmethod
    def _section_at(lines, i):
        return (
            lines[i] == RULE
            and i + 1 < len(lines)
            and lines[i + 1].startswith("# ")
            and " :: " in lines[i + 1]
        )

    def section(self, state, title_prefix):
        for name, sec in self.sections.items():
            if sec.state == state and sec.title.startswith(title_prefix):
                return sec
        return None

    @property
    def states(self):
        return [s for s in ("idle", "load") if self.section(s, "query-gpu")]

    def _csv(self, state, title, option):
        sec = self.section(state, title)
        if sec is None:
            return None
        m = re.search(option + r"=(\S+)", sec.command or "")
        fields = m.group(1).split(",") if m else None
        lines = [l for l in sec.lines if l.strip()]
        if not lines:
            return None
        header = split_csv_line(lines[0])
        rows = [split_csv_line(l) for l in lines[1:]]
        if fields is None:
            fields = [h.split(" [")[0] for h in header]
        return Csv(fields, header, rows)

    def query_gpu(self, state):
        return self._csv(state, "query-gpu", "--query-gpu")

    def query_apps(self, state):
        return self._csv(state, "query-compute-apps", "--query-compute-apps")

    def help_fields(self, which="help-query-gpu"):
        """[[name, alias, ...], ...] from a --help-query-* section."""
        sec = self.section("capabilities", which)
        out = []
        if sec is None:
            return out
        for l in sec.lines:
            s = l.strip()
            if re.fullmatch(r'"[^"]+"( or "[^"]+")*', s):
                out.append(re.findall(r'"([^"]+)"', s))
        return out

    def version(self):
        """{"NVML version": "590.48", "CUDA Version": "13.1", ...} from nvidia-smi --version."""
        sec = self.section("capabilities", "version")
        out = {}
        for l in sec.lines if sec else []:
            if " : " in l or ":" in l:
                k, _, v = l.partition(":")
                out[k.strip()] = v.strip()
        return out

    def query_q(self, state):
        """The -q output of a state as a QTree, or None."""
        sec = self.section(state, "query (-q)")
        return QTree(sec.lines) if sec else None

    # --- time ---------------------------------------------------------------

    def collected_at(self):
        v = self.header.get("collected_at")
        if not v:
            return None
        try:
            return datetime.datetime.strptime(v, "%Y-%m-%dT%H:%M:%SZ").replace(
                tzinfo=datetime.timezone.utc
            )
        except ValueError:
            return None

    def utc_offset(self):
        """
        Offset of the capture's local time from UTC, in seconds, or None.

        The CSV timestamps are local time and the header's collected_at is UTC;
        the first query-gpu ran within seconds of collected_at, so their
        difference, rounded to a quarter hour, is the zone's offset.
        """
        at = self.collected_at()
        csv = self.query_gpu("idle") or self.query_gpu("load")
        if at is None or csv is None or "timestamp" not in csv.fields or not csv.rows:
            return None
        local = parse_timestamp(csv.rows[0][csv.column("timestamp")])
        if local is None:
            return None
        diff = (local.replace(tzinfo=datetime.timezone.utc) - at).total_seconds()
        offset = round(diff / 900) * 900
        if abs(diff - offset) > 300 or abs(offset) > 14 * 3600:
            return None
        return int(offset)


def parse_timestamp(text):
    """nvidia-smi's "2026/07/14 08:12:53.353" as a naive datetime, or None."""
    try:
        return datetime.datetime.strptime(text.strip(), "%Y/%m/%d %H:%M:%S.%f")
    except ValueError:
        return None


def epoch_of(text, offset):
    """Seconds since the epoch of a local nvidia-smi timestamp in a zone offset seconds east of UTC."""
    local = parse_timestamp(text)
    if local is None:
        return None
    utc = local.replace(tzinfo=datetime.timezone.utc) - datetime.timedelta(seconds=offset)
    return utc.timestamp()


def posix_tz(offset):
    """A POSIX TZ string for a fixed offset east of UTC ("UTC0", "XXX-2", "XXX-5:30")."""
    if offset == 0:
        return "UTC0"
    sign = "-" if offset > 0 else "+"  # POSIX counts west of UTC as positive
    a = abs(offset)
    hh, mm = a // 3600, (a % 3600) // 60
    return "XXX%s%d%s" % (sign, hh, ":%02d" % mm if mm else "")


class QTree:
    """
    nvidia-smi -q output: "Key : Value" lines nested by four-space indents.

    gpus is a list of dicts, one per "GPU <bus id>" block, mapping a path
    ("PCI/GPU Link Info/PCIe Generation/Max") to its value; procs[i] lists the
    processes of GPU i as dicts (pid, type, name, used memory, instance ids).
    top maps the keys before the first GPU ("CUDA Version").
    """

    def __init__(self, lines):
        self.top = {}
        self.gpus = []
        self.procs = []
        cur = None
        stack = []
        proc = None
        pending = {}
        for line in lines:
            if not line.strip() or line.startswith("="):
                continue
            indent = len(line) - len(line.lstrip(" "))
            level = indent // 4
            text = line.strip()
            m = re.match(r"^(.*?)\s+: ?(.*)$", text)
            if level == 0 and m is None and text.startswith("GPU "):
                cur = {}
                self.gpus.append(cur)
                self.procs.append([])
                stack = []
                proc = None
                continue
            if cur is None:
                if m:
                    self.top[m.group(1).strip()] = m.group(2).strip()
                continue
            key = (m.group(1) if m else text).strip()
            stack = stack[: max(level - 1, 0)]
            if m is None:
                stack.append(key)
                continue
            value = m.group(2).strip()
            if stack and stack[0] == "Processes":
                if key in ("GPU instance ID", "Compute instance ID"):
                    pending[key] = value
                elif key == "Process ID":
                    proc = {"pid": value}
                    proc.update(pending)
                    pending = {}
                    self.procs[-1].append(proc)
                elif proc is not None:
                    proc[key] = value
                continue
            cur["/".join(stack + [key])] = value
