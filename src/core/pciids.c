/*
 * A streaming reader of pci.ids: the file is about 1.3 MB and read once per
 * lookup, stopping at the vendor's section end.
 *
 * Format: "vvvv  Vendor", "\tdddd  Device", "\t\tssss dddd  Subsystem",
 * comments with '#'; ids are lowercase hex.
 */
#include "core/pciids.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#define PCIIDS_CAP (8 * 1024 * 1024)

static bool
hex_at(const char *p, const char *end, unsigned digits, unsigned *v)
{
	unsigned x = 0;

	if (end - p < (long)digits)
		return false;
	for (unsigned i = 0; i < digits; i++) {
		char c = p[i];

		x <<= 4;
		if (c >= '0' && c <= '9')
			x |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			x |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			x |= (unsigned)(c - 'A' + 10);
		else
			return false;
	}
	*v = x;
	return true;
}

/* Copy the name after the id and its two spaces. */
static void
take_name(const char *p, const char *eol, char *dst, size_t size)
{
	while (p < eol && (*p == ' ' || *p == '\t'))
		p++;
	size_t n = (size_t)(eol - p);

	if (n >= size)
		n = size - 1;
	memcpy(dst, p, n);
	dst[n] = '\0';
}

/* Read the first pci.ids found under root into sb; false when there is none. */
static bool
load(const char *root, struct strbuf *sb)
{
	static const char *const paths[] = {
		"usr/share/hwdata/pci.ids",
		"usr/share/misc/pci.ids",
		"usr/share/pci.ids",
	};

	for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
		if (file_read(root, paths[i], sb, PCIIDS_CAP, NULL) == 0 && sb->len)
			return true;
		strbuf_reset(sb);
	}
	return false;
}

bool
pciids_lookup(const char *root, unsigned vendor, unsigned device, unsigned subsys_vendor,
              unsigned subsys_device, struct pci_names *out)
{
	struct strbuf sb = STRBUF_INIT;
	bool in_vendor = false, in_device = false, found = false;
	const char *p, *end;

	memset(out, 0, sizeof(*out));
	/* a saved tree without hwdata of its own still gets names: this machine's */
	if (!load(root, &sb) && (!strcmp(root, "/") || !load("/", &sb)))
		goto out;
	p = sb.buf;
	end = sb.buf + sb.len;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		unsigned a, b;

		if (!eol)
			eol = end;
		if (*p == '#' || p == eol) {
			p = eol + 1;
			continue;
		}
		if (*p != '\t') {
			/* a vendor line (or the class section, which ends the vendors) */
			if (in_vendor || (p[0] == 'C' && p[1] == ' '))
				break;
			if (hex_at(p, eol, 4, &a) && a == vendor) {
				in_vendor = true;
				take_name(p + 4, eol, out->vendor, sizeof(out->vendor));
			}
		} else if (in_vendor && p[1] != '\t') {
			if (in_device)
				break; /* the device's subsystems are over */
			if (hex_at(p + 1, eol, 4, &a) && a == device) {
				in_device = true;
				found = true;
				take_name(p + 5, eol, out->device, sizeof(out->device));
			}
		} else if (in_device) {
			if (hex_at(p + 2, eol, 4, &a) && p + 6 < eol && hex_at(p + 7, eol, 4, &b) &&
			    a == subsys_vendor && b == subsys_device)
				take_name(p + 11, eol, out->subsystem, sizeof(out->subsystem));
		}
		p = eol + 1;
	}
out:
	strbuf_release(&sb);
	return found;
}

void
pciids_display_name(const struct pci_names *n, unsigned vendor, char *buf, size_t size)
{
	const char *who = vendor == 0x1002   ? "AMD"
	                  : vendor == 0x8086 ? "Intel"
	                  : vendor == 0x10de ? "NVIDIA"
	                                     : "";
	const char *lb = strrchr(n->device, '['), *rb = lb ? strchr(lb, ']') : NULL;

	if (lb && rb && rb > lb + 1)
		snprintf(buf, size, "%s%s%.*s", who, *who ? " " : "", (int)(rb - lb - 1), lb + 1);
	else
		snprintf(buf, size, "%s%s%s", who, *who ? " " : "", n->device);
}
