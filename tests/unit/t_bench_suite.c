/*
 * bench/suite.c on a fake GPU written here: a struct bench_dev whose
 * operations run on the CPU (buffers are host memory, kernels computed as
 * dev.h says) and whose markers read a modelled device clock that each
 * operation advances at a set rate (1000 GB/s memory, 10 TFLOP/s, 25 GB/s
 * H2D...), so the suite's byte and FLOP counting, statistics, calibration,
 * verification, stop, lost-device and memory paths can be checked exactly.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/dev.h"
#include "bench/opencl.h"
#include "bench/suite.h"
#include "core/err.h"
#include "harness.h"

#define MIB (1024ull * 1024)

enum op_type { OP_WRITE, OP_READ, OP_LAUNCH, OP_MARK };

struct op {
	enum op_type type;
	uint64_t buf;
	size_t off, bytes;
	void *host;
	enum bench_kern k;
	unsigned grid[2], block[2];
	struct bench_arg args[8];
	unsigned nargs;
	unsigned slot;
};

struct mbuf {
	unsigned char *p;
	size_t size;
};

struct mock {
	struct bench_dev dev;
	struct mbuf buf[64];
	unsigned long long total, used, peak_used;
	int allocs, frees, host_allocs, host_frees;
	void *pinned[16];
	int npinned;
	double t[2];
	double marks[BENCH_MARKS];
	/* the modelled rates */
	double mem_gbs, flops, h2d_gbs, d2h_gbs, page_gbs, sm_gbs, empty_s;
	double first_factor; /* the first call of each stream kernel takes this much longer */
	bool jitter;         /* later calls take 1, 1.1, 1.2, 1.3 x in turn */
	unsigned stream_calls[5];
	/* what it has */
	bool spin, mma, copy_u4;
	/* faults */
	bool corrupt_stream, corrupt_fma_last, ignore_c;
	long lose_after, launches;
	bool lost;
	/* a spin kernel holding a stream, and what is queued behind it */
	volatile int32_t *held[2];
	uint64_t held_ns[2];
	struct op pending[2][80];
	int npending[2];
	int spins_released_by_flag;
};

static struct mock *
M(struct bench_dev *d)
{
	return (struct mock *)d;
}

static void *
bufp(struct mock *m, uint64_t b, uint64_t off)
{
	return b && b <= 64 && m->buf[b - 1].p ? m->buf[b - 1].p + off : NULL;
}

static void *
argp(struct mock *m, const struct bench_arg *a)
{
	return a->type == BA_HOST ? a->v.host : bufp(m, a->v.b.buf, a->v.b.off);
}

static bool
is_pinned(struct mock *m, const void *p)
{
	for (int i = 0; i < m->npinned; i++)
		if (m->pinned[i] == p)
			return true;
	return false;
}

static bool
m_has(struct bench_dev *d, enum bench_kern k)
{
	struct mock *m = M(d);

	switch (k) {
	case BK_SPIN:
		return m->spin;
	case BK_MMA_F16:
	case BK_MMA_BF16:
	case BK_MMA_TF32:
	case BK_MMA_I8:
	case BK_MMA_FP8:
		return m->mma;
	case BK_COPY_U4:
		return m->copy_u4;
	case BK_MATMUL_NAIVE:
	case BK_MATMUL_TILED:
	case BK_MATMUL_TILED_F64:
	case BK_COMPARE_F32:
	case BK_COMPARE_F64:
	case BK_MEM_FILL:
	case BK_MEM_CHECK:
	case BK_NKERNELS:
		return false;
	default:
		return true;
	}
}

static int
lost(struct err *err)
{
	return err_set(err, E_LOST, "cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS (700)");
}

static int
m_mem_info(struct bench_dev *d, unsigned long long *fr, unsigned long long *total, struct err *err)
{
	struct mock *m = M(d);

	if (m->lost)
		return lost(err);
	*fr = m->total - m->used;
	*total = m->total;
	return 0;
}

static int
m_alloc(struct bench_dev *d, size_t bytes, uint64_t *buf, struct err *err)
{
	struct mock *m = M(d);

	if (m->lost)
		return lost(err);
	if (m->used + bytes > m->total)
		return err_set(err, E_BUSY, "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (2)");
	for (int i = 0; i < 64; i++)
		if (!m->buf[i].p) {
			m->buf[i].p = calloc(1, bytes ? bytes : 1);
			m->buf[i].size = bytes;
			m->used += bytes;
			if (m->used > m->peak_used)
				m->peak_used = m->used;
			m->allocs++;
			*buf = (uint64_t)i + 1;
			return 0;
		}
	return err_set(err, E_BUSY, "cuMemAlloc: out of mock slots");
}

static void
m_free(struct bench_dev *d, uint64_t b)
{
	struct mock *m = M(d);

	if (!b || b > 64 || !m->buf[b - 1].p)
		return;
	free(m->buf[b - 1].p);
	m->used -= m->buf[b - 1].size;
	m->buf[b - 1].p = NULL;
	m->frees++;
}

