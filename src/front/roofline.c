/*
 * The roofline SVG (front/roofline.h). Each panel is 760 x 420 px: a plot of
 * 600 x 320 px with decades of intensity across and of GFLOP/s up, fitted to
 * what is drawn.
 */
#include "front/roofline.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/strbuf.h"

#define PANEL_W 760
#define PANEL_H 420
#define PLOT_X  90
#define PLOT_Y  40
#define PLOT_W  600
#define PLOT_H  320

static const char *const colours[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd",
	                               "#ff7f0e", "#8c564b", "#e377c2", "#17becf" };

static bool
drawn(double v)
{
	return isfinite(v) && v > 0;
}

static void
esc(struct strbuf *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			strbuf_addstr(out, "&lt;");
			break;
		case '>':
			strbuf_addstr(out, "&gt;");
			break;
		case '&':
			strbuf_addstr(out, "&amp;");
			break;
		case '"':
			strbuf_addstr(out, "&quot;");
			break;
		default:
			if ((unsigned char)*s >= 0x20)
				strbuf_addch(out, *s);
		}
	}
}

struct axes {
	double x0, x1, y0, y1; /* log10 of the ranges */
	double oy;             /* the panel's top */
};

static double
px(const struct axes *a, double x)
{
	return PLOT_X + (log10(x) - a->x0) / (a->x1 - a->x0) * PLOT_W;
}

static double
py(const struct axes *a, double y)
{
	return a->oy + PLOT_Y + PLOT_H - (log10(y) - a->y0) / (a->y1 - a->y0) * PLOT_H;
}

static void
widen(double v, double *lo, double *hi)
{
	if (!drawn(v))
		return;
	if (v < *lo)
		*lo = v;
	if (v > *hi)
		*hi = v;
}

/* The line y = min(bw x, ceiling) across the plot; ceiling NAN: the slope alone. */
static void
roof(struct strbuf *out, const struct axes *a, double bw, double ceiling, const char *style)
{
	double xs = pow(10, a->x0), xe = pow(10, a->x1);
	double knee = drawn(ceiling) ? ceiling / bw : xe;
	double yl = pow(10, a->y0), yh = pow(10, a->y1);
	double x = xs;

	/* start where the slope enters the plot */
	if (bw * x < yl)
		x = yl / bw;
	if (x >= xe || x > knee)
		return;
	strbuf_addf(out, "<polyline fill=\"none\" %s points=\"%.1f,%.1f", style, px(a, x),
	            py(a, fmin(bw * x, yh)));
	if (knee < xe) {
		strbuf_addf(out, " %.1f,%.1f", px(a, knee), py(a, ceiling));
		strbuf_addf(out, " %.1f,%.1f", px(a, xe), py(a, ceiling));
	} else {
		double xt = fmin(xe, yh / bw);

		strbuf_addf(out, " %.1f,%.1f", px(a, xt), py(a, bw * xt));
	}
	strbuf_addstr(out, "\"/>\n");
}

