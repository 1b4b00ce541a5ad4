#!/usr/bin/env python3
"""Turn one real nvidia-smi capture into a scenario for the fake NVML library.

usage: capture2scn.py CAPTURE STATE [--unmapped FILE] [--proc-root DIR] [--meta FILE]

Prints to stdout a scenario (docs/scenario-format.md) whose GPUs and
processes answer NVML calls with the values nvidia-smi printed in the
capture's STATE (idle or load): every value of the query-gpu CSV that has a
scenario key, then what the CSV lacks from the -q output (brand, thresholds,
BAR1, PCIe counters, processes). Values nvidia-smi showed as [N/A] are left
out, so the fake answers NOT_SUPPORTED, as the real driver did.

--unmapped FILE  write "FIELD<TAB>REASON" for each CSV field the scenario
                 cannot express (default: stderr, as "# FIELD: REASON")
--proc-root DIR  write a /proc tree for the capture's processes (status,
                 stat, cmdline, cgroup, uptime), for GPUSCOPE_PROC_ROOT
--meta FILE      write shell assignments for the test driver: CAP_TZ (a
                 POSIX TZ for the capture's local time, empty if unknown),
                 GPU_CLOCK and APPS_CLOCK (epoch seconds of the query-gpu and
                 query-compute-apps timestamps, empty if unknown)
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capture import Capture, epoch_of, posix_tz  # noqa: E402

MIB = 1048576

# nvidia-smi's spellings of "no value" that mean NOT_SUPPORTED to NVML
NA = ("[N/A]", "N/A", "[Not Supported]")

COMPUTE_MODES = {"Default": 0, "Exclusive_Thread": 1, "Prohibited": 2, "Exclusive_Process": 3}

# nvmlBrandType_t and nvmlDeviceArchitecture_t, for -q's names
BRANDS = {
    "Unknown": 0, "Quadro": 1, "Tesla": 2, "NVS": 3, "Grid": 4, "GeForce": 5, "Titan": 6,
    "NVIDIA Virtual Applications": 7, "NVIDIA Virtual PC": 8, "NVIDIA Virtual Compute Server": 9,
    "NVIDIA RTX Virtual Workstation": 10, "NVIDIA Cloud Gaming": 11, "Quadro RTX": 12,
    "NVIDIA RTX": 13, "NVIDIA": 14, "GeForce RTX": 15, "Titan RTX": 16,
}
ARCHITECTURES = {
    "Kepler": 2, "Maxwell": 3, "Pascal": 4, "Volta": 5, "Turing": 6, "Ampere": 7,
    "Ada Lovelace": 8, "Hopper": 9, "Blackwell": 10,
}

# clocks_event_reasons.<name>: the NVML bit
REASON_BITS = {
    "gpu_idle": 0x1, "applications_clocks_setting": 0x2, "sw_power_cap": 0x4,
    "hw_slowdown": 0x8, "sync_boost": 0x10, "sw_thermal_slowdown": 0x20,
    "hw_thermal_slowdown": 0x40, "hw_power_brake_slowdown": 0x80,
}


class Unmappable(Exception):
    """A CSV value the scenario format cannot express; the message says why."""


def number(v, unit=None):
    """"38 %" -> 38, "631.95 W" -> 631.95, "5" -> 5; raises Unmappable on anything else."""
    s = v.strip()
    if unit:
        if not s.endswith(" " + unit):
            raise Unmappable("'%s' does not end in the unit %s" % (v, unit))
        s = s[: -len(unit) - 1]
    try:
        return int(s)
    except ValueError:
        pass
    try:
        return float(s)
    except ValueError:
        raise Unmappable("'%s' is not a number" % v)


def conv_int(v):
    n = number(v)
    if not isinstance(n, int):
        raise Unmappable("'%s' is not a whole number" % v)
    return str(n)


def conv_unit(unit):
    def conv(v):
        n = number(v, unit)
        if not isinstance(n, int):
            raise Unmappable("'%s' is not a whole number" % v)
        return str(n)

    return conv


def conv_mib(v):
    return str(int(number(v, "MiB")) * MIB)


def conv_mw(v):
    """"631.95 W" -> 631950 (milliwatts, what NVML returns)."""
    return str(int(round(number(v, "W") * 1000)))


def conv_hex(v):
    if not re.fullmatch(r"0x[0-9A-Fa-f]+", v):
        raise Unmappable("'%s' is not a hex number" % v)
    return v


def conv_choice(table):
    def conv(v):
        if v not in table:
            raise Unmappable("'%s' is not one of %s" % (v, ", ".join(sorted(table))))
        return str(table[v])

    return conv


def conv_pstate(v):
    m = re.fullmatch(r"P(\d+)", v)
    if not m:
        raise Unmappable("'%s' is not a performance state" % v)
    return m.group(1)


def conv_string(v):
    if '"' in v:
        raise Unmappable("a quoted scenario value cannot hold '\"'")
    return '"%s"' % v


ENABLED = conv_choice({"Enabled": 1, "Disabled": 0})
YESNO = conv_choice({"Yes": 1, "No": 0})

# query-gpu field -> (scenario key, converter); keys of [gpu] unless noted
GPU_KEYS = {
    "name": ("name", conv_string),
    "serial": ("serial", conv_string),
    "uuid": ("uuid", conv_string),
    "pci.bus_id": ("pci_bus_id", conv_string),
    "pci.device_id": ("pci_device_id", conv_hex),
    "pci.sub_device_id": ("pci_subsystem_id", conv_hex),
    "compute_cap": ("compute_capability", conv_string),
    "vbios_version": ("vbios", conv_string),
    "inforom.img": ("inforom_image", conv_string),
    "temperature.gpu": ("temperature", conv_int),
    "temperature.memory": ("memory_temperature", conv_int),
    "temperature.gpu.tlimit": ("temp_margin", conv_int),
    "fan.speed": ("fan_speed", conv_unit("%")),
    "power.draw": ("power_usage", conv_mw),
    "power.draw.instant": ("power_instant", conv_mw),
    "power.draw.average": ("power_average", conv_mw),
    "power.limit": ("power_limit", conv_mw),
    "enforced.power.limit": ("power_limit_enforced", conv_mw),
    "power.default_limit": ("power_limit_default", conv_mw),
    "power.min_limit": ("power_limit_min", conv_mw),
    "power.max_limit": ("power_limit_max", conv_mw),
    "memory.total": ("memory_total", conv_mib),
    "memory.reserved": ("memory_reserved", conv_mib),
    "memory.used": ("memory_used", conv_mib),
    "memory.free": ("memory_free", conv_mib),
    "utilization.gpu": ("util_gpu", conv_unit("%")),
    "utilization.memory": ("util_memory", conv_unit("%")),
    "utilization.encoder": ("util_encoder", conv_unit("%")),
    "utilization.decoder": ("util_decoder", conv_unit("%")),
    "utilization.jpeg": ("util_jpeg", conv_unit("%")),
    "utilization.ofa": ("util_ofa", conv_unit("%")),
    "clocks.current.graphics": ("clock_graphics", conv_unit("MHz")),
    "clocks.current.sm": ("clock_sm", conv_unit("MHz")),
    "clocks.current.memory": ("clock_mem", conv_unit("MHz")),
    "clocks.current.video": ("clock_video", conv_unit("MHz")),
    "clocks.max.graphics": ("max_clock_graphics", conv_unit("MHz")),
    "clocks.max.sm": ("max_clock_sm", conv_unit("MHz")),
    "clocks.max.memory": ("max_clock_mem", conv_unit("MHz")),
    "pstate": ("pstate", conv_pstate),
    "clocks_event_reasons.active": ("clocks_event_reasons", conv_hex),
    "clocks_event_reasons.supported": ("clocks_event_reasons_supported", conv_hex),
    "pcie.link.gen.current": ("pcie_gen", conv_int),
    "pcie.link.gen.max": ("pcie_gen_max", conv_int),
    "pcie.link.gen.gpumax": ("pcie_gen_gpu_max", conv_int),
    "pcie.link.width.current": ("pcie_width", conv_int),
    "pcie.link.width.max": ("pcie_width_max", conv_int),
    "persistence_mode": ("persistence_mode", ENABLED),
    "compute_mode": ("compute_mode", conv_choice(COMPUTE_MODES)),
    "display_mode": ("display_mode", ENABLED),
    "display_active": ("display_active", ENABLED),
    "mig.mode.current": ("mig_mode", ENABLED),
    "mig.mode.pending": ("mig_mode_pending", ENABLED),
    "ecc.mode.current": ("ecc_mode", ENABLED),
    "ecc.mode.pending": ("ecc_mode_pending", ENABLED),
    "ecc.errors.corrected.volatile.total": ("ecc_corrected_volatile", conv_int),
    "ecc.errors.uncorrected.volatile.total": ("ecc_uncorrected_volatile", conv_int),
    "ecc.errors.corrected.aggregate.total": ("ecc_corrected_aggregate", conv_int),
    "ecc.errors.uncorrected.aggregate.total": ("ecc_uncorrected_aggregate", conv_int),
    "retired_pages.single_bit_ecc.count": ("retired_sbe", conv_int),
    "retired_pages.double_bit.count": ("retired_dbe", conv_int),
    "retired_pages.pending": ("retired_pending", YESNO),
    "remapped_rows.correctable": ("remapped_corr", conv_int),
    "remapped_rows.uncorrectable": ("remapped_uncorr", conv_int),
    "remapped_rows.pending": ("remapped_pending", YESNO),
    "remapped_rows.failure": ("remapped_failure", YESNO),
    "encoder.stats.sessionCount": ("encoder_sessions", conv_int),
    "encoder.stats.averageFps": ("encoder_fps", conv_int),
    "encoder.stats.averageLatency": ("encoder_latency", conv_int),
}

# keys the fake answers only together (one NVML call returns them all)
GROUPS = [
    ("utilization.gpu", "utilization.memory"),
    ("power.min_limit", "power.max_limit"),
    ("encoder.stats.sessionCount", "encoder.stats.averageFps", "encoder.stats.averageLatency"),
    ("remapped_rows.correctable", "remapped_rows.uncorrectable", "remapped_rows.pending",
     "remapped_rows.failure"),
]

# -q path -> (key, converter): what the CSV does not carry
Q_KEYS = [
    ("Product Brand", "brand", conv_choice(BRANDS)),
    ("Product Architecture", "architecture", conv_choice(ARCHITECTURES)),
    ("Board Part Number", "board_part_number", conv_string),
    ("Minor Number", "minor_number", conv_int),
    ("Temperature/GPU Shutdown Temp", "temp_shutdown", conv_unit("C")),
    ("Temperature/GPU Slowdown Temp", "temp_slowdown", conv_unit("C")),
    ("Temperature/GPU Max Operating Temp", "temp_gpu_max", conv_unit("C")),
    ("Temperature/Memory Max Operating Temp", "temp_mem_max", conv_unit("C")),
    ("BAR1 Memory Usage/Total", "bar1_total", conv_mib),
    ("BAR1 Memory Usage/Used", "bar1_used", conv_mib),
    ("PCI/Replays Since Reset", "pcie_replay", conv_int),
    ("PCI/Tx Throughput", "pcie_tx", conv_unit("KB/s")),
    ("PCI/Rx Throughput", "pcie_rx", conv_unit("KB/s")),
    ("Max Clocks/Video", "max_clock_video", conv_unit("MHz")),
]

# fields the fake gives from other keys (see map_gpu)
DERIVED = {"pcie.link.gen.gpucurrent", "pci.domain", "pci.bus",
           "pci.device"} | {"clocks_event_reasons." + n for n in REASON_BITS}

PROC_TYPES = {"C": "compute", "G": "graphics", "C+G": "compute+graphics", "M": "mps", "M+C": "mps"}


def is_na(v):
    return v.strip() in NA


def is_error(v):
    v = v.strip()
    return v.startswith("[") and v.endswith("]") and v not in NA


class Result:
    def __init__(self):
        self.system = []  # (key, value)
        self.gpus = []  # [(key, value)] per GPU
        self.procs = []  # dicts: pid, gpu, type, used_memory, name, gpu_instance, compute_instance
        self.mapped = {}  # (row, csv field) -> (key, value)
        self.unmapped = []  # (field, reason), each field once
        self.tz = None  # POSIX TZ, or None
        self.gpu_clock = None
        self.apps_clock = None
        self.notes = []  # other remarks ("# ..." in the scenario)

    def unmap(self, field, reason):
        if field not in [f for f, _ in self.unmapped]:
            self.unmapped.append((field, reason))


def bus_id_parts(bus_id):
    m = re.fullmatch(r"([0-9A-Fa-f]{4,8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])", bus_id)
    return tuple(int(x, 16) for x in m.groups()) if m else None


def map_gpu(res, row_no, row, keys):
    """Fill keys (a list of (key, value)) from one CSV row; record what cannot be expressed."""
    def put(field, key, value):
        keys.append((key, value))
        res.mapped[(row_no, field)] = (key, value)

    # groups the fake answers with one call: all known, or none
    grouped = {}
    for group in GROUPS:
        present = [f for f in group if f in row]
        known = [f for f in present if not is_na(row[f])]
        na = [f for f in present if is_na(row[f])]
        if known and na:
            for f in known:
                res.unmap(f, "the fake answers it only together with %s, which nvidia-smi showed as [N/A]"
                          % ", ".join(na))
            for f in present:
                grouped[f] = False
        elif known:
            for f in group:
                if f not in row:
                    keys.append((GPU_KEYS[f][0], "0"))
                    res.notes.append("%s = 0: not in the capture's CSV, but the fake needs it with %s"
                                     % (GPU_KEYS[f][0], ", ".join(known)))

    for field, value in row.items():
        if field not in GPU_KEYS or grouped.get(field) is False:
            continue
        if is_na(value) and field == "power.draw.average":
            # absent, the fake would answer field 185 from power_usage
            put(field, "power_average", "N/A")
            continue
        if is_na(value):
            continue  # left out: NOT_SUPPORTED, which nvidia-smi prints as [N/A]
        if is_error(value):
            res.unmap(field, "nvidia-smi printed the error %s; a field the model cannot read is [N/A]" % value)
            continue
        key, conv = GPU_KEYS[field]
        try:
            put(field, key, conv(value))
        except Unmappable as e:
            res.unmap(field, str(e))

    # fields the fake derives from others: expressed when they agree
    def derived(field, source_ok, value_ok, key, value, why):
        """source_ok: the source is known; value_ok(v): v is what the fake will give."""
        if field not in row:
            return
        v = row[field]
        if is_error(v):
            res.unmap(field, "nvidia-smi printed the error %s; a field the model cannot read is [N/A]" % v)
        elif is_na(v) and not source_ok:
            pass  # both unknown: [N/A] either way
        elif not is_na(v) and source_ok and value_ok(v):
            res.mapped[(row_no, field)] = (key, value)
        else:
            res.unmap(field, why)

    mapped = res_mapped_fields(res, row_no)
    cur = row.get("pcie.link.gen.current")
    derived("pcie.link.gen.gpucurrent", "pcie.link.gen.current" in mapped, lambda v: v == cur,
            "pcie_gen", cur,
            "the fake has one current PCIe generation (pcie_gen); nvidia-smi showed %s here and %s as pcie.link.gen.current"
            % (row.get("pcie.link.gen.gpucurrent"), cur))
    bus = row.get("pci.bus_id")
    parts = bus_id_parts(bus) if bus and "pci.bus_id" in mapped else None
    if "pci.bus_id" in row and is_na(row["pci.bus_id"]):
        res.unmap("pci.bus_id", "the fake always has a bus id (its default is 00000000:XX:00.0)")
    for i, field in enumerate(("pci.domain", "pci.bus", "pci.device")):
        def agrees(v, i=i):
            try:
                return int(v, 16) == parts[i]
            except ValueError:
                return False

        derived(field, parts is not None, agrees, "pci_bus_id", bus,
                "the fake takes it from pci_bus_id %s, which disagrees with %s" % (bus, row.get(field)))

    active = row.get("clocks_event_reasons.active")
    try:
        mask = int(active, 16) if "clocks_event_reasons.active" in mapped else None
    except ValueError:
        mask = None
    for name, bit in REASON_BITS.items():
        field = "clocks_event_reasons." + name
        want = None if mask is None else ("Active" if mask & bit else "Not Active")
        derived(field, mask is not None, lambda v, want=want: v == want, "clocks_event_reasons", active,
                "the fake derives it from clocks_event_reasons (%s), which says %s" % (active, want or "nothing"))

    if "index" in row:
        if row["index"] == str(row_no):
            res.mapped[(row_no, "index")] = ("[gpu] order", row["index"])
        else:
            res.unmap("index", "GPUs are numbered in the order of their [gpu] sections")
    if "hostname" in row:
        res.unmap("hostname", "gpuscope prints the name of the host it runs on (nvidia-smi showed %s); a scenario cannot set it"
                  % row["hostname"])


def res_mapped_fields(res, row_no):
    return {f for (r, f) in res.mapped if r == row_no}


def map_q(res, q, gpu_no, keys):
    if q is None or gpu_no >= len(q.gpus):
        return
    have = {k for k, _ in keys}
    tree = q.gpus[gpu_no]
    for path, key, conv in Q_KEYS:
        v = tree.get(path)
        if v is None or key in have or v in ("N/A", "") or is_error(v):
            continue
        try:
            keys.append((key, conv(v)))
        except Unmappable as e:
            res.notes.append("-q %s: %s" % (path, e))


def proc_memory(v):
    """"2566 MiB" -> bytes; "N/A" and WDDM's "Not available ..." -> "N/A"."""
    if v is None:
        return None
    m = re.fullmatch(r"(\d+) MiB", v.strip())
    return str(int(m.group(1)) * MIB) if m else "N/A"


