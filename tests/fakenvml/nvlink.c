/*
 * NVLink counters and clock violation counters of the fake NVML.
 *
 * The links are those of `nvlink_peers` (topology.c): with the key, every
 * link number below NVML_NVLINK_MAX_LINKS is there; those of the list are
 * up, unless the bitmask `nvlink_down` takes them down at the call's time,
 * and the rest are down. A counter key (`nvlink_tx`, `nvlink_crc_flit`, ...)
 * is one expression for all links: link n answers (n + 1) times its value,
 * so that links tell apart, when the link has a peer in `nvlink_peers`, and
 * 0 when it has none (it never came up). An absent counter key answers
 * NOT_SUPPORTED on every link.
 */
#include "fake.h"

#include <string.h>

#include "nvml_api.h"

nvmlReturn_t
fake_nvlink_link(const struct call *c, unsigned int link, bool *active)
{
	const struct gpu *g = c->gpu;
	double down = 0;

	if (!g->has_nvlink)
		return NVML_ERROR_NOT_SUPPORTED;
	if (link >= NVML_NVLINK_MAX_LINKS)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (g->num[GK_NVLINK_DOWN] &&
	    expr_eval(g->num[GK_NVLINK_DOWN], c->t, &down) != NVML_SUCCESS)
		down = 0;
	*active = link < g->nr_nvlinks && !(to_ull(down) >> link & 1);
	return NVML_SUCCESS;
}

/* Counter key k of link `link` at the call's time. */
static nvmlReturn_t
link_counter(const struct call *c, unsigned int link, enum gpu_num k, unsigned long long *out)
{
	nvmlReturn_t rc;
	bool active;
	double v;

	rc = fake_nvlink_link(c, link, &active);
	if (rc != NVML_SUCCESS)
		return rc;
	rc = expr_eval(c->gpu->num[k], c->t, &v);
	if (rc != NVML_SUCCESS)
		return rc;
	*out = link < c->gpu->nr_nvlinks ? to_ull(v * (link + 1)) : 0;
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t
nvmlDeviceGetNvLinkVersion(nvmlDevice_t device, unsigned int link, unsigned int *version)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);
	bool active;
	double v;

	if (rc == NVML_SUCCESS && !version)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	if (rc == NVML_SUCCESS)
		rc = fake_nvlink_link(&c, link, &active);
	if (rc == NVML_SUCCESS)
		rc = expr_eval(c.gpu->num[GK_NVLINK_VERSION], c.t, &v);
	if (rc == NVML_SUCCESS)
		*version = to_uint(v);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t device, unsigned int link,
                                nvmlNvLinkErrorCounter_t counter, unsigned long long *counterValue)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS && !counterValue)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	/* 4 is the ECC counter of NVLink 2, which scenarios do not have */
	else if (rc == NVML_SUCCESS && counter > NVML_NVLINK_ERROR_DL_CRC_DATA)
		rc = counter == 4 ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_INVALID_ARGUMENT;
	if (rc == NVML_SUCCESS)
		rc = link_counter(&c, link, GK_NVLINK_REPLAY + counter, counterValue);
	return call_end(&c, rc);
}

void
fake_nvlink_field(const struct call *c, nvmlFieldValue_t *fv)
{
	enum gpu_num k =
	        fv->fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX ? GK_NVLINK_TX : GK_NVLINK_RX;
	unsigned long long v;

	fv->nvmlReturn = link_counter(c, fv->scopeId, k, &v);
	if (fv->nvmlReturn != NVML_SUCCESS)
		return;
	fv->valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
	fv->value.ullVal = v;
}

FAKE_API nvmlReturn_t
nvmlDeviceGetViolationStatus(nvmlDevice_t device, nvmlPerfPolicyType_t perfPolicyType,
                             nvmlViolationTime_t *violTime)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);
	enum gpu_num k = GK__COUNT;
	double v;

	if (perfPolicyType <= NVML_PERF_POLICY_RELIABILITY)
		k = GK_VIOL_POWER + perfPolicyType;
	else if (perfPolicyType == NVML_PERF_POLICY_TOTAL_APP_CLOCKS)
		k = GK_VIOL_APP_CLOCKS;
	else if (perfPolicyType == NVML_PERF_POLICY_TOTAL_BASE_CLOCKS)
		k = GK_VIOL_BASE_CLOCKS;
	if (rc == NVML_SUCCESS && (!violTime || k == GK__COUNT))
		rc = NVML_ERROR_INVALID_ARGUMENT;
	if (rc == NVML_SUCCESS)
		rc = expr_eval(c.gpu->num[k], c.t, &v);
	if (rc == NVML_SUCCESS) {
		violTime->referenceTime = call_wall_us(&c);
		violTime->violationTime = to_ull(v);
	}
	return call_end(&c, rc);
}
