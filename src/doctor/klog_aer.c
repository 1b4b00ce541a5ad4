/*
 * log.aer.*: the PCIe AER reports of the kernel log, decoded one line at a
 * time into events (a storm of repeats is one event with a count and its
 * first and last line), then turned into findings that blame the GPU only
 * when the reporting device is the GPU or its upstream port in the PCI
 * topology; errors on a NIC or an NVMe drive are said not to be the GPU's.
 *
 * Keys are "field|field|...", the device's bus id first ("?" when the line
 * names none), so that the report can read them back.
 */
#include "doctor/doctor.h"
#include "doctor/klog.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/pci.h"
#include "core/config.h"
#include "core/err.h"
#include "core/fileio.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "doctor/klog_dec.h"

/* --- the kinds of events (their addresses tell them apart) ---------------------------- */

static const char k_aer_recv[] = "aer received";    /* source|sev */
static const char k_aer_bus[] = "aer bus error";    /* bdf|sev|type|drv */
static const char k_aer_bit[] = "aer status bit";   /* bdf|name */
static const char k_aer_id[] = "aer device id";     /* bdf */
static const char k_aer_nrec[] = "aer unrecovered"; /* bdf */
static const char k_aer_gpu[] = "aer gpu line";     /* bdf: a GPU driver's own AER line */
static const char k_aer_bridge[] = "aer bridge";    /* port|first bus|last bus */

/* Corrected AER errors on the GPU's link from this many on: a marginal link, not a blip. */
#define AER_MANY 10

/* --- PCIe AER ---------------------------------------------------------------------------- */

enum aer_sev { AER_CORRECTED, AER_NONFATAL, AER_FATAL, AER_NR };

static const char *const sev_key[AER_NR] = { "corrected", "nonfatal", "fatal" };

static int
aer_sev(const struct klog_line *l)
{
	if (klog_find(l, "(Fatal)"))
		return AER_FATAL;
	if (klog_find(l, "Non-Fatal"))
		return AER_NONFATAL;
	if (klog_find(l, "Corrected") || klog_find(l, "Correctable"))
		return AER_CORRECTED;
	return -1;
}

/* The status bits the kernel names (new and old spellings), corrected ones first. */
static const struct aer_bit {
	const char *name;
	bool corrected;
	bool link; /* a sign of the link's signal: physical or data-link layer */
} aer_bits[] = {
	{ "RxErr", true, true },
	{ "Receiver Error", true, true },
	{ "BadTLP", true, true },
	{ "Bad TLP", true, true },
	{ "BadDLLP", true, true },
	{ "Bad DLLP", true, true },
	{ "Rollover", true, true },
	{ "RELAY_NUM Rollover", true, true },
	{ "Timeout", true, true },
	{ "Replay Timer Timeout", true, true },
	{ "NonFatalErr", true, false },
	{ "Advisory Non-Fatal", true, false },
	{ "CorrIntErr", true, false },
	{ "HeaderOF", true, false },
	{ "Undefined", false, false },
	{ "DLP", false, true },
	{ "Data Link Protocol", false, true },
	{ "SDES", false, true },
	{ "Surprise Down Error", false, true },
	{ "TLP", false, false },
	{ "Poisoned TLP", false, false },
	{ "FCP", false, true },
	{ "Flow Control Protocol", false, true },
	{ "CmpltTO", false, false },
	{ "Completion Timeout", false, false },
	{ "CmpltAbrt", false, false },
	{ "Completer Abort", false, false },
	{ "UnxCmplt", false, false },
	{ "Unexpected Completion", false, false },
	{ "RxOF", false, false },
	{ "Receiver Overflow", false, false },
	{ "MalfTLP", false, false },
	{ "Malformed TLP", false, false },
	{ "ECRC", false, false },
	{ "UnsupReq", false, false },
	{ "Unsupported Request", false, false },
	{ "ACSViol", false, false },
	{ "ACS Violation", false, false },
	{ "UncorrIntErr", false, false },
	{ "BlockedTLP", false, false },
	{ "AtomicOpBlocked", false, false },
	{ "TLPBlockedErr", false, false },
	{ "PoisonTLPBlocked", false, false },
};

