/*
 * The per-device queries of the fake NVML: identity, PCI, thermals, power,
 * memory, utilisation, clocks, PCIe, modes and health, each answered from
 * the [gpu] section of the scenario at the time of the call.
 */
#include "fake.h"

#include <limits.h>
#include <string.h>

#include "nvml_api.h"

/* the first nvmlPciInfo_t (FAKE_PCI_INFO_V1_SIZE) is a prefix of today's */
_Static_assert(offsetof(nvmlPciInfo_t, busIdLegacy) == 0, "v1 busId lies where busIdLegacy is");
_Static_assert(FAKE_PCI_INFO_V1_SIZE <= sizeof(nvmlPciInfo_t), "v1 is the shorter");

/* NVML reports encoder, decoder, JPEG and OFA use over this window */
#define CODEC_SAMPLING_US 167000

static nvmlReturn_t
num(const struct call *c, enum gpu_num k, double *v)
{
	return expr_eval(c->gpu->num[k], c->t, v);
}

static nvmlReturn_t
get_uint(const struct call *c, enum gpu_num k, unsigned int *out)
{
	nvmlReturn_t rc;
	double v;

	if (!out)
		return NVML_ERROR_INVALID_ARGUMENT;
	rc = num(c, k, &v);
	if (rc == NVML_SUCCESS)
		*out = to_uint(v);
	return rc;
}

static nvmlReturn_t
get_ull(const struct call *c, enum gpu_num k, unsigned long long *out)
{
	nvmlReturn_t rc;
	double v;

	if (!out)
		return NVML_ERROR_INVALID_ARGUMENT;
	rc = num(c, k, &v);
	if (rc == NVML_SUCCESS)
		*out = to_ull(v);
	return rc;
}

/* two keys that NVML returns together: both or nothing */
static nvmlReturn_t
get_uint_pair(const struct call *c, enum gpu_num k1, unsigned int *out1, enum gpu_num k2,
              unsigned int *out2)
{
	unsigned int v1, v2;
	nvmlReturn_t rc;

	if (!out1 || !out2)
		return NVML_ERROR_INVALID_ARGUMENT;
	rc = get_uint(c, k1, &v1);
	if (rc == NVML_SUCCESS)
		rc = get_uint(c, k2, &v2);
	if (rc == NVML_SUCCESS) {
		*out1 = v1;
		*out2 = v2;
	}
	return rc;
}

/* a mode and its pending value, which defaults to the mode */
static nvmlReturn_t
get_mode(const struct call *c, enum gpu_num k, enum gpu_num k_pending, unsigned int *current,
         unsigned int *pending)
{
	if (!c->gpu->num[k_pending])
		k_pending = k;
	return get_uint_pair(c, k, current, k_pending, pending);
}

static nvmlReturn_t
get_string(const struct call *c, enum gpu_str k, char *buf, unsigned int length)
{
	return put_string(c->gpu->str[k], buf, length);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_string(&c, GS_NAME, name, length);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_string(&c, GS_UUID, uuid, length);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetSerial(nvmlDevice_t device, char *serial, unsigned int length)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_string(&c, GS_SERIAL, serial, length);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetVbiosVersion(nvmlDevice_t device, char *version, unsigned int length)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_string(&c, GS_VBIOS, version, length);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetInforomImageVersion(nvmlDevice_t device, char *version, unsigned int length)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_string(&c, GS_INFOROM_IMAGE, version, length);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetBoardPartNumber(nvmlDevice_t device, char *partNumber, unsigned int length)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_string(&c, GS_BOARD_PART_NUMBER, partNumber, length);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetBrand(nvmlDevice_t device, nvmlBrandType_t *type)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_BRAND, type);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetArchitecture(nvmlDevice_t device, nvmlDeviceArchitecture_t *arch)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_ARCHITECTURE, arch);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minorNumber)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS && !minorNumber)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS && !c.gpu->num[GK_MINOR_NUMBER])
		*minorNumber = c.gpu->index; /* /dev/nvidiaN in the order of the sections */
	else if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_MINOR_NUMBER, minorNumber);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS && !index)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS)
		*index = c.gpu->index;
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS && (!major || !minor))
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS && !c.gpu->has_compute_cap)
		rc = NVML_ERROR_NOT_SUPPORTED;
	if (rc == NVML_SUCCESS) {
		*major = c.gpu->cc_major;
		*minor = c.gpu->cc_minor;
	}
	return call_end(&c, rc);
}

