/*
 * The kernels of bench/dev.h, computed on the CPU for real, and how long
 * each takes on the scenario's device: bytes moved over the device's
 * bandwidth (the byte counts of dev.h's users), operations over the rate of
 * the kernel's class, plus the launch overhead.
 */
#include "fake.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* parameter letters: 'p' pointer, 'u' u64, 'i' i32, 'w' u32, 'f' f32, 'd' f64 */
static const char *const kern_params[BK_NKERNELS] = {
	[BK_EMPTY] = "i",
	[BK_SPIN] = "pu",
	[BK_STREAM_INIT] = "pppfffu",
	[BK_STREAM_COPY] = "ppu",
	[BK_STREAM_MUL] = "ppfu",
	[BK_STREAM_ADD] = "pppu",
	[BK_STREAM_TRIAD] = "pppfu",
	[BK_STREAM_DOT] = "pppu",
	[BK_FMA_F64] = "pffi",
	[BK_FMA_F32] = "pffi",
	[BK_FMA_F16] = "pffi",
	[BK_FMA_BF16] = "pffi",
	[BK_FMA_I32] = "pffi",
	[BK_DP4A_I8] = "pffi",
	[BK_MMA_F16] = "pfi",
	[BK_MMA_BF16] = "pfi",
	[BK_MMA_TF32] = "pfi",
	[BK_MMA_I8] = "pfi",
	[BK_MMA_FP8] = "pfi",
	[BK_COPY_U4] = "ppu",
	[BK_MATMUL_NAIVE] = "pppi",
	[BK_MATMUL_TILED] = "pppi",
	[BK_MATMUL_TILED_F64] = "pppi",
	[BK_COMPARE_F32] = "ppufp",
	[BK_COMPARE_F64] = "ppudp",
	[BK_MEM_FILL] = "puwi",
	[BK_MEM_CHECK] = "puwipp",
};

const char *
fcu_kern_params(int kern)
{
	return kern >= 0 && kern < BK_NKERNELS ? kern_params[kern] : NULL;
}

int
fcu_kern_min_cc(int kern)
{
	switch (kern) {
	case BK_FMA_BF16:
	case BK_MMA_F16:
	case BK_MMA_BF16:
	case BK_MMA_TF32:
	case BK_MMA_I8:
		return 80;
	case BK_MMA_FP8:
		return 89;
	default:
		return 0;
	}
}

/*
 * v rounded to nearest even at p significant bits, the smallest normal
 * number being 2^(emin - 1) (frexp's exponent emin): the rounding of a
 * binary16 (11, -13), bfloat16 (8, -125), tf32 (11, -125) or e4m3 (4, -5)
 * operation whose exact result is v. Every step of the chains is exact in
 * double (products of at most 11-bit significands), so one rounding here is
 * the fused operation's.
 */
static double
round_bits(double v, int p, int emin, double max)
{
	int e;

	if (v == 0 || !isfinite(v))
		return v;
	frexp(v, &e);
	if (e < emin)
		e = emin;
	v = ldexp(nearbyint(ldexp(v, p - e)), e - p);
	return fabs(v) > max ? copysign(INFINITY, v) : v;
}

static double
to_half(double v)
{
	return round_bits(v, 11, -13, 65504);
}

static double
to_bf16(double v)
{
	return round_bits(v, 8, -125, 3.3895313892515355e38);
}

static int32_t
dp4a(uint32_t a, uint32_t b, int32_t c)
{
	int32_t s = 0;

	for (int k = 0; k < 4; k++)
		s += (int32_t)(int8_t)(a >> (8 * k)) * (int32_t)(int8_t)(b >> (8 * k));
	return (int32_t)((uint32_t)c + (uint32_t)s);
}

