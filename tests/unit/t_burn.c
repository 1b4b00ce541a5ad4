/*
 * gpuscope burn's engine (bench/burn.c) on a mock device whose kernels run
 * on the CPU: a clean run counts nothing wrong and frees every buffer; a
 * GEMM with one wrong element, a reference wrong from the start, a stuck
 * bit in one buffer, a device lost mid-run, the stop flag, FP64, the
 * memtest alone, and two devices at once, one of them lost; and the rules
 * (patterns, budget, size, tolerance).
 */
#include "harness.h"

#include <float.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "bench/burn.h"
#include "bench/dev.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/xalloc.h"

#define MAXBUF 64

struct mock {
	struct bench_dev d;
	unsigned char *mem[MAXBUF];
	size_t size[MAXBUF];
	unsigned long long free_bytes;
	unsigned live; /* buffers allocated and not freed */
	unsigned gemms;
	unsigned corrupt_gemm; /* this GEMM (1-based) gets element corrupt_at wrong; 0: none */
	size_t corrupt_at;
	int stuck_buf, stuck_word; /* after each fill of that buffer, bit 0 of that word flipped */
	unsigned lose_after;       /* launches before the device is lost; 0: never */
	unsigned launches;
	bool lost;
	unsigned calls_after_loss;
	bool no_fp64;
};

static struct mock *
M(struct bench_dev *d)
{
	return (struct mock *)d;
}

static int
gone(struct mock *m, struct err *err)
{
	m->calls_after_loss++;
	return err_set(err, E_LOST, "cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED (719)");
}

static bool
m_has(struct bench_dev *d, enum bench_kern k)
{
	return !(M(d)->no_fp64 && (k == BK_MATMUL_TILED_F64 || k == BK_COMPARE_F64));
}

static int
m_mem_info(struct bench_dev *d, unsigned long long *free_b, unsigned long long *total,
           struct err *err)
{
	if (M(d)->lost)
		return gone(M(d), err);
	*free_b = M(d)->free_bytes;
	*total = M(d)->free_bytes;
	return 0;
}

static int
m_alloc(struct bench_dev *d, size_t bytes, uint64_t *buf, struct err *err)
{
	struct mock *m = M(d);

	if (m->lost)
		return gone(m, err);
	for (unsigned i = 0; i < MAXBUF; i++)
		if (!m->mem[i]) {
			m->mem[i] = xcalloc(1, bytes);
			m->size[i] = bytes;
			m->live++;
			*buf = i + 1;
			return 0;
		}
	return err_set(err, E_BUSY, "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (2)");
}

static void
m_free(struct bench_dev *d, uint64_t buf)
{
	struct mock *m = M(d);

	if (m->lost) {
		m->calls_after_loss++;
		return;
	}
	if (buf && buf <= MAXBUF && m->mem[buf - 1]) {
		free(m->mem[buf - 1]);
		m->mem[buf - 1] = NULL;
		m->live--;
	}
}

static unsigned char *
at(struct mock *m, uint64_t buf, uint64_t off)
{
	return buf && buf <= MAXBUF && m->mem[buf - 1] ? m->mem[buf - 1] + off : NULL;
}

static int
m_write(struct bench_dev *d, int stream, uint64_t buf, size_t off, const void *host, size_t bytes,
        bool sync, struct err *err)
{
	(void)stream;
	(void)sync;
	if (M(d)->lost)
		return gone(M(d), err);
	memcpy(at(M(d), buf, off), host, bytes);
	return 0;
}

static int
m_read(struct bench_dev *d, int stream, uint64_t buf, size_t off, void *host, size_t bytes,
       bool sync, struct err *err)
{
	(void)stream;
	(void)sync;
	if (M(d)->lost)
		return gone(M(d), err);
	memcpy(host, at(M(d), buf, off), bytes);
	return 0;
}

static void *
P(struct mock *m, const struct bench_arg *a)
{
	return at(m, a->v.b.buf, a->v.b.off);
}

