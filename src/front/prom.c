/*
 * The Prometheus text format (0.0.4) of a snapshot; docs/metrics.md lists
 * every metric. Families are written one after the other, each with its
 * # HELP and # TYPE lines first and then the samples of every GPU, so a
 * family is never split. A family with no sample at all is left out.
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

/* How each device field is exported: its name after "gpuscope_gpu_" and the factor to base units.
 */
struct prom_field {
	const char *name;
	double scale;
};

static const struct prom_field prom_fields[GF__COUNT] = {
	[GF_MEM_TOTAL] = { "memory_total_bytes", 1 },
	[GF_MEM_RESERVED] = { "memory_reserved_bytes", 1 },
	[GF_MEM_USED] = { "memory_used_bytes", 1 },
	[GF_MEM_FREE] = { "memory_free_bytes", 1 },
	[GF_BAR1_TOTAL] = { "bar1_total_bytes", 1 },
	[GF_BAR1_USED] = { "bar1_used_bytes", 1 },
	[GF_MEM_VISIBLE_TOTAL] = { "memory_visible_total_bytes", 1 },
	[GF_MEM_VISIBLE_USED] = { "memory_visible_used_bytes", 1 },
	[GF_GTT_TOTAL] = { "gtt_total_bytes", 1 },
	[GF_GTT_USED] = { "gtt_used_bytes", 1 },
	[GF_UTIL_GPU] = { "utilization_gpu_ratio", 0.01 },
	[GF_UTIL_MEM] = { "utilization_memory_ratio", 0.01 },
	[GF_UTIL_ENC] = { "utilization_encoder_ratio", 0.01 },
	[GF_UTIL_DEC] = { "utilization_decoder_ratio", 0.01 },
	[GF_UTIL_JPEG] = { "utilization_jpeg_ratio", 0.01 },
	[GF_UTIL_OFA] = { "utilization_ofa_ratio", 0.01 },
	[GF_TEMP_GPU] = { "temperature_gpu_celsius", 1 },
	[GF_TEMP_MEM] = { "temperature_memory_celsius", 1 },
	[GF_TEMP_HOTSPOT] = { "temperature_hotspot_celsius", 1 },
	[GF_TEMP_MARGIN] = { "temperature_margin_celsius", 1 },
	[GF_TEMP_SLOWDOWN] = { "temperature_slowdown_celsius", 1 },
	[GF_TEMP_SHUTDOWN] = { "temperature_shutdown_celsius", 1 },
	[GF_TEMP_GPU_MAX] = { "temperature_gpu_max_celsius", 1 },
	[GF_TEMP_MEM_MAX] = { "temperature_memory_max_celsius", 1 },
	[GF_FAN] = { "fan_speed_ratio", 0.01 },
	[GF_FAN_RPM] = { "fan_speed_rpm", 1 },
	[GF_POWER_DRAW] = { "power_draw_watts", 1 },
	[GF_POWER_INSTANT] = { "power_draw_instant_watts", 1 },
	[GF_POWER_AVERAGE] = { "power_draw_average_watts", 1 },
	[GF_POWER_LIMIT] = { "power_limit_watts", 1 },
	[GF_POWER_LIMIT_SET] = { "power_management_limit_watts", 1 },
	[GF_POWER_LIMIT_DEFAULT] = { "power_default_limit_watts", 1 },
	[GF_POWER_LIMIT_MIN] = { "power_min_limit_watts", 1 },
	[GF_POWER_LIMIT_MAX] = { "power_max_limit_watts", 1 },
	[GF_ENERGY] = { "energy_joules_total", 1 },
	[GF_CLOCK_GRAPHICS] = { "clock_graphics_hertz", 1e6 },
	[GF_CLOCK_GRAPHICS_REQ] = { "clock_graphics_requested_hertz", 1e6 },
	[GF_CLOCK_SM] = { "clock_sm_hertz", 1e6 },
	[GF_CLOCK_MEM] = { "clock_memory_hertz", 1e6 },
	[GF_CLOCK_VIDEO] = { "clock_video_hertz", 1e6 },
	[GF_CLOCK_MAX_GRAPHICS] = { "clock_graphics_max_hertz", 1e6 },
	[GF_CLOCK_MAX_SM] = { "clock_sm_max_hertz", 1e6 },
	[GF_CLOCK_MAX_MEM] = { "clock_memory_max_hertz", 1e6 },
	[GF_CLOCK_MAX_VIDEO] = { "clock_video_max_hertz", 1e6 },
	[GF_PSTATE] = { "performance_state", 1 },
	/* GF_CLOCK_REASONS*: gpuscope_gpu_throttle_reason{reason=...}, below */
	[GF_PCIE_GEN] = { "pcie_link_gen", 1 },
	[GF_PCIE_GEN_MAX] = { "pcie_link_gen_max", 1 },
	[GF_PCIE_GEN_DEV_MAX] = { "pcie_link_gen_device_max", 1 },
	[GF_PCIE_WIDTH] = { "pcie_link_width", 1 },
	[GF_PCIE_WIDTH_MAX] = { "pcie_link_width_max", 1 },
	[GF_PCIE_REPLAY] = { "pcie_replay_total", 1 },
	[GF_PERSISTENCE] = { "persistence_mode", 1 },
	/* GF_COMPUTE_MODE: gpuscope_gpu_compute_mode{mode=...}, below */
	[GF_MIG_MODE] = { "mig_mode", 1 },
	[GF_MIG_MODE_PENDING] = { "mig_mode_pending", 1 },
	[GF_DISPLAY_MODE] = { "display_mode", 1 },
	[GF_DISPLAY_ACTIVE] = { "display_active", 1 },
	[GF_ECC_MODE] = { "ecc_mode", 1 },
	[GF_ECC_MODE_PENDING] = { "ecc_mode_pending", 1 },
	[GF_ECC_CORR_VOLATILE] = { "ecc_errors_corrected_volatile_total", 1 },
	[GF_ECC_UNCORR_VOLATILE] = { "ecc_errors_uncorrected_volatile_total", 1 },
	[GF_ECC_CORR_AGGREGATE] = { "ecc_errors_corrected_aggregate_total", 1 },
	[GF_ECC_UNCORR_AGGREGATE] = { "ecc_errors_uncorrected_aggregate_total", 1 },
	[GF_RETIRED_SBE] = { "retired_pages_single_bit_total", 1 },
	[GF_RETIRED_DBE] = { "retired_pages_double_bit_total", 1 },
	[GF_RETIRED_PENDING] = { "retired_pages_pending", 1 },
	[GF_REMAP_CORR] = { "remapped_rows_correctable_total", 1 },
	[GF_REMAP_UNCORR] = { "remapped_rows_uncorrectable_total", 1 },
	[GF_REMAP_PENDING] = { "remapped_rows_pending", 1 },
	[GF_REMAP_FAILURE] = { "remapped_rows_failure", 1 },
	[GF_ENC_SESSIONS] = { "encoder_sessions", 1 },
	[GF_ENC_FPS] = { "encoder_average_fps", 1 },
	[GF_ENC_LATENCY] = { "encoder_average_latency_seconds", 1e-6 },
	[GF_RAS_CORR] = { "ras_errors_corrected_total", 1 },
	[GF_RAS_UNCORR] = { "ras_errors_uncorrected_total", 1 },
	[GF_VOLTAGE_GFX] = { "voltage_graphics_volts", 1e-3 },
	[GF_PCIE_TX_RATE] = { "pcie_tx_bytes_per_second", 1 },
	[GF_PCIE_RX_RATE] = { "pcie_rx_bytes_per_second", 1 },
	[GF_VIOL_POWER] = { "violation_power_seconds_total", 1 },
	[GF_VIOL_THERMAL] = { "violation_thermal_seconds_total", 1 },
	[GF_VIOL_SYNC_BOOST] = { "violation_sync_boost_seconds_total", 1 },
	[GF_VIOL_BOARD_LIMIT] = { "violation_board_limit_seconds_total", 1 },
	[GF_VIOL_LOW_UTIL] = { "violation_low_utilization_seconds_total", 1 },
	[GF_VIOL_RELIABILITY] = { "violation_reliability_seconds_total", 1 },
	[GF_VIOL_APP_CLOCKS] = { "violation_app_clocks_seconds_total", 1 },
	[GF_VIOL_BASE_CLOCKS] = { "violation_base_clocks_seconds_total", 1 },
	[GF_NVLINK_LINKS_ACTIVE] = { "nvlink_links_active", 1 },
	[GF_NVLINK_TX_BYTES] = { "nvlink_tx_bytes_total", 1 },
	[GF_NVLINK_RX_BYTES] = { "nvlink_rx_bytes_total", 1 },
	[GF_NVLINK_CRC_FLIT] = { "nvlink_crc_flit_errors_total", 1 },
	[GF_NVLINK_CRC_DATA] = { "nvlink_crc_data_errors_total", 1 },
	[GF_NVLINK_REPLAY] = { "nvlink_replay_errors_total", 1 },
	[GF_NVLINK_RECOVERY] = { "nvlink_recovery_errors_total", 1 },
	[GF_PROF_GR_ACTIVE] = { "prof_graphics_active_ratio", 0.01 },
	[GF_PROF_SM_ACTIVE] = { "prof_sm_active_ratio", 0.01 },
	[GF_PROF_SM_OCCUPANCY] = { "prof_sm_occupancy_ratio", 0.01 },
	[GF_PROF_TENSOR_ACTIVE] = { "prof_tensor_active_ratio", 0.01 },
	[GF_PROF_DRAM_ACTIVE] = { "prof_dram_active_ratio", 0.01 },
	[GF_PROF_FP64_ACTIVE] = { "prof_fp64_active_ratio", 0.01 },
	[GF_PROF_FP32_ACTIVE] = { "prof_fp32_active_ratio", 0.01 },
	[GF_PROF_FP16_ACTIVE] = { "prof_fp16_active_ratio", 0.01 },
	[GF_PROF_PCIE_TX_RATE] = { "prof_pcie_tx_bytes_per_second", 1 },
	[GF_PROF_PCIE_RX_RATE] = { "prof_pcie_rx_bytes_per_second", 1 },
	[GF_PROF_NVLINK_TX_RATE] = { "prof_nvlink_tx_bytes_per_second", 1 },
	[GF_PROF_NVLINK_RX_RATE] = { "prof_nvlink_rx_bytes_per_second", 1 },
};

