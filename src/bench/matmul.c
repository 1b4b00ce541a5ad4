/*
 * The CPU matmul kernels, the checker and the timing loop (bench/matmul.h).
 *
 * The blocked kernel is the GotoBLAS scheme in portable C: B is packed into
 * panels of KC rows by 16 columns, A into panels of 6 rows by KC, and a
 * 6 x 16 tile of C is held in registers while k runs over a panel. The
 * tile is written with GCC's vector extensions (bench/micro.h) in the
 * native width of each instruction set: 128 bits for the baseline (SSE2 on
 * x86-64, NEON on aarch64), and on x86-64 also 256 bits with FMA
 * (target("avx2,fma")) and 512 bits (target("avx512f,...")), the one this
 * CPU has picked at the first call; so the binary stays portable (no
 * -march=native). Rows of C are split among threads.
 */
#include "bench/matmul.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/xalloc.h"

#define MR    6    /* rows of a register tile */
#define NR    16   /* columns of a register tile and of a packed B panel */
#define KC    256  /* the depth of a packed panel */
#define MC    96   /* rows of A packed at once (a multiple of MR) */
#define NC    1024 /* columns of B packed at once (a multiple of NR) */
#define ALIGN 64   /* bytes */

/* One copy of the register tile per instruction set (bench/micro.h). */
typedef void micro_fn(size_t kc, const float *restrict ap, const float *restrict bp,
                      float *restrict c, size_t ldc, size_t m, size_t w, bool add);

typedef float v4f __attribute__((vector_size(4 * sizeof(float))));
#define MICRO_FN micro_base /* SSE2 on x86-64, NEON on aarch64: 128 bits */
#define MICRO_ATTR
#define VT v4f
#define VW 4
#define NV 2
#include "bench/micro.h"
#undef MICRO_FN
#undef MICRO_ATTR
#undef VT
#undef VW
#undef NV

#if defined(__x86_64__) && defined(__GNUC__)
#define BENCH_X86 1
typedef float v8f __attribute__((vector_size(8 * sizeof(float))));
typedef float v16f __attribute__((vector_size(16 * sizeof(float))));
#define MICRO_FN   micro_avx2
#define MICRO_ATTR __attribute__((target("avx2,fma")))
#define VT         v8f
#define VW         8
#define NV         2
#include "bench/micro.h"
#undef MICRO_FN
#undef MICRO_ATTR
#undef VT
#undef VW
#undef NV
#define MICRO_FN   micro_avx512
#define MICRO_ATTR __attribute__((target("avx512f,avx512vl,avx2,fma")))
#define VT         v16f
#define VW         16
#define NV         1
#include "bench/micro.h"
#undef MICRO_FN
#undef MICRO_ATTR
#undef VT
#undef VW
#undef NV
#endif

static micro_fn *micro;
static const char *micro_isa;
static pthread_once_t micro_once = PTHREAD_ONCE_INIT;

static void
micro_pick(void)
{
	micro = micro_base;
#if defined(__aarch64__)
	micro_isa = "neon";
#elif defined(BENCH_X86)
	micro_isa = "sse2";
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) {
		micro = micro_avx512;
		micro_isa = "avx512";
	} else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
		micro = micro_avx2;
		micro_isa = "avx2+fma";
	}
#else
	micro_isa = "generic";
#endif
}

const char *
bench_kernel_name(enum bench_kernel k)
{
	switch (k) {
	case BENCH_NAIVE:
		return "naive";
	case BENCH_BLOCKED:
		return "blocked";
	case BENCH_BLAS:
		return "blas";
	case BENCH_NKERNELS:
		break;
	}
	return "?";
}

float *
bench_matrix_alloc(size_t n)
{
	void *p = NULL;
	size_t bytes;

	if (!n || n > SIZE_MAX / n / sizeof(float))
		return NULL;
	bytes = n * n * sizeof(float);
	if (posix_memalign(&p, ALIGN, bytes))
		return NULL;
	return p;
}

void
bench_matrix_free(float *m)
{
	free(m);
}

void
bench_matrix_fill(float *m, size_t n, unsigned seed)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)seed << 1 | 1);

	for (size_t i = 0; i < n * n; i++) {
		/* xorshift64*: 24 random bits into [-1, 1) */
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		m[i] = (float)((double)((x * 0x2545f4914f6cdd1dULL) >> 40) / (double)(1 << 23) -
		               1.0);
	}
}

