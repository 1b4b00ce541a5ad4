/*
 * health.bench.*: a GPU that measured far below what its model should, from
 * the figures `gpuscope bench` kept for it (core/benchstore.h): memory bandwidth
 * (stream.triad) under 70 % of the spec sheet's, compute (fma.fp32, mma.*,
 * gemm.*) under 70 % of the sheet's or of the peak its clocks allow, pinned
 * host-to-device copies under 60 % of the PCIe link's rate. Each names the
 * likely reason doctor can see in this snapshot and in what was recorded
 * with the figure, software causes first. A figure older than 30 days or
 * measured under another driver is stale: said so, as a note.
 */
#include "doctor/doctor.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/benchstore.h"
#include "core/config.h"
#include "core/err.h"
#include "core/fields.h"
#include "core/gpu.h"
#include "core/specs.h"
#include "core/strbuf.h"

/* Below these shares of the reference a figure is "far below" (the brief's). */
#define MEMORY_SHARE  0.70
#define COMPUTE_SHARE 0.70
#define PCIE_SHARE    0.60
/* A figure older than this is stale. */
#define STALE_S (30 * 86400.0)
/* Clocks during the test below this share of the GPU's maximum were held down. */
#define CLOCK_HELD_SHARE 0.85
/* A power limit this far below the default (watts, or 2 %) is lowered (as check_health.c). */
#define POWER_SLACK_W 1.0

/* The compute tests and the spec row's rate each is held against (TFLOPS). */
static const struct {
	const char *test;
	size_t off; /* offsetof(struct gpu_spec, rate) */
} compute_tests[] = {
	{ "fma.fp32", offsetof(struct gpu_spec, fp32) },
	{ "fma.fp64", offsetof(struct gpu_spec, fp64) },
	{ "mma.fp16", offsetof(struct gpu_spec, fp16) },
	{ "mma.bf16", offsetof(struct gpu_spec, bf16) },
	{ "mma.tf32", offsetof(struct gpu_spec, tf32) },
	{ "mma.int8", offsetof(struct gpu_spec, int8) },
	{ "mma.fp8", offsetof(struct gpu_spec, fp8) },
	{ "gemm.fp16", offsetof(struct gpu_spec, fp16) },
	{ "gemm.bf16", offsetof(struct gpu_spec, bf16) },
	{ "gemm.tf32", offsetof(struct gpu_spec, tf32) },
	{ "gemm.fp8", offsetof(struct gpu_spec, fp8) },
};

/* PCIe GB/s per lane and direction by generation (8b/10b to gen 2, 128b/130b to 5, FLIT 6). */
static const double lane_gbs[] = { 0, 0.25, 0.5, 0.985, 1.969, 3.938, 7.563 };

struct bgpu {
	const struct dr_ctx *ctx;
	const struct gpu_device *d;
	const struct gpu_spec *spec;
	const struct bench_record *rec;
	double now;
	char label[200];
};

static const char *
env_none(const char *name)
{
	(void)name;
	return NULL;
}

/* "2026-12-02" (local time). */
static void
day(char *buf, size_t size, double t)
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (!(isfinite(t) && t > 0 && localtime_r(&tt, &tm) &&
	      strftime(buf, size, "%Y-%m-%d", &tm)))
		snprintf(buf, size, "an unknown day");
}

/*
 * Whether the driver a figure was measured under is this snapshot's. bench
 * records the version its API reports: CUDA's driver API gives "12.4" (its
 * CUDA version), NVML "550.54.15"; a form the snapshot does not know cannot
 * be told stale.
 */
static bool
same_driver(const struct gpu_snapshot *s, const char *drv)
{
	char cuda[32] = "";
	unsigned major = 0;

	if (s->nvidia.cuda_version > 0)
		snprintf(cuda, sizeof(cuda), "%d.%d", s->nvidia.cuda_version / 1000,
		         s->nvidia.cuda_version % 1000 / 10);
	if (!strcmp(drv, s->nvidia.driver_version) || !strcmp(drv, cuda))
		return true;
	if (sscanf(drv, "%u", &major) != 1)
		return true;
	/* CUDA versions are below 100, NVIDIA driver branches above */
	return major < 100 ? !cuda[0] : !s->nvidia.driver_version[0];
}

