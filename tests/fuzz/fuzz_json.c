/*
 * libFuzzer target: JSON in and out.
 *
 * The reader: jsonin_object() (core/jsonin.h, jansson) on the bytes as a
 * file must give an object, or NULL with a one-line message naming the
 * file; never both, never a crash.
 *
 * The writer: json_str() on the input (as a C string) must append exactly
 * one string literal that jansson, a strict RFC 8259 parser, accepts as
 * the only element of an array (it refuses raw control characters, escapes
 * outside the RFC, ill-formed UTF-8, overlong forms, surrogates and code
 * points above U+10FFFF). Decoded, it must give the input back when the
 * input is valid UTF-8, and keep every ASCII byte of the input in order in
 * any case.
 *
 * json_num() on the double in the first 8 input bytes, with decimals from
 * the 9th, must append "null" for NaN and infinities, else a JSON number
 * (by jansson) with at most that many digits after the point (3 when
 * decimals <= 0) whose value is v rounded to them.
 */
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "core/jsonin.h"
#include "core/strbuf.h"
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

/*
 * Parse the JSON text [s, s+n) with jansson, strictly, as the one element
 * of an array: the element, a new reference, or NULL with why filled.
 */
static json_t *
strict_value(const char *s, size_t n, char *why, size_t size)
{
	struct strbuf doc = STRBUF_INIT;
	json_error_t je;
	json_t *arr, *v = NULL;

	strbuf_addch(&doc, '[');
	strbuf_add(&doc, s, n);
	strbuf_addch(&doc, ']');
	arr = json_loadb(doc.buf, doc.len, JSON_DECODE_INT_AS_REAL, &je);
	if (!arr)
		snprintf(why, size, "%s at column %d", je.text, je.column - 1);
	else if (json_array_size(arr) != 1)
		snprintf(why, size, "%zu values, not one", json_array_size(arr));
	else
		v = json_incref(json_array_get(arr, 0));
	json_decref(arr);
	strbuf_release(&doc);
	return v;
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
	struct strbuf sb = STRBUF_INIT, a = STRBUF_INIT, b = STRBUF_INIT;
	size_t in_len = strlen(in), out_len;
	const char *out, *dec = "";
	size_t dec_len = 0;
	char why[256] = "";
	json_t *v;

	strbuf_addstr(&sb, PREFIX); /* json_str appends: what was there stays */
	json_str(&sb, in);
	FUZZ_CHECK(!memcmp(sb.buf, PREFIX, strlen(PREFIX)), "json_str changed what it appends to");
	FUZZ_CHECK(strlen(sb.buf) == sb.len, "json_str output holds a NUL");
	out = sb.buf + strlen(PREFIX);
	out_len = sb.len - strlen(PREFIX);
	v = strict_value(out, out_len, why, sizeof(why));
	if (v && !json_is_string(v))
		snprintf(why, sizeof(why), "not a string");
	if (!v || !json_is_string(v)) {
		fuzz_dump("input", in, in_len);
		fuzz_dump("output", out, out_len);
	}
	FUZZ_CHECK(v && json_is_string(v), "json_str output is not one JSON string: %s", why);
	FUZZ_CHECK(out[0] == '"' && out[out_len - 1] == '"', "json_str output is not a literal");
	dec = json_string_value(v);
	dec_len = json_string_length(v);
	if (valid_utf8((const unsigned char *)in, in_len)) {
		if (dec_len != in_len || memcmp(dec, in, in_len)) {
			fuzz_dump("input", in, in_len);
			fuzz_dump("decoded", dec, dec_len);
		}
		FUZZ_CHECK(dec_len == in_len && !memcmp(dec, in, in_len),
		           "valid UTF-8 does not survive json_str");
	}
	ascii_of(in, in_len, &a);
	ascii_of(dec, dec_len, &b);
	if (a.len != b.len || memcmp(a.buf, b.buf, a.len)) {
		fuzz_dump("input", in, in_len);
		fuzz_dump("decoded", dec, dec_len);
	}
	FUZZ_CHECK(a.len == b.len && !memcmp(a.buf, b.buf, a.len),
	           "json_str lost or added ASCII characters");
	json_decref(v);
	strbuf_release(&sb);
	strbuf_release(&a);
	strbuf_release(&b);
}

/* The digits after the point of a JSON number (0 when there is an exponent). */
static size_t
decimals_of(const char *s)
{
	const char *dot = strchr(s, '.');

	if (strpbrk(s, "eE") || !dot)
		return 0;
	return strspn(dot + 1, "0123456789");
}

static void
check_num(double v, int decimals)
{
	struct strbuf sb = STRBUF_INIT;
	const char *out;
	int want = decimals > 0 ? decimals : 3;
	char why[256] = "";
	size_t frac;
	double got, tol;
	json_t *n;

	strbuf_addstr(&sb, PREFIX);
	json_num(&sb, v, decimals);
	FUZZ_CHECK(!memcmp(sb.buf, PREFIX, strlen(PREFIX)), "json_num changed what it appends to");
	out = sb.buf + strlen(PREFIX);
	if (!isfinite(v)) {
		FUZZ_CHECK(!strcmp(out, "null"), "json_num(%g) is '%s', not null", v, out);
		strbuf_release(&sb);
		return;
	}
	n = strict_value(out, strlen(out), why, sizeof(why));
	FUZZ_CHECK(n && json_is_real(n) && out[strspn(out, "-0123456789.eE+")] == '\0',
	           "json_num(%.17g, %d) = '%s' is not a JSON number: %s", v, decimals, out, why);
	frac = decimals_of(out);
	FUZZ_CHECK(frac <= (size_t)want, "json_num(%.17g, %d) = '%s' has %zu decimals", v, decimals,
	           out, frac);
	got = json_number_value(n);
	/* rounding to want decimals, plus printf's own error on huge values */
	tol = 0.5 * pow(10, -want) * (1 + 1e-9) + fabs(v) * 1e-15;
	FUZZ_CHECK(fabs(got - v) <= tol, "json_num(%.17g, %d) = '%s' is off by %g", v, decimals,
	           out, fabs(got - v));
	json_decref(n);
	strbuf_release(&sb);
}

/* The reader: an object, or NULL and one line that names the file. */
static void
check_read(const uint8_t *data, size_t size)
{
	struct err err = ERR_INIT;
	json_t *root = jsonin_object((const char *)data, size, "version.json", &err);

	if (root) {
		FUZZ_CHECK(json_is_object(root), "jsonin_object gave no object");
		FUZZ_CHECK(!err.code && !err.msg[0], "an object and an error: '%s'", err.msg);
	} else {
		FUZZ_CHECK(err.code == E_PARSE, "no object and error code %d", err.code);
		FUZZ_CHECK(!strncmp(err.msg, "version.json: ", 14), "message: '%s'", err.msg);
		for (const char *c = err.msg; *c; c++)
			FUZZ_CHECK((unsigned char)*c >= 0x20 && (unsigned char)*c < 0x7f,
			           "message not one printable line: '%s'", err.msg);
	}
	json_decref(root);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);

	check_read(data, size);
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
