/*
 * gpuscope queue: the client of the GPU job queue (gpuscope queued). Each
 * subcommand is one request on the daemon's Unix socket (queue/proto.h);
 * the answer is printed as a table or sentence for people, or re-printed
 * as JSON with --json. docs/queue.md describes the commands, the daemon and
 * the objects it answers with.
 *
 * Exit status: 0 ok, 1 the daemon refused (or another error), 2 usage, 3
 * the daemon cannot be reached. 'submit --wait' exits with the job's own
 * exit status instead.
 */
#include "cmd/cmd.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/err.h"
#include "core/fmt.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "queue/job.h"
#include "queue/jobjson.h"
#include "queue/proto.h"

extern char **environ;

/* exit status of every queue command */
enum {
	QX_OK = 0,
	QX_FAIL = 1,    /* the daemon refused, or another error */
	QX_USAGE = 2,   /* bad command line */
	QX_UNREACH = 3, /* the daemon cannot be reached (or stopped answering) */
};

/* the options of every subcommand (getopt_long values) */
enum qopt {
	O_JSON = 'j',
	O_HELP = 'h',
	O_ALL = 'a',
	O_USER = 'u',
	O_PRIO = 'p',
	O_TIME = 't',
	O_OUTPUT = 'o',
	O_ERROR = 'e',
	O_FOLLOW = 'f',
	O_SIGNAL = 's',
	O_LIMIT = 'n',
	O_SOCKET = 256,
	O_COMPACT,
	O_ME,
	O_STATE,
	O_GPUS,
	O_GPUMEM,
	O_GPU,
	O_EXCL,
	O_SHARED,
	O_AFTER,
	O_PREEMPT,
	O_REQUEUE,
	O_GRACE,
	O_NAME,
	O_HOLD,
	O_WAIT,
	O_PARSABLE,
	O_ERR,
	O_SINCE,
	O_REASON,
};

static const struct option qopts[] = {
	{ "socket", required_argument, NULL, O_SOCKET },
	{ "json", no_argument, NULL, O_JSON },
	{ "compact", no_argument, NULL, O_COMPACT },
	{ "help", no_argument, NULL, O_HELP },
	{ "all", no_argument, NULL, O_ALL },
	{ "me", no_argument, NULL, O_ME },
	{ "user", required_argument, NULL, O_USER },
	{ "state", required_argument, NULL, O_STATE },
	{ "gpus", required_argument, NULL, O_GPUS },
	{ "gpu-mem", required_argument, NULL, O_GPUMEM },
	{ "gpu", required_argument, NULL, O_GPU },
	{ "exclusive", no_argument, NULL, O_EXCL },
	{ "shared", no_argument, NULL, O_SHARED },
	{ "priority", required_argument, NULL, O_PRIO },
	{ "after", required_argument, NULL, O_AFTER },
	{ "preemptible", no_argument, NULL, O_PREEMPT },
	{ "requeue", no_argument, NULL, O_REQUEUE },
	{ "time", required_argument, NULL, O_TIME },
	{ "grace", required_argument, NULL, O_GRACE },
	{ "name", required_argument, NULL, O_NAME },
	{ "output", required_argument, NULL, O_OUTPUT },
	{ "error", required_argument, NULL, O_ERROR },
	{ "hold", no_argument, NULL, O_HOLD },
	{ "wait", no_argument, NULL, O_WAIT },
	{ "parsable", no_argument, NULL, O_PARSABLE },
	{ "follow", no_argument, NULL, O_FOLLOW },
	{ "err", no_argument, NULL, O_ERR },
	{ "signal", required_argument, NULL, O_SIGNAL },
	{ "since", required_argument, NULL, O_SINCE },
	{ "limit", required_argument, NULL, O_LIMIT },
	{ "reason", required_argument, NULL, O_REASON },
	{ NULL, 0, NULL, 0 },
};

/* What the command line said. */
struct qargs {
	bool all, me, follow, err_stream, hold, wait, parsable, preempt, requeue;
	bool excl, shared;
	const char *user, *state, *gpus, *gpu_mem, *gpu, *prio, *after, *time, *grace;
	const char *name, *output, *error, *signal, *since, *limit, *reason;
	char **operands;
	int nr_operands;
	char after_buf[4096]; /* --after given more than once */
};

/* The command's context. */
struct qc {
	const char *socket; /* resolved: --socket, $GPUSCOPE_QUEUE_SOCKET or the default */
	const char *sub;    /* the subcommand's name, for messages */
	bool json, compact;
	double now; /* the time tables are drawn against */
};

struct qsub {
	const char *name;
	int (*run)(struct qc *q, struct qargs *a);
	const char *opts; /* the options it takes besides --socket, --json, --compact, --help */
	int min_ops, max_ops;
	const char *usage;
};

/* --- messages and output --- */

static void
qc_vmsg(const char *fmt, va_list ap)
{
	fputs("gpuscope queue: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static void qc_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int qc_fail(const struct qc *q, int rc, const char *code, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static void
qc_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	qc_vmsg(fmt, ap);
	va_end(ap);
}

static void
qc_print_json(const struct qc *q, const json_t *o)
{
	size_t flags = q->compact ? JSON_COMPACT : JSON_INDENT(2);

	json_dumpf(o, stdout, flags | JSON_ENCODE_ANY);
	fputc('\n', stdout);
	fflush(stdout);
}

/*
 * Print an error: "gpuscope queue: MSG" on stderr and, with --json,
 * {"ok": false, "error": MSG, "code": CODE} on stdout. Returns rc.
 */
static int
qc_fail(const struct qc *q, int rc, const char *code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "gpuscope queue: %s\n", msg);
	if (q->json) {
		json_t *o = json_pack("{s:b,s:s,s:s}", "ok", 0, "error", msg, "code", code);

		if (o)
			qc_print_json(q, o);
		json_decref(o);
	}
	return rc;
}

/* A refusal from the daemon: its message on stderr, its response re-printed with --json. */
static int
qc_refused(const struct qc *q, const json_t *resp)
{
	const char *msg = json_string_value(json_object_get(resp, "error"));

	fprintf(stderr, "gpuscope queue: %s\n",
	        msg && *msg ? msg : "the queue refused the request");
	if (q->json)
		qc_print_json(q, resp);
	return QX_FAIL;
}

/*
 * Send req (a new reference, released here) and wait for the answer.
 * Returns QX_OK with *resp set (a new reference) when it says ok, else
 * prints why and returns QX_FAIL (refused) or QX_UNREACH.
 */
static int
qc_call(const struct qc *q, json_t *req, json_t **resp)
{
	struct err err = ERR_INIT;
	int rc;

	*resp = NULL;
	if (!req)
		return qc_fail(q, QX_FAIL, "internal", "out of memory building the request");
	rc = qproto_call(q->socket, req, resp, &err);
	json_decref(req);
	if (rc < 0)
		return qc_fail(q, rc == E_USAGE ? QX_USAGE : QX_UNREACH,
		               rc == E_USAGE ? "usage" : "unreachable", "%s", err.msg);
	if (!json_is_true(json_object_get(*resp, "ok"))) {
		rc = qc_refused(q, *resp);
		json_decref(*resp);
		*resp = NULL;
		return rc;
	}
	return QX_OK;
}

/* Open a connection and send req (released here), for a command that reads several answers. */
static int
qc_open(const struct qc *q, json_t *req, int *fd)
{
	struct err err = ERR_INIT;
	int rc;

	if (!req)
		return qc_fail(q, QX_FAIL, "internal", "out of memory building the request");
	rc = qproto_connect(q->socket, fd, &err);
	if (rc == 0) {
		rc = qproto_send(*fd, req, &err);
		if (rc < 0) {
			close(*fd);
			*fd = -1;
		}
	}
	json_decref(req);
	if (rc < 0)
		return qc_fail(q, rc == E_USAGE ? QX_USAGE : QX_UNREACH,
		               rc == E_USAGE ? "usage" : "unreachable", "%s", err.msg);
	return QX_OK;
}

/* --- values of the command line --- */

/* A job id: a whole number from 1. Returns 0, or -1. */
static int
parse_id(const char *s, uint64_t *id)
{
	char *end;
	unsigned long long v;

	if (*s == '#')
		s++;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v == 0 || v > (1ULL << 53))
		return -1;
	*id = v;
	return 0;
}

