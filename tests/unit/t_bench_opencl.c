/*
 * bench/opencl.h on PoCL (Debian's CPU OpenCL, taken with take_cpu): CL
 * error codes are named; a missing loader and a CPU device left out say
 * why. Then bench/dev.h through bench_cl_devs_open() on the same
 * device, for real: every kernel has() offers gives dev.h's answer (the
 * stream kernels' values, the dot partials' sum, the FMA chains equal to
 * the host's, matmul against the CPU's product, compare counting planted
 * differences, the memory test finding a planted bad word and its index),
 * markers time work, pinned host memory round-trips, bad input (a
 * misaligned sub-buffer offset, wrong arguments, a kernel not offered) is
 * refused with one line, and a device past its timeout stays failed. The
 * PCI matcher and the UUID form are tested alone (PoCL has neither).
 * Without PoCL the device cases are a skip (a failure under
 * GPUSCOPE_NO_SKIP=1).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench/dev.h"
#include "bench/matmul.h"
#include "bench/opencl.h"
#include "core/err.h"
#include "harness.h"

static void
dev_static_cases(void)
{
	static const char *const skip[] = { "0000:17:00.0", "0000:AB:01.2", NULL };
	static const unsigned char uuid[16] = { 0x4f, 0x0e, 0x2a, 0x11, 0x9c, 0x3b, 0x51, 0x07,
		                                0xaa, 0x10, 0x00, 0xff, 0x12, 0x34, 0x56, 0x78 };
	static const unsigned char zero[16];
	struct bench_devs devs = { 0 };
	char buf[48];

	ok(bench_cl_pci_listed("0000:17:00.0", skip), "a listed PCI bus id is matched");
	ok(bench_cl_pci_listed("00000000:17:00.0", skip) && bench_cl_pci_listed("17:00.0", skip),
	   "nvidia-smi's 8-digit domain and no domain match too");
	ok(bench_cl_pci_listed("0000:ab:01.2", skip), "hex digits in either case");
	ok(!bench_cl_pci_listed("0000:17:00.1", skip) && !bench_cl_pci_listed("0001:17:00.0", skip),
	   "another function or domain is not matched");
	ok(!bench_cl_pci_listed("", skip) && !bench_cl_pci_listed(NULL, skip) &&
	           !bench_cl_pci_listed("17:00.0x", skip) &&
	           !bench_cl_pci_listed("0000:17:00.0", NULL),
	   "no id, a malformed one or no list matches nothing");
	bench_cl_uuid_str(uuid, true, buf, sizeof(buf));
	is_str(buf, "GPU-4f0e2a11-9c3b-5107-aa10-00ff12345678",
	       "an NVIDIA UUID in nvidia-smi's form");
	bench_cl_uuid_str(uuid, false, buf, sizeof(buf));
	is_str(buf, "", "no GPU- UUID for another vendor");
	bench_cl_uuid_str(zero, true, buf, sizeof(buf));
	is_str(buf, "", "an all-zero UUID is none");

	ok(bench_cl_devs_open(&devs, "/nonexistent/libOpenCL.so.1", true, NULL) == -1 &&
	           devs.ndev == 0 && strstr(devs.opencl_reason, "cannot load /nonexistent") &&
	           strstr(devs.opencl_reason, "ocl-icd-libopencl1"),
	   "dev.h: a missing loader says why and what to install: %s", devs.opencl_reason);
	setenv("GPUSCOPE_OPENCL", "/nonexistent/libOpenCL-env.so.1", 1);
	ok(bench_cl_devs_open(&devs, NULL, true, NULL) == -1 &&
	           strstr(devs.opencl_reason, "/nonexistent/libOpenCL-env.so.1"),
	   "GPUSCOPE_OPENCL names the loader: %s", devs.opencl_reason);
	unsetenv("GPUSCOPE_OPENCL");
	bench_devs_close(&devs);
}

static struct bench_arg
A_buf(uint64_t b, uint64_t off)
{
	struct bench_arg a = { .type = BA_BUF };

	a.v.b.buf = b;
	a.v.b.off = off;
	return a;
}

static struct bench_arg
A_u64(uint64_t v)
{
	return (struct bench_arg){ .type = BA_U64, .v.u64 = v };
}

static struct bench_arg
A_i32(int32_t v)
{
	return (struct bench_arg){ .type = BA_I32, .v.i32 = v };
}

static struct bench_arg
A_u32(uint32_t v)
{
	return (struct bench_arg){ .type = BA_U32, .v.u32 = v };
}

static struct bench_arg
A_f32(float v)
{
	return (struct bench_arg){ .type = BA_F32, .v.f32 = v };
}

static struct bench_arg
A_f64(double v)
{
	return (struct bench_arg){ .type = BA_F64, .v.f64 = v };
}

/* launch 1-D, sync, and say what failed */
static int
run1(struct bench_dev *d, enum bench_kern k, unsigned grid, unsigned block,
     const struct bench_arg *args, unsigned nargs, struct err *err)
{
	const unsigned g[2] = { grid, 1 }, b[2] = { block, 1 };

	if (d->ops->launch(d, 0, k, g, b, args, nargs, err) < 0)
		return -1;
	return d->ops->sync(d, 0, err);
}

