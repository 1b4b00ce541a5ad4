/*
 * libFuzzer target: amdgpu's file formats (src/backend/amdgpu_metrics.h),
 * parsed from the bytes of the input as drm_amdgpu.c parses what it read.
 *
 * Input: one selector byte, then the file. The selector's low 3 bits pick
 * the parser ('0'...'4' in the seeds, which read well):
 *   0  amdgpu_metrics_decode(): the gpu_metrics blob
 *   1  amdgpu_parse_levels(): a pp_dpm_sclk / pp_dpm_mclk text
 *   2  amdgpu_od_max(): pp_od_clk_voltage, sections OD_SCLK, OD_MCLK and
 *      OD_VDDGFX_OFFSET
 *   3  amdgpu_parse_ras(): a ras/<block>_err_count text
 *   4  amdgpu_throttle_reasons(): the first 8 bytes as the throttler bits
 *      (little-endian), the 9th the size of the names buffer
 *   5-7  all of the above on the same bytes
 *
 * Each parser gets the file in a buffer of exactly its length (malloc'd,
 * so AddressSanitizer reports a read past the end), not NUL-terminated
 * where the API takes a length; amdgpu_parse_ras() takes a C string.
 * Checked: no crash or leak; gpu_metrics decodes to 0 or a negative
 * status with its message, leaving every figure unknown; on 0 its
 * revision is one amdgpu_metrics_known() knows and the header's, its
 * size the header's and at most the length, every figure NaN or finite
 * and >= 0, and the first size bytes alone decode the same (nothing past
 * structure_size is read), the throttler bits then naming reasons as
 * below; the clock levels at most 16, the current one among them, their
 * highest what amdgpu_levels_max() says, the same when the text is cut at
 * its first NUL; an overdrive maximum 0 without its section, one of the
 * levels of the text otherwise; RAS counts only with both "ue:" and "ce:"
 * in the text; throttler names NUL-terminated within their buffer, one
 * per known bit set when it is large enough, and reasons within
 * amdgpu_throttle_supported().
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "backend/amdgpu_metrics.h"
#include "core/err.h"
#include "core/gpu.h"
#include "fuzz.h"

/* the SMU_THROTTLER_* bits amdgpu_throttle_reasons() knows a name for */
#define KNOWN_THROTTLERS (0xffull | 0xff0000ull | 0xffff00000000ull | 3ull << 56)

/* A copy of data of exactly size bytes (at least one byte allocated). */
static char *
exact_copy(const uint8_t *data, size_t size)
{
	char *b = malloc(size ? size : 1);

	if (!b)
		abort();
	if (size)
		memcpy(b, data, size);
	return b;
}

static void
check_throttle(uint64_t bits, size_t size)
{
	char *names = malloc(size ? size : 1);
	unsigned reasons, commas = 0;
	size_t n;

	if (!names)
		abort();
	memset(names, 'x', size ? size : 1);
	reasons = amdgpu_throttle_reasons(bits, names, size);
	FUZZ_CHECK(!(reasons & ~amdgpu_throttle_supported()),
	           "throttler bits %#llx: reasons %#x beyond those supported",
	           (unsigned long long)bits, reasons);
	if (!(bits & KNOWN_THROTTLERS))
		FUZZ_CHECK(reasons == 0, "no known throttler bit in %#llx, reasons %#x",
		           (unsigned long long)bits, reasons);
	if (size) {
		n = strnlen(names, size);
		FUZZ_CHECK(n < size, "throttler names not NUL-terminated in %zu bytes", size);
		for (size_t i = 0; i + 1 < n; i++)
			commas += names[i] == ',' && names[i + 1] == ' ';
		/* 33 names of at most 12 bytes, joined by ", " */
		if (size > 512)
			FUZZ_CHECK((n ? commas + 1 : 0) ==
			                   (unsigned)__builtin_popcountll(bits & KNOWN_THROTTLERS),
			           "throttler bits %#llx named '%s'", (unsigned long long)bits,
			           names);
		if (!(bits & KNOWN_THROTTLERS))
			FUZZ_CHECK(n == 0, "throttler names '%s' for %#llx", names,
			           (unsigned long long)bits);
	}
	free(names);
}

