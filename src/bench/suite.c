/*
 * The tests of gpuscope bench over one struct bench_dev (bench/suite.h):
 * each peer's method as bench-specs.md section 1 gives it (clpeak for the
 * FMA chains and mma, BabelStream for memory, nvbandwidth for copies, clpeak
 * and superbench for launch latency), timed between the device's own
 * markers, and every result checked before it is reported.
 */
#include "bench/suite.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cublaslt.h"
#include "bench/dev.h"
#include "bench/matmul.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/xalloc.h"

#define MIB (1024ull * 1024)

/* a test stopped by opts->stop: not an error */
#define STOPPED 1

enum group { G_FMA, G_MMA, G_GEMM, G_STREAM, G_COPY, G_LAUNCH };

enum copy_kind { C_H2D, C_D2H, C_BIDIR, C_H2D_PAGE, C_D2H_PAGE, C_H2D_SM, C_D2H_SM };

struct test {
	const char *name;
	enum group group;
	enum bench_kern kern;
	int var;         /* enum copy_kind, the stream kernel's index, mma's K, gemm's type */
	double ops_step; /* FMA: operations a chain step counts (dev.h) */
	const char *unit;
};

/* BabelStream's "classic" order; each kernel's bytes are weight x 4 x n */
static const unsigned stream_weight[5] = { 2, 2, 3, 3, 2 };

static const struct test tests[BENCH_SUITE_MAX] = {
	{ "fma.fp64", G_FMA, BK_FMA_F64, 0, 2, "GFLOP/s" },
	{ "fma.fp32", G_FMA, BK_FMA_F32, 0, 2, "GFLOP/s" },
	{ "fma.fp16", G_FMA, BK_FMA_F16, 0, 4, "GFLOP/s" },
	{ "fma.bf16", G_FMA, BK_FMA_BF16, 0, 4, "GFLOP/s" },
	{ "fma.int32", G_FMA, BK_FMA_I32, 0, 2, "GOP/s" },
	{ "dp4a.int8", G_FMA, BK_DP4A_I8, 0, 8, "GOP/s" },
	/* var: K of the m16n8kK shape */
	{ "mma.fp16", G_MMA, BK_MMA_F16, 16, 0, "GFLOP/s" },
	{ "mma.bf16", G_MMA, BK_MMA_BF16, 16, 0, "GFLOP/s" },
	{ "mma.tf32", G_MMA, BK_MMA_TF32, 8, 0, "GFLOP/s" },
	{ "mma.int8", G_MMA, BK_MMA_I8, 32, 0, "GOP/s" },
	{ "mma.fp8", G_MMA, BK_MMA_FP8, 32, 0, "GFLOP/s" },
	/* cuBLASLt (bench/cublaslt.h); var: enum bench_gemm_type */
	{ "gemm.fp32", G_GEMM, BK_NKERNELS, BG_FP32, 0, "GFLOP/s" },
	{ "gemm.tf32", G_GEMM, BK_NKERNELS, BG_TF32, 0, "GFLOP/s" },
	{ "gemm.fp16", G_GEMM, BK_NKERNELS, BG_FP16, 0, "GFLOP/s" },
	{ "gemm.bf16", G_GEMM, BK_NKERNELS, BG_BF16, 0, "GFLOP/s" },
	{ "gemm.fp8", G_GEMM, BK_NKERNELS, BG_FP8, 0, "GFLOP/s" },
	{ "gemm.fp64", G_GEMM, BK_NKERNELS, BG_FP64, 0, "GFLOP/s" },
	{ "stream.copy", G_STREAM, BK_STREAM_COPY, 0, 0, "GB/s" },
	{ "stream.mul", G_STREAM, BK_STREAM_MUL, 1, 0, "GB/s" },
	{ "stream.add", G_STREAM, BK_STREAM_ADD, 2, 0, "GB/s" },
	{ "stream.triad", G_STREAM, BK_STREAM_TRIAD, 3, 0, "GB/s" },
	{ "stream.dot", G_STREAM, BK_STREAM_DOT, 4, 0, "GB/s" },
	{ "h2d.pinned", G_COPY, BK_NKERNELS, C_H2D, 0, "GB/s" },
	{ "d2h.pinned", G_COPY, BK_NKERNELS, C_D2H, 0, "GB/s" },
	{ "bidir.pinned", G_COPY, BK_NKERNELS, C_BIDIR, 0, "GB/s" },
	{ "h2d.pageable", G_COPY, BK_NKERNELS, C_H2D_PAGE, 0, "GB/s" },
	{ "d2h.pageable", G_COPY, BK_NKERNELS, C_D2H_PAGE, 0, "GB/s" },
	{ "h2d.sm", G_COPY, BK_COPY_U4, C_H2D_SM, 0, "GB/s" },
	{ "d2h.sm", G_COPY, BK_COPY_U4, C_D2H_SM, 0, "GB/s" },
	{ "launch.latency", G_LAUNCH, BK_EMPTY, 0, 0, "us" },
};

/* clpeak's: 2 untimed launches, a probe, then at most 10000 launches */
#define WARMUP_LAUNCHES 2
#define MAX_LAUNCHES    10000
/* FMA iterations a launch: x CHAINS x UNROLL x 2 = clpeak's 4096 FLOP a work-item (f32) */
#define FMA_ITERS 16
/*
 * dev.h's example c = -1 sends every chain to the exact cycle 0, -1 within
 * a few dozen steps, so any kernel that stores 0 would pass the check; with
 * c = -1.9 the map x * x + c is chaotic on [-1.9, 1.71] (no overflow, no
 * denormals), and a missing step, a second rounding or a wrong c changes
 * the stored sum
 */
#define FMA_SEED 0.5f
#define FMA_C    (-1.9f)
/* mma iterations a launch: about a millisecond of a big GPU's tensor cores */
#define MMA_ITERS 1024
/* work-items sampled when checking an output */
#define CHECK_SAMPLES 64
/* nvbandwidth's: 4 warm-up copies, 16 a sample, 3 samples */
#define COPY_WARMUP  4
#define COPY_LOOPS   16
#define COPY_SAMPLES 3
#define BLOCK        256

const char *
bench_status_name(enum bench_status s)
{
	switch (s) {
	case BENCH_MEASURED:
		return "measured";
	case BENCH_UNSUPPORTED:
		return "unsupported";
	case BENCH_SKIPPED:
		return "skipped";
	case BENCH_FAILED:
		return "failed";
	case BENCH_WRONG:
		return "wrong";
	case BENCH_STOPPED:
		return "stopped";
	}
	return "?";
}

const char *
bench_suite_test_name(size_t i)
{
	return i < BENCH_SUITE_MAX ? tests[i].name : NULL;
}

/* pattern is name, or a prefix of it ending at one of its dots ("stream", "fma.") */
static bool
pattern_matches(const char *pattern, const char *name)
{
	size_t n = strlen(pattern);

	if (!n || strncmp(pattern, name, n))
		return false;
	return name[n] == '\0' || name[n] == '.' || pattern[n - 1] == '.';
}

bool
bench_suite_pattern_valid(const char *pattern)
{
	for (size_t i = 0; i < BENCH_SUITE_MAX; i++)
		if (pattern_matches(pattern, tests[i].name))
			return true;
	return false;
}

static bool
selected(const struct bench_suite_opts *o, const char *name)
{
	if (!o->tests || !o->ntests)
		return true;
	for (size_t i = 0; i < o->ntests; i++)
		if (o->tests[i] && pattern_matches(o->tests[i], name))
			return true;
	return false;
}

/* ---- the run's state and the device's calls ---- */

struct run {
	struct bench_dev *d;
	const struct bench_suite_opts *o;
	double target;
	unsigned long long free_bytes, budget, used;
	bool lost;
	int lost_rc; /* E_LOST or E_TIMEOUT */
	char lost_why[200];
	struct bench_pace pace; /* stop and progress */
	double cur_t0;
};

bool
bench_pace_stop(struct bench_pace *p)
{
	if (!p->stopped && p->stop && p->stop())
		p->stopped = true;
	return p->stopped;
}

void
bench_pace_progress(const struct bench_pace *p, double done)
{
	double left;

	if (!p->progress)
		return;
	left = p->cur_plan * (1 - done) + p->plan_left;
	/* the plan's sums and differences leave crumbs */
	if (left < 1e-6)
		left = 0;
	p->progress(p->progress_arg, p->test, done, left);
}

static bool
want_stop(struct run *r)
{
	return bench_pace_stop(&r->pace);
}

static void
progress(struct run *r, double done)
{
	bench_pace_progress(&r->pace, done);
}