static int
m_launch(struct bench_dev *d, int stream, enum bench_kern k, const unsigned grid[2],
         const unsigned block[2], const struct bench_arg *a, unsigned nargs, struct err *err)
{
	struct mock *m = M(d);

	(void)stream;
	(void)grid;
	(void)block;
	(void)nargs;
	if (m->lost)
		return gone(m, err);
	if (m->lose_after && ++m->launches > m->lose_after) {
		m->lost = true;
		return err_set(err, E_LOST, "cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED (719)");
	}
	switch (k) {
	case BK_MATMUL_TILED:
	case BK_MATMUL_TILED_F64: {
		size_t n = (size_t)a[3].v.i32;
		bool f64 = k == BK_MATMUL_TILED_F64;

		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < n; j++) {
				double s = 0;

				for (size_t q = 0; q < n; q++)
					s += f64 ? ((double *)P(m, &a[0]))[i * n + q] *
					                     ((double *)P(m, &a[1]))[q * n + j]
					         : (double)((float *)P(m, &a[0]))[i * n + q] *
					                     ((float *)P(m, &a[1]))[q * n + j];
				if (f64)
					((double *)P(m, &a[2]))[i * n + j] = s;
				else
					((float *)P(m, &a[2]))[i * n + j] = (float)s;
			}
		if (++m->gemms == m->corrupt_gemm) {
			if (f64)
				((double *)P(m, &a[2]))[m->corrupt_at] += 0.5;
			else
				((float *)P(m, &a[2]))[m->corrupt_at] += 0.5f;
		}
		return 0;
	}
	case BK_COMPARE_F32:
	case BK_COMPARE_F64: {
		uint32_t *count = P(m, &a[4]);

		for (uint64_t i = 0; i < a[2].v.u64; i++) {
			double w, g, tol;

			if (k == BK_COMPARE_F64) {
				w = ((double *)P(m, &a[0]))[i];
				g = ((double *)P(m, &a[1]))[i];
				tol = a[3].v.f64;
			} else {
				w = ((float *)P(m, &a[0]))[i];
				g = ((float *)P(m, &a[1]))[i];
				tol = a[3].v.f32;
			}
			if (fabs(g - w) > tol || !isfinite(g))
				(*count)++;
		}
		return 0;
	}
	case BK_MEM_FILL: {
		uint32_t *p = P(m, &a[0]);

		for (uint64_t i = 0; i < a[1].v.u64; i++)
			p[i] = bench_mem_word(i, a[2].v.u32, a[3].v.i32);
		if (m->stuck_buf >= 0 && a[0].v.b.buf == (uint64_t)m->stuck_buf + 1)
			p[m->stuck_word] ^= 1;
		return 0;
	}
	case BK_MEM_CHECK: {
		const uint32_t *p = P(m, &a[0]);
		uint32_t *count = P(m, &a[4]);
		uint64_t *first = P(m, &a[5]);

		for (uint64_t i = 0; i < a[1].v.u64; i++)
			if (p[i] != bench_mem_word(i, a[2].v.u32, a[3].v.i32)) {
				(*count)++;
				if (i < *first)
					*first = i;
			}
		return 0;
	}
	default:
		return err_set(err, E_NOTSUP, "mock: %s not implemented", bench_kern_name(k));
	}
}

static int
m_sync(struct bench_dev *d, int stream, struct err *err)
{
	(void)stream;
	return M(d)->lost ? gone(M(d), err) : 0;
}

static void
m_close(struct bench_dev *d)
{
	(void)d;
}

static const struct bench_dev_ops mock_ops = {
	.has = m_has,
	.mem_info = m_mem_info,
	.alloc = m_alloc,
	.free = m_free,
	.write = m_write,
	.read = m_read,
	.launch = m_launch,
	.sync = m_sync,
	.close = m_close,
};

static void
mock_init(struct mock *m)
{
	memset(m, 0, sizeof(*m));
	m->d.ops = &mock_ops;
	m->d.timeout_s = 60;
	snprintf(m->d.info.id, sizeof(m->d.info.id), "mock:0");
	m->d.info.units = 4;
	m->d.info.max_block = 1024;
	m->d.info.has_fp64 = true;
	m->free_bytes = 1ULL << 30;
	m->stuck_buf = -1;
}

static void
mock_release(struct mock *m)
{
	for (unsigned i = 0; i < MAXBUF; i++)
		free(m->mem[i]);
}

/* One burn of m with o (n 32 and little memory unless set), on this thread. */
static void
burn(struct mock *m, struct burn_opts *o, struct burn_stats *st)
{
	struct burn_unit u;
	atomic_int stop;

	atomic_init(&stop, 0);
	burn_unit_init(&u, &m->d, o, &stop);
	burn_unit_run(&u);
	burn_unit_stats(&u, st);
	burn_unit_release(&u);
}

