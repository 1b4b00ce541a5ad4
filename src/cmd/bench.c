/*
 * gpuscope bench matmul: C = A x B in FP32 for square N x N matrices on the
 * CPU, with the textbook triple loop, a cache-blocked vectorised kernel on
 * all cores and the system BLAS (bench/matmul.h), each result checked
 * against the others, each figure held against this CPU's own peak; and on
 * every GPU of bench/dev.h (CUDA devices first, then the OpenCL ones CUDA
 * does not measure) dev.h's naive and tiled kernels, kernel only and end to
 * end, checked against the CPU's result and held against the device's spec
 * sheet and its clock-derived FP32 peak; as a table or JSON (schema
 * gpuscope.bench/1, docs/bench.md).
 */
#include "cmd/cmd.h"

#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/cublaslt.h"
#include "bench/cuda.h"
#include "bench/dev.h"
#include "bench/matmul.h"
#include "bench/opencl.h"
#include "bench/peak.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/err.h"
#include "core/specs.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "fit/fit.h"

#define BENCH_SCHEMA    "gpuscope.bench/1"
#define MIN_SECONDS     0.5 /* each test runs at least this long ... */
#define MIN_RUNS        3   /* ... and at least this many times, after a warm-up */
#define MAX_RUNS        1000
#define MAX_SECONDS     5.0  /* ... but no more runs after this long (one at least) */
#define LONG_RUN        1.0  /* a warm-up longer than this counts as a run */
#define SWEEP_CAP_NAIVE 3.0  /* --sweep: a naive run that would take longer is skipped */
#define SWEEP_CAP       20.0 /* and so is a run of the others that would take longer than this */
#define SAMPLES         256  /* elements checked against double-precision sums */
#define DEFAULT_SIZE    1024
#define MAX_SIZE        16384
#define SWEEP_FIRST     64
#define SWEEP_LAST      8192
#define MAX_SKIP_PCI    64 /* CUDA devices whose OpenCL twin is left out */

#define CORRUPT_ENV "GPUSCOPE_BENCH_CORRUPT" /* tests: a kernel whose read-back is made wrong */

static void
bench_usage(FILE *f)
{
	fputs("usage: gpuscope bench matmul [--size N | --sweep] [--json] [--threads N] "
	      "[--opencl-cpu]\n"
	      "C = A x B, FP32, square N x N, on the CPU: the naive triple loop (one thread), a\n"
	      "cache-blocked vectorised kernel on all CPUs, and the system BLAS's cblas_sgemm\n"
	      "(dlopen: libopenblas.so.0, libblis.so.4, libcblas.so.3, libblas.so.3); every result\n"
	      "checked against the others; GFLOP/s = 2 N^3 / time, best and median of runs after a\n"
	      "warm-up, against this CPU's peak (CPUs x clock x FP32 FMA lanes x 2). On each GPU\n"
	      "(CUDA: libcuda.so.1 or GPUSCOPE_CUDA; OpenCL: libOpenCL.so.1 or GPUSCOPE_OPENCL):\n"
	      "a naive and a tiled kernel, kernel only and end to end, checked against the CPU,\n"
	      "against the spec sheet's and the clock-derived FP32 peak. docs/bench.md tells how\n"
	      "it is measured.\n"
	      "      --size=N        N x N matrices, 1 to 16384 (default 1024)\n"
	      "      --sweep         N = 64, 128, ..., 8192; a naive run that would take over 3 s,\n"
	      "                      or one of the others over 20 s, is skipped, and says so\n"
	      "  -j, --json          one JSON document (schema gpuscope.bench/1, docs/bench.md)\n"
	      "      --threads=N     threads of the blocked kernel and the BLAS (default: the CPUs\n"
	      "                      this process may run on)\n"
	      "      --opencl-cpu    take CPU OpenCL devices (PoCL) too: for tests, and for a\n"
	      "                      machine without a GPU (skipped otherwise)\n"
	      "exit status: 0 every result checked, 1 a result was wrong, 2 usage error,\n"
	      "3 bench could not run (a CUDA or OpenCL call failed); 128 + the signal when stopped\n",
	      f);
}

enum row_status { ROW_MEASURED, ROW_SKIPPED, ROW_UNAVAILABLE, ROW_STOPPED, ROW_FAILED };

static const char *const status_words[] = { "measured", "skipped", "unavailable", "stopped",
	                                    "failed" };

/* The GPU kernels of a device: dev.h's two, and cuBLASLt's FP32 GEMM on CUDA. */
enum gpu_kern { GK_NAIVE, GK_TILED, GK_CUBLAS, GK_NKERNELS };

static const char *const gk_names[GK_NKERNELS] = { "naive", "tiled", "cublas" };
static const enum bench_kern gk_dev[GK_NKERNELS] = { BK_MATMUL_NAIVE, BK_MATMUL_TILED,
	                                             BK_NKERNELS };

struct row {
	size_t n;
	enum bench_kernel kernel; /* a CPU row's */
	int dev;                  /* -1: the CPU; else the index of the device in devs */
	enum gpu_kern gk;         /* a GPU row's kernel */
	bool e2e;                 /* end to end: buffers, copies in, kernel, copy back */
	bool device_clock;        /* timed by the device's markers (GPU kernel only) */
	double host_best;         /* such a row: its best run on the host's clock */
	enum row_status status;
	char reason[320];
	unsigned threads;
	struct bench_timing t;
	struct bench_check sampled; /* against double-precision sums */
	struct bench_check full;    /* every element against the first kernel's result */
	const char *compared_with;  /* that kernel, or NULL (this one is the first) */
	bool ok;
};

/* A GPU's state through the run. */
struct gpu {
	struct bench_dev *dev;
	const struct gpu_spec *spec; /* its row of the spec table, or NULL */
	double spec_gflops;          /* the sheet's FP32, or NAN */
	char spec_how[160];          /* how, or why there is none */
	double peak_gflops;          /* the clock-derived FP32 peak, or NAN: % PEAK is of it */
	char peak_how[224];
	unsigned naive_edge;     /* the naive kernel's blocks: edge x edge */
	unsigned nkern;          /* its rows a size and scope: GK_CUBLAS on CUDA only */
	struct bench_gemm *gemm; /* cuBLASLt on it, or NULL */
	char gemm_why[256];      /* why not */
	int lost;                /* E_LOST or E_TIMEOUT once: nothing more is asked of it */
	char error[256];         /* the call that lost it */
	double last_best[GK_NKERNELS][2];
	size_t last_n[GK_NKERNELS][2];
};

struct bench_run {
	struct gs_config *cfg;
	unsigned threads;
	bool sweep, json, progress;
	struct bench_cpu_peak peak;
	struct bench_blas blas;
	struct row *rows;
	size_t nrows, alloc;
	unsigned errors;
	struct strbuf errs; /* one line per wrong result */
	double last_best[BENCH_NKERNELS];
	size_t last_n[BENCH_NKERNELS];
	unsigned done, total;
	bool opencl_cpu;
	struct bench_devs devs;
	struct gpu *gpu;     /* one per devs.dev */
	unsigned failures;   /* CUDA or OpenCL calls that failed */
	struct strbuf fails; /* one line each */
	const char *corrupt; /* CORRUPT_ENV: the kernel whose read-back is made wrong */
};