/* Every device status goes through here: a lost or hung device is used no more. */
static int
dv(struct run *r, int rc)
{
	if ((rc == E_LOST || rc == E_TIMEOUT) && !r->lost) {
		r->lost = true;
		r->lost_rc = rc;
	}
	return rc;
}

/* An allocation within the budget: E_BUSY (skipped) past it. */
static int
dalloc(struct run *r, size_t bytes, uint64_t *buf, struct err *err)
{
	int rc;

	if (bytes > r->budget || r->used + bytes > r->budget)
		return err_set(
		        err, E_BUSY,
		        "not enough free device memory: %.1f MiB wanted, %.1f MiB of %.1f MiB "
		        "may be used",
		        (double)bytes / MIB, (double)(r->budget - r->used) / MIB,
		        (double)r->budget / MIB);
	rc = dv(r, r->d->ops->alloc(r->d, bytes, buf, err));
	if (rc == 0)
		r->used += bytes;
	return rc;
}

static void
dfree(struct run *r, uint64_t *buf, size_t bytes)
{
	if (!*buf)
		return;
	r->d->ops->free(r->d, *buf);
	*buf = 0;
	r->used -= bytes < r->used ? bytes : r->used;
}

/* One kernel launch, kept so that it can be queued again and again. */
struct launch {
	int stream;
	enum bench_kern k;
	unsigned grid[2], block[2];
	struct bench_arg args[8];
	unsigned nargs;
};

static int
launch(struct run *r, const struct launch *l, struct err *err)
{
	return dv(r, r->d->ops->launch(r->d, l->stream, l->k, l->grid, l->block, l->args, l->nargs,
	                               err));
}

static int
mark(struct run *r, int stream, unsigned slot, struct err *err)
{
	return dv(r, r->d->ops->mark(r->d, stream, slot, err));
}

static int
elapsed(struct run *r, unsigned a, unsigned b, double *s, struct err *err)
{
	return dv(r, r->d->ops->elapsed(r->d, a, b, s, err));
}

static int
dsync(struct run *r, int stream, struct err *err)
{
	return dv(r, r->d->ops->sync(r->d, stream, err));
}

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of v[0..n-1] (sorted in place). */
static double
median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void
add_extra(struct bench_result *res, const char *name, double v)
{
	if (res->nextra < ARRAY_SIZE(res->extra))
		res->extra[res->nextra++] = (struct bench_extra){ name, v };
}

/* rates[0..n-1] (a test's samples) into best (the highest) and median */
static void
set_rates(struct bench_result *res, double *rates, size_t n)
{
	double best = 0;

	for (size_t i = 0; i < n; i++)
		if (rates[i] > best)
			best = rates[i];
	res->best = best;
	res->median = median(rates, n);
	res->samples = (unsigned)n;
}

/* ---- calibrated batches (clpeak's timing) ---- */

/*
 * 2 untimed launches, each synchronised, then one launch between markers:
 * its seconds in *probe.
 */
static int
probe(struct run *r, const struct launch *l, double *probe_s, struct err *err)
{
	int rc;

	for (int i = 0; i < WARMUP_LAUNCHES; i++) {
		if (want_stop(r))
			return STOPPED;
		if ((rc = launch(r, l, err)) || (rc = dsync(r, l->stream, err)))
			return rc;
	}
	if ((rc = mark(r, l->stream, 0, err)) || (rc = launch(r, l, err)) ||
	    (rc = mark(r, l->stream, 1, err)) || (rc = elapsed(r, 0, 1, probe_s, err)))
		return rc;
	return 0;
}

/*
 * As many launches as the target time takes at probe_s a launch (1 to
 * 10000), in three equal batches between markers 0-1, 1-2, 2-3 so that one
 * test's time gives three samples: rates in GFLOP/s (or GOP/s) from
 * ops a launch.
 */
static int
timed_batches(struct run *r, const struct launch *l, double probe_s, double ops,
              struct bench_result *res, struct err *err)
{
	double n = probe_s > 0 ? r->target / probe_s : MAX_LAUNCHES;
	unsigned launches, batches, per, done = 0;
	double rates[3];
	int rc;

	launches = n < 1 ? 1 : n > MAX_LAUNCHES ? MAX_LAUNCHES : (unsigned)n;
	batches = launches >= 3 ? 3 : 1;
	per = launches / batches;
	if ((rc = mark(r, l->stream, 0, err)))
		return rc;
	for (unsigned b = 0; b < batches; b++) {
		for (unsigned i = 0; i < per; i++) {
			if (want_stop(r)) {
				dsync(r, l->stream, NULL);
				return STOPPED;
			}
			if ((rc = launch(r, l, err)))
				return rc;
		}
		if ((rc = mark(r, l->stream, b + 1, err)))
			return rc;
		done += per;
		progress(r, 0.2 + 0.6 * (double)done / ((double)per * batches));
	}
	for (unsigned b = 0; b < batches; b++) {
		double s;

		if ((rc = elapsed(r, b, b + 1, &s, err)))
			return rc;
		if (s <= 0)
			return err_set(err, E_IO, "the device's markers gave %g s for %u launches",
			               s, per);
		rates[b] = ops * per / s / 1e9;
	}
	set_rates(res, rates, batches);
	res->count = ops * per;
	return 0;
}

/* ---- FMA chains ---- */

unsigned long long
bench_suite_fma_items(const struct bench_dev_info *info, unsigned long long budget)
{
	unsigned long long units = info->units ? info->units : 1, n, cap;

	/* clpeak's targetGlobalThreads; a CPU device's cores want far fewer */
	if (info->cpu) {
		n = units * 4096;
	} else {
		n = units * 2048 * 256;
		if (n < 32 * MIB)
			n = 32 * MIB;
	}
	/* out[] (a float a work-item) within a quarter of the budget */
	cap = budget / 4 / sizeof(float);
	if (n > cap)
		n = cap;
	/* and the grid within what a launch takes */
	if (n / BLOCK > INT32_MAX)
		n = (unsigned long long)INT32_MAX * BLOCK;
	return n / BLOCK * BLOCK;
}

static int32_t
wrap32(uint64_t v)
{
	return (int32_t)(uint32_t)v;
}

/* dp4a(a, b, c): c + the four signed byte products of a and b */
static int32_t
dp4a(int32_t a, int32_t b, int32_t c)
{
	int64_t s = c;

	for (int i = 0; i < 4; i++)
		s += (int64_t)(int8_t)(uint8_t)((uint32_t)a >> (8 * i)) *
		     (int8_t)(uint8_t)((uint32_t)b >> (8 * i));
	return wrap32((uint64_t)s);
}

/*
 * What every work-item of an FMA kernel stores (dev.h's chain, computed
 * here the same way: each step one fused rounding, the chains summed in
 * order 0 to 7 in the kernel's type); false for f16 and bf16, which are
 * checked for being finite only.
 */
static bool
fma_expect(enum bench_kern k, float seed, float c, int iters, float *out)
{
	int steps = iters * BENCH_FMA_UNROLL;

	switch (k) {
	case BK_FMA_F32: {
		float x[BENCH_FMA_CHAINS], s = 0;

		for (int j = 0; j < BENCH_FMA_CHAINS; j++)
			x[j] = seed + (float)j / 64.0f;
		for (int i = 0; i < steps; i++)
			for (int j = 0; j < BENCH_FMA_CHAINS; j++)
				x[j] = fmaf(x[j], x[j], c);
		for (int j = 0; j < BENCH_FMA_CHAINS; j++)
			s += x[j];
		*out = s;
		return true;
	}
	case BK_FMA_F64: {
		double x[BENCH_FMA_CHAINS], s = 0;

		for (int j = 0; j < BENCH_FMA_CHAINS; j++)
			x[j] = (double)seed + j / 64.0;
		for (int i = 0; i < steps; i++)
			for (int j = 0; j < BENCH_FMA_CHAINS; j++)
				x[j] = fma(x[j], x[j], (double)c);
		for (int j = 0; j < BENCH_FMA_CHAINS; j++)
			s += x[j];
		*out = (float)s;
		return true;
	}
	case BK_FMA_I32:
	case BK_DP4A_I8: {
		int32_t x[BENCH_FMA_CHAINS], c64 = (int32_t)(c * 64), s = 0;

		for (int j = 0; j < BENCH_FMA_CHAINS; j++)
			x[j] = (int32_t)(seed * 64) + j;
		for (int i = 0; i < steps; i++)
			for (int j = 0; j < BENCH_FMA_CHAINS; j++)
				x[j] = k == BK_FMA_I32
				               ? wrap32((uint64_t)(uint32_t)x[j] * (uint32_t)x[j] +
				                        (uint32_t)c64)
				               : dp4a(x[j],
				                      (int32_t)(0x01010101u * (uint32_t)(j + 1)),
				                      x[j]);
		for (int j = 0; j < BENCH_FMA_CHAINS; j++)
			s = wrap32((uint64_t)(uint32_t)s + (uint32_t)x[j]);
		*out = (float)s;
		return true;
	}
	default:
		return false;
	}
}

