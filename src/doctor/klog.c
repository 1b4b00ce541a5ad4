/*
 * Kernel-log lines: the formats, and repeats counted as one event.
 */
#include "doctor/klog.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/strbuf.h"
#include "core/xalloc.h"

static const char months[][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
	                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

/* Digits at p (at most n of them, up to end) as a number; *used how many; -1 when none. */
static long
num(const char *p, const char *end, int n, int *used)
{
	long v = 0;
	int i = 0;

	while (i < n && p + i < end && isdigit((unsigned char)p[i]))
		v = v * 10 + (p[i++] - '0');
	*used = i;
	return i ? v : -1;
}

static int
month_of(const char *p, const char *end)
{
	if (end - p < 3)
		return -1;
	for (int m = 0; m < 12; m++)
		if (!memcmp(p, months[m], 3))
			return m;
	return -1;
}

static int
current_year(void)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	return tm.tm_year + 1900;
}

/* Seconds since the epoch of tm (UTC): timegm() without its cost on every line. */
static double
utc_seconds(const struct tm *tm)
{
	long y = tm->tm_year + 1900L, m = tm->tm_mon + 1L, era, yoe, doy, doe;

	/* days from 1970-01-01 (Howard Hinnant's days_from_civil) */
	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + tm->tm_mday - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return (double)(era * 146097 + doe - 719468) * 86400.0 + tm->tm_hour * 3600.0 +
	       tm->tm_min * 60.0 + tm->tm_sec;
}

/* "[   12.345678]" at p: seconds since boot; returns past the ']' and a blank, or NULL. */
static const char *
boot_stamp(const char *p, const char *end, double *t)
{
	const char *q = p + 1;
	int used;
	long s, frac;
	double div = 1;

	if (p >= end || *p != '[')
		return NULL;
	while (q < end && *q == ' ')
		q++;
	s = num(q, end, 12, &used);
	if (s < 0 || q + used >= end || q[used] != '.')
		return NULL;
	q += used + 1;
	frac = num(q, end, 9, &used);
	if (frac < 0 || q + used >= end || q[used] != ']')
		return NULL;
	for (int i = 0; i < used; i++)
		div *= 10;
	*t = (double)s + (double)frac / div;
	q += used + 1;
	return q < end && *q == ' ' ? q + 1 : q;
}

/* "HH:MM:SS" at p into tm; returns past it, or NULL. */
static const char *
clock_time(const char *p, const char *end, struct tm *tm)
{
	int u1, u2, u3;
	long h = num(p, end, 2, &u1), m, s;

	if (h < 0 || p + u1 + 1 >= end || p[u1] != ':')
		return NULL;
	p += u1 + 1;
	m = num(p, end, 2, &u2);
	if (m < 0 || p + u2 + 1 >= end || p[u2] != ':')
		return NULL;
	p += u2 + 1;
	s = num(p, end, 2, &u3);
	if (s < 0)
		return NULL;
	tm->tm_hour = (int)h;
	tm->tm_min = (int)m;
	tm->tm_sec = (int)s;
	return p + u3;
}

/*
 * "30 10:00:00 " or " 3 10:00:00 " (day of the month, then the time, then a
 * blank) at p into tm (zeroed first); returns the blank, or NULL.
 */
static const char *
day_clock(const char *p, const char *end, struct tm *tm)
{
	int used;
	long day;

	if (p < end && *p == ' ')
		p++;
	day = num(p, end, 2, &used);
	if (day < 1 || p + used >= end || p[used] != ' ')
		return NULL;
	memset(tm, 0, sizeof(*tm));
	p = clock_time(p + used + 1, end, tm);
	if (!p || p >= end || *p != ' ')
		return NULL;
	tm->tm_mday = (int)day;
	return p;
}

/* Past "host kernel: " or "host prog[pid]: " (one word, then a tag ending in ':'), or p. */
static const char *
skip_host_tag(const char *p, const char *end)
{
	const char *sp = memchr(p, ' ', (size_t)(end - p));
	const char *colon;

	if (!sp)
		return p;
	colon = memchr(sp + 1, ':', (size_t)(end - sp - 1));
	if (!colon || colon + 1 >= end || colon[1] != ' ' ||
	    memchr(sp + 1, ' ', (size_t)(colon - sp - 1)))
		return p;
	return colon + 2;
}

/* syslog's "Nov 30 10:00:00 host kernel: ..." */
static const char *
syslog_stamp(const char *p, const char *end, double *t, int year)
{
	struct tm tm;
	int mon = month_of(p, end);
	const char *q;

	if (mon < 0 || end - p < 16 || p[3] != ' ')
		return NULL;
	q = day_clock(p + 4, end, &tm);
	if (!q)
		return NULL;
	tm.tm_mon = mon;
	tm.tm_year = (year ? year : current_year()) - 1900;
	*t = utc_seconds(&tm);
	return skip_host_tag(q + 1, end);
}

