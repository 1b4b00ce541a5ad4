/*
 * The fake libcublasLt.so.13 of the tests (docs/fake-cuda.md, last
 * section): cuBLASLt's handful of entry points bench uses, over the fake
 * libcuda.so.1 (its hooks fcu_hook_mem and fcu_hook_enqueue, found in the
 * loaded library by its soname). The heuristic offers a scenario's number
 * of algorithms, each with its own modelled rate; a GEMM is computed for
 * real on the CPU on the stream's worker, in order with the kernels and
 * events, and lasts 2 m n k / rate of the stream's device clock. FP32 and
 * FP64 are exact in their type; TF32, FP16, BF16 and FP8 are emulated in
 * float (TF32 inputs rounded to 10 fraction bits, FP16 and BF16 outputs
 * rounded to nearest even).
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lt_abi.h"

typedef int CUresult;
typedef CUresult fcu_hook_fn(void *arg, bool run);

#define MAX_ALGOS    16
#define ALGO_MAGIC   0x66616b65616c676full /* "fakealgo" */
#define DESC_MAGIC   0x66616b6564657363ull
#define LAYOUT_MAGIC 0x66616b656c61796full
#define PREF_MAGIC   0x66616b6570726566ull

enum ty { T_FP32, T_TF32, T_FP16, T_BF16, T_FP8, T_FP64, T_N };
static const char *const ty_name[T_N] = { "fp32", "tf32", "fp16", "bf16", "fp8", "fp64" };

/* the scenario (GPUSCOPE_FAKECUBLASLT_SCENARIO) */
static struct {
	size_t version;
	int algos;
	double tflops[T_N][MAX_ALGOS];
	bool unsupported[T_N];
	int corrupt_algo; /* -1: none */
	unsigned long long corrupt_index;
} sc;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool loaded_ok;
static void *(*hook_mem)(uint64_t, size_t);
static CUresult (*hook_enqueue)(struct CUstream_st *, fcu_hook_fn *, void *, double);

struct cublasLtContext {
	uint64_t magic;
};

struct desc {
	uint64_t magic;
	unsigned compute, scale, transa, transb;
};

struct layout {
	uint64_t magic;
	unsigned type;
	uint64_t rows, cols;
	int64_t ld;
};

struct pref {
	uint64_t magic;
	uint64_t ws;
};

_Static_assert(sizeof(struct desc) <= sizeof(cublasLtMatmulDescOpaque_t), "desc");
_Static_assert(sizeof(struct layout) <= sizeof(cublasLtMatrixLayoutOpaque_t), "layout");
_Static_assert(sizeof(struct pref) <= sizeof(cublasLtMatmulPreferenceOpaque_t), "pref");

static int
set_rates(enum ty t, char *v)
{
	char *save = NULL;
	int n = 0;

	for (char *tok = strtok_r(v, " \t", &save); tok && n < MAX_ALGOS;
	     tok = strtok_r(NULL, " \t", &save)) {
		char *end;
		double r = strtod(tok, &end);

		if (end == tok || *end || !(r > 0))
			return -1;
		for (int k = n; k < MAX_ALGOS; k++)
			sc.tflops[t][k] = r; /* the last repeats */
		n++;
	}
	return n ? 0 : -1;
}

static int
type_by_name(const char *s)
{
	for (int t = 0; t < T_N; t++)
		if (!strcmp(s, ty_name[t]))
			return t;
	return -1;
}

