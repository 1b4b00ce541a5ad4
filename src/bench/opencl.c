/*
 * The OpenCL side of bench matmul (bench/opencl.h): the ICD loader through
 * dlopen, its devices, and the naive and tiled kernels built from OpenCL C
 * source at run time. The ABI below is written from the Khronos OpenCL 1.2
 * specification (cl.h's types, constants and prototypes), so the build
 * needs no OpenCL header.
 */
#include "bench/opencl.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/err.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

/* cl.h: the types */
typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef cl_ulong cl_bitfield;
typedef cl_bitfield cl_device_type;
typedef struct _cl_platform_id *cl_platform_id;
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_program *cl_program;
typedef struct _cl_kernel *cl_kernel;
typedef struct _cl_event *cl_event;

/* cl.h: the constants used */
#define CL_SUCCESS                    0
#define CL_TRUE                       1
#define CL_DEVICE_TYPE_CPU            (1 << 1)
#define CL_DEVICE_TYPE_GPU            (1 << 2)
#define CL_DEVICE_TYPE_ACCELERATOR    (1 << 3)
#define CL_DEVICE_TYPE_ALL            0xFFFFFFFF
#define CL_PLATFORM_NAME              0x0902
#define CL_DEVICE_TYPE                0x1000
#define CL_DEVICE_MAX_COMPUTE_UNITS   0x1002
#define CL_DEVICE_MAX_WORK_GROUP_SIZE 0x1004
#define CL_DEVICE_MAX_CLOCK_FREQUENCY 0x100C
#define CL_DEVICE_MAX_MEM_ALLOC_SIZE  0x1010
#define CL_DEVICE_GLOBAL_MEM_SIZE     0x101F
#define CL_DEVICE_NAME                0x102B
#define CL_DEVICE_VENDOR              0x102C
#define CL_DRIVER_VERSION             0x102D
#define CL_DEVICE_VERSION             0x102F
#define CL_PROGRAM_BUILD_LOG          0x1183
#define CL_KERNEL_WORK_GROUP_SIZE     0x11B0
#define CL_MEM_READ_WRITE             (1 << 0)
#define CL_MEM_WRITE_ONLY             (1 << 1)
#define CL_MEM_READ_ONLY              (1 << 2)
#define CL_BUILD_PROGRAM_FAILURE      -11

#define MAX_PLATFORMS 16
#define MAX_DEVICES   64
#define MAX_LOG       (64 * 1024)

struct bench_cl_sym {
	cl_int (*GetPlatformIDs)(cl_uint, cl_platform_id *, cl_uint *);
	cl_int (*GetPlatformInfo)(cl_platform_id, cl_uint, size_t, void *, size_t *);
	cl_int (*GetDeviceIDs)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *);
	cl_int (*GetDeviceInfo)(cl_device_id, cl_uint, size_t, void *, size_t *);
	cl_context (*CreateContext)(const intptr_t *, cl_uint, const cl_device_id *, void *, void *,
	                            cl_int *);
	cl_command_queue (*CreateCommandQueue)(cl_context, cl_device_id, cl_bitfield, cl_int *);
	cl_program (*CreateProgramWithSource)(cl_context, cl_uint, const char **, const size_t *,
	                                      cl_int *);
	cl_int (*BuildProgram)(cl_program, cl_uint, const cl_device_id *, const char *, void *,
	                       void *);
	cl_int (*GetProgramBuildInfo)(cl_program, cl_device_id, cl_uint, size_t, void *, size_t *);
	cl_kernel (*CreateKernel)(cl_program, const char *, cl_int *);
	cl_int (*GetKernelWorkGroupInfo)(cl_kernel, cl_device_id, cl_uint, size_t, void *,
	                                 size_t *);
	cl_int (*SetKernelArg)(cl_kernel, cl_uint, size_t, const void *);
	cl_mem (*CreateBuffer)(cl_context, cl_bitfield, size_t, void *, cl_int *);
	cl_int (*EnqueueWriteBuffer)(cl_command_queue, cl_mem, cl_uint, size_t, size_t,
	                             const void *, cl_uint, const cl_event *, cl_event *);
	cl_int (*EnqueueReadBuffer)(cl_command_queue, cl_mem, cl_uint, size_t, size_t, void *,
	                            cl_uint, const cl_event *, cl_event *);
	cl_int (*EnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t *,
	                               const size_t *, const size_t *, cl_uint, const cl_event *,
	                               cl_event *);
	cl_int (*Finish)(cl_command_queue);
	cl_int (*ReleaseMemObject)(cl_mem);
	cl_int (*ReleaseKernel)(cl_kernel);
	cl_int (*ReleaseProgram)(cl_program);
	cl_int (*ReleaseCommandQueue)(cl_command_queue);
	cl_int (*ReleaseContext)(cl_context);
};