/* A whole number in [min, max]. Returns 0, or -1. */
static int
parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Append the job ids of a comma-separated list to arr. Returns 0, or -1 naming the bad one. */
static int
add_ids(const struct qc *q, const char *opt, const char *list, json_t *arr, unsigned max)
{
	char buf[64];
	const char *p = list;

	while (*p) {
		size_t len = strcspn(p, ",");
		uint64_t id;

		if (len == 0 || len >= sizeof(buf)) {
			qc_fail(q, QX_USAGE, "usage",
			        "%s takes job ids separated by commas, not '%s'", opt, list);
			return -1;
		}
		memcpy(buf, p, len);
		buf[len] = '\0';
		if (parse_id(buf, &id) < 0) {
			qc_fail(q, QX_USAGE, "usage", "%s: '%s' is not a job id (a number from 1)",
			        opt, buf);
			return -1;
		}
		if (json_array_size(arr) >= max) {
			qc_fail(q, QX_USAGE, "usage", "%s: at most %u jobs", opt, max);
			return -1;
		}
		json_array_append_new(arr, json_integer((json_int_t)id));
		p += len;
		if (*p == ',' && !*++p) {
			qc_fail(q, QX_USAGE, "usage", "%s: '%s' ends in a comma", opt, list);
			return -1;
		}
	}
	if (!json_array_size(arr)) {
		qc_fail(q, QX_USAGE, "usage", "%s needs a job id", opt);
		return -1;
	}
	return 0;
}

/* Signal names the daemon takes: "INT", "SIGINT", "int", "2". Returns the name, or NULL. */
static const char *
signal_name(const char *s)
{
	static const struct {
		const char *name;
		int nr;
	} sigs[] = {
		{ "HUP", 1 },   { "INT", 2 },   { "QUIT", 3 },  { "ABRT", 6 },  { "KILL", 9 },
		{ "USR1", 10 }, { "SEGV", 11 }, { "USR2", 12 }, { "ALRM", 14 }, { "TERM", 15 },
		{ "CONT", 18 }, { "STOP", 19 }, { "TSTP", 20 }, { "XCPU", 24 }, { "WINCH", 28 },
	};
	long nr = -1;

	if (!strncasecmp(s, "SIG", 3))
		s += 3;
	if (*s >= '0' && *s <= '9' && parse_long(s, 1, 64, &nr) < 0)
		return NULL;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigs[i].nr == nr || (nr < 0 && !strcasecmp(s, sigs[i].name)))
			return sigs[i].name;
	return NULL;
}

/* The name of the user running this command ("uid N" without a passwd entry). */
static const char *
my_user(char *buf, size_t size)
{
	struct passwd *pw = getpwuid(getuid());

	if (pw && pw->pw_name)
		snprintf(buf, size, "%s", pw->pw_name);
	else
		snprintf(buf, size, "%u", (unsigned)getuid());
	return buf;
}

/* --- reading the daemon's objects --- */

static const char *
jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* A number of o (integer or real); false when absent or null. */
static bool
jnum(const json_t *o, const char *key, double *v)
{
	json_t *x = json_object_get(o, key);

	if (!json_is_number(x))
		return false;
	*v = json_number_value(x);
	return true;
}

static double
jnum0(const json_t *o, const char *key)
{
	double v = 0;

	jnum(o, key, &v);
	return v;
}

/* The elements of array key of o (numbers or strings), joined by commas. */
static void
jlist(const json_t *o, const char *key, char *buf, size_t size)
{
	json_t *arr = json_object_get(o, key), *v;
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < json_array_size(arr) && (v = json_array_get(arr, i)); i++) {
		char one[128];

		if (json_is_integer(v))
			snprintf(one, sizeof(one), "%lld", (long long)json_integer_value(v));
		else if (json_is_string(v))
			snprintf(one, sizeof(one), "%s", json_string_value(v));
		else
			continue;
		len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s",
		                        len ? "," : "", one);
		if (len >= size) {
			buf[size - 1] = '\0';
			return;
		}
	}
}

/* A moment: "13:20" today, "12-01 13:20" on another day, "-" for none. */
static void
fmt_when(char *buf, size_t size, double t, double now)
{
	struct tm tm, tn;
	time_t tt = (time_t)t, nn = (time_t)now;

	if (t <= 0 || !localtime_r(&tt, &tm) || !localtime_r(&nn, &tn)) {
		snprintf(buf, size, "-");
		return;
	}
	if (tm.tm_year == tn.tm_year && tm.tm_yday == tn.tm_yday)
		strftime(buf, size, "%H:%M", &tm);
	else
		strftime(buf, size, "%m-%d %H:%M", &tm);
}

/* A full moment, for show and events: "2026-12-02 13:20:01". */
static void
fmt_stamp(char *buf, size_t size, double t)
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (t <= 0 || !localtime_r(&tt, &tm))
		snprintf(buf, size, "-");
	else
		strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm);
}

/* GPUS of a job: the indices it was given, else the count it asked for. */
static void
job_gpus(const json_t *j, char *buf, size_t size)
{
	jlist(j, "gpu_indices", buf, size);
	if (!buf[0])
		snprintf(buf, size, "%lld", (long long)jnum0(j, "gpus"));
}

/* TIME of a job: how long it has run (or ran), or how long it has waited. */
static void
job_time(const json_t *j, double now, char *buf, size_t size)
{
	double start = jnum0(j, "start_time"), end = jnum0(j, "end_time");
	double sub = jnum0(j, "submit_time"), d;

	if (start > 0)
		d = (end > 0 ? end : now) - start;
	else if (sub > 0)
		d = (end > 0 ? end : now) - sub;
	else {
		snprintf(buf, size, "-");
		return;
	}
	fmt_duration(buf, size, d < 0 ? 0 : d);
}

/* EXIT of an ended job: "0", "3", "SIGKILL" (a signal), "-". */
static void
job_exit(const json_t *j, char *buf, size_t size)
{
	double code, sig;

	if (jnum(j, "exit_signal", &sig) && sig > 0)
		snprintf(buf, size, "sig%d", (int)sig);
	else if (jnum(j, "exit_code", &code))
		snprintf(buf, size, "%d", (int)code);
	else
		snprintf(buf, size, "-");
}

static void
cell(struct strbuf *sb, const char *s, size_t w, bool right, const struct term *t)
{
	fmt_cell(sb, s, w, right, t->utf8);
	strbuf_addch(sb, ' ');
}

/* The last cell of a line: cut to what is left of the width on a terminal only. */
static void
last_cell(struct strbuf *sb, const char *s, size_t used, const struct term *t, bool tty)
{
	size_t w = (size_t)t->width > used ? (size_t)t->width - used : 1;

	if (tty && fmt_width(s) > w)
		fmt_cell(sb, s, w, false, t->utf8);
	else
		fmt_add_shown(sb, s, strlen(s));
	while (sb->len && sb->buf[sb->len - 1] == ' ')
		sb->buf[--sb->len] = '\0';
	strbuf_addch(sb, '\n');
}

static int
write_out(const struct strbuf *sb)
{
	if (fwrite(sb->buf, 1, sb->len, stdout) != sb->len || fflush(stdout)) {
		qc_note("cannot write the output: %s", strerror(errno));
		return QX_FAIL;
	}
	return QX_OK;
}

/* --- ls --- */

/* Does job j pass ls's filters? states: a bitmask of enum qj_state (0: all). */
static bool
ls_keep(const json_t *j, unsigned states, const char *user, bool me)
{
	int s = qj_state_parse(jstr(j, "state"));
	double uid;

	if (states && (s < 0 || !(states & (1u << s))))
		return false;
	if (user && strcmp(jstr(j, "user"), user))
		return false;
	if (me && (!jnum(j, "uid", &uid) || (uid_t)uid != getuid()))
		return false;
	return true;
}

static int
parse_states(const struct qc *q, const char *list, unsigned *mask)
{
	char buf[32];
	const char *p = list;

	*mask = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		int s;

		if (len && len < sizeof(buf)) {
			memcpy(buf, p, len);
			buf[len] = '\0';
			if (!strcmp(buf, "active")) {
				for (s = 0; s < QJ__COUNT; s++)
					if (!qj_state_terminal((enum qj_state)s))
						*mask |= 1u << s;
			} else if ((s = qj_state_parse(buf)) >= 0 &&
			           qj_state_terminal((enum qj_state)s)) {
				return qc_fail(
				        q, QX_USAGE, "usage",
				        "ls lists the jobs that have not ended, and '%s' is an "
				        "end: 'gpuscope queue history' lists those",
				        buf);
			} else if (s >= 0) {
				*mask |= 1u << s;
			} else {
				len = 0;
			}
		}
		if (!len || len >= sizeof(buf))
			return qc_fail(
			        q, QX_USAGE, "usage",
			        "--state takes state names separated by commas (queued, held, "
			        "starting, running, stopping, suspended, exiting, active), not '%s'",
			        list);
		p += len;
		if (*p == ',')
			p++;
	}
	return QX_OK;
}

