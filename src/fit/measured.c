/*
 * fit on measured figures (fit/measured.h): the bench store's figures of a
 * GPU put in place of its spec row's, and the line that says so.
 */
#include "fit/measured.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/benchstore.h"
#include "core/strbuf.h"
#include "fit/fit.h"

/* The tests a rate of the row is measured by, the first present winning. */
static const char *const bf16_tests[] = { "gemm.bf16", "mma.bf16", "gemm.fp16", "mma.fp16", NULL };
static const char *const fp16_tests[] = { "gemm.fp16", "mma.fp16", "gemm.bf16", "mma.bf16", NULL };
static const char *const fp8_tests[] = { "gemm.fp8", "mma.fp8", NULL };
static const char *const int8_tests[] = { "gemm.int8", "mma.int8", NULL };
static const char *const fp32_tests[] = { "fma.fp32", NULL };

/* The first of tests r has a usable figure for, its value in TFLOPS or GB/s. */
static const struct bench_figure *
pick(const struct bench_record *r, const char *const *tests, bool bw, double *v)
{
	for (; *tests; tests++) {
		const struct bench_figure *f = bench_record_find(r, *tests);

		if (!f || !isfinite(f->best) || !(f->best > 0))
			continue;
		*v = bw ? bench_figure_in(f, f->best, "B/s", 1e9)
		        : bench_figure_in(f, f->best, "FLOP/s", 1e12);
		if (isfinite(*v) && *v > 0)
			return f;
	}
	return NULL;
}

bool
fit_apply_measured(const struct gpu_spec *spec, const struct bench_record *r,
                   const struct fit_job *j, struct gpu_spec *out, struct fit_measured *m)
{
	struct {
		double *field;
		const char *const *tests;
	} rates[] = {
		{ &out->fp32, fp32_tests }, { &out->bf16, bf16_tests }, { &out->fp16, fp16_tests },
		{ &out->fp8, fp8_tests },   { &out->int8, int8_tests },
	};
	const struct bench_figure *used[sizeof(rates) / sizeof(rates[0])];
	const struct bench_figure *f;
	struct gpu_spec tags;
	double v, tag;

	memset(m, 0, sizeof(*m));
	m->bw_gbs = m->spec_bw_gbs = m->tflops = m->spec_tflops = NAN;
	if (spec) {
		*out = *spec;
	} else {
		memset(out, 0, sizeof(*out));
		out->name = "";
		out->mem_bytes = out->mem_bw_gbs = out->tdp_w = NAN;
		out->fp64 = out->fp64_tensor = out->fp32 = out->tf32 = out->fp16 = NAN;
		out->bf16 = out->fp8 = out->int8 = out->fp4 = NAN;
	}
	m->spec_bw_gbs = out->mem_bw_gbs;
	m->spec_tflops = fit_peak_tflops(out, j);
	if ((f = pick(r, (const char *const[]){ "stream.triad", NULL }, true, &v))) {
		out->mem_bw_gbs = v;
		m->bw = true;
		m->bw_gbs = v;
		m->bw_time = f->time;
	}
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if ((used[i] = pick(r, rates[i].tests, false, &v)))
			*rates[i].field = v;
	/*
	 * Which rate fit_peak_tflops() takes for j, asked of fit itself: the
	 * same row with each rate replaced by its index (measured ones) or
	 * 100 + index (the sheet's), so that its choice of precision and its
	 * fallbacks stay in one place.
	 */
	tags = *out;
	tags.fp32 = tags.bf16 = tags.fp16 = tags.fp8 = tags.int8 = NAN;
	{
		struct gpu_spec *t = &tags;
		double *tf[] = { &t->fp32, &t->bf16, &t->fp16, &t->fp8, &t->int8 };

		for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
			if (used[i])
				*tf[i] = (double)(i + 1);
			else if (isfinite(*rates[i].field) && *rates[i].field > 0)
				*tf[i] = (double)(100 + i + 1);
	}
	m->equiv = *out;
	if (m->bw)
		m->equiv.mem_bw_gbs = m->bw_gbs / FIT_STREAM_SHARE;
	{
		struct gpu_spec *e = &m->equiv;
		double *ef[] = { &e->fp32, &e->bf16, &e->fp16, &e->fp8, &e->int8 };

		for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
			if (used[i] && !strncmp(used[i]->test, "gemm.", 5))
				*ef[i] = *rates[i].field / FIT_GEMM_SHARE;
	}
	tag = fit_peak_tflops(&tags, j);
	if (isfinite(tag) && tag >= 1 && tag <= (double)(sizeof(rates) / sizeof(rates[0]))) {
		size_t i = (size_t)tag - 1;

		m->flops = true;
		m->tflops = *rates[i].field;
		m->flops_time = used[i]->time;
		snprintf(m->flops_test, sizeof(m->flops_test), "%s", used[i]->test);
	}
	return m->bw || m->flops;
}

