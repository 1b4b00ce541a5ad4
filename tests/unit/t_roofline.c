/*
 * The roofline SVG (front/roofline.h): a well-formed document (checked by
 * xmllint when it is there, else by counting tags), every measured point
 * drawn, a roof's knee where bandwidth meets the ceiling, labels escaped,
 * an empty panel said to be.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#include "core/strbuf.h"
#include "front/roofline.h"

static int
count(const char *s, const char *what)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static int
well_formed(const struct strbuf *sb)
{
	char path[64];
	char cmd[160];
	FILE *f;
	int rc;

	if (system("command -v python3 >/dev/null 2>&1") != 0)
		return -1;
	snprintf(path, sizeof(path), "/tmp/gpuscope-t_roofline-%d.svg", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return -1;
	fwrite(sb->buf, 1, sb->len, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
	         "python3 -c 'import sys,xml.dom.minidom as m; m.parse(sys.argv[1])' %s", path);
	rc = system(cmd);
	unlink(path);
	return rc == 0;
}

int
main(void)
{
	struct roof_panel p[2];
	struct strbuf sb;

	memset(p, 0, sizeof(p));
	snprintf(p[0].title, sizeof(p[0].title), "cuda:0 <H200> & co");
	p[0].bw_measured = 4300;
	p[0].bw_spec = 4800;
	snprintf(p[0].ceiling[0].label, sizeof(p[0].ceiling[0].label), "FP32");
	p[0].ceiling[0].measured = 64000;
	p[0].ceiling[0].spec = 67000;
	snprintf(p[0].ceiling[1].label, sizeof(p[0].ceiling[1].label), "FP64");
	p[0].ceiling[1].measured = 32000;
	p[0].ceiling[1].spec = NAN;
	p[0].nceiling = 2;
	snprintf(p[0].point[0].label, sizeof(p[0].point[0].label), "stream.triad");
	p[0].point[0].intensity = 2.0 / 12;
	p[0].point[0].gflops = 4300 * 2.0 / 12;
	snprintf(p[0].point[1].label, sizeof(p[0].point[1].label), "fma.fp32");
	p[0].point[1].intensity = 1024;
	p[0].point[1].gflops = 64000;
	p[0].npoint = 2;
	snprintf(p[1].title, sizeof(p[1].title), "opencl:0 nothing");

	strbuf_init(&sb, 0);
	roofline_svg(p, 2, &sb);
	ok(strncmp(sb.buf, "<?xml", 5) == 0 && strstr(sb.buf, "</svg>\n"), "an SVG document");
	ok(strstr(sb.buf, "cuda:0 &lt;H200&gt; &amp; co") != NULL, "the title escaped");
	is_int(count(sb.buf, "<circle"), 2, "both points drawn");
	is_int(count(sb.buf, "stroke-dasharray"), 1, "one spec roof (FP64 has no spec figure)");
	is_int(count(sb.buf, "<polyline"), 3, "three roofs: FP32 measured and spec, FP64 measured");
	ok(strstr(sb.buf, "nothing measured to draw") != NULL, "the empty panel says so");
	ok(strstr(sb.buf, "height=\"840\"") != NULL, "two panels stacked");
	switch (well_formed(&sb)) {
	case -1:
		skip_missing("python3 not found");
		break;
	default:
		ok(well_formed(&sb) == 1, "well-formed XML (python's minidom parses it)");
	}
	strbuf_reset(&sb);
	roofline_svg(NULL, 0, &sb);
	ok(strstr(sb.buf, "no device measured") != NULL, "no panel: said so");
	strbuf_release(&sb);
	return done_testing();
}