static void
ls_table(struct strbuf *sb, const json_t *jobs, const struct qc *q, const struct term *t, bool tty)
{
	json_t *j;
	size_t i;

	fmt_styled(
	        sb, t, ST_BOLD,
	        " JOBID USER     NAME       STATE     GPUS     MEM PRIO     TIME REASON/EST.START");
	strbuf_addch(sb, '\n');
	for (i = 0; i < json_array_size(jobs) && (j = json_array_get(jobs, i)); i++) {
		char id[24], gpus[64], mem[16], prio[16], tm[16], why[QJ_REASON_LEN + 32], est[32];
		double v;
		const char *state = jstr(j, "state"), *reason = jstr(j, "reason");
		enum style st = ST_NONE;

		snprintf(id, sizeof(id), "%lld", (long long)jnum0(j, "id"));
		job_gpus(j, gpus, sizeof(gpus));
		if (jnum(j, "gpu_mem", &v) && v > 0)
			fmt_bytes_short(mem, sizeof(mem), v);
		else
			snprintf(mem, sizeof(mem), "-");
		snprintf(prio, sizeof(prio), "%lld", (long long)jnum0(j, "priority"));
		job_time(j, q->now, tm, sizeof(tm));
		why[0] = '\0';
		if (jnum(j, "est_start", &v) && v > 0) {
			fmt_when(est, sizeof(est), v, q->now);
			snprintf(why, sizeof(why), "~%s ", est);
		}
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "%s", reason);
		if (!strcmp(state, "running"))
			st = ST_GREEN;
		else if (!strcmp(state, "held") || !strcmp(state, "stopping") ||
		         !strcmp(state, "suspended"))
			st = ST_YELLOW;
		else if (!strcmp(state, "failed") || !strcmp(state, "timeout"))
			st = ST_RED;
		cell(sb, id, 6, true, t);
		cell(sb, jstr(j, "user"), 8, false, t);
		cell(sb, jstr(j, "name"), 10, false, t);
		if (t->color) {
			struct strbuf c = STRBUF_INIT;

			fmt_cell(&c, state, 9, false, t->utf8);
			fmt_styled(sb, t, st, c.buf);
			strbuf_addch(sb, ' ');
			strbuf_release(&c);
		} else {
			cell(sb, state, 9, false, t);
		}
		cell(sb, gpus, 5, false, t);
		cell(sb, mem, 6, true, t);
		cell(sb, prio, 4, true, t);
		cell(sb, tm, 8, true, t);
		last_cell(sb, why, 64, t, tty);
	}
}

static void
ls_gpus(struct strbuf *sb, const json_t *gpus, const struct term *t, bool tty)
{
	json_t *g;
	size_t i;

	if (!json_array_size(gpus))
		return;
	strbuf_addch(sb, '\n');
	fmt_styled(sb, t, ST_BOLD,
	           "GPU NAME                   USED/TOTAL    FOREIGN JOBS       FLAGS");
	strbuf_addch(sb, '\n');
	for (i = 0; i < json_array_size(gpus) && (g = json_array_get(gpus, i)); i++) {
		char idx[16], used[16], total[16], mem[40], foreign[16], jobs[64], flags[128];
		char rest[QJ_REASON_LEN + 160];
		double v;
		const char *note = jstr(g, "note");

		snprintf(idx, sizeof(idx), "%lld", (long long)jnum0(g, "index"));
		if (jnum(g, "used", &v))
			fmt_bytes_short(used, sizeof(used), v);
		else
			snprintf(used, sizeof(used), "-");
		if (jnum(g, "total", &v))
			fmt_bytes_short(total, sizeof(total), v);
		else
			snprintf(total, sizeof(total), "-");
		snprintf(mem, sizeof(mem), "%s/%s", used, total);
		if (jnum(g, "foreign", &v) && v > 0)
			fmt_bytes_short(foreign, sizeof(foreign), v);
		else
			snprintf(foreign, sizeof(foreign), "-");
		jlist(g, "jobs", jobs, sizeof(jobs));
		if (!jobs[0])
			snprintf(jobs, sizeof(jobs), "-");
		jlist(g, "flags", flags, sizeof(flags));
		snprintf(rest, sizeof(rest), "%s%s%s", flags[0] ? flags : "-", *note ? "  " : "",
		         note);
		cell(sb, idx, 3, true, t);
		cell(sb, jstr(g, "name"), 22, false, t);
		cell(sb, mem, 13, false, t);
		cell(sb, foreign, 7, true, t);
		cell(sb, jobs, 10, false, t);
		if (flags[0] && t->color) {
			struct strbuf c = STRBUF_INIT;

			last_cell(&c, rest, 60, t, tty);
			c.buf[--c.len] = '\0';
			fmt_styled(sb, t, ST_YELLOW, c.buf);
			strbuf_addch(sb, '\n');
			strbuf_release(&c);
		} else {
			last_cell(sb, rest, 60, t, tty);
		}
	}
}

/* The daemon's state, when it is not plain: paused, NVML down, no cgroups. */
static void
ls_daemon(struct strbuf *sb, const json_t *d, const struct term *t)
{
	const char *nvml = jstr(d, "nvml");
	char line[512];

	if (!json_is_object(d))
		return;
	strbuf_addch(sb, '\n');
	snprintf(line, sizeof(line), "%lld running, %lld queued",
	         (long long)jnum0(d, "jobs_running"), (long long)jnum0(d, "jobs_queued"));
	fmt_add_shown(sb, line, strlen(line));
	strbuf_addch(sb, '\n');
	if (json_is_true(json_object_get(d, "paused"))) {
		fmt_styled(
		        sb, t, ST_YELLOW,
		        "the queue is paused: nothing new starts (an admin: gpuscope queue unpause)");
		strbuf_addch(sb, '\n');
	}
	if (*nvml && strcmp(nvml, "ok")) {
		snprintf(line, sizeof(line), "NVML: %s: nothing new starts until it answers", nvml);
		fmt_styled(sb, t, ST_YELLOW, line);
		strbuf_addch(sb, '\n');
	}
	if (json_is_false(json_object_get(d, "cgroups"))) {
		snprintf(line, sizeof(line),
		         "no cgroups (%s): jobs are tracked by session, not as a whole tree",
		         *jstr(d, "why_no_cgroups") ? jstr(d, "why_no_cgroups") : "unavailable");
		fmt_styled(sb, t, ST_YELLOW, line);
		strbuf_addch(sb, '\n');
	}
}

static int
q_ls(struct qc *q, struct qargs *a)
{
	char me[QJ_USER_LEN];
	unsigned states = 0;
	json_t *req, *resp, *jobs, *keep, *j;
	struct strbuf sb = STRBUF_INIT;
	struct term t;
	bool tty;
	size_t i;
	int rc;

	if (a->state && (rc = parse_states(q, a->state, &states)) != QX_OK)
		return rc;
	if (a->me && a->user)
		return qc_fail(q, QX_USAGE, "usage", "--me and -u USER: give one");
	req = json_pack("{s:s,s:b}", "op", "ls", "all", !a->me);
	if (req && a->user)
		json_object_set_new(req, "user", json_string(a->user));
	if (req && a->me)
		json_object_set_new(req, "user", json_string(my_user(me, sizeof(me))));
	rc = qc_call(q, req, &resp);
	if (rc != QX_OK)
		return rc;
	jobs = json_object_get(resp, "jobs");
	keep = json_array();
	for (i = 0; i < json_array_size(jobs); i++) {
		j = json_array_get(jobs, i);
		if (ls_keep(j, states, a->user, a->me))
			json_array_append(keep, j);
	}
	json_object_set_new(resp, "jobs", keep);
	if (q->json) {
		qc_print_json(q, resp);
		json_decref(resp);
		return QX_OK;
	}
	tty = isatty(STDOUT_FILENO);
	term_detect(&t, STDOUT_FILENO, COLOR_AUTO);
	ls_table(&sb, keep, q, &t, tty);
	ls_gpus(&sb, json_object_get(resp, "gpus"), &t, tty);
	ls_daemon(&sb, json_object_get(resp, "daemon"), &t);
	rc = write_out(&sb);
	strbuf_release(&sb);
	json_decref(resp);
	return rc;
}

