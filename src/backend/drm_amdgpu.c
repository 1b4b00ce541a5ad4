/*
 * The amdgpu module of the DRM backend: what the amdgpu driver tells in
 * sysfs (busy shares, memory, PCIe link, RAS counts), in its hwmon
 * directory (temperatures by label, power, fan, clocks, voltage), in its
 * pp_dpm clock level lists and in the binary gpu_metrics table, which fills
 * what the text files lack (hotspot temperature, throttling, ...). ROCm
 * compute processes come from KFD's sysfs (/sys/class/kfd), never from
 * /dev/kfd. Every file is optional: what cannot be read stays unknown.
 */
#include "backend/drm.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/amdgpu_metrics.h"
#include "core/config.h"
#include "core/err.h"
#include "core/fileio.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

/* gpu_metrics is at most a few KiB (v1.8: 3872 bytes); sysfs pads some to a page */
#define METRICS_CAP 16384
/* pp_dpm_* and RAS files are one page at most */
#define TEXT_CAP 4096
/* KFD nodes of one PCI device: more than one when it is partitioned */
#define MAX_KFD_NODES 16

/* What scan() finds once: where the hwmon channels are. */
struct amdgpu {
	char hwmon[48]; /* "hwmon/hwmon4", "" when the card has none */
	int temp_edge, temp_junction, temp_mem;
	int freq_sclk, freq_mclk;
	int in_vddgfx;
	unsigned kfd_id[MAX_KFD_NODES]; /* KFD gpu_ids of this device */
	unsigned nr_kfd;
	bool has_busy;          /* gpu_busy_percent could be read at the scan */
	char metrics_note[160]; /* why gpu_metrics was refused, the first time */
};

static bool
amdgpu_match(const struct drm_card *card)
{
	return !strcmp(card->driver, "amdgpu");
}

/* A hwmon file of the card: "<hwmon>/<type><n>_<item>" */
static int
hwmon_s64(const struct gs_config *cfg, const struct drm_card *card, const struct amdgpu *p,
          const char *type, int n, const char *item, int64_t *v)
{
	char rel[128];

	if (!p->hwmon[0] || n < 0)
		return E_NOTFOUND;
	snprintf(rel, sizeof(rel), "%s/%s%d_%s", p->hwmon, type, n, item);
	return drm_read_s64(cfg, card, rel, v);
}

/*
 * The channel labelled label; else channel fallback if it has an input but
 * no label (boards whose hwmon labels nothing), else -1.
 */
static int
channel(const struct gs_config *cfg, const struct drm_card *card, const struct amdgpu *p,
        const char *type, const char *label, int fallback)
{
	char rel[128], buf[64];
	int n = drm_hwmon_channel(cfg, card, p->hwmon, type, label);

	if (n >= 0 || fallback < 0)
		return n;
	/* old boards (and radeon-era hwmon) have inputs without labels */
	snprintf(rel, sizeof(rel), "%s/%s%d_label", p->hwmon, type, fallback);
	if (drm_read_line(cfg, card, rel, buf, sizeof(buf)) == 0)
		return -1;
	snprintf(rel, sizeof(rel), "%s/%s%d_input", p->hwmon, type, fallback);
	return drm_read_line(cfg, card, rel, buf, sizeof(buf)) == 0 ? fallback : -1;
}

static void
find_channels(const struct gs_config *cfg, const struct drm_card *card, struct amdgpu *p)
{
	p->temp_edge = p->temp_junction = p->temp_mem = -1;
	p->freq_sclk = p->freq_mclk = p->in_vddgfx = -1;
	if (!drm_hwmon(cfg, card, p->hwmon, sizeof(p->hwmon))) {
		p->hwmon[0] = '\0';
		return;
	}
	p->temp_edge = channel(cfg, card, p, "temp", "edge", 1);
	p->temp_junction = channel(cfg, card, p, "temp", "junction", -1);
	p->temp_mem = channel(cfg, card, p, "temp", "mem", -1);
	p->freq_sclk = channel(cfg, card, p, "freq", "sclk", 1);
	p->freq_mclk = channel(cfg, card, p, "freq", "mclk", -1);
	p->in_vddgfx = channel(cfg, card, p, "in", "vddgfx", 0);
}

