/*
 * gpuscope burn's engine (bench/burn.h): one device's stress test over the
 * operations of bench/dev.h, so CUDA and OpenCL devices are burnt alike.
 *
 * The order of a run: the memory budget (mem_info), the GEMM size (the
 * largest that fits and whose measured time stays under half a second),
 * the buffers (A, B and the result slots), a memtest pass over them, the
 * reference (checked on the host), the load until the last tenth of the
 * duration, a last memtest pass, and everything freed. Every call that
 * fails ends the run with the call's message; E_LOST and E_TIMEOUT mark
 * the device lost, and nothing more is asked of it.
 */
#include "bench/burn.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cublaslt.h"
#include "bench/cuda.h"
#include "bench/dev.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#define DEFAULT_SEED 20260101u
#define MEMTEST_CHUNK \
	(256ULL << 20) /* --memtest: buffers of this size, or an eighth of the budget */
#define GRID_BLOCK 256 /* work-items of a grid-stride block */
/*
 * Counters are CTR_STRIDE bytes apart: an offset into an OpenCL buffer is a
 * sub-buffer, whose origin must be a multiple of the device's base address
 * alignment (CL_DEVICE_MEM_BASE_ADDR_ALIGN: 1024 bits on most, 4096 at most).
 */
#define CTR_STRIDE 512

void
burn_opts_init(struct burn_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->precision = BURN_FP32;
	o->memtest = BURN_MEMTEST_EDGES;
	o->duration = 60;
	o->seed = DEFAULT_SEED;
}

static const char *const precision_names[] = { "fp32", "fp64", "tf32", "fp16", "bf16", "tensor" };

const char *
burn_precision_name(enum burn_precision p)
{
	return (unsigned)p < sizeof(precision_names) / sizeof(precision_names[0])
	               ? precision_names[p]
	               : "?";
}

int
burn_precision_parse(const char *s, enum burn_precision *p)
{
	for (unsigned i = 0; s && i < sizeof(precision_names) / sizeof(precision_names[0]); i++)
		if (!strcmp(s, precision_names[i])) {
			*p = (enum burn_precision)i;
			return 0;
		}
	return -1;
}

bool
burn_precision_tensor(enum burn_precision p)
{
	return p == BURN_TF32 || p == BURN_FP16 || p == BURN_BF16 || p == BURN_TENSOR;
}

int
burn_precision_resolve(enum burn_precision p, int major, int minor, enum burn_precision *out,
                       char *why, size_t size)
{
	int need = p == BURN_FP16 ? 7 : 8;

	*out = p;
	if (!burn_precision_tensor(p))
		return 0;
	if (p == BURN_TENSOR) {
		if (major >= 8) {
			*out = BURN_BF16;
			return 0;
		}
		if (major == 7) {
			*out = BURN_FP16;
			return 0;
		}
		snprintf(why, size,
		         "tensor: no tensor cores below compute capability 7.0; this device is "
		         "%d.%d",
		         major, minor);
		return -1;
	}
	if (major >= need)
		return 0;
	snprintf(why, size,
	         "%s needs tensor cores of compute capability %d.0 or later; this device is %d.%d",
	         burn_precision_name(p), need, major, minor);
	return -1;
}

const char *
burn_memtest_name(enum burn_memtest m)
{
	return m == BURN_MEMTEST_ONLY ? "only" : m == BURN_MEMTEST_OFF ? "off" : "edges";
}

const char *
burn_phase_name(enum burn_phase p)
{
	static const char *const names[] = { "setup",       "memtest", "gemm",
		                             "memtest-end", "memtest", "done" };

	return (unsigned)p < sizeof(names) / sizeof(names[0]) ? names[p] : "?";
}

