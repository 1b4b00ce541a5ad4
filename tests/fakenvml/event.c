/*
 * NVML's events in the fake: event sets, the registration of devices for
 * event types, and the waits that deliver the Xid errors of the scenario's
 * `xid` keys as they happen in scenario time (FAKE_NVML_SPEED included).
 * The fake produces no other event type.
 *
 * Threads: every set lives under ev_lock; a wait sleeps on its set's
 * condition variable (ev_lock let go), so other threads' calls, and a
 * registration that brings an earlier event, go on during it.
 */
#include "fake.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nvml_api.h"

/* NVML's "fully supported devices" only: not GeForce, Titan, GeForce RTX, Titan RTX */
#define BRAND_GEFORCE     5
#define BRAND_TITAN       6
#define BRAND_GEFORCE_RTX 15
#define BRAND_TITAN_RTX   16

/* A device's registration in a set, and where its next Xid is. */
struct reg {
	unsigned long long types; /* 0: not registered */
	double period_nr;         /* the period the next Xid falls in (0 without a period) */
	size_t next;              /* index in the GPU's xids of the next one to deliver */
};

struct nvmlEventSet_st {
	struct nvmlEventSet_st *next; /* the list of live sets */
	pthread_cond_t cv;            /* a registration happened, or the set is freed */
	unsigned waiters;             /* threads inside a wait on it */
	bool freed;                   /* freed while waited on: the last waiter frees it */
	struct reg reg[FAKE_MAX_GPUS];
};

static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nvmlEventSet_st *sets; /* under ev_lock */

/* under ev_lock */
static bool
set_live(const struct nvmlEventSet_st *set)
{
	for (const struct nvmlEventSet_st *s = sets; s; s = s->next)
		if (s == set)
			return true;
	return false;
}

static void
set_destroy(struct nvmlEventSet_st *set)
{
	pthread_cond_destroy(&set->cv);
	free(set);
}

/*
 * What nvmlDeviceGetSupportedEventTypes answers for the GPU of c: its
 * `event_types`, else Xid errors when it has an `xid` key and is not a
 * GeForce or Titan, else NOT_SUPPORTED.
 */
static nvmlReturn_t
supported(const struct call *c, unsigned long long *types)
{
	double v;
	nvmlReturn_t rc;

	if (c->gpu->num[GK_EVENT_TYPES]) {
		rc = expr_eval(c->gpu->num[GK_EVENT_TYPES], c->t, &v);
		if (rc == NVML_SUCCESS)
			*types = to_ull(v);
		return rc;
	}
	/* like any absent key, but a GPU given Xids can report them */
	if (!c->gpu->nr_xids)
		return NVML_ERROR_NOT_SUPPORTED;
	if (expr_eval(c->gpu->num[GK_BRAND], c->t, &v) == NVML_SUCCESS &&
	    (to_uint(v) == BRAND_GEFORCE || to_uint(v) == BRAND_TITAN ||
	     to_uint(v) == BRAND_GEFORCE_RTX || to_uint(v) == BRAND_TITAN_RTX))
		return NVML_ERROR_NOT_SUPPORTED;
	*types = nvmlEventTypeXidCriticalError;
	return NVML_SUCCESS;
}

/* The scenario time of the GPU's Xid at r's place. */
static double
xid_time(const struct scenario *sc, const struct gpu *g, const struct reg *r)
{
	return g->xids[r->next].t + r->period_nr * sc->period;
}

/* r's place: the first Xid of g after scenario time since. */
static void
reg_start(const struct scenario *sc, const struct gpu *g, struct reg *r, double since)
{
	r->period_nr = sc->period > 0 ? floor(since / sc->period) : 0;
	r->next = 0;
	while (r->next < g->nr_xids && xid_time(sc, g, r) <= since)
		r->next++;
	if (r->next == g->nr_xids && sc->period > 0 && g->nr_xids) {
		r->period_nr++;
		r->next = 0;
	}
}

