/*
 * health.*: the hardware health of each GPU, read from the samples.
 *
 * Clock-event (throttle) reasons, temperatures against the GPU's own
 * thresholds, fans, a lowered power limit, the PCIe link under load and its
 * replay counter, ECC, retired pages, row remapping, lost GPUs, AMD RAS
 * counts, and a GPU stuck slow under load. The thresholds follow NVIDIA
 * DCGM's health watches (dcgmlib/src/common/DcgmGPUHardwareLimits.h and
 * modules/health/DcgmHealthWatch.cpp; docs: peers.md section 4.5).
 *
 * With a window (doctor --watch, or a stretch of a recording) a condition
 * "under load" must hold in most samples and a counter must rise across
 * the window; with one sample, that sample is judged alone and no trend is
 * claimed. Healthy GPUs get one ok line per model, not one per GPU.
 */
#include "doctor/doctor.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fields.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

/* A GPU is "under load" in a sample above this utilisation (the brief's 50 %). */
#define LOAD_UTIL 50.0
/* ... and "busy" (for the performance-state check) above this. */
#define BUSY_UTIL 80.0
/* Degrees Celsius from a slowdown or shutdown threshold that count as near it. */
#define NEAR_C 5.0
/* A GPU this close to slowdown (or, without thresholds, this hot) needs its fan. */
#define FAN_NEAR_C 15.0
#define FAN_HOT_C  80.0
/* ... and a card without a fan reading (passively cooled) this hot, or within NEAR_C. */
#define FAN_PASSIVE_HOT_C 85.0
/*
 * PCIe replays per minute: DCGM_LIMIT_MAX_PCIREPLAY_RATE ("8 replays per
 * minute is the maximum recommended by RM", DcgmGPUHardwareLimits.h). DCGM
 * wants a minute of samples before a verdict, so a shorter window's count is
 * spread over a minute (never extrapolated upwards).
 */
#define REPLAY_PER_MIN 8.0
#define REPLAY_MIN_S   60.0
/*
 * Retired pages: DCGM fails a GPU at 63 (DCGM_LIMIT_MAX_RETIRED_PAGES; 60
 * in older releases) and checks the rate above 15 DBE pages
 * (DCGM_LIMIT_MAX_RETIRED_PAGES_SOFT_LIMIT). Three quarters of the limit
 * (48) is our own "near it".
 */
#define RETIRED_FAIL     63.0
#define RETIRED_NEAR     48.0
#define RETIRED_DBE_SOFT 15.0
/* Uncorrectable remapped rows: DCGM fails a GPU at 512 (DcgmHealthWatch.cpp). */
#define REMAP_UNCORR_FAIL 512.0
/* Clocks below this fraction of their maximum are "far below". */
#define CLOCK_LOW_FRACTION 0.5
/* A power limit this far (watts, or 2 % of the default) below the default counts as lowered. */
#define POWER_SLACK_W 1.0

/* One GPU across the samples. */
struct hgpu {
	const struct dr_ctx *ctx;
	const struct gpu_device *now;  /* in the latest sample */
	const struct gpu_device **at;  /* per sample, NULL where absent */
	const struct gpu_snapshot **s; /* the samples */
	size_t n;                      /* samples */
	size_t util_known, loaded;     /* samples with utilisation; with it above LOAD_UTIL */
	char label[200];               /* "GPU 0 (NVIDIA H100, 00000000:1B:00.0)" */
	bool bad;                      /* a warning or an error was found */
};

/* --- helpers ------------------------------------------------------------------ */

static struct dr_finding *__attribute__((format(printf, 5, 6)))
add(struct hgpu *g, struct dr_report *r, const char *id, enum dr_severity sev, const char *fmt, ...)
{
	char title[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(title, sizeof(title), fmt, ap);
	va_end(ap);
	if (sev >= DR_WARNING)
		g->bad = true;
	return dr_add(r, id, sev, "%s: %s", g->label, title);
}

static bool
loaded_in(const struct gpu_device *d)
{
	return d && dev_has(d, GF_UTIL_GPU) && d->v[GF_UTIL_GPU] > LOAD_UTIL;
}

/* More than half of n (n > 0). */
static bool
most(size_t k, size_t n)
{
	return n > 0 && 2 * k > n;
}

/* Is d the same GPU as want? */
static bool
same_gpu(const struct gpu_device *d, const struct gpu_device *want)
{
	if (d->vendor != want->vendor)
		return false;
	if (want->uuid[0] && d->uuid[0])
		return !strcmp(want->uuid, d->uuid);
	if (want->pci_bus_id[0] && d->pci_bus_id[0])
		return !strcmp(want->pci_bus_id, d->pci_bus_id);
	return d->index == want->index;
}

static const struct gpu_device *
find_gpu(const struct gpu_snapshot *s, const struct gpu_device *want)
{
	for (size_t i = 0; s && i < s->nr_dev; i++)
		if (same_gpu(&s->dev[i], want))
			return &s->dev[i];
	return NULL;
}

/* Seconds between the first and the last sample. */
static double
span_s(const struct hgpu *g)
{
	return g->n > 1 ? g->s[g->n - 1]->time - g->s[0]->time : 0;
}

/* "in 7 of 10 samples over 9 s" or "in this sample". */
static const char *
where(const struct hgpu *g, size_t k, char *buf, size_t size)
{
	if (g->n <= 1)
		snprintf(buf, size, "%s",
		         g->ctx->recorded ? "in the recorded sample" : "in this sample");
	else
		snprintf(buf, size, "in %zu of %zu samples over %.0f s (%s)", k, g->n, span_s(g),
		         g->ctx->window && g->ctx->window->source ? g->ctx->window->source
		                                                  : "live");
	return buf;
}

/* Evidence line: the utilisation across the samples. */
static void
load_evidence(const struct hgpu *g, struct dr_finding *f)
{
	char w[160];

	if (!g->util_known)
		dr_evidence(f, "utilisation: unknown");
	else if (g->n <= 1)
		dr_evidence(f, "utilisation: %.0f %%", g->now->v[GF_UTIL_GPU]);
	else
		dr_evidence(f, "utilisation above %.0f %% %s", LOAD_UTIL,
		            where(g, g->loaded, w, sizeof(w)));
}

static void
gpu_init(struct hgpu *g, const struct dr_ctx *ctx, const struct gpu_device *now)
{
	const struct dr_window *win = ctx->window;

	memset(g, 0, sizeof(*g));
	g->ctx = ctx;
	g->now = now;
	g->n = win && win->nr ? win->nr : 1;
	g->s = xcalloc(g->n, sizeof(*g->s));
	g->at = xcalloc(g->n, sizeof(*g->at));
	for (size_t i = 0; i < g->n; i++) {
		g->s[i] = win && win->nr ? &win->s[i] : ctx->snap;
		g->at[i] = g->n == 1 ? now : find_gpu(g->s[i], now);
		if (g->at[i] && dev_has(g->at[i], GF_UTIL_GPU)) {
			g->util_known++;
			g->loaded += loaded_in(g->at[i]);
		}
	}
	snprintf(g->label, sizeof(g->label), "GPU %u (%s%s%s)", now->index,
	         now->name[0] ? now->name : vendor_key(now->vendor), now->pci_bus_id[0] ? ", " : "",
	         now->pci_bus_id);
}

static void
gpu_release(struct hgpu *g)
{
	free((void *)g->s);
	free((void *)g->at);
}

/* --- lost GPUs ------------------------------------------------------------------ */

#define BUS_CHECKLIST                                                                           \
	"Software first: read the kernel log for 'Xid 79' / 'fallen off the bus' and the Xids " \
	"before it (gpuscope doctor's log.* findings), check that the driver is current and "   \
	"nvidia-persistenced runs; then reboot (a GPU reset rarely brings a lost GPU back). "   \
	"If it returns: check the power supply's capacity and the GPU's power cables "          \
	"(seated, no daisy-chained splitters), riser cables, the slot (try another), PCIe "     \
	"AER errors in the log, the BIOS (Above 4G decoding, PCIe speed), and cooling; only "   \
	"then suspect the card (gpuscope doctor --explain health.gpu.lost)"

/* Returns true when the GPU is not answering (the other checks then have nothing to read). */
static bool
check_state(struct hgpu *g, struct dr_report *r)
{
	const struct gpu_device *d = g->now;
	struct dr_finding *f;

	switch (d->state) {
	case DEV_LOST:
		f = add(g, r, "health.gpu.lost", DR_ERROR, "fallen off the bus (GPU is lost)");
		dr_meaning(f,
		           "The driver can no longer reach the GPU over PCIe: every program using "
		           "it has failed, and it stays gone until a reboot.");
		break;
	case DEV_RESET_REQUIRED:
		f = add(g, r, "health.gpu.reset_required", DR_ERROR,
		        "needs a GPU reset or a reboot");
		dr_meaning(f,
		           "The driver stopped the GPU after a fatal error (an uncorrectable ECC "
		           "error, a GSP or firmware fault); it refuses work until reset.");
		break;
	case DEV_NOT_RESPONDING:
		f = add(g, r, "health.gpu.not_responding", DR_ERROR, "does not respond");
		dr_meaning(f,
		           "The GPU did not answer before the deadline: the driver is hung on it, "
		           "or it is about to be lost.");
		break;
	default:
		return false;
	}
	if (d->state_msg[0])
		dr_evidence(f, "state: %s (%s)", dev_state_key(d->state), d->state_msg);
	else
		dr_evidence(f, "state: %s", dev_state_key(d->state));
	if (d->state == DEV_RESET_REQUIRED)
		dr_action(
		        f,
		        "Stop the processes using it, then 'sudo nvidia-smi -r -i %u' (or reboot). "
		        "If it happens again: %s.",
		        d->index, BUS_CHECKLIST);
	else
		dr_action(f, "%s.", BUS_CHECKLIST);
	return true;
}

/* --- throttling ----------------------------------------------------------------- */

struct reason_count {
	size_t known;       /* samples with reasons */
	size_t set;         /* ... with the bit set */
	size_t load;        /* ... and under load */
	const char *detail; /* the driver's names, in the latest sample with the bit set */
};

static void
count_reason(const struct hgpu *g, unsigned bits, struct reason_count *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < g->n; i++) {
		const struct gpu_device *d = g->at[i];
		unsigned mask;

		if (!d || !dev_has(d, GF_CLOCK_REASONS))
			continue;
		c->known++;
		mask = (unsigned)d->v[GF_CLOCK_REASONS];
		if (!(mask & bits))
			continue;
		c->set++;
		c->load += loaded_in(d);
		if (d->throttle_detail[0])
			c->detail = d->throttle_detail;
	}
	/* Intel's and AMD's reasons linger at idle: only load counts there */
	if (g->now->vendor != VENDOR_NVIDIA)
		c->set = c->load;
}

