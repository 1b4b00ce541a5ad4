/*
 * Tests of klog_next() on every shape a kernel log is pasted in: the same
 * NVRM line in dmesg (plain, -T, --time-format iso, -x), the journal's
 * output formats, syslog and rsyslog files (RFC 3164, RFC 5424), kmsg
 * records, kubectl, CRI, docker and docker compose prefixes, Markdown
 * quotes, code fences, indentation and CRLF, alone and nested, gives the
 * same message and the same time. Lines of other programs keep their own
 * words ("modprobe: FATAL: ...").
 * Then the loader (logread.c) on bytes: the journal's JSON (strings with
 * escapes, MESSAGE as bytes, json-seq), docker's json-file, gzip of two
 * members, a gzip bomb, an nvidia-bug-report's base64 and repeated
 * sections, a NUL byte, devcoredumps.
 */
#include "doctor/klog.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "core/strbuf.h"
#include "doctor/logread.h"
#include "harness.h"

#define MSG "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus."
/* 2026-11-30 10:00:00 UTC */
#define WALL 1796032800.0

struct shape {
	const char *name;
	const char *line; /* holds MSG */
	enum klog_clock clock;
	double t; /* WALL + fraction, or seconds since boot */
};

static const struct shape shapes[] = {
	{ "bare message", MSG, KLOG_NONE, 0 },
	{ "dmesg", "[   12.345678] " MSG, KLOG_BOOT, 12.345678 },
	{ "dmesg -T", "[Mon Nov 30 10:00:00 2026] " MSG, KLOG_WALL, WALL },
	{ "dmesg --time-format iso", "2026-11-30T10:00:00,123456+00:00 " MSG, KLOG_WALL,
	  WALL + 0.123456 },
	{ "dmesg -H (a delta)", "[  +0.000844] " MSG, KLOG_NONE, 0 },
	{ "dmesg -H (a minute)", "[Nov30 10:00] " MSG, KLOG_WALL, WALL },
	{ "dmesg -d", "[   12.345678 <    0.000123>] " MSG, KLOG_BOOT, 12.345678 },
	{ "dmesg -x", "kern  :err   : [   12.345678] " MSG, KLOG_BOOT, 12.345678 },
	{ "dmesg -x without a time", "kern  :warn  : " MSG, KLOG_NONE, 0 },
	{ "journalctl -o short", "Nov 30 10:00:00 gpu-node-7 kernel: " MSG, KLOG_WALL, WALL },
	{ "journalctl -o short-iso", "2026-11-30T10:00:00+0000 gpu-node-7 kernel: " MSG, KLOG_WALL,
	  WALL },
	{ "journalctl -o short-iso (newer)", "2026-11-30T11:00:00+01:00 gpu-node-7 kernel: " MSG,
	  KLOG_WALL, WALL },
	{ "journalctl -o short-iso-precise",
	  "2026-11-30T10:00:00.123456+0000 gpu-node-7 kernel: " MSG, KLOG_WALL, WALL + 0.123456 },
	{ "syslog in a CJK locale", "11\xe6\x9c\x88 30 10:00:00 gpu-node-7 kernel: " MSG, KLOG_WALL,
	  WALL },
	{ "TensorFlow's stamp", "2026-11-30 10:00:00.123456: " MSG, KLOG_WALL, WALL + 0.123456 },
	{ "journalctl -o short-precise", "Nov 30 10:00:00.123456 gpu-node-7 kernel: " MSG,
	  KLOG_WALL, WALL + 0.123456 },
	{ "journalctl -o short-full", "Mon 2026-11-30 10:00:00 UTC gpu-node-7 kernel: " MSG,
	  KLOG_WALL, WALL },
	{ "journalctl -o short-monotonic", "[   12.345678] gpu-node-7 kernel: " MSG, KLOG_BOOT,
	  12.345678 },
	{ "journalctl -o short-unix", "1796032800.123456 gpu-node-7 kernel: " MSG, KLOG_WALL,
	  WALL + 0.123456 },
	{ "journalctl -o with-unit", "Mon 2026-11-30 10:00:00 UTC gpu-node-7 kernel: " MSG,
	  KLOG_WALL, WALL },
	{ "syslog with the kernel's stamp",
	  "Nov 30 10:00:00 gpu-node-7 kernel: [   12.345678] " MSG, KLOG_WALL, WALL },
	{ "syslog with a priority", "<4>Nov 30 10:00:00 gpu-node-7 kernel: " MSG, KLOG_WALL, WALL },
	{ "rsyslog RFC 5424", "<4>1 2026-11-30T10:00:00.123456+00:00 gpu-node-7 kernel - - - " MSG,
	  KLOG_WALL, WALL + 0.123456 },
	{ "rsyslog RFC 5424 with structured data",
	  "<4>1 2026-11-30T10:00:00Z gpu-node-7 kernel - - [meta seq=\"1\\]\"] " MSG, KLOG_WALL,
	  WALL },
	{ "rsyslog file (RFC 3339 stamps)",
	  "2026-11-30T10:00:00.123456+00:00 gpu-node-7 kernel: " MSG, KLOG_WALL, WALL + 0.123456 },
	{ "kmsg record", "4,1234,12345678,-;" MSG, KLOG_BOOT, 12.345678 },
	{ "/proc/kmsg", "<4>[   12.345678] " MSG, KLOG_BOOT, 12.345678 },
	{ "kubectl logs --timestamps", "2026-11-30T10:00:00.123456789Z " MSG, KLOG_WALL,
	  WALL + 0.123456789 },
	{ "kubectl logs --prefix", "[pod/dcgm-exporter-x7k2p/exporter] " MSG, KLOG_NONE, 0 },
	{ "kubectl logs --prefix --timestamps",
	  "[pod/dcgm-exporter-x7k2p/exporter] 2026-11-30T10:00:00.123456789Z " MSG, KLOG_WALL,
	  WALL + 0.123456789 },
	{ "CRI log file", "2026-11-30T10:00:00.123456789Z stdout F " MSG, KLOG_WALL,
	  WALL + 0.123456789 },
	{ "docker logs -t", "2026-11-30T10:00:00.123456789Z " MSG, KLOG_WALL, WALL + 0.123456789 },
	{ "Talos' kmsg", "kern:     err: [2026-11-30T10:00:00.123456789Z]: " MSG, KLOG_WALL,
	  WALL + 0.123456789 },
	{ "Talos' kmsg, a warning", " kern: warning: [2026-11-30T10:00:00Z]: " MSG, KLOG_WALL,
	  WALL },
	{ "talosctl -n NODE dmesg", "worker-01: kern:    info: [2026-11-30T10:00:00Z]: " MSG,
	  KLOG_WALL, WALL },
	{ "talosctl -n IP dmesg", "10.5.0.2: kern:     err: [2026-11-30T10:00:00Z]: " MSG,
	  KLOG_WALL, WALL },
	{ "one line of fenced code", "```" MSG "```", KLOG_NONE, 0 },
	{ "Go's klog (device plugin)", "E1130 10:00:00.123456       1 main.go:123] " MSG, KLOG_WALL,
	  WALL + 0.123456 },
	{ "docker compose", "trainer-1  | " MSG, KLOG_NONE, 0 },
	{ "docker compose of a journal", "trainer-1  | Nov 30 10:00:00 gpu-node-7 kernel: " MSG,
	  KLOG_WALL, WALL },
	{ "grep -r of /var/log", "/var/log/kern.log:Nov 30 10:00:00 gpu-node-7 kernel: " MSG,
	  KLOG_WALL, WALL },
	{ "grep -rn of /var/log", "/var/log/kern.log.1:42:[   12.345678] " MSG, KLOG_BOOT,
	  12.345678 },
	{ "grep -n of dmesg", "42:[   12.345678] " MSG, KLOG_BOOT, 12.345678 },
	{ "Markdown quote", "> " MSG, KLOG_NONE, 0 },
	{ "Markdown quote of dmesg", "> [   12.345678] " MSG, KLOG_BOOT, 12.345678 },
	{ "nested Markdown quote of the journal", "> > Nov 30 10:00:00 gpu-node-7 kernel: " MSG,
	  KLOG_WALL, WALL },
	{ "indented", "    [   12.345678] " MSG, KLOG_BOOT, 12.345678 },
	{ "indented with a tab", "\t" MSG, KLOG_NONE, 0 },
	{ "CRLF", "[   12.345678] " MSG "\r", KLOG_BOOT, 12.345678 },
	{ "quoted and indented kubectl CRI", ">     2026-11-30T10:00:00Z stderr P " MSG, KLOG_WALL,
	  WALL },
	{ "journalctl -o verbose", "    MESSAGE=" MSG, KLOG_NONE, 0 },
	{ "journalctl -o export", "MESSAGE=" MSG, KLOG_NONE, 0 },
	{ "a bare 'kernel:' tag", "kernel: " MSG, KLOG_NONE, 0 },
	{ "dmesg with a 'kernel:' tag", "[   12.345678] kernel: " MSG, KLOG_BOOT, 12.345678 },
	{ "quoted in prose", "However, kernel output is: \"" MSG "\"", KLOG_NONE, 0 },
	{ "in backticks", "> I get `" MSG "` every time", KLOG_NONE, 0 },
};

