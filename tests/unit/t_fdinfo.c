/*
 * Tests of the DRM fdinfo scanner: every drm-usage-stats key family and
 * parser trap, written as one-process /proc trees in a temporary directory;
 * the fixture tests/fixtures/fdinfo-basic (one process per driver, dup'ed
 * and inherited clients, a DRM file without stats, sysfs links for the
 * device of a minor) sampled twice with its counters rewritten in between;
 * the index cache; unreadable fd directories and fdinfo files.
 *
 * Times passed to fdinfo_sample() are made up, so every percent below is
 * computed by hand: Δns / (Δnow × 1e9 × capacity) × 100.
 */
#include "backend/fdinfo.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "core/config.h"
#include "core/err.h"
#include "core/xalloc.h"
#include "harness.h"
#include "tree.h"

#define EPS 1e-9
#define MiB 1048576.0
#define KiB 1024.0

/* --- helpers --------------------------------------------------------------- */

/* In the file root/rel, replace the first occurrence of from by to. */
static void
rewrite(const char *root, const char *rel, const char *from, const char *to)
{
	char path[8192], *text, *hit, *out;

	join(path, sizeof(path), root, rel);
	text = slurp(path, NULL);
	hit = strstr(text, from);
	if (!hit)
		bail("'%s' not in '%s'", from, path);
	out = calloc(1, strlen(text) + strlen(to) + 1);
	memcpy(out, text, (size_t)(hit - text));
	strcat(out, to);
	strcat(out, hit + strlen(from));
	write_str(path, out);
	free(out);
	free(text);
}

static void
write_stat(const char *dir, uint32_t pid, uint64_t start, unsigned flags, char state)
{
	char text[512];

	snprintf(text, sizeof(text),
	         "%u (a (b) c) %c 1 %u %u 0 -1 %u 120 0 0 0 250 50 0 0 20 0 4 0 %" PRIu64
	         " 104857600 2560 0 0 0\n",
	         pid, state, pid, pid, flags, start);
	write_at(dir, "stat", text);
}

/* root/<pid> with stat, fd/<fd> -> target and, if text, fdinfo/<fd>. */
static void
add_proc(const char *root, uint32_t pid, uint64_t start, int fd, const char *target,
         const char *text)
{
	char dir[8192], sub[8300], name[16];

	snprintf(dir, sizeof(dir), "%s/%u", root, pid);
	make_dir(dir);
	write_stat(dir, pid, start, 0x400000, 'S');
	snprintf(sub, sizeof(sub), "%s/fd", dir);
	make_dir(sub);
	snprintf(name, sizeof(name), "%d", fd);
	link_at(sub, name, target);
	snprintf(sub, sizeof(sub), "%s/fdinfo", dir);
	make_dir(sub);
	if (text)
		write_at(sub, name, text);
}

static void
cfg_for(struct gs_config *cfg, const char *proc, const char *sys, double reindex)
{
	gs_config_init(cfg);
	cfg->proc_root = proc;
	cfg->sysfs_root = sys;
	cfg->reindex = reindex;
}

static const struct fdinfo_proc *
find(const struct fdinfo_scan *s, uint32_t pid)
{
	size_t nr;
	const struct fdinfo_proc *p = fdinfo_procs(s, &nr);

	for (size_t i = 0; i < nr; i++)
		if (p[i].pid == pid)
			return &p[i];
	return NULL;
}

static double
engine(const struct fdinfo_proc *p, const char *name)
{
	if (!p)
		return -1;
	for (unsigned i = 0; i < p->nr_engine; i++)
		if (!strcmp(p->engine[i].name, name))
			return p->engine[i].percent;
	return -1; /* absent: neither a percent nor NaN */
}

static double
mem_local(const struct fdinfo_proc *p)
{
	return p && p->has_local ? p->mem_local : -1;
}

static double
mem_system(const struct fdinfo_proc *p)
{
	return p && p->has_system ? p->mem_system : -1;
}

static int
sample(struct fdinfo_scan *s, double now)
{
	struct err err = ERR_INIT;
	int rc = fdinfo_sample(s, now, &err);

	if (rc)
		diag("fdinfo_sample: %s", err.msg);
	return rc;
}

/*
 * One process (pid 42) holding fd 3 on renderD128, sampled once per text
 * at now = 10, 11, 12, ...: the entry of the last sample goes to *out
 * (zeroed with pid 0 when there is none). texts end with NULL.
 */
static void
series(const char *name, const char *const *texts, struct fdinfo_proc *out)
{
	char root[4096];
	struct gs_config cfg;
	struct fdinfo_scan *s;
	const struct fdinfo_proc *p = NULL;

	tmp_path(root, sizeof(root), name);
	make_dir(root);
	cfg_for(&cfg, root, "/nonexistent", 60);
	s = fdinfo_new(&cfg);
	for (int i = 0; texts[i]; i++) {
		add_proc(root, 42, 1000, 3, "/dev/dri/renderD128", texts[i]);
		sample(s, 10 + i);
		p = find(s, 42);
	}
	memset(out, 0, sizeof(*out));
	if (p)
		*out = *p;
	fdinfo_free(s);
	rm_tree(root);
}

static void
one(const char *name, const char *text, struct fdinfo_proc *out)
{
	const char *texts[] = { text, NULL };

	series(name, texts, out);
}

static void
two(const char *name, const char *a, const char *b, struct fdinfo_proc *out)
{
	const char *texts[] = { a, b, NULL };

	series(name, texts, out);
}

/* --- key families on strings ------------------------------------------------ */

#define HDR \
	"pos:\t0\nflags:\t02100002\nmnt_id:\t24\nino:\t77\ndrm-driver:\ttest\ndrm-client-id:\t5\n"