static void
reason_evidence(const struct hgpu *g, struct dr_finding *f, const char *what,
                const struct reason_count *c)
{
	char w[160];

	dr_evidence(f, "clock event reason '%s' %s, %zu of them under load", what,
	            where(g, c->set, w, sizeof(w)), c->load);
	if (c->detail)
		dr_evidence(f, "the driver names: %s", c->detail);
	load_evidence(g, f);
}

/* Power capping under load, gathered across GPUs into one info line. */
struct capped {
	struct strbuf gpus, ev;
	size_t nr, idle;
};

static void
check_throttle(struct hgpu *g, struct dr_report *r, struct capped *cap)
{
	struct reason_count c;
	struct dr_finding *f;
	char w[160];

	count_reason(g, CR_HW_SLOWDOWN, &c);
	if (c.set) {
		f = add(g, r, "health.throttle.hw_slowdown", DR_WARNING,
		        "hardware slowdown (clocks cut by half or more)%s",
		        c.load ? " under load" : "");
		reason_evidence(g, f, "HW slowdown", &c);
		dr_meaning(
		        f,
		        "The board asserted its slowdown signal: too hot, or the power supply or "
		        "its cables could not deliver what the GPU drew.");
		dr_action(f,
		          "Check the power cables (all connectors seated, one cable per "
		          "connector, no splitters), the power supply's capacity for every GPU at "
		          "full power, and the airflow; 'nvidia-smi -q -d PERFORMANCE' shows which "
		          "slowdown is active.");
	}
	count_reason(g, CR_HW_POWER_BRAKE, &c);
	if (c.set) {
		f = add(g, r, "health.throttle.power_brake", DR_WARNING,
		        "hardware power brake asserted%s", c.load ? " under load" : "");
		reason_evidence(g, f, "HW power brake", &c);
		dr_meaning(f,
		           "The system (the power supply or the server's power controller) pulled "
		           "the GPU's power-brake signal: the platform cannot power it fully.");
		dr_action(f,
		          "Check the power supplies (a failed redundant unit, an undersized one), "
		          "their cabling, and the server's power capping policy (BMC).");
	}
	count_reason(g, CR_SW_THERMAL | CR_HW_THERMAL, &c);
	if (c.set) {
		f = add(g, r, "health.throttle.thermal", DR_WARNING, "slowed down for heat%s",
		        c.load ? " under load" : "");
		reason_evidence(g, f, "thermal slowdown", &c);
		if (dev_has(g->now, GF_TEMP_GPU))
			dr_evidence(f, "temperature now %.0f °C", g->now->v[GF_TEMP_GPU]);
		dr_meaning(f, "The GPU lowered its clocks to stay under its temperature limit: it "
		              "runs slower than it can.");
		dr_action(f,
		          "Improve the cooling: fans spinning, heat sink free of dust, intake "
		          "air cool enough, blanking panels and fan walls in place in a server.");
	}
	count_reason(g, CR_SW_POWER_CAP, &c);
	if (c.set) {
		const char *sep = cap->nr ? ", " : "";

		strbuf_addf(&cap->gpus, "%s%u", sep, g->now->index);
		strbuf_addf(&cap->ev, "%s%s: %s (%zu under load)%s%s", cap->nr ? "\n" : "",
		            g->label, where(g, c.set, w, sizeof(w)), c.load,
		            c.detail ? "; the driver names: " : "", c.detail ? c.detail : "");
		cap->idle += !c.load;
		cap->nr++;
	}
	count_reason(g, CR_APP_CLOCKS, &c);
	if (c.load) {
		f = add(g, r, "health.throttle.app_clocks", DR_INFO,
		        "held at its application clocks under load");
		reason_evidence(g, f, "applications clocks setting", &c);
		dr_meaning(f,
		           "Someone set application clocks (nvidia-smi -ac) below the maximum; the "
		           "GPU does not boost above them.");
		dr_action(f, "If that was not meant: 'sudo nvidia-smi -i %u -rac' resets them.",
		          g->now->index);
	}
	count_reason(g, CR_SYNC_BOOST, &c);
	if (c.load) {
		f = add(g, r, "health.throttle.sync_boost", DR_INFO,
		        "clocks held down by its sync-boost group");
		reason_evidence(g, f, "sync boost", &c);
		dr_meaning(f,
		           "The GPU is in a sync-boost group and runs at the clocks of the slowest "
		           "GPU in it.");
		dr_action(f,
		          "Look at the slowest GPU of the group (throttled, hotter); or leave the "
		          "group (DCGM: dcgmi config --set -s 0).");
	}
}

