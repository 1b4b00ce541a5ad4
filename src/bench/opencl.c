/*
 * The OpenCL backend of bench/dev.h (bench/opencl.h): the ICD loader
 * through dlopen, its devices, and dev.h's kernels built from OpenCL C
 * source at run time. The ABI below is written from the Khronos OpenCL 1.2
 * specification (cl.h's types, constants and prototypes), so the build
 * needs no OpenCL header.
 */
#include "bench/opencl.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/dev.h"
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
#define CL_BUILD_PROGRAM_FAILURE      -11
/* the constants of bench/dev.h's backend (cl.h, cl_ext.h) */
#define CL_MISALIGNED_SUB_BUFFER_OFFSET                       -13
#define CL_COMPLETE                                           0
#define CL_DEVICE_MEM_BASE_ADDR_ALIGN                         0x1019
#define CL_DEVICE_GLOBAL_MEM_CACHE_SIZE                       0x101E
#define CL_DEVICE_ENDIAN_LITTLE                               0x1026
#define CL_DEVICE_EXTENSIONS                                  0x1030
#define CL_DEVICE_DOUBLE_FP_CONFIG                            0x1032
#define CL_DEVICE_VENDOR_ID                                   0x1001
#define CL_DEVICE_UUID_KHR                                    0x106A
#define CL_DEVICE_INTEGER_DOT_PRODUCT_CAPABILITIES_KHR        0x1073
#define CL_DEVICE_INTEGER_DOT_PRODUCT_INPUT_4x8BIT_PACKED_KHR (1 << 0)
#define CL_DEVICE_PCI_BUS_ID_NV                               0x4008
#define CL_DEVICE_PCI_SLOT_ID_NV                              0x4009
#define CL_DEVICE_PCI_DOMAIN_ID_NV                            0x400A
#define CL_DEVICE_TOPOLOGY_AMD                                0x4037
#define CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD                      1
#define CL_DEVICE_GLOBAL_FREE_MEMORY_AMD                      0x4039
#define CL_DEVICE_PCI_BUS_INFO_KHR                            0x410F
#define CL_EVENT_COMMAND_EXECUTION_STATUS                     0x11D3
#define CL_PROFILING_COMMAND_START                            0x1282
#define CL_PROFILING_COMMAND_END                              0x1283
#define CL_QUEUE_PROFILING_ENABLE                             (1 << 1)
#define CL_MEM_ALLOC_HOST_PTR                                 (1 << 4)
#define CL_MAP_READ                                           (1 << 0)
#define CL_MAP_WRITE                                          (1 << 1)
#define CL_BUFFER_CREATE_TYPE_REGION                          0x1220
#define CL_FALSE                                              0

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
	cl_int (*ReleaseMemObject)(cl_mem);
	cl_int (*ReleaseKernel)(cl_kernel);
	cl_int (*ReleaseProgram)(cl_program);
	cl_int (*ReleaseCommandQueue)(cl_command_queue);
	cl_int (*ReleaseContext)(cl_context);
	/* bench/dev.h's backend (OpenCL 1.2) */
	cl_mem (*CreateSubBuffer)(cl_mem, cl_bitfield, cl_uint, const void *, cl_int *);
	cl_int (*EnqueueCopyBuffer)(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t,
	                            cl_uint, const cl_event *, cl_event *);
	void *(*EnqueueMapBuffer)(cl_command_queue, cl_mem, cl_uint, cl_bitfield, size_t, size_t,
	                          cl_uint, const cl_event *, cl_event *, cl_int *);
	cl_int (*EnqueueUnmapMemObject)(cl_command_queue, cl_mem, void *, cl_uint, const cl_event *,
	                                cl_event *);
	cl_int (*EnqueueMarkerWithWaitList)(cl_command_queue, cl_uint, const cl_event *,
	                                    cl_event *);
	cl_int (*Flush)(cl_command_queue);
	cl_int (*GetEventInfo)(cl_event, cl_uint, size_t, void *, size_t *);
	cl_int (*GetEventProfilingInfo)(cl_event, cl_uint, size_t, void *, size_t *);
	cl_int (*ReleaseEvent)(cl_event);
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
	SYM(ReleaseMemObject),
	SYM(ReleaseKernel),
	SYM(ReleaseProgram),
	SYM(ReleaseCommandQueue),
	SYM(ReleaseContext),
	SYM(CreateSubBuffer),
	SYM(EnqueueCopyBuffer),
	SYM(EnqueueMapBuffer),
	SYM(EnqueueUnmapMemObject),
	SYM(EnqueueMarkerWithWaitList),
	SYM(Flush),
	SYM(GetEventInfo),
	SYM(GetEventProfilingInfo),
	SYM(ReleaseEvent),
};
#undef SYM

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
	{ -13, "CL_MISALIGNED_SUB_BUFFER_OFFSET" },
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

/*
 * bench/dev.h on OpenCL. The kernels below are dev.h's set written in
 * OpenCL C, one source built twice: the main program (f64 kernels with
 * -DGS_FP64, the i8 dot product with -DGS_DOT8) and, where the device has
 * cl_khr_fp16, a second program of the half2 chain alone (-DGS_F16), so
 * that a device whose half support fails to build still runs the rest.
 * Built without -cl-fast-relaxed-math and -cl-mad-enable, and with
 * FP_CONTRACT off (OpenCL C's default is on), so that fma() is the one
 * fused rounding of a step and every other operation is IEEE, as dev.h's
 * host checks assume. GS_ATOM64 says how gs_mem_check takes the lowest bad
 * index: 2 atom_min (cl_khr_int64_extended_atomics), 1 a compare-and-swap
 * loop (cl_khr_int64_base_atomics), 0 a 32-bit atomic_min on the low word
 * (launch refuses n of 2^32 words or more then); GS_LE the device's byte
 * order for that low word.
 */
