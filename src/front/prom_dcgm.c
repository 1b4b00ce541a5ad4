/*
 * `gpuscope serve --names dcgm`: the counters of NVIDIA dcgm-exporter's
 * etc/default-counters.csv (and the commented-out ones of it that gpuscope
 * can read), under dcgm-exporter's names, Prometheus types, units and
 * labels, so that its Grafana dashboards and alerts work unchanged, on any
 * vendor where the meaning holds. docs/metrics.md maps every counter.
 *
 * dcgm-exporter's labels on every GPU series: gpu, UUID, pci_bus_id, device
 * ("nvidia0"), modelName, GPU_I_PROFILE and GPU_I_ID (MIG instances only),
 * Hostname, DCGM_FI_DRIVER_VERSION; then, when something is known to run on
 * or be allocated to the GPU, container/namespace/pod (Kubernetes) and
 * hpc_job (Slurm). A GPU shared by two jobs or pods has its series once per
 * job or pod, as dcgm-exporter does.
 */
#include "front/prom.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fields.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#define MIB        (1024.0 * 1024.0)
#define NO_FIELD   GF__COUNT
#define DCGM_XID   (GF__COUNT + 1) /* the last Xid code, not a field */
#define MAX_ATTRIB 16              /* jobs/pods per GPU given series of their own */

/* One dcgm-exporter counter: which model field gives it (else the fallback) and the factor. */
struct dcgm_counter {
	const char *name;
	const char *type; /* "gauge", "counter" */
	const char *help; /* dcgm-exporter's */
	unsigned field, fallback;
	double scale; /* model unit -> DCGM unit */
};

