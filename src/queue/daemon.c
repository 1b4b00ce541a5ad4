/*
 * The queue daemon (daemon.h): requests, the plan, and each job's life.
 */
#include "queue/daemon.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <math.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/err.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "queue/conf.h"
#include "queue/exec.h"
#include "queue/gpus.h"
#include "queue/job.h"
#include "queue/jobjson.h"
#include "queue/proto.h"
#include "queue/sched.h"
#include "queue/store.h"

#define IDLE_TIMEOUT   30.0         /* a client that says nothing for this long is closed */
#define OUT_LIMIT      (4u << 20)   /* a client with this much unread is dropped */
#define OUT_KEEP       (1u << 20)   /* an output buffer larger than this is freed once sent */
#define PUMP_LIMIT     (512u << 10) /* streams (logs, events) refill below this */
#define HEARTBEAT      5.0          /* seconds between "heartbeat" metas */
#define USAGE_FLUSH    60.0         /* seconds between fair-share writes of running jobs */
#define LOG_CHUNK      (256 * 1024) /* bytes of a log per message */
#define EVENT_BATCH    500          /* events read from the store at once */
#define PROBE_EVERY    0.5          /* seconds between probes of a job without a pipe */
#define PLAN_EVERY     0.05         /* at most this often after requests */
#define REASON_EVERY   30.0         /* seconds between rewrites of a waiting reason */
#define SHOW_EVENTS    1000         /* events of a job in show */
#define PRUNE_EVERY    3600.0       /* seconds between prunes of the history */
#define MAX_ARGV_BYTES (256 * 1024)
#define MAX_ENV_BYTES  (512 * 1024)

struct djob {
	struct qjob j;
	int report_fd;
	double exiting_since; /* clock_mono() when it entered EXITING */
	uint64_t exit_seq;    /* the sample seq at that time */
	uint64_t observed[QJ_MAX_GPUS], current[QJ_MAX_GPUS];
	double acct_time; /* sample time of the last accounting */
	double usage_pending;
	double last_usage_flush;
	bool misplaced;
	bool have_verdict;
	char code[32];
	char vreason[QJ_REASON_LEN];
	double est_start;
	unsigned position;
	double next_probe;
	double reason_saved; /* when the reason was last written */
};

struct dgpu {
	char uuid[QJ_UUID_LEN];
	unsigned index;
	char name[96];
	uint64_t total, used;
	/*
	 * The driver's own use: the least memory ever seen used that no process
	 * accounts for (an idle GPU shows some hundred MiB). used_adj = used
	 * less it, what the scheduler and the cleanup checks are given.
	 */
	uint64_t baseline, used_adj;
	bool have_baseline;
	bool ok, lost, present;
	int pos;        /* in the latest sample, -1 when absent */
	unsigned flags; /* stored enum qg_flag */
	char note[256];
	/*
	 * What is not ours, for the cleanup check: the memory of the foreign
	 * processes seen, plus unattr_ref, the memory no process accounts for
	 * (above the baseline) as last seen while no job of ours held the GPU:
	 * memory that loses its process while a job holds the GPU is the job's,
	 * even when a sample sees the process gone before its exit is reported.
	 */
	uint64_t foreign_ref, unattr_ref;
	bool have_ref;
	uint64_t dirty_base;
	bool have_dirty_base;
	uint64_t foreign, available;
	unsigned jobs_on;
	bool planned;
};

struct ucache {
	uid_t uid;
	gid_t gid;
	bool known; /* has a passwd entry */
	char name[QJ_USER_LEN];
	bool admin;
	gid_t groups[32];
	unsigned nr_groups;
	struct qconf_user_limits lim;
	double usage, usage_at;
};

enum client_mode { CM_NONE = 0, CM_LOGS, CM_EVENTS };

struct client {
	int fd;
	uid_t uid;
	gid_t gid;
	pid_t pid;
	bool admin;
	struct strbuf in, out;
	size_t out_off;
	double last_active;
	bool closing; /* close once the output is sent */
	bool eof;     /* the client sends no more */
	bool dead;
	enum client_mode mode;
	/* logs -f */
	uint64_t job;
	char log_path[4096];
	int log_fd;
	uint64_t log_off;
	/* events */
	uint64_t ev_after;
	bool ev_follow, ev_caught_up;
};

struct pidjob {
	uint32_t pid;
	uint64_t job;
};

struct daemon {
	struct qdaemon_opts opts;
	struct qconf conf;
	struct gs_config gs;
	struct store *st;
	struct exec_env env;
	struct qgpus *gpus;
	int listen_fd, ev_fd, lock_fd;
	char sock_path[108];
	dev_t sock_dev;
	ino_t sock_ino;
	struct djob **job;
	size_t nr_job, alloc_job;
	struct dgpu *gpu;
	size_t nr_gpu, alloc_gpu;
	struct client **cl;
	size_t nr_cl, alloc_cl;
	struct ucache *uc;
	size_t nr_uc, alloc_uc;
	struct pidjob *pj;
	size_t nr_pj;
	struct qgpu_sample sample;
	bool have_sample;
	char nvml_status[256];
	bool stale;
	double stale_since; /* wall time of the last good sample */
	bool paused;
	/* after a suspension: no plan until a sample shows the memory it freed */
	uint64_t plan_after_seq;
	bool need_plan, need_tick, events_added;
	double last_plan, last_tick;
	double started, last_heartbeat, last_prune;
	uid_t self_uid;
	unsigned nr_running, nr_queued;
};

/* the signal handlers' self-pipe and what they saw */
static int sig_fd = -1;
static volatile sig_atomic_t got_term, got_hup, got_chld;

static void
on_signal(int sig)
{
	int e = errno;
	char c = 0;

	if (sig == SIGTERM || sig == SIGINT)
		got_term = 1;
	else if (sig == SIGHUP)
		got_hup = 1;
	else if (sig == SIGCHLD)
		got_chld = 1;
	if (sig_fd >= 0 && write(sig_fd, &c, 1) < 0) {
		/* full: a wake-up is already pending */
	}
	errno = e;
}

