#!/usr/bin/env python3
"""Does gpuscope read real AMD and Intel cards as LACT does?

LACT (github.com/ilya-zlobintsev/LACT, MIT) keeps the sysfs trees of users'
cards (tests/snapshots/<vendor>/<gpu>/cardN/...) and its own parsed reading
of each (lact-daemon/src/tests/snapshots/*.snap: insta's header, then JSON).
For every card this builds a sysfs root gpuscope can read, runs

    gpuscope status --json --no-processes

on it (GPUSCOPE_SYSFS_ROOT, no NVML, an empty /proc) and compares VRAM
total and used, busy share, current and highest clocks, power (average,
instantaneous, cap and its range), temperatures and their limits, fan
speed and PWM, PCIe link speed and width, and graphics voltage.

A disagreement is a failure unless NOTES below says, after reading the raw
files, why LACT and gpuscope differ (LACT reports another quantity, or is
wrong), or GAPS names it as something gpuscope does not read yet (owned by
another module). An entry whose values agree is a failure too, so the lists
stay true. LACT's AMD target_gpu_clockspeed (gpu_metrics' current_gfxclk)
has no gpuscope field and is not compared; Intel's (cur_freq) is.

  lact.py run SHARED_LACT_DIR GPUSCOPE   print TAP for every card
  lact.py selftest                       check tree building and comparing
  lact.py build CARD_DIR OUT             build one root (for debugging)
  lact.py suspended GPUSCOPE FIXTURE     a suspended card (tests/fixtures/
                                         amd-suspended): shown as suspended,
                                         and no file of it but its identity
                                         and runtime_status is opened
"""
import ctypes
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

# Why a value differs, by (card, quantity), each settled by reading the
# card's raw files (and LACT's code). AMD cards need none: the one kind of
# difference they showed, the highest clocks, was gpuscope's (it took the top
# pp_dpm level where the card's overdrive table bounds the clock) and is fixed.
NOTES = {}


def note(cards, quantity, why):
    for c in cards.split():
        NOTES[(c, quantity)] = why


# Intel (drm_intel.c): LACT's lact-daemon/src/server/gpu_controller/intel.rs
note("a380-i915 a380-xe b580 b580-6.16 cometlake tigerlake", "power cap min",
     "LACT gives 0 as every Intel card's lowest cap: a constant in its code "
     "(cap_min: Some(0.0)), not a reading; i915 and xe have no such file")
note("a380-i915 a380-xe b580", "power cap default",
     "LACT's cap_default is the cap its daemon saw when it started "
     "(initial_power_cap), not a default of the card: i915 and xe have no "
     "power*_cap_default, so gpuscope has none")
note("a380-i915 a380-xe", "power cap max",
     "power*_rated_max reads 0 on this card; LACT puts a placeholder in its "
     "place (its code now doubles the cap; this older snapshot says 400), not "
     "a reading")
note("a380-xe b580 tigerlake", "gpu clock",
     "act_freq reads 0 (the GT is in RC6, its clock stopped) and LACT then "
     "shows cur_freq, the clock the driver asked for; gpuscope reports the "
     "actual 0, and the request as clock_graphics_requested_mhz (compared as "
     "'target clock', which agrees)")
note("b580-6.16", "fan rpm",
     "the card has three fans: fan1_input 0, fan2_input 418, fan3_input 0; LACT "
     "reads the first fan*_input only, gpuscope reports the one that spins")


# What gpuscope does not read yet, by (card, quantity): its own gaps, each
# owned by a module other than amdgpu's. A gap is shown, not failed; a gap
# whose values agree fails, so the entry goes once the module reads it.
GAPS = {}


def gap(cards, quantity, why):
    for c in cards.split():
        GAPS[(c, quantity)] = why


# None now. radeon (hd7870) is read by drm_generic.c, which reads hwmon's
# freq1_input (sclk) and pwm1/pwm1_max as well as temp1. Its PCIe link was
# never a gap: drm.c's drm_read_pcie() reads current_link_speed/width of
# every PCI card, whatever its module, and the tree built here is on PCI.


