/*
 * NVLink links, PCIe throughput, clock violation counters and the GPU
 * temperature of the NVML backend, on the fake driver library and
 * tests/scenarios/nvlink.scn: per-link state, version and counters and
 * their totals, a link that goes down, the links that are not there, the
 * PCIe throughput call paced (never at the first read), the violation times
 * in seconds, the board-limit and reliability clock reasons, and
 * nvmlDeviceGetTemperatureV asked before the deprecated call. Runs from the
 * repository root; O names the build directory.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#include "backend/collect.h"
#include "core/config.h"
#include "core/err.h"
#include "core/fields.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "front/prom.h"

static char fake_lib[512], log_path[512];

static void
setup(struct gs_config *cfg, const char *scenario, const char *t)
{
	const char *o = getenv("O") ? getenv("O") : "build";

	snprintf(fake_lib, sizeof(fake_lib), "%s/fakenvml/current/libnvidia-ml.so.1", o);
	gs_config_init(cfg);
	cfg->nvml_path = fake_lib;
	cfg->proc_root = "tests/fixtures/proc";
	cfg->sysfs_root = "tests/fixtures/sys-empty";
	cfg->passwd_file = "tests/fixtures/passwd";
	cfg->fixed_time = 1767225600;
	setenv("FAKE_NVML_SCENARIO", scenario, 1);
	setenv("FAKE_NVML_TIME", t, 1);
	setenv("FAKE_NVML_EPOCH", "1767225600", 1);
}

/* Lines of the fake's call log that start with "<fn> <gpu> ". */
static int
calls(const char *fn, const char *gpu)
{
	char line[512], want[256];
	int n = 0;
	FILE *f = fopen(log_path, "r");

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "%s %s ", fn, gpu);
	while (fgets(line, sizeof(line), f))
		n += !strncmp(line, want, strlen(want));
	fclose(f);
	return n;
}

static int
sample(struct collector *c, struct gpu_snapshot *s)
{
	struct err err = ERR_INIT;

	gpu_snapshot_init(s);
	return collector_sample(c, s, 0, &err);
}

/* Does text have a line that starts with start and ends with " value"? */
static bool
has_line(const char *text, const char *start, const char *value)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p), vl = strlen(value);

		if (!strncmp(p, start, strlen(start)) && len > vl + 1 &&
		    !strncmp(p + len - vl - 1, " ", 1) && !strncmp(p + len - vl, value, vl))
			return true;
	}
	return false;
}

/* serve's per-link series (write_nvlink_links) */
static void
check_prom(const struct gpu_snapshot *s)
{
	struct strbuf sb = STRBUF_INIT;
	const char *g0 = "{gpu=\"0\",uuid=\"GPU-5a1e0c2d-0001-4e7b-9d3c-1b2a3c4d5e60\","
	                 "pci_bus_id=\"00000000:18:00.0\",name=\"NVIDIA H100 80GB HBM3\","
	                 "vendor=\"nvidia\",driver=\"nvidia\",";
	char want[512];

	prom_write(&sb, s, NULL);
	snprintf(want, sizeof(want), "gpuscope_gpu_nvlink_link_up%slink=\"2\"}", g0);
	ok(has_line(sb.buf, want, "0"), "prom: link 2 of GPU 0 down");
	snprintf(want, sizeof(want), "gpuscope_gpu_nvlink_link_up%slink=\"3\"}", g0);
	ok(has_line(sb.buf, want, "1"), "prom: link 3 of GPU 0 up");
	snprintf(want, sizeof(want),
	         "gpuscope_gpu_nvlink_link_errors_total%slink=\"3\",type=\"crc_flit\"}", g0);
	ok(has_line(sb.buf, want, "10000"), "prom: CRC flit errors of link 3");
	snprintf(want, sizeof(want),
	         "gpuscope_gpu_nvlink_link_errors_total%slink=\"1\",type=\"recovery\"}", g0);
	ok(has_line(sb.buf, want, "2"), "prom: recoveries of link 1");
	snprintf(want, sizeof(want), "gpuscope_gpu_nvlink_link_tx_bytes_total%slink=\"0\"}", g0);
	ok(has_line(sb.buf, want, "163840000"), "prom: bytes sent over link 0");
	{
		const char *hdr = "# TYPE gpuscope_gpu_nvlink_link_errors_total counter\n";
		int n = 0;

		for (const char *p = strstr(sb.buf, hdr); p; p = strstr(p + 1, hdr))
			n++;
		is_int(n, 1, "prom: the error family has one header, its samples together");
	}
	strbuf_release(&sb);
}

