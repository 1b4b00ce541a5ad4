/*
 * The life of the fake library: nvmlInit/nvmlShutdown with NVML's reference
 * count, the scenario clock, and the frame every entry point runs in
 * (initialisation check, handle check, faults, FAKE_NVML_LOG).
 *
 * Threads: the scenario is read under init_lock at the first nvmlInit and
 * freed at the last nvmlShutdown; in between it is never written, so calls
 * read it without a lock. A client that calls nvmlShutdown while its other
 * threads still call in is wrong with NVIDIA's library as well.
 */
#include "fake.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nvml_api.h"

/*
 * The opaque nvmlDevice_t points at one of these. They live outside the
 * scenario so that a handle stays the same across nvmlShutdown and nvmlInit,
 * as NVIDIA's do, and a stale or foreign pointer is recognised, not followed.
 */
struct nvmlDevice_st {
	char unused;
};
static struct nvmlDevice_st handles[FAKE_MAX_GPUS];

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int refcount;                  /* under init_lock */
static struct scenario *_Atomic live; /* set while refcount > 0 */

/* scenario time 0 when neither FAKE_NVML_TIME nor FAKE_NVML_EPOCH is set */
static bool have_first_init;
static double first_init;

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static int log_fd = -1;

static double
wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
log_open(void)
{
	const char *path = getenv("FAKE_NVML_LOG");

	if (path && *path)
		log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}

__attribute__((destructor)) static void
log_close(void)
{
	if (log_fd >= 0)
		close(log_fd);
	log_fd = -1;
}

/* one write(2) per line: O_APPEND keeps the lines of concurrent calls whole */
static void
log_call(const char *fn, int gpu, nvmlReturn_t rc)
{
	char line[160];
	int n;

	pthread_once(&log_once, log_open);
	if (log_fd < 0)
		return;
	if (gpu >= 0)
		n = snprintf(line, sizeof(line), "%s %d %u\n", fn, gpu, rc);
	else
		n = snprintf(line, sizeof(line), "%s - %u\n", fn, rc);
	if (n > 0 && (size_t)n < sizeof(line)) {
		/* a log that cannot be written must not change what the call returns */
		ssize_t written = write(log_fd, line, (size_t)n);

		(void)written;
	}
}

/* The environment's clock settings; false after printing why they are wrong. */
static bool
read_clock(struct scenario *sc)
{
	const char *fixed = getenv("FAKE_NVML_TIME"), *epoch = getenv("FAKE_NVML_EPOCH");
	const char *speed = getenv("FAKE_NVML_SPEED");

	sc->fixed_time = fixed && *fixed;
	if (sc->fixed_time &&
	    (!fake_parse_seconds(fixed, &sc->fixed_t) || !isfinite(sc->fixed_t))) {
		fprintf(stderr, "fake nvml: FAKE_NVML_TIME: '%s' is not a number of seconds\n",
		        fixed);
		return false;
	}
	if (epoch && *epoch) {
		if (!fake_parse_seconds(epoch, &sc->epoch) || !isfinite(sc->epoch)) {
			fprintf(stderr, "fake nvml: FAKE_NVML_EPOCH: '%s' is not a time\n", epoch);
			return false;
		}
	} else if (sc->fixed_time) {
		sc->epoch = 0;
	} else {
		sc->epoch = first_init;
	}
	sc->speed = 1;
	if (speed && *speed &&
	    (!fake_parse_seconds(speed, &sc->speed) || !isfinite(sc->speed) || sc->speed <= 0)) {
		fprintf(stderr, "fake nvml: FAKE_NVML_SPEED: '%s' is not a positive number\n",
		        speed);
		return false;
	}
	return true;
}

/* scenario time of a call that starts now */
static double
scenario_time(const struct scenario *sc, bool wrap)
{
	double t = sc->fixed_time ? sc->fixed_t : (wall_now() - sc->epoch) * sc->speed;

	if (wrap && sc->period > 0)
		t -= sc->period * floor(t / sc->period);
	return t;
}

