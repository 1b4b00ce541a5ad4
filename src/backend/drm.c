/*
 * The DRM backend: every GPU with a DRM card that NVML does not own. Cards
 * are found in sysfs (class/drm/cardN), named from the driver or pci.ids,
 * left alone while runtime-suspended, read by their driver module, and
 * given their processes from DRM fdinfo (and, for amdgpu, from KFD).
 */
#include "backend/drm.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/fdinfo.h"
#include "core/config.h"
#include "core/err.h"
#include "core/fileio.h"
#include "core/gpu.h"
#include "core/pciids.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

/* The first module whose match() says yes reads the card; generic matches all. */
static const struct drm_module *const modules[] = {
	&drm_module_amdgpu,
	&drm_module_intel,
	&drm_module_generic,
};

/*
 * Drivers of display controllers that are not GPUs in any useful sense: a
 * server's BMC graphics (ast, mgag200), firmware framebuffers, virtual
 * displays. Listing them would put "ASPEED Graphics" in every GPU table.
 */
static const char *const display_only[] = {
	"ast",
	"mgag200",
	"simpledrm",
	"simple-framebuffer",
	"efifb",
	"ofdrm",
	"vkms",
	"bochs-drm",
	"bochs",
	"cirrus",
	"cirrus-qemu",
	"hyperv_drm",
	"vboxvideo",
	"udl",
	"gm12u320",
	"hx8357d",
	/* SoC display controllers; the GPU beside them has a card of its own */
	"rockchip-drm",
	"sun4i-drm",
	"meson-drm",
	"mediatek-drm",
	"imx-drm",
	"tidss",
	"exynos-drm",
};

struct drm_gpu {
	struct drm_card card;
	const struct drm_module *mod;
	void *priv;
	bool scanned; /* module scan() has run (it waits while the card is suspended) */
	bool late;    /* ... and ran after the scan: its static facts are kept in static_dev */
	struct gpu_device static_dev;
};

struct drm {
	struct backend base;
	const struct gs_config *cfg;
	struct drm_gpu *gpu;
	size_t nr, alloc;
	struct fdinfo_scan *fd;
};

static bool
is_display_only(const char *driver)
{
	for (size_t i = 0; i < ARRAY_SIZE(display_only); i++)
		if (!strcmp(driver, display_only[i]))
			return true;
	return false;
}

static bool
is_pci_addr(const char *s)
{
	unsigned d, b, dev, fn;
	char tail;

	return strlen(s) == 12 && sscanf(s, "%4x:%2x:%2x.%1x%c", &d, &b, &dev, &fn, &tail) == 4;
}

static unsigned
read_hex(const struct gs_config *cfg, const struct drm_card *card, const char *rel)
{
	uint64_t v;

	return drm_read_u64(cfg, card, rel, &v) == 0 && v <= 0xFFFF ? (unsigned)v : 0;
}

/* The render node next to the card, from the device's drm/ directory. */
static void
find_render(const struct gs_config *cfg, struct drm_card *card)
{
	char rel[160], dir[4096];
	struct dirent *de;
	DIR *d;

	snprintf(rel, sizeof(rel), "%s/drm", card->dev);
	path_join(dir, sizeof(dir), cfg->sysfs_root, rel);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		unsigned long m;

		if (strncmp(de->d_name, "renderD", 7) || strlen(de->d_name) >= sizeof(card->render))
			continue;
		m = strtoul(de->d_name + 7, &end, 10);
		if (*end || end == de->d_name + 7)
			continue;
		str_copy(card->render, sizeof(card->render), de->d_name);
		card->render_minor = (unsigned)m;
	}
	closedir(d);
}

