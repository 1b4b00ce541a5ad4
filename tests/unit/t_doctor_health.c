/*
 * Tests of doctor's hardware health check (health.*) on made-up samples:
 * each finding triggered by one snapshot or window and absent from another,
 * with the negative controls (an idle down-trained link, the idle clock
 * event reason, a power cap at full load reported as info only, a counter
 * in a single sample never read as a trend). Every id emitted must be in
 * the catalog, and every catalog entry must be emitted by some test.
 */
#include "doctor/doctor.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/gpu.h"
#include "doctor_test.h"
#include "harness.h"

/* ids emitted by any test, to check that the catalog has no dead entry */
static const char *seen[64];
static size_t nr_seen;

static struct dr_report rep = DR_REPORT_INIT;

/* A field to set (NAN: unset it); ended by KV_END. */
struct kv {
	int f;
	double v;
};
#define KV_END        \
	{             \
		-1, 0 \
	}
#define H100 "NVIDIA H100 80GB HBM3"

/* A healthy H100: 5.0 x16 link, 60 °C, P0 at full clocks, no errors. */
static struct gpu_device *
add_gpu(struct gpu_snapshot *s, unsigned idx, double util)
{
	struct gpu_device *d = gpu_snapshot_add_dev(s);

	d->index = idx;
	d->vendor = VENDOR_NVIDIA;
	snprintf(d->name, sizeof(d->name), "%s", H100);
	snprintf(d->uuid, sizeof(d->uuid), "GPU-0000000%u", idx);
	snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "00000000:%02X:00.0", 0x10 + idx);
	dev_set(d, GF_UTIL_GPU, util);
	dev_set(d, GF_TEMP_GPU, 60);
	dev_set(d, GF_TEMP_SLOWDOWN, 87);
	dev_set(d, GF_TEMP_SHUTDOWN, 92);
	dev_set(d, GF_TEMP_MEM, 60);
	dev_set(d, GF_TEMP_MEM_MAX, 95);
	dev_set(d, GF_POWER_LIMIT, 700);
	dev_set(d, GF_POWER_LIMIT_DEFAULT, 700);
	dev_set(d, GF_PCIE_GEN, 5);
	dev_set(d, GF_PCIE_GEN_MAX, 5);
	dev_set(d, GF_PCIE_WIDTH, 16);
	dev_set(d, GF_PCIE_WIDTH_MAX, 16);
	dev_set(d, GF_PCIE_REPLAY, 0);
	dev_set(d, GF_ECC_UNCORR_VOLATILE, 0);
	dev_set(d, GF_RETIRED_SBE, 0);
	dev_set(d, GF_RETIRED_DBE, 0);
	dev_set(d, GF_RETIRED_PENDING, 0);
	dev_set(d, GF_REMAP_CORR, 0);
	dev_set(d, GF_REMAP_UNCORR, 0);
	dev_set(d, GF_REMAP_PENDING, 0);
	dev_set(d, GF_REMAP_FAILURE, 0);
	dev_set(d, GF_PSTATE, 0);
	dev_set(d, GF_CLOCK_GRAPHICS, 1980);
	dev_set(d, GF_CLOCK_MAX_GRAPHICS, 1980);
	dev_set(d, GF_CLOCK_REASONS, util > 0 ? 0 : CR_GPU_IDLE);
	return d;
}

static void
apply(struct gpu_device *d, const struct kv *kv)
{
	for (; kv && kv->f >= 0; kv++)
		if (isnan(kv->v))
			dev_unset(d, (enum gpu_field)kv->f);
		else
			dev_set(d, (enum gpu_field)kv->f, kv->v);
}

static void
remember(const struct dr_report *r)
{
	for (size_t i = 0; i < r->nr; i++) {
		size_t j;

		if (!dr_explain_find(r->f[i].id))
			ok(0, "'%s' is in the catalog", r->f[i].id);
		for (j = 0; j < nr_seen; j++)
			if (!strcmp(seen[j], r->f[i].id))
				break;
		if (j == nr_seen && nr_seen < sizeof(seen) / sizeof(seen[0]))
			seen[nr_seen++] = r->f[i].id;
	}
}

