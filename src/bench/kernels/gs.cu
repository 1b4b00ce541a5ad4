/*
 * gpuscope's NVIDIA kernels: every kernel of enum bench_kern in
 * src/bench/dev.h, in CUDA C, compiled to PTX by `make ptx` (mk/ptx.mk) and
 * committed, so that neither the build nor a run needs the CUDA toolkit: the
 * driver JIT-compiles the PTX for the device it runs on (cuModuleLoadData).
 * bench/ptx.c picks the image of the highest level a device can run.
 *
 * dev.h is the contract (names, parameters in order and their types, launch
 * shapes, what each kernel computes); the fake libcuda.so.1 of the tests and
 * the OpenCL C of opencl.c are written against it too. How each kernel here
 * maps to it:
 *   gs_empty             does nothing (launch latency).
 *   gs_spin              thread 0 polls the host-mapped flag through a volatile
 *                        pointer until it is non-zero or max_ns of %globaltimer
 *                        (ns) have passed; other threads leave at once.
 *   gs_stream_*          BabelStream's init/copy/mul/add/triad, grid-stride,
 *                        each operation rounded on its own (__fmul_rn,
 *                        __fadd_rn: no contraction into an FMA, as dev.h writes
 *                        them and the host recomputes them).
 *   gs_stream_dot        grid-stride a[i] * b[i] summed per thread with fmaf,
 *                        then a BENCH_DOT_BLOCK shared-memory tree; thread 0
 *                        writes partial[blockIdx.x]; a launch with another
 *                        block size writes nothing (dev.h: exactly that size).
 *   gs_fma_*             BENCH_FMA_CHAINS chains x = fma(x, x, c), unrolled
 *                        BENCH_FMA_UNROLL times per iteration, chain j from
 *                        seed + j / 64 rounded to the kernel's type (computed
 *                        in f32, in f64 for f64); the sum formed in the type as
 *                        ((x0 + x1) + x2) ... + x7 and stored to out[global id]
 *                        as f32, always. f32 fmaf, f64 fma, f16 __hfma2 on
 *                        half2, bf16 __hfma2 on __nv_bfloat162 (both lanes
 *                        alike, the low lane stored), i32 x * x + c in wrapping
 *                        u32 arithmetic (the same bits as dev.h's wrapping
 *                        i32) from (i32)(seed * 64) + j with c = (i32)(c * 64),
 *                        truncated as C converts, i8 __dp4a(x, 0x01010101 *
 *                        (j + 1), x) on signed bytes; the i32 sums converted
 *                        to f32 rounding to nearest.
 *   gs_mma_*             BENCH_MMA_CHAINS accumulators per warp, each given
 *                        one mma.sync per iteration, the eight in one asm
 *                        statement per iteration so that ptxas interleaves
 *                        them; A and B filled with seed converted to the input
 *                        type (f16 and bf16 rounding to nearest, tf32 cvt.rna,
 *                        s8 cvt.rni.sat, e4m3 cvt.rn.satfinite), accumulators
 *                        from 0; each lane stores the sum of its 4 x 8
 *                        accumulator elements, each as f32, chain 0 first.
 *                        f16/bf16 m16n8k16 and i8 m16n8k32 (s32 accumulate,
 *                        wrapping) and tf32 m16n8k8 from sm_80, e4m3 m16n8k32
 *                        from sm_89.
 *   gs_copy_u4           grid-stride uint4 copy through L2 only (__ldcg,
 *                        __stcg), as nvbandwidth's SM copies.
 *   gs_matmul_naive      2-D launch, x the column j, y the row i; c[i][j] is
 *                        the fmaf sum over k ascending from 0.
 *   gs_matmul_tiled(_f64) BENCH_TILE x BENCH_TILE blocks (another block
 *                        shape writes nothing), tiles staged in shared
 *                        memory, padded with zeros past n; the same fused
 *                        sum over k ascending, so naive and tiled give the
 *                        same bits.
 *   gs_compare_f32/f64   grid-stride; atomicAdd(count, 1) where got is not
 *                        finite or |got - want| > tol.
 *   gs_mem_fill/check    the words of bench_mem_word(); check counts the words
 *                        that differ (atomicAdd) and keeps the lowest index
 *                        (atomicMin on unsigned long long).
 * No fast math: nvcc runs with -ftz=false -prec-div=true -prec-sqrt=true
 * -fmad=false, and every fused step is written as one (fmaf, fma), so the
 * host recomputes an FMA work-item's value bit for bit for f32, f64, i32, i8.
 *
 * Levels (GS_SM, set by mk/ptx.mk), one PTX file each:
 *   gs_sm75.ptx  .target sm_75: everything but gs_fma_bf16 and the mma
 *                kernels. .version 6.3: the first PTX ISA with sm_75, and
 *                nothing used needs more (fma.rn.f16x2 is 4.2, dp4a 5.0,
 *                %globaltimer, ld.global.cg and 64-bit atom.min older), so
 *                drivers from R410 (CUDA 10.0) load it.
 *   gs_sm80.ptx  .target sm_80: adds gs_fma_bf16 (fma.rn.bf16x2) and
 *                mma.sync m16n8k16 f16/bf16, m16n8k8 tf32 (cvt.rna.tf32.f32),
 *                m16n8k32 s8. .version 7.0: the first with sm_80 and all of
 *                these (R450, CUDA 11.0).
 *   gs_sm89.ptx  .target sm_89: adds gs_mma_fp8, mma.sync m16n8k32 .e4m3
 *                with f32 accumulate, which the PTX ISA gives on sm_89 from
 *                version 8.4 (cvt.rn.satfinite.e4m3x2.f32 there from 8.1;
 *                .target sm_89 itself from 7.8): .version 8.4 (R550,
 *                CUDA 12.4). ptxas 13.0 confirms each floor: 6.2 refuses
 *                .target sm_75, 6.5 refuses the sm_80 file's bf16, 8.3 the
 *                fp8 mma.
 * scripts/check-ptx.sh has ptxas assemble each file at its lowered version
 * for every architecture from its level up. No sm_90 file: nothing of dev.h
 * needs Hopper's own instructions (wgmma wants sm_90a, whose PTX does not
 * run on later parts); sm_90 and later run gs_sm89.ptx, JIT-compiled.
 *
 * sm_70 (V100): CUDA 13's nvcc and ptxas know no architecture below
 * compute_75, so no sm_70 image is made or checked here. One would need
 * nvcc from CUDA 12.x (the last to target sm_70) to emit `.target sm_70`
 * (the GS_SM < 80 part of this source, whose instructions sm_70 has; not
 * the m16n8 mma: Volta's tensor cores take wmma and mma.sync m8n8k4 f16
 * only, which would be kernels of their own), a level of its own in
 * mk/ptx.mk and ptx.c, and a ptxas that knows sm_70 to check it. Until then
 * bench_ptx_image() gives no image below 7.5.
 */