/* --- submit --- */

/* Is s UTF-8 text (which JSON strings must be)? */
static bool
utf8_ok(const char *s)
{
	json_t *x = json_string(s);
	bool ok = x != NULL;

	json_decref(x);
	return ok;
}

static json_t *
env_object(void)
{
	json_t *env = json_object(), *v;

	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		char name[256];

		if (!eq || eq == *e || (size_t)(eq - *e) >= sizeof(name))
			continue;
		memcpy(name, *e, (size_t)(eq - *e));
		name[eq - *e] = '\0';
		if (json_object_get(env, name))
			continue;
		v = json_string(eq + 1);
		if (!v || !utf8_ok(name)) {
			/* the protocol carries text: say what is left behind */
			qc_note("the environment variable %.64s is not UTF-8 text: the job will not "
			        "have it",
			        name);
			json_decref(v);
			continue;
		}
		json_object_set_new(env, name, v);
	}
	return env;
}

/* path made absolute against cwd; a new JSON string. */
static json_t *
abs_path(const char *path, const char *cwd)
{
	char buf[8192];

	if (path[0] == '/')
		return json_string(path);
	snprintf(buf, sizeof(buf), "%s/%s", cwd, path);
	return json_string(buf);
}

/* The exit status 'submit --wait' ends with, for a job that ended. */
static int
wait_status(const json_t *job)
{
	const char *state = jstr(job, "state");
	double code, sig;
	char ex[32];

	job_exit(job, ex, sizeof(ex));
	if (!strcmp(state, "done") && jnum(job, "exit_code", &code))
		return (int)code;
	if (strcmp(state, "done"))
		qc_note("job %lld %s (exit %s)%s%s", (long long)jnum0(job, "id"), state, ex,
		        *jstr(job, "reason") ? ": " : "", jstr(job, "reason"));
	if (jnum(job, "exit_signal", &sig) && sig > 0)
		return 128 + (int)sig;
	if (jnum(job, "exit_code", &code) && code != 0)
		return (int)code & 255;
	return strcmp(state, "done") ? QX_FAIL : QX_OK;
}

/* Wait until job id ends; its exit status. A daemon that restarts meanwhile is waited for. */
static int
submit_wait(const struct qc *q, uint64_t id)
{
	double delay = 0.1;
	int lost = 0;

	for (;;) {
		struct err err = ERR_INIT;
		json_t *req = json_pack("{s:s,s:I}", "op", "show", "job", (json_int_t)id),
		       *resp = NULL;
		int rc;

		if (!req)
			return qc_fail(q, QX_FAIL, "internal",
			               "out of memory building the request");
		rc = qproto_call(q->socket, req, &resp, &err);
		json_decref(req);
		if (rc < 0) {
			/* the daemon restarts (kill -9, an upgrade): the job lives on; wait up to a
			 * minute */
			if (++lost > 60)
				return qc_fail(q, QX_UNREACH, "unreachable",
				               "waiting for job %llu: %s", (unsigned long long)id,
				               err.msg);
			sleep(1);
			continue;
		}
		lost = 0;
		if (!json_is_true(json_object_get(resp, "ok"))) {
			rc = qc_refused(q, resp);
			json_decref(resp);
			return rc;
		}
		{
			json_t *job = json_object_get(resp, "job");
			int st = qj_state_parse(jstr(job, "state"));

			if (st >= 0 && qj_state_terminal((enum qj_state)st)) {
				if (q->json)
					qc_print_json(q, resp);
				rc = wait_status(job);
				json_decref(resp);
				return rc;
			}
		}
		json_decref(resp);
		{
			struct timespec ts = { (time_t)delay,
				               (long)((delay - (double)(time_t)delay) * 1e9) };

			nanosleep(&ts, NULL);
		}
		if (delay < 2)
			delay *= 1.5;
	}
}

static int
q_submit(struct qc *q, struct qargs *a)
{
	char cwd[4096];
	json_t *req, *argv, *resp, *list;
	long v;
	uint64_t bytes;
	uint32_t secs;
	bool gpus_given = a->gpus != NULL;
	long gpus = 0;
	uint64_t id;
	int rc;

	if (a->excl && a->shared)
		return qc_fail(q, QX_USAGE, "usage", "--exclusive and --shared: give one");
	if (!getcwd(cwd, sizeof(cwd)))
		return qc_fail(q, QX_FAIL, "internal",
		               "cannot read the current directory (%s): cd into one that exists",
		               strerror(errno));
	argv = json_array();
	for (int i = 0; i < a->nr_operands; i++) {
		json_t *arg = json_string(a->operands[i]);

		if (!arg) {
			json_decref(argv);
			return qc_fail(
			        q, QX_USAGE, "usage",
			        "argument %d of the command is not UTF-8 text, which the queue "
			        "cannot carry",
			        i + 1);
		}
		json_array_append_new(argv, arg);
	}
	if (!utf8_ok(cwd) || (a->output && !utf8_ok(a->output)) ||
	    (a->error && !utf8_ok(a->error))) {
		json_decref(argv);
		return qc_fail(
		        q, QX_USAGE, "usage",
		        "the current directory, --output or --error is not UTF-8 text, which "
		        "the queue cannot carry");
	}
	req = json_object();
	json_object_set_new(req, "op", json_string("submit"));
	json_object_set_new(req, "argv", argv);
	json_object_set_new(req, "cwd", json_string(cwd));
	json_object_set_new(req, "env", env_object());
	if (a->gpus) {
		if (parse_long(a->gpus, 0, QJ_MAX_GPUS, &gpus) < 0) {
			json_decref(req);
			return qc_fail(q, QX_USAGE, "usage",
			               "--gpus takes a whole number from 0 to %d, not '%s'",
			               QJ_MAX_GPUS, a->gpus);
		}
	}
	if (a->gpu) {
		const char *p = a->gpu;

		list = json_array();
		while (*p) {
			size_t len = strcspn(p, ",");

			if (len == 0 || len >= QJ_UUID_LEN ||
			    json_array_size(list) >= QJ_MAX_GPUS) {
				json_decref(list);
				json_decref(req);
				return qc_fail(
				        q, QX_USAGE, "usage",
				        "--gpu takes up to %d GPUs (UUIDs, unique UUID prefixes or "
				        "indices) separated by commas, not '%s'",
				        QJ_MAX_GPUS, a->gpu);
			}
			json_array_append_new(list, json_stringn(p, len));
			p += len;
			if (*p == ',')
				p++;
		}
		if (!json_array_size(list)) {
			json_decref(list);
			json_decref(req);
			return qc_fail(q, QX_USAGE, "usage", "--gpu needs a GPU");
		}
		if (gpus_given && (size_t)gpus != json_array_size(list)) {
			size_t n = json_array_size(list);

			json_decref(list);
			json_decref(req);
			return qc_fail(q, QX_USAGE, "usage",
			               "--gpus %ld and --gpu with %zu GPUs disagree: give one",
			               gpus, n);
		}
		if (!gpus_given) {
			gpus = (long)json_array_size(list);
			gpus_given = true;
		}
		json_object_set_new(req, "gpu", list);
	}
	if (a->gpu_mem) {
		if (qj_parse_size(a->gpu_mem, &bytes) < 0 || bytes == 0) {
			json_decref(req);
			return qc_fail(
			        q, QX_USAGE, "usage",
			        "--gpu-mem takes a size above 0 (20G, 512M, 20GiB, 1.5T), not "
			        "'%s'",
			        a->gpu_mem);
		}
		json_object_set_new(req, "gpu_mem", json_integer((json_int_t)bytes));
		/* --gpu-mem alone: one GPU, shared by memory */
		if (!gpus_given) {
			gpus = 1;
			gpus_given = true;
		}
		if (!a->excl)
			a->shared = true;
	}
	if (gpus_given)
		json_object_set_new(req, "gpus", json_integer(gpus));
	if (a->excl || a->shared)
		json_object_set_new(req, "mode", json_string(a->excl ? "exclusive" : "shared"));
	if (a->prio) {
		if (parse_long(a->prio, -1000000, 1000000, &v) < 0) {
			json_decref(req);
			return qc_fail(
			        q, QX_USAGE, "usage",
			        "--priority takes a whole number from -1000000 to 1000000, not "
			        "'%s'",
			        a->prio);
		}
		json_object_set_new(req, "priority", json_integer(v));
	}
	if (a->after) {
		list = json_array();
		json_object_set_new(req, "after", list);
		if (add_ids(q, "--after", a->after, list, QJ_MAX_AFTER) < 0) {
			json_decref(req);
			return QX_USAGE;
		}
	}
	if (a->preempt)
		json_object_set_new(req, "preemptible", json_true());
	if (a->requeue)
		json_object_set_new(req, "requeue", json_true());
	if (a->hold)
		json_object_set_new(req, "hold", json_true());
	if (a->time) {
		if (qj_parse_duration(a->time, &secs) < 0 || secs == 0) {
			json_decref(req);
			return qc_fail(q, QX_USAGE, "usage",
			               "--time takes a duration above 0 (90 seconds, 10m, 2h, 1d, "
			               "1:30:00, 2-00:00:00), not '%s'",
			               a->time);
		}
		json_object_set_new(req, "time", json_integer(secs));
	}
	if (a->grace) {
		if (qj_parse_duration(a->grace, &secs) < 0) {
			json_decref(req);
			return qc_fail(q, QX_USAGE, "usage",
			               "--grace takes a duration (30, 30s, 2m), not '%s'",
			               a->grace);
		}
		json_object_set_new(req, "grace", json_integer(secs));
	}
	if (a->name) {
		if (!*a->name || strlen(a->name) >= QJ_NAME_LEN) {
			json_decref(req);
			return qc_fail(q, QX_USAGE, "usage", "--name takes 1 to %d bytes",
			               QJ_NAME_LEN - 1);
		}
		json_object_set_new(req, "name", json_string(a->name));
	}
	if (a->output) {
		if (!*a->output) {
			json_decref(req);
			return qc_fail(q, QX_USAGE, "usage", "--output needs a file");
		}
		json_object_set_new(req, "output", abs_path(a->output, cwd));
	}
	if (a->error) {
		if (!*a->error) {
			json_decref(req);
			return qc_fail(q, QX_USAGE, "usage", "--error needs a file");
		}
		json_object_set_new(req, "error", abs_path(a->error, cwd));
	}
	rc = qc_call(q, req, &resp);
	if (rc != QX_OK)
		return rc;
	id = (uint64_t)jnum0(json_object_get(resp, "job"), "id");
	if (!a->wait) {
		if (q->json)
			qc_print_json(q, resp);
		else if (a->parsable)
			printf("%llu\n", (unsigned long long)id);
		else
			printf("submitted job %llu\n", (unsigned long long)id);
		fflush(stdout);
		json_decref(resp);
		return QX_OK;
	}
	json_decref(resp);
	if (!q->json) {
		if (a->parsable)
			printf("%llu\n", (unsigned long long)id);
		else
			printf("submitted job %llu\n", (unsigned long long)id);
		fflush(stdout);
	}
	if (id == 0)
		return qc_fail(q, QX_FAIL, "internal", "the queue answered without the job's id");
	return submit_wait(q, id);
}

