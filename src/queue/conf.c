/*
 * The queue daemon's configuration file (conf.h).
 */
#include "queue/conf.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/err.h"
#include "core/fileio.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "queue/jobjson.h"

/* the largest configuration file read */
#define QCONF_MAX_FILE (4 << 20)

void
qconf_defaults(struct qconf *c)
{
	memset(c, 0, sizeof(*c));
	str_copy(c->socket, sizeof(c->socket), "/run/gpuscope/queue.sock");
	str_copy(c->state_dir, sizeof(c->state_dir), "/var/lib/gpuscope/queue");
	str_copy(c->admin_group, sizeof(c->admin_group), "gpuscope-admin");
	c->default_mode = QJ_MODE_EXCLUSIVE;
	c->mem_margin = 256ull << 20;
	c->backfill = true;
	c->preemption = true;
	c->preempt_mode = QPM_KILL;
	c->grace = 30;
	c->cleanup_timeout = 60;
	c->sample_interval = 1;
	c->fairshare_half_life = 7 * 86400;
	c->resume_queue = true;
	c->max_clients = 64;
	c->max_request = 1 << 20;
	c->nvml_timeout = 5;
	c->history_keep = 30 * 86400;
}

void
qconf_release(struct qconf *c)
{
	FREE_AND_NULL(c->limit);
	FREE_AND_NULL(c->gpu);
	c->nr_limit = c->nr_gpu = 0;
}

/*
 * Seconds: what qj_parse_duration() takes ("90", "30s", "5m", "1h30m", "7d",
 * "1-12:00:00"), and, as the sampling keys need less than a second, a
 * decimal number of seconds ("0.2", "0.2s") or milliseconds ("250ms").
 */
static bool
parse_duration(const char *s, double *out)
{
	uint32_t sec;
	char *end;
	double v;

	if (qj_parse_duration(s, &sec) == 0) {
		*out = sec;
		return true;
	}
	if (!isdigit((unsigned char)*s) && *s != '.')
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return false;
	if (!strcmp(end, "ms"))
		v /= 1000;
	else if (*end && strcmp(end, "s"))
		return false;
	*out = v;
	return true;
}

static bool
parse_bool(const char *s, bool *out)
{
	if (!strcasecmp(s, "yes") || !strcasecmp(s, "true") || !strcasecmp(s, "on") ||
	    !strcmp(s, "1")) {
		*out = true;
		return true;
	}
	if (!strcasecmp(s, "no") || !strcasecmp(s, "false") || !strcasecmp(s, "off") ||
	    !strcmp(s, "0")) {
		*out = false;
		return true;
	}
	return false;
}

static bool
parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

enum key_kind { K_STR, K_SIZE, K_DUR, K_BOOL, K_UINT, K_INT, K_MODE, K_PMODE, K_SECS };

struct key {
	const char *name;
	enum key_kind kind;
	size_t off;
	size_t len; /* K_STR: buffer size */
};

#define KEY(n, k, f)                                                            \
	{                                                                       \
		n, k, offsetof(struct qconf, f), sizeof(((struct qconf *)0)->f) \
	}

static const struct key keys[] = {
	KEY("socket", K_STR, socket),
	KEY("state_dir", K_STR, state_dir),
	KEY("cgroup_root", K_STR, cgroup_root),
	KEY("admin_group", K_STR, admin_group),
	KEY("default_mode", K_MODE, default_mode),
	KEY("default_gpu_mem", K_SIZE, default_gpu_mem),
	KEY("jobs_per_gpu", K_UINT, jobs_per_gpu),
	KEY("mem_margin", K_SIZE, mem_margin),
	KEY("backfill", K_BOOL, backfill),
	KEY("preemption", K_BOOL, preemption),
	KEY("preempt_mode", K_PMODE, preempt_mode),
	KEY("grace", K_DUR, grace),
	KEY("cleanup_timeout", K_DUR, cleanup_timeout),
	KEY("sample_interval", K_DUR, sample_interval),
	KEY("fairshare_half_life", K_DUR, fairshare_half_life),
	KEY("max_running_gpus", K_UINT, max_running_gpus),
	KEY("max_running_jobs", K_UINT, max_running_jobs),
	KEY("max_queued_jobs", K_UINT, max_queued_jobs),
	KEY("max_priority", K_INT, max_priority),
	KEY("max_time", K_SECS, max_time),
	KEY("default_time", K_SECS, default_time),
	KEY("resume_queue", K_BOOL, resume_queue),
	KEY("max_clients", K_UINT, max_clients),
	KEY("max_request", K_SIZE, max_request),
	KEY("nvml_timeout", K_DUR, nvml_timeout),
	KEY("history_keep", K_DUR, history_keep),
};

