/*
 * Drawing for top: colours (or bold and reverse video without them), text
 * cut to a width, bars, boxes, and the frame of the main view: the title
 * bar, the GPUs, the charts, the findings pane, the processes and the
 * bottom line (keys, a message, or the filter being typed).
 */
#include "tui/tui_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "backend/feed.h"
#include "core/clock.h"
#include "core/xalloc.h"
#include "core/fmt.h"

enum {
	PAIR_TITLE = 1,
	PAIR_HEADER,
	PAIR_GREEN,
	PAIR_YELLOW,
	PAIR_RED,
	PAIR_CYAN,
	PAIR_BADGE,
	PAIR_LOST,
	PAIR_CURSOR_OFF,
};

double
tui_now(void)
{
	return clock_mono();
}

void
tui_attrs_init(struct tui *t)
{
	attr_t *a = t->attr;

	for (int i = 0; i < ROLE__COUNT; i++)
		a[i] = A_NORMAL;
	if (!t->color) {
		/* monochrome: reverse video and bold carry everything */
		a[ROLE_TITLE] = A_REVERSE;
		a[ROLE_HEADER] = A_REVERSE;
		a[ROLE_SORTED] = A_REVERSE | A_BOLD | A_UNDERLINE;
		a[ROLE_CURSOR] = A_REVERSE | A_BOLD;
		a[ROLE_CURSOR_OFF] = A_UNDERLINE;
		a[ROLE_LABEL] = A_BOLD;
		a[ROLE_DIM] = A_DIM;
		a[ROLE_HIGH] = A_BOLD;
		a[ROLE_LOST] = A_REVERSE | A_BOLD;
		a[ROLE_KEY] = A_BOLD;
		a[ROLE_KEYLABEL] = A_REVERSE;
		a[ROLE_BADGE] = A_REVERSE | A_BOLD;
		a[ROLE_ERROR] = A_BOLD;
		return;
	}
	start_color();
	use_default_colors();
	init_pair(PAIR_TITLE, COLOR_BLACK, COLOR_CYAN);
	init_pair(PAIR_HEADER, COLOR_BLACK, COLOR_GREEN);
	init_pair(PAIR_GREEN, COLOR_GREEN, -1);
	init_pair(PAIR_YELLOW, COLOR_YELLOW, -1);
	init_pair(PAIR_RED, COLOR_RED, -1);
	init_pair(PAIR_CYAN, COLOR_CYAN, -1);
	init_pair(PAIR_BADGE, COLOR_BLACK, COLOR_YELLOW);
	init_pair(PAIR_LOST, COLOR_WHITE, COLOR_RED);
	init_pair(PAIR_CURSOR_OFF, COLOR_BLACK, COLOR_WHITE);
	a[ROLE_TITLE] = COLOR_PAIR(PAIR_TITLE);
	a[ROLE_HEADER] = COLOR_PAIR(PAIR_HEADER);
	a[ROLE_SORTED] = COLOR_PAIR(PAIR_TITLE) | A_BOLD;
	a[ROLE_CURSOR] = COLOR_PAIR(PAIR_TITLE);
	a[ROLE_CURSOR_OFF] = COLOR_PAIR(PAIR_CURSOR_OFF);
	a[ROLE_LABEL] = COLOR_PAIR(PAIR_CYAN) | A_BOLD;
	a[ROLE_DIM] = A_DIM;
	a[ROLE_LOW] = COLOR_PAIR(PAIR_GREEN);
	a[ROLE_MID] = COLOR_PAIR(PAIR_YELLOW);
	a[ROLE_HIGH] = COLOR_PAIR(PAIR_RED) | A_BOLD;
	a[ROLE_LOST] = COLOR_PAIR(PAIR_LOST) | A_BOLD;
	a[ROLE_CHART] = COLOR_PAIR(PAIR_CYAN);
	a[ROLE_KEY] = A_BOLD;
	a[ROLE_KEYLABEL] = COLOR_PAIR(PAIR_TITLE);
	a[ROLE_BADGE] = COLOR_PAIR(PAIR_BADGE) | A_BOLD;
	a[ROLE_ERROR] = COLOR_PAIR(PAIR_RED) | A_BOLD;
}

