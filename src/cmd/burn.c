/*
 * gpuscope burn: a stress test that reproduces faults before a job hits
 * them. Every device of bench/dev.h (CUDA's, then OpenCL's) runs the burn
 * of bench/burn.h on a thread of its own, all at once, for --duration;
 * meanwhile the GPUs are sampled once a second through the monitoring
 * backends (NVML, DRM) for the live line (temperature, power, SM clock,
 * throttle reasons), for the flight recorder (--record, in this process:
 * the samples are taken anyway) and for doctor's health checks over the
 * window. The end: a verdict per device and overall, as text or one JSON
 * document (gpuscope.burn/1, docs/burn.md).
 *
 * Exit status: 0 pass; 1 a wrong result, a memtest error, a lost device,
 * an Xid or an error finding of the health checks; 2 usage; 3 burn could
 * not run (no device, a call failed); 128 + the signal when stopped.
 */
#include "cmd/cmd.h"

#include <ctype.h>
#include <getopt.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "backend/collect.h"
#include "backend/feed.h"
#include "bench/burn.h"
#include "bench/cuda.h"
#include "bench/dev.h"
#include "bench/opencl.h"
#include "bench/sample.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "doctor/doctor.h"
#include "doctor/klog.h"
#include "fit/fit.h"
#include "record/record.h"

#define BURN_SCHEMA     "gpuscope.burn/1"
#define MAX_DURATION    (7 * 86400.0)
#define WINDOW_MAX      3600 /* samples kept for the health checks: the last hour */
#define QUIET_EVERY     10.0 /* seconds between summary lines without a terminal */
#define KLOG_MAX        (1 << 20)
#define BURN_EXIT_FAULT 1
#define BURN_EXIT_NORUN 3

static void
burn_usage(FILE *f)
{
	fputs("usage: gpuscope burn [--duration SEC] [--precision P] [--memtest | --no-memtest]\n"
	      "                     [-i ID[,ID...]] [--record FILE] [--json] [--opencl-cpu]\n"
	      "A stress test of every GPU at once (CUDA through libcuda.so.1, others through\n"
	      "OpenCL): GEMMs over about 90 % of free memory, each result compared on the device\n"
	      "with a reference computed once (itself checked on the host), and a memory pattern\n"
	      "test of the same memory (walking ones and zeros, moving inversions, random) at the\n"
	      "start and the end; a live line per GPU; doctor's health checks over the run.\n"
	      "  -d, --duration=SEC  the whole run, setup included (default 60; \"90s\", \"10m\")\n"
	      "      --precision=P   fp32 (default), fp64; through cuBLASLt on CUDA devices: tf32,\n"
	      "                      fp16, bf16, or tensor (bf16 on sm_80 and later, fp16 on sm_7x)\n"
	      "      --memtest       the whole run is the memory test (no GEMM)\n"
	      "      --no-memtest    the GEMM load alone\n"
	      "  -i, --id=ID,...     only these devices: index in burn's list, cuda:0 / opencl:1,\n"
	      "                      UUID (or a prefix of one), or PCI bus id\n"
	      "      --record=FILE   run the flight recorder alongside (gpuscope record's format)\n"
	      "  -j, --json          one JSON document at the end (schema gpuscope.burn/1)\n"
	      "      --opencl-cpu    take CPU OpenCL devices (PoCL) too: for tests\n"
	      "      --size=N        GEMM size N x N (default: the rule of docs/burn.md)\n"
	      "      --memory=SIZE   take at most SIZE of each device's memory\n"
	      "exit status: 0 pass; 1 a wrong result, memtest error, lost GPU, Xid or fatal health\n"
	      "finding; 2 usage error; 3 could not run; 128 + the signal when stopped\n",
	      f);
}

/* What the monitor saw of one device over the run. */
struct seen {
	int gpu; /* index in the last sample, -1: none matched */
	unsigned nvml_index;
	char gpu_name[96];
	bool have; /* any reading */
	double temp_max, power_max, clock_min, clock_max;
	double temp, power, clock; /* the last */
	uint64_t reasons_all;      /* every throttle reason seen */
	uint64_t reasons;          /* the last */
	struct xid_count xid[GPU_MAX_XID];
	unsigned nr_xid;
	bool xid_watched;
	char klog_xid[160]; /* Xids of the kernel log during the run, for this bus id */
};

struct burn_cmd {
	struct gs_config *cfg;
	struct burn_opts opts;
	struct bench_devs devs;
	struct burn_unit *unit;
	struct burn_stats *st;
	struct seen *seen;
	size_t n;
	atomic_int stop;
	struct feed *feed;
	struct rec_writer *wr;
	unsigned long recorded;
	const char *record; /* --record's file, while recording */
	struct gpu_snapshot *win;
	size_t nwin;
	bool tty, json, drawn;
	double t0, elapsed;
	struct dr_report health;
	bool health_run;
	char health_why[160];
};

static const char *
env_get(const char *name)
{
	return getenv(name);
}

/* Keep only the devices ids names; EXIT_OK, or EXIT_USAGE after saying which id matched none. */
static int
select_devs(struct burn_cmd *b, const char *ids)
{
	bool *keep = xcalloc(b->devs.ndev + 1, sizeof(*keep));
	struct err err = ERR_INIT;
	size_t k = 0;
	int rc = EXIT_OK;

	if (bench_devs_select(&b->devs, ids, keep, &err) < 0) {
		cmd_error("burn: -i: %s (see 'gpuscope burn --help')", err.msg);
		rc = EXIT_USAGE;
	}
	if (rc == EXIT_OK) {
		for (size_t i = 0; i < b->devs.ndev; i++) {
			if (keep[i])
				b->devs.dev[k++] = b->devs.dev[i];
			else
				b->devs.dev[i]->ops->close(b->devs.dev[i]);
		}
		b->devs.ndev = k;
	}
	free(keep);
	return rc;
}

