#!/usr/bin/env python3
"""
Cross-check of gpuscope against NVIDIA's own Python binding (nvidia-ml-py).

The project's rule: pynvml reading the same fake libnvidia-ml.so.1 must see
the values gpuscope prints, for every scenario in the suite; that is how we
know the fake is faithful and gpuscope reads it right.

For every scenario (tests/scenarios/*.scn, tests/fakenvml/scenarios/*.scn,
tests/pynvml/scenarios/*.scn, data/demo/h100x8.scn) at several scenario
times (0, 7.5, 31, 250 and the times at which the scenario changes):

  1. gpuscope status --json and gpuscope query ... run on the fake;
  2. a child process (this file, run with --read) reads the same fake through
     pynvml's public API (ctypes only where pynvml has no plain-symbol
     wrapper) and prints the raw NVML values as JSON;
  3. the raw values are converted as gpuscope documents them
     (docs/json-schema.md) and compared key by key.

The legacy build of the fake (no _v2/_v3 symbols) is checked too, at one time
per scenario: both sides then fall back to the plain symbols. So are the
fake's live processes (FAKE_NVML_LIVE_DIR) on tests/scenarios/queue.scn: a
real process of this script registered on two GPUs, and the leak of one gone.

gpuscope drops a process whose pid is not in its proc root. Every scenario
runs on a generated proc root that has all the scenario pids, unless it names
another one in a comment line of its own, as tests/pynvml/scenarios/ do:
    # crosscheck: proc_root = tests/fixtures/proc
Its missing pids are then expected to be dropped.

Prints TAP; exits 1 when a check fails. Environment: O (build directory,
default "build"). Run as: $PY tests/pynvml/crosscheck.py
"""
import concurrent.futures
import ctypes
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

EPOCH = 1767225600  # 2026-01-01T00:00:00Z is scenario time 0
DEFAULT_TIMES = (0.0, 7.5, 31.0, 250.0)
MAX_TIMES = 12  # per scenario, defaults included
LEGACY_TIME = 7.5
TIMEOUT_S = 2  # gpuscope --timeout
# times at which a scenario's delays add up to more than SLOW_MS are slow (the
# pynvml reader waits for every delay): only the first slow time of a
# scenario is checked, and only if its delays stay under MAX_DELAY_MS
SLOW_MS = 500
MAX_DELAY_MS = 5000
CHILD_TIMEOUT_S = 60

# NVML return codes used here (nvml.h)
SUCCESS, NOT_SUPPORTED, NO_PERMISSION, NOT_FOUND = 0, 3, 4, 6
INSUFFICIENT_SIZE, DRIVER_NOT_LOADED, LIBRARY_NOT_FOUND = 7, 9, 12
FUNCTION_NOT_FOUND, GPU_IS_LOST, RESET_REQUIRED = 13, 15, 16
LIB_RM_VERSION_MISMATCH = 18
NOT_AVAILABLE = (1 << 64) - 1
NO_INSTANCE = 0xFFFFFFFF
MiB = 1 << 20

# NVLink error counters as gpuscope shows them per link (docs/json-schema.md `nvlink`)
NVLINK_ERRORS = (("crc_flit_errors", "NVML_NVLINK_ERROR_DL_CRC_FLIT"),
                 ("crc_data_errors", "NVML_NVLINK_ERROR_DL_CRC_DATA"),
                 ("replay_errors", "NVML_NVLINK_ERROR_DL_REPLAY"),
                 ("recovery_errors", "NVML_NVLINK_ERROR_DL_RECOVERY"))
NVLINK_TOTALS = (("nvlink_tx_bytes", "tx_bytes"), ("nvlink_rx_bytes", "rx_bytes"),
                 ("nvlink_crc_flit_errors", "crc_flit_errors"),
                 ("nvlink_crc_data_errors", "crc_data_errors"),
                 ("nvlink_replay_errors", "replay_errors"),
                 ("nvlink_recovery_errors", "recovery_errors"))
# violation counters: JSON key (seconds), NVML perf policy (ns)
VIOLATIONS = (("violation_power_seconds", "NVML_PERF_POLICY_POWER"),
              ("violation_thermal_seconds", "NVML_PERF_POLICY_THERMAL"),
              ("violation_sync_boost_seconds", "NVML_PERF_POLICY_SYNC_BOOST"),
              ("violation_board_limit_seconds", "NVML_PERF_POLICY_BOARD_LIMIT"),
              ("violation_low_utilization_seconds", "NVML_PERF_POLICY_LOW_UTILIZATION"),
              ("violation_reliability_seconds", "NVML_PERF_POLICY_RELIABILITY"),
              ("violation_app_clocks_seconds", "NVML_PERF_POLICY_TOTAL_APP_CLOCKS"),
              ("violation_base_clocks_seconds", "NVML_PERF_POLICY_TOTAL_BASE_CLOCKS"))

# GPM metrics as gpuscope shows them: JSON key, NVML metric id, scale, a percentage
GPM_KEYS = (("prof_graphics_active_percent", 1, 1, True),
            ("prof_sm_active_percent", 2, 1, True),
            ("prof_sm_occupancy_percent", 3, 1, True),
            ("prof_tensor_active_percent", 5, 1, True),
            ("prof_dram_active_percent", 10, 1, True),
            ("prof_fp64_active_percent", 11, 1, True),
            ("prof_fp32_active_percent", 12, 1, True),
            ("prof_fp16_active_percent", 13, 1, True),
            ("prof_pcie_tx_bytes_per_second", 20, MiB, False),  # NVML: MiB/s
            ("prof_pcie_rx_bytes_per_second", 21, MiB, False),
            ("prof_nvlink_tx_bytes_per_second", 61, MiB, False),
            ("prof_nvlink_rx_bytes_per_second", 60, MiB, False))

# ---------------------------------------------------------------------------
# The child: read everything gpuscope reports through pynvml, as raw values
# ---------------------------------------------------------------------------


def mig_read(N, h):
    """The MIG devices of GPU h as pynvml sees them (gpuscope's order: by slot)."""
    try:
        if N.nvmlDeviceGetMigMode(h)[0] != 1:
            return []
        slots = N.nvmlDeviceGetMaxMigDeviceCount(h)
    except N.NVMLError:
        return []
    out = []
    for k in range(min(slots, 64)):
        try:
            m = N.nvmlDeviceGetMigDeviceHandleByIndex(h, k)
        except N.NVMLError:
            continue
        d = {"index": k}
        for key, fn in (("uuid", N.nvmlDeviceGetUUID), ("name", N.nvmlDeviceGetName),
                        ("gi", N.nvmlDeviceGetGpuInstanceId),
                        ("ci", N.nvmlDeviceGetComputeInstanceId)):
            try:
                d[key] = fn(m)
            except N.NVMLError:
                d[key] = None
        d["sm"] = None
        try:
            d["sm"] = N.nvmlDeviceGetAttributes(m).multiprocessorCount or None
        except N.NVMLError:
            # the legacy library has only the plain name, which gpuscope falls back to
            try:
                a = N.c_nvmlDeviceAttributes()
                fn = N._nvmlGetFunctionPointer("nvmlDeviceGetAttributes")
                N._nvmlCheckReturn(fn(m, ctypes.byref(a)))
                d["sm"] = a.multiprocessorCount or None
            except N.NVMLError:
                pass
        d["memory"] = (None, None)
        for version in (N.nvmlMemory_v2, None):  # the legacy library has only the plain one
            try:
                mem = N.nvmlDeviceGetMemoryInfo(m, version) if version else \
                    N.nvmlDeviceGetMemoryInfo(m)
                d["memory"] = (mem.total, mem.used)
                break
            except N.NVMLError:
                pass
        out.append(d)
    return out


