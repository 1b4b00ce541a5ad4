/*
 * The queue's state in SQLite (WAL): jobs, events, GPUs' flags, users'
 * fair-share usage, and a few facts of the daemon's own. Every transition
 * is written (and committed) before the daemon acts on it, so that a
 * daemon killed at any point finds on restart what it had decided. One
 * connection, used by the daemon's thread only.
 *
 * Schema (user_version 1): jobs(id INTEGER PRIMARY KEY, ... every field of
 * struct qjob ...), events(id INTEGER PRIMARY KEY, time, job, kind, text,
 * detail JSON), gpus(uuid PRIMARY KEY, flags, note, since), usage(uid
 * PRIMARY KEY, value, at), meta(key PRIMARY KEY, value).
 */
#ifndef GPUSCOPE_QUEUE_STORE_H
#define GPUSCOPE_QUEUE_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "queue/job.h"

struct err;
struct store;

/*
 * Open (creating when missing) DIR/queue.db, in WAL mode, synchronous=FULL,
 * with its schema. A file that is not our database, or of a newer schema,
 * is an error naming the file and what to do; it is never overwritten.
 */
int store_open(const char *dir, struct store **out, struct err *err);
void store_close(struct store *st);

/*
 * Several writes in one transaction (nests: only the outermost commits). A
 * store_rollback() at any level undoes the whole transaction; until its
 * outermost level is ended, writes, store_begin() and store_commit() fail
 * (store_commit() ends the level all the same). A write that fails in a way
 * that makes SQLite roll back (a full disk) has the same effect.
 */
int store_begin(struct store *st, struct err *err);
int store_commit(struct store *st, struct err *err);
int store_rollback(struct store *st);

/* Insert j (its id is assigned, ids never reused, and written back to j->id). */
int store_job_insert(struct store *st, struct qjob *j, struct err *err);
/* Write every field of j over its row. */
int store_job_update(struct store *st, const struct qjob *j, struct err *err);
/* Read job id into j (qjob_init()ed by the caller); E_NOTFOUND when there is none. */
int store_job_get(struct store *st, uint64_t id, struct qjob *j, struct err *err);

/* A list of jobs; free with store_jobs_free(). */
struct qjob_list {
	struct qjob *job;
	size_t nr;
};
void store_jobs_free(struct qjob_list *l);
/* Every job not in a terminal state, by id. */
int store_jobs_active(struct store *st, struct qjob_list *out, struct err *err);
/*
 * Finished jobs, newest first: of uid (or everyone's when uid is (uid_t)-1),
 * ended at or after since (0: any time), at most limit (0: 100).
 */
int store_jobs_history(struct store *st, uid_t uid, double since, unsigned limit,
                       struct qjob_list *out, struct err *err);
/* Jobs of uid that are not terminal (for quotas): how many, and GPUs they hold. */
int store_user_counts(struct store *st, uid_t uid, unsigned *queued, unsigned *running,
                      unsigned *gpus, struct err *err);

/* One event: job 0 for the daemon's or a GPU's. detail: a JSON object text or NULL. */
struct qevent {
	uint64_t id;
	double time;
	uint64_t job;
	uid_t uid;     /* the job's owner, (uid_t)-1 for the daemon's own */
	char kind[32]; /* "submit", "start", "exit", "cancel", "preempt", "requeue", "dirty",
	                  "gpu-lost", "adopt", "daemon-start", ... */
	char text[512];
	char *detail; /* owned; JSON object or NULL */
};
int store_event_add(struct store *st, double time, uint64_t job, uid_t uid, const char *kind,
                    const char *detail, struct err *err, const char *fmt, ...)
        __attribute__((format(printf, 8, 9)));
/* Events with id > after, oldest first, at most limit (0: 100); free with store_events_free(). */
int store_events_since(struct store *st, uint64_t after, unsigned limit, struct qevent **out,
                       size_t *nr, struct err *err);
/* The events of one job, oldest first, at most limit (0: 100); free with store_events_free(). */
int store_events_job(struct store *st, uint64_t job, unsigned limit, struct qevent **out,
                     size_t *nr, struct err *err);
void store_events_free(struct qevent *ev, size_t nr);

/* GPU flags (enum qg_flag) and a note, by UUID; a GPU never set has flags 0. */
int store_gpu_set(struct store *st, const char *uuid, unsigned flags, const char *note,
                  double since, struct err *err);
int store_gpu_get(struct store *st, const char *uuid, unsigned *flags, char *note, size_t note_len,
                  double *since, struct err *err);

/* Fair share: add gpu_seconds to uid's usage at time now (decayed with half-life hl). */
int store_usage_add(struct store *st, uid_t uid, double gpu_seconds, double now, double hl,
                    struct err *err);
/* uid's usage decayed to now; 0 when it has none. */
int store_usage_get(struct store *st, uid_t uid, double now, double hl, double *out,
                    struct err *err);

/*
 * Delete the terminal jobs that ended before before (epoch seconds), and
 * the events older than before except those of jobs not yet ended. Ids are
 * never reused afterwards. Returns how many jobs were deleted, or a
 * negative status.
 */
int store_prune(struct store *st, double before, struct err *err);

/* The daemon's own facts ("heartbeat", "started"...). */
int store_meta_set(struct store *st, const char *key, const char *value, struct err *err);
/* E_NOTFOUND when unset. */
int store_meta_get(struct store *st, const char *key, char *value, size_t len, struct err *err);

#endif
