#!/usr/bin/env python3
"""Check capture2scn.py on every capture, without gpuscope or the fake.

usage: t_capture2scn.py [CAPTURE_DIR]   (default: ../shared/fixtures/real/nvidia-smi
                                          from the repository root)

For each capture and state, prints TAP lines checking that the scenario:
  - uses only sections and keys that docs/scenario-format.md documents, with
    values of the documented shape;
  - carries every query-gpu value that has a key, converted to NVML's units
    (MiB -> bytes, W -> mW, "38 %" -> 38, Enabled -> 1, P2 -> 2, hex as is),
    and leaves out every [N/A];
  - accounts for every other CSV field: derived by the fake from other keys
    (and agreeing with them), or listed as not expressible with a reason;
  - holds each compute app of the query-compute-apps CSV with its memory and
    name, and that the /proc tree gives each process its command path;
  - sets a clock and time zone that print the CSV's timestamps back.
The expectations are computed here again, not taken from capture2scn.py.
"""

import datetime
import os
import re
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import capture2scn  # noqa: E402
from capture import Capture  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(here))
MIB = 1048576
NA = ("[N/A]", "N/A", "[Not Supported]")

n = 0
failed = 0


def ok(cond, what, *diag):
    global n, failed
    n += 1
    print("%sok %d - %s" % ("" if cond else "not ", n, what))
    if not cond:
        failed += 1
        for d in diag:
            print("#   " + str(d))
    return cond