static void
grouped(struct strbuf *sb, double v)
{
	char buf[64];
	int len, lead;

	/* "3,950": thousands grouped as the issue writes them, whatever the locale */
	if (isfinite(v) && v >= 0 && v < 10) {
		strbuf_addf(sb, "%.1f", v);
		return;
	}
	len = snprintf(buf, sizeof(buf), "%.0f", v);
	if (len <= 0 || (size_t)len >= sizeof(buf) || !isfinite(v) || v < 0) {
		strbuf_addstr(sb, "-");
		return;
	}
	lead = len % 3 ? len % 3 : 3;
	strbuf_add(sb, buf, (size_t)lead);
	for (int i = lead; i < len; i += 3) {
		strbuf_addch(sb, ',');
		strbuf_add(sb, buf + i, 3);
	}
}

static void
date(struct strbuf *sb, double t)
{
	char buf[32];
	struct tm tm;
	time_t tt = (time_t)t;

	if (isfinite(t) && t > 0 && localtime_r(&tt, &tm) &&
	    strftime(buf, sizeof(buf), "%Y-%m-%d", &tm))
		strbuf_addf(sb, " on %s", buf);
}

void
fit_measured_text(const struct fit_measured *m, struct strbuf *sb)
{
	if (m->bw) {
		strbuf_addstr(sb, "  bandwidth ");
		grouped(sb, m->bw_gbs);
		strbuf_addstr(sb, " GB/s measured by gpuscope bench");
		date(sb, m->bw_time);
		if (isfinite(m->spec_bw_gbs)) {
			strbuf_addstr(sb, " (spec ");
			grouped(sb, m->spec_bw_gbs);
			strbuf_addch(sb, ')');
		}
		strbuf_addch(sb, '\n');
	}
	if (m->flops) {
		strbuf_addstr(sb, "  compute ");
		grouped(sb, m->tflops);
		strbuf_addf(sb, " TFLOPS measured by gpuscope bench (%s)", m->flops_test);
		date(sb, m->flops_time);
		if (isfinite(m->spec_tflops)) {
			strbuf_addstr(sb, " (spec ");
			grouped(sb, m->spec_tflops);
			strbuf_addch(sb, ')');
		}
		strbuf_addch(sb, '\n');
	}
	if (m->bw || (m->flops && !strncmp(m->flops_test, "gemm.", 5))) {
		strbuf_addstr(sb, "  speeds take them as a sheet of ");
		if (m->bw) {
			grouped(sb, m->equiv.mem_bw_gbs);
			strbuf_addf(sb, " GB/s (triad reaches %.0f %% of the sheet)",
			            100 * FIT_STREAM_SHARE);
		}
		if (m->flops && !strncmp(m->flops_test, "gemm.", 5)) {
			strbuf_addstr(sb, m->bw ? " and " : "");
			grouped(sb, m->tflops / FIT_GEMM_SHARE);
			strbuf_addf(sb, " TFLOPS (cuBLASLt reaches %.0f %%)", 100 * FIT_GEMM_SHARE);
		}
		strbuf_addstr(sb, ": the engines' shares are of the sheet\n");
	}
}