/* The device of snap that bench device d is: by UUID, else by PCI bus id; -1 when none. */
static int
match_gpu(const struct gpu_snapshot *snap, const struct bench_dev *d)
{
	for (size_t i = 0; i < snap->nr_dev; i++)
		if (d->info.uuid[0] && !strcasecmp(snap->dev[i].uuid, d->info.uuid))
			return (int)i;
	for (size_t i = 0; i < snap->nr_dev; i++) {
		bool prefix;

		if (d->info.pci_bus_id[0] &&
		    gpu_match_id(&snap->dev[i], d->info.pci_bus_id, &prefix))
			return (int)i;
	}
	return -1;
}

static void
take_sample(struct burn_cmd *b, struct gpu_snapshot *snap)
{
	for (size_t u = 0; u < b->n; u++) {
		struct seen *s = &b->seen[u];
		int g = match_gpu(snap, b->devs.dev[u]);
		const struct gpu_device *d;

		s->gpu = g;
		if (g < 0)
			continue;
		d = &snap->dev[g];
		s->nvml_index = d->index;
		str_copy(s->gpu_name, sizeof(s->gpu_name), d->name);
		s->temp = dev_get(d, GF_TEMP_GPU);
		s->power = dev_get(d, GF_POWER_DRAW);
		s->clock = dev_get(d, GF_CLOCK_SM);
		if (isnan(s->clock))
			s->clock = dev_get(d, GF_CLOCK_GRAPHICS);
		s->reasons = dev_has(d, GF_CLOCK_REASONS) ? (uint64_t)d->v[GF_CLOCK_REASONS] : 0;
		/* idle and application clocks are not throttling */
		s->reasons &= ~(uint64_t)(CR_GPU_IDLE | CR_APP_CLOCKS | CR_DISPLAY_CLOCKS);
		s->reasons_all |= s->reasons;
		if (!isnan(s->temp) && (!s->have || s->temp > s->temp_max))
			s->temp_max = s->temp;
		if (!isnan(s->power) && (!s->have || s->power > s->power_max))
			s->power_max = s->power;
		if (!isnan(s->clock)) {
			if (!s->have || s->clock < s->clock_min)
				s->clock_min = s->clock;
			if (!s->have || s->clock > s->clock_max)
				s->clock_max = s->clock;
		}
		s->have = true;
		s->xid_watched = d->xid_watched;
		s->nr_xid = d->nr_xid < GPU_MAX_XID ? d->nr_xid : GPU_MAX_XID;
		memcpy(s->xid, d->xid, sizeof(s->xid));
	}
}

/* The live line of device u, without a newline. */
static void
live_line(struct burn_cmd *b, size_t u, struct strbuf *sb)
{
	const struct burn_stats *st = &b->st[u];
	const struct seen *s = &b->seen[u];
	const struct bench_dev *d = b->devs.dev[u];

	strbuf_addf(sb, "%-9s %-24.24s %-8s", d->info.id, d->info.name,
	            st->state == BS_RUNNING ? burn_phase_name(st->phase)
	                                    : burn_state_name(st->state));
	if (b->opts.memtest != BURN_MEMTEST_ONLY)
		strbuf_addf(sb, st->tflops_last >= 1 ? " %7.3f TFLOP/s" : " %7.2f GFLOP/s",
		            st->tflops_last >= 1 ? st->tflops_last : st->tflops_last * 1e3);
	strbuf_addf(sb, "  wrong %llu", st->wrong + st->ref_wrong);
	if (b->opts.memtest != BURN_MEMTEST_OFF)
		strbuf_addf(sb, "  memtest %llu bad", st->mem_bad);
	if (s->gpu >= 0 && s->have) {
		char why[128];

		if (!isnan(s->temp))
			strbuf_addf(sb, "  %.0f C", s->temp);
		if (!isnan(s->power))
			strbuf_addf(sb, "  %.0f W", s->power);
		if (!isnan(s->clock))
			strbuf_addf(sb, "  %.0f MHz", s->clock);
		bench_reasons_str((unsigned)s->reasons, why, sizeof(why));
		if (why[0])
			strbuf_addf(sb, "  [%s]", why);
	}
	strbuf_addf(sb, "  %.0f/%.0f s", st->seconds, b->opts.duration);
	if (st->state == BS_LOST || st->state == BS_FAILED)
		strbuf_addf(sb, "  %s", st->error);
}

static void
draw(struct burn_cmd *b, bool final)
{
	struct strbuf sb = STRBUF_INIT;

	if (b->tty) {
		struct winsize ws;
		size_t cols =
		        ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col ? ws.ws_col : 0;

		if (b->drawn)
			strbuf_addf(&sb, "\033[%zuA", b->n);
		for (size_t u = 0; u < b->n; u++) {
			size_t start;

			strbuf_addstr(&sb, "\r\033[K");
			start = sb.len;
			live_line(b, u, &sb);
			/* a line that wraps would throw the redraw's cursor-up count off */
			if (cols && sb.len - start >= cols)
				strbuf_setlen(&sb, start + cols - 1);
			strbuf_addch(&sb, '\n');
		}
		b->drawn = true;
	} else if (!final) {
		for (size_t u = 0; u < b->n; u++) {
			strbuf_addstr(&sb, "gpuscope burn: ");
			live_line(b, u, &sb);
			strbuf_addch(&sb, '\n');
		}
	}
	if (sb.len)
		fwrite(sb.buf, 1, sb.len, stderr);
	fflush(stderr);
	strbuf_release(&sb);
}

/*
 * Keep snap for the health checks, with only the GPUs burnt (take_sample()
 * matched them): a GPU left out with -i is not judged by this run.
 */
