/*
 * Tests of the generic DRM module (msm, panfrost, panthor, v3d, lima,
 * nouveau, radeon, ...): names from the device tree, the clock from devfreq
 * (the device's own, or msm's component GPU seen from class/devfreq), hwmon
 * channels by their labels (temperatures, clocks, power, fan speed and
 * PWM; broken values stay unknown), GPU temperature from a "gpu" thermal
 * zone, and a suspended GPU left untouched. Fixture roots tests/fixtures/msm-*, plus small trees
 * built in a temporary directory for the naming rules and other drivers.
 *
 * Run it from the repository root, or set GPUSCOPE_FIXTURES to the
 * fixtures directory.
 */
#include "backend/drm.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/fields.h"
#include "core/gpu.h"
#include "harness.h"
#include "tree.h"

#define EPS 1e-9

/* --- helpers --------------------------------------------------------------- */

/* Write len bytes of data to root/rel, making its directories. */
static void
put_bytes(const char *root, const char *rel, const char *data, size_t len)
{
	char dir[PATH_MAX], *name;

	join(dir, sizeof(dir), root, rel);
	name = strrchr(dir, '/');
	*name++ = '\0';
	make_dirs(dir);
	write_bytes_at(dir, name, data, len);
}

static void
put(const char *root, const char *rel, const char *text)
{
	put_bytes(root, rel, text, strlen(text));
}

/* root/rel, a symbolic link to target (relative to the link's directory). */
static void
link_to(const char *root, const char *rel, const char *target)
{
	char dir[PATH_MAX], *name;

	join(dir, sizeof(dir), root, rel);
	name = strrchr(dir, '/');
	*name++ = '\0';
	make_dirs(dir);
	link_at(dir, name, target);
}

/* A fresh copy of fixture root name in tmp_dir; its sys directory in out. */
static void
copy_root(const char *name, char *out, size_t size)
{
	char root[PATH_MAX];

	copy_fixture(name, root, sizeof(root));
	join(out, size, root, "sys");
}

/* A drm_card as drm.c's probe_card() fills it, for class/drm/<name> under sys. */
static void
make_card(const char *sys, const char *name, struct drm_card *c)
{
	char path[PATH_MAX], target[PATH_MAX], buf[64];
	unsigned d, b, dv, fn;
	ssize_t n;
	FILE *f;

	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->minor = (unsigned)strtoul(name + 4, NULL, 10);
	snprintf(c->dev, sizeof(c->dev), "class/drm/%s/device", name);
	fmt(path, sizeof(path), "%s/%s/driver", sys, c->dev);
	n = readlink(path, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		snprintf(c->driver, sizeof(c->driver), "%s", strrchr(target, '/') + 1);
	}
	fmt(path, sizeof(path), "%s/%s", sys, c->dev);
	n = readlink(path, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		snprintf(c->platform, sizeof(c->platform), "%s", strrchr(target, '/') + 1);
	}
	c->pci = strlen(c->platform) == 12 &&
	         sscanf(c->platform, "%4x:%2x:%2x.%1x", &d, &b, &dv, &fn) == 4;
	if (c->pci) {
		snprintf(c->pci_addr, sizeof(c->pci_addr), "%s", c->platform);
		fmt(path, sizeof(path), "%s/%s/vendor", sys, c->dev);
		f = fopen(path, "r");
		if (f && fgets(buf, sizeof(buf), f))
			c->vendor = (unsigned)strtoul(buf, NULL, 16);
		if (f)
			fclose(f);
	}
}

struct run {
	struct gs_config cfg;
	struct drm_card card;
	struct gpu_device dev;
	void *priv;
};

static void
start(struct run *r, const char *sys, const char *card)
{
	memset(r, 0, sizeof(*r));
	gs_config_init(&r->cfg);
	r->cfg.sysfs_root = sys;
	make_card(sys, card, &r->card);
	drm_module_generic.scan(&r->cfg, &r->card, &r->dev, &r->priv);
	drm_module_generic.read(&r->cfg, &r->card, r->priv, &r->dev);
}

static void
stop(struct run *r)
{
	drm_module_generic.free(r->priv);
	r->priv = NULL;
}

static double
val(const struct gpu_device *d, enum gpu_field f)
{
	return dev_get(d, f);
}

static bool
no_fields(const struct gpu_device *d)
{
	for (int f = 0; f < GF__COUNT; f++)
		if (dev_has(d, (enum gpu_field)f))
			return false;
	return true;
}

/*
 * A platform GPU "<name>" under sys/devices/platform/soc, its card0, and
 * its compatible strings: in of_node/compatible (NUL-separated) when
 * of_node, and always as OF_COMPATIBLE_N in uevent unless uevent is false.
 */
