/*
 * top's main loop. The feed runs on a thread of its own and hands each
 * snapshot over under a mutex, then writes a byte to a pipe; the UI thread
 * sleeps in poll(2) on the terminal and that pipe, so it wakes for a key or
 * for new data and for nothing else, and never waits for a GPU. Signals
 * (SIGINT, SIGTERM, SIGHUP) write to the same pipe, so every way out goes
 * through endwin().
 */
#include "tui/tui.h"

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tui/tui_impl.h"
#include "tui/topconf.h"
#include "doctor/live.h"
#include "backend/feed.h"
#include "core/config.h"
#include "core/err.h"
#include "core/fmt.h"
#include "core/xalloc.h"

/* the signal handler's only way to the loop */
static volatile sig_atomic_t got_signal;
static int signal_wake_fd = -1;

static void
on_signal(int sig)
{
	int saved = errno;

	got_signal = sig;
	if (signal_wake_fd >= 0) {
		ssize_t n = write(signal_wake_fd, "s", 1);

		(void)n;
	}
	errno = saved;
}

static void
wake_ui(struct tui *t)
{
	ssize_t n = write(t->wake_wr, "x", 1);

	(void)n; /* a full pipe has a wake-up in it already */
}

/* --- the feed thread ----------------------------------------------------------------- */

static void *
feed_main(void *arg)
{
	struct tui *t = arg;

	for (;;) {
		struct gpu_snapshot s;
		struct err err = ERR_INIT;
		bool stop;
		int rc;

		pthread_mutex_lock(&t->mu);
		stop = t->stop;
		pthread_mutex_unlock(&t->mu);
		if (stop)
			break;
		gpu_snapshot_init(&s);
		rc = feed_next(t->feed, &s, &err);
		pthread_mutex_lock(&t->mu);
		if (rc == 0 && !t->stop) {
			/* the UI takes the newest; one it did not get to is dropped */
			if (t->have_pending)
				gpu_snapshot_release(&t->pending);
			t->pending = s;
			t->have_pending = true;
		} else {
			gpu_snapshot_release(&s);
			if (rc == FEED_END) {
				t->ended = true;
			} else if (rc < 0) {
				str_copy(t->feed_err, sizeof(t->feed_err),
				         err.msg[0] ? err.msg : status_str(rc));
				t->feed_errors++;
				/* a recording that cannot be read further will not get better */
				if (t->replay)
					t->ended = true;
			}
		}
		stop = t->stop || t->ended;
		pthread_mutex_unlock(&t->mu);
		wake_ui(t);
		if (stop)
			break;
	}
	return NULL;
}

static int
start_feed(struct tui *t)
{
	sigset_t block, old;
	int rc;

	/* signals are the UI thread's: its poll() must be the call they interrupt */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGWINCH);
	sigaddset(&block, SIGTSTP);
	sigaddset(&block, SIGCONT);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	rc = pthread_create(&t->thread, NULL, feed_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	t->thread_started = rc == 0;
	return rc;
}

static void
stop_feed(struct tui *t)
{
	if (!t->thread_started)
		return;
	pthread_mutex_lock(&t->mu);
	t->stop = true;
	pthread_mutex_unlock(&t->mu);
	feed_wake(t->feed);
	/* at most the collector's deadline, when a GPU hangs mid-sample */
	pthread_join(t->thread, NULL);
	t->thread_started = false;
}

/* --- taking snapshots ------------------------------------------------------------------ */

static void
show(struct tui *t, struct gpu_snapshot *s)
{
	if (t->have_snap)
		gpu_snapshot_release(&t->snap);
	t->snap = *s;
	t->have_snap = true;
	gpu_snapshot_init(s);
	if (t->sel_gpu >= t->snap.nr_dev)
		t->sel_gpu = t->snap.nr_dev ? t->snap.nr_dev - 1 : 0;
	t->hist_upto = t->hist.n;
	tui_procs_rebuild(t);
	/* a note (why a backend found nothing, ...) once, when it first appears */
	if (t->snap.nr_note && strcmp(t->snap.note[0], t->last_note)) {
		str_copy(t->last_note, sizeof(t->last_note), t->snap.note[0]);
		tui_message(t, ROLE_MID, "note: %s", t->snap.note[0]);
	}
	t->dirty = true;
}