static bool
fault_matches(const struct fault *f, const char *fn, double t)
{
	if (t < f->from || t >= f->until)
		return false;
	return f->prefix ? !strncmp(fn, f->fn, f->fn_len) : !strcmp(fn, f->fn);
}

/*
 * The first matching `fail` in *rc (if none yet), and the sum of the
 * matching delays.
 */
static double
scan_faults(const struct fault *f, const char *fn, double t, nvmlReturn_t *rc)
{
	double ms = 0;

	for (; f; f = f->next) {
		if (!fault_matches(f, fn, t))
			continue;
		if (f->kind == FAULT_DELAY)
			ms += f->ms;
		else if (*rc == NVML_SUCCESS)
			*rc = f->error;
	}
	return ms;
}

static void
sleep_ms(double ms)
{
	struct timespec ts;

	if (!(ms > 0))
		return;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000) * 1e6);
	if (ts.tv_nsec > 999999999)
		ts.tv_nsec = 999999999;
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * What nvmlInit*, whichever name, does: read the scenario at the first one,
 * count the others. The delay of a fault is slept after init_lock is let go.
 */
static nvmlReturn_t
fake_init(const char *fn)
{
	struct scenario *sc;
	nvmlReturn_t rc = NVML_SUCCESS;
	double ms = 0;

	pthread_mutex_lock(&init_lock);
	if (!have_first_init) {
		first_init = wall_now();
		have_first_init = true;
	}
	sc = atomic_load(&live);
	if (!sc) {
		const char *path = getenv("FAKE_NVML_SCENARIO");

		if (!path || !*path) {
			rc = NVML_ERROR_DRIVER_NOT_LOADED;
			goto out;
		}
		if (scenario_load(path, &sc)) {
			rc = NVML_ERROR_UNKNOWN;
			goto out;
		}
		if (!read_clock(sc)) {
			scenario_free(sc);
			rc = NVML_ERROR_UNKNOWN;
			goto out;
		}
	}
	rc = sc->init_error;
	ms = scan_faults(sc->faults, fn, scenario_time(sc, true), &rc);
	if (rc == NVML_SUCCESS) {
		refcount++;
		atomic_store(&live, sc);
	} else if (refcount == 0) {
		/* nothing else holds it: forget it, as a failed nvmlInit should */
		scenario_free(sc);
	}
out:
	pthread_mutex_unlock(&init_lock);
	sleep_ms(ms);
	log_call(fn, -1, rc);
	return rc;
}

FAKE_API nvmlReturn_t
nvmlInit(void)
{
	return fake_init(__func__);
}

#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t
nvmlInit_v2(void)
{
	return fake_init(__func__);
}

/* The flags change nothing here: a scenario always has its GPUs attached. */
FAKE_API nvmlReturn_t
nvmlInitWithFlags(unsigned int flags)
{
	(void)flags;
	return fake_init(__func__);
}
#endif

FAKE_API nvmlReturn_t
nvmlShutdown(void)
{
	struct scenario *sc;
	nvmlReturn_t rc = NVML_SUCCESS;
	double ms = 0;

	pthread_mutex_lock(&init_lock);
	sc = atomic_load(&live);
	if (refcount == 0 || !sc) {
		rc = NVML_ERROR_UNINITIALIZED;
		goto out;
	}
	ms = scan_faults(sc->faults, __func__, scenario_time(sc, true), &rc);
	if (rc == NVML_SUCCESS && --refcount == 0) {
		atomic_store(&live, NULL);
		scenario_free(sc);
	}
out:
	pthread_mutex_unlock(&init_lock);
	sleep_ms(ms);
	log_call(__func__, -1, rc);
	return rc;
}

/* Lets gpuscope label what it shows as simulated; works before nvmlInit. */
FAKE_API const char *
gpuscope_fake_nvml_scenario(void)
{
	return getenv("FAKE_NVML_SCENARIO");
}

nvmlReturn_t
call_begin(struct call *c, const char *fn)
{
	c->fn = fn;
	c->gpu = NULL;
	c->sc = atomic_load(&live);
	if (!c->sc)
		return NVML_ERROR_UNINITIALIZED;
	c->t = scenario_time(c->sc, true);
	return NVML_SUCCESS;
}

