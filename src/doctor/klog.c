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

/* This year, asked of the clock once a second at most (a log's syslog lines ask on every line). */
static int
current_year(void)
{
	static time_t asked;
	static int year;
	time_t now = time(NULL);

	if (now != asked) {
		struct tm tm;

		gmtime_r(&now, &tm);
		year = tm.tm_year + 1900;
		asked = now;
	}
	return year;
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

/* Past ".123456" (a fraction of a second) at p, its value in *frac; p when there is none. */
static const char *
fraction(const char *p, const char *end, double *frac)
{
	int used;
	long f;
	double div = 1;

	*frac = 0;
	if (p >= end || (*p != '.' && *p != ','))
		return p;
	f = num(p + 1, end, 9, &used);
	if (!used)
		return p;
	for (int i = 0; i < used; i++)
		div *= 10;
	*frac = (double)f / div;
	return p + 1 + used;
}

/*
 * "30 10:00:00[.123456] " or " 3 10:00:00 " (day of the month, then the
 * time, then a blank) at p into tm (zeroed first) and *frac; returns the
 * blank, or NULL.
 */
static const char *
day_clock(const char *p, const char *end, struct tm *tm, double *frac)
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
	if (!p)
		return NULL;
	p = fraction(p, end, frac);
	if (p >= end || *p != ' ')
		return NULL;
	tm->tm_mday = (int)day;
	return p;
}

/* A word of at most max characters none of which is a blank, at p: its length, or 0. */
static size_t
word_len(const char *p, const char *end, size_t max)
{
	size_t n = 0;

	while (p + n < end && p[n] != ' ' && p[n] != '\t' && n <= max)
		n++;
	return n <= max ? n : 0;
}

/*
 * Past "host kernel: " or "host prog[pid]: " (a host word that does not end
 * in ':', then a tag ending in ':'), or p. Where any_tag is false (a stamp
 * that other programs' lines share, as in docker or kubectl logs), only
 * "kernel:" and "prog[pid]:" are taken for a tag, so that "modprobe: FATAL:
 * ..." keeps its words.
 */
static const char *
skip_host_tag(const char *p, const char *end, bool any_tag)
{
	size_t host = word_len(p, end, 255), tag;
	const char *t;

	if (!host || p[host - 1] == ':' || p + host >= end || p[host] != ' ')
		return p;
	t = p + host + 1;
	tag = word_len(t, end, 255);
	if (tag < 2 || t[tag - 1] != ':' || (t + tag < end && t[tag] != ' '))
		return p;
	if (!any_tag && !(tag == 7 && !memcmp(t, "kernel:", 7)) && t[tag - 2] != ']')
		return p;
	return t + tag < end ? t + tag + 1 : end;
}

/* syslog's "Nov 30 10:00:00[.123456] " (the journal's short, short-precise): past the blank */
static const char *
syslog_stamp(const char *p, const char *end, double *t, int year)
{
	struct tm tm;
	int mon;
	double frac;
	const char *q;

	if (end - p < 16 || p[3] != ' ' || (p[4] != ' ' && !isdigit((unsigned char)p[4])) ||
	    (mon = month_of(p, end)) < 0)
		return NULL;
	q = day_clock(p + 4, end, &tm, &frac);
	if (!q)
		return NULL;
	tm.tm_mon = mon;
	tm.tm_year = (year ? year : current_year()) - 1900;
	*t = utc_seconds(&tm) + frac;
	return q + 1;
}

/* syslog in a CJK locale: "11月 15 14:15:47 " (month, the character 月, day, time) */
static const char *
cjk_syslog_stamp(const char *p, const char *end, double *t, int year)
{
	struct tm tm;
	int used;
	long mon = num(p, end, 2, &used);
	double frac;
	const char *q;

	if (mon < 1 || mon > 12 || end - p < used + 14 || memcmp(p + used, "\xe6\x9c\x88 ", 4))
		return NULL;
	q = day_clock(p + used + 4, end, &tm, &frac);
	if (!q)
		return NULL;
	tm.tm_mon = (int)mon - 1;
	tm.tm_year = (year ? year : current_year()) - 1900;
	*t = utc_seconds(&tm) + frac;
	return q + 1;
}

