/*
 * The exported entry points of the fake libcuda.so.1: initialisation and
 * devices from the scenario, contexts (primary and created), memory (the
 * host's, mmap()ed per buffer and counted against the device's), modules
 * from PTX text, launches, streams and events (stream.c runs them), the
 * error strings and cuGetProcAddress. Every call appends a line to
 * GPUSCOPE_FAKECUDA_LOG when that is set.
 */
#include "fake.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

pthread_mutex_t fcu_lock = PTHREAD_MUTEX_INITIALIZER;
struct fcu_scenario fcu_sc;

/* allocations and pinned memory; taken last, held only briefly (workers take it) */
static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;

struct pinned {
	struct pinned *next;
	void *p;
	size_t bytes, mapped;
};

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static CUresult load_result; /* what cuInit answers */
static bool initialized;
static FILE *log_file;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUctx_st *contexts;
static struct pinned *pinned;
static __thread struct CUctx_st *current;

static const struct {
	CUresult value;
	const char *name, *text;
} results[] = {
#define FCU_RESULT_ROW(n, v, s) { v, #n, s },
	FCU_RESULTS(FCU_RESULT_ROW)
#undef FCU_RESULT_ROW
};

static void
load(void)
{
	const char *path = getenv("GPUSCOPE_FAKECUDA_SCENARIO");
	const char *log = getenv("GPUSCOPE_FAKECUDA_LOG");

	if (log && *log)
		log_file = fopen(log, "a");
	fcu_sc.driver_version = 13000;
	if (!path || !*path) {
		load_result = CUDA_ERROR_NO_DEVICE;
		return;
	}
	if (fcu_scenario_read(path, &fcu_sc)) {
		load_result = CUDA_ERROR_UNKNOWN;
		return;
	}
	/* a test's override of the scenario's sleeping */
	const char *rt = getenv("GPUSCOPE_FAKECUDA_REALTIME");
	char *end;
	if (rt && *rt) {
		double v = strtod(rt, &end);
		if (end != rt && !*end && v >= 0)
			fcu_sc.realtime = v;
	}
	load_result = fcu_sc.init_error;
	if (load_result == CUDA_SUCCESS && fcu_sc.ndev == 0)
		load_result = CUDA_ERROR_NO_DEVICE;
}

void
fcu_log(const char *fn, int dev, CUresult r, const char *extra)
{
	pthread_once(&load_once, load);
	if (!log_file)
		return;
	pthread_mutex_lock(&log_lock);
	if (dev >= 0)
		fprintf(log_file, "%s %d %u%s%s\n", fn, dev, r, extra ? " " : "",
		        extra ? extra : "");
	else
		fprintf(log_file, "%s - %u%s%s\n", fn, r, extra ? " " : "", extra ? extra : "");
	fflush(log_file);
	pthread_mutex_unlock(&log_lock);
}

static int
cur_dev(void)
{
	return current ? current->dev->index : -1;
}

#define RET(r)                                            \
	do {                                              \
		CUresult ret_ = (r);                      \
		fcu_log(__func__, cur_dev(), ret_, NULL); \
		return ret_;                              \
	} while (0)

static CUresult
ready(void)
{
	if (!initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	return load_result;
}

static bool
ctx_live(const struct CUctx_st *ctx)
{
	for (struct CUctx_st *c = contexts; c; c = c->next)
		if (c == ctx)
			return true;
	return false;
}

static CUresult
ctx_error(struct CUctx_st *ctx)
{
	CUresult r;

	pthread_mutex_lock(&ctx->mu);
	r = ctx->sticky;
	pthread_mutex_unlock(&ctx->mu);
	return r;
}

/* the calling thread's context, lost or not */
static CUresult
any_ctx(struct CUctx_st **out)
{
	CUresult r = ready();
	bool live;

	if (r != CUDA_SUCCESS)
		return r;
	pthread_mutex_lock(&fcu_lock);
	live = current && ctx_live(current);
	pthread_mutex_unlock(&fcu_lock);
	if (!live)
		return CUDA_ERROR_INVALID_CONTEXT;
	*out = current;
	return CUDA_SUCCESS;
}

/* the calling thread's context, alive and well */
static CUresult
cur_ctx(struct CUctx_st **out)
{
	CUresult r = any_ctx(out);

	return r != CUDA_SUCCESS ? r : ctx_error(*out);
}

static CUresult
get_dev(CUdevice d, struct fcu_dev **dev)
{
	CUresult r = ready();

	if (r != CUDA_SUCCESS)
		return r;
	if (d < 0 || d >= fcu_sc.ndev)
		return CUDA_ERROR_INVALID_DEVICE;
	*dev = &fcu_sc.dev[d];
	return CUDA_SUCCESS;
}

void *
fcu_mem(struct CUctx_st *ctx, uint64_t addr, size_t bytes, bool *is_pinned)
{
	void *p = NULL;

	pthread_mutex_lock(&mem_lock);
	for (struct fcu_alloc *a = ctx->alloc; a && !p; a = a->next)
		if (addr >= a->base && addr - a->base <= a->bytes &&
		    bytes <= a->bytes - (addr - a->base))
			p = (void *)(uintptr_t)addr, *is_pinned = false;
	for (struct pinned *h = pinned; h && !p; h = h->next) {
		uintptr_t base = (uintptr_t)h->p;
		if (addr >= base && addr - base <= h->bytes && bytes <= h->bytes - (addr - base))
			p = (void *)(uintptr_t)addr, *is_pinned = true;
	}
	pthread_mutex_unlock(&mem_lock);
	return p;
}

bool
fcu_is_pinned(const void *p, size_t bytes)
{
	bool yes = false;

	pthread_mutex_lock(&mem_lock);
	for (struct pinned *h = pinned; h && !yes; h = h->next) {
		uintptr_t base = (uintptr_t)h->p, a = (uintptr_t)p;
		yes = a >= base && a - base <= h->bytes && bytes <= h->bytes - (a - base);
	}
	pthread_mutex_unlock(&mem_lock);
	return yes;
}

/* errors */

CUresult
cuGetErrorName(CUresult error, const char **pStr)
{
	for (size_t i = 0; pStr && i < sizeof(results) / sizeof(results[0]); i++)
		if (results[i].value == error) {
			*pStr = results[i].name;
			return CUDA_SUCCESS;
		}
	if (pStr)
		*pStr = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult
cuGetErrorString(CUresult error, const char **pStr)
{
	for (size_t i = 0; pStr && i < sizeof(results) / sizeof(results[0]); i++)
		if (results[i].value == error) {
			*pStr = results[i].text;
			return CUDA_SUCCESS;
		}
	if (pStr)
		*pStr = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

/* initialisation and devices */

CUresult
cuInit(unsigned int Flags)
{
	pthread_once(&load_once, load);
	if (Flags != 0)
		RET(CUDA_ERROR_INVALID_VALUE);
	pthread_mutex_lock(&fcu_lock);
	initialized = true;
	pthread_mutex_unlock(&fcu_lock);
	RET(load_result);
}

CUresult
cuDriverGetVersion(int *driverVersion)
{
	pthread_once(&load_once, load);
	if (!driverVersion)
		RET(CUDA_ERROR_INVALID_VALUE);
	*driverVersion = fcu_sc.driver_version;
	RET(CUDA_SUCCESS);
}

CUresult
cuDeviceGetCount(int *count)
{
	CUresult r = ready();

	if (r == CUDA_SUCCESS && !count)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		*count = fcu_sc.ndev;
	RET(r);
}

CUresult
cuDeviceGet(CUdevice *device, int ordinal)
{
	struct fcu_dev *dev;
	CUresult r = get_dev(ordinal, &dev);

	if (r == CUDA_SUCCESS && !device)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		*device = ordinal;
	RET(r);
}

CUresult
cuDeviceGetName(char *name, int len, CUdevice d)
{
	struct fcu_dev *dev;
	CUresult r = get_dev(d, &dev);

	if (r == CUDA_SUCCESS && (!name || len <= 0))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		snprintf(name, (size_t)len, "%s", dev->name);
	RET(r);
}

static CUresult
get_uuid(CUuuid *uuid, CUdevice d)
{
	struct fcu_dev *dev;
	CUresult r = get_dev(d, &dev);

	if (r == CUDA_SUCCESS && !uuid)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		memcpy(uuid->bytes, dev->uuid, sizeof(uuid->bytes));
	return r;
}

CUresult
cuDeviceGetUuid(CUuuid *uuid, CUdevice d)
{
	RET(get_uuid(uuid, d));
}

CUresult
cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice d)
{
	RET(get_uuid(uuid, d));
}

CUresult
cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
	struct fcu_dev *dev;
	CUresult r = get_dev(d, &dev);

	if (r == CUDA_SUCCESS && !bytes)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		*bytes = (size_t)dev->mem_total;
	RET(r);
}

static long long
attribute(const struct fcu_dev *dev, CUdevice_attribute a)
{
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
		return dev->max_threads;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
		return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
		return 64;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
		return 2147483647;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
		return 65535;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
		return 49152;
	case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
		return 65536;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
		return 32;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
		return dev->clock_khz;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
		return dev->sms;
	case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP:
	case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
	case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
	case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
		return 1;
	case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT:
	case CU_DEVICE_ATTRIBUTE_INTEGRATED:
	case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE:
	case CU_DEVICE_ATTRIBUTE_TCC_DRIVER:
	case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD:
	case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS:
		return 0;
	case CU_DEVICE_ATTRIBUTE_ECC_ENABLED:
		return dev->ecc;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
		return dev->pci_bus;
	case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
		return dev->pci_device;
	case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
		return dev->pci_domain;
	case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
		return dev->mem_clock_khz;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
		return dev->bus_width;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
		return dev->l2_bytes > 0x7fffffff ? 0x7fffffff : (long long)dev->l2_bytes;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
		return 2048;
	case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT:
		return dev->async_engines;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		return dev->cc_major;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
		return dev->cc_minor;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
		return 233472;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
		return 232448;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR:
		return 32;
	default:
		return -1;
	}
}