static void
small_opts(struct burn_opts *o, double seconds)
{
	burn_opts_init(o);
	o->duration = seconds;
	o->n = 32;
	o->max_bytes = 12 * 32 * 32 * 8; /* A, B and 10 slots in FP64, 22 in FP32 */
}

static void
test_rules(void)
{
	struct burn_pattern p;
	bool seen_modes[3] = { false, false, false };

	is_int(burn_npatterns(), 72, "a pass is 72 patterns");
	burn_pattern(0, &p);
	ok(p.mode == BENCH_MEM_CONST && p.pattern == 0 && !strcmp(p.name, "zeros"), "first: zeros");
	burn_pattern(3, &p);
	ok(p.mode == BENCH_MEM_ADDRESS && p.pattern == ~0u,
	   "pattern 3: the inversion's complement");
	burn_pattern(5 + 2 * 7, &p);
	ok(p.mode == BENCH_MEM_CONST && p.pattern == 1u << 7 && !strcmp(p.name, "walking-one-7"),
	   "walking one 7 is 1 << 7 (%s)", p.name);
	burn_pattern(5 + 2 * 31 + 1, &p);
	ok(p.pattern == ~(1u << 31) && !strcmp(p.name, "walking-zero-31"), "walking zero 31 (%s)",
	   p.name);
	for (unsigned i = 0; i < burn_npatterns(); i++) {
		burn_pattern(i, &p);
		seen_modes[p.mode] = true;
	}
	ok(seen_modes[0] && seen_modes[1] && seen_modes[2], "all three modes in a pass");

	is_int(burn_budget(80ULL << 30, 80ULL << 30, false, 0),
	       (unsigned long long)(0.9 * (80ULL << 30)), "budget: 90 %% of free");
	is_int(burn_budget(1ULL << 30, 1ULL << 30, false, 0), (1ULL << 30) - BURN_MEM_MARGIN,
	       "budget: never past free minus the margin");
	is_int(burn_budget(100ULL << 20, 100ULL << 20, false, 0), 0,
	       "budget: none under the margin");
	is_int(burn_budget(64ULL << 30, 64ULL << 30, true, 0), BURN_CPU_MAX_MEM,
	       "budget: a CPU device's capped");
	is_int(burn_budget(64ULL << 30, 64ULL << 30, false, 1000), 1000, "budget: max caps");
	is_int(burn_pick_n(100ULL << 30, 0, 4), 8192, "size: 8192 on a big GPU");
	is_int(burn_pick_n(100ULL << 20, 0, 4), 2048,
	       "size: 100 MiB holds four 2048s (64 MiB), not 4096");
	is_int(burn_pick_n(100ULL << 30, 1ULL << 20, 8), 256,
	       "size: max_alloc of 1 MiB: 256 in FP64");
	is_int(burn_pick_n(1000, 0, 4), 0, "size: none in 1000 bytes");
	is_dbl(burn_tolerance(8192, BURN_FP32), 8192 * FLT_EPSILON * sqrt(8192.0) / 3, 1e-12,
	       "tolerance: n eps sqrt(n) / 3");
	ok(burn_tolerance(8192, BURN_FP64) < 1e-9, "FP64 tolerance is tighter");
}

static void
test_clean(void)
{
	struct mock m;
	struct burn_opts o;
	struct burn_stats st;

	mock_init(&m);
	small_opts(&o, 0.3);
	burn(&m, &o, &st);
	is_int(st.state, BS_DONE, "clean: done (%s)", st.error);
	ok(st.gemms > 0, "clean: %llu GEMMs compared", st.gemms);
	is_int(st.wrong, 0, "clean: nothing wrong");
	ok(st.ref_done && st.ref_checked == BURN_SAMPLES && st.ref_wrong == 0,
	   "clean: the reference checked on %u elements", st.ref_checked);
	is_int(st.slots, 22, "clean: 22 slots in the budget (24 matrices of 4 KiB)");
	ok(st.mem_patterns >= 2 && st.mem_bad == 0, "clean: %llu memtest patterns, no bad word",
	   st.mem_patterns);
	is_int(st.mem_words, st.mem_patterns * 24 * 32 * 32, "clean: every word of the 24 buffers");
	is_int(m.live, 0, "clean: every buffer freed");
	ok(!burn_stats_fault(&st), "clean: no fault");
	ok(st.seconds >= 0.25 && st.seconds < 5, "clean: ran its duration (%.2f s)", st.seconds);
	ok(st.tflops_last > 0, "clean: a throughput");
	mock_release(&m);
}

