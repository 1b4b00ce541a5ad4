/*
 * Inside a feed (feed.h): what every kind of feed shares. feed.c (the live
 * machine) includes this, and so may a feed of a higher layer (the replay
 * of a recording, record/feed_replay.c), which keeps what it needs behind
 * source.
 */
#ifndef GPUSCOPE_FEED_IMPL_H
#define GPUSCOPE_FEED_IMPL_H

#include <pthread.h>
#include <stdbool.h>

#include "backend/feed.h"

struct feed {
	/* where samples come from: collector_sample(), or another kind of feed's */
	int (*next)(struct feed *f, struct gpu_snapshot *snap, struct err *err);
	void (*release)(struct feed *f);

	/* the live machine */
	struct collector *c;
	bool procs;
	double next_due; /* monotonic time the next sample is due */

	/* another kind of feed's own state, released by release; NULL for the live machine */
	void *source;
	bool replay; /* it replays a recording (feed_is_replay()) */

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
