/*
 * libFuzzer target: doctor --log's loader and line splitter on arbitrary
 * bytes. dr_log_text() (src/doctor/logread.c: gzip, the journal's JSON,
 * docker's json-file, an nvidia-bug-report, devcoredumps) must answer 0
 * with a NUL-terminated text without a NUL inside, no longer than its cap,
 * or -1 with a one-line reason; klog_next() over that text must return each
 * line once, its message inside the line, its clock one of the three; then
 * the kernel-log check (every decoder and report) runs on it. The first
 * byte picks the cap (64 KiB or 1 MiB) so that the bomb path is reached.
 */
#include <string.h>

#include "core/strbuf.h"
#include "doctor/doctor.h"
#include "doctor/klog.h"
#include "doctor/logread.h"
#include "fuzz.h"

static void
check_lines(const char *text, size_t len)
{
	struct klog_line l = { 0 };
	size_t pos = 0, lines = 0, newlines = 0;

	for (size_t i = 0; i < len; i++)
		newlines += text[i] == '\n';
	while (klog_next(text, len, &pos, &l, 0)) {
		lines++;
		FUZZ_CHECK(pos <= len, "pos %zu past the text (%zu)", pos, len);
		FUZZ_CHECK(l.msg >= text && l.msg + l.len <= text + len,
		           "message outside the text");
		FUZZ_CHECK(!memchr(l.msg, '\n', l.len), "a message holds a newline");
		FUZZ_CHECK(l.clock == KLOG_NONE || l.clock == KLOG_BOOT || l.clock == KLOG_WALL,
		           "clock %d", (int)l.clock);
		FUZZ_CHECK(l.lineno == lines, "line number %zu for line %zu", l.lineno, lines);
	}
	FUZZ_CHECK(lines <= newlines + 1, "%zu lines from %zu newlines", lines, newlines);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf out = STRBUF_INIT;
	char why[256];
	size_t max;

	if (!size)
		return 0;
	max = data[0] & 1 ? (size_t)1 << 20 : (size_t)64 << 10;
	why[0] = '\0';
	if (dr_log_text("fuzz.log", (const char *)data + 1, size - 1, &out, max, why, sizeof(why)) <
	    0) {
		FUZZ_CHECK(why[0] && !strchr(why, '\n'), "a failure without a one-line reason");
	} else {
		struct dr_report r = DR_REPORT_INIT;
		struct dr_ctx ctx;

		FUZZ_CHECK(strlen(out.buf) == out.len, "a NUL inside the text (%zu of %zu)",
		           strlen(out.buf), out.len);
		check_lines(out.buf, out.len);
		memset(&ctx, 0, sizeof(ctx));
		ctx.klog = out.buf;
		ctx.klog_source = "fuzz.log";
		dr_check_klog(&ctx, &r);
		FUZZ_CHECK(r.nr > 0, "the kernel-log check said nothing");
		dr_report_release(&r);
	}
	strbuf_release(&out);
	return 0;
}
