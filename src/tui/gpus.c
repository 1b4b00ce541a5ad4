/*
 * The GPUs in top: two lines per GPU (identity and state, then bars for
 * utilisation, memory, power and temperature) or one in compact mode, and
 * the history charts of one metric per GPU.
 */
#include "tui/tui_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/fields.h"
#include "core/xalloc.h"
#include "core/fmt.h"
#include "front/table.h"

#define NA "-"

const char *
tui_state_word(enum dev_state st)
{
	/* the TUI keeps showing the last values it had: say that they are old */
	if (st == DEV_NOT_RESPONDING)
		return "NOT RESPONDING (stale)";
	return dev_state_word(st);
}

bool
tui_compact(const struct tui *t, int rows_for_gpus)
{
	int n = t->have_snap ? (int)t->snap.nr_dev : 0;

	switch (t->layout) {
	case TUI_LAYOUT_FULL:
		return false;
	case TUI_LAYOUT_COMPACT:
		return true;
	case TUI_LAYOUT_AUTO:
		break;
	}
	return 2 * n > rows_for_gpus;
}

static bool
is_drm(const struct gpu_device *d)
{
	return d->card[0] != '\0';
}

static const char *
deg(const struct tui *t)
{
	return t->utf8 ? "\xc2\xb0"
	                 "C"
	               : "C";
}

/* Temperature against the slowdown point, as the status table colours it. */
static enum tui_role
temp_role(const struct gpu_device *d)
{
	switch (table_temp_level(d)) {
	case 2:
		return ROLE_HIGH;
	case 1:
		return ROLE_MID;
	case 0:
		return ROLE_LOW;
	default:
		return ROLE_NORMAL;
	}
}

/*
 * The name without the vendor's prefix, which every GPU of a machine shares;
 * a MIG device, drawn under its GPU, by its profile ("MIG 3g.40gb").
 */
static const char *
short_name(const struct gpu_device *d)
{
	const char *n = d->name[0] ? d->name : "(unknown GPU)";
	const char *mig = d->is_mig ? strstr(n, "MIG ") : NULL;

	if (mig)
		return mig;

	if (!strncmp(n, "NVIDIA ", 7))
		return n + 7;
	if (!strncmp(n, "AMD ", 4))
		return n + 4;
	if (!strncmp(n, "Intel(R) ", 9))
		return n + 9;
	return n;
}

/* The four bars of d from x on, in w columns. */
static void
bars(struct tui *t, int y, int x, int w, const struct gpu_device *d)
{
	int bw = w / 4;
	char text[48], a[16], b[16];
	double frac;

	if (bw < 8)
		return;
	/* utilisation */
	if (dev_has(d, GF_UTIL_GPU)) {
		snprintf(text, sizeof(text), "%.0f%%", d->v[GF_UTIL_GPU]);
		frac = d->v[GF_UTIL_GPU] / 100;
	} else {
		snprintf(text, sizeof(text), NA);
		frac = NAN;
	}
	tui_bar(t, y, x, bw - 1, "UTL", frac, text, tui_level_role(frac));
	/* memory */
	frac = NAN;
	if (dev_has(d, GF_MEM_USED) && dev_has(d, GF_MEM_TOTAL) && d->v[GF_MEM_TOTAL] > 0) {
		fmt_bytes_short(a, sizeof(a), d->v[GF_MEM_USED]);
		fmt_bytes_short(b, sizeof(b), d->v[GF_MEM_TOTAL]);
		snprintf(text, sizeof(text), "%s/%s", a, b);
		frac = d->v[GF_MEM_USED] / d->v[GF_MEM_TOTAL];
	} else if (dev_has(d, GF_MEM_USED)) {
		fmt_bytes_short(text, sizeof(text), d->v[GF_MEM_USED]);
	} else {
		snprintf(text, sizeof(text), NA);
	}
	tui_bar(t, y, x + bw, bw - 1, "MEM", frac, text, tui_level_role(frac));
	/* power against the enforced limit */
	frac = NAN;
	if (dev_has(d, GF_POWER_DRAW) && dev_has(d, GF_POWER_LIMIT) && d->v[GF_POWER_LIMIT] > 0) {
		snprintf(text, sizeof(text), "%.0f/%.0fW", d->v[GF_POWER_DRAW],
		         d->v[GF_POWER_LIMIT]);
		frac = d->v[GF_POWER_DRAW] / d->v[GF_POWER_LIMIT];
	} else if (dev_has(d, GF_POWER_DRAW)) {
		snprintf(text, sizeof(text), "%.0fW", d->v[GF_POWER_DRAW]);
	} else {
		snprintf(text, sizeof(text), NA);
	}
	tui_bar(t, y, x + 2 * bw, bw - 1, "PWR", frac, text,
	        !isnan(frac) && frac >= 0.97 ? ROLE_HIGH : tui_level_role(frac));
	/* temperature against its slowdown point */
	frac = NAN;
	if (dev_has(d, GF_TEMP_GPU) && dev_has(d, GF_TEMP_SLOWDOWN) && d->v[GF_TEMP_SLOWDOWN] > 0) {
		snprintf(text, sizeof(text), "%.0f/%.0f%s", d->v[GF_TEMP_GPU],
		         d->v[GF_TEMP_SLOWDOWN], deg(t));
		frac = d->v[GF_TEMP_GPU] / d->v[GF_TEMP_SLOWDOWN];
	} else if (dev_has(d, GF_TEMP_GPU)) {
		snprintf(text, sizeof(text), "%.0f%s", d->v[GF_TEMP_GPU], deg(t));
		frac = d->v[GF_TEMP_GPU] / 100;
	} else {
		snprintf(text, sizeof(text), NA);
	}
	tui_bar(t, y, x + 3 * bw, bw - 1, "TMP", frac, text, temp_role(d));
}