static void
check_metrics_equal(const struct amdgpu_metrics *a, const struct amdgpu_metrics *b)
{
	FUZZ_CHECK(a->format == b->format && a->content == b->content && a->size == b->size &&
	                   a->has_throttle == b->has_throttle && a->throttle == b->throttle,
	           "the table cut to its structure_size decodes differently");
	for (int i = 0; i < AM__COUNT; i++)
		FUZZ_CHECK(a->v[i] == b->v[i] || (isnan(a->v[i]) && isnan(b->v[i])),
		           "figure %d is %g in the whole file, %g in its first %u bytes", i,
		           a->v[i], b->v[i], a->size);
}

static void
fuzz_metrics(const uint8_t *data, size_t size)
{
	char *buf = exact_copy(data, size);
	struct amdgpu_metrics m, cut;
	struct err err = ERR_INIT;
	int rc;

	rc = amdgpu_metrics_decode(buf, size, &m, &err);
	FUZZ_CHECK(rc == 0 || rc == E_PARSE || rc == E_VERSION, "gpu_metrics: status %d", rc);
	if (rc) {
		FUZZ_CHECK(err.code == rc && err.msg[0], "gpu_metrics: status %d without a message",
		           rc);
		FUZZ_CHECK(strnlen(err.msg, sizeof(err.msg)) < sizeof(err.msg),
		           "gpu_metrics: message not NUL-terminated");
		FUZZ_CHECK(m.format == 0 && m.content == 0 && m.size == 0 && !m.has_throttle,
		           "gpu_metrics: status %d, but a table v%u.%u of %u bytes", rc, m.format,
		           m.content, m.size);
		for (int i = 0; i < AM__COUNT; i++)
			FUZZ_CHECK(isnan(m.v[i]), "gpu_metrics: status %d, but figure %d is %g", rc,
			           i, m.v[i]);
		free(buf);
		return;
	}
	FUZZ_CHECK(amdgpu_metrics_known(m.format, m.content), "gpu_metrics: v%u.%u decoded",
	           m.format, m.content);
	FUZZ_CHECK(size >= 4 && m.size == (unsigned)(data[0] | data[1] << 8) &&
	                   m.format == data[2] && m.content == data[3],
	           "gpu_metrics: v%u.%u of %u bytes, not the header's", m.format, m.content,
	           m.size);
	FUZZ_CHECK(m.size >= 4 && m.size <= size, "gpu_metrics: %u bytes in a file of %zu", m.size,
	           size);
	for (int i = 0; i < AM__COUNT; i++)
		FUZZ_CHECK(isnan(m.v[i]) || (isfinite(m.v[i]) && m.v[i] >= 0), "figure %d is %g", i,
		           m.v[i]);
	if (m.has_throttle)
		FUZZ_CHECK(m.throttle != UINT64_MAX, "all-ones throttler bits taken as known");
	else
		FUZZ_CHECK(m.throttle == 0, "throttler bits %#llx, but none known",
		           (unsigned long long)m.throttle);
	if (m.size < size) {
		char *head = exact_copy(data, m.size);

		rc = amdgpu_metrics_decode(head, m.size, &cut, NULL);
		FUZZ_CHECK(rc == 0, "the first %u bytes of a table of that size: status %d", m.size,
		           rc);
		check_metrics_equal(&m, &cut);
		free(head);
	}
	if (m.has_throttle) {
		check_throttle(m.throttle, 8);
		check_throttle(m.throttle, 600);
	}
	free(buf);
}

/* The level of lv equal to mhz, or -1. */
static int
find_level(const struct clock_levels *lv, uint32_t mhz)
{
	for (unsigned i = 0; i < lv->nr && i < 16; i++)
		if (lv->mhz[i] == mhz)
			return (int)i;
	return -1;
}

