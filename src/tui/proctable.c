/*
 * top's process table on the screen: the columns of the status table that
 * fit, the sort column marked, the selected process kept across frames,
 * and the tree's branches before the command.
 */
#include "tui/tui_impl.h"

#include <stdio.h>
#include <string.h>

#include "core/fmt.h"

const struct gpu_proc *
tui_selected_proc(const struct tui *t)
{
	if (!t->have_snap || t->cursor >= t->pv.nr)
		return NULL;
	return &t->snap.proc[t->pv.row[t->cursor].proc];
}

void
tui_procs_select_row(struct tui *t, size_t row)
{
	const struct gpu_proc *p;

	if (!t->pv.nr) {
		t->cursor = 0;
		t->has_sel = false;
		return;
	}
	t->cursor = row < t->pv.nr ? row : t->pv.nr - 1;
	p = tui_selected_proc(t);
	t->sel_pid = p->pid;
	t->sel_dev_index = t->snap.dev[p->dev].index;
	t->has_sel = true;
	t->dirty = true;
}

void
tui_procs_move(struct tui *t, long delta)
{
	long r = (long)t->cursor + delta;

	if (r < 0)
		r = 0;
	tui_procs_select_row(t, (size_t)r);
}

void
tui_procs_rebuild(struct tui *t)
{
	if (!t->have_snap)
		return;
	pv_build(&t->pv, &t->snap, t->proc_root);
	if (t->has_sel) {
		/* the selection follows its process wherever the sort puts it */
		for (size_t i = 0; i < t->pv.nr; i++) {
			const struct gpu_proc *p = &t->snap.proc[t->pv.row[i].proc];

			if (p->pid == t->sel_pid && t->snap.dev[p->dev].index == t->sel_dev_index) {
				t->cursor = i;
				return;
			}
		}
	}
	/* gone, or never chosen: stay on the same row number */
	tui_procs_select_row(t, t->cursor);
}

/* Which columns fit: the status table's rule (optional ones go first when space is short). */
static void
choose_columns(const struct tui *t, bool *show)
{
	static const enum pcol optional[] = { PCOL_CTR, PCOL_ENCDEC, PCOL_RSS,
		                              PCOL_CPU, PCOL_TIME,   PCOL_JOB };
	bool any_ctr = false, any_media = false, any_job = false;
	int used = 0;
	const int min_cmd = 17;

	for (size_t i = 0; i < t->snap.nr_proc; i++) {
		const struct gpu_proc *p = &t->snap.proc[i];

		any_ctr |= p->container != NULL;
		any_job |= p->slurm_job || (p->pod_namespace && p->pod_name);
		any_media |= (proc_has(p, PF_ENC_UTIL) && p->v[PF_ENC_UTIL] > 0) ||
		             (proc_has(p, PF_DEC_UTIL) && p->v[PF_DEC_UTIL] > 0);
	}
	for (int c = 0; c < PCOL_CMD; c++) {
		show[c] = true;
		used += (int)pcol_info((enum pcol)c)->width + 1;
	}
	show[PCOL_CMD] = true;
	if (!any_ctr) {
		show[PCOL_CTR] = false;
		used -= (int)pcol_info(PCOL_CTR)->width + 1;
	}
	if (!any_job) {
		show[PCOL_JOB] = false;
		used -= (int)pcol_info(PCOL_JOB)->width + 1;
	}
	if (!any_media) {
		show[PCOL_ENCDEC] = false;
		used -= (int)pcol_info(PCOL_ENCDEC)->width + 1;
	}
	for (size_t k = 0; k < sizeof(optional) / sizeof(optional[0]) && used + min_cmd > COLS;
	     k++) {
		if (!show[optional[k]])
			continue;
		show[optional[k]] = false;
		used -= (int)pcol_info(optional[k])->width + 1;
	}
}

/*
 * What the list shows, for the header: "3 of 8 processes, filter 'py', user
 * bob, GPU 1, tree, sorted by CPU% v", or when that does not fit in room
 * columns, "3/8 'py' bob gpu1 tree".
 */
static void
view_note(const struct tui *t, struct strbuf *sb, int room)
{
	const struct proc_view *pv = &t->pv;
	bool any = pv->filter[0] || pv->user[0] || pv->gpu >= 0;
	size_t start = sb->len;

	strbuf_addf(sb, "  %zu", pv->nr);
	if (any)
		strbuf_addf(sb, " of %zu", t->snap.nr_proc);
	strbuf_addstr(sb, pv->nr == 1 ? " process" : " processes");
	if (pv->filter[0])
		strbuf_addf(sb, ", filter '%s'", pv->filter);
	if (pv->user[0])
		strbuf_addf(sb, ", user %s", pv->user);
	if (pv->gpu >= 0)
		strbuf_addf(sb, ", GPU %ld", pv->gpu);
	if (pv->tree)
		strbuf_addstr(sb, ", tree");
	strbuf_addf(sb, ", sorted by %s %s", pcol_info(pv->sort)->title,
	            pv_descending(pv) ? (t->utf8 ? "\xe2\x96\xbc" : "v")
	                              : (t->utf8 ? "\xe2\x96\xb2" : "^"));
	if ((int)fmt_width(sb->buf + start) <= room)
		return;
	strbuf_setlen(sb, start);
	strbuf_addf(sb, " %zu", pv->nr);
	if (any)
		strbuf_addf(sb, "/%zu", t->snap.nr_proc);
	if (pv->filter[0])
		strbuf_addf(sb, " '%s'", pv->filter);
	if (pv->user[0])
		strbuf_addf(sb, " %s", pv->user);
	if (pv->gpu >= 0)
		strbuf_addf(sb, " gpu%ld", pv->gpu);
	if (pv->tree)
		strbuf_addstr(sb, " tree");
}

