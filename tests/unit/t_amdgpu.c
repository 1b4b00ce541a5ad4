/*
 * The amdgpu module of the DRM backend on fixture trees (tests/fixtures/
 * amd-*): every mapping of sysfs, hwmon, pp_dpm and gpu_metrics onto the
 * sample model, the parsers on the real-world variants of their formats,
 * every gpu_metrics layout (the real RX 7800 XT table, and tables built
 * here at offsets worked out by hand from the kernel's layouts), broken
 * files, KFD processes, and a suspended card that is not touched.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "tree.h"

#include "backend/amdgpu_metrics.h"
#include "backend/drm.h"
#include "core/config.h"
#include "core/err.h"
#include "core/fields.h"
#include "core/gpu.h"
#include "core/xalloc.h"

/* --- checks of one field ----------------------------------------------------- */

static void
field_is(const struct gpu_device *d, enum gpu_field f, double want, const char *ctx)
{
	if (!ok(dev_has(d, f) && fabs(d->v[f] - want) <= 1e-6 * fmax(1, fabs(want)),
	        "%s: %s = %.17g", ctx, field_info(f)->key, want))
		diag("     got: %s%.17g", dev_has(d, f) ? "" : "(unknown) ", d->v[f]);
}

static void
field_unknown(const struct gpu_device *d, enum gpu_field f, const char *ctx)
{
	if (!ok(!dev_has(d, f), "%s: %s unknown", ctx, field_info(f)->key))
		diag("     got: %.17g", d->v[f]);
}

/* --- a card as drm.c's probe_card() fills it ------------------------------------ */

struct rig {
	char root[2200];
	struct gs_config cfg;
	struct drm_card card;
	struct gpu_device dev;
	void *priv;
};

static void
rig_open(struct rig *r, const char *fixture, const char *card, const char *pci_addr,
         unsigned device)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->root, sizeof(r->root), "%s/%s/sys", fixtures, fixture);
	gs_config_init(&r->cfg);
	r->cfg.sysfs_root = r->root;
	r->cfg.proc_root = "/nonexistent";
	snprintf(r->card.name, sizeof(r->card.name), "%s", card);
	r->card.minor = (unsigned)strtoul(card + 4, NULL, 10);
	snprintf(r->card.dev, sizeof(r->card.dev), "class/drm/%s/device", card);
	snprintf(r->card.driver, sizeof(r->card.driver), "amdgpu");
	snprintf(r->card.pci_addr, sizeof(r->card.pci_addr), "%s", pci_addr);
	snprintf(r->card.platform, sizeof(r->card.platform), "%s", pci_addr);
	r->card.vendor = 0x1002;
	r->card.device = device;
	r->card.pci = true;
}

/*
 * scan, then read, as drm.c does (read works on a copy of the scan), with
 * the PCIe link that drm.c reads for every PCI GPU after the module
 */
static void
rig_scan_read(struct rig *r)
{
	ok(drm_module_amdgpu.match(&r->card), "%s: the amdgpu module reads it", r->card.name);
	is_int(drm_module_amdgpu.scan(&r->cfg, &r->card, &r->dev, &r->priv), 0, "%s: scan",
	       r->card.name);
	is_int(drm_module_amdgpu.read(&r->cfg, &r->card, r->priv, &r->dev), 0, "%s: read",
	       r->card.name);
	drm_read_pcie(&r->cfg, &r->card, &r->dev);
}

static void
rig_close(struct rig *r)
{
	drm_module_amdgpu.free(r->priv);
	r->priv = NULL;
}

/* --- parsers --------------------------------------------------------------------- */

static void
levels_case(const char *name, const char *text, size_t len, unsigned nr, const uint32_t *mhz,
            int current, uint32_t max)
{
	struct clock_levels lv;
	unsigned got = amdgpu_parse_levels(text, len, &lv);
	bool same = got == nr && lv.nr == nr;

	for (unsigned i = 0; same && i < nr; i++)
		same = lv.mhz[i] == mhz[i];
	if (!ok(same, "pp_dpm %s: %u levels as printed", name, nr)) {
		diag("     got %u levels:", lv.nr);
		for (unsigned i = 0; i < lv.nr; i++)
			diag("       %u MHz", lv.mhz[i]);
	}
	is_int(lv.current, current, "pp_dpm %s: current level %d", name, current);
	is_int(amdgpu_levels_max(&lv), max, "pp_dpm %s: highest %u MHz", name, max);
}

#define LEVELS(name, text, current, max, ...)                                                \
	do {                                                                                 \
		static const uint32_t mhz_[] = { __VA_ARGS__ };                              \
		levels_case(name, text, strlen(text), ARRAY_SIZE(mhz_), mhz_, current, max); \
	} while (0)

static void
test_levels(void)
{
	static const char padded[64] = "0: 500Mhz *\n1: 2660Mhz \n"; /* the rest NULs */
	struct clock_levels lv;

	/* every variant of fixtures.md 2.2 */
	LEVELS("RX580",
	       "0: 300Mhz \n1: 600Mhz \n2: 900Mhz *\n3: 1145Mhz \n4: 1215Mhz \n5: 1257Mhz \n6: 1300Mhz \n7: 1366Mhz \n",
	       2, 1366, 300, 600, 900, 1145, 1215, 1257, 1300, 1366);
	LEVELS("Vega56",
	       "0: 852Mhz *\n1: 991Mhz \n2: 1138Mhz \n3: 1269Mhz \n4: 1312Mhz \n5: 1474Mhz \n6: 1538Mhz \n7: 1590Mhz \n",
	       0, 1590, 852, 991, 1138, 1269, 1312, 1474, 1538, 1590);
	LEVELS("RX6900XT", "0: 500Mhz *\n1: 2660Mhz \n", 0, 2660, 500, 2660);
	LEVELS("RX6600XT in GFXOFF (two stars, zeros)", "0: 0Mhz *\n1: 0Mhz *\n", 0, 0, 0, 0);
	LEVELS("RX5500XT (intermediate level)", "0: 300Mhz \n1: 0Mhz *\n2: 1900Mhz \n", 1, 1900,
	       300, 0, 1900);
	LEVELS("RX7800XT (no space before '*')", "0: 500Mhz\n1: 77Mhz *\n2: 2254Mhz\n", 1, 2254,
	       500, 77, 2254);
	LEVELS("RX7900XTX", "0: 500Mhz\n1: 31Mhz *\n2: 2219Mhz\n", 1, 2219, 500, 31, 2219);
	LEVELS("RX9070XT (S: deep sleep)",
	       "S: 19Mhz *\n0: 615Mhz\n1: 800Mhz\n2: 888Mhz\n3: 1000Mhz\n", 0, 1000, 19, 615, 800,
	       888, 1000);
	LEVELS("RX9070 (S: not current)", "S: 500Mhz\n1: 789Mhz *\n2: 2070Mhz\n", 1, 2070, 500, 789,
	       2070);
	LEVELS("RX9070XT (amdgpu-sysfs-rs)", "0: 500Mhz\n1: 0Mhz *\n2: 2520Mhz\n", 1, 2520, 500, 0,
	       2520);
	LEVELS("Phoenix", "0: 800Mhz *\n1: 1100Mhz \n2: 2700Mhz \n", 0, 2700, 800, 1100, 2700);
	LEVELS("Van Gogh", "0: 200Mhz *\n1: 1100Mhz \n2: 1600Mhz \n", 0, 1600, 200, 1100, 1600);
	LEVELS("Van Gogh mclk (two stars)", "0: 400Mhz \n1: 600Mhz \n2: 687Mhz *\n3: 687Mhz *\n", 2,
	       687, 400, 600, 687, 687);
	LEVELS("7800XT mclk", "0: 96Mhz \n1: 456Mhz *\n2: 772Mhz \n3: 1218Mhz \n", 1, 1218, 96, 456,
	       772, 1218);
	LEVELS("MHz spelled upper case", "0: 300MHz\n1: 900MHz *\n", 1, 900, 300, 900);
	LEVELS("no final newline", "0: 300Mhz\n1: 900Mhz *", 1, 900, 300, 900);

	/* R7 240, R9 280: the file is empty */
	is_int(amdgpu_parse_levels("", 0, &lv), 0, "pp_dpm empty file: no levels");
	is_int(lv.current, -1, "pp_dpm empty file: no current level");
	/* RX 6900 XT pages are padded with NULs */
	is_int(amdgpu_parse_levels(padded, sizeof(padded), &lv), 2, "pp_dpm NUL-padded: 2 levels");
	is_int(lv.mhz[1], 2660, "pp_dpm NUL-padded: 2660 MHz");
	/* not levels: pp_dpm_pcie, pp_od_clk_voltage headers, junk */
	is_int(amdgpu_parse_levels("0: 2.5GT/s, x8 \n1: 8.0GT/s, x16 *\n", 34, &lv), 0,
	       "pp_dpm_pcie lines are no clock levels");
	is_int(amdgpu_parse_levels("OD_SCLK:\n0: 500Mhz\n", 19, &lv), 1,
	       "a header line is skipped, the level kept");
	is_int(amdgpu_parse_levels("3: Mhz *\nx: 5Mhz\n: 5Mhz\n", 24, &lv), 0,
	       "lines without a number or an index are skipped");
	/* more than 16 lines: the first 16 are kept */
	{
		char many[512] = "";
		size_t n = 0;

		for (int i = 0; i < 20; i++)
			n += (size_t)snprintf(many + n, sizeof(many) - n, "%d: %dMhz%s\n", i,
			                      100 * (i + 1), i == 18 ? " *" : "");
		is_int(amdgpu_parse_levels(many, n, &lv), 16, "20 lines: 16 kept");
		is_int(lv.current, -1, "20 lines: a star past the 16th is not an index");
	}
}