static void
test_engines(void)
{
	struct fdinfo_proc p;

	/* busy ns: the first sample shows nothing, the second Δns / Δnow */
	one("eng1", HDR "drm-engine-gfx:\t1000000000 ns\n", &p);
	ok(p.pid == 42 && p.nr_engine == 1 && isnan(engine(&p, "gfx")),
	   "first sample: the engine is listed, its use NaN");
	two("eng2", HDR "drm-engine-gfx:\t1000000000 ns\n", HDR "drm-engine-gfx:\t1250000000 ns\n",
	    &p);
	is_dbl(engine(&p, "gfx"), 25, EPS, "second sample: 250 ms busy over 1 s is 25 %%");
	is_str(p.driver, "test", "drm-driver");
	is_int(p.minor, 128, "minor from the fd link (renderD128)");

	/* capacity divides */
	two("cap", HDR "drm-engine-video:\t0 ns\ndrm-engine-capacity-video:\t2\n",
	    HDR "drm-engine-capacity-video:\t2\ndrm-engine-video:\t500000000 ns\n", &p);
	is_dbl(engine(&p, "video"), 25, EPS, "capacity 2: 500 ms busy over 1 s is 25 %%");
	ok(engine(&p, "capacity-video") == -1, "drm-engine-capacity-* is not an engine");
	two("cap0", HDR "drm-engine-video:\t0 ns\ndrm-engine-capacity-video:\t0\n",
	    HDR "drm-engine-capacity-video:\t0\ndrm-engine-video:\t500000000 ns\n", &p);
	is_dbl(engine(&p, "video"), 50, EPS, "capacity 0 (never valid) is taken as 1");
	two("capx", HDR "drm-engine-capacity-ccs:\t4\n", HDR "drm-engine-capacity-ccs:\t4\n", &p);
	ok(p.nr_engine == 0, "a capacity alone makes no engine");

	/* xe: cycles over total cycles, divided by the capacity */
	two("xe",
	    HDR "drm-cycles-ccs:\t100\ndrm-total-cycles-ccs:\t1000\ndrm-engine-capacity-ccs:\t4\n"
	        "drm-cycles-rcs:\t0\ndrm-total-cycles-rcs:\t1000\n",
	    HDR "drm-cycles-ccs:\t2100\ndrm-total-cycles-ccs:\t3000\ndrm-engine-capacity-ccs:\t4\n"
	        "drm-cycles-rcs:\t500\ndrm-total-cycles-rcs:\t3000\n",
	    &p);
	is_dbl(engine(&p, "ccs"), 25, EPS, "xe: Δcycles 2000 / Δtotal 2000 / capacity 4 = 25 %%");
	is_dbl(engine(&p, "rcs"), 25, EPS, "xe: Δcycles 500 / Δtotal 2000 = 25 %%");
	two("xe-still", HDR "drm-cycles-rcs:\t10\ndrm-total-cycles-rcs:\t1000\n",
	    HDR "drm-cycles-rcs:\t10\ndrm-total-cycles-rcs:\t1000\n", &p);
	ok(isnan(engine(&p, "rcs")), "xe: total cycles that did not move give NaN, not 0/0");

	/* ns and cycles: ns wins (msm) */
	two("msm",
	    HDR "drm-engine-gpu:\t0 ns\ndrm-cycles-gpu:\t0\ndrm-maxfreq-gpu:\t800000000 Hz\n",
	    HDR
	    "drm-engine-gpu:\t400000000 ns\ndrm-cycles-gpu:\t0\ndrm-maxfreq-gpu:\t800000000 Hz\n",
	    &p);
	is_dbl(engine(&p, "gpu"), 40, EPS, "msm: busy ns preferred over cycles");

	/* cycles and maxfreq alone */
	two("maxfreq", HDR "drm-cycles-gpu:\t1000\ndrm-maxfreq-gpu:\t500 MHz\n",
	    HDR "drm-cycles-gpu:\t250001000\ndrm-maxfreq-gpu:\t500 MHz\n", &p);
	is_dbl(engine(&p, "gpu"), 50, EPS, "cycles and maxfreq: 250 M cycles at 500 MHz over 1 s");
	two("maxfreq-k",
	    HDR "drm-cycles-gpu:\t0\ndrm-maxfreq-gpu:\t250000 kHz\ndrm-engine-capacity-gpu:\t2\n",
	    HDR "drm-cycles-gpu:\t100000000\ndrm-maxfreq-gpu:\t250000 kHz\n"
	        "drm-engine-capacity-gpu:\t2\n",
	    &p);
	is_dbl(engine(&p, "gpu"), 20, EPS, "cycles, maxfreq in kHz, capacity 2");
	two("maxfreq-bad", HDR "drm-cycles-gpu:\t0\ndrm-maxfreq-gpu:\t500 parsecs\n",
	    HDR "drm-cycles-gpu:\t100\ndrm-maxfreq-gpu:\t500 parsecs\n", &p);
	ok(isnan(engine(&p, "gpu")), "cycles without a usable maxfreq: NaN");

	/* an engine amdgpu starts printing once it has run: it was at 0 */
	two("late", HDR "drm-engine-gfx:\t0 ns\n",
	    HDR "drm-engine-gfx:\t0 ns\ndrm-engine-compute:\t300000000 ns\n", &p);
	is_dbl(engine(&p, "compute"), 30, EPS, "an engine first printed at the second sample");
	is_dbl(engine(&p, "gfx"), 0, EPS, "an idle engine: 0 %%");
}

static void
test_deltas(void)
{
	struct fdinfo_proc p;
	const char *back[] = { HDR "drm-engine-gfx:\t1000000000 ns\n",
		               HDR "drm-engine-gfx:\t900000000 ns\n",
		               HDR "drm-engine-gfx:\t1200000000 ns\n", NULL };
	const char *ahead[] = { HDR "drm-engine-gfx:\t0 ns\n",
		                HDR "drm-engine-gfx:\t2000000000 ns\n",
		                HDR "drm-engine-gfx:\t2500000000 ns\n", NULL };
	const char *xe_back[] = { HDR "drm-cycles-rcs:\t500\ndrm-total-cycles-rcs:\t1000\n",
		                  HDR "drm-cycles-rcs:\t400\ndrm-total-cycles-rcs:\t2000\n",
		                  HDR "drm-cycles-rcs:\t1100\ndrm-total-cycles-rcs:\t3000\n",
		                  NULL };

	series("back2", (const char *const[]){ back[0], back[1], NULL }, &p);
	ok(isnan(engine(&p, "gfx")), "a counter that steps back: NaN");
	series("back3", back, &p);
	is_dbl(engine(&p, "gfx"), 10, EPS,
	       "... and the next delta starts from the larger previous value (200 ms over 2 s)");
	series("ahead2", (const char *const[]){ ahead[0], ahead[1], NULL }, &p);
	ok(isnan(engine(&p, "gfx")), "2 s busy in 1 s: discarded, NaN");
	series("ahead3", ahead, &p);
	is_dbl(engine(&p, "gfx"), 50, EPS, "... and the next delta starts from it");
	two("jitter", HDR "drm-engine-gfx:\t0 ns\n", HDR "drm-engine-gfx:\t1020000000 ns\n", &p);
	is_dbl(engine(&p, "gfx"), 100, EPS, "2 %% over the time elapsed is read jitter: 100 %%");
	two("over5", HDR "drm-engine-gfx:\t0 ns\n", HDR "drm-engine-gfx:\t1060000000 ns\n", &p);
	ok(isnan(engine(&p, "gfx")), "6 %% over the time elapsed: discarded");
	series("xe-back", xe_back, &p);
	is_dbl(engine(&p, "rcs"), 30, EPS, "xe cycles stepping back keep the previous reading");
}