# --- building a sysfs root from a LACT card tree -------------------------------

def parse_uevent(path):
    out = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                k, sep, v = line.strip().partition("=")
                if sep:
                    out[k] = v
    except OSError:
        pass
    return out


def copy_tree(src, dst):
    """Copy files and directories (not their read-only modes) from src to dst."""
    os.makedirs(dst, exist_ok=True)
    for name in sorted(os.listdir(src)):
        s, d = os.path.join(src, name), os.path.join(dst, name)
        if os.path.islink(s):
            os.symlink(os.readlink(s), d)
        elif os.path.isdir(s):
            copy_tree(s, d)
        else:
            shutil.copyfile(s, d)


def find_card(gpu_dir):
    cards = [n for n in sorted(os.listdir(gpu_dir))
             if n.startswith("card") and n[4:].isdigit() and os.path.isdir(os.path.join(gpu_dir, n))]
    return cards[0] if cards else None


def build_root(gpu_dir, out):
    """Lay LACT's cardN/ out as a machine has it; returns (card, slot, driver).

    LACT keeps cardN/ with device/ as a directory (sysfs has it as a link to
    the PCI device). Here the device directory goes to
    sys/devices/pci0000:00/<slot>/, the card to its drm/cardN/ with device a
    link back, sys/class/drm/cardN links to the card, and driver links to
    bus/pci/drivers/<driver> (from the uevent LACT kept). PCI identity files
    LACT did not keep (vendor, device, subsystem_*) are written from that
    uevent. Files beside cardN/ (rx580 has a second copy of some PCI files)
    are not what LACT read and are left out; a kfd/ beside it (phoenix)
    becomes sys/devices/virtual/kfd/kfd.
    """
    card = find_card(gpu_dir)
    if not card:
        raise ValueError("no cardN directory in %s" % gpu_dir)
    src = os.path.join(gpu_dir, card)
    ue = parse_uevent(os.path.join(src, "device", "uevent"))
    slot = ue.get("PCI_SLOT_NAME", "0000:01:00.0")
    driver = ue.get("DRIVER", "")
    sys_dir = os.path.join(out, "sys")
    dev_rel = os.path.join("devices", "pci0000:00", slot)
    dev = os.path.join(sys_dir, dev_rel)
    if os.path.isdir(os.path.join(src, "device")):
        copy_tree(os.path.join(src, "device"), dev)
    else:
        os.makedirs(dev)
    ids = {"PCI_ID": ("vendor", "device"), "PCI_SUBSYS_ID": ("subsystem_vendor", "subsystem_device")}
    for key, names in ids.items():
        parts = ue.get(key, "").split(":")
        if len(parts) != 2:
            continue
        for name, val in zip(names, parts):
            path = os.path.join(dev, name)
            if not os.path.exists(path):
                with open(path, "w") as f:
                    f.write("0x%s\n" % val.lower())
    if driver and not os.path.lexists(os.path.join(dev, "driver")):
        os.makedirs(os.path.join(sys_dir, "bus", "pci", "drivers", driver), exist_ok=True)
        os.symlink("../../../bus/pci/drivers/" + driver, os.path.join(dev, "driver"))
    cdir = os.path.join(dev, "drm", card)
    os.makedirs(cdir)
    for name in sorted(os.listdir(src)):
        if name == "device":
            continue
        s = os.path.join(src, name)
        if os.path.isdir(s):
            copy_tree(s, os.path.join(cdir, name))
        else:
            shutil.copyfile(s, os.path.join(cdir, name))
    os.symlink("../../../" + slot, os.path.join(cdir, "device"))
    os.makedirs(os.path.join(sys_dir, "class", "drm"))
    os.symlink("../../" + dev_rel + "/drm/" + card, os.path.join(sys_dir, "class", "drm", card))
    kfd = os.path.join(gpu_dir, "kfd")
    if os.path.isdir(kfd):
        copy_tree(kfd, os.path.join(sys_dir, "devices", "virtual", "kfd", "kfd"))
        os.makedirs(os.path.join(sys_dir, "class", "kfd"))
        os.symlink("../../devices/virtual/kfd/kfd", os.path.join(sys_dir, "class", "kfd", "kfd"))
    return card, slot, driver


