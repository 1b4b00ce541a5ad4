/*
 * The part of the CUDA driver API's binary interface (cuda.h of CUDA 13.0)
 * that the fake libcuda.so.1 exports: the types, the constants it uses and
 * the prototypes under their exported names (the _v2 names cuda.h maps the
 * plain ones to, and the plain ones where NVIDIA's library has both with the
 * same prototype). Written from the header's facts so that the build needs
 * no toolkit; abi_check.c holds every line of it against the real cuda.h.
 *
 * With FCU_TYPES_FROM_CUDA_H defined (abi_check.c, after including cuda.h)
 * the types and constants below are not declared (cuda.h's are in scope)
 * and FCU_T() renames this file's typedefs, so that the prototypes are
 * checked against the real types and the typedefs against the real ones.
 */
#ifndef GPUSCOPE_FAKECUDA_CUDA_ABI_H
#define GPUSCOPE_FAKECUDA_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

/*
 * CUresult: name, value, what cuGetErrorString says (the driver's strings).
 */
#define FCU_RESULTS(X)                                                                             \
	X(CUDA_SUCCESS, 0, "no error")                                                             \
	X(CUDA_ERROR_INVALID_VALUE, 1, "invalid argument")                                         \
	X(CUDA_ERROR_OUT_OF_MEMORY, 2, "out of memory")                                            \
	X(CUDA_ERROR_NOT_INITIALIZED, 3, "initialization error")                                   \
	X(CUDA_ERROR_DEINITIALIZED, 4, "driver shutting down")                                     \
	X(CUDA_ERROR_STUB_LIBRARY, 34, "CUDA driver is a stub library")                            \
	X(CUDA_ERROR_DEVICE_UNAVAILABLE, 46, "CUDA-capable device(s) is/are busy or unavailable")  \
	X(CUDA_ERROR_NO_DEVICE, 100, "no CUDA-capable device is detected")                         \
	X(CUDA_ERROR_INVALID_DEVICE, 101, "invalid device ordinal")                                \
	X(CUDA_ERROR_INVALID_IMAGE, 200, "device kernel image is invalid")                         \
	X(CUDA_ERROR_INVALID_CONTEXT, 201, "invalid device context")                               \
	X(CUDA_ERROR_NO_BINARY_FOR_GPU, 209,                                                       \
	  "no kernel image is available for execution on the device")                              \
	X(CUDA_ERROR_ECC_UNCORRECTABLE, 214, "uncorrectable ECC error encountered")                \
	X(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, 217,                                                 \
	  "peer access is not supported between these two devices")                                \
	X(CUDA_ERROR_INVALID_PTX, 218, "a PTX JIT compilation failed")                             \
	X(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, 221, "PTX JIT compiler library not found")            \
	X(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222,                                                 \
	  "the provided PTX was compiled with an unsupported toolchain.")                          \
	X(CUDA_ERROR_INVALID_SOURCE, 300, "device kernel image is invalid")                        \
	X(CUDA_ERROR_FILE_NOT_FOUND, 301, "file not found")                                        \
	X(CUDA_ERROR_OPERATING_SYSTEM, 304,                                                        \
	  "OS call failed or operation not supported on this OS")                                  \
	X(CUDA_ERROR_INVALID_HANDLE, 400, "invalid resource handle")                               \
	X(CUDA_ERROR_ILLEGAL_STATE, 401, "the operation cannot be performed in the present state") \
	X(CUDA_ERROR_NOT_FOUND, 500, "named symbol not found")                                     \
	X(CUDA_ERROR_NOT_READY, 600, "device not ready")                                           \
	X(CUDA_ERROR_ILLEGAL_ADDRESS, 700, "an illegal memory access was encountered")             \
	X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701, "too many resources requested for launch")      \
	X(CUDA_ERROR_LAUNCH_TIMEOUT, 702, "the launch timed out and was terminated")               \
	X(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, 704, "peer access is already enabled")           \
	X(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, 705, "peer access has not been enabled")             \
	X(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, 708,                                                  \
	  "cannot set while device is active in this process")                                     \
	X(CUDA_ERROR_CONTEXT_IS_DESTROYED, 709, "context is destroyed")                            \
	X(CUDA_ERROR_ASSERT, 710, "device-side assert triggered")                                  \
	X(CUDA_ERROR_HARDWARE_STACK_ERROR, 714, "hardware stack error")                            \
	X(CUDA_ERROR_ILLEGAL_INSTRUCTION, 715, "an illegal instruction was encountered")           \
	X(CUDA_ERROR_MISALIGNED_ADDRESS, 716, "misaligned address")                                \
	X(CUDA_ERROR_LAUNCH_FAILED, 719, "unspecified launch failure")                             \
	X(CUDA_ERROR_NOT_PERMITTED, 800, "operation not permitted")                                \
	X(CUDA_ERROR_NOT_SUPPORTED, 801, "operation not supported")                                \
	X(CUDA_ERROR_SYSTEM_NOT_READY, 802, "system not yet initialized")                          \
	X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803,                                                  \
	  "system has unsupported display driver / cuda driver combination")                       \
	X(CUDA_ERROR_UNKNOWN, 999, "unknown error")

