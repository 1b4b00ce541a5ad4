/*
 * The queue daemon's view of the GPUs: a worker thread opens the collector
 * (backend/collect.h), samples the GPUs and their processes every interval
 * and publishes the latest sample under a mutex, so that the daemon's main
 * loop never calls the driver (a hung NVML call stalls the worker, not the
 * queue: the daemon sees the sample age and says "NVML not answering").
 * After each sample the worker writes to notify_fd (an eventfd).
 */
#ifndef GPUSCOPE_QUEUE_GPUS_H
#define GPUSCOPE_QUEUE_GPUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "queue/job.h"
#include "queue/sched.h"

struct err;
struct gs_config;
struct qgpus;

struct qgpu_info {
	char uuid[QJ_UUID_LEN];
	unsigned index; /* NVML index */
	char name[96];
	uint64_t total, used; /* bytes: total less the driver's reserve; used by every process and
	                         the driver's own (NVML's used) */
	bool ok;              /* answered this sample */
	bool lost;            /* fallen off the bus, or needs a reset */
	char state_msg[160];  /* why not ok */
};

struct qgpu_proc {
	uint32_t pid;
	unsigned gpu;  /* position in the sample's gpu[] */
	uint64_t used; /* bytes; 0 when the driver does not say */
};

struct qgpu_sample {
	uint64_t seq; /* 1 for the first sample, then one more each time */
	double time;  /* seconds since the epoch */
	double mono;  /* clock_mono() when it was taken */
	struct qgpu_info *gpu;
	size_t nr_gpu;
	struct qgpu_proc *proc;
	size_t nr_proc;
	/* by position in gpu[] (SL_UNKNOWN where the driver does not say) */
	enum sched_link link[SCHED_MAX_GPUS][SCHED_MAX_GPUS];
};

void qgpu_sample_init(struct qgpu_sample *s);
void qgpu_sample_release(struct qgpu_sample *s);
void qgpu_sample_copy(struct qgpu_sample *dst, const struct qgpu_sample *src);

/*
 * Start the worker: cfg (copied) says which driver to load (cfg->timeout is
 * set to timeout, each GPU's deadline), interval is the seconds between
 * samples. Returns at once: the driver is opened on the worker.
 */
int qgpus_start(const struct gs_config *cfg, double interval, double timeout, int notify_fd,
                struct qgpus **out, struct err *err);
/* Change the interval (a reload). */
void qgpus_set_interval(struct qgpus *g, double interval);
/* Ask for a sample now (after a job ended, to see its memory come back sooner). */
void qgpus_poke(struct qgpus *g);

/*
 * The latest sample into out (released first); false when there is none yet.
 * *status (optional) is "ok", "opening", or "unavailable: why".
 */
bool qgpus_latest(struct qgpus *g, struct qgpu_sample *out, char *status, size_t status_len);
/* The seq of the latest sample (0: none), without copying it. */
uint64_t qgpus_seq(struct qgpus *g);

/* Stop the worker (waits for it at most a few seconds; a hung one is left behind). */
void qgpus_stop(struct qgpus *g);

#endif
