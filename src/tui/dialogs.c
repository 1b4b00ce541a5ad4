/*
 * top's help screen and dialogs: the filter prompt, the menus of sort
 * columns, users and signals, and the confirmation before a signal is sent.
 * Sending a signal is checked twice: before the menu opens (whose process,
 * and whether the processes shown are this machine's at all), and again
 * just before kill(2) (the pid must still be the same process).
 */
#include "tui/tui_impl.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "backend/feed.h"
#include "core/procinfo.h"
#include "core/xalloc.h"
#include "core/fmt.h"

/* --- help ------------------------------------------------------------------------- */

static const char *const help_lines[][2] = {
	{ NULL, "Moving" },
	{ "Up Down PgUp PgDn", "move in the process list (in the GPU list after Tab)" },
	{ "Home End", "first, last" },
	{ "Tab", "switch between the process list and the GPU list" },
	{ "Enter d", "detail of the selected GPU: every field it reports" },
	{ "", "in it: Left Right other GPU, a unknown fields too, Esc back" },
	{ "mouse", "click a column header to sort by it, a row to select it; wheel scrolls" },
	{ NULL, "Display" },
	{ "c F3  C", "chart: next / previous metric (utilisation, memory, power," },
	{ "", "temperature, SM clock, memory clock, memory controller)" },
	{ "m", "layout: auto, full (two lines per GPU), compact (one line per GPU)" },
	{ "f", "show or hide the findings pane (doctor's health and workload checks)" },
	{ "F", "a finding's full text: evidence, meaning, what to do (or click it)" },
	{ "", "in it: Left Right other finding, Up Down scroll, Esc back" },
	{ "space", "pause: freeze the display (sampling goes on); again to resume" },
	{ "+ -", "sample less often / more often" },
	{ "r Ctrl-L", "sample now and redraw the screen" },
	{ NULL, "Processes" },
	{ "F6  < > , .", "choose the sort column; previous / next column" },
	{ "I", "invert the sort order" },
	{ "M P T N", "sort by GPU memory, CPU %, running time, PID" },
	{ "/ F4", "filter: command, user, pid, container, job or pod containing the text" },
	{ "u", "show only one user's processes" },
	{ "0-9 g", "show only one GPU's processes (g: the next GPU, then all)" },
	{ "Esc", "clear the filters" },
	{ "t F5", "tree: each process under the parent that uses a GPU too" },
	{ "k F9", "send a signal to the selected process (choose it, then confirm)" },
	{ NULL, "Other" },
	{ "F2", "setup screen: what top shows, kept in top.conf on quit" },
	{ "", "(sort, chart, layout, interval, panes; see 'man gpuscope')" },
	{ "? h F1", "this help" },
	{ "q F10", "quit (Ctrl-C too)" },
};

void
tui_draw_help(struct tui *t, int y, int rows)
{
	/* rows - 2 lines of help between the title and the line at the bottom */
	int n = (int)ARRAY_SIZE(help_lines), max = n - (rows - 2);

	if (t->help_scroll > max)
		t->help_scroll = max;
	if (t->help_scroll < 0)
		t->help_scroll = 0;
	tui_puts(t, y, 1, COLS - 1, ROLE_LABEL, "Keys of gpuscope top");
	for (int r = 1; r < rows - 1 && t->help_scroll + r - 1 < n; r++) {
		const char *const *l = help_lines[t->help_scroll + r - 1];

		if (!l[0]) {
			tui_puts(t, y + r, 1, COLS - 1, ROLE_LABEL, l[1]);
			continue;
		}
		tui_puts(t, y + r, 3, 20, ROLE_KEY, l[0]);
		tui_puts(t, y + r, 24, COLS - 24, ROLE_NORMAL, l[1]);
	}
	tui_put(t, y + rows - 1, 0, COLS, ROLE_DIM, " Esc, q or ?: back   Up/Down: scroll");
}