static int
m_host_alloc(struct bench_dev *d, size_t bytes, bool mapped, void **p, struct err *err)
{
	struct mock *m = M(d);

	(void)mapped;
	if (m->npinned == 16)
		return err_set(err, E_BUSY, "cuMemHostAlloc: out of mock slots");
	*p = calloc(1, bytes);
	m->pinned[m->npinned++] = *p;
	m->host_allocs++;
	return 0;
}

static void
m_host_free(struct bench_dev *d, void *p)
{
	struct mock *m = M(d);

	for (int i = 0; i < m->npinned; i++)
		if (m->pinned[i] == p) {
			m->pinned[i] = m->pinned[--m->npinned];
			free(p);
			m->host_frees++;
			return;
		}
}

/* the mock's own chains, from dev.h's words */
static float
chain(enum bench_kern k, float seed, float c, int iters, bool ignore_c)
{
	int steps = iters * BENCH_FMA_UNROLL;

	if (ignore_c)
		c = 0;
	if (k == BK_FMA_F64) {
		double s = 0;

		for (int j = 0; j < BENCH_FMA_CHAINS; j++) {
			double x = seed + j / 64.0;

			for (int i = 0; i < steps; i++)
				x = fma(x, x, c);
			s += x;
		}
		return (float)s;
	}
	if (k == BK_FMA_I32 || k == BK_DP4A_I8) {
		uint32_t s = 0;

		for (int j = 0; j < BENCH_FMA_CHAINS; j++) {
			uint32_t x = (uint32_t)((int32_t)(seed * 64) + j);

			for (int i = 0; i < steps; i++) {
				if (k == BK_FMA_I32) {
					x = x * x + (uint32_t)(int32_t)(c * 64);
				} else {
					int32_t sum = 0;

					for (int b = 0; b < 4; b++)
						sum += (int8_t)(x >> (8 * b)) * (int8_t)(j + 1);
					x += (uint32_t)sum;
				}
			}
			s += x;
		}
		return (float)(int32_t)s;
	}
	/* f32, and f16 / bf16 modelled by it (they are checked finite only) */
	{
		float s = 0;

		for (int j = 0; j < BENCH_FMA_CHAINS; j++) {
			float x = seed + (float)j / 64;

			for (int i = 0; i < steps; i++) {
				x = fmaf(x, x, c);
			}
			s += x;
		}
		return s;
	}
}

static double
stream_factor(struct mock *m, int k)
{
	unsigned n = m->stream_calls[k]++;

	if (n == 0)
		return m->first_factor;
	return m->jitter ? 1 + (n % 4) * 0.1 : 1;
}

