/*
 * The figures a bench result is held against (bench/peak.h): the spec
 * table's, the clocks' (per-clock rates by architecture, each back-solved
 * from the spec table's rows and their SM counts and clocks, and checked
 * against them) and the PCIe link's.
 */
#include "bench/peak.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "bench/dev.h"
#include "bench/suite.h"
#include "core/specs.h"
#include "core/xalloc.h"

/*
 * NVIDIA: operations per clock per SM, counting an FMA as 2 (FLOP/clk/SM).
 * Vector rates are the CUDA C Programming Guide's "Arithmetic Instructions"
 * throughput table (results per clock per SM) x 2, checked against the spec
 * table (bench-specs.md 3.3, 3.4): FP32 H100 SXM 132 x 256 x 1980 MHz =
 * 66.9 (67), A100 108 x 128 x 1410 = 19.5, RTX 4090 128 x 256 x 2520 = 82.6;
 * FP64 H100 132 x 128 x 1980 = 33.5 (34), A100 108 x 64 x 1410 = 9.75 (9.7),
 * RTX 4090 128 x 4 x 2520 = 1.29.
 * FP16 and BF16 (half2, bf16x2, not tensor) are the vendors' non-tensor
 * whitepaper figures back-solved (V100 31.4, A100 78 / BF16 39, RTX 3090
 * 35.6, RTX 4090 82.6, H100 SXM 133.8 TFLOPS; [DS], not re-checked): two
 * lanes of a pair, each an FMA.
 * INT32: the guide's 64 32-bit integer multiply-adds per clock per SM on 7.0
 * and later, 2 operations each. dp4a: assumed to issue at that rate (the
 * integer pipe), 8 operations each; the guide gives no row for it, so this
 * one is an estimate.
 * Tensor: dense FP16 with FP32 accumulate, FLOP/clk/SM (bench-specs.md 3.4):
 * V100 80 x 1024 x 1530 = 125, T4 40 x 1024 x 1590 = 65, A100 108 x 2048 x
 * 1410 = 312, RTX 3090 82 x 512 x 1695 = 71 (GeForce: FP32 accumulate at
 * half the 1024 of FP16 accumulate; RTX A6000 84 x 1024 x 1800 = 154.8 at
 * full), RTX 4090 128 x 512 x 2520 = 165.2, L40S 142 x 1024 x 2520 = 366
 * (362), H100 SXM 132 x 4096 x 1830 = 989.4 (NVIDIA's tensor clock; the
 * wgmma rate, which mma.sync does not reach), B200 148 x 8192 x 1860 = 2250,
 * RTX 5090 170 x 512 x 2407 = 209.5. BF16 = FP16, TF32 = FP16 / 2, FP8 =
 * FP16 x 2 (each with the same accumulate), INT8 = FP16 at full rate x 2
 * (section 3.1's conventions; A100 624, RTX 4090 660.6).
 */
struct nv_rates {
	int major, minor;
	double fp32, fp64, fp16, bf16, int32, dp4a; /* 0: none */
	double tc;                                  /* FP16 tensor, full rate; 0: no tensor cores */
	bool tc_half; /* GeForce-class parts run FP32 accumulate at half of tc */
	bool bf16_tc, tf32_tc, int8_tc, fp8_tc;
};

static const struct nv_rates nv[] = {
	{ 7, 0, 128, 64, 256, 0, 128, 512, 1024, false, false, false, false, false },
	{ 7, 5, 128, 4, 256, 0, 128, 512, 1024, false, false, false, true, false },
	{ 8, 0, 128, 64, 512, 256, 128, 512, 2048, false, true, true, true, false },
	{ 8, 6, 256, 4, 256, 256, 128, 512, 1024, true, true, true, true, false },
	{ 8, 9, 256, 4, 256, 256, 128, 512, 1024, true, true, true, true, true },
	{ 9, 0, 256, 128, 512, 512, 128, 512, 4096, false, true, true, true, true },
	{ 10, 0, 256, 128, 512, 512, 128, 512, 8192, false, true, true, true, true },
	{ 12, 0, 256, 4, 256, 256, 128, 512, 1024, true, true, true, true, true },
};

static const struct nv_rates *
nv_find(int major, int minor)
{
	for (size_t i = 0; i < ARRAY_SIZE(nv); i++)
		if (nv[i].major == major && nv[i].minor == minor)
			return &nv[i];
	return NULL;
}

