/*
 * Inside top's interface: the state the UI thread keeps, and the functions
 * the files of src/tui/ share; only they include this. Everything here
 * belongs to the UI thread, except the block marked as shared with the feed
 * thread, which is read and written under mu only.
 */
#ifndef GPUSCOPE_TUI_IMPL_H
#define GPUSCOPE_TUI_IMPL_H

#include <curses.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tui/findings.h"
#include "tui/history.h"
#include "tui/procs.h"
#include "tui/tui.h"
#include "core/gpu.h"
#include "core/strbuf.h"

/* What a piece of the screen is; each maps to colours, or to bold/reverse without them. */
enum tui_role {
	ROLE_NORMAL,
	ROLE_TITLE,      /* the title bar */
	ROLE_HEADER,     /* the process table's header */
	ROLE_SORTED,     /* the sort column in that header */
	ROLE_CURSOR,     /* the selected row */
	ROLE_CURSOR_OFF, /* the selected row of the pane without focus */
	ROLE_LABEL,      /* labels of bars and fields */
	ROLE_DIM,
	ROLE_LOW,  /* a bar or value well below its limit */
	ROLE_MID,  /* getting close */
	ROLE_HIGH, /* at or near its limit */
	ROLE_LOST, /* a GPU that is lost or not responding */
	ROLE_CHART,
	ROLE_KEY,      /* a key in the bottom bar ("F1") */
	ROLE_KEYLABEL, /* what it does ("Help") */
	ROLE_BADGE,    /* SIMULATED, REPLAY, PAUSED */
	ROLE_ERROR,    /* a message about something that failed */
	ROLE__COUNT
};

enum tui_view {
	VIEW_MAIN,
	VIEW_DETAIL,
	VIEW_HELP,
	VIEW_SETUP, /* F2: the settings, as htop's setup screen */
};

enum tui_dialog {
	DLG_NONE,
	DLG_FILTER,  /* typing a filter in the bottom line */
	DLG_SORT,    /* choosing the sort column */
	DLG_USER,    /* choosing a user */
	DLG_SIGNAL,  /* choosing a signal */
	DLG_CONFIRM, /* sending it: yes or no */
	DLG_FINDING, /* one finding's full text */
};

enum tui_focus {
	FOCUS_PROCS,
	FOCUS_GPUS,
};

/* Where the last frame put things, for the mouse. */
struct dr_live;

struct tui_geom {
	int gpu_y, gpu_rows, gpu_lines_per; /* GPU lines: first row, rows, rows per GPU */
	size_t gpu_first;                   /* the GPU at gpu_y */
	int proc_header_y, proc_y, proc_rows;
	int find_y, find_rows;      /* the findings pane's list: first row (the worst), rows */
	int col_x[PCOL__COUNT + 1]; /* start of each shown column, in order */
	enum pcol col_id[PCOL__COUNT];
	int nr_cols;
	int menu_y, menu_x, menu_w, menu_h; /* an open menu: first item's row, box, rows */
	int menu_top;                       /* the item on menu_y */
};

struct tui {
	const struct tui_options *opt;
	struct feed *feed;
	bool replay;
	char proc_root[4096];
	bool proc_is_live; /* proc_root is this machine's /proc: signals may be sent */

	/* shared with the feed thread, under mu */
	pthread_mutex_t mu;
	struct gpu_snapshot pending;
	bool have_pending;
	bool ended; /* the feed has no more samples */
	bool stop;  /* the UI is closing: the feed thread should return */
	char feed_err[256];
	unsigned long feed_errors;
	int wake_rd, wake_wr; /* the feed thread (and signals) write a byte to wake the UI */
	pthread_t thread;
	bool thread_started;

	/* the data on screen */
	struct gpu_snapshot snap;   /* shown */
	struct gpu_snapshot latest; /* newer, while paused */
	bool have_snap, have_latest;
	bool ended_seen;
	unsigned long frames;
	struct history hist;
	unsigned long hist_upto; /* samples the charts show (frozen while paused) */
	struct proc_view pv;
	struct tui_findings findings;
	struct dr_live *live; /* doctor's samples and findings (doctor/live.h) */

	/* the interface */
	bool color, utf8, mouse;
	attr_t attr[ROLE__COUNT];
	enum tui_view view;
	enum tui_dialog dialog;
	enum tui_layout layout;
	enum tui_focus focus;
	enum hist_metric metric;
	bool paused;
	bool findings_pane; /* show the findings pane */
	bool gpus_pane, charts_pane, procs_pane;
	double interval;

