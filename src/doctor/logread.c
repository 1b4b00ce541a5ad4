/*
 * doctor --log: a log file, whatever shape it came in, as lines of text.
 *
 * Formats, from their sources:
 * - gzip (RFC 1952), the shape of nvidia-bug-report.log.gz: inflated with
 *   zlib, members one after another, with a cap on what it inflates to;
 * - journalctl -o json, json-pretty, json-seq (systemd's JOURNAL_EXPORT_FORMATS
 *   and systemd.journal-fields(7)): one object per record; MESSAGE a string,
 *   or an array of bytes where it is not UTF-8; __REALTIME_TIMESTAMP in
 *   microseconds since the epoch, as a string;
 * - nvidia-bug-report.sh's log: sections after a line of 44 '_', headed
 *   "*** FILE" (append), 'base64 "FILE"' (append_binary_file, a block of
 *   base64 to the next section), "dmesg:", and the "Scanning kernel log
 *   files for NVIDIA kernel messages:" section, whose lines of
 *   /var/log/messages and "journalctl -b -N:" the dmesg section repeats;
 * - amdgpu's devcoredump (amdgpu_devcoredump_read() in
 *   drivers/gpu/drm/amd/amdgpu/amdgpu_dev_coredump.c, formerly
 *   amdgpu_reset.c): "**** AMDGPU Device Coredump ****", "time: S.NS",
 *   "process_name: NAME PID: N", "Ring timed out details", "IP Type: 0 Ring
 *   Name: gfx_0.0.0", "[gfxhub] Page fault observed";
 * - xe's (xe_devcoredump.c): "**** Xe Device Coredump ****", "Process: NAME".
 * Colour escapes (dmesg --color=always) are taken out, a NUL read as a blank.
 */
#include "doctor/logread.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <zlib.h>

#include "core/strbuf.h"
#include "core/xalloc.h"
#include "doctor/klog.h"

#define SEPARATOR "____________________________________________"

static int fail(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
fail(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
	return -1;
}

/* --- reading ------------------------------------------------------------------------------ */

/* What a file that is not a log is, or NULL when it is one (or a pipe). */
static const char *
not_a_log(const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return "is a directory: give a log file in it, or save one (journalctl -k > kern.log)";
	if (S_ISCHR(st->st_mode) && st->st_rdev == makedev(1, 3))
		return NULL; /* /dev/null: an empty log, as scripts pass it */
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		return "is a device, not a saved log: save the log first (sudo dmesg > kern.log) "
		       "and pass that file";
	if (S_ISSOCK(st->st_mode))
		return "is a socket: give a log file, or '-' to read standard input";
	return NULL;
}

static int
read_fd(int fd, const char *name, struct strbuf *raw, size_t max, char *why, size_t size)
{
	char buf[1 << 16];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fail(why, size, "%s: %s", name, strerror(errno));
		}
		if (raw->len + (size_t)n > max)
			return fail(why, size,
			            "%s: over %zu MiB: pass the part around the failure "
			            "(tail -c 50M FILE > part.log)",
			            name, max >> 20);
		strbuf_add(raw, buf, (size_t)n);
	}
	return 0;
}

/* --- gzip ------------------------------------------------------------------------------- */

static bool
is_gzip(const char *p, size_t len)
{
	return len >= 2 && (unsigned char)p[0] == 0x1f && (unsigned char)p[1] == 0x8b;
}

/* The name of another compression (or binary format) whose magic p starts with, or NULL. */
static const char *
other_compression(const char *p, size_t len)
{
	if (len >= 6 && !memcmp(p,
	                        "\xfd"
	                        "7zXZ\0",
	                        6))
		return "compressed with xz (unpack it: xz -dc FILE > kern.log)";
	if (len >= 4 && !memcmp(p, "\x28\xb5\x2f\xfd", 4))
		return "compressed with zstd (unpack it: zstd -dc FILE > kern.log)";
	if (len >= 3 && !memcmp(p, "BZh", 3) && len > 3 && p[3] >= '1' && p[3] <= '9')
		return "compressed with bzip2 (unpack it: bzip2 -dc FILE > kern.log)";
	if (len >= 8 && !memcmp(p, "LPKSHHRH", 8))
		return "a binary journal file (read it: journalctl --file FILE -k > kern.log)";
	if (len >= 4 && !memcmp(p, "PK\x03\x04", 4))
		return "a zip archive (unpack it: unzip FILE, then pass the log in it)";
	return NULL;
}