static void
exec_launch(struct mock *m, int s, const struct op *o)
{
	const struct bench_arg *a = o->args;
	double items = (double)o->grid[0] * o->block[0] * o->grid[1] * o->block[1];
	uint64_t n;

	switch (o->k) {
	case BK_EMPTY:
		m->t[s] += m->empty_s;
		break;
	case BK_SPIN:
		m->t[s] += 1e-6;
		break;
	case BK_STREAM_INIT: {
		float *x = argp(m, &a[0]), *y = argp(m, &a[1]), *z = argp(m, &a[2]);

		n = a[6].v.u64;
		for (uint64_t i = 0; i < n; i++)
			x[i] = a[3].v.f32, y[i] = a[4].v.f32, z[i] = a[5].v.f32;
		m->t[s] += 12.0 * n / (m->mem_gbs * 1e9);
		break;
	}
	case BK_STREAM_COPY: {
		const float *x = argp(m, &a[0]);
		float *c = argp(m, &a[1]);

		n = a[2].v.u64;
		for (uint64_t i = 0; i < n; i++)
			c[i] = x[i];
		m->t[s] += 8.0 * n / (m->mem_gbs * 1e9) * stream_factor(m, 0);
		break;
	}
	case BK_STREAM_MUL: {
		float *b = argp(m, &a[0]);
		const float *c = argp(m, &a[1]);

		n = a[3].v.u64;
		for (uint64_t i = 0; i < n; i++)
			b[i] = a[2].v.f32 * c[i];
		m->t[s] += 8.0 * n / (m->mem_gbs * 1e9) * stream_factor(m, 1);
		break;
	}
	case BK_STREAM_ADD: {
		const float *x = argp(m, &a[0]), *b = argp(m, &a[1]);
		float *c = argp(m, &a[2]);

		n = a[3].v.u64;
		for (uint64_t i = 0; i < n; i++)
			c[i] = x[i] + b[i];
		m->t[s] += 12.0 * n / (m->mem_gbs * 1e9) * stream_factor(m, 2);
		break;
	}
	case BK_STREAM_TRIAD: {
		float *x = argp(m, &a[0]);
		const float *b = argp(m, &a[1]), *c = argp(m, &a[2]);

		n = a[4].v.u64;
		for (uint64_t i = 0; i < n; i++) {
			volatile float p = a[3].v.f32 * c[i];

			x[i] = b[i] + p;
		}
		if (m->corrupt_stream && m->stream_calls[3] == 3)
			x[n / 2] += 1.0f;
		m->t[s] += 12.0 * n / (m->mem_gbs * 1e9) * stream_factor(m, 3);
		break;
	}
	case BK_STREAM_DOT: {
		const float *x = argp(m, &a[0]), *b = argp(m, &a[1]);
		float *partial = argp(m, &a[2]);
		uint64_t g = (uint64_t)o->grid[0] * o->block[0];

		n = a[3].v.u64;
		for (unsigned k = 0; k < o->grid[0]; k++) {
			float sum = 0;

			for (unsigned t = 0; t < o->block[0]; t++) {
				float ts = 0;

				for (uint64_t i = (uint64_t)k * o->block[0] + t; i < n; i += g)
					ts += x[i] * b[i];
				sum += ts;
			}
			partial[k] = sum;
		}
		m->t[s] += 8.0 * n / (m->mem_gbs * 1e9) * stream_factor(m, 4);
		break;
	}
	case BK_FMA_F64:
	case BK_FMA_F32:
	case BK_FMA_F16:
	case BK_FMA_BF16:
	case BK_FMA_I32:
	case BK_DP4A_I8: {
		float *out = argp(m, &a[0]);
		float v = chain(o->k, a[1].v.f32, a[2].v.f32, a[3].v.i32, m->ignore_c);
		double per = o->k == BK_FMA_F16 || o->k == BK_FMA_BF16 ? 4
		             : o->k == BK_DP4A_I8                      ? 8
		                                                       : 2;

		for (uint64_t i = 0; i < (uint64_t)items; i++)
			out[i] = v;
		if (m->corrupt_fma_last)
			out[(uint64_t)items - 1] = 123.0f;
		m->t[s] +=
		        items * a[3].v.i32 * BENCH_FMA_CHAINS * BENCH_FMA_UNROLL * per / m->flops;
		break;
	}
	case BK_MMA_F16:
	case BK_MMA_BF16:
	case BK_MMA_TF32:
	case BK_MMA_I8:
	case BK_MMA_FP8: {
		float *out = argp(m, &a[0]);
		int kk = o->k == BK_MMA_TF32                       ? 8
		         : o->k == BK_MMA_I8 || o->k == BK_MMA_FP8 ? 32
		                                                   : 16;
		float v = (float)a[2].v.i32 * kk * a[1].v.f32 * a[1].v.f32 * 4 * BENCH_MMA_CHAINS;

		for (uint64_t i = 0; i < (uint64_t)items; i++)
			out[i] = v;
		m->t[s] +=
		        items / 32 * a[2].v.i32 * BENCH_MMA_CHAINS * 2.0 * 16 * 8 * kk / m->flops;
		break;
	}
	case BK_COPY_U4: {
		void *src = argp(m, &a[0]), *dst = argp(m, &a[1]);

		memcpy(dst, src, a[2].v.u64 * 16);
		m->t[s] += a[2].v.u64 * 16.0 / (m->sm_gbs * 1e9);
		break;
	}
	default:
		break;
	}
}

static void
exec(struct mock *m, int s, const struct op *o)
{
	switch (o->type) {
	case OP_WRITE:
		memcpy(bufp(m, o->buf, o->off), o->host, o->bytes);
		m->t[s] += o->bytes / ((is_pinned(m, o->host) ? m->h2d_gbs : m->page_gbs) * 1e9);
		break;
	case OP_READ:
		memcpy(o->host, bufp(m, o->buf, o->off), o->bytes);
		m->t[s] += o->bytes / ((is_pinned(m, o->host) ? m->d2h_gbs : m->page_gbs) * 1e9);
		break;
	case OP_LAUNCH:
		exec_launch(m, s, o);
		break;
	case OP_MARK:
		m->marks[o->slot] = m->t[s];
		break;
	}
}

/*
 * Release the streams a spin kernel holds once their flag is set (or, with
 * force, when the spin's max_ns would have run out), together: both start
 * at the later of their clocks.
 */
static void
drain(struct mock *m, bool force)
{
	double at = 0;
	bool go[2] = { false, false };

	for (int s = 0; s < 2; s++) {
		if (!m->held[s] || (!*m->held[s] && !force))
			continue;
		go[s] = true;
		if (*m->held[s])
			m->spins_released_by_flag++;
		else
			m->t[s] += m->held_ns[s] / 1e9;
		if (m->t[s] > at)
			at = m->t[s];
	}
	for (int s = 0; s < 2; s++) {
		if (!go[s])
			continue;
		m->t[s] = at;
		m->held[s] = NULL;
		for (int i = 0; i < m->npending[s]; i++)
			exec(m, s, &m->pending[s][i]);
		m->npending[s] = 0;
	}
}

