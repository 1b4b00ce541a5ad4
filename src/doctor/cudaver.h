/*
 * CUDA releases and the drivers they need: the table of data/cuda/drivers.tsv
 * (from NVIDIA's release notes), built into the binary, and version
 * arithmetic on it. Versions compare numerically field by field:
 * "570.124.06" > "570.26".
 */
#ifndef GPUSCOPE_CUDAVER_H
#define GPUSCOPE_CUDAVER_H

#include <stddef.h>

struct cuda_release {
	char cuda[16];          /* "12.4.1" */
	int major, minor;       /* 12, 4 */
	char min_driver[24];    /* full support from this driver on; "" unknown ("?") */
	char compat_driver[24]; /* minor-version compatibility from this one on; "" unknown */
	int nvml;               /* 12040: NVML's / cuDriverGetVersion's form */
};

/* <0, 0, >0 as a is older, the same as, newer than b ("12.4" vs "12.4.0": equal). */
int ver_cmp(const char *a, const char *b);

/* Every release, oldest first. */
size_t cuda_releases(const struct cuda_release **out);

/* The first (GA) release of CUDA major.minor, or NULL when the table has none. */
const struct cuda_release *cuda_release_find(int major, int minor);

/*
 * The newest CUDA (12040 form) that driver fully supports by the table, or 0
 * when the driver is older than every row or the version cannot be read.
 */
int cuda_for_driver(const char *driver);

enum cuda_support {
	CUDA_UNKNOWN = 0,  /* not enough is known to say */
	CUDA_FULL,         /* the driver supports this CUDA */
	CUDA_MINOR_COMPAT, /* runs through minor-version compatibility (limits apply) */
	CUDA_TOO_NEW,      /* needs a newer driver */
};

/*
 * Whether a program built for CUDA major.minor runs on a driver that
 * supports CUDA driver_cuda (12040 form; 0 unknown) and has version driver
 * ("" or NULL unknown). A readable driver older than every row of the
 * table (before CUDA 10.0) makes every release CUDA_TOO_NEW.
 */
enum cuda_support cuda_support(int driver_cuda, const char *driver, int major, int minor);

/*
 * The newest CUDA toolkit (12040 form) a driver of CUDA driver_cuda can
 * install and fully support: the newest release in the table at or below
 * it (a driver of CUDA 12.7, R565, gets 12.6: there is no CUDA 12.7
 * toolkit), or driver_cuda itself when it is newer than every row. 0 for 0.
 */
int cuda_toolkit_for(int driver_cuda);

/* "12.4" from 12040 into buf. */
const char *cuda_ver_str(int nvml, char *buf, size_t size);

#endif
