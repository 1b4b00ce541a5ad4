/*
 * Intel i915 and xe: the render GT's actual, requested and maximum
 * frequency (and the media GT's), throttle reasons, and from hwmon, found
 * by label: energy and power, power limits, temperatures, fan and voltage.
 * Device utilisation comes from the i915/xe PMU when perf_event_open is
 * allowed; otherwise drm.c takes it from fdinfo. Intel memory totals are
 * ioctl-only, so they stay unknown: nothing here opens /dev.
 */
#include "backend/drm.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/err.h"
#include "core/fileio.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

/*
 * No GPU clock reaches 10 GHz: a larger reading is a driver bug (A380 on xe
 * reports rpa_freq 627200) and is dropped.
 */
#define MAX_MHZ 10000

#define PATH_LEN    256
#define MAX_REASONS 24
#define MAX_FANS    4
#define MAX_CTR     5 /* PMU counters: the render engine and up to four compute engines */

/* The frequency files of one GT, relative to the sysfs root ("" when absent). */
struct gt_freq {
	char act[PATH_LEN], cur[PATH_LEN], rp0[PATH_LEN], max[PATH_LEN];
};

/* One engine's PMU counter pair: i915 busy ns over enabled ns, xe active over total ticks. */
struct pmu_ctr {
	int fd, fd_total; /* fd_total is -1 for i915: the enabled time comes with the count */
	uint64_t prev, prev_total;
	bool have_prev;
};

enum pmu_state {
	PMU_UNTRIED,
	PMU_OPEN,
	PMU_CLOSED, /* xe: closed while the GT idles, so that it may enter C6 */
	PMU_FAILED, /* for good: pmu_note says why */
};

struct intel {
	bool xe;
	char card_dir[PATH_LEN]; /* "class/drm/card1": where i915 keeps its card-level files */
	struct gt_freq render, media;
	char gtidle[PATH_LEN]; /* xe: the render GT's gtidle directory */
	/* throttle reasons: "<dir>/<prefix><name>" for each name */
	char throttle[PATH_LEN];
	const char *prefix; /* "reason_" (xe) or "throttle_reason_" (i915) */
	bool reasons_file;  /* xe's throttle/reasons lists the active ones in one read */
	char reason[MAX_REASONS][24];
	unsigned nr_reason;
	uint64_t supported; /* the clock_reason bits this GPU can report */
	/* hwmon, relative to the device directory; channels are -1 when absent */
	char hwmon[64];
	int energy, limit_max, limit_cap, temp_gpu, temp_mem, volt;
	int fan[MAX_FANS];
	unsigned nr_fan;
	/* the previous energy reading, for power */
	bool have_energy;
	uint64_t last_energy;
	double last_time;
	/* the PMU */
	enum pmu_state pmu;
	char pmu_dir[PATH_LEN];
	int pmu_type, pmu_cpu;
	struct pmu_ctr ctr[MAX_CTR];
	unsigned nr_ctr;
	/*
	 * Why utilisation does not come from the PMU (a static string), for a
	 * note beside drm.c's "fdinfo" once drm.h has a way to carry it.
	 */
	const char *pmu_note;
};

/* Driver-given throttle reason names and what each means in NVML's terms. */
static const struct {
	const char *name;
	uint64_t bit;
} reason_bits[] = {
	/* power limits, enforced by the firmware: NVIDIA's "SW power cap" */
	{ "pl1", CR_SW_POWER_CAP },
	{ "pl2", CR_SW_POWER_CAP },
	{ "pl4", CR_SW_POWER_CAP }, /* "PL4, Iccmax etc." */
	{ "psys_pl1", CR_SW_POWER_CAP },
	{ "psys_pl2", CR_SW_POWER_CAP },
	{ "iccmax", CR_SW_POWER_CAP },
	/*
	 * The GT's own thermal limit: the firmware lowers the clock step by
	 * step to hold the die under its set point, as NVIDIA's driver does
	 * for "SW thermal slowdown"; the hardware alarms below (PROCHOT, VR
	 * alerts) are what NVML calls HW slowdown, so nothing maps to HW
	 * thermal.
	 */
	{ "thermal", CR_SW_THERMAL },
	{ "soc_thermal", CR_SW_THERMAL },
	{ "mem_thermal", CR_SW_THERMAL },
	{ "soc_avg_thermal", CR_SW_THERMAL },
	/*
	 * alarms from outside the GT's own control loop (a hot package, the
	 * running-average thermal limit, the voltage regulators): what NVML
	 * counts as HW slowdown
	 */
	{ "prochot", CR_HW_SLOWDOWN },
	{ "ratl", CR_HW_SLOWDOWN },
	{ "vr_thermalert", CR_HW_SLOWDOWN },
	{ "vr_tdc", CR_HW_SLOWDOWN },
	{ "vr_thermal", CR_HW_SLOWDOWN },
	{ "fastvmode", CR_HW_SLOWDOWN },
	/* the platform's power supply at its critical limit */
	{ "psys_crit", CR_HW_POWER_BRAKE },
	/* "p0_freq" (held at P0, its maximum) slows nothing: named only */
};