/* CUdevice_attribute: the ones the fake answers */
#define FCU_ATTRS(X)                                                    \
	X(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1)                 \
	X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 2)                       \
	X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 3)                       \
	X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 4)                       \
	X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 5)                        \
	X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 6)                        \
	X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 7)                        \
	X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 8)           \
	X(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, 9)                 \
	X(CU_DEVICE_ATTRIBUTE_WARP_SIZE, 10)                            \
	X(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 12)              \
	X(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 13)                           \
	X(CU_DEVICE_ATTRIBUTE_GPU_OVERLAP, 15)                          \
	X(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 16)                 \
	X(CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT, 17)                  \
	X(CU_DEVICE_ATTRIBUTE_INTEGRATED, 18)                           \
	X(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, 19)                  \
	X(CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, 20)                         \
	X(CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, 31)                   \
	X(CU_DEVICE_ATTRIBUTE_ECC_ENABLED, 32)                          \
	X(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 33)                           \
	X(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, 34)                        \
	X(CU_DEVICE_ATTRIBUTE_TCC_DRIVER, 35)                           \
	X(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 36)                    \
	X(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 37)              \
	X(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 38)                        \
	X(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 39)       \
	X(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, 40)                   \
	X(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 41)                   \
	X(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, 50)                        \
	X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 75)             \
	X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 76)             \
	X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 81) \
	X(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, 82)     \
	X(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 83)                       \
	X(CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD, 84)                      \
	X(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, 88)               \
	X(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, 95)                   \
	X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 97)    \
	X(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, 106)

/* The other enumerators used: flags, JIT options, cuGetProcAddress's answers */
#define FCU_CONSTS(X)                                            \
	X(CU_CTX_SCHED_MASK, 0x07)                               \
	X(CU_CTX_MAP_HOST, 0x08)                                 \
	X(CU_STREAM_DEFAULT, 0x0)                                \
	X(CU_STREAM_NON_BLOCKING, 0x1)                           \
	X(CU_EVENT_DEFAULT, 0x0)                                 \
	X(CU_EVENT_BLOCKING_SYNC, 0x1)                           \
	X(CU_EVENT_DISABLE_TIMING, 0x2)                          \
	X(CU_JIT_INFO_LOG_BUFFER, 3)                             \
	X(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, 4)                  \
	X(CU_JIT_ERROR_LOG_BUFFER, 5)                            \
	X(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, 6)                 \
	X(CU_GET_PROC_ADDRESS_DEFAULT, 0)                        \
	X(CU_PROCESS_STATE_RUNNING, 0)                           \
	X(CU_PROCESS_STATE_LOCKED, 1)                            \
	X(CU_PROCESS_STATE_CHECKPOINTED, 2)                      \
	X(CU_PROCESS_STATE_FAILED, 3)                            \
	X(CU_GET_PROC_ADDRESS_LEGACY_STREAM, 1)                  \
	X(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, 2)      \
	X(CU_GET_PROC_ADDRESS_SUCCESS, 0)                        \
	X(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, 1)               \
	X(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, 2)         \
	X(CU_MEMHOSTALLOC_PORTABLE, 0x01)                        \
	X(CU_MEMHOSTALLOC_DEVICEMAP, 0x02)                       \
	X(CU_MEMHOSTALLOC_WRITECOMBINED, 0x04)                   \
	X(CU_LAUNCH_PARAM_END_AS_INT, 0x00)                      \
	X(CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT, 0x01)           \
	X(CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT, 0x02)              \
	X(CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, 0x01)        \
	X(CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0x02)        \
	X(CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, 0x03) \
	X(CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED, 0x04)