/* Run the check on samples s[0..n) (n == 1: a single snapshot); the report is rep. */
static const struct dr_report *
check(const struct gpu_snapshot *s, size_t n)
{
	struct dr_window w = { s, n, 10, "live" };
	struct dr_ctx ctx;

	dr_report_release(&rep);
	memset(&ctx, 0, sizeof(ctx));
	ctx.snap = &s[n - 1];
	ctx.window = n > 1 ? &w : NULL;
	dr_check_health(&ctx, &rep);
	remember(&rep);
	return &rep;
}

/* One sample, one GPU at util with kv applied. */
static const struct dr_report *
one(double util, const struct kv *kv)
{
	struct gpu_snapshot s;

	gpu_snapshot_init(&s);
	s.time = 1000;
	apply(add_gpu(&s, 0, util), kv);
	check(&s, 1);
	gpu_snapshot_release(&s);
	return &rep;
}

/* n samples dt s apart of one GPU: util[i], and f = val[i] (f < 0: nothing). */
static const struct dr_report *
series(size_t n, double dt, const double *util, int f, const double *val)
{
	struct gpu_snapshot s[16];

	for (size_t i = 0; i < n; i++) {
		struct gpu_device *d;

		gpu_snapshot_init(&s[i]);
		s[i].time = 1000 + dt * (double)i;
		d = add_gpu(&s[i], 0, util[i]);
		if (f >= 0)
			dev_set(d, (enum gpu_field)f, val[i]);
	}
	check(s, n);
	for (size_t i = 0; i < n; i++)
		gpu_snapshot_release(&s[i]);
	return &rep;
}

static enum dr_severity
sev_of(const char *id)
{
	const struct dr_finding *f = find_id(&rep, id);

	return f ? f->severity : (enum dr_severity) - 1;
}

/* Only health.ok findings in rep. */
static bool
only_ok(void)
{
	for (size_t i = 0; i < rep.nr; i++)
		if (strcmp(rep.f[i].id, "health.ok")) {
			diag("unexpected %s: %s", rep.f[i].id, rep.f[i].title);
			return false;
		}
	return rep.nr > 0;
}

/* --- tests ---------------------------------------------------------------------- */

static void
test_ok(void)
{
	struct gpu_snapshot s;

	gpu_snapshot_init(&s);
	for (unsigned i = 0; i < 8; i++)
		add_gpu(&s, i, 100);
	check(&s, 1);
	ok(rep.nr == 1 && count_id(&rep, "health.ok") == 1 && sev_of("health.ok") == DR_OK,
	   "ok: 8 healthy GPUs at full load give one ok line");
	ok(says(find_id(&rep, "health.ok"), "8 GPUs") && says(find_id(&rep, "health.ok"), H100),
	   "ok: it counts them: %s", rep.nr ? rep.f[0].title : "(none)");

	/* one of them bad: the other 7 still get their line, the bad one none */
	dev_set(&s.dev[3], GF_ECC_UNCORR_VOLATILE, 2);
	check(&s, 1);
	ok(says(find_id(&rep, "health.ok"), "7 GPUs") &&
	           count_id(&rep, "health.ecc.uncorrectable") == 1,
	   "ok: one GPU with errors leaves 7 in the ok line");
	gpu_snapshot_release(&s);

	/* no snapshot, no GPUs: nothing */
	gpu_snapshot_init(&s);
	check(&s, 1);
	is_int(rep.nr, 0, "ok: no GPUs, no finding");
	gpu_snapshot_release(&s);
}

