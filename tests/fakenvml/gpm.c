/*
 * GPM, the performance monitoring of Hopper and later: samples stamped with
 * the scenario time, and metrics computed from two of them. A metric is the
 * value of its `gpm_*` key at the time of the later sample (the key is an
 * expression over time like any other), so that two readers with their own
 * samples at the same time see the same numbers.
 */
#include "fake.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "nvml_api.h"

/* samples live in a table, so that a freed or foreign one is told apart */
#define GPM_MAX_SAMPLES 512

struct gpm_sample {
	bool used;  /* allocated and not freed */
	bool taken; /* nvmlGpmSampleGet filled it */
	const struct gpu *gpu;
	unsigned int gpu_instance; /* of nvmlGpmMigSampleGet; 0: the whole GPU */
	double t;                  /* scenario time of the sample, wrapped */
	double order;              /* unwrapped, to tell which came first */
};

static struct gpm_sample samples[GPM_MAX_SAMPLES];
static pthread_mutex_t samples_mu = PTHREAD_MUTEX_INITIALIZER;

/* The metrics the fake computes: the key and the names the library reports. */
struct gpm_metric {
	unsigned int id;
	enum gpu_num key;
	char short_name[16], long_name[32], unit[8];
};

/* not const: NVML hands out its strings as char * */
static struct gpm_metric metrics[] = {
	{ NVML_GPM_METRIC_GRAPHICS_UTIL, GK_GPM_GRAPHICS_UTIL, "gr_util", "graphics activity",
	  "%" },
	{ NVML_GPM_METRIC_SM_UTIL, GK_GPM_SM_UTIL, "sm_util", "SM activity", "%" },
	{ NVML_GPM_METRIC_SM_OCCUPANCY, GK_GPM_SM_OCCUPANCY, "sm_occupancy", "SM occupancy", "%" },
	{ NVML_GPM_METRIC_ANY_TENSOR_UTIL, GK_GPM_TENSOR_UTIL, "tensor_util",
	  "tensor pipe activity (any)", "%" },
	{ NVML_GPM_METRIC_DRAM_BW_UTIL, GK_GPM_DRAM_BW_UTIL, "dram_bw_util",
	  "DRAM bandwidth utilization", "%" },
	{ NVML_GPM_METRIC_FP64_UTIL, GK_GPM_FP64_UTIL, "fp64_util", "FP64 pipe activity", "%" },
	{ NVML_GPM_METRIC_FP32_UTIL, GK_GPM_FP32_UTIL, "fp32_util", "FP32 pipe activity", "%" },
	{ NVML_GPM_METRIC_FP16_UTIL, GK_GPM_FP16_UTIL, "fp16_util", "FP16 pipe activity", "%" },
	{ NVML_GPM_METRIC_PCIE_TX_PER_SEC, GK_GPM_PCIE_TX, "pcie_tx", "PCIe transmit", "MiB/sec" },
	{ NVML_GPM_METRIC_PCIE_RX_PER_SEC, GK_GPM_PCIE_RX, "pcie_rx", "PCIe receive", "MiB/sec" },
	{ NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, GK_GPM_NVLINK_TX, "nvlink_tx",
	  "NVLink transmit, all links", "MiB/sec" },
	{ NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, GK_GPM_NVLINK_RX, "nvlink_rx",
	  "NVLink receive, all links", "MiB/sec" },
};

/*
 * Whether g has GPM: its gpm_supported key, or else whether it has any
 * gpm_* metric key (a scenario that gives values means a Hopper).
 */
static bool
gpm_supported(const struct gpu *g, double t)
{
	double v;

	if (g->num[GK_GPM_SUPPORTED])
		return expr_eval(g->num[GK_GPM_SUPPORTED], t, &v) == NVML_SUCCESS && v != 0;
	for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
		if (g->num[metrics[i].key])
			return true;
	return false;
}

/* The table entry of a handle; NULL for one not allocated here or freed. Under samples_mu. */
static struct gpm_sample *
sample_of(nvmlGpmSample_t s)
{
	uintptr_t p = (uintptr_t)s, base = (uintptr_t)samples;

	if (p < base || p >= base + sizeof(samples) || (p - base) % sizeof(samples[0]))
		return NULL;
	return samples[(p - base) / sizeof(samples[0])].used
	               ? &samples[(p - base) / sizeof(samples[0])]
	               : NULL;
}

FAKE_API nvmlReturn_t
nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t *gpmSupport)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS && !gpmSupport)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS && gpmSupport->version != NVML_GPM_SUPPORT_VERSION)
		rc = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	else if (rc == NVML_SUCCESS)
		gpmSupport->isSupportedDevice = gpm_supported(c.gpu, c.t);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlGpmSampleAlloc(nvmlGpmSample_t *gpmSample)
{
	struct call c;
	nvmlReturn_t rc = call_system(&c, __func__);
	size_t i;

	if (rc == NVML_SUCCESS && !gpmSample)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	if (rc != NVML_SUCCESS)
		return call_end(&c, rc);
	pthread_mutex_lock(&samples_mu);
	for (i = 0; i < GPM_MAX_SAMPLES && samples[i].used; i++)
		;
	if (i < GPM_MAX_SAMPLES) {
		memset(&samples[i], 0, sizeof(samples[i]));
		samples[i].used = true;
		*gpmSample = (nvmlGpmSample_t)(void *)&samples[i];
	} else {
		rc = NVML_ERROR_MEMORY;
	}
	pthread_mutex_unlock(&samples_mu);
	return call_end(&c, rc);
}