static void
emit_capped(struct capped *cap, struct dr_report *r)
{
	struct dr_finding *f;
	const char *p, *nl;

	if (!cap->nr)
		return;
	f = dr_add(r, "health.throttle.power_cap", DR_INFO, "GPU%s %s held at the power limit%s",
	           cap->nr > 1 ? "s" : "", cap->gpus.buf,
	           cap->idle ? "" : " under load (normal at full load)");
	for (p = cap->ev.buf; *p; p = nl + (*nl != '\0')) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		dr_evidence(f, "%.*s", (int)(nl - p), p);
	}
	dr_meaning(f,
	           "The GPU draws as much power as its limit allows and lowers its clocks to "
	           "stay there. At full load that is how it is meant to run%s.",
	           cap->idle ? "; while not busy it suggests a power limit set low" : "");
	dr_action(f, "Nothing, unless the limit was lowered (see health.power.limit_lowered): "
	             "'nvidia-smi -q -d POWER' shows the limits.");
}

/* --- temperatures and fans ---------------------------------------------------------- */

static void
check_temps(struct hgpu *g, struct dr_report *r)
{
	double peak = NAN, peak_mem = NAN, min_margin = NAN;
	const struct gpu_device *d = g->now;
	struct dr_finding *f;
	char w[160];

	for (size_t i = 0; i < g->n; i++) {
		const struct gpu_device *a = g->at[i];

		if (!a)
			continue;
		if (dev_has(a, GF_TEMP_GPU) && !(a->v[GF_TEMP_GPU] <= peak))
			peak = a->v[GF_TEMP_GPU];
		if (dev_has(a, GF_TEMP_MEM) && !(a->v[GF_TEMP_MEM] <= peak_mem))
			peak_mem = a->v[GF_TEMP_MEM];
		if (dev_has(a, GF_TEMP_MARGIN) && !(a->v[GF_TEMP_MARGIN] >= min_margin))
			min_margin = a->v[GF_TEMP_MARGIN];
	}
	double slow = dev_get(d, GF_TEMP_SLOWDOWN), shut = dev_get(d, GF_TEMP_SHUTDOWN);

	where(g, g->n, w, sizeof(w));
	if (!isnan(peak) && !isnan(shut) && peak >= shut - NEAR_C) {
		f = add(g, r, "health.temp.shutdown", DR_ERROR,
		        "%.0f °C, within %.0f °C of its shutdown temperature (%.0f °C)", peak,
		        NEAR_C, shut);
		dr_evidence(f, "highest GPU temperature %s: %.0f °C; shutdown at %.0f °C", w, peak,
		            shut);
		dr_meaning(f, "At its shutdown temperature the GPU turns itself off to protect "
		              "itself: the programs on it fail and it may fall off the bus.");
		dr_action(f, "Lower the load now and fix the cooling: fans, airflow, dust, the "
		             "room's temperature; then see why the slowdown did not hold it.");
	} else if (!isnan(peak) && ((!isnan(slow) && peak >= slow - NEAR_C) ||
	                            (!isnan(min_margin) && min_margin <= NEAR_C))) {
		f = add(g, r, "health.temp.slowdown", DR_WARNING,
		        "%.0f °C, within %.0f °C of its slowdown temperature", peak, NEAR_C);
		dr_evidence(f, "highest GPU temperature %s: %.0f °C", w, peak);
		if (!isnan(slow))
			dr_evidence(f, "slowdown at %.0f °C%s", slow,
			            isnan(shut) ? "" : ", shutdown higher still");
		if (!isnan(min_margin))
			dr_evidence(f, "least margin to slowdown (T.Limit): %.0f °C", min_margin);
		dr_meaning(f,
		           "Past its slowdown temperature the GPU lowers its clocks: it is about "
		           "to run slower than it can.");
		dr_action(f,
		          "Check the fans and airflow (intake temperature, dust, blanking panels); "
		          "'nvidia-smi -q -d TEMPERATURE' lists the thresholds.");
	}
	double mem_max = dev_get(d, GF_TEMP_MEM_MAX);

	if (!isnan(peak_mem) && !isnan(mem_max) && peak_mem >= mem_max - NEAR_C) {
		bool over = peak_mem >= mem_max;

		f = add(g, r, "health.temp.memory", over ? DR_ERROR : DR_WARNING,
		        "memory at %.0f °C, %s its maximum (%.0f °C)", peak_mem,
		        over ? "at or over" : "near", mem_max);
		dr_evidence(f, "highest memory temperature %s: %.0f °C; maximum %.0f °C", w,
		            peak_mem, mem_max);
		dr_meaning(f, "Hot memory (HBM, GDDR) slows the GPU down and, past its maximum, "
		              "causes memory errors.");
		dr_action(f, "Fix the cooling of the memory: airflow across the card, the heat "
		             "sink's contact (thermal pads on GDDR cards).");
	}
}

/* Hot: within near °C of slowdown, or, without that threshold, at abs °C or more. */
static bool
hot(const struct gpu_device *d, double near, double abs)
{
	double t = dev_get(d, GF_TEMP_GPU), slow = dev_get(d, GF_TEMP_SLOWDOWN);

	if (isnan(t))
		return false;
	return isnan(slow) ? t >= abs : t >= slow - near;
}

static void
check_fan(struct hgpu *g, struct dr_report *r)
{
	size_t stopped = 0, unread = 0;
	struct dr_finding *f;
	char w[160];

	for (size_t i = 0; i < g->n; i++) {
		const struct gpu_device *a = g->at[i];

		if (!loaded_in(a))
			continue;
		/*
		 * a passive card runs warm by design: only near slowdown is its
		 * airflow worth a word
		 */
		if (!dev_has(a, GF_FAN))
			unread += hot(a, NEAR_C, FAN_PASSIVE_HOT_C);
		else if (a->v[GF_FAN] <= 0)
			stopped += hot(a, FAN_NEAR_C, FAN_HOT_C);
	}
	if (most(stopped, g->util_known)) {
		f = add(g, r, "health.fan.stopped", DR_WARNING,
		        "fan at 0 %% while hot and under load");
		dr_evidence(f, "fan 0 %%, hot and busy %s", where(g, stopped, w, sizeof(w)));
		if (dev_has(g->now, GF_TEMP_GPU))
			dr_evidence(f, "temperature now %.0f °C", g->now->v[GF_TEMP_GPU]);
		load_evidence(g, f);
		dr_meaning(f, "A GPU that is hot and busy should spin its fan: it has failed, is "
		              "unplugged or blocked, or a fan curve holds it at 0 %%.");
		dr_action(
		        f,
		        "Look at the fan (spinning? its cable plugged in?); reset any custom fan "
		        "curve (nvidia-settings, CoolBits, LACT); replace the fan if it is dead.");
	} else if (most(unread, g->util_known)) {
		f = add(g, r, "health.fan.no_reading", DR_WARNING,
		        "hot under load, and it reports no fan");
		dr_evidence(f, "no fan speed, hot and busy %s", where(g, unread, w, sizeof(w)));
		if (dev_has(g->now, GF_TEMP_GPU))
			dr_evidence(f, "temperature now %.0f °C", g->now->v[GF_TEMP_GPU]);
		dr_meaning(f,
		           "A GPU without a fan reading is usually a passively cooled data-centre "
		           "card: the chassis fans must push air through it, and here they do "
		           "not push enough. Otherwise its fan could not be read.");
		dr_action(f,
		          "Check the server's fans and their speed policy (BMC), blanking panels, "
		          "and that the card sits in a slot the vendor qualified for it; a passive "
		          "card in a desktop case overheats.");
	}
}

/* --- power, PCIe ------------------------------------------------------------------ */