static void
platform_gpu(const char *sys, const char *name, const char *driver, const char *const *compat,
             bool of_node, bool uevent)
{
	char dev[PATH_MAX], rel[PATH_MAX], buf[1024], ue[2048];
	size_t len = 0, n = 0;

	fmt(dev, sizeof(dev), "devices/platform/soc/%s", name);
	fmt(ue, sizeof(ue), "DRIVER=%s\nOF_NAME=gpu\n", driver);
	for (; compat[n]; n++) {
		size_t l = strlen(compat[n]) + 1;

		memcpy(buf + len, compat[n], l);
		len += l;
		fmt(ue + strlen(ue), sizeof(ue) - strlen(ue), "OF_COMPATIBLE_%zu=%s\n", n,
		    compat[n]);
	}
	fmt(ue + strlen(ue), sizeof(ue) - strlen(ue), "OF_COMPATIBLE_N=%zu\n", n);
	if (of_node) {
		fmt(rel, sizeof(rel), "firmware/devicetree/base/soc/gpu-%s/compatible", name);
		put_bytes(sys, rel, buf, len);
		fmt(rel, sizeof(rel), "%s/of_node", dev);
		fmt(buf, sizeof(buf), "../../../../firmware/devicetree/base/soc/gpu-%s", name);
		link_to(sys, rel, buf);
	}
	fmt(rel, sizeof(rel), "%s/uevent", dev);
	put(sys, rel, uevent ? ue : "");
	fmt(rel, sizeof(rel), "%s/power/runtime_status", dev);
	put(sys, rel, "active\n");
	fmt(rel, sizeof(rel), "bus/platform/drivers/%s/uevent", driver);
	put(sys, rel, "");
	fmt(rel, sizeof(rel), "%s/driver", dev);
	fmt(buf, sizeof(buf), "../../../../bus/platform/drivers/%s", driver);
	link_to(sys, rel, buf);
	fmt(rel, sizeof(rel), "%s/drm/card0/dev", dev);
	put(sys, rel, "226:0\n");
	fmt(rel, sizeof(rel), "%s/drm/card0/device", dev);
	fmt(buf, sizeof(buf), "../../../%s", name);
	link_to(sys, rel, buf);
	fmt(buf, sizeof(buf), "../../devices/platform/soc/%s/drm/card0", name);
	link_to(sys, "class/drm/card0", buf);
}

/* The name the module gives a platform GPU with these compatible strings. */
static void
name_for(const char *const *compat, bool of_node, char *name, size_t size)
{
	static int nr;
	char sys[PATH_MAX];
	struct run r;

	fmt(sys, sizeof(sys), "%s/names%d/sys", tmp_dir, nr++);
	platform_gpu(sys, "1000000.gpu", "panfrost", compat, of_node, !of_node);
	start(&r, sys, "card0");
	snprintf(name, size, "%s", r.dev.name);
	stop(&r);
}

/* --- the fixtures ----------------------------------------------------------- */

static void
test_match(void)
{
	struct drm_card c;

	memset(&c, 0, sizeof(c));
	ok(drm_module_generic.match(&c), "match: an unbound card");
	snprintf(c.driver, sizeof(c.driver), "panthor");
	ok(drm_module_generic.match(&c), "match: panthor");
	snprintf(c.driver, sizeof(c.driver), "nouveau");
	ok(drm_module_generic.match(&c), "match: nouveau");
}

static void
test_msm_adreno(void)
{
	char sys[PATH_MAX];
	struct run r;

	fmt(sys, sizeof(sys), "%s/msm-adreno/sys", fixtures);
	start(&r, sys, "card0");
	ok(!r.card.pci && !strcmp(r.card.platform, "3d00000.gpu"), "adreno: a platform device");
	is_str(r.dev.name, "Qualcomm Adreno 618", "adreno: named from of_node/compatible");
	is_dbl(val(&r.dev, GF_CLOCK_MAX_GRAPHICS), 800, EPS,
	       "adreno: the highest of available_frequencies, in MHz");
	is_dbl(val(&r.dev, GF_CLOCK_GRAPHICS), 355, EPS, "adreno: devfreq cur_freq in MHz");
	is_dbl(val(&r.dev, GF_CLOCK_SM), 355, EPS, "adreno: the same clock as the SM clock");
	is_dbl(val(&r.dev, GF_CLOCK_MAX_SM), 800, EPS, "adreno: and its maximum");
	is_dbl(val(&r.dev, GF_TEMP_GPU), 46.1, 1e-9,
	       "adreno: the hotter of gpuss0/gpuss1-thermal, not the CPU's zone");
	ok(!dev_has(&r.dev, GF_POWER_DRAW) && !dev_has(&r.dev, GF_FAN_RPM) &&
	           !dev_has(&r.dev, GF_MEM_TOTAL) && !dev_has(&r.dev, GF_UTIL_GPU),
	   "adreno: nothing else (engines and memory come from fdinfo)");
	stop(&r);
}

static void
test_msm_dpu(void)
{
	char sys[PATH_MAX];
	struct run r;

	fmt(sys, sizeof(sys), "%s/msm-dpu/sys", fixtures);
	start(&r, sys, "card0");
	is_str(r.card.driver, "msm_dpu", "dpu: the card is the display controller's");
	is_str(r.dev.name, "Qualcomm Adreno 690", "dpu: named after its component GPU's devfreq");
	is_dbl(val(&r.dev, GF_CLOCK_MAX_GRAPHICS), 690, EPS,
	       "dpu: the GPU's max from class/devfreq");
	is_dbl(val(&r.dev, GF_CLOCK_GRAPHICS), 270, EPS, "dpu: the GPU's clock");
	ok(!dev_has(&r.dev, GF_TEMP_GPU), "dpu: no GPU thermal zone, no temperature");
	stop(&r);
}