static uint64_t
alloc_or_zero(struct bench_dev *d, size_t bytes)
{
	struct err err = ERR_INIT;
	uint64_t b = 0;

	if (d->ops->alloc(d, bytes, &b, &err) < 0) {
		diag("alloc %zu: %s", bytes, err.msg);
		return 0;
	}
	return b;
}

static void
stream_cases(struct bench_dev *d)
{
	enum { N = 1000 };
	static float a[N], b[N], c[N];
	struct err err = ERR_INIT;
	uint64_t ba = alloc_or_zero(d, N * 4), bb = alloc_or_zero(d, N * 4),
	         bc = alloc_or_zero(d, N * 4), bp = alloc_or_zero(d, 3 * 4);
	const float s = 0.4f;
	float partial[3], ha, hb, hc;
	bool same = true;
	double dot = 0, want = 0;
	int r;

	struct bench_arg init[] = { A_buf(ba, 0), A_buf(bb, 0), A_buf(bc, 0), A_f32(0.1f),
		                    A_f32(0.2f),  A_f32(0.0f),  A_u64(N) };
	struct bench_arg copy[] = { A_buf(ba, 0), A_buf(bc, 0), A_u64(N) };
	struct bench_arg mul[] = { A_buf(bb, 0), A_buf(bc, 0), A_f32(s), A_u64(N) };
	struct bench_arg add[] = { A_buf(ba, 0), A_buf(bb, 0), A_buf(bc, 0), A_u64(N) };
	struct bench_arg triad[] = { A_buf(ba, 0), A_buf(bb, 0), A_buf(bc, 0), A_f32(s), A_u64(N) };
	struct bench_arg dotargs[] = { A_buf(ba, 0), A_buf(bb, 0), A_buf(bp, 0), A_u64(N) };

	/* a grid smaller than n: every kernel strides */
	r = run1(d, BK_STREAM_INIT, 3, 64, init, 7, &err);
	if (r == 0)
		r = run1(d, BK_STREAM_COPY, 3, 64, copy, 3, &err);
	if (r == 0)
		r = run1(d, BK_STREAM_MUL, 3, 64, mul, 4, &err);
	if (r == 0)
		r = run1(d, BK_STREAM_ADD, 3, 64, add, 4, &err);
	if (r == 0)
		r = run1(d, BK_STREAM_TRIAD, 3, 64, triad, 5, &err);
	ok(r == 0, "the five stream kernels run (%s)", err.msg);
	/* BabelStream's host check: the same five steps on the host, in float */
	ha = 0.1f;
	hb = 0.2f;
	hc = 0.0f;
	hc = ha;
	hb = s * hc;
	hc = ha + hb;
	ha = hb + s * hc;
	ok(d->ops->read(d, 0, ba, 0, a, sizeof(a), true, &err) == 0 &&
	           d->ops->read(d, 1, bb, 0, b, sizeof(b), true, &err) == 0 &&
	           d->ops->read(d, 0, bc, 0, c, sizeof(c), true, &err) == 0,
	   "read back (%s)", err.msg);
	for (int i = 0; i < N; i++)
		same = same && a[i] == ha && b[i] == hb && c[i] == hc;
	ok(same, "init, copy, mul, add, triad give the host's values (a %.9g b %.9g c %.9g)",
	   a[N - 1], b[N - 1], c[N - 1]);

	ok(run1(d, BK_STREAM_DOT, 3, BENCH_DOT_BLOCK, dotargs, 4, &err) == 0 &&
	           d->ops->read(d, 0, bp, 0, partial, sizeof(partial), true, &err) == 0,
	   "gs_stream_dot runs with blocks of %d (%s)", BENCH_DOT_BLOCK, err.msg);
	for (int k = 0; k < 3; k++)
		dot += partial[k];
	for (int i = 0; i < N; i++)
		want += (double)a[i] * b[i];
	ok(fabs(dot - want) <= 1e-5 * fabs(want) && want > 0,
	   "the dot partials sum to the host's dot (%.9g, %.9g)", dot, want);
	err_clear(&err);
	ok(run1(d, BK_STREAM_DOT, 6, BENCH_DOT_BLOCK / 2, dotargs, 4, &err) < 0 &&
	           strstr(err.msg, "clEnqueueNDRangeKernel: CL_INVALID_WORK_GROUP_SIZE"),
	   "gs_stream_dot refuses another block size: %s", err.msg);

	/* a sub-buffer: copy from element 256 on (1 KiB, a multiple of any base alignment) */
	{
		struct bench_arg off_copy[] = { A_buf(bb, 1024), A_buf(bc, 1024), A_u64(N - 256) };
		struct bench_arg bad_copy[] = { A_buf(bb, 4), A_buf(bc, 4), A_u64(N - 1) };

		err_clear(&err);
		r = run1(d, BK_STREAM_COPY, 2, 32, off_copy, 3, &err);
		ok(r == 0 && d->ops->read(d, 0, bc, 0, c, sizeof(c), true, &err) == 0 &&
		           c[255] == hc && c[256] == hb && c[N - 1] == hb,
		   "an aligned offset into a buffer is a sub-buffer (%s)", err.msg);
		err_clear(&err);
		r = d->ops->launch(d, 0, BK_STREAM_COPY, (const unsigned[2]){ 1, 1 },
		                   (const unsigned[2]){ 1, 1 }, bad_copy, 3, &err);
		ok(r == E_USAGE && strstr(err.msg, "gs_stream_copy: argument 0: offset 4") &&
		           strstr(err.msg, "alignment"),
		   "a misaligned offset is refused: %s", err.msg);
	}
	d->ops->free(d, ba);
	d->ops->free(d, bb);
	d->ops->free(d, bc);
	d->ops->free(d, bp);
}