static void
load(void)
{
	const char *path = getenv("GPUSCOPE_FAKECUBLASLT_SCENARIO");
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	char line[512];
	FILE *f;
	int lineno = 0;

	sc.version = 130100;
	sc.algos = 8;
	sc.corrupt_algo = -1;
	for (int t = 0; t < T_N; t++)
		for (int k = 0; k < MAX_ALGOS; k++)
			sc.tflops[t][k] = 100;
	/* the fake driver's hooks: without them there is no device to run on */
	if (cuda) {
		*(void **)&hook_mem = dlsym(cuda, "fcu_hook_mem");
		*(void **)&hook_enqueue = dlsym(cuda, "fcu_hook_enqueue");
		dlclose(cuda);
	}
	if (!hook_mem || !hook_enqueue) {
		fprintf(stderr, "fake cublasLt: the fake libcuda.so.1 is not loaded\n");
		return;
	}
	if (!path || !*path) {
		loaded_ok = true;
		return;
	}
	if (!(f = fopen(path, "r"))) {
		fprintf(stderr, "fake cublasLt: %s: cannot open\n", path);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *eq, *key, *val, *end;
		size_t len;

		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#' || *p == ';')
			continue;
		if (!(eq = strchr(p, '=')))
			goto bad;
		*eq = '\0';
		key = p;
		val = eq + 1;
		for (len = strlen(key); len && (key[len - 1] == ' ' || key[len - 1] == '\t'); len--)
			key[len - 1] = '\0';
		while (*val == ' ' || *val == '\t')
			val++;
		if (!strcmp(key, "version")) {
			sc.version = strtoul(val, &end, 10);
			if (end == val || *end)
				goto bad;
		} else if (!strcmp(key, "algos")) {
			sc.algos = (int)strtol(val, &end, 10);
			if (end == val || *end || sc.algos < 0 || sc.algos > MAX_ALGOS)
				goto bad;
		} else if (!strcmp(key, "tflops")) {
			char copy[512];

			for (int t = 0; t < T_N; t++) {
				snprintf(copy, sizeof(copy), "%s", val);
				if (set_rates(t, copy))
					goto bad;
			}
		} else if (!strncmp(key, "tflops.", 7) && type_by_name(key + 7) >= 0) {
			if (set_rates(type_by_name(key + 7), val))
				goto bad;
		} else if (!strcmp(key, "unsupported")) {
			char *save = NULL;

			for (char *tok = strtok_r(val, " \t", &save); tok;
			     tok = strtok_r(NULL, " \t", &save)) {
				if (type_by_name(tok) < 0)
					goto bad;
				sc.unsupported[type_by_name(tok)] = true;
			}
		} else if (!strcmp(key, "corrupt")) {
			if (sscanf(val, "%d %llu", &sc.corrupt_algo, &sc.corrupt_index) != 2 ||
			    sc.corrupt_algo < 0)
				goto bad;
		} else {
			goto bad;
		}
	}
	fclose(f);
	loaded_ok = true;
	return;
bad:
	fprintf(stderr, "fake cublasLt: %s:%d: cannot read this line\n", path, lineno);
	fclose(f);
}

cublasStatus_t
cublasLtCreate(cublasLtHandle_t *lightHandle)
{
	struct cublasLtContext *h;

	pthread_once(&once, load);
	if (!lightHandle)
		return FLT_CUBLAS_STATUS_INVALID_VALUE;
	if (!loaded_ok)
		return FLT_CUBLAS_STATUS_NOT_INITIALIZED;
	if (!(h = calloc(1, sizeof(*h))))
		return FLT_CUBLAS_STATUS_ALLOC_FAILED;
	h->magic = ALGO_MAGIC;
	*lightHandle = h;
	return FLT_CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtDestroy(cublasLtHandle_t lightHandle)
{
	if (!lightHandle || lightHandle->magic != ALGO_MAGIC)
		return FLT_CUBLAS_STATUS_NOT_INITIALIZED;
	lightHandle->magic = 0;
	free(lightHandle);
	return FLT_CUBLAS_STATUS_SUCCESS;
}

size_t
cublasLtGetVersion(void)
{
	pthread_once(&once, load);
	return sc.version;
}

cublasStatus_t
cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc, cublasComputeType_t computeType,
                         cudaDataType_t scaleType)
{
	cublasLtMatmulDescOpaque_t *o;
	struct desc *d;

	if (!matmulDesc)
		return FLT_CUBLAS_STATUS_INVALID_VALUE;
	if (!(o = calloc(1, sizeof(*o))))
		return FLT_CUBLAS_STATUS_ALLOC_FAILED;
	d = (struct desc *)o;
	d->magic = DESC_MAGIC;
	d->compute = computeType;
	d->scale = scaleType;
	d->transa = d->transb = FLT_CUBLAS_OP_N;
	*matmulDesc = o;
	return FLT_CUBLAS_STATUS_SUCCESS;
}

static struct desc *
desc_of(cublasLtMatmulDesc_t o)
{
	struct desc *d = (struct desc *)o;

	return d && d->magic == DESC_MAGIC ? d : NULL;
}

