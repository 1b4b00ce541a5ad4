/*
 * The topology of the fake NVML: the closest common ancestor of two GPUs
 * from the `topology_group` (a PCIe switch) and `topology_node` (a CPU) keys
 * of their [gpu] sections, and their NVLinks from `nvlink_peers`, whose
 * link n leads to the n-th GPU listed, or to an NVSwitch.
 */
#include "fake.h"

#include <stdio.h>
#include <string.h>

#include "nvml_api.h"

FAKE_API nvmlReturn_t
nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1, nvmlDevice_t device2,
                                    nvmlGpuTopologyLevel_t *pathInfo)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device1);
	const struct gpu *a = c.gpu, *b = NULL;

	if (rc == NVML_SUCCESS) {
		b = call_gpu_of(&c, device2);
		if (!b || !pathInfo)
			rc = NVML_ERROR_INVALID_ARGUMENT;
		else if (c.t >= b->lost)
			rc = NVML_ERROR_GPU_IS_LOST;
		else if (!a->has_topology || !b->has_topology)
			rc = NVML_ERROR_NOT_SUPPORTED;
	}
	if (rc == NVML_SUCCESS) {
		if (a == b)
			*pathInfo = NVML_TOPOLOGY_INTERNAL;
		else if (a->topology_node != b->topology_node)
			*pathInfo = NVML_TOPOLOGY_SYSTEM;
		else if (a->topology_group == b->topology_group)
			*pathInfo = NVML_TOPOLOGY_SINGLE;
		else
			*pathInfo = NVML_TOPOLOGY_NODE;
	}
	return call_end(&c, rc);
}

/*
 * The GPU at the far end of link (NULL: an NVSwitch), or an error: no NVLink,
 * no such link, not active.
 */
static nvmlReturn_t
link_peer(const struct call *c, unsigned int link, const struct gpu **peer)
{
	const struct gpu *g = c->gpu;

	nvmlReturn_t rc;
	bool active;

	rc = fake_nvlink_link(c, link, &active);
	if (rc != NVML_SUCCESS)
		return rc;
	if (!active)
		return NVML_ERROR_NOT_SUPPORTED;
	*peer = g->nvlink_peer[link] == FAKE_NVLINK_SWITCH ? NULL
	                                                   : &c->sc->gpus[g->nvlink_peer[link]];
	return NVML_SUCCESS;
}

/*
 * An NVSwitch's PCI information: a bridge device of bus 0xFE, one per link
 * number, as the switches of an HGX board sit on buses of their own.
 */
static nvmlReturn_t
switch_pci_info(unsigned int link, nvmlPciInfo_t *pci, bool v1)
{
	memset(pci, 0, v1 ? FAKE_PCI_INFO_V1_SIZE : sizeof(*pci));
	pci->bus = 0xFE;
	pci->device = link;
	pci->pciDeviceId = 0x22A310DE; /* NVSwitch of the H100 generation */
	snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "0000:FE:%02X.0", link);
	if (!v1)
		snprintf(pci->busId, sizeof(pci->busId), "00000000:FE:%02X.0", link);
	return NVML_SUCCESS;
}

/*
 * Links past the list are there but down, as on a board with a bridge on some
 * of them; `nvlink_down` takes links of the list down.
 */
FAKE_API nvmlReturn_t
nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, nvmlEnableState_t *isActive)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);
	bool active;

	if (rc == NVML_SUCCESS && !isActive)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	if (rc == NVML_SUCCESS)
		rc = fake_nvlink_link(&c, link, &active);
	if (rc == NVML_SUCCESS)
		*isActive = active ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return call_end(&c, rc);
}

static nvmlReturn_t
remote_pci(const char *fn, nvmlDevice_t device, unsigned int link, nvmlPciInfo_t *pci, bool v1)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, fn, device);
	const struct gpu *peer;

	if (rc == NVML_SUCCESS && !pci)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	if (rc == NVML_SUCCESS)
		rc = link_peer(&c, link, &peer);
	if (rc == NVML_SUCCESS)
		rc = peer ? gpu_pci_info(peer, pci, v1) : switch_pci_info(link, pci, v1);
	return call_end(&c, rc);
}

/* The plain name fills the first, 52-byte nvmlPciInfo_t, as nvmlDeviceGetPciInfo. */
FAKE_API nvmlReturn_t
nvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t device, unsigned int link, nvmlPciInfo_t *pci)
{
	return remote_pci(__func__, device, link, pci, true);
}

#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t
nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link, nvmlPciInfo_t *pci)
{
	return remote_pci(__func__, device, link, pci, false);
}
#endif

FAKE_API nvmlReturn_t
nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link,
                                    nvmlIntNvLinkDeviceType_t *pNvLinkDeviceType)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);
	const struct gpu *peer;

	if (rc == NVML_SUCCESS && !pNvLinkDeviceType)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	if (rc == NVML_SUCCESS)
		rc = link_peer(&c, link, &peer);
	if (rc == NVML_SUCCESS)
		*pNvLinkDeviceType =
		        peer ? NVML_NVLINK_DEVICE_TYPE_GPU : NVML_NVLINK_DEVICE_TYPE_SWITCH;
	return call_end(&c, rc);
}
