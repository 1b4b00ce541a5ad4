/*
 * Every other DRM GPU (msm, panfrost, panthor, v3d, etnaviv, lima,
 * nouveau, radeon, ...): a name from the device tree, the clock from
 * devfreq, and from the device's hwmon, found by its channels' labels:
 * temperatures, clocks (freqN_input), power, fan speed and PWM (or, on a
 * SoC, the temperature of a "gpu" thermal zone). Engines and per-process
 * memory come from fdinfo, through drm.c, and the PCIe link of a PCI card
 * from drm_read_pcie(). This module matches every card: it is the fallback.
 */
#include "backend/drm.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/config.h"
#include "core/err.h"
#include "core/fileio.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#define PATH_LEN 256
#define MAX_TZ   4
#define MAX_CH   16 /* hwmon channels looked at: temp1..temp16, freq1..freq16 */

/* The hwmon channels this module reads, found by their labels. */
enum channel {
	CH_TEMP_GPU, /* tempN_input */
	CH_TEMP_HOT,
	CH_TEMP_MEM,
	CH_FREQ_GFX, /* freqN_input */
	CH_FREQ_MEM,
	CH__N
};

struct generic {
	char devfreq[PATH_LEN];   /* the GPU's devfreq directory, relative to the sysfs root */
	char hwmon[64];           /* relative to the device directory, "" when none */
	int ch[CH__N];            /* hwmon channel numbers, -1 when none */
	bool power_avg, power_in; /* hwmon power1_average, power1_input */
	bool fan, pwm;            /* hwmon fan1_input, pwm1 */
	int64_t pwm_scale;        /* what pwm1 reads at full speed */
	char tz[MAX_TZ][64];      /* thermal zones named "gpu*", relative to the sysfs root */
	unsigned nr_tz;
};

/* --- names from the device tree ----------------------------------------------------------- */

static void
upper_copy(char *dst, size_t size, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < size && src[i]; i++)
		dst[i] = (char)toupper((unsigned char)src[i]);
	if (size)
		dst[i] = '\0';
}

/*
 * A marketing-style name for one compatible string, or false when it names
 * no GPU this module knows ("rockchip,rk3588-mali" is the SoC's glue; the
 * "arm,mali-..." entry that follows it names the GPU).
 */
static bool
name_of(const char *c, char *name, size_t size)
{
	static const struct {
		const char *compat;
		const char *name;
	} families[] = {
		{ "arm,mali-utgard", "Arm Mali (Utgard)" },
		{ "arm,mali-midgard", "Arm Mali (Midgard)" },
		{ "arm,mali-bifrost", "Arm Mali (Bifrost)" },
		{ "arm,mali-valhall-jm", "Arm Mali (Valhall)" },
		{ "arm,mali-valhall-csf", "Arm Mali (Valhall CSF)" },
		{ "vivante,gc", "Vivante GC" },
	};
	char up[32];
	unsigned num, patch;
	int n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(families); i++)
		if (!strcmp(c, families[i].compat)) {
			str_copy(name, size, families[i].name);
			return true;
		}
	if (!strncmp(c, "apple,agx-", 10)) {
		str_copy(name, size, "Apple AGX");
		return true;
	}
	/* "qcom,adreno-690.0" (chip id 6.9.0.0); newer: "qcom,adreno-43050a01" */
	if (sscanf(c, "qcom,adreno-%u.%u%n", &num, &patch, &n) == 2 && !c[n]) {
		snprintf(name, size, "Qualcomm Adreno %u", num);
		return true;
	}
	if (!strncmp(c, "qcom,adreno-", 12) && strlen(c + 12) == 8 &&
	    strspn(c + 12, "0123456789abcdef") == 8) {
		snprintf(name, size, "Qualcomm Adreno (chip id %s)", c + 12);
		return true;
	}
	if (sscanf(c, "amd,imageon-%u.%u%n", &num, &patch, &n) == 2 && !c[n]) {
		snprintf(name, size, "Qualcomm Adreno %u", num);
		return true;
	}
	/* "arm,mali-t860", "arm,mali-400", "arm,mali-450" */
	if (!strncmp(c, "arm,mali-", 9) && isalnum((unsigned char)c[9]) &&
	    strspn(c + 9, "0123456789abcdefghijklmnopqrstuvwxyz") == strlen(c + 9) &&
	    strlen(c + 9) <= 6 && strpbrk(c + 9, "0123456789")) {
		upper_copy(up, sizeof(up), c + 9);
		snprintf(name, size, "Arm Mali-%s", up);
		return true;
	}
	/* "brcm,2711-v3d" (Raspberry Pi 4), "brcm,2712-v3d" (Pi 5), "brcm,7268-v3d" */
	if (sscanf(c, "brcm,%u-v3d%n", &num, &n) == 1 && !c[n]) {
		snprintf(name, size, "Broadcom V3D (BCM%u)", num);
		return true;
	}
	/* "nvidia,gk20a", "nvidia,gm20b", "nvidia,gp10b": Tegra's GPU, driven by nouveau */
	if (!strncmp(c, "nvidia,g", 8) && strlen(c + 7) <= 6) {
		upper_copy(up, sizeof(up), c + 7);
		snprintf(name, size, "NVIDIA Tegra %s", up);
		return true;
	}
	/* "img,img-axe", "img,img-bxs", "img,img-rogue": the powervr driver */
	if (!strncmp(c, "img,img-", 8) && c[8] && strlen(c + 8) <= 12) {
		upper_copy(up, sizeof(up), c + 8);
		snprintf(name, size, "Imagination PowerVR %s", up);
		return true;
	}
	return false;
}