/*
 * The plain name dates from the first nvmlPciInfo_t, 52 bytes with a 16-byte
 * busId where busIdLegacy is now: an old caller's struct is that short, so
 * only that much is written. _v2 and _v3 fill today's 68 bytes.
 */
nvmlReturn_t
gpu_pci_info(const struct gpu *g, nvmlPciInfo_t *pci, bool v1)
{
	if (!pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(pci, 0, v1 ? FAKE_PCI_INFO_V1_SIZE : sizeof(*pci));
	memcpy(pci->busIdLegacy, g->bus_id_legacy, sizeof(pci->busIdLegacy));
	pci->domain = g->pci_domain;
	pci->bus = g->pci_bus;
	pci->device = g->pci_device;
	pci->pciDeviceId = g->pci_device_id;
	pci->pciSubSystemId = g->pci_subsystem_id;
	if (!v1)
		memcpy(pci->busId, g->bus_id, sizeof(pci->busId));
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t
nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = gpu_pci_info(c.gpu, pci, true);
	return call_end(&c, rc);
}

#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t
nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = gpu_pci_info(c.gpu, pci, false);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = gpu_pci_info(c.gpu, pci, false);
	return call_end(&c, rc);
}
#endif

FAKE_API nvmlReturn_t
nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
                         unsigned int *temp)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS && sensorType != NVML_TEMPERATURE_GPU)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_TEMPERATURE, temp);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_v1_t *temperature)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);
	double v;

	if (rc == NVML_SUCCESS && !temperature)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS && temperature->version != nvmlTemperature_v1)
		rc = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	else if (rc == NVML_SUCCESS && temperature->sensorType != NVML_TEMPERATURE_GPU)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS)
		rc = num(&c, GK_TEMPERATURE, &v);
	if (rc == NVML_SUCCESS)
		temperature->temperature = to_int(v);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device, nvmlTemperatureThresholds_t thresholdType,
                                  unsigned int *temp)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	/* the acoustic and GPS thresholds are not in scenarios */
	if (rc == NVML_SUCCESS && thresholdType > NVML_TEMPERATURE_THRESHOLD_GPU_MAX)
		rc = NVML_ERROR_NOT_SUPPORTED;
	else if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_TEMP_SHUTDOWN + thresholdType, temp);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetMarginTemperature(nvmlDevice_t device, nvmlMarginTemperature_v1_t *marginTempInfo)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);
	double v;

	if (rc == NVML_SUCCESS && !marginTempInfo)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS && marginTempInfo->version != nvmlMarginTemperature_v1)
		rc = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	else if (rc == NVML_SUCCESS)
		rc = num(&c, GK_TEMP_MARGIN, &v);
	if (rc == NVML_SUCCESS)
		marginTempInfo->marginTemperature = to_int(v);
	return call_end(&c, rc);
}

/* num_fans, or one fan when only fan_speed is given */
static nvmlReturn_t
fan_count(const struct call *c, unsigned int *n)
{
	if (c->gpu->num[GK_NUM_FANS])
		return get_uint(c, GK_NUM_FANS, n);
	if (!c->gpu->num[GK_FAN_SPEED])
		return NVML_ERROR_NOT_SUPPORTED;
	*n = 1;
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t
nvmlDeviceGetNumFans(nvmlDevice_t device, unsigned int *numFans)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS && !numFans)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS)
		rc = fan_count(&c, numFans);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int *speed)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_FAN_SPEED, speed);
	return call_end(&c, rc);
}

#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t
nvmlDeviceGetFanSpeed_v2(nvmlDevice_t device, unsigned int fan, unsigned int *speed)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);
	unsigned int n = 0;

	if (rc == NVML_SUCCESS && !speed)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS && c.gpu->num[GK_FAN_SPEED] &&
	         fan_count(&c, &n) == NVML_SUCCESS && fan >= n)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_FAN_SPEED, speed); /* every fan turns alike */
	return call_end(&c, rc);
}
#endif

FAKE_API nvmlReturn_t
nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_POWER_USAGE, power);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_POWER_LIMIT_ENFORCED, limit);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int *limit)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_POWER_LIMIT, limit);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned int *defaultLimit)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_POWER_LIMIT_DEFAULT, defaultLimit);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device, unsigned int *minLimit,
                                             unsigned int *maxLimit)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_uint_pair(&c, GK_POWER_LIMIT_MIN, minLimit, GK_POWER_LIMIT_MAX, maxLimit);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_ull(&c, GK_ENERGY, energy);
	return call_end(&c, rc);
}

