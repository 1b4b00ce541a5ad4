#!/usr/bin/env python3
"""
Tests of the fake libnvidia-ml.so.1 (tests/fakenvml/) against
docs/scenario-format.md: through NVIDIA's Python binding (pynvml), as real
clients see it, and through raw ctypes for what pynvml hides (struct layouts,
the two-call pattern, short buffers, NULL pointers, symbols of the legacy
build). Prints TAP and exits non-zero when a test fails.

The libraries are $O/fakenvml/{current,legacy,stubs}/libnvidia-ml.so.1, O
defaulting to "build". The library reads its environment at nvmlInit, so each
scenario and time runs in a child process of its own (this file, run with
--child), which reports its checks as JSON lines.
"""
import ctypes
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from ctypes import (POINTER, Structure, byref, c_char_p, c_int, c_uint, c_ulonglong, c_void_p,
                    create_string_buffer, sizeof)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCN = os.path.join(HERE, "scenarios")
MiB = 1 << 20
GiB = 1 << 30

SUCCESS, UNINITIALIZED, INVALID_ARGUMENT, NOT_SUPPORTED = 0, 1, 2, 3
NO_PERMISSION, NOT_FOUND, INSUFFICIENT_SIZE, DRIVER_NOT_LOADED = 4, 6, 7, 9
TIMEOUT, GPU_IS_LOST, RESET_REQUIRED, LIB_RM_VERSION_MISMATCH = 10, 15, 16, 18
IN_USE, ARGUMENT_VERSION_MISMATCH, NOT_READY, UNKNOWN = 19, 25, 27, 999
NOT_AVAILABLE = (1 << 64) - 1
NO_INSTANCE = 0xFFFFFFFF

# nvmlErrorString of NVIDIA's library, code by code
ERROR_STRINGS = {
    0: "Success", 1: "Uninitialized", 2: "Invalid Argument", 3: "Not Supported",
    4: "Insufficient Permissions", 5: "Already Initialized", 6: "Not Found",
    7: "Insufficient Size", 8: "Insufficient External Power", 9: "Driver Not Loaded",
    10: "Timeout", 11: "Interrupt Request Issue", 12: "NVML Shared Library Not Found",
    13: "Function Not Found", 14: "Corrupted infoROM", 15: "GPU is lost",
    16: "GPU requires reset", 17: "GPU access blocked by the operating system",
    18: "Driver/library version mismatch", 19: "In use by another client",
    20: "Insufficient Memory", 21: "No data", 23: "Insufficient Resources",
    25: "Argument version mismatch", 999: "Unknown Error", 12345: "Unknown Error",
}


# --- NVML's structs, as the ABI lays them out (src/backend/nvml_abi.h) ---

class PciInfo(Structure):
    _fields_ = [("busIdLegacy", ctypes.c_char * 16), ("domain", c_uint), ("bus", c_uint),
                ("device", c_uint), ("pciDeviceId", c_uint), ("pciSubSystemId", c_uint),
                ("busId", ctypes.c_char * 32)]


class Memory(Structure):
    _fields_ = [("total", c_ulonglong), ("free", c_ulonglong), ("used", c_ulonglong)]


class MemoryV2(Structure):
    _fields_ = [("version", c_uint), ("total", c_ulonglong), ("reserved", c_ulonglong),
                ("free", c_ulonglong), ("used", c_ulonglong)]


class ProcV1(Structure):
    _fields_ = [("pid", c_uint), ("usedGpuMemory", c_ulonglong)]


class ProcV2(Structure):
    _fields_ = [("pid", c_uint), ("usedGpuMemory", c_ulonglong), ("gpuInstanceId", c_uint),
                ("computeInstanceId", c_uint)]


class ProcCc(Structure):
    _fields_ = ProcV2._fields_ + [("usedGpuCcProtectedMemory", c_ulonglong)]


class Sample(Structure):
    _fields_ = [("pid", c_uint), ("timeStamp", c_ulonglong), ("smUtil", c_uint),
                ("memUtil", c_uint), ("encUtil", c_uint), ("decUtil", c_uint)]


class FieldValue(Structure):
    _fields_ = [("fieldId", c_uint), ("scopeId", c_uint), ("timestamp", ctypes.c_longlong),
                ("latencyUsec", ctypes.c_longlong), ("valueType", c_uint),
                ("nvmlReturn", c_uint), ("value", c_ulonglong)]


class TemperatureV1(Structure):
    _fields_ = [("version", c_uint), ("sensorType", c_uint), ("temperature", c_int)]


class Margin(Structure):
    _fields_ = [("version", c_uint), ("marginTemperature", c_int)]


MEMORY_V2 = 0x02000028
TEMPERATURE_V1 = 0x0100000C
MARGIN_V1 = 0x01000008


def legacy_drops(name):
    """Whether an old driver library lacks this name (the legacy build)."""
    return (re.search(r"_v[0-9]+$", name) is not None or name == "nvmlInitWithFlags"
            or "ClocksEventReasons" in name)


def symbols():
    with open(os.path.join(HERE, "symbols.txt")) as f:
        return [line.strip() for line in f if line.strip()]