/* pp_od_clk_voltage of LACT's snapshots */
static void
test_od(void)
{
	static const char rx6900xt[] = "OD_SCLK:\n0: 500Mhz\n1: 2499Mhz\nOD_MCLK:\n0: 97Mhz\n"
	                               "1: 1000MHz\nOD_VDDGFX_OFFSET:\n-10mV\nOD_RANGE:\n"
	                               "SCLK: 500Mhz 3000Mhz\nMCLK: 674Mhz 1075Mhz\n";
	static const char vega56[] =
	        "OD_SCLK:\n0:        852Mhz        800mV\n"
	        "7:       1590Mhz       1200mV\nOD_MCLK:\n"
	        "0:        167Mhz        800mV\n3:        920Mhz        950mV\n"
	        "OD_RANGE:\nSCLK:     852MHz       2400MHz\n";
	static const char rx9070[] = "OD_SCLK_OFFSET:\n0Mhz\nOD_MCLK:\n0: 97Mhz\n1: 1259MHz\n"
	                             "OD_RANGE:\nSCLK_OFFSET:    -500Mhz       1000Mhz\n"
	                             "MCLK:      97Mhz       1500Mhz\n";
	static const char rx5700xt[] = "OD_SCLK:\n0: 1351Mhz\n1: 1900Mhz\nOD_MCLK:\n1: 875MHz\n"
	                               "OD_VDDC_CURVE:\n0: 1351MHz 750mV\n2: 1900MHz 1100mV\n";
	static const char phoenix[] =
	        "OD_SCLK:\n0:        800Mhz\n1:       2700Mhz\n"
	        "                    OD_RANGE:\nSCLK:     800Mhz       9999Mhz\n";

	is_int(amdgpu_od_max(rx6900xt, sizeof(rx6900xt) - 1, "OD_SCLK"), 2499,
	       "OD: RX 6900 XT held to 2499 MHz");
	is_int(amdgpu_od_max(rx6900xt, sizeof(rx6900xt) - 1, "OD_MCLK"), 1000,
	       "OD: RX 6900 XT memory 1000 MHz ('MHz')");
	is_int(amdgpu_od_max(vega56, sizeof(vega56) - 1, "OD_SCLK"), 1590,
	       "OD: Vega 56 levels with voltages");
	is_int(amdgpu_od_max(vega56, sizeof(vega56) - 1, "OD_MCLK"), 920, "OD: Vega 56 memory");
	is_int(amdgpu_od_max(rx9070, sizeof(rx9070) - 1, "OD_SCLK"), 0,
	       "OD: RX 9070 has only an offset: no maximum");
	is_int(amdgpu_od_max(rx9070, sizeof(rx9070) - 1, "OD_MCLK"), 1259, "OD: RX 9070 memory");
	is_int(amdgpu_od_max(rx5700xt, sizeof(rx5700xt) - 1, "OD_MCLK"), 875,
	       "OD: RX 5700 XT one memory line; the curve is another section");
	is_int(amdgpu_od_max(phoenix, sizeof(phoenix) - 1, "OD_SCLK"), 2700,
	       "OD: Phoenix, a header padded with spaces ends the section");
	is_int(amdgpu_od_max("", 0, "OD_SCLK"), 0, "OD: empty file");
}

static void
test_small_parsers(void)
{
	uint64_t ue = 9, ce = 9;

	is_int(drm_pcie_gen("2.5 GT/s PCIe"), 1, "2.5 GT/s is gen 1");
	is_int(drm_pcie_gen("5.0 GT/s PCIe"), 2, "5.0 GT/s is gen 2");
	is_int(drm_pcie_gen("8.0 GT/s PCIe"), 3, "8.0 GT/s is gen 3");
	is_int(drm_pcie_gen("16.0 GT/s PCIe"), 4, "16.0 GT/s is gen 4");
	is_int(drm_pcie_gen("32.0 GT/s PCIe"), 5, "32.0 GT/s is gen 5");
	is_int(drm_pcie_gen("64.0 GT/s PCIe"), 6, "64.0 GT/s is gen 6");
	is_int(drm_pcie_gen("16 GT/s"), 4, "16 GT/s without 'PCIe' is gen 4");
	is_int(drm_pcie_gen("Unknown"), -1, "'Unknown' has no generation");
	is_int(drm_pcie_gen("16.0 GT/"), -1, "a cut speed has no generation");
	is_int(drm_pcie_gen("12.0 GT/s PCIe"), -1, "12 GT/s is no generation");
	is_int(drm_pcie_gen(""), -1, "an empty speed has no generation");
	is_int(drm_pcie_gen_of(16.0), 4, "16.0 GT/s (gpu_metrics 160) is gen 4");

	is_int(amdgpu_parse_ras("ue: 1\nce: 5\n", &ue, &ce), 0, "RAS counts parse");
	ok(ue == 1 && ce == 5, "RAS ue 1, ce 5");
	is_int(amdgpu_parse_ras("ce: 3\nue: 0", &ue, &ce), 0, "RAS counts in either order");
	ok(ue == 0 && ce == 3, "RAS ue 0, ce 3");
	is_int(amdgpu_parse_ras("ue: x\n", &ue, &ce), E_PARSE, "RAS garbage is refused");
	is_int(amdgpu_parse_ras("", &ue, &ce), E_PARSE, "RAS empty is refused");
}

