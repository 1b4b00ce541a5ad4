/*
 * Wall and monotonic clocks.
 */
#include "core/clock.h"

#include <math.h>
#include <time.h>

#include "core/config.h"

double
clock_now(const struct gs_config *cfg)
{
	struct timespec ts;

	if (cfg && cfg->fixed_time > 0)
		return cfg->fixed_time;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
clock_mono_timespec(struct timespec *ts, double mono)
{
	double sec = floor(mono);

	ts->tv_sec = (time_t)sec;
	ts->tv_nsec = (long)((mono - sec) * 1e9);
	if (ts->tv_nsec >= 1000000000L)
		ts->tv_nsec = 999999999L;
}

double
clock_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