cublasStatus_t
cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc)
{
	struct desc *d = desc_of(matmulDesc);

	if (!d)
		return FLT_CUBLAS_STATUS_INVALID_VALUE;
	d->magic = 0;
	free(matmulDesc);
	return FLT_CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr,
                               const void *buf, size_t sizeInBytes)
{
	struct desc *d = desc_of(matmulDesc);
	int32_t v;

	if (!d || !buf)
		return FLT_CUBLAS_STATUS_INVALID_VALUE;
	/* the fake knows only the two it needs; the real one sizes each attribute */
	if (attr != FLT_CUBLASLT_MATMUL_DESC_TRANSA && attr != FLT_CUBLASLT_MATMUL_DESC_TRANSB)
		return FLT_CUBLAS_STATUS_NOT_SUPPORTED;
	if (sizeInBytes != sizeof(v))
		return FLT_CUBLAS_STATUS_INVALID_VALUE;
	memcpy(&v, buf, sizeof(v));
	if (v != FLT_CUBLAS_OP_N && v != FLT_CUBLAS_OP_T)
		return FLT_CUBLAS_STATUS_INVALID_VALUE;
	if (attr == FLT_CUBLASLT_MATMUL_DESC_TRANSA)
		d->transa = (unsigned)v;
	else
		d->transb = (unsigned)v;
	return FLT_CUBLAS_STATUS_SUCCESS;
}

static size_t
type_size(unsigned t)
{
	switch (t) {
	case FLT_CUDA_R_32F:
		return 4;
	case FLT_CUDA_R_64F:
		return 8;
	case FLT_CUDA_R_16F:
	case FLT_CUDA_R_16BF:
		return 2;
	case FLT_CUDA_R_8F_E4M3:
		return 1;
	}
	return 0;
}

cublasStatus_t
cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout, cudaDataType type, uint64_t rows,
                           uint64_t cols, int64_t ld)
{
	cublasLtMatrixLayoutOpaque_t *o;
	struct layout *l;

	if (!matLayout || !type_size(type) || !rows || !cols || ld < (int64_t)rows)
		return FLT_CUBLAS_STATUS_INVALID_VALUE;
	if (!(o = calloc(1, sizeof(*o))))
		return FLT_CUBLAS_STATUS_ALLOC_FAILED;
	l = (struct layout *)o;
	l->magic = LAYOUT_MAGIC;
	l->type = type;
	l->rows = rows;
	l->cols = cols;
	l->ld = ld;
	*matLayout = o;
	return FLT_CUBLAS_STATUS_SUCCESS;
}

static struct layout *
layout_of(cublasLtMatrixLayout_t o)
{
	struct layout *l = (struct layout *)o;

	return l && l->magic == LAYOUT_MAGIC ? l : NULL;
}

cublasStatus_t
cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout)
{
	struct layout *l = layout_of(matLayout);

	if (!l)
		return FLT_CUBLAS_STATUS_INVALID_VALUE;
	l->magic = 0;
	free(matLayout);
	return FLT_CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref)
{
	cublasLtMatmulPreferenceOpaque_t *o;

	if (!pref)
		return FLT_CUBLAS_STATUS_INVALID_VALUE;
	if (!(o = calloc(1, sizeof(*o))))
		return FLT_CUBLAS_STATUS_ALLOC_FAILED;
	((struct pref *)o)->magic = PREF_MAGIC;
	*pref = o;
	return FLT_CUBLAS_STATUS_SUCCESS;
}

static struct pref *
pref_of(cublasLtMatmulPreference_t o)
{
	struct pref *p = (struct pref *)o;

	return p && p->magic == PREF_MAGIC ? p : NULL;
}

cublasStatus_t
cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref)
{
	struct pref *p = pref_of(pref);

	if (!p)
		return FLT_CUBLAS_STATUS_INVALID_VALUE;
	p->magic = 0;
	free(pref);
	return FLT_CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                     cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
                                     size_t sizeInBytes)
{
	struct pref *p = pref_of(pref);

	if (!p || !buf)
		return FLT_CUBLAS_STATUS_INVALID_VALUE;
	if (attr != FLT_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES)
		return FLT_CUBLAS_STATUS_NOT_SUPPORTED;
	if (sizeInBytes != sizeof(p->ws))
		return FLT_CUBLAS_STATUS_INVALID_VALUE;
	memcpy(&p->ws, buf, sizeof(p->ws));
	return FLT_CUBLAS_STATUS_SUCCESS;
}

