/*
 * setup.cuda.*: what the environment tells CUDA about the GPUs.
 * CUDA_VISIBLE_DEVICES is a comma-separated list of indices (CUDA's order,
 * see CUDA_DEVICE_ORDER), GPU UUIDs or their prefixes, or MIG UUIDs; CUDA
 * stops at the first entry that names no device and ignores the rest, and
 * an empty value or "-1" hides every GPU.
 */
#include "doctor/doctor.h"

#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "core/strbuf.h"

/* Does entry name a GPU of s, as CUDA reads it? */
static bool
names_gpu(const struct gpu_snapshot *s, const char *e, size_t len, size_t nr_nvidia)
{
	if (len && strspn(e, "0123456789") >= len) {
		unsigned long v = strtoul(e, NULL, 10);

		return v < nr_nvidia;
	}
	if (len >= 4 && (!strncmp(e, "GPU-", 4) || !strncmp(e, "MIG-", 4))) {
		if (!strncmp(e, "MIG-", 4))
			return true; /* MIG instances are not in the snapshot: trust it */
		for (size_t i = 0; s && i < s->nr_dev; i++)
			if (s->dev[i].vendor == VENDOR_NVIDIA && !strncmp(s->dev[i].uuid, e, len))
				return true;
	}
	return false;
}

static void
check_visible(const struct dr_ctx *ctx, struct dr_report *r, size_t nr)
{
	const char *v = ctx->getenv("CUDA_VISIBLE_DEVICES");
	struct dr_finding *f;
	const char *p;
	size_t shown = 0;

	if (!v) {
		dr_add(r, "setup.cuda.visible_devices", DR_OK,
		       "CUDA_VISIBLE_DEVICES is not set: CUDA sees all %zu NVIDIA GPU%s", nr,
		       nr == 1 ? "" : "s");
		return;
	}
	if (!*v || !strcmp(v, "-1") || !strcmp(v, "none") || !strcmp(v, "NoDevFiles")) {
		f = dr_add(r, "setup.cuda.visible_devices_none", DR_WARNING,
		           "CUDA_VISIBLE_DEVICES hides every GPU from CUDA programs");
		dr_evidence(f, "environment: CUDA_VISIBLE_DEVICES=\"%s\"", v);
		dr_meaning(
		        f,
		        "Programs started from here see no CUDA device (torch.cuda.is_available() "
		        "is False), though nvidia-smi shows %zu GPU%s.",
		        nr, nr == 1 ? "" : "s");
		dr_action(
		        f,
		        "'unset CUDA_VISIBLE_DEVICES', or set it to the GPUs to use "
		        "(CUDA_VISIBLE_DEVICES=0,1). A job scheduler sets it for its jobs: outside "
		        "a job, look for it in your shell's start-up files.");
		return;
	}
	for (p = v;;) {
		size_t len = strcspn(p, ",");

		if (!names_gpu(ctx->snap, p, len, nr)) {
			f = dr_add(r, "setup.cuda.visible_devices_unknown", DR_ERROR,
			           "CUDA_VISIBLE_DEVICES names a GPU that does not exist: '%.*s'",
			           (int)len, p);
			dr_evidence(f, "environment: CUDA_VISIBLE_DEVICES=\"%s\"", v);
			dr_evidence(f, "this machine has %zu NVIDIA GPU%s (indices 0 to %zu)", nr,
			            nr == 1 ? "" : "s", nr ? nr - 1 : 0);
			dr_meaning(f,
			           "CUDA stops reading the list at the first entry that names no "
			           "device: it sees %zu GPU%s%s.",
			           shown, shown == 1 ? "" : "s",
			           p[len] ? ", and ignores every entry after this one" : "");
			dr_action(f,
			          "Name GPUs by index (0 to %zu) or by UUID ('gpuscope query "
			          "--query-gpu=index,uuid --format=csv' lists them).",
			          nr ? nr - 1 : 0);
			return;
		}
		shown++;
		if (!p[len])
			break;
		p += len + 1;
	}
	dr_add(r, "setup.cuda.visible_devices", DR_OK,
	       "CUDA_VISIBLE_DEVICES=\"%s\": CUDA sees %zu of the %zu NVIDIA GPU%s", v, shown, nr,
	       nr == 1 ? "" : "s");
}

/* Different GPU models, and CUDA left to order them fastest first. */
static void
check_order(const struct dr_ctx *ctx, struct dr_report *r)
{
	const struct gpu_snapshot *s = ctx->snap;
	const char *order = ctx->getenv("CUDA_DEVICE_ORDER");
	const struct gpu_device *first = NULL;
	struct dr_finding *f;
	bool mixed = false;

	for (size_t i = 0; s && i < s->nr_dev; i++) {
		if (s->dev[i].vendor != VENDOR_NVIDIA)
			continue;
		if (!first)
			first = &s->dev[i];
		else if (strcmp(first->name, s->dev[i].name))
			mixed = true;
	}
	if (!mixed || (order && !strcmp(order, "PCI_BUS_ID")))
		return;
	f = dr_add(r, "setup.cuda.device_order", DR_INFO,
	           "CUDA numbers these different GPUs fastest first, nvidia-smi by PCI bus");
	dr_evidence(f, "environment: CUDA_DEVICE_ORDER %s%s%s", order ? "=\"" : "is not set",
	            order ? order : "", order ? "\"" : "");
	for (size_t i = 0; i < s->nr_dev; i++)
		if (s->dev[i].vendor == VENDOR_NVIDIA)
			dr_evidence(f, "GPU %u: %s at %s", s->dev[i].index, s->dev[i].name,
			            s->dev[i].pci_bus_id);
	dr_meaning(f, "CUDA device 0 may not be nvidia-smi's GPU 0: CUDA_VISIBLE_DEVICES=1 or "
	              "cuda:1 can pick another card than the one the user looked at.");
	dr_action(f, "export CUDA_DEVICE_ORDER=PCI_BUS_ID, so that CUDA, nvidia-smi and gpuscope "
	             "number the GPUs the same way.");
}

void
dr_check_cuda_env(const struct dr_ctx *ctx, struct dr_report *r)
{
	size_t nr = gpu_snapshot_count(ctx->snap, VENDOR_NVIDIA);

	if (!nr)
		return; /* the driver checks say why there is no NVIDIA GPU */
	check_visible(ctx, r, nr);
	check_order(ctx, r);
}
