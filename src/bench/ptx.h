/*
 * The NVIDIA kernels (src/bench/kernels/gs.cu) as PTX, built into the
 * binary: one image per feature level (sm_75, sm_80, sm_89), each
 * JIT-compiled by the driver for the device it runs on, so gpuscope needs
 * no CUDA toolkit to build or to run. A later level holds every kernel of
 * the one before it and the kernels its architecture adds (gs.cu's header
 * says which and why).
 */
#ifndef GPUSCOPE_BENCH_PTX_H
#define GPUSCOPE_BENCH_PTX_H

#include <stdbool.h>

#include "bench/dev.h"

/*
 * The NUL-terminated PTX of the highest level a device of compute
 * capability major.minor can run (7.5 and up: sm_75; 8.0 and up: sm_80; 8.9
 * and up: sm_89), with *level set to its name ("sm_80"); NULL below the
 * lowest level, with *level set to why (a constant string). level may be
 * NULL.
 */
const char *bench_ptx_image(int cc_major, int cc_minor, const char **level);
/*
 * Whether the image bench_ptx_image() gives for major.minor has kernel k
 * (as an .entry of its text); false where there is no image.
 */
bool bench_ptx_has(int cc_major, int cc_minor, enum bench_kern k);

#endif