/* Past the one just delivered; the next period begins once a period's are done. */
static void
reg_advance(const struct scenario *sc, const struct gpu *g, struct reg *r)
{
	if (++r->next == g->nr_xids && sc->period > 0) {
		r->period_nr++;
		r->next = 0;
	}
}

/*
 * The GPU whose next Xid in set comes first (the lowest index of equal
 * times), with that time in *t; -1 when no registered GPU has one left.
 * A GPU's Xids stop once it is lost.
 */
static int
next_event(const struct scenario *sc, const struct nvmlEventSet_st *set, double *t)
{
	int best = -1;

	for (unsigned int i = 0; i < sc->nr_gpus; i++) {
		const struct gpu *g = &sc->gpus[i];
		const struct reg *r = &set->reg[i];
		double x;

		if (!(r->types & nvmlEventTypeXidCriticalError) || r->next >= g->nr_xids ||
		    g->xids[r->next].t > g->lost)
			continue;
		x = xid_time(sc, g, r);
		if (best < 0 || x < *t) {
			best = (int)i;
			*t = x;
		}
	}
	return best;
}

static void
mono_after(struct timespec *ts, double seconds)
{
	double whole;

	clock_gettime(CLOCK_MONOTONIC, ts);
	if (seconds > 1e9)
		seconds = 1e9;
	whole = floor(seconds);
	ts->tv_sec += (time_t)whole;
	ts->tv_nsec += (long)((seconds - whole) * 1e9) + 1000; /* never early */
	while (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static bool
mono_reached(const struct timespec *ts)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > ts->tv_sec || (now.tv_sec == ts->tv_sec && now.tv_nsec >= ts->tv_nsec);
}

static double
mono_left(const struct timespec *ts)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(ts->tv_sec - now.tv_sec) + (double)(ts->tv_nsec - now.tv_nsec) / 1e9;
}

/*
 * Both waits: the next Xid of a registered GPU, at once when it has
 * happened, else when it happens, if that is within timeoutms of wall time.
 * size is how much of *data the caller's version of the struct has.
 */
static nvmlReturn_t
wait_event(const struct call *c, struct nvmlEventSet_st *set, nvmlEventData_t *data,
           unsigned int timeoutms, size_t size)
{
	const struct scenario *sc = c->sc;
	struct timespec deadline;
	nvmlReturn_t rc = NVML_ERROR_TIMEOUT;

	mono_after(&deadline, timeoutms / 1000.0);
	pthread_mutex_lock(&ev_lock);
	if (!set_live(set)) {
		pthread_mutex_unlock(&ev_lock);
		return NVML_ERROR_INVALID_ARGUMENT;
	}
	set->waiters++;
	while (!set->freed) {
		double t = 0, now = fake_time(sc, false), left = mono_left(&deadline);
		int g = next_event(sc, set, &t);
		struct timespec wake;

		if (g >= 0 && t <= now) {
			nvmlEventData_t ev = {
				.device = gpu_handle(&sc->gpus[g]),
				.eventType = nvmlEventTypeXidCriticalError,
				.eventData = sc->gpus[g].xids[set->reg[g].next].code,
				.gpuInstanceId = NVML_INSTANCE_ID_NONE,
				.computeInstanceId = NVML_INSTANCE_ID_NONE,
			};

			memcpy(data, &ev, size);
			reg_advance(sc, &sc->gpus[g], &set->reg[g]);
			rc = NVML_SUCCESS;
			break;
		}
		if (mono_reached(&deadline))
			break;
		/* scenario time stands still under FAKE_NVML_TIME */
		if (g >= 0 && !sc->fixed_time && (t - now) / sc->speed < left)
			mono_after(&wake, (t - now) / sc->speed);
		else
			wake = deadline;
		pthread_cond_timedwait(&set->cv, &ev_lock, &wake);
	}
	set->waiters--;
	if (set->freed) {
		rc = NVML_ERROR_INVALID_ARGUMENT;
		if (!set->waiters)
			set_destroy(set);
	}
	pthread_mutex_unlock(&ev_lock);
	return rc;
}