def cround(x):
    """C's round(): halves away from zero."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


# =====================================================================
# Child side: one scenario and environment, checks printed as JSON lines
# =====================================================================

L = None  # the fake library, through ctypes


class Check:
    def __init__(self, label):
        self.label = label

    def ok(self, cond, desc, diag=""):
        print(json.dumps({"ok": bool(cond), "desc": "%s: %s" % (self.label, desc),
                          "diag": "" if cond else diag}), flush=True)
        return bool(cond)

    def eq(self, got, want, desc):
        return self.ok(got == want, desc, "got %r, want %r" % (got, want))

    def rc(self, got, want, desc):
        return self.ok(got == want, desc, "returned %s, want %s" % (got, want))

    def raises(self, fn, code, desc):
        import pynvml
        try:
            got = fn()
        except pynvml.NVMLError as e:
            return self.rc(e.value, code, desc)
        return self.ok(False, desc, "returned %r, want NVML error %d" % (got, code))


def fn(name, restype=None):
    f = getattr(L, name)
    if restype is not None:
        f.restype = restype
    return f


def handle(i, name="nvmlDeviceGetHandleByIndex_v2"):
    h = c_void_p()
    rc = fn(name)(c_uint(i), byref(h))
    if rc != SUCCESS:
        raise RuntimeError("%s(%d) returned %d" % (name, i, rc))
    return h


def get_uint(name, h, *args):
    v = c_uint(0xDEADBEEF)
    rc = fn(name)(h, *args, byref(v))
    return rc, v.value


def get_ull(name, h, *args):
    v = c_ulonglong(0)
    rc = fn(name)(h, *args, byref(v))
    return rc, v.value


def get_string(name, h, length=96):
    buf = create_string_buffer(length)
    rc = fn(name)(h, buf, c_uint(length))
    return rc, buf.value.decode()


def processes(name, h, struct):
    """The two-call pattern; returns (rc, entries, raw bytes of the buffer)."""
    n = c_uint(0)
    rc = fn(name)(h, byref(n), None)
    if rc == SUCCESS:
        return rc, [], b""
    if rc != INSUFFICIENT_SIZE:
        return rc, None, b""
    # a guard of 0xAA bytes after the array shows entries that are too big
    size = sizeof(struct) * n.value + 64
    raw = (ctypes.c_ubyte * size)(*([0xAA] * size))
    rc = fn(name)(h, byref(n), ctypes.cast(raw, POINTER(struct)))
    arr = ctypes.cast(raw, POINTER(struct))
    return rc, [arr[i] for i in range(n.value)], bytes(raw)


def capture_stderr(call):
    """Runs call() with file descriptor 2 going to a file; returns (result, text)."""
    with tempfile.TemporaryFile() as f:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(f.fileno(), 2)
        try:
            result = call()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        return result, f.read().decode(errors="replace")


# --- full.scn at t = 12, through pynvml ---

def child_full_pynvml(c, args):
    import pynvml as N
    N.nvmlInit()
    c.ok(N.nvmlLib is not None and N.nvmlLib._handle == L._handle,
         "pynvml's CDLL('libnvidia-ml.so.1') is the fake (found by soname)")
    c.eq(N.nvmlSystemGetDriverVersion(), "590.48.01", "driver_version")
    c.eq(N.nvmlSystemGetNVMLVersion(), "13.590.48.01", "nvml_version")
    c.eq(N.nvmlSystemGetCudaDriverVersion(), 13010, "cuda_version")
    c.eq(N.nvmlSystemGetCudaDriverVersion_v2(), 13010, "cuda_version (_v2)")
    c.eq(N.nvmlDeviceGetCount(), 3, "three [gpu] sections")

    h = N.nvmlDeviceGetHandleByIndex(0)
    c.eq(N.nvmlDeviceGetName(h), "NVIDIA H100 80GB HBM3", "name")
    c.eq(N.nvmlDeviceGetUUID(h), "GPU-5d2c1a9e-0f4b-4c1e-9a61-3b7f00c0ffee", "uuid")
    c.eq(N.nvmlDeviceGetSerial(h), "1654922006536", "serial")
    c.eq(N.nvmlDeviceGetVbiosVersion(h), "96.00.A5.00.01", "vbios")
    c.eq(N.nvmlDeviceGetInforomImageVersion(h), "G520.0200.00.05", "inforom_image")
    c.eq(N.nvmlDeviceGetBoardPartNumber(h), "692-2G520-0200-000", "board_part_number")
    pci = N.nvmlDeviceGetPciInfo(h)
    c.eq((pci.busId, pci.busIdLegacy), ("00000000:00:09.0", "0000:00:09.0"),
         "pci_bus_id gives busId and busIdLegacy")
    c.eq((pci.domain, pci.bus, pci.device), (0, 0, 9), "pci_bus_id gives domain, bus, device")
    c.eq((pci.pciDeviceId, pci.pciSubSystemId), (0x233010DE, 0x16C110DE),
         "pci_device_id, pci_subsystem_id")
    c.eq(N.nvmlDeviceGetCudaComputeCapability(h), (9, 0), "compute_capability")
    c.eq(N.nvmlDeviceGetBrand(h), 2, "brand")
    c.eq(N.nvmlDeviceGetArchitecture(h), 9, "architecture")
    c.eq(N.nvmlDeviceGetMinorNumber(h), 3, "minor_number")
    c.eq(N.nvmlDeviceGetIndex(h), 0, "nvmlDeviceGetIndex")

    c.eq(N.nvmlDeviceGetTemperature(h, 0), 59, "temperature")
    c.eq(N.nvmlDeviceGetTemperatureV(h, 0), 59, "temperature (nvmlDeviceGetTemperatureV)")
    c.eq([N.nvmlDeviceGetTemperatureThreshold(h, i) for i in range(4)], [92, 89, 95, 87],
         "temp_shutdown, temp_slowdown, temp_mem_max, temp_gpu_max are thresholds 0..3")
    c.raises(lambda: N.nvmlDeviceGetTemperatureThreshold(h, 4), NOT_SUPPORTED,
             "acoustic threshold: NOT_SUPPORTED")
    c.eq(N.nvmlDeviceGetMarginTemperature(h), 28, "temp_margin")
    c.eq(N.nvmlDeviceGetFieldValues(h, [82])[0].value.uiVal, 55, "memory_temperature: field 82")
    c.eq(N.nvmlDeviceGetNumFans(h), 2, "num_fans")
    c.eq(N.nvmlDeviceGetFanSpeed(h), 40, "fan_speed")
    c.eq([N.nvmlDeviceGetFanSpeed_v2(h, i) for i in range(2)], [40, 40],
         "fan_speed for every fan (_v2)")
    c.raises(lambda: N.nvmlDeviceGetFanSpeed_v2(h, 2), INVALID_ARGUMENT,
             "fan index past num_fans: INVALID_ARGUMENT")

    c.eq(N.nvmlDeviceGetPowerUsage(h), 629450, "power_usage")
    c.eq(N.nvmlDeviceGetEnforcedPowerLimit(h), 700000, "power_limit_enforced")
    c.eq(N.nvmlDeviceGetPowerManagementLimit(h), 690000, "power_limit")
    c.eq(N.nvmlDeviceGetPowerManagementDefaultLimit(h), 680000, "power_limit_default")
    c.eq(N.nvmlDeviceGetPowerManagementLimitConstraints(h), [200000, 710000],
         "power_limit_min, power_limit_max")
    c.eq(N.nvmlDeviceGetTotalEnergyConsumption(h), 0x1C8A2F3B4, "energy (hex)")
    fv = N.nvmlDeviceGetFieldValues(h, [185, 186, 94, 4242])
    c.eq([(v.fieldId, v.nvmlReturn) for v in fv], [(185, 0), (186, 0), (94, 0), (4242, 3)],
         "field values: 185, 186, 94 answered, others NOT_SUPPORTED")
    c.eq((fv[0].value.uiVal, fv[1].value.uiVal, fv[2].value.ullVal), (629450, 588390, 9),
         "power_usage is field 185, power_instant 186, pcie_replay 94")
    c.eq(fv[0].timestamp, 12 * 1000000, "field timestamp: the fake's wall clock in us")

    m = N.nvmlDeviceGetMemoryInfo(h)
    c.eq((m.total, m.used, m.free), (81559 * MiB, (19818 + 479) * MiB, (81559 - 19818 - 479) * MiB),
         "nvmlDeviceGetMemoryInfo: used includes reserved")
    m = N.nvmlDeviceGetMemoryInfo(h, version=N.nvmlMemory_v2)
    c.eq((m.total, m.reserved, m.used, m.free),
         (81559 * MiB, 479 * MiB, 19818 * MiB, (81559 - 479 - 19818) * MiB),
         "nvmlDeviceGetMemoryInfo_v2: used excludes reserved")
    b = N.nvmlDeviceGetBAR1MemoryInfo(h)
    c.eq((b.bar1Total, b.bar1Used, b.bar1Free), (131072 * MiB, 19819 * MiB, 111253 * MiB),
         "bar1_total, bar1_used")
    u = N.nvmlDeviceGetUtilizationRates(h)
    c.eq((u.gpu, u.memory), (100, 11), "util_gpu, util_memory")
    c.eq([N.nvmlDeviceGetEncoderUtilization(h), N.nvmlDeviceGetDecoderUtilization(h),
          N.nvmlDeviceGetJpgUtilization(h), N.nvmlDeviceGetOfaUtilization(h)],
         [[1, 167000], [2, 167000], [3, 167000], [4, 167000]],
         "util_encoder, util_decoder, util_jpeg, util_ofa with a 167000 us period")

    c.eq([N.nvmlDeviceGetClockInfo(h, i) for i in range(4)], [1980, 1981, 2619, 1545],
         "clock_graphics, clock_sm, clock_mem, clock_video")
    c.eq([N.nvmlDeviceGetClock(h, i, 0) for i in range(4)], [1980, 1981, 2619, 1545],
         "nvmlDeviceGetClock(type, CURRENT)")
    c.raises(lambda: N.nvmlDeviceGetClock(h, 0, 1), NOT_SUPPORTED,
             "nvmlDeviceGetClock(type, APP_CLOCK_TARGET): NOT_SUPPORTED")
    c.eq([N.nvmlDeviceGetMaxClockInfo(h, i) for i in range(4)], [1990, 1991, 2620, 1755],
         "max_clock_*")
    c.eq(N.nvmlDeviceGetPerformanceState(h), 0, "pstate")
    c.eq((N.nvmlDeviceGetCurrentClocksEventReasons(h),
          N.nvmlDeviceGetCurrentClocksThrottleReasons(h)), (4, 4),
         "clocks_event_reasons under both names")
    c.eq((N.nvmlDeviceGetSupportedClocksEventReasons(h),
          N.nvmlDeviceGetSupportedClocksThrottleReasons(h)), (0x1FF, 0x1FF),
         "clocks_event_reasons_supported under both names")

    c.eq((N.nvmlDeviceGetCurrPcieLinkGeneration(h), N.nvmlDeviceGetMaxPcieLinkGeneration(h),
          N.nvmlDeviceGetGpuMaxPcieLinkGeneration(h)), (3, 4, 5),
         "pcie_gen, pcie_gen_max, pcie_gen_gpu_max")
    c.eq((N.nvmlDeviceGetCurrPcieLinkWidth(h), N.nvmlDeviceGetMaxPcieLinkWidth(h)), (8, 16),
         "pcie_width, pcie_width_max")
    c.eq(N.nvmlDeviceGetPcieReplayCounter(h), 9, "pcie_replay")
    c.eq((N.nvmlDeviceGetPcieThroughput(h, 0), N.nvmlDeviceGetPcieThroughput(h, 1)),
         (3092, 6346), "pcie_tx, pcie_rx")

    c.eq(N.nvmlDeviceGetPersistenceMode(h), 1, "persistence_mode")
    c.eq(N.nvmlDeviceGetComputeMode(h), 3, "compute_mode")
    c.eq((N.nvmlDeviceGetDisplayMode(h), N.nvmlDeviceGetDisplayActive(h)), (0, 1),
         "display_mode, display_active")
    c.eq(N.nvmlDeviceGetMigMode(h), [0, 1], "mig_mode, mig_mode_pending")
    c.eq(N.nvmlDeviceGetEccMode(h), [1, 0], "ecc_mode, ecc_mode_pending")
    c.eq([N.nvmlDeviceGetTotalEccErrors(h, e, k) for k in (0, 1) for e in (0, 1)],
         [1, 2, 3, 4], "ecc_{corrected,uncorrected}_{volatile,aggregate}")
    sbe, dbe = N.nvmlDeviceGetRetiredPages(h, 0), N.nvmlDeviceGetRetiredPages(h, 1)
    c.eq((len(sbe), len(dbe)), (2, 1), "retired_sbe, retired_dbe (two-call pattern)")
    c.ok(len(set(sbe + dbe)) == 3 and all(a % 4096 == 0 for a in sbe + dbe),
         "retired page addresses are distinct and page-aligned", repr(sbe + dbe))
    c.eq(N.nvmlDeviceGetRetiredPagesPendingStatus(h), 1, "retired_pending")
    c.eq(N.nvmlDeviceGetRemappedRows(h), (5, 6, 1, 0), "remapped_*")
    c.eq(N.nvmlDeviceGetEncoderStats(h), (2, 60, 1500), "encoder_*")
    c.eq(N.nvmlDeviceGetSupportedEventTypes(h), 0x1C, "event_types")
    s = N.nvmlEventSetCreate()
    N.nvmlDeviceRegisterEvents(h, N.nvmlEventTypeXidCriticalError, s)
    c.raises(lambda: N.nvmlEventSetWait(s, 0), TIMEOUT,
             "xid: nothing while FAKE_NVML_TIME holds scenario time still")
    N.nvmlEventSetFree(s)

    procs = [(p.pid, p.usedGpuMemory, p.gpuInstanceId, p.computeInstanceId)
             for p in N.nvmlDeviceGetComputeRunningProcesses(h)]
    c.eq(procs, [(11345, 15690 * MiB, NO_INSTANCE, NO_INSTANCE),
                 (11327, 2566 * MiB, NO_INSTANCE, NO_INSTANCE),
                 (3000, GiB, NO_INSTANCE, NO_INSTANCE), (4000, 512 * MiB, 1, 0)],
         "compute list: compute, compute+graphics and mps, in file order, with MIG ids")
    procs = [(p.pid, p.usedGpuMemory) for p in N.nvmlDeviceGetGraphicsRunningProcesses(h)]
    c.eq(procs, [(2201, None), (3000, GiB)], "graphics list; used_memory N/A is not available")
    c.eq([p.pid for p in N.nvmlDeviceGetMPSComputeRunningProcesses(h)], [4000], "MPS list")
    samples = N.nvmlDeviceGetProcessUtilization(h, 0)
    c.eq([(s.pid, s.smUtil, s.memUtil, s.encUtil, s.decUtil, s.timeStamp) for s in samples],
         [(11345, 99, 10, 0, 0, 12000000), (2201, 150, 0, 3, 0, 12000000),
          (3000, 0, 0, 0, 7, 12000000), (4000, 0, 1, 0, 0, 12000000)],
         "process samples: busy processes only, util > 100 kept, stamped 12 s")
    c.raises(lambda: N.nvmlDeviceGetProcessUtilization(h, 12000000), NOT_FOUND,
             "no sample newer than lastSeenTimeStamp: NOT_FOUND")
    c.eq(N.nvmlSystemGetProcessName(11345), "./gpu_burn", "process name")
    c.raises(lambda: N.nvmlSystemGetProcessName(5000), NOT_SUPPORTED,
             "process without name: NOT_SUPPORTED")
    c.raises(lambda: N.nvmlSystemGetProcessName(99999), NOT_FOUND,
             "PID not in the scenario: NOT_FOUND")

    for key, lookup in (("uuid", lambda: N.nvmlDeviceGetHandleByUUID(
            "GPU-5d2c1a9e-0f4b-4c1e-9a61-3b7f00c0ffee")),
            ("serial", lambda: N.nvmlDeviceGetHandleBySerial("1654922006536")),
            ("bus id", lambda: N.nvmlDeviceGetHandleByPciBusId("00000000:00:09.0")),
            ("legacy bus id", lambda: N.nvmlDeviceGetHandleByPciBusId("0000:00:09.0")),
            ("short bus id", lambda: N.nvmlDeviceGetHandleByPciBusId("00:09.0"))):
        c.eq(N.nvmlDeviceGetIndex(lookup()), 0, "handle by %s" % key)
    c.eq(N.nvmlDeviceGetIndex(N.nvmlDeviceGetHandleByPciBusId("00000000:41:00.0")), 2,
         "handle by the bus id of GPU 2")
    c.raises(lambda: N.nvmlDeviceGetHandleByUUID("GPU-nope"), NOT_FOUND,
             "unknown uuid: NOT_FOUND")
    c.raises(lambda: N.nvmlDeviceGetHandleByPciBusId("00000000:77:00.0"), NOT_FOUND,
             "unknown bus id: NOT_FOUND")

    # GPU 1: absent keys, N/A, errors, defaults
    h = N.nvmlDeviceGetHandleByIndex(1)
    c.eq(N.nvmlDeviceGetName(h), "NVIDIA GeForce RTX 4080 SUPER # not a comment",
         "quoted value kept verbatim")
    c.raises(lambda: N.nvmlDeviceGetSerial(h), NOT_SUPPORTED, "absent string: NOT_SUPPORTED")
    c.raises(lambda: N.nvmlDeviceGetSupportedEventTypes(h), NOT_SUPPORTED,
             "no event_types and no xid: events NOT_SUPPORTED")
    c.raises(lambda: N.nvmlDeviceGetCudaComputeCapability(h), NOT_SUPPORTED,
             "absent compute_capability: NOT_SUPPORTED")
    c.raises(lambda: N.nvmlDeviceGetMemoryInfo(h), NOT_SUPPORTED,
             "memory_used = N/A: NOT_SUPPORTED")
    c.raises(lambda: N.nvmlDeviceGetMemoryInfo(h, version=N.nvmlMemory_v2), NOT_SUPPORTED,
             "memory_used = N/A: NOT_SUPPORTED (_v2)")
    c.raises(lambda: N.nvmlDeviceGetUtilizationRates(h), NOT_SUPPORTED,
             "util_gpu without util_memory: NOT_SUPPORTED")
    c.raises(lambda: N.nvmlDeviceGetPowerUsage(h), NO_PERMISSION, "error NO_PERMISSION")
    c.raises(lambda: N.nvmlDeviceGetTemperature(h, 0), UNKNOWN, "error UNKNOWN")
    c.raises(lambda: N.nvmlDeviceGetPowerManagementLimitConstraints(h), NOT_SUPPORTED,
             "power_limit_min without power_limit_max: NOT_SUPPORTED")
    c.raises(lambda: N.nvmlDeviceGetFanSpeed(h), NOT_SUPPORTED, "fan_speed = N/A")
    c.raises(lambda: N.nvmlDeviceGetClockInfo(h, 0), NOT_SUPPORTED, "absent clock")
    c.eq(N.nvmlDeviceGetMigMode(h), [1, 1], "mig_mode_pending defaults to mig_mode")
    c.eq(N.nvmlDeviceGetEccMode(h), [0, 0], "ecc_mode_pending defaults to ecc_mode")
    c.eq(N.nvmlDeviceGetRetiredPages(h, 0), [], "retired_sbe = 0: no pages")
    c.eq(N.nvmlDeviceGetMinorNumber(h), 1, "minor_number defaults to the index")
    pci = N.nvmlDeviceGetPciInfo(h)
    c.eq((pci.busId, pci.bus, pci.pciDeviceId), ("00000000:02:00.0", 2, 0),
         "default pci_bus_id: 00000000:XX:00.0 with XX the index + 1")
    procs = [(p.pid, p.usedGpuMemory) for p in N.nvmlDeviceGetComputeRunningProcesses(h)]
    c.eq(procs, [(11345, 100 * MiB), (5000, None)],
         "a PID on two GPUs; absent used_memory is not available")
    c.eq([(s.pid, s.smUtil) for s in N.nvmlDeviceGetProcessUtilization(h, 0)], [(11345, 5)],
         "process samples of GPU 1")

    h = N.nvmlDeviceGetHandleByIndex(2)
    c.eq(N.nvmlDeviceGetNumFans(h), 1, "num_fans defaults to 1 when fan_speed is set")
    c.eq(N.nvmlDeviceGetFanSpeed_v2(h, 0), 30, "fan_speed (_v2)")
    c.eq(N.nvmlDeviceGetComputeRunningProcesses(h), [], "no process: empty list")
    c.raises(lambda: N.nvmlDeviceGetProcessUtilization(h, 0), NOT_FOUND,
             "no process sample: NOT_FOUND")
    pci = N.nvmlDeviceGetPciInfo(h)
    c.eq((pci.busId, pci.busIdLegacy, pci.bus), ("00000000:41:00.0", "0000:41:00.0", 0x41),
         "a 4-digit domain in pci_bus_id")
    c.eq(N.nvmlDeviceGetIndex(N.nvmlDeviceGetHandleBySerial("0000000000002")), 2,
         "handle by serial of GPU 2")
    c.eq(N.nvmlDeviceGetMinorNumber(h), 2, "minor_number of GPU 2")
    c.raises(lambda: N.nvmlDeviceGetArchitecture(h), NOT_SUPPORTED, "absent architecture")

    for code, text in sorted(ERROR_STRINGS.items()):
        c.eq(N.nvmlErrorString(code), text, "nvmlErrorString(%d)" % code)
    N.nvmlShutdown()


# --- full.scn at t = 12, through ctypes ---

def child_full_raw(c, args):
    c.rc(fn("nvmlInit_v2")(), SUCCESS, "nvmlInit_v2")
    c.eq(fn("gpuscope_fake_nvml_scenario", c_char_p)().decode(),
         os.environ["FAKE_NVML_SCENARIO"], "gpuscope_fake_nvml_scenario()")
    h0, h1, h2 = handle(0), handle(1), handle(2)
    c.eq(handle(0, "nvmlDeviceGetHandleByIndex").value, h0.value,
         "plain and _v2 GetHandleByIndex give the same handle")
    for plain in ("nvmlDeviceGetCount", "nvmlSystemGetCudaDriverVersion"):
        a, b = c_uint(), c_uint()
        fn(plain)(byref(a))
        fn(plain + "_v2")(byref(b))
        c.eq(a.value, b.value, "%s and _v2 agree" % plain)

    # strings: NVML's buffer rule
    name = "NVIDIA H100 80GB HBM3"
    c.eq(get_string("nvmlDeviceGetName", h0, len(name) + 1), (SUCCESS, name),
         "name in a buffer of exactly its size")
    c.eq(get_string("nvmlDeviceGetName", h0, len(name))[0], INSUFFICIENT_SIZE,
         "name one byte short: INSUFFICIENT_SIZE")
    c.rc(fn("nvmlDeviceGetName")(h0, None, c_uint(96)), INVALID_ARGUMENT,
         "name into NULL: INVALID_ARGUMENT")
    buf = create_string_buffer(5)
    c.rc(fn("nvmlSystemGetDriverVersion")(buf, c_uint(5)), INSUFFICIENT_SIZE,
         "driver version in 5 bytes: INSUFFICIENT_SIZE")
    c.rc(fn("nvmlSystemGetProcessName")(c_uint(11345), buf, c_uint(5)), INSUFFICIENT_SIZE,
         "process name in 5 bytes: INSUFFICIENT_SIZE")
    c.rc(fn("nvmlDeviceGetUUID")(h0, create_string_buffer(0), c_uint(0)), INSUFFICIENT_SIZE,
         "length 0: INSUFFICIENT_SIZE")

    # NULL pointers, bad handles, bad enums
    for call in ("nvmlDeviceGetPowerUsage", "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetPciInfo_v3",
                 "nvmlDeviceGetUtilizationRates", "nvmlDeviceGetTotalEnergyConsumption"):
        c.rc(fn(call)(h0, None), INVALID_ARGUMENT, "%s(NULL): INVALID_ARGUMENT" % call)
    c.rc(fn("nvmlDeviceGetCount_v2")(None), INVALID_ARGUMENT, "GetCount(NULL)")
    c.rc(fn("nvmlDeviceGetHandleByIndex_v2")(c_uint(0), None), INVALID_ARGUMENT,
         "GetHandleByIndex(0, NULL)")
    c.rc(fn("nvmlDeviceGetHandleByIndex_v2")(c_uint(3), byref(c_void_p())), INVALID_ARGUMENT,
         "GetHandleByIndex past the count: INVALID_ARGUMENT")
    c.rc(fn("nvmlDeviceGetHandleByUUID")(None, byref(c_void_p())), INVALID_ARGUMENT,
         "GetHandleByUUID(NULL)")
    c.rc(fn("nvmlDeviceGetHandleByPciBusId_v2")(b"zz", byref(c_void_p())), INVALID_ARGUMENT,
         "GetHandleByPciBusId('zz'): INVALID_ARGUMENT")
    for what, bad in (("NULL", c_void_p()), ("the slot after the last GPU", c_void_p(h0.value + 3)),
                      ("a pointer elsewhere", c_void_p(ctypes.addressof(buf)))):
        c.eq(get_uint("nvmlDeviceGetPowerUsage", bad)[0], INVALID_ARGUMENT,
             "handle %s: INVALID_ARGUMENT" % what)
    c.eq(get_uint("nvmlDeviceGetTemperature", h0, c_uint(1))[0], INVALID_ARGUMENT,
         "temperature sensor 1: INVALID_ARGUMENT")
    c.eq(get_uint("nvmlDeviceGetClockInfo", h0, c_uint(4))[0], INVALID_ARGUMENT,
         "clock type 4: INVALID_ARGUMENT")
    c.eq(get_uint("nvmlDeviceGetClock", h0, c_uint(0), c_uint(4))[0], INVALID_ARGUMENT,
         "clock id 4: INVALID_ARGUMENT")
    c.eq(get_uint("nvmlDeviceGetPcieThroughput", h0, c_uint(2))[0], INVALID_ARGUMENT,
         "PCIe counter 2: INVALID_ARGUMENT")
    c.eq(get_ull("nvmlDeviceGetTotalEccErrors", h0, c_uint(2), c_uint(0))[0], INVALID_ARGUMENT,
         "ECC error type 2: INVALID_ARGUMENT")

    # version words
    m = MemoryV2(version=MEMORY_V2)
    c.rc(fn("nvmlDeviceGetMemoryInfo_v2")(h0, byref(m)), SUCCESS, "nvmlMemory_v2")
    c.eq(m.used, 19818 * MiB, "nvmlMemory_v2 filled")
    for bad in (0, 0x01000028, 0x02000018):
        c.rc(fn("nvmlDeviceGetMemoryInfo_v2")(h0, byref(MemoryV2(version=bad))),
             ARGUMENT_VERSION_MISMATCH, "nvmlMemory_v2 version 0x%08x: mismatch" % bad)
    t = TemperatureV1(version=TEMPERATURE_V1, sensorType=0)
    c.rc(fn("nvmlDeviceGetTemperatureV")(h0, byref(t)), SUCCESS, "nvmlTemperature_v1")
    c.eq(t.temperature, 59, "nvmlTemperature_v1 filled")
    c.rc(fn("nvmlDeviceGetTemperatureV")(h0, byref(TemperatureV1(version=0x0100000B))),
         ARGUMENT_VERSION_MISMATCH, "nvmlTemperature_v1 wrong version")
    c.rc(fn("nvmlDeviceGetTemperatureV")(h0, byref(TemperatureV1(version=TEMPERATURE_V1,
                                                                  sensorType=1))),
         INVALID_ARGUMENT, "nvmlTemperature_v1 sensor 1: INVALID_ARGUMENT")
    mt = Margin(version=MARGIN_V1)
    c.rc(fn("nvmlDeviceGetMarginTemperature")(h0, byref(mt)), SUCCESS, "nvmlMarginTemperature_v1")
    c.eq(mt.marginTemperature, 28, "margin filled")
    c.rc(fn("nvmlDeviceGetMarginTemperature")(h0, byref(Margin(version=0x02000008))),
         ARGUMENT_VERSION_MISMATCH, "margin wrong version")

    # PCI info: the plain name writes the 52-byte first struct only
    raw = (ctypes.c_ubyte * 68)(*([0xAA] * 68))
    c.rc(fn("nvmlDeviceGetPciInfo")(h0, raw), SUCCESS, "plain nvmlDeviceGetPciInfo")
    pci = PciInfo.from_buffer_copy(bytes(raw))
    c.eq((pci.busIdLegacy, pci.device, pci.pciDeviceId), (b"0000:00:09.0", 9, 0x233010DE),
         "plain nvmlDeviceGetPciInfo fills the first struct")
    c.ok(bytes(raw)[36:52] == bytes(16) and bytes(raw)[52:] == b"\xaa" * 16,
         "plain nvmlDeviceGetPciInfo writes 52 bytes, reserved zeroed", bytes(raw).hex())
    for name in ("nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo_v3"):
        p = PciInfo()
        ctypes.memset(byref(p), 0xAA, sizeof(p))
        c.rc(fn(name)(h0, byref(p)), SUCCESS, name)
        c.eq((p.busId, p.busIdLegacy, p.bus, p.device, p.pciSubSystemId),
             (b"00000000:00:09.0", b"0000:00:09.0", 0, 9, 0x16C110DE), "%s fills 68 bytes" % name)

    # running processes: three layouts, two-call pattern
    for name, struct in (("nvmlDeviceGetComputeRunningProcesses", ProcV1),
                         ("nvmlDeviceGetComputeRunningProcesses_v2", ProcV2),
                         ("nvmlDeviceGetComputeRunningProcesses_v3", ProcV2)):
        rc, entries, raw = processes(name, h0, struct)
        c.rc(rc, SUCCESS, name)
        c.eq([(e.pid, e.usedGpuMemory) for e in entries],
             [(11345, 15690 * MiB), (11327, 2566 * MiB), (3000, GiB), (4000, 512 * MiB)],
             "%s entries of %d bytes" % (name, sizeof(struct)))
        c.ok(raw[4 * sizeof(struct):] == b"\xaa" * 64, "%s writes no further" % name)
        if struct is ProcV2:
            c.eq((entries[3].gpuInstanceId, entries[3].computeInstanceId, entries[0].gpuInstanceId),
                 (1, 0, NO_INSTANCE), "%s MIG ids" % name)
    n = c_uint(0)
    c.rc(fn("nvmlDeviceGetGraphicsRunningProcesses")(h0, byref(n), None), INSUFFICIENT_SIZE,
         "count 0: INSUFFICIENT_SIZE")
    c.eq(n.value, 2, "... with the count needed")
    n = c_uint(1)
    c.rc(fn("nvmlDeviceGetGraphicsRunningProcesses_v3")(h0, byref(n), (ProcV2 * 1)()),
         INSUFFICIENT_SIZE, "count too small: INSUFFICIENT_SIZE")
    c.eq(n.value, 2, "... with the count needed")
    n = c_uint(10)
    arr = (ProcV2 * 10)()
    c.rc(fn("nvmlDeviceGetGraphicsRunningProcesses_v3")(h0, byref(n), arr), SUCCESS,
         "count larger than needed")
    c.eq((n.value, arr[0].pid, arr[0].usedGpuMemory), (2, 2201, NOT_AVAILABLE),
         "count set to the processes written; N/A memory is NVML_VALUE_NOT_AVAILABLE")
    n = c_uint(10)
    c.rc(fn("nvmlDeviceGetGraphicsRunningProcesses_v3")(h0, byref(n), None), INVALID_ARGUMENT,
         "room but NULL array: INVALID_ARGUMENT")
    c.rc(fn("nvmlDeviceGetGraphicsRunningProcesses_v3")(h0, None, None), INVALID_ARGUMENT,
         "NULL count: INVALID_ARGUMENT")
    n = c_uint(0)
    c.rc(fn("nvmlDeviceGetComputeRunningProcesses_v3")(h2, byref(n), None), SUCCESS,
         "no process: SUCCESS")
    c.eq(n.value, 0, "... with count 0")
    rc, entries, _ = processes("nvmlDeviceGetMPSComputeRunningProcesses", h0, ProcV1)
    c.eq([e.pid for e in entries], [4000], "plain MPS list")

    # process utilisation: its own two-call pattern
    n = c_uint(0)
    c.rc(fn("nvmlDeviceGetProcessUtilization")(h0, None, byref(n), c_ulonglong(0)),
         INSUFFICIENT_SIZE, "utilisation into NULL: INSUFFICIENT_SIZE")
    c.eq(n.value, 4, "... with the count")
    n = c_uint(2)
    c.rc(fn("nvmlDeviceGetProcessUtilization")(h0, (Sample * 2)(), byref(n), c_ulonglong(0)),
         INSUFFICIENT_SIZE, "utilisation count too small")
    c.rc(fn("nvmlDeviceGetProcessUtilization")(h0, None, None, c_ulonglong(0)),
         INVALID_ARGUMENT, "utilisation NULL count")
    n = c_uint(8)
    s = (Sample * 8)()
    c.rc(fn("nvmlDeviceGetProcessUtilization")(h0, s, byref(n), c_ulonglong(11999999)), SUCCESS,
         "utilisation just after lastSeenTimeStamp")
    c.eq((n.value, s[1].pid, s[1].smUtil), (4, 2201, 150), "32-byte samples")

    # retired pages: two-call pattern
    n = c_uint(0)
    c.rc(fn("nvmlDeviceGetRetiredPages")(h0, c_uint(0), byref(n), None), INSUFFICIENT_SIZE,
         "retired pages count 0: INSUFFICIENT_SIZE")
    c.eq(n.value, 2, "... with the count")
    n = c_uint(2)
    c.rc(fn("nvmlDeviceGetRetiredPages")(h0, c_uint(0), byref(n), None), INVALID_ARGUMENT,
         "retired pages NULL array")
    c.rc(fn("nvmlDeviceGetRetiredPages")(h0, c_uint(2), byref(n), None), INVALID_ARGUMENT,
         "retirement cause 2: INVALID_ARGUMENT")

    # field values
    fv = (FieldValue * 3)(FieldValue(fieldId=185, scopeId=1), FieldValue(fieldId=94),
                          FieldValue(fieldId=82))
    c.rc(fn("nvmlDeviceGetFieldValues")(h0, c_int(3), fv), SUCCESS, "field values")
    c.eq([(v.nvmlReturn, v.valueType) for v in fv], [(NOT_SUPPORTED, 0), (SUCCESS, 3),
                                                     (SUCCESS, 1)],
         "power of scope 1: NOT_SUPPORTED; replay counter unsigned long long; temperature uint")
    c.rc(fn("nvmlDeviceGetFieldValues")(h0, c_int(-1), fv), INVALID_ARGUMENT,
         "field values count -1")
    c.rc(fn("nvmlDeviceGetFieldValues")(h0, c_int(1), None), INVALID_ARGUMENT,
         "field values NULL")

    # stubs: every other name answers NOT_SUPPORTED
    for name in ("nvmlDeviceGetPciInfoExt", "nvmlSystemEventSetWait", "nvmlSystemRegisterEvents",
                 "nvmlSystemEventSetCreate", "nvmlDeviceCreateGpuInstance", "nvmlUnitGetCount",
                 "nvmlDeviceGetRunningProcessDetailList", "nvmlInternalGetExportTable"):
        c.rc(fn(name)(h0, None, None, None), NOT_SUPPORTED, "%s: NOT_SUPPORTED" % name)
    L.nvmlErrorString.restype = c_char_p
    for code, text in sorted(ERROR_STRINGS.items()):
        c.eq(L.nvmlErrorString(c_uint(code)).decode(), text, "nvmlErrorString(%d)" % code)
    c.rc(fn("nvmlShutdown")(), SUCCESS, "nvmlShutdown")


def child_lifecycle(c, args):
    c.rc(fn("nvmlDeviceGetCount_v2")(byref(c_uint())), UNINITIALIZED,
         "a call before nvmlInit: UNINITIALIZED")
    c.rc(fn("nvmlShutdown")(), UNINITIALIZED, "nvmlShutdown before nvmlInit: UNINITIALIZED")
    c.rc(fn("nvmlDeviceGetPciInfoExt")(None, None), NOT_SUPPORTED,
         "a stub before nvmlInit: NOT_SUPPORTED")
    c.eq(fn("gpuscope_fake_nvml_scenario", c_char_p)().decode(),
         os.environ["FAKE_NVML_SCENARIO"], "gpuscope_fake_nvml_scenario() before nvmlInit")
    c.rc(fn("nvmlInit")(), SUCCESS, "nvmlInit")
    c.rc(fn("nvmlInit_v2")(), SUCCESS, "nvmlInit_v2")
    c.rc(fn("nvmlInitWithFlags")(c_uint(1)), SUCCESS, "nvmlInitWithFlags(NO_GPUS)")
    h = handle(1)
    for i in range(2):
        c.rc(fn("nvmlShutdown")(), SUCCESS, "nvmlShutdown %d of 3" % (i + 1))
        c.eq(get_string("nvmlDeviceGetName", h)[0], SUCCESS, "still initialised")
    c.rc(fn("nvmlShutdown")(), SUCCESS, "nvmlShutdown 3 of 3")
    c.eq(get_string("nvmlDeviceGetName", h)[0], UNINITIALIZED,
         "after the last nvmlShutdown: UNINITIALIZED")
    c.rc(fn("nvmlShutdown")(), UNINITIALIZED, "one nvmlShutdown too many: UNINITIALIZED")
    c.rc(fn("nvmlInit_v2")(), SUCCESS, "nvmlInit_v2 again (the scenario is read again)")
    c.eq(get_string("nvmlDeviceGetName", h), (SUCCESS, "NVIDIA GeForce RTX 4080 SUPER # not a "
                                                        "comment"),
         "a handle from before nvmlShutdown still works")
    c.eq(handle(1).value, h.value, "handles are the same after nvmlShutdown and nvmlInit")
    c.rc(fn("nvmlShutdown")(), SUCCESS, "nvmlShutdown")


# --- expressions.scn at the time in args[0] ---

def steps(t, pairs):
    v = pairs[0][1]
    for tt, vv in pairs[1:]:
        if tt <= t:
            v = vv
    return v


def ramp(t, v0, v1, t0, t1):
    if t <= t0:
        return v0
    if t >= t1:
        return v1
    return v0 + (v1 - v0) * (t - t0) / (t1 - t0)


def square(t, low, high, period, duty=0.5):
    phase = t - period * math.floor(t / period)
    return high if phase < duty * period else low


def sine(t, lo, hi, period):
    return lo + (hi - lo) * (1 - math.cos(2 * math.pi * t / period)) / 2


def child_expressions(c, args):
    t = float(args[0])
    c.label = "expressions.scn t=%s" % args[0]
    c.rc(fn("nvmlInit_v2")(), SUCCESS, "nvmlInit_v2")
    h = handle(0)
    want_uint = {
        "nvmlDeviceGetTemperature": (steps(t, [(10, 40), (20, 50), (30, 60)]), c_uint(0)),
        "nvmlDeviceGetPowerUsage": (ramp(t, 100000, 300000, 10, 20),),
        "nvmlDeviceGetFanSpeed": (sine(t, 20, 80, 40),),
        "nvmlDeviceGetPcieThroughput": (steps(t, [(0, 1), (10, 2)]), c_uint(0)),
    }
    for name, (value, *extra) in want_uint.items():
        c.eq(get_uint(name, h, *extra), (SUCCESS, cround(value)), name)
    c.eq(get_uint("nvmlDeviceGetPcieThroughput", h, c_uint(1)),
         (SUCCESS, cround(ramp(t, 1536, 2560, 0, 10))), "ramp with unit suffixes after a space")
    u = (c_uint * 2)()
    c.rc(fn("nvmlDeviceGetUtilizationRates")(h, u), SUCCESS, "utilization")
    c.eq(list(u), [square(t, 0, 100, 20, 0.7), square(t, 5, 50, 10)],
         "square with and without DUTY")
    c.eq(get_ull("nvmlDeviceGetTotalEnergyConsumption", h),
         (SUCCESS, steps(t, [(0, 1024), (5, 2048)])), "steps with unit suffixes")
    clocks = [get_uint("nvmlDeviceGetClockInfo", h, c_uint(i))[1] for i in range(3)]
    c.eq(clocks, [1235, 124, 0 if t <= 5 else 10],
         "1234.6 and 0x7B.8 rounded; a ramp with T0 = T1 jumps")
    m = MemoryV2(version=MEMORY_V2)
    c.rc(fn("nvmlDeviceGetMemoryInfo_v2")(h, byref(m)), SUCCESS, "memory")
    c.eq((m.total, m.reserved, m.used, m.free),
         (16 * GiB, 512 * MiB, 1536 * MiB, 16 * GiB - 2048 * MiB),
         "0x10 GiB, 512MiB, 1.5 GiB")
    b = (c_ulonglong * 3)()
    c.rc(fn("nvmlDeviceGetBAR1MemoryInfo")(h, b), SUCCESS, "bar1")
    used = cround(sine(t, 0, 256 * MiB, 20))
    c.eq(list(b), [256 * MiB, 256 * MiB - used, used], "sine with a unit suffix")
    mt = Margin(version=MARGIN_V1)
    fn("nvmlDeviceGetMarginTemperature")(h, byref(mt))
    c.eq(mt.marginTemperature, -5, "a negative number")
    v = c_int()
    fn("nvmlSystemGetCudaDriverVersion_v2")(byref(v))
    c.eq(v.value, steps(t, [(0, 12040), (20, 13010)]), "cuda_version as steps")
    buf = create_string_buffer(80)
    fn("nvmlSystemGetDriverVersion")(buf, c_uint(80))
    c.eq(buf.value, b"590.48.01", "quoted driver_version")

    active = 5 <= t < 15
    rc, entries, _ = processes("nvmlDeviceGetComputeRunningProcesses_v3", h, ProcV2)
    c.eq([(e.pid, e.usedGpuMemory) for e in entries],
         [(100, cround(ramp(t, 0, GiB, 0, 10)))] if active else [],
         "process active while start <= t < end, used_memory as a ramp")
    n = c_uint(4)
    s = (Sample * 4)()
    rc = fn("nvmlDeviceGetProcessUtilization")(h, s, byref(n), c_ulonglong(0))
    sm = square(t, 0, 120, 10) if active else 0
    if sm:
        c.eq((rc, n.value, s[0].pid, s[0].smUtil, s[0].timeStamp),
             (SUCCESS, 1, 100, 120, int(t * 1e6)), "process sample with sm_util 120")
    else:
        c.rc(rc, NOT_FOUND, "no busy process: NOT_FOUND")
    fn("nvmlShutdown")()


# --- faults.scn at the time in args[0] ---

def timed(call):
    start = time.monotonic()
    result = call()
    return result, time.monotonic() - start


def child_faults(c, args):
    import pynvml as N
    t = float(args[0])
    c.label = "faults.scn t=%s" % args[0]
    if t == 60:
        c.raises(N.nvmlInit, NOT_READY, "fail = nvmlInit* NOT_READY through pynvml")
        for name in ("nvmlInit", "nvmlInit_v2"):
            c.rc(fn(name)(), NOT_READY, "%s fails" % name)
        c.rc(fn("nvmlDeviceGetCount_v2")(byref(c_uint())), UNINITIALIZED,
             "nothing initialised after a failed nvmlInit")
        return
    N.nvmlInit()
    c.eq(N.nvmlDeviceGetCount(), 3, "a lost GPU still counts")
    buf = create_string_buffer(80)
    c.rc(fn("nvmlSystemGetDriverVersion")(buf, c_uint(80)), TIMEOUT if 10 <= t < 20 else SUCCESS,
         "[system] fail from 10 until 20")
    handles = {}
    for i in range(3):
        h = c_void_p()
        rc = fn("nvmlDeviceGetHandleByIndex_v2")(c_uint(i), byref(h))
        want = SUCCESS
        if i == 1 and t >= 40:
            want = GPU_IS_LOST  # lost, and from 50 also failed
        elif i == 2 and t >= 40:
            want = RESET_REQUIRED
        c.rc(rc, want, "handle of GPU %d" % i)
        plain = fn("nvmlDeviceGetHandleByIndex")(c_uint(i), byref(c_void_p()))
        c.rc(plain, want, "handle of GPU %d (plain name)" % i)
        handles[i] = h
    uuid_rc = fn("nvmlDeviceGetHandleByUUID")(b"GPU-one", byref(c_void_p()))
    c.rc(uuid_rc, GPU_IS_LOST if t >= 40 else SUCCESS, "GPU 1 by UUID")
    h0 = handles[0]
    lost = 5 <= t < 15
    c.eq(get_uint("nvmlDeviceGetTemperature", h0, c_uint(0))[0], GPU_IS_LOST if lost else SUCCESS,
         "fail nvmlDeviceGetTemperature* matches nvmlDeviceGetTemperature")
    tv = TemperatureV1(version=TEMPERATURE_V1)
    (rc, took) = timed(lambda: fn("nvmlDeviceGetTemperatureV")(h0, byref(tv)))
    c.rc(rc, GPU_IS_LOST if lost else SUCCESS, "... and nvmlDeviceGetTemperatureV")
    c.eq(get_uint("nvmlDeviceGetTemperatureThreshold", h0, c_uint(0))[0],
         GPU_IS_LOST if lost else NOT_SUPPORTED, "... and nvmlDeviceGetTemperatureThreshold")
    if 20 <= t < 25:
        c.ok(took < 0.2, "delay nvmlDeviceGetTemperature does not slow TemperatureV", took)
        (rc, took) = timed(lambda: get_uint("nvmlDeviceGetTemperature", h0, c_uint(0)))
        c.ok(rc == (SUCCESS, 50) and took >= 0.4, "delay 400 ms, then the answer",
             "%r after %.3f s" % (rc, took))
    c.eq(get_string("nvmlDeviceGetName", h0)[0], UNKNOWN if t >= 30 else SUCCESS,
         "fail from 30 without until")
    c.eq(get_uint("nvmlDeviceGetPcieThroughput", h0, c_uint(0))[0], NO_PERMISSION,
         "a [system] fail applies to every GPU")
    for name in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetComputeRunningProcesses_v2",
                 "nvmlDeviceGetComputeRunningProcesses_v3"):
        c.rc(fn(name)(h0, byref(c_uint(0)), None), IN_USE if t < 3 else INSUFFICIENT_SIZE,
             "fail %s until 3" % name)
    if t >= 100:
        (rc, took) = timed(lambda: get_uint("nvmlDeviceGetPowerUsage", h0))
        c.ok(rc == (SUCCESS, 100000) and took >= 0.3, "[system] delay applies to GPU 0",
             "%r after %.3f s" % (rc, took))
        (rc, took) = timed(lambda: fn("nvmlDeviceGetHandleByIndex_v2")(c_uint(0),
                                                                        byref(c_void_p())))
        c.ok(rc == SUCCESS and took < 0.2, "... and not to other calls", "%.3f s" % took)
    if t < 40:
        c.eq(get_string("nvmlDeviceGetName", handles[1]), (SUCCESS, "one"), "GPU 1 answers")
        c.eq(get_uint("nvmlDeviceGetTemperature", handles[2], c_uint(0)), (SUCCESS, 52),
             "GPU 2 answers")
    N.nvmlShutdown()


def child_lost_live(c, args):
    """A GPU lost while the client holds its handle (FAKE_NVML_EPOCH, real clock)."""
    os.environ["FAKE_NVML_EPOCH"] = repr(time.time() - 39.5)
    c.rc(fn("nvmlInit_v2")(), SUCCESS, "nvmlInit_v2 at t = 39.5")
    h1 = handle(1)
    c.eq(get_string("nvmlDeviceGetName", h1), (SUCCESS, "one"), "GPU 1 answers before 40 s")
    time.sleep(0.8)
    c.eq(get_string("nvmlDeviceGetName", h1)[0], GPU_IS_LOST,
         "the same handle after 40 s: GPU_IS_LOST, not INVALID_ARGUMENT")
    c.eq(get_uint("nvmlDeviceGetTemperature", h1, c_uint(0))[0], GPU_IS_LOST,
         "every call on it: GPU_IS_LOST")
    c.eq(get_uint("nvmlDeviceGetIndex", h1)[0], GPU_IS_LOST, "even nvmlDeviceGetIndex")
    n = c_uint()
    fn("nvmlDeviceGetCount_v2")(byref(n))
    c.eq(n.value, 3, "nvmlDeviceGetCount still counts it")
    fn("nvmlShutdown")()


def child_threads(c, args):
    """faults.scn at t = 22: a delayed call holds no lock that other threads need."""
    c.rc(fn("nvmlInit_v2")(), SUCCESS, "nvmlInit_v2")
    h0, h1 = handle(0), handle(1)
    slow = {}

    def delayed():
        slow["result"], slow["took"] = timed(lambda: get_uint("nvmlDeviceGetTemperature", h0,
                                                              c_uint(0)))

    th = threading.Thread(target=delayed)
    th.start()
    time.sleep(0.05)
    start = time.monotonic()
    answers = [get_uint("nvmlDeviceGetTemperature", h1, c_uint(0)) for _ in range(200)]
    took = time.monotonic() - start
    still_sleeping = th.is_alive()
    th.join()
    c.ok(all(a == (SUCCESS, 51) for a in answers), "GPU 1 answered while GPU 0 slept")
    c.ok(still_sleeping and took < 0.3, "200 calls on GPU 1 ended before GPU 0's delay",
         "%.3f s, GPU 0 still sleeping: %s" % (took, still_sleeping))
    c.eq(slow["result"], (SUCCESS, 50), "the delayed call answered")

    errors = []

    def hammer(i):
        h = handle(i)
        for _ in range(2000):
            r = get_string("nvmlDeviceGetName", h)
            if r != (SUCCESS, ["zero", "one", "two"][i]):
                errors.append((i, r))

    threads = [threading.Thread(target=hammer, args=(i % 3,)) for i in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    c.eq(errors[:3], [], "six threads on three GPUs, 12000 calls, all right")
    fn("nvmlShutdown")()


def child_cc(c, args):
    c.rc(fn("nvmlInit_v2")(), SUCCESS, "nvmlInit_v2")
    h = handle(0)
    rc, entries, raw = processes("nvmlDeviceGetComputeRunningProcesses_v3", h, ProcCc)
    c.eq([(e.pid, e.usedGpuMemory, e.gpuInstanceId, e.computeInstanceId,
           e.usedGpuCcProtectedMemory) for e in entries], [(7, 4 * GiB, 2, 1, 0)],
         "process_v3_layout = cc: _v3 writes 32-byte entries")
    c.ok(raw[32:] == b"\xaa" * 64, "... and no more than one")
    rc, entries, raw = processes("nvmlDeviceGetGraphicsRunningProcesses_v3", h, ProcCc)
    c.eq([(e.pid, e.usedGpuMemory) for e in entries], [(8, NOT_AVAILABLE)],
         "cc layout of the graphics list")
    rc, entries, raw = processes("nvmlDeviceGetComputeRunningProcesses_v2", h, ProcV2)
    c.ok([(e.pid, e.gpuInstanceId) for e in entries] == [(7, 2)] and raw[24:] == b"\xaa" * 64,
         "_v2 keeps 24-byte entries")
    rc, entries, raw = processes("nvmlDeviceGetComputeRunningProcesses", h, ProcV1)
    c.ok([(e.pid, e.usedGpuMemory) for e in entries] == [(7, 4 * GiB)]
         and raw[16:] == b"\xaa" * 64, "plain keeps 16-byte entries")
    fn("nvmlShutdown")()


def child_init_error(c, args):
    import pynvml as N
    c.raises(N.nvmlInit, LIB_RM_VERSION_MISMATCH, "init_error through pynvml")
    for name in ("nvmlInit", "nvmlInit_v2"):
        c.rc(fn(name)(), LIB_RM_VERSION_MISMATCH, "init_error from %s" % name)
    c.rc(fn("nvmlInitWithFlags")(c_uint(0)), LIB_RM_VERSION_MISMATCH,
         "init_error from nvmlInitWithFlags")
    c.rc(fn("nvmlSystemGetDriverVersion")(create_string_buffer(80), c_uint(80)), UNINITIALIZED,
         "not initialised")
    c.eq(N.nvmlErrorString(LIB_RM_VERSION_MISMATCH), "Driver/library version mismatch",
         "its message")
    with tempfile.NamedTemporaryFile("w", suffix=".scn") as f:
        f.write("[system]\ninit_error = error DRIVER_NOT_LOADED\n")
        f.flush()
        os.environ["FAKE_NVML_SCENARIO"] = f.name
        c.rc(fn("nvmlInit_v2")(), DRIVER_NOT_LOADED, "init_error = error NAME")


def child_environment(c, args):
    """Runs without FAKE_NVML_SCENARIO; tries the environment's failure modes."""
    import pynvml as N
    c.raises(N.nvmlInit, DRIVER_NOT_LOADED, "no FAKE_NVML_SCENARIO: DRIVER_NOT_LOADED")
    c.eq(fn("gpuscope_fake_nvml_scenario", c_char_p)(), None,
         "gpuscope_fake_nvml_scenario() is NULL without a scenario")
    os.environ["FAKE_NVML_SCENARIO"] = "/nonexistent/gpus.scn"
    rc, err = capture_stderr(fn("nvmlInit_v2"))
    c.rc(rc, UNKNOWN, "a missing scenario file: UNKNOWN")
    c.ok("fake nvml: /nonexistent/gpus.scn: No such file or directory" in err,
         "... and why on stderr", err)
    os.environ["FAKE_NVML_SCENARIO"] = os.path.join(SCN, "full.scn")
    os.environ["FAKE_NVML_TIME"] = "soon"
    rc, err = capture_stderr(fn("nvmlInit_v2"))
    c.rc(rc, UNKNOWN, "FAKE_NVML_TIME not a number: UNKNOWN")
    c.ok("fake nvml: FAKE_NVML_TIME" in err, "... and why on stderr", err)
    os.environ["FAKE_NVML_TIME"] = "12.5"
    c.rc(fn("nvmlInit_v2")(), SUCCESS, "the same process initialises once it is fixed")
    fn("nvmlShutdown")()