static void
test_negative_controls(void)
{
	/* idle: the idle reason, a link trained down to 1.0 x4 */
	one(0, (const struct kv[]){ { GF_CLOCK_REASONS, CR_GPU_IDLE },
	                            { GF_PCIE_GEN, 1 },
	                            { GF_PCIE_WIDTH, 4 },
	                            { GF_PSTATE, 8 },
	                            { GF_CLOCK_GRAPHICS, 345 },
	                            KV_END });
	ok(only_ok(), "idle: the idle reason, a down-trained link and P8 are not flagged");
	/* the display-clock reason is benign too */
	one(100, (const struct kv[]){ { GF_CLOCK_REASONS, CR_DISPLAY_CLOCKS }, KV_END });
	ok(only_ok(), "display clock setting: not flagged");

	/* a power cap at full load: info, and the GPU is still fine */
	one(100, (const struct kv[]){ { GF_CLOCK_REASONS, CR_SW_POWER_CAP }, KV_END });
	ok(sev_of("health.throttle.power_cap") == DR_INFO &&
	           says(find_id(&rep, "health.throttle.power_cap"), "normal at full load"),
	   "power cap at full load: info, normal");
	ok(count_id(&rep, "health.ok") == 1 && dr_worst(&rep) == DR_INFO,
	   "power cap at full load: nothing worse than info");
}

static void
test_throttle(void)
{
	struct gpu_snapshot s;
	const struct dr_finding *f;

	one(100, (const struct kv[]){ { GF_CLOCK_REASONS, CR_HW_SLOWDOWN }, KV_END });
	f = find_id(&rep, "health.throttle.hw_slowdown");
	ok(f && f->severity == DR_WARNING && says(f, "under load") && says(f, "power cables"),
	   "HW slowdown under load: warning naming the power cables");
	ok(!find_id(&rep, "health.ok"), "HW slowdown: no ok line for that GPU");

	one(100, (const struct kv[]){ { GF_CLOCK_REASONS, CR_HW_POWER_BRAKE }, KV_END });
	ok(sev_of("health.throttle.power_brake") == DR_WARNING, "HW power brake: warning");

	one(100, (const struct kv[]){ { GF_CLOCK_REASONS, CR_SW_THERMAL }, KV_END });
	ok(sev_of("health.throttle.thermal") == DR_WARNING, "SW thermal: warning");
	one(30, (const struct kv[]){ { GF_CLOCK_REASONS, CR_HW_THERMAL }, KV_END });
	f = find_id(&rep, "health.throttle.thermal");
	ok(f && f->severity == DR_WARNING && !strstr(f->title, "under load"),
	   "HW thermal, not under load: still a warning, not said to be under load");

	one(100, (const struct kv[]){ { GF_CLOCK_REASONS, CR_APP_CLOCKS }, KV_END });
	f = find_id(&rep, "health.throttle.app_clocks");
	ok(f && f->severity == DR_INFO && says(f, "-rac"), "application clocks under load: info");
	one(10, (const struct kv[]){ { GF_CLOCK_REASONS, CR_APP_CLOCKS }, KV_END });
	ok(only_ok(), "application clocks while idle: not flagged");

	one(100, (const struct kv[]){ { GF_CLOCK_REASONS, CR_SYNC_BOOST }, KV_END });
	ok(sev_of("health.throttle.sync_boost") == DR_INFO, "sync boost under load: info");

	/* power capping on several GPUs: one line */
	gpu_snapshot_init(&s);
	for (unsigned i = 0; i < 4; i++)
		dev_set(add_gpu(&s, i, 100), GF_CLOCK_REASONS, CR_SW_POWER_CAP);
	check(&s, 1);
	f = find_id(&rep, "health.throttle.power_cap");
	ok(count_id(&rep, "health.throttle.power_cap") == 1 && f && says(f, "GPUs 0, 1, 2, 3") &&
	           f->nr_evidence == 4,
	   "power cap on 4 GPUs: one finding, evidence per GPU: %s", f ? f->title : "(none)");
	gpu_snapshot_release(&s);

	/* a power cap while barely busy: still info, but says so */
	one(10, (const struct kv[]){ { GF_CLOCK_REASONS, CR_SW_POWER_CAP }, KV_END });
	f = find_id(&rep, "health.throttle.power_cap");
	ok(f && f->severity == DR_INFO && !says(f, "normal at full load") && says(f, "set low"),
	   "power cap while idle: info pointing at the limit");

	/* in a window: "in k of n samples" */
	{
		double util[4] = { 100, 100, 100, 100 };
		double reasons[4] = { 0, CR_HW_SLOWDOWN, 0, 0 };

		series(4, 10, util, GF_CLOCK_REASONS, reasons);
		f = find_id(&rep, "health.throttle.hw_slowdown");
		ok(f && says(f, "in 1 of 4 samples"),
		   "HW slowdown in one sample of a window: counted");
	}
}