/* dev.h's chains on the host, the same way */
static float
chain_f32(float seed, float c, int iters)
{
	float x[BENCH_FMA_CHAINS], s = 0;

	for (int j = 0; j < BENCH_FMA_CHAINS; j++)
		x[j] = seed + (float)j / 64.0f;
	for (int it = 0; it < iters * BENCH_FMA_UNROLL; it++)
		for (int j = 0; j < BENCH_FMA_CHAINS; j++)
			x[j] = fmaf(x[j], x[j], c);
	for (int j = 0; j < BENCH_FMA_CHAINS; j++)
		s += x[j];
	return s;
}

static float
chain_f64(float seed, float c, int iters)
{
	double x[BENCH_FMA_CHAINS], s = 0;

	for (int j = 0; j < BENCH_FMA_CHAINS; j++)
		x[j] = (double)seed + (double)j / 64.0;
	for (int it = 0; it < iters * BENCH_FMA_UNROLL; it++)
		for (int j = 0; j < BENCH_FMA_CHAINS; j++)
			x[j] = fma(x[j], x[j], (double)c);
	for (int j = 0; j < BENCH_FMA_CHAINS; j++)
		s += x[j];
	return (float)s;
}

static int32_t
as_i32(uint32_t u)
{
	int32_t i;

	memcpy(&i, &u, sizeof(i));
	return i;
}

static float
chain_int(float seed, float c, int iters, bool dp4a)
{
	uint32_t x[BENCH_FMA_CHAINS], k = (uint32_t)(int32_t)(c * 64.0f), s = 0;

	for (int j = 0; j < BENCH_FMA_CHAINS; j++)
		x[j] = (uint32_t)((int32_t)(seed * 64.0f) + j);
	for (int it = 0; it < iters * BENCH_FMA_UNROLL; it++)
		for (int j = 0; j < BENCH_FMA_CHAINS; j++) {
			if (dp4a) {
				uint32_t b = 0x01010101u * (uint32_t)(j + 1);
				int32_t dot = 0;

				for (int q = 0; q < 4; q++)
					dot += (int8_t)(x[j] >> (8 * q)) * (int8_t)(b >> (8 * q));
				x[j] = (uint32_t)dot + x[j];
			} else {
				x[j] = x[j] * x[j] + k;
			}
		}
	for (int j = 0; j < BENCH_FMA_CHAINS; j++)
		s += x[j];
	return (float)as_i32(s);
}

static void
fma_cases(struct bench_dev *d)
{
	static const enum bench_kern ks[] = { BK_FMA_F32, BK_FMA_F64, BK_FMA_I32, BK_DP4A_I8,
		                              BK_FMA_F16 };
	enum { W = 2 * 32 };
	uint64_t out = alloc_or_zero(d, W * 4);

	/*
	 * dev.h's seed and c, whose chains settle on the cycle 0, -1; then c =
	 * -1.7, where x * x + c is chaotic (bounded by 1.92): any other
	 * rounding or order of the steps shows in the sum
	 */
	for (int v = 0; v < 2; v++)
		for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
			const float seed = 0.5f, c = v ? -1.7f : -1.0f;
			enum bench_kern k = ks[i];
			const char *name = bench_kern_name(k);
			struct bench_arg args[] = { A_buf(out, 0), A_f32(seed), A_f32(c),
				                    A_i32(7) };
			struct err err = ERR_INIT;
			float got[W], want;
			int bad = 0;

			if (!d->ops->has(d, k)) {
				if (!v)
					diag("%s is not offered here", name);
				continue;
			}
			memset(got, 0xff, sizeof(got));
			ok(run1(d, k, 2, 32, args, 4, &err) == 0 &&
			           d->ops->read(d, 0, out, 0, got, sizeof(got), true, &err) == 0,
			   "%s runs (%s)", name, err.msg);
			want = k == BK_FMA_F32   ? chain_f32(seed, c, 7)
			       : k == BK_FMA_F64 ? chain_f64(seed, c, 7)
			       : k == BK_FMA_I32 ? chain_int(seed, c, 7, false)
			       : k == BK_DP4A_I8 ? chain_int(seed, c, 7, true)
			                         : got[0];
			for (int w = 0; w < W; w++)
				bad += !(got[w] == want) ||
				       (k == BK_FMA_F16 && !(fabsf(got[w]) <= 16));
			ok(bad == 0,
			   "%s, c %g: every work-item's sum is the host chain's %.9g (%d differ, got "
			   "%.9g)",
			   name, c, want, bad, got[0]);
		}
	d->ops->free(d, out);
}