/* --- text ------------------------------------------------------------------------ */

/*
 * The next character of s: its code point into *cp (U+FFFD for a byte
 * that does not start a valid UTF-8 sequence, or any byte above 0x7F
 * without UTF-8); returns the bytes it takes (at least 1).
 */
static size_t
next_char(const char *s, bool utf8, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len;
	uint32_t c;

	if (u[0] < 0x80) {
		*cp = u[0];
		return 1;
	}
	*cp = 0xFFFD;
	if (!utf8)
		return 1;
	if (u[0] >= 0xC2 && u[0] <= 0xDF) {
		len = 2;
		c = u[0] & 0x1F;
	} else if (u[0] >= 0xE0 && u[0] <= 0xEF) {
		len = 3;
		c = u[0] & 0x0F;
	} else if (u[0] >= 0xF0 && u[0] <= 0xF4) {
		len = 4;
		c = u[0] & 0x07;
	} else {
		return 1;
	}
	for (size_t i = 1; i < len; i++) {
		if ((u[i] & 0xC0) != 0x80)
			return 1;
		c = c << 6 | (u[i] & 0x3F);
	}
	/* overlong forms, surrogates and what lies past U+10FFFF are not characters */
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
	    (c >= 0xD800 && c <= 0xDFFF))
		return 1;
	*cp = c;
	return len;
}

/* Columns cp takes; control characters (and what cannot be shown) are drawn as '?'. */
static int
char_width(uint32_t cp, bool *shown)
{
	int w;

	*shown = false;
	if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || cp == 0xFFFD)
		return 1;
	w = wcwidth((wchar_t)cp);
	if (w < 0)
		return 1;
	*shown = true;
	return w;
}

int
tui_width(const struct tui *t, const char *s)
{
	int w = 0;
	uint32_t cp;
	bool shown;

	while (*s) {
		s += next_char(s, t->utf8, &cp);
		w += char_width(cp, &shown);
	}
	return w;
}

/*
 * Append s to out in at most w columns: text from outside (a command line,
 * a process name) may hold control characters, which would move the
 * cursor, and wide characters, which fmt_cell() counts as one column; both
 * are taken care of here. A cut text ends in "…" ("+" without UTF-8); pad:
 * fill up to w columns with spaces.
 */
static void
cut(struct strbuf *out, const char *s, int w, bool pad, bool utf8)
{
	int used = 0, total = 0;
	uint32_t cp;
	bool shown;
	const char *p;

	for (p = s; *p;) {
		p += next_char(p, utf8, &cp);
		total += char_width(cp, &shown);
	}
	for (p = s; *p;) {
		size_t n = next_char(p, utf8, &cp);
		int cw = char_width(cp, &shown);

		/* room for the ellipsis when the rest will not fit */
		if (used + cw > w || (total > w && used + cw > w - 1))
			break;
		if (shown)
			strbuf_add(out, p, n);
		else
			strbuf_addch(out, '?');
		used += cw;
		p += n;
	}
	if (*p && used < w) {
		strbuf_addstr(out, utf8 ? "\xe2\x80\xa6" : "+");
		used++;
	}
	if (pad && used < w)
		strbuf_addchars(out, ' ', (size_t)(w - used));
}

void
tui_cell(const struct tui *t, struct strbuf *out, const char *s, int w, bool right)
{
	int tw = tui_width(t, s);

	if (right && tw < w)
		strbuf_addchars(out, ' ', (size_t)(w - tw));
	cut(out, s, w, !right, t->utf8);
}

