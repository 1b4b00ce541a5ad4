/*
 * cuBLASLt through dlopen for the gemm.* tests (bench/cublaslt.h): the
 * library found and checked, a handle on a device's context, a square GEMM
 * described once and its heuristic's candidates queued on the device's
 * stream 0 between the suite's markers, and the host's side of the check
 * (the inputs as a function of their index, the reference in double and
 * its tolerance).
 */
#include "bench/cublaslt.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cuda.h"
#include "bench/dev.h"
#include "core/err.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

/* cublas_api.h, library_types.h, cublasLt.h: the types */
typedef int cublasStatus_t;
typedef int cublasComputeType_t;
typedef int cudaDataType_t;
typedef int cublasOperation_t;
typedef int cublasLtMatmulDescAttributes_t;
typedef int cublasLtMatmulPreferenceAttributes_t;
typedef struct cublasLtContext *cublasLtHandle_t;
typedef struct {
	uint64_t data[32];
} cublasLtMatmulDescOpaque_t;
typedef cublasLtMatmulDescOpaque_t *cublasLtMatmulDesc_t;
typedef struct {
	uint64_t data[8];
} cublasLtMatrixLayoutOpaque_t;
typedef cublasLtMatrixLayoutOpaque_t *cublasLtMatrixLayout_t;
typedef struct {
	uint64_t data[8];
} cublasLtMatmulPreferenceOpaque_t;
typedef cublasLtMatmulPreferenceOpaque_t *cublasLtMatmulPreference_t;
typedef struct {
	uint64_t data[8];
} cublasLtMatmulAlgo_t;
typedef struct {
	cublasLtMatmulAlgo_t algo;
	size_t workspaceSize;
	cublasStatus_t state;
	float wavesCount;
	int reserved[4];
} cublasLtMatmulHeuristicResult_t;

/* the constants used */
#define CUBLAS_STATUS_SUCCESS                    0
#define CUBLAS_STATUS_ARCH_MISMATCH              8
#define CUBLAS_STATUS_NOT_SUPPORTED              15
#define CUBLAS_OP_N                              0
#define CUBLAS_OP_T                              1
#define CUBLAS_COMPUTE_16F                       64
#define CUBLAS_COMPUTE_32F                       68
#define CUBLAS_COMPUTE_64F                       70
#define CUBLAS_COMPUTE_32F_FAST_TF32             77
#define CUDA_R_32F                               0
#define CUDA_R_64F                               1
#define CUDA_R_16F                               2
#define CUDA_R_16BF                              14
#define CUDA_R_8F_E4M3                           28
#define CUBLASLT_MATMUL_DESC_TRANSA              3
#define CUBLASLT_MATMUL_DESC_TRANSB              4
#define CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES 1

static const struct {
	int code;
	const char *name;
} lt_status[] = {
	{ 0, "CUBLAS_STATUS_SUCCESS" },           { 1, "CUBLAS_STATUS_NOT_INITIALIZED" },
	{ 3, "CUBLAS_STATUS_ALLOC_FAILED" },      { 7, "CUBLAS_STATUS_INVALID_VALUE" },
	{ 8, "CUBLAS_STATUS_ARCH_MISMATCH" },     { 11, "CUBLAS_STATUS_MAPPING_ERROR" },
	{ 13, "CUBLAS_STATUS_EXECUTION_FAILED" }, { 14, "CUBLAS_STATUS_INTERNAL_ERROR" },
	{ 15, "CUBLAS_STATUS_NOT_SUPPORTED" },    { 16, "CUBLAS_STATUS_LICENSE_ERROR" },
};

