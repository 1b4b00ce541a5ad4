/*
 * gpuscope bench matmul: C = A x B in FP32 for square N x N matrices on the
 * CPU, with the textbook triple loop, a cache-blocked vectorised kernel on
 * all cores and the system BLAS (bench/matmul.h), each result checked
 * against the others, each figure held against this CPU's own peak; as a
 * table or JSON (schema gpuscope.bench/1, docs/bench.md); and on every
 * OpenCL GPU (bench/opencl.h) a naive and a tiled kernel, kernel only and
 * end to end, checked against the CPU's result. CUDA is not built yet.
 */
#include "cmd/cmd.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/matmul.h"
#include "bench/opencl.h"
#include "core/err.h"
#include "core/config.h"
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
	      "warm-up, against this CPU's peak (CPUs x clock x FP32 FMA lanes x 2). On each OpenCL\n"
	      "GPU (libOpenCL.so.1, or GPUSCOPE_OPENCL): a naive and a tiled kernel, kernel only and\n"
	      "end to end, checked against the CPU. docs/bench.md tells how it is measured.\n"
	      "      --size=N        N x N matrices, 1 to 16384 (default 1024)\n"
	      "      --sweep         N = 64, 128, ..., 8192; a naive run that would take over 3 s,\n"
	      "                      or one of the others over 20 s, is skipped, and says so\n"
	      "  -j, --json          one JSON document (schema gpuscope.bench/1, docs/bench.md)\n"
	      "      --threads=N     threads of the blocked kernel and the BLAS (default: the CPUs\n"
	      "                      this process may run on)\n"
	      "      --opencl-cpu    take CPU OpenCL devices (PoCL) too: for tests, and for a\n"
	      "                      machine without a GPU (skipped otherwise)\n"
	      "exit status: 0 every result checked, 1 a result was wrong, 2 usage error,\n"
	      "3 bench could not run (an OpenCL call failed); 128 + the signal when stopped\n",
	      f);
}

enum row_status { ROW_MEASURED, ROW_SKIPPED, ROW_UNAVAILABLE, ROW_STOPPED, ROW_FAILED };

static const char *const status_words[] = { "measured", "skipped", "unavailable", "stopped",
	                                    "failed" };

struct row {
	size_t n;
	enum bench_kernel kernel; /* a CPU row's */
	int dev;                  /* -1: the CPU; else the index of the OpenCL device */
	enum bench_cl_kernel clk; /* an OpenCL row's kernel */
	bool e2e;                 /* end to end: buffers, copies in, kernel, copy back */
	enum row_status status;
	char reason[320];
	unsigned threads;
	struct bench_timing t;
	struct bench_check sampled; /* against double-precision sums */
	struct bench_check full;    /* every element against the first kernel's result */
	const char *compared_with;  /* that kernel, or NULL (this one is the first) */
	bool ok;
};

/* An OpenCL device's state through the run. */
struct gpu {
	struct bench_cl_ctx *ctx; /* NULL: it could not be set up */
	char error[400];          /* why not */
	double last_best[BENCH_CL_NKERNELS][2];
	size_t last_n[BENCH_CL_NKERNELS][2];
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
	struct bench_cl cl;
	struct gpu *gpu;     /* one per cl.dev */
	unsigned failures;   /* OpenCL calls that failed */
	struct strbuf fails; /* one line each */
	struct strbuf logs;  /* build logs, printed as they are */
	const char *corrupt; /* CORRUPT_ENV: the kernel whose read-back is made wrong */
};

static const char *
row_name(const struct row *row)
{
	return row->dev < 0 ? bench_kernel_name(row->kernel) : bench_cl_kernel_name(row->clk);
}

