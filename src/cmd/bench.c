/*
 * gpuscope bench matmul: C = A x B in FP32 for square N x N matrices on the
 * CPU, with the textbook triple loop, a cache-blocked vectorised kernel on
 * all cores and the system BLAS (bench/matmul.h), each result checked
 * against the others, each figure held against this CPU's own peak; as a
 * table or JSON (schema gpuscope.bench/1, docs/bench.md). The GPU kernels
 * of issue 16 are not built yet, and the output says so.
 */
#include "cmd/cmd.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/matmul.h"
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

static const char gpu_reason[] =
        "not measured yet by this build: the GPU kernels of gpuscope bench (CUDA driver API, "
        "OpenCL) are not built yet, so no GPU was looked for";

static void
bench_usage(FILE *f)
{
	fputs("usage: gpuscope bench matmul [--size N | --sweep] [--json] [--threads N]\n"
	      "C = A x B, FP32, square N x N, on the CPU: the naive triple loop (one thread), a\n"
	      "cache-blocked vectorised kernel on all CPUs, and the system BLAS's cblas_sgemm\n"
	      "(dlopen: libopenblas.so.0, libblis.so.4, libcblas.so.3, libblas.so.3); every result\n"
	      "checked against the others; GFLOP/s = 2 N^3 / time, best and median of runs after a\n"
	      "warm-up, against this CPU's peak (CPUs x clock x FP32 FMA lanes x 2). No GPU kernels\n"
	      "yet: the table says so. docs/bench.md tells how the figures are measured.\n"
	      "      --size=N        N x N matrices, 1 to 16384 (default 1024)\n"
	      "      --sweep         N = 64, 128, ..., 8192; a naive run that would take over 3 s,\n"
	      "                      or one of the others over 20 s, is skipped, and says so\n"
	      "  -j, --json          one JSON document (schema gpuscope.bench/1, docs/bench.md)\n"
	      "      --threads=N     threads of the blocked kernel and the BLAS (default: the CPUs\n"
	      "                      this process may run on)\n"
	      "exit status: 0 every result checked, 1 a result was wrong, 2 usage error,\n"
	      "3 bench could not run; 128 + the signal when stopped (Ctrl-C)\n",
	      f);
}

enum row_status { ROW_MEASURED, ROW_SKIPPED, ROW_UNAVAILABLE, ROW_STOPPED };

static const char *const status_words[] = { "measured", "skipped", "unavailable", "stopped" };

struct row {
	size_t n;
	enum bench_kernel kernel;
	enum row_status status;
	char reason[320];
	unsigned threads;
	struct bench_timing t;
	struct bench_check sampled; /* against double-precision sums */
	struct bench_check full;    /* every element against the first kernel's result */
	const char *compared_with;  /* that kernel, or NULL (this one is the first) */
	bool ok;
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
};

static struct row *
new_row(struct bench_run *r, size_t n, enum bench_kernel k)
{
	struct row *row;

	ALLOC_GROW(r->rows, r->nrows + 1, r->alloc);
	row = &r->rows[r->nrows++];
	memset(row, 0, sizeof(*row));
	row->n = n;
	row->kernel = k;
	return row;
}

