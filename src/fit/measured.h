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
};

/*
 * out = spec (NULL: a row with nothing known) with r's measured figures in
 * place of the sheet's bandwidth and the rates j computes at; m says what
 * was replaced. A figure without a positive finite best, or whose unit is
 * not a rate fit reads (GB/s, TB/s; GFLOP/s, TFLOP/s, GOP/s, TOPS), is
 * passed over. Returns whether anything was replaced.
 */
bool fit_apply_measured(const struct gpu_spec *spec, const struct bench_record *r,
                        const struct fit_job *j, struct gpu_spec *out, struct fit_measured *m);

/*
 * The assumption line for people: "bandwidth 3,950 GB/s measured by
 * gpuscope bench on 2026-12-02 (spec 4,800)", and the same for FLOPS, each
 * on its own line indented by two blanks (local dates).
 */
void fit_measured_text(const struct fit_measured *m, struct strbuf *sb);

#endif