/* "2026-11-30T10:00:00[.frac][Z|+hh:mm|+hhmm] host kernel: ..." */
static const char *
iso_stamp(const char *p, const char *end, double *t)
{
	struct tm tm;
	int used;
	long y, mo, d;
	const char *q = p;
	double frac = 0;
	long off = 0;

	y = num(q, end, 4, &used);
	if (used != 4 || q + 4 >= end || q[4] != '-')
		return NULL;
	q += 5;
	mo = num(q, end, 2, &used);
	if (used != 2 || q + 2 >= end || q[2] != '-')
		return NULL;
	q += 3;
	d = num(q, end, 2, &used);
	if (used != 2 || q + 2 >= end || (q[2] != 'T' && q[2] != ' '))
		return NULL;
	memset(&tm, 0, sizeof(tm));
	q = clock_time(q + 3, end, &tm);
	if (!q)
		return NULL;
	if (q < end && (*q == '.' || *q == ',')) {
		double div = 1;
		long f = num(q + 1, end, 9, &used);

		for (int i = 0; i < used; i++)
			div *= 10;
		frac = f > 0 ? (double)f / div : 0;
		q += 1 + used;
	}
	if (q < end && *q == 'Z') {
		q++;
	} else if (q < end && (*q == '+' || *q == '-')) {
		int sign = *q == '-' ? -1 : 1, u2;
		long hh = num(q + 1, end, 2, &used), mm;

		if (hh < 0)
			return NULL;
		q += 1 + used;
		if (q < end && *q == ':')
			q++;
		mm = num(q, end, 2, &u2);
		q += u2;
		off = sign * (hh * 3600 + (mm > 0 ? mm : 0) * 60);
	}
	if (q >= end || *q != ' ')
		return NULL;
	tm.tm_year = (int)y - 1900;
	tm.tm_mon = (int)mo - 1;
	tm.tm_mday = (int)d;
	*t = utc_seconds(&tm) + frac - (double)off;
	return skip_host_tag(q + 1, end);
}

/* dmesg -T's "[Mon Nov 30 10:00:00 2026] ..." (local time, taken as UTC) */
static const char *
ctime_stamp(const char *p, const char *end, double *t)
{
	struct tm tm;
	const char *q;
	int mon, used;
	long y;

	if (end - p < 26 || *p != '[' || p[4] != ' ')
		return NULL;
	mon = month_of(p + 5, end);
	if (mon < 0 || p[8] != ' ')
		return NULL;
	q = day_clock(p + 9, end, &tm);
	if (!q)
		return NULL;
	y = num(q + 1, end, 4, &used);
	if (used != 4 || q + 1 + used >= end || q[1 + used] != ']')
		return NULL;
	tm.tm_mon = mon;
	tm.tm_year = (int)y - 1900;
	*t = utc_seconds(&tm);
	q += 2 + used;
	return q < end && *q == ' ' ? q + 1 : q;
}

/* kmsg's "6,1234,5678901,-;message" (microseconds since boot) */
static const char *
kmsg_stamp(const char *p, const char *end, double *t)
{
	const char *q = p;
	int commas = 0;
	unsigned long long us = 0;

	while (q < end && *q != ';') {
		if (*q == ',') {
			commas++;
		} else if (isdigit((unsigned char)*q)) {
			if (commas == 2)
				us = us * 10 + (unsigned long long)(*q - '0');
		} else if (!(commas >= 3 && (*q == '-' || *q == '+' || *q == 'c'))) {
			return NULL;
		}
		q++;
	}
	if (q >= end || commas < 3)
		return NULL;
	*t = (double)us / 1e6;
	return q + 1;
}