/* Like the real one, it needs no nvmlInit: it only releases memory. */
FAKE_API nvmlReturn_t
nvmlGpmSampleFree(nvmlGpmSample_t gpmSample)
{
	struct call c;
	struct gpm_sample *s;
	nvmlReturn_t rc = NVML_SUCCESS;

	(void)call_begin(&c, __func__);
	pthread_mutex_lock(&samples_mu);
	s = sample_of(gpmSample);
	if (s)
		s->used = false;
	else
		rc = NVML_ERROR_INVALID_ARGUMENT;
	pthread_mutex_unlock(&samples_mu);
	return call_end(&c, rc);
}

/* Stamps sample with the time of the call, for g (a GPU or, by gi, one of its instances). */
static nvmlReturn_t
take(struct call *c, const struct gpu *g, unsigned int gi, nvmlGpmSample_t gpmSample)
{
	struct gpm_sample *s;
	nvmlReturn_t rc = NVML_SUCCESS;

	if (!gpm_supported(g, c->t))
		return NVML_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&samples_mu);
	s = sample_of(gpmSample);
	if (s) {
		s->taken = true;
		s->gpu = g;
		s->gpu_instance = gi;
		s->t = c->t;
		s->order = fake_time(c->sc, false);
	} else {
		rc = NVML_ERROR_INVALID_ARGUMENT;
	}
	pthread_mutex_unlock(&samples_mu);
	return rc;
}

FAKE_API nvmlReturn_t
nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t gpmSample)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = take(&c, c.gpu, 0, gpmSample);
	return call_end(&c, rc);
}

/* A MIG instance's own sample: the keys of its [mig] section. */
FAKE_API nvmlReturn_t
nvmlGpmMigSampleGet(nvmlDevice_t device, unsigned int gpuInstanceId, nvmlGpmSample_t gpmSample)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);
	const struct gpu *mig = NULL;

	if (rc == NVML_SUCCESS && c.gpu->parent)
		rc = NVML_ERROR_INVALID_ARGUMENT; /* it takes the parent's handle */
	for (unsigned int i = 0; rc == NVML_SUCCESS && i < c.gpu->nr_mig && !mig; i++)
		if (c.gpu->mig[i]->gpu_instance == gpuInstanceId)
			mig = c.gpu->mig[i];
	if (rc == NVML_SUCCESS && !mig)
		rc = c.gpu->nr_mig ? NVML_ERROR_NOT_FOUND : NVML_ERROR_NOT_SUPPORTED;
	if (rc == NVML_SUCCESS)
		rc = take(&c, mig, gpuInstanceId, gpmSample);
	return call_end(&c, rc);
}

static struct gpm_metric *
metric_by_id(unsigned int id)
{
	for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
		if (metrics[i].id == id)
			return &metrics[i];
	return NULL;
}

FAKE_API nvmlReturn_t
nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *metricsGet)
{
	struct call c;
	nvmlReturn_t rc = call_system(&c, __func__);
	struct gpm_sample s1 = { 0 }, s2 = { 0 }, *p1, *p2;

	if (rc == NVML_SUCCESS && !metricsGet)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS && metricsGet->version != NVML_GPM_METRICS_GET_VERSION)
		rc = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	else if (rc == NVML_SUCCESS && metricsGet->numMetrics > NVML_GPM_METRIC_MAX)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	if (rc != NVML_SUCCESS)
		return call_end(&c, rc);
	pthread_mutex_lock(&samples_mu);
	p1 = sample_of(metricsGet->sample1);
	p2 = sample_of(metricsGet->sample2);
	if (p1 && p2) {
		s1 = *p1;
		s2 = *p2;
	}
	pthread_mutex_unlock(&samples_mu);
	/* two samples taken, of the same device, the first no later than the second */
	if (!p1 || !p2 || !s1.taken || !s2.taken || s1.gpu != s2.gpu ||
	    s1.gpu_instance != s2.gpu_instance || s2.order < s1.order)
		return call_end(&c, NVML_ERROR_INVALID_ARGUMENT);
	rc = call_faults(&c, s2.gpu);
	for (unsigned int i = 0; rc == NVML_SUCCESS && i < metricsGet->numMetrics; i++) {
		nvmlGpmMetric_t *m = &metricsGet->metrics[i];
		struct gpm_metric *d = metric_by_id(m->metricId);
		double v = 0;

		memset(&m->metricInfo, 0, sizeof(m->metricInfo));
		m->value = 0;
		if (!d) {
			m->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
			continue;
		}
		m->metricInfo.shortName = d->short_name;
		m->metricInfo.longName = d->long_name;
		m->metricInfo.unit = d->unit;
		m->nvmlReturn = expr_eval(s2.gpu->num[d->key], s2.t, &v);
		if (m->nvmlReturn == NVML_SUCCESS)
			m->value = v;
	}
	return call_end(&c, rc);
}