/* In default-counters.csv's order; its commented-out counters follow the default ones. */
static const struct dcgm_counter dcgm_counters[] = {
	{ "DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", GF_CLOCK_SM,
	  GF_CLOCK_GRAPHICS, 1 },
	{ "DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", GF_CLOCK_MEM,
	  NO_FIELD, 1 },
	{ "DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", GF_TEMP_MEM, NO_FIELD,
	  1 },
	{ "DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", GF_TEMP_GPU, NO_FIELD, 1 },
	{ "DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", GF_POWER_DRAW, GF_POWER_AVERAGE,
	  1 },
	{ "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
	  "Total energy consumption since boot (in mJ).", GF_ENERGY, NO_FIELD, 1000 },
	{ "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.",
	  GF_PCIE_REPLAY, NO_FIELD, 1 },
	{ "DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", GF_UTIL_GPU, NO_FIELD, 1 },
	{ "DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", GF_UTIL_MEM, NO_FIELD,
	  1 },
	{ "DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %).", GF_UTIL_ENC, NO_FIELD,
	  1 },
	{ "DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %).", GF_UTIL_DEC, NO_FIELD,
	  1 },
	{ "DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.", DCGM_XID,
	  NO_FIELD, 1 },
	{ "DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", GF_MEM_FREE,
	  NO_FIELD, 1 / MIB },
	{ "DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", GF_MEM_USED,
	  NO_FIELD, 1 / MIB },
	{ "DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB).",
	  GF_MEM_RESERVED, NO_FIELD, 1 / MIB },
	{ "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter",
	  "Number of remapped rows for uncorrectable errors", GF_REMAP_UNCORR, NO_FIELD, 1 },
	{ "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter",
	  "Number of remapped rows for correctable errors", GF_REMAP_CORR, NO_FIELD, 1 },
	{ "DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed",
	  GF_REMAP_FAILURE, NO_FIELD, 1 },
	{ "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active.",
	  GF_PROF_GR_ACTIVE, NO_FIELD, 0.01 },
	{ "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge",
	  "Ratio of cycles the tensor (HMMA) pipe is active.", GF_PROF_TENSOR_ACTIVE, NO_FIELD,
	  0.01 },
	{ "DCGM_FI_PROF_DRAM_ACTIVE", "gauge",
	  "Ratio of cycles the device memory interface is active sending or receiving data.",
	  GF_PROF_DRAM_ACTIVE, NO_FIELD, 0.01 },
	{ "DCGM_FI_PROF_PCIE_TX_BYTES", "gauge",
	  "The rate of data transmitted over the PCIe bus - including both protocol headers and "
	  "data payloads - in bytes per second.",
	  GF_PROF_PCIE_TX_RATE, GF_PCIE_TX_RATE, 1 },
	{ "DCGM_FI_PROF_PCIE_RX_BYTES", "gauge",
	  "The rate of data received over the PCIe bus - including both protocol headers and data "
	  "payloads - in bytes per second.",
	  GF_PROF_PCIE_RX_RATE, GF_PCIE_RX_RATE, 1 },
	/* commented out in default-counters.csv; exported all the same when known */
	{ "DCGM_FI_DEV_POWER_VIOLATION", "counter",
	  "Throttling duration due to power constraints (in ns).", GF_VIOL_POWER, NO_FIELD, 1e9 },
	{ "DCGM_FI_DEV_THERMAL_VIOLATION", "counter",
	  "Throttling duration due to thermal constraints (in ns).", GF_VIOL_THERMAL, NO_FIELD,
	  1e9 },
	{ "DCGM_FI_DEV_SYNC_BOOST_VIOLATION", "counter",
	  "Throttling duration due to sync-boost constraints (in ns).", GF_VIOL_SYNC_BOOST,
	  NO_FIELD, 1e9 },
	{ "DCGM_FI_DEV_BOARD_LIMIT_VIOLATION", "counter",
	  "Throttling duration due to board limit constraints (in ns).", GF_VIOL_BOARD_LIMIT,
	  NO_FIELD, 1e9 },
	{ "DCGM_FI_DEV_LOW_UTIL_VIOLATION", "counter",
	  "Throttling duration due to low utilization (in ns).", GF_VIOL_LOW_UTIL, NO_FIELD, 1e9 },
	{ "DCGM_FI_DEV_RELIABILITY_VIOLATION", "counter",
	  "Throttling duration due to reliability constraints (in ns).", GF_VIOL_RELIABILITY,
	  NO_FIELD, 1e9 },
	{ "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter",
	  "Total number of single-bit volatile ECC errors.", GF_ECC_CORR_VOLATILE, GF_RAS_CORR, 1 },
	{ "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter",
	  "Total number of double-bit volatile ECC errors.", GF_ECC_UNCORR_VOLATILE, GF_RAS_UNCORR,
	  1 },
	{ "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "counter",
	  "Total number of single-bit persistent ECC errors.", GF_ECC_CORR_AGGREGATE, NO_FIELD, 1 },
	{ "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "counter",
	  "Total number of double-bit persistent ECC errors.", GF_ECC_UNCORR_AGGREGATE, NO_FIELD,
	  1 },
	{ "DCGM_FI_DEV_RETIRED_SBE", "counter",
	  "Total number of retired pages due to single-bit errors.", GF_RETIRED_SBE, NO_FIELD, 1 },
	{ "DCGM_FI_DEV_RETIRED_DBE", "counter",
	  "Total number of retired pages due to double-bit errors.", GF_RETIRED_DBE, NO_FIELD, 1 },
	{ "DCGM_FI_DEV_RETIRED_PENDING", "counter", "Total number of pages pending retirement.",
	  GF_RETIRED_PENDING, NO_FIELD, 1 },
	{ "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter",
	  "Total number of NVLink flow-control CRC errors.", GF_NVLINK_CRC_FLIT, NO_FIELD, 1 },
	{ "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "counter",
	  "Total number of NVLink data CRC errors.", GF_NVLINK_CRC_DATA, NO_FIELD, 1 },
	{ "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter",
	  "Total number of NVLink retries.", GF_NVLINK_REPLAY, NO_FIELD, 1 },
	{ "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "counter",
	  "Total number of NVLink recovery errors.", GF_NVLINK_RECOVERY, NO_FIELD, 1 },
	{ "DCGM_FI_PROF_SM_ACTIVE", "gauge",
	  "The ratio of cycles an SM has at least 1 warp assigned.", GF_PROF_SM_ACTIVE, NO_FIELD,
	  0.01 },
	{ "DCGM_FI_PROF_SM_OCCUPANCY", "gauge", "The ratio of number of warps resident on an SM.",
	  GF_PROF_SM_OCCUPANCY, NO_FIELD, 0.01 },
	{ "DCGM_FI_PROF_PIPE_FP64_ACTIVE", "gauge", "Ratio of cycles the fp64 pipes are active.",
	  GF_PROF_FP64_ACTIVE, NO_FIELD, 0.01 },
	{ "DCGM_FI_PROF_PIPE_FP32_ACTIVE", "gauge", "Ratio of cycles the fp32 pipes are active.",
	  GF_PROF_FP32_ACTIVE, NO_FIELD, 0.01 },
	{ "DCGM_FI_PROF_PIPE_FP16_ACTIVE", "gauge", "Ratio of cycles the fp16 pipes are active.",
	  GF_PROF_FP16_ACTIVE, NO_FIELD, 0.01 },
	{ "DCGM_FI_PROF_NVLINK_TX_BYTES", "gauge",
	  "The rate of data transmitted over NVLink, not including protocol headers, in bytes "
	  "per second.",
	  GF_PROF_NVLINK_TX_RATE, NO_FIELD, 1 },
	{ "DCGM_FI_PROF_NVLINK_RX_BYTES", "gauge",
	  "The rate of data received over NVLink, not including protocol headers, in bytes per "
	  "second.",
	  GF_PROF_NVLINK_RX_RATE, NO_FIELD, 1 },
};