static void
panel(struct strbuf *out, const struct roof_panel *p, double oy)
{
	double xlo = 1.0 / 16, xhi = 64, ylo = INFINITY, yhi = 0;
	struct axes a;
	bool any = drawn(p->bw_measured) || drawn(p->bw_spec) || p->npoint;

	for (size_t i = 0; i < p->nceiling; i++) {
		widen(p->ceiling[i].measured, &ylo, &yhi);
		widen(p->ceiling[i].spec, &ylo, &yhi);
		any = any || drawn(p->ceiling[i].measured) || drawn(p->ceiling[i].spec);
	}
	for (size_t i = 0; i < p->npoint; i++) {
		widen(p->point[i].intensity, &xlo, &xhi);
		widen(p->point[i].gflops, &ylo, &yhi);
	}
	widen(p->bw_measured * xlo, &ylo, &yhi);
	widen(p->bw_spec * xlo, &ylo, &yhi);
	strbuf_addf(out, "<g>\n<text x=\"%d\" y=\"%.0f\" font-size=\"15\" font-weight=\"bold\">",
	            PLOT_X, oy + 24);
	esc(out, p->title);
	strbuf_addstr(out, "</text>\n");
	if (!any || !isfinite(ylo)) {
		strbuf_addf(
		        out,
		        "<text x=\"%d\" y=\"%.0f\" font-size=\"13\">nothing measured to draw</text>\n</g>\n",
		        PLOT_X, oy + PLOT_Y + PLOT_H / 2);
		return;
	}
	a.x0 = floor(log10(xlo));
	a.x1 = ceil(log10(xhi));
	a.y0 = floor(log10(ylo));
	a.y1 = ceil(log10(yhi * 1.5));
	if (a.y1 <= a.y0)
		a.y1 = a.y0 + 1;
	a.oy = oy;
	strbuf_addf(
	        out,
	        "<rect x=\"%d\" y=\"%.0f\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>\n",
	        PLOT_X, oy + PLOT_Y, PLOT_W, PLOT_H);
	for (double e = a.x0; e <= a.x1; e++)
		strbuf_addf(
		        out,
		        "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#eee\"/>"
		        "<text x=\"%.1f\" y=\"%.0f\" font-size=\"11\" text-anchor=\"middle\">%g</text>\n",
		        px(&a, pow(10, e)), oy + PLOT_Y, px(&a, pow(10, e)), oy + PLOT_Y + PLOT_H,
		        px(&a, pow(10, e)), oy + PLOT_Y + PLOT_H + 16, pow(10, e));
	for (double e = a.y0; e <= a.y1; e++)
		strbuf_addf(
		        out,
		        "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>"
		        "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%g</text>\n",
		        PLOT_X, py(&a, pow(10, e)), PLOT_X + PLOT_W, py(&a, pow(10, e)), PLOT_X - 6,
		        py(&a, pow(10, e)) + 4, pow(10, e));
	strbuf_addf(out,
	            "<text x=\"%d\" y=\"%.0f\" font-size=\"12\" text-anchor=\"middle\">"
	            "operational intensity (FLOP per byte)</text>\n",
	            PLOT_X + PLOT_W / 2, oy + PLOT_Y + PLOT_H + 34);
	strbuf_addf(out,
	            "<text x=\"20\" y=\"%.0f\" font-size=\"12\" text-anchor=\"middle\" "
	            "transform=\"rotate(-90 20 %.0f)\">GFLOP/s</text>\n",
	            oy + PLOT_Y + PLOT_H / 2, oy + PLOT_Y + PLOT_H / 2);
	for (size_t i = 0; i < p->nceiling; i++) {
		const struct roof_ceiling *c = &p->ceiling[i];
		const char *col = colours[i % (sizeof(colours) / sizeof(*colours))];
		char style[96];

		if (drawn(p->bw_spec) && drawn(c->spec)) {
			snprintf(style, sizeof(style),
			         "stroke=\"%s\" stroke-dasharray=\"6 4\" opacity=\"0.6\"", col);
			roof(out, &a, p->bw_spec, c->spec, style);
		}
		if (drawn(p->bw_measured) && drawn(c->measured)) {
			snprintf(style, sizeof(style), "stroke=\"%s\" stroke-width=\"2\"", col);
			roof(out, &a, p->bw_measured, c->measured, style);
		}
		if (drawn(c->measured) || drawn(c->spec)) {
			double y = drawn(c->measured) ? c->measured : c->spec;

			strbuf_addf(out, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" fill=\"%s\">",
			            PLOT_X + PLOT_W + 4, py(&a, y) + 4, col);
			esc(out, c->label);
			strbuf_addstr(out, "</text>\n");
		}
	}
	if (p->nceiling == 0) {
		if (drawn(p->bw_spec))
			roof(out, &a, p->bw_spec, NAN, "stroke=\"#555\" stroke-dasharray=\"6 4\"");
		if (drawn(p->bw_measured))
			roof(out, &a, p->bw_measured, NAN, "stroke=\"#555\" stroke-width=\"2\"");
	}
	for (size_t i = 0; i < p->npoint; i++) {
		const struct roof_point *q = &p->point[i];

		if (!drawn(q->intensity) || !drawn(q->gflops))
			continue;
		strbuf_addf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#000\"><title>",
		            px(&a, q->intensity), py(&a, q->gflops));
		esc(out, q->label);
		strbuf_addf(out, ": %.4g GFLOP/s at %.3g FLOP/B</title></circle>\n", q->gflops,
		            q->intensity);
		strbuf_addf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">",
		            px(&a, q->intensity) + 6, py(&a, q->gflops) - 6);
		esc(out, q->label);
		strbuf_addstr(out, "</text>\n");
	}
	strbuf_addf(out,
	            "<text x=\"%d\" y=\"%.0f\" font-size=\"11\" fill=\"#555\">solid: measured; "
	            "dashed: spec sheet</text>\n</g>\n",
	            PLOT_X, oy + PANEL_H - 8);
}

void
roofline_svg(const struct roof_panel *p, size_t n, struct strbuf *out)
{
	size_t h = (n ? n : 1) * PANEL_H;

	strbuf_addf(out,
	            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%zu\" "
	            "viewBox=\"0 0 %d %zu\" font-family=\"sans-serif\">\n"
	            "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
	            PANEL_W, h, PANEL_W, h);
	if (!n)
		strbuf_addf(out,
		            "<text x=\"%d\" y=\"60\" font-size=\"14\">no device measured</text>\n",
		            PLOT_X);
	for (size_t i = 0; i < n; i++)
		panel(out, &p[i], (double)i * PANEL_H);
	strbuf_addstr(out, "</svg>\n");
}