/*
 * Whether this part runs FP32-accumulate tensor work at half rate: where its
 * generation has such parts, the one whose rate at the reported clock the
 * spec table's FP16 figure is nearer to. Without a row, full rate.
 */
static bool
tc_half(const struct nv_rates *g, const struct bench_dev_info *info, const struct gpu_spec *spec,
        bool *known)
{
	double full;

	*known = true;
	if (!g->tc_half)
		return false;
	if (!spec || !isfinite(spec->fp16) || !info->units || !info->clock_mhz) {
		*known = false;
		return false;
	}
	full = info->units * g->tc * info->clock_mhz * 1e-6; /* TFLOPS */
	return spec->fp16 < 0.75 * full;
}

/*
 * OpenCL: FP32 FLOP/clk per compute unit (an FMA 2), by vendor and
 * generation, from the spec table's rows: AMD CDNA3 (gfx94x) 256 (MI300X
 * 304 x 256 x 2100 = 163.4), CDNA2 (gfx90a) 128 (MI250X 220 x 128 x 1700 =
 * 47.9; packed FP32 doubles it, which a plain fma does not use), CDNA1
 * (gfx908) 128, RDNA (gfx10-12) 128 (single issue: RX 7900 XTX 96 x 128 x
 * 2500 = 30.7; its 61.4 counts RDNA3's dual issue); FP64 CDNA2 and 3 128
 * (MI300X 304 x 128 x 2100 = 81.7), CDNA1 64, RDNA 8 (RX 7900 XTX 1.9).
 * Intel reports EUs (XVEs) as compute units: 16 FP32 FLOP/clk each (SIMD8
 * FMA; Arc A770 512 x 16 x 2400 = 19.7), Xe-HPC's (Max) 32 (1024 x 32 x
 * 1600 = 52.4). Anything else: unknown.
 */
static bool
cl_rates(const struct bench_dev_info *info, double *fp32, double *fp64, char *gen, size_t size)
{
	const char *g = strstr(info->name, "gfx");

	*fp32 = *fp64 = 0;
	if (strstr(info->vendor, "AMD") || strstr(info->vendor, "Advanced Micro Devices")) {
		unsigned v = 0;

		if (!g || sscanf(g + 3, "%x", &v) != 1)
			return false;
		if (v >= 0x940 && v < 0x950) {
			*fp32 = 256, *fp64 = 128;
			snprintf(gen, size, "CDNA3");
		} else if (v == 0x90a) {
			*fp32 = 128, *fp64 = 128;
			snprintf(gen, size, "CDNA2");
		} else if (v == 0x908) {
			*fp32 = 128, *fp64 = 64;
			snprintf(gen, size, "CDNA1");
		} else if (v >= 0x1000 && v < 0x1300) {
			*fp32 = 128, *fp64 = 8;
			snprintf(gen, size, "RDNA");
		} else {
			return false;
		}
		return true;
	}
	if (strstr(info->vendor, "Intel")) {
		*fp32 = strstr(info->name, "Max") ? 32 : 16;
		snprintf(gen, size, "%s", *fp32 == 32 ? "Xe-HPC" : "Xe");
		return true;
	}
	return false;
}

double
bench_pcie_gbs(int gen, int width, char *how, unsigned size)
{
	/*
	 * GB/s a lane, a direction: GT/s x encoding / 8. Gen1 2.5 and Gen2 5
	 * GT/s with 8b/10b; Gen3 8, Gen4 16, Gen5 32 with 128b/130b (0.985,
	 * 1.969, 3.938); Gen6 64 GT/s with 1b/1b (PAM4, FLIT mode: 8.0, the
	 * FLIT's FEC and CRC being protocol overhead like TLP headers, not
	 * counted here either).
	 */
	static const double gts[] = { 0, 2.5, 5, 8, 16, 32, 64 };
	double enc, lane;

	if (gen < 1 || gen > 6 || width < 1 || width > 32) {
		snprintf(how, size, "the PCIe link is not known");
		return NAN;
	}
	enc = gen <= 2 ? 8.0 / 10 : gen <= 5 ? 128.0 / 130 : 1;
	lane = gts[gen] * enc / 8;
	snprintf(how, size, "PCIe Gen%d x%d: %g GT/s x %d x %s / 8", gen, width, gts[gen], width,
	         gen <= 2   ? "8/10"
	         : gen <= 5 ? "128/130"
	                    : "1");
	return lane * width;
}