#define SYM(name)                                               \
	{                                                       \
		"cl" #name, offsetof(struct bench_cl_sym, name) \
	}
static const struct {
	const char *name;
	size_t off;
} syms[] = {
	SYM(GetPlatformIDs),
	SYM(GetPlatformInfo),
	SYM(GetDeviceIDs),
	SYM(GetDeviceInfo),
	SYM(CreateContext),
	SYM(CreateCommandQueue),
	SYM(CreateProgramWithSource),
	SYM(BuildProgram),
	SYM(GetProgramBuildInfo),
	SYM(CreateKernel),
	SYM(GetKernelWorkGroupInfo),
	SYM(SetKernelArg),
	SYM(CreateBuffer),
	SYM(EnqueueWriteBuffer),
	SYM(EnqueueReadBuffer),
	SYM(EnqueueNDRangeKernel),
	SYM(Finish),
	SYM(ReleaseMemObject),
	SYM(ReleaseKernel),
	SYM(ReleaseProgram),
	SYM(ReleaseCommandQueue),
	SYM(ReleaseContext),
};
#undef SYM

/*
 * The kernels. Work-item (0, 1) is column j, row i of C, so neighbouring
 * work-items read neighbouring elements of B and write neighbouring ones of
 * C. The tiled kernel stages TILE x TILE blocks of A and B in local memory,
 * zero-padded past the edge, so N need not be a multiple of TILE.
 */
static const char kernel_src[] =
        "__kernel void mm_naive(const int n, __global const float *a,\n"
        "                       __global const float *b, __global float *c)\n"
        "{\n"
        "	int j = get_global_id(0), i = get_global_id(1);\n"
        "	float s = 0.0f;\n"
        "	if (i >= n || j >= n)\n"
        "		return;\n"
        "	for (int k = 0; k < n; k++)\n"
        "		s += a[i * n + k] * b[k * n + j];\n"
        "	c[i * n + j] = s;\n"
        "}\n"
        "__kernel void mm_tiled(const int n, __global const float *a,\n"
        "                       __global const float *b, __global float *c)\n"
        "{\n"
        "	__local float ta[TILE][TILE], tb[TILE][TILE];\n"
        "	int tx = get_local_id(0), ty = get_local_id(1);\n"
        "	int j = get_group_id(0) * TILE + tx, i = get_group_id(1) * TILE + ty;\n"
        "	float s = 0.0f;\n"
        "	for (int t = 0; t < n; t += TILE) {\n"
        "		ta[ty][tx] = i < n && t + tx < n ? a[i * n + t + tx] : 0.0f;\n"
        "		tb[ty][tx] = t + ty < n && j < n ? b[(t + ty) * n + j] : 0.0f;\n"
        "		barrier(CLK_LOCAL_MEM_FENCE);\n"
        "		for (int k = 0; k < TILE; k++)\n"
        "			s += ta[ty][k] * tb[k][tx];\n"
        "		barrier(CLK_LOCAL_MEM_FENCE);\n"
        "	}\n"
        "	if (i < n && j < n)\n"
        "		c[i * n + j] = s;\n"
        "}\n";

static const char *const kernel_fn[BENCH_CL_NKERNELS] = { "mm_naive", "mm_tiled" };

struct bench_cl_ctx {
	const struct bench_cl_sym *s;
	const struct bench_cl_device *dev;
	cl_context context;
	cl_command_queue queue;
	cl_program program;
	cl_kernel kernel[BENCH_CL_NKERNELS];
	cl_mem a, b, c; /* of bench_cl_load() */
	size_t n;
};