CUresult
cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice d)
{
	struct fcu_dev *dev;
	CUresult r = get_dev(d, &dev);
	long long v = 0;

	if (r == CUDA_SUCCESS && (!pi || (v = attribute(dev, attrib)) < 0))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		*pi = (int)v;
	RET(r);
}

CUresult
cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice d)
{
	struct fcu_dev *dev;
	CUresult r = get_dev(d, &dev);

	if (r == CUDA_SUCCESS && (!pciBusId || len <= 0))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		snprintf(pciBusId, (size_t)len, "%s", dev->pci_bus_id);
	RET(r);
}

/* contexts */

static CUresult
ctx_new(struct fcu_dev *dev, bool primary, struct CUctx_st **out)
{
	struct CUctx_st *ctx = calloc(1, sizeof(*ctx));
	struct CUstream_st *s = calloc(1, sizeof(*s));
	pthread_condattr_t ca;

	if (!ctx || !s) {
		free(ctx);
		free(s);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	ctx->dev = dev;
	ctx->primary = primary;
	pthread_mutex_init(&ctx->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ctx->cv, &ca);
	pthread_condattr_destroy(&ca);
	s->ctx = ctx;
	s->is_null = true;
	ctx->stream = s;
	if (fcu_stream_start(s) != CUDA_SUCCESS) {
		pthread_cond_destroy(&ctx->cv);
		pthread_mutex_destroy(&ctx->mu);
		free(s);
		free(ctx);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	pthread_mutex_lock(&fcu_lock);
	ctx->next = contexts;
	contexts = ctx;
	pthread_mutex_unlock(&fcu_lock);
	*out = ctx;
	return CUDA_SUCCESS;
}

/* stop ctx's work, release all it holds and ctx; it is already out of the list */
static void
ctx_free(struct CUctx_st *ctx)
{
	fcu_streams_stop(ctx);
	while (ctx->stream) {
		struct CUstream_st *s = ctx->stream;
		ctx->stream = s->next;
		free(s);
	}
	while (ctx->event) {
		struct CUevent_st *e = ctx->event;
		ctx->event = e->next;
		free(e);
	}
	while (ctx->mod) {
		struct CUmod_st *m = ctx->mod;
		ctx->mod = m->next;
		free(m->func);
		free(m);
	}
	pthread_mutex_lock(&mem_lock);
	while (ctx->alloc) {
		struct fcu_alloc *a = ctx->alloc;
		ctx->alloc = a->next;
		ctx->dev->mem_alloc -= a->mapped;
		munmap((void *)a->base, a->mapped);
		free(a);
	}
	pthread_mutex_unlock(&mem_lock);
	pthread_cond_destroy(&ctx->cv);
	pthread_mutex_destroy(&ctx->mu);
	if (current == ctx)
		current = NULL;
	free(ctx);
}

/* take peer out of ctx's peers; 0, or -1 when it was not there. fcu_lock held */
static int
peer_drop(struct CUctx_st *ctx, const struct CUctx_st *peer)
{
	for (int i = 0; i < ctx->npeer; i++)
		if (ctx->peer[i] == peer) {
			ctx->peer[i] = ctx->peer[--ctx->npeer];
			return 0;
		}
	return -1;
}

/* whether ctx may reach peer's buffers; fcu_lock held */
static bool
peer_has(const struct CUctx_st *ctx, const struct CUctx_st *peer)
{
	for (int i = 0; i < ctx->npeer; i++)
		if (ctx->peer[i] == peer)
			return true;
	return false;
}

/* fcu_lock held; the others' peer access to ctx ends with it, as the driver's does */
static bool
ctx_unlink(struct CUctx_st *ctx)
{
	for (struct CUctx_st *c = contexts; c; c = c->next)
		peer_drop(c, ctx);
	for (struct CUctx_st **pp = &contexts; *pp; pp = &(*pp)->next)
		if (*pp == ctx) {
			*pp = ctx->next;
			return true;
		}
	return false;
}

static CUresult
ctx_create(CUcontext *pctx, CUdevice d)
{
	struct fcu_dev *dev;
	struct CUctx_st *ctx;
	CUresult r = get_dev(d, &dev);

	if (r == CUDA_SUCCESS && !pctx)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		r = ctx_new(dev, false, &ctx);
	if (r == CUDA_SUCCESS) {
		current = ctx;
		*pctx = ctx;
	}
	return r;
}

CUresult
cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	(void)flags;
	RET(ctx_create(pctx, dev));
}

CUresult
cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	(void)flags;
	RET(ctx_create(pctx, dev));
}

CUresult
cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags,
               CUdevice dev)
{
	(void)paramsArray, (void)numParams, (void)flags;
	RET(ctx_create(pctx, dev));
}

CUresult
cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags,
               CUdevice dev)
{
	(void)ctxCreateParams, (void)flags;
	RET(ctx_create(pctx, dev));
}

static CUresult
ctx_destroy(CUcontext ctx)
{
	CUresult r = ready();

	if (r != CUDA_SUCCESS)
		return r;
	pthread_mutex_lock(&fcu_lock);
	if (!ctx || !ctx_live(ctx) || ctx->primary)
		r = CUDA_ERROR_INVALID_CONTEXT;
	else
		ctx_unlink(ctx);
	pthread_mutex_unlock(&fcu_lock);
	if (r == CUDA_SUCCESS)
		ctx_free(ctx);
	return r;
}

CUresult
cuCtxDestroy(CUcontext ctx)
{
	RET(ctx_destroy(ctx));
}

CUresult
cuCtxDestroy_v2(CUcontext ctx)
{
	RET(ctx_destroy(ctx));
}

CUresult
cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice d)
{
	struct fcu_dev *dev;
	CUresult r = get_dev(d, &dev);
	struct CUctx_st *ctx = NULL;

	if (r == CUDA_SUCCESS && !pctx)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r != CUDA_SUCCESS)
		RET(r);
	pthread_mutex_lock(&fcu_lock);
	if (dev->primary) {
		dev->primary_refs++;
		ctx = dev->primary;
	}
	pthread_mutex_unlock(&fcu_lock);
	if (!ctx) {
		r = ctx_new(dev, true, &ctx);
		if (r == CUDA_SUCCESS) {
			pthread_mutex_lock(&fcu_lock);
			dev->primary = ctx;
			dev->primary_refs = 1;
			pthread_mutex_unlock(&fcu_lock);
		}
	}
	if (r == CUDA_SUCCESS)
		*pctx = ctx;
	RET(r);
}

static CUresult
primary_release(CUdevice d)
{
	struct fcu_dev *dev;
	CUresult r = get_dev(d, &dev);
	struct CUctx_st *gone = NULL;

	if (r != CUDA_SUCCESS)
		return r;
	pthread_mutex_lock(&fcu_lock);
	if (!dev->primary) {
		r = CUDA_ERROR_INVALID_CONTEXT;
	} else if (--dev->primary_refs == 0) {
		gone = dev->primary;
		dev->primary = NULL;
		ctx_unlink(gone);
	}
	pthread_mutex_unlock(&fcu_lock);
	if (gone)
		ctx_free(gone);
	return r;
}

CUresult
cuDevicePrimaryCtxRelease(CUdevice dev)
{
	RET(primary_release(dev));
}