void
bench_naive(size_t n, const float *a, const float *b, float *c, bench_stop_fn stop)
{
	for (size_t i = 0; i < n; i++) {
		if (stop && stop())
			return;
		for (size_t j = 0; j < n; j++) {
			float s = 0;

			for (size_t k = 0; k < n; k++)
				s += a[i * n + k] * b[k * n + j];
			c[i * n + j] = s;
		}
	}
}

/* Copy rows pc..pc+kc of b, columns jc..jc+nc, into NR-wide panels (zeros past n). */
static inline void
pack_b(float *restrict bp, const float *restrict b, size_t n, size_t pc, size_t kc, size_t jc,
       size_t nc)
{
	for (size_t jr = 0; jr < nc; jr += NR) {
		float *dst = bp + jr * kc;
		size_t w = nc - jr < NR ? nc - jr : NR;

		for (size_t k = 0; k < kc; k++) {
			const float *src = b + (pc + k) * n + jc + jr;
			size_t x = 0;

			for (; x < w; x++)
				dst[k * NR + x] = src[x];
			for (; x < NR; x++)
				dst[k * NR + x] = 0;
		}
	}
}

/* Copy rows ic..ic+mc of a, columns pc..pc+kc, into MR-tall panels (zeros past mc). */
static inline void
pack_a(float *restrict ap, const float *restrict a, size_t n, size_t ic, size_t mc, size_t pc,
       size_t kc)
{
	for (size_t ir = 0; ir < mc; ir += MR) {
		float *dst = ap + ir * kc;
		size_t h = mc - ir < MR ? mc - ir : MR;

		for (size_t k = 0; k < kc; k++) {
			size_t r = 0;

			for (; r < h; r++)
				dst[k * MR + r] = a[(ic + ir + r) * n + pc + k];
			for (; r < MR; r++)
				dst[k * MR + r] = 0;
		}
	}
}

struct blocked_arg {
	size_t n;
	const float *a, *b;
	float *c;
	size_t row0, row1; /* the rows of c this thread writes */
	float *ap, *bp;    /* its packing buffers */
	bench_stop_fn stop;
};

static void
blocked_rows(const struct blocked_arg *w)
{
	size_t n = w->n;

	for (size_t jc = 0; jc < n; jc += NC) {
		size_t nc = n - jc < NC ? n - jc : NC;

		for (size_t pc = 0; pc < n; pc += KC) {
			size_t kc = n - pc < KC ? n - pc : KC;

			if (w->stop && w->stop())
				return;
			pack_b(w->bp, w->b, n, pc, kc, jc, nc);
			for (size_t ic = w->row0; ic < w->row1; ic += MC) {
				size_t mc = w->row1 - ic < MC ? w->row1 - ic : MC;

				pack_a(w->ap, w->a, n, ic, mc, pc, kc);
				for (size_t jr = 0; jr < nc; jr += NR) {
					size_t cols = nc - jr < NR ? nc - jr : NR;

					for (size_t ir = 0; ir < mc; ir += MR) {
						size_t rows = mc - ir < MR ? mc - ir : MR;

						micro(kc, w->ap + ir * kc, w->bp + jr * kc,
						      w->c + (ic + ir) * n + jc + jr, n, rows, cols,
						      pc > 0);
					}
				}
			}
		}
	}
}

static void *
blocked_thread(void *arg)
{
	blocked_rows(arg);
	return NULL;
}

unsigned
bench_blocked_threads(size_t n, unsigned threads)
{
	/* at least 2^21 multiply-adds a thread, and one MR-row strip each */
	double work = (double)n * (double)n * (double)n;
	size_t strips = (n + MR - 1) / MR;
	unsigned t = threads ? threads : 1;

	if (work / t < (double)(1u << 21))
		t = work < (double)(1u << 21) ? 1 : (unsigned)(work / (double)(1u << 21));
	if (t > strips)
		t = (unsigned)strips;
	return t ? t : 1;
}

const char *
bench_blocked_isa(void)
{
	pthread_once(&micro_once, micro_pick);
	return micro_isa;
}