static void
matmul_cases(struct bench_dev *d)
{
	enum { N = 33 };
	static float a[N * N], b[N * N], ref[N * N], c[N * N];
	static double a2[N * N], b2[N * N], c2[N * N];
	const unsigned g[2] = { (N + BENCH_TILE - 1) / BENCH_TILE,
		                (N + BENCH_TILE - 1) / BENCH_TILE };
	const unsigned blk[2] = { BENCH_TILE, BENCH_TILE };
	uint64_t ba = alloc_or_zero(d, sizeof(a2)), bb = alloc_or_zero(d, sizeof(b2)),
	         bc = alloc_or_zero(d, sizeof(c2));
	struct bench_arg args[] = { A_buf(ba, 0), A_buf(bb, 0), A_buf(bc, 0), A_i32(N) };
	struct bench_norms nm;
	struct bench_check chk;
	struct err err = ERR_INIT;

	bench_matrix_fill(a, N, 31);
	bench_matrix_fill(b, N, 32);
	bench_naive(N, a, b, ref, NULL);
	bench_norms_init(&nm, N, a, b);
	for (int k = BK_MATMUL_NAIVE; k <= BK_MATMUL_TILED; k++) {
		memset(c, 0xff, sizeof(c));
		err_clear(&err);
		ok(d->ops->write(d, 0, ba, 0, a, sizeof(a), false, &err) == 0 &&
		           d->ops->write(d, 0, bb, 0, b, sizeof(b), false, &err) == 0 &&
		           d->ops->launch(d, 0, (enum bench_kern)k, g, blk, args, 4, &err) == 0 &&
		           d->ops->read(d, 0, bc, 0, c, sizeof(c), true, &err) == 0,
		   "%s at %d runs (%s)", bench_kern_name((enum bench_kern)k), N, err.msg);
		bench_compare(&nm, c, ref, &chk);
		ok(chk.ok && chk.checked == N * N, "%s at %d = the CPU's product (%zu wrong)",
		   bench_kern_name((enum bench_kern)k), N, chk.bad);
	}
	bench_norms_release(&nm);
	if (d->ops->has(d, BK_MATMUL_TILED_F64)) {
		double worst = 0;

		for (int i = 0; i < N * N; i++) {
			a2[i] = a[i];
			b2[i] = b[i];
		}
		err_clear(&err);
		ok(d->ops->write(d, 1, ba, 0, a2, sizeof(a2), false, &err) == 0 &&
		           d->ops->write(d, 1, bb, 0, b2, sizeof(b2), false, &err) == 0 &&
		           d->ops->launch(d, 1, BK_MATMUL_TILED_F64, g, blk, args, 4, &err) == 0 &&
		           d->ops->read(d, 1, bc, 0, c2, sizeof(c2), true, &err) == 0,
		   "gs_matmul_tiled_f64 runs on stream 1 (%s)", err.msg);
		for (int i = 0; i < N; i++)
			for (int j = 0; j < N; j++) {
				double s = 0;

				for (int k = 0; k < N; k++)
					s += a2[i * N + k] * b2[k * N + j];
				if (fabs(c2[i * N + j] - s) > worst)
					worst = fabs(c2[i * N + j] - s);
			}
		ok(worst <= 1e-12, "gs_matmul_tiled_f64 = the host's f64 product (off by %g)",
		   worst);
	}
	d->ops->free(d, ba);
	d->ops->free(d, bb);
	d->ops->free(d, bc);
}