/* Inflate the gzip members of in into out, at most max bytes. */
static int
gunzip(const char *name, const char *in, size_t len, struct strbuf *out, size_t max, char *why,
       size_t size)
{
	z_stream z;
	char buf[1 << 16];
	int rc = Z_OK;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return fail(why, size, "%s: zlib could not start", name);
	z.next_in = (unsigned char *)(uintptr_t)in;
	z.avail_in = (uInt)(len > UINT32_MAX ? UINT32_MAX : len);
	for (;;) {
		size_t produced;

		z.next_out = (unsigned char *)buf;
		z.avail_out = sizeof(buf);
		rc = inflate(&z, Z_NO_FLUSH);
		if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
			break;
		produced = sizeof(buf) - z.avail_out;
		if (out->len + produced > max) {
			inflateEnd(&z);
			return fail(why, size,
			            "%s: inflates to over %zu MiB: not a log (a gzip bomb?), or "
			            "pass the part around the failure (zcat FILE | tail -c 50M > "
			            "part.log)",
			            name, max >> 20);
		}
		strbuf_add(out, buf, produced);
		if (rc == Z_STREAM_END) {
			/* another member follows, or padding */
			if (!z.avail_in || !is_gzip((const char *)z.next_in, z.avail_in))
				break;
			inflateReset(&z);
		} else if ((!z.avail_in && z.avail_out) || (rc == Z_BUF_ERROR && !produced)) {
			break; /* truncated: keep what came */
		}
	}
	inflateEnd(&z);
	if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
		return out->len ? 0
		                : fail(why, size, "%s: not valid gzip (%s)", name,
		                       z.msg ? z.msg : "corrupt data");
	return 0;
}

/* --- the journal's JSON ------------------------------------------------------------------- */

struct jrec {
	struct strbuf msg, host, ident, pid, transport, realtime;
	struct strbuf iso; /* docker's json-file "time" */
};

static const char *
json_ws(const char *p, const char *end)
{
	while (p < end &&
	       (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == 0x1e || *p == ','))
		p++;
	return p;
}

static int
hex4(const char *p, const char *end)
{
	int v = 0;

	if (end - p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static void
add_utf8(struct strbuf *sb, unsigned cp)
{
	if (cp < 0x80) {
		strbuf_addch(sb, (int)cp);
	} else if (cp < 0x800) {
		strbuf_addch(sb, (int)(0xc0 | cp >> 6));
		strbuf_addch(sb, (int)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		strbuf_addch(sb, (int)(0xe0 | cp >> 12));
		strbuf_addch(sb, (int)(0x80 | ((cp >> 6) & 0x3f)));
		strbuf_addch(sb, (int)(0x80 | (cp & 0x3f)));
	} else {
		strbuf_addch(sb, (int)(0xf0 | cp >> 18));
		strbuf_addch(sb, (int)(0x80 | ((cp >> 12) & 0x3f)));
		strbuf_addch(sb, (int)(0x80 | ((cp >> 6) & 0x3f)));
		strbuf_addch(sb, (int)(0x80 | (cp & 0x3f)));
	}
}

/* The string at p (at its '"') unescaped into sb (NULL: skipped); returns past it. */
static const char *
json_string(const char *p, const char *end, struct strbuf *sb)
{
	for (p++; p < end && *p != '"'; p++) {
		if (*p != '\\' || p + 1 >= end) {
			if (sb)
				strbuf_addch(sb, *p);
			continue;
		}
		p++;
		if (*p == 'u') {
			int cp = hex4(p + 1, end);

			if (cp < 0)
				continue;
			p += 4;
			if (cp >= 0xd800 && cp < 0xdc00 && end - p > 6 && p[1] == '\\' &&
			    p[2] == 'u') {
				int lo = hex4(p + 3, end);

				if (lo >= 0xdc00 && lo < 0xe000) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					p += 6;
				}
			}
			if (sb)
				add_utf8(sb, cp ? (unsigned)cp : ' ');
		} else if (sb) {
			const char *from = "nrtbf", *to = "\n\r\t\b\f", *c = strchr(from, *p);

			strbuf_addch(sb, c && *c ? to[c - from] : *p);
		}
	}
	return p < end ? p + 1 : end;
}

/* Past the value at p (any JSON value); a string or an array of bytes into sb when given. */
static const char *
json_value(const char *p, const char *end, struct strbuf *sb, int depth)
{
	if (p >= end)
		return end;
	if (*p == '"')
		return json_string(p, end, sb);
	if (*p == '[' || *p == '{') {
		char close = *p == '[' ? ']' : '}';

		p = json_ws(p + 1, end);
		while (p < end && *p != close) {
			const char *q;

			if (*p >= '0' && *p <= '9' && sb && close == ']') {
				long v = 0; /* MESSAGE as bytes; the text has no NUL at its end */

				for (const char *d = p;
				     d < end && *d >= '0' && *d <= '9' && v < 256; d++)
					v = v * 10 + (*d - '0');
				strbuf_addch(sb, v > 0 && v < 256 ? (int)v : ' ');
			}
			q = depth < 64 ? json_value(p, end, NULL, depth + 1) : end;
			if (close == '}' && q < end && *q == ':')
				q = json_value(json_ws(q + 1, end), end, NULL, depth + 1);
			if (q == p)
				q++;
			p = json_ws(q, end);
		}
		return p < end ? p + 1 : end;
	}
	while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != '\n' && *p != ':')
		p++;
	return p;
}

static struct strbuf *
jrec_field(struct jrec *r, const struct strbuf *key)
{
	static const char *const names[] = { "MESSAGE", "_HOSTNAME",  "SYSLOG_IDENTIFIER",
		                             "_PID",    "_TRANSPORT", "__REALTIME_TIMESTAMP",
		                             "log",     "time" };
	struct strbuf *fields[] = { &r->msg,       &r->host,     &r->ident, &r->pid,
		                    &r->transport, &r->realtime, &r->msg,   &r->iso };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(key->buf, names[i]))
			return fields[i];
	return NULL;
}