/* the combination of types as bench uses them (clpeak's), or -1 */
static int
classify(const struct desc *d, const struct layout *a, const struct layout *b,
         const struct layout *c, const struct layout *dd)
{
	int t = -1;

	if (a->type != b->type || c->type != dd->type)
		return -1;
	if (d->compute == FLT_CUBLAS_COMPUTE_32F && d->scale == FLT_CUDA_R_32F) {
		if (a->type == FLT_CUDA_R_32F && c->type == FLT_CUDA_R_32F)
			t = T_FP32;
		else if (a->type == FLT_CUDA_R_16BF &&
		         (c->type == FLT_CUDA_R_32F || c->type == FLT_CUDA_R_16BF))
			t = T_BF16;
		/* cuBLASLt's FP8 is TN only */
		else if (a->type == FLT_CUDA_R_8F_E4M3 && c->type == FLT_CUDA_R_16BF &&
		         d->transa == FLT_CUBLAS_OP_T && d->transb == FLT_CUBLAS_OP_N)
			t = T_FP8;
	} else if (d->compute == FLT_CUBLAS_COMPUTE_32F_FAST_TF32 && d->scale == FLT_CUDA_R_32F &&
	           a->type == FLT_CUDA_R_32F && c->type == FLT_CUDA_R_32F) {
		t = T_TF32;
	} else if (d->compute == FLT_CUBLAS_COMPUTE_16F && d->scale == FLT_CUDA_R_16F &&
	           a->type == FLT_CUDA_R_16F && c->type == FLT_CUDA_R_16F) {
		t = T_FP16;
	} else if (d->compute == FLT_CUBLAS_COMPUTE_64F && d->scale == FLT_CUDA_R_64F &&
	           a->type == FLT_CUDA_R_64F && c->type == FLT_CUDA_R_64F) {
		t = T_FP64;
	}
	return t >= 0 && sc.unsupported[t] ? -1 : t;
}

/* op(A) is m x k, op(B) k x n, C and D m x n: whether the layouts agree */
static bool
dims(const struct desc *d, const struct layout *a, const struct layout *b, const struct layout *c,
     const struct layout *dd, uint64_t *m, uint64_t *n, uint64_t *k)
{
	uint64_t am = d->transa == FLT_CUBLAS_OP_T ? a->cols : a->rows;
	uint64_t ak = d->transa == FLT_CUBLAS_OP_T ? a->rows : a->cols;
	uint64_t bk = d->transb == FLT_CUBLAS_OP_T ? b->cols : b->rows;
	uint64_t bn = d->transb == FLT_CUBLAS_OP_T ? b->rows : b->cols;

	*m = am, *n = bn, *k = ak;
	return ak == bk && c->rows == am && c->cols == bn && dd->rows == am && dd->cols == bn &&
	       c->ld == dd->ld;
}

cublasStatus_t
cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
                               cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
                               cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
                               cublasLtMatmulPreference_t preference, int requestedAlgoCount,
                               cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
                               int *returnAlgoCount)
{
	struct desc *d = desc_of(operationDesc);
	struct layout *a = layout_of(Adesc), *b = layout_of(Bdesc), *c = layout_of(Cdesc),
	              *dd = layout_of(Ddesc);
	uint64_t m, n, k;
	int t, got;

	if (!lightHandle || lightHandle->magic != ALGO_MAGIC)
		return FLT_CUBLAS_STATUS_NOT_INITIALIZED;
	if (!d || !a || !b || !c || !dd || !pref_of(preference) || requestedAlgoCount <= 0 ||
	    !heuristicResultsArray || !returnAlgoCount || !dims(d, a, b, c, dd, &m, &n, &k))
		return FLT_CUBLAS_STATUS_INVALID_VALUE;
	if ((t = classify(d, a, b, c, dd)) < 0)
		return FLT_CUBLAS_STATUS_NOT_SUPPORTED;
	got = sc.algos < requestedAlgoCount ? sc.algos : requestedAlgoCount;
	for (int i = 0; i < got; i++) {
		cublasLtMatmulHeuristicResult_t *r = &heuristicResultsArray[i];

		memset(r, 0, sizeof(*r));
		r->algo.data[0] = ALGO_MAGIC;
		r->algo.data[1] = (uint64_t)i;
		r->algo.data[2] = (uint64_t)t;
		r->state = FLT_CUBLAS_STATUS_SUCCESS;
		r->wavesCount = 1;
	}
	*returnAlgoCount = got;
	return FLT_CUBLAS_STATUS_SUCCESS;
}