/*
 * The GPU name from the compatible strings of the device at dev (relative
 * to the sysfs root): of_node/compatible (NUL-separated), else the
 * OF_COMPATIBLE_N lines of uevent.
 */
static bool
dt_name(const struct gs_config *cfg, const char *dev, char *name, size_t size)
{
	struct strbuf sb = STRBUF_INIT;
	char rel[PATH_LEN * 2];
	bool found = false;

	path_fmt(rel, sizeof(rel), "%s/of_node/compatible", dev);
	if (file_read(cfg->sysfs_root, rel, &sb, 1024, NULL) == 0) {
		for (size_t i = 0; i < sb.len && !found; i += strlen(sb.buf + i) + 1)
			found = name_of(sb.buf + i, name, size);
	}
	path_fmt(rel, sizeof(rel), "%s/uevent", dev);
	if (!found && file_read(cfg->sysfs_root, rel, &sb, 4096, NULL) == 0) {
		char *save = NULL;

		for (char *l = strtok_r(sb.buf, "\n", &save); l && !found;
		     l = strtok_r(NULL, "\n", &save)) {
			char *eq = strchr(l, '=');

			if (!strncmp(l, "OF_COMPATIBLE_", 14) && eq && l[14] != 'N')
				found = name_of(eq + 1, name, size);
		}
	}
	strbuf_release(&sb);
	return found;
}

/* --- devfreq and temperatures ------------------------------------------------------------- */

/* The only entry of directory rel, its first when there are several; false when empty. */
static bool
first_entry(const struct gs_config *cfg, const char *rel, char *out, size_t size)
{
	char dir[4096];
	struct dirent *de;
	DIR *d = opendir(path_join(dir, sizeof(dir), cfg->sysfs_root, rel));
	bool found = false;

	if (!d)
		return false;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		/* the smallest name, so that the choice does not depend on readdir order */
		if (!found || strcmp(de->d_name, out) < 0)
			str_copy(out, size, de->d_name);
		found = true;
	}
	closedir(d);
	return found;
}

/*
 * A platform GPU's devfreq "<unit address>.gpu" seen from class/devfreq:
 * where msm keeps it when the DRM card belongs to the display controller
 * and the GPU is one of its components. Only when there is exactly one.
 */
static bool
gpu_devfreq(const struct gs_config *cfg, char *out, size_t size)
{
	char dir[4096];
	struct dirent *de;
	DIR *d = opendir(path_join(dir, sizeof(dir), cfg->sysfs_root, "class/devfreq"));
	unsigned nr = 0;

	if (!d)
		return false;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n > 4 && !strcmp(de->d_name + n - 4, ".gpu")) {
			path_fmt(out, size, "class/devfreq/%s", de->d_name);
			nr++;
		}
	}
	closedir(d);
	return nr == 1;
}

