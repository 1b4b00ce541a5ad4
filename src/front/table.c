/*
 * The human-readable status: fits 80 columns, uses more when the terminal
 * has them, colours what needs attention, and prints "-" for anything that
 * could not be read.
 */
#include "front/table.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/fmt.h"
#include "core/fields.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#define NA "-"

/* Value of f with decimals digits and a suffix, or "-". */
static const char *
val(char *buf, size_t size, const struct gpu_device *d, enum gpu_field f, int decimals,
    const char *suffix)
{
	if (!dev_has(d, f))
		return NA;
	snprintf(buf, size, "%.*f%s", decimals, d->v[f], suffix);
	return buf;
}

/* "a / b unit" of two fields; "-" alone when neither is known */
static const char *
pair(char *buf, size_t size, const struct gpu_device *d, enum gpu_field a, enum gpu_field b,
     const char *unit)
{
	char x[24], y[24];

	if (!dev_has(d, a) && !dev_has(d, b))
		return NA;
	snprintf(buf, size, "%s / %s%s", val(x, sizeof(x), d, a, 0, ""),
	         val(y, sizeof(y), d, b, 0, ""), unit);
	return buf;
}

/* A line under construction: its bytes, and how many columns they show. */
struct line {
	struct strbuf sb;
	size_t width;
};

static void
put(struct line *l, const struct term *t, enum style st, const char *text)
{
	fmt_styled(&l->sb, t, st, text);
	l->width += fmt_width(text);
}

/* "label value" (label dim), then padding to at least min columns from where it began */
static void
item(struct line *l, const struct term *t, const char *label, const char *value, enum style st,
     size_t min)
{
	size_t start = l->width;

	if (label) {
		put(l, t, ST_DIM, label);
		put(l, t, ST_NONE, " ");
	}
	put(l, t, st, value);
	if (l->width - start < min) {
		strbuf_addchars(&l->sb, ' ', min - (l->width - start));
		l->width = start + min;
	}
}

static void
gap(struct line *l)
{
	strbuf_addstr(&l->sb, "  ");
	l->width += 2;
}

static void
end_line(struct strbuf *sb)
{
	strbuf_rtrim(sb);
	strbuf_addch(sb, '\n');
}

static void
emit(struct strbuf *sb, struct line *l)
{
	strbuf_rtrim(&l->sb);
	strbuf_addbuf(sb, &l->sb);
	strbuf_addch(sb, '\n');
	strbuf_reset(&l->sb);
	l->width = 0;
}

static void
header(struct strbuf *sb, const struct gpu_snapshot *snap, const struct term *t)
{
	const struct nvidia_sysinfo *nv = &snap->nvidia;
	char when[64];
	time_t s = (time_t)snap->time;
	struct tm tm;

	if (snap->simulated) {
		fmt_styled(sb, t, ST_INVERSE,
		           " SIMULATED: a fake NVIDIA driver answers; these are not real GPUs ");
		strbuf_addch(sb, '\n');
	}
	localtime_r(&s, &tm);
	strftime(when, sizeof(when), "%a %Y-%m-%d %H:%M:%S %Z", &tm);
	fmt_styled(sb, t, ST_BOLD, snap->hostname[0] ? snap->hostname : "(unknown host)");
	strbuf_addf(sb, "  %s  gpuscope %s\n", when, GPUSCOPE_VERSION);
	if (nv->driver_version[0] || nv->cuda_version || nv->nvml_version[0]) {
		/* the versions are the driver's words: shown as every text from outside */
		const char *drv = nv->driver_version[0] ? nv->driver_version : NA;
		const char *nvml = nv->nvml_version[0] ? nv->nvml_version : NA;

		strbuf_addstr(sb, "NVIDIA driver ");
		fmt_add_shown(sb, drv, strlen(drv));
		if (nv->cuda_version)
			strbuf_addf(sb, "  CUDA %d.%d", nv->cuda_version / 1000,
			            nv->cuda_version % 1000 / 10);
		else
			strbuf_addstr(sb, "  CUDA " NA);
		strbuf_addstr(sb, "  NVML ");
		fmt_add_shown(sb, nvml, strlen(nvml));
		strbuf_addch(sb, '\n');
	}
}

int
table_temp_level(const struct gpu_device *d)
{
	double slow = dev_has(d, GF_TEMP_SLOWDOWN) ? d->v[GF_TEMP_SLOWDOWN] : 90;

	if (!dev_has(d, GF_TEMP_GPU))
		return -1;
	if (d->v[GF_TEMP_GPU] >= slow - 5)
		return 2;
	if (d->v[GF_TEMP_GPU] >= slow - 15)
		return 1;
	return 0;
}

static enum style
temp_style(const struct gpu_device *d)
{
	switch (table_temp_level(d)) {
	case 2:
		return ST_RED;
	case 1:
		return ST_YELLOW;
	default:
		return ST_NONE;
	}
}