static const struct {
	int code;
	const char *name;
} cl_errors[] = {
	{ 0, "CL_SUCCESS" },
	{ -1, "CL_DEVICE_NOT_FOUND" },
	{ -2, "CL_DEVICE_NOT_AVAILABLE" },
	{ -3, "CL_COMPILER_NOT_AVAILABLE" },
	{ -4, "CL_MEM_OBJECT_ALLOCATION_FAILURE" },
	{ -5, "CL_OUT_OF_RESOURCES" },
	{ -6, "CL_OUT_OF_HOST_MEMORY" },
	{ -7, "CL_PROFILING_INFO_NOT_AVAILABLE" },
	{ -8, "CL_MEM_COPY_OVERLAP" },
	{ -11, "CL_BUILD_PROGRAM_FAILURE" },
	{ -12, "CL_MAP_FAILURE" },
	{ -14, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST" },
	{ -30, "CL_INVALID_VALUE" },
	{ -31, "CL_INVALID_DEVICE_TYPE" },
	{ -32, "CL_INVALID_PLATFORM" },
	{ -33, "CL_INVALID_DEVICE" },
	{ -34, "CL_INVALID_CONTEXT" },
	{ -35, "CL_INVALID_QUEUE_PROPERTIES" },
	{ -36, "CL_INVALID_COMMAND_QUEUE" },
	{ -37, "CL_INVALID_HOST_PTR" },
	{ -38, "CL_INVALID_MEM_OBJECT" },
	{ -42, "CL_INVALID_BINARY" },
	{ -43, "CL_INVALID_BUILD_OPTIONS" },
	{ -44, "CL_INVALID_PROGRAM" },
	{ -45, "CL_INVALID_PROGRAM_EXECUTABLE" },
	{ -46, "CL_INVALID_KERNEL_NAME" },
	{ -47, "CL_INVALID_KERNEL_DEFINITION" },
	{ -48, "CL_INVALID_KERNEL" },
	{ -49, "CL_INVALID_ARG_INDEX" },
	{ -50, "CL_INVALID_ARG_VALUE" },
	{ -51, "CL_INVALID_ARG_SIZE" },
	{ -52, "CL_INVALID_KERNEL_ARGS" },
	{ -53, "CL_INVALID_WORK_DIMENSION" },
	{ -54, "CL_INVALID_WORK_GROUP_SIZE" },
	{ -55, "CL_INVALID_WORK_ITEM_SIZE" },
	{ -56, "CL_INVALID_GLOBAL_OFFSET" },
	{ -57, "CL_INVALID_EVENT_WAIT_LIST" },
	{ -58, "CL_INVALID_EVENT" },
	{ -59, "CL_INVALID_OPERATION" },
	{ -61, "CL_INVALID_BUFFER_SIZE" },
	{ -63, "CL_INVALID_GLOBAL_WORK_SIZE" },
	{ -64, "CL_INVALID_PROPERTY" },
	{ -1001, "CL_PLATFORM_NOT_FOUND_KHR" },
};

const char *
bench_cl_error_name(int code, char *buf, size_t size)
{
	for (size_t i = 0; i < sizeof(cl_errors) / sizeof(cl_errors[0]); i++)
		if (cl_errors[i].code == code)
			return cl_errors[i].name;
	snprintf(buf, size, "CL error %d", code);
	return buf;
}

/* err_set() with "call: CL_NAME (code)" */
static int
cl_fail(struct err *err, const char *call, cl_int code)
{
	char buf[32];

	return err_set(err, code == -4 || code == -5 || code == -6 ? E_BUSY : E_IO, "%s: %s (%d)",
	               call, bench_cl_error_name(code, buf, sizeof(buf)), (int)code);
}

const char *
bench_cl_kernel_name(enum bench_cl_kernel k)
{
	switch (k) {
	case BENCH_CL_NAIVE:
		return "naive";
	case BENCH_CL_TILED:
		return "tiled";
	case BENCH_CL_NKERNELS:
		break;
	}
	return "?";
}

static void
dev_str(const struct bench_cl_sym *s, cl_device_id d, cl_uint what, char *buf, size_t size)
{
	buf[0] = '\0';
	if (s->GetDeviceInfo(d, what, size - 1, buf, NULL) != CL_SUCCESS)
		buf[0] = '\0';
	buf[size - 1] = '\0';
}

static unsigned long long
dev_num(const struct bench_cl_sym *s, cl_device_id d, cl_uint what, size_t width)
{
	cl_ulong l = 0;
	cl_uint u = 0;
	size_t z = 0;
	void *p = width == sizeof(cl_uint) ? (void *)&u
	          : width == sizeof(z)     ? (void *)&z
	                                   : (void *)&l;

	if (s->GetDeviceInfo(d, what, width, p, NULL) != CL_SUCCESS)
		return 0;
	return p == &u ? u : p == &z ? z : l;
}

static void
add_device(struct bench_cl *cl, cl_platform_id p, const char *pname, cl_device_id d,
           cl_device_type type, size_t *alloc)
{
	const struct bench_cl_sym *s = cl->sym;
	struct bench_cl_device *dev;

	ALLOC_GROW(cl->dev, cl->ndev + 1, *alloc);
	dev = &cl->dev[cl->ndev++];
	memset(dev, 0, sizeof(*dev));
	dev->platform_id = p;
	dev->device_id = d;
	str_copy(dev->platform, sizeof(dev->platform), pname);
	dev_str(s, d, CL_DEVICE_NAME, dev->name, sizeof(dev->name));
	dev_str(s, d, CL_DEVICE_VENDOR, dev->vendor, sizeof(dev->vendor));
	dev_str(s, d, CL_DRIVER_VERSION, dev->driver, sizeof(dev->driver));
	dev_str(s, d, CL_DEVICE_VERSION, dev->version, sizeof(dev->version));
	dev->type = type & CL_DEVICE_TYPE_GPU           ? "gpu"
	            : type & CL_DEVICE_TYPE_ACCELERATOR ? "accelerator"
	            : type & CL_DEVICE_TYPE_CPU         ? "cpu"
	                                                : "other";
	dev->compute_units = (unsigned)dev_num(s, d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cl_uint));
	dev->clock_mhz = (unsigned)dev_num(s, d, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof(cl_uint));
	dev->global_mem = dev_num(s, d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(cl_ulong));
	dev->max_alloc = dev_num(s, d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(cl_ulong));
	dev->max_work_group = (size_t)dev_num(s, d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(size_t));
	dev->tile = dev->max_work_group >= 256 ? 16 : 8;
}

