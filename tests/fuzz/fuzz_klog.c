/*
 * libFuzzer target: dr_klog_read() on a kernel log file that is the input,
 * then dr_check_nvidia() and dr_check_klog() on what it read, and
 * dr_check_klog() on the raw input too (a --log file is read as it is).
 *
 * Input: one flags byte, then the text written as <root>/dev/kmsg (a
 * regular file, as a fixture holds; records may carry kmsg's
 * "pri,seq,time,flags;" prefix and " KEY=value" continuation lines).
 * Flags:
 *   bits 0-1  the max bytes dr_klog_read() keeps: 64, 4096, 65536, or the
 *             input's length (exactly: the file is not cut)
 *   bit 2     the SecureBoot EFI variable says on (else it is absent)
 *   bit 3     dr_check_nvidia() gets no log at all (klog NULL, with a why)
 *   bits 4-7  ignored: the seeds start with '@' + flags, which reads well
 *
 * The root (sys/ with an NVIDIA GPU on the PCI bus, bound to no driver, and
 * no nvidia module: the Secure Boot paths run) is made once per run under
 * /dev/shm (or $TMPDIR, or /tmp) and removed at exit. Checked: no crash,
 * leak or file descriptor left open; dr_klog_read() returns 0, its output
 * is no longer than max, ends with '\n' when not empty and has no empty
 * line; when the file fits in max, the output is the end (all of it, when
 * that fits too) of the input's lines with each valid "pri,seq,time,flags;"
 * prefix taken off and the continuation lines left out, so no line keeps
 * a prefix; every finding's id is in the catalog, with a non-empty title,
 * and its strings are NUL-terminated.
 */
#include <ctype.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/strbuf.h"
#include "doctor/doctor.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

static char base[4096], root[4096 + 16], kmsg[4096 + 32], sbvar[4096 + 128];

static const char sb_path[] =
        "sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";

static void
put(const char *rel, const char *text)
{
	char path[8192];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fuzz_write_file(path, text, strlen(text));
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(base, sizeof(base), "%s", fuzz_scratch("klog"));
	snprintf(root, sizeof(root), "%s/root", base);
	if (mkdir(root, 0755) < 0)
		fuzz_die_errno("cannot create", root);
	fuzz_make_dirs(root, "dev");
	fuzz_make_dirs(root, "proc");
	fuzz_make_dirs(root, "sys/firmware/efi/efivars");
	fuzz_make_dirs(root, "sys/bus/pci/devices/0000:01:00.0");
	put("sys/bus/pci/devices/0000:01:00.0/vendor", "0x10de\n");
	put("sys/bus/pci/devices/0000:01:00.0/device", "0x2330\n");
	put("sys/bus/pci/devices/0000:01:00.0/class", "0x030200\n");
	snprintf(kmsg, sizeof(kmsg), "%s/dev/kmsg", root);
	snprintf(sbvar, sizeof(sbvar), "%s/%s", root, sb_path);
	return 0;
}

/* Does line (len bytes) start with a valid kmsg prefix: digits, 3+ commas, ';'? */
static bool
has_prefix(const char *line, size_t len)
{
	size_t commas = 0, i;

	if (!len || !isdigit((unsigned char)line[0]))
		return false;
	for (i = 0; i < len && line[i] != ';'; i++) {
		if (line[i] == ',')
			commas++;
		else if (!isdigit((unsigned char)line[i]) && line[i] != '-' && line[i] != '+' &&
		         line[i] != 'c')
			return false;
	}
	return i < len && commas >= 3;
}

/*
 * What the reader should make of the whole text: each line's body (its
 * prefix made dmesg's "[sec.usec] " when it has a valid one) and a newline, continuation
 * lines (" KEY=value") and empty bodies left out.
 */
static void
expected_lines(struct strbuf *exp, const char *in, size_t in_len)
{
	const char *p = in, *end = in + in_len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t l = eol ? (size_t)(eol - p) : (size_t)(end - p);

		if (l && p[0] != ' ') {
			const char *body = p;

			char stamp[64] = "";

			if (has_prefix(p, l)) {
				const char *c = p;
				unsigned long long us = 0;
				int commas = 0, digits = 0;

				body = (const char *)memchr(p, ';', l) + 1;
				/* the time (third field), as dmesg shows it, when it fits */
				for (; c < body - 1; c++) {
					if (*c == ',')
						commas++;
					else if (commas == 2 && isdigit((unsigned char)*c) &&
					         ++digits <= 18)
						us = us * 10 + (unsigned long long)(*c - '0');
				}
				if (digits > 0 && digits <= 18)
					snprintf(stamp, sizeof(stamp), "[%5llu.%06llu] ",
					         us / 1000000, us % 1000000);
			}
			if (body < p + l) {
				strbuf_addstr(exp, stamp);
				strbuf_add(exp, body, (size_t)(p + l - body));
				strbuf_addch(exp, '\n');
			}
		}
		p = eol ? eol + 1 : end;
	}
}