const char *
burn_state_name(enum burn_state s)
{
	static const char *const names[] = { "running", "done", "lost", "failed" };

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/*
 * A pass: all zeros and all ones, the two moving inversions (the address
 * pattern and its complement), a first random pattern, then the 32 walking
 * ones each beside its walking zero, then three more random seeds: the
 * kinds of fault each catches come early, so a short pass (a time budget)
 * still has them all.
 */
#define NPATTERNS (2 + 2 + 1 + 64 + 3)

unsigned
burn_npatterns(void)
{
	return NPATTERNS;
}

void
burn_pattern(unsigned i, struct burn_pattern *p)
{
	static const uint32_t seeds[] = { 0x2545f491u, 0x9e3779b9u, 0x85ebca6bu, 0xc2b2ae35u };

	i %= NPATTERNS;
	memset(p, 0, sizeof(*p));
	if (i < 2) {
		p->mode = BENCH_MEM_CONST;
		p->pattern = i ? ~0u : 0;
		snprintf(p->name, sizeof(p->name), "%s", i ? "ones" : "zeros");
	} else if (i < 4) {
		p->mode = BENCH_MEM_ADDRESS;
		p->pattern = i == 3 ? ~0u : 0;
		snprintf(p->name, sizeof(p->name), "inversion-%c", i == 3 ? 'b' : 'a');
	} else if (i == 4 || i >= 69) {
		unsigned s = i == 4 ? 0 : i - 68;

		p->mode = BENCH_MEM_RANDOM;
		p->pattern = seeds[s];
		snprintf(p->name, sizeof(p->name), "random-%u", s + 1);
	} else {
		unsigned k = (i - 5) / 2;
		bool zero = (i - 5) % 2;

		p->mode = BENCH_MEM_CONST;
		p->pattern = zero ? ~(1u << k) : 1u << k;
		snprintf(p->name, sizeof(p->name), "walking-%s-%u", zero ? "zero" : "one", k);
	}
}

bool
burn_stats_fault(const struct burn_stats *st)
{
	return st->wrong || st->ref_wrong || st->mem_bad || st->state == BS_LOST;
}

size_t
burn_pick_n(unsigned long long budget, unsigned long long max_alloc, size_t esize)
{
	for (size_t n = BURN_MAX_N; n >= 16; n /= 2) {
		unsigned long long m = (unsigned long long)n * n * esize;

		if (4 * m <= budget && (!max_alloc || m <= max_alloc))
			return n;
	}
	return 0;
}

unsigned long long
burn_budget(unsigned long long free, unsigned long long total, bool cpu, unsigned long long max)
{
	unsigned long long b = (unsigned long long)((double)free * BURN_MEM_FRAC);

	if (free <= BURN_MEM_MARGIN)
		b = 0;
	else if (b > free - BURN_MEM_MARGIN)
		b = free - BURN_MEM_MARGIN;
	if (cpu) {
		/* a CPU device's memory is the host's, which this process shares */
		if (b > total / 4)
			b = total / 4;
		if (b > BURN_CPU_MAX_MEM)
			b = BURN_CPU_MAX_MEM;
	}
	if (max && b > max)
		b = max;
	return b;
}

double
burn_tolerance(size_t n, enum burn_precision p)
{
	double eps = p == BURN_FP64 ? DBL_EPSILON : FLT_EPSILON;

	/*
	 * Tensor cores accumulate tf32 and bf16 products in about 22 bits
	 * (cublaslt.c's u_acc), so a reordered sum (a library picking another
	 * split of k) may differ by that much more; the slots of one algorithm
	 * are in fact identical. fp16's results are binary16 and compared
	 * bit for bit, two to a 32-bit word: a word's float differs exactly
	 * when one of its halves does.
	 */
	if (p == BURN_FP16 || p == BURN_TENSOR)
		return 0;
	if (p == BURN_TF32 || p == BURN_BF16)
		eps = 0x1p-22;

	return (double)n * eps * sqrt((double)n) / 3;
}

/* --- one run ------------------------------------------------------------------ */

struct run {
	struct burn_unit *u;
	struct bench_dev *d;
	const struct bench_dev_ops *ops;
	size_t esize;
	size_t n;
	double deadline;
	uint64_t *buf; /* the GEMM's: A, B, then the slots; --memtest: the chunks */
	unsigned nbuf;
	size_t buf_bytes; /* each */
	uint64_t ctr;     /* counts (u32) then first indexes (u64), one each a buffer */
	bool have_ctr;
	size_t ctr_first, ctr_bytes;
	unsigned char *ctr_host;
	void *ha, *hb;            /* A and B on the host, n x n at least */
	unsigned pat;             /* the next memtest pattern */
	enum burn_precision prec; /* resolved */
	struct bench_gemm *lt;    /* tensor precisions: cuBLASLt on the device */
	enum bench_gemm_type bt;
	size_t in_es, out_es; /* bytes of an element of A and B, and of a slot */
	enum burn_phase phase;
	bool dead;  /* lost: no more calls */
	bool ended; /* lost or failed */
};

static bool
stopping(const struct run *r)
{
	return atomic_load(r->u->stop) != 0;
}

/* Record a failed call (rc < 0) of what; returns rc. */
static int
fail(struct run *r, int rc, const char *what, const struct err *err)
{
	struct burn_unit *u = r->u;

	if (rc >= 0 || r->ended)
		return rc;
	r->ended = true;
	r->dead = rc == E_LOST || rc == E_TIMEOUT;
	pthread_mutex_lock(&u->lock);
	u->st.state = r->dead ? BS_LOST : BS_FAILED;
	snprintf(u->st.error, sizeof(u->st.error), "%s: %s", what,
	         err && err->msg[0] ? err->msg : status_str(rc));
	pthread_mutex_unlock(&u->lock);
	return rc;
}

static void
set_phase(struct run *r, enum burn_phase p)
{
	r->phase = p;
	pthread_mutex_lock(&r->u->lock);
	r->u->st.phase = p;
	pthread_mutex_unlock(&r->u->lock);
}

/* A grid-stride launch's shape for n items. */
static void
shape1(const struct bench_dev *d, uint64_t n, unsigned grid[2], unsigned block[2])
{
	unsigned b = GRID_BLOCK, most = d->info.units ? d->info.units * 16 : 1024;
	uint64_t g;

	if (d->info.max_block && d->info.max_block < b)
		b = (unsigned)d->info.max_block;
	g = (n + b - 1) / b;
	if (g > most)
		g = most;
	grid[0] = g ? (unsigned)g : 1;
	grid[1] = 1;
	block[0] = b;
	block[1] = 1;
}

static struct bench_arg
arg_real(const struct run *r, double v)
{
	struct bench_arg a = { .type = r->esize == 8 ? BA_F64 : BA_F32 };

	if (r->esize == 8)
		a.v.f64 = v;
	else
		a.v.f32 = (float)v;
	return a;
}

static int
launch(struct run *r, enum bench_kern k, const unsigned grid[2], const unsigned block[2],
       const struct bench_arg *args, unsigned nargs)
{
	struct err err = ERR_INIT;
	int rc = r->ops->launch(r->d, 0, k, grid, block, args, nargs, &err);

	/* the backend's message names the kernel and the call */
	return fail(r, rc, burn_phase_name(r->phase), &err);
}

static int
sync_all(struct run *r, const char *what)
{
	struct err err = ERR_INIT;

	return fail(r, r->ops->sync(r->d, -1, &err), what, &err);
}

/* Bytes of a buffer of the load at n: a slot, or A or B (4-byte words, for the compare). */
static size_t
mat_bytes(const struct run *r, size_t n)
{
	return (n * n * r->out_es + 3) & ~(size_t)3;
}

/*
 * cuBLASLt's C = A B (column-major, as bench_gemm_reference() reads it) at
 * the run's type, the heuristic's first algorithm. A plan names its
 * buffers, so each GEMM is planned: the heuristic is a host call of
 * microseconds against GEMMs of milliseconds queued ahead, and it gives
 * the same first algorithm every time for the same problem.
 */
static int
gemm_lt(struct run *r, uint64_t a, uint64_t b, uint64_t c, size_t n)
{
	struct err err = ERR_INIT;
	unsigned nalgo = 0;
	int rc;

	rc = bench_gemm_plan(r->lt, r->bt, (unsigned)n, a, b, c, 0, 0, &nalgo, &err);
	if (rc >= 0 && !nalgo)
		rc = err_set(&err, E_NOTSUP,
		             "cublasLtMatmulAlgoGetHeuristic: no %s algorithm for %zu x %zu",
		             bench_gemm_type_name(r->bt), n, n);
	if (rc >= 0)
		rc = bench_gemm_run(r->lt, 0, &err);
	return fail(r, rc, "cuBLASLt", &err);
}

/* C = A x B into buffer c, queued. */
static int
gemm(struct run *r, uint64_t a, uint64_t b, uint64_t c, size_t n)
{
	if (r->lt)
		return gemm_lt(r, a, b, c, n);
	unsigned t = (unsigned)((n + BENCH_TILE - 1) / BENCH_TILE);
	unsigned grid[2] = { t, t }, block[2] = { BENCH_TILE, BENCH_TILE };
	struct bench_arg args[4] = { bench_arg_buf(a, 0), bench_arg_buf(b, 0), bench_arg_buf(c, 0),
		                     bench_arg_i32((int32_t)n) };

	return launch(r, r->esize == 8 ? BK_MATMUL_TILED_F64 : BK_MATMUL_TILED, grid, block, args,
	              4);
}

/* splitmix64: reproducible values in [-1, 1) for A and B */
static double
next_unit(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (double)(z >> 11) / (double)(1ull << 52) - 1.0;
}

static void *
host_matrix(size_t count, size_t esize, uint64_t seed)
{
	void *m = xmalloc(st_mult(count, esize));
	uint64_t s = seed;

	for (size_t i = 0; i < count; i++) {
		double v = next_unit(&s);

		if (esize == 8)
			((double *)m)[i] = v;
		else
			((float *)m)[i] = (float)v;
	}
	return m;
}

/* A tensor run's A (m 0) or B (m 1), count elements exact in the type. */
static void *
host_inputs(const struct run *r, int m, size_t count)
{
	void *p = xmalloc(st_mult(count, r->in_es));

	bench_gemm_fill(r->bt, m, 0, count, p);
	return p;
}

static double
host_get(const void *m, size_t esize, size_t i)
{
	return esize == 8 ? ((const double *)m)[i] : (double)((const float *)m)[i];
}

static void
free_bufs(struct run *r)
{
	if (!r->dead) {
		for (unsigned i = 0; i < r->nbuf; i++)
			r->ops->free(r->d, r->buf[i]);
		if (r->have_ctr)
			r->ops->free(r->d, r->ctr);
	}
	free(r->buf);
	r->buf = NULL;
	r->nbuf = 0;
	r->have_ctr = false;
	free(r->ctr_host);
	r->ctr_host = NULL;
}

/*
 * Buffers of bytes each, as many as budget holds (at most most), at least
 * least: an allocation refused once least are there ends the list, not
 * the run (another process may have taken memory since mem_info).
 */
static int
alloc_bufs(struct run *r, size_t bytes, unsigned long long budget, unsigned least, unsigned most)
{
	unsigned long long want = budget / bytes;
	struct err err = ERR_INIT;
	int rc;

	if (want > most)
		want = most;
	r->buf = xcalloc(want ? (size_t)want : 1, sizeof(*r->buf));
	r->buf_bytes = bytes;
	/* the counters first: a few bytes that must be there */
	r->ctr_first = (size_t)want * CTR_STRIDE;
	r->ctr_bytes = 2 * r->ctr_first;
	rc = r->ops->alloc(r->d, r->ctr_bytes, &r->ctr, &err);
	if (rc < 0)
		return fail(r, rc, "alloc (counters)", &err);
	r->have_ctr = true;
	r->ctr_host = xcalloc(1, r->ctr_bytes);
	while (r->nbuf < want) {
		err_clear(&err);
		rc = r->ops->alloc(r->d, bytes, &r->buf[r->nbuf], &err);
		if (rc < 0) {
			if (rc == E_LOST || rc == E_TIMEOUT || r->nbuf < least) {
				char what[96];

				snprintf(what, sizeof(what), "alloc of buffer %u (%zu bytes)",
				         r->nbuf, bytes);
				return fail(r, rc, what, &err);
			}
			break;
		}
		r->nbuf++;
	}
	if (r->nbuf < least) {
		err_set(&err, E_NOTSUP, "%llu bytes hold %llu buffers of %zu bytes, %u needed",
		        budget, want, bytes, least);
		return fail(r, E_NOTSUP, "memory", &err);
	}
	pthread_mutex_lock(&r->u->lock);
	r->u->st.bytes = (unsigned long long)r->nbuf * bytes + r->ctr_bytes;
	r->u->st.mem_chunks = r->nbuf;
	r->u->st.mem_bytes = (unsigned long long)r->nbuf * bytes;
	pthread_mutex_unlock(&r->u->lock);
	return 0;
}

/* The salt of chunk c: chunks hold different words, so that one aliased to another shows. */
static uint32_t
chunk_pattern(const struct burn_pattern *p, unsigned c)
{
	if (p->mode == BENCH_MEM_CONST)
		return p->pattern; /* walking ones must be what they say */
	return p->pattern ^ (uint32_t)(c * 0x01000193u);
}

/* One pattern over every buffer: written, checked on the device, the counts read. */
static int
memtest_pattern(struct run *r)
{
	struct burn_pattern p;
	struct err err = ERR_INIT;
	uint64_t words = r->buf_bytes / 4;
	unsigned grid[2], block[2];
	unsigned long long bad = 0;
	int rc;

	burn_pattern(r->pat, &p);
	memset(r->ctr_host, 0, r->ctr_first);
	for (unsigned c = 0; c < r->nbuf; c++) {
		uint64_t none = UINT64_MAX;

		memcpy(r->ctr_host + r->ctr_first + (size_t)c * CTR_STRIDE, &none, 8);
	}
	rc = r->ops->write(r->d, 0, r->ctr, 0, r->ctr_host, r->ctr_bytes, true, &err);
	if (rc < 0)
		return fail(r, rc, "write (memtest counters)", &err);
	shape1(r->d, words, grid, block);
	for (unsigned c = 0; c < r->nbuf; c++) {
		struct bench_arg a[4] = { bench_arg_buf(r->buf[c], 0), bench_arg_u64(words),
			                  bench_arg_u32(chunk_pattern(&p, c)),
			                  bench_arg_i32(p.mode) };

		if ((rc = launch(r, BK_MEM_FILL, grid, block, a, 4)) < 0)
			return rc;
	}
	for (unsigned c = 0; c < r->nbuf; c++) {
		struct bench_arg a[6] = { bench_arg_buf(r->buf[c], 0),
			                  bench_arg_u64(words),
			                  bench_arg_u32(chunk_pattern(&p, c)),
			                  bench_arg_i32(p.mode),
			                  bench_arg_buf(r->ctr, (uint64_t)c * CTR_STRIDE),
			                  bench_arg_buf(r->ctr,
			                                r->ctr_first + (uint64_t)c * CTR_STRIDE) };

		if ((rc = launch(r, BK_MEM_CHECK, grid, block, a, 6)) < 0)
			return rc;
	}
	if ((rc = sync_all(r, "sync (memtest)")) < 0)
		return rc;
	rc = r->ops->read(r->d, 0, r->ctr, 0, r->ctr_host, r->ctr_bytes, true, &err);
	if (rc < 0)
		return fail(r, rc, "read (memtest counters)", &err);
	for (unsigned c = 0; c < r->nbuf; c++) {
		uint32_t cnt;
		uint64_t first;
		bool new_first;

		memcpy(&cnt, r->ctr_host + (size_t)c * CTR_STRIDE, 4);
		if (!cnt)
			continue;
		bad += cnt;
		memcpy(&first, r->ctr_host + r->ctr_first + (size_t)c * CTR_STRIDE, 8);
		pthread_mutex_lock(&r->u->lock);
		new_first = !r->u->st.mem_first_set && first < words;
		pthread_mutex_unlock(&r->u->lock);
		if (new_first) {
			uint32_t want = bench_mem_word(first, chunk_pattern(&p, c), p.mode),
			         got = 0;
			bool got_read;

			err_clear(&err);
			rc = r->ops->read(r->d, 0, r->buf[c], first * 4, &got, 4, true, &err);
			got_read = rc == 0;
			if (rc == E_LOST || rc == E_TIMEOUT)
				return fail(r, rc, "read (the first bad word)", &err);
			pthread_mutex_lock(&r->u->lock);
			r->u->st.mem_first_set = true;
			r->u->st.mem_first_chunk = c;
			r->u->st.mem_first_index = first;
			r->u->st.mem_first_want = want;
			r->u->st.mem_first_got = got;
			r->u->st.mem_first_got_read = got_read;
			snprintf(r->u->st.mem_first_pattern, sizeof(r->u->st.mem_first_pattern),
			         "%s", p.name);
			pthread_mutex_unlock(&r->u->lock);
		}
	}
	pthread_mutex_lock(&r->u->lock);
	r->u->st.mem_patterns++;
	r->u->st.mem_words += words * r->nbuf;
	r->u->st.mem_bad += bad;
	if (++r->pat == NPATTERNS) {
		r->pat = 0;
		r->u->st.mem_passes++;
	}
	pthread_mutex_unlock(&r->u->lock);
	return 0;
}

/* Patterns, at least one, until until (monotonic seconds) or the stop flag. */
static int
memtest_until(struct run *r, double until)
{
	int rc;

	do {
		if ((rc = memtest_pattern(r)) < 0)
			return rc;
	} while (!stopping(r) && clock_mono() < until);
	return 0;
}

/* Seconds of one GEMM at n, on the buffers a, b, c (synchronised). */
static double
time_gemm(struct run *r, uint64_t a, uint64_t b, uint64_t c, size_t n)
{
	double t = clock_mono();

	if (gemm(r, a, b, c, n) < 0 || sync_all(r, "sync (gemm)") < 0)
		return -1;
	return clock_mono() - t;
}

/*
 * The size rule's timing half: from BURN_MIN_N (or less when memory
 * allows no more), doubled while the GEMM at the size measured took at
 * most an eighth of BURN_GEMM_MAX_S, so the next, eight times the work,
 * stays under it. Returns n, or 0 on a failure.
 */
static size_t
calibrate(struct run *r, size_t nmax, double *seconds)
{
	size_t m = mat_bytes(r, nmax), in = nmax * nmax * r->in_es,
	       n = nmax < BURN_MIN_N ? nmax : BURN_MIN_N;
	struct err err = ERR_INIT;
	uint64_t b[3];
	unsigned nb = 0;
	double t = -1;
	int rc = 0;

	for (; nb < 3; nb++) {
		rc = r->ops->alloc(r->d, m, &b[nb], &err);
		if (rc < 0)
			break;
	}
	if (rc < 0) {
		fail(r, rc, "alloc (calibration)", &err);
		goto out;
	}
	rc = r->ops->write(r->d, 0, b[0], 0, r->ha, in, true, &err);
	if (rc >= 0)
		rc = r->ops->write(r->d, 0, b[1], 0, r->hb, in, true, &err);
	if (rc < 0) {
		fail(r, rc, "write (A, B)", &err);
		goto out;
	}
	/* a warm-up: the first launch may build or load the kernel */
	if (time_gemm(r, b[0], b[1], b[2], n) < 0)
		goto out;
	for (;;) {
		t = time_gemm(r, b[0], b[1], b[2], n);
		if (t < 0 || stopping(r))
			break;
		if (2 * n > nmax || t * 8 > BURN_GEMM_MAX_S)
			break;
		n *= 2;
	}
out:
	if (!r->dead)
		for (unsigned i = 0; i < nb; i++)
			r->ops->free(r->d, b[i]);
	*seconds = t;
	return r->ended || t < 0 ? 0 : n;
}

/*
 * The reference (slot 0) against dot products in double on the host:
 * the corners, then pseudo-random elements; element (i, j)'s tolerance is
 * 2 n eps |row i of A| |column j of B| (bench/matmul.h's bound).
 */
/* A sampled element: the corners, then pseudo-random ones. */
static void
sample_at(size_t n, unsigned k, uint64_t *s, size_t *i, size_t *j)
{
	if (k < 4) {
		*i = k & 1 ? n - 1 : 0;
		*j = k & 2 ? n - 1 : 0;
	} else {
		*i = (size_t)((next_unit(s) + 1) / 2 * (double)n) % n;
		*j = (size_t)((next_unit(s) + 1) / 2 * (double)n) % n;
	}
}

static void
set_reference(struct run *r, unsigned checked, unsigned wrong, double worst)
{
	pthread_mutex_lock(&r->u->lock);
	r->u->st.ref_done = true;
	r->u->st.ref_checked = checked;
	r->u->st.ref_wrong = wrong;
	r->u->st.ref_max_ratio = worst;
	pthread_mutex_unlock(&r->u->lock);
}

/*
 * A tensor run's reference: element (i, j), column-major at j n + i,
 * against bench_gemm_reference(), the double sum of the same type-exact
 * inputs with the type's bound (its output rounding and its accumulation's).
 */
static int
check_reference_lt(struct run *r)
{
	size_t n = r->n;
	uint64_t s = 0x5eed;
	unsigned wrong = 0, checked = 0;
	double worst = 0;
	struct err err = ERR_INIT;

	for (unsigned k = 0; k < BURN_SAMPLES && k < n * n; k++) {
		unsigned char raw[8] = { 0 };
		double want, got, tol = 0;
		size_t i, j;
		int rc;

		sample_at(n, k, &s, &i, &j);
		want = bench_gemm_reference(r->bt, (unsigned)n, (unsigned)i, (unsigned)j, &tol);
		rc = r->ops->read(r->d, 0, r->buf[2], (j * n + i) * r->out_es, raw, r->out_es, true,
		                  &err);
		if (rc < 0)
			return fail(r, rc, "read (the reference)", &err);
		got = bench_gemm_decode(r->bt, raw);
		checked++;
		if (!isfinite(got) || fabs(got - want) > tol) {
			wrong++;
			worst = INFINITY;
		} else if (tol > 0 && fabs(got - want) / tol > worst) {
			worst = fabs(got - want) / tol;
		}
	}
	set_reference(r, checked, wrong, worst);
	return 0;
}

static int
check_reference(struct run *r)
{
	size_t n = r->n, es = r->esize;
	double eps = es == 8 ? DBL_EPSILON : FLT_EPSILON, worst = 0;
	uint64_t s = 0x5eed;
	unsigned wrong = 0, checked = 0;
	struct err err = ERR_INIT;

	for (unsigned k = 0; k < BURN_SAMPLES && k < n * n; k++) {
		size_t i, j;
		double want = 0, na = 0, nb = 0, got, tol;
		unsigned char raw[8];
		int rc;

		sample_at(n, k, &s, &i, &j);
		for (size_t q = 0; q < n; q++) {
			double a = host_get(r->ha, es, i * n + q),
			       b = host_get(r->hb, es, q * n + j);

			want += a * b;
			na += a * a;
			nb += b * b;
		}
		rc = r->ops->read(r->d, 0, r->buf[2], (i * n + j) * es, raw, es, true, &err);
		if (rc < 0)
			return fail(r, rc, "read (the reference)", &err);
		if (es == 8) {
			memcpy(&got, raw, 8);
		} else {
			float f;

			memcpy(&f, raw, 4);
			got = f;
		}
		tol = 2 * (double)n * eps * sqrt(na) * sqrt(nb);
		checked++;
		if (!isfinite(got) || fabs(got - want) > tol) {
			wrong++;
			worst = INFINITY;
		} else if (tol > 0 && fabs(got - want) / tol > worst) {
			worst = fabs(got - want) / tol;
		}
	}
	set_reference(r, checked, wrong, worst);
	return 0;
}

/* GEMMs into the slots, each compared with the reference, until until. */
static int
load_until(struct run *r, double until)
{
	unsigned slots = r->nbuf - 2, next = 1, batch;
	/* the compare's elements: a tensor run's slots as f32 words (fp16: two results each) */
	uint64_t ref = r->buf[2], elems = r->lt ? mat_bytes(r, r->n) / 4 : (uint64_t)r->n * r->n;
	double per, tol = burn_tolerance(r->n, r->prec);
	unsigned *list = xcalloc(slots, sizeof(*list));
	struct err err = ERR_INIT;
	unsigned grid[2], block[2];
	bool first = true;
	int rc = 0;

	pthread_mutex_lock(&r->u->lock);
	per = r->u->st.gemm_seconds > 1e-6 ? r->u->st.gemm_seconds : 1e-6;
	pthread_mutex_unlock(&r->u->lock);
	shape1(r->d, elems, grid, block);
	while (!stopping(r)) {
		unsigned long long wrong = 0, wrong_gemms = 0;
		double t, dt;

		double want = BURN_BATCH_S / per, left = (until - clock_mono()) / per;

		/* at least one batch, then none that would end past until */
		if (!first && want > left)
			want = left;
		if (want < 1 && !first)
			break;
		batch = want < 1 ? 1 : want > slots - 1 ? slots - 1 : (unsigned)want;
		first = false;
		memset(r->ctr_host, 0, (size_t)batch * CTR_STRIDE);
		rc = r->ops->write(r->d, 0, r->ctr, 0, r->ctr_host, (size_t)batch * CTR_STRIDE,
		                   true, &err);
		if (rc < 0) {
			fail(r, rc, "write (compare counters)", &err);
			break;
		}
		t = clock_mono();
		for (unsigned i = 0; i < batch && rc >= 0; i++) {
			list[i] = next;
			next = next + 1 >= slots ? 1 : next + 1;
			rc = gemm(r, r->buf[0], r->buf[1], r->buf[2 + list[i]], r->n);
		}
		for (unsigned i = 0; i < batch && rc >= 0; i++) {
			struct bench_arg a[5] = { bench_arg_buf(ref, 0),
				                  bench_arg_buf(r->buf[2 + list[i]], 0),
				                  bench_arg_u64(elems), arg_real(r, tol),
				                  bench_arg_buf(r->ctr, (uint64_t)i * CTR_STRIDE) };

			rc = launch(r, r->esize == 8 ? BK_COMPARE_F64 : BK_COMPARE_F32, grid, block,
			            a, 5);
		}
		if (rc < 0 || (rc = sync_all(r, "sync (gemm)")) < 0)
			break;
		dt = clock_mono() - t;
		rc = r->ops->read(r->d, 0, r->ctr, 0, r->ctr_host, (size_t)batch * CTR_STRIDE, true,
		                  &err);
		if (rc < 0) {
			fail(r, rc, "read (compare counters)", &err);
			break;
		}
		for (unsigned i = 0; i < batch; i++) {
			uint32_t c;

			memcpy(&c, r->ctr_host + (size_t)i * CTR_STRIDE, 4);
			wrong += c;
			wrong_gemms += c != 0;
		}
		if (dt > 0)
			per = dt / batch;
		pthread_mutex_lock(&r->u->lock);
		r->u->st.gemms += batch;
		r->u->st.load_seconds += dt;
		r->u->st.tflops_last = dt > 0 ? 2.0 * (double)r->n * (double)r->n * (double)r->n *
		                                        batch / dt / 1e12
		                              : 0;
		r->u->st.wrong += wrong;
		r->u->st.wrong_gemms += wrong_gemms;
		pthread_mutex_unlock(&r->u->lock);
	}
	free(list);
	return rc < 0 ? rc : 0;
}

/* The GEMM burn with its memtest passes; the buffers are left to the caller to free. */
static int
run_gemm(struct run *r, unsigned long long budget)
{
	const struct burn_opts *o = &r->u->opts;
	double edge = o->memtest == BURN_MEMTEST_EDGES ? o->duration * BURN_EDGE_FRAC : 0;
	unsigned long long maxa = r->d->info.max_alloc;
	size_t nmax, m, n;
	double t;
	struct err err = ERR_INIT;
	int rc;

	if (o->n) {
		nmax = o->n;
		m = mat_bytes(r, nmax);
		if (4 * (unsigned long long)m > budget || (maxa && m > maxa)) {
			err_set(&err, E_NOTSUP,
			        "%zu x %zu needs %llu bytes for A, B and two slots; %llu may be taken",
			        nmax, nmax, 4 * (unsigned long long)m, budget);
			return fail(r, E_NOTSUP, "memory", &err);
		}
	} else {
		nmax = burn_pick_n(budget, maxa, r->out_es);
		if (!nmax) {
			err_set(&err, E_NOTSUP, "%llu bytes may be taken: not enough for 16 x 16",
			        budget);
			return fail(r, E_NOTSUP, "memory", &err);
		}
	}
	if (r->lt) {
		/* bench_gemm_value(): any n's inputs are the first n^2 elements */
		r->ha = host_inputs(r, 0, nmax * nmax);
		r->hb = host_inputs(r, 1, nmax * nmax);
	} else {
		r->ha = host_matrix(nmax * nmax, r->esize, o->seed);
		r->hb = host_matrix(nmax * nmax, r->esize, (uint64_t)o->seed * 7919 + 1);
	}
	if (o->n) {
		n = o->n;
		t = 0;
	} else if (!(n = calibrate(r, nmax, &t))) {
		return -1;
	}
	r->n = n;
	m = mat_bytes(r, n);
	pthread_mutex_lock(&r->u->lock);
	r->u->st.n = n;
	r->u->st.gemm_seconds = t;
	r->u->st.tolerance = burn_tolerance(n, r->prec);
	pthread_mutex_unlock(&r->u->lock);
	if (stopping(r))
		return 0;
	if ((rc = alloc_bufs(r, m, budget, 4, 2 + BURN_MAX_SLOTS)) < 0)
		return rc;
	pthread_mutex_lock(&r->u->lock);
	r->u->st.slots = r->nbuf - 2;
	pthread_mutex_unlock(&r->u->lock);
	if (edge > 0) {
		set_phase(r, BP_MEMTEST_START);
		if ((rc = memtest_until(r, clock_mono() + edge)) < 0 || stopping(r))
			return rc;
	}
	set_phase(r, BP_GEMM);
	/* A and B: the first n x n of the host's (row-major, so a matrix of its own) */
	rc = r->ops->write(r->d, 0, r->buf[0], 0, r->ha, n * n * r->in_es, true, &err);
	if (rc >= 0)
		rc = r->ops->write(r->d, 0, r->buf[1], 0, r->hb, n * n * r->in_es, true, &err);
	if (rc < 0)
		return fail(r, rc, "write (A, B)", &err);
	t = time_gemm(r, r->buf[0], r->buf[1], r->buf[2], n);
	if (t < 0)
		return -1;
	/* the reference's time, warm and at n, paces the batches */
	pthread_mutex_lock(&r->u->lock);
	r->u->st.gemm_seconds = t;
	pthread_mutex_unlock(&r->u->lock);
	if ((rc = r->lt ? check_reference_lt(r) : check_reference(r)) < 0)
		return rc;
	if ((rc = load_until(r, r->deadline - edge)) < 0 || stopping(r))
		return rc;
	if (edge > 0) {
		set_phase(r, BP_MEMTEST_END);
		rc = memtest_until(r, r->deadline);
	}
	return rc;
}

/*
 * A tensor precision on r's device: resolved for its compute capability,
 * cuBLASLt loaded, the compare kernel there. -1 (recorded) when it cannot:
 * an OpenCL device, no tensor cores for the type, no library.
 */
static int
open_tensor(struct run *r)
{
	enum burn_precision asked = r->prec;
	const char *what = burn_precision_name(asked);
	struct err err = ERR_INIT;
	char why[160];
	int rc;

	if (!bench_cuda_is(r->d)) {
		err_set(&err, E_NOTSUP,
		        "tensor precisions run through cuBLASLt on CUDA devices; this one is %s "
		        "(fp32, fp64 run here)",
		        r->d->info.api[0] ? r->d->info.api : "another API");
		return fail(r, E_NOTSUP, what, &err);
	}
	if (burn_precision_resolve(asked, r->d->info.cc_major, r->d->info.cc_minor, &r->prec, why,
	                           sizeof(why)) < 0) {
		err_set(&err, E_NOTSUP, "%s", why);
		return fail(r, E_NOTSUP, what, &err);
	}
	r->bt = r->prec == BURN_TF32 ? BG_TF32 : r->prec == BURN_FP16 ? BG_FP16 : BG_BF16;
	r->in_es = bench_gemm_in_size(r->bt);
	r->out_es = bench_gemm_out_size(r->bt);
	r->esize = 4; /* the compare's: gs_compare_f32 over the slots' words */
	pthread_mutex_lock(&r->u->lock);
	r->u->st.precision = r->prec;
	pthread_mutex_unlock(&r->u->lock);
	if (!r->ops->has(r->d, BK_COMPARE_F32)) {
		err_set(&err, E_NOTSUP, "the device cannot run %s",
		        bench_kern_name(BK_COMPARE_F32));
		return fail(r, E_NOTSUP, burn_precision_name(r->prec), &err);
	}
	rc = bench_gemm_open(r->d, &r->lt, &err);
	if (rc < 0) {
		r->lt = NULL;
		return fail(r, rc, burn_precision_name(r->prec), &err);
	}
	pthread_mutex_lock(&r->u->lock);
	snprintf(r->u->st.library, sizeof(r->u->st.library), "%s", bench_gemm_version(r->lt));
	pthread_mutex_unlock(&r->u->lock);
	return 0;
}

void
burn_unit_init(struct burn_unit *u, struct bench_dev *d, const struct burn_opts *o,
               atomic_int *stop)
{
	memset(u, 0, sizeof(*u));
	u->dev = d;
	u->opts = *o;
	if (!u->opts.seed)
		u->opts.seed = DEFAULT_SEED;
	u->stop = stop;
	pthread_mutex_init(&u->lock, NULL);
	u->st.phase = BP_SETUP;
	u->st.state = BS_RUNNING;
	u->st.precision = u->opts.precision;
	atomic_init(&u->finished, false);
	u->t0 = clock_mono();
}

void
burn_unit_run(struct burn_unit *u)
{
	struct run r = { .u = u, .d = u->dev, .ops = u->dev->ops };
	unsigned long long free_b = 0, total = 0, budget;
	struct err err = ERR_INIT;
	int rc;

	u->t0 = clock_mono();
	r.deadline = u->t0 + u->opts.duration;
	r.prec = u->opts.precision;
	r.esize = r.prec == BURN_FP64 ? 8 : 4;
	r.in_es = r.out_es = r.esize;
	if (u->opts.memtest != BURN_MEMTEST_ONLY && burn_precision_tensor(r.prec)) {
		if (open_tensor(&r) < 0)
			goto out;
	} else if (u->opts.memtest != BURN_MEMTEST_ONLY) {
		enum bench_kern need[2] = { r.esize == 8 ? BK_MATMUL_TILED_F64 : BK_MATMUL_TILED,
			                    r.esize == 8 ? BK_COMPARE_F64 : BK_COMPARE_F32 };

		for (int i = 0; i < 2; i++)
			if (!r.ops->has(r.d, need[i])) {
				err_set(&err, E_NOTSUP, "the device cannot run %s%s",
				        bench_kern_name(need[i]),
				        r.esize == 8 && !r.d->info.has_fp64 ? " (no FP64)" : "");
				fail(&r, E_NOTSUP, burn_precision_name(u->opts.precision), &err);
				goto out;
			}
	}
	if (u->opts.memtest != BURN_MEMTEST_OFF &&
	    (!r.ops->has(r.d, BK_MEM_FILL) || !r.ops->has(r.d, BK_MEM_CHECK))) {
		err_set(&err, E_NOTSUP, "the device cannot run gs_mem_fill and gs_mem_check");
		fail(&r, E_NOTSUP, "memtest", &err);
		goto out;
	}
	if (r.d->info.max_block && r.d->info.max_block < BENCH_TILE * BENCH_TILE && !r.lt &&
	    u->opts.memtest != BURN_MEMTEST_ONLY) {
		err_set(&err, E_NOTSUP, "blocks of at most %zu work-items; the tiled GEMM needs %d",
		        r.d->info.max_block, BENCH_TILE * BENCH_TILE);
		fail(&r, E_NOTSUP, "gemm", &err);
		goto out;
	}
	rc = r.ops->mem_info(r.d, &free_b, &total, &err);
	if (rc < 0) {
		fail(&r, rc, "mem_info", &err);
		goto out;
	}
	budget = burn_budget(free_b, total, r.d->info.cpu, u->opts.max_bytes);
	if (u->opts.memtest == BURN_MEMTEST_ONLY) {
		unsigned long long chunk = MEMTEST_CHUNK;

		if (r.d->info.max_alloc && chunk > r.d->info.max_alloc)
			chunk = r.d->info.max_alloc;
		/* eight at least, so that one aliased to another shows (chunk_pattern()) */
		if (chunk > budget / 8)
			chunk = budget / 8;
		chunk &= ~15ULL;
		if (!chunk) {
			err_set(&err, E_NOTSUP, "%llu bytes free: nothing to test", free_b);
			fail(&r, E_NOTSUP, "memory", &err);
			goto out;
		}
		if (alloc_bufs(&r, (size_t)chunk, budget, 1, BURN_MAX_SLOTS) < 0)
			goto out;
		set_phase(&r, BP_MEMTEST);
		memtest_until(&r, r.deadline);
	} else {
		run_gemm(&r, budget);
	}
out:
	free_bufs(&r);
	if (r.lt)
		bench_gemm_close(r.lt);
	free(r.ha);
	free(r.hb);
	pthread_mutex_lock(&u->lock);
	if (u->st.state == BS_RUNNING)
		u->st.state = BS_DONE;
	u->st.phase = BP_DONE;
	u->st.stopped = atomic_load(u->stop) != 0;
	u->st.seconds = clock_mono() - u->t0;
	pthread_mutex_unlock(&u->lock);
	atomic_store(&u->finished, true);
}

static void *
unit_thread(void *arg)
{
	burn_unit_run(arg);
	return NULL;
}

int
burn_unit_start(struct burn_unit *u)
{
	int e = pthread_create(&u->thread, NULL, unit_thread, u);

	if (e) {
		pthread_mutex_lock(&u->lock);
		u->st.state = BS_FAILED;
		u->st.phase = BP_DONE;
		snprintf(u->st.error, sizeof(u->st.error), "pthread_create: %s", strerror(e));
		pthread_mutex_unlock(&u->lock);
		atomic_store(&u->finished, true);
		return -1;
	}
	u->started = true;
	return 0;
}

void
burn_unit_join(struct burn_unit *u)
{
	if (u->started)
		pthread_join(u->thread, NULL);
	u->started = false;
}

void
burn_unit_stats(struct burn_unit *u, struct burn_stats *out)
{
	pthread_mutex_lock(&u->lock);
	*out = u->st;
	if (out->state == BS_RUNNING)
		out->seconds = clock_mono() - u->t0;
	pthread_mutex_unlock(&u->lock);
}

void
burn_unit_release(struct burn_unit *u)
{
	burn_unit_join(u);
	pthread_mutex_destroy(&u->lock);
}