int
bench_cl_open(struct bench_cl *cl, const char *path, bool take_cpu)
{
	static struct bench_cl_sym sym;
	const char *lib = path ? path : "libOpenCL.so.1";
	cl_platform_id plat[MAX_PLATFORMS];
	cl_uint np = 0;
	size_t alloc = 0;
	unsigned others = 0;
	cl_int rc;
	Dl_info info;
	char buf[32];

	memset(cl, 0, sizeof(*cl));
	cl->handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!cl->handle) {
		const char *e = dlerror();

		snprintf(cl->reason, sizeof(cl->reason),
		         "no OpenCL: cannot load %s (%s); Debian, Ubuntu: apt install "
		         "ocl-icd-libopencl1 and the GPU's OpenCL driver (mesa-opencl-icd, "
		         "intel-opencl-icd, ROCm's rocm-opencl-runtime, NVIDIA's driver)",
		         lib, e ? e : "not found");
		return -1;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *f = dlsym(cl->handle, syms[i].name);

		if (!f) {
			snprintf(cl->reason, sizeof(cl->reason),
			         "no OpenCL: %s has no %s (not an OpenCL 1.2 ICD loader)", lib,
			         syms[i].name);
			dlclose(cl->handle);
			cl->handle = NULL;
			return -1;
		}
		memcpy((char *)&sym + syms[i].off, &f, sizeof(f));
	}
	cl->sym = &sym;
	cl->loaded = true;
	if (dladdr((void *)sym.GetPlatformIDs, &info) && info.dli_fname) {
		char real[PATH_MAX];

		str_copy(cl->path, sizeof(cl->path),
		         realpath(info.dli_fname, real) ? real : info.dli_fname);
	} else {
		str_copy(cl->path, sizeof(cl->path), lib);
	}
	rc = sym.GetPlatformIDs(MAX_PLATFORMS, plat, &np);
	if (rc != CL_SUCCESS || !np) {
		snprintf(cl->reason, sizeof(cl->reason),
		         "no OpenCL platform: clGetPlatformIDs: %s (%d): the loader %s finds no "
		         "driver in /etc/OpenCL/vendors (Debian, Ubuntu: mesa-opencl-icd, "
		         "intel-opencl-icd, rocm-opencl-runtime, or pocl-opencl-icd for the CPU)",
		         bench_cl_error_name(rc, buf, sizeof(buf)), (int)rc, cl->path);
		return 0;
	}
	if (np > MAX_PLATFORMS)
		np = MAX_PLATFORMS;
	cl->platforms = np;
	for (cl_uint p = 0; p < np; p++) {
		cl_device_id devs[MAX_DEVICES];
		cl_uint nd = 0;
		char pname[128] = "";

		if (sym.GetPlatformInfo(plat[p], CL_PLATFORM_NAME, sizeof(pname) - 1, pname,
		                        NULL) != CL_SUCCESS)
			pname[0] = '\0';
		pname[sizeof(pname) - 1] = '\0';
		if (sym.GetDeviceIDs(plat[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES, devs, &nd) !=
		    CL_SUCCESS)
			continue;
		if (nd > MAX_DEVICES)
			nd = MAX_DEVICES;
		for (cl_uint d = 0; d < nd; d++) {
			cl_device_type type = 0;

			if (sym.GetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof(type), &type, NULL) !=
			    CL_SUCCESS)
				continue;
			if (type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR) ||
			    (take_cpu && type & CL_DEVICE_TYPE_CPU))
				add_device(cl, plat[p], pname, devs[d], type, &alloc);
			else if (type & CL_DEVICE_TYPE_CPU)
				cl->cpu_skipped++;
			else
				others++;
		}
	}
	if (!cl->ndev)
		snprintf(cl->reason, sizeof(cl->reason),
		         "no OpenCL GPU: %u platform%s, %u CPU device%s (skipped: --opencl-cpu "
		         "takes them)%s; the GPU's OpenCL driver may be missing (Debian, Ubuntu: "
		         "mesa-opencl-icd, intel-opencl-icd, rocm-opencl-runtime)",
		         np, np == 1 ? "" : "s", cl->cpu_skipped, cl->cpu_skipped == 1 ? "" : "s",
		         others ? ", and devices of other types" : "");
	return (int)cl->ndev;
}