static void
check_str(const char *what, const char *s)
{
	if (s)
		FUZZ_CHECK(strlen(s) < (1u << 20), "%s is %zu bytes long", what, strlen(s));
}

static void
check_report(const struct dr_report *r)
{
	for (size_t i = 0; i < r->nr; i++) {
		const struct dr_finding *f = &r->f[i];

		FUZZ_CHECK(f->id && dr_explain_find(f->id), "finding id '%s' not in the catalog",
		           f->id ? f->id : "(null)");
		FUZZ_CHECK(f->title && f->title[0], "finding '%s' without a title", f->id);
		check_str("title", f->title);
		check_str("meaning", f->meaning);
		check_str("action", f->action);
		for (size_t k = 0; k < f->nr_evidence; k++)
			check_str("evidence", f->evidence[k]);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t maxes[3] = { 64, 4096, 65536 };
	struct strbuf out = STRBUF_INIT;
	struct dr_report r = DR_REPORT_INIT;
	struct gs_config cfg;
	struct dr_ctx ctx;
	const char *text;
	char why[512] = "";
	size_t len, max;
	unsigned flags;
	int rc, fd0;

	if (!size)
		return 0;
	fd0 = fuzz_lowest_free_fd();
	flags = data[0];
	text = (const char *)data + 1;
	len = size - 1;
	max = (flags & 3) == 3 ? len : maxes[flags & 3];
	fuzz_write_file(kmsg, text, len);
	if (flags & 4) {
		static const char on[5] = { 6, 0, 0, 0, 1 };

		fuzz_write_file(sbvar, on, sizeof(on));
	} else if (unlink(sbvar) < 0 && errno != ENOENT) {
		fuzz_die_errno("cannot remove", sbvar);
	}

	gs_config_init(&cfg);
	gs_config_set_root(&cfg, root);
	rc = dr_klog_read(&cfg, &out, max, why, sizeof(why));
	FUZZ_CHECK(rc == 0, "dr_klog_read() on a regular file returned %d: %s", rc, why);
	FUZZ_CHECK(out.len <= max, "%zu bytes read, max %zu", out.len, max);
	FUZZ_CHECK(strlen(out.buf) <= out.len, "the output is longer than its length");
	if (out.len) {
		FUZZ_CHECK(out.buf[out.len - 1] == '\n', "the output does not end with a newline");
		for (const char *p = out.buf, *end = out.buf + out.len; p < end;) {
			const char *eol = memchr(p, '\n', (size_t)(end - p));

			FUZZ_CHECK(eol > p, "an empty line at %zu", (size_t)(p - out.buf));
			p = eol + 1;
		}
	}
	if (len <= max) {
		/* the file was read whole: the output is the newest part of the bodies */
		struct strbuf exp = STRBUF_INIT;

		expected_lines(&exp, text, len);
		if (out.len > exp.len ||
		    memcmp(exp.buf + exp.len - out.len, out.buf, out.len) != 0) {
			fuzz_dump("read", out.buf, out.len);
			fuzz_dump("expected (the end of)", exp.buf, exp.len);
			FUZZ_CHECK(false, "the output is not the end of the lines' bodies");
		}
		if (exp.len <= max)
			FUZZ_CHECK(out.len == exp.len, "%zu bytes read of %zu, max %zu", out.len,
			           exp.len, max);
		strbuf_release(&exp);
	}

	memset(&ctx, 0, sizeof(ctx));
	ctx.cfg = &cfg;
	ctx.getenv = NULL;
	if (flags & 8) {
		ctx.klog = NULL;
		ctx.klog_why = "permission denied (fuzz)";
	} else {
		ctx.klog = out.buf;
	}
	dr_check_nvidia(&ctx, &r);
	check_report(&r);
	dr_report_release(&r);
	/* the kernel-log check: every decoder over the lines read, and over the raw input */
	dr_check_klog(&ctx, &r);
	check_report(&r);
	dr_report_release(&r);
	if (!(flags & 8)) {
		struct strbuf raw = STRBUF_INIT;

		strbuf_add(&raw, data, size);
		ctx.klog = raw.buf;
		dr_check_klog(&ctx, &r);
		check_report(&r);
		dr_report_release(&r);
		strbuf_release(&raw);
	}
	strbuf_release(&out);
	gs_config_release(&cfg);
	FUZZ_CHECK(fuzz_lowest_free_fd() == fd0,
	           "a file descriptor leaked (lowest free %d, was %d)", fuzz_lowest_free_fd(), fd0);
	return 0;
}