void
tui_put(struct tui *t, int y, int x, int w, enum tui_role role, const char *s)
{
	if (y < 0 || y >= LINES || x < 0 || x >= COLS || w <= 0)
		return;
	if (x + w > COLS)
		w = COLS - x;
	strbuf_reset(&t->sb);
	cut(&t->sb, s, w, true, t->utf8);
	attrset(t->attr[role]);
	mvaddstr(y, x, t->sb.buf);
	attrset(A_NORMAL);
}

int
tui_puts(struct tui *t, int y, int x, int maxw, enum tui_role role, const char *s)
{
	int w = tui_width(t, s);

	if (y < 0 || y >= LINES || x < 0 || x >= COLS || maxw <= 0)
		return 0;
	if (x + maxw > COLS)
		maxw = COLS - x;
	if (w > maxw)
		w = maxw;
	tui_put(t, y, x, w, role, s);
	return w;
}

void
tui_fill(struct tui *t, int y, int x, int w, enum tui_role role)
{
	if (y < 0 || y >= LINES || x < 0 || x >= COLS || w <= 0)
		return;
	if (x + w > COLS)
		w = COLS - x;
	attrset(t->attr[role]);
	mvhline(y, x, ' ', w);
	attrset(A_NORMAL);
}

void
tui_box(struct tui *t, int y, int x, int h, int w, const char *title)
{
	for (int r = 0; r < h; r++)
		tui_fill(t, y + r, x, w, ROLE_NORMAL);
	attrset(t->attr[ROLE_LABEL]);
	mvhline(y, x + 1, ACS_HLINE, w - 2);
	mvhline(y + h - 1, x + 1, ACS_HLINE, w - 2);
	mvvline(y + 1, x, ACS_VLINE, h - 2);
	mvvline(y + 1, x + w - 1, ACS_VLINE, h - 2);
	mvaddch(y, x, ACS_ULCORNER);
	mvaddch(y, x + w - 1, ACS_URCORNER);
	mvaddch(y + h - 1, x, ACS_LLCORNER);
	mvaddch(y + h - 1, x + w - 1, ACS_LRCORNER);
	attrset(A_NORMAL);
	if (title) {
		char buf[96];

		snprintf(buf, sizeof(buf), " %s ", title);
		tui_puts(t, y, x + 2, w - 4, ROLE_LABEL, buf);
	}
}

enum tui_role
tui_level_role(double frac)
{
	if (isnan(frac))
		return ROLE_NORMAL;
	if (frac >= 0.9)
		return ROLE_HIGH;
	if (frac >= 0.7)
		return ROLE_MID;
	return ROLE_LOW;
}

/* Byte offset of code point n of s (its length when s is shorter). */
static size_t
cp_offset(const char *s, size_t n)
{
	size_t i = 0, cp = 0;

	for (; s[i]; i++) {
		if (((unsigned char)s[i] & 0xC0) != 0x80) {
			if (cp == n)
				return i;
			cp++;
		}
	}
	return i;
}

/*
 * "LBL[|||||     text]": the filled part in the fill role with the text at
 * the right end over it, as htop's meters. frac NAN: an empty bar.
 */
void
tui_bar(struct tui *t, int y, int x, int w, const char *label, double frac, const char *text,
        enum tui_role fill)
{
	int lw = tui_width(t, label), inner = w - lw - 2, tw = tui_width(t, text), filled = 0;
	char cells[512];
	int start;