static const char dev_src[] =
        "#pragma OPENCL FP_CONTRACT OFF\n"
        "#define GS for (ulong i = get_global_id(0); i < n; i += get_global_size(0))\n"
        "#ifdef GS_FP64\n"
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
        "#endif\n"
        "#if GS_ATOM64 >= 1\n"
        "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n"
        "#endif\n"
        "#if GS_ATOM64 >= 2\n"
        "#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable\n"
        "#endif\n"
        "#ifndef GS_F16\n"
        "__kernel void gs_empty(int unused)\n"
        "{\n"
        "}\n"
        "__kernel void gs_stream_init(__global float *a, __global float *b, __global float *c,\n"
        "                             float va, float vb, float vc, ulong n)\n"
        "{\n"
        "	GS {\n"
        "		a[i] = va;\n"
        "		b[i] = vb;\n"
        "		c[i] = vc;\n"
        "	}\n"
        "}\n"
        "__kernel void gs_stream_copy(__global const float *a, __global float *c, ulong n)\n"
        "{\n"
        "	GS c[i] = a[i];\n"
        "}\n"
        "__kernel void gs_stream_mul(__global float *b, __global const float *c, float s,\n"
        "                            ulong n)\n"
        "{\n"
        "	GS b[i] = s * c[i];\n"
        "}\n"
        "__kernel void gs_stream_add(__global const float *a, __global const float *b,\n"
        "                            __global float *c, ulong n)\n"
        "{\n"
        "	GS c[i] = a[i] + b[i];\n"
        "}\n"
        "__kernel void gs_stream_triad(__global float *a, __global const float *b,\n"
        "                              __global const float *c, float s, ulong n)\n"
        "{\n"
        "	GS a[i] = b[i] + s * c[i];\n"
        "}\n"
        /* each work-item sums its elements, the block halves its sums in local memory */
        "__kernel __attribute__((reqd_work_group_size(DOT_BLOCK, 1, 1)))\n"
        "void gs_stream_dot(__global const float *a, __global const float *b,\n"
        "                   __global float *partial, ulong n)\n"
        "{\n"
        "	__local float l[DOT_BLOCK];\n"
        "	uint t = get_local_id(0);\n"
        "	float s = 0.0f;\n"
        "	GS s += a[i] * b[i];\n"
        "	l[t] = s;\n"
        "	for (uint h = DOT_BLOCK / 2; h > 0; h /= 2) {\n"
        "		barrier(CLK_LOCAL_MEM_FENCE);\n"
        "		if (t < h)\n"
        "			l[t] += l[t + h];\n"
        "	}\n"
        "	if (t == 0)\n"
        "		partial[get_group_id(0)] = l[0];\n"
        "}\n"
        /* the chains: CHAINS independent x = x * x + c, UNROLL steps of each per iteration */
        "__kernel void gs_fma_f32(__global float *out, float seed, float c, int iters)\n"
        "{\n"
        "	float x[CHAINS], s = 0.0f;\n"
        "#pragma unroll\n"
        "	for (int j = 0; j < CHAINS; j++)\n"
        "		x[j] = seed + (float)j / 64.0f;\n"
        "	for (int it = 0; it < iters; it++) {\n"
        "#pragma unroll\n"
        "		for (int u = 0; u < UNROLL; u++) {\n"
        "#pragma unroll\n"
        "			for (int j = 0; j < CHAINS; j++)\n"
        "				x[j] = fma(x[j], x[j], c);\n"
        "		}\n"
        "	}\n"
        "#pragma unroll\n"
        "	for (int j = 0; j < CHAINS; j++)\n"
        "		s += x[j];\n"
        "	out[get_global_id(0)] = s;\n"
        "}\n"
        /* wrapping 32-bit integers: computed unsigned (signed overflow is undefined) */
        "__kernel void gs_fma_i32(__global float *out, float seed, float c, int iters)\n"
        "{\n"
        "	uint x[CHAINS], k = (uint)(int)(c * 64.0f), s = 0;\n"
        "#pragma unroll\n"
        "	for (int j = 0; j < CHAINS; j++)\n"
        "		x[j] = (uint)((int)(seed * 64.0f) + j);\n"
        "	for (int it = 0; it < iters; it++) {\n"
        "#pragma unroll\n"
        "		for (int u = 0; u < UNROLL; u++) {\n"
        "#pragma unroll\n"
        "			for (int j = 0; j < CHAINS; j++)\n"
        "				x[j] = x[j] * x[j] + k;\n"
        "		}\n"
        "	}\n"
        "#pragma unroll\n"
        "	for (int j = 0; j < CHAINS; j++)\n"
        "		s += x[j];\n"
        "	out[get_global_id(0)] = (float)as_int(s);\n"
        "}\n"
        "#ifdef GS_DOT8\n"
        "__kernel void gs_dp4a_i8(__global float *out, float seed, float c, int iters)\n"
        "{\n"
        "	uint x[CHAINS], s = 0;\n"
        "#pragma unroll\n"
        "	for (int j = 0; j < CHAINS; j++)\n"
        "		x[j] = (uint)((int)(seed * 64.0f) + j);\n"
        "	for (int it = 0; it < iters; it++) {\n"
        "#pragma unroll\n"
        "		for (int u = 0; u < UNROLL; u++) {\n"
        "#pragma unroll\n"
        "			for (int j = 0; j < CHAINS; j++)\n"
        "				x[j] = (uint)dot_4x8packed_ss_int(x[j], 0x01010101u * (uint)(j + 1)) +\n"
        "				       x[j];\n"
        "		}\n"
        "	}\n"
        "#pragma unroll\n"
        "	for (int j = 0; j < CHAINS; j++)\n"
        "		s += x[j];\n"
        "	out[get_global_id(0)] = (float)as_int(s);\n"
        "}\n"
        "#endif\n"
        "__kernel void gs_copy_u4(__global const uint *src, __global uint *dst, ulong n)\n"
        "{\n"
        "	GS ((__global uint4 *)dst)[i] = ((__global const uint4 *)src)[i];\n"
        "}\n"
        /*
         * matmul: work-item (0, 1) is column j, row i of C, so neighbouring
         * work-items read neighbouring elements of B and write neighbouring
         * ones of C; the tiled kernels stage TILE x TILE blocks of A and B in
         * local memory, zero-padded past the edge, so n need not be a multiple
         * of TILE. Indices in ulong: n * n may pass 2^31.
         */
        "__kernel void gs_matmul_naive(__global const float *a, __global const float *b,\n"
        "                              __global float *c, int n)\n"
        "{\n"
        "	int j = get_global_id(0), i = get_global_id(1);\n"
        "	float s = 0.0f;\n"
        "	if (i >= n || j >= n)\n"
        "		return;\n"
        "	for (int k = 0; k < n; k++)\n"
        "		s += a[(ulong)i * n + k] * b[(ulong)k * n + j];\n"
        "	c[(ulong)i * n + j] = s;\n"
        "}\n"
        "#define GS_TILED(NAME, T)                                                          \\\n"
        "__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))                     \\\n"
        "void NAME(__global const T *a, __global const T *b, __global T *c, int n)          \\\n"
        "{                                                                                  \\\n"
        "	__local T ta[TILE][TILE], tb[TILE][TILE];                                  \\\n"
        "	int tx = get_local_id(0), ty = get_local_id(1);                            \\\n"
        "	int j = get_group_id(0) * TILE + tx, i = get_group_id(1) * TILE + ty;      \\\n"
        "	T s = 0;                                                                   \\\n"
        "	for (int t = 0; t < n; t += TILE) {                                        \\\n"
        "		ta[ty][tx] = i < n && t + tx < n ? a[(ulong)i * n + t + tx] : 0;   \\\n"
        "		tb[ty][tx] = t + ty < n && j < n ? b[(ulong)(t + ty) * n + j] : 0; \\\n"
        "		barrier(CLK_LOCAL_MEM_FENCE);                                      \\\n"
        "		for (int k = 0; k < TILE; k++)                                     \\\n"
        "			s += ta[ty][k] * tb[k][tx];                                \\\n"
        "		barrier(CLK_LOCAL_MEM_FENCE);                                      \\\n"
        "	}                                                                          \\\n"
        "	if (i < n && j < n)                                                        \\\n"
        "		c[(ulong)i * n + j] = s;                                           \\\n"
        "}\n"
        "GS_TILED(gs_matmul_tiled, float)\n"
        "__kernel void gs_compare_f32(__global const float *want, __global const float *got,\n"
        "                             ulong n, float tol, __global uint *count)\n"
        "{\n"
        "	GS if (!isfinite(got[i]) || fabs(got[i] - want[i]) > tol)\n"
        "		atomic_inc(count);\n"
        "}\n"
        "#ifdef GS_FP64\n"
        "__kernel void gs_fma_f64(__global float *out, float seed, float c, int iters)\n"
        "{\n"
        "	double x[CHAINS], k = c, s = 0.0;\n"
        "#pragma unroll\n"
        "	for (int j = 0; j < CHAINS; j++)\n"
        "		x[j] = (double)seed + (double)j / 64.0;\n"
        "	for (int it = 0; it < iters; it++) {\n"
        "#pragma unroll\n"
        "		for (int u = 0; u < UNROLL; u++) {\n"
        "#pragma unroll\n"
        "			for (int j = 0; j < CHAINS; j++)\n"
        "				x[j] = fma(x[j], x[j], k);\n"
        "		}\n"
        "	}\n"
        "#pragma unroll\n"
        "	for (int j = 0; j < CHAINS; j++)\n"
        "		s += x[j];\n"
        "	out[get_global_id(0)] = (float)s;\n"
        "}\n"
        "GS_TILED(gs_matmul_tiled_f64, double)\n"
        "__kernel void gs_compare_f64(__global const double *want, __global const double *got,\n"
        "                             ulong n, double tol, __global uint *count)\n"
        "{\n"
        "	GS if (!isfinite(got[i]) || fabs(got[i] - want[i]) > tol)\n"
        "		atomic_inc(count);\n"
        "}\n"
        "#endif\n"
        /* bench_mem_word()'s words */
        "uint gs_word(ulong i, uint pattern, int mode)\n"
        "{\n"
        "	uint x;\n"
        "	if (mode == 1)\n"
        "		return (uint)i ^ pattern;\n"
        "	if (mode != 2)\n"
        "		return pattern;\n"
        "	x = (uint)i * 2654435761u ^ pattern;\n"
        "	x = x ? x : 1u;\n"
        "	x ^= x << 13;\n"
        "	x ^= x >> 17;\n"
        "	x ^= x << 5;\n"
        "	return x;\n"
        "}\n"
        "__kernel void gs_mem_fill(__global uint *p, ulong n, uint pattern, int mode)\n"
        "{\n"
        "	GS p[i] = gs_word(i, pattern, mode);\n"
        "}\n"
        "__kernel void gs_mem_check(__global const uint *p, ulong n, uint pattern, int mode,\n"
        "                           __global uint *count, __global ulong *first)\n"
        "{\n"
        "	GS if (p[i] != gs_word(i, pattern, mode)) {\n"
        "		atomic_inc(count);\n"
        "#if GS_ATOM64 >= 2\n"
        "		atom_min(first, i);\n"
        "#elif GS_ATOM64 == 1\n"
        "		ulong seen = atom_add(first, 0UL);\n"
        "		while (i < seen) {\n"
        "			ulong was = atom_cmpxchg(first, seen, i);\n"
        "			if (was == seen)\n"
        "				break;\n"
        "			seen = was;\n"
        "		}\n"
        "#else\n"
        "		__global uint *w = (__global uint *)first;\n"
        "		atomic_min(&w[GS_LE ? 0 : 1], (uint)i);\n"
        "		atomic_and(&w[GS_LE ? 1 : 0], 0u);\n"
        "#endif\n"
        "	}\n"
        "}\n"
        "#else\n"
        "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
        /* half2: both lanes alike, the low lane stored */
        "__kernel void gs_fma_f16(__global float *out, float seed, float c, int iters)\n"
        "{\n"
        "	half2 x[CHAINS], k = (half2)((half)c), s = (half2)((half)0.0f);\n"
        "#pragma unroll\n"
        "	for (int j = 0; j < CHAINS; j++)\n"
        "		x[j] = (half2)((half)seed + (half)j / (half)64.0f);\n"
        "	for (int it = 0; it < iters; it++) {\n"
        "#pragma unroll\n"
        "		for (int u = 0; u < UNROLL; u++) {\n"
        "#pragma unroll\n"
        "			for (int j = 0; j < CHAINS; j++)\n"
        "				x[j] = fma(x[j], x[j], k);\n"
        "		}\n"
        "	}\n"
        "#pragma unroll\n"
        "	for (int j = 0; j < CHAINS; j++)\n"
        "		s += x[j];\n"
        "	out[get_global_id(0)] = (float)s.x;\n"
        "}\n"
        "#endif\n";