static const char *
row_name(const struct row *row)
{
	return row->dev < 0 ? bench_kernel_name(row->kernel) : gk_names[row->gk];
}

static const char *
dev_id(const struct bench_run *r, int d)
{
	return r->devs.dev[d]->info.id;
}

/* "blas", or "tiled on cuda:0 (end to end)": the row in a message */
static const char *
row_label(const struct bench_run *r, const struct row *row, char *buf, size_t size)
{
	if (row->dev < 0)
		return row_name(row);
	snprintf(buf, size, "%s on %s (%s)", row_name(row), dev_id(r, row->dev),
	         row->e2e ? "end to end" : "kernel only");
	return buf;
}

static struct row *
new_row(struct bench_run *r, size_t n, enum bench_kernel k)
{
	struct row *row;

	ALLOC_GROW(r->rows, r->nrows + 1, r->alloc);
	row = &r->rows[r->nrows++];
	memset(row, 0, sizeof(*row));
	row->n = n;
	row->kernel = k;
	row->dev = -1;
	return row;
}

static void
progress(struct bench_run *r, size_t n, const char *what)
{
	if (!r->progress)
		return;
	fprintf(stderr, "\r\033[K  bench matmul: [%u/%u] N=%zu %s ...", r->done + 1, r->total, n,
	        what);
	fflush(stderr);
}

static void
progress_end(struct bench_run *r)
{
	if (r->progress)
		fputs("\r\033[K", stderr);
}

/* A wrong result: its line for stderr, counted. */
static void
record_wrong(struct bench_run *r, struct row *row, const struct bench_check *c, const char *against,
             const float *got, double want)
{
	size_t n = row->n;
	char buf[96];

	r->errors++;
	row->ok = false;
	strbuf_addf(
	        &r->errs,
	        "bench matmul: %s at N=%zu is wrong: %zu of %zu elements checked against %s are "
	        "outside their tolerance (worst C[%zu][%zu] = %.9g, want %.9g, tolerance %.3g)\n",
	        row_label(r, row, buf, sizeof(buf)), n, c->bad, c->checked, against, c->worst_i,
	        c->worst_j, (double)got[c->worst_i * n + c->worst_j], want, c->tolerance);
}
/* Check c (the result of row) against the reference ref (NULL: row is the first). */
static void
check_row(struct bench_run *r, struct row *row, const struct bench_norms *nm, const float *a,
          const float *b, const float *c, const float *ref, const char *ref_name)
{
	size_t n = row->n;

	row->ok = true;
	bench_check_sampled(nm, a, b, c, SAMPLES, &row->sampled);
	if (!row->sampled.ok) {
		double want = 0;

		for (size_t k = 0; k < n; k++)
			want += (double)a[row->sampled.worst_i * n + k] *
			        b[k * n + row->sampled.worst_j];
		record_wrong(r, row, &row->sampled, "double-precision sums", c, want);
	}
	if (ref) {
		row->compared_with = ref_name;
		bench_compare(nm, c, ref, &row->full);
		if (!row->full.ok)
			record_wrong(r, row, &row->full, ref_name, c,
			             ref[row->full.worst_i * n + row->full.worst_j]);
	}
}

/* Should kernel k be skipped at n in a sweep: its run estimated from the last size above the cap?
 */
static bool
over_cap(struct bench_run *r, struct row *row, size_t n, double last_best, size_t last_n,
         double cap)
{
	double scale, est;

	if (!r->sweep || !last_n || !(last_best > 0))
		return false;
	scale = (double)n / (double)last_n;
	est = last_best * scale * scale * scale;
	if (est <= cap)
		return false;
	row->status = ROW_SKIPPED;
	snprintf(row->reason, sizeof(row->reason),
	         "skipped: a run would take about %.0f s (%.3g s at N=%zu, times %.0f), over "
	         "--sweep's %.0f s cap",
	         est, last_best, last_n, scale * scale * scale, cap);
	return true;
}

/* how every kernel is timed (docs/bench.md) */
static const struct bench_plan default_plan = {
	.min_seconds = MIN_SECONDS,
	.min_runs = MIN_RUNS,
	.max_seconds = MAX_SECONDS,
	.long_run = LONG_RUN,
	.max_runs = MAX_RUNS,
};

/* One GPU run for bench_time_fn() */
struct gpu_job {
	struct bench_dev *d;
	unsigned edge; /* blocks of edge x edge work-items */
	enum gpu_kern k;
	size_t n;
	const float *a, *b;
	float *c;
	uint64_t buf[3]; /* kernel only: the loaded A, B, C */
	double *dev_s;   /* kernel only: each run's seconds on the device's clock, warm-up first */
	unsigned ndev_s;
	struct bench_gemm *gemm; /* cublas: the library's handle */
	bool keep_plan, planned; /* cublas: plan once for the loaded buffers (kernel only) */
	int rc;                  /* the failed call's status */
	struct err err;
};

/*
 * cuBLASLt's FP32 GEMM over bufs A, B, C, with the heuristic's own pick
 * (what a framework gets). cuBLASLt is column-major and our matrices
 * row-major: a row-major matrix is its transpose column-major, and C^T =
 * B^T A^T, so B's buffer goes in as its A and A's as its B.
 */
static int
gemm_launch(struct gpu_job *j, const uint64_t buf[3])
{
	unsigned nalgo = 0;
	int rc;

	if (!j->planned) {
		rc = bench_gemm_plan(j->gemm, BG_FP32, (unsigned)j->n, buf[1], buf[0], buf[2], 0, 0,
		                     &nalgo, &j->err);
		if (rc < 0)
			return rc;
		if (!nalgo)
			return err_set(&j->err, E_NOTSUP,
			               "cublasLtMatmulAlgoGetHeuristic: no algorithm for an FP32 "
			               "GEMM of %zu x %zu",
			               j->n, j->n);
		j->planned = j->keep_plan;
	}
	return bench_gemm_run(j->gemm, 0, &j->err);
}

/* Queue the kernel of j on stream 0 over bufs A, B, C: dev.h's 2-D launch, the grid rounded up. */
static int
gpu_launch(struct gpu_job *j, const uint64_t buf[3])
{
	if (j->k == GK_CUBLAS)
		return gemm_launch(j, buf);
	unsigned t = (unsigned)((j->n + j->edge - 1) / j->edge);
	const unsigned grid[2] = { t, t }, block[2] = { j->edge, j->edge };
	const struct bench_arg args[] = {
		bench_arg_buf(buf[0], 0),
		bench_arg_buf(buf[1], 0),
		bench_arg_buf(buf[2], 0),
		bench_arg_i32((int32_t)j->n),
	};

	return j->d->ops->launch(j->d, 0, gk_dev[j->k], grid, block, args, 4, &j->err);
}