static void
test_throttle(void)
{
	char names[96];
	unsigned r;

	r = amdgpu_throttle_reasons(0, names, sizeof(names));
	ok(r == 0 && !names[0], "no throttler: no reason, no names");
	r = amdgpu_throttle_reasons(1ULL << 0 | 1ULL << 36, names, sizeof(names));
	is_int(r, CR_SW_POWER_CAP | CR_SW_THERMAL, "PPT0 + TEMP_HOTSPOT: power cap and thermal");
	is_str(names, "PPT0, TEMP_HOTSPOT", "PPT0 + TEMP_HOTSPOT: the driver's names");
	r = amdgpu_throttle_reasons(1ULL << 4 | 1ULL << 5 | 1ULL << 6, names, sizeof(names));
	is_int(r, CR_SW_POWER_CAP, "SPL, FPPT, SPPT: power cap");
	is_str(names, "SPL, FPPT, SPPT", "SPL, FPPT, SPPT named");
	r = amdgpu_throttle_reasons(1ULL << 16 | 1ULL << 22, names, sizeof(names));
	is_int(r, CR_SW_POWER_CAP, "TDC_GFX, EDC_GFX: power cap");
	r = amdgpu_throttle_reasons(1ULL << 34 | 1ULL << 35, names, sizeof(names));
	is_int(r, CR_SW_THERMAL, "TEMP_MEM, TEMP_EDGE: thermal");
	r = amdgpu_throttle_reasons(1ULL << 44 | 1ULL << 47, names, sizeof(names));
	is_int(r, CR_HW_SLOWDOWN, "VRHOT0, PROCHOT_GFX: hardware slowdown");
	is_str(names, "VRHOT0, PROCHOT_GFX", "VRHOT0, PROCHOT_GFX named");
	r = amdgpu_throttle_reasons(1ULL << 57, names, sizeof(names));
	ok(r == 0 && !strcmp(names, "FIT"), "FIT is named, with no NVML reason");
	r = amdgpu_throttle_reasons(1ULL << 12, names, sizeof(names));
	ok(r == 0 && !names[0], "an undefined bit is neither a reason nor a name");
	/* every defined bit: the names are cut at a whole name */
	r = amdgpu_throttle_reasons(UINT64_MAX, names, 24);
	is_int(r, CR_SW_POWER_CAP | CR_SW_THERMAL | CR_HW_SLOWDOWN, "all bits: all three reasons");
	is_str(names, "PPT0, PPT1, PPT2, PPT3", "names cut at a whole name");
	is_int(amdgpu_throttle_supported(), CR_SW_POWER_CAP | CR_SW_THERMAL | CR_HW_SLOWDOWN,
	       "supported reasons");
}

/* --- gpu_metrics ------------------------------------------------------------------- */