def child_bad(c, args):
    path = os.environ["FAKE_NVML_SCENARIO"]
    with open(path) as f:
        line, msg = re.match(r"# expect: (\d+): (.*)", f.readline()).groups()
    c.label = "bad/" + os.path.basename(path)
    rc, err = capture_stderr(fn("nvmlInit_v2"))
    c.rc(rc, UNKNOWN, "nvmlInit: UNKNOWN")
    want = "fake nvml: %s:%s: %s" % (path, line, msg)
    c.ok(want in err, "stderr says: %s" % want[len("fake nvml: ") + len(path) + 1:], err.strip())
    c.rc(fn("nvmlDeviceGetCount_v2")(byref(c_uint())), UNINITIALIZED, "not initialised")


def child_period(c, args):
    t = float(args[0])
    c.label = "period.scn t=%s" % args[0]
    c.rc(fn("nvmlInit_v2")(), SUCCESS, "nvmlInit_v2")
    h = handle(0)
    wrapped = t % 10
    c.eq(get_uint("nvmlDeviceGetTemperature", h, c_uint(0)), (SUCCESS, cround(wrapped * 10)),
         "time wraps at period")
    n = c_uint(1)
    s = Sample()
    rc = fn("nvmlDeviceGetProcessUtilization")(h, byref(s), byref(n), c_ulonglong(0))
    if 2 <= wrapped < 5:
        c.eq((rc, s.pid, s.timeStamp), (SUCCESS, 42, int(t * 1e6)),
             "process in its window; its timestamp does not wrap")
    else:
        c.rc(rc, NOT_FOUND, "process outside its window")
    fn("nvmlShutdown")()


