/*
 * What the subcommands share: error lines and taking one snapshot.
 */
#include "cmd/cmd.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/collect.h"
#include "backend/feed.h"
#include "cmd/jsonerr.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "record/replay.h"

void
cmd_error(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("gpuscope: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (jsonerr_on()) {
		char *msg;

		va_start(ap, fmt);
		msg = xstrvfmt(fmt, ap);
		va_end(ap);
		jsonerr_note(msg);
		free(msg);
	}
}

int
cmd_output(const struct strbuf *out, const struct gpu_snapshot *snap)
{
	if (fwrite(out->buf, 1, out->len, stdout) != out->len || fflush(stdout) != 0) {
		cmd_error("cannot write the output: %s", strerror(errno));
		return EXIT_RUNTIME;
	}
	/* a suspended GPU is saving power, not in trouble */
	for (size_t i = 0; i < snap->nr_dev; i++)
		if (snap->dev[i].state != DEV_OK && snap->dev[i].state != DEV_SUSPENDED)
			return EXIT_PROBLEMS;
	return EXIT_OK;
}

/*
 * A driver can hang in its initialisation (nvmlInit, or the first call on a
 * GPU that has gone bad), where no per-GPU thread can help: a watchdog ends
 * the program with a clear message instead of leaving the user waiting.
 */
struct watchdog {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
	double seconds;
	pthread_t thread;
};

