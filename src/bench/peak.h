/*
 * What a measured figure of gpuscope bench is held against: the spec
 * table's number for the device (core/specs.h), the peak derived from its
 * clocks (units x operations per clock x clock, bus width x memory clock)
 * and, for host <-> device copies, the PCIe link's theoretical rate; each as
 * a percentage, flagged over 100 % (boost) and under 60 %.
 */
#ifndef GPUSCOPE_BENCH_PEAK_H
#define GPUSCOPE_BENCH_PEAK_H

#include <stdbool.h>

struct bench_dev_info;
struct bench_result;
struct gpu_spec;

enum bench_peak_flags {
	BENCH_PEAK_OVER = 1 << 0, /* above 100 % of the spec or the clock peak: boost */
	BENCH_PEAK_LOW = 1 << 1,  /* below 60 % of the spec or the clock peak */
};

/* Every figure in the result's unit; NAN where there is none, with why in the text. */
struct bench_peak {
	bool filled;         /* bench_peak_fill() ran */
	double spec;         /* the spec sheet's figure */
	char spec_how[128];  /* "H200 SXM 141GB: fp32 67 TFLOPS", or why none */
	double clock;        /* the clock-derived peak */
	char clock_how[192]; /* "132 SMs x 256 FLOP/clk x 1980 MHz (reported maximum)", or why none
	                      */
	bool clock_observed; /* the clock seen during the test, not the reported maximum */
	double link;         /* copies: the link's rate as trained now (GB/s) */
	char link_how[96];
	double pct_spec, pct_clock, pct_link;
	unsigned flags; /* enum bench_peak_flags */
};

/* What the caller knows beyond the device's info; a zeroed struct is valid. */
struct bench_peak_in {
	const struct gpu_spec *spec; /* the device's row; NULL: looked up by info->name */
	double sm_mhz;               /* the SM clock seen during the test (NVML); 0: not seen */
	double mem_mhz;              /* the memory clock seen (CUDA's convention); 0: not seen */
	int pcie_gen, pcie_width;    /* the link as trained during the test; 0: not read */
};

/* Fill r->peak for r on the device of info (r->best is held against it). */
void bench_peak_fill(struct bench_result *r, const struct bench_dev_info *info,
                     const struct bench_peak_in *in);

/*
 * The parts, for the tests and the command. Each returns the figure or NAN,
 * with how (or why not) in how[size].
 */
/* PCIe: GB/s per direction of gen x width: GT/s x width x encoding / 8. */
double bench_pcie_gbs(int gen, int width, char *how, unsigned size);
/* Memory: bus bits / 8 x mem clock x 2 (DDR), GB/s. */
double bench_mem_peak_gbs(unsigned bus_bits, double mem_mhz, char *how, unsigned size);
/* The clock-derived peak of test (a suite name, "fma.fp32") in its unit at mhz (0: info's). */
double bench_clock_peak(const struct bench_dev_info *info, const struct gpu_spec *spec,
                        const char *test, double mhz, char *how, unsigned size);
/* The spec table's figure of test in its unit, from row spec (NULL: none). */
double bench_spec_peak(const struct gpu_spec *spec, const char *test, char *how, unsigned size);

#endif