double
bench_mem_peak_gbs(unsigned bus_bits, double mem_mhz, char *how, unsigned size)
{
	/*
	 * BabelStream's 2 x memclock x bus / 8 with the memory clock as CUDA
	 * reports it: A100 80GB 5120 bits x 1593 MHz = 2039, H100 SXM 5120 x
	 * 2619 = 3352 (3350), H200 6144 x 3201 = 4917 (4800), RTX 4090 384 x
	 * 10501 = 1008 (GDDR6X: CUDA reports half its data rate, as for HBM)
	 */
	if (!bus_bits || !(mem_mhz > 0)) {
		snprintf(how, size, "the memory clock or bus width is not known");
		return NAN;
	}
	snprintf(how, size, "%u-bit bus / 8 x %.0f MHz x 2", bus_bits, mem_mhz);
	return bus_bits / 8.0 * mem_mhz * 2 / 1000;
}

static bool
is(const char *test, const char *name)
{
	return !strcmp(test, name);
}

static bool
prefix(const char *test, const char *p)
{
	return !strncmp(test, p, strlen(p));
}

double
bench_clock_peak(const struct bench_dev_info *info, const struct gpu_spec *spec, const char *test,
                 double mhz, char *how, unsigned size)
{
	const struct nv_rates *g;
	double per = 0;
	const char *what = "";
	char gen[16] = "";
	bool half = false, known = true;

	if (prefix(test, "stream."))
		return bench_mem_peak_gbs(info->mem_bus_bits, mhz > 0 ? mhz : info->mem_clock_mhz,
		                          how, size);
	if (!prefix(test, "fma.") && !prefix(test, "dp4a.") && !prefix(test, "mma.") &&
	    !prefix(test, "gemm.")) {
		snprintf(how, size, "no clock-derived peak for %s", test);
		return NAN;
	}
	if (info->cpu) {
		snprintf(how, size, "a CPU device (bench matmul holds the CPU to its own peak)");
		return NAN;
	}
	if (!info->units) {
		snprintf(how, size, "the device does not report its compute units");
		return NAN;
	}
	if (!(mhz > 0))
		mhz = info->clock_mhz;
	if (!(mhz > 0)) {
		snprintf(how, size, "the device does not report its clock");
		return NAN;
	}
	if (!strcmp(info->api, "cuda")) {
		g = nv_find(info->cc_major, info->cc_minor);
		if (!g) {
			snprintf(how, size, "no per-clock rates for compute capability %d.%d",
			         info->cc_major, info->cc_minor);
			return NAN;
		}
		snprintf(gen, sizeof(gen), "cc %d.%d", info->cc_major, info->cc_minor);
		/* only FP32-accumulate tensor work runs at half rate on GeForce parts */
		if (prefix(test, "mma.") && !is(test, "mma.int8"))
			half = tc_half(g, info, spec, &known);
		/* cuBLASLt: gemm.fp16 accumulates in FP16 (full rate), bf16 and fp8 in FP32 */
		if (is(test, "gemm.tf32") || is(test, "gemm.bf16") || is(test, "gemm.fp8"))
			half = tc_half(g, info, spec, &known);
		if (is(test, "fma.fp32"))
			per = g->fp32, what = "FP32";
		else if (is(test, "fma.fp64"))
			per = g->fp64, what = "FP64";
		else if (is(test, "fma.fp16"))
			per = g->fp16, what = "FP16 (half2)";
		else if (is(test, "fma.bf16"))
			per = g->bf16, what = "BF16 (bf16x2)";
		else if (is(test, "fma.int32"))
			per = g->int32, what = "INT32";
		else if (is(test, "dp4a.int8"))
			per = g->dp4a, what = "dp4a (estimate)";
		else if (is(test, "mma.fp16"))
			per = g->tc / (half ? 2 : 1), what = "FP16 tensor";
		else if (is(test, "mma.bf16"))
			per = g->bf16_tc ? g->tc / (half ? 2 : 1) : 0, what = "BF16 tensor";
		else if (is(test, "mma.tf32"))
			per = g->tf32_tc ? g->tc / (half ? 4 : 2) : 0, what = "TF32 tensor";
		else if (is(test, "mma.int8"))
			per = g->int8_tc ? g->tc * 2 : 0, what = "INT8 tensor";
		else if (is(test, "mma.fp8"))
			per = g->fp8_tc ? g->tc * 2 / (half ? 2 : 1) : 0, what = "FP8 tensor";
		else if (is(test, "gemm.fp32"))
			per = g->fp32, what = "FP32 (non-tensor)";
		else if (is(test, "gemm.tf32"))
			per = g->tf32_tc ? g->tc / (half ? 4 : 2) : 0, what = "TF32 tensor";
		else if (is(test, "gemm.fp16"))
			per = g->tc, what = "FP16 tensor, FP16 accumulate";
		else if (is(test, "gemm.bf16"))
			per = g->bf16_tc ? g->tc / (half ? 2 : 1) : 0, what = "BF16 tensor";
		else if (is(test, "gemm.fp8"))
			per = g->fp8_tc ? g->tc * 2 / (half ? 2 : 1) : 0, what = "FP8 tensor";
		/* DMMA: GA100 and GH100 run FP64 on tensor cores at twice the vector rate (3.4) */
		else if (is(test, "gemm.fp64") &&
		         ((g->major == 8 && g->minor == 0) || g->major == 9))
			per = g->fp64 * 2, what = "FP64 tensor";
		else if (is(test, "gemm.fp64"))
			per = g->fp64, what = "FP64";
	} else {
		double fp32, fp64;

		if (!cl_rates(info, &fp32, &fp64, gen, sizeof(gen))) {
			snprintf(how, size, "no per-clock rates known for %s '%s'",
			         info->vendor[0] ? info->vendor : "this vendor", info->name);
			return NAN;
		}
		if (is(test, "fma.fp32"))
			per = fp32, what = "FP32";
		else if (is(test, "fma.fp64"))
			per = fp64, what = "FP64";
	}
	if (!(per > 0)) {
		snprintf(how, size, "no per-clock rate for %s on %s", test, gen);
		return NAN;
	}
	snprintf(how, size, "%u %s x %g %s op/clk x %.0f MHz%s%s", info->units,
	         strcmp(info->api, "cuda") ? "CUs" : "SMs", per, what, mhz,
	         half ? " (FP32 accumulate at half rate, as GeForce parts)" : "",
	         !known ? " (full rate assumed: GeForce parts run FP32 accumulate at half)" : "");
	/* op/clk x MHz = 1e6 op/s: GOP/s is x 1e-3 */
	return info->units * per * mhz * 1e-3;
}

