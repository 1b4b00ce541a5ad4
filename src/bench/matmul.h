/*
 * gpuscope bench matmul, the CPU side: C = A x B for square N x N FP32
 * matrices, row-major, with three kernels (the textbook triple loop, a
 * cache-blocked vectorised one on all cores, the system BLAS loaded with
 * dlopen), a checker that holds each result against a bound scaled by N and
 * the float epsilon, the timing loop (a warm-up, then repeats to a fixed
 * time, best and median), and this CPU's own FP32 peak. Nothing here prints:
 * the command (src/cmd/bench.c) draws the table and the JSON document.
 */
#ifndef GPUSCOPE_BENCH_MATMUL_H
#define GPUSCOPE_BENCH_MATMUL_H

#include <stdbool.h>
#include <stddef.h>

struct err;

enum bench_kernel {
	BENCH_NAIVE,   /* i, j, k triple loop, one thread */
	BENCH_BLOCKED, /* packed panels, 6 x 16 register tiles, pthreads */
	BENCH_BLAS,    /* cblas_sgemm of the system BLAS */
	BENCH_NKERNELS,
};

/* "naive", "blocked", "blas": the kernel's name in the table and the JSON. */
const char *bench_kernel_name(enum bench_kernel k);

/* A float matrix of n x n, 64-byte aligned, or NULL when there is no memory for it. */
float *bench_matrix_alloc(size_t n);
void bench_matrix_free(float *m);

/* Fill m (n x n) with reproducible pseudo-random values in [-1, 1) from seed. */
void bench_matrix_fill(float *m, size_t n, unsigned seed);

/* The kernels. c is overwritten. A stop function returning non-zero makes them
 * return early (c then holds a partial result); NULL: never. */
typedef int (*bench_stop_fn)(void);
void bench_naive(size_t n, const float *a, const float *b, float *c, bench_stop_fn stop);
/* threads: how many to run on (1 or more); fewer are used where n is small. */
void bench_blocked(size_t n, const float *a, const float *b, float *c, unsigned threads,
                   bench_stop_fn stop);
/* The threads bench_blocked() runs on for n when given threads. */
unsigned bench_blocked_threads(size_t n, unsigned threads);
/*
 * The instruction set the blocked kernel's register tile runs with here:
 * "avx512", "avx2+fma", "sse2" (x86-64), "neon" (aarch64), "generic". The
 * best this CPU has is picked at the first call; bench_blocked_set_isa()
 * picks another one (for tests), returning -1 when this CPU or build has
 * not got it.
 */
const char *bench_blocked_isa(void);
int bench_blocked_set_isa(const char *isa);

/* The system BLAS, loaded once by bench_blas_open(). */
struct bench_blas {
	bool loaded;
	char path[256];    /* the file the symbol came from (its real path) */
	char name[64];     /* "OpenBLAS", "BLIS", ... or "unknown" */
	char config[160];  /* openblas_get_config(), or "" */
	char corename[64]; /* openblas_get_corename(), or "" */
	char reason[320];  /* why it is not loaded, with how to install one */
	int threads;       /* the threads it was set to, or 0 when it cannot be told */
	void *handle;
	void (*sgemm)(int order, int transa, int transb, int m, int n, int k, float alpha,
	              const float *a, int lda, const float *b, int ldb, float beta, float *c,
	              int ldc);
};
/*
 * Look for cblas_sgemm in libopenblas.so.0, libblis.so.4, libcblas.so.3,
 * libblas.so.3 (the first found wins), or in path alone when path is not
 * NULL. threads: asked of OpenBLAS or BLIS when it has a setter (0: leave it).
 * Returns 0, or -1 with blas->reason set.
 */
int bench_blas_open(struct bench_blas *blas, const char *path, unsigned threads);
void bench_blas_close(struct bench_blas *blas);
/* c = a x b through the BLAS; n must be below INT_MAX. */
void bench_blas_run(const struct bench_blas *blas, size_t n, const float *a, const float *b,
                    float *c);

/*
 * Checking a result. The error of a float dot product of length n, in any
 * order of summation, is at most about n * eps * sum |a_ik||b_kj|, which
 * Cauchy-Schwarz bounds by n * eps * |row i of a| * |column j of b|: the
 * tolerance of element (i, j) is twice that (2 n FLT_EPSILON |a_i| |b_j|),
 * so a result of any correct kernel passes and a wrong element of any size
 * that matters fails.
 */
struct bench_norms {
	size_t n;
	double *row; /* |row i of a|, 2-norm */
	double *col; /* |column j of b| */
};
void bench_norms_init(struct bench_norms *nm, size_t n, const float *a, const float *b);
void bench_norms_release(struct bench_norms *nm);