static const struct aer_bit *
aer_bit(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(aer_bits); i++)
		if (!strcmp(aer_bits[i].name, name))
			return &aer_bits[i];
	return NULL;
}

/* "received: 0000:01:00.0", "received from 0000:01:00.0", or the old "id=00e5" */
static bool
aer_source(const char *p, const char *end, char *out, size_t size)
{
	unsigned id;
	char hex[8];

	if (klog_is_bdf(p, end)) {
		klog_take(out, size, p, p + 12, "");
		return true;
	}
	if (end - p >= 7 && !memcmp(p, "id=", 3)) {
		klog_take(hex, sizeof(hex), p + 3, p + 7, "");
		if (strlen(hex) == 4 && sscanf(hex, "%x", &id) == 1) {
			snprintf(out, size, "0000:%02x:%02x.%u", id >> 8, (id >> 3) & 0x1f, id & 7);
			return true;
		}
	}
	return false;
}

/* A GPU's kernel driver, by the name the kernel prints before a device's bus id. */
static bool
gpu_driver(const char *drv)
{
	return !strcmp(drv, "nvidia") || !strcmp(drv, "amdgpu") || !strcmp(drv, "i915") ||
	       !strcmp(drv, "xe") || !strcmp(drv, "nouveau") || !strcmp(drv, "radeon");
}

bool
klog_aer_line(const struct klog_line *l, struct klog_events *ev)
{
	struct klog_pfx p;
	const char *s, *end;
	char a[64];
	int sev;

	if (l->len < 8)
		return false;
	klog_prefix(l, &p);
	end = p.end;
	/* a line that names no device is one of AER's only with "AER" in it (most lines are not) */
	if (!p.bdf[0] && !klog_find(l, "AER"))
		return false;
	/* "AER: Corrected error received: 0000:01:00.0", "Correctable error message received from"
	 */
	if (((s = klog_find(l, " error received: ")) && (s += 17)) ||
	    ((s = klog_find(l, " error message received from ")) && (s += 29))) {
		if ((sev = aer_sev(l)) < 0)
			return false;
		if (!aer_source(s, end, a, sizeof(a)))
			snprintf(a, sizeof(a), "%s", p.bdf[0] ? p.bdf : "?");
		klog_event_add(ev, k_aer_recv, l, "%s|%s", a, sev_key[sev]);
		return true;
	}
	/* "PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)" */
	if ((s = klog_find(l, "PCIe Bus Error: severity=")) && (sev = aer_sev(l)) >= 0) {
		const char *t = klog_find(l, "type=");

		klog_take(a, sizeof(a), t ? t + 5 : end, end, ",");
		klog_event_add(ev, k_aer_bus, l, "%s|%s|%s|%s", p.bdf[0] ? p.bdf : "?",
		               sev_key[sev], a[0] ? a : "?", p.drv[0] ? p.drv : "?");
		return true;
	}
	if (!p.bdf[0])
		return false;
	/* "pci 0000:00:03.0: PCI bridge to [bus 03]" or "[bus 03-05]": the log's own topology */
	if ((s = klog_find(l, "PCI bridge to [bus "))) {
		unsigned lo, hi;
		int n = sscanf(s + 19, "%x-%x", &lo, &hi);

		if (n >= 1) {
			klog_event_add(ev, k_aer_bridge, l, "%s|%u|%u", p.bdf, lo,
			               n == 2 ? hi : lo);
			return true;
		}
	}
	/* "nvidia 0000:03:00.0: AER: can't recover": the GPU's driver in an AER recovery */
	if (gpu_driver(p.drv) && klog_find(l, "AER: "))
		klog_event_add(ev, k_aer_gpu, l, "%s", p.bdf);
	/* "  device [10de:2330] error status/mask=00000001/0000e000" */
	if ((s = klog_find(l, "device [")) && klog_find(l, "error status/mask=")) {
		struct klog_event *e = klog_event_add(ev, k_aer_id, l, "%s", p.bdf);

		if (e->count == 1) {
			klog_take(a, sizeof(a), s + 8, end, "]");
			klog_add_detail(e, "", a);
		}
		return true;
	}
	/* "   [ 0] RxErr                  (First)" */
	s = p.rest;
	if (s < end && *s == '[') {
		const char *q = s + 1;

		while (q < end && *q == ' ')
			q++;
		while (q < end && isdigit((unsigned char)*q))
			q++;
		if (q < end && *q == ']') {
			size_t n;

			q++;
			while (q < end && *q == ' ')
				q++;
			klog_take(a, sizeof(a), q, end, "(");
			n = strlen(a);
			while (n && a[n - 1] == ' ')
				a[--n] = '\0';
			if (aer_bit(a)) {
				klog_event_add(ev, k_aer_bit, l, "%s|%s", p.bdf, a);
				return true;
			}
		}
	}
	if (klog_find(l, "AER: can't recover") || klog_find(l, "AER: device recovery failed")) {
		klog_event_add(ev, k_aer_nrec, l, "%s", p.bdf);
		return true;
	}
	return false;
}

