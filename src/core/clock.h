/*
 * Time: the wall clock (fixed in tests by GPUSCOPE_CLOCK through the config)
 * and a monotonic clock for intervals and deadlines.
 */
#ifndef GPUSCOPE_CLOCK_H
#define GPUSCOPE_CLOCK_H

struct gs_config;

/* Seconds since the epoch: cfg->fixed_time when set, else the real clock. */
double clock_now(const struct gs_config *cfg);
/* Monotonic seconds, for measuring intervals only. */
double clock_mono(void);

struct timespec;
/*
 * A clock_mono() time as the timespec that pthread_cond_timedwait() takes
 * for a condition variable on CLOCK_MONOTONIC.
 */
void clock_mono_timespec(struct timespec *ts, double mono);

#endif