/* One metric family being written: its header goes out before its first sample. */
struct fam {
	struct strbuf *sb;
	const char *prefix; /* "gpuscope_gpu_", or "" */
	const char *name;
	const char *type; /* "gauge", "counter" */
	const char *help;
	const char *help2; /* appended to help, or NULL */
	bool om;           /* OpenMetrics */
	bool started;
	bool label_open; /* a sample's "{" is written */
};

static void
help_text(struct strbuf *sb, const char *s, bool om)
{
	for (; *s; s++) {
		if (*s == '\\')
			strbuf_addstr(sb, "\\\\");
		else if (*s == '"' && om)
			strbuf_addstr(sb, "\\\"");
		else if (*s == '\n')
			strbuf_addstr(sb, "\\n");
		else
			strbuf_addch(sb, *s);
	}
}

void
prom_label_value(struct strbuf *sb, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\')
			strbuf_addstr(sb, "\\\\");
		else if (*v == '"')
			strbuf_addstr(sb, "\\\"");
		else if (*v == '\n')
			strbuf_addstr(sb, "\\n");
		else
			strbuf_addch(sb, *v);
	}
}

/* Start a sample of f: the family's header if this is its first, then the name. */
static void
sample_begin(struct fam *f)
{
	if (!f->started) {
		size_t len = strlen(f->name);

		/* OpenMetrics names a counter's family without the "_total" of its samples */
		if (f->om && !strcmp(f->type, "counter") && len > 6 &&
		    !strcmp(f->name + len - 6, "_total"))
			len -= 6;
		strbuf_addf(f->sb, "# HELP %s%.*s ", f->prefix, (int)len, f->name);
		help_text(f->sb, f->help, f->om);
		if (f->help2)
			help_text(f->sb, f->help2, f->om);
		strbuf_addf(f->sb, "\n# TYPE %s%.*s %s\n", f->prefix, (int)len, f->name, f->type);
		f->started = true;
	}
	strbuf_addf(f->sb, "%s%s", f->prefix, f->name);
	f->label_open = false;
}

