/*
 * PCI display devices from sysfs, and what their driver binding tells a
 * user who sees no GPU.
 */
#include "backend/pci.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fileio.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

static int
cmp_addr(const void *a, const void *b)
{
	return strcmp(((const struct pci_gpu *)a)->addr, ((const struct pci_gpu *)b)->addr);
}

const char *
pci_vendor_name(unsigned vendor)
{
	switch (vendor) {
	case PCI_VENDOR_NVIDIA:
		return "NVIDIA";
	case PCI_VENDOR_AMD:
		return "AMD";
	case PCI_VENDOR_INTEL:
		return "Intel";
	default:
		return "other";
	}
}

int
pci_list_gpus(const char *sysfs_root, struct pci_gpu **out, size_t *nr, struct err *err)
{
	char dir[4096], path[4096 + 300], link[4096];
	struct pci_gpu *v = NULL;
	size_t n = 0, alloc = 0;
	struct dirent *de;
	DIR *d;

	*out = NULL;
	*nr = 0;
	path_join(dir, sizeof(dir), sysfs_root, "bus/pci/devices");
	d = opendir(dir);
	if (!d) {
		struct stat st;

		/* a machine without PCI (an SoC) has a /sys without bus/pci */
		if (errno == ENOENT && stat(sysfs_root, &st) == 0)
			return 0;
		return err_set(err, errno == EACCES || errno == EPERM ? E_PERM : E_IO, "%s: %s",
		               dir, strerror(errno));
	}
	while ((de = readdir(d))) {
		uint64_t cls, ven, dev;
		struct pci_gpu *g;
		ssize_t len;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(g->addr))
			continue;
		snprintf(path, sizeof(path), "bus/pci/devices/%s/class", de->d_name);
		if (file_read_u64(sysfs_root, path, &cls, NULL) < 0 || (cls >> 16) != 0x03)
			continue;
		snprintf(path, sizeof(path), "bus/pci/devices/%s/vendor", de->d_name);
		if (file_read_u64(sysfs_root, path, &ven, NULL) < 0)
			continue;
		snprintf(path, sizeof(path), "bus/pci/devices/%s/device", de->d_name);
		if (file_read_u64(sysfs_root, path, &dev, NULL) < 0)
			dev = 0;
		ALLOC_GROW(v, n + 1, alloc);
		g = &v[n++];
		memset(g, 0, sizeof(*g));
		str_copy(g->addr, sizeof(g->addr), de->d_name);
		g->vendor = (unsigned)ven;
		g->device = (unsigned)dev;
		g->class = (unsigned)cls;
		snprintf(path, sizeof(path), "%s/%s/driver", dir, de->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len > 0) {
			const char *base;

			link[len] = '\0';
			base = strrchr(link, '/');
			str_copy(g->driver, sizeof(g->driver), base ? base + 1 : link);
		}
	}
	closedir(d);
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_addr);
	*out = v;
	*nr = n;
	return 0;
}

size_t
pci_explain(const char *sysfs_root, unsigned vendor, const char *vendor_name,
            const char *expected_driver, struct strbuf *sb)
{
	struct pci_gpu *v;
	size_t nr, found = 0, bound = 0;

	pci_list_gpus(sysfs_root, &v, &nr, NULL);
	for (size_t i = 0; i < nr; i++) {
		if (v[i].vendor != vendor)
			continue;
		found++;
		if (!strcmp(v[i].driver, expected_driver)) {
			bound++;
			continue;
		}
		if (!v[i].driver[0])
			strbuf_addf(sb, "; the %s GPU at %s has no kernel driver bound",
			            vendor_name, v[i].addr);
		else if (!strcmp(v[i].driver, "vfio-pci"))
			strbuf_addf(
			        sb,
			        "; the %s GPU at %s is bound to vfio-pci (passed through to a virtual machine)",
			        vendor_name, v[i].addr);
		else
			strbuf_addf(sb, "; the %s GPU at %s is driven by '%s', not by '%s'",
			            vendor_name, v[i].addr, v[i].driver, expected_driver);
	}
	if (!found)
		strbuf_addf(sb, "; no %s GPU on the PCI bus", vendor_name);
	else if (bound)
		strbuf_addf(sb, "; %zu %s GPU%s on the PCI bus %s driven by '%s'", bound,
		            vendor_name, bound == 1 ? "" : "s", bound == 1 ? "is" : "are",
		            expected_driver);
	free(v);
	return found;
}