/* --- show, why --- */

static void
kv(struct strbuf *sb, const char *key, const char *val)
{
	char k[32];

	snprintf(k, sizeof(k), "%s:", key);
	strbuf_addf(sb, "%-14s ", k);
	fmt_add_shown(sb, val, strlen(val));
	strbuf_addch(sb, '\n');
}

/* A "label: value" line for a positive number key of j, written by fmt (a time, a size). */
static void
kv_num(struct strbuf *sb, const json_t *j, const char *key, const char *label,
       void (*fmt)(char *, size_t, double))
{
	char buf[64];
	double v;

	if (jnum(j, key, &v) && v > 0) {
		fmt(buf, sizeof(buf), v);
		kv(sb, label, buf);
	}
}

static void
show_job(struct strbuf *sb, const json_t *j)
{
	char buf[8192];
	double v;
	json_t *arr, *x;
	size_t i, len = 0;

	snprintf(buf, sizeof(buf), "%lld", (long long)jnum0(j, "id"));
	kv(sb, "job", buf);
	kv(sb, "name", jstr(j, "name"));
	snprintf(buf, sizeof(buf), "%s (uid %lld)", jstr(j, "user"), (long long)jnum0(j, "uid"));
	kv(sb, "user", buf);
	kv(sb, "state", jstr(j, "state"));
	if (*jstr(j, "reason"))
		kv(sb, "reason", jstr(j, "reason"));
	snprintf(buf, sizeof(buf), "%lld", (long long)jnum0(j, "priority"));
	kv(sb, "priority", buf);
	snprintf(buf, sizeof(buf), "%lld (%s%s%s)", (long long)jnum0(j, "gpus"),
	         !strcmp(jstr(j, "mode"), "default") ? "the default mode" : jstr(j, "mode"),
	         json_is_true(json_object_get(j, "preemptible")) ? ", preemptible" : "",
	         json_is_true(json_object_get(j, "requeue")) ? ", requeued on a lost GPU" : "");
	kv(sb, "gpus", buf);
	kv_num(sb, j, "gpu_mem", "gpu memory", fmt_bytes);
	jlist(j, "gpu_indices", buf, sizeof(buf));
	if (buf[0])
		kv(sb, "on gpus", buf);
	jlist(j, "gpu_uuids", buf, sizeof(buf));
	if (buf[0])
		kv(sb, "gpu uuids", buf);
	if (jnum(j, "time_limit", &v) && v > 0) {
		fmt_duration(buf, sizeof(buf), v);
		kv(sb, "time limit", buf);
	}
	if (jnum(j, "grace", &v) && v > 0) {
		fmt_duration(buf, sizeof(buf), v);
		kv(sb, "grace", buf);
	}
	jlist(j, "after", buf, sizeof(buf));
	if (buf[0])
		kv(sb, "after", buf);
	kv_num(sb, j, "submit_time", "submitted", fmt_stamp);
	kv_num(sb, j, "est_start", "est. start", fmt_stamp);
	kv_num(sb, j, "start_time", "started", fmt_stamp);
	kv_num(sb, j, "end_time", "ended", fmt_stamp);
	if (jnum(j, "exit_code", &v) || jnum(j, "exit_signal", &v)) {
		job_exit(j, buf, sizeof(buf));
		kv(sb, "exit", buf);
	}
	if (jnum(j, "restarts", &v) && v > 0) {
		snprintf(buf, sizeof(buf), "%.0f", v);
		kv(sb, "restarts", buf);
	}
	if (jnum(j, "gpu_seconds", &v) && v > 0) {
		snprintf(buf, sizeof(buf), "%.0f (%.2f GPU-hours)", v, v / 3600);
		kv(sb, "gpu seconds", buf);
	}
	kv_num(sb, j, "peak_gpu_mem", "peak gpu mem", fmt_bytes);
	kv(sb, "cwd", jstr(j, "cwd"));
	arr = json_object_get(j, "argv");
	buf[0] = '\0';
	for (i = 0; i < json_array_size(arr) && (x = json_array_get(arr, i)); i++) {
		const char *s = json_string_value(x);
		bool quote = s && (!*s || strpbrk(s, " \t\"'\\$"));

		if (!s)
			continue;
		len += (size_t)snprintf(buf + len, len < sizeof(buf) ? sizeof(buf) - len : 0,
		                        "%s%s%s%s", len ? " " : "", quote ? "'" : "", s,
		                        quote ? "'" : "");
		if (len >= sizeof(buf))
			break;
	}
	kv(sb, "command", buf);
	if (*jstr(j, "output"))
		kv(sb, "output", jstr(j, "output"));
	if (*jstr(j, "error"))
		kv(sb, "error", jstr(j, "error"));
	arr = json_object_get(j, "events");
	if (json_array_size(arr)) {
		strbuf_addstr(sb, "events:\n");
		for (i = 0; i < json_array_size(arr) && (x = json_array_get(arr, i)); i++) {
			char when[64];

			fmt_stamp(when, sizeof(when), jnum0(x, "time"));
			snprintf(buf, sizeof(buf), "%s %s %s", when, jstr(x, "kind"),
			         jstr(x, "text"));
			strbuf_addstr(sb, "  ");
			fmt_add_shown(sb, buf, strlen(buf));
			strbuf_addch(sb, '\n');
		}
	}
}

static int
one_id(const struct qc *q, const char *s, uint64_t *id)
{
	if (parse_id(s, id) < 0)
		return qc_fail(q, QX_USAGE, "usage", "'%s' is not a job id (a number from 1)", s);
	return QX_OK;
}