/* The main program's kernels need nothing more, or fp64, or the i8 dot product; f16 has its own. */
enum need { NEED_BASE, NEED_FP64, NEED_DOT8, NEED_F16, NEED_NEVER };

static const struct {
	enum need need;
	const char *args; /* b buffer, l u64, i i32, u u32, f f32, d f64, h host */
} kern_def[BK_NKERNELS] = {
	[BK_EMPTY] = { NEED_BASE, "i" },
	[BK_SPIN] = { NEED_NEVER, "hl" },
	[BK_STREAM_INIT] = { NEED_BASE, "bbbfffl" },
	[BK_STREAM_COPY] = { NEED_BASE, "bbl" },
	[BK_STREAM_MUL] = { NEED_BASE, "bbfl" },
	[BK_STREAM_ADD] = { NEED_BASE, "bbbl" },
	[BK_STREAM_TRIAD] = { NEED_BASE, "bbbfl" },
	[BK_STREAM_DOT] = { NEED_BASE, "bbbl" },
	[BK_FMA_F64] = { NEED_FP64, "bffi" },
	[BK_FMA_F32] = { NEED_BASE, "bffi" },
	[BK_FMA_F16] = { NEED_F16, "bffi" },
	[BK_FMA_BF16] = { NEED_NEVER, "bffi" },
	[BK_FMA_I32] = { NEED_BASE, "bffi" },
	[BK_DP4A_I8] = { NEED_DOT8, "bffi" },
	[BK_MMA_F16] = { NEED_NEVER, "bfi" },
	[BK_MMA_BF16] = { NEED_NEVER, "bfi" },
	[BK_MMA_TF32] = { NEED_NEVER, "bfi" },
	[BK_MMA_I8] = { NEED_NEVER, "bfi" },
	[BK_MMA_FP8] = { NEED_NEVER, "bfi" },
	[BK_COPY_U4] = { NEED_BASE, "bbl" },
	[BK_MATMUL_NAIVE] = { NEED_BASE, "bbbi" },
	[BK_MATMUL_TILED] = { NEED_BASE, "bbbi" },
	[BK_MATMUL_TILED_F64] = { NEED_FP64, "bbbi" },
	[BK_COMPARE_F32] = { NEED_BASE, "bblfb" },
	[BK_COMPARE_F64] = { NEED_FP64, "bbldb" },
	[BK_MEM_FILL] = { NEED_BASE, "blui" },
	[BK_MEM_CHECK] = { NEED_BASE, "bluibb" },
};

#define MAX_ARGS 8

/* bench_cl_test_limits()'s: what later opens take from a device at most */
static int limit_atom64 = 2;
static bool limit_marker_events;

void
bench_cl_test_limits(int max_atom64, bool marker_events)
{
	limit_atom64 = max_atom64 < 0 ? 0 : max_atom64 > 2 ? 2 : max_atom64;
	limit_marker_events = marker_events;
}

/* The loader, shared by the devices of one bench_cl_devs_open(): dlclose()d with the last. */
struct cl_lib {
	struct bench_cl_sym s;
	void *handle;
	int refs;
};

struct cl_buf {
	cl_mem mem; /* NULL: a free slot */
	size_t size;
};

struct cl_host {
	void *p;
	cl_mem mem;
};

struct cl_dev {
	struct cl_lib *lib;
	const struct bench_cl_sym *s;
	cl_device_id id;
	cl_context ctx;
	cl_command_queue q[2];
	cl_program prog[2]; /* the main program, the f16 one */
	cl_kernel kern[BK_NKERNELS];
	size_t align;         /* CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes: sub-buffer origins */
	int atom64;           /* GS_ATOM64 of the build */
	bool marker_profiled; /* false: a gs_empty's event stands in for a marker */
	bool amd_free;        /* CL_DEVICE_GLOBAL_FREE_MEMORY_AMD answers */
	struct cl_buf *buf;   /* handle h is buf[h - 1] */
	size_t nbuf, buf_alloc;
	struct cl_host *host;
	size_t nhost, host_alloc;
	cl_event mark[BENCH_MARKS];
	int state; /* 0, or E_LOST / E_TIMEOUT: nothing more is queued */
	char state_msg[200];
};

static void
lib_unref(struct cl_lib *lib)
{
	/*
	 * The loader itself stays loaded, as bench_cl_close() leaves it: some
	 * drivers keep threads of their own running, and the ICD loader keeps
	 * its platform list for the life of the process (unloaded, that list
	 * would be memory nothing points at any more).
	 */
	if (__atomic_sub_fetch(&lib->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(lib);
}

/* Once lost or timed out, every call gives the first failure again. */
static int
stuck(const struct cl_dev *c, struct err *err)
{
	return err_set(err, c->state, "%s", c->state_msg);
}

static int __attribute__((format(printf, 4, 5)))
fall_over(struct cl_dev *c, int code, struct err *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->state_msg, sizeof(c->state_msg), fmt, ap);
	va_end(ap);
	c->state = code;
	return stuck(c, err);
}

/*
 * Wait for ev by polling its status, never in a blocking driver call, so a
 * hung device cannot hang us: a negative status (the command failed on the
 * device) is E_LOST, no completion by deadline E_TIMEOUT, both for good.
 * The first millisecond is spun for short commands; then sleeps of up to a
 * millisecond.
 */
static int
ev_wait(struct cl_dev *c, cl_event ev, double deadline, const char *what, struct err *err)
{
	double t0 = clock_mono();
	char buf[32];

	for (;;) {
		cl_int st = 0, rc;
		double now;

		rc = c->s->GetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st,
		                        NULL);
		if (rc != CL_SUCCESS)
			return cl_fail(err, "clGetEventInfo", rc);
		if (st == CL_COMPLETE)
			return 0;
		if (st < 0)
			return fall_over(c, E_LOST, err, "%s failed on the device: %s (%d)", what,
			                 bench_cl_error_name(st, buf, sizeof(buf)), (int)st);
		now = clock_mono();
		if (now > deadline)
			return fall_over(c, E_TIMEOUT, err,
			                 "%s: not done after %.3g s (the device may hang)", what,
			                 now - t0);
		if (now - t0 > 1e-3) {
			double w = (now - t0) / 16;
			struct timespec ts = { 0, (long)((w > 1e-3 ? 1e-3 : w) * 1e9) };

			nanosleep(&ts, NULL);
		}
	}
}