CUresult
cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	RET(primary_release(dev));
}

CUresult
cuCtxSetCurrent(CUcontext ctx)
{
	CUresult r = ready();

	if (r == CUDA_SUCCESS) {
		pthread_mutex_lock(&fcu_lock);
		if (ctx && !ctx_live(ctx))
			r = CUDA_ERROR_INVALID_CONTEXT;
		else
			current = ctx;
		pthread_mutex_unlock(&fcu_lock);
	}
	RET(r);
}

CUresult
cuCtxGetCurrent(CUcontext *pctx)
{
	CUresult r = ready();

	if (r == CUDA_SUCCESS && !pctx)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS) {
		pthread_mutex_lock(&fcu_lock);
		*pctx = current && ctx_live(current) ? current : NULL;
		pthread_mutex_unlock(&fcu_lock);
	}
	RET(r);
}

static CUresult
ctx_of(CUcontext ctx, struct CUctx_st **out)
{
	CUresult r;

	if (!ctx)
		return cur_ctx(out);
	if ((r = ready()) != CUDA_SUCCESS)
		return r;
	pthread_mutex_lock(&fcu_lock);
	r = ctx_live(ctx) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_unlock(&fcu_lock);
	*out = ctx;
	return r;
}

static CUresult
ctx_device(CUdevice *device, CUcontext c)
{
	struct CUctx_st *ctx;
	CUresult r = ctx_of(c, &ctx);

	if (r == CUDA_SUCCESS && !device)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		*device = ctx->dev->index;
	return r;
}

CUresult
cuCtxGetDevice(CUdevice *device)
{
	RET(ctx_device(device, NULL));
}

CUresult
cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
	RET(ctx_device(device, ctx));
}

static CUresult
ctx_sync(CUcontext c)
{
	struct CUctx_st *ctx;
	CUresult r = ctx_of(c, &ctx), w;

	if (r != CUDA_SUCCESS)
		return r;
	/* the streams stay in the list until the context goes */
	for (struct CUstream_st *s = ctx->stream; s; s = s->next)
		if ((w = fcu_stream_wait(s, false)) != CUDA_SUCCESS && r == CUDA_SUCCESS)
			r = w;
	return r;
}

CUresult
cuCtxSynchronize(void)
{
	RET(ctx_sync(NULL));
}

CUresult
cuCtxSynchronize_v2(CUcontext ctx)
{
	RET(ctx_sync(ctx));
}

/* memory */

CUresult
cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
	struct CUctx_st *ctx;
	CUresult r = cur_ctx(&ctx);

	if (r == CUDA_SUCCESS && (!free_bytes || !total))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS) {
		const struct fcu_dev *d = ctx->dev;
		unsigned long long used;
		pthread_mutex_lock(&mem_lock);
		used = d->mem_used_other + d->mem_alloc;
		pthread_mutex_unlock(&mem_lock);
		*total = (size_t)d->mem_total;
		*free_bytes = used >= d->mem_total ? 0 : (size_t)(d->mem_total - used);
	}
	RET(r);
}

static size_t
page_round(size_t bytes)
{
	return (bytes + 4095) & ~(size_t)4095;
}

CUresult
cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	struct CUctx_st *ctx;
	CUresult r = cur_ctx(&ctx);
	struct fcu_alloc *a;
	size_t mapped = page_round(bytesize);
	void *p;

	if (r == CUDA_SUCCESS && (!dptr || bytesize == 0 || mapped < bytesize))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r != CUDA_SUCCESS)
		RET(r);
	struct fcu_dev *d = ctx->dev;
	pthread_mutex_lock(&mem_lock);
	if (d->mem_used_other + d->mem_alloc + mapped > d->mem_total)
		r = CUDA_ERROR_OUT_OF_MEMORY;
	for (size_t i = 0; i < d->nfault; i++)
		if (d->fault[i].kind == FF_OOM && d->mem_alloc + mapped > d->fault[i].bytes)
			r = CUDA_ERROR_OUT_OF_MEMORY;
	if (r == CUDA_SUCCESS)
		d->mem_alloc += mapped;
	pthread_mutex_unlock(&mem_lock);
	if (r != CUDA_SUCCESS)
		RET(r);
	p = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
	         -1, 0);
	a = calloc(1, sizeof(*a));
	pthread_mutex_lock(&mem_lock);
	if (p == MAP_FAILED || !a) {
		d->mem_alloc -= mapped;
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else {
		a->base = (uintptr_t)p;
		a->bytes = bytesize;
		a->mapped = mapped;
		a->next = ctx->alloc;
		ctx->alloc = a;
		*dptr = (CUdeviceptr)a->base;
	}
	pthread_mutex_unlock(&mem_lock);
	if (r != CUDA_SUCCESS) {
		if (p != MAP_FAILED)
			munmap(p, mapped);
		free(a);
	}
	RET(r);
}

static bool
ctx_busy(struct CUctx_st *ctx)
{
	bool busy = false;

	pthread_mutex_lock(&ctx->mu);
	for (struct CUstream_st *s = ctx->stream; s; s = s->next)
		busy |= s->done < s->enq;
	pthread_mutex_unlock(&ctx->mu);
	return busy;
}

CUresult
cuMemFree_v2(CUdeviceptr dptr)
{
	struct CUctx_st *ctx;
	CUresult r = any_ctx(&ctx);
	struct fcu_alloc *a = NULL;

	if (r != CUDA_SUCCESS)
		RET(r);
	pthread_mutex_lock(&mem_lock);
	for (struct fcu_alloc **pp = &ctx->alloc; *pp; pp = &(*pp)->next)
		if ((*pp)->base == dptr) {
			a = *pp;
			*pp = a->next;
			ctx->dev->mem_alloc -= a->mapped;
			break;
		}
	pthread_mutex_unlock(&mem_lock);
	if (!a)
		RET(CUDA_ERROR_INVALID_VALUE);
	/*
	 * Work still queued may read it: then the mapping stays (unreachable
	 * through the API from now on) and goes with the process.
	 */
	if (!ctx_busy(ctx))
		munmap((void *)a->base, a->mapped);
	free(a);
	/* a lost context gives its memory back, and says it is lost */
	RET(ctx_error(ctx));
}

static CUresult
host_alloc(void **pp, size_t bytesize)
{
	struct CUctx_st *ctx;
	CUresult r = cur_ctx(&ctx);
	size_t mapped = page_round(bytesize);
	struct pinned *h;
	void *p;

	if (r == CUDA_SUCCESS && (!pp || bytesize == 0 || mapped < bytesize))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r != CUDA_SUCCESS)
		return r;
	p = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!(h = calloc(1, sizeof(*h)))) {
		munmap(p, mapped);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	h->p = p;
	h->bytes = bytesize;
	h->mapped = mapped;
	pthread_mutex_lock(&mem_lock);
	h->next = pinned;
	pinned = h;
	pthread_mutex_unlock(&mem_lock);
	*pp = p;
	return CUDA_SUCCESS;
}

CUresult
cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	RET(host_alloc(pp, bytesize));
}

CUresult
cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
	if (Flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
	                        CU_MEMHOSTALLOC_WRITECOMBINED))
		RET(CUDA_ERROR_INVALID_VALUE);
	RET(host_alloc(pp, bytesize));
}

CUresult
cuMemFreeHost(void *p)
{
	CUresult r = ready();
	struct pinned *h = NULL;
	bool busy = false;

	if (r != CUDA_SUCCESS)
		RET(r);
	pthread_mutex_lock(&mem_lock);
	for (struct pinned **pp = &pinned; *pp; pp = &(*pp)->next)
		if ((*pp)->p == p) {
			h = *pp;
			*pp = h->next;
			break;
		}
	pthread_mutex_unlock(&mem_lock);
	if (!h)
		RET(CUDA_ERROR_INVALID_VALUE);
	pthread_mutex_lock(&fcu_lock);
	for (struct CUctx_st *c = contexts; c && !busy; c = c->next)
		busy = ctx_busy(c);
	pthread_mutex_unlock(&fcu_lock);
	/* as cuMemFree: a copy still queued may read it */
	if (!busy)
		munmap(h->p, h->mapped);
	free(h);
	RET(CUDA_SUCCESS);
}

CUresult
cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
	struct CUctx_st *ctx;
	CUresult r = cur_ctx(&ctx);

	if (r == CUDA_SUCCESS && (!pdptr || Flags != 0 || !fcu_is_pinned(p, 0)))
		r = CUDA_ERROR_INVALID_VALUE;
	/* unified addressing: the device sees pinned memory at its host address */
	if (r == CUDA_SUCCESS)
		*pdptr = (CUdeviceptr)(uintptr_t)p;
	RET(r);
}