static uint64_t
reason_bit(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(reason_bits); i++)
		if (!strcmp(name, reason_bits[i].name))
			return reason_bits[i].bit;
	return 0;
}

/* A frequency file's value in MHz, or false when absent or implausible. */
static bool
read_mhz(const struct gs_config *cfg, const char *rel, double *mhz)
{
	int64_t v;

	if (file_read_s64(cfg->sysfs_root, rel, &v, NULL) < 0 || v < 0 || v > MAX_MHZ)
		return false;
	*mhz = (double)v;
	return true;
}

static bool
dev_exists(const struct gs_config *cfg, const struct drm_card *card, const char *rel)
{
	char path[PATH_LEN * 2];

	path_fmt(path, sizeof(path), "%s/%s", card->dev, rel);
	return file_exists(cfg->sysfs_root, path);
}

/* "<dir>/<prefix><name><suffix>" into f, or "" when that file does not exist. */
static void
freq_file(const struct gs_config *cfg, char *f, const char *dir, const char *prefix,
          const char *name, const char *suffix)
{
	path_fmt(f, PATH_LEN, "%s/%s%s%s", dir, prefix, name, suffix);
	if (!file_exists(cfg->sysfs_root, f))
		f[0] = '\0';
}

/* Does directory rel (under the sysfs root) hold an entry named name? */
static bool
has_entry(const struct gs_config *cfg, const char *rel, const char *name)
{
	char path[PATH_LEN * 2];

	path_fmt(path, sizeof(path), "%s/%s", rel, name);
	return file_exists(cfg->sysfs_root, path);
}

/*
 * Is xe's tile0/gtN the render GT (1), the media GT (0), or unknown (-1)?
 * gtidle/name says "gt0-rc" or "gt1-mc"; older kernels are told apart by
 * their engines (render and compute engines live on the render GT).
 */
static int
xe_gt_role(const struct gs_config *cfg, const char *gt)
{
	char rel[PATH_LEN * 2], name[32];
	size_t n;

	path_fmt(rel, sizeof(rel), "%s/gtidle/name", gt);
	if (file_read_line(cfg->sysfs_root, rel, name, sizeof(name), NULL) == 0 &&
	    (n = strlen(name)) > 3) {
		if (!strcmp(name + n - 3, "-rc"))
			return 1;
		if (!strcmp(name + n - 3, "-mc"))
			return 0;
	}
	path_fmt(rel, sizeof(rel), "%s/engines", gt);
	if (has_entry(cfg, rel, "rcs") || has_entry(cfg, rel, "ccs"))
		return 1;
	if (has_entry(cfg, rel, "vcs") || has_entry(cfg, rel, "vecs"))
		return 0;
	return -1;
}

static void
xe_freq(const struct gs_config *cfg, struct gt_freq *f, const char *gt)
{
	char dir[PATH_LEN];

	path_fmt(dir, sizeof(dir), "%s/freq0", gt);
	freq_file(cfg, f->act, dir, "", "act", "_freq");
	freq_file(cfg, f->cur, dir, "", "cur", "_freq");
	freq_file(cfg, f->rp0, dir, "", "rp0", "_freq");
	freq_file(cfg, f->max, dir, "", "max", "_freq");
}

/* xe: the GTs of tile 0 (a second tile repeats the first). */
static void
scan_xe_gts(const struct gs_config *cfg, const struct drm_card *card, struct intel *p)
{
	bool have_render = false, have_media = false;

	for (int i = 0; i < 8; i++) {
		char gt[PATH_LEN];
		int role;

		path_fmt(gt, sizeof(gt), "%s/tile0/gt%d", card->dev, i);
		if (!file_exists(cfg->sysfs_root, gt))
			continue;
		role = xe_gt_role(cfg, gt);
		if (role < 0)
			role = i == 0; /* gt0 renders, a second GT is the media GT */
		if (role == 1 && !have_render) {
			xe_freq(cfg, &p->render, gt);
			path_fmt(p->gtidle, sizeof(p->gtidle), "%s/gtidle", gt);
			path_fmt(p->throttle, sizeof(p->throttle), "%s/freq0/throttle", gt);
			have_render = true;
		} else if (role == 0 && !have_media) {
			xe_freq(cfg, &p->media, gt);
			have_media = true;
		}
	}
	p->prefix = "reason_";
}