/* Hz as MHz, rounded: devfreq gives 799999987 Hz for an 800 MHz step. */
static double
hz_to_mhz(int64_t hz)
{
	return floor((double)hz / 1e6 + 0.5);
}

/* The highest of available_frequencies (the hardware's), else max_freq (a policy). */
static void
devfreq_max(const struct gs_config *cfg, const struct generic *g, struct gpu_device *dev)
{
	char rel[PATH_LEN * 2];
	struct strbuf sb = STRBUF_INIT;
	int64_t best = 0, v;

	path_fmt(rel, sizeof(rel), "%s/available_frequencies", g->devfreq);
	if (file_read(cfg->sysfs_root, rel, &sb, 4096, NULL) == 0) {
		char *p = sb.buf, *end;

		for (;;) {
			long long f = strtoll(p, &end, 10);

			if (end == p)
				break;
			if (f > best)
				best = f;
			p = end;
		}
	}
	strbuf_release(&sb);
	path_fmt(rel, sizeof(rel), "%s/max_freq", g->devfreq);
	if (!best && file_read_s64(cfg->sysfs_root, rel, &v, NULL) == 0 && v > 0)
		best = v;
	/* one clock drives the whole GPU: it is also the "SM" clock the table shows */
	if (best > 0) {
		dev_set(dev, GF_CLOCK_MAX_GRAPHICS, hz_to_mhz(best));
		dev_set(dev, GF_CLOCK_MAX_SM, hz_to_mhz(best));
	}
}

/* Thermal zones whose type starts with "gpu" ("gpu-thermal", "gpuss0-thermal"). */
static void
scan_zones(const struct gs_config *cfg, struct generic *g)
{
	char dir[4096];
	struct dirent *de;
	DIR *d = opendir(path_join(dir, sizeof(dir), cfg->sysfs_root, "class/thermal"));

	if (!d)
		return;
	while ((de = readdir(d)) && g->nr_tz < MAX_TZ) {
		char rel[PATH_LEN], type[64];

		if (strncmp(de->d_name, "thermal_zone", 12) || strlen(de->d_name) > 40)
			continue;
		path_fmt(rel, sizeof(rel), "class/thermal/%s/type", de->d_name);
		if (file_read_line(cfg->sysfs_root, rel, type, sizeof(type), NULL) == 0 &&
		    !strncmp(type, "gpu", 3))
			path_fmt(g->tz[g->nr_tz++], sizeof(g->tz[0]), "class/thermal/%s/temp",
			         de->d_name);
	}
	closedir(d);
}

/* --- hwmon ------------------------------------------------------------------------------- */

/* Is hwmon file "<hwmon>/<file>" there? */
static bool
hw_exists(const struct gs_config *cfg, const struct drm_card *card, const struct generic *g,
          const char *file)
{
	char path[PATH_LEN];

	return path_fmt(path, sizeof(path), "%s/%s/%s", card->dev, g->hwmon, file) &&
	       file_exists(cfg->sysfs_root, path);
}

static int
hw_s64(const struct gs_config *cfg, const struct drm_card *card, const struct generic *g,
       const char *file, int64_t *v)
{
	char rel[128];

	if (!path_fmt(rel, sizeof(rel), "%s/%s", g->hwmon, file))
		return E_NOTFOUND;
	return drm_read_s64(cfg, card, rel, v);
}

/*
 * A hwmon value in [lo, hi], times scale, into f. Anything else (no file,
 * an empty one, not a number, a sentinel such as 0xffffffff) leaves f
 * unknown.
 */
static void
hw_set(const struct gs_config *cfg, const struct drm_card *card, const struct generic *g,
       const char *file, int64_t lo, int64_t hi, double scale, struct gpu_device *dev,
       enum gpu_field f)
{
	int64_t v;

	if (hw_s64(cfg, card, g, file, &v) == 0 && v >= lo && v <= hi)
		dev_set(dev, f, (double)v * scale);
}

/*
 * The device's hwmon directory, by name: when it has several, the one
 * named after the driver ("radeon", "nouveau"), else the lowest-numbered.
 */
