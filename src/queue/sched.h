/*
 * The queue's policy, with no I/O: given the GPUs as last sampled, the jobs
 * that hold them and the jobs that wait, decide what starts where, what is
 * preempted, and why each waiting job waits (and when it should start).
 * The daemon calls sched_plan() after every change and every sample; the
 * unit tests call it with made-up machines (tests/unit/t_queue_sched.c).
 *
 * Memory ledger, per GPU:
 *   foreign   = max(0, used - sum over our jobs' processes on it of their use)
 *   available = total - foreign - sum over our holding jobs of max(declared, observed)
 * where a holding job is one in a state that holds GPUs (qj_state_holds_gpus())
 * and observed is the largest use NVML showed for its processes on that GPU
 * since it started, so a job that allocates late is covered from its launch.
 *
 * Order of the waiting jobs: priority (higher first), then the owner's
 * decayed fair-share usage (lower first), then submit time, then id.
 * Walking that order, a job that fits starts; the first job that fits on
 * the machine but not now gets a reservation: the GPUs and the time at
 * which, by the time limits of the jobs holding them, it will fit. A later
 * job may start only where it does not delay that reservation (it avoids
 * the reserved GPUs, or its time limit ends it before the reserved time):
 * backfill that never starves the large job. Preemption: when the first
 * blocked job has a higher priority than preemptible running jobs whose
 * GPUs would let it fit, those jobs (the fewest, lowest priority, most
 * recently started first) are to be stopped; the waiting job then keeps a
 * reservation on those GPUs until their memory is seen released.
 */
#ifndef GPUSCOPE_QUEUE_SCHED_H
#define GPUSCOPE_QUEUE_SCHED_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "queue/job.h"

#define SCHED_MAX_GPUS 64

/* How close two GPUs are (NVML's topology levels, best first). */
enum sched_link {
	SL_UNKNOWN = 0,
	SL_NVLINK,     /* at least one active NVLink between them */
	SL_SWITCH,     /* one PCIe switch (NVML_TOPOLOGY_SINGLE / MULTIPLE) */
	SL_HOSTBRIDGE, /* one host bridge / CPU (NVML_TOPOLOGY_HOSTBRIDGE / NODE) */
	SL_SYSTEM,     /* across CPUs (NVML_TOPOLOGY_SYSTEM) */
};

struct sched_gpu {
	char uuid[QJ_UUID_LEN];
	unsigned index; /* NVML index, for messages */
	bool ok;        /* sampled and answering; false: nothing starts on it */
	uint64_t total; /* bytes */
	uint64_t used;  /* bytes, all processes and the driver's own */
	unsigned flags; /* enum qg_flag */
	/* QG_RESERVED: who may use it (empty: nobody but admins) */
	uid_t reserved_uid[16];
	unsigned nr_reserved_uid;
	gid_t reserved_gid[16];
	unsigned nr_reserved_gid;
};

/* A job that holds GPUs now (its qjob) and what its processes use there. */
struct sched_running {
	const struct qjob *job;
	uint64_t observed[QJ_MAX_GPUS]; /* per job->gpu_uuid[i]: largest use seen, bytes */
	uint64_t current[QJ_MAX_GPUS];  /* per job->gpu_uuid[i]: use in the last sample */
};

/*
 * A waiting job (QUEUED, or HELD: held ones are only given a reason; or
 * SUSPENDED: it must get back exactly its gpu_uuid[], goes first among the
 * jobs of its priority, is not held to the quotas (user_running_* count it
 * already), and its SA_START means resume it).
 */
struct sched_waiting {
	const struct qjob *job;
	double usage;     /* its owner's decayed GPU-seconds */
	bool deps_done;   /* every --after job has ended */
	bool dep_missing; /* an --after job does not exist */
	/* the owner's quotas and what the owner has running now (0 = no limit) */
	unsigned max_running_gpus, max_running_jobs;
	unsigned user_running_gpus, user_running_jobs;
	bool owner_is_admin; /* may use GPUs reserved for nobody */
	gid_t groups[32];    /* the owner's groups, for reserved GPUs */
	unsigned nr_groups;
};

struct sched_config {
	enum qj_mode default_mode; /* QJ_MODE_EXCLUSIVE unless the config says shared */
	uint64_t default_gpu_mem;  /* shared jobs that declare nothing: bytes per GPU */
	unsigned jobs_per_gpu;     /* at most this many jobs on one GPU; 0 = no limit */
	uint64_t mem_margin;       /* bytes left free on each GPU beyond what jobs declare */
	bool backfill;             /* default true */
	bool preemption;           /* default true */
	double now;                /* seconds since the epoch */
};

struct sched_input {
	const struct sched_config *cfg;
	struct sched_gpu *gpu;
	unsigned nr_gpu;
	enum sched_link link[SCHED_MAX_GPUS][SCHED_MAX_GPUS]; /* by position in gpu[] */
	const struct sched_running *run;
	unsigned nr_run;
	const struct sched_waiting *wait;
	unsigned nr_wait;
};

enum sched_action_kind {
	SA_START,   /* start job on gpu[] */
	SA_PREEMPT, /* stop job (preemptible) so that for_job can start */
	SA_FAIL,    /* the job can never start (asks more than the machine has; QUEUED jobs
	               only, and never while no GPU is listed at all) */
};

struct sched_action {
	enum sched_action_kind kind;
	uint64_t job;
	uint64_t for_job;          /* SA_PREEMPT: the job it makes room for */
	unsigned gpu[QJ_MAX_GPUS]; /* SA_START: positions in input gpu[] */
	unsigned nr_gpu;
	char reason[QJ_REASON_LEN]; /* SA_FAIL, SA_PREEMPT: in words */
};

/* What the plan says about one waiting job. */
struct sched_verdict {
	uint64_t job;
	char reason[QJ_REASON_LEN]; /* why it waits, in words ("" when it starts now) */
	char code[32];              /* the reason as a word: "resources", "priority",
	                               "dependency", "held", "quota", "reservation",
	                               "dirty", "drained", "impossible", "starting" */
	double est_start;           /* seconds since the epoch; 0 = unknown */
	bool reserved;              /* holds the backfill (or preemption) reservation */
	unsigned position;          /* 1 = next in the order; 0 = held */
};

struct sched_plan {
	struct sched_action *act;
	unsigned nr_act;
	struct sched_verdict *verdict; /* one per input wait[], in the same order */
	unsigned nr_verdict;
	/* per input gpu[]: the ledger as sampled (before this plan's starts), for ls and show */
	uint64_t foreign[SCHED_MAX_GPUS];
	uint64_t available[SCHED_MAX_GPUS];
	unsigned jobs_on[SCHED_MAX_GPUS];
};

void sched_config_defaults(struct sched_config *cfg);

/* Plan; out is filled (and must be released with sched_plan_release()). Returns 0. */
int sched_plan(const struct sched_input *in, struct sched_plan *out);
void sched_plan_release(struct sched_plan *p);

/*
 * Can req ever be satisfied on these GPUs (ignoring what runs now)? When not,
 * returns false with why in words ("asks 90.0 GiB per GPU; the largest GPU
 * has 80.0 GiB"): the daemon refuses such a submission.
 */
bool sched_possible(const struct sched_input *in, const struct qj_request *req, char *why,
                    size_t why_len);

/* Fair share: usage decayed with half-life hl seconds from time t0 to t. */
double sched_decay(double usage, double t0, double t, double hl);

#endif