static void
one(const char *text, struct klog_line *l)
{
	size_t pos = 0;

	memset(l, 0, sizeof(*l));
	if (!klog_next(text, strlen(text), &pos, l, 2026))
		l->msg = "", l->len = 0;
}

static void
test_shapes(void)
{
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		const struct shape *s = &shapes[i];
		struct klog_line l;
		char msg[256];

		one(s->line, &l);
		snprintf(msg, sizeof(msg), "%.*s", (int)l.len, l.msg);
		is_str(msg, MSG, "%s: the bare message", s->name);
		ok(l.clock == s->clock && fabs(l.t - s->t) < 1e-5, "%s: its time (clock %d, %.6f)",
		   s->name, (int)l.clock, l.t);
	}
}

/* Other programs' lines, and words that look like a prefix, keep their text. */
static void
test_kept(void)
{
	static const struct {
		const char *line, *msg;
	} cases[] = {
		{ "modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0",
		  "modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0" },
		{ "2026-11-30T10:00:00Z modprobe: FATAL: Module nvidia not found",
		  "modprobe: FATAL: Module nvidia not found" },
		{ "Nov 30 10:00:00 gpu-node-7 python3[4242]: RuntimeError: CUDA error: out of memory",
		  "RuntimeError: CUDA error: out of memory" },
		{ "[   12.345678] pci 0000:3b:00.0: [10de:2330] type 00 class 0x030200",
		  "pci 0000:3b:00.0: [10de:2330] type 00 class 0x030200" },
		{ "[   12.345678] usb 1-1: new high-speed USB device number 2",
		  "usb 1-1: new high-speed USB device number 2" },
		{ "[drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout",
		  "[drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout" },
		{ "| NVIDIA-SMI 535.54.03    Driver Version: 535.54.03    CUDA Version: 12.2 |",
		  "| NVIDIA-SMI 535.54.03    Driver Version: 535.54.03    CUDA Version: 12.2 |" },
		{ "/usr/bin/nvidia-smi: error while loading shared libraries: libnvidia-ml.so.1",
		  "/usr/bin/nvidia-smi: error while loading shared libraries: libnvidia-ml.so.1" },
		{ "Failed to initialize NVML: Driver/library version mismatch",
		  "Failed to initialize NVML: Driver/library version mismatch" },
		{ "```", "" },
		{ "```text", "" },
		{ "", "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct klog_line l;
		char msg[256];

		one(cases[i].line, &l);
		snprintf(msg, sizeof(msg), "%.*s", (int)l.len, l.msg);
		is_str(msg, cases[i].msg, "kept: %s", cases[i].line[0] ? cases[i].line : "(empty)");
	}
}

/* Lines in a row: the numbers, the last line without a newline, a NUL-free walk. */
static void
test_lines(void)
{
	const char *text = "```\r\n> [   1.000000] a\r\n\r\nb";
	struct klog_line l = { 0 };
	size_t pos = 0, n = 0;
	char got[64] = "";

	while (klog_next(text, strlen(text), &pos, &l, 0)) {
		n++;
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%zu:%.*s;", l.lineno,
		         (int)l.len, l.msg);
	}
	is_int(n, 4, "four lines");
	is_str(got, "1:;2:a;3:;4:b;", "each line's message");
}