/*
 * Kernel only: markers around the launch, the launch, a polled sync. The
 * plan runs on the host's clock (what the runs cost); the device's time
 * between the markers is kept for the figures, so a launch's latency is
 * not in them.
 */
static double
kernel_run(void *arg)
{
	struct gpu_job *j = arg;
	struct bench_dev *d = j->d;
	double t0 = clock_mono(), host, dev = 0;
	int rc;

	rc = d->ops->mark(d, 0, 0, &j->err);
	if (!rc)
		rc = gpu_launch(j, j->buf);
	if (!rc)
		rc = d->ops->mark(d, 0, 1, &j->err);
	if (!rc)
		rc = d->ops->sync(d, 0, &j->err);
	host = clock_mono() - t0;
	if (!rc)
		rc = d->ops->elapsed(d, 0, 1, &dev, &j->err);
	if (rc < 0) {
		j->rc = rc;
		return -1;
	}
	if (j->ndev_s < MAX_RUNS + 1)
		j->dev_s[j->ndev_s++] = dev;
	return host;
}

/*
 * End to end: what a program that multiplies once pays: three buffers
 * made, A and B written, the kernel, C read back (blocking), the buffers
 * freed; on the host's clock.
 */
static double
e2e_run(void *arg)
{
	struct gpu_job *j = arg;
	struct bench_dev *d = j->d;
	size_t bytes = j->n * j->n * sizeof(float);
	uint64_t buf[3] = { 0, 0, 0 };
	unsigned nb = 0;
	double t0 = clock_mono();
	int rc = 0;

	while (nb < 3 && !rc) {
		rc = d->ops->alloc(d, bytes, &buf[nb], &j->err);
		nb += !rc;
	}
	if (!rc)
		rc = d->ops->write(d, 0, buf[0], 0, j->a, bytes, false, &j->err);
	if (!rc)
		rc = d->ops->write(d, 0, buf[1], 0, j->b, bytes, false, &j->err);
	if (!rc)
		rc = gpu_launch(j, buf);
	if (!rc)
		rc = d->ops->read(d, 0, buf[2], 0, j->c, bytes, true, &j->err);
	if (rc < 0 && rc != E_LOST && rc != E_TIMEOUT) {
		struct err ignored = ERR_INIT;

		/* the copies queued must be done before their buffers go */
		d->ops->sync(d, 0, &ignored);
	}
	while (nb > 0)
		d->ops->free(d, buf[--nb]);
	if (rc < 0) {
		j->rc = rc;
		return -1;
	}
	return clock_mono() - t0;
}