/*
 * PCI domain and location_id of a KFD topology node: location_id is
 * (bus << 8) | (device << 3) | function.
 */
static bool
kfd_node_is(const struct gs_config *cfg, const char *node, unsigned dom, unsigned bus,
            unsigned devfn)
{
	struct strbuf sb = STRBUF_INIT;
	char path[512];
	long long d = -1, loc = -1;
	bool yes = false;

	snprintf(path, sizeof(path), "class/kfd/kfd/topology/nodes/%s/properties", node);
	if (file_read(cfg->sysfs_root, path, &sb, TEXT_CAP, NULL) == 0) {
		for (const char *l = sb.buf; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			if (!strncmp(l, "domain ", 7))
				d = strtoll(l + 7, NULL, 10);
			else if (!strncmp(l, "location_id ", 12))
				loc = strtoll(l + 12, NULL, 10);
		}
		yes = d == (long long)dom && loc == (long long)(bus << 8 | devfn);
	}
	strbuf_release(&sb);
	return yes;
}

/* The KFD gpu_ids of the card's PCI device (none without KFD or off PCI). */
static void
find_kfd(const struct gs_config *cfg, const struct drm_card *card, struct amdgpu *p)
{
	unsigned dom, bus, dv, fn;
	char dir[4096];
	struct dirent *de;
	DIR *d;

	p->nr_kfd = 0;
	if (!card->pci || sscanf(card->pci_addr, "%x:%x:%x.%x", &dom, &bus, &dv, &fn) != 4)
		return;
	path_join(dir, sizeof(dir), cfg->sysfs_root, "class/kfd/kfd/topology/nodes");
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d)) && p->nr_kfd < MAX_KFD_NODES) {
		char path[512];
		uint64_t id;

		if (!isdigit((unsigned char)de->d_name[0]) ||
		    !kfd_node_is(cfg, de->d_name, dom, bus, dv << 3 | fn))
			continue;
		snprintf(path, sizeof(path), "class/kfd/kfd/topology/nodes/%s/gpu_id", de->d_name);
		/* gpu_id 0 is a CPU node */
		if (file_read_u64(cfg->sysfs_root, path, &id, NULL) == 0 && id && id <= UINT32_MAX)
			p->kfd_id[p->nr_kfd++] = (unsigned)id;
	}
	closedir(d);
}

static void
set_from_u64(const struct gs_config *cfg, const struct drm_card *card, const char *rel,
             struct gpu_device *dev, enum gpu_field f, double scale)
{
	uint64_t v;

	if (drm_read_u64(cfg, card, rel, &v) == 0)
		dev_set(dev, f, (double)v * scale);
}

static void
set_from_hwmon(const struct gs_config *cfg, const struct drm_card *card, const struct amdgpu *p,
               const char *type, int n, const char *item, struct gpu_device *dev, enum gpu_field f,
               double scale)
{
	int64_t v;

	if (hwmon_s64(cfg, card, p, type, n, item, &v) == 0)
		dev_set(dev, f, (double)v * scale);
}

/* A temperature limit: amdgpu has printed nonsense (0, or 0x7fffffff) on some boards. */
static void
set_limit(const struct gs_config *cfg, const struct drm_card *card, const struct amdgpu *p, int n,
          const char *item, struct gpu_device *dev, enum gpu_field f)
{
	int64_t v;

	if (hwmon_s64(cfg, card, p, "temp", n, item, &v) == 0 && v > 0 && v < 255000)
		dev_set(dev, f, (double)v / 1000);
}

static void
read_line_into(const struct gs_config *cfg, const struct drm_card *card, const char *rel, char *dst,
               size_t size)
{
	char buf[128];

	if (drm_read_line(cfg, card, rel, buf, sizeof(buf)) == 0 && buf[0])
		str_copy(dst, size, buf);
}

