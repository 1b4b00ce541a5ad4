/*
 * Prometheus text exposition format (version 0.0.4) of one snapshot of the
 * sample model: the metrics of `gpuscope serve`, which docs/metrics.md lists.
 *
 * Every metric family has one # HELP and one # TYPE line followed by all of
 * its samples; values are in base units (bytes, watts, celsius, hertz,
 * seconds, ratios 0-1); a value that could not be read is left out, never
 * written as a sentinel.
 */
#ifndef GPUSCOPE_PROM_H
#define GPUSCOPE_PROM_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf;
struct gpu_snapshot;

/* The content types of what prom_write() writes, without and with opts.openmetrics. */
#define PROM_CONTENT_TYPE             "text/plain; version=0.0.4; charset=utf-8"
#define PROM_OPENMETRICS_CONTENT_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* doctor's findings of one id and severity: gpuscope_finding{id,severity} count */
struct prom_finding {
	const char *id;
	const char *severity; /* "info", "warning", "error" */
	unsigned count;
};

struct prom_opts {
	unsigned max_procs;           /* top N processes by GPU memory, across all GPUs; 0: none */
	double collect_seconds;       /* the exporter's own last collection time; NAN: unknown */
	unsigned long collect_errors; /* collections that failed since the exporter started */
	/* OpenMetrics 1.0 instead of the text format 0.0.4: counter families named without
	 * "_total", '"' escaped in HELP, "# EOF" at the end */
	bool openmetrics;
	/* doctor's current findings (only when findings_known: doctor has run) */
	const struct prom_finding *findings;
	size_t nr_findings;
	bool findings_known;
};

/* Append the exposition of s to sb. */
void prom_write(struct strbuf *sb, const struct gpu_snapshot *s, const struct prom_opts *o);

/*
 * Append the exposition of s under NVIDIA dcgm-exporter's names (`serve
 * --names dcgm`, src/front/prom_dcgm.c): its default counters (and the
 * commented-out ones of its default-counters.csv that gpuscope reads), its
 * types, units (MiB, MHz, W, mJ, %, ns, ratios 0-1 for DCGM_FI_PROF_*) and
 * labels (gpu, UUID, pci_bus_id, device, modelName, GPU_I_PROFILE, GPU_I_ID,
 * Hostname, DCGM_FI_DRIVER_VERSION, container, namespace, pod, hpc_job). Text
 * format 0.0.4 only, as dcgm-exporter; docs/metrics.md maps every counter.
 */
void prom_write_dcgm(struct strbuf *sb, const struct gpu_snapshot *s);

/* Append v as a label value: backslash, double quote and newline escaped (no quotes added). */
void prom_label_value(struct strbuf *sb, const char *v);

#endif