def compare_mig(doc, child):
    """Mismatches between gpuscope's MIG devices (gpus[] with "mig") and pynvml's."""
    bad = []
    have = [(d["mig"]["parent"], d) for d in doc.get("gpus", []) if d.get("mig")]
    want = [(i, m) for i, g in enumerate(child["gpus"]) for m in g.get("mig") or []]
    if len(have) != len(want):
        return ["MIG devices: gpuscope %d, pynvml %d" % (len(have), len(want))]
    for (hp, d), (wp, m) in zip(have, want):
        prof = m["name"].rsplit(" MIG ", 1)[1] if m["name"] and " MIG " in m["name"] else None
        for key, got, exp in (("parent", hp, wp), ("index", d.get("index"), m["index"]),
                              ("uuid", d.get("uuid"), m["uuid"]), ("name", d.get("name"), m["name"]),
                              ("gpu_instance", d["mig"].get("gpu_instance"), m["gi"]),
                              ("compute_instance", d["mig"].get("compute_instance"), m["ci"]),
                              ("profile", d["mig"].get("profile"), prof),
                              ("sm_count", d["mig"].get("sm_count"), m["sm"]),
                              ("memory_total_bytes", d.get("memory_total_bytes"), m["memory"][0]),
                              ("memory_used_bytes", d.get("memory_used_bytes"), m["memory"][1])):
            if got != exp:
                bad.append("MIG device %s of GPU %s %s: gpuscope %s, pynvml %s"
                           % (m["index"], wp, key, show(got), show(exp)))
    return bad


