/*
 * bench's sampler (bench/sample.h) on the fake NVML: devices found by UUID
 * and PCI bus id, a window summed up, the reasons named.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#include "bench/sample.h"
#include "core/config.h"
#include "core/err.h"
#include "core/fields.h"
#include "core/gpu.h"

int
main(void)
{
	const char *o = getenv("O") ? getenv("O") : "build";
	char lib[512], buf[128];
	struct gs_config cfg;
	struct err err = ERR_INIT;
	struct bench_sampler *s;
	struct bench_obs obs;
	struct gpu_device d;
	double t0;
	int g0, g1;

	snprintf(lib, sizeof(lib), "%s/fakenvml/current/libnvidia-ml.so.1", o);
	gs_config_init(&cfg);
	cfg.nvml_path = lib;
	cfg.proc_root = "tests/fixtures/proc";
	cfg.sysfs_root = "tests/fixtures/sys-empty";
	cfg.passwd_file = "tests/fixtures/passwd";
	setenv("FAKE_NVML_SCENARIO", "tests/scenarios/h100x2.scn", 1);
	setenv("FAKE_NVML_TIME", "0", 1);

	t0 = bench_sampler_now();
	s = bench_sampler_start(&cfg, 0.02, &err);
	ok(s != NULL, "the sampler starts on the fake NVML (%s)", err.msg);
	if (!s)
		return done_testing();
	usleep(150000);
	g0 = bench_sampler_find(s, "GPU-0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", NULL);
	g1 = bench_sampler_find(s, "", "3b:00.0");
	is_int(g0, 0, "GPU 0 found by its UUID");
	ok(bench_sampler_find(s, "GPU-0B1C2D3E-4F50-6172-8394-A5B6C7D8E9F0", NULL) == 0,
	   "a UUID in capitals is the same GPU");
	is_int(bench_sampler_find(s, "GPU-ffffffff", "0000:01:00.0"), -1,
	       "an unknown UUID and bus id: no device");
	bench_sampler_latest(s, 1, &d);
	diag("GPU 1 bus id %s", d.pci_bus_id);
	is_int(bench_sampler_find(s, NULL, d.pci_bus_id), 1, "GPU 1 found by its PCI bus id");
	is_int(g1, 1, "GPU 1 found by its bus id in lspci's short spelling");

	bench_sampler_window(s, 0, t0, bench_sampler_now(), &obs);
	ok(obs.known && obs.samples >= 3, "a window of 150 ms at 20 ms holds samples (%u)",
	   obs.samples);
	is_dbl(obs.sm_mean, 1755, 0.5, "GPU 0's SM clock as the scenario has it");
	is_dbl(obs.power_max, 698.42, 0.01, "its power in W");
	is_dbl(obs.temp_max, 74, 0.01, "its temperature");
	ok(obs.reasons_busy & CR_SW_POWER_CAP, "held by the power cap");
	bench_reasons_str(obs.reasons_busy, buf, sizeof(buf));
	ok(strstr(buf, "power") != NULL, "the reasons in words: \"%s\"", buf);
	bench_sampler_window(s, 1, t0, bench_sampler_now(), &obs);
	is_int(obs.pcie_gen_min, 3, "GPU 1's link at Gen3 ...");
	is_int(obs.pcie_gen_max, 5, "... of Gen5");
	bench_sampler_window(s, 0, t0 - 100, t0 - 50, &obs);
	ok(!obs.known && isnan(obs.sm_mean), "a window before the start has nothing");
	bench_sampler_window(s, 7, t0, bench_sampler_now(), &obs);
	ok(!obs.known, "a device the sampler has not: nothing");
	bench_sampler_stop(s);
	bench_sampler_stop(NULL);
	bench_reasons_str(CR_GPU_IDLE, buf, sizeof(buf));
	is_str(buf, "", "idle alone holds nothing down");
	return done_testing();
}