static void
check_power(struct hgpu *g, struct dr_report *r)
{
	const struct gpu_device *d = g->now;
	double set = dev_has(d, GF_POWER_LIMIT_SET) ? d->v[GF_POWER_LIMIT_SET]
	                                            : dev_get(d, GF_POWER_LIMIT);
	double def = dev_get(d, GF_POWER_LIMIT_DEFAULT);
	struct dr_finding *f;

	if (isnan(set) || isnan(def) || def <= 0)
		return;
	if (set >= def - fmax(POWER_SLACK_W, def * 0.02))
		return;
	f = add(g, r, "health.power.limit_lowered", DR_INFO,
	        "power limit %.0f W, below its default of %.0f W", set, def);
	dr_evidence(f, "power limit %.0f W, default %.0f W", set, def);
	dr_meaning(f, "Someone (an administrator, a boot script, a scheduler's prolog) lowered "
	              "the power limit: under load the GPU holds itself there and runs slower.");
	if (d->vendor == VENDOR_NVIDIA)
		dr_action(f,
		          "If that was not meant: 'sudo nvidia-smi -i %u -pl %.0f' (root; it lasts "
		          "until the driver reloads, so find what sets it at boot).",
		          d->index, def);
	else
		dr_action(f,
		          "If that was not meant: raise it again as root (AMD: hwmon power1_cap, "
		          "or 'rocm-smi --resetpoweroverdrive'), and find what sets it at boot.");
}

static bool
link_down(const struct gpu_device *d, char *buf, size_t size)
{
	double gen = dev_get(d, GF_PCIE_GEN), gmax = dev_get(d, GF_PCIE_GEN_MAX);
	double wid = dev_get(d, GF_PCIE_WIDTH), wmax = dev_get(d, GF_PCIE_WIDTH_MAX);
	bool down = (!isnan(gen) && !isnan(gmax) && gen < gmax) ||
	            (!isnan(wid) && !isnan(wmax) && wid < wmax);

	if (!down)
		return false;
	if (!isnan(gen) && !isnan(gmax) && !isnan(wid) && !isnan(wmax))
		snprintf(buf, size, "gen %.0f of %.0f, x%.0f of x%.0f", gen, gmax, wid, wmax);
	else if (!isnan(gen) && !isnan(gmax))
		snprintf(buf, size, "gen %.0f of %.0f", gen, gmax);
	else
		snprintf(buf, size, "x%.0f of x%.0f", wid, wmax);
	return true;
}

static void
check_pcie(struct hgpu *g, struct dr_report *r)
{
	char link[80] = "", now_link[80], w[160];
	size_t down = 0;
	struct dr_finding *f;

	/* idle links train down to save power: only a loaded sample counts */
	for (size_t i = 0; i < g->n; i++)
		if (loaded_in(g->at[i]) && link_down(g->at[i], now_link, sizeof(now_link))) {
			down++;
			memcpy(link, now_link, sizeof(link));
		}
	if (down && most(down, g->loaded)) {
		f = add(g, r, "health.pcie.downtrained", DR_WARNING,
		        "PCIe link below its maximum under "
		        "load (%s)",
		        link);
		dr_evidence(f, "link %s while busy, %s", link, where(g, down, w, sizeof(w)));
		load_evidence(g, f);
		dr_meaning(f, "Under load the link should run at its full generation and width; "
		              "a lower one cuts host-to-GPU bandwidth.");
		dr_action(
		        f,
		        "Check the slot (an x16 card in an x8 or x4 slot, a slot shared with "
		        "an M.2 drive), the riser cable, the BIOS PCIe speed setting, then reseat "
		        "the card. 'sudo lspci -vv' shows LnkCap against LnkSta.");
	}

	/* replays: a counter since reset; a drop is a reset, not negative replays */
	double sum = 0, first_t = NAN, last_t = NAN, prev = NAN;
	size_t readings = 0;

	for (size_t i = 0; i < g->n; i++) {
		const struct gpu_device *a = g->at[i];

		if (!a || !dev_has(a, GF_PCIE_REPLAY))
			continue;
		if (!isnan(prev) && a->v[GF_PCIE_REPLAY] > prev)
			sum += a->v[GF_PCIE_REPLAY] - prev;
		prev = a->v[GF_PCIE_REPLAY];
		if (isnan(first_t))
			first_t = g->s[i]->time;
		last_t = g->s[i]->time;
		readings++;
	}
	if (readings < 2 || sum <= 0)
		return;
	double elapsed = last_t - first_t;
	double rate = sum / fmax(elapsed, REPLAY_MIN_S) * 60;

	if (rate <= REPLAY_PER_MIN)
		return;
	f = add(g, r, "health.pcie.replays", DR_WARNING, "%.0f PCIe replays per minute", rate);
	dr_evidence(f, "replay counter rose by %.0f over %.0f s (to %.0f)%s", sum, elapsed, prev,
	            elapsed < REPLAY_MIN_S ? ", counted over one minute" : "");
	dr_evidence(f, "DCGM's limit: %.0f per minute", REPLAY_PER_MIN);
	dr_meaning(f, "Each replay is a PCIe packet sent again after an error on the link: a "
	              "marginal link (riser, slot, signal integrity) that may drop to a lower "
	              "speed or fail.");
	dr_action(f,
	          "Look for PCIe AER errors in the kernel log; reseat the card, replace the "
	          "riser cable, try another slot; lowering the slot's PCIe generation in the BIOS "
	          "is a workaround.");
}

/* --- NVLink ------------------------------------------------------------------------ */

/* The data-link error counters of a link, together. */
static double
nvlink_errors(const struct nvlink_link *l)
{
	return (double)(l->v[NL_CRC_FLIT] + l->v[NL_CRC_DATA] + l->v[NL_REPLAY] +
	                l->v[NL_RECOVERY]);
}

/*
 * A link down that was up earlier in the window, or below a link that is up
 * (links are wired from 0: a hole is a link that lost its peer); and error
 * counters that rose across the window.
 */
static void
check_nvlink(struct hgpu *g, struct dr_report *r)
{
	const struct gpu_device *now = g->now;
	const struct gpu_device *first = NULL;
	char list[128] = "", w[160];
	unsigned top = 0, down = 0;
	struct dr_finding *f;

	for (size_t i = 0; i < g->n && !first; i++)
		if (g->at[i] && g->at[i]->nr_nvlink)
			first = g->at[i];
	if (!now || !now->nr_nvlink || !first)
		return;
	for (unsigned k = 0; k < now->nr_nvlink && k < GPU_MAX_NVLINK; k++)
		if (now->nvlink[k].active)
			top = k + 1;
	for (unsigned k = 0; k < now->nr_nvlink && k < GPU_MAX_NVLINK; k++) {
		const struct nvlink_link *l = &now->nvlink[k];
		bool was_up = first->nvlink[k].active;

		if (!l->present || l->active || (!was_up && k >= top))
			continue;
		down++;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%u",
		         down > 1 ? ", " : "", k);
	}
	if (down) {
		f = add(g, r, "health.nvlink.down", DR_WARNING, "NVLink link%s %s down",
		        down > 1 ? "s" : "", list);
		dr_evidence(f, "%.0f of its %u links up; link%s %s down %s",
		            now->v[GF_NVLINK_LINKS_ACTIVE], now->nr_nvlink, down > 1 ? "s" : "",
		            list,
		            g->n > 1 ? "(up earlier, or below a link that is up)"
		                     : "(below a link that is up)");
		dr_meaning(f, "Traffic between GPUs over that link falls back to the other links "
		              "or to PCIe: less bandwidth, and NCCL may fail or slow down.");
		dr_action(f,
		          "Software first: is the fabric manager running (systemctl status "
		          "nvidia-fabricmanager on NVSwitch systems) and of the driver's version? "
		          "'nvidia-smi nvlink -s' shows each link; a GPU reset or reboot retrains "
		          "links. If the link stays down, the board or its NVLink bridge needs "
		          "service.");
	}
	for (unsigned k = 0; k < now->nr_nvlink && k < GPU_MAX_NVLINK; k++) {
		const struct nvlink_link *a = &first->nvlink[k], *b = &now->nvlink[k];
		double rise = nvlink_errors(b) - nvlink_errors(a);

		if (a == b || !b->present || rise <= 0)
			continue;
		f = add(g, r, "health.nvlink.errors", DR_WARNING, "NVLink link %u errors rising",
		        k);
		dr_evidence(f,
		            "link %u: CRC flit %" PRIu64 ", CRC data %" PRIu64 ", replay %" PRIu64
		            ", recovery %" PRIu64 " now; +%.0f %s",
		            k, b->v[NL_CRC_FLIT], b->v[NL_CRC_DATA], b->v[NL_REPLAY],
		            b->v[NL_RECOVERY], rise, where(g, g->n, w, sizeof(w)));
		dr_meaning(f,
		           "Data on the link arrives corrupted and is sent again (replay) or the "
		           "link is retrained (recovery): a marginal link that costs bandwidth "
		           "and may go down.");
		dr_action(f,
		          "Software first: update the driver and fabric manager to matching "
		          "versions and reset the GPU; if the counters keep rising, reseat the "
		          "NVLink bridge or have the board serviced ('nvidia-smi nvlink -e' shows "
		          "the counters).");
		return; /* one finding a GPU: the first link that rose */
	}
}