/* one work-item of a vector FMA kernel (dev.h: every work-item's is the same) */
static float
fma_value(int kern, float seed, float c, int32_t iters)
{
	const int steps = BENCH_FMA_UNROLL;
	int64_t n = iters > 0 ? (int64_t)iters * steps : 0;

	switch (kern) {
	case BK_FMA_F64: {
		double x[BENCH_FMA_CHAINS], s = 0;
		for (int j = 0; j < BENCH_FMA_CHAINS; j++)
			x[j] = (double)seed + j / 64.0;
		for (int64_t t = 0; t < n; t++)
			for (int j = 0; j < BENCH_FMA_CHAINS; j++)
				x[j] = fma(x[j], x[j], (double)c);
		for (int j = 0; j < BENCH_FMA_CHAINS; j++)
			s += x[j];
		return (float)s;
	}
	case BK_FMA_F32: {
		float x[BENCH_FMA_CHAINS], s = 0;
		for (int j = 0; j < BENCH_FMA_CHAINS; j++)
			x[j] = seed + j / 64.0f;
		for (int64_t t = 0; t < n; t++)
			for (int j = 0; j < BENCH_FMA_CHAINS; j++)
				x[j] = fmaf(x[j], x[j], c);
		for (int j = 0; j < BENCH_FMA_CHAINS; j++)
			s += x[j];
		return s;
	}
	case BK_FMA_F16:
	case BK_FMA_BF16: {
		double (*rnd)(double) = kern == BK_FMA_F16 ? to_half : to_bf16;
		double x[BENCH_FMA_CHAINS], s = 0, cc = rnd(c);
		for (int j = 0; j < BENCH_FMA_CHAINS; j++)
			x[j] = rnd(seed + j / 64.0f);
		for (int64_t t = 0; t < n; t++)
			for (int j = 0; j < BENCH_FMA_CHAINS; j++)
				x[j] = rnd(x[j] * x[j] + cc);
		for (int j = 0; j < BENCH_FMA_CHAINS; j++)
			s = rnd(s + x[j]);
		return (float)s;
	}
	case BK_FMA_I32:
	case BK_DP4A_I8: {
		uint32_t x[BENCH_FMA_CHAINS], s = 0;
		uint32_t cc = (uint32_t)(int32_t)(c * 64);
		for (int j = 0; j < BENCH_FMA_CHAINS; j++)
			x[j] = (uint32_t)(int32_t)(seed * 64) + (uint32_t)j;
		for (int64_t t = 0; t < n; t++)
			for (int j = 0; j < BENCH_FMA_CHAINS; j++)
				x[j] = kern == BK_FMA_I32
				               ? x[j] * x[j] + cc
				               : (uint32_t)dp4a(x[j],
				                                0x01010101u * (uint32_t)(j + 1),
				                                (int32_t)x[j]);
		for (int j = 0; j < BENCH_FMA_CHAINS; j++)
			s += x[j];
		return (float)(int32_t)s;
	}
	default:
		return 0;
	}
}

static int
mma_k(int kern)
{
	return kern == BK_MMA_TF32 ? 8 : kern == BK_MMA_I8 || kern == BK_MMA_FP8 ? 32 : 16;
}

/*
 * One lane of an mma kernel: every fragment element is seed in the input
 * type, so each mma adds K x s^2 to every accumulator element; a lane holds
 * 16 x 8 / 32 = 4 elements of each of the BENCH_MMA_CHAINS accumulators.
 */
static float
mma_value(int kern, float seed, int32_t iters)
{
	int k = mma_k(kern);
	float acc = 0, sum = 0;

	if (kern == BK_MMA_I8) {
		int32_t s8 = (int8_t)(int32_t)seed;
		uint32_t a = 0, lane = 0;
		for (int32_t t = 0; t < iters; t++)
			a += (uint32_t)(k * s8 * s8);
		for (int e = 0; e < 4 * BENCH_MMA_CHAINS; e++)
			lane += a;
		return (float)(int32_t)lane;
	}
	double s = kern == BK_MMA_F16    ? to_half(seed)
	           : kern == BK_MMA_BF16 ? to_bf16(seed)
	           : kern == BK_MMA_TF32 ? round_bits(seed, 11, -125, 3.4e38)
	                                 : round_bits(seed, 4, -5, 448);
	for (int32_t t = 0; t < iters; t++)
		acc = (float)((double)acc + k * s * s);
	for (int e = 0; e < 4 * BENCH_MMA_CHAINS; e++)
		sum += acc;
	return sum;
}

/*
 * The chains are long (bench calibrates them to a fixed time) and launched
 * again and again with the same arguments: the last few values are kept.
 */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	int kern;
	float seed, c, value;
	int32_t iters;
	bool used;
} cache[16];
static unsigned cache_next;

static float
chain_value(int kern, float seed, float c, int32_t iters)
{
	float v;

	pthread_mutex_lock(&cache_lock);
	for (size_t i = 0; i < sizeof(cache) / sizeof(cache[0]); i++)
		if (cache[i].used && cache[i].kern == kern && cache[i].iters == iters &&
		    !memcmp(&cache[i].seed, &seed, sizeof(seed)) &&
		    !memcmp(&cache[i].c, &c, sizeof(c))) {
			v = cache[i].value;
			pthread_mutex_unlock(&cache_lock);
			return v;
		}
	pthread_mutex_unlock(&cache_lock);
	v = kern >= BK_MMA_F16 && kern <= BK_MMA_FP8 ? mma_value(kern, seed, iters)
	                                             : fma_value(kern, seed, c, iters);
	pthread_mutex_lock(&cache_lock);
	unsigned i = cache_next++ % (sizeof(cache) / sizeof(cache[0]));
	cache[i].kern = kern;
	cache[i].seed = seed;
	cache[i].c = c;
	cache[i].iters = iters;
	cache[i].value = v;
	cache[i].used = true;
	pthread_mutex_unlock(&cache_lock);
	return v;
}