static double
deadline_of(const struct bench_dev *d)
{
	return clock_mono() + (d->timeout_s > 0 ? d->timeout_s : 60);
}

/* Flush q and wait for ev on it (released), within d's timeout. */
static int
flush_wait(struct bench_dev *d, cl_command_queue q, cl_event ev, const char *what, struct err *err)
{
	struct cl_dev *c = d->priv;
	cl_int rc = c->s->Flush(q);
	int r;

	if (rc != CL_SUCCESS) {
		c->s->ReleaseEvent(ev);
		return cl_fail(err, "clFlush", rc);
	}
	r = ev_wait(c, ev, deadline_of(d), what, err);
	c->s->ReleaseEvent(ev);
	return r;
}

static int
check_stream(const struct cl_dev *c, int stream, struct err *err)
{
	if (c->state)
		return stuck(c, err);
	if (stream != 0 && stream != 1)
		return err_set(err, E_USAGE, "stream %d: OpenCL devices have streams 0 and 1",
		               stream);
	return 0;
}

static struct cl_buf *
buf_of(struct cl_dev *c, uint64_t h)
{
	return h >= 1 && h <= c->nbuf && c->buf[h - 1].mem ? &c->buf[h - 1] : NULL;
}

static int
bad_buf(uint64_t h, struct err *err)
{
	return err_set(err, E_USAGE, "no OpenCL buffer %llu", (unsigned long long)h);
}

static bool
cl_has(struct bench_dev *d, enum bench_kern k)
{
	struct cl_dev *c = d->priv;

	return (unsigned)k < BK_NKERNELS && c->kern[k];
}

/*
 * OpenCL tells the total only; the AMD extension also tells the free
 * memory (in KiB), so free = total elsewhere.
 */
static int
cl_mem_info(struct bench_dev *d, unsigned long long *free_b, unsigned long long *total,
            struct err *err)
{
	struct cl_dev *c = d->priv;
	size_t kib[2] = { 0, 0 };

	if (c->state)
		return stuck(c, err);
	*total = d->info.mem_total;
	*free_b = d->info.mem_total;
	if (c->amd_free &&
	    c->s->GetDeviceInfo(c->id, CL_DEVICE_GLOBAL_FREE_MEMORY_AMD, sizeof(kib), kib, NULL) ==
	            CL_SUCCESS &&
	    kib[0] && (unsigned long long)kib[0] * 1024 <= *total)
		*free_b = (unsigned long long)kib[0] * 1024;
	return 0;
}

static int
cl_alloc(struct bench_dev *d, size_t bytes, uint64_t *buf, struct err *err)
{
	struct cl_dev *c = d->priv;
	cl_int rc = CL_SUCCESS;
	cl_mem m;
	size_t i;

	if (c->state)
		return stuck(c, err);
	if (!bytes)
		return err_set(err, E_USAGE, "clCreateBuffer: a buffer of 0 bytes");
	m = c->s->CreateBuffer(c->ctx, CL_MEM_READ_WRITE, bytes, NULL, &rc);
	if (!m)
		return cl_fail(err, "clCreateBuffer", rc);
	for (i = 0; i < c->nbuf && c->buf[i].mem; i++)
		;
	if (i == c->nbuf) {
		ALLOC_GROW(c->buf, c->nbuf + 1, c->buf_alloc);
		c->nbuf++;
	}
	c->buf[i].mem = m;
	c->buf[i].size = bytes;
	*buf = i + 1;
	return 0;
}

static void
cl_free(struct bench_dev *d, uint64_t h)
{
	struct cl_dev *c = d->priv;
	struct cl_buf *b = buf_of(c, h);

	if (!b)
		return;
	c->s->ReleaseMemObject(b->mem);
	b->mem = NULL;
	b->size = 0;
}

/*
 * Pinned host memory the OpenCL way: a CL_MEM_ALLOC_HOST_PTR buffer mapped
 * once, the mapping used as the host pointer of copies. Memory mapped into
 * kernels (BA_HOST) is not offered: host_mapped is false.
 */
static int
cl_host_alloc(struct bench_dev *d, size_t bytes, bool mapped, void **p, struct err *err)
{
	struct cl_dev *c = d->priv;
	cl_int rc = CL_SUCCESS;
	cl_event ev = NULL;
	cl_mem m;
	void *ptr;
	int r;

	*p = NULL;
	if (c->state)
		return stuck(c, err);
	if (mapped)
		return err_set(err, E_NOTSUP,
		               "host memory mapped for kernels is not offered on OpenCL devices");
	if (!bytes)
		return err_set(err, E_USAGE, "clCreateBuffer: a host buffer of 0 bytes");
	m = c->s->CreateBuffer(c->ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &rc);
	if (!m)
		return cl_fail(err, "clCreateBuffer", rc);
	ptr = c->s->EnqueueMapBuffer(c->q[0], m, CL_FALSE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0,
	                             NULL, &ev, &rc);
	if (!ptr || !ev) {
		if (ev)
			c->s->ReleaseEvent(ev);
		c->s->ReleaseMemObject(m);
		return cl_fail(err, "clEnqueueMapBuffer", rc);
	}
	r = flush_wait(d, c->q[0], ev, "clEnqueueMapBuffer", err);
	if (r < 0) {
		c->s->ReleaseMemObject(m);
		return r;
	}
	ALLOC_GROW(c->host, c->nhost + 1, c->host_alloc);
	c->host[c->nhost].p = ptr;
	c->host[c->nhost].mem = m;
	c->nhost++;
	*p = ptr;
	return 0;
}

static void
host_release(struct bench_dev *d, struct cl_host *h)
{
	struct cl_dev *c = d->priv;
	cl_event ev = NULL;

	if (!c->state &&
	    c->s->EnqueueUnmapMemObject(c->q[0], h->mem, h->p, 0, NULL, &ev) == CL_SUCCESS && ev)
		flush_wait(d, c->q[0], ev, "clEnqueueUnmapMemObject", NULL);
	c->s->ReleaseMemObject(h->mem);
}

static void
cl_host_free(struct bench_dev *d, void *p)
{
	struct cl_dev *c = d->priv;

	for (size_t i = 0; p && i < c->nhost; i++)
		if (c->host[i].p == p) {
			host_release(d, &c->host[i]);
			c->host[i] = c->host[--c->nhost];
			return;
		}
}

/* buf and [off, off + bytes) in it, or E_USAGE */
static int
buf_range(struct cl_dev *c, uint64_t h, size_t off, size_t bytes, cl_mem *m, struct err *err)
{
	struct cl_buf *b = buf_of(c, h);

	if (!b)
		return bad_buf(h, err);
	if (off > b->size || bytes > b->size - off)
		return err_set(err, E_USAGE, "bytes %zu to %zu are past OpenCL buffer %llu of %zu",
		               off, off + bytes, (unsigned long long)h, b->size);
	*m = b->mem;
	return 0;
}

/* write (to_dev) or read: queued; with sync, waited for by polling its event */
static int
transfer(struct bench_dev *d, int stream, uint64_t buf, size_t off, void *host, size_t bytes,
         bool sync, bool to_dev, struct err *err)
{
	struct cl_dev *c = d->priv;
	const char *call = to_dev ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer";
	cl_event ev = NULL;
	cl_mem m = NULL;
	cl_int rc;
	int r;

	if ((r = check_stream(c, stream, err)) < 0 ||
	    (r = buf_range(c, buf, off, bytes, &m, err)) < 0)
		return r;
	if (!bytes)
		return 0;
	if (!host)
		return err_set(err, E_USAGE, "%s: no host memory", call);
	if (to_dev)
		rc = c->s->EnqueueWriteBuffer(c->q[stream], m, CL_FALSE, off, bytes, host, 0, NULL,
		                              sync ? &ev : NULL);
	else
		rc = c->s->EnqueueReadBuffer(c->q[stream], m, CL_FALSE, off, bytes, host, 0, NULL,
		                             sync ? &ev : NULL);
	if (rc != CL_SUCCESS)
		return cl_fail(err, call, rc);
	return sync ? flush_wait(d, c->q[stream], ev, call, err) : 0;
}