/* ---- the GEMM on the CPU ---- */

static float
half_to_float(uint16_t h)
{
	int e = h >> 10 & 0x1f, f = h & 0x3ff;
	float v = e == 0x1f ? (f ? NAN : INFINITY)
	          : e == 0  ? ldexpf((float)f, -24)
	                    : ldexpf((float)(f + 1024), e - 25);

	return h & 0x8000 ? -v : v;
}

/* round to nearest even at binary16's precision, subnormals and overflow included */
static uint16_t
float_to_half(float x)
{
	uint16_t sign = signbit(x) ? 0x8000 : 0;
	float a = fabsf(x);
	int e;

	if (isnan(x))
		return 0x7e00;
	if (a >= 65520.0f)
		return sign | 0x7c00;
	if (a < 0x1p-14f) /* subnormal: a multiple of 2^-24 */
		return sign | (uint16_t)nearbyintf(a * 0x1p24f);
	frexpf(a, &e);                           /* a = m 2^e, m in [0.5, 1) */
	float q = nearbyintf(ldexpf(a, 11 - e)); /* 11 significant bits */
	if (q >= 2048)
		q /= 2, e++;
	return sign | (uint16_t)((e - 1 + 15) << 10 | ((uint32_t)q - 1024));
}

static uint32_t
f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static float
u2f(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static uint16_t
float_to_bf16(float x)
{
	uint32_t u = f2u(x);

	if (isnan(x))
		return 0x7fc0;
	return (uint16_t)((u + 0x7fff + (u >> 16 & 1)) >> 16);
}

static float
tf32_round(float x)
{
	uint32_t u = f2u(x);

	if (!isfinite(x))
		return x;
	return u2f((u + 0xfff + (u >> 13 & 1)) & ~0x1fffu);
}

static float
fp8_to_float(uint8_t q)
{
	int e = q >> 3 & 15, f = q & 7;
	float v = (e == 15 && f == 7) ? NAN
	          : e                 ? ldexpf((float)(8 + f), e - 10)
	                              : ldexpf((float)f, -9);

	return q & 0x80 ? -v : v;
}

static double
in_value(unsigned type, const void *p, uint64_t i)
{
	const unsigned char *b = p;
	uint16_t h;

	switch (type) {
	case FLT_CUDA_R_32F:
		return u2f(((const uint32_t *)(const void *)b)[i]);
	case FLT_CUDA_R_64F:
		return ((const double *)(const void *)b)[i];
	case FLT_CUDA_R_16F:
		memcpy(&h, b + 2 * i, 2);
		return half_to_float(h);
	case FLT_CUDA_R_16BF:
		memcpy(&h, b + 2 * i, 2);
		return u2f((uint32_t)h << 16);
	case FLT_CUDA_R_8F_E4M3:
		return fp8_to_float(b[i]);
	}
	return NAN;
}

static void
out_store(unsigned type, void *p, uint64_t i, double v)
{
	unsigned char *b = p;
	uint16_t h;
	float f = (float)v;

	switch (type) {
	case FLT_CUDA_R_32F:
		memcpy(b + 4 * i, &f, 4);
		break;
	case FLT_CUDA_R_64F:
		memcpy(b + 8 * i, &v, 8);
		break;
	case FLT_CUDA_R_16F:
		h = float_to_half(f);
		memcpy(b + 2 * i, &h, 2);
		break;
	case FLT_CUDA_R_16BF:
		h = float_to_bf16(f);
		memcpy(b + 2 * i, &h, 2);
		break;
	}
}

struct job {
	int t, algo;
	unsigned a_type, c_type, transa, transb;
	uint64_t m, n, k, lda, ldb, ldc;
	const void *a, *b, *c;
	void *d;
	double alpha, beta;
};

/* the last result, kept: the same inputs again (bench's batches) are a copy */
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	bool valid;
	struct job key;
	uint64_t ha, hb;
	void *out;
	size_t bytes;
} cache;