/* index, name, bus id, then the performance state and power, or the state of a failed GPU */
static void
gpu_identity(struct line *l, const struct gpu_device *d, const struct term *t, size_t name_w)
{
	char buf[64];
	struct strbuf name = STRBUF_INIT;
	bool near_cap;

	snprintf(buf, sizeof(buf), "%3u", d->index);
	put(l, t, ST_BOLD, buf);
	gap(l);
	fmt_cell(&name, d->name[0] ? d->name : "(unknown GPU)", name_w, false, t->utf8);
	put(l, t, ST_BOLD, name.buf);
	strbuf_release(&name);
	gap(l);
	item(l, t, NULL, d->pci_bus_id[0] ? d->pci_bus_id : NA, ST_NONE, 16);
	gap(l);
	if (d->state != DEV_OK) {
		put(l, t, ST_RED, dev_state_word(d->state));
		return;
	}
	if (dev_has(d, GF_PSTATE))
		snprintf(buf, sizeof(buf), "P%.0f", d->v[GF_PSTATE]);
	else
		snprintf(buf, sizeof(buf), "%s", NA);
	item(l, t, NULL, buf, ST_NONE, 3);
	gap(l);
	near_cap = dev_has(d, GF_POWER_DRAW) && dev_has(d, GF_POWER_LIMIT) &&
	           d->v[GF_POWER_DRAW] >= 0.97 * d->v[GF_POWER_LIMIT];
	item(l, t, "Power", pair(buf, sizeof(buf), d, GF_POWER_DRAW, GF_POWER_LIMIT, " W"),
	     near_cap ? ST_YELLOW : ST_NONE, 0);
}

static void
gpu_thermal_memory(struct line *l, const struct gpu_device *d, const struct term *t)
{
	char buf[64], a[24];
	double pct = NAN;
	enum style mst = ST_NONE;
	const char *deg = t->utf8 ? "\xc2\xb0"
	                            "C"
	                          : "C";

	strbuf_addstr(&l->sb, "     ");
	l->width += 5;
	if (dev_has(d, GF_TEMP_HOTSPOT)) {
		/* AMD: the edge and the hottest point of the die, which is what throttles */
		char h[24];

		snprintf(buf, sizeof(buf), "%s hotspot %s",
		         val(a, sizeof(a), d, GF_TEMP_GPU, 0, deg),
		         val(h, sizeof(h), d, GF_TEMP_HOTSPOT, 0, deg));
	} else if (dev_has(d, GF_TEMP_SLOWDOWN)) {
		snprintf(buf, sizeof(buf), "%s (slowdown %.0f%s)",
		         val(a, sizeof(a), d, GF_TEMP_GPU, 0, deg), d->v[GF_TEMP_SLOWDOWN], deg);
	} else {
		snprintf(buf, sizeof(buf), "%s", val(a, sizeof(a), d, GF_TEMP_GPU, 0, deg));
	}
	item(l, t, "Temp", buf, temp_style(d), 26);
	gap(l);
	if (dev_has(d, GF_MEM_USED) && dev_has(d, GF_MEM_TOTAL)) {
		snprintf(buf, sizeof(buf), "%.0f / %.0f MiB", floor(d->v[GF_MEM_USED] / 1048576.0),
		         floor(d->v[GF_MEM_TOTAL] / 1048576.0));
		if (d->v[GF_MEM_TOTAL] > 0)
			pct = 100.0 * d->v[GF_MEM_USED] / d->v[GF_MEM_TOTAL];
		mst = isnan(pct) ? ST_NONE : pct >= 95 ? ST_RED : pct >= 80 ? ST_YELLOW : ST_NONE;
	} else {
		snprintf(buf, sizeof(buf), "%s", NA);
	}
	item(l, t, "Mem", buf, mst, 0);
	if (dev_has(d, GF_MEM_RESERVED)) {
		snprintf(buf, sizeof(buf), " +%.0f MiB reserved",
		         floor(d->v[GF_MEM_RESERVED] / 1048576.0));
		put(l, t, ST_DIM, buf);
	} else if (!strcmp(d->mem_source, "v1")) {
		put(l, t, ST_DIM, " (used includes reserved)");
	} else if (dev_has(d, GF_GTT_USED) && dev_has(d, GF_GTT_TOTAL)) {
		/* an APU keeps most of its data in system memory mapped for the GPU */
		snprintf(buf, sizeof(buf), " GTT %.0f / %.0f MiB",
		         floor(d->v[GF_GTT_USED] / 1048576.0),
		         floor(d->v[GF_GTT_TOTAL] / 1048576.0));
		put(l, t, ST_DIM, buf);
	}
}

/* A GPU of a DRM driver (amdgpu, i915, xe, msm, nouveau, ...), not of NVIDIA's driver. */
static bool
is_drm(const struct gpu_device *d)
{
	return d->card[0] != '\0';
}