/*
 * i915: gt/gt0/rps_*_freq_mhz (5.19+, one set per GT), else the card-level
 * gt_*_freq_mhz of the first GT. i915 shows no current media frequency on
 * DG2 (only media_RP0/RPn); Meteor Lake's media GT is gt/gt1, but sysfs does
 * not tell it from Ponte Vecchio's second render tile, so it is not read.
 */
static void
scan_i915_gts(const struct gs_config *cfg, struct intel *p)
{
	char gt[PATH_LEN];

	path_fmt(gt, sizeof(gt), "%s/gt/gt0", p->card_dir);
	if (has_entry(cfg, gt, "rps_act_freq_mhz")) {
		freq_file(cfg, p->render.act, gt, "rps_", "act", "_freq_mhz");
		freq_file(cfg, p->render.cur, gt, "rps_", "cur", "_freq_mhz");
		freq_file(cfg, p->render.rp0, gt, "rps_", "RP0", "_freq_mhz");
		freq_file(cfg, p->render.max, gt, "rps_", "max", "_freq_mhz");
	} else {
		freq_file(cfg, p->render.act, p->card_dir, "gt_", "act", "_freq_mhz");
		freq_file(cfg, p->render.cur, p->card_dir, "gt_", "cur", "_freq_mhz");
		freq_file(cfg, p->render.rp0, p->card_dir, "gt_", "RP0", "_freq_mhz");
		freq_file(cfg, p->render.max, p->card_dir, "gt_", "max", "_freq_mhz");
	}
	freq_file(cfg, p->media.rp0, gt, "media_", "RP0", "_freq_mhz");
	p->prefix = "throttle_reason_";
	if (has_entry(cfg, gt, "throttle_reason_status"))
		str_copy(p->throttle, sizeof(p->throttle), gt);
	else if (has_entry(cfg, p->card_dir, "throttle_reason_status"))
		str_copy(p->throttle, sizeof(p->throttle), p->card_dir);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The reason names of the throttle directory, sorted, and the bits they can set. */
static void
scan_reasons(const struct gs_config *cfg, struct intel *p)
{
	char dir[4096];
	size_t plen = strlen(p->prefix);
	struct dirent *de;
	DIR *d;

	if (!p->throttle[0])
		return;
	d = opendir(path_join(dir, sizeof(dir), cfg->sysfs_root, p->throttle));
	if (!d)
		return;
	while ((de = readdir(d))) {
		const char *name = de->d_name + plen;

		if (!strcmp(de->d_name, "reasons") && p->xe) {
			p->reasons_file = true;
			continue;
		}
		if (strncmp(de->d_name, p->prefix, plen) || !strcmp(name, "status") ||
		    strlen(name) >= sizeof(p->reason[0]) || p->nr_reason == MAX_REASONS)
			continue;
		str_copy(p->reason[p->nr_reason++], sizeof(p->reason[0]), name);
		p->supported |= reason_bit(name);
	}
	closedir(d);
	qsort(p->reason, p->nr_reason, sizeof(p->reason[0]), cmp_str);
}

/*
 * The hwmon channel of <type>N_<attr> whose label is label, else (plain >= 0)
 * the unlabelled channel plain when it has that attribute (i915 labels
 * nothing), else -1. Never by index alone: xe moves channels between kernels.
 */
static int
hw_channel(const struct gs_config *cfg, const struct drm_card *card, const struct intel *p,
           const char *type, const char *attr, const char *label, int plain)
{
	char rel[128];
	int ch = -1;

	if (!p->hwmon[0])
		return -1;
	if (label)
		ch = drm_hwmon_channel(cfg, card, p->hwmon, type, label);
	if (ch < 0 && plain >= 0) {
		path_fmt(rel, sizeof(rel), "%s/%s%d_label", p->hwmon, type, plain);
		if (!dev_exists(cfg, card, rel))
			ch = plain;
	}
	if (ch < 0)
		return -1;
	path_fmt(rel, sizeof(rel), "%s/%s%d_%s", p->hwmon, type, ch, attr);
	return dev_exists(cfg, card, rel) ? ch : -1;
}

/* Card first, then package, then i915's unlabelled channel 1. */
static int
hw_card_pkg(const struct gs_config *cfg, const struct drm_card *card, const struct intel *p,
            const char *type, const char *attr)
{
	int ch = hw_channel(cfg, card, p, type, attr, "card", -1);

	if (ch < 0)
		ch = hw_channel(cfg, card, p, type, attr, "pkg", -1);
	if (ch < 0)
		ch = hw_channel(cfg, card, p, type, attr, NULL, 1);
	return ch;
}

static int
hw_read(const struct gs_config *cfg, const struct drm_card *card, const struct intel *p,
        const char *type, int ch, const char *attr, int64_t *v)
{
	char rel[128];

	if (ch < 0)
		return E_NOTFOUND;
	path_fmt(rel, sizeof(rel), "%s/%s%d_%s", p->hwmon, type, ch, attr);
	return drm_read_s64(cfg, card, rel, v);
}

static void
scan_hwmon(const struct gs_config *cfg, const struct drm_card *card, struct intel *p,
           struct gpu_device *dev)
{
	int64_t v;
	int ch;

	if (!drm_hwmon(cfg, card, p->hwmon, sizeof(p->hwmon)))
		p->hwmon[0] = '\0';
	/*
	 * Energy of the card, else of the package. The 6.16 B580 lists a card
	 * counter that stays 0 beside a counting package one: a card counter at
	 * 0 is not counting. The choice is kept, so that power is always the
	 * difference of one counter.
	 */
	p->energy = hw_channel(cfg, card, p, "energy", "input", "card", -1);
	if (p->energy >= 0 && (hw_read(cfg, card, p, "energy", p->energy, "input", &v) < 0 || !v))
		p->energy = -1;
	if (p->energy < 0)
		p->energy = hw_channel(cfg, card, p, "energy", "input", "pkg", -1);
	if (p->energy < 0)
		p->energy = hw_channel(cfg, card, p, "energy", "input", NULL, 1);
	/* the sustained limit (PL1, power*_max), else the burst limit (PL2, power*_cap) */
	p->limit_max = hw_card_pkg(cfg, card, p, "power", "max");
	p->limit_cap = hw_card_pkg(cfg, card, p, "power", "cap");
	/*
	 * power*_crit is the reactive critical (I1) limit: power averaged over
	 * a short window never goes above it, so no other limit can be set
	 * higher to any effect; it stands as the highest limit (as LACT shows it).
	 */
	ch = hw_card_pkg(cfg, card, p, "power", "crit");
	if (hw_read(cfg, card, p, "power", ch, "crit", &v) == 0 && v > 0)
		dev_set(dev, GF_POWER_LIMIT_MAX, (double)v / 1e6);
	/* power*_rated_max: the card's default (TDP) limit; 0 means not given */
	ch = hw_card_pkg(cfg, card, p, "power", "rated_max");
	if (hw_read(cfg, card, p, "power", ch, "rated_max", &v) == 0 && v > 0)
		dev_set(dev, GF_POWER_LIMIT_DEFAULT, (double)v / 1e6);
	/* i915 has one unlabelled temperature, of the package */
	p->temp_gpu = hw_channel(cfg, card, p, "temp", "input", "pkg", 1);
	p->temp_mem = hw_channel(cfg, card, p, "temp", "input", "vram", -1);
	p->volt = hw_channel(cfg, card, p, "in", "input", "pkg", 0);
	for (int i = 1; i <= 8 && p->nr_fan < MAX_FANS; i++) {
		char rel[128];

		path_fmt(rel, sizeof(rel), "%s/fan%d_input", p->hwmon, i);
		if (p->hwmon[0] && dev_exists(cfg, card, rel))
			p->fan[p->nr_fan++] = i;
	}
}

static int
intel_scan(const struct gs_config *cfg, const struct drm_card *card, struct gpu_device *dev,
           void **priv)
{
	struct intel *p;
	double mhz;
	size_t n;

	if (drm_suspended(cfg, card))
		return 0; /* drm.c never asks; and if it did, nothing would wake the GPU */
	p = xcalloc(1, sizeof(*p));
	p->xe = !strcmp(card->driver, "xe");
	for (unsigned i = 0; i < MAX_CTR; i++)
		p->ctr[i].fd = p->ctr[i].fd_total = -1;
	/* the card directory is the device link's parent ("class/drm/card1") */
	str_copy(p->card_dir, sizeof(p->card_dir), card->dev);
	n = strlen(p->card_dir);
	if (n > 7 && !strcmp(p->card_dir + n - 7, "/device"))
		p->card_dir[n - 7] = '\0';
	else
		path_fmt(p->card_dir, sizeof(p->card_dir), "class/drm/%s", card->name);

	if (p->xe)
		scan_xe_gts(cfg, card, p);
	else
		scan_i915_gts(cfg, p);
	scan_reasons(cfg, p);
	if (p->gtidle[0])
		p->supported |= CR_GPU_IDLE;

	/* RP0 is the highest frequency the GT can run at; max is only a setting */
	if (read_mhz(cfg, p->render.rp0, &mhz) || read_mhz(cfg, p->render.max, &mhz)) {
		if (mhz > 0) {
			dev_set(dev, GF_CLOCK_MAX_GRAPHICS, mhz);
			dev_set(dev, GF_CLOCK_MAX_SM, mhz);
		}
	}
	if ((read_mhz(cfg, p->media.rp0, &mhz) || read_mhz(cfg, p->media.max, &mhz)) && mhz > 0)
		dev_set(dev, GF_CLOCK_MAX_VIDEO, mhz);

	scan_hwmon(cfg, card, p, dev);
	*priv = p;
	return 0;
}

static void
read_clocks(const struct gs_config *cfg, const struct intel *p, struct gpu_device *dev)
{
	double mhz;

	/* 0 while the GT sleeps in C6: its clock is stopped, a true 0 MHz */
	if (read_mhz(cfg, p->render.act, &mhz)) {
		dev_set(dev, GF_CLOCK_GRAPHICS, mhz);
		dev_set(dev, GF_CLOCK_SM, mhz);
	}
	if (read_mhz(cfg, p->render.cur, &mhz))
		dev_set(dev, GF_CLOCK_GRAPHICS_REQ, mhz);
	if (read_mhz(cfg, p->media.act, &mhz))
		dev_set(dev, GF_CLOCK_VIDEO, mhz);
}

/* Is the render GT asleep in C6 (xe only; false when unknown)? */
static bool
gt_in_c6(const struct gs_config *cfg, const struct intel *p)
{
	char rel[PATH_LEN * 2], st[32];

	if (!p->gtidle[0])
		return false;
	path_fmt(rel, sizeof(rel), "%s/idle_status", p->gtidle);
	return file_read_line(cfg->sysfs_root, rel, st, sizeof(st), NULL) == 0 &&
	       !strcmp(st, "gt-c6");
}

static void
add_reason(const char *name, uint64_t *mask, struct strbuf *detail)
{
	*mask |= reason_bit(name);
	strbuf_addf(detail, "%s%s", detail->len ? ", " : "", name);
}

/* Which reasons hold the clock down, in the driver's words; false when none can be read. */
static bool
read_reasons(const struct gs_config *cfg, const struct intel *p, uint64_t *mask,
             struct strbuf *detail)
{
	char rel[PATH_LEN * 2], line[256];
	int64_t v;

	if (!p->throttle[0])
		return false;
	if (p->reasons_file) {
		/* "pl1 prochot", or "none": one register read, not one per reason */
		path_fmt(rel, sizeof(rel), "%s/reasons", p->throttle);
		if (file_read_line(cfg->sysfs_root, rel, line, sizeof(line), NULL) == 0) {
			for (char *save = NULL, *tok = strtok_r(line, " \t", &save); tok;
			     tok = strtok_r(NULL, " \t", &save))
				if (strcmp(tok, "none"))
					add_reason(tok, mask, detail);
			return true;
		}
	}
	path_fmt(rel, sizeof(rel), "%s/%sstatus", p->throttle, p->prefix);
	if (file_read_s64(cfg->sysfs_root, rel, &v, NULL) == 0 && v == 0)
		return true; /* not throttled: no need to read each reason */
	for (unsigned i = 0; i < p->nr_reason; i++) {
		path_fmt(rel, sizeof(rel), "%s/%s%s", p->throttle, p->prefix, p->reason[i]);
		if (file_read_s64(cfg->sysfs_root, rel, &v, NULL) == 0 && v)
			add_reason(p->reason[i], mask, detail);
	}
	return p->nr_reason > 0;
}

static void
read_throttle(const struct gs_config *cfg, const struct intel *p, struct gpu_device *dev)
{
	struct strbuf detail = STRBUF_INIT;
	uint64_t mask = 0;
	bool have = read_reasons(cfg, p, &mask, &detail);

	if (gt_in_c6(cfg, p)) {
		mask |= CR_GPU_IDLE;
		have = true;
	}
	if (have) {
		dev_set(dev, GF_CLOCK_REASONS, (double)mask);
		dev_set(dev, GF_CLOCK_REASONS_SUPPORTED, (double)p->supported);
		str_copy(dev->throttle_detail, sizeof(dev->throttle_detail), detail.buf);
	}
	strbuf_release(&detail);
}

/* The time of this reading: the fixed clock of tests, else the monotonic clock. */
static double
sample_time(const struct gs_config *cfg)
{
	return cfg->fixed_time > 0 ? cfg->fixed_time : clock_mono();
}

static void
read_hwmon(const struct gs_config *cfg, const struct drm_card *card, struct intel *p,
           struct gpu_device *dev)
{
	int64_t v;

	if (hw_read(cfg, card, p, "energy", p->energy, "input", &v) == 0 && v >= 0) {
		double now = sample_time(cfg);

		dev_set(dev, GF_ENERGY, (double)v / 1e6);
		/* power is the energy used since the previous reading: none on the first */
		if (p->have_energy && now > p->last_time && (uint64_t)v >= p->last_energy)
			dev_set(dev, GF_POWER_DRAW,
			        (double)((uint64_t)v - p->last_energy) / 1e6 /
			                (now - p->last_time));
		p->have_energy = true;
		p->last_energy = (uint64_t)v;
		p->last_time = now;
	}
	/* PL1 reads 0 when it is disabled: then the burst limit is what holds */
	if ((hw_read(cfg, card, p, "power", p->limit_max, "max", &v) == 0 && v > 0) ||
	    (hw_read(cfg, card, p, "power", p->limit_cap, "cap", &v) == 0 && v > 0))
		dev_set(dev, GF_POWER_LIMIT, (double)v / 1e6);
	if (hw_read(cfg, card, p, "temp", p->temp_gpu, "input", &v) == 0)
		dev_set(dev, GF_TEMP_GPU, (double)v / 1000);
	if (hw_read(cfg, card, p, "temp", p->temp_mem, "input", &v) == 0)
		dev_set(dev, GF_TEMP_MEM, (double)v / 1000);
	if (hw_read(cfg, card, p, "in", p->volt, "input", &v) == 0 && v > 0)
		dev_set(dev, GF_VOLTAGE_GFX, (double)v);
	/*
	 * The first fan that turns (a B580 on 6.16 reads fan1 0 and fan2 418
	 * RPM), else 0 when every fan stands still.
	 */
	for (unsigned i = 0; i < p->nr_fan; i++)
		if (hw_read(cfg, card, p, "fan", p->fan[i], "input", &v) == 0 && v >= 0) {
			if (!dev_has(dev, GF_FAN_RPM) || (dev->v[GF_FAN_RPM] == 0 && v > 0))
				dev_set(dev, GF_FAN_RPM, (double)v);
		}
}

/* --- the PMU ------------------------------------------------------------------------------ */

/* Place value into the bits of config that format file "config:LO-HI" (or "config:N") names. */
static int
pmu_place(const struct gs_config *cfg, const char *dir, const char *term, uint64_t value,
          uint64_t *config)
{
	char rel[PATH_LEN * 2], fmt[64];
	unsigned lo, hi;
	uint64_t mask;

	path_fmt(rel, sizeof(rel), "%s/format/%s", dir, term);
	if (file_read_line(cfg->sysfs_root, rel, fmt, sizeof(fmt), NULL) < 0)
		return E_NOTFOUND;
	if (sscanf(fmt, "config:%u-%u", &lo, &hi) != 2) {
		if (sscanf(fmt, "config:%u", &lo) != 1)
			return E_PARSE;
		hi = lo;
	}
	if (hi < lo || hi > 63)
		return E_PARSE;
	mask = hi - lo == 63 ? ~(uint64_t)0 : (((uint64_t)1 << (hi - lo + 1)) - 1);
	*config |= (value & mask) << lo;
	return 0;
}

/*
 * The config of event name ("rcs0-busy": "config=0x0"; xe's
 * "engine-active-ticks": "event=0x02") with extra terms such as
 * "engine_class=4,engine_instance=0,gt=0", each placed as format/ says.
 */
static int
pmu_config(const struct gs_config *cfg, const char *dir, const char *name, const char *extra,
           uint64_t *config)
{
	char rel[PATH_LEN * 2], terms[256];
	char *save = NULL;

	path_fmt(rel, sizeof(rel), "%s/events/%s", dir, name);
	if (file_read_line(cfg->sysfs_root, rel, terms, sizeof(terms), NULL) < 0)
		return E_NOTFOUND;
	if (extra && *extra)
		snprintf(terms + strlen(terms), sizeof(terms) - strlen(terms), ",%s", extra);
	*config = 0;
	for (char *t = strtok_r(terms, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '='), *end;
		uint64_t v = 1;

		if (eq) {
			*eq = '\0';
			errno = 0;
			v = strtoull(eq + 1, &end, 0);
			if (errno || end == eq + 1 || *end)
				return E_PARSE;
		}
		if (!strcmp(t, "config"))
			*config |= v;
		else if (pmu_place(cfg, dir, t, v, config) < 0)
			return E_PARSE;
	}
	return 0;
}

static int
perf_open(int type, uint64_t config, int cpu)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = (uint32_t)type;
	a.size = sizeof(a);
	a.config = config;
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED;
	/* an uncore PMU: every process, counted on one CPU of its cpumask */
	return (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void
pmu_close(struct intel *p)
{
	for (unsigned i = 0; i < p->nr_ctr; i++) {
		if (p->ctr[i].fd >= 0)
			close(p->ctr[i].fd);
		if (p->ctr[i].fd_total >= 0)
			close(p->ctr[i].fd_total);
		p->ctr[i].fd = p->ctr[i].fd_total = -1;
		p->ctr[i].have_prev = false;
	}
	p->nr_ctr = 0;
}

/* The PMU's directory: xe_<bdf>, i915_<bdf> (discrete), or i915 (the integrated GPU). */
static bool
pmu_find(const struct gs_config *cfg, const struct drm_card *card, struct intel *p)
{
	char bdf[sizeof(card->pci_addr)];

	str_copy(bdf, sizeof(bdf), card->pci_addr);
	for (char *c = bdf; *c; c++)
		if (*c == ':')
			*c = '_'; /* perf reserves ':' */
	path_fmt(p->pmu_dir, sizeof(p->pmu_dir), "bus/event_source/devices/%s_%s",
	         p->xe ? "xe" : "i915", bdf);
	if (card->pci_addr[0] && file_exists(cfg->sysfs_root, p->pmu_dir))
		return true;
	/* i915 names an integrated GPU's PMU plainly; that GPU sits at 00:02.0 */
	path_fmt(p->pmu_dir, sizeof(p->pmu_dir), "bus/event_source/devices/i915");
	return !p->xe && !strcmp(card->pci_addr, "0000:00:02.0") &&
	       file_exists(cfg->sysfs_root, p->pmu_dir);
}

/* Open one counter; returns 0, or the errno of the failure. */
static int
pmu_add(const struct gs_config *cfg, struct intel *p, const char *busy, const char *total,
        const char *extra)
{
	struct pmu_ctr *c = &p->ctr[p->nr_ctr];
	uint64_t config;
	int e;

	if (p->nr_ctr == MAX_CTR || pmu_config(cfg, p->pmu_dir, busy, extra, &config) < 0)
		return ENOENT;
	c->fd = perf_open(p->pmu_type, config, p->pmu_cpu);
	if (c->fd < 0)
		return errno;
	c->fd_total = -1;
	if (total) {
		if (pmu_config(cfg, p->pmu_dir, total, extra, &config) < 0) {
			e = ENOENT;
		} else {
			c->fd_total = perf_open(p->pmu_type, config, p->pmu_cpu);
			e = c->fd_total < 0 ? errno : 0;
		}
		if (e) {
			close(c->fd);
			c->fd = -1;
			return e;
		}
	}
	c->have_prev = false;
	p->nr_ctr++;
	return 0;
}

static const char *
pmu_errno_note(int e)
{
	if (e == EACCES || e == EPERM)
		return "PMU: permission denied (needs CAP_PERFMON or perf_event_paranoid <= 0)";
	if (e == ENOENT || e == ENODEV || e == EOPNOTSUPP)
		return "PMU: no engine counters";
	return "PMU: cannot be opened";
}

/*
 * Open the busy counters of the render engine and of the compute engines
 * that exist. A failure of the render counter is final, and its reason is
 * kept; missing compute engines are not failures.
 */
static void
pmu_open(const struct gs_config *cfg, const struct drm_card *card, struct intel *p)
{
	char rel[PATH_LEN * 2], cpus[64];
	int64_t type;
	int e;

	if (strcmp(cfg->sysfs_root, "/sys")) {
		/* a fixture tree's PMU files describe no PMU of this machine */
		p->pmu = PMU_FAILED;
		p->pmu_note = "PMU: not read from a sysfs tree other than /sys";
		return;
	}
	if (!pmu_find(cfg, card, p)) {
		p->pmu = PMU_FAILED;
		p->pmu_note = "PMU: none for this GPU (older kernel?)";
		return;
	}
	path_fmt(rel, sizeof(rel), "%s/type", p->pmu_dir);
	if (file_read_s64(cfg->sysfs_root, rel, &type, NULL) < 0 || type < 0 || type > 0x7fffffff) {
		p->pmu = PMU_FAILED;
		p->pmu_note = "PMU: unreadable type";
		return;
	}
	p->pmu_type = (int)type;
	path_fmt(rel, sizeof(rel), "%s/cpumask", p->pmu_dir);
	if (file_read_line(cfg->sysfs_root, rel, cpus, sizeof(cpus), NULL) == 0) {
		long cpu = strtol(cpus, NULL, 10); /* the first CPU of "0" or "0-3" */

		p->pmu_cpu = cpu > 0 && cpu < 65536 ? (int)cpu : 0;
	}
	if (p->xe) {
		e = pmu_add(cfg, p, "engine-active-ticks", "engine-total-ticks",
		            "engine_class=0,engine_instance=0,gt=0");
		for (int i = 0; i < 4 && !e; i++) {
			char extra[80];

			snprintf(extra, sizeof(extra), "engine_class=4,engine_instance=%d,gt=0", i);
			if (pmu_add(cfg, p, "engine-active-ticks", "engine-total-ticks", extra))
				break;
		}
	} else {
		e = pmu_add(cfg, p, "rcs0-busy", NULL, NULL);
		for (int i = 0; i < 4 && !e; i++) {
			char name[32];

			snprintf(name, sizeof(name), "ccs%d-busy", i);
			if (pmu_add(cfg, p, name, NULL, NULL))
				break;
		}
	}
	if (!p->nr_ctr) {
		p->pmu = PMU_FAILED;
		p->pmu_note = pmu_errno_note(e);
		return;
	}
	p->pmu = PMU_OPEN;
	p->pmu_note = NULL;
}

/* Busy percent of the busiest counted engine since the previous reading, or false. */
static bool
pmu_read(struct intel *p, double *util, bool *idle)
{
	bool have = false;

	*idle = true;
	for (unsigned i = 0; i < p->nr_ctr; i++) {
		struct pmu_ctr *c = &p->ctr[i];
		uint64_t v[2], t[2];
		double pct;

		if (read(c->fd, v, sizeof(v)) != (ssize_t)sizeof(v))
			continue;
		if (c->fd_total >= 0) {
			if (read(c->fd_total, t, sizeof(t)) != (ssize_t)sizeof(t))
				continue;
		} else {
			t[0] = v[1]; /* i915: busy ns against the ns the counter was enabled */
		}
		if (c->have_prev && t[0] > c->prev_total && v[0] >= c->prev) {
			pct = 100.0 * (double)(v[0] - c->prev) / (double)(t[0] - c->prev_total);
			pct = pct > 100 ? 100 : pct;
			if (!have || pct > *util)
				*util = pct;
			if (v[0] != c->prev)
				*idle = false;
			have = true;
		}
		c->prev = v[0];
		c->prev_total = t[0];
		c->have_prev = true;
	}
	return have;
}

/*
 * xe's engine counters hold GT forcewake and a runtime-PM reference for as
 * long as they are open (xe_pmu.c, event_init), which would keep an idle GT
 * out of C6 and the GPU out of runtime suspend: they are open only while
 * the GT is awake anyway, and closed after a window in which no engine
 * worked. i915's counters only sample an awake GT, so they stay open.
 */
static void
read_util(const struct gs_config *cfg, const struct drm_card *card, struct intel *p,
          struct gpu_device *dev)
{
	double util = 0;
	bool idle;

	if (p->pmu == PMU_UNTRIED || p->pmu == PMU_CLOSED) {
		if (p->xe && gt_in_c6(cfg, p)) {
			/* the engines sleep: drm.c takes what fdinfo says */
			p->pmu_note = "GT idle in C6: PMU not opened, so as not to wake it";
			return;
		}
		pmu_open(cfg, card, p);
	}
	if (p->pmu != PMU_OPEN)
		return;
	if (pmu_read(p, &util, &idle)) {
		dev_set(dev, GF_UTIL_GPU, util);
		str_copy(dev->util_source, sizeof(dev->util_source), "pmu");
		if (p->xe && idle) {
			pmu_close(p);
			p->pmu = PMU_CLOSED;
		}
	}
}

/* --- the module --------------------------------------------------------------------------- */

static int
intel_read(const struct gs_config *cfg, const struct drm_card *card, void *priv,
           struct gpu_device *dev)
{
	struct intel *p = priv;

	/* drm.c reads no suspended GPU; this module does not either, should it be asked */
	if (!p || drm_suspended(cfg, card))
		return 0;
	read_clocks(cfg, p, dev);
	read_throttle(cfg, p, dev);
	read_hwmon(cfg, card, p, dev);
	read_util(cfg, card, p, dev);
	return 0;
}

static bool
intel_match(const struct drm_card *card)
{
	return !strcmp(card->driver, "i915") || !strcmp(card->driver, "xe");
}

static const char *
intel_util_note(const struct drm_card *card, void *priv)
{
	const struct intel *p = priv;

	(void)card;
	return p ? p->pmu_note : NULL;
}

/*
 * Every figure of use is a rate: busy time from the PMU, else from the
 * clients' fdinfo, and power from the energy counter. Only a GPU that
 * sleeps (drm.c asks no suspended one) needs no second reading.
 */
static bool
intel_wants_window(const struct drm_card *card, void *priv)
{
	const struct intel *p = priv;

	(void)card;
	return p != NULL;
}

static void
intel_free(void *priv)
{
	struct intel *p = priv;

	if (!p)
		return;
	pmu_close(p);
	free(p);
}

const struct drm_module drm_module_intel = {
	.name = "intel",
	.match = intel_match,
	.scan = intel_scan,
	.read = intel_read,
	.util_note = intel_util_note,
	.wants_window = intel_wants_window,
	.free = intel_free,
};
