/*
 * gpuscope bench: what each GPU really does, measured (bench/suite.h: FMA
 * chains, tensor cores, BabelStream, host <-> device copies, launch
 * latency) on every CUDA and OpenCL device (bench/dev.h), each figure held
 * against the spec sheet, the peak at the clocks seen during its test and
 * the PCIe link (bench/peak.h), with what held the GPU down named next to
 * the figure that suffered (bench/sample.h); as a table, JSON (schema
 * gpuscope.bench/1) or a roofline picture; kept per GPU (core/benchstore.h) for
 * fit and doctor. `gpuscope bench matmul` is src/cmd/bench.c.
 */
#include "cmd/cmd.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "backend/collect.h"
#include "bench/cuda.h"
#include "bench/dev.h"
#include "bench/opencl.h"
#include "bench/p2p.h"
#include "bench/sample.h"
#include "core/benchstore.h"
#include "bench/suite.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/err.h"
#include "core/fields.h"
#include "core/gpu.h"
#include "core/specs.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "fit/fit.h"
#include "front/roofline.h"

#define BENCH_SCHEMA "gpuscope.bench/1"
#define MAX_PATTERNS 32

static void
usage(FILE *f)
{
	fputs("usage: gpuscope bench [TEST...] [--quick] [-i ID,...] [--json] [--plot FILE.svg]\n"
	      "                      [--force] [--no-save] [--opencl-cpu]\n"
	      "       gpuscope bench matmul [--size N | --sweep] ... (see 'gpuscope bench matmul --help')\n"
	      "Measure each GPU (CUDA through libcuda.so.1, every other through OpenCL's\n"
	      "libOpenCL.so.1): vector FMA peaks (fma.fp64 fma.fp32 fma.fp16 fma.bf16 fma.int32\n"
	      "dp4a.int8), tensor cores (mma.fp16 mma.bf16 mma.tf32 mma.int8 mma.fp8), cuBLASLt's\n"
	      "GEMM at its best algorithm (gemm.fp32 gemm.tf32 gemm.fp16 gemm.bf16 gemm.fp8\n"
	      "gemm.fp64), GPU to GPU copies with the link between them (p2p), memory\n"
	      "bandwidth (stream.copy stream.mul stream.add stream.triad stream.dot), host <-> device\n"
	      "copies (h2d.pinned d2h.pinned bidir.pinned h2d.pageable d2h.pageable h2d.sm d2h.sm)\n"
	      "and launch.latency; each against the spec sheet, the peak at the clocks seen during\n"
	      "the test and the PCIe link, with what held the GPU down (power cap, heat, a link\n"
	      "below its best) next to the figure. TEST: names or prefixes (\"stream\", \"fma\").\n"
	      "      --quick         about 15 s a GPU (default: about a minute)\n"
	      "  -i, --id=ID,...     the GPUs to measure: index of the list, cuda:N, opencl:N, UUID\n"
	      "                      or PCI bus id (default: all)\n"
	      "  -j, --json          one JSON document (schema gpuscope.bench/1, docs/bench.md)\n"
	      "      --plot=FILE     a roofline picture as SVG: the measured points under the\n"
	      "                      measured and the spec roofs\n"
	      "      --force         measure a GPU that other processes are using (refused\n"
	      "                      otherwise: the figures would be wrong and their work slowed)\n"
	      "      --no-save       do not keep the results (kept per GPU UUID for fit and doctor)\n"
	      "      --opencl-cpu    take CPU OpenCL devices (PoCL) too\n"
	      "exit status: 0 measured, 1 a result was wrong or a GPU was lost, 2 usage error,\n"
	      "3 a test could not run, 4 no GPU to measure; 128 + the signal when stopped\n",
	      f);
}

struct window {
	const char *test;
	double t0, t1;
};

struct devrun {
	struct bench_dev *dev;
	bool selected;
	int nvml; /* the sampler's device, or -1 */
	const struct gpu_spec *spec;
	char busy[320]; /* who else uses it (refused without --force) */
	struct bench_result res[BENCH_SUITE_MAX];
	size_t nres;
	struct bench_obs obs[BENCH_SUITE_MAX];
	struct window win[BENCH_SUITE_MAX];
	size_t nwin;
	int rc; /* bench_suite_run's */
	char error[320];
	char saved[512]; /* the store file written */
	char save_error[320];
	bool ran;
};

struct suite_run {
	struct gs_config *cfg;
	struct bench_devs devs;
	struct devrun *d;
	bool json, quick, force, save, progress, opencl_cpu;
	const char *ids;
	const char *plot;
	const char *pattern[MAX_PATTERNS];
	size_t npattern;
	struct bench_sampler *sampler;
	char sampler_error[256];
	struct devrun *current;
	size_t cur_index, nsel;
	double started;
	struct bench_p2p_result *p2p; /* GPU to GPU, when two or more are selected */
	size_t np2p;
	char p2p_error[256];
	bool p2p_asked; /* the tests named include p2p (or none were named) */
};

static void
on_progress(void *arg, const char *test, double done, double left_s)
{
	struct suite_run *r = arg;
	struct devrun *d = r->current;
	double now = bench_sampler_now();
	size_t i;

	if (d) {
		for (i = 0; i < d->nwin && strcmp(d->win[i].test, test); i++)
			;
		if (i == d->nwin && i < BENCH_SUITE_MAX) {
			d->win[i].test = test;
			d->win[i].t0 = now;
			d->nwin++;
		}
		if (i < d->nwin)
			d->win[i].t1 = now;
	}
	if (!r->progress)
		return;
	fprintf(stderr, "\r\033[K  bench %s [%zu/%zu] %s %3.0f%%", d ? d->dev->info.id : "",
	        r->cur_index + 1, r->nsel, test, done * 100);
	if (left_s > 0)
		fprintf(stderr, ", about %.0f s left", left_s);
	fflush(stderr);
}

static int
stop_requested(void)
{
	return cmd_stopped();
}