static void dlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
dlog(const char *fmt, ...)
{
	va_list ap;

	fputs("gpuscope queued: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

static double
now_wall(struct daemon *d)
{
	return clock_now(&d->gs);
}

/* ---- jobs in memory ---- */

static struct djob *
job_find(struct daemon *d, uint64_t id)
{
	size_t lo = 0, hi = d->nr_job;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->job[mid]->j.id == id)
			return d->job[mid];
		if (d->job[mid]->j.id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static struct djob *
job_add(struct daemon *d, const struct qjob *j)
{
	struct djob *dj = xcalloc(1, sizeof(*dj));
	size_t at = d->nr_job;

	qjob_init(&dj->j);
	qjob_copy(&dj->j, j);
	dj->report_fd = -1;
	ALLOC_GROW(d->job, d->nr_job + 1, d->alloc_job);
	/* ids only grow, so this is an append but for a requeue from the store */
	while (at > 0 && d->job[at - 1]->j.id > j->id)
		at--;
	memmove(d->job + at + 1, d->job + at, (d->nr_job - at) * sizeof(*d->job));
	d->job[at] = dj;
	d->nr_job++;
	return dj;
}

static void
job_remove(struct daemon *d, struct djob *dj)
{
	for (size_t i = 0; i < d->nr_job; i++)
		if (d->job[i] == dj) {
			memmove(d->job + i, d->job + i + 1, (d->nr_job - i - 1) * sizeof(*d->job));
			d->nr_job--;
			break;
		}
	if (dj->report_fd >= 0)
		close(dj->report_fd);
	qjob_release(&dj->j);
	free(dj);
}

static void
job_save(struct daemon *d, struct djob *dj)
{
	struct err err = ERR_INIT;

	if (store_job_update(d->st, &dj->j, &err) < 0)
		dlog("cannot record job %llu: %s", (unsigned long long)dj->j.id, err.msg);
}

static void event(struct daemon *d, uint64_t job, uid_t uid, const char *kind, const char *detail,
                  const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void
event(struct daemon *d, uint64_t job, uid_t uid, const char *kind, const char *detail,
      const char *fmt, ...)
{
	struct err err = ERR_INIT;
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (store_event_add(d->st, now_wall(d), job, uid, kind, detail, &err, "%s", text) < 0)
		dlog("cannot record an event (%s): %s", kind, err.msg);
	d->events_added = true;
}

static void jevent(struct daemon *d, struct djob *dj, const char *kind, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static void
jevent(struct daemon *d, struct djob *dj, const char *kind, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	event(d, dj->j.id, dj->j.uid, kind, NULL, "%s", text);
}

/* ---- users ---- */

static struct ucache *
user_get(struct daemon *d, uid_t uid, gid_t peer_gid)
{
	struct ucache *u;
	struct passwd pw, *pwp = NULL;
	char buf[16384];
	const char *gnames[32];
	char gname_buf[32][QJ_USER_LEN];
	gid_t admin_gid = (gid_t)-1;
	bool have_admin_gid = false;

	for (size_t i = 0; i < d->nr_uc; i++)
		if (d->uc[i].uid == uid)
			return &d->uc[i];
	ALLOC_GROW(d->uc, d->nr_uc + 1, d->alloc_uc);
	u = &d->uc[d->nr_uc++];
	memset(u, 0, sizeof(*u));
	u->uid = uid;
	u->gid = peer_gid;
	u->usage_at = -1;
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &pwp) == 0 && pwp) {
		int n = 32;

		u->known = true;
		str_copy(u->name, sizeof(u->name), pw.pw_name);
		u->gid = pw.pw_gid;
		if (getgrouplist(pw.pw_name, pw.pw_gid, u->groups, &n) < 0)
			n = 32;
		u->nr_groups = (unsigned)(n < 0 ? 0 : n > 32 ? 32 : n);
	} else {
		snprintf(u->name, sizeof(u->name), "%u", (unsigned)uid);
		u->groups[0] = peer_gid;
		u->nr_groups = 1;
	}
	{
		struct group gr, *grp = NULL;
		char gbuf[16384];

		if (d->conf.admin_group[0] &&
		    getgrnam_r(d->conf.admin_group, &gr, gbuf, sizeof(gbuf), &grp) == 0 && grp) {
			admin_gid = grp->gr_gid;
			have_admin_gid = true;
		}
	}
	u->admin = uid == 0 || (d->self_uid != 0 && uid == d->self_uid);
	for (unsigned i = 0; i < u->nr_groups; i++) {
		struct group gr, *grp = NULL;
		char gbuf[16384];

		if (have_admin_gid && u->groups[i] == admin_gid)
			u->admin = true;
		gnames[i] = NULL;
		if (getgrgid_r(u->groups[i], &gr, gbuf, sizeof(gbuf), &grp) == 0 && grp) {
			str_copy(gname_buf[i], sizeof(gname_buf[i]), grp->gr_name);
			gnames[i] = gname_buf[i];
		}
	}
	qconf_limits_for(&d->conf, u->name, gnames, u->nr_groups, &u->lim);
	return u;
}

static double
user_usage(struct daemon *d, struct ucache *u, double now)
{
	struct err err = ERR_INIT;

	if (u->usage_at >= 0 && now - u->usage_at < 5)
		return u->usage;
	if (store_usage_get(d->st, u->uid, now, d->conf.fairshare_half_life, &u->usage, &err) < 0)
		u->usage = 0;
	u->usage_at = now;
	return u->usage;
}

static void
flush_usage(struct daemon *d, struct djob *dj)
{
	struct err err = ERR_INIT;

	if (dj->usage_pending <= 0)
		return;
	if (store_usage_add(d->st, dj->j.uid, dj->usage_pending, now_wall(d),
	                    d->conf.fairshare_half_life, &err) < 0)
		dlog("cannot record the usage of uid %u: %s", (unsigned)dj->j.uid, err.msg);
	dj->usage_pending = 0;
	for (size_t i = 0; i < d->nr_uc; i++)
		if (d->uc[i].uid == dj->j.uid)
			d->uc[i].usage_at = -1;
}

/* ---- GPUs ---- */

static struct dgpu *
gpu_find(struct daemon *d, const char *uuid)
{
	for (size_t i = 0; i < d->nr_gpu; i++)
		if (!strcmp(d->gpu[i].uuid, uuid))
			return &d->gpu[i];
	return NULL;
}

static unsigned
gpu_flags(struct daemon *d, const struct dgpu *g)
{
	const struct qconf_gpu *c = qconf_gpu_find(&d->conf, g->uuid);
	unsigned f = g->flags;

	if (c && c->drain)
		f |= QG_DRAINED;
	if (c && c->reserved)
		f |= QG_RESERVED;
	return f;
}

static void
gpu_store(struct daemon *d, struct dgpu *g)
{
	struct err err = ERR_INIT;

	if (store_gpu_set(d->st, g->uuid, g->flags, g->note, now_wall(d), &err) < 0)
		dlog("cannot record GPU %s: %s", g->uuid, err.msg);
}

static struct dgpu *
gpu_add(struct daemon *d, const char *uuid)
{
	struct err err = ERR_INIT;
	struct dgpu *g;
	double since = 0;
	char key[160], val[64];

	ALLOC_GROW(d->gpu, d->nr_gpu + 1, d->alloc_gpu);
	g = &d->gpu[d->nr_gpu++];
	memset(g, 0, sizeof(*g));
	str_copy(g->uuid, sizeof(g->uuid), uuid);
	g->pos = -1;
	if (store_gpu_get(d->st, uuid, &g->flags, g->note, sizeof(g->note), &since, &err) < 0) {
		g->flags = 0;
		g->note[0] = '\0';
	}
	snprintf(key, sizeof(key), "dirty_base:%s", uuid);
	if ((g->flags & QG_DIRTY) && store_meta_get(d->st, key, val, sizeof(val), NULL) == 0) {
		g->dirty_base = strtoull(val, NULL, 10);
		g->have_dirty_base = true;
	}
	return g;
}

static void
gpu_flag_names(json_t *a, unsigned f)
{
	if (f & QG_DRAINED)
		json_array_append_new(a, json_string("drained"));
	if (f & QG_DIRTY)
		json_array_append_new(a, json_string("dirty"));
	if (f & QG_LOST)
		json_array_append_new(a, json_string("lost"));
	if (f & QG_RESERVED)
		json_array_append_new(a, json_string("reserved"));
}

/*
 * A GPU named by a user: an exact UUID, an NVML index, or a unique prefix of
 * a UUID (with or without "GPU-"); only GPUs present in the last sample.
 */
static struct dgpu *
gpu_resolve(struct daemon *d, const char *s, char *why, size_t why_len)
{
	struct dgpu *hit = NULL;
	unsigned nr = 0;
	bool digits = *s != '\0';

	for (const char *p = s; *p; p++)
		if (!isdigit((unsigned char)*p))
			digits = false;
	for (size_t i = 0; i < d->nr_gpu; i++)
		if (d->gpu[i].present && !strcmp(d->gpu[i].uuid, s))
			return &d->gpu[i];
	if (digits) {
		unsigned long idx = strtoul(s, NULL, 10);

		for (size_t i = 0; i < d->nr_gpu; i++)
			if (d->gpu[i].present && d->gpu[i].index == idx)
				return &d->gpu[i];
	}
	if (strlen(s) >= 4 || (!digits && *s))
		for (size_t i = 0; i < d->nr_gpu; i++) {
			const char *u = d->gpu[i].uuid;

			if (!d->gpu[i].present)
				continue;
			if (!strncmp(u, s, strlen(s)) ||
			    (!strncmp(u, "GPU-", 4) && !strncmp(u + 4, s, strlen(s)))) {
				hit = &d->gpu[i];
				nr++;
			}
		}
	if (nr == 1)
		return hit;
	if (nr > 1)
		snprintf(why, why_len,
		         "GPU '%s' is ambiguous: it begins %u UUIDs ('queue ls' lists them)", s,
		         nr);
	else
		snprintf(why, why_len,
		         "unknown GPU '%s': no GPU has that index or UUID ('queue ls' lists them)",
		         s);
	return NULL;
}

/* ---- clients: output ---- */

static void
client_send(struct client *c, json_t *msg)
{
	if (c->dead)
		return;
	if (c->out.len - c->out_off > OUT_LIMIT) {
		/* does not read: let it go rather than hold its answers */
		c->dead = true;
		return;
	}
	if (qproto_encode(msg, &c->out) < 0) {
		json_t *e = qproto_error("internal", "the answer could not be encoded");

		qproto_encode(e, &c->out);
		json_decref(e);
	}
}

static int
dump_to_strbuf(const char *buf, size_t size, void *data)
{
	strbuf_add(data, buf, size);
	return 0;
}

/* Append v, compact, to the client's output (no message end); false when it cannot be encoded. */
static bool
client_add_json(struct client *c, json_t *v)
{
	return v && json_dump_callback(v, dump_to_strbuf, &c->out, JSON_COMPACT) == 0;
}

/*
 * A long answer written piece by piece into the client's output, so that no
 * JSON tree of every job, nor a second encoded copy, is ever held:
 * client_stream_begin(c, "{\"ok\":true,\"jobs\":["), then client_stream_item()
 * per element (it steals the reference), then client_stream_end(c, "]...}").
 */
struct stream {
	size_t start; /* c->out.len at the beginning: the answer is cut back to it on failure */
	size_t nr;
	bool bad;
};

static void
client_stream_begin(struct client *c, struct stream *st, const char *head)
{
	st->start = c->out.len;
	st->nr = 0;
	st->bad = c->dead || c->out.len - c->out_off > OUT_LIMIT;
	if (st->bad) {
		c->dead = true;
		return;
	}
	strbuf_addstr(&c->out, head);
}

static void
client_stream_item(struct client *c, struct stream *st, json_t *v)
{
	if (!st->bad) {
		if (st->nr++)
			strbuf_addch(&c->out, ',');
		if (!client_add_json(c, v))
			st->bad = true;
	}
	json_decref(v);
}

static void
client_stream_end(struct client *c, struct stream *st, const char *tail)
{
	if (c->dead)
		return;
	if (st->bad) {
		json_t *e = qproto_error("internal", "the answer could not be encoded");

		strbuf_setlen(&c->out, st->start);
		qproto_encode(e, &c->out);
		json_decref(e);
		return;
	}
	strbuf_addstr(&c->out, tail);
	strbuf_addch(&c->out, '\n');
}

static void
client_reply(struct client *c, json_t *msg)
{
	client_send(c, msg);
	json_decref(msg);
}

static void
client_flush(struct client *c)
{
	while (!c->dead && c->out_off < c->out.len) {
		ssize_t n = send(c->fd, c->out.buf + c->out_off, c->out.len - c->out_off,
		                 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				c->dead = true;
			break;
		}
		c->out_off += (size_t)n;
	}
	if (c->out_off == c->out.len) {
		if (c->out.alloc > OUT_KEEP) {
			/* a large answer (ls, history) was sent: give its memory back */
			strbuf_release(&c->out);
#ifdef __GLIBC__
			malloc_trim(0);
#endif
		} else
			strbuf_reset(&c->out);
		c->out_off = 0;
		if (c->closing)
			c->dead = true;
	} else if (c->out_off > (1u << 20)) {
		memmove(c->out.buf, c->out.buf + c->out_off, c->out.len - c->out_off);
		strbuf_setlen(&c->out, c->out.len - c->out_off);
		c->out_off = 0;
	}
}

static json_t *
ok_object(void)
{
	json_t *o = json_object();

	json_object_set_new(o, "ok", json_true());
	return o;
}

/* ---- JSON of jobs, GPUs, the daemon ---- */

static json_t *
job_json(struct daemon *d, const struct qjob *j, const struct djob *dj, bool full)
{
	json_t *o = qjob_to_json(j, full);
	json_t *idx = json_array();

	for (unsigned i = 0; i < j->nr_gpu; i++) {
		struct dgpu *g = gpu_find(d, j->gpu_uuid[i]);

		json_array_append_new(idx, g ? json_integer(g->index) : json_null());
	}
	json_object_set_new(o, "gpu_indices", idx);
	if (dj && dj->have_verdict && (j->state == QJ_QUEUED || j->state == QJ_HELD)) {
		json_object_set_new(o, "code", json_string(dj->code));
		json_object_set_new(o, "reason", qj_json_string(dj->vreason, strlen(dj->vreason)));
		json_object_set_new(o, "est_start",
		                    dj->est_start > 0 ? json_real(dj->est_start) : json_null());
		json_object_set_new(o, "position", json_integer(dj->position));
	} else {
		json_object_set_new(o, "code", json_string(qj_state_name(j->state)));
		json_object_set_new(o, "est_start", json_null());
	}
	if (d->paused && (j->state == QJ_QUEUED)) {
		json_object_set_new(o, "code", json_string("paused"));
		json_object_set_new(
		        o, "reason",
		        json_string("the queue is paused by an admin ('gpuscope queue unpause')"));
	}
	return o;
}

static json_t *
gpu_json(struct daemon *d, const struct dgpu *g)
{
	json_t *o = json_object(), *jobs = json_array(), *flags = json_array();

	json_object_set_new(o, "index", json_integer(g->index));
	json_object_set_new(o, "uuid", json_string(g->uuid));
	json_object_set_new(o, "name", qj_json_string(g->name, strlen(g->name)));
	json_object_set_new(o, "total", json_integer((json_int_t)g->total));
	json_object_set_new(o, "used", json_integer((json_int_t)g->used));
	json_object_set_new(o, "foreign", json_integer((json_int_t)(g->planned ? g->foreign : 0)));
	json_object_set_new(o, "available",
	                    json_integer((json_int_t)(g->planned ? g->available : 0)));
	for (size_t i = 0; i < d->nr_job; i++) {
		const struct qjob *j = &d->job[i]->j;

		if (!qj_state_holds_gpus(j->state) && j->state != QJ_SUSPENDED)
			continue;
		for (unsigned k = 0; k < j->nr_gpu; k++)
			if (!strcmp(j->gpu_uuid[k], g->uuid))
				json_array_append_new(jobs, json_integer((json_int_t)j->id));
	}
	json_object_set_new(o, "jobs", jobs);
	gpu_flag_names(flags, gpu_flags(d, g) | (g->present ? 0 : QG_LOST));
	json_object_set_new(o, "flags", flags);
	json_object_set_new(o, "present", json_boolean(g->present));
	json_object_set_new(o, "ok", json_boolean(g->present && g->ok));
	json_object_set_new(o, "note", qj_json_string(g->note, strlen(g->note)));
	return o;
}

static json_t *
daemon_json(struct daemon *d)
{
	json_t *o = json_object();
	char nv[320];

	json_object_set_new(o, "version", json_string(GPUSCOPE_VERSION));
	json_object_set_new(o, "protocol", json_integer(QPROTO_VERSION));
	json_object_set_new(o, "pid", json_integer(getpid()));
	json_object_set_new(o, "started", json_real(d->started));
	json_object_set_new(o, "cgroups", json_boolean(d->env.cgroups));
	json_object_set_new(o, "cgroup_root", json_string(d->env.cgroup_root));
	json_object_set_new(o, "why_no_cgroups",
	                    d->env.cgroups ? json_null() : json_string(d->env.why_no_cgroups));
	json_object_set_new(o, "paused", json_boolean(d->paused));
	if (d->stale) {
		time_t t = (time_t)d->stale_since;
		struct tm tm;
		char ts[64];

		localtime_r(&t, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", &tm);
		snprintf(nv, sizeof(nv), "not answering since %s", ts);
	} else if (!d->have_sample) {
		snprintf(nv, sizeof(nv), "%s", d->nvml_status[0] ? d->nvml_status : "opening");
	} else {
		snprintf(nv, sizeof(nv), "%s", d->nvml_status);
	}
	json_object_set_new(o, "nvml", json_string(nv));
	json_object_set_new(o, "jobs_running", json_integer(d->nr_running));
	json_object_set_new(o, "jobs_queued", json_integer(d->nr_queued));
	json_object_set_new(o, "state_dir", json_string(d->conf.state_dir));
	json_object_set_new(o, "config", json_string(d->conf.path));
	return o;
}

/* ---- job life ---- */

static double
job_grace(struct daemon *d, const struct qjob *j)
{
	return j->req.grace ? (double)j->req.grace : d->conf.grace;
}

static void
describe_exit(const struct qjob *j, char *buf, size_t len)
{
	if (!j->has_exit)
		snprintf(buf, len, "ended without an exit status");
	else if (j->exit_signal)
		snprintf(buf, len, "killed by signal %d (%s)", j->exit_signal,
		         strsignal(j->exit_signal));
	else
		snprintf(buf, len, "exited with code %d", j->exit_code);
}

/* Terminal: record, clean up, forget. */
static void
job_end(struct daemon *d, struct djob *dj, enum qj_state state, const char *reason)
{
	struct err err = ERR_INIT;
	bool had_sup = dj->j.sup_pid > 0 || dj->j.cgroup[0];

	store_begin(d->st, NULL);
	dj->j.state = state;
	if (!dj->j.end_time)
		dj->j.end_time = now_wall(d);
	if (reason)
		str_copy(dj->j.reason, sizeof(dj->j.reason), reason);
	dj->j.stop_cause = QJ_STOP_NONE;
	dj->j.stop_deadline = 0;
	flush_usage(d, dj);
	job_save(d, dj);
	jevent(d, dj, qj_state_name(state), "job %llu %s: %s", (unsigned long long)dj->j.id,
	       qj_state_name(state), dj->j.reason);
	store_commit(d->st, NULL);
	if (had_sup && exec_cleanup(&d->env, &dj->j, &err) < 0)
		dlog("cleaning up after job %llu: %s", (unsigned long long)dj->j.id, err.msg);
	d->need_plan = true;
	job_remove(d, dj);
}

/* Back to the queue (preempted, a lost GPU, never started). */
static void
job_requeue(struct daemon *d, struct djob *dj, const char *why)
{
	struct err err = ERR_INIT;

	if (dj->j.sup_pid > 0 || dj->j.cgroup[0])
		if (exec_cleanup(&d->env, &dj->j, &err) < 0)
			dlog("cleaning up after job %llu: %s", (unsigned long long)dj->j.id,
			     err.msg);
	if (dj->report_fd >= 0) {
		close(dj->report_fd);
		dj->report_fd = -1;
	}
	store_begin(d->st, NULL);
	flush_usage(d, dj);
	dj->j.state = QJ_QUEUED;
	dj->j.restarts++;
	dj->j.nr_gpu = 0;
	memset(dj->j.gpu_uuid, 0, sizeof(dj->j.gpu_uuid));
	dj->j.cgroup[0] = '\0';
	dj->j.sup_pid = 0;
	dj->j.sup_start = 0;
	dj->j.pid = 0;
	dj->j.has_exit = false;
	dj->j.exit_code = 0;
	dj->j.exit_signal = 0;
	dj->j.end_time = 0;
	dj->j.stop_cause = QJ_STOP_NONE;
	dj->j.stop_deadline = 0;
	str_copy(dj->j.reason, sizeof(dj->j.reason), why);
	memset(dj->observed, 0, sizeof(dj->observed));
	memset(dj->current, 0, sizeof(dj->current));
	dj->acct_time = 0;
	dj->misplaced = false;
	dj->have_verdict = false;
	job_save(d, dj);
	jevent(d, dj, "requeue", "job %llu requeued (restart %u): %s", (unsigned long long)dj->j.id,
	       dj->j.restarts, why);
	store_commit(d->st, NULL);
	d->need_plan = true;
}

/* The main process ended: hold the GPUs until the cgroup is empty and the memory is back. */
static void
job_exited(struct daemon *d, struct djob *dj, const struct exec_report *r, const char *how)
{
	struct err err = ERR_INIT;
	char what[200];

	if (dj->j.state == QJ_EXITING || qj_state_terminal(dj->j.state))
		return;
	dj->j.has_exit = true;
	dj->j.exit_code = r->exit_code;
	dj->j.exit_signal = r->exit_signal;
	if (r->launch_error) {
		if (!dj->j.exit_code && !dj->j.exit_signal)
			dj->j.exit_code = 127;
		snprintf(dj->j.reason, sizeof(dj->j.reason), "could not start: %.230s", r->text);
	}
	/* the supervisor's own backstop stopped it at its time limit (the daemon was away) */
	if (r->timed_out && dj->j.stop_cause != QJ_STOP_CANCEL) {
		dj->j.stop_cause = QJ_STOP_TIMEOUT;
		snprintf(dj->j.reason, sizeof(dj->j.reason), "%.200s",
		         r->text[0] ? r->text : "stopped at its time limit by its supervisor");
	}
	dj->j.end_time = r->time > 0 ? r->time : now_wall(d);
	dj->j.state = QJ_EXITING;
	dj->exiting_since = clock_mono();
	dj->exit_seq = d->sample.seq;
	if (r->launch_error)
		snprintf(what, sizeof(what), "could not start: %.140s", r->text);
	else
		describe_exit(&dj->j, what, sizeof(what));
	store_begin(d->st, NULL);
	job_save(d, dj);
	jevent(d, dj, "exit", "job %llu %s%s", (unsigned long long)dj->j.id, what, how);
	store_commit(d->st, NULL);
	if (exec_kill(&d->env, &dj->j, &err) < 0 && err.code != E_NOTFOUND)
		dlog("killing what remains of job %llu: %s", (unsigned long long)dj->j.id, err.msg);
	if (d->gpus)
		qgpus_poke(d->gpus);
}

static void
job_running(struct daemon *d, struct djob *dj, pid_t pid)
{
	if (dj->j.state != QJ_STARTING)
		return;
	dj->j.state = QJ_RUNNING;
	dj->j.pid = pid;
	store_begin(d->st, NULL);
	job_save(d, dj);
	jevent(d, dj, "running", "job %llu runs as process %d", (unsigned long long)dj->j.id,
	       (int)pid);
	store_commit(d->st, NULL);
}

/* The supervisor is gone without an exit: kill what remains, fail. */
static void
job_sup_lost(struct daemon *d, struct djob *dj)
{
	struct err err = ERR_INIT;

	exec_kill(&d->env, &dj->j, &err);
	job_end(d, dj, QJ_FAILED,
	        "supervisor lost: it ended without recording how the job ended (killed what "
	        "remained)");
}

static void
job_stop(struct daemon *d, struct djob *dj, int cause, int sig, const char *why)
{
	struct err err = ERR_INIT;
	static const char *const kinds[] = { "stop", "cancel", "timeout", "preempt", "gpu-lost" };

	if (dj->j.state == QJ_SUSPENDED) {
		exec_freeze(&d->env, &dj->j, false, &err);
		sig = SIGKILL;
	}
	dj->j.state = QJ_STOPPING;
	dj->j.stop_cause = cause;
	dj->j.stop_deadline = now_wall(d) + job_grace(d, &dj->j);
	str_copy(dj->j.reason, sizeof(dj->j.reason), why);
	store_begin(d->st, NULL);
	job_save(d, dj);
	jevent(d, dj, kinds[cause >= 0 && cause <= 4 ? cause : 0], "job %llu: %s",
	       (unsigned long long)dj->j.id, why);
	store_commit(d->st, NULL);
	err_clear(&err);
	if (exec_signal(&d->env, &dj->j, sig, &err) < 0 && err.code != E_NOTFOUND)
		dlog("signalling job %llu: %s", (unsigned long long)dj->j.id, err.msg);
}

static void
job_start(struct daemon *d, struct djob *dj, const struct sched_action *a,
          const struct sched_gpu *sg)
{
	struct err err = ERR_INIT;
	struct exec_launch l = { .report_fd = -1 };
	struct strbuf where = STRBUF_INIT;

	if (dj->j.state == QJ_SUSPENDED) {
		if (exec_resume(&d->env, &dj->j, &err) < 0) {
			char why[QJ_REASON_LEN];

			snprintf(why, sizeof(why), "could not be resumed: %s", err.msg);
			exec_kill(&d->env, &dj->j, NULL);
			job_end(d, dj, QJ_FAILED, why);
			return;
		}
		dj->j.state = QJ_RUNNING;
		dj->j.reason[0] = '\0';
		job_save(d, dj);
		jevent(d, dj, "resume", "job %llu resumed", (unsigned long long)dj->j.id);
		return;
	}
	dj->j.nr_gpu = 0;
	for (unsigned i = 0; i < a->nr_gpu && i < QJ_MAX_GPUS; i++) {
		const struct sched_gpu *g = &sg[a->gpu[i]];

		str_copy(dj->j.gpu_uuid[dj->j.nr_gpu++], QJ_UUID_LEN, g->uuid);
		strbuf_addf(&where, "%s%u", i ? "," : "", g->index);
	}
	dj->j.state = QJ_STARTING;
	dj->j.start_time = now_wall(d);
	dj->j.end_time = 0;
	dj->j.reason[0] = '\0';
	dj->have_verdict = false;
	memset(dj->observed, 0, sizeof(dj->observed));
	memset(dj->current, 0, sizeof(dj->current));
	dj->acct_time = 0;
	dj->misplaced = false;
	/* the intent first: a daemon killed now finds STARTING and probes */
	job_save(d, dj);
	l.grace = job_grace(d, &dj->j);
	if (exec_start(&d->env, &dj->j, &l, &err) < 0) {
		char why[QJ_REASON_LEN];

		snprintf(why, sizeof(why), "could not start: %s", err.msg);
		if (l.report_fd >= 0)
			close(l.report_fd);
		job_end(d, dj, QJ_FAILED, why);
		strbuf_release(&where);
		return;
	}
	dj->report_fd = l.report_fd;
	store_begin(d->st, NULL);
	job_save(d, dj);
	jevent(d, dj, "start", "job %llu started on %s%s (supervisor %d)",
	       (unsigned long long)dj->j.id, dj->j.nr_gpu ? "GPU " : "no GPU",
	       dj->j.nr_gpu ? where.buf : "", (int)dj->j.sup_pid);
	store_commit(d->st, NULL);
	strbuf_release(&where);
}

static void
job_preempt(struct daemon *d, struct djob *dj, const struct sched_action *a)
{
	struct err err = ERR_INIT;
	char why[QJ_REASON_LEN];

	if (dj->j.state != QJ_RUNNING)
		return;
	if (a->reason[0])
		str_copy(why, sizeof(why), a->reason);
	else
		snprintf(why, sizeof(why), "preempted for job %llu",
		         (unsigned long long)a->for_job);
	if (d->conf.preempt_mode == QPM_CHECKPOINT && exec_checkpoint_supported()) {
		if (exec_suspend(&d->env, &dj->j, &err) == 0) {
			dj->j.state = QJ_SUSPENDED;
			str_copy(dj->j.reason, sizeof(dj->j.reason), why);
			flush_usage(d, dj);
			dj->acct_time = 0;
			job_save(d, dj);
			jevent(d, dj, "suspend", "job %llu suspended (checkpointed): %s",
			       (unsigned long long)dj->j.id, why);
			/* its memory is still in the last sample: plan again after the next */
			d->plan_after_seq = d->sample.seq;
			if (d->gpus)
				qgpus_poke(d->gpus);
			d->need_plan = true;
			return;
		}
		dlog("checkpoint of job %llu failed (%s): stopping it instead",
		     (unsigned long long)dj->j.id, err.msg);
	}
	job_stop(d, dj, QJ_STOP_PREEMPT, SIGTERM, why);
}

/* After EXITING: stopped by the queue, or its own end. */
static void
job_finish(struct daemon *d, struct djob *dj)
{
	char what[QJ_REASON_LEN], gpu[160];

	switch (dj->j.stop_cause) {
	case QJ_STOP_CANCEL:
		job_end(d, dj, QJ_CANCELLED, NULL);
		return;
	case QJ_STOP_TIMEOUT:
		job_end(d, dj, QJ_TIMEOUT, NULL);
		return;
	case QJ_STOP_PREEMPT:
		str_copy(what, sizeof(what), dj->j.reason);
		job_requeue(d, dj, what);
		return;
	case QJ_STOP_GPU_LOST:
		str_copy(gpu, sizeof(gpu), dj->j.reason);
		if (dj->j.req.requeue_on_loss) {
			job_requeue(d, dj, gpu);
			return;
		}
		job_end(d, dj, QJ_FAILED, gpu);
		return;
	default:
		break;
	}
	if (dj->j.has_exit && dj->j.exit_code == 0 && !dj->j.exit_signal) {
		job_end(d, dj, QJ_DONE, "exited with code 0");
		return;
	}
	if (!strncmp(dj->j.reason, "could not start", 15)) {
		job_end(d, dj, QJ_FAILED, NULL);
		return;
	}
	describe_exit(&dj->j, what, sizeof(what));
	job_end(d, dj, QJ_FAILED, what);
}

/* Our processes' current use on GPU g, but for job skip. */
static uint64_t
others_use(struct daemon *d, const char *uuid, const struct djob *skip)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < d->nr_job; i++) {
		const struct djob *o = d->job[i];

		if (o == skip || !qj_state_holds_gpus(o->j.state))
			continue;
		for (unsigned k = 0; k < o->j.nr_gpu; k++)
			if (!strcmp(o->j.gpu_uuid[k], uuid))
				sum += o->current[k];
	}
	return sum;
}

static bool
job_has_procs_on(struct daemon *d, const struct djob *dj, int pos)
{
	for (size_t i = 0; i < d->nr_pj && i < d->sample.nr_proc; i++)
		if (d->pj[i].job == dj->j.id && (int)d->sample.proc[i].gpu == pos)
			return true;
	return false;
}

static void
check_exiting(struct daemon *d, struct djob *dj)
{
	struct err err = ERR_INIT;
	struct exec_probe p;
	bool populated = false, back = true;
	bool timed_out = clock_mono() - dj->exiting_since > d->conf.cleanup_timeout;
	unsigned not_back[QJ_MAX_GPUS], nr_not_back = 0;

	memset(&p, 0, sizeof(p));
	if (exec_probe(&d->env, &dj->j, &p, &err) == 0)
		populated = p.populated;
	if (populated) {
		exec_kill(&d->env, &dj->j, NULL);
		back = false;
	}
	/* a sample taken after the end says whether the memory came back */
	if (!d->have_sample || d->stale || d->sample.seq <= dj->exit_seq)
		back = false;
	for (unsigned k = 0; k < dj->j.nr_gpu; k++) {
		struct dgpu *g = gpu_find(d, dj->j.gpu_uuid[k]);
		uint64_t limit;

		if (!g || !g->present || g->lost || (g->flags & QG_LOST))
			continue;
		limit = (g->have_ref ? g->foreign_ref : 0) + others_use(d, g->uuid, dj) +
		        d->conf.mem_margin;
		if (!g->ok || job_has_procs_on(d, dj, g->pos) || g->used_adj > limit)
			not_back[nr_not_back++] = k;
	}
	if (nr_not_back)
		back = false;
	if (back && !populated) {
		job_finish(d, dj);
		return;
	}
	if (!timed_out)
		return;
	/* the job ends anyway; what it left makes its GPUs dirty */
	if (!nr_not_back && populated)
		for (unsigned k = 0; k < dj->j.nr_gpu; k++)
			not_back[nr_not_back++] = k;
	for (unsigned i = 0; i < nr_not_back; i++) {
		struct dgpu *g = gpu_find(d, dj->j.gpu_uuid[not_back[i]]);
		char key[160], val[64];

		if (!g)
			continue;
		g->flags |= QG_DIRTY;
		snprintf(g->note, sizeof(g->note),
		         "dirty: memory of job %llu did not come back within %.0f s%s ('gpuscope "
		         "queue clean %u' once it is free)",
		         (unsigned long long)dj->j.id, d->conf.cleanup_timeout,
		         populated ? " (its processes did not die)" : "", g->index);
		g->dirty_base = g->have_ref ? g->foreign_ref : 0;
		g->have_dirty_base = true;
		snprintf(key, sizeof(key), "dirty_base:%s", g->uuid);
		snprintf(val, sizeof(val), "%llu", (unsigned long long)g->dirty_base);
		store_meta_set(d->st, key, val, NULL);
		gpu_store(d, g);
		event(d, 0, (uid_t)-1, "dirty", NULL, "GPU %u (%s) is dirty: %s", g->index, g->uuid,
		      g->note);
	}
	job_finish(d, dj);
}

/* ---- the sample ---- */

static void
gpu_lost(struct daemon *d, struct dgpu *g, const char *why)
{
	char reason[QJ_REASON_LEN];

	g->flags |= QG_LOST | QG_DRAINED;
	snprintf(g->note, sizeof(g->note), "lost: %s", why);
	gpu_store(d, g);
	event(d, 0, (uid_t)-1, "gpu-lost", NULL, "GPU %u (%s) was lost: %s", g->index, g->uuid,
	      why);
	snprintf(reason, sizeof(reason), "GPU %u (%s) was lost: %s", g->index, g->uuid, why);
	for (size_t i = 0; i < d->nr_job; i++) {
		struct djob *dj = d->job[i];
		bool on = false;

		for (unsigned k = 0; k < dj->j.nr_gpu; k++)
			on |= !strcmp(dj->j.gpu_uuid[k], g->uuid);
		if (!on)
			continue;
		if (dj->j.state == QJ_STARTING || dj->j.state == QJ_RUNNING ||
		    dj->j.state == QJ_SUSPENDED)
			job_stop(d, dj, QJ_STOP_GPU_LOST, SIGTERM, reason);
		else if (dj->j.state == QJ_STOPPING || dj->j.state == QJ_EXITING)
			dj->j.stop_cause = QJ_STOP_GPU_LOST,
			str_copy(dj->j.reason, sizeof(dj->j.reason), reason);
	}
}

static uint64_t
pid_job_cached(struct daemon *d, const struct pidjob *old, size_t nr_old, uint32_t pid)
{
	for (size_t i = 0; i < nr_old; i++)
		if (old[i].pid == pid)
			return old[i].job;
	return exec_pid_job(&d->env, (pid_t)pid);
}

static void
process_sample(struct daemon *d)
{
	struct qgpu_sample s;
	struct pidjob *old = d->pj;
	size_t nr_old = d->nr_pj;
	char status[256];

	qgpu_sample_init(&s);
	if (!qgpus_latest(d->gpus, &s, status, sizeof(status))) {
		str_copy(d->nvml_status, sizeof(d->nvml_status), status);
		return;
	}
	str_copy(d->nvml_status, sizeof(d->nvml_status), status);
	if (d->have_sample && s.seq == d->sample.seq) {
		qgpu_sample_release(&s);
		return;
	}
	qgpu_sample_release(&d->sample);
	d->sample = s;
	d->have_sample = true;
	d->stale_since = s.time;

	for (size_t i = 0; i < d->nr_gpu; i++) {
		d->gpu[i].present = false;
		d->gpu[i].pos = -1;
	}
	for (size_t i = 0; i < d->sample.nr_gpu; i++) {
		const struct qgpu_info *q = &d->sample.gpu[i];
		struct dgpu *g = gpu_find(d, q->uuid);

		if (!g)
			g = gpu_add(d, q->uuid);
		g->present = true;
		g->pos = (int)i;
		g->index = q->index;
		str_copy(g->name, sizeof(g->name), q->name);
		g->total = q->total;
		g->used = q->used;
		g->ok = q->ok;
		g->lost = q->lost;
		if (q->lost && !(g->flags & QG_LOST))
			gpu_lost(d, g, q->state_msg[0] ? q->state_msg : "fallen off the bus");
	}
	/* a GPU that was there and is not: gone (only when the driver answers) */
	if (!strcmp(d->nvml_status, "ok"))
		for (size_t i = 0; i < d->nr_gpu; i++)
			if (!d->gpu[i].present && !(d->gpu[i].flags & QG_LOST))
				gpu_lost(d, &d->gpu[i], "it is no longer listed by the driver");

	/* which job each process is of (pids seen before are not looked up again) */
	d->pj = d->sample.nr_proc ? xcalloc(d->sample.nr_proc, sizeof(*d->pj)) : NULL;
	d->nr_pj = d->sample.nr_proc;
	for (size_t i = 0; i < d->sample.nr_proc; i++) {
		d->pj[i].pid = d->sample.proc[i].pid;
		d->pj[i].job = pid_job_cached(d, old, nr_old, d->sample.proc[i].pid);
	}
	free(old);

	for (size_t i = 0; i < d->nr_job; i++)
		memset(d->job[i]->current, 0, sizeof(d->job[i]->current));
	for (size_t i = 0; i < d->sample.nr_proc; i++) {
		const struct qgpu_proc *p = &d->sample.proc[i];
		const struct qgpu_info *q = &d->sample.gpu[p->gpu];
		struct djob *dj = d->pj[i].job ? job_find(d, d->pj[i].job) : NULL;
		bool found = false;

		if (!dj)
			continue;
		for (unsigned k = 0; k < dj->j.nr_gpu; k++)
			if (!strcmp(dj->j.gpu_uuid[k], q->uuid)) {
				dj->current[k] += p->used;
				found = true;
			}
		if (!found && !dj->misplaced && dj->j.state != QJ_QUEUED) {
			dj->misplaced = true;
			snprintf(dj->j.reason, sizeof(dj->j.reason),
			         "process %u uses GPU %u, which it was not given: it ignores "
			         "CUDA_VISIBLE_DEVICES",
			         p->pid, q->index);
			job_save(d, dj);
			jevent(d, dj, "misplaced", "job %llu: %s", (unsigned long long)dj->j.id,
			       dj->j.reason);
		}
	}
	for (size_t i = 0; i < d->nr_job; i++) {
		struct djob *dj = d->job[i];

		for (unsigned k = 0; k < dj->j.nr_gpu; k++) {
			if (dj->current[k] > dj->observed[k])
				dj->observed[k] = dj->current[k];
			if (dj->current[k] > dj->j.peak_gpu_mem)
				dj->j.peak_gpu_mem = dj->current[k];
		}
		if (qj_state_holds_gpus(dj->j.state) && dj->j.state != QJ_STARTING) {
			if (dj->acct_time > 0 && d->sample.time > dj->acct_time) {
				double dt = d->sample.time - dj->acct_time;

				if (dt > 60)
					dt = 60;
				dj->j.gpu_seconds += dj->j.nr_gpu * dt;
				dj->usage_pending += dj->j.nr_gpu * dt;
			}
			dj->acct_time = d->sample.time;
		}
	}
	/* what is not ours on each GPU, frozen while a job there is being cleaned up */
	for (size_t i = 0; i < d->nr_gpu; i++) {
		struct dgpu *g = &d->gpu[i];
		uint64_t ours = 0, procs = 0, unattributed;
		bool frozen = false, held = false;

		if (!g->present)
			continue;
		for (size_t k = 0; k < d->sample.nr_proc; k++)
			if ((int)d->sample.proc[k].gpu == g->pos) {
				procs += d->sample.proc[k].used;
				if (d->pj[k].job)
					ours += d->sample.proc[k].used;
			}
		unattributed = g->used > procs ? g->used - procs : 0;
		/* only from a GPU that answered: one that did not has no memory figures */
		if (g->ok && (!g->have_baseline || unattributed < g->baseline)) {
			g->baseline = unattributed;
			g->have_baseline = true;
		}
		g->used_adj = g->used > g->baseline ? g->used - g->baseline : 0;
		for (size_t j = 0; j < d->nr_job; j++) {
			const struct djob *dj = d->job[j];

			for (unsigned k = 0; k < dj->j.nr_gpu; k++)
				if (!strcmp(dj->j.gpu_uuid[k], g->uuid)) {
					if (dj->j.state == QJ_EXITING)
						frozen = true;
					if (qj_state_holds_gpus(dj->j.state))
						held = true;
				}
		}
		if (!held && g->ok)
			g->unattr_ref = unattributed > g->baseline ? unattributed - g->baseline : 0;
		if (!frozen && g->ok) {
			/* procs - ours: the foreign processes' memory */
			g->foreign_ref = procs - ours + g->unattr_ref;
			g->have_ref = true;
		}
		/* a dirty GPU whose memory came back is clean again */
		if ((g->flags & QG_DIRTY) && !held && g->have_dirty_base && g->ok &&
		    g->used_adj <= g->dirty_base + d->conf.mem_margin) {
			g->flags &= ~(unsigned)QG_DIRTY;
			g->note[0] = '\0';
			g->have_dirty_base = false;
			gpu_store(d, g);
			event(d, 0, (uid_t)-1, "clean", NULL,
			      "GPU %u (%s) is clean again: its memory came back", g->index,
			      g->uuid);
		}
	}
	d->need_plan = true;
}

/* ---- the plan ---- */

static void
resolve_reserved(struct daemon *d, const char *uuid, struct sched_gpu *sg)
{
	const struct qconf_gpu *c = qconf_gpu_find(&d->conf, uuid);
	char buf[16384];

	sg->nr_reserved_uid = sg->nr_reserved_gid = 0;
	if (!c || !c->reserved)
		return;
	for (unsigned i = 0; i < c->nr_reserve_user && sg->nr_reserved_uid < 16; i++) {
		struct passwd pw, *pwp = NULL;

		if (getpwnam_r(c->reserve_user[i], &pw, buf, sizeof(buf), &pwp) == 0 && pwp)
			sg->reserved_uid[sg->nr_reserved_uid++] = pw.pw_uid;
	}
	for (unsigned i = 0; i < c->nr_reserve_group && sg->nr_reserved_gid < 16; i++) {
		struct group gr, *grp = NULL;

		if (getgrnam_r(c->reserve_group[i], &gr, buf, sizeof(buf), &grp) == 0 && grp)
			sg->reserved_gid[sg->nr_reserved_gid++] = gr.gr_gid;
	}
}

static void
sched_cfg(struct daemon *d, struct sched_config *cfg)
{
	sched_config_defaults(cfg);
	cfg->default_mode = d->conf.default_mode;
	cfg->default_gpu_mem = d->conf.default_gpu_mem;
	cfg->jobs_per_gpu = d->conf.jobs_per_gpu;
	cfg->mem_margin = d->conf.mem_margin;
	cfg->backfill = d->conf.backfill;
	cfg->preemption = d->conf.preemption;
	cfg->now = now_wall(d);
}

/* The GPUs of the last sample as the scheduler takes them; returns how many. */
static unsigned
sched_gpus(struct daemon *d, struct sched_gpu *sg)
{
	unsigned n = 0;

	for (size_t i = 0; d->have_sample && i < d->sample.nr_gpu && n < SCHED_MAX_GPUS; i++) {
		const struct qgpu_info *q = &d->sample.gpu[i];
		struct dgpu *g = gpu_find(d, q->uuid);

		memset(&sg[n], 0, sizeof(sg[n]));
		str_copy(sg[n].uuid, sizeof(sg[n].uuid), q->uuid);
		sg[n].index = q->index;
		sg[n].ok = q->ok && !d->stale && !(g && (g->flags & QG_LOST));
		/* the driver's own use is neither free nor anybody's */
		sg[n].total = g && q->total > g->baseline ? q->total - g->baseline : q->total;
		sg[n].used = g ? g->used_adj : q->used;
		sg[n].flags = g ? gpu_flags(d, g) : 0;
		resolve_reserved(d, q->uuid, &sg[n]);
		n++;
	}
	return n;
}

static void
plan(struct daemon *d)
{
	struct sched_config cfg;
	struct sched_input in;
	struct sched_plan out;
	struct sched_gpu *sg = xcalloc(SCHED_MAX_GPUS, sizeof(*sg));
	struct sched_running *run = NULL;
	struct sched_waiting *wait = NULL;
	struct djob **wait_dj = NULL, **run_dj = NULL;
	size_t nr_run = 0, nr_wait = 0;
	struct err err = ERR_INIT;
	double now = now_wall(d);
	struct {
		uid_t uid;
		unsigned gpus, jobs;
	} *cnt = NULL;
	size_t nr_cnt = 0, alloc_cnt = 0;

	d->last_plan = clock_mono();
	if (d->have_sample && d->sample.seq <= d->plan_after_seq)
		return; /* the next sample sets need_plan again */
	d->need_plan = false;
	memset(&in, 0, sizeof(in));
	sched_cfg(d, &cfg);
	in.cfg = &cfg;
	in.gpu = sg;
	in.nr_gpu = sched_gpus(d, sg);
	if (d->have_sample)
		memcpy(in.link, d->sample.link, sizeof(in.link));

	run = xcalloc(d->nr_job + 1, sizeof(*run));
	run_dj = xcalloc(d->nr_job + 1, sizeof(*run_dj));
	wait = xcalloc(d->nr_job + 1, sizeof(*wait));
	wait_dj = xcalloc(d->nr_job + 1, sizeof(*wait_dj));
	d->nr_running = d->nr_queued = 0;
	for (size_t i = 0; i < d->nr_job; i++) {
		struct djob *dj = d->job[i];
		size_t c;

		if (!qj_state_holds_gpus(dj->j.state) && dj->j.state != QJ_SUSPENDED)
			continue;
		d->nr_running++;
		for (c = 0; c < nr_cnt && cnt[c].uid != dj->j.uid; c++)
			;
		if (c == nr_cnt) {
			ALLOC_GROW(cnt, nr_cnt + 1, alloc_cnt);
			cnt[nr_cnt].uid = dj->j.uid;
			cnt[nr_cnt].gpus = cnt[nr_cnt].jobs = 0;
			nr_cnt++;
		}
		cnt[c].jobs++;
		cnt[c].gpus += dj->j.nr_gpu;
		if (dj->j.state == QJ_SUSPENDED)
			continue;
		run[nr_run].job = &dj->j;
		memcpy(run[nr_run].observed, dj->observed, sizeof(dj->observed));
		memcpy(run[nr_run].current, dj->current, sizeof(dj->current));
		run_dj[nr_run++] = dj;
	}
	for (size_t i = 0; i < d->nr_job; i++) {
		struct djob *dj = d->job[i];
		struct sched_waiting *w;
		struct ucache *u;
		size_t c;

		if (dj->j.state != QJ_QUEUED && dj->j.state != QJ_HELD &&
		    dj->j.state != QJ_SUSPENDED)
			continue;
		if (dj->j.state != QJ_SUSPENDED)
			d->nr_queued++;
		w = &wait[nr_wait];
		u = user_get(d, dj->j.uid, dj->j.gid);
		/* a suspended job goes as it is: the scheduler wants its own GPUs back for it */
		w->job = &dj->j;
		w->usage = user_usage(d, u, now);
		w->deps_done = true;
		for (unsigned k = 0; k < dj->j.req.nr_after; k++)
			if (job_find(d, dj->j.req.after[k]))
				w->deps_done = false;
		w->dep_missing = false;
		w->max_running_gpus = u->lim.max_running_gpus;
		w->max_running_jobs = u->lim.max_running_jobs;
		for (c = 0; c < nr_cnt && cnt[c].uid != dj->j.uid; c++)
			;
		if (c < nr_cnt) {
			w->user_running_gpus = cnt[c].gpus;
			w->user_running_jobs = cnt[c].jobs;
		}
		w->owner_is_admin = u->admin;
		w->nr_groups = u->nr_groups > 32 ? 32 : u->nr_groups;
		memcpy(w->groups, u->groups, w->nr_groups * sizeof(gid_t));
		if (w->deps_done && dj->j.req.nr_after && !dj->j.eligible_time)
			dj->j.eligible_time = now;
		wait_dj[nr_wait++] = dj;
	}
	free(cnt);
	in.run = run;
	in.nr_run = (unsigned)nr_run;
	in.wait = wait;
	in.nr_wait = (unsigned)nr_wait;

	if (d->stale || !d->have_sample) {
		const char *why =
		        d->have_sample ? "NVML is not answering: nothing new starts until it does"
		                       : "the GPUs have not been read yet";

		for (size_t i = 0; i < nr_wait; i++) {
			struct djob *dj = wait_dj[i];

			dj->have_verdict = true;
			str_copy(dj->code, sizeof(dj->code), "nvml");
			str_copy(dj->vreason, sizeof(dj->vreason), why);
			dj->est_start = 0;
		}
		goto out;
	}
	memset(&out, 0, sizeof(out));
	sched_plan(&in, &out);
	for (size_t i = 0; i < in.nr_gpu; i++) {
		struct dgpu *g = gpu_find(d, sg[i].uuid);

		if (!g)
			continue;
		g->foreign = out.foreign[i];
		g->available = out.available[i];
		g->jobs_on = out.jobs_on[i];
		g->planned = true;
	}
	/* verdicts first: the actions may free jobs */
	store_begin(d->st, &err);
	for (size_t i = 0; i < out.nr_verdict && i < nr_wait; i++) {
		struct djob *dj = wait_dj[i];
		const struct sched_verdict *v = &out.verdict[i];

		if (v->job != dj->j.id)
			continue;
		/*
		 * The store keeps the reason when it changes, but a reason that
		 * counts (jobs ahead, GiB free) would change at every plan: a new
		 * code is written at once, a new wording of one code at most every
		 * REASON_EVERY seconds.
		 */
		if (dj->j.state != QJ_SUSPENDED && v->reason[0] && v->job == dj->j.id &&
		    strcmp(dj->j.reason, v->reason) &&
		    (strcmp(dj->code, v->code) || !dj->have_verdict ||
		     now - dj->reason_saved >= REASON_EVERY)) {
			str_copy(dj->j.reason, sizeof(dj->j.reason), v->reason);
			dj->reason_saved = now;
			job_save(d, dj);
		}
		dj->have_verdict = true;
		str_copy(dj->code, sizeof(dj->code), v->code);
		str_copy(dj->vreason, sizeof(dj->vreason), v->reason);
		dj->est_start = v->est_start;
		dj->position = v->position;
	}
	store_commit(d->st, &err);
	for (size_t i = 0; i < out.nr_act; i++) {
		const struct sched_action *a = &out.act[i];
		struct djob *dj = job_find(d, a->job);

		if (!dj)
			continue;
		switch (a->kind) {
		case SA_START:
			if (d->paused && dj->j.state != QJ_SUSPENDED)
				break;
			if (dj->j.state != QJ_QUEUED && dj->j.state != QJ_SUSPENDED)
				break;
			job_start(d, dj, a, sg);
			break;
		case SA_PREEMPT:
			job_preempt(d, dj, a);
			break;
		case SA_FAIL:
			if (dj->j.state == QJ_QUEUED || dj->j.state == QJ_HELD)
				job_end(d, dj, QJ_FAILED,
				        a->reason[0] ? a->reason : "can never start");
			break;
		}
	}
	sched_plan_release(&out);
out:
	free(sg);
	free(run);
	free(run_dj);
	free(wait);
	free(wait_dj);
}

/* ---- the tick: deadlines, probes, cleanup ---- */

static void
tick(struct daemon *d)
{
	double now = now_wall(d), mono = clock_mono();
	struct djob **list;
	size_t nr = 0;

	d->last_tick = mono;
	d->need_tick = false;
	/* the sample's writes in one transaction; each transition below commits on its own */
	store_begin(d->st, NULL);
	process_sample(d);
	store_commit(d->st, NULL);
	if (d->have_sample) {
		bool stale = mono - d->sample.mono > 3 * d->conf.nvml_timeout;

		if (stale != d->stale) {
			d->stale = stale;
			event(d, 0, (uid_t)-1, stale ? "nvml-stale" : "nvml-ok", NULL, "%s",
			      stale ? "NVML is not answering: nothing new starts"
			            : "NVML answers again");
			d->need_plan = true;
		}
	}
	/*
	 * What the files and the GPUs say, in one transaction (jobs that end
	 * together share a commit); a copy: ending a job changes d->job.
	 */
	store_begin(d->st, NULL);
	list = xmalloc(st_mult(d->nr_job + 1, sizeof(*list)));
	for (size_t i = 0; i < d->nr_job; i++)
		if (d->job[i]->j.state != QJ_QUEUED && d->job[i]->j.state != QJ_HELD)
			list[nr++] = d->job[i];
	for (size_t i = 0; i < nr; i++) {
		struct djob *dj = list[i];
		struct err err = ERR_INIT;

		/* jobs without a report pipe (adopted): the files say */
		if (dj->report_fd < 0 &&
		    (dj->j.state == QJ_STARTING || dj->j.state == QJ_RUNNING ||
		     dj->j.state == QJ_STOPPING || dj->j.state == QJ_SUSPENDED) &&
		    mono >= dj->next_probe) {
			struct exec_probe p;

			dj->next_probe = mono + PROBE_EVERY;
			memset(&p, 0, sizeof(p));
			if (exec_probe(&d->env, &dj->j, &p, &err) == 0) {
				if (p.started && dj->j.state == QJ_STARTING)
					job_running(d, dj, p.pid);
				if (p.ended) {
					job_exited(d, dj, &p.exit, "");
				} else if (!p.sup_alive) {
					if (dj->j.state == QJ_STARTING && !p.started &&
					    !p.populated) {
						job_requeue(d, dj, "requeue: never started");
						continue;
					}
					job_sup_lost(d, dj);
					continue;
				}
			}
		}
		if (dj->j.state == QJ_EXITING)
			check_exiting(d, dj);
		else if (dj->usage_pending > 0 && now - dj->last_usage_flush > USAGE_FLUSH) {
			dj->last_usage_flush = now;
			flush_usage(d, dj);
			job_save(d, dj);
		}
	}
	store_commit(d->st, NULL);
	/* signals after their intent is committed: each stop commits on its own */
	nr = 0;
	for (size_t i = 0; i < d->nr_job; i++)
		if (d->job[i]->j.state == QJ_RUNNING || d->job[i]->j.state == QJ_STOPPING)
			list[nr++] = d->job[i];
	for (size_t i = 0; i < nr; i++) {
		struct djob *dj = list[i];

		if (dj->j.state == QJ_RUNNING && dj->j.req.time_limit &&
		    now >= dj->j.start_time + dj->j.req.time_limit) {
			char why[QJ_REASON_LEN];

			snprintf(why, sizeof(why), "reached its time limit of %u s",
			         dj->j.req.time_limit);
			job_stop(d, dj, QJ_STOP_TIMEOUT, SIGTERM, why);
		}
		if (dj->j.state == QJ_STOPPING && now >= dj->j.stop_deadline)
			exec_kill(&d->env, &dj->j, NULL);
	}
	free(list);
	if (d->conf.history_keep > 0 && now - d->last_prune >= PRUNE_EVERY) {
		struct err err = ERR_INIT;
		int n;

		d->last_prune = now;
		n = store_prune(d->st, now - d->conf.history_keep, &err);
		if (n < 0)
			dlog("cannot prune the history: %s", err.msg);
		else if (n > 0)
			dlog("pruned %d jobs that ended over %.0f days ago", n,
			     d->conf.history_keep / 86400);
	}
	if (now - d->last_heartbeat >= HEARTBEAT) {
		char v[64];

		d->last_heartbeat = now;
		snprintf(v, sizeof(v), "%.3f", now);
		store_meta_set(d->st, "heartbeat", v, NULL);
	}
}

/* ---- reports ---- */

static void
read_reports(struct daemon *d, struct djob *dj)
{
	for (int n = 0; n < 64 && dj->report_fd >= 0; n++) {
		struct exec_report r;
		int rc;

		memset(&r, 0, sizeof(r));
		rc = exec_read_report(dj->report_fd, &r);
		if (rc < 0 || r.kind == ER_EOF) {
			close(dj->report_fd);
			dj->report_fd = -1;
			dj->next_probe = 0;
			d->need_tick = true;
			return;
		}
		if (r.kind == ER_NONE)
			return;
		if (r.kind == ER_STARTED)
			job_running(d, dj, r.pid);
		else if (r.kind == ER_EXIT)
			job_exited(d, dj, &r, "");
		d->need_tick = true;
	}
}

/* ---- requests ---- */

static bool
get_bool(json_t *req, const char *key, bool dflt, bool *out, char *why, size_t len)
{
	json_t *v = json_object_get(req, key);

	if (!v || json_is_null(v)) {
		*out = dflt;
		return true;
	}
	if (!json_is_boolean(v)) {
		snprintf(why, len, "\"%s\" must be true or false", key);
		return false;
	}
	*out = json_is_true(v);
	return true;
}

static bool
get_int(json_t *req, const char *key, json_int_t lo, json_int_t hi, json_int_t dflt,
        json_int_t *out, char *why, size_t len)
{
	json_t *v = json_object_get(req, key);

	if (!v || json_is_null(v)) {
		*out = dflt;
		return true;
	}
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
		snprintf(why, len, "\"%s\" must be a whole number from %lld to %lld", key,
		         (long long)lo, (long long)hi);
		return false;
	}
	*out = json_integer_value(v);
	return true;
}

static bool
get_str(json_t *req, const char *key, size_t max, const char **out, char *why, size_t len)
{
	json_t *v = json_object_get(req, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return true;
	if (!json_is_string(v) || json_string_length(v) >= max ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		snprintf(why, len, "\"%s\" must be a string of at most %zu bytes", key, max - 1);
		return false;
	}
	*out = json_string_value(v);
	return true;
}

/* A submitted output or error path, made absolute against cwd, into *field; false (why) when too
 * long. */
static bool
submit_path(char **field, const char *cwd, const char *path, const char *key, char *why, size_t len)
{
	char buf[QJ_PATH_LEN];

	if (!path || !*path)
		return true;
	if (path[0] == '/')
		str_copy(buf, sizeof(buf), path);
	else if (snprintf(buf, sizeof(buf), "%s/%s", qjob_str(cwd), path) >= (int)sizeof(buf)) {
		snprintf(why, len, "\"%s\" is too long", key);
		return false;
	}
	qjob_set_str(field, buf);
	return true;
}

/* a job id in a request: an integer, or a string of digits */
static bool
get_id(json_t *v, uint64_t *id)
{
	if (json_is_integer(v) && json_integer_value(v) > 0) {
		*id = (uint64_t)json_integer_value(v);
		return true;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		char *end;
		unsigned long long n;

		if (!isdigit((unsigned char)*s))
			return false;
		errno = 0;
		n = strtoull(s, &end, 10);
		if (errno || *end || n == 0)
			return false;
		*id = n;
		return true;
	}
	return false;
}

static bool
env_dropped(const char *name, size_t len)
{
	static const char *const exact[] = {
		"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES",
		"ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
		"GPU_DEVICE_ORDINAL",   "CUDA_DEVICE_ORDER",
		"SSH_AUTH_SOCK",        "DBUS_SESSION_BUS_ADDRESS",
		"XDG_RUNTIME_DIR",      "TMUX",
		"TERM_SESSION_ID",
	};
	static const char *const prefix[] = { "GPUSCOPE_JOB_", "SUDO_" };

	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (strlen(exact[i]) == len && !memcmp(exact[i], name, len))
			return true;
	for (size_t i = 0; i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (len >= strlen(prefix[i]) && !memcmp(prefix[i], name, strlen(prefix[i])))
			return true;
	return false;
}

/* how many jobs of uid wait (QUEUED, HELD) */
static unsigned
user_waiting(struct daemon *d, uid_t uid)
{
	unsigned n = 0;

	for (size_t i = 0; i < d->nr_job; i++)
		if (d->job[i]->j.uid == uid &&
		    (d->job[i]->j.state == QJ_QUEUED || d->job[i]->j.state == QJ_HELD))
			n++;
	return n;
}

static void
req_submit(struct daemon *d, struct client *c, json_t *req)
{
	struct qjob j;
	struct strbuf sb = STRBUF_INIT;
	struct ucache *u = user_get(d, c->uid, c->gid);
	char why[512] = "";
	const char *code = "usage";
	json_t *argv = json_object_get(req, "argv"), *env = json_object_get(req, "env");
	json_t *gpu = json_object_get(req, "gpu"), *after = json_object_get(req, "after");
	const char *cwd, *name, *mode, *output, *error;
	json_int_t gpus, gpu_mem, prio, tl, grace;
	bool preemptible, requeue, hold, gpus_given;
	struct err err = ERR_INIT;
	struct djob *dj;
	json_t *resp;

	qjob_init(&j);
	if (!u->known) {
		snprintf(why, sizeof(why), "uid %u has no passwd entry: jobs run as a named user",
		         (unsigned)c->uid);
		code = "denied";
		goto fail;
	}
	if (!json_is_array(argv) || !json_array_size(argv)) {
		snprintf(why, sizeof(why),
		         "\"argv\" must be a non-empty array of strings (the command)");
		goto fail;
	}
	for (size_t i = 0; i < json_array_size(argv); i++) {
		json_t *a = json_array_get(argv, i);

		if (!json_is_string(a) || strlen(json_string_value(a)) != json_string_length(a)) {
			snprintf(why, sizeof(why), "\"argv\" must hold strings without NUL bytes");
			goto fail;
		}
		if (i == 0 && !json_string_length(a)) {
			snprintf(why, sizeof(why), "the command (argv[0]) is empty");
			goto fail;
		}
		strbuf_add(&sb, json_string_value(a), json_string_length(a) + 1);
		if (sb.len > MAX_ARGV_BYTES) {
			snprintf(why, sizeof(why), "the command line is over %d KiB",
			         MAX_ARGV_BYTES >> 10);
			goto fail;
		}
	}
	j.argv_len = sb.len;
	j.argv = strbuf_detach(&sb, NULL);
	if (!get_str(req, "cwd", QJ_PATH_LEN, &cwd, why, sizeof(why)))
		goto fail;
	if (!cwd || cwd[0] != '/') {
		snprintf(why, sizeof(why), "\"cwd\" must be an absolute directory");
		goto fail;
	}
	qjob_set_str(&j.cwd, cwd);
	if (env && !json_is_null(env)) {
		const char *k;
		json_t *v;

		if (!json_is_object(env)) {
			snprintf(why, sizeof(why),
			         "\"env\" must be an object of NAME: VALUE strings");
			goto fail;
		}
		json_object_foreach(env, k, v)
		{
			if (!json_is_string(v) || !*k || strchr(k, '=') ||
			    strlen(json_string_value(v)) != json_string_length(v)) {
				snprintf(
				        why, sizeof(why),
				        "\"env\" must be an object of NAME: VALUE strings (bad '%.64s')",
				        k);
				goto fail;
			}
			if (env_dropped(k, strlen(k)))
				continue;
			strbuf_addf(&sb, "%s=%s", k, json_string_value(v));
			strbuf_addch(&sb, '\0');
			if (sb.len > MAX_ENV_BYTES) {
				snprintf(why, sizeof(why), "the environment is over %d KiB",
				         MAX_ENV_BYTES >> 10);
				goto fail;
			}
		}
		j.env_len = sb.len;
		j.env = strbuf_detach(&sb, NULL);
	}
	if (!get_str(req, "name", QJ_NAME_LEN, &name, why, sizeof(why)) ||
	    !get_str(req, "mode", 32, &mode, why, sizeof(why)) ||
	    !get_str(req, "output", QJ_PATH_LEN, &output, why, sizeof(why)) ||
	    !get_str(req, "error", QJ_PATH_LEN, &error, why, sizeof(why)) ||
	    !get_int(req, "gpus", 0, QJ_MAX_GPUS, -1, &gpus, why, sizeof(why)) ||
	    !get_int(req, "gpu_mem", 0, INT64_MAX, 0, &gpu_mem, why, sizeof(why)) ||
	    !get_int(req, "priority", -1000000, 1000000, 0, &prio, why, sizeof(why)) ||
	    !get_int(req, "time", 0, UINT32_MAX, 0, &tl, why, sizeof(why)) ||
	    !get_int(req, "grace", 0, 86400, 0, &grace, why, sizeof(why)) ||
	    !get_bool(req, "preemptible", false, &preemptible, why, sizeof(why)) ||
	    !get_bool(req, "requeue", false, &requeue, why, sizeof(why)) ||
	    !get_bool(req, "hold", false, &hold, why, sizeof(why)))
		goto fail;
	if (name && *name) {
		for (const char *p = name; *p; p++)
			if ((unsigned char)*p < 0x20) {
				snprintf(why, sizeof(why), "\"name\" has a control character");
				goto fail;
			}
		str_copy(j.name, sizeof(j.name), name);
	} else {
		const char *base = strrchr(j.argv, '/');

		str_copy(j.name, sizeof(j.name), base && base[1] ? base + 1 : j.argv);
	}
	j.uid = c->uid;
	j.gid = u->gid;
	str_copy(j.user, sizeof(j.user), u->name);
	gpus_given = gpus >= 0;
	j.req.gpus = gpus >= 0 ? (unsigned)gpus : 1;
	j.req.gpu_mem = (uint64_t)gpu_mem;
	if (!mode || !strcmp(mode, "default"))
		j.req.mode = d->conf.default_mode; /* as users will see it */
	else if (!strcmp(mode, "exclusive"))
		j.req.mode = QJ_MODE_EXCLUSIVE;
	else if (!strcmp(mode, "shared"))
		j.req.mode = QJ_MODE_SHARED;
	else {
		snprintf(why, sizeof(why),
		         "\"mode\" must be \"exclusive\" or \"shared\", not '%.32s'", mode);
		goto fail;
	}
	if (gpu && !json_is_null(gpu)) {
		if (!json_is_array(gpu) || json_array_size(gpu) > QJ_MAX_GPUS) {
			snprintf(why, sizeof(why),
			         "\"gpu\" must be an array of at most %d GPU UUIDs or indices",
			         QJ_MAX_GPUS);
			goto fail;
		}
		for (size_t i = 0; i < json_array_size(gpu); i++) {
			json_t *g = json_array_get(gpu, i);
			char idbuf[64];
			const char *id;
			struct dgpu *dg;

			if (json_is_integer(g)) {
				snprintf(idbuf, sizeof(idbuf), "%lld",
				         (long long)json_integer_value(g));
				id = idbuf;
			} else if (json_is_string(g)) {
				id = json_string_value(g);
			} else {
				snprintf(why, sizeof(why),
				         "\"gpu\" must hold GPU UUIDs or indices");
				goto fail;
			}
			dg = gpu_resolve(d, id, why, sizeof(why));
			if (!dg) {
				code = "invalid";
				goto fail;
			}
			for (unsigned k = 0; k < j.req.nr_want; k++)
				if (!strcmp(j.req.want_uuid[k], dg->uuid)) {
					snprintf(why, sizeof(why), "GPU '%s' is named twice", id);
					goto fail;
				}
			str_copy(j.req.want_uuid[j.req.nr_want++], QJ_UUID_LEN, dg->uuid);
		}
		if (j.req.nr_want) {
			if (gpus_given && j.req.gpus != j.req.nr_want) {
				snprintf(
				        why, sizeof(why),
				        "asks for %u GPUs but names %u: give --gpus and --gpu alike, or "
				        "one of them",
				        j.req.gpus, j.req.nr_want);
				goto fail;
			}
			j.req.gpus = j.req.nr_want;
		}
	}
	if (after && !json_is_null(after)) {
		if (!json_is_array(after) || json_array_size(after) > QJ_MAX_AFTER) {
			snprintf(why, sizeof(why),
			         "\"after\" must be an array of at most %d job ids", QJ_MAX_AFTER);
			goto fail;
		}
		for (size_t i = 0; i < json_array_size(after); i++) {
			uint64_t id;
			struct qjob tmp;

			if (!get_id(json_array_get(after, i), &id)) {
				snprintf(why, sizeof(why), "\"after\" must hold job ids");
				goto fail;
			}
			if (!job_find(d, id)) {
				qjob_init(&tmp);
				if (store_job_get(d->st, id, &tmp, NULL) < 0) {
					qjob_release(&tmp);
					snprintf(why, sizeof(why), "--after: there is no job %llu",
					         (unsigned long long)id);
					code = "notfound";
					goto fail;
				}
				qjob_release(&tmp);
			}
			j.req.after[j.req.nr_after++] = id;
		}
	}
	j.req.priority = (int)prio;
	if (!u->admin && prio > u->lim.max_priority) {
		snprintf(why, sizeof(why),
		         "priority %lld is above your cap of %d (max_priority in the queue's "
		         "configuration; an admin may raise it)",
		         (long long)prio, u->lim.max_priority);
		code = "denied";
		goto fail;
	}
	j.req.preemptible = preemptible;
	j.req.requeue_on_loss = requeue;
	j.req.grace = (uint32_t)grace;
	if (!tl)
		tl = d->conf.default_time;
	if (!u->admin && u->lim.max_time) {
		if (!tl)
			tl = u->lim.max_time;
		if ((uint64_t)tl > u->lim.max_time) {
			snprintf(why, sizeof(why),
			         "time limit %lld s is over the most allowed, %u s (max_time)",
			         (long long)tl, u->lim.max_time);
			code = "denied";
			goto fail;
		}
	}
	j.req.time_limit = (uint32_t)tl;
	if (!submit_path(&j.out_path, j.cwd, output, "output", why, sizeof(why)) ||
	    !submit_path(&j.err_path, j.cwd, error, "error", why, sizeof(why)))
		goto fail;
	if (!u->admin && u->lim.max_queued_jobs &&
	    user_waiting(d, c->uid) >= u->lim.max_queued_jobs) {
		snprintf(
		        why, sizeof(why),
		        "you have %u jobs waiting, the most allowed (max_queued_jobs): wait for some to "
		        "start or cancel some",
		        user_waiting(d, c->uid));
		code = "busy";
		goto fail;
	}
	{
		struct sched_config cfg;
		struct sched_input in;
		struct sched_gpu *sg = xcalloc(SCHED_MAX_GPUS, sizeof(*sg));
		bool possible;

		memset(&in, 0, sizeof(in));
		sched_cfg(d, &cfg);
		in.cfg = &cfg;
		in.gpu = sg;
		in.nr_gpu = sched_gpus(d, sg);
		if (d->have_sample)
			memcpy(in.link, d->sample.link, sizeof(in.link));
		possible = sched_possible(&in, &j.req, why, sizeof(why));
		free(sg);
		if (!possible) {
			if (!why[0])
				snprintf(why, sizeof(why),
				         "this machine cannot satisfy the request");
			code = "invalid";
			goto fail;
		}
	}
	j.state = hold ? QJ_HELD : QJ_QUEUED;
	j.submit_time = now_wall(d);
	if (hold)
		str_copy(j.reason, sizeof(j.reason), "held at submission ('queue release' it)");
	store_begin(d->st, &err);
	if (store_job_insert(d->st, &j, &err) < 0) {
		store_rollback(d->st);
		snprintf(why, sizeof(why), "cannot record the job: %s", err.msg);
		code = "internal";
		goto fail;
	}
	event(d, j.id, j.uid, "submit", NULL, "job %llu submitted by %s: %s",
	      (unsigned long long)j.id, j.user, j.name);
	if (store_commit(d->st, &err) < 0) {
		snprintf(why, sizeof(why), "cannot record the job: %s", err.msg);
		code = "internal";
		goto fail;
	}
	dj = job_add(d, &j);
	resp = ok_object();
	json_object_set_new(resp, "job", job_json(d, &dj->j, dj, true));
	client_reply(c, resp);
	qjob_release(&j);
	strbuf_release(&sb);
	d->need_plan = true;
	return;
fail:
	client_reply(c, qproto_error(code, "%s", why));
	qjob_release(&j);
	strbuf_release(&sb);
}

/* A job by id: the cached one, else from the store into tmp; NULL with the reply sent. */
static const struct qjob *
lookup(struct daemon *d, struct client *c, json_t *v, struct qjob *tmp, struct djob **djp,
       bool need_owner)
{
	uint64_t id;
	struct djob *dj;
	const struct qjob *j;

	*djp = NULL;
	if (!v || !get_id(v, &id)) {
		client_reply(c, qproto_error("usage", "\"job\" must be a job id"));
		return NULL;
	}
	dj = job_find(d, id);
	if (dj) {
		*djp = dj;
		j = &dj->j;
	} else {
		if (store_job_get(d->st, id, tmp, NULL) < 0) {
			client_reply(c, qproto_error("notfound", "there is no job %llu",
			                             (unsigned long long)id));
			return NULL;
		}
		j = tmp;
	}
	if (need_owner && j->uid != c->uid && !c->admin) {
		client_reply(c,
		             qproto_error("denied",
		                          "job %llu is %s's: only its owner or an admin may look "
		                          "into it",
		                          (unsigned long long)id, j->user));
		return NULL;
	}
	return j;
}

static void
req_ls(struct daemon *d, struct client *c, json_t *req)
{
	const char *user = NULL;
	struct stream st;
	char why[256];
	json_t *dmn;
	bool all;

	if (!get_bool(req, "all", false, &all, why, sizeof(why)) ||
	    !get_str(req, "user", QJ_USER_LEN, &user, why, sizeof(why))) {
		client_reply(c, qproto_error("usage", "%s", why));
		return;
	}
	/* {"ok":true,"jobs":[JOB...],"gpus":[GPU...],"daemon":{DAEMON}}, job by job */
	client_stream_begin(c, &st, "{\"ok\":true,\"jobs\":[");
	for (size_t i = 0; i < d->nr_job; i++) {
		const struct qjob *j = &d->job[i]->j;

		if (user && *user ? strcmp(j->user, user) : (!all && j->uid != c->uid))
			continue;
		client_stream_item(c, &st, job_json(d, j, d->job[i], false));
	}
	if (!st.bad)
		strbuf_addstr(&c->out, "],\"gpus\":[");
	st.nr = 0;
	for (size_t i = 0; i < d->nr_gpu; i++)
		client_stream_item(c, &st, gpu_json(d, &d->gpu[i]));
	if (!st.bad)
		strbuf_addstr(&c->out, "],\"daemon\":");
	dmn = daemon_json(d);
	if (!st.bad && !client_add_json(c, dmn))
		st.bad = true;
	json_decref(dmn);
	client_stream_end(c, &st, "}");
}

static void
req_show(struct daemon *d, struct client *c, json_t *req)
{
	struct qjob tmp;
	struct djob *dj;
	const struct qjob *j;
	json_t *resp;

	qjob_init(&tmp);
	j = lookup(d, c, json_object_get(req, "job"), &tmp, &dj, true);
	if (j) {
		json_t *o = job_json(d, j, dj, true), *evs = json_array();
		struct qevent *ev = NULL;
		size_t nr = 0;

		/* its story: the first SHOW_EVENTS events of the job, oldest first */
		if (store_events_job(d->st, j->id, SHOW_EVENTS, &ev, &nr, NULL) == 0)
			for (size_t i = 0; i < nr; i++)
				json_array_append_new(evs, qevent_to_json(&ev[i], j->user));
		store_events_free(ev, nr);
		json_object_set_new(o, "events", evs);
		resp = ok_object();
		json_object_set_new(resp, "job", o);
		client_reply(c, resp);
	}
	qjob_release(&tmp);
}

static void
req_why(struct daemon *d, struct client *c, json_t *req)
{
	struct qjob tmp;
	struct djob *dj;
	const struct qjob *j;
	json_t *resp;

	qjob_init(&tmp);
	j = lookup(d, c, json_object_get(req, "job"), &tmp, &dj, false);
	if (j) {
		const char *code = qj_state_name(j->state), *reason = j->reason;
		double est = 0;
		char buf[QJ_REASON_LEN + 64];

		if (dj && dj->have_verdict && (j->state == QJ_QUEUED || j->state == QJ_HELD)) {
			code = dj->code;
			reason = dj->vreason;
			est = dj->est_start;
		}
		if (d->paused && j->state == QJ_QUEUED) {
			code = "paused";
			reason = "the queue is paused by an admin ('gpuscope queue unpause')";
		}
		if (!reason[0]) {
			switch (j->state) {
			case QJ_STARTING:
				reason = "it is starting";
				break;
			case QJ_RUNNING:
				reason = "it is running";
				break;
			case QJ_EXITING:
				snprintf(
				        buf, sizeof(buf),
				        "it has ended; its GPUs are being checked for leftover memory");
				reason = buf;
				break;
			default:
				reason = qj_state_name(j->state);
			}
		}
		resp = ok_object();
		json_object_set_new(resp, "job", json_integer((json_int_t)j->id));
		json_object_set_new(resp, "state", json_string(qj_state_name(j->state)));
		json_object_set_new(resp, "code", json_string(code));
		json_object_set_new(resp, "reason", qj_json_string(reason, strlen(reason)));
		json_object_set_new(resp, "est_start", est > 0 ? json_real(est) : json_null());
		client_reply(c, resp);
	}
	qjob_release(&tmp);
}

static int
signal_parse(const char *s)
{
	static const struct {
		const char *name;
		int sig;
	} sigs[] = {
		{ "TERM", SIGTERM }, { "INT", SIGINT },   { "KILL", SIGKILL }, { "HUP", SIGHUP },
		{ "QUIT", SIGQUIT }, { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "STOP", SIGSTOP },
		{ "CONT", SIGCONT }, { "ALRM", SIGALRM },
	};
	char *end;
	long n;

	if (!strncasecmp(s, "SIG", 3))
		s += 3;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (!strcasecmp(s, sigs[i].name))
			return sigs[i].sig;
	n = strtol(s, &end, 10);
	if (*s && !*end && n > 0 && n < 65)
		return (int)n;
	return -1;
}

static void
req_jobs_op(struct daemon *d, struct client *c, json_t *req, const char *op)
{
	json_t *jobs = json_object_get(req, "jobs"), *done, *failed, *resp;
	const char *signame = NULL;
	char why[256];
	int sig = SIGTERM;

	if (!jobs)
		jobs = json_object_get(req, "job");
	if (json_is_integer(jobs) || json_is_string(jobs)) {
		json_t *a = json_array();

		json_array_append(a, jobs);
		json_object_set_new(req, "jobs", a);
		jobs = a;
	}
	if (!json_is_array(jobs) || !json_array_size(jobs)) {
		client_reply(c, qproto_error("usage", "\"jobs\" must be an array of job ids"));
		return;
	}
	if (!get_str(req, "signal", 16, &signame, why, sizeof(why))) {
		client_reply(c, qproto_error("usage", "%s", why));
		return;
	}
	if (signame && strcmp(op, "cancel")) {
		client_reply(c, qproto_error("usage", "only cancel takes \"signal\""));
		return;
	}
	if (signame && (sig = signal_parse(signame)) < 0) {
		client_reply(c,
		             qproto_error("usage",
		                          "unknown signal '%s' (TERM, INT, KILL, HUP, USR1, ...)",
		                          signame));
		return;
	}
	done = json_array();
	failed = json_array();
	for (size_t i = 0; i < json_array_size(jobs); i++) {
		json_t *v = json_array_get(jobs, i);
		uint64_t id = 0;
		struct djob *dj;
		const char *err = NULL;
		char ebuf[256];
		struct qjob tmp;

		if (!get_id(v, &id)) {
			err = "not a job id";
		} else if (!(dj = job_find(d, id))) {
			qjob_init(&tmp);
			if (store_job_get(d->st, id, &tmp, NULL) < 0)
				snprintf(ebuf, sizeof(ebuf), "there is no job %llu",
				         (unsigned long long)id);
			else if (tmp.uid != c->uid && !c->admin)
				snprintf(ebuf, sizeof(ebuf), "job %llu is %s's",
				         (unsigned long long)id, tmp.user);
			else
				snprintf(ebuf, sizeof(ebuf), "job %llu has already ended (%s)",
				         (unsigned long long)id, qj_state_name(tmp.state));
			qjob_release(&tmp);
			err = ebuf;
		} else if (dj->j.uid != c->uid && !c->admin) {
			snprintf(ebuf, sizeof(ebuf),
			         "job %llu is %s's: only its owner or an admin may",
			         (unsigned long long)id, dj->j.user);
			err = ebuf;
		} else if (!strcmp(op, "hold")) {
			if (dj->j.state == QJ_QUEUED) {
				dj->j.state = QJ_HELD;
				str_copy(dj->j.reason, sizeof(dj->j.reason),
				         "held ('queue release' it)");
				dj->have_verdict = false;
				job_save(d, dj);
				jevent(d, dj, "hold", "job %llu held by uid %u",
				       (unsigned long long)id, (unsigned)c->uid);
			} else if (dj->j.state != QJ_HELD) {
				snprintf(ebuf, sizeof(ebuf),
				         "job %llu is %s: only a queued job can be held",
				         (unsigned long long)id, qj_state_name(dj->j.state));
				err = ebuf;
			}
		} else if (!strcmp(op, "release")) {
			if (dj->j.state == QJ_HELD) {
				dj->j.state = QJ_QUEUED;
				dj->j.reason[0] = '\0';
				dj->have_verdict = false;
				job_save(d, dj);
				jevent(d, dj, "release", "job %llu released by uid %u",
				       (unsigned long long)id, (unsigned)c->uid);
			} else {
				snprintf(ebuf, sizeof(ebuf), "job %llu is %s, not held",
				         (unsigned long long)id, qj_state_name(dj->j.state));
				err = ebuf;
			}
		} else {
			char reason[QJ_REASON_LEN];
			struct ucache *u = user_get(d, c->uid, c->gid);

			snprintf(reason, sizeof(reason), "cancelled by %s", u->name);
			switch (dj->j.state) {
			case QJ_QUEUED:
			case QJ_HELD:
				job_end(d, dj, QJ_CANCELLED, reason);
				break;
			case QJ_STARTING:
			case QJ_RUNNING:
			case QJ_SUSPENDED:
				job_stop(d, dj, QJ_STOP_CANCEL, sig, reason);
				break;
			case QJ_STOPPING:
				if (signame)
					exec_signal(&d->env, &dj->j, sig, NULL);
				if (dj->j.stop_cause != QJ_STOP_CANCEL) {
					dj->j.stop_cause = QJ_STOP_CANCEL;
					str_copy(dj->j.reason, sizeof(dj->j.reason), reason);
					job_save(d, dj);
				}
				break;
			default:
				snprintf(ebuf, sizeof(ebuf), "job %llu has already ended (%s)",
				         (unsigned long long)id, qj_state_name(dj->j.state));
				err = ebuf;
			}
		}
		if (err) {
			json_t *f = json_object();

			json_object_set_new(f, "job",
			                    id ? json_integer((json_int_t)id) : json_copy(v));
			json_object_set_new(f, "error", json_string(err));
			json_array_append_new(failed, f);
		} else {
			json_array_append_new(done, json_integer((json_int_t)id));
		}
	}
	resp = ok_object();
	json_object_set_new(resp, "done", done);
	json_object_set_new(resp, "failed", failed);
	client_reply(c, resp);
	d->need_plan = true;
	d->need_tick = true;
}

static void
req_history(struct daemon *d, struct client *c, json_t *req)
{
	struct qjob_list l = { NULL, 0 };
	struct err err = ERR_INIT;
	const char *user = NULL;
	json_int_t limit;
	struct stream st;
	json_t *since;
	double since_t = 0;
	uid_t uid = c->uid;
	char why[256];
	bool all;

	if (!get_bool(req, "all", false, &all, why, sizeof(why)) ||
	    !get_str(req, "user", QJ_USER_LEN, &user, why, sizeof(why)) ||
	    !get_int(req, "limit", 0, 100000, 0, &limit, why, sizeof(why))) {
		client_reply(c, qproto_error("usage", "%s", why));
		return;
	}
	since = json_object_get(req, "since");
	if (json_is_number(since))
		since_t = json_number_value(since);
	else if (since && !json_is_null(since)) {
		client_reply(c, qproto_error("usage", "\"since\" must be seconds since the epoch"));
		return;
	}
	if (all)
		uid = (uid_t)-1;
	if (user && *user) {
		struct passwd pw, *pwp = NULL;
		char buf[16384];

		if (getpwnam_r(user, &pw, buf, sizeof(buf), &pwp) != 0 || !pwp) {
			client_reply(c, qproto_error("notfound", "there is no user '%s'", user));
			return;
		}
		uid = pw.pw_uid;
	}
	if (store_jobs_history(d->st, uid, since_t, (unsigned)limit, &l, &err) < 0) {
		client_reply(c, qproto_error("internal", "cannot read the history: %s", err.msg));
		return;
	}
	/* {"ok":true,"jobs":[JOB...]}, job by job */
	client_stream_begin(c, &st, "{\"ok\":true,\"jobs\":[");
	for (size_t i = 0; i < l.nr; i++)
		client_stream_item(c, &st, job_json(d, &l.job[i], NULL, false));
	store_jobs_free(&l);
	client_stream_end(c, &st, "]}");
}

/* ---- logs ---- */

static void
log_path(struct daemon *d, const struct qjob *j, bool err_stream, char *buf, size_t len)
{
	if (err_stream && qjob_str(j->err_path)[0])
		str_copy(buf, len, j->err_path);
	else if (qjob_str(j->out_path)[0])
		str_copy(buf, len, j->out_path);
	else
		exec_default_output(&d->env, j, buf, len);
}

/* Read from the client's log at its offset; NULL when nothing more is there. */
static json_t *
log_read(struct client *c, bool *eof)
{
	char *buf = xmalloc(LOG_CHUNK);
	ssize_t n;
	json_t *s = NULL;

	*eof = false;
	if (c->log_fd < 0) {
		*eof = true;
		free(buf);
		return NULL;
	}
	do
		n = pread(c->log_fd, buf, LOG_CHUNK, (off_t)c->log_off);
	while (n < 0 && errno == EINTR);
	if (n > 0) {
		s = qj_json_string(buf, (size_t)n);
		c->log_off += (uint64_t)n;
	}
	if (n < LOG_CHUNK)
		*eof = true;
	free(buf);
	return s;
}

static int
log_open(struct client *c, const struct qjob *j, struct err *err)
{
	int fd = exec_open_as(j->uid, j->gid, c->log_path,
	                      O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0, err);
	if (fd < 0)
		return fd;
	c->log_fd = fd;
	return 0;
}

static void
req_logs(struct daemon *d, struct client *c, json_t *req)
{
	struct qjob tmp;
	struct djob *dj;
	const struct qjob *j;
	const char *stream = NULL;
	json_int_t off;
	bool follow, eof;
	char why[256];
	struct err err = ERR_INIT;
	json_t *resp, *data;

	qjob_init(&tmp);
	if (!get_str(req, "stream", 8, &stream, why, sizeof(why)) ||
	    !get_int(req, "offset", 0, INT64_MAX, 0, &off, why, sizeof(why)) ||
	    !get_bool(req, "follow", false, &follow, why, sizeof(why))) {
		client_reply(c, qproto_error("usage", "%s", why));
		goto out;
	}
	if (stream && strcmp(stream, "out") && strcmp(stream, "err")) {
		client_reply(c, qproto_error("usage", "\"stream\" must be \"out\" or \"err\""));
		goto out;
	}
	j = lookup(d, c, json_object_get(req, "job"), &tmp, &dj, true);
	if (!j)
		goto out;
	log_path(d, j, stream && !strcmp(stream, "err"), c->log_path, sizeof(c->log_path));
	c->log_fd = -1;
	c->log_off = (uint64_t)off;
	c->job = j->id;
	if (log_open(c, j, &err) < 0 && !(err.code == E_NOTFOUND && !qj_state_terminal(j->state)) &&
	    !(err.code == E_NOTFOUND && !j->start_time)) {
		client_reply(c, qproto_error(err.code == E_PERM ? "denied" : "notfound",
		                             "cannot open the log of job %llu (%s): %s",
		                             (unsigned long long)j->id, c->log_path, err.msg));
		goto out;
	}
	data = log_read(c, &eof);
	resp = ok_object();
	json_object_set_new(resp, "data", data ? data : json_string(""));
	json_object_set_new(resp, "offset", json_integer((json_int_t)c->log_off));
	json_object_set_new(resp, "eof",
	                    json_boolean(eof && (!follow || qj_state_terminal(j->state))));
	json_object_set_new(resp, "state", json_string(qj_state_name(j->state)));
	json_object_set_new(resp, "path", qj_json_string(c->log_path, strlen(c->log_path)));
	client_reply(c, resp);
	if (follow && !(eof && qj_state_terminal(j->state)))
		c->mode = CM_LOGS;
	else if (c->log_fd >= 0) {
		close(c->log_fd);
		c->log_fd = -1;
	}
out:
	qjob_release(&tmp);
}

static void
pump_logs(struct daemon *d, struct client *c)
{
	struct djob *dj = job_find(d, c->job);
	bool terminal = !dj, eof = false;
	int rounds = 0;

	if (c->log_fd < 0 && dj) {
		struct err err = ERR_INIT;

		log_open(c, &dj->j, &err);
	}
	while (c->out.len - c->out_off < PUMP_LIMIT && rounds++ < 8) {
		json_t *data = log_read(c, &eof);

		if (data) {
			json_t *m = json_object();

			json_object_set_new(m, "data", data);
			json_object_set_new(m, "offset", json_integer((json_int_t)c->log_off));
			client_reply(c, m);
		}
		if (eof)
			break;
	}
	if (eof && terminal) {
		struct qjob tmp;
		json_t *m = json_object();

		qjob_init(&tmp);
		json_object_set_new(m, "eof", json_true());
		json_object_set_new(m, "offset", json_integer((json_int_t)c->log_off));
		if (store_job_get(d->st, c->job, &tmp, NULL) == 0)
			json_object_set_new(m, "state", json_string(qj_state_name(tmp.state)));
		qjob_release(&tmp);
		client_reply(c, m);
		c->mode = CM_NONE;
		c->closing = true;
		if (c->log_fd >= 0) {
			close(c->log_fd);
			c->log_fd = -1;
		}
	}
}

/* ---- events ---- */

static bool
event_visible(struct client *c, const struct qevent *e)
{
	return c->admin || e->job == 0 || e->uid == c->uid;
}

static void
pump_events(struct daemon *d, struct client *c)
{
	int rounds = 0;

	while (c->out.len - c->out_off < PUMP_LIMIT && rounds++ < 16) {
		struct qevent *ev = NULL;
		size_t nr = 0;
		struct err err = ERR_INIT;

		if (store_events_since(d->st, c->ev_after, EVENT_BATCH, &ev, &nr, &err) < 0) {
			client_reply(
			        c, qproto_error("internal", "cannot read the events: %s", err.msg));
			c->closing = true;
			c->mode = CM_NONE;
			return;
		}
		for (size_t i = 0; i < nr; i++) {
			if (event_visible(c, &ev[i])) {
				json_t *m = json_object();
				struct ucache *u =
				        ev[i].uid == (uid_t)-1 ? NULL : user_get(d, ev[i].uid, 0);

				json_object_set_new(m, "event",
				                    qevent_to_json(&ev[i], u ? u->name : NULL));
				client_reply(c, m);
			}
			c->ev_after = ev[i].id;
		}
		store_events_free(ev, nr);
		if (nr < EVENT_BATCH) {
			c->ev_caught_up = true;
			if (!c->ev_follow) {
				json_t *m = ok_object();

				json_object_set_new(m, "last",
				                    json_integer((json_int_t)c->ev_after));
				client_reply(c, m);
				c->mode = CM_NONE;
			}
			return;
		}
	}
	c->ev_caught_up = false;
}

static void
req_events(struct daemon *d, struct client *c, json_t *req)
{
	json_int_t after;
	bool follow;
	char why[256];

	if (!get_int(req, "after", 0, INT64_MAX, 0, &after, why, sizeof(why)) ||
	    !get_bool(req, "follow", false, &follow, why, sizeof(why))) {
		client_reply(c, qproto_error("usage", "%s", why));
		return;
	}
	c->mode = CM_EVENTS;
	c->ev_after = (uint64_t)after;
	c->ev_follow = follow;
	c->ev_caught_up = false;
	pump_events(d, c);
}

/* ---- admin ---- */

static int load_conf(struct daemon *d, struct qconf *out, struct err *err);

static void
req_gpu_op(struct daemon *d, struct client *c, json_t *req, const char *op)
{
	const char *id = NULL, *reason = NULL;
	char why[256], idbuf[32];
	struct dgpu *g;
	json_t *v = json_object_get(req, "gpu"), *resp;
	struct ucache *u = user_get(d, c->uid, c->gid);

	if (json_is_integer(v)) {
		snprintf(idbuf, sizeof(idbuf), "%lld", (long long)json_integer_value(v));
		id = idbuf;
	} else if (!get_str(req, "gpu", QJ_UUID_LEN, &id, why, sizeof(why)) || !id) {
		client_reply(c, qproto_error("usage", "\"gpu\" must name a GPU (index or UUID)"));
		return;
	}
	if (!get_str(req, "reason", 200, &reason, why, sizeof(why))) {
		client_reply(c, qproto_error("usage", "%s", why));
		return;
	}
	g = gpu_resolve(d, id, why, sizeof(why));
	if (!g) {
		/* a GPU that vanished is still ours to resume or clean */
		for (size_t i = 0; i < d->nr_gpu && !g; i++)
			if (!strcmp(d->gpu[i].uuid, id))
				g = &d->gpu[i];
		if (!g) {
			client_reply(c, qproto_error("notfound", "%s", why));
			return;
		}
	}
	if (!strcmp(op, "drain")) {
		g->flags |= QG_DRAINED;
		snprintf(g->note, sizeof(g->note), "drained by %s%s%s", u->name, reason ? ": " : "",
		         reason ? reason : "");
	} else if (!strcmp(op, "resume")) {
		g->flags &= ~(unsigned)(QG_DRAINED | (g->present && !g->lost ? QG_LOST : 0));
		g->note[0] = '\0';
	} else {
		g->flags &= ~(unsigned)QG_DIRTY;
		g->have_dirty_base = false;
		g->note[0] = '\0';
	}
	gpu_store(d, g);
	event(d, 0, (uid_t)-1, op, NULL, "GPU %u (%s): %s by %s%s%s", g->index, g->uuid, op,
	      u->name, reason ? ": " : "", reason ? reason : "");
	resp = ok_object();
	json_object_set_new(resp, "gpu", gpu_json(d, g));
	{
		const struct qconf_gpu *cg = qconf_gpu_find(&d->conf, g->uuid);

		if (!strcmp(op, "resume") && cg && cg->drain)
			json_object_set_new(
			        resp, "note",
			        json_string("the configuration drains this GPU (drain = yes "
			                    "in its [gpu] section): it stays drained until "
			                    "that line goes and the daemon reloads"));
	}
	client_reply(c, resp);
	d->need_plan = true;
}

static void
reload(struct daemon *d, struct client *c)
{
	struct qconf n;
	struct err err = ERR_INIT;
	bool restart_needed;

	if (load_conf(d, &n, &err) < 0) {
		dlog("reload refused, keeping the old configuration: %s", err.msg);
		if (c)
			client_reply(c, qproto_error("invalid",
			                             "reload refused (the old configuration "
			                             "stays): %s",
			                             err.msg));
		return;
	}
	restart_needed = strcmp(n.socket, d->conf.socket) ||
	                 strcmp(n.state_dir, d->conf.state_dir) ||
	                 strcmp(n.cgroup_root, d->conf.cgroup_root);
	qconf_release(&d->conf);
	d->conf = n;
	d->nr_uc = 0;
	qgpus_set_interval(d->gpus, d->conf.sample_interval);
	event(d, 0, (uid_t)-1, "reload", NULL, "configuration re-read from %s%s",
	      d->conf.path[0] ? d->conf.path : "(defaults)",
	      restart_needed ? "; socket, state_dir and cgroup_root change at the next start" : "");
	dlog("configuration re-read");
	if (c) {
		json_t *resp = ok_object();

		if (restart_needed)
			json_object_set_new(
			        resp, "note",
			        json_string("socket, state_dir and cgroup_root change at the "
			                    "next start of the daemon"));
		client_reply(c, resp);
	}
	d->need_plan = true;
}

static void
request(struct daemon *d, struct client *c, json_t *req)
{
	const char *op = json_string_value(json_object_get(req, "op"));

	if (!op) {
		client_reply(c, qproto_error("usage", "a request needs \"op\""));
		return;
	}
	if (!strcmp(op, "ping")) {
		json_t *resp = ok_object();

		json_object_set_new(resp, "version", json_string(GPUSCOPE_VERSION));
		json_object_set_new(resp, "protocol", json_integer(QPROTO_VERSION));
		json_object_set_new(resp, "uid", json_integer(c->uid));
		json_object_set_new(resp, "admin", json_boolean(c->admin));
		json_object_set_new(resp, "pid", json_integer(getpid()));
		client_reply(c, resp);
	} else if (!strcmp(op, "submit")) {
		req_submit(d, c, req);
	} else if (!strcmp(op, "ls")) {
		req_ls(d, c, req);
	} else if (!strcmp(op, "show")) {
		req_show(d, c, req);
	} else if (!strcmp(op, "why")) {
		req_why(d, c, req);
	} else if (!strcmp(op, "cancel") || !strcmp(op, "hold") || !strcmp(op, "release")) {
		req_jobs_op(d, c, req, op);
	} else if (!strcmp(op, "logs")) {
		req_logs(d, c, req);
	} else if (!strcmp(op, "history")) {
		req_history(d, c, req);
	} else if (!strcmp(op, "events")) {
		req_events(d, c, req);
	} else if (!strcmp(op, "drain") || !strcmp(op, "resume") || !strcmp(op, "clean") ||
	           !strcmp(op, "pause") || !strcmp(op, "unpause") || !strcmp(op, "reload")) {
		if (!c->admin) {
			client_reply(c, qproto_error("denied",
			                             "'%s' is for admins (root or the %s group)",
			                             op, d->conf.admin_group));
			return;
		}
		if (!strcmp(op, "reload")) {
			reload(d, c);
		} else if (!strcmp(op, "pause") || !strcmp(op, "unpause")) {
			struct ucache *u = user_get(d, c->uid, c->gid);

			d->paused = op[0] == 'p';
			store_meta_set(d->st, "paused", d->paused ? "1" : "0", NULL);
			event(d, 0, (uid_t)-1, op, NULL, "the queue was %s by %s",
			      d->paused ? "paused" : "unpaused", u->name);
			client_reply(c, ok_object());
			d->need_plan = true;
		} else {
			req_gpu_op(d, c, req, op);
		}
	} else {
		client_reply(
		        c, qproto_error("usage",
		                        "unknown op '%.40s' (submit, ls, show, why, cancel, hold, "
		                        "release, logs, history, events, drain, resume, clean, "
		                        "pause, unpause, reload, ping)",
		                        op));
	}
}

/* ---- clients: input ---- */

static void
client_input(struct daemon *d, struct client *c)
{
	char buf[65536];

	for (;;) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		char *nl;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				c->dead = true;
			return;
		}
		if (n == 0) {
			/* half-closed: answer what was asked, then close; a stream ends */
			if (c->mode == CM_NONE)
				c->closing = true;
			else
				c->dead = true;
			c->eof = true;
			return;
		}
		c->last_active = clock_mono();
		if (c->closing)
			continue;
		strbuf_add(&c->in, buf, (size_t)n);
		while (!c->closing && (nl = memchr(c->in.buf, '\n', c->in.len))) {
			size_t len = (size_t)(nl - c->in.buf);
			struct err err = ERR_INIT;
			json_t *req;

			if (len > d->conf.max_request) {
				client_reply(c,
				             qproto_error("invalid", "a request is over %zu bytes",
				                          d->conf.max_request));
				c->closing = true;
				break;
			}
			if (qproto_decode(c->in.buf, len, &req, &err) < 0) {
				client_reply(c, qproto_error("invalid", "%s", err.msg));
				c->closing = true;
				break;
			}
			memmove(c->in.buf, nl + 1, c->in.len - len - 1);
			strbuf_setlen(&c->in, c->in.len - len - 1);
			if (c->mode != CM_NONE) {
				/* a stream takes no further requests */
				json_decref(req);
				continue;
			}
			request(d, c, req);
			json_decref(req);
			/* the answer goes now, not after the plan this request may cause */
			client_flush(c);
		}
		if (!c->closing && c->in.len > d->conf.max_request) {
			client_reply(c, qproto_error("invalid", "a request is over %zu bytes",
			                             d->conf.max_request));
			c->closing = true;
		}
	}
}

static void
client_free(struct client *c)
{
	close(c->fd);
	if (c->log_fd >= 0)
		close(c->log_fd);
	strbuf_release(&c->in);
	strbuf_release(&c->out);
	free(c);
}

static void
accept_clients(struct daemon *d)
{
	for (int n = 0; n < 64; n++) {
		struct ucred cr;
		socklen_t len = sizeof(cr);
		struct client *c;
		int fd = accept4(d->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
			close(fd);
			continue;
		}
		if (d->nr_cl >= d->conf.max_clients ||
		    (d->self_uid != 0 && cr.uid != 0 && cr.uid != d->self_uid)) {
			struct strbuf sb = STRBUF_INIT;
			json_t *e =
			        d->nr_cl >= d->conf.max_clients
			                ? qproto_error(
			                          "busy",
			                          "the queue has %zu clients, the most it takes "
			                          "(max_clients): try again",
			                          d->nr_cl)
			                : qproto_error(
			                          "denied",
			                          "this is the personal queue of uid %u: it takes "
			                          "no other user",
			                          (unsigned)d->self_uid);

			qproto_encode(e, &sb);
			if (send(fd, sb.buf, sb.len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
				/* it is being turned away anyway */
			}
			strbuf_release(&sb);
			json_decref(e);
			close(fd);
			continue;
		}
		c = xcalloc(1, sizeof(*c));
		c->fd = fd;
		c->uid = cr.uid;
		c->gid = cr.gid;
		c->pid = cr.pid;
		c->admin = user_get(d, cr.uid, cr.gid)->admin;
		strbuf_init(&c->in, 0);
		strbuf_init(&c->out, 0);
		c->log_fd = -1;
		c->last_active = clock_mono();
		ALLOC_GROW(d->cl, d->nr_cl + 1, d->alloc_cl);
		d->cl[d->nr_cl++] = c;
	}
}

/* ---- start-up ---- */

static int
load_conf(struct daemon *d, struct qconf *out, struct err *err)
{
	int rc;

	qconf_defaults(out);
	rc = qconf_load(out, d->opts.config, d->opts.config_given, err);
	if (rc < 0) {
		qconf_release(out);
		return rc;
	}
	if (d->opts.socket)
		str_copy(out->socket, sizeof(out->socket), d->opts.socket);
	if (d->opts.state_dir)
		str_copy(out->state_dir, sizeof(out->state_dir), d->opts.state_dir);
	return 0;
}

static int
mkdir_p(const char *path, mode_t mode)
{
	char buf[1024];

	if (strlen(path) >= sizeof(buf))
		return -1;
	str_copy(buf, sizeof(buf), path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0755) < 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

static int
listen_socket(struct daemon *d, struct err *err)
{
	struct sockaddr_un sa;
	const char *path = d->conf.socket;
	struct stat st;
	char dir[1024];
	char *slash;
	mode_t old;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path))
		return err_set(err, E_USAGE, "the socket path %s is too long (at most %zu bytes)",
		               path, sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	str_copy(dir, sizeof(dir), path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir_p(dir, 0755) < 0)
			return err_set(err, errno_status(errno),
			               "cannot create %s for the socket: %s", dir, strerror(errno));
	}
	if (lstat(path, &st) == 0) {
		int probe;

		if (!S_ISSOCK(st.st_mode))
			return err_set(err, E_USAGE,
			               "%s exists and is not a socket: remove it or give another "
			               "--socket",
			               path);
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			struct ucred cr;
			socklen_t len = sizeof(cr);

			memset(&cr, 0, sizeof(cr));
			getsockopt(probe, SOL_SOCKET, SO_PEERCRED, &cr, &len);
			close(probe);
			return err_set(
			        err, E_BUSY,
			        "another gpuscope queued runs on %s (pid %d): stop it first, or "
			        "give another --socket",
			        path, (int)cr.pid);
		}
		if (probe >= 0)
			close(probe);
		/* nothing answers: a stale socket of a daemon that died */
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return err_set(err, E_IO, "cannot create a socket: %s", strerror(errno));
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		umask(old);
		close(fd);
		return err_set(err, errno_status(e), "cannot bind the socket %s: %s", path,
		               strerror(e));
	}
	umask(old);
	if (chmod(path, d->self_uid == 0 ? 0666 : 0600) < 0 || listen(fd, 128) < 0) {
		int e = errno;

		close(fd);
		unlink(path);
		return err_set(err, errno_status(e), "cannot listen on %s: %s", path, strerror(e));
	}
	if (stat(path, &st) == 0) {
		d->sock_dev = st.st_dev;
		d->sock_ino = st.st_ino;
	}
	str_copy(d->sock_path, sizeof(d->sock_path), path);
	d->listen_fd = fd;
	return 0;
}