static void
draw_header(struct tui *t, int y, const bool *show)
{
	struct strbuf note = STRBUF_INIT, cell = STRBUF_INIT;
	int x = 0;

	tui_fill(t, y, 0, COLS, ROLE_HEADER);
	t->geom.proc_header_y = y;
	t->geom.nr_cols = 0;
	for (int c = 0; c < PCOL__COUNT; c++) {
		const struct pcol_info *ci = pcol_info((enum pcol)c);
		int w = ci->width ? (int)ci->width : (int)fmt_width(ci->title);
		enum tui_role role = c == (int)t->pv.sort ? ROLE_SORTED : ROLE_HEADER;

		if (!show[c] || x >= COLS)
			continue;
		t->geom.col_x[t->geom.nr_cols] = x;
		t->geom.col_id[t->geom.nr_cols++] = (enum pcol)c;
		strbuf_reset(&cell);
		tui_cell(t, &cell, ci->title, w, ci->right);
		tui_puts(t, y, x, COLS - x, role, cell.buf);
		x += w + 1;
	}
	t->geom.col_x[t->geom.nr_cols] = COLS;
	view_note(t, &note, COLS - x + 1);
	tui_puts(t, y, x - 1, COLS - x + 1, ROLE_HEADER, note.buf);
	strbuf_release(&note);
	strbuf_release(&cell);
}

static void
draw_row(struct tui *t, int y, size_t r, const bool *show)
{
	const struct pv_row *row = &t->pv.row[r];
	const struct gpu_proc *p = &t->snap.proc[row->proc];
	bool sel = r == t->cursor;
	enum tui_role role = sel ? (t->focus == FOCUS_PROCS ? ROLE_CURSOR : ROLE_CURSOR_OFF)
	                     : p->host == PHOST_NOT_VISIBLE ? ROLE_DIM
	                                                    : ROLE_NORMAL;
	struct strbuf line = STRBUF_INIT;
	char buf[128];

	for (int c = 0; c < PCOL_CMD; c++) {
		const struct pcol_info *ci = pcol_info((enum pcol)c);

		if (!show[c])
			continue;
		pv_cell(buf, sizeof(buf), &t->snap, p, (enum pcol)c);
		tui_cell(t, &line, buf, (int)ci->width, ci->right);
		strbuf_addch(&line, ' ');
	}
	pv_tree_prefix(&line, row, t->utf8);
	if (p->container && !show[PCOL_CTR])
		strbuf_addf(&line, "[%s] ", p->container);
	strbuf_addstr(&line, pv_command(p));
	if (sel)
		tui_fill(t, y, 0, COLS, role);
	tui_puts(t, y, 0, COLS, role, line.buf);
	strbuf_release(&line);
}

void
tui_draw_procs(struct tui *t, int y, int rows)
{
	bool show[PCOL__COUNT];
	int page = rows - 1;

	if (rows < 2)
		return;
	choose_columns(t, show);
	draw_header(t, y, show);
	t->page = page;
	t->geom.proc_y = y + 1;
	t->geom.proc_rows = page;
	if (!t->pv.nr) {
		struct strbuf why = STRBUF_INIT;

		if (t->snap.nr_proc)
			tui_puts(t, y + 1, 2, COLS - 2, ROLE_DIM,
			         "no process matches (Esc clears the filters)");
		else if (gpu_snapshot_procs_unknown(&t->snap, &why)) /* unknown is not none */
			tui_puts(t, y + 1, 2, COLS - 2, ROLE_DIM, why.buf);
		else
			tui_puts(t, y + 1, 2, COLS - 2, ROLE_DIM,
			         "no processes are using the GPUs");
		strbuf_release(&why);
		return;
	}
	if (t->cursor >= t->pv.nr)
		t->cursor = t->pv.nr - 1;
	if (t->cursor < t->top)
		t->top = t->cursor;
	if (t->cursor >= t->top + (size_t)page)
		t->top = t->cursor - (size_t)page + 1;
	if (t->top + (size_t)page > t->pv.nr)
		t->top = t->pv.nr > (size_t)page ? t->pv.nr - (size_t)page : 0;
	for (int i = 0; i < page && t->top + (size_t)i < t->pv.nr; i++)
		draw_row(t, y + 1 + i, t->top + (size_t)i, show);
}
