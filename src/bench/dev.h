/*
 * One interface for every compute API bench and burn measure through: the
 * CUDA driver API (bench/cuda.c, kernels as PTX) and OpenCL (bench/opencl.c,
 * kernels as OpenCL C). A backend lists its devices, and for each gives
 * buffers, copies, kernel launches from the fixed set below, and timestamps
 * taken on the device's own clock; the tests (bench/suite.c) and the burn
 * (bench/burn.c) are written once over it, so the figures mean the same on
 * every vendor.
 *
 * The kernel set is an ABI shared by the PTX (src/bench/kernels/gs.cu), the
 * OpenCL C (in opencl.c) and the fake libcuda.so.1 of the tests
 * (tests/fakecuda/), which recognises the kernels by their names: each entry
 * below gives the name, the parameters in order (their C types as the kernel
 * takes them), the launch shape it expects and what it computes. Grid-stride
 * kernels work for any grid; the others say what they need.
 */
#ifndef GPUSCOPE_BENCH_DEV_H
#define GPUSCOPE_BENCH_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct err;

/*
 * The kernels. "grid-stride" means: for (i = global id; i < n; i += global
 * size). Every pointer is a device buffer (an offset into one is allowed);
 * u64 is a 64-bit unsigned integer (CUDA unsigned long long, OpenCL ulong),
 * i32 an int, f32 a float.
 */
