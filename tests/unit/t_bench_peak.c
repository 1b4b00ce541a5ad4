/*
 * bench/peak.c: the clock- and bus-derived peaks of H100, H200, A100 and
 * RTX 4090 as CUDA reports those cards, against the spec table's figures;
 * the PCIe rates; the percentages and flags; devices nothing is known of.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/dev.h"
#include "bench/peak.h"
#include "bench/suite.h"
#include "core/specs.h"
#include "harness.h"

static bool
within(double got, double want, double rel)
{
	return isfinite(got) && fabs(got - want) <= rel * fabs(want);
}

static struct bench_dev_info
cuda(const char *name, int major, int minor, unsigned sms, unsigned mhz, unsigned mem_mhz,
     unsigned bus)
{
	struct bench_dev_info i = { .cc_major = major,
		                    .cc_minor = minor,
		                    .units = sms,
		                    .clock_mhz = mhz,
		                    .mem_clock_mhz = mem_mhz,
		                    .mem_bus_bits = bus };

	snprintf(i.api, sizeof(i.api), "cuda");
	snprintf(i.name, sizeof(i.name), "%s", name);
	snprintf(i.vendor, sizeof(i.vendor), "NVIDIA");
	return i;
}

static const struct gpu_spec *
row(const char *name)
{
	size_t nr;
	const struct gpu_spec *g = gpu_spec_find(name, NULL, 0, &nr);

	ok(g != NULL, "the table has '%s' (%s)", name, g ? g->name : "none");
	return g;
}

/* the clock peak of test on info against the table's column, within rel */
static void
against(const struct bench_dev_info *info, const struct gpu_spec *g, const char *test, double mhz,
        double want_gops, double rel)
{
	char how[192];
	double v = bench_clock_peak(info, g, test, mhz, how, sizeof(how));

	ok(within(v, want_gops, rel), "%s %s: %.1f against %.1f (%s)", g ? g->name : "?", test, v,
	   want_gops, how);
}

static void
test_nvidia(void)
{
	struct bench_dev_info h100 = cuda("NVIDIA H100 80GB HBM3", 9, 0, 132, 1980, 2619, 5120);
	struct bench_dev_info h200 = cuda("NVIDIA H200", 9, 0, 132, 1980, 3201, 6144);
	struct bench_dev_info a100 = cuda("NVIDIA A100-SXM4-80GB", 8, 0, 108, 1410, 1593, 5120);
	struct bench_dev_info r4090 = cuda("NVIDIA GeForce RTX 4090", 8, 9, 128, 2520, 10501, 384);
	const struct gpu_spec *g;
	char how[192];

	g = row(h100.name);
	if (g) {
		against(&h100, g, "fma.fp32", 0, g->fp32 * 1000, 0.01);
		against(&h100, g, "fma.fp64", 0, g->fp64 * 1000, 0.03);
		/* NVIDIA's tensor figures are at 1830 MHz */
		against(&h100, g, "mma.fp16", 1830, g->fp16 * 1000, 0.005);
		against(&h100, g, "mma.bf16", 1830, g->bf16 * 1000, 0.005);
		against(&h100, g, "mma.tf32", 1830, g->tf32 * 1000, 0.005);
		against(&h100, g, "mma.fp8", 1830, g->fp8 * 1000, 0.005);
		against(&h100, g, "mma.int8", 1830, g->int8 * 1000, 0.005);
		against(&h100, g, "stream.triad", 0, g->mem_bw_gbs, 0.01);
	}
	g = row(h200.name);
	if (g) {
		against(&h200, g, "fma.fp32", 0, g->fp32 * 1000, 0.01);
		against(&h200, g, "stream.copy", 0, g->mem_bw_gbs, 0.03);
		against(&h200, g, "mma.fp16", 1830, g->fp16 * 1000, 0.005);
	}
	g = row(a100.name);
	if (g) {
		against(&a100, g, "fma.fp32", 0, g->fp32 * 1000, 0.01);
		against(&a100, g, "fma.fp64", 0, g->fp64 * 1000, 0.01);
		against(&a100, g, "mma.fp16", 0, g->fp16 * 1000, 0.01);
		against(&a100, g, "mma.tf32", 0, g->tf32 * 1000, 0.01);
		against(&a100, g, "mma.int8", 0, g->int8 * 1000, 0.01);
		against(&a100, g, "stream.triad", 0, g->mem_bw_gbs, 0.01);
		ok(isnan(bench_clock_peak(&a100, g, "mma.fp8", 0, how, sizeof(how))),
		   "A100 has no FP8: %s", how);
	}
	g = row(r4090.name);
	if (g) {
		against(&r4090, g, "fma.fp32", 0, g->fp32 * 1000, 0.01);
		against(&r4090, g, "fma.fp64", 0, g->fp64 * 1000, 0.01);
		/* GeForce: FP32 accumulate at half rate, found from the table's row */
		against(&r4090, g, "mma.fp16", 0, g->fp16 * 1000, 0.01);
		against(&r4090, g, "mma.fp8", 0, g->fp8 * 1000, 0.01);
		against(&r4090, g, "mma.int8", 0, g->int8 * 1000, 0.01);
		against(&r4090, g, "mma.tf32", 0, g->tf32 * 1000, 0.01);
		against(&r4090, g, "stream.triad", 0, g->mem_bw_gbs, 0.01);
		bench_clock_peak(&r4090, NULL, "mma.fp16", 0, how, sizeof(how));
		ok(strstr(how, "full rate assumed"), "without the row, full rate, said: %s", how);
	}
}