static int
submit(struct mock *m, int s, const struct op *o, bool wait, struct err *err)
{
	if (m->lost)
		return lost(err);
	if (s < 0 || s > 1)
		return err_set(err, E_USAGE, "mock: stream %d", s);
	drain(m, false);
	if (m->held[s]) {
		if (m->npending[s] == 80)
			return err_set(err, E_BUSY, "mock: queue full");
		m->pending[s][m->npending[s]++] = *o;
		if (wait)
			drain(m, true);
		return 0;
	}
	exec(m, s, o);
	return 0;
}

static int
m_write(struct bench_dev *d, int stream, uint64_t buf, size_t off, const void *host, size_t bytes,
        bool sync, struct err *err)
{
	struct op o = { .type = OP_WRITE,
		        .buf = buf,
		        .off = off,
		        .bytes = bytes,
		        .host = (void *)(uintptr_t)host };

	if (!bufp(M(d), buf, 0) || off + bytes > M(d)->buf[buf - 1].size)
		return err_set(err, E_USAGE, "cuMemcpyHtoDAsync: CUDA_ERROR_INVALID_VALUE (1)");
	return submit(M(d), stream, &o, sync, err);
}

static int
m_read(struct bench_dev *d, int stream, uint64_t buf, size_t off, void *host, size_t bytes,
       bool sync, struct err *err)
{
	struct op o = { .type = OP_READ, .buf = buf, .off = off, .bytes = bytes, .host = host };

	if (!bufp(M(d), buf, 0) || off + bytes > M(d)->buf[buf - 1].size)
		return err_set(err, E_USAGE, "cuMemcpyDtoHAsync: CUDA_ERROR_INVALID_VALUE (1)");
	return submit(M(d), stream, &o, sync, err);
}

static int
m_copy(struct bench_dev *d, int stream, uint64_t dst, uint64_t src, size_t bytes, struct err *err)
{
	(void)stream;
	memcpy(bufp(M(d), dst, 0), bufp(M(d), src, 0), bytes);
	(void)err;
	return 0;
}

static int
m_launch(struct bench_dev *d, int stream, enum bench_kern k, const unsigned grid[2],
         const unsigned block[2], const struct bench_arg *args, unsigned nargs, struct err *err)
{
	struct mock *m = M(d);
	struct op o = { .type = OP_LAUNCH, .k = k, .nargs = nargs };

	if (m->lost)
		return lost(err);
	if (m->lose_after && ++m->launches > m->lose_after) {
		m->lost = true;
		return lost(err);
	}
	if (!m_has(d, k) || nargs > 8 || !grid[0] || !block[0])
		return err_set(err, E_USAGE, "cuLaunchKernel: CUDA_ERROR_INVALID_VALUE (1)");
	for (unsigned i = 0; i < nargs; i++)
		if (args[i].type == BA_BUF && !bufp(m, args[i].v.b.buf, 0))
			return err_set(err, E_USAGE, "cuLaunchKernel: bad buffer argument %u", i);
	memcpy(o.grid, grid, sizeof(o.grid));
	memcpy(o.block, block, sizeof(o.block));
	memcpy(o.args, args, nargs * sizeof(*args));
	if (k == BK_SPIN) {
		drain(m, false);
		if (m->held[stream])
			return err_set(err, E_USAGE, "mock: two spins on a stream");
		exec(m, stream, &o);
		if (!*(volatile int32_t *)args[0].v.host) {
			m->held[stream] = args[0].v.host;
			m->held_ns[stream] = args[1].v.u64;
		}
		return 0;
	}
	return submit(m, stream, &o, false, err);
}

static int
m_mark(struct bench_dev *d, int stream, unsigned slot, struct err *err)
{
	struct op o = { .type = OP_MARK, .slot = slot };

	if (slot >= BENCH_MARKS)
		return err_set(err, E_USAGE, "cuEventRecord: CUDA_ERROR_INVALID_VALUE (1)");
	return submit(M(d), stream, &o, false, err);
}

static int
m_elapsed(struct bench_dev *d, unsigned a, unsigned b, double *seconds, struct err *err)
{
	struct mock *m = M(d);

	if (m->lost)
		return lost(err);
	drain(m, true);
	*seconds = m->marks[b] - m->marks[a];
	return 0;
}

static int
m_sync(struct bench_dev *d, int stream, struct err *err)
{
	struct mock *m = M(d);

	if (m->lost)
		return lost(err);
	drain(m, true);
	if (stream < 0) {
		double t = m->t[0] > m->t[1] ? m->t[0] : m->t[1];

		m->t[0] = m->t[1] = t;
	}
	return 0;
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
	.host_alloc = m_host_alloc,
	.host_free = m_host_free,
	.write = m_write,
	.read = m_read,
	.copy = m_copy,
	.launch = m_launch,
	.mark = m_mark,
	.elapsed = m_elapsed,
	.sync = m_sync,
	.close = m_close,
};