static int
amdgpu_scan(const struct gs_config *cfg, const struct drm_card *card, struct gpu_device *dev,
            void **priv)
{
	struct amdgpu *p = xcalloc(1, sizeof(*p));
	uint64_t busy;

	find_channels(cfg, card, p);
	find_kfd(cfg, card, p);
	p->has_busy = drm_read_u64(cfg, card, "gpu_busy_percent", &busy) == 0;
	*priv = p;

	/* the kernel's own marketing name, on boards whose VBIOS carries one */
	read_line_into(cfg, card, "product_name", dev->name, sizeof(dev->name));
	read_line_into(cfg, card, "product_number", dev->board_part, sizeof(dev->board_part));
	read_line_into(cfg, card, "serial_number", dev->serial, sizeof(dev->serial));
	read_line_into(cfg, card, "vbios_version", dev->vbios, sizeof(dev->vbios));
	read_line_into(cfg, card, "unique_id", dev->unique_id, sizeof(dev->unique_id));

	set_from_u64(cfg, card, "mem_info_vram_total", dev, GF_MEM_TOTAL, 1);
	set_from_u64(cfg, card, "mem_info_vis_vram_total", dev, GF_MEM_VISIBLE_TOTAL, 1);
	set_from_u64(cfg, card, "mem_info_gtt_total", dev, GF_GTT_TOTAL, 1);

	set_from_hwmon(cfg, card, p, "power", 1, "cap_default", dev, GF_POWER_LIMIT_DEFAULT, 1e-6);
	set_from_hwmon(cfg, card, p, "power", 1, "cap_min", dev, GF_POWER_LIMIT_MIN, 1e-6);
	set_from_hwmon(cfg, card, p, "power", 1, "cap_max", dev, GF_POWER_LIMIT_MAX, 1e-6);

	/*
	 * amdgpu's temp*_crit is where the firmware starts to slow the GPU
	 * down hard, temp*_emergency where it shuts down: the edge sensor's
	 * pair are the GPU's slowdown and shutdown temperatures. The memory
	 * sensor's crit is the highest memory temperature it is run at.
	 */
	set_limit(cfg, card, p, p->temp_edge, "crit", dev, GF_TEMP_SLOWDOWN);
	set_limit(cfg, card, p, p->temp_edge, "emergency", dev, GF_TEMP_SHUTDOWN);
	set_limit(cfg, card, p, p->temp_mem, "crit", dev, GF_TEMP_MEM_MAX);
	return 0;
}

static void
read_activity(const struct gs_config *cfg, const struct drm_card *card, struct gpu_device *dev)
{
	set_from_u64(cfg, card, "gpu_busy_percent", dev, GF_UTIL_GPU, 1);
	if (dev_has(dev, GF_UTIL_GPU))
		str_copy(dev->util_source, sizeof(dev->util_source), "gpu_busy_percent");
	set_from_u64(cfg, card, "mem_busy_percent", dev, GF_UTIL_MEM, 1);
	/*
	 * VCN is one engine for video decode and encode; its busy share goes
	 * where nvidia-smi users look for video work, the decoder (the usual
	 * load), and is not repeated as the encoder's, which stays unknown.
	 */
	set_from_u64(cfg, card, "vcn_busy_percent", dev, GF_UTIL_DEC, 1);
}

static void
read_memory(const struct gs_config *cfg, const struct drm_card *card, struct gpu_device *dev)
{
	if (!dev_has(dev, GF_MEM_TOTAL))
		set_from_u64(cfg, card, "mem_info_vram_total", dev, GF_MEM_TOTAL, 1);
	set_from_u64(cfg, card, "mem_info_vram_used", dev, GF_MEM_USED, 1);
	if (dev_has(dev, GF_MEM_TOTAL) && dev_has(dev, GF_MEM_USED) &&
	    dev->v[GF_MEM_USED] <= dev->v[GF_MEM_TOTAL])
		dev_set(dev, GF_MEM_FREE, dev->v[GF_MEM_TOTAL] - dev->v[GF_MEM_USED]);
	set_from_u64(cfg, card, "mem_info_vis_vram_used", dev, GF_MEM_VISIBLE_USED, 1);
	set_from_u64(cfg, card, "mem_info_gtt_used", dev, GF_GTT_USED, 1);
}