	if (inner < 1 || inner >= (int)sizeof(cells)) {
		tui_puts(t, y, x, w, ROLE_NORMAL, text);
		return;
	}
	if (!isnan(frac))
		filled = (int)lround((frac < 0 ? 0 : frac > 1 ? 1 : frac) * inner);
	if (tw > inner)
		tw = inner;
	start = inner - tw;
	tui_puts(t, y, x, lw, ROLE_LABEL, label);
	tui_puts(t, y, x + lw, 1, ROLE_NORMAL, "[");
	/* the bar up to the text */
	memset(cells, '|', sizeof(cells));
	cells[filled < start ? filled : start] = '\0';
	tui_puts(t, y, x + lw + 1, start, fill, cells);
	if (filled < start)
		tui_fill(t, y, x + lw + 1 + filled, start - filled, ROLE_NORMAL);
	if (tw > 0) {
		/* the text keeps the colour of the cells it covers */
		int in_fill = filled > start ? filled - start : 0;
		struct strbuf cut = STRBUF_INIT;
		size_t split;

		tui_cell(t, &cut, text, tw, true);
		split = cp_offset(cut.buf, (size_t)in_fill);
		if (in_fill > 0) {
			char save = cut.buf[split];

			cut.buf[split] = '\0';
			tui_put(t, y, x + lw + 1 + start, in_fill,
			        fill == ROLE_NORMAL ? ROLE_NORMAL : fill, cut.buf);
			cut.buf[split] = save;
		}
		if (tw > in_fill)
			tui_put(t, y, x + lw + 1 + start + in_fill, tw - in_fill, ROLE_NORMAL,
			        cut.buf + split);
		strbuf_release(&cut);
	}
	tui_puts(t, y, x + lw + 1 + inner, 1, ROLE_NORMAL, "]");
}

void
tui_message(struct tui *t, enum tui_role role, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
	t->msg_role = role;
	t->msg_until = tui_now() + 8;
	t->dirty = true;
}

/* --- the title bar --------------------------------------------------------------- */

static int
badge(struct tui *t, int x, const char *text)
{
	char buf[96];

	if (x + (int)fmt_width(text) + 3 > COLS)
		return x;
	snprintf(buf, sizeof(buf), " %s ", text);
	return x + 1 + tui_puts(t, 0, x + 1, COLS - x - 1, ROLE_BADGE, buf);
}

/* The title: what runs, where, the time of the sample; then badges (SIMULATED, PAUSED, ...). */
static void
draw_title(struct tui *t)
{
	struct strbuf sb = STRBUF_INIT;
	const char *badges[4];
	char when[64] = "-";
	int nb = 0, need = 0, x;

	if (t->have_snap && t->snap.simulated)
		badges[nb++] = "SIMULATED";
	if (t->paused)
		badges[nb++] = "PAUSED";
	if (t->ended_seen)
		badges[nb++] = t->replay ? "end of recording" : "feed ended";
	if (!t->have_snap)
		badges[nb++] = "waiting for the first sample";
	for (int i = 0; i < nb; i++)
		need += (int)fmt_width(badges[i]) + 3;
	if (t->have_snap) {
		time_t s = (time_t)t->snap.time;
		struct tm tm;

		localtime_r(&s, &tm);
		strftime(when, sizeof(when), t->replay ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &tm);
	}
	/* the host name, then the number of GPUs, give way to the badges on a narrow screen */
	for (int level = 0; level < 3; level++) {
		strbuf_reset(&sb);
		strbuf_addstr(&sb, " gpuscope top");
		if (level < 1 && t->have_snap && t->snap.hostname[0])
			strbuf_addf(&sb, "  %s", t->snap.hostname);
		strbuf_addf(&sb, t->replay ? "  replay %s" : "  %s", when);
		if (level < 2 && t->have_snap)
			strbuf_addf(&sb, "  %zu GPU%s", t->snap.nr_dev,
			            t->snap.nr_dev == 1 ? "" : "s");
		if (!t->replay)
			strbuf_addf(&sb, "  every %gs", t->interval);
		if ((int)fmt_width(sb.buf) + need <= COLS)
			break;
	}
	tui_fill(t, 0, 0, COLS, ROLE_TITLE);
	x = tui_puts(t, 0, 0, COLS, ROLE_TITLE, sb.buf);
	strbuf_release(&sb);
	for (int i = 0; i < nb; i++)
		x = badge(t, x, badges[i]);
}