static void
test_msm_changes(void)
{
	char sys[PATH_MAX], path[PATH_MAX];
	struct run r;

	copy_root("msm-adreno", sys, sizeof(sys));
	put(sys, "devices/platform/soc@0/3d00000.gpu/devfreq/3d00000.gpu/cur_freq", "799999987\n");
	put(sys, "devices/platform/soc@0/3d00000.gpu/devfreq/3d00000.gpu/available_frequencies",
	    "");
	start(&r, sys, "card0");
	is_dbl(val(&r.dev, GF_CLOCK_GRAPHICS), 800, EPS, "adreno: 799999987 Hz is 800 MHz");
	is_dbl(val(&r.dev, GF_CLOCK_MAX_GRAPHICS), 800, EPS,
	       "adreno: no available_frequencies: max_freq");
	stop(&r);
	/* of_node gone: the compatible strings of uevent */
	fmt(path, sizeof(path), "%s/devices/platform/soc@0/3d00000.gpu/of_node", sys);
	ok(unlink(path) == 0, "adreno: of_node removed");
	start(&r, sys, "card0");
	is_str(r.dev.name, "Qualcomm Adreno 618", "adreno: named from uevent's OF_COMPATIBLE_*");
	stop(&r);
}

static void
watch_dir(int fd, const char *sys, const char *rel, int *nr)
{
	char path[PATH_MAX];

	fmt(path, sizeof(path), "%s/%s", sys, rel);
	if (inotify_add_watch(fd, path, IN_OPEN | IN_ACCESS) >= 0)
		(*nr)++;
	else
		diag("cannot watch '%s': %s", path, strerror(errno));
}

/* Files opened since the watches were set, other than runtime_status. */
static int
opened_others(int fd)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	int others = 0;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)(void *)p;

			if (!ev->len || strcmp(ev->name, "runtime_status")) {
				others++;
				diag("opened: %s", ev->len ? ev->name : "(a watched directory)");
			}
			p += sizeof(*ev) + ev->len;
		}
	return others;
}

static void
test_suspended(void)
{
	static const char *const dirs[] = {
		"devices/platform/soc@0/3d00000.gpu",
		"devices/platform/soc@0/3d00000.gpu/power",
		"devices/platform/soc@0/3d00000.gpu/devfreq",
		"devices/platform/soc@0/3d00000.gpu/devfreq/3d00000.gpu",
		"firmware/devicetree/base/soc@0/gpu@3d00000",
		"devices/virtual/thermal/thermal_zone11",
		"devices/virtual/thermal/thermal_zone12",
		"class/devfreq",
		"class/thermal",
	};
	char sys[PATH_MAX];
	struct run r;
	int fd, nr = 0;

	copy_root("msm-adreno", sys, sizeof(sys));
	put(sys, "devices/platform/soc@0/3d00000.gpu/power/runtime_status", "suspended\n");
	memset(&r, 0, sizeof(r));
	gs_config_init(&r.cfg);
	r.cfg.sysfs_root = sys;
	make_card(sys, "card0", &r.card);
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0) {
		skip("no inotify");
		return;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		watch_dir(fd, sys, dirs[i], &nr);
	ok(nr == (int)(sizeof(dirs) / sizeof(dirs[0])), "suspended: every directory watched");
	drm_module_generic.scan(&r.cfg, &r.card, &r.dev, &r.priv);
	drm_module_generic.read(&r.cfg, &r.card, r.priv, &r.dev);
	ok(r.priv == NULL && no_fields(&r.dev) && !r.dev.name[0], "suspended: nothing filled");
	is_int(opened_others(fd), 0, "suspended: no file but power/runtime_status was opened");
	close(fd);
	stop(&r);

	/* the same watch sees an awake GPU's files being read */
	put(sys, "devices/platform/soc@0/3d00000.gpu/power/runtime_status", "active\n");
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	nr = 0;
	for (size_t i = 0; fd >= 0 && i < sizeof(dirs) / sizeof(dirs[0]); i++)
		watch_dir(fd, sys, dirs[i], &nr);
	drm_module_generic.scan(&r.cfg, &r.card, &r.dev, &r.priv);
	drm_module_generic.read(&r.cfg, &r.card, r.priv, &r.dev);
	{
		char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
		int seen = 0;
		ssize_t n;

		while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
			for (char *p = buf; p < buf + n;) {
				const struct inotify_event *ev =
				        (const struct inotify_event *)(void *)p;

				seen++;
				p += sizeof(*ev) + ev->len;
			}
		ok(seen > 3, "suspended: once awake, the same watch sees the files read (%d)",
		   seen);
	}
	if (fd >= 0)
		close(fd);
	stop(&r);
}

/* --- trees built here -------------------------------------------------------- */