static void
gpu_activity(struct line *l, const struct gpu_device *d, const struct term *t)
{
	char buf[64], a[16];
	/* SMs are NVIDIA's; every other driver clocks its graphics engine */
	bool gfx = is_drm(d);
	enum gpu_field clk = gfx ? GF_CLOCK_GRAPHICS : GF_CLOCK_SM;
	enum gpu_field clk_max = gfx ? GF_CLOCK_MAX_GRAPHICS : GF_CLOCK_MAX_SM;

	strbuf_addstr(&l->sb, "     ");
	l->width += 5;
	item(l, t, "Util", val(a, sizeof(a), d, GF_UTIL_GPU, 0, "%"), ST_NONE, 10);
	item(l, t, "Mem", val(a, sizeof(a), d, GF_UTIL_MEM, 0, "%"), ST_NONE, 9);
	item(l, t, "Enc", val(a, sizeof(a), d, GF_UTIL_ENC, 0, "%"), ST_NONE, 9);
	item(l, t, "Dec", val(a, sizeof(a), d, GF_UTIL_DEC, 0, "%"), ST_NONE, 8);
	gap(l);
	item(l, t, gfx ? "GFX" : "SM", pair(buf, sizeof(buf), d, clk, clk_max, " MHz"), ST_NONE,
	     gfx ? 21 : 20);
	/* some fans report only their speed (amdgpu without PWM control, xe) */
	if (!dev_has(d, GF_FAN) && dev_has(d, GF_FAN_RPM))
		item(l, t, "Fan", val(a, sizeof(a), d, GF_FAN_RPM, 0, " RPM"), ST_NONE, 0);
	else
		item(l, t, "Fan", val(a, sizeof(a), d, GF_FAN, 0, "%"), ST_NONE, 0);
}

static void
link_str(char *buf, size_t size, const struct gpu_device *d, enum gpu_field gen,
         enum gpu_field width)
{
	char g[8], w[8];

	snprintf(buf, size, "Gen%s x%s", val(g, sizeof(g), d, gen, 0, ""),
	         val(w, sizeof(w), d, width, 0, ""));
}

/*
 * Persistence and MIG are NVIDIA's driver's: a DRM GPU shows instead which
 * driver and DRM card it is (what /dev/dri and the kernel log call it), its
 * VBIOS and its graphics voltage, each while it fits the terminal.
 */
static void
drm_identity(struct line *l, const struct gpu_device *d, const struct term *t)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%s %s", d->driver[0] ? d->driver : "no driver", d->card);
	put(l, t, ST_NONE, buf);
	if (d->vbios[0] && l->width + 2 + 6 + fmt_width(d->vbios) <= (size_t)t->width) {
		gap(l);
		item(l, t, "VBIOS", d->vbios, ST_NONE, 0);
	}
	if (dev_has(d, GF_VOLTAGE_GFX)) {
		snprintf(buf, sizeof(buf), "%.0f mV", d->v[GF_VOLTAGE_GFX]);
		if (l->width + 2 + fmt_width(buf) <= (size_t)t->width) {
			gap(l);
			put(l, t, ST_NONE, buf);
		}
	}
}

static void
gpu_modes(struct line *l, const struct gpu_device *d, const struct term *t)
{
	char buf[96], now[40], max[40];
	bool busy = dev_has(d, GF_UTIL_GPU) && d->v[GF_UTIL_GPU] >= 50;
	bool degraded = (dev_has(d, GF_PCIE_GEN) && dev_has(d, GF_PCIE_GEN_MAX) &&
	                 d->v[GF_PCIE_GEN] < d->v[GF_PCIE_GEN_MAX]) ||
	                (dev_has(d, GF_PCIE_WIDTH) && dev_has(d, GF_PCIE_WIDTH_MAX) &&
	                 d->v[GF_PCIE_WIDTH] < d->v[GF_PCIE_WIDTH_MAX]);

	strbuf_addstr(&l->sb, "     ");
	l->width += 5;
	link_str(now, sizeof(now), d, GF_PCIE_GEN, GF_PCIE_WIDTH);
	link_str(max, sizeof(max), d, GF_PCIE_GEN_MAX, GF_PCIE_WIDTH_MAX);
	if (!dev_has(d, GF_PCIE_GEN) && !dev_has(d, GF_PCIE_WIDTH))
		snprintf(buf, sizeof(buf), "%s", NA);
	else if (!dev_has(d, GF_PCIE_GEN_MAX) && !dev_has(d, GF_PCIE_WIDTH_MAX))
		snprintf(buf, sizeof(buf), "%s", now);
	else
		snprintf(buf, sizeof(buf), "%s (max %s)", now, max);
	/* below its maximum while idle is power saving; under load it costs bandwidth */
	item(l, t, "PCIe", buf, busy && degraded ? ST_YELLOW : ST_NONE, 31);
	if (is_drm(d)) {
		drm_identity(l, d, t);
		return;
	}
	item(l, t, "Persistence",
	     !dev_has(d, GF_PERSISTENCE) ? NA
	     : d->v[GF_PERSISTENCE]      ? "on"
	                                 : "off",
	     ST_NONE, 17);
	item(l, t, "MIG",
	     !dev_has(d, GF_MIG_MODE) ? NA
	     : d->v[GF_MIG_MODE]      ? "on"
	                              : "off",
	     ST_NONE, 0);
}

/*
 * One GPU: four lines at 80 columns; on a terminal wide enough for two of
 * them side by side, two lines.
 */
