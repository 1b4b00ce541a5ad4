/*
 * Running jobs: each in a cgroup (v2) of its own, under a small supervisor
 * that is not tied to the daemon's life. The supervisor is the gpuscope
 * binary run again ("gpuscope __supervise JOBDIR"): it reads the job's spec,
 * holds JOBDIR/lock (flock) for as long as it lives, moves the command into
 * the job's cgroup, drops to the owner (initgroups, setgid, setuid), opens
 * the output files as the owner, sets the environment, executes the command,
 * waits for it and writes its exit status to JOBDIR/exit (a temporary file
 * renamed over it) before it ends. It reports on a pipe to the daemon while
 * the daemon lives; after a daemon restart, exec_probe() reads the same
 * facts from JOBDIR and the cgroup.
 *
 * JOBDIR = STATE/jobs/ID (root's, 0700): spec (JSON, written by the daemon),
 * lock, sup ("PID STARTTICKS"), pid (the command's main process), exit
 * ("exit CODE" | "signal N" | "error TEXT", then the end time).
 *
 * Without a writable cgroup v2 hierarchy the job runs in a session of its
 * own and is tracked by its session id (exec_env.cgroups false, said in
 * the daemon's log and in 'queue ls').
 */
#ifndef GPUSCOPE_QUEUE_EXEC_H
#define GPUSCOPE_QUEUE_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "queue/job.h"

struct err;

struct exec_env {
	char state_dir[1024];  /* STATE */
	char cgroup_root[512]; /* the queue's cgroup: jobs are job-ID below it; "" without */
	bool cgroups;          /* cgroup v2 in use */
	bool can_kill;         /* cgroup.kill exists (Linux 5.14) */
	char self_exe[1024];   /* the binary to run as supervisor */
	char why_no_cgroups[256];
};

/*
 * Find the cgroup v2 hierarchy (/proc/self/mountinfo) and set up the queue's
 * cgroup: want ("" = choose) names it; otherwise the daemon's own cgroup
 * when it was delegated to it (systemd Delegate=yes: the daemon moves
 * itself into a "daemon" leaf), else "gpuscope-queue" at the hierarchy's
 * root. Failing that, env->cgroups is false with why_no_cgroups: not an
 * error. Creates STATE/jobs and STATE/logs.
 */
int exec_init(struct exec_env *env, const char *state_dir, const char *want, struct err *err);

/* What the supervisor is given, besides the job. */
struct exec_launch {
	int report_fd; /* out: the read end of the supervisor's report pipe (non-blocking) */
	double grace;  /* seconds between SIGTERM and SIGKILL at the time limit */
};

/*
 * Write the job's spec, create its cgroup, take its lock and start its
 * supervisor (a child of the caller, in a session of its own). Fills
 * j->cgroup, j->sup_pid, j->sup_start. The command runs with
 * CUDA_VISIBLE_DEVICES (and NVIDIA_VISIBLE_DEVICES) set to j->gpu_uuid,
 * CUDA_DEVICE_ORDER=PCI_BUS_ID, GPUSCOPE_JOB_ID, GPUSCOPE_JOB_NAME.
 */
int exec_start(const struct exec_env *env, struct qjob *j, struct exec_launch *l, struct err *err);

/* One report line of the supervisor, parsed. */
enum exec_report_kind {
	ER_NONE = 0, /* nothing (yet): EAGAIN */
	ER_STARTED,  /* the command was executed: pid */
	ER_EXIT,     /* it ended: has_exit, exit_code / exit_signal, or error text */
	ER_EOF,      /* the supervisor closed its end (it ended) */
};
struct exec_report {
	enum exec_report_kind kind;
	pid_t pid;
	int exit_code, exit_signal;
	bool launch_error; /* the command could not be started: text says why */
	bool timed_out;    /* ER_EXIT: the supervisor stopped it at its time limit (the daemon was
	                      away) */
	char text[256];
	double time;
};
/* Read one report from fd (non-blocking). */
int exec_read_report(int fd, struct exec_report *r);

/* What is known of a job from its JOBDIR and cgroup, with or without the pipe. */
struct exec_probe {
	bool sup_alive; /* JOBDIR/lock is held */
	bool started;   /* JOBDIR/pid exists */
	pid_t pid;
	bool ended; /* JOBDIR/exit exists */
	struct exec_report exit;
	bool populated; /* processes remain in the job's cgroup (or session) */
	unsigned nr_procs;
};
int exec_probe(const struct exec_env *env, const struct qjob *j, struct exec_probe *p,
               struct err *err);

/* The pids in the job's cgroup (or session); *pids malloc'd. */
int exec_pids(const struct exec_env *env, const struct qjob *j, pid_t **pids, size_t *nr,
              struct err *err);
/* The job a pid belongs to (from /proc/PID/cgroup), 0 when none of ours. */
uint64_t exec_pid_job(const struct exec_env *env, pid_t pid);

/* Signal every process of the job (not the supervisor). */
int exec_signal(const struct exec_env *env, const struct qjob *j, int sig, struct err *err);
/* Kill the whole tree at once (cgroup.kill, else SIGKILL to each, repeated). */
int exec_kill(const struct exec_env *env, const struct qjob *j, struct err *err);
/* Freeze or thaw the job's cgroup. */
int exec_freeze(const struct exec_env *env, const struct qjob *j, bool freeze, struct err *err);
/* After the end: remove the cgroup and JOBDIR (not the logs). */
int exec_cleanup(const struct exec_env *env, const struct qjob *j, struct err *err);

/*
 * Suspend to host memory: NVIDIA's CUDA checkpoint (cuCheckpointProcessLock,
 * cuCheckpointProcessCheckpoint of libcuda.so.1, driver 550+), for each
 * process of the job that has a CUDA context; then freeze the cgroup.
 * E_NOTSUP when the driver has no such calls: the caller kills instead.
 */
bool exec_checkpoint_supported(void);
int exec_suspend(const struct exec_env *env, const struct qjob *j, struct err *err);
int exec_resume(const struct exec_env *env, const struct qjob *j, struct err *err);

/*
 * Open path as uid/gid would (setfsuid/setfsgid around open(2)), so that a
 * root daemon never follows a user's symlink into a file the user may not
 * read. Returns the fd or a negative status.
 */
int exec_open_as(uid_t uid, gid_t gid, const char *path, int flags, mode_t mode, struct err *err);

/* The default output file of a job: STATE/logs/UID/ID.out (the directory the owner's, 0700). */
void exec_default_output(const struct exec_env *env, const struct qjob *j, char *buf, size_t len);

/* "gpuscope __supervise JOBDIR": the supervisor's main (called from src/cmd/main.c). */
int exec_supervise_main(int argc, char **argv);

#endif
