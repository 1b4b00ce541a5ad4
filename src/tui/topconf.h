/*
 * gpuscope top's settings file, $XDG_CONFIG_HOME/gpuscope/top.conf
 * (~/.config/gpuscope/top.conf when XDG_CONFIG_HOME is unset or not
 * absolute): htoprc-like "key=value" lines under a comment header, read
 * when top starts and written back when it quits, if anything changed.
 * No curses here, so that the unit test can build it on its own.
 */
#ifndef GPUSCOPE_TUI_TOPCONF_H
#define GPUSCOPE_TUI_TOPCONF_H

#include <stdbool.h>
#include <stddef.h>

#include "core/strbuf.h"

struct err;

/* The most bytes of top.conf that are read: a bigger file is not read at all. */
#define TOP_CONF_MAX (64 * 1024)

/*
 * What top keeps between runs. sort is an enum pcol (tui/procs.h), chart an
 * enum hist_metric (tui/history.h), layout an enum tui_layout (tui/tui.h).
 * extra holds the lines with keys this version does not know, as they were,
 * each ending in '\n', so that a newer gpuscope's settings survive an older
 * one's write.
 */
struct top_conf {
	int sort;
	bool sort_invert; /* the other way round from the column's natural order */
	bool tree;
	int chart;
	int layout;
	double interval; /* seconds, 0.1 to 86400 */
	bool show_gpus, show_charts, show_findings, show_processes;
	bool detail_all; /* the detail view lists unknown fields too */
	struct strbuf extra;
};

/* The settings of a first run: sort by GPU memory, utilisation chart, every pane, 1 s. */
void top_conf_init(struct top_conf *c);
void top_conf_release(struct top_conf *c);
/* Copy src over dst (both initialised). */
void top_conf_copy(struct top_conf *dst, const struct top_conf *src);

/*
 * Apply the lines of text (len bytes) to c. Blank lines and lines starting
 * with '#' are skipped; a line that is not key=value, or a known key with a
 * value out of range, is ignored. Returns the number of lines ignored; the
 * first one's number and what is wrong with it go to *bad_line and bad
 * (when not NULL).
 */
int top_conf_parse(struct top_conf *c, const char *text, size_t len, int *bad_line,
                   struct strbuf *bad);

/* The file's text for c (appended to out): the header, the known keys, then c->extra. */
void top_conf_format(const struct top_conf *c, struct strbuf *out);

/* Whether a and b would be written as the same text. */
bool top_conf_equal(const struct top_conf *a, const struct top_conf *b);

/*
 * The path of top.conf into buf: from XDG_CONFIG_HOME when it is set and
 * absolute, else from HOME. Returns 0, or E_NOTFOUND when neither is usable.
 */
int top_conf_path(char *buf, size_t size);

/*
 * Read the file at path into c. A missing file is no error (c keeps what it
 * has, and 0 is returned). Anything else that is not a regular file of at
 * most TOP_CONF_MAX bytes (a FIFO, a directory, a symbolic link loop, a
 * device) is not read: a negative status with a message naming the file.
 * Malformed lines are ignored, noted in err with E_PARSE while the rest
 * applies (the return is still 0: see err->code).
 */
int top_conf_load(struct top_conf *c, const char *path, struct err *err);

/*
 * Write c to path atomically: a temporary file in the same directory,
 * written, fsync()ed and renamed over it, mode 0644 less the umask, as htop
 * writes htoprc. A symbolic link at path is followed, so that the file it
 * points to is replaced and the link stays. The directory is created
 * (0700, as the XDG base directory specification asks) when missing.
 * Returns 0, or a negative status with a message naming the file.
 */
int top_conf_save(const struct top_conf *c, const char *path, struct err *err);

#endif