/* Why f is stale, into why; false when it is current. */
static bool
stale(const struct bgpu *g, const struct bench_figure *f, char *why, size_t size)
{
	const struct gpu_snapshot *s = g->ctx->snap;

	if (isfinite(f->time) && g->now - f->time > STALE_S) {
		snprintf(why, size, "measured %.0f days ago", (g->now - f->time) / 86400);
		return true;
	}
	if (g->d->vendor == VENDOR_NVIDIA && f->driver[0] && !same_driver(s, f->driver)) {
		char cuda[48] = "";

		if (s->nvidia.cuda_version > 0)
			snprintf(cuda, sizeof(cuda), " (CUDA %d.%d)", s->nvidia.cuda_version / 1000,
			         s->nvidia.cuda_version % 1000 / 10);
		snprintf(why, size, "measured under driver %s, now %s%s", f->driver,
		         s->nvidia.driver_version[0] ? s->nvidia.driver_version : "another", cuda);
		return true;
	}
	return false;
}

/* The figure's best in its unit, and what it was measured on, as an evidence line. */
static void
figure_evidence(const struct bgpu *g, struct dr_finding *f, const struct bench_figure *b,
                double ref, const char *against)
{
	char when[32];

	day(when, sizeof(when), b->time);
	dr_evidence(f, "%s: best %.4g %s (median %.4g), %.0f %% of %s %.4g %s; measured on %s",
	            b->test, b->best, b->unit, b->median, 100 * b->best / ref, against, ref,
	            b->unit, when);
	if (b->sm_mhz || b->mem_mhz || b->pcie_gen)
		dr_evidence(f, "during the test: SM %u MHz, memory %u MHz, PCIe gen %u x%u",
		            b->sm_mhz, b->mem_mhz, b->pcie_gen, b->pcie_width);
	(void)g;
}

/* Throttle reasons recorded with b, "sw_power_cap, hw_slowdown", into sb; false when none. */
static bool
throttle_names(const struct bench_figure *b, struct strbuf *sb)
{
	const struct flag_name *names;
	unsigned nr, n = 0;

	names = clock_reason_names(&nr);
	for (unsigned i = 0; i < nr; i++)
		if ((b->throttle & names[i].bit) && names[i].bit != CR_GPU_IDLE)
			strbuf_addf(sb, "%s%s", n++ ? ", " : "", names[i].label);
	return n > 0;
}

enum cause_kind { C_MEMORY = 1, C_COMPUTE = 2, C_PCIE = 4 };

/*
 * The likely reasons for a low b, software first, each as an evidence line
 * and together as one sentence into why; the number found.
 */
static unsigned
reasons(const struct bgpu *g, struct dr_finding *f, const struct bench_figure *b, unsigned kind,
        struct strbuf *why)
{
	const struct gpu_device *d = g->d;
	const struct gpu_snapshot *s = g->ctx->snap;
	struct strbuf tn = STRBUF_INIT;
	unsigned n = 0, procs = 0;
	double v, w,
	        max = dev_has(d, GF_CLOCK_MAX_SM) ? d->v[GF_CLOCK_MAX_SM]
	                                          : dev_get(d, GF_CLOCK_MAX_GRAPHICS);

#define CAUSE(...)                                   \
	do {                                         \
		strbuf_addstr(why, n++ ? "; " : ""); \
		strbuf_addf(why, __VA_ARGS__);       \
	} while (0)