/* Fill card from class/drm/<name>; false for what is not a GPU to list. */
static bool
probe_card(const struct gs_config *cfg, const char *name, struct drm_card *card)
{
	char rel[160], *end;
	unsigned long minor = strtoul(name + 4, &end, 10);

	memset(card, 0, sizeof(*card));
	if (*end || end == name + 4 || strlen(name) >= sizeof(card->name))
		return false; /* "card1-DP-1" is a connector */
	str_copy(card->name, sizeof(card->name), name);
	card->minor = (unsigned)minor;
	snprintf(card->dev, sizeof(card->dev), "class/drm/%s/device", card->name);
	snprintf(rel, sizeof(rel), "%s/driver", card->dev);
	file_link_base(cfg->sysfs_root, rel, card->driver, sizeof(card->driver));
	file_link_base(cfg->sysfs_root, card->dev, card->platform, sizeof(card->platform));
	if (!strcmp(card->driver, "nvidia") || !strcmp(card->driver, "nvidia-drm"))
		return false; /* NVML's */
	if (is_display_only(card->driver))
		return false;
	card->pci = is_pci_addr(card->platform);
	if (card->pci) {
		str_copy(card->pci_addr, sizeof(card->pci_addr), card->platform);
		card->vendor = read_hex(cfg, card, "vendor");
		card->device = read_hex(cfg, card, "device");
		card->subsys_vendor = read_hex(cfg, card, "subsystem_vendor");
		card->subsys_device = read_hex(cfg, card, "subsystem_device");
		if (card->vendor == 0x10de && !strcmp(card->driver, "nvidia"))
			return false;
	}
	find_render(cfg, card);
	return true;
}

static int
cmp_gpu(const void *a, const void *b)
{
	const struct drm_card *x = &((const struct drm_gpu *)a)->card,
	                      *y = &((const struct drm_gpu *)b)->card;

	/* PCI GPUs by bus address, then the others by card number */
	if (x->pci != y->pci)
		return x->pci ? -1 : 1;
	if (x->pci) {
		int c = strcmp(x->pci_addr, y->pci_addr);

		if (c)
			return c;
	}
	return x->minor < y->minor ? -1 : x->minor > y->minor;
}

static void
drm_close(struct backend *be)
{
	struct drm *d = container_of(be, struct drm, base);

	for (size_t i = 0; i < d->nr; i++)
		if (d->gpu[i].mod->free)
			d->gpu[i].mod->free(d->gpu[i].priv);
	free(d->gpu);
	fdinfo_free(d->fd);
	free(d);
}

static int
drm_open(const struct gs_config *cfg, struct backend **out, struct err *err)
{
	struct drm *d = xcalloc(1, sizeof(*d));
	char dir[4096];
	struct dirent *de;
	DIR *dd;

	d->cfg = cfg;
	path_join(dir, sizeof(dir), cfg->sysfs_root, "class/drm");
	dd = opendir(dir);
	if (dd) {
		while ((de = readdir(dd))) {
			struct drm_gpu *g;

			if (strncmp(de->d_name, "card", 4))
				continue;
			ALLOC_GROW(d->gpu, d->nr + 1, d->alloc);
			g = &d->gpu[d->nr];
			memset(g, 0, sizeof(*g));
			if (!probe_card(cfg, de->d_name, &g->card))
				continue;
			for (size_t m = 0; m < ARRAY_SIZE(modules); m++)
				if (modules[m]->match(&g->card)) {
					g->mod = modules[m];
					break;
				}
			d->nr++;
		}
		closedir(dd);
	}
	if (!d->nr) {
		drm_close(&d->base);
		return err_set(err, E_NODEV, "drm: no AMD, Intel or other DRM GPU in '%s'", dir);
	}
	qsort(d->gpu, d->nr, sizeof(*d->gpu), cmp_gpu);
	d->fd = fdinfo_new(cfg);
	*out = &d->base;
	return 0;
}

static enum gpu_vendor
vendor_of(const struct drm_card *card)
{
	if (!card->pci)
		return VENDOR_OTHER;
	switch (card->vendor) {
	case 0x1002:
		return VENDOR_AMD;
	case 0x8086:
		return VENDOR_INTEL;
	case 0x10de:
		return VENDOR_NVIDIA;
	}
	return VENDOR_OTHER;
}