static void
test_other_vendors(void)
{
	struct bench_dev_info mi300 = { .units = 304, .clock_mhz = 2100 };
	struct bench_dev_info arc = { .units = 512, .clock_mhz = 2400 };
	struct bench_dev_info odd = { .units = 16, .clock_mhz = 1000 };
	struct bench_dev_info pocl = { .units = 2, .clock_mhz = 3000, .cpu = true };
	struct bench_dev_info future = cuda("NVIDIA Z9000", 99, 0, 100, 2000, 0, 0);
	char how[192];
	double v;

	snprintf(mi300.api, sizeof(mi300.api), "opencl");
	snprintf(mi300.name, sizeof(mi300.name), "gfx942:sramecc+:xnack-");
	snprintf(mi300.vendor, sizeof(mi300.vendor), "Advanced Micro Devices, Inc.");
	v = bench_clock_peak(&mi300, NULL, "fma.fp32", 0, how, sizeof(how));
	ok(within(v, 163400, 0.01), "MI300X (gfx942) FP32: %.0f GFLOP/s (%s)", v, how);
	v = bench_clock_peak(&mi300, NULL, "fma.fp64", 0, how, sizeof(how));
	ok(within(v, 81700, 0.01), "MI300X FP64: %.0f", v);

	snprintf(arc.api, sizeof(arc.api), "opencl");
	snprintf(arc.name, sizeof(arc.name), "Intel(R) Arc(TM) A770 Graphics");
	snprintf(arc.vendor, sizeof(arc.vendor), "Intel(R) Corporation");
	v = bench_clock_peak(&arc, NULL, "fma.fp32", 0, how, sizeof(how));
	ok(within(v, 19700, 0.01), "Arc A770 FP32 at 2.4 GHz: %.0f (%s)", v, how);

	snprintf(odd.api, sizeof(odd.api), "opencl");
	snprintf(odd.name, sizeof(odd.name), "Mystery");
	snprintf(odd.vendor, sizeof(odd.vendor), "Nobody");
	v = bench_clock_peak(&odd, NULL, "fma.fp32", 0, how, sizeof(how));
	ok(isnan(v) && strstr(how, "no per-clock rates known"), "an unknown vendor: %s", how);
	v = bench_clock_peak(&pocl, NULL, "fma.fp32", 0, how, sizeof(how));
	ok(isnan(v) && strstr(how, "CPU"), "a CPU device: %s", how);
	v = bench_clock_peak(&future, NULL, "fma.fp32", 0, how, sizeof(how));
	ok(isnan(v) && strstr(how, "99.0"), "an unknown compute capability: %s", how);
	v = bench_clock_peak(&future, NULL, "stream.triad", 0, how, sizeof(how));
	ok(isnan(v) && strstr(how, "not known"), "no memory clock: %s", how);
	v = bench_spec_peak(NULL, "fma.fp32", how, sizeof(how));
	ok(isnan(v) && strstr(how, "no row"), "no row: %s", how);
	v = bench_clock_peak(&future, NULL, "launch.latency", 0, how, sizeof(how));
	ok(isnan(v), "no clock peak for latency");
}