static void
keep_sample(struct burn_cmd *b, struct gpu_snapshot *snap)
{
	size_t k = 0;

	for (size_t i = 0; i < snap->nr_dev; i++) {
		bool burnt = false;

		for (size_t u = 0; u < b->n; u++)
			burnt |= b->seen[u].gpu == (int)i;
		if (burnt)
			snap->dev[k++] = snap->dev[i];
	}
	snap->nr_dev = k;
	if (b->nwin == WINDOW_MAX) {
		gpu_snapshot_release(&b->win[0]);
		memmove(b->win, b->win + 1, (b->nwin - 1) * sizeof(*b->win));
		b->nwin--;
	}
	b->win[b->nwin++] = *snap; /* the window owns it now */
}

/* The time of the last line of a kernel log, since boot; -1 when it has none. */
static double
klog_last_time(const char *text)
{
	struct klog_line l = { 0 };
	size_t pos = 0, len = strlen(text);
	double t = -1;

	while (klog_next(text, len, &pos, &l, 0))
		if (l.clock == KLOG_BOOT)
			t = l.t;
	return t;
}

/* The lines of text stamped after t (boot seconds), into out. */
static void
klog_after(const char *text, double t, struct strbuf *out)
{
	size_t pos = 0, len = strlen(text);

	while (pos < len) {
		struct klog_line l = { 0 };
		size_t start = pos;

		if (!klog_next(text, len, &pos, &l, 0))
			break;
		if (l.clock == KLOG_BOOT && l.t > t) {
			strbuf_add(out, text + start, pos - start);
			if (out->len && out->buf[out->len - 1] != '\n')
				strbuf_addch(out, '\n');
		}
	}
}

/* "79 (x1)" for each "NVRM: Xid (PCI:<bus>): N" of log on the PCI bus id pci. */
static void
klog_xids(const char *log, const char *pci, char *out, size_t size)
{
	const char *p = log;
	size_t len = 0, plen;
	char bus[16];

	out[0] = '\0';
	/* the log names "0000:17:00" (domain, bus, device), the function left out */
	snprintf(bus, sizeof(bus), "%.10s", pci);
	plen = strlen(bus);
	if (plen < 10)
		return;
	while ((p = strstr(p, "Xid (PCI:"))) {
		const char *q = p + 9, *end = strchr(q, ')');

		p = q;
		if (!end || (size_t)(end - q) < plen || strncasecmp(end - plen, bus, plen) ||
		    strncmp(end, "): ", 3) || !isdigit((unsigned char)end[3]))
			continue;
		if (len + 16 < size)
			len += (size_t)snprintf(out + len, size - len, "%s%ld", len ? ", " : "",
			                        strtol(end + 3, NULL, 10));
	}
}

/* doctor's health and kernel-log checks over the samples of the run. */
static void
run_health(struct burn_cmd *b, const char *klog_start, bool klog_ok, const char *klog_why)
{
	struct dr_ctx ctx = { 0 };
	struct dr_window dw = { b->win, b->nwin, 1.0, "live" };
	struct strbuf now = STRBUF_INIT, fresh = STRBUF_INIT;
	char why[512] = "";

	if (!b->nwin) {
		snprintf(b->health_why, sizeof(b->health_why),
		         "no GPU the monitoring backends (NVML, DRM) can read: no sample taken");
		return;
	}
	ctx.cfg = b->cfg;
	ctx.getenv = env_get;
	ctx.snap = &b->win[b->nwin - 1];
	ctx.window = b->nwin > 1 ? &dw : NULL;
	if (klog_ok && dr_klog_read(b->cfg, &now, KLOG_MAX, why, sizeof(why)) == 0) {
		klog_after(now.buf ? now.buf : "", klog_last_time(klog_start), &fresh);
		ctx.klog = fresh.buf ? fresh.buf : "";
		ctx.klog_source = "/dev/kmsg, the lines of the run";
		for (size_t u = 0; u < b->n; u++)
			if (b->devs.dev[u]->info.pci_bus_id[0])
				klog_xids(ctx.klog, b->devs.dev[u]->info.pci_bus_id,
				          b->seen[u].klog_xid, sizeof(b->seen[u].klog_xid));
	} else {
		ctx.klog_why = klog_ok ? why : klog_why;
	}
	dr_check_health(&ctx, &b->health);
	dr_check_klog(&ctx, &b->health);
	b->health_run = true;
	strbuf_release(&now);
	strbuf_release(&fresh);
}

static size_t
xid_total(const struct seen *s)
{
	size_t n = 0;

	for (unsigned i = 0; i < s->nr_xid; i++)
		n += s->xid[i].count;
	return n + (s->klog_xid[0] != '\0');
}

enum verdict { V_PASS, V_FAIL, V_ERROR, V_STOPPED };
static const char *const verdict_words[] = { "pass", "fail", "error", "stopped" };

static enum verdict
dev_verdict(const struct burn_cmd *b, size_t u)
{
	const struct burn_stats *st = &b->st[u];

	if (burn_stats_fault(st) || xid_total(&b->seen[u]))
		return V_FAIL;
	if (st->state == BS_FAILED)
		return V_ERROR;
	if (st->stopped)
		return V_STOPPED;
	return V_PASS;
}

static bool
health_fatal(const struct burn_cmd *b)
{
	return b->health_run && dr_worst(&b->health) >= DR_ERROR;
}

static enum verdict
overall(const struct burn_cmd *b)
{
	bool err = false, stopped = false;

	if (health_fatal(b))
		return V_FAIL;
	for (size_t u = 0; u < b->n; u++) {
		enum verdict v = dev_verdict(b, u);

		if (v == V_FAIL)
			return V_FAIL;
		err |= v == V_ERROR;
		stopped |= v == V_STOPPED;
	}
	return err ? V_ERROR : stopped ? V_STOPPED : V_PASS;
}