/* streams */

/* the stream of handle h (0 and the legacy handles: ctx's default stream) */
static CUresult
find_stream(struct CUctx_st *ctx, CUstream h, struct CUstream_st **out)
{
	CUresult r = CUDA_ERROR_INVALID_HANDLE;

	if (!h || h == FCU_STREAM_LEGACY || h == FCU_STREAM_PER_THREAD) {
		*out = ctx->stream;
		return CUDA_SUCCESS;
	}
	pthread_mutex_lock(&fcu_lock);
	for (struct CUctx_st *c = contexts; c && r != CUDA_SUCCESS; c = c->next) {
		pthread_mutex_lock(&c->mu);
		for (struct CUstream_st *s = c->stream; s; s = s->next)
			if (s == h && !s->destroyed) {
				*out = s;
				r = CUDA_SUCCESS;
			}
		pthread_mutex_unlock(&c->mu);
	}
	pthread_mutex_unlock(&fcu_lock);
	if (r == CUDA_SUCCESS)
		r = ctx_error((*out)->ctx);
	return r;
}

CUresult
cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	struct CUctx_st *ctx;
	CUresult r = cur_ctx(&ctx);
	struct CUstream_st *s;

	if (r == CUDA_SUCCESS && (!phStream || (Flags & ~(unsigned)CU_STREAM_NON_BLOCKING)))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r != CUDA_SUCCESS)
		RET(r);
	if (!(s = calloc(1, sizeof(*s))))
		RET(CUDA_ERROR_OUT_OF_MEMORY);
	s->ctx = ctx;
	s->flags = Flags;
	/* the clock starts where the device's is */
	pthread_mutex_lock(&ctx->mu);
	s->clock = ctx->clock;
	pthread_mutex_unlock(&ctx->mu);
	if ((r = fcu_stream_start(s)) != CUDA_SUCCESS) {
		free(s);
		RET(r);
	}
	pthread_mutex_lock(&ctx->mu);
	/* after the default stream, which stays first */
	s->next = ctx->stream->next;
	ctx->stream->next = s;
	pthread_mutex_unlock(&ctx->mu);
	*phStream = s;
	RET(CUDA_SUCCESS);
}

static CUresult
stream_destroy(CUstream h)
{
	struct CUctx_st *ctx;
	struct CUstream_st *s;
	CUresult r = any_ctx(&ctx);

	if (r != CUDA_SUCCESS)
		return r;
	if (!h || h == FCU_STREAM_LEGACY || h == FCU_STREAM_PER_THREAD)
		return CUDA_ERROR_INVALID_HANDLE;
	/* a lost context's streams still go */
	CUresult f = find_stream(ctx, h, &s);
	if (f == CUDA_ERROR_INVALID_HANDLE)
		return f;
	/* the worker finishes what is queued, then ends; ctx_free joins it */
	pthread_mutex_lock(&s->ctx->mu);
	s->destroyed = true;
	pthread_cond_broadcast(&s->ctx->cv);
	pthread_mutex_unlock(&s->ctx->mu);
	return f;
}

CUresult
cuStreamDestroy(CUstream hStream)
{
	RET(stream_destroy(hStream));
}

CUresult
cuStreamDestroy_v2(CUstream hStream)
{
	RET(stream_destroy(hStream));
}

CUresult
cuStreamQuery(CUstream hStream)
{
	struct CUctx_st *ctx;
	struct CUstream_st *s;
	CUresult r = cur_ctx(&ctx);

	if (r == CUDA_SUCCESS)
		r = find_stream(ctx, hStream, &s);
	if (r == CUDA_SUCCESS)
		r = fcu_stream_wait(s, true);
	RET(r);
}

CUresult
cuStreamSynchronize(CUstream hStream)
{
	struct CUctx_st *ctx;
	struct CUstream_st *s;
	CUresult r = cur_ctx(&ctx);

	if (r == CUDA_SUCCESS)
		r = find_stream(ctx, hStream, &s);
	if (r == CUDA_SUCCESS)
		r = fcu_stream_wait(s, false);
	RET(r);
}

/* copies and memsets */

static struct fcu_op *
op_new(enum fcu_op_kind kind)
{
	struct fcu_op *op = calloc(1, sizeof(*op));

	if (op)
		op->kind = kind;
	return op;
}

/*
 * The fake libcublasLt.so.13's hooks (fake.h): its GEMM reads and writes
 * device memory through fcu_hook_mem and is queued on the caller's stream,
 * in order with the kernels and events, by fcu_hook_enqueue.
 */
void *
fcu_hook_mem(uint64_t addr, size_t bytes)
{
	struct CUctx_st *ctx;
	bool pin;

	if (any_ctx(&ctx) != CUDA_SUCCESS)
		return NULL;
	return fcu_mem(ctx, addr, bytes, &pin);
}

CUresult
fcu_hook_enqueue(CUstream h, fcu_hook_fn *fn, void *arg, double seconds)
{
	struct CUctx_st *ctx;
	struct CUstream_st *s;
	struct fcu_op *op = NULL;
	CUresult r = cur_ctx(&ctx);

	if (r == CUDA_SUCCESS && (!fn || !(seconds >= 0)))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		r = find_stream(ctx, h, &s);
	if (r == CUDA_SUCCESS && !(op = op_new(FO_HOOK)))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	if (r != CUDA_SUCCESS)
		RET(r);
	op->hook = fn;
	op->hook_arg = arg;
	op->hook_s = seconds;
	fcu_enqueue(s, op);
	RET(CUDA_SUCCESS);
}

/*
 * Queue a copy on stream h; sync: wait for it (the synchronous calls, and a
 * pageable host buffer, which the driver stages at the call).
 */
static CUresult
copy(CUstream h, void *dst, const void *src, size_t bytes, double Bps, bool sync)
{
	struct CUctx_st *ctx;
	struct CUstream_st *s;
	struct fcu_op *op;
	CUresult r = cur_ctx(&ctx);

	if (r == CUDA_SUCCESS)
		r = find_stream(ctx, h, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (!(op = op_new(FO_COPY)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	op->dst = dst;
	op->src = src;
	op->bytes = bytes;
	op->Bps = Bps;
	fcu_enqueue(s, op);
	return sync ? fcu_stream_wait(s, false) : CUDA_SUCCESS;
}

static CUresult
htod(CUdeviceptr dst, const void *src, size_t n, CUstream h, bool sync, const char *fn)
{
	struct CUctx_st *ctx;
	CUresult r = cur_ctx(&ctx);
	bool pin;
	void *d = NULL;

	if (r == CUDA_SUCCESS && n && (!src || !(d = fcu_mem(ctx, dst, n, &pin))))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS && n) {
		bool pinned_src = fcu_is_pinned(src, n);
		r = copy(h, d, src, n,
		         pinned_src ? ctx->dev->h2d_pinned_Bps : ctx->dev->h2d_pageable_Bps,
		         sync || !pinned_src);
	}
	fcu_log(fn, cur_dev(), r, NULL);
	return r;
}

static CUresult
dtoh(void *dst, CUdeviceptr src, size_t n, CUstream h, bool sync, const char *fn)
{
	struct CUctx_st *ctx;
	CUresult r = cur_ctx(&ctx);
	bool pin;
	void *s = NULL;

	if (r == CUDA_SUCCESS && n && (!dst || !(s = fcu_mem(ctx, src, n, &pin))))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS && n) {
		bool pinned_dst = fcu_is_pinned(dst, n);
		r = copy(h, dst, s, n,
		         pinned_dst ? ctx->dev->d2h_pinned_Bps : ctx->dev->d2h_pageable_Bps,
		         sync || !pinned_dst);
	}
	fcu_log(fn, cur_dev(), r, NULL);
	return r;
}

static CUresult
dtod(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h, bool sync, const char *fn)
{
	struct CUctx_st *ctx;
	CUresult r = cur_ctx(&ctx);
	bool pin_d, pin_s;
	void *d = NULL, *s = NULL;

	if (r == CUDA_SUCCESS && n &&
	    (!(d = fcu_mem(ctx, dst, n, &pin_d)) || !(s = fcu_mem(ctx, src, n, &pin_s))))
		r = CUDA_ERROR_INVALID_VALUE;
	/* read and written within the device: twice the bytes through its memory */
	if (r == CUDA_SUCCESS && n)
		r = copy(h, d, s, n, ctx->dev->mem_Bps / 2, sync);
	fcu_log(fn, cur_dev(), r, NULL);
	return r;
}

CUresult
cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	return htod(dstDevice, srcHost, ByteCount, NULL, true, __func__);
}

CUresult
cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	return dtoh(dstHost, srcDevice, ByteCount, NULL, true, __func__);
}

