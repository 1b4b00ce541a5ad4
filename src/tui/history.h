/*
 * The history behind top's charts: for every GPU, the last HIST_CAP values
 * of a few metrics, in one ring buffer per metric. All GPUs are pushed
 * together, one snapshot at a time, so slot k holds the same sample for
 * every GPU; an unknown value (or a GPU absent from that sample) is NAN and
 * is drawn as a gap, never as 0.
 */
#ifndef GPUSCOPE_TUI_HISTORY_H
#define GPUSCOPE_TUI_HISTORY_H

#include <stdbool.h>
#include <stddef.h>

struct gpu_device;
struct gpu_snapshot;

/* 10 minutes at the default interval of one second */
#define HIST_CAP 600

enum hist_metric {
	HM_UTIL,      /* GPU utilisation, percent */
	HM_MEM,       /* memory used, percent of total */
	HM_POWER,     /* power draw, watts */
	HM_TEMP,      /* GPU temperature, Celsius */
	HM_CLOCK,     /* SM clock (graphics clock for DRM GPUs), MHz */
	HM_MEM_CLOCK, /* memory clock, MHz */
	HM_MEM_UTIL,  /* memory controller utilisation, percent */
	HM__COUNT
};

struct hist_gpu {
	char key[96]; /* UUID, else PCI bus id, else "#index" */
	float v[HM__COUNT][HIST_CAP];
};

struct history {
	struct hist_gpu *gpu;
	size_t nr, alloc;
	unsigned long n;    /* samples pushed so far; slot of sample i is i % HIST_CAP */
	double t[HIST_CAP]; /* time of each slot's sample, seconds since the epoch */
};

void history_init(struct history *h);
void history_release(struct history *h);

/* Append one sample: every device of s (matched to earlier ones by key). */
void history_push(struct history *h, const struct gpu_snapshot *s);

/* The history of d, or NULL when none was pushed. */
const struct hist_gpu *history_find(const struct history *h, const struct gpu_device *d);

/*
 * Value of metric m, ago samples before the newest of those the first
 * `upto` samples hold (upto <= h->n; a frozen display passes its own), or
 * NAN when unknown or no longer held.
 */
double history_get(const struct history *h, const struct hist_gpu *g, enum hist_metric m,
                   unsigned long upto, unsigned long ago);

/* Time of that sample (0 when not held). */
double history_time(const struct history *h, unsigned long upto, unsigned long ago);

/* The metric's value in d now, or NAN. */
double history_metric_value(const struct gpu_device *d, enum hist_metric m);

/*
 * Top of the chart's scale for d: 100 for percentages, the power limit, the
 * shutdown (or slowdown) temperature, the maximum clock, or else the largest
 * value held; never below 1.
 */
double history_metric_max(const struct history *h, const struct hist_gpu *g,
                          const struct gpu_device *d, enum hist_metric m, unsigned long upto);

/* "GPU util", "memory used", ...; and the unit ("%", "W", "°C" or "C", "MHz"). */
const char *history_metric_name(enum hist_metric m);
const char *history_metric_unit(enum hist_metric m, bool utf8);

#endif