/* --- memory errors ---------------------------------------------------------------- */

static void
check_memory(struct hgpu *g, struct dr_report *r)
{
	const struct gpu_device *d = g->now;
	struct dr_finding *f;
	double v;

	v = dev_get(d, GF_ECC_UNCORR_VOLATILE);
	if (v > 0) {
		f = add(g, r, "health.ecc.uncorrectable", DR_ERROR,
		        "%.0f uncorrectable ECC error%s since the driver loaded", v,
		        v == 1 ? "" : "s");
		dr_evidence(f, "volatile uncorrectable ECC errors: %.0f", v);
		if (dev_has(d, GF_ECC_UNCORR_AGGREGATE))
			dr_evidence(f, "aggregate (lifetime): %.0f", d->v[GF_ECC_UNCORR_AGGREGATE]);
		dr_meaning(f, "Memory returned data ECC could not correct: the programs using it "
		              "were killed (Xid 48/94/95), and their results may be wrong.");
		dr_action(f,
		          "Reset the GPU (or reboot) so the page is retired or the row remapped; "
		          "run 'dcgmi diag -r 3'. If errors return after that, RMA the GPU.");
	}

	double sbe = dev_get(d, GF_RETIRED_SBE), dbe = dev_get(d, GF_RETIRED_DBE);
	double total = (isnan(sbe) ? 0 : sbe) + (isnan(dbe) ? 0 : dbe);

	if (dev_get(d, GF_RETIRED_PENDING) > 0) {
		f = add(g, r, "health.retired.pending", DR_WARNING,
		        "a page retirement is pending: reset the GPU to apply it");
		dr_evidence(f, "retired pages pending: yes");
		dr_meaning(f, "A memory page was marked for retirement; until the GPU is reset it "
		              "is still in use and may fail again.");
		dr_action(f, "Drain the GPU, then 'sudo nvidia-smi -r -i %u' or reboot.", d->index);
	}
	if (!isnan(sbe) || !isnan(dbe)) {
		bool fail = total >= RETIRED_FAIL;

		if (fail || total >= RETIRED_NEAR || dbe > RETIRED_DBE_SOFT) {
			f = add(g, r, "health.retired.many", fail ? DR_ERROR : DR_WARNING,
			        "%.0f retired memory pages (DCGM fails a GPU at %.0f)", total,
			        RETIRED_FAIL);
			dr_evidence(
			        f, "retired pages: %.0f for single-bit errors, %.0f for double-bit",
			        isnan(sbe) ? 0 : sbe, isnan(dbe) ? 0 : dbe);
			dr_meaning(
			        f, "The GPU can retire a limited number of pages; %s",
			        fail ? "this one has reached DCGM's limit and should be replaced."
			             : "this one is approaching DCGM's limit.");
			dr_action(f, "%s",
			          fail ? "Contact the vendor for an RMA (dcgmi diag -r 3 gives "
			                 "the report they ask for)."
			               : "Watch the count; run 'dcgmi diag -r 3'.");
		}
	}

	if (dev_get(d, GF_REMAP_FAILURE) > 0) {
		f = add(g, r, "health.remap.failure", DR_ERROR, "row remapping failed");
		dr_evidence(f, "remapping failure: yes");
		dr_meaning(f,
		           "A memory row with errors could not be remapped (no spare rows left): "
		           "the memory can no longer repair itself.");
		dr_action(f, "Take the GPU out of service and contact the vendor for an RMA.");
	}
	if (dev_get(d, GF_REMAP_PENDING) > 0) {
		f = add(g, r, "health.remap.pending", DR_WARNING,
		        "a row remapping is pending: reset the GPU to apply it");
		dr_evidence(f, "remapping pending: yes");
		dr_meaning(f,
		           "A memory row was marked for remapping, applied at the next GPU reset.");
		dr_action(f, "Drain the GPU, then 'sudo nvidia-smi -r -i %u' or reboot.", d->index);
	}
	v = dev_get(d, GF_REMAP_UNCORR);
	if (v >= REMAP_UNCORR_FAIL) {
		f = add(g, r, "health.remap.limit", DR_ERROR,
		        "%.0f rows remapped for uncorrectable errors (DCGM fails a GPU at %.0f)", v,
		        REMAP_UNCORR_FAIL);
		dr_evidence(f, "remapped rows: %.0f uncorrectable, %.0f correctable", v,
		            dev_has(d, GF_REMAP_CORR) ? d->v[GF_REMAP_CORR] : 0);
		dr_meaning(f, "So many rows were remapped that the memory is failing.");
		dr_action(f, "Contact the vendor for an RMA.");
	}

	/* AMD RAS */
	v = dev_get(d, GF_RAS_UNCORR);
	if (v > 0) {
		f = add(g, r, "health.ras.uncorrectable", DR_ERROR,
		        "%.0f uncorrectable RAS error%s", v, v == 1 ? "" : "s");
		dr_evidence(f, "RAS uncorrectable errors (all blocks): %.0f", v);
		dr_meaning(f, "The GPU's RAS counters recorded errors it could not correct (memory "
		              "or an on-chip block); the driver may have reset the GPU.");
		dr_action(f,
		          "Read the kernel log for amdgpu RAS messages; reboot; if errors return, "
		          "contact the vendor (amdsmi metric --ecc shows each block).");
	}
	double first = NAN, last = NAN;
	size_t readings = 0;

	for (size_t i = 0; i < g->n; i++)
		if (g->at[i] && dev_has(g->at[i], GF_RAS_CORR)) {
			if (isnan(first))
				first = g->at[i]->v[GF_RAS_CORR];
			last = g->at[i]->v[GF_RAS_CORR];
			readings++;
		}
	if (readings >= 2 && last > first) {
		char w[160];

		f = add(g, r, "health.ras.correctable", DR_WARNING,
		        "correctable RAS errors rising (+%.0f)", last - first);
		dr_evidence(f, "RAS correctable errors from %.0f to %.0f %s", first, last,
		            where(g, readings, w, sizeof(w)));
		dr_meaning(f,
		           "Errors are being corrected as they happen: harmless one by one, but a "
		           "rising count often comes before uncorrectable ones.");
		dr_action(f,
		          "Watch the rate; check the cooling; if it keeps rising, run the vendor's "
		          "diagnostics and plan a replacement.");
	}
}

/* --- slow under load --------------------------------------------------------------- */