static void
gpu_block(struct strbuf *sb, const struct gpu_device *d, const struct term *t, size_t name_w)
{
	struct line l[4];
	size_t n = d->state == DEV_OK ? 4 : 1, col = 0, right = 0;

	for (size_t i = 0; i < 4; i++) {
		strbuf_init(&l[i].sb, 0);
		l[i].width = 0;
	}
	gpu_identity(&l[0], d, t, name_w);
	if (n > 1) {
		gpu_thermal_memory(&l[1], d, t);
		gpu_activity(&l[2], d, t);
		gpu_modes(&l[3], d, t);
	}
	if (n == 4) {
		col = l[0].width > l[1].width ? l[0].width : l[1].width;
		right = l[2].width > l[3].width ? l[2].width : l[3].width;
	}
	if (n == 4 && col + 2 + right - 5 <= (size_t)t->width) {
		/* side by side: 0|2 and 1|3 */
		for (size_t i = 0; i < 2; i++) {
			struct line *left = &l[i], *right_line = &l[i + 2];

			strbuf_addchars(&left->sb, ' ', col + 2 - left->width);
			/* drop the right line's indent */
			strbuf_add(&left->sb, right_line->sb.buf + 5, right_line->sb.len - 5);
			emit(sb, left);
		}
	} else {
		for (size_t i = 0; i < n; i++)
			emit(sb, &l[i]);
	}
	for (size_t i = 0; i < 4; i++)
		strbuf_release(&l[i].sb);
}

/*
 * An alert: "     label text", the text word-wrapped to the terminal width
 * with its continuation lines indented under it.
 */
static void
alert(struct strbuf *sb, const struct term *t, size_t margin, const char *label, const char *text,
      enum style st)
{
	size_t indent = margin + (label ? fmt_width(label) + 1 : 0);
	size_t room = (size_t)t->width > indent + 20 ? (size_t)t->width - indent : 20;
	struct strbuf chunk = STRBUF_INIT;
	const char *p = text;

	strbuf_addchars(sb, ' ', margin);
	if (label) {
		fmt_styled(sb, t, margin ? ST_DIM : st, label);
		strbuf_addch(sb, ' ');
	}
	while (*p) {
		size_t used = 0, cut = 0;
		const char *q = p;

		/* take words while they fit */
		while (*q) {
			size_t w = strcspn(q, " ");

			if (used && used + 1 + w > room)
				break;
			used += (used ? 1 : 0) + w;
			q += w;
			cut = (size_t)(q - p);
			q += strspn(q, " ");
		}
		strbuf_reset(&chunk);
		strbuf_add(&chunk, p, cut ? cut : strlen(p));
		fmt_styled(sb, t, st, chunk.buf);
		end_line(sb);
		p = cut ? q : p + strlen(p);
		if (*p)
			strbuf_addchars(sb, ' ', indent);
	}
	strbuf_release(&chunk);
}

/* a GPM rate in bytes per second, "3.0G/s" */
static const char *
rate(char *buf, size_t size, const struct gpu_device *d, enum gpu_field f)
{
	size_t n;

	if (!dev_has(d, f))
		return NA;
	fmt_bytes_short(buf, size, d->v[f]);
	n = strlen(buf);
	snprintf(buf + n, size - n, "/s");
	return buf;
}

/*
 * The profiling metrics of a GPU that has them (GPM, Hopper and later), under
 * its Util line: how much of the GPU the running kernels use, then traffic.
 * docs/profiling.md says what each means.
 */
static void
gpu_profiling(struct strbuf *sb, const struct gpu_device *d, const struct term *t)
{
	static const struct {
		const char *label;
		enum gpu_field f;
		size_t min;
	} pct[] = {
		{ "SM act", GF_PROF_SM_ACTIVE, 12 },     { "Occ", GF_PROF_SM_OCCUPANCY, 9 },
		{ "Tensor", GF_PROF_TENSOR_ACTIVE, 12 }, { "DRAM", GF_PROF_DRAM_ACTIVE, 10 },
		{ "FP64", GF_PROF_FP64_ACTIVE, 10 },     { "FP32", GF_PROF_FP32_ACTIVE, 10 },
		{ "FP16", GF_PROF_FP16_ACTIVE, 0 },
	};
	struct line l = { STRBUF_INIT, 0 };
	bool any = false, traffic = false;
	char a[24], b[24];

	if (d->state != DEV_OK)
		return;
	for (enum gpu_field f = GF_PROF_GR_ACTIVE; f <= GF_PROF_NVLINK_RX_RATE; f++) {
		any |= dev_has(d, f);
		traffic |= f >= GF_PROF_PCIE_TX_RATE && dev_has(d, f);
	}
	if (!any)
		return;
	strbuf_addstr(&l.sb, "     ");
	l.width = 5;
	for (size_t i = 0; i < ARRAY_SIZE(pct); i++)
		item(&l, t, pct[i].label, val(a, sizeof(a), d, pct[i].f, 0, "%"), ST_NONE,
		     pct[i].min);
	emit(sb, &l);
	if (traffic) {
		strbuf_addstr(&l.sb, "     ");
		l.width = 5;
		item(&l, t, "PCIe TX", rate(a, sizeof(a), d, GF_PROF_PCIE_TX_RATE), ST_NONE, 0);
		put(&l, t, ST_NONE, " ");
		item(&l, t, "RX", rate(b, sizeof(b), d, GF_PROF_PCIE_RX_RATE), ST_NONE, 0);
		gap(&l);
		item(&l, t, "NVLink TX", rate(a, sizeof(a), d, GF_PROF_NVLINK_TX_RATE), ST_NONE, 0);
		put(&l, t, ST_NONE, " ");
		item(&l, t, "RX", rate(b, sizeof(b), d, GF_PROF_NVLINK_RX_RATE), ST_NONE, 0);
		emit(sb, &l);
	}
	strbuf_release(&l.sb);
}

