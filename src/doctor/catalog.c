/*
 * The long explanations of `gpuscope doctor --explain ID` for the checks of
 * check_pci.c and check_env.c, in id order (tests check that every id
 * emitted is in the catalog); the other check files keep theirs beside
 * their code, and the message tables' ids (data/messages) come from klog_msg.c. Also the
 * list of checks doctor runs.
 */
#include "doctor/doctor.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/klog.h"

const struct dr_explain dr_catalog_core[] = {
	{ "setup.cuda.device_order", "CUDA and nvidia-smi number different GPUs differently",
	  "CUDA's default device order (CUDA_DEVICE_ORDER=FASTEST_FIRST) puts the fastest\n"
	  "GPU first; nvidia-smi, NVML and gpuscope number GPUs by PCI bus. On a machine\n"
	  "with different GPU models the two differ, and an index taken from\n"
	  "nvidia-smi selects another card in CUDA. Setting CUDA_DEVICE_ORDER=PCI_BUS_ID\n"
	  "makes CUDA follow the bus order." },
	{ "setup.cuda.visible_devices", "What CUDA_VISIBLE_DEVICES lets CUDA see",
	  "CUDA_VISIBLE_DEVICES restricts and renumbers the GPUs a CUDA program sees:\n"
	  "indices in CUDA's order, GPU UUIDs (or unique prefixes), or MIG UUIDs." },
	{ "setup.cuda.visible_devices_none", "CUDA_VISIBLE_DEVICES hides every GPU",
	  "An empty CUDA_VISIBLE_DEVICES, or -1, leaves a CUDA program no device: it\n"
	  "runs on the CPU or fails with 'no CUDA-capable device is detected'. Job\n"
	  "schedulers set it for jobs that asked for no GPU; a stale export in a shell\n"
	  "start-up file is the other usual cause." },
	{ "setup.cuda.visible_devices_unknown",
	  "CUDA_VISIBLE_DEVICES names a GPU that does not exist",
	  "CUDA reads CUDA_VISIBLE_DEVICES up to the first entry that names no device\n"
	  "and ignores the rest, so '0,5,1' on a 4-GPU machine gives one GPU, and '5'\n"
	  "gives none. Indices count in CUDA's order (CUDA_DEVICE_ORDER)." },
	{ "setup.pci.bound", "A GPU on the PCI bus is driven by a kernel driver",
	  "The kernel driver bound to the GPU is read from the 'driver' link of its\n"
	  "directory under /sys/bus/pci/devices. nvidia, amdgpu, i915 and xe are the\n"
	  "drivers that compute frameworks expect; others (msm, panfrost, ...) drive\n"
	  "SoC GPUs." },
	{ "setup.pci.no_driver", "A GPU has no kernel driver",
	  "The card is on the bus, but no driver claimed it, so there is no device\n"
	  "node and no library can see it. Causes, most likely first:\n"
	  "  1. The driver is not installed, or was built for another kernel (after a\n"
	  "     kernel upgrade without DKMS): 'modprobe nvidia' fails with 'Module not\n"
	  "     found' or 'Exec format error'.\n"
	  "  2. Secure Boot refuses an unsigned out-of-tree module: the kernel log says\n"
	  "     'module verification failed' or 'Key was rejected by service'. Sign the\n"
	  "     module (DKMS can, with a MOK enrolled through mokutil) or disable\n"
	  "     Secure Boot.\n"
	  "  3. The driver loaded but failed on this card: the kernel log has its error\n"
	  "     (NVIDIA: 'RmInitAdapter failed'; AMD: firmware not found).\n"
	  "  4. Hardware: a card that does not initialise. Only after the above." },
	{ "setup.pci.no_gpu", "No GPU on the PCI bus",
	  "No PCI device of the display class (0x03) is present. On a cloud instance\n"
	  "this is the instance type; in a virtual machine the GPU was not passed\n"
	  "through; in a container, /sys may show the host's bus while /dev lacks the\n"
	  "device nodes (see the container checks)." },
	{ "setup.pci.nouveau", "An NVIDIA GPU is held by nouveau or nova_core",
	  "nouveau (and nova_core, its successor for GSP-based cards) are the kernel's\n"
	  "own drivers for NVIDIA GPUs. Only one driver can hold a card, and CUDA needs\n"
	  "NVIDIA's. Distributions load nouveau by default; NVIDIA's installer usually\n"
	  "blacklists it, but an initramfs built before the blacklist still loads it.\n"
	  "Blacklist it, rebuild the initramfs and reboot; 'lspci -k' then shows\n"
	  "'Kernel driver in use: nvidia'." },
	{ "setup.pci.radeon", "An AMD GPU is driven by the legacy radeon driver",
	  "radeon is the driver of AMD cards before GCN. GCN 1.0 (Southern Islands) and\n"
	  "1.1 (Sea Islands) cards can be driven by either; amdgpu is needed for ROCm,\n"
	  "RADV and newer OpenGL." },
	{ "setup.pci.unreadable", "The PCI bus could not be read",
	  "doctor lists GPUs from /sys/bus/pci/devices. Without it (a restricted\n"
	  "container, a chroot without /sys) the PCI checks cannot run." },
	{ "setup.pci.vfio", "A GPU is reserved for a virtual machine",
	  "vfio-pci claims devices listed in vfio-pci.ids= so that a hypervisor can pass\n"
	  "them to a guest. The host cannot use such a GPU while it is bound." },
	{ NULL, NULL, NULL },
};