/* --- the bottom line -------------------------------------------------------------- */

static void
draw_keys(struct tui *t, int y)
{
	static const struct {
		const char *key, *label;
	} keys[] = {
		{ "F1", "Help" }, { "F2", "Setup" },  { "F3", "Chart" }, { "F4", "Filter" },
		{ "F5", "Tree" }, { "F6", "SortBy" }, { "F9", "Kill" },  { "F10", "Quit" },
	};
	int x = 0;

	tui_fill(t, y, 0, COLS, ROLE_NORMAL);
	for (size_t i = 0; i < ARRAY_SIZE(keys) && x < COLS; i++) {
		char label[16];

		x += tui_puts(t, y, x, COLS - x, ROLE_KEY, keys[i].key);
		snprintf(label, sizeof(label), "%-7s", keys[i].label);
		x += tui_puts(t, y, x, COLS - x, ROLE_KEYLABEL, label);
	}
	if (x + 2 < COLS)
		tui_fill(t, y, x, COLS - x, ROLE_KEYLABEL);
}

static void
draw_bottom(struct tui *t, int y)
{
	if (t->dialog == DLG_FILTER)
		return; /* the prompt is the dialog's */
	if (t->msg[0] && tui_now() < t->msg_until) {
		tui_fill(t, y, 0, COLS, ROLE_NORMAL);
		tui_put(t, y, 0, COLS, t->msg_role, t->msg);
		return;
	}
	t->msg[0] = '\0';
	draw_keys(t, y);
}

/* --- the findings pane ------------------------------------------------------------ */

/* One finding at (y, x): severity, GPU, id and title. */
static void
draw_finding_line(struct tui *t, int y, int x, const struct tui_finding *e)
{
	char head[48];
	enum tui_role role = e->severity == FINDING_ERROR  ? ROLE_HIGH
	                     : e->severity == FINDING_WARN ? ROLE_MID
	                                                   : ROLE_NORMAL;

	if (e->gpu >= 0)
		snprintf(head, sizeof(head), "  %-7s GPU %d ",
		         tui_finding_severity_name(e->severity), e->gpu);
	else
		snprintf(head, sizeof(head), "  %-7s ", tui_finding_severity_name(e->severity));
	if (x >= COLS)
		return;
	x += tui_puts(t, y, x, COLS - x, role, head);
	if (x < COLS)
		tui_puts(t, y, x, COLS - x, ROLE_NORMAL, e->text);
}

/*
 * The findings, worst first: a header line with their count, then one line
 * each; a pane of one line shows the worst on the header line.
 */
static void
draw_findings(struct tui *t, int y, int rows)
{
	const struct tui_findings *f = &t->findings;
	char buf[64];
	int x;

	if (rows <= 0)
		return;
	x = tui_puts(t, y, 0, COLS, ROLE_LABEL, "Findings");
	if (!f->nr) {
		tui_puts(t, y, x + 2, COLS - x - 2, ROLE_DIM, tui_findings_empty_text(f));
		return;
	}
	snprintf(buf, sizeof(buf), "  %zu (F: full text)", f->nr);
	x += tui_puts(t, y, x, COLS - x, ROLE_DIM, buf);
	if (rows == 1) {
		draw_finding_line(t, y, x, &f->v[0]);
		t->geom.find_y = y;
		t->geom.find_rows = 1;
		return;
	}
	for (int r = 1; r < rows && (size_t)(r - 1) < f->nr; r++)
		draw_finding_line(t, y + r, 0, &f->v[r - 1]);
	t->geom.find_y = y + 1;
	t->geom.find_rows = rows - 1;
}

/* --- the main view ----------------------------------------------------------------- */

struct layout {
	int gpu_y, gpu_rows;
	bool compact;
	int chart_y, chart_rows;
	int find_y, find_rows;
	int proc_y, proc_rows;
};

