/*
 * The status document in JSON: numbers as numbers, units in key names,
 * null for anything that could not be read.
 */
#include "core/json.h"
#include "front/json.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/fields.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "core/specs.h"

/* A small writer that tracks commas and indentation. */
struct jw {
	struct strbuf *sb;
	bool pretty;
	int depth;
	bool first; /* no member written yet at this depth */
};

static void
jw_newline(struct jw *w)
{
	if (!w->pretty)
		return;
	strbuf_addch(w->sb, '\n');
	strbuf_addchars(w->sb, ' ', (size_t)w->depth * 2);
}

/*
 * The comma, newline and indentation before a member, and its key when key
 * is set. A key is one of our own member names (a literal here, or the
 * fields table's, which t_json checks): plain ASCII with nothing to escape,
 * so it is copied as it is, all of it in one step (a document has thousands).
 */
static void
jw_key(struct jw *w, const char *key)
{
	struct strbuf *sb = w->sb;
	size_t klen = key ? strlen(key) : 0;
	size_t indent = w->pretty ? (size_t)w->depth * 2 : 0;
	/* ',' '\n' indent '"' key '"' ':' ' ' */
	size_t need = 2 + indent + klen + 4;
	char *q;

	if (!sb->alloc || sb->alloc - sb->len <= need)
		strbuf_grow(sb, need);
	q = sb->buf + sb->len;
	if (!w->first)
		*q++ = ',';
	w->first = false;
	if (w->pretty) {
		*q++ = '\n';
		for (size_t i = 0; i < indent; i++)
			*q++ = ' ';
	}
	if (key) {
		*q++ = '"';
		memcpy(q, key, klen);
		q += klen;
		*q++ = '"';
		*q++ = ':';
		if (w->pretty)
			*q++ = ' ';
	}
	*q = '\0';
	sb->len = (size_t)(q - sb->buf);
}

static void
jw_open(struct jw *w, const char *key, char brace)
{
	jw_key(w, key);
	strbuf_addch(w->sb, brace);
	w->depth++;
	w->first = true;
}

static void
jw_close(struct jw *w, char brace)
{
	bool empty = w->first;

	w->depth--;
	if (!empty)
		jw_newline(w);
	strbuf_addch(w->sb, brace);
	w->first = false;
}

static void
jw_string(struct jw *w, const char *key, const char *s)
{
	jw_key(w, key);
	if (s && *s)
		json_str(w->sb, s);
	else
		strbuf_addstr(w->sb, "null");
}

static void
jw_number(struct jw *w, const char *key, bool known, double v, int decimals)
{
	jw_key(w, key);
	if (known)
		json_num(w->sb, v, decimals);
	else
		strbuf_addstr(w->sb, "null");
}

static void
jw_bool(struct jw *w, const char *key, bool known, bool v)
{
	jw_key(w, key);
	strbuf_addstr(w->sb, !known ? "null" : v ? "true" : "false");
}

static void
jw_reasons(struct jw *w, const char *key, const struct gpu_device *d, enum gpu_field f)
{
	const struct flag_name *names;
	unsigned nr;
	uint64_t mask;
	bool first = true;

	jw_key(w, key);
	if (!dev_has(d, f)) {
		strbuf_addstr(w->sb, "null");
		return;
	}
	mask = (uint64_t)d->v[f];
	names = clock_reason_names(&nr);
	strbuf_addch(w->sb, '[');
	for (unsigned i = 0; i < nr; i++) {
		if (!(mask & names[i].bit))
			continue;
		if (!first)
			strbuf_addstr(w->sb, w->pretty ? ", " : ",");
		first = false;
		json_str(w->sb, names[i].key);
	}
	strbuf_addch(w->sb, ']');
}