/* cuda.h's CU_STREAM_LEGACY and CU_STREAM_PER_THREAD, ((CUstream)0x1) and 0x2 */
#define FCU_STREAM_LEGACY     ((CUstream)0x1)
#define FCU_STREAM_PER_THREAD ((CUstream)0x2)

#define FCU_DEFINE_ENUM(name, value, ...) name = value,

#ifndef FCU_TYPES_FROM_CUDA_H
#define FCU_T(name) name
enum { FCU_RESULTS(FCU_DEFINE_ENUM) };
enum { FCU_ATTRS(FCU_DEFINE_ENUM) };
enum { FCU_CONSTS(FCU_DEFINE_ENUM) };
#endif

/*
 * The types. cuda.h's enums are unsigned int in the ABI (GCC and clang give
 * an enum without negative values that type), so they are unsigned int
 * here; the handles keep cuda.h's struct tags (incomplete to the caller,
 * defined in fake.h), so a handle of the fake is a handle of cuda.h.
 */
typedef unsigned int FCU_T(CUresult);
typedef unsigned int FCU_T(CUdevice_attribute);
typedef unsigned int FCU_T(CUjit_option);
typedef unsigned int FCU_T(CUdriverProcAddressQueryResult);
typedef unsigned int FCU_T(CUdevice_P2PAttribute);
typedef unsigned int FCU_T(CUprocessState);
typedef int FCU_T(CUdevice);
typedef unsigned long long FCU_T(CUdeviceptr);
typedef uint64_t FCU_T(cuuint64_t);
typedef struct CUctx_st *FCU_T(CUcontext);
typedef struct CUmod_st *FCU_T(CUmodule);
typedef struct CUfunc_st *FCU_T(CUfunction);
typedef struct CUstream_st *FCU_T(CUstream);
typedef struct CUevent_st *FCU_T(CUevent);
typedef struct FCU_T(CUuuid_st) {
	char bytes[16];
} FCU_T(CUuuid);
/* cuCtxCreate_v3's and _v4's parameters (the fake reads none of them) */
typedef struct CUexecAffinityParam_st FCU_T(CUexecAffinityParam);
typedef struct FCU_T(CUctxCreateParams_st) {
	void *execAffinityParams;
	int numExecAffinityParams;
	void *cigParams;
} FCU_T(CUctxCreateParams);
/* the CUDA checkpoint's optional arguments (CUDA 12.8; the fake reads timeoutMs only) */
typedef struct FCU_T(CUcheckpointLockArgs_st) {
	unsigned int timeoutMs;
	unsigned int reserved0;
	uint64_t reserved1[7];
} FCU_T(CUcheckpointLockArgs);
typedef struct FCU_T(CUcheckpointCheckpointArgs_st) {
	uint64_t reserved[8];
} FCU_T(CUcheckpointCheckpointArgs);
typedef struct FCU_T(CUcheckpointRestoreArgs_st) {
	void *gpuPairs;
	unsigned int gpuPairsCount;
	char reserved[52 - sizeof(void *)];
	uint64_t reserved1;
} FCU_T(CUcheckpointRestoreArgs);
typedef struct FCU_T(CUcheckpointUnlockArgs_st) {
	uint64_t reserved[8];
} FCU_T(CUcheckpointUnlockArgs);

/*
 * The entry points. NVIDIA's library exports both names where a pair is
 * listed; the plain 32-bit ones of the CUDA 2 era (cuMemAlloc with an
 * unsigned int size...) are not exported by the fake.
 */
#define FCU_API __attribute__((visibility("default")))

FCU_API CUresult cuGetErrorName(CUresult error, const char **pStr);
FCU_API CUresult cuGetErrorString(CUresult error, const char **pStr);
FCU_API CUresult cuInit(unsigned int Flags);
FCU_API CUresult cuDriverGetVersion(int *driverVersion);
FCU_API CUresult cuDeviceGet(CUdevice *device, int ordinal);
FCU_API CUresult cuDeviceGetCount(int *count);
FCU_API CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
FCU_API CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev);
FCU_API CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev);
FCU_API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev);
FCU_API CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev);
FCU_API CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev);
FCU_API CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
FCU_API CUresult cuDevicePrimaryCtxRelease(CUdevice dev);
FCU_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);
FCU_API CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev);
FCU_API CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
FCU_API CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                                unsigned int flags, CUdevice dev);
FCU_API CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
                                unsigned int flags, CUdevice dev);