/* doctor's health and workload checks over the last samples, at most once a second */
static void
check(struct tui *t, const struct gpu_snapshot *s)
{
	char code[sizeof(t->findings.v[0].code)] = "";
	int gpu = -1;

	dr_live_push(t->live, s);
	t->live->interval = t->interval;
	/* a paused display keeps its findings too; they catch up with the next sample */
	if (t->paused || !dr_live_update(t->live))
		return;
	if (t->find_sel < t->findings.nr) {
		str_copy(code, sizeof(code), t->findings.v[t->find_sel].code);
		gpu = t->findings.v[t->find_sel].gpu;
	}
	tui_findings_from_report(&t->findings, &t->live->report);
	/* the dialog stays on the finding it shows, wherever the list puts it now */
	for (size_t i = 0; code[0] && i < t->findings.nr; i++)
		if (!strcmp(t->findings.v[i].code, code) && t->findings.v[i].gpu == gpu) {
			t->find_sel = i;
			break;
		}
	if (t->find_sel >= t->findings.nr)
		t->find_sel = t->findings.nr ? t->findings.nr - 1 : 0;
	t->dirty = true;
}

static void
take(struct tui *t)
{
	struct gpu_snapshot s;
	bool got = false, ended;
	unsigned long errors;
	char msg[256];

	pthread_mutex_lock(&t->mu);
	if (t->have_pending) {
		s = t->pending;
		gpu_snapshot_init(&t->pending);
		t->have_pending = false;
		got = true;
	}
	ended = t->ended;
	errors = t->feed_errors;
	str_copy(msg, sizeof(msg), t->feed_err);
	pthread_mutex_unlock(&t->mu);

	if (got) {
		history_push(&t->hist, &s);
		check(t, &s);
		t->frames++;
		if (t->paused) {
			if (t->have_latest)
				gpu_snapshot_release(&t->latest);
			t->latest = s;
			t->have_latest = true;
		} else {
			show(t, &s);
		}
	}
	if (errors && msg[0]) {
		tui_message(t, ROLE_ERROR, "sampling failed: %s", msg);
		pthread_mutex_lock(&t->mu);
		t->feed_err[0] = '\0';
		pthread_mutex_unlock(&t->mu);
	}
	if (ended && !t->ended_seen) {
		t->ended_seen = true;
		if (t->replay)
			tui_message(t, ROLE_LABEL,
			            "end of recording: the last sample stays on screen; q quits");
		t->dirty = true;
	}
}

/* --- keys ------------------------------------------------------------------------------- */

static const double intervals[] = { 0.1, 0.2, 0.5, 1, 2, 3, 5, 10, 30, 60 };

void
tui_change_interval(struct tui *t, int dir)
{
	double next = t->interval;

	if (t->replay) {
		tui_message(t, ROLE_NORMAL, "a replay keeps the pace of its recording");
		return;
	}
	if (dir > 0) {
		for (size_t i = 0; i < ARRAY_SIZE(intervals); i++)
			if (intervals[i] > t->interval + 1e-9) {
				next = intervals[i];
				break;
			}
	} else {
		for (size_t i = ARRAY_SIZE(intervals); i-- > 0;)
			if (intervals[i] < t->interval - 1e-9) {
				next = intervals[i];
				break;
			}
	}
	t->interval = next;
	feed_set_interval(t->feed, next);
	tui_message(t, ROLE_NORMAL, "a sample every %g s", next);
}

static void
toggle_pause(struct tui *t)
{
	t->paused = !t->paused;
	if (!t->paused && t->have_latest) {
		show(t, &t->latest);
		t->have_latest = false;
	}
	if (!t->paused)
		t->hist_upto = t->hist.n;
	t->dirty = true;
}