const struct dr_check dr_checks[] = {
	{ "pci", dr_check_pci, true },
	{ "nvidia", dr_check_nvidia, true },
	{ "devices", dr_check_devices, true },
	{ "cuda-env", dr_check_cuda_env, true },
	{ "toolkit", dr_check_cuda_toolkit, true },
	{ "python", dr_check_python, true },
	{ "render", dr_check_render, true },
	{ "video", dr_check_video, true },
	{ "health", dr_check_health, false },
	{ "bench", dr_check_bench, false },
	{ "klog", dr_check_klog, false },
	{ "workload", dr_check_workload, false },
	{ NULL, NULL, false },
};

static const struct dr_explain *const catalogs[] = {
	dr_catalog_core,     dr_catalog_nvidia,   dr_catalog_toolkit,  dr_catalog_python,
	dr_catalog_devices,  dr_catalog_render,   dr_catalog_health,   dr_catalog_klog,
	dr_catalog_klog_drm, dr_catalog_klog_aer, dr_catalog_workload, dr_catalog_bench,
};

/* The built-in entry of id, or NULL. */
static const struct dr_explain *
builtin_find(const char *id)
{
	for (size_t i = 0; i < sizeof(catalogs) / sizeof(catalogs[0]); i++)
		for (const struct dr_explain *e = catalogs[i]; e->id; e++)
			if (!strcmp(e->id, id))
				return e;
	return NULL;
}

/*
 * The entry of id: a built-in one, else one of the message tables' (data/messages,
 * klog_msg.c), which never replace a built-in one of the same id.
 */
const struct dr_explain *
dr_explain_find(const char *id)
{
	const struct dr_explain *e = builtin_find(id), *table;
	size_t n;

	if (e)
		return e;
	n = klog_msg_catalog(&table);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(table[i].id, id))
			return &table[i];
	return NULL;
}

static int
by_id(const void *a, const void *b)
{
	return strcmp((*(const struct dr_explain *const *)a)->id,
	              (*(const struct dr_explain *const *)b)->id);
}

size_t
dr_catalog_list(const struct dr_explain **out, size_t max)
{
	const struct dr_explain *table;
	size_t n = 0, nr_table = klog_msg_catalog(&table);

	for (size_t i = 0; i < sizeof(catalogs) / sizeof(catalogs[0]); i++)
		for (const struct dr_explain *e = catalogs[i]; e->id; e++, n++)
			if (n < max)
				out[n] = e;
	for (size_t i = 0; i < nr_table; i++) {
		if (builtin_find(table[i].id))
			continue;
		if (n < max)
			out[n] = &table[i];
		n++;
	}
	if (out && n && max)
		qsort(out, n < max ? n : max, sizeof(*out), by_id);
	return n;
}