static void
compare_cases(struct bench_dev *d)
{
	enum { N = 500 };
	static float want[N], got[N];
	static double want2[N], got2[N];
	uint64_t bw = alloc_or_zero(d, sizeof(want2)), bg = alloc_or_zero(d, sizeof(got2)),
	         bn = alloc_or_zero(d, 4);
	struct err err = ERR_INIT;
	uint32_t count = 99, zero = 0;

	for (int i = 0; i < N; i++) {
		want[i] = got[i] = (float)i / 7;
		want2[i] = got2[i] = (double)i / 7;
	}
	got[10] += 0.5f;    /* past tol */
	got[20] = NAN;      /* not finite */
	got[30] = INFINITY; /* not finite */
	got[40] += 0.0001f; /* within tol */
	got2[11] -= 0.5;
	got2[22] = NAN;
	got2[33] = -INFINITY;
	got2[44] += 1e-6;
	{
		struct bench_arg args[] = { A_buf(bw, 0), A_buf(bg, 0), A_u64(N), A_f32(0.01f),
			                    A_buf(bn, 0) };

		ok(d->ops->write(d, 0, bw, 0, want, sizeof(want), false, &err) == 0 &&
		           d->ops->write(d, 0, bg, 0, got, sizeof(got), false, &err) == 0 &&
		           d->ops->write(d, 0, bn, 0, &zero, 4, false, &err) == 0 &&
		           run1(d, BK_COMPARE_F32, 2, 64, args, 5, &err) == 0 &&
		           d->ops->read(d, 0, bn, 0, &count, 4, true, &err) == 0,
		   "gs_compare_f32 runs (%s)", err.msg);
		is_int(count, 3, "gs_compare_f32 counts the 3 planted differences");
	}
	if (d->ops->has(d, BK_COMPARE_F64)) {
		struct bench_arg args[] = { A_buf(bw, 0), A_buf(bg, 0), A_u64(N), A_f64(1e-4),
			                    A_buf(bn, 0) };

		count = 99;
		ok(d->ops->write(d, 0, bw, 0, want2, sizeof(want2), false, &err) == 0 &&
		           d->ops->write(d, 0, bg, 0, got2, sizeof(got2), false, &err) == 0 &&
		           d->ops->write(d, 0, bn, 0, &zero, 4, false, &err) == 0 &&
		           run1(d, BK_COMPARE_F64, 2, 64, args, 5, &err) == 0 &&
		           d->ops->read(d, 0, bn, 0, &count, 4, true, &err) == 0,
		   "gs_compare_f64 runs (%s)", err.msg);
		is_int(count, 3, "gs_compare_f64 counts the 3 planted differences");
	}
	d->ops->free(d, bw);
	d->ops->free(d, bg);
	d->ops->free(d, bn);
}

static void
mem_cases(struct bench_dev *d)
{
	enum { N = 5000 };
	static uint32_t words[N];
	uint64_t bp = alloc_or_zero(d, N * 4), bn = alloc_or_zero(d, 4), bf = alloc_or_zero(d, 8);

	for (int mode = BENCH_MEM_CONST; mode <= BENCH_MEM_RANDOM; mode++) {
		const uint32_t pattern = mode == BENCH_MEM_ADDRESS ? 0xffffffffu : 0xa5a5a5a5u;
		struct bench_arg fill[] = { A_buf(bp, 0), A_u64(N), A_u32(pattern), A_i32(mode) };
		struct bench_arg check[] = { A_buf(bp, 0), A_u64(N),     A_u32(pattern),
			                     A_i32(mode),  A_buf(bn, 0), A_buf(bf, 0) };
		const uint32_t zero = 0, bad = 0x12345678;
		const uint64_t none = UINT64_MAX;
		struct err err = ERR_INIT;
		uint32_t count = 99;
		uint64_t first = 0;
		int wrong = 0;

		ok(run1(d, BK_MEM_FILL, 3, 64, fill, 4, &err) == 0 &&
		           d->ops->read(d, 0, bp, 0, words, sizeof(words), true, &err) == 0,
		   "gs_mem_fill mode %d runs (%s)", mode, err.msg);
		for (int i = 0; i < N; i++)
			wrong += words[i] != bench_mem_word((uint64_t)i, pattern, mode);
		ok(wrong == 0, "gs_mem_fill mode %d writes bench_mem_word()'s words (%d differ)",
		   mode, wrong);
		ok(d->ops->write(d, 0, bn, 0, &zero, 4, false, &err) == 0 &&
		           d->ops->write(d, 0, bf, 0, &none, 8, false, &err) == 0 &&
		           run1(d, BK_MEM_CHECK, 3, 64, check, 6, &err) == 0 &&
		           d->ops->read(d, 0, bn, 0, &count, 4, true, &err) == 0 &&
		           d->ops->read(d, 0, bf, 0, &first, 8, true, &err) == 0,
		   "gs_mem_check mode %d runs (%s)", mode, err.msg);
		ok(count == 0 && first == UINT64_MAX,
		   "gs_mem_check mode %d finds nothing wrong in a clean fill (%u, %llu)", mode,
		   count, (unsigned long long)first);
		/* two bad words, the later written first */
		ok(d->ops->write(d, 0, bp, 4321 * 4, &bad, 4, false, &err) == 0 &&
		           d->ops->write(d, 1, bp, 777 * 4, &bad, 4, true, &err) == 0 &&
		           d->ops->write(d, 0, bn, 0, &zero, 4, false, &err) == 0 &&
		           d->ops->write(d, 0, bf, 0, &none, 8, false, &err) == 0 &&
		           run1(d, BK_MEM_CHECK, 3, 64, check, 6, &err) == 0 &&
		           d->ops->read(d, 0, bn, 0, &count, 4, true, &err) == 0 &&
		           d->ops->read(d, 0, bf, 0, &first, 8, true, &err) == 0,
		   "gs_mem_check mode %d runs over planted words (%s)", mode, err.msg);
		ok(count == 2 && first == 777,
		   "gs_mem_check mode %d counts the 2 bad words and takes the first index (%u, %llu)",
		   mode, count, (unsigned long long)first);
	}
	d->ops->free(d, bp);
	d->ops->free(d, bn);
	d->ops->free(d, bf);
}