/* --- AER findings ------------------------------------------------------------------------ */

/* A device with AER errors: the one named in "received: BDF" or in "PCIe Bus Error". */
struct aer_dev {
	char bdf[32];
	char drv[32];
	unsigned long n[AER_NR];
	const struct klog_line *first[AER_NR], *last[AER_NR];
	char type[AER_NR][48];
	size_t order;
};

/* The GPUs and their upstream ports, from the PCI topology in sysfs. */
struct topo {
	struct pci_gpu *gpus;
	size_t nr;
	char (*up)[16]; /* each GPU's upstream port, "" when on a root bus */
	bool read;
};

static void
topo_read(const struct dr_ctx *ctx, struct topo *t)
{
	struct err err = ERR_INIT;

	memset(t, 0, sizeof(*t));
	if (!ctx || !ctx->cfg || !ctx->cfg->sysfs_root)
		return;
	if (pci_list_gpus(ctx->cfg->sysfs_root, &t->gpus, &t->nr, &err) < 0)
		return;
	t->read = true;
	t->up = xcalloc(t->nr ? t->nr : 1, sizeof(*t->up));
	for (size_t i = 0; i < t->nr; i++) {
		char path[4096], link[4096];
		ssize_t n;

		if (!path_fmt(path, sizeof(path), "%s/bus/pci/devices/%s", ctx->cfg->sysfs_root,
		              t->gpus[i].addr))
			continue;
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		/* ".../pci0000:00/0000:00:01.0/0000:01:00.0": the parent directory */
		{
			char *last = strrchr(link, '/'), *parent;

			if (!last)
				continue;
			*last = '\0';
			parent = strrchr(link, '/');
			parent = parent ? parent + 1 : link;
			if (klog_is_bdf(parent, parent + strlen(parent)))
				snprintf(t->up[i], sizeof(t->up[i]), "%.12s", parent);
		}
	}
}

static void
topo_release(struct topo *t)
{
	free(t->gpus);
	free(t->up);
}

enum role { ROLE_OTHER, ROLE_GPU, ROLE_PORT, ROLE_UNKNOWN };

/* What bdf is to the GPUs; *gpu the GPU it belongs to. */
static enum role
role_of(const struct topo *t, const struct aer_dev *d, size_t *gpu)
{
	for (size_t i = 0; i < t->nr; i++) {
		*gpu = i;
		/* the GPU, or another function of it (its audio) */
		if (!strncmp(t->gpus[i].addr, d->bdf, 10))
			return ROLE_GPU;
		if (t->up[i][0] && !strcmp(t->up[i], d->bdf))
			return ROLE_PORT;
	}
	*gpu = (size_t)-1;
	if (gpu_driver(d->drv))
		return ROLE_GPU;
	if (!t->read || !t->nr)
		return ROLE_UNKNOWN;
	return ROLE_OTHER;
}

