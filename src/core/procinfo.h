/*
 * Host-side facts about the processes that use GPUs, read from /proc
 * (cfg->proc_root): owner, command line, CPU use, resident memory, start
 * time, pid in its own namespace, and the container it runs in.
 *
 * A context caches what does not change between samples (user names, our
 * own pid namespace, the clock tick) and the previous CPU times, so that a
 * caller sampling repeatedly (top, watch) gets CPU % over the interval; the
 * first sample of a process gives its lifetime average, as ps(1) does.
 */
#ifndef GPUSCOPE_PROCINFO_H
#define GPUSCOPE_PROCINFO_H

#include <stdbool.h>
#include <stddef.h>

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
 * pid namespace we can see all of (the caller drops it). A process that is
 * not visible from here (we run in another pid namespace, or /proc hides it)
 * returns 0 with p->host = PHOST_NOT_VISIBLE; one that is only partly
 * readable returns 0 with PHOST_PARTIAL and whatever could be read.
 */
int procinfo_fill(struct procinfo_ctx *ctx, struct gpu_proc *p, struct err *err);

/* procinfo_fill() every process of snap, dropping those that are gone. */
void procinfo_enrich(struct procinfo_ctx *ctx, struct gpu_snapshot *snap);

/*
 * Find the container of a process from the text of /proc/<pid>/cgroup.
 * On success returns true and writes the 12-hex-digit id to id, the runtime
 * ("docker", ...) to *runtime and the Kubernetes pod uid, if any, to pod
 * (else pod[0] = '\0'). Returns false for a process in no container.
 */
bool procinfo_container(const char *cgroup_text, char *id, size_t id_size, const char **runtime,
			char *pod, size_t pod_size);

#endif
