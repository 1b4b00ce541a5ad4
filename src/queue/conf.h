/*
 * The queue daemon's configuration: /etc/gpuscope/queue.conf (queued
 * --config FILE, or $GPUSCOPE_QUEUE_CONF), an INI file of "key = value"
 * lines, "#" comments, and sections [user NAME] and [group NAME] (quotas
 * and priority caps of one user or the members of a group) and [gpu UUID]
 * (reserve = user:alice,group:ml; drain = yes). contrib/queue.conf lists
 * every key with its default; docs/queue.md explains them.
 *
 * Sizes as qj_parse_size() takes them (256M, 20G, 20GiB: powers of 1024),
 * durations as qj_parse_duration() (30s, 5m, 1h30m, 7d), and, for the
 * sampling keys, decimal seconds or milliseconds (0.2s, 250ms).
 */
#ifndef GPUSCOPE_QUEUE_CONF_H
#define GPUSCOPE_QUEUE_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "queue/job.h"

struct err;

#define QCONF_DEFAULT_PATH "/etc/gpuscope/queue.conf"
#define QCONF_ENV          "GPUSCOPE_QUEUE_CONF"
#define QCONF_MAX_RESERVE  16

enum qconf_preempt_mode {
	QPM_KILL = 0,
	QPM_CHECKPOINT, /* falls back to kill where the driver cannot */
};

/*
 * The limits of one [user NAME] or [group NAME]; -1 (max_priority: LONG_MIN)
 * = not set there (the global one holds).
 */
struct qconf_limits {
	char name[QJ_USER_LEN];
	bool is_group;
	long max_running_gpus, max_running_jobs, max_queued_jobs;
	long max_priority;
	long max_time; /* seconds */
};

/* A [gpu UUID] section. */
struct qconf_gpu {
	char uuid[QJ_UUID_LEN];
	bool drain;
	bool reserved; /* a reserve = line was given (an empty one: admins only) */
	char reserve_user[QCONF_MAX_RESERVE][QJ_USER_LEN];
	unsigned nr_reserve_user;
	char reserve_group[QCONF_MAX_RESERVE][QJ_USER_LEN];
	unsigned nr_reserve_group;
};

struct qconf {
	char path[1024]; /* the file read ("" = none: defaults) */

	char socket[108];
	char state_dir[1024];
	char cgroup_root[512]; /* "" = choose */
	char admin_group[QJ_USER_LEN];
	enum qj_mode default_mode;
	uint64_t default_gpu_mem;
	unsigned jobs_per_gpu;
	uint64_t mem_margin;
	bool backfill;
	bool preemption;
	enum qconf_preempt_mode preempt_mode;
	double grace;           /* seconds */
	double cleanup_timeout; /* seconds */
	double sample_interval; /* seconds */
	double fairshare_half_life;
	unsigned max_running_gpus, max_running_jobs, max_queued_jobs; /* 0 = unlimited */
	int max_priority;  /* the highest priority a non-admin may ask */
	uint32_t max_time; /* seconds, 0 = none */
	uint32_t default_time;
	bool resume_queue;
	unsigned max_clients;
	size_t max_request;
	double nvml_timeout;
	double history_keep;

	struct qconf_limits *limit;
	size_t nr_limit;
	struct qconf_gpu *gpu;
	size_t nr_gpu;
};

/* Every key at its default, no sections. */
void qconf_defaults(struct qconf *c);
void qconf_release(struct qconf *c);

/*
 * Read path over the defaults in c (qconf_defaults() first). A missing file
 * is an error only when must_exist (it was named); otherwise c keeps the
 * defaults. Any bad line is an error "FILE:LINE: ..." and c is then
 * unchanged.
 */
int qconf_load(struct qconf *c, const char *path, bool must_exist, struct err *err);

/*
 * Parse text (a file's contents; name for messages) into c: what
 * qconf_load() does once the file is read, for the tests.
 */
int qconf_parse(struct qconf *c, const char *text, size_t len, const char *name, struct err *err);

/* The limits that apply to one user: the global keys, overridden by its groups' sections
 * (the most generous of them), overridden by its own [user] section. 0 = unlimited. */
struct qconf_user_limits {
	unsigned max_running_gpus, max_running_jobs, max_queued_jobs;
	int max_priority;
	uint32_t max_time;
};
void qconf_limits_for(const struct qconf *c, const char *user, const char *const *groups,
                      size_t nr_groups, struct qconf_user_limits *out);

/* The [gpu UUID] section of uuid, or NULL. */
const struct qconf_gpu *qconf_gpu_find(const struct qconf *c, const char *uuid);

#endif