enum bench_kern {
	/* gs_empty(i32 unused): does nothing; 1 x 1; launch latency. */
	BK_EMPTY,
	/*
	 * gs_spin(const volatile i32 *flag, u64 max_ns): thread 0 waits until
	 * *flag is non-zero (flag is host memory mapped into the device, as
	 * nvbandwidth's spin kernel) or max_ns nanoseconds of the device's
	 * globaltimer have passed; 1 x 1. Holds a stream while work is queued
	 * behind it. CUDA only.
	 */
	BK_SPIN,
	/* BabelStream's five, FP32 (the byte counts of dev.h's users: 2, 2, 3, 3, 2 x 4 x n) */
	/* gs_stream_init(f32 *a, f32 *b, f32 *c, f32 va, f32 vb, f32 vc, u64 n): grid-stride; a[i]
	   = va, b[i] = vb, c[i] = vc. */
	BK_STREAM_INIT,
	/* gs_stream_copy(const f32 *a, f32 *c, u64 n): grid-stride; c[i] = a[i]. */
	BK_STREAM_COPY,
	/* gs_stream_mul(f32 *b, const f32 *c, f32 s, u64 n): grid-stride; b[i] = s * c[i]. */
	BK_STREAM_MUL,
	/* gs_stream_add(const f32 *a, const f32 *b, f32 *c, u64 n): grid-stride; c[i] = a[i] +
	   b[i]. */
	BK_STREAM_ADD,
	/* gs_stream_triad(f32 *a, const f32 *b, const f32 *c, f32 s, u64 n): grid-stride; a[i] =
	   b[i] + s * c[i]. */
	BK_STREAM_TRIAD,
	/*
	 * gs_stream_dot(const f32 *a, const f32 *b, f32 *partial, u64 n): blocks
	 * of exactly BENCH_DOT_BLOCK work-items, any number of blocks; block k
	 * sums a[i] * b[i] over its grid-stride elements and writes the sum to
	 * partial[k]; the host adds the partials in double.
	 */
	BK_STREAM_DOT,
	/*
	 * Vector FMA chains, clpeak's: every work-item runs BENCH_FMA_CHAINS
	 * independent chains x = x * x + c, BENCH_FMA_UNROLL steps of each per
	 * iteration, iters iterations, then writes the sum of its chains to
	 * out[global id] (always: a store the compiler cannot drop). Chain j
	 * starts at x = seed + j / 64 (seed 0.5 and c = -1 keep every x in
	 * [-1, 1]: no overflow, no denormals), each step rounded once (fused)
	 * in the kernel's type; the sum is formed in the same type and stored
	 * converted to f32. Every work-item computes the same value, so the
	 * host checks any of them against its own chain. Blocks of any size.
	 *   operations per work-item = iters x CHAINS x UNROLL x ops per step
	 * ops per step: f64, f32, i32: 2 (a multiply and an add); f16 and bf16
	 * work on pairs (half2, bf16x2: both lanes alike, the low lane stored):
	 * 4; i8: one dp4a (four int8 products summed into an i32), 8. i32:
	 * x = x * x + c in wrapping 32-bit integers, chain j from
	 * x = (i32)(seed * 64) + j, c = (i32)(c * 64). i8: chain j from the same
	 * x, each step x = dp4a(x, 0x01010101 * (j + 1), x), the bytes signed
	 * (c unused); the i32 sum stored as f32.
	 */
	/* gs_fma_f64(f32 *out, f32 seed, f32 c, i32 iters) */
	BK_FMA_F64,
	/* gs_fma_f32(f32 *out, f32 seed, f32 c, i32 iters) */
	BK_FMA_F32,
	/* gs_fma_f16(f32 *out, f32 seed, f32 c, i32 iters): half2 */
	BK_FMA_F16,
	/* gs_fma_bf16(f32 *out, f32 seed, f32 c, i32 iters): bf16x2; CUDA sm_80 and later */
	BK_FMA_BF16,
	/* gs_fma_i32(f32 *out, f32 seed, f32 c, i32 iters) */
	BK_FMA_I32,
	/* gs_dp4a_i8(f32 *out, f32 seed, f32 c, i32 iters) */
	BK_DP4A_I8,
	/*
	 * Tensor cores (CUDA, mma.sync): every warp runs BENCH_MMA_CHAINS
	 * independent accumulators, iters iterations of one mma each, then
	 * each lane writes the sum of its accumulator elements (as f32) to
	 * out[global id]. The fragments are filled from seed (each element
	 * seed, in the input type); the value is checked for being finite only.
	 * Blocks a multiple of 32. FLOPs per warp per mma = 2 x M x N x K.
	 */
	/* gs_mma_f16(f32 *out, f32 seed, i32 iters): m16n8k16, f16 in, f32 accumulate; sm_80 */
	BK_MMA_F16,
	/* gs_mma_bf16(f32 *out, f32 seed, i32 iters): m16n8k16, bf16 in, f32 accumulate; sm_80 */
	BK_MMA_BF16,
	/* gs_mma_tf32(f32 *out, f32 seed, i32 iters): m16n8k8, tf32 in, f32 accumulate; sm_80 */
	BK_MMA_TF32,
	/* gs_mma_i8(f32 *out, f32 seed, i32 iters): m16n8k32, s8 in, s32 accumulate; sm_80 */
	BK_MMA_I8,
	/* gs_mma_fp8(f32 *out, f32 seed, i32 iters): m16n8k32, e4m3 in, f32 accumulate; sm_89 */
	BK_MMA_FP8,
	/*
	 * gs_copy_u4(const u32 *src, u32 *dst, u64 n4): grid-stride over n4
	 * groups of four u32 (16 bytes, 16-byte aligned), dst = src: the SM copy
	 * of host <-> device tests (src or dst a mapped host pointer).
	 */
	BK_COPY_U4,
	/*
	 * gs_matmul_naive(const f32 *a, const f32 *b, f32 *c, i32 n): row-major
	 * n x n, c = a x b; a 2-D launch, dimension 0 the column j, dimension 1
	 * the row i, work-items past n do nothing.
	 */
	BK_MATMUL_NAIVE,
	/*
	 * gs_matmul_tiled(const f32 *a, const f32 *b, f32 *c, i32 n): the same
	 * with BENCH_TILE x BENCH_TILE blocks staging tiles in shared memory;
	 * the grid rounded up to whole tiles.
	 */
	BK_MATMUL_TILED,
	/* gs_matmul_tiled_f64(const f64 *a, const f64 *b, f64 *c, i32 n): the same in f64 (burn).
	 */
	BK_MATMUL_TILED_F64,
	/*
	 * gs_compare_f32(const f32 *want, const f32 *got, u64 n, f32 tol, u32
	 * *count): grid-stride; atomically adds 1 to *count for each i where
	 * |got[i] - want[i]| > tol or got[i] is not finite (gpu-burn's compare).
	 */
	BK_COMPARE_F32,
	/* gs_compare_f64(const f64 *want, const f64 *got, u64 n, f64 tol, u32 *count): the same in
	   f64. */
	BK_COMPARE_F64,
	/*
	 * Memory test (cuda_memtest's, DCGM memtest's patterns), over n u32 words:
	 * gs_mem_fill(u32 *p, u64 n, u32 pattern, i32 mode): grid-stride;
	 * gs_mem_check(const u32 *p, u64 n, u32 pattern, i32 mode, u32 *count,
	 * u64 *first): grid-stride; atomically counts words that differ from
	 * what fill wrote and atomically takes the lowest such index into
	 * *first (atomicMin; the host sets it to UINT64_MAX first).
	 * The word at i for each mode (bench_mem_word() computes the same):
	 *   BENCH_MEM_CONST:   pattern (all zeros, all ones, walking 1 << k...)
	 *   BENCH_MEM_ADDRESS: (u32)i ^ pattern (moving inversions: pattern 0, then ~0)
	 *   BENCH_MEM_RANDOM:  x = (u32)i * 2654435761 ^ pattern; x = x ? x : 1;
	 *                      x ^= x << 13; x ^= x >> 17; x ^= x << 5 (all u32)
	 */
	BK_MEM_FILL,
	BK_MEM_CHECK,
	BK_NKERNELS,
};