static bool
procs_off(struct tui *t)
{
	if (!t->opt->procs) {
		tui_message(t, ROLE_NORMAL, "processes are off (--no-processes)");
		return true;
	}
	if (!t->procs_pane) {
		tui_message(t, ROLE_NORMAL, "the process table is hidden (F2 shows it)");
		return true;
	}
	return false;
}

static void
set_sort(struct tui *t, enum pcol c)
{
	if (t->pv.sort == c) {
		t->pv.invert = !t->pv.invert;
	} else {
		t->pv.sort = c;
		t->pv.invert = false;
	}
	tui_procs_rebuild(t);
	t->dirty = true;
}

static bool
gpu_exists(const struct tui *t, long index)
{
	for (size_t i = 0; t->have_snap && i < t->snap.nr_dev; i++)
		if ((long)t->snap.dev[i].index == index)
			return true;
	return false;
}

/* A digit shows one GPU's processes; a second digit within a second makes 10 and up. */
static void
gpu_digit(struct tui *t, int digit)
{
	double now = tui_now();
	long v = digit;

	if (now - t->digit_time < 1.0 && t->digit_val > 0 &&
	    gpu_exists(t, t->digit_val * 10 + digit))
		v = t->digit_val * 10 + digit;
	t->digit_time = now;
	t->digit_val = v;
	if (!gpu_exists(t, v)) {
		tui_message(t, ROLE_ERROR, "there is no GPU %ld", v);
		return;
	}
	t->pv.gpu = v;
	tui_procs_rebuild(t);
	t->dirty = true;
}

static void
gpu_cycle(struct tui *t)
{
	size_t n = t->have_snap ? t->snap.nr_dev : 0, i = 0;

	if (!n)
		return;
	if (t->pv.gpu >= 0) {
		while (i < n && (long)t->snap.dev[i].index != t->pv.gpu)
			i++;
		i++;
	}
	t->pv.gpu = i < n ? (long)t->snap.dev[i].index : -1;
	tui_procs_rebuild(t);
	t->dirty = true;
}

static void
clear_filters(struct tui *t)
{
	if (!t->pv.filter[0] && !t->pv.user[0] && t->pv.gpu < 0)
		return;
	t->pv.filter[0] = '\0';
	t->pv.user[0] = '\0';
	t->pv.gpu = -1;
	tui_procs_rebuild(t);
	tui_message(t, ROLE_NORMAL, "filters cleared");
}

static void
open_detail(struct tui *t)
{
	if (!t->have_snap || !t->snap.nr_dev)
		return;
	t->view = VIEW_DETAIL;
	t->detail_scroll = 0;
	t->dirty = true;
}

static void
move_cursor(struct tui *t, long delta)
{
	if (t->focus == FOCUS_GPUS) {
		long g = (long)t->sel_gpu + delta, n = t->have_snap ? (long)t->snap.nr_dev : 0;

		if (g >= n)
			g = n - 1;
		if (g < 0)
			g = 0;
		t->sel_gpu = (size_t)g;
		t->dirty = true;
		return;
	}
	tui_procs_move(t, delta);
}

static void
mouse(struct tui *t)
{
	MEVENT ev;
	const struct tui_geom *g = &t->geom;

	if (getmouse(&ev) != OK)
		return;
	t->dirty = true;
	if (ev.bstate & BUTTON4_PRESSED) {
		move_cursor(t, -3);
		return;
	}
#ifdef BUTTON5_PRESSED
	if (ev.bstate & BUTTON5_PRESSED) {
		move_cursor(t, 3);
		return;
	}
#endif
	if (!(ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON1_DOUBLE_CLICKED)))
		return;
	if (ev.y == g->proc_header_y && g->nr_cols) {
		for (int i = 0; i < g->nr_cols; i++)
			if (ev.x >= g->col_x[i] && ev.x < g->col_x[i + 1])
				set_sort(t, g->col_id[i]);
		return;
	}
	if (g->find_rows && ev.y >= g->find_y && ev.y < g->find_y + g->find_rows &&
	    (size_t)(ev.y - g->find_y) < t->findings.nr) {
		t->find_sel = (size_t)(ev.y - g->find_y);
		tui_open_finding(t);
		return;
	}
	if (g->proc_y >= 0 && ev.y >= g->proc_y && ev.y < g->proc_y + g->proc_rows) {
		t->focus = FOCUS_PROCS;
		if (t->top + (size_t)(ev.y - g->proc_y) < t->pv.nr)
			tui_procs_select_row(t, t->top + (size_t)(ev.y - g->proc_y));
		return;
	}
	if (g->gpu_y >= 0 && ev.y >= g->gpu_y && ev.y < g->gpu_y + g->gpu_rows &&
	    g->gpu_lines_per) {
		size_t i = g->gpu_first + (size_t)((ev.y - g->gpu_y) / g->gpu_lines_per);

		if (t->have_snap && i < t->snap.nr_dev) {
			t->sel_gpu = i;
			t->focus = FOCUS_GPUS;
			if (ev.bstate & BUTTON1_DOUBLE_CLICKED)
				open_detail(t);
		}
	}
}