static void
test_memory(void)
{
	struct fdinfo_proc p;

	one("units",
	    HDR
	    "drm-resident-vram0:\t1000\ndrm-resident-vram1:\t2 KiB\ndrm-resident-local0:\t3 MiB\n"
	    "drm-resident-gtt:\t1 GiB\ndrm-resident-system0:\t5 kB\n"
	    "drm-resident-cpu:\t0 MiB\n",
	    &p);
	is_dbl(mem_local(&p), 1000 + 2 * KiB + 3 * MiB, EPS,
	       "local: bytes, KiB, MiB; vram0, vram1 and local0 add up");
	is_dbl(mem_system(&p), 1024 * MiB + 5 * KiB, EPS, "system: GiB, kB, and a 0 MiB");

	one("precedence",
	    HDR "drm-total-vram:\t10 MiB\ndrm-memory-vram:\t5 MiB\ndrm-total-gtt:\t3 MiB\n"
	        "drm-resident-memory:\t7 MiB\ndrm-memory-memory:\t8 MiB\ndrm-total-memory:\t9 MiB\n"
	        "drm-shared-memory:\t100 MiB\ndrm-purgeable-memory:\t100 MiB\n"
	        "drm-active-memory:\t100 MiB\n",
	    &p);
	is_dbl(mem_local(&p), 5 * MiB, EPS, "drm-memory- (deprecated) before drm-total-");
	is_dbl(mem_system(&p), 10 * MiB, EPS,
	       "drm-resident- first; shared, purgeable, active not added");

	one("classes",
	    HDR "drm-resident-stolen:\t1 KiB\ndrm-resident-stolen-system0:\t2 KiB\n"
	        "drm-resident-stolen-local0:\t4 KiB\ndrm-resident-gds:\t1 MiB\n"
	        "drm-resident-gws:\t1 MiB\ndrm-resident-oa:\t1 MiB\ndrm-resident-doorbell:\t1 MiB\n"
	        "drm-resident-mmioremap:\t1 MiB\ndrm-resident-vramx:\t1 MiB\n"
	        "drm-resident-cpu0:\t1 MiB\n",
	    &p);
	is_dbl(mem_local(&p), 7 * KiB, EPS, "stolen memory of any kind is device memory");
	ok(!p.has_system, "on-chip pools and unknown regions are not memory we count");

	one("badunits",
	    HDR "drm-resident-vram:\t5 MB\ndrm-resident-gtt:\t-5\ndrm-resident-system:\t1 2\n"
	        "drm-resident-memory:\t99999999999999999999999\n",
	    &p);
	ok(!p.has_local && !p.has_system, "unknown units, signs, two numbers, overflow: ignored");

	one("none", HDR "drm-engine-gfx:\t0 ns\n", &p);
	ok(!p.has_local && !p.has_system && p.mem_local == 0,
	   "no memory keys: neither kind reported");
}

