/*
 * fit on measured figures: when `gpuscope bench` has measured a GPU of this
 * machine (core/benchstore.h), its memory bandwidth (stream.triad best) and its
 * FLOPS at the job's precision (cuBLASLt gemm.*, else our mma.*, fma.fp32
 * for FP32) stand in for the spec sheet's in fit's speed estimates, and fit
 * says so beside the sheet's figure.
 */
#ifndef GPUSCOPE_FIT_MEASURED_H
#define GPUSCOPE_FIT_MEASURED_H

#include <stdbool.h>

#include "core/specs.h"

struct bench_record;
struct fit_job;
struct strbuf;

/*
 * A measured figure is not the sheet's kind of number: STREAM triad reaches
 * only part of the sheet's bandwidth on a healthy card, cuBLASLt's GEMM only
 * part of its peak, and the shares fit's speed models apply (the engines'
 * bandwidth and MFU fractions, fit's MFU) were derived against the sheet
 * from published tokens/s, so they already hold that part. Applying them to
 * a measured figure would count it twice. fit therefore takes a measured
 * figure as the sheet a card measuring that would have: measured / the
 * typical share (a card that measures like its kind keeps its sheet, one
 * that measures 10 % low is 10 % slower).
 *
 * Triad's share of the sheet, NVIDIA: A100 SXM4 80GB 1.70 of 2.039 TB/s
 * (83 %), H100 SXM 2.97 of 3.35 (89 %), H200 4.15 of 4.8 (86 %)
 * (Azure/AI-benchmarking-guide Azure_Results ND_*_v*_results.md, commit
 * 8fd0c6e, BabelStream fork, CUDA 12.6); RTX 4090 912 of 1008 GB/s (90 %,
 * chsasank/device-benchmarks README); RTX 3090 856 of 936 (91 %,
 * krrishnarraj/clpeak#104): 0.87 the middle.
 * cuBLASLt / torch BF16 GEMM's share of the dense peak: H100 SXM 794.5 of 989
 * (80 %, stas00/ml-engineering MAMF table), H200 790 (80 %), A100 SXM 264.5-
 * 271.2 of 312 (85-87 %), B200 1745 of 2250 (78 %), A100 80GB FP16 256.5 (82 %,
 * Azure ND A100 v4): 0.80. Our own mma.sync and FMA-chain tests are peak
 * tests (what the sheet states, at the clock held) and are taken as they are.
 */
#define FIT_STREAM_SHARE 0.87
#define FIT_GEMM_SHARE   0.80

/* What was taken from a measurement. */
struct fit_measured {
	bool bw, flops;      /* bandwidth, FLOPS measured */
	double bw_gbs;       /* measured, GB/s */
	double spec_bw_gbs;  /* the sheet's, NAN unknown */
	double bw_time;      /* when measured, seconds since the epoch */
	double tflops;       /* measured at the job's precision, TFLOPS (TOPS) */
	double spec_tflops;  /* the sheet's at that precision, NAN unknown */
	double flops_time;   /* when measured */
	char flops_test[48]; /* the test it is ("gemm.bf16", "mma.bf16", "fma.fp32") */
	/*
	 * The row fit's speed arithmetic takes: the sheet a card measuring this
	 * would have (measured bandwidth / FIT_STREAM_SHARE, gemm.* rates /
	 * FIT_GEMM_SHARE, other measured rates as they are, the rest the sheet's).
	 */
	struct gpu_spec equiv;
};

/*
 * out = spec (NULL: a row with nothing known) with r's measured figures in
 * place of the sheet's bandwidth and the rates j computes at; m says what
 * was replaced. A figure without a positive finite best, or whose unit is
 * not a rate fit reads (GB/s, TB/s; GFLOP/s, TFLOP/s, GOP/s, TOPS), is
 * passed over. m->equiv gets the sheet equivalent (above). Returns whether
 * anything was replaced.
 */
bool fit_apply_measured(const struct gpu_spec *spec, const struct bench_record *r,
                        const struct fit_job *j, struct gpu_spec *out, struct fit_measured *m);

/*
 * The assumption line for people: "bandwidth 3,950 GB/s measured by
 * gpuscope bench on 2026-12-02 (spec 4,800)", and the same for FLOPS, each
 * on its own line indented by two blanks (local dates), and a line with
 * the sheet equivalent the speeds take.
 */
void fit_measured_text(const struct fit_measured *m, struct strbuf *sb);

#endif