static void *
watchdog_main(void *arg)
{
	struct watchdog *w = arg;
	double deadline = clock_mono() + w->seconds;
	struct timespec ts;

	pthread_mutex_lock(&w->mu);
	while (!w->done) {
		if (clock_mono() >= deadline) {
			cmd_error(
			        "the GPU driver did not answer within %.1f s while starting (nvmlInit and the first reading of each GPU): it may be hung; look for Xid or 'fallen off the bus' lines in the kernel log ('sudo dmesg')",
			        w->seconds);
			jsonerr_exit(EXIT_RUNTIME); /* with --json, its document first */
		}
		clock_mono_timespec(&ts, deadline);
		pthread_cond_timedwait(&w->cv, &w->mu, &ts);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static bool
watchdog_start(struct watchdog *w, double seconds)
{
	pthread_condattr_t ca;

	w->done = false;
	w->seconds = seconds;
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	return pthread_create(&w->thread, NULL, watchdog_main, w) == 0;
}

static void
watchdog_stop(struct watchdog *w, bool started)
{
	if (started) {
		pthread_mutex_lock(&w->mu);
		w->done = true;
		pthread_cond_signal(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
	}
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
}

/*
 * EXIT_USAGE, after saying so, when ids (-i / --id) is given but names no GPU
 * ("", ",", " , "): selecting nothing would make a health check fed an empty
 * variable pass on no GPU at all. EXIT_OK otherwise (NULL: every GPU).
 */
static int
check_ids(const char *ids)
{
	if (!ids)
		return EXIT_OK;
	for (const char *p = ids; *p; p++)
		if (*p != ',' && !isspace((unsigned char)*p))
			return EXIT_OK;
	cmd_error("-i/--id '%s' names no GPU: give indexes, UUIDs or PCI bus ids (-i 0,1), or "
	          "leave -i out for every GPU",
	          ids);
	return EXIT_USAGE;
}

static int
open_collector(struct gs_config *cfg, const char *ids, bool allow_none, struct collector **out)
{
	struct err err = ERR_INIT;
	struct collector *c = NULL;
	struct watchdog w;
	bool watching;
	int rc = EXIT_OK;

	*out = NULL;
	if (check_ids(ids) != EXIT_OK)
		return EXIT_USAGE;
	/* starting a driver without persistence mode legitimately takes seconds */
	watching = watchdog_start(&w, CMD_START_TIMEOUT_FACTOR * cfg->timeout);
	if (collector_open(cfg, &c, &err) < 0) {
		watchdog_stop(&w, watching);
		cmd_error("%s", err.msg);
		return EXIT_RUNTIME;
	}
	collector_scan(c, &err);
	watchdog_stop(&w, watching);
	if (!collector_count(c)) {
		const char *const *why = collector_reasons(c);
		const char *also = allow_none ? "; going on without" : "";

		if (!why[0])
			cmd_error("no GPU found%s", also);
		for (size_t i = 0; why[i]; i++)
			cmd_error("no GPU found: %s%s", why[i], also);
		rc = allow_none ? EXIT_OK : EXIT_NOGPU;
	} else if (collector_select(c, ids, &err) < 0) {
		cmd_error("%s", err.msg);
		rc = EXIT_USAGE;
	}
	if (rc != EXIT_OK)
		collector_close(c);
	else
		*out = c;
	return rc;
}

int
cmd_open_collector(struct gs_config *cfg, const char *ids, struct collector **out)
{
	return open_collector(cfg, ids, false, out);
}

int
cmd_open_collector_any(struct gs_config *cfg, const char *ids, struct collector **out)
{
	return open_collector(cfg, ids, true, out);
}

int
cmd_open_feed(struct gs_config *cfg, const char *ids, bool procs, double interval,
              struct feed **out)
{
	struct err err = ERR_INIT;
	struct collector *c;
	int rc;

	*out = NULL;
	if (check_ids(ids) != EXIT_OK)
		return EXIT_USAGE;
	if (cfg->replay) {
		if (feed_open_replay(cfg->replay, ids, cfg->replay_speed, cfg->replay_from, out,
		                     &err) < 0) {
			cmd_error("%s", err.msg);
			return err.code == E_USAGE ? EXIT_USAGE : EXIT_RUNTIME;
		}
		return EXIT_OK;
	}
	rc = cmd_open_collector(cfg, ids, &c);
	if (rc == EXIT_OK)
		*out = feed_new_live(c, procs, interval);
	return rc;
}

/* One sample of a recording (gpuscope replay FILE status --at TIME). */
static int
replay_snapshot(struct gs_config *cfg, const char *ids, unsigned flags, struct gpu_snapshot *snap)
{
	struct err err = ERR_INIT;
	struct feed *f;
	int rc = cmd_open_feed(cfg, ids, true, 1.0, &f);

	if (rc != EXIT_OK)
		return rc;
	rc = feed_next(f, snap, &err);
	if (rc < 0) {
		cmd_error("%s", err.msg);
		rc = EXIT_RUNTIME;
	} else if (rc == FEED_END) {
		cmd_error("'%s' has no sample at that time", cfg->replay);
		rc = EXIT_RUNTIME;
	} else if (!(flags & SNAP_PROCS)) {
		for (size_t i = 0; i < snap->nr_proc; i++)
			gpu_proc_release(&snap->proc[i]);
		snap->nr_proc = 0;
	}
	feed_close(f);
	return rc;
}

/* cmd_snapshot()'s collector, closed by cmd_close_deferred() */
static struct collector *deferred;

int
cmd_snapshot(struct gs_config *cfg, const char *ids, unsigned flags, struct gpu_snapshot *snap)
{
	struct err err = ERR_INIT;
	struct collector *c;
	int rc;

	if (cfg->replay)
		return replay_snapshot(cfg, ids, flags, snap);
	rc = cmd_open_collector(cfg, ids, &c);
	if (rc != EXIT_OK)
		return rc;
	if (collector_sample(c, snap, COLLECT_WINDOW | ((flags & SNAP_PROCS) ? COLLECT_PROCS : 0),
	                     &err) < 0) {
		cmd_error("%s", err.msg);
		rc = EXIT_RUNTIME;
	}
	/* closed after the output is out: a driver's shutdown can take its time */
	cmd_close_deferred();
	deferred = c;
	return rc;
}

void
cmd_close_deferred(void)
{
	collector_close(deferred);
	deferred = NULL;
}

int
cmd_parse_seconds(const char *s, double *out)
{
	static const struct {
		const char *suffix;
		double scale;
	} units[] = {
		{ "", 1 },     { "s", 1 },    { "ms", 0.001 }, { "m", 60 },
		{ "min", 60 }, { "h", 3600 }, { "d", 86400 },
	};
	char *end;
	double v;

	if (!s || !*s || (*s != '.' && (*s < '0' || *s > '9')))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !isfinite(v))
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].suffix)) {
			*out = v * units[i].scale;
			return 0;
		}
	}
	return -1;
}