static int
select_devices(struct suite_run *r)
{
	bool *keep = xcalloc(r->devs.ndev + 1, sizeof(*keep));
	struct err err = ERR_INIT;
	int rc = 0;

	if (r->ids && bench_devs_select(&r->devs, r->ids, keep, &err) < 0) {
		cmd_error("--id: %s (list them with 'gpuscope bench -i list')", err.msg);
		rc = -1;
	}
	for (size_t i = 0; i < r->devs.ndev; i++)
		r->d[i].selected = !r->ids || keep[i];
	free(keep);
	return rc;
}

/* Other processes on the GPUs to measure, from one sample with processes. */
static void
find_users(struct suite_run *r)
{
	struct collector *c = NULL;
	struct gpu_snapshot snap;
	struct err err = ERR_INIT;
	uint32_t self = (uint32_t)getpid();

	gpu_snapshot_init(&snap);
	if (collector_open(r->cfg, &c, &err) < 0 || collector_scan(c, &err) < 0 ||
	    collector_sample(c, &snap, COLLECT_PROCS, &err) < 0)
		goto out;
	for (size_t i = 0; i < r->devs.ndev; i++) {
		struct devrun *d = &r->d[i];
		struct strbuf sb = STRBUF_INIT;
		size_t n = 0;

		if (!d->selected)
			continue;
		for (size_t p = 0; p < snap.nr_proc; p++) {
			const struct gpu_proc *pr = &snap.proc[p];
			const struct gpu_device *g = &snap.dev[pr->dev];
			bool same =
			        (d->dev->info.uuid[0] && !strcasecmp(g->uuid, d->dev->info.uuid)) ||
			        (d->dev->info.pci_bus_id[0] && !d->dev->info.uuid[0] &&
			         gpu_match_id(g, d->dev->info.pci_bus_id, &(bool){ false }));

			if (!same || pr->pid == self)
				continue;
			if (n++ < 3)
				strbuf_addf(&sb, "%spid %u (%s, %s)", n > 1 ? ", " : "", pr->pid,
				            pr->user ? pr->user : "user unknown",
				            pr->name ? pr->name : "command unknown");
		}
		if (n > 3)
			strbuf_addf(&sb, " and %zu more", n - 3);
		if (n)
			str_copy(d->busy, sizeof(d->busy), sb.buf);
		strbuf_release(&sb);
	}
out:
	gpu_snapshot_release(&snap);
	if (c)
		collector_close(c);
}

static void
measure(struct suite_run *r, struct devrun *d)
{
	struct bench_suite_opts o = {
		.quick = r->quick,
		.stop = stop_requested,
		.progress = on_progress,
		.progress_arg = r,
	};
	struct err err = ERR_INIT;
	const char *tests[MAX_PATTERNS];
	size_t nt = 0;

	/* p2p is measured across devices, after them (measure_p2p) */
	for (size_t i = 0; i < r->npattern; i++)
		if (strcmp(r->pattern[i], "p2p"))
			tests[nt++] = r->pattern[i];
	o.tests = nt ? tests : NULL;
	o.ntests = nt;
	r->current = d;
	d->ran = true;
	if (r->npattern && !nt)
		d->rc = 0;
	else
		d->rc = bench_suite_run(d->dev, &o, d->res, &d->nres, &err);
	if (d->rc < 0) {
		struct strbuf sb = STRBUF_INIT;
		struct gpu_device g;

		strbuf_addstr(&sb, err.msg);
		/*
		 * a GPU lost mid-run: the Xids NVML reports for it tell why. The
		 * driver's event comes around the failure, not before it: wait for
		 * it a little (3 s at most)
		 */
		for (int w = 0; w < 30 && d->nvml >= 0; w++) {
			if (bench_sampler_latest(r->sampler, d->nvml, &g) && g.nr_xid)
				break;
			usleep(100000);
		}
		if (d->nvml >= 0 && bench_sampler_latest(r->sampler, d->nvml, &g) && g.nr_xid) {
			strbuf_addstr(&sb, "; NVML reported Xid");
			for (unsigned x = 0; x < g.nr_xid && x < GPU_MAX_XID; x++)
				strbuf_addf(&sb, "%s %u (%llu time%s)", x ? "," : "", g.xid[x].xid,
				            (unsigned long long)g.xid[x].count,
				            g.xid[x].count == 1 ? "" : "s");
			strbuf_addstr(&sb, ": 'gpuscope doctor' explains it");
		}
		str_copy(d->error, sizeof(d->error), sb.buf);
		strbuf_release(&sb);
	}
	r->current = NULL;
	d->spec = gpu_spec_find(d->dev->info.name, NULL, 0, &(size_t){ 0 });
	for (size_t i = 0; i < d->nres; i++) {
		struct bench_result *res = &d->res[i];
		struct bench_peak_in in = { .spec = d->spec };
		struct bench_obs *ob = &d->obs[i];

		memset(ob, 0, sizeof(*ob));
		ob->sm_mean = ob->mem_mean = NAN;
		for (size_t w = 0; w < d->nwin; w++)
			if (!strcmp(d->win[w].test, res->name))
				bench_sampler_window(r->sampler, d->nvml, d->win[w].t0,
				                     d->win[w].t1, ob);
		if (ob->known) {
			in.sm_mhz = isnan(ob->sm_mean) ? 0 : ob->sm_mean;
			in.mem_mhz = isnan(ob->mem_mean) ? 0 : ob->mem_mean;
			in.pcie_gen = ob->pcie_gen_min;
			in.pcie_width = ob->pcie_width_min;
		}
		bench_peak_fill(res, &d->dev->info, &in);
	}
}