/* Who a GPU's series are labelled with: one Slurm job and/or Kubernetes container. */
struct dcgm_attrib {
	const char *job, *ns, *pod, *ctr;
};

static bool
str_same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

static bool
attrib_same(const struct dcgm_attrib *a, const struct dcgm_attrib *b)
{
	return str_same(a->job, b->job) && str_same(a->ns, b->ns) && str_same(a->pod, b->pod) &&
	       str_same(a->ctr, b->ctr);
}

static bool
nonempty(const char *s)
{
	return s && *s;
}

/*
 * The jobs and pods of the processes on dev[i], in the order first seen;
 * when no process names a pod, the pod the kubelet allocated the GPU to.
 * Returns how many (0: no attribution, the series go out unlabelled).
 */
static unsigned
gpu_attribs(const struct gpu_snapshot *s, size_t i, struct dcgm_attrib *out)
{
	const struct gpu_device *d = &s->dev[i];
	unsigned nr = 0;
	bool pod_seen = false;

	for (size_t k = 0; k < s->nr_proc && nr < MAX_ATTRIB; k++) {
		const struct gpu_proc *p = &s->proc[k];
		struct dcgm_attrib a = { p->slurm_job, NULL, NULL, NULL };
		bool dup = false;

		if (p->dev != i)
			continue;
		if (nonempty(p->pod_name)) {
			a.ns = p->pod_namespace;
			a.pod = p->pod_name;
			a.ctr = p->container_name;
			pod_seen = true;
		}
		if (!nonempty(a.job) && !nonempty(a.pod))
			continue;
		for (unsigned j = 0; j < nr && !dup; j++)
			dup = attrib_same(&out[j], &a);
		if (!dup)
			out[nr++] = a;
	}
	if (!pod_seen && nr < MAX_ATTRIB && d->alloc_pod[0]) {
		struct dcgm_attrib a = { NULL, d->alloc_namespace, d->alloc_pod,
			                 d->alloc_container };

		out[nr++] = a;
	}
	return nr;
}

static void
add_label(struct strbuf *sb, bool *open, const char *name, const char *value)
{
	if (!nonempty(value))
		return;
	strbuf_addch(sb, *open ? ',' : '{');
	*open = true;
	strbuf_addf(sb, "%s=\"", name);
	prom_label_value(sb, value);
	strbuf_addch(sb, '"');
}

