/*
 * top's setup screen (F2, as in htop): the settings that top.conf keeps,
 * one a line with its value. Up and Down choose one, Left, Right, Enter and
 * Space change it at once; Esc, F2, F10 or q go back to the view F2 came
 * from. gpuscope top writes them to top.conf when it quits.
 */
#include "tui/tui_impl.h"

#include <stdio.h>

enum setting {
	SET_SORT,
	SET_ORDER,
	SET_TREE,
	SET_CHART,
	SET_LAYOUT,
	SET_INTERVAL,
	SET_GPUS,
	SET_CHARTS,
	SET_FINDINGS,
	SET_PROCS,
	SET_DETAIL_ALL,
	SET__COUNT
};

static const char *const labels[SET__COUNT] = {
	[SET_SORT] = "Sort column",       [SET_ORDER] = "Sort order",
	[SET_TREE] = "Process tree",      [SET_CHART] = "Chart",
	[SET_LAYOUT] = "GPU layout",      [SET_INTERVAL] = "Interval",
	[SET_GPUS] = "GPU pane",          [SET_CHARTS] = "History charts",
	[SET_FINDINGS] = "Findings pane", [SET_PROCS] = "Process table",
	[SET_DETAIL_ALL] = "Detail view",
};

static const char *
shown(bool on)
{
	return on ? "shown" : "hidden";
}

static void
value(const struct tui *t, enum setting s, char *buf, size_t size)
{
	static const char *const layouts[] = { "auto", "full (two lines per GPU)",
		                               "compact (one line per GPU)" };

	switch (s) {
	case SET_SORT:
		snprintf(buf, size, "%s", pcol_info(t->pv.sort)->title);
		break;
	case SET_ORDER:
		snprintf(buf, size, "%s%s", pv_descending(&t->pv) ? "descending" : "ascending",
		         t->pv.invert ? " (inverted)" : "");
		break;
	case SET_TREE:
		snprintf(buf, size, "%s", t->pv.tree ? "on" : "off");
		break;
	case SET_CHART:
		snprintf(buf, size, "%s", history_metric_name(t->metric));
		break;
	case SET_LAYOUT:
		snprintf(buf, size, "%s", layouts[(unsigned)t->layout < 3 ? t->layout : 0]);
		break;
	case SET_INTERVAL:
		if (t->replay)
			snprintf(buf, size, "the recording's pace");
		else
			snprintf(buf, size, "%g s", t->interval);
		break;
	case SET_GPUS:
		snprintf(buf, size, "%s", shown(t->gpus_pane));
		break;
	case SET_CHARTS:
		snprintf(buf, size, "%s", shown(t->charts_pane));
		break;
	case SET_FINDINGS:
		snprintf(buf, size, "%s", shown(t->findings_pane));
		break;
	case SET_PROCS:
		snprintf(buf, size, "%s%s", shown(t->procs_pane),
		         t->opt->procs ? "" : " (off for this run: --no-processes)");
		break;
	case SET_DETAIL_ALL:
		snprintf(buf, size, "%s", t->detail_all ? "every field" : "the fields reported");
		break;
	case SET__COUNT:
		buf[0] = '\0';
		break;
	}
}

static void
change(struct tui *t, enum setting s, int dir)
{
	switch (s) {
	case SET_SORT:
		t->pv.sort =
		        (enum pcol)((t->pv.sort + PCOL__COUNT + (dir > 0 ? 1 : -1)) % PCOL__COUNT);
		t->pv.invert = false;
		tui_procs_rebuild(t);
		break;
	case SET_ORDER:
		t->pv.invert = !t->pv.invert;
		tui_procs_rebuild(t);
		break;
	case SET_TREE:
		if (t->replay) {
			tui_message(
			        t, ROLE_NORMAL,
			        "a recording holds no parent pids: the tree needs live processes");
			break;
		}
		t->pv.tree = !t->pv.tree;
		tui_procs_rebuild(t);
		break;
	case SET_CHART:
		t->metric = (enum hist_metric)((t->metric + HM__COUNT + (dir > 0 ? 1 : -1)) %
		                               HM__COUNT);
		break;
	case SET_LAYOUT:
		t->layout = (enum tui_layout)((t->layout + 3 + (dir > 0 ? 1 : -1)) % 3);
		break;
	case SET_INTERVAL:
		tui_change_interval(t, dir);
		break;
	case SET_GPUS:
		t->gpus_pane = !t->gpus_pane;
		break;
	case SET_CHARTS:
		t->charts_pane = !t->charts_pane;
		break;
	case SET_FINDINGS:
		t->findings_pane = !t->findings_pane;
		break;
	case SET_PROCS:
		t->procs_pane = !t->procs_pane;
		break;
	case SET_DETAIL_ALL:
		t->detail_all = !t->detail_all;
		break;
	case SET__COUNT:
		break;
	}
}

void
tui_open_setup(struct tui *t)
{
	if (t->view != VIEW_SETUP)
		t->setup_back = t->view;
	t->view = VIEW_SETUP;
	t->dirty = true;
}

void
tui_draw_setup(struct tui *t, int y, int rows)
{
	char buf[96];
	int first = 0;

	tui_puts(t, y, 1, COLS - 1, ROLE_LABEL, "Setup: saved in top.conf when top quits");
	/* the cursor's line stays on screen on a short terminal */
	if (t->setup_sel >= rows - 3)
		first = t->setup_sel - (rows - 4);
	for (int r = 2; r < rows - 1 && first + r - 2 < SET__COUNT; r++) {
		enum setting s = (enum setting)(first + r - 2);
		enum tui_role role = (int)s == t->setup_sel ? ROLE_CURSOR : ROLE_NORMAL;

		tui_fill(t, y + r, 1, COLS - 2, role);
		tui_puts(t, y + r, 3, 20, role == ROLE_CURSOR ? role : ROLE_LABEL, labels[s]);
		value(t, s, buf, sizeof(buf));
		if (COLS > 26)
			tui_puts(t, y + r, 24, COLS - 26, role, buf);
	}
	tui_put(t, y + rows - 1, 0, COLS, ROLE_DIM,
	        " Up/Down: choose  Left/Right/Enter/Space: change  Esc/F2/F10: back");
}

void
tui_setup_key(struct tui *t, int ch)
{
	switch (ch) {
	case 27:
	case 'q':
	case KEY_F(2):
	case KEY_F(10):
	case KEY_BACKSPACE:
		t->view = t->setup_back == VIEW_SETUP ? VIEW_MAIN : t->setup_back;
		break;
	case KEY_UP:
	case 'k':
		if (t->setup_sel > 0)
			t->setup_sel--;
		break;
	case KEY_DOWN:
	case 'j':
		if (t->setup_sel + 1 < SET__COUNT)
			t->setup_sel++;
		break;
	case KEY_HOME:
		t->setup_sel = 0;
		break;
	case KEY_END:
		t->setup_sel = SET__COUNT - 1;
		break;
	case KEY_LEFT:
	case '-':
		change(t, (enum setting)t->setup_sel, -1);
		break;
	case KEY_RIGHT:
	case '+':
	case ' ':
	case '\n':
	case '\r':
	case KEY_ENTER:
		change(t, (enum setting)t->setup_sel, 1);
		break;
	case KEY_RESIZE:
		break;
	default:
		return;
	}
	t->dirty = true;
}
