/*
 * The detail view of one GPU in top: its identity strings, then every field
 * of the sample model it reported (the field table of fields.h, so a field
 * added there shows up here without a change), with its unit and what it
 * means, then clock event reasons, engines, clock levels and its processes.
 */
#include "tui/tui_impl.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fields.h"
#include "core/xalloc.h"
#include "core/fmt.h"

#define NA "-"

static bool
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* A field's value with its unit, from the unit its key names. */
void
tui_gpu_value(char *buf, size_t size, const struct gpu_device *d, enum gpu_field f, bool utf8)
{
	const struct field_info *fi = field_info(f);
	double v = d->v[f];
	int dec = fi->decimals;

	if (!dev_has(d, f)) {
		snprintf(buf, size, NA);
		return;
	}
	if (f == GF_PSTATE) {
		snprintf(buf, size, "P%.0f", v);
	} else if (f == GF_COMPUTE_MODE) {
		const char *k = compute_mode_key(v);

		if (k)
			snprintf(buf, size, "%s", k);
		else
			snprintf(buf, size, "%.0f", v);
	} else if (fi->kind == FK_BOOL) {
		snprintf(buf, size, "%s", v ? "yes" : "no");
	} else if (fi->kind == FK_BITMASK) {
		snprintf(buf, size, "0x%llx", (unsigned long long)v);
	} else if (ends_with(fi->key, "_bytes")) {
		char b[32];

		fmt_bytes(b, sizeof(b), v);
		snprintf(buf, size, "%s", b);
	} else if (ends_with(fi->key, "_percent")) {
		snprintf(buf, size, "%.*f %%", dec, v);
	} else if (ends_with(fi->key, "_celsius")) {
		snprintf(buf, size, "%.*f %s", dec, v,
		         utf8 ? "\xc2\xb0"
		                "C"
		              : "C");
	} else if (ends_with(fi->key, "_watts")) {
		snprintf(buf, size, "%.*f W", dec, v);
	} else if (ends_with(fi->key, "_joules")) {
		snprintf(buf, size, "%.*f J", dec, v);
	} else if (ends_with(fi->key, "_mhz")) {
		snprintf(buf, size, "%.*f MHz", dec, v);
	} else if (ends_with(fi->key, "_rpm")) {
		snprintf(buf, size, "%.*f RPM", dec, v);
	} else if (ends_with(fi->key, "_mv")) {
		snprintf(buf, size, "%.*f mV", dec, v);
	} else if (ends_with(fi->key, "_us")) {
		snprintf(buf, size, "%.*f %s", dec, v, utf8 ? "\xc2\xb5s" : "us");
	} else {
		snprintf(buf, size, "%.*f", dec, v);
	}
}

struct dline {
	enum tui_role role;
	char *text;
};

struct dlines {
	struct dline *v;
	size_t nr, alloc;
};