struct lt_sym {
	cublasStatus_t (*Create)(cublasLtHandle_t *);
	cublasStatus_t (*Destroy)(cublasLtHandle_t);
	size_t (*GetVersion)(void);
	cublasStatus_t (*MatmulDescCreate)(cublasLtMatmulDesc_t *, cublasComputeType_t,
	                                   cudaDataType_t);
	cublasStatus_t (*MatmulDescDestroy)(cublasLtMatmulDesc_t);
	cublasStatus_t (*MatmulDescSetAttribute)(cublasLtMatmulDesc_t,
	                                         cublasLtMatmulDescAttributes_t, const void *,
	                                         size_t);
	cublasStatus_t (*MatrixLayoutCreate)(cublasLtMatrixLayout_t *, cudaDataType_t, uint64_t,
	                                     uint64_t, int64_t);
	cublasStatus_t (*MatrixLayoutDestroy)(cublasLtMatrixLayout_t);
	cublasStatus_t (*MatmulPreferenceCreate)(cublasLtMatmulPreference_t *);
	cublasStatus_t (*MatmulPreferenceDestroy)(cublasLtMatmulPreference_t);
	cublasStatus_t (*MatmulPreferenceSetAttribute)(cublasLtMatmulPreference_t,
	                                               cublasLtMatmulPreferenceAttributes_t,
	                                               const void *, size_t);
	cublasStatus_t (*MatmulAlgoGetHeuristic)(cublasLtHandle_t, cublasLtMatmulDesc_t,
	                                         cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
	                                         cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
	                                         cublasLtMatmulPreference_t, int,
	                                         cublasLtMatmulHeuristicResult_t *, int *);
	cublasStatus_t (*Matmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *,
	                         cublasLtMatrixLayout_t, const void *, cublasLtMatrixLayout_t,
	                         const void *, const void *, cublasLtMatrixLayout_t, void *,
	                         cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t *, void *,
	                         size_t, void *);
};

#define SYM(field)                                                \
	{                                                         \
		"cublasLt" #field, offsetof(struct lt_sym, field) \
	}
static const struct {
	const char *name;
	size_t off;
} lt_syms[] = {
	SYM(Create),
	SYM(Destroy),
	SYM(GetVersion),
	SYM(MatmulDescCreate),
	SYM(MatmulDescDestroy),
	SYM(MatmulDescSetAttribute),
	SYM(MatrixLayoutCreate),
	SYM(MatrixLayoutDestroy),
	SYM(MatmulPreferenceCreate),
	SYM(MatmulPreferenceDestroy),
	SYM(MatmulPreferenceSetAttribute),
	SYM(MatmulAlgoGetHeuristic),
	SYM(Matmul),
};
#undef SYM

/* clpeak's types (bench-specs.md 1.4): what each gemm.* test asks of cuBLASLt */
static const struct gemm_type {
	const char *name;
	int in, out, compute, scale;
	size_t in_size, out_size;
	bool trans_a;
	double grid;          /* inputs are multiples of 1 / grid (0: any value of the type) */
	double u_out, u_acc;  /* unit roundoffs of the output and of the accumulation */
	const char *tol_text; /* what u_acc is */
} types[BG_NTYPES] = {
	[BG_FP32] = { "fp32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 4, 4, false,
	              0, 0x1p-24, 0x1p-23, "fp32 accumulate, u = 2^-23" },
	/* inputs on a 2^-10 grid are exact in TF32: only the accumulation is checked */
	[BG_TF32] = { "tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, 4,
	              4, false, 1024, 0x1p-24, 0x1p-22,
	              "tf32-exact inputs, fp32 tensor accumulate, u = 2^-22" },
	[BG_FP16] = { "fp16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F, CUDA_R_16F, 2, 2, false,
	              1024, 0x1p-11, 0x1p-11, "fp16 accumulate, u = 2^-11" },
	[BG_BF16] = { "bf16", CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2, 4, false,
	              128, 0x1p-24, 0x1p-22, "fp32 tensor accumulate, u = 2^-22" },
	/* Hopper's FP8 tensor accumulation keeps about 14 bits (DeepSeek-V3's report) */
	[BG_FP8] = { "fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 1, 2, true,
	             8, 0x1p-8, 0x1p-14, "fp8 tensor accumulate, u = 2^-14, bf16 out" },
	[BG_FP64] = { "fp64", CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F, 8, 8, false,
	              0, 0x1p-53, 0x1p-52, "fp64 accumulate, u = 2^-52" },
};

const char *
bench_gemm_type_name(enum bench_gemm_type t)
{
	return t < BG_NTYPES ? types[t].name : "?";
}

size_t
bench_gemm_in_size(enum bench_gemm_type t)
{
	return t < BG_NTYPES ? types[t].in_size : 0;
}

size_t
bench_gemm_out_size(enum bench_gemm_type t)
{
	return t < BG_NTYPES ? types[t].out_size : 0;
}

bool
bench_gemm_trans_a(enum bench_gemm_type t)
{
	return t < BG_NTYPES && types[t].trans_a;
}

const char *
bench_gemm_tolerance_text(enum bench_gemm_type t)
{
	return t < BG_NTYPES ? types[t].tol_text : "?";
}

/* ---- the inputs, and the host's reference ---- */