	/* 1. software: other work on the GPU, clocks someone set, a lowered power limit */
	for (size_t i = 0; i < s->nr_proc; i++)
		procs += s->proc[i].dev < s->nr_dev && &s->dev[s->proc[i].dev] == d &&
		         (s->proc[i].type & PROC_COMPUTE);
	if (procs) {
		dr_evidence(f, "%u compute process%s on this GPU now", procs,
		            procs == 1 ? "" : "es");
		CAUSE("other processes share the GPU (%u now): a benchmark beside them measures its "
		      "share only",
		      procs);
	}
	if ((kind & (C_MEMORY | C_COMPUTE)) &&
	    ((b->throttle & CR_APP_CLOCKS) ||
	     (dev_has(d, GF_CLOCK_REASONS) &&
	      ((unsigned)d->v[GF_CLOCK_REASONS] & CR_APP_CLOCKS)))) {
		dr_evidence(f, "clock event reason: applications clocks setting");
		CAUSE("clocks held by an applications-clocks or locked-clocks setting "
		      "(health.throttle.app_clocks)");
	} else if ((kind & C_COMPUTE) && b->sm_mhz && isfinite(max) && max > 0 &&
	           b->sm_mhz < CLOCK_HELD_SHARE * max) {
		dr_evidence(f, "SM clock %u MHz during the test, maximum %.0f MHz", b->sm_mhz, max);
		CAUSE("clocks far below their maximum during the test (%u of %.0f MHz): locked "
		      "clocks, a power cap or heat",
		      b->sm_mhz, max);
	}
	v = dev_has(d, GF_POWER_LIMIT_SET) ? d->v[GF_POWER_LIMIT_SET] : dev_get(d, GF_POWER_LIMIT);
	w = dev_get(d, GF_POWER_LIMIT_DEFAULT);
	if ((kind & (C_MEMORY | C_COMPUTE)) && isfinite(v) && isfinite(w) && w > 0 &&
	    v < w - fmax(POWER_SLACK_W, 0.02 * w)) {
		dr_evidence(f, "power limit %.0f W, default %.0f W", v, w);
		CAUSE("the power limit is lowered to %.0f of %.0f W (health.power.limit_lowered)",
		      v, w);
	}
	if (throttle_names(b, &tn)) {
		dr_evidence(f, "clock event reasons during the test: %s", tn.buf);
		CAUSE("the GPU throttled during the test (%s)", tn.buf);
	}
	strbuf_release(&tn);
	/* 2. the link: a slot, a riser, a BIOS setting */
	if (kind & C_PCIE) {
		double gmax = dev_get(d, GF_PCIE_GEN_MAX), wmax = dev_get(d, GF_PCIE_WIDTH_MAX);
		unsigned gen =
		        b->pcie_gen ? b->pcie_gen : (unsigned)fmax(0, dev_get(d, GF_PCIE_GEN));
		unsigned wid = b->pcie_width ? b->pcie_width
		                             : (unsigned)fmax(0, dev_get(d, GF_PCIE_WIDTH));

		if ((gen && isfinite(gmax) && gen < gmax) ||
		    (wid && isfinite(wmax) && wid < wmax)) {
			dr_evidence(f, "PCIe link gen %u x%u, maximum gen %.0f x%.0f", gen, wid,
			            gmax, wmax);
			CAUSE("the PCIe link is below its maximum: gen %u x%u of gen %.0f x%.0f "
			      "(health.pcie.downtrained)",
			      gen, wid, gmax, wmax);
		}
	}
	/* 3. the memory: retired pages, remapped rows, uncorrectable errors */
	if (kind & C_MEMORY) {
		double pages =
		        fmax(0, dev_get(d, GF_RETIRED_SBE)) + fmax(0, dev_get(d, GF_RETIRED_DBE));
		double rows = fmax(0, dev_get(d, GF_REMAP_UNCORR));
		double ecc = dev_get(d, GF_ECC_UNCORR_VOLATILE);

		if (!isfinite(pages))
			pages = 0;
		if (pages > 0 || rows > 0 || (isfinite(ecc) && ecc > 0) ||
		    dev_get(d, GF_RETIRED_PENDING) > 0 || dev_get(d, GF_REMAP_PENDING) > 0) {
			dr_evidence(f,
			            "memory errors: %.0f retired pages, %.0f rows remapped for "
			            "uncorrectable errors, %.0f uncorrectable ECC errors since the "
			            "driver loaded",
			            pages, rows, isfinite(ecc) ? ecc : 0);
			CAUSE("the memory has errors (retired pages, remapped rows, ECC): see "
			      "health.retired.* and health.remap.*");
		}
	}
#undef CAUSE
	return n;
}

