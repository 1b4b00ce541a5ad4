/*
 * Tests of the table's cell formatting (core/fmt.c): padding, cutting with
 * an ellipsis by code points, and control characters from untrusted text (a
 * command line, a GPU's name) shown as '?' instead of reaching the terminal,
 * by fmt_add_shown(), which every text front end uses (and fmt_styled()).
 */
#include "core/fmt.h"

#include <string.h>

#include "core/strbuf.h"
#include "harness.h"

static const char *
cell(const char *s, size_t width, bool right, bool utf8)
{
	static struct strbuf sb = STRBUF_INIT;

	strbuf_reset(&sb);
	fmt_cell(&sb, s, width, right, utf8);
	return sb.buf ? sb.buf : "";
}

static const char *
shown(const char *s, size_t len)
{
	static struct strbuf sb = STRBUF_INIT;

	strbuf_reset(&sb);
	fmt_add_shown(&sb, s, len);
	return sb.buf ? sb.buf : "";
}

static const char *
styled(const char *s, bool color)
{
	static struct strbuf sb = STRBUF_INIT;
	struct term t = { color, true, 80 };

	strbuf_reset(&sb);
	fmt_styled(&sb, &t, ST_BOLD, s);
	return sb.buf ? sb.buf : "";
}

int
main(void)
{
	is_str(shown("host\x1b]0;t\x07\x1b[2J\x1b]52;c;aGk=\x07", 26), "host?]0;t??[2J?]52;c;aGk=?",
	       "shown: title, clear and clipboard sequences lose ESC and BEL");
	is_str(shown("a\nb\rc\x7f", 6), "a?b?c?", "shown: newline, CR and DEL");
	is_str(shown("x\xc2\x9b"
	             "1m\xc2\x85",
	             7),
	       "x?1m?", "shown: C1 as UTF-8 (CSI, NEL)");
	is_str(shown("x\x9b"
	             "2J\x90",
	             5),
	       "x?2J?", "shown: a lone C1 byte (8-bit CSI, DCS)");
	is_str(shown("\xc0\x9b", 2), "\xc0?",
	       "shown: an overlong form is no sequence: its 0x9B goes");
	is_str(shown("\xe2\x80", 2), "\xe2?", "shown: a cut sequence: its continuation byte goes");
	is_str(shown("caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80", 14),
	       "caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80", "shown: UTF-8 text is kept");
	is_str(shown("Gr\xfc\xdf"
	             "e",
	             5),
	       "Gr\xfc\xdf"
	       "e",
	       "shown: Latin-1 letters are kept");
	is_str(shown("ab\x1b", 2), "ab", "shown: len bytes, no more");
	is_str(styled("n\x1b[2J", false), "n?[2J", "fmt_styled: plain text shown");
	is_str(styled("n\x1b[2J", true), "\x1b[1mn?[2J\x1b[0m", "fmt_styled: only its own ESCs");
	is_str(cell("abc", 5, false, true), "abc  ", "padded on the right");
	is_str(cell("abc", 5, true, true), "  abc", "padded on the left");
	is_str(cell("abcdef", 4, false, true), "abc\xe2\x80\xa6", "cut with an ellipsis");
	is_str(cell("abcdef", 4, false, false), "abc+", "cut with '+' without UTF-8");
	is_str(cell("caf\xc3\xa9s", 4, false, true), "caf\xe2\x80\xa6", "cut by code points");
	is_str(cell("\xc3\xa9t\xc3\xa9", 4, false, true), "\xc3\xa9t\xc3\xa9 ",
	       "multi-byte characters are one column each");
	is_str(cell("evil\x1b]0;owned\x07", 20, false, true), "evil?]0;owned?      ",
	       "ESC and BEL become '?'");
	is_str(cell("a\x1b[2Jb", 4, false, true), "a?[\xe2\x80\xa6",
	       "a control character counts as one column when cut");
	is_str(cell("x\xc2\x9b"
	            "31mred",
	            8, false, true),
	       "x?31mred", "C1 control (U+009B, CSI) becomes '?'");
	is_str(cell("del\x7f", 4, false, true), "del?", "DEL becomes '?'");
	is_str(cell("tab\there", 8, false, true), "tab?here", "a tab becomes '?'");
	is_str(cell("\xc2\xa0nbsp", 5, false, true), "\xc2\xa0nbsp", "U+00A0 is kept");
	is_str(cell("", 3, false, true), "   ", "empty is padded");
	is_str(cell("abc", 0, false, true), "", "width 0 is nothing");
	return done_testing();
}