/* Add a label to the sample begun; an unknown (NULL or empty) value is left out. */
static void
label(struct fam *f, const char *name, const char *value)
{
	if (!value || !*value)
		return;
	strbuf_addch(f->sb, f->label_open ? ',' : '{');
	f->label_open = true;
	strbuf_addf(f->sb, "%s=\"", name);
	prom_label_value(f->sb, value);
	strbuf_addch(f->sb, '"');
}

static void
sample_end(struct fam *f, double v)
{
	char buf[64];

	if (f->label_open)
		strbuf_addch(f->sb, '}');
	if (isnan(v))
		str_copy(buf, sizeof(buf), "NaN");
	else if (isinf(v))
		str_copy(buf, sizeof(buf), v > 0 ? "+Inf" : "-Inf");
	else
		snprintf(buf, sizeof(buf), "%.15g", v == 0 ? 0 : v); /* no "-0" */
	strbuf_addf(f->sb, " %s\n", buf);
}

/*
 * The labels of a MIG device's own instance (after its GPU's): which GPU
 * instance, compute instance and profile, and its own MIG UUID.
 */
static void
mig_labels(struct fam *f, const struct gpu_device *d)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%u", d->mig_gi);
	label(f, "mig_instance", buf);
	snprintf(buf, sizeof(buf), "%u", d->mig_ci);
	label(f, "mig_compute_instance", buf);
	label(f, "mig_profile", d->mig_profile);
	label(f, "mig_uuid", d->uuid);
}