/* One finding for b held against ref (in b's unit), with its reasons. */
static void
emit(const struct bgpu *g, struct dr_report *r, const char *id, const struct bench_figure *b,
     double ref, const char *against, unsigned kind, const char *what, const char *meaning)
{
	char why_stale[256], day_s[32];
	struct strbuf why = STRBUF_INIT;
	struct dr_finding *f;
	bool old = stale(g, b, why_stale, sizeof(why_stale));
	unsigned n;

	day(day_s, sizeof(day_s), b->time);
	f = dr_add(r, id, old ? DR_INFO : DR_WARNING, "%s: %s measured at %.0f %% of %s%s%s%s",
	           g->label, what, 100 * b->best / ref, against, old ? " (stale: " : "",
	           old ? why_stale : "", old ? ")" : "");
	figure_evidence(g, f, b, ref, against);
	dr_evidence(f, "record %s (gpuscope %s on %s)", g->rec->path,
	            g->rec->version[0] ? g->rec->version : "?",
	            g->rec->host[0] ? g->rec->host : "an unknown host");
	if (old)
		dr_evidence(f, "stale: %s", why_stale);
	n = reasons(g, f, b, kind, &why);
	dr_meaning(f, "%s%s%s%s", meaning,
	           old ? " The figure is stale, so this is a note: the GPU may do better now." : "",
	           n ? " Likely: " : " doctor sees no cause in this snapshot.", why.buf);
	if (old)
		dr_action(f, "Measure again: 'gpuscope bench' on an idle GPU (it replaces the "
		             "figure).");
	else if (n)
		dr_action(f, "Deal with the causes above in that order (the software ones are "
		             "quick), then run 'gpuscope bench' again on an idle GPU to confirm.");
	else
		dr_action(f,
		          "Run 'gpuscope bench' again on an idle GPU; if it stays low, watch it "
		          "('gpuscope doctor --watch 60' during 'gpuscope burn') for throttling, "
		          "then suspect cooling, power delivery or the card itself.");
	strbuf_release(&why);
}

static void
check_memory(const struct bgpu *g, struct dr_report *r)
{
	const struct bench_figure *b = bench_record_find(g->rec, "stream.triad");
	double ref = NAN;

	if (!b || !isfinite(b->best) || !(b->best > 0))
		return;
	/* the spec table's bandwidth for this model, in the figure's unit */
	if (g->spec && isfinite(g->spec->mem_bw_gbs))
		ref = g->spec->mem_bw_gbs / bench_figure_in(b, 1, "B/s", 1e9);
	if (!isfinite(ref))
		ref = b->spec;
	if (!(isfinite(ref) && ref > 0) || b->best >= MEMORY_SHARE * ref)
		return;
	emit(g, r, "health.bench.memory", b, ref, "the spec's bandwidth", C_MEMORY,
	     "memory bandwidth (stream.triad)",
	     "BabelStream's triad reaches 80 to 90 % of the sheet's bandwidth on a healthy GPU; "
	     "under 70 % the GPU's memory runs slower than its model's, and every "
	     "bandwidth-bound kernel (LLM decoding) with it.");
}