static void
test_corrupt(void)
{
	struct mock m;
	struct burn_opts o;
	struct burn_stats st;

	mock_init(&m);
	small_opts(&o, 0.2);
	m.corrupt_gemm = 3; /* the reference is the first */
	m.corrupt_at = 100;
	burn(&m, &o, &st);
	is_int(st.wrong, 1, "one wrong element counted");
	is_int(st.wrong_gemms, 1, "in one GEMM");
	is_int(st.ref_wrong, 0, "the reference itself fine");
	ok(burn_stats_fault(&st), "a fault");
	mock_release(&m);

	mock_init(&m);
	small_opts(&o, 0.2);
	m.corrupt_gemm = 1;
	m.corrupt_at = 0; /* a corner: the host check samples them */
	burn(&m, &o, &st);
	is_int(st.ref_wrong, 1, "a reference wrong from the start is caught on the host");
	ok(st.wrong == st.gemms && st.gemms > 0,
	   "and every later GEMM differs from it (%llu of %llu)", st.wrong, st.gemms);
	ok(burn_stats_fault(&st), "a fault");
	mock_release(&m);

	mock_init(&m);
	small_opts(&o, 0.2);
	o.precision = BURN_FP64;
	m.corrupt_gemm = 4;
	m.corrupt_at = 1023;
	burn(&m, &o, &st);
	is_int(st.state, BS_DONE, "fp64: done (%s)", st.error);
	ok(st.wrong == 1 && st.gemms > 2, "fp64: one wrong element in %llu GEMMs", st.gemms);
	mock_release(&m);

	mock_init(&m);
	m.no_fp64 = true;
	small_opts(&o, 0.2);
	o.precision = BURN_FP64;
	burn(&m, &o, &st);
	ok(st.state == BS_FAILED && strstr(st.error, "gs_matmul_tiled_f64"),
	   "fp64 on a device without it: failed, saying so (%s)", st.error);
	ok(!burn_stats_fault(&st), "which is not a fault of the device");
	mock_release(&m);
}

static void
test_memtest(void)
{
	struct mock m;
	struct burn_opts o;
	struct burn_stats st;

	mock_init(&m);
	small_opts(&o, 0.2);
	o.memtest = BURN_MEMTEST_OFF;
	m.stuck_buf = 3;
	m.stuck_word = 17;
	burn(&m, &o, &st);
	ok(st.mem_patterns == 0 && st.mem_bad == 0, "--no-memtest: no pattern run");
	mock_release(&m);

	mock_init(&m);
	small_opts(&o, 0.2);
	m.stuck_buf = 3; /* the mock's buffers in the order allocated: the counters, A, B, slot 0 */
	m.stuck_word = 17;
	burn(&m, &o, &st);
	ok(st.mem_bad == st.mem_patterns && st.mem_bad > 0,
	   "a flipped bit is one bad word in each pattern (%llu)", st.mem_bad);
	ok(st.mem_first_set && st.mem_first_chunk == 2 && st.mem_first_index == 17,
	   "the first bad word: buffer 2, word 17 (%u, %llu)", st.mem_first_chunk,
	   (unsigned long long)st.mem_first_index);
	ok(st.mem_first_got_read && (st.mem_first_got ^ st.mem_first_want) == 1,
	   "with what was read (%08x, wanted %08x)", st.mem_first_got, st.mem_first_want);
	ok(!strcmp(st.mem_first_pattern, "zeros"), "in the first pattern (%s)",
	   st.mem_first_pattern);
	ok(burn_stats_fault(&st), "a fault");
	is_int(m.live, 0, "buffers freed");
	mock_release(&m);

	mock_init(&m);
	burn_opts_init(&o);
	o.duration = 0.3;
	o.memtest = BURN_MEMTEST_ONLY;
	o.max_bytes = 8 * 4096;
	burn(&m, &o, &st);
	is_int(st.state, BS_DONE, "--memtest: done (%s)", st.error);
	ok(st.gemms == 0 && st.mem_passes >= 1, "--memtest: %u whole passes, no GEMM",
	   st.mem_passes);
	is_int(st.mem_chunks, 8, "--memtest: the budget in 8 chunks");
	mock_release(&m);
}