#include <cuda_fp16.h>
#if GS_SM >= 80
#include <cuda_bf16.h>
#endif

#define BENCH_DOT_BLOCK  256
#define BENCH_FMA_CHAINS 8
#define BENCH_FMA_UNROLL 16
#define BENCH_MMA_CHAINS 8
#define BENCH_TILE       16

typedef unsigned long long u64;
typedef unsigned int u32;

#define GID               ((u64)blockIdx.x * blockDim.x + threadIdx.x)
#define GSTEP             ((u64)gridDim.x * blockDim.x)
#define GRID_STRIDE(i, n) for (u64 i = GID; i < (n); i += GSTEP)

extern "C" __global__ void
gs_empty(int unused)
{
	(void)unused;
}

static __device__ __forceinline__ u64
globaltimer(void)
{
	u64 t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

extern "C" __global__ void
gs_spin(const volatile int *flag, u64 max_ns)
{
	if (threadIdx.x != 0 || blockIdx.x != 0)
		return;
	u64 start = globaltimer();
	while (*flag == 0)
		if (globaltimer() - start >= max_ns)
			break;
}

/* BabelStream's five and dot */

extern "C" __global__ void
gs_stream_init(float *a, float *b, float *c, float va, float vb, float vc, u64 n)
{
	GRID_STRIDE(i, n)
	{
		a[i] = va;
		b[i] = vb;
		c[i] = vc;
	}
}

extern "C" __global__ void
gs_stream_copy(const float *a, float *c, u64 n)
{
	GRID_STRIDE(i, n)
	c[i] = a[i];
}

extern "C" __global__ void
gs_stream_mul(float *b, const float *c, float s, u64 n)
{
	GRID_STRIDE(i, n)
	b[i] = __fmul_rn(s, c[i]);
}

extern "C" __global__ void
gs_stream_add(const float *a, const float *b, float *c, u64 n)
{
	GRID_STRIDE(i, n)
	c[i] = __fadd_rn(a[i], b[i]);
}

extern "C" __global__ void
gs_stream_triad(float *a, const float *b, const float *c, float s, u64 n)
{
	GRID_STRIDE(i, n)
	a[i] = __fadd_rn(b[i], __fmul_rn(s, c[i]));
}

extern "C" __global__ void
gs_stream_dot(const float *a, const float *b, float *partial, u64 n)
{
	__shared__ float sum[BENCH_DOT_BLOCK];
	float s = 0.0f;

	/* the tree below is for exactly this many threads */
	if (blockDim.x != BENCH_DOT_BLOCK || blockDim.y != 1 || blockDim.z != 1)
		return;
	GRID_STRIDE(i, n)
	s = fmaf(a[i], b[i], s);
	sum[threadIdx.x] = s;
	for (unsigned half = BENCH_DOT_BLOCK / 2; half > 0; half /= 2) {
		__syncthreads();
		if (threadIdx.x < half)
			sum[threadIdx.x] = __fadd_rn(sum[threadIdx.x], sum[threadIdx.x + half]);
	}
	if (threadIdx.x == 0)
		partial[blockIdx.x] = sum[0];
}

/*
 * Vector FMA chains (clpeak's MAD chain), dev.h's numerics exactly. The
 * iteration loop stays rolled: 128 steps a trip already, more would only
 * grow the PTX.
 */

extern "C" __global__ void
gs_fma_f64(float *out, float seed, float c, int iters)
{
	double x[BENCH_FMA_CHAINS], cc = c, s;

#pragma unroll
	for (int j = 0; j < BENCH_FMA_CHAINS; j++)
		x[j] = __dadd_rn((double)seed, j / 64.0);
#pragma unroll 1
	for (int it = 0; it < iters; it++) {
#pragma unroll
		for (int u = 0; u < BENCH_FMA_UNROLL; u++) {
#pragma unroll
			for (int j = 0; j < BENCH_FMA_CHAINS; j++)
				x[j] = fma(x[j], x[j], cc);
		}
	}
	s = x[0];
#pragma unroll
	for (int j = 1; j < BENCH_FMA_CHAINS; j++)
		s = __dadd_rn(s, x[j]);
	out[GID] = (float)s;
}

extern "C" __global__ void
gs_fma_f32(float *out, float seed, float c, int iters)
{
	float x[BENCH_FMA_CHAINS], s;

#pragma unroll
	for (int j = 0; j < BENCH_FMA_CHAINS; j++)
		x[j] = __fadd_rn(seed, j / 64.0f);
#pragma unroll 1
	for (int it = 0; it < iters; it++) {
#pragma unroll
		for (int u = 0; u < BENCH_FMA_UNROLL; u++) {
#pragma unroll
			for (int j = 0; j < BENCH_FMA_CHAINS; j++)
				x[j] = fmaf(x[j], x[j], c);
		}
	}
	s = x[0];
#pragma unroll
	for (int j = 1; j < BENCH_FMA_CHAINS; j++)
		s = __fadd_rn(s, x[j]);
	out[GID] = s;
}

extern "C" __global__ void
gs_fma_f16(float *out, float seed, float c, int iters)
{
	__half2 x[BENCH_FMA_CHAINS], cc = __float2half2_rn(c), s;

#pragma unroll
	for (int j = 0; j < BENCH_FMA_CHAINS; j++)
		x[j] = __float2half2_rn(__fadd_rn(seed, j / 64.0f));
#pragma unroll 1
	for (int it = 0; it < iters; it++) {
#pragma unroll
		for (int u = 0; u < BENCH_FMA_UNROLL; u++) {
#pragma unroll
			for (int j = 0; j < BENCH_FMA_CHAINS; j++)
				x[j] = __hfma2(x[j], x[j], cc);
		}
	}
	s = x[0];
#pragma unroll
	for (int j = 1; j < BENCH_FMA_CHAINS; j++)
		s = __hadd2(s, x[j]);
	out[GID] = __low2float(s);
}

#if GS_SM >= 80
extern "C" __global__ void
gs_fma_bf16(float *out, float seed, float c, int iters)
{
	__nv_bfloat162 x[BENCH_FMA_CHAINS], cc = __float2bfloat162_rn(c), s;

#pragma unroll
	for (int j = 0; j < BENCH_FMA_CHAINS; j++)
		x[j] = __float2bfloat162_rn(__fadd_rn(seed, j / 64.0f));
#pragma unroll 1
	for (int it = 0; it < iters; it++) {
#pragma unroll
		for (int u = 0; u < BENCH_FMA_UNROLL; u++) {
#pragma unroll
			for (int j = 0; j < BENCH_FMA_CHAINS; j++)
				x[j] = __hfma2(x[j], x[j], cc);
		}
	}
	s = x[0];
#pragma unroll
	for (int j = 1; j < BENCH_FMA_CHAINS; j++)
		s = __hadd2(s, x[j]);
	out[GID] = __low2float(s);
}
#endif

/* dev.h's i32 start: (i32)(seed * 64) + j, the product in f32, truncated as C converts */
static __device__ __forceinline__ u32
int_start(float seed, int j)
{
	return (u32)(int)__fmul_rn(seed, 64.0f) + (u32)j;
}

extern "C" __global__ void
gs_fma_i32(float *out, float seed, float c, int iters)
{
	/* unsigned: the wrapping of dev.h, where signed overflow would be undefined */
	u32 x[BENCH_FMA_CHAINS], cc = (u32)(int)__fmul_rn(c, 64.0f), s;

#pragma unroll
	for (int j = 0; j < BENCH_FMA_CHAINS; j++)
		x[j] = int_start(seed, j);
#pragma unroll 1
	for (int it = 0; it < iters; it++) {
#pragma unroll
		for (int u = 0; u < BENCH_FMA_UNROLL; u++) {
#pragma unroll
			for (int j = 0; j < BENCH_FMA_CHAINS; j++)
				x[j] = x[j] * x[j] + cc;
		}
	}
	s = x[0];
#pragma unroll
	for (int j = 1; j < BENCH_FMA_CHAINS; j++)
		s += x[j];
	out[GID] = __int2float_rn((int)s);
}

extern "C" __global__ void
gs_dp4a_i8(float *out, float seed, float c, int iters)
{
	int x[BENCH_FMA_CHAINS];
	u32 s;

	(void)c;
#pragma unroll
	for (int j = 0; j < BENCH_FMA_CHAINS; j++)
		x[j] = (int)int_start(seed, j);
#pragma unroll 1
	for (int it = 0; it < iters; it++) {
#pragma unroll
		for (int u = 0; u < BENCH_FMA_UNROLL; u++) {
#pragma unroll
			for (int j = 0; j < BENCH_FMA_CHAINS; j++)
				x[j] = __dp4a(x[j], (int)(0x01010101u * (u32)(j + 1)), x[j]);
		}
	}
	s = (u32)x[0];
#pragma unroll
	for (int j = 1; j < BENCH_FMA_CHAINS; j++)
		s += (u32)x[j];
	out[GID] = __int2float_rn((int)s);
}

/*
 * Tensor cores: mma.sync, BENCH_MMA_CHAINS accumulators of 4 elements per
 * lane each (m16n8: 16 x 8 / 32 lanes), A in 4 registers and B in 2 for
 * every shape used (16 x K x input bits / 32 lanes / 32 bits).
 */
#if GS_SM >= 80

/* one iteration: every accumulator d[j] = A x B + d[j], eight mma.sync in one asm */
// clang-format off
#define MMA8(op, T)                                                                     \
	asm(op " {%0,%1,%2,%3}, {%32,%33,%34,%35}, {%36,%37}, {%0,%1,%2,%3};\n\t"           \
	    op " {%4,%5,%6,%7}, {%32,%33,%34,%35}, {%36,%37}, {%4,%5,%6,%7};\n\t"           \
	    op " {%8,%9,%10,%11}, {%32,%33,%34,%35}, {%36,%37}, {%8,%9,%10,%11};\n\t"       \
	    op " {%12,%13,%14,%15}, {%32,%33,%34,%35}, {%36,%37}, {%12,%13,%14,%15};\n\t"   \
	    op " {%16,%17,%18,%19}, {%32,%33,%34,%35}, {%36,%37}, {%16,%17,%18,%19};\n\t"   \
	    op " {%20,%21,%22,%23}, {%32,%33,%34,%35}, {%36,%37}, {%20,%21,%22,%23};\n\t"   \
	    op " {%24,%25,%26,%27}, {%32,%33,%34,%35}, {%36,%37}, {%24,%25,%26,%27};\n\t"   \
	    op " {%28,%29,%30,%31}, {%32,%33,%34,%35}, {%36,%37}, {%28,%29,%30,%31};"       \
	    : "+" T(d[0][0]), "+" T(d[0][1]), "+" T(d[0][2]), "+" T(d[0][3]),             \
	      "+" T(d[1][0]), "+" T(d[1][1]), "+" T(d[1][2]), "+" T(d[1][3]),             \
	      "+" T(d[2][0]), "+" T(d[2][1]), "+" T(d[2][2]), "+" T(d[2][3]),             \
	      "+" T(d[3][0]), "+" T(d[3][1]), "+" T(d[3][2]), "+" T(d[3][3]),             \
	      "+" T(d[4][0]), "+" T(d[4][1]), "+" T(d[4][2]), "+" T(d[4][3]),             \
	      "+" T(d[5][0]), "+" T(d[5][1]), "+" T(d[5][2]), "+" T(d[5][3]),             \
	      "+" T(d[6][0]), "+" T(d[6][1]), "+" T(d[6][2]), "+" T(d[6][3]),             \
	      "+" T(d[7][0]), "+" T(d[7][1]), "+" T(d[7][2]), "+" T(d[7][3])              \
	    : "r"(a), "r"(a), "r"(a), "r"(a), "r"(b), "r"(b))
// clang-format on

#define MMA_F "f"
#define MMA_R "r"

/* the lane's sum of its accumulator elements, each as f32, chain 0 first */
#define MMA_STORE(conv)                                          \
	do {                                                     \
		float s = 0.0f;                                  \
		for (int j = 0; j < BENCH_MMA_CHAINS; j++)       \
			for (int e = 0; e < 4; e++)              \
				s = __fadd_rn(s, conv(d[j][e])); \
		out[GID] = s;                                    \
	} while (0)

#define AS_F32(v)  (v)
#define S32_F32(v) __int2float_rn((int)(v))

static __device__ __forceinline__ u32
pack_half2(__half2 h)
{
	return *(u32 *)&h;
}

static __device__ __forceinline__ u32
pack_bf162(__nv_bfloat162 h)
{
	return *(u32 *)&h;
}

extern "C" __global__ void
gs_mma_f16(float *out, float seed, int iters)
{
	u32 a = pack_half2(__float2half2_rn(seed)), b = a;
	float d[BENCH_MMA_CHAINS][4] = {};

#pragma unroll 1
	for (int it = 0; it < iters; it++)
		MMA8("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", MMA_F);
	MMA_STORE(AS_F32);
}

extern "C" __global__ void
gs_mma_bf16(float *out, float seed, int iters)
{
	u32 a = pack_bf162(__float2bfloat162_rn(seed)), b = a;
	float d[BENCH_MMA_CHAINS][4] = {};

#pragma unroll 1
	for (int it = 0; it < iters; it++)
		MMA8("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", MMA_F);
	MMA_STORE(AS_F32);
}

extern "C" __global__ void
gs_mma_tf32(float *out, float seed, int iters)
{
	u32 a, b;
	float d[BENCH_MMA_CHAINS][4] = {};

	asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(a) : "f"(seed));
	b = a;
#pragma unroll 1
	for (int it = 0; it < iters; it++)
		MMA8("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", MMA_F);
	MMA_STORE(AS_F32);
}