/* the whole gpu_metrics file of LACT's rx7800xt snapshot (fixtures.md 2.4) */
static const unsigned char rx7800xt[120] = {
	0x78, 0x00, 0x01, 0x03, 0x18, 0x00, 0x1f, 0x00, 0x30, 0x00, 0x22, 0x00, 0x20, 0x00, 0x22,
	0x00, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x34, 0x0a, 0x08, 0x72, 0xa4, 0x02, 0x00, 0x00, 0xdb, 0x07, 0xff, 0xff, 0x8d,
	0x03, 0x19, 0x00, 0x19, 0x00, 0x19, 0x00, 0x19, 0x00, 0xdb, 0x07, 0xee, 0x02, 0xc8, 0x01,
	0x19, 0x00, 0x19, 0x00, 0x19, 0x00, 0x19, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, 0x03, 0x10,
	0x00, 0xa0, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00,
	0x03, 0xd9, 0x03, 0xc0, 0x02, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

static void
metric_is(const struct amdgpu_metrics *m, enum amdgpu_metric id, double want, const char *ctx,
          const char *what)
{
	if (!ok(fabs(m->v[id] - want) <= 1e-9 * fmax(1, fabs(want)), "%s: %s = %g", ctx, what,
	        want))
		diag("     got: %.17g", m->v[id]);
}

static void
metric_unknown(const struct amdgpu_metrics *m, enum amdgpu_metric id, const char *ctx,
               const char *what)
{
	if (!ok(isnan(m->v[id]), "%s: %s unknown", ctx, what))
		diag("     got: %.17g", m->v[id]);
}

static bool
all_unknown(const struct amdgpu_metrics *m)
{
	for (int i = 0; i < AM__COUNT; i++)
		if (!isnan(m->v[i]))
			return false;
	return !m->has_throttle;
}

static void
test_metrics_real(void)
{
	static unsigned char page[4096];
	struct amdgpu_metrics m;
	struct err err = ERR_INIT;
	const char *c = "rx7800xt v1.3";

	is_int(amdgpu_metrics_decode(rx7800xt, sizeof(rx7800xt), &m, &err), 0, "%s decodes", c);
	ok(m.format == 1 && m.content == 3 && m.size == 120, "%s: v1.3, 120 bytes", c);
	metric_is(&m, AM_TEMP_EDGE, 24, c, "edge");
	metric_is(&m, AM_TEMP_HOTSPOT, 31, c, "hotspot");
	metric_is(&m, AM_TEMP_MEM, 48, c, "mem");
	metric_is(&m, AM_GFX_ACTIVITY, 24, c, "gfx activity");
	metric_is(&m, AM_UMC_ACTIVITY, 0, c, "umc activity");
	metric_is(&m, AM_MM_ACTIVITY, 0, c, "mm activity");
	metric_is(&m, AM_SOCKET_POWER, 32, c, "socket power W");
	metric_is(&m, AM_GFXCLK_AVG, 2011, c, "average gfxclk");
	metric_is(&m, AM_UCLK_AVG, 909, c, "average uclk");
	metric_is(&m, AM_GFXCLK, 2011, c, "current gfxclk");
	metric_is(&m, AM_UCLK, 456, c, "current uclk");
	metric_is(&m, AM_VCLK, 25, c, "current vclk0");
	metric_is(&m, AM_FAN_RPM, 868, c, "fan rpm");
	metric_is(&m, AM_PCIE_WIDTH, 16, c, "link width");
	metric_is(&m, AM_PCIE_SPEED, 16.0, c, "link speed GT/s");
	metric_is(&m, AM_VOLTAGE_SOC, 768, c, "voltage soc");
	metric_is(&m, AM_VOLTAGE_GFX, 985, c, "voltage gfx");
	metric_is(&m, AM_VOLTAGE_MEM, 704, c, "voltage mem");
	ok(m.has_throttle && m.throttle == 0, "%s: indep throttle status 0", c);

	/* RX 6900 XT: the table in a page padded with NULs */
	memcpy(page, rx7800xt, sizeof(rx7800xt));
	is_int(amdgpu_metrics_decode(page, sizeof(page), &m, NULL), 0,
	       "a table in a NUL-padded page decodes");
	metric_is(&m, AM_TEMP_MEM, 48, "padded page", "mem");

	/* sizes are checked before anything is read */
	err_clear(&err);
	is_int(amdgpu_metrics_decode(rx7800xt, 64, &m, &err), E_PARSE, "a cut table is refused");
	ok(all_unknown(&m), "a cut table gives nothing");
	diag("%s", err.msg);
	is_int(amdgpu_metrics_decode(rx7800xt, 3, &m, NULL), E_PARSE, "3 bytes are refused");
	is_int(amdgpu_metrics_decode(rx7800xt, 0, &m, NULL), E_PARSE, "an empty file is refused");
	memcpy(page, rx7800xt, sizeof(rx7800xt));
	page[0] = 112;
	err_clear(&err);
	is_int(amdgpu_metrics_decode(page, sizeof(rx7800xt), &m, &err), E_PARSE,
	       "v1.3 saying 112 bytes is refused");
	ok(all_unknown(&m), "a lying size gives nothing");
	diag("%s", err.msg);
	page[0] = 0xff;
	page[1] = 0x7f;
	is_int(amdgpu_metrics_decode(page, sizeof(page), &m, NULL), E_PARSE,
	       "v1.3 saying 32767 bytes is refused");
	page[0] = 120;
	page[1] = 0;
	page[3] = 9;
	err_clear(&err);
	is_int(amdgpu_metrics_decode(page, sizeof(page), &m, &err), E_VERSION,
	       "v1.9 (attribute-encoded) is refused as unknown");
	ok(all_unknown(&m), "an unknown version gives nothing");
	diag("%s", err.msg);
	page[2] = 4;
	page[3] = 0;
	is_int(amdgpu_metrics_decode(page, sizeof(page), &m, NULL), E_VERSION, "v4.0 is refused");
	page[2] = 0;
	is_int(amdgpu_metrics_decode(page, sizeof(page), &m, NULL), E_VERSION, "v0.0 is refused");
	ok(!amdgpu_metrics_known(1, 9) && amdgpu_metrics_known(1, 8) && amdgpu_metrics_known(3, 0),
	   "known revisions: up to v1.8, v3.0; not v1.9");
}

/* A table of size bytes, all-ones as the kernel leaves unused fields. */
static unsigned char *
blob(unsigned size, unsigned f, unsigned c)
{
	unsigned char *b = xmalloc(size);

	memset(b, 0xff, size);
	b[0] = (unsigned char)(size & 0xff);
	b[1] = (unsigned char)(size >> 8);
	b[2] = (unsigned char)f;
	b[3] = (unsigned char)c;
	return b;
}

static void
put(unsigned char *b, unsigned off, unsigned width, uint64_t v)
{
	for (unsigned i = 0; i < width; i++)
		b[off + i] = (unsigned char)(v >> (8 * i));
}

static void
decode_ok(const unsigned char *b, unsigned size, struct amdgpu_metrics *m, const char *ctx)
{
	struct err err = ERR_INIT;

	if (!ok(amdgpu_metrics_decode(b, size, m, &err) == 0, "%s decodes (%u bytes)", ctx, size))
		diag("%s", err.msg);
	/* one byte short of the table: refused */
	is_int(amdgpu_metrics_decode(b, size - 1, m, NULL), E_PARSE, "%s one byte short: refused",
	       ctx);
	amdgpu_metrics_decode(b, size, m, NULL);
}

/* v1.0: the timestamp first, 8-bit link fields, 32-bit energy */
static void
test_v1_0(void)
{
	unsigned char *b = blob(80, 1, 0);
	struct amdgpu_metrics m;

	put(b, 8, 8, 123456789);
	put(b, 16, 2, 61);   /* edge */
	put(b, 18, 2, 70);   /* hotspot */
	put(b, 28, 2, 99);   /* gfx activity */
	put(b, 34, 2, 180);  /* socket power */
	put(b, 36, 4, 1000); /* energy */
	put(b, 54, 2, 1800); /* current gfxclk */
	put(b, 58, 2, 875);  /* current uclk */
	put(b, 68, 4, 0x10); /* throttle (ASIC dependent: not read) */
	put(b, 72, 2, 1500); /* fan */
	put(b, 74, 1, 16);   /* width, u8 */
	put(b, 75, 1, 80);   /* speed, u8, 0.1 GT/s */
	decode_ok(b, 80, &m, "v1.0");
	metric_is(&m, AM_TEMP_EDGE, 61, "v1.0", "edge");
	metric_is(&m, AM_TEMP_HOTSPOT, 70, "v1.0", "hotspot");
	metric_unknown(&m, AM_TEMP_MEM, "v1.0", "mem (0xFFFF)");
	metric_is(&m, AM_GFX_ACTIVITY, 99, "v1.0", "gfx activity");
	metric_is(&m, AM_SOCKET_POWER, 180, "v1.0", "socket power");
	metric_is(&m, AM_GFXCLK, 1800, "v1.0", "gfxclk");
	metric_is(&m, AM_UCLK, 875, "v1.0", "uclk");
	metric_is(&m, AM_FAN_RPM, 1500, "v1.0", "fan");
	metric_is(&m, AM_PCIE_WIDTH, 16, "v1.0", "width");
	metric_is(&m, AM_PCIE_SPEED, 8.0, "v1.0", "speed");
	ok(!m.has_throttle, "v1.0: no ASIC-independent throttle status");
	put(b, 74, 1, 0xff);
	amdgpu_metrics_decode(b, 80, &m, NULL);
	metric_unknown(&m, AM_PCIE_WIDTH, "v1.0", "width 0xFF");
	free(b);
}

/* v1.1 and v1.2: the v1.3 prefix (offsets as in the real table) */
static void
test_v1_1_2(void)
{
	for (unsigned c = 1; c <= 2; c++) {
		unsigned size = c == 1 ? 96 : 104;
		unsigned char *b = blob(size, 1, c);
		struct amdgpu_metrics m;
		char ctx[16];

		snprintf(ctx, sizeof(ctx), "v1.%u", c);
		put(b, 4, 2, 50);    /* edge */
		put(b, 8, 2, 66);    /* mem */
		put(b, 18, 2, 40);   /* umc activity */
		put(b, 22, 2, 250);  /* socket power */
		put(b, 40, 2, 1700); /* average gfxclk */
		put(b, 60, 2, 1200); /* current vclk0 */
		put(b, 72, 2, 2000); /* fan */
		put(b, 76, 2, 160);  /* speed */
		put(b, 88, 2, 77);   /* hbm[0], not decoded */
		if (c == 2)
			put(b, 96, 8, 42); /* firmware timestamp */
		decode_ok(b, size, &m, ctx);
		metric_is(&m, AM_TEMP_EDGE, 50, ctx, "edge");
		metric_is(&m, AM_TEMP_MEM, 66, ctx, "mem");
		metric_unknown(&m, AM_TEMP_HOTSPOT, ctx, "hotspot");
		metric_is(&m, AM_UMC_ACTIVITY, 40, ctx, "umc activity");
		metric_is(&m, AM_SOCKET_POWER, 250, ctx, "socket power");
		metric_is(&m, AM_GFXCLK_AVG, 1700, ctx, "average gfxclk");
		metric_unknown(&m, AM_GFXCLK, ctx, "current gfxclk");
		metric_is(&m, AM_VCLK, 1200, ctx, "vclk0");
		metric_is(&m, AM_FAN_RPM, 2000, ctx, "fan");
		metric_is(&m, AM_PCIE_SPEED, 16.0, ctx, "speed");
		metric_unknown(&m, AM_VOLTAGE_GFX, ctx, "voltage (not in this version)");
		ok(!m.has_throttle, "%s: no ASIC-independent throttle status", ctx);
		free(b);
	}
}

/* v1.3 with throttling; all-ones throttle status is unknown */
static void
test_v1_3_throttle(void)
{
	unsigned char *b = blob(120, 1, 3);
	struct amdgpu_metrics m;

	put(b, 112, 8, 1ULL << 1 | 1ULL << 44);
	decode_ok(b, 120, &m, "v1.3 built");
	ok(m.has_throttle && m.throttle == (1ULL << 1 | 1ULL << 44), "v1.3: PPT1 + VRHOT0");
	metric_unknown(&m, AM_TEMP_EDGE, "v1.3 built", "edge (0xFFFF)");
	put(b, 112, 8, UINT64_MAX);
	amdgpu_metrics_decode(b, 120, &m, NULL);
	ok(!m.has_throttle, "v1.3: all-ones throttle status is unknown");
	free(b);
}

/* MI200/MI300: v1.4, v1.5, v1.6 (first form) with per-instance arrays */
static void
test_v1_4_to_6_first(void)
{
	static const struct {
		unsigned c, size, gfxclk, vclk0, uclk, width;
		const char *ctx;
	} v[] = {
		{ 4, 288, 240, 264, 280, 48, "v1.4" },
		{ 5, 360, 312, 336, 352, 112, "v1.5" },
		{ 6, 384, 336, 360, 376, 136, "v1.6 (first form)" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		unsigned char *b = blob(v[i].size, 1, v[i].c);
		struct amdgpu_metrics m;

		put(b, 4, 2, 81);   /* hotspot */
		put(b, 6, 2, 73);   /* mem */
		put(b, 10, 2, 550); /* current socket power, W */
		put(b, 12, 2, 97);  /* gfx activity */
		put(b, 14, 2, 35);  /* umc activity */
		put(b, 16, 2, 10);  /* vcn[0] */
		put(b, 18, 2, 30);  /* vcn[1]: the busiest counts */
		put(b, v[i].width, 2, 16);
		put(b, v[i].width + 2, 2, 320);   /* 32 GT/s */
		put(b, v[i].gfxclk, 2, 1900);     /* gfxclk[0] */
		put(b, v[i].gfxclk + 6, 2, 2100); /* gfxclk[3] */
		put(b, v[i].vclk0, 2, 1100);
		put(b, v[i].uclk, 2, 1300);
		decode_ok(b, v[i].size, &m, v[i].ctx);
		metric_is(&m, AM_TEMP_HOTSPOT, 81, v[i].ctx, "hotspot");
		metric_is(&m, AM_TEMP_MEM, 73, v[i].ctx, "mem");
		metric_unknown(&m, AM_TEMP_EDGE, v[i].ctx, "edge (none on MI parts)");
		metric_is(&m, AM_SOCKET_POWER, 550, v[i].ctx, "socket power");
		metric_is(&m, AM_GFX_ACTIVITY, 97, v[i].ctx, "gfx activity");
		metric_is(&m, AM_UMC_ACTIVITY, 35, v[i].ctx, "umc activity");
		metric_is(&m, AM_MM_ACTIVITY, 30, v[i].ctx, "busiest vcn");
		metric_is(&m, AM_PCIE_WIDTH, 16, v[i].ctx, "width");
		metric_is(&m, AM_PCIE_SPEED, 32, v[i].ctx, "speed");
		metric_is(&m, AM_GFXCLK, 2100, v[i].ctx, "busiest gfxclk");
		metric_is(&m, AM_VCLK, 1100, v[i].ctx, "vclk0");
		metric_is(&m, AM_UCLK, 1300, v[i].ctx, "uclk");
		ok(!m.has_throttle, "%s: throttle status is ASIC dependent: not read", v[i].ctx);
		free(b);
	}
}

/* v1.6 (later form), v1.7, v1.8: partition stats after the clocks */
static void
test_v1_6_to_8(void)
{
	static const struct {
		unsigned c, size, width, gfxclk, vclk0, uclk;
		const char *ctx;
	} v[] = {
		{ 6, 1664, 60, 264, 288, 304, "v1.6" },
		{ 7, 2208, 68, 296, 320, 336, "v1.7" },
		{ 8, 3872, 68, 296, 320, 336, "v1.8" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		unsigned char *b = blob(v[i].size, 1, v[i].c);
		struct amdgpu_metrics m;

		put(b, 4, 2, 90);
		put(b, 10, 2, 700);
		put(b, 12, 2, 100);
		put(b, v[i].width, 2, 16);
		put(b, v[i].width + 2, 2, 320);
		put(b, v[i].gfxclk + 14, 2, 2100); /* gfxclk[7] */
		put(b, v[i].vclk0 + 6, 2, 1400);   /* vclk0[3] */
		put(b, v[i].uclk, 2, 1300);
		decode_ok(b, v[i].size, &m, v[i].ctx);
		metric_is(&m, AM_TEMP_HOTSPOT, 90, v[i].ctx, "hotspot");
		metric_unknown(&m, AM_TEMP_MEM, v[i].ctx, "mem (0xFFFF)");
		metric_is(&m, AM_SOCKET_POWER, 700, v[i].ctx, "socket power");
		metric_is(&m, AM_GFX_ACTIVITY, 100, v[i].ctx, "gfx activity");
		metric_unknown(&m, AM_MM_ACTIVITY, v[i].ctx, "vcn (per partition: not read)");
		metric_is(&m, AM_PCIE_WIDTH, 16, v[i].ctx, "width");
		metric_is(&m, AM_PCIE_SPEED, 32, v[i].ctx, "speed");
		metric_is(&m, AM_GFXCLK, 2100, v[i].ctx, "gfxclk of the last XCC");
		metric_is(&m, AM_VCLK, 1400, v[i].ctx, "vclk0[3]");
		metric_is(&m, AM_UCLK, 1300, v[i].ctx, "uclk");
		free(b);
	}
	/* a v1.6 table of v1.7's size is neither */
	{
		unsigned char *b = blob(2208, 1, 6);
		struct amdgpu_metrics m;

		is_int(amdgpu_metrics_decode(b, 2208, &m, NULL), E_PARSE,
		       "v1.6 with v1.7's size is refused");
		free(b);
	}
}

/* APU tables v2.0 to v2.4 */
static void
test_v2(void)
{
	static const struct {
		unsigned c, size, temp, gfxclk_avg, uclk_avg, gfxclk, uclk, vclk, indep;
		const char *ctx;
	} v[] = {
		{ 0, 120, 16, 68, 72, 80, 84, 88, 0, "v2.0" },
		{ 1, 120, 4, 64, 68, 76, 80, 84, 0, "v2.1" },
		{ 2, 128, 4, 64, 68, 76, 80, 84, 120, "v2.2" },
		{ 3, 152, 4, 64, 68, 76, 80, 84, 120, "v2.3" },
		{ 4, 168, 4, 64, 68, 76, 80, 84, 120, "v2.4" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		unsigned char *b = blob(v[i].size, 2, v[i].c);
		struct amdgpu_metrics m;
		const char *ctx = v[i].ctx;
		unsigned gfx_act = v[i].c == 0 ? 40 : 28, power = v[i].c == 0 ? 44 : 40;

		put(b, v[i].temp, 2, 4250); /* centi-degrees */
		put(b, gfx_act, 2, 1234);
		put(b, power, 2, 15000);
		put(b, v[i].gfxclk_avg, 2, 1600);
		put(b, v[i].uclk_avg, 2, 2400);
		put(b, v[i].gfxclk, 2, 1650);
		put(b, v[i].vclk, 2, 700);
		if (v[i].indep)
			put(b, v[i].indep, 8, 1ULL << 4);
		if (v[i].c == 4)
			put(b, 156, 2, 900); /* average gfx voltage */
		decode_ok(b, v[i].size, &m, ctx);
		metric_is(&m, AM_TEMP_EDGE, 42.5, ctx, "gfx temperature");
		metric_is(&m, AM_GFXCLK_AVG, 1600, ctx, "average gfxclk");
		metric_is(&m, AM_UCLK_AVG, 2400, ctx, "average uclk");
		metric_is(&m, AM_GFXCLK, 1650, ctx, "current gfxclk");
		metric_unknown(&m, AM_UCLK, ctx, "current uclk (0xFFFF)");
		metric_is(&m, AM_VCLK, 700, ctx, "vclk");
		if (v[i].c == 4) {
			metric_is(&m, AM_GFX_ACTIVITY, 12.34, ctx, "activity (centi-percent)");
			metric_is(&m, AM_SOCKET_POWER, 15, ctx, "socket power (mW)");
			metric_is(&m, AM_VOLTAGE_GFX, 900, ctx, "gfx voltage");
		} else {
			metric_unknown(&m, AM_GFX_ACTIVITY, ctx, "activity (unit not stated)");
			metric_unknown(&m, AM_SOCKET_POWER, ctx, "socket power (unit not stated)");
		}
		if (v[i].indep)
			ok(m.has_throttle && m.throttle == 1ULL << 4, "%s: throttle SPL", ctx);
		else
			ok(!m.has_throttle, "%s: no ASIC-independent throttle status", ctx);
		free(b);
	}
}

/* the Phoenix table of the amd-apu fixture (values of LACT's phoenix snapshot) */
static void
test_v2_1_phoenix(void)
{
	char path[2300];
	unsigned char buf[256];
	struct amdgpu_metrics m;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/amd-apu/sys/class/drm/card1/device/gpu_metrics", fixtures);
	f = fopen(path, "rb");
	n = f ? fread(buf, 1, sizeof(buf), f) : 0;
	if (f)
		fclose(f);
	is_int(n, 120, "phoenix v2.1 file: 120 bytes");
	is_int(amdgpu_metrics_decode(buf, n, &m, NULL), 0, "phoenix v2.1 decodes");
	metric_is(&m, AM_TEMP_EDGE, 25, "phoenix v2.1", "gfx temperature");
	metric_is(&m, AM_GFXCLK_AVG, 800, "phoenix v2.1", "average gfxclk");
	metric_unknown(&m, AM_GFXCLK, "phoenix v2.1", "current gfxclk");
	metric_unknown(&m, AM_GFX_ACTIVITY, "phoenix v2.1", "activity (reads 79 at idle)");
}

/* v3.0: the values of LACT's strixpoint snapshot */
static void
test_v3_0(void)
{
	unsigned char *b = blob(264, 3, 0);
	struct amdgpu_metrics m;

	put(b, 4, 2, 3812);    /* temperature_gfx */
	put(b, 6, 2, 4062);    /* temperature_soc */
	put(b, 42, 2, 3);      /* gfx activity, percent */
	put(b, 44, 2, 0);      /* vcn activity */
	put(b, 104, 8, 1);     /* timestamp */
	put(b, 112, 4, 9839);  /* socket power, mW, 32 bits */
	put(b, 124, 4, 1536);  /* gfx power */
	put(b, 174, 2, 849);   /* average gfxclk */
	put(b, 184, 2, 29);    /* average vclk */
	put(b, 186, 2, 836);   /* average uclk */
	put(b, 256, 4, 12345); /* time filter */
	decode_ok(b, 264, &m, "v3.0");
	metric_is(&m, AM_TEMP_EDGE, 38.12, "v3.0", "gfx temperature");
	metric_is(&m, AM_GFX_ACTIVITY, 3, "v3.0", "gfx activity");
	metric_is(&m, AM_MM_ACTIVITY, 0, "v3.0", "vcn activity");
	metric_is(&m, AM_SOCKET_POWER, 9.839, "v3.0", "socket power");
	metric_is(&m, AM_GFXCLK_AVG, 849, "v3.0", "average gfxclk");
	metric_is(&m, AM_UCLK_AVG, 836, "v3.0", "average uclk");
	metric_is(&m, AM_VCLK, 29, "v3.0", "average vclk");
	metric_unknown(&m, AM_GFXCLK, "v3.0", "current gfxclk (not in v3.0)");
	ok(!m.has_throttle, "v3.0: residencies, no status");
	put(b, 112, 4, 0xffffffff);
	amdgpu_metrics_decode(b, 264, &m, NULL);
	metric_unknown(&m, AM_SOCKET_POWER, "v3.0", "socket power 0xFFFFFFFF");
	free(b);
}

/* --- the module on fixture cards ------------------------------------------------------- */

static void
test_dgpu(void)
{
	struct rig r;
	struct gpu_device *d = &r.dev;
	struct gpu_snapshot procs;
	const char *c = "amd-dgpu";
	static const uint32_t sclk[] = { 500, 2011, 2254 }, mclk[] = { 96, 456, 772, 1218 };

	rig_open(&r, "amd-dgpu", "card1", "0000:03:00.0", 0x747e);
	rig_scan_read(&r);
	is_int(d->state, DEV_OK, "%s: state ok", c);
	is_str(d->name, "AMD Radeon RX 7800 XT", "%s: name from product_name", c);
	is_str(d->board_part, "102-D70201-00", "%s: board part from product_number", c);
	is_str(d->serial, "PBX2024A0123", "%s: serial_number", c);
	is_str(d->vbios, "113-EXT90249-100", "%s: vbios_version", c);
	is_str(d->unique_id, "946d7e1ef9b172dd", "%s: unique_id", c);

	field_is(d, GF_UTIL_GPU, 37, c);
	is_str(d->util_source, "gpu_busy_percent", "%s: utilization source", c);
	field_is(d, GF_UTIL_MEM, 12, c);
	/* no vcn_busy_percent: gpu_metrics' average_mm_activity (0) */
	field_is(d, GF_UTIL_DEC, 0, c);
	field_unknown(d, GF_UTIL_ENC, c);

	field_is(d, GF_MEM_TOTAL, 17163091968.0, c);
	field_is(d, GF_MEM_USED, 2147483648.0, c);
	field_is(d, GF_MEM_FREE, 17163091968.0 - 2147483648.0, c);
	field_is(d, GF_MEM_VISIBLE_TOTAL, 17163091968.0, c);
	field_is(d, GF_MEM_VISIBLE_USED, 1073741824.0, c);
	field_is(d, GF_GTT_TOTAL, 16786171904.0, c);
	field_is(d, GF_GTT_USED, 62369792.0, c);

	/* hwmon (45/52/60) is preferred over gpu_metrics (24/31/48) */
	field_is(d, GF_TEMP_GPU, 45, c);
	field_is(d, GF_TEMP_HOTSPOT, 52, c);
	field_is(d, GF_TEMP_MEM, 60, c);
	field_is(d, GF_TEMP_SLOWDOWN, 100, c);
	field_is(d, GF_TEMP_SHUTDOWN, 105, c);
	field_is(d, GF_TEMP_MEM_MAX, 108, c);

	field_is(d, GF_POWER_DRAW, 212, c);
	field_is(d, GF_POWER_AVERAGE, 212, c);
	field_unknown(d, GF_POWER_INSTANT, c);
	field_is(d, GF_POWER_LIMIT, 236, c);
	field_is(d, GF_POWER_LIMIT_SET, 236, c);
	field_is(d, GF_POWER_LIMIT_DEFAULT, 263, c);
	field_is(d, GF_POWER_LIMIT_MIN, 212, c);
	field_is(d, GF_POWER_LIMIT_MAX, 280, c);

	field_is(d, GF_FAN_RPM, 1450, c);
	field_is(d, GF_FAN, 40, c);

	field_is(d, GF_CLOCK_GRAPHICS, 2011, c);
	field_is(d, GF_CLOCK_SM, 2011, c);
	field_is(d, GF_CLOCK_MEM, 1218, c);
	/* the overdrive table's upper bounds, not the top pp_dpm levels (2254, 1218) */
	field_is(d, GF_CLOCK_MAX_GRAPHICS, 2565, c);
	field_is(d, GF_CLOCK_MAX_SM, 2565, c);
	field_is(d, GF_CLOCK_MAX_MEM, 1249, c);
	field_is(d, GF_CLOCK_VIDEO, 25, c);
	ok(d->levels_gfx.nr == 3 && !memcmp(d->levels_gfx.mhz, sclk, sizeof(sclk)) &&
	           d->levels_gfx.current == 1,
	   "%s: graphics levels 500, [2011], 2254", c);
	ok(d->levels_mem.nr == 4 && !memcmp(d->levels_mem.mhz, mclk, sizeof(mclk)) &&
	           d->levels_mem.current == 3,
	   "%s: memory levels 96, 456, 772, [1218]", c);

	field_is(d, GF_PCIE_GEN, 4, c);
	field_is(d, GF_PCIE_GEN_MAX, 4, c);
	field_is(d, GF_PCIE_GEN_DEV_MAX, 4, c);
	field_is(d, GF_PCIE_WIDTH, 16, c);
	field_is(d, GF_PCIE_WIDTH_MAX, 16, c);
	field_is(d, GF_PCIE_REPLAY, 3, c);
	field_is(d, GF_VOLTAGE_GFX, 985, c);

	field_is(d, GF_RAS_UNCORR, 1, c);
	field_is(d, GF_RAS_CORR, 7, c);
	field_is(d, GF_ECC_UNCORR_VOLATILE, 1, c);
	field_is(d, GF_ECC_CORR_VOLATILE, 5, c);

	field_is(d, GF_CLOCK_REASONS, CR_SW_POWER_CAP | CR_SW_THERMAL, c);
	field_is(d, GF_CLOCK_REASONS_SUPPORTED, CR_SW_POWER_CAP | CR_SW_THERMAL | CR_HW_SLOWDOWN,
	         c);
	is_str(d->throttle_detail, "PPT0, TEMP_HOTSPOT", "%s: throttlers named", c);
	ok(!drm_module_amdgpu.wants_window(&r.card, r.priv),
	   "%s: gpu_busy_percent needs no second reading", c);
	ok(drm_module_amdgpu.util_note(&r.card, r.priv) == NULL, "%s: no utilization note", c);

	/* ROCm processes: 4242 (VRAM and a queue), 4444 (VRAM); 4343 uses the other GPU */
	gpu_snapshot_init(&procs);
	is_int(drm_module_amdgpu.read_procs(&r.cfg, &r.card, r.priv, d, &procs), 0,
	       "%s: read_procs", c);
	gpu_snapshot_sort_procs(&procs);
	is_int(procs.nr_proc, 2, "%s: two KFD processes on this GPU", c);
	if (procs.nr_proc == 2) {
		is_int(procs.proc[0].pid, 4242, "%s: pid 4242", c);
		is_int(procs.proc[0].type, PROC_COMPUTE, "%s: 4242 is compute", c);
		ok(proc_has(&procs.proc[0], PF_GPU_MEM) &&
		           procs.proc[0].v[PF_GPU_MEM] == 1610612736.0,
		   "%s: 4242 holds 1.5 GiB of VRAM", c);
		is_int(procs.proc[1].pid, 4444, "%s: pid 4444", c);
		ok(proc_has(&procs.proc[1], PF_GPU_MEM) && procs.proc[1].v[PF_GPU_MEM] == 8388608.0,
		   "%s: 4444 holds 8 MiB of VRAM", c);
	}
	gpu_snapshot_release(&procs);
	rig_close(&r);

	/* the other GPU of the KFD topology is not this card */
	rig_open(&r, "amd-dgpu", "card1", "0000:0a:00.0", 0x747e);
	drm_module_amdgpu.scan(&r.cfg, &r.card, &r.dev, &r.priv);
	gpu_snapshot_init(&procs);
	drm_module_amdgpu.read_procs(&r.cfg, &r.card, r.priv, &r.dev, &procs);
	is_int(procs.nr_proc, 1, "KFD node at 0a:00.0: its one process");
	if (procs.nr_proc == 1)
		is_int(procs.proc[0].pid, 4343, "KFD node at 0a:00.0: pid 4343");
	gpu_snapshot_release(&procs);
	rig_close(&r);
}

static void
test_apu(void)
{
	struct rig r;
	struct gpu_device *d = &r.dev;
	struct gpu_snapshot procs;
	const char *c = "amd-apu";

	rig_open(&r, "amd-apu", "card1", "0000:64:00.0", 0x15bf);
	rig_scan_read(&r);
	is_str(d->name, "", "%s: no product_name: drm.c names it", c);
	is_str(d->unique_id, "", "%s: empty unique_id stays empty", c);
	is_str(d->vbios, "113-PHXGENERIC-001", "%s: vbios", c);
	field_is(d, GF_UTIL_GPU, 0, c);
	is_str(d->util_source, "gpu_busy_percent", "%s: not gpu_metrics' 79", c);
	field_unknown(d, GF_UTIL_MEM, c);
	field_is(d, GF_UTIL_DEC, 7, c);
	field_is(d, GF_MEM_TOTAL, 4294967296.0, c);
	field_is(d, GF_MEM_USED, 1272893440.0, c);
	field_is(d, GF_GTT_TOTAL, 31433977856.0, c);
	field_is(d, GF_GTT_USED, 211398656.0, c);
	field_is(d, GF_TEMP_GPU, 25, c);
	field_unknown(d, GF_TEMP_HOTSPOT, c);
	field_unknown(d, GF_TEMP_SLOWDOWN, c);
	/* both power files: the average is the draw */
	field_is(d, GF_POWER_DRAW, 3.103, c);
	field_is(d, GF_POWER_AVERAGE, 3.103, c);
	field_is(d, GF_POWER_INSTANT, 3.142, c);
	field_unknown(d, GF_POWER_LIMIT, c);
	field_unknown(d, GF_FAN, c);
	field_unknown(d, GF_FAN_RPM, c);
	field_is(d, GF_CLOCK_GRAPHICS, 800, c);
	/* no freq2_input: the current pp_dpm_mclk level */
	field_is(d, GF_CLOCK_MEM, 400, c);
	field_is(d, GF_CLOCK_MAX_GRAPHICS, 2700, c);
	field_is(d, GF_CLOCK_MAX_MEM, 800, c);
	field_is(d, GF_VOLTAGE_GFX, 814, c);
	field_is(d, GF_PCIE_GEN, 4, c);
	field_is(d, GF_PCIE_WIDTH, 16, c);
	field_unknown(d, GF_PCIE_REPLAY, c);
	field_unknown(d, GF_CLOCK_REASONS, c);
	field_unknown(d, GF_RAS_CORR, c);
	is_str(d->throttle_detail, "", "%s: no throttle detail", c);
	gpu_snapshot_init(&procs);
	drm_module_amdgpu.read_procs(&r.cfg, &r.card, r.priv, d, &procs);
	is_int(procs.nr_proc, 0, "%s: no KFD, no processes", c);
	gpu_snapshot_release(&procs);
	rig_close(&r);

	/* read without a scan's state (priv NULL): the same readings */
	rig_open(&r, "amd-apu", "card1", "0000:64:00.0", 0x15bf);
	is_int(drm_module_amdgpu.read(&r.cfg, &r.card, NULL, &r.dev), 0, "%s: read with no priv",
	       c);
	field_is(&r.dev, GF_TEMP_GPU, 25, "amd-apu, no priv");
	field_is(&r.dev, GF_CLOCK_GRAPHICS, 800, "amd-apu, no priv");
	rig_close(&r);
}

static void
test_broken(void)
{
	char path[2400];
	struct rig r;
	struct gpu_device *d = &r.dev;
	const char *c = "amd-broken card0";
	bool root = geteuid() == 0;
	pid_t child = -1;
	int status = -1;

	/* card0: NUL-padded pages, a cut gpu_metrics, no hwmon, unreadable files */
	snprintf(path, sizeof(path),
	         "%s/amd-broken/sys/devices/pci0000:00/0000:00:03.1/0000:0b:00.0/mem_busy_percent",
	         fixtures);
	if (chmod(path, 0) < 0)
		diag("chmod '%s': %s", path, strerror(errno));
	rig_open(&r, "amd-broken", "card0", "0000:0b:00.0", 0x73ff);
	rig_scan_read(&r);
	if (root) {
		/* root reads a mode-000 file: the card again, as nobody, in a child */
		int failed0 = harness_failed;

		fflush(stdout);
		child = fork();
		if (child == 0) {
			struct rig r2;

			if (!freopen("/dev/null", "w", stdout) || setgroups(0, NULL) ||
			    setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
				_exit(2);
			rig_open(&r2, "amd-broken", "card0", "0000:0b:00.0", 0x73ff);
			rig_scan_read(&r2);
			_exit(harness_failed != failed0       ? 3
			      : dev_has(&r2.dev, GF_UTIL_MEM) ? 1
			                                      : 0);
		}
		if (child > 0 && waitpid(child, &status, 0) != child)
			status = -1;
	}
	chmod(path, 0644);
	field_is(d, GF_UTIL_GPU, 5, c);
	field_is(d, GF_MEM_TOTAL, 8573157376.0, c);
	field_is(d, GF_MEM_USED, 16613376.0, c);
	field_is(d, GF_PCIE_GEN, 3, c);
	field_is(d, GF_PCIE_WIDTH, 16, c);
	field_unknown(d, GF_PCIE_GEN_MAX, c);
	field_is(d, GF_PCIE_WIDTH_MAX, 1, c);
	is_str(d->vbios, "113-23L86HMD2-D02", "%s: NUL-padded vbios", c);
	is_str(d->unique_id, "", "%s: empty unique_id", c);
	if (root)
		ok(child > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
		   "%s: %s unknown (read as nobody: root reads a mode-000 file; child exit %d: 1 known, "
		   "2 no setresuid, 3 scan failed)",
		   c, field_info(GF_UTIL_MEM)->key,
		   child > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	else
		field_unknown(d, GF_UTIL_MEM, c);
	/* a directory where a file should be: unreadable for root too */
	field_unknown(d, GF_PCIE_REPLAY, c);
	/* GFXOFF: both levels 0 MHz and starred; the clock is 0, there is no maximum */
	is_int(d->levels_gfx.nr, 2, "%s: two graphics levels", c);
	is_int(d->levels_gfx.current, 0, "%s: the first starred level is current", c);
	field_is(d, GF_CLOCK_GRAPHICS, 0, c);
	field_unknown(d, GF_CLOCK_MAX_GRAPHICS, c);
	field_is(d, GF_CLOCK_MEM, 96, c);
	field_is(d, GF_CLOCK_MAX_MEM, 875, c);
	/* no hwmon, and gpu_metrics cut short: no temperature, power or fan at all */
	field_unknown(d, GF_TEMP_GPU, c);
	field_unknown(d, GF_TEMP_HOTSPOT, c);
	field_unknown(d, GF_POWER_DRAW, c);
	field_unknown(d, GF_FAN_RPM, c);
	field_unknown(d, GF_CLOCK_REASONS, c);
	field_unknown(d, GF_VOLTAGE_GFX, c);
	rig_close(&r);

	/* card1: garbage values, hwmon without labels, gpu_metrics with a lying size */
	c = "amd-broken card1";
	rig_open(&r, "amd-broken", "card1", "0000:0c:00.0", 0x731f);
	rig_scan_read(&r);
	field_unknown(d, GF_UTIL_GPU, c);
	is_str(d->util_source, "", "%s: no utilization source", c);
	ok(drm_module_amdgpu.wants_window(&r.card, r.priv),
	   "%s: no gpu_busy_percent: a window for drm.c's fdinfo share", c);
	ok(drm_module_amdgpu.util_note(&r.card, r.priv) != NULL, "%s: says why", c);
	field_unknown(d, GF_MEM_TOTAL, c);
	field_unknown(d, GF_MEM_USED, c);
	field_unknown(d, GF_MEM_FREE, c);
	field_unknown(d, GF_PCIE_GEN, c);
	field_unknown(d, GF_PCIE_WIDTH, c);
	is_int(d->levels_gfx.nr, 0, "%s: no graphics level in junk", c);
	is_int(d->levels_mem.nr, 0, "%s: no memory level in an empty file", c);
	field_unknown(d, GF_CLOCK_GRAPHICS, c);
	field_is(d, GF_TEMP_GPU, 58, c);
	field_unknown(d, GF_TEMP_SLOWDOWN, c);
	field_unknown(d, GF_TEMP_HOTSPOT, c);
	field_unknown(d, GF_POWER_DRAW, c);
	field_unknown(d, GF_POWER_AVERAGE, c);
	field_is(d, GF_POWER_LIMIT, 220, c);
	field_unknown(d, GF_FAN, c);
	field_unknown(d, GF_FAN_RPM, c);
	field_unknown(d, GF_RAS_UNCORR, c);
	field_unknown(d, GF_CLOCK_REASONS, c);
	rig_close(&r);

	/* card2: a gpu_metrics revision that is not decoded */
	c = "amd-broken card2";
	rig_open(&r, "amd-broken", "card2", "0000:0d:00.0", 0x7550);
	rig_scan_read(&r);
	field_is(d, GF_UTIL_GPU, 25, c);
	field_is(d, GF_TEMP_GPU, 48, c);
	field_unknown(d, GF_TEMP_HOTSPOT, c);
	field_unknown(d, GF_CLOCK_GRAPHICS, c);
	field_unknown(d, GF_CLOCK_REASONS, c);
	rig_close(&r);
}

/* Watch a directory of the fixture for opens. */
static void
watch(int fd, const char *dev, const char *sub)
{
	char path[2600];

	snprintf(path, sizeof(path), "%s/%s", dev, sub);
	if (inotify_add_watch(fd, path, IN_OPEN | IN_ACCESS) < 0)
		diag("inotify_add_watch '%s': %s", path, strerror(errno));
}

static void
test_suspended(void)
{
	char dev_dir[2400], buf[8192] __attribute__((aligned(8))), seen[1024] = "";
	struct rig r;
	struct gpu_device *d = &r.dev;
	int fd, others = 0, status = 0;
	size_t len = 0;
	ssize_t n;

	rig_open(&r, "amd-suspended", "card0", "0000:03:00.0", 0x747e);
	snprintf(dev_dir, sizeof(dev_dir),
	         "%s/amd-suspended/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:00.0/"
	         "0000:03:00.0",
	         fixtures);
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0) {
		skip("no inotify");
		return;
	}
	watch(fd, dev_dir, ".");
	watch(fd, dev_dir, "power");
	watch(fd, dev_dir, "hwmon/hwmon4");
	watch(fd, dev_dir, "ras");
	watch(fd, dev_dir, "drm/card0");

	/* drm.c never scans a suspended card; read() is the module's last line */
	d->state = DEV_OK;
	is_int(drm_module_amdgpu.read(&r.cfg, &r.card, NULL, d), 0, "suspended: read returns");
	is_int(d->state, DEV_SUSPENDED, "suspended: shown as suspended");
	ok(strstr(d->state_msg, "not woken") != NULL, "suspended: the message says why");
	{
		bool none = true;

		for (int f = 0; f < GF__COUNT; f++)
			none &= !dev_has(d, (enum gpu_field)f);
		ok(none, "suspended: no reading at all");
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)(void *)p;
			const char *name = ev->len ? ev->name : "(the directory)";

			if (!strcmp(name, "runtime_status"))
				status += (ev->mask & IN_OPEN) != 0;
			else
				others++;
			len += (size_t)snprintf(seen + len, sizeof(seen) - len, " %s", name);
			if (len >= sizeof(seen))
				len = sizeof(seen) - 1;
			p += sizeof(*ev) + ev->len;
		}
	}
	close(fd);
	ok(status >= 1, "suspended: power/runtime_status was read");
	if (!ok(others == 0, "suspended: no other file of the device was opened or read"))
		diag("     events:%s", seen);
}

int
main(void)
{
	find_fixtures();
	test_levels();
	test_od();
	test_small_parsers();
	test_throttle();
	test_metrics_real();
	test_v1_0();
	test_v1_1_2();
	test_v1_3_throttle();
	test_v1_4_to_6_first();
	test_v1_6_to_8();
	test_v2();
	test_v2_1_phoenix();
	test_v3_0();
	test_dgpu();
	test_apu();
	test_broken();
	test_suspended();
	return done_testing();
}
