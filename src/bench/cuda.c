/*
 * The CUDA driver API side of bench and burn (bench/cuda.h): libcuda.so.1
 * through dlopen, one struct bench_dev per CUDA device, each with the
 * primary context, two non-blocking streams, BENCH_MARKS events and the
 * module of bench/ptx.h. The ABI below (types, CUresult codes, attribute
 * numbers, flags and the versioned symbol names the header maps the plain
 * names to) is written from the toolkit's cuda.h, so the build needs no
 * CUDA header. No call here can block on the GPU: waits poll.
 */
#include "bench/cuda.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/dev.h"
#include "bench/ptx.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/fileio.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

/* cuda.h: the types */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr; /* 64-bit builds */
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef int CUjit_option;
typedef struct {
	unsigned char bytes[16];
} CUuuid;

/* cuda.h: the constants used */
#define CUDA_SUCCESS                              0
#define CUDA_ERROR_OUT_OF_MEMORY                  2
#define CUDA_ERROR_STUB_LIBRARY                   34
#define CUDA_ERROR_NO_DEVICE                      100
#define CUDA_ERROR_ECC_UNCORRECTABLE              214
#define CUDA_ERROR_NVLINK_UNCORRECTABLE           220
#define CUDA_ERROR_UNSUPPORTED_PTX_VERSION        222
#define CUDA_ERROR_CONTAINED                      226
#define CUDA_ERROR_OPERATING_SYSTEM               304
#define CUDA_ERROR_NOT_FOUND                      500
#define CUDA_ERROR_NOT_READY                      600
#define CUDA_ERROR_PEER_ACCESS_UNSUPPORTED        217
#define CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED    704
#define CUDA_ERROR_ILLEGAL_ADDRESS                700
#define CUDA_ERROR_LAUNCH_TIMEOUT                 702
#define CUDA_ERROR_CONTEXT_IS_DESTROYED           709
#define CUDA_ERROR_ASSERT                         710
#define CUDA_ERROR_HARDWARE_STACK_ERROR           714
#define CUDA_ERROR_ILLEGAL_INSTRUCTION            715
#define CUDA_ERROR_MISALIGNED_ADDRESS             716
#define CUDA_ERROR_INVALID_ADDRESS_SPACE          717
#define CUDA_ERROR_INVALID_PC                     718
#define CUDA_ERROR_LAUNCH_FAILED                  719
#define CUDA_ERROR_TENSOR_MEMORY_LEAK             721
#define CUDA_ERROR_NOT_PERMITTED                  800
#define CUDA_ERROR_SYSTEM_DRIVER_MISMATCH         803
#define CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE 804
#define CUDA_ERROR_EXTERNAL_DEVICE                911

#define CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK    1
#define CU_DEVICE_ATTRIBUTE_CLOCK_RATE               13 /* kHz */
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT     16
#define CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY      19
#define CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE        36 /* kHz */
#define CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH  37 /* bits */
#define CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE            38 /* bytes */
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76

#define CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK        0x01
#define CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED 0x03

#define CU_MEMHOSTALLOC_PORTABLE           0x01
#define CU_MEMHOSTALLOC_DEVICEMAP          0x02
#define CU_STREAM_NON_BLOCKING             0x1
#define CU_EVENT_DEFAULT                   0x0
#define CU_JIT_ERROR_LOG_BUFFER            5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6

#define NSTREAMS 2
#define MAX_ARGS 16
#define JIT_LOG  4096
#define PTX_MAX  (16u << 20) /* GPUSCOPE_BENCH_PTX's file */

struct cu_sym {
	CUresult (*Init)(unsigned);
	CUresult (*DriverGetVersion)(int *);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetName)(char *, int, CUdevice);
	CUresult (*DeviceGetUuid)(CUuuid *, CUdevice);
	CUresult (*DeviceGetPCIBusId)(char *, int, CUdevice);
	CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
	CUresult (*DeviceTotalMem)(size_t *, CUdevice);
	CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*DevicePrimaryCtxRelease)(CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*StreamCreate)(CUstream *, unsigned);
	CUresult (*StreamDestroy)(CUstream);
	CUresult (*StreamQuery)(CUstream);
	CUresult (*EventCreate)(CUevent *, unsigned);
	CUresult (*EventDestroy)(CUevent);
	CUresult (*EventRecord)(CUevent, CUstream);
	CUresult (*EventQuery)(CUevent);
	CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
	CUresult (*ModuleLoadDataEx)(CUmodule *, const void *, unsigned, CUjit_option *, void **);
	CUresult (*ModuleUnload)(CUmodule);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemFree)(CUdeviceptr);
	CUresult (*MemGetInfo)(size_t *, size_t *);
	CUresult (*MemHostAlloc)(void **, size_t, unsigned);
	CUresult (*MemFreeHost)(void *);
	CUresult (*MemHostGetDevicePointer)(CUdeviceptr *, void *, unsigned);
	CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
	CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
	CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
	CUresult (*DeviceCanAccessPeer)(int *, CUdevice, CUdevice);
	CUresult (*DeviceGetP2PAttribute)(int *, int, CUdevice, CUdevice);
	CUresult (*CtxEnablePeerAccess)(CUcontext, unsigned);
	CUresult (*MemcpyPeerAsync)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t,
	                            CUstream);
	CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
	                         unsigned, unsigned, CUstream, void **, void **);
	CUresult (*GetErrorName)(CUresult, const char **);
	CUresult (*GetErrorString)(CUresult, const char **);
};

/*
 * The symbols, by the names cuda.h maps the plain ones to; where a second
 * name is given it is the older driver's (cuDeviceGetUuid_v2 came with
 * CUDA 11.4, cuEventElapsedTime_v2 with 12.8; both take the same
 * arguments as the name before them).
 */
#define SYM(field, ...)                         \
	{                                       \
		offsetof(struct cu_sym, field), \
		{                               \
			__VA_ARGS__             \
		}                               \
	}