/* splitmix64's finaliser: every element's value from its index alone */
static uint64_t
mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

double
bench_gemm_value(enum bench_gemm_type t, int m, uint64_t idx)
{
	/* [-1, 1): random data, as clpeak and Azure use (power, clocks, no compression) */
	double u =
	        (double)(mix(idx ^ ((uint64_t)(m + 1) << 56) ^ 0x67656d6dull) >> 11) * 0x1p-52 - 1;

	if (t >= BG_NTYPES)
		return 0;
	if (types[t].grid > 0)
		return round(u * types[t].grid) / types[t].grid;
	return t == BG_FP32 ? (double)(float)u : u;
}

/* v, exact in a binary format of ebits exponent and mbits fraction bits (normal or 0) */
static uint32_t
encode_exact(double v, int ebits, int mbits)
{
	uint32_t sign = signbit(v) ? 1u << (ebits + mbits) : 0;
	int e;
	double m;

	if (v == 0)
		return sign;
	m = frexp(fabs(v), &e); /* |v| = m 2^e, m in [0.5, 1): 1.f x 2^(e - 1) */
	return sign | (uint32_t)(e - 1 + (1 << (ebits - 1)) - 1) << mbits |
	       (uint32_t)((m * 2 - 1) * (double)(1u << mbits));
}

void
bench_gemm_fill(enum bench_gemm_type t, int m, uint64_t first, size_t count, void *out)
{
	for (size_t i = 0; i < count; i++) {
		double v = bench_gemm_value(t, m, first + i);
		float f = (float)v;
		uint32_t bits;
		uint16_t h;
		uint8_t q;

		switch (t) {
		case BG_FP32:
		case BG_TF32:
			memcpy((char *)out + 4 * i, &f, 4);
			break;
		case BG_FP64:
			memcpy((char *)out + 8 * i, &v, 8);
			break;
		case BG_FP16:
			h = (uint16_t)encode_exact(v, 5, 10);
			memcpy((char *)out + 2 * i, &h, 2);
			break;
		case BG_BF16:
			/* exact: the low half of the float is zero */
			memcpy(&bits, &f, 4);
			h = (uint16_t)(bits >> 16);
			memcpy((char *)out + 2 * i, &h, 2);
			break;
		case BG_FP8:
			q = (uint8_t)encode_exact(v, 4, 3);
			((uint8_t *)out)[i] = q;
			break;
		default:
			return;
		}
	}
}

static double
half_to_double(uint16_t h)
{
	int e = h >> 10 & 0x1f, f = h & 0x3ff;
	double v;

	if (e == 0x1f)
		v = f ? NAN : INFINITY;
	else if (e == 0)
		v = ldexp(f, -24);
	else
		v = ldexp(f + 1024, e - 25);
	return h & 0x8000 ? -v : v;
}

double
bench_gemm_decode(enum bench_gemm_type t, const void *p)
{
	float f;
	double d;
	uint16_t h;
	uint32_t bits;

	switch (t < BG_NTYPES ? types[t].out : -1) {
	case CUDA_R_32F:
		memcpy(&f, p, 4);
		return f;
	case CUDA_R_64F:
		memcpy(&d, p, 8);
		return d;
	case CUDA_R_16F:
		memcpy(&h, p, 2);
		return half_to_double(h);
	case CUDA_R_16BF:
		memcpy(&h, p, 2);
		bits = (uint32_t)h << 16;
		memcpy(&f, &bits, 4);
		return f;
	}
	return NAN;
}

double
bench_gemm_reference(enum bench_gemm_type t, unsigned n, unsigned i, unsigned j, double *tol)
{
	double sum = 0, s1 = 0, s2 = 0;
	bool ta = bench_gemm_trans_a(t);

	for (unsigned l = 0; l < n; l++) {
		/* column-major: A(i, l) is A[i + l n], or A[l + i n] stored transposed */
		uint64_t ai = ta ? l + (uint64_t)i * n : i + (uint64_t)l * n;
		double p = bench_gemm_value(t, 0, ai) * bench_gemm_value(t, 1, l + (uint64_t)j * n);

		sum += p;
		s1 += fabs(p);
		s2 += p * p;
	}
	if (t < BG_NTYPES)
		*tol = 2 * types[t].u_out * fabs(sum) +
		       types[t].u_acc * (8 * sqrt((double)n) * sqrt(s2) + s1);
	return sum;
}

/* ---- the library ---- */