static void
percent(char *buf, size_t size, const struct gpu_device *d, enum gpu_field f)
{
	if (dev_has(d, f))
		snprintf(buf, size, "%.0f%%", d->v[f]);
	else
		snprintf(buf, size, NA);
}

/* Append "label value" at *x when it fits before the right edge; false when it does not. */
static bool
item(struct tui *t, int y, int *x, const char *label, const char *value, enum tui_role role)
{
	int need = 2 + (label ? (int)fmt_width(label) + 1 : 0) + (int)fmt_width(value);

	if (*x + need > COLS)
		return false;
	*x += 2;
	if (label) {
		*x += tui_puts(t, y, *x, COLS - *x, ROLE_DIM, label);
		*x += 1;
	}
	*x += tui_puts(t, y, *x, COLS - *x, role, value);
	return true;
}

/* The clock event reasons worth a look (not idle, not display clocks), or "". */
static enum tui_role
reasons(char *buf, size_t size, const struct gpu_device *d)
{
	uint64_t mask, bad = CR_HW_SLOWDOWN | CR_HW_THERMAL | CR_HW_POWER_BRAKE | CR_SW_THERMAL;
	const struct flag_name *names;
	unsigned nr;
	size_t len = 0;

	buf[0] = '\0';
	if (!dev_has(d, GF_CLOCK_REASONS))
		return ROLE_NORMAL;
	mask = (uint64_t)d->v[GF_CLOCK_REASONS] & ~(uint64_t)(CR_GPU_IDLE | CR_DISPLAY_CLOCKS);
	names = clock_reason_names(&nr);
	for (unsigned i = 0; i < nr && len < size; i++)
		if (mask & names[i].bit)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
			                        names[i].label);
	return mask & bad ? ROLE_HIGH : ROLE_MID;
}

static void
index_cell(struct tui *t, int y, size_t i, const struct gpu_device *d)
{
	char buf[16];
	enum tui_role role = ROLE_LABEL;

	if (i == t->sel_gpu)
		role = t->focus == FOCUS_GPUS ? ROLE_CURSOR : ROLE_CURSOR_OFF;
	/* a MIG device: its index within the GPU above it, indented */
	if (d->is_mig)
		snprintf(buf, sizeof(buf), " %u", d->index % 10);
	else
		snprintf(buf, sizeof(buf), "%2u", d->index);
	tui_put(t, y, 0, 2, role, buf);
}

/* A GPU that cannot be read: its state, loud, and why. */
static int
state_line(struct tui *t, int y, int x, const struct gpu_device *d)
{
	char buf[48];

	snprintf(buf, sizeof(buf), " %s ", tui_state_word(d->state));
	x += tui_puts(t, y, x, COLS - x, d->state == DEV_SUSPENDED ? ROLE_BADGE : ROLE_LOST, buf);
	return x;
}

