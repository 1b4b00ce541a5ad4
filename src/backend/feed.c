/*
 * Snapshots over time: what every feed does (pacing, waking, closing), and
 * the live machine's feed. It keeps one collector open, so the backends'
 * rates (engine busy time, energy, per-process CPU) come from consecutive
 * samples; samples are due on a fixed schedule (start + k * interval) so
 * that a slow sample does not make every later one late. The replay of a
 * recording is in record/feed_replay.c.
 */
#include "backend/feed_impl.h"

#include <stdlib.h>
#include <time.h>

#include "backend/collect.h"
#include "core/clock.h"
#include "core/gpu.h"
#include "core/xalloc.h"

struct feed *
feed_alloc(double interval)
{
	struct feed *f = xcalloc(1, sizeof(*f));
	pthread_condattr_t ca;

	f->interval = interval > 0 ? interval : 1.0;
	pthread_mutex_init(&f->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&f->cv, &ca);
	pthread_condattr_destroy(&ca);
	return f;
}

void
feed_wait_until(struct feed *f, double due)
{
	struct timespec ts;

	pthread_mutex_lock(&f->mu);
	while (!f->woken && clock_mono() < due) {
		clock_mono_timespec(&ts, due);
		pthread_cond_timedwait(&f->cv, &f->mu, &ts);
	}
	f->woken = false;
	pthread_mutex_unlock(&f->mu);
}

/*
 * Wait until f->next_due, read afresh after every wake-up, so that a new
 * interval (feed_set_interval()) moves a wait already under way; or until
 * feed_wake().
 */
static bool
wait_next_due(struct feed *f)
{
	struct timespec ts;
	bool early;

	pthread_mutex_lock(&f->mu);
	while (!f->woken && clock_mono() < f->next_due) {
		clock_mono_timespec(&ts, f->next_due);
		pthread_cond_timedwait(&f->cv, &f->mu, &ts);
	}
	early = f->woken;
	f->woken = false;
	pthread_mutex_unlock(&f->mu);
	return early;
}

static int
next_live(struct feed *f, struct gpu_snapshot *snap, struct err *err)
{
	unsigned flags = f->procs ? COLLECT_PROCS : 0;
	bool early = false;
	double now;

	if (!f->started) {
		/* two readings for the first frame, so that rates are there at once */
		flags |= COLLECT_WINDOW;
		f->started = true;
		pthread_mutex_lock(&f->mu);
		f->next_due = clock_mono();
		pthread_mutex_unlock(&f->mu);
	} else {
		early = wait_next_due(f);
	}
	now = clock_mono();
	pthread_mutex_lock(&f->mu);
	f->next_due += f->interval;
	/* woken early (a key asked for a refresh), or late (a slow sample): start again from now */
	if (early || f->next_due < now)
		f->next_due = now + f->interval;
	pthread_mutex_unlock(&f->mu);
	return collector_sample(f->c, snap, flags, err);
}

static void
release_live(struct feed *f)
{
	collector_close(f->c);
}

struct feed *
feed_new_live(struct collector *c, bool procs, double interval)
{
	struct feed *f = feed_alloc(interval);

	f->next = next_live;
	f->release = release_live;
	f->c = c;
	f->procs = procs;
	return f;
}

int
feed_next(struct feed *f, struct gpu_snapshot *snap, struct err *err)
{
	return f->next(f, snap, err);
}

void
feed_set_interval(struct feed *f, double interval)
{
	if (interval <= 0)
		return;
	pthread_mutex_lock(&f->mu);
	/* the sample due next comes after the new interval, counted from the last one */
	f->next_due += interval - f->interval;
	f->interval = interval;
	pthread_cond_broadcast(&f->cv); /* a wait under way takes the new due time */
	pthread_mutex_unlock(&f->mu);
}

double
feed_interval(struct feed *f)
{
	double v;

	pthread_mutex_lock(&f->mu);
	v = f->interval;
	pthread_mutex_unlock(&f->mu);
	return v;
}

bool
feed_is_replay(const struct feed *f)
{
	return f->replay;
}

void
feed_wake(struct feed *f)
{
	pthread_mutex_lock(&f->mu);
	f->woken = true;
	pthread_cond_broadcast(&f->cv);
	pthread_mutex_unlock(&f->mu);
}

void
feed_close(struct feed *f)
{
	if (!f)
		return;
	if (f->release)
		f->release(f);
	pthread_cond_destroy(&f->cv);
	pthread_mutex_destroy(&f->mu);
	free(f);
}