/*
 * The labels of every series of device d of s. A MIG device is named as its
 * GPU is (gpu, uuid, ... are the GPU's, as dcgm-exporter does), then by its
 * instance.
 */
static void
gpu_labels(struct fam *f, const struct gpu_snapshot *s, const struct gpu_device *d)
{
	const struct gpu_device *g = gpu_snapshot_gpu_of(s, d);
	char idx[16];

	snprintf(idx, sizeof(idx), "%u", g->index);
	label(f, "gpu", idx);
	label(f, "uuid", g->uuid);
	label(f, "pci_bus_id", g->pci_bus_id);
	label(f, "name", g->name);
	label(f, "vendor", g->vendor == VENDOR_UNKNOWN ? NULL : vendor_key(g->vendor));
	label(f, "driver", g->driver);
	if (d->is_mig)
		mig_labels(f, d);
}

/* Where an exposition is written, and in which of the two formats. */
struct prom_out {
	struct strbuf *sb;
	bool om; /* OpenMetrics */
};

static struct fam
fam_init(const struct prom_out *out, const char *prefix, const char *name, const char *type,
         const char *help)
{
	struct fam f = { out->sb, prefix, name, type, help, NULL, out->om, false, false };

	return f;
}

/* How many of s's devices are GPUs (not MIG devices). */
static size_t
whole_gpus(const struct gpu_snapshot *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nr_dev; i++)
		n += !s->dev[i].is_mig;
	return n;
}

/* Only a GPU that answered has readings. */
static bool
readable(const struct gpu_device *d)
{
	return d->state == DEV_OK;
}

static void
write_identity(const struct prom_out *out, const struct gpu_snapshot *s)
{
	struct fam f;

	f = fam_init(out, "gpuscope_gpu_", "info", "gauge",
	             "identity of a GPU; always 1, the labels carry the information");
	for (size_t i = 0; i < s->nr_dev; i++) {
		const struct gpu_device *d = &s->dev[i];

		sample_begin(&f);
		gpu_labels(&f, s, d);
		label(&f, "serial", d->serial);
		label(&f, "vbios", d->vbios);
		label(&f, "inforom", d->inforom);
		label(&f, "brand", d->brand);
		label(&f, "architecture", d->architecture);
		label(&f, "compute_capability", d->compute_cap);
		if (d->vendor == VENDOR_NVIDIA)
			label(&f, "driver_version", s->nvidia.driver_version);
		sample_end(&f, 1);
	}

	f = fam_init(out, "gpuscope_gpu_", "up", "gauge",
	             "1 when the GPU answered and its readings are current, else 0");
	for (size_t i = 0; i < s->nr_dev; i++) {
		sample_begin(&f);
		gpu_labels(&f, s, &s->dev[i]);
		sample_end(&f, readable(&s->dev[i]) ? 1 : 0);
	}

	f = fam_init(out, "gpuscope_gpu_", "state", "gauge",
	             "1 for a GPU that is not ok, with the reason in the state label");
	for (size_t i = 0; i < s->nr_dev; i++) {
		if (s->dev[i].state == DEV_OK)
			continue;
		sample_begin(&f);
		gpu_labels(&f, s, &s->dev[i]);
		label(&f, "state", dev_state_key(s->dev[i].state));
		sample_end(&f, 1);
	}
}

static void
write_field(const struct prom_out *out, const struct gpu_snapshot *s, enum gpu_field g)
{
	const struct field_info *fi = field_info(g);
	const struct prom_field *pf = &prom_fields[g];
	struct fam f;

	if (!pf->name)
		return;
	f = fam_init(out, "gpuscope_gpu_", pf->name, fi->kind == FK_COUNTER ? "counter" : "gauge",
	             fi->help);
	if (fi->kind == FK_BOOL)
		f.help2 = " (1 yes, 0 no)";
	for (size_t i = 0; i < s->nr_dev; i++) {
		const struct gpu_device *d = &s->dev[i];

		if (!readable(d) || !dev_has(d, g) || !isfinite(d->v[g]))
			continue;
		sample_begin(&f);
		gpu_labels(&f, s, d);
		sample_end(&f, fi->kind == FK_BOOL ? (d->v[g] != 0) : d->v[g] * pf->scale);
	}
}