static int
q_show(struct qc *q, struct qargs *a)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *resp;
	uint64_t id;
	int rc;

	if ((rc = one_id(q, a->operands[0], &id)) != QX_OK)
		return rc;
	rc = qc_call(q, json_pack("{s:s,s:I}", "op", "show", "job", (json_int_t)id), &resp);
	if (rc != QX_OK)
		return rc;
	if (q->json) {
		qc_print_json(q, resp);
	} else {
		show_job(&sb, json_object_get(resp, "job"));
		rc = write_out(&sb);
	}
	strbuf_release(&sb);
	json_decref(resp);
	return rc;
}

static int
q_why(struct qc *q, struct qargs *a)
{
	struct strbuf sb = STRBUF_INIT;
	char line[QJ_REASON_LEN + 256], when[32], in[32];
	json_t *resp;
	uint64_t id;
	double est;
	int rc;

	if ((rc = one_id(q, a->operands[0], &id)) != QX_OK)
		return rc;
	rc = qc_call(q, json_pack("{s:s,s:I}", "op", "why", "job", (json_int_t)id), &resp);
	if (rc != QX_OK)
		return rc;
	if (q->json) {
		qc_print_json(q, resp);
		json_decref(resp);
		return QX_OK;
	}
	snprintf(line, sizeof(line), "job %llu is %s", (unsigned long long)id, jstr(resp, "state"));
	if (*jstr(resp, "reason"))
		snprintf(line + strlen(line), sizeof(line) - strlen(line), ": %s",
		         jstr(resp, "reason"));
	if (jnum(resp, "est_start", &est) && est > 0) {
		fmt_when(when, sizeof(when), est, q->now);
		fmt_duration(in, sizeof(in), est > q->now ? est - q->now : 0);
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
		         "; estimated start %s (in %s)", when, in);
	}
	fmt_add_shown(&sb, line, strlen(line));
	strbuf_addch(&sb, '\n');
	rc = write_out(&sb);
	strbuf_release(&sb);
	json_decref(resp);
	return rc;
}

/* --- cancel, hold, release --- */

static int
q_act(struct qc *q, struct qargs *a)
{
	const char *done = !strcmp(q->sub, "cancel") ? "cancelled"
	                   : !strcmp(q->sub, "hold") ? "held"
	                                             : "released";
	json_t *req, *ids = json_array(), *resp, *x, *list;
	size_t i;
	int rc;

	for (int k = 0; k < a->nr_operands; k++) {
		if (add_ids(q, q->sub, a->operands[k], ids, 100000) < 0) {
			json_decref(ids);
			return QX_USAGE;
		}
	}
	req = json_pack("{s:s,s:o}", "op", q->sub, "jobs", ids);
	if (req && a->signal) {
		const char *sig = signal_name(a->signal);

		if (!sig) {
			json_decref(req);
			return qc_fail(
			        q, QX_USAGE, "usage",
			        "--signal takes a signal name or number (INT, TERM, KILL, HUP, "
			        "USR1, USR2, ...), not '%s'",
			        a->signal);
		}
		json_object_set_new(req, "signal", json_string(sig));
	}
	rc = qc_call(q, req, &resp);
	if (rc != QX_OK)
		return rc;
	if (q->json)
		qc_print_json(q, resp);
	list = json_object_get(resp, "done");
	for (i = 0; !q->json && i < json_array_size(list); i++)
		printf("%s job %lld\n", done,
		       (long long)json_integer_value(json_array_get(list, i)));
	fflush(stdout);
	list = json_object_get(resp, "failed");
	for (i = 0; i < json_array_size(list) && (x = json_array_get(list, i)); i++) {
		qc_note("job %lld: %s", (long long)jnum0(x, "job"), jstr(x, "error"));
		rc = QX_FAIL;
	}
	json_decref(resp);
	return rc;
}

/*
 * The next line of a stream the daemon sends on fd (logs, events): waits for
 * ever when following, else as long as one call. On QX_OK *msg is the line;
 * otherwise fd is closed and the failure printed.
 */
static int
qc_stream_next(const struct qc *q, int fd, bool follow, json_t **msg)
{
	struct err err = ERR_INIT;
	int rc;

	if (qproto_recv(fd, msg, follow ? -1 : QPROTO_CALL_TIMEOUT_MS, &err) < 0) {
		close(fd);
		return qc_fail(q, QX_UNREACH, "unreachable", "%s", err.msg);
	}
	if (json_is_false(json_object_get(*msg, "ok"))) {
		close(fd);
		rc = qc_refused(q, *msg);
		json_decref(*msg);
		*msg = NULL;
		return rc;
	}
	return QX_OK;
}

/* --- logs --- */

static int
q_logs(struct qc *q, struct qargs *a)
{
	const char *stream = a->err_stream ? "err" : "out";
	long long offset = 0;
	uint64_t id;
	int rc;

	if ((rc = one_id(q, a->operands[0], &id)) != QX_OK)
		return rc;
	for (;;) {
		json_t *req = json_pack("{s:s,s:I,s:s,s:I,s:b}", "op", "logs", "job",
		                        (json_int_t)id, "stream", stream, "offset",
		                        (json_int_t)offset, "follow", a->follow);
		json_t *msg;
		bool eof = false, got = false;
		int fd;

		if ((rc = qc_open(q, req, &fd)) != QX_OK)
			return rc;
		/* one answer, or with --follow a line each time the file grows, then {"eof": true}
		 */
		for (;;) {
			json_t *data;

			if ((rc = qc_stream_next(q, fd, a->follow, &msg)) != QX_OK)
				return rc;
			data = json_object_get(msg, "data");
			if (q->json) {
				struct qc c = *q;

				c.compact = q->compact || a->follow;
				qc_print_json(&c, msg);
			} else if (json_is_string(data) && json_string_length(data)) {
				fwrite(json_string_value(data), 1, json_string_length(data),
				       stdout);
				fflush(stdout);
			}
			if (json_is_string(data) && json_string_length(data))
				got = true;
			if (json_is_number(json_object_get(msg, "offset")))
				offset = (long long)json_number_value(
				        json_object_get(msg, "offset"));
			eof = json_is_true(json_object_get(msg, "eof"));
			json_decref(msg);
			if (!a->follow || eof)
				break;
		}
		close(fd);
		/* without --follow, a long file comes in pieces: ask for the next until its end */
		if (a->follow || eof || !got || q->json)
			break;
	}
	if (ferror(stdout))
		return qc_fail(q, QX_FAIL, "internal", "cannot write the output");
	return QX_OK;
}

/* --- history --- */

static int
q_history(struct qc *q, struct qargs *a)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *req, *resp, *jobs, *j;
	struct term t;
	double since;
	long limit;
	size_t i;
	bool tty;
	int rc;

	req = json_pack("{s:s,s:b}", "op", "history", "all", a->all || a->user);
	if (a->user)
		json_object_set_new(req, "user", json_string(a->user));
	if (a->since) {
		if (cmd_parse_time(a->since, 0, q->now, &since) < 0) {
			json_decref(req);
			return qc_fail(
			        q, QX_USAGE, "usage",
			        "--since takes a time (epoch seconds, 2026-11-30T03:00[:SS][Z], "
			        "03:00, -2h), not '%s'",
			        a->since);
		}
		json_object_set_new(req, "since", json_integer((json_int_t)since));
	}
	if (a->limit) {
		if (parse_long(a->limit, 1, 1000000, &limit) < 0) {
			json_decref(req);
			return qc_fail(q, QX_USAGE, "usage",
			               "-n takes a whole number from 1 to 1000000, not '%s'",
			               a->limit);
		}
		json_object_set_new(req, "limit", json_integer(limit));
	}
	rc = qc_call(q, req, &resp);
	if (rc != QX_OK)
		return rc;
	if (q->json) {
		qc_print_json(q, resp);
		json_decref(resp);
		return QX_OK;
	}
	tty = isatty(STDOUT_FILENO);
	term_detect(&t, STDOUT_FILENO, COLOR_AUTO);
	fmt_styled(&sb, &t, ST_BOLD,
	           " JOBID USER     NAME       STATE     EXIT  GPUS  ENDED          TIME REASON");
	strbuf_addch(&sb, '\n');
	jobs = json_object_get(resp, "jobs");
	for (i = 0; i < json_array_size(jobs) && (j = json_array_get(jobs, i)); i++) {
		char id[24], ex[16], gpus[64], end[32], tm[16];

		snprintf(id, sizeof(id), "%lld", (long long)jnum0(j, "id"));
		job_exit(j, ex, sizeof(ex));
		job_gpus(j, gpus, sizeof(gpus));
		fmt_when(end, sizeof(end), jnum0(j, "end_time"), q->now);
		job_time(j, q->now, tm, sizeof(tm));
		cell(&sb, id, 6, true, &t);
		cell(&sb, jstr(j, "user"), 8, false, &t);
		cell(&sb, jstr(j, "name"), 10, false, &t);
		cell(&sb, jstr(j, "state"), 9, false, &t);
		cell(&sb, ex, 5, false, &t);
		cell(&sb, gpus, 5, false, &t);
		cell(&sb, end, 11, false, &t);
		cell(&sb, tm, 8, true, &t);
		last_cell(&sb, jstr(j, "reason"), 70, &t, tty);
	}
	rc = write_out(&sb);
	strbuf_release(&sb);
	json_decref(resp);
	return rc;
}

