/*
 * Tests of the built-in PTX (bench/ptx.c, src/bench/kernels/): which image
 * each compute capability gets (none below 7.5); each image's .version,
 * .target and header as gs.cu documents them, no path in it; every dev.h
 * kernel an .entry of the levels that should have it and of no other, with
 * dev.h's parameters in order (the ABI the CUDA backend launches with);
 * bench_ptx_has() agreeing with the text, and false for what is not there.
 * The tables here are written from dev.h and gs.cu's header, not from ptx.c.
 */
#include "bench/ptx.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

/* the levels: the name, the cc that reaches it, the .version gs.cu documents */
static const struct {
	const char *name;
	int major, minor;
	const char *version;
} levels[] = {
	{ "sm_75", 7, 5, "6.3" },
	{ "sm_80", 8, 0, "7.0" },
	{ "sm_89", 8, 9, "8.4" },
};
#define NLEVELS 3

/*
 * dev.h's kernels: the lowest level that has each (index into levels) and
 * the parameters in order: p a pointer, q u64, i i32, u u32, f f32, d f64
 */
static const struct {
	enum bench_kern k;
	int level;
	const char *params;
} kerns[] = {
	{ BK_EMPTY, 0, "i" },
	{ BK_SPIN, 0, "pq" },
	{ BK_STREAM_INIT, 0, "pppfffq" },
	{ BK_STREAM_COPY, 0, "ppq" },
	{ BK_STREAM_MUL, 0, "ppfq" },
	{ BK_STREAM_ADD, 0, "pppq" },
	{ BK_STREAM_TRIAD, 0, "pppfq" },
	{ BK_STREAM_DOT, 0, "pppq" },
	{ BK_FMA_F64, 0, "pffi" },
	{ BK_FMA_F32, 0, "pffi" },
	{ BK_FMA_F16, 0, "pffi" },
	{ BK_FMA_BF16, 1, "pffi" },
	{ BK_FMA_I32, 0, "pffi" },
	{ BK_DP4A_I8, 0, "pffi" },
	{ BK_MMA_F16, 1, "pfi" },
	{ BK_MMA_BF16, 1, "pfi" },
	{ BK_MMA_TF32, 1, "pfi" },
	{ BK_MMA_I8, 1, "pfi" },
	{ BK_MMA_FP8, 2, "pfi" },
	{ BK_COPY_U4, 0, "ppq" },
	{ BK_MATMUL_NAIVE, 0, "pppi" },
	{ BK_MATMUL_TILED, 0, "pppi" },
	{ BK_MATMUL_TILED_F64, 0, "pppi" },
	{ BK_COMPARE_F32, 0, "ppqfp" },
	{ BK_COMPARE_F64, 0, "ppqdp" },
	{ BK_MEM_FILL, 0, "pqui" },
	{ BK_MEM_CHECK, 0, "pquipp" },
};
#define NKERNS (sizeof(kerns) / sizeof(kerns[0]))

/* how many lines of text start with line */
static int
count_lines(const char *text, const char *line)
{
	size_t len = strlen(line);
	int n = 0;

	for (const char *p = text; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, line, len) == 0)
			n++;
	}
	return n;
}

/* the PTX types of kernel name's parameters, as a string of dev.h letters, or "" */
static void
entry_params(const char *text, const char *name, char *out, size_t size)
{
	char head[96];
	const char *p, *end;
	size_t n = 0;

	out[0] = '\0';
	snprintf(head, sizeof(head), "\n.visible .entry %s(", name);
	p = strstr(text, head);
	if (!p)
		return;
	p += strlen(head);
	end = strchr(p, ')');
	if (!end)
		return;
	while ((p = strstr(p, ".param ")) && p < end && n + 1 < size) {
		char c = '?';

		p += 7;
		/* p and q are both .u64, i and u both .u32: the letters compared are the PTX's */
		if (strncmp(p, ".u64 ", 5) == 0)
			c = 'q';
		else if (strncmp(p, ".u32 ", 5) == 0)
			c = 'u';
		else if (strncmp(p, ".f32 ", 5) == 0)
			c = 'f';
		else if (strncmp(p, ".f64 ", 5) == 0)
			c = 'd';
		out[n++] = c;
	}
	out[n] = '\0';
}