/* A long line of prefixes takes bounded work and returns. */
static void
test_many_prefixes(void)
{
	static char text[8192];
	struct klog_line l;
	size_t n = 0;

	while (n + 2 < sizeof(text) - 1) {
		text[n++] = '>';
		text[n++] = ' ';
	}
	text[n] = '\0';
	one(text, &l);
	ok(l.len > 0 && l.msg[0] == '>', "a line of 4096 quote marks: at most 16 taken off");
}

/* dr_log_text() on len bytes of data; its text, or the reason it gave. */
static const char *
load(const char *data, size_t len, size_t max, struct strbuf *out)
{
	static char why[256];

	strbuf_reset(out);
	if (dr_log_text("t.log", data, len, out, max, why, sizeof(why)) < 0)
		return why;
	return out->buf;
}

/* The bare messages of text, each followed by '|'. */
static const char *
messages(const char *text)
{
	static char buf[2048];
	struct klog_line l = { 0 };
	size_t pos = 0, len = strlen(text);

	buf[0] = '\0';
	while (klog_next(text, len, &pos, &l, 2026))
		if (l.len)
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%.*s|", (int)l.len,
			         l.msg);
	return buf;
}

static void
test_journal_json(void)
{
	static const char json[] =
	        "{\"__CURSOR\":\"s=1\",\"__REALTIME_TIMESTAMP\":\"1796032800123456\","
	        "\"_TRANSPORT\":\"kernel\",\"_HOSTNAME\":\"n7\",\"MESSAGE\":\"" MSG "\"}\n"
	        "{\"__REALTIME_TIMESTAMP\":\"1796032801000000\",\"_TRANSPORT\":\"stdout\","
	        "\"SYSLOG_IDENTIFIER\":\"python3\",\"_PID\":\"42\",\"MESSAGE\":\"Traceback:\\n"
	        "RuntimeError: caf\\u00e9 \\\"x\\\" \\ud83d\\ude00\",\"N\":[1,{\"a\":2}],\"B\":null}\n"
	        "{\"__REALTIME_TIMESTAMP\":\"1796032802000000\",\"_TRANSPORT\":\"kernel\","
	        "\"MESSAGE\":[78,86,82,77,58,32,120,255]}\n";
	static const char seq[] = "\x1e{\"__REALTIME_TIMESTAMP\":\"1796032800000000\","
	                          "\"MESSAGE\":\"a\"}\n\x1e{\n \"__REALTIME_TIMESTAMP\" : "
	                          "\"1796032800000000\",\n \"MESSAGE\" : \"b\"\n}\n";
	struct strbuf out = STRBUF_INIT;
	struct klog_line l = { 0 };
	size_t pos = 0;
	const char *text = load(json, sizeof(json) - 1, 1 << 20, &out);

	is_str(messages(text),
	       MSG "|Traceback:|RuntimeError: caf\xc3\xa9 \"x\" \xf0\x9f\x98\x80|NVRM: x\xff|",
	       "journal JSON: each record's lines, escapes and byte arrays decoded");
	klog_next(text, strlen(text), &pos, &l, 0);
	ok(l.clock == KLOG_WALL && fabs(l.t - (WALL + 0.123456)) < 1e-5,
	   "journal JSON: the time from __REALTIME_TIMESTAMP");
	is_str(messages(load(seq, sizeof(seq) - 1, 1 << 20, &out)), "a|b|",
	       "json-seq and json-pretty records");
	{
		static const char docker[] = "{\"log\":\"" MSG "\\n\",\"stream\":\"stderr\","
		                             "\"time\":\"2026-11-30T10:00:00.5Z\"}\n";

		text = load(docker, sizeof(docker) - 1, 1 << 20, &out);
		pos = 0;
		memset(&l, 0, sizeof(l));
		klog_next(text, strlen(text), &pos, &l, 0);
		ok(l.len == strlen(MSG) && !memcmp(l.msg, MSG, l.len) &&
		           fabs(l.t - WALL - 0.5) < 1e-6,
		   "docker's json-file log: the message and its time");
	}
	strbuf_release(&out);
}

