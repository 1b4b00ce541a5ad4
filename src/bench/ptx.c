/*
 * The built-in PTX (bench/ptx.h): the images of src/bench/kernels/,
 * included by ptx_data.S, and which of dev.h's kernels each holds, read
 * from its own .entry lines once, so that has() cannot disagree with what
 * the driver will find in the module.
 */
#include "bench/ptx.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

/* ptx_data.S: each file's text and a NUL */
extern const char gs_ptx_sm75[], gs_ptx_sm80[], gs_ptx_sm89[];

/* highest first: a device takes the first it reaches */
static const struct ptx_level {
	int major, minor;
	const char *name;
	const char *ptx;
} levels[] = {
	{ 8, 9, "sm_89", gs_ptx_sm89 },
	{ 8, 0, "sm_80", gs_ptx_sm80 },
	{ 7, 5, "sm_75", gs_ptx_sm75 },
};
#define NLEVELS (sizeof(levels) / sizeof(levels[0]))

_Static_assert(BK_NKERNELS <= 64, "a level's kernels are a 64-bit set");
static uint64_t level_kerns[NLEVELS];
static pthread_once_t kerns_once = PTHREAD_ONCE_INIT;

/* the kernel an ".entry NAME(" line at p declares, or -1 */
static int
entry_kern(const char *p)
{
	char name[64];
	size_t len = 0;

	if (strncmp(p, ".visible ", 9) == 0)
		p += 9;
	if (strncmp(p, ".entry ", 7) != 0)
		return -1;
	p += 7;
	while (p[len] == '_' || (p[len] >= 'a' && p[len] <= 'z') ||
	       (p[len] >= 'A' && p[len] <= 'Z') || (p[len] >= '0' && p[len] <= '9'))
		if (++len >= sizeof(name))
			return -1;
	if (len == 0 || p[len] != '(')
		return -1;
	memcpy(name, p, len);
	name[len] = '\0';
	return bench_kern_by_name(name);
}

static void
parse_levels(void)
{
	for (size_t l = 0; l < NLEVELS; l++) {
		uint64_t set = 0;

		for (const char *line = levels[l].ptx; line; line = strchr(line, '\n')) {
			int k;

			if (*line == '\n')
				line++;
			k = entry_kern(line);
			if (k >= 0)
				set |= UINT64_C(1) << k;
		}
		level_kerns[l] = set;
	}
}

/* the level a device of major.minor runs, or -1 */
static int
pick_level(int major, int minor)
{
	for (size_t l = 0; l < NLEVELS; l++)
		if (major > levels[l].major ||
		    (major == levels[l].major && minor >= levels[l].minor))
			return (int)l;
	return -1;
}

const char *
bench_ptx_image(int cc_major, int cc_minor, const char **level)
{
	int l = pick_level(cc_major, cc_minor);
	const char *why;

	if (l >= 0) {
		if (level)
			*level = levels[l].name;
		return levels[l].ptx;
	}
	if (cc_major <= 0 || cc_minor < 0)
		why = "not a compute capability: the built-in PTX needs 7.5 (sm_75) or later";
	else
		why = "below 7.5, the lowest the built-in PTX targets (sm_75, Turing; CUDA 13, "
		      "which made it, has no sm_70)";
	if (level)
		*level = why;
	return NULL;
}

bool
bench_ptx_has(int cc_major, int cc_minor, enum bench_kern k)
{
	int l = pick_level(cc_major, cc_minor);

	if (l < 0 || (unsigned)k >= BK_NKERNELS)
		return false;
	pthread_once(&kerns_once, parse_levels);
	return (level_kerns[l] >> k) & 1;
}
