/*
 * The collector: opens every backend, scans their devices once, and takes
 * samples: each selected device is read on its own worker thread, so one
 * slow or hung GPU costs at most cfg->timeout and never blocks the others
 * (it is shown as not responding). Processes are then enriched from /proc.
 */
#ifndef GPUSCOPE_COLLECT_H
#define GPUSCOPE_COLLECT_H

#include <stdbool.h>

struct err;
struct gs_config;
struct gpu_snapshot;
struct collector;

/*
 * Open all backends. Never fails for lack of GPUs: a backend that finds
 * nothing leaves a one-line reason (see collector_reasons()). cfg must
 * outlive the collector.
 */
int collector_open(const struct gs_config *cfg, struct collector **out, struct err *err);

/* Scan devices (done once; later calls return at once). */
int collector_scan(struct collector *c, struct err *err);

/* Number of devices found by the scan. */
unsigned collector_count(const struct collector *c);

/*
 * Restrict samples to the devices named in ids: a comma-separated list of
 * indexes, UUIDs (or unique UUID prefixes) and PCI bus ids in any common
 * spelling ("0000:3b:00.0", "3B:00.0"). Returns E_USAGE naming the first id
 * that matches nothing.
 */
int collector_select(struct collector *c, const char *ids, struct err *err);

enum collect_flags {
	COLLECT_PROCS = 1 << 0, /* read processes and enrich them from /proc */
	/*
	 * A one-shot sample: when a backend has values that need two readings
	 * (engine busy time, energy), take a first reading, wait cfg->window
	 * seconds, then take the sample returned.
	 */
	COLLECT_WINDOW = 1 << 1,
	COLLECT_NO_ENRICH = 1 << 2, /* internal: processes without /proc facts */
};

/*
 * Take one sample into snap (which must be initialised and empty): system
 * information, the selected devices (in scan order) and their processes.
 */
int collector_sample(struct collector *c, struct gpu_snapshot *snap, unsigned flags,
                     struct err *err);

/* How close two GPUs are, best first (the levels of the queue's enum sched_link). */
enum collect_link {
	CL_NVLINK = 1,     /* at least one active NVLink between them (or both on NVSwitches) */
	CL_SWITCH = 2,     /* PCIe switches only (NVML_TOPOLOGY_INTERNAL, SINGLE, MULTIPLE) */
	CL_HOSTBRIDGE = 3, /* one host bridge or CPU (NVML_TOPOLOGY_HOSTBRIDGE, NODE) */
	CL_SYSTEM = 4,     /* across CPUs (NVML_TOPOLOGY_SYSTEM) */
};

/*
 * The link between the devices at positions a and b of collector_sample()'s
 * list (the selected devices in scan order) in *level, an enum collect_link.
 * Returns 0, or E_NOTSUP when their backend cannot tell (not NVIDIA, two
 * backends, a driver without the topology calls), E_USAGE for a position
 * past the list or a == b, E_LOST for a GPU that is lost, E_BUSY for one
 * whose last read has not come back (a hung driver: it is not asked again).
 * Calls the driver: not for the hot path; once at start is the idea.
 */
int collector_topology(struct collector *c, unsigned a, unsigned b, int *level);

/*
 * Why there are no devices: one line per backend that found nothing, for
 * example "nvml: libnvidia-ml.so.1 not found ...". NULL-terminated; owned by
 * the collector.
 */
const char *const *collector_reasons(const struct collector *c);

/* True when no backend could even look (a driver or library is missing), as opposed to "no GPU". */
bool collector_no_driver(const struct collector *c);

void collector_close(struct collector *c);

#endif