static struct aer_dev *
dev_get(struct aer_dev **v, size_t *nr, size_t *alloc, const char *bdf, size_t order)
{
	struct aer_dev *d;

	for (size_t i = 0; i < *nr; i++)
		if (!strcmp((*v)[i].bdf, bdf)) {
			if (order < (*v)[i].order)
				(*v)[i].order = order;
			return &(*v)[i];
		}
	ALLOC_GROW(*v, *nr + 1, *alloc);
	d = &(*v)[(*nr)++];
	memset(d, 0, sizeof(*d));
	snprintf(d->bdf, sizeof(d->bdf), "%s", bdf);
	d->order = order;
	return d;
}

static int
sev_of(const char *key)
{
	for (int s = 0; s < AER_NR; s++)
		if (!strcmp(key, sev_key[s]))
			return s;
	return -1;
}

static int
by_order(const void *a, const void *b)
{
	const struct aer_dev *x = a, *y = b;

	return x->order < y->order ? -1 : x->order > y->order;
}

/* "RxErr x12, BadTLP x3" for device bdf (corrected or not), into sb; true when a link bit. */
static bool
bits_of(const struct klog_events *ev, const char *bdf, bool corrected, struct strbuf *sb)
{
	bool link = false;
	char d[32], name[64];

	for (size_t i = 0; i < ev->nr; i++) {
		const struct klog_event *e = &ev->v[i];
		const struct aer_bit *b;

		if (e->kind != k_aer_bit || strcmp(klog_field(e->key, 0, d, sizeof(d)), bdf))
			continue;
		b = aer_bit(klog_field(e->key, 1, name, sizeof(name)));
		if (!b || b->corrected != corrected)
			continue;
		link |= b->link;
		strbuf_addf(sb, "%s%s x%lu", sb->len ? ", " : "", name, e->count);
	}
	return link;
}

static const char *
class_name(const struct dr_ctx *ctx, const char *bdf, char *buf, size_t size)
{
	char path[256];
	uint64_t cls;

	snprintf(buf, size, "a device that is not a GPU");
	if (!path_fmt(path, sizeof(path), "bus/pci/devices/%s/class", bdf) ||
	    file_read_u64(ctx->cfg->sysfs_root, path, &cls, NULL) < 0)
		return buf;
	switch (cls >> 16) {
	case 0x01:
		snprintf(buf, size, "a storage controller (class 0x%06llx)",
		         (unsigned long long)cls);
		break;
	case 0x02:
		snprintf(buf, size, "a network controller (class 0x%06llx)",
		         (unsigned long long)cls);
		break;
	case 0x06:
		snprintf(buf, size, "a bridge or port (class 0x%06llx) with no GPU below it",
		         (unsigned long long)cls);
		break;
	case 0x0c:
		snprintf(buf, size, "a USB or serial-bus controller (class 0x%06llx)",
		         (unsigned long long)cls);
		break;
	default:
		snprintf(buf, size, "a device of class 0x%06llx, not a GPU",
		         (unsigned long long)cls);
	}
	return buf;
}

static void
aer_evidence(struct dr_finding *f, const struct aer_dev *d, int s)
{
	char t1[64], t2[64];

	klog_quote(f, d->first[s]);
	if (d->n[s] > 1 && d->last[s] != d->first[s]) {
		dr_evidence(f, "... %lu %s errors from %s to %s; the last:", d->n[s],
		            s == AER_CORRECTED ? "corrected" : "uncorrectable",
		            klog_when(d->first[s], t1, sizeof(t1)),
		            klog_when(d->last[s], t2, sizeof(t2)));
		klog_quote(f, d->last[s]);
	}
}