static void
test_names(void)
{
	static const struct {
		const char *compat[4];
		bool of_node;
		const char *name;
	} cases[] = {
		{ { "rockchip,rk3588-mali", "arm,mali-valhall-csf" },
		  false,
		  "Arm Mali (Valhall CSF)" },
		{ { "mediatek,mt8192-mali", "arm,mali-valhall-jm" }, true, "Arm Mali (Valhall)" },
		{ { "mediatek,mt8183-mali", "arm,mali-bifrost" }, true, "Arm Mali (Bifrost)" },
		{ { "rockchip,rk3399-mali", "arm,mali-t860" }, true, "Arm Mali-T860" },
		{ { "allwinner,sun50i-h5-mali", "arm,mali-450" }, false, "Arm Mali-450" },
		{ { "brcm,2711-v3d" }, true, "Broadcom V3D (BCM2711)" },
		{ { "brcm,2712-v3d" }, false, "Broadcom V3D (BCM2712)" },
		{ { "qcom,adreno-630.2", "qcom,adreno" }, true, "Qualcomm Adreno 630" },
		{ { "qcom,adreno-43050a01", "qcom,adreno" },
		  true,
		  "Qualcomm Adreno (chip id 43050a01)" },
		{ { "amd,imageon-200.1", "amd,imageon" }, false, "Qualcomm Adreno 200" },
		{ { "nvidia,gm20b" }, true, "NVIDIA Tegra GM20B" },
		{ { "ti,am62-gpu", "img,img-axe" }, true, "Imagination PowerVR AXE" },
		{ { "apple,agx-t8103", "apple,agx-g13g" }, true, "Apple AGX" },
		{ { "vendor,mystery-gpu" }, true, "" },
		{ { "qcom,adreno" }, true, "" },
		{ { "arm,mali-midgard-extra-long" }, true, "" },
	};
	char name[96];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		name_for(cases[i].compat, cases[i].of_node, name, sizeof(name));
		is_str(name, cases[i].name, "name: %s%s%s (%s)", cases[i].compat[0],
		       cases[i].compat[1] ? ", " : "", cases[i].compat[1] ? cases[i].compat[1] : "",
		       cases[i].of_node ? "of_node" : "uevent");
	}
}

static void
test_panthor(void)
{
	static const char *const compat[] = { "rockchip,rk3588-mali", "arm,mali-valhall-csf",
		                              NULL };
	char sys[PATH_MAX];
	struct run r;

	fmt(sys, sizeof(sys), "%s/panthor/sys", tmp_dir);
	platform_gpu(sys, "fb000000.gpu", "panthor", compat, true, true);
	put(sys, "devices/platform/soc/fb000000.gpu/devfreq/fb000000.gpu/cur_freq", "300000000\n");
	put(sys, "devices/platform/soc/fb000000.gpu/devfreq/fb000000.gpu/max_freq", "800000000\n");
	put(sys, "devices/platform/soc/fb000000.gpu/devfreq/fb000000.gpu/available_frequencies",
	    "300000000 400000000 500000000 600000000 700000000 800000000 900000000 1000000000\n");
	put(sys, "devices/virtual/thermal/thermal_zone5/type", "gpu-thermal\n");
	put(sys, "devices/virtual/thermal/thermal_zone5/temp", "39800\n");
	link_to(sys, "class/thermal/thermal_zone5", "../../devices/virtual/thermal/thermal_zone5");
	start(&r, sys, "card0");
	is_str(r.dev.name, "Arm Mali (Valhall CSF)", "panthor: the GPU entry, not the SoC's glue");
	is_dbl(val(&r.dev, GF_CLOCK_MAX_GRAPHICS), 1000, EPS,
	       "panthor: the hardware's highest step, above the max_freq policy");
	is_dbl(val(&r.dev, GF_CLOCK_GRAPHICS), 300, EPS, "panthor: cur_freq");
	is_dbl(val(&r.dev, GF_TEMP_GPU), 39.8, 1e-9, "panthor: the gpu-thermal zone");
	stop(&r);
}