double
bench_spec_peak(const struct gpu_spec *spec, const char *test, char *how, unsigned size)
{
	static const struct {
		const char *test;
		size_t off;
		const char *col;
	} col[] = {
		{ "fma.fp64", offsetof(struct gpu_spec, fp64), "fp64" },
		{ "fma.fp32", offsetof(struct gpu_spec, fp32), "fp32" },
		{ "mma.fp16", offsetof(struct gpu_spec, fp16), "fp16 tensor" },
		{ "mma.bf16", offsetof(struct gpu_spec, bf16), "bf16 tensor" },
		{ "mma.tf32", offsetof(struct gpu_spec, tf32), "tf32 tensor" },
		{ "mma.int8", offsetof(struct gpu_spec, int8), "int8 tensor" },
		{ "mma.fp8", offsetof(struct gpu_spec, fp8), "fp8 tensor" },
		{ "gemm.fp32", offsetof(struct gpu_spec, fp32), "fp32 (non-tensor)" },
		{ "gemm.tf32", offsetof(struct gpu_spec, tf32), "tf32 tensor" },
		{ "gemm.fp16", offsetof(struct gpu_spec, fp16), "fp16 tensor" },
		{ "gemm.bf16", offsetof(struct gpu_spec, bf16), "bf16 tensor" },
		{ "gemm.fp8", offsetof(struct gpu_spec, fp8), "fp8 tensor" },
		{ "gemm.fp64", offsetof(struct gpu_spec, fp64_tensor), "fp64 tensor" },
	};
	char link[96];
	double v;

	if (!spec) {
		snprintf(how, size, "the spec table has no row for this device");
		return NAN;
	}
	if (prefix(test, "stream.")) {
		if (!isfinite(spec->mem_bw_gbs)) {
			snprintf(how, size, "%s: no memory bandwidth in the table", spec->name);
			return NAN;
		}
		snprintf(how, size, "%s: %g GB/s", spec->name, spec->mem_bw_gbs);
		return spec->mem_bw_gbs;
	}
	if (prefix(test, "h2d.") || prefix(test, "d2h.") || prefix(test, "bidir.")) {
		v = bench_pcie_gbs(spec->pcie_gen, spec->pcie_width, link, sizeof(link));
		if (!isfinite(v)) {
			snprintf(how, size, "%s: the table has no PCIe link", spec->name);
			return NAN;
		}
		if (prefix(test, "bidir."))
			v *= 2;
		snprintf(how, size, "%s: %s%s", spec->name, link,
		         prefix(test, "bidir.") ? ", x 2" : "");
		return v;
	}
	for (size_t i = 0; i < ARRAY_SIZE(col); i++) {
		if (!is(test, col[i].test))
			continue;
		memcpy(&v, (const char *)spec + col[i].off, sizeof(v));
		/* a part without FP64 tensor cores: its FP64 is what cuBLASLt reaches for */
		if (is(test, "gemm.fp64") && !isfinite(v)) {
			v = spec->fp64;
			if (isfinite(v)) {
				snprintf(how, size, "%s: fp64 %g TFLOP/s (no fp64 tensor figure)",
				         spec->name, v);
				return v * 1000;
			}
		}
		if (!isfinite(v)) {
			snprintf(how, size, "%s: no %s figure in the table", spec->name,
			         col[i].col);
			return NAN;
		}
		snprintf(how, size, "%s: %s %g T%s/s", spec->name, col[i].col, v,
		         is(test, "mma.int8") ? "OP" : "FLOP");
		return v * 1000;
	}
	if (is(test, "fma.fp16") || is(test, "fma.bf16"))
		snprintf(how, size,
		         "the table's fp16/bf16 are tensor rates: none for vector pairs");
	else
		snprintf(how, size, "the table has no figure for %s", test);
	return NAN;
}

