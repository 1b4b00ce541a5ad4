/*
 * The sampler of bench and burn (bench/sample.h): one thread, one collector,
 * a ring of readings per device.
 */
#include "bench/sample.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/collect.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/fields.h"
#include "core/gpu.h"
#include "core/xalloc.h"

#define RING 36000 /* an hour at 0.1 s */

struct reading {
	double t;
	double sm, mem, power, limit, temp;
	unsigned reasons;
	int gen, width, gen_max, width_max;
};

struct sdev {
	struct gpu_device last; /* as last sampled */
	bool have_last;
	struct reading *ring;
	size_t head, count;
};

struct bench_sampler {
	struct collector *c;
	double period;
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool quit;
	struct sdev *dev;
	size_t ndev;
};

double
bench_sampler_now(void)
{
	return clock_mono();
}

static double
field(const struct gpu_device *d, enum gpu_field f)
{
	return dev_has(d, f) ? dev_get(d, f) : NAN;
}

static int
ifield(const struct gpu_device *d, enum gpu_field f)
{
	return dev_has(d, f) ? (int)dev_get(d, f) : 0;
}

static void
take(struct bench_sampler *s)
{
	struct gpu_snapshot snap;
	struct err err = ERR_INIT;
	double t = clock_mono();

	gpu_snapshot_init(&snap);
	if (collector_sample(s->c, &snap, 0, &err) == 0) {
		pthread_mutex_lock(&s->lock);
		for (size_t i = 0; i < snap.nr_dev && i < s->ndev; i++) {
			const struct gpu_device *d = &snap.dev[i];
			struct sdev *sd = &s->dev[i];
			struct reading *r = &sd->ring[(sd->head + sd->count) % RING];

			if (sd->count == RING)
				sd->head = (sd->head + 1) % RING;
			else
				sd->count++;
			r->t = t;
			r->sm = field(d, GF_CLOCK_SM);
			if (isnan(r->sm))
				r->sm = field(d, GF_CLOCK_GRAPHICS);
			r->mem = field(d, GF_CLOCK_MEM);
			r->power = field(d, GF_POWER_DRAW);
			r->limit = field(d, GF_POWER_LIMIT);
			r->temp = field(d, GF_TEMP_GPU);
			r->reasons = (unsigned)ifield(d, GF_CLOCK_REASONS);
			r->gen = ifield(d, GF_PCIE_GEN);
			r->width = ifield(d, GF_PCIE_WIDTH);
			r->gen_max = ifield(d, GF_PCIE_GEN_MAX);
			r->width_max = ifield(d, GF_PCIE_WIDTH_MAX);
			sd->last = *d;
			sd->have_last = true;
		}
		pthread_mutex_unlock(&s->lock);
	}
	gpu_snapshot_release(&snap);
}