static void
test_traps(void)
{
	struct fdinfo_proc p;
	char big[24 * 1024];

	/* amdgpu's "drm-memory-gtt: \t", CRLF, pasted indentation, no final newline */
	one("blanks",
	    " pos:\t0\n drm-driver:  amdgpu \r\n drm-client-id:\t3\r\ndrm-memory-gtt: \t22528 KiB\n"
	    "drm-memory-vram :\t1 KiB\n\t\tdrm-resident-cpu:  \t 2 KiB \t\ndrm-engine-gfx:\t5 ns",
	    &p);
	is_str(p.driver, "amdgpu", "blanks around the value and CR are dropped");
	is_dbl(mem_system(&p), 22528 * KiB + 2 * KiB, EPS, "space before the tab; leading blanks");
	is_dbl(mem_local(&p), 1 * KiB, EPS, "a blank before the colon");
	ok(p.nr_engine == 1, "the last line without a newline is read");

	/* order of keys, unknown and driver-prefixed keys */
	one("order",
	    "pasid:\t32785\ndrm-engine-gfx:\t7 ns\nsomething-new:\t12 ns\namd-evicted-vram:\t5 KiB\n"
	    "amd-requested-vram:\t5 KiB\npanthor-resident-memory:\t10396 KiB\n"
	    "v3d-jobs-bin:\t98 jobs\ndrm-curfreq-gpu:\t10 Hz\ndrm-client-name:\tfoo\n"
	    "no colon here\n:\t5\ndrm-driver:\tamdgpu\ndrm-pdev:\t0000:03:00.0\n",
	    &p);
	ok(!strcmp(p.driver, "amdgpu") && !strcmp(p.pdev, "0000:03:00.0") && p.nr_engine == 1 &&
	           !p.has_local && !p.has_system,
	   "keys in any order; driver-prefixed and unknown keys ignored");

	/* bad engine values */
	one("badeng",
	    HDR "drm-engine-a:\tabc ns\ndrm-engine-b:\t5 ms\ndrm-engine-c:\t-5 ns\n"
	        "drm-engine-d:\t99999999999999999999 ns\ndrm-engine-:\t5 ns\n"
	        "drm-engine-this-name-is-too-long-for-us:\t5 ns\ndrm-engine-e:\t5\n"
	        "drm-cycles-f:\t5 cycles\n",
	    &p);
	ok(p.nr_engine == 1 && engine(&p, "e") != -1,
	   "bad numbers, units, empty and long names ignored; a bare number is ns");

	/* names with control characters or bytes past ASCII: not names (the fuzzer found a NUL) */
	one("ctrlname",
	    HDR "drm-engine-a\001b:\t5 ns\ndrm-engine-\177:\t5 ns\ndrm-engine-\303\251:\t5 ns\n"
	        "drm-resident-v\033ram:\t5 KiB\ndrm-engine-ok:\t5 ns\n",
	    &p);
	ok(p.nr_engine == 1 && engine(&p, "ok") != -1 && !p.has_local && !p.has_system,
	   "engine and region names with control or non-ASCII bytes are ignored");

	/* more engines than we keep */
	one("many",
	    HDR
	    "drm-engine-e1: 1 ns\ndrm-engine-e2: 1 ns\ndrm-engine-e3: 1 ns\ndrm-engine-e4: 1 ns\n"
	    "drm-engine-e5: 1 ns\ndrm-engine-e6: 1 ns\ndrm-engine-e7: 1 ns\ndrm-engine-e8: 1 ns\n"
	    "drm-engine-e9: 1 ns\ndrm-engine-e10: 1 ns\ndrm-engine-e11: 1 ns\n"
	    "drm-engine-e12: 1 ns\ndrm-engine-e13: 1 ns\ndrm-engine-e14: 1 ns\n",
	    &p);
	ok(p.nr_engine == GPU_MAX_ENGINES && engine(&p, "e12") != -1 && engine(&p, "e13") == -1,
	   "engines past GPU_MAX_ENGINES are dropped");

	/* a file beyond the read cap: what is past it is not read, nothing breaks */
	snprintf(big, sizeof(big), "%s", HDR);
	while (strlen(big) < 17000)
		strcat(big, "amd-padding:\t0 KiB\n");
	strcat(big, "drm-engine-late:\t5 ns\n");
	one("big", big, &p);
	ok(p.pid == 42 && p.nr_engine == 0, "past 16 KiB: not read");

	/* no driver: a DRM file without stats */
	one("nostats", "pos:\t0\nflags:\t02\nmnt_id:\t2\nino:\t5\n", &p);
	ok(p.pid == 42 && !p.driver[0] && p.nr_engine == 0 && !p.has_local && !p.denied,
	   "a DRM file without drm- keys: a GPU user with no figures");

	/* amdgpu of 5.14-5.18 */
	one("legacy",
	    "pos:\t0\npdev:\t0000:05:00.0\npasid:\t32784\nvram mem:\t1024 kB\ngtt mem:\t2048 kB\n"
	    "cpu mem:\t4 kB\ngfx0:\t12.5%\ngfx1:\t3.0%\ncompute0:\t50.25%\ncompute1:\t60 %\n"
	    "enc_10:\t1.0%\ndec0:\tabc%\njpeg0:\t2\ngfx:\t5%\nfoo0:\t5%\n",
	    &p);
	is_str(p.driver, "amdgpu", "legacy: driver amdgpu");
	is_str(p.pdev, "0000:05:00.0", "legacy: pdev");
	is_dbl(engine(&p, "gfx"), 15.5, EPS, "legacy: rings of one IP add up, on the first sample");
	is_dbl(engine(&p, "compute"), 100, EPS, "legacy: clamped to 100");
	is_dbl(engine(&p, "enc_1"), 1, EPS, "legacy: enc_1 ring 0 is 'enc_10'");
	ok(engine(&p, "dec") == -1 && engine(&p, "jpeg") == -1 && engine(&p, "foo") == -1,
	   "legacy: bad percents and unknown IPs ignored");
	is_dbl(mem_local(&p), 1024 * KiB, EPS, "legacy: vram mem in kB");
	is_dbl(mem_system(&p), 2052 * KiB, EPS, "legacy: gtt mem + cpu mem");
}

/* A pid reused by another process: same client id, another start time. */
static void
test_pid_reuse(void)
{
	char root[4096], dir[4200];
	struct gs_config cfg;
	struct fdinfo_scan *s;
	const struct fdinfo_proc *p;

	tmp_path(root, sizeof(root), "reuse");
	make_dir(root);
	snprintf(dir, sizeof(dir), "%s/42", root);
	cfg_for(&cfg, root, "/nonexistent", 0); /* a walk at every sample reads stat */
	s = fdinfo_new(&cfg);
	add_proc(root, 42, 1000, 3, "/dev/dri/renderD128", HDR "drm-engine-gfx:\t0 ns\n");
	sample(s, 10);
	add_proc(root, 42, 1000, 3, "/dev/dri/renderD128", HDR "drm-engine-gfx:\t100000000 ns\n");
	sample(s, 11);
	p = find(s, 42);
	is_dbl(engine(p, "gfx"), 10, EPS, "reuse: the same process, 10 %%");
	write_stat(dir, 42, 5000, 0x400000, 'S');
	add_proc(root, 42, 5000, 3, "/dev/dri/renderD128", HDR "drm-engine-gfx:\t300000000 ns\n");
	sample(s, 12);
	p = find(s, 42);
	ok(p && p->start_ticks == 5000, "reuse: the new start time");
	ok(p && isnan(engine(p, "gfx")), "reuse: a new process starts with NaN");
	add_proc(root, 42, 5000, 3, "/dev/dri/renderD128", HDR "drm-engine-gfx:\t500000000 ns\n");
	sample(s, 13);
	is_dbl(engine(find(s, 42), "gfx"), 20, EPS, "reuse: then its own rate");
	fdinfo_free(s);
	rm_tree(root);
}

