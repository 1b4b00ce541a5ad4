/*
 * What the GPUs did while bench and burn ran: a thread takes a sample of
 * every device (the collector, backend/collect.h: NVML, DRM) every period
 * and keeps, per device, the clocks, power, temperature, clock event
 * reasons and PCIe link of the last hour; a window of it (one test) is
 * summed up as minimum, mean and maximum, so a figure that suffered can say
 * why (the SM clock held at 1395 MHz by the power cap, a link trained to
 * Gen3 x8). A device the collector does not see (PoCL, a GPU without NVML)
 * simply has no observations.
 */
#ifndef GPUSCOPE_BENCH_SAMPLE_H
#define GPUSCOPE_BENCH_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>

struct err;
struct gs_config;
struct gpu_device;
struct bench_sampler;

/* A window's summary; known false when no sample fell in it. */
struct bench_obs {
	bool known;
	unsigned samples;
	double sm_min, sm_mean, sm_max;   /* MHz, NAN when not read */
	double mem_mean;                  /* MHz */
	double power_mean, power_max;     /* W */
	double power_limit;               /* W, the enforced limit seen last */
	double temp_max;                  /* C */
	unsigned reasons;                 /* every clock event reason seen (enum clock_reason) */
	unsigned reasons_busy;            /* the same, idle left out: what held a busy GPU down */
	int pcie_gen_min, pcie_width_min; /* the lowest link seen (0: not read) */
	int pcie_gen_max, pcie_width_max; /* the best the link can do (0: not read) */
};

/*
 * Open the collector on cfg and start sampling every period seconds. NULL
 * with err set when the collector cannot be opened; a machine without GPUs
 * the collector sees still gives a sampler, with no devices.
 */
struct bench_sampler *bench_sampler_start(const struct gs_config *cfg, double period,
                                          struct err *err);
void bench_sampler_stop(struct bench_sampler *s);

/* The sampler's device for a UUID ("GPU-...") or PCI bus id (any spelling), or -1. */
int bench_sampler_find(struct bench_sampler *s, const char *uuid, const char *pci_bus_id);
/* The seconds (clock_mono()) on the sampler's clock: for windows. */
double bench_sampler_now(void);
/* Sum up device dev's samples taken between t0 and t1. */
void bench_sampler_window(struct bench_sampler *s, int dev, double t0, double t1,
                          struct bench_obs *obs);
/* A copy of device dev as last sampled (false when none yet). */
bool bench_sampler_latest(struct bench_sampler *s, int dev, struct gpu_device *out);
/*
 * "power cap, HW slowdown" for the reasons of mask that hold clocks down
 * (idle and display clocks left out); "" when none.
 */
void bench_reasons_str(unsigned mask, char *buf, size_t size);

#endif