extern "C" __global__ void
gs_mma_i8(float *out, float seed, int iters)
{
	u32 a, b;
	u32 d[BENCH_MMA_CHAINS][4] = {};

	/* seed as a signed byte (nearest, saturated) in each of the four */
	asm("cvt.rni.sat.s8.f32 %0, %1;" : "=r"(a) : "f"(seed));
	a = (a & 0xffu) * 0x01010101u;
	b = a;
#pragma unroll 1
	for (int it = 0; it < iters; it++)
		MMA8("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", MMA_R);
	MMA_STORE(S32_F32);
}

#if GS_SM >= 89
extern "C" __global__ void
gs_mma_fp8(float *out, float seed, int iters)
{
	unsigned short pair;
	u32 a, b;
	float d[BENCH_MMA_CHAINS][4] = {};

	/* seed as e4m3 (nearest, saturated to the largest finite) in both bytes */
	asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %1;" : "=h"(pair) : "f"(seed));
	a = (u32)pair * 0x00010001u;
	b = a;
#pragma unroll 1
	for (int it = 0; it < iters; it++)
		MMA8("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", MMA_F);
	MMA_STORE(AS_F32);
}
#endif
#endif

/* SM copies of host <-> device tests: 16 bytes a load, through L2 only */
extern "C" __global__ void
gs_copy_u4(const u32 *src, u32 *dst, u64 n4)
{
	const uint4 *s = (const uint4 *)src;
	uint4 *d = (uint4 *)dst;

	GRID_STRIDE(i, n4)
	__stcg(d + i, __ldcg(s + i));
}