static int
cmp_seconds(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * A kernel-only row's figures from the device's clock: the same runs the
 * plan timed (the warm-up among them when it counted). false when a run
 * has no device time (then the host's figures stay).
 */
static bool
device_figures(struct row *row, struct gpu_job *j)
{
	unsigned first = row->t.warmup_counted ? 0 : 1, n = row->t.runs;
	double *s;

	if (!n || j->ndev_s < first + n)
		return false;
	s = xcalloc(n, sizeof(*s));
	memcpy(s, j->dev_s + first, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_seconds);
	row->host_best = row->t.best;
	row->t.best = s[0];
	row->t.median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	row->t.warmup = j->dev_s[0];
	row->device_clock = true;
	free(s);
	return true;
}

/* A call failed for row: its reason and its error line; a lost device is used no more. */
static void
gpu_failed(struct bench_run *r, struct row *row, int rc, const char *why)
{
	struct gpu *g = &r->gpu[row->dev];
	char buf[96];

	row->status = ROW_FAILED;
	str_copy(row->reason, sizeof(row->reason), why);
	r->failures++;
	strbuf_addf(&r->fails, "bench matmul: %s at N=%zu: %s\n",
	            row_label(r, row, buf, sizeof(buf)), row->n, why);
	if ((rc == E_LOST || rc == E_TIMEOUT) && !g->lost) {
		g->lost = rc;
		str_copy(g->error, sizeof(g->error), why);
	}
}

/* The kernel-only buffers of j: made, A and B written. */
static int
load(struct gpu_job *j)
{
	size_t bytes = j->n * j->n * sizeof(float);
	int rc = 0;

	for (unsigned i = 0; i < 3 && !rc; i++)
		rc = j->d->ops->alloc(j->d, bytes, &j->buf[i], &j->err);
	if (!rc)
		rc = j->d->ops->write(j->d, 0, j->buf[0], 0, j->a, bytes, false, &j->err);
	if (!rc)
		rc = j->d->ops->write(j->d, 0, j->buf[1], 0, j->b, bytes, true, &j->err);
	j->rc = rc;
	return rc;
}

static void
unload(struct gpu_job *j)
{
	for (unsigned i = 0; i < 3; i++)
		if (j->buf[i])
			j->d->ops->free(j->d, j->buf[i]);
	memset(j->buf, 0, sizeof(j->buf));
}

/* Whether the device can take row's kernel; else the row says why. */
static bool
gpu_offers(struct bench_run *r, struct row *row)
{
	struct bench_dev *d = r->devs.dev[row->dev];
	enum bench_kern k = gk_dev[row->gk];

	if (row->gk == GK_CUBLAS) {
		if (r->gpu[row->dev].gemm)
			return true;
		row->status = ROW_UNAVAILABLE;
		snprintf(row->reason, sizeof(row->reason), "unavailable: %s",
		         r->gpu[row->dev].gemm_why);
		return false;
	}
	if (row->gk == GK_TILED && d->info.max_block &&
	    d->info.max_block < (size_t)BENCH_TILE * BENCH_TILE) {
		row->status = ROW_UNAVAILABLE;
		snprintf(row->reason, sizeof(row->reason),
		         "unavailable: %s needs blocks of %d x %d work-items, the device takes "
		         "%zu",
		         bench_kern_name(k), BENCH_TILE, BENCH_TILE, d->info.max_block);
		return false;
	}
	if (!d->ops->has(d, k)) {
		row->status = ROW_UNAVAILABLE;
		snprintf(row->reason, sizeof(row->reason),
		         "unavailable: the device does not offer %s (its %s kernels lack it)",
		         bench_kern_name(k), d->info.api);
		return false;
	}
	return true;
}

/*
 * The rows of GPU d at n: each kernel kernel only (the buffers loaded once)
 * and end to end, each result read back into work and checked against ref
 * (the first CPU kernel's; NULL: only the samples). Returns false when
 * stopped.
 */
static bool
bench_gpu(struct bench_run *r, size_t n, size_t d, const float *a, const float *b, float *work,
          const struct bench_norms *nm, const float *ref, const char *ref_name)
{
	struct gpu *g = &r->gpu[d];
	struct bench_dev *dev = g->dev;
	unsigned long long bytes = (unsigned long long)n * n * sizeof(float);
	unsigned long long mfree = 0, mtotal = 0;
	const struct bench_plan plan = default_plan;
	struct gpu_job kjob = {
		.d = dev,
		.n = n,
		.a = a,
		.b = b,
		.c = work,
		.gemm = g->gemm,
		.err = ERR_INIT,
	};
	bool loaded = false, load_tried = false, go_on = true;
	struct err merr = ERR_INIT;
	int mrc = 0;

	kjob.dev_s = xcalloc(MAX_RUNS + 1, sizeof(*kjob.dev_s));
	if (!g->lost) {
		mrc = dev->ops->mem_info(dev, &mfree, &mtotal, &merr);
		if (mrc < 0 && mrc != E_LOST && mrc != E_TIMEOUT)
			mrc = 0, mfree = dev->info.mem_total; /* not told: the total, as OpenCL */
	}
	for (int e2e = 0; e2e < 2 && go_on; e2e++) {
		for (int k = 0; k < (int)g->nkern; k++) {
			struct row *row = new_row(r, n, BENCH_NAIVE);
			struct gpu_job job = kjob;
			char label[64];

			row->dev = (int)d;
			row->gk = (enum gpu_kern)k;
			row->e2e = e2e;
			r->done++;
			if (g->lost) {
				row->status = ROW_FAILED;
				snprintf(row->reason, sizeof(row->reason),
				         "not run: %s was lost (%s)", dev->info.id, g->error);
				continue;
			}
			if (mrc < 0) {
				gpu_failed(r, row, mrc, merr.msg);
				continue;
			}
			if ((mfree && 3 * bytes > mfree) ||
			    (dev->info.max_alloc && bytes > dev->info.max_alloc)) {
				row->status = ROW_SKIPPED;
				snprintf(
				        row->reason, sizeof(row->reason),
				        "skipped: needs 3 buffers of %llu MiB, the device has %llu "
				        "MiB free and takes buffers up to %llu MiB",
				        bytes >> 20, mfree >> 20, dev->info.max_alloc >> 20);
				continue;
			}
			if (!gpu_offers(r, row))
				continue;
			if (over_cap(r, row, n, g->last_best[k][e2e], g->last_n[k][e2e],
			             k == GK_NAIVE ? SWEEP_CAP_NAIVE : SWEEP_CAP))
				continue;
			if (!e2e && !load_tried) {
				load_tried = true;
				loaded = load(&kjob) == 0;
			}
			if (!e2e && !loaded) {
				gpu_failed(r, row, kjob.rc, kjob.err.msg);
				continue;
			}
			memcpy(job.buf, kjob.buf, sizeof(job.buf));
			job.k = (enum gpu_kern)k;
			job.edge = k == GK_TILED ? BENCH_TILE : g->naive_edge;
			job.ndev_s = 0;
			job.keep_plan = !e2e;
			job.planned = false;
			err_clear(&job.err);
			snprintf(label, sizeof(label), "%s %s%s", dev->info.id, row_name(row),
			         e2e ? " end to end" : "");
			progress(r, n, label);
			bench_time_fn(e2e ? e2e_run : kernel_run, &job, cmd_stopped, &plan,
			              &row->t);
			if (row->t.stopped || cmd_stopped()) {
				row->status = ROW_STOPPED;
				str_copy(row->reason, sizeof(row->reason),
				         "stopped before the runs were done");
				go_on = false;
				break;
			}
			if (row->t.failed) {
				gpu_failed(r, row, job.rc, job.err.msg);
				continue;
			}
			if (!e2e && (job.rc = dev->ops->read(dev, 0, kjob.buf[2], 0, work, bytes,
			                                     true, &job.err)) < 0) {
				gpu_failed(r, row, job.rc, job.err.msg);
				continue;
			}
			row->status = ROW_MEASURED;
			g->last_best[k][e2e] = row->t.best;
			g->last_n[k][e2e] = n;
			if (!e2e)
				device_figures(row, &job);
			if (r->corrupt && !strcmp(r->corrupt, row_name(row)) && n > 2)
				work[1 * n + 2] +=
				        1.0f; /* tests only: a wrong element to be caught */
			check_row(r, row, nm, a, b, work, ref, ref_name);
		}
		if (!e2e && loaded)
			unload(&kjob);
	}
	if (load_tried && !loaded && !g->lost)
		unload(&kjob); /* what load() made before it failed */
	free(kjob.dev_s);
	return go_on;
}
/* The GPU rows of one size. */
static unsigned
gpu_rows(const struct bench_run *r)
{
	unsigned rows = 0;

	for (size_t d = 0; d < r->devs.ndev; d++)
		rows += 2 * r->gpu[d].nkern;
	return rows;
}

/* Measure the three kernels at size n. Returns false when stopped. */
static bool
bench_size(struct bench_run *r, size_t n)
{
	unsigned long long need = 4ULL * n * n * sizeof(float), avail;
	float *a = NULL, *b = NULL, *ref = NULL, *work = NULL;
	const char *ref_name = NULL;
	struct bench_norms nm;
	bool go_on = true;
	const struct bench_plan plan = default_plan;

	avail = bench_mem_available(r->cfg->proc_root);
	if (avail && need > avail / 10 * 8) {
		for (int k = 0; k < BENCH_NKERNELS; k++) {
			struct row *row = new_row(r, n, (enum bench_kernel)k);

			row->status = ROW_SKIPPED;
			snprintf(row->reason, sizeof(row->reason),
			         "skipped: needs %llu MiB for 4 matrices, %llu MiB available",
			         need >> 20, avail >> 20);
			r->done++;
		}
		r->done += gpu_rows(r);
		return true;
	}
	a = bench_matrix_alloc(n);
	b = bench_matrix_alloc(n);
	ref = bench_matrix_alloc(n);
	work = bench_matrix_alloc(n);
	if (!a || !b || !ref || !work) {
		for (int k = 0; k < BENCH_NKERNELS; k++) {
			struct row *row = new_row(r, n, (enum bench_kernel)k);

			row->status = ROW_SKIPPED;
			snprintf(row->reason, sizeof(row->reason),
			         "skipped: no memory for 4 matrices of %zu x %zu (%llu MiB)", n, n,
			         need >> 20);
			r->done++;
		}
		r->done += gpu_rows(r);
		goto out;
	}
	bench_matrix_fill(a, n, 1);
	bench_matrix_fill(b, n, 2);
	bench_norms_init(&nm, n, a, b);
	for (int k = 0; k < BENCH_NKERNELS && go_on; k++) {
		enum bench_kernel kern = (enum bench_kernel)k;
		struct row *row = new_row(r, n, kern);
		struct bench_job job = {
			.kernel = kern,
			.n = n,
			.a = a,
			.b = b,
			.c = ref_name ? work : ref,
			.threads = kern == BENCH_NAIVE ? 1 : r->threads,
			.blas = &r->blas,
			.stop = cmd_stopped,
		};

		row->threads = kern == BENCH_BLOCKED ? bench_blocked_threads(n, r->threads)
		               : kern == BENCH_BLAS
		                       ? (r->blas.threads > 0 ? (unsigned)r->blas.threads : 0)
		                       : 1;
		if (kern == BENCH_BLAS && !r->blas.loaded) {
			row->status = ROW_UNAVAILABLE;
			str_copy(row->reason, sizeof(row->reason), r->blas.reason);
			r->done++;
			continue;
		}
		if (over_cap(r, row, n, r->last_best[k], r->last_n[k],
		             kern == BENCH_NAIVE ? SWEEP_CAP_NAIVE : SWEEP_CAP)) {
			r->done++;
			continue;
		}
		progress(r, n, bench_kernel_name(kern));
		bench_time(&job, &plan, &row->t);
		r->done++;
		if (row->t.stopped || cmd_stopped()) {
			row->status = ROW_STOPPED;
			str_copy(row->reason, sizeof(row->reason),
			         "stopped before the runs were done");
			go_on = false;
			break;
		}
		row->status = ROW_MEASURED;
		r->last_best[k] = row->t.best;
		r->last_n[k] = n;
		check_row(r, row, &nm, a, b, job.c, ref_name ? ref : NULL, ref_name);
		if (!ref_name)
			ref_name = bench_kernel_name(kern);
	}
	for (size_t d = 0; d < r->devs.ndev && go_on; d++)
		go_on = bench_gpu(r, n, d, a, b, work, &nm, ref_name ? ref : NULL, ref_name);
	bench_norms_release(&nm);
out:
	bench_matrix_free(a);
	bench_matrix_free(b);
	bench_matrix_free(ref);
	bench_matrix_free(work);
	return go_on;
}

/*
 * What GPU g is held against: the spec sheet's FP32 and the peak its
 * clock gives (units x FP32 operations a clock x the reported maximum
 * clock: bench matmul samples no clock), and the naive kernel's blocks.
 */
static void
gpu_setup(struct gpu *g)
{
	const struct bench_dev_info *in = &g->dev->info;
	size_t nr = 0;

	g->spec = in->cpu ? NULL : gpu_spec_find(in->name, NULL, 0, &nr);
	if (in->cpu) {
		g->spec_gflops = NAN;
		str_copy(g->spec_how, sizeof(g->spec_how),
		         "a CPU device: the spec table is of GPUs");
	} else {
		g->spec_gflops =
		        bench_spec_peak(g->spec, "fma.fp32", g->spec_how, sizeof(g->spec_how));
	}
	g->peak_gflops =
	        bench_clock_peak(in, g->spec, "fma.fp32", 0, g->peak_how, sizeof(g->peak_how));
	/* square blocks as the tiled kernel's, smaller where the device takes fewer */
	g->nkern = strcmp(in->api, "cuda") ? GK_CUBLAS : GK_NKERNELS;
	g->naive_edge = BENCH_TILE;
	while (g->naive_edge > 1 && in->max_block &&
	       (size_t)g->naive_edge * g->naive_edge > in->max_block)
		g->naive_edge /= 2;
}

static double
pct_of_peak(const struct bench_run *r, const struct row *row, double gflops)
{
	double peak = row->dev < 0 ? r->peak.gflops : r->gpu[row->dev].peak_gflops;

	if (!(peak > 0) || !isfinite(gflops))
		return NAN;
	return 100.0 * gflops / peak;
}

static double
pct_of_spec(const struct bench_run *r, const struct row *row, double gflops)
{
	double spec = row->dev < 0 ? NAN : r->gpu[row->dev].spec_gflops;

	if (!(spec > 0) || !isfinite(gflops))
		return NAN;
	return 100.0 * gflops / spec;
}

static void
cell(struct strbuf *sb, double v, int width, int decimals)
{
	if (isfinite(v))
		strbuf_addf(sb, " %*.*f", width, decimals, v);
	else
		strbuf_addf(sb, " %*s", width, "-");
}

/* "cuda:0 NVIDIA H100 (NVIDIA, driver 13.0, compute capability 9.0), 132 SMs, ..." */
static void
gpu_line(struct strbuf *out, const struct gpu *g)
{
	const struct bench_dev_info *in = &g->dev->info;
	bool cuda = !strcmp(in->api, "cuda");

	strbuf_addf(out, "GPU   %s %s (%s", in->id, in->name[0] ? in->name : "(no name)",
	            in->vendor[0] ? in->vendor : in->api);
	if (in->driver[0])
		strbuf_addf(out, ", driver %s", in->driver);
	if (in->cc_major)
		strbuf_addf(out, ", compute capability %d.%d", in->cc_major, in->cc_minor);
	strbuf_addf(out, "), %u %s", in->units,
	            cuda             ? "SMs"
	            : in->units == 1 ? "compute unit"
	                             : "compute units");
	if (in->clock_mhz)
		strbuf_addf(out, ", %u MHz", in->clock_mhz);
	if (in->mem_total)
		strbuf_addf(out, ", %llu MiB", in->mem_total >> 20);
	strbuf_addf(out, "%s\n", in->cpu ? ", a CPU device" : "");
	if (isfinite(g->spec_gflops))
		strbuf_addf(out, "      spec  %s = %.0f GFLOP/s FP32\n", g->spec_how,
		            g->spec_gflops);
	else
		strbuf_addf(out, "      spec  none: %s\n", g->spec_how);
	if (isfinite(g->peak_gflops))
		strbuf_addf(out, "      peak  %s = %.0f GFLOP/s FP32 (%% PEAK is of this)\n",
		            g->peak_how, g->peak_gflops);
	else
		strbuf_addf(out, "      peak  none: %s (%% PEAK is -)\n", g->peak_how);
	if (g->gemm)
		strbuf_addf(out, "      cublas %s, %s\n", bench_gemm_version(g->gemm),
		            bench_gemm_path(g->gemm));
	else if (g->nkern > GK_CUBLAS)
		strbuf_addf(out, "      cublas none: %s\n", g->gemm_why);
	if (g->lost)
		strbuf_addf(out, "      lost: %s\n", g->error);
}

static void
text_out(struct bench_run *r, struct strbuf *out)
{
	const struct bench_cpu_peak *p = &r->peak;

	strbuf_addstr(out, "gpuscope bench matmul: C = A x B, FP32, N x N, row-major, inputs "
	                   "random in [-1, 1)\n");
	strbuf_addf(out, "CPU   %s, %u CPU%s\n", p->model[0] ? p->model : "(model unknown)",
	            p->cpus, p->cpus == 1 ? "" : "s");
	strbuf_addf(out, "      peak %s\n", p->how);
	strbuf_addstr(out, "      (one FMA unit a core counted: a core with two can reach twice "
	                   "this; SMT siblings share one core's units)\n");
	if (r->blas.loaded) {
		strbuf_addf(out, "BLAS  %s, %s", r->blas.name, r->blas.path);
		if (r->blas.corename[0])
			strbuf_addf(out, ", core %s", r->blas.corename);
		if (r->blas.threads > 0)
			strbuf_addf(out, ", %d thread%s", r->blas.threads,
			            r->blas.threads == 1 ? "" : "s");
		strbuf_addch(out, '\n');
		if (r->blas.config[0])
			strbuf_addf(out, "      %s\n", r->blas.config);
	} else {
		strbuf_addf(out, "BLAS  none: %s\n", r->blas.reason);
	}
	for (size_t d = 0; d < r->devs.ndev; d++)
		gpu_line(out, &r->gpu[d]);
	/* an API without a device says why, even beside the other's devices */
	if (r->devs.cuda_reason[0])
		strbuf_addf(out, "GPU   none on CUDA: %s\n", r->devs.cuda_reason);
	if (r->devs.opencl_reason[0])
		strbuf_addf(out, "GPU   none on OpenCL: %s\n", r->devs.opencl_reason);
	strbuf_addch(out, '\n');
	strbuf_addf(out, "%5s  %-20s %7s %10s %12s %8s %7s %5s  %s\n", "SIZE", "KERNEL", "THREADS",
	            "BEST ms", "BEST GFLOP/s", "MEDIAN", "% PEAK", "RUNS", "CHECK");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct row *row = &r->rows[i];
		char name[64];

		if (row->dev < 0)
			str_copy(name, sizeof(name), row_name(row));
		else
			snprintf(name, sizeof(name), "%s %s%s", dev_id(r, row->dev), row_name(row),
			         row->e2e ? " e2e" : "");
		strbuf_addf(out, "%5zu  %-20s", row->n, name);
		if (row->status != ROW_MEASURED) {
			strbuf_addf(out, " %7s  %s\n", "-", row->reason);
			continue;
		}
		if (row->dev >= 0)
			strbuf_addf(out, " %7s", "-");
		else if (row->threads)
			strbuf_addf(out, " %7u", row->threads);
		else
			strbuf_addf(out, " %7s", "?");
		/* a GPU's kernel at a small size takes microseconds */
		cell(out, row->t.best * 1e3, 10,
		     row->t.best < 1e-5   ? 5
		     : row->t.best < 0.01 ? 3
		                          : 1);
		double best = bench_gflops(row->n, row->t.best);
		double med = bench_gflops(row->n, row->t.median);
		cell(out, best, 12, best < 10 ? 2 : 1);
		cell(out, med, 8, med < 10 ? 2 : 1);
		cell(out, pct_of_peak(r, row, best), 7, 1);
		strbuf_addf(out, " %5u  %s", row->t.runs, row->ok ? "ok" : "WRONG");
		if (row->ok && row->compared_with)
			strbuf_addf(out, " (= %s)", row->compared_with);
		strbuf_addch(out, '\n');
	}
	strbuf_addf(
	        out,
	        "\nnaive: the i, j, k loop on one thread, as the compiler made it (no -ffast-math, "
	        "no -march).\nblocked: packed panels, 6 x 16 register tiles, GCC vector "
	        "extensions (the %s copy here).\nblas: cblas_sgemm of the library above.\n"
	        "Each: one warm-up run, then runs until %.1f s and at least %d, none started after "
	        "%.0f s\n(a warm-up over %.0f s counts as the first run); GFLOP/s = 2 N^3 / "
	        "time.\nCheck: every element against the first kernel's result and %d against "
	        "double-precision sums, within 2 N eps |row of A| |column of B|.\n",
	        bench_blocked_isa(), MIN_SECONDS, MIN_RUNS, MAX_SECONDS, LONG_RUN, SAMPLES);
	if (r->devs.ndev)
		strbuf_addf(
		        out,
		        "GPU naive: a work-item per element of C (%s); tiled: %d x %d tiles of "
		        "A and B in\nshared (local) memory (%s); cublas (CUDA): cuBLASLt's FP32 "
		        "GEMM, the heuristic's\nfirst algorithm, no workspace. Kernel only: buffers made "
		        "and A, B written once, each run\ntimed between markers on the "
		        "device's clock (the plan's time on the host's); e2e: buffers\n"
		        "made, A and B written, the kernel, C read back, buffers freed, on "
		        "the host's clock.\nBoth checked against the CPU's result; %% PEAK "
		        "of the clock-derived FP32 peak above.\n",
		        bench_kern_name(BK_MATMUL_NAIVE), BENCH_TILE, BENCH_TILE,
		        bench_kern_name(BK_MATMUL_TILED));
}

static void
json_check(struct fit_jw *jw, const struct row *row)
{
	fit_jw_open(jw, "check", '{');
	fit_jw_bool(jw, "ok", row->ok);
	fit_jw_str(jw, "compared_with", row->compared_with);
	fit_jw_num(jw, "elements_compared", row->compared_with ? (double)row->full.checked : 0, 0);
	fit_jw_num(jw, "elements_wrong", (double)(row->full.bad + row->sampled.bad), 0);
	fit_jw_num(jw, "max_abs_error", row->compared_with ? row->full.max_error : NAN, 9);
	fit_jw_num(jw, "max_error_ratio", row->compared_with ? row->full.max_ratio : NAN, 6);
	fit_jw_num(jw, "sampled", (double)row->sampled.checked, 0);
	fit_jw_num(jw, "sampled_max_abs_error", row->sampled.max_error, 9);
	fit_jw_num(jw, "sampled_max_error_ratio", row->sampled.max_ratio, 6);
	fit_jw_close(jw, '}');
}

static void
json_device(struct fit_jw *jw, const struct gpu *g)
{
	const struct bench_dev_info *in = &g->dev->info;
	char cc[16];

	snprintf(cc, sizeof(cc), "%d.%d", in->cc_major, in->cc_minor);
	fit_jw_open(jw, NULL, '{');
	fit_jw_str(jw, "id", in->id);
	fit_jw_str(jw, "api", in->api);
	fit_jw_str(jw, "name", in->name);
	fit_jw_str(jw, "vendor", in->vendor[0] ? in->vendor : NULL);
	fit_jw_str(jw, "uuid", in->uuid[0] ? in->uuid : NULL);
	fit_jw_str(jw, "pci_bus_id", in->pci_bus_id[0] ? in->pci_bus_id : NULL);
	fit_jw_str(jw, "driver", in->driver[0] ? in->driver : NULL);
	fit_jw_str(jw, "compute_capability", in->cc_major ? cc : NULL);
	fit_jw_bool(jw, "cpu_device", in->cpu);
	fit_jw_num(jw, "units", in->units, 0);
	fit_jw_num(jw, "clock_mhz", in->clock_mhz ? in->clock_mhz : NAN, 0);
	fit_jw_num(jw, "memory_bytes", in->mem_total ? (double)in->mem_total : NAN, 0);
	fit_jw_num(jw, "max_buffer_bytes", in->max_alloc ? (double)in->max_alloc : NAN, 0);
	fit_jw_num(jw, "tile", BENCH_TILE, 0);
	fit_jw_num(jw, "naive_block", g->naive_edge, 0);
	fit_jw_str(jw, "spec_row", g->spec ? g->spec->name : NULL);
	fit_jw_num(jw, "spec_gflops", g->spec_gflops, 1);
	fit_jw_str(jw, "spec_derivation", g->spec_how);
	fit_jw_num(jw, "peak_gflops", g->peak_gflops, 1);
	fit_jw_str(jw, "peak_derivation", g->peak_how);
	fit_jw_str(jw, "cublaslt", g->gemm ? bench_gemm_version(g->gemm) : NULL);
	fit_jw_str(jw, "cublaslt_library", g->gemm ? bench_gemm_path(g->gemm) : NULL);
	fit_jw_str(jw, "cublaslt_reason", g->gemm || g->nkern <= GK_CUBLAS ? NULL : g->gemm_why);
	fit_jw_str(jw, "error", g->lost ? g->error : NULL);
	fit_jw_close(jw, '}');
}

static void
json_out(struct bench_run *r, struct strbuf *out, int stopped)
{
	const struct bench_cpu_peak *p = &r->peak;
	struct fit_jw jw;
	struct strbuf why = STRBUF_INIT;
	bool measured = false;

	fit_jw_begin(&jw, out);
	fit_jw_str(&jw, "schema", BENCH_SCHEMA);
	fit_jw_str(&jw, "test", "matmul");
	fit_jw_str(&jw, "precision", "fp32");
	fit_jw_open(&jw, "method", '{');
	fit_jw_num(&jw, "warmup_runs", 1, 0);
	fit_jw_num(&jw, "min_seconds", MIN_SECONDS, 1);
	fit_jw_num(&jw, "min_runs", MIN_RUNS, 0);
	fit_jw_num(&jw, "max_seconds", MAX_SECONDS, 1);
	fit_jw_num(&jw, "warmup_counted_over_seconds", LONG_RUN, 1);
	fit_jw_num(&jw, "sweep_cap_seconds_naive", r->sweep ? SWEEP_CAP_NAIVE : NAN, 1);
	fit_jw_num(&jw, "sweep_cap_seconds", r->sweep ? SWEEP_CAP : NAN, 1);
	fit_jw_num(&jw, "check_samples", SAMPLES, 0);
	fit_jw_close(&jw, '}');
	fit_jw_open(&jw, "cpu", '{');
	fit_jw_str(&jw, "model", p->model[0] ? p->model : NULL);
	fit_jw_num(&jw, "cpus", p->cpus, 0);
	fit_jw_num(&jw, "clock_mhz", p->mhz > 0 ? p->mhz : NAN, 3);
	fit_jw_str(&jw, "clock_source", p->clock_source[0] ? p->clock_source : NULL);
	fit_jw_str(&jw, "isa", p->isa);
	fit_jw_num(&jw, "fp32_lanes", p->lanes, 0);
	fit_jw_num(&jw, "peak_gflops", p->gflops > 0 ? p->gflops : NAN, 3);
	fit_jw_str(&jw, "peak_derivation", p->how);
	fit_jw_str(&jw, "blocked_isa", bench_blocked_isa());
	fit_jw_close(&jw, '}');
	fit_jw_open(&jw, "blas", '{');
	fit_jw_bool(&jw, "available", r->blas.loaded);
	fit_jw_str(&jw, "name", r->blas.loaded ? r->blas.name : NULL);
	fit_jw_str(&jw, "library", r->blas.loaded && r->blas.path[0] ? r->blas.path : NULL);
	fit_jw_str(&jw, "config", r->blas.config[0] ? r->blas.config : NULL);
	fit_jw_str(&jw, "corename", r->blas.corename[0] ? r->blas.corename : NULL);
	fit_jw_num(&jw, "threads", r->blas.threads > 0 ? r->blas.threads : NAN, 0);
	fit_jw_str(&jw, "reason", r->blas.loaded ? NULL : r->blas.reason);
	fit_jw_close(&jw, '}');
	fit_jw_open(&jw, "gpu", '{');
	for (size_t i = 0; i < r->nrows; i++)
		measured |= r->rows[i].dev >= 0 && r->rows[i].status == ROW_MEASURED;
	fit_jw_bool(&jw, "measured", measured);
	if (!r->devs.ndev)
		strbuf_addf(&why, "CUDA: %s; OpenCL: %s", r->devs.cuda_reason,
		            r->devs.opencl_reason);
	fit_jw_str(&jw, "reason", r->devs.ndev ? NULL : why.buf);
	fit_jw_str(&jw, "cuda_reason", r->devs.cuda_reason[0] ? r->devs.cuda_reason : NULL);
	fit_jw_str(&jw, "opencl_reason", r->devs.opencl_reason[0] ? r->devs.opencl_reason : NULL);
	fit_jw_bool(&jw, "opencl_cpu", r->opencl_cpu);
	fit_jw_open(&jw, "devices", '[');
	for (size_t d = 0; d < r->devs.ndev; d++)
		json_device(&jw, &r->gpu[d]);
	fit_jw_close(&jw, ']');
	fit_jw_close(&jw, '}');
	fit_jw_open(&jw, "results", '[');
	for (size_t i = 0; i < r->nrows; i++) {
		const struct row *row = &r->rows[i];
		bool m = row->status == ROW_MEASURED;
		double best = m ? bench_gflops(row->n, row->t.best) : NAN;

		fit_jw_open(&jw, NULL, '{');
		fit_jw_num(&jw, "size", (double)row->n, 0);
		fit_jw_str(&jw, "kernel", row_name(row));
		fit_jw_str(&jw, "device", row->dev >= 0 ? dev_id(r, row->dev) : "cpu");
		fit_jw_str(&jw, "scope", row->e2e ? "end_to_end" : "kernel");
		fit_jw_str(&jw, "status", status_words[row->status]);
		fit_jw_str(&jw, "reason", m ? NULL : row->reason);
		fit_jw_str(&jw, "clock", !m ? NULL : row->device_clock ? "device" : "host");
		fit_jw_num(&jw, "threads", m && row->threads ? row->threads : NAN, 0);
		fit_jw_num(&jw, "runs", m ? row->t.runs : NAN, 0);
		fit_jw_num(&jw, "warmup_seconds", m ? row->t.warmup : NAN, 9);
		if (m)
			fit_jw_bool(&jw, "warmup_counted", row->t.warmup_counted);
		else
			fit_jw_null(&jw, "warmup_counted");
		fit_jw_num(&jw, "best_seconds", m ? row->t.best : NAN, 9);
		fit_jw_num(&jw, "median_seconds", m ? row->t.median : NAN, 9);
		fit_jw_num(&jw, "host_best_seconds", m && row->device_clock ? row->host_best : NAN,
		           9);
		fit_jw_num(&jw, "best_gflops", best, 3);
		fit_jw_num(&jw, "median_gflops", m ? bench_gflops(row->n, row->t.median) : NAN, 3);
		fit_jw_num(&jw, "percent_of_peak", pct_of_peak(r, row, best), 2);
		fit_jw_num(&jw, "percent_of_spec", pct_of_spec(r, row, best), 2);
		if (m)
			json_check(&jw, row);
		else
			fit_jw_null(&jw, "check");
		fit_jw_close(&jw, '}');
	}
	fit_jw_close(&jw, ']');
	fit_jw_num(&jw, "errors", r->errors, 0);
	fit_jw_num(&jw, "failures", r->failures, 0);
	fit_jw_bool(&jw, "stopped", stopped != 0);
	fit_jw_end(&jw);
	strbuf_release(&why);
}

/* The devices as the suite opens them: CUDA's, then OpenCL's less those CUDA measures. */
static void
open_gpus(struct bench_run *r)
{
	const char *skip[MAX_SKIP_PCI];
	size_t nskip = 0;

	bench_cuda_open(&r->devs, NULL);
	for (size_t i = 0; i < r->devs.ndev && nskip + 1 < MAX_SKIP_PCI; i++)
		if (r->devs.dev[i]->info.pci_bus_id[0])
			skip[nskip++] = r->devs.dev[i]->info.pci_bus_id;
	skip[nskip] = NULL;
	bench_cl_devs_open(&r->devs, NULL, r->opencl_cpu, skip);
	r->gpu = xcalloc(r->devs.ndev ? r->devs.ndev : 1, sizeof(*r->gpu));
	for (size_t d = 0; d < r->devs.ndev; d++) {
		struct gpu *g = &r->gpu[d];
		struct err err = ERR_INIT;

		g->dev = r->devs.dev[d];
		gpu_setup(g);
		if (g->nkern > GK_CUBLAS && bench_gemm_open(g->dev, &g->gemm, &err) < 0) {
			g->gemm = NULL;
			str_copy(g->gemm_why, sizeof(g->gemm_why), err.msg);
		}
	}
}

int
cmd_bench_matmul(int argc, char **argv, struct gs_config *cfg)
{
	enum { OPT_SIZE = 0x100, OPT_SWEEP, OPT_THREADS, OPT_OPENCL_CPU };
	static const struct option opts[] = {
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "sweep", no_argument, NULL, OPT_SWEEP },
		{ "json", no_argument, NULL, 'j' },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "opencl-cpu", no_argument, NULL, OPT_OPENCL_CPU },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_run r = {
		.cfg = cfg,
		.errs = STRBUF_INIT,
		.fails = STRBUF_INIT,
	};
	struct strbuf out = STRBUF_INIT;
	unsigned long size = 0, threads = 0;
	int c, rc = EXIT_OK, stopped;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jh", opts, NULL)) != -1) {
		switch (c) {
		case OPT_SIZE:
			if (cmd_parse_count("--size", optarg, 1, MAX_SIZE, &size) < 0)
				return EXIT_USAGE;
			break;
		case OPT_SWEEP:
			r.sweep = true;
			break;
		case 'j':
			r.json = true;
			break;
		case OPT_THREADS:
			if (cmd_parse_count("--threads", optarg, 1, 4096, &threads) < 0)
				return EXIT_USAGE;
			break;
		case OPT_OPENCL_CPU:
			r.opencl_cpu = true;
			break;
		case 'h':
			bench_usage(stdout);
			return EXIT_OK;
		case ':':
			cmd_error("option '%s' needs a value (see 'gpuscope bench --help')",
			          argv[optind - 1]);
			return EXIT_USAGE;
		default:
			cmd_error("unknown option '%s' for bench (see 'gpuscope bench --help')",
			          argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		cmd_error("bench needs a test: matmul (the others of issue 16 are not built yet); "
		          "see 'gpuscope bench --help'");
		return EXIT_USAGE;
	}
	if (strcmp(argv[optind], "matmul")) {
		cmd_error("'%s' is not a bench test (tests: matmul); see 'gpuscope bench --help'",
		          argv[optind]);
		return EXIT_USAGE;
	}
	if (optind + 1 < argc) {
		cmd_error("unexpected argument '%s'; see 'gpuscope bench --help'",
		          argv[optind + 1]);
		return EXIT_USAGE;
	}
	if (size && r.sweep) {
		cmd_error("--size and --sweep exclude each other");
		return EXIT_USAGE;
	}

	/* Ctrl-C from here on: the kernels return, the table shows what was done */
	cmd_stop_on_signals();
	cmd_stop_feed(NULL);
	r.threads = threads ? (unsigned)threads : bench_cpus();
	r.progress = isatty(STDERR_FILENO);
	bench_cpu_peak_read(cfg->proc_root, cfg->sysfs_root, bench_cpus(), &r.peak);
	bench_blas_open(&r.blas, NULL, r.threads);
	r.corrupt = getenv(CORRUPT_ENV);
	open_gpus(&r);
	if (r.sweep) {
		for (size_t n = SWEEP_FIRST; n <= SWEEP_LAST; n *= 2)
			r.total += BENCH_NKERNELS + gpu_rows(&r);
		for (size_t n = SWEEP_FIRST; n <= SWEEP_LAST; n *= 2)
			if (!bench_size(&r, n))
				break;
	} else {
		r.total = BENCH_NKERNELS + gpu_rows(&r);
		bench_size(&r, size ? size : DEFAULT_SIZE);
	}
	progress_end(&r);
	stopped = cmd_stopped();
	if (r.json)
		json_out(&r, &out, stopped);
	else
		text_out(&r, &out);
	if (stopped && !r.json)
		strbuf_addf(&out,
		            "\nstopped by signal %d before the end: the rows above are what "
		            "was measured\n",
		            stopped);
	if (fwrite(out.buf, 1, out.len, stdout) != out.len || fflush(stdout)) {
		cmd_error("cannot write the output");
		rc = EXIT_RUNTIME;
	}
	strbuf_addbuf(&r.errs, &r.fails);
	if (r.errs.len) {
		char *line = r.errs.buf;

		for (char *nl; (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = '\0';
			cmd_error("%s", line);
		}
	}
	if (rc == EXIT_OK && r.errors)
		rc = EXIT_PROBLEMS;
	else if (rc == EXIT_OK && r.failures)
		rc = EXIT_RUNTIME;
	if (stopped)
		rc = 128 + stopped;
	bench_blas_close(&r.blas);
	for (size_t d = 0; d < r.devs.ndev; d++)
		if (r.gpu[d].gemm)
			bench_gemm_close(r.gpu[d].gemm);
	bench_devs_close(&r.devs);
	free(r.gpu);
	free(r.rows);
	strbuf_release(&r.errs);
	strbuf_release(&r.fails);
	strbuf_release(&out);
	return rc;
}