/* "+hh:mm", "+hhmm", "-hh" or "Z" at *q: the offset in seconds; *q past it */
static long
zone_offset(const char **q, const char *end)
{
	int used, u2, sign;
	long hh, mm;

	if (*q < end && **q == 'Z') {
		(*q)++;
		return 0;
	}
	if (*q >= end || (**q != '+' && **q != '-'))
		return 0;
	sign = **q == '-' ? -1 : 1;
	hh = num(*q + 1, end, 2, &used);
	if (hh < 0)
		return 0;
	*q += 1 + used;
	if (*q < end && **q == ':')
		(*q)++;
	mm = num(*q, end, 2, &u2);
	*q += u2;
	return sign * (hh * 3600 + (mm > 0 ? mm : 0) * 60);
}

/*
 * "2026-11-30T10:00:00[.frac][Z|+hh:mm|+hhmm]" (also with a blank for the
 * T, as short-full writes it): past it.
 */
static const char *
iso_time(const char *p, const char *end, double *t)
{
	struct tm tm;
	int used;
	long y, mo, d, off;
	const char *q = p;
	double frac;

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
	q = fraction(q, end, &frac);
	off = zone_offset(&q, end);
	tm.tm_year = (int)y - 1900;
	tm.tm_mon = (int)mo - 1;
	tm.tm_mday = (int)d;
	*t = utc_seconds(&tm) + frac - (double)off;
	return q;
}

/* The same followed by a blank: past the blank. */
static const char *
iso_stamp(const char *p, const char *end, double *t)
{
	const char *q = iso_time(p, end, t);

	return q && q < end && *q == ' ' ? q + 1 : NULL;
}

/* Talos' kmsg and others: "[2024-05-20T02:46:53.856596762Z]: " or "[2026-11-30 10:00:00] " */
static const char *
iso_bracket(const char *p, const char *end, double *t)
{
	const char *q = iso_time(p + 1, end, t);

	if (!q || q >= end || *q != ']')
		return NULL;
	q++;
	if (q < end && *q == ':')
		q++;
	return q < end && *q == ' ' ? q + 1 : q;
}