/* "blas", or "tiled on opencl:0 (end to end)": the row in a message */
static const char *
row_label(const struct row *row, char *buf, size_t size)
{
	if (row->dev < 0)
		return row_name(row);
	snprintf(buf, size, "%s on opencl:%d (%s)", row_name(row), row->dev,
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
	        row_label(row, buf, sizeof(buf)), n, c->bad, c->checked, against, c->worst_i,
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

/* One OpenCL run for bench_time_fn() */
struct gpu_job {
	struct bench_cl_ctx *ctx;
	enum bench_cl_kernel k;
	bool e2e;
	size_t n;
	const float *a, *b;
	float *c;
	struct err err;
};

static double
gpu_run(void *arg)
{
	struct gpu_job *j = arg;

	if (j->e2e)
		return bench_cl_run_e2e(j->ctx, j->k, j->n, j->a, j->b, j->c, &j->err);
	return bench_cl_run_kernel(j->ctx, j->k, &j->err);
}

/* An OpenCL call failed for row: its reason and its error line. */
static void
gpu_failed(struct bench_run *r, struct row *row, const char *why)
{
	char buf[96];

	row->status = ROW_FAILED;
	str_copy(row->reason, sizeof(row->reason), why);
	r->failures++;
	strbuf_addf(&r->fails, "bench matmul: %s at N=%zu: %s\n", row_label(row, buf, sizeof(buf)),
	            row->n, why);
}

/* how every kernel is timed (docs/bench.md) */
static const struct bench_plan default_plan = {
	.min_seconds = MIN_SECONDS,
	.min_runs = MIN_RUNS,
	.max_seconds = MAX_SECONDS,
	.long_run = LONG_RUN,
	.max_runs = MAX_RUNS,
};

/*
 * The OpenCL rows of device d at n: each kernel kernel only (the buffers
 * loaded once) and end to end, each result checked against ref (the first
 * CPU kernel's; NULL: only the samples). work takes the results. Returns
 * false when stopped.
 */
static bool
bench_gpu(struct bench_run *r, size_t n, size_t d, const float *a, const float *b, float *work,
          const struct bench_norms *nm, const float *ref, const char *ref_name)
{
	const struct bench_cl_device *dev = &r->cl.dev[d];
	struct gpu *g = &r->gpu[d];
	unsigned long long bytes = (unsigned long long)n * n * sizeof(float);
	bool loaded = false, load_tried = false;
	const struct bench_plan plan = default_plan;
	struct err lerr = ERR_INIT;

	for (int e2e = 0; e2e < 2; e2e++) {
		for (int k = 0; k < BENCH_CL_NKERNELS; k++) {
			struct row *row = new_row(r, n, BENCH_NAIVE);
			struct gpu_job job = {
				.ctx = g->ctx,
				.k = (enum bench_cl_kernel)k,
				.e2e = e2e,
				.n = n,
				.a = a,
				.b = b,
				.c = work,
				.err = ERR_INIT,
			};
			char label[64];

			row->dev = (int)d;
			row->clk = (enum bench_cl_kernel)k;
			row->e2e = e2e;
			r->done++;
			if (!g->ctx) {
				row->status = ROW_FAILED;
				str_copy(row->reason, sizeof(row->reason), g->error);
				continue;
			}
			if ((dev->global_mem && 3 * bytes > dev->global_mem) ||
			    (dev->max_alloc && bytes > dev->max_alloc)) {
				row->status = ROW_SKIPPED;
				snprintf(
				        row->reason, sizeof(row->reason),
				        "skipped: needs 3 buffers of %llu MiB, the device has %llu "
				        "MiB and takes buffers up to %llu MiB",
				        bytes >> 20, dev->global_mem >> 20, dev->max_alloc >> 20);
				continue;
			}
			if (over_cap(r, row, n, g->last_best[k][e2e], g->last_n[k][e2e],
			             k == BENCH_CL_NAIVE ? SWEEP_CAP_NAIVE : SWEEP_CAP))
				continue;
			if (!e2e && !load_tried) {
				load_tried = true;
				loaded = bench_cl_load(g->ctx, n, a, b, &lerr) == 0;
			}
			if (!e2e && !loaded) {
				gpu_failed(r, row, lerr.msg);
				continue;
			}
			snprintf(label, sizeof(label), "opencl:%zu %s%s", d, row_name(row),
			         e2e ? " end to end" : "");
			progress(r, n, label);
			bench_time_fn(gpu_run, &job, cmd_stopped, &plan, &row->t);
			if (row->t.stopped || cmd_stopped()) {
				row->status = ROW_STOPPED;
				str_copy(row->reason, sizeof(row->reason),
				         "stopped before the runs were done");
				bench_cl_unload(g->ctx);
				return false;
			}
			if (row->t.failed) {
				gpu_failed(r, row, job.err.msg);
				continue;
			}
			if (!e2e && bench_cl_read(g->ctx, work, &job.err) < 0) {
				gpu_failed(r, row, job.err.msg);
				continue;
			}
			row->status = ROW_MEASURED;
			g->last_best[k][e2e] = row->t.best;
			g->last_n[k][e2e] = n;
			if (r->corrupt && !strcmp(r->corrupt, row_name(row)) && n > 2)
				work[1 * n + 2] +=
				        1.0f; /* tests only: a wrong element to be caught */
			check_row(r, row, nm, a, b, work, ref, ref_name);
		}
		if (!e2e && loaded)
			bench_cl_unload(g->ctx);
	}
	return true;
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
		r->done += 2 * BENCH_CL_NKERNELS * (unsigned)r->cl.ndev;
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
		r->done += 2 * BENCH_CL_NKERNELS * (unsigned)r->cl.ndev;
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
	for (size_t d = 0; d < r->cl.ndev && go_on; d++)
		go_on = bench_gpu(r, n, d, a, b, work, &nm, ref_name ? ref : NULL, ref_name);
	bench_norms_release(&nm);
out:
	bench_matrix_free(a);
	bench_matrix_free(b);
	bench_matrix_free(ref);
	bench_matrix_free(work);
	return go_on;
}

/* Why an OpenCL device has no peak here, in buf */
static const char *
gpu_peak_reason(const struct bench_cl_device *dev, char *buf, size_t size)
{
	snprintf(buf, size,
	         "unknown: OpenCL tells %u compute units at %u MHz, but not how many FP32 lanes a "
	         "compute unit has (it differs by vendor and generation), so none is derived",
	         dev->compute_units, dev->clock_mhz);
	return buf;
}

static double
pct_of_peak(const struct bench_run *r, const struct row *row, double gflops)
{
	if (row->dev >= 0 || !(r->peak.gflops > 0) || !isfinite(gflops))
		return NAN;
	return 100.0 * gflops / r->peak.gflops;
}

static void
cell(struct strbuf *sb, double v, int width, int decimals)
{
	if (isfinite(v))
		strbuf_addf(sb, " %*.*f", width, decimals, v);
	else
		strbuf_addf(sb, " %*s", width, "-");
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
	if (!r->cl.ndev)
		strbuf_addf(out, "GPU   none: %s; CUDA is not built yet\n", r->cl.reason);
	for (size_t d = 0; d < r->cl.ndev; d++) {
		const struct bench_cl_device *dev = &r->cl.dev[d];
		char buf[256];

		strbuf_addf(out,
		            "GPU   opencl:%zu %s (%s, %s, driver %s), %u compute units, %u MHz, "
		            "tiles %u x %u\n",
		            d, dev->name, dev->platform, dev->type, dev->driver, dev->compute_units,
		            dev->clock_mhz, dev->tile, dev->tile);
		strbuf_addf(out, "      peak %s\n", gpu_peak_reason(dev, buf, sizeof(buf)));
		if (!r->gpu[d].ctx)
			strbuf_addf(out, "      not measured: %s\n", r->gpu[d].error);
	}
	strbuf_addch(out, '\n');
	strbuf_addf(out, "%5s  %-18s %7s %10s %12s %8s %7s %5s  %s\n", "SIZE", "KERNEL", "THREADS",
	            "BEST ms", "BEST GFLOP/s", "MEDIAN", "% PEAK", "RUNS", "CHECK");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct row *row = &r->rows[i];
		char name[64];

		if (row->dev < 0)
			str_copy(name, sizeof(name), row_name(row));
		else
			snprintf(name, sizeof(name), "opencl:%d %s%s", row->dev, row_name(row),
			         row->e2e ? " e2e" : "");
		strbuf_addf(out, "%5zu  %-18s", row->n, name);
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
		cell(out, row->t.best * 1e3, 10, row->t.best < 0.01 ? 3 : 1);
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
	if (r->cl.ndev)
		strbuf_addstr(
		        out,
		        "opencl:N naive: OpenCL C, a work-item per element; tiled: tiles of A "
		        "and B in local memory.\nThey time enqueue to clFinish (buffers "
		        "loaded once); e2e: buffers made, A and B written,\nthe kernel, C read "
		        "back, buffers released. Both checked against the CPU's result.\n");
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
json_out(struct bench_run *r, struct strbuf *out, int stopped)
{
	const struct bench_cpu_peak *p = &r->peak;
	struct fit_jw jw;

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
	bool measured = false;
	for (size_t i = 0; i < r->nrows; i++)
		measured |= r->rows[i].dev >= 0 && r->rows[i].status == ROW_MEASURED;
	fit_jw_bool(&jw, "measured", measured);
	fit_jw_str(&jw, "reason", r->cl.ndev ? NULL : r->cl.reason);
	fit_jw_str(&jw, "opencl_library", r->cl.loaded ? r->cl.path : NULL);
	fit_jw_num(&jw, "opencl_platforms", r->cl.platforms, 0);
	fit_jw_num(&jw, "cpu_devices_skipped", r->cl.cpu_skipped, 0);
	fit_jw_bool(&jw, "opencl_cpu", r->opencl_cpu);
	fit_jw_open(&jw, "devices", '[');
	for (size_t d = 0; d < r->cl.ndev; d++) {
		const struct bench_cl_device *dev = &r->cl.dev[d];
		char id[32], buf[256];

		snprintf(id, sizeof(id), "opencl:%zu", d);
		fit_jw_open(&jw, NULL, '{');
		fit_jw_str(&jw, "id", id);
		fit_jw_str(&jw, "api", "opencl");
		fit_jw_str(&jw, "platform", dev->platform);
		fit_jw_str(&jw, "name", dev->name);
		fit_jw_str(&jw, "vendor", dev->vendor);
		fit_jw_str(&jw, "type", dev->type);
		fit_jw_str(&jw, "driver_version", dev->driver);
		fit_jw_str(&jw, "device_version", dev->version);
		fit_jw_num(&jw, "compute_units", dev->compute_units, 0);
		fit_jw_num(&jw, "max_clock_mhz", dev->clock_mhz ? dev->clock_mhz : NAN, 0);
		fit_jw_num(&jw, "global_memory_bytes", (double)dev->global_mem, 0);
		fit_jw_num(&jw, "max_buffer_bytes", (double)dev->max_alloc, 0);
		fit_jw_num(&jw, "tile", dev->tile, 0);
		fit_jw_num(&jw, "peak_gflops", NAN, 0);
		fit_jw_str(&jw, "peak_reason", gpu_peak_reason(dev, buf, sizeof(buf)));
		fit_jw_str(&jw, "error", r->gpu[d].ctx ? NULL : r->gpu[d].error);
		fit_jw_close(&jw, '}');
	}
	fit_jw_close(&jw, ']');
	fit_jw_close(&jw, '}');
	fit_jw_open(&jw, "results", '[');
	for (size_t i = 0; i < r->nrows; i++) {
		const struct row *row = &r->rows[i];
		bool m = row->status == ROW_MEASURED;
		double best = m ? bench_gflops(row->n, row->t.best) : NAN;

		fit_jw_open(&jw, NULL, '{');
		fit_jw_num(&jw, "size", (double)row->n, 0);
		char id[32];

		if (row->dev >= 0)
			snprintf(id, sizeof(id), "opencl:%d", row->dev);
		fit_jw_str(&jw, "kernel", row_name(row));
		fit_jw_str(&jw, "device", row->dev >= 0 ? id : "cpu");
		fit_jw_str(&jw, "scope", row->e2e ? "end_to_end" : "kernel");
		fit_jw_str(&jw, "status", status_words[row->status]);
		fit_jw_str(&jw, "reason", m ? NULL : row->reason);
		fit_jw_num(&jw, "threads", m && row->threads ? row->threads : NAN, 0);
		fit_jw_num(&jw, "runs", m ? row->t.runs : NAN, 0);
		fit_jw_num(&jw, "warmup_seconds", m ? row->t.warmup : NAN, 9);
		if (m)
			fit_jw_bool(&jw, "warmup_counted", row->t.warmup_counted);
		else
			fit_jw_null(&jw, "warmup_counted");
		fit_jw_num(&jw, "best_seconds", m ? row->t.best : NAN, 9);
		fit_jw_num(&jw, "median_seconds", m ? row->t.median : NAN, 9);
		fit_jw_num(&jw, "best_gflops", best, 3);
		fit_jw_num(&jw, "median_gflops", m ? bench_gflops(row->n, row->t.median) : NAN, 3);
		fit_jw_num(&jw, "percent_of_peak", pct_of_peak(r, row, best), 2);
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
		.logs = STRBUF_INIT,
	};
	const char *cl_path = getenv("GPUSCOPE_OPENCL");
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
	bench_cl_open(&r.cl, cl_path && *cl_path ? cl_path : NULL, r.opencl_cpu);
	r.gpu = xcalloc(r.cl.ndev ? r.cl.ndev : 1, sizeof(*r.gpu));
	for (size_t d = 0; d < r.cl.ndev; d++) {
		struct err err = ERR_INIT;
		struct strbuf log = STRBUF_INIT;

		r.gpu[d].ctx = bench_cl_ctx_new(&r.cl, d, &err, &log);
		if (r.gpu[d].ctx)
			continue;
		str_copy(r.gpu[d].error, sizeof(r.gpu[d].error), err.msg);
		r.failures++;
		strbuf_addf(&r.fails, "bench matmul: opencl:%zu (%s): %s%s\n", d, r.cl.dev[d].name,
		            err.msg, log.len ? "; the build log follows" : "");
		if (log.len) {
			strbuf_addf(&r.logs, "--- build log of opencl:%zu ---\n", d);
			strbuf_addbuf(&r.logs, &log);
			if (log.buf[log.len - 1] != '\n')
				strbuf_addch(&r.logs, '\n');
		}
		strbuf_release(&log);
	}
	if (r.sweep) {
		for (size_t n = SWEEP_FIRST; n <= SWEEP_LAST; n *= 2)
			r.total += BENCH_NKERNELS + 2 * BENCH_CL_NKERNELS * (unsigned)r.cl.ndev;
		for (size_t n = SWEEP_FIRST; n <= SWEEP_LAST; n *= 2)
			if (!bench_size(&r, n))
				break;
	} else {
		r.total = BENCH_NKERNELS + 2 * BENCH_CL_NKERNELS * (unsigned)r.cl.ndev;
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
	if (r.logs.len)
		fputs(r.logs.buf, stderr);
	if (rc == EXIT_OK && r.errors)
		rc = EXIT_PROBLEMS;
	else if (rc == EXIT_OK && r.failures)
		rc = EXIT_RUNTIME;
	if (stopped)
		rc = 128 + stopped;
	bench_blas_close(&r.blas);
	for (size_t d = 0; d < r.cl.ndev; d++)
		bench_cl_ctx_free(r.gpu[d].ctx);
	free(r.gpu);
	bench_cl_close(&r.cl);
	free(r.rows);
	strbuf_release(&r.errs);
	strbuf_release(&r.fails);
	strbuf_release(&r.logs);
	strbuf_release(&out);
	return rc;
}