def child_clock(c, args):
    """Scenario time from FAKE_NVML_EPOCH and the wall clock (args: epoch offset or '-')."""
    now = time.time()
    c.rc(fn("nvmlInit_v2")(), SUCCESS, "nvmlInit_v2")
    h = handle(0)
    rc, temp = get_uint("nvmlDeviceGetTemperature", h, c_uint(0))
    n = c_uint(1)
    s = Sample()
    fn("nvmlDeviceGetProcessUtilization")(h, byref(s), byref(n), c_ulonglong(0))
    if "FAKE_NVML_TIME" in os.environ:
        epoch = float(os.environ["FAKE_NVML_EPOCH"])
        t = float(os.environ["FAKE_NVML_TIME"])
        c.eq(temp, steps(t, [(0, 1), (50, 2), (150, 3)]), "FAKE_NVML_TIME sets t")
        c.eq(s.timeStamp, int((epoch + t) * 1e6), "the wall clock is FAKE_NVML_EPOCH + t")
    elif "FAKE_NVML_EPOCH" in os.environ:
        c.eq(temp, 2, "t = now - FAKE_NVML_EPOCH (about 100 s)")
        c.ok(abs(s.timeStamp / 1e6 - now) < 5, "the wall clock is now", s.timeStamp)
    else:
        c.eq(temp, 1, "without either, t is 0 at the first nvmlInit")
        c.ok(abs(s.timeStamp / 1e6 - now) < 5, "the wall clock is now", s.timeStamp)
    fn("nvmlShutdown")()