FCU_API CUresult cuCtxDestroy(CUcontext ctx);
FCU_API CUresult cuCtxDestroy_v2(CUcontext ctx);
FCU_API CUresult cuCtxSetCurrent(CUcontext ctx);
FCU_API CUresult cuCtxGetCurrent(CUcontext *pctx);
FCU_API CUresult cuCtxGetDevice(CUdevice *device);
FCU_API CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx);
FCU_API CUresult cuCtxSynchronize(void);
FCU_API CUresult cuCtxSynchronize_v2(CUcontext ctx);
FCU_API CUresult cuModuleLoadData(CUmodule *module, const void *image);
FCU_API CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                    CUjit_option *options, void **optionValues);
FCU_API CUresult cuModuleUnload(CUmodule hmod);
FCU_API CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name);
FCU_API CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                unsigned int gridDimZ, unsigned int blockDimX,
                                unsigned int blockDimY, unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream, void **kernelParams,
                                void **extra);
FCU_API CUresult cuMemGetInfo_v2(size_t *free, size_t *total);
FCU_API CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
FCU_API CUresult cuMemFree_v2(CUdeviceptr dptr);
FCU_API CUresult cuMemAllocHost_v2(void **pp, size_t bytesize);
FCU_API CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags);
FCU_API CUresult cuMemFreeHost(void *p);
FCU_API CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags);
FCU_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
FCU_API CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
FCU_API CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount);
FCU_API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                                      CUstream hStream);
FCU_API CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                      CUstream hStream);
FCU_API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                      size_t ByteCount, CUstream hStream);
FCU_API CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N);
FCU_API CUresult cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N);
FCU_API CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags);
FCU_API CUresult cuStreamDestroy(CUstream hStream);
FCU_API CUresult cuStreamDestroy_v2(CUstream hStream);
FCU_API CUresult cuStreamQuery(CUstream hStream);
FCU_API CUresult cuStreamSynchronize(CUstream hStream);
FCU_API CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags);
FCU_API CUresult cuEventDestroy(CUevent hEvent);
FCU_API CUresult cuEventDestroy_v2(CUevent hEvent);
FCU_API CUresult cuEventRecord(CUevent hEvent, CUstream hStream);
FCU_API CUresult cuEventQuery(CUevent hEvent);
FCU_API CUresult cuEventSynchronize(CUevent hEvent);
FCU_API CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);
FCU_API CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd);
/* peer access between devices (contexts) */
FCU_API CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev);
FCU_API CUresult cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib,
                                         CUdevice srcDevice, CUdevice dstDevice);
FCU_API CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags);
FCU_API CUresult cuCtxDisablePeerAccess(CUcontext peerContext);
FCU_API CUresult cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                              CUcontext srcContext, size_t ByteCount);
FCU_API CUresult cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext,
                                   CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount,
                                   CUstream hStream);
FCU_API CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                  cuuint64_t flags);
FCU_API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                     cuuint64_t flags,
                                     CUdriverProcAddressQueryResult *symbolStatus);
/*
 * The CUDA checkpoint (checkpoint.c): each process's state in a file of its
 * own under FAKE_CUDA_CHECKPOINT_DIR, so that a controller process (the
 * queue's daemon) and the process it acts on see the same state.
 */
FCU_API CUresult cuCheckpointProcessGetState(int pid, CUprocessState *state);
FCU_API CUresult cuCheckpointProcessGetRestoreThreadId(int pid, int *tid);
FCU_API CUresult cuCheckpointProcessLock(int pid, CUcheckpointLockArgs *args);
FCU_API CUresult cuCheckpointProcessCheckpoint(int pid, CUcheckpointCheckpointArgs *args);
FCU_API CUresult cuCheckpointProcessRestore(int pid, CUcheckpointRestoreArgs *args);
FCU_API CUresult cuCheckpointProcessUnlock(int pid, CUcheckpointUnlockArgs *args);

#endif