def child_read(since_us, cc_layout):
    """Read the fake named by the environment; return a JSON-able dict."""
    import pynvml as N

    def code(e):
        return getattr(e, "value", None)

    def newest(*fns):
        """The first of fns whose symbol the library has (as gpuscope resolves)."""
        def call(*args):
            for fn in fns[:-1]:
                try:
                    return fn(*args)
                except N.NVMLError as e:
                    if code(e) != FUNCTION_NOT_FOUND:
                        raise
            return fns[-1](*args)
        return call

    def plain(name):
        """Call an NVML symbol through ctypes, where pynvml has no wrapper for it."""
        def call(*args):
            fn = N._nvmlGetFunctionPointer(name)
            N._nvmlCheckReturn(fn(*args))
        return call

    def plain_init():
        N._LoadNvmlLibrary()
        newest(plain("nvmlInit_v2"), plain("nvmlInit"))()

    def plain_count():
        n = ctypes.c_uint(0)
        plain("nvmlDeviceGetCount")(ctypes.byref(n))
        return n.value

    def plain_handle(i):
        h = N.c_nvmlDevice_t()
        plain("nvmlDeviceGetHandleByIndex")(ctypes.c_uint(i), ctypes.byref(h))
        return h

    def pci_info(name):
        def call(h):
            info = N.nvmlPciInfo_t()
            plain(name)(h, ctypes.byref(info))
            return info
        return call

    class ProcV1(ctypes.Structure):
        _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong)]

    def plain_procs(name):
        """The oldest process list (nvmlProcessInfo_v1_t), two-call pattern."""
        def call(h):
            fn = N._nvmlGetFunctionPointer(name)
            n = ctypes.c_uint(0)
            r = fn(h, ctypes.byref(n), None)
            if r == SUCCESS:
                return []
            if r != INSUFFICIENT_SIZE:
                raise N.NVMLError(r)
            n.value = n.value * 2 + 5
            buf = (ProcV1 * n.value)()
            N._nvmlCheckReturn(fn(h, ctypes.byref(n), buf))
            return [{"pid": e.pid, "usedGpuMemory": None if e.usedGpuMemory == NOT_AVAILABLE
                     else e.usedGpuMemory, "gpuInstanceId": NO_INSTANCE,
                     "computeInstanceId": NO_INSTANCE} for e in buf[:n.value]]
        return call

    def friendly(entries):
        return [{"pid": e.pid, "usedGpuMemory": e.usedGpuMemory,
                 "gpuInstanceId": e.gpuInstanceId, "computeInstanceId": e.computeInstanceId}
                for e in entries]

    out = {"init_error": None, "gpus": []}
    try:
        newest(N.nvmlInit, plain_init)()
    except N.NVMLError as e:
        text = None
        try:
            text = N.nvmlErrorString(code(e))
        except Exception:
            pass
        out["init_error"] = {"code": code(e), "text": text}
        return out
    if not hasattr(N.nvmlLib, "gpuscope_fake_nvml_scenario"):
        raise SystemExit("pynvml loaded a libnvidia-ml.so.1 that is not the fake")

    def gpm_read(h):
        """GPM: two samples (at the same scenario time), the metrics between them."""
        if not N.nvmlGpmQueryDeviceSupport(h).isSupportedDevice:
            return {}
        s1, s2 = N.nvmlGpmSampleAlloc(), N.nvmlGpmSampleAlloc()
        try:
            N.nvmlGpmSampleGet(h, s1)
            N.nvmlGpmSampleGet(h, s2)
            mg = N.c_nvmlGpmMetricsGet_t()
            mg.version = N.NVML_GPM_METRICS_GET_VERSION
            mg.numMetrics = len(GPM_KEYS)
            mg.sample1, mg.sample2 = s1, s2
            for i, (_, mid, _, _) in enumerate(GPM_KEYS):
                mg.metrics[i].metricId = mid
            N.nvmlGpmMetricsGet(mg)
            return {str(m.metricId): (m.nvmlReturn, m.value)
                    for m in mg.metrics[:len(GPM_KEYS)]}
        finally:
            N.nvmlGpmSampleFree(s1)
            N.nvmlGpmSampleFree(s2)

    def nvlink_read(h):
        """NVLink link by link, as gpuscope reads it: the state, the version, the four
        data-link error counters, then the data sent and received (fields 138 and 139,
        scopeId the link) of every link there in one call; a link that answers
        NOT_SUPPORTED or INVALID_ARGUMENT is not there."""
        def one(fn, *args):
            try:
                return fn(*args)
            except N.NVMLError as e:
                if code(e) in (GPU_IS_LOST, RESET_REQUIRED):
                    raise
                return None
        links = []
        for link in range(18):
            try:
                active = N.nvmlDeviceGetNvLinkState(h, link)
            except N.NVMLError as e:
                if code(e) in (GPU_IS_LOST, RESET_REQUIRED):
                    raise
                continue
            ln = {"link": link, "active": active == 1,
                  "version": one(N.nvmlDeviceGetNvLinkVersion, h, link) or None}
            for key, c in NVLINK_ERRORS:
                ln[key] = one(N.nvmlDeviceGetNvLinkErrorCounter, h, link, getattr(N, c))
            links.append(ln)
        if links:
            ids = [(fid, ln["link"]) for ln in links for fid in (138, 139)]
            fv = one(N.nvmlDeviceGetFieldValues, h, ids)
            for i, (fid, link) in enumerate(ids):
                ln = next(x for x in links if x["link"] == link)
                key = "tx_bytes" if fid == 138 else "rx_bytes"
                ok = fv is not None and fv[i].nvmlReturn == SUCCESS
                ln[key] = fv[i].value.ullVal * 1024 if ok else None
        return links

    def violation(h, policy):
        return N.nvmlDeviceGetViolationStatus(h, policy).violationTime

    def temperature(h):
        """nvmlDeviceGetTemperatureV first; the deprecated call where it is absent,
        NOT_SUPPORTED or of another struct version."""
        try:
            return N.nvmlDeviceGetTemperatureV(h, N.NVML_TEMPERATURE_GPU)
        except N.NVMLError as e:
            if code(e) not in (NOT_SUPPORTED, FUNCTION_NOT_FOUND, 25):
                raise
        return N.nvmlDeviceGetTemperature(h, N.NVML_TEMPERATURE_GPU)

    def sys_call(fn):
        try:
            return fn()
        except N.NVMLError:
            return None
    out["driver_version"] = sys_call(N.nvmlSystemGetDriverVersion)
    out["nvml_version"] = sys_call(N.nvmlSystemGetNVMLVersion)
    out["cuda_version"] = sys_call(newest(N.nvmlSystemGetCudaDriverVersion_v2,
                                          N.nvmlSystemGetCudaDriverVersion))
    try:
        count = newest(N.nvmlDeviceGetCount, plain_count)()
    except N.NVMLError as e:
        out["count_error"] = code(e)
        return out
    out["count"] = count
    # one event set for Xid errors, every GPU registered as gpuscope does at scan;
    # FAKE_NVML_TIME holds scenario time still, so none arrives and watched GPUs show []
    try:
        events = N.nvmlEventSetCreate()
    except N.NVMLError:
        events = None

    for i in range(count):
        g = {"handle_error": None, "stopped_by": None, "raw": {}, "err": {}}
        out["gpus"].append(g)
        try:
            h = newest(N.nvmlDeviceGetHandleByIndex, plain_handle)(i)
        except N.NVMLError as e:
            g["handle_error"] = code(e)
            continue
        raw, err = g["raw"], g["err"]

        def rd(key, fn, *args):
            """One call: its value, or None with the error remembered."""
            if g["stopped_by"]:
                raw[key] = None
                err[key] = "not asked (GPU %s)" % g["stopped_by"][1]
                return None
            try:
                v = fn(*args)
            except N.NVMLError as e:
                raw[key] = None
                err[key] = code(e)
                if code(e) in (GPU_IS_LOST, RESET_REQUIRED):
                    g["stopped_by"] = (key, "lost" if code(e) == GPU_IS_LOST
                                       else "reset_required")
                return None
            raw[key] = v
            return v

        # identity and static values, in the order gpuscope reads them at scan
        for key, fn in (("name", N.nvmlDeviceGetName), ("uuid", N.nvmlDeviceGetUUID),
                        ("serial", N.nvmlDeviceGetSerial),
                        ("vbios", N.nvmlDeviceGetVbiosVersion),
                        ("inforom", N.nvmlDeviceGetInforomImageVersion),
                        ("board_part", N.nvmlDeviceGetBoardPartNumber)):
            rd(key, fn, h)
        pci = rd("pci", newest(N.nvmlDeviceGetPciInfo_v3, pci_info("nvmlDeviceGetPciInfo_v2"),
                               pci_info("nvmlDeviceGetPciInfo")), h)
        if pci is not None:
            raw["pci"] = {"busId": pci.busId.decode(errors="replace")
                          if isinstance(pci.busId, bytes) else pci.busId,
                          "busIdLegacy": pci.busIdLegacy.decode(errors="replace")
                          if isinstance(pci.busIdLegacy, bytes) else pci.busIdLegacy,
                          "pciDeviceId": pci.pciDeviceId,
                          "pciSubSystemId": pci.pciSubSystemId}
        rd("brand", N.nvmlDeviceGetBrand, h)
        rd("architecture", N.nvmlDeviceGetArchitecture, h)
        rd("compute_capability", N.nvmlDeviceGetCudaComputeCapability, h)
        clocks = (("graphics", N.NVML_CLOCK_GRAPHICS), ("sm", N.NVML_CLOCK_SM),
                  ("memory", N.NVML_CLOCK_MEM), ("video", N.NVML_CLOCK_VIDEO))
        for name, c in clocks:
            rd("max_clock_" + name, N.nvmlDeviceGetMaxClockInfo, h, c)
        for name, th in (("slowdown", N.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN),
                         ("shutdown", N.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN),
                         ("gpu_max", N.NVML_TEMPERATURE_THRESHOLD_GPU_MAX),
                         ("mem_max", N.NVML_TEMPERATURE_THRESHOLD_MEM_MAX)):
            rd("threshold_" + name, N.nvmlDeviceGetTemperatureThreshold, h, th)
        rd("power_default", N.nvmlDeviceGetPowerManagementDefaultLimit, h)
        rd("power_constraints", N.nvmlDeviceGetPowerManagementLimitConstraints, h)
        rd("pcie_gen_max", N.nvmlDeviceGetMaxPcieLinkGeneration, h)
        rd("pcie_gen_gpu_max", N.nvmlDeviceGetGpuMaxPcieLinkGeneration, h)
        rd("pcie_width_max", N.nvmlDeviceGetMaxPcieLinkWidth, h)
        rd("reasons_supported", newest(N.nvmlDeviceGetSupportedClocksEventReasons,
                                       N.nvmlDeviceGetSupportedClocksThrottleReasons), h)
        g["xid_watch"] = "no event set"
        if events is not None:
            try:
                N.nvmlDeviceRegisterEvents(h, N.nvmlEventTypeXidCriticalError, events)
                g["xid_watch"] = None
            except N.NVMLError as e:
                g["xid_watch"] = code(e)

        # readings, in the order gpuscope reads them at each sample
        m = rd("memory_v2", N.nvmlDeviceGetMemoryInfo, h, N.nvmlMemory_v2)
        if m is not None:
            raw["memory_v2"] = {"total": m.total, "reserved": m.reserved,
                                "used": m.used, "free": m.free}
        else:
            m = rd("memory_v1", N.nvmlDeviceGetMemoryInfo, h)
            if m is not None:
                raw["memory_v1"] = {"total": m.total, "used": m.used, "free": m.free}
        b = rd("bar1", N.nvmlDeviceGetBAR1MemoryInfo, h)
        if b is not None:
            raw["bar1"] = {"total": b.bar1Total, "used": b.bar1Used}
        u = rd("utilization", N.nvmlDeviceGetUtilizationRates, h)
        if u is not None:
            raw["utilization"] = {"gpu": u.gpu, "memory": u.memory}
        for key, fn in (("encoder", N.nvmlDeviceGetEncoderUtilization),
                        ("decoder", N.nvmlDeviceGetDecoderUtilization),
                        ("jpeg", N.nvmlDeviceGetJpgUtilization),
                        ("ofa", N.nvmlDeviceGetOfaUtilization)):
            v = rd("util_" + key, fn, h)
            if v is not None:
                raw["util_" + key] = v[0]
        rd("temperature", temperature, h)
        rd("margin", N.nvmlDeviceGetMarginTemperature, h)
        fv = rd("fields", N.nvmlDeviceGetFieldValues, h,
                [N.NVML_FI_DEV_MEMORY_TEMP, N.NVML_FI_DEV_POWER_INSTANT,
                 N.NVML_FI_DEV_POWER_AVERAGE])
        if fv is not None:
            members = {N.NVML_VALUE_TYPE_DOUBLE: "dVal", N.NVML_VALUE_TYPE_UNSIGNED_INT: "uiVal",
                       N.NVML_VALUE_TYPE_UNSIGNED_LONG: "ulVal",
                       N.NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: "ullVal",
                       N.NVML_VALUE_TYPE_SIGNED_LONG_LONG: "sllVal",
                       N.NVML_VALUE_TYPE_SIGNED_INT: "siVal",
                       N.NVML_VALUE_TYPE_UNSIGNED_SHORT: "usVal"}
            raw["fields"] = {}
            for f in fv:
                mem = members.get(f.valueType)
                raw["fields"][str(f.fieldId)] = {
                    "ret": f.nvmlReturn, "type": f.valueType,
                    "value": getattr(f.value, mem) if mem else None}
        rd("fan", N.nvmlDeviceGetFanSpeed, h)
        rd("power_usage", N.nvmlDeviceGetPowerUsage, h)
        rd("power_enforced", N.nvmlDeviceGetEnforcedPowerLimit, h)
        rd("power_limit", N.nvmlDeviceGetPowerManagementLimit, h)
        rd("energy", N.nvmlDeviceGetTotalEnergyConsumption, h)
        for name, c in clocks:
            rd("clock_" + name, N.nvmlDeviceGetClockInfo, h, c)
        rd("pstate", N.nvmlDeviceGetPerformanceState, h)
        rd("reasons", newest(N.nvmlDeviceGetCurrentClocksEventReasons,
                             N.nvmlDeviceGetCurrentClocksThrottleReasons), h)
        rd("pcie_gen", N.nvmlDeviceGetCurrPcieLinkGeneration, h)
        rd("pcie_width", N.nvmlDeviceGetCurrPcieLinkWidth, h)
        rd("pcie_replay", N.nvmlDeviceGetPcieReplayCounter, h)
        rd("persistence", N.nvmlDeviceGetPersistenceMode, h)
        rd("compute_mode", N.nvmlDeviceGetComputeMode, h)
        rd("display_mode", N.nvmlDeviceGetDisplayMode, h)
        rd("display_active", N.nvmlDeviceGetDisplayActive, h)
        rd("mig_mode", N.nvmlDeviceGetMigMode, h)
        rd("ecc_mode", N.nvmlDeviceGetEccMode, h)
        for name, et, ct in (("corrected_volatile", N.NVML_MEMORY_ERROR_TYPE_CORRECTED,
                              N.NVML_VOLATILE_ECC),
                             ("uncorrected_volatile", N.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                              N.NVML_VOLATILE_ECC),
                             ("corrected_aggregate", N.NVML_MEMORY_ERROR_TYPE_CORRECTED,
                              N.NVML_AGGREGATE_ECC),
                             ("uncorrected_aggregate", N.NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                              N.NVML_AGGREGATE_ECC)):
            rd("ecc_" + name, N.nvmlDeviceGetTotalEccErrors, h, et, ct)
        for name, cause in (("sbe", N.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS),
                            ("dbe", N.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)):
            pages = rd("retired_" + name, N.nvmlDeviceGetRetiredPages, h, cause)
            if pages is not None:
                raw["retired_" + name] = len(pages)
        rd("retired_pending", N.nvmlDeviceGetRetiredPagesPendingStatus, h)
        rd("remapped", N.nvmlDeviceGetRemappedRows, h)
        rd("encoder_stats", N.nvmlDeviceGetEncoderStats, h)
        for key, policy in VIOLATIONS:
            rd(key, violation, h, getattr(N, policy))
        rd("nvlink", nvlink_read, h)
        rd("gpm", gpm_read, h)
        g["mig"] = mig_read(N, h)

        # processes: a GPU found lost above is not asked
        g["lists"] = {}
        g["proc_util"] = None
        if g["stopped_by"]:
            continue
        # the R530/R535 window's _v3 writes 32-byte entries pynvml cannot
        # decode; its _v2 writes the 24-byte ones
        lists = (("compute", N.nvmlDeviceGetComputeRunningProcesses_v3,
                  N.nvmlDeviceGetComputeRunningProcesses_v2,
                  "nvmlDeviceGetComputeRunningProcesses"),
                 ("graphics", N.nvmlDeviceGetGraphicsRunningProcesses_v3,
                  N.nvmlDeviceGetGraphicsRunningProcesses_v2,
                  "nvmlDeviceGetGraphicsRunningProcesses"),
                 ("mps", N.nvmlDeviceGetMPSComputeRunningProcesses_v3,
                  N.nvmlDeviceGetMPSComputeRunningProcesses_v2,
                  "nvmlDeviceGetMPSComputeRunningProcesses"))
        for name, v3, v2, v1 in lists:
            fns = (v2,) if cc_layout else (v3, v2)
            try:
                entries = newest(*fns, plain_procs(v1))(h)
                g["lists"][name] = {"error": None,
                                    "entries": entries if not entries or
                                    isinstance(entries[0], dict) else friendly(entries)}
            except N.NVMLError as e:
                g["lists"][name] = {"error": code(e), "entries": []}
        try:
            samples = N.nvmlDeviceGetProcessUtilization(h, since_us)
            g["proc_util"] = {"error": None, "samples": [
                {"pid": s.pid, "timeStamp": s.timeStamp, "sm": s.smUtil, "mem": s.memUtil,
                 "enc": s.encUtil, "dec": s.decUtil} for s in samples]}
        except N.NVMLError as e:
            g["proc_util"] = {"error": code(e), "samples": []}
    if events is not None:
        N.nvmlEventSetFree(events)
    return out