/* Rows of the process table below which the findings pane and the charts give way. */
#define PROC_ROWS_MIN  4
#define PROC_ROWS_WANT 6

static void
plan(struct tui *t, struct layout *l)
{
	int avail = LINES - 2, n = t->have_snap ? (int)t->snap.nr_dev : 0, rest, want;
	bool procs = t->opt->procs && t->procs_pane; /* the pane hidden in F2 takes no rows */
	int procs_min = procs ? PROC_ROWS_MIN : 0;

	memset(l, 0, sizeof(*l));
	l->gpu_y = 1;
	l->compact = tui_compact(t, avail - 1 - (procs ? PROC_ROWS_WANT : 0));
	l->gpu_rows = l->compact ? n : 2 * n;
	if (l->gpu_rows > avail - procs_min)
		l->gpu_rows = avail - procs_min;
	if (l->gpu_rows < 1)
		l->gpu_rows = n ? 1 : 0;
	if (!t->gpus_pane)
		l->gpu_rows = 0;
	rest = avail - l->gpu_rows;
	/* the findings pane: one line, more when the screen is roomy and there is more to say */
	if (t->findings_pane && rest - procs_min >= 1) {
		l->find_rows = 1;
		if (rest >= 30 && t->findings.nr)
			l->find_rows = 1 + (t->findings.nr > 4 ? 4 : (int)t->findings.nr);
	}
	rest -= l->find_rows;
	/* charts take up to 2/5 of what is left, and only what the processes can spare */
	want = procs ? rest * 2 / 5 : rest;
	if (procs && want < n + 1 && rest - PROC_ROWS_WANT >= n + 1)
		want = n + 1;
	if (procs && want > rest - PROC_ROWS_WANT)
		want = rest - PROC_ROWS_WANT;
	l->chart_rows = want >= 2 && t->charts_pane ? want : 0;
	rest -= l->chart_rows;
	l->chart_y = l->gpu_y + l->gpu_rows;
	l->find_y = l->chart_y + l->chart_rows;
	l->proc_y = l->find_y + l->find_rows;
	l->proc_rows = procs ? rest : 0;
}

static void
draw_main(struct tui *t)
{
	struct layout l;

	plan(t, &l);
	if (!t->have_snap) {
		tui_puts(t, 2, 2, COLS - 4, ROLE_DIM, "reading the GPUs...");
		return;
	}
	if (l.gpu_rows)
		tui_draw_gpus(t, l.gpu_y, l.gpu_rows, l.compact);
	if (l.chart_rows)
		tui_draw_charts(t, l.chart_y, l.chart_rows);
	draw_findings(t, l.find_y, l.find_rows);
	if (l.proc_rows)
		tui_draw_procs(t, l.proc_y, l.proc_rows);
	else
		t->page = 1;
}

bool
tui_too_small(void)
{
	return COLS < 40 || LINES < 8;
}

void
tui_draw(struct tui *t)
{
	erase();
	if (tui_too_small()) {
		tui_puts(t, 0, 0, COLS, ROLE_NORMAL, "terminal too small for gpuscope top");
		refresh();
		return;
	}
	memset(&t->geom, 0, sizeof(t->geom));
	t->geom.gpu_y = t->geom.proc_y = t->geom.proc_header_y = -1;
	draw_title(t);
	switch (t->view) {
	case VIEW_MAIN:
		draw_main(t);
		break;
	case VIEW_DETAIL:
		tui_draw_detail(t, 1, LINES - 2);
		break;
	case VIEW_HELP:
		tui_draw_help(t, 1, LINES - 2);
		break;
	case VIEW_SETUP:
		tui_draw_setup(t, 1, LINES - 2);
		break;
	}
	draw_bottom(t, LINES - 1);
	if (t->dialog != DLG_NONE)
		tui_draw_dialog(t);
	refresh();
}