/* The engine classes a DRM driver reports, busiest use first as it comes. */
static void
gpu_engines(struct strbuf *sb, const struct gpu_device *d, const struct term *t)
{
	struct strbuf line = STRBUF_INIT;

	if (d->state != DEV_OK || !d->nr_engine)
		return;
	for (unsigned i = 0; i < d->nr_engine; i++) {
		if (i)
			strbuf_addstr(&line, "  ");
		if (isnan(d->engine[i].percent))
			strbuf_addf(&line, "%s -", d->engine[i].name);
		else
			strbuf_addf(&line, "%s %.0f%%", d->engine[i].name, d->engine[i].percent);
	}
	alert(sb, t, 5, "Engines", line.buf, ST_NONE);
	strbuf_release(&line);
}

/*
 * Where Util comes from when it is not the driver's own busy figure (the
 * busiest engine of the DRM clients that could be read), or why it is
 * unknown: one dim line.
 */
static void
gpu_util_source(struct strbuf *sb, const struct gpu_device *d, const struct term *t)
{
	struct strbuf line = STRBUF_INIT;

	if (d->state != DEV_OK)
		return;
	if (!strcmp(d->util_source, "fdinfo")) {
		if (d->util_note[0])
			strbuf_addf(&line, "Util from fdinfo (%s)", d->util_note);
		else
			strbuf_addstr(&line,
			              "Util from fdinfo: the busiest engine of the processes seen");
	} else if (!dev_has(d, GF_UTIL_GPU) && d->util_note[0]) {
		strbuf_addf(&line, "Util unknown (%s)", d->util_note);
	}
	if (line.len)
		alert(sb, t, 5, NULL, line.buf, ST_DIM);
	strbuf_release(&line);
}

/* Lines that appear only when something needs attention. */
static void
gpu_alerts(struct strbuf *sb, const struct gpu_device *d, const struct term *t)
{
	struct strbuf line = STRBUF_INIT;

	if (d->state != DEV_OK) {
		alert(sb, t, 5, NULL, d->state_msg[0] ? d->state_msg : dev_state_key(d->state),
		      ST_RED);
		return;
	}
	if (dev_has(d, GF_CLOCK_REASONS)) {
		uint64_t mask = (uint64_t)d->v[GF_CLOCK_REASONS];
		uint64_t bad = CR_HW_SLOWDOWN | CR_HW_THERMAL | CR_HW_POWER_BRAKE | CR_SW_THERMAL;
		const struct flag_name *names;
		unsigned nr;

		/* idle is benign, and so are clocks someone chose to set */
		mask &= ~(uint64_t)(CR_GPU_IDLE | CR_DISPLAY_CLOCKS);
		names = clock_reason_names(&nr);
		for (unsigned i = 0; i < nr; i++)
			if (mask & names[i].bit)
				strbuf_addf(&line, "%s%s", line.len ? ", " : "", names[i].label);
		if (line.len && d->throttle_detail[0])
			strbuf_addf(&line, " (%s)", d->throttle_detail);
		if (line.len)
			alert(sb, t, 5, "Clocks held down:", line.buf,
			      mask & bad ? ST_RED : ST_YELLOW);
	}
	if (dev_has(d, GF_COMPUTE_MODE) && d->v[GF_COMPUTE_MODE] != CM_DEFAULT) {
		static const char *const meaning[] = {
			[CM_EXCLUSIVE_THREAD] =
			        "exclusive thread: one thread of one process at a time",
			[CM_PROHIBITED] = "prohibited: no process may use this GPU for compute",
			[CM_EXCLUSIVE_PROCESS] = "exclusive process: one process at a time",
		};
		const char *m = NA;

		if (compute_mode_key(d->v[GF_COMPUTE_MODE]))
			m = meaning[(int)d->v[GF_COMPUTE_MODE]];
		alert(sb, t, 5, "Compute mode:", m, ST_YELLOW);
	}
	strbuf_reset(&line);
	if (dev_has(d, GF_ECC_UNCORR_VOLATILE) && d->v[GF_ECC_UNCORR_VOLATILE] > 0)
		strbuf_addf(&line, "%.0f uncorrected since boot", d->v[GF_ECC_UNCORR_VOLATILE]);
	if (dev_has(d, GF_ECC_UNCORR_AGGREGATE) && d->v[GF_ECC_UNCORR_AGGREGATE] > 0)
		strbuf_addf(&line, "%s%.0f uncorrected in its life", line.len ? ", " : "",
		            d->v[GF_ECC_UNCORR_AGGREGATE]);
	if (dev_has(d, GF_ECC_CORR_VOLATILE) && d->v[GF_ECC_CORR_VOLATILE] > 0)
		strbuf_addf(&line, "%s%.0f corrected since boot", line.len ? ", " : "",
		            d->v[GF_ECC_CORR_VOLATILE]);
	if (dev_has(d, GF_RETIRED_PENDING) && d->v[GF_RETIRED_PENDING])
		strbuf_addf(&line, "%spage retirement pending (reboot)", line.len ? "; " : "");
	if (dev_has(d, GF_REMAP_PENDING) && d->v[GF_REMAP_PENDING])
		strbuf_addf(&line, "%srow remap pending (reset the GPU)", line.len ? "; " : "");
	if (dev_has(d, GF_REMAP_FAILURE) && d->v[GF_REMAP_FAILURE])
		strbuf_addf(&line, "%srow remapping FAILED (service the GPU)",
		            line.len ? "; " : "");
	if (line.len) {
		bool severe =
		        (dev_has(d, GF_ECC_UNCORR_VOLATILE) && d->v[GF_ECC_UNCORR_VOLATILE] > 0) ||
		        (dev_has(d, GF_REMAP_FAILURE) && d->v[GF_REMAP_FAILURE]);

		alert(sb, t, 5, "ECC:", line.buf, severe ? ST_RED : ST_YELLOW);
	}
	strbuf_release(&line);
}