/* --- events --- */

static void
event_line(struct strbuf *sb, const json_t *e)
{
	char when[64], line[2048], job[32];
	double id = jnum0(e, "job");

	fmt_stamp(when, sizeof(when), jnum0(e, "time"));
	if (id > 0)
		snprintf(job, sizeof(job), "job %.0f", id);
	else
		snprintf(job, sizeof(job), "-");
	snprintf(line, sizeof(line), "%s %6lld %-8s %-8s %-12s %s", when, (long long)jnum0(e, "id"),
	         job, *jstr(e, "user") ? jstr(e, "user") : "-", jstr(e, "kind"), jstr(e, "text"));
	fmt_add_shown(sb, line, strlen(line));
	strbuf_addch(sb, '\n');
}

static int
q_events(struct qc *q, struct qargs *a)
{
	long after = 0;
	json_t *req, *msg;
	int fd, rc;

	if (a->after && parse_long(a->after, 0, LONG_MAX, &after) < 0)
		return qc_fail(q, QX_USAGE, "usage",
		               "--after takes an event id (a whole number), not '%s'", a->after);
	req = json_pack("{s:s,s:I,s:b}", "op", "events", "after", (json_int_t)after, "follow",
	                a->follow);
	if ((rc = qc_open(q, req, &fd)) != QX_OK)
		return rc;
	for (;;) {
		json_t *ev, *ok;

		if ((rc = qc_stream_next(q, fd, a->follow, &msg)) != QX_OK)
			return rc;
		ok = json_object_get(msg, "ok");
		ev = json_object_get(msg, "event");
		if (json_is_object(ev)) {
			if (q->json) {
				struct qc c = *q;

				c.compact = true; /* one line per event */
				qc_print_json(&c, ev);
			} else {
				struct strbuf sb = STRBUF_INIT;

				event_line(&sb, ev);
				rc = write_out(&sb);
				strbuf_release(&sb);
				if (rc != QX_OK) {
					json_decref(msg);
					close(fd);
					return rc;
				}
			}
		}
		/* without --follow the answer ends with {"ok": true, "last": ID} */
		if (json_is_true(ok) && !a->follow) {
			json_decref(msg);
			break;
		}
		json_decref(msg);
	}
	close(fd);
	return QX_OK;
}

/* --- admin and ping --- */

static int
q_admin(struct qc *q, struct qargs *a)
{
	json_t *req = json_pack("{s:s}", "op", q->sub), *resp;
	const char *gpu = a->nr_operands ? a->operands[0] : NULL;
	int rc;

	if (req && gpu)
		json_object_set_new(req, "gpu", json_string(gpu));
	if (req && a->reason)
		json_object_set_new(req, "reason", json_string(a->reason));
	rc = qc_call(q, req, &resp);
	if (rc != QX_OK)
		return rc;
	if (q->json) {
		qc_print_json(q, resp);
	} else if (*jstr(resp, "message")) {
		printf("%s\n", jstr(resp, "message"));
	} else if (gpu) {
		printf("GPU %s: %s\n", gpu,
		       !strcmp(q->sub, "drain")    ? "drained: nothing new starts on it"
		       : !strcmp(q->sub, "resume") ? "resumed: jobs may start on it"
		                                   : "cleaned: it may be given out again");
	} else {
		printf("%s\n", !strcmp(q->sub, "pause") ? "the queue is paused: nothing new starts"
		               : !strcmp(q->sub, "unpause") ? "the queue is running again"
		                                            : "the configuration was read again");
	}
	fflush(stdout);
	json_decref(resp);
	return QX_OK;
}

static int
q_ping(struct qc *q, struct qargs *a)
{
	json_t *resp;
	int rc;

	(void)a;
	rc = qc_call(q, json_pack("{s:s}", "op", "ping"), &resp);
	if (rc != QX_OK)
		return rc;
	if (q->json)
		qc_print_json(q, resp);
	else
		printf("gpuscope queued %s at %s: you are uid %lld%s\n", jstr(resp, "version"),
		       q->socket, (long long)jnum0(resp, "uid"),
		       json_is_true(json_object_get(resp, "admin")) ? ", an admin" : "");
	fflush(stdout);
	json_decref(resp);
	return QX_OK;
}

/* --- the command line --- */

#define QUSAGE_SUBMIT                                                                    \
	"submit [--gpus N | --gpu-mem SIZE | --gpu UUID,...] [--exclusive | --shared]\n" \
	"                [--priority P] [--after JOB,...] [--preemptible] [--requeue]\n" \
	"                [--time LIMIT] [--grace SEC] [--name NAME] [--output FILE]\n"   \
	"                [--error FILE] [--hold] [--wait] [--parsable] [--] COMMAND...\n"

static const struct qsub qsubs[] = {
	{ "ls", q_ls, "a", 0, 0, "[ls] [--all | --me | -u USER] [--state STATE,...]\n" },
	{ "submit", q_submit, "s", 1, INT_MAX, QUSAGE_SUBMIT },
	{ "show", q_show, "", 1, 1, "show JOB\n" },
	{ "why", q_why, "", 1, 1, "why JOB\n" },
	{ "logs", q_logs, "l", 1, 1, "logs [-f] [--err] JOB\n" },
	{ "cancel", q_act, "c", 1, INT_MAX, "cancel JOB... [--signal SIG]\n" },
	{ "hold", q_act, "", 1, INT_MAX, "hold JOB...\n" },
	{ "release", q_act, "", 1, INT_MAX, "release JOB...\n" },
	{ "history", q_history, "y", 0, 0, "history [--all] [-u USER] [--since TIME] [-n N]\n" },
	{ "events", q_events, "e", 0, 0, "events [-f] [--after ID]\n" },
	{ "drain", q_admin, "d", 1, 1, "drain GPU [--reason TEXT]\n" },
	{ "resume", q_admin, "", 1, 1, "resume GPU\n" },
	{ "clean", q_admin, "", 1, 1, "clean GPU\n" },
	{ "pause", q_admin, "", 0, 0, "pause\n" },
	{ "unpause", q_admin, "", 0, 0, "unpause\n" },
	{ "reload", q_admin, "", 0, 0, "reload\n" },
	{ "ping", q_ping, "", 0, 0, "ping\n" },
};

/* Which options each group of subcommands takes (the group letters of qsubs[].opts). */
static bool
takes(const struct qsub *s, int c)
{
	const char *g = s->opts;

	switch (c) {
	case O_SOCKET:
	case O_JSON:
	case O_COMPACT:
	case O_HELP:
		return true;
	case O_ALL:
		return strchr(g, 'a') || strchr(g, 'y');
	case O_ME:
	case O_STATE:
		return strchr(g, 'a');
	case O_USER:
		return strchr(g, 'a') || strchr(g, 'y');
	case O_GPUS:
	case O_GPUMEM:
	case O_GPU:
	case O_EXCL:
	case O_SHARED:
	case O_PRIO:
	case O_PREEMPT:
	case O_REQUEUE:
	case O_TIME:
	case O_GRACE:
	case O_NAME:
	case O_OUTPUT:
	case O_ERROR:
	case O_HOLD:
	case O_WAIT:
	case O_PARSABLE:
		return strchr(g, 's');
	case O_AFTER:
		return strchr(g, 's') || strchr(g, 'e');
	case O_FOLLOW:
		return strchr(g, 'l') || strchr(g, 'e');
	case O_ERR:
		return strchr(g, 'l');
	case O_SIGNAL:
		return strchr(g, 'c');
	case O_SINCE:
	case O_LIMIT:
		return strchr(g, 'y');
	case O_REASON:
		return strchr(g, 'd');
	}
	return false;
}