static bool
same_bits(float a, float b)
{
	uint32_t x, y;

	memcpy(&x, &a, sizeof(x));
	memcpy(&y, &b, sizeof(y));
	return x == y;
}

/*
 * Read back CHECK_SAMPLES work-items of out[0..n-1] (the first, the last,
 * evenly spaced and pseudo-random ones between) and hold each to want (when
 * exact) or to being finite and equal to out[0] (finite_only; equal_all
 * false: finite only). A failure makes res wrong, saying how many and the
 * worst.
 */
static int
check_out(struct run *r, uint64_t out, unsigned long long n, bool exact, float want, bool equal_all,
          struct bench_result *res, struct err *err)
{
	unsigned bad = 0, checked = 0;
	unsigned long long worst_i = 0;
	float first = 0, worst = 0;
	double worst_d = -1;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int rc;

	for (unsigned s = 0; s < CHECK_SAMPLES && s < n; s++) {
		unsigned long long i;
		float got;
		bool good;
		double dist;

		if (s == 0)
			i = 0;
		else if (s == 1)
			i = n - 1;
		else if (s < CHECK_SAMPLES / 2)
			i = (n - 1) * s / (CHECK_SAMPLES / 2);
		else {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			i = x % n;
		}
		rc = dv(r, r->d->ops->read(r->d, 0, out, i * sizeof(float), &got, sizeof(got), true,
		                           err));
		if (rc)
			return rc;
		if (s == 0)
			first = got;
		checked++;
		if (exact) {
			good = same_bits(got, want);
			dist = isfinite(got) ? fabs((double)got - want) : INFINITY;
		} else {
			good = isfinite(got) && (!equal_all || same_bits(got, first));
			dist = isfinite(got) ? fabs((double)got - first) : INFINITY;
		}
		if (!good) {
			bad++;
			if (dist > worst_d) {
				worst_d = dist;
				worst = got;
				worst_i = i;
			}
		}
	}
	if (bad) {
		res->status = BENCH_WRONG;
		if (exact)
			snprintf(
			        res->why, sizeof(res->why),
			        "%u of %u sampled work-items wrong; worst out[%llu] = %.9g, want %.9g",
			        bad, checked, worst_i, (double)worst, (double)want);
		else
			snprintf(
			        res->why, sizeof(res->why),
			        "%u of %u sampled work-items %s; worst out[%llu] = %.9g (out[0] %.9g)",
			        bad, checked,
			        equal_all ? "not finite or unlike the others" : "not finite",
			        worst_i, (double)worst, (double)first);
	}
	return 0;
}

static int
run_fma(struct run *r, const struct test *t, struct bench_result *res, struct err *err)
{
	unsigned long long n = bench_suite_fma_items(&r->d->info, r->budget - r->used);
	uint64_t out = 0;
	size_t bytes;
	struct launch l = { .stream = 0, .k = t->kern, .block = { BLOCK, 1 }, .nargs = 4 };
	double per_item = (double)FMA_ITERS * BENCH_FMA_CHAINS * BENCH_FMA_UNROLL * t->ops_step;
	double probe_s;
	float want = 0;
	bool exact;
	int rc;

	if (n < BLOCK)
		return err_set(err, E_BUSY, "not enough free device memory for %u work-items",
		               BLOCK);
	bytes = n * sizeof(float);
	if ((rc = dalloc(r, bytes, &out, err)))
		goto out;
	l.args[0] = bench_arg_buf(out, 0);
	l.args[1] = bench_arg_f32(FMA_SEED);
	l.args[2] = bench_arg_f32(FMA_C);
	l.args[3] = bench_arg_i32(FMA_ITERS);
	l.grid[0] = (unsigned)(n / BLOCK);
	l.grid[1] = 1;
	if ((rc = probe(r, &l, &probe_s, err)))
		goto out;
	/*
	 * A launch longer than the whole target (FP64 of a GeForce card, a slow
	 * CPU device): fewer work-items, so that the test keeps to its time.
	 */
	if (probe_s > r->target && l.grid[0] > 1) {
		double f = r->target / probe_s;
		unsigned g = (unsigned)(l.grid[0] * f);

		l.grid[0] = g ? g : 1;
		if ((rc = mark(r, 0, 0, err)) || (rc = launch(r, &l, err)) ||
		    (rc = mark(r, 0, 1, err)) || (rc = elapsed(r, 0, 1, &probe_s, err)))
			goto out;
	}
	progress(r, 0.2);
	if ((rc = timed_batches(r, &l, probe_s, per_item * l.grid[0] * BLOCK, res, err)))
		goto out;
	exact = fma_expect(t->kern, FMA_SEED, FMA_C, FMA_ITERS, &want);
	if ((rc = check_out(r, out, (unsigned long long)l.grid[0] * BLOCK, exact, want, true, res,
	                    err)))
		goto out;
	snprintf(res->note, sizeof(res->note),
	         "%llu work-items x %d chains x %d x %d steps x %g ops; %s",
	         (unsigned long long)l.grid[0] * BLOCK, BENCH_FMA_CHAINS, FMA_ITERS,
	         BENCH_FMA_UNROLL, t->ops_step,
	         exact ? "checked bit-exact against the host's chain" : "checked finite and alike");
out:
	dfree(r, &out, bytes);
	return rc;
}

/* ---- tensor cores (mma.sync) ---- */

static int
run_mma(struct run *r, const struct test *t, struct bench_result *res, struct err *err)
{
	unsigned units = r->d->info.units ? r->d->info.units : 1;
	unsigned long long n = (unsigned long long)units * 16 * BLOCK;
	uint64_t out = 0;
	size_t bytes;
	struct launch l = { .stream = 0, .k = t->kern, .block = { BLOCK, 1 }, .nargs = 3 };
	double flops_mma = 2.0 * 16 * 8 * t->var, probe_s;
	float seed = t->kern == BK_MMA_I8 ? 1.0f : 0.5f, want;
	int rc;

	if (n * sizeof(float) > (r->budget - r->used) / 4)
		n = (r->budget - r->used) / 4 / sizeof(float) / BLOCK * BLOCK;
	if (n < BLOCK)
		return err_set(err, E_BUSY, "not enough free device memory for %u work-items",
		               BLOCK);
	bytes = n * sizeof(float);
	if ((rc = dalloc(r, bytes, &out, err)))
		goto out;
	l.args[0] = bench_arg_buf(out, 0);
	l.args[1] = bench_arg_f32(seed);
	l.args[2] = bench_arg_i32(MMA_ITERS);
	l.grid[0] = (unsigned)(n / BLOCK);
	l.grid[1] = 1;
	if ((rc = probe(r, &l, &probe_s, err)))
		goto out;
	progress(r, 0.2);
	/* warps x iterations x accumulators x 2 M N K */
	if ((rc = timed_batches(r, &l, probe_s,
	                        (double)(n / 32) * MMA_ITERS * BENCH_MMA_CHAINS * flops_mma, res,
	                        err)))
		goto out;
	/*
	 * The analytic answer: every element of A and B is seed (exact in each
	 * input type: 0.5, and 1 for int8), the accumulators start at 0, so each
	 * mma adds K seed^2 to every element, and a lane's sum of its 4 elements
	 * of each of the 8 accumulators is 32 x iterations x K x seed^2: an
	 * integer far below 2^24, exact in FP32 in any order of summation.
	 */
	want = (float)(32.0 * MMA_ITERS * t->var * (double)seed * seed);
	if ((rc = check_out(r, out, n, true, want, false, res, err)))
		goto out;
	snprintf(res->note, sizeof(res->note),
	         "mma.sync m16n8k%d, %llu warps x %d x %d accumulators; checked exact against "
	         "the analytic sum",
	         t->var, n / 32, MMA_ITERS, BENCH_MMA_CHAINS);
out:
	dfree(r, &out, bytes);
	return rc;
}

/* ---- cuBLASLt GEMM (the number a framework sees) ---- */

/* clpeak's n: 2048 + SMs x 256 in [2048, 16384], shrunk to fit; --quick at most 4096 */
#define GEMM_MIN_N   256
#define GEMM_BASE_N  2048
#define GEMM_MAX_N   16384
#define GEMM_QUICK_N 4096
#define GEMM_WS      (256 * MIB)
#define GEMM_PROBES  3
#define GEMM_CHECKS  256
#define GEMM_CHUNK   (16 * MIB)