static int
cl_write(struct bench_dev *d, int stream, uint64_t buf, size_t off, const void *host, size_t bytes,
         bool sync, struct err *err)
{
	/* read-only in the write direction; the cast serves the shared helper */
	return transfer(d, stream, buf, off, (void *)(uintptr_t)host, bytes, sync, true, err);
}

static int
cl_read(struct bench_dev *d, int stream, uint64_t buf, size_t off, void *host, size_t bytes,
        bool sync, struct err *err)
{
	return transfer(d, stream, buf, off, host, bytes, sync, false, err);
}

static int
cl_copy(struct bench_dev *d, int stream, uint64_t dst, uint64_t src, size_t bytes, struct err *err)
{
	struct cl_dev *c = d->priv;
	cl_mem md = NULL, ms = NULL;
	cl_int rc;
	int r;

	if ((r = check_stream(c, stream, err)) < 0 ||
	    (r = buf_range(c, dst, 0, bytes, &md, err)) < 0 ||
	    (r = buf_range(c, src, 0, bytes, &ms, err)) < 0)
		return r;
	if (!bytes)
		return 0;
	rc = c->s->EnqueueCopyBuffer(c->q[stream], ms, md, 0, 0, bytes, 0, NULL, NULL);
	if (rc != CL_SUCCESS)
		return cl_fail(err, "clEnqueueCopyBuffer", rc);
	return 0;
}

static const char *
arg_type_name(int t)
{
	switch (t) {
	case 'b':
		return "a buffer";
	case 'l':
		return "u64";
	case 'i':
		return "i32";
	case 'u':
		return "u32";
	case 'f':
		return "f32";
	case 'd':
		return "f64";
	case 'h':
		return "host memory";
	}
	return "?";
}

static int
arg_type_char(enum bench_arg_type t)
{
	static const char c[] = { [BA_BUF] = 'b', [BA_U64] = 'l', [BA_I32] = 'i', [BA_U32] = 'u',
		                  [BA_F32] = 'f', [BA_F64] = 'd', [BA_HOST] = 'h' };

	return (unsigned)t < sizeof(c) ? c[t] : '?';
}

/*
 * A buffer argument; an offset into the buffer becomes a sub-buffer (the
 * kernels' parameter lists are dev.h's, with no room for an offset), which
 * OpenCL allows only at the device's base address alignment.
 */
static int
buf_arg(struct cl_dev *c, enum bench_kern k, unsigned i, const struct bench_arg *a, cl_mem *m,
        cl_mem *sub, struct err *err)
{
	struct cl_buf *b = buf_of(c, a->v.b.buf);
	struct {
		size_t origin, size;
	} region;
	cl_int rc = CL_SUCCESS;

	if (!b)
		return bad_buf(a->v.b.buf, err);
	*m = b->mem;
	if (!a->v.b.off)
		return 0;
	if (a->v.b.off >= b->size)
		return err_set(err, E_USAGE,
		               "%s: argument %u: offset %llu is past buffer %llu of %zu",
		               bench_kern_name(k), i, (unsigned long long)a->v.b.off,
		               (unsigned long long)a->v.b.buf, b->size);
	if (a->v.b.off % c->align)
		return err_set(
		        err, E_USAGE,
		        "%s: argument %u: offset %llu into a buffer is not a multiple of the "
		        "device's base address alignment (%zu bytes), which OpenCL "
		        "sub-buffers need",
		        bench_kern_name(k), i, (unsigned long long)a->v.b.off, c->align);
	region.origin = a->v.b.off;
	region.size = b->size - a->v.b.off;
	*sub = c->s->CreateSubBuffer(b->mem, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &rc);
	if (!*sub)
		return cl_fail(err, "clCreateSubBuffer", rc);
	*m = *sub;
	return 0;
}

static int
set_args(struct cl_dev *c, enum bench_kern k, const struct bench_arg *args, unsigned nargs,
         cl_mem *subs, struct err *err)
{
	const char *sig = kern_def[k].args;
	cl_kernel kern = c->kern[k];

	if (nargs != strlen(sig) || (nargs && !args))
		return err_set(err, E_USAGE, "%s takes %zu arguments, not %u", bench_kern_name(k),
		               strlen(sig), nargs);
	for (unsigned i = 0; i < nargs; i++) {
		const struct bench_arg *a = &args[i];
		int t = arg_type_char(a->type);
		int r;
		cl_int rc = CL_SUCCESS;
		cl_mem m = NULL;
		cl_ulong l;
		cl_int n;
		cl_uint u;
		float f;
		double g;

		if (t == 'h')
			return err_set(
			        err, E_NOTSUP,
			        "%s: host memory mapped for kernels is not offered on OpenCL "
			        "devices",
			        bench_kern_name(k));
		if (t != sig[i])
			return err_set(err, E_USAGE, "%s: argument %u is %s, not %s",
			               bench_kern_name(k), i, arg_type_name(sig[i]),
			               arg_type_name(t));
		switch (t) {
		case 'b':
			r = buf_arg(c, k, i, a, &m, &subs[i], err);
			if (r < 0)
				return r;
			rc = c->s->SetKernelArg(kern, i, sizeof(m), &m);
			break;
		case 'l':
			l = a->v.u64;
			rc = c->s->SetKernelArg(kern, i, sizeof(l), &l);
			break;
		case 'i':
			n = a->v.i32;
			rc = c->s->SetKernelArg(kern, i, sizeof(n), &n);
			break;
		case 'u':
			u = a->v.u32;
			rc = c->s->SetKernelArg(kern, i, sizeof(u), &u);
			break;
		case 'f':
			f = a->v.f32;
			rc = c->s->SetKernelArg(kern, i, sizeof(f), &f);
			break;
		case 'd':
			g = a->v.f64;
			rc = c->s->SetKernelArg(kern, i, sizeof(g), &g);
			break;
		}
		if (rc != CL_SUCCESS)
			return cl_fail(err, "clSetKernelArg", rc);
	}
	return 0;
}

static int
cl_launch(struct bench_dev *d, int stream, enum bench_kern k, const unsigned grid[2],
          const unsigned block[2], const struct bench_arg *args, unsigned nargs, struct err *err)
{
	struct cl_dev *c = d->priv;
	cl_mem subs[MAX_ARGS] = { NULL };
	size_t global[2], local[2];
	cl_int rc;
	int r = check_stream(c, stream, err);

	if (r < 0)
		return r;
	if (!cl_has(d, k))
		return err_set(err, E_NOTSUP, "%s is not offered on this OpenCL device",
		               bench_kern_name(k));
	if (!grid || !block || !grid[0] || !grid[1] || !block[0] || !block[1])
		return err_set(err, E_USAGE, "%s: an empty launch", bench_kern_name(k));
	if ((size_t)block[0] * block[1] > d->info.max_block)
		return err_set(err, E_USAGE,
		               "%s: blocks of %u x %u, the device takes %zu work-items",
		               bench_kern_name(k), block[0], block[1], d->info.max_block);
	/* without 64-bit atomics *first is taken as a 32-bit index (the source's GS_ATOM64 0) */
	if (k == BK_MEM_CHECK && !c->atom64 && args && nargs > 1 && args[1].type == BA_U64 &&
	    args[1].v.u64 > UINT32_MAX)
		return err_set(err, E_NOTSUP,
		               "gs_mem_check: %llu words, and the device has no 64-bit atomics "
		               "for indices past 2^32",
		               (unsigned long long)args[1].v.u64);
	r = set_args(c, k, args, nargs, subs, err);
	if (r < 0)
		goto out;
	global[0] = (size_t)grid[0] * block[0];
	global[1] = (size_t)grid[1] * block[1];
	local[0] = block[0];
	local[1] = block[1];
	rc = c->s->EnqueueNDRangeKernel(c->q[stream], c->kern[k], 2, NULL, global, local, 0, NULL,
	                                NULL);
	r = rc == CL_SUCCESS ? 0 : cl_fail(err, "clEnqueueNDRangeKernel", rc);
out:
	/* a command holds its memory objects until it is done */
	for (unsigned i = 0; i < MAX_ARGS; i++)
		if (subs[i])
			c->s->ReleaseMemObject(subs[i]);
	return r;
}