FAKE_API nvmlReturn_t
nvmlEventSetCreate(nvmlEventSet_t *set)
{
	struct call c;
	nvmlReturn_t rc = call_system(&c, __func__);
	struct nvmlEventSet_st *s;
	pthread_condattr_t ca;

	if (rc == NVML_SUCCESS && !set)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	if (rc != NVML_SUCCESS)
		return call_end(&c, rc);
	s = calloc(1, sizeof(*s));
	if (!s)
		return call_end(&c, NVML_ERROR_MEMORY);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_lock(&ev_lock);
	s->next = sets;
	sets = s;
	pthread_mutex_unlock(&ev_lock);
	*set = s;
	return call_end(&c, NVML_SUCCESS);
}

FAKE_API nvmlReturn_t
nvmlEventSetFree(nvmlEventSet_t set)
{
	struct call c;
	nvmlReturn_t rc = call_system(&c, __func__);

	if (rc != NVML_SUCCESS)
		return call_end(&c, rc);
	pthread_mutex_lock(&ev_lock);
	if (!set_live(set)) {
		rc = NVML_ERROR_INVALID_ARGUMENT;
	} else {
		struct nvmlEventSet_st **p = &sets;

		while (*p != set)
			p = &(*p)->next;
		*p = set->next;
		/* freeing a set that a thread waits on is wrong; the waiter still gets out */
		if (set->waiters) {
			set->freed = true;
			pthread_cond_broadcast(&set->cv);
		} else {
			set_destroy(set);
		}
	}
	pthread_mutex_unlock(&ev_lock);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long *eventTypes)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS && !eventTypes)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	if (rc == NVML_SUCCESS)
		rc = supported(&c, eventTypes);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes, nvmlEventSet_t set)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);
	unsigned long long types = 0;

	if (rc == NVML_SUCCESS && !set)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	if (rc == NVML_SUCCESS)
		rc = supported(&c, &types);
	/* any type asked for that the GPU lacks refuses the whole call */
	if (rc == NVML_SUCCESS && (eventTypes & ~types))
		rc = NVML_ERROR_NOT_SUPPORTED;
	if (rc != NVML_SUCCESS)
		return call_end(&c, rc);
	pthread_mutex_lock(&ev_lock);
	if (!set_live(set)) {
		rc = NVML_ERROR_INVALID_ARGUMENT;
	} else {
		struct reg *r = &set->reg[c.gpu->index];

		/* events from now on: what happened before the registration is not queued */
		if ((eventTypes & nvmlEventTypeXidCriticalError) &&
		    !(r->types & nvmlEventTypeXidCriticalError))
			reg_start(c.sc, c.gpu, r, fake_time(c.sc, false));
		r->types |= eventTypes;
		pthread_cond_broadcast(&set->cv);
	}
	pthread_mutex_unlock(&ev_lock);
	return call_end(&c, rc);
}

/* Before MIG: the caller's nvmlEventData_t ends after eventData. */
FAKE_API nvmlReturn_t
nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
	struct call c;
	nvmlReturn_t rc = call_system(&c, __func__);

	if (rc == NVML_SUCCESS && (!set || !data))
		rc = NVML_ERROR_INVALID_ARGUMENT;
	if (rc == NVML_SUCCESS)
		rc = wait_event(&c, set, data, timeoutms, offsetof(nvmlEventData_t, gpuInstanceId));
	return call_end(&c, rc);
}

#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t
nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
	struct call c;
	nvmlReturn_t rc = call_system(&c, __func__);

	if (rc == NVML_SUCCESS && (!set || !data))
		rc = NVML_ERROR_INVALID_ARGUMENT;
	if (rc == NVML_SUCCESS)
		rc = wait_event(&c, set, data, timeoutms, sizeof(*data));
	return call_end(&c, rc);
}
#endif