struct bench_gemm {
	struct bench_dev *d;
	void *dl;
	struct lt_sym s;
	char path[PATH_MAX];
	char version[32];
	cublasLtHandle_t h;
	/* the plan */
	enum bench_gemm_type t;
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t la, lb, lc;
	cublasLtMatmulPreference_t pref;
	cublasLtMatmulAlgo_t algo[BENCH_GEMM_ALGOS];
	unsigned nalgo;
	unsigned long long a, b, c, ws;
	size_t ws_bytes;
	union {
		float f32;
		double f64;
		uint16_t f16;
	} alpha, beta;
};

static const char *
status_name(cublasStatus_t st, char *buf, size_t size)
{
	for (size_t i = 0; i < ARRAY_SIZE(lt_status); i++)
		if (lt_status[i].code == st)
			return lt_status[i].name;
	snprintf(buf, size, "cuBLAS status %d", st);
	return buf;
}

/* "call: CUBLAS_STATUS_NAME (code)": E_NOTSUP for what the library does not support */
static int
lt_fail(struct err *err, const char *call, cublasStatus_t st)
{
	char buf[32];
	bool notsup = st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_ARCH_MISMATCH;

	return err_set(err, notsup ? E_NOTSUP : E_IO, "%s: %s (%d)", call,
	               status_name(st, buf, sizeof(buf)), st);
}

static bool
is_stub(const char *path)
{
	char real[PATH_MAX];
	const char *p = realpath(path, real) ? real : path;

	return strstr(p, "/stubs/") || strstr(path, "/stubs/");
}

