/*
 * JSON helpers: strings are always valid JSON and valid UTF-8 (bad bytes
 * become U+FFFD), numbers print exactly with the decimals asked for.
 */
#include <math.h>
#include <string.h>

#include "harness.h"

#include "core/fields.h"
#include "core/json.h"
#include "core/strbuf.h"

static const char *
str(const char *in)
{
	static struct strbuf sb = STRBUF_INIT;

	strbuf_reset(&sb);
	json_str(&sb, in);
	return sb.buf;
}

static const char *
num(double v, int decimals)
{
	static struct strbuf sb = STRBUF_INIT;

	strbuf_reset(&sb);
	json_num(&sb, v, decimals);
	return sb.buf;
}

int
main(void)
{
	{
		static const char *const yes[] = { "0", "-0", "71234", "698.42", "1e9", "-2.5E-3" };
		static const char *const no[] = { "",   "-",  "01", "+1",     "0x233010DE", "1.",
			                          ".5", "1e", "P0", "12 MiB", "[N/A]",      "NaN" };

		for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
			ok(json_text_is_number(yes[i]), "json_text_is_number(\"%s\")", yes[i]);
		for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
			ok(!json_text_is_number(no[i]), "not json_text_is_number(\"%s\")", no[i]);
	}
	is_str(str("plain"), "\"plain\"", "plain text");
	is_str(str("a \"b\" \\c"), "\"a \\\"b\\\" \\\\c\"", "quotes and backslashes escaped");
	is_str(str("tab\there\nnl"), "\"tab\\there\\nnl\"", "tab and newline");
	is_str(str("\x01\x1f"), "\"\\u0001\\u001f\"", "other control characters as \\u");
	is_str(str("caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80"),
	       "\"caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80\"", "valid UTF-8 kept");
	is_str(str("\xff"), "\"\\ufffd\"", "a stray byte becomes U+FFFD");
	is_str(str("\xc3"), "\"\\ufffd\"", "a cut sequence becomes U+FFFD");
	is_str(str("\xe0\x88\x87"), "\"\\ufffd\\ufffd\\ufffd\"",
	       "an overlong sequence is not UTF-8");
	is_str(str("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"", "a surrogate is not UTF-8");
	is_str(str("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"",
	       "above U+10FFFF is not UTF-8");
	is_str(str(""), "\"\"", "empty string");
	is_str(str("a\x7f\xc2\x9b"
	           "2J\xc2\x9d"
	           "0;t\xc2\xa0"),
	       "\"a\\u007f\\u009b2J\\u009d0;t\xc2\xa0\"",
	       "DEL and C1 controls (U+0080 to U+009F, a terminal's CSI and OSC) escaped, U+00A0 kept");

	is_str(num(0, 0), "0", "zero");
	is_str(num(-0.0, 2), "0", "negative zero is 0");
	is_str(num(81559.0 * 1048576, 0), "85520809984", "bytes as an integer");
	is_str(num(-42, 0), "-42", "negative integer");
	is_str(num(631.95, 2), "631.95", "watts with two decimals");
	is_str(num(700, 2), "700", "a whole number has no point");
	is_str(num(0.5, 2), "0.5", "trailing zeros dropped");
	is_str(num(1.0 / 3, 3), "0.333", "decimals as asked");
	is_str(num(NAN, 2), "null", "NaN is null");
	is_str(num(INFINITY, 0), "null", "infinity is null");
	/* times since the epoch: the whole part and the fraction are rounded apart */
	is_str(num(1796173255.75, 2), "1796173255.75", "a start time with two decimals");
	is_str(num(1796173492.2074, 3), "1796173492.207", "a time with three decimals");
	is_str(num(1796173492.9996, 3), "1796173493", "a fraction rounded up carries");
	is_str(num(-2500000.125, 1), "-2500000.1", "a large negative number");
	{
		/* the status document copies these keys as they are (front/json.c jw_key) */
		bool plain = true;

		for (int f = 0; f < GF__COUNT; f++)
			for (const char *k = field_info((enum gpu_field)f)->key; *k; k++)
				plain &= (*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') ||
				         *k == '_';
		ok(plain, "every field key is [a-z0-9_]: nothing to escape");
	}
	/* 1e300 as a double is 1000000000000000052504760255204420248704468... (301 digits) */
	ok(strlen(num(1e300, 1)) == 301 &&
	           !strncmp(num(1e300, 1), "1000000000000000052504760255204420248704", 40),
	   "a huge number keeps all its digits");
	return done_testing();
}
