/*
 * A feed of snapshots over time, for the commands that keep showing the
 * machine (top, watch, record): from the live machine, sampled every
 * interval by a collector that stays open (so rates come from consecutive
 * samples), or from a recording (gpuscope replay), paced as it was recorded
 * times a speed factor.
 *
 * feed_next() waits until the next sample is due and returns it. It never
 * blocks on a slow GPU longer than the collector's deadline (cfg->timeout):
 * a GPU that did not answer in time comes back as not responding and the
 * others are read as usual. A caller with a user interface runs feed_next()
 * on a thread of its own; feed_wake() cuts a wait short from another thread
 * (a key asked for a refresh, or the program is ending).
 */
#ifndef GPUSCOPE_FEED_H
#define GPUSCOPE_FEED_H

#include <stdbool.h>

struct err;
struct gpu_snapshot;
struct collector;
struct feed;

enum feed_status {
	FEED_END = 1, /* the recording has no more samples */
};

/*
 * The live machine, from a collector that is open, scanned and selected
 * (cmd_open_collector() does that, with the messages of a one-shot
 * command). The feed owns c from now on. procs: read processes. The first
 * sample takes two readings cfg->window apart, so that rates (engine use,
 * energy) are there from the first frame.
 */
struct feed *feed_new_live(struct collector *c, bool procs, double interval);

/* A recording: feed_open_replay(), in record/replay.h. */

/*
 * Wait until the next sample is due (at once for the first one), then fill
 * snap (initialised and empty). Returns 0, FEED_END, or a negative status
 * with err set.
 */
int feed_next(struct feed *f, struct gpu_snapshot *snap, struct err *err);

/*
 * Change the interval of a live feed (seconds; top's "+"/"-"), from any
 * thread: the next sample is due one new interval after the last one, also
 * when feed_next() is already waiting for it.
 */
void feed_set_interval(struct feed *f, double interval);
double feed_interval(struct feed *f);

/* Whether this feed replays a recording. */
bool feed_is_replay(const struct feed *f);

/* From any thread: end the current wait of feed_next() now. */
void feed_wake(struct feed *f);

void feed_close(struct feed *f);

#endif