const char *
table_proc_type(unsigned type)
{
	if (type & PROC_MPS)
		return "M";
	if ((type & PROC_DRM) && !(type & PROC_COMPUTE))
		return "D";
	if ((type & PROC_COMPUTE) && (type & PROC_GRAPHICS))
		return "C+G";
	if (type & PROC_GRAPHICS)
		return "G";
	return "C";
}

/* process table columns: table.h's, by shorter names */
enum pcol {
	PC_GPU = TABLE_PC_GPU,
	PC_PID = TABLE_PC_PID,
	PC_TYPE = TABLE_PC_TYPE,
	PC_USER = TABLE_PC_USER,
	PC_GPUMEM = TABLE_PC_GPUMEM,
	PC_SM = TABLE_PC_SM,
	PC_ENCDEC = TABLE_PC_ENCDEC,
	PC_CPU = TABLE_PC_CPU,
	PC_RSS = TABLE_PC_RSS,
	PC_TIME = TABLE_PC_TIME,
	PC_CTR = TABLE_PC_CTR,
	PC_JOB = TABLE_PC_JOB,
	PC__COUNT = TABLE_PC__COUNT
};

struct pcol_def {
	const char *title;
	size_t width;
	bool right;
};

static const struct pcol_def pcols[PC__COUNT] = {
	[PC_GPU] = { "GPU", 3, true },         [PC_PID] = { "PID", 7, true },
	[PC_TYPE] = { "Type", 4, false },      [PC_USER] = { "User", 8, false },
	[PC_GPUMEM] = { "GPU-Mem", 9, true },  [PC_SM] = { "GPU%", 4, true },
	[PC_ENCDEC] = { "Enc/Dec", 7, true },  [PC_CPU] = { "CPU%", 5, true },
	[PC_RSS] = { "RSS", 6, true },         [PC_TIME] = { "Time", 8, true },
	[PC_CTR] = { "Container", 12, false }, [PC_JOB] = { "Job", 16, false },
};

void
table_proc_cell(char *buf, size_t size, const struct gpu_snapshot *snap, const struct gpu_proc *p,
                enum table_pcol col)
{
	enum pcol c = (enum pcol)col;
	const struct gpu_device *d = &snap->dev[p->dev];
	char a[16], b[16];