/*
 * For a log judged alone (--log: maybe another machine's): the GPU below d, a port, from the
 * log itself: a GPU driver's AER line on a bus that the port's "PCI bridge to [bus ..]"
 * covers or, where the log shows no bridge of this port, one after the port's first error
 * (the kernel's recovery of a port reaches the devices below it). Its bus id into gpu.
 */
static bool
log_gpu_below(const struct klog_events *ev, const struct aer_dev *d, int worst, char *gpu,
              size_t size)
{
	unsigned long lo = 0, hi = 0;
	bool bridged = false;
	char f[32];

	for (size_t i = 0; i < ev->nr; i++) {
		const struct klog_event *e = &ev->v[i];

		if (e->kind != k_aer_bridge || strcmp(klog_field(e->key, 0, f, sizeof(f)), d->bdf))
			continue;
		bridged = true;
		lo = strtoul(klog_field(e->key, 1, f, sizeof(f)), NULL, 10);
		hi = strtoul(klog_field(e->key, 2, f, sizeof(f)), NULL, 10);
	}
	for (size_t i = 0; i < ev->nr; i++) {
		const struct klog_event *e = &ev->v[i];
		unsigned long bus;

		if (e->kind != k_aer_gpu || !strcmp(e->key, d->bdf) || strlen(e->key) < 7)
			continue;
		bus = strtoul(e->key + 5, NULL, 16);
		if (bridged ? bus >= lo && bus <= hi : e->last.lineno > d->first[worst]->lineno) {
			snprintf(gpu, size, "%s", e->key);
			return true;
		}
	}
	return false;
}