static enum fcu_rate
rate_of(int kern)
{
	switch (kern) {
	case BK_FMA_F64:
		return FR_F64;
	case BK_FMA_F16:
		return FR_F16;
	case BK_FMA_BF16:
		return FR_BF16;
	case BK_FMA_I32:
		return FR_I32;
	case BK_DP4A_I8:
		return FR_I8;
	case BK_MMA_F16:
		return FR_MMA_F16;
	case BK_MMA_BF16:
		return FR_MMA_BF16;
	case BK_MMA_TF32:
		return FR_MMA_TF32;
	case BK_MMA_I8:
		return FR_MMA_I8;
	case BK_MMA_FP8:
		return FR_MMA_FP8;
	case BK_MATMUL_NAIVE:
	case BK_MATMUL_TILED:
		return FR_MATMUL;
	case BK_MATMUL_TILED_F64:
		return FR_MATMUL_F64;
	default:
		return FR_F32;
	}
}

static void
flip(void *base, size_t elem, unsigned long long index, unsigned bit)
{
	unsigned char *p = (unsigned char *)base + index * elem;
	uint64_t w = 0;

	memcpy(&w, p, elem);
	w ^= (uint64_t)1 << (bit % (elem * 8));
	memcpy(p, &w, elem);
}

/* the matmul kernels: c[i][j] for the rows and columns the grid covers, k ascending */
static void
matmul_f32(const float *a, const float *b, float *c, size_t n, size_t rows, size_t cols, float *row)
{
	for (size_t i = 0; i < rows; i++) {
		memset(row, 0, cols * sizeof(*row));
		for (size_t k = 0; k < n; k++) {
			float aik = a[i * n + k];
			const float *bk = b + k * n;
			for (size_t j = 0; j < cols; j++)
				row[j] += aik * bk[j];
		}
		memcpy(c + i * n, row, cols * sizeof(*row));
	}
}

static void
matmul_f64(const double *a, const double *b, double *c, size_t n, size_t rows, size_t cols,
           double *row)
{
	for (size_t i = 0; i < rows; i++) {
		memset(row, 0, cols * sizeof(*row));
		for (size_t k = 0; k < n; k++) {
			double aik = a[i * n + k];
			const double *bk = b + k * n;
			for (size_t j = 0; j < cols; j++)
				row[j] += aik * bk[j];
		}
		memcpy(c + i * n, row, cols * sizeof(*row));
	}
}

static size_t
min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* n elements of size bytes, or SIZE_MAX when that overflows (then no buffer holds it) */
static size_t
span(uint64_t n, size_t size)
{
	return n > SIZE_MAX / size ? SIZE_MAX : (size_t)n * size;
}