static void
full_gpu(struct tui *t, int y, int rows, size_t i, int name_w)
{
	const struct gpu_device *d = &t->snap.dev[i];
	const char *msg = d->state_msg[0] ? d->state_msg : dev_state_key(d->state);
	char buf[96], a[24], b[24];
	int x;

	index_cell(t, y, i, d);
	tui_put(t, y, 3, name_w, ROLE_LABEL, short_name(d));
	x = 3 + name_w;
	if (COLS >= 110 && d->pci_bus_id[0])
		item(t, y, &x, NULL, d->pci_bus_id, ROLE_DIM);
	if (d->state != DEV_OK) {
		x = state_line(t, y, x + 2, d);
		if (rows > 1)
			tui_put(t, y + 1, 3, COLS - 3,
			        d->state == DEV_SUSPENDED ? ROLE_DIM : ROLE_HIGH, msg);
		return;
	}
	if (dev_has(d, GF_PSTATE)) {
		snprintf(buf, sizeof(buf), "P%.0f", d->v[GF_PSTATE]);
		item(t, y, &x, NULL, buf, ROLE_NORMAL);
	}
	{
		bool gfx = is_drm(d) || !dev_has(d, GF_CLOCK_SM);
		enum gpu_field clk = gfx ? GF_CLOCK_GRAPHICS : GF_CLOCK_SM;

		if (dev_has(d, clk))
			snprintf(buf, sizeof(buf), "%.0f MHz", d->v[clk]);
		else
			snprintf(buf, sizeof(buf), NA);
		item(t, y, &x, gfx ? "GFX" : "SM", buf, ROLE_NORMAL);
	}
	if (dev_has(d, GF_FAN))
		snprintf(buf, sizeof(buf), "%.0f%%", d->v[GF_FAN]);
	else if (dev_has(d, GF_FAN_RPM))
		snprintf(buf, sizeof(buf), "%.0f RPM", d->v[GF_FAN_RPM]);
	else
		snprintf(buf, sizeof(buf), NA);
	item(t, y, &x, "Fan", buf, ROLE_NORMAL);
	/* GPM (Hopper and later): how much of the GPU the kernels that Util counts use */
	if (dev_has(d, GF_PROF_SM_ACTIVE) || dev_has(d, GF_PROF_TENSOR_ACTIVE)) {
		percent(a, sizeof(a), d, GF_PROF_SM_ACTIVE);
		item(t, y, &x, "SM act", a, ROLE_NORMAL);
		percent(a, sizeof(a), d, GF_PROF_TENSOR_ACTIVE);
		item(t, y, &x, "Tensor", a, ROLE_NORMAL);
	}
	if (dev_has(d, GF_UTIL_ENC) || dev_has(d, GF_UTIL_DEC)) {
		percent(a, sizeof(a), d, GF_UTIL_ENC);
		percent(b, sizeof(b), d, GF_UTIL_DEC);
		snprintf(buf, sizeof(buf), "%s/%s", a, b);
		item(t, y, &x, "Enc/Dec", buf, ROLE_NORMAL);
	}
	{
		enum tui_role role = reasons(buf, sizeof(buf), d);

		if (buf[0])
			item(t, y, &x, "Clocks held:", buf, role);
	}
	if (rows > 1)
		bars(t, y + 1, 3, COLS - 3, d);
}

static void
compact_gpu(struct tui *t, int y, size_t i, int name_w)
{
	const struct gpu_device *d = &t->snap.dev[i];
	int x = 3 + name_w + 1;

	index_cell(t, y, i, d);
	tui_put(t, y, 3, name_w, ROLE_LABEL, short_name(d));
	if (d->state != DEV_OK) {
		x = state_line(t, y, x, d);
		tui_put(t, y, x + 1, COLS - x - 1, ROLE_DIM,
		        d->state_msg[0] ? d->state_msg : dev_state_key(d->state));
		return;
	}
	bars(t, y, x, COLS - x, d);
}

void
tui_draw_gpus(struct tui *t, int y, int rows, bool compact)
{
	size_t n = t->snap.nr_dev, first = 0, shown;
	int per = compact ? 1 : 2, name_w = 10;

	if (rows <= 0 || !n)
		return;
	shown = (size_t)(rows / per);
	if (!shown) {
		shown = 1;
		per = 1;
	}
	if (t->sel_gpu >= shown)
		first = t->sel_gpu - shown + 1;
	for (size_t i = 0; i < n; i++) {
		int w = tui_width(t, short_name(&t->snap.dev[i]));

		if (w > name_w)
			name_w = w;
	}
	if (compact)
		name_w = COLS >= 120 ? (name_w > 24 ? 24 : name_w) : 12;
	else if (name_w > (COLS >= 120 ? 30 : 22))
		name_w = COLS >= 120 ? 30 : 22;
	t->geom.gpu_y = y;
	t->geom.gpu_rows = (int)(shown < n - first ? shown : n - first) * per;
	t->geom.gpu_lines_per = per;
	t->geom.gpu_first = first;
	for (size_t k = 0; k < shown && first + k < n; k++) {
		int row = y + (int)k * per;

		if (compact)
			compact_gpu(t, row, first + k, name_w);
		else
			full_gpu(t, row, per, first + k, name_w);
	}
}

/* --- charts ------------------------------------------------------------------------ */

static const char *const blocks[9] = {
	" ",
	"\xe2\x96\x81",
	"\xe2\x96\x82",
	"\xe2\x96\x83",
	"\xe2\x96\x84",
	"\xe2\x96\x85",
	"\xe2\x96\x86",
	"\xe2\x96\x87",
	"\xe2\x96\x88",
};

