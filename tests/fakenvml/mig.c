/*
 * MIG devices of the fake NVML: the [mig] sections of a GPU in MIG mode.
 * Each MIG device is a struct gpu of its own (scenario.c makes it), reached
 * through a MIG handle: the device calls of device.c answer for it from its
 * own keys (memory, name, UUID) and NOT_SUPPORTED for what it lacks, as
 * NVIDIA's answer NOT_SUPPORTED for a MIG device's utilisation. This file
 * has the calls that lead from a GPU to its MIG devices and back.
 */
#include "fake.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml_api.h"

/*
 * What a MIG handle points at: like the GPUs' handles, outside the scenario,
 * so that a handle stays the same across nvmlShutdown and nvmlInit.
 */
static char mig_handles[FAKE_MAX_GPUS][FAKE_MAX_MIG];

static nvmlDevice_t
mig_handle(const struct gpu *m)
{
	return (nvmlDevice_t)(void *)&mig_handles[m->parent->index][m->mig_index];
}

const struct gpu *
mig_gpu_of(const struct scenario *sc, nvmlDevice_t device)
{
	uintptr_t p = (uintptr_t)device, base = (uintptr_t)mig_handles;
	size_t i, g, k;

	if (!sc || p < base || p >= base + sizeof(mig_handles))
		return NULL;
	i = p - base;
	g = i / FAKE_MAX_MIG;
	k = i % FAKE_MAX_MIG;
	if (g >= sc->nr_gpus || k >= sc->gpus[g].nr_mig)
		return NULL;
	return sc->gpus[g].mig[k];
}

void
mig_finish(struct gpu *m)
{
	const struct gpu *g = m->parent;
	const char *pu = g->str[GS_UUID];

	memcpy(m->bus_id, g->bus_id, sizeof(m->bus_id));
	memcpy(m->bus_id_legacy, g->bus_id_legacy, sizeof(m->bus_id_legacy));
	m->pci_domain = g->pci_domain;
	m->pci_bus = g->pci_bus;
	m->pci_device = g->pci_device;
	m->pci_function = g->pci_function;
	m->pci_device_id = g->pci_device_id;
	m->pci_subsystem_id = g->pci_subsystem_id;
	m->lost = g->lost;
	m->reset_required = g->reset_required;
	if (!m->str[GS_NAME] && g->str[GS_NAME]) {
		snprintf(m->mig_name, sizeof(m->mig_name), "%s MIG %s", g->str[GS_NAME],
		         m->profile ? m->profile : "");
		m->str[GS_NAME] = m->mig_name;
	}
	if (!m->str[GS_UUID] && pu) {
		size_t n;

		if (!strncmp(pu, "GPU-", 4))
			pu += 4;
		n = strlen(pu);
		snprintf(m->mig_uuid, sizeof(m->mig_uuid), "MIG-%.*s%02x%02x",
		         (int)(n > 4 ? n - 4 : 0), pu, m->gpu_instance & 0xff,
		         m->compute_instance & 0xff);
		m->str[GS_UUID] = m->mig_uuid;
	}
}

/* Whether MIG mode is on now: the parent's mig_mode key (absent: not MIG-capable). */
static nvmlReturn_t
mig_on(const struct call *c, bool *on)
{
	double v;
	nvmlReturn_t rc = expr_eval(c->gpu->num[GK_MIG_MODE], c->t, &v);

	*on = rc == NVML_SUCCESS && v != 0;
	return rc;
}

FAKE_API nvmlReturn_t
nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);
	bool on;

	if (rc == NVML_SUCCESS && !count)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS && c.gpu->parent)
		rc = NVML_ERROR_INVALID_ARGUMENT; /* a MIG device has none of its own */
	else if (rc == NVML_SUCCESS)
		rc = mig_on(&c, &on);
	if (rc == NVML_SUCCESS)
		*count = FAKE_MAX_MIG;
	return call_end(&c, rc);
}

/* NOT_FOUND for a slot without a MIG device, as NVIDIA's: indexes may have gaps there */
FAKE_API nvmlReturn_t
nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                    nvmlDevice_t *migDevice)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);
	bool on = false;

	if (rc == NVML_SUCCESS && (!migDevice || c.gpu->parent || index >= FAKE_MAX_MIG))
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS)
		rc = mig_on(&c, &on);
	if (rc == NVML_SUCCESS && !on)
		rc = NVML_ERROR_INVALID_ARGUMENT; /* MIG mode is off */
	else if (rc == NVML_SUCCESS && index >= c.gpu->nr_mig)
		rc = NVML_ERROR_NOT_FOUND;
	if (rc == NVML_SUCCESS)
		*migDevice = mig_handle(c.gpu->mig[index]);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int *isMigDevice)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS && !isMigDevice)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	if (rc == NVML_SUCCESS)
		*isMigDevice = c.gpu->parent != NULL;
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice, nvmlDevice_t *device)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, migDevice);

	if (rc == NVML_SUCCESS && (!device || !c.gpu->parent))
		rc = NVML_ERROR_INVALID_ARGUMENT;
	if (rc == NVML_SUCCESS)
		*device = gpu_handle(c.gpu->parent);
	return call_end(&c, rc);
}

/* the instance ids of a MIG device; a whole GPU has none */
static nvmlReturn_t
instance_id(nvmlDevice_t device, const char *fn, bool gi, unsigned int *id)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, fn, device);

	if (rc == NVML_SUCCESS && !id)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS && !c.gpu->parent)
		rc = NVML_ERROR_NOT_SUPPORTED;
	if (rc == NVML_SUCCESS)
		*id = gi ? c.gpu->gpu_instance : c.gpu->compute_instance;
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id)
{
	return instance_id(device, __func__, true, id);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id)
{
	return instance_id(device, __func__, false, id);
}

/*
 * A MIG device's share of its GPU: its multiprocessor_count, its slices
 * (the number before "g." of its profile, for both instances) and its
 * memory_total in MiB; NOT_SUPPORTED for a whole GPU, as NVIDIA's.
 */
static nvmlReturn_t
attributes(nvmlDevice_t device, const char *fn, nvmlDeviceAttributes_t *a)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, fn, device);
	unsigned int slices = 0;
	double mem = 0;

	if (rc == NVML_SUCCESS && !a)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	else if (rc == NVML_SUCCESS && !c.gpu->parent)
		rc = NVML_ERROR_NOT_SUPPORTED;
	else if (rc == NVML_SUCCESS && c.gpu->num[GK_MEMORY_TOTAL])
		rc = expr_eval(c.gpu->num[GK_MEMORY_TOTAL], c.t, &mem);
	if (rc == NVML_SUCCESS) {
		if (c.gpu->profile)
			slices = (unsigned int)strtoul(c.gpu->profile, NULL, 10);
		memset(a, 0, sizeof(*a));
		a->multiprocessorCount = c.gpu->sm_count;
		a->gpuInstanceSliceCount = slices;
		a->computeInstanceSliceCount = slices;
		a->memorySizeMB = to_ull(mem / (1024.0 * 1024.0));
	}
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetAttributes(nvmlDevice_t device, nvmlDeviceAttributes_t *attributes_)
{
	return attributes(device, __func__, attributes_);
}

#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t
nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t *attributes_)
{
	return attributes(device, __func__, attributes_);
}
#endif