def map_procs(res, q, apps, gpus_by_uuid_bus):
    """
    Processes from -q (every type), with the compute-apps CSV authoritative
    for what nvidia-smi listed as compute apps (the two commands ran apart).
    """
    rows = [apps.row_dict(i) for i in range(len(apps.rows))] if apps else []
    in_csv = {}
    for r in rows:
        gpu = gpus_by_uuid_bus.get((r.get("gpu_uuid"), r.get("gpu_bus_id")), 0)
        in_csv[(gpu, r.get("pid"))] = r
    seen = set()
    for gpu, plist in enumerate(q.procs if q else []):
        for p in plist:
            pid = p.get("pid", "")
            if not pid.isdigit():
                continue
            ptype = PROC_TYPES.get(p.get("Type", "C"), None)
            if ptype is None:
                res.notes.append("process %s: unknown type %s, left out" % (pid, p.get("Type")))
                continue
            csv = in_csv.get((gpu, pid))
            compute = ptype in ("compute", "compute+graphics", "mps")
            if compute and csv is None and apps is not None:
                res.notes.append("process %s is a compute process in -q but not in the compute-apps CSV (it came or went between the two commands): left out"
                                 % pid)
                continue
            proc = {"pid": pid, "gpu": gpu, "type": ptype,
                    "used_memory": proc_memory(csv.get("used_gpu_memory") if csv else p.get("Used GPU Memory")),
                    "name": (csv.get("process_name") if csv else None) or p.get("Name"),
                    "gpu_instance": p.get("GPU instance ID"),
                    "compute_instance": p.get("Compute instance ID")}
            res.procs.append(proc)
            seen.add((gpu, pid))
    for (gpu, pid), r in in_csv.items():
        if (gpu, pid) in seen or not pid.isdigit():
            continue
        res.procs.append({"pid": pid, "gpu": gpu, "type": "compute",
                          "used_memory": proc_memory(r.get("used_gpu_memory")),
                          "name": r.get("process_name"), "gpu_instance": None,
                          "compute_instance": None})


