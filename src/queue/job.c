/*
 * The queue's data model (queue/job.h): the names of a job's states, a
 * job's lifecycle helpers (init, release, deep copy), and the parsers of
 * the sizes and durations users type (queue/jobjson.h: "20G", "2h",
 * "1-12:00:00").
 */
#include "queue/job.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"
#include "core/xalloc.h"
#include "queue/jobjson.h"

static const char *const state_names[QJ__COUNT] = {
	[QJ_QUEUED] = "queued",       [QJ_HELD] = "held",         [QJ_STARTING] = "starting",
	[QJ_RUNNING] = "running",     [QJ_STOPPING] = "stopping", [QJ_SUSPENDED] = "suspended",
	[QJ_EXITING] = "exiting",     [QJ_DONE] = "done",         [QJ_FAILED] = "failed",
	[QJ_CANCELLED] = "cancelled", [QJ_TIMEOUT] = "timeout",
};

const char *
qj_state_name(enum qj_state s)
{
	if ((unsigned)s >= QJ__COUNT)
		return "unknown";
	return state_names[s];
}

int
qj_state_parse(const char *s)
{
	unsigned i;

	if (!s)
		return -1;
	for (i = 0; i < QJ__COUNT; i++) {
		if (!strcasecmp(s, state_names[i]))
			return (int)i;
	}
	return -1;
}

bool
qj_state_terminal(enum qj_state s)
{
	return s == QJ_DONE || s == QJ_FAILED || s == QJ_CANCELLED || s == QJ_TIMEOUT;
}

bool
qj_state_holds_gpus(enum qj_state s)
{
	return s == QJ_STARTING || s == QJ_RUNNING || s == QJ_STOPPING || s == QJ_EXITING;
}

void
qjob_init(struct qjob *j)
{
	memset(j, 0, sizeof(*j));
	j->state = QJ_QUEUED;
}

void
qjob_release(struct qjob *j)
{
	FREE_AND_NULL(j->argv);
	FREE_AND_NULL(j->env);
	FREE_AND_NULL(j->cwd);
	FREE_AND_NULL(j->out_path);
	FREE_AND_NULL(j->err_path);
	j->argv_len = 0;
	j->env_len = 0;
}

static char *
dup_list(const char *p, size_t len)
{
	char *q;

	if (!p)
		return NULL;
	/* one more NUL than the list has, so that a list cut short still ends */
	q = xmalloc(st_add(len, 1));
	memcpy(q, p, len);
	q[len] = '\0';
	return q;
}

void
qjob_copy(struct qjob *dst, const struct qjob *src)
{
	if (dst == src)
		return;
	memcpy(dst, src, sizeof(*dst));
	dst->argv = dup_list(src->argv, src->argv_len);
	dst->env = dup_list(src->env, src->env_len);
	dst->cwd = NULL;
	dst->out_path = NULL;
	dst->err_path = NULL;
	qjob_set_str(&dst->cwd, src->cwd);
	qjob_set_str(&dst->out_path, src->out_path);
	qjob_set_str(&dst->err_path, src->err_path);
}

void
qjob_set_str(char **field, const char *s)
{
	char *old = *field;

	*field = s && *s ? xstrdup(s) : NULL;
	free(old);
}

/* --- sizes and durations --------------------------------------------------------- */

/* A run of decimal digits at *p into an integer of at most max; false on none or too big. */
static bool
take_uint(const char **p, uint64_t max, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	if (*s < '0' || *s > '9')
		return false;
	while (*s >= '0' && *s <= '9') {
		uint64_t d = (uint64_t)(*s - '0');

		if (x > (max - d) / 10)
			return false;
		x = x * 10 + d;
		s++;
	}
	*p = s;
	*v = x;
	return true;
}

/* "K" -> 10, "M" -> 20, ... "E" -> 60; -1 for anything else */
static int
unit_shift(char c)
{
	static const char units[] = "KMGTPE";
	const char *u;

	if (c >= 'a' && c <= 'z')
		c = (char)(c - 'a' + 'A');
	u = c ? strchr(units, c) : NULL;
	return u ? (int)(u - units + 1) * 10 : -1;
}