/* What held the GPU down during a test, in words, or "" when nothing did. */
static void
suffered(const struct bench_result *res, const struct bench_obs *ob, char *buf, size_t size)
{
	char why[128];
	size_t len = 0;

	buf[0] = 0;
	if (!ob || !ob->known)
		return;
	bench_reasons_str(ob->reasons_busy, why, sizeof(why));
	if (why[0])
		len += (size_t)snprintf(buf + len, size - len, "%s (SM %.0f-%.0f MHz)", why,
		                        ob->sm_min, ob->sm_max);
	if (len < size &&
	    (!strncmp(res->name, "h2d", 3) || !strncmp(res->name, "d2h", 3) ||
	     !strncmp(res->name, "bidir", 5)) &&
	    ob->pcie_gen_min && ob->pcie_gen_max &&
	    (ob->pcie_gen_min < ob->pcie_gen_max || ob->pcie_width_min < ob->pcie_width_max))
		snprintf(buf + len, size - len, "%slink at Gen%d x%d of Gen%d x%d", len ? "; " : "",
		         ob->pcie_gen_min, ob->pcie_width_min, ob->pcie_gen_max,
		         ob->pcie_width_max);
}

static void
fmt_num(char *buf, size_t size, double v)
{
	if (!isfinite(v))
		snprintf(buf, size, "-");
	else if (v >= 100)
		snprintf(buf, size, "%.0f", v);
	else if (v >= 10)
		snprintf(buf, size, "%.1f", v);
	else
		snprintf(buf, size, "%.2f", v);
}