CUresult
cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
	return dtod(dstDevice, srcDevice, ByteCount, NULL, false, __func__);
}

CUresult
cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)
{
	return htod(dstDevice, srcHost, ByteCount, hStream, false, __func__);
}

CUresult
cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
	return dtoh(dstHost, srcDevice, ByteCount, hStream, false, __func__);
}

CUresult
cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                     CUstream hStream)
{
	return dtod(dstDevice, srcDevice, ByteCount, hStream, false, __func__);
}

/* peer access: the scenario's [link] sections */

CUresult
cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
	struct fcu_dev *a, *b;
	CUresult r = get_dev(dev, &a);
	const struct fcu_link *l;

	if (r == CUDA_SUCCESS)
		r = get_dev(peerDev, &b);
	if (r == CUDA_SUCCESS && !canAccessPeer)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS) {
		l = dev == peerDev ? NULL : fcu_link_of(&fcu_sc, dev, peerDev);
		*canAccessPeer = l && l->p2p;
	}
	RET(r);
}

CUresult
cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib, CUdevice srcDevice,
                        CUdevice dstDevice)
{
	struct fcu_dev *a, *b;
	CUresult r = get_dev(srcDevice, &a);
	const struct fcu_link *l;
	bool p2p;

	if (r == CUDA_SUCCESS)
		r = get_dev(dstDevice, &b);
	if (r == CUDA_SUCCESS && srcDevice == dstDevice)
		r = CUDA_ERROR_INVALID_DEVICE;
	if (r == CUDA_SUCCESS && !value)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r != CUDA_SUCCESS)
		RET(r);
	l = fcu_link_of(&fcu_sc, srcDevice, dstDevice);
	p2p = l && l->p2p;
	switch (attrib) {
	case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK:
		*value = p2p ? l->rank : 0;
		break;
	case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
	case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED:
		*value = p2p;
		break;
	case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:
		*value = p2p && l->atomics;
		break;
	default:
		r = CUDA_ERROR_INVALID_VALUE;
		break;
	}
	RET(r);
}

CUresult
cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags)
{
	struct CUctx_st *ctx;
	CUresult r = cur_ctx(&ctx);
	const struct fcu_link *l;

	if (r == CUDA_SUCCESS && Flags)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r != CUDA_SUCCESS)
		RET(r);
	pthread_mutex_lock(&fcu_lock);
	if (!peerContext || peerContext == ctx || !ctx_live(peerContext)) {
		r = CUDA_ERROR_INVALID_CONTEXT;
	} else {
		l = fcu_link_of(&fcu_sc, ctx->dev->index, peerContext->dev->index);
		if (!l || !l->p2p)
			r = CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
		else if (peer_has(ctx, peerContext))
			r = CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
		else if (ctx->npeer == FCU_MAX_DEVICES)
			r = CUDA_ERROR_INVALID_VALUE;
		else
			ctx->peer[ctx->npeer++] = peerContext;
	}
	pthread_mutex_unlock(&fcu_lock);
	RET(r);
}

CUresult
cuCtxDisablePeerAccess(CUcontext peerContext)
{
	struct CUctx_st *ctx;
	CUresult r = cur_ctx(&ctx);

	if (r != CUDA_SUCCESS)
		RET(r);
	pthread_mutex_lock(&fcu_lock);
	if (!peerContext || !ctx_live(peerContext))
		r = CUDA_ERROR_INVALID_CONTEXT;
	else if (peer_drop(ctx, peerContext) < 0)
		r = CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
	pthread_mutex_unlock(&fcu_lock);
	RET(r);
}

/*
 * A copy between two contexts' buffers, queued on stream h (0: the current
 * context's default stream, or srcContext's). Over the [link]'s rate when
 * the stream's context has peer access to the other one; without it the
 * driver stages the copy through host memory: the slower of the source's
 * pinned D2H and the destination's pinned H2D.
 */
static CUresult
peer_copy(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream h,
          bool sync)
{
	struct CUctx_st *own;
	struct CUstream_st *s;
	const struct fcu_link *l;
	struct fcu_op *op;
	bool pin, peer = false;
	void *d = NULL, *p = NULL;
	double Bps;
	CUresult r = ready();

	if (r != CUDA_SUCCESS)
		return r;
	pthread_mutex_lock(&fcu_lock);
	if (!dctx || !sctx || !ctx_live(dctx) || !ctx_live(sctx))
		r = CUDA_ERROR_INVALID_CONTEXT;
	own = current && ctx_live(current) ? current : sctx;
	pthread_mutex_unlock(&fcu_lock);
	if (r == CUDA_SUCCESS)
		r = ctx_error(sctx);
	if (r == CUDA_SUCCESS)
		r = ctx_error(dctx);
	if (r == CUDA_SUCCESS)
		r = find_stream(own, h, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (!n)
		return CUDA_SUCCESS;
	if (!(d = fcu_mem(dctx, dst, n, &pin)) || !(p = fcu_mem(sctx, src, n, &pin)))
		return CUDA_ERROR_INVALID_VALUE;
	if (dctx->dev == sctx->dev) {
		Bps = dctx->dev->mem_Bps / 2;
	} else {
		struct CUctx_st *other = s->ctx == sctx ? dctx : sctx;

		l = fcu_link_of(&fcu_sc, dctx->dev->index, sctx->dev->index);
		pthread_mutex_lock(&fcu_lock);
		peer = peer_has(s->ctx, other);
		pthread_mutex_unlock(&fcu_lock);
		if (peer && l && l->p2p)
			Bps = l->Bps;
		else
			Bps = sctx->dev->d2h_pinned_Bps < dctx->dev->h2d_pinned_Bps
			              ? sctx->dev->d2h_pinned_Bps
			              : dctx->dev->h2d_pinned_Bps;
	}
	if (!(op = op_new(FO_COPY)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	op->dst = d;
	op->src = p;
	op->bytes = n;
	op->Bps = Bps;
	fcu_enqueue(s, op);
	return sync ? fcu_stream_wait(s, false) : CUDA_SUCCESS;
}

CUresult
cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
             CUcontext srcContext, size_t ByteCount)
{
	RET(peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount, NULL, true));
}

CUresult
cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                  CUcontext srcContext, size_t ByteCount, CUstream hStream)
{
	RET(peer_copy(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, false));
}

static CUresult
memset_op(CUdeviceptr dst, uint32_t value, size_t n, size_t width)
{
	struct CUctx_st *ctx;
	CUresult r = cur_ctx(&ctx);
	struct fcu_op *op;
	bool pin;
	void *d = NULL;

	if (r == CUDA_SUCCESS && n &&
	    (n > SIZE_MAX / width || (width == 4 && dst % 4) ||
	     !(d = fcu_mem(ctx, dst, n * width, &pin))))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r != CUDA_SUCCESS || !n)
		return r;
	if (!(op = op_new(width == 1 ? FO_SET8 : FO_SET32)))
		return CUDA_ERROR_OUT_OF_MEMORY;
	op->dst = d;
	op->bytes = n * width;
	op->value = value;
	op->Bps = ctx->dev->mem_Bps;
	fcu_enqueue(ctx->stream, op);
	return CUDA_SUCCESS;
}

CUresult
cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
	RET(memset_op(dstDevice, uc, N, 1));
}

CUresult
cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
	RET(memset_op(dstDevice, ui, N, 4));
}

/* modules */

static struct CUmod_st *
find_module(CUmodule h)
{
	for (struct CUctx_st *c = contexts; c; c = c->next)
		for (struct CUmod_st *m = c->mod; m; m = m->next)
			if (m == h)
				return m;
	return NULL;
}