/*
 * The n of type t's GEMM and its workspace: A, B, C and the workspace
 * within a quarter of the device's memory (clpeak's) and the budget; 0 when
 * not even GEMM_MIN_N fits.
 */
static unsigned
gemm_n(const struct run *r, enum bench_gemm_type t, size_t *ws_bytes)
{
	unsigned long long total = r->d->info.mem_total ? r->d->info.mem_total : r->free_bytes;
	unsigned long long room = total / 4, n;
	size_t in = bench_gemm_in_size(t), out = bench_gemm_out_size(t);

	if (r->budget - r->used < room)
		room = r->budget - r->used;
	*ws_bytes = (size_t)(room / 8 < GEMM_WS ? room / 8 / 256 * 256 : GEMM_WS);
	n = GEMM_BASE_N + (unsigned long long)r->d->info.units * 256;
	if (n > GEMM_MAX_N)
		n = GEMM_MAX_N;
	if (r->o->quick && n > GEMM_QUICK_N)
		n = GEMM_QUICK_N;
	while (n >= GEMM_MIN_N && n * n * (2 * in + out) + *ws_bytes > room)
		n -= 256;
	return n >= GEMM_MIN_N ? (unsigned)n : 0;
}

/* A and B from bench_gemm_value(), C all ones bits (NaN in every output type) */
static int
gemm_fill(struct run *r, enum bench_gemm_type t, unsigned n, const uint64_t buf[3], bool c_only,
          struct err *err)
{
	size_t nn = (size_t)n * n, chunk = GEMM_CHUNK;
	unsigned char *host = xmalloc(chunk);
	int rc = 0;

	for (int m = c_only ? 2 : 0; m < 3 && !rc; m++) {
		size_t es = m < 2 ? bench_gemm_in_size(t) : bench_gemm_out_size(t);
		size_t per = chunk / es;

		if (m == 2)
			memset(host, 0xff, chunk);
		for (size_t first = 0; first < nn && !rc; first += per) {
			size_t count = nn - first < per ? nn - first : per;

			if (m < 2)
				bench_gemm_fill(t, m, first, count, host);
			rc = dv(r, r->d->ops->write(r->d, 0, buf[m], first * es, host, count * es,
			                            true, err));
		}
	}
	free(host);
	return rc;
}

/* runs GEMMs with algorithm algo between markers 0 and 1: the seconds of one in *per */
static int
gemm_time(struct run *r, struct bench_gemm *g, unsigned algo, unsigned runs, double *per,
          struct err *err)
{
	double s;
	int rc;

	if ((rc = mark(r, 0, 0, err)))
		return rc;
	for (unsigned i = 0; i < runs; i++) {
		if (want_stop(r)) {
			dsync(r, 0, NULL);
			return STOPPED;
		}
		if ((rc = dv(r, bench_gemm_run(g, algo, err))))
			return rc;
	}
	if ((rc = mark(r, 0, 1, err)) || (rc = elapsed(r, 0, 1, &s, err)))
		return rc;
	if (s <= 0)
		return err_set(err, E_IO, "the device's markers gave %g s for %u GEMMs", s, runs);
	*per = s / runs;
	return 0;
}

/* timed_batches() with GEMMs: as many as the target takes at per seconds each, in 3 batches */
static int
gemm_batches(struct run *r, struct bench_gemm *g, unsigned algo, double per, double flop,
             struct bench_result *res, struct err *err)
{
	double n = per > 0 ? r->target / per : MAX_LAUNCHES, rates[3];
	unsigned runs, batches, each;
	int rc;

	runs = n < 1 ? 1 : n > MAX_LAUNCHES ? MAX_LAUNCHES : (unsigned)n;
	batches = runs >= 3 ? 3 : 1;
	each = runs / batches;
	if ((rc = mark(r, 0, 0, err)))
		return rc;
	for (unsigned b = 0; b < batches; b++) {
		for (unsigned i = 0; i < each; i++) {
			if (want_stop(r)) {
				dsync(r, 0, NULL);
				return STOPPED;
			}
			if ((rc = dv(r, bench_gemm_run(g, algo, err))))
				return rc;
		}
		if ((rc = mark(r, 0, b + 1, err)))
			return rc;
		progress(r, 0.5 + 0.4 * (b + 1) / batches);
	}
	for (unsigned b = 0; b < batches; b++) {
		double s;

		if ((rc = elapsed(r, b, b + 1, &s, err)))
			return rc;
		if (s <= 0)
			return err_set(err, E_IO, "the device's markers gave %g s for %u GEMMs", s,
			               each);
		rates[b] = flop * each / s / 1e9;
	}
	set_rates(res, rates, batches);
	res->count = flop * each;
	return 0;
}

/* sampled elements of C (the corners first) against the host's in double */
static int
gemm_check(struct run *r, enum bench_gemm_type t, unsigned n, uint64_t c, struct bench_result *res,
           struct err *err)
{
	size_t es = bench_gemm_out_size(t);
	unsigned bad = 0, wi = 0, wj = 0;
	double wgot = 0, wwant = 0, wtol = 0, worst = -1;
	uint64_t x = 0x2545f4914f6cdd1dull;
	unsigned char v[8];
	int rc;

	for (unsigned k = 0; k < GEMM_CHECKS; k++) {
		unsigned i, j;
		double got, want, tol, off;

		if (k < 2) {
			i = j = k ? n - 1 : 0;
		} else {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			i = (unsigned)(x % n);
			j = (unsigned)((x >> 32) % n);
		}
		if ((rc = dv(r, r->d->ops->read(r->d, 0, c, ((size_t)j * n + i) * es, v, es, true,
		                                err))))
			return rc;
		got = bench_gemm_decode(t, v);
		want = bench_gemm_reference(t, n, i, j, &tol);
		off = fabs(got - want);
		if (!isfinite(got) || !(off <= tol)) {
			double how = isfinite(off) && tol > 0 ? off / tol : INFINITY;

			bad++;
			if (how > worst)
				worst = how, wi = i, wj = j, wgot = got, wwant = want, wtol = tol;
		}
	}
	if (bad) {
		res->status = BENCH_WRONG;
		snprintf(res->why, sizeof(res->why),
		         "%u of %u sampled elements of C wrong: C[%u,%u] = %.9g, the host's %.9g "
		         "(tolerance %.3g)",
		         bad, GEMM_CHECKS, wi, wj, wgot, wwant, wtol);
	}
	return 0;
}

static int
run_gemm(struct run *r, const struct test *t, struct bench_result *res, struct err *err)
{
	enum bench_gemm_type ty = (enum bench_gemm_type)t->var;
	const struct bench_dev_info *info = &r->d->info;
	struct bench_gemm *g = NULL;
	uint64_t buf[3] = { 0 }, ws = 0;
	size_t bytes[3] = { 0 }, ws_bytes = 0;
	double per[BENCH_GEMM_ALGOS], first_s, flop;
	unsigned n, n0, nalgo = 0, best = 0, probes = GEMM_PROBES;
	int rc;

	if (ty == BG_FP8 && !strcmp(info->api, "cuda") && info->cc_major &&
	    info->cc_major * 10 + info->cc_minor < 89)
		return err_set(err, E_NOTSUP,
		               "FP8 GEMM needs compute capability 8.9 or later (this is %d.%d)",
		               info->cc_major, info->cc_minor);
	if ((rc = dv(r, bench_gemm_open(r->d, &g, err))))
		return rc;
	n = n0 = gemm_n(r, ty, &ws_bytes);
	if (!n) {
		rc = err_set(err, E_BUSY, "not enough free device memory for a %ux%u %s GEMM",
		             GEMM_MIN_N, GEMM_MIN_N, t->name);
		goto out;
	}
	for (int m = 0; m < 3; m++) {
		bytes[m] =
		        (size_t)n * n * (m < 2 ? bench_gemm_in_size(ty) : bench_gemm_out_size(ty));
		if ((rc = dalloc(r, bytes[m], &buf[m], err)))
			goto out;
	}
	if (ws_bytes && (rc = dalloc(r, ws_bytes, &ws, err)))
		goto out;
	if ((rc = gemm_fill(r, ty, n, buf, false, err)))
		goto out;
	progress(r, 0.1);
	if ((rc = dv(r,
	             bench_gemm_plan(g, ty, n, buf[0], buf[1], buf[2], ws, ws_bytes, &nalgo, err))))
		goto out;
	/*
	 * The heuristic's pick once, as the warm-up: a GEMM longer than a
	 * quarter of the target (FP64 of a GeForce card) makes n smaller, so
	 * that eight candidates and the batch keep to the test's time.
	 */
	if ((rc = gemm_time(r, g, 0, 1, &first_s, err)))
		goto out;
	if (first_s > r->target / 4 && n > GEMM_MIN_N) {
		unsigned m = (unsigned)(n * cbrt(r->target / 4 / first_s)) / 256 * 256;

		n = m < GEMM_MIN_N ? GEMM_MIN_N : m;
		/* the buffers hold n0^2 elements: the first n^2 are the smaller matrices */
		if ((rc = dv(r, bench_gemm_plan(g, ty, n, buf[0], buf[1], buf[2], ws, ws_bytes,
		                                &nalgo, err))) ||
		    (rc = gemm_time(r, g, 0, 1, &first_s, err)))
			goto out;
	}
	if (first_s > r->target / 16)
		probes = 1;
	flop = 2.0 * n * n * n;
	/* every candidate: a warm-up, then probes between markers; the fastest is kept */
	for (unsigned a = 0; a < nalgo; a++) {
		if ((rc = dv(r, bench_gemm_run(g, a, err))) || (rc = dsync(r, 0, err)) ||
		    (rc = gemm_time(r, g, a, probes, &per[a], err)))
			goto out;
		if (per[a] < per[best])
			best = a;
		progress(r, 0.1 + 0.4 * (a + 1) / nalgo);
	}
	/* the result checked is the batch's own: C is NaN before it */
	if ((rc = gemm_fill(r, ty, n, buf, true, err)) ||
	    (rc = gemm_batches(r, g, best, per[best], flop, res, err)) || (rc = dsync(r, 0, err)) ||
	    (rc = gemm_check(r, ty, n, buf[2], res, err)))
		goto out;
	add_extra(res, "heuristic", flop / per[0] / 1e9);
	snprintf(res->note, sizeof(res->note),
	         "%.40s %ux%u%s: the heuristic's #%u of %u, %.2fx its own pick (#1)%s; %u "
	         "sampled elements checked",
	         bench_gemm_version(g), n, n, bench_gemm_trans_a(ty) ? " TN" : "", best + 1, nalgo,
	         per[0] / per[best], n < n0 ? " (n cut to keep to the time)" : "", GEMM_CHECKS);
out:
	bench_gemm_close(g);
	dfree(r, &ws, ws_bytes);
	for (int m = 2; m >= 0; m--)
		dfree(r, &buf[m], bytes[m]);
	return rc;
}