/* dmesg -T's "[Mon Nov 30 10:00:00 2026] ..." (local time, taken as UTC) */
static const char *
ctime_stamp(const char *p, const char *end, double *t)
{
	struct tm tm;
	const char *q;
	int mon, used;
	long y;
	double frac;

	if (end - p < 26 || *p != '[' || p[4] != ' ')
		return NULL;
	mon = month_of(p + 5, end);
	if (mon < 0 || p[8] != ' ')
		return NULL;
	q = day_clock(p + 9, end, &tm, &frac);
	if (!q)
		return NULL;
	y = num(q + 1, end, 4, &used);
	if (used != 4 || q + 1 + used >= end || q[1 + used] != ']')
		return NULL;
	tm.tm_mon = mon;
	tm.tm_year = (int)y - 1900;
	*t = utc_seconds(&tm) + frac;
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

/* journalctl -o short-unix's "1700000000.123456 " (seconds since the epoch) */
static const char *
unix_stamp(const char *p, const char *end, double *t)
{
	int used;
	long s = num(p, end, 11, &used);
	double frac;
	const char *q;

	if (used < 9 || p + used >= end || p[used] != '.')
		return NULL;
	q = fraction(p + used, end, &frac);
	if (q == p + used || q >= end || *q != ' ')
		return NULL;
	*t = (double)s + frac;
	return q + 1;
}

/* journalctl -o short-full's "Mon 2026-11-30 10:00:00 UTC " */
static const char *
full_stamp(const char *p, const char *end, double *t)
{
	const char *q;
	size_t zone;

	if (end - p < 24 || p[3] != ' ' || p[8] != '-' || !isdigit((unsigned char)p[4]))
		return NULL;
	q = iso_stamp(p + 4, end, t);
	if (!q)
		return NULL;
	zone = word_len(q, end, 8);
	if (!zone || !isalpha((unsigned char)*q) || q + zone >= end || q[zone] != ' ')
		return q;
	return q + zone + 1;
}

/*
 * Go's klog (Kubernetes, the NVIDIA device plugin and GPU operator):
 * "I1130 10:00:00.123456       1 main.go:123] " (severity, month and day,
 * time, thread, file:line): past it, the time in *t.
 */
static const char *
glog_prefix(const char *p, const char *end, double *t, int year)
{
	struct tm tm;
	int used;
	long md;
	double frac;
	const char *q;
	size_t n;

	if (end - p < 22 || (*p != 'I' && *p != 'W' && *p != 'E' && *p != 'F'))
		return NULL;
	md = num(p + 1, end, 4, &used);
	if (used != 4 || p[5] != ' ' || md / 100 < 1 || md / 100 > 12 || md % 100 < 1)
		return NULL;
	memset(&tm, 0, sizeof(tm));
	q = clock_time(p + 6, end, &tm);
	if (!q)
		return NULL;
	q = fraction(q, end, &frac);
	while (q < end && *q == ' ')
		q++;
	while (q < end && isdigit((unsigned char)*q))
		q++;
	if (q >= end || *q != ' ')
		return NULL;
	n = word_len(++q, end, 128);
	if (!n || q[n - 1] != ']')
		return NULL;
	tm.tm_year = (year ? year : current_year()) - 1900;
	tm.tm_mon = (int)(md / 100) - 1;
	tm.tm_mday = (int)(md % 100);
	*t = utc_seconds(&tm) + frac;
	q += n;
	return q < end && *q == ' ' ? q + 1 : q;
}

static bool
in_list(const char *p, size_t n, const char *const *list)
{
	for (; *list; list++)
		if (**list == *p && strlen(*list) == n && !memcmp(p, *list, n))
			return true;
	return false;
}

/* dmesg -x's "kern  :err   : " (facility, level), Talos' "kern:     err: ": past it, or NULL */
static const char *
dmesg_level(const char *p, const char *end)
{
	static const char *const fac[] = { "kern",     "user",   "mail",   "daemon", "auth",
		                           "syslog",   "lpr",    "news",   "uucp",   "cron",
		                           "authpriv", "ftp",    "local0", "local1", "local2",
		                           "local3",   "local4", "local5", "local6", "local7",
		                           NULL };
	static const char *const lvl[] = { "emerg",   "alert",  "crit", "err",   "warn",
		                           "warning", "notice", "info", "debug", NULL };
	const char *q = p, *w;

	while (q < end && q - p <= 8 && isalnum((unsigned char)*q))
		q++;
	if (q - p < 3 || q - p > 8 || q >= end || (*q != ' ' && *q != ':') ||
	    !in_list(p, (size_t)(q - p), fac))
		return NULL;
	while (q < end && *q == ' ')
		q++;
	if (q >= end || *q != ':')
		return NULL;
	q++;
	while (q < end && *q == ' ') /* Talos: "kern:     err: " */
		q++;
	w = q;
	while (q < end && isalpha((unsigned char)*q))
		q++;
	if (!in_list(w, (size_t)(q - w), lvl))
		return NULL;
	while (q < end && *q == ' ')
		q++;
	if (q >= end || *q != ':')
		return NULL;
	return q + 1 < end && q[1] == ' ' ? q + 2 : q + 1;
}

/* talosctl -n NODE's "worker-01: " or "10.0.0.5: " before "kern: err: ": past it, or NULL */
static const char *
node_prefix(const char *p, const char *end)
{
	size_t n = word_len(p, end, 255);

	if (n < 2 || p[n - 1] != ':' || p + n + 1 >= end || p[n] != ' ' ||
	    !dmesg_level(p + n + 1, end))
		return NULL;
	return p + n + 1;
}

/* docker compose's "svc-1  | " (a name, blanks, a bar): past it, or NULL */
static const char *
compose_prefix(const char *p, const char *end)
{
	const char *q = p;

	while (q < end && q - p <= 64 &&
	       (isalnum((unsigned char)*q) || *q == '-' || *q == '_' || *q == '.'))
		q++;
	if (q == p || q - p > 64 || q >= end || *q != ' ')
		return NULL;
	while (q < end && *q == ' ')
		q++;
	if (end - q < 2 || q[0] != '|' || q[1] != ' ')
		return NULL;
	return q + 2;
}

/* kubectl logs --prefix's "[pod/NAME/CONTAINER] ": past it, or NULL */
static const char *
kubectl_prefix(const char *p, const char *end)
{
	const char *q;

	if (end - p < 8 || memcmp(p, "[pod/", 5))
		return NULL;
	q = memchr(p, ']', (size_t)(end - p));
	if (!q || memchr(p, ' ', (size_t)(q - p)))
		return NULL;
	return q + 1 < end && q[1] == ' ' ? q + 2 : q + 1;
}

/* A CRI log file's "stdout F " / "stderr P " after its stamp: past it, or p */
static const char *
cri_stream(const char *p, const char *end)
{
	if (end - p >= 9 && (!memcmp(p, "stdout ", 7) || !memcmp(p, "stderr ", 7)) &&
	    (p[7] == 'F' || p[7] == 'P') && p[8] == ' ')
		return p + 9;
	return p;
}

/*
 * RFC 5424's "1 2026-11-30T10:00:00Z host app procid msgid [sd] " after
 * its "<6>" (taken off already): past it, the stamp in *t, or NULL.
 */
static const char *
rfc5424_header(const char *p, const char *end, double *t, bool *timed)
{
	const char *q;

	if (end - p < 3 || p[0] != '1' || p[1] != ' ')
		return NULL;
	q = p + 2;
	if (*q == '-' && q + 1 < end && q[1] == ' ') {
		q += 2;
		*timed = false;
	} else if ((q = iso_stamp(q, end, t))) {
		*timed = true;
	} else {
		return NULL;
	}
	for (int field = 0; field < 3; field++) { /* host, app, procid */
		size_t n = word_len(q, end, 255);

		if (!n || q + n >= end)
			return NULL;
		q += n + 1;
	}
	{
		size_t n = word_len(q, end, 32); /* msgid */

		if (!n || q + n > end)
			return NULL;
		q += n;
	}
	if (q < end && *q == ' ')
		q++;
	if (q < end && *q == '-') {
		q++;
	} else {
		while (q < end && *q == '[') { /* structured data, its values quoted */
			const char *c = q + 1;

			while (c < end && *c != ']') {
				if (*c == '\\' && c + 1 < end)
					c++;
				c++;
			}
			q = c < end ? c + 1 : end;
		}
	}
	if (q < end && *q == ' ')
		q++;
	if (end - q >= 3 && !memcmp(q, "\xef\xbb\xbf", 3)) /* the BOM of a UTF-8 message */
		q += 3;
	return q;
}

/* One wrapper's worth of a line's prefixes, in the order they nest. */
struct klog_strip {
	const char *m, *end;
	double t;
	enum klog_clock clock;
	bool fence; /* a Markdown code fence: no message */
	int year;
};

/* Take a time found: a wall time before a time since boot, the outermost of each kind. */
static void
take_time(struct klog_strip *s, double t, enum klog_clock clock)
{
	if (s->clock == KLOG_NONE || (s->clock == KLOG_BOOT && clock == KLOG_WALL)) {
		s->t = t;
		s->clock = clock;
	}
}

/* After a stamp of a journal or syslog: its host and tag. */
static void
stamped(struct klog_strip *s, const char *q, double t, enum klog_clock clock, bool any_tag)
{
	take_time(s, t, clock);
	s->m = skip_host_tag(q, s->end, any_tag);
}

/* Past "] " (or "]") at p, or NULL when p is not at ']'. */
static const char *
close_bracket(const char *p, const char *end)
{
	if (p >= end || *p != ']')
		return NULL;
	return p + 1 < end && p[1] == ' ' ? p + 2 : p + 1;
}

/*
 * dmesg -H / --time-format reltime and -d: "[  +0.000844] " (the time since
 * the line before: no time of its own), "[Nov30 10:00] " (a wall time to the
 * minute, without a year), "[   12.345678 <    0.000123>] " (since boot, and
 * the delta): past it, the time in *t and *clock.
 */
static const char *
dmesg_rel_stamp(const char *p, const char *end, double *t, enum klog_clock *clock, int year)
{
	const char *q = p + 1;
	int used, mon;
	long day;

	while (q < end && *q == ' ')
		q++;
	if (q < end && *q == '+') {
		while (++q < end && (isdigit((unsigned char)*q) || *q == '.'))
			;
		*clock = KLOG_NONE;
		return close_bracket(q, end);
	}
	if ((mon = month_of(q, end)) >= 0 && (day = num(q + 3, end, 2, &used)) > 0 &&
	    q + 3 + used < end && q[3 + used] == ' ') {
		struct tm tm;
		long h, m;
		int u1, u2;

		memset(&tm, 0, sizeof(tm));
		q += 4 + used;
		h = num(q, end, 2, &u1);
		if (h < 0 || q + u1 >= end || q[u1] != ':')
			return NULL;
		m = num(q + u1 + 1, end, 2, &u2);
		if (m < 0)
			return NULL;
		tm.tm_year = (year ? year : current_year()) - 1900;
		tm.tm_mon = mon;
		tm.tm_mday = (int)day;
		tm.tm_hour = (int)h;
		tm.tm_min = (int)m;
		*t = utc_seconds(&tm);
		*clock = KLOG_WALL;
		return close_bracket(q + u1 + 1 + u2, end);
	}
	{
		long sec = num(q, end, 12, &used), frac;
		int uf;
		double div = 1;

		if (sec < 0 || q + used >= end || q[used] != '.')
			return NULL;
		frac = num(q + used + 1, end, 9, &uf);
		if (frac < 0)
			return NULL;
		for (int i = 0; i < uf; i++)
			div *= 10;
		q += used + 1 + uf;
		while (q < end && *q == ' ')
			q++;
		if (q >= end || *q != '<')
			return NULL;
		q = memchr(q, '>', (size_t)(end - q));
		if (!q)
			return NULL;
		*t = (double)sec + (double)frac / div;
		*clock = KLOG_BOOT;
		return close_bracket(q + 1, end);
	}
}

static bool
strip_bracket(struct klog_strip *s)
{
	const char *q;
	double t;
	enum klog_clock clock;

	if ((q = boot_stamp(s->m, s->end, &t))) {
		/* journalctl -o short-monotonic: "[  12.3] host kernel: msg" */
		stamped(s, q, t, KLOG_BOOT, false);
	} else if ((q = ctime_stamp(s->m, s->end, &t)) || (q = iso_bracket(s->m, s->end, &t))) {
		take_time(s, t, KLOG_WALL);
		s->m = q;
	} else if ((q = kubectl_prefix(s->m, s->end))) {
		s->m = q;
	} else if ((q = dmesg_rel_stamp(s->m, s->end, &t, &clock, s->year))) {
		if (clock != KLOG_NONE)
			take_time(s, t, clock);
		s->m = q;
	} else {
		return false;
	}
	return true;
}

static bool
strip_digit(struct klog_strip *s)
{
	const char *q;
	double t;

	if ((q = iso_stamp(s->m, s->end, &t))) {
		const char *r = cri_stream(q, s->end);

		if (r != q) {
			take_time(s, t, KLOG_WALL);
			s->m = r;
		} else {
			stamped(s, q, t, KLOG_WALL, false);
		}
	} else if ((q = iso_time(s->m, s->end, &t)) && s->end - q > 2 && q[0] == ':' &&
	           q[1] == ' ') {
		/* TensorFlow's and absl's "2022-07-10 15:08:09.276131: W ..." */
		take_time(s, t, KLOG_WALL);
		s->m = q + 2;
	} else if ((q = cjk_syslog_stamp(s->m, s->end, &t, s->year))) {
		stamped(s, q, t, KLOG_WALL, true);
	} else if ((q = unix_stamp(s->m, s->end, &t))) {
		stamped(s, q, t, KLOG_WALL, false);
	} else if ((q = kmsg_stamp(s->m, s->end, &t))) {
		take_time(s, t, KLOG_BOOT);
		s->m = q;
	} else {
		return false;
	}
	return true;
}

static bool
strip_word(struct klog_strip *s)
{
	const char *q;
	double t;

	if ((q = syslog_stamp(s->m, s->end, &t, s->year))) {
		stamped(s, q, t, KLOG_WALL, true);
	} else if ((q = full_stamp(s->m, s->end, &t))) {
		stamped(s, q, t, KLOG_WALL, true);
	} else if ((q = glog_prefix(s->m, s->end, &t, s->year))) {
		take_time(s, t, KLOG_WALL);
		s->m = q;
	} else if ((q = dmesg_level(s->m, s->end)) || (q = compose_prefix(s->m, s->end)) ||
	           (q = node_prefix(s->m, s->end))) {
		s->m = q;
	} else if (s->end - s->m > 8 && !memcmp(s->m, "kernel: ", 8)) {
		s->m += 8;
	} else if (s->end - s->m > 8 && !memcmp(s->m, "MESSAGE=", 8)) {
		s->m += 8; /* journalctl -o export, -o verbose (indented) */
	} else {
		return false;
	}
	return true;
}

/* "<6>" (syslog's priority), then RFC 5424's header when it has one */
static bool
strip_priority(struct klog_strip *s)
{
	const char *q = s->m + 1, *r;
	double t;
	bool timed = false;
	int used;

	if (num(q, s->end, 3, &used) < 0 || q + used >= s->end || q[used] != '>')
		return false;
	q += used + 1;
	if ((r = rfc5424_header(q, s->end, &t, &timed))) {
		if (timed)
			take_time(s, t, KLOG_WALL);
		q = r;
	}
	s->m = q;
	return true;
}

/*
 * A line that starts with a code fence: "```" or "```text" alone opens or
 * closes a block (no message); "```CUDA error 2 at ...: out of memory```"
 * is the one line of code inside it: its text, the closing fence off.
 */
static const char *
fence(struct klog_strip *s, const char *p)
{
	char c = *p;
	const char *q = p;

	while (q < s->end && *q == c)
		q++;
	if (!memchr(q, ' ', (size_t)(s->end - q))) {
		s->fence = true;
		return s->end;
	}
	while (s->end > q && s->end[-1] == c)
		s->end--;
	return q;
}

/* Markdown: "> " quotes, "```" fences; indentation. */
static bool
strip_markup(struct klog_strip *s)
{
	const char *p = s->m;

	if (*p == ' ' || *p == '\t') {
		while (p < s->end && (*p == ' ' || *p == '\t'))
			p++;
	} else if (*p == '>') {
		p++;
		if (p < s->end && *p == ' ')
			p++;
	} else if (s->end - p >= 3 && (!memcmp(p, "```", 3) || !memcmp(p, "~~~", 3))) {
		p = fence(s, p);
	} else {
		return false;
	}
	s->m = p;
	return true;
}

/*
 * grep's "FILE:" and "LINE:" ("grep -rn NVRM /var/log": "/var/log/kern.log:12:Nov 30 ..."),
 * taken off only when a time stamp follows them.
 */
static bool
strip_grep(struct klog_strip *s)
{
	const char *p = s->m, *end = s->end, *colon, *q, *r;
	size_t n = (size_t)(end - p) < 256 ? (size_t)(end - p) : 256;
	double t;

	colon = memchr(p, ':', n);
	if (!colon || colon == p || memchr(p, ' ', (size_t)(colon - p)))
		return false;
	q = colon + 1;
	for (r = q; r < end && isdigit((unsigned char)*r); r++)
		;
	if (r > q && r < end && *r == ':')
		q = r + 1;
	if (q >= end)
		return false;
	if (!(*q == '['                    ? boot_stamp(q, end, &t) || ctime_stamp(q, end, &t)
	      : isdigit((unsigned char)*q) ? iso_stamp(q, end, &t) != NULL
	                                   : syslog_stamp(q, end, &t, s->year) != NULL))
		return false;
	s->m = q;
	return true;
}

/* Take one wrapper off s->m; false when there is none left. */
static bool
strip_one(struct klog_strip *s)
{
	unsigned char c;

	if (s->m >= s->end)
		return false;
	c = (unsigned char)*s->m;
	if (strip_markup(s))
		return true;
	if (c == '[')
		return strip_bracket(s);
	if (c == '<')
		return strip_priority(s);
	if (isdigit(c)) {
		const char *q;

		if (strip_digit(s) || strip_grep(s))
			return true;
		if (!(q = node_prefix(s->m, s->end)))
			return false;
		s->m = q;
		return true;
	}
	if (c == '/')
		return strip_grep(s);
	if (isalpha(c))
		return strip_word(s);
	return false;
}

/* The first "NVRM: " in [p, end) right after the quote character c, or NULL. */
static const char *
quoted_mark(const char *p, const char *end, char c)
{
	while ((p = memchr(p, c, (size_t)(end - p))) && end - p > 6) {
		if (!memcmp(p + 1, "NVRM: ", 6))
			return p + 1;
		p++;
	}
	return NULL;
}

/*
 * A kernel line quoted inside prose: 'kernel output is: "NVRM: Xid ..."' or
 * in `backticks`: the quoted line, when the message does not start with it
 * and the line has no time of its own.
 */
static void
strip_quoted(struct klog_strip *s)
{
	const char *q, *close;

	/* prose has no time stamp: a stamped line is the log's own */
	if (s->clock != KLOG_NONE || s->end - s->m < 8 || !memcmp(s->m, "NVRM: ", 6))
		return;
	q = quoted_mark(s->m, s->end, '"');
	if (!q)
		q = quoted_mark(s->m, s->end, '`');
	if (!q)
		return;
	close = memchr(q, q[-1], (size_t)(s->end - q));
	if (close)
		s->end = close;
	s->m = q;
}

bool
klog_next(const char *text, size_t len, size_t *pos, struct klog_line *out, int year)
{
	const char *p, *nl;
	struct klog_strip s;

	if (*pos >= len)
		return false;
	p = text + *pos;
	nl = memchr(p, '\n', len - *pos);
	memset(&s, 0, sizeof(s));
	s.m = p;
	s.end = nl ? nl : text + len;
	s.year = year;
	*pos = (size_t)(s.end - text) + (nl ? 1 : 0);
	out->lineno++;
	if (s.end > p && s.end[-1] == '\r')
		s.end--;
	/* each wrapper at most a few times over: linear in the line, whatever it holds */
	for (int i = 0; i < 16 && strip_one(&s); i++)
		;
	strip_quoted(&s);
	out->msg = s.m;
	out->len = (size_t)(s.end - s.m);
	out->t = s.t;
	out->clock = s.clock;
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
