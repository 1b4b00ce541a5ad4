/*
 * Shared formatting for the text front ends: the terminal (width, colour),
 * ANSI styles, and values with units (bytes, durations, percentages).
 */
#ifndef GPUSCOPE_FMT_H
#define GPUSCOPE_FMT_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf;

enum color_mode { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER };

struct term {
	bool color; /* emit ANSI styles */
	bool utf8;  /* the locale's character set is UTF-8: "°C" and "…" may be used */
	int width;  /* columns to fit in */
};

/*
 * Decide colour and width for output on fd: colour when fd is a terminal,
 * NO_COLOR is unset or empty and TERM is not "dumb" (or as mode forces);
 * width from the terminal, else $COLUMNS, else 80, never below 80;
 * UTF-8 when the locale says so (the caller has called setlocale()).
 */
void term_detect(struct term *t, int fd, enum color_mode mode);
/* setlocale(LC_CTYPE, "") once (the character set only: numbers keep the C
 * locale's decimal point); term_detect() calls it. main() does not, so that
 * commands that draw nothing for a terminal do not pay for reading the locale. */
void term_locale(void);

enum style {
	ST_NONE = 0,
	ST_BOLD,
	ST_DIM,
	ST_RED,
	ST_YELLOW,
	ST_GREEN,
	ST_CYAN,
	ST_INVERSE,
};

/*
 * Append text (len bytes) as a terminal may be given it: every control
 * character becomes '?' (C0, newline and tab too; DEL; C1 as UTF-8 U+0080..U+009F;
 * and a byte 0x80..0x9F that is no part of a UTF-8 sequence), so that a
 * name from outside (a process's, a GPU's, the host's, a kernel log line)
 * cannot move the cursor, clear the screen, retitle the window or write
 * the clipboard. Every text from outside that a text front end prints
 * (table, CSV, doctor's report, replay info) goes through this one
 * function; fmt_styled() and fmt_cell() call it. The JSON writer escapes
 * instead (core/json.c).
 */
void fmt_add_shown(struct strbuf *sb, const char *text, size_t len);

/* Append text in a style (plain when t->color is off), through fmt_add_shown(). */
void fmt_styled(struct strbuf *sb, const struct term *t, enum style st, const char *text);

/* Width of a UTF-8 string in columns (one per code point). */
size_t fmt_width(const char *s);
/*
 * Append s cut or padded to exactly width columns, through fmt_add_shown();
 * a cut string ends in "…" (or "+" without UTF-8). right aligns to the right.
 */
void fmt_cell(struct strbuf *sb, const char *s, size_t width, bool right, bool utf8);

/* "81559MiB" style: whole MiB, as nvidia-smi prints memory. */
void fmt_mib(char *buf, size_t size, double bytes);
/* "15.3 GiB" style with the largest fitting binary unit. */
void fmt_bytes(char *buf, size_t size, double bytes);
/* "18.2G", "525M", "4.0K": three significant digits and a one-letter binary unit */
void fmt_bytes_short(char *buf, size_t size, double bytes);
/* "59s", "12:34", "1:02:03", "3d04h" */
void fmt_duration(char *buf, size_t size, double seconds);

#endif