int
tui_help_key(struct tui *t, int ch)
{
	switch (ch) {
	case 27:
	case 'q':
	case '?':
	case 'h':
	case KEY_F(1):
	case '\n':
	case '\r':
	case KEY_ENTER:
		t->view = VIEW_MAIN;
		break;
	case KEY_UP:
		t->help_scroll--;
		break;
	case KEY_DOWN:
		t->help_scroll++;
		break;
	case KEY_PPAGE:
		t->help_scroll -= LINES - 4;
		break;
	case KEY_NPAGE:
		t->help_scroll += LINES - 4;
		break;
	default:
		return 0;
	}
	t->dirty = true;
	return 1;
}

/* --- a finding's full text ------------------------------------------------------------ */

void
tui_open_finding(struct tui *t)
{
	if (!t->findings.nr) {
		tui_message(t, ROLE_NORMAL, "no finding to show (%s)",
		            tui_findings_empty_text(&t->findings));
		return;
	}
	if (t->find_sel >= t->findings.nr)
		t->find_sel = 0;
	t->find_scroll = 0;
	t->dialog = DLG_FINDING;
	t->dirty = true;
}

/* The length of the next line of at most w columns of text from s (breaking at a space). */
static size_t
wrap_len(const char *s, size_t len, int w)
{
	size_t cut = 0, cols = 0;

	for (size_t i = 0; i < len; i++) {
		if (((unsigned char)s[i] & 0xC0) == 0x80)
			continue; /* a UTF-8 continuation byte takes no column */
		if ((int)cols == w)
			return cut ? cut : i;
		if (s[i] == ' ')
			cut = i + 1;
		cols++;
	}
	return len;
}

/*
 * Lay text out in lines of w columns: each line's start, length and indent
 * into off, len and ind (up to max of them); returns the count.
 */
static int
wrap(const char *text, int w, size_t *off, size_t *len, int *ind, int max)
{
	const char *p = text;
	int n = 0;

	if (w < 8)
		w = 8;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t para = nl ? (size_t)(nl - p) : strlen(p), done = 0;
		/* a line of a list ("  - ...") keeps its indent when it wraps */
		int indent = !strncmp(p, "  - ", 4) ? 4 : 0;

		do {
			size_t l = wrap_len(p + done, para - done, done ? w - indent : w);

			if (n < max) {
				off[n] = (size_t)(p - text) + done;
				len[n] = l;
				ind[n] = done ? indent : 0;
			}
			n++;
			done += l;
		} while (done < para);
		p += para + (nl != NULL);
	}
	return n;
}

#define FINDING_LINES 400

static void
draw_finding(struct tui *t)
{
	const struct tui_finding *e;
	size_t off[FINDING_LINES], len[FINDING_LINES];
	int ind[FINDING_LINES];
	struct strbuf line = STRBUF_INIT;
	int w = COLS - 4, h = LINES - 2, y = 1, x = 2, rows, n;
	char title[160], buf[64];

	if (t->find_sel >= t->findings.nr) {
		t->dialog = DLG_NONE;
		return;
	}
	e = &t->findings.v[t->find_sel];
	if (w > 100)
		w = 100;
	x = (COLS - w) / 2;
	snprintf(title, sizeof(title), "Finding %zu of %zu: %s", t->find_sel + 1, t->findings.nr,
	         e->code);
	tui_box(t, y, x, h, w, title);
	rows = h - 4;
	if (e->gpu >= 0)
		snprintf(buf, sizeof(buf), "%s, GPU %d", tui_finding_severity_name(e->severity),
		         e->gpu);
	else
		snprintf(buf, sizeof(buf), "%s", tui_finding_severity_name(e->severity));
	tui_put(t, y + 1, x + 2, w - 4,
	        e->severity == FINDING_ERROR  ? ROLE_HIGH
	        : e->severity == FINDING_WARN ? ROLE_MID
	                                      : ROLE_LABEL,
	        buf);
	n = wrap(e->detail ? e->detail : e->text, w - 4, off, len, ind, FINDING_LINES);
	if (n > FINDING_LINES)
		n = FINDING_LINES;
	if (t->find_scroll > n - rows)
		t->find_scroll = n - rows;
	if (t->find_scroll < 0)
		t->find_scroll = 0;
	for (int r = 0; r < rows - 1 && t->find_scroll + r < n; r++) {
		int i = t->find_scroll + r;
		const char *d = e->detail ? e->detail : e->text;

		strbuf_reset(&line);
		strbuf_addchars(&line, ' ', (size_t)ind[i]);
		strbuf_add(&line, d + off[i], len[i]);
		tui_put(t, y + 2 + r, x + 2, w - 4, ROLE_NORMAL, line.buf);
	}
	strbuf_release(&line);
	tui_put(t, y + h - 2, x + 1, w - 2, ROLE_DIM,
	        " Left/Right: other finding  Up/Down: scroll  Esc: close");
}