/* ---- BabelStream ---- */

unsigned long long
bench_suite_stream_n(const struct bench_dev_info *info, unsigned long long free_bytes,
                     unsigned long long budget)
{
	unsigned long long n = 1ull << 25, cap;

	/* arrays of at least 4x the last-level cache (STREAM's rule) */
	if (info->l2_bytes && info->l2_bytes * 4 / sizeof(float) > n)
		n = info->l2_bytes * 4 / sizeof(float);
	/* the three in a quarter of free memory, and in the budget */
	cap = free_bytes / 4;
	if (budget < cap)
		cap = budget;
	cap /= 3 * sizeof(float);
	if (n > cap)
		n = cap;
	if (info->max_alloc && n > info->max_alloc / sizeof(float))
		n = info->max_alloc / sizeof(float);
	return n / 1024 * 1024;
}

/* BabelStream's check_solution, replayed on the host one scalar at a time */
struct gold {
	float a, b, c;
};

/* x = y + s * z without contraction, whatever the compiler's -ffp-contract */
static float
add_mul(float y, float s, float z)
{
	volatile float p = s * z;

	return y + p;
}

static bool
near(float got, float want, double tol)
{
	return isfinite(got) && fabs((double)got - want) <= tol * fabs((double)want);
}

struct stream_bad {
	unsigned long long bad[3];
	unsigned long long worst_i;
	int worst_arr;
	float worst_got, worst_want;
	double worst_rel;
};

/*
 * Every element of array arr (a, b or c) against the two replays (plain,
 * and the triad fused as the device's compiler may have it), within tol
 * relative.
 */
static int
check_array(struct run *r, uint64_t buf, unsigned long long n, int arr, float want0, float want1,
            double tol, float *chunk, size_t chunk_n, struct stream_bad *sb, struct err *err)
{
	for (unsigned long long at = 0; at < n; at += chunk_n) {
		size_t m = n - at < chunk_n ? (size_t)(n - at) : chunk_n;
		int rc = dv(r, r->d->ops->read(r->d, 0, buf, at * sizeof(float), chunk,
		                               m * sizeof(float), true, err));

		if (rc)
			return rc;
		for (size_t i = 0; i < m; i++) {
			double rel;

			if (near(chunk[i], want0, tol) || near(chunk[i], want1, tol))
				continue;
			sb->bad[arr]++;
			rel = isfinite(chunk[i])
			              ? fabs((double)chunk[i] - want0) / fabs((double)want0)
			              : INFINITY;
			if (rel > sb->worst_rel || sb->worst_rel < 0) {
				sb->worst_rel = rel;
				sb->worst_i = at + i;
				sb->worst_arr = arr;
				sb->worst_got = chunk[i];
				sb->worst_want = want0;
			}
		}
		if (want_stop(r))
			return STOPPED;
	}
	return 0;
}