static void add(struct dlines *l, enum tui_role role, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void
add(struct dlines *l, enum tui_role role, const char *fmt, ...)
{
	va_list ap;

	ALLOC_GROW(l->v, l->nr + 1, l->alloc);
	l->v[l->nr].role = role;
	va_start(ap, fmt);
	l->v[l->nr].text = xstrvfmt(fmt, ap);
	va_end(ap);
	l->nr++;
}

static void
release(struct dlines *l)
{
	for (size_t i = 0; i < l->nr; i++)
		free(l->v[i].text);
	free(l->v);
}

static void
ident(struct dlines *l, bool all, const char *name, const char *value)
{
	if (value[0] || all)
		add(l, ROLE_NORMAL, "  %-20s %s", name, value[0] ? value : NA);
}

/* A PCI id as lspci -n prints it; "" when unknown (0). */
static void
hex_id(char *buf, size_t size, uint32_t id)
{
	if (id)
		snprintf(buf, size, "0x%08X", id);
	else
		buf[0] = '\0';
}

static void
identity(struct dlines *l, const struct gpu_device *d, bool all)
{
	char buf[64];

	add(l, ROLE_LABEL, "Identity");
	ident(l, all, "name", d->name);
	ident(l, all, "uuid", d->uuid);
	ident(l, all, "serial", d->serial);
	ident(l, all, "pci_bus_id", d->pci_bus_id);
	hex_id(buf, sizeof(buf), d->pci_device_id);
	ident(l, all, "pci_device_id", buf);
	hex_id(buf, sizeof(buf), d->pci_subsys_id);
	ident(l, all, "pci_subsystem_id", buf);
	ident(l, all, "vendor", vendor_key(d->vendor));
	ident(l, all, "brand", d->brand);
	ident(l, all, "architecture", d->architecture);
	ident(l, all, "compute_capability", d->compute_cap);
	ident(l, all, "vbios", d->vbios);
	ident(l, all, "inforom", d->inforom);
	ident(l, all, "board_part_number", d->board_part);
	ident(l, all, "driver", d->driver);
	ident(l, all, "drm_card", d->card);
	ident(l, all, "unique_id", d->unique_id);
	ident(l, all, "utilization_source", d->util_source);
	ident(l, all, "utilization_note", d->util_note);
	ident(l, all, "memory_source", d->mem_source);
	ident(l, all, "throttle_detail", d->throttle_detail);
}

static void
fields(struct dlines *l, const struct gpu_device *d, bool all, bool utf8)
{
	unsigned known = 0;
	char v[64];

	for (int f = 0; f < GF__COUNT; f++)
		known += dev_has(d, (enum gpu_field)f);
	add(l, ROLE_LABEL, "Fields: %u of %d reported%s", known, GF__COUNT,
	    all ? " (a: hide the others)" : " (a: show the others too)");
	for (int f = 0; f < GF__COUNT; f++) {
		const struct field_info *fi = field_info((enum gpu_field)f);

		if (!dev_has(d, (enum gpu_field)f) && !all)
			continue;
		tui_gpu_value(v, sizeof(v), d, (enum gpu_field)f, utf8);
		add(l, dev_has(d, (enum gpu_field)f) ? ROLE_NORMAL : ROLE_DIM, "  %-30s %16s  %s",
		    fi->key, v, fi->help);
	}
}

static void
clock_reasons(struct dlines *l, const struct gpu_device *d)
{
	const struct flag_name *names;
	uint64_t now, supported = ~(uint64_t)0;
	unsigned nr;

	if (!dev_has(d, GF_CLOCK_REASONS))
		return;
	now = (uint64_t)d->v[GF_CLOCK_REASONS];
	if (dev_has(d, GF_CLOCK_REASONS_SUPPORTED))
		supported = (uint64_t)d->v[GF_CLOCK_REASONS_SUPPORTED];
	names = clock_reason_names(&nr);
	add(l, ROLE_LABEL, "Clock event reasons (why clocks are below their maximum)");
	if (!now)
		add(l, ROLE_NORMAL, "  none: clocks may run at their maximum");
	for (unsigned i = 0; i < nr; i++) {
		bool on = now & names[i].bit;

		if (!on && !(supported & names[i].bit))
			continue;
		add(l, on ? (names[i].bit == CR_GPU_IDLE ? ROLE_NORMAL : ROLE_MID) : ROLE_DIM,
		    "  %-3s %-16s %s", on ? "on" : "off", names[i].label, names[i].help);
	}
}

/* NVLink link by link: links that are up, or that carry errors or data */
static void
nvlinks(struct dlines *l, const struct gpu_device *d)
{
	char tx[32], rx[32];
	unsigned shown = 0;

	add(l, ROLE_LABEL, "NVLink (counters since the driver loaded; links never up not shown)");
	for (unsigned i = 0; i < d->nr_nvlink && i < GPU_MAX_NVLINK; i++) {
		const struct nvlink_link *n = &d->nvlink[i];
		uint64_t errs =
		        n->v[NL_CRC_FLIT] + n->v[NL_CRC_DATA] + n->v[NL_REPLAY] + n->v[NL_RECOVERY];
		enum tui_role role = !n->active ? ROLE_HIGH : errs ? ROLE_MID : ROLE_NORMAL;

		if (!n->present || (!n->active && !errs && !n->v[NL_TX_BYTES]))
			continue;
		shown++;
		str_copy(tx, sizeof(tx), NA);
		str_copy(rx, sizeof(rx), NA);
		if (n->valid >> NL_TX_BYTES & 1)
			fmt_bytes(tx, sizeof(tx), (double)n->v[NL_TX_BYTES]);
		if (n->valid >> NL_RX_BYTES & 1)
			fmt_bytes(rx, sizeof(rx), (double)n->v[NL_RX_BYTES]);
		add(l, role,
		    "  link %-2u %-4s tx %-10s rx %-10s crc flit %" PRIu64 "  crc data %" PRIu64
		    "  replay %" PRIu64 "  recovery %" PRIu64,
		    i, n->active ? "up" : "DOWN", tx, rx, n->v[NL_CRC_FLIT], n->v[NL_CRC_DATA],
		    n->v[NL_REPLAY], n->v[NL_RECOVERY]);
	}
	if (!shown)
		add(l, ROLE_DIM, "  no link up");
}

static void
levels(struct dlines *l, const char *what, const struct clock_levels *c)
{
	struct strbuf sb = STRBUF_INIT;

	if (!c->nr)
		return;
	for (unsigned i = 0; i < c->nr && i < 16; i++)
		strbuf_addf(&sb, "%s%s%u", i ? " " : "", (int)i == c->current ? "*" : "",
		            c->mhz[i]);
	add(l, ROLE_NORMAL, "  %-8s %s MHz (* now)", what, sb.buf);
	strbuf_release(&sb);
}

static void
build(struct tui *t, struct dlines *l, const struct gpu_device *d)
{
	size_t procs = 0;
	double mem = 0;

	add(l, ROLE_LABEL, "GPU %u  %s  state: %s", d->index,
	    d->name[0] ? d->name : "(unknown GPU)", tui_state_word(d->state));
	if (d->state != DEV_OK)
		add(l, ROLE_HIGH, "  %s", d->state_msg[0] ? d->state_msg : dev_state_key(d->state));
	add(l, ROLE_NORMAL, "%s", "");
	identity(l, d, t->detail_all);
	add(l, ROLE_NORMAL, "%s", "");
	fields(l, d, t->detail_all, t->utf8);
	if (dev_has(d, GF_CLOCK_REASONS)) {
		add(l, ROLE_NORMAL, "%s", "");
		clock_reasons(l, d);
	}
	if (d->nr_engine) {
		add(l, ROLE_NORMAL, "%s", "");
		add(l, ROLE_LABEL, "Engines (percent of each engine class's time)");
		for (unsigned i = 0; i < d->nr_engine && i < GPU_MAX_ENGINES; i++) {
			if (isnan(d->engine[i].percent))
				add(l, ROLE_NORMAL, "  %-16s %s", d->engine[i].name, NA);
			else
				add(l, ROLE_NORMAL, "  %-16s %.0f %%", d->engine[i].name,
				    d->engine[i].percent);
		}
	}
	if (d->nr_nvlink) {
		add(l, ROLE_NORMAL, "%s", "");
		nvlinks(l, d);
	}
	if (d->levels_gfx.nr || d->levels_mem.nr) {
		add(l, ROLE_NORMAL, "%s", "");
		add(l, ROLE_LABEL, "Clock levels");
		levels(l, "graphics", &d->levels_gfx);
		levels(l, "memory", &d->levels_mem);
	}
	for (size_t i = 0; i < t->snap.nr_proc; i++) {
		const struct gpu_proc *p = &t->snap.proc[i];

		if (&t->snap.dev[p->dev] != d)
			continue;
		procs++;
		if (proc_has(p, PF_GPU_MEM))
			mem += p->v[PF_GPU_MEM];
	}
	add(l, ROLE_NORMAL, "%s", "");
	{
		char b[32];

		fmt_bytes(b, sizeof(b), mem);
		add(l, ROLE_LABEL, "Processes: %zu on this GPU, %s of its memory", procs, b);
	}
	if (t->snap.nvidia.driver_version[0] && d->vendor == VENDOR_NVIDIA) {
		add(l, ROLE_NORMAL, "%s", "");
		add(l, ROLE_LABEL, "Driver");
		add(l, ROLE_NORMAL, "  %-20s %s", "driver_version", t->snap.nvidia.driver_version);
		if (t->snap.nvidia.nvml_version[0])
			add(l, ROLE_NORMAL, "  %-20s %s", "nvml_version",
			    t->snap.nvidia.nvml_version);
		if (t->snap.nvidia.cuda_version)
			add(l, ROLE_NORMAL, "  %-20s %d.%d", "cuda_version",
			    t->snap.nvidia.cuda_version / 1000,
			    t->snap.nvidia.cuda_version % 1000 / 10);
	}
}

void
tui_draw_detail(struct tui *t, int y, int rows)
{
	struct dlines l = { NULL, 0, 0 };
	int max_scroll;

	if (!t->have_snap || !t->snap.nr_dev) {
		tui_puts(t, y, 2, COLS - 2, ROLE_DIM, "no GPU to show");
		return;
	}
	if (t->sel_gpu >= t->snap.nr_dev)
		t->sel_gpu = t->snap.nr_dev - 1;
	build(t, &l, &t->snap.dev[t->sel_gpu]);
	t->detail_lines = (int)l.nr;
	max_scroll = (int)l.nr - (rows - 1);
	if (t->detail_scroll > max_scroll)
		t->detail_scroll = max_scroll;
	if (t->detail_scroll < 0)
		t->detail_scroll = 0;
	for (int r = 0; r < rows - 1 && (size_t)(t->detail_scroll + r) < l.nr; r++) {
		const struct dline *dl = &l.v[t->detail_scroll + r];

		tui_puts(t, y + r, 1, COLS - 1, dl->role, dl->text);
	}
	tui_put(t, y + rows - 1, 0, COLS, ROLE_DIM,
	        " Esc: back  Left/Right: other GPU  Up/Down/PgUp/PgDn: scroll  a: all fields");
	release(&l);
}

/* Keys of the detail view; returns 1 when the key was its own. */
int
tui_detail_key(struct tui *t, int ch)
{
	int page = LINES - 4 > 1 ? LINES - 4 : 1;

	switch (ch) {
	case 27:
	case 'q':
	case 'd':
	case '\n':
	case '\r':
	case KEY_ENTER:
	case KEY_BACKSPACE:
		t->view = VIEW_MAIN;
		break;
	case KEY_UP:
		t->detail_scroll--;
		break;
	case KEY_DOWN:
		t->detail_scroll++;
		break;
	case KEY_PPAGE:
		t->detail_scroll -= page;
		break;
	case KEY_NPAGE:
	case ' ':
		t->detail_scroll += page;
		break;
	case KEY_HOME:
		t->detail_scroll = 0;
		break;
	case KEY_END:
		t->detail_scroll = t->detail_lines;
		break;
	case KEY_LEFT:
		if (t->sel_gpu > 0)
			t->sel_gpu--;
		t->detail_scroll = 0;
		break;
	case KEY_RIGHT:
	case '\t':
		if (t->have_snap && t->sel_gpu + 1 < t->snap.nr_dev)
			t->sel_gpu++;
		t->detail_scroll = 0;
		break;
	case 'a':
		t->detail_all = !t->detail_all;
		break;
	default:
		return 0;
	}
	t->dirty = true;
	return 1;
}