static const char *
kind_hint(enum key_kind k)
{
	switch (k) {
	case K_SIZE:
		return "a size such as 256M or 1G";
	case K_DUR:
	case K_SECS:
		return "a duration such as 30s, 5m, 2h or 7d";
	case K_BOOL:
		return "yes or no";
	case K_UINT:
		return "a whole number, 0 or more";
	case K_INT:
		return "a whole number";
	case K_MODE:
		return "exclusive or shared";
	case K_PMODE:
		return "kill or checkpoint";
	default:
		return "a value";
	}
}

static int
set_key(struct qconf *c, const struct key *k, const char *v, const char *where, struct err *err)
{
	char *p = (char *)c + k->off;
	uint64_t sz;
	double d;
	long l;
	bool b;

	switch (k->kind) {
	case K_STR:
		if (strlen(v) >= k->len)
			return err_set(err, E_PARSE, "%s: %s is too long (at most %zu bytes)",
			               where, k->name, k->len - 1);
		str_copy(p, k->len, v);
		return 0;
	case K_SIZE:
		if (qj_parse_size(v, &sz) < 0)
			break;
		if (k->len == sizeof(size_t) && !strcmp(k->name, "max_request")) {
			if (sz < 1024 || sz > (1ull << 30))
				return err_set(
				        err, E_PARSE,
				        "%s: max_request must be between 1K and 1G, not '%s'",
				        where, v);
			*(size_t *)(void *)p = (size_t)sz;
		} else {
			*(uint64_t *)(void *)p = sz;
		}
		return 0;
	case K_DUR:
		if (!parse_duration(v, &d))
			break;
		if ((!strcmp(k->name, "sample_interval") || !strcmp(k->name, "nvml_timeout")) &&
		    (d < 0.05 || d > 3600))
			return err_set(err, E_PARSE,
			               "%s: %s must be between 0.05s and 1h, not '%s'", where,
			               k->name, v);
		*(double *)(void *)p = d;
		return 0;
	case K_SECS:
		if (!parse_duration(v, &d) || d > 4e9)
			break;
		*(uint32_t *)(void *)p = (uint32_t)ceil(d);
		return 0;
	case K_BOOL:
		if (!parse_bool(v, &b))
			break;
		*(bool *)(void *)p = b;
		return 0;
	case K_UINT:
		if (!parse_long(v, 0, 1000000000, &l))
			break;
		*(unsigned *)(void *)p = (unsigned)l;
		return 0;
	case K_INT:
		if (!parse_long(v, -1000000, 1000000, &l))
			break;
		*(int *)(void *)p = (int)l;
		return 0;
	case K_MODE:
		if (!strcasecmp(v, "exclusive"))
			*(enum qj_mode *)(void *)p = QJ_MODE_EXCLUSIVE;
		else if (!strcasecmp(v, "shared"))
			*(enum qj_mode *)(void *)p = QJ_MODE_SHARED;
		else
			break;
		return 0;
	case K_PMODE:
		if (!strcasecmp(v, "kill"))
			*(enum qconf_preempt_mode *)(void *)p = QPM_KILL;
		else if (!strcasecmp(v, "checkpoint"))
			*(enum qconf_preempt_mode *)(void *)p = QPM_CHECKPOINT;
		else
			break;
		return 0;
	}
	return err_set(err, E_PARSE, "%s: %s = '%s' is not %s", where, k->name, v,
	               kind_hint(k->kind));
}

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static bool
valid_name(const char *s)
{
	if (!*s || strlen(s) >= QJ_USER_LEN)
		return false;
	for (; *s; s++)
		if (isspace((unsigned char)*s) || *s == ',' || *s == ':' || *s == ']')
			return false;
	return true;
}

enum section { S_GLOBAL, S_LIMITS, S_GPU };

static int
set_limit(struct qconf_limits *l, const char *key, const char *v, const char *where,
          struct err *err)
{
	long n;
	double d;

