/*
 * gpuscope top's full-screen terminal interface (ncursesw): GPUs with bars
 * and history charts, the processes using them (sort, filter, tree, kill),
 * the detail of one GPU, and a pane for diagnostic findings.
 */
#ifndef GPUSCOPE_TUI_H
#define GPUSCOPE_TUI_H

#include <stdbool.h>

struct err;
struct feed;
struct gs_config;
struct top_conf;

enum tui_color {
	TUI_COLOR_AUTO,   /* colour when the terminal has it and NO_COLOR is unset or empty */
	TUI_COLOR_ALWAYS, /* colour whenever the terminal has it */
	TUI_COLOR_NEVER,  /* bold and reverse video only */
};

enum tui_layout {
	TUI_LAYOUT_AUTO,    /* one line per GPU when two do not fit */
	TUI_LAYOUT_FULL,    /* two lines per GPU: identity, then bars */
	TUI_LAYOUT_COMPACT, /* one line per GPU */
};

struct tui_options {
	const struct gs_config *cfg; /* where /proc is (parents, kill checks) */
	double interval;             /* seconds between samples of a live feed */
	bool procs;                  /* show processes */
	bool read_only;              /* never send signals */
	enum tui_color color;
	enum tui_layout layout;
	/*
	 * The settings of top.conf (tui/topconf.h), or NULL: the interface starts
	 * from them (sort, tree, chart, panes; interval and layout come from the
	 * fields above) and writes what they are when it ends back into them.
	 */
	struct top_conf *conf;
};

/*
 * Run the interface on the terminal of stdin/stdout until the user quits
 * (q, F10) or SIGINT, SIGTERM or SIGHUP arrives. The feed is read on a
 * thread of its own, so a slow GPU never stalls the screen; when it ends (a
 * recording's last sample) its last frame stays up until the user quits.
 * The terminal is restored on every way out. The caller keeps the feed and
 * closes it afterwards. Returns 0, or a negative status with err set (the
 * terminal cannot be used).
 */
int tui_run(struct feed *feed, const struct tui_options *opt, struct err *err);

#endif