static void
write_clock_reasons(const struct prom_out *out, const struct gpu_snapshot *s)
{
	unsigned nr;
	const struct flag_name *fl = clock_reason_names(&nr);
	struct fam f = fam_init(
	        out, "gpuscope_gpu_", "throttle_reason", "gauge",
	        "1 when this reason holds the clocks below their maximum now, else 0; only the "
	        "reasons the GPU can report");

	for (size_t i = 0; i < s->nr_dev; i++) {
		const struct gpu_device *d = &s->dev[i];
		uint64_t now, supported;

		if (!readable(d) || !dev_has(d, GF_CLOCK_REASONS))
			continue;
		now = (uint64_t)d->v[GF_CLOCK_REASONS];
		/* without the supported mask, the reasons the GPU says are on are all we know */
		supported = dev_has(d, GF_CLOCK_REASONS_SUPPORTED)
		                    ? (uint64_t)d->v[GF_CLOCK_REASONS_SUPPORTED]
		                    : now;
		for (unsigned r = 0; r < nr; r++) {
			if (!(supported & fl[r].bit))
				continue;
			sample_begin(&f);
			gpu_labels(&f, s, d);
			label(&f, "reason", fl[r].key);
			sample_end(&f, (now & fl[r].bit) ? 1 : 0);
		}
	}
}

static void
write_compute_mode(const struct prom_out *out, const struct gpu_snapshot *s)
{
	struct fam f = fam_init(out, "gpuscope_gpu_", "compute_mode", "gauge",
	                        "who may create CUDA contexts; 1 for the current mode");

	for (size_t i = 0; i < s->nr_dev; i++) {
		const struct gpu_device *d = &s->dev[i];
		const char *key;

		if (!readable(d) || !dev_has(d, GF_COMPUTE_MODE))
			continue;
		key = compute_mode_key(d->v[GF_COMPUTE_MODE]);
		if (!key)
			continue;
		sample_begin(&f);
		gpu_labels(&f, s, d);
		label(&f, "mode", key);
		sample_end(&f, 1);
	}
}

/* Order of processes: most GPU memory first; those without a known amount last; then by pid. */
static int
proc_cmp(const void *a, const void *b)
{
	const struct gpu_proc *p = *(const struct gpu_proc *const *)a;
	const struct gpu_proc *q = *(const struct gpu_proc *const *)b;
	bool hp = proc_has(p, PF_GPU_MEM), hq = proc_has(q, PF_GPU_MEM);

	if (hp != hq)
		return hp ? -1 : 1;
	if (hp && p->v[PF_GPU_MEM] != q->v[PF_GPU_MEM])
		return p->v[PF_GPU_MEM] > q->v[PF_GPU_MEM] ? -1 : 1;
	if (p->pid != q->pid)
		return p->pid < q->pid ? -1 : 1;
	return p->dev < q->dev ? -1 : p->dev > q->dev;
}

static void
proc_labels(struct fam *f, const struct gpu_snapshot *s, const struct gpu_proc *p)
{
	char buf[16];

	if (p->dev < s->nr_dev) {
		const struct gpu_device *d = &s->dev[p->dev], *g = gpu_snapshot_gpu_of(s, d);

		snprintf(buf, sizeof(buf), "%u", g->index);
		label(f, "gpu", buf);
		label(f, "uuid", g->uuid);
		if (d->is_mig)
			mig_labels(f, d);
	}
	snprintf(buf, sizeof(buf), "%u", (unsigned)p->pid);
	label(f, "pid", buf);
	label(f, "user", p->user);
	label(f, "command", p->name);
	label(f, "container", p->container);
}

static void
write_procs(const struct prom_out *out, const struct gpu_snapshot *s, unsigned max)
{
	const struct gpu_proc **top;
	size_t nr = 0;
	struct fam f;

	if (!max || !s->nr_proc)
		return;
	top = xcalloc(s->nr_proc, sizeof(*top));
	for (size_t i = 0; i < s->nr_proc; i++)
		top[i] = &s->proc[i];
	qsort(top, s->nr_proc, sizeof(*top), proc_cmp);
	/* keep the first of each (GPU, pid): one series per process and GPU */
	for (size_t i = 0; i < s->nr_proc && nr < max; i++) {
		bool dup = false;

		for (size_t j = 0; j < nr && !dup; j++)
			dup = top[j]->dev == top[i]->dev && top[j]->pid == top[i]->pid;
		if (!dup)
			top[nr++] = top[i];
	}

	f = fam_init(out, "", "gpuscope_process_gpu_memory_bytes", "gauge",
	             "GPU memory used by a process (the top processes by GPU memory only)");
	for (size_t i = 0; i < nr; i++) {
		if (!proc_has(top[i], PF_GPU_MEM) || !isfinite(top[i]->v[PF_GPU_MEM]))
			continue;
		sample_begin(&f);
		proc_labels(&f, s, top[i]);
		sample_end(&f, top[i]->v[PF_GPU_MEM]);
	}
	f = fam_init(out, "", "gpuscope_process_sm_utilization_ratio", "gauge",
	             "share of the last second in which a kernel of the process ran "
	             "(the top processes by GPU memory only)");
	for (size_t i = 0; i < nr; i++) {
		if (!proc_has(top[i], PF_SM_UTIL) || !isfinite(top[i]->v[PF_SM_UTIL]))
			continue;
		sample_begin(&f);
		proc_labels(&f, s, top[i]);
		sample_end(&f, top[i]->v[PF_SM_UTIL] / 100);
	}
	free(top);
}

