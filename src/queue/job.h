/*
 * The job queue's data model (gpuscope queue, gpuscope queued): a job, what
 * it asks for, where it runs, and the states it goes through. Shared by the
 * store (SQLite), the scheduler (pure policy), the executor (cgroups and
 * the per-job supervisor) and the daemon; docs/queue.md describes it for
 * users.
 *
 * A job's life:
 *
 *   QUEUED -> STARTING -> RUNNING -> EXITING -> DONE | FAILED | TIMEOUT
 *     ^  |                  |  \                       (terminal)
 *     |  v                  |   -> STOPPING (cancel, time limit, preemption)
 *   HELD                    |         |-> EXITING -> CANCELLED | ... (terminal)
 *     \                     |         '-> EXITING -> QUEUED (preempted: requeued, restarts+1)
 *      '-> CANCELLED        '-> SUSPENDED (checkpointed to host memory) -> RUNNING
 *
 * STARTING is written before the supervisor is forked (the intent), RUNNING
 * once the supervisor says the command was executed. EXITING: the main
 * process has ended (its status is known) and the job's cgroup is being
 * emptied, then its GPUs watched until their memory comes back; the job
 * holds its GPUs until then. A job's GPUs are released only in a terminal
 * state or on requeue.
 */
#ifndef GPUSCOPE_QUEUE_JOB_H
#define GPUSCOPE_QUEUE_JOB_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define QJ_MAX_GPUS   16   /* GPUs one job may ask for or be given */
#define QJ_UUID_LEN   96   /* as struct gpu_device's uuid */
#define QJ_MAX_AFTER  16   /* jobs one job may wait for */
#define QJ_NAME_LEN   128  /* a job's name */
#define QJ_USER_LEN   64   /* a user or group name */
#define QJ_REASON_LEN 256  /* why a job waits, or how it ended, in words */
#define QJ_PATH_LEN   4096 /* the longest cwd, output or error path accepted, with its NUL */

enum qj_state {
	QJ_QUEUED = 0,
	QJ_HELD,
	QJ_STARTING,
	QJ_RUNNING,
	QJ_STOPPING,  /* signalled (cancel, time limit, preemption), in its grace period */
	QJ_SUSPENDED, /* checkpointed to host memory (CUDA checkpoint), cgroup frozen */
	QJ_EXITING,   /* main process ended; emptying the cgroup, waiting for GPU memory */
	QJ_DONE,      /* terminal: exit status 0 */
	QJ_FAILED,    /* terminal: non-zero exit, a signal, a launch error, a lost GPU */
	QJ_CANCELLED, /* terminal */
	QJ_TIMEOUT,   /* terminal: killed at its time limit */
	QJ__COUNT
};

/* "queued", "held", ...: the names of every interface (JSON, ls, the store) */
const char *qj_state_name(enum qj_state s);
/* the state named s, or -1 */
int qj_state_parse(const char *s);
bool qj_state_terminal(enum qj_state s);
/* holds GPUs: STARTING, RUNNING, STOPPING, EXITING (SUSPENDED holds none) */
bool qj_state_holds_gpus(enum qj_state s);

/* How a job shares the GPUs it is given. */
enum qj_mode {
	QJ_MODE_DEFAULT = 0, /* the config's default_mode (exclusive unless set) */
	QJ_MODE_EXCLUSIVE,   /* no other job on its GPUs */
	QJ_MODE_SHARED,      /* shares by memory (needs a gpu_mem, or the config's default) */
};

/* What the job asks for. */
struct qj_request {
	unsigned gpus;                            /* how many GPUs; 0 = none (a CPU job) */
	uint64_t gpu_mem;                         /* bytes per GPU; 0 = not declared */
	char want_uuid[QJ_MAX_GPUS][QJ_UUID_LEN]; /* --gpu UUID,...: exactly these */
	unsigned nr_want;
	enum qj_mode mode;
	int priority;         /* higher first; 0 by default */
	bool preemptible;     /* may be stopped and requeued for a job of higher priority */
	bool requeue_on_loss; /* a GPU lost mid-job: requeue rather than fail */
	uint32_t time_limit;  /* seconds; 0 = none */
	uint32_t grace;       /* seconds between the stop signal and the kill; 0 = config's */
	uint64_t after[QJ_MAX_AFTER]; /* start only once these jobs have ended */
	unsigned nr_after;
};

/* One job: what it asks, who owns it, where it runs, how it ended. */
struct qjob {
	uint64_t id;
	char name[QJ_NAME_LEN];
	uid_t uid;
	gid_t gid;
	char user[QJ_USER_LEN];
	enum qj_state state;
	struct qj_request req;

	/* what to run (owned, NUL-separated lists) */
	char *argv; /* argv[0]\0argv[1]\0...\0 */
	size_t argv_len;
	char *env; /* NAME=VALUE\0...\0, already sanitised */
	size_t env_len;
	/* owned heap strings, shorter than QJ_PATH_LEN; NULL or "" = unset (qjob_str()) */
	char *cwd;      /* the working directory; unset = "/" */
	char *out_path; /* stdout; unset = the default */
	char *err_path; /* stderr; unset = with stdout */

	/* times: seconds since the epoch, 0 = not yet */
	double submit_time, start_time, end_time;
	double eligible_time; /* when its --after jobs ended; 0 = not yet */

	/* where it runs */
	char gpu_uuid[QJ_MAX_GPUS][QJ_UUID_LEN];
	unsigned nr_gpu;
	char cgroup[512];   /* the job's cgroup directory, "" without cgroups */
	pid_t sup_pid;      /* the supervisor */
	uint64_t sup_start; /* its start time (clock ticks since boot, /proc/PID/stat 22) */
	pid_t pid;          /* the command's main process */

	/* how it ended */
	int exit_code;   /* valid when has_exit */
	int exit_signal; /* 0 = none */
	bool has_exit;
	unsigned restarts;          /* times requeued (preemption, a lost GPU) */
	double gpu_seconds;         /* GPUs held x seconds, summed over its runs */
	uint64_t peak_gpu_mem;      /* largest use seen on one of its GPUs, bytes */
	char reason[QJ_REASON_LEN]; /* why it waits / why it ended, in words */
	double stop_deadline;       /* STOPPING: when the grace ends */
	int stop_cause;             /* enum qj_stop_cause while STOPPING */
};

enum qj_stop_cause {
	QJ_STOP_NONE = 0,
	QJ_STOP_CANCEL,
	QJ_STOP_TIMEOUT,
	QJ_STOP_PREEMPT,
	QJ_STOP_GPU_LOST,
};

void qjob_init(struct qjob *j);
/* Free what j owns (argv, env, cwd, out_path, err_path); j may then be reused after qjob_init(). */
void qjob_release(struct qjob *j);
/* Deep copy. */
void qjob_copy(struct qjob *dst, const struct qjob *src);
/* Replace the owned string *field (cwd, out_path, err_path) by a copy of s; NULL or "" unsets it.
 */
void qjob_set_str(char **field, const char *s);
/* s, or "" when NULL: reads cwd, out_path, err_path */
static inline const char *
qjob_str(const char *s)
{
	return s ? s : "";
}

/* A GPU as the queue sees it, kept in the store between runs. */
enum qg_flag {
	QG_DRAINED = 1 << 0,  /* an admin took it out (or it was lost): nothing new starts on it */
	QG_DIRTY = 1 << 1,    /* a job's memory did not come back: not given out until cleared */
	QG_LOST = 1 << 2,     /* NVML says it fell off the bus, or it vanished */
	QG_RESERVED = 1 << 3, /* reserved by the config for some users or a group */
};

#endif