static void *
run(void *arg)
{
	struct bench_sampler *s = arg;
	struct timespec ts;

	pthread_mutex_lock(&s->lock);
	while (!s->quit) {
		pthread_mutex_unlock(&s->lock);
		take(s);
		pthread_mutex_lock(&s->lock);
		clock_mono_timespec(&ts, clock_mono() + s->period);
		while (!s->quit && pthread_cond_timedwait(&s->wake, &s->lock, &ts) == 0)
			;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

struct bench_sampler *
bench_sampler_start(const struct gs_config *cfg, double period, struct err *err)
{
	struct bench_sampler *s = xcalloc(1, sizeof(*s));
	pthread_condattr_t ca;

	s->period = period > 0 ? period : 0.1;
	if (collector_open(cfg, &s->c, err) < 0) {
		free(s);
		return NULL;
	}
	if (collector_scan(s->c, err) < 0) {
		collector_close(s->c);
		free(s);
		return NULL;
	}
	s->ndev = collector_count(s->c);
	s->dev = xcalloc(s->ndev ? s->ndev : 1, sizeof(*s->dev));
	for (size_t i = 0; i < s->ndev; i++)
		s->dev[i].ring = xcalloc(RING, sizeof(struct reading));
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_condattr_destroy(&ca);
	/* one sample now, so the devices are known before the first window */
	take(s);
	if (s->ndev && pthread_create(&s->thread, NULL, run, s) == 0)
		s->started = true;
	return s;
}

void
bench_sampler_stop(struct bench_sampler *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->quit = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	if (s->started)
		pthread_join(s->thread, NULL);
	for (size_t i = 0; i < s->ndev; i++)
		free(s->dev[i].ring);
	free(s->dev);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	collector_close(s->c);
	free(s);
}

int
bench_sampler_find(struct bench_sampler *s, const char *uuid, const char *pci_bus_id)
{
	int found = -1;
	bool prefix;

	if (!s)
		return -1;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->ndev && found < 0; i++) {
		const struct gpu_device *d = &s->dev[i].last;

		if (!s->dev[i].have_last)
			continue;
		if (uuid && *uuid && d->uuid[0] && strcasecmp(uuid, d->uuid) == 0)
			found = (int)i;
	}
	for (size_t i = 0; i < s->ndev && found < 0; i++)
		if (s->dev[i].have_last && pci_bus_id && *pci_bus_id &&
		    gpu_match_id(&s->dev[i].last, pci_bus_id, &prefix))
			found = (int)i;
	pthread_mutex_unlock(&s->lock);
	return found;
}

static void
minmax(double v, double *lo, double *hi, double *sum, unsigned *n)
{
	if (isnan(v))
		return;
	if (isnan(*lo) || v < *lo)
		*lo = v;
	if (isnan(*hi) || v > *hi)
		*hi = v;
	*sum += v;
	(*n)++;
}

void
bench_sampler_window(struct bench_sampler *s, int dev, double t0, double t1, struct bench_obs *o)
{
	double sm_sum = 0, mem_sum = 0, p_sum = 0, mem_lo = NAN, mem_hi = NAN, t_lo = NAN;
	unsigned n_sm = 0, n_mem = 0, n_p = 0, n_t = 0;
	double t_sum = 0;

	memset(o, 0, sizeof(*o));
	o->sm_min = o->sm_mean = o->sm_max = o->mem_mean = NAN;
	o->power_mean = o->power_max = o->power_limit = o->temp_max = NAN;
	if (!s || dev < 0 || (size_t)dev >= s->ndev)
		return;
	pthread_mutex_lock(&s->lock);
	for (size_t k = 0; k < s->dev[dev].count; k++) {
		const struct reading *r = &s->dev[dev].ring[(s->dev[dev].head + k) % RING];
		double p_lo = NAN;

		if (r->t < t0 || r->t > t1)
			continue;
		o->samples++;
		minmax(r->sm, &o->sm_min, &o->sm_max, &sm_sum, &n_sm);
		minmax(r->mem, &mem_lo, &mem_hi, &mem_sum, &n_mem);
		minmax(r->power, &p_lo, &o->power_max, &p_sum, &n_p);
		minmax(r->temp, &t_lo, &o->temp_max, &t_sum, &n_t);
		if (!isnan(r->limit))
			o->power_limit = r->limit;
		o->reasons |= r->reasons;
		if (!(r->reasons & CR_GPU_IDLE))
			o->reasons_busy |= r->reasons;
		if (r->gen && (!o->pcie_gen_min || r->gen < o->pcie_gen_min))
			o->pcie_gen_min = r->gen;
		if (r->width && (!o->pcie_width_min || r->width < o->pcie_width_min))
			o->pcie_width_min = r->width;
		if (r->gen_max > o->pcie_gen_max)
			o->pcie_gen_max = r->gen_max;
		if (r->width_max > o->pcie_width_max)
			o->pcie_width_max = r->width_max;
	}
	pthread_mutex_unlock(&s->lock);
	o->known = o->samples > 0;
	if (n_sm)
		o->sm_mean = sm_sum / n_sm;
	if (n_mem)
		o->mem_mean = mem_sum / n_mem;
	if (n_p)
		o->power_mean = p_sum / n_p;
}

bool
bench_sampler_latest(struct bench_sampler *s, int dev, struct gpu_device *out)
{
	bool ok = false;

	if (!s || dev < 0 || (size_t)dev >= s->ndev)
		return false;
	pthread_mutex_lock(&s->lock);
	if (s->dev[dev].have_last) {
		*out = s->dev[dev].last;
		ok = true;
	}
	pthread_mutex_unlock(&s->lock);
	return ok;
}

void
bench_reasons_str(unsigned mask, char *buf, size_t size)
{
	unsigned nr;
	const struct flag_name *fl = clock_reason_names(&nr);
	size_t len = 0;

	if (size)
		buf[0] = 0;
	mask &= ~(unsigned)(CR_GPU_IDLE | CR_DISPLAY_CLOCKS);
	for (unsigned i = 0; i < nr && len + 1 < size; i++) {
		if (!(mask & fl[i].bit))
			continue;
		len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
		                        fl[i].label);
		if (len >= size)
			len = size - 1;
	}
}