static int
run_stream(struct run *r, struct bench_result *res[5], struct err *err)
{
	const struct bench_dev_info *info = &r->d->info;
	unsigned units = info->units ? info->units : 1, blocks = units * 4;
	size_t pbytes = (size_t)blocks * sizeof(float);
	unsigned long long left = r->budget - r->used, n;
	unsigned reps = r->o->stream_reps ? r->o->stream_reps : r->o->quick ? 20 : 100;
	const float s = 0.4f;
	uint64_t a = 0, b = 0, c = 0, partial = 0;
	size_t bytes;
	double *times = NULL, *partials = NULL;
	float *chunk = NULL;
	struct launch l[5];
	struct launch init = {
		.k = BK_STREAM_INIT, .grid = { blocks, 1 }, .block = { BLOCK, 1 }, .nargs = 7
	};
	struct gold g[2] = { { 0.1f, 0.2f, 0.0f }, { 0.1f, 0.2f, 0.0f } };
	struct stream_bad sb = { .worst_rel = -1 };
	double dot = 0, want_dot, tol = 100 * FLT_EPSILON, dot_tol;
	size_t chunk_n = 1024 * 1024;
	int rc;

	/* dot's partial sums beside the three arrays */
	n = bench_suite_stream_n(info, r->free_bytes, left > pbytes ? left - pbytes : 0);
	bytes = n * sizeof(float);
	if (reps < 2)
		reps = 2;
	if (n < 1024) {
		rc = err_set(err, E_BUSY,
		             "not enough free device memory for three arrays of 1024 floats");
		goto out;
	}
	if ((rc = dalloc(r, bytes, &a, err)) || (rc = dalloc(r, bytes, &b, err)) ||
	    (rc = dalloc(r, bytes, &c, err)) || (rc = dalloc(r, pbytes, &partial, err)))
		goto out;
	for (int k = 0; k < 5; k++)
		l[k] = (struct launch){ .k = BK_STREAM_COPY + k,
			                .grid = { blocks, 1 },
			                .block = { BLOCK, 1 } };
	/* dev.h's parameter lists */
	l[0].args[0] = bench_arg_buf(a, 0), l[0].args[1] = bench_arg_buf(c, 0),
	l[0].args[2] = bench_arg_u64(n), l[0].nargs = 3;
	l[1].args[0] = bench_arg_buf(b, 0), l[1].args[1] = bench_arg_buf(c, 0),
	l[1].args[2] = bench_arg_f32(s);
	l[1].args[3] = bench_arg_u64(n), l[1].nargs = 4;
	l[2].args[0] = bench_arg_buf(a, 0), l[2].args[1] = bench_arg_buf(b, 0),
	l[2].args[2] = bench_arg_buf(c, 0);
	l[2].args[3] = bench_arg_u64(n), l[2].nargs = 4;
	l[3].args[0] = bench_arg_buf(a, 0), l[3].args[1] = bench_arg_buf(b, 0),
	l[3].args[2] = bench_arg_buf(c, 0);
	l[3].args[3] = bench_arg_f32(s), l[3].args[4] = bench_arg_u64(n), l[3].nargs = 5;
	l[4].args[0] = bench_arg_buf(a, 0), l[4].args[1] = bench_arg_buf(b, 0),
	l[4].args[2] = bench_arg_buf(partial, 0);
	l[4].args[3] = bench_arg_u64(n), l[4].nargs = 4;
	l[4].block[0] = BENCH_DOT_BLOCK;
	init.args[0] = bench_arg_buf(a, 0), init.args[1] = bench_arg_buf(b, 0),
	init.args[2] = bench_arg_buf(c, 0);
	init.args[3] = bench_arg_f32(0.1f), init.args[4] = bench_arg_f32(0.2f),
	init.args[5] = bench_arg_f32(0.0f);
	init.args[6] = bench_arg_u64(n);
	if ((rc = launch(r, &init, err)) || (rc = dsync(r, 0, err)))
		goto out;

	times = xcalloc((size_t)reps * 5, sizeof(*times));
	for (unsigned rep = 0; rep < reps; rep++) {
		if (want_stop(r)) {
			rc = STOPPED;
			goto out;
		}
		if ((rc = mark(r, 0, 0, err)))
			goto out;
		for (unsigned k = 0; k < 5; k++)
			if ((rc = launch(r, &l[k], err)) || (rc = mark(r, 0, k + 1, err)))
				goto out;
		for (unsigned k = 0; k < 5; k++)
			if ((rc = elapsed(r, k, k + 1, &times[k * reps + rep], err)))
				goto out;
		for (int v = 0; v < 2; v++) {
			g[v].c = g[v].a;
			g[v].b = s * g[v].c;
			g[v].c = g[v].a + g[v].b;
			g[v].a = v ? fmaf(s, g[v].c, g[v].b) : add_mul(g[v].b, s, g[v].c);
		}
		progress(r, 0.8 * (rep + 1) / reps);
	}

	/* the first repetition is discarded (BabelStream) */
	for (unsigned k = 0; k < 5; k++) {
		double wbytes = (double)stream_weight[k] * sizeof(float) * n;
		double *t = &times[k * reps + 1], rates[1], best_t = INFINITY;
		size_t m = reps - 1;

		for (size_t i = 0; i < m; i++) {
			if (t[i] <= 0) {
				rc = err_set(err, E_IO, "the device's markers gave %g s for %s",
				             t[i], tests[11 + k].name);
				goto out;
			}
			if (t[i] < best_t)
				best_t = t[i];
		}
		if (!res[k])
			continue;
		res[k]->best = wbytes / best_t / 1e9;
		res[k]->median = wbytes / median(t, m) / 1e9;
		res[k]->samples = (unsigned)m;
		res[k]->count = wbytes;
		(void)rates;
	}

	/* the last dot: the host adds the partials in double (dev.h) */
	partials = xcalloc(blocks, sizeof(*partials));
	{
		float *pf = xcalloc(blocks, sizeof(*pf));

		rc = dv(r, r->d->ops->read(r->d, 0, partial, 0, pf, pbytes, true, err));
		for (unsigned i = 0; !rc && i < blocks; i++)
			dot += pf[i];
		free(pf);
		if (rc)
			goto out;
	}
	chunk = xmalloc(chunk_n * sizeof(*chunk));
	if ((rc = check_array(r, a, n, 0, g[0].a, g[1].a, tol, chunk, chunk_n, &sb, err)) ||
	    (rc = check_array(r, b, n, 1, g[0].b, g[1].b, tol, chunk, chunk_n, &sb, err)) ||
	    (rc = check_array(r, c, n, 2, g[0].c, g[1].c, tol, chunk, chunk_n, &sb, err)))
		goto out;
	progress(r, 1);

	/*
	 * The dot's float sums: a work-item adds k = n / (blocks x 256) positive
	 * products in turn (relative error at most k eps), a block's tree 8 more
	 * levels, the product's rounding one: twice (k + 9) eps, relative.
	 */
	want_dot = (double)g[0].a * g[0].b * (double)n;
	dot_tol = 2.0 * ((double)n / ((double)blocks * BENCH_DOT_BLOCK) + 10) * FLT_EPSILON;
	if (sb.bad[0] || sb.bad[1] || sb.bad[2]) {
		static const char arr[3] = { 'a', 'b', 'c' };

		for (int k = 0; k < 5; k++) {
			if (!res[k])
				continue;
			res[k]->status = BENCH_WRONG;
			snprintf(
			        res[k]->why, sizeof(res[k]->why),
			        "%llu, %llu, %llu of %llu elements of a, b, c wrong; worst %c[%llu] = "
			        "%.9g, want %.9g (tolerance %g relative)",
			        sb.bad[0], sb.bad[1], sb.bad[2], n, arr[sb.worst_arr], sb.worst_i,
			        (double)sb.worst_got, (double)sb.worst_want, tol);
		}
	} else if (!(fabs(dot - want_dot) <= dot_tol * fabs(want_dot)) && res[4]) {
		res[4]->status = BENCH_WRONG;
		snprintf(res[4]->why, sizeof(res[4]->why),
		         "dot = %.9g, want %.9g (tolerance %.3g relative)", dot, want_dot, dot_tol);
	}
	for (int k = 0; k < 5; k++)
		if (res[k])
			snprintf(
			        res[k]->note, sizeof(res[k]->note),
			        "n = %llu floats (%.1f MiB an array%s), best of %u after a discarded "
			        "first; bytes = %u x 4 x n; checked within %.3g relative",
			        n, (double)bytes / MIB,
			        info->l2_bytes && bytes < 4 * info->l2_bytes ? ", under 4x the L2"
			                                                     : "",
			        reps - 1, stream_weight[k], k == 4 ? dot_tol : tol);
out:
	free(chunk);
	free(partials);
	free(times);
	dfree(r, &partial, pbytes);
	dfree(r, &c, bytes);
	dfree(r, &b, bytes);
	dfree(r, &a, bytes);
	return rc;
}

/* ---- host <-> device (nvbandwidth's method) ---- */

static void
fill_random(void *p, size_t bytes)
{
	uint64_t x = 0x2545f4914f6cdd1dull, w;
	unsigned char *c = p;

	/* xorshift64: random contents defeat memory compression (clpeak) */
	for (size_t i = 0; i < bytes; i += sizeof(w)) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w = x;
		memcpy(c + i, &w, bytes - i < sizeof(w) ? bytes - i : sizeof(w));
	}
}

struct copier {
	enum copy_kind kind;
	size_t bytes;
	void *host[2];          /* [0]: the source of H2D, [1]: the destination of D2H */
	uint64_t dev[2];        /* [0]: H2D's destination, [1]: D2H's source */
	volatile int32_t *flag; /* the spin kernel's, mapped; NULL: no spin */
	uint64_t spin_ns;
	unsigned sm_grid;
};

static bool
copy_h2d(enum copy_kind k)
{
	return k == C_H2D || k == C_H2D_PAGE || k == C_H2D_SM || k == C_BIDIR;
}

static bool
copy_d2h(enum copy_kind k)
{
	return k == C_D2H || k == C_D2H_PAGE || k == C_D2H_SM || k == C_BIDIR;
}

/* queue one copy of direction d2h (0: H2D) on stream */
static int
copy_one(struct run *r, const struct copier *cp, int d2h, int stream, struct err *err)
{
	struct bench_dev *d = r->d;

	if (cp->kind == C_H2D_SM || cp->kind == C_D2H_SM) {
		struct launch l = { .stream = stream,
			            .k = BK_COPY_U4,
			            .grid = { cp->sm_grid, 1 },
			            .block = { BLOCK, 1 },
			            .nargs = 3 };

		l.args[0] = d2h ? bench_arg_buf(cp->dev[1], 0) : bench_arg_host(cp->host[0]);
		l.args[1] = d2h ? bench_arg_host(cp->host[1]) : bench_arg_buf(cp->dev[0], 0);
		l.args[2] = bench_arg_u64(cp->bytes / 16);
		return launch(r, &l, err);
	}
	if (d2h)
		return dv(r, d->ops->read(d, stream, cp->dev[1], 0, cp->host[1], cp->bytes, false,
		                          err));
	return dv(r, d->ops->write(d, stream, cp->dev[0], 0, cp->host[0], cp->bytes, false, err));
}

/*
 * One sample: 4 warm-up copies, then (spin kernel holding the stream) a
 * marker, 16 copies, a marker; the flag released, the stream waited for.
 * Directions of cp on stream 0 (H2D) and 1 (D2H, or alone); secs[0] the
 * H2D's seconds, secs[1] the D2H's, secs[2] the span of both.
 */