def convert(path, state):
    cap = Capture(path)
    csv = cap.query_gpu(state)
    if csv is None:
        raise SystemExit("capture2scn: %s has no query-gpu CSV for state '%s'" % (path, state))
    q = cap.query_q(state)
    res = Result()

    # [system]
    rows = [csv.row_dict(i) for i in range(len(csv.rows))]
    drv = rows[0].get("driver_version") if rows else None
    if drv and not is_na(drv):
        res.system.append(("driver_version", conv_string(drv)))
        for i in range(len(rows)):
            res.mapped[(i, "driver_version")] = ("driver_version", drv)
    ver = cap.version()
    if ver.get("NVML version"):
        res.system.append(("nvml_version", conv_string(ver["NVML version"])))
    cuda = (q.top.get("CUDA Version") if q else None) or ver.get("CUDA Version")
    m = re.match(r"(\d+)\.(\d+)", cuda or "")
    if m:
        res.system.append(("cuda_version", str(int(m.group(1)) * 1000 + int(m.group(2)) * 10)))

    for i, row in enumerate(rows):
        keys = []
        map_gpu(res, i, row, keys)
        if "count" in row:
            if row["count"] == str(len(rows)):
                res.mapped[(i, "count")] = ("number of [gpu] sections", row["count"])
            else:
                res.unmap("count", "nvidia-smi counted %s GPUs but printed %d rows" % (row["count"], len(rows)))
        map_q(res, q, i, keys)
        res.gpus.append(keys)

    # fields with no scenario key at all
    handled = set(GPU_KEYS) | {f for (_, f) in res.mapped} | {f for f, _ in res.unmapped}
    handled |= {"timestamp", "count", "index", "driver_version", "hostname"} | DERIVED
    for field in csv.fields:
        if field in handled:
            continue
        values = {r.get(field) for r in rows}
        if values and all(v is not None and is_na(v) for v in values):
            why = "no scenario key (nvidia-smi showed [N/A])"
        else:
            why = "no scenario key"
        res.unmap(field, why)

    # time: the CSV prints local time; its zone follows from collected_at
    offset = cap.utc_offset()
    ts = rows[0].get("timestamp") if rows else None
    if offset is None:
        res.unmap("timestamp", "the capture's time zone is unknown (no collected_at close to its first timestamp)")
    else:
        res.tz = posix_tz(offset)
        if ts:
            res.gpu_clock = epoch_of(ts, offset)
            for i in range(len(rows)):
                res.mapped[(i, "timestamp")] = ("GPUSCOPE_CLOCK", "%.3f" % res.gpu_clock)
    apps = cap.query_apps(state)
    if apps and apps.rows and offset is not None and "timestamp" in apps.fields:
        res.apps_clock = epoch_of(apps.rows[0][apps.column("timestamp")], offset)

    by_id = {}
    for i, row in enumerate(rows):
        by_id[(row.get("uuid"), row.get("pci.bus_id"))] = i
    map_procs(res, q, apps, by_id)
    for p in res.procs:
        if p["name"] and " " in p["name"]:
            res.notes.append("process %s: its command path '%s' holds a space" % (p["pid"], p["name"]))
    return cap, res