/* One record as lines: "SECONDS.USEC HOST TAG: line" each (only the line without a time). */
static void
jrec_emit(const struct jrec *r, struct strbuf *out)
{
	const char *m = r->msg.buf, *end = r->msg.buf + r->msg.len;
	bool kernel = !strcmp(r->transport.buf, "kernel") || !strcmp(r->ident.buf, "kernel");
	unsigned long long us = strtoull(r->realtime.buf, NULL, 10);

	while (m <= end) {
		const char *nl = memchr(m, '\n', (size_t)(end - m));
		size_t n = (size_t)((nl ? nl : end) - m);

		if (us) {
			strbuf_addf(out, "%llu.%06llu %s ", us / 1000000, us % 1000000,
			            r->host.len ? r->host.buf : "-");
			if (kernel)
				strbuf_addstr(out, "kernel: ");
			else
				strbuf_addf(out, "%s[%s]: ", r->ident.len ? r->ident.buf : "-",
				            r->pid.len ? r->pid.buf : "-");
		} else if (r->iso.len && r->iso.len < 64 && !strchr(r->iso.buf, ' '))
			strbuf_addf(out, "%s ", r->iso.buf);
		strbuf_add(out, m, n);
		strbuf_addch(out, '\n');
		if (!nl || nl + 1 == end) /* docker's "log" ends in a newline */
			break;
		m = nl + 1;
	}
}

static void
jrec_release(struct jrec *r)
{
	strbuf_release(&r->msg);
	strbuf_release(&r->host);
	strbuf_release(&r->ident);
	strbuf_release(&r->pid);
	strbuf_release(&r->transport);
	strbuf_release(&r->realtime);
	strbuf_release(&r->iso);
}

/* The object at p (its '{') as lines into out; returns past it. */
static const char *
json_record(const char *p, const char *end, struct strbuf *out)
{
	struct jrec r = { STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT,
		          STRBUF_INIT, STRBUF_INIT, STRBUF_INIT };
	struct strbuf key = STRBUF_INIT;

	p = json_ws(p + 1, end);
	while (p < end && *p != '}') {
		struct strbuf *f;
		const char *q;

		if (*p != '"') { /* not an object of strings: skip to the end of the line */
			const char *nl = memchr(p, '\n', (size_t)(end - p));

			p = nl ? nl : end;
			break;
		}
		strbuf_reset(&key);
		p = json_ws(json_string(p, end, &key), end);
		if (p < end && *p == ':')
			p = json_ws(p + 1, end);
		f = jrec_field(&r, &key);
		if (f)
			strbuf_reset(f);
		q = json_value(p, end, f, 0);
		p = json_ws(q == p ? q + 1 : q, end);
	}
	if (r.msg.len || r.realtime.len)
		jrec_emit(&r, out);
	jrec_release(&r);
	strbuf_release(&key);
	return p < end ? p + 1 : end;
}