/* data gzip'd into out (one member) */
static void
gzip_into(struct strbuf *out, const char *data, size_t len)
{
	z_stream z;
	char buf[1 << 16];

	memset(&z, 0, sizeof(z));
	deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
	z.next_in = (unsigned char *)(size_t)data;
	z.avail_in = (uInt)len;
	do {
		z.next_out = (unsigned char *)buf;
		z.avail_out = sizeof(buf);
		deflate(&z, Z_FINISH);
		strbuf_add(out, buf, sizeof(buf) - z.avail_out);
	} while (z.avail_out == 0);
	deflateEnd(&z);
}

static void
test_gzip(void)
{
	struct strbuf gz = STRBUF_INIT, out = STRBUF_INIT, big = STRBUF_INIT;
	const char *got;

	gzip_into(&gz, "[   1.000000] a\n", 16);
	gzip_into(&gz, "b\n", 2);
	is_str(messages(load(gz.buf, gz.len, 1 << 20, &out)), "a|b|", "gzip: two members");
	strbuf_addchars(&big, 'x', 100000);
	strbuf_reset(&gz);
	gzip_into(&gz, big.buf, big.len);
	got = load(gz.buf, gz.len, 4096, &out);
	ok(strstr(got, "t.log: inflates to over") != NULL, "a gzip bomb is an error: %s", got);
	got = load(gz.buf, gz.len, 1 << 20, &out);
	ok(out.len == 100000, "gzip: all of a member that inflates to many buffers (%zu)", out.len);
	got = load(gz.buf, gz.len / 2, 1 << 20, &out);
	ok(strlen(got) > 0 && strlen(got) < 100000, "a truncated gzip: what came (%zu bytes)",
	   strlen(got));
	got = load("\x1f\x8bnot gzip at all", 17, 1 << 20, &out);
	ok(strstr(got, "not valid gzip") != NULL, "corrupt gzip: %s", got);
	got = load("\xfd"
	           "7zXZ\0\0\0",
	           8, 1 << 20, &out);
	ok(strstr(got, "compressed with xz") != NULL, "xz: %s", got);
	strbuf_release(&gz);
	strbuf_release(&big);
	strbuf_release(&out);
}