static const struct {
	size_t off;
	const char *names[2];
} sym_rows[] = {
	SYM(Init, "cuInit"),
	SYM(DriverGetVersion, "cuDriverGetVersion"),
	SYM(DeviceGetCount, "cuDeviceGetCount"),
	SYM(DeviceGet, "cuDeviceGet"),
	SYM(DeviceGetName, "cuDeviceGetName"),
	SYM(DeviceGetUuid, "cuDeviceGetUuid_v2", "cuDeviceGetUuid"),
	SYM(DeviceGetPCIBusId, "cuDeviceGetPCIBusId"),
	SYM(DeviceGetAttribute, "cuDeviceGetAttribute"),
	SYM(DeviceTotalMem, "cuDeviceTotalMem_v2"),
	SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
	SYM(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
	SYM(CtxSetCurrent, "cuCtxSetCurrent"),
	SYM(StreamCreate, "cuStreamCreate"),
	SYM(StreamDestroy, "cuStreamDestroy_v2"),
	SYM(StreamQuery, "cuStreamQuery"),
	SYM(EventCreate, "cuEventCreate"),
	SYM(EventDestroy, "cuEventDestroy_v2"),
	SYM(EventRecord, "cuEventRecord"),
	SYM(EventQuery, "cuEventQuery"),
	SYM(EventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
	SYM(ModuleLoadDataEx, "cuModuleLoadDataEx"),
	SYM(ModuleUnload, "cuModuleUnload"),
	SYM(ModuleGetFunction, "cuModuleGetFunction"),
	SYM(MemAlloc, "cuMemAlloc_v2"),
	SYM(MemFree, "cuMemFree_v2"),
	SYM(MemGetInfo, "cuMemGetInfo_v2"),
	SYM(MemHostAlloc, "cuMemHostAlloc"),
	SYM(MemFreeHost, "cuMemFreeHost"),
	SYM(MemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2"),
	SYM(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
	SYM(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
	SYM(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
	SYM(DeviceCanAccessPeer, "cuDeviceCanAccessPeer"),
	SYM(DeviceGetP2PAttribute, "cuDeviceGetP2PAttribute"),
	SYM(CtxEnablePeerAccess, "cuCtxEnablePeerAccess"),
	SYM(MemcpyPeerAsync, "cuMemcpyPeerAsync"),
	SYM(LaunchKernel, "cuLaunchKernel"),
	SYM(GetErrorName, "cuGetErrorName"),
	SYM(GetErrorString, "cuGetErrorString"),
};
#undef SYM

/* CUDA 13.0's CUresult codes, for names when no library answers */
static const struct {
	int code;
	const char *name;
} cu_errors[] = {
	{ 0, "CUDA_SUCCESS" },
	{ 1, "CUDA_ERROR_INVALID_VALUE" },
	{ 2, "CUDA_ERROR_OUT_OF_MEMORY" },
	{ 3, "CUDA_ERROR_NOT_INITIALIZED" },
	{ 4, "CUDA_ERROR_DEINITIALIZED" },
	{ 5, "CUDA_ERROR_PROFILER_DISABLED" },
	{ 6, "CUDA_ERROR_PROFILER_NOT_INITIALIZED" },
	{ 7, "CUDA_ERROR_PROFILER_ALREADY_STARTED" },
	{ 8, "CUDA_ERROR_PROFILER_ALREADY_STOPPED" },
	{ 34, "CUDA_ERROR_STUB_LIBRARY" },
	{ 36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER" },
	{ 46, "CUDA_ERROR_DEVICE_UNAVAILABLE" },
	{ 100, "CUDA_ERROR_NO_DEVICE" },
	{ 101, "CUDA_ERROR_INVALID_DEVICE" },
	{ 102, "CUDA_ERROR_DEVICE_NOT_LICENSED" },
	{ 200, "CUDA_ERROR_INVALID_IMAGE" },
	{ 201, "CUDA_ERROR_INVALID_CONTEXT" },
	{ 202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT" },
	{ 205, "CUDA_ERROR_MAP_FAILED" },
	{ 206, "CUDA_ERROR_UNMAP_FAILED" },
	{ 207, "CUDA_ERROR_ARRAY_IS_MAPPED" },
	{ 208, "CUDA_ERROR_ALREADY_MAPPED" },
	{ 209, "CUDA_ERROR_NO_BINARY_FOR_GPU" },
	{ 210, "CUDA_ERROR_ALREADY_ACQUIRED" },
	{ 211, "CUDA_ERROR_NOT_MAPPED" },
	{ 212, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY" },
	{ 213, "CUDA_ERROR_NOT_MAPPED_AS_POINTER" },
	{ 214, "CUDA_ERROR_ECC_UNCORRECTABLE" },
	{ 215, "CUDA_ERROR_UNSUPPORTED_LIMIT" },
	{ 216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE" },
	{ 217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED" },
	{ 218, "CUDA_ERROR_INVALID_PTX" },
	{ 219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT" },
	{ 220, "CUDA_ERROR_NVLINK_UNCORRECTABLE" },
	{ 221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND" },
	{ 222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION" },
	{ 223, "CUDA_ERROR_JIT_COMPILATION_DISABLED" },
	{ 224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY" },
	{ 225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC" },
	{ 226, "CUDA_ERROR_CONTAINED" },
	{ 300, "CUDA_ERROR_INVALID_SOURCE" },
	{ 301, "CUDA_ERROR_FILE_NOT_FOUND" },
	{ 302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND" },
	{ 303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED" },
	{ 304, "CUDA_ERROR_OPERATING_SYSTEM" },
	{ 400, "CUDA_ERROR_INVALID_HANDLE" },
	{ 401, "CUDA_ERROR_ILLEGAL_STATE" },
	{ 402, "CUDA_ERROR_LOSSY_QUERY" },
	{ 500, "CUDA_ERROR_NOT_FOUND" },
	{ 600, "CUDA_ERROR_NOT_READY" },
	{ 700, "CUDA_ERROR_ILLEGAL_ADDRESS" },
	{ 701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES" },
	{ 702, "CUDA_ERROR_LAUNCH_TIMEOUT" },
	{ 703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING" },
	{ 704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED" },
	{ 705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED" },
	{ 708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE" },
	{ 709, "CUDA_ERROR_CONTEXT_IS_DESTROYED" },
	{ 710, "CUDA_ERROR_ASSERT" },
	{ 711, "CUDA_ERROR_TOO_MANY_PEERS" },
	{ 712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED" },
	{ 713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED" },
	{ 714, "CUDA_ERROR_HARDWARE_STACK_ERROR" },
	{ 715, "CUDA_ERROR_ILLEGAL_INSTRUCTION" },
	{ 716, "CUDA_ERROR_MISALIGNED_ADDRESS" },
	{ 717, "CUDA_ERROR_INVALID_ADDRESS_SPACE" },
	{ 718, "CUDA_ERROR_INVALID_PC" },
	{ 719, "CUDA_ERROR_LAUNCH_FAILED" },
	{ 720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE" },
	{ 721, "CUDA_ERROR_TENSOR_MEMORY_LEAK" },
	{ 800, "CUDA_ERROR_NOT_PERMITTED" },
	{ 801, "CUDA_ERROR_NOT_SUPPORTED" },
	{ 802, "CUDA_ERROR_SYSTEM_NOT_READY" },
	{ 803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH" },
	{ 804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE" },
	{ 805, "CUDA_ERROR_MPS_CONNECTION_FAILED" },
	{ 806, "CUDA_ERROR_MPS_RPC_FAILURE" },
	{ 807, "CUDA_ERROR_MPS_SERVER_NOT_READY" },
	{ 808, "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED" },
	{ 809, "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED" },
	{ 810, "CUDA_ERROR_MPS_CLIENT_TERMINATED" },
	{ 811, "CUDA_ERROR_CDP_NOT_SUPPORTED" },
	{ 812, "CUDA_ERROR_CDP_VERSION_MISMATCH" },
	{ 900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED" },
	{ 901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED" },
	{ 902, "CUDA_ERROR_STREAM_CAPTURE_MERGE" },
	{ 903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED" },
	{ 904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED" },
	{ 905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION" },
	{ 906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT" },
	{ 907, "CUDA_ERROR_CAPTURED_EVENT" },
	{ 908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD" },
	{ 909, "CUDA_ERROR_TIMEOUT" },
	{ 910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE" },
	{ 911, "CUDA_ERROR_EXTERNAL_DEVICE" },
	{ 912, "CUDA_ERROR_INVALID_CLUSTER_SIZE" },
	{ 913, "CUDA_ERROR_FUNCTION_NOT_LOADED" },
	{ 914, "CUDA_ERROR_INVALID_RESOURCE_TYPE" },
	{ 915, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION" },
	{ 916, "CUDA_ERROR_KEY_ROTATION" },
	{ 999, "CUDA_ERROR_UNKNOWN" },
};

/*
 * Each kernel's parameters in dev.h's order, one letter each: p a pointer
 * (BA_BUF or BA_HOST), l u64, i i32, u u32, f f32, d f64. A launch is held
 * to them: a wrong argument would be read as garbage by the GPU.
 */
static const char *const kern_sig[BK_NKERNELS] = {
	[BK_EMPTY] = "i",
	[BK_SPIN] = "pl",
	[BK_STREAM_INIT] = "pppfffl",
	[BK_STREAM_COPY] = "ppl",
	[BK_STREAM_MUL] = "ppfl",
	[BK_STREAM_ADD] = "pppl",
	[BK_STREAM_TRIAD] = "pppfl",
	[BK_STREAM_DOT] = "pppl",
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
	[BK_COPY_U4] = "ppl",
	[BK_MATMUL_NAIVE] = "pppi",
	[BK_MATMUL_TILED] = "pppi",
	[BK_MATMUL_TILED_F64] = "pppi",
	[BK_COMPARE_F32] = "pplfp",
	[BK_COMPARE_F64] = "ppldp",
	[BK_MEM_FILL] = "plui",
	[BK_MEM_CHECK] = "pluipp",
};

/* One loaded libcuda.so.1, shared by the devices opened from it. */
struct cu_lib {
	void *dl;
	int refs; /* the devices, and bench_cuda_open() while it runs (atomic) */
	char path[PATH_MAX];
	struct cu_sym s;
	const char *uuid_sym, *elapsed_sym; /* the names resolved of the two that have two */
};

struct cu_buf {
	CUdeviceptr p;
	size_t size;
};

struct cu_host {
	void *p;
	size_t size;
	CUdeviceptr dev; /* its device address when mapped, else 0 */
};

enum fn_state { FN_UNKNOWN, FN_OK, FN_MISSING };

struct cu_dev {
	struct bench_dev dev;
	struct cu_lib *lib;
	CUdevice cu;
	/*
	 * mu guards what follows; it is never held across a wait on the GPU,
	 * so the handles made by setup are read without it.
	 */
	pthread_mutex_t mu;
	CUcontext ctx; /* the primary context, retained; NULL until the first operation */
	CUstream stream[NSTREAMS];
	CUevent ev[BENCH_MARKS];
	bool recorded[BENCH_MARKS];
	/* the module: loaded at the first launch or has() */
	CUmodule mod;
	int mod_status; /* its load's failure, kept: a JIT error does not change by trying again */
	char mod_msg[256];
	bool hook; /* GPUSCOPE_BENCH_PTX's image */
	CUfunction fn[BK_NKERNELS];
	unsigned char fn_state[BK_NKERNELS];
	struct cu_buf *buf;
	size_t nbuf, abuf;
	struct cu_host *host;
	size_t nhost, ahost;
	/* a sticky error or a timeout: every later operation fails with it */
	int dead;
	char dead_msg[256];
	bool abandoned; /* timed out: nothing more is asked of the driver */
	/* bit i: this context may reach device ordinal i's (cuCtxEnablePeerAccess done) */
	uint64_t peer_on;
};

/* The library bench_cuda_error_name() asks while one is loaded. */
static pthread_mutex_t names_mu = PTHREAD_MUTEX_INITIALIZER;
static struct cu_lib *names_lib;

static const char *
table_name(int code, char *buf, size_t size)
{
	for (size_t i = 0; i < ARRAY_SIZE(cu_errors); i++)
		if (cu_errors[i].code == code)
			return cu_errors[i].name;
	snprintf(buf, size, "CUDA error %d", code);
	return buf;
}

static const char *
lib_error_name(const struct cu_lib *lib, CUresult r, char *buf, size_t size)
{
	const char *s = NULL;

	if (lib && lib->s.GetErrorName && lib->s.GetErrorName(r, &s) == CUDA_SUCCESS && s && *s)
		return s;
	return table_name(r, buf, size);
}

const char *
bench_cuda_error_name(int code, char *buf, size_t size)
{
	const char *s;

	pthread_mutex_lock(&names_mu);
	s = lib_error_name(names_lib, code, buf, size);
	pthread_mutex_unlock(&names_mu);
	return s;
}

/* The errors after which the context is unusable (cuda.h: "the process ... must be terminated"). */
static bool
is_sticky(CUresult r)
{
	switch (r) {
	case CUDA_ERROR_ECC_UNCORRECTABLE:
	case CUDA_ERROR_NVLINK_UNCORRECTABLE:
	case CUDA_ERROR_CONTAINED:
	case CUDA_ERROR_ILLEGAL_ADDRESS:
	case CUDA_ERROR_LAUNCH_TIMEOUT:
	case CUDA_ERROR_CONTEXT_IS_DESTROYED:
	case CUDA_ERROR_ASSERT:
	case CUDA_ERROR_HARDWARE_STACK_ERROR:
	case CUDA_ERROR_ILLEGAL_INSTRUCTION:
	case CUDA_ERROR_MISALIGNED_ADDRESS:
	case CUDA_ERROR_INVALID_ADDRESS_SPACE:
	case CUDA_ERROR_INVALID_PC:
	case CUDA_ERROR_LAUNCH_FAILED:
	case CUDA_ERROR_TENSOR_MEMORY_LEAK:
	case CUDA_ERROR_EXTERNAL_DEVICE:
		return true;
	default:
		return false;
	}
}

static struct cu_dev *
cu_of(struct bench_dev *d)
{
	return container_of(d, struct cu_dev, dev);
}

/* Record the device's end: the first cause is the one every later call repeats. */
static int
set_dead(struct cu_dev *cd, int code, const char *msg, bool abandon)
{
	pthread_mutex_lock(&cd->mu);
	if (!cd->dead) {
		cd->dead = code;
		str_copy(cd->dead_msg, sizeof(cd->dead_msg), msg);
	}
	if (abandon)
		cd->abandoned = true;
	pthread_mutex_unlock(&cd->mu);
	return code;
}

/* The dead device's status and message, or 0 while it lives. */
static int
dead_check(struct cu_dev *cd, struct err *err)
{
	int code;

	pthread_mutex_lock(&cd->mu);
	code = cd->dead;
	if (code)
		err_set(err, code, "%s", cd->dead_msg);
	pthread_mutex_unlock(&cd->mu);
	return code;
}

/*
 * err_set() with "call: CUDA_ERROR_NAME (code)": E_LOST, and the device
 * dead, for a sticky error; E_IO otherwise.
 */
static int
cu_fail(struct cu_dev *cd, struct err *err, const char *call, CUresult r)
{
	char buf[32], msg[256];
	bool sticky = is_sticky(r);

	snprintf(msg, sizeof(msg), "%s: %s (%d)%s", call,
	         lib_error_name(cd->lib, r, buf, sizeof(buf)), r,
	         sticky ? ": the context is lost (see dmesg for an Xid)" : "");
	if (sticky)
		set_dead(cd, E_LOST, msg, false);
	return err_set(err, sticky ? E_LOST : E_IO, "%s", msg);
}

static void
pause_us(unsigned us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* the next sleep of a poll: 10 us, doubling to 1 ms */
static unsigned
grow_us(unsigned us)
{
	return us >= 500 ? 1000 : us * 2;
}

/* The stream for index s (0 or 1), or NULL with err set. */
static CUstream *
stream_of(struct cu_dev *cd, int s, const char *op, struct err *err)
{
	if (s < 0 || s >= NSTREAMS) {
		err_set(err, E_USAGE, "%s: stream %d: there are streams 0 and 1", op, s);
		return NULL;
	}
	return &cd->stream[s];
}

static void
undo_setup(struct cu_dev *cd)
{
	const struct cu_sym *s = &cd->lib->s;

	for (unsigned i = 0; i < BENCH_MARKS; i++)
		if (cd->ev[i])
			s->EventDestroy(cd->ev[i]);
	for (unsigned i = 0; i < NSTREAMS; i++)
		if (cd->stream[i])
			s->StreamDestroy(cd->stream[i]);
	memset(cd->ev, 0, sizeof(cd->ev));
	memset(cd->stream, 0, sizeof(cd->stream));
	/* this thread keeps no handle to a context that may be destroyed now */
	s->CtxSetCurrent(NULL);
	s->DevicePrimaryCtxRelease(cd->cu);
	cd->ctx = NULL;
}

/* Under mu: retain the primary context and make the streams and events. */
static int
setup(struct cu_dev *cd, struct err *err)
{
	const struct cu_sym *s = &cd->lib->s;
	CUcontext ctx = NULL;
	CUresult r;

	r = s->DevicePrimaryCtxRetain(&ctx, cd->cu);
	if (r != CUDA_SUCCESS)
		return cu_fail(cd, err, "cuDevicePrimaryCtxRetain", r);
	cd->ctx = ctx;
	r = s->CtxSetCurrent(ctx);
	if (r != CUDA_SUCCESS) {
		undo_setup(cd);
		return cu_fail(cd, err, "cuCtxSetCurrent", r);
	}
	for (unsigned i = 0; i < NSTREAMS; i++) {
		r = s->StreamCreate(&cd->stream[i], CU_STREAM_NON_BLOCKING);
		if (r != CUDA_SUCCESS) {
			cd->stream[i] = NULL;
			undo_setup(cd);
			return cu_fail(cd, err, "cuStreamCreate", r);
		}
	}
	for (unsigned i = 0; i < BENCH_MARKS; i++) {
		r = s->EventCreate(&cd->ev[i], CU_EVENT_DEFAULT);
		if (r != CUDA_SUCCESS) {
			cd->ev[i] = NULL;
			undo_setup(cd);
			return cu_fail(cd, err, "cuEventCreate", r);
		}
	}
	return 0;
}

/*
 * Every operation's entry: fail at once on a dead device, make the context
 * (the first time) and make it current on this thread.
 */
static int
enter(struct cu_dev *cd, struct err *err)
{
	CUresult r;
	int rc = dead_check(cd, err);

	if (rc)
		return rc;
	pthread_mutex_lock(&cd->mu);
	if (!cd->ctx)
		rc = setup(cd, err);
	pthread_mutex_unlock(&cd->mu);
	if (rc < 0)
		return rc;
	r = cd->lib->s.CtxSetCurrent(cd->ctx);
	if (r != CUDA_SUCCESS)
		return cu_fail(cd, err, "cuCtxSetCurrent", r);
	return 0;
}

/* A JIT log as one line in out: runs of newlines become "; ", blanks at the ends go. */
static void
flatten_log(const char *log, char *out, size_t size)
{
	size_t n = 0;
	bool sep = false;

	for (const char *p = log; *p && n + 3 < size; p++) {
		if (*p == '\n' || *p == '\r') {
			sep = n > 0;
			continue;
		}
		if (sep) {
			out[n++] = ';';
			out[n++] = ' ';
			sep = false;
		}
		out[n++] = *p;
	}
	while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\t'))
		n--;
	out[n] = '\0';
}

/* Under mu, context current: load the module (once; a failure is kept). */
static int
load_module(struct cu_dev *cd, struct err *err)
{
	const struct cu_sym *s = &cd->lib->s;
	const char *hook = getenv("GPUSCOPE_BENCH_PTX");
	struct strbuf file = STRBUF_INIT;
	const char *image, *level = "";
	CUjit_option opt[2] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	char log[JIT_LOG] = "", flat[200];
	void *val[2] = { log, (void *)(uintptr_t)sizeof(log) };
	char buf[32];
	CUresult r;

	if (hook && *hook) {
		cd->hook = true;
		level = "GPUSCOPE_BENCH_PTX";
		if (file_read_regular(hook, &file, PTX_MAX) < 0 || !file.len) {
			cd->mod_status = E_IO;
			snprintf(cd->mod_msg, sizeof(cd->mod_msg),
			         "cannot read the PTX file '%s' (named by GPUSCOPE_BENCH_PTX)",
			         hook);
			goto out;
		}
		image = file.buf;
	} else {
		image = bench_ptx_image(cd->dev.info.cc_major, cd->dev.info.cc_minor, &level);
		if (!image) {
			cd->mod_status = E_NOTSUP;
			snprintf(cd->mod_msg, sizeof(cd->mod_msg),
			         "no PTX for compute capability %d.%d: %s", cd->dev.info.cc_major,
			         cd->dev.info.cc_minor, level ? level : "none built in");
			goto out;
		}
	}
	r = s->ModuleLoadDataEx(&cd->mod, image, 2, opt, val);
	if (r != CUDA_SUCCESS) {
		cd->mod = NULL;
		log[sizeof(log) - 1] = '\0';
		flatten_log(log, flat, sizeof(flat));
		cd->mod_status = is_sticky(r) ? E_LOST : E_IO;
		strbuf_reset(&file);
		strbuf_addf(&file, "cuModuleLoadDataEx (%s): %s (%d)", level,
		            lib_error_name(cd->lib, r, buf, sizeof(buf)), r);
		if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
			strbuf_addstr(
			        &file,
			        " (the driver is older than the PTX: update the NVIDIA driver)");
		if (flat[0])
			strbuf_addf(&file, ": %s", flat);
		str_copy(cd->mod_msg, sizeof(cd->mod_msg), file.buf);
		if (is_sticky(r)) {
			cd->dead = E_LOST;
			str_copy(cd->dead_msg, sizeof(cd->dead_msg), cd->mod_msg);
		}
	}
out:
	strbuf_release(&file);
	return cd->mod_status ? err_set(err, cd->mod_status, "%s", cd->mod_msg) : 0;
}

/* Kernel k's function: *f, or E_NOTSUP when the module lacks it. */
static int
get_fn(struct cu_dev *cd, enum bench_kern k, CUfunction *f, struct err *err)
{
	char buf[32];
	CUresult r = CUDA_SUCCESS;
	int rc = 0;

	pthread_mutex_lock(&cd->mu);
	if (!cd->mod && !cd->mod_status)
		rc = load_module(cd, err);
	else if (cd->mod_status)
		rc = err_set(err, cd->mod_status, "%s", cd->mod_msg);
	if (rc < 0)
		goto out;
	if (cd->fn_state[k] == FN_UNKNOWN) {
		r = cd->lib->s.ModuleGetFunction(&cd->fn[k], cd->mod, bench_kern_name(k));
		if (r == CUDA_SUCCESS)
			cd->fn_state[k] = FN_OK;
		else if (r == CUDA_ERROR_NOT_FOUND)
			cd->fn_state[k] = FN_MISSING;
	}
	if (cd->fn_state[k] == FN_OK)
		*f = cd->fn[k];
	else if (cd->fn_state[k] == FN_MISSING)
		rc = err_set(err, E_NOTSUP,
		             "cuModuleGetFunction: %s: %s (%d): not in this device's PTX",
		             bench_kern_name(k),
		             lib_error_name(cd->lib, CUDA_ERROR_NOT_FOUND, buf, sizeof(buf)),
		             CUDA_ERROR_NOT_FOUND);
out:
	pthread_mutex_unlock(&cd->mu);
	if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_FOUND) {
		char call[64];

		snprintf(call, sizeof(call), "cuModuleGetFunction: %s", bench_kern_name(k));
		return cu_fail(cd, err, call, r);
	}
	return rc;
}

static bool
cu_has(struct bench_dev *d, enum bench_kern k)
{
	struct cu_dev *cd = cu_of(d);
	CUfunction f;

	if ((unsigned)k >= BK_NKERNELS || enter(cd, NULL) < 0)
		return false;
	if (k == BK_SPIN && !d->info.host_mapped)
		return false;
	if (get_fn(cd, k, &f, NULL) < 0)
		return false;
	/* the hook's file stands for the built-in image, whose list does not apply to it */
	return cd->hook || bench_ptx_has(d->info.cc_major, d->info.cc_minor, k);
}

/*
 * Poll a stream (stream >= 0) or a marker's event (slot, when stream < 0)
 * until it is done or deadline (clock_mono()) passes: a blocking
 * cuStreamSynchronize() or cuEventSynchronize() on a hung GPU would never
 * come back.
 */
static int
wait_done(struct cu_dev *cd, int stream, unsigned slot, double deadline, struct err *err)
{
	const char *call = stream >= 0 ? "cuStreamQuery" : "cuEventQuery";
	unsigned us = 10;
	char msg[256];

	for (;;) {
		CUresult r = stream >= 0 ? cd->lib->s.StreamQuery(cd->stream[stream])
		                         : cd->lib->s.EventQuery(cd->ev[slot]);

		if (r == CUDA_SUCCESS)
			return 0;
		if (r != CUDA_ERROR_NOT_READY)
			return cu_fail(cd, err, call, r);
		if (clock_mono() >= deadline)
			break;
		pause_us(us);
		us = grow_us(us);
	}
	if (stream >= 0)
		snprintf(msg, sizeof(msg), "%s: stream %d still busy after %g s", call, stream,
		         cd->dev.timeout_s);
	else
		snprintf(msg, sizeof(msg), "%s: marker %u still pending after %g s", call, slot,
		         cd->dev.timeout_s);
	snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
	         ": the GPU or its driver does not answer (see dmesg for an Xid)");
	set_dead(cd, E_TIMEOUT, msg, true);
	return err_set(err, E_TIMEOUT, "%s", msg);
}

static int
wait_stream(struct cu_dev *cd, int s, double deadline, struct err *err)
{
	return wait_done(cd, s, 0, deadline, err);
}

static int
wait_event(struct cu_dev *cd, unsigned slot, double deadline, struct err *err)
{
	return wait_done(cd, -1, slot, deadline, err);
}

static int
cu_sync(struct bench_dev *d, int stream, struct err *err)
{
	struct cu_dev *cd = cu_of(d);
	double deadline;
	int rc;

	if (stream != -1 && !stream_of(cd, stream, "sync", err))
		return E_USAGE;
	rc = enter(cd, err);
	if (rc < 0)
		return rc;
	deadline = clock_mono() + d->timeout_s;
	for (int s = 0; s < NSTREAMS; s++) {
		if (stream != -1 && s != stream)
			continue;
		rc = wait_stream(cd, s, deadline, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int
cu_mem_info(struct bench_dev *d, unsigned long long *free_bytes, unsigned long long *total,
            struct err *err)
{
	struct cu_dev *cd = cu_of(d);
	size_t f = 0, t = 0;
	CUresult r;
	int rc = enter(cd, err);

	if (rc < 0)
		return rc;
	r = cd->lib->s.MemGetInfo(&f, &t);
	if (r != CUDA_SUCCESS)
		return cu_fail(cd, err, "cuMemGetInfo_v2", r);
	if (free_bytes)
		*free_bytes = f;
	if (total)
		*total = t;
	return 0;
}

/* Under mu: the buffer of handle h, or NULL. */
static struct cu_buf *
find_buf(struct cu_dev *cd, uint64_t h)
{
	for (size_t i = 0; i < cd->nbuf; i++)
		if (cd->buf[i].p == h)
			return &cd->buf[i];
	return NULL;
}

/* The device address of bytes [off, off + bytes) of buffer h, or E_USAGE. */
static int
buf_range(struct cu_dev *cd, uint64_t h, uint64_t off, size_t bytes, const char *op, CUdeviceptr *p,
          struct err *err)
{
	struct cu_buf *b;
	int rc = 0;

	pthread_mutex_lock(&cd->mu);
	b = find_buf(cd, h);
	if (!b)
		rc = err_set(err, E_USAGE, "%s: 0x%llx is not a buffer of %s", op,
		             (unsigned long long)h, cd->dev.info.id);
	else if (off > b->size || bytes > b->size - off)
		rc = err_set(err, E_USAGE,
		             "%s: bytes %llu to %llu are past the end of a buffer of %zu bytes", op,
		             (unsigned long long)off, (unsigned long long)off + bytes, b->size);
	else
		*p = b->p + off;
	pthread_mutex_unlock(&cd->mu);
	return rc;
}

static int
cu_alloc(struct bench_dev *d, size_t bytes, uint64_t *buf, struct err *err)
{
	struct cu_dev *cd = cu_of(d);
	CUdeviceptr p = 0;
	CUresult r;
	int rc;

	if (!bytes)
		return err_set(err, E_USAGE, "alloc: 0 bytes");
	rc = enter(cd, err);
	if (rc < 0)
		return rc;
	r = cd->lib->s.MemAlloc(&p, bytes);
	if (r != CUDA_SUCCESS)
		return cu_fail(cd, err, "cuMemAlloc_v2", r);
	pthread_mutex_lock(&cd->mu);
	ALLOC_GROW(cd->buf, cd->nbuf + 1, cd->abuf);
	cd->buf[cd->nbuf++] = (struct cu_buf){ p, bytes };
	pthread_mutex_unlock(&cd->mu);
	*buf = p;
	return 0;
}

/* Whether the driver may still be called for d's resources. */
static bool
may_call(struct cu_dev *cd)
{
	bool yes;

	pthread_mutex_lock(&cd->mu);
	yes = cd->ctx && !cd->abandoned;
	pthread_mutex_unlock(&cd->mu);
	return yes && cd->lib->s.CtxSetCurrent(cd->ctx) == CUDA_SUCCESS;
}

static void
cu_free(struct bench_dev *d, uint64_t h)
{
	struct cu_dev *cd = cu_of(d);
	struct cu_buf *b;
	bool found = false;

	pthread_mutex_lock(&cd->mu);
	b = find_buf(cd, h);
	if (b) {
		*b = cd->buf[--cd->nbuf];
		found = true;
	}
	pthread_mutex_unlock(&cd->mu);
	if (found && may_call(cd))
		cd->lib->s.MemFree(h);
}

static int
cu_host_alloc(struct bench_dev *d, size_t bytes, bool mapped, void **out, struct err *err)
{
	struct cu_dev *cd = cu_of(d);
	void *p = NULL;
	CUdeviceptr dev = 0;
	CUresult r;
	int rc;

	if (!bytes)
		return err_set(err, E_USAGE, "host_alloc: 0 bytes");
	if (mapped && !d->info.host_mapped)
		return err_set(err, E_NOTSUP, "host_alloc: %s cannot map host memory", d->info.id);
	rc = enter(cd, err);
	if (rc < 0)
		return rc;
	r = cd->lib->s.MemHostAlloc(
	        &p, bytes, CU_MEMHOSTALLOC_PORTABLE | (mapped ? CU_MEMHOSTALLOC_DEVICEMAP : 0));
	if (r != CUDA_SUCCESS)
		return cu_fail(cd, err, "cuMemHostAlloc", r);
	if (mapped) {
		r = cd->lib->s.MemHostGetDevicePointer(&dev, p, 0);
		if (r != CUDA_SUCCESS) {
			cd->lib->s.MemFreeHost(p);
			return cu_fail(cd, err, "cuMemHostGetDevicePointer_v2", r);
		}
	}
	pthread_mutex_lock(&cd->mu);
	ALLOC_GROW(cd->host, cd->nhost + 1, cd->ahost);
	cd->host[cd->nhost++] = (struct cu_host){ p, bytes, dev };
	pthread_mutex_unlock(&cd->mu);
	*out = p;
	return 0;
}

static void
cu_host_free(struct bench_dev *d, void *p)
{
	struct cu_dev *cd = cu_of(d);
	bool found = false;

	pthread_mutex_lock(&cd->mu);
	for (size_t i = 0; i < cd->nhost; i++) {
		if (cd->host[i].p == p) {
			cd->host[i] = cd->host[--cd->nhost];
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&cd->mu);
	if (found && may_call(cd))
		cd->lib->s.MemFreeHost(p);
}

/* The device address of host pointer q, inside a mapped host_alloc() block; or E_USAGE. */
static int
host_addr(struct cu_dev *cd, const void *q, unsigned idx, CUdeviceptr *p, struct err *err)
{
	int rc = E_USAGE;

	pthread_mutex_lock(&cd->mu);
	for (size_t i = 0; i < cd->nhost; i++) {
		uintptr_t base = (uintptr_t)cd->host[i].p, c = (uintptr_t)q;

		if (c >= base && c - base <= cd->host[i].size && cd->host[i].dev) {
			*p = cd->host[i].dev + (CUdeviceptr)(c - base);
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&cd->mu);
	if (rc < 0)
		err_set(err, rc, "launch: argument %u is not host memory of host_alloc(mapped)",
		        idx);
	return rc;
}

static int
cu_write(struct bench_dev *d, int stream, uint64_t buf, size_t off, const void *host, size_t bytes,
         bool sync, struct err *err)
{
	struct cu_dev *cd = cu_of(d);
	CUdeviceptr p = 0;
	CUresult r;
	int rc;

	if (!stream_of(cd, stream, "write", err))
		return E_USAGE;
	if (!host && bytes)
		return err_set(err, E_USAGE, "write: no host memory");
	rc = buf_range(cd, buf, off, bytes, "write", &p, err);
	if (rc < 0)
		return rc;
	rc = enter(cd, err);
	if (rc < 0)
		return rc;
	if (bytes) {
		r = cd->lib->s.MemcpyHtoDAsync(p, host, bytes, cd->stream[stream]);
		if (r != CUDA_SUCCESS)
			return cu_fail(cd, err, "cuMemcpyHtoDAsync_v2", r);
	}
	return sync ? wait_stream(cd, stream, clock_mono() + d->timeout_s, err) : 0;
}

static int
cu_read(struct bench_dev *d, int stream, uint64_t buf, size_t off, void *host, size_t bytes,
        bool sync, struct err *err)
{
	struct cu_dev *cd = cu_of(d);
	CUdeviceptr p = 0;
	CUresult r;
	int rc;

	if (!stream_of(cd, stream, "read", err))
		return E_USAGE;
	if (!host && bytes)
		return err_set(err, E_USAGE, "read: no host memory");
	rc = buf_range(cd, buf, off, bytes, "read", &p, err);
	if (rc < 0)
		return rc;
	rc = enter(cd, err);
	if (rc < 0)
		return rc;
	if (bytes) {
		r = cd->lib->s.MemcpyDtoHAsync(host, p, bytes, cd->stream[stream]);
		if (r != CUDA_SUCCESS)
			return cu_fail(cd, err, "cuMemcpyDtoHAsync_v2", r);
	}
	return sync ? wait_stream(cd, stream, clock_mono() + d->timeout_s, err) : 0;
}

static int
cu_copy(struct bench_dev *d, int stream, uint64_t dst, uint64_t src, size_t bytes, struct err *err)
{
	struct cu_dev *cd = cu_of(d);
	CUdeviceptr pd = 0, ps = 0;
	CUresult r;
	int rc;

	if (!stream_of(cd, stream, "copy", err))
		return E_USAGE;
	rc = buf_range(cd, dst, 0, bytes, "copy", &pd, err);
	if (rc == 0)
		rc = buf_range(cd, src, 0, bytes, "copy", &ps, err);
	if (rc == 0)
		rc = enter(cd, err);
	if (rc < 0)
		return rc;
	if (!bytes)
		return 0;
	r = cd->lib->s.MemcpyDtoDAsync(pd, ps, bytes, cd->stream[stream]);
	return r == CUDA_SUCCESS ? 0 : cu_fail(cd, err, "cuMemcpyDtoDAsync_v2", r);
}

static const char *
arg_letter_name(char c)
{
	switch (c) {
	case 'p':
		return "a pointer";
	case 'l':
		return "u64";
	case 'i':
		return "i32";
	case 'u':
		return "u32";
	case 'f':
		return "f32";
	default:
		return "f64";
	}
}

static bool
arg_fits(char c, enum bench_arg_type t)
{
	switch (c) {
	case 'p':
		return t == BA_BUF || t == BA_HOST;
	case 'l':
		return t == BA_U64;
	case 'i':
		return t == BA_I32;
	case 'u':
		return t == BA_U32;
	case 'f':
		return t == BA_F32;
	case 'd':
		return t == BA_F64;
	default:
		return false;
	}
}

/* One argument in the width the kernel takes it: cuLaunchKernel reads each through a pointer. */
union cu_arg {
	CUdeviceptr p;
	uint64_t u64;
	int32_t i32;
	uint32_t u32;
	float f32;
	double f64;
};

static int
cu_launch(struct bench_dev *d, int stream, enum bench_kern k, const unsigned grid[2],
          const unsigned block[2], const struct bench_arg *args, unsigned nargs, struct err *err)
{
	struct cu_dev *cd = cu_of(d);
	union cu_arg val[MAX_ARGS];
	void *param[MAX_ARGS];
	const char *sig, *name;
	CUfunction f = NULL;
	char call[64];
	CUresult r;
	int rc;

	if ((unsigned)k >= BK_NKERNELS)
		return err_set(err, E_USAGE, "launch: no kernel %d", (int)k);
	name = bench_kern_name(k);
	sig = kern_sig[k];
	if (!stream_of(cd, stream, "launch", err))
		return E_USAGE;
	if (!grid || !block || !grid[0] || !grid[1] || !block[0] || !block[1])
		return err_set(err, E_USAGE, "launch %s: an empty grid or block", name);
	if (nargs != strlen(sig) || (nargs && !args))
		return err_set(err, E_USAGE, "launch %s: %u arguments, the kernel takes %zu", name,
		               nargs, strlen(sig));
	for (unsigned i = 0; i < nargs; i++) {
		if (!arg_fits(sig[i], args[i].type))
			return err_set(err, E_USAGE, "launch %s: argument %u is not %s", name, i,
			               arg_letter_name(sig[i]));
		switch (args[i].type) {
		case BA_BUF:
			rc = buf_range(cd, args[i].v.b.buf, args[i].v.b.off, 0, "launch", &val[i].p,
			               err);
			if (rc < 0)
				return rc;
			break;
		case BA_HOST:
			rc = host_addr(cd, args[i].v.host, i, &val[i].p, err);
			if (rc < 0)
				return rc;
			break;
		case BA_U64:
			val[i].u64 = args[i].v.u64;
			break;
		case BA_I32:
			val[i].i32 = args[i].v.i32;
			break;
		case BA_U32:
			val[i].u32 = args[i].v.u32;
			break;
		case BA_F32:
			val[i].f32 = args[i].v.f32;
			break;
		case BA_F64:
			val[i].f64 = args[i].v.f64;
			break;
		}
		param[i] = &val[i];
	}
	rc = enter(cd, err);
	if (rc < 0)
		return rc;
	rc = get_fn(cd, k, &f, err);
	if (rc < 0)
		return rc;
	r = cd->lib->s.LaunchKernel(f, grid[0], grid[1], 1, block[0], block[1], 1, 0,
	                            cd->stream[stream], nargs ? param : NULL, NULL);
	if (r == CUDA_SUCCESS)
		return 0;
	snprintf(call, sizeof(call), "cuLaunchKernel (%s)", name);
	return cu_fail(cd, err, call, r);
}

static int
cu_mark(struct bench_dev *d, int stream, unsigned slot, struct err *err)
{
	struct cu_dev *cd = cu_of(d);
	CUresult r;
	int rc;

	if (!stream_of(cd, stream, "mark", err))
		return E_USAGE;
	if (slot >= BENCH_MARKS)
		return err_set(err, E_USAGE, "mark: slot %u: there are %d", slot, BENCH_MARKS);
	rc = enter(cd, err);
	if (rc < 0)
		return rc;
	r = cd->lib->s.EventRecord(cd->ev[slot], cd->stream[stream]);
	if (r != CUDA_SUCCESS)
		return cu_fail(cd, err, "cuEventRecord", r);
	pthread_mutex_lock(&cd->mu);
	cd->recorded[slot] = true;
	pthread_mutex_unlock(&cd->mu);
	return 0;
}

static int
cu_elapsed(struct bench_dev *d, unsigned a, unsigned b, double *seconds, struct err *err)
{
	struct cu_dev *cd = cu_of(d);
	double deadline;
	bool both;
	float ms = 0;
	CUresult r;
	int rc;

	if (a >= BENCH_MARKS || b >= BENCH_MARKS)
		return err_set(err, E_USAGE, "elapsed: slots %u and %u: there are %d", a, b,
		               BENCH_MARKS);
	rc = enter(cd, err);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&cd->mu);
	both = cd->recorded[a] && cd->recorded[b];
	pthread_mutex_unlock(&cd->mu);
	if (!both)
		return err_set(err, E_USAGE, "elapsed: marker %u was never queued",
		               cd->recorded[a] ? b : a);
	deadline = clock_mono() + d->timeout_s;
	rc = wait_event(cd, a, deadline, err);
	if (rc == 0)
		rc = wait_event(cd, b, deadline, err);
	if (rc < 0)
		return rc;
	r = cd->lib->s.EventElapsedTime(&ms, cd->ev[a], cd->ev[b]);
	if (r != CUDA_SUCCESS)
		return cu_fail(cd, err, cd->lib->elapsed_sym, r);
	*seconds = ms / 1e3;
	return 0;
}

static const struct bench_dev_ops cu_ops;

/* other as another device of cd's library, or NULL */
static struct cu_dev *
peer_of(struct cu_dev *cd, struct bench_dev *other)
{
	struct cu_dev *co;

	if (!other || other->ops != &cu_ops)
		return NULL;
	co = cu_of(other);
	return co != cd && co->lib == cd->lib ? co : NULL;
}

static int
cu_peer_info(struct bench_dev *d, struct bench_dev *other, struct bench_peer_info *pi,
             struct err *err)
{
	struct cu_dev *cd = cu_of(d), *co = peer_of(cd, other);
	int v = 0, rc;
	CUresult r;

	*pi = (struct bench_peer_info){ .rank = -1, .atomics = -1 };
	if (!co)
		return err_set(err, E_USAGE, "peer_info: %s is not another CUDA device beside %s",
		               other ? other->info.id : "(none)", d->info.id);
	rc = enter(cd, err);
	if (rc == 0)
		rc = dead_check(co, err);
	if (rc)
		return rc;
	r = cd->lib->s.DeviceCanAccessPeer(&v, cd->cu, co->cu);
	if (r != CUDA_SUCCESS)
		return cu_fail(cd, err, "cuDeviceCanAccessPeer", r);
	pi->to = v != 0;
	r = cd->lib->s.DeviceCanAccessPeer(&v, co->cu, cd->cu);
	if (r != CUDA_SUCCESS)
		return cu_fail(cd, err, "cuDeviceCanAccessPeer", r);
	pi->from = v != 0;
	/* what the link is: told where the driver answers, left unknown where not */
	if (cd->lib->s.DeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, cd->cu,
	                                     co->cu) == CUDA_SUCCESS)
		pi->rank = v;
	if (cd->lib->s.DeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED,
	                                     cd->cu, co->cu) == CUDA_SUCCESS)
		pi->atomics = v != 0;
	return 0;
}

static int
cu_peer_copy(struct bench_dev *d, int stream, struct bench_dev *dst_dev, uint64_t dst, uint64_t src,
             size_t bytes, struct err *err)
{
	struct cu_dev *cd = cu_of(d), *co = peer_of(cd, dst_dev);
	CUdeviceptr pd = 0, ps = 0;
	bool on;
	CUresult r;
	int rc;

	if (!stream_of(cd, stream, "peer_copy", err))
		return E_USAGE;
	if (!co)
		return err_set(err, E_USAGE, "peer_copy: %s is not another CUDA device beside %s",
		               dst_dev ? dst_dev->info.id : "(none)", d->info.id);
	rc = buf_range(cd, src, 0, bytes, "peer_copy", &ps, err);
	if (rc == 0)
		rc = buf_range(co, dst, 0, bytes, "peer_copy", &pd, err);
	/* both contexts made (the copy names the destination's), d's left current */
	if (rc == 0)
		rc = enter(co, err);
	if (rc == 0)
		rc = enter(cd, err);
	if (rc < 0)
		return rc;
	if (!bytes)
		return 0;
	pthread_mutex_lock(&cd->mu);
	on = co->cu >= 0 && co->cu < 64 && (cd->peer_on >> co->cu & 1);
	pthread_mutex_unlock(&cd->mu);
	if (!on) {
		/*
		 * Without it the driver would stage the copy through host
		 * memory, and the figure would not be the link's.
		 */
		r = cd->lib->s.CtxEnablePeerAccess(co->ctx, 0);
		if (r == CUDA_ERROR_PEER_ACCESS_UNSUPPORTED) {
			char buf[32];

			return err_set(err, E_NOTSUP, "cuCtxEnablePeerAccess: %s (%d)",
			               lib_error_name(cd->lib, r, buf, sizeof(buf)), r);
		}
		if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
			return cu_fail(cd, err, "cuCtxEnablePeerAccess", r);
		if (co->cu >= 0 && co->cu < 64) {
			pthread_mutex_lock(&cd->mu);
			cd->peer_on |= 1ull << co->cu;
			pthread_mutex_unlock(&cd->mu);
		}
	}
	r = cd->lib->s.MemcpyPeerAsync(pd, co->ctx, ps, cd->ctx, bytes, cd->stream[stream]);
	return r == CUDA_SUCCESS ? 0 : cu_fail(cd, err, "cuMemcpyPeerAsync", r);
}

static void
lib_unref(struct cu_lib *lib)
{
	if (__atomic_sub_fetch(&lib->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	pthread_mutex_lock(&names_mu);
	if (names_lib == lib)
		names_lib = NULL;
	pthread_mutex_unlock(&names_mu);
	dlclose(lib->dl);
	free(lib);
}

static void
cu_close(struct bench_dev *d)
{
	struct cu_dev *cd;
	const struct cu_sym *s;

	if (!d)
		return;
	cd = cu_of(d);
	s = &cd->lib->s;
	/*
	 * Let queued work end before its memory goes (bounded: a GPU that
	 * does not finish within timeout_s is abandoned); a sticky error
	 * answers at once.
	 */
	if (may_call(cd) && !cd->dead) {
		double deadline = clock_mono() + d->timeout_s;

		for (int i = 0; i < NSTREAMS; i++)
			if (wait_stream(cd, i, deadline, NULL) < 0)
				break;
	}
	if (may_call(cd)) {
		for (size_t i = 0; i < cd->nbuf; i++)
			s->MemFree(cd->buf[i].p);
		for (size_t i = 0; i < cd->nhost; i++)
			s->MemFreeHost(cd->host[i].p);
		if (cd->mod)
			s->ModuleUnload(cd->mod);
		undo_setup(cd);
	}
	free(cd->buf);
	free(cd->host);
	pthread_mutex_destroy(&cd->mu);
	lib_unref(cd->lib);
	free(cd);
}

static const struct bench_dev_ops cu_ops = {
	.has = cu_has,
	.mem_info = cu_mem_info,
	.alloc = cu_alloc,
	.free = cu_free,
	.host_alloc = cu_host_alloc,
	.host_free = cu_host_free,
	.write = cu_write,
	.read = cu_read,
	.copy = cu_copy,
	.launch = cu_launch,
	.mark = cu_mark,
	.elapsed = cu_elapsed,
	.sync = cu_sync,
	.close = cu_close,
	.peer_info = cu_peer_info,
	.peer_copy = cu_peer_copy,
};

bool
bench_cuda_is(const struct bench_dev *d)
{
	return d && d->ops == &cu_ops;
}

int
bench_cuda_raw(struct bench_dev *d, int stream, struct bench_cuda_raw *raw, struct err *err)
{
	struct cu_dev *cd;
	int rc;

	if (!bench_cuda_is(d))
		return err_set(err, E_USAGE, "raw: not a CUDA device");
	cd = cu_of(d);
	if (!stream_of(cd, stream, "raw", err))
		return E_USAGE;
	rc = enter(cd, err);
	if (rc < 0)
		return rc;
	raw->ctx = cd->ctx;
	raw->stream = cd->stream[stream];
	raw->dl = cd->lib->dl;
	return 0;
}

int
bench_cuda_ptr(struct bench_dev *d, uint64_t buf, uint64_t off, size_t bytes,
               unsigned long long *ptr, struct err *err)
{
	CUdeviceptr p = 0;
	int rc;

	if (!bench_cuda_is(d))
		return err_set(err, E_USAGE, "raw: not a CUDA device");
	rc = buf_range(cu_of(d), buf, off, bytes, "raw", &p, err);
	if (rc == 0)
		*ptr = p;
	return rc;
}

/* True when path is (or resolves to) the CUDA toolkit's link-time stub. */
static bool
is_stub(const char *path)
{
	char real[PATH_MAX];
	const char *p = realpath(path, real) ? real : path;

	return strstr(p, "/stubs/") || strstr(path, "/stubs/");
}

/* dlopen and resolve; -1 with devs->cuda_reason set. */
static int
load(struct cu_lib *lib, const char *path, const char *named, struct bench_devs *devs)
{
	struct link_map *lm = NULL;
	const char *where;
	void *again;

	lib->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib->dl) {
		const char *e = dlerror();

		if (named)
			snprintf(devs->cuda_reason, sizeof(devs->cuda_reason),
			         "cannot load '%s'%s: %s", path, named, e ? e : "not found");
		else if (!e || strstr(e, "No such file"))
			snprintf(
			        devs->cuda_reason, sizeof(devs->cuda_reason),
			        "libcuda.so.1 not found: no NVIDIA driver (install the NVIDIA driver)");
		else
			snprintf(devs->cuda_reason, sizeof(devs->cuda_reason),
			         "cannot load libcuda.so.1: %s (reinstall the NVIDIA driver)", e);
		return -1;
	}
	where = dlinfo(lib->dl, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && *lm->l_name
	                ? lm->l_name
	                : path;
	str_copy(lib->path, sizeof(lib->path), where);
	if (is_stub(where)) {
		snprintf(
		        devs->cuda_reason, sizeof(devs->cuda_reason),
		        "'%s' is the CUDA toolkit's link-time stub, not the driver's library: remove its directory from LD_LIBRARY_PATH and the loader cache",
		        where);
		goto fail;
	}
	for (size_t i = 0; i < ARRAY_SIZE(sym_rows); i++) {
		void *fn = NULL;
		size_t v;

		for (v = 0; v < ARRAY_SIZE(sym_rows[i].names) && sym_rows[i].names[v]; v++) {
			fn = dlsym(lib->dl, sym_rows[i].names[v]);
			if (fn)
				break;
		}
		if (!fn) {
			snprintf(
			        devs->cuda_reason, sizeof(devs->cuda_reason),
			        "'%s' is missing %s: not the NVIDIA driver's libcuda.so.1, or one older than CUDA 11 (install a current NVIDIA driver)",
			        where, sym_rows[i].names[0]);
			goto fail;
		}
		/* storing an object pointer into a function pointer slot is what dlsym is for */
		memcpy((char *)&lib->s + sym_rows[i].off, &fn, sizeof(fn));
		if (sym_rows[i].off == offsetof(struct cu_sym, DeviceGetUuid))
			lib->uuid_sym = sym_rows[i].names[v];
		else if (sym_rows[i].off == offsetof(struct cu_sym, EventElapsedTime))
			lib->elapsed_sym = sym_rows[i].names[v];
	}
	/*
	 * The driver starts threads of its own that may outlive every context:
	 * unmapping its code under them at the last dlclose() would crash, so
	 * the library, once taken, stays mapped until the process ends.
	 */
	again = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD | RTLD_NODELETE);
	if (again)
		dlclose(again);
	return 0;
fail:
	dlclose(lib->dl);
	lib->dl = NULL;
	return -1;
}

/* Why cuInit failed, with what to do. */
static void
init_reason(const struct cu_lib *lib, CUresult r, struct bench_devs *devs)
{
	const char *str = NULL, *hint;
	char buf[32];

	if (lib->s.GetErrorString(r, &str) != CUDA_SUCCESS || !str)
		str = "";
	switch (r) {
	case CUDA_ERROR_NO_DEVICE:
		hint = "the driver sees no GPU (check nvidia-smi, CUDA_VISIBLE_DEVICES and a container's --gpus)";
		break;
	case CUDA_ERROR_STUB_LIBRARY:
		hint = "this is the CUDA toolkit's stub, not the driver's library (install the NVIDIA driver)";
		break;
	case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
		hint = "libcuda.so.1 and the nvidia kernel module differ in version (reboot after a driver update)";
		break;
	case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
		hint = "the CUDA forward-compatibility library does not support this GPU (take it off LD_LIBRARY_PATH)";
		break;
	case CUDA_ERROR_NOT_PERMITTED:
	case CUDA_ERROR_OPERATING_SYSTEM:
		hint = "check the permissions of /dev/nvidia*";
		break;
	default:
		hint = "see dmesg and nvidia-smi";
		break;
	}
	snprintf(devs->cuda_reason, sizeof(devs->cuda_reason), "cuInit: %s (%d)%s%s: %s",
	         lib_error_name(lib, r, buf, sizeof(buf)), r, *str ? ": " : "", str, hint);
}

static int
attr(const struct cu_lib *lib, CUdevice dev, int which)
{
	int v = 0;

	if (lib->s.DeviceGetAttribute(&v, which, dev) != CUDA_SUCCESS || v < 0)
		return 0;
	return v;
}

/* "0000:17:00.0", lowercase, as sysfs and NVML's legacy bus id write it */
static void
pci_id(const char *raw, char *out, size_t size)
{
	unsigned dom, bus, dev, fn;
	char end;

	if (sscanf(raw, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &end) == 4) {
		snprintf(out, size, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
		return;
	}
	str_copy(out, size, raw);
	for (char *p = out; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
}

static void
fill_info(const struct cu_lib *lib, int ordinal, CUdevice dev, int drv, struct bench_dev_info *in)
{
	CUuuid u;
	char pci[64] = "";
	size_t total = 0;

	str_copy(in->api, sizeof(in->api), "cuda");
	snprintf(in->id, sizeof(in->id), "cuda:%d", ordinal);
	str_copy(in->vendor, sizeof(in->vendor), "NVIDIA");
	if (lib->s.DeviceGetName(in->name, (int)sizeof(in->name), dev) != CUDA_SUCCESS)
		in->name[0] = '\0';
	in->name[sizeof(in->name) - 1] = '\0';
	if (lib->s.DeviceGetUuid(&u, dev) == CUDA_SUCCESS) {
		const unsigned char *b = u.bytes;

		snprintf(in->uuid, sizeof(in->uuid),
		         "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		         b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
		         b[12], b[13], b[14], b[15]);
	}
	if (lib->s.DeviceGetPCIBusId(pci, (int)sizeof(pci), dev) == CUDA_SUCCESS) {
		pci[sizeof(pci) - 1] = '\0';
		pci_id(pci, in->pci_bus_id, sizeof(in->pci_bus_id));
	}
	if (drv > 0)
		snprintf(in->driver, sizeof(in->driver), "%d.%d", drv / 1000, drv % 1000 / 10);
	in->cc_major = attr(lib, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
	in->cc_minor = attr(lib, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
	in->units = (unsigned)attr(lib, dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
	in->clock_mhz = (unsigned)attr(lib, dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000;
	in->mem_clock_mhz = (unsigned)attr(lib, dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) / 1000;
	in->mem_bus_bits = (unsigned)attr(lib, dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
	in->l2_bytes = (unsigned long long)attr(lib, dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
	if (lib->s.DeviceTotalMem(&total, dev) == CUDA_SUCCESS)
		in->mem_total = total;
	in->max_alloc = in->mem_total;
	in->max_block = (size_t)attr(lib, dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
	in->has_fp64 = true;
	in->has_fp16 = true;
	in->host_mapped = attr(lib, dev, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY) != 0;
	in->cpu = false;
}

int
bench_cuda_open(struct bench_devs *devs, const char *path)
{
	const char *env = getenv("GPUSCOPE_CUDA");
	/* how the library was named, for the reason: by the caller, by GPUSCOPE_CUDA, or not */
	const char *named = path ? "" : env && *env ? " (named by GPUSCOPE_CUDA)" : NULL;
	struct cu_lib *lib = xcalloc(1, sizeof(*lib));
	int count = 0, drv = 0, added = 0, rc = 0;
	char buf[32];
	CUresult r;

	if (!path)
		path = env && *env ? env : "libcuda.so.1";
	lib->refs = 1;
	if (load(lib, path, named, devs) < 0) {
		free(lib);
		return -1;
	}
	pthread_mutex_lock(&names_mu);
	if (!names_lib)
		names_lib = lib;
	pthread_mutex_unlock(&names_mu);
	r = lib->s.Init(0);
	if (r != CUDA_SUCCESS) {
		init_reason(lib, r, devs);
		goto out;
	}
	if (lib->s.DriverGetVersion(&drv) != CUDA_SUCCESS)
		drv = 0;
	r = lib->s.DeviceGetCount(&count);
	if (r != CUDA_SUCCESS || count <= 0) {
		snprintf(
		        devs->cuda_reason, sizeof(devs->cuda_reason),
		        "cuDeviceGetCount: %s (%d), %d devices: the driver sees no GPU (check nvidia-smi, CUDA_VISIBLE_DEVICES and a container's --gpus)",
		        lib_error_name(lib, r, buf, sizeof(buf)), r, r == CUDA_SUCCESS ? count : 0);
		goto out;
	}
	for (int i = 0; i < count; i++) {
		struct cu_dev *cd;
		CUdevice dev = 0;

		r = lib->s.DeviceGet(&dev, i);
		if (r != CUDA_SUCCESS) {
			snprintf(devs->cuda_reason, sizeof(devs->cuda_reason),
			         "cuDeviceGet (%d): %s (%d)", i,
			         lib_error_name(lib, r, buf, sizeof(buf)), r);
			continue;
		}
		cd = xcalloc(1, sizeof(*cd));
		cd->lib = lib;
		cd->cu = dev;
		pthread_mutex_init(&cd->mu, NULL);
		cd->dev.ops = &cu_ops;
		cd->dev.priv = cd;
		fill_info(lib, i, dev, drv, &cd->dev.info);
		__atomic_add_fetch(&lib->refs, 1, __ATOMIC_ACQ_REL);
		/* bench_devs_add() closes the device when it fails */
		if (bench_devs_add(devs, &cd->dev) < 0) {
			snprintf(devs->cuda_reason, sizeof(devs->cuda_reason),
			         "out of memory listing the CUDA devices");
			rc = -1;
			break;
		}
		added++;
	}
out:
	if (added > 0 && rc == 0)
		devs->cuda_reason[0] = '\0';
	lib_unref(lib);
	return rc < 0 ? -1 : added;
}