int
cmd_parse_count(const char *opt, const char *arg, unsigned long min, unsigned long max,
                unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < min || v > max) {
		cmd_error("%s takes a whole number from %lu to %lu, not '%s'", opt, min, max, arg);
		return -1;
	}
	*out = v;
	return 0;
}

int
cmd_parse_size(const char *s, uint64_t *out)
{
	char *end;
	double v, scale = 1;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !isfinite(v))
		return -1;
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		scale = 1024.0;
		break;
	case 'm':
	case 'M':
		scale = 1024.0 * 1024;
		break;
	case 'g':
	case 'G':
		scale = 1024.0 * 1024 * 1024;
		break;
	default:
		return -1;
	}
	if (*end) {
		end++;
		/* "64M", "64MB", "64MiB" all mean 64 * 2^20 */
		if (*end == 'i')
			end++;
		if (*end == 'B' || *end == 'b')
			end++;
	}
	if (*end || v * scale >= 18e18)
		return -1;
	*out = (uint64_t)(v * scale);
	return 0;
}

/*
 * Ending a command that runs until stopped (watch, record) in order: the
 * signals are blocked in every thread and one thread waits for them, so a
 * Ctrl-C never lands in the middle of a write, and the feed's wait is cut
 * short so that the command notices at once.
 */
static struct {
	pthread_mutex_t mu;
	struct feed *feed; /* to wake; NULL once it is closed */
	bool armed;        /* cmd_stop_feed() was called: a signal asks, it does not end */
	volatile int signo;
} stopper = { PTHREAD_MUTEX_INITIALIZER, NULL, false, 0 };

static void *
stopper_main(void *arg)
{
	sigset_t *set = arg;
	int signo = 0;

	while (sigwait(set, &signo) == 0) {
		pthread_mutex_lock(&stopper.mu);
		if (!stopper.armed) {
			/* still starting: nothing to finish, end now as the signal would have */
			pthread_mutex_unlock(&stopper.mu);
			_exit(128 + signo);
		}
		__atomic_store_n(&stopper.signo, signo, __ATOMIC_SEQ_CST);
		if (stopper.feed)
			feed_wake(stopper.feed);
		pthread_mutex_unlock(&stopper.mu);
	}
	return NULL;
}

void
cmd_stop_on_signals(void)
{
	static sigset_t set;
	pthread_t t;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pthread_create(&t, NULL, stopper_main, &set) == 0) {
		pthread_detach(t);
	} else {
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	}
}

void
cmd_stop_feed(struct feed *f)
{
	pthread_mutex_lock(&stopper.mu);
	stopper.feed = f;
	stopper.armed = true;
	pthread_mutex_unlock(&stopper.mu);
}

int
cmd_stopped(void)
{
	return __atomic_load_n(&stopper.signo, __ATOMIC_SEQ_CST);
}

int
cmd_set_timeout(struct gs_config *cfg, const char *arg)
{
	double v;

	if (cmd_parse_seconds(arg, &v) < 0 || v <= 0 || v > 3600) {
		cmd_error("--timeout takes seconds between 0 and 3600, not '%s'", arg);
		return -1;
	}
	cfg->timeout = v;
	return 0;
}

int
cmd_bad_option(int c, char **argv, void (*usage)(FILE *f))
{
	if (c == ':')
		cmd_error("option '%s' needs a value", argv[optind - 1]);
	else
		cmd_error("unknown option '%s'", argv[optind - 1]);
	usage(stderr);
	return EXIT_USAGE;
}

static int
parse_color(const char *arg, enum color_mode *color)
{
	if (!strcmp(arg, "auto"))
		*color = COLOR_AUTO;
	else if (!strcmp(arg, "always"))
		*color = COLOR_ALWAYS;
	else if (!strcmp(arg, "never"))
		*color = COLOR_NEVER;
	else
		return -1;
	return 0;
}