/* An fd closed and reused between walks: dropped until the next walk finds it again. */
static void
test_fd_reuse(void)
{
	char root[4096], dir[4200];
	struct gs_config cfg;
	struct fdinfo_scan *s;

	tmp_path(root, sizeof(root), "fdreuse");
	make_dir(root);
	cfg_for(&cfg, root, "/nonexistent", 5);
	s = fdinfo_new(&cfg);
	add_proc(root, 42, 1000, 3, "/dev/dri/renderD128", HDR "drm-engine-gfx:\t0 ns\n");
	add_proc(root, 43, 1000, 3, "/dev/dri/renderD128",
	         "pos:\t0\nino:\t50\ndrm-driver:\tx\ndrm-client-id:\t9\n");
	sample(s, 0);
	ok(find(s, 42) && find(s, 43), "fd reuse: both found");
	/* 42's fd 3 is now a plain file (no drm- keys), 43's another file (ino) */
	add_proc(root, 42, 1000, 3, "/dev/dri/renderD128", "pos:\t0\nflags:\t0\nino:\t77\n");
	add_proc(root, 43, 1000, 3, "/dev/dri/renderD128",
	         "pos:\t0\nino:\t51\ndrm-driver:\tx\ndrm-client-id:\t10\n");
	sample(s, 1);
	ok(!find(s, 42), "fd reuse: an fd that lost its drm- keys is dropped");
	ok(!find(s, 43), "fd reuse: an fd whose ino changed is dropped");
	sample(s, 6);
	ok(find(s, 42) && !find(s, 42)->driver[0], "fd reuse: the next walk takes it as it is now");
	ok(find(s, 43) != NULL, "fd reuse: ... and the other");

	/* one process on two GPUs: two entries; a pdev keeps them apart */
	snprintf(dir, sizeof(dir), "%s/42/fd", root);
	link_at(dir, "4", "/dev/dri/renderD129");
	snprintf(dir, sizeof(dir), "%s/42/fdinfo", root);
	write_at(dir, "3",
	         "drm-driver:\tamdgpu\ndrm-pdev:\t0000:03:00.0\ndrm-client-id:\t1\n"
	         "drm-resident-vram:\t1 MiB\n");
	write_at(dir, "4",
	         "drm-driver:\tamdgpu\ndrm-pdev:\t0000:04:00.0\ndrm-client-id:\t1\n"
	         "drm-resident-vram:\t2 MiB\n");
	sample(s, 12);
	{
		size_t nr, n42 = 0;
		const struct fdinfo_proc *p = fdinfo_procs(s, &nr);

		for (size_t i = 0; i < nr; i++)
			n42 += p[i].pid == 42;
		ok(n42 == 2, "two GPUs: two entries for one process");
		ok(nr >= 2 && p[0].pid == 42 && p[1].pid == 42 &&
		           !strcmp(p[0].pdev, "0000:03:00.0") && p[0].mem_local == 1 * MiB &&
		           !strcmp(p[1].pdev, "0000:04:00.0") && p[1].mem_local == 2 * MiB,
		   "two GPUs: the same client id on two devices is two clients");
	}
	fdinfo_free(s);
	rm_tree(root);
}

/* --- the fixture ------------------------------------------------------------ */

static void
check_first(const struct fdinfo_scan *s)
{
	static const uint32_t want[] = { 100, 200, 300, 400,  500,  600,
		                         700, 800, 900, 1100, 1200, 1300 };
	const struct fdinfo_proc *p;
	size_t nr;

	p = fdinfo_procs(s, &nr);
	is_int(nr, ARRAY_SIZE(want), "fixture: one entry per process and device");
	for (size_t i = 0; i < nr && i < ARRAY_SIZE(want); i++)
		if (p[i].pid != want[i]) {
			ok(0, "fixture: entry %zu is pid %u, not %u", i, p[i].pid, want[i]);
			return;
		}
	ok(!find(s, 2) && !find(s, 1000) && !find(s, 301),
	   "no kernel thread, no process without DRM files, no second holder of a client");
	ok(!fdinfo_some_denied(s) && fdinfo_nr_denied(s) == 0, "nothing denied");

	p = find(s, 100);
	ok(p && !strcmp(p->driver, "amdgpu") && !strcmp(p->pdev, "0000:03:00.0") &&
	           p->start_ticks == 5000 && !p->denied,
	   "amdgpu: driver, pdev, start time");
	is_dbl(mem_local(p), 155068 * KiB + 1 * MiB, EPS, "amdgpu: two clients' VRAM add up");
	is_dbl(mem_system(p), 20 * MiB, EPS, "amdgpu: GTT + cpu; gds and doorbell not counted");
	ok(p && p->nr_engine == 2 && isnan(engine(p, "gfx")) && isnan(engine(p, "compute")),
	   "amdgpu: engines listed, NaN on the first sample");

	p = find(s, 200);
	is_dbl(mem_local(p), 8 * MiB, EPS, "one client behind two fds counts once");
	is_int(p ? p->minor : -2, 128, "dup: minor");

	p = find(s, 300);
	ok(p && !strcmp(p->driver, "i915") && p->nr_engine == 4 && !p->has_local && !p->has_system,
	   "inherited client: given to the lowest pid; i915 without memory keys");

	p = find(s, 400);
	is_dbl(mem_system(p), 6044 * KiB, EPS, "i915: system0");
	is_dbl(mem_local(p), 0, EPS, "i915: stolen-system0 is device memory (0 here)");

	p = find(s, 500);
	is_dbl(mem_local(p), 23992 * KiB, EPS, "xe: vram0 + stolen");
	is_dbl(mem_system(p), 192 * KiB, EPS, "xe: gtt + system");
	ok(p && p->nr_engine == 5, "xe: five engine classes");

	p = find(s, 600);
	ok(p && !p->pdev[0] && !strcmp(p->driver, "msm"), "msm: no pdev");
	is_int(p ? p->minor : -2, 2, "msm: minor from the fd link (card2, the lowest)");
	is_dbl(mem_system(p), 5 * MiB, EPS,
	       "msm: its render-node and card-node clients are one entry (sysfs device)");

	p = find(s, 700);
	is_dbl(mem_system(p), 36496 * KiB, EPS, "panfrost: resident memory; '0 MiB' parsed");
	is_int(p ? p->minor : -2, 132, "panfrost: minor 132 without sysfs");

	p = find(s, 800);
	is_dbl(mem_system(p), 15168 * KiB, EPS, "v3d: drm-total-memory when nothing else");
	ok(p && p->nr_engine == 6 && engine(p, "cache_clean") != -1, "v3d: six engines");

	p = find(s, 900);
	is_dbl(engine(p, "gfx"), 15.5, EPS, "amdgpu 5.14: percents at once");

	p = find(s, 1200);
	ok(p && !strcmp(p->driver, "nouveau") && p->nr_engine == 0 && !p->has_local && !p->denied &&
	           p->minor == 3,
	   "a DRM file without stats: listed, driver from sysfs, no figures");

	p = find(s, 1300);
	is_dbl(mem_system(p), 16480 * KiB, EPS, "panthor: panthor-resident-memory not counted");
}