/* A gs_empty of one work-item whose event stands in for a marker. */
static cl_int
empty_event(struct cl_dev *c, cl_command_queue q, cl_event *ev)
{
	static const size_t one[2] = { 1, 1 };
	cl_int zero = 0, rc = c->s->SetKernelArg(c->kern[BK_EMPTY], 0, sizeof(zero), &zero);

	if (rc != CL_SUCCESS)
		return rc;
	return c->s->EnqueueNDRangeKernel(q, c->kern[BK_EMPTY], 2, NULL, one, one, 0, NULL, ev);
}

static int
cl_mark(struct bench_dev *d, int stream, unsigned slot, struct err *err)
{
	struct cl_dev *c = d->priv;
	cl_event ev = NULL;
	cl_int rc;
	int r = check_stream(c, stream, err);

	if (r < 0)
		return r;
	if (slot >= BENCH_MARKS)
		return err_set(err, E_USAGE, "marker %u: slots are 0 to %d", slot, BENCH_MARKS - 1);
	if (c->marker_profiled)
		rc = c->s->EnqueueMarkerWithWaitList(c->q[stream], 0, NULL, &ev);
	else
		rc = empty_event(c, c->q[stream], &ev);
	if (rc != CL_SUCCESS || !ev)
		return cl_fail(err,
		               c->marker_profiled ? "clEnqueueMarkerWithWaitList"
		                                  : "clEnqueueNDRangeKernel",
		               rc);
	if (c->mark[slot])
		c->s->ReleaseEvent(c->mark[slot]);
	c->mark[slot] = ev;
	return 0;
}

static int
cl_elapsed(struct bench_dev *d, unsigned a, unsigned b, double *seconds, struct err *err)
{
	struct cl_dev *c = d->priv;
	/* a gs_empty's event: from the end of a's to the start of b's (what lies between) */
	cl_uint end = CL_PROFILING_COMMAND_END;
	cl_uint start = c->marker_profiled ? CL_PROFILING_COMMAND_END : CL_PROFILING_COMMAND_START;
	double deadline = deadline_of(d);
	cl_ulong ta = 0, tb = 0;
	cl_int rc;
	int r;

	*seconds = 0;
	if (c->state)
		return stuck(c, err);
	if (a >= BENCH_MARKS || b >= BENCH_MARKS || !c->mark[a] || !c->mark[b])
		return err_set(err, E_USAGE, "markers %u and %u: not both queued", a, b);
	for (int q = 0; q < 2; q++) {
		rc = c->s->Flush(c->q[q]);
		if (rc != CL_SUCCESS)
			return cl_fail(err, "clFlush", rc);
	}
	if ((r = ev_wait(c, c->mark[a], deadline, "a marker", err)) < 0 ||
	    (r = ev_wait(c, c->mark[b], deadline, "a marker", err)) < 0)
		return r;
	rc = c->s->GetEventProfilingInfo(c->mark[a], end, sizeof(ta), &ta, NULL);
	if (rc == CL_SUCCESS)
		rc = c->s->GetEventProfilingInfo(c->mark[b], start, sizeof(tb), &tb, NULL);
	if (rc != CL_SUCCESS)
		return cl_fail(err, "clGetEventProfilingInfo", rc);
	*seconds = (double)(int64_t)(tb - ta) * 1e-9;
	return 0;
}