# ---------------------------------------------------------------------------
# Scenarios: files, interesting times, pids, delays
# ---------------------------------------------------------------------------


def scenario_files():
    files = []
    for d in ("tests/scenarios", "tests/fakenvml/scenarios", "tests/pynvml/scenarios"):
        p = os.path.join(ROOT, d)
        if os.path.isdir(p):
            files += sorted(os.path.join(d, f) for f in os.listdir(p) if f.endswith(".scn"))
    if os.path.isfile(os.path.join(ROOT, "data/demo/h100x8.scn")):
        files.append("data/demo/h100x8.scn")
    # CROSSCHECK_ONLY=nvlink,h100x2: only the scenarios whose path has one of these
    only = [w for w in os.environ.get("CROSSCHECK_ONLY", "").split(",") if w]
    return [f for f in files if not only or any(w in f for w in only)]


def scn_lines(text):
    """(section, key, value) of every key line; section is 'system', 'gpu' or 'process'."""
    section = None
    for line in text.splitlines():
        s = line.strip()
        if not s or s[0] in "#;":
            continue
        if s.startswith("["):
            words = s[1:].split("]")[0].split()
            section = words[0] if words else ""
            continue
        if "=" in s:
            k, v = s.split("=", 1)
            v = v.strip()
            if len(v) >= 2 and v[0] == v[-1] == '"':
                v = v[1:-1]
            yield section, k.strip(), v


def number(tok):
    try:
        return float(int(tok, 16)) if tok.lower().startswith("0x") else float(tok)
    except ValueError:
        return None


def interesting_times(text):
    """Times at which something in the scenario changes (steps, ramps, squares,
    faults, processes starting and ending, GPUs lost), then the moments just
    before some of them."""
    found, before = set(), set()
    for _, key, value in scn_lines(text):
        words = value.split()
        if not words:
            continue
        # the times are the last words of ramp, square and sine (values
        # before them may be split by a unit: "ramp 1.5 KiB 2.5 KiB 0 10")
        last = [number(w) for w in words[-2:]]
        if key in ("fail", "delay"):
            for i, w in enumerate(words[:-1]):
                if w in ("from", "until") and number(words[i + 1]) is not None:
                    found.add(number(words[i + 1]))
                    before.add(number(words[i + 1]) - 0.25)
        elif key in ("start", "end", "lost", "reset_required"):
            if number(words[0]) is not None:
                found.add(number(words[0]))
                before.add(number(words[0]) - 0.25)
        elif words[0] == "steps":
            for w in words[1:]:
                if ":" in w and number(w.split(":")[0]) is not None:
                    found.add(number(w.split(":")[0]))
        elif words[0] == "ramp" and len(words) >= 5 and None not in last:
            t0, t1 = last
            found.update((t0, (t0 + t1) / 2, t1))
        elif words[0] == "square" and len(words) >= 4 and last[-1] is not None:
            period, duty = last[-1], 0.5
            if len(words) >= 5 and last[0] is not None and last[-1] <= 1:
                period, duty = last
            found.update((period * duty / 2, period * (1 + duty) / 2))
        elif words[0] == "sine" and len(words) >= 4 and last[-1] is not None:
            found.add(last[-1] / 4)

    def clean(times):
        return sorted({round(t, 3) for t in times if t >= 0} - set(DEFAULT_TIMES))
    return clean(found), clean(before - found)


def pick_times(text):
    """DEFAULT_TIMES and up to MAX_TIMES in all: change times first, spread
    over the scenario when there are too many, then moments just before them."""
    found, before = interesting_times(text)
    picked = []
    for times in (found, before):
        room = MAX_TIMES - len(DEFAULT_TIMES) - len(picked)
        if len(times) > room:
            times = [times[int(i * len(times) / room)] for i in range(room)] if room > 0 else []
        picked += times
    return sorted(set(DEFAULT_TIMES) | set(picked))


def delay_ms_at(text, t):
    """Sum of the delays active at scenario time t (wrapped by period as the fake does)."""
    period = None
    total = 0.0
    for section, key, value in scn_lines(text):
        if section == "system" and key == "period":
            period = number(value)
    if period:
        t = math.fmod(t, period)
    for _, key, value in scn_lines(text):
        if key != "delay":
            continue
        w = value.split()
        if len(w) < 2 or number(w[1]) is None:
            continue
        start, until = 0.0, math.inf
        for i, x in enumerate(w[:-1]):
            if x == "from" and number(w[i + 1]) is not None:
                start = number(w[i + 1])
            if x == "until" and number(w[i + 1]) is not None:
                until = number(w[i + 1])
        if start <= t < until:
            total += number(w[1])
    return total


def scenario_pids(text):
    return sorted({int(m) for m in re.findall(r"^\s*\[process\s+(\d+)\s*\]", text, re.M)})


def uses_cc_layout(text):
    return any(s == "system" and k == "process_v3_layout" and v.strip() == "cc"
               for s, k, v in scn_lines(text))


def proc_root_of(text):
    """The proc root a scenario asks for with a comment line
    "# crosscheck: proc_root = tests/fixtures/proc" (relative to the top)."""
    m = re.search(r"^\s*[#;]\s*crosscheck:\s*proc_root\s*=\s*(\S+)\s*$", text, re.M)
    return os.path.join(ROOT, m.group(1)) if m else None