static void
test_fixture(void)
{
	char root[4096], proc[4200], sys[4200];
	struct gs_config cfg;
	struct fdinfo_scan *s;
	const struct fdinfo_proc *p;
	size_t nr;

	copy_fixture("fdinfo-basic", root, sizeof(root));
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(sys, sizeof(sys), "%s/sys", root);
	cfg_for(&cfg, proc, sys, 5);
	s = fdinfo_new(&cfg);
	is_int(sample(s, 100), 0, "fixture: first sample");
	check_first(s);

	rewrite(proc, "100/fdinfo/4", "19291217545 ns", "19541217545 ns"); /* +250 ms */
	rewrite(proc, "100/fdinfo/5", "gfx:\t1000000000", "gfx:\t1500000000");
	rewrite(proc, "100/fdinfo/5", "compute:\t2000000000", "compute:\t2100000000");
	rewrite(proc, "200/fdinfo/6", "5000000000", "5100000000");
	rewrite(proc, "200/fdinfo/7", "5000000000", "5100000000");
	rewrite(proc, "300/fdinfo/3", "196329331", "696329331");
	rewrite(proc, "300/fdinfo/3", "video:\t0 ns", "video:\t600000000 ns");
	rewrite(proc, "301/fdinfo/3", "196329331", "696329331");
	rewrite(proc, "301/fdinfo/3", "video:\t0 ns", "video:\t600000000 ns");
	rewrite(proc, "400/fdinfo/3", "346249 ns", "10346249 ns");
	rewrite(proc, "500/fdinfo/3", "drm-cycles-rcs: 28257900", "drm-cycles-rcs: 278257900");
	rewrite(proc, "500/fdinfo/3", "drm-cycles-vcs: 0", "drm-cycles-vcs: 500000000");
	rewrite(proc, "500/fdinfo/3", "drm-cycles-ccs: 0", "drm-cycles-ccs: 200000000");
	for (int i = 0; i < 5; i++)
		rewrite(proc, "500/fdinfo/3", "7655183225", "8655183225");
	rewrite(proc, "600/fdinfo/3", "1734371319", "2134371319");
	rewrite(proc, "600/fdinfo/4", "100000000 ns", "200000000 ns");
	rewrite(proc, "700/fdinfo/5", "1846584880", "2146584880");
	rewrite(proc, "800/fdinfo/19", "154563573", "354563573");
	rewrite(proc, "900/fdinfo/4", "gfx0:\t12.5%", "gfx0:\t40%");
	rewrite(proc, "1300/fdinfo/3", "111110952750", "112310952750");
	is_int(sample(s, 101), 0, "fixture: second sample, 1 s later");

	p = find(s, 100);
	is_dbl(engine(p, "gfx"), 75, EPS, "amdgpu: 25 %% + 50 %% from its two clients");
	is_dbl(engine(p, "compute"), 10, EPS, "amdgpu: compute 10 %%");
	is_dbl(engine(find(s, 200), "gfx"), 10, EPS, "dup: one client's 10 %%, not twice");
	p = find(s, 300);
	is_dbl(engine(p, "render"), 50, EPS, "inherited: 50 %% once");
	is_dbl(engine(p, "video"), 30, EPS, "i915: 600 ms over 1 s on 2 video engines: 30 %%");
	is_dbl(engine(p, "copy"), 0, EPS, "i915: idle copy engine");
	is_dbl(engine(find(s, 400), "render"), 1, EPS, "i915: 1 %%");
	p = find(s, 500);
	is_dbl(engine(p, "rcs"), 25, EPS, "xe: rcs 25 %%");
	is_dbl(engine(p, "vcs"), 25, EPS, "xe: vcs over capacity 2");
	is_dbl(engine(p, "ccs"), 5, EPS, "xe: ccs over capacity 4");
	is_dbl(engine(find(s, 600), "gpu"), 50, EPS, "msm: 40 %% + 10 %% (ns, not cycles)");
	is_dbl(engine(find(s, 700), "fragment"), 30, EPS, "panfrost: fragment 30 %%");
	is_dbl(engine(find(s, 700), "vertex-tiler"), 0, EPS, "panfrost: vertex-tiler idle");
	is_dbl(engine(find(s, 800), "render"), 20, EPS, "v3d: render 20 %%");
	is_dbl(engine(find(s, 900), "gfx"), 43, EPS, "amdgpu 5.14: 40 %% + 3 %%");
	ok(isnan(engine(find(s, 1300), "panthor")), "panthor: 1.2 s busy in 1 s discarded");
	p = fdinfo_procs(s, &nr);
	is_int(nr, 12, "fixture: the same entries");
	fdinfo_free(s);
	rm_tree(root);
}

/* The index is kept for cfg->reindex seconds; a vanished file goes at once. */
static void
test_index(void)
{
	char root[4096], proc[4200], sys[4200], dir[4300], *text;
	struct gs_config cfg;
	struct fdinfo_scan *s;

	copy_fixture("fdinfo-basic", root, sizeof(root));
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(sys, sizeof(sys), "%s/sys", root);
	cfg_for(&cfg, proc, sys, 5);
	s = fdinfo_new(&cfg);
	sample(s, 0);
	ok(find(s, 700) && !find(s, 1400), "index: built at the first sample");

	snprintf(dir, sizeof(dir), "%s/400/fdinfo/3", proc);
	text = slurp(dir, NULL);
	add_proc(proc, 1400, 20000, 3, "/dev/dri/renderD129", text);
	free(text);
	rewrite(proc, "1400/fdinfo/3", "drm-client-id:  39", "drm-client-id:  77");
	snprintf(dir, sizeof(dir), "%s/700", proc);
	rm_tree(dir);
	snprintf(dir, sizeof(dir), "%s/800/fdinfo/19", proc);
	unlink(dir);
	sample(s, 1);
	ok(!find(s, 1400), "index: a new DRM process is not seen before the rebuild");
	ok(!find(s, 700), "index: a process gone is dropped at once");
	ok(!find(s, 800), "index: a closed fd is dropped at once");
	ok(find(s, 100) && find(s, 600), "index: the others stay");
	sample(s, 4.9);
	ok(!find(s, 1400), "index: not yet at 4.9 s");
	sample(s, 5);
	ok(find(s, 1400) != NULL, "index: rebuilt after cfg->reindex (5 s)");
	ok(!find(s, 700) && !find(s, 800), "index: the gone stay gone");
	fdinfo_free(s);
	rm_tree(root);
}

/* --- permissions ------------------------------------------------------------ */