/* dlopen the library: 0, or E_NOTSUP with err saying why */
static int
load(struct bench_gemm *g, struct err *err)
{
	static const char *const names[] = { "libcublasLt.so.13", "libcublasLt.so.12",
		                             "libcublasLt.so.11", "libcublasLt.so" };
	const char *env = getenv("GPUSCOPE_CUBLASLT");
	struct link_map *lm = NULL;
	const char *tried = NULL, *where;
	char other[256] = "";
	void *again;

	if (env && *env) {
		g->dl = dlopen(env, RTLD_NOW | RTLD_LOCAL);
		if (!g->dl) {
			const char *e = dlerror();

			return err_set(err, E_NOTSUP,
			               "cannot load '%s' (named by GPUSCOPE_CUBLASLT): %s", env,
			               e ? e : "not found");
		}
		tried = env;
	} else {
		for (size_t i = 0; i < ARRAY_SIZE(names) && !g->dl; i++) {
			const char *e;

			g->dl = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
			tried = names[i];
			e = g->dl ? NULL : dlerror();
			/* one that is there but does not load says more than "not found" */
			if (e && !other[0] && !strstr(e, "No such file"))
				snprintf(other, sizeof(other), "%s", e);
		}
		if (!g->dl) {
			if (other[0])
				return err_set(err, E_NOTSUP, "cannot load cuBLASLt: %s", other);
			return err_set(
			        err, E_NOTSUP,
			        "libcublasLt.so not found: install the CUDA toolkit's libcublas "
			        "or PyTorch (its nvidia-cublas-cu12 wheel)");
		}
	}
	where = dlinfo(g->dl, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && *lm->l_name
	                ? lm->l_name
	                : tried;
	str_copy(g->path, sizeof(g->path), where);
	if (is_stub(where)) {
		err_set(err, E_NOTSUP,
		        "'%s' is the CUDA toolkit's link-time stub, not the library: remove its "
		        "directory from LD_LIBRARY_PATH and the loader cache",
		        where);
		goto fail;
	}
	for (size_t i = 0; i < ARRAY_SIZE(lt_syms); i++) {
		void *fn = dlsym(g->dl, lt_syms[i].name);

		if (!fn) {
			err_set(err, E_NOTSUP, "'%s' is missing %s: not cuBLASLt 11 or later",
			        where, lt_syms[i].name);
			goto fail;
		}
		/* storing an object pointer into a function pointer slot is what dlsym is for */
		memcpy((char *)&g->s + lt_syms[i].off, &fn, sizeof(fn));
	}
	/* as libcuda.so.1 (bench/cuda.c): the library's threads may outlive its handles */
	again = dlopen(g->path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD | RTLD_NODELETE);
	if (again)
		dlclose(again);
	return 0;
fail:
	dlclose(g->dl);
	g->dl = NULL;
	return E_NOTSUP;
}

int
bench_gemm_open(struct bench_dev *d, struct bench_gemm **out, struct err *err)
{
	struct bench_cuda_raw raw;
	struct bench_gemm *g;
	const char *env = getenv("GPUSCOPE_CUBLASLT");
	cublasStatus_t st;
	size_t v;
	int rc;

	*out = NULL;
	if (!bench_cuda_is(d))
		return err_set(
		        err, E_NOTSUP,
		        "cuBLASLt runs on devices opened through libcuda.so.1 (this one: %s)",
		        d && d->info.api[0] ? d->info.api : "another API");
	if ((rc = bench_cuda_raw(d, 0, &raw, err)))
		return rc;
	/*
	 * NVIDIA's cuBLASLt over the tests' fake libcuda.so.1 (it has the
	 * fake's hooks) would drive the fake as if it were a driver: only a
	 * library named on purpose is taken there.
	 */
	if (dlsym(raw.dl, "fcu_hook_enqueue") && !(env && *env))
		return err_set(
		        err, E_NOTSUP,
		        "the CUDA driver is the tests' fake libcuda.so.1: cuBLASLt only from "
		        "GPUSCOPE_CUBLASLT");
	g = xcalloc(1, sizeof(*g));
	g->d = d;
	if ((rc = load(g, err))) {
		free(g);
		return rc;
	}
	v = g->s.GetVersion();
	snprintf(g->version, sizeof(g->version), "cuBLASLt %zu.%zu.%zu", v / 10000, v / 100 % 100,
	         v % 100);
	st = g->s.Create(&g->h);
	if (st != CUBLAS_STATUS_SUCCESS) {
		rc = lt_fail(err, "cublasLtCreate", st);
		dlclose(g->dl);
		free(g);
		return rc;
	}
	*out = g;
	return 0;
}

const char *
bench_gemm_version(const struct bench_gemm *g)
{
	return g->version;
}

const char *
bench_gemm_path(const struct bench_gemm *g)
{
	return g->path;
}

static void
unplan(struct bench_gemm *g)
{
	if (g->pref)
		g->s.MatmulPreferenceDestroy(g->pref);
	if (g->la)
		g->s.MatrixLayoutDestroy(g->la);
	if (g->lb)
		g->s.MatrixLayoutDestroy(g->lb);
	if (g->lc)
		g->s.MatrixLayoutDestroy(g->lc);
	if (g->desc)
		g->s.MatmulDescDestroy(g->desc);
	g->pref = NULL;
	g->la = g->lb = g->lc = NULL;
	g->desc = NULL;
	g->nalgo = 0;
}

int
bench_gemm_plan(struct bench_gemm *g, enum bench_gemm_type t, unsigned n, uint64_t a, uint64_t b,
                uint64_t c, uint64_t ws, size_t ws_bytes, unsigned *nalgo, struct err *err)
{
	cublasLtMatmulHeuristicResult_t res[BENCH_GEMM_ALGOS];
	const struct gemm_type *ty;
	struct bench_cuda_raw raw;
	cublasOperation_t opa, opb = CUBLAS_OP_N;
	uint64_t wsb = ws_bytes;
	size_t nn = (size_t)n * n;
	cublasStatus_t st;
	int got = 0, rc;

	*nalgo = 0;
	unplan(g);
	if (t >= BG_NTYPES || !n)
		return err_set(err, E_USAGE, "gemm: type %d, n %u", (int)t, n);
	ty = &types[t];
	g->t = t;
	g->ws_bytes = ws ? ws_bytes : 0;
	g->ws = 0;
	if ((rc = bench_cuda_ptr(g->d, a, 0, nn * ty->in_size, &g->a, err)) ||
	    (rc = bench_cuda_ptr(g->d, b, 0, nn * ty->in_size, &g->b, err)) ||
	    (rc = bench_cuda_ptr(g->d, c, 0, nn * ty->out_size, &g->c, err)) ||
	    (ws && (rc = bench_cuda_ptr(g->d, ws, 0, ws_bytes, &g->ws, err))))
		return rc;
	if ((rc = bench_cuda_raw(g->d, 0, &raw, err)))
		return rc;
	memset(&g->alpha, 0, sizeof(g->alpha));
	memset(&g->beta, 0, sizeof(g->beta));
	if (ty->scale == CUDA_R_16F)
		g->alpha.f16 = 0x3c00; /* 1.0 in binary16 */
	else if (ty->scale == CUDA_R_64F)
		g->alpha.f64 = 1;
	else
		g->alpha.f32 = 1;
	opa = ty->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
	st = g->s.MatmulDescCreate(&g->desc, ty->compute, ty->scale);
	if (st != CUBLAS_STATUS_SUCCESS) {
		g->desc = NULL;
		return lt_fail(err, "cublasLtMatmulDescCreate", st);
	}
	if ((st = g->s.MatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa,
	                                      sizeof(opa))) != CUBLAS_STATUS_SUCCESS ||
	    (st = g->s.MatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb,
	                                      sizeof(opb))) != CUBLAS_STATUS_SUCCESS)
		return lt_fail(err, "cublasLtMatmulDescSetAttribute", st);
	/* square: rows, columns and leading dimension are n whether transposed or not */
	if ((st = g->s.MatrixLayoutCreate(&g->la, ty->in, n, n, n)) != CUBLAS_STATUS_SUCCESS ||
	    (st = g->s.MatrixLayoutCreate(&g->lb, ty->in, n, n, n)) != CUBLAS_STATUS_SUCCESS ||
	    (st = g->s.MatrixLayoutCreate(&g->lc, ty->out, n, n, n)) != CUBLAS_STATUS_SUCCESS)
		return lt_fail(err, "cublasLtMatrixLayoutCreate", st);
	if ((st = g->s.MatmulPreferenceCreate(&g->pref)) != CUBLAS_STATUS_SUCCESS) {
		g->pref = NULL;
		return lt_fail(err, "cublasLtMatmulPreferenceCreate", st);
	}
	if ((st = g->s.MatmulPreferenceSetAttribute(g->pref,
	                                            CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb,
	                                            sizeof(wsb))) != CUBLAS_STATUS_SUCCESS)
		return lt_fail(err, "cublasLtMatmulPreferenceSetAttribute", st);
	memset(res, 0, sizeof(res));
	st = g->s.MatmulAlgoGetHeuristic(g->h, g->desc, g->la, g->lb, g->lc, g->lc, g->pref,
	                                 BENCH_GEMM_ALGOS, res, &got);
	if (st != CUBLAS_STATUS_SUCCESS)
		return lt_fail(err, "cublasLtMatmulAlgoGetHeuristic", st);
	if (got > BENCH_GEMM_ALGOS)
		got = BENCH_GEMM_ALGOS;
	/* the heuristic's order kept: its first usable one is its own pick */
	for (int i = 0; i < got; i++)
		if (res[i].state == CUBLAS_STATUS_SUCCESS && res[i].workspaceSize <= g->ws_bytes)
			g->algo[g->nalgo++] = res[i].algo;
	if (!g->nalgo)
		return err_set(
		        err, E_NOTSUP,
		        "cublasLtMatmulAlgoGetHeuristic: no algorithm for %s %ux%u%s on this "
		        "device (%d offered)",
		        ty->name, n, n, ty->trans_a ? " TN" : "", got);
	*nalgo = g->nalgo;
	return 0;
}