struct bench_check {
	bool ok;
	size_t checked; /* elements compared */
	size_t bad;     /* elements outside their tolerance */
	size_t worst_i, worst_j;
	double max_error; /* the largest |got - want| */
	double max_ratio; /* the largest |got - want| / tolerance: over 1 fails */
	double tolerance; /* the tolerance of the element with max_ratio */
};
/* Every element of got against want (another kernel's result). */
void bench_compare(const struct bench_norms *nm, const float *got, const float *want,
                   struct bench_check *out);
/*
 * samples elements of got (the four corners, then pseudo-random ones) against
 * dot products computed in double precision from a and b.
 */
void bench_check_sampled(const struct bench_norms *nm, const float *a, const float *b,
                         const float *got, size_t samples, struct bench_check *out);

/*
 * Timing: a warm-up run, then timed runs until min_seconds have passed and
 * min_runs ran, but no more once max_seconds have passed (one timed run at
 * least), and never more than max_runs. A warm-up longer than long_run
 * seconds is counted as the first timed run: a run that long is past the
 * clock ramp, cold caches and thread start-up a warm-up is for.
 */
struct bench_plan {
	double min_seconds; /* 0.5 */
	unsigned min_runs;  /* 3 */
	double max_seconds; /* 5; 0: no limit */
	double long_run;    /* 1; 0: never count the warm-up */
	unsigned max_runs;  /* 1000 */
};
struct bench_timing {
	unsigned runs;       /* timed runs */
	double best;         /* seconds */
	double median;       /* seconds */
	double warmup;       /* the warm-up run's seconds */
	bool warmup_counted; /* it is one of the runs */
	bool stopped;        /* the stop function asked to stop: the figures are not whole */
	bool failed;         /* a run of bench_time_fn() failed: the figures are not whole */
};
struct bench_job {
	enum bench_kernel kernel;
	size_t n;
	const float *a, *b;
	float *c;
	unsigned threads;
	const struct bench_blas *blas;
	bench_stop_fn stop;
};
/* Run job once: seconds taken. */
double bench_run_once(const struct bench_job *job);
void bench_time(const struct bench_job *job, const struct bench_plan *plan, struct bench_timing *t);
/*
 * The same plan for any run: run(arg) does one run and returns its seconds,
 * or a negative number when it failed (the loop ends, t->failed is set).
 */
typedef double bench_run_fn(void *arg);
void bench_time_fn(bench_run_fn *run, void *arg, bench_stop_fn stop, const struct bench_plan *plan,
                   struct bench_timing *t);

/* 2 n^3 / seconds / 1e9 */
double bench_gflops(size_t n, double seconds);

/*
 * This CPU's FP32 peak: cpus x clock x FP32 FMA lanes x 2 (an FMA is two
 * FLOPs). Lanes from the cpuinfo flags (x86: avx512f 16, avx2 with fma 8,
 * avx 8, sse 4) or features (aarch64: asimd 4); the clock from cpufreq's
 * cpuinfo_max_freq, else the highest "cpu MHz" of cpuinfo. One FMA unit a
 * core is counted: many cores have two, and reach up to twice this peak.
 */
struct bench_cpu_peak {
	unsigned cpus;         /* the CPUs this process may run on */
	double mhz;            /* 0: unknown */
	char clock_source[96]; /* the file the clock came from */
	unsigned lanes;        /* FP32 lanes of one FMA (or multiply and add), 1 when none known */
	char isa[32];          /* "avx512f", "avx2+fma", "avx", "sse", "neon", "scalar" */
	char model[96];        /* "model name" (x86), or "CPU implementer/part" (arm), or "" */
	double gflops;         /* 0 when the clock is unknown */
	char how[256];         /* the derivation in words, or why there is none */
};
/*
 * From a cpuinfo text and cpufreq's cpuinfo_max_freq in kHz (0: none), for
 * cpus CPUs. clock_file names where max_khz came from. Fills p; never fails
 * (an unknown clock leaves p->gflops at 0 and says so in p->how).
 */
void bench_cpu_peak_parse(const char *cpuinfo, unsigned long long max_khz, const char *clock_file,
                          unsigned cpus, struct bench_cpu_peak *p);
/* The same, read from proc_root/cpuinfo and sysfs_root/devices/system/cpu/cpuN/cpufreq/. */
void bench_cpu_peak_read(const char *proc_root, const char *sysfs_root, unsigned cpus,
                         struct bench_cpu_peak *p);
/* The CPUs this process may run on (sched_getaffinity), at least 1. */
unsigned bench_cpus(void);
/* MemAvailable of proc_root/meminfo in bytes, or 0 when it cannot be read. */
unsigned long long bench_mem_available(const char *proc_root);

#endif