static void
cycle_layout(struct tui *t)
{
	static const char *const names[] = { "auto", "full", "compact" };

	t->layout = t->layout == TUI_LAYOUT_AUTO   ? TUI_LAYOUT_FULL
	            : t->layout == TUI_LAYOUT_FULL ? TUI_LAYOUT_COMPACT
	                                           : TUI_LAYOUT_AUTO;
	tui_message(t, ROLE_NORMAL, "layout: %s", names[t->layout]);
}

/* Keys of the process list. False when ch is not one. */
static bool
procs_key(struct tui *t, int ch)
{
	switch (ch) {
	case '/':
	case KEY_F(4):
	case 'u':
	case 't':
	case KEY_F(5):
	case KEY_F(6):
	case '<':
	case ',':
	case '>':
	case '.':
	case 'I':
	case 'M':
	case 'P':
	case 'T':
	case 'N':
	case 'k':
	case KEY_F(9):
	case 'g':
	case 27:
		break;
	default:
		if (ch >= '0' && ch <= '9')
			break;
		return false;
	}
	if (procs_off(t))
		return true;
	switch (ch) {
	case '/':
	case KEY_F(4):
		tui_open_filter(t);
		break;
	case 'u':
		tui_open_user(t);
		break;
	case 't':
	case KEY_F(5):
		if (t->replay && !t->pv.tree) {
			tui_message(
			        t, ROLE_NORMAL,
			        "a recording holds no parent pids: the tree needs live processes");
			break;
		}
		t->pv.tree = !t->pv.tree;
		tui_procs_rebuild(t);
		break;
	case KEY_F(6):
		tui_open_sort(t);
		break;
	case '<':
	case ',':
		t->pv.sort = (enum pcol)((t->pv.sort + PCOL__COUNT - 1) % PCOL__COUNT);
		t->pv.invert = false;
		tui_procs_rebuild(t);
		break;
	case '>':
	case '.':
		t->pv.sort = (enum pcol)((t->pv.sort + 1) % PCOL__COUNT);
		t->pv.invert = false;
		tui_procs_rebuild(t);
		break;
	case 'I':
		t->pv.invert = !t->pv.invert;
		tui_procs_rebuild(t);
		break;
	case 'M':
		set_sort(t, PCOL_GPUMEM);
		break;
	case 'P':
		set_sort(t, PCOL_CPU);
		break;
	case 'T':
		set_sort(t, PCOL_TIME);
		break;
	case 'N':
		set_sort(t, PCOL_PID);
		break;
	case 'k':
	case KEY_F(9):
		tui_open_kill(t);
		break;
	case 'g':
		gpu_cycle(t);
		break;
	case 27:
		clear_filters(t);
		break;
	default:
		gpu_digit(t, ch - '0');
		break;
	}
	return true;
}

