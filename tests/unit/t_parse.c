/*
 * Tests of the bounded text parsers (core/parse.c) that the procfs and
 * fdinfo readers share: numbers that stop at the span's end, overflow and
 * signs refused, prefixes and whole words matched without a NUL.
 */
#include "core/parse.h"

#include <string.h>

#include "harness.h"

static bool
u64(const char *s, size_t len, uint64_t *v, size_t *used)
{
	const char *p = s;
	bool r = parse_u64(&p, s + len, v);

	*used = (size_t)(p - s);
	return r;
}

int
main(void)
{
	uint64_t v = 7;
	size_t used;
	const char *p, *s;

	ok(parse_is_blank(' ') && parse_is_blank('\t') && parse_is_blank('\r'),
	   "blank: space, tab and CR");
	ok(!parse_is_blank('\n') && !parse_is_blank('x') && !parse_is_blank('\0'),
	   "blank: not a newline, a letter or NUL");
	ok(parse_is_digit('0') && parse_is_digit('9') && !parse_is_digit('a') &&
	           !parse_is_digit('/') && !parse_is_digit(':'),
	   "digit: 0 to 9 only");
	ok(parse_is_hex('f') && parse_is_hex('F') && parse_is_hex('5') && !parse_is_hex('g'),
	   "hex: both cases");

	ok(u64("  \t42 kB", 8, &v, &used) && v == 42 && used == 5,
	   "u64: blanks skipped, stops at the unit");
	ok(u64("12345", 3, &v, &used) && v == 123 && used == 3, "u64: stops at the span's end");
	ok(u64("18446744073709551615", 20, &v, &used) && v == UINT64_MAX, "u64: the largest value");
	v = 7;
	ok(!u64("18446744073709551616", 20, &v, &used) && v == 7 && used == 0,
	   "u64: overflow refused, nothing changed");
	ok(!u64("-1", 2, &v, &used) && !u64("+1", 2, &v, &used) && !u64("0x10", 0, &v, &used),
	   "u64: no sign, an empty span has no number");
	ok(u64("0x10", 4, &v, &used) && v == 0 && used == 1, "u64: no hex: 0 then 'x'");
	ok(!u64("   ", 3, &v, &used) && used == 0, "u64: blanks alone are no number");

	s = "drm-engine-gfx";
	p = s;
	ok(parse_skip_prefix(&p, s + strlen(s), "drm-") && p == s + 4, "prefix: skipped");
	ok(!parse_skip_prefix(&p, s + strlen(s), "drm-") && p == s + 4, "prefix: absent, p kept");
	p = s;
	ok(!parse_skip_prefix(&p, s + 3, "drm-") && p == s, "prefix: longer than the span");

	s = "KiBx";
	ok(parse_span_is(s, s + 3, "KiB"), "span: equal");
	ok(!parse_span_is(s, s + 4, "KiB") && !parse_span_is(s, s + 2, "KiB"),
	   "span: longer or shorter is not equal");
	ok(parse_span_is(s, s, ""), "span: empty equals empty");
	return done_testing();
}