static void
test_lost(void)
{
	struct mock m;
	struct burn_opts o;
	struct burn_stats st;

	mock_init(&m);
	small_opts(&o, 5);
	m.lose_after = 40;
	burn(&m, &o, &st);
	is_int(st.state, BS_LOST, "lost mid-run: lost");
	ok(strstr(st.error, "CUDA_ERROR_LAUNCH_FAILED") != NULL, "with the call's error (%s)",
	   st.error);
	is_int(m.calls_after_loss, 0, "nothing asked of it after the loss");
	ok(burn_stats_fault(&st), "a fault");
	ok(st.seconds < 4, "ended at once (%.2f s)", st.seconds);
	mock_release(&m);
}

struct stopper {
	atomic_int *stop;
	double after;
};

static void *
stop_later(void *arg)
{
	struct stopper *s = arg;

	usleep((useconds_t)(s->after * 1e6));
	atomic_store(s->stop, 2);
	return NULL;
}

static void
test_stop_and_threads(void)
{
	struct mock m[2];
	struct burn_opts o;
	struct burn_unit u[2];
	struct burn_stats st[2];
	atomic_int stop;
	struct stopper s = { &stop, 0.5 };
	pthread_t t;
	double t0;

	/* two devices at once, one lost: the other goes on */
	atomic_init(&stop, 0);
	small_opts(&o, 0.6);
	for (int i = 0; i < 2; i++) {
		mock_init(&m[i]);
		burn_unit_init(&u[i], &m[i].d, &o, &stop);
	}
	m[1].lose_after = 30;
	for (int i = 0; i < 2; i++)
		ok(burn_unit_start(&u[i]) == 0, "unit %d started", i);
	for (int i = 0; i < 2; i++) {
		burn_unit_join(&u[i]);
		burn_unit_stats(&u[i], &st[i]);
	}
	ok(st[0].state == BS_DONE && st[0].gemms > 0 && !burn_stats_fault(&st[0]),
	   "the healthy device finished (%llu GEMMs)", st[0].gemms);
	is_int(st[1].state, BS_LOST, "the other is lost");
	for (int i = 0; i < 2; i++) {
		burn_unit_release(&u[i]);
		mock_release(&m[i]);
	}

	/* the stop flag: a 30 s burn ends within a batch */
	mock_init(&m[0]);
	small_opts(&o, 30);
	burn_unit_init(&u[0], &m[0].d, &o, &stop);
	t0 = clock_mono();
	pthread_create(&t, NULL, stop_later, &s);
	burn_unit_start(&u[0]);
	burn_unit_join(&u[0]);
	pthread_join(t, NULL);
	burn_unit_stats(&u[0], &st[0]);
	ok(st[0].stopped && st[0].state == BS_DONE, "stopped: done, and says so");
	ok(clock_mono() - t0 < 3, "stopped soon after the flag (%.2f s)", clock_mono() - t0);
	is_int(m[0].live, 0, "stopped: buffers freed");
	burn_unit_release(&u[0]);
	mock_release(&m[0]);
}

static void
test_calibrate(void)
{
	struct mock m;
	struct burn_opts o;
	struct burn_stats st;

	mock_init(&m);
	burn_opts_init(&o);
	o.duration = 0.2;
	o.max_bytes = 6 * 64 * 64 * 4; /* four 64 x 64 fit, not four 128 x 128 */
	burn(&m, &o, &st);
	is_int(st.state, BS_DONE, "the size rule: done (%s)", st.error);
	is_int(st.n, 64, "the size rule: the largest that fits");
	is_int(st.slots, 4, "and the slots in the rest");
	ok(st.gemm_seconds > 0, "a GEMM's time measured");
	mock_release(&m);
}