static void
test_vendors(void)
{
	struct gpu_snapshot s;
	struct gpu_device *d;
	const struct dr_finding *f;

	/* Intel: pl1 reported while idle is not a finding, under load it is */
	for (int load = 0; load < 2; load++) {
		gpu_snapshot_init(&s);
		d = add_gpu(&s, 0, load ? 90 : 5);
		d->vendor = VENDOR_INTEL;
		snprintf(d->name, sizeof(d->name), "Intel Arc A770");
		dev_set(d, GF_CLOCK_REASONS, CR_SW_POWER_CAP);
		snprintf(d->throttle_detail, sizeof(d->throttle_detail), "pl1");
		check(&s, 1);
		f = find_id(&rep, "health.throttle.power_cap");
		if (load)
			ok(f && says(f, "pl1"),
			   "Intel pl1 under load: power cap, the driver's name");
		else
			ok(!f, "Intel pl1 while idle: not flagged");
		gpu_snapshot_release(&s);
	}

	/* AMD: a thermal throttler under load, RAS counts */
	gpu_snapshot_init(&s);
	d = add_gpu(&s, 0, 95);
	d->vendor = VENDOR_AMD;
	snprintf(d->name, sizeof(d->name), "AMD Instinct MI300X");
	dev_set(d, GF_CLOCK_REASONS, CR_SW_THERMAL);
	snprintf(d->throttle_detail, sizeof(d->throttle_detail), "TEMP_HOTSPOT");
	dev_set(d, GF_RAS_UNCORR, 3);
	dev_set(d, GF_RAS_CORR, 100);
	check(&s, 1);
	f = find_id(&rep, "health.throttle.thermal");
	ok(f && says(f, "TEMP_HOTSPOT"), "AMD TEMP_HOTSPOT under load: thermal, named");
	ok(sev_of("health.ras.uncorrectable") == DR_ERROR, "AMD RAS uncorrectable: error");
	ok(!find_id(&rep, "health.ras.correctable"), "AMD RAS correctable in one sample: no trend");
	gpu_snapshot_release(&s);

	{
		double util[3] = { 50, 50, 50 }, corr[3] = { 100, 100, 100 },
		       rising[3] = { 100, 104, 130 };

		series(3, 10, util, GF_RAS_CORR, corr);
		ok(!find_id(&rep, "health.ras.correctable"),
		   "RAS correctable flat over a window: nothing");
		series(3, 10, util, GF_RAS_CORR, rising);
		f = find_id(&rep, "health.ras.correctable");
		ok(f && f->severity == DR_WARNING && says(f, "+30"),
		   "RAS correctable rising: warning");
	}
}