def make_proc_root(path, pids):
    """A /proc with just enough for gpuscope to keep the given pids."""
    def write(rel, data):
        f = os.path.join(path, rel)
        os.makedirs(os.path.dirname(f), exist_ok=True)
        with open(f, "w") as fh:
            fh.write(data)

    write("uptime", "350000.50 5312345.67\n")
    write("sys/kernel/hostname", "crosscheck\n")
    write("self/status", "Name:\tgpuscope\nPid:\t4321\nUid:\t0\t0\t0\t0\nNSpid:\t4321\n")
    write("self/mountinfo",
          "23 28 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n")
    for pid in pids:
        write("%d/status" % pid,
              "Name:\tp%d\nState:\tS (sleeping)\nTgid:\t%d\nPid:\t%d\nPPid:\t1\n"
              "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nNSpid:\t%d\nVmRSS:\t    1024 kB\n"
              % (pid, pid, pid, pid))
        write("%d/stat" % pid,
              "%d (p%d) S 1 %d %d 0 -1 4194304 0 0 0 0 100 50 0 0 20 0 1 0 1000 "
              "104857600 256 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"
              % (pid, pid, pid, pid))
        write("%d/cmdline" % pid, "p%d\0--crosscheck\0" % pid)
        write("%d/cgroup" % pid, "0::/user.slice\n")


def pid_kept(proc_root, pid):
    """Whether gpuscope keeps a process: it drops those whose status, stat or
    cmdline cannot be found (exited)."""
    d = os.path.join(proc_root, str(pid))
    return all(os.path.exists(os.path.join(d, f)) for f in ("status", "stat", "cmdline"))


# ---------------------------------------------------------------------------
# What gpuscope must print, from the raw values
# ---------------------------------------------------------------------------

def _names(pairs):
    import pynvml as N
    return {getattr(N, c): n for c, n in pairs if hasattr(N, c)}


def brand_name(b):
    names = _names((("NVML_BRAND_UNKNOWN", "Unknown"), ("NVML_BRAND_QUADRO", "Quadro"),
                    ("NVML_BRAND_TESLA", "Tesla"), ("NVML_BRAND_NVS", "NVS"),
                    ("NVML_BRAND_GRID", "GRID"), ("NVML_BRAND_GEFORCE", "GeForce"),
                    ("NVML_BRAND_TITAN", "Titan"), ("NVML_BRAND_NVIDIA_VAPPS", "NVIDIA vApps"),
                    ("NVML_BRAND_NVIDIA_VPC", "NVIDIA VPC"),
                    ("NVML_BRAND_NVIDIA_VCS", "NVIDIA VCS"),
                    ("NVML_BRAND_NVIDIA_VWS", "NVIDIA VWS"),
                    ("NVML_BRAND_NVIDIA_CLOUD_GAMING", "NVIDIA Cloud Gaming"),
                    ("NVML_BRAND_QUADRO_RTX", "Quadro RTX"),
                    ("NVML_BRAND_NVIDIA_RTX", "NVIDIA RTX"), ("NVML_BRAND_NVIDIA", "NVIDIA"),
                    ("NVML_BRAND_GEFORCE_RTX", "GeForce RTX"),
                    ("NVML_BRAND_TITAN_RTX", "Titan RTX")))
    return names.get(b, "Unknown")


def arch_name(a):
    names = _names((("NVML_DEVICE_ARCH_KEPLER", "Kepler"), ("NVML_DEVICE_ARCH_MAXWELL", "Maxwell"),
                    ("NVML_DEVICE_ARCH_PASCAL", "Pascal"), ("NVML_DEVICE_ARCH_VOLTA", "Volta"),
                    ("NVML_DEVICE_ARCH_TURING", "Turing"), ("NVML_DEVICE_ARCH_AMPERE", "Ampere"),
                    ("NVML_DEVICE_ARCH_ADA", "Ada Lovelace"),
                    ("NVML_DEVICE_ARCH_HOPPER", "Hopper"),
                    ("NVML_DEVICE_ARCH_BLACKWELL", "Blackwell"),
                    ("NVML_DEVICE_ARCH_T23X", "Orin"), ("NVML_DEVICE_ARCH_DLA", "Orin"),
                    ("NVML_DEVICE_ARCH_RUBIN", "Rubin")))
    return names.get(a)


def reason_names(mask):
    """docs/json-schema.md's names of NVML's clock event reason bits, in bit order."""
    import pynvml as N
    bits = (("nvmlClocksEventReasonGpuIdle", "gpu_idle"),
            ("nvmlClocksEventReasonApplicationsClocksSetting", "applications_clocks_setting"),
            ("nvmlClocksEventReasonSwPowerCap", "sw_power_cap"),
            ("nvmlClocksEventReasonHwSlowdown", "hw_slowdown"),
            ("nvmlClocksEventReasonSyncBoost", "sync_boost"),
            ("nvmlClocksEventReasonSwThermalSlowdown", "sw_thermal_slowdown"),
            ("nvmlClocksEventReasonHwThermalSlowdown", "hw_thermal_slowdown"),
            ("nvmlClocksEventReasonHwPowerBrakeSlowdown", "hw_power_brake_slowdown"),
            ("nvmlClocksEventReasonDisplayClockSetting", "display_clock_setting"),
            # NVML 13's, which nvidia-ml-py names as throttle reasons only
            ("nvmlClocksThrottleReasonBoardLimit", "board_limit"),
            ("nvmlClocksThrottleReasonReliability", "reliability"))
    return [name for c, name in bits if mask & getattr(N, c)]


COMPUTE_MODES = {0: "default", 1: "exclusive_thread", 2: "prohibited", 3: "exclusive_process"}

# decimals of the JSON numbers that are not integers (src/core/fields.c)
DECIMALS = {"power_draw_watts": 2, "power_draw_instant_watts": 2,
            "power_draw_average_watts": 2, "power_limit_watts": 2,
            "power_management_limit_watts": 2, "power_default_limit_watts": 2,
            "power_min_limit_watts": 2, "power_max_limit_watts": 2,
            "energy_consumed_joules": 3, "sm_utilization_percent": 1,
            "memory_utilization_percent": 1, "encoder_utilization_percent": 1,
            "decoder_utilization_percent": 1,
            **{k: 1 for k, _, _, pct in GPM_KEYS if pct},
            **{k: 3 for k, _ in VIOLATIONS}}

IDENTITY = ("name", "uuid", "serial", "pci_bus_id", "pci_device_id", "pci_subsystem_id",
            "vbios_version", "inforom_image_version", "board_part_number", "brand",
            "architecture", "compute_capability")


def widen_bus_id(legacy):
    """The legacy 16-byte "0000:3B:00.0" as gpuscope prints it: "00000000:3B:00.0"."""
    m = re.fullmatch(r"([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)\.([0-9a-fA-F]+)", legacy)
    if not m:
        return legacy
    d, b, v, f = (int(x, 16) for x in m.groups())
    return "%08X:%02X:%02X.%X" % (d, b, v, f)