/* A name when the module has none: pci.ids, else the ids, else the driver and device. */
static void
default_name(const struct gs_config *cfg, const struct drm_card *card, struct gpu_device *dev)
{
	struct pci_names n;

	if (card->pci && pciids_lookup(cfg->root, card->vendor, card->device, card->subsys_vendor,
	                               card->subsys_device, &n)) {
		pciids_display_name(&n, card->vendor, dev->name, sizeof(dev->name));
		return;
	}
	if (card->pci)
		snprintf(dev->name, sizeof(dev->name), "GPU %04x:%04x (%s)", card->vendor,
		         card->device, card->driver[0] ? card->driver : "no driver");
	else
		snprintf(dev->name, sizeof(dev->name), "%.24s GPU %.48s",
		         card->driver[0] ? card->driver : "DRM", card->platform);
}

static void
fill_identity(const struct drm_gpu *g, struct gpu_device *dev, unsigned be_id, unsigned handle)
{
	const struct drm_card *card = &g->card;

	dev->vendor = vendor_of(card);
	dev->backend = be_id;
	dev->handle = handle;
	str_copy(dev->driver, sizeof(dev->driver), card->driver);
	str_copy(dev->card, sizeof(dev->card), card->name);
	if (card->pci) {
		unsigned dom, bus, dv, fn;

		if (sscanf(card->pci_addr, "%x:%x:%x.%x", &dom, &bus, &dv, &fn) == 4) {
			/* NVML's spelling, so that every GPU's bus id reads the same */
			snprintf(dev->pci_bus_id, sizeof(dev->pci_bus_id), "%08X:%02X:%02X.%X", dom,
			         bus, dv, fn);
			dev->pci_domain = dom;
			dev->pci_bus = bus;
			dev->pci_dev = dv;
			dev->pci_func = fn;
			dev->pci_valid = true;
		}
		dev->pci_device_id = (uint32_t)card->device << 16 | card->vendor;
		dev->pci_subsys_id = (uint32_t)card->subsys_device << 16 | card->subsys_vendor;
	}
}

static int
drm_scan(struct backend *be, struct gpu_snapshot *snap, struct err *err)
{
	struct drm *d = container_of(be, struct drm, base);

	(void)err;
	for (size_t i = 0; i < d->nr; i++) {
		struct drm_gpu *g = &d->gpu[i];
		struct gpu_device *dev = gpu_snapshot_add_dev(snap);

		fill_identity(g, dev, be->id, (unsigned)i);
		if (drm_suspended(d->cfg, &g->card)) {
			drm_mark_suspended(dev);
		} else {
			g->mod->scan(d->cfg, &g->card, dev, &g->priv);
			g->scanned = true;
		}
		if (!dev->name[0])
			default_name(d->cfg, &g->card, dev);
	}
	return 0;
}

/* Is p a client of this card? By PCI address when the driver says it, else by the file's minor. */
static bool
client_of(const struct fdinfo_proc *p, const struct drm_card *card)
{
	if (p->pdev[0] && card->pci_addr[0])
		return !strcasecmp(p->pdev, card->pci_addr);
	if (p->minor >= 0)
		return (unsigned)p->minor == card->minor ||
		       (card->render_minor && (unsigned)p->minor == card->render_minor);
	return false;
}

/*
 * Device engines from its clients: each class's use summed over the
 * processes that could be read (others' clients are invisible without
 * ptrace rights, so this can undercount; utilization_source says so).
 */
static void
engines_from_clients(const struct drm *d, const struct drm_card *card, struct gpu_device *dev)
{
	const struct fdinfo_proc *p;
	size_t nr;

	p = fdinfo_procs(d->fd, &nr);
	dev->nr_engine = 0;
	for (size_t i = 0; i < nr; i++) {
		if (!client_of(&p[i], card) || p[i].denied)
			continue;
		for (unsigned k = 0; k < p[i].nr_engine; k++) {
			const struct engine_use *e = &p[i].engine[k];
			unsigned j;

			for (j = 0; j < dev->nr_engine; j++)
				if (!strcmp(dev->engine[j].name, e->name))
					break;
			if (j == dev->nr_engine) {
				if (j == GPU_MAX_ENGINES)
					continue;
				str_copy(dev->engine[j].name, sizeof(dev->engine[j].name), e->name);
				dev->engine[j].percent = e->percent;
				dev->nr_engine++;
			} else if (!isnan(e->percent)) {
				dev->engine[j].percent =
				        isnan(dev->engine[j].percent)
				                ? e->percent
				                : dev->engine[j].percent + e->percent;
			}
			if (dev->engine[j].percent > 100)
				dev->engine[j].percent = 100;
		}
	}
}

