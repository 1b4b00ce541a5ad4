/*
 * Tests of doctor's health.bench.* findings: an H100 whose stored bench
 * figures (core/benchstore.h, in a temporary GPUSCOPE_BENCH_DIR) are far below
 * its spec row fires each finding, one at its model's figures does not, a
 * stale figure (40 days old, another driver) is a note; the likely reasons
 * doctor can see (a lowered power limit, throttling recorded with the
 * figure, held clocks, a down-trained link, memory errors) are named,
 * software first; a malformed record is told, never a crash.
 */
#include "doctor/doctor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/benchstore.h"
#include "core/err.h"
#include "core/fields.h"
#include "core/gpu.h"
#include "doctor_test.h"
#include "harness.h"

#define H100 "NVIDIA H100 80GB HBM3"
#define UUID "GPU-11111111-2222-3333-4444-555555555555"
#define NOW  1796169600.0 /* 2026-12-02 */
#define DRV  "550.54.15"

static char dir[256];
static struct dr_report rep = DR_REPORT_INIT;

static const char *
env_of(const char *name)
{
	return !strcmp(name, BENCH_STORE_ENV) ? dir : NULL;
}

/* A healthy H100 at full clocks and link, default power limit, no memory errors. */
static struct gpu_device *
h100(struct gpu_snapshot *s)
{
	struct gpu_device *d;

	gpu_snapshot_init(s);
	s->time = NOW;
	snprintf(s->nvidia.driver_version, sizeof(s->nvidia.driver_version), "%s", DRV);
	d = gpu_snapshot_add_dev(s);
	d->vendor = VENDOR_NVIDIA;
	snprintf(d->name, sizeof(d->name), "%s", H100);
	snprintf(d->uuid, sizeof(d->uuid), "%s", UUID);
	snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "00000000:18:00.0");
	dev_set(d, GF_POWER_LIMIT, 700);
	dev_set(d, GF_POWER_LIMIT_DEFAULT, 700);
	dev_set(d, GF_PCIE_GEN, 5);
	dev_set(d, GF_PCIE_GEN_MAX, 5);
	dev_set(d, GF_PCIE_WIDTH, 16);
	dev_set(d, GF_PCIE_WIDTH_MAX, 16);
	dev_set(d, GF_CLOCK_MAX_SM, 1980);
	dev_set(d, GF_CLOCK_REASONS, CR_GPU_IDLE);
	dev_set(d, GF_RETIRED_SBE, 0);
	dev_set(d, GF_RETIRED_DBE, 0);
	dev_set(d, GF_ECC_UNCORR_VOLATILE, 0);
	return d;
}

/* A figure measured at NOW under DRV. */
static struct bench_figure
figure(const char *test, const char *unit, double best)
{
	struct bench_figure f;

	bench_figure_init(&f, test);
	snprintf(f.unit, sizeof(f.unit), "%s", unit);
	f.best = best;
	f.median = best * 0.99;
	f.time = NOW - 3600;
	snprintf(f.driver, sizeof(f.driver), "%s", DRV);
	return f;
}

/* Replace the store's record with figs[0..n). */
static void
store(const struct bench_figure *figs, size_t n)
{
	struct bench_store_dirs d;
	struct bench_record r = { 0 };
	struct err err = ERR_INIT;
	char path[400];

	snprintf(path, sizeof(path), "%s/%s.json", dir, UUID);
	unlink(path);
	memset(&d, 0, sizeof(d));
	snprintf(d.env, sizeof(d.env), "%s", dir);
	snprintf(r.uuid, sizeof(r.uuid), "%s", UUID);
	snprintf(r.name, sizeof(r.name), "%s", H100);
	snprintf(r.driver, sizeof(r.driver), "%s", DRV);
	r.time = NOW - 3600;
	for (size_t i = 0; i < n; i++)
		bench_record_set(&r, &figs[i]);
	if (bench_store_put(&d, &r, NULL, 0, &err) < 0)
		ok(0, "store the fixture record: %s", err.msg);
	bench_record_release(&r);
}

static const struct dr_report *
check(const struct gpu_snapshot *s)
{
	struct dr_ctx ctx;

	dr_report_release(&rep);
	memset(&ctx, 0, sizeof(ctx));
	ctx.snap = s;
	ctx.getenv = env_of;
	dr_check_bench(&ctx, &rep);
	for (size_t i = 0; i < rep.nr; i++)
		if (!dr_explain_find(rep.f[i].id))
			ok(0, "'%s' is in the catalog", rep.f[i].id);
	return &rep;
}