static void
test_temps(void)
{
	const struct dr_finding *f;

	one(100, (const struct kv[]){ { GF_TEMP_GPU, 83 }, KV_END });
	f = find_id(&rep, "health.temp.slowdown");
	ok(f && f->severity == DR_WARNING && says(f, "87"), "83 °C, slowdown at 87: warning");
	one(100, (const struct kv[]){ { GF_TEMP_GPU, 81 }, KV_END });
	ok(only_ok(), "81 °C, slowdown at 87: fine");
	one(100, (const struct kv[]){ { GF_TEMP_GPU, 70 },
	                              { GF_TEMP_SLOWDOWN, NAN },
	                              { GF_TEMP_MARGIN, 3 },
	                              KV_END });
	ok(sev_of("health.temp.slowdown") == DR_WARNING, "a margin of 3 °C to slowdown: warning");
	one(100, (const struct kv[]){ { GF_TEMP_GPU, 88 }, KV_END });
	f = find_id(&rep, "health.temp.shutdown");
	ok(f && f->severity == DR_ERROR && !find_id(&rep, "health.temp.slowdown"),
	   "88 °C, shutdown at 92: error, and only that");

	one(100, (const struct kv[]){ { GF_TEMP_MEM, 91 }, KV_END });
	ok(sev_of("health.temp.memory") == DR_WARNING, "memory 91 °C of 95: warning");
	one(100, (const struct kv[]){ { GF_TEMP_MEM, 96 }, KV_END });
	ok(sev_of("health.temp.memory") == DR_ERROR, "memory 96 °C of 95: error");
	one(100, (const struct kv[]){ { GF_TEMP_MEM, 89 }, KV_END });
	ok(only_ok(), "memory 89 °C of 95: fine");

	/* the peak over a window counts */
	{
		double util[3] = { 100, 100, 100 }, t[3] = { 70, 90, 70 };

		series(3, 10, util, GF_TEMP_GPU, t);
		ok(sev_of("health.temp.shutdown") == DR_ERROR, "a 90 °C peak in a window: error");
	}
}

static void
test_fan(void)
{
	const struct dr_finding *f;

	one(90, (const struct kv[]){ { GF_TEMP_GPU, 78 }, { GF_FAN, 0 }, KV_END });
	f = find_id(&rep, "health.fan.stopped");
	ok(f && f->severity == DR_WARNING, "fan 0 %% at 78 °C under load: warning");
	one(90, (const struct kv[]){ { GF_TEMP_GPU, 78 }, { GF_FAN, 65 }, KV_END });
	ok(only_ok(), "fan 65 %% at 78 °C: fine");
	one(20, (const struct kv[]){ { GF_TEMP_GPU, 78 }, { GF_FAN, 0 }, KV_END });
	ok(!find_id(&rep, "health.fan.stopped"), "fan 0 %% while idle: not flagged");
	one(90, (const struct kv[]){ { GF_TEMP_GPU, 50 }, { GF_FAN, 0 }, KV_END });
	ok(only_ok(), "fan 0 %% at 50 °C under load: fine");

	one(90, (const struct kv[]){ { GF_TEMP_GPU, 78 }, KV_END });
	ok(only_ok(), "no fan reading at 78 °C under load: a passive card running warm is fine");
	one(90, (const struct kv[]){ { GF_TEMP_GPU, 84 }, KV_END });
	f = find_id(&rep, "health.fan.no_reading");
	ok(f && says(f, "passively cooled") && !find_id(&rep, "health.fan.stopped"),
	   "no fan reading, hot under load: the passive data-centre card is named");
}

static void
test_power(void)
{
	const struct dr_finding *f;

	one(100, (const struct kv[]){ { GF_POWER_LIMIT, 400 }, KV_END });
	f = find_id(&rep, "health.power.limit_lowered");
	ok(f && f->severity == DR_INFO && says(f, "nvidia-smi -i 0 -pl 700"),
	   "power limit 400 W of 700 W: info, with nvidia-smi -pl");
	one(100, (const struct kv[]){ { GF_POWER_LIMIT, 699.5 }, KV_END });
	ok(only_ok(), "power limit at its default: fine");
}

