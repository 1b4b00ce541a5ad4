/*
 * setup.pci.*: is there a GPU on the PCI bus, and which kernel driver holds
 * it. The most basic question, and the answer to many "nvidia-smi says no
 * devices were found": no driver bound, nouveau or nova_core holding an
 * NVIDIA card, a card passed to a virtual machine through vfio-pci.
 */
#include "doctor/doctor.h"

#include <stdlib.h>
#include <string.h>

#include "backend/pci.h"
#include "core/config.h"
#include "core/err.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

/* The driver that should hold a GPU of this vendor, for the advice. */
static const char *
vendor_driver(unsigned vendor)
{
	switch (vendor) {
	case PCI_VENDOR_NVIDIA:
		return "nvidia";
	case PCI_VENDOR_AMD:
		return "amdgpu";
	case PCI_VENDOR_INTEL:
		return "i915 or xe";
	default:
		return "its vendor's driver";
	}
}

static void
add_evidence(struct dr_finding *f, const struct dr_ctx *ctx, const struct pci_gpu *g)
{
	dr_evidence(f,
	            "%s/bus/pci/devices/%s: vendor 0x%04x, device 0x%04x, class 0x%06x, driver %s",
	            ctx->cfg->sysfs_root, g->addr, g->vendor, g->device, g->class,
	            g->driver[0] ? g->driver : "(none: no 'driver' link)");
}

/* Report what is wrong with g; false when nothing is (a GPU bound to its driver). */
static bool
check_one(const struct dr_ctx *ctx, struct dr_report *r, const struct pci_gpu *g)
{
	const char *v = pci_vendor_name(g->vendor);
	struct dr_finding *f;

	if (!g->driver[0]) {
		f = dr_add(r, "setup.pci.no_driver", DR_ERROR,
		           "the %s GPU at %s has no kernel driver", v, g->addr);
		add_evidence(f, ctx, g);
		dr_meaning(
		        f,
		        "No program can use this GPU: without a driver there is no /dev node and "
		        "no library sees it (nvidia-smi: \"No devices were found\").");
		if (g->vendor == PCI_VENDOR_NVIDIA)
			dr_action(
			        f,
			        "Load NVIDIA's driver: 'sudo modprobe nvidia'. If that fails, read why "
			        "in 'sudo dmesg | grep -i nvidia' (a module built for another kernel: "
			        "reinstall the driver or its DKMS package; Secure Boot refusing an "
			        "unsigned module: sign it or enrol the key with mokutil).");
		else
			dr_action(
			        f,
			        "Load %s ('sudo modprobe %s'), and read 'sudo dmesg' for why it did "
			        "not bind (missing firmware is the usual cause).",
			        vendor_driver(g->vendor),
			        g->vendor == PCI_VENDOR_INTEL ? "i915" : vendor_driver(g->vendor));
		return true;
	}
	if (g->vendor == PCI_VENDOR_NVIDIA &&
	    (!strcmp(g->driver, "nouveau") || !strcmp(g->driver, "nova_core"))) {
		f = dr_add(r, "setup.pci.nouveau", DR_WARNING,
		           "the NVIDIA GPU at %s is held by %s, not by NVIDIA's driver", g->addr,
		           g->driver);
		add_evidence(f, ctx, g);
		dr_meaning(f,
		           "%s is the kernel's own driver for NVIDIA cards: it drives a display, "
		           "but CUDA, NVML and nvidia-smi need NVIDIA's driver, which cannot load "
		           "while %s holds the card.",
		           g->driver, g->driver);
		dr_action(
		        f,
		        "If NVIDIA's driver is installed, keep %s from loading: write 'blacklist "
		        "%s' and 'options %s modeset=0' to /etc/modprobe.d/blacklist-%s.conf, run "
		        "'sudo update-initramfs -u' (Debian, Ubuntu) or 'sudo dracut --force' "
		        "(Fedora, RHEL), and reboot. If it is not installed, install it first.",
		        g->driver, g->driver, g->driver, g->driver);
		return true;
	}
	if (!strcmp(g->driver, "vfio-pci")) {
		f = dr_add(r, "setup.pci.vfio", DR_INFO,
		           "the %s GPU at %s is reserved for a virtual machine (vfio-pci)", v,
		           g->addr);
		add_evidence(f, ctx, g);
		dr_meaning(f, "vfio-pci holds a device so that a virtual machine can be given it; "
		              "programs on this host cannot use it.");
		dr_action(f, "Nothing, if it is meant for a VM. Otherwise remove its id from "
		             "vfio-pci.ids= (kernel command line or /etc/modprobe.d) and reboot.");
		return true;
	}
	if (g->vendor == PCI_VENDOR_AMD && !strcmp(g->driver, "radeon")) {
		f = dr_add(r, "setup.pci.radeon", DR_INFO,
		           "the AMD GPU at %s is driven by radeon, the legacy driver", g->addr);
		add_evidence(f, ctx, g);
		dr_meaning(f, "radeon drives cards before GCN and some early GCN ones; ROCm and "
		              "modern Vulkan need amdgpu.");
		dr_action(f, "For a GCN 1.0 or 1.1 card, amdgpu can take over: boot with "
		             "'radeon.si_support=0 amdgpu.si_support=1' (or cik_support for GCN "
		             "1.1). Older cards stay on radeon.");
		return true;
	}
	return false;
}