static int
copy_sample(struct run *r, struct copier *cp, double secs[3], struct err *err)
{
	int dirs[2], nd = 0, rc = 0;

	if (copy_h2d(cp->kind))
		dirs[nd++] = 0;
	if (copy_d2h(cp->kind))
		dirs[nd++] = 1;
	for (int w = 0; w < COPY_WARMUP; w++)
		for (int i = 0; i < nd; i++)
			if ((rc = copy_one(r, cp, dirs[i], dirs[i], err)))
				return rc;
	if ((rc = dsync(r, -1, err)))
		return rc;
	if (cp->flag)
		*cp->flag = 0;
	for (int i = 0; i < nd; i++) {
		int st = dirs[i];

		if (cp->flag) {
			struct launch l = { .stream = st,
				            .k = BK_SPIN,
				            .grid = { 1, 1 },
				            .block = { 1, 1 },
				            .nargs = 2 };

			l.args[0] = bench_arg_host((void *)(uintptr_t)cp->flag);
			l.args[1] = bench_arg_u64(cp->spin_ns);
			if ((rc = launch(r, &l, err)))
				goto release;
		}
		if ((rc = mark(r, st, 2 * st, err)))
			goto release;
	}
	for (int n = 0; n < COPY_LOOPS; n++) {
		if (want_stop(r)) {
			rc = STOPPED;
			goto release;
		}
		for (int i = 0; i < nd; i++)
			if ((rc = copy_one(r, cp, dirs[i], dirs[i], err)))
				goto release;
	}
	for (int i = 0; i < nd; i++)
		if ((rc = mark(r, dirs[i], 2 * dirs[i] + 1, err)))
			goto release;
release:
	if (cp->flag)
		__atomic_store_n(cp->flag, 1, __ATOMIC_SEQ_CST);
	{
		int src = dsync(r, -1, rc ? NULL : err);

		if (!rc)
			rc = src;
	}
	if (rc)
		return rc;
	secs[0] = secs[1] = 0;
	if (copy_h2d(cp->kind) && (rc = elapsed(r, 0, 1, &secs[0], err)))
		return rc;
	if (copy_d2h(cp->kind) && (rc = elapsed(r, 2, 3, &secs[1], err)))
		return rc;
	secs[2] = secs[0] > secs[1] ? secs[0] : secs[1];
	if (cp->kind == C_BIDIR) {
		double off;

		/* stream 1's start against stream 0's: both share the device's clock */
		if ((rc = elapsed(r, 0, 2, &off, err)))
			return rc;
		secs[2] = (secs[0] > off + secs[1] ? secs[0] : off + secs[1]) - (off < 0 ? off : 0);
	}
	if ((copy_h2d(cp->kind) && secs[0] <= 0) || (copy_d2h(cp->kind) && secs[1] <= 0))
		return err_set(err, E_IO, "the device's markers gave %g s for %d copies",
		               secs[0] > 0 ? secs[1] : secs[0], COPY_LOOPS);
	return 0;
}

static int
run_copy(struct run *r, const struct test *t, struct bench_result *res, struct err *err)
{
	struct bench_dev *d = r->d;
	enum copy_kind k = t->var;
	bool pinned = k != C_H2D_PAGE && k != C_D2H_PAGE, sm = k == C_H2D_SM || k == C_D2H_SM;
	bool spin = pinned && d->info.host_mapped && d->ops->has(d, BK_SPIN);
	unsigned ndir = k == C_BIDIR ? 2 : 1;
	unsigned long long want = (r->o->quick ? 64 : 512) * MIB, cap, host_cap;
	struct copier cp = { .kind = k };
	void *flag_mem = NULL;
	double h2d[COPY_SAMPLES], d2h[COPY_SAMPLES], sum[COPY_SAMPLES];
	unsigned samples = 0;
	int rc = 0;

	if (sm && !(d->info.host_mapped && d->ops->has(d, BK_COPY_U4)))
		return err_set(err, E_NOTSUP, "%s",
		               d->info.host_mapped
		                       ? "no gs_copy_u4 kernel on this device"
		                       : "host memory cannot be mapped for its kernels");
	/* the device's buffers in a quarter of free memory and in the budget */
	cap = r->free_bytes / 4;
	if (r->budget - r->used < cap)
		cap = r->budget - r->used;
	host_cap = r->o->host_limit ? r->o->host_limit : bench_mem_available("/proc") / 4;
	if (host_cap < cap)
		cap = host_cap;
	cap /= ndir;
	if (want > cap)
		want = cap;
	cp.bytes = (size_t)(want / MIB * MIB);
	if (cp.bytes < MIB)
		return err_set(err, E_BUSY, "not enough free memory for a 1 MiB copy buffer");
	cp.spin_ns =
	        (uint64_t)((d->timeout_s > 0 && d->timeout_s < 20 ? d->timeout_s / 2 : 10) * 1e9);
	cp.sm_grid = (d->info.units ? d->info.units : 1) * 8;

	for (unsigned i = 0; i < 2; i++) {
		if (!(i ? copy_d2h(k) : copy_h2d(k)))
			continue;
		if (pinned)
			rc = dv(r, d->ops->host_alloc(d, cp.bytes, sm, &cp.host[i], err));
		else
			cp.host[i] = xmalloc(cp.bytes);
		if (rc || (rc = dalloc(r, cp.bytes, &cp.dev[i], err)))
			goto out;
		fill_random(cp.host[i], cp.bytes);
		/* D2H's source holds the same random data */
		if (i == 1 && (rc = dv(r, d->ops->write(d, 1, cp.dev[1], 0, cp.host[1], cp.bytes,
		                                        true, err))))
			goto out;
	}
	if (spin) {
		if ((rc = dv(r, d->ops->host_alloc(d, 4096, true, &flag_mem, err))))
			goto out;
		memset(flag_mem, 0, 4096);
		cp.flag = flag_mem;
	}
	progress(r, 0.1);
	for (samples = 0; samples < COPY_SAMPLES; samples++) {
		double secs[3];

		if ((rc = copy_sample(r, &cp, secs, err)))
			goto out;
		h2d[samples] = secs[0] > 0 ? (double)cp.bytes * COPY_LOOPS / secs[0] / 1e9 : 0;
		d2h[samples] = secs[1] > 0 ? (double)cp.bytes * COPY_LOOPS / secs[1] / 1e9 : 0;
		sum[samples] = (double)cp.bytes * COPY_LOOPS * ndir / secs[2] / 1e9;
		progress(r, 0.1 + 0.9 * (samples + 1) / COPY_SAMPLES);
	}
	if (k == C_BIDIR) {
		set_rates(res, sum, samples);
		add_extra(res, "h2d", median(h2d, samples));
		add_extra(res, "d2h", median(d2h, samples));
	} else {
		set_rates(res, copy_h2d(k) ? h2d : d2h, samples);
	}
	res->count = (double)cp.bytes * COPY_LOOPS * ndir;
	snprintf(res->note, sizeof(res->note), "%zu MiB x %d copies, median of %d%s%s%s",
	         (size_t)(cp.bytes / MIB), COPY_LOOPS, COPY_SAMPLES,
	         k == C_BIDIR ? "; sum of both directions on streams 0 and 1" : "",
	         sm ? "; gs_copy_u4 kernel through mapped host memory" : "",
	         spin     ? ""
	         : pinned ? "; no spin kernel: enqueue overhead included"
	                  : "; pageable, no spin kernel: staging and enqueue included");
out:
	for (unsigned i = 0; i < 2; i++) {
		dfree(r, &cp.dev[i], cp.bytes);
		if (pinned && cp.host[i])
			d->ops->host_free(d, cp.host[i]);
		else if (!pinned)
			free(cp.host[i]);
	}
	if (flag_mem)
		d->ops->host_free(d, flag_mem);
	return rc;
}

/* ---- launch latency ---- */

static int
run_launch(struct run *r, struct bench_result *res, struct err *err)
{
	unsigned iters = r->o->quick ? 200 : 2000, burst = r->o->quick ? 1000 : 10000;
	struct launch l = { .k = BK_EMPTY, .grid = { 1, 1 }, .block = { 1, 1 }, .nargs = 1 };
	double *us = xcalloc(iters, sizeof(*us)), s;
	int rc = 0;

	l.args[0] = bench_arg_i32(0);
	for (unsigned i = 0; i < 100 + iters; i++) {
		double t0;

		if (want_stop(r)) {
			rc = STOPPED;
			goto out;
		}
		t0 = clock_mono();
		if ((rc = launch(r, &l, err)) || (rc = dsync(r, 0, err)))
			goto out;
		/* the first 100 are warm-ups */
		if (i >= 100)
			us[i - 100] = (clock_mono() - t0) * 1e6;
		if (i % 100 == 99)
			progress(r, 0.5 * (i + 1) / (100 + iters));
	}
	qsort(us, iters, sizeof(*us), cmp_dbl);
	res->best = us[0];
	res->median = median(us, iters);
	res->samples = iters;
	res->count = 1;
	/* nearest rank */
	add_extra(res, "p99", us[(size_t)ceil(0.99 * iters) - 1]);

	/* the throughput: markers around back-to-back launches */
	if ((rc = mark(r, 0, 0, err)))
		goto out;
	for (unsigned i = 0; i < burst; i++) {
		if (want_stop(r)) {
			dsync(r, 0, NULL);
			rc = STOPPED;
			goto out;
		}
		if ((rc = launch(r, &l, err)))
			goto out;
	}
	if ((rc = mark(r, 0, 1, err)) || (rc = elapsed(r, 0, 1, &s, err)))
		goto out;
	add_extra(res, "launch_us", s / burst * 1e6);
	snprintf(res->note, sizeof(res->note),
	         "round trip (launch + sync, host clock) of %u after 100 warm-ups; launch_us: %u "
	         "back-to-back launches between markers",
	         iters, burst);
out:
	free(us);
	return rc;
}