/* NVLink on d: 18 links there, 0..3 wired, up unless in down; errs on link 1 */
static void
set_links(struct gpu_device *d, unsigned down, uint64_t errs)
{
	d->nr_nvlink = GPU_MAX_NVLINK;
	for (unsigned k = 0; k < GPU_MAX_NVLINK; k++) {
		d->nvlink[k].present = true;
		d->nvlink[k].active = k < 4 && !(down >> k & 1);
		d->nvlink[k].valid = (1u << NL__COUNT) - 1;
	}
	d->nvlink[1].v[NL_REPLAY] = errs;
	dev_set(d, GF_NVLINK_LINKS_ACTIVE, 4 - __builtin_popcount(down & 0xF));
}

/* NVLink: n samples, link 1's replays errs[i], links down[i] */
static void
nvlink_series(size_t n, const unsigned *down, const uint64_t *errs)
{
	struct gpu_snapshot s[4];

	for (size_t i = 0; i < n; i++) {
		gpu_snapshot_init(&s[i]);
		s[i].time = 1000 + 10.0 * (double)i;
		set_links(add_gpu(&s[i], 0, 90), down[i], errs[i]);
	}
	check(s, n);
	for (size_t i = 0; i < n; i++)
		gpu_snapshot_release(&s[i]);
}

static void
test_nvlink(void)
{
	const struct dr_finding *f;

	nvlink_series(1, (const unsigned[]){ 0 }, (const uint64_t[]){ 7 });
	ok(only_ok(), "links 0-3 up, 4-17 never wired, old errors: fine");
	nvlink_series(1, (const unsigned[]){ 1u << 2 }, (const uint64_t[]){ 0 });
	f = find_id(&rep, "health.nvlink.down");
	ok(f && f->severity == DR_WARNING && says(f, "link 2 down"),
	   "link 2 down below link 3 that is up: warning");
	nvlink_series(2, (const unsigned[]){ 0, 1u << 3 }, (const uint64_t[]){ 0, 0 });
	ok(sev_of("health.nvlink.down") == DR_WARNING, "window: link 3 was up, now down: warning");
	nvlink_series(2, (const unsigned[]){ 0, 0 }, (const uint64_t[]){ 5, 9 });
	f = find_id(&rep, "health.nvlink.errors");
	ok(f && f->severity == DR_WARNING && says(f, "link 1"),
	   "window: link 1's replays rose: warning");
	nvlink_series(2, (const unsigned[]){ 0, 0 }, (const uint64_t[]){ 9, 9 });
	ok(only_ok(), "window: errors that do not rise: fine");
}

static void
test_pcie(void)
{
	const struct dr_finding *f;

	one(95, (const struct kv[]){ { GF_PCIE_GEN, 3 }, KV_END });
	f = find_id(&rep, "health.pcie.downtrained");
	ok(f && f->severity == DR_WARNING && says(f, "gen 3 of 5"),
	   "gen 3 of 5 under load: warning");
	one(95, (const struct kv[]){ { GF_PCIE_WIDTH, 8 }, KV_END });
	ok(sev_of("health.pcie.downtrained") == DR_WARNING, "x8 of x16 under load: warning");
	one(10, (const struct kv[]){ { GF_PCIE_GEN, 1 }, KV_END });
	ok(only_ok(), "gen 1 of 5 while idle: power saving, not flagged");

	{
		/* the link rises with load: down only in the idle samples */
		double util[4] = { 0, 90, 90, 0 }, gen[4] = { 1, 5, 5, 1 };
		double gen_bad[4] = { 1, 3, 3, 1 }, gen_once[4] = { 5, 3, 5, 5 };
		double util_all[4] = { 90, 90, 90, 90 };

		series(4, 10, util, GF_PCIE_GEN, gen);
		ok(only_ok(), "window: link down only while idle: fine");
		series(4, 10, util, GF_PCIE_GEN, gen_bad);
		ok(sev_of("health.pcie.downtrained") == DR_WARNING,
		   "window: link down in every loaded sample: warning");
		series(4, 10, util_all, GF_PCIE_GEN, gen_once);
		ok(only_ok(), "window: link down in 1 of 4 loaded samples: fine");
	}

	/* replays */
	one(95, (const struct kv[]){ { GF_PCIE_REPLAY, 5000 }, KV_END });
	ok(only_ok(), "replays: a single sample's count is no rate");
	{
		double util[2] = { 90, 90 }, minute[2] = { 100, 200 }, few[2] = { 100, 105 };
		double util3[3] = { 90, 90, 90 }, reset[3] = { 100, 2, 4 };

		series(2, 60, util, GF_PCIE_REPLAY, minute);
		f = find_id(&rep, "health.pcie.replays");
		ok(f && f->severity == DR_WARNING && says(f, "100 PCIe replays per minute"),
		   "replays: +100 in a minute: warning: %s", f ? f->title : "(none)");
		series(2, 60, util, GF_PCIE_REPLAY, few);
		ok(only_ok(), "replays: +5 in a minute (DCGM allows 8): fine");
		series(2, 10, util, GF_PCIE_REPLAY, few);
		ok(only_ok(), "replays: +5 in 10 s is spread over a minute: fine");
		series(3, 10, util3, GF_PCIE_REPLAY, reset);
		ok(only_ok(), "replays: a counter reset is not counted as replays");
	}
}

