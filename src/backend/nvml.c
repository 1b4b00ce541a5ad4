/*
 * NVIDIA GPUs through NVML, loaded at run time with dlopen: nothing of
 * NVIDIA's is needed to build. Every symbol is optional and resolved newest
 * version first; a missing symbol or NOT_SUPPORTED makes that field unknown
 * and is remembered per device, so it is not asked again. One thread per
 * backend counts the Xid errors that NVML's events report.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "backend/backend.h"
#include "backend/collect.h"
#include "backend/nvml_abi.h"
#include "backend/nvml_probe.h"
#include "backend/pci.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/err.h"
#include "core/fileio.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

/*
 * The entry points gpuscope calls. Each is NULL when the library lacks it.
 */
struct nvml_sym {
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	const char *(*error_string)(nvmlReturn_t);
	nvmlReturn_t (*driver_version)(char *, unsigned);
	nvmlReturn_t (*nvml_version)(char *, unsigned);
	nvmlReturn_t (*cuda_version)(int *);
	nvmlReturn_t (*count)(unsigned *);
	nvmlReturn_t (*handle_by_index)(unsigned, nvmlDevice_t *);
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*serial)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*vbios)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*inforom)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*board_part)(nvmlDevice_t, char *, unsigned);
	nvmlReturn_t (*pci_info)(nvmlDevice_t, nvmlPciInfo_t *);
	nvmlReturn_t (*brand)(nvmlDevice_t, nvmlBrandType_t *);
	nvmlReturn_t (*architecture)(nvmlDevice_t, nvmlDeviceArchitecture_t *);
	nvmlReturn_t (*compute_cap)(nvmlDevice_t, int *, int *);
	nvmlReturn_t (*memory_v2)(nvmlDevice_t, nvmlMemory_v2_t *);
	nvmlReturn_t (*memory_v1)(nvmlDevice_t, nvmlMemory_t *);
	nvmlReturn_t (*bar1)(nvmlDevice_t, nvmlBAR1Memory_t *);
	nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t *);
	nvmlReturn_t (*enc_util)(nvmlDevice_t, unsigned *, unsigned *);
	nvmlReturn_t (*dec_util)(nvmlDevice_t, unsigned *, unsigned *);
	nvmlReturn_t (*jpg_util)(nvmlDevice_t, unsigned *, unsigned *);
	nvmlReturn_t (*ofa_util)(nvmlDevice_t, unsigned *, unsigned *);
	nvmlReturn_t (*temperature)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned *);
	nvmlReturn_t (*temperature_v)(nvmlDevice_t, nvmlTemperature_v1_t *);
	nvmlReturn_t (*temp_threshold)(nvmlDevice_t, nvmlTemperatureThresholds_t, unsigned *);
	nvmlReturn_t (*margin_temp)(nvmlDevice_t, nvmlMarginTemperature_v1_t *);
	nvmlReturn_t (*field_values)(nvmlDevice_t, int, nvmlFieldValue_t *);
	nvmlReturn_t (*fan)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*power_enforced)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*power_mgmt_limit)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*power_default)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*power_constraints)(nvmlDevice_t, unsigned *, unsigned *);
	nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*clock)(nvmlDevice_t, nvmlClockType_t, unsigned *);
	nvmlReturn_t (*max_clock)(nvmlDevice_t, nvmlClockType_t, unsigned *);
	nvmlReturn_t (*pstate)(nvmlDevice_t, nvmlPstates_t *);
	nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*reasons_supported)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*pcie_gen)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*pcie_gen_max)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*pcie_gen_dev_max)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*pcie_width)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*pcie_width_max)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*pcie_replay)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*persistence)(nvmlDevice_t, nvmlEnableState_t *);
	nvmlReturn_t (*compute_mode)(nvmlDevice_t, nvmlComputeMode_t *);
	nvmlReturn_t (*display_mode)(nvmlDevice_t, nvmlEnableState_t *);
	nvmlReturn_t (*display_active)(nvmlDevice_t, nvmlEnableState_t *);
	nvmlReturn_t (*mig_mode)(nvmlDevice_t, unsigned *, unsigned *);
	nvmlReturn_t (*mig_max)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*mig_handle)(nvmlDevice_t, unsigned, nvmlDevice_t *);
	nvmlReturn_t (*gpu_instance_id)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*compute_instance_id)(nvmlDevice_t, unsigned *);
	nvmlReturn_t (*attributes)(nvmlDevice_t, nvmlDeviceAttributes_t *);
	nvmlReturn_t (*ecc_mode)(nvmlDevice_t, nvmlEnableState_t *, nvmlEnableState_t *);
	nvmlReturn_t (*ecc_total)(nvmlDevice_t, nvmlMemoryErrorType_t, nvmlEccCounterType_t,
	                          unsigned long long *);
	nvmlReturn_t (*retired_pages)(nvmlDevice_t, nvmlPageRetirementCause_t, unsigned *,
	                              unsigned long long *);
	nvmlReturn_t (*retired_pending)(nvmlDevice_t, nvmlEnableState_t *);
	nvmlReturn_t (*remapped_rows)(nvmlDevice_t, unsigned *, unsigned *, unsigned *, unsigned *);
	nvmlReturn_t (*encoder_stats)(nvmlDevice_t, unsigned *, unsigned *, unsigned *);
	nvmlReturn_t (*procs[3])(nvmlDevice_t, unsigned *, void *); /* compute, graphics, MPS */
	nvmlReturn_t (*proc_util)(nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned *,
	                          unsigned long long);
	nvmlReturn_t (*event_set_create)(nvmlEventSet_t *);
	nvmlReturn_t (*event_set_free)(nvmlEventSet_t);
	nvmlReturn_t (*register_events)(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
	nvmlReturn_t (*event_wait)(nvmlEventSet_t, nvmlEventData_t *, unsigned);
	nvmlReturn_t (*topo_ancestor)(nvmlDevice_t, nvmlDevice_t, nvmlGpuTopologyLevel_t *);
	nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned, nvmlEnableState_t *);
	nvmlReturn_t (*nvlink_remote_pci)(nvmlDevice_t, unsigned, nvmlPciInfo_t *);
	nvmlReturn_t (*nvlink_remote_type)(nvmlDevice_t, unsigned, nvmlIntNvLinkDeviceType_t *);
	nvmlReturn_t (*nvlink_version)(nvmlDevice_t, unsigned, unsigned *);
	nvmlReturn_t (*nvlink_errors)(nvmlDevice_t, unsigned, nvmlNvLinkErrorCounter_t,
	                              unsigned long long *);
	nvmlReturn_t (*pcie_throughput)(nvmlDevice_t, nvmlPcieUtilCounter_t, unsigned *);
	nvmlReturn_t (*violation)(nvmlDevice_t, nvmlPerfPolicyType_t, nvmlViolationTime_t *);
	nvmlReturn_t (*gpm_support)(nvmlDevice_t, nvmlGpmSupport_t *);
	nvmlReturn_t (*gpm_alloc)(nvmlGpmSample_t *);
	nvmlReturn_t (*gpm_free)(nvmlGpmSample_t);
	nvmlReturn_t (*gpm_sample)(nvmlDevice_t, nvmlGpmSample_t);
	nvmlReturn_t (*gpm_metrics)(nvmlGpmMetricsGet_t *);
	void *detail_list;      /* only its presence matters */
	void *cc_mem_size_info; /* only its presence matters */
	const char *(*fake_scenario)(void);
};

/* One row per entry point: where it goes, and its names, newest first. */
struct sym_row {
	size_t off;
	const char *names[4];
};
#define SYM(field, ...)                           \
	{                                         \
		offsetof(struct nvml_sym, field), \
		{                                 \
			__VA_ARGS__               \
		}                                 \
	}