static int
lock_state(struct daemon *d, struct err *err)
{
	char path[1100], pid[32];
	int fd;

	snprintf(path, sizeof(path), "%s/daemon.lock", d->conf.state_dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return err_set(err, errno_status(errno), "cannot open %s: %s", path,
		               strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);

		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		close(fd);
		return err_set(err, E_BUSY,
		               "another gpuscope queued uses the state directory %s (pid %s): one "
		               "daemon per state directory",
		               d->conf.state_dir, pid[0] ? pid : "?");
	}
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, strlen(pid), 0) < 0) {
		/* only informative */
	}
	d->lock_fd = fd;
	return 0;
}

/* After a restart: what became of each job while the daemon was away. */
static void
recover(struct daemon *d)
{
	struct qjob_list l = { NULL, 0 };
	struct err err = ERR_INIT;
	char v[64];
	double hb = 0, now = now_wall(d);
	unsigned adopted = 0, ended = 0, requeued = 0, lost = 0, waiting = 0;

	if (store_meta_get(d->st, "heartbeat", v, sizeof(v), NULL) == 0)
		hb = strtod(v, NULL);
	if (store_meta_get(d->st, "paused", v, sizeof(v), NULL) == 0)
		d->paused = !strcmp(v, "1");
	if (!d->conf.resume_queue)
		d->paused = true;
	if (store_jobs_active(d->st, &l, &err) < 0) {
		dlog("cannot read the jobs: %s", err.msg);
		return;
	}
	for (size_t i = 0; i < l.nr; i++) {
		struct djob *dj = job_add(d, &l.job[i]);
		struct exec_probe p;
		enum qj_state s = dj->j.state;

		if (s == QJ_QUEUED || s == QJ_HELD) {
			waiting++;
			continue;
		}
		memset(&p, 0, sizeof(p));
		err_clear(&err);
		if (exec_probe(&d->env, &dj->j, &p, &err) < 0) {
			dlog("probing job %llu: %s", (unsigned long long)dj->j.id, err.msg);
			memset(&p, 0, sizeof(p));
		}
		if (s == QJ_EXITING) {
			dj->exiting_since = clock_mono();
			continue;
		}
		if (p.sup_alive) {
			adopted++;
			if (s == QJ_STARTING && p.started) {
				dj->j.state = QJ_RUNNING;
				dj->j.pid = p.pid;
				job_save(d, dj);
			}
			jevent(d, dj, "adopt", "job %llu adopted after the daemon's restart (%s)",
			       (unsigned long long)dj->j.id, qj_state_name(dj->j.state));
			continue;
		}
		if (p.ended) {
			ended++;
			job_exited(d, dj, &p.exit, " (ended while the daemon was down)");
			continue;
		}
		if (s == QJ_STARTING && !p.started && !p.populated) {
			requeued++;
			job_requeue(d, dj, "requeue: never started");
			continue;
		}
		lost++;
		job_sup_lost(d, dj);
	}
	store_jobs_free(&l);
	if (hb > 0)
		event(d, 0, (uid_t)-1, "daemon-start", NULL,
		      "daemon started (pid %d) after at most %.0f s down (the last heartbeat): %u jobs adopted, %u ended meanwhile, "
		      "%u requeued, %u lost their supervisor, %u waiting%s",
		      (int)getpid(), now - hb > 0 ? now - hb : 0, adopted, ended, requeued, lost,
		      waiting, d->paused ? "; the queue is paused" : "");
	else
		event(d, 0, (uid_t)-1, "daemon-start", NULL, "daemon started (pid %d)%s",
		      (int)getpid(), d->paused ? "; the queue is paused" : "");
	d->need_plan = true;
}