static void
read_pcie(const struct gs_config *cfg, const struct drm_card *card, struct gpu_device *dev)
{
	/* drm.c reads the link itself, for every PCI GPU */
	set_from_u64(cfg, card, "pcie_replay_count", dev, GF_PCIE_REPLAY, 1);
}

static void
read_hwmon(const struct gs_config *cfg, const struct drm_card *card, const struct amdgpu *p,
           struct gpu_device *dev)
{
	char rel[128];
	int64_t pwm, pwm_max;

	if (!p->hwmon[0])
		return;
	set_from_hwmon(cfg, card, p, "temp", p->temp_edge, "input", dev, GF_TEMP_GPU, 1e-3);
	set_from_hwmon(cfg, card, p, "temp", p->temp_junction, "input", dev, GF_TEMP_HOTSPOT, 1e-3);
	set_from_hwmon(cfg, card, p, "temp", p->temp_mem, "input", dev, GF_TEMP_MEM, 1e-3);

	/*
	 * power1_average is the SMU's average over about a second (on APUs it
	 * includes the CPU); power1_input is instantaneous. Draw is the
	 * average where the card has one, as NVML's is on recent GPUs.
	 */
	set_from_hwmon(cfg, card, p, "power", 1, "average", dev, GF_POWER_AVERAGE, 1e-6);
	set_from_hwmon(cfg, card, p, "power", 1, "input", dev, GF_POWER_INSTANT, 1e-6);
	if (dev_has(dev, GF_POWER_AVERAGE))
		dev_set(dev, GF_POWER_DRAW, dev->v[GF_POWER_AVERAGE]);
	else if (dev_has(dev, GF_POWER_INSTANT))
		dev_set(dev, GF_POWER_DRAW, dev->v[GF_POWER_INSTANT]);
	/* the cap is the limit set (by default or by the user) and the one enforced */
	set_from_hwmon(cfg, card, p, "power", 1, "cap", dev, GF_POWER_LIMIT, 1e-6);
	if (dev_has(dev, GF_POWER_LIMIT))
		dev_set(dev, GF_POWER_LIMIT_SET, dev->v[GF_POWER_LIMIT]);

	set_from_hwmon(cfg, card, p, "fan", 1, "input", dev, GF_FAN_RPM, 1);
	if (dev_has(dev, GF_FAN_RPM) && dev->v[GF_FAN_RPM] < 0)
		dev_unset(dev, GF_FAN_RPM);
	/* pwm1 is 0 to pwm1_max (255) */
	snprintf(rel, sizeof(rel), "%s/pwm1", p->hwmon);
	if (drm_read_s64(cfg, card, rel, &pwm) == 0) {
		snprintf(rel, sizeof(rel), "%s/pwm1_max", p->hwmon);
		if (drm_read_s64(cfg, card, rel, &pwm_max) < 0 || pwm_max <= 0)
			pwm_max = 255;
		if (pwm >= 0 && pwm <= pwm_max)
			dev_set(dev, GF_FAN, 100.0 * (double)pwm / (double)pwm_max);
	}

	set_from_hwmon(cfg, card, p, "freq", p->freq_sclk, "input", dev, GF_CLOCK_GRAPHICS, 1e-6);
	set_from_hwmon(cfg, card, p, "freq", p->freq_mclk, "input", dev, GF_CLOCK_MEM, 1e-6);
	set_from_hwmon(cfg, card, p, "in", p->in_vddgfx, "input", dev, GF_VOLTAGE_GFX, 1);
}

/* pp_dpm_sclk or pp_dpm_mclk into lv; the current level's clock when the card has no sensor */
static void
read_levels(const struct gs_config *cfg, const struct drm_card *card, const char *file,
            struct clock_levels *lv, struct gpu_device *dev, enum gpu_field clock,
            enum gpu_field max)
{
	struct strbuf sb = STRBUF_INIT;
	char path[256];
	uint32_t top;