struct perm_res {
	int rc;
	size_t nr, denied_count;
	bool some_denied;
	struct fdinfo_proc p[16];
};

/* Sample the tree root (its proc and sys) into the struct perm_res res; for as_nobody(). */
static void
perm_sample(const void *root, void *res)
{
	char proc[4200], sys[4200];
	struct perm_res *r = res;
	struct gs_config cfg;
	struct fdinfo_scan *s;
	const struct fdinfo_proc *p;

	memset(r, 0, sizeof(*r));
	join(proc, sizeof(proc), root, "proc");
	join(sys, sizeof(sys), root, "sys");
	cfg_for(&cfg, proc, sys, 5);
	s = fdinfo_new(&cfg);
	r->rc = fdinfo_sample(s, 1, NULL);
	p = fdinfo_procs(s, &r->nr);
	memcpy(r->p, p, sizeof(*p) * (r->nr < 16 ? r->nr : 16));
	r->some_denied = fdinfo_some_denied(s);
	r->denied_count = fdinfo_nr_denied(s);
	fdinfo_free(s);
}

static void
test_permissions(void)
{
	char root[4096], proc[4200], path[4300];
	const struct fdinfo_proc *p = NULL;
	struct perm_res r;

	copy_fixture("fdinfo-basic", root, sizeof(root));
	chmod(tmp_dir, 0755); /* mkdtemp made it 0700: the unprivileged child must get in */
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(path, sizeof(path), "%s/1100/fdinfo/3", proc);
	chmod(path, 0);
	snprintf(path, sizeof(path), "%s/1000/fd", proc);
	chmod(path, 0);
	/* a second unreadable DRM file of the same process: still one process denied */
	snprintf(path, sizeof(path), "%s/1100/fd", proc);
	link_at(path, "4", "/dev/dri/card0");
	snprintf(path, sizeof(path), "%s/1100/fdinfo", proc);
	write_at(path, "4", "drm-driver:\tamdgpu\n");
	snprintf(path, sizeof(path), "%s/1100/fdinfo/4", proc);
	chmod(path, 0);
	/* a kernel thread and a zombie whose fd directories are closed to us: not counted */
	add_proc(proc, 3, 3, 0, "/dev/null", NULL);
	snprintf(path, sizeof(path), "%s/3", proc);
	write_stat(path, 3, 3, 0x208040, 'I');
	snprintf(path, sizeof(path), "%s/3/fd", proc);
	chmod(path, 0);
	add_proc(proc, 4, 4, 0, "/dev/null", NULL);
	snprintf(path, sizeof(path), "%s/4", proc);
	write_stat(path, 4, 4, 0x400000, 'Z');
	snprintf(path, sizeof(path), "%s/4/fd", proc);
	chmod(path, 0);

	if (as_nobody(perm_sample, root, &r, sizeof(r))) {
		skip("cannot drop root to test unreadable files");
		goto out;
	}
	for (size_t i = 0; i < r.nr && i < 16; i++)
		if (r.p[i].pid == 1100)
			p = &r.p[i];
	ok(r.rc == 0 && r.nr == 12, "unreadable: the others are read");
	ok(p && p->denied, "unreadable fdinfo: listed as a GPU user, denied");
	ok(p && p->nr_engine == 0 && !p->has_local && !p->has_system,
	   "unreadable fdinfo: no figures");
	ok(p && p->minor == 0 && !strcmp(p->driver, "amdgpu"),
	   "unreadable fdinfo: card0 and renderD128 of one GPU (sysfs) are one entry, minor 0; "
	   "driver from sysfs");
	ok(r.some_denied, "fdinfo_some_denied");
	is_int(r.denied_count, 2,
	       "denied: the fd directory closed to us and the fdinfo, not the kernel thread or zombie");
out:
	rm_tree(root);
}

/*
 * The index from debugfs dri/<minor>/clients: only the listed processes
 * are walked. Pid 400 holds a DRM fd but is not listed (which a real kernel
 * would not do), so finding it proves a walk of the whole /proc.
 */
static const char clients_head[] =
        "             command  tgid dev master a   uid      magic                     name    id\n";

static void
clients_root(char *root, size_t size, const char *name)
{
	char proc[4300], sys[4300], path[8192];
	char text[256];
	const uint32_t pids[] = { 100, 200, 400 };

	tmp_path(root, size, name);
	make_dir(root);
	join(proc, sizeof(proc), root, "proc");
	join(sys, sizeof(sys), root, "sys");
	make_dir(proc);
	make_dir(sys);
	for (size_t i = 0; i < 3; i++) {
		snprintf(text, sizeof(text),
		         "drm-driver:\tamdgpu\ndrm-client-id:\t%d\ndrm-pdev:\t0000:03:00.0\n"
		         "drm-resident-vram:\t4 MiB\n",
		         (int)(10 + i));
		add_proc(proc, pids[i], 1000 + i, 5, "/dev/dri/renderD128", text);
	}
	add_proc(proc, 300, 1300, 3, "pipe:[77]", NULL);
	/* sysfs: card0 and renderD128 of one device, a connector */
	join(path, sizeof(path), sys, "devices/0000:03:00.0/drm");
	make_dirs(path);
	for (int i = 0; i < 2; i++) {
		const char *node = i ? "renderD128" : "card0";
		char dir[8300];

		snprintf(dir, sizeof(dir), "%s/%s", path, node);
		make_dir(dir);
		link_at(dir, "device", "../../../0000:03:00.0");
	}
	join(path, sizeof(path), sys, "class/drm");
	make_dirs(path);
	link_at(path, "card0", "../../devices/0000:03:00.0/drm/card0");
	link_at(path, "renderD128", "../../devices/0000:03:00.0/drm/renderD128");
	link_at(path, "card0-DP-1", "../../devices/0000:03:00.0/drm/card0/card0-DP-1");
	write_at(path, "version", "drm 1.1.0 20060810\n");
	join(path, sizeof(path), sys, "kernel/debug/dri/0");
	make_dirs(path);
}

static void
write_clients(const char *root, const char *minor, const char *text)
{
	char path[8192], rel[64];

	snprintf(rel, sizeof(rel), "sys/kernel/debug/dri/%s/clients", minor);
	join(path, sizeof(path), root, rel);
	write_str(path, text);
}