static uint64_t
hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
	}
	for (; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static bool
same_key(const struct job *x, const struct job *y)
{
	return x->t == y->t && x->a_type == y->a_type && x->c_type == y->c_type &&
	       x->transa == y->transa && x->transb == y->transb && x->m == y->m && x->n == y->n &&
	       x->k == y->k && x->lda == y->lda && x->ldb == y->ldb && x->ldc == y->ldc &&
	       x->a == y->a && x->b == y->b && x->d == y->d && x->alpha == y->alpha;
}

static void
compute(const struct job *j)
{
	uint64_t m = j->m, n = j->n, k = j->k;
	bool f64 = j->t == T_FP64;
	double *accd = f64 ? calloc(m, sizeof(double)) : NULL;
	float *acc = f64 ? NULL : calloc(m, sizeof(float));
	/* op(A) as a dense m x k column-major array, in the compute type */
	double *ad = f64 ? malloc(m * k * sizeof(double)) : NULL;
	float *af = f64 ? NULL : malloc(m * k * sizeof(float));

	if ((f64 && (!accd || !ad)) || (!f64 && (!acc || !af)))
		abort();
	for (uint64_t l = 0; l < k; l++)
		for (uint64_t i = 0; i < m; i++) {
			uint64_t at =
			        j->transa == FLT_CUBLAS_OP_T ? l + i * j->lda : i + l * j->lda;
			double v = in_value(j->a_type, j->a, at);

			if (f64)
				ad[i + l * m] = v;
			else
				af[i + l * m] = j->t == T_TF32 ? tf32_round((float)v) : (float)v;
		}
	for (uint64_t c = 0; c < n; c++) {
		if (f64)
			memset(accd, 0, m * sizeof(double));
		else
			memset(acc, 0, m * sizeof(float));
		for (uint64_t l = 0; l < k; l++) {
			uint64_t bt =
			        j->transb == FLT_CUBLAS_OP_T ? c + l * j->ldb : l + c * j->ldb;
			double bv = in_value(j->a_type, j->b, bt);

			if (f64) {
				for (uint64_t i = 0; i < m; i++)
					accd[i] = fma(ad[i + l * m], bv, accd[i]);
			} else {
				float bf = j->t == T_TF32 ? tf32_round((float)bv) : (float)bv;

				for (uint64_t i = 0; i < m; i++)
					acc[i] = fmaf(af[i + l * m], bf, acc[i]);
			}
		}
		for (uint64_t i = 0; i < m; i++) {
			double v = j->alpha * (f64 ? accd[i] : (double)acc[i]);

			if (j->beta != 0)
				v += j->beta * in_value(j->c_type, j->c, i + c * j->ldc);
			out_store(j->c_type, j->d, i + c * j->ldc, v);
		}
	}
	free(accd);
	free(acc);
	free(ad);
	free(af);
}

static CUresult
run_job(void *arg, bool run)
{
	struct job *j = arg;
	size_t es = type_size(j->c_type), bytes = (size_t)(j->ldc * (j->n - 1) + j->m) * es;
	size_t ab = (size_t)(j->lda * ((j->transa == FLT_CUBLAS_OP_T ? j->m : j->k) - 1) +
	                     (j->transa == FLT_CUBLAS_OP_T ? j->k : j->m)) *
	            type_size(j->a_type);
	size_t bb = (size_t)(j->ldb * ((j->transb == FLT_CUBLAS_OP_T ? j->k : j->n) - 1) +
	                     (j->transb == FLT_CUBLAS_OP_T ? j->n : j->k)) *
	            type_size(j->a_type);
	uint64_t ha, hb;

	if (!run) {
		free(j);
		return 0;
	}
	ha = hash_bytes(j->a, ab);
	hb = hash_bytes(j->b, bb);
	pthread_mutex_lock(&cache_mu);
	if (cache.valid && j->beta == 0 && same_key(&cache.key, j) && cache.ha == ha &&
	    cache.hb == hb && cache.bytes == bytes) {
		memcpy(j->d, cache.out, bytes);
	} else {
		compute(j);
		free(cache.out);
		cache.valid = false;
		if (j->beta == 0 && (cache.out = malloc(bytes))) {
			memcpy(cache.out, j->d, bytes);
			cache.key = *j;
			cache.ha = ha, cache.hb = hb;
			cache.bytes = bytes;
			cache.valid = true;
		}
	}
	pthread_mutex_unlock(&cache_mu);
	/* the scenario's bad algorithm: the top exponent bit of one element of D */
	if (j->algo == sc.corrupt_algo && sc.corrupt_index < j->m * j->n) {
		uint64_t i = sc.corrupt_index % j->m + sc.corrupt_index / j->m * j->ldc;
		unsigned char *p = (unsigned char *)j->d + i * es;

		p[es - 1] ^= 0x40;
	}
	free(j);
	return 0;
}

static double
scalar(unsigned scale, const void *p)
{
	float f;
	double d;
	uint16_t h;

	switch (scale) {
	case FLT_CUDA_R_16F:
		memcpy(&h, p, 2);
		return half_to_float(h);
	case FLT_CUDA_R_64F:
		memcpy(&d, p, 8);
		return d;
	default:
		memcpy(&f, p, 4);
		return f;
	}
}

cublasStatus_t
cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void *alpha,
               const void *A, cublasLtMatrixLayout_t Adesc, const void *B,
               cublasLtMatrixLayout_t Bdesc, const void *beta, const void *C,
               cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
               const cublasLtMatmulAlgo_t *algo, void *workspace, size_t workspaceSizeInBytes,
               cudaStream_t stream)
{
	struct desc *d = desc_of(computeDesc);
	struct layout *a = layout_of(Adesc), *b = layout_of(Bdesc), *c = layout_of(Cdesc),
	              *dd = layout_of(Ddesc);
	uint64_t m, n, k, ar, br;
	struct job *j;
	int t, ai = 0;
	double rate;

	if (!lightHandle || lightHandle->magic != ALGO_MAGIC)
		return FLT_CUBLAS_STATUS_NOT_INITIALIZED;
	if (!d || !a || !b || !c || !dd || !alpha || !beta || !A || !B || !D ||
	    !dims(d, a, b, c, dd, &m, &n, &k))
		return FLT_CUBLAS_STATUS_INVALID_VALUE;
	if ((t = classify(d, a, b, c, dd)) < 0)
		return FLT_CUBLAS_STATUS_NOT_SUPPORTED;
	if (algo) {
		if (algo->data[0] != ALGO_MAGIC || algo->data[1] >= MAX_ALGOS ||
		    algo->data[2] != (uint64_t)t)
			return FLT_CUBLAS_STATUS_INVALID_VALUE;
		ai = (int)algo->data[1];
	}
	if (workspaceSizeInBytes && !hook_mem((uint64_t)(uintptr_t)workspace, workspaceSizeInBytes))
		return FLT_CUBLAS_STATUS_INVALID_VALUE;
	if (!(j = calloc(1, sizeof(*j))))
		return FLT_CUBLAS_STATUS_ALLOC_FAILED;
	j->t = t, j->algo = ai;
	j->a_type = a->type, j->c_type = c->type, j->transa = d->transa, j->transb = d->transb;
	j->m = m, j->n = n, j->k = k, j->lda = (uint64_t)a->ld, j->ldb = (uint64_t)b->ld;
	j->ldc = (uint64_t)c->ld;
	j->alpha = scalar(d->scale, alpha);
	j->beta = scalar(d->scale, beta);
	/* every matrix within one buffer of the current context, as the device would need */
	ar = a->ld * (a->cols - 1) + a->rows;
	br = b->ld * (b->cols - 1) + b->rows;
	j->a = hook_mem((uint64_t)(uintptr_t)A, ar * type_size(a->type));
	j->b = hook_mem((uint64_t)(uintptr_t)B, br * type_size(b->type));
	j->d = hook_mem((uint64_t)(uintptr_t)D,
	                (dd->ld * (dd->cols - 1) + dd->rows) * type_size(dd->type));
	j->c = C ? hook_mem((uint64_t)(uintptr_t)C,
	                    (c->ld * (c->cols - 1) + c->rows) * type_size(c->type))
	         : NULL;
	if (!j->a || !j->b || !j->d || (j->beta != 0 && !j->c)) {
		free(j);
		return FLT_CUBLAS_STATUS_INVALID_VALUE;
	}
	rate = sc.tflops[t][ai] * 1e12;
	/* a lost context refuses: the real library's answer is EXECUTION_FAILED */
	if (hook_enqueue(stream, run_job, j, 2.0 * (double)m * (double)n * (double)k / rate) != 0) {
		free(j);
		return FLT_CUBLAS_STATUS_EXECUTION_FAILED;
	}
	return FLT_CUBLAS_STATUS_SUCCESS;
}
