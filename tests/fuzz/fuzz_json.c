/*
 * libFuzzer target: the JSON writer helpers.
 *
 * json_str() on the input (as a C string) must append exactly one string
 * literal that a strict RFC 8259 parser accepts: quotes, the escapes of
 * the RFC only, no raw control characters, and well-formed UTF-8 only (no
 * overlong forms, no surrogates, nothing above U+10FFFF). Decoded, it
 * must give the input back when the input is valid UTF-8, and keep every
 * ASCII byte of the input in order in any case.
 *
 * json_num() on the double in the first 8 input bytes, with decimals from
 * the 9th, must append "null" for NaN and infinities, else a JSON number
 * with at most that many digits after the point (3 when decimals <= 0)
 * whose value is v rounded to them.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/strbuf.h"
#include "core/json.h"
#include "fuzz.h"

#define PREFIX "[1,"

/*
 * Length of the well-formed UTF-8 sequence at s (Unicode table 3-7), or 0.
 * cp receives the code point.
 */
static size_t
utf8_seq(const unsigned char *s, size_t n, unsigned long *cp)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xBF;
	size_t len;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF) {
		len = 2;
		*cp = c & 0x1F;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		*cp = c & 0x0F;
		if (c == 0xE0)
			lo = 0xA0; /* overlong below */
		else if (c == 0xED)
			hi = 0x9F; /* surrogates above */
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		*cp = c & 0x07;
		if (c == 0xF0)
			lo = 0x90; /* overlong below */
		else if (c == 0xF4)
			hi = 0x8F; /* above U+10FFFF */
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if (s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xBF))
			return 0;
		*cp = (*cp << 6) | (s[i] & 0x3F);
	}
	return len;
}

static void
put_utf8(unsigned long cp, struct strbuf *out)
{
	if (cp < 0x80) {
		strbuf_addch(out, (int)cp);
	} else if (cp < 0x800) {
		strbuf_addch(out, (int)(0xC0 | (cp >> 6)));
		strbuf_addch(out, (int)(0x80 | (cp & 0x3F)));
	} else if (cp < 0x10000) {
		strbuf_addch(out, (int)(0xE0 | (cp >> 12)));
		strbuf_addch(out, (int)(0x80 | ((cp >> 6) & 0x3F)));
		strbuf_addch(out, (int)(0x80 | (cp & 0x3F)));
	} else {
		strbuf_addch(out, (int)(0xF0 | (cp >> 18)));
		strbuf_addch(out, (int)(0x80 | ((cp >> 12) & 0x3F)));
		strbuf_addch(out, (int)(0x80 | ((cp >> 6) & 0x3F)));
		strbuf_addch(out, (int)(0x80 | (cp & 0x3F)));
	}
}