static void
check_levels(const struct clock_levels *lv, unsigned n, size_t len)
{
	uint32_t best = 0;

	FUZZ_CHECK(n == lv->nr, "amdgpu_parse_levels returned %u for %u levels", n, lv->nr);
	FUZZ_CHECK(lv->nr <= sizeof(lv->mhz) / sizeof(lv->mhz[0]), "%u levels in a list of %zu",
	           lv->nr, sizeof(lv->mhz) / sizeof(lv->mhz[0]));
	FUZZ_CHECK(lv->current >= -1 && lv->current < (int)lv->nr, "current level %d of %u levels",
	           lv->current, lv->nr);
	/* "0:1Mhz" is the shortest level line: 6 bytes and a newline */
	FUZZ_CHECK(lv->nr <= (len + 1) / 7, "%u levels in %zu bytes", lv->nr, len);
	for (unsigned i = 0; i < lv->nr; i++)
		if (lv->mhz[i] > best)
			best = lv->mhz[i];
	FUZZ_CHECK(amdgpu_levels_max(lv) == best, "amdgpu_levels_max %u, not %u",
	           amdgpu_levels_max(lv), best);
}

static void
fuzz_levels(const uint8_t *data, size_t size)
{
	char *buf = exact_copy(data, size);
	size_t cut = strnlen(buf, size);
	struct clock_levels lv, lv2;
	unsigned n;

	memset(&lv, 0x5a, sizeof(lv));
	n = amdgpu_parse_levels(buf, size, &lv);
	check_levels(&lv, n, cut);
	/* the text ends at a NUL: what follows it changes nothing */
	if (cut < size) {
		memset(&lv2, 0xa5, sizeof(lv2));
		n = amdgpu_parse_levels(buf, cut, &lv2);
		FUZZ_CHECK(n == lv.nr && lv2.current == lv.current &&
		                   !memcmp(lv2.mhz, lv.mhz, lv.nr * sizeof(lv.mhz[0])),
		           "bytes after the NUL changed the levels");
	}
	free(buf);
}

static void
fuzz_od(const uint8_t *data, size_t size)
{
	static const char *const sections[] = { "OD_SCLK", "OD_MCLK", "OD_VDDGFX_OFFSET" };
	char *buf = exact_copy(data, size);
	char *str = fuzz_cstr(data, size);
	struct clock_levels all;

	/* every level of the section is a level line of the whole text too */
	amdgpu_parse_levels(buf, size, &all);
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		char head[32];
		uint32_t max = amdgpu_od_max(buf, size, sections[i]);

		snprintf(head, sizeof(head), "%s:", sections[i]);
		if (max == 0)
			continue;
		FUZZ_CHECK(strstr(str, head), "%s maximum %u without an %s line", sections[i], max,
		           head);
		/* the whole text's list keeps only its first 16 level lines */
		if (all.nr < 16)
			FUZZ_CHECK(find_level(&all, max) >= 0,
			           "%s maximum %u is no level line of the text", sections[i], max);
	}
	free(str);
	free(buf);
}

static void
fuzz_ras(const uint8_t *data, size_t size)
{
	char *str = fuzz_cstr(data, size);
	uint64_t ue = 12345, ce = 67890;
	int rc = amdgpu_parse_ras(str, &ue, &ce);

	FUZZ_CHECK(rc == 0 || rc == E_PARSE, "amdgpu_parse_ras: status %d", rc);
	if (rc == 0)
		FUZZ_CHECK(strstr(str, "ue:") && strstr(str, "ce:"),
		           "RAS counts %llu and %llu without \"ue:\" and \"ce:\"",
		           (unsigned long long)ue, (unsigned long long)ce);
	free(str);
}

static void
fuzz_throttle(const uint8_t *data, size_t size)
{
	uint64_t bits = 0;

	for (size_t i = 0; i < 8 && i < size; i++)
		bits |= (uint64_t)data[i] << (8 * i);
	check_throttle(bits, size > 8 ? data[8] : 64);
	check_throttle(bits, 0);
	check_throttle(bits, 1024);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned sel;

	if (!size)
		return 0;
	sel = data[0] & 7;
	data++;
	size--;
	if (sel == 0 || sel > 4)
		fuzz_metrics(data, size);
	if (sel == 1 || sel > 4)
		fuzz_levels(data, size);
	if (sel == 2 || sel > 4)
		fuzz_od(data, size);
	if (sel == 3 || sel > 4)
		fuzz_ras(data, size);
	if (sel == 4 || sel > 4)
		fuzz_throttle(data, size);
	return 0;
}