static struct mock *
mock_new(void)
{
	struct mock *m = calloc(1, sizeof(*m));

	m->dev.ops = &mock_ops;
	m->dev.timeout_s = 60;
	snprintf(m->dev.info.api, sizeof(m->dev.info.api), "cuda");
	snprintf(m->dev.info.id, sizeof(m->dev.info.id), "cuda:0");
	snprintf(m->dev.info.name, sizeof(m->dev.info.name), "Mock GPU");
	m->dev.info.units = 4;
	m->dev.info.cpu = true; /* a small grid: the mock computes every work-item */
	m->dev.info.l2_bytes = 1 * MIB;
	m->dev.info.host_mapped = true;
	m->dev.info.has_fp64 = m->dev.info.has_fp16 = true;
	m->total = 64 * MIB;
	m->dev.info.mem_total = m->total;
	m->dev.info.max_alloc = m->total;
	m->mem_gbs = 1000;
	m->flops = 10e12;
	m->h2d_gbs = 25;
	m->d2h_gbs = 26;
	m->page_gbs = 10;
	m->sm_gbs = 20;
	m->empty_s = 3e-6;
	m->first_factor = 10;
	m->jitter = true;
	m->spin = m->mma = m->copy_u4 = true;
	return m;
}

static void
mock_free(struct mock *m)
{
	for (int i = 0; i < 64; i++)
		free(m->buf[i].p);
	for (int i = 0; i < m->npinned; i++)
		free(m->pinned[i]);
	free(m);
}

static const struct bench_result *
find(const struct bench_result *res, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(res[i].name, name))
			return &res[i];
	return NULL;
}

static bool
within(double got, double want, double rel)
{
	return isfinite(got) && fabs(got - want) <= rel * fabs(want);
}

static int progress_calls;
static double progress_last_left = -1;

static void
on_progress(void *arg, const char *test, double done, double left)
{
	(void)arg;
	(void)test;
	if (done >= 0 && done <= 1 && left >= 0)
		progress_calls++;
	progress_last_left = left;
}