/* The tensor precisions: names, what each needs, tolerances, and a device that is not CUDA. */
static void
test_tensor(void)
{
	static const char *const names[] = { "fp32", "fp64", "tf32", "fp16", "bf16", "tensor" };
	enum burn_precision p = BURN_FP64, got;
	struct burn_opts o;
	struct burn_stats st;
	struct mock m;
	char why[160];

	for (int i = 0; i < 6; i++) {
		ok(burn_precision_parse(names[i], &p) == 0 && (int)p == i &&
		           !strcmp(burn_precision_name(p), names[i]),
		   "precision '%s' parses and names itself", names[i]);
		is_int(burn_precision_tensor(p), i >= 2, "'%s': tensor is %d", names[i], i >= 2);
	}
	p = BURN_FP64;
	ok(burn_precision_parse("FP16", &p) < 0 && burn_precision_parse("", &p) < 0 &&
	           burn_precision_parse("int8", &p) < 0 && burn_precision_parse(NULL, &p) < 0 &&
	           p == BURN_FP64,
	   "other names refused, *p untouched");
	is_str(burn_precision_name((enum burn_precision)42), "?", "an unknown precision is '?'");

	ok(burn_precision_resolve(BURN_TENSOR, 9, 0, &got, why, sizeof(why)) == 0 &&
	           got == BURN_BF16,
	   "tensor on 9.0 is bf16");
	ok(burn_precision_resolve(BURN_TENSOR, 8, 6, &got, why, sizeof(why)) == 0 &&
	           got == BURN_BF16,
	   "tensor on 8.6 is bf16");
	ok(burn_precision_resolve(BURN_TENSOR, 7, 5, &got, why, sizeof(why)) == 0 &&
	           got == BURN_FP16,
	   "tensor on 7.5 is fp16");
	ok(burn_precision_resolve(BURN_TENSOR, 6, 1, &got, why, sizeof(why)) < 0 &&
	           strstr(why, "7.0") && strstr(why, "6.1"),
	   "tensor on 6.1 refused: %s", why);
	ok(burn_precision_resolve(BURN_BF16, 7, 5, &got, why, sizeof(why)) < 0 &&
	           strstr(why, "bf16") && strstr(why, "8.0") && strstr(why, "7.5"),
	   "bf16 on 7.5 refused: %s", why);
	ok(burn_precision_resolve(BURN_TF32, 7, 0, &got, why, sizeof(why)) < 0 &&
	           strstr(why, "tf32"),
	   "tf32 on 7.0 refused: %s", why);
	ok(burn_precision_resolve(BURN_FP16, 7, 0, &got, why, sizeof(why)) == 0 && got == BURN_FP16,
	   "fp16 on 7.0 runs");
	ok(burn_precision_resolve(BURN_FP32, 0, 0, &got, why, sizeof(why)) == 0 && got == BURN_FP32,
	   "fp32 needs nothing");

	is_dbl(burn_tolerance(1024, BURN_FP16), 0, 0, "fp16: compared bit for bit");
	is_dbl(burn_tolerance(1024, BURN_BF16), 1024 * 0x1p-22 * 32 / 3, 1e-15,
	       "bf16: n 2^-22 sqrt(n) / 3");
	is_dbl(burn_tolerance(1024, BURN_TF32), 2 * burn_tolerance(1024, BURN_FP32), 1e-15,
	       "tf32: twice fp32's (22 bits of accumulation, not 23)");

	mock_init(&m);
	small_opts(&o, 0.2);
	o.precision = BURN_TENSOR;
	burn(&m, &o, &st);
	ok(st.state == BS_FAILED && strstr(st.error, "cuBLASLt") && strstr(st.error, "CUDA"),
	   "a tensor precision on a device not CUDA's: failed, saying why (%s)", st.error);
	ok(!burn_stats_fault(&st) && !st.gemms && !st.mem_patterns, "not a fault, and nothing ran");
	mock_release(&m);

	mock_init(&m);
	small_opts(&o, 0.2);
	o.precision = BURN_BF16;
	o.memtest = BURN_MEMTEST_ONLY;
	burn(&m, &o, &st);
	ok(st.state == BS_DONE && st.mem_patterns > 0,
	   "--memtest with a tensor precision: no GEMM, "
	   "so it runs anywhere (%s)",
	   st.error);
	mock_release(&m);
}

int
main(void)
{
	test_rules();
	test_clean();
	test_corrupt();
	test_memtest();
	test_lost();
	test_stop_and_threads();
	test_calibrate();
	test_tensor();
	return done_testing();
}