/* the PTX without its comments, so that a commented-out .entry is none */
static char *
strip_comments(const char *s)
{
	size_t n = strlen(s);
	char *out = malloc(n + 1), *o = out;

	if (!out)
		return NULL;
	while (*s) {
		if (s[0] == '/' && s[1] == '/') {
			while (*s && *s != '\n')
				s++;
		} else if (s[0] == '/' && s[1] == '*') {
			const char *e = strstr(s + 2, "*/");
			s = e ? e + 2 : s + strlen(s);
			*o++ = ' ';
		} else if (*s == '"') {
			*o++ = *s++;
			while (*s && *s != '"')
				*o++ = *s++;
			if (*s)
				*o++ = *s++;
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
	return out;
}

/* the directive's position as a whole word in text, or NULL */
static const char *
directive(const char *text, const char *d)
{
	size_t n = strlen(d);

	for (const char *p = strstr(text, d); p; p = strstr(p + 1, d))
		if ((p == text || isspace((unsigned char)p[-1])) && isspace((unsigned char)p[n]))
			return p + n;
	return NULL;
}

static const char *
skip_space(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

/* the bytes a parameter declaration takes (".param .u64 .ptr.global.align 4 x", ".b8 x[16]") */
static int
param_size(const char *p, const char *end)
{
	static const struct {
		const char *t;
		int bytes;
	} types[] = {
		{ ".u64", 8 }, { ".s64", 8 }, { ".b64", 8 }, { ".f64", 8 }, { ".u32", 4 },
		{ ".s32", 4 }, { ".b32", 4 }, { ".f32", 4 }, { ".u16", 2 }, { ".s16", 2 },
		{ ".b16", 2 }, { ".f16", 2 }, { ".u8", 1 },  { ".s8", 1 },  { ".b8", 1 },
	};
	int size = -1;
	const char *q;

	for (q = p; q < end && size < 0; q++)
		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
			size_t n = strlen(types[i].t);
			if ((size_t)(end - q) >= n && !strncmp(q, types[i].t, n) &&
			    !isalnum((unsigned char)q[n])) {
				size = types[i].bytes;
				break;
			}
		}
	for (q = p; q < end; q++)
		if (*q == '[') {
			long count = strtol(q + 1, NULL, 10);
			if (count > 0 && count < 65536)
				size *= (int)count;
			break;
		}
	return size;
}

struct ptx_error {
	char msg[256];
};

/*
 * Check the PTX text against the device and dev.h: its ISA version and
 * target, and for each entry that names a kernel of dev.h, its parameters'
 * count and sizes and the target its instructions need. Fills m's
 * functions.
 */
static CUresult
parse_ptx(const char *text, const struct fcu_dev *dev, struct CUmod_st *m, struct ptx_error *e)
{
	const char *p;
	int vmaj, vmin, target, dev_cc = dev->cc_major * 10 + dev->cc_minor;
	char suffix = 0;

	if (!(p = directive(text, ".version")) || sscanf(p, " %d.%d", &vmaj, &vmin) != 2) {
		snprintf(e->msg, sizeof(e->msg), "ptxas: no .version directive");
		return CUDA_ERROR_INVALID_PTX;
	}
	if (vmaj * 10 + vmin > fcu_sc.ptx_max) {
		snprintf(e->msg, sizeof(e->msg),
		         "ptxas: PTX ISA %d.%d is newer than this driver's %d.%d", vmaj, vmin,
		         fcu_sc.ptx_max / 10, fcu_sc.ptx_max % 10);
		return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
	}
	p = directive(text, ".target");
	if (!p || strncmp(p = skip_space(p), "sm_", 3) || !isdigit((unsigned char)p[3])) {
		snprintf(e->msg, sizeof(e->msg), "ptxas: no .target sm_XY directive");
		return CUDA_ERROR_INVALID_PTX;
	}
	char *after;
	target = (int)strtol(p + 3, &after, 10);
	if (*after == 'a' || *after == 'f')
		suffix = *after;
	if (target > dev_cc || (suffix == 'a' && target != dev_cc) ||
	    (suffix == 'f' && target / 10 != dev_cc / 10)) {
		snprintf(e->msg, sizeof(e->msg), "no kernel image for sm_%d%s on a %d.%d device",
		         target,
		         suffix == 'a'   ? "a"
		         : suffix == 'f' ? "f"
		                         : "",
		         dev->cc_major, dev->cc_minor);
		return CUDA_ERROR_NO_BINARY_FOR_GPU;
	}
	for (p = directive(text, ".entry"); p; p = directive(p, ".entry")) {
		const char *name = skip_space(p), *q = name;
		struct CUfunc_st *f, *grown;
		while (isalnum((unsigned char)*q) || *q == '_' || *q == '$')
			q++;
		if (q == name || (size_t)(q - name) >= sizeof(f->name)) {
			snprintf(e->msg, sizeof(e->msg), "ptxas: .entry without a name");
			return CUDA_ERROR_INVALID_PTX;
		}
		if (!(grown = realloc(m->func, (m->nfunc + 1) * sizeof(*grown))))
			return CUDA_ERROR_OUT_OF_MEMORY;
		m->func = grown;
		f = &m->func[m->nfunc++];
		memset(f, 0, sizeof(*f));
		f->mod = m;
		memcpy(f->name, name, (size_t)(q - name));
		f->kern = bench_kern_by_name(f->name);
		p = q;
		if (f->kern < 0)
			continue;
		const char *want = fcu_kern_params(f->kern);
		size_t nwant = strlen(want), n = 0;
		q = skip_space(q);
		if (*q == '(') {
			const char *close = strchr(q, ')');
			if (!close) {
				snprintf(e->msg, sizeof(e->msg),
				         "ptxas: %s: unterminated parameters", f->name);
				return CUDA_ERROR_INVALID_PTX;
			}
			for (const char *a = q + 1; a < close && *skip_space(a) != ')';) {
				const char *comma = memchr(a, ',', (size_t)(close - a));
				const char *end = comma ? comma : close;
				int size = param_size(a, end);
				int wsize = n < nwant ? (strchr("pud", want[n]) ? 8 : 4) : 0;
				if (n >= nwant || size != wsize) {
					snprintf(
					        e->msg, sizeof(e->msg),
					        "%s: parameter %zu is %d bytes, bench/dev.h has %d",
					        f->name, n, size, wsize);
					return CUDA_ERROR_INVALID_PTX;
				}
				n++;
				a = end + 1;
			}
		}
		if (n != nwant) {
			snprintf(e->msg, sizeof(e->msg), "%s: %zu parameters, bench/dev.h has %zu",
			         f->name, n, nwant);
			return CUDA_ERROR_INVALID_PTX;
		}
		if (fcu_kern_min_cc(f->kern) > target) {
			snprintf(e->msg, sizeof(e->msg), "ptxas: %s needs .target sm_%d or higher",
			         f->name, fcu_kern_min_cc(f->kern));
			return CUDA_ERROR_INVALID_PTX;
		}
	}
	return CUDA_SUCCESS;
}

static CUresult
module_load(CUmodule *module, const void *image, char *log, size_t log_size)
{
	struct CUctx_st *ctx;
	CUresult r = cur_ctx(&ctx);
	struct ptx_error e = { "" };
	struct CUmod_st *m;
	char *text;

	if (r == CUDA_SUCCESS && (!module || !image))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r != CUDA_SUCCESS)
		return r;
	/* a cubin (ELF) or a fat binary: machine code the fake cannot run */
	if (!memcmp(image, "\177ELF", 4) || *(const uint32_t *)image == 0xBA55ED50u)
		return CUDA_ERROR_NO_BINARY_FOR_GPU;
	if (!(m = calloc(1, sizeof(*m))) || !(text = strip_comments(image))) {
		free(m);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	m->ctx = ctx;
	r = parse_ptx(text, ctx->dev, m, &e);
	free(text);
	if (r != CUDA_SUCCESS) {
		if (e.msg[0] && log && log_size)
			snprintf(log, log_size, "%s", e.msg);
		if (e.msg[0] && r == CUDA_ERROR_INVALID_PTX)
			fprintf(stderr, "fake cuda: cuModuleLoadData: %s\n", e.msg);
		free(m->func);
		free(m);
		return r;
	}
	pthread_mutex_lock(&fcu_lock);
	m->next = ctx->mod;
	ctx->mod = m;
	pthread_mutex_unlock(&fcu_lock);
	*module = m;
	return CUDA_SUCCESS;
}

CUresult
cuModuleLoadData(CUmodule *module, const void *image)
{
	RET(module_load(module, image, NULL, 0));
}

CUresult
cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                   CUjit_option *options, void **optionValues)
{
	char *log = NULL, *info = NULL;
	size_t log_size = 0, info_size = 0;
	CUresult r;

	if (numOptions && (!options || !optionValues))
		RET(CUDA_ERROR_INVALID_VALUE);
	for (unsigned i = 0; i < numOptions; i++) {
		if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
			log = optionValues[i];
		else if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
			log_size = (size_t)(uintptr_t)optionValues[i];
		else if (options[i] == CU_JIT_INFO_LOG_BUFFER)
			info = optionValues[i];
		else if (options[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES)
			info_size = (size_t)(uintptr_t)optionValues[i];
	}
	if (log && log_size)
		log[0] = '\0';
	if (info && info_size)
		info[0] = '\0';
	r = module_load(module, image, log, log_size);
	/* the driver writes back how much of each log it used */
	for (unsigned i = 0; i < numOptions; i++) {
		if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES && log && log_size)
			optionValues[i] = (void *)(uintptr_t)strlen(log);
		else if (options[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES && info && info_size)
			optionValues[i] = (void *)(uintptr_t)0;
	}
	RET(r);
}

CUresult
cuModuleUnload(CUmodule hmod)
{
	CUresult r = ready();
	struct CUmod_st *m = NULL;

	if (r != CUDA_SUCCESS)
		RET(r);
	pthread_mutex_lock(&fcu_lock);
	if (hmod && (m = find_module(hmod)))
		for (struct CUmod_st **pp = &m->ctx->mod; *pp; pp = &(*pp)->next)
			if (*pp == m) {
				*pp = m->next;
				break;
			}
	pthread_mutex_unlock(&fcu_lock);
	if (!m)
		RET(CUDA_ERROR_INVALID_HANDLE);
	free(m->func);
	free(m);
	RET(CUDA_SUCCESS);
}

CUresult
cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	CUresult r = ready();
	struct CUmod_st *m;

	if (r == CUDA_SUCCESS && (!hfunc || !name))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r != CUDA_SUCCESS)
		RET(r);
	pthread_mutex_lock(&fcu_lock);
	if (!hmod || !(m = find_module(hmod))) {
		r = CUDA_ERROR_INVALID_HANDLE;
	} else {
		r = CUDA_ERROR_NOT_FOUND;
		for (size_t i = 0; i < m->nfunc; i++)
			if (!strcmp(m->func[i].name, name)) {
				*hfunc = &m->func[i];
				r = CUDA_SUCCESS;
				break;
			}
	}
	pthread_mutex_unlock(&fcu_lock);
	RET(r);
}