static void
queue_usage(FILE *f)
{
	fputs("usage: gpuscope queue [--socket PATH] [--json [--compact]] COMMAND [options]\n"
	      "commands:\n",
	      f);
	for (size_t i = 0; i < sizeof(qsubs) / sizeof(qsubs[0]); i++)
		fprintf(f, "  %s", qsubs[i].usage);
	fputs("options:\n"
	      "      --socket=PATH   the daemon's socket (default $GPUSCOPE_QUEUE_SOCKET, else\n"
	      "                      " QPROTO_DEFAULT_SOCKET ")\n"
	      "  -j, --json          the daemon's answer as JSON; --compact: on one line\n"
	      "ls: -a, --all (everyone's, the default), --me (mine), -u, --user=USER,\n"
	      "    --state=STATE,... (queued, held, running, ..., active)\n"
	      "submit: --gpus=N GPUs (0: none; default 1), --gpu-mem=SIZE per GPU (alone:\n"
	      "    one GPU, shared), --gpu=UUID,... exactly these (UUIDs, prefixes, indices),\n"
	      "    --exclusive | --shared, -p, --priority=P, --after=JOB,... (once they end),\n"
	      "    --preemptible, --requeue (on a lost GPU), -t, --time=LIMIT (90, 10m, 2h,\n"
	      "    1:30:00), --grace=SEC, --name=NAME, -o, --output=FILE, -e, --error=FILE,\n"
	      "    --hold, --wait (exit with the job's status), --parsable (the id alone)\n"
	      "logs: -f, --follow until the job ends, --err (its standard error)\n"
	      "cancel: -s, --signal=SIG (default TERM, then KILL after the grace)\n"
	      "history: --all, -u, --user=USER, --since=TIME (epoch, ISO, 03:00, -2h),\n"
	      "    -n, --limit=N\n"
	      "events: -f, --follow, --after=ID\n"
	      "drain: --reason=TEXT; drain, resume, clean, pause, unpause, reload: admins only\n"
	      "exit status: 0 ok, 1 refused or failed, 2 usage error, 3 the daemon cannot be\n"
	      "reached (submit --wait: the job's own)\n"
	      "see docs/queue.md and gpuscope(1)\n",
	      f);
}

static void
sub_usage(const struct qsub *s, FILE *f)
{
	fprintf(f, "usage: gpuscope queue %s", s->usage);
	fputs("run 'gpuscope queue --help' for every option\n", f);
}

static int
run_sub(struct qc *q, const struct qsub *s, int argc, char **argv)
{
	struct qargs a = { 0 };
	/* submit stops at its COMMAND; the others take options anywhere */
	const char *shorts = !strcmp(s->name, "submit") ? "+:jhp:t:o:e:" : ":jhau:fs:n:";
	int c, rc;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, qopts, NULL)) != -1) {
		if (c == ':' || c == '?') {
			const char *what = optind > 0 ? argv[optind - 1] : "?";

			if (c == ':')
				rc = qc_fail(q, QX_USAGE, "usage", "option '%s' needs a value",
				             what);
			else
				rc = qc_fail(q, QX_USAGE, "usage",
				             "unknown option '%s' for 'queue %s'", what, s->name);
			sub_usage(s, stderr);
			return rc;
		}
		if (!takes(s, c)) {
			const char *name = "?";

			for (const struct option *o = qopts; o->name; o++)
				if (o->val == c)
					name = o->name;
			rc = qc_fail(q, QX_USAGE, "usage", "'queue %s' takes no option --%s",
			             s->name, name);
			sub_usage(s, stderr);
			return rc;
		}
		switch (c) {
		case O_SOCKET:
			q->socket = optarg;
			break;
		case O_JSON:
			q->json = true;
			break;
		case O_COMPACT:
			q->compact = true;
			break;
		case O_HELP:
			sub_usage(s, stdout);
			return QX_OK;
		case O_ALL:
			a.all = true;
			break;
		case O_ME:
			a.me = true;
			break;
		case O_USER:
			a.user = optarg;
			break;
		case O_STATE:
			a.state = optarg;
			break;
		case O_GPUS:
			a.gpus = optarg;
			break;
		case O_GPUMEM:
			a.gpu_mem = optarg;
			break;
		case O_GPU:
			a.gpu = optarg;
			break;
		case O_EXCL:
			a.excl = true;
			break;
		case O_SHARED:
			a.shared = true;
			break;
		case O_PRIO:
			a.prio = optarg;
			break;
		case O_AFTER:
			if (a.after && !strcmp(s->name, "submit")) {
				/* --after given twice: both lists */
				snprintf(a.after_buf, sizeof(a.after_buf), "%s,%s", a.after,
				         optarg);
				a.after = a.after_buf;
			} else {
				a.after = optarg;
			}
			break;
		case O_PREEMPT:
			a.preempt = true;
			break;
		case O_REQUEUE:
			a.requeue = true;
			break;
		case O_TIME:
			a.time = optarg;
			break;
		case O_GRACE:
			a.grace = optarg;
			break;
		case O_NAME:
			a.name = optarg;
			break;
		case O_OUTPUT:
			a.output = optarg;
			break;
		case O_ERROR:
			a.error = optarg;
			break;
		case O_HOLD:
			a.hold = true;
			break;
		case O_WAIT:
			a.wait = true;
			break;
		case O_PARSABLE:
			a.parsable = true;
			break;
		case O_FOLLOW:
			a.follow = true;
			break;
		case O_ERR:
			a.err_stream = true;
			break;
		case O_SIGNAL:
			a.signal = optarg;
			break;
		case O_SINCE:
			a.since = optarg;
			break;
		case O_LIMIT:
			a.limit = optarg;
			break;
		case O_REASON:
			a.reason = optarg;
			break;
		}
	}
	a.operands = argv + optind;
	a.nr_operands = argc - optind;
	q->socket = qproto_socket_path(q->socket);
	if (a.nr_operands < s->min_ops || a.nr_operands > s->max_ops) {
		if (a.nr_operands > s->max_ops)
			rc = qc_fail(q, QX_USAGE, "usage", "unexpected argument '%s'",
			             a.operands[s->max_ops]);
		else if (!strcmp(s->name, "submit"))
			rc = qc_fail(q, QX_USAGE, "usage", "submit needs a COMMAND to run");
		else
			rc = qc_fail(q, QX_USAGE, "usage", "'queue %s' needs %s", s->name,
			             strstr(s->usage, "GPU") ? "a GPU" : "a job id");
		sub_usage(s, stderr);
		return rc;
	}
	return s->run(q, &a);
}

int
cmd_queue(int argc, char **argv, struct gs_config *cfg)
{
	struct qc q = { 0 };
	const struct qsub *s = NULL;
	char **args;
	int i, n = 0, rc;

	q.now = cfg && cfg->fixed_time > 0 ? cfg->fixed_time : (double)time(NULL);
	/* the options before the subcommand (--socket, --json, --compact) are every command's */
	args = xcalloc((size_t)argc + 1, sizeof(*args));
	args[n++] = argv[0];
	for (i = 1; i < argc; i++) {
		const char *x = argv[i];

		if (!strcmp(x, "--socket") && i + 1 < argc) {
			args[n++] = argv[i++];
			args[n++] = argv[i];
		} else if (!strncmp(x, "--socket=", 9) || !strcmp(x, "--json") ||
		           !strcmp(x, "-j") || !strcmp(x, "--compact")) {
			args[n++] = argv[i];
		} else if (!strcmp(x, "--help") || !strcmp(x, "-h") || !strcmp(x, "help")) {
			queue_usage(stdout);
			free(args);
			return QX_OK;
		} else {
			break;
		}
	}
	if (i < argc && argv[i][0] != '-') {
		for (size_t k = 0; k < sizeof(qsubs) / sizeof(qsubs[0]); k++)
			if (!strcmp(argv[i], qsubs[k].name))
				s = &qsubs[k];
		if (!s) {
			for (int k = 1; k < n; k++)
				if (!strcmp(args[k], "--json") || !strcmp(args[k], "-j"))
					q.json = true;
			rc = qc_fail(
			        &q, QX_USAGE, "usage",
			        "'%s' is not a queue command (commands: ls, submit, show, why, logs, "
			        "cancel, hold, release, history, events, drain, resume, clean, pause, "
			        "unpause, reload, ping); see 'gpuscope queue --help'",
			        argv[i]);
			free(args);
			return rc;
		}
		i++;
	} else {
		s = &qsubs[0]; /* gpuscope queue [options]: ls */
	}
	q.sub = s->name;
	for (; i < argc; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	rc = run_sub(&q, s, n, args);
	free(args);
	return rc;
}
