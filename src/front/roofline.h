/*
 * A roofline picture as SVG (gpuscope bench --plot FILE.svg): attainable
 * GFLOP/s against operational intensity (FLOP per byte of memory traffic),
 * both axes logarithmic; for each device the measured points under the
 * measured roofs (solid: the bandwidth line and each compute ceiling) and
 * the spec sheet's (dashed), so a person sees at a glance how far each
 * figure sits under what the card should do. Nothing here measures.
 */
#ifndef GPUSCOPE_FRONT_ROOFLINE_H
#define GPUSCOPE_FRONT_ROOFLINE_H

#include <stddef.h>

struct strbuf;

struct roof_point {
	char label[48];   /* "stream.triad" */
	double intensity; /* FLOP per byte */
	double gflops;
};

/* A compute ceiling, GFLOP/s; NAN or 0: not drawn. */
struct roof_ceiling {
	char label[32]; /* "FP32" */
	double measured, spec;
};

struct roof_panel {
	char title[160];    /* "cuda:0 NVIDIA H200" */
	double bw_measured; /* GB/s: the roof's slope; NAN or 0: not drawn */
	double bw_spec;     /* GB/s */
	struct roof_ceiling ceiling[12];
	size_t nceiling;
	struct roof_point point[24];
	size_t npoint;
};

/*
 * One SVG document with a panel per device, stacked; labels are escaped.
 * A panel without anything to draw says so in its place.
 */
void roofline_svg(const struct roof_panel *panel, size_t npanel, struct strbuf *out);

#endif
