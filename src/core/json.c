/*
 * JSON output primitives every layer writes with: strings escaped (invalid
 * UTF-8 becomes U+FFFD), numbers without printf for integers. Reading JSON
 * is jansson's (docs/design.md).
 */
#include "core/json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/strbuf.h"

void
json_str(struct strbuf *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	strbuf_addch(sb, '"');
	while (*p) {
		unsigned char c = *p;
		size_t n = 0;

		/* copy a run of plain characters at once */
		while (p[n] >= 0x20 && p[n] < 0x7F && p[n] != '"' && p[n] != '\\')
			n++;
		if (n) {
			strbuf_add(sb, p, n);
			p += n;
			continue;
		}

		if (c == '"' || c == '\\') {
			strbuf_addch(sb, '\\');
			strbuf_addch(sb, (char)c);
			p++;
			continue;
		}
		if (c < 0x20) {
			switch (c) {
			case '\n':
				strbuf_addstr(sb, "\\n");
				break;
			case '\t':
				strbuf_addstr(sb, "\\t");
				break;
			case '\r':
				strbuf_addstr(sb, "\\r");
				break;
			default:
				strbuf_addf(sb, "\\u%04x", c);
			}
			p++;
			continue;
		}
		if (c == 0x7F) {
			/* DEL, and the C1 controls below, escaped: raw JSON may reach a terminal */
			strbuf_addstr(sb, "\\u007f");
			p++;
			continue;
		}
		/* validate one UTF-8 sequence; anything else becomes U+FFFD */
		if (c >= 0xC2 && c <= 0xDF)
			n = 1;
		else if (c >= 0xE0 && c <= 0xEF)
			n = 2;
		else if (c >= 0xF0 && c <= 0xF4)
			n = 3;
		for (size_t i = 1; i <= n; i++) {
			/* the second byte's range excludes overlongs, surrogates, > U+10FFFF */
			unsigned char lo = 0x80, hi = 0xBF;

			if (i == 1 && c == 0xE0)
				lo = 0xA0;
			else if (i == 1 && c == 0xED)
				hi = 0x9F;
			else if (i == 1 && c == 0xF0)
				lo = 0x90;
			else if (i == 1 && c == 0xF4)
				hi = 0x8F;
			if (p[i] < lo || p[i] > hi) {
				n = 0;
				break;
			}
		}
		if (!n) {
			strbuf_addstr(sb, "\\ufffd");
			p++;
			continue;
		}
		if (c == 0xC2 && p[1] <= 0x9F)
			strbuf_addf(sb, "\\u%04x", p[1]); /* U+0080 to U+009F: C1 controls */
		else
			strbuf_add(sb, p, n + 1);
		p += n + 1;
	}
	strbuf_addch(sb, '"');
}

void
json_num(struct strbuf *sb, double v, int decimals)
{
	char buf[400]; /* DBL_MAX has 309 digits before the point */
	size_t len;

	if (!isfinite(v)) {
		strbuf_addstr(sb, "null");
		return;
	}
	if (v == floor(v) && fabs(v) < 9e15) {
		/* integers are most of the document: no printf for them */
		long long i = (long long)v;
		unsigned long long u = i < 0 ? -(unsigned long long)i : (unsigned long long)i;
		char *q = buf + sizeof(buf);

		do {
			*--q = (char)('0' + u % 10);
			u /= 10;
		} while (u);
		if (i < 0)
			*--q = '-';
		strbuf_add(sb, q, (size_t)(buf + sizeof(buf) - q));
		return;
	}
	if (decimals <= 0 || decimals >= 20)
		decimals = 3;
	if (decimals <= 6 && fabs(v) < 9e15) {
		/*
		 * Most of the rest (percentages, seconds, watts) without printf
		 * either: v scaled to an integer and rounded, as printf rounds, when
		 * the scaled value is clear of a tie (error of the product < 1e-9;
		 * printf rounds the exact binary value, so a near-tie goes to it).
		 * From 1e6 on (times since the epoch) only the fraction is scaled:
		 * the whole part and the fraction are exact apart, and the
		 * fraction's product stays below 1e6, its error below 1e-9.
		 */
		static const double scale[] = { 1, 10, 100, 1e3, 1e4, 1e5, 1e6 };
		static const unsigned long long div[] = {
			1, 10, 100, 1000, 10000, 100000, 1000000
		};
		double a = fabs(v), whole = a < 1e6 ? 0 : floor(a);
		double r = (a - whole) * scale[decimals], fl = floor(r);

		if (fabs(r - fl - 0.5) > 1e-6) {
			unsigned long long u = (unsigned long long)(r - fl < 0.5 ? fl : fl + 1);
			/* a fraction rounded up to 1 carries into the whole part */
			unsigned long long ip = u / div[decimals] + (unsigned long long)whole;
			unsigned long long fp = u % div[decimals];
			bool zero = !u && !whole;
			char *q = buf + sizeof(buf);
			int d = decimals;

			/* the fraction without its trailing zeros */
			while (d > 0 && fp % 10 == 0) {
				fp /= 10;
				d--;
			}
			for (int k = 0; k < d; k++) {
				*--q = (char)('0' + fp % 10);
				fp /= 10;
			}
			if (d)
				*--q = '.';
			do {
				*--q = (char)('0' + ip % 10);
				ip /= 10;
			} while (ip);
			if (v < 0 && !zero)
				*--q = '-';
			strbuf_add(sb, q, (size_t)(buf + sizeof(buf) - q));
			return;
		}
	}
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	len = strlen(buf);
	while (len > 1 && buf[len - 1] == '0')
		buf[--len] = '\0';
	if (len > 1 && buf[len - 1] == '.')
		buf[--len] = '\0';
	if (!strcmp(buf, "-0"))
		strbuf_addstr(sb, "0");
	else
		strbuf_addstr(sb, buf);
}

bool
json_text_is_number(const char *s)
{
	const char *p = s;

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
		if (*p < '0' || *p > '9')
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (*p < '0' || *p > '9')
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return *p == '\0';
}