static void
copy_host_cases(struct bench_dev *d)
{
	enum { N = 4096 };
	uint64_t src = alloc_or_zero(d, N * 4), dst = alloc_or_zero(d, N * 4);
	struct bench_arg args[] = { A_buf(src, 0), A_buf(dst, 0), A_u64(N / 4) };
	struct err err = ERR_INIT;
	uint32_t *pin = NULL, *back = NULL;
	void *mapped = &err;
	bool same = true;

	ok(d->ops->host_alloc(d, N * 4, false, (void **)&pin, &err) == 0 && pin &&
	           d->ops->host_alloc(d, N * 4, false, (void **)&back, &err) == 0 && back,
	   "pinned host memory (%s)", err.msg);
	if (!pin || !back)
		return;
	for (int i = 0; i < N; i++) {
		pin[i] = 0x9e3779b9u * (uint32_t)i;
		back[i] = 0;
	}
	/* pinned -> device, the SM copy, the copy engine back and forth, device -> pinned */
	ok(d->ops->write(d, 0, src, 0, pin, N * 4, false, &err) == 0 &&
	           d->ops->launch(d, 0, BK_COPY_U4, (const unsigned[2]){ 2, 1 },
	                          (const unsigned[2]){ 64, 1 }, args, 3, &err) == 0 &&
	           d->ops->copy(d, 0, src, dst, N * 4, &err) == 0 &&
	           d->ops->read(d, 0, src, 0, back, N * 4, false, &err) == 0 &&
	           d->ops->sync(d, -1, &err) == 0,
	   "write, gs_copy_u4, copy and read queue and sync (%s)", err.msg);
	for (int i = 0; i < N; i++)
		same = same && back[i] == pin[i];
	ok(same, "the words come back through gs_copy_u4 and the copy engine");
	d->ops->host_free(d, pin);
	d->ops->host_free(d, back);
	err_clear(&err);
	ok(d->ops->host_alloc(d, 64, true, &mapped, &err) == E_NOTSUP && !mapped &&
	           strstr(err.msg, "not offered"),
	   "host memory mapped for kernels is refused: %s", err.msg);
	d->ops->free(d, src);
	d->ops->free(d, dst);
}

static void
refusal_cases(struct bench_dev *d)
{
	const unsigned one[2] = { 1, 1 };
	uint64_t b = alloc_or_zero(d, 64);
	struct bench_arg copy[] = { A_buf(b, 0), A_buf(b, 0), A_u64(1) };
	struct bench_arg wrong[] = { A_buf(b, 0), A_buf(b, 0), A_i32(1) };
	struct bench_arg nobuf[] = { A_buf(b + 1000, 0), A_buf(b, 0), A_u64(1) };
	struct err err = ERR_INIT;
	unsigned long long fr = 0, tot = 0;
	uint64_t junk = 0;
	char host[128];

	ok(d->ops->launch(d, 0, BK_STREAM_COPY, one, one, copy, 2, &err) == E_USAGE &&
	           strstr(err.msg, "gs_stream_copy takes 3 arguments"),
	   "a wrong argument count: %s", err.msg);
	err_clear(&err);
	ok(d->ops->launch(d, 0, BK_STREAM_COPY, one, one, wrong, 3, &err) == E_USAGE &&
	           strstr(err.msg, "argument 2 is u64, not i32"),
	   "a wrong argument type: %s", err.msg);
	err_clear(&err);
	ok(d->ops->launch(d, 0, BK_STREAM_COPY, one, one, nobuf, 3, &err) == E_USAGE &&
	           strstr(err.msg, "no OpenCL buffer"),
	   "an unknown buffer: %s", err.msg);
	err_clear(&err);
	ok(d->ops->launch(d, 2, BK_STREAM_COPY, one, one, copy, 3, &err) == E_USAGE, "stream 2: %s",
	   err.msg);
	err_clear(&err);
	ok(!d->ops->has(d, BK_SPIN) && !d->ops->has(d, BK_MMA_F16) &&
	           !d->ops->has(d, BK_FMA_BF16) && !d->ops->has(d, BK_NKERNELS) &&
	           d->ops->launch(d, 0, BK_SPIN, one, one, NULL, 0, &err) == E_NOTSUP,
	   "gs_spin, mma and bf16 are not offered: %s", err.msg);
	err_clear(&err);
	ok(d->ops->write(d, 0, b, 32, host, 64, true, &err) == E_USAGE &&
	           strstr(err.msg, "past OpenCL buffer"),
	   "a write past the buffer: %s", err.msg);
	err_clear(&err);
	ok(d->ops->alloc(d, 0, &junk, &err) == E_USAGE, "a buffer of 0 bytes: %s", err.msg);
	err_clear(&err);
	ok(d->ops->mark(d, 0, BENCH_MARKS, &err) == E_USAGE, "marker slot %d: %s", BENCH_MARKS,
	   err.msg);
	ok(d->ops->mem_info(d, &fr, &tot, &err) == 0 && tot == d->info.mem_total && fr == tot,
	   "mem_info: free = total = %llu (OpenCL tells no free memory)", tot);
	d->ops->free(d, b);
	d->ops->free(d, b);      /* twice: ignored */
	d->ops->free(d, 123456); /* never made: ignored */
	d->ops->host_free(d, host);
}