static void
test_bug_report(void)
{
	static const char report[] =
	        "Start of NVIDIA bug report log file.  Please include this file\n\n"
	        "nvidia-bug-report.sh Version: 34000000\n\n"
	        "____________________________________________\n\n"
	        "Scanning kernel log files for NVIDIA kernel messages:\n\n"
	        "  journalctl -b -0:\n"
	        "Nov 30 10:00:00 n7 kernel: " MSG "\n"
	        "Nov 30 10:00:01 n7 kernel: " MSG "\n"
	        "____________________________________________\n\n"
	        "base64 \"/var/log/nvidia-installer.log\"\n\n"
	        "TlZSTTogWGlkIChQQ0k6MDAwMDozYjowMCk6IDc5\n"
	        "NVRM: Xid looks like base64 but is inside the block\n\n"
	        "____________________________________________\n\n"
	        "dmesg:\n\n"
	        "[   12.345678] " MSG "\n"
	        "[   12.345679] " MSG "\n"
	        "[   13.000000] NVRM: only in dmesg\n";
	struct strbuf out = STRBUF_INIT;

	is_str(messages(load(report, sizeof(report) - 1, 1 << 20, &out)),
	       "Start of NVIDIA bug report log file.  Please include this file|"
	       "nvidia-bug-report.sh Version: 34000000|"
	       "____________________________________________|"
	       "Scanning kernel log files for NVIDIA kernel messages:|journalctl -b -0:|" MSG
	       "|" MSG "|____________________________________________|"
	       "base64 \"/var/log/nvidia-installer.log\"|"
	       "____________________________________________|dmesg:|NVRM: only in dmesg|",
	       "bug report: base64 skipped, the dmesg section's repeats of the journal's dropped");
	strbuf_release(&out);
}

static void
test_nul_and_coredumps(void)
{
	static const char nul[] = "a\0b\nc\n";
	static const char amd[] =
	        "**** AMDGPU Device Coredump ****\nversion: 1\nkernel: 6.7.0\n"
	        "module: amdgpu\ntime: 29.725011811\nprocess_name: game PID: 17\n\n"
	        "Ring timed out details\nIP Type: 0 Ring Name: gfx_0.0.0\n";
	static const char xe[] = "**** Xe Device Coredump ****\nkernel: 6.12\nmodule: xe\n"
	                         "Process: glmark2 [41]\n";
	struct strbuf out = STRBUF_INIT;
	const char *got;

	got = load("\033[32m[   12.345678]\033[0m \033[33mNVRM\033[0m: x\n", 41, 1 << 20, &out);
	is_str(got, "[   12.345678] NVRM: x\n", "colour escapes are taken out");
	got = load(nul, sizeof(nul) - 1, 1 << 20, &out);
	ok(out.len == sizeof(nul) - 1 && !memcmp(got, "a b\nc\n", out.len),
	   "a NUL byte becomes a blank");
	got = load(amd, sizeof(amd) - 1, 1 << 20, &out);
	ok(strstr(got, "[29.725011811] amdgpu: devcoredump: ring gfx_0.0.0 timeout\n") &&
	           strstr(got, "Process information: process game pid 17 thread game pid 17"),
	   "amdgpu devcoredump: its ring timeout and process as kernel lines");
	got = load(xe, sizeof(xe) - 1, 1 << 20, &out);
	ok(strstr(got, "xe devcoredump: GPU HANG: ecode from the devcoredump (no reason given), in "
	               "glmark2 [41]\n") != NULL,
	   "Xe devcoredump: a GPU HANG line with its process");
	strbuf_release(&out);
}

int
main(void)
{
	test_shapes();
	test_kept();
	test_lines();
	test_many_prefixes();
	test_journal_json();
	test_gzip();
	test_bug_report();
	test_nul_and_coredumps();
	return done_testing();
}
