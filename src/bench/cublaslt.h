/*
 * cuBLASLt GEMM on a CUDA device of bench/cuda.c, for the gemm.* tests of
 * bench/suite.c: the number a framework sees (issue 16, clpeak's method in
 * bench-specs.md 1.4). libcublasLt is loaded with dlopen, so neither the
 * build nor a run needs the toolkit: GPUSCOPE_CUBLASLT=PATH when set and not
 * empty (nothing else is tried then), else libcublasLt.so.13, .12, .11 and
 * the unversioned name through the loader's search (LD_LIBRARY_PATH, the
 * loader cache). A PyTorch install's copy is not searched for: name it,
 * e.g. GPUSCOPE_CUBLASLT=.../site-packages/nvidia/cublas/lib/libcublasLt.so.12.
 * A library under a stubs/ directory (the toolkit's link-time stub) is
 * refused. The types, constants and prototypes used are declared in
 * cublaslt.c from the toolkit's cublasLt.h, cublas_api.h and
 * library_types.h.
 *
 * The matrices are square n x n, column-major: C = A B (NN) for every type
 * but fp8, which cuBLASLt runs only as C = A^T B (TN), A stored n x n with
 * its columns the rows of op(A). Element i of a matrix (the linear index of
 * its storage) is bench_gemm_value(): a fixed pseudo-random value in
 * [-1, 1], exactly representable in the input type, so the host can form
 * any element of C from A and B without storing them.
 */
#ifndef GPUSCOPE_BENCH_CUBLASLT_H
#define GPUSCOPE_BENCH_CUBLASLT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bench_dev;
struct err;

enum bench_gemm_type { BG_FP32, BG_TF32, BG_FP16, BG_BF16, BG_FP8, BG_FP64, BG_NTYPES };

/* the heuristic is asked for this many algorithms (clpeak's) */
#define BENCH_GEMM_ALGOS 8

/* "fp32", "tf32", ... */
const char *bench_gemm_type_name(enum bench_gemm_type t);
/* Bytes of an element of A and B, and of C. */
size_t bench_gemm_in_size(enum bench_gemm_type t);
size_t bench_gemm_out_size(enum bench_gemm_type t);
/* Whether A is transposed (fp8: TN). */
bool bench_gemm_trans_a(enum bench_gemm_type t);

/* Element idx of matrix m (0: A, 1: B), as a double (exact in the type). */
double bench_gemm_value(enum bench_gemm_type t, int m, uint64_t idx);
/* Elements first to first + count - 1 of matrix m, encoded in the input type, into out. */
void bench_gemm_fill(enum bench_gemm_type t, int m, uint64_t first, size_t count, void *out);
/* An element of C (out_size bytes at p) as a double. */
double bench_gemm_decode(enum bench_gemm_type t, const void *p);
/*
 * The host's C[i, j] in double from the same inputs, and the tolerance its
 * measured value is held to: 2 u_out |c| + u_acc (8 sqrt(n) ||a_i . b_j||_2
 * + sum |a_ik b_kj|), u_out the output type's unit roundoff, u_acc the
 * accumulation's (bench_gemm_tolerance_text() says it in words).
 */
double bench_gemm_reference(enum bench_gemm_type t, unsigned n, unsigned i, unsigned j,
                            double *tol);
const char *bench_gemm_tolerance_text(enum bench_gemm_type t);

struct bench_gemm;

/*
 * Load the library and make a cuBLASLt handle for device d (a device of
 * bench/cuda.c). Returns 0, or E_NOTSUP with err saying why it cannot
 * ("libcublasLt.so not found: ...", not a CUDA device, the toolkit's stub,
 * a symbol missing, the fake libcuda.so.1 of the tests without
 * GPUSCOPE_CUBLASLT), or the device's status (E_LOST...).
 */
int bench_gemm_open(struct bench_dev *d, struct bench_gemm **out, struct err *err);
/* "cuBLASLt 13.1.0" (cublasLtGetVersion) */
const char *bench_gemm_version(const struct bench_gemm *g);
/* The path the library was loaded from. */
const char *bench_gemm_path(const struct bench_gemm *g);

/*
 * Describe an n x n GEMM of type t over buffers a, b, c (of d's alloc(),
 * each at least n^2 elements) with workspace ws of ws_bytes (0: none), and
 * ask the heuristic for BENCH_GEMM_ALGOS algorithms: their number in
 * *nalgo, in the heuristic's order (its first is its own pick). E_NOTSUP
 * when the library has none for the type on this device (err names the
 * call and its status), E_IO for another failure. A later plan replaces
 * the earlier.
 */
int bench_gemm_plan(struct bench_gemm *g, enum bench_gemm_type t, unsigned n, uint64_t a,
                    uint64_t b, uint64_t c, uint64_t ws, size_t ws_bytes, unsigned *nalgo,
                    struct err *err);
/* Queue one GEMM with the plan's algorithm algo (0 to nalgo - 1) on stream 0. */
int bench_gemm_run(struct bench_gemm *g, unsigned algo, struct err *err);
/* Free the plan and the handle (with the context current); the library stays loaded. */
void bench_gemm_close(struct bench_gemm *g);

#endif
