/*
 * System-wide queries of the fake NVML ([system] versions, the GPU count)
 * and the ways to obtain a device handle: by index, UUID, serial, PCI bus id.
 */
#include "fake.h"

#include <stdio.h>
#include <string.h>

#include "nvml_api.h"

FAKE_API nvmlReturn_t
nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	struct call c;
	nvmlReturn_t rc = call_system(&c, __func__);

	if (rc == NVML_SUCCESS)
		rc = put_string(c.sc->driver_version, version, length);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
	struct call c;
	nvmlReturn_t rc = call_system(&c, __func__);

	if (rc == NVML_SUCCESS)
		rc = put_string(c.sc->nvml_version, version, length);
	return call_end(&c, rc);
}

static nvmlReturn_t
cuda_version(const struct call *c, int *cudaDriverVersion)
{
	nvmlReturn_t rc;
	double v;

	if (!cudaDriverVersion)
		return NVML_ERROR_INVALID_ARGUMENT;
	rc = expr_eval(c->sc->cuda_version, c->t, &v);
	if (rc == NVML_SUCCESS)
		*cudaDriverVersion = to_int(v);
	return rc;
}

FAKE_API nvmlReturn_t
nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
	struct call c;
	nvmlReturn_t rc = call_system(&c, __func__);

	if (rc == NVML_SUCCESS)
		rc = cuda_version(&c, cudaDriverVersion);
	return call_end(&c, rc);
}

#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t
nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
	struct call c;
	nvmlReturn_t rc = call_system(&c, __func__);

	if (rc == NVML_SUCCESS)
		rc = cuda_version(&c, cudaDriverVersion);
	return call_end(&c, rc);
}
#endif

/* A lost GPU still counts: NVML keeps it in the list and fails its calls. */
static nvmlReturn_t
device_count(const struct call *c, unsigned int *deviceCount)
{
	if (!deviceCount)
		return NVML_ERROR_INVALID_ARGUMENT;
	*deviceCount = c->sc->nr_gpus;
	return NVML_SUCCESS;
}

FAKE_API nvmlReturn_t
nvmlDeviceGetCount(unsigned int *deviceCount)
{
	struct call c;
	nvmlReturn_t rc = call_system(&c, __func__);

	if (rc == NVML_SUCCESS)
		rc = device_count(&c, deviceCount);
	return call_end(&c, rc);
}

#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t
nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
	struct call c;
	nvmlReturn_t rc = call_system(&c, __func__);

	if (rc == NVML_SUCCESS)
		rc = device_count(&c, deviceCount);
	return call_end(&c, rc);
}
#endif

/*
 * Ends a handle lookup that found gpu (or NULL): obtaining the handle is a
 * call on that GPU, so its faults apply, and a lost GPU has none to give.
 */
static nvmlReturn_t
give_handle(struct call *c, const struct gpu *gpu, nvmlDevice_t *device, nvmlReturn_t missing)
{
	nvmlReturn_t rc = call_faults(c, gpu);

	if (rc != NVML_SUCCESS)
		return rc;
	if (!gpu)
		return missing;
	*device = gpu_handle(gpu);
	return NVML_SUCCESS;
}

static nvmlReturn_t
handle_by_index(struct call *c, unsigned int index, nvmlDevice_t *device)
{
	if (!device)
		return NVML_ERROR_INVALID_ARGUMENT;
	return give_handle(c, index < c->sc->nr_gpus ? &c->sc->gpus[index] : NULL, device,
	                   NVML_ERROR_INVALID_ARGUMENT);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
	struct call c;
	nvmlReturn_t rc = call_begin(&c, __func__);

	if (rc == NVML_SUCCESS)
		rc = handle_by_index(&c, index, device);
	return call_end(&c, rc);
}

#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t
nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	struct call c;
	nvmlReturn_t rc = call_begin(&c, __func__);

	if (rc == NVML_SUCCESS)
		rc = handle_by_index(&c, index, device);
	return call_end(&c, rc);
}
#endif

/* the GPU whose string key k is s */
static nvmlReturn_t
handle_by_string(struct call *c, enum gpu_str k, const char *s, nvmlDevice_t *device)
{
	const struct gpu *found = NULL;

	if (!s || !device)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned int i = 0; i < c->sc->nr_gpus && !found; i++)
		if (c->sc->gpus[i].str[k] && !strcmp(c->sc->gpus[i].str[k], s))
			found = &c->sc->gpus[i];
	return give_handle(c, found, device, NVML_ERROR_NOT_FOUND);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
	struct call c;
	nvmlReturn_t rc = call_begin(&c, __func__);

	if (rc == NVML_SUCCESS)
		rc = handle_by_string(&c, GS_UUID, uuid, device);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetHandleBySerial(const char *serial, nvmlDevice_t *device)
{
	struct call c;
	nvmlReturn_t rc = call_begin(&c, __func__);

	if (rc == NVML_SUCCESS)
		rc = handle_by_string(&c, GS_SERIAL, serial, device);
	return call_end(&c, rc);
}

/*
 * Accepts a bus id as NVML does, in any case, with an 8- or 4-digit domain
 * or none: "00000000:00:09.0", "0000:00:09.0", "00:09.0".
 */
static nvmlReturn_t
handle_by_bus_id(struct call *c, const char *bus_id, nvmlDevice_t *device)
{
	unsigned int domain = 0, bus, dev, fn;
	const struct gpu *found = NULL;
	int end = -1;

	if (!bus_id || !device)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (sscanf(bus_id, "%x:%x:%x.%x%n", &domain, &bus, &dev, &fn, &end) != 4 || bus_id[end]) {
		domain = 0;
		end = -1;
		if (sscanf(bus_id, "%x:%x.%x%n", &bus, &dev, &fn, &end) != 3 || bus_id[end])
			return give_handle(c, NULL, device, NVML_ERROR_INVALID_ARGUMENT);
	}
	for (unsigned int i = 0; i < c->sc->nr_gpus && !found; i++) {
		const struct gpu *g = &c->sc->gpus[i];

		if (g->pci_domain == domain && g->pci_bus == bus && g->pci_device == dev &&
		    g->pci_function == fn)
			found = g;
	}
	return give_handle(c, found, device, NVML_ERROR_NOT_FOUND);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetHandleByPciBusId(const char *pciBusId, nvmlDevice_t *device)
{
	struct call c;
	nvmlReturn_t rc = call_begin(&c, __func__);

	if (rc == NVML_SUCCESS)
		rc = handle_by_bus_id(&c, pciBusId, device);
	return call_end(&c, rc);
}

#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t
nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
	struct call c;
	nvmlReturn_t rc = call_begin(&c, __func__);

	if (rc == NVML_SUCCESS)
		rc = handle_by_bus_id(&c, pciBusId, device);
	return call_end(&c, rc);
}
#endif