static const struct sym_row sym_rows[] = {
	SYM(init, "nvmlInit_v2", "nvmlInit"),
	SYM(shutdown, "nvmlShutdown"),
	SYM(error_string, "nvmlErrorString"),
	SYM(driver_version, "nvmlSystemGetDriverVersion"),
	SYM(nvml_version, "nvmlSystemGetNVMLVersion"),
	SYM(cuda_version, "nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"),
	SYM(count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"),
	SYM(handle_by_index, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"),
	SYM(name, "nvmlDeviceGetName"),
	SYM(uuid, "nvmlDeviceGetUUID"),
	SYM(serial, "nvmlDeviceGetSerial"),
	SYM(vbios, "nvmlDeviceGetVbiosVersion"),
	SYM(inforom, "nvmlDeviceGetInforomImageVersion"),
	SYM(board_part, "nvmlDeviceGetBoardPartNumber"),
	/* all three versions fill the same nvmlPciInfo_t; _v3 fills busId right */
	SYM(pci_info, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"),
	SYM(brand, "nvmlDeviceGetBrand"),
	SYM(architecture, "nvmlDeviceGetArchitecture"),
	SYM(compute_cap, "nvmlDeviceGetCudaComputeCapability"),
	SYM(memory_v2, "nvmlDeviceGetMemoryInfo_v2"),
	SYM(memory_v1, "nvmlDeviceGetMemoryInfo"),
	SYM(bar1, "nvmlDeviceGetBAR1MemoryInfo"),
	SYM(utilization, "nvmlDeviceGetUtilizationRates"),
	SYM(enc_util, "nvmlDeviceGetEncoderUtilization"),
	SYM(dec_util, "nvmlDeviceGetDecoderUtilization"),
	SYM(jpg_util, "nvmlDeviceGetJpgUtilization"),
	SYM(ofa_util, "nvmlDeviceGetOfaUtilization"),
	SYM(temperature, "nvmlDeviceGetTemperature"),
	SYM(temperature_v, "nvmlDeviceGetTemperatureV"),
	SYM(temp_threshold, "nvmlDeviceGetTemperatureThreshold"),
	SYM(margin_temp, "nvmlDeviceGetMarginTemperature"),
	SYM(field_values, "nvmlDeviceGetFieldValues"),
	SYM(fan, "nvmlDeviceGetFanSpeed"),
	SYM(power_usage, "nvmlDeviceGetPowerUsage"),
	SYM(power_enforced, "nvmlDeviceGetEnforcedPowerLimit"),
	SYM(power_mgmt_limit, "nvmlDeviceGetPowerManagementLimit"),
	SYM(power_default, "nvmlDeviceGetPowerManagementDefaultLimit"),
	SYM(power_constraints, "nvmlDeviceGetPowerManagementLimitConstraints"),
	SYM(energy, "nvmlDeviceGetTotalEnergyConsumption"),
	SYM(clock, "nvmlDeviceGetClockInfo"),
	SYM(max_clock, "nvmlDeviceGetMaxClockInfo"),
	SYM(pstate, "nvmlDeviceGetPerformanceState"),
	SYM(reasons, "nvmlDeviceGetCurrentClocksEventReasons",
	    "nvmlDeviceGetCurrentClocksThrottleReasons"),
	SYM(reasons_supported, "nvmlDeviceGetSupportedClocksEventReasons",
	    "nvmlDeviceGetSupportedClocksThrottleReasons"),
	SYM(pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration"),
	SYM(pcie_gen_max, "nvmlDeviceGetMaxPcieLinkGeneration"),
	SYM(pcie_gen_dev_max, "nvmlDeviceGetGpuMaxPcieLinkGeneration"),
	SYM(pcie_width, "nvmlDeviceGetCurrPcieLinkWidth"),
	SYM(pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth"),
	SYM(pcie_replay, "nvmlDeviceGetPcieReplayCounter"),
	SYM(persistence, "nvmlDeviceGetPersistenceMode"),
	SYM(compute_mode, "nvmlDeviceGetComputeMode"),
	SYM(display_mode, "nvmlDeviceGetDisplayMode"),
	SYM(display_active, "nvmlDeviceGetDisplayActive"),
	SYM(mig_mode, "nvmlDeviceGetMigMode"),
	SYM(mig_max, "nvmlDeviceGetMaxMigDeviceCount"),
	SYM(mig_handle, "nvmlDeviceGetMigDeviceHandleByIndex"),
	SYM(gpu_instance_id, "nvmlDeviceGetGpuInstanceId"),
	SYM(compute_instance_id, "nvmlDeviceGetComputeInstanceId"),
	/* the plain name is nvml.h's alias of _v2: the same struct */
	SYM(attributes, "nvmlDeviceGetAttributes_v2", "nvmlDeviceGetAttributes"),
	SYM(ecc_mode, "nvmlDeviceGetEccMode"),
	SYM(ecc_total, "nvmlDeviceGetTotalEccErrors"),
	SYM(retired_pages, "nvmlDeviceGetRetiredPages"),
	SYM(retired_pending, "nvmlDeviceGetRetiredPagesPendingStatus"),
	SYM(remapped_rows, "nvmlDeviceGetRemappedRows"),
	SYM(encoder_stats, "nvmlDeviceGetEncoderStats"),
	SYM(procs[0], "nvmlDeviceGetComputeRunningProcesses_v3",
	    "nvmlDeviceGetComputeRunningProcesses_v2", "nvmlDeviceGetComputeRunningProcesses"),
	SYM(procs[1], "nvmlDeviceGetGraphicsRunningProcesses_v3",
	    "nvmlDeviceGetGraphicsRunningProcesses_v2", "nvmlDeviceGetGraphicsRunningProcesses"),
	SYM(procs[2], "nvmlDeviceGetMPSComputeRunningProcesses_v3",
	    "nvmlDeviceGetMPSComputeRunningProcesses_v2",
	    "nvmlDeviceGetMPSComputeRunningProcesses"),
	SYM(proc_util, "nvmlDeviceGetProcessUtilization"),
	SYM(event_set_create, "nvmlEventSetCreate"),
	SYM(event_set_free, "nvmlEventSetFree"),
	SYM(register_events, "nvmlDeviceRegisterEvents"),
	/* the plain one fills the same struct but for the MIG instance ids, which we ignore */
	SYM(event_wait, "nvmlEventSetWait_v2", "nvmlEventSetWait"),
	SYM(topo_ancestor, "nvmlDeviceGetTopologyCommonAncestor"),
	SYM(nvlink_state, "nvmlDeviceGetNvLinkState"),
	/* the plain one fills the first, shorter nvmlPciInfo_t: domain, bus and device are there */
	SYM(nvlink_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2",
	    "nvmlDeviceGetNvLinkRemotePciInfo"),
	SYM(nvlink_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType"),
	SYM(nvlink_version, "nvmlDeviceGetNvLinkVersion"),
	SYM(nvlink_errors, "nvmlDeviceGetNvLinkErrorCounter"),
	SYM(pcie_throughput, "nvmlDeviceGetPcieThroughput"),
	SYM(violation, "nvmlDeviceGetViolationStatus"),
	SYM(gpm_support, "nvmlGpmQueryDeviceSupport"),
	SYM(gpm_alloc, "nvmlGpmSampleAlloc"),
	SYM(gpm_free, "nvmlGpmSampleFree"),
	SYM(gpm_sample, "nvmlGpmSampleGet"),
	SYM(gpm_metrics, "nvmlGpmMetricsGet"),
	SYM(detail_list, "nvmlDeviceGetRunningProcessDetailList"),
	SYM(cc_mem_size_info, "nvmlDeviceGetConfComputeMemSizeInfo"),
	SYM(fake_scenario, "gpuscope_fake_nvml_scenario"),
};

/* Calls whose NOT_SUPPORTED answer is remembered per device. */
enum nv_call {
	NC_NONE = -1, /* not remembered */
	NC_BAR1 = 0,
	NC_UTIL,
	NC_ENC,
	NC_DEC,
	NC_JPG,
	NC_OFA,
	NC_TEMP,
	NC_TEMP_V,
	NC_MARGIN,
	NC_FIELDS,
	NC_FAN,
	NC_POWER,
	NC_POWER_ENF,
	NC_POWER_MGMT,
	NC_ENERGY,
	NC_CLOCK_GR,
	NC_CLOCK_SM,
	NC_CLOCK_MEM,
	NC_CLOCK_VIDEO,
	NC_PSTATE,
	NC_REASONS,
	NC_PCIE_GEN,
	NC_PCIE_WIDTH,
	NC_PCIE_REPLAY,
	NC_PERSIST,
	NC_COMPUTE_MODE,
	NC_DISPLAY_MODE,
	NC_DISPLAY_ACTIVE,
	NC_MIG,
	NC_ECC_MODE,
	NC_ECC_CV,
	NC_ECC_UV,
	NC_ECC_CA,
	NC_ECC_UA,
	NC_RETIRED_SBE,
	NC_RETIRED_DBE,
	NC_RETIRED_PENDING,
	NC_REMAP,
	NC_ENC_STATS,
	NC_PROC_UTIL,
	NC_MEM_V2,
	NC_PROCS0,
	NC_PROCS1,
	NC_PROCS2,
	NC__COUNT
};

/* the GPM metrics gpuscope reads (gpm_metrics[] below) */
#define NV_GPM_NR 12

/*
 * A device's GPM state: two samples, used in turn, so that each read takes
 * one and gets the metrics of the time since the one before.
 */
struct nvml_gpm {
	bool on;              /* the device has GPM and both samples are allocated */
	nvmlGpmSample_t s[2]; /* the latest taken is s[cur] */
	unsigned cur;
	double t;                /* clock_mono() when s[cur] was taken; 0: none taken yet */
	double val[NV_GPM_NR];   /* the metrics of the last interval long enough */
	unsigned valid;          /* bit i: val[i] was computed */
	nvmlGpmMetricsGet_t *mg; /* the request, 19 KB: not on a worker's stack */
};

struct nvml_dev {
	nvmlDevice_t h;
	bool mig;                /* a MIG device (its processes are in its GPU's lists) */
	uint64_t nosup;          /* bit (1 << enum nv_call): answered NOT_SUPPORTED before */
	unsigned proc_stride[3]; /* bytes per entry of each process list; 0 = not yet known */
	double mem_total;        /* for sanity checks of process entries */
	/* NVLink, PCIe throughput and violation counters (read_links, read_counters) */
	bool no_nvlink;         /* no link answered: NVLink calls are not made again */
	uint32_t link_absent;   /* bit (1 << link): NOT_SUPPORTED or INVALID_ARGUMENT */
	uint32_t link_nosup[3]; /* bit (1 << link): version, error counters, throughput */
	unsigned link_version[GPU_MAX_NVLINK]; /* 0: not read yet */
	bool pcie_tput_nosup;
	double pcie_next;        /* clock_mono() of the next throughput call; 0: first read */
	double pcie_tx, pcie_rx; /* its last answer, bytes per second; NAN: none */
	unsigned viol_nosup;     /* bit i: row i of read_counters' table */
	/* Xid errors seen by the event thread; under nvml.ev.mu */
	bool xid_watched; /* registered for Xid events (set at scan, before the thread) */
	struct xid_count xid[GPU_MAX_XID];
	unsigned nr_xid;
	uint32_t xid_last;
	struct nvml_gpm gpm;
};
_Static_assert(NC__COUNT <= 64, "nosup bits");

struct nvml {
	struct backend base;
	const struct gs_config *cfg;
	void *dl;
	struct nvml_sym s;
	unsigned ver[ARRAY_SIZE(sym_rows)]; /* which name of each row resolved (0 = newest) */
	char path[PATH_MAX];
	struct nvml_dev *dev;
	unsigned nr_dev;
	struct nvml_events {
		bool running; /* the thread was started; mu and cv exist */
		pthread_t thread;
		nvmlEventSet_t set;
		pthread_mutex_t mu;
		pthread_cond_t cv; /* CLOCK_MONOTONIC; wakes the thread, and close */
		bool stop;         /* under mu: the backend is closing */
		bool in_driver;    /* under mu: the thread is inside an NVML call */
		bool orphaned;     /* under mu: closed while it was: the thread frees everything */
	} ev;
};

static const char *
nv_errstr(const struct nvml *nv, nvmlReturn_t r)
{
	static __thread char buf[32];
	const char *s = nv->s.error_string ? nv->s.error_string(r) : NULL;

	if (s && *s)
		return s;
	snprintf(buf, sizeof(buf), "NVML error %u", r);
	return buf;
}

/* True when path is (or resolves to) the CUDA toolkit's link-time stub. */
static bool
is_cuda_stub(const char *path)
{
	char real[PATH_MAX];
	const char *p = realpath(path, real) ? real : path;

	return strstr(p, "/stubs/") || strstr(path, "/stubs/");
}

static void
resolve(struct nvml *nv)
{
	for (size_t i = 0; i < ARRAY_SIZE(sym_rows); i++) {
		void *fn = NULL;
		unsigned v;

		for (v = 0; v < ARRAY_SIZE(sym_rows[i].names) && sym_rows[i].names[v]; v++) {
			fn = dlsym(nv->dl, sym_rows[i].names[v]);
			if (fn)
				break;
		}
		/* storing an object pointer into a function pointer slot is what dlsym is for */
		memcpy((char *)&nv->s + sym_rows[i].off, &fn, sizeof(fn));
		nv->ver[i] = fn ? v : 0;
	}
}

static unsigned
sym_version(const struct nvml *nv, size_t off)
{
	for (size_t i = 0; i < ARRAY_SIZE(sym_rows); i++)
		if (sym_rows[i].off == off)
			return nv->ver[i];
	return 0;
}

/*
 * dlopen the library: GPUSCOPE_NVML when set, else libnvidia-ml.so.1 from
 * the loader's search path, else the usual install directories. The CUDA
 * toolkit's stub is refused wherever it turns up.
 */
static int
load_library(struct nvml *nv, struct err *err)
{
	static const char *const fallbacks[] = {
		"/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
		"/usr/lib64/libnvidia-ml.so.1",
		"/usr/lib/aarch64-linux-gnu/libnvidia-ml.so.1",
		"/usr/lib/libnvidia-ml.so.1",
		"/usr/lib/wsl/lib/libnvidia-ml.so.1",
		"/usr/local/nvidia/lib64/libnvidia-ml.so.1",
	};
	struct strbuf why = STRBUF_INIT;
	const char *cand[ARRAY_SIZE(fallbacks) + 1];
	size_t nr = 0;
	int rc = E_NODEV;

	if (nv->cfg->nvml_path) {
		cand[nr++] = nv->cfg->nvml_path;
	} else {
		cand[nr++] = "libnvidia-ml.so.1";
		for (size_t i = 0; i < ARRAY_SIZE(fallbacks); i++)
			cand[nr++] = fallbacks[i];
	}
	for (size_t i = 0; i < nr; i++) {
		struct link_map *lm = NULL;
		void *dl = dlopen(cand[i], RTLD_NOW | RTLD_LOCAL);
		const char *where;

		if (!dl) {
			if (i == 0 && nv->cfg->nvml_path)
				strbuf_addf(&why, "cannot load '%s' (named by GPUSCOPE_NVML): %s",
				            cand[i], dlerror());
			continue;
		}
		where = (dlinfo(dl, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && *lm->l_name)
		                ? lm->l_name
		                : cand[i];
		if (is_cuda_stub(where)) {
			if (!why.len)
				strbuf_addf(
				        &why,
				        "'%s' is the CUDA toolkit's link-time stub, not the driver's library: remove its directory from LD_LIBRARY_PATH and the loader cache",
				        where);
			dlclose(dl);
			continue;
		}
		nv->dl = dl;
		snprintf(nv->path, sizeof(nv->path), "%s", where);
		rc = 0;
		break;
	}
	if (rc < 0) {
		bool named = why.len > 0;

		if (!named)
			strbuf_addstr(
			        &why,
			        "the NVIDIA driver library libnvidia-ml.so.1 is not installed");
		if (pci_explain(nv->cfg->sysfs_root, PCI_VENDOR_NVIDIA, "NVIDIA", "nvidia", &why) &&
		    !named)
			strbuf_addstr(
			        &why,
			        " (install the NVIDIA driver, or set GPUSCOPE_NVML to its libnvidia-ml.so.1)");
		err_set(err, rc, "nvml: %s", why.buf);
	}
	strbuf_release(&why);
	return rc;
}

/* The module's version from <proc>/driver/nvidia/version, or "". */
static void
kernel_module_version(const struct gs_config *cfg, char *buf, size_t size)
{
	struct strbuf sb = STRBUF_INIT;
	bool open = false;

	buf[0] = '\0';
	if (file_read(cfg->proc_root, "driver/nvidia/version", &sb, 4096, NULL) == 0)
		nvml_parse_module_version(sb.buf, buf, size, &open);
	strbuf_release(&sb);
}

/* the driver version in the library's file name: libnvidia-ml.so.590.48.01 */
static void
library_version(const char *path, char *buf, size_t size)
{
	char real[PATH_MAX];
	const char *p = realpath(path, real) ? real : path;
	const char *v = strstr(p, ".so.");

	buf[0] = '\0';
	if (v && strchr(v + 4, '.'))
		snprintf(buf, size, "%s", v + 4);
}

static int
init_error(struct nvml *nv, nvmlReturn_t r, struct err *err)
{
	struct strbuf sb = STRBUF_INIT;
	char kver[64], lver[64];
	int rc = E_NODEV;

	switch (r) {
	case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
		kernel_module_version(nv->cfg, kver, sizeof(kver));
		library_version(nv->path, lver, sizeof(lver));
		strbuf_addstr(&sb, "the NVIDIA kernel module");
		if (*kver)
			strbuf_addf(&sb, " (%s)", kver);
		strbuf_addstr(&sb, " does not match the driver library");
		if (*lver)
			strbuf_addf(&sb, " (%s)", lver);
		strbuf_addstr(
		        &sb,
		        ", as after a driver upgrade without a reboot: reboot, or unload and reload the nvidia kernel modules");
		rc = E_VERSION;
		break;
	case NVML_ERROR_DRIVER_NOT_LOADED:
		strbuf_addstr(&sb, "the NVIDIA kernel driver is not loaded");
		pci_explain(nv->cfg->sysfs_root, PCI_VENDOR_NVIDIA, "NVIDIA", "nvidia", &sb);
		strbuf_addstr(
		        &sb,
		        " (load it with 'sudo modprobe nvidia', or reinstall the driver for this kernel)");
		break;
	case NVML_ERROR_NO_PERMISSION:
		strbuf_addstr(
		        &sb,
		        "no permission to open the NVIDIA device files: check 'ls -l /dev/nvidia*' and add this user to the group that owns them (in a container, pass the devices in)");
		rc = E_PERM;
		break;
	case NVML_ERROR_LIBRARY_NOT_FOUND:
		strbuf_addf(&sb,
		            "'%s' cannot find the rest of the driver: reinstall the NVIDIA driver",
		            nv->path);
		break;
	default:
		strbuf_addf(
		        &sb,
		        "NVML failed to initialise: %s (in a container, a 'systemctl daemon-reload' on the host can revoke GPU access: restart the container)",
		        nv_errstr(nv, r));
		rc = E_IO;
		break;
	}
	err_set(err, rc, "nvml: %s", sb.buf);
	strbuf_release(&sb);
	return rc;
}

/* ---- Xid errors, through NVML's events ---- */

#define EV_POLL_S      0.5  /* how often the event thread takes what has arrived */
#define EV_DRAIN_MAX   1024 /* events taken in one go: a storm cannot hold the thread */
#define EV_CLOSE_GRACE 1.0  /* seconds close waits for a thread inside the driver */

static void nvml_destroy(struct nvml *nv);
static void gpm_close(struct nvml *nv, struct nvml_dev *nd);

/*
 * Count one event of the event thread: an Xid of a device we registered.
 * Other types, and handles we do not know, are ignored. Codes past
 * GPU_MAX_XID are added to the last entry.
 */
static void
xid_add(struct nvml *nv, const nvmlEventData_t *e)
{
	struct nvml_dev *nd = NULL;
	uint32_t code = e->eventData > UINT32_MAX ? UINT32_MAX : (uint32_t)e->eventData;
	unsigned k;

	if (e->eventType != nvmlEventTypeXidCriticalError || !e->device)
		return;
	for (unsigned i = 0; i < nv->nr_dev && !nd; i++)
		if (nv->dev[i].h == e->device && nv->dev[i].xid_watched)
			nd = &nv->dev[i];
	if (!nd)
		return;
	pthread_mutex_lock(&nv->ev.mu);
	for (k = 0; k < nd->nr_xid && nd->xid[k].xid != code; k++)
		;
	if (k == nd->nr_xid && nd->nr_xid < GPU_MAX_XID)
		nd->xid[nd->nr_xid++].xid = code;
	else if (k == nd->nr_xid)
		k = GPU_MAX_XID - 1;
	nd->xid[k].count++;
	nd->xid_last = code;
	pthread_mutex_unlock(&nv->ev.mu);
}

/*
 * The event thread. It asks with a timeout of 0 and sleeps on its own
 * condition variable between rounds: a wait inside NVML cannot be cut
 * short, and close must not wait for one.
 */
static void *
events_main(void *arg)
{
	struct nvml *nv = arg;
	struct timespec ts;
	bool orphaned;

	pthread_mutex_lock(&nv->ev.mu);
	while (!nv->ev.stop) {
		nv->ev.in_driver = true;
		pthread_mutex_unlock(&nv->ev.mu);
		for (unsigned n = 0; n < EV_DRAIN_MAX; n++) {
			nvmlEventData_t e;

			memset(&e, 0, sizeof(e));
			if (nv->s.event_wait(nv->ev.set, &e, 0) != NVML_SUCCESS)
				break;
			xid_add(nv, &e);
		}
		pthread_mutex_lock(&nv->ev.mu);
		nv->ev.in_driver = false;
		pthread_cond_broadcast(&nv->ev.cv);
		if (!nv->ev.stop) {
			clock_mono_timespec(&ts, clock_mono() + EV_POLL_S);
			pthread_cond_timedwait(&nv->ev.cv, &nv->ev.mu, &ts);
		}
	}
	orphaned = nv->ev.orphaned;
	pthread_mutex_unlock(&nv->ev.mu);
	if (orphaned)
		nvml_destroy(nv);
	return NULL;
}

/*
 * At scan: register every device for Xid errors in one event set and start
 * the thread that counts them. Devices whose registration fails (an old
 * driver, NOT_SUPPORTED, a lost GPU) are not watched; with none watched, or
 * without the entry points, there is no thread.
 */
static void
events_start(struct nvml *nv)
{
	struct nvml_sym *s = &nv->s;
	pthread_condattr_t ca;
	sigset_t all, old;
	bool any = false;
	int rc;

	if (!s->event_set_create || !s->event_set_free || !s->register_events || !s->event_wait)
		return;
	if (s->event_set_create(&nv->ev.set) != NVML_SUCCESS || !nv->ev.set) {
		nv->ev.set = NULL;
		return;
	}
	for (unsigned i = 0; i < nv->nr_dev; i++) {
		struct nvml_dev *nd = &nv->dev[i];

		/* a MIG device's Xid errors are its GPU's */
		nd->xid_watched = nd->h && !nd->mig &&
		                  s->register_events(nd->h, nvmlEventTypeXidCriticalError,
		                                     nv->ev.set) == NVML_SUCCESS;
		any |= nd->xid_watched;
	}
	if (any) {
		pthread_mutex_init(&nv->ev.mu, NULL);
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&nv->ev.cv, &ca);
		pthread_condattr_destroy(&ca);
		/* signals are for the program's own threads (watch's Ctrl-C, serve's SIGTERM) */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		rc = pthread_create(&nv->ev.thread, NULL, events_main, nv);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (rc == 0) {
			nv->ev.running = true;
			return;
		}
		pthread_cond_destroy(&nv->ev.cv);
		pthread_mutex_destroy(&nv->ev.mu);
	}
	for (unsigned i = 0; i < nv->nr_dev; i++)
		nv->dev[i].xid_watched = false;
	s->event_set_free(nv->ev.set);
	nv->ev.set = NULL;
}

/*
 * Stop the event thread: true once it has ended. A thread still inside the
 * driver after a grace period is left to finish, and then frees everything
 * itself (false): a hung driver must not hang close.
 */
static bool
events_stop(struct nvml *nv)
{
	double deadline = clock_mono() + EV_CLOSE_GRACE;
	struct timespec ts;
	bool orphaned;

	pthread_mutex_lock(&nv->ev.mu);
	nv->ev.stop = true;
	pthread_cond_broadcast(&nv->ev.cv);
	while (nv->ev.in_driver && clock_mono() < deadline) {
		clock_mono_timespec(&ts, deadline);
		pthread_cond_timedwait(&nv->ev.cv, &nv->ev.mu, &ts);
	}
	orphaned = nv->ev.in_driver;
	nv->ev.orphaned = orphaned;
	pthread_mutex_unlock(&nv->ev.mu);
	if (orphaned) {
		pthread_detach(nv->ev.thread);
		return false;
	}
	pthread_join(nv->ev.thread, NULL);
	return true;
}

/* dev's Xid counts (the copy a sample shows), when its backend watches them. */
static void
events_copy(struct nvml *nv, const struct nvml_dev *nd, struct gpu_device *dev)
{
	if (!nv->ev.running || !nd->xid_watched)
		return;
	pthread_mutex_lock(&nv->ev.mu);
	dev->xid_watched = true;
	dev->nr_xid = nd->nr_xid;
	memcpy(dev->xid, nd->xid, sizeof(dev->xid));
	dev->xid_last = nd->xid_last;
	pthread_mutex_unlock(&nv->ev.mu);
}

/*
 * nvmlShutdown, bounded like every other driver call: it runs on a thread
 * of its own, and after cfg->timeout seconds the caller goes on without it.
 * A driver that hangs there (a GPU gone bad) then keeps that thread and the
 * library, which must not be unloaded under it; the program is ending
 * anyway, and nvml_abandoned() tells main() to leave without running the
 * library's destructors.
 */
struct shutdown_call {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	nvmlReturn_t (*fn)(void);
	bool done;
	int refs; /* the caller and the thread */
};

static atomic_bool abandoned;

static void
shutdown_unref(struct shutdown_call *sc)
{
	bool last;

	pthread_mutex_lock(&sc->mu);
	last = --sc->refs == 0;
	pthread_mutex_unlock(&sc->mu);
	if (last) {
		pthread_cond_destroy(&sc->cv);
		pthread_mutex_destroy(&sc->mu);
		free(sc);
	}
}

static void *
shutdown_main(void *arg)
{
	struct shutdown_call *sc = arg;

	sc->fn();
	pthread_mutex_lock(&sc->mu);
	sc->done = true;
	pthread_cond_signal(&sc->cv);
	pthread_mutex_unlock(&sc->mu);
	shutdown_unref(sc);
	return NULL;
}

/* True when it returned within timeout seconds (the library may then be unloaded). */
static bool
shutdown_bounded(nvmlReturn_t (*fn)(void), double timeout)
{
	struct shutdown_call *sc;
	pthread_condattr_t ca;
	pthread_attr_t attr;
	struct timespec ts;
	pthread_t t;
	double deadline = clock_mono() + (timeout > 0 ? timeout : 5.0);
	bool done;

	if (atomic_load(&abandoned))
		return false; /* the driver is stuck in an earlier one: do not call in again */
	sc = xcalloc(1, sizeof(*sc));
	pthread_mutex_init(&sc->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&sc->cv, &ca);
	pthread_condattr_destroy(&ca);
	sc->fn = fn;
	sc->refs = 2;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, shutdown_main, sc)) {
		/* no thread to spare: call it here, unbounded, as before */
		pthread_attr_destroy(&attr);
		sc->refs = 1;
		shutdown_unref(sc);
		fn();
		return true;
	}
	pthread_attr_destroy(&attr);
	clock_mono_timespec(&ts, deadline);
	pthread_mutex_lock(&sc->mu);
	while (!sc->done && clock_mono() < deadline)
		pthread_cond_timedwait(&sc->cv, &sc->mu, &ts);
	done = sc->done;
	pthread_mutex_unlock(&sc->mu);
	shutdown_unref(sc);
	if (!done)
		atomic_store(&abandoned, true);
	return done;
}

bool
nvml_abandoned(void)
{
	return atomic_load(&abandoned);
}

/* Everything of nv, once no thread uses it. */
static void
nvml_destroy(struct nvml *nv)
{
	if (nv->ev.set)
		nv->s.event_set_free(nv->ev.set);
	if (nv->ev.running) {
		pthread_cond_destroy(&nv->ev.cv);
		pthread_mutex_destroy(&nv->ev.mu);
	}
	for (unsigned i = 0; i < nv->nr_dev; i++)
		gpm_close(nv, &nv->dev[i]);
	if (nv->s.shutdown && !shutdown_bounded(nv->s.shutdown, nv->cfg->timeout))
		nv->dl = NULL; /* still in use by the thread in nvmlShutdown */
	if (nv->dl)
		dlclose(nv->dl);
	free(nv->dev);
	free(nv);
}

static void
nvml_close(struct backend *be)
{
	struct nvml *nv = container_of(be, struct nvml, base);

	if (nv->ev.running && !events_stop(nv))
		return; /* the event thread closes it when the driver lets it go */
	nvml_destroy(nv);
}

static int
nvml_open(const struct gs_config *cfg, struct backend **out, struct err *err)
{
	struct nvml *nv = xcalloc(1, sizeof(*nv));
	nvmlReturn_t r;
	int rc;

	nv->cfg = cfg;
	rc = load_library(nv, err);
	if (rc < 0)
		goto fail;
	resolve(nv);
	if (!nv->s.init) {
		rc = err_set(err, E_NODEV, "nvml: '%s' has no nvmlInit: it is not an NVML library",
		             nv->path);
		goto fail;
	}
	r = nv->s.init();
	if (r != NVML_SUCCESS) {
		nv->s.shutdown = NULL; /* nothing to shut down */
		rc = init_error(nv, r, err);
		goto fail;
	}
	*out = &nv->base;
	return 0;
fail:
	nvml_close(&nv->base);
	return rc;
}

/* ---- reading one device ---- */

struct rd {
	struct nvml *nv;
	struct nvml_dev *nd;
	struct gpu_device *dev;
	bool lost;
};

/*
 * Whether call c may be made: the function exists, the device has not said
 * NOT_SUPPORTED before, and the device is not lost.
 */
static bool
can(struct rd *rd, const void *fn, enum nv_call c)
{
	return fn && !rd->lost && (c == NC_NONE || !(rd->nd->nosup >> c & 1));
}

/* Digest a return code: true on success; remembers NOT_SUPPORTED; notes a lost GPU. */
static bool
got(struct rd *rd, enum nv_call c, nvmlReturn_t r)
{
	switch (r) {
	case NVML_SUCCESS:
		return true;
	case NVML_ERROR_NOT_SUPPORTED:
	case NVML_ERROR_FUNCTION_NOT_FOUND:
		if (c != NC_NONE)
			rd->nd->nosup |= (uint64_t)1 << c;
		return false;
	case NVML_ERROR_GPU_IS_LOST:
		rd->lost = true;
		rd->dev->state = DEV_LOST;
		str_copy(rd->dev->state_msg, sizeof(rd->dev->state_msg), DEV_LOST_MSG);
		return false;
	case NVML_ERROR_RESET_REQUIRED:
		rd->lost = true;
		rd->dev->state = DEV_RESET_REQUIRED;
		snprintf(
		        rd->dev->state_msg, sizeof(rd->dev->state_msg),
		        "GPU requires a reset: stop its processes and run 'nvidia-smi -r', or reboot");
		return false;
	default:
		return false;
	}
}

/* uint result of a call with no per-device memory (static reads) */
#define RD_U(rd, fn, c, field, scale, ...)                                              \
	do {                                                                            \
		unsigned rd_u_;                                                         \
		if (can((rd), (rd)->nv->s.fn, (c)) &&                                   \
		    got((rd), (c), (rd)->nv->s.fn((rd)->nd->h, ##__VA_ARGS__, &rd_u_))) \
			dev_set((rd)->dev, (field), (double)rd_u_ *(scale));            \
	} while (0)

static const char *
brand_name(unsigned b)
{
	static const char *const names[] = {
		"Unknown",    "Quadro",     "Tesla",      "NVS",
		"GRID",       "GeForce",    "Titan",      "NVIDIA vApps",
		"NVIDIA VPC", "NVIDIA VCS", "NVIDIA VWS", "NVIDIA Cloud Gaming",
		"Quadro RTX", "NVIDIA RTX", "NVIDIA",     "GeForce RTX",
		"Titan RTX",
	};

	return b < ARRAY_SIZE(names) ? names[b] : "Unknown";
}

static const char *
arch_name(unsigned a)
{
	switch (a) {
	case NVML_DEVICE_ARCH_KEPLER:
		return "Kepler";
	case NVML_DEVICE_ARCH_MAXWELL:
		return "Maxwell";
	case NVML_DEVICE_ARCH_PASCAL:
		return "Pascal";
	case NVML_DEVICE_ARCH_VOLTA:
		return "Volta";
	case NVML_DEVICE_ARCH_TURING:
		return "Turing";
	case NVML_DEVICE_ARCH_AMPERE:
		return "Ampere";
	case NVML_DEVICE_ARCH_ADA:
		return "Ada Lovelace";
	case NVML_DEVICE_ARCH_HOPPER:
		return "Hopper";
	case NVML_DEVICE_ARCH_BLACKWELL:
		return "Blackwell";
	case NVML_DEVICE_ARCH_T23X:
		return "Orin";
	case NVML_DEVICE_ARCH_RUBIN:
		return "Rubin";
	}
	return "";
}

static void
read_string(struct rd *rd, nvmlReturn_t (*fn)(nvmlDevice_t, char *, unsigned), char *dst,
            size_t size)
{
	char buf[128];

	if (!fn || rd->lost)
		return;
	memset(buf, 0, sizeof(buf));
	if (got(rd, NC_NONE, fn(rd->nd->h, buf, sizeof(buf)))) {
		buf[sizeof(buf) - 1] = '\0';
		str_copy(dst, size, buf);
	}
}

/* "0000:3B:00.0" (the legacy 16-byte field) as "00000000:3B:00.0" */
static void
widen_bus_id(char *dst, size_t size, const char *legacy)
{
	unsigned dom, bus, dev, fn;

	if (sscanf(legacy, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) == 4)
		snprintf(dst, size, "%08X:%02X:%02X.%X", dom, bus, dev, fn);
	else
		str_copy(dst, size, legacy);
}

/* identity and static properties, read once at scan */
static void
read_static(struct rd *rd)
{
	struct nvml_sym *s = &rd->nv->s;
	struct gpu_device *d = rd->dev;
	nvmlPciInfo_t pci;
	unsigned u, v;
	int major, minor;

	read_string(rd, s->name, d->name, sizeof(d->name));
	read_string(rd, s->uuid, d->uuid, sizeof(d->uuid));
	read_string(rd, s->serial, d->serial, sizeof(d->serial));
	read_string(rd, s->vbios, d->vbios, sizeof(d->vbios));
	read_string(rd, s->inforom, d->inforom, sizeof(d->inforom));
	read_string(rd, s->board_part, d->board_part, sizeof(d->board_part));
	memset(&pci, 0, sizeof(pci));
	if (s->pci_info && !rd->lost && got(rd, NC_NONE, s->pci_info(rd->nd->h, &pci))) {
		pci.busId[sizeof(pci.busId) - 1] = '\0';
		pci.busIdLegacy[sizeof(pci.busIdLegacy) - 1] = '\0';
		if (pci.busId[0])
			str_copy(d->pci_bus_id, sizeof(d->pci_bus_id), pci.busId);
		else
			widen_bus_id(d->pci_bus_id, sizeof(d->pci_bus_id), pci.busIdLegacy);
		d->pci_domain = pci.domain;
		d->pci_bus = pci.bus;
		d->pci_dev = pci.device;
		d->pci_device_id = pci.pciDeviceId;
		d->pci_subsys_id = pci.pciSubSystemId;
		d->pci_valid = true;
	}
	if (s->brand && !rd->lost && got(rd, NC_NONE, s->brand(rd->nd->h, &u)))
		str_copy(d->brand, sizeof(d->brand), brand_name(u));
	if (s->architecture && !rd->lost && got(rd, NC_NONE, s->architecture(rd->nd->h, &u)))
		str_copy(d->architecture, sizeof(d->architecture), arch_name(u));
	if (s->compute_cap && !rd->lost &&
	    got(rd, NC_NONE, s->compute_cap(rd->nd->h, &major, &minor)) && major >= 0 &&
	    major < 100 && minor >= 0 && minor < 100)
		snprintf(d->compute_cap, sizeof(d->compute_cap), "%d.%d", major, minor);

	RD_U(rd, max_clock, NC_NONE, GF_CLOCK_MAX_GRAPHICS, 1, NVML_CLOCK_GRAPHICS);
	RD_U(rd, max_clock, NC_NONE, GF_CLOCK_MAX_SM, 1, NVML_CLOCK_SM);
	RD_U(rd, max_clock, NC_NONE, GF_CLOCK_MAX_MEM, 1, NVML_CLOCK_MEM);
	RD_U(rd, max_clock, NC_NONE, GF_CLOCK_MAX_VIDEO, 1, NVML_CLOCK_VIDEO);
	RD_U(rd, temp_threshold, NC_NONE, GF_TEMP_SLOWDOWN, 1, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN);
	RD_U(rd, temp_threshold, NC_NONE, GF_TEMP_SHUTDOWN, 1, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN);
	RD_U(rd, temp_threshold, NC_NONE, GF_TEMP_GPU_MAX, 1, NVML_TEMPERATURE_THRESHOLD_GPU_MAX);
	RD_U(rd, temp_threshold, NC_NONE, GF_TEMP_MEM_MAX, 1, NVML_TEMPERATURE_THRESHOLD_MEM_MAX);
	RD_U(rd, power_default, NC_NONE, GF_POWER_LIMIT_DEFAULT, 1e-3);
	if (s->power_constraints && !rd->lost &&
	    got(rd, NC_NONE, s->power_constraints(rd->nd->h, &u, &v))) {
		dev_set(d, GF_POWER_LIMIT_MIN, u * 1e-3);
		dev_set(d, GF_POWER_LIMIT_MAX, v * 1e-3);
	}
	RD_U(rd, pcie_gen_max, NC_NONE, GF_PCIE_GEN_MAX, 1);
	RD_U(rd, pcie_gen_dev_max, NC_NONE, GF_PCIE_GEN_DEV_MAX, 1);
	RD_U(rd, pcie_width_max, NC_NONE, GF_PCIE_WIDTH_MAX, 1);
	if (s->reasons_supported && !rd->lost) {
		unsigned long long m;

		if (got(rd, NC_NONE, s->reasons_supported(rd->nd->h, &m)))
			dev_set(d, GF_CLOCK_REASONS_SUPPORTED, (double)(m & 0xFFFFFFFFFFFFFULL));
	}
}

static void
read_memory(struct rd *rd)
{
	struct nvml_sym *s = &rd->nv->s;
	struct gpu_device *d = rd->dev;

	if (can(rd, s->memory_v2, NC_MEM_V2)) {
		nvmlMemory_v2_t m;
		nvmlReturn_t r;

		memset(&m, 0, sizeof(m));
		m.version = nvmlMemory_v2;
		r = s->memory_v2(rd->nd->h, &m);
		if (r == NVML_ERROR_ARGUMENT_VERSION_MISMATCH)
			rd->nd->nosup |= (uint64_t)1 << NC_MEM_V2;
		if (got(rd, NC_MEM_V2, r)) {
			dev_set(d, GF_MEM_TOTAL, (double)m.total);
			dev_set(d, GF_MEM_RESERVED, (double)m.reserved);
			dev_set(d, GF_MEM_USED, (double)m.used);
			dev_set(d, GF_MEM_FREE, (double)m.free);
			str_copy(d->mem_source, sizeof(d->mem_source), "v2");
			rd->nd->mem_total = (double)m.total;
			return;
		}
	}
	if (s->memory_v1 && !rd->lost) {
		nvmlMemory_t m;

		memset(&m, 0, sizeof(m));
		if (got(rd, NC_NONE, s->memory_v1(rd->nd->h, &m))) {
			/* the old call counts driver-reserved memory as used */
			dev_set(d, GF_MEM_TOTAL, (double)m.total);
			dev_set(d, GF_MEM_USED, (double)m.used);
			dev_set(d, GF_MEM_FREE, (double)m.free);
			str_copy(d->mem_source, sizeof(d->mem_source), "v1");
			rd->nd->mem_total = (double)m.total;
		}
	}
}

static void
read_fields(struct rd *rd)
{
	nvmlFieldValue_t fv[3];

	if (!can(rd, rd->nv->s.field_values, NC_FIELDS))
		return;
	memset(fv, 0, sizeof(fv));
	fv[0].fieldId = NVML_FI_DEV_MEMORY_TEMP;
	fv[1].fieldId = NVML_FI_DEV_POWER_INSTANT;
	fv[2].fieldId = NVML_FI_DEV_POWER_AVERAGE;
	if (!got(rd, NC_FIELDS, rd->nv->s.field_values(rd->nd->h, 3, fv)))
		return;
	for (int i = 0; i < 3; i++) {
		double v;

		if (fv[i].nvmlReturn != NVML_SUCCESS)
			continue;
		switch (fv[i].valueType) {
		case NVML_VALUE_TYPE_DOUBLE:
			v = fv[i].value.dVal;
			break;
		case NVML_VALUE_TYPE_UNSIGNED_INT:
			v = fv[i].value.uiVal;
			break;
		case NVML_VALUE_TYPE_UNSIGNED_LONG:
			v = (double)fv[i].value.ulVal;
			break;
		case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
			v = (double)fv[i].value.ullVal;
			break;
		case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
			v = (double)fv[i].value.sllVal;
			break;
		case NVML_VALUE_TYPE_SIGNED_INT:
			v = fv[i].value.siVal;
			break;
		case NVML_VALUE_TYPE_UNSIGNED_SHORT:
			v = fv[i].value.usVal;
			break;
		default:
			continue;
		}
		if (fv[i].fieldId == NVML_FI_DEV_MEMORY_TEMP && v > 0 && v < 200)
			dev_set(rd->dev, GF_TEMP_MEM, v);
		else if (fv[i].fieldId == NVML_FI_DEV_POWER_INSTANT)
			dev_set(rd->dev, GF_POWER_INSTANT, v * 1e-3);
		else if (fv[i].fieldId == NVML_FI_DEV_POWER_AVERAGE)
			dev_set(rd->dev, GF_POWER_AVERAGE, v * 1e-3);
	}
}

static void
read_ecc(struct rd *rd)
{
	static const struct {
		enum nv_call c;
		unsigned type, counter;
		enum gpu_field f;
	} ecc[] = {
		{ NC_ECC_CV, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC,
		  GF_ECC_CORR_VOLATILE },
		{ NC_ECC_UV, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC,
		  GF_ECC_UNCORR_VOLATILE },
		{ NC_ECC_CA, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC,
		  GF_ECC_CORR_AGGREGATE },
		{ NC_ECC_UA, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC,
		  GF_ECC_UNCORR_AGGREGATE },
	};
	struct nvml_sym *s = &rd->nv->s;
	unsigned a, b, c, d;

	for (size_t i = 0; i < ARRAY_SIZE(ecc); i++) {
		unsigned long long n;

		if (can(rd, s->ecc_total, ecc[i].c) &&
		    got(rd, ecc[i].c, s->ecc_total(rd->nd->h, ecc[i].type, ecc[i].counter, &n)))
			dev_set(rd->dev, ecc[i].f, (double)n);
	}
	for (unsigned cause = 0; cause < 2; cause++) {
		enum nv_call call = cause ? NC_RETIRED_DBE : NC_RETIRED_SBE;
		unsigned n = 0;
		nvmlReturn_t r;

		if (!can(rd, s->retired_pages, call))
			continue;
		/* the count alone: the two-call pattern's first call */
		r = s->retired_pages(rd->nd->h, cause, &n, NULL);
		if (r == NVML_ERROR_INSUFFICIENT_SIZE)
			r = NVML_SUCCESS;
		if (got(rd, call, r))
			dev_set(rd->dev, cause ? GF_RETIRED_DBE : GF_RETIRED_SBE, n);
	}
	if (can(rd, s->retired_pending, NC_RETIRED_PENDING) &&
	    got(rd, NC_RETIRED_PENDING, s->retired_pending(rd->nd->h, &a)))
		dev_set(rd->dev, GF_RETIRED_PENDING, a != 0);
	if (can(rd, s->remapped_rows, NC_REMAP) &&
	    got(rd, NC_REMAP, s->remapped_rows(rd->nd->h, &a, &b, &c, &d))) {
		dev_set(rd->dev, GF_REMAP_CORR, a);
		dev_set(rd->dev, GF_REMAP_UNCORR, b);
		dev_set(rd->dev, GF_REMAP_PENDING, c != 0);
		dev_set(rd->dev, GF_REMAP_FAILURE, d != 0);
	}
}

/* ---- GPM: profiling metrics of Hopper and later ---- */

/*
 * Samples closer than this keep the metrics of the interval before: over a
 * few milliseconds the counters say little (the default window is 0.1 s).
 */
#define GPM_MIN_INTERVAL 0.05

static const struct {
	unsigned id;
	enum gpu_field field;
	double scale; /* NVML's unit to the field's */
	bool percent;
} gpm_metrics[NV_GPM_NR] = {
	{ NVML_GPM_METRIC_GRAPHICS_UTIL, GF_PROF_GR_ACTIVE, 1, true },
	{ NVML_GPM_METRIC_SM_UTIL, GF_PROF_SM_ACTIVE, 1, true },
	{ NVML_GPM_METRIC_SM_OCCUPANCY, GF_PROF_SM_OCCUPANCY, 1, true },
	{ NVML_GPM_METRIC_ANY_TENSOR_UTIL, GF_PROF_TENSOR_ACTIVE, 1, true },
	{ NVML_GPM_METRIC_DRAM_BW_UTIL, GF_PROF_DRAM_ACTIVE, 1, true },
	{ NVML_GPM_METRIC_FP64_UTIL, GF_PROF_FP64_ACTIVE, 1, true },
	{ NVML_GPM_METRIC_FP32_UTIL, GF_PROF_FP32_ACTIVE, 1, true },
	{ NVML_GPM_METRIC_FP16_UTIL, GF_PROF_FP16_ACTIVE, 1, true },
	/* the rates come in MiB/s */
	{ NVML_GPM_METRIC_PCIE_TX_PER_SEC, GF_PROF_PCIE_TX_RATE, 1048576, false },
	{ NVML_GPM_METRIC_PCIE_RX_PER_SEC, GF_PROF_PCIE_RX_RATE, 1048576, false },
	{ NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, GF_PROF_NVLINK_TX_RATE, 1048576, false },
	{ NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, GF_PROF_NVLINK_RX_RATE, 1048576, false },
};

/* At scan: a device that has GPM gets its two samples. Anything else leaves it off. */
static void
gpm_open(struct rd *rd)
{
	struct nvml_sym *s = &rd->nv->s;
	struct nvml_gpm *g = &rd->nd->gpm;
	nvmlGpmSupport_t sup;

	if (rd->nd->mig || rd->lost || !s->gpm_support || !s->gpm_alloc || !s->gpm_free ||
	    !s->gpm_sample || !s->gpm_metrics)
		return;
	memset(&sup, 0, sizeof(sup));
	sup.version = NVML_GPM_SUPPORT_VERSION;
	if (!got(rd, NC_NONE, s->gpm_support(rd->nd->h, &sup)) || !sup.isSupportedDevice)
		return;
	if (s->gpm_alloc(&g->s[0]) != NVML_SUCCESS) {
		g->s[0] = NULL;
		return;
	}
	if (s->gpm_alloc(&g->s[1]) != NVML_SUCCESS) {
		s->gpm_free(g->s[0]);
		g->s[0] = g->s[1] = NULL;
		return;
	}
	g->mg = xcalloc(1, sizeof(*g->mg));
	g->on = true;
}

static void
gpm_close(struct nvml *nv, struct nvml_dev *nd)
{
	for (unsigned i = 0; i < 2; i++)
		if (nd->gpm.s[i])
			nv->s.gpm_free(nd->gpm.s[i]);
	free(nd->gpm.mg);
	memset(&nd->gpm, 0, sizeof(nd->gpm));
}

/* The metrics between samples a and b into g->val; false when the call failed. */
static bool
gpm_compute(struct rd *rd, nvmlGpmSample_t a, nvmlGpmSample_t b)
{
	struct nvml_gpm *g = &rd->nd->gpm;
	nvmlGpmMetricsGet_t *mg = g->mg;

	memset(mg, 0, sizeof(*mg));
	mg->version = NVML_GPM_METRICS_GET_VERSION;
	mg->numMetrics = NV_GPM_NR;
	mg->sample1 = a;
	mg->sample2 = b;
	for (unsigned i = 0; i < NV_GPM_NR; i++)
		mg->metrics[i].metricId = gpm_metrics[i].id;
	g->valid = 0;
	if (!got(rd, NC_NONE, rd->nv->s.gpm_metrics(mg)))
		return false;
	for (unsigned i = 0; i < NV_GPM_NR; i++) {
		double v = mg->metrics[i].value;

		if (mg->metrics[i].nvmlReturn != NVML_SUCCESS || !isfinite(v) || v < 0 ||
		    (gpm_metrics[i].percent && v > 100.5))
			continue;
		if (gpm_metrics[i].percent && v > 100)
			v = 100; /* rounding of the two counters */
		g->val[i] = v * gpm_metrics[i].scale;
		g->valid |= 1u << i;
	}
	return true;
}

/*
 * Take a sample and publish the metrics since the previous one. The first
 * read has no previous sample: the fields stay unknown until the next one.
 */
static void
read_gpm(struct rd *rd)
{
	struct nvml_gpm *g = &rd->nd->gpm;
	unsigned next = g->cur ^ 1;
	double now;

	if (!g->on || rd->lost)
		return;
	now = clock_mono();
	if (g->t == 0 || now - g->t >= GPM_MIN_INTERVAL) {
		if (!got(rd, NC_NONE, rd->nv->s.gpm_sample(rd->nd->h, g->s[next])) ||
		    (g->t > 0 && !gpm_compute(rd, g->s[g->cur], g->s[next]))) {
			g->t = 0; /* start again from the next sample */
			g->valid = 0;
			return;
		}
		g->cur = next;
		g->t = now;
	}
	for (unsigned i = 0; i < NV_GPM_NR; i++)
		if (g->valid >> i & 1)
			dev_set(rd->dev, gpm_metrics[i].field, g->val[i]);
}

static bool
nvml_wants_window(struct backend *be)
{
	struct nvml *nv = container_of(be, struct nvml, base);

	for (unsigned i = 0; i < nv->nr_dev; i++)
		if (nv->dev[i].gpm.on)
			return true;
	return false;
}

/*
 * got() for a call whose NOT_SUPPORTED answer is remembered in a bit of our
 * own: *mask |= bit.
 */
static bool
got_bit(struct rd *rd, nvmlReturn_t r, uint32_t *mask, uint32_t bit)
{
	if (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND)
		*mask |= bit;
	return got(rd, NC_NONE, r);
}

/*
 * PCIe throughput: NVML samples the link for 20 ms in each call, 40 ms a
 * device for both directions, which a one-shot status must not pay (nor a
 * 0.5 s refresh). So not at a device's first read, and then at most every
 * PCIE_TPUT_EVERY seconds, the last answer standing in between.
 */
#define PCIE_TPUT_EVERY 2.0

static void
read_pcie_throughput(struct rd *rd)
{
	struct nvml_sym *s = &rd->nv->s;
	struct nvml_dev *nd = rd->nd;
	double now = clock_mono();
	uint32_t nosup = 0;
	unsigned tx, rx;

	if (!can(rd, s->pcie_throughput, NC_NONE) || nd->pcie_tput_nosup)
		return;
	if (!nd->pcie_next) {
		nd->pcie_next = now + PCIE_TPUT_EVERY;
		nd->pcie_tx = nd->pcie_rx = NAN;
		return;
	}
	if (now >= nd->pcie_next) {
		nd->pcie_next = now + PCIE_TPUT_EVERY;
		nd->pcie_tx = nd->pcie_rx = NAN;
		if (got_bit(rd, s->pcie_throughput(nd->h, NVML_PCIE_UTIL_TX_BYTES, &tx), &nosup,
		            1) &&
		    got_bit(rd, s->pcie_throughput(nd->h, NVML_PCIE_UTIL_RX_BYTES, &rx), &nosup,
		            1)) {
			nd->pcie_tx = (double)tx * 1024;
			nd->pcie_rx = (double)rx * 1024;
		}
		nd->pcie_tput_nosup = nosup != 0;
	}
	if (!isnan(nd->pcie_tx)) {
		dev_set(rd->dev, GF_PCIE_TX_RATE, nd->pcie_tx);
		dev_set(rd->dev, GF_PCIE_RX_RATE, nd->pcie_rx);
	}
}

/* The violation counters (ns since the driver loaded), and PCIe throughput. */
static void
read_counters(struct rd *rd)
{
	static const struct {
		nvmlPerfPolicyType_t policy;
		enum gpu_field f;
	} viol[] = {
		{ NVML_PERF_POLICY_POWER, GF_VIOL_POWER },
		{ NVML_PERF_POLICY_THERMAL, GF_VIOL_THERMAL },
		{ NVML_PERF_POLICY_SYNC_BOOST, GF_VIOL_SYNC_BOOST },
		{ NVML_PERF_POLICY_BOARD_LIMIT, GF_VIOL_BOARD_LIMIT },
		{ NVML_PERF_POLICY_LOW_UTILIZATION, GF_VIOL_LOW_UTIL },
		{ NVML_PERF_POLICY_RELIABILITY, GF_VIOL_RELIABILITY },
		{ NVML_PERF_POLICY_TOTAL_APP_CLOCKS, GF_VIOL_APP_CLOCKS },
		{ NVML_PERF_POLICY_TOTAL_BASE_CLOCKS, GF_VIOL_BASE_CLOCKS },
	};
	struct nvml_sym *s = &rd->nv->s;
	struct nvml_dev *nd = rd->nd;

	read_pcie_throughput(rd);
	for (unsigned i = 0; i < ARRAY_SIZE(viol); i++) {
		nvmlViolationTime_t vt;
		uint32_t nosup = 0;

		if (!can(rd, s->violation, NC_NONE) || (nd->viol_nosup >> i & 1))
			continue;
		memset(&vt, 0, sizeof(vt));
		if (got_bit(rd, s->violation(nd->h, viol[i].policy, &vt), &nosup, 1))
			dev_set(rd->dev, viol[i].f, (double)vt.violationTime * 1e-9);
		nd->viol_nosup |= nosup << i;
	}
}

/* An unsigned value of nvmlDeviceGetFieldValues; false when it has none. */
static bool
field_u64(const nvmlFieldValue_t *fv, uint64_t *out)
{
	if (fv->nvmlReturn != NVML_SUCCESS)
		return false;
	switch (fv->valueType) {
	case NVML_VALUE_TYPE_UNSIGNED_INT:
		*out = fv->value.uiVal;
		return true;
	case NVML_VALUE_TYPE_UNSIGNED_LONG:
		*out = fv->value.ulVal;
		return true;
	case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
		*out = fv->value.ullVal;
		return true;
	default:
		return false;
	}
}

/*
 * NVLink link by link: state, version (once), the four data-link error
 * counters, and the data sent and received (one nvmlDeviceGetFieldValues
 * call for all links); then the totals. Links NVML answers NOT_SUPPORTED or
 * INVALID_ARGUMENT for are not there and are not asked again. Per present
 * link it is 5 calls a read (some µs each on a driver), 90 on 18 links.
 */
static void
read_links(struct rd *rd)
{
	static const struct {
		nvmlNvLinkErrorCounter_t counter;
		enum nvlink_stat stat;
	} errs[] = {
		{ NVML_NVLINK_ERROR_DL_CRC_FLIT, NL_CRC_FLIT },
		{ NVML_NVLINK_ERROR_DL_CRC_DATA, NL_CRC_DATA },
		{ NVML_NVLINK_ERROR_DL_REPLAY, NL_REPLAY },
		{ NVML_NVLINK_ERROR_DL_RECOVERY, NL_RECOVERY },
	};
	static const enum gpu_field totals[NL__COUNT] = {
		[NL_TX_BYTES] = GF_NVLINK_TX_BYTES, [NL_RX_BYTES] = GF_NVLINK_RX_BYTES,
		[NL_CRC_FLIT] = GF_NVLINK_CRC_FLIT, [NL_CRC_DATA] = GF_NVLINK_CRC_DATA,
		[NL_REPLAY] = GF_NVLINK_REPLAY,     [NL_RECOVERY] = GF_NVLINK_RECOVERY,
	};
	struct nvml_sym *s = &rd->nv->s;
	struct nvml_dev *nd = rd->nd;
	struct gpu_device *d = rd->dev;
	nvmlFieldValue_t fv[2 * GPU_MAX_NVLINK];
	unsigned nr_fv = 0, active = 0;
	double sum[NL__COUNT] = { 0 };
	unsigned have = ~0u;

	memset(d->nvlink, 0, sizeof(d->nvlink));
	d->nr_nvlink = 0;
	if (!can(rd, s->nvlink_state, NC_NONE) || nd->no_nvlink)
		return;
	for (unsigned link = 0; link < GPU_MAX_NVLINK && !rd->lost; link++) {
		struct nvlink_link *l = &d->nvlink[link];
		nvmlEnableState_t on = NVML_FEATURE_DISABLED;
		uint32_t bit = (uint32_t)1 << link;
		nvmlReturn_t r;

		if (nd->link_absent & bit)
			continue;
		r = s->nvlink_state(nd->h, link, &on);
		if (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_INVALID_ARGUMENT)
			nd->link_absent |= bit;
		if (!got(rd, NC_NONE, r))
			continue;
		l->present = true;
		l->active = on == NVML_FEATURE_ENABLED;
		d->nr_nvlink = link + 1;
		active += l->active;
		if (!nd->link_version[link] && can(rd, s->nvlink_version, NC_NONE) &&
		    !(nd->link_nosup[0] & bit))
			got_bit(rd, s->nvlink_version(nd->h, link, &nd->link_version[link]),
			        &nd->link_nosup[0], bit);
		l->version = nd->link_version[link];
		for (size_t i = 0; i < ARRAY_SIZE(errs) && can(rd, s->nvlink_errors, NC_NONE) &&
		                   !(nd->link_nosup[1] & bit);
		     i++) {
			unsigned long long n;

			r = s->nvlink_errors(nd->h, link, errs[i].counter, &n);
			if (r == NVML_ERROR_NOT_SUPPORTED)
				continue; /* one counter the link lacks, not all */
			if (got_bit(rd, r, &nd->link_nosup[1], bit)) {
				l->v[errs[i].stat] = n;
				l->valid |= 1u << errs[i].stat;
			}
		}
		if (!(nd->link_nosup[2] & bit)) {
			memset(&fv[nr_fv], 0, 2 * sizeof(fv[0]));
			fv[nr_fv].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
			fv[nr_fv++].scopeId = link;
			fv[nr_fv].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
			fv[nr_fv++].scopeId = link;
		}
	}
	if (!d->nr_nvlink) {
		nd->no_nvlink = nd->link_absent == ((uint32_t)1 << GPU_MAX_NVLINK) - 1;
		return;
	}
	if (nr_fv && can(rd, s->field_values, NC_FIELDS) &&
	    got(rd, NC_FIELDS, s->field_values(nd->h, (int)nr_fv, fv))) {
		for (unsigned i = 0; i < nr_fv; i++) {
			unsigned link = fv[i].scopeId;
			enum nvlink_stat st = fv[i].fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX
			                              ? NL_TX_BYTES
			                              : NL_RX_BYTES;
			uint64_t kib;

			if (link >= GPU_MAX_NVLINK)
				continue;
			if (fv[i].nvmlReturn == NVML_ERROR_NOT_SUPPORTED)
				nd->link_nosup[2] |= (uint32_t)1 << link;
			if (!field_u64(&fv[i], &kib))
				continue;
			d->nvlink[link].v[st] = kib * 1024;
			d->nvlink[link].valid |= 1u << st;
		}
	}
	/* a total is known when every present link knows its part */
	for (unsigned link = 0; link < d->nr_nvlink; link++) {
		const struct nvlink_link *l = &d->nvlink[link];

		if (!l->present)
			continue;
		have &= l->valid;
		for (int st = 0; st < NL__COUNT; st++)
			sum[st] += (double)l->v[st];
	}
	dev_set(d, GF_NVLINK_LINKS_ACTIVE, active);
	for (int st = 0; st < NL__COUNT; st++)
		if (have >> st & 1)
			dev_set(d, totals[st], sum[st]);
}

static void
read_dynamic(struct rd *rd)
{
	struct nvml_sym *s = &rd->nv->s;
	struct gpu_device *d = rd->dev;
	nvmlUtilization_t ut;
	unsigned a, b, c;
	unsigned long long ull;
	nvmlMarginTemperature_v1_t mt;

	read_memory(rd);
	if (can(rd, s->bar1, NC_BAR1)) {
		nvmlBAR1Memory_t bar;

		if (got(rd, NC_BAR1, s->bar1(rd->nd->h, &bar))) {
			dev_set(d, GF_BAR1_TOTAL, (double)bar.bar1Total);
			dev_set(d, GF_BAR1_USED, (double)bar.bar1Used);
		}
	}
	if (can(rd, s->utilization, NC_UTIL) && got(rd, NC_UTIL, s->utilization(rd->nd->h, &ut)) &&
	    ut.gpu <= 100 && ut.memory <= 100) {
		str_copy(d->util_source, sizeof(d->util_source), "nvml");
		dev_set(d, GF_UTIL_GPU, ut.gpu);
		dev_set(d, GF_UTIL_MEM, ut.memory);
	}
	if (can(rd, s->enc_util, NC_ENC) && got(rd, NC_ENC, s->enc_util(rd->nd->h, &a, &b)) &&
	    a <= 100)
		dev_set(d, GF_UTIL_ENC, a);
	if (can(rd, s->dec_util, NC_DEC) && got(rd, NC_DEC, s->dec_util(rd->nd->h, &a, &b)) &&
	    a <= 100)
		dev_set(d, GF_UTIL_DEC, a);
	if (can(rd, s->jpg_util, NC_JPG) && got(rd, NC_JPG, s->jpg_util(rd->nd->h, &a, &b)) &&
	    a <= 100)
		dev_set(d, GF_UTIL_JPEG, a);
	if (can(rd, s->ofa_util, NC_OFA) && got(rd, NC_OFA, s->ofa_util(rd->nd->h, &a, &b)) &&
	    a <= 100)
		dev_set(d, GF_UTIL_OFA, a);
	/*
	 * The plain call is deprecated in NVML 13: its successor, with a
	 * versioned struct, first; the plain one where the successor is absent,
	 * NOT_SUPPORTED or of another struct version.
	 */
	if (can(rd, s->temperature_v, NC_TEMP_V)) {
		nvmlTemperature_v1_t tv;
		nvmlReturn_t r;

		memset(&tv, 0, sizeof(tv));
		tv.version = nvmlTemperature_v1;
		tv.sensorType = NVML_TEMPERATURE_GPU;
		r = s->temperature_v(rd->nd->h, &tv);
		if (r == NVML_ERROR_ARGUMENT_VERSION_MISMATCH)
			r = NVML_ERROR_NOT_SUPPORTED;
		if (got(rd, NC_TEMP_V, r))
			dev_set(d, GF_TEMP_GPU, tv.temperature);
	}
	if (!dev_has(d, GF_TEMP_GPU))
		RD_U(rd, temperature, NC_TEMP, GF_TEMP_GPU, 1, NVML_TEMPERATURE_GPU);
	memset(&mt, 0, sizeof(mt));
	mt.version = nvmlMarginTemperature_v1;
	if (can(rd, s->margin_temp, NC_MARGIN) &&
	    got(rd, NC_MARGIN, s->margin_temp(rd->nd->h, &mt)))
		dev_set(d, GF_TEMP_MARGIN, mt.marginTemperature);
	read_fields(rd);
	RD_U(rd, fan, NC_FAN, GF_FAN, 1);
	RD_U(rd, power_usage, NC_POWER, GF_POWER_DRAW, 1e-3);
	RD_U(rd, power_enforced, NC_POWER_ENF, GF_POWER_LIMIT, 1e-3);
	RD_U(rd, power_mgmt_limit, NC_POWER_MGMT, GF_POWER_LIMIT_SET, 1e-3);
	if (can(rd, s->energy, NC_ENERGY) && got(rd, NC_ENERGY, s->energy(rd->nd->h, &ull)))
		dev_set(d, GF_ENERGY, (double)ull * 1e-3);
	RD_U(rd, clock, NC_CLOCK_GR, GF_CLOCK_GRAPHICS, 1, NVML_CLOCK_GRAPHICS);
	RD_U(rd, clock, NC_CLOCK_SM, GF_CLOCK_SM, 1, NVML_CLOCK_SM);
	RD_U(rd, clock, NC_CLOCK_MEM, GF_CLOCK_MEM, 1, NVML_CLOCK_MEM);
	RD_U(rd, clock, NC_CLOCK_VIDEO, GF_CLOCK_VIDEO, 1, NVML_CLOCK_VIDEO);
	if (can(rd, s->pstate, NC_PSTATE) && got(rd, NC_PSTATE, s->pstate(rd->nd->h, &a)) && a < 16)
		dev_set(d, GF_PSTATE, a);
	if (can(rd, s->reasons, NC_REASONS) && got(rd, NC_REASONS, s->reasons(rd->nd->h, &ull)))
		dev_set(d, GF_CLOCK_REASONS, (double)(ull & 0xFFFFFFFFFFFFFULL));
	RD_U(rd, pcie_gen, NC_PCIE_GEN, GF_PCIE_GEN, 1);
	RD_U(rd, pcie_width, NC_PCIE_WIDTH, GF_PCIE_WIDTH, 1);
	RD_U(rd, pcie_replay, NC_PCIE_REPLAY, GF_PCIE_REPLAY, 1);
	if (can(rd, s->persistence, NC_PERSIST) &&
	    got(rd, NC_PERSIST, s->persistence(rd->nd->h, &a)))
		dev_set(d, GF_PERSISTENCE, a == NVML_FEATURE_ENABLED);
	if (can(rd, s->compute_mode, NC_COMPUTE_MODE) &&
	    got(rd, NC_COMPUTE_MODE, s->compute_mode(rd->nd->h, &a)) && a <= 3)
		dev_set(d, GF_COMPUTE_MODE, a);
	if (can(rd, s->display_mode, NC_DISPLAY_MODE) &&
	    got(rd, NC_DISPLAY_MODE, s->display_mode(rd->nd->h, &a)))
		dev_set(d, GF_DISPLAY_MODE, a == NVML_FEATURE_ENABLED);
	if (can(rd, s->display_active, NC_DISPLAY_ACTIVE) &&
	    got(rd, NC_DISPLAY_ACTIVE, s->display_active(rd->nd->h, &a)))
		dev_set(d, GF_DISPLAY_ACTIVE, a == NVML_FEATURE_ENABLED);
	if (can(rd, s->mig_mode, NC_MIG) && got(rd, NC_MIG, s->mig_mode(rd->nd->h, &a, &b))) {
		dev_set(d, GF_MIG_MODE, a == NVML_DEVICE_MIG_ENABLE);
		dev_set(d, GF_MIG_MODE_PENDING, b == NVML_DEVICE_MIG_ENABLE);
	}
	if (can(rd, s->ecc_mode, NC_ECC_MODE) &&
	    got(rd, NC_ECC_MODE, s->ecc_mode(rd->nd->h, &a, &b))) {
		dev_set(d, GF_ECC_MODE, a == NVML_FEATURE_ENABLED);
		dev_set(d, GF_ECC_MODE_PENDING, b == NVML_FEATURE_ENABLED);
	}
	read_ecc(rd);
	if (can(rd, s->encoder_stats, NC_ENC_STATS) &&
	    got(rd, NC_ENC_STATS, s->encoder_stats(rd->nd->h, &a, &b, &c))) {
		dev_set(d, GF_ENC_SESSIONS, a);
		dev_set(d, GF_ENC_FPS, b);
		dev_set(d, GF_ENC_LATENCY, c);
	}
	read_counters(rd);
	read_links(rd);
}

/*
 * A MIG device: its memory, and its utilisation should a driver give it
 * (NVIDIA's answer NOT_SUPPORTED: unknown, never 0). The rest (clocks,
 * power, temperatures) is its GPU's, and read there.
 */
static void
read_mig(struct rd *rd)
{
	struct nvml_sym *s = &rd->nv->s;
	nvmlUtilization_t ut;

	read_memory(rd);
	if (can(rd, s->utilization, NC_UTIL) && got(rd, NC_UTIL, s->utilization(rd->nd->h, &ut)) &&
	    ut.gpu <= 100 && ut.memory <= 100) {
		str_copy(rd->dev->util_source, sizeof(rd->dev->util_source), "nvml");
		dev_set(rd->dev, GF_UTIL_GPU, ut.gpu);
		dev_set(rd->dev, GF_UTIL_MEM, ut.memory);
	}
}

struct proc_gpu {
	char bus[32]; /* "00000000:18:00.0" */
	char model[96];
	char uuid[96];
	char vbios[32];
};

static int
cmp_proc_gpu(const void *a, const void *b)
{
	return strcmp(((const struct proc_gpu *)a)->bus, ((const struct proc_gpu *)b)->bus);
}

/* The value after "key:" in the kernel driver's information file. */
static void
info_value(const char *text, const char *key, char *dst, size_t size)
{
	const char *p = strstr(text, key);
	size_t n;

	if (!p)
		return;
	p += strlen(key);
	p += strspn(p, " \t");
	n = strcspn(p, "\n");
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	if (n >= size)
		n = size - 1;
	memcpy(dst, p, n);
	dst[n] = '\0';
}

/*
 * A GPU that NVML can no longer read (lost, or refusing a handle) keeps a
 * name: the kernel driver lists every GPU it bound in
 * /proc/driver/nvidia/gpus/<bus>/information. The GPUs NVML did identify
 * take their entries; when exactly as many entries are left as GPUs lack an
 * identity, they are matched in bus order, which is NVML's order.
 */
static void
identify_from_procfs(struct nvml *nv, struct gpu_snapshot *snap, size_t first)
{
	char dir[4096], rel[600];
	struct proc_gpu *v = NULL;
	size_t nr = 0, alloc = 0, left = 0, unknown = 0, k = 0;
	struct strbuf sb = STRBUF_INIT;
	struct dirent *de;
	DIR *d;

	for (size_t i = first; i < snap->nr_dev; i++)
		unknown += !snap->dev[i].pci_bus_id[0];
	if (!unknown)
		return;
	path_join(dir, sizeof(dir), nv->cfg->proc_root, "driver/nvidia/gpus");
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		struct proc_gpu *g;
		char bus[32] = "";

		if (de->d_name[0] == '.' || strlen(de->d_name) > 64)
			continue;
		snprintf(rel, sizeof(rel), "driver/nvidia/gpus/%s/information", de->d_name);
		if (file_read(nv->cfg->proc_root, rel, &sb, 4096, NULL) < 0)
			continue;
		info_value(sb.buf, "Bus Location:", bus, sizeof(bus));
		ALLOC_GROW(v, nr + 1, alloc);
		g = &v[nr];
		memset(g, 0, sizeof(*g));
		widen_bus_id(g->bus, sizeof(g->bus), bus[0] ? bus : de->d_name);
		info_value(sb.buf, "Model:", g->model, sizeof(g->model));
		info_value(sb.buf, "GPU UUID:", g->uuid, sizeof(g->uuid));
		info_value(sb.buf, "Video BIOS:", g->vbios, sizeof(g->vbios));
		/* entries of GPUs NVML identified are spoken for */
		for (size_t i = first; i < snap->nr_dev; i++)
			if (!strcasecmp(snap->dev[i].pci_bus_id, g->bus))
				g->bus[0] = '\0';
		if (g->bus[0])
			nr++;
	}
	closedir(d);
	strbuf_release(&sb);
	left = nr;
	if (left == unknown) {
		qsort(v, nr, sizeof(*v), cmp_proc_gpu);
		for (size_t i = first; i < snap->nr_dev && k < nr; i++) {
			struct gpu_device *g = &snap->dev[i];

			if (g->pci_bus_id[0])
				continue;
			str_copy(g->pci_bus_id, sizeof(g->pci_bus_id), v[k].bus);
			if (!g->name[0])
				str_copy(g->name, sizeof(g->name), v[k].model);
			if (!g->uuid[0])
				str_copy(g->uuid, sizeof(g->uuid), v[k].uuid);
			if (!g->vbios[0] && strcmp(v[k].vbios, "??.??.??.??.??"))
				str_copy(g->vbios, sizeof(g->vbios), v[k].vbios);
			k++;
		}
	}
	free(v);
}

/* "1g.10gb" of "NVIDIA H100 80GB HBM3 MIG 1g.10gb", the name of a MIG device */
static void
mig_profile(const char *name, char *dst, size_t size)
{
	const char *p = NULL;

	for (const char *q = strstr(name, " MIG "); q; q = strstr(q + 1, " MIG "))
		p = q + 5;
	str_copy(dst, size, p ? p : "");
}

/*
 * The MIG devices of the GPU at snap->dev[at] (nv->dev[pos]) when its MIG
 * mode is on, each a device of its own after it: its slots are asked in
 * order, and one without a MIG device answers NOT_FOUND. A MIG device
 * shares its GPU's bus id and identity but has its own name, UUID and
 * memory; its processes are listed by its GPU, with the instance ids.
 */
static void
scan_mig(struct nvml *nv, unsigned be_id, struct gpu_snapshot *snap, size_t at, unsigned pos,
         size_t *alloc)
{
	struct nvml_sym *s = &nv->s;
	unsigned cur = 0, pend = 0, max = 0;

	if (!s->mig_mode || !s->mig_max || !s->mig_handle ||
	    s->mig_mode(nv->dev[pos].h, &cur, &pend) != NVML_SUCCESS ||
	    cur != NVML_DEVICE_MIG_ENABLE || s->mig_max(nv->dev[pos].h, &max) != NVML_SUCCESS)
		return;
	if (max > 64)
		max = 64;
	for (unsigned k = 0; k < max; k++) {
		const struct gpu_device *g;
		nvmlDeviceAttributes_t attr;
		struct gpu_device *d;
		nvmlDevice_t h = NULL;
		struct rd rd;
		unsigned id;

		if (s->mig_handle(nv->dev[pos].h, k, &h) != NVML_SUCCESS || !h)
			continue;
		ALLOC_GROW(nv->dev, nv->nr_dev + 1, *alloc);
		memset(&nv->dev[nv->nr_dev], 0, sizeof(nv->dev[0]));
		nv->dev[nv->nr_dev].h = h;
		nv->dev[nv->nr_dev].mig = true;
		d = gpu_snapshot_add_dev(snap);
		g = &snap->dev[at];
		d->is_mig = true;
		d->mig_parent = (unsigned)at;
		d->mig_gi = d->mig_ci = NVML_INSTANCE_ID_NONE;
		d->index = k;
		d->vendor = VENDOR_NVIDIA;
		d->backend = be_id;
		d->handle = nv->nr_dev;
		str_copy(d->driver, sizeof(d->driver), g->driver);
		str_copy(d->pci_bus_id, sizeof(d->pci_bus_id), g->pci_bus_id);
		str_copy(d->brand, sizeof(d->brand), g->brand);
		str_copy(d->architecture, sizeof(d->architecture), g->architecture);
		str_copy(d->compute_cap, sizeof(d->compute_cap), g->compute_cap);
		d->pci_device_id = g->pci_device_id;
		d->pci_subsys_id = g->pci_subsys_id;
		d->pci_domain = g->pci_domain;
		d->pci_bus = g->pci_bus;
		d->pci_dev = g->pci_dev;
		d->pci_func = g->pci_func;
		d->pci_valid = g->pci_valid;
		rd.nv = nv;
		rd.nd = &nv->dev[nv->nr_dev++];
		rd.dev = d;
		rd.lost = false;
		read_string(&rd, s->name, d->name, sizeof(d->name));
		read_string(&rd, s->uuid, d->uuid, sizeof(d->uuid));
		mig_profile(d->name, d->mig_profile, sizeof(d->mig_profile));
		if (s->gpu_instance_id && s->gpu_instance_id(h, &id) == NVML_SUCCESS)
			d->mig_gi = id;
		if (s->compute_instance_id && s->compute_instance_id(h, &id) == NVML_SUCCESS)
			d->mig_ci = id;
		memset(&attr, 0, sizeof(attr));
		if (s->attributes && s->attributes(h, &attr) == NVML_SUCCESS) {
			if (attr.memorySizeMB > 0)
				rd.nd->mem_total = (double)attr.memorySizeMB * 1024 * 1024;
			if (attr.multiprocessorCount <= UINT16_MAX)
				d->mig_sm_count = (uint16_t)attr.multiprocessorCount;
		}
	}
}

static int
nvml_scan(struct backend *be, struct gpu_snapshot *snap, struct err *err)
{
	struct nvml *nv = container_of(be, struct nvml, base);
	struct nvml_sym *s = &nv->s;
	size_t alloc, first;
	unsigned count = 0;
	nvmlReturn_t r;
	int v;

	snap->simulated |= s->fake_scenario != NULL;
	str_copy(snap->nvidia.library, sizeof(snap->nvidia.library), nv->path);
	if (s->driver_version &&
	    s->driver_version(snap->nvidia.driver_version, sizeof(snap->nvidia.driver_version)) !=
	            NVML_SUCCESS)
		snap->nvidia.driver_version[0] = '\0';
	if (s->nvml_version && s->nvml_version(snap->nvidia.nvml_version,
	                                       sizeof(snap->nvidia.nvml_version)) != NVML_SUCCESS)
		snap->nvidia.nvml_version[0] = '\0';
	snap->nvidia.driver_version[sizeof(snap->nvidia.driver_version) - 1] = '\0';
	snap->nvidia.nvml_version[sizeof(snap->nvidia.nvml_version) - 1] = '\0';
	if (s->cuda_version && s->cuda_version(&v) == NVML_SUCCESS && v > 0)
		snap->nvidia.cuda_version = v;

	if (!s->count || !s->handle_by_index)
		return err_set(err, E_NODEV, "nvml: '%s' cannot enumerate devices", nv->path);
	r = s->count(&count);
	if (r != NVML_SUCCESS)
		return err_set(err, r == NVML_ERROR_NO_PERMISSION ? E_PERM : E_IO,
		               "nvml: cannot count the GPUs: %s", nv_errstr(nv, r));
	if (count > 1024)
		return err_set(err, E_IO, "nvml: implausible GPU count %u", count);
	if (!count) {
		struct strbuf why = STRBUF_INIT;

		strbuf_addstr(&why, "nvml: the NVIDIA driver is loaded but reports no GPU");
		pci_explain(nv->cfg->sysfs_root, PCI_VENDOR_NVIDIA, "NVIDIA", "nvidia", &why);
		err_set(err, E_NODEV, "%s", why.buf);
		strbuf_release(&why);
		return E_NODEV;
	}
	nv->dev = xcalloc(count ? count : 1, sizeof(*nv->dev));
	alloc = count;
	first = snap->nr_dev;
	for (unsigned i = 0; i < count; i++) {
		unsigned pos = nv->nr_dev; /* MIG devices follow their GPU */
		struct gpu_device *d;
		struct rd rd;

		ALLOC_GROW(nv->dev, pos + 1, alloc);
		memset(&nv->dev[pos], 0, sizeof(nv->dev[pos]));
		nv->nr_dev++;
		d = gpu_snapshot_add_dev(snap);
		rd.nv = nv;
		rd.nd = &nv->dev[pos];
		rd.dev = d;
		rd.lost = false;

		d->index = i;
		d->vendor = VENDOR_NVIDIA;
		d->backend = be->id;
		d->handle = pos;
		str_copy(d->driver, sizeof(d->driver), "nvidia");
		r = s->handle_by_index(i, &nv->dev[pos].h);
		if (r != NVML_SUCCESS) {
			nv->dev[pos].h = NULL;
			if (!got(&rd, NC_NONE, r)) {
				if (r == NVML_ERROR_NO_PERMISSION) {
					d->state = DEV_NO_PERMISSION;
					str_copy(
					        d->state_msg, sizeof(d->state_msg),
					        "no permission to open this GPU (check its /dev/nvidia* file and cgroup device access)");
				} else if (d->state == DEV_OK) {
					d->state = DEV_ERROR;
					snprintf(d->state_msg, sizeof(d->state_msg),
					         "cannot open this GPU: %s", nv_errstr(nv, r));
				}
			}
			continue;
		}
		read_static(&rd);
		gpm_open(&rd);
		if (rd.lost)
			gpu_device_clear_readings(d);
		else
			scan_mig(nv, be->id, snap, snap->nr_dev - 1, pos, &alloc);
	}
	identify_from_procfs(nv, snap, first);
	events_start(nv);
	return 0;
}

static int
nvml_read_device(struct backend *be, struct gpu_device *dev, struct err *err)
{
	struct nvml *nv = container_of(be, struct nvml, base);
	struct rd rd;

	(void)err;
	if (dev->handle >= nv->nr_dev || !nv->dev[dev->handle].h)
		return dev->state == DEV_LOST || dev->state == DEV_RESET_REQUIRED ? E_LOST
		                                                                  : E_NODEV;
	rd.nv = nv;
	rd.nd = &nv->dev[dev->handle];
	rd.dev = dev;
	rd.lost = dev->state == DEV_LOST || dev->state == DEV_RESET_REQUIRED;
	if (rd.nd->mig)
		read_mig(&rd);
	else
		read_dynamic(&rd);
	read_gpm(&rd);
	/* a lost GPU keeps its count: Xid 79 is how it said it was falling off the bus */
	events_copy(nv, rd.nd, dev);
	if (rd.lost) {
		/* what was read before the failing call is not to be trusted */
		gpu_device_clear_readings(dev);
		memset(dev->nvlink, 0, sizeof(dev->nvlink));
		dev->nr_nvlink = 0;
		return E_LOST;
	}
	return 0;
}

/* ---- processes ---- */

struct raw_proc {
	uint32_t pid;
	unsigned long long mem;
	uint32_t gi, ci;
};

/* Decode n entries of the given stride; false when any looks like garbage. */
static bool
decode_procs(const unsigned char *buf, unsigned n, unsigned stride, double mem_total,
             struct raw_proc *out)
{
	for (unsigned i = 0; i < n; i++) {
		const unsigned char *e = buf + (size_t)i * stride;
		unsigned int pid, gi = NVML_INSTANCE_ID_NONE, ci = NVML_INSTANCE_ID_NONE;
		unsigned long long mem;

		memcpy(&pid, e + offsetof(nvmlProcessInfo_v2_t, pid), sizeof(pid));
		memcpy(&mem, e + offsetof(nvmlProcessInfo_v2_t, usedGpuMemory), sizeof(mem));
		if (stride >= sizeof(nvmlProcessInfo_v2_t)) {
			memcpy(&gi, e + offsetof(nvmlProcessInfo_v2_t, gpuInstanceId), sizeof(gi));
			memcpy(&ci, e + offsetof(nvmlProcessInfo_v2_t, computeInstanceId),
			       sizeof(ci));
		}
		if (pid == 0 || pid > 0x3FFFFFFF)
			return false;
		if (mem != NVML_VALUE_NOT_AVAILABLE_ULL && mem_total > 0 && (double)mem > mem_total)
			return false;
		if ((gi != NVML_INSTANCE_ID_NONE && gi > 64) ||
		    (ci != NVML_INSTANCE_ID_NONE && ci > 64))
			return false;
		out[i].pid = pid;
		out[i].mem = mem;
		out[i].gi = gi;
		out[i].ci = ci;
	}
	return true;
}

/* What a failed process-list call means for the caller. */
static int
list_error(struct rd *rd, enum nv_call call, nvmlReturn_t r)
{
	if (got(rd, call, r) || r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND)
		return 0;
	if (rd->lost)
		return E_LOST;
	return r == NVML_ERROR_NO_PERMISSION ? E_PERM : E_IO;
}

/*
 * One process list with the two-call pattern. The buffer always has room for
 * entries of the largest layout any driver wrote, so a driver that writes
 * the 32-byte layout where the 24-byte one was asked for cannot overrun it;
 * the stride is then chosen by which decoding makes sense.
 */
static int
read_list(struct rd *rd, unsigned which, struct raw_proc **out, unsigned *nr)
{
	nvmlReturn_t (*fn)(nvmlDevice_t, unsigned *, void *) = rd->nv->s.procs[which];
	enum nv_call call = (enum nv_call)(NC_PROCS0 + which);
	unsigned ver = sym_version(rd->nv, offsetof(struct nvml_sym, procs[which]));
	unsigned n = 0, cap, first;
	unsigned char *buf = NULL;
	struct raw_proc *v = NULL;
	nvmlReturn_t r;
	int rc = 0;

	*out = NULL;
	*nr = 0;
	if (!can(rd, fn, call))
		return 0;
	r = fn(rd->nd->h, &n, NULL);
	if (r == NVML_SUCCESS)
		return 0;
	if (r != NVML_ERROR_INSUFFICIENT_SIZE)
		return list_error(rd, call, r);
	for (int attempt = 0; attempt < 4; attempt++) {
		if (n > 65536)
			return E_IO;
		cap = n * 2 + 8; /* slack for processes starting between the two calls */
		free(buf);
		buf = xcalloc(cap, sizeof(nvmlProcessInfoCc_t));
		n = cap;
		r = fn(rd->nd->h, &n, buf);
		if (r != NVML_ERROR_INSUFFICIENT_SIZE)
			break;
	}
	if (r != NVML_SUCCESS) {
		rc = list_error(rd, call, r);
		goto out;
	}
	if (n > cap)
		n = cap;
	v = xcalloc(n ? n : 1, sizeof(*v));
	if (ver == 2) {
		/* the plain, oldest entry point: nvmlProcessInfo_v1_t */
		rd->nd->proc_stride[which] = sizeof(nvmlProcessInfo_v1_t);
	} else if (!rd->nd->proc_stride[which]) {
		/*
		 * _v3 of drivers of the R530/R535 window wrote 32-byte entries;
		 * their tell is ConfComputeMemSizeInfo without RunningProcessDetailList.
		 */
		bool cc_era = ver == 0 && rd->nv->s.cc_mem_size_info && !rd->nv->s.detail_list;

		rd->nd->proc_stride[which] =
		        cc_era ? sizeof(nvmlProcessInfoCc_t) : sizeof(nvmlProcessInfo_v2_t);
	}
	first = rd->nd->proc_stride[which];
	if (!decode_procs(buf, n, first, rd->nd->mem_total, v)) {
		unsigned other = first == sizeof(nvmlProcessInfo_v2_t)
		                         ? sizeof(nvmlProcessInfoCc_t)
		                         : sizeof(nvmlProcessInfo_v2_t);

		if (first != sizeof(nvmlProcessInfo_v1_t) &&
		    decode_procs(buf, n, other, rd->nd->mem_total, v)) {
			rd->nd->proc_stride[which] = other;
		} else {
			/* neither layout makes sense: show nothing rather than garbage */
			rc = E_PARSE;
			n = 0;
		}
	}
	*out = v;
	*nr = n;
	v = NULL;
out:
	free(v);
	free(buf);
	return rc;
}

static struct gpu_proc *
find_proc(struct gpu_snapshot *out, size_t from, uint32_t pid)
{
	for (size_t i = from; i < out->nr_proc; i++)
		if (out->proc[i].pid == pid)
			return &out->proc[i];
	return NULL;
}

/*
 * Per-process utilisation over the last second (nvitop's window: asking only
 * for samples newer than the previous call leaves most rows empty at short
 * intervals). Samples above 100 % are driver noise and dropped.
 */
static void
read_proc_util(struct rd *rd, double now, struct gpu_snapshot *out, size_t from)
{
	struct nvml_sym *s = &rd->nv->s;
	unsigned long long since = now > 1 ? (unsigned long long)((now - 1.0) * 1e6) : 0;
	nvmlProcessUtilizationSample_t *smp = NULL;
	static const enum proc_field pf[4] = { PF_SM_UTIL, PF_MEM_UTIL, PF_ENC_UTIL, PF_DEC_UTIL };
	unsigned n = 0;
	nvmlReturn_t r;

	if (!can(rd, s->proc_util, NC_PROC_UTIL) || from == out->nr_proc)
		return;
	r = s->proc_util(rd->nd->h, NULL, &n, since);
	if (r == NVML_ERROR_INSUFFICIENT_SIZE && n > 0 && n < 65536) {
		unsigned cap = n + 16;

		smp = xcalloc(cap, sizeof(*smp));
		n = cap;
		r = s->proc_util(rd->nd->h, smp, &n, since);
		if (n > cap)
			n = cap;
	}
	if (r == NVML_ERROR_NOT_FOUND) {
		n = 0; /* no activity in the window */
		r = NVML_SUCCESS;
	}
	if (r == NVML_SUCCESS) {
		for (size_t i = from; i < out->nr_proc; i++) {
			struct gpu_proc *p = &out->proc[i];
			double sum[4] = { 0 };
			unsigned cnt[4] = { 0 }, seen = 0;

			for (unsigned k = 0; k < n; k++) {
				unsigned val[4] = { smp[k].smUtil, smp[k].memUtil, smp[k].encUtil,
					            smp[k].decUtil };

				if (smp[k].pid != p->pid || smp[k].timeStamp <= since)
					continue;
				seen++;
				for (int f = 0; f < 4; f++) {
					if (val[f] > 100)
						continue;
					sum[f] += val[f];
					cnt[f]++;
				}
			}
			/* no sample: idle all along; only garbage samples: unknown */
			for (int f = 0; f < 4; f++)
				if (cnt[f] || !seen)
					proc_set(p, pf[f], cnt[f] ? sum[f] / cnt[f] : 0);
		}
	} else {
		got(rd, NC_PROC_UTIL, r);
	}
	free(smp);
}

static int
nvml_read_procs(struct backend *be, const struct gpu_device *dev, double now,
                struct gpu_snapshot *out, struct err *err)
{
	static const unsigned type_bit[3] = { PROC_COMPUTE, PROC_GRAPHICS, PROC_MPS };
	struct nvml *nv = container_of(be, struct nvml, base);
	struct gpu_device scratch = *dev;
	size_t from = out->nr_proc;
	struct rd rd;
	int rc = 0;

	/* a MIG device's processes are in its GPU's lists, with their instance ids */
	if (dev->handle >= nv->nr_dev || !nv->dev[dev->handle].h || dev->state != DEV_OK ||
	    nv->dev[dev->handle].mig)
		return 0;
	rd.nv = nv;
	rd.nd = &nv->dev[dev->handle];
	rd.dev = &scratch;
	rd.lost = false;
	for (unsigned w = 0; w < 3; w++) {
		struct raw_proc *v;
		unsigned n;
		int lrc = read_list(&rd, w, &v, &n);

		if (lrc == E_PERM)
			err_set(err, E_PERM,
			        "nvml: no permission to list the processes on GPU %u (root can, or an administrator can relax NVIDIA's process-listing restriction)",
			        dev->index);
		else if (lrc == E_IO)
			err_set(err, E_IO, "nvml: GPU %u did not list its processes", dev->index);
		if (lrc == E_PARSE)
			err_set(err, E_PARSE,
			        "nvml: GPU %u returned a process list that makes no sense with any known layout; processes not shown",
			        dev->index);
		if (lrc == E_LOST)
			rc = E_LOST;
		for (unsigned i = 0; i < n; i++) {
			struct gpu_proc *p = find_proc(out, from, v[i].pid);

			if (!p) {
				p = gpu_snapshot_add_proc(out);
				p->pid = v[i].pid;
			}
			p->type |= type_bit[w];
			if (v[i].mem != NVML_VALUE_NOT_AVAILABLE_ULL &&
			    (!proc_has(p, PF_GPU_MEM) || (double)v[i].mem > p->v[PF_GPU_MEM]))
				proc_set(p, PF_GPU_MEM, (double)v[i].mem);
			if (v[i].gi != NVML_INSTANCE_ID_NONE)
				proc_set(p, PF_GPU_INSTANCE, v[i].gi);
			if (v[i].ci != NVML_INSTANCE_ID_NONE)
				proc_set(p, PF_COMPUTE_INSTANCE, v[i].ci);
		}
		free(v);
	}
	read_proc_util(&rd, now, out, from);
	return rc;
}

/* ---- topology ---- */

/*
 * The active NVLinks of h: whether one leads to the GPU at peer (its domain,
 * bus and device), and whether one leads to an NVSwitch. A GPU without
 * NVLink answers NOT_SUPPORTED; one with fewer links than NVML_NVLINK_MAX_LINKS
 * INVALID_ARGUMENT past its last.
 */
static int
nv_links(const struct nvml *nv, nvmlDevice_t h, const nvmlPciInfo_t *peer, bool *to_peer,
         bool *to_switch)
{
	const struct nvml_sym *s = &nv->s;

	*to_peer = *to_switch = false;
	if (!s->nvlink_state)
		return 0;
	for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; link++) {
		nvmlEnableState_t active = NVML_FEATURE_DISABLED;
		nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
		nvmlPciInfo_t pci;
		nvmlReturn_t r = s->nvlink_state(h, link, &active);

		if (r == NVML_ERROR_GPU_IS_LOST)
			return E_LOST;
		if (r != NVML_SUCCESS)
			break;
		if (active != NVML_FEATURE_ENABLED)
			continue;
		if (s->nvlink_remote_type &&
		    s->nvlink_remote_type(h, link, &type) == NVML_SUCCESS &&
		    type == NVML_NVLINK_DEVICE_TYPE_SWITCH) {
			*to_switch = true;
			continue;
		}
		memset(&pci, 0, sizeof(pci));
		if (peer && s->nvlink_remote_pci &&
		    s->nvlink_remote_pci(h, link, &pci) == NVML_SUCCESS &&
		    pci.domain == peer->domain && pci.bus == peer->bus &&
		    pci.device == peer->device)
			*to_peer = true;
	}
	return 0;
}

static int
nvml_topology(struct backend *be, const struct gpu_device *a, const struct gpu_device *b,
              int *level)
{
	struct nvml *nv = container_of(be, struct nvml, base);
	const struct nvml_sym *s = &nv->s;
	nvmlPciInfo_t pci_a, pci_b;
	bool have_a = false, have_b = false, peer_ab, peer_ba, switch_a, switch_b;
	nvmlGpuTopologyLevel_t path;
	nvmlDevice_t ha, hb;
	nvmlReturn_t r;

	if (a->handle >= nv->nr_dev || b->handle >= nv->nr_dev || nv->dev[a->handle].mig ||
	    nv->dev[b->handle].mig)
		return E_NOTSUP; /* a MIG device's links are its GPU's */
	ha = nv->dev[a->handle].h;
	hb = nv->dev[b->handle].h;
	if (!ha || !hb)
		return E_NOTSUP;
	if (s->pci_info) {
		memset(&pci_a, 0, sizeof(pci_a));
		memset(&pci_b, 0, sizeof(pci_b));
		have_a = s->pci_info(ha, &pci_a) == NVML_SUCCESS;
		have_b = s->pci_info(hb, &pci_b) == NVML_SUCCESS;
	}
	if (nv_links(nv, ha, have_b ? &pci_b : NULL, &peer_ab, &switch_a) < 0 ||
	    nv_links(nv, hb, have_a ? &pci_a : NULL, &peer_ba, &switch_b) < 0)
		return E_LOST;
	/* GPUs on NVSwitches reach each other over NVLink */
	if (peer_ab || peer_ba || (switch_a && switch_b)) {
		*level = CL_NVLINK;
		return 0;
	}
	if (!s->topo_ancestor)
		return E_NOTSUP;
	r = s->topo_ancestor(ha, hb, &path);
	if (r == NVML_ERROR_GPU_IS_LOST)
		return E_LOST;
	if (r != NVML_SUCCESS)
		return E_NOTSUP;
	switch (path) {
	case NVML_TOPOLOGY_INTERNAL:
	case NVML_TOPOLOGY_SINGLE:
	case NVML_TOPOLOGY_MULTIPLE:
		*level = CL_SWITCH;
		return 0;
	case NVML_TOPOLOGY_HOSTBRIDGE:
	case NVML_TOPOLOGY_NODE:
		*level = CL_HOSTBRIDGE;
		return 0;
	case NVML_TOPOLOGY_SYSTEM:
		*level = CL_SYSTEM;
		return 0;
	default:
		return E_NOTSUP;
	}
}

const struct backend_ops backend_nvml = {
	.name = "nvml",
	.open = nvml_open,
	.scan = nvml_scan,
	.read_device = nvml_read_device,
	.read_procs = nvml_read_procs,
	.topology = nvml_topology,
	.wants_window = nvml_wants_window,
	.close = nvml_close,
};

/* ---- doctor's probe: how the library loads and answers ---- */

/* Our name for an NVML return code, for a library without nvmlErrorString. */
static const char *
nv_code_name(int r)
{
	switch (r) {
	case NVML_ERROR_UNINITIALIZED:
		return "Uninitialized";
	case NVML_ERROR_NO_PERMISSION:
		return "Insufficient Permissions";
	case NVML_ERROR_DRIVER_NOT_LOADED:
		return "Driver Not Loaded";
	case NVML_ERROR_LIBRARY_NOT_FOUND:
		return "Library Not Found";
	case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
		return "RM has detected an NVML/RM version mismatch.";
	case NVML_ERROR_GPU_IS_LOST:
		return "GPU is lost";
	case NVML_ERROR_UNKNOWN:
		return "Unknown Error";
	default:
		return NULL;
	}
}

/*
 * src into dst whole; when it does not fit, or fills a buffer of dst's size
 * (err_set() cut it there), its "; "-separated clauses that fit (a clause per
 * GPU on the bus can run long), then "; ...": no clause is cut into
 * something it did not say.
 */
static void
copy_clauses(char *dst, size_t size, const char *src)
{
	const char *end = NULL;

	if (strlen(src) + 1 < size) {
		str_copy(dst, size, src);
		return;
	}
	for (const char *q = strstr(src, "; "); q && (size_t)(q - src) + 6 <= size;
	     q = strstr(q + 2, "; "))
		end = q;
	if (size < 6) {
		if (size)
			dst[0] = '\0';
		return;
	}
	if (!end)
		end = src + size - 6; /* one clause longer than dst: cut it, and say so */
	memcpy(dst, src, (size_t)(end - src));
	memcpy(dst + (end - src), "; ...", 6);
}

void
nvml_probe(const struct gs_config *cfg, struct nvml_probe *p)
{
	struct nvml *nv = xcalloc(1, sizeof(*nv));
	struct err err = ERR_INIT;
	nvmlReturn_t r;

	memset(p, 0, sizeof(*p));
	p->init_rc = -1;
	kernel_module_version(cfg, p->module_version, sizeof(p->module_version));
	nv->cfg = cfg;
	if (load_library(nv, &err) < 0) {
		copy_clauses(p->load_error, sizeof(p->load_error), err.msg);
		goto out;
	}
	str_copy(p->library, sizeof(p->library), nv->path);
	library_version(nv->path, p->library_version, sizeof(p->library_version));
	resolve(nv);
	if (!nv->s.init) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addf(&sb, "'%s' has no nvmlInit: it is not an NVML library", nv->path);
		str_copy(p->load_error, sizeof(p->load_error), sb.buf);
		strbuf_release(&sb);
		goto out;
	}
	p->loaded = true;
	r = nv->s.init();
	p->init_rc = (int)r;
	if (r != NVML_SUCCESS) {
		const char *s = nv->s.error_string ? nv->s.error_string(r) : NULL;

		if (!s || !*s)
			s = nv_code_name((int)r);
		if (s)
			str_copy(p->init_error, sizeof(p->init_error), s);
		else
			snprintf(p->init_error, sizeof(p->init_error), "NVML error %d", (int)r);
		goto out;
	}
	if (nv->s.driver_version &&
	    nv->s.driver_version(p->driver_version, sizeof(p->driver_version)) != NVML_SUCCESS)
		p->driver_version[0] = '\0';
	if (nv->s.nvml_version &&
	    nv->s.nvml_version(p->nvml_version, sizeof(p->nvml_version)) != NVML_SUCCESS)
		p->nvml_version[0] = '\0';
	if (nv->s.cuda_version) {
		int v = 0;

		if (nv->s.cuda_version(&v) == NVML_SUCCESS && v > 0)
			p->cuda_version = v;
	}
	if (nv->s.shutdown && !shutdown_bounded(nv->s.shutdown, cfg->timeout))
		nv->dl = NULL; /* still in use by the thread in nvmlShutdown */
out:
	if (nv->dl)
		dlclose(nv->dl);
	free(nv);
}