static int
drm_begin_sample(struct backend *be, double now, struct err *err)
{
	struct drm *d = container_of(be, struct drm, base);

	return fdinfo_sample(d->fd, now, err);
}

static bool
drm_wants_window(struct backend *be)
{
	struct drm *d = container_of(be, struct drm, base);

	/*
	 * engine use of every DRM GPU is a rate over two fdinfo readings, and
	 * some modules have counters of their own (energy, PMU)
	 */
	for (size_t i = 0; i < d->nr; i++) {
		const struct drm_gpu *g = &d->gpu[i];

		if (drm_suspended(d->cfg, &g->card))
			continue;
		if (d->cfg->want_procs || !g->mod->wants_window ||
		    g->mod->wants_window(&g->card, g->priv))
			return true;
	}
	return false;
}

/*
 * No busy figure from the module: the busiest engine of the clients we can
 * see, and the module's reason for having none, so that the user learns
 * why Util is what it is (or unknown).
 */
static void
util_from_clients(const struct drm_gpu *g, struct gpu_device *dev)
{
	const char *note = g->mod->util_note ? g->mod->util_note(&g->card, g->priv) : NULL;
	double best = NAN;

	for (unsigned i = 0; i < dev->nr_engine; i++)
		if (!isnan(dev->engine[i].percent) &&
		    (isnan(best) || dev->engine[i].percent > best))
			best = dev->engine[i].percent;
	if (!isnan(best)) {
		dev_set(dev, GF_UTIL_GPU, best);
		str_copy(dev->util_source, sizeof(dev->util_source), "fdinfo");
	}
	if (note)
		str_copy(dev->util_note, sizeof(dev->util_note), note);
}

static void keep_static(struct gpu_device *dev, const struct gpu_device *s);

static int
drm_read_device(struct backend *be, struct gpu_device *dev, struct err *err)
{
	struct drm *d = container_of(be, struct drm, base);
	struct drm_gpu *g;
	int rc = 0;

	(void)err;
	if (dev->handle >= d->nr)
		return E_NODEV;
	g = &d->gpu[dev->handle];
	if (drm_suspended(d->cfg, &g->card)) {
		drm_mark_suspended(dev);
		return 0;
	}
	if (dev->state == DEV_SUSPENDED) {
		dev->state = DEV_OK;
		dev->state_msg[0] = '\0';
	}
	if (!g->scanned) {
		/* suspended at the scan: read what scan() gives now, once, and keep it */
		g->mod->scan(d->cfg, &g->card, dev, &g->priv);
		g->static_dev = *dev;
		g->scanned = g->late = true;
	} else if (g->late) {
		keep_static(dev, &g->static_dev);
	}
	engines_from_clients(d, &g->card, dev);
	rc = g->mod->read(d->cfg, &g->card, g->priv, dev);
	if (dev->state == DEV_SUSPENDED)
		return rc; /* it went to sleep while being read */
	drm_read_pcie(d->cfg, &g->card, dev);
	if (!dev_has(dev, GF_UTIL_GPU))
		util_from_clients(g, dev);
	return rc;
}

/* Put back what a late scan found into a copy of the device that lacks it. */
static void
keep_static(struct gpu_device *dev, const struct gpu_device *s)
{
	for (int f = 0; f < GF__COUNT; f++)
		if (field_info((enum gpu_field)f)->kind == FK_STATIC &&
		    dev_has(s, (enum gpu_field)f) && !dev_has(dev, (enum gpu_field)f))
			dev_set(dev, (enum gpu_field)f, s->v[f]);
	if (!dev->name[0] || strcmp(dev->name, s->name))
		str_copy(dev->name, sizeof(dev->name), s->name);
	if (!dev->serial[0])
		str_copy(dev->serial, sizeof(dev->serial), s->serial);
	if (!dev->vbios[0])
		str_copy(dev->vbios, sizeof(dev->vbios), s->vbios);
	if (!dev->unique_id[0])
		str_copy(dev->unique_id, sizeof(dev->unique_id), s->unique_id);
	if (!dev->board_part[0])
		str_copy(dev->board_part, sizeof(dev->board_part), s->board_part);
	if (!dev->levels_gfx.nr)
		dev->levels_gfx = s->levels_gfx;
	if (!dev->levels_mem.nr)
		dev->levels_mem = s->levels_mem;
}