#define BENCH_DOT_BLOCK  256
#define BENCH_FMA_CHAINS 8
#define BENCH_FMA_UNROLL 16
#define BENCH_MMA_CHAINS 8
#define BENCH_TILE       16

enum bench_mem_mode { BENCH_MEM_CONST = 0, BENCH_MEM_ADDRESS = 1, BENCH_MEM_RANDOM = 2 };

/* The kernel's name in the PTX and the OpenCL C ("gs_stream_triad"). */
const char *bench_kern_name(enum bench_kern k);
/* The kernel for a name, or -1. */
int bench_kern_by_name(const char *name);
/* The word gs_mem_fill writes at index i. */
uint32_t bench_mem_word(uint64_t i, uint32_t pattern, int mode);

/* An argument of a launch. */
enum bench_arg_type { BA_BUF, BA_U64, BA_I32, BA_U32, BA_F32, BA_F64, BA_HOST };
struct bench_arg {
	enum bench_arg_type type;
	union {
		struct {
			uint64_t buf; /* a buffer of alloc() */
			uint64_t off; /* bytes into it */
		} b;
		uint64_t u64;
		int32_t i32;
		uint32_t u32;
		float f32;
		double f64;
		void *host; /* BA_HOST: a pointer of host_alloc(mapped), passed as its device
		               address */
	} v;
};

/* The arguments of a launch, one constructor a type. */
static inline struct bench_arg
bench_arg_buf(uint64_t buf, uint64_t off)
{
	struct bench_arg a = { .type = BA_BUF, .v.b = { .buf = buf, .off = off } };

	return a;
}

static inline struct bench_arg
bench_arg_u64(uint64_t v)
{
	struct bench_arg a = { .type = BA_U64, .v.u64 = v };

	return a;
}

static inline struct bench_arg
bench_arg_i32(int32_t v)
{
	struct bench_arg a = { .type = BA_I32, .v.i32 = v };

	return a;
}

static inline struct bench_arg
bench_arg_u32(uint32_t v)
{
	struct bench_arg a = { .type = BA_U32, .v.u32 = v };

	return a;
}

static inline struct bench_arg
bench_arg_f32(float v)
{
	struct bench_arg a = { .type = BA_F32, .v.f32 = v };

	return a;
}