/* The finding's text, for a failed case. */
static void
show(const struct dr_finding *f)
{
	if (!f) {
		diag("no such finding");
		return;
	}
	diag("%s: %s", f->id, f->title);
	for (size_t i = 0; i < f->nr_evidence; i++)
		diag("  %s", f->evidence[i]);
	diag("  meaning: %s", f->meaning ? f->meaning : "");
}

/* Does f's meaning name a before b (both there)? */
static bool
before(const struct dr_finding *f, const char *a, const char *b)
{
	const char *pa = f && f->meaning ? strstr(f->meaning, a) : NULL;
	const char *pb = f && f->meaning ? strstr(f->meaning, b) : NULL;

	return pa && pb && pa < pb;
}

static void
memory(void)
{
	struct gpu_snapshot s;
	struct gpu_device *d = h100(&s);
	struct bench_figure f = figure("stream.triad", "GB/s", 2000); /* 60 % of 3350 */
	const struct dr_finding *x;

	store(&f, 1);
	x = find_id(check(&s), "health.bench.memory");
	ok(x && x->severity == DR_WARNING,
	   "triad at 60 %% of the sheet: health.bench.memory warns");
	if (!ok(says(x, "60 %") && evidence_has(x, "stream.triad") && evidence_has(x, "2026-12-01"),
	        "with the figure, the share and the day"))
		show(x);
	ok(evidence_has(x, UUID ".json"), "and the record it comes from");
	ok(says(x, "no cause"), "no cause seen on a healthy GPU: said so");
	is_int(count_id(&rep, "health.bench.compute") + count_id(&rep, "health.bench.pcie"), 0,
	       "nothing else fires");

	/* the reasons doctor sees, software first */
	dev_set(d, GF_POWER_LIMIT, 450);
	dev_set(d, GF_RETIRED_DBE, 3);
	f.throttle = CR_SW_POWER_CAP;
	store(&f, 1);
	x = find_id(check(&s), "health.bench.memory");
	ok(says(x, "power limit is lowered to 450 of 700 W"), "a lowered power limit is named");
	ok(says(x, "throttled during the test (SW power cap)"), "the recorded throttle reason");
	ok(says(x, "memory has errors"), "the retired pages");
	ok(before(x, "power limit", "memory has errors"), "software causes before hardware ones");
	if (getenv("SHOW"))
		show(x);
	dev_set(d, GF_POWER_LIMIT, 700);
	dev_set(d, GF_RETIRED_DBE, 0);

	f = figure("stream.triad", "GB/s", 3000); /* 90 % */
	store(&f, 1);
	ok(!find_id(check(&s), "health.bench.memory"), "triad at 90 %%: nothing");
	f = figure("stream.triad", "TB/s", 2.0); /* the unit is read: 60 % */
	store(&f, 1);
	ok(find_id(check(&s), "health.bench.memory") != NULL, "2.0 TB/s is 60 %% too");

	/* stale: a note, not a warning */
	f = figure("stream.triad", "GB/s", 2000);
	f.time = NOW - 40 * 86400.0;
	store(&f, 1);
	x = find_id(check(&s), "health.bench.memory");
	ok(x && x->severity == DR_INFO && says(x, "stale") && says(x, "40 days ago"),
	   "a figure 40 days old is a stale note");
	f = figure("stream.triad", "GB/s", 2000);
	snprintf(f.driver, sizeof(f.driver), "535.104.05");
	store(&f, 1);
	x = find_id(check(&s), "health.bench.memory");
	ok(x && x->severity == DR_INFO && says(x, "driver 535.104.05, now " DRV),
	   "a figure of another driver is a stale note");
	/* bench's CUDA path records the driver API's version: held against the snapshot's CUDA */
	s.nvidia.cuda_version = 12040;
	snprintf(f.driver, sizeof(f.driver), "12.4");
	store(&f, 1);
	x = find_id(check(&s), "health.bench.memory");
	ok(x && x->severity == DR_WARNING, "a figure under CUDA 12.4, now 12.4: current");
	snprintf(f.driver, sizeof(f.driver), "12.2");
	store(&f, 1);
	x = find_id(check(&s), "health.bench.memory");
	ok(x && x->severity == DR_INFO && says(x, "driver 12.2, now " DRV " (CUDA 12.4)"),
	   "under CUDA 12.2, now 12.4: stale");
	s.nvidia.cuda_version = 0;
	store(&f, 1);
	x = find_id(check(&s), "health.bench.memory");
	ok(x && x->severity == DR_WARNING, "the CUDA version unknown: cannot be told stale");
	gpu_snapshot_release(&s);
}

