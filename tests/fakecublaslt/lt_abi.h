/*
 * The part of cuBLASLt's ABI the fake libcublasLt.so.13 implements, from
 * the toolkit's cublasLt.h, cublas_api.h and library_types.h (CUDA 13.0):
 * the types (an enum is an unsigned int, as the compiler gives a C enum
 * without negative values), the constants used and the prototypes.
 *
 * With FLT_TYPES_FROM_HEADER defined (abi_check.c, after cublasLt.h) the
 * header's types stand, FLT_T() renames this file's so that both are there
 * to compare, and the prototypes below are redeclarations of the header's:
 * one that differs does not compile.
 */
#ifndef GPUSCOPE_FAKECUBLASLT_ABI_H
#define GPUSCOPE_FAKECUBLASLT_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifndef FLT_TYPES_FROM_HEADER
#define FLT_T(name) name
#endif

typedef unsigned int FLT_T(cublasStatus_t);
typedef unsigned int FLT_T(cublasComputeType_t);
typedef unsigned int FLT_T(cudaDataType_t);
typedef unsigned int FLT_T(cudaDataType);
typedef unsigned int FLT_T(cublasOperation_t);
typedef unsigned int FLT_T(cublasLtMatmulDescAttributes_t);
typedef unsigned int FLT_T(cublasLtMatmulPreferenceAttributes_t);
typedef struct cublasLtContext *FLT_T(cublasLtHandle_t);
typedef struct CUstream_st *FLT_T(cudaStream_t);
typedef struct {
	uint64_t data[32];
} FLT_T(cublasLtMatmulDescOpaque_t);
typedef FLT_T(cublasLtMatmulDescOpaque_t) * FLT_T(cublasLtMatmulDesc_t);
typedef struct {
	uint64_t data[8];
} FLT_T(cublasLtMatrixLayoutOpaque_t);
typedef FLT_T(cublasLtMatrixLayoutOpaque_t) * FLT_T(cublasLtMatrixLayout_t);
typedef struct {
	uint64_t data[8];
} FLT_T(cublasLtMatmulPreferenceOpaque_t);
typedef FLT_T(cublasLtMatmulPreferenceOpaque_t) * FLT_T(cublasLtMatmulPreference_t);
typedef struct {
	uint64_t data[8];
} FLT_T(cublasLtMatmulAlgo_t);
typedef struct {
	FLT_T(cublasLtMatmulAlgo_t) algo;
	size_t workspaceSize;
	FLT_T(cublasStatus_t) state;
	float wavesCount;
	int reserved[4];
} FLT_T(cublasLtMatmulHeuristicResult_t);

/* the constants: X(name, value) */
#define FLT_CONSTS(X)                         \
	X(CUBLAS_STATUS_SUCCESS, 0)           \
	X(CUBLAS_STATUS_NOT_INITIALIZED, 1)   \
	X(CUBLAS_STATUS_ALLOC_FAILED, 3)      \
	X(CUBLAS_STATUS_INVALID_VALUE, 7)     \
	X(CUBLAS_STATUS_EXECUTION_FAILED, 13) \
	X(CUBLAS_STATUS_NOT_SUPPORTED, 15)    \
	X(CUBLAS_OP_N, 0)                     \
	X(CUBLAS_OP_T, 1)                     \
	X(CUBLAS_COMPUTE_16F, 64)             \
	X(CUBLAS_COMPUTE_32F, 68)             \
	X(CUBLAS_COMPUTE_64F, 70)             \
	X(CUBLAS_COMPUTE_32F_FAST_TF32, 77)   \
	X(CUDA_R_32F, 0)                      \
	X(CUDA_R_64F, 1)                      \
	X(CUDA_R_16F, 2)                      \
	X(CUDA_R_16BF, 14)                    \
	X(CUDA_R_8F_E4M3, 28)                 \
	X(CUBLASLT_MATMUL_DESC_TRANSA, 3)     \
	X(CUBLASLT_MATMUL_DESC_TRANSB, 4)     \
	X(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, 1)

#define FLT_ENUM(name, value) FLT_##name = value,
enum { FLT_CONSTS(FLT_ENUM) };
#undef FLT_ENUM

#define FLT_API __attribute__((visibility("default")))

FLT_API cublasStatus_t cublasLtCreate(cublasLtHandle_t *lightHandle);
FLT_API cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle);
FLT_API size_t cublasLtGetVersion(void);
FLT_API cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc,
                                                cublasComputeType_t computeType,
                                                cudaDataType_t scaleType);
FLT_API cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc);
FLT_API cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                                      cublasLtMatmulDescAttributes_t attr,
                                                      const void *buf, size_t sizeInBytes);
FLT_API cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout,
                                                  cudaDataType type, uint64_t rows, uint64_t cols,
                                                  int64_t ld);
FLT_API cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout);
FLT_API cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref);
FLT_API cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref);
FLT_API cublasStatus_t cublasLtMatmulPreferenceSetAttribute(
        cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
        size_t sizeInBytes);
FLT_API cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
        cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,
        cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc,
        cublasLtMatrixLayout_t Ddesc, cublasLtMatmulPreference_t preference, int requestedAlgoCount,
        cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int *returnAlgoCount);
FLT_API cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle,
                                      cublasLtMatmulDesc_t computeDesc, const void *alpha,
                                      const void *A, cublasLtMatrixLayout_t Adesc, const void *B,
                                      cublasLtMatrixLayout_t Bdesc, const void *beta, const void *C,
                                      cublasLtMatrixLayout_t Cdesc, void *D,
                                      cublasLtMatrixLayout_t Ddesc,
                                      const cublasLtMatmulAlgo_t *algo, void *workspace,
                                      size_t workspaceSizeInBytes, cudaStream_t stream);

#endif