/* One cell: eighths 0..8 of it filled. */
static const char *
cell(const struct tui *t, int eighths, int height)
{
	static const char ascii1[] = " _.,-=+*#";

	if (t->utf8)
		return blocks[eighths];
	if (height == 1) {
		static char one[2];

		one[0] = ascii1[eighths];
		one[1] = '\0';
		return one;
	}
	return eighths >= 8 ? "#" : eighths >= 4 ? "+" : eighths > 0 ? "." : " ";
}

static void
format_value(const struct tui *t, char *buf, size_t size, enum hist_metric m, double v)
{
	if (isnan(v))
		snprintf(buf, size, NA);
	else
		snprintf(buf, size, "%.0f%s", v, history_metric_unit(m, t->utf8));
}

static void
chart(struct tui *t, int y, int h, size_t i)
{
	const struct gpu_device *d = &t->snap.dev[i];
	const struct hist_gpu *g = history_find(&t->hist, d);
	enum hist_metric m = t->metric;
	int lw = 14, cw = COLS - lw;
	double top, now;
	char buf[48], v[24];
	struct strbuf row = STRBUF_INIT;

	if (cw < 8)
		return;
	top = history_metric_max(&t->hist, g, d, m, t->hist_upto);
	now = history_get(&t->hist, g, m, t->hist_upto, 0);
	if (d->state != DEV_OK) {
		snprintf(buf, sizeof(buf), "%2u ", d->index);
		tui_puts(t, y, 0, lw, ROLE_LABEL, buf);
		tui_puts(t, y, 3, lw - 4, ROLE_LOST, d->state == DEV_LOST ? "LOST" : "stale");
	} else {
		format_value(t, v, sizeof(v), m, now);
		snprintf(buf, sizeof(buf), "%2u %9s", d->index, v);
		tui_puts(t, y, 0, lw, ROLE_LABEL, buf);
	}
	if (h >= 2) {
		format_value(t, v, sizeof(v), m, top);
		snprintf(buf, sizeof(buf), "   max %5s", v);
		tui_puts(t, y + 1, 0, lw, ROLE_DIM, buf);
	}
	for (int r = 0; r < h; r++) {
		strbuf_reset(&row);
		for (int c = 0; c < cw - 1; c++) {
			double x = history_get(&t->hist, g, m, t->hist_upto,
			                       (unsigned long)(cw - 2 - c));
			int e = 0;

			if (!isnan(x) && x > 0) {
				long total = lround(x / top * h * 8);

				if (total < 1)
					total = 1; /* a little is not nothing */
				total -= (long)(h - 1 - r) * 8;
				e = total < 0 ? 0 : total > 8 ? 8 : (int)total;
			}
			strbuf_addstr(&row, cell(t, e, h));
		}
		tui_puts(t, y + r, lw, cw, ROLE_CHART, row.buf);
	}
	strbuf_release(&row);
}

void
tui_draw_charts(struct tui *t, int y, int rows)
{
	size_t n = t->snap.nr_dev;
	int h;
	char head[160], span[32] = "";
	unsigned long held = t->hist_upto < HIST_CAP ? t->hist_upto : HIST_CAP;
	unsigned long cols = COLS > 15 ? (unsigned long)COLS - 15 : 1;

	if (rows < 2 || !n)
		return;
	if (held > cols)
		held = cols;
	if (held > 1) {
		double s = history_time(&t->hist, t->hist_upto, 0) -
		           history_time(&t->hist, t->hist_upto, held - 1);

		fmt_duration(span, sizeof(span), s);
	}
	h = (rows - 1) / (int)n;
	if (h > 8)
		h = 8;
	if (h >= 1) {
		snprintf(head, sizeof(head), "History: %s (%s), last %s",
		         history_metric_name(t->metric), history_metric_unit(t->metric, t->utf8),
		         span[0] ? span : "-");
		tui_puts(t, y, 0, COLS, ROLE_LABEL, head);
		tui_puts(t, y, (int)fmt_width(head) + 2, COLS, ROLE_DIM, "c: next metric");
		for (size_t i = 0; i < n; i++)
			chart(t, y + 1 + (int)i * h, h, i);
		return;
	}
	/* no room for every GPU: the selected one */
	h = rows - 1 > 8 ? 8 : rows - 1;
	snprintf(head, sizeof(head), "History of GPU %u: %s (%s), last %s",
	         t->snap.dev[t->sel_gpu].index, history_metric_name(t->metric),
	         history_metric_unit(t->metric, t->utf8), span[0] ? span : "-");
	tui_puts(t, y, 0, COLS, ROLE_LABEL, head);
	tui_puts(t, y, (int)fmt_width(head) + 2, COLS, ROLE_DIM, "c: next metric, Tab: GPUs");
	chart(t, y + 1, h, t->sel_gpu);
}