static void
check_compute(const struct bgpu *g, struct dr_report *r)
{
	const struct bench_figure *worst = NULL;
	double worst_share = 1, worst_ref = NAN;
	const char *worst_against = "";

	for (size_t i = 0; i < sizeof(compute_tests) / sizeof(compute_tests[0]); i++) {
		const struct bench_figure *b = bench_record_find(g->rec, compute_tests[i].test);
		double spec = NAN, share;

		if (!b || !isfinite(b->best) || !(b->best > 0))
			continue;
		if (g->spec)
			spec = *(const double *)(const void *)((const char *)g->spec +
			                                       compute_tests[i].off) /
			       bench_figure_in(b, 1, "FLOP/s", 1e12);
		if (!(isfinite(spec) && spec > 0))
			spec = b->spec;
		/* the lower of the two shares: the spec's, and the clocks' own peak */
		if (isfinite(spec) && spec > 0 && (share = b->best / spec) < worst_share) {
			worst = b, worst_share = share, worst_ref = spec;
			worst_against = "the spec's peak";
		}
		if (isfinite(b->clock_peak) && b->clock_peak > 0 &&
		    (share = b->best / b->clock_peak) < worst_share) {
			worst = b, worst_share = share, worst_ref = b->clock_peak;
			worst_against = "the peak of the clocks seen";
		}
	}
	if (!worst || worst_share >= COMPUTE_SHARE)
		return;
	emit(g, r, "health.bench.compute", worst, worst_ref, worst_against, C_COMPUTE,
	     strncmp(worst->test, "fma.", 4) ? "tensor throughput" : "vector FMA throughput",
	     "Independent FMA chains and back-to-back mma reach 90 % or more of the peak on a "
	     "healthy GPU; under 70 % the GPU computes slower than its model (against the "
	     "clocks' own peak: slower than even its clocks allow).");
}

static void
check_pcie(const struct bgpu *g, struct dr_report *r)
{
	const struct bench_figure *b = bench_record_find(g->rec, "h2d.pinned");
	double link;

	if (!b || !isfinite(b->best) || !(b->best > 0))
		return;
	link = b->link_gbs / bench_figure_in(b, 1, "B/s", 1e9);
	if (!(isfinite(link) && link > 0) && b->pcie_gen > 0 &&
	    b->pcie_gen < sizeof(lane_gbs) / sizeof(lane_gbs[0]) && b->pcie_width > 0)
		link = lane_gbs[b->pcie_gen] * b->pcie_width / bench_figure_in(b, 1, "B/s", 1e9);
	if (!(isfinite(link) && link > 0) || b->best >= PCIE_SHARE * link)
		return;
	emit(g, r, "health.bench.pcie", b, link, "the link's theoretical rate", C_PCIE,
	     "pinned host-to-device copies",
	     "Pinned copies reach 80 to 90 % of the PCIe link's rate (nvbandwidth); under 60 % "
	     "data loading to this GPU is slower than its slot should allow.");
}

void
dr_check_bench(const struct dr_ctx *ctx, struct dr_report *r)
{
	const struct gpu_snapshot *s = ctx->snap;
	struct bench_store_dirs dirs;

	if (!s || !s->nr_dev)
		return;
	bench_store_dirs_init(&dirs, ctx->getenv ? ctx->getenv : env_none,
	                      ctx->cfg ? ctx->cfg->root : "/");
	for (size_t i = 0; i < s->nr_dev; i++) {
		const struct gpu_device *d = &s->dev[i];
		struct bench_record rec = { 0 };
		struct err err = ERR_INIT;
		struct bgpu g;
		int rc;

		if (!bench_store_uuid_ok(d->uuid))
			continue;
		memset(&g, 0, sizeof(g));
		g.ctx = ctx;
		g.d = d;
		g.spec = gpu_spec_match(d);
		g.rec = &rec;
		g.now = s->time > 0 ? s->time : (double)time(NULL);
		snprintf(g.label, sizeof(g.label), "GPU %u (%s%s%s)", d->index,
		         d->name[0] ? d->name : "GPU", d->pci_bus_id[0] ? ", " : "", d->pci_bus_id);
		rc = bench_store_get(&dirs, d->uuid, &rec, &err);
		if (rc == E_NOTFOUND)
			continue;
		if (rc < 0) {
			struct dr_finding *f =
			        dr_add(r, "health.bench.unreadable", DR_INFO,
			               "%s: its bench record cannot be read", g.label);

			dr_evidence(f, "%s", err.msg);
			dr_meaning(f,
			           "gpuscope bench keeps each GPU's figures in one file; this one "
			           "is not a record gpuscope wrote (truncated, edited, or not a "
			           "regular file), so fit and doctor pass it over.");
			dr_action(f, "Remove the file and run 'gpuscope bench' again.");
			continue;
		}
		check_memory(&g, r);
		check_compute(&g, r);
		check_pcie(&g, r);
		bench_record_release(&rec);
	}
}

