/*
 * GPU processes of DRM drivers, from /proc/<pid>/fdinfo (the kernel's
 * drm-usage-stats): which processes hold DRM files, how much device and
 * system memory their clients hold, and how busy they keep each engine.
 *
 * Finding the DRM files means walking every process's fd directory, which
 * is the expensive part: the pid -> DRM fd index is cached and rebuilt only
 * every cfg->reindex seconds; between rebuilds only the known fdinfo files
 * are read again. Engine use is a rate, so it needs two samples: a
 * process's first sample has no engine figures (NaN), never a guess.
 */
#ifndef GPUSCOPE_FDINFO_H
#define GPUSCOPE_FDINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/gpu.h"

struct err;
struct gs_config;
struct fdinfo_scan;

/*
 * One process's use of one DRM device, its clients deduplicated (the same
 * drm file reached through several fds, or inherited by a child, counts
 * once: clients are keyed by (device, drm-client-id)).
 */
struct fdinfo_proc {
	uint32_t pid;
	uint64_t start_ticks; /* tells a reused pid from the one seen before */
	char driver[24];      /* drm-driver */
	char pdev[16];        /* drm-pdev ("0000:03:00.0"), "" when the driver prints none */
	int minor;            /* DRM minor of the file (0-63 card, 128-191 render), -1 if unknown */
	bool denied; /* its fdinfo cannot be read by us: it is a GPU user, figures unknown */
	bool has_local, has_system;
	double mem_local;  /* bytes resident in device memory (vram*, local*) */
	double mem_system; /* bytes resident in system memory for the GPU (gtt, system*, cpu,
	                      memory) */
	struct engine_use engine[GPU_MAX_ENGINES]; /* percent of the engine class; NaN until a
	                                              second sample */
	unsigned nr_engine;
};

/* cfg must outlive the scanner. */
struct fdinfo_scan *fdinfo_new(const struct gs_config *cfg);
void fdinfo_free(struct fdinfo_scan *s);

/*
 * Take a sample at monotonic time now: rebuild the fd index when it is
 * older than cfg->reindex (or on the first call), then read every known DRM
 * fdinfo. A process gone since the index was built is dropped. Returns 0
 * or a negative status (the results are then those that could be read).
 */
int fdinfo_sample(struct fdinfo_scan *s, double now, struct err *err);

/* The result of the last sample; valid until the next fdinfo_sample(). */
const struct fdinfo_proc *fdinfo_procs(const struct fdinfo_scan *s, size_t *nr);

/* Whether the last walk found processes whose fds this user may not see. */
bool fdinfo_some_denied(const struct fdinfo_scan *s);

#endif