static void
finding_key(struct tui *t, int ch)
{
	switch (ch) {
	case 27:
	case 'q':
	case 'F':
	case '\n':
	case '\r':
	case KEY_ENTER:
		t->dialog = DLG_NONE;
		break;
	case KEY_RIGHT:
	case 'n':
		if (t->find_sel + 1 < t->findings.nr) {
			t->find_sel++;
			t->find_scroll = 0;
		}
		break;
	case KEY_LEFT:
	case 'p':
		if (t->find_sel > 0) {
			t->find_sel--;
			t->find_scroll = 0;
		}
		break;
	case KEY_UP:
		t->find_scroll--;
		break;
	case KEY_DOWN:
		t->find_scroll++;
		break;
	case KEY_PPAGE:
		t->find_scroll -= LINES - 6;
		break;
	case KEY_NPAGE:
		t->find_scroll += LINES - 6;
		break;
	case KEY_HOME:
		t->find_scroll = 0;
		break;
	default:
		break;
	}
}

/* --- the signals ------------------------------------------------------------------- */

static const struct {
	int sig;
	const char *name;
	const char *what;
} sigs[] = {
	{ SIGTERM, "TERM", "ask it to end (the usual way)" },
	{ SIGINT, "INT", "interrupt, as Ctrl-C does" },
	{ SIGHUP, "HUP", "hang up (many daemons reload)" },
	{ SIGQUIT, "QUIT", "quit and dump core" },
	{ SIGKILL, "KILL", "end it now; it cannot clean up" },
	{ SIGUSR1, "USR1", "user-defined signal 1" },
	{ SIGUSR2, "USR2", "user-defined signal 2" },
	{ SIGSTOP, "STOP", "stop (pause) it" },
	{ SIGCONT, "CONT", "let a stopped process go on" },
};

static const char *
sig_name(int sig)
{
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		if (sigs[i].sig == sig)
			return sigs[i].name;
	return "?";
}

/* Why p must not be signalled from here, or NULL when it may. */
static const char *
refusal(struct tui *t, const struct gpu_proc *p, char *buf, size_t size)
{
	if (t->opt->read_only)
		return "read-only (--read-only): top sends no signals";
	if (t->replay)
		return "these processes are from a recording, not running here: nothing to signal";
	if (!t->proc_is_live) {
		snprintf(
		        buf, size,
		        "processes are read from '%.120s', not this machine's /proc: nothing to signal",
		        t->proc_root);
		return buf;
	}
	if (p->host == PHOST_NOT_VISIBLE) {
		snprintf(
		        buf, size,
		        "process %u is not visible from this pid namespace: its pid here may be another process",
		        p->pid);
		return buf;
	}
	if (geteuid() != 0 && proc_has(p, PF_UID) && (uid_t)p->v[PF_UID] != geteuid()) {
		snprintf(buf, size,
		         "process %u belongs to %s: only root may signal another user's process",
		         p->pid, p->user ? p->user : "another user");
		return buf;
	}
	if (p->pid <= 1) {
		snprintf(buf, size, "not signalling process %u (init)", p->pid);
		return buf;
	}
	if (p->pid == (uint32_t)getpid())
		return "that is gpuscope itself: q quits";
	/* without it, send_signal() could not tell this process from a new one with its pid */
	if (!p->start_ticks) {
		snprintf(
		        buf, size,
		        "the start time of process %u could not be read: cannot make sure its pid is still that process",
		        p->pid);
		return buf;
	}
	return NULL;
}