/*
 * total, reserved (0 when absent) and used without reserved, in bytes; used
 * holds what the live processes of live_dir hold on the GPU (live.c) too.
 */
static nvmlReturn_t
memory_values(const struct call *c, unsigned long long *total, unsigned long long *reserved,
              unsigned long long *used)
{
	nvmlReturn_t rc = get_ull(c, GK_MEMORY_TOTAL, total);

	if (rc == NVML_SUCCESS)
		rc = get_ull(c, GK_MEMORY_USED, used);
	*reserved = 0;
	if (rc == NVML_SUCCESS && c->gpu->num[GK_MEMORY_RESERVED])
		rc = get_ull(c, GK_MEMORY_RESERVED, reserved);
	if (rc == NVML_SUCCESS && c->sc->live_dir) {
		struct live_list live;
		unsigned long long more;

		live_read(c->sc, &live);
		more = live_used(&live, c->gpu->index);
		*used = more > ULLONG_MAX - *used ? ULLONG_MAX : *used + more;
		live_free(&live);
	}
	return rc;
}

static unsigned long long
sub_sat(unsigned long long a, unsigned long long b)
{
	return a > b ? a - b : 0;
}

/* The first struct: used counts driver-reserved memory in. */
FAKE_API nvmlReturn_t
nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);
	unsigned long long total, reserved, used;

	if (rc == NVML_SUCCESS && !memory)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS)
		rc = memory_values(&c, &total, &reserved, &used);
	if (rc == NVML_SUCCESS) {
		memory->total = total;
		memory->used = used + reserved;
		memory->free = sub_sat(total, used + reserved);
		if (c.gpu->num[GK_MEMORY_FREE])
			rc = get_ull(&c, GK_MEMORY_FREE, &memory->free);
	}
	return call_end(&c, rc);
}

#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t
nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);
	unsigned long long total, reserved, used;

	if (rc == NVML_SUCCESS && !memory)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS && memory->version != nvmlMemory_v2)
		rc = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	else if (rc == NVML_SUCCESS)
		rc = memory_values(&c, &total, &reserved, &used);
	if (rc == NVML_SUCCESS) {
		memory->total = total;
		memory->reserved = reserved;
		memory->used = used;
		memory->free = sub_sat(total, reserved + used);
		if (c.gpu->num[GK_MEMORY_FREE])
			rc = get_ull(&c, GK_MEMORY_FREE, &memory->free);
	}
	return call_end(&c, rc);
}
#endif

FAKE_API nvmlReturn_t
nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t *bar1Memory)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);
	unsigned long long total, used;

	if (rc == NVML_SUCCESS && !bar1Memory)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS)
		rc = get_ull(&c, GK_BAR1_TOTAL, &total);
	if (rc == NVML_SUCCESS)
		rc = get_ull(&c, GK_BAR1_USED, &used);
	if (rc == NVML_SUCCESS) {
		bar1Memory->bar1Total = total;
		bar1Memory->bar1Used = used;
		bar1Memory->bar1Free = sub_sat(total, used);
	}
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS && !utilization)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS)
		rc = get_uint_pair(&c, GK_UTIL_GPU, &utilization->gpu, GK_UTIL_MEMORY,
		                   &utilization->memory);
	return call_end(&c, rc);
}

static nvmlReturn_t
codec_util(const struct call *c, enum gpu_num k, unsigned int *utilization,
           unsigned int *samplingPeriodUs)
{
	nvmlReturn_t rc;

	if (!utilization || !samplingPeriodUs)
		return NVML_ERROR_INVALID_ARGUMENT;
	rc = get_uint(c, k, utilization);
	if (rc == NVML_SUCCESS)
		*samplingPeriodUs = CODEC_SAMPLING_US;
	return rc;
}

FAKE_API nvmlReturn_t
nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                unsigned int *samplingPeriodUs)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = codec_util(&c, GK_UTIL_ENCODER, utilization, samplingPeriodUs);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                unsigned int *samplingPeriodUs)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = codec_util(&c, GK_UTIL_DECODER, utilization, samplingPeriodUs);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetJpgUtilization(nvmlDevice_t device, unsigned int *utilization,
                            unsigned int *samplingPeriodUs)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = codec_util(&c, GK_UTIL_JPEG, utilization, samplingPeriodUs);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetOfaUtilization(nvmlDevice_t device, unsigned int *utilization,
                            unsigned int *samplingPeriodUs)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = codec_util(&c, GK_UTIL_OFA, utilization, samplingPeriodUs);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS && type > NVML_CLOCK_VIDEO)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_CLOCK_GRAPHICS + type, clock);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS && type > NVML_CLOCK_VIDEO)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_MAX_CLOCK_GRAPHICS + type, clock);
	return call_end(&c, rc);
}