def scenario_text(path, state, res):
    out = ["# generated by tests/conformance/capture2scn.py from", "# %s (%s)" % (os.path.basename(path), state)]
    for n in res.notes:
        out.append("# note: " + n)
    out.append("")
    out.append("[system]")
    for k, v in res.system:
        out.append("%s = %s" % (k, v))
    for keys in res.gpus:
        out.append("")
        out.append("[gpu]")
        for k, v in keys:
            out.append("%s = %s" % (k, v))
    for p in res.procs:
        out.append("")
        out.append("[process %s]" % p["pid"])
        out.append("gpu = %d" % p["gpu"])
        out.append("type = %s" % p["type"])
        if p["used_memory"] is not None:
            out.append("used_memory = %s" % p["used_memory"])
        for k in ("gpu_instance", "compute_instance"):
            v = p.get(k)
            if v is not None and v.isdigit():
                out.append("%s = %s" % (k, v))
        if p["name"] and '"' not in p["name"]:
            out.append('name = "%s"' % p["name"])
    return "\n".join(out) + "\n"


def write_proc_root(root, res):
    """A /proc tree just big enough for gpuscope's procinfo: the capture's processes, as root."""
    os.makedirs(os.path.join(root, "self"), exist_ok=True)
    with open(os.path.join(root, "uptime"), "w") as f:
        f.write("100000.00 400000.00\n")
    with open(os.path.join(root, "self", "status"), "w") as f:
        f.write("Name:\tgpuscope\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nNSpid:\t1\n")
    for p in res.procs:
        d = os.path.join(root, p["pid"])
        os.makedirs(d, exist_ok=True)
        name = p["name"] or "proc%s" % p["pid"]
        comm = re.split(r"[/\\]", name)[-1][:15] or "proc"
        with open(os.path.join(d, "cmdline"), "wb") as f:
            f.write(name.encode() + b"\0")
        with open(os.path.join(d, "comm"), "w") as f:
            f.write(comm + "\n")
        with open(os.path.join(d, "status"), "w") as f:
            f.write("Name:\t%s\nState:\tS (sleeping)\nTgid:\t%s\nPid:\t%s\nPPid:\t1\n"
                    "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nNSpid:\t%s\nVmRSS:\t  102400 kB\n"
                    % (comm, p["pid"], p["pid"], p["pid"]))
        # fields 3..52 of stat(5): state, ppid, ..., starttime (22nd) 1000 ticks after boot
        rest = ["S", "1", p["pid"], p["pid"], "0", "-1", "4194560", "0", "0", "0", "0",
                "500", "100", "0", "0", "20", "0", "1", "0", "1000", "1000000000", "25600"]
        rest += ["0"] * (50 - len(rest))
        with open(os.path.join(d, "stat"), "w") as f:
            f.write("%s (%s) %s\n" % (p["pid"], comm, " ".join(rest)))
        with open(os.path.join(d, "cgroup"), "w") as f:
            f.write("0::/user.slice/user-0.slice/session-1.scope\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("capture")
    ap.add_argument("state", choices=("idle", "load"))
    ap.add_argument("--unmapped")
    ap.add_argument("--proc-root")
    ap.add_argument("--meta")
    a = ap.parse_args(argv)

    _, res = convert(a.capture, a.state)
    sys.stdout.write(scenario_text(a.capture, a.state, res))
    if a.unmapped:
        with open(a.unmapped, "w") as f:
            for field, why in res.unmapped:
                f.write("%s\t%s\n" % (field, why))
    else:
        for field, why in res.unmapped:
            sys.stderr.write("# %s: %s\n" % (field, why))
    if a.proc_root:
        write_proc_root(a.proc_root, res)
    if a.meta:
        with open(a.meta, "w") as f:
            f.write("CAP_TZ='%s'\n" % (res.tz or ""))
            f.write("GPU_CLOCK='%s'\n" % ("%.3f" % res.gpu_clock if res.gpu_clock else ""))
            f.write("APPS_CLOCK='%s'\n" % ("%.3f" % res.apps_clock if res.apps_clock else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