/* Keys of the main view. False when ch is not one. */
static bool
main_key(struct tui *t, int ch)
{
	switch (ch) {
	case '?':
	case 'h':
	case KEY_F(1):
		t->view = VIEW_HELP;
		t->help_scroll = 0;
		break;
	case 'd':
		open_detail(t);
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		if (t->focus == FOCUS_PROCS && tui_selected_proc(t))
			t->sel_gpu = tui_selected_proc(t)->dev;
		open_detail(t);
		break;
	case 'c':
	case KEY_F(3):
		t->metric = (enum hist_metric)((t->metric + 1) % HM__COUNT);
		break;
	case 'C':
		t->metric = (enum hist_metric)((t->metric + HM__COUNT - 1) % HM__COUNT);
		break;
	case 'm':
		cycle_layout(t);
		break;
	case 'f':
		t->findings_pane = !t->findings_pane;
		break;
	case 'F':
		t->find_sel = 0; /* the worst first */
		tui_open_finding(t);
		break;
	case ' ':
		toggle_pause(t);
		break;
	case '+':
	case '=':
		tui_change_interval(t, 1);
		break;
	case '-':
	case '_':
		tui_change_interval(t, -1);
		break;
	case 'r':
	case 12: /* Ctrl-L */
		clearok(curscr, TRUE);
		if (!t->replay)
			feed_wake(t->feed);
		break;
	case '\t':
		t->focus = t->focus == FOCUS_PROCS ? FOCUS_GPUS : FOCUS_PROCS;
		break;
	case KEY_UP:
		move_cursor(t, -1);
		break;
	case KEY_DOWN:
		move_cursor(t, 1);
		break;
	case KEY_PPAGE:
		move_cursor(t, -(long)(t->page > 1 ? t->page - 1 : 1));
		break;
	case KEY_NPAGE:
		move_cursor(t, t->page > 1 ? t->page - 1 : 1);
		break;
	case KEY_HOME:
		move_cursor(t, -(long)INT_MAX);
		break;
	case KEY_END:
		move_cursor(t, INT_MAX);
		break;
	case KEY_MOUSE:
		mouse(t);
		break;
	case KEY_RESIZE:
		break;
	default:
		if (!procs_key(t, ch))
			return false;
		break;
	}
	t->dirty = true;
	return true;
}

/* Whether ch works in the help and detail views too. */
static bool
global_key(int ch)
{
	return ch == ' ' || ch == '+' || ch == '=' || ch == '-' || ch == '_' || ch == 'r' ||
	       ch == 12;
}

/* One key; false when it asks to quit. */
static bool
handle_key(struct tui *t, int ch)
{
	if (ch == KEY_RESIZE) {
		t->dirty = true;
		return true;
	}
	if (t->view == VIEW_SETUP && t->dialog == DLG_NONE) {
		/* F10 and q leave the setup screen (htop's "Done"), they do not quit */
		tui_setup_key(t, ch);
		return true;
	}
	if (ch == KEY_F(10) || (ch == 'q' && t->view == VIEW_MAIN && t->dialog == DLG_NONE))
		return false;
	if (t->dialog != DLG_NONE) {
		tui_dialog_key(t, ch);
		return true;
	}
	if (ch == KEY_F(2)) {
		tui_open_setup(t); /* from every view, as htop's F2 */
		return true;
	}
	if (t->view == VIEW_HELP && tui_help_key(t, ch))
		return true;
	if (t->view == VIEW_DETAIL && tui_detail_key(t, ch))
		return true;
	if (t->view != VIEW_MAIN && !global_key(ch))
		return true;
	main_key(t, ch);
	return true;
}

/* --- the terminal ---------------------------------------------------------------------- */