	if (!strcmp(key, "max_time")) {
		if (!parse_duration(v, &d) || d > 4e9)
			return err_set(err, E_PARSE, "%s: max_time = '%s' is not %s", where, v,
			               kind_hint(K_DUR));
		l->max_time = (long)ceil(d);
		return 0;
	}
	if (!strcmp(key, "max_priority")) {
		if (!parse_long(v, -1000000, 1000000, &n))
			return err_set(err, E_PARSE,
			               "%s: max_priority = '%s' is not a whole number", where, v);
		l->max_priority = n;
		return 0;
	}
	if (strcmp(key, "max_running_gpus") && strcmp(key, "max_running_jobs") &&
	    strcmp(key, "max_queued_jobs"))
		return err_set(err, E_PARSE,
		               "%s: unknown key '%s' in a [user]/[group] section (known: "
		               "max_running_gpus, max_running_jobs, max_queued_jobs, max_priority, "
		               "max_time)",
		               where, key);
	if (!parse_long(v, 0, 1000000000, &n))
		return err_set(err, E_PARSE, "%s: %s = '%s' is not a whole number, 0 or more",
		               where, key, v);
	if (!strcmp(key, "max_running_gpus"))
		l->max_running_gpus = n;
	else if (!strcmp(key, "max_running_jobs"))
		l->max_running_jobs = n;
	else
		l->max_queued_jobs = n;
	return 0;
}