int
qj_parse_size(const char *s, uint64_t *bytes)
{
	const char *p = s, *frac = NULL;
	uint64_t whole, f = 0, fscale = 1, v;
	int shift = 0;

	if (!s || !take_uint(&p, UINT64_MAX, &whole))
		return E_PARSE;
	if (*p == '.') {
		p++;
		frac = p;
		/* up to 18 digits of fraction are kept; more are ignored */
		while (*p >= '0' && *p <= '9') {
			if (fscale < 1000000000000000000ULL) {
				f = f * 10 + (uint64_t)(*p - '0');
				fscale *= 10;
			}
			p++;
		}
		if (p == frac)
			return E_PARSE;
	}
	if (*p == 'b' || *p == 'B') {
		p++;
	} else if (*p) {
		shift = unit_shift(*p);
		if (shift < 0)
			return E_PARSE;
		p++;
		/* "G", "GB", "GiB": all binary */
		if (*p == 'i' || *p == 'I')
			p++;
		if (*p == 'b' || *p == 'B')
			p++;
	}
	if (*p)
		return E_PARSE;
	if (whole > (UINT64_MAX >> shift))
		return E_PARSE;
	v = whole << shift;
	if (frac && f) {
		/* f / fscale of one unit, rounded to a byte */
		long double part =
		        (long double)f / (long double)fscale * (long double)(1ULL << shift);
		uint64_t add = (uint64_t)(part + 0.5L);

		if (shift == 0)
			return E_PARSE; /* "1.5" bytes */
		if (v > UINT64_MAX - add)
			return E_PARSE;
		v += add;
	}
	*bytes = v;
	return E_OK;
}

/* "D-H", "D-H:M", "D-H:M:S", "M:S", "H:M:S" (Slurm's forms). */
static int
parse_clock(const char *s, uint64_t *out)
{
	const char *p = s;
	uint64_t part[3], days = 0, total;
	unsigned n = 0;
	bool has_days = strchr(s, '-') != NULL;

	if (has_days) {
		if (!take_uint(&p, 1000000, &days) || *p != '-')
			return E_PARSE;
		p++;
	}
	for (;;) {
		if (n == 3 || !take_uint(&p, 100000000, &part[n]))
			return E_PARSE;
		n++;
		if (!*p)
			break;
		if (*p != ':')
			return E_PARSE;
		p++;
	}
	if (has_days) {
		/* D-H, D-H:M, D-H:M:S */
		total = part[0] * 3600;
		if (n > 1)
			total += part[1] * 60;
		if (n > 2)
			total += part[2];
		total += days * 86400;
	} else if (n == 3) {
		total = part[0] * 3600 + part[1] * 60 + part[2];
	} else if (n == 2) {
		total = part[0] * 60 + part[1];
	} else {
		return E_PARSE; /* a bare number is not a clock (handled by the caller) */
	}
	*out = total;
	return E_OK;
}

int
qj_parse_duration(const char *s, uint32_t *sec)
{
	const char *p = s;
	uint64_t total = 0, v, mult;
	int rc;

	if (!s || !*s)
		return E_PARSE;
	if (strchr(s, ':') || strchr(s, '-')) {
		rc = parse_clock(s, &total);
		if (rc < 0)
			return rc;
		goto out;
	}
	/* "90", "90s", "10m", "2h", "1d", and sums of them: "1h30m" */
	while (*p) {
		const char *term = p;

		if (!take_uint(&p, UINT32_MAX, &v))
			return E_PARSE;
		switch (*p) {
		case '\0':
			/* a bare number: seconds, but only as the whole string ("1h30" is unclear)
			 */
			if (term != s)
				return E_PARSE;
			mult = 1;
			break;
		case 's':
		case 'S':
			mult = 1;
			p++;
			break;
		case 'm':
		case 'M':
			mult = 60;
			p++;
			break;
		case 'h':
		case 'H':
			mult = 3600;
			p++;
			break;
		case 'd':
		case 'D':
			mult = 86400;
			p++;
			break;
		default:
			return E_PARSE;
		}
		total += v * mult;
		if (total > UINT32_MAX)
			return E_PARSE;
	}
out:
	if (total > UINT32_MAX)
		return E_PARSE;
	*sec = (uint32_t)total;
	return E_OK;
}