void
tui_open_kill(struct tui *t)
{
	const struct gpu_proc *p = tui_selected_proc(t);
	char buf[256];
	const char *why;

	if (!p) {
		tui_message(t, ROLE_ERROR, "no process selected");
		return;
	}
	why = refusal(t, p, buf, sizeof(buf));
	if (why) {
		tui_message(t, ROLE_ERROR, "%s", why);
		return;
	}
	t->kill_pid = p->pid;
	t->kill_start_ticks = p->start_ticks;
	str_copy(t->kill_name, sizeof(t->kill_name), p->name ? p->name : pv_command(p));
	str_copy(t->kill_user, sizeof(t->kill_user), p->user ? p->user : "-");
	t->menu_sel = 0;
	t->dialog = DLG_SIGNAL;
	t->dirty = true;
}

static void
send_signal(struct tui *t)
{
	uint64_t start = 0;
	const char *name = sig_name(t->kill_sig);

	/* the pid must still be the process that was chosen, not a new one that got its number */
	if (!procinfo_read_stat(t->proc_root, t->kill_pid, &t->sb, NULL, &start)) {
		tui_message(t, ROLE_ERROR, "process %u has exited: no signal sent", t->kill_pid);
		return;
	}
	if (start != t->kill_start_ticks) {
		tui_message(
		        t, ROLE_ERROR,
		        "process %u has exited and its pid is another process's now: no signal sent",
		        t->kill_pid);
		return;
	}
	if (kill((pid_t)t->kill_pid, t->kill_sig) < 0) {
		int e = errno;

		if (e == ESRCH)
			tui_message(t, ROLE_ERROR, "process %u has exited: no signal sent (ESRCH)",
			            t->kill_pid);
		else if (e == EPERM)
			tui_message(
			        t, ROLE_ERROR,
			        "not permitted to signal process %u of %s (EPERM): only root may signal another user's process",
			        t->kill_pid, t->kill_user);
		else
			tui_message(t, ROLE_ERROR, "cannot signal process %u: %s", t->kill_pid,
			            strerror(e));
		return;
	}
	tui_message(t, ROLE_LOW, "sent SIG%s to process %u (%s)", name, t->kill_pid, t->kill_name);
	/* show the outcome soon rather than at the next sample */
	if (!t->replay)
		feed_wake(t->feed);
}

/* --- menus ------------------------------------------------------------------------- */