def expected_gpu(g):
    """{json key: (value gpuscope must print, what pynvml read)} for one GPU,
    and the state gpuscope must report."""
    raw, err = g["raw"], g["err"]
    exp = {}

    def said(key, unit=""):
        v = raw.get(key)
        if isinstance(v, dict):
            v = " ".join("%s=%s" % kv for kv in v.items())
        if v is not None:
            return "%s%s" % (v, " " + unit if unit else "")
        e = err.get(key)
        return "error %s" % e if isinstance(e, int) else str(e or "not read")

    def put(jkey, value, shown):
        exp[jkey] = (value, shown)

    def text(v):
        return v if v else None  # gpuscope prints "" as null

    put("name", text(raw.get("name")), said("name"))
    put("uuid", text(raw.get("uuid")), said("uuid"))
    put("serial", text(raw.get("serial")), said("serial"))
    put("vbios_version", text(raw.get("vbios")), said("vbios"))
    put("inforom_image_version", text(raw.get("inforom")), said("inforom"))
    put("board_part_number", text(raw.get("board_part")), said("board_part"))
    pci = raw.get("pci")
    put("pci_bus_id", text(pci and (pci["busId"] or widen_bus_id(pci["busIdLegacy"]))),
        said("pci"))
    put("pci_device_id", pci and "0x%08X" % pci["pciDeviceId"], said("pci"))
    put("pci_subsystem_id", pci and "0x%08X" % pci["pciSubSystemId"], said("pci"))
    b = raw.get("brand")
    put("brand", None if b is None else brand_name(b), said("brand"))
    a = raw.get("architecture")
    put("architecture", None if a is None else arch_name(a), said("architecture"))
    cc = raw.get("compute_capability")
    put("compute_capability",
        "%d.%d" % tuple(cc) if cc and 0 <= cc[0] < 100 and 0 <= cc[1] < 100 else None,
        said("compute_capability"))

    # readings
    def scaled(jkey, key, scale=1, unit=""):
        v = raw.get(key)
        put(jkey, None if v is None else v * scale, said(key, unit))

    for name in ("graphics", "sm", "memory", "video"):
        scaled("clock_%s_max_mhz" % name, "max_clock_" + name, unit="MHz")
        scaled("clock_%s_mhz" % name, "clock_" + name, unit="MHz")
    for jname, name in (("slowdown", "slowdown"), ("shutdown", "shutdown"),
                        ("gpu_max", "gpu_max"), ("memory_max", "mem_max")):
        scaled("temperature_%s_celsius" % jname, "threshold_" + name, unit="C")
    scaled("power_default_limit_watts", "power_default", 1e-3, "mW")
    pc = raw.get("power_constraints")
    put("power_min_limit_watts", pc and pc[0] * 1e-3, said("power_constraints", "mW"))
    put("power_max_limit_watts", pc and pc[1] * 1e-3, said("power_constraints", "mW"))
    scaled("pcie_link_gen_max", "pcie_gen_max")
    scaled("pcie_link_gen_device_max", "pcie_gen_gpu_max")
    scaled("pcie_link_width_max", "pcie_width_max")
    for jkey, key in (("clock_event_reasons_supported", "reasons_supported"),
                      ("clock_event_reasons", "reasons")):
        m = raw.get(key)
        put(jkey, None if m is None else reason_names(m & 0xFFFFFFFFFFFFF),
            said(key) if m is None else hex(m))

    mem = raw.get("memory_v2") or raw.get("memory_v1")
    v1 = raw.get("memory_v2") is None and mem is not None
    for f in ("total", "reserved", "used", "free"):
        put("memory_%s_bytes" % f, None if mem is None or (v1 and f == "reserved")
            else mem[f], "%s (%s)" % (mem.get(f) if mem else None,
                                      "v1" if v1 else "v2" if mem else said("memory_v2")))
    put("memory_source", None if mem is None else ("v1" if v1 else "v2"),
        said("memory_v1" if v1 else "memory_v2"))
    bar = raw.get("bar1")
    put("bar1_total_bytes", bar and bar["total"], said("bar1"))
    put("bar1_used_bytes", bar and bar["used"], said("bar1"))
    ut = raw.get("utilization")
    ok = ut is not None and ut["gpu"] <= 100 and ut["memory"] <= 100
    put("utilization_gpu_percent", ut["gpu"] if ok else None, said("utilization"))
    put("utilization_memory_percent", ut["memory"] if ok else None, said("utilization"))
    for name in ("encoder", "decoder", "jpeg", "ofa"):
        v = raw.get("util_" + name)
        put("utilization_%s_percent" % name, v if v is not None and v <= 100 else None,
            said("util_" + name, "%"))
    scaled("temperature_gpu_celsius", "temperature", unit="C")
    scaled("temperature_margin_celsius", "margin", unit="C")
    fields = raw.get("fields") or {}

    def field(fid):
        f = fields.get(str(fid))
        if not f or f["ret"] != SUCCESS or f["value"] is None:
            return None, "field %d: %s" % (fid, ("ret %d" % f["ret"]) if f else said("fields"))
        return f["value"], "field %d: %s" % (fid, f["value"])
    v, shown = field(82)
    put("temperature_memory_celsius", v if v is not None and 0 < v < 200 else None, shown)
    v, shown = field(186)
    put("power_draw_instant_watts", None if v is None else v * 1e-3, shown + " mW")
    v, shown = field(185)
    put("power_draw_average_watts", None if v is None else v * 1e-3, shown + " mW")
    scaled("fan_speed_percent", "fan", unit="%")
    scaled("power_draw_watts", "power_usage", 1e-3, "mW")
    scaled("power_limit_watts", "power_enforced", 1e-3, "mW")
    scaled("power_management_limit_watts", "power_limit", 1e-3, "mW")
    scaled("energy_consumed_joules", "energy", 1e-3, "mJ")
    p = raw.get("pstate")
    put("performance_state", "P%d" % p if p is not None and p < 16 else None, said("pstate"))
    scaled("pcie_link_gen", "pcie_gen")
    scaled("pcie_link_width", "pcie_width")
    scaled("pcie_replay_count", "pcie_replay")
    for jkey, key in (("persistence_mode", "persistence"), ("display_mode", "display_mode"),
                      ("display_active", "display_active")):
        v = raw.get(key)
        put(jkey, None if v is None else v == 1, said(key))  # NVML_FEATURE_ENABLED
    cm = raw.get("compute_mode")
    put("compute_mode", COMPUTE_MODES.get(cm), said("compute_mode"))
    for jkey, key in (("mig_mode", "mig_mode"), ("ecc_mode", "ecc_mode")):
        v = raw.get(key)
        put(jkey, None if v is None else v[0] == 1, said(key))
        put(jkey + "_pending", None if v is None else v[1] == 1, said(key))
    for name in ("corrected_volatile", "uncorrected_volatile", "corrected_aggregate",
                 "uncorrected_aggregate"):
        scaled("ecc_" + name, "ecc_" + name)
    scaled("retired_pages_single_bit", "retired_sbe", unit="pages")
    scaled("retired_pages_double_bit", "retired_dbe", unit="pages")
    v = raw.get("retired_pending")
    put("retired_pages_pending", None if v is None else v != 0, said("retired_pending"))
    rr = raw.get("remapped")
    for i, (jkey, boolean) in enumerate((("correctable", False), ("uncorrectable", False),
                                         ("pending", True), ("failure", True))):
        v = None if rr is None else (rr[i] != 0 if boolean else rr[i])
        put("remapped_rows_" + jkey, v, said("remapped"))
    es = raw.get("encoder_stats")
    for i, jkey in enumerate(("encoder_sessions", "encoder_average_fps",
                              "encoder_average_latency_us")):
        put(jkey, None if es is None else es[i], said("encoder_stats"))
    gm = raw.get("gpm") or {}
    for jkey, mid, scale, pct in GPM_KEYS:
        r, v = gm.get(str(mid), (None, None))
        good = (r == SUCCESS and math.isfinite(v) and v >= 0 and not (pct and v > 100.5))
        put(jkey, min(v, 100) * scale if good and pct else v * scale if good else None,
            "metric %d: %s" % (mid, "ret %s value %s" % (r, v) if gm else said("gpm")))
    for jkey, _ in VIOLATIONS:
        scaled(jkey, jkey, 1e-9, "ns")
    links = raw.get("nvlink")
    put("nvlink", links or None, said("nvlink") if not links else "%d links" % len(links))
    put("nvlink_links_active", sum(ln["active"] for ln in links) if links else None,
        said("nvlink") if not links else "%d links" % len(links))
    for jkey, key in NVLINK_TOTALS:
        vals = [ln[key] for ln in links or []]
        put(jkey, sum(vals) if vals and None not in vals else None,
            "%s of %d links: %s" % (key, len(vals), vals) if vals else said("nvlink"))
    # not at a device's first read (the 20 ms call), so never in a one-shot status
    put("pcie_tx_bytes_per_second", None, "not read by a one-shot status")
    put("pcie_rx_bytes_per_second", None, "not read by a one-shot status")
    watch = g.get("xid_watch", "no handle")
    put("xid_errors", [] if watch is None else None,
        "registered for Xid events" if watch is None else "registration: error %s" % watch
        if isinstance(watch, int) else watch)

    # the state
    if g["handle_error"] is not None:
        state = {NO_PERMISSION: "no_permission", GPU_IS_LOST: "lost",
                 RESET_REQUIRED: "reset_required"}.get(g["handle_error"], "error")
        for k in exp:
            exp[k] = (None, "no handle: error %d" % g["handle_error"])
    elif g["stopped_by"]:
        state = g["stopped_by"][1]
    else:
        state = "ok"
    return state, exp


def sane_list(entries, mem_total):
    """gpuscope's sanity check of a process list (decode_procs in src/backend/nvml.c)."""
    for e in entries:
        mem, gi, ci = e["usedGpuMemory"], e["gpuInstanceId"], e["computeInstanceId"]
        if e["pid"] == 0 or e["pid"] > 0x3FFFFFFF:
            return False
        if mem is not None and mem_total and mem > mem_total:
            return False
        if (gi != NO_INSTANCE and gi > 64) or (ci != NO_INSTANCE and ci > 64):
            return False
    return True