static void
compute(void)
{
	struct gpu_snapshot s;
	struct gpu_device *d = h100(&s);
	struct bench_figure f[2];
	const struct dr_finding *x;

	f[0] = figure("fma.fp32", "GFLOP/s", 64000);  /* 96 % of 67 TFLOPS */
	f[1] = figure("mma.bf16", "GFLOP/s", 900000); /* 91 % of 989 */
	store(f, 2);
	ok(!find_id(check(&s), "health.bench.compute"), "FMA and mma near the sheet: nothing");

	f[1].best = 500000; /* 51 % */
	store(f, 2);
	x = find_id(check(&s), "health.bench.compute");
	ok(x && x->severity == DR_WARNING && says(x, "tensor throughput") && says(x, "51 %") &&
	           evidence_has(x, "mma.bf16"),
	   "mma.bf16 at 51 %% of the sheet: health.bench.compute, the worst figure named");

	/* at the sheet's rate, but under the peak of the clocks seen */
	f[1].best = 900000;
	f[0].clock_peak = 100000; /* 64 % */
	f[0].sm_mhz = 1200;
	store(f, 2);
	x = find_id(check(&s), "health.bench.compute");
	ok(x && says(x, "the peak of the clocks seen") && says(x, "vector FMA"),
	   "fma.fp32 under its clock peak fires against it");
	ok(says(x, "1200 of 1980 MHz"), "held clocks during the test are named");
	dev_set(d, GF_CLOCK_REASONS, CR_APP_CLOCKS);
	check(&s);
	x = find_id(&rep, "health.bench.compute");
	ok(says(x, "health.throttle.app_clocks"), "application clocks in this snapshot are named");
	gpu_snapshot_release(&s);
}

static void
pcie(void)
{
	struct gpu_snapshot s;
	struct gpu_device *d = h100(&s);
	struct bench_figure f = figure("h2d.pinned", "GB/s", 55); /* 87 % of 63 */
	const struct dr_finding *x;

	f.link_gbs = 63.0;
	f.pcie_gen = 5;
	f.pcie_width = 16;
	store(&f, 1);
	ok(!find_id(check(&s), "health.bench.pcie"), "H2D at 87 %% of the link: nothing");
	f.best = 20; /* 32 % */
	store(&f, 1);
	x = find_id(check(&s), "health.bench.pcie");
	ok(x && x->severity == DR_WARNING && says(x, "32 %"),
	   "H2D at 32 %% of the link: health.bench.pcie");
	/* no rate stored: worked out from gen 5 x16 */
	f.link_gbs = NAN;
	store(&f, 1);
	x = find_id(check(&s), "health.bench.pcie");
	ok(x && says(x, "32 %"), "the link's rate from its generation and width");
	/* the link trained down during the test */
	f.pcie_gen = 4;
	f.pcie_width = 8;
	f.best = 5;
	store(&f, 1);
	x = find_id(check(&s), "health.bench.pcie");
	ok(says(x, "gen 4 x8 of gen 5 x16") && says(x, "health.pcie.downtrained"),
	   "a down-trained link is named");
	(void)d;
	gpu_snapshot_release(&s);
}

static void
unreadable(void)
{
	struct gpu_snapshot s;
	char path[400];
	FILE *fp;
	const struct dr_finding *x;

	h100(&s);
	snprintf(path, sizeof(path), "%s/%s.json", dir, UUID);
	unlink(path);
	check(&s);
	is_int(rep.nr, 0, "no record: no finding");
	fp = fopen(path, "w");
	if (fp) {
		fputs("{\"schema\": \"gpuscope.bench.store/1\", \"uuid\": \"" UUID "\", \"figu",
		      fp);
		fclose(fp);
	}
	x = find_id(check(&s), "health.bench.unreadable");
	ok(x && x->severity == DR_INFO && evidence_has(x, "malformed"),
	   "a truncated record is told as a note");
	unlink(path);
	ok(symlink("/etc/passwd", path) == 0, "a symlink as the record");
	x = find_id(check(&s), "health.bench.unreadable");
	ok(x && evidence_has(x, "symbolic link"), "is refused, not followed");
	unlink(path);
	gpu_snapshot_release(&s);
}

int
main(void)
{
	const char *tmp = getenv("TMPDIR");
	char cmd[400];

	snprintf(dir, sizeof(dir), "%s/t_doctor_bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return done_testing();
	}
	setenv("TZ", "UTC", 1);
	memory();
	compute();
	pcie();
	unreadable();
	ok(dr_explain_find("health.bench.memory") && dr_explain_find("health.bench.compute") &&
	           dr_explain_find("health.bench.pcie"),
	   "the three ids have an explanation");
	dr_report_release(&rep);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
	return done_testing();
}