const struct dr_explain dr_catalog_bench[] = {
	{ "health.bench.compute", "A GPU computes far below what its model should",
	  "gpuscope bench measured vector FMA (fma.fp32, fma.fp64) or tensor throughput\n"
	  "(mma.*, cuBLASLt gemm.*) under 70 % of the spec sheet's peak for this model,\n"
	  "or of the peak derived from the clocks seen during the test. Healthy GPUs reach\n"
	  "90 % or more with these kernels (clpeak's method). Causes, most likely first:\n"
	  "  1. Other work on the GPU while it was measured.\n"
	  "  2. Clocks held: locked or application clocks ('nvidia-smi -q -d CLOCK';\n"
	  "     'sudo nvidia-smi -rgc' and '-rac' reset them), a lowered power limit.\n"
	  "  3. Throttling during the test: power cap, heat (cooling, airflow, fans).\n"
	  "  4. The card itself, after the above: run 'gpuscope burn'.\n"
	  "Below the spec but near the clocks' peak means the clocks were low; below the\n"
	  "clocks' peak means slower than even those clocks allow.\n"
	  "A figure older than 30 days, or measured under another driver, is stale and\n"
	  "reported as a note only." },
	{ "health.bench.memory", "A GPU's memory bandwidth is far below its model's",
	  "gpuscope bench's BabelStream triad measured under 70 % of the spec sheet's\n"
	  "memory bandwidth for this model; healthy GPUs reach 80 to 90 %. Causes, most\n"
	  "likely first: other work on the GPU during the test; memory clocks held by a\n"
	  "setting or a lowered power limit; throttling (power, heat); memory errors\n"
	  "(retired pages, remapped rows: health.retired.*, health.remap.*). A stale\n"
	  "figure (over 30 days, or another driver) is a note only." },
	{ "health.bench.pcie", "Host-to-GPU copies far below the PCIe link's rate",
	  "gpuscope bench's pinned host-to-device copies (nvbandwidth's method) measured\n"
	  "under 60 % of the theoretical rate of the PCIe link the GPU had during the test\n"
	  "(generation x width); healthy links give 80 to 90 %. Causes, most likely first:\n"
	  "other traffic on the link or the host's memory (another job's copies); the link\n"
	  "trained below its maximum (health.pcie.downtrained: the slot, a riser, the BIOS\n"
	  "speed setting); a PCIe switch or a NUMA-remote CPU in the path (run the copy\n"
	  "from the GPU's NUMA node: 'nvidia-smi topo -m'). A stale figure is a note only." },
	{ "health.bench.unreadable", "A GPU's bench record cannot be read",
	  "gpuscope bench keeps each GPU's figures in one JSON file named by its UUID\n"
	  "(GPUSCOPE_BENCH_DIR, else /var/lib/gpuscope/bench or the user's\n"
	  "$XDG_STATE_HOME/gpuscope/bench). This one is truncated, malformed, holds\n"
	  "another GPU's record, or is a symlink or a FIFO, which is never followed.\n"
	  "Remove it and run 'gpuscope bench' again." },
	{ NULL, NULL, NULL },
};