static void
test_pcie_and_spec(void)
{
	char how[128];
	const struct gpu_spec *h100 = row("NVIDIA H100 80GB HBM3");

	ok(within(bench_pcie_gbs(3, 16, how, sizeof(how)), 15.754, 0.001), "Gen3 x16: %s", how);
	ok(within(bench_pcie_gbs(4, 16, how, sizeof(how)), 31.508, 0.001), "Gen4 x16 31.5");
	ok(within(bench_pcie_gbs(5, 16, how, sizeof(how)), 63.015, 0.001), "Gen5 x16 63.0");
	ok(within(bench_pcie_gbs(4, 8, how, sizeof(how)), 15.754, 0.001), "Gen4 x8");
	ok(within(bench_pcie_gbs(6, 16, how, sizeof(how)), 128, 0.001), "Gen6 x16 (1b/1b) 128");
	ok(within(bench_pcie_gbs(1, 1, how, sizeof(how)), 0.25, 0.001), "Gen1 x1 (8b/10b)");
	ok(isnan(bench_pcie_gbs(0, 16, how, sizeof(how))), "no link: %s", how);
	ok(within(bench_spec_peak(h100, "h2d.pinned", how, sizeof(how)), 63.015, 0.001),
	   "H100's h2d spec: its table link: %s", how);
	ok(within(bench_spec_peak(h100, "bidir.pinned", how, sizeof(how)), 126.03, 0.001),
	   "bidir twice that");
	ok(h100 && within(bench_spec_peak(h100, "mma.int8", how, sizeof(how)), h100->int8 * 1000,
	                  1e-9),
	   "mma.int8 against the int8 column: %s", how);
	ok(isnan(bench_spec_peak(h100, "fma.fp16", how, sizeof(how))) && strstr(how, "tensor"),
	   "vector fp16: the table has none: %s", how);
	ok(h100 && bench_spec_peak(h100, "fma.fp64", how, sizeof(how)) == h100->fp64 * 1000,
	   "fma.fp64 against fp64 (vector), not fp64_tensor");
}

static void
test_fill(void)
{
	struct bench_dev_info h200 = cuda("NVIDIA H200", 9, 0, 132, 1980, 3201, 6144);
	struct bench_dev_info r4090 = cuda("NVIDIA GeForce RTX 4090", 8, 9, 128, 2520, 10501, 384);
	struct bench_result r = { .name = "stream.triad", .unit = "GB/s", .best = 4150 };
	struct bench_peak_in in = { .mem_mhz = 3201 };

	bench_peak_fill(&r, &h200, &in);
	ok(r.peak.filled && within(r.peak.pct_spec, 4150 / 48.0, 1e-9),
	   "H200 triad 4150 GB/s: %.1f %% of the spec's 4800 (%s)", r.peak.pct_spec,
	   r.peak.spec_how);
	ok(within(r.peak.pct_clock, 4150 / (6144 / 8.0 * 3201 * 2 / 1000) * 100, 1e-9) &&
	           r.peak.clock_observed && strstr(r.peak.clock_how, "seen during"),
	   "%.1f %% of the bus peak at the memory clock seen (%s)", r.peak.pct_clock,
	   r.peak.clock_how);
	ok(r.peak.flags == 0, "86 %%: neither over nor low");

	r = (struct bench_result){ .name = "fma.fp32", .unit = "GFLOP/s", .best = 90300 };
	bench_peak_fill(&r, &r4090, NULL);
	ok(r.peak.flags & BENCH_PEAK_OVER, "RTX 4090 at 90.3 TFLOPS: over 100 %% (boost): %.1f %%",
	   r.peak.pct_spec);
	ok(!r.peak.clock_observed && strstr(r.peak.clock_how, "reported maximum"),
	   "no clock seen: the reported maximum, said: %s", r.peak.clock_how);

	r = (struct bench_result){ .name = "h2d.pinned", .unit = "GB/s", .best = 13 };
	in = (struct bench_peak_in){ .pcie_gen = 4, .pcie_width = 16 };
	bench_peak_fill(&r, &r4090, &in);
	ok(within(r.peak.link, 31.508, 0.001) && (r.peak.flags & BENCH_PEAK_LOW),
	   "13 GB/s on a Gen4 x16 link: %.0f %%, low", r.peak.pct_link);

	r = (struct bench_result){ .name = "launch.latency", .unit = "us", .best = 5 };
	bench_peak_fill(&r, &r4090, NULL);
	ok(isnan(r.peak.pct_spec) && isnan(r.peak.pct_clock) && r.peak.flags == 0,
	   "latency is held against nothing");

	r = (struct bench_result){
		.name = "fma.fp32", .unit = "GFLOP/s", .best = NAN, .status = BENCH_FAILED
	};
	bench_peak_fill(&r, &r4090, NULL);
	ok(isnan(r.peak.pct_spec) && isfinite(r.peak.spec),
	   "a failed test: figures, no percentages");
}

int
main(void)
{
	test_nvidia();
	test_other_vendors();
	test_pcie_and_spec();
	test_fill();
	return done_testing();
}