void
bench_cl_close(struct bench_cl *cl)
{
	/* the loader is not dlclose()d: some drivers keep threads running */
	free(cl->dev);
	cl->dev = NULL;
	cl->ndev = 0;
	cl->loaded = false;
}

struct bench_cl_ctx *
bench_cl_ctx_new(const struct bench_cl *cl, size_t dev, struct err *err, struct strbuf *log)
{
	struct bench_cl_ctx *ctx = xcalloc(1, sizeof(*ctx));
	const struct bench_cl_sym *s = cl->sym;
	cl_device_id d = cl->dev[dev].device_id;
	const char *src = kernel_src;
	char opts[64];
	cl_int rc = CL_SUCCESS;

	ctx->s = s;
	ctx->dev = &cl->dev[dev];
	ctx->context = s->CreateContext(NULL, 1, &d, NULL, NULL, &rc);
	if (!ctx->context) {
		cl_fail(err, "clCreateContext", rc);
		goto fail;
	}
	ctx->queue = s->CreateCommandQueue(ctx->context, d, 0, &rc);
	if (!ctx->queue) {
		cl_fail(err, "clCreateCommandQueue", rc);
		goto fail;
	}
	ctx->program = s->CreateProgramWithSource(ctx->context, 1, &src, NULL, &rc);
	if (!ctx->program) {
		cl_fail(err, "clCreateProgramWithSource", rc);
		goto fail;
	}
	snprintf(opts, sizeof(opts), "-DTILE=%u", ctx->dev->tile);
	rc = s->BuildProgram(ctx->program, 1, &d, opts, NULL, NULL);
	if (rc != CL_SUCCESS) {
		size_t len = 0;

		cl_fail(err, "clBuildProgram", rc);
		if (log && rc == CL_BUILD_PROGRAM_FAILURE &&
		    s->GetProgramBuildInfo(ctx->program, d, CL_PROGRAM_BUILD_LOG, 0, NULL, &len) ==
		            CL_SUCCESS &&
		    len > 1) {
			char *text = xmalloc(len + 1);

			if (s->GetProgramBuildInfo(ctx->program, d, CL_PROGRAM_BUILD_LOG, len, text,
			                           NULL) == CL_SUCCESS) {
				text[len] = '\0';
				strbuf_add(log, text, strnlen(text, MAX_LOG));
			}
			free(text);
		}
		goto fail;
	}
	for (int k = 0; k < BENCH_CL_NKERNELS; k++) {
		size_t wg = 0;

		ctx->kernel[k] = s->CreateKernel(ctx->program, kernel_fn[k], &rc);
		if (!ctx->kernel[k]) {
			cl_fail(err, "clCreateKernel", rc);
			goto fail;
		}
		if (k == BENCH_CL_TILED &&
		    s->GetKernelWorkGroupInfo(ctx->kernel[k], d, CL_KERNEL_WORK_GROUP_SIZE,
		                              sizeof(wg), &wg, NULL) == CL_SUCCESS &&
		    wg < (size_t)ctx->dev->tile * ctx->dev->tile) {
			err_set(err, E_NOTSUP,
			        "the tiled kernel needs work-groups of %u x %u, the device takes %zu",
			        ctx->dev->tile, ctx->dev->tile, wg);
			goto fail;
		}
	}
	return ctx;
fail:
	bench_cl_ctx_free(ctx);
	return NULL;
}