int
bench_gemm_run(struct bench_gemm *g, unsigned algo, struct err *err)
{
	struct bench_cuda_raw raw;
	cublasStatus_t st;
	int rc;

	if (algo >= g->nalgo)
		return err_set(err, E_USAGE, "gemm: algorithm %u of %u", algo, g->nalgo);
	if ((rc = bench_cuda_raw(g->d, 0, &raw, err)))
		return rc;
	/* D = C in place (beta 0): one output buffer */
	st = g->s.Matmul(g->h, g->desc, &g->alpha, (const void *)(uintptr_t)g->a, g->la,
	                 (const void *)(uintptr_t)g->b, g->lb, &g->beta,
	                 (const void *)(uintptr_t)g->c, g->lc, (void *)(uintptr_t)g->c, g->lc,
	                 &g->algo[algo], (void *)(uintptr_t)g->ws, g->ws_bytes, raw.stream);
	if (st != CUBLAS_STATUS_SUCCESS)
		return lt_fail(err, "cublasLtMatmul", st);
	return 0;
}

void
bench_gemm_close(struct bench_gemm *g)
{
	struct bench_cuda_raw raw;

	if (!g)
		return;
	unplan(g);
	/* a lost or hung device: nothing more is asked of it */
	if (bench_cuda_raw(g->d, 0, &raw, NULL) == 0)
		g->s.Destroy(g->h);
	dlclose(g->dl);
	free(g);
}