static void
setup_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
}

static bool
streams_waiting(struct daemon *d)
{
	for (size_t i = 0; i < d->nr_cl; i++)
		if (d->cl[i]->mode == CM_LOGS)
			return true;
	return false;
}

static int
poll_timeout(struct daemon *d)
{
	double mono = clock_mono(), next = d->last_tick + 1.0;
	bool busy = streams_waiting(d);

	for (size_t i = 0; i < d->nr_job && !busy; i++)
		busy = d->job[i]->j.state == QJ_STOPPING || d->job[i]->j.state == QJ_EXITING ||
		       (d->job[i]->report_fd < 0 &&
		        (d->job[i]->j.state == QJ_STARTING || d->job[i]->j.state == QJ_RUNNING));
	if (busy)
		next = d->last_tick + 0.25;
	if (d->need_plan || d->need_tick)
		next = d->last_plan + PLAN_EVERY;
	if (next <= mono)
		return 0;
	return (int)((next - mono) * 1000) + 1;
}

static void
loop(struct daemon *d, int sig_read)
{
	struct pollfd *pfd = NULL;
	size_t alloc_pfd = 0;

	while (!got_term) {
		size_t n = 0, first_client, first_job;
		struct djob **jobs_polled = NULL;
		int pr;

		ALLOC_GROW(pfd, 3 + d->nr_cl + d->nr_job, alloc_pfd);
		pfd[n++] = (struct pollfd){ .fd = d->listen_fd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = d->ev_fd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = sig_read, .events = POLLIN };
		first_client = n;
		for (size_t i = 0; i < d->nr_cl; i++) {
			struct client *c = d->cl[i];

			pfd[n++] = (struct pollfd){
				.fd = c->fd,
				.events = (short)((c->out_off < c->out.len ? POLLOUT : 0) |
				                  (c->eof ? 0 : POLLIN)),
			};
		}
		first_job = n;
		jobs_polled = xmalloc(st_mult(d->nr_job + 1, sizeof(*jobs_polled)));
		for (size_t i = 0; i < d->nr_job; i++)
			if (d->job[i]->report_fd >= 0) {
				jobs_polled[n - first_job] = d->job[i];
				pfd[n++] = (struct pollfd){ .fd = d->job[i]->report_fd,
					                    .events = POLLIN };
			}
		pr = poll(pfd, n, poll_timeout(d));
		if (pr < 0 && errno != EINTR) {
			dlog("poll: %s", strerror(errno));
			free(jobs_polled);
			break;
		}
		if (pr > 0 && (pfd[2].revents & POLLIN)) {
			char buf[64];

			while (read(sig_read, buf, sizeof(buf)) > 0)
				;
		}
		if (got_chld) {
			got_chld = 0;
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
		}
		if (got_hup) {
			got_hup = 0;
			reload(d, NULL);
		}
		if (got_term) {
			free(jobs_polled);
			break;
		}
		if (pr > 0) {
			if (pfd[1].revents & POLLIN) {
				uint64_t cnt;

				if (read(d->ev_fd, &cnt, sizeof(cnt)) > 0)
					d->need_tick = true;
			}
			/* reports before requests: a job that ended is seen as ended */
			store_begin(d->st, NULL);
			for (size_t i = first_job; i < n; i++)
				if (pfd[i].revents)
					read_reports(d, jobs_polled[i - first_job]);
			store_commit(d->st, NULL);
			for (size_t i = first_client; i < first_job; i++) {
				struct client *c = d->cl[i - first_client];

				if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
					client_input(d, c);
				if (pfd[i].revents & POLLOUT)
					client_flush(c);
			}
			if (pfd[0].revents & POLLIN)
				accept_clients(d);
		}
		free(jobs_polled);
		{
			double mono = clock_mono();

			if (d->need_tick ||
			    mono - d->last_tick >= (streams_waiting(d) ? 0.25 : 1.0) ||
			    (poll_timeout(d) == 0 && !d->need_plan))
				tick(d);
			if (d->need_plan && mono - d->last_plan >= PLAN_EVERY)
				plan(d);
		}
		for (size_t i = 0; i < d->nr_cl; i++) {
			struct client *c = d->cl[i];

			if (c->mode == CM_LOGS && clock_mono() - d->last_tick < 0.05)
				pump_logs(d, c);
			if (c->mode == CM_EVENTS && (!c->ev_caught_up || d->events_added))
				pump_events(d, c);
			if (c->mode == CM_NONE && !c->closing && c->out.len == c->out_off &&
			    clock_mono() - c->last_active > IDLE_TIMEOUT)
				c->dead = true;
			client_flush(c);
		}
		d->events_added = false;
		for (size_t i = 0; i < d->nr_cl;) {
			if (d->cl[i]->dead) {
				client_free(d->cl[i]);
				memmove(d->cl + i, d->cl + i + 1,
				        (d->nr_cl - i - 1) * sizeof(*d->cl));
				d->nr_cl--;
			} else {
				i++;
			}
		}
	}
	free(pfd);
}

