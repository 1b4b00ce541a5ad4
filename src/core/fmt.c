/*
 * Terminal detection and value formatting shared by the text outputs.
 */
#include "core/fmt.h"

#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/strbuf.h"

void
term_locale(void)
{
	static bool done;

	if (!done) {
		setlocale(LC_CTYPE, "");
		done = true;
	}
}

void
term_detect(struct term *t, int fd, enum color_mode mode)
{
	const char *no_color = getenv("NO_COLOR");
	const char *term = getenv("TERM");
	const char *cols = getenv("COLUMNS");
	struct winsize ws;
	bool tty = isatty(fd) == 1;

	if (mode == COLOR_ALWAYS)
		t->color = true;
	else if (mode == COLOR_NEVER)
		t->color = false;
	else
		t->color = tty && !(no_color && *no_color) && !(term && !strcmp(term, "dumb"));
	t->width = 80;
	if (tty && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		t->width = ws.ws_col;
	else if (cols && strtol(cols, NULL, 10) > 0)
		t->width = (int)strtol(cols, NULL, 10);
	term_locale();
	t->utf8 = !strcmp(nl_langinfo(CODESET), "UTF-8");
	if (t->width < 80)
		t->width = 80;
	if (t->width > 400)
		t->width = 400;
}

void
fmt_styled(struct strbuf *sb, const struct term *t, enum style st, const char *text)
{
	static const char *const codes[] = {
		[ST_NONE] = "",     [ST_BOLD] = "1",   [ST_DIM] = "2",   [ST_RED] = "31",
		[ST_YELLOW] = "33", [ST_GREEN] = "32", [ST_CYAN] = "36", [ST_INVERSE] = "7",
	};

	if (t->color && st != ST_NONE)
		strbuf_addf(sb, "\033[%sm", codes[st]);
	fmt_add_shown(sb, text, strlen(text));
	if (t->color && st != ST_NONE)
		strbuf_addstr(sb, "\033[0m");
}

size_t
fmt_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xC0) != 0x80;
	return w;
}

/*
 * Bytes of the well-formed UTF-8 sequence of more than one byte at s (at
 * most n bytes there), or 0: no overlong form, no surrogate, nothing past
 * U+10FFFF, as a terminal decodes it.
 */
static size_t
utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xBF;
	size_t len;

	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		len = 2;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		len = 3;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		len = 4;
	else
		return 0;
	if (s[0] == 0xE0)
		lo = 0xA0;
	else if (s[0] == 0xED)
		hi = 0x9F;
	else if (s[0] == 0xF0)
		lo = 0x90;
	else if (s[0] == 0xF4)
		hi = 0x8F;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return len;
}

void
fmt_add_shown(struct strbuf *sb, const char *text, size_t len)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0, n;

	while (i < len) {
		if (s[i] < 0x80) {
			/* C0, DEL */
			strbuf_addch(sb, s[i] < 0x20 || s[i] == 0x7F ? '?' : (char)s[i]);
			i++;
		} else if ((n = utf8_seq(s + i, len - i))) {
			if (s[i] == 0xC2 && s[i + 1] < 0xA0)
				strbuf_addch(sb, '?'); /* C1 as UTF-8: U+0080..U+009F */
			else
				strbuf_add(sb, text + i, n);
			i += n;
		} else {
			/* a byte of no sequence: C1 in an 8-bit terminal, else Latin-1 text */
			strbuf_addch(sb, s[i] <= 0x9F ? '?' : (char)s[i]);
			i++;
		}
	}
}

/* Bytes of the character that starts at s (1 for a stray byte). */
static size_t
char_len(const char *s)
{
	size_t n = 1;

	while (s[n] && ((unsigned char)s[n] & 0xC0) == 0x80 && n < 4)
		n++;
	return n;
}

void
fmt_cell(struct strbuf *sb, const char *s, size_t width, bool right, bool utf8)
{
	size_t w = fmt_width(s), cp = 0, n;

	if (w > width && !width)
		return;
	if (w <= width && right)
		strbuf_addchars(sb, ' ', width - w);
	/* all of it, or width-1 code points and the ellipsis */
	for (; *s; s += n) {
		bool counts = ((unsigned char)*s & 0xC0) != 0x80; /* as fmt_width() counts */

		n = char_len(s);
		if (w > width && counts && cp == width - 1)
			break;
		fmt_add_shown(sb, s, n);
		cp += counts;
	}
	if (w > width)
		strbuf_addstr(sb, utf8 ? "\xe2\x80\xa6" : "+");
	else if (!right)
		strbuf_addchars(sb, ' ', width - w);
}

void
fmt_mib(char *buf, size_t size, double bytes)
{
	snprintf(buf, size, "%.0fMiB", floor(bytes / 1048576.0));
}

void
fmt_bytes(char *buf, size_t size, double bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	int u = 0;

	while (bytes >= 1024 && u < 5) {
		bytes /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%.0f B", bytes);
	else
		snprintf(buf, size,
		         bytes < 10    ? "%.2f %s"
		         : bytes < 100 ? "%.1f %s"
		                       : "%.0f %s",
		         bytes, unit[u]);
}

void
fmt_bytes_short(char *buf, size_t size, double bytes)
{
	static const char unit[] = "BKMGTP";
	int u = 0;

	while (bytes >= 999.5 && u < 5) {
		bytes /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%.0fB", bytes);
	else
		snprintf(buf, size, bytes < 9.95 ? "%.1f%c" : "%.0f%c", bytes, unit[u]);
}

void
fmt_duration(char *buf, size_t size, double seconds)
{
	long s = seconds > 0 ? (long)seconds : 0;

	if (s < 60)
		snprintf(buf, size, "%lds", s);
	else if (s < 3600)
		snprintf(buf, size, "%ld:%02ld", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, size, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(buf, size, "%ldd%02ldh", s / 86400, s / 3600 % 24);
}