/* nvmlClockId_t: CURRENT 0, APP_CLOCK_TARGET 1, APP_CLOCK_DEFAULT 2, CUSTOMER_BOOST_MAX 3 */
#define CLOCK_ID_CURRENT 0
#define CLOCK_ID_LAST    3

FAKE_API nvmlReturn_t
nvmlDeviceGetClock(nvmlDevice_t device, nvmlClockType_t clockType, nvmlClockId_t clockId,
                   unsigned int *clockMHz)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS && (clockType > NVML_CLOCK_VIDEO || clockId > CLOCK_ID_LAST))
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS && clockId != CLOCK_ID_CURRENT)
		rc = NVML_ERROR_NOT_SUPPORTED; /* application clocks are not in scenarios */
	else if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_CLOCK_GRAPHICS + clockType, clockMHz);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t *pState)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_PSTATE, pState);
	return call_end(&c, rc);
}

#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t
nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *clocksEventReasons)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_ull(&c, GK_CLOCKS_EVENT_REASONS, clocksEventReasons);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetSupportedClocksEventReasons(nvmlDevice_t device,
                                         unsigned long long *supportedClocksEventReasons)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_ull(&c, GK_CLOCKS_EVENT_REASONS_SUPPORTED, supportedClocksEventReasons);
	return call_end(&c, rc);
}
#endif

FAKE_API nvmlReturn_t
nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                          unsigned long long *clocksThrottleReasons)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_ull(&c, GK_CLOCKS_EVENT_REASONS, clocksThrottleReasons);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetSupportedClocksThrottleReasons(nvmlDevice_t device,
                                            unsigned long long *supportedClocksThrottleReasons)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_ull(&c, GK_CLOCKS_EVENT_REASONS_SUPPORTED, supportedClocksThrottleReasons);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int *currLinkGen)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_PCIE_GEN, currLinkGen);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int *maxLinkGen)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_PCIE_GEN_MAX, maxLinkGen);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int *maxLinkGenDevice)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_PCIE_GEN_GPU_MAX, maxLinkGenDevice);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int *currLinkWidth)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_PCIE_WIDTH, currLinkWidth);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int *maxLinkWidth)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_PCIE_WIDTH_MAX, maxLinkWidth);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned int *value)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_PCIE_REPLAY, value);
	return call_end(&c, rc);
}

/* NVIDIA's samples the link for 20 ms; the fake answers at once (use `delay`) */
FAKE_API nvmlReturn_t
nvmlDeviceGetPcieThroughput(nvmlDevice_t device, nvmlPcieUtilCounter_t counter, unsigned int *value)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS && counter > NVML_PCIE_UTIL_RX_BYTES)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS)
		rc = get_uint(&c, counter == NVML_PCIE_UTIL_TX_BYTES ? GK_PCIE_TX : GK_PCIE_RX,
		              value);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t *mode)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_PERSISTENCE_MODE, mode);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t *mode)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_COMPUTE_MODE, mode);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetDisplayMode(nvmlDevice_t device, nvmlEnableState_t *display)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_DISPLAY_MODE, display);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetDisplayActive(nvmlDevice_t device, nvmlEnableState_t *isActive)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_DISPLAY_ACTIVE, isActive);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode, unsigned int *pendingMode)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_mode(&c, GK_MIG_MODE, GK_MIG_MODE_PENDING, currentMode, pendingMode);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t *current, nvmlEnableState_t *pending)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_mode(&c, GK_ECC_MODE, GK_ECC_MODE_PENDING, current, pending);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                            nvmlEccCounterType_t counterType, unsigned long long *eccCounts)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS &&
	    (errorType > NVML_MEMORY_ERROR_TYPE_UNCORRECTED || counterType > NVML_AGGREGATE_ECC))
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS)
		rc = get_ull(&c, GK_ECC_CORRECTED_VOLATILE + 2 * counterType + errorType,
		             eccCounts);
	return call_end(&c, rc);
}

/* where the fake says page i retired for a cause: distinct, page-aligned, stable */
static unsigned long long
retired_address(nvmlPageRetirementCause_t cause, unsigned int i)
{
	return 0x100000000ULL * (cause + 1) + 0x1000ULL * i;
}