static void
check_clocks(struct hgpu *g, struct dr_report *r)
{
	size_t busy = 0, low_p = 0, low_clk = 0;
	double pstate = NAN, clk = NAN, cmax = NAN;
	struct dr_finding *f;
	char w[160];

	for (size_t i = 0; i < g->n; i++) {
		const struct gpu_device *a = g->at[i];

		if (!a || !dev_has(a, GF_UTIL_GPU) || a->v[GF_UTIL_GPU] <= BUSY_UTIL)
			continue;
		busy++;
		if (dev_has(a, GF_PSTATE) && a->v[GF_PSTATE] > 2) {
			low_p++;
			pstate = a->v[GF_PSTATE];
		}
		if (dev_has(a, GF_CLOCK_GRAPHICS) && dev_has(a, GF_CLOCK_MAX_GRAPHICS) &&
		    a->v[GF_CLOCK_MAX_GRAPHICS] > 0 &&
		    a->v[GF_CLOCK_GRAPHICS] < CLOCK_LOW_FRACTION * a->v[GF_CLOCK_MAX_GRAPHICS] &&
		    dev_has(a, GF_CLOCK_REASONS) &&
		    !((unsigned)a->v[GF_CLOCK_REASONS] &
		      ~(unsigned)(CR_GPU_IDLE | CR_DISPLAY_CLOCKS))) {
			low_clk++;
			clk = a->v[GF_CLOCK_GRAPHICS];
			cmax = a->v[GF_CLOCK_MAX_GRAPHICS];
		}
	}
	/* busy in most of the window, and slow in most of it */
	if (!most(busy, g->util_known))
		return;
	if (most(low_p, g->util_known)) {
		f = add(g, r, "health.clocks.low", DR_WARNING, "in P%.0f while busy", pstate);
		dr_evidence(f, "performance state P%.0f with utilisation above %.0f %% %s", pstate,
		            BUSY_UTIL, where(g, low_p, w, sizeof(w)));
	} else if (most(low_clk, g->util_known)) {
		f = add(g, r, "health.clocks.low", DR_WARNING,
		        "graphics clock %.0f MHz of %.0f MHz while busy, no throttle reason", clk,
		        cmax);
		dr_evidence(f,
		            "graphics clock below %.0f %% of its maximum with utilisation above "
		            "%.0f %% and no clock event reason %s",
		            CLOCK_LOW_FRACTION * 100, BUSY_UTIL, where(g, low_clk, w, sizeof(w)));
	} else {
		return;
	}
	dr_meaning(f, "A busy GPU should run in P0-P2 at high clocks. Held low with no throttle "
	              "reason, something set it so: a power-management setting, low application "
	              "or locked clocks, or a PCIe link stuck at a low speed keeping it waiting.");
	dr_action(f, "Check 'nvidia-smi -q -d PERFORMANCE,CLOCK' (locked clocks: 'sudo nvidia-smi "
	             "-rgc'; application clocks: '-rac'); the driver's power settings "
	             "(PowerMizer, AMD power_dpm_force_performance_level, Intel min/max "
	             "frequency); and the PCIe link (health.pcie.downtrained).");
}

/* --- the check ------------------------------------------------------------------ */

/* What the ok line may claim: what the latest sample could read. */
enum { A_THROTTLE = 1, A_TEMP = 2, A_ECC = 4, A_PCIE = 8 };

static unsigned
aspects(const struct gpu_device *d)
{
	unsigned m = 0;

	if (dev_has(d, GF_CLOCK_REASONS))
		m |= A_THROTTLE;
	if (dev_has(d, GF_TEMP_GPU))
		m |= A_TEMP;
	if (dev_has(d, GF_ECC_UNCORR_VOLATILE) || dev_has(d, GF_RETIRED_PENDING) ||
	    dev_has(d, GF_REMAP_PENDING) || dev_has(d, GF_RAS_UNCORR))
		m |= A_ECC;
	if ((dev_has(d, GF_PCIE_GEN) && dev_has(d, GF_PCIE_GEN_MAX)) ||
	    (dev_has(d, GF_PCIE_WIDTH) && dev_has(d, GF_PCIE_WIDTH_MAX)))
		m |= A_PCIE;
	return m;
}

/* "no harmful throttling; temperatures, ECC and PCIe link fine" for what m says was read. */
static void
aspects_text(unsigned m, struct strbuf *sb)
{
	static const struct {
		unsigned bit;
		const char *name;
	} parts[] = { { A_TEMP, "temperatures" }, { A_ECC, "ECC" }, { A_PCIE, "PCIe link" } };
	size_t n = 0, left = 0;

	for (size_t i = 0; i < ARRAY_SIZE(parts); i++)
		left += !!(m & parts[i].bit);
	if (m & A_THROTTLE)
		strbuf_addf(sb, "no harmful throttling%s", left ? "; " : "");
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
		if (!(m & parts[i].bit))
			continue;
		n++;
		strbuf_addf(sb, "%s%s", n == 1 ? "" : n == left ? " and " : ", ", parts[i].name);
	}
	if (left)
		strbuf_addstr(sb, " fine");
	if (!m)
		strbuf_addstr(sb, "nothing wrong in the little it reports");
}

void
dr_check_health(const struct dr_ctx *ctx, struct dr_report *r)
{
	const struct gpu_snapshot *s = ctx->snap;
	struct capped cap = { STRBUF_INIT, STRBUF_INIT, 0, 0 };
	bool *fine;

	if (!s || !s->nr_dev)
		return;
	fine = xcalloc(s->nr_dev, sizeof(*fine));
	for (size_t i = 0; i < s->nr_dev; i++) {
		const struct gpu_device *d = &s->dev[i];
		struct hgpu g;

		/* no permission, suspended, other errors: other checks say why */
		if (d->state != DEV_OK && d->state != DEV_LOST && d->state != DEV_RESET_REQUIRED &&
		    d->state != DEV_NOT_RESPONDING)
			continue;
		gpu_init(&g, ctx, d);
		if (!check_state(&g, r)) {
			check_throttle(&g, r, &cap);
			check_temps(&g, r);
			check_fan(&g, r);
			check_power(&g, r);
			check_pcie(&g, r);
			check_nvlink(&g, r);
			check_memory(&g, r);
			check_clocks(&g, r);
			fine[i] = !g.bad;
		}
		gpu_release(&g);
	}
	emit_capped(&cap, r);

	/* one ok line per model (and what could be read of it) */
	for (size_t i = 0; i < s->nr_dev; i++) {
		struct strbuf ids = STRBUF_INIT, what = STRBUF_INIT;
		unsigned m;
		size_t n = 0;

		if (!fine[i])
			continue;
		m = aspects(&s->dev[i]);
		for (size_t j = i; j < s->nr_dev; j++)
			if (fine[j] && !strcmp(s->dev[j].name, s->dev[i].name) &&
			    aspects(&s->dev[j]) == m) {
				strbuf_addf(&ids, "%s%u", n ? ", " : "", s->dev[j].index);
				fine[j] = false;
				n++;
			}
		aspects_text(m, &what);
		struct dr_finding *f =
		        dr_add(r, "health.ok", DR_OK, "%zu GPU%s (%s): %s", n, n == 1 ? "" : "s",
		               s->dev[i].name[0] ? s->dev[i].name : vendor_key(s->dev[i].vendor),
		               what.buf);
		dr_evidence(f, "GPU%s %s, %s", n == 1 ? "" : "s", ids.buf,
		            ctx->window && ctx->window->nr > 1 ? "over the window" : "one sample");
		strbuf_release(&ids);
		strbuf_release(&what);
	}
	free(fine);
	strbuf_release(&cap.gpus);
	strbuf_release(&cap.ev);
}

/* --- the catalog ------------------------------------------------------------------ */