int
bench_blocked_set_isa(const char *isa)
{
	pthread_once(&micro_once, micro_pick);
	if (!strcmp(isa, "sse2") || !strcmp(isa, "neon") || !strcmp(isa, "generic")) {
#if defined(__aarch64__)
		if (strcmp(isa, "neon"))
			return -1;
#elif defined(BENCH_X86)
		if (strcmp(isa, "sse2"))
			return -1;
#else
		if (strcmp(isa, "generic"))
			return -1;
#endif
		micro = micro_base;
		micro_isa = isa;
		return 0;
	}
#if defined(BENCH_X86)
	if (!strcmp(isa, "avx2+fma") && __builtin_cpu_supports("avx2") &&
	    __builtin_cpu_supports("fma")) {
		micro = micro_avx2;
		micro_isa = "avx2+fma";
		return 0;
	}
	if (!strcmp(isa, "avx512") && __builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512vl")) {
		micro = micro_avx512;
		micro_isa = "avx512";
		return 0;
	}
#endif
	return -1;
}

void
bench_blocked(size_t n, const float *a, const float *b, float *c, unsigned threads,
              bench_stop_fn stop)
{
	unsigned t = bench_blocked_threads(n, threads);
	size_t strips = (n + MR - 1) / MR;
	struct blocked_arg *args = xcalloc(t, sizeof(*args));
	pthread_t *tid = xcalloc(t, sizeof(*tid));
	size_t ap_bytes = (size_t)MC * KC * sizeof(float),
	       bp_bytes = (size_t)NC * KC * sizeof(float);
	bool *started = xcalloc(t, sizeof(*started));

	pthread_once(&micro_once, micro_pick);

	for (unsigned i = 0; i < t; i++) {
		void *ap = NULL, *bp = NULL;

		args[i] = (struct blocked_arg){ .n = n, .a = a, .b = b, .c = c, .stop = stop };
		args[i].row0 = strips * i / t * MR;
		args[i].row1 = strips * (i + 1) / t * MR;
		if (args[i].row1 > n)
			args[i].row1 = n;
		if (posix_memalign(&ap, ALIGN, ap_bytes) || posix_memalign(&bp, ALIGN, bp_bytes))
			BUG("no memory for a %zu-byte packing buffer", bp_bytes);
		args[i].ap = ap;
		args[i].bp = bp;
	}
	/* thread 0 is this one; the rows of a thread that cannot start are done here */
	for (unsigned i = 1; i < t; i++)
		started[i] = pthread_create(&tid[i], NULL, blocked_thread, &args[i]) == 0;
	blocked_rows(&args[0]);
	for (unsigned i = 1; i < t; i++) {
		if (started[i])
			pthread_join(tid[i], NULL);
		else
			blocked_rows(&args[i]);
	}
	for (unsigned i = 0; i < t; i++) {
		free(args[i].ap);
		free(args[i].bp);
	}
	free(args);
	free(tid);
	free(started);
}

void
bench_norms_init(struct bench_norms *nm, size_t n, const float *a, const float *b)
{
	nm->n = n;
	nm->row = xcalloc(n, sizeof(*nm->row));
	nm->col = xcalloc(n, sizeof(*nm->col));
	for (size_t i = 0; i < n; i++) {
		double s = 0;

		for (size_t k = 0; k < n; k++)
			s += (double)a[i * n + k] * a[i * n + k];
		nm->row[i] = sqrt(s);
	}
	for (size_t k = 0; k < n; k++)
		for (size_t j = 0; j < n; j++)
			nm->col[j] += (double)b[k * n + j] * b[k * n + j];
	for (size_t j = 0; j < n; j++)
		nm->col[j] = sqrt(nm->col[j]);
}

void
bench_norms_release(struct bench_norms *nm)
{
	FREE_AND_NULL(nm->row);
	FREE_AND_NULL(nm->col);
}

static void
check_start(struct bench_check *out)
{
	memset(out, 0, sizeof(*out));
	out->ok = true;
}

/* One element: got against want, with its tolerance. */
static void
check_one(const struct bench_norms *nm, size_t i, size_t j, double got, double want,
          struct bench_check *out)
{
	double tol = 2.0 * (double)nm->n * FLT_EPSILON * nm->row[i] * nm->col[j] + 1e-30;
	double e = fabs(got - want);
	double ratio = e / tol;