/* the two-call pattern: *pageCount too small gives the count needed */
FAKE_API nvmlReturn_t
nvmlDeviceGetRetiredPages(nvmlDevice_t device, nvmlPageRetirementCause_t cause,
                          unsigned int *pageCount, unsigned long long *addresses)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);
	unsigned int n = 0;

	if (rc == NVML_SUCCESS &&
	    (!pageCount || cause > NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR))
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_RETIRED_SBE + cause, &n);
	if (rc == NVML_SUCCESS && *pageCount < n)
		rc = NVML_ERROR_INSUFFICIENT_SIZE;
	else if (rc == NVML_SUCCESS && n > 0 && !addresses)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	if (rc == NVML_SUCCESS)
		for (unsigned int i = 0; i < n; i++)
			addresses[i] = retired_address(cause, i);
	if (rc == NVML_SUCCESS || rc == NVML_ERROR_INSUFFICIENT_SIZE)
		*pageCount = n;
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device, nvmlEnableState_t *isPending)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = get_uint(&c, GK_RETIRED_PENDING, isPending);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows, unsigned int *uncRows,
                          unsigned int *isPending, unsigned int *failureOccurred)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);
	unsigned int v[4];

	if (rc == NVML_SUCCESS && (!corrRows || !uncRows || !isPending || !failureOccurred))
		rc = NVML_ERROR_INVALID_ARGUMENT;
	for (int i = 0; i < 4 && rc == NVML_SUCCESS; i++)
		rc = get_uint(&c, GK_REMAPPED_CORR + i, &v[i]);
	if (rc == NVML_SUCCESS) {
		*corrRows = v[0];
		*uncRows = v[1];
		*isPending = v[2];
		*failureOccurred = v[3];
	}
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetEncoderStats(nvmlDevice_t device, unsigned int *sessionCount, unsigned int *averageFps,
                          unsigned int *averageLatency)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);
	unsigned int v[3];

	if (rc == NVML_SUCCESS && (!sessionCount || !averageFps || !averageLatency))
		rc = NVML_ERROR_INVALID_ARGUMENT;
	for (int i = 0; i < 3 && rc == NVML_SUCCESS; i++)
		rc = get_uint(&c, GK_ENCODER_SESSIONS + i, &v[i]);
	if (rc == NVML_SUCCESS) {
		*sessionCount = v[0];
		*averageFps = v[1];
		*averageLatency = v[2];
	}
	return call_end(&c, rc);
}

/* one entry of nvmlDeviceGetFieldValues: its own return code, its own type */
static void
field_value(const struct call *c, unsigned long long now_us, nvmlFieldValue_t *fv)
{
	nvmlValueType_t type = NVML_VALUE_TYPE_UNSIGNED_INT;
	enum gpu_num k;
	double v;

	fv->timestamp = (long long)now_us;
	fv->latencyUsec = 0;
	memset(&fv->value, 0, sizeof(fv->value));
	switch (fv->fieldId) {
	case NVML_FI_DEV_MEMORY_TEMP:
		k = GK_MEMORY_TEMPERATURE;
		break;
	case NVML_FI_DEV_PCIE_REPLAY_COUNTER:
		k = GK_PCIE_REPLAY;
		type = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
		break;
	case NVML_FI_DEV_POWER_AVERAGE:
	case NVML_FI_DEV_POWER_INSTANT:
		/* scope 0 is the GPU; module and memory power are not in scenarios */
		if (fv->scopeId != 0) {
			fv->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
			return;
		}
		if (fv->fieldId == NVML_FI_DEV_POWER_INSTANT)
			k = GK_POWER_INSTANT;
		else
			k = c->gpu->num[GK_POWER_AVERAGE] ? GK_POWER_AVERAGE : GK_POWER_USAGE;
		break;
	case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX:
	case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX:
		fake_nvlink_field(c, fv);
		return;
	default:
		fv->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
		return;
	}
	fv->nvmlReturn = num(c, k, &v);
	if (fv->nvmlReturn != NVML_SUCCESS)
		return;
	fv->valueType = type;
	if (type == NVML_VALUE_TYPE_UNSIGNED_INT)
		fv->value.uiVal = to_uint(v);
	else
		fv->value.ullVal = to_ull(v);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS && (valuesCount < 0 || (valuesCount > 0 && !values)))
		rc = NVML_ERROR_INVALID_ARGUMENT;
	if (rc == NVML_SUCCESS) {
		unsigned long long now_us = call_wall_us(&c);

		for (int i = 0; i < valuesCount; i++)
			field_value(&c, now_us, &values[i]);
	}
	return call_end(&c, rc);
}