static void
curses_setup(struct tui *t)
{
	cbreak();
	noecho();
	nonl();
	intrflush(stdscr, FALSE);
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	leaveok(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	t->color = has_colors() && t->opt->color != TUI_COLOR_NEVER;
	tui_attrs_init(t);
	t->mouse = mousemask(BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED | BUTTON4_PRESSED
#ifdef BUTTON5_PRESSED
	                             | BUTTON5_PRESSED
#endif
	                     ,
	                     NULL) != 0;
}

/* What top.conf says, but the interval and layout: the caller chose them (options win). */
static void
from_conf(struct tui *t, const struct top_conf *c)
{
	if ((unsigned)c->sort < PCOL__COUNT)
		t->pv.sort = (enum pcol)c->sort;
	t->pv.invert = c->sort_invert;
	/* a recording holds no parent pids: no tree (and the file's stays as it is) */
	t->pv.tree = c->tree && !t->replay;
	if ((unsigned)c->chart < HM__COUNT)
		t->metric = (enum hist_metric)c->chart;
	t->gpus_pane = c->show_gpus;
	t->charts_pane = c->show_charts;
	t->findings_pane = c->show_findings;
	t->procs_pane = c->show_processes;
	t->detail_all = c->detail_all;
}

/* What the settings are now, into top.conf's. */
static void
to_conf(const struct tui *t, struct top_conf *c)
{
	c->sort = (int)t->pv.sort;
	c->sort_invert = t->pv.invert;
	if (!t->replay) {
		c->tree = t->pv.tree;
		c->interval = t->interval;
	}
	c->chart = (int)t->metric;
	c->layout = (int)t->layout;
	c->show_gpus = t->gpus_pane;
	c->show_charts = t->charts_pane;
	c->show_findings = t->findings_pane;
	c->show_processes = t->procs_pane;
	c->detail_all = t->detail_all;
}

static void
init(struct tui *t, struct feed *feed, const struct tui_options *opt)
{
	char real[PATH_MAX];
	const char *root = opt->cfg && opt->cfg->proc_root ? opt->cfg->proc_root : "/proc";

	memset(t, 0, sizeof(*t));
	t->opt = opt;
	t->feed = feed;
	t->replay = feed_is_replay(feed);
	str_copy(t->proc_root, sizeof(t->proc_root), root);
	t->proc_is_live = realpath(root, real) && !strcmp(real, "/proc");
	pthread_mutex_init(&t->mu, NULL);
	gpu_snapshot_init(&t->pending);
	gpu_snapshot_init(&t->snap);
	gpu_snapshot_init(&t->latest);
	history_init(&t->hist);
	pv_init(&t->pv);
	tui_findings_init(&t->findings);
	t->live = xmalloc(sizeof(*t->live));
	dr_live_init(t->live, opt->interval > 0 ? opt->interval : 1, t->replay);
	strbuf_init(&t->sb, 0);
	t->layout = opt->layout;
	t->interval = opt->interval > 0 ? opt->interval : 1;
	t->findings_pane = t->gpus_pane = t->charts_pane = t->procs_pane = true;
	if (opt->conf)
		from_conf(t, opt->conf);
	term_locale();
	t->utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	t->wake_rd = t->wake_wr = -1;
	t->dirty = true;
}

static void
release(struct tui *t)
{
	if (t->have_pending)
		gpu_snapshot_release(&t->pending);
	gpu_snapshot_release(&t->snap);
	gpu_snapshot_release(&t->latest);
	history_release(&t->hist);
	pv_release(&t->pv);
	tui_findings_release(&t->findings);
	dr_live_release(t->live);
	free(t->live);
	tui_dialogs_release(t);
	strbuf_release(&t->sb);
	pthread_mutex_destroy(&t->mu);
	if (t->wake_rd >= 0)
		close(t->wake_rd);
	if (t->wake_wr >= 0)
		close(t->wake_wr);
}

/* Milliseconds poll() may sleep: until the message at the bottom expires, else forever. */
static int
sleep_ms(struct tui *t)
{
	double left;

	if (!t->msg[0])
		return -1;
	left = t->msg_until - tui_now();
	if (left <= 0) {
		t->msg[0] = '\0';
		t->dirty = true;
		return 0;
	}
	return (int)(left * 1000) + 20;
}

/*
 * poll_mask: the signal mask while waiting. SIGWINCH is blocked everywhere
 * else, so that it can only arrive in ppoll() and interrupt it: one that
 * came while drawing would only set curses' flag, and the resize would wait
 * for the next key or sample.
 */
static void
loop(struct tui *t, const sigset_t *poll_mask)
{
	for (;;) {
		struct pollfd pfd[2] = { { STDIN_FILENO, POLLIN, 0 }, { t->wake_rd, POLLIN, 0 } };
		int timeout = sleep_ms(t), ch, n;
		struct timespec ts = { timeout / 1000, (long)(timeout % 1000) * 1000000 };

		if (t->dirty) {
			tui_draw(t);
			t->dirty = false;
		}
		if (got_signal)
			return;
		n = ppoll(pfd, 2, timeout < 0 ? NULL : &ts, poll_mask);
		if (n < 0 && errno != EINTR)
			return;
		if (got_signal)
			return;
		if (n > 0 && (pfd[1].revents & POLLIN)) {
			char buf[64];

			while (read(t->wake_rd, buf, sizeof(buf)) > 0)
				;
			take(t);
		}
		if (n > 0 && (pfd[0].revents & (POLLHUP | POLLERR | POLLNVAL)))
			return; /* the terminal went away */
		/* keys, and KEY_RESIZE after SIGWINCH interrupted poll() */
		for (int k = 0; k < 512; k++) {
			ch = getch();
			if (ch == ERR)
				break;
			if (!handle_key(t, ch))
				return;
		}
	}
}

int
tui_run(struct feed *feed, const struct tui_options *opt, struct err *err)
{
	struct sigaction sa, old_int, old_term, old_hup;
	sigset_t winch, old_mask;
	struct tui t;
	SCREEN *screen;
	int fds[2], rc = 0;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return err_set(err, E_USAGE, "top needs a terminal on stdin and stdout");
	/*
	 * One malloc arena: the collector's per-GPU threads, started every sample,
	 * would otherwise each get one of their own (up to 8 per core), 4 MiB of
	 * resident memory for a few KiB of work each (docs/performance.md, top).
	 */
	mallopt(M_ARENA_MAX, 1);
	/*
	 * A snapshot's process array (216 bytes a process) from mmap, given back
	 * whole when the next one replaces it, instead of holes in the heap; and
	 * the heap's free top given back at 128 KiB, not at the dynamic threshold
	 * that large frees raise to 64 MiB.
	 */
	mallopt(M_MMAP_THRESHOLD, 64 * 1024);
	mallopt(M_TRIM_THRESHOLD, 128 * 1024);
	init(&t, feed, opt);
	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) < 0) {
		rc = err_set(err, E_IO, "cannot make a pipe: %s", strerror(errno));
		release(&t);
		return rc;
	}
	t.wake_rd = fds[0];
	t.wake_wr = fds[1];
	screen = newterm(NULL, stdout, stdin);
	if (!screen) {
		const char *term = getenv("TERM");

		rc = err_set(err, E_USAGE, "cannot use the terminal '%s' (is TERM right?)",
		             term ? term : "");
		release(&t);
		return rc;
	}
	set_term(screen);
	{
		/* a terminal that cannot place the cursor ("dumb") cannot show a screen */
		char *cup = tigetstr("cup");

		if (!cup || cup == (char *)-1) {
			const char *term = getenv("TERM");

			endwin();
			delscreen(screen);
			rc = err_set(
			        err, E_USAGE,
			        "the terminal '%s' cannot place the cursor: top needs a full-screen terminal ('gpuscope status' prints one snapshot)",
			        term ? term : "");
			release(&t);
			return rc;
		}
	}
	curses_setup(&t);

	got_signal = 0;
	signal_wake_fd = t.wake_wr;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	sigemptyset(&winch);
	sigaddset(&winch, SIGWINCH);
	pthread_sigmask(SIG_BLOCK, &winch, &old_mask);

	if (start_feed(&t) != 0) {
		rc = err_set(err, E_IO, "cannot start the sampling thread");
	} else {
		loop(&t, &old_mask);
	}

	/* the terminal first: the feed thread may take up to a GPU deadline to notice */
	endwin();
	stop_feed(&t);
	delscreen(screen);
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	signal_wake_fd = -1;
	if (opt->conf)
		to_conf(&t, opt->conf);
	release(&t);
	return rc;
}