def child_log(c, args):
    path = os.environ["FAKE_NVML_LOG"]
    fn("nvmlDeviceGetCount_v2")(byref(c_uint()))
    fn("nvmlInit_v2")()
    h0, h1 = handle(0), handle(1)
    get_string("nvmlDeviceGetName", h1)
    get_uint("nvmlDeviceGetPowerUsage", h1)
    fn("nvmlDeviceGetHandleByIndex")(c_uint(7), byref(c_void_p()))
    fn("nvmlDeviceGetPciInfoExt")(h0, None)
    fn("nvmlSystemGetProcessName")(c_uint(5000), create_string_buffer(64), c_uint(64))
    fn("nvmlShutdown")()
    with open(path) as f:
        lines = f.read().splitlines()
    c.eq(lines, ["earlier line kept (O_APPEND)",
                 "nvmlDeviceGetCount_v2 - 1",
                 "nvmlInit_v2 - 0",
                 "nvmlDeviceGetHandleByIndex_v2 0 0",
                 "nvmlDeviceGetHandleByIndex_v2 1 0",
                 "nvmlDeviceGetName 1 0",
                 "nvmlDeviceGetPowerUsage 1 4",
                 "nvmlDeviceGetHandleByIndex - 2",
                 "nvmlDeviceGetPciInfoExt - 3",
                 "nvmlSystemGetProcessName - 3",
                 "nvmlShutdown - 0"], "one line per call: function, GPU or -, return code")

    fn("nvmlInit_v2")()

    def hammer(i):
        h = handle(i)
        for _ in range(500):
            get_uint("nvmlDeviceGetTemperature", h, c_uint(0))

    threads = [threading.Thread(target=hammer, args=(i % 3,)) for i in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    fn("nvmlShutdown")()
    with open(path) as f:
        lines = f.read().splitlines()[11:]
    temps = [ln for ln in lines if ln.startswith("nvmlDeviceGetTemperature ")]
    c.eq(len(temps), 3000, "3000 calls from six threads, 3000 lines")
    c.ok(all(re.fullmatch(r"nvmlDeviceGetTemperature [012] (0|3|999)", ln) for ln in temps),
         "no line torn by concurrent writers")


def child_legacy(c, args):
    names = symbols()
    gone = [n for n in names if legacy_drops(n)]
    present = [n for n in names if not legacy_drops(n)]
    c.eq([n for n in gone if hasattr(L, n)], [], "no _vN, nvmlInitWithFlags or "
                                                 "ClocksEventReasons symbol")
    c.eq([n for n in present if not hasattr(L, n)], [], "every other name of symbols.txt")
    import pynvml as N
    c.raises(N.nvmlInit, 13, "pynvml needs nvmlInitWithFlags: FUNCTION_NOT_FOUND")
    c.rc(fn("nvmlInit")(), SUCCESS, "nvmlInit")
    n = c_uint()
    c.rc(fn("nvmlDeviceGetCount")(byref(n)), SUCCESS, "nvmlDeviceGetCount")
    c.eq(n.value, 3, "three GPUs")
    h = handle(0, "nvmlDeviceGetHandleByIndex")
    c.eq(get_ull("nvmlDeviceGetCurrentClocksThrottleReasons", h), (SUCCESS, 4),
         "clocks_event_reasons through the throttle name")
    m = Memory()
    c.rc(fn("nvmlDeviceGetMemoryInfo")(h, byref(m)), SUCCESS, "nvmlDeviceGetMemoryInfo")
    c.eq(m.used, (19818 + 479) * MiB, "v1 memory")
    rc, entries, raw = processes("nvmlDeviceGetComputeRunningProcesses", h, ProcV1)
    c.ok([e.pid for e in entries] == [11345, 11327, 3000, 4000] and raw[64:] == b"\xaa" * 64,
         "plain process list, 16-byte entries")
    raw = (ctypes.c_ubyte * 68)(*([0xAA] * 68))
    fn("nvmlDeviceGetPciInfo")(h, raw)
    c.ok(bytes(raw)[:12] == b"0000:00:09.0" and bytes(raw)[52:] == b"\xaa" * 16,
         "plain nvmlDeviceGetPciInfo, 52 bytes")
    c.rc(fn("nvmlDeviceGetPciInfoExt")(h, None), NOT_SUPPORTED, "a stub of the legacy build")
    s, d = c_void_p(), EventData()
    c.rc(fn("nvmlEventSetCreate")(byref(s)), SUCCESS, "nvmlEventSetCreate")
    c.rc(fn("nvmlEventSetWait")(s, byref(d), c_uint(0)), TIMEOUT,
         "the plain nvmlEventSetWait (no _v2 in old drivers)")
    fn("nvmlEventSetFree")(s)
    fn("nvmlShutdown")()


class EventData(Structure):
    _fields_ = [("device", c_void_p), ("eventType", c_ulonglong), ("eventData", c_ulonglong),
                ("gpuInstanceId", c_uint), ("computeInstanceId", c_uint)]


XID = 0x8


def child_events_pynvml(c, args):
    """events.scn at FAKE_NVML_SPEED=10 on the real clock, through NVIDIA's binding."""
    import pynvml as N
    N.nvmlInit()
    t0 = time.time()  # scenario time 0: the first nvmlInit
    h = [N.nvmlDeviceGetHandleByIndex(i) for i in range(6)]

    def types(i):
        try:
            return N.nvmlDeviceGetSupportedEventTypes(h[i])
        except N.NVMLError as e:
            return "error %d" % e.value
    c.eq([types(i) for i in range(6)], [XID, XID, 0x1F, "error 3", "error 3", XID],
         "nvmlDeviceGetSupportedEventTypes: xid, event_types, absent, a GeForce")
    a, b = N.nvmlEventSetCreate(), N.nvmlEventSetCreate()
    for s in (a, b):
        for i in (0, 1, 5):
            N.nvmlDeviceRegisterEvents(h[i], N.nvmlEventTypeXidCriticalError, s)
    N.nvmlDeviceRegisterEvents(h[2], N.nvmlEventTypeXidCriticalError | N.nvmlEventTypePState, a)
    c.raises(lambda: N.nvmlDeviceRegisterEvents(h[3], N.nvmlEventTypeXidCriticalError, a),
             NOT_SUPPORTED, "register a GPU without event keys: NOT_SUPPORTED")
    c.raises(lambda: N.nvmlDeviceRegisterEvents(h[4], N.nvmlEventTypeXidCriticalError, a),
             NOT_SUPPORTED, "register a GeForce: NOT_SUPPORTED")
    c.raises(lambda: N.nvmlDeviceRegisterEvents(
        h[0], N.nvmlEventTypeXidCriticalError | N.nvmlEventTypeSingleBitEccError, a),
        NOT_SUPPORTED, "a type the GPU lacks refuses the call")

    def drain(s, timeout_ms):
        got = []
        while True:
            try:
                d = N.nvmlEventSetWait(s, timeout_ms)
            except N.NVMLError as e:
                return got, e.value
            got.append((N.nvmlDeviceGetIndex(d.device), d.eventType, d.eventData,
                        d.gpuInstanceId, d.computeInstanceId, time.time() - t0))
    got, rc = drain(a, 1000)
    want = [(0, XID, 79), (0, XID, 13), (1, XID, 48), (0, XID, 13)]
    c.eq([e[:3] for e in got], want,
         "set A: the Xids of GPUs 0 and 1 in time order (GPU 0 first at equal times), "
         "not GPU 5's after it was lost")
    c.eq({e[3:5] for e in got}, {(NO_INSTANCE, NO_INSTANCE)}, "instance ids: none (no MIG)")
    due = [0.1, 0.2, 0.2, 0.3]
    c.ok(all(d - 0.01 <= e[5] < d + 0.25 for e, d in zip(got, due)),
         "each one when it happens at FAKE_NVML_SPEED=10 (0.1, 0.2, 0.2, 0.3 s)",
         repr([round(e[5], 3) for e in got]))
    c.rc(rc, TIMEOUT, "then TIMEOUT")
    got, rc = drain(b, 0)
    c.eq([e[:3] for e in got], want, "set B: the same Xids, once more: each once per set")
    c.rc(rc, TIMEOUT, "timeout 0 with nothing left: TIMEOUT")
    late = N.nvmlEventSetCreate()
    N.nvmlDeviceRegisterEvents(h[0], N.nvmlEventTypeXidCriticalError, late)
    cpu, wall = time.process_time(), time.time()
    got, rc = drain(late, 400)
    cpu, wall = time.process_time() - cpu, time.time() - wall
    c.eq((got, rc), ([], TIMEOUT), "a set registered afterwards: the Xids before it are gone")
    c.ok(0.39 <= wall < 1.0, "a wait without events blocks for its timeout (400 ms)",
         "%.3f s" % wall)
    c.ok(cpu < 0.1, "... without spinning", "%.3f s of CPU" % cpu)
    for s in (a, b, late):
        N.nvmlEventSetFree(s)
    N.nvmlShutdown()


def child_events_raw(c, args):
    """What pynvml hides: the plain wait's 24 bytes, bad arguments, a wait woken by a register."""
    c.rc(fn("nvmlInit_v2")(), SUCCESS, "nvmlInit_v2")
    h = [handle(i) for i in range(4)]
    create, register = fn("nvmlEventSetCreate"), fn("nvmlDeviceRegisterEvents")
    register.argtypes = [c_void_p, c_ulonglong, c_void_p]
    wait, wait2 = fn("nvmlEventSetWait"), fn("nvmlEventSetWait_v2")
    for f in (wait, wait2):
        f.argtypes = [c_void_p, c_void_p, c_uint]
    s = c_void_p()
    c.rc(create(byref(s)), SUCCESS, "nvmlEventSetCreate")

    # a wait on an empty set, woken by a registration whose Xid comes before its timeout
    result = {}

    def waiter():
        d = EventData()
        t = time.time()
        result["rc"] = wait2(s, byref(d), 3000)
        result["d"], result["t"] = (d.eventData, d.device), time.time() - t
    th = threading.Thread(target=waiter)
    th.start()
    time.sleep(0.02)
    c.rc(register(h[0], XID, s), SUCCESS, "register GPU 0 while a thread waits on the set")
    t = time.time()
    temps = [get_uint("nvmlDeviceGetTemperature", h[1], c_uint(0))[0] for _ in range(200)]
    busy = time.time() - t
    th.join()
    c.ok(busy < 0.5, "other calls go on while a thread waits", "200 calls in %.3f s" % busy)
    c.eq((result["rc"], result["d"]), (SUCCESS, (79, h[0].value)),
         "the waiting thread gets GPU 0's Xid 79")
    c.ok(result["t"] < 1.0, "when it happens, not at the timeout", "%.3f s" % result["t"])

    raw = (ctypes.c_ubyte * 40)(*([0xAA] * 40))
    c.rc(wait(s, raw, 1000), SUCCESS, "nvmlEventSetWait")
    d = EventData.from_buffer_copy(bytes(raw)[:32])
    c.eq((d.device, d.eventType, d.eventData), (h[0].value, XID, 13), "the next Xid, 13")
    c.ok(bytes(raw)[24:] == b"\xaa" * 16, "the plain wait writes 24 bytes: no instance ids",
         bytes(raw).hex())
    raw = (ctypes.c_ubyte * 40)(*([0xAA] * 40))
    c.rc(wait2(s, raw, 1000), SUCCESS, "nvmlEventSetWait_v2")
    c.ok(bytes(raw)[24:32] == b"\xff" * 8 and bytes(raw)[32:] == b"\xaa" * 8,
         "_v2 writes 32 bytes, the instance ids 0xFFFFFFFF", bytes(raw).hex())
    d = EventData()
    c.rc(wait(s, byref(d), 0), TIMEOUT, "nothing more: TIMEOUT at once")
    c.rc(wait(None, byref(d), 0), INVALID_ARGUMENT, "wait on NULL: INVALID_ARGUMENT")
    c.rc(wait2(s, None, 0), INVALID_ARGUMENT, "wait into NULL: INVALID_ARGUMENT")
    c.rc(register(h[0], XID, None), INVALID_ARGUMENT, "register into NULL: INVALID_ARGUMENT")
    c.rc(create(None), INVALID_ARGUMENT, "nvmlEventSetCreate(NULL): INVALID_ARGUMENT")
    c.rc(register(h[2], 0x1F, s), SUCCESS, "register every type event_types allows")
    c.rc(fn("nvmlEventSetFree")(s), SUCCESS, "nvmlEventSetFree")
    c.rc(wait(s, byref(d), 0), INVALID_ARGUMENT, "a freed set: INVALID_ARGUMENT")
    fn("nvmlShutdown")()
    c.rc(create(byref(s)), UNINITIALIZED, "after nvmlShutdown: UNINITIALIZED")


def child_events_period(c, args):
    """With `period`, the Xids recur every period."""
    c.rc(fn("nvmlInit_v2")(), SUCCESS, "nvmlInit_v2")
    s = c_void_p()
    fn("nvmlEventSetCreate")(byref(s))
    fn("nvmlDeviceRegisterEvents")(handle(0), c_ulonglong(XID), s)
    codes = []
    for _ in range(5):
        d = EventData()
        if fn("nvmlEventSetWait_v2")(s, byref(d), c_uint(1000)) != SUCCESS:
            break
        codes.append(d.eventData)
    c.eq(codes, [31, 32, 31, 32, 31], "period 2 s, Xids at 0.5 and 1.5 s: 31, 32, 31, ...")
    fn("nvmlEventSetFree")(s)
    fn("nvmlShutdown")()


def child_nvlink_raw(c, args):
    """tests/scenarios/nvlink.scn at t = 160: NVLink and violation calls, bad arguments."""
    c.rc(fn("nvmlInit_v2")(), SUCCESS, "nvmlInit_v2")
    h = handle(0)
    n, state = c_ulonglong(), c_uint()
    errc = fn("nvmlDeviceGetNvLinkErrorCounter")
    errc.argtypes = [c_void_p, c_uint, c_uint, c_void_p]
    c.rc(errc(h, 3, 2, byref(n)), SUCCESS, "CRC flit counter of link 3")
    c.eq(n.value, 4 * 2500, "link 3 answers 4 times the key's value")
    c.rc(errc(h, 5, 2, byref(n)), SUCCESS, "a link without a peer answers")
    c.eq(n.value, 0, "... 0")
    c.rc(errc(h, 0, 4, byref(n)), NOT_SUPPORTED, "the ECC counter (4): NOT_SUPPORTED")
    c.rc(errc(h, 0, 5, byref(n)), INVALID_ARGUMENT, "counter 5: INVALID_ARGUMENT")
    c.rc(errc(h, 18, 0, byref(n)), INVALID_ARGUMENT, "link 18: INVALID_ARGUMENT")
    c.rc(errc(h, 0, 0, None), INVALID_ARGUMENT, "NULL: INVALID_ARGUMENT")
    st = fn("nvmlDeviceGetNvLinkState")
    st.argtypes = [c_void_p, c_uint, c_void_p]
    c.rc(st(h, 2, byref(state)), SUCCESS, "state of link 2")
    c.eq(state.value, 0, "link 2 down at t = 160 (nvlink_down)")
    pci = (ctypes.c_char * 68)()
    rpci = fn("nvmlDeviceGetNvLinkRemotePciInfo_v2")
    rpci.argtypes = [c_void_p, c_uint, c_void_p]
    c.rc(rpci(h, 2, pci), NOT_SUPPORTED, "remote PCI info of the down link: NOT_SUPPORTED")
    c.rc(rpci(h, 1, pci), SUCCESS, "remote PCI info of link 1, up")
    viol = (c_ulonglong * 2)()
    vs = fn("nvmlDeviceGetViolationStatus")
    vs.argtypes = [c_void_p, c_uint, c_void_p]
    c.rc(vs(h, 3, viol), SUCCESS, "board-limit violation time")
    c.eq(viol[1], 16000000000, "... in ns")
    c.eq(viol[0], int((1767225600 + 160) * 1e6), "referenceTime: the fake's wall clock, us")
    c.rc(vs(h, 7, viol), INVALID_ARGUMENT, "policy 7: INVALID_ARGUMENT")
    c.rc(vs(handle(1), 0, viol), NOT_SUPPORTED, "no violation key: NOT_SUPPORTED")
    fn("nvmlShutdown")()


def child_doc_example(c, args):
    """The example of docs/scenario-format.md, which must stay a valid scenario."""
    import pynvml as N
    N.nvmlInit()
    h = N.nvmlDeviceGetHandleByIndex(0)
    m = N.nvmlDeviceGetMemoryInfo(h, version=N.nvmlMemory_v2)
    c.eq((m.total, m.reserved, m.used), (81559 * MiB, 479 * MiB, 19818 * MiB),
         "the example's memory at t = 60")
    c.eq(N.nvmlDeviceGetTemperature(h, 0), 59, "the example's ramp at its end")
    c.raises(lambda: N.nvmlDeviceGetFanSpeed(h), NOT_SUPPORTED, "the example's fault")
    c.eq(N.nvmlSystemGetProcessName(11345), "./gpu_burn", "the example's process")
    N.nvmlShutdown()


QUEUE_UUID = ["GPU-5a1e000%d-0000-4000-8000-00000000000%d" % (i, i) for i in range(4)]
GPUHOG = os.path.join(ROOT, "tests", "queue", "gpuhog.sh")


def wait_for(cond, timeout=5.0):
    """Polls cond() until it is true or timeout seconds have passed; returns its last value."""
    end = time.time() + timeout
    v = cond()
    while not v and time.time() < end:
        time.sleep(0.02)
        v = cond()
    return v


def child_live_pynvml(c, args):
    """queue.scn with FAKE_NVML_LIVE_DIR: real processes registered in files, through pynvml."""
    import pynvml as N
    live = os.environ["FAKE_NVML_LIVE_DIR"]
    N.nvmlInit()
    h = [N.nvmlDeviceGetHandleByIndex(i) for i in range(4)]

    def used(i):
        return N.nvmlDeviceGetMemoryInfo(h[i]).used

    def pids(i):
        return [(p.pid, p.usedGpuMemory) for p in N.nvmlDeviceGetComputeRunningProcesses(h[i])]

    base = [used(i) for i in range(4)]
    c.eq(base, [(600 + 479) * MiB] * 2 + [(600 + 445) * MiB] * 2,
         "empty folder: 600 MiB used and the reserved memory")
    c.eq([pids(i) for i in range(4)], [[]] * 4, "empty folder: no process")

    # a process of ours, by UUID on GPU 1 and by index on GPU 3
    sleeper = subprocess.Popen(["sleep", "60"])
    with open(os.path.join(live, ".tmp"), "w") as f:
        f.write("%s 2048\n3 512\n# a comment\nbogus\n2 12x\n" % QUEUE_UUID[1])
    os.rename(os.path.join(live, ".tmp"), os.path.join(live, str(sleeper.pid)))
    c.eq(pids(1), [(sleeper.pid, 2048 * MiB)], "GPU 1 (by UUID) lists the process with 2048 MiB")
    c.eq(pids(3), [(sleeper.pid, 512 * MiB)], "GPU 3 (by index) lists it with 512 MiB")
    c.eq((pids(0), pids(2)), ([], []), "GPUs 0 and 2: nothing (malformed lines passed over)")
    c.eq(used(1) - base[1], 2048 * MiB, "GPU 1 used grows by 2048 MiB (v1)")
    m = N.nvmlDeviceGetMemoryInfo(h[1], version=N.nvmlMemory_v2)
    c.eq((m.used, m.free), ((600 + 2048) * MiB, (81559 - 479 - 600 - 2048) * MiB),
         "v2: used grows, free shrinks")
    c.eq([p.pid for p in N.nvmlDeviceGetComputeRunningProcesses_v2(h[1])], [sleeper.pid],
         "the _v2 compute list too")
    c.eq((N.nvmlDeviceGetGraphicsRunningProcesses(h[1]),
          N.nvmlDeviceGetMPSComputeRunningProcesses(h[1])), ([], []),
         "not in the graphics or MPS lists")
    c.eq(N.nvmlSystemGetProcessName(sleeper.pid), "sleep", "process name: argv[0]")
    c.raises(lambda: N.nvmlDeviceGetProcessUtilization(h[1], 0), NOT_FOUND,
             "an idle live process has no utilisation sample")

    # gpuhog.sh: CUDA_VISIBLE_DEVICES, --late, --leak, exit codes
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="%s,%s" % (QUEUE_UUID[0], QUEUE_UUID[2]))
    hog = subprocess.Popen(["sh", GPUHOG, "1000", "30", "--late", "0.5"], env=env)
    time.sleep(0.2)
    c.eq(pids(0), [], "gpuhog --late 0.5: nothing yet after 0.2 s")
    c.ok(wait_for(lambda: pids(0) == [(hog.pid, 1000 * MiB)]),
         "gpuhog registers itself on each GPU of CUDA_VISIBLE_DEVICES", repr(pids(0)))
    c.eq(pids(2), [(hog.pid, 1000 * MiB)], "... on GPU 2 as well")
    leaker = subprocess.Popen(["sh", GPUHOG, "300", "0.3", "7", "--gpu", "3", "--leak"], env=env)
    c.eq(leaker.wait(timeout=10), 7, "gpuhog exits with EXIT after SECONDS")
    c.eq(used(3) - base[3], (512 + 300) * MiB, "a leak stays used after its process is gone")
    c.eq(pids(3), [(sleeper.pid, 512 * MiB)], "... and the gone process is not listed")
    hog.terminate()
    c.eq(hog.wait(timeout=10), 143, "gpuhog on SIGTERM: 143")
    c.ok(os.path.exists(os.path.join(live, str(hog.pid))), "gpuhog on SIGTERM removes nothing")
    c.eq((pids(0), used(0)), ([], base[0]), "a process that is gone: not listed, memory back")
    bad = subprocess.run(["sh", GPUHOG, "lots"], env=env, stderr=subprocess.PIPE)
    c.ok(bad.returncode == 2 and b"MIB" in bad.stderr, "gpuhog: a bad MIB is refused",
         bad.stderr.decode(errors="replace"))

    # a zombie has given its memory back
    sleeper.kill()
    time.sleep(0.2)
    c.eq(pids(1), [], "a zombie is not listed")
    c.eq(used(1), base[1], "a zombie's memory is back")
    sleeper.wait()
    os.unlink(os.path.join(live, str(leaker.pid)))
    c.eq(used(3), base[3], "deleting the file ends the leak")
    N.nvmlShutdown()