static void
users_clear(struct tui *t)
{
	for (size_t i = 0; i < t->nr_users; i++)
		free(t->users[i]);
	t->nr_users = 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
tui_open_user(struct tui *t)
{
	users_clear(t);
	ALLOC_GROW(t->users, 1, t->alloc_users);
	t->users[t->nr_users++] = xstrdup("(every user)");
	for (size_t i = 0; t->have_snap && i < t->snap.nr_proc; i++) {
		const char *u = t->snap.proc[i].user;
		bool seen = false;

		if (!u)
			continue;
		for (size_t k = 1; k < t->nr_users && !seen; k++)
			seen = !strcmp(t->users[k], u);
		if (seen || t->nr_users >= 200)
			continue;
		ALLOC_GROW(t->users, t->nr_users + 1, t->alloc_users);
		t->users[t->nr_users++] = xstrdup(u);
	}
	qsort(t->users + 1, t->nr_users - 1, sizeof(*t->users), cmp_str);
	t->menu_sel = 0;
	for (size_t k = 1; k < t->nr_users; k++)
		if (!strcmp(t->users[k], t->pv.user))
			t->menu_sel = (int)k;
	t->dialog = DLG_USER;
	t->dirty = true;
}

void
tui_open_sort(struct tui *t)
{
	t->menu_sel = (int)t->pv.sort;
	t->dialog = DLG_SORT;
	t->dirty = true;
}

void
tui_open_filter(struct tui *t)
{
	str_copy(t->edit, sizeof(t->edit), t->pv.filter);
	t->dialog = DLG_FILTER;
	t->dirty = true;
}

static int
menu_count(const struct tui *t)
{
	switch (t->dialog) {
	case DLG_SORT:
		return PCOL__COUNT;
	case DLG_USER:
		return (int)t->nr_users;
	case DLG_SIGNAL:
		return (int)ARRAY_SIZE(sigs);
	default:
		return 0;
	}
}

static void
menu_item(const struct tui *t, int i, char *buf, size_t size)
{
	switch (t->dialog) {
	case DLG_SORT:
		snprintf(buf, size, "%s", pcol_info((enum pcol)i)->title);
		break;
	case DLG_USER:
		snprintf(buf, size, "%s", t->users[i]);
		break;
	case DLG_SIGNAL:
		snprintf(buf, size, "%2d SIG%-5s %s", sigs[i].sig, sigs[i].name, sigs[i].what);
		break;
	default:
		buf[0] = '\0';
	}
}

static void
draw_menu(struct tui *t)
{
	int n = menu_count(t), h, w = 30, y, x, top = 0, rows;
	char title[128], buf[160];

	if (t->dialog == DLG_SIGNAL) {
		snprintf(title, sizeof(title), "Signal for %u %s", t->kill_pid, t->kill_name);
		w = 56;
	} else if (t->dialog == DLG_SORT) {
		snprintf(title, sizeof(title), "Sort by");
	} else {
		snprintf(title, sizeof(title), "Show the processes of");
	}
	if (w > COLS - 2)
		w = COLS - 2;
	h = n + 3;
	if (h > LINES - 2)
		h = LINES - 2;
	rows = h - 3;
	if (t->menu_sel >= rows)
		top = t->menu_sel - rows + 1;
	y = (LINES - h) / 2;
	x = (COLS - w) / 2;
	tui_box(t, y, x, h, w, title);
	for (int r = 0; r < rows && top + r < n; r++) {
		menu_item(t, top + r, buf, sizeof(buf));
		tui_put(t, y + 1 + r, x + 1, w - 2,
		        top + r == t->menu_sel ? ROLE_CURSOR : ROLE_NORMAL, buf);
	}
	tui_put(t, y + h - 2, x + 1, w - 2, ROLE_DIM, " Enter: choose  Esc: cancel");
	t->geom.menu_y = y + 1;
	t->geom.menu_top = top;
	t->geom.menu_x = x;
	t->geom.menu_w = w;
	t->geom.menu_h = rows;
}

static void
draw_confirm(struct tui *t)
{
	int w = 64, h = 5, y, x;
	char buf[200];

	if (w > COLS - 2)
		w = COLS - 2;
	y = (LINES - h) / 2;
	x = (COLS - w) / 2;
	tui_box(t, y, x, h, w, "Send the signal?");
	snprintf(buf, sizeof(buf), "Send SIG%s to process %u %s of user %s?", sig_name(t->kill_sig),
	         t->kill_pid, t->kill_name, t->kill_user);
	tui_put(t, y + 1, x + 2, w - 4, ROLE_NORMAL, buf);
	tui_put(t, y + 3, x + 2, w - 4, ROLE_LABEL, "y: yes, send it    n or Esc: no");
}

static void
draw_filter(struct tui *t)
{
	int y = LINES - 1, x;

	tui_fill(t, y, 0, COLS, ROLE_NORMAL);
	x = tui_puts(t, y, 0, COLS, ROLE_KEYLABEL, "Filter:");
	x += tui_puts(t, y, x + 1, COLS - x - 1, ROLE_NORMAL, t->edit) + 1;
	tui_puts(t, y, x, 1, ROLE_CURSOR, " ");
	if (x + 40 < COLS)
		tui_puts(t, y, x + 3, COLS - x - 3, ROLE_DIM, "Enter: keep  Esc: clear");
}

void
tui_draw_dialog(struct tui *t)
{
	switch (t->dialog) {
	case DLG_FILTER:
		draw_filter(t);
		break;
	case DLG_SORT:
	case DLG_USER:
	case DLG_SIGNAL:
		draw_menu(t);
		break;
	case DLG_CONFIRM:
		draw_confirm(t);
		break;
	case DLG_FINDING:
		draw_finding(t);
		break;
	case DLG_NONE:
		break;
	}
}

static void
choose(struct tui *t)
{
	switch (t->dialog) {
	case DLG_SORT:
		t->dialog = DLG_NONE;
		t->pv.sort = (enum pcol)t->menu_sel;
		t->pv.invert = false;
		tui_procs_rebuild(t);
		break;
	case DLG_USER:
		t->dialog = DLG_NONE;
		if (t->menu_sel <= 0 || (size_t)t->menu_sel >= t->nr_users)
			t->pv.user[0] = '\0';
		else
			str_copy(t->pv.user, sizeof(t->pv.user), t->users[t->menu_sel]);
		users_clear(t);
		tui_procs_rebuild(t);
		break;
	case DLG_SIGNAL:
		t->kill_sig = sigs[t->menu_sel].sig;
		t->dialog = DLG_CONFIRM;
		break;
	default:
		break;
	}
}

static void
filter_key(struct tui *t, int ch)
{
	size_t n = strlen(t->edit);

	switch (ch) {
	case 27:
		t->edit[0] = '\0';
		t->dialog = DLG_NONE;
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		t->dialog = DLG_NONE;
		break;
	case KEY_BACKSPACE:
	case 127:
	case 8:
		/* drop a whole UTF-8 character */
		while (n > 0 && ((unsigned char)t->edit[n - 1] & 0xC0) == 0x80)
			n--;
		if (n > 0)
			n--;
		t->edit[n] = '\0';
		break;
	case 21: /* Ctrl-U */
		t->edit[0] = '\0';
		break;
	default:
		if (ch >= 32 && ch < 256 && ch != 127 && n + 1 < sizeof(t->edit)) {
			t->edit[n] = (char)ch;
			t->edit[n + 1] = '\0';
		}
		break;
	}
	/* the list narrows as the text is typed */
	str_copy(t->pv.filter, sizeof(t->pv.filter), t->edit);
	tui_procs_rebuild(t);
}

static void
menu_mouse(struct tui *t)
{
	MEVENT ev;
	int i;

	if (getmouse(&ev) != OK)
		return;
	if (ev.bstate & BUTTON4_PRESSED) {
		t->menu_sel--;
		return;
	}
	if (!(ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON1_RELEASED)))
		return;
	i = ev.y - t->geom.menu_y;
	if (i < 0 || i >= t->geom.menu_h || t->geom.menu_top + i >= menu_count(t) ||
	    ev.x <= t->geom.menu_x || ev.x >= t->geom.menu_x + t->geom.menu_w - 1) {
		if (t->dialog == DLG_USER)
			users_clear(t);
		t->dialog = DLG_NONE;
		return;
	}
	t->menu_sel = t->geom.menu_top + i;
	choose(t);
}