static bool
find_hwmon(const struct gs_config *cfg, const struct drm_card *card, char *out, size_t size)
{
	char rel[PATH_LEN], dir[4096], best[40] = "";
	struct dirent *de;
	DIR *d;

	if (!drm_hwmon(cfg, card, out, size))
		return false;
	path_fmt(rel, sizeof(rel), "%s/hwmon", card->dev);
	d = card->driver[0] ? opendir(path_join(dir, sizeof(dir), cfg->sysfs_root, rel)) : NULL;
	if (!d)
		return true;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		char file[64], name[64];

		if (strncmp(de->d_name, "hwmon", 5) || n >= sizeof(best) ||
		    !path_fmt(file, sizeof(file), "hwmon/%s/name", de->d_name) ||
		    drm_read_line(cfg, card, file, name, sizeof(name)) < 0 ||
		    strcmp(name, card->driver))
			continue;
		/* hwmon2 before hwmon10 */
		if (!best[0] || n < strlen(best) ||
		    (n == strlen(best) && strcmp(de->d_name, best) < 0))
			str_copy(best, sizeof(best), de->d_name);
	}
	closedir(d);
	if (best[0])
		path_fmt(out, size, "hwmon/%s", best);
	return true;
}

/*
 * The channel of each label (amdgpu's edge, junction, mem, sclk and mclk,
 * and plainer names for the same); without a GPU label, the first
 * unlabelled channel is the GPU's (radeon's temp1 and freq1, nouveau's
 * temp1). A channel of another label (vrgfx, fclk) is none of these.
 */
static const struct {
	const char *type, *label;
	enum channel ch;
} hw_labels[] = {
	{ "temp", "edge", CH_TEMP_GPU },     { "temp", "gpu", CH_TEMP_GPU },
	{ "temp", "junction", CH_TEMP_HOT }, { "temp", "hotspot", CH_TEMP_HOT },
	{ "temp", "mem", CH_TEMP_MEM },      { "temp", "vram", CH_TEMP_MEM },
	{ "freq", "sclk", CH_FREQ_GFX },     { "freq", "mclk", CH_FREQ_MEM },
};

static void
find_channels(const struct gs_config *cfg, const struct drm_card *card, struct generic *g,
              const char *type, enum channel gpu)
{
	int unlabelled = -1;

	for (int n = 1; n <= MAX_CH; n++) {
		char file[32], label[64], rel[128];

		snprintf(file, sizeof(file), "%s%d_input", type, n);
		if (!hw_exists(cfg, card, g, file))
			continue;
		path_fmt(rel, sizeof(rel), "%s/%s%d_label", g->hwmon, type, n);
		if (drm_read_line(cfg, card, rel, label, sizeof(label)) < 0) {
			if (unlabelled < 0)
				unlabelled = n;
			continue;
		}
		for (size_t i = 0; i < ARRAY_SIZE(hw_labels); i++)
			if (!strcmp(type, hw_labels[i].type) &&
			    !strcmp(label, hw_labels[i].label) && g->ch[hw_labels[i].ch] < 0)
				g->ch[hw_labels[i].ch] = n;
	}
	if (g->ch[gpu] < 0)
		g->ch[gpu] = unlabelled;
}

/*
 * What pwm1 reads at full speed. The hwmon ABI's pwm1 is 0..255, and
 * radeon and amdgpu say so in pwm1_max too. nouveau's pwm1 is the duty
 * cycle in percent (nvkm_fanpwm_get: duty * 100 / divs), and its pwm1_max
 * the highest duty it lets the fan run at (a setting), not the scale.
 */
static int64_t
pwm_scale(const struct gs_config *cfg, const struct drm_card *card, const struct generic *g)
{
	int64_t max;

	if (!strcmp(card->driver, "nouveau"))
		return 100;
	if (hw_s64(cfg, card, g, "pwm1_max", &max) == 0 && max > 0 && max <= 0xffff)
		return max;
	return 255;
}