def child_live_raw(c, args):
    """The live processes in every list layout, and the two-call pattern."""
    # live_processes = live: beside the scenario file
    live = os.path.join(os.path.dirname(os.environ["FAKE_NVML_SCENARIO"]), "live")
    layout = args[0]
    c.label += " " + layout
    c.rc(fn("nvmlInit_v2")(), SUCCESS, "nvmlInit_v2")
    h = handle(0)
    me = os.getpid()
    with open(os.path.join(live, str(me)), "w") as f:
        f.write("0 100\n")
    static_pid = 424242
    for name, struct in (("nvmlDeviceGetComputeRunningProcesses", ProcV1),
                         ("nvmlDeviceGetComputeRunningProcesses_v2", ProcV2),
                         ("nvmlDeviceGetComputeRunningProcesses_v3",
                          ProcCc if layout == "cc" else ProcV2)):
        rc, entries, raw = processes(name, h, struct)
        c.rc(rc, SUCCESS, "%s: two-call pattern" % name)
        got = [(e.pid, e.usedGpuMemory) for e in entries or []]
        c.eq(got, [(static_pid, 5 * MiB), (me, 100 * MiB)],
             "%s: the scenario's process first, then the live one" % name)
        n = sizeof(struct) * len(entries or [])
        c.ok(raw[n:] == b"\xaa" * 64, "%s: %d-byte entries" % (name, sizeof(struct)))
        if struct is not ProcV1 and entries:
            c.eq((entries[1].gpuInstanceId, entries[1].computeInstanceId),
                 (NO_INSTANCE, NO_INSTANCE), "%s: no MIG instance" % name)
    n = c_uint(1)
    one = (ProcV2 * 1)()
    c.rc(fn("nvmlDeviceGetComputeRunningProcesses_v3")(h, byref(n), one), INSUFFICIENT_SIZE,
         "room for one of two: INSUFFICIENT_SIZE")
    c.eq(n.value, 2, "... and the count needed")
    buf = create_string_buffer(3)
    c.rc(fn("nvmlSystemGetProcessName")(c_uint(me), buf, c_uint(3)), INSUFFICIENT_SIZE,
         "a live process's name in 3 bytes: INSUFFICIENT_SIZE")
    os.unlink(os.path.join(live, str(me)))
    fn("nvmlShutdown")()