void
tui_dialog_key(struct tui *t, int ch)
{
	int n = menu_count(t);

	t->dirty = true;
	if (t->dialog == DLG_FILTER) {
		filter_key(t, ch);
		return;
	}
	if (t->dialog == DLG_FINDING) {
		finding_key(t, ch);
		return;
	}
	if (t->dialog == DLG_CONFIRM) {
		/* a question that is not on the screen (too small a terminal) is not answered */
		if ((ch == 'y' || ch == 'Y') && !tui_too_small()) {
			t->dialog = DLG_NONE;
			send_signal(t);
		} else if (ch == 'n' || ch == 'N' || ch == 27 || ch == 'q' || ch == '\n' ||
		           ch == '\r' || ch == KEY_ENTER) {
			t->dialog = DLG_NONE;
			tui_message(t, ROLE_NORMAL, "no signal sent");
		}
		return;
	}
	switch (ch) {
	case 27:
	case 'q':
	case KEY_F(10):
		if (t->dialog == DLG_USER)
			users_clear(t);
		t->dialog = DLG_NONE;
		return;
	case KEY_UP:
	case 'k':
		t->menu_sel--;
		break;
	case KEY_DOWN:
	case 'j':
		t->menu_sel++;
		break;
	case KEY_PPAGE:
	case KEY_HOME:
		t->menu_sel = 0;
		break;
	case KEY_NPAGE:
	case KEY_END:
		t->menu_sel = n - 1;
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		if (t->menu_sel >= 0 && t->menu_sel < n)
			choose(t);
		return;
	case KEY_MOUSE:
		menu_mouse(t);
		break;
	default:
		break;
	}
	if (t->menu_sel < 0)
		t->menu_sel = 0;
	if (t->menu_sel >= n)
		t->menu_sel = n - 1;
}

void
tui_dialogs_release(struct tui *t)
{
	users_clear(t);
	free(t->users);
	t->users = NULL;
	t->alloc_users = 0;
}