static void
human_bytes(unsigned long long n, char *buf, size_t size)
{
	if (n >= 1000000000ULL)
		snprintf(buf, size, "%.1f GB", (double)n / 1e9);
	else
		snprintf(buf, size, "%.1f MB", (double)n / 1e6);
}

/* What runs the GEMM at precision p. */
static const char *
gemm_kernel(enum burn_precision p)
{
	if (burn_precision_tensor(p))
		return "cublasLtMatmul";
	return p == BURN_FP64 ? "gs_matmul_tiled_f64" : "gs_matmul_tiled";
}

static void
text_out(struct burn_cmd *b, struct strbuf *out, int sig)
{
	enum verdict all = overall(b);
	unsigned pass = 0;

	strbuf_addf(out, "gpuscope burn: %s GEMM (%s)%s, %.0f s asked, %.1f s run, %zu device%s\n",
	            burn_precision_name(b->opts.precision), gemm_kernel(b->opts.precision),
	            b->opts.memtest == BURN_MEMTEST_ONLY  ? ": memory test only"
	            : b->opts.memtest == BURN_MEMTEST_OFF ? ", no memory test"
	                                                  : " and memory test at both ends",
	            b->opts.duration, b->elapsed, b->n, b->n == 1 ? "" : "s");
	for (size_t u = 0; u < b->n; u++) {
		const struct bench_dev *d = b->devs.dev[u];
		const struct burn_stats *st = &b->st[u];
		const struct seen *s = &b->seen[u];
		enum verdict v = dev_verdict(b, u);
		char mem[32];

		pass += v == V_PASS;
		strbuf_addf(out, "\n%s  %s", d->info.id, d->info.name);
		if (d->info.uuid[0] || d->info.pci_bus_id[0])
			strbuf_addf(out, " (%s%s%s)", d->info.uuid,
			            d->info.uuid[0] && d->info.pci_bus_id[0] ? ", " : "",
			            d->info.pci_bus_id);
		strbuf_addch(out, '\n');
		if (burn_precision_tensor(b->opts.precision) &&
		    b->opts.memtest != BURN_MEMTEST_ONLY &&
		    (st->library[0] || st->precision != b->opts.precision))
			strbuf_addf(out, "  precision  %s%s%s\n",
			            burn_precision_name(st->precision), st->library[0] ? ", " : "",
			            st->library);
		if (st->n) {
			human_bytes(st->bytes, mem, sizeof(mem));
			strbuf_addf(
			        out,
			        "  gemm       %zu x %zu, %u slots (%s), %llu GEMMs in %.1f s, %.3f TFLOP/s; "
			        "%llu wrong element%s in %llu GEMM%s (tolerance %.3g)\n",
			        st->n, st->n, st->slots, mem, st->gemms, st->load_seconds,
			        st->load_seconds > 0
			                ? 2.0 * (double)st->n * (double)st->n * (double)st->n *
			                          (double)st->gemms / st->load_seconds / 1e12
			                : 0,
			        st->wrong, st->wrong == 1 ? "" : "s", st->wrong_gemms,
			        st->wrong_gemms == 1 ? "" : "s", st->tolerance);
			if (st->ref_done)
				strbuf_addf(out, "  reference  %u elements checked on the host: %s",
				            st->ref_checked, st->ref_wrong ? "WRONG" : "ok\n");
			if (st->ref_done && st->ref_wrong)
				strbuf_addf(out, " (%u of them)\n", st->ref_wrong);
		}
		if (st->mem_patterns) {
			human_bytes(st->mem_bytes, mem, sizeof(mem));
			strbuf_addf(
			        out,
			        "  memtest    %llu patterns (%u whole passes) over %s: %llu bad word%s",
			        st->mem_patterns, st->mem_passes, mem, st->mem_bad,
			        st->mem_bad == 1 ? "" : "s");
			if (st->mem_first_set) {
				strbuf_addf(out, "; first: buffer %u word %llu (%s), wanted %08x",
				            st->mem_first_chunk,
				            (unsigned long long)st->mem_first_index,
				            st->mem_first_pattern, st->mem_first_want);
				if (st->mem_first_got_read)
					strbuf_addf(out, ", read %08x", st->mem_first_got);
			}
			strbuf_addch(out, '\n');
		}
		if (s->have) {
			char why[160];

			strbuf_addf(out, "  sensors    GPU %u:", s->nvml_index);
			if (s->temp_max > 0)
				strbuf_addf(out, " max %.0f C", s->temp_max);
			if (s->power_max > 0)
				strbuf_addf(out, ", max %.0f W", s->power_max);
			if (s->clock_max > 0)
				strbuf_addf(out, ", SM clock %.0f-%.0f MHz", s->clock_min,
				            s->clock_max);
			bench_reasons_str((unsigned)s->reasons_all, why, sizeof(why));
			strbuf_addf(out, "; throttled: %s\n", why[0] ? why : "never");
		}
		if (xid_total(s)) {
			strbuf_addstr(out, "  xid        ");
			for (unsigned i = 0; i < s->nr_xid; i++)
				strbuf_addf(out, "%s%u (x%llu)", i ? ", " : "", s->xid[i].xid,
				            (unsigned long long)s->xid[i].count);
			if (s->klog_xid[0])
				strbuf_addf(out, "%skernel log: %s", s->nr_xid ? "; " : "",
				            s->klog_xid);
			strbuf_addch(out, '\n');
		}
		if (st->state == BS_LOST || st->state == BS_FAILED)
			strbuf_addf(out, "  %-10s %s\n", st->state == BS_LOST ? "LOST" : "error",
			            st->error);
		strbuf_addf(out, "  verdict    %s\n",
		            v == V_PASS      ? "PASS"
		            : v == V_FAIL    ? "FAIL"
		            : v == V_STOPPED ? "stopped before the end"
		                             : "ERROR (could not run)");
	}
	if (b->health_run) {
		size_t shown = 0;

		strbuf_addf(out, "\nhealth (doctor's checks over %zu sample%s):", b->nwin,
		            b->nwin == 1 ? "" : "s");
		for (size_t i = 0; i < b->health.nr; i++) {
			const struct dr_finding *f = &b->health.f[i];

			if (f->severity < DR_WARNING)
				continue;
			strbuf_addf(out, "\n  %s %s: %s", dr_severity_key(f->severity), f->id,
			            f->title);
			shown++;
		}
		strbuf_addstr(out, shown ? "\n" : " nothing found\n");
	} else {
		strbuf_addf(out, "\nhealth: not checked (%s)\n", b->health_why);
	}
	strbuf_addf(out, "\nverdict: %s (%u of %zu device%s passed)\n",
	            all == V_PASS    ? "PASS"
	            : all == V_FAIL  ? "FAIL"
	            : all == V_ERROR ? "ERROR (a device could not run)"
	                             : "stopped",
	            pass, b->n, b->n == 1 ? "" : "s");
	if (sig)
		strbuf_addf(out, "stopped by signal %d: the figures are what was done\n", sig);
}