static int
cl_sync(struct bench_dev *d, int stream, struct err *err)
{
	struct cl_dev *c = d->priv;
	int r;

	if (stream != -1 && (r = check_stream(c, stream, err)) < 0)
		return r;
	if (c->state)
		return stuck(c, err);
	for (int q = 0; q < 2; q++) {
		cl_event ev = NULL;
		cl_int rc;

		if (stream != -1 && q != stream)
			continue;
		rc = c->s->EnqueueMarkerWithWaitList(c->q[q], 0, NULL, &ev);
		if (rc != CL_SUCCESS || !ev)
			return cl_fail(err, "clEnqueueMarkerWithWaitList", rc);
		r = flush_wait(d, c->q[q], ev, q ? "stream 1" : "stream 0", err);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Whether a device that timed out has since finished its queues (it was
 * slow, not hung): a marker on each, given a second.
 */
static bool
drained(struct cl_dev *c)
{
	double deadline = clock_mono() + 1;

	for (int q = 0; q < 2; q++) {
		cl_event ev = NULL;
		bool done;

		if (!c->q[q])
			continue;
		if (c->s->EnqueueMarkerWithWaitList(c->q[q], 0, NULL, &ev) != CL_SUCCESS || !ev)
			return false;
		done = c->s->Flush(c->q[q]) == CL_SUCCESS &&
		       ev_wait(c, ev, deadline, "a marker", NULL) == 0;
		c->s->ReleaseEvent(ev);
		if (!done)
			return false;
	}
	return true;
}

/*
 * After a timeout the queues may still hold hung commands, and releasing
 * them or the context may wait for those: unless they have drained since,
 * they are left, and so is the loader.
 */
static void
cl_close(struct bench_dev *d)
{
	struct cl_dev *c = d->priv;
	bool hung = c->state == E_TIMEOUT && !drained(c);

	for (unsigned i = 0; i < BENCH_MARKS; i++)
		if (c->mark[i])
			c->s->ReleaseEvent(c->mark[i]);
	for (size_t i = 0; i < c->nhost; i++)
		host_release(d, &c->host[i]);
	for (size_t i = 0; i < c->nbuf; i++)
		if (c->buf[i].mem)
			c->s->ReleaseMemObject(c->buf[i].mem);
	for (int k = 0; k < BK_NKERNELS; k++)
		if (c->kern[k])
			c->s->ReleaseKernel(c->kern[k]);
	for (int p = 0; p < 2; p++)
		if (c->prog[p])
			c->s->ReleaseProgram(c->prog[p]);
	for (int q = 0; q < 2 && !hung; q++)
		if (c->q[q])
			c->s->ReleaseCommandQueue(c->q[q]);
	if (c->ctx && !hung)
		c->s->ReleaseContext(c->ctx);
	lib_unref(c->lib);
	free(c->buf);
	free(c->host);
	free(c);
	free(d);
}

static const struct bench_dev_ops cl_ops = {
	.has = cl_has,
	.mem_info = cl_mem_info,
	.alloc = cl_alloc,
	.free = cl_free,
	.host_alloc = cl_host_alloc,
	.host_free = cl_host_free,
	.write = cl_write,
	.read = cl_read,
	.copy = cl_copy,
	.launch = cl_launch,
	.mark = cl_mark,
	.elapsed = cl_elapsed,
	.sync = cl_sync,
	.close = cl_close,
};

/* hex digits at *s up to max, and the character after them is sep; advances *s */
static bool
hex_field(const char **s, unsigned max, char sep, unsigned *v)
{
	const char *p = *s;
	unsigned long x = 0;
	int n = 0;

	for (; n < 9 && ((*p >= '0' && *p <= '9') || ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f'));
	     p++, n++)
		x = x * 16 + (unsigned long)(*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);
	if (!n || n > 8 || x > max || *p != sep)
		return false;
	*v = (unsigned)x;
	*s = sep ? p + 1 : p;
	return true;
}

/* "[domain:]bus:device.function" in hex, the whole string */
static bool
parse_pci(const char *s, unsigned v[4])
{
	const char *p = s;

	if (!s || !*s)
		return false;
	v[0] = 0;
	if (strchr(s, ':') != strrchr(s, ':') && !hex_field(&p, UINT_MAX, ':', &v[0]))
		return false;
	return hex_field(&p, 0xff, ':', &v[1]) && hex_field(&p, 0x1f, '.', &v[2]) &&
	       hex_field(&p, 7, '\0', &v[3]);
}

bool
bench_cl_pci_listed(const char *pci, const char *const *skip)
{
	unsigned a[4], b[4];

	if (!skip || !parse_pci(pci, a))
		return false;
	for (; *skip; skip++)
		if (parse_pci(*skip, b) && !memcmp(a, b, sizeof(a)))
			return true;
	return false;
}

void
bench_cl_uuid_str(const unsigned char uuid[16], bool nvidia, char *buf, size_t size)
{
	static const unsigned char zero[16];

	if (!size)
		return;
	buf[0] = '\0';
	if (!nvidia || !memcmp(uuid, zero, sizeof(zero)))
		return;
	snprintf(buf, size,
	         "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
	         uuid[0], uuid[1], uuid[2], uuid[3], uuid[4], uuid[5], uuid[6], uuid[7], uuid[8],
	         uuid[9], uuid[10], uuid[11], uuid[12], uuid[13], uuid[14], uuid[15]);
}

/* CL_DEVICE_EXTENSIONS, allocated ("" when not told) */
static char *
dev_exts(const struct bench_cl_sym *s, cl_device_id d)
{
	size_t len = 0;
	char *e;

	if (s->GetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &len) != CL_SUCCESS || !len ||
	    len > MAX_LOG)
		return xstrdup("");
	e = xmalloc(len + 1);
	if (s->GetDeviceInfo(d, CL_DEVICE_EXTENSIONS, len, e, NULL) != CL_SUCCESS)
		len = 0;
	e[len] = '\0';
	return e;
}

/* whether the space-separated list exts has name */
static bool
has_ext(const char *exts, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = exts; (p = strstr(p, name)); p += n)
		if ((p == exts || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
	return false;
}

/* The PCI bus id from whichever extension tells it, or "". */
static void
pci_of(const struct bench_cl_sym *s, cl_device_id d, const char *exts, char *buf, size_t size)
{
	cl_uint v[4] = { 0, 0, 0, 0 }, bus = 0, slot = 0, dom = 0;
	union {
		struct {
			cl_uint type;
			cl_uint data[5];
		} raw;
		struct {
			cl_uint type;
			char unused[17];
			char bus, device, function;
		} pcie;
	} topo;

	buf[0] = '\0';
	if (has_ext(exts, "cl_khr_pci_bus_info") &&
	    s->GetDeviceInfo(d, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof(v), v, NULL) == CL_SUCCESS) {
		snprintf(buf, size, "%04x:%02x:%02x.%x", v[0], v[1], v[2], v[3]);
	} else if (has_ext(exts, "cl_nv_device_attribute_query") &&
	           s->GetDeviceInfo(d, CL_DEVICE_PCI_BUS_ID_NV, sizeof(bus), &bus, NULL) ==
	                   CL_SUCCESS &&
	           s->GetDeviceInfo(d, CL_DEVICE_PCI_SLOT_ID_NV, sizeof(slot), &slot, NULL) ==
	                   CL_SUCCESS) {
		/* the slot id is device << 3 | function; older drivers lack the domain query */
		if (s->GetDeviceInfo(d, CL_DEVICE_PCI_DOMAIN_ID_NV, sizeof(dom), &dom, NULL) !=
		    CL_SUCCESS)
			dom = 0;
		snprintf(buf, size, "%04x:%02x:%02x.%x", dom, bus & 0xff, (slot >> 3) & 0x1f,
		         slot & 7);
	} else if (has_ext(exts, "cl_amd_device_attribute_query") &&
	           s->GetDeviceInfo(d, CL_DEVICE_TOPOLOGY_AMD, sizeof(topo), &topo, NULL) ==
	                   CL_SUCCESS &&
	           topo.raw.type == CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD) {
		/* AMD's topology has no domain */
		snprintf(buf, size, "0000:%02x:%02x.%x", (unsigned char)topo.pcie.bus,
		         (unsigned char)topo.pcie.device, (unsigned char)topo.pcie.function);
	}
}

/*
 * Build dev_src as program which (0 main, 1 f16) with opts. 0, or -1 with
 * err naming the call (and the log's first line for a failed build).
 */
static int
build(struct cl_dev *c, int which, const char *opts, struct err *err)
{
	const struct bench_cl_sym *s = c->s;
	const char *src = dev_src;
	cl_int rc = CL_SUCCESS;
	char log[160] = "", buf[32];
	size_t len = 0;

	c->prog[which] = s->CreateProgramWithSource(c->ctx, 1, &src, NULL, &rc);
	if (!c->prog[which])
		return cl_fail(err, "clCreateProgramWithSource", rc);
	rc = s->BuildProgram(c->prog[which], 1, &c->id, opts, NULL, NULL);
	if (rc == CL_SUCCESS)
		return 0;
	if (s->GetProgramBuildInfo(c->prog[which], c->id, CL_PROGRAM_BUILD_LOG, 0, NULL, &len) ==
	            CL_SUCCESS &&
	    len > 1 && len <= MAX_LOG) {
		char *text = xmalloc(len + 1);

		if (s->GetProgramBuildInfo(c->prog[which], c->id, CL_PROGRAM_BUILD_LOG, len, text,
		                           NULL) == CL_SUCCESS) {
			const char *p = text;

			text[len] = '\0';
			while (*p == '\n' || *p == ' ')
				p++;
			snprintf(log, sizeof(log), ": %.*s", (int)strcspn(p, "\n"), p);
		}
		free(text);
	}
	s->ReleaseProgram(c->prog[which]);
	c->prog[which] = NULL;
	return err_set(err, E_IO, "clBuildProgram: %s (%d)%s",
	               bench_cl_error_name(rc, buf, sizeof(buf)), (int)rc, log);
}

/* The kernels whose needs the built programs meet, each checked for the block it takes. */
static void
make_kernels(struct cl_dev *c, bool fp64, bool dot8)
{
	for (int k = 0; k < BK_NKERNELS; k++) {
		enum need n = kern_def[k].need;
		size_t need_wg = k == BK_STREAM_DOT ? BENCH_DOT_BLOCK
		                 : k == BK_MATMUL_TILED || k == BK_MATMUL_TILED_F64
		                         ? (size_t)BENCH_TILE * BENCH_TILE
		                         : 1;
		cl_program p = n == NEED_F16 ? c->prog[1] : c->prog[0];
		size_t wg = 0;
		cl_int rc;

		if (n == NEED_NEVER || !p || (n == NEED_FP64 && !fp64) || (n == NEED_DOT8 && !dot8))
			continue;
		c->kern[k] = c->s->CreateKernel(p, bench_kern_name((enum bench_kern)k), &rc);
		if (c->kern[k] && need_wg > 1 &&
		    (c->s->GetKernelWorkGroupInfo(c->kern[k], c->id, CL_KERNEL_WORK_GROUP_SIZE,
		                                  sizeof(wg), &wg, NULL) != CL_SUCCESS ||
		     wg < need_wg)) {
			c->s->ReleaseKernel(c->kern[k]);
			c->kern[k] = NULL;
		}
	}
}

/*
 * Whether a marker's event has profiling times (some platforms give them
 * for kernels only); queued and waited for on stream 0.
 */
static bool
marker_times(struct bench_dev *d)
{
	struct cl_dev *c = d->priv;
	cl_event ev = NULL;
	cl_ulong t = 0;
	bool ok;

	if (c->s->EnqueueMarkerWithWaitList(c->q[0], 0, NULL, &ev) != CL_SUCCESS || !ev)
		return false;
	if (c->s->Flush(c->q[0]) != CL_SUCCESS ||
	    ev_wait(c, ev, clock_mono() + 10, "a marker", NULL) < 0) {
		c->s->ReleaseEvent(ev);
		return false;
	}
	ok = c->s->GetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(t), &t, NULL) ==
	             CL_SUCCESS &&
	     t;
	c->s->ReleaseEvent(ev);
	return ok;
}

static void
fill_info(struct bench_dev *d, const struct bench_cl_device *cd, unsigned n, const char *exts)
{
	struct cl_dev *c = d->priv;
	struct bench_dev_info *in = &d->info;
	unsigned char uuid[16];
	cl_uint vendor_id = 0;
	bool nvidia;

	str_copy(in->api, sizeof(in->api), "opencl");
	snprintf(in->id, sizeof(in->id), "opencl:%u", n);
	str_copy(in->name, sizeof(in->name), cd->name);
	str_copy(in->vendor, sizeof(in->vendor), cd->vendor);
	str_copy(in->driver, sizeof(in->driver), cd->driver);
	in->units = cd->compute_units;
	in->clock_mhz = cd->clock_mhz;
	in->l2_bytes = dev_num(c->s, c->id, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof(cl_ulong));
	in->mem_total = cd->global_mem;
	in->max_alloc = cd->max_alloc;
	in->max_block = cd->max_work_group;
	in->has_fp64 = has_ext(exts, "cl_khr_fp64") ||
	               dev_num(c->s, c->id, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof(cl_ulong)) != 0;
	in->has_fp16 = has_ext(exts, "cl_khr_fp16");
	in->host_mapped = false;
	in->cpu = !strcmp(cd->type, "cpu");
	pci_of(c->s, c->id, exts, in->pci_bus_id, sizeof(in->pci_bus_id));
	if (c->s->GetDeviceInfo(c->id, CL_DEVICE_VENDOR_ID, sizeof(vendor_id), &vendor_id, NULL) !=
	    CL_SUCCESS)
		vendor_id = 0;
	nvidia = vendor_id == 0x10de || strstr(cd->vendor, "NVIDIA");
	if (has_ext(exts, "cl_khr_device_uuid") &&
	    c->s->GetDeviceInfo(c->id, CL_DEVICE_UUID_KHR, sizeof(uuid), uuid, NULL) == CL_SUCCESS)
		bench_cl_uuid_str(uuid, nvidia, in->uuid, sizeof(in->uuid));
}

/* One device: context, two profiling queues, the programs and kernels. NULL with err. */
static struct bench_dev *
open_device(struct cl_lib *lib, const struct bench_cl_device *cd, unsigned n, struct err *err)
{
	struct bench_dev *d = xcalloc(1, sizeof(*d));
	struct cl_dev *c = xcalloc(1, sizeof(*c));
	const struct bench_cl_sym *s = &lib->s;
	char *exts = NULL, opts[256];
	bool fp64, dot8, le;
	cl_ulong dot_caps = 0;
	cl_int rc = CL_SUCCESS;

	d->ops = &cl_ops;
	d->priv = c;
	d->timeout_s = 60;
	c->lib = lib;
	c->s = s;
	c->id = cd->device_id;
	__atomic_add_fetch(&lib->refs, 1, __ATOMIC_ACQ_REL);
	c->ctx = s->CreateContext(NULL, 1, &c->id, NULL, NULL, &rc);
	if (!c->ctx) {
		cl_fail(err, "clCreateContext", rc);
		goto fail;
	}
	for (int q = 0; q < 2; q++) {
		c->q[q] = s->CreateCommandQueue(c->ctx, c->id, CL_QUEUE_PROFILING_ENABLE, &rc);
		if (!c->q[q]) {
			cl_fail(err, "clCreateCommandQueue", rc);
			goto fail;
		}
	}
	exts = dev_exts(s, c->id);
	fill_info(d, cd, n, exts);
	c->align = dev_num(s, c->id, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof(cl_uint)) / 8;
	if (!c->align)
		c->align = 128; /* the largest OpenCL type, as the spec's minimum asks */
	c->amd_free = has_ext(exts, "cl_amd_device_attribute_query");
	c->atom64 = has_ext(exts, "cl_khr_int64_extended_atomics") ? 2
	            : has_ext(exts, "cl_khr_int64_base_atomics")   ? 1
	                                                           : 0;
	if (c->atom64 > limit_atom64)
		c->atom64 = limit_atom64;
	le = dev_num(s, c->id, CL_DEVICE_ENDIAN_LITTLE, sizeof(cl_uint)) != 0;
	fp64 = d->info.has_fp64;
	dot8 = has_ext(exts, "cl_khr_integer_dot_product");
	if (dot8 && s->GetDeviceInfo(c->id, CL_DEVICE_INTEGER_DOT_PRODUCT_CAPABILITIES_KHR,
	                             sizeof(dot_caps), &dot_caps, NULL) == CL_SUCCESS)
		dot8 = dot_caps & CL_DEVICE_INTEGER_DOT_PRODUCT_INPUT_4x8BIT_PACKED_KHR;
	for (;;) {
		struct err berr = ERR_INIT;

		snprintf(
		        opts, sizeof(opts),
		        "-DDOT_BLOCK=%d -DCHAINS=%d -DUNROLL=%d -DTILE=%d -DGS_ATOM64=%d -DGS_LE=%d%s%s",
		        BENCH_DOT_BLOCK, BENCH_FMA_CHAINS, BENCH_FMA_UNROLL, BENCH_TILE, c->atom64,
		        le, fp64 ? " -DGS_FP64" : "", dot8 ? " -DGS_DOT8" : "");
		if (build(c, 0, opts, &berr) == 0)
			break;
		/*
		 * A device that claims an extension its compiler then refuses
		 * still runs the rest: the i8 dot product (the newest) is
		 * dropped first, then fp64 and the 64-bit atomics.
		 */
		if (!fp64 && !dot8 && !c->atom64) {
			err_set(err, berr.code, "%s", berr.msg);
			goto fail;
		}
		if (dot8) {
			dot8 = false;
			continue;
		}
		fp64 = false;
		c->atom64 = 0;
	}
	if (d->info.has_fp16) {
		snprintf(opts, sizeof(opts), "-DCHAINS=%d -DUNROLL=%d -DGS_ATOM64=0 -DGS_F16",
		         BENCH_FMA_CHAINS, BENCH_FMA_UNROLL);
		build(c, 1, opts, NULL);
	}
	make_kernels(c, fp64, dot8);
	if (!c->kern[BK_EMPTY]) {
		err_set(err, E_IO, "clCreateKernel: gs_empty is missing from the built program");
		goto fail;
	}
	c->marker_profiled = !limit_marker_events && marker_times(d);
	if (c->state) {
		err_set(err, c->state, "%s", c->state_msg);
		goto fail;
	}
	free(exts);
	return d;
fail:
	free(exts);
	cl_close(d);
	return NULL;
}

int
bench_cl_devs_open(struct bench_devs *devs, const char *path, bool take_cpu,
                   const char *const *skip_pci)
{
	const char *lib_path = path ? path : getenv("GPUSCOPE_OPENCL");
	struct bench_cl cl;
	struct cl_lib *lib;
	unsigned skipped = 0, failed = 0, added = 0;
	char why[256] = "";
	int nd;

	devs->opencl_reason[0] = '\0';
	nd = bench_cl_open(&cl, lib_path && *lib_path ? lib_path : NULL, take_cpu);
	if (nd <= 0) {
		str_copy(devs->opencl_reason, sizeof(devs->opencl_reason), cl.reason);
		bench_cl_close(&cl);
		return nd < 0 ? -1 : 0;
	}
	/* the devices own the loader from here: a copy of its table, its handle */
	lib = xcalloc(1, sizeof(*lib));
	lib->s = *cl.sym;
	lib->handle = cl.handle;
	lib->refs = 1;
	for (size_t i = 0; i < cl.ndev; i++) {
		const struct bench_cl_device *cd = &cl.dev[i];
		struct err err = ERR_INIT;
		struct bench_dev *d;
		char pci[24], *exts = dev_exts(&lib->s, cd->device_id);

		pci_of(&lib->s, cd->device_id, exts, pci, sizeof(pci));
		free(exts);
		if (bench_cl_pci_listed(pci, skip_pci)) {
			skipped++;
			continue;
		}
		d = open_device(lib, cd, added, &err);
		if (!d) {
			if (!failed++)
				snprintf(why, sizeof(why), "%s: %s", cd->name, err.msg);
			continue;
		}
		if (bench_devs_add(devs, d) < 0) {
			if (!failed++)
				snprintf(why, sizeof(why), "%s: out of memory", cd->name);
			continue;
		}
		added++;
	}
	bench_cl_close(&cl);
	lib_unref(lib);
	if (!added && failed)
		snprintf(devs->opencl_reason, sizeof(devs->opencl_reason),
		         "no OpenCL device could be opened (%u failed%s): %s", failed,
		         skipped ? ", others CUDA measures" : "", why);
	else if (!added)
		snprintf(devs->opencl_reason, sizeof(devs->opencl_reason),
		         "no OpenCL device but the %u CUDA measures (same PCI bus id)", skipped);
	return (int)added;
}
