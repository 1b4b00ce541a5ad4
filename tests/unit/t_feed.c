/*
 * Tests of the live feed (backend/feed.c) on the fake NVML library: samples
 * come one interval apart, feed_wake() cuts a wait short, and a new
 * interval moves a wait already under way. The bounds are generous (seconds
 * against intervals of a minute): they tell "now" from "a minute later", not
 * how fast a machine is.
 *
 * Needs the fake library: GPUSCOPE_NVML, or build/fakenvml (O=...).
 */
#include "backend/feed.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "backend/collect.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/err.h"
#include "core/gpu.h"
#include "harness.h"

struct later {
	struct feed *f;
	double after;    /* seconds */
	double interval; /* > 0: feed_set_interval(), else feed_wake() */
};

static void *
later_main(void *arg)
{
	struct later *l = arg;

	usleep((useconds_t)(l->after * 1e6));
	if (l->interval > 0)
		feed_set_interval(l->f, l->interval);
	else
		feed_wake(l->f);
	return NULL;
}

/* Seconds feed_next() took, with what happens after `after` seconds on another thread. */
static double
timed_next(struct feed *f, double after, double interval, int *rc)
{
	struct later l = { f, after, interval };
	struct gpu_snapshot s;
	struct err err = ERR_INIT;
	pthread_t t;
	double t0 = clock_mono();

	double took;

	pthread_create(&t, NULL, later_main, &l);
	gpu_snapshot_init(&s);
	*rc = feed_next(f, &s, &err);
	took = clock_mono() - t0;
	pthread_join(t, NULL);
	gpu_snapshot_release(&s);
	return took;
}

int
main(void)
{
	const char *o = getenv("O") ? getenv("O") : "build";
	char lib[512], scn[512];
	struct gs_config cfg;
	struct collector *c = NULL;
	struct err err = ERR_INIT;
	struct gpu_snapshot s;
	struct feed *f;
	double took;
	int rc;

	snprintf(lib, sizeof(lib), "%s/fakenvml/current/libnvidia-ml.so.1", o);
	snprintf(scn, sizeof(scn), "tests/scenarios/h100x2.scn");
	if (access(lib, R_OK) || access(scn, R_OK)) {
		skip("run from the repository root after make (needs the fake NVML library)");
		return done_testing();
	}
	setenv("FAKE_NVML_SCENARIO", scn, 1);
	gs_config_init(&cfg);
	cfg.nvml_path = getenv("GPUSCOPE_NVML") ? getenv("GPUSCOPE_NVML") : lib;
	cfg.sysfs_root = "tests/fixtures/sys-empty";
	cfg.proc_root = "tests/fixtures/proc";
	if (collector_open(&cfg, &c, &err) < 0 || collector_scan(c, &err) < 0) {
		ok(0, "the collector opens on the fake library: %s", err.msg);
		return done_testing();
	}
	f = feed_new_live(c, false, 60);
	gpu_snapshot_init(&s);
	rc = feed_next(f, &s, &err);
	ok(rc == 0 && s.nr_dev == 2, "the first sample comes at once, with both GPUs");
	gpu_snapshot_release(&s);

	took = timed_next(f, 0.3, 0, &rc);
	ok(rc == 0 && took < 20, "feed_wake() cuts a 60 s wait short (%.2f s)", took);

	/* the next is due 60 s after the last; a 0.5 s interval makes it due at once */
	took = timed_next(f, 0.3, 0.5, &rc);
	ok(rc == 0 && took < 20, "a new interval moves the wait under way (%.2f s)", took);
	ok(feed_interval(f) == 0.5, "the interval is the new one");

	{
		double t0 = clock_mono();

		gpu_snapshot_init(&s);
		rc = feed_next(f, &s, &err);
		gpu_snapshot_release(&s);
		took = clock_mono() - t0;
		ok(rc == 0 && took < 20, "later samples follow the new interval (%.2f s)", took);
	}
	feed_close(f);
	return done_testing();
}
