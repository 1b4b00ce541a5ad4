/*
 * The fake libcuda.so.1's ABI held against NVIDIA's cuda.h (built only
 * where /usr/local/cuda/include/cuda.h exists, with
 * -D__CUDA_API_VERSION_INTERNAL so that cuda.h declares every exported name,
 * the plain ones beside the _v2 ones): cuda_abi.h's prototypes are
 * redeclared over cuda.h's types, so a prototype that differs is a
 * conflicting declaration; its constants and typedefs are compared below.
 * Nothing here runs.
 */
#include <cuda.h>

#define FCU_TYPES_FROM_CUDA_H
#define FCU_T(name) fcu_##name
#include "cuda_abi.h"

#define SAME_VALUE(name, value, ...) _Static_assert((long long)(name) == (value), #name);
FCU_RESULTS(SAME_VALUE)
FCU_ATTRS(SAME_VALUE)
FCU_CONSTS(SAME_VALUE)

#define SAME_TYPE(t) _Static_assert(__builtin_types_compatible_p(fcu_##t, t), #t);
SAME_TYPE(CUresult)
SAME_TYPE(CUdevice_attribute)
SAME_TYPE(CUjit_option)
SAME_TYPE(CUdriverProcAddressQueryResult)
SAME_TYPE(CUdevice_P2PAttribute)
SAME_TYPE(CUdevice)
SAME_TYPE(CUdeviceptr)
SAME_TYPE(cuuint64_t)
SAME_TYPE(CUcontext)
SAME_TYPE(CUmodule)
SAME_TYPE(CUfunction)
SAME_TYPE(CUstream)
SAME_TYPE(CUevent)
SAME_TYPE(CUexecAffinityParam)
SAME_TYPE(CUprocessState)
_Static_assert(sizeof(fcu_CUuuid) == sizeof(CUuuid), "CUuuid");
_Static_assert(sizeof(fcu_CUctxCreateParams) == sizeof(CUctxCreateParams), "CUctxCreateParams");
_Static_assert(sizeof(fcu_CUcheckpointLockArgs) == sizeof(CUcheckpointLockArgs), "LockArgs");
_Static_assert(sizeof(fcu_CUcheckpointCheckpointArgs) == sizeof(CUcheckpointCheckpointArgs),
               "CheckpointArgs");
_Static_assert(sizeof(fcu_CUcheckpointRestoreArgs) == sizeof(CUcheckpointRestoreArgs),
               "RestoreArgs");
_Static_assert(sizeof(fcu_CUcheckpointUnlockArgs) == sizeof(CUcheckpointUnlockArgs), "UnlockArgs");
_Static_assert(sizeof(CUresult) == sizeof(unsigned int), "an enum is an unsigned int");

/* and each entry point as a pointer of cuda.h's prototype (its PFN type's shape) */
#define PFN(name) __typeof__(name) *const fcu_pfn_##name = name;
PFN(cuInit)
PFN(cuDriverGetVersion)
PFN(cuDeviceGet)
PFN(cuDeviceGetCount)
PFN(cuDeviceGetName)
PFN(cuDeviceGetUuid)
PFN(cuDeviceGetUuid_v2)
PFN(cuDeviceTotalMem_v2)
PFN(cuDeviceGetAttribute)
PFN(cuDeviceGetPCIBusId)
PFN(cuDevicePrimaryCtxRetain)
PFN(cuDevicePrimaryCtxRelease)
PFN(cuDevicePrimaryCtxRelease_v2)
PFN(cuCtxCreate)
PFN(cuCtxCreate_v2)
PFN(cuCtxCreate_v3)
PFN(cuCtxCreate_v4)
PFN(cuCtxDestroy)
PFN(cuCtxDestroy_v2)
PFN(cuCtxSetCurrent)
PFN(cuCtxGetCurrent)
PFN(cuCtxGetDevice)
PFN(cuCtxGetDevice_v2)
PFN(cuCtxSynchronize)
PFN(cuCtxSynchronize_v2)
PFN(cuModuleLoadData)
PFN(cuModuleLoadDataEx)
PFN(cuModuleUnload)
PFN(cuModuleGetFunction)
PFN(cuLaunchKernel)
PFN(cuMemGetInfo_v2)
PFN(cuMemAlloc_v2)
PFN(cuMemFree_v2)
PFN(cuMemAllocHost_v2)
PFN(cuMemHostAlloc)
PFN(cuMemFreeHost)
PFN(cuMemHostGetDevicePointer_v2)
PFN(cuMemcpyHtoD_v2)
PFN(cuMemcpyDtoH_v2)
PFN(cuMemcpyDtoD_v2)
PFN(cuMemcpyHtoDAsync_v2)
PFN(cuMemcpyDtoHAsync_v2)
PFN(cuMemcpyDtoDAsync_v2)
PFN(cuMemsetD8_v2)
PFN(cuMemsetD32_v2)
PFN(cuStreamCreate)
PFN(cuStreamDestroy)
PFN(cuStreamDestroy_v2)
PFN(cuStreamQuery)
PFN(cuStreamSynchronize)
PFN(cuEventCreate)
PFN(cuEventDestroy)
PFN(cuEventDestroy_v2)
PFN(cuEventRecord)
PFN(cuEventQuery)
PFN(cuEventSynchronize)
PFN(cuEventElapsedTime)
PFN(cuEventElapsedTime_v2)
PFN(cuGetErrorName)
PFN(cuGetErrorString)
PFN(cuDeviceCanAccessPeer)
PFN(cuDeviceGetP2PAttribute)
PFN(cuCtxEnablePeerAccess)
PFN(cuCtxDisablePeerAccess)
PFN(cuMemcpyPeer)
PFN(cuMemcpyPeerAsync)
PFN(cuGetProcAddress)
PFN(cuGetProcAddress_v2)
PFN(cuCheckpointProcessGetState)
PFN(cuCheckpointProcessGetRestoreThreadId)
PFN(cuCheckpointProcessLock)
PFN(cuCheckpointProcessCheckpoint)
PFN(cuCheckpointProcessRestore)
PFN(cuCheckpointProcessUnlock)