CUresult
fcu_kern_run(struct CUctx_st *ctx, const struct fcu_launch *L, double *seconds)
{
	const struct fcu_dev *dev = ctx->dev;
	const union fcu_arg *a = L->arg;
	uint64_t threads = (uint64_t)L->grid[0] * L->grid[1] * L->grid[2] * L->block[0] *
	                   L->block[1] * L->block[2];
	uint64_t blocks = (uint64_t)L->grid[0] * L->grid[1] * L->grid[2];
	double bytes = 0, ops = 0;
	bool pin[6] = { false };
	void *p[6] = { NULL };
	void *out = NULL;
	size_t out_elem = 4, out_n = 0;
	double Bps = dev->mem_Bps;

#define PTR(k, len)                                            \
	do {                                                   \
		p[k] = fcu_mem(ctx, a[k].u64, (len), &pin[k]); \
		if (!p[k])                                     \
			return CUDA_ERROR_ILLEGAL_ADDRESS;     \
	} while (0)

	switch (L->kern) {
	case BK_EMPTY:
		break;
	case BK_STREAM_INIT: {
		uint64_t n = a[6].u64;
		PTR(0, span(n, 4));
		PTR(1, span(n, 4));
		PTR(2, span(n, 4));
		for (uint64_t i = 0; i < n; i++) {
			((float *)p[0])[i] = a[3].f32;
			((float *)p[1])[i] = a[4].f32;
			((float *)p[2])[i] = a[5].f32;
		}
		bytes = 3.0 * 4 * (double)n;
		out = p[0], out_n = n;
		break;
	}
	case BK_STREAM_COPY: {
		uint64_t n = a[2].u64;
		PTR(0, span(n, 4));
		PTR(1, span(n, 4));
		memmove(p[1], p[0], n * 4);
		bytes = 2.0 * 4 * (double)n;
		out = p[1], out_n = n;
		break;
	}
	case BK_STREAM_MUL: {
		uint64_t n = a[3].u64;
		PTR(0, span(n, 4));
		PTR(1, span(n, 4));
		for (uint64_t i = 0; i < n; i++)
			((float *)p[0])[i] = a[2].f32 * ((const float *)p[1])[i];
		bytes = 2.0 * 4 * (double)n;
		out = p[0], out_n = n;
		break;
	}
	case BK_STREAM_ADD: {
		uint64_t n = a[3].u64;
		PTR(0, span(n, 4));
		PTR(1, span(n, 4));
		PTR(2, span(n, 4));
		for (uint64_t i = 0; i < n; i++)
			((float *)p[2])[i] = ((const float *)p[0])[i] + ((const float *)p[1])[i];
		bytes = 3.0 * 4 * (double)n;
		out = p[2], out_n = n;
		break;
	}
	case BK_STREAM_TRIAD: {
		uint64_t n = a[4].u64;
		PTR(0, span(n, 4));
		PTR(1, span(n, 4));
		PTR(2, span(n, 4));
		for (uint64_t i = 0; i < n; i++)
			((float *)p[0])[i] =
			        ((const float *)p[1])[i] + a[3].f32 * ((const float *)p[2])[i];
		bytes = 3.0 * 4 * (double)n;
		out = p[0], out_n = n;
		break;
	}
	case BK_STREAM_DOT: {
		uint64_t n = a[3].u64, bsize = threads / (blocks ? blocks : 1);
		PTR(0, span(n, 4));
		PTR(1, span(n, 4));
		PTR(2, span(blocks, 4));
		for (uint64_t k = 0; k < blocks; k++) {
			float sum[BENCH_DOT_BLOCK];

			/*
			 * as the kernel does it: each work-item sums its grid-stride
			 * elements with fmaf, then the block adds the 256 sums in a
			 * tree (so the rounding error is the kernel's, not that of one
			 * long sum)
			 */
			for (uint64_t t = 0; t < BENCH_DOT_BLOCK; t++) {
				float s = 0;

				for (uint64_t i = k * bsize + t; t < bsize && i < n; i += threads)
					s = fmaf(((const float *)p[0])[i], ((const float *)p[1])[i],
					         s);
				sum[t] = s;
			}
			for (unsigned half = BENCH_DOT_BLOCK / 2; half > 0; half /= 2)
				for (unsigned t = 0; t < half; t++)
					sum[t] += sum[t + half];
			((float *)p[2])[k] = sum[0];
		}
		bytes = 2.0 * 4 * (double)n;
		out = p[2], out_n = blocks;
		break;
	}
	case BK_FMA_F64:
	case BK_FMA_F32:
	case BK_FMA_F16:
	case BK_FMA_BF16:
	case BK_FMA_I32:
	case BK_DP4A_I8: {
		int per_step = L->kern == BK_DP4A_I8                             ? 8
		               : L->kern == BK_FMA_F16 || L->kern == BK_FMA_BF16 ? 4
		                                                                 : 2;
		float v = chain_value(L->kern, a[1].f32, a[2].f32, a[3].i32);
		PTR(0, span(threads, 4));
		for (uint64_t i = 0; i < threads; i++)
			((float *)p[0])[i] = v;
		ops = (double)(a[3].i32 > 0 ? a[3].i32 : 0) * BENCH_FMA_CHAINS * BENCH_FMA_UNROLL *
		      per_step * (double)threads;
		out = p[0], out_n = threads;
		break;
	}
	case BK_MMA_F16:
	case BK_MMA_BF16:
	case BK_MMA_TF32:
	case BK_MMA_I8:
	case BK_MMA_FP8: {
		float v = chain_value(L->kern, a[1].f32, 0, a[2].i32);
		PTR(0, span(threads, 4));
		for (uint64_t i = 0; i < threads; i++)
			((float *)p[0])[i] = v;
		ops = (double)(threads / 32) * (a[2].i32 > 0 ? a[2].i32 : 0) * BENCH_MMA_CHAINS *
		      2.0 * 16 * 8 * mma_k(L->kern);
		out = p[0], out_n = threads;
		break;
	}
	case BK_COPY_U4: {
		uint64_t n4 = a[2].u64;
		if (a[0].u64 % 16 || a[1].u64 % 16)
			return CUDA_ERROR_MISALIGNED_ADDRESS;
		PTR(0, span(n4, 16));
		PTR(1, span(n4, 16));
		memmove(p[1], p[0], n4 * 16);
		/* an SM copy over the link moves the bytes once, within the device twice */
		if (pin[1])
			bytes = 16.0 * (double)n4, Bps = dev->d2h_pinned_Bps;
		else if (pin[0])
			bytes = 16.0 * (double)n4, Bps = dev->h2d_pinned_Bps;
		else
			bytes = 2 * 16.0 * (double)n4;
		out = p[1], out_n = n4 * 4;
		break;
	}
	case BK_MATMUL_NAIVE:
	case BK_MATMUL_TILED:
	case BK_MATMUL_TILED_F64: {
		size_t n = a[3].i32 > 0 ? (size_t)a[3].i32 : 0;
		size_t es = L->kern == BK_MATMUL_TILED_F64 ? 8 : 4;
		size_t rows = min_size(n, (size_t)L->grid[1] * L->block[1]);
		size_t cols = min_size(n, (size_t)L->grid[0] * L->block[0]);
		void *row = NULL;
		PTR(0, span((uint64_t)n * n, es));
		PTR(1, span((uint64_t)n * n, es));
		PTR(2, span((uint64_t)n * n, es));
		if (n && !(row = malloc(cols * es + 1)))
			return CUDA_ERROR_OUT_OF_MEMORY;
		if (n && es == 4)
			matmul_f32(p[0], p[1], p[2], n, rows, cols, row);
		else if (n)
			matmul_f64(p[0], p[1], p[2], n, rows, cols, row);
		if (n)
			free(row);
		ops = 2.0 * (double)n * (double)n * (double)n;
		out = p[2], out_n = n * n, out_elem = es;
		break;
	}
	case BK_COMPARE_F32:
	case BK_COMPARE_F64: {
		uint64_t n = a[2].u64, bad = 0;
		size_t es = L->kern == BK_COMPARE_F64 ? 8 : 4;
		PTR(0, span(n, es));
		PTR(1, span(n, es));
		PTR(4, 4);
		for (uint64_t i = 0; i < n; i++) {
			double w, g;
			if (es == 4)
				w = ((const float *)p[0])[i], g = ((const float *)p[1])[i];
			else
				w = ((const double *)p[0])[i], g = ((const double *)p[1])[i];
			double tol = es == 4 ? a[3].f32 : a[3].f64;
			if (!isfinite(g) || fabs(g - w) > tol)
				bad++;
		}
		__atomic_fetch_add((uint32_t *)p[4], (uint32_t)bad, __ATOMIC_RELAXED);
		bytes = 2.0 * (double)es * (double)n;
		out = p[4], out_n = 1;
		break;
	}
	case BK_MEM_FILL: {
		uint64_t n = a[1].u64;
		PTR(0, span(n, 4));
		for (uint64_t i = 0; i < n; i++)
			((uint32_t *)p[0])[i] = bench_mem_word(i, a[2].u32, a[3].i32);
		bytes = 4.0 * (double)n;
		out = p[0], out_n = n;
		break;
	}
	case BK_MEM_CHECK: {
		uint64_t n = a[1].u64, bad = 0, first = UINT64_MAX;
		PTR(0, span(n, 4));
		PTR(4, 4);
		PTR(5, 8);
		for (uint64_t i = 0; i < n; i++)
			if (((const uint32_t *)p[0])[i] != bench_mem_word(i, a[2].u32, a[3].i32)) {
				if (!bad)
					first = i;
				bad++;
			}
		__atomic_fetch_add((uint32_t *)p[4], (uint32_t)bad, __ATOMIC_RELAXED);
		uint64_t *f = p[5], old = __atomic_load_n(f, __ATOMIC_RELAXED);
		while (first < old &&
		       !__atomic_compare_exchange_n(f, &old, first, false, __ATOMIC_RELAXED,
		                                    __ATOMIC_RELAXED))
			;
		bytes = 4.0 * (double)n;
		out = p[4], out_n = 1;
		break;
	}
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
#undef PTR
	if (L->corrupt && out && L->corrupt->index < out_n)
		flip(out, out_elem, L->corrupt->index, L->corrupt->bit);
	*seconds = dev->launch_s;
	if (bytes > 0 && Bps > 0)
		*seconds += bytes / Bps;
	if (ops > 0 && dev->rate[rate_of(L->kern)] > 0)
		*seconds += ops / dev->rate[rate_of(L->kern)];
	return CUDA_SUCCESS;
}