	out->checked++;
	if (!isfinite(got) || !isfinite(want))
		ratio = e = INFINITY;
	if (ratio > out->max_ratio || out->checked == 1) {
		out->max_ratio = ratio;
		out->tolerance = tol;
		out->worst_i = i;
		out->worst_j = j;
	}
	if (e > out->max_error)
		out->max_error = e;
	if (!(ratio <= 1.0)) {
		out->bad++;
		out->ok = false;
	}
}

void
bench_compare(const struct bench_norms *nm, const float *got, const float *want,
              struct bench_check *out)
{
	size_t n = nm->n;

	check_start(out);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			check_one(nm, i, j, got[i * n + j], want[i * n + j], out);
}

void
bench_check_sampled(const struct bench_norms *nm, const float *a, const float *b, const float *got,
                    size_t samples, struct bench_check *out)
{
	size_t n = nm->n;
	uint64_t x = 0x2545f4914f6cdd1dULL;

	check_start(out);
	for (size_t s = 0; s < samples; s++) {
		size_t i, j;
		double want = 0;

		if (s < 4) {
			i = s & 1 ? n - 1 : 0;
			j = s & 2 ? n - 1 : 0;
		} else {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			i = (size_t)((x >> 33) % n);
			j = (size_t)((x >> 11) % n);
		}
		for (size_t k = 0; k < n; k++)
			want += (double)a[i * n + k] * b[k * n + j];
		check_one(nm, i, j, got[i * n + j], want, out);
	}
}

double
bench_run_once(const struct bench_job *job)
{
	double t0 = clock_mono();

	switch (job->kernel) {
	case BENCH_NAIVE:
		bench_naive(job->n, job->a, job->b, job->c, job->stop);
		break;
	case BENCH_BLOCKED:
		bench_blocked(job->n, job->a, job->b, job->c, job->threads, job->stop);
		break;
	case BENCH_BLAS:
		bench_blas_run(job->blas, job->n, job->a, job->b, job->c);
		break;
	case BENCH_NKERNELS:
		BUG("no kernel");
	}
	return clock_mono() - t0;
}

static int
cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

void
bench_time_fn(bench_run_fn *run, void *arg, bench_stop_fn stop, const struct bench_plan *plan,
              struct bench_timing *t)
{
	unsigned max_runs = plan->max_runs ? plan->max_runs : 1;
	double *times, total = 0;

	memset(t, 0, sizeof(*t));
	times = xcalloc(max_runs, sizeof(*times));
	t->warmup = run(arg);
	if (t->warmup < 0) {
		t->failed = true;
		goto out;
	}
	if (plan->long_run > 0 && t->warmup > plan->long_run) {
		/* a run this long is past what a warm-up is for: it counts */
		t->warmup_counted = true;
		times[t->runs++] = t->warmup;
		total = t->warmup;
	}
	while (t->runs < max_runs && (t->runs < plan->min_runs || total < plan->min_seconds)) {
		if (stop && stop())
			break;
		if (t->runs && plan->max_seconds > 0 && total >= plan->max_seconds)
			break;
		times[t->runs] = run(arg);
		if (times[t->runs] < 0) {
			t->failed = true;
			break;
		}
		total += times[t->runs++];
	}
	if (stop && stop())
		t->stopped = true;
	if (t->runs) {
		qsort(times, t->runs, sizeof(*times), cmp_double);
		t->best = times[0];
		t->median = t->runs % 2 ? times[t->runs / 2]
		                        : (times[t->runs / 2 - 1] + times[t->runs / 2]) / 2;
	}
out:
	free(times);
}

static double
run_job(void *arg)
{
	return bench_run_once(arg);
}

void
bench_time(const struct bench_job *job, const struct bench_plan *plan, struct bench_timing *t)
{
	struct bench_job copy = *job;

	bench_time_fn(run_job, &copy, job->stop, plan, t);
}

double
bench_gflops(size_t n, double seconds)
{
	double nd = (double)n;

	if (!(seconds > 0))
		return NAN;
	return 2.0 * nd * nd * nd / seconds / 1e9;
}
