/*
 * The small system helpers of the queue's executor (exec.c) and its per-job
 * supervisor (supervise.c): the cgroup v2 hierarchy (where it is mounted,
 * a process's own cgroup, the pids in one, writing its control files), the
 * session-id fallback for machines without cgroups, /proc/PID/stat, and
 * files written atomically. Internal to src/queue.
 */
#ifndef GPUSCOPE_QUEUE_CGROUP_H
#define GPUSCOPE_QUEUE_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct err;

/* Where the cgroup v2 hierarchy is mounted (/proc/self/mountinfo, fstype cgroup2): E_NOTFOUND. */
int cg_mount(char *buf, size_t len, struct err *err);
/* This process's cgroup v2 path ("0::PATH" of /proc/self/cgroup), "/..." relative to the mount. */
int cg_self(char *buf, size_t len, struct err *err);
/* Write val into the control file cg/file. */
int cg_write(const char *cg, const char *file, const char *val, struct err *err);
/* Move pid (0 = the caller) into cgroup cg. */
int cg_enter(const char *cg, pid_t pid, struct err *err);
/* "populated 1" in cg/cgroup.events (false when there is no such cgroup). */
bool cg_populated(const char *cg);
/* "frozen 1" in cg/cgroup.events. */
bool cg_frozen(const char *cg);

/*
 * The processes of a job: those of cgroup cg when cg is not empty, else those
 * whose session id is sid (scanning /proc). *pids is malloc'd (free it even
 * when *nr is 0).
 */
int tree_pids(const char *cg, pid_t sid, pid_t **pids, size_t *nr, struct err *err);
/* Send sig to every process of the tree, again for any that appear meanwhile (bounded). */
int tree_signal(const char *cg, pid_t sid, int sig, struct err *err);
/*
 * Kill the whole tree: cgroup.kill when can_kill, else freeze, SIGKILL each
 * process, thaw (without cgroups: SIGKILL by session, repeated). Waits a
 * little (at most ~200 ms) for the tree to be empty; not an error if not yet.
 */
int tree_kill(const char *cg, pid_t sid, bool can_kill, struct err *err);

/* Session id and start time (clock ticks since boot, field 22) of pid from /proc/PID/stat. */
int proc_stat(pid_t pid, pid_t *sid, uint64_t *start);

/*
 * Write data to dir/name atomically: dir/name.tmp, renamed over name. mode
 * is the new file's. durable: fsync the file before the rename and the
 * directory after (what must outlive a crash of the machine, not only of
 * the daemon: a job's exit status).
 */
int file_write_atomic(const char *dir, const char *name, const void *data, size_t len, mode_t mode,
                      bool durable, struct err *err);
/* Read at most size - 1 bytes of path into buf (NUL-terminated): length, or -errno. */
ssize_t file_read_small(const char *path, char *buf, size_t size);

/* Seconds since the epoch, with a fraction. */
double now_epoch(void);

#endif