/* dev.h's letters as the PTX types they become */
static void
ptx_letters(const char *params, char *out, size_t size)
{
	size_t n = 0;

	for (; *params && n + 1 < size; params++)
		out[n++] = *params == 'p' ? 'q' : *params == 'i' ? 'u' : *params;
	out[n] = '\0';
}

static void
test_pick(void)
{
	static const struct {
		int major, minor;
		const char *want; /* NULL: no image */
	} cases[] = {
		{ 0, 0, NULL },
		{ -1, 5, NULL },
		{ 3, 5, NULL },
		{ 6, 1, NULL },
		{ 7, 0, NULL },
		{ 7, 2, NULL },
		{ 7, 4, NULL },
		{ 7, -1, NULL },
		{ 7, 5, "sm_75" },
		{ 7, 9, "sm_75" },
		{ 8, 0, "sm_80" },
		{ 8, 6, "sm_80" },
		{ 8, 7, "sm_80" },
		{ 8, 8, "sm_80" },
		{ 8, 9, "sm_89" },
		{ 9, 0, "sm_89" },
		{ 10, 0, "sm_89" },
		{ 10, 3, "sm_89" },
		{ 12, 0, "sm_89" },
		{ 12, 1, "sm_89" },
		{ INT_MAX, INT_MAX, "sm_89" },
		{ INT_MIN, INT_MIN, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *level = "untouched";
		const char *ptx = bench_ptx_image(cases[i].major, cases[i].minor, &level);

		if (cases[i].want) {
			char target[32];

			snprintf(target, sizeof(target), ".target %s", cases[i].want);
			ok(ptx && level && strcmp(level, cases[i].want) == 0 &&
			           count_lines(ptx, target) == 1,
			   "cc %d.%d: %s (got %s)", cases[i].major, cases[i].minor, cases[i].want,
			   level ? level : "NULL");
		} else {
			ok(!ptx && level && strcmp(level, "untouched") != 0 && strlen(level) > 10 &&
			           !strchr(level, '\n'),
			   "cc %d.%d: no image, with a reason (%s)", cases[i].major, cases[i].minor,
			   level ? level : "NULL");
			for (int k = 0; k < BK_NKERNELS; k++)
				if (bench_ptx_has(cases[i].major, cases[i].minor,
				                  (enum bench_kern)k)) {
					ok(0, "cc %d.%d: has(%s) without an image", cases[i].major,
					   cases[i].minor, bench_kern_name((enum bench_kern)k));
					break;
				}
		}
	}
	ok(bench_ptx_image(8, 0, NULL) != NULL && bench_ptx_image(7, 0, NULL) == NULL,
	   "level may be NULL");
	ok(!bench_ptx_has(9, 0, BK_NKERNELS) && !bench_ptx_has(9, 0, (enum bench_kern) - 1) &&
	           !bench_ptx_has(9, 0, (enum bench_kern)1000),
	   "has: a kernel outside dev.h's set is not there");
}

static void
test_image(int l)
{
	const char *level = NULL;
	const char *ptx = bench_ptx_image(levels[l].major, levels[l].minor, &level);
	char line[64];
	int entries;

	if (!ptx || !level || strcmp(level, levels[l].name) != 0) {
		ok(0, "%s: the image of cc %d.%d", levels[l].name, levels[l].major,
		   levels[l].minor);
		return;
	}
	ok(strncmp(ptx, "//\n// Generated by NVIDIA NVVM Compiler\n", 40) == 0,
	   "%s: nvcc's PTX, header and all", levels[l].name);
	ok(strlen(ptx) > 10000 && ptx[strlen(ptx) - 1] == '\n',
	   "%s: the whole file, NUL-terminated (%zu bytes)", levels[l].name, strlen(ptx));
	snprintf(line, sizeof(line), ".version %s\n", levels[l].version);
	ok(count_lines(ptx, ".version ") == 1 && count_lines(ptx, line) == 1,
	   "%s: .version %s, lowered as gs.cu says", levels[l].name, levels[l].version);
	snprintf(line, sizeof(line), ".target %s\n", levels[l].name);
	ok(count_lines(ptx, ".target ") == 1 && count_lines(ptx, line) == 1, "%s: .target %s",
	   levels[l].name, levels[l].name);
	ok(count_lines(ptx, ".address_size 64") == 1, "%s: 64-bit addresses", levels[l].name);
	ok(!strstr(ptx, "/work/") && !strstr(ptx, "/tmp/") && !strstr(ptx, "/home/") &&
	           !strstr(ptx, "/usr/") && count_lines(ptx, "\t.file") == 0 &&
	           count_lines(ptx, ".file") == 0,
	   "%s: no paths (no .file, no directory)", levels[l].name);
	/* the instructions of the level and none of a later one */
	ok((strstr(ptx, "mma.sync.aligned") != NULL) == (l >= 1) &&
	           (strstr(ptx, ".bf16") != NULL) == (l >= 1) &&
	           (strstr(ptx, ".e4m3") != NULL) == (l >= 2),
	   "%s: mma and bf16 from sm_80, e4m3 from sm_89", levels[l].name);

	entries = count_lines(ptx, ".visible .entry ");
	{
		int want = 0;

		for (size_t i = 0; i < NKERNS; i++)
			want += kerns[i].level <= l;
		is_int(entries, want, "%s: %d entries, every one a dev.h kernel of the level",
		       levels[l].name, want);
		is_int(count_lines(ptx, ".entry ") + count_lines(ptx, ".weak .entry ") +
		               count_lines(ptx, ".extern .entry "),
		       0, "%s: no entry that is not .visible", levels[l].name);
	}
	for (size_t i = 0; i < NKERNS; i++) {
		const char *name = bench_kern_name(kerns[i].k);
		bool want = kerns[i].level <= l;
		char head[96], got[16], expect[16];

		snprintf(head, sizeof(head), ".visible .entry %s(", name);
		is_int(count_lines(ptx, head), want ? 1 : 0, "%s: %s %s", levels[l].name, name,
		       want ? "is there" : "is not there");
		ok(bench_ptx_has(levels[l].major, levels[l].minor, kerns[i].k) == want,
		   "%s: has(%s) is %s", levels[l].name, name, want ? "true" : "false");
		if (!want)
			continue;
		entry_params(ptx, name, got, sizeof(got));
		ptx_letters(kerns[i].params, expect, sizeof(expect));
		is_str(got, expect, "%s: %s's parameters are dev.h's (%s)", levels[l].name, name,
		       kerns[i].params);
	}
}

int
main(void)
{
	ok(NKERNS == BK_NKERNELS, "the table here has every dev.h kernel");
	for (size_t i = 0; i < NKERNS; i++)
		if (kerns[i].k != (enum bench_kern)i)
			ok(0, "table entry %zu is not kernel %zu", i, i);
	test_pick();
	for (int l = 0; l < NLEVELS; l++)
		test_image(l);
	/* cc 8.6 and 9.0 run a level's image, with its kernels */
	ok(bench_ptx_has(8, 6, BK_MMA_TF32) && !bench_ptx_has(8, 6, BK_MMA_FP8) &&
	           bench_ptx_has(9, 0, BK_MMA_FP8) && bench_ptx_has(12, 1, BK_FMA_BF16) &&
	           !bench_ptx_has(7, 5, BK_FMA_BF16) && bench_ptx_has(7, 5, BK_DP4A_I8),
	   "has between and above the levels");
	return done_testing();
}