	size_t sel_gpu;     /* index into snap.dev */
	size_t cursor, top; /* process list: selected row, first row shown */
	uint32_t sel_pid;   /* the selected process, kept across frames */
	unsigned sel_dev_index;
	bool has_sel;
	int page; /* process rows the last frame had room for */

	int detail_scroll;
	int detail_lines; /* lines the detail view had last time */
	bool detail_all;  /* detail view: unknown fields too */
	int help_scroll;
	int setup_sel;            /* the setting the setup screen's cursor is on */
	enum tui_view setup_back; /* the view Esc goes back to from it */
	int menu_sel;
	size_t find_sel; /* the finding the finding dialog shows */
	int find_scroll;
	char **users; /* the user menu's entries, taken when it opened */
	size_t nr_users, alloc_users;
	char edit[128]; /* the filter being typed */

	/* the process a signal is for */
	int kill_sig;
	uint32_t kill_pid;
	uint64_t kill_start_ticks;
	char kill_name[64];
	char kill_user[64];

	char last_note[160]; /* the snapshot's note last shown */
	char msg[256];       /* one line at the bottom, until msg_until */
	enum tui_role msg_role;
	double msg_until;

	double digit_time; /* a GPU digit typed at this time may get a second one */
	long digit_val;

	struct tui_geom geom;
	bool dirty;
	struct strbuf sb; /* scratch for one cell */
};

/* draw.c */
void tui_attrs_init(struct tui *t);
/* Columns s takes on screen (wide characters count two, control characters one). */
int tui_width(const struct tui *t, const char *s);
/* Append s to out as a cell of w columns, cut or padded (on the left when right). */
void tui_cell(const struct tui *t, struct strbuf *out, const char *s, int w, bool right);
/* s at (y, x), cut or padded to exactly w columns, control characters as '?'. */
void tui_put(struct tui *t, int y, int x, int w, enum tui_role role, const char *s);
/* s at (y, x) in at most maxw columns, not padded; returns the columns used. */
int tui_puts(struct tui *t, int y, int x, int maxw, enum tui_role role, const char *s);
void tui_fill(struct tui *t, int y, int x, int w, enum tui_role role);
void tui_box(struct tui *t, int y, int x, int h, int w, const char *title);
void tui_bar(struct tui *t, int y, int x, int w, const char *label, double frac, const char *text,
             enum tui_role fill);
enum tui_role tui_level_role(double frac);
/* Whether the terminal is below the size top draws in (it says so instead, and no dialog shows). */
bool tui_too_small(void);
void tui_draw(struct tui *t);
void tui_message(struct tui *t, enum tui_role role, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
double tui_now(void);

/* gpus.c */
bool tui_compact(const struct tui *t, int rows_for_gpus);
void tui_draw_gpus(struct tui *t, int y, int rows, bool compact);
void tui_draw_charts(struct tui *t, int y, int rows);
const char *tui_state_word(enum dev_state st);

/* proctable.c */
void tui_procs_rebuild(struct tui *t);
void tui_draw_procs(struct tui *t, int y, int rows);
const struct gpu_proc *tui_selected_proc(const struct tui *t);
void tui_procs_move(struct tui *t, long delta);
void tui_procs_select_row(struct tui *t, size_t row);

/* detail.c */
/* A field's value with the unit its key names ("79.65 GiB", "350.25 W"), or "-". */
void tui_gpu_value(char *buf, size_t size, const struct gpu_device *d, enum gpu_field f, bool utf8);
void tui_draw_detail(struct tui *t, int y, int rows);
int tui_detail_key(struct tui *t, int ch);

/* setup.c */
void tui_open_setup(struct tui *t);
void tui_draw_setup(struct tui *t, int y, int rows);
/* Keys of the setup screen; it takes them all. */
void tui_setup_key(struct tui *t, int ch);
/* The interval's next step up (dir > 0) or down; a replay says it keeps its pace. */
void tui_change_interval(struct tui *t, int dir);

/* dialogs.c */
void tui_draw_help(struct tui *t, int y, int rows);
int tui_help_key(struct tui *t, int ch);
void tui_draw_dialog(struct tui *t);
void tui_dialog_key(struct tui *t, int ch);
void tui_open_kill(struct tui *t);
void tui_open_sort(struct tui *t);
void tui_open_user(struct tui *t);
void tui_open_filter(struct tui *t);
void tui_open_finding(struct tui *t);
void tui_dialogs_release(struct tui *t);

#endif