def expected_procs(index, g, since_us, proc_root):
    """{pid: {json key: value}} gpuscope must list for GPU index (state ok)."""
    mem = g["raw"].get("memory_v2") or g["raw"].get("memory_v1") or {}
    procs = {}
    lost = False
    for name, letter in (("compute", "C"), ("graphics", "G"), ("mps", "M")):
        res = g.get("lists", {}).get(name)
        if lost or res is None:
            break
        if res["error"] is not None:
            lost = res["error"] in (GPU_IS_LOST, RESET_REQUIRED)
            continue
        if not sane_list(res["entries"], mem.get("total", 0)):
            continue
        for e in res["entries"]:
            p = procs.setdefault(e["pid"], {"types": set(), "gpu_memory_bytes": None,
                                            "gpu_instance_id": None,
                                            "compute_instance_id": None})
            p["types"].add(letter)
            if e["usedGpuMemory"] is not None and (p["gpu_memory_bytes"] is None or
                                                   e["usedGpuMemory"] > p["gpu_memory_bytes"]):
                p["gpu_memory_bytes"] = e["usedGpuMemory"]
            if e["gpuInstanceId"] != NO_INSTANCE:
                p["gpu_instance_id"] = e["gpuInstanceId"]
            if e["computeInstanceId"] != NO_INSTANCE:
                p["compute_instance_id"] = e["computeInstanceId"]
    pu = g.get("proc_util")
    for pid, p in procs.items():
        t = p.pop("types")
        p["type"] = ("mps" if "M" in t else "compute+graphics" if {"C", "G"} <= t
                     else "graphics" if "G" in t else "compute")
        for key, f in (("sm", "sm"), ("memory", "mem"), ("encoder", "enc"), ("decoder", "dec")):
            jkey = key + "_utilization_percent"
            if lost or pu is None or pu["error"] not in (None, SUCCESS, NOT_FOUND):
                p[jkey] = None
                continue
            # samples newer than the window's start; values above 100 are
            # driver noise: no sample at all is idle (0), only noise is unknown
            seen = [s for s in pu["samples"] if s["pid"] == pid and s["timeStamp"] > since_us]
            vals = [s[f] for s in seen if s[f] <= 100]
            p[jkey] = sum(vals) / len(vals) if vals else None if seen else 0
    return {pid: p for pid, p in procs.items() if pid_kept(proc_root, pid)}


# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------


def same(key, want, have):
    if want is None or have is None:
        return want is None and have is None
    if isinstance(want, bool) or isinstance(have, bool):
        return want is have
    if isinstance(want, (int, float)) and isinstance(have, (int, float)):
        dec = DECIMALS.get(key, 0)
        return abs(want - have) <= 0.5 * 10 ** -dec + 1e-9 * abs(want)
    return want == have


def show(v):
    return json.dumps(v)