	switch (c) {
	case PC_GPU:
		/* on a MIG device: "GPU:MIG dev", the row of the "MIG devices" table */
		gpu_device_label(snap, d, buf, size);
		break;
	case PC_PID:
		snprintf(buf, size, "%u", p->pid);
		break;
	case PC_TYPE:
		snprintf(buf, size, "%s", table_proc_type(p->type));
		break;
	case PC_USER:
		snprintf(buf, size, "%s",
		         p->user                        ? p->user
		         : p->host == PHOST_NOT_VISIBLE ? "?"
		                                        : NA);
		break;
	case PC_GPUMEM:
		/*
		 * device memory; when it holds none (an integrated GPU, whose
		 * stolen memory i915 counts as local), the system memory it
		 * maps; "?" when its fdinfo is closed to us and nothing else
		 * (amdgpu's KFD) told
		 */
		if (proc_has(p, PF_GPU_MEM) && (p->v[PF_GPU_MEM] > 0 || !proc_has(p, PF_SYS_MEM)))
			fmt_mib(buf, size, p->v[PF_GPU_MEM]);
		else if (proc_has(p, PF_SYS_MEM))
			fmt_mib(buf, size, p->v[PF_SYS_MEM]);
		else if (p->gpu_denied)
			snprintf(buf, size, "?");
		else
			snprintf(buf, size, NA);
		break;
	case PC_SM:
		if (p->gpu_denied)
			snprintf(buf, size, "?");
		else if (proc_has(p, PF_SM_UTIL))
			snprintf(buf, size, "%.0f", p->v[PF_SM_UTIL]);
		else
			snprintf(buf, size, NA);
		break;
	case PC_ENCDEC:
		snprintf(a, sizeof(a), "%.0f", p->v[PF_ENC_UTIL]);
		snprintf(b, sizeof(b), "%.0f", p->v[PF_DEC_UTIL]);
		snprintf(buf, size, "%s/%s", proc_has(p, PF_ENC_UTIL) ? a : NA,
		         proc_has(p, PF_DEC_UTIL) ? b : NA);
		break;
	case PC_CPU:
		if (proc_has(p, PF_CPU_PERCENT))
			snprintf(buf, size, "%.1f", p->v[PF_CPU_PERCENT]);
		else
			snprintf(buf, size, NA);
		break;
	case PC_RSS:
		if (proc_has(p, PF_RSS))
			fmt_bytes_short(buf, size, p->v[PF_RSS]);
		else
			snprintf(buf, size, NA);
		break;
	case PC_TIME:
		if (proc_has(p, PF_START_TIME))
			fmt_duration(buf, size, snap->time - p->v[PF_START_TIME]);
		else
			snprintf(buf, size, NA);
		break;
	case PC_CTR:
		snprintf(buf, size, "%s", p->container ? p->container : NA);
		break;
	case PC_JOB:
		/* as sacct names a step: "1234.0", "1234.batch" */
		if (p->slurm_job && p->slurm_step)
			snprintf(buf, size, "%s.%s", p->slurm_job, p->slurm_step);
		else if (p->slurm_job)
			snprintf(buf, size, "%s", p->slurm_job);
		else if (p->pod_namespace && p->pod_name)
			snprintf(buf, size, "%s/%s", p->pod_namespace, p->pod_name);
		else
			snprintf(buf, size, NA);
		break;
	case PC__COUNT:
		buf[0] = '\0';
		break;
	}
}

/*
 * The command line, with the directory of the program left out: at 80
 * columns "/home/alice/venv/bin/python -u train.py" hides what matters.
 */
static void
add_command(struct strbuf *sb, const struct gpu_proc *p)
{
	const char *cmd = p->cmdline ? p->cmdline : p->name ? p->name : NA;
	size_t first = strcspn(cmd, " ");
	const char *slash = memrchr(cmd, '/', first);

	strbuf_addstr(sb, slash && slash[1] && slash[1] != ' ' ? slash + 1 : cmd);
}

static void
procs_table(struct strbuf *sb, const struct gpu_snapshot *snap, const struct term *t)
{
	bool show[PC__COUNT];
	bool any_ctr = false, any_media = false, any_job = false;
	size_t used = 0, cmd_w;
	/* optional columns in the order they are given up when space runs short */
	static const enum pcol optional[] = { PC_CTR, PC_ENCDEC, PC_RSS, PC_CPU, PC_TIME, PC_JOB };
	const size_t min_cmd = 17;

	for (size_t i = 0; i < snap->nr_proc; i++) {
		const struct gpu_proc *p = &snap->proc[i];

		any_ctr |= p->container != NULL;
		any_job |= p->slurm_job || (p->pod_namespace && p->pod_name);
		any_media |= (proc_has(p, PF_ENC_UTIL) && p->v[PF_ENC_UTIL] > 0) ||
		             (proc_has(p, PF_DEC_UTIL) && p->v[PF_DEC_UTIL] > 0);
	}
	for (int c = 0; c < PC__COUNT; c++) {
		show[c] = true;
		used += pcols[c].width + 1;
	}
	if (!any_ctr) {
		show[PC_CTR] = false;
		used -= pcols[PC_CTR].width + 1;
	}
	if (!any_job) {
		show[PC_JOB] = false;
		used -= pcols[PC_JOB].width + 1;
	}
	if (!any_media) {
		show[PC_ENCDEC] = false;
		used -= pcols[PC_ENCDEC].width + 1;
	}
	for (size_t k = 0; k < ARRAY_SIZE(optional) && used + min_cmd > (size_t)t->width; k++) {
		if (!show[optional[k]])
			continue;
		show[optional[k]] = false;
		used -= pcols[optional[k]].width + 1;
	}
	cmd_w = (size_t)t->width > used ? (size_t)t->width - used : min_cmd;

	strbuf_addch(sb, '\n');
	{
		struct strbuf h = STRBUF_INIT;

		for (int c = 0; c < PC__COUNT; c++) {
			if (!show[c])
				continue;
			fmt_cell(&h, pcols[c].title, pcols[c].width, pcols[c].right, t->utf8);
			strbuf_addch(&h, ' ');
		}
		strbuf_addstr(&h, "Command");
		fmt_styled(sb, t, ST_BOLD, h.buf);
		strbuf_addch(sb, '\n');
		strbuf_release(&h);
	}
	{
		/* a GPU that did not list its processes has unknown ones, not none */
		struct strbuf why = STRBUF_INIT, line = STRBUF_INIT;

		if (gpu_snapshot_procs_unknown(snap, &why)) {
			strbuf_addf(&line, "  %s", why.buf);
			fmt_styled(sb, t, ST_YELLOW, line.buf);
			strbuf_addch(sb, '\n');
			strbuf_release(&line);
		} else if (!snap->nr_proc) {
			fmt_styled(sb, t, ST_DIM, "  no processes are using the GPUs");
			strbuf_addch(sb, '\n');
		}
		strbuf_release(&why);
	}
	for (size_t i = 0; i < snap->nr_proc; i++) {
		const struct gpu_proc *p = &snap->proc[i];
		struct strbuf cmd = STRBUF_INIT;
		char buf[64];

		for (int c = 0; c < PC__COUNT; c++) {
			if (!show[c])
				continue;
			table_proc_cell(buf, sizeof(buf), snap, p, (enum table_pcol)c);
			fmt_cell(sb, buf, pcols[c].width, pcols[c].right, t->utf8);
			strbuf_addch(sb, ' ');
		}
		if (p->host == PHOST_NOT_VISIBLE)
			strbuf_addstr(&cmd, "(not visible from this pid namespace)");
		else
			add_command(&cmd, p);
		if (p->container && !show[PC_CTR]) {
			struct strbuf pre = STRBUF_INIT;

			strbuf_addf(&pre, "[%s] %s", p->container, cmd.buf);
			strbuf_release(&cmd);
			cmd = pre;
		}
		{
			struct strbuf cut = STRBUF_INIT;

			fmt_cell(&cut, cmd.buf, cmd_w, false, t->utf8);
			strbuf_rtrim(&cut);
			fmt_styled(sb, t, p->host == PHOST_NOT_VISIBLE ? ST_DIM : ST_NONE, cut.buf);
			strbuf_release(&cut);
		}
		strbuf_release(&cmd);
		end_line(sb);
	}
}