/* One ok line for the GPUs of a vendor bound to the same driver. */
static void
report_bound(const struct dr_ctx *ctx, struct dr_report *r, const struct pci_gpu *gpus, size_t nr,
             const bool *done)
{
	bool *said = xcalloc(nr ? nr : 1, sizeof(*said));

	for (size_t i = 0; i < nr; i++) {
		struct strbuf addrs = STRBUF_INIT;
		struct dr_finding *f;
		size_t n = 0;

		if (done[i] || said[i])
			continue;
		for (size_t j = i; j < nr; j++)
			if (!done[j] && !said[j] && gpus[j].vendor == gpus[i].vendor &&
			    !strcmp(gpus[j].driver, gpus[i].driver)) {
				strbuf_addf(&addrs, "%s%s", n++ ? ", " : "", gpus[j].addr);
				said[j] = true;
			}
		if (n == 1)
			f = dr_add(r, "setup.pci.bound", DR_OK, "the %s GPU at %s is driven by %s",
			           pci_vendor_name(gpus[i].vendor), addrs.buf, gpus[i].driver);
		else
			f = dr_add(r, "setup.pci.bound", DR_OK, "%zu %s GPUs (%s) are driven by %s",
			           n, pci_vendor_name(gpus[i].vendor), addrs.buf, gpus[i].driver);
		for (size_t j = i; j < nr; j++)
			if (!done[j] && gpus[j].vendor == gpus[i].vendor &&
			    !strcmp(gpus[j].driver, gpus[i].driver))
				add_evidence(f, ctx, &gpus[j]);
		strbuf_release(&addrs);
	}
	free(said);
}

void
dr_check_pci(const struct dr_ctx *ctx, struct dr_report *r)
{
	struct err err = ERR_INIT;
	struct pci_gpu *gpus = NULL;
	struct dr_finding *f;
	size_t nr = 0;

	if (pci_list_gpus(ctx->cfg->sysfs_root, &gpus, &nr, &err) < 0) {
		f = dr_add(r, "setup.pci.unreadable", DR_WARNING, "the PCI bus could not be read");
		dr_evidence(f, "%s", err.msg);
		dr_action(f, "Run doctor where %s/bus/pci is mounted and readable.",
		          ctx->cfg->sysfs_root);
		return;
	}
	if (!nr) {
		f = dr_add(r, "setup.pci.no_gpu", DR_INFO, "no GPU on the PCI bus");
		dr_evidence(f, "%s/bus/pci/devices: no device of class 0x03 (display)",
		            ctx->cfg->sysfs_root);
		dr_meaning(f, "This machine (or this container or virtual machine) has no PCI GPU. "
		              "A GPU on another bus (an SoC's) may still be found through DRM.");
		dr_action(f,
		          "In a virtual machine, pass a GPU through to it; in a container, start "
		          "it with the GPU (docker run --gpus all, or the device plugin).");
	}
	{
		bool *done = xcalloc(nr ? nr : 1, sizeof(*done));

		for (size_t i = 0; i < nr; i++)
			done[i] = check_one(ctx, r, &gpus[i]);
		report_bound(ctx, r, gpus, nr, done);
		free(done);
	}
	free(gpus);
}