static void
test_memory(void)
{
	const struct dr_finding *f;

	one(50, (const struct kv[]){ { GF_ECC_UNCORR_VOLATILE, 1 }, KV_END });
	ok(sev_of("health.ecc.uncorrectable") == DR_ERROR, "volatile uncorrectable ECC: error");

	one(50, (const struct kv[]){ { GF_RETIRED_PENDING, 1 }, KV_END });
	f = find_id(&rep, "health.retired.pending");
	ok(f && f->severity == DR_WARNING && says(f, "nvidia-smi -r -i 0"),
	   "retirement pending: warning, reset");
	one(50, (const struct kv[]){ { GF_RETIRED_SBE, 40 }, { GF_RETIRED_DBE, 23 }, KV_END });
	ok(sev_of("health.retired.many") == DR_ERROR, "63 retired pages: error");
	one(50, (const struct kv[]){ { GF_RETIRED_SBE, 50 }, KV_END });
	ok(sev_of("health.retired.many") == DR_WARNING, "50 retired pages: warning");
	one(50, (const struct kv[]){ { GF_RETIRED_DBE, 16 }, KV_END });
	ok(sev_of("health.retired.many") == DR_WARNING,
	   "16 DBE pages (DCGM's soft limit): warning");
	one(50, (const struct kv[]){ { GF_RETIRED_SBE, 10 }, { GF_RETIRED_DBE, 2 }, KV_END });
	ok(only_ok(), "12 retired pages: fine");

	one(50, (const struct kv[]){ { GF_REMAP_FAILURE, 1 }, KV_END });
	ok(sev_of("health.remap.failure") == DR_ERROR, "remapping failure: error");
	one(50, (const struct kv[]){ { GF_REMAP_PENDING, 1 }, KV_END });
	ok(sev_of("health.remap.pending") == DR_WARNING, "remapping pending: warning");
	one(50, (const struct kv[]){ { GF_REMAP_UNCORR, 512 }, KV_END });
	ok(sev_of("health.remap.limit") == DR_ERROR, "512 uncorrectable remapped rows: error");
	one(50, (const struct kv[]){ { GF_REMAP_UNCORR, 511 }, { GF_REMAP_CORR, 3 }, KV_END });
	ok(only_ok(), "511 uncorrectable remapped rows: fine");
}