static void
json_out(struct burn_cmd *b, struct strbuf *out, int sig)
{
	struct fit_jw jw;

	fit_jw_begin(&jw, out);
	fit_jw_str(&jw, "schema", BURN_SCHEMA);
	fit_jw_str(&jw, "precision", burn_precision_name(b->opts.precision));
	fit_jw_str(&jw, "memtest", burn_memtest_name(b->opts.memtest));
	fit_jw_num(&jw, "duration_seconds", b->opts.duration, 3);
	fit_jw_num(&jw, "elapsed_seconds", b->elapsed, 3);
	fit_jw_bool(&jw, "stopped", sig != 0);
	fit_jw_num(&jw, "signal", sig ? sig : NAN, 0);
	fit_jw_open(&jw, "method", '{');
	fit_jw_str(&jw, "gemm_kernel", gemm_kernel(b->opts.precision));
	fit_jw_num(&jw, "memory_fraction", BURN_MEM_FRAC, 2);
	fit_jw_num(&jw, "memory_margin_bytes", (double)BURN_MEM_MARGIN, 0);
	fit_jw_num(&jw, "max_size", BURN_MAX_N, 0);
	fit_jw_num(&jw, "max_gemm_seconds", BURN_GEMM_MAX_S, 3);
	fit_jw_str(&jw, "tolerance_rule",
	           b->opts.precision == BURN_FP16 ? "0 (binary16 results bit for bit)"
	           : b->opts.precision == BURN_TENSOR
	                   ? "tf32, bf16: n * 2^-22 * sqrt(n) / 3; fp16: 0 (bit for bit)"
	           : b->opts.precision == BURN_TF32 || b->opts.precision == BURN_BF16
	                   ? "n * 2^-22 * sqrt(n) / 3"
	                   : "n * eps * sqrt(n) / 3");
	fit_jw_num(&jw, "reference_samples", BURN_SAMPLES, 0);
	fit_jw_num(&jw, "memtest_patterns_per_pass", burn_npatterns(), 0);
	fit_jw_num(&jw, "memtest_edge_fraction", BURN_EDGE_FRAC, 2);
	fit_jw_close(&jw, '}');
	fit_jw_str(&jw, "record", b->record);
	fit_jw_num(&jw, "samples_recorded", b->record ? (double)b->recorded : NAN, 0);
	fit_jw_open(&jw, "devices", '[');
	for (size_t u = 0; u < b->n; u++) {
		const struct bench_dev *d = b->devs.dev[u];
		const struct burn_stats *st = &b->st[u];
		const struct seen *s = &b->seen[u];

		fit_jw_open(&jw, NULL, '{');
		fit_jw_str(&jw, "id", d->info.id);
		fit_jw_str(&jw, "api", d->info.api);
		fit_jw_str(&jw, "name", d->info.name);
		fit_jw_str(&jw, "vendor", d->info.vendor);
		fit_jw_str(&jw, "uuid", d->info.uuid[0] ? d->info.uuid : NULL);
		fit_jw_str(&jw, "pci_bus_id", d->info.pci_bus_id[0] ? d->info.pci_bus_id : NULL);
		fit_jw_bool(&jw, "cpu", d->info.cpu);
		fit_jw_str(&jw, "verdict", verdict_words[dev_verdict(b, u)]);
		fit_jw_str(&jw, "state", burn_state_name(st->state));
		fit_jw_str(&jw, "error", st->error[0] ? st->error : NULL);
		fit_jw_num(&jw, "seconds", st->seconds, 3);
		fit_jw_num(&jw, "memory_bytes", (double)st->bytes, 0);
		if (b->opts.memtest != BURN_MEMTEST_ONLY) {
			fit_jw_open(&jw, "gemm", '{');
			fit_jw_str(&jw, "precision", burn_precision_name(st->precision));
			fit_jw_str(&jw, "library", st->library[0] ? st->library : NULL);
			fit_jw_num(&jw, "size", st->n ? (double)st->n : NAN, 0);
			fit_jw_num(&jw, "slots", st->slots, 0);
			fit_jw_num(&jw, "gemm_seconds",
			           st->gemm_seconds > 0 ? st->gemm_seconds : NAN, 6);
			fit_jw_num(&jw, "gemms", (double)st->gemms, 0);
			fit_jw_num(&jw, "load_seconds", st->load_seconds, 3);
			fit_jw_num(&jw, "tflops",
			           st->load_seconds > 0
			                   ? 2.0 * (double)st->n * (double)st->n * (double)st->n *
			                             (double)st->gemms / st->load_seconds / 1e12
			                   : NAN,
			           6);
			fit_jw_num(&jw, "tolerance", st->n ? st->tolerance : NAN, 12);
			fit_jw_num(&jw, "wrong_elements", (double)st->wrong, 0);
			fit_jw_num(&jw, "wrong_gemms", (double)st->wrong_gemms, 0);
			fit_jw_open(&jw, "reference", '{');
			fit_jw_bool(&jw, "checked", st->ref_done);
			fit_jw_num(&jw, "sampled", st->ref_checked, 0);
			fit_jw_num(&jw, "wrong", st->ref_wrong, 0);
			fit_jw_num(&jw, "max_error_ratio",
			           st->ref_done && isfinite(st->ref_max_ratio) ? st->ref_max_ratio
			                                                       : NAN,
			           6);
			fit_jw_close(&jw, '}');
			fit_jw_close(&jw, '}');
		} else {
			fit_jw_null(&jw, "gemm");
		}
		if (b->opts.memtest != BURN_MEMTEST_OFF) {
			fit_jw_open(&jw, "memtest", '{');
			fit_jw_num(&jw, "buffers", st->mem_chunks, 0);
			fit_jw_num(&jw, "bytes", (double)st->mem_bytes, 0);
			fit_jw_num(&jw, "patterns", (double)st->mem_patterns, 0);
			fit_jw_num(&jw, "passes", st->mem_passes, 0);
			fit_jw_num(&jw, "words_checked", (double)st->mem_words, 0);
			fit_jw_num(&jw, "bad_words", (double)st->mem_bad, 0);
			if (st->mem_first_set) {
				fit_jw_open(&jw, "first_bad", '{');
				fit_jw_num(&jw, "buffer", st->mem_first_chunk, 0);
				fit_jw_num(&jw, "word", (double)st->mem_first_index, 0);
				fit_jw_str(&jw, "pattern", st->mem_first_pattern);
				fit_jw_num(&jw, "wanted", st->mem_first_want, 0);
				fit_jw_num(&jw, "read",
				           st->mem_first_got_read ? st->mem_first_got : NAN, 0);
				fit_jw_close(&jw, '}');
			} else {
				fit_jw_null(&jw, "first_bad");
			}
			fit_jw_close(&jw, '}');
		} else {
			fit_jw_null(&jw, "memtest");
		}
		if (s->have) {
			fit_jw_open(&jw, "sensors", '{');
			fit_jw_num(&jw, "gpu_index", s->nvml_index, 0);
			fit_jw_num(&jw, "temperature_max_c", s->temp_max > 0 ? s->temp_max : NAN,
			           0);
			fit_jw_num(&jw, "power_max_w", s->power_max > 0 ? s->power_max : NAN, 1);
			fit_jw_num(&jw, "sm_clock_min_mhz", s->clock_max > 0 ? s->clock_min : NAN,
			           0);
			fit_jw_num(&jw, "sm_clock_max_mhz", s->clock_max > 0 ? s->clock_max : NAN,
			           0);
			fit_jw_open(&jw, "throttle_reasons", '[');
			{
				unsigned nr;
				const struct flag_name *f = clock_reason_names(&nr);

				for (unsigned i = 0; i < nr; i++)
					if (s->reasons_all & f[i].bit)
						fit_jw_str(&jw, NULL, f[i].key);
			}
			fit_jw_close(&jw, ']');
			fit_jw_close(&jw, '}');
		} else {
			fit_jw_null(&jw, "sensors");
		}
		fit_jw_open(&jw, "xid", '[');
		for (unsigned i = 0; i < s->nr_xid; i++) {
			fit_jw_open(&jw, NULL, '{');
			fit_jw_num(&jw, "xid", s->xid[i].xid, 0);
			fit_jw_num(&jw, "count", (double)s->xid[i].count, 0);
			fit_jw_close(&jw, '}');
		}
		fit_jw_close(&jw, ']');
		fit_jw_str(&jw, "kernel_log_xid", s->klog_xid[0] ? s->klog_xid : NULL);
		fit_jw_close(&jw, '}');
	}
	fit_jw_close(&jw, ']');
	fit_jw_open(&jw, "health", '{');
	fit_jw_bool(&jw, "checked", b->health_run);
	fit_jw_str(&jw, "reason", b->health_run ? NULL : b->health_why);
	fit_jw_num(&jw, "samples", (double)b->nwin, 0);
	fit_jw_str(&jw, "worst", b->health_run ? dr_severity_key(dr_worst(&b->health)) : NULL);
	fit_jw_open(&jw, "findings", '[');
	for (size_t i = 0; b->health_run && i < b->health.nr; i++) {
		const struct dr_finding *f = &b->health.f[i];

		fit_jw_open(&jw, NULL, '{');
		fit_jw_str(&jw, "id", f->id);
		fit_jw_str(&jw, "severity", dr_severity_key(f->severity));
		fit_jw_str(&jw, "title", f->title);
		fit_jw_close(&jw, '}');
	}
	fit_jw_close(&jw, ']');
	fit_jw_close(&jw, '}');
	fit_jw_str(&jw, "verdict", verdict_words[overall(b)]);
	fit_jw_end(&jw);
}