int
cmd_common_option(int c, char **argv, struct gs_config *cfg, enum color_mode *color,
                  void (*usage)(FILE *f))
{
	switch (c) {
	case CMD_OPT_COLOR:
		if (!color)
			break;
		if (parse_color(optarg, color) < 0) {
			cmd_error("--color takes 'auto', 'always' or 'never', not '%s'", optarg);
			return EXIT_USAGE;
		}
		return CMD_NEXT_OPTION;
	case CMD_OPT_TIMEOUT:
		if (cmd_set_timeout(cfg, optarg) < 0)
			return EXIT_USAGE;
		return CMD_NEXT_OPTION;
	case 'h':
		usage(stdout);
		return EXIT_OK;
	}
	return cmd_bad_option(c, argv, usage);
}

int
cmd_no_operands(int argc, char **argv, void (*usage)(FILE *f))
{
	if (optind >= argc)
		return EXIT_OK;
	cmd_error("unexpected argument '%s'", argv[optind]);
	usage(stderr);
	return EXIT_USAGE;
}

/* --- times of a recording (replay --from/--at, doctor --since) --- */

/* Parse n digits into *v; returns the end, or NULL. */
static const char *
digits(const char *s, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return NULL;
		*v = *v * 10 + (s[i] - '0');
	}
	return s + n;
}

/* "HH:MM" or "HH:MM:SS" (seconds may have a fraction): seconds into the day, or -1. */
static double
parse_clock(const char *s, const char **end)
{
	int h, m, sec = 0;
	double frac = 0;

	if (!(s = digits(s, 2, &h)) || *s++ != ':' || !(s = digits(s, 2, &m)))
		return -1;
	if (*s == ':') {
		if (!(s = digits(s + 1, 2, &sec)))
			return -1;
		if (*s == '.') {
			char *e;

			frac = strtod(s, &e);
			s = e;
		}
	}
	if (h > 23 || m > 59 || sec > 60)
		return -1;
	*end = s;
	return h * 3600.0 + m * 60.0 + sec + frac;
}

int
cmd_parse_time(const char *s, double first, double last, double *out)
{
	const char *end;
	double v, day;

	if (*s == '-' || *s == '+') {
		if (cmd_parse_seconds(s + 1, &v) < 0)
			return -1;
		*out = *s == '-' ? last - v : first + v;
		return 0;
	}
	if (strlen(s) >= 10 && s[4] == '-' && s[7] == '-') {
		/* an ISO 8601 date and time, local unless it ends in Z */
		struct tm tm = { 0 };
		time_t t;

		if (!digits(s, 4, &tm.tm_year) || !digits(s + 5, 2, &tm.tm_mon) ||
		    !digits(s + 8, 2, &tm.tm_mday) || (s[10] != 'T' && s[10] != ' '))
			return -1;
		v = parse_clock(s + 11, &end);
		if (v < 0 || (*end && strcmp(end, "Z")))
			return -1;
		tm.tm_year -= 1900;
		tm.tm_mon -= 1;
		tm.tm_isdst = -1;
		t = *end == 'Z' ? timegm(&tm) : mktime(&tm);
		if (t == (time_t)-1)
			return -1;
		*out = (double)t + v;
		return 0;
	}
	if (strlen(s) >= 5 && s[2] == ':') {
		/* a time of day: the last such moment at or before the recording's end */
		struct tm tm;
		time_t t = (time_t)last;

		v = parse_clock(s, &end);
		if (v < 0 || *end || !localtime_r(&t, &tm))
			return -1;
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		tm.tm_isdst = -1;
		day = (double)mktime(&tm);
		*out = day + v;
		if (*out > last + 0.5) {
			/* yesterday's, by the calendar (a day may not be 86400 s) */
			tm.tm_mday -= 1;
			tm.tm_isdst = -1;
			*out = (double)mktime(&tm) + v;
		}
		return 0;
	}
	if (cmd_parse_seconds(s, &v) == 0 && strspn(s, "0123456789.") == strlen(s) && v > 1e8) {
		*out = v;
		return 0;
	}
	return -1;
}