static int
set_reserve(struct qconf_gpu *g, char *v, const char *where, struct err *err)
{
	char *save = NULL, *tok;

	g->reserved = true;
	g->nr_reserve_user = g->nr_reserve_group = 0;
	for (tok = strtok_r(v, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *t = trim(tok), *name;
		bool group;

		if (!*t)
			continue;
		if (!strncmp(t, "user:", 5)) {
			group = false;
			name = trim(t + 5);
		} else if (!strncmp(t, "group:", 6)) {
			group = true;
			name = trim(t + 6);
		} else {
			return err_set(err, E_PARSE,
			               "%s: reserve entry '%s' must be user:NAME or group:NAME",
			               where, t);
		}
		if (!valid_name(name))
			return err_set(err, E_PARSE, "%s: reserve entry '%s' has no valid name",
			               where, t);
		if ((group ? g->nr_reserve_group : g->nr_reserve_user) >= QCONF_MAX_RESERVE)
			return err_set(err, E_PARSE,
			               "%s: at most %d users and %d groups per reserve", where,
			               QCONF_MAX_RESERVE, QCONF_MAX_RESERVE);
		if (group)
			str_copy(g->reserve_group[g->nr_reserve_group++], QJ_USER_LEN, name);
		else
			str_copy(g->reserve_user[g->nr_reserve_user++], QJ_USER_LEN, name);
	}
	return 0;
}

static int
parse_into(struct qconf *c, char *text, const char *name, struct err *err)
{
	enum section sec = S_GLOBAL;
	size_t alloc_limit = 0, alloc_gpu = 0, lineno = 0;
	char *save = NULL, *line, *next = text;
	char where[1200];

	while (next) {
		char *eq, *k, *v;

		line = next;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		snprintf(where, sizeof(where), "%s:%zu", name, lineno);
		/* a # starts a comment anywhere: no value needs one */
		if (strchr(line, '#'))
			*strchr(line, '#') = '\0';
		line = trim(line);
		if (!*line)
			continue;
		if (*line == '[') {
			char *end = strchr(line, ']'), *word, *arg;

			if (!end || end[1])
				return err_set(err, E_PARSE,
				               "%s: a section line is [user NAME], [group "
				               "NAME] or [gpu UUID]",
				               where);
			*end = '\0';
			word = trim(line + 1);
			arg = word;
			while (*arg && !isspace((unsigned char)*arg))
				arg++;
			if (*arg)
				*arg++ = '\0';
			arg = trim(arg);
			if (!valid_name(arg) && strcmp(word, "gpu"))
				return err_set(err, E_PARSE, "%s: section [%s] needs a valid name",
				               where, word);
			if (!strcmp(word, "user") || !strcmp(word, "group")) {
				struct qconf_limits *l;

				ALLOC_GROW(c->limit, c->nr_limit + 1, alloc_limit);
				l = &c->limit[c->nr_limit++];
				memset(l, 0, sizeof(*l));
				str_copy(l->name, sizeof(l->name), arg);
				l->is_group = word[0] == 'g';
				l->max_running_gpus = l->max_running_jobs = l->max_queued_jobs = -1;
				l->max_time = -1;
				l->max_priority = LONG_MIN;
				sec = S_LIMITS;
			} else if (!strcmp(word, "gpu")) {
				struct qconf_gpu *g;

				if (!*arg || strlen(arg) >= QJ_UUID_LEN || strchr(arg, ' '))
					return err_set(err, E_PARSE,
					               "%s: section [gpu UUID] needs a UUID",
					               where);
				ALLOC_GROW(c->gpu, c->nr_gpu + 1, alloc_gpu);
				g = &c->gpu[c->nr_gpu++];
				memset(g, 0, sizeof(*g));
				str_copy(g->uuid, sizeof(g->uuid), arg);
				sec = S_GPU;
			} else {
				return err_set(
				        err, E_PARSE,
				        "%s: unknown section [%s] (known: [user NAME], [group NAME], "
				        "[gpu UUID])",
				        where, word);
			}
			continue;
		}
		eq = strchr(line, '=');
		if (!eq)
			return err_set(err, E_PARSE, "%s: expected 'key = value', found '%.60s'",
			               where, line);
		*eq = '\0';
		k = trim(line);
		v = trim(eq + 1);
		if (sec == S_LIMITS) {
			int rc = set_limit(&c->limit[c->nr_limit - 1], k, v, where, err);

			if (rc < 0)
				return rc;
			continue;
		}
		if (sec == S_GPU) {
			struct qconf_gpu *g = &c->gpu[c->nr_gpu - 1];

			if (!strcmp(k, "reserve")) {
				int rc = set_reserve(g, v, where, err);

				if (rc < 0)
					return rc;
			} else if (!strcmp(k, "drain")) {
				if (!parse_bool(v, &g->drain))
					return err_set(err, E_PARSE,
					               "%s: drain = '%s' is not yes or no", where,
					               v);
			} else {
				return err_set(
				        err, E_PARSE,
				        "%s: unknown key '%s' in a [gpu] section (known: reserve, "
				        "drain)",
				        where, k);
			}
			continue;
		}
		{
			const struct key *found = NULL;
			int rc;

			for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
				if (!strcmp(keys[i].name, k))
					found = &keys[i];
			if (!found)
				return err_set(
				        err, E_PARSE,
				        "%s: unknown key '%s' (contrib/queue.conf lists every key)",
				        where, k);
			rc = set_key(c, found, v, where, err);
			if (rc < 0)
				return rc;
		}
	}
	(void)save;
	if (!c->socket[0] || c->socket[0] != '/')
		return err_set(err, E_PARSE, "%s: socket must be an absolute path", name);
	if (!c->state_dir[0] || c->state_dir[0] != '/')
		return err_set(err, E_PARSE, "%s: state_dir must be an absolute path", name);
	if (c->cgroup_root[0] && c->cgroup_root[0] != '/')
		return err_set(err, E_PARSE, "%s: cgroup_root must be an absolute path or empty",
		               name);
	if (c->max_clients < 1)
		return err_set(err, E_PARSE, "%s: max_clients must be 1 or more", name);
	if (c->fairshare_half_life <= 0)
		return err_set(err, E_PARSE, "%s: fairshare_half_life must be more than 0", name);
	return 0;
}

int
qconf_parse(struct qconf *c, const char *text, size_t len, const char *name, struct err *err)
{
	struct qconf tmp;
	char *copy = xstrndup(text, len);
	int rc;

	/* work on a copy, so that c is unchanged on an error */
	tmp = *c;
	tmp.limit = NULL;
	tmp.gpu = NULL;
	tmp.nr_limit = tmp.nr_gpu = 0;
	if (c->nr_limit) {
		tmp.limit = xmalloc(st_mult(c->nr_limit, sizeof(*c->limit)));
		memcpy(tmp.limit, c->limit, c->nr_limit * sizeof(*c->limit));
		tmp.nr_limit = c->nr_limit;
	}
	if (c->nr_gpu) {
		tmp.gpu = xmalloc(st_mult(c->nr_gpu, sizeof(*c->gpu)));
		memcpy(tmp.gpu, c->gpu, c->nr_gpu * sizeof(*c->gpu));
		tmp.nr_gpu = c->nr_gpu;
	}
	rc = parse_into(&tmp, copy, name, err);
	free(copy);
	if (rc < 0) {
		qconf_release(&tmp);
		return rc;
	}
	qconf_release(c);
	*c = tmp;
	return 0;
}

int
qconf_load(struct qconf *c, const char *path, bool must_exist, struct err *err)
{
	struct strbuf sb = STRBUF_INIT;
	struct stat st;
	int rc;

	if (stat(path, &st) < 0) {
		int e = errno;

		if ((e == ENOENT || e == ENOTDIR) && !must_exist)
			return 0;
		return err_set(err, errno_status(e), "cannot read the queue's configuration %s: %s",
		               path, strerror(e));
	}
	if (!S_ISREG(st.st_mode))
		return err_set(err, E_USAGE, "the queue's configuration %s is not a regular file",
		               path);
	if (file_read_regular(path, &sb, QCONF_MAX_FILE) < 0) {
		strbuf_release(&sb);
		return err_set(err, E_PERM, "cannot read the queue's configuration %s: %s", path,
		               strerror(errno ? errno : EACCES));
	}
	if (memchr(sb.buf, '\0', sb.len)) {
		strbuf_release(&sb);
		return err_set(err, E_PARSE, "%s: not a text file", path);
	}
	rc = qconf_parse(c, sb.buf, sb.len, path, err);
	strbuf_release(&sb);
	if (rc == 0)
		str_copy(c->path, sizeof(c->path), path);
	return rc;
}

static void
apply(long v, unsigned *out)
{
	if (v >= 0)
		*out = (unsigned)v;
}

/* the more generous of two limits, where 0 is unlimited */
static long
generous(long a, long b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	if (a == 0 || b == 0)
		return 0;
	return a > b ? a : b;
}

void
qconf_limits_for(const struct qconf *c, const char *user, const char *const *groups,
                 size_t nr_groups, struct qconf_user_limits *out)
{
	struct qconf_limits g = { .max_running_gpus = -1,
		                  .max_running_jobs = -1,
		                  .max_queued_jobs = -1,
		                  .max_priority = LONG_MIN,
		                  .max_time = -1 };
	bool prio_set = false;
	long prio = 0;

	out->max_running_gpus = c->max_running_gpus;
	out->max_running_jobs = c->max_running_jobs;
	out->max_queued_jobs = c->max_queued_jobs;
	out->max_priority = c->max_priority;
	out->max_time = c->max_time;
	for (size_t i = 0; i < c->nr_limit; i++) {
		const struct qconf_limits *l = &c->limit[i];
		bool member = false;

		if (!l->is_group)
			continue;
		for (size_t j = 0; j < nr_groups && !member; j++)
			member = groups[j] && !strcmp(groups[j], l->name);
		if (!member)
			continue;
		g.max_running_gpus = generous(g.max_running_gpus, l->max_running_gpus);
		g.max_running_jobs = generous(g.max_running_jobs, l->max_running_jobs);
		g.max_queued_jobs = generous(g.max_queued_jobs, l->max_queued_jobs);
		g.max_time = generous(g.max_time, l->max_time);
		if (l->max_priority != LONG_MIN && (!prio_set || l->max_priority > prio)) {
			prio = l->max_priority;
			prio_set = true;
		}
	}
	apply(g.max_running_gpus, &out->max_running_gpus);
	apply(g.max_running_jobs, &out->max_running_jobs);
	apply(g.max_queued_jobs, &out->max_queued_jobs);
	if (g.max_time >= 0)
		out->max_time = (uint32_t)g.max_time;
	if (prio_set)
		out->max_priority = (int)prio;
	for (size_t i = 0; user && i < c->nr_limit; i++) {
		const struct qconf_limits *l = &c->limit[i];

		if (l->is_group || strcmp(l->name, user))
			continue;
		apply(l->max_running_gpus, &out->max_running_gpus);
		apply(l->max_running_jobs, &out->max_running_jobs);
		apply(l->max_queued_jobs, &out->max_queued_jobs);
		if (l->max_time >= 0)
			out->max_time = (uint32_t)l->max_time;
		if (l->max_priority != LONG_MIN)
			out->max_priority = (int)l->max_priority;
	}
}

const struct qconf_gpu *
qconf_gpu_find(const struct qconf *c, const char *uuid)
{
	for (size_t i = 0; i < c->nr_gpu; i++)
		if (!strcmp(c->gpu[i].uuid, uuid))
			return &c->gpu[i];
	return NULL;
}
