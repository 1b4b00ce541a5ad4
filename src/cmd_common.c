/*
 * What the subcommands share: error lines and taking one snapshot.
 */
#include "cmd.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/collect.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"

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
			_exit(EXIT_RUNTIME);
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

int
cmd_snapshot(struct gs_config *cfg, const char *ids, unsigned flags, struct gpu_snapshot *snap)
{
	struct err err = ERR_INIT;
	struct collector *c = NULL;
	struct watchdog w;
	bool watching;
	int rc = EXIT_OK;

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

		if (!why[0])
			cmd_error("no GPU found");
		for (size_t i = 0; why[i]; i++)
			cmd_error("no GPU found: %s", why[i]);
		rc = EXIT_NOGPU;
		goto out;
	}
	if (collector_select(c, ids, &err) < 0) {
		cmd_error("%s", err.msg);
		rc = EXIT_USAGE;
		goto out;
	}
	if (collector_sample(c, snap, COLLECT_WINDOW | ((flags & SNAP_PROCS) ? COLLECT_PROCS : 0),
	                     &err) < 0) {
		cmd_error("%s", err.msg);
		rc = EXIT_RUNTIME;
	}
out:
	collector_close(c);
	return rc;
}