static void
aer_gpu(const struct dr_ctx *ctx, const struct klog_events *ev, struct dr_report *r,
        const struct aer_dev *d, const struct topo *t, enum role role, size_t gi, const char *below)
{
	static const char *const ids[AER_NR] = { "log.aer.corrected",
		                                 "log.aer.uncorrected_nonfatal", "log.aer.fatal" };
	char who[160], n[32];
	const struct klog_event *id;

	if (gi != (size_t)-1 && role == ROLE_PORT)
		snprintf(who, sizeof(who), "the PCIe port above the %s GPU at %s (%s)",
		         pci_vendor_name(t->gpus[gi].vendor), t->gpus[gi].addr, d->bdf);
	else if (gi != (size_t)-1)
		snprintf(who, sizeof(who), "the %s GPU at %s", pci_vendor_name(t->gpus[gi].vendor),
		         d->bdf);
	else if (role == ROLE_PORT && below[0])
		snprintf(who, sizeof(who), "the PCIe port above the GPU at %s (%s)", below, d->bdf);
	else
		snprintf(who, sizeof(who), "the GPU at %s (%s)", d->bdf, d->drv);
	for (int s = AER_FATAL; s >= 0; s--) {
		struct strbuf bits = STRBUF_INIT;
		struct dr_finding *f;
		enum dr_severity sev;
		bool link;

		if (!d->n[s])
			continue;
		link = bits_of(ev, d->bdf, s == AER_CORRECTED, &bits);
		sev = s != AER_CORRECTED ? DR_ERROR : d->n[s] >= AER_MANY ? DR_WARNING : DR_INFO;
		f = dr_add(r, ids[s], sev, "PCIe %s errors on %s: %s",
		           s == AER_CORRECTED ? "corrected"
		           : s == AER_FATAL   ? "fatal uncorrectable"
		                              : "uncorrectable (non-fatal)",
		           who, klog_times(d->n[s], n, sizeof(n)));
		aer_evidence(f, d, s);
		if (d->type[s][0])
			dr_evidence(f, "error type: %s%s%s", d->type[s],
			            bits.len ? "; status: " : "", bits.buf ? bits.buf : "");
		if (klog_count_on(ev, k_aer_id, d->bdf, &id) && id->detail)
			dr_evidence(f, "device [%s] (PCI vendor:device)", id->detail);
		if (gi != (size_t)-1)
			dr_evidence(f, "%s/bus/pci/devices/%s: upstream port %s",
			            ctx->cfg->sysfs_root, t->gpus[gi].addr,
			            t->up[gi][0] ? t->up[gi] : "(none: root bus)");
		else if (role == ROLE_PORT && below[0])
			dr_evidence(
			        f,
			        "the log: the GPU's driver at %s took part in this port's error "
			        "recovery (the port is above it)",
			        below);
		if (s == AER_CORRECTED) {
			klog_mean(f,
			          "The PCIe link %s saw transmission errors that the link layer "
			          "corrected by retrying: no data was lost, but each retry costs "
			          "bandwidth. %s",
			          role == ROLE_PORT ? "between this port and the GPU"
			                            : "of the GPU",
			          d->n[s] >= AER_MANY
			                  ? "This many, on the GPU's link, mean a marginal link."
			                  : "A few over a long uptime are common; many are not.");
			if (link || !bits.len)
				klog_mean(
				        f,
				        "Causes, most likely first: (1) the signal path: a riser or "
				        "extension cable, a card not fully seated, a dirty or worn slot; "
				        "the errors follow the path, not the card, when the card is moved "
				        "or the riser removed; (2) ASPM link power management: errors at "
				        "idle-to-busy transitions, gone with pcie_aspm=off; (3) a link "
				        "speed above what the path carries (Gen4/Gen5 through a Gen3 "
				        "riser): gone when the slot is set to a lower generation in the "
				        "firmware setup; (4) the card or the board, when none of these "
				        "changes anything.");
			dr_action(
			        f,
			        "Update the system firmware (BIOS) and the GPU driver; try booting "
			        "with pcie_aspm=off. Then check 'sudo lspci -vvs %s' for a link "
			        "running below its speed or width, reseat the card, remove any riser "
			        "or cable, try another slot, or set the slot's PCIe generation lower.",
			        gi != (size_t)-1 ? t->gpus[gi].addr : d->bdf);
		} else {
			klog_mean(
			        f,
			        "The link %s lost data it could not recover by retrying%s; drivers "
			        "then see failed transactions, and the GPU may fall off the bus "
			        "(NVIDIA Xid 79, amdgpu resets) until it is reset or the machine "
			        "rebooted.",
			        role == ROLE_PORT ? "between this port and the GPU" : "of the GPU",
			        s == AER_FATAL
			                ? " and the link itself was declared unreliable (the "
			                  "kernel resets it)"
			                : "");
			if (klog_count_on(ev, k_aer_nrec, d->bdf, NULL))
				klog_mean(
				        f,
				        "The kernel could not recover the device ('can't recover' "
				        "or 'device recovery failed' in the log).");
			klog_mean(
			        f,
			        "Causes, most likely first: (1) the signal path (riser, cable, "
			        "seating, slot): corrected errors on the same link come with it; "
			        "(2) power: the card drops out under load spikes (PSU, its power "
			        "connectors); (3) a GPU that hung and stopped answering "
			        "(completion timeouts, CmpltTO) after a driver or firmware fault; "
			        "(4) the card or board.");
			dr_action(
			        f,
			        "Update the GPU driver and the system firmware; then reseat the card "
			        "and its power connectors, remove risers, try another slot and check "
			        "the power supply's rating. Reboot to recover a GPU that fell off the "
			        "bus.");
		}
		strbuf_release(&bits);
	}
}