static void
scan_hwmon(const struct gs_config *cfg, const struct drm_card *card, struct generic *g)
{
	for (int i = 0; i < CH__N; i++)
		g->ch[i] = -1;
	if (!find_hwmon(cfg, card, g->hwmon, sizeof(g->hwmon))) {
		g->hwmon[0] = '\0';
		return;
	}
	find_channels(cfg, card, g, "temp", CH_TEMP_GPU);
	find_channels(cfg, card, g, "freq", CH_FREQ_GFX);
	g->power_avg = hw_exists(cfg, card, g, "power1_average");
	g->power_in = hw_exists(cfg, card, g, "power1_input");
	g->fan = hw_exists(cfg, card, g, "fan1_input");
	/*
	 * pwm1 is read whatever pwm1_enable says. The ABI's 0 there is "no
	 * control, full speed", but radeon never says 0, amdgpu then drives
	 * the fan at 100% (which pwm1 shows), and nouveau's 0 only means that
	 * the driver leaves the fan to the hardware (or the PMU firmware): its
	 * pwm1 still reads the duty cycle the fan runs at.
	 */
	g->pwm = hw_exists(cfg, card, g, "pwm1");
	if (g->pwm)
		g->pwm_scale = pwm_scale(cfg, card, g);
}

/* A temperature channel into f, in °C. */
static void
read_temp(const struct gs_config *cfg, const struct drm_card *card, const struct generic *g,
          enum channel ch, struct gpu_device *dev, enum gpu_field f)
{
	char file[32];

	if (g->ch[ch] < 0)
		return;
	snprintf(file, sizeof(file), "temp%d_input", g->ch[ch]);
	/*
	 * Millidegrees. 255 °C and up is a sensor's "no reading" (0xffffffff,
	 * 0x7fffffff); below 0 an error: nouveau prints a failed read's
	 * negative errno as the value (nouveau_temp_read).
	 */
	hw_set(cfg, card, g, file, 0, 254999, 1e-3, dev, f);
}

/*
 * A clock channel into f, from Hz to MHz. 0 is what radeon prints when it
 * cannot read the clock (radeon_hwmon_show_sclk); 0xffffffff no clock.
 */
static bool
read_freq(const struct gs_config *cfg, const struct drm_card *card, const struct generic *g,
          enum channel ch, struct gpu_device *dev, enum gpu_field f)
{
	char file[32];
	int64_t hz;

	if (g->ch[ch] < 0)
		return false;
	snprintf(file, sizeof(file), "freq%d_input", g->ch[ch]);
	if (hw_s64(cfg, card, g, file, &hz) < 0 || hz <= 0 || hz >= 0xffffffff)
		return false;
	dev_set(dev, f, hz_to_mhz(hz));
	return true;
}

static void
read_hwmon(const struct gs_config *cfg, const struct drm_card *card, const struct generic *g,
           struct gpu_device *dev)
{
	int64_t v;

	if (!g->hwmon[0])
		return;
	read_temp(cfg, card, g, CH_TEMP_GPU, dev, GF_TEMP_GPU);
	read_temp(cfg, card, g, CH_TEMP_HOT, dev, GF_TEMP_HOTSPOT);
	read_temp(cfg, card, g, CH_TEMP_MEM, dev, GF_TEMP_MEM);
	/* the devfreq clock, where there is one, is the GPU's own; sclk drives the shaders too */
	if (!dev_has(dev, GF_CLOCK_GRAPHICS) &&
	    read_freq(cfg, card, g, CH_FREQ_GFX, dev, GF_CLOCK_GRAPHICS))
		dev_set(dev, GF_CLOCK_SM, dev->v[GF_CLOCK_GRAPHICS]);
	read_freq(cfg, card, g, CH_FREQ_MEM, dev, GF_CLOCK_MEM);
	/*
	 * microwatts: power1_average is averaged by the device, power1_input
	 * instantaneous (nouveau's: its rails' sensors now). The draw is the
	 * average where there is one.
	 */
	if (g->power_avg)
		hw_set(cfg, card, g, "power1_average", 0, 0xfffffffe, 1e-6, dev, GF_POWER_AVERAGE);
	if (g->power_in)
		hw_set(cfg, card, g, "power1_input", 0, 0xfffffffe, 1e-6, dev, GF_POWER_INSTANT);
	if (dev_has(dev, GF_POWER_AVERAGE))
		dev_set(dev, GF_POWER_DRAW, dev->v[GF_POWER_AVERAGE]);
	else if (dev_has(dev, GF_POWER_INSTANT))
		dev_set(dev, GF_POWER_DRAW, dev->v[GF_POWER_INSTANT]);
	/* 0xffff rpm is a tachometer's "no reading" */
	if (g->fan)
		hw_set(cfg, card, g, "fan1_input", 0, 0xfffe, 1, dev, GF_FAN_RPM);
	if (g->pwm && hw_s64(cfg, card, g, "pwm1", &v) == 0 && v >= 0 && v <= g->pwm_scale)
		dev_set(dev, GF_FAN, 100.0 * (double)v / (double)g->pwm_scale);
}

