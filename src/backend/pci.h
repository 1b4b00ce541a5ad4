/*
 * The display-class devices on the PCI bus and the kernel driver bound to
 * each, from sysfs: used to explain why a vendor library finds no GPU (no
 * device, no driver bound, the wrong driver bound).
 */
#ifndef GPUSCOPE_PCI_H
#define GPUSCOPE_PCI_H

#include <stddef.h>

struct err;
struct strbuf;

#define PCI_VENDOR_NVIDIA 0x10de
#define PCI_VENDOR_AMD    0x1002
#define PCI_VENDOR_INTEL  0x8086

struct pci_gpu {
	char addr[16];   /* "0000:3b:00.0" */
	unsigned vendor; /* 0x10de */
	unsigned device;
	unsigned class;  /* 0x030000 VGA, 0x030200 3D controller */
	char driver[32]; /* bound kernel driver, "" when none */
};

/*
 * List the display-class (0x03xxxx) PCI devices under
 * sysfs_root/bus/pci/devices, sorted by address. *out is allocated (free it);
 * a missing directory gives an empty list.
 */
/* "NVIDIA", "AMD", "Intel", or "other". */
const char *pci_vendor_name(unsigned vendor);

int pci_list_gpus(const char *sysfs_root, struct pci_gpu **out, size_t *nr, struct err *err);

/*
 * Append to sb one sentence explaining the state of the vendor's GPUs on the
 * bus ("no NVIDIA GPU on the PCI bus", "the NVIDIA GPU at 0000:01:00.0 has no
 * kernel driver bound", ...). Returns the number of such GPUs.
 */
size_t pci_explain(const char *sysfs_root, unsigned vendor, const char *vendor_name,
                   const char *expected_driver, struct strbuf *sb);

#endif