static double
pct(double measured, double ref)
{
	return isfinite(measured) && isfinite(ref) && ref > 0 ? 100 * measured / ref : NAN;
}

static void
flag(struct bench_peak *p, double pc)
{
	if (!isfinite(pc))
		return;
	if (pc > 100)
		p->flags |= BENCH_PEAK_OVER;
	if (pc < 60)
		p->flags |= BENCH_PEAK_LOW;
}

void
bench_peak_fill(struct bench_result *r, const struct bench_dev_info *info,
                const struct bench_peak_in *in)
{
	static const struct bench_peak_in none;
	struct bench_peak *p = &r->peak;
	const struct gpu_spec *spec;
	bool copy = prefix(r->name, "h2d.") || prefix(r->name, "d2h.") || prefix(r->name, "bidir.");
	double mhz;
	size_t nr;

	if (!in)
		in = &none;
	spec = in->spec;
	if (!spec && info->name[0] && !info->cpu)
		spec = gpu_spec_find(info->name, NULL, 0, &nr);
	memset(p, 0, sizeof(*p));
	p->filled = true;
	p->link = p->pct_link = NAN;
	p->spec = bench_spec_peak(spec, r->name, p->spec_how, sizeof(p->spec_how));
	mhz = prefix(r->name, "stream.") ? in->mem_mhz : in->sm_mhz;
	p->clock_observed = mhz > 0;
	p->clock = bench_clock_peak(info, spec, r->name, mhz, p->clock_how, sizeof(p->clock_how));
	if (isfinite(p->clock)) {
		size_t len = strlen(p->clock_how);

		snprintf(p->clock_how + len, sizeof(p->clock_how) - len, " (%s)",
		         p->clock_observed ? "the clock seen during the test"
		                           : "the reported maximum clock");
	}
	if (copy) {
		p->link = bench_pcie_gbs(in->pcie_gen, in->pcie_width, p->link_how,
		                         sizeof(p->link_how));
		if (prefix(r->name, "bidir."))
			p->link *= 2;
	} else {
		snprintf(p->link_how, sizeof(p->link_how), "-");
	}
	if (r->status != BENCH_MEASURED || !strcmp(r->unit, "us")) {
		p->pct_spec = p->pct_clock = NAN;
		return;
	}
	p->pct_spec = pct(r->best, p->spec);
	p->pct_clock = pct(r->best, p->clock);
	p->pct_link = pct(r->best, p->link);
	flag(p, p->pct_spec);
	flag(p, p->pct_clock);
	flag(p, p->pct_link);
}
