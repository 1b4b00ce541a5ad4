/*
 * Tests of the kernel-log line splitter and event table (src/doctor/klog.c):
 * every time-stamp format, CRLF, a missing final newline, empty and huge
 * lines, and repeats counted as one event with its first and last line.
 */
#include "doctor/klog.h"

#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "harness.h"

/* The first line of text: its message (as a string) and time. */
static struct klog_line
one(const char *text, char *msg, size_t size)
{
	struct klog_line l = { 0 };
	size_t pos = 0;

	if (!klog_next(text, strlen(text), &pos, &l, 2026))
		l.len = 0, l.msg = "";
	snprintf(msg, size, "%.*s", (int)l.len, l.msg);
	return l;
}

static void
test_formats(void)
{
	char m[256], w[64];
	struct klog_line l;

	l = one("[   12.345678] NVRM: hello\n", m, sizeof(m));
	ok(l.clock == KLOG_BOOT && !strcmp(m, "NVRM: hello"), "dmesg: message");
	is_dbl(l.t, 12.345678, 1e-9, "dmesg: seconds since boot");
	is_str(klog_when(&l, w, sizeof(w)), "[   12.345678]", "dmesg: when");

	l = one("[Mon Nov 30 10:00:01 2026] NVRM: hello", m, sizeof(m));
	ok(l.clock == KLOG_WALL && !strcmp(m, "NVRM: hello"), "dmesg -T: message");
	is_str(klog_when(&l, w, sizeof(w)), "2026-11-30 10:00:01 UTC", "dmesg -T: when");

	l = one("Nov  3 10:00:02 host kernel: [ 5.5] NVRM: hello", m, sizeof(m));
	ok(l.clock == KLOG_WALL && !strcmp(m, "NVRM: hello"),
	   "syslog with the kernel's stamp: message (%s)", m);
	is_str(klog_when(&l, w, sizeof(w)), "2026-11-03 10:00:02 UTC", "syslog: year given");

	l = one("Nov 30 10:00:03 host CRON[123]: (root) CMD x", m, sizeof(m));
	is_str(m, "(root) CMD x", "syslog: another program's line, after its tag");

	l = one("2026-11-30T10:00:04.250+02:00 host kernel: NVRM: hello", m, sizeof(m));
	ok(l.clock == KLOG_WALL && !strcmp(m, "NVRM: hello"), "ISO: message");
	is_dbl(fmod(l.t, 86400), 8 * 3600 + 4.25, 1e-6, "ISO: offset and fraction");

	l = one("2026-11-30 10:00:05 host kernel: NVRM: x", m, sizeof(m));
	ok(l.clock == KLOG_WALL && !strcmp(m, "NVRM: x"), "ISO with a blank");

	l = one("[   33.000001] host kernel: NVRM: mono", m, sizeof(m));
	ok(l.clock == KLOG_BOOT && !strcmp(m, "NVRM: mono"), "journalctl -o short-monotonic");

	l = one("6,1234,5678901,-;NVRM: kmsg\n", m, sizeof(m));
	ok(l.clock == KLOG_BOOT && !strcmp(m, "NVRM: kmsg"), "kmsg: message");
	is_dbl(l.t, 5.678901, 1e-9, "kmsg: microseconds");

	l = one("NVRM: bare", m, sizeof(m));
	ok(l.clock == KLOG_NONE && !strcmp(m, "NVRM: bare"), "no stamp");
	is_str(klog_when(&l, w, sizeof(w)), "line 1", "no stamp: the line number");

	l = one("[not a stamp] x", m, sizeof(m));
	ok(l.clock == KLOG_NONE && !strcmp(m, "[not a stamp] x"), "a bracket that is no stamp");
	l = one("12345 not kmsg", m, sizeof(m));
	ok(l.clock == KLOG_NONE && !strcmp(m, "12345 not kmsg"), "digits that are no stamp");
	l = one("Nov", m, sizeof(m));
	ok(l.clock == KLOG_NONE && !strcmp(m, "Nov"), "a short line");
	l = one("[   12.5", m, sizeof(m));
	ok(l.clock == KLOG_NONE && !strcmp(m, "[   12.5"), "a cut stamp");
}

static void
test_lines(void)
{
	const char *text = "[1.0] a\r\n\r\n\n[2.0] b\r\n[3.0] c";
	struct klog_line l = { 0 };
	size_t pos = 0, n = 0;
	char got[64] = "";

	while (klog_next(text, strlen(text), &pos, &l, 0)) {
		n++;
		strncat(got, l.msg, l.len);
		strncat(got, "|", 2);
	}
	is_int(n, 5, "CRLF, empty lines, no final newline: five lines");
	is_str(got, "a|||b|c|", "no CR left in a message");
	is_int(l.lineno, 5, "line numbers");
	ok(!klog_next(text, strlen(text), &pos, &l, 0), "the end");
	pos = 0;
	ok(!klog_next("", 0, &pos, &l, 0), "an empty log has no line");

	{
		struct strbuf sb = STRBUF_INIT;

		strbuf_addstr(&sb, "[ 9.0] ");
		for (int i = 0; i < 1 << 20; i++)
			strbuf_addch(&sb, 'x');
		strbuf_addstr(&sb, "\n[10.0] after");
		memset(&l, 0, sizeof(l));
		pos = 0;
		ok(klog_next(sb.buf, sb.len, &pos, &l, 0) && l.len == 1u << 20, "a 1 MiB line");
		ok(klog_next(sb.buf, sb.len, &pos, &l, 0) && l.len == 5 && l.t == 10.0,
		   "the line after it");
		strbuf_release(&sb);
	}
}

static void
test_events(void)
{
	struct klog_events ev = KLOG_EVENTS_INIT;
	static const char kind_a[] = "a", kind_b[] = "b";
	struct klog_line l = { 0 };
	struct klog_event *e = NULL;

	l.clock = KLOG_BOOT;
	for (int i = 0; i < 1000; i++) {
		l.t = i;
		l.lineno = (size_t)i + 1;
		e = klog_event_add(&ev, kind_a, &l, "xid %d %s", 79, "0000:3b:00");
		klog_event_add(&ev, kind_a, &l, "other %d", i % 100);
	}
	klog_event_add(&ev, kind_b, &l, "xid %d %s", 79, "0000:3b:00");
	is_int(ev.nr, 102, "one event per key and kind");
	e = &ev.v[0];
	ok(!strcmp(e->key, "xid 79 0000:3b:00") && e->count == 1000, "repeats counted");
	ok(e->first.t == 0 && e->last.t == 999 && e->first.lineno == 1 && e->last.lineno == 1000,
	   "first and last line");
	ok(ev.v[1].count == 10 && ev.v[1].order == 1, "order of first appearance");
	ok(ev.v[101].kind == kind_b && ev.v[101].count == 1, "another kind: its own event");
	klog_events_release(&ev);
	ok(ev.nr == 0 && !ev.v, "released");
}

int
main(void)
{
	test_formats();
	test_lines();
	test_events();
	return done_testing();
}
