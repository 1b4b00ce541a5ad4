/*
 * The fake libcublasLt.so.13's ABI held against the toolkit's cublasLt.h
 * (built only where it is installed): lt_abi.h's prototypes redeclared
 * over the header's types (one that differs is a conflicting declaration),
 * its constants and type sizes compared. Nothing here runs.
 */
#include <cublasLt.h>
#include <stddef.h>

#define FLT_TYPES_FROM_HEADER
#define FLT_T(name) flt_##name
#include "lt_abi.h"

#define SAME_VALUE(name, value) _Static_assert((long long)(name) == (value), #name);
FLT_CONSTS(SAME_VALUE)

#define SAME_SIZE(t) _Static_assert(sizeof(flt_##t) == sizeof(t), #t);
SAME_SIZE(cublasStatus_t)
SAME_SIZE(cublasComputeType_t)
SAME_SIZE(cudaDataType_t)
SAME_SIZE(cublasOperation_t)
SAME_SIZE(cublasLtMatmulDescOpaque_t)
SAME_SIZE(cublasLtMatrixLayoutOpaque_t)
SAME_SIZE(cublasLtMatmulPreferenceOpaque_t)
SAME_SIZE(cublasLtMatmulAlgo_t)
SAME_SIZE(cublasLtMatmulHeuristicResult_t)
_Static_assert(offsetof(flt_cublasLtMatmulHeuristicResult_t, state) ==
                       offsetof(cublasLtMatmulHeuristicResult_t, state),
               "state");
_Static_assert(offsetof(flt_cublasLtMatmulHeuristicResult_t, wavesCount) ==
                       offsetof(cublasLtMatmulHeuristicResult_t, wavesCount),
               "wavesCount");
_Static_assert(__builtin_types_compatible_p(flt_cudaStream_t, cudaStream_t), "cudaStream_t");