static void
test_nouveau(void)
{
	char sys[PATH_MAX];
	const char *dev = "devices/pci0000:00/0000:00:01.0/0000:01:00.0";
	char rel[PATH_MAX];
	struct run r;

	fmt(sys, sizeof(sys), "%s/nouveau/sys", tmp_dir);
	fmt(rel, sizeof(rel), "%s/vendor", dev);
	put(sys, rel, "0x10de\n");
	fmt(rel, sizeof(rel), "%s/device", dev);
	put(sys, rel, "0x1c82\n");
	fmt(rel, sizeof(rel), "%s/power/runtime_status", dev);
	put(sys, rel, "active\n");
	fmt(rel, sizeof(rel), "%s/hwmon/hwmon3/name", dev);
	put(sys, rel, "nouveau\n");
	fmt(rel, sizeof(rel), "%s/hwmon/hwmon3/temp1_input", dev);
	put(sys, rel, "45000\n");
	fmt(rel, sizeof(rel), "%s/hwmon/hwmon3/power1_input", dev);
	put(sys, rel, "23456000\n");
	fmt(rel, sizeof(rel), "%s/hwmon/hwmon3/fan1_input", dev);
	put(sys, rel, "1200\n");
	put(sys, "bus/pci/drivers/nouveau/uevent", "");
	fmt(rel, sizeof(rel), "%s/driver", dev);
	link_to(sys, rel, "../../../../bus/pci/drivers/nouveau");
	fmt(rel, sizeof(rel), "%s/drm/card0/device", dev);
	link_to(sys, rel, "../../../0000:01:00.0");
	link_to(sys, "class/drm/card0",
	        "../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/drm/card0");
	put(sys, "devices/virtual/thermal/thermal_zone1/type", "gpu-thermal\n");
	put(sys, "devices/virtual/thermal/thermal_zone1/temp", "99000\n");
	link_to(sys, "class/thermal/thermal_zone1", "../../devices/virtual/thermal/thermal_zone1");
	start(&r, sys, "card0");
	ok(r.card.pci && r.card.vendor == 0x10de, "nouveau: a PCI card");
	is_str(r.dev.name, "", "nouveau: no name of its own (drm.c names it from pci.ids)");
	is_dbl(val(&r.dev, GF_TEMP_GPU), 45, EPS, "nouveau: hwmon temp1_input, not a thermal zone");
	is_dbl(val(&r.dev, GF_POWER_DRAW), 23.456, 1e-9, "nouveau: power1_input in W");
	is_dbl(val(&r.dev, GF_FAN_RPM), 1200, EPS, "nouveau: fan1_input");
	ok(!dev_has(&r.dev, GF_CLOCK_GRAPHICS), "nouveau: no devfreq, no clock");
	stop(&r);
	/* without hwmon, a PCI card takes no temperature from a SoC's zone */
	fmt(rel, sizeof(rel), "%s/%s/hwmon", sys, dev);
	rm_tree(rel);
	start(&r, sys, "card0");
	ok(!dev_has(&r.dev, GF_TEMP_GPU), "nouveau: no hwmon, no temperature");
	stop(&r);
}

static void
test_display_only(void)
{
	static const char *const gpu[] = { "rockchip,rk3588-mali", "arm,mali-valhall-csf", NULL };
	static const char *const disp[] = { "rockchip,display-subsystem", NULL };
	char sys[PATH_MAX], gsys[PATH_MAX], card[PATH_MAX];
	struct stat st;
	struct run r;

	/* a SoC's display card beside its GPU: it takes neither the GPU's clock nor its zone */
	fmt(gsys, sizeof(gsys), "%s/rk-gpu/sys", tmp_dir);
	platform_gpu(gsys, "fb000000.gpu", "panthor", gpu, true, true);
	put(gsys, "devices/platform/soc/fb000000.gpu/devfreq/fb000000.gpu/cur_freq", "300000000\n");
	link_to(gsys, "class/devfreq/fb000000.gpu",
	        "../../devices/platform/soc/fb000000.gpu/devfreq/fb000000.gpu");
	put(gsys, "devices/virtual/thermal/thermal_zone5/type", "gpu-thermal\n");
	put(gsys, "devices/virtual/thermal/thermal_zone5/temp", "39800\n");
	link_to(gsys, "class/thermal/thermal_zone5", "../../devices/virtual/thermal/thermal_zone5");
	fmt(sys, sizeof(sys), "%s/rk-display", tmp_dir);
	make_dir(sys);
	fmt(sys, sizeof(sys), "%s/rk-display/sys", tmp_dir);
	copy_tree(gsys, sys);
	join(card, sizeof(card), sys, "class/drm/card0");
	ok(lstat(card, &st) == 0 && S_ISLNK(st.st_mode), "display: a copy of the GPU's tree");
	platform_gpu(sys, "display-subsystem", "rockchip-drm", disp, true, true);
	start(&r, gsys, "card0");
	ok(dev_has(&r.dev, GF_CLOCK_GRAPHICS) && dev_has(&r.dev, GF_TEMP_GPU),
	   "display: the GPU's own card has its clock and zone");
	stop(&r);
	start(&r, sys, "card0");
	is_str(r.card.driver, "rockchip-drm", "display: the display card");
	is_str(r.dev.name, "", "display: no GPU name");
	ok(!dev_has(&r.dev, GF_CLOCK_GRAPHICS) && !dev_has(&r.dev, GF_CLOCK_MAX_GRAPHICS),
	   "display: not the GPU's clock (class/devfreq is looked at for msm only)");
	ok(!dev_has(&r.dev, GF_TEMP_GPU), "display: not the GPU's thermal zone");
	stop(&r);
}

/* --- hwmon of PCI cards (radeon, nouveau, any driver) --------------------------------- */

/*
 * A PCI GPU at 0000:01:00.0 bound to driver, its card0, and its hwmon
 * directory hwmon (named after the driver unless name is given), as
 * sysfs shows them. Returns the hwmon directory relative to sys in hw.
 */