/* ---- the run ---- */

static double
plan_seconds(const struct run *r, const struct test *t)
{
	switch (t->group) {
	case G_FMA:
	case G_MMA:
		return r->target * 1.2 + 0.05;
	case G_GEMM:
		/* the candidates' probes, the batch, the fill and the check */
		return r->target * 2 + 0.2;
	case G_STREAM:
		return r->o->quick ? 0.3 : 1.0; /* the whole group, counted once */
	case G_COPY:
		return (r->o->quick ? 64.0 : 512.0) * MIB * (COPY_WARMUP + COPY_LOOPS) *
		               COPY_SAMPLES / 16e9 +
		       0.1;
	case G_LAUNCH:
		return r->o->quick ? 0.2 : 1.0;
	}
	return 0;
}

static void
unsupported_why(const struct run *r, const struct test *t, char *why, size_t size)
{
	const struct bench_dev_info *info = &r->d->info;

	if (t->group == G_COPY && !info->host_mapped)
		snprintf(why, size, "host memory cannot be mapped for the device's kernels");
	else if (t->group == G_MMA && strcmp(info->api, "cuda"))
		snprintf(why, size, "no tensor-core kernel on %s",
		         info->api[0] ? info->api : "this API");
	else if (t->kern == BK_FMA_F64 && !info->has_fp64)
		snprintf(why, size, "the device has no fp64");
	else if ((t->kern == BK_FMA_F16) && !info->has_fp16)
		snprintf(why, size, "the device has no fp16");
	else
		snprintf(why, size, "%s: the device cannot run it%s", bench_kern_name(t->kern),
		         info->cc_major ? " (its compute capability lacks the instructions)" : "");
}

/* Turn a test's status code into its result. */
static void
finish(struct run *r, struct bench_result *res, int rc, const struct err *e, double t0)
{
	res->seconds = clock_mono() - t0;
	if (rc == 0) {
		/* measured, or wrong as the check left it */
		return;
	}
	res->best = res->median = NAN;
	if (rc == STOPPED) {
		res->status = BENCH_STOPPED;
		snprintf(res->why, sizeof(res->why), "stopped");
		return;
	}
	if (rc == E_NOTSUP) {
		res->status = BENCH_UNSUPPORTED;
	} else if (rc == E_BUSY && !r->lost) {
		res->status = BENCH_SKIPPED;
	} else {
		res->status = BENCH_FAILED;
		if (r->lost && !r->lost_why[0])
			snprintf(r->lost_why, sizeof(r->lost_why), "%.190s",
			         e->msg[0] ? e->msg : status_str(rc));
	}
	snprintf(res->why, sizeof(res->why), "%s", e->msg[0] ? e->msg : status_str(rc));
}

static void
result_init(struct bench_result *res, const struct test *t)
{
	memset(res, 0, sizeof(*res));
	res->name = t->name;
	res->unit = t->unit;
	res->status = BENCH_MEASURED;
	res->best = res->median = NAN;
	res->peak.spec = res->peak.clock = res->peak.link = NAN;
	res->peak.pct_spec = res->peak.pct_clock = res->peak.pct_link = NAN;
}

static bool
supported(struct run *r, const struct test *t)
{
	if (t->group == G_COPY && t->kern == BK_NKERNELS)
		return true;
	/* run_gemm() says itself why it cannot (no library, no such type here) */
	if (t->group == G_GEMM)
		return true;
	return r->d->ops->has(r->d, t->kern);
}

int
bench_suite_run(struct bench_dev *d, const struct bench_suite_opts *opts, struct bench_result *res,
                size_t *nres, struct err *err)
{
	static const struct bench_suite_opts none;
	struct run r = { .d = d, .o = opts ? opts : &none };
	struct bench_result *sres[5] = { 0 };
	unsigned long long total = 0, margin;
	size_t n = 0, stream_last = SIZE_MAX;
	struct err e = ERR_INIT;
	int rc;

	r.pace = (struct bench_pace){ .stop = r.o->stop,
		                      .progress = r.o->progress,
		                      .progress_arg = r.o->progress_arg };
	*nres = 0;
	r.target = r.o->target_s > 0 ? r.o->target_s : r.o->quick ? 0.1 : 0.5;
	rc = dv(&r, d->ops->mem_info(d, &r.free_bytes, &total, &e));
	if (rc) {
		if (r.lost)
			snprintf(r.lost_why, sizeof(r.lost_why), "%.190s", e.msg);
		err_set(err, rc, "%s", e.msg);
	}
	/* never more than free memory less a margin for the driver and others */
	margin = r.free_bytes / 8 < 512 * MIB ? r.free_bytes / 8 : 512 * MIB;
	r.budget = r.free_bytes - margin;
	if (r.o->mem_limit && r.o->mem_limit < r.budget)
		r.budget = r.o->mem_limit;

	/* the last selected of BabelStream's five runs the group; the plan counts it once */
	for (size_t i = 0; i < BENCH_SUITE_MAX; i++) {
		if (!selected(r.o, tests[i].name))
			continue;
		if (tests[i].group != G_STREAM || stream_last == SIZE_MAX)
			r.pace.plan_left += plan_seconds(&r, &tests[i]);
		if (tests[i].group == G_STREAM)
			stream_last = i;
	}
	for (size_t i = 0; i < BENCH_SUITE_MAX; i++) {
		const struct test *t = &tests[i];
		struct bench_result *x;
		double t0 = clock_mono();

		if (!selected(r.o, t->name))
			continue;
		x = &res[n++];
		result_init(x, t);
		if (t->group == G_STREAM) {
			sres[t->var] = x;
			/* the five run together, once the last of them is set up */
			if (i != stream_last)
				continue;
		}
		if (r.lost || r.pace.stopped) {
			for (int k = 0; k < 5; k++) {
				struct bench_result *y = t->group == G_STREAM ? sres[k]
				                         : k                  ? NULL
				                                              : x;

				if (!y)
					continue;
				y->status = r.lost ? BENCH_FAILED : BENCH_STOPPED;
				if (r.lost)
					snprintf(y->why, sizeof(y->why), "device lost: %s",
					         r.lost_why);
				else
					snprintf(y->why, sizeof(y->why), "stopped before it ran");
			}
		} else if (t->group == G_STREAM) {
			bool any = false;

			for (int k = 0; k < 5; k++)
				any |= sres[k] && !d->ops->has(d, BK_STREAM_COPY + k);
			if (any || !d->ops->has(d, BK_STREAM_INIT)) {
				for (int k = 0; k < 5; k++)
					if (sres[k]) {
						sres[k]->status = BENCH_UNSUPPORTED;
						snprintf(
						        sres[k]->why, sizeof(sres[k]->why),
						        "the device cannot run BabelStream's kernels");
					}
			} else {
				r.pace.test = "stream";
				r.pace.cur_plan = plan_seconds(&r, t);
				r.pace.plan_left -= r.pace.cur_plan;
				progress(&r, 0);
				err_clear(&e);
				rc = run_stream(&r, sres, &e);
				for (int k = 0; k < 5; k++)
					if (sres[k])
						finish(&r, sres[k], rc, &e, t0);
			}
			continue;
		} else if (!supported(&r, t)) {
			x->status = BENCH_UNSUPPORTED;
			unsupported_why(&r, t, x->why, sizeof(x->why));
		} else {
			r.pace.test = t->name;
			r.pace.cur_plan = plan_seconds(&r, t);
			r.pace.plan_left -= r.pace.cur_plan;
			progress(&r, 0);
			err_clear(&e);
			switch (t->group) {
			case G_FMA:
				rc = run_fma(&r, t, x, &e);
				break;
			case G_MMA:
				rc = run_mma(&r, t, x, &e);
				break;
			case G_GEMM:
				rc = run_gemm(&r, t, x, &e);
				break;
			case G_COPY:
				rc = run_copy(&r, t, x, &e);
				break;
			default:
				rc = run_launch(&r, x, &e);
				break;
			}
			finish(&r, x, rc, &e, t0);
			progress(&r, 1);
			continue;
		}
		x->seconds = clock_mono() - t0;
	}
	*nres = n;
	if (r.lost) {
		err_set(err, r.lost_rc, "device lost: %s", r.lost_why);
		return r.lost_rc;
	}
	return r.pace.stopped ? 1 : 0;
}
