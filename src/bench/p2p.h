/*
 * GPU to GPU copies of gpuscope bench (bench-specs.md 1.2: nvbandwidth's
 * device_to_device copy-engine tests): for each ordered pair of CUDA
 * devices that can reach each other's memory, a copy from one to the other
 * behind a spin kernel, and both directions at once, with what the driver
 * tells of the link between them. Bytes are counted once (nvbandwidth's
 * convention; cuda-samples' bandwidthTest counts a device-to-device copy
 * twice). Nothing here prints.
 */
#ifndef GPUSCOPE_BENCH_P2P_H
#define GPUSCOPE_BENCH_P2P_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/suite.h"

struct bench_dev_info;
struct bench_devs;
struct err;

/* One pair's figure: src to dst, or both ways at once (bidir). */
struct bench_p2p_result {
	const char *name; /* "p2p.ce" (src to dst), "p2p.ce.bidir", "p2p" (no peer access) */
	size_t src, dst;  /* indexes into devs */
	char src_id[24], dst_id[24]; /* "cuda:0" */
	bool bidir;
	/*
	 * "NVLink", "NVLink x18" (a link callback's), "PCIe", "unknown"; and
	 * what told it ("cuDeviceGetP2PAttribute: native peer atomics"...).
	 */
	char link[32];
	char link_from[96];
	int rank; /* CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, -1: not told */
	enum bench_status status;
	char why[256];       /* the reason for every status but measured */
	double best, median; /* GB/s (1e9 bytes) counted once; bidir: the sum of the two */
	double fwd, rev;     /* bidir: src to dst's and dst to src's medians */
	unsigned samples;
	double seconds; /* wall time of the test */
	double count;   /* bytes one sample moves (both directions for bidir) */
	size_t bytes;   /* the buffer */
	char note[192];
};

/*
 * link(arg, a, b, out, size): what joins devices a and b where something
 * outside the compute API knows it (NVML's NVLink state: "NVLink x18");
 * 1 with out set, 0 when it does not know.
 */
typedef int bench_p2p_link_fn(void *arg, const struct bench_dev_info *a,
                              const struct bench_dev_info *b, char *out, size_t size);

struct bench_p2p_opts {
	bool quick;        /* 64 MiB buffers instead of 512 MiB */
	int (*stop)(void); /* non-zero: stop now (checked between copies); NULL: never */
	unsigned long long
	        mem_limit;           /* device bytes a device may hold here; 0: a quarter of free */
	bench_progress_fn *progress; /* as bench_suite_run's; test is "p2p cuda:0>cuda:1" */
	void *progress_arg;
	bench_p2p_link_fn *link; /* NULL: the CUDA driver's attributes only */
	void *link_arg;
	bool *lost; /* NULL, or one per device of devs: set for a device lost here */
};

/*
 * Measure every pair of the devices of devs that selected[] marks (NULL:
 * all) that are CUDA devices with peer copies; fewer than two: no results.
 * For each pair a and b (a before b): a to b, b to a and both at once, or
 * one "p2p" result saying that neither can reach the other (copying through
 * host memory is not done). *out is an array of *n results (free() it;
 * NULL when none). A device lost (E_LOST, E_TIMEOUT) fails its pair and
 * every later one it is in, and must not be used again (opts->lost says
 * which). Every buffer is freed on every path. Returns 0, 1 when stopped by
 * opts->stop, or E_USAGE.
 */
int bench_p2p_run(struct bench_devs *devs, const bool *selected, const struct bench_p2p_opts *opts,
                  struct bench_p2p_result **out, size_t *n, struct err *err);

#endif
