/*
 * Ring buffers of a few metrics per GPU, for top's charts.
 */
#include "tui/history.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

void
history_init(struct history *h)
{
	memset(h, 0, sizeof(*h));
}

void
history_release(struct history *h)
{
	free(h->gpu);
	history_init(h);
}

static void
device_key(char *buf, size_t size, const struct gpu_device *d)
{
	if (d->uuid[0])
		str_copy(buf, size, d->uuid);
	else if (d->pci_bus_id[0])
		str_copy(buf, size, d->pci_bus_id);
	else
		snprintf(buf, size, "#%u", d->index);
}

static struct hist_gpu *
find(const struct history *h, const char *key)
{
	for (size_t i = 0; i < h->nr; i++)
		if (!strcmp(h->gpu[i].key, key))
			return &h->gpu[i];
	return NULL;
}

const struct hist_gpu *
history_find(const struct history *h, const struct gpu_device *d)
{
	char key[96];

	device_key(key, sizeof(key), d);
	return find(h, key);
}

static bool
is_drm(const struct gpu_device *d)
{
	return d->card[0] != '\0';
}

double
history_metric_value(const struct gpu_device *d, enum hist_metric m)
{
	switch (m) {
	case HM_UTIL:
		return dev_get(d, GF_UTIL_GPU);
	case HM_MEM:
		if (dev_has(d, GF_MEM_USED) && dev_has(d, GF_MEM_TOTAL) && d->v[GF_MEM_TOTAL] > 0)
			return 100.0 * d->v[GF_MEM_USED] / d->v[GF_MEM_TOTAL];
		return NAN;
	case HM_POWER:
		return dev_get(d, GF_POWER_DRAW);
	case HM_TEMP:
		return dev_get(d, GF_TEMP_GPU);
	case HM_CLOCK:
		if (!is_drm(d) && dev_has(d, GF_CLOCK_SM))
			return d->v[GF_CLOCK_SM];
		return dev_get(d, GF_CLOCK_GRAPHICS);
	case HM_MEM_CLOCK:
		return dev_get(d, GF_CLOCK_MEM);
	case HM_MEM_UTIL:
		return dev_get(d, GF_UTIL_MEM);
	case HM__COUNT:
		break;
	}
	return NAN;
}

void
history_push(struct history *h, const struct gpu_snapshot *s)
{
	size_t slot = h->n % HIST_CAP;
	char key[96];

	/* every GPU gets a value in this slot: NAN unless the sample has it */
	for (size_t i = 0; i < h->nr; i++)
		for (int m = 0; m < HM__COUNT; m++)
			h->gpu[i].v[m][slot] = NAN;
	for (size_t i = 0; i < s->nr_dev; i++) {
		const struct gpu_device *d = &s->dev[i];
		struct hist_gpu *g;

		device_key(key, sizeof(key), d);
		g = find(h, key);
		if (!g) {
			ALLOC_GROW(h->gpu, h->nr + 1, h->alloc);
			g = &h->gpu[h->nr++];
			str_copy(g->key, sizeof(g->key), key);
			for (int m = 0; m < HM__COUNT; m++)
				for (size_t k = 0; k < HIST_CAP; k++)
					g->v[m][k] = NAN;
		}
		if (d->state != DEV_OK)
			continue;
		for (int m = 0; m < HM__COUNT; m++)
			g->v[m][slot] = (float)history_metric_value(d, (enum hist_metric)m);
	}
	h->t[slot] = s->time;
	h->n++;
}

/* Slot of the sample ago before the newest of the first upto, or -1. */
static long
slot_of(const struct history *h, unsigned long upto, unsigned long ago)
{
	if (upto > h->n)
		upto = h->n;
	if (ago >= upto || h->n - (upto - ago) >= HIST_CAP)
		return -1;
	return (long)((upto - 1 - ago) % HIST_CAP);
}

double
history_get(const struct history *h, const struct hist_gpu *g, enum hist_metric m,
            unsigned long upto, unsigned long ago)
{
	long slot = slot_of(h, upto, ago);

	if (!g || slot < 0)
		return NAN;
	return g->v[m][slot];
}

double
history_time(const struct history *h, unsigned long upto, unsigned long ago)
{
	long slot = slot_of(h, upto, ago);

	return slot < 0 ? 0 : h->t[slot];
}

double
history_metric_max(const struct history *h, const struct hist_gpu *g, const struct gpu_device *d,
                   enum hist_metric m, unsigned long upto)
{
	double top = NAN, seen = 0;

	switch (m) {
	case HM_UTIL:
	case HM_MEM:
	case HM_MEM_UTIL:
		return 100;
	case HM_POWER:
		top = dev_get(d, GF_POWER_LIMIT);
		if (isnan(top))
			top = dev_get(d, GF_POWER_LIMIT_MAX);
		break;
	case HM_TEMP:
		top = dev_get(d, GF_TEMP_SHUTDOWN);
		if (isnan(top))
			top = dev_get(d, GF_TEMP_SLOWDOWN);
		break;
	case HM_CLOCK:
		top = !is_drm(d) && dev_has(d, GF_CLOCK_MAX_SM) ? d->v[GF_CLOCK_MAX_SM]
		                                                : dev_get(d, GF_CLOCK_MAX_GRAPHICS);
		break;
	case HM_MEM_CLOCK:
		top = dev_get(d, GF_CLOCK_MAX_MEM);
		break;
	case HM__COUNT:
		break;
	}
	/* a value above the nominal top (a boost, a reading past the limit) widens the scale */
	for (unsigned long k = 0; k < HIST_CAP; k++) {
		double v = history_get(h, g, m, upto, k);

		if (!isnan(v) && v > seen)
			seen = v;
	}
	if (isnan(top) || seen > top)
		top = seen;
	return top < 1 ? 1 : top;
}

const char *
history_metric_name(enum hist_metric m)
{
	static const char *const names[HM__COUNT] = {
		[HM_UTIL] = "GPU utilisation",       [HM_MEM] = "memory used",
		[HM_POWER] = "power draw",           [HM_TEMP] = "temperature",
		[HM_CLOCK] = "SM/graphics clock",    [HM_MEM_CLOCK] = "memory clock",
		[HM_MEM_UTIL] = "memory controller",
	};

	return (unsigned)m < HM__COUNT ? names[m] : "?";
}

const char *
history_metric_unit(enum hist_metric m, bool utf8)
{
	switch (m) {
	case HM_POWER:
		return "W";
	case HM_TEMP:
		return utf8 ? "\xc2\xb0"
		              "C"
		            : "C";
	case HM_CLOCK:
	case HM_MEM_CLOCK:
		return "MHz";
	case HM_UTIL:
	case HM_MEM:
	case HM_MEM_UTIL:
	case HM__COUNT:
		break;
	}
	return "%";
}