static int
hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Four hex digits at s (n bytes left), or -1. */
static long
hex4(const unsigned char *s, size_t n)
{
	long v = 0;

	if (n < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		int h = hexval(s[i]);

		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/*
 * Validate the JSON string literal that is all of [s, s+n) and decode it
 * into out. Returns NULL, or what is wrong with it.
 */
static const char *
json_string_check(const unsigned char *s, size_t n, struct strbuf *out, size_t *at)
{
	size_t i = 1;

	*at = 0;
	if (n < 2 || s[0] != '"')
		return "does not start with a quote";
	for (;;) {
		unsigned char c;
		unsigned long cp;
		size_t len;

		*at = i;
		if (i >= n)
			return "no closing quote";
		c = s[i];
		if (c == '"') {
			if (i + 1 != n)
				return "text after the closing quote";
			return NULL;
		}
		if (c < 0x20)
			return "raw control character";
		if (c == '\\') {
			long u, lo;

			if (i + 1 >= n)
				return "backslash at the end";
			switch (s[i + 1]) {
			case '"':
			case '\\':
			case '/':
				strbuf_addch(out, s[i + 1]);
				break;
			case 'b':
				strbuf_addch(out, '\b');
				break;
			case 'f':
				strbuf_addch(out, '\f');
				break;
			case 'n':
				strbuf_addch(out, '\n');
				break;
			case 'r':
				strbuf_addch(out, '\r');
				break;
			case 't':
				strbuf_addch(out, '\t');
				break;
			case 'u':
				u = hex4(s + i + 2, n - i - 2);
				if (u < 0)
					return "\\u without four hex digits";
				i += 6;
				if (u >= 0xDC00 && u <= 0xDFFF)
					return "\\u escape of a lone low surrogate";
				if (u >= 0xD800 && u <= 0xDBFF) {
					if (i + 1 >= n || s[i] != '\\' || s[i + 1] != 'u')
						return "\\u escape of a lone high surrogate";
					lo = hex4(s + i + 2, n - i - 2);
					if (lo < 0xDC00 || lo > 0xDFFF)
						return "\\u escape of a lone high surrogate";
					u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
					i += 6;
				}
				put_utf8((unsigned long)u, out);
				continue;
			default:
				return "unknown escape";
			}
			i += 2;
			continue;
		}
		len = utf8_seq(s + i, n - i, &cp);
		if (!len)
			return "ill-formed UTF-8";
		strbuf_add(out, s + i, len);
		i += len;
	}
}

static bool
valid_utf8(const unsigned char *s, size_t n)
{
	unsigned long cp;

	for (size_t i = 0, len; i < n; i += len) {
		len = utf8_seq(s + i, n - i, &cp);
		if (!len)
			return false;
	}
	return true;
}

/* The ASCII bytes of [s, s+n), in order. */
static void
ascii_of(const char *s, size_t n, struct strbuf *out)
{
	for (size_t i = 0; i < n; i++)
		if (!((unsigned char)s[i] & 0x80))
			strbuf_addch(out, s[i]);
}

static void
check_str(const char *in)
{
	struct strbuf sb = STRBUF_INIT, dec = STRBUF_INIT, a = STRBUF_INIT, b = STRBUF_INIT;
	size_t in_len = strlen(in), at;
	const char *why;

	strbuf_addstr(&sb, PREFIX); /* json_str appends: what was there stays */
	json_str(&sb, in);
	FUZZ_CHECK(!memcmp(sb.buf, PREFIX, strlen(PREFIX)), "json_str changed what it appends to");
	FUZZ_CHECK(strlen(sb.buf) == sb.len, "json_str output holds a NUL");
	why = json_string_check((const unsigned char *)sb.buf + strlen(PREFIX),
	                        sb.len - strlen(PREFIX), &dec, &at);
	if (why) {
		fuzz_dump("input", in, in_len);
		fuzz_dump("output", sb.buf + strlen(PREFIX), sb.len - strlen(PREFIX));
	}
	FUZZ_CHECK(!why, "json_str output is not a valid JSON string: %s at byte %zu", why, at);
	if (valid_utf8((const unsigned char *)in, in_len)) {
		if (dec.len != in_len || memcmp(dec.buf, in, in_len)) {
			fuzz_dump("input", in, in_len);
			fuzz_dump("decoded", dec.buf, dec.len);
		}
		FUZZ_CHECK(dec.len == in_len && !memcmp(dec.buf, in, in_len),
		           "valid UTF-8 does not survive json_str");
	}
	ascii_of(in, in_len, &a);
	ascii_of(dec.buf, dec.len, &b);
	if (a.len != b.len || memcmp(a.buf, b.buf, a.len)) {
		fuzz_dump("input", in, in_len);
		fuzz_dump("decoded", dec.buf, dec.len);
	}
	FUZZ_CHECK(a.len == b.len && !memcmp(a.buf, b.buf, a.len),
	           "json_str lost or added ASCII characters");
	strbuf_release(&sb);
	strbuf_release(&dec);
	strbuf_release(&a);
	strbuf_release(&b);
}

/*
 * Is s all of one JSON number? Counts the digits after the point into
 * *frac (0 when there is an exponent: those digits are not decimals).
 */
static bool
json_number_ok(const char *s, size_t *frac)
{
	const char *p = s;

	*frac = 0;
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (*p >= '0' && *p <= '9')
			p++;
	else
		return false;
	if (*p == '.') {
		p++;
		if (!(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9') {
			p++;
			(*frac)++;
		}
	}
	if (*p == 'e' || *p == 'E') {
		*frac = 0;
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return *p == '\0';
}

static void
check_num(double v, int decimals)
{
	struct strbuf sb = STRBUF_INIT;
	const char *out;
	int want = decimals > 0 ? decimals : 3;
	size_t frac;
	double got, tol;

	strbuf_addstr(&sb, PREFIX);
	json_num(&sb, v, decimals);
	FUZZ_CHECK(!memcmp(sb.buf, PREFIX, strlen(PREFIX)), "json_num changed what it appends to");
	out = sb.buf + strlen(PREFIX);
	if (!isfinite(v)) {
		FUZZ_CHECK(!strcmp(out, "null"), "json_num(%g) is '%s', not null", v, out);
		strbuf_release(&sb);
		return;
	}
	FUZZ_CHECK(json_number_ok(out, &frac), "json_num(%.17g, %d) = '%s' is not a JSON number", v,
	           decimals, out);
	FUZZ_CHECK(frac <= (size_t)want, "json_num(%.17g, %d) = '%s' has %zu decimals", v, decimals,
	           out, frac);
	got = strtod(out, NULL);
	/* rounding to want decimals, plus printf's own error on huge values */
	tol = 0.5 * pow(10, -want) * (1 + 1e-9) + fabs(v) * 1e-15;
	FUZZ_CHECK(fabs(got - v) <= tol, "json_num(%.17g, %d) = '%s' is off by %g", v, decimals,
	           out, fabs(got - v));
	strbuf_release(&sb);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);

	check_str(s);
	free(s);
	if (size >= 8) {
		double v;
		int decimals = 3;

		memcpy(&v, data, sizeof(v));
		if (size >= 9)
			decimals = (int)(data[8] % 8) - 1; /* -1 .. 6; callers use 0 .. 3 */
		check_num(v, decimals);
	}
	return 0;
}