static void
pci_gpu(const char *sys, const char *driver, const char *vendor, const char *hwmon,
        const char *name, char *hw, size_t size)
{
	const char *dev = "devices/pci0000:00/0000:00:01.0/0000:01:00.0";
	char rel[PATH_MAX], buf[PATH_MAX];

	fmt(rel, sizeof(rel), "%s/vendor", dev);
	put(sys, rel, vendor);
	fmt(rel, sizeof(rel), "%s/power/runtime_status", dev);
	put(sys, rel, "active\n");
	fmt(rel, sizeof(rel), "bus/pci/drivers/%s/uevent", driver);
	put(sys, rel, "");
	fmt(rel, sizeof(rel), "%s/driver", dev);
	fmt(buf, sizeof(buf), "../../../../bus/pci/drivers/%s", driver);
	link_to(sys, rel, buf);
	fmt(rel, sizeof(rel), "%s/drm/card0/device", dev);
	link_to(sys, rel, "../../../0000:01:00.0");
	link_to(sys, "class/drm/card0",
	        "../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/drm/card0");
	fmt(hw, size, "%s/hwmon/%s", dev, hwmon);
	fmt(rel, sizeof(rel), "%s/name", hw);
	fmt(buf, sizeof(buf), "%s\n", name ? name : driver);
	put(sys, rel, buf);
}

/* hw/file under sys */
static void
hw_put(const char *sys, const char *hw, const char *file, const char *text)
{
	char rel[PATH_MAX];

	fmt(rel, sizeof(rel), "%s/%s", hw, file);
	put(sys, rel, text);
}

static void
hw_rm(const char *sys, const char *hw, const char *file)
{
	char path[PATH_MAX];

	fmt(path, sizeof(path), "%s/%s/%s", sys, hw, file);
	unlink(path);
}

static void
test_radeon(void)
{
	char sys[PATH_MAX], hw[PATH_MAX], other[PATH_MAX];
	struct run r;

	/* the hwmon3 of LACT's HD 7870 (Pitcairn, radeon) */
	fmt(sys, sizeof(sys), "%s/radeon/sys", tmp_dir);
	pci_gpu(sys, "radeon", "0x1002\n", "hwmon3", NULL, hw, sizeof(hw));
	hw_put(sys, hw, "freq1_input", "300000000\n");
	hw_put(sys, hw, "pwm1", "51\n");
	hw_put(sys, hw, "pwm1_enable", "1\n");
	hw_put(sys, hw, "pwm1_min", "0\n");
	hw_put(sys, hw, "pwm1_max", "255\n");
	hw_put(sys, hw, "temp1_input", "27000\n");
	hw_put(sys, hw, "temp1_crit", "120000\n");
	hw_put(sys, hw, "temp1_crit_hyst", "90000\n");
	/* another hwmon of the device, lower-numbered: not the driver's */
	fmt(other, sizeof(other), "%s", hw);
	snprintf(strrchr(other, '/') + 1, 16, "hwmon0");
	hw_put(sys, other, "name", "acpi_fan\n");
	hw_put(sys, other, "temp1_input", "99000\n");
	hw_put(sys, other, "freq1_input", "900000000\n");
	start(&r, sys, "card0");
	ok(r.card.pci && !strcmp(r.card.driver, "radeon"), "radeon: a PCI card");
	is_dbl(val(&r.dev, GF_CLOCK_GRAPHICS), 300, EPS, "radeon: freq1_input (unlabelled) in MHz");
	is_dbl(val(&r.dev, GF_CLOCK_SM), 300, EPS, "radeon: sclk is the SM clock too");
	ok(!dev_has(&r.dev, GF_CLOCK_MEM), "radeon: no mclk channel, no memory clock");
	is_dbl(val(&r.dev, GF_FAN), 20, EPS, "radeon: pwm1 51 of pwm1_max 255 is 20%%");
	is_dbl(val(&r.dev, GF_TEMP_GPU), 27, EPS,
	       "radeon: temp1_input of the hwmon named radeon, not of the lower hwmon0");
	ok(!dev_has(&r.dev, GF_FAN_RPM) && !dev_has(&r.dev, GF_POWER_DRAW) &&
	           !dev_has(&r.dev, GF_TEMP_HOTSPOT) && !dev_has(&r.dev, GF_TEMP_MEM),
	   "radeon: no fan1_input, power or other temperature: unknown");
	stop(&r);

	/* no pwm1_max: the ABI's 0..255; an unreadable one too */
	hw_rm(sys, hw, "pwm1_max");
	start(&r, sys, "card0");
	is_dbl(val(&r.dev, GF_FAN), 20, EPS, "radeon: no pwm1_max, pwm1 is 0..255");
	stop(&r);
	hw_put(sys, hw, "pwm1_max", "garbage\n");
	start(&r, sys, "card0");
	is_dbl(val(&r.dev, GF_FAN), 20, EPS, "radeon: an unreadable pwm1_max, pwm1 is 0..255");
	stop(&r);
	/* no hwmon named after the driver: the lowest-numbered */
	hw_put(sys, hw, "name", "something\n");
	start(&r, sys, "card0");
	is_dbl(val(&r.dev, GF_TEMP_GPU), 99, EPS, "radeon: no hwmon named radeon: hwmon0");
	stop(&r);
}