void
bench_cl_ctx_free(struct bench_cl_ctx *ctx)
{
	if (!ctx)
		return;
	bench_cl_unload(ctx);
	for (int k = 0; k < BENCH_CL_NKERNELS; k++)
		if (ctx->kernel[k])
			ctx->s->ReleaseKernel(ctx->kernel[k]);
	if (ctx->program)
		ctx->s->ReleaseProgram(ctx->program);
	if (ctx->queue)
		ctx->s->ReleaseCommandQueue(ctx->queue);
	if (ctx->context)
		ctx->s->ReleaseContext(ctx->context);
	free(ctx);
}

static void
release(const struct bench_cl_sym *s, cl_mem *m)
{
	if (*m)
		s->ReleaseMemObject(*m);
	*m = NULL;
}

/* Make buffers a, b, c of n x n floats and write a and b (blocking). */
static int
buffers(struct bench_cl_ctx *ctx, size_t n, const float *a, const float *b, cl_mem *ma, cl_mem *mb,
        cl_mem *mc, struct err *err)
{
	const struct bench_cl_sym *s = ctx->s;
	size_t bytes = n * n * sizeof(float);
	cl_int rc = CL_SUCCESS;

	*ma = s->CreateBuffer(ctx->context, CL_MEM_READ_ONLY, bytes, NULL, &rc);
	if (*ma)
		*mb = s->CreateBuffer(ctx->context, CL_MEM_READ_ONLY, bytes, NULL, &rc);
	if (*mb)
		*mc = s->CreateBuffer(ctx->context, CL_MEM_WRITE_ONLY, bytes, NULL, &rc);
	if (!*mc)
		return cl_fail(err, "clCreateBuffer", rc);
	rc = s->EnqueueWriteBuffer(ctx->queue, *ma, CL_TRUE, 0, bytes, a, 0, NULL, NULL);
	if (rc == CL_SUCCESS)
		rc = s->EnqueueWriteBuffer(ctx->queue, *mb, CL_TRUE, 0, bytes, b, 0, NULL, NULL);
	if (rc != CL_SUCCESS)
		return cl_fail(err, "clEnqueueWriteBuffer", rc);
	return 0;
}

