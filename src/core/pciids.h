/*
 * Names of PCI devices from the PCI ID database (pci.ids, from hwdata or
 * pciutils), when it is installed.
 */
#ifndef GPUSCOPE_PCIIDS_H
#define GPUSCOPE_PCIIDS_H

#include <stdbool.h>
#include <stddef.h>

struct pci_names {
	char vendor[80];     /* "Advanced Micro Devices, Inc. [AMD/ATI]" */
	char device[128];    /* "Navi 32 [Radeon RX 7700 XT / 7800 XT]" */
	char subsystem[128]; /* "PowerColor RX 7800 XT Hellhound", or "" */
};

/*
 * Look the ids up in the first pci.ids found under root (usr/share/hwdata,
 * usr/share/misc, usr/share); when root is not "/" and has none, in this
 * machine's (a saved tree without hwdata still gets names). Returns false
 * when there is no database or it does not know the device (the vendor may
 * still be filled).
 */
bool pciids_lookup(const char *root, unsigned vendor, unsigned device, unsigned subsys_vendor,
                   unsigned subsys_device, struct pci_names *out);

/*
 * A short display name from looked-up names: the part in brackets of the
 * device name when it has one ("Radeon RX 7700 XT / 7800 XT"), with a
 * short vendor word in front ("AMD", "Intel"). Writes to buf.
 */
void pciids_display_name(const struct pci_names *n, unsigned vendor, char *buf, size_t size);

#endif