static void
progress(struct bench_run *r, size_t n, enum bench_kernel k)
{
	if (!r->progress)
		return;
	fprintf(stderr, "\r\033[K  bench matmul: [%u/%u] N=%zu %s ...", r->done + 1, r->total, n,
	        bench_kernel_name(k));
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

	r->errors++;
	row->ok = false;
	strbuf_addf(
	        &r->errs,
	        "bench matmul: %s at N=%zu is wrong: %zu of %zu elements checked against %s are "
	        "outside their tolerance (worst C[%zu][%zu] = %.9g, want %.9g, tolerance %.3g)\n",
	        bench_kernel_name(row->kernel), n, c->bad, c->checked, against, c->worst_i,
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
over_cap(struct bench_run *r, struct row *row, size_t n, enum bench_kernel k)
{
	double scale, est, cap = k == BENCH_NAIVE ? SWEEP_CAP_NAIVE : SWEEP_CAP;

	if (!r->sweep || !r->last_n[k] || !(r->last_best[k] > 0))
		return false;
	scale = (double)n / (double)r->last_n[k];
	est = r->last_best[k] * scale * scale * scale;
	if (est <= cap)
		return false;
	row->status = ROW_SKIPPED;
	snprintf(row->reason, sizeof(row->reason),
	         "skipped: a run would take about %.0f s (%.3g s at N=%zu, times %.0f), over "
	         "--sweep's %.0f s cap",
	         est, r->last_best[k], r->last_n[k], scale * scale * scale, cap);
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
	const struct bench_plan plan = {
		.min_seconds = MIN_SECONDS,
		.min_runs = MIN_RUNS,
		.max_seconds = MAX_SECONDS,
		.long_run = LONG_RUN,
		.max_runs = MAX_RUNS,
	};

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
		if (over_cap(r, row, n, kern)) {
			r->done++;
			continue;
		}
		progress(r, n, kern);
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
	bench_norms_release(&nm);
out:
	bench_matrix_free(a);
	bench_matrix_free(b);
	bench_matrix_free(ref);
	bench_matrix_free(work);
	return go_on;
}

static double
pct_of_peak(const struct bench_run *r, double gflops)
{
	if (!(r->peak.gflops > 0) || !isfinite(gflops))
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
	strbuf_addf(out, "GPU   %s\n\n", gpu_reason);
	strbuf_addf(out, "%5s  %-8s %7s %10s %12s %8s %7s %5s  %s\n", "SIZE", "KERNEL", "THREADS",
	            "BEST ms", "BEST GFLOP/s", "MEDIAN", "% PEAK", "RUNS", "CHECK");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct row *row = &r->rows[i];

		strbuf_addf(out, "%5zu  %-8s", row->n, bench_kernel_name(row->kernel));
		if (row->status != ROW_MEASURED) {
			strbuf_addf(out, " %7s  %s\n", "-", row->reason);
			continue;
		}
		if (row->threads)
			strbuf_addf(out, " %7u", row->threads);
		else
			strbuf_addf(out, " %7s", "?");
		cell(out, row->t.best * 1e3, 10, row->t.best < 0.01 ? 3 : 1);
		double best = bench_gflops(row->n, row->t.best);
		double med = bench_gflops(row->n, row->t.median);
		cell(out, best, 12, best < 10 ? 2 : 1);
		cell(out, med, 8, med < 10 ? 2 : 1);
		cell(out, pct_of_peak(r, best), 7, 1);
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
	fit_jw_bool(&jw, "measured", false);
	fit_jw_str(&jw, "reason", gpu_reason);
	fit_jw_close(&jw, '}');
	fit_jw_open(&jw, "results", '[');
	for (size_t i = 0; i < r->nrows; i++) {
		const struct row *row = &r->rows[i];
		bool m = row->status == ROW_MEASURED;
		double best = m ? bench_gflops(row->n, row->t.best) : NAN;

		fit_jw_open(&jw, NULL, '{');
		fit_jw_num(&jw, "size", (double)row->n, 0);
		fit_jw_str(&jw, "kernel", bench_kernel_name(row->kernel));
		fit_jw_str(&jw, "device", "cpu");
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
		fit_jw_num(&jw, "percent_of_peak", pct_of_peak(r, best), 2);
		if (m)
			json_check(&jw, row);
		else
			fit_jw_null(&jw, "check");
		fit_jw_close(&jw, '}');
	}
	fit_jw_close(&jw, ']');
	fit_jw_num(&jw, "errors", r->errors, 0);
	fit_jw_bool(&jw, "stopped", stopped != 0);
	fit_jw_end(&jw);
}

int
cmd_bench(int argc, char **argv, struct gs_config *cfg)
{
	enum { OPT_SIZE = 0x100, OPT_SWEEP, OPT_THREADS };
	static const struct option opts[] = {
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "sweep", no_argument, NULL, OPT_SWEEP },
		{ "json", no_argument, NULL, 'j' },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_run r = { .cfg = cfg, .errs = STRBUF_INIT };
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
	if (r.sweep) {
		for (size_t n = SWEEP_FIRST; n <= SWEEP_LAST; n *= 2)
			r.total += BENCH_NKERNELS;
		for (size_t n = SWEEP_FIRST; n <= SWEEP_LAST; n *= 2)
			if (!bench_size(&r, n))
				break;
	} else {
		r.total = BENCH_NKERNELS;
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
	if (r.errs.len) {
		char *line = r.errs.buf;

		for (char *nl; (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = '\0';
			cmd_error("%s", line);
		}
	}
	if (rc == EXIT_OK && r.errors)
		rc = EXIT_PROBLEMS;
	if (stopped)
		rc = 128 + stopped;
	bench_blas_close(&r.blas);
	free(r.rows);
	strbuf_release(&r.errs);
	strbuf_release(&out);
	return rc;
}
