/*
 * Inside a feed (feed.h): what the live and the replay feeds share. Only
 * feed.c and feed_replay.c include this.
 */
#ifndef GPUSCOPE_FEED_IMPL_H
#define GPUSCOPE_FEED_IMPL_H

#include <pthread.h>
#include <stdbool.h>

#include "backend/feed.h"

struct feed {
	/* where samples come from: collector_sample(), or a recording */
	int (*next)(struct feed *f, struct gpu_snapshot *snap, struct err *err);
	void (*release)(struct feed *f);

	/* the live machine */
	struct collector *c;
	bool procs;
	double next_due; /* monotonic time the next sample is due */

	/* a recording */
	struct rec_reader *r;
	char *ids;
	double speed;
	double rec_t0, mono_t0; /* the first replayed sample: its time, and when it was shown */

	bool started;
	double interval;
	pthread_mutex_t mu; /* guards interval, next_due and woken */
	pthread_cond_t cv;
	bool woken;
};

/* A feed with its lock and wake-up, and interval (1 s when not positive). */
struct feed *feed_alloc(double interval);

/* Wait until the monotonic time due, or until feed_wake(). */
void feed_wait_until(struct feed *f, double due);

#endif