static struct gpu_proc *
find_pid(struct gpu_snapshot *out, size_t from, uint32_t pid)
{
	for (size_t i = from; i < out->nr_proc; i++)
		if (out->proc[i].pid == pid)
			return &out->proc[i];
	return NULL;
}

static int
drm_read_procs(struct backend *be, const struct gpu_device *dev, double now,
               struct gpu_snapshot *out, struct err *err)
{
	struct drm *d = container_of(be, struct drm, base);
	const struct fdinfo_proc *p;
	struct drm_gpu *g;
	size_t nr, from = out->nr_proc;

	(void)now;
	(void)err;
	if (dev->handle >= d->nr || dev->state != DEV_OK)
		return 0;
	g = &d->gpu[dev->handle];
	p = fdinfo_procs(d->fd, &nr);
	for (size_t i = 0; i < nr; i++) {
		struct gpu_proc *q;
		double busiest = NAN;

		if (!client_of(&p[i], &g->card))
			continue;
		q = gpu_snapshot_add_proc(out);
		q->pid = p[i].pid;
		q->type = PROC_DRM;
		q->gpu_denied = p[i].denied;
		if (p[i].has_local)
			proc_set(q, PF_GPU_MEM, p[i].mem_local);
		if (p[i].has_system)
			proc_set(q, PF_SYS_MEM, p[i].mem_system);
		gpu_proc_set_engines(q, p[i].engine, p[i].nr_engine);
		for (unsigned k = 0; k < q->nr_engine; k++)
			if (!isnan(q->engine[k].percent) &&
			    (isnan(busiest) || q->engine[k].percent > busiest))
				busiest = q->engine[k].percent;
		/* the busiest engine stands where NVIDIA's SM use does */
		if (!isnan(busiest))
			proc_set(q, PF_SM_UTIL, busiest);
	}
	if (g->mod->read_procs) {
		struct gpu_snapshot extra;

		gpu_snapshot_init(&extra);
		g->mod->read_procs(d->cfg, &g->card, g->priv, dev, &extra);
		for (size_t i = 0; i < extra.nr_proc; i++) {
			struct gpu_proc *x = &extra.proc[i], *q = find_pid(out, from, x->pid);

			if (!q) {
				q = gpu_snapshot_add_proc(out);
				*q = *x; /* moves its strings */
				memset(x, 0, sizeof(*x));
				continue;
			}
			q->type |= x->type;
			if (proc_has(x, PF_GPU_MEM) &&
			    (!proc_has(q, PF_GPU_MEM) || x->v[PF_GPU_MEM] > q->v[PF_GPU_MEM]))
				proc_set(q, PF_GPU_MEM, x->v[PF_GPU_MEM]);
		}
		gpu_snapshot_release(&extra);
	}
	return 0;
}

static void
drm_add_notes(struct backend *be, struct gpu_snapshot *snap)
{
	struct drm *d = container_of(be, struct drm, base);
	size_t n = fdinfo_nr_denied(d->fd);

	if (n && d->cfg->want_procs)
		gpu_snapshot_note(
		        snap,
		        "%zu %s could not be inspected for DRM GPU use: run as root or with CAP_SYS_PTRACE to see %s",
		        n, n == 1 ? "process" : "processes", n == 1 ? "it" : "them");
}

const struct backend_ops backend_drm = {
	.name = "drm",
	.open = drm_open,
	.scan = drm_scan,
	.begin_sample = drm_begin_sample,
	.wants_window = drm_wants_window,
	.read_device = drm_read_device,
	.read_procs = drm_read_procs,
	.add_notes = drm_add_notes,
	.close = drm_close,
};