void
klog_aer_report(const struct dr_ctx *ctx, const struct klog_events *ev, struct dr_report *r)
{
	struct aer_dev *v = NULL;
	size_t nr = 0, alloc = 0;
	struct topo t;
	/* count per device and severity: received lines and bus-error lines, the larger */
	unsigned long *nrecv = NULL;

	for (size_t i = 0; i < ev->nr; i++) {
		const struct klog_event *e = &ev->v[i];
		char bdf[32], sevk[16], type[48], drv[32];
		struct aer_dev *d;
		int s;

		if (e->kind != k_aer_recv && e->kind != k_aer_bus)
			continue;
		klog_field(e->key, 0, bdf, sizeof(bdf));
		s = sev_of(klog_field(e->key, 1, sevk, sizeof(sevk)));
		if (s < 0)
			continue;
		d = dev_get(&v, &nr, &alloc, bdf, e->order);
		if (e->kind == k_aer_bus) {
			klog_field(e->key, 2, type, sizeof(type));
			klog_field(e->key, 3, drv, sizeof(drv));
			if (strcmp(drv, "?") && strcmp(drv, "pcieport"))
				snprintf(d->drv, sizeof(d->drv), "%s", drv);
			else if (!d->drv[0])
				snprintf(d->drv, sizeof(d->drv), "%s", drv);
			if (!d->type[s][0])
				snprintf(d->type[s], sizeof(d->type[s]), "%s", type);
			d->n[s] += e->count;
		}
		if (!d->first[s] || e->first.lineno < d->first[s]->lineno)
			d->first[s] = &e->first;
		if (!d->last[s] || e->last.lineno > d->last[s]->lineno)
			d->last[s] = &e->last;
	}
	/* the received lines: a count of their own, the larger of the two wins */
	if (nr) {
		nrecv = xcalloc(nr * AER_NR, sizeof(*nrecv));
		for (size_t i = 0; i < ev->nr; i++) {
			const struct klog_event *e = &ev->v[i];
			char bdf[32], sevk[16];
			int s;

			if (e->kind != k_aer_recv)
				continue;
			klog_field(e->key, 0, bdf, sizeof(bdf));
			s = sev_of(klog_field(e->key, 1, sevk, sizeof(sevk)));
			for (size_t j = 0; s >= 0 && j < nr; j++)
				if (!strcmp(v[j].bdf, bdf))
					nrecv[j * AER_NR + (size_t)s] += e->count;
		}
		for (size_t j = 0; j < nr; j++)
			for (int s = 0; s < AER_NR; s++)
				if (nrecv[j * AER_NR + (size_t)s] > v[j].n[s])
					v[j].n[s] = nrecv[j * AER_NR + (size_t)s];
	}
	free(nrecv);
	if (!nr)
		return;
	qsort(v, nr, sizeof(*v), by_order);
	/* a log of another machine is not judged by this machine's PCI topology */
	if (ctx && ctx->klog_foreign)
		memset(&t, 0, sizeof(t));
	else
		topo_read(ctx, &t);
	for (size_t i = 0; i < nr; i++) {
		struct aer_dev *d = &v[i];
		size_t gi;
		enum role role = role_of(&t, d, &gi);
		int worst = d->n[AER_FATAL]      ? AER_FATAL
		            : d->n[AER_NONFATAL] ? AER_NONFATAL
		                                 : AER_CORRECTED;
		char below[16] = "";
		static const char *const ids[AER_NR] = { "log.aer.corrected",
			                                 "log.aer.uncorrected_nonfatal",
			                                 "log.aer.fatal" };
		struct dr_finding *f;
		char what[128], n[32];

		if (!d->n[worst] || !d->first[worst])
			continue;
		if (role == ROLE_UNKNOWN && ctx && ctx->klog_foreign &&
		    log_gpu_below(ev, d, worst, below, sizeof(below)))
			role = ROLE_PORT;
		if (role == ROLE_GPU || role == ROLE_PORT) {
			aer_gpu(ctx, ev, r, d, &t, role, gi, below);
			continue;
		}
		if (role == ROLE_OTHER)
			class_name(ctx, d->bdf, what, sizeof(what));
		f = dr_add(r, ids[worst], DR_INFO, "PCIe %s errors on %s%s%s: %s",
		           worst == AER_CORRECTED ? "corrected" : "uncorrectable", d->bdf,
		           role == ROLE_OTHER ? ", " : "", role == ROLE_OTHER ? what : "",
		           role == ROLE_OTHER ? "not the GPU" : "not known to be the GPU's link");
		aer_evidence(f, d, worst);
		dr_evidence(f, "%s errors: %s", sev_key[worst],
		            klog_times(d->n[worst], n, sizeof(n)));
		if (role == ROLE_OTHER) {
			for (size_t g = 0; g < t.nr; g++)
				dr_evidence(f, "%s/bus/pci/devices/%s: the GPU, upstream port %s",
				            ctx->cfg->sysfs_root, t.gpus[g].addr,
				            t.up[g][0] ? t.up[g] : "(none: root bus)");
			klog_mean(f,
			          "The device that reported these errors is neither a GPU nor the "
			          "port above one: they do not explain a GPU problem. (They matter "
			          "for that device: a NIC or NVMe drive on a marginal link.)");
		} else if (ctx && ctx->klog_foreign) {
			klog_mean(f,
			          "The log is judged alone (it may be another machine's): it "
			          "does not show this device to be a GPU or the port above one.");
		} else {
			klog_mean(
			        f,
			        "The PCI topology could not be read (no GPU found under %s/bus/pci), "
			        "so whether this device is the GPU or the port above it is unknown.",
			        ctx && ctx->cfg && ctx->cfg->sysfs_root ? ctx->cfg->sysfs_root
			                                                : "/sys");
		}
		dr_action(f,
		          "Nothing for the GPU. Compare the bus id with 'lspci -tv' to see which "
		          "device and slot it is.");
	}
	topo_release(&t);
	free(v);
}