/* t = 160: GPU 0's link 2 is down (since 100), its errors half way up their ramps */
static void
test_links(void)
{
	struct gs_config cfg;
	struct collector *c;
	struct gpu_snapshot s;
	struct err err = ERR_INIT;
	const struct nvlink_link *l;

	setup(&cfg, "tests/scenarios/nvlink.scn", "160");
	if (collector_open(&cfg, &c, &err) != 0) {
		ok(0, "collector opens on the fake library: %s", err.msg);
		return;
	}
	sample(c, &s);
	is_int(s.nr_dev, 2, "two GPUs");
	is_int(s.dev[0].nr_nvlink, GPU_MAX_NVLINK, "every link number NVML answers for is there");
	l = s.dev[0].nvlink;
	ok(l[0].present && l[0].active && l[1].active && l[3].active, "links 0, 1, 3 up");
	ok(l[2].present && !l[2].active, "link 2 down (nvlink_down)");
	ok(l[4].present && !l[4].active, "link 4, without a peer, down");
	is_int(l[0].version, 6, "version of link 0 (NVLink 4.0)");
	is_dbl(dev_get(&s.dev[0], GF_NVLINK_LINKS_ACTIVE), 3, 0, "3 links active on GPU 0");
	is_dbl(dev_get(&s.dev[1], GF_NVLINK_LINKS_ACTIVE), 4, 0, "4 links active on GPU 1");
	/* link n answers (n + 1) times the key's value */
	ok(l[0].valid >> NL_CRC_FLIT & 1, "CRC flit errors of link 0 known");
	is_dbl((double)l[0].v[NL_CRC_FLIT], 2500, 0, "CRC flit errors of link 0");
	is_dbl((double)l[3].v[NL_CRC_FLIT], 10000, 0, "CRC flit errors of link 3, not link 0's");
	is_dbl((double)l[1].v[NL_CRC_DATA], 300, 0, "CRC data errors of link 1");
	is_dbl((double)l[2].v[NL_REPLAY], 1500, 0, "replay errors of link 2");
	is_dbl((double)l[3].v[NL_RECOVERY], 4, 0, "recovery errors of link 3");
	is_dbl((double)l[0].v[NL_TX_BYTES], 160000.0 * 1024, 0, "link 0: KiB sent, in bytes");
	is_dbl((double)l[1].v[NL_RX_BYTES], 2 * 320000.0 * 1024, 0, "link 1: KiB received");
	is_dbl((double)l[4].v[NL_TX_BYTES], 0, 0, "a link that never came up sent nothing");
	is_dbl(dev_get(&s.dev[0], GF_NVLINK_CRC_FLIT), 2500.0 * (1 + 2 + 3 + 4), 0,
	       "total CRC flit errors, all links");
	is_dbl(dev_get(&s.dev[0], GF_NVLINK_TX_BYTES), 160000.0 * 1024 * 10, 0,
	       "total bytes sent, all links");
	is_dbl(dev_get(&s.dev[1], GF_NVLINK_REPLAY), 0, 0, "GPU 1: no replays, 0 not unknown");
	/* violation counters, ns -> s */
	is_dbl(dev_get(&s.dev[0], GF_VIOL_POWER), 2.5, 1e-9, "power violation time in seconds");
	is_dbl(dev_get(&s.dev[0], GF_VIOL_BOARD_LIMIT), 16, 1e-9, "board-limit violation time");
	is_dbl(dev_get(&s.dev[0], GF_VIOL_RELIABILITY), 1.5, 1e-9, "reliability violation time");
	is_dbl(dev_get(&s.dev[0], GF_VIOL_APP_CLOCKS), 40, 1e-9, "below applications clocks");
	is_dbl(dev_get(&s.dev[0], GF_VIOL_BASE_CLOCKS), 0.001, 1e-12, "below base clocks");
	ok(!dev_has(&s.dev[1], GF_VIOL_POWER), "no violation key: unknown, not 0");
	is_dbl(dev_get(&s.dev[0], GF_CLOCK_REASONS), 0x601, 0, "clock reasons 0x601");
	ok((unsigned)dev_get(&s.dev[0], GF_CLOCK_REASONS) & CR_BOARD_LIMIT,
	   "board limit (0x200) among the reasons");
	ok((unsigned)dev_get(&s.dev[0], GF_CLOCK_REASONS) & CR_RELIABILITY,
	   "reliability (0x400) among the reasons");
	check_prom(&s);
	gpu_snapshot_release(&s);
	collector_close(c);

	/* before t = 100 link 2 is up and nothing has failed */
	setup(&cfg, "tests/scenarios/nvlink.scn", "50");
	if (collector_open(&cfg, &c, &err) == 0) {
		sample(c, &s);
		ok(s.dev[0].nvlink[2].active, "t = 50: link 2 up");
		is_dbl(dev_get(&s.dev[0], GF_NVLINK_CRC_FLIT), 0, 0, "t = 50: no CRC errors");
		gpu_snapshot_release(&s);
		collector_close(c);
	}

	/* a GPU without NVLink: no links, totals unknown */
	setup(&cfg, "tests/scenarios/h100x2.scn", "0");
	if (collector_open(&cfg, &c, &err) == 0) {
		sample(c, &s);
		is_int(s.dev[0].nr_nvlink, 0, "no NVLink: no links");
		ok(!dev_has(&s.dev[0], GF_NVLINK_LINKS_ACTIVE), "no NVLink: links active unknown");
		gpu_snapshot_release(&s);
		collector_close(c);
	}
}