/* Open the devices: CUDA's, then OpenCL's but those CUDA has. */
static int
open_devs(struct burn_cmd *b, bool opencl_cpu)
{
	const char **skip;
	size_t k = 0;

	bench_cuda_open(&b->devs, NULL);
	skip = xcalloc(b->devs.ndev + 1, sizeof(*skip));
	for (size_t i = 0; i < b->devs.ndev; i++)
		if (b->devs.dev[i]->info.pci_bus_id[0])
			skip[k++] = b->devs.dev[i]->info.pci_bus_id;
	bench_cl_devs_open(&b->devs, NULL, opencl_cpu, skip);
	free(skip);
	if (!b->devs.ndev) {
		cmd_error("burn: no device to burn: CUDA: %s; OpenCL: %s",
		          b->devs.cuda_reason[0] ? b->devs.cuda_reason : "no device",
		          b->devs.opencl_reason[0] ? b->devs.opencl_reason : "no device");
		return BURN_EXIT_NORUN;
	}
	return EXIT_OK;
}

/* The monitor: NVML and DRM GPUs, sampled every second; none is not an error. */
static void
open_monitor(struct burn_cmd *b)
{
	struct err err = ERR_INIT;
	struct collector *c = NULL;

	if (collector_open(b->cfg, &c, &err) < 0 || collector_scan(c, &err) < 0 ||
	    !collector_count(c)) {
		if (c)
			collector_close(c);
		return;
	}
	b->feed = feed_new_live(c, false, 1.0); /* owns c */
}