# --- LACT's snapshot and the comparison -------------------------------------------

def load_snapshot(path):
    """insta's snapshot: a header between '---' lines, then the value."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    parts = text.split("\n---\n", 1)
    body = parts[1] if text.startswith("---") and len(parts) == 2 else text
    return json.loads(body)


def dig(obj, *path):
    for p in path:
        if not isinstance(obj, dict) or p not in obj:
            return None
        obj = obj[p]
    return obj


def pcie_gen(speed):
    """'16.0 GT/s PCIe' -> 4; None for 'Unknown' and the like."""
    try:
        gts = float(str(speed).split()[0])
    except (ValueError, IndexError):
        return None
    rates = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6, 128.0: 7}
    for rate, gen in rates.items():
        if abs(gts - rate) < 0.05:
            return gen
    return None


def raw_int(dev_dir, rel, default=None):
    try:
        with open(os.path.join(dev_dir, rel), encoding="utf-8", errors="replace") as f:
            return int(f.read().split("\0")[0].strip())
    except (OSError, ValueError):
        return default


def hwmon_dir(dev_dir):
    try:
        names = sorted(n for n in os.listdir(os.path.join(dev_dir, "hwmon")) if n.startswith("hwmon"))
    except OSError:
        return None
    return os.path.join("hwmon", names[0]) if names else None


# temperature labels as LACT keys them -> gpuscope keys
TEMP_CURRENT = {
    "edge": "temperature_gpu_celsius",
    "junction": "temperature_hotspot_celsius",
    "mem": "temperature_memory_celsius",
    "1": "temperature_gpu_celsius",  # unlabelled temp1 (radeon)
    "gpu": "temperature_gpu_celsius",  # i915
    "pkg": "temperature_gpu_celsius",  # xe: the package is the GPU's
    "vram": "temperature_memory_celsius",  # xe
}
TEMP_CRIT = {
    "edge": "temperature_slowdown_celsius",
    "mem": "temperature_memory_max_celsius",
}


def quantities(snap, dev_dir):
    """(name, LACT's value, gpuscope key, tolerance, convert) for what LACT has."""
    s = snap.get("stats") or {}
    intel = (snap.get("info") or {}).get("driver") in ("i915", "xe")
    q = [
        ("vram total", dig(s, "vram", "total"), "memory_total_bytes", 0, None),
        ("vram used", dig(s, "vram", "used"), "memory_used_bytes", 0, None),
        ("busy", s.get("busy_percent"), "utilization_gpu_percent", 0.5, None),
        ("gpu clock", dig(s, "clockspeed", "gpu_clockspeed"), "clock_graphics_mhz", 1, None),
        ("vram clock", dig(s, "clockspeed", "vram_clockspeed"), "clock_memory_mhz", 1, None),
        # Intel: cur_freq; AMD's is gpu_metrics' current_gfxclk, which has no field
        ("target clock", dig(s, "clockspeed", "target_gpu_clockspeed") if intel else None,
         "clock_graphics_requested_mhz", 1, None),
        ("max sclk", dig(snap, "clocks_info", "max_sclk"), "clock_graphics_max_mhz", 1, None),
        ("max mclk", dig(snap, "clocks_info", "max_mclk"), "clock_memory_max_mhz", 1, None),
        ("power average", dig(s, "power", "average"), "power_draw_average_watts", 0.006, None),
        ("power current", dig(s, "power", "current"), "power_draw_instant_watts", 0.006, None),
        ("power cap", dig(s, "power", "cap_current"), "power_limit_watts", 0.006, None),
        ("power cap default", dig(s, "power", "cap_default"), "power_default_limit_watts", 0.006, None),
        ("power cap min", dig(s, "power", "cap_min"), "power_min_limit_watts", 0.006, None),
        ("power cap max", dig(s, "power", "cap_max"), "power_max_limit_watts", 0.006, None),
        ("fan rpm", dig(s, "fan", "speed_current"), "fan_speed_rpm", 0.5, None),
        ("voltage", dig(s, "voltage", "gpu"), "voltage_graphics_mv", 0.5, None),
    ]
    # LACT's pwm is pwm1 (0..pwm1_max); gpuscope prints the share in whole percent
    pwm_max = raw_int(dev_dir, os.path.join(hwmon_dir(dev_dir) or "hwmon", "pwm1_max"), 255) or 255
    q.append(("fan pwm", dig(s, "fan", "pwm_current"), "fan_speed_percent",
              pwm_max * 0.005 + 0.01, lambda pct, m=pwm_max: pct * m / 100.0))
    for label, t in sorted((s.get("temps") or {}).items()):
        if label in TEMP_CURRENT:
            q.append(("temp %s" % label, (t or {}).get("current"), TEMP_CURRENT[label], 0.5, None))
        if label in TEMP_CRIT:
            q.append(("temp %s crit" % label, (t or {}).get("crit"), TEMP_CRIT[label], 0.5, None))
    link = dig(snap, "info", "link_info") or {}
    if link.get("current_speed") is not None:
        q.append(("link speed", pcie_gen(link["current_speed"]), "pcie_link_gen", 0, None))
    if link.get("current_width") is not None:
        q.append(("link width", int(link["current_width"]), "pcie_link_width", 0, None))
    if link.get("max_speed") is not None:
        q.append(("link max speed", pcie_gen(link["max_speed"]), "pcie_link_gen_max", 0, None))
    if link.get("max_width") is not None:
        q.append(("link max width", int(link["max_width"]), "pcie_link_width_max", 0, None))
    return [x for x in q if x[1] is not None]


def compare(name, snap, gpu, dev_dir):
    """Returns (checked, failures, notes): lines to print (gaps are notes)."""
    fails, notes, checked = [], [], 0
    for qname, want, key, tol, conv in quantities(snap, dev_dir):
        got = gpu.get(key)
        if got is not None and conv:
            got = conv(got)
        agree = got is not None and abs(float(got) - float(want)) <= tol
        why = NOTES.get((name, qname))
        missing = GAPS.get((name, qname))
        checked += 1
        shown = "%s: LACT %s, gpuscope %s = %s" % (qname, want, key, gpu.get(key))
        if agree and (why or missing):
            fails.append(shown + " -- they agree, but %s says they differ: drop the entry" %
                         ("NOTES" if why else "GAPS"))
        elif missing:
            notes.append(shown + " -- gap: " + missing)
        elif agree:
            continue
        elif why:
            notes.append(shown + " -- " + why)
        else:
            fails.append(shown)
    return checked, fails, notes


# --- running ---------------------------------------------------------------------

def snapshot_for(lact_dir, vendor, gpu):
    path = os.path.join(lact_dir, "expected", "lact_daemon__tests__%s__%s.snap" % (vendor, gpu))
    return path if os.path.exists(path) else None


def run_gpuscope(binary, root, empty_proc):
    env = dict(os.environ)
    env.update(GPUSCOPE_SYSFS_ROOT=os.path.join(root, "sys"), GPUSCOPE_NVML="/nonexistent",
               GPUSCOPE_PROC_ROOT=empty_proc)
    env.pop("GPUSCOPE_ROOT", None)
    p = subprocess.run([binary, "status", "--json", "--no-processes"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, what):
        self.n += 1
        if not cond:
            self.failed += 1
        print("%sok %d - %s" % ("" if cond else "not ", self.n, what))
        return cond

    def skip(self, what, why):
        self.n += 1
        print("ok %d - %s # SKIP %s" % (self.n, what, why))

    @staticmethod
    def comment(lines):
        for line in lines:
            print("#   " + line)


# Cards whose driver gpuscope does not read through this module set.
def skip_reason(vendor, driver):
    if vendor == "nvidia" or driver.startswith("nvidia"):
        return "NVIDIA GPUs are NVML's, not sysfs's"
    return None


def run(lact_dir, binary):
    tap = Tap()
    sysfs = os.path.join(lact_dir, "sysfs")
    tmp = tempfile.mkdtemp(prefix="gpuscope-lact.")
    empty_proc = os.path.join(tmp, "proc")
    os.makedirs(empty_proc)
    try:
        for vendor in sorted(os.listdir(sysfs)):
            vdir = os.path.join(sysfs, vendor)
            if not os.path.isdir(vdir):
                continue
            for gpu in sorted(os.listdir(vdir)):
                gdir = os.path.join(vdir, gpu)
                what = "%s/%s" % (vendor, gpu)
                snap_path = snapshot_for(lact_dir, vendor, gpu)
                if not snap_path:
                    tap.skip(what, "LACT has no snapshot of its reading")
                    continue
                root = os.path.join(tmp, vendor + "-" + gpu)
                try:
                    card, slot, driver = build_root(gdir, root)
                except (OSError, ValueError) as e:
                    tap.ok(False, "%s: building its sysfs root: %s" % (what, e))
                    continue
                why = skip_reason(vendor, driver)
                if why:
                    tap.skip(what, why)
                    continue
                rc, out, err = run_gpuscope(binary, root, empty_proc)
                try:
                    doc = json.loads(out)
                except ValueError:
                    tap.ok(False, "%s: gpuscope exit %d, no JSON" % (what, rc))
                    tap.comment(err.splitlines()[:10])
                    continue
                gpus = [g for g in doc.get("gpus", []) if g.get("card") == card]
                if not gpus:
                    tap.ok(False, "%s: gpuscope lists no %s (exit %d)" % (what, card, rc))
                    tap.comment(err.splitlines()[:10] + doc.get("notes", []))
                    continue
                gpu_json = gpus[0]
                dev_dir = os.path.join(root, "sys", "devices", "pci0000:00", slot)
                checked, fails, notes = compare(gpu, load_snapshot(snap_path), gpu_json, dev_dir)
                if rc != 0 or err.strip():
                    fails.insert(0, "gpuscope exit %d, stderr: %s" % (rc, err.strip()[:300]))
                tap.ok(not fails and gpu_json.get("state") == "ok",
                       "%s (%s, %s): %d quantities agree with LACT%s" % (
                           what, driver, gpu_json.get("name"), checked - len(fails) - len(notes),
                           ", %d differ as noted below" % len(notes) if notes else ""))
                tap.comment(fails)
                tap.comment(["differs: " + n for n in notes])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("1..%d" % tap.n)
    return 1 if tap.failed else 0


# --- self-check of the building and comparing (no gpuscope needed) ----------------

def selftest():
    tap = Tap()
    tmp = tempfile.mkdtemp(prefix="gpuscope-lact-self.")
    try:
        gdir = os.path.join(tmp, "lact", "amd", "fake")
        dev = os.path.join(gdir, "card1", "device")
        os.makedirs(os.path.join(dev, "hwmon", "hwmon3"))
        os.makedirs(os.path.join(gdir, "kfd", "topology"))
        with open(os.path.join(dev, "uevent"), "w") as f:
            f.write("DRIVER=amdgpu\nPCI_ID=1002:747E\nPCI_SUBSYS_ID=148C:2427\nPCI_SLOT_NAME=0000:03:00.0\n")
        with open(os.path.join(dev, "vendor"), "w") as f:
            f.write("0x1002\n")
        with open(os.path.join(dev, "hwmon", "hwmon3", "pwm1_max"), "w") as f:
            f.write("200\n")
        with open(os.path.join(gdir, "card1", "dev"), "w") as f:
            f.write("226:1\n")
        root = os.path.join(tmp, "root")
        card, slot, driver = build_root(gdir, root)
        tap.ok((card, slot, driver) == ("card1", "0000:03:00.0", "amdgpu"),
               "build_root finds card1 at 0000:03:00.0, driver amdgpu")
        sysd = os.path.join(root, "sys")
        cls = os.path.join(sysd, "class", "drm", "card1")
        tap.ok(os.path.islink(cls) and os.path.realpath(os.path.join(cls, "device")) ==
               os.path.realpath(os.path.join(sysd, "devices", "pci0000:00", "0000:03:00.0")),
               "class/drm/card1/device resolves to the PCI device directory")
        tap.ok(os.path.basename(os.readlink(os.path.join(cls, "device", "driver"))) == "amdgpu",
               "device/driver links to the amdgpu driver")
        tap.ok(os.path.isfile(os.path.join(cls, "dev")), "the card's own files are kept")
        with open(os.path.join(cls, "device", "device")) as f:
            tap.ok(f.read() == "0x747e\n", "a PCI id LACT did not keep comes from its uevent")
        with open(os.path.join(cls, "device", "vendor")) as f:
            tap.ok(f.read() == "0x1002\n", "a PCI id LACT kept is not rewritten")
        tap.ok(os.path.isdir(os.path.join(sysd, "class", "kfd", "kfd", "topology")),
               "kfd/ beside the card becomes class/kfd/kfd")
        tap.ok(os.access(os.path.join(cls, "device", "hwmon"), os.W_OK),
               "the copy is writable (removable by its owner)")

        tap.ok(pcie_gen("16.0 GT/s PCIe") == 4 and pcie_gen("2.5 GT/s PCIe") == 1 and
               pcie_gen("Unknown") is None, "PCIe speeds to generations")
        snap_path = os.path.join(tmp, "x.snap")
        snap = {
            "stats": {"vram": {"total": 100, "used": 10}, "busy_percent": 3,
                      "clockspeed": {"gpu_clockspeed": 798, "vram_clockspeed": 1750},
                      "power": {"average": 3.103, "cap_current": 15.0},
                      "fan": {"speed_current": 868, "pwm_current": 89},
                      "temps": {"edge": {"current": 24.0, "crit": 100.0},
                                "vrgfx": {"current": 34.0, "crit": None}}},
            "info": {"link_info": {"current_speed": "16.0 GT/s PCIe", "current_width": "16"}},
        }
        with open(snap_path, "w") as f:
            f.write("---\nsource: x\nexpression: device_info\n---\n" + json.dumps(snap))
        tap.ok(load_snapshot(snap_path) == snap, "insta snapshot: JSON after the header")
        ours = {"memory_total_bytes": 100, "memory_used_bytes": 10, "utilization_gpu_percent": 3,
                "clock_graphics_mhz": 798, "clock_memory_mhz": 1750,
                "power_draw_average_watts": 3.1, "power_limit_watts": 15,
                "fan_speed_rpm": 868, "fan_speed_percent": 44.5, "temperature_gpu_celsius": 24,
                "temperature_slowdown_celsius": 100, "pcie_link_gen": 4, "pcie_link_width": 16}
        checked, fails, notes = compare("fake", snap, ours, os.path.join(cls, "device"))
        tap.ok(checked == 13 and not fails and not notes,
               "13 quantities agree (pwm 89 of 200 is 44.5%; vrgfx has no field)")
        tap.comment(fails)
        ours["clock_graphics_mhz"] = 900
        ours["pcie_link_width"] = None
        checked, fails, notes = compare("fake", snap, ours, os.path.join(cls, "device"))
        tap.ok(len(fails) == 2 and not notes, "a different clock and a missing width fail")
        NOTES[("fake", "gpu clock")] = "a test note"
        checked, fails, notes = compare("fake", snap, ours, os.path.join(cls, "device"))
        tap.ok(len(fails) == 1 and len(notes) == 1, "a noted difference is a note")
        ours["clock_graphics_mhz"] = 798
        checked, fails, notes = compare("fake", snap, ours, os.path.join(cls, "device"))
        tap.ok(len(fails) == 2 and "drop the entry" in fails[0] + fails[1],
               "a note whose values agree fails")
        del NOTES[("fake", "gpu clock")]
        GAPS[("fake", "link width")] = "a test gap"
        ours["clock_graphics_mhz"] = 798
        checked, fails, notes = compare("fake", snap, ours, os.path.join(cls, "device"))
        tap.ok(not fails and len(notes) == 1 and "gap" in notes[0],
               "a known gap is shown, not failed")
        ours["pcie_link_width"] = 16
        checked, fails, notes = compare("fake", snap, ours, os.path.join(cls, "device"))
        tap.ok(len(fails) == 1 and "GAPS" in fails[0], "a gap that is read now fails")
        del GAPS[("fake", "link width")]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("1..%d" % tap.n)
    return 1 if tap.failed else 0


# --- a suspended card, through the whole program -----------------------------------

IN_ACCESS = 0x1
IN_OPEN = 0x20
IN_ISDIR = 0x40000000


def suspended(binary, fixture):
    """Watch the card's directories with inotify while gpuscope reads the tree."""
    tap = Tap()
    sysd = os.path.join(fixture, "sys")
    dev = os.path.realpath(os.path.join(sysd, "class", "drm", "card0", "device"))
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    if fd < 0:
        tap.skip("suspended card", "no inotify")
        print("1..%d" % tap.n)
        return 0
    watched = {}
    for sub in (".", "power", "drm", "drm/card0", "hwmon/hwmon4", "ras"):
        path = os.path.normpath(os.path.join(dev, sub))
        wd = libc.inotify_add_watch(fd, path.encode(), IN_OPEN | IN_ACCESS)
        if wd >= 0:
            watched[wd] = sub
    empty = tempfile.mkdtemp(prefix="gpuscope-susp.")
    try:
        env = dict(os.environ, GPUSCOPE_SYSFS_ROOT=sysd, GPUSCOPE_NVML="/nonexistent",
                   GPUSCOPE_PROC_ROOT=empty)
        env.pop("GPUSCOPE_ROOT", None)
        p = subprocess.run([binary, "status", "--json"], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
    finally:
        os.rmdir(empty)
    events = []
    while True:
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            break
        off = 0
        while off < len(data):
            wd, mask, _cookie, n = struct.unpack_from("iIII", data, off)
            name = data[off + 16:off + 16 + n].split(b"\0")[0].decode()
            events.append((watched.get(wd, "?"), name, mask))
            off += 16 + n
    os.close(fd)
    try:
        gpus = json.loads(p.stdout.decode()).get("gpus", [])
    except ValueError:
        gpus = []
    g = gpus[0] if gpus else {}
    tap.ok(p.returncode == 0 and g.get("state") == "suspended",
           "suspended card: gpuscope exits 0 and shows it as suspended")
    readings = [k for k, v in g.items() if v is not None and (
        k.endswith(("_bytes", "_percent", "_celsius", "_watts", "_mhz", "_rpm", "_mv")) or
        k.startswith(("pcie_", "ras_", "ecc_", "clock_event")))]
    if not tap.ok(not readings, "suspended card: no reading"):
        tap.comment(readings)
    # what drm.c reads of any card: its PCI ids, the drm/ listing, runtime_status
    allowed = {(".", n) for n in ("vendor", "device", "subsystem_vendor", "subsystem_device",
                                  "drm", "power")}
    allowed |= {("power", "runtime_status"), ("drm", "")}
    other = sorted({"%s/%s" % (d, n or "(dir)") for d, n, m in events
                    if (d, n) not in allowed})
    tap.ok(any(n == "runtime_status" for _, n, _ in events),
           "suspended card: power/runtime_status is read")
    if not tap.ok(not other, "suspended card: nothing else of it is opened"):
        tap.comment(other)
    print("1..%d" % tap.n)
    return 1 if tap.failed else 0


def main(argv):
    if len(argv) >= 2 and argv[1] == "selftest":
        return selftest()
    if len(argv) == 4 and argv[1] == "run":
        return run(argv[2], argv[3])
    if len(argv) == 4 and argv[1] == "suspended":
        return suspended(argv[2], argv[3])
    if len(argv) == 4 and argv[1] == "build":
        print("%s %s %s" % build_root(argv[2], argv[3]))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