	memset(lv, 0, sizeof(*lv));
	lv->current = -1;
	snprintf(path, sizeof(path), "%s/%s", card->dev, file);
	if (file_read(cfg->sysfs_root, path, &sb, TEXT_CAP, NULL) == 0 &&
	    amdgpu_parse_levels(sb.buf, sb.len, lv)) {
		if (!dev_has(dev, clock) && lv->current >= 0)
			dev_set(dev, clock, lv->mhz[lv->current]);
		top = amdgpu_levels_max(lv);
		if (top)
			dev_set(dev, max, top);
	}
	strbuf_release(&sb);
}

/*
 * The highest clocks the firmware will run at now: where the card has an
 * overdrive table, its upper bound (what the user set, or the default).
 * pp_dpm_sclk's top level is not that: an RX 6900 XT held to 2499 MHz
 * still lists 2660, an RX 7800 XT allowed 2660 lists 2254 (LACT's real
 * snapshots); the levels stay the maximum of cards without the table.
 */
static void
read_od_max(const struct gs_config *cfg, const struct drm_card *card, struct gpu_device *dev)
{
	struct strbuf sb = STRBUF_INIT;
	char path[256];
	uint32_t mhz;

	snprintf(path, sizeof(path), "%s/pp_od_clk_voltage", card->dev);
	if (file_read(cfg->sysfs_root, path, &sb, TEXT_CAP, NULL) == 0) {
		mhz = amdgpu_od_max(sb.buf, sb.len, "OD_SCLK");
		if (mhz)
			dev_set(dev, GF_CLOCK_MAX_GRAPHICS, mhz);
		mhz = amdgpu_od_max(sb.buf, sb.len, "OD_MCLK");
		if (mhz)
			dev_set(dev, GF_CLOCK_MAX_MEM, mhz);
	}
	strbuf_release(&sb);
}