static int
parse_args(struct burn_cmd *b, int argc, char **argv, const char **ids, const char **record,
           bool *opencl_cpu)
{
	enum {
		OPT_PRECISION = 0x100,
		OPT_MEMTEST,
		OPT_NO_MEMTEST,
		OPT_RECORD,
		OPT_OPENCL_CPU,
		OPT_SIZE,
		OPT_MEMORY
	};
	static const struct option opts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "precision", required_argument, NULL, OPT_PRECISION },
		{ "memtest", no_argument, NULL, OPT_MEMTEST },
		{ "no-memtest", no_argument, NULL, OPT_NO_MEMTEST },
		{ "id", required_argument, NULL, 'i' },
		{ "record", required_argument, NULL, OPT_RECORD },
		{ "json", no_argument, NULL, 'j' },
		{ "opencl-cpu", no_argument, NULL, OPT_OPENCL_CPU },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "memory", required_argument, NULL, OPT_MEMORY },
		{ "timeout", required_argument, NULL, CMD_OPT_TIMEOUT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool memtest = false, no_memtest = false;
	unsigned long n;
	uint64_t bytes;
	int c, rc;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:i:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (cmd_parse_seconds(optarg, &b->opts.duration) < 0 ||
			    b->opts.duration < 1 || b->opts.duration > MAX_DURATION) {
				cmd_error(
				        "--duration takes a duration from 1 s to 7 d (\"60\", \"90s\", "
				        "\"10m\"), not '%s'",
				        optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_PRECISION:
			if (burn_precision_parse(optarg, &b->opts.precision) < 0) {
				cmd_error(
				        "--precision takes fp32, fp64, tf32, fp16, bf16 or tensor, "
				        "not '%s'",
				        optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_MEMTEST:
			memtest = true;
			break;
		case OPT_NO_MEMTEST:
			no_memtest = true;
			break;
		case 'i':
			*ids = optarg;
			break;
		case OPT_RECORD:
			*record = optarg;
			break;
		case 'j':
			b->json = true;
			break;
		case OPT_OPENCL_CPU:
			*opencl_cpu = true;
			break;
		case OPT_SIZE:
			if (cmd_parse_count("--size", optarg, 16, BURN_MAX_N, &n) < 0)
				return EXIT_USAGE;
			b->opts.n = n;
			break;
		case OPT_MEMORY:
			if (cmd_parse_size(optarg, &bytes) < 0 || bytes < 4096) {
				cmd_error(
				        "--memory takes a size of 4k or more (\"512M\", \"8G\"), not '%s'",
				        optarg);
				return EXIT_USAGE;
			}
			b->opts.max_bytes = bytes;
			break;
		case 'h':
			burn_usage(stdout);
			return -1; /* done: exit 0 */
		default:
			rc = cmd_common_option(c, argv, b->cfg, NULL, burn_usage);
			if (rc != CMD_NEXT_OPTION)
				return rc;
		}
	}
	rc = cmd_no_operands(argc, argv, burn_usage);
	if (rc != EXIT_OK)
		return rc;
	if (memtest && no_memtest) {
		cmd_error("--memtest and --no-memtest exclude each other");
		return EXIT_USAGE;
	}
	if (*ids && !**ids) {
		cmd_error("-i needs a device (an index, cuda:0, a UUID or a PCI bus id)");
		return EXIT_USAGE;
	}
	b->opts.memtest = memtest      ? BURN_MEMTEST_ONLY
	                  : no_memtest ? BURN_MEMTEST_OFF
	                               : BURN_MEMTEST_EDGES;
	return EXIT_OK;
}

/* Sample, draw and record until every unit has finished. */
static void
monitor(struct burn_cmd *b)
{
	double next_quiet = clock_mono() + QUIET_EVERY;

	for (;;) {
		bool all_done = true;
		int sig = cmd_stopped();

		if (sig)
			atomic_store(&b->stop, sig);
		if (b->feed) {
			struct gpu_snapshot snap;
			struct err err = ERR_INIT;

			gpu_snapshot_init(&snap);
			if (feed_next(b->feed, &snap, &err) == 0) {
				take_sample(b, &snap);
				if (b->wr && rec_writer_append(b->wr, &snap, &err) < 0) {
					cmd_error(
					        "burn: --record: %s (the recording up to here is intact; "
					        "no more is recorded)",
					        err.msg);
					rec_writer_close(b->wr, NULL);
					b->wr = NULL;
				} else if (b->wr) {
					b->recorded++;
				}
				keep_sample(b, &snap);
			} else {
				gpu_snapshot_release(&snap);
				cmd_stop_feed(NULL); /* the stopper must not wake a closed feed */
				feed_close(b->feed); /* the monitor failed: the burn goes on */
				b->feed = NULL;
			}
		} else {
			for (int i = 0; i < 10 && !cmd_stopped(); i++) {
				struct timespec ts = { 0, 100000000 };

				nanosleep(&ts, NULL);
			}
		}
		for (size_t u = 0; u < b->n; u++) {
			burn_unit_stats(&b->unit[u], &b->st[u]);
			all_done &= atomic_load(&b->unit[u].finished);
		}
		if (all_done)
			break;
		if (b->tty) {
			draw(b, false);
		} else if (clock_mono() >= next_quiet) {
			draw(b, false);
			next_quiet += QUIET_EVERY;
		}
	}
	if (b->tty && b->drawn)
		draw(b, true);
}

int
cmd_burn(int argc, char **argv, struct gs_config *cfg)
{
	struct burn_cmd b = { .cfg = cfg, .health = DR_REPORT_INIT };
	const char *ids = NULL, *record = NULL;
	struct strbuf out = STRBUF_INIT, klog = STRBUF_INIT;
	char klog_why[512] = "";
	bool opencl_cpu = false, klog_ok, existed = false;
	int rc, sig;

	burn_opts_init(&b.opts);
	atomic_init(&b.stop, 0);
	rc = parse_args(&b, argc, argv, &ids, &record, &opencl_cpu);
	if (rc != EXIT_OK)
		return rc < 0 ? EXIT_OK : rc;
	if (cfg->simulated) {
		cmd_error("burn runs on real devices, which --demo does not simulate");
		return EXIT_USAGE;
	}
	/*
	 * From here a signal stops the burn, which frees everything and gives its
	 * verdict; before any thread is made, so that every one has them blocked.
	 */
	cmd_stop_on_signals();
	cmd_stop_feed(NULL);
	rc = open_devs(&b, opencl_cpu);
	if (rc == EXIT_OK && ids)
		rc = select_devs(&b, ids);
	if (rc != EXIT_OK)
		goto out;
	b.n = b.devs.ndev;
	b.unit = xcalloc(b.n, sizeof(*b.unit));
	b.st = xcalloc(b.n, sizeof(*b.st));
	b.seen = xcalloc(b.n, sizeof(*b.seen));
	b.win = xcalloc(WINDOW_MAX, sizeof(*b.win));
	for (size_t u = 0; u < b.n; u++)
		b.seen[u].gpu = -1;
	open_monitor(&b);
	if (record) {
		struct rec_options ro;
		struct err err = ERR_INIT;

		rec_options_init(&ro);
		existed = access(record, F_OK) == 0;
		if (!b.feed) {
			cmd_error(
			        "burn: --record %s: no GPU the monitoring backends (NVML, DRM) can "
			        "read, so nothing to record; the burn goes on",
			        record);
		} else if (rec_writer_open(record, &ro, &b.wr, &err) < 0) {
			cmd_error("burn: --record: %s", err.msg);
			rc = err.code == E_USAGE ? EXIT_USAGE : BURN_EXIT_NORUN;
			goto out;
		} else {
			b.record = record;
		}
	}
	klog_ok = dr_klog_read(cfg, &klog, KLOG_MAX, klog_why, sizeof(klog_why)) == 0;
	b.tty = isatty(STDERR_FILENO);
	cmd_stop_feed(b.feed); /* a signal wakes the monitor's wait */
	b.t0 = clock_mono();
	for (size_t u = 0; u < b.n; u++) {
		burn_unit_init(&b.unit[u], b.devs.dev[u], &b.opts, &b.stop);
		burn_unit_start(&b.unit[u]);
	}
	monitor(&b);
	for (size_t u = 0; u < b.n; u++) {
		burn_unit_join(&b.unit[u]);
		burn_unit_stats(&b.unit[u], &b.st[u]);
	}
	b.elapsed = clock_mono() - b.t0;
	sig = cmd_stopped();
	cmd_stop_feed(NULL);
	run_health(&b, klog.buf ? klog.buf : "", klog_ok, klog_why);
	if (b.json)
		json_out(&b, &out, sig);
	else
		text_out(&b, &out, sig);
	if (fwrite(out.buf, 1, out.len, stdout) != out.len || fflush(stdout)) {
		cmd_error("cannot write the output");
		rc = BURN_EXIT_NORUN;
	}
	for (size_t u = 0; u < b.n; u++)
		if (b.st[u].state == BS_LOST || b.st[u].state == BS_FAILED)
			cmd_error("burn: %s (%s): %s%s", b.devs.dev[u]->info.id,
			          b.devs.dev[u]->info.name,
			          b.st[u].state == BS_LOST ? "lost: " : "", b.st[u].error);
	if (rc == EXIT_OK) {
		enum verdict v = overall(&b);

		rc = v == V_FAIL ? BURN_EXIT_FAULT : v == V_ERROR ? BURN_EXIT_NORUN : EXIT_OK;
	}
	if (sig)
		rc = 128 + sig;
out:
	feed_close(b.feed);
	if (b.wr) {
		struct err err = ERR_INIT;

		if (rec_writer_close(b.wr, &err) < 0)
			cmd_error("burn: --record: %s", err.msg);
		if (!existed && !b.recorded)
			unlink(record);
	}
	for (size_t u = 0; u < b.n; u++)
		burn_unit_release(&b.unit[u]);
	for (size_t i = 0; i < b.nwin; i++)
		gpu_snapshot_release(&b.win[i]);
	free(b.win);
	bench_devs_close(&b.devs);
	free(b.unit);
	free(b.st);
	free(b.seen);
	dr_report_release(&b.health);
	strbuf_release(&klog);
	strbuf_release(&out);
	return rc;
}