static int
generic_scan(const struct gs_config *cfg, const struct drm_card *card, struct gpu_device *dev,
             void **priv)
{
	struct generic *g;
	char rel[PATH_LEN], entry[128];

	if (drm_suspended(cfg, card))
		return 0; /* drm.c never asks; nothing here would wake the GPU */
	g = xcalloc(1, sizeof(*g));
	path_fmt(rel, sizeof(rel), "%s/devfreq", card->dev);
	if (first_entry(cfg, rel, entry, sizeof(entry)))
		path_fmt(g->devfreq, sizeof(g->devfreq), "%s/devfreq/%s", card->dev, entry);
	else if (!strncmp(card->driver, "msm", 3) &&
	         !gpu_devfreq(cfg, g->devfreq, sizeof(g->devfreq)))
		g->devfreq[0] = '\0';
	/* a PCI GPU (nouveau) is named by drm.c from pci.ids */
	if (!card->pci && !dt_name(cfg, card->dev, dev->name, sizeof(dev->name)) && g->devfreq[0]) {
		/* the card is the display controller's: name the GPU its devfreq belongs to */
		path_fmt(rel, sizeof(rel), "%s/device", g->devfreq);
		if (!dt_name(cfg, rel, dev->name, sizeof(dev->name)))
			dev->name[0] = '\0';
	}
	if (g->devfreq[0])
		devfreq_max(cfg, g, dev);
	scan_hwmon(cfg, card, g);
	/* a SoC's GPU temperature is a thermal zone's; only for what is known to be a GPU */
	if (g->ch[CH_TEMP_GPU] < 0 && !card->pci && (dev->name[0] || g->devfreq[0]))
		scan_zones(cfg, g);
	*priv = g;
	return 0;
}

static int
generic_read(const struct gs_config *cfg, const struct drm_card *card, void *priv,
             struct gpu_device *dev)
{
	struct generic *g = priv;
	char rel[PATH_LEN * 2];
	int64_t v;

	if (!g || drm_suspended(cfg, card))
		return 0;
	if (g->devfreq[0]) {
		path_fmt(rel, sizeof(rel), "%s/cur_freq", g->devfreq);
		if (file_read_s64(cfg->sysfs_root, rel, &v, NULL) == 0 && v >= 0) {
			dev_set(dev, GF_CLOCK_GRAPHICS, hz_to_mhz(v));
			dev_set(dev, GF_CLOCK_SM, hz_to_mhz(v));
		}
	}
	read_hwmon(cfg, card, g, dev);
	for (unsigned i = 0; i < g->nr_tz; i++)
		/* the hottest of the GPU's zones (gpuss0, gpuss1, ...) */
		if (file_read_s64(cfg->sysfs_root, g->tz[i], &v, NULL) == 0 &&
		    (!dev_has(dev, GF_TEMP_GPU) || (double)v / 1000 > dev->v[GF_TEMP_GPU]))
			dev_set(dev, GF_TEMP_GPU, (double)v / 1000);
	return 0;
}

static bool
generic_match(const struct drm_card *card)
{
	(void)card;
	return true;
}

static void
generic_free(void *priv)
{
	free(priv);
}

const struct drm_module drm_module_generic = {
	.name = "generic",
	.match = generic_match,
	.scan = generic_scan,
	.read = generic_read,
	.free = generic_free,
};