static void
test_hwmon_labels(void)
{
	char sys[PATH_MAX], hw[PATH_MAX];
	struct run r;

	fmt(sys, sizeof(sys), "%s/labels/sys", tmp_dir);
	pci_gpu(sys, "mygpu", "0x1234\n", "hwmon7", NULL, hw, sizeof(hw));
	/* the channels in an order of their own: only the labels say which is which */
	hw_put(sys, hw, "temp1_input", "61000\n");
	hw_put(sys, hw, "temp1_label", "mem\n");
	hw_put(sys, hw, "temp2_input", "48500\n");
	hw_put(sys, hw, "temp2_label", "vrgfx\n");
	hw_put(sys, hw, "temp3_input", "52000\n");
	hw_put(sys, hw, "temp3_label", "junction\n");
	hw_put(sys, hw, "temp4_input", "45000\n");
	hw_put(sys, hw, "temp4_label", "edge\n");
	hw_put(sys, hw, "freq1_input", "1000000000\n");
	hw_put(sys, hw, "freq1_label", "mclk\n");
	hw_put(sys, hw, "freq2_input", "1799999999\n");
	hw_put(sys, hw, "freq2_label", "sclk\n");
	hw_put(sys, hw, "power1_average", "35123000\n");
	hw_put(sys, hw, "power1_input", "41000000\n");
	hw_put(sys, hw, "fan1_input", "1450\n");
	hw_put(sys, hw, "pwm1", "50\n");
	hw_put(sys, hw, "pwm1_max", "200\n");
	hw_put(sys, hw, "pwm1_enable", "2\n");
	start(&r, sys, "card0");
	is_dbl(val(&r.dev, GF_TEMP_GPU), 45, EPS, "labels: edge is the GPU's temperature");
	is_dbl(val(&r.dev, GF_TEMP_HOTSPOT), 52, EPS, "labels: junction is the hotspot");
	is_dbl(val(&r.dev, GF_TEMP_MEM), 61, EPS, "labels: mem is the memory's");
	is_dbl(val(&r.dev, GF_CLOCK_GRAPHICS), 1800, EPS, "labels: sclk (freq2) in MHz, rounded");
	is_dbl(val(&r.dev, GF_CLOCK_MEM), 1000, EPS, "labels: mclk (freq1) is the memory clock");
	is_dbl(val(&r.dev, GF_POWER_AVERAGE), 35.123, 1e-9, "labels: power1_average in W");
	is_dbl(val(&r.dev, GF_POWER_INSTANT), 41, 1e-9, "labels: power1_input in W");
	is_dbl(val(&r.dev, GF_POWER_DRAW), 35.123, 1e-9, "labels: the draw is the average");
	is_dbl(val(&r.dev, GF_FAN_RPM), 1450, EPS, "labels: fan1_input in rpm");
	is_dbl(val(&r.dev, GF_FAN), 25, EPS, "labels: pwm1 50 of pwm1_max 200 is 25%%");
	stop(&r);

	/* no GPU label: the first unlabelled channel; an unknown label is not the GPU's */
	hw_rm(sys, hw, "temp4_label");
	hw_put(sys, hw, "temp5_input", "70000\n");
	hw_rm(sys, hw, "freq2_label");
	hw_rm(sys, hw, "power1_average");
	start(&r, sys, "card0");
	is_dbl(val(&r.dev, GF_TEMP_GPU), 45, EPS,
	       "labels: no edge: the first unlabelled (temp4), not vrgfx (temp2)");
	is_dbl(val(&r.dev, GF_CLOCK_GRAPHICS), 1800, EPS, "labels: no sclk: the unlabelled freq2");
	is_dbl(val(&r.dev, GF_POWER_DRAW), 41, 1e-9,
	       "labels: no average: the draw is power1_input");
	ok(!dev_has(&r.dev, GF_POWER_AVERAGE), "labels: and no average");
	stop(&r);

	/* every channel labelled, none known: no GPU temperature, no clock */
	hw_put(sys, hw, "temp4_label", "vddnb\n");
	hw_put(sys, hw, "temp5_label", "soc\n");
	hw_put(sys, hw, "freq2_label", "fclk\n");
	start(&r, sys, "card0");
	ok(!dev_has(&r.dev, GF_TEMP_GPU), "labels: only unknown labels: no GPU temperature");
	ok(!dev_has(&r.dev, GF_CLOCK_GRAPHICS), "labels: fclk is not the graphics clock");
	is_dbl(val(&r.dev, GF_CLOCK_MEM), 1000, EPS, "labels: mclk still is the memory clock");
	stop(&r);
}