nvmlReturn_t
call_faults(struct call *c, const struct gpu *gpu)
{
	nvmlReturn_t rc = NVML_SUCCESS;
	double ms;

	c->gpu = gpu;
	ms = scan_faults(c->sc->faults, c->fn, c->t, &rc);
	if (gpu)
		ms += scan_faults(gpu->faults, c->fn, c->t, &rc);
	sleep_ms(ms);
	if (rc != NVML_SUCCESS || !gpu)
		return rc;
	if (c->t >= gpu->lost)
		return NVML_ERROR_GPU_IS_LOST;
	if (c->t >= gpu->reset_required)
		return NVML_ERROR_RESET_REQUIRED;
	return NVML_SUCCESS;
}

nvmlReturn_t
call_system(struct call *c, const char *fn)
{
	nvmlReturn_t rc = call_begin(c, fn);

	return rc != NVML_SUCCESS ? rc : call_faults(c, NULL);
}

const struct gpu *
call_gpu_of(const struct call *c, nvmlDevice_t device)
{
	uintptr_t p = (uintptr_t)device, base = (uintptr_t)handles;
	size_t i;

	if (p < base || p >= base + sizeof(handles))
		return mig_gpu_of(c->sc, device);
	i = (p - base) / sizeof(handles[0]);
	return i < c->sc->nr_gpus ? &c->sc->gpus[i] : NULL;
}

nvmlReturn_t
call_device(struct call *c, const char *fn, nvmlDevice_t device)
{
	nvmlReturn_t rc = call_begin(c, fn);
	const struct gpu *g;

	if (rc != NVML_SUCCESS)
		return rc;
	g = call_gpu_of(c, device);
	if (!g)
		return NVML_ERROR_INVALID_ARGUMENT;
	return call_faults(c, g);
}

nvmlReturn_t
call_end(const struct call *c, nvmlReturn_t rc)
{
	log_call(c->fn, c->gpu ? (int)c->gpu->index : -1, rc);
	return rc;
}

nvmlDevice_t
gpu_handle(const struct gpu *gpu)
{
	return &handles[gpu->index];
}

double
fake_time(const struct scenario *sc, bool wrap)
{
	return scenario_time(sc, wrap);
}

unsigned long long
call_wall_us(const struct call *c)
{
	/* unwrapped, so that timestamps keep growing when a demo loops */
	return to_ull((c->sc->epoch + scenario_time(c->sc, false)) * 1e6);
}

/*
 * Every entry point the fake does not implement (notsup.c). Only the faults
 * of [system] can apply: which GPU it is called on is unknown.
 */
nvmlReturn_t
fake_notsup(const char *fn)
{
	struct call c;
	nvmlReturn_t rc = call_begin(&c, fn);

	if (rc == NVML_SUCCESS)
		rc = call_faults(&c, NULL);
	if (rc == NVML_SUCCESS || rc == NVML_ERROR_UNINITIALIZED)
		rc = NVML_ERROR_NOT_SUPPORTED;
	return call_end(&c, rc);
}

nvmlReturn_t
put_string(const char *s, char *buf, unsigned int length)
{
	size_t n;

	if (!buf)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!s)
		return NVML_ERROR_NOT_SUPPORTED;
	n = strlen(s);
	if (n >= length)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(buf, s, n + 1);
	return NVML_SUCCESS;
}

unsigned int
to_uint(double v)
{
	double r = round(v);

	if (!(r > 0))
		return 0;
	return r >= (double)UINT_MAX ? UINT_MAX : (unsigned int)r;
}

int
to_int(double v)
{
	double r = round(v);

	if (r <= (double)INT_MIN)
		return INT_MIN;
	if (r >= (double)INT_MAX)
		return INT_MAX;
	return r == r ? (int)r : 0;
}

unsigned long long
to_ull(double v)
{
	double r = round(v);

	if (!(r > 0))
		return 0;
	return r >= 18446744073709551616.0 ? ULLONG_MAX : (unsigned long long)r;
}
