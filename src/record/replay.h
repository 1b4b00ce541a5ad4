/*
 * The replay of a recording as a feed (backend/feed.h): gpuscope replay,
 * and top, watch and status on a recording.
 */
#ifndef GPUSCOPE_RECORD_REPLAY_H
#define GPUSCOPE_RECORD_REPLAY_H

struct err;
struct feed;

/*
 * A recording (see record/record.h). speed: 1 = as recorded, 10 = ten
 * times as fast, 0 = as fast as it can be read. from: start at the last
 * sample at or before this time (0: at the start). ids: only these GPUs
 * (NULL: all), by index, UUID or bus id as recorded. Returns 0, or a
 * negative status with err saying why (no such file, not a recording, no
 * GPU matches an id).
 */
int feed_open_replay(const char *path, const char *ids, double speed, double from,
                     struct feed **out, struct err *err);

#endif