static void
test_full_run(void)
{
	struct mock *m = mock_new();
	struct bench_suite_opts o = { .quick = true, .progress = on_progress };
	struct bench_result res[BENCH_SUITE_MAX];
	const struct bench_result *r;
	struct err err = ERR_INIT;
	size_t n = 0;
	int rc = bench_suite_run(&m->dev, &o, res, &n, &err);
	unsigned long long sn = bench_suite_stream_n(&m->dev.info, 64 * MIB, 64 * MIB);

	is_int(rc, 0, "a quick run on the mock returns 0 (%s)", err.msg);
	is_int(n, BENCH_SUITE_MAX, "every test has a result");
	for (size_t i = 0; i < n && i < BENCH_SUITE_MAX; i++) {
		/* cuBLASLt runs on libcuda's devices only (t_bench_gemm tests it on the fakes) */
		if (!strncmp(res[i].name, "gemm.", 5)) {
			ok(res[i].status == BENCH_UNSUPPORTED && strstr(res[i].why, "libcuda"),
			   "%s unsupported on the mock, saying why (%s)", res[i].name, res[i].why);
			continue;
		}
		if (!ok(res[i].status == BENCH_MEASURED, "%s measured", res[i].name))
			diag("%s: %s: %s", res[i].name, bench_status_name(res[i].status),
			     res[i].why);
	}
	is_str(res[0].name, "fma.fp64", "tests run in order: fma.fp64 first");
	is_str(res[n - 1].name, "launch.latency", "launch.latency last");

	r = find(res, n, "fma.fp32");
	ok(r && within(r->best, 10000, 0.01), "fma.fp32 at the mock's 10 TFLOP/s: %.1f GFLOP/s",
	   r ? r->best : NAN);
	ok(r && r->samples == 3, "three batches of the calibrated launches");
	/* a launch: 16384 work-items x 4096 FLOP at 10 TFLOP/s */
	{
		double launch_s = 16384.0 * 4096 / 10e12,
		       want = 0.1 / launch_s > 10000 ? 10000 * launch_s : 0.1;

		ok(r && within(r->count / r->best / 1e9 * 3, want, 0.05),
		   "calibrated: the quick 0.1 s, at most 10000 launches (%.4f s): %.4f s", want,
		   r ? r->count / r->best / 1e9 * 3 : NAN);
	}
	ok(r && strstr(r->note, "bit-exact"), "fma.fp32 checked bit-exact: %s", r ? r->note : "");
	r = find(res, n, "dp4a.int8");
	ok(r && within(r->best, 10000, 0.01) && !strcmp(r->unit, "GOP/s"),
	   "dp4a in GOP/s, 8 a step");
	r = find(res, n, "fma.fp16");
	ok(r && within(r->best, 10000, 0.01), "fma.fp16 counts 4 a half2 step");
	r = find(res, n, "mma.fp16");
	ok(r && within(r->best, 10000, 0.01), "mma.fp16: warps x iters x chains x 2MNK");
	r = find(res, n, "mma.tf32");
	ok(r && within(r->best, 10000, 0.01), "mma.tf32: K = 8");

	r = find(res, n, "stream.triad");
	ok(r && within(r->best, 1000, 0.01), "triad at the mock's 1000 GB/s: %.2f",
	   r ? r->best : NAN);
	ok(r && within(r->median, 1000 / 1.2, 0.01),
	   "median of 19 (factors 1, 1.1, 1.2, 1.3): 833.3 GB/s, got %.2f", r ? r->median : NAN);
	ok(r && r->samples == 19, "20 quick repetitions, the first (10x slower) discarded");
	ok(r && r->count == 3.0 * 4 * (double)sn, "triad counts 3 x 4 x n bytes, n = %llu", sn);
	r = find(res, n, "stream.copy");
	ok(r && within(r->best, 1000, 0.01) && r->count == 2.0 * 4 * (double)sn, "copy: 2 x 4 x n");
	r = find(res, n, "stream.dot");
	ok(r && within(r->best, 1000, 0.01), "dot verified and at 1000 GB/s");

	r = find(res, n, "h2d.pinned");
	ok(r && within(r->best, 25, 0.01) && within(r->median, 25, 0.01), "h2d.pinned at 25 GB/s");
	ok(r && !strstr(r->note, "no spin"), "spin kernel used: %s", r ? r->note : "");
	r = find(res, n, "d2h.pinned");
	ok(r && within(r->median, 26, 0.01), "d2h.pinned at 26 GB/s");
	r = find(res, n, "bidir.pinned");
	/* both directions' bytes over the span of both: the slower (25 GB/s) ends it */
	ok(r && within(r->median, 50, 0.01),
	   "bidir: both directions' bytes over their span, 50 GB/s: %.2f", r ? r->median : NAN);
	ok(r && r->nextra == 2 && within(r->extra[0].value, 25, 0.01) &&
	           within(r->extra[1].value, 26, 0.01),
	   "bidir: each direction beside the sum");
	r = find(res, n, "h2d.pageable");
	ok(r && within(r->median, 10, 0.01) && strstr(r->note, "pageable"), "h2d.pageable at 10");
	r = find(res, n, "d2h.sm");
	ok(r && within(r->median, 20, 0.01), "d2h.sm (gs_copy_u4) at 20");
	ok(m->spins_released_by_flag > 0, "spin kernels released by the host's flag (%d)",
	   m->spins_released_by_flag);

	r = find(res, n, "launch.latency");
	ok(r && r->samples == 200 && r->median > 0 && r->best <= r->median, "launch round trips");
	ok(r && r->nextra == 2 && !strcmp(r->extra[0].name, "p99") &&
	           r->extra[0].value >= r->median,
	   "p99 beside the median");
	ok(r && r->nextra == 2 && within(r->extra[1].value, 3, 0.01),
	   "launch throughput: the mock's 3 us a launch");

	is_int(m->allocs, m->frees, "every device buffer freed (%d)", m->allocs);
	is_int(m->host_allocs, m->host_frees, "every host buffer freed (%d)", m->host_allocs);
	ok(m->peak_used <= 64 * MIB - 8 * MIB, "never more than free less the margin: %llu MiB",
	   m->peak_used / MIB);
	ok(progress_calls > 24 && progress_last_left >= 0 && progress_last_left < 1e-6,
	   "progress told (%d calls, last %.2f s)", progress_calls, progress_last_left);
	mock_free(m);
}

static void
test_no_spin(void)
{
	struct mock *m = mock_new();
	const char *sel[] = { "h2d.pinned" };
	struct bench_suite_opts o = { .quick = true, .tests = sel, .ntests = 1 };
	struct bench_result res[BENCH_SUITE_MAX];
	size_t n = 0;

	m->spin = false;
	bench_suite_run(&m->dev, &o, res, &n, NULL);
	ok(n == 1 && res[0].status == BENCH_MEASURED && within(res[0].median, 25, 0.01),
	   "h2d.pinned without a spin kernel still measured");
	ok(n == 1 && strstr(res[0].note, "no spin kernel: enqueue overhead included"),
	   "and says so: %s", n ? res[0].note : "");
	mock_free(m);
}