/* Matrix products, row-major n x n: the fused sum over k ascending in all three */

extern "C" __global__ void
gs_matmul_naive(const float *a, const float *b, float *c, int n)
{
	u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x;
	u64 i = (u64)blockIdx.y * blockDim.y + threadIdx.y;
	float s = 0.0f;

	if (n <= 0 || i >= (u64)n || j >= (u64)n)
		return;
	for (u64 k = 0; k < (u64)n; k++)
		s = fmaf(a[i * n + k], b[k * n + j], s);
	c[i * n + j] = s;
}

/* tiled c = a x b in type T: every thread of the block stays for the barriers */
#define MATMUL_TILED(T)                                                                   \
	__shared__ T ta[BENCH_TILE][BENCH_TILE], tb[BENCH_TILE][BENCH_TILE];              \
	unsigned tx = threadIdx.x, ty = threadIdx.y;                                      \
	u64 j = (u64)blockIdx.x * BENCH_TILE + tx, i = (u64)blockIdx.y * BENCH_TILE + ty; \
	u64 nn = n > 0 ? (u64)n : 0;                                                      \
	T s = 0;                                                                          \
                                                                                          \
	if (blockDim.x != BENCH_TILE || blockDim.y != BENCH_TILE || blockDim.z != 1)      \
		return;                                                                   \
	for (u64 t = 0; t < nn; t += BENCH_TILE) {                                        \
		ta[ty][tx] = i < nn && t + tx < nn ? a[i * nn + t + tx] : (T)0;           \
		tb[ty][tx] = t + ty < nn && j < nn ? b[(t + ty) * nn + j] : (T)0;         \
		__syncthreads();                                                          \
		/* the zeros past n leave s as it is (s, from +0, is never -0) */         \
		for (unsigned k = 0; k < BENCH_TILE; k++)                                 \
			s = fma(ta[ty][k], tb[k][tx], s);                                 \
		__syncthreads();                                                          \
	}                                                                                 \
	if (i < nn && j < nn)                                                             \
		c[i * nn + j] = s;

