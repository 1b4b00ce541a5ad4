/*
 * The NVIDIA kernels (src/bench/kernels/gs.cu) as PTX, built into the
 * binary: one image per feature level (sm_75, sm_80, ...), each JIT-compiled
 * by the driver for the device it runs on, so gpuscope needs no CUDA toolkit
 * to build or to run.
 */
#ifndef GPUSCOPE_BENCH_PTX_H
#define GPUSCOPE_BENCH_PTX_H

#include <stdbool.h>

#include "bench/dev.h"

/*
 * The NUL-terminated PTX of the highest level a device of compute
 * capability major.minor can run, with *level set to its name ("sm_80");
 * NULL below the lowest level, with *level set to why.
 */
const char *bench_ptx_image(int cc_major, int cc_minor, const char **level);
/* Whether the image bench_ptx_image() gives for major.minor has kernel k. */
bool bench_ptx_has(int cc_major, int cc_minor, enum bench_kern k);

#endif