static void
test_wrong(void)
{
	struct mock *m = mock_new();
	const char *sel[] = { "stream", "fma.fp32", "fma.int32" };
	struct bench_suite_opts o = { .quick = true, .tests = sel, .ntests = 3 };
	struct bench_result res[BENCH_SUITE_MAX];
	const struct bench_result *r;
	size_t n = 0;

	m->corrupt_stream = true;
	m->corrupt_fma_last = true;
	bench_suite_run(&m->dev, &o, res, &n, NULL);
	is_int(n, 7, "selection: five stream tests and two FMA");
	r = find(res, n, "stream.triad");
	ok(r && r->status == BENCH_WRONG && strstr(r->why, "wrong"),
	   "one corrupted element of a caught: %s", r ? r->why : "");
	r = find(res, n, "stream.dot");
	ok(r && r->status == BENCH_WRONG, "dot wrong too");
	r = find(res, n, "fma.fp32");
	ok(r && r->status == BENCH_WRONG && strstr(r->why, "1 of 64"),
	   "the last work-item corrupted: caught: %s", r ? r->why : "");
	r = find(res, n, "fma.int32");
	ok(r && r->status == BENCH_WRONG, "fma.int32 too");
	is_int(m->allocs, m->frees, "freed");
	mock_free(m);

	m = mock_new();
	m->ignore_c = true;
	o.tests = sel + 1;
	o.ntests = 1;
	bench_suite_run(&m->dev, &o, res, &n, NULL);
	ok(n == 1 && res[0].status == BENCH_WRONG && strstr(res[0].why, "64 of 64"),
	   "a kernel that drops c (x = x * x) is not dev.h's chain: %s", n ? res[0].why : "");
	mock_free(m);
}

static int stop_calls, stop_at;

static int
stop_fn(void)
{
	return ++stop_calls >= stop_at;
}

static void
test_stop(void)
{
	int points[] = { 1, 5, 40, 400, 3000, 6000 };

	for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++) {
		struct mock *m = mock_new();
		struct bench_suite_opts o = { .quick = true, .stop = stop_fn };
		struct bench_result res[BENCH_SUITE_MAX];
		size_t n = 0, stopped = 0, before = 0;
		int rc;

		stop_calls = 0;
		stop_at = points[i];
		rc = bench_suite_run(&m->dev, &o, res, &n, NULL);
		for (size_t k = 0; k < n; k++)
			if (res[k].status == BENCH_STOPPED)
				stopped++;
			else if (stopped)
				before = 99; /* a test ran after the stop */
		ok(rc == 1 && stopped > 0 && before == 0 && n == BENCH_SUITE_MAX,
		   "stop at check %d: returns 1, %zu tests stopped, none after", stop_at, stopped);
		ok(m->allocs == m->frees && m->host_allocs == m->host_frees && m->used == 0,
		   "stop at check %d: everything freed (%d device, %d host)", stop_at, m->allocs,
		   m->host_allocs);
		mock_free(m);
	}
}

static void
test_lost(void)
{
	struct mock *m = mock_new();
	struct bench_suite_opts o = { .quick = true };
	struct bench_result res[BENCH_SUITE_MAX];
	struct err err = ERR_INIT;
	size_t n = 0;
	int rc;

	m->lose_after = 50; /* in fma.fp64's batches */
	rc = bench_suite_run(&m->dev, &o, res, &n, &err);
	is_int(rc, E_LOST, "a lost device: E_LOST");
	ok(strstr(err.msg, "device lost: cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS"), "err: %s",
	   err.msg);
	ok(n == BENCH_SUITE_MAX && res[0].status == BENCH_FAILED &&
	           !strcmp(res[0].why, "cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS (700)"),
	   "the test it happened in failed with the error line: %s", res[0].why);
	{
		bool all = true;

		for (size_t k = 1; k < n; k++)
			all &= res[k].status == BENCH_FAILED &&
			       !strncmp(res[k].why, "device lost: ", 13);
		ok(all, "every later test failed: %s", n > 1 ? res[1].why : "");
	}
	is_int(m->allocs, m->frees, "freed after the loss");
	mock_free(m);
}

static void
test_memory_caps(void)
{
	struct mock *m = mock_new();
	struct bench_suite_opts o = { .quick = true, .mem_limit = 3 * MIB / 2 };
	struct bench_result res[BENCH_SUITE_MAX];
	const struct bench_result *r;
	size_t n = 0;

	bench_suite_run(&m->dev, &o, res, &n, NULL);
	ok(m->peak_used <= 3 * MIB / 2, "a 1.5 MiB limit held: at most %llu bytes", m->peak_used);
	r = find(res, n, "bidir.pinned");
	ok(r && r->status == BENCH_SKIPPED && strstr(r->why, "not enough"),
	   "bidir (two 1 MiB buffers) skipped: %s", r ? r->why : "");
	r = find(res, n, "h2d.pinned");
	ok(r && r->status == BENCH_MEASURED && strstr(r->note, "1 MiB"), "h2d in 1 MiB: %s",
	   r ? r->note : "");
	r = find(res, n, "stream.triad");
	ok(r && r->status == BENCH_MEASURED && r->count <= 3 * MIB / 2,
	   "the three stream arrays within the limit (n = %.0f)", r ? r->count / 12 : NAN);
	ok(r && strstr(r->note, "under 4x the L2"), "and said to be under 4x the L2: %s",
	   r ? r->note : "");
	mock_free(m);

	m = mock_new();
	m->total = 2 * MIB; /* free 2 MiB: the budget is 1.75 MiB, stream's a quarter of free */
	o.mem_limit = 0;
	bench_suite_run(&m->dev, &o, res, &n, NULL);
	ok(m->peak_used <= 2 * MIB - 2 * MIB / 8, "free less an eighth: %llu", m->peak_used);
	r = find(res, n, "stream.copy");
	ok(r && r->status == BENCH_MEASURED && r->count / 8 * 12 <= 2 * MIB / 4,
	   "the three arrays in a quarter of free memory");
	mock_free(m);
}