def doc_keys():
    """{section: set(keys)} from the tables of docs/scenario-format.md."""
    keys = {"system": set(), "gpu": set(), "process": set()}
    section = None
    with open(os.path.join(ROOT, "docs", "scenario-format.md"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^## `\[(\w+)", line)
            if m:
                section = m.group(1)
                continue
            if line.startswith("## "):
                section = None
            if section in keys and line.startswith("| `"):
                first = line.split("|")[1]
                keys[section].update(re.findall(r"`([a-z0-9_]+)`", first))
    # faults may appear in [system] and [gpu]
    keys["system"].update(("fail", "delay"))
    keys["gpu"].update(("fail", "delay"))
    return keys


def parse_scenario(text):
    """[(section, id, {key: value})] of a scenario, values unquoted; raises ValueError."""
    out = []
    for no, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        m = re.fullmatch(r"\[(system|gpu|process)(?: (\d+))?\]", line)
        if m:
            out.append((m.group(1), m.group(2), {}))
            continue
        m = re.fullmatch(r"([a-z0-9_]+)\s*=\s*(.*)", line)
        if not m or not out:
            raise ValueError("line %d: %r" % (no, raw))
        key, value = m.group(1), m.group(2).strip()
        if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
            value = value[1:-1]
        if key in out[-1][2]:
            raise ValueError("line %d: %s repeats" % (no, key))
        out[-1][2][key] = value
    return out


STRING_KEYS = {"name", "uuid", "serial", "vbios", "inforom_image", "board_part_number", "pci_bus_id",
               "compute_capability", "driver_version", "nvml_version", "type"}


def value_shape_ok(key, value):
    if key in STRING_KEYS:
        return True
    if value == "N/A":  # a documented value expression of every numeric key
        return True
    return re.fullmatch(r"(0x[0-9A-Fa-f]+|\d+(\.\d+)?)", value) is not None


def num(v):
    return int(v, 16) if v.lower().startswith("0x") else float(v)


# field -> (key, expected scenario value from the CSV text), computed independently
def expect(field, v):
    def unit(u):
        assert v.endswith(" " + u), v
        return v[: -len(u) - 1]

    direct = {
        "name": "name", "serial": "serial", "uuid": "uuid", "pci.bus_id": "pci_bus_id",
        "compute_cap": "compute_capability", "vbios_version": "vbios", "inforom.img": "inforom_image",
    }
    if field in direct:
        return direct[field], v
    if field.startswith("memory."):
        return "memory_" + field.split(".")[1], int(unit("MiB")) * MIB
    power = {"power.draw": "power_usage", "power.draw.instant": "power_instant",
             "power.draw.average": "power_average", "power.limit": "power_limit",
             "enforced.power.limit": "power_limit_enforced", "power.default_limit": "power_limit_default",
             "power.min_limit": "power_limit_min", "power.max_limit": "power_limit_max"}
    if field in power:
        return power[field], round(float(unit("W")) * 1000)
    if field.startswith("utilization."):
        sub = field.split(".")[1]
        return "util_" + sub, int(unit("%"))
    if field == "fan.speed":
        return "fan_speed", int(unit("%"))
    clocks = {"clocks.current.graphics": "clock_graphics", "clocks.current.sm": "clock_sm",
              "clocks.current.memory": "clock_mem", "clocks.current.video": "clock_video",
              "clocks.max.graphics": "max_clock_graphics", "clocks.max.sm": "max_clock_sm",
              "clocks.max.memory": "max_clock_mem"}
    if field in clocks:
        return clocks[field], int(unit("MHz"))
    ints = {"temperature.gpu": "temperature", "temperature.memory": "memory_temperature",
            "temperature.gpu.tlimit": "temp_margin", "pcie.link.gen.current": "pcie_gen",
            "pcie.link.gen.max": "pcie_gen_max", "pcie.link.gen.gpumax": "pcie_gen_gpu_max",
            "pcie.link.width.current": "pcie_width", "pcie.link.width.max": "pcie_width_max",
            "encoder.stats.sessionCount": "encoder_sessions", "encoder.stats.averageFps": "encoder_fps",
            "encoder.stats.averageLatency": "encoder_latency",
            "ecc.errors.corrected.volatile.total": "ecc_corrected_volatile",
            "ecc.errors.uncorrected.volatile.total": "ecc_uncorrected_volatile",
            "ecc.errors.corrected.aggregate.total": "ecc_corrected_aggregate",
            "ecc.errors.uncorrected.aggregate.total": "ecc_uncorrected_aggregate",
            "retired_pages.single_bit_ecc.count": "retired_sbe", "retired_pages.double_bit.count": "retired_dbe",
            "remapped_rows.correctable": "remapped_corr", "remapped_rows.uncorrectable": "remapped_uncorr"}
    if field in ints:
        return ints[field], int(v)
    flags = {"persistence_mode": "persistence_mode", "display_mode": "display_mode",
             "display_active": "display_active", "mig.mode.current": "mig_mode",
             "mig.mode.pending": "mig_mode_pending", "ecc.mode.current": "ecc_mode",
             "ecc.mode.pending": "ecc_mode_pending"}
    if field in flags:
        return flags[field], {"Enabled": 1, "Disabled": 0}[v]
    yesno = {"retired_pages.pending": "retired_pending", "remapped_rows.pending": "remapped_pending",
             "remapped_rows.failure": "remapped_failure"}
    if field in yesno:
        return yesno[field], {"Yes": 1, "No": 0}[v]
    if field == "pstate":
        return "pstate", int(v[1:])
    if field == "compute_mode":
        return "compute_mode", ["Default", "Exclusive_Thread", "Prohibited", "Exclusive_Process"].index(v)
    hexes = {"pci.device_id": "pci_device_id", "pci.sub_device_id": "pci_subsystem_id",
             "clocks_event_reasons.active": "clocks_event_reasons",
             "clocks_event_reasons.supported": "clocks_event_reasons_supported"}
    if field in hexes:
        return hexes[field], int(v, 16)
    return None


def same(got, want):
    if isinstance(want, str):
        return got == want
    try:
        return num(got) == want
    except ValueError:
        return False


def check(cap_path, state, keys):
    base = os.path.basename(cap_path)[:-4]
    what = "%s %s" % (base, state)
    cap = Capture(cap_path)
    csv = cap.query_gpu(state)
    _, res = capture2scn.convert(cap_path, state)
    text = capture2scn.scenario_text(cap_path, state, res)
    try:
        secs = parse_scenario(text)
    except ValueError as e:
        ok(False, what + ": the scenario parses", e)
        return
    ok(True, what + ": the scenario parses")

    bad = []
    for sec, _, kv in secs:
        for k, v in kv.items():
            if k not in keys[sec]:
                bad.append("[%s] %s is not a documented key" % (sec, k))
            elif not value_shape_ok(k, v):
                bad.append("[%s] %s = %s is not a documented value" % (sec, k, v))
    ok(not bad, what + ": only documented keys and value shapes", *bad)

    gpus = [kv for sec, _, kv in secs if sec == "gpu"]
    system = [kv for sec, _, kv in secs if sec == "system"]
    ok(len(system) == 1 and len(gpus) == len(csv.rows), what + ": one [system], one [gpu] per CSV row",
       "%d [system], %d [gpu], %d rows" % (len(system), len(gpus), len(csv.rows)))
    unmapped = dict(res.unmapped)
    bad, count = [], 0
    for i, row in enumerate(csv.rows[: len(gpus)]):
        g = gpus[i]
        for field, v in zip(csv.fields, row):
            e = None if v in NA or (v.startswith("[") and v.endswith("]")) else expect(field, v)
            if e is None:
                continue
            key, want = e
            count += 1
            if field in unmapped:
                # refused with a reason: not for want of a key, and its key must not lie
                if unmapped[field].startswith("no scenario key") and key in keys["gpu"]:
                    bad.append("%s: '%s', yet the format has %s" % (field, unmapped[field], key))
                if key in g and not same(g[key], want) and key not in ("power_usage",):
                    bad.append("%s: unmapped, yet %s = %s" % (field, key, g[key]))
                continue
            if key not in g:
                bad.append("%s = '%s': no %s in the scenario" % (field, v, key))
            elif not same(g[key], want):
                bad.append("%s = '%s': %s = %s, want %s" % (field, v, key, g[key], want))
        for field, v in zip(csv.fields, row):
            if v in NA:
                direct = capture2scn.GPU_KEYS.get(field)
                # N/A written out where absence would mean something else
                explicit = field == "power.draw.average" and g.get(direct[0] if direct else "") == "N/A"
                if direct and direct[0] in g and field not in unmapped and not explicit:
                    bad.append("%s is [N/A] but %s = %s" % (field, direct[0], g[direct[0]]))
    ok(not bad, what + ": %d CSV values carried over in NVML units, [N/A] left out (or written as N/A)" % count, *bad)

    # every field accounted for
    accounted = {f for (_, f) in res.mapped} | set(unmapped)
    missing = []
    for field in csv.fields:
        values = [r[csv.column(field)] for r in csv.rows]
        if field in accounted or all(v in NA for v in values) and field in capture2scn.GPU_KEYS:
            continue
        if all(v in NA for v in values) and field in capture2scn.DERIVED:
            continue
        missing.append(field)
    ok(not missing, what + ": every CSV field is mapped, [N/A], or listed with a reason", *missing)
    ok(all(why for _, why in res.unmapped), what + ": every unmapped field has a reason")

    # derived fields agree with what the fake will compute
    bad = []
    for i, row in enumerate(csv.rows[: len(gpus)]):
        r = dict(zip(csv.fields, row))
        g = gpus[i]
        for j, f in enumerate(("pci.domain", "pci.bus", "pci.device")):
            if (i, f) in res.mapped:
                parts = re.split(r"[:.]", g["pci_bus_id"])
                if int(parts[j], 16) != int(r[f], 16):
                    bad.append("%s %s vs bus id %s" % (f, r[f], g["pci_bus_id"]))
        for name, bit in capture2scn.REASON_BITS.items():
            f = "clocks_event_reasons." + name
            if (i, f) in res.mapped:
                active = int(g["clocks_event_reasons"], 16) & bit
                if ("Active" if active else "Not Active") != r[f]:
                    bad.append("%s is %s, mask %s" % (f, r[f], g["clocks_event_reasons"]))
    ok(not bad, what + ": derived fields agree with the keys they come from", *bad)

    # processes
    apps = cap.query_apps(state)
    procs = {(sid, kv.get("gpu")): kv for sec, sid, kv in secs if sec == "process"}
    bad = []
    for i in range(len(apps.rows) if apps else 0):
        a = apps.row_dict(i)
        kv = procs.get((a["pid"], "0"))
        if kv is None:
            bad.append("pid %s: no [process] section" % a["pid"])
            continue
        if kv.get("type") not in ("compute", "compute+graphics", "mps"):
            bad.append("pid %s: type %s is not listed as a compute app" % (a["pid"], kv.get("type")))
        mem = a["used_gpu_memory"]
        want = "N/A" if mem in NA else str(int(mem.split()[0]) * MIB)
        if kv.get("used_memory") != want:
            bad.append("pid %s: used_memory %s, want %s" % (a["pid"], kv.get("used_memory"), want))
        if kv.get("name") != a["process_name"]:
            bad.append("pid %s: name %s, want %s" % (a["pid"], kv.get("name"), a["process_name"]))
    for (pid, _), kv in procs.items():
        compute = kv.get("type") in ("compute", "compute+graphics", "mps")
        if compute and apps and pid not in [apps.row_dict(i)["pid"] for i in range(len(apps.rows))]:
            bad.append("pid %s is a compute process the CSV does not list" % pid)
    ok(not bad, what + ": %d compute apps, %d processes in all" % (len(apps.rows) if apps else 0, len(procs)),
       *bad)

    with tempfile.TemporaryDirectory() as tmp:
        capture2scn.write_proc_root(tmp, res)
        bad = []
        for p in res.procs:
            try:
                with open(os.path.join(tmp, p["pid"], "cmdline"), "rb") as f:
                    argv0 = f.read().split(b"\0")[0].decode()
                with open(os.path.join(tmp, p["pid"], "stat")) as f:
                    stat = f.read().split()
                if p["name"] and argv0 != p["name"]:
                    bad.append("pid %s: cmdline %s" % (p["pid"], argv0))
                if len(stat) < 52 or stat[0] != p["pid"]:
                    bad.append("pid %s: stat has %d fields" % (p["pid"], len(stat)))
            except OSError as e:
                bad.append("pid %s: %s" % (p["pid"], e))
        ok(not bad, what + ": /proc tree for the processes", *bad)

    # time: the clock and zone print the CSV's timestamp back
    ts = csv.rows[0][csv.column("timestamp")] if "timestamp" in csv.fields else None
    if res.tz is None:
        ok("timestamp" in unmapped, what + ": unknown time zone, timestamp listed as not expressible")
    else:
        m = re.fullmatch(r"(?:UTC0|XXX([+-])(\d+)(?::(\d+))?)", res.tz)
        off = 0
        if m and m.group(1):
            off = (int(m.group(2)) * 3600 + int(m.group(3) or 0) * 60) * (1 if m.group(1) == "-" else -1)
        local = datetime.datetime.fromtimestamp(res.gpu_clock, datetime.timezone(datetime.timedelta(seconds=off)))
        back = local.strftime("%Y/%m/%d %H:%M:%S.") + "%03d" % (local.microsecond // 1000)
        ok(m is not None and back == ts, what + ": clock %.3f in %s prints %s" % (res.gpu_clock, res.tz, ts),
           "got %s" % back)


def main(argv):
    capdir = argv[0] if argv else os.path.join(ROOT, "..", "shared", "fixtures", "real", "nvidia-smi")
    try:
        files = sorted(f for f in os.listdir(capdir) if f.endswith(".txt"))
    except OSError:
        files = []
    if not files:
        print("1..0 # SKIP no captures in %s" % capdir)
        return 0
    keys = doc_keys()
    ok(all(keys.values()) and "memory_total" in keys["gpu"] and "used_memory" in keys["process"],
       "docs/scenario-format.md lists the keys of [system], [gpu] and [process]", keys)
    for f in files:
        cap = Capture(os.path.join(capdir, f))
        for state in cap.states:
            check(os.path.join(capdir, f), state, keys)
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