static void
iso_time(char *buf, size_t size, double t)
{
	time_t s = (time_t)floor(t);
	struct tm tm;
	char base[32];

	gmtime_r(&s, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%03dZ", base, (int)((t - floor(t)) * 1000) % 1000);
}

/* [{"name": "gfx", "utilization_percent": 12.5}, ...]; null when the driver reports none */
static void
write_engines(struct jw *w, const struct engine_use *e, unsigned nr)
{
	if (!nr) {
		jw_string(w, "engines", NULL);
		return;
	}
	jw_open(w, "engines", '[');
	for (unsigned i = 0; i < nr; i++) {
		jw_open(w, NULL, '{');
		jw_string(w, "name", e[i].name);
		jw_number(w, "utilization_percent", !isnan(e[i].percent), e[i].percent, 1);
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

/* {"mhz": [500, 2254], "current": 1}; null when the driver has no levels */
static void
write_levels(struct jw *w, const char *key, const struct clock_levels *lv)
{
	if (!lv->nr) {
		jw_string(w, key, NULL);
		return;
	}
	jw_open(w, key, '{');
	jw_key(w, "mhz");
	strbuf_addch(w->sb, '[');
	for (unsigned i = 0; i < lv->nr; i++) {
		if (i)
			strbuf_addstr(w->sb, w->pretty ? ", " : ",");
		json_num(w->sb, lv->mhz[i], 0);
	}
	strbuf_addch(w->sb, ']');
	jw_number(w, "current", lv->current >= 0, lv->current, 0);
	jw_close(w, '}');
}

/* [{"xid": 13, "count": 2}, ...] in the order first seen; null when Xid errors are not watched */
static void
write_xid(struct jw *w, const struct gpu_device *d)
{
	if (!d->xid_watched) {
		jw_string(w, "xid_errors", NULL);
		return;
	}
	jw_open(w, "xid_errors", '[');
	for (unsigned i = 0; i < d->nr_xid && i < GPU_MAX_XID; i++) {
		jw_open(w, NULL, '{');
		jw_number(w, "xid", true, d->xid[i].xid, 0);
		jw_number(w, "count", true, (double)d->xid[i].count, 0);
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

/* {"namespace", "pod", "container"} the kubelet allocated d to (backend/podres.c), or null */
/*
 * [{"link": 0, "active": true, "version": 6, "tx_bytes": ...}, ...]: the links
 * NVML answered for; null without NVLink
 */
static void
write_nvlink(struct jw *w, const struct gpu_device *d)
{
	static const char *const keys[NL__COUNT] = {
		[NL_TX_BYTES] = "tx_bytes",        [NL_RX_BYTES] = "rx_bytes",
		[NL_CRC_FLIT] = "crc_flit_errors", [NL_CRC_DATA] = "crc_data_errors",
		[NL_REPLAY] = "replay_errors",     [NL_RECOVERY] = "recovery_errors",
	};

	if (!d->nr_nvlink) {
		jw_string(w, "nvlink", NULL);
		return;
	}
	jw_open(w, "nvlink", '[');
	for (unsigned i = 0; i < d->nr_nvlink && i < GPU_MAX_NVLINK; i++) {
		const struct nvlink_link *l = &d->nvlink[i];

		if (!l->present)
			continue;
		jw_open(w, NULL, '{');
		jw_number(w, "link", true, i, 0);
		jw_bool(w, "active", true, l->active);
		jw_number(w, "version", l->version != 0, l->version, 0);
		for (int st = 0; st < NL__COUNT; st++)
			jw_number(w, keys[st], l->valid >> st & 1, (double)l->v[st], 0);
		jw_close(w, '}');
	}
	jw_close(w, ']');
}

static void
write_alloc(struct jw *w, const struct gpu_device *d)
{
	if (!d->alloc_pod[0]) {
		jw_string(w, "allocated_to", NULL);
		return;
	}
	jw_open(w, "allocated_to", '{');
	jw_string(w, "namespace", d->alloc_namespace);
	jw_string(w, "pod", d->alloc_pod);
	jw_string(w, "container", d->alloc_container);
	jw_close(w, '}');
}

/*
 * Of a MIG device: its GPU (index), instance ids and profile; null for a
 * whole GPU. index is then the MIG device's index within that GPU.
 */
static void
write_mig(struct jw *w, const struct gpu_device *d, const struct gpu_device *parent)
{
	if (!d->is_mig) {
		jw_string(w, "mig", NULL);
		return;
	}
	jw_open(w, "mig", '{');
	jw_number(w, "parent", parent != NULL, parent ? parent->index : 0, 0);
	jw_number(w, "gpu_instance", d->mig_gi != UINT_MAX, d->mig_gi, 0);
	jw_number(w, "compute_instance", d->mig_ci != UINT_MAX, d->mig_ci, 0);
	jw_string(w, "profile", d->mig_profile);
	jw_number(w, "sm_count", d->mig_sm_count != 0, d->mig_sm_count, 0);
	jw_close(w, '}');
}

/* What the spec sheet says of d (core/specs.h: the table `gpuscope specs` prints), or null. */
static void
write_spec(struct jw *w, const struct gpu_device *d)
{
	const struct gpu_spec *g = gpu_spec_match(d);
	static const struct {
		const char *key;
		size_t off;
	} rates[] = {
		{ "fp64_tflops", offsetof(struct gpu_spec, fp64) },
		{ "fp32_tflops", offsetof(struct gpu_spec, fp32) },
		{ "tf32_tflops", offsetof(struct gpu_spec, tf32) },
		{ "fp16_tflops", offsetof(struct gpu_spec, fp16) },
		{ "bf16_tflops", offsetof(struct gpu_spec, bf16) },
		{ "fp8_tflops", offsetof(struct gpu_spec, fp8) },
		{ "int8_tops", offsetof(struct gpu_spec, int8) },
	};

	if (!g) {
		jw_string(w, "spec", NULL);
		return;
	}
	jw_open(w, "spec", '{');
	jw_string(w, "name", g->name);
	jw_number(w, "memory_bandwidth_gb_per_s", !isnan(g->mem_bw_gbs), g->mem_bw_gbs, 0);
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		double v = *(const double *)(const void *)((const char *)g + rates[i].off);

		jw_number(w, rates[i].key, !isnan(v), v, 1);
	}
	jw_number(w, "tdp_watts", !isnan(g->tdp_w), g->tdp_w, 0);
	jw_string(w, "source", g->source);
	jw_close(w, '}');
}

/* The members of a device's object, without its braces. */
static void
write_device_members(struct jw *w, const struct gpu_snapshot *snap, const struct gpu_device *d)
{
	char buf[32];

	jw_number(w, "index", true, d->index, 0);
	jw_string(w, "vendor", vendor_key(d->vendor));
	jw_string(w, "state", dev_state_key(d->state));
	jw_string(w, "state_message", d->state == DEV_OK ? NULL : d->state_msg);
	jw_string(w, "name", d->name);
	jw_string(w, "uuid", d->uuid);
	jw_string(w, "serial", d->serial);
	jw_string(w, "pci_bus_id", d->pci_bus_id);
	snprintf(buf, sizeof(buf), "0x%08X", d->pci_device_id);
	jw_string(w, "pci_device_id", d->pci_valid ? buf : NULL);
	snprintf(buf, sizeof(buf), "0x%08X", d->pci_subsys_id);
	jw_string(w, "pci_subsystem_id", d->pci_valid ? buf : NULL);
	jw_string(w, "driver", d->driver);
	jw_string(w, "vbios_version", d->vbios);
	jw_string(w, "inforom_image_version", d->inforom);
	jw_string(w, "board_part_number", d->board_part);
	jw_string(w, "brand", d->brand);
	jw_string(w, "architecture", d->architecture);
	jw_string(w, "compute_capability", d->compute_cap);
	jw_string(w, "memory_source", d->mem_source);
	jw_string(w, "card", d->card);
	jw_string(w, "unique_id", d->unique_id);
	jw_string(w, "utilization_source", d->util_source);
	jw_string(w, "utilization_note", d->util_note);
	jw_string(w, "clock_event_reasons_detail", d->throttle_detail);
	write_engines(w, d->engine, d->nr_engine);
	write_levels(w, "clock_graphics_levels_mhz", &d->levels_gfx);
	write_levels(w, "clock_memory_levels_mhz", &d->levels_mem);
	/* a MIG device has a share of its GPU, not the sheet's figures */
	if (d->is_mig)
		jw_string(w, "spec", NULL);
	else
		write_spec(w, d);
	write_mig(w, d, d->is_mig ? gpu_snapshot_gpu_of(snap, d) : NULL);
	write_xid(w, d);
	write_nvlink(w, d);
	write_alloc(w, d);
	for (int f = 0; f < GF__COUNT; f++) {
		const struct field_info *fi = field_info((enum gpu_field)f);

		switch (fi->kind) {
		case FK_BOOL:
			jw_bool(w, fi->key, dev_has(d, (enum gpu_field)f), d->v[f] != 0);
			break;
		case FK_BITMASK:
			jw_reasons(w, fi->key, d, (enum gpu_field)f);
			break;
		case FK_ENUM:
			if (f == GF_PSTATE) {
				snprintf(buf, sizeof(buf), "P%.0f", d->v[f]);
				jw_string(w, fi->key, dev_has(d, GF_PSTATE) ? buf : NULL);
			} else if (f == GF_COMPUTE_MODE) {
				jw_string(w, fi->key,
				          dev_has(d, GF_COMPUTE_MODE) ? compute_mode_key(d->v[f])
				                                      : NULL);
			} else {
				jw_number(w, fi->key, dev_has(d, (enum gpu_field)f), d->v[f], 0);
			}
			break;
		default:
			jw_number(w, fi->key, dev_has(d, (enum gpu_field)f), d->v[f], fi->decimals);
		}
	}
}

static void
write_device(struct jw *w, const struct gpu_snapshot *snap, const struct gpu_device *d)
{
	jw_open(w, NULL, '{');
	write_device_members(w, snap, d);
	jw_close(w, '}');
}

static const char *
proc_type_key(unsigned type)
{
	if (type & PROC_MPS)
		return "mps";
	/* a DRM client that is also a compute process (amdgpu's KFD) is compute, as in the table */
	if ((type & PROC_DRM) && !(type & PROC_COMPUTE))
		return "drm";
	if ((type & PROC_COMPUTE) && (type & PROC_GRAPHICS))
		return "compute+graphics";
	if (type & PROC_GRAPHICS)
		return "graphics";
	return "compute";
}

static const char *
host_key(enum proc_host h)
{
	switch (h) {
	case PHOST_OK:
		return "ok";
	case PHOST_PARTIAL:
		return "partial";
	case PHOST_NOT_VISIBLE:
		return "not_visible";
	case PHOST_UNREAD:
		break;
	}
	return "unread";
}

static void
write_proc(struct jw *w, const struct gpu_snapshot *snap, const struct gpu_proc *p)
{
	/* a process on a MIG device: its GPU's index and UUID, and the MIG device's */
	const struct gpu_device *m = &snap->dev[p->dev], *d = gpu_snapshot_gpu_of(snap, m);
	bool started = proc_has(p, PF_START_TIME);

	jw_open(w, NULL, '{');
	jw_number(w, "gpu_index", true, d->index, 0);
	jw_string(w, "gpu_uuid", d->uuid);
	if (m->is_mig) {
		jw_open(w, "mig_device", '{');
		jw_number(w, "index", true, m->index, 0);
		jw_string(w, "uuid", m->uuid);
		jw_close(w, '}');
	} else {
		jw_string(w, "mig_device", NULL);
	}
	jw_number(w, "pid", true, p->pid, 0);
	jw_number(w, "namespace_pid", proc_has(p, PF_NSPID), p->v[PF_NSPID], 0);
	jw_string(w, "type", proc_type_key(p->type));
	jw_string(w, "host_info", host_key(p->host));
	jw_string(w, "user", p->user);
	jw_number(w, "uid", proc_has(p, PF_UID), p->v[PF_UID], 0);
	jw_string(w, "name", p->name);
	jw_string(w, "command", p->cmdline);
	jw_number(w, "gpu_memory_bytes", proc_has(p, PF_GPU_MEM), p->v[PF_GPU_MEM], 0);
	jw_number(w, "sm_utilization_percent", proc_has(p, PF_SM_UTIL), p->v[PF_SM_UTIL], 1);
	jw_number(w, "memory_utilization_percent", proc_has(p, PF_MEM_UTIL), p->v[PF_MEM_UTIL], 1);
	jw_number(w, "encoder_utilization_percent", proc_has(p, PF_ENC_UTIL), p->v[PF_ENC_UTIL], 1);
	jw_number(w, "decoder_utilization_percent", proc_has(p, PF_DEC_UTIL), p->v[PF_DEC_UTIL], 1);
	jw_number(w, "gpu_instance_id", proc_has(p, PF_GPU_INSTANCE), p->v[PF_GPU_INSTANCE], 0);
	jw_number(w, "compute_instance_id", proc_has(p, PF_COMPUTE_INSTANCE),
	          p->v[PF_COMPUTE_INSTANCE], 0);
	jw_number(w, "cpu_percent", proc_has(p, PF_CPU_PERCENT), p->v[PF_CPU_PERCENT], 1);
	jw_number(w, "cpu_time_seconds", proc_has(p, PF_CPU_TIME), p->v[PF_CPU_TIME], 2);
	jw_number(w, "rss_bytes", proc_has(p, PF_RSS), p->v[PF_RSS], 0);
	jw_number(w, "start_time", started, p->v[PF_START_TIME], 2);
	jw_number(w, "running_seconds", started, snap->time - p->v[PF_START_TIME], 0);
	if (p->container) {
		jw_open(w, "container", '{');
		jw_string(w, "id", p->container);
		jw_string(w, "runtime", p->container_runtime);
		jw_string(w, "pod_uid", p->pod);
		jw_string(w, "name", p->container_name);
		jw_close(w, '}');
	} else {
		jw_string(w, "container", NULL);
	}
	if (p->pod) {
		jw_open(w, "pod", '{');
		jw_string(w, "namespace", p->pod_namespace);
		jw_string(w, "name", p->pod_name);
		jw_string(w, "uid", p->pod);
		jw_close(w, '}');
	} else {
		jw_string(w, "pod", NULL);
	}
	if (p->slurm_job) {
		jw_open(w, "slurm", '{');
		jw_string(w, "job", p->slurm_job);
		jw_string(w, "step", p->slurm_step);
		jw_string(w, "user", p->slurm_user);
		jw_close(w, '}');
	} else {
		jw_string(w, "slurm", NULL);
	}
	jw_string(w, "cgroup", p->cgroup);
	jw_number(w, "gpu_system_memory_bytes", proc_has(p, PF_SYS_MEM), p->v[PF_SYS_MEM], 0);
	jw_string(w, "gpu_info", p->gpu_denied ? "no_permission" : "ok");
	write_engines(w, p->engine, p->nr_engine);
	jw_close(w, '}');
}

void
json_status(struct strbuf *sb, const struct gpu_snapshot *snap, bool pretty, bool with_procs)
{
	struct jw w = { sb, pretty, 0, true };
	char iso[40], cuda[16];
	const struct nvidia_sysinfo *nv = &snap->nvidia;
	struct strbuf why = STRBUF_INIT;
	size_t unknown = 0;

	/* room for the whole document, most of the time: a GPU takes 4.4 KiB, a process 0.8 */
	strbuf_grow(sb, 1024 + snap->nr_dev * 5120 + (with_procs ? snap->nr_proc * 1024 : 0));
	jw_open(&w, NULL, '{');
	jw_string(&w, "schema", JSON_STATUS_SCHEMA);
	jw_string(&w, "gpuscope_version", GPUSCOPE_VERSION);
	jw_number(&w, "time", true, snap->time, 3);
	iso_time(iso, sizeof(iso), snap->time);
	jw_string(&w, "time_iso", iso);
	jw_string(&w, "hostname", snap->hostname);
	jw_bool(&w, "simulated", true, snap->simulated);
	jw_open(&w, "nvidia", '{');
	jw_string(&w, "driver_version", nv->driver_version);
	snprintf(cuda, sizeof(cuda), "%d.%d", nv->cuda_version / 1000,
	         nv->cuda_version % 1000 / 10);
	jw_string(&w, "cuda_driver_version", nv->cuda_version ? cuda : NULL);
	jw_string(&w, "nvml_version", nv->nvml_version);
	jw_string(&w, "library", nv->library);
	jw_close(&w, '}');
	jw_open(&w, "gpus", '[');
	for (size_t i = 0; i < snap->nr_dev; i++)
		write_device(&w, snap, &snap->dev[i]);
	jw_close(&w, ']');
	if (with_procs)
		unknown = gpu_snapshot_procs_unknown(snap, &why);
	if (with_procs && snap->nr_dev && unknown == snap->nr_dev) {
		/* no GPU listed its processes: unknown, which is not none */
		jw_string(&w, "processes", NULL);
	} else if (with_procs) {
		jw_open(&w, "processes", '[');
		for (size_t i = 0; i < snap->nr_proc; i++)
			write_proc(&w, snap, &snap->proc[i]);
		jw_close(&w, ']');
	}
	jw_open(&w, "notes", '[');
	for (size_t i = 0; i < snap->nr_note; i++) {
		jw_key(&w, NULL);
		json_str(sb, snap->note[i]);
	}
	if (unknown) {
		jw_key(&w, NULL);
		json_str(sb, why.buf);
	}
	strbuf_release(&why);
	jw_close(&w, ']');
	jw_close(&w, '}');
	strbuf_addch(sb, '\n');
}

void
json_watch_line(struct strbuf *sb, const struct gpu_snapshot *snap, size_t dev)
{
	struct jw w = { sb, false, 0, true };
	char iso[40];

	jw_open(&w, NULL, '{');
	jw_string(&w, "schema", JSON_WATCH_SCHEMA);
	jw_number(&w, "time", true, snap->time, 3);
	iso_time(iso, sizeof(iso), snap->time);
	jw_string(&w, "time_iso", iso);
	jw_string(&w, "hostname", snap->hostname);
	jw_bool(&w, "simulated", true, snap->simulated);
	write_device_members(&w, snap, &snap->dev[dev]);
	jw_close(&w, '}');
	strbuf_addch(sb, '\n');
}