static void
test_state(void)
{
	static const struct {
		enum dev_state st;
		const char *id;
	} cases[] = {
		{ DEV_LOST, "health.gpu.lost" },
		{ DEV_RESET_REQUIRED, "health.gpu.reset_required" },
		{ DEV_NOT_RESPONDING, "health.gpu.not_responding" },
	};
	struct gpu_snapshot s;
	struct gpu_device *d;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct dr_finding *f;

		gpu_snapshot_init(&s);
		add_gpu(&s, 0, 100);
		d = add_gpu(&s, 1, 100);
		d->state = cases[i].st;
		if (cases[i].st == DEV_LOST)
			snprintf(d->state_msg, sizeof(d->state_msg), "%s", DEV_LOST_MSG);
		gpu_device_clear_readings(d);
		check(&s, 1);
		f = find_id(&rep, cases[i].id);
		ok(f && f->severity == DR_ERROR && says(f, "GPU 1") && says(f, "Software first") &&
		           says(f, "power"),
		   "%s: error with the checklist, software first", cases[i].id);
		ok(rep.nr == 2 && says(find_id(&rep, "health.ok"), "1 GPU "),
		   "%s: the other GPU is fine, nothing else said", cases[i].id);
		gpu_snapshot_release(&s);
	}

	/* a GPU this user cannot open: not health's business */
	gpu_snapshot_init(&s);
	d = add_gpu(&s, 0, 0);
	d->state = DEV_NO_PERMISSION;
	gpu_device_clear_readings(d);
	check(&s, 1);
	is_int(rep.nr, 0, "no permission: no health finding");
	gpu_snapshot_release(&s);
}

static void
test_clocks(void)
{
	const struct dr_finding *f;

	one(95, (const struct kv[]){ { GF_PSTATE, 8 }, KV_END });
	f = find_id(&rep, "health.clocks.low");
	ok(f && f->severity == DR_WARNING && says(f, "P8"), "P8 at 95 %% utilisation: warning");
	one(95, (const struct kv[]){ { GF_PSTATE, 2 }, KV_END });
	ok(only_ok(), "P2 at 95 %%: fine");
	one(95, (const struct kv[]){ { GF_CLOCK_GRAPHICS, 600 }, KV_END });
	f = find_id(&rep, "health.clocks.low");
	ok(f && says(f, "600 MHz"), "600 of 1980 MHz busy with no reason: warning");
	one(95, (const struct kv[]){ { GF_CLOCK_GRAPHICS, 600 },
	                             { GF_CLOCK_REASONS, CR_SW_POWER_CAP },
	                             KV_END });
	ok(!find_id(&rep, "health.clocks.low"), "600 MHz with a power cap: explained, not this");
	{
		double util[4] = { 95, 10, 10, 10 }, p[4] = { 8, 8, 8, 8 };
		double util_b[4] = { 95, 95, 95, 10 }, p_b[4] = { 8, 8, 0, 8 };

		series(4, 10, util, GF_PSTATE, p);
		ok(!find_id(&rep, "health.clocks.low"),
		   "window: busy in 1 of 4 samples: not flagged");
		series(4, 10, util_b, GF_PSTATE, p_b);
		ok(!find_id(&rep, "health.clocks.low"),
		   "window: slow and busy in 2 of 4: not most");
	}
}

static void
test_catalog(void)
{
	size_t n = 0, missing = 0;

	for (const struct dr_explain *e = dr_catalog_health; e->id; e++, n++) {
		bool found = false;

		ok(!strncmp(e->id, "health.", 7) && e->title && e->text, "catalog: %s", e->id);
		if (e[1].id)
			ok(strcmp(e->id, e[1].id) < 0, "catalog: %s before %s", e->id, e[1].id);
		for (size_t j = 0; j < nr_seen; j++)
			found |= !strcmp(seen[j], e->id);
		if (!found) {
			diag("catalog entry %s is never emitted", e->id);
			missing++;
		}
	}
	ok(n > 0 && !missing, "catalog: all %zu entries emitted by some test", n);
}

int
main(void)
{
	test_ok();
	test_negative_controls();
	test_throttle();
	test_vendors();
	test_temps();
	test_fan();
	test_power();
	test_pcie();
	test_nvlink();
	test_memory();
	test_state();
	test_clocks();
	test_catalog();
	dr_report_release(&rep);
	return done_testing();
}
