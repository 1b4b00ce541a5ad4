/*
 * NVIDIA GPUs for bench and burn through the CUDA driver API (bench/dev.h's
 * struct bench_dev_ops): libcuda.so.1 is loaded with dlopen and the kernels
 * are the PTX of bench/ptx.h, JIT-compiled by the driver, so neither the
 * build nor a run needs the CUDA toolkit. The few types, constants and
 * prototypes used are declared in cuda.c from the toolkit's cuda.h.
 *
 * Statuses of the device operations (core/err.h): E_IO for an ordinary
 * failure of a call, out of memory included (the message names
 * CUDA_ERROR_OUT_OF_MEMORY); E_USAGE for a bad argument caught before the
 * driver is asked (an unknown buffer, a range past its end, a launch whose
 * arguments do not match the kernel's parameters in dev.h); E_NOTSUP for a
 * kernel the device's PTX lacks, or no PTX for its architecture; E_LOST
 * once the context has a sticky error (CUDA_ERROR_LAUNCH_FAILED,
 * _ILLEGAL_ADDRESS, _ECC_UNCORRECTABLE, ...); E_TIMEOUT when sync() or
 * elapsed() waited past d->timeout_s. After E_LOST or E_TIMEOUT every later
 * operation of that device fails at once with the same status and message,
 * and a device that timed out is abandoned: close() asks nothing more of
 * its driver (a hung GPU would hang the call), its memory goes back when
 * the process ends.
 *
 * The device's context (the primary context, two streams, BENCH_MARKS
 * events) is made by its first operation, and the PTX module by its first
 * launch or has(): opening stays cheap. Every operation makes the context
 * current on the calling thread, so each device may be driven from a
 * thread of its own.
 *
 * Test hook: GPUSCOPE_BENCH_PTX=FILE loads FILE's PTX text instead of the
 * built-in image; has(k) is then whether FILE has kernel k.
 */
#ifndef GPUSCOPE_BENCH_CUDA_H
#define GPUSCOPE_BENCH_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bench_dev;
struct bench_devs;
struct err;

/*
 * dlopen path (NULL: GPUSCOPE_CUDA when set and not empty, else
 * "libcuda.so.1"), cuInit(0), and add one struct bench_dev per CUDA device
 * to devs with bench_devs_add(). Returns the number added (0 or more), or
 * -1 when the library cannot be used (not found, the toolkit's link stub, a
 * symbol missing, out of memory growing devs). When none is added,
 * devs->cuda_reason says why and what to do ("libcuda.so.1 not found: no
 * NVIDIA driver (install the NVIDIA driver)", cuInit's error by name and
 * string, ...); it is left alone when devices are added.
 */
int bench_cuda_open(struct bench_devs *devs, const char *path);

/*
 * The name of a CUresult ("CUDA_ERROR_OUT_OF_MEMORY"): from cuGetErrorName
 * while a library opened by bench_cuda_open() is loaded, else from a table
 * of our own (CUDA 13.0's codes); "CUDA error N", written into buf, for a
 * code neither knows.
 */
const char *bench_cuda_error_name(int code, char *buf, size_t size);

/*
 * For a library that queues its own work on a device of this backend
 * (cuBLASLt, bench/cublaslt.c). bench_cuda_is: whether d is one.
 * bench_cuda_raw: d's context (made if need be, and current on this
 * thread), its stream of index stream (0 or 1) as CUstream, and the
 * libcuda.so.1 handle it was opened with; 0, or the status and err of the
 * device's operations (E_LOST once lost). bench_cuda_ptr: the CUdeviceptr
 * of bytes [off, off + bytes) of buffer buf of alloc(), or E_USAGE.
 */
struct bench_cuda_raw {
	void *ctx;    /* CUcontext */
	void *stream; /* CUstream */
	void *dl;     /* dlopen()'s handle of the driver's library */
};

bool bench_cuda_is(const struct bench_dev *d);
int bench_cuda_raw(struct bench_dev *d, int stream, struct bench_cuda_raw *raw, struct err *err);
int bench_cuda_ptr(struct bench_dev *d, uint64_t buf, uint64_t off, size_t bytes,
                   unsigned long long *ptr, struct err *err);

#endif