/* Sample a fresh scanner of root: whether pids 100, 200 and 400 were found, as "yyn". */
static void
clients_run(const char *root, bool *listed, char found[4])
{
	char proc[4300], sys[4300];
	struct gs_config cfg;
	struct fdinfo_scan *s;
	const uint32_t pids[] = { 100, 200, 400 };

	join(proc, sizeof(proc), root, "proc");
	join(sys, sizeof(sys), root, "sys");
	cfg_for(&cfg, proc, sys, 5);
	s = fdinfo_new(&cfg);
	sample(s, 1);
	*listed = fdinfo_listed(s);
	for (int i = 0; i < 3; i++)
		found[i] = find(s, pids[i]) ? 'y' : 'n';
	found[3] = '\0';
	fdinfo_free(s);
}

static void
test_clients_list(void)
{
	char root[4096], found[4], path[8192], extra[8192];
	bool listed;

	clients_root(root, sizeof(root), "clients");
	/* no clients file: the whole of /proc */
	clients_run(root, &listed, found);
	ok(!listed, "no debugfs clients list: /proc walked whole");
	is_str(found, "yyy", "... finding every DRM process");

	/* 6.13 format with name and id; comm with blanks; a client whose pid is not ours */
	snprintf(extra, sizeof(extra),
	         "%s"
	         "                Xorg   100   0   y    y     0          0                  <unset>"
	         "                  10\n"
	         "         Web Content   200 128   n    n  1000          0                  <unset>"
	         "                  11\n"
	         "           <unknown>     0 128   n    n     0          0                  <unset>"
	         "                  12\n",
	         clients_head);
	write_clients(root, "0", extra);
	clients_run(root, &listed, found);
	ok(listed, "every device listed: the index comes from debugfs clients");
	is_str(found, "yyn", "... walking only the listed processes (pid 0 skipped)");

	/* Linux 6.1: no name or id columns */
	write_clients(root, "0",
	              "             command  tgid dev master a   uid      magic\n"
	              "                Xorg   400   0   y    y     0          0\n");
	clients_run(root, &listed, found);
	ok(listed && !strcmp(found, "nny"), "6.1 format: %s", found);

	/* before 6.4 the column is "pid": a thread's id, mapped to its process */
	join(path, sizeof(path), root, "proc/401");
	make_dir(path);
	write_at(path, "status", "Name:\tworker\nUmask:\t0022\nState:\tS\nTgid:\t400\nNgid:\t0\n");
	write_clients(root, "0",
	              "             command   pid dev master a   uid      magic\n"
	              "              worker   401 128   n    y     0          0\n"
	              "              gone     999 128   n    y     0          0\n");
	clients_run(root, &listed, found);
	ok(listed && !strcmp(found, "nny"), "pid column: thread 401 counts as its process 400: %s",
	   found);

	/* a line not in the kernel's format: walk */
	write_clients(root, "0",
	              "             command  tgid dev master a   uid      magic\n"
	              "garbage\n");
	clients_run(root, &listed, found);
	ok(!listed && !strcmp(found, "yyy"), "a line not in the format: walk (%s)", found);
	write_clients(root, "0", "some other header\n");
	clients_run(root, &listed, found);
	ok(!listed, "another header: walk");
	write_clients(root, "0", "");
	clients_run(root, &listed, found);
	ok(!listed, "empty file: walk");

	/* a second device without a list: walk; with one via its render node: listed */
	write_clients(root, "0",
	              "             command  tgid dev master a   uid      magic\n"
	              "                Xorg   100   0   y    y     0          0\n");
	join(path, sizeof(path), root, "sys/devices/0000:04:00.0/drm/renderD129");
	make_dirs(path);
	link_at(path, "device", "../../../0000:04:00.0");
	join(path, sizeof(path), root, "sys/class/drm");
	link_at(path, "renderD129", "../../devices/0000:04:00.0/drm/renderD129");
	clients_run(root, &listed, found);
	ok(!listed && !strcmp(found, "yyy"), "a device without a list: walk (%s)", found);
	join(path, sizeof(path), root, "sys/kernel/debug/dri/129");
	make_dir(path);
	write_clients(root, "129",
	              "             command  tgid dev master a   uid      magic\n"
	              "                 app   200 129   n    y     0          0\n");
	clients_run(root, &listed, found);
	ok(listed && !strcmp(found, "yyn"), "both devices listed: union of their lists (%s)",
	   found);
	rm_tree(root);
}

static void
test_errors(void)
{
	struct gs_config cfg;
	struct fdinfo_scan *s;
	struct err err = ERR_INIT;
	size_t nr = 99;

	cfg_for(&cfg, "/nonexistent/proc", "/nonexistent", 5);
	s = fdinfo_new(&cfg);
	is_int(fdinfo_sample(s, 1, &err), E_NOTFOUND, "no proc_root: E_NOTFOUND");
	ok(strstr(err.msg, "/nonexistent/proc") != NULL, "... naming it: %s", err.msg);
	fdinfo_procs(s, &nr);
	is_int(nr, 0, "... and no processes");
	fdinfo_free(s);

	/* under --root, a saved tree without /proc just has no processes */
	cfg.root = "/nonexistent";
	s = fdinfo_new(&cfg);
	err = (struct err)ERR_INIT;
	is_int(fdinfo_sample(s, 1, &err), 0, "--root without proc: no error");
	fdinfo_procs(s, &nr);
	is_int(nr, 0, "... and no processes");
	fdinfo_free(s);
	fdinfo_free(NULL);
}

/* The real /proc: it must walk without error; we do not list ourselves. */
static void
test_real(void)
{
	struct gs_config cfg;
	struct fdinfo_scan *s;

	cfg_for(&cfg, "/proc", "/sys", 5);
	s = fdinfo_new(&cfg);
	is_int(sample(s, 1), 0, "real /proc: a walk");
	ok(!find(s, (uint32_t)getpid()), "real /proc: not ourselves");
	diag("real /proc: %zu processes could not be inspected", fdinfo_nr_denied(s));
	fdinfo_free(s);
}

int
main(void)
{
	find_fixtures();
	make_tmp_dir("t_fdinfo");
	test_engines();
	test_deltas();
	test_memory();
	test_traps();
	test_pid_reuse();
	test_fd_reuse();
	test_fixture();
	test_index();
	test_permissions();
	test_clients_list();
	test_errors();
	test_real();
	rm_tree(tmp_dir);
	return done_testing();
}
