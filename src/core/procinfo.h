/*
 * Host-side facts about the processes that use GPUs, read from /proc
 * (cfg->proc_root): owner, command line, CPU use, resident memory, start
 * time, pid in its own namespace, and the container it runs in.
 *
 * A context caches what does not change between samples (user names, our
 * own pid namespace, the clock tick) and the previous CPU times, so that a
 * caller sampling repeatedly (top, watch) gets CPU % over the interval; the
 * first sample of a process gives its lifetime average, as ps(1) does.
 * A process seen before in our pid namespace, with the same start time, is
 * not read in full again: on procfs its CPU time comes from its CPU-time
 * clock and its memory from its statm file, kept open; its owner, name,
 * command line and cgroup from the cache, read again every 10 to 17 s.
 *
 * Attribution: the Slurm job, step and user of a process from its cgroup
 * (else from SLURM_* in its environment), and the Kubernetes namespace, pod
 * and container names of its pod uid and container id from what the kubelet
 * leaves under cfg->root: var/log/pods/<namespace>_<pod>_<uid>/<container>/
 * and var/log/containers/<pod>_<namespace>_<container>-<id>.log, listed at
 * most every 5 s.
 */
#ifndef GPUSCOPE_PROCINFO_H
#define GPUSCOPE_PROCINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct err;
struct gs_config;
struct gpu_proc;
struct gpu_snapshot;
struct procinfo_ctx;

/* cfg must outlive the context. */
struct procinfo_ctx *procinfo_new(const struct gs_config *cfg);
void procinfo_free(struct procinfo_ctx *ctx);

/*
 * Fill the host fields of p (p->pid is the pid the driver reported) and set
 * p->host. Returns 0, or E_NOTFOUND when the process no longer exists in a
 * pid namespace we can see all of, or exited while we read it (the caller
 * drops it; p may then hold some strings, which gpu_proc_release() frees).
 * A process that is not visible from here (we run in another pid namespace,
 * or /proc hides it) returns 0 with p->host = PHOST_NOT_VISIBLE and p
 * untouched otherwise: in a nested namespace a pid that exists here but
 * holds no /dev/nvidia* file is taken for another process. One that is only
 * partly readable, or whose files do not parse, returns 0 with
 * PHOST_PARTIAL and whatever could be read. Strings p already holds are
 * replaced when /proc gives a value for them. Each call is one sample for
 * CPU %: its first sight of a process gives the lifetime average.
 */
int procinfo_fill(struct procinfo_ctx *ctx, struct gpu_proc *p, struct err *err);

/*
 * procinfo_fill() every process of snap as one sample, dropping (releasing
 * and compacting away) those that are gone; a process listed on two GPUs
 * gets the same CPU %. The CPU history of processes this sample did not see
 * is forgotten.
 */
void procinfo_enrich(struct procinfo_ctx *ctx, struct gpu_snapshot *snap);

/*
 * Find the container of a process from the text of /proc/<pid>/cgroup: the
 * unified ("0::") line first, else the v1 lines in order; within a path the
 * innermost container wins (a pod inside a kind node). On success returns
 * true and writes the id to id (its first 12 hex digits; for LXC the
 * container name cut to 12), the runtime to *runtime ("docker",
 * "containerd", "cri-o", "podman", "lxc", or "kubernetes" for a bare id
 * under a pod cgroup, whose path does not name the runtime) and the
 * Kubernetes pod uid with dashes, if any, to pod (else pod[0] = '\0'); both
 * are cut to their buffers. Returns false, with id[0] = pod[0] = '\0' and
 * *runtime = NULL, for a process in no container (conmon monitors included).
 */
bool procinfo_container(const char *cgroup_text, char *id, size_t id_size, const char **runtime,
                        char *pod, size_t pod_size);

/*
 * A process's Slurm job: job id ("1234", or "1234_7" for an array task in
 * the environment), step ("0", "batch", "extern", "interactive"; "" when
 * unknown), the job's uid when the cgroup names it (v1's uid_<uid>, else
 * -1) and its user when the environment does (else "").
 */
struct procinfo_slurm {
	char job[32];
	char step[16];
	char user[64];
	int64_t uid;
};

/*
 * Find the Slurm job and step in the text of /proc/<pid>/cgroup, in the
 * layouts of Slurm's cgroup plugins: v1 ".../slurm[_<node>]/uid_<uid>/
 * job_<id>/step_<step>/task_<n>" and v2 ".../[<node>_]slurmstepd.scope/
 * job_<id>/step_<step>/user/task_<n>". The unified line wins, else the first
 * v1 line that names a job. False, with s->job "", when none does.
 */
bool procinfo_slurm_cgroup(const char *cgroup_text, struct procinfo_slurm *s);

/*
 * The same from a NUL-separated environment (/proc/<pid>/environ) of len
 * bytes: SLURM_JOB_ID (or SLURM_JOBID), SLURM_ARRAY_JOB_ID with
 * SLURM_ARRAY_TASK_ID, SLURM_STEP_ID (Slurm's special step ids named) and
 * SLURM_JOB_USER. False when it names no job.
 */
bool procinfo_slurm_environ(const char *env, size_t len, struct procinfo_slurm *s);

/*
 * Read <proc_root>/<pid>/stat (into scratch): the parent pid into *ppid and
 * the start time in clock ticks into *start_ticks (either may be NULL).
 * False when the file cannot be read or does not parse. For top's tree
 * view, and for checking that a pid is still the process chosen.
 */
struct strbuf;
bool procinfo_read_stat(const char *proc_root, uint32_t pid, struct strbuf *scratch, uint32_t *ppid,
                        uint64_t *start_ticks);

#endif