def child_topology_pynvml(c, args):
    """queue.scn: topology_group, topology_node and nvlink_peers through pynvml."""
    import pynvml as N
    N.nvmlInit()
    h = [N.nvmlDeviceGetHandleByIndex(i) for i in range(4)]
    c.eq([[N.nvmlDeviceGetTopologyCommonAncestor(a, b) for b in h] for a in h],
         [[0, 40, 50, 50], [40, 0, 50, 50], [50, 50, 0, 10], [50, 50, 10, 0]],
         "common ancestors: itself INTERNAL, two switches of a CPU NODE, one switch SINGLE, "
         "across CPUs SYSTEM")
    for i in (0, 1):
        c.eq([N.nvmlDeviceGetNvLinkState(h[i], link) for link in range(18)], [1] * 4 + [0] * 14,
             "GPU %d: four active NVLinks of 18" % i)
        peer = N.nvmlDeviceGetNvLinkRemotePciInfo(h[i], 3)
        want = N.nvmlDeviceGetPciInfo(h[1 - i])
        c.eq((peer.busId, peer.domain, peer.bus, peer.device),
             (want.busId, want.domain, want.bus, want.device),
             "GPU %d: link 3 leads to GPU %d" % (i, 1 - i))
        c.eq(N.nvmlDeviceGetNvLinkRemoteDeviceType(h[i], 0), 0, "GPU %d: the far end is a GPU" % i)
        c.raises(lambda: N.nvmlDeviceGetNvLinkState(h[i], 18), INVALID_ARGUMENT,
                 "GPU %d: link 18: INVALID_ARGUMENT" % i)
        c.raises(lambda: N.nvmlDeviceGetNvLinkRemotePciInfo(h[i], 4), NOT_SUPPORTED,
                 "GPU %d: the far end of an inactive link: NOT_SUPPORTED" % i)
    c.eq(N.nvmlDeviceGetNvLinkState(h[2], 0), 0, "nvlink_peers = none: links inactive")
    c.raises(lambda: N.nvmlDeviceGetNvLinkRemotePciInfo(h[2], 0), NOT_SUPPORTED,
             "nvlink_peers = none: no far end")
    N.nvmlShutdown()


def child_mig_pynvml(c, args):
    """tests/scenarios/mig.scn: the [mig] sections as nvidia-ml-py sees MIG devices."""
    import pynvml as N
    N.nvmlInit()
    g = N.nvmlDeviceGetHandleByIndex(0)
    c.eq(N.nvmlDeviceGetCount(), 1, "MIG devices are not counted as GPUs")
    c.eq(N.nvmlDeviceGetMigMode(g), [1, 1], "MIG mode on")
    c.eq(N.nvmlDeviceGetMaxMigDeviceCount(g), 7, "seven MIG slots")
    # nvidia-ml-py returns the c_uint itself here
    is_mig = lambda h: getattr(N.nvmlDeviceIsMigDeviceHandle(h), "value",
                               N.nvmlDeviceIsMigDeviceHandle(h))
    c.eq(is_mig(g), 0, "the GPU's handle is not a MIG handle")
    m = [N.nvmlDeviceGetMigDeviceHandleByIndex(g, i) for i in (0, 1)]
    c.raises(lambda: N.nvmlDeviceGetMigDeviceHandleByIndex(g, 2), NOT_FOUND,
             "slot 2 holds no MIG device: NOT_FOUND")
    c.raises(lambda: N.nvmlDeviceGetMigDeviceHandleByIndex(g, 7), INVALID_ARGUMENT,
             "slot 7: INVALID_ARGUMENT")
    c.eq([is_mig(h) for h in m], [1, 1], "MIG handles")
    c.eq([N.nvmlDeviceGetUUID(h) for h in m],
         ["MIG-44444444-5555-6666-7777-888888880100", "MIG-6e1c8b0a-2f3d-5b7e-9a41-c0d2e3f4a5b6"],
         "MIG UUIDs: the default one, and the scenario's")
    c.eq(N.nvmlDeviceGetName(m[0]), "NVIDIA H100 80GB HBM3 MIG 3g.40gb", "the default name")
    c.eq([N.nvmlDeviceGetGpuInstanceId(h) for h in m], [1, 2], "GPU instance ids")
    c.eq([N.nvmlDeviceGetComputeInstanceId(h) for h in m], [0, 0], "compute instance ids")
    c.raises(lambda: N.nvmlDeviceGetGpuInstanceId(g), NOT_SUPPORTED,
             "a whole GPU has no GPU instance id")
    mem = N.nvmlDeviceGetMemoryInfo(m[0])
    c.eq((mem.total, mem.used), (40448 * MiB, 20013 * MiB), "a MIG device's own memory")
    mem = N.nvmlDeviceGetMemoryInfo(m[1], version=N.nvmlMemory_v2)
    c.eq((mem.total, mem.used), (40448 * MiB, 9013 * MiB), "and through the v2 struct")
    c.raises(lambda: N.nvmlDeviceGetUtilizationRates(m[0]), NOT_SUPPORTED,
             "a MIG device's utilisation: NOT_SUPPORTED")
    a = N.nvmlDeviceGetAttributes(m[0])
    c.eq((a.multiprocessorCount, a.gpuInstanceSliceCount, a.computeInstanceSliceCount,
          a.memorySizeMB), (60, 3, 3, 40448), "attributes: SMs, slices, memory in MiB")
    c.raises(lambda: N.nvmlDeviceGetAttributes(g), NOT_SUPPORTED,
             "a whole GPU's attributes: NOT_SUPPORTED")
    parent = N.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(m[1])
    c.eq(N.nvmlDeviceGetUUID(parent), N.nvmlDeviceGetUUID(g), "back from the MIG handle to the GPU")
    c.eq(N.nvmlDeviceGetPciInfo(m[0]).busId, N.nvmlDeviceGetPciInfo(g).busId,
         "a MIG device is on its GPU's bus")
    procs = N.nvmlDeviceGetComputeRunningProcesses(g)
    c.eq(sorted((p.pid, p.gpuInstanceId, p.computeInstanceId) for p in procs),
         [(1001, 1, 0), (2002, 2, 0)], "the GPU lists its processes with their instance ids")
    c.eq([[p.pid for p in N.nvmlDeviceGetComputeRunningProcesses(h)] for h in m], [[1001], [2002]],
         "a MIG handle lists the processes of its instance")
    N.nvmlShutdown()


def child_topology_raw(c, args):
    """full.scn: no topology keys; bad handles; the legacy struct of the plain RemotePciInfo."""
    c.rc(fn("nvmlInit_v2")(), SUCCESS, "nvmlInit_v2")
    h0, h1 = handle(0), handle(1)
    level = c_uint(77)
    c.rc(fn("nvmlDeviceGetTopologyCommonAncestor")(h0, h1, byref(level)), NOT_SUPPORTED,
         "no topology_group: NOT_SUPPORTED")
    c.rc(fn("nvmlDeviceGetTopologyCommonAncestor")(h0, c_void_p(16), byref(level)),
         INVALID_ARGUMENT, "a foreign second handle: INVALID_ARGUMENT")
    c.rc(fn("nvmlDeviceGetTopologyCommonAncestor")(h0, h1, None), INVALID_ARGUMENT,
         "NULL level: INVALID_ARGUMENT")
    c.eq(get_uint("nvmlDeviceGetNvLinkState", h0, c_uint(0))[0], NOT_SUPPORTED,
         "no nvlink_peers: NvLinkState NOT_SUPPORTED")
    fn("nvmlShutdown")()


def child_topology_switch(c, args):
    """nvlink_peers = switch: links to NVSwitches, through pynvml."""
    import pynvml as N
    N.nvmlInit()
    h = N.nvmlDeviceGetHandleByIndex(0)
    c.eq([N.nvmlDeviceGetNvLinkState(h, link) for link in range(3)], [1, 1, 0],
         "two links to switches are active")
    c.eq([N.nvmlDeviceGetNvLinkRemoteDeviceType(h, link) for link in range(2)], [2, 0],
         "the far end of link 0 is a switch, of link 1 GPU 1")
    c.eq(N.nvmlDeviceGetNvLinkRemotePciInfo(h, 0).busId, "00000000:FE:00.0",
         "a switch's PCI bus id")
    N.nvmlShutdown()


def child_topology_legacy(c, args):
    c.rc(fn("nvmlInit")(), SUCCESS, "nvmlInit")
    h = handle(1, "nvmlDeviceGetHandleByIndex")
    raw = (ctypes.c_ubyte * 68)(*([0xAA] * 68))
    c.rc(fn("nvmlDeviceGetNvLinkRemotePciInfo")(h, c_uint(0), raw), SUCCESS,
         "plain nvmlDeviceGetNvLinkRemotePciInfo")
    c.ok(bytes(raw)[:12] == b"0000:18:00.0" and bytes(raw)[52:] == b"\xaa" * 16,
         "plain nvmlDeviceGetNvLinkRemotePciInfo: GPU 0, in the 52 bytes of the first struct")
    c.ok(not hasattr(L, "nvmlDeviceGetNvLinkRemotePciInfo_v2"), "legacy: no _v2")
    fn("nvmlShutdown")()


def child_stubs(c, args):
    c.rc(fn("nvmlInit_v2")(), SUCCESS, "the stubs/ copy loads and works")
    c.eq(get_string("nvmlDeviceGetName", handle(0))[1], "NVIDIA H100 80GB HBM3", "name")
    fn("nvmlShutdown")()


def gpm_get(N, s1, s2, ids):
    """nvmlGpmMetricsGet through pynvml's struct: {id: (nvmlReturn, value, (short, long, unit))}."""
    mg = N.c_nvmlGpmMetricsGet_t()
    mg.version = N.NVML_GPM_METRICS_GET_VERSION
    mg.numMetrics = len(ids)
    mg.sample1, mg.sample2 = s1, s2
    for i, mid in enumerate(ids):
        mg.metrics[i].metricId = mid
    N.nvmlGpmMetricsGet(mg)
    return {m.metricId: (m.nvmlReturn, m.value, (m.metricInfo.shortName, m.metricInfo.longName,
                                                  m.metricInfo.unit))
            for m in mg.metrics[:len(ids)]}


def child_gpm_pynvml(c, args):
    """tests/scenarios/gpm.scn: GPM through nvidia-ml-py, as a client that samples twice."""
    import pynvml as N
    N.nvmlInit()
    h = [N.nvmlDeviceGetHandleByIndex(i) for i in range(3)]
    c.eq([N.nvmlGpmQueryDeviceSupport(x).isSupportedDevice for x in h], [1, 1, 0],
         "isSupportedDevice: the H100s (metric keys, gpm_supported = 1), not the A100")
    s1, s2 = N.nvmlGpmSampleAlloc(), N.nvmlGpmSampleAlloc()
    N.nvmlGpmSampleGet(h[0], s1)
    N.nvmlGpmSampleGet(h[0], s2)
    ids = (1, 2, 3, 5, 10, 11, 12, 13, 20, 21, 60, 61)
    got = gpm_get(N, s1, s2, ids)
    want = (99.5, 93.2, 41.5, 62.8, 47.5, 0, 11.2, 8.5, 812.5, 3100, 121500, 118000)
    c.eq([got[i][:2] for i in ids], [(SUCCESS, w) for w in want],
         "GPU 0: every metric is its key's value, rates in MiB/s")
    c.eq(got[2][2], (b"sm_util", b"SM activity", b"%"), "metricInfo of SM_UTIL")
    c.eq(got[20][2][2], b"MiB/sec", "metricInfo unit of PCIE_TX_PER_SEC")
    N.nvmlGpmSampleGet(h[1], s1)
    N.nvmlGpmSampleGet(h[1], s2)
    got = gpm_get(N, s1, s2, (2, 60, 61, 4))
    c.eq([got[i][:2] for i in (2, 60, 61, 4)],
         [(SUCCESS, 0.8), (NOT_SUPPORTED, 0), (NOT_SUPPORTED, 0), (NOT_SUPPORTED, 0)],
         "GPU 1: N/A and an id the fake does not compute answer NOT_SUPPORTED per metric")
    c.raises(lambda: N.nvmlGpmSampleGet(h[2], s1), NOT_SUPPORTED,
             "a GPU without GPM: nvmlGpmSampleGet NOT_SUPPORTED")
    N.nvmlGpmSampleGet(h[0], s2)
    c.raises(lambda: gpm_get(N, s1, s2, (2,)), INVALID_ARGUMENT,
             "samples of two GPUs: INVALID_ARGUMENT")
    N.nvmlGpmSampleFree(s1)
    c.raises(lambda: gpm_get(N, s1, s2, (2,)), INVALID_ARGUMENT,
             "a freed sample: INVALID_ARGUMENT")
    c.raises(lambda: N.nvmlGpmSampleFree(s1), INVALID_ARGUMENT,
             "a sample freed twice: INVALID_ARGUMENT")
    N.nvmlGpmSampleFree(s2)
    N.nvmlShutdown()


class GpmSupport(Structure):
    _fields_ = [("version", c_uint), ("isSupportedDevice", c_uint)]


class GpmMetric(Structure):
    _fields_ = [("metricId", c_uint), ("nvmlReturn", c_uint), ("value", ctypes.c_double),
                ("shortName", c_char_p), ("longName", c_char_p), ("unit", c_char_p)]


class GpmMetricsGet(Structure):
    """nvmlGpmMetricsGet_t with a short metrics array: the library reads numMetrics of them."""
    _fields_ = [("version", c_uint), ("numMetrics", c_uint), ("sample1", c_void_p),
                ("sample2", c_void_p), ("metrics", GpmMetric * 4)]