/* Is text the journal's JSON export (json, json-pretty, json-seq)? */
static bool
is_journal_json(const char *text, size_t len)
{
	const char *p = json_ws(text, text + len);
	size_t n = len < 65536 ? len : 65536;

	if (p >= text + len || *p != '{')
		return false;
	if (memmem(text, n, "\"log\":", 6) && memmem(text, n, "\"stream\":", 9))
		return true; /* docker's json-file log:
		                {"log":"...\n","stream":"stderr","time":"..."} */
	return memmem(text, n, "\"MESSAGE\"", 9) &&
	       (memmem(text, n, "\"__REALTIME_TIMESTAMP\"", 22) ||
	        memmem(text, n, "\"__CURSOR\"", 10));
}

static void
journal_lines(const char *text, size_t len, struct strbuf *out)
{
	const char *p = text, *end = text + len;

	while ((p = json_ws(p, end)) < end) {
		if (*p == '{') {
			p = json_record(p, end, out);
		} else { /* a line that is not a record: kept as it is */
			const char *nl = memchr(p, '\n', (size_t)(end - p));

			strbuf_add(out, p, (size_t)((nl ? nl : end) - p));
			strbuf_addch(out, '\n');
			p = nl ? nl + 1 : end;
		}
	}
}

/* --- nvidia-bug-report ------------------------------------------------------------------ */

struct seen {
	const char *msg;
	size_t len;
	uint64_t hash;
	unsigned section;
};

struct seen_set {
	struct seen *v;
	size_t nr, size; /* size: a power of two */
};