static void
test_opencl_like(void)
{
	struct mock *m = mock_new();
	struct bench_suite_opts o = { .quick = true,
		                      .tests = (const char *[]){ "mma", "h2d" },
		                      .ntests = 2 };
	struct bench_result res[BENCH_SUITE_MAX];
	const struct bench_result *r;
	size_t n = 0;

	snprintf(m->dev.info.api, sizeof(m->dev.info.api), "opencl");
	m->mma = m->spin = m->copy_u4 = false;
	m->dev.info.host_mapped = false;
	bench_suite_run(&m->dev, &o, res, &n, NULL);
	is_int(n, 8, "mma's five and h2d's three");
	r = find(res, n, "mma.bf16");
	ok(r && r->status == BENCH_UNSUPPORTED && strstr(r->why, "opencl"), "mma: %s",
	   r ? r->why : "");
	r = find(res, n, "h2d.sm");
	ok(r && r->status == BENCH_UNSUPPORTED && strstr(r->why, "mapped"), "h2d.sm: %s",
	   r ? r->why : "");
	r = find(res, n, "h2d.pinned");
	ok(r && r->status == BENCH_MEASURED && strstr(r->note, "no spin"), "h2d.pinned: %s",
	   r ? r->note : "");
	mock_free(m);
}

static void
test_sizes(void)
{
	struct bench_dev_info gpu = { .units = 132, .l2_bytes = 50 * 1000 * 1000 };
	struct bench_dev_info small = { .units = 4 };

	is_int(bench_suite_fma_items(&gpu, 1ull << 40), 132ull * 2048 * 256,
	       "FMA work-items: units x 2048 x 256 on a big GPU");
	is_int(bench_suite_fma_items(&small, 1ull << 40), 32 * MIB, "at least 32 Mi");
	is_int(bench_suite_fma_items(&small, 4 * MIB), MIB / 4, "out[] in a quarter of the budget");
	is_int(bench_suite_stream_n(&gpu, 1ull << 40, 1ull << 40), 50000000 / 1024 * 1024,
	       "stream n: 4x the L2 when above 2^25");
	is_int(bench_suite_stream_n(&small, 1ull << 40, 1ull << 40), 1 << 25, "else 2^25");
	is_int(bench_suite_stream_n(&small, 48 * MIB, 1ull << 40), MIB, "in a quarter of free");
	ok(bench_suite_pattern_valid("stream") && bench_suite_pattern_valid("fma.fp32") &&
	           bench_suite_pattern_valid("fma.") && !bench_suite_pattern_valid("fmax") &&
	           !bench_suite_pattern_valid("stream.tri") && !bench_suite_pattern_valid(""),
	   "test names and prefixes");
	is_str(bench_suite_test_name(BENCH_SUITE_MAX - 1), "launch.latency", "the last test");
	ok(bench_suite_test_name(BENCH_SUITE_MAX) == NULL, "past the end: NULL");
}

/* The suite for real on PoCL (a CPU OpenCL device), where it is installed. */
static void
test_pocl(void)
{
	struct bench_devs devs = { 0 };
	const char *sel[] = { "fma.fp32", "fma.int32", "stream", "h2d.pinned", "launch" };
	struct bench_suite_opts o = { .quick = true,
		                      .tests = sel,
		                      .ntests = 5,
		                      .target_s = 0.02,
		                      .stream_reps = 3,
		                      .mem_limit = 16 * MIB,
		                      .host_limit = 8 * MIB };
	struct bench_result res[BENCH_SUITE_MAX];
	struct err err = ERR_INIT;
	size_t n = 0;
	int rc;

	if (bench_cl_devs_open(&devs, NULL, true, NULL) <= 0 || !devs.ndev) {
		skip_missing("no OpenCL device (PoCL: apt-get install pocl-opencl-icd)");
		bench_devs_close(&devs);
		return;
	}
	rc = bench_suite_run(devs.dev[0], &o, res, &n, &err);
	is_int(rc, 0, "the suite on %s (%s): %s", devs.dev[0]->info.name, devs.dev[0]->info.api,
	       err.msg);
	for (size_t i = 0; i < n; i++) {
		ok(res[i].status == BENCH_MEASURED, "%s on OpenCL: %s %.4g %s (%s%s)", res[i].name,
		   bench_status_name(res[i].status), res[i].best, res[i].unit, res[i].why,
		   res[i].note);
	}
	bench_devs_close(&devs);
}

int
main(void)
{
	test_sizes();
	test_full_run();
	test_no_spin();
	test_wrong();
	test_stop();
	test_lost();
	test_memory_caps();
	test_opencl_like();
	test_pocl();
	return done_testing();
}