static void
fmt_pct(char *buf, size_t size, double v)
{
	if (!isfinite(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.0f%%", v);
}

static void
text_device(const struct suite_run *r, const struct devrun *d, struct strbuf *out)
{
	const struct bench_dev_info *in = &d->dev->info;

	strbuf_addf(out, "%s  %s", in->id, in->name);
	if (in->uuid[0] || in->pci_bus_id[0])
		strbuf_addf(out, " (%s%s%s)", in->uuid,
		            in->uuid[0] && in->pci_bus_id[0] ? ", " : "", in->pci_bus_id);
	strbuf_addch(out, '\n');
	strbuf_addf(out, "  %u %s", in->units, !strcmp(in->api, "cuda") ? "SMs" : "compute units");
	if (in->cc_major)
		strbuf_addf(out, ", compute capability %d.%d", in->cc_major, in->cc_minor);
	if (in->clock_mhz)
		strbuf_addf(out, ", %u MHz", in->clock_mhz);
	if (in->mem_total)
		strbuf_addf(out, ", %.1f GiB", in->mem_total / 1073741824.0);
	if (in->driver[0])
		strbuf_addf(out, ", %s %s", !strcmp(in->api, "cuda") ? "CUDA driver" : "driver",
		            in->driver);
	strbuf_addf(out, "; spec sheet: %s\n", d->spec ? d->spec->name : "no row for this name");
	if (!d->ran) {
		strbuf_addf(out, "  not measured: %s\n\n", d->busy[0] ? d->busy : "not selected");
		return;
	}
	if (d->nvml < 0)
		strbuf_addf(out, "  clocks, power and temperature: not sampled (%s)\n",
		            r->sampler ? "NVML and DRM do not see this device" : r->sampler_error);
	if (!d->nres) {
		strbuf_addch(out, '\n');
		return;
	}
	strbuf_addf(out, "  %-15s %12s %10s %-8s %9s %6s %10s %6s  %s\n", "test", "best", "median",
	            "unit", "spec", "%spec", "clock pk", "%clk", "note");
	for (size_t i = 0; i < d->nres; i++) {
		const struct bench_result *res = &d->res[i];
		const struct bench_peak *pk = &res->peak;
		char best[24], med[24], spec[24], pspec[12], clk[24], pclk[12], why[256], note[320];

		if (res->status != BENCH_MEASURED) {
			strbuf_addf(out, "  %-15s %12s %10s %-8s %s: %s\n", res->name, "-", "-", "",
			            bench_status_name(res->status), res->why);
			continue;
		}
		fmt_num(best, sizeof(best), res->best);
		fmt_num(med, sizeof(med), res->median);
		if (isfinite(pk->link)) {
			fmt_num(spec, sizeof(spec), pk->link);
			fmt_pct(pspec, sizeof(pspec), pk->pct_link);
		} else {
			fmt_num(spec, sizeof(spec), pk->spec);
			fmt_pct(pspec, sizeof(pspec), pk->pct_spec);
		}
		fmt_num(clk, sizeof(clk), pk->clock);
		fmt_pct(pclk, sizeof(pclk), pk->pct_clock);
		suffered(res, &d->obs[i], why, sizeof(why));
		note[0] = 0;
		if (pk->flags & BENCH_PEAK_OVER)
			snprintf(note, sizeof(note), "above 100%%: boost clock");
		else if ((pk->flags & BENCH_PEAK_LOW) && !why[0])
			snprintf(note, sizeof(note), "below 60%%");
		if (why[0])
			snprintf(note + strlen(note), sizeof(note) - strlen(note),
			         "%sheld down: %s", note[0] ? "; " : "", why);
		strbuf_addf(out, "  %-15s %12s %10s %-8s %9s %6s %10s %6s  %s\n", res->name, best,
		            med, res->unit, spec, pspec, clk, pclk, note);
	}
	/* how each was measured, under the table so that the table reads at a glance */
	for (size_t i = 0, first = 1; i < d->nres; i++) {
		const struct bench_result *res = &d->res[i];

		if (res->status != BENCH_MEASURED || (!res->note[0] && !res->nextra))
			continue;
		strbuf_addf(out, "%s %-15s %s", first ? "  how:" : "      ", res->name, res->note);
		for (unsigned e = 0; e < res->nextra; e++)
			strbuf_addf(out, "%s%s %.4g %s", res->note[0] || e ? "; " : "",
			            res->extra[e].name, res->extra[e].value, res->unit);
		strbuf_addch(out, '\n');
		first = 0;
	}
	if (d->rc < 0 && d->error[0])
		strbuf_addf(out, "  stopped: %s\n", d->error);
	if (d->saved[0])
		strbuf_addf(out, "  kept in %s\n", d->saved);
	else if (d->save_error[0])
		strbuf_addf(out, "  not kept: %s\n", d->save_error);
	strbuf_addch(out, '\n');
}

static void
text_out(const struct suite_run *r, struct strbuf *out)
{
	size_t shown = 0;

	for (size_t i = 0; i < r->devs.ndev; i++)
		if (r->d[i].selected) {
			text_device(r, &r->d[i], out);
			shown++;
		}
	if (!r->devs.ndev) {
		strbuf_addstr(out, "no GPU to measure:\n");
		if (r->devs.cuda_reason[0])
			strbuf_addf(out, "  CUDA: %s\n", r->devs.cuda_reason);
		if (r->devs.opencl_reason[0])
			strbuf_addf(out, "  OpenCL: %s\n", r->devs.opencl_reason);
	}
	if (r->np2p) {
		strbuf_addstr(out, "GPU to GPU (copy engine, bytes counted once):\n");
		for (size_t i = 0; i < r->np2p; i++) {
			const struct bench_p2p_result *p = &r->p2p[i];
			const char *arrow = p->bidir ? "<>" : !strcmp(p->name, "p2p") ? "--" : "->";

			if (p->status != BENCH_MEASURED)
				strbuf_addf(out, "  %-8s %s %-8s %-10s %s: %s\n", p->src_id, arrow,
				            p->dst_id, p->link, bench_status_name(p->status),
				            p->why);
			else if (p->bidir)
				strbuf_addf(out, "  %-8s %s %-8s %-10s %8.1f GB/s (%.1f + %.1f)\n",
				            p->src_id, arrow, p->dst_id, p->link, p->median, p->fwd,
				            p->rev);
			else
				strbuf_addf(out, "  %-8s %s %-8s %-10s %8.1f GB/s (best %.1f)\n",
				            p->src_id, arrow, p->dst_id, p->link, p->median,
				            p->best);
		}
		strbuf_addch(out, '\n');
	}
	if (r->p2p_error[0])
		strbuf_addf(out, "GPU to GPU: %s\n\n", r->p2p_error);
	if (shown)
		strbuf_addstr(out,
		              "spec: the spec sheet's dense figure (copies: the PCIe link's rate "
		              "as trained during the test); clock pk: units x operations per "
		              "clock x the clock seen during the test (docs/bench.md)\n");
}

static void
json_obs(struct fit_jw *jw, const struct bench_obs *ob)
{
	char why[128];
	unsigned nr;
	const struct flag_name *fl = clock_reason_names(&nr);

	if (!ob || !ob->known) {
		fit_jw_null(jw, "observed");
		return;
	}
	fit_jw_open(jw, "observed", '{');
	fit_jw_num(jw, "samples", ob->samples, 0);
	fit_jw_num(jw, "sm_clock_mhz_min", ob->sm_min, 0);
	fit_jw_num(jw, "sm_clock_mhz_mean", ob->sm_mean, 1);
	fit_jw_num(jw, "sm_clock_mhz_max", ob->sm_max, 0);
	fit_jw_num(jw, "memory_clock_mhz_mean", ob->mem_mean, 1);
	fit_jw_num(jw, "power_watts_mean", ob->power_mean, 1);
	fit_jw_num(jw, "power_watts_max", ob->power_max, 1);
	fit_jw_num(jw, "power_limit_watts", ob->power_limit, 1);
	fit_jw_num(jw, "temperature_c_max", ob->temp_max, 0);
	fit_jw_open(jw, "clock_event_reasons", '[');
	for (unsigned i = 0; i < nr; i++)
		if (ob->reasons_busy & fl[i].bit)
			fit_jw_str(jw, NULL, fl[i].key);
	fit_jw_close(jw, ']');
	bench_reasons_str(ob->reasons_busy, why, sizeof(why));
	fit_jw_num(jw, "pcie_gen_min", ob->pcie_gen_min ? ob->pcie_gen_min : NAN, 0);
	fit_jw_num(jw, "pcie_width_min", ob->pcie_width_min ? ob->pcie_width_min : NAN, 0);
	fit_jw_num(jw, "pcie_gen_max", ob->pcie_gen_max ? ob->pcie_gen_max : NAN, 0);
	fit_jw_num(jw, "pcie_width_max", ob->pcie_width_max ? ob->pcie_width_max : NAN, 0);
	fit_jw_close(jw, '}');
}

static void
json_device(const struct suite_run *r, const struct devrun *d, struct fit_jw *jw)
{
	const struct bench_dev_info *in = &d->dev->info;

	fit_jw_open(jw, NULL, '{');
	fit_jw_str(jw, "id", in->id);
	fit_jw_str(jw, "api", in->api);
	fit_jw_str(jw, "name", in->name);
	fit_jw_str(jw, "vendor", in->vendor[0] ? in->vendor : NULL);
	fit_jw_str(jw, "uuid", in->uuid[0] ? in->uuid : NULL);
	fit_jw_str(jw, "pci_bus_id", in->pci_bus_id[0] ? in->pci_bus_id : NULL);
	fit_jw_str(jw, "driver", in->driver[0] ? in->driver : NULL);
	if (in->cc_major) {
		char cc[16];

		snprintf(cc, sizeof(cc), "%d.%d", in->cc_major, in->cc_minor);
		fit_jw_str(jw, "compute_capability", cc);
	} else {
		fit_jw_null(jw, "compute_capability");
	}
	fit_jw_num(jw, "units", in->units, 0);
	fit_jw_num(jw, "clock_mhz", in->clock_mhz ? in->clock_mhz : NAN, 0);
	fit_jw_num(jw, "memory_clock_mhz", in->mem_clock_mhz ? in->mem_clock_mhz : NAN, 0);
	fit_jw_num(jw, "memory_bus_bits", in->mem_bus_bits ? in->mem_bus_bits : NAN, 0);
	fit_jw_num(jw, "l2_bytes", in->l2_bytes ? (double)in->l2_bytes : NAN, 0);
	fit_jw_num(jw, "memory_bytes", in->mem_total ? (double)in->mem_total : NAN, 0);
	fit_jw_str(jw, "spec_row", d->spec ? d->spec->name : NULL);
	fit_jw_bool(jw, "measured", d->ran);
	fit_jw_str(jw, "refused", !d->ran && d->busy[0] ? d->busy : NULL);
	fit_jw_bool(jw, "sampled", d->nvml >= 0);
	fit_jw_str(jw, "error", d->error[0] ? d->error : NULL);
	fit_jw_str(jw, "saved_to", d->saved[0] ? d->saved : NULL);
	fit_jw_str(jw, "save_error", d->save_error[0] ? d->save_error : NULL);
	fit_jw_open(jw, "results", '[');
	for (size_t i = 0; i < d->nres; i++) {
		const struct bench_result *res = &d->res[i];
		const struct bench_peak *pk = &res->peak;
		char why[256];

		fit_jw_open(jw, NULL, '{');
		fit_jw_str(jw, "test", res->name);
		fit_jw_str(jw, "unit", res->unit);
		fit_jw_str(jw, "status", bench_status_name(res->status));
		fit_jw_str(jw, "why", res->status != BENCH_MEASURED ? res->why : NULL);
		fit_jw_num(jw, "best", res->status == BENCH_MEASURED ? res->best : NAN, 3);
		fit_jw_num(jw, "median", res->status == BENCH_MEASURED ? res->median : NAN, 3);
		fit_jw_num(jw, "samples", res->samples, 0);
		fit_jw_num(jw, "seconds", res->seconds, 3);
		fit_jw_num(jw, "counted_per_sample", res->count, 0);
		fit_jw_str(jw, "note", res->note[0] ? res->note : NULL);
		fit_jw_open(jw, "extra", '{');
		for (unsigned e = 0; e < res->nextra; e++)
			fit_jw_num(jw, res->extra[e].name, res->extra[e].value, 3);
		fit_jw_close(jw, '}');
		fit_jw_num(jw, "spec", pk->spec, 3);
		fit_jw_str(jw, "spec_how", pk->spec_how[0] ? pk->spec_how : NULL);
		fit_jw_num(jw, "percent_of_spec", pk->pct_spec, 1);
		fit_jw_num(jw, "clock_peak", pk->clock, 3);
		fit_jw_str(jw, "clock_peak_how", pk->clock_how[0] ? pk->clock_how : NULL);
		fit_jw_bool(jw, "clock_observed", pk->clock_observed);
		fit_jw_num(jw, "percent_of_clock_peak", pk->pct_clock, 1);
		fit_jw_num(jw, "link", pk->link, 3);
		fit_jw_str(jw, "link_how", pk->link_how[0] ? pk->link_how : NULL);
		fit_jw_num(jw, "percent_of_link", pk->pct_link, 1);
		fit_jw_bool(jw, "above_100_percent", pk->flags & BENCH_PEAK_OVER);
		fit_jw_bool(jw, "below_60_percent", pk->flags & BENCH_PEAK_LOW);
		suffered(res, &d->obs[i], why, sizeof(why));
		fit_jw_str(jw, "held_down_by", why[0] ? why : NULL);
		json_obs(jw, &d->obs[i]);
		fit_jw_close(jw, '}');
	}
	fit_jw_close(jw, ']');
	fit_jw_close(jw, '}');
	(void)r;
}

static void
json_out(const struct suite_run *r, struct strbuf *out, int stopped)
{
	struct fit_jw jw;

	fit_jw_begin(&jw, out);
	fit_jw_str(&jw, "schema", BENCH_SCHEMA);
	fit_jw_str(&jw, "test", "suite");
	fit_jw_bool(&jw, "quick", r->quick);
	fit_jw_bool(&jw, "stopped", stopped != 0);
	fit_jw_str(&jw, "cuda_reason", r->devs.cuda_reason[0] ? r->devs.cuda_reason : NULL);
	fit_jw_str(&jw, "opencl_reason", r->devs.opencl_reason[0] ? r->devs.opencl_reason : NULL);
	fit_jw_str(&jw, "sampler_error", r->sampler_error[0] ? r->sampler_error : NULL);
	fit_jw_open(&jw, "devices", '[');
	for (size_t i = 0; i < r->devs.ndev; i++)
		if (r->d[i].selected)
			json_device(r, &r->d[i], &jw);
	fit_jw_close(&jw, ']');
	fit_jw_str(&jw, "p2p_error", r->p2p_error[0] ? r->p2p_error : NULL);
	fit_jw_open(&jw, "p2p", '[');
	for (size_t i = 0; i < r->np2p; i++) {
		const struct bench_p2p_result *p = &r->p2p[i];
		const struct bench_dev_info *a = &r->devs.dev[p->src]->info;
		const struct bench_dev_info *b = &r->devs.dev[p->dst]->info;

		fit_jw_open(&jw, NULL, '{');
		fit_jw_str(&jw, "test", p->name);
		fit_jw_str(&jw, "src", p->src_id);
		fit_jw_str(&jw, "dst", p->dst_id);
		fit_jw_str(&jw, "src_uuid", a->uuid[0] ? a->uuid : NULL);
		fit_jw_str(&jw, "dst_uuid", b->uuid[0] ? b->uuid : NULL);
		fit_jw_str(&jw, "link", p->link);
		fit_jw_str(&jw, "link_from", p->link_from[0] ? p->link_from : NULL);
		fit_jw_num(&jw, "rank", p->rank >= 0 ? p->rank : NAN, 0);
		fit_jw_str(&jw, "status", bench_status_name(p->status));
		fit_jw_str(&jw, "why", p->status != BENCH_MEASURED ? p->why : NULL);
		fit_jw_str(&jw, "unit", "GB/s");
		fit_jw_str(&jw, "counting", "bytes once");
		fit_jw_num(&jw, "best", p->status == BENCH_MEASURED ? p->best : NAN, 3);
		fit_jw_num(&jw, "median", p->status == BENCH_MEASURED ? p->median : NAN, 3);
		fit_jw_num(&jw, "fwd", p->bidir && p->status == BENCH_MEASURED ? p->fwd : NAN, 3);
		fit_jw_num(&jw, "rev", p->bidir && p->status == BENCH_MEASURED ? p->rev : NAN, 3);
		fit_jw_num(&jw, "samples", p->samples, 0);
		fit_jw_num(&jw, "bytes", (double)p->bytes, 0);
		fit_jw_num(&jw, "seconds", p->seconds, 3);
		fit_jw_str(&jw, "note", p->note[0] ? p->note : NULL);
		fit_jw_close(&jw, '}');
	}
	fit_jw_close(&jw, ']');
	fit_jw_end(&jw);
}

/* FLOP per byte of a stream kernel (BabelStream's counts), 0 for copy. */
static double
stream_intensity(const char *test)
{
	if (!strcmp(test, "stream.mul"))
		return 1.0 / 8;
	if (!strcmp(test, "stream.add"))
		return 1.0 / 12;
	if (!strcmp(test, "stream.triad"))
		return 2.0 / 12;
	if (!strcmp(test, "stream.dot"))
		return 2.0 / 8;
	return 0;
}

static const struct bench_result *
result_of(const struct devrun *d, const char *test)
{
	for (size_t i = 0; i < d->nres; i++)
		if (!strcmp(d->res[i].name, test) && d->res[i].status == BENCH_MEASURED)
			return &d->res[i];
	return NULL;
}

/*
 * Write len bytes to path whole or not at all: a temporary file beside it,
 * then rename, so a full disk or a stop leaves no half picture.
 */
static int
write_whole(const char *path, const char *buf, size_t len, struct err *err)
{
	char tmp[4096];
	FILE *f;
	int bad;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return err_set(err, E_USAGE, "%s: the name is too long", path);
	f = fopen(tmp, "wx");
	if (!f)
		return err_set(err, errno_status(errno), "cannot create %s: %s", tmp,
		               strerror(errno));
	bad = fwrite(buf, 1, len, f) != len;
	bad |= fclose(f) != 0;
	if (bad || rename(tmp, path) < 0) {
		int e = errno;

		unlink(tmp);
		return err_set(err, errno_status(e), "cannot write %s: %s", path, strerror(e));
	}
	return 0;
}

static int
plot_out(const struct suite_run *r)
{
	static const char *const ceilings[][2] = {
		{ "fma.fp64", "FP64" },     { "fma.fp32", "FP32" },     { "fma.fp16", "FP16 x2" },
		{ "mma.tf32", "TF32 mma" }, { "mma.fp16", "FP16 mma" }, { "mma.bf16", "BF16 mma" },
		{ "mma.fp8", "FP8 mma" },
	};
	struct roof_panel *p = xcalloc(r->devs.ndev ? r->devs.ndev : 1, sizeof(*p));
	size_t np = 0;
	struct strbuf sb = STRBUF_INIT;
	struct err err = ERR_INIT;
	int rc = 0;

	for (size_t i = 0; i < r->devs.ndev; i++) {
		const struct devrun *d = &r->d[i];
		struct roof_panel *q = &p[np];
		const struct bench_result *triad = result_of(d, "stream.triad");

		if (!d->ran)
			continue;
		np++;
		snprintf(q->title, sizeof(q->title), "%s %s", d->dev->info.id, d->dev->info.name);
		q->bw_measured = triad ? triad->best : NAN;
		q->bw_spec = d->spec ? d->spec->mem_bw_gbs : NAN;
		for (size_t c = 0; c < sizeof(ceilings) / sizeof(*ceilings); c++) {
			const struct bench_result *res = result_of(d, ceilings[c][0]);
			struct roof_ceiling *ce = &q->ceiling[q->nceiling];

			if (!res && !(d->spec && !strcmp(ceilings[c][0], "fma.fp32")))
				continue;
			str_copy(ce->label, sizeof(ce->label), ceilings[c][1]);
			ce->measured = res ? res->best : NAN;
			ce->spec = res ? res->peak.spec : d->spec->fp32 * 1000;
			q->nceiling++;
			if (res && q->npoint < sizeof(q->point) / sizeof(*q->point)) {
				struct roof_point *pt = &q->point[q->npoint++];

				str_copy(pt->label, sizeof(pt->label), res->name);
				/* the chains touch memory once per work-item: off the right edge of
				 * any GPU's ridge */
				pt->intensity = 1024;
				pt->gflops = res->best;
			}
		}
		for (size_t t = 0; t < d->nres; t++) {
			const struct bench_result *res = &d->res[t];
			double in = stream_intensity(res->name);

			if (res->status != BENCH_MEASURED || in <= 0 ||
			    q->npoint >= sizeof(q->point) / sizeof(*q->point))
				continue;
			struct roof_point *pt = &q->point[q->npoint++];

			str_copy(pt->label, sizeof(pt->label), res->name);
			pt->intensity = in;
			pt->gflops = res->best * in;
		}
	}
	roofline_svg(p, np, &sb);
	if (write_whole(r->plot, sb.buf, sb.len, &err) < 0) {
		cmd_error("--plot: %s", err.msg);
		rc = -1;
	}
	strbuf_release(&sb);
	free(p);
	return rc;
}

/* GPU to GPU copies between the selected devices that were measured and not lost */
static void
measure_p2p(struct suite_run *r)
{
	bool *sel = xcalloc(r->devs.ndev + 1, sizeof(*sel));
	bool *lost = xcalloc(r->devs.ndev + 1, sizeof(*lost));
	struct bench_p2p_opts o = {
		.quick = r->quick,
		.stop = stop_requested,
		.progress = on_progress,
		.progress_arg = r,
		.lost = lost,
	};
	struct err err = ERR_INIT;
	size_t n = 0;

	for (size_t i = 0; i < r->devs.ndev; i++) {
		sel[i] = r->d[i].selected && r->d[i].ran && r->d[i].rc >= 0;
		n += sel[i];
	}
	if (n >= 2 && bench_p2p_run(&r->devs, sel, &o, &r->p2p, &r->np2p, &err) < 0)
		str_copy(r->p2p_error, sizeof(r->p2p_error), err.msg);
	for (size_t i = 0; i < r->devs.ndev; i++)
		if (lost[i] && r->d[i].rc >= 0) {
			r->d[i].rc = E_LOST;
			str_copy(r->d[i].error, sizeof(r->d[i].error),
			         "lost during the GPU to GPU copies (see p2p)");
		}
	free(sel);
	free(lost);
}

static const char *
env_get(const char *name)
{
	return getenv(name);
}

static void
save(struct suite_run *r, struct devrun *d)
{
	struct bench_store_dirs dirs;
	struct bench_record rec;
	struct err err = ERR_INIT;
	double now = clock_now(r->cfg);

	if (!d->dev->info.uuid[0]) {
		str_copy(d->save_error, sizeof(d->save_error),
		         "the device has no UUID to keep its results under");
		return;
	}
	memset(&rec, 0, sizeof(rec));
	str_copy(rec.uuid, sizeof(rec.uuid), d->dev->info.uuid);
	str_copy(rec.name, sizeof(rec.name), d->dev->info.name);
	str_copy(rec.pci_bus_id, sizeof(rec.pci_bus_id), d->dev->info.pci_bus_id);
	str_copy(rec.version, sizeof(rec.version), GPUSCOPE_VERSION);
	str_copy(rec.driver, sizeof(rec.driver), d->dev->info.driver);
	if (gethostname(rec.host, sizeof(rec.host) - 1) != 0)
		rec.host[0] = 0;
	rec.time = now;
	for (size_t i = 0; i < d->nres; i++) {
		const struct bench_result *res = &d->res[i];
		const struct bench_obs *ob = &d->obs[i];
		struct bench_figure f;

		if (res->status != BENCH_MEASURED)
			continue;
		bench_figure_init(&f, res->name);
		str_copy(f.unit, sizeof(f.unit), res->unit);
		f.best = res->best;
		f.median = res->median;
		f.spec = res->peak.spec;
		f.clock_peak = res->peak.clock;
		f.link_gbs = res->peak.link;
		f.time = now;
		str_copy(f.driver, sizeof(f.driver), rec.driver);
		if (ob->known) {
			f.sm_mhz = isfinite(ob->sm_mean) ? (unsigned)(ob->sm_mean + 0.5) : 0;
			f.mem_mhz = isfinite(ob->mem_mean) ? (unsigned)(ob->mem_mean + 0.5) : 0;
			f.pcie_gen = (unsigned)ob->pcie_gen_min;
			f.pcie_width = (unsigned)ob->pcie_width_min;
			f.throttle = ob->reasons_busy;
		}
		str_copy(f.notes, sizeof(f.notes), res->note);
		bench_record_set(&rec, &f);
	}
	if (rec.nr_fig) {
		bench_store_dirs_init(&dirs, env_get, r->cfg->root);
		if (bench_store_put(&dirs, &rec, d->saved, sizeof(d->saved), &err) < 0)
			str_copy(d->save_error, sizeof(d->save_error), err.msg);
	}
	bench_record_release(&rec);
}

static int
parse(struct suite_run *r, int argc, char **argv)
{
	enum { OPT_QUICK = 0x100, OPT_PLOT, OPT_FORCE, OPT_NO_SAVE, OPT_OPENCL_CPU };
	static const struct option opts[] = {
		{ "quick", no_argument, NULL, OPT_QUICK },
		{ "id", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "no-save", no_argument, NULL, OPT_NO_SAVE },
		{ "opencl-cpu", no_argument, NULL, OPT_OPENCL_CPU },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:jh", opts, NULL)) != -1) {
		switch (c) {
		case OPT_QUICK:
			r->quick = true;
			break;
		case 'i':
			r->ids = optarg;
			break;
		case 'j':
			r->json = true;
			break;
		case OPT_PLOT:
			if (!*optarg) {
				cmd_error("--plot needs a file name");
				return EXIT_USAGE;
			}
			r->plot = optarg;
			break;
		case OPT_FORCE:
			r->force = true;
			break;
		case OPT_NO_SAVE:
			r->save = false;
			break;
		case OPT_OPENCL_CPU:
			r->opencl_cpu = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK + 1000;
		case ':':
			cmd_error("option '%s' needs a value (see 'gpuscope bench --help')",
			          argv[optind - 1]);
			return EXIT_USAGE;
		default:
			cmd_error("unknown option '%s' for bench (see 'gpuscope bench --help')",
			          argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	for (; optind < argc; optind++) {
		const char *t = argv[optind];

		if (strcmp(t, "p2p") && !bench_suite_pattern_valid(t)) {
			struct strbuf sb = STRBUF_INIT;

			for (size_t i = 0; i < BENCH_SUITE_MAX && bench_suite_test_name(i); i++)
				strbuf_addf(&sb, "%s%s", i ? " " : "", bench_suite_test_name(i));
			cmd_error(
			        "'%s' is not a bench test (tests: %s, matmul); see 'gpuscope bench "
			        "--help'",
			        t, sb.buf);
			strbuf_release(&sb);
			return EXIT_USAGE;
		}
		if (r->npattern == MAX_PATTERNS) {
			cmd_error("too many tests named (at most %d)", MAX_PATTERNS);
			return EXIT_USAGE;
		}
		r->pattern[r->npattern++] = t;
	}
	r->p2p_asked = r->npattern == 0;
	for (size_t i = 0; i < r->npattern; i++)
		if (!strncmp(r->pattern[i], "p2p", 3))
			r->p2p_asked = true;
	return EXIT_OK;
}

static bool
wants_matmul(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "matmul"))
			return true;
	return false;
}

static void
list_devices(const struct suite_run *r)
{
	for (size_t i = 0; i < r->devs.ndev; i++) {
		const struct bench_dev_info *in = &r->devs.dev[i]->info;

		printf("%zu  %-9s %s%s%s%s%s\n", i, in->id, in->name, in->uuid[0] ? "  " : "",
		       in->uuid, in->pci_bus_id[0] ? "  " : "", in->pci_bus_id);
	}
	if (!r->devs.ndev)
		printf("no device: %s%s%s\n", r->devs.cuda_reason,
		       r->devs.cuda_reason[0] && r->devs.opencl_reason[0] ? "; " : "",
		       r->devs.opencl_reason);
}

int
cmd_bench(int argc, char **argv, struct gs_config *cfg)
{
	struct suite_run r = { .cfg = cfg, .save = true };
	struct strbuf out = STRBUF_INIT;
	const char *skip[64];
	size_t nskip = 0;
	int rc, stopped;
	bool any_wrong = false, any_failed = false, any_lost = false;
	struct err err = ERR_INIT;

	if (wants_matmul(argc, argv))
		return cmd_bench_matmul(argc, argv, cfg);
	rc = parse(&r, argc, argv);
	if (rc == EXIT_OK + 1000)
		return EXIT_OK;
	if (rc != EXIT_OK)
		return rc;
	cmd_stop_on_signals();
	cmd_stop_feed(NULL);
	bench_cuda_open(&r.devs, NULL);
	for (size_t i = 0; i < r.devs.ndev && nskip + 1 < sizeof(skip) / sizeof(*skip); i++)
		if (r.devs.dev[i]->info.pci_bus_id[0])
			skip[nskip++] = r.devs.dev[i]->info.pci_bus_id;
	skip[nskip] = NULL;
	bench_cl_devs_open(&r.devs, NULL, r.opencl_cpu, skip);
	r.d = xcalloc(r.devs.ndev ? r.devs.ndev : 1, sizeof(*r.d));
	for (size_t i = 0; i < r.devs.ndev; i++) {
		r.d[i].dev = r.devs.dev[i];
		r.d[i].nvml = -1;
	}
	if (r.ids && !strcmp(r.ids, "list")) {
		list_devices(&r);
		rc = EXIT_OK;
		goto done;
	}
	if (select_devices(&r) < 0) {
		rc = EXIT_USAGE;
		goto done;
	}
	r.progress = isatty(STDERR_FILENO);
	r.sampler = bench_sampler_start(cfg, 0.1, &err);
	if (!r.sampler)
		str_copy(r.sampler_error, sizeof(r.sampler_error), err.msg);
	for (size_t i = 0; i < r.devs.ndev; i++)
		r.d[i].nvml = bench_sampler_find(r.sampler, r.d[i].dev->info.uuid,
		                                 r.d[i].dev->info.pci_bus_id);
	if (!r.force)
		find_users(&r);
	for (size_t i = 0; i < r.devs.ndev; i++)
		r.nsel += r.d[i].selected;
	r.started = bench_sampler_now();
	for (size_t i = 0; i < r.devs.ndev && !cmd_stopped(); i++) {
		struct devrun *d = &r.d[i];

		if (!d->selected)
			continue;
		if (d->busy[0] && !r.force) {
			struct strbuf why = STRBUF_INIT;

			strbuf_addf(&why,
			            "in use by %s: its figures would be wrong and its users "
			            "slowed (--force to measure anyway)",
			            d->busy);
			str_copy(d->busy, sizeof(d->busy), why.buf);
			strbuf_release(&why);
			cmd_error("bench: %s %s", d->dev->info.id, d->busy);
			any_failed = true;
			continue;
		}
		measure(&r, d);
		r.cur_index++;
		if (r.save)
			save(&r, d);
	}
	if (!cmd_stopped() && r.p2p_asked)
		measure_p2p(&r);
	if (r.progress)
		fputs("\r\033[K", stderr);
	stopped = cmd_stopped();
	for (size_t i = 0; i < r.np2p; i++) {
		any_wrong |= r.p2p[i].status == BENCH_WRONG;
		any_failed |= r.p2p[i].status == BENCH_FAILED;
	}
	for (size_t i = 0; i < r.devs.ndev; i++) {
		const struct devrun *d = &r.d[i];

		if (d->rc < 0)
			any_lost = true;
		for (size_t t = 0; t < d->nres; t++) {
			any_wrong |= d->res[t].status == BENCH_WRONG;
			any_failed |= d->res[t].status == BENCH_FAILED;
		}
	}
	if (r.json)
		json_out(&r, &out, stopped);
	else
		text_out(&r, &out);
	rc = EXIT_OK;
	if (fwrite(out.buf, 1, out.len, stdout) != out.len || fflush(stdout)) {
		cmd_error("cannot write the output");
		rc = EXIT_RUNTIME;
	}
	if (r.plot && plot_out(&r) < 0)
		rc = EXIT_RUNTIME;
	for (size_t i = 0; i < r.devs.ndev; i++)
		for (size_t t = 0; t < r.d[i].nres; t++)
			if (r.d[i].res[t].status == BENCH_WRONG ||
			    r.d[i].res[t].status == BENCH_FAILED)
				cmd_error("bench: %s %s %s: %s", r.d[i].dev->info.id,
				          r.d[i].res[t].name,
				          bench_status_name(r.d[i].res[t].status),
				          r.d[i].res[t].why);
	if (!r.devs.ndev) {
		if (!r.json)
			cmd_error("bench: no GPU to measure (see above)");
		rc = EXIT_NOGPU;
	} else if (rc == EXIT_OK && (any_wrong || any_lost)) {
		rc = EXIT_PROBLEMS;
	} else if (rc == EXIT_OK && any_failed) {
		rc = EXIT_RUNTIME;
	}
	if (stopped)
		rc = 128 + stopped;
	bench_sampler_stop(r.sampler);
done:
	free(r.p2p);
	strbuf_release(&out);
	bench_devs_close(&r.devs);
	free(r.d);
	return rc;
}