/* The labels of dev[i] (a MIG device is labelled with its parent GPU and its instance). */
static void
gpu_labels(struct strbuf *sb, const struct gpu_snapshot *s, size_t i, const struct dcgm_attrib *a)
{
	const struct gpu_device *d = &s->dev[i];
	const struct gpu_device *g = gpu_snapshot_gpu_of(s, d);
	char idx[16], dev[24], gi[16];
	bool open = false;

	snprintf(idx, sizeof(idx), "%u", g->index);
	if (g->vendor == VENDOR_NVIDIA)
		snprintf(dev, sizeof(dev), "nvidia%u", g->index);
	else
		str_copy(dev, sizeof(dev), g->card);
	add_label(sb, &open, "gpu", idx);
	add_label(sb, &open, "UUID", g->uuid);
	add_label(sb, &open, "pci_bus_id", g->pci_bus_id);
	add_label(sb, &open, "device", dev);
	add_label(sb, &open, "modelName", g->name);
	if (d->is_mig) {
		snprintf(gi, sizeof(gi), "%u", d->mig_gi);
		add_label(sb, &open, "GPU_I_PROFILE", d->mig_profile);
		add_label(sb, &open, "GPU_I_ID", gi);
	}
	add_label(sb, &open, "Hostname", s->hostname);
	if (g->vendor == VENDOR_NVIDIA)
		add_label(sb, &open, "DCGM_FI_DRIVER_VERSION", s->nvidia.driver_version);
	if (a) {
		add_label(sb, &open, "container", a->ctr);
		add_label(sb, &open, "namespace", a->ns);
		add_label(sb, &open, "pod", a->pod);
		add_label(sb, &open, "hpc_job", a->job);
	}
	if (open)
		strbuf_addch(sb, '}');
}

/* The value of counter c on d, in DCGM's unit; false when unknown. */
static bool
counter_value(const struct dcgm_counter *c, const struct gpu_device *d, double *v)
{
	unsigned f = c->field;

	if (d->state != DEV_OK)
		return false;
	if (f == DCGM_XID) {
		if (!d->xid_watched)
			return false;
		/* the code of the newest Xid; DCGM's 0 is "no Xid yet" */
		*v = d->xid_last;
		return true;
	}
	if (!dev_has(d, (enum gpu_field)f) || !isfinite(d->v[f])) {
		f = c->fallback;
		if (f == NO_FIELD || !dev_has(d, (enum gpu_field)f) || !isfinite(d->v[f]))
			return false;
	}
	if (field_info((enum gpu_field)f)->kind == FK_BOOL)
		*v = d->v[f] != 0;
	else
		*v = d->v[f] * c->scale;
	return true;
}

static void
write_value(struct strbuf *sb, double v)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.15g", v == 0 ? 0 : v);
	strbuf_addf(sb, " %s\n", buf);
}

void
prom_write_dcgm(struct strbuf *sb, const struct gpu_snapshot *s)
{
	struct dcgm_attrib(*attr)[MAX_ATTRIB];
	unsigned *nr_attr;

	if (!s->nr_dev)
		return;
	attr = xcalloc(s->nr_dev, sizeof(*attr));
	nr_attr = xcalloc(s->nr_dev, sizeof(*nr_attr));
	for (size_t i = 0; i < s->nr_dev; i++)
		nr_attr[i] = gpu_attribs(s, i, attr[i]);

	for (size_t c = 0; c < sizeof(dcgm_counters) / sizeof(dcgm_counters[0]); c++) {
		const struct dcgm_counter *dc = &dcgm_counters[c];
		bool started = false;

		for (size_t i = 0; i < s->nr_dev; i++) {
			double v;

			if (!counter_value(dc, &s->dev[i], &v))
				continue;
			if (!started) {
				strbuf_addf(sb, "# HELP %s %s\n# TYPE %s %s\n", dc->name, dc->help,
				            dc->name, dc->type);
				started = true;
			}
			for (unsigned k = 0; k < (nr_attr[i] ? nr_attr[i] : 1); k++) {
				strbuf_addstr(sb, dc->name);
				gpu_labels(sb, s, i, nr_attr[i] ? &attr[i][k] : NULL);
				write_value(sb, v);
			}
		}
	}
	free(nr_attr);
	free(attr);
}