/* --- the catalog ------------------------------------------------------------------------- */

const struct dr_explain dr_catalog_klog_aer[] = {
	{ "log.aer.corrected", "PCIe corrected errors (AER) on the GPU's link",
	  "The PCIe link layer detected bad symbols or packets (RxErr: receiver errors;\n"
	  "BadTLP, BadDLLP: packets with a bad checksum; Rollover, Timeout: replays) and\n"
	  "recovered by resending. Nothing was lost, but a steady stream of them means a\n"
	  "marginal link, which can degrade into uncorrectable errors. doctor blames the\n"
	  "GPU only when the device named in 'error received: BDF' or in the 'PCIe Bus\n"
	  "Error' line is the GPU (or another function of it) or the port directly above\n"
	  "it in /sys/devices; errors on a NIC or an NVMe drive are reported as not the\n"
	  "GPU. Causes, most likely first:\n"
	  "  1. The signal path: a riser or extension cable, a card not fully seated, a\n"
	  "     dirty slot. The errors stay with the path when the card is moved.\n"
	  "  2. ASPM (link power management) transitions: they stop with pcie_aspm=off.\n"
	  "  3. A link generation above what the path carries: they stop when the slot is\n"
	  "     set to a lower generation in the firmware setup.\n"
	  "  4. The card or the board, when none of these changes anything.\n"
	  "Update the system firmware and the driver first; 'lspci -vv' shows the link's\n"
	  "speed and width (LnkSta) against what it can do (LnkCap)." },
	{ "log.aer.fatal", "PCIe fatal uncorrectable errors (AER)",
	  "A fatal uncorrectable error makes the link itself unreliable: the kernel resets\n"
	  "the link, and the device's driver must recover it or lose it. On the GPU's link\n"
	  "this is the typical cause of a GPU falling off the bus (NVIDIA Xid 79). Causes,\n"
	  "most likely first: the signal path (riser, seating, slot), power (the card\n"
	  "dropping out under load: power supply, connectors), a GPU that hung and stopped\n"
	  "answering (completion timeouts) after a driver or firmware fault, then the card\n"
	  "or board. Errors on another device are reported as not the GPU." },
	{ "log.aer.uncorrected_nonfatal", "PCIe uncorrectable non-fatal errors (AER)",
	  "A transaction failed and could not be retried (a completion timeout, an\n"
	  "unsupported request, a poisoned or malformed packet), but the link still works.\n"
	  "The driver sees a failed read or write; a GPU often needs a reset after it.\n"
	  "Causes as for fatal errors: the signal path, power, a hung GPU (CmpltTO), then\n"
	  "the hardware. Errors on another device are reported as not the GPU." },
	{ NULL, NULL, NULL },
};
