/*
 * Helpers shared by the kernel-log decoders of the in-tree GPU drivers and
 * of PCIe AER (klog_dec.h): a line's device prefix, event keys, and the
 * quoting and counting of their findings.
 */
#include "doctor/klog_dec.h"

#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "doctor/doctor.h"
#include "doctor/klog.h"

/* "0000:3b:00.0" at p (12 characters) */
bool
klog_is_bdf(const char *p, const char *end)
{
	static const char shape[] = "xxxx:xx:xx.d";

	if (end - p < 12)
		return false;
	for (int i = 0; i < 12; i++) {
		char c = shape[i];

		if (c == 'x'   ? !isxdigit((unsigned char)p[i])
		    : c == 'd' ? !isdigit((unsigned char)p[i])
		               : p[i] != c)
			return false;
	}
	return true;
}

void
klog_prefix(const struct klog_line *l, struct klog_pfx *p)
{
	const char *s = l->msg, *end = l->msg + l->len, *q = s;

	memset(p, 0, sizeof(*p));
	p->end = end;
	p->rest = s;
	while (q < end && (isalnum((unsigned char)*q) || *q == '_' || *q == '-'))
		q++;
	if (q > s && q < end && *q == ' ' && (size_t)(q - s) < sizeof(p->drv) &&
	    klog_is_bdf(q + 1, end) && q + 13 < end && q[13] == ':') {
		memcpy(p->drv, s, (size_t)(q - s));
		memcpy(p->bdf, q + 1, 12);
		q += 14;
		for (;;) {
			while (q < end && *q == ' ')
				q++;
			if (end - q >= 5 && !memcmp(q, "AER: ", 5))
				q += 5;
			else if (end - q >= 8 && !memcmp(q, "amdgpu: ", 8))
				q += 8;
			else if (end - q >= 6 && !memcmp(q, "[drm] ", 6))
				q += 6;
			else
				break;
		}
		p->rest = q;
	}
}

const char *
klog_find(const struct klog_line *l, const char *s)
{
	return klog_search(l->msg, l->msg + l->len, s);
}

/*
 * memmem() builds a shift table on every call, which costs more than the search in a line
 * of a hundred bytes that does not hold s (most lines, for most of the decoders' words):
 * memchr() to each place of s's first character, then a compare, is several times faster.
 */
const char *
klog_search(const char *p, const char *end, const char *s)
{
	size_t n = strlen(s);

	if (!n)
		return p;
	while (end - p >= (ptrdiff_t)n && (p = memchr(p, s[0], (size_t)(end - p) - n + 1))) {
		if (!memcmp(p + 1, s + 1, n - 1))
			return p;
		p++;
	}
	return NULL;
}

/* Copy p up to end or the first character of stops into out ("" when none). */
void
klog_take(char *out, size_t size, const char *p, const char *end, const char *stops)
{
	size_t n = 0;

	while (p + n < end && !strchr(stops, p[n]) && n + 1 < size)
		n++;
	memcpy(out, p, n);
	out[n] = '\0';
}

/* Field n (0-based) of a "a|b|c" key into out. */
const char *
klog_field(const char *key, int n, char *out, size_t size)
{
	const char *p = key;

	for (; n > 0 && p; n--) {
		p = strchr(p, '|');
		if (p)
			p++;
	}
	if (!p) {
		out[0] = '\0';
		return out;
	}
	klog_take(out, size, p, p + strlen(p), "|");
	return out;
}

/* Same device: equal bus ids, or one of them unknown ("?"). */
bool
klog_same_dev(const char *a, const char *b)
{
	return !strcmp(a, b) || !strcmp(a, "?") || !strcmp(b, "?");
}

/* Set e's detail to what and a when it has none, or append them to it. */
void
klog_add_detail(struct klog_event *e, const char *what, const char *a)
{
	struct strbuf sb = STRBUF_INIT;

	if (e->detail)
		strbuf_addf(&sb, "%s; ", e->detail);
	strbuf_addf(&sb, "%s%s", what, a);
	free(e->detail);
	e->detail = strbuf_detach(&sb, NULL);
}

/* Add a sentence to f's meaning (dr_meaning() replaces it). */
void
klog_mean(struct dr_finding *f, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (f->meaning)
		strbuf_addf(&sb, "%s ", f->meaning);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	dr_meaning(f, "%s", sb.buf);
	strbuf_release(&sb);
}

/* Quote a line: "[  12.345678] message" */
void
klog_quote(struct dr_finding *f, const struct klog_line *l)
{
	char when[64];
	int n = l->len > 300 ? 300 : (int)l->len;

	dr_evidence(f, "%s %.*s", klog_when(l, when, sizeof(when)), n, l->msg);
}

const char *
klog_times(unsigned long n, char *buf, size_t size)
{
	if (n == 1)
		snprintf(buf, size, "once");
	else
		snprintf(buf, size, "%lu times", n);
	return buf;
}

/* The events of kind on device bdf (any, when bdf is "?"): how many lines in all. */
unsigned long
klog_count_on(const struct klog_events *ev, const void *kind, const char *bdf,
              const struct klog_event **first)
{
	unsigned long n = 0;
	char dev[32];

	if (first)
		*first = NULL;
	for (size_t i = 0; i < ev->nr; i++) {
		const struct klog_event *e = &ev->v[i];

		if (e->kind != kind || !klog_same_dev(klog_field(e->key, 0, dev, sizeof(dev)), bdf))
			continue;
		n += e->count;
		if (first && (!*first || e->first.lineno < (*first)->first.lineno))
			*first = e;
	}
	return n;
}