def compare_status(doc, child, since_us, proc_root):
    """Mismatches between gpuscope's status document and pynvml, as lines."""
    bad = []
    nv = doc.get("nvidia", {})
    cuda = child.get("cuda_version")
    for key, want, shown in (
            ("driver_version", child.get("driver_version") or None,
             child.get("driver_version")),
            ("nvml_version", child.get("nvml_version") or None, child.get("nvml_version")),
            ("cuda_driver_version", "%d.%d" % (cuda // 1000, cuda % 1000 // 10)
             if cuda and cuda > 0 else None, cuda)):
        if nv.get(key, "missing") != want:
            bad.append("nvidia.%s: gpuscope %s, pynvml %s" % (key, show(nv.get(key, "missing")),
                                                              show(shown)))
    bad += compare_mig(doc, child)
    gpus = [d for d in doc.get("gpus", []) if not d.get("mig")]
    if len(gpus) != child["count"]:
        bad.append("GPU count: gpuscope %d, pynvml %d" % (len(gpus), child["count"]))
    procs_have = {(p.get("gpu_index"), p.get("pid")): p for p in doc.get("processes", [])}
    procs_want = {}
    procfs_gpus = os.path.isdir(os.path.join(proc_root, "driver/nvidia/gpus"))
    for i, (d, g) in enumerate(zip(gpus, child["gpus"])):
        state, exp = expected_gpu(g)
        have_state = d.get("state")
        if d.get("index") != i:
            bad.append("GPU %d index: gpuscope %s" % (i, show(d.get("index"))))
        if procfs_gpus and exp["pci_bus_id"][0] is None:
            # a GPU NVML cannot identify takes its name, UUID, VBIOS and bus id
            # from the kernel driver's /proc/driver/nvidia/gpus, out of pynvml's sight
            for k in ("name", "uuid", "vbios_version", "pci_bus_id"):
                del exp[k]
        if have_state == "not_responding":
            # no answer before --timeout: identity from the scan, null readings
            exp = {k: v for k, v in exp.items() if k in IDENTITY}
        elif have_state != state:
            why = " (%s answered %s)" % g["stopped_by"] if g["stopped_by"] else ""
            bad.append("GPU %d state: gpuscope %s, pynvml %s%s" % (i, show(have_state), state,
                                                                  why))
        for key, (want, shown) in exp.items():
            if key not in d:
                bad.append("GPU %d %s: missing from gpuscope's JSON" % (i, key))
                continue
            if key == "memory_source" and state != "ok":
                continue
            # a GPU lost after its registration for Xid events keeps its counts
            if state != "ok" and key not in IDENTITY and key != "xid_errors":
                # docs/json-schema.md: a GPU that is not ok has null readings
                why = ("%s answered %s" % (g["stopped_by"][0], g["err"][g["stopped_by"][0]])
                       if g["stopped_by"] else "no handle: error %s" % g["handle_error"])
                want, shown = None, "null (the GPU is %s: %s)" % (state, why)
            if not same(key, want, d[key]):
                bad.append("GPU %d %s: gpuscope %s, pynvml %s" % (i, key, show(d[key]), shown))
        if state == "ok" and have_state == "ok":
            for pid, p in expected_procs(i, g, since_us, proc_root).items():
                procs_want[(i, pid)] = p
    for key in sorted(set(procs_want) | set(procs_have)):
        if key not in procs_have:
            bad.append("process GPU %d pid %d: listed by pynvml, not by gpuscope" % key)
            continue
        if key not in procs_want:
            bad.append("process GPU %d pid %d: listed by gpuscope, not by pynvml" % key)
            continue
        have, want = procs_have[key], procs_want[key]
        for k, v in want.items():
            if not same(k, v, have.get(k, "missing")):
                bad.append("process GPU %d pid %d %s: gpuscope %s, pynvml %s"
                           % (key + (k, show(have.get(k, "missing")), show(v))))
    return bad


def expected_query_rows(child):
    """nvidia-smi's spelling of index,uuid,memory.used,power.draw,temperature.gpu,clocks.sm."""
    rows = []
    for i, g in enumerate(child["gpus"]):
        state, exp = expected_gpu(g)
        unknown = {"ok": "[N/A]", "lost": "[GPU is lost]",
                   "reset_required": "[GPU requires reset]",
                   "no_permission": "[Insufficient Permissions]"}.get(state, "[Unknown Error]")
        ok = state == "ok"

        def val(key, fmt):
            v = exp[key][0]
            return fmt(v) if v is not None and (ok or key == "uuid") else unknown
        rows.append([str(i), val("uuid", str),
                     val("memory_used_bytes", lambda b: "%d" % (b // MiB)),
                     val("power_draw_watts", lambda w: "%.2f" % (round(w * 1000) / 1000)),
                     val("temperature_gpu_celsius", lambda c: "%d" % c),
                     val("clock_sm_mhz", lambda c: "%d" % c)])
    return rows


QUERY = "index,uuid,memory.used,power.draw,temperature.gpu,clocks.sm"


def compare_query(out, child):
    bad = []
    have = [[c.strip() for c in line.split(",")] for line in out.splitlines() if line.strip()]
    want = expected_query_rows(child)
    if len(have) != len(want):
        bad.append("query: %d rows, pynvml sees %d GPUs" % (len(have), len(want)))
    names = QUERY.split(",")
    for i, (h, w) in enumerate(zip(have, want)):
        for name, a, b in zip(names, h, w):
            if a != b:
                bad.append("query GPU %d %s: gpuscope %s, pynvml %s" % (i, name, show(a),
                                                                       show(b)))
    return bad


# ---------------------------------------------------------------------------
# Running one (scenario, time, library)
# ---------------------------------------------------------------------------

INIT_WORDS = {LIB_RM_VERSION_MISMATCH: "does not match the driver library",
              DRIVER_NOT_LOADED: "the NVIDIA kernel driver is not loaded",
              NO_PERMISSION: "no permission to open the NVIDIA device files",
              LIBRARY_NOT_FOUND: "cannot find the rest of the driver"}


def run_case(py, build, scn, t, lib, proc_root, empty_dir, live=None):
    """The mismatches between gpuscope and pynvml, as lines. live: (FAKE_NVML_LIVE_DIR, the pid
    registered there, which both must see, and so not agree on an empty list only)."""
    path = os.path.join(ROOT, scn)
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    tstr = repr(float(t))
    clock = repr(EPOCH + float(t))
    since_us = int((float(clock) - 1.0) * 1e6)  # as gpuscope computes it
    libpath = os.path.join(ROOT, build, "fakenvml", lib, "libnvidia-ml.so.1")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("FAKE_NVML_", "GPUSCOPE_")) and k != "LD_LIBRARY_PATH"}
    env.update(FAKE_NVML_SCENARIO=path, FAKE_NVML_TIME=tstr, FAKE_NVML_EPOCH=str(EPOCH))
    if live:
        env["FAKE_NVML_LIVE_DIR"] = live[0]
    gs_env = dict(env, GPUSCOPE_NVML=libpath, GPUSCOPE_CLOCK=clock,
                  GPUSCOPE_SYSFS_ROOT=empty_dir, GPUSCOPE_PROC_ROOT=proc_root,
                  GPUSCOPE_PASSWD=os.path.join(ROOT, "tests/fixtures/passwd"), NO_COLOR="1")
    child_env = dict(env, LD_LIBRARY_PATH=os.path.dirname(libpath))
    gpuscope = os.path.join(ROOT, build, "gpuscope")

    st = subprocess.run([gpuscope, "status", "--json", "--timeout", str(TIMEOUT_S)],
                        env=gs_env, capture_output=True, text=True, timeout=60)
    cmd = [py, os.path.abspath(__file__), "--read", str(since_us)]
    if uses_cc_layout(text):
        cmd.append("--cc")
    try:
        ch = subprocess.run(cmd, env=child_env, capture_output=True, text=True,
                            timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return ["pynvml reader did not finish in %d s" % CHILD_TIMEOUT_S]
    if ch.returncode != 0:
        return ["pynvml reader failed (exit %d): %s" % (ch.returncode,
                                                       ch.stderr.strip()[-600:])]
    child = json.loads(ch.stdout)

    ie = child["init_error"]
    if ie is not None or child.get("count_error") is not None or child.get("count") == 0:
        # gpuscope must have refused, with the reason
        bad = []
        if st.returncode != 4:
            bad.append("pynvml: %s; gpuscope exit %d, expected 4" % (
                "nvmlInit failed with %d (%s)" % (ie["code"], ie["text"]) if ie else
                "nvmlDeviceGetCount: %s" % child.get("count_error", 0), st.returncode))
        elif ie is not None:
            words = INIT_WORDS.get(ie["code"], "NVML failed to initialise: %s" % ie["text"])
            if words not in st.stderr:
                bad.append("pynvml: nvmlInit failed with %d (%s); gpuscope said %s, "
                           "expected it to say %s" % (ie["code"], ie["text"],
                                                      show(st.stderr.strip()), show(words)))
        return bad
    if st.returncode not in (0, 1):
        return ["gpuscope exit %d: %s" % (st.returncode, st.stderr.strip()[-600:])]
    try:
        doc = json.loads(st.stdout)
    except ValueError as e:
        return ["gpuscope printed no JSON (%s)" % e]
    bad = compare_status(doc, child, since_us, proc_root)
    if live and live[1] not in [p.get("pid") for p in doc.get("processes", [])]:
        bad.append("live process %d: not listed by gpuscope" % live[1])

    q = subprocess.run([gpuscope, "query", "--query-gpu=" + QUERY,
                        "--format=csv,noheader,nounits"],
                       env=gs_env, capture_output=True, text=True, timeout=60)
    if q.returncode not in (0, 1):
        bad.append("gpuscope query exit %d: %s" % (q.returncode, q.stderr.strip()[-300:]))
    elif not any(d.get("state") == "not_responding" for d in doc.get("gpus", [])):
        bad += compare_query(q.stdout, child)
    return bad


def main():
    try:
        import pynvml  # noqa: F401
    except ImportError:
        print("1..0 # SKIP pynvml not installed")
        return 0
    build = os.environ.get("O", "build")
    needed = [os.path.join(build, "gpuscope"),
              os.path.join(build, "fakenvml/current/libnvidia-ml.so.1"),
              os.path.join(build, "fakenvml/legacy/libnvidia-ml.so.1")]
    for n in needed:
        if not os.path.exists(os.path.join(ROOT, n)):
            print("1..0 # SKIP %s is not built (make all)" % n)
            return 0
    py = sys.executable
    scenarios = scenario_files()
    tmp = tempfile.mkdtemp(prefix="gpuscope-crosscheck-")
    hog = None
    try:
        empty = os.path.join(tmp, "sysfs")
        os.makedirs(empty)
        # one generated proc root holds every pid of every scenario, so that
        # gpuscope drops none; a scenario may name another one instead (see
        # proc_root_of), whose missing pids gpuscope must then drop
        pids = set()
        for s in scenarios:
            with open(os.path.join(ROOT, s), encoding="utf-8", errors="replace") as f:
                pids.update(scenario_pids(f.read()))
        generated = os.path.join(tmp, "proc")
        make_proc_root(generated, sorted(pids))

        cases = []
        for s in scenarios:
            with open(os.path.join(ROOT, s), encoding="utf-8", errors="replace") as f:
                text = f.read()
            root = proc_root_of(text) or generated
            slow_at = None
            for t, lib in [(t, "current") for t in pick_times(text)] + [(LEGACY_TIME, "legacy")]:
                delay, skip = delay_ms_at(text, t), None
                if delay > SLOW_MS:
                    if slow_at is None and delay <= MAX_DELAY_MS:
                        slow_at = t
                    else:
                        skip = "delays of %g ms%s" % (
                            delay, "" if slow_at is None else "; checked at t=%g" % slow_at)
                cases.append((s, t, lib, root, skip, None))

        # live processes (FAKE_NVML_LIVE_DIR): a real process of ours on two GPUs of the
        # queue's server, and the leak of one that is gone; gpuscope's proc root has the first
        live = os.path.join(tmp, "live")
        os.makedirs(live)
        hog = subprocess.Popen(["sleep", "600"])
        with open(os.path.join(live, str(hog.pid)), "w") as f:
            f.write("GPU-5a1e0001-0000-4000-8000-000000000001 2048\n3 512\n")
        gone = subprocess.Popen(["true"])
        gone.wait()
        with open(os.path.join(live, str(gone.pid)), "w") as f:
            f.write("0 300 leak\n2 100\n")
        live_root = os.path.join(tmp, "proc-live")
        make_proc_root(live_root, [hog.pid])
        for lib in ("current", "legacy"):
            cases.append(("tests/scenarios/queue.scn", 0.0, lib, live_root, None,
                          (live, hog.pid)))

        jobs = max(2, min(8, os.cpu_count() or 2))
        with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
            futures = [None if skip else ex.submit(run_case, py, build, s, t, lib, root, empty,
                                                   extra)
                       for s, t, lib, root, skip, extra in cases]
            failed = 0
            for n, ((s, t, lib, _, skip, extra), fut) in enumerate(zip(cases, futures), 1):
                name = "%s t=%g%s%s" % (s, t, " (legacy library)" if lib == "legacy" else "",
                                        " (live processes)" if extra else "")
                bad = []
                try:
                    if fut:
                        bad = fut.result()
                except Exception as e:  # a bug here must show, not hang the suite
                    bad = ["crosscheck raised %s: %s" % (type(e).__name__, e)]
                if skip:
                    print("ok %d - %s # SKIP %s" % (n, name, skip))
                elif bad:
                    failed += 1
                    print("not ok %d - %s" % (n, name))
                    for line in bad:
                        print("\n".join("#   " + x for x in line.splitlines()))
                else:
                    print("ok %d - %s" % (n, name))
                sys.stdout.flush()
        print("1..%d" % len(cases))
        return 1 if failed else 0
    finally:
        if hog:
            hog.kill()
            hog.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--read":
        json.dump(child_read(int(sys.argv[2]), "--cc" in sys.argv[3:]), sys.stdout)
        sys.exit(0)
    sys.exit(main())