/* What is asked of the driver, and how often */
static void
test_calls(void)
{
	struct gs_config cfg;
	struct collector *c;
	struct gpu_snapshot s;
	struct err err = ERR_INIT;

	setup(&cfg, "tests/scenarios/nvlink.scn", "160");
	snprintf(log_path, sizeof(log_path), "/tmp/gpuscope-t_nvlink-%d.log", (int)getpid());
	unlink(log_path);
	setenv("FAKE_NVML_LOG", log_path, 1);
	if (collector_open(&cfg, &c, &err) != 0) {
		ok(0, "collector opens: %s", err.msg);
		return;
	}
	sample(c, &s);
	ok(!dev_has(&s.dev[0], GF_PCIE_TX_RATE), "PCIe throughput not read at the first sample");
	gpu_snapshot_release(&s);
	sample(c, &s);
	gpu_snapshot_release(&s);
	is_int(calls("nvmlDeviceGetPcieThroughput", "0"), 0,
	       "two quick samples: the 20 ms PCIe throughput call not made");
	usleep(2100 * 1000);
	sample(c, &s);
	is_dbl(dev_get(&s.dev[0], GF_PCIE_TX_RATE), 123456.0 * 1024, 0,
	       "PCIe TX after 2 s, KB/s in bytes/s");
	is_dbl(dev_get(&s.dev[0], GF_PCIE_RX_RATE), 654321.0 * 1024, 0, "PCIe RX");
	gpu_snapshot_release(&s);
	sample(c, &s);
	is_dbl(dev_get(&s.dev[0], GF_PCIE_TX_RATE), 123456.0 * 1024, 0,
	       "the last answer stands in between");
	gpu_snapshot_release(&s);
	collector_close(c);
	is_int(calls("nvmlDeviceGetPcieThroughput", "0"), 2, "one call each way in 2 s");
	is_int(calls("nvmlDeviceGetNvLinkVersion", "0"), GPU_MAX_NVLINK,
	       "the version of a link is asked once");
	is_int(calls("nvmlDeviceGetNvLinkState", "0"), 4 * GPU_MAX_NVLINK,
	       "the state of each link every sample");
	is_int(calls("nvmlDeviceGetTemperatureV", "0"), 4, "the temperature from the V call");
	is_int(calls("nvmlDeviceGetTemperature", "0"), 0, "the deprecated call not made");
	unlink(log_path);
	unsetenv("FAKE_NVML_LOG");
}

/* The deprecated temperature call where the V one is NOT_SUPPORTED or of another version */
static void
test_temperature_fallback(void)
{
	static const char *const faults[] = {
		"fail = nvmlDeviceGetTemperatureV NOT_SUPPORTED",
		"fail = nvmlDeviceGetTemperatureV ARGUMENT_VERSION_MISMATCH",
	};
	char path[512], text[256];

	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
		struct gs_config cfg;
		struct collector *c;
		struct gpu_snapshot s;
		struct err err = ERR_INIT;
		FILE *f;

		snprintf(path, sizeof(path), "/tmp/gpuscope-t_nvlink-%d.scn", (int)getpid());
		f = fopen(path, "w");
		snprintf(text, sizeof(text), "[gpu]\nname = T\ntemperature = 55\n%s\n", faults[i]);
		if (!f || fputs(text, f) < 0 || fclose(f)) {
			ok(0, "cannot write %s", path);
			return;
		}
		setup(&cfg, path, "0");
		if (collector_open(&cfg, &c, &err) != 0) {
			ok(0, "collector opens: %s", err.msg);
			continue;
		}
		sample(c, &s);
		is_dbl(dev_get(&s.dev[0], GF_TEMP_GPU), 55, 0, "%s: the deprecated call answers",
		       faults[i]);
		gpu_snapshot_release(&s);
		collector_close(c);
		unlink(path);
	}
}

int
main(void)
{
	test_links();
	test_calls();
	test_temperature_fallback();
	return done_testing();
}