int
qdaemon_run(const struct qdaemon_opts *o, struct err *err)
{
	struct daemon *d = xcalloc(1, sizeof(*d));
	int sp[2] = { -1, -1 };
	int rc;

	d->opts = *o;
	d->gs = *o->gs;
	d->listen_fd = d->ev_fd = d->lock_fd = -1;
	d->self_uid = geteuid();
	qgpu_sample_init(&d->sample);
	rc = load_conf(d, &d->conf, err);
	if (rc < 0)
		goto out;
	if (mkdir_p(d->conf.state_dir, 0755) < 0) {
		rc = err_set(err, errno_status(errno), "cannot create the state directory %s: %s",
		             d->conf.state_dir, strerror(errno));
		goto out;
	}
	rc = lock_state(d, err);
	if (rc < 0)
		goto out;
	rc = store_open(d->conf.state_dir, &d->st, err);
	if (rc < 0)
		goto out;
	rc = exec_init(&d->env, d->conf.state_dir, d->conf.cgroup_root, err);
	if (rc < 0)
		goto out;
	if (!d->env.cgroups)
		dlog("running without cgroups: %s (jobs are tracked by their session)",
		     d->env.why_no_cgroups);
	rc = listen_socket(d, err);
	if (rc < 0)
		goto out;
	d->started = now_wall(d);
	d->last_heartbeat = 0;
	recover(d);
	d->ev_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->ev_fd < 0 || pipe2(sp, O_NONBLOCK | O_CLOEXEC) < 0) {
		rc = err_set(err, E_IO, "cannot create the daemon's wake-up descriptors: %s",
		             strerror(errno));
		goto out;
	}
	sig_fd = sp[1];
	setup_signals();
	rc = qgpus_start(&d->gs, d->conf.sample_interval, d->conf.nvml_timeout, d->ev_fd, &d->gpus,
	                 err);
	if (rc < 0)
		goto out;
	dlog("listening on %s (state in %s, cgroups %s)", d->sock_path, d->conf.state_dir,
	     d->env.cgroups ? d->env.cgroup_root : "off");
	loop(d, sp[0]);
	dlog("stopping; the jobs keep running and are adopted at the next start");
	event(d, 0, (uid_t)-1, "daemon-stop", NULL, "daemon stopped (pid %d); jobs keep running",
	      (int)getpid());
	rc = 0;