static inline struct bench_arg
bench_arg_f64(double v)
{
	struct bench_arg a = { .type = BA_F64, .v.f64 = v };

	return a;
}

static inline struct bench_arg
bench_arg_host(void *p)
{
	struct bench_arg a = { .type = BA_HOST, .v.host = p };

	return a;
}

/* What a device is, as far as its API tells (0 or "" where it does not). */
struct bench_dev_info {
	char api[8];            /* "cuda", "opencl" */
	char id[24];            /* "cuda:0", "opencl:1" */
	char name[128];         /* cuDeviceGetName, CL_DEVICE_NAME */
	char vendor[64];        /* "NVIDIA", CL_DEVICE_VENDOR */
	char uuid[48];          /* "GPU-xxxxxxxx-...." (nvidia-smi's form), or "" */
	char pci_bus_id[24];    /* "0000:17:00.0", or "" */
	char driver[64];        /* driver version */
	int cc_major, cc_minor; /* CUDA compute capability; 0 elsewhere */
	unsigned units;         /* SMs or compute units */
	unsigned clock_mhz;     /* the API's reported (maximum) clock, 0: not told */
	unsigned mem_clock_mhz; /* CUDA: CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE / 1000 */
	unsigned mem_bus_bits;  /* CUDA: CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH */
	unsigned long long
	        l2_bytes; /* last-level cache (CUDA L2, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE) */
	unsigned long long mem_total; /* bytes */
	unsigned long long max_alloc; /* the largest buffer */
	size_t max_block;             /* work-items of a block */
	bool has_fp64, has_fp16;      /* the API says it has them */
	bool host_mapped;             /* host memory can be mapped for kernels (spin, SM copies) */
	bool cpu;                     /* a CPU device (PoCL) */
};

struct bench_dev;

/* What the driver tells of the link between two devices (peer_info()); -1: not told. */
struct bench_peer_info {
	bool to, from; /* d can access other's memory (cuDeviceCanAccessPeer), and back */
	int rank;      /* CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, d to other */
	int atomics;   /* CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, d to other */
};

/*
 * A device's operations. Every call that can fail returns a negative
 * status (core/err.h) with err set to one line naming the API call and its
 * error code ("cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (2)"); E_LOST when the
 * device or its context is gone (CUDA_ERROR_ILLEGAL_ADDRESS, _LAUNCH_FAILED,
 * _ECC_UNCORRECTABLE, CL_OUT_OF_RESOURCES after a fault...): nothing more
 * can be done on it. Streams: 0 and 1 (two, for bidirectional copies).
 */
