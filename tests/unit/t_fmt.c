/*
 * Tests of the table's cell formatting (core/fmt.c): padding, cutting with
 * an ellipsis by code points, and control characters from untrusted text (a
 * command line, a GPU's name) shown as '?' instead of reaching the terminal.
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

int
main(void)
{
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