/* launches */

static bool
func_live(const struct CUfunc_st *f)
{
	for (struct CUctx_st *c = contexts; c; c = c->next)
		for (struct CUmod_st *m = c->mod; m; m = m->next)
			if (f >= m->func && f < m->func + m->nfunc)
				return true;
	return false;
}

/* the launch shape dev.h asks of kernel k; the PTX says as much (.reqntid) */
static bool
shape_ok(int k, const unsigned block[3])
{
	unsigned long long n = (unsigned long long)block[0] * block[1] * block[2];

	switch (k) {
	case BK_STREAM_DOT:
		return n == BENCH_DOT_BLOCK;
	case BK_MATMUL_TILED:
	case BK_MATMUL_TILED_F64:
		return block[0] == BENCH_TILE && block[1] == BENCH_TILE && block[2] == 1;
	case BK_MMA_F16:
	case BK_MMA_BF16:
	case BK_MMA_TF32:
	case BK_MMA_I8:
	case BK_MMA_FP8:
		return n % 32 == 0;
	default:
		return true;
	}
}

CUresult
cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
               unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
               unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
	struct CUctx_st *ctx;
	struct CUstream_st *s;
	struct fcu_op *op;
	CUresult r = cur_ctx(&ctx);
	const char *name = "?";
	int kern = -1;

	if (r == CUDA_SUCCESS) {
		pthread_mutex_lock(&fcu_lock);
		if (!f || !func_live(f) || f->mod->ctx != ctx)
			r = CUDA_ERROR_INVALID_HANDLE;
		else
			name = f->name, kern = f->kern;
		pthread_mutex_unlock(&fcu_lock);
	}
	if (r == CUDA_SUCCESS)
		r = find_stream(ctx, hStream, &s);
	unsigned long long threads = (unsigned long long)blockDimX * blockDimY * blockDimZ;
	if (r == CUDA_SUCCESS &&
	    (!gridDimX || !gridDimY || !gridDimZ || !threads || blockDimX > 1024 ||
	     blockDimY > 1024 || blockDimZ > 64 || threads > (unsigned)ctx->dev->max_threads ||
	     gridDimX > 2147483647u || gridDimY > 65535 || gridDimZ > 65535 ||
	     sharedMemBytes > 49152 || (kernelParams && extra)))
		r = CUDA_ERROR_INVALID_VALUE;
	/* the fake computes only the kernels of bench/dev.h, from kernelParams */
	if (r == CUDA_SUCCESS && (kern < 0 || extra))
		r = CUDA_ERROR_NOT_SUPPORTED;
	const char *params = kern >= 0 ? fcu_kern_params(kern) : "";
	if (r == CUDA_SUCCESS && *params && !kernelParams)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS &&
	    !shape_ok(kern, (const unsigned[3]){ blockDimX, blockDimY, blockDimZ }))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS && !(op = op_new(FO_KERNEL)))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	if (r != CUDA_SUCCESS) {
		fcu_log(__func__, cur_dev(), r, name);
		return r;
	}
	struct fcu_launch *L = &op->launch;
	L->kern = kern;
	L->grid[0] = gridDimX, L->grid[1] = gridDimY, L->grid[2] = gridDimZ;
	L->block[0] = blockDimX, L->block[1] = blockDimY, L->block[2] = blockDimZ;
	for (size_t i = 0; params[i]; i++) {
		if (!kernelParams[i]) {
			free(op);
			fcu_log(__func__, cur_dev(), CUDA_ERROR_INVALID_VALUE, name);
			return CUDA_ERROR_INVALID_VALUE;
		}
		memcpy(&L->arg[i], kernelParams[i], strchr("pud", params[i]) ? 8 : 4);
	}
	struct fcu_dev *d = ctx->dev;
	pthread_mutex_lock(&fcu_lock);
	unsigned long long nth = ++d->launches[kern];
	for (size_t i = 0; i < d->nfault; i++) {
		const struct fcu_fault *ft = &d->fault[i];
		if (ft->kern != kern)
			continue;
		if (ft->kind == FF_LAUNCH_FAILED && ft->launch == nth)
			L->fail = true;
		else if (ft->kind == FF_HANG && ft->launch == nth)
			L->hang = true;
		else if (ft->kind == FF_CORRUPT && (ft->launch == 0 || ft->launch == nth))
			L->corrupt = ft;
	}
	pthread_mutex_unlock(&fcu_lock);
	fcu_enqueue(s, op);
	fcu_log(__func__, cur_dev(), CUDA_SUCCESS, name);
	return CUDA_SUCCESS;
}

/* events */

static CUresult
find_event(CUevent h, struct CUevent_st **out)
{
	CUresult r = CUDA_ERROR_INVALID_HANDLE;

	pthread_mutex_lock(&fcu_lock);
	for (struct CUctx_st *c = contexts; c && r != CUDA_SUCCESS; c = c->next) {
		pthread_mutex_lock(&c->mu);
		for (struct CUevent_st *e = c->event; e; e = e->next)
			if (e == h && !e->destroyed) {
				*out = e;
				r = CUDA_SUCCESS;
			}
		pthread_mutex_unlock(&c->mu);
	}
	pthread_mutex_unlock(&fcu_lock);
	return r;
}

CUresult
cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	struct CUctx_st *ctx;
	CUresult r = cur_ctx(&ctx);
	struct CUevent_st *e;

	if (r == CUDA_SUCCESS && (!phEvent || (Flags & ~7u)))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r != CUDA_SUCCESS)
		RET(r);
	if (!(e = calloc(1, sizeof(*e))))
		RET(CUDA_ERROR_OUT_OF_MEMORY);
	e->ctx = ctx;
	e->flags = Flags;
	pthread_mutex_lock(&ctx->mu);
	e->next = ctx->event;
	ctx->event = e;
	pthread_mutex_unlock(&ctx->mu);
	*phEvent = e;
	RET(CUDA_SUCCESS);
}

static CUresult
event_destroy(CUevent h)
{
	CUresult r = ready();
	struct CUevent_st *e;

	if (r == CUDA_SUCCESS)
		r = find_event(h, &e);
	if (r != CUDA_SUCCESS)
		return r;
	/* a record still queued refers to it: it stays until its context goes */
	pthread_mutex_lock(&e->ctx->mu);
	e->destroyed = true;
	r = e->ctx->sticky;
	pthread_mutex_unlock(&e->ctx->mu);
	return r;
}

CUresult
cuEventDestroy(CUevent hEvent)
{
	RET(event_destroy(hEvent));
}

CUresult
cuEventDestroy_v2(CUevent hEvent)
{
	RET(event_destroy(hEvent));
}

CUresult
cuEventRecord(CUevent hEvent, CUstream hStream)
{
	struct CUctx_st *ctx;
	struct CUstream_st *s;
	struct CUevent_st *e;
	struct fcu_op *op;
	CUresult r = cur_ctx(&ctx);

	if (r == CUDA_SUCCESS)
		r = find_event(hEvent, &e);
	if (r == CUDA_SUCCESS)
		r = find_stream(ctx, hStream, &s);
	if (r == CUDA_SUCCESS && s->ctx != e->ctx)
		r = CUDA_ERROR_INVALID_HANDLE;
	if (r == CUDA_SUCCESS && !(op = op_new(FO_EVENT)))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	if (r == CUDA_SUCCESS) {
		op->event = e;
		fcu_enqueue(s, op);
	}
	RET(r);
}