static void
test_hwmon_broken(void)
{
	/* what a file may hold that is no reading */
	static const struct {
		const char *text;
		size_t len;
		const char *what;
	} bad[] = {
		{ "", 0, "empty" },
		{ "\n", 1, "an empty line" },
		{ "garbage\n", 8, "garbage" },
		{ "12abc\n", 6, "a number with garbage after it" },
		{ "0xffffffff\n", 11, "0xffffffff" },
		{ "4294967295\n", 11, "4294967295" },
		{ "18446744073709551615\n", 21, "0xffffffffffffffff (out of range)" },
		{ "0xffffffffffffffff\n", 19, "0xffffffffffffffff" },
		{ "-1\n", 3, "-1" },
		{ "\0\0\0\0", 4, "NULs" },
	};
	static const struct {
		const char *file;
		enum gpu_field f;
	} files[] = {
		{ "temp1_input", GF_TEMP_GPU },
		{ "freq1_input", GF_CLOCK_GRAPHICS },
		{ "freq2_input", GF_CLOCK_MEM },
		{ "power1_average", GF_POWER_AVERAGE },
		{ "power1_input", GF_POWER_INSTANT },
		{ "fan1_input", GF_FAN_RPM },
		{ "pwm1", GF_FAN },
	};
	char sys[PATH_MAX], hw[PATH_MAX], rel[PATH_MAX];
	struct run r;

	fmt(sys, sizeof(sys), "%s/broken/sys", tmp_dir);
	pci_gpu(sys, "radeon", "0x1002\n", "hwmon2", NULL, hw, sizeof(hw));
	hw_put(sys, hw, "freq2_label", "mclk\n");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
			fmt(rel, sizeof(rel), "%s/%s", hw, files[k].file);
			put_bytes(sys, rel, bad[i].text, bad[i].len);
		}
		start(&r, sys, "card0");
		for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++)
			ok(!dev_has(&r.dev, files[k].f), "broken: %s in %s: unknown", bad[i].what,
			   files[k].file);
		ok(!dev_has(&r.dev, GF_POWER_DRAW) && !dev_has(&r.dev, GF_CLOCK_SM),
		   "broken: %s: no draw, no SM clock either", bad[i].what);
		stop(&r);
	}

	/* values past what the hardware can give are sentinels, not readings */
	hw_put(sys, hw, "temp1_input", "255000\n");
	hw_put(sys, hw, "freq1_input", "0\n");
	hw_put(sys, hw, "fan1_input", "65535\n");
	hw_put(sys, hw, "pwm1", "256\n");
	hw_put(sys, hw, "power1_input", "-5000000\n");
	start(&r, sys, "card0");
	ok(!dev_has(&r.dev, GF_TEMP_GPU), "broken: 255 °C is no temperature");
	ok(!dev_has(&r.dev, GF_CLOCK_GRAPHICS),
	   "broken: 0 Hz (radeon's 'cannot read') is no clock");
	ok(!dev_has(&r.dev, GF_FAN_RPM), "broken: 65535 rpm is no fan speed");
	ok(!dev_has(&r.dev, GF_FAN), "broken: pwm1 256 of 255 is no share");
	ok(!dev_has(&r.dev, GF_POWER_DRAW), "broken: a negative power is no draw");
	stop(&r);

	/* and true zeros are readings */
	hw_put(sys, hw, "fan1_input", "0\n");
	hw_put(sys, hw, "pwm1", "0\n");
	hw_put(sys, hw, "power1_input", "0\n");
	hw_put(sys, hw, "temp1_input", "30000\n");
	start(&r, sys, "card0");
	is_dbl(val(&r.dev, GF_FAN_RPM), 0, EPS, "broken: a stopped fan reads 0 rpm");
	is_dbl(val(&r.dev, GF_FAN), 0, EPS, "broken: and pwm1 0 is 0%%");
	is_dbl(val(&r.dev, GF_POWER_DRAW), 0, EPS, "broken: 0 W is a reading");
	is_dbl(val(&r.dev, GF_TEMP_GPU), 30, EPS, "broken: a good value is read again");
	stop(&r);
}

static void
test_nouveau_pwm(void)
{
	char sys[PATH_MAX], hw[PATH_MAX];
	struct run r;

	/* nouveau's pwm1 is a percent; its pwm1_max the highest duty it allows */
	fmt(sys, sizeof(sys), "%s/nouveau-pwm/sys", tmp_dir);
	pci_gpu(sys, "nouveau", "0x10de\n", "hwmon1", NULL, hw, sizeof(hw));
	hw_put(sys, hw, "temp1_input", "41000\n");
	hw_put(sys, hw, "pwm1", "40\n");
	hw_put(sys, hw, "pwm1_min", "30\n");
	hw_put(sys, hw, "pwm1_max", "80\n");
	/* 0: the driver leaves the fan to the hardware; pwm1 still reads its duty */
	hw_put(sys, hw, "pwm1_enable", "0\n");
	start(&r, sys, "card0");
	is_dbl(val(&r.dev, GF_FAN), 40, EPS,
	       "nouveau: pwm1 40 is 40%%, whatever pwm1_max and pwm1_enable 0 say");
	is_dbl(val(&r.dev, GF_TEMP_GPU), 41, EPS, "nouveau: temp1_input");
	stop(&r);
	hw_put(sys, hw, "pwm1", "101\n");
	start(&r, sys, "card0");
	ok(!dev_has(&r.dev, GF_FAN), "nouveau: pwm1 101 is no percent");
	stop(&r);
}

int
main(void)
{
	int rc;

	find_fixtures();
	make_tmp_dir("t_generic");
	test_match();
	test_msm_adreno();
	test_msm_dpu();
	test_msm_changes();
	test_suspended();
	test_names();
	test_panthor();
	test_nouveau();
	test_display_only();
	test_radeon();
	test_hwmon_labels();
	test_hwmon_broken();
	test_nouveau_pwm();
	rc = done_testing();
	rm_tree(tmp_dir);
	return rc;
}
