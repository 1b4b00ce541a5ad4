/*
 * The kernel set's names and the memory test's words (bench/dev.h): the
 * one place the PTX, the OpenCL C and the fake libcuda.so.1 of the tests
 * are held to.
 */
#include "bench/dev.h"

#include <string.h>

static const char *const kern_names[BK_NKERNELS] = {
	[BK_EMPTY] = "gs_empty",
	[BK_SPIN] = "gs_spin",
	[BK_STREAM_INIT] = "gs_stream_init",
	[BK_STREAM_COPY] = "gs_stream_copy",
	[BK_STREAM_MUL] = "gs_stream_mul",
	[BK_STREAM_ADD] = "gs_stream_add",
	[BK_STREAM_TRIAD] = "gs_stream_triad",
	[BK_STREAM_DOT] = "gs_stream_dot",
	[BK_FMA_F64] = "gs_fma_f64",
	[BK_FMA_F32] = "gs_fma_f32",
	[BK_FMA_F16] = "gs_fma_f16",
	[BK_FMA_BF16] = "gs_fma_bf16",
	[BK_FMA_I32] = "gs_fma_i32",
	[BK_DP4A_I8] = "gs_dp4a_i8",
	[BK_MMA_F16] = "gs_mma_f16",
	[BK_MMA_BF16] = "gs_mma_bf16",
	[BK_MMA_TF32] = "gs_mma_tf32",
	[BK_MMA_I8] = "gs_mma_i8",
	[BK_MMA_FP8] = "gs_mma_fp8",
	[BK_COPY_U4] = "gs_copy_u4",
	[BK_MATMUL_NAIVE] = "gs_matmul_naive",
	[BK_MATMUL_TILED] = "gs_matmul_tiled",
	[BK_MATMUL_TILED_F64] = "gs_matmul_tiled_f64",
	[BK_COMPARE_F32] = "gs_compare_f32",
	[BK_COMPARE_F64] = "gs_compare_f64",
	[BK_MEM_FILL] = "gs_mem_fill",
	[BK_MEM_CHECK] = "gs_mem_check",
};

const char *
bench_kern_name(enum bench_kern k)
{
	return (unsigned)k < BK_NKERNELS ? kern_names[k] : "?";
}

int
bench_kern_by_name(const char *name)
{
	for (int k = 0; k < BK_NKERNELS; k++)
		if (strcmp(kern_names[k], name) == 0)
			return k;
	return -1;
}

uint32_t
bench_mem_word(uint64_t i, uint32_t pattern, int mode)
{
	uint32_t x;

	switch (mode) {
	case BENCH_MEM_ADDRESS:
		return (uint32_t)i ^ pattern;
	case BENCH_MEM_RANDOM:
		x = ((uint32_t)i * 2654435761u) ^ pattern;
		if (x == 0)
			x = 1;
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		return x;
	default:
		return pattern;
	}
}