out:
	sig_fd = -1;
	if (d->gpus)
		qgpus_stop(d->gpus);
	for (size_t i = 0; i < d->nr_cl; i++)
		client_free(d->cl[i]);
	free(d->cl);
	if (d->listen_fd >= 0) {
		struct stat st;

		close(d->listen_fd);
		/* remove the socket only if it is still ours */
		if (stat(d->sock_path, &st) == 0 && st.st_ino == d->sock_ino &&
		    st.st_dev == d->sock_dev)
			unlink(d->sock_path);
	}
	if (d->st) {
		for (size_t i = 0; i < d->nr_job; i++) {
			flush_usage(d, d->job[i]);
			if (qj_state_holds_gpus(d->job[i]->j.state))
				job_save(d, d->job[i]);
		}
		store_close(d->st);
	}
	while (d->nr_job)
		job_remove(d, d->job[d->nr_job - 1]);
	free(d->job);
	free(d->gpu);
	free(d->uc);
	free(d->pj);
	qgpu_sample_release(&d->sample);
	qconf_release(&d->conf);
	if (d->ev_fd >= 0)
		close(d->ev_fd);
	if (sp[0] >= 0)
		close(sp[0]);
	if (sp[1] >= 0)
		close(sp[1]);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	free(d);
	return rc;
}