/* Enqueue kernel k on buffers ma, mb, mc of n x n, and wait for it. */
static int
launch(struct bench_cl_ctx *ctx, enum bench_cl_kernel k, size_t n, cl_mem ma, cl_mem mb, cl_mem mc,
       struct err *err)
{
	const struct bench_cl_sym *s = ctx->s;
	cl_kernel kern = ctx->kernel[k];
	cl_int nn = (cl_int)n, rc;
	size_t t = ctx->dev->tile;
	size_t global[2] = { n, n }, local[2] = { t, t };

	if (k == BENCH_CL_TILED)
		global[0] = global[1] = (n + t - 1) / t * t;
	rc = s->SetKernelArg(kern, 0, sizeof(nn), &nn);
	if (rc == CL_SUCCESS)
		rc = s->SetKernelArg(kern, 1, sizeof(ma), &ma);
	if (rc == CL_SUCCESS)
		rc = s->SetKernelArg(kern, 2, sizeof(mb), &mb);
	if (rc == CL_SUCCESS)
		rc = s->SetKernelArg(kern, 3, sizeof(mc), &mc);
	if (rc != CL_SUCCESS)
		return cl_fail(err, "clSetKernelArg", rc);
	rc = s->EnqueueNDRangeKernel(ctx->queue, kern, 2, NULL, global,
	                             k == BENCH_CL_TILED ? local : NULL, 0, NULL, NULL);
	if (rc != CL_SUCCESS)
		return cl_fail(err, "clEnqueueNDRangeKernel", rc);
	rc = s->Finish(ctx->queue);
	if (rc != CL_SUCCESS)
		return cl_fail(err, "clFinish", rc);
	return 0;
}

int
bench_cl_load(struct bench_cl_ctx *ctx, size_t n, const float *a, const float *b, struct err *err)
{
	bench_cl_unload(ctx);
	if (n > INT_MAX / n) /* the kernels index with int */
		return err_set(err, E_USAGE, "N=%zu is too large for the kernels", n);
	if (buffers(ctx, n, a, b, &ctx->a, &ctx->b, &ctx->c, err) < 0) {
		bench_cl_unload(ctx);
		return -1;
	}
	ctx->n = n;
	return 0;
}

double
bench_cl_run_kernel(struct bench_cl_ctx *ctx, enum bench_cl_kernel k, struct err *err)
{
	double t0 = clock_mono();

	if (launch(ctx, k, ctx->n, ctx->a, ctx->b, ctx->c, err) < 0)
		return -1;
	return clock_mono() - t0;
}

int
bench_cl_read(struct bench_cl_ctx *ctx, float *c, struct err *err)
{
	cl_int rc = ctx->s->EnqueueReadBuffer(ctx->queue, ctx->c, CL_TRUE, 0,
	                                      ctx->n * ctx->n * sizeof(float), c, 0, NULL, NULL);

	if (rc != CL_SUCCESS)
		return cl_fail(err, "clEnqueueReadBuffer", rc);
	return 0;
}

void
bench_cl_unload(struct bench_cl_ctx *ctx)
{
	release(ctx->s, &ctx->a);
	release(ctx->s, &ctx->b);
	release(ctx->s, &ctx->c);
	ctx->n = 0;
}

double
bench_cl_run_e2e(struct bench_cl_ctx *ctx, enum bench_cl_kernel k, size_t n, const float *a,
                 const float *b, float *c, struct err *err)
{
	const struct bench_cl_sym *s = ctx->s;
	cl_mem ma = NULL, mb = NULL, mc = NULL;
	double t0 = clock_mono(), t = -1;
	cl_int rc;

	if (n > INT_MAX / n) {
		err_set(err, E_USAGE, "N=%zu is too large for the kernels", n);
		return -1;
	}
	if (buffers(ctx, n, a, b, &ma, &mb, &mc, err) < 0 || launch(ctx, k, n, ma, mb, mc, err) < 0)
		goto out;
	rc = s->EnqueueReadBuffer(ctx->queue, mc, CL_TRUE, 0, n * n * sizeof(float), c, 0, NULL,
	                          NULL);
	if (rc != CL_SUCCESS) {
		cl_fail(err, "clEnqueueReadBuffer", rc);
		goto out;
	}
	release(s, &ma);
	release(s, &mb);
	release(s, &mc);
	t = clock_mono() - t0;
out:
	release(s, &ma);
	release(s, &mb);
	release(s, &mc);
	return t;
}