def child_gpm_raw(c, args):
    """GPM through ctypes: layouts, version words, NULLs, time order, scenario time."""
    c.eq((sizeof(GpmMetric), GpmMetricsGet.metrics.offset, sizeof(GpmSupport)), (40, 24, 8),
         "the layouts of nvml.h")
    s1, s2 = c_void_p(), c_void_p()
    c.rc(fn("nvmlGpmSampleAlloc")(byref(s1)), UNINITIALIZED, "SampleAlloc before nvmlInit")
    fn("nvmlInit_v2")()
    h = handle(0)
    sup = GpmSupport(version=2)
    c.rc(fn("nvmlGpmQueryDeviceSupport")(h, byref(sup)), ARGUMENT_VERSION_MISMATCH,
         "QueryDeviceSupport, version 2: ARGUMENT_VERSION_MISMATCH")
    c.rc(fn("nvmlGpmQueryDeviceSupport")(h, None), INVALID_ARGUMENT, "QueryDeviceSupport(NULL)")
    c.rc(fn("nvmlGpmSampleAlloc")(None), INVALID_ARGUMENT, "SampleAlloc(NULL)")
    c.rc(fn("nvmlGpmSampleAlloc")(byref(s1)), SUCCESS, "SampleAlloc")
    fn("nvmlGpmSampleAlloc")(byref(s2))
    c.rc(fn("nvmlGpmSampleGet")(h, None), INVALID_ARGUMENT, "SampleGet(NULL sample)")
    mg = GpmMetricsGet(version=1, numMetrics=1)
    mg.sample1, mg.sample2 = s1, s2
    mg.metrics[0].metricId = 2
    c.rc(fn("nvmlGpmMetricsGet")(byref(mg)), INVALID_ARGUMENT, "MetricsGet of samples not taken")
    fn("nvmlGpmSampleGet")(h, s1)
    fn("nvmlGpmSampleGet")(h, s2)
    mg.version = 2
    c.rc(fn("nvmlGpmMetricsGet")(byref(mg)), ARGUMENT_VERSION_MISMATCH,
         "MetricsGet, version 2: ARGUMENT_VERSION_MISMATCH")
    mg.version, mg.numMetrics = 1, 478
    c.rc(fn("nvmlGpmMetricsGet")(byref(mg)), INVALID_ARGUMENT,
         "MetricsGet of more than NVML_GPM_METRIC_MAX metrics")
    c.rc(fn("nvmlGpmMetricsGet")(None), INVALID_ARGUMENT, "MetricsGet(NULL)")
    mg.numMetrics = 1
    t = float(os.environ["FAKE_NVML_TIME"])
    c.rc(fn("nvmlGpmMetricsGet")(byref(mg)), SUCCESS, "MetricsGet")
    # h100x8.scn GPU 0: gpm_sm_util = square 1 91 30 0.8
    c.eq((mg.metrics[0].nvmlReturn, mg.metrics[0].value), (SUCCESS, square(t, 1, 91, 30, 0.8)),
         "the value of gpm_sm_util at t=%g" % t)
    mg.sample1, mg.sample2 = s2, s1
    c.rc(fn("nvmlGpmMetricsGet")(byref(mg)), SUCCESS, "two samples of one time, either order")
    fn("nvmlGpmSampleFree")(s1)
    fn("nvmlGpmSampleFree")(s2)
    c.rc(fn("nvmlGpmSampleGet")(h, s1), INVALID_ARGUMENT, "SampleGet into a freed sample")
    fn("nvmlShutdown")()


CHILDREN = {name[len("child_"):]: f for name, f in globals().items() if name.startswith("child_")}


def child_main(argv):
    global L
    case, lib, args = argv[0], argv[1], argv[2:]
    # loaded by path first: pynvml's CDLL("libnvidia-ml.so.1") then finds it by soname
    L = ctypes.CDLL(lib)
    c = Check(case)
    CHILDREN[case](c, args)
    print(json.dumps({"done": True}), flush=True)


# =====================================================================
# Parent side: run the children, add checks of files and symbols, print TAP
# =====================================================================

class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, desc, diag=""):
        self.n += 1
        print("%sok %d - %s" % ("" if cond else "not ", self.n, desc))
        if not cond:
            self.failed += 1
            for line in str(diag).splitlines() or [""]:
                print("#   %s" % line)
        sys.stdout.flush()
        return cond

    def skip_missing(self, desc, why):
        """A case that needs what an install provides: a skip, a failure under GPUSCOPE_NO_SKIP=1."""
        if os.environ.get("GPUSCOPE_NO_SKIP") == "1":
            return self.ok(False, "%s: %s (GPUSCOPE_NO_SKIP=1: a skip is a failure)" % (desc, why))
        self.n += 1
        print("ok %d - %s # SKIP %s" % (self.n, desc, why))
        sys.stdout.flush()
        return True


def lib_dir():
    o = os.environ.get("O", "build")
    if not os.path.isabs(o) and not os.path.isdir(os.path.join(o, "fakenvml")):
        o = os.path.join(ROOT, o)
    return os.path.join(o, "fakenvml")


def run_child(tap, case, lib, scenario=None, time_=None, env=None, args=()):
    e = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_NVML_")}
    if scenario:
        e["FAKE_NVML_SCENARIO"] = scenario
    if time_ is not None:
        e["FAKE_NVML_TIME"] = str(time_)
    e.update(env or {})
    cmd = [sys.executable, os.path.abspath(__file__), "--child", case, lib] + [str(a) for a in args]
    try:
        p = subprocess.run(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    except subprocess.TimeoutExpired:
        tap.ok(False, "%s: child process finished" % case, "timed out")
        return
    done = False
    for line in p.stdout.decode(errors="replace").splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("done"):
            done = True
        else:
            tap.ok(r["ok"], r["desc"], r["diag"])
    if not done or p.returncode != 0:
        tap.ok(False, "%s %s: child process finished" % (case, " ".join(map(str, args))),
               "exit status %d\n%s" % (p.returncode, p.stderr.decode(errors="replace")[-3000:]))


def defined_symbols(lib):
    nm = shutil.which("nm")
    if not nm:
        return None
    out = subprocess.run([nm, "-D", "--defined-only", lib], stdout=subprocess.PIPE, check=True)
    return sorted(line.split()[-1] for line in out.stdout.decode().splitlines() if line.strip())


def check_files(tap, d):
    current, legacy, stubs = (os.path.join(d, k, "libnvidia-ml.so.1")
                              for k in ("current", "legacy", "stubs"))
    for lib in (current, legacy, stubs):
        tap.ok(os.path.isfile(lib), "%s exists" % os.path.relpath(lib, ROOT))
    if not all(os.path.isfile(lib) for lib in (current, legacy, stubs)):
        return
    with open(current, "rb") as a, open(stubs, "rb") as b:
        tap.ok(a.read() == b.read(), "stubs/ holds the current library")
    names = symbols()
    tap.ok(len(names) == len(set(names)) == 417, "symbols.txt: 417 distinct names")
    got = defined_symbols(current)
    if got is None:
        tap.skip_missing("nm -D of the libraries", "nm not installed (binutils)")
        return
    want = sorted(names + ["gpuscope_fake_nvml_scenario"])
    tap.ok(got == want, "current exports symbols.txt and gpuscope_fake_nvml_scenario, no more",
           "extra %s\nmissing %s" % (sorted(set(got) - set(want)), sorted(set(want) - set(got))))
    got = defined_symbols(legacy)
    want = sorted([n for n in names if not legacy_drops(n)] + ["gpuscope_fake_nvml_scenario"])
    tap.ok(got == want, "legacy exports symbols.txt less the names old drivers lacked",
           "extra %s\nmissing %s" % (sorted(set(got) - set(want)), sorted(set(want) - set(got))))
    tap.ok(not [n for n in got if re.search(r"_v[23]$", n)], "legacy: no _v2/_v3 name")


def check_valgrind(tap, d):
    """Builds tools/exercise.c against the fake and runs it under memcheck and helgrind."""
    valgrind = shutil.which("valgrind")
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("cc")
    if not valgrind or not cc:
        tap.skip_missing("valgrind", "valgrind or cc not installed")
        return
    libdir = os.path.join(d, "current")
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "exercise")
        build = subprocess.run([cc, "-std=gnu11", "-D_GNU_SOURCE", "-g",
                                "-I" + os.path.join(ROOT, "src"), "-I" + HERE, "-o", exe,
                                os.path.join(HERE, "tools", "exercise.c"), "-L" + libdir,
                                "-l:libnvidia-ml.so.1", "-Wl,-rpath," + libdir, "-lpthread"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if not tap.ok(build.returncode == 0, "tools/exercise.c builds against the fake",
                      build.stdout.decode()):
            return
        env = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_NVML_")}
        # live processes too: this process on GPU 0, a leak of a gone one, a malformed line
        live = os.path.join(tmp, "live")
        os.mkdir(live)
        with open(os.path.join(live, str(os.getpid())), "w") as f:
            f.write("0 100\n1 x\n")
        with open(os.path.join(live, "999999999"), "w") as f:
            f.write("0 50 leak\n")
        env.update(FAKE_NVML_SCENARIO=os.path.join(SCN, "full.scn"), FAKE_NVML_TIME="12",
                   FAKE_NVML_LIVE_DIR=live)
        for tool in (["--tool=memcheck", "--leak-check=full", "--show-leak-kinds=all",
                      "--errors-for-leak-kinds=all"], ["--tool=helgrind"]):
            p = subprocess.run([valgrind, "-q", "--error-exitcode=99"] + tool + [exe], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            out = p.stdout.decode(errors="replace")
            if "debuginfo" in out and p.returncode != 99 and p.returncode != 0:
                tap.skip_missing("valgrind %s" % tool[0],
                                 "valgrind cannot read this build's debug information")
                continue
            tap.ok(p.returncode == 0 and not out.strip(),
                   "valgrind %s: init, queries from threads (live processes too), shutdown, "
                   "twice: clean" % tool[0],
                   out[-3000:])


def main():
    try:
        import pynvml  # noqa: F401
    except ImportError:
        print("1..0 # SKIP pynvml (nvidia-ml-py) not installed")
        return 0
    d = lib_dir()
    current, legacy, stubs = (os.path.join(d, k, "libnvidia-ml.so.1")
                              for k in ("current", "legacy", "stubs"))
    tap = Tap()
    if not os.path.isfile(current):
        tap.ok(False, "%s exists (build the fake libraries first)" % current)
        print("1..%d" % tap.n)
        return 1
    full = os.path.join(SCN, "full.scn")
    faults = os.path.join(SCN, "faults.scn")
    check_files(tap, d)
    run_child(tap, "full_pynvml", current, full, 12)
    run_child(tap, "full_raw", current, full, 12)
    run_child(tap, "lifecycle", current, full, 12)
    for t in (0, 3, 5, 7.5, 10, 12.5, 14, 15, 17, 20, 25, 30, 40, 85):
        run_child(tap, "expressions", current, os.path.join(SCN, "expressions.scn"), t, args=[t])
    for t in (0, 7, 12, 22, 35, 45, 55, 60, 120):
        run_child(tap, "faults", current, faults, t, args=[t])
    run_child(tap, "lost_live", current, faults)
    run_child(tap, "threads", current, faults, 22)
    run_child(tap, "cc", current, os.path.join(SCN, "cc.scn"), 0)
    run_child(tap, "mig_pynvml", current, os.path.join(ROOT, "tests", "scenarios", "mig.scn"), 0)
    events = os.path.join(SCN, "events.scn")
    run_child(tap, "events_pynvml", current, events, env={"FAKE_NVML_SPEED": "10"})
    run_child(tap, "events_raw", current, events, env={"FAKE_NVML_SPEED": "10"})
    run_child(tap, "init_error", current, os.path.join(SCN, "init_error.scn"), 0)
    run_child(tap, "environment", current)
    for t in (3, 7, 13, 23.5):
        run_child(tap, "period", current, os.path.join(SCN, "period.scn"), t, args=[t])
    with tempfile.TemporaryDirectory() as tmp:
        clock = os.path.join(tmp, "clock.scn")
        with open(clock, "w") as f:
            f.write("[gpu]\ntemperature = steps 0:1 50:2 150:3\n[process 9]\ngpu = 0\n"
                    "sm_util = 10\n")
        run_child(tap, "clock", current, clock, env={"FAKE_NVML_EPOCH": str(time.time() - 100)})
        run_child(tap, "clock", current, clock, 70, env={"FAKE_NVML_EPOCH": "1000"})
        run_child(tap, "clock", current, clock)
        recurring = os.path.join(tmp, "recurring.scn")
        with open(recurring, "w") as f:
            f.write("[system]\nperiod = 2\n[gpu]\nxid = 0.5:31 1.5:32\n")
        run_child(tap, "events_period", current, recurring, env={"FAKE_NVML_SPEED": "10"})
        run_child(tap, "nvlink_raw", current, os.path.join(ROOT, "tests/scenarios/nvlink.scn"),
                  160, env={"FAKE_NVML_EPOCH": "1767225600"})
        log = os.path.join(tmp, "calls.log")
        with open(log, "w") as f:
            f.write("earlier line kept (O_APPEND)\n")
        run_child(tap, "log", current, full, 12, env={"FAKE_NVML_LOG": log})
        example = os.path.join(tmp, "example.scn")
        with open(os.path.join(ROOT, "docs", "scenario-format.md")) as f:
            m = re.search(r"```ini\n(.*?)```", f.read(), re.S)
        if tap.ok(m is not None, "docs/scenario-format.md has an example"):
            with open(example, "w") as f:
                f.write(m.group(1))
            run_child(tap, "doc_example", current, example, 60)
    bad = os.path.join(SCN, "bad")
    for name in sorted(os.listdir(bad)):
        run_child(tap, "bad", current, os.path.join(bad, name), 0)
    queue = os.path.join(ROOT, "tests", "scenarios", "queue.scn")
    with tempfile.TemporaryDirectory() as tmp:
        live = os.path.join(tmp, "live")
        os.mkdir(live)
        os.chmod(live, 0o1777)
        run_child(tap, "live_pynvml", current, queue, env={"FAKE_NVML_LIVE_DIR": live})
        for layout in ("v2", "cc"):
            scn = os.path.join(tmp, "live-%s.scn" % layout)
            with open(scn, "w") as f:
                # the key of the file, relative to the file's folder
                f.write("[system]\nlive_processes = live\nprocess_v3_layout = %s\n"
                        "[gpu]\nmemory_total = 1 GiB\nmemory_used = 0\n"
                        "[process 424242]\ngpu = 0\nused_memory = 5 MiB\n" % layout)
            run_child(tap, "live_raw", current, scn, args=[layout])
    run_child(tap, "topology_pynvml", current, queue)
    with tempfile.TemporaryDirectory() as tmp:
        scn = os.path.join(tmp, "switch.scn")
        with open(scn, "w") as f:
            f.write("[gpu]\nnvlink_peers = switch,1\n[gpu]\nnvlink_peers = 0\n")
        run_child(tap, "topology_switch", current, scn)
    run_child(tap, "topology_raw", current, full, 12)
    run_child(tap, "topology_legacy", legacy, queue)
    run_child(tap, "gpm_pynvml", current, os.path.join(ROOT, "tests/scenarios/gpm.scn"), 0)
    for t in (3, 27):  # h100x8.scn's training GPU busy, then stalled
        run_child(tap, "gpm_raw", current, os.path.join(ROOT, "data/demo/h100x8.scn"), t)
    run_child(tap, "legacy", legacy, full, 12)
    run_child(tap, "stubs", stubs, full, 12)
    check_valgrind(tap, d)
    print("1..%d" % tap.n)
    return 1 if tap.failed else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child_main(sys.argv[2:])
    else:
        sys.exit(main())