static uint64_t
hash_bytes(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

static void
seen_grow(struct seen_set *s)
{
	struct seen_set n = { NULL, 0, s->size ? s->size * 2 : 1024 };

	n.v = xcalloc(n.size, sizeof(*n.v));
	for (size_t i = 0; i < s->size; i++) {
		size_t j;

		if (!s->v[i].msg)
			continue;
		for (j = s->v[i].hash & (n.size - 1); n.v[j].msg; j = (j + 1) & (n.size - 1))
			;
		n.v[j] = s->v[i];
		n.nr++;
	}
	free(s->v);
	*s = n;
}

/*
 * The section in which msg was first seen, after recording it in section
 * when it is new.
 */
static unsigned
seen_first(struct seen_set *s, const char *msg, size_t len, unsigned section)
{
	uint64_t h = hash_bytes(msg, len);
	size_t j;

	if ((s->nr + 1) * 2 > s->size)
		seen_grow(s);
	for (j = h & (s->size - 1); s->v[j].msg; j = (j + 1) & (s->size - 1))
		if (s->v[j].hash == h && s->v[j].len == len && !memcmp(s->v[j].msg, msg, len))
			return s->v[j].section;
	s->v[j] = (struct seen){ msg, len, h, section };
	s->nr++;
	return section;
}

static bool
is_bug_report(const char *text, size_t len)
{
	size_t n = len < 8192 ? len : 8192;

	return (memmem(text, n, "NVIDIA bug report log file", 26) ||
	        memmem(text, n, "nvidia-bug-report.sh", 20)) &&
	       memmem(text, len, SEPARATOR, sizeof(SEPARATOR) - 1);
}

/* A line that starts a part of the report: "dmesg:", "  journalctl -b -0:", "*** FILE" */
static bool
is_heading(const struct klog_line *l)
{
	if (l->clock != KLOG_NONE || !l->len || l->len > 100)
		return false;
	return l->msg[l->len - 1] == ':' || (l->len > 4 && !memcmp(l->msg, "*** ", 4));
}

/*
 * The report's lines into out, but for its base64 blocks and for the lines
 * that an earlier part of it already had (the dmesg section repeats the
 * kernel lines of /var/log/messages and the journal's).
 */
static void
bug_report_lines(const char *text, size_t len, struct strbuf *out)
{
	struct seen_set seen = { NULL, 0, 0 };
	struct klog_line l = { 0 };
	size_t pos = 0, start;
	unsigned section = 0;
	bool base64 = false;

	for (start = 0; klog_next(text, len, &pos, &l, 0); start = pos) {
		bool sep = l.len >= 40 && !memcmp(l.msg, SEPARATOR, 40);
		bool b64 = !sep && l.len > 8 && !memcmp(l.msg, "base64 \"", 8);

		if (sep) {
			section++;
			base64 = false;
		} else if (b64) {
			base64 = true;
		} else if (base64) {
			continue;
		} else if (is_heading(&l)) {
			section++;
		}
		if (l.len >= 8 && !sep && seen_first(&seen, l.msg, l.len, section) != section)
			continue;
		strbuf_add(out, text + start, pos - start);
		if (pos == len && (!len || text[len - 1] != '\n'))
			strbuf_addch(out, '\n');
	}
	free(seen.v);
}

/* --- devcoredumps ------------------------------------------------------------------------ */

/* The rest of the line after the first "key" in [p, end) into out (cut), or false. */
static bool
field_after(const char *p, const char *end, const char *key, char *out, size_t size)
{
	const char *k = memmem(p, (size_t)(end - p), key, strlen(key)), *e;
	size_t n;

	if (!k)
		return false;
	k += strlen(key);
	e = memchr(k, '\n', (size_t)(end - k));
	n = (size_t)((e ? e : end) - k);
	while (n && (k[n - 1] == ' ' || k[n - 1] == '\r'))
		n--;
	if (n >= size)
		n = size - 1;
	memcpy(out, k, n);
	out[n] = '\0';
	return true;
}

/*
 * An amdgpu devcoredump at p (its header) as the kernel lines the drm decoder
 * reads: "[TIME] amdgpu: devcoredump: ring NAME timeout" and the process.
 */
static void
amdgpu_coredump(const char *p, const char *end, struct strbuf *out)
{
	char when[32] = "", proc[128] = "", pid[32] = "", ring[64] = "", tmp[160];
	const char *next = memmem(p + 1, (size_t)(end - p - 1), "**** ", 5);

	if (next)
		end = next;
	if (field_after(p, end, "\ntime: ", tmp, sizeof(tmp)))
		snprintf(when, sizeof(when), "[%.20s] ", tmp);
	if (field_after(p, end, "\nprocess_name: ", tmp, sizeof(tmp))) {
		char *at = strstr(tmp, " PID: ");

		if (at) {
			snprintf(pid, sizeof(pid), "%.20s", at + 6);
			*at = '\0';
		}
		snprintf(proc, sizeof(proc), "%.127s", tmp);
	}
	if (field_after(p, end, "Ring Name: ", tmp, sizeof(tmp)))
		snprintf(ring, sizeof(ring), "%.*s", (int)strcspn(tmp, " "), tmp);
	if (ring[0])
		strbuf_addf(out, "%samdgpu: devcoredump: ring %s timeout\n", when, ring);
	if (proc[0])
		strbuf_addf(out,
		            "%samdgpu: devcoredump: Process information: process %s pid %s "
		            "thread %s pid %s\n",
		            when, proc, pid[0] ? pid : "0", proc, pid[0] ? pid : "0");
	if (memmem(p, (size_t)(end - p), "Page fault observed", 19)) {
		const char *hub = memmem(p, (size_t)(end - p), "hub] Page fault", 15);
		const char *o = hub;

		while (o && o > p && o[-1] != '[' && hub - o < 16)
			o--;
		strbuf_addf(out,
		            "%samdgpu: devcoredump: [%.*s] page fault (for process %s pid %s)\n",
		            when, hub ? (int)(hub + 3 - o) : 3, hub ? o : "gmc",
		            proc[0] ? proc : "?", pid[0] ? pid : "0");
	}
}

/* An Xe devcoredump at p as the "GPU HANG" line of the drm decoder, with its process. */
static void
xe_coredump(const char *p, const char *end, struct strbuf *out)
{
	char proc[128] = "", reason[128] = "";

	field_after(p, end, "\nProcess: ", proc, sizeof(proc));
	field_after(p, end, "\nReason: ", reason, sizeof(reason));
	for (char *c = reason; *c; c++)
		if (*c == ',')
			*c = ';'; /* the decoder reads the process after ", in " */
	strbuf_addf(out, "xe devcoredump: GPU HANG: ecode from the devcoredump (%s), in %s%s\n",
	            reason[0] ? reason : "no reason given", proc[0] ? proc : "an unnamed process",
	            strchr(proc, '[') ? "" : " [?]");
}

/* The devcoredumps in text, as lines appended to out. */
static void
coredump_lines(const char *text, size_t len, struct strbuf *out)
{
	static const char amd[] = "**** AMDGPU Device Coredump ****";
	static const char xe[] = "**** Xe Device Coredump ****";
	const char *end = text + len, *p;

	for (p = text; (p = memmem(p, (size_t)(end - p), amd, sizeof(amd) - 1)); p++)
		amdgpu_coredump(p, end, out);
	for (p = text; (p = memmem(p, (size_t)(end - p), xe, sizeof(xe) - 1)); p++)
		xe_coredump(p, end, out);
}

/* --- the whole ---------------------------------------------------------------------------- */

/*
 * Take colour and other CSI escape sequences (ESC '[' parameters, a final
 * letter: dmesg --color=always, a terminal's log) out of sb, and turn a NUL
 * into a blank, in place.
 */
static void
plain_text(struct strbuf *sb)
{
	const char *esc, *nul;
	size_t r, w;

	if (!sb->len)
		return;
	/* most logs have neither: two vectorised scans, not a loop over every byte */
	esc = memchr(sb->buf, '\033', sb->len);
	nul = memchr(sb->buf, '\0', sb->len);
	if (!esc && !nul)
		return;
	r = w = (size_t)((esc && (!nul || esc < nul) ? esc : nul) - sb->buf);

	while (r < sb->len) {
		char c = sb->buf[r];

		if (c == '\033' && r + 1 < sb->len && sb->buf[r + 1] == '[') {
			size_t e = r + 2;

			while (e < sb->len && e - r < 32 &&
			       ((sb->buf[e] >= '0' && sb->buf[e] <= '9') || sb->buf[e] == ';' ||
			        sb->buf[e] == '?'))
				e++;
			if (e < sb->len && ((sb->buf[e] >= 'A' && sb->buf[e] <= 'Z') ||
			                    (sb->buf[e] >= 'a' && sb->buf[e] <= 'z'))) {
				r = e + 1;
				continue;
			}
		}
		sb->buf[w++] = c ? c : ' ';
		r++;
	}
	strbuf_setlen(sb, w);
}

int
dr_log_text(const char *name, const char *data, size_t len, struct strbuf *out, size_t max,
            char *why, size_t why_size)
{
	struct strbuf plain = STRBUF_INIT;
	const char *text = data, *other;
	size_t n = len;

	if (is_gzip(data, len)) {
		if (gunzip(name, data, len, &plain, max, why, why_size) < 0) {
			strbuf_release(&plain);
			return -1;
		}
		text = plain.buf;
		n = plain.len;
	} else if ((other = other_compression(data, len))) {
		return fail(why, why_size, "%s: %s", name, other);
	}
	strbuf_grow(out, n + 1);
	if (is_journal_json(text, n))
		journal_lines(text, n, out);
	else if (is_bug_report(text, n))
		bug_report_lines(text, n, out);
	else
		strbuf_add(out, text, n);
	coredump_lines(text, n, out);
	plain_text(out);
	strbuf_release(&plain);
	return 0;
}

int
dr_log_load(const char *path, struct strbuf *out, size_t max, char *why, size_t why_size)
{
	bool in = !strcmp(path, "-");
	const char *name = in ? "standard input" : path;
	int fd = in ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	struct strbuf raw = STRBUF_INIT;
	struct stat st;
	const char *bad;
	int rc;

	if (fd < 0)
		return fail(why, why_size, "%s: %s", name, strerror(errno));
	if (fstat(fd, &st) == 0 && (bad = not_a_log(&st))) {
		if (!in)
			close(fd);
		return fail(why, why_size, "%s: %s", name, bad);
	}
	rc = read_fd(fd, name, &raw, max, why, why_size);
	if (!in)
		close(fd);
	if (rc == 0)
		rc = dr_log_text(name, raw.buf, raw.len, out, max, why, why_size);
	strbuf_release(&raw);
	return rc;
}