extern "C" __global__ void
gs_matmul_tiled(const float *a, const float *b, float *c, int n)
{
	MATMUL_TILED(float)
}

extern "C" __global__ void
gs_matmul_tiled_f64(const double *a, const double *b, double *c, int n)
{
	MATMUL_TILED(double)
}

/* gpu-burn's compare */

extern "C" __global__ void
gs_compare_f32(const float *want, const float *got, u64 n, float tol, u32 *count)
{
	GRID_STRIDE(i, n)
	{
		float g = got[i];

		if (!isfinite(g) || fabsf(__fsub_rn(g, want[i])) > tol)
			atomicAdd(count, 1u);
	}
}

extern "C" __global__ void
gs_compare_f64(const double *want, const double *got, u64 n, double tol, u32 *count)
{
	GRID_STRIDE(i, n)
	{
		double g = got[i];

		if (!isfinite(g) || fabs(__dsub_rn(g, want[i])) > tol)
			atomicAdd(count, 1u);
	}
}

/* Memory test: bench_mem_word() of dev.c */

static __device__ __forceinline__ u32
mem_word(u64 i, u32 pattern, int mode)
{
	u32 x;

	switch (mode) {
	case 1: /* BENCH_MEM_ADDRESS */
		return (u32)i ^ pattern;
	case 2: /* BENCH_MEM_RANDOM */
		x = ((u32)i * 2654435761u) ^ pattern;
		if (x == 0)
			x = 1;
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		return x;
	default: /* BENCH_MEM_CONST */
		return pattern;
	}
}

extern "C" __global__ void
gs_mem_fill(u32 *p, u64 n, u32 pattern, int mode)
{
	GRID_STRIDE(i, n)
	p[i] = mem_word(i, pattern, mode);
}

extern "C" __global__ void
gs_mem_check(const u32 *p, u64 n, u32 pattern, int mode, u32 *count, u64 *first)
{
	GRID_STRIDE(i, n)
	{
		if (p[i] != mem_word(i, pattern, mode)) {
			atomicAdd(count, 1u);
			atomicMin(first, i);
		}
	}
}