/*
 * Who uses a GPU, in scheduler terms: a Slurm job, or a Kubernetes pod and
 * container. Processes of one job or container on one GPU are one group, so
 * that short-lived pids do not make short-lived series.
 */
struct prom_group {
	unsigned dev;
	const char *job;            /* Slurm job, or NULL */
	const char *ns, *pod, *ctr; /* Kubernetes, or NULL */
	const char *source;         /* "process", "pod-resources" */
	double mem;                 /* GPU memory of its processes that have a known amount */
	bool has_mem;
	unsigned procs;
};

static bool
group_str_eq(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/* Find or add the group of (dev, job, ns, pod, ctr) in g[0 .. *nr). */
static struct prom_group *
group_get(struct prom_group *g, size_t *nr, unsigned dev, const char *job, const char *ns,
          const char *pod, const char *ctr)
{
	for (size_t i = 0; i < *nr; i++)
		if (g[i].dev == dev && group_str_eq(g[i].job, job) && group_str_eq(g[i].ns, ns) &&
		    group_str_eq(g[i].pod, pod) && group_str_eq(g[i].ctr, ctr))
			return &g[i];
	g[*nr] = (struct prom_group){ dev, job, ns, pod, ctr, "process", 0, false, 0 };
	return &g[(*nr)++];
}

/* Whether an earlier entry of s->proc is the same process on the same GPU. */
static bool
proc_seen(const struct gpu_snapshot *s, size_t k)
{
	for (size_t j = 0; j < k; j++)
		if (s->proc[j].dev == s->proc[k].dev && s->proc[j].pid == s->proc[k].pid)
			return true;
	return false;
}

static void
group_add(struct prom_group *g, const struct gpu_proc *p)
{
	g->procs++;
	if (proc_has(p, PF_GPU_MEM) && isfinite(p->v[PF_GPU_MEM])) {
		g->mem += p->v[PF_GPU_MEM];
		g->has_mem = true;
	}
}

static void
group_labels(struct fam *f, const struct gpu_snapshot *s, const struct prom_group *g)
{
	const struct gpu_device *d = &s->dev[g->dev], *gpu = gpu_snapshot_gpu_of(s, d);
	char idx[16];

	snprintf(idx, sizeof(idx), "%u", gpu->index);
	label(f, "gpu", idx);
	label(f, "uuid", gpu->uuid);
	if (d->is_mig)
		mig_labels(f, d);
	label(f, "hpc_job", g->job);
	label(f, "namespace", g->ns);
	label(f, "pod", g->pod);
	label(f, "container", g->ctr);
}

/*
 * gpuscope_gpu_allocation: the jobs and pods on each GPU (from its processes,
 * or, when none of them names a pod, from the kubelet's allocation); and the
 * GPU memory and process count of each job and each pod container per GPU.
 */
static void
write_attribution(const struct prom_out *out, const struct gpu_snapshot *s)
{
	struct prom_group *jobs, *pods, *alloc;
	size_t nr_jobs = 0, nr_pods = 0, nr_alloc = 0;
	struct fam f;

	jobs = xcalloc(s->nr_proc + 1, sizeof(*jobs));
	pods = xcalloc(s->nr_proc + 1, sizeof(*pods));
	alloc = xcalloc(s->nr_proc + s->nr_dev + 1, sizeof(*alloc));
	for (size_t k = 0; k < s->nr_proc; k++) {
		const struct gpu_proc *p = &s->proc[k];
		bool job = p->slurm_job && *p->slurm_job, pod = p->pod_name && *p->pod_name;

		if (p->dev >= s->nr_dev || (!job && !pod) || proc_seen(s, k))
			continue;
		if (job)
			group_add(group_get(jobs, &nr_jobs, p->dev, p->slurm_job, NULL, NULL, NULL),
			          p);
		if (pod)
			group_add(group_get(pods, &nr_pods, p->dev, NULL, p->pod_namespace,
			                    p->pod_name, p->container_name),
			          p);
		group_get(alloc, &nr_alloc, p->dev, job ? p->slurm_job : NULL,
		          pod ? p->pod_namespace : NULL, pod ? p->pod_name : NULL,
		          pod ? p->container_name : NULL);
	}
	for (unsigned i = 0; i < s->nr_dev; i++) {
		const struct gpu_device *d = &s->dev[i];
		bool pod_seen = false;

		for (size_t k = 0; k < nr_alloc && !pod_seen; k++)
			pod_seen = alloc[k].dev == i && alloc[k].pod;
		if (!pod_seen && d->alloc_pod[0])
			group_get(alloc, &nr_alloc, i, NULL, d->alloc_namespace, d->alloc_pod,
			          d->alloc_container[0] ? d->alloc_container : NULL)
			        ->source = "pod-resources";
	}

	f = fam_init(out, "gpuscope_gpu_", "allocation", "gauge",
	             "a Slurm job or Kubernetes pod container that uses the GPU (source "
	             "\"process\": one of its processes runs there; \"pod-resources\": the "
	             "kubelet allocated the GPU to it); always 1");
	for (size_t k = 0; k < nr_alloc; k++) {
		sample_begin(&f);
		group_labels(&f, s, &alloc[k]);
		label(&f, "source", alloc[k].source);
		sample_end(&f, 1);
	}
	f = fam_init(out, "", "gpuscope_job_gpu_memory_bytes", "gauge",
	             "GPU memory used by the processes of a Slurm job on the GPU");
	for (size_t k = 0; k < nr_jobs; k++) {
		if (!jobs[k].has_mem)
			continue;
		sample_begin(&f);
		group_labels(&f, s, &jobs[k]);
		sample_end(&f, jobs[k].mem);
	}
	f = fam_init(out, "", "gpuscope_job_gpu_processes", "gauge",
	             "processes of a Slurm job on the GPU");
	for (size_t k = 0; k < nr_jobs; k++) {
		sample_begin(&f);
		group_labels(&f, s, &jobs[k]);
		sample_end(&f, jobs[k].procs);
	}
	f = fam_init(out, "", "gpuscope_pod_gpu_memory_bytes", "gauge",
	             "GPU memory used by the processes of a Kubernetes pod's container on the GPU");
	for (size_t k = 0; k < nr_pods; k++) {
		if (!pods[k].has_mem)
			continue;
		sample_begin(&f);
		group_labels(&f, s, &pods[k]);
		sample_end(&f, pods[k].mem);
	}
	f = fam_init(out, "", "gpuscope_pod_gpu_processes", "gauge",
	             "processes of a Kubernetes pod's container on the GPU");
	for (size_t k = 0; k < nr_pods; k++) {
		sample_begin(&f);
		group_labels(&f, s, &pods[k]);
		sample_end(&f, pods[k].procs);
	}
	free(alloc);
	free(pods);
	free(jobs);
}

/* Xid errors by code, on the GPUs whose backend listens for them (NVML events). */
static void
write_xid(const struct prom_out *out, const struct gpu_snapshot *s)
{
	struct fam f = fam_init(out, "gpuscope_gpu_", "xid_errors_total", "counter",
	                        "NVIDIA Xid errors reported by the driver since the exporter "
	                        "started, by Xid code");
	char code[16];

	for (size_t i = 0; i < s->nr_dev; i++) {
		const struct gpu_device *d = &s->dev[i];

		if (!d->xid_watched)
			continue;
		for (unsigned k = 0; k < d->nr_xid && k < GPU_MAX_XID; k++) {
			sample_begin(&f);
			gpu_labels(&f, s, d);
			snprintf(code, sizeof(code), "%u", (unsigned)d->xid[k].xid);
			label(&f, "xid", code);
			sample_end(&f, (double)d->xid[k].count);
		}
	}
}

/*
 * NVLink link by link, with a `link` label: up, the data sent and received,
 * and the error counters with a `type` label (the totals are fields).
 */
static void
write_nvlink_links(const struct prom_out *out, const struct gpu_snapshot *s)
{
	static const struct {
		enum nvlink_stat st;
		const char *type; /* NULL: a family of its own */
		const char *name, *help;
	} series[] = {
		{ NL_TX_BYTES, NULL, "nvlink_link_tx_bytes_total",
		  "data sent over this NVLink link since the driver loaded, bytes" },
		{ NL_RX_BYTES, NULL, "nvlink_link_rx_bytes_total",
		  "data received over this NVLink link since the driver loaded, bytes" },
		{ NL_CRC_FLIT, "crc_flit", NULL, NULL },
		{ NL_CRC_DATA, "crc_data", NULL, NULL },
		{ NL_REPLAY, "replay", NULL, NULL },
		{ NL_RECOVERY, "recovery", NULL, NULL },
	};
	struct fam up = fam_init(out, "gpuscope_gpu_", "nvlink_link_up", "gauge",
	                         "1 when this NVLink link is up, else 0");
	struct fam errs = fam_init(out, "gpuscope_gpu_", "nvlink_link_errors_total", "counter",
	                           "NVLink data-link errors of this link since the driver loaded, "
	                           "by type: crc_flit and crc_data (received with a bad CRC), "
	                           "replay (sent again), recovery (link retrained)");
	char link[16];

	for (size_t k = 0; k <= ARRAY_SIZE(series); k++) {
		struct fam f = k < ARRAY_SIZE(series) && !series[k].type
		                       ? fam_init(out, "gpuscope_gpu_", series[k].name, "counter",
		                                  series[k].help)
		                       : up;

		for (size_t i = 0; i < s->nr_dev; i++) {
			const struct gpu_device *d = &s->dev[i];

			if (!readable(d))
				continue;
			for (unsigned n = 0; n < d->nr_nvlink && n < GPU_MAX_NVLINK; n++) {
				const struct nvlink_link *l = &d->nvlink[n];
				struct fam *to = k == ARRAY_SIZE(series) ? &up
				                 : series[k].type        ? &errs
				                                         : &f;

				if (!l->present)
					continue;
				if (k < ARRAY_SIZE(series) && !(l->valid >> series[k].st & 1))
					continue;
				snprintf(link, sizeof(link), "%u", n);
				sample_begin(to);
				gpu_labels(to, s, d);
				label(to, "link", link);
				if (k == ARRAY_SIZE(series)) {
					sample_end(to, l->active);
					continue;
				}
				label(to, "type", series[k].type);
				sample_end(to, (double)l->v[series[k].st]);
			}
		}
	}
}

static void
write_findings(const struct prom_out *out, const struct prom_opts *o)
{
	struct fam f = fam_init(out, "", "gpuscope_finding", "gauge",
	                        "doctor's current findings: how many have this id and severity "
	                        "('gpuscope doctor --explain ID' explains one)");

	for (size_t i = 0; i < o->nr_findings; i++) {
		sample_begin(&f);
		label(&f, "id", o->findings[i].id);
		label(&f, "severity", o->findings[i].severity);
		sample_end(&f, o->findings[i].count);
	}
	if (!f.started) { /* none: the family is still there, so that alerts see "no finding" */
		strbuf_addstr(out->sb, "# HELP gpuscope_finding ");
		help_text(out->sb, f.help, f.om);
		strbuf_addstr(out->sb, "\n# TYPE gpuscope_finding gauge\n");
	}
}

void
prom_write(struct strbuf *sb, const struct gpu_snapshot *s, const struct prom_opts *o)
{
	struct prom_out po = { sb, o && o->openmetrics };
	const struct prom_out *out = &po;
	struct fam f;

	f = fam_init(out, "", "gpuscope_build_info", "gauge",
	             "the gpuscope that exports these metrics; always 1");
	sample_begin(&f);
	label(&f, "version", GPUSCOPE_VERSION);
	sample_end(&f, 1);
	f = fam_init(out, "", "gpuscope_gpus", "gauge",
	             "GPUs found, whatever their state (MIG devices not counted)");
	sample_begin(&f);
	sample_end(&f, (double)whole_gpus(s));
	write_identity(out, s);
	for (int g = 0; g < GF__COUNT; g++) {
		if (g == GF_CLOCK_REASONS)
			write_clock_reasons(out, s);
		else if (g == GF_COMPUTE_MODE)
			write_compute_mode(out, s);
		else
			write_field(out, s, (enum gpu_field)g);
	}
	write_xid(out, s);
	write_nvlink_links(out, s);
	write_procs(out, s, o ? o->max_procs : 0);
	write_attribution(out, s);
	if (o && o->findings_known)
		write_findings(out, o);

	if (o && isfinite(o->collect_seconds)) {
		f = fam_init(out, "", "gpuscope_collect_duration_seconds", "gauge",
		             "how long the exporter's last collection took");
		sample_begin(&f);
		sample_end(&f, o->collect_seconds);
	}
	f = fam_init(out, "", "gpuscope_collect_errors_total", "counter",
	             "collections that failed since the exporter started");
	sample_begin(&f);
	sample_end(&f, o ? (double)o->collect_errors : 0);
	if (out->om)
		strbuf_addstr(sb, "# EOF\n");
}