static void
mark_cases(struct bench_dev *d)
{
	uint64_t out = alloc_or_zero(d, 256 * 4);
	struct bench_arg args[] = { A_buf(out, 0), A_f32(0.5f), A_f32(-1.0f), A_i32(2000) };
	const unsigned g[2] = { 4, 1 }, b[2] = { 64, 1 };
	struct err err = ERR_INIT;
	double t = -1, t2 = -1;

	ok(d->ops->mark(d, 0, 0, &err) == 0 &&
	           d->ops->launch(d, 0, BK_FMA_F32, g, b, args, 4, &err) == 0 &&
	           d->ops->mark(d, 0, 1, &err) == 0 && d->ops->elapsed(d, 0, 1, &t, &err) == 0,
	   "markers around a kernel (%s)", err.msg);
	ok(t > 0 && t < 60, "the kernel took %.6f s by the device's clock", t);
	ok(d->ops->mark(d, 1, 2, &err) == 0 && d->ops->mark(d, 1, 3, &err) == 0 &&
	           d->ops->elapsed(d, 2, 3, &t2, &err) == 0,
	   "two markers on stream 1 (%s)", err.msg);
	ok(t2 >= 0 && t2 < t, "with nothing between them: %.6f s", t2);
	err_clear(&err);
	ok(d->ops->elapsed(d, 0, 5, &t, &err) == E_USAGE, "a marker never queued: %s", err.msg);
	d->ops->free(d, out);
}

/* a device past its timeout: E_TIMEOUT, and so is everything after */
static void
timeout_case(void)
{
	struct bench_devs devs = { 0 };
	struct bench_dev *d = NULL;
	struct err err = ERR_INIT;
	uint64_t out = 0;

	if (bench_cl_devs_open(&devs, NULL, true, NULL) <= 0)
		return;
	for (size_t i = 0; i < devs.ndev; i++)
		if (devs.dev[i]->info.cpu)
			d = devs.dev[i];
	if (d && d->ops->alloc(d, 64 * 4, &out, &err) == 0) {
		/* some milliseconds on PoCL; close() gives them a second to drain */
		struct bench_arg args[] = { A_buf(out, 0), A_f32(0.5f), A_f32(-1.0f), A_i32(2000) };
		const unsigned g[2] = { 1, 1 }, b[2] = { 64, 1 };

		d->timeout_s = 1e-5;
		ok(d->ops->launch(d, 0, BK_FMA_F32, g, b, args, 4, &err) == 0 &&
		           d->ops->sync(d, 0, &err) == E_TIMEOUT && strstr(err.msg, "may hang"),
		   "a sync past timeout_s is E_TIMEOUT: %s", err.msg);
		err_clear(&err);
		ok(d->ops->alloc(d, 64, &out, &err) == E_TIMEOUT &&
		           d->ops->sync(d, -1, &err) == E_TIMEOUT,
		   "and the device is not used again: %s", err.msg);
	}
	bench_devs_close(&devs);
}

/*
 * What a device without 64-bit atomics (atom64 1: compare-and-swap only, 0:
 * none) or without marker profiling (a gs_empty's event instead) runs.
 */
static void
limited_cases(int atom64, bool marker_events)
{
	struct bench_devs devs = { 0 };
	struct bench_dev *d = NULL;

	bench_cl_test_limits(atom64, marker_events);
	if (bench_cl_devs_open(&devs, NULL, true, NULL) > 0)
		for (size_t i = 0; i < devs.ndev; i++)
			if (devs.dev[i]->info.cpu)
				d = devs.dev[i];
	ok(d != NULL, "a device with 64-bit atomics level %d%s opens", atom64,
	   marker_events ? " and kernel events for markers" : "");
	if (d) {
		struct bench_arg big[] = { A_buf(1, 0), A_u64(1ULL << 32), A_u32(0),
			                   A_i32(0),    A_buf(1, 0),       A_buf(1, 0) };
		struct err err = ERR_INIT;
		uint64_t b = alloc_or_zero(d, 64);

		diag("atomics level %d", atom64);
		mem_cases(d);
		if (marker_events)
			mark_cases(d);
		if (!atom64)
			ok(d->ops->launch(d, 0, BK_MEM_CHECK, (const unsigned[2]){ 1, 1 },
			                  (const unsigned[2]){ 1, 1 }, big, 6, &err) == E_NOTSUP &&
			           strstr(err.msg, "no 64-bit atomics"),
			   "without 64-bit atomics gs_mem_check refuses 2^32 words: %s", err.msg);
		d->ops->free(d, b);
	}
	bench_devs_close(&devs);
}