const struct dr_explain dr_catalog_health[] = {
	{ "health.clocks.low", "A busy GPU is stuck in a low performance state",
	  "The GPU was busy (utilisation above 80 %) in most samples, yet ran in a\n"
	  "performance state above P2, or its graphics clock stayed under half its\n"
	  "maximum while the driver named no clock event reason. Busy GPUs normally run\n"
	  "in P0 (P2 for some compute loads) at high clocks. Causes, most likely first:\n"
	  "  1. Locked or application clocks set low: 'nvidia-smi -q -d CLOCK' shows\n"
	  "     them; 'sudo nvidia-smi -rgc' and '-rac' reset them.\n"
	  "  2. A driver power-management setting: PowerMizer 'adaptive' on a desktop,\n"
	  "     AMD power_dpm_force_performance_level 'low', Intel's gt_max_freq_mhz\n"
	  "     lowered.\n"
	  "  3. The 'utilisation' is a kernel that waits: a PCIe link stuck at a low\n"
	  "     speed (health.pcie.downtrained), or tiny kernels that never let the clock\n"
	  "     rise.\n"
	  "Compare with another GPU of the same model under the same load." },
	{ "health.ecc.uncorrectable", "Uncorrectable ECC errors since the driver loaded",
	  "The volatile uncorrectable ECC count (nvidia-smi -q -d ECC, 'Volatile ... \n"
	  "Uncorrectable') is above zero: memory returned data that ECC could not\n"
	  "correct. DCGM's memory watch fails a GPU on any volatile double-bit error.\n"
	  "The process using the memory was killed (Xid 48, or 94/95 with contained or\n"
	  "uncontained errors on Ampere and later). Reset the GPU (or reboot): the page\n"
	  "is retired or the row remapped at reset (health.retired.*, health.remap.*).\n"
	  "Then run 'dcgmi diag -r 3'. Errors that come back after the reset mean\n"
	  "failing memory: contact the vendor for an RMA." },
	{ "health.fan.no_reading", "A hot, busy GPU reports no fan",
	  "The GPU was hot (within 5 °C of its slowdown temperature, or 85 °C and more)\n"
	  "under load in most samples and reports no fan speed. Most often it is a\n"
	  "passively cooled data-centre card (A100, H100, L40S, MI300 ...): it has no fan\n"
	  "of its own and needs the chassis fans to push air through its heat sink. In\n"
	  "a server: check the fan speed policy in the BMC, failed chassis fans,\n"
	  "missing blanking panels, and that the card sits in a slot the vendor\n"
	  "qualified for it. In a desktop or workstation case a passive card overheats\n"
	  "unless a fan shroud blows through it. On a card with a fan, the fan reading\n"
	  "itself failed: look at the card." },
	{ "health.fan.stopped", "A fan reads 0 % while the GPU is hot and busy",
	  "The GPU was busy (utilisation above 50 %) and hot (within 15 °C of its\n"
	  "slowdown temperature, or above 80 °C) in most samples, with its fan at 0 %.\n"
	  "Consumer cards stop their fans when cool, never when hot. Causes: a custom\n"
	  "fan curve or a manual speed of 0 (nvidia-settings with CoolBits, LACT,\n"
	  "CoreCtrl, amdgpu pwm1_enable); a fan unplugged from the card or blocked by a\n"
	  "cable; a dead fan. Reset the fan control to automatic, then look at the fan\n"
	  "under load. A dead fan leads to thermal slowdowns (health.throttle.thermal)." },
	{ "health.gpu.lost", "A GPU fell off the bus",
	  "The driver lost the GPU (NVML_ERROR_GPU_IS_LOST; kernel log: 'Xid 79',\n"
	  "'GPU has fallen off the bus'). Every process on it failed; it is gone until\n"
	  "a reboot (a GPU reset rarely brings it back). The checklist, software first:\n"
	  "  1. The kernel log: the Xids before the 79 (a 119/120 GSP timeout, 48 or 94\n"
	  "     ECC, 62 ...) name the first failure; PCIe AER errors point at the link.\n"
	  "  2. The driver: a known bug of that release (update it), persistence mode\n"
	  "     off on a headless server, aggressive PCIe power saving (ASPM: try\n"
	  "     pcie_aspm=off).\n"
	  "  3. Power: the power supply's capacity for every GPU at full load, power\n"
	  "     cables seated one per connector with no splitters, a failed redundant\n"
	  "     supply. Transient spikes trip supplies that look big enough.\n"
	  "  4. The link: riser cables, the slot (try another), the BIOS (Above 4G\n"
	  "     decoding, a fixed PCIe generation).\n"
	  "  5. Heat: a GPU that overheats until it shuts down drops off the bus.\n"
	  "  6. Only then the card: swap it into a known-good machine." },
	{ "health.gpu.not_responding", "A GPU does not respond",
	  "The GPU did not answer before the deadline (--timeout): the driver is hung on\n"
	  "it, it is recovering from an error, or it is about to be lost. Try again; if\n"
	  "it stays unresponsive, read the kernel log for Xids and follow the checklist\n"
	  "of health.gpu.lost." },
	{ "health.gpu.reset_required", "A GPU needs a reset",
	  "The driver stopped the GPU after a fatal error (NVML_ERROR_RESET_REQUIRED):\n"
	  "an uncorrectable ECC error, a GSP firmware fault, a contained error the\n"
	  "driver could not recover. Stop its processes and reset it ('sudo nvidia-smi\n"
	  "-r -i N'; NVLink systems may need all GPUs reset together, or a reboot). If\n"
	  "it happens again, read the kernel log and follow health.gpu.lost." },
	{ "health.nvlink.down", "An NVLink link is down",
	  "A link of the GPU that was up earlier, or that lies below a link that is up\n"
	  "(links are wired from link 0 on), is down now. Traffic to that peer falls back\n"
	  "to the other links or to PCIe. Software first: on NVSwitch systems the fabric\n"
	  "manager must run, at the driver's version; a GPU reset or a reboot retrains\n"
	  "the links. 'nvidia-smi nvlink -s' shows each link. A link that stays down\n"
	  "after that points at the board or its NVLink bridge." },
	{ "health.nvlink.errors", "NVLink error counters are rising",
	  "The data-link layer's counters of a link (CRC errors of flow-control digits\n"
	  "and of data, replays, recoveries) rose across the samples: data arrives\n"
	  "corrupted and is sent again, or the link is retrained. Software first: a\n"
	  "driver and fabric manager of matching versions, a GPU reset; if they keep\n"
	  "rising, reseat the NVLink bridge or have the board serviced. 'nvidia-smi\n"
	  "nvlink -e' shows the counters." },
	{ "health.ok", "No hardware health problem seen",
	  "No harmful clock event reasons, temperatures below the GPU's thresholds, no\n"
	  "uncorrectable or pending memory errors, and the PCIe link at full speed\n"
	  "under load, as far as the driver reports them. One line stands for every\n"
	  "GPU of a model." },
	{ "health.pcie.downtrained", "A PCIe link runs below its maximum under load",
	  "The link ran at a lower generation or width than the GPU and the slot allow\n"
	  "while the GPU was busy (utilisation above 50 % in the same sample). Idle GPUs\n"
	  "train their links down to save power: that is never flagged. Under load a\n"
	  "lower link cuts host-to-GPU bandwidth. Causes: the slot (an x16 card in a\n"
	  "slot wired x8 or x4, lanes shared with an M.2 drive), a riser cable that\n"
	  "cannot hold the speed, a BIOS setting fixing the generation, dirt or a badly\n"
	  "seated card. 'sudo lspci -vv -s BUSID' shows LnkCap (possible) against LnkSta\n"
	  "(now); reseat the card or try another slot." },
	{ "health.pcie.replays", "The PCIe replay counter is rising",
	  "Each replay is a packet sent again after a link error. DCGM's PCIe watch\n"
	  "warns above 8 replays per minute (DCGM_LIMIT_MAX_PCIREPLAY_RATE, 'the maximum\n"
	  "recommended by RM') and wants a minute of samples: a shorter window's count is\n"
	  "spread over a minute. A single sample never gives a rate. A rising counter\n"
	  "means a marginal link: a riser cable, the slot, the card's contacts. Look for\n"
	  "PCIe AER errors in the kernel log, reseat the card, replace risers, try\n"
	  "another slot; forcing a lower PCIe generation in the BIOS is a workaround." },
	{ "health.power.limit_lowered", "A GPU's power limit is below its default",
	  "The enforced power limit is lower than the board's default: an\n"
	  "administrator, a boot script or a scheduler lowered it (to save power, or to\n"
	  "fit a power supply). Under load the GPU then holds that power and runs\n"
	  "slower (health.throttle.power_cap). NVIDIA: 'sudo nvidia-smi -i N -pl WATTS'\n"
	  "sets it (root; until the driver reloads), 'nvidia-smi -q -d POWER' shows the\n"
	  "default and the allowed range. AMD: hwmon power1_cap. If it comes back after\n"
	  "a reboot, find what sets it." },
	{ "health.ras.correctable", "AMD RAS correctable errors are rising",
	  "The GPU's RAS counters (ras/*_err_count, all blocks) counted more corrected\n"
	  "errors at the end of the window than at its start. Corrected errors do no\n"
	  "harm one by one, but a steady rise often comes before uncorrectable ones.\n"
	  "Check the cooling (hot memory errs more), watch the rate, and plan a\n"
	  "replacement if it keeps rising. One sample never shows a rise." },
	{ "health.ras.uncorrectable", "AMD RAS uncorrectable errors",
	  "The GPU's RAS counters recorded uncorrectable errors (memory or an on-chip\n"
	  "block). The driver may have reset the GPU (kernel log: 'amdgpu: RAS', 'GPU\n"
	  "reset'); affected work failed. Reboot; if the count grows again, contact the\n"
	  "vendor (amdsmi metric --ecc or rocm-smi --showrasinfo show each block)." },
	{ "health.remap.failure", "Row remapping failed",
	  "On A100, H100 and later, memory rows with errors are remapped to spares at\n"
	  "the next reset. A remapping failure means no spare was left for a bank: the\n"
	  "memory can no longer repair itself. DCGM fails the GPU. Take it out of\n"
	  "service and contact the vendor for an RMA." },
	{ "health.remap.limit", "Many rows remapped for uncorrectable errors",
	  "DCGM fails a GPU with 512 or more rows remapped for uncorrectable errors: the\n"
	  "memory is failing. Contact the vendor for an RMA." },
	{ "health.remap.pending", "A row remapping is pending",
	  "A memory row was marked for remapping after an error; the remap happens at\n"
	  "the next GPU reset. Until then the faulty row is still in use. Drain the GPU\n"
	  "and reset it ('sudo nvidia-smi -r -i N') or reboot." },
	{ "health.retired.many", "Many retired memory pages",
	  "GPUs before A100 retire memory pages with errors (dynamic page retirement).\n"
	  "DCGM fails a GPU at 63 retired pages (DCGM_LIMIT_MAX_RETIRED_PAGES; 60 in\n"
	  "older releases) and looks at the rate above 15 pages retired for double-bit\n"
	  "errors. doctor warns from 48 pages (three quarters of the limit) or above 15\n"
	  "double-bit pages, and errs at 63: then ask the vendor for an RMA, with the\n"
	  "report of 'dcgmi diag -r 3'." },
	{ "health.retired.pending", "A page retirement is pending",
	  "A memory page was marked for retirement after an error; it is retired at the\n"
	  "next GPU reset or reboot and stays in use until then. Drain the GPU and\n"
	  "reset it ('sudo nvidia-smi -r -i N')." },
	{ "health.temp.memory", "Memory near or over its maximum temperature",
	  "The memory temperature (HBM or GDDR) came within 5 °C of its maximum\n"
	  "operating temperature (a warning) or reached it (an error). Hot memory slows\n"
	  "the GPU and, over its maximum, corrupts data. Check the airflow over the\n"
	  "card and, on GDDR cards, the heat sink's thermal pads." },
	{ "health.temp.shutdown", "A GPU near its shutdown temperature",
	  "The GPU's temperature came within 5 °C of its shutdown temperature: there it\n"
	  "turns itself off, the programs on it fail and it may fall off the bus.\n"
	  "Lower the load and fix the cooling now: fans, airflow, dust, the room's or\n"
	  "the rack's intake temperature. That the slowdown did not hold it is itself a\n"
	  "sign of failed cooling." },
	{ "health.temp.slowdown", "A GPU near its slowdown temperature",
	  "The GPU's temperature came within 5 °C of its slowdown temperature (or its\n"
	  "margin, nvidia-smi's T.Limit, fell to 5 °C or less). Past it the GPU lowers\n"
	  "its clocks (health.throttle.thermal). Check fans, airflow, dust and the\n"
	  "intake temperature; 'nvidia-smi -q -d TEMPERATURE' lists the thresholds." },
	{ "health.throttle.app_clocks", "Clocks held at the application clocks",
	  "The clock event reason 'applications clocks setting': someone set\n"
	  "application clocks (nvidia-smi -ac) and the GPU does not boost above them.\n"
	  "Sometimes meant (reproducible benchmarks); otherwise 'sudo nvidia-smi -i N\n"
	  "-rac' resets them." },
	{ "health.throttle.hw_slowdown", "Hardware slowdown",
	  "The clock event reason 'HW slowdown': the board asserted its slowdown signal\n"
	  "and the GPU cut its clocks by half or more. Two causes: the GPU got too hot\n"
	  "(then HW thermal slowdown is often set too), or the power supply or its\n"
	  "cables could not deliver what the GPU drew (an external power brake, a\n"
	  "connector not seated, a splitter, an undersized supply). Check the power\n"
	  "cables and supply first, then cooling. Intel's PROCHOT and voltage-regulator\n"
	  "alarms and AMD's VRHOT/PROCHOT map to this reason." },
	{ "health.throttle.power_brake", "Hardware power brake",
	  "The clock event reason 'HW power brake slowdown': the system pulled the\n"
	  "GPU's power-brake signal because the platform cannot power it fully: a\n"
	  "failed or undersized power supply (a redundant one lost), a server's power\n"
	  "capping policy (BMC). Check the power supplies and the BMC's event log." },
	{ "health.throttle.power_cap", "Clocks held at the power limit",
	  "The clock event reason 'SW power cap': the GPU draws as much power as its\n"
	  "limit allows and lowers its clocks to stay there. At full load that is\n"
	  "normal: the limit is what keeps the GPU inside its power budget. It is worth\n"
	  "a look only when the limit was lowered (health.power.limit_lowered) or the\n"
	  "GPU is capped while barely busy. Intel's PL1/PL2/PL4 and AMD's PPT/TDC\n"
	  "limits map to this reason." },
	{ "health.throttle.sync_boost", "Clocks held by a sync-boost group",
	  "The clock event reason 'sync boost': the GPU is in a sync-boost group (DCGM)\n"
	  "and runs at the clocks of the group's slowest GPU. Find that GPU (hotter,\n"
	  "throttled, lower limit), or remove the group." },
	{ "health.throttle.thermal", "Slowed down for heat",
	  "The clock event reason 'SW thermal slowdown' (the driver holds the GPU under\n"
	  "its target temperature) or 'HW thermal slowdown' (the hardware's own alarm):\n"
	  "the GPU runs slower than it can because it is too hot. Check fans, airflow,\n"
	  "dust and the room's temperature; in servers the fan policy and blanking\n"
	  "panels. Intel's and AMD's thermal throttle reasons map to this reason." },
	{ NULL, NULL, NULL },
};