bool
klog_next(const char *text, size_t len, size_t *pos, struct klog_line *out, int year)
{
	const char *p, *end, *nl, *m;
	double t = 0;

	if (*pos >= len)
		return false;
	p = text + *pos;
	nl = memchr(p, '\n', len - *pos);
	end = nl ? nl : text + len;
	*pos = (size_t)(end - text) + (nl ? 1 : 0);
	out->lineno++;
	if (end > p && end[-1] == '\r')
		end--;
	out->clock = KLOG_NONE;
	out->t = 0;
	m = p;
	if (p < end) {
		const char *q = NULL;

		if (*p == '[') {
			if ((q = boot_stamp(p, end, &t))) {
				out->clock = KLOG_BOOT;
				/* journalctl -o short-monotonic: "[  12.3] host kernel: msg" */
				q = skip_host_tag(q, end);
			} else if ((q = ctime_stamp(p, end, &t))) {
				out->clock = KLOG_WALL;
			}
		} else if (isdigit((unsigned char)*p)) {
			if ((q = iso_stamp(p, end, &t)))
				out->clock = KLOG_WALL;
			else if ((q = kmsg_stamp(p, end, &t)))
				out->clock = KLOG_BOOT;
		} else if (isupper((unsigned char)*p)) {
			if ((q = syslog_stamp(p, end, &t, year)))
				out->clock = KLOG_WALL;
		}
		if (q) {
			m = q;
			/* a syslog line that carries the kernel's own stamp too */
			if (out->clock == KLOG_WALL && m < end && *m == '[') {
				double bt;
				const char *r = boot_stamp(m, end, &bt);

				if (r)
					m = r;
			}
		}
	}
	out->msg = m;
	out->len = (size_t)(end - m);
	out->t = t;
	return true;
}

bool
klog_has(const struct klog_line *l, const char *s)
{
	return memmem(l->msg, l->len, s, strlen(s)) != NULL;
}

const char *
klog_when(const struct klog_line *l, char *buf, size_t size)
{
	if (l->clock == KLOG_BOOT) {
		snprintf(buf, size, "[%12.6f]", l->t);
	} else if (l->clock == KLOG_WALL) {
		time_t s = (time_t)l->t;
		struct tm tm;

		gmtime_r(&s, &tm);
		strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &tm);
	} else {
		snprintf(buf, size, "line %zu", l->lineno);
	}
	return buf;
}

/* --- events ----------------------------------------------------------------------------- */

static uint64_t
hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static void
reindex(struct klog_events *ev)
{
	size_t n = ev->nr_slot ? ev->nr_slot * 2 : 64;

	free(ev->slot);
	ev->slot = xcalloc(n, sizeof(*ev->slot));
	ev->nr_slot = n;
	for (size_t i = 0; i < ev->nr; i++) {
		size_t j = (size_t)(hash(ev->v[i].key) & (n - 1));

		while (ev->slot[j])
			j = (j + 1) & (n - 1);
		ev->slot[j] = i + 1;
	}
}

struct klog_event *
klog_event_add(struct klog_events *ev, const void *kind, const struct klog_line *l, const char *fmt,
               ...)
{
	struct strbuf key = STRBUF_INIT;
	struct klog_event *e;
	va_list ap;
	size_t j;

	va_start(ap, fmt);
	strbuf_vaddf(&key, fmt, ap);
	va_end(ap);
	if ((ev->nr + 1) * 2 > ev->nr_slot)
		reindex(ev);
	for (j = (size_t)(hash(key.buf) & (ev->nr_slot - 1)); ev->slot[j];
	     j = (j + 1) & (ev->nr_slot - 1)) {
		e = &ev->v[ev->slot[j] - 1];
		if (e->kind == kind && !strcmp(e->key, key.buf)) {
			e->count++;
			e->last = *l;
			strbuf_release(&key);
			return e;
		}
	}
	ALLOC_GROW(ev->v, ev->nr + 1, ev->alloc);
	e = &ev->v[ev->nr];
	memset(e, 0, sizeof(*e));
	e->key = strbuf_detach(&key, NULL);
	e->kind = kind;
	e->count = 1;
	e->first = e->last = *l;
	e->order = ev->nr++;
	ev->slot[j] = ev->nr;
	return e;
}

const struct klog_event *
klog_event_find(const struct klog_events *ev, const void *kind, const char *fmt, ...)
{
	struct strbuf key = STRBUF_INIT;
	const struct klog_event *found = NULL;
	va_list ap;

	if (!ev->nr_slot)
		return NULL;
	va_start(ap, fmt);
	strbuf_vaddf(&key, fmt, ap);
	va_end(ap);
	for (size_t j = (size_t)(hash(key.buf) & (ev->nr_slot - 1)); ev->slot[j];
	     j = (j + 1) & (ev->nr_slot - 1)) {
		const struct klog_event *e = &ev->v[ev->slot[j] - 1];

		if (e->kind == kind && !strcmp(e->key, key.buf)) {
			found = e;
			break;
		}
	}
	strbuf_release(&key);
	return found;
}

void
klog_events_release(struct klog_events *ev)
{
	for (size_t i = 0; i < ev->nr; i++) {
		free(ev->v[i].key);
		free(ev->v[i].detail);
	}
	free(ev->v);
	free(ev->slot);
	memset(ev, 0, sizeof(*ev));
}
