/*
 * GPU processes of DRM drivers, from /proc/<pid>/fdinfo (the kernel's
 * drm-usage-stats): which processes hold DRM files, how much device and
 * system memory their clients hold, and how busy they keep each engine.
 *
 * Finding the DRM files means walking every process's fd directory, which
 * is the expensive part. As root with debugfs mounted, DRM's own lists of
 * open files (debugfs dri/<minor>/clients, which give each file's pid) name
 * the few processes worth walking; otherwise all of /proc is walked. The
 * pid -> DRM fd index is cached and rebuilt only
 * every cfg->reindex seconds; between rebuilds only the known fdinfo files
 * are read again (a process that started using a GPU meanwhile appears at
 * the next rebuild; one that exited or closed its file goes at once). On a
 * real procfs an fd is a DRM file when fstatat() finds a character device
 * of major 226; under any other proc_root (a fixture tree) the fd links
 * are read instead ("/dev/dri/renderD128" -> minor 128).
 *
 * Engine use is a rate, so it needs two samples: a client's first sample
 * has no engine figures (NaN), never a guess. The percent is Δbusy ns /
 * (Δ now × drm-engine-capacity), or Δdrm-cycles / Δdrm-total-cycles /
 * capacity (xe), or Δcycles / (Δ now × drm-maxfreq × capacity) when a
 * driver gives nothing else; amdgpu of kernels 5.14-5.18 prints percents,
 * taken as they are. A counter that steps back, or that grows more than 5 %
 * beyond the time elapsed, gives NaN for that sample.
 *
 * Permissions: reading another user's fd directory or fdinfo needs ptrace
 * read rights (root or CAP_SYS_PTRACE). A process whose fd directory we
 * may not open cannot be searched for DRM files at all, so it is only
 * counted (fdinfo_nr_denied); a process whose DRM files we found but whose
 * fdinfo we may not read is listed with denied set and no figures. On a
 * real procfs both checks are the same, so in practice the count is what
 * a non-root user sees; kernel threads and zombies are not counted.
 */
#ifndef GPUSCOPE_FDINFO_H
#define GPUSCOPE_FDINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/gpu.h"

struct err;
struct gs_config;
struct fdinfo_scan;

/*
 * One process's use of one DRM device, its clients deduplicated: a client
 * (one open of a DRM node, struct drm_file) is keyed by (drm-pdev, else the
 * device behind the node's minor, drm-client-id), so the same file reached
 * through several fds counts once; a file shared by several processes
 * (inherited over fork, passed over a socket) is given to the lowest pid
 * holding it. Several clients of one process on one device add up.
 */
struct fdinfo_proc {
	uint32_t pid;
	uint64_t start_ticks; /* /proc/<pid>/stat starttime at the last index rebuild: tells a
	                         reused pid from the one seen before */
	char driver[24];      /* drm-driver; for a file without stats, its node's sysfs driver */
	char pdev[16];        /* drm-pdev ("0000:03:00.0"), "" when the driver prints none */
	int minor;   /* DRM minor of its file (0-63 card, 128-191 render); of several files of
	                one device (card and render node), a client's, the lowest */
	bool denied; /* its fdinfo cannot be read by us: it is a GPU user, figures unknown */
	bool has_local, has_system;
	double mem_local;  /* bytes resident in device memory (vram*, local*, stolen*) */
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
 * Take a sample at monotonic time now (seconds): rebuild the fd index when
 * it is older than cfg->reindex (or on the first call), then read every
 * known DRM fdinfo. A process gone since the index was built is dropped.
 * Returns 0, or a negative status when proc_root cannot be read (the
 * results are then empty). Call from one thread at a time.
 */
int fdinfo_sample(struct fdinfo_scan *s, double now, struct err *err);

/*
 * The result of the last sample, sorted by pid; valid, and safe to read
 * from several threads, until the next fdinfo_sample().
 */
const struct fdinfo_proc *fdinfo_procs(const struct fdinfo_scan *s, size_t *nr);

/* Whether the last sample met processes whose fds or fdinfo this user may not read. */
bool fdinfo_some_denied(const struct fdinfo_scan *s);

/*
 * How many: processes whose fd directory the last walk could not open, plus
 * those listed as denied. For the one-time note "N processes could not be
 * inspected: run as root or with CAP_SYS_PTRACE to see their GPU use".
 */
size_t fdinfo_nr_denied(const struct fdinfo_scan *s);

/*
 * Whether the last index came from DRM's debugfs lists of clients (root,
 * debugfs mounted, every DRM device listed) rather than a walk of all of
 * /proc.
 */
bool fdinfo_listed(const struct fdinfo_scan *s);

#endif