struct bench_dev_ops {
	/* Whether the device can run kernel k (its architecture has the instructions). */
	bool (*has)(struct bench_dev *d, enum bench_kern k);
	/* Free and total device memory in bytes (cuMemGetInfo; OpenCL: total only, free = total).
	 */
	int (*mem_info)(struct bench_dev *d, unsigned long long *free, unsigned long long *total,
	                struct err *err);
	int (*alloc)(struct bench_dev *d, size_t bytes, uint64_t *buf, struct err *err);
	void (*free)(struct bench_dev *d, uint64_t buf);
	/* Host memory: pinned (page-locked) and, when mapped, usable by kernels as BA_HOST. */
	int (*host_alloc)(struct bench_dev *d, size_t bytes, bool mapped, void **p,
	                  struct err *err);
	void (*host_free)(struct bench_dev *d, void *p);
	/*
	 * Copies between host memory (pinned from host_alloc, or any other:
	 * pageable) and a buffer, queued on stream; with sync false they may
	 * return before the copy is done (then host must stay valid until the
	 * stream is synchronised).
	 */
	int (*write)(struct bench_dev *d, int stream, uint64_t buf, size_t off, const void *host,
	             size_t bytes, bool sync, struct err *err);
	int (*read)(struct bench_dev *d, int stream, uint64_t buf, size_t off, void *host,
	            size_t bytes, bool sync, struct err *err);
	/* Device to device within the device (copy engine). */
	int (*copy)(struct bench_dev *d, int stream, uint64_t dst, uint64_t src, size_t bytes,
	            struct err *err);
	/*
	 * Queue kernel k on stream with grid[0..1] blocks of block[0..1]
	 * work-items (a 1-D launch has grid[1] = block[1] = 1) and its args.
	 */
	int (*launch)(struct bench_dev *d, int stream, enum bench_kern k, const unsigned grid[2],
	              const unsigned block[2], const struct bench_arg *args, unsigned nargs,
	              struct err *err);
	/*
	 * Timestamps on the device's clock: mark() queues marker slot (0 to
	 * BENCH_MARKS - 1) on stream; elapsed() waits for both and gives the
	 * seconds from marker a to marker b (cuEventElapsedTime, OpenCL
	 * profiling of marker events).
	 */
	int (*mark)(struct bench_dev *d, int stream, unsigned slot, struct err *err);
	int (*elapsed)(struct bench_dev *d, unsigned a, unsigned b, double *seconds,
	               struct err *err);
	/*
	 * Wait for everything queued on stream (-1: every stream), for at most
	 * d->timeout_s seconds (polled, never a blocking driver call that could
	 * hang): E_TIMEOUT past it, after which the device is not used again.
	 */
	int (*sync)(struct bench_dev *d, int stream, struct err *err);
	/* Release everything of d (buffers, streams, context) and d itself. */
	void (*close)(struct bench_dev *d);
	/*
	 * GPU to GPU (CUDA; NULL in a backend without it, as OpenCL). peer_info()
	 * says whether d and other (a device of the same backend) can reach
	 * each other's memory directly, and what the driver tells of the link.
	 * peer_copy() queues, on d's stream, a copy-engine copy of bytes from
	 * d's buffer src to dst_dev's buffer dst, enabling d's access to
	 * dst_dev's memory the first time (E_NOTSUP when the driver refuses
	 * it); markers on that stream time it. E_LOST or E_TIMEOUT: one of the
	 * two is lost (mem_info() on each tells which).
	 */
	int (*peer_info)(struct bench_dev *d, struct bench_dev *other, struct bench_peer_info *pi,
	                 struct err *err);
	int (*peer_copy)(struct bench_dev *d, int stream, struct bench_dev *dst_dev, uint64_t dst,
	                 uint64_t src, size_t bytes, struct err *err);
};

#define BENCH_MARKS 8

struct bench_dev {
	struct bench_dev_info info;
	const struct bench_dev_ops *ops;
	double timeout_s; /* sync()'s limit: 60 s unless set */
	void *priv;       /* the backend's */
};

/*
 * The devices of every backend, opened by bench_devs_open(): CUDA's first
 * (libcuda.so.1, or GPUSCOPE_CUDA), then OpenCL's, where an OpenCL
 * device that is also a CUDA device (same PCI bus id, or NVIDIA's ICD while
 * CUDA opened) is left out. reason says, when one API has no device, why
 * and what to install.
 */
struct bench_devs {
	struct bench_dev **dev;
	size_t ndev;
	char cuda_reason[320];   /* "" when CUDA gave devices */
	char opencl_reason[512]; /* "" when OpenCL gave devices */
};

/* Append d to devs (taking it). 0 (xalloc: out of memory ends the program). */
int bench_devs_add(struct bench_devs *devs, struct bench_dev *d);
/*
 * Whether id names d, the device at index of a list: the index itself
 * ("0"), d's id ("cuda:0", any case), its UUID or a prefix of it of 8
 * characters or more, its PCI bus id in any spelling ("0000:17:00.0",
 * "17:00.0").
 */
bool bench_dev_matches(const struct bench_dev *d, size_t index, const char *id);
/*
 * Set keep[i] for each device of devs that ids (a comma-separated list of
 * the above) names. Returns 0, or E_USAGE with err naming the first id that
 * names none.
 */
int bench_devs_select(const struct bench_devs *devs, const char *ids, bool *keep, struct err *err);
/* Close every device of devs and empty it. */
void bench_devs_close(struct bench_devs *devs);

#endif