static void
read_ras(const struct gs_config *cfg, const struct drm_card *card, struct gpu_device *dev)
{
	struct strbuf sb = STRBUF_INIT;
	char dir[4096], rel[256];
	uint64_t ue_all = 0, ce_all = 0;
	bool any = false;
	struct dirent *de;
	DIR *d;

	snprintf(rel, sizeof(rel), "%s/ras", card->dev);
	path_join(dir, sizeof(dir), cfg->sysfs_root, rel);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		uint64_t ue, ce;
		char path[512];

		if (n <= 10 || strcmp(de->d_name + n - 10, "_err_count"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", rel, de->d_name);
		if (file_read(cfg->sysfs_root, path, &sb, TEXT_CAP, NULL) < 0 ||
		    amdgpu_parse_ras(sb.buf, &ue, &ce) < 0)
			continue;
		any = true;
		ue_all += ue;
		ce_all += ce;
		/* the memory controller's block is the ECC of the VRAM */
		if (!strcmp(de->d_name, "umc_err_count")) {
			dev_set(dev, GF_ECC_UNCORR_VOLATILE, (double)ue);
			dev_set(dev, GF_ECC_CORR_VOLATILE, (double)ce);
		}
	}
	closedir(d);
	strbuf_release(&sb);
	if (any) {
		dev_set(dev, GF_RAS_UNCORR, (double)ue_all);
		dev_set(dev, GF_RAS_CORR, (double)ce_all);
	}
}

static void
fill(struct gpu_device *dev, enum gpu_field f, double v)
{
	if (!dev_has(dev, f) && !isnan(v))
		dev_set(dev, f, v);
}

/* gpu_metrics fills what sysfs and hwmon did not give. */
static void
read_metrics(const struct gs_config *cfg, const struct drm_card *card, struct amdgpu *p,
             struct gpu_device *dev)
{
	struct strbuf sb = STRBUF_INIT;
	struct amdgpu_metrics m;
	struct err err = ERR_INIT;
	char path[256];
	double clk;

	snprintf(path, sizeof(path), "%s/gpu_metrics", card->dev);
	if (file_read(cfg->sysfs_root, path, &sb, METRICS_CAP, NULL) < 0)
		goto out;
	if (amdgpu_metrics_decode(sb.buf, sb.len, &m, &err) < 0) {
		if (p && !p->metrics_note[0])
			str_copy(p->metrics_note, sizeof(p->metrics_note), err.msg);
		goto out;
	}
	fill(dev, GF_TEMP_GPU, m.v[AM_TEMP_EDGE]);
	fill(dev, GF_TEMP_HOTSPOT, m.v[AM_TEMP_HOTSPOT]);
	fill(dev, GF_TEMP_MEM, m.v[AM_TEMP_MEM]);
	if (!dev_has(dev, GF_UTIL_GPU) && !isnan(m.v[AM_GFX_ACTIVITY])) {
		dev_set(dev, GF_UTIL_GPU, m.v[AM_GFX_ACTIVITY]);
		str_copy(dev->util_source, sizeof(dev->util_source), "gpu_metrics");
	}
	fill(dev, GF_UTIL_MEM, m.v[AM_UMC_ACTIVITY]);
	fill(dev, GF_UTIL_DEC, m.v[AM_MM_ACTIVITY]);
	fill(dev, GF_POWER_DRAW, m.v[AM_SOCKET_POWER]);
	clk = isnan(m.v[AM_GFXCLK]) ? m.v[AM_GFXCLK_AVG] : m.v[AM_GFXCLK];
	fill(dev, GF_CLOCK_GRAPHICS, clk);
	clk = isnan(m.v[AM_UCLK]) ? m.v[AM_UCLK_AVG] : m.v[AM_UCLK];
	fill(dev, GF_CLOCK_MEM, clk);
	fill(dev, GF_CLOCK_VIDEO, m.v[AM_VCLK]);
	fill(dev, GF_FAN_RPM, m.v[AM_FAN_RPM]);
	if (!dev_has(dev, GF_PCIE_GEN) && !isnan(m.v[AM_PCIE_SPEED]) &&
	    drm_pcie_gen_of(m.v[AM_PCIE_SPEED]) > 0)
		dev_set(dev, GF_PCIE_GEN, drm_pcie_gen_of(m.v[AM_PCIE_SPEED]));
	if (m.v[AM_PCIE_WIDTH] > 0)
		fill(dev, GF_PCIE_WIDTH, m.v[AM_PCIE_WIDTH]);
	fill(dev, GF_VOLTAGE_GFX, m.v[AM_VOLTAGE_GFX]);
	if (m.has_throttle) {
		dev_set(dev, GF_CLOCK_REASONS,
		        amdgpu_throttle_reasons(m.throttle, dev->throttle_detail,
		                                sizeof(dev->throttle_detail)));
		dev_set(dev, GF_CLOCK_REASONS_SUPPORTED, amdgpu_throttle_supported());
	}
out:
	strbuf_release(&sb);
}

static int
amdgpu_read(const struct gs_config *cfg, const struct drm_card *card, void *priv,
            struct gpu_device *dev)
{
	struct amdgpu *p = priv, local;

	/*
	 * drm.c looks before it calls; look again, as the card may have gone
	 * to sleep since, and a sensor read on older kernels wakes it up.
	 */
	if (drm_suspended(cfg, card)) {
		drm_mark_suspended(dev);
		return 0;
	}
	if (!p) {
		memset(&local, 0, sizeof(local));
		find_channels(cfg, card, &local);
		p = &local;
	}
	read_activity(cfg, card, dev);
	read_memory(cfg, card, dev);
	read_pcie(cfg, card, dev);
	read_hwmon(cfg, card, p, dev);
	/* the graphics clock is the shader clock: AMD has no separate SM clock */
	read_levels(cfg, card, "pp_dpm_sclk", &dev->levels_gfx, dev, GF_CLOCK_GRAPHICS,
	            GF_CLOCK_MAX_GRAPHICS);
	read_levels(cfg, card, "pp_dpm_mclk", &dev->levels_mem, dev, GF_CLOCK_MEM,
	            GF_CLOCK_MAX_MEM);
	read_od_max(cfg, card, dev);
	read_metrics(cfg, card, p == &local ? NULL : p, dev);
	if (dev_has(dev, GF_CLOCK_GRAPHICS))
		dev_set(dev, GF_CLOCK_SM, dev->v[GF_CLOCK_GRAPHICS]);
	if (dev_has(dev, GF_CLOCK_MAX_GRAPHICS))
		dev_set(dev, GF_CLOCK_MAX_SM, dev->v[GF_CLOCK_MAX_GRAPHICS]);
	read_ras(cfg, card, dev);
	return 0;
}

/*
 * Is the process in proc/<pid> using one of our KFD nodes, and with how
 * much VRAM? ROCm's runtime opens every GPU at start, so KFD keeps a
 * vram_<gpu_id> for each; a process counts as using a GPU where it holds
 * VRAM or has a queue, as ROCm's own tools count it.
 */
static bool
kfd_use(const struct gs_config *cfg, const struct amdgpu *p, const char *pid, double *vram,
        bool *known)
{
	char path[512], dir[4096];
	bool uses = false;
	struct dirent *de;
	DIR *d;

	*vram = 0;
	*known = false;
	for (unsigned i = 0; i < p->nr_kfd; i++) {
		uint64_t v;
		int rc;

		snprintf(path, sizeof(path), "class/kfd/kfd/proc/%s/vram_%u", pid, p->kfd_id[i]);
		rc = file_read_u64(cfg->sysfs_root, path, &v, NULL);
		if (rc == 0) {
			*vram += (double)v;
			*known = true;
			uses |= v > 0;
		}
	}
	snprintf(path, sizeof(path), "class/kfd/kfd/proc/%s/queues", pid);
	path_join(dir, sizeof(dir), cfg->sysfs_root, path);
	d = opendir(dir);
	if (!d)
		return uses;
	while (!uses && (de = readdir(d))) {
		char q[1024];
		uint64_t id;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(q, sizeof(q), "%s/%s/gpuid", path, de->d_name);
		if (file_read_u64(cfg->sysfs_root, q, &id, NULL) < 0)
			continue;
		for (unsigned i = 0; i < p->nr_kfd; i++)
			uses |= id == p->kfd_id[i];
	}
	closedir(d);
	return uses;
}

static int
amdgpu_read_procs(const struct gs_config *cfg, const struct drm_card *card, void *priv,
                  const struct gpu_device *dev, struct gpu_snapshot *out)
{
	struct amdgpu *p = priv;
	char dir[4096];
	struct dirent *de;
	DIR *d;

	(void)dev;
	if (!p)
		return 0;
	if (!p->nr_kfd)
		find_kfd(cfg, card, p); /* KFD may have come up after the scan */
	if (!p->nr_kfd)
		return 0;
	path_join(dir, sizeof(dir), cfg->sysfs_root, "class/kfd/kfd/proc");
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct gpu_proc *q;
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);
		double vram;
		bool known;

		if (*end || end == de->d_name || !pid || pid > UINT32_MAX)
			continue;
		if (!kfd_use(cfg, p, de->d_name, &vram, &known))
			continue;
		q = gpu_snapshot_add_proc(out);
		q->pid = (uint32_t)pid;
		q->type = PROC_COMPUTE;
		if (known)
			proc_set(q, PF_GPU_MEM, vram);
	}
	closedir(d);
	return 0;
}

/*
 * Nothing amdgpu reports needs two readings: gpu_busy_percent is the
 * firmware's own average. Only a card without it needs the window, for the
 * busy share drm.c then makes from its clients' fdinfo.
 */
static bool
amdgpu_wants_window(const struct drm_card *card, void *priv)
{
	const struct amdgpu *p = priv;

	(void)card;
	return !p || !p->has_busy;
}

static const char *
amdgpu_util_note(const struct drm_card *card, void *priv)
{
	const struct amdgpu *p = priv;

	(void)card;
	return p && !p->has_busy ? "amdgpu gives no gpu_busy_percent for this GPU" : NULL;
}

static void
amdgpu_free(void *priv)
{
	free(priv);
}

const struct drm_module drm_module_amdgpu = {
	.name = "amdgpu",
	.match = amdgpu_match,
	.scan = amdgpu_scan,
	.read = amdgpu_read,
	.util_note = amdgpu_util_note,
	.wants_window = amdgpu_wants_window,
	.read_procs = amdgpu_read_procs,
	.free = amdgpu_free,
};