static void
dev_cases(void)
{
	static const char *const skip[] = { "0000:17:00.0", NULL };
	struct bench_devs devs = { 0 };
	struct bench_dev *d = NULL;
	int n = bench_cl_devs_open(&devs, NULL, true, skip);

	ok(n >= 1 && devs.ndev == (size_t)n && !devs.opencl_reason[0],
	   "dev.h: %d OpenCL device(s) with take_cpu (%s)", n, devs.opencl_reason);
	for (size_t i = 0; i < devs.ndev; i++)
		if (devs.dev[i]->info.cpu && !d)
			d = devs.dev[i];
	if (!d) {
		skip_missing("no CPU OpenCL device through dev.h");
		bench_devs_close(&devs);
		return;
	}
	diag("%s: %s, %s, driver %s, %u units, %u MHz, L2 %llu, %llu bytes (largest %llu), "
	     "blocks of %zu, fp64 %d, fp16 %d, pci '%s', uuid '%s'",
	     d->info.id, d->info.name, d->info.vendor, d->info.driver, d->info.units,
	     d->info.clock_mhz, d->info.l2_bytes, d->info.mem_total, d->info.max_alloc,
	     d->info.max_block, d->info.has_fp64, d->info.has_fp16, d->info.pci_bus_id,
	     d->info.uuid);
	ok(!strcmp(d->info.api, "opencl") && !strncmp(d->info.id, "opencl:", 7) &&
	           d->info.name[0] && d->info.units > 0 && d->info.mem_total > 0 &&
	           d->info.max_alloc > 0 && d->info.max_block >= 1 && !d->info.host_mapped &&
	           d->info.cpu && d->timeout_s == 60,
	   "the device's info is filled");
	ok(d->ops->has(d, BK_FMA_F64) == d->info.has_fp64 &&
	           d->ops->has(d, BK_COMPARE_F64) == d->info.has_fp64 &&
	           (!d->ops->has(d, BK_FMA_F16) || d->info.has_fp16),
	   "the f64 kernels are offered as the device has fp64, f16 only with fp16");
	for (int k = 0; k < BK_NKERNELS; k++)
		diag("%-20s %s", bench_kern_name((enum bench_kern)k),
		     d->ops->has(d, (enum bench_kern)k) ? "offered" : "-");
	stream_cases(d);
	fma_cases(d);
	matmul_cases(d);
	compare_cases(d);
	mem_cases(d);
	copy_host_cases(d);
	mark_cases(d);
	refusal_cases(d);
	bench_devs_close(&devs);
	ok(devs.ndev == 0 && !devs.dev, "bench_devs_close empties the list");
	limited_cases(1, false);
	limited_cases(0, true);
	bench_cl_test_limits(2, false);
	timeout_case();
}

int
main(void)
{
	struct bench_cl cl;
	char buf[32];
	int nd;

	is_str(bench_cl_error_name(-5, buf, sizeof(buf)), "CL_OUT_OF_RESOURCES", "-5 is named");
	is_str(bench_cl_error_name(-4, buf, sizeof(buf)), "CL_MEM_OBJECT_ALLOCATION_FAILURE",
	       "-4 is named");
	is_str(bench_cl_error_name(-9999, buf, sizeof(buf)), "CL error -9999", "unknown codes too");
	dev_static_cases();

	ok(bench_cl_open(&cl, "/nonexistent/libOpenCL.so.1", true) == -1 && !cl.loaded &&
	           strstr(cl.reason, "cannot load /nonexistent/libOpenCL.so.1") &&
	           strstr(cl.reason, "apt install ocl-icd-libopencl1"),
	   "a missing loader says why and what to install: %s", cl.reason);
	bench_cl_close(&cl);

	nd = bench_cl_open(&cl, NULL, false);
	if (nd >= 0 && cl.cpu_skipped)
		ok(strstr(cl.reason, "--opencl-cpu") || nd > 0,
		   "CPU devices are left out unless asked for (%u skipped)", cl.cpu_skipped);
	bench_cl_close(&cl);

	nd = bench_cl_open(&cl, NULL, true);
	if (nd < 0) {
		skip_missing(
		        "no OpenCL loader (Debian: apt install ocl-icd-libopencl1 pocl-opencl-icd)");
		return done_testing();
	}
	for (size_t d = 0; d < cl.ndev; d++) {
		const struct bench_cl_device *dev = &cl.dev[d];

		if (strcmp(dev->type, "cpu"))
			continue; /* a real GPU is measured by bench, not here */
		ok(dev->compute_units > 0 && dev->max_work_group > 0,
		   "%s (%s): %u compute units, work-groups of %zu", dev->name, dev->platform,
		   dev->compute_units, dev->max_work_group);
		bench_cl_close(&cl);
		dev_cases();
		return done_testing();
	}
	skip_missing("no CPU OpenCL device (Debian: apt install pocl-opencl-icd)");
	bench_cl_close(&cl);
	return done_testing();
}