/*
 * The MIG devices, as nvidia-smi's "MIG devices" table lists them: GPU, GPU
 * and compute instance ids, MIG device index, then profile and memory.
 */
static void
mig_table(struct strbuf *sb, const struct gpu_snapshot *snap, const struct term *t)
{
	struct strbuf h = STRBUF_INIT;
	bool any = false;

	for (size_t i = 0; i < snap->nr_dev && !any; i++)
		any = snap->dev[i].is_mig;
	if (!any)
		return;
	strbuf_addch(sb, '\n');
	strbuf_addf(&h, "MIG devices  GPU  GI  CI  MIG  %-10s  SM  %s", "Profile", "Memory-Usage");
	fmt_styled(sb, t, ST_BOLD, h.buf);
	strbuf_addch(sb, '\n');
	strbuf_release(&h);
	for (size_t i = 0; i < snap->nr_dev; i++) {
		const struct gpu_device *d = &snap->dev[i];
		char gi[16], ci[16], sm[16], mem[64];

		if (!d->is_mig)
			continue;
		snprintf(gi, sizeof(gi), "%u", d->mig_gi);
		snprintf(ci, sizeof(ci), "%u", d->mig_ci);
		snprintf(sm, sizeof(sm), "%u", d->mig_sm_count);
		if (dev_has(d, GF_MEM_USED) && dev_has(d, GF_MEM_TOTAL))
			snprintf(mem, sizeof(mem), "%.0f / %.0f MiB",
			         floor(d->v[GF_MEM_USED] / 1048576.0),
			         floor(d->v[GF_MEM_TOTAL] / 1048576.0));
		else
			snprintf(mem, sizeof(mem), "%s", NA);
		strbuf_addf(sb, "             %3u %3s %3s %4u  %-10s %3s  %s",
		            gpu_snapshot_gpu_of(snap, d)->index, d->mig_gi == UINT_MAX ? NA : gi,
		            d->mig_ci == UINT_MAX ? NA : ci, d->index,
		            d->mig_profile[0] ? d->mig_profile : NA, d->mig_sm_count ? sm : NA,
		            mem);
		if (d->state != DEV_OK)
			strbuf_addf(sb, "  %s", dev_state_word(d->state));
		end_line(sb);
	}
}

void
table_status(struct strbuf *sb, const struct gpu_snapshot *snap, const struct term *t,
             bool with_procs)
{
	/* the name column fits the longest name, within reason */
	size_t name_w = 12;

	for (size_t i = 0; i < snap->nr_dev; i++)
		if (!snap->dev[i].is_mig && fmt_width(snap->dev[i].name) > name_w)
			name_w = fmt_width(snap->dev[i].name);
	if (name_w > 30)
		name_w = 30;
	header(sb, snap, t);
	for (size_t i = 0; i < snap->nr_dev; i++) {
		const struct gpu_device *d = &snap->dev[i];

		/* a MIG device is a row of the "MIG devices" table, not a GPU */
		if (d->is_mig)
			continue;
		strbuf_addch(sb, '\n');
		gpu_block(sb, d, t, name_w);
		gpu_profiling(sb, d, t);
		gpu_engines(sb, d, t);
		gpu_util_source(sb, d, t);
		gpu_alerts(sb, d, t);
	}
	mig_table(sb, snap, t);
	if (with_procs)
		procs_table(sb, snap, t);
	if (snap->nr_note) {
		strbuf_addch(sb, '\n');
		for (size_t i = 0; i < snap->nr_note; i++)
			alert(sb, t, 0, "note:", snap->note[i], ST_YELLOW);
	}
}