/* query: whether the last record was reached; else wait for it */
static CUresult
event_wait(CUevent h, bool query)
{
	CUresult r = ready();
	struct CUevent_st *e;

	if (r == CUDA_SUCCESS)
		r = find_event(h, &e);
	if (r != CUDA_SUCCESS)
		return r;
	struct CUctx_st *ctx = e->ctx;
	pthread_mutex_lock(&ctx->mu);
	while (!query && e->done < e->enq && ctx->sticky == CUDA_SUCCESS && !ctx->dying)
		pthread_cond_wait(&ctx->cv, &ctx->mu);
	r = ctx->sticky != CUDA_SUCCESS ? ctx->sticky
	    : e->done < e->enq          ? CUDA_ERROR_NOT_READY
	                                : CUDA_SUCCESS;
	pthread_mutex_unlock(&ctx->mu);
	return r;
}

CUresult
cuEventQuery(CUevent hEvent)
{
	RET(event_wait(hEvent, true));
}

CUresult
cuEventSynchronize(CUevent hEvent)
{
	RET(event_wait(hEvent, false));
}

static CUresult
elapsed(float *ms, CUevent hStart, CUevent hEnd)
{
	CUresult r = ready();
	struct CUevent_st *a, *b;

	if (r == CUDA_SUCCESS && !ms)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		r = find_event(hStart, &a);
	if (r == CUDA_SUCCESS)
		r = find_event(hEnd, &b);
	if (r == CUDA_SUCCESS && a->ctx != b->ctx)
		r = CUDA_ERROR_INVALID_HANDLE;
	if (r != CUDA_SUCCESS)
		return r;
	pthread_mutex_lock(&a->ctx->mu);
	if (a->ctx->sticky != CUDA_SUCCESS)
		r = a->ctx->sticky;
	else if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING || !a->enq || !b->enq)
		r = CUDA_ERROR_INVALID_HANDLE;
	else if (a->done < a->enq || b->done < b->enq)
		r = CUDA_ERROR_NOT_READY;
	else
		*ms = (float)((b->t - a->t) * 1e3);
	pthread_mutex_unlock(&a->ctx->mu);
	return r;
}

CUresult
cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	RET(elapsed(pMilliseconds, hStart, hEnd));
}

CUresult
cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	RET(elapsed(pMilliseconds, hStart, hEnd));
}

/* cuGetProcAddress: the newest version of a name not newer than cudaVersion */

static const struct proc {
	const char *name;
	int version;
	void (*fn)(void);
} procs[] = {
#define P(name, version, fn)                      \
	{                                         \
		name, version, (void (*)(void))fn \
	}
	P("cuGetErrorName", 6000, cuGetErrorName),
	P("cuGetErrorString", 6000, cuGetErrorString),
	P("cuInit", 2000, cuInit),
	P("cuDriverGetVersion", 2020, cuDriverGetVersion),
	P("cuDeviceGet", 2000, cuDeviceGet),
	P("cuDeviceGetCount", 2000, cuDeviceGetCount),
	P("cuDeviceGetName", 2000, cuDeviceGetName),
	P("cuDeviceGetUuid", 9020, cuDeviceGetUuid),
	P("cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2),
	P("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2),
	P("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute),
	P("cuDeviceGetPCIBusId", 4010, cuDeviceGetPCIBusId),
	P("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
	P("cuDevicePrimaryCtxRelease", 7000, cuDevicePrimaryCtxRelease),
	P("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
	P("cuCtxCreate", 2000, cuCtxCreate),
	P("cuCtxCreate", 3020, cuCtxCreate_v2),
	P("cuCtxCreate", 11040, cuCtxCreate_v3),
	P("cuCtxCreate", 12050, cuCtxCreate_v4),
	P("cuCtxDestroy", 2000, cuCtxDestroy),
	P("cuCtxDestroy", 4000, cuCtxDestroy_v2),
	P("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
	P("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
	P("cuCtxGetDevice", 2000, cuCtxGetDevice),
	P("cuCtxGetDevice", 13000, cuCtxGetDevice_v2),
	P("cuCtxSynchronize", 2000, cuCtxSynchronize),
	P("cuCtxSynchronize", 13000, cuCtxSynchronize_v2),
	P("cuModuleLoadData", 2000, cuModuleLoadData),
	P("cuModuleLoadDataEx", 2010, cuModuleLoadDataEx),
	P("cuModuleUnload", 2000, cuModuleUnload),
	P("cuModuleGetFunction", 2000, cuModuleGetFunction),
	P("cuLaunchKernel", 4000, cuLaunchKernel),
	P("cuMemGetInfo", 3020, cuMemGetInfo_v2),
	P("cuMemAlloc", 3020, cuMemAlloc_v2),
	P("cuMemFree", 3020, cuMemFree_v2),
	P("cuMemAllocHost", 3020, cuMemAllocHost_v2),
	P("cuMemHostAlloc", 2020, cuMemHostAlloc),
	P("cuMemFreeHost", 2000, cuMemFreeHost),
	P("cuMemHostGetDevicePointer", 3020, cuMemHostGetDevicePointer_v2),
	P("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2),
	P("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2),
	P("cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2),
	P("cuMemcpyHtoDAsync", 3020, cuMemcpyHtoDAsync_v2),
	P("cuMemcpyDtoHAsync", 3020, cuMemcpyDtoHAsync_v2),
	P("cuMemcpyDtoDAsync", 3020, cuMemcpyDtoDAsync_v2),
	P("cuMemsetD8", 3020, cuMemsetD8_v2),
	P("cuMemsetD32", 3020, cuMemsetD32_v2),
	P("cuStreamCreate", 2000, cuStreamCreate),
	P("cuStreamDestroy", 2000, cuStreamDestroy),
	P("cuStreamDestroy", 4000, cuStreamDestroy_v2),
	P("cuStreamQuery", 2000, cuStreamQuery),
	P("cuStreamSynchronize", 2000, cuStreamSynchronize),
	P("cuEventCreate", 2000, cuEventCreate),
	P("cuEventDestroy", 2000, cuEventDestroy),
	P("cuEventDestroy", 4000, cuEventDestroy_v2),
	P("cuEventRecord", 2000, cuEventRecord),
	P("cuEventQuery", 2000, cuEventQuery),
	P("cuEventSynchronize", 2000, cuEventSynchronize),
	P("cuEventElapsedTime", 2000, cuEventElapsedTime),
	P("cuEventElapsedTime", 12080, cuEventElapsedTime_v2),
	P("cuDeviceCanAccessPeer", 4000, cuDeviceCanAccessPeer),
	P("cuDeviceGetP2PAttribute", 8000, cuDeviceGetP2PAttribute),
	P("cuCtxEnablePeerAccess", 4000, cuCtxEnablePeerAccess),
	P("cuCtxDisablePeerAccess", 4000, cuCtxDisablePeerAccess),
	P("cuMemcpyPeer", 4000, cuMemcpyPeer),
	P("cuMemcpyPeerAsync", 4000, cuMemcpyPeerAsync),
	P("cuGetProcAddress", 11030, cuGetProcAddress),
	P("cuGetProcAddress", 12000, cuGetProcAddress_v2),
#undef P
};

static CUresult
proc_address(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
             CUdriverProcAddressQueryResult *status)
{
	const struct proc *best = NULL;
	bool named = false;

	if (!symbol || !pfn || (flags & ~(cuuint64_t)3))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++)
		if (!strcmp(procs[i].name, symbol)) {
			named = true;
			if (procs[i].version <= cudaVersion &&
			    (!best || procs[i].version > best->version))
				best = &procs[i];
		}
	*pfn = NULL;
	if (status)
		*status = best    ? CU_GET_PROC_ADDRESS_SUCCESS
		          : named ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
		                  : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	if (!best)
		return CUDA_ERROR_NOT_FOUND;
	/* POSIX lets a function pointer travel as void * (dlsym does the same) */
	memcpy(pfn, &best->fn, sizeof(*pfn));
	return CUDA_SUCCESS;
}

CUresult
cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	CUresult r = proc_address(symbol, pfn, cudaVersion, flags, NULL);

	fcu_log(__func__, cur_dev(), r, symbol);
	return r;
}

CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                    CUdriverProcAddressQueryResult *symbolStatus)
{
	CUresult r = proc_address(symbol, pfn, cudaVersion, flags, symbolStatus);

	fcu_log(__func__, cur_dev(), r, symbol);
	return r;
}
