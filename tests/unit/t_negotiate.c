/*
 * Accept negotiation for gpuscope serve's /metrics (src/serve/negotiate.c):
 * q-values, q=0, the most specific range deciding, the server's order on
 * ties, what Prometheus sends, case, whitespace, and malformed lists.
 */
#include <stdio.h>

#include "harness.h"

#include "serve/negotiate.h"

#define T  MF_TEXT
#define OM MF_OPENMETRICS

static void
neg(const char *accept, enum metrics_format want, const char *what)
{
	enum metrics_format got = metrics_negotiate(accept);

	if (!ok(got == want, "%s -> %s", what, want == OM ? "OpenMetrics" : "text"))
		diag("Accept: %s\n#   got %s", accept ? accept : "(none)",
		     got == OM ? "OpenMetrics" : "text");
}

static void
test_basics(void)
{
	neg(NULL, T, "no Accept header");
	neg("", T, "an empty Accept header");
	neg("*/*", T, "*/* (curl's default): the server's preference, text");
	neg("text/plain", T, "text/plain");
	neg("application/openmetrics-text", OM, "application/openmetrics-text");
	neg("application/openmetrics-text; version=1.0.0; charset=utf-8", OM,
	    "OpenMetrics 1.0.0 with charset utf-8");
	neg("text/plain;version=0.0.4", T, "text/plain version=0.0.4");
	neg("application/json", T, "only other types: nothing acceptable, text");
	neg("text/html, application/xhtml+xml", T, "a browser's types");
}

static void
test_qvalues(void)
{
	neg("text/plain;q=1, application/openmetrics-text;q=0.5", T,
	    "the issue's case: text q=1 over OpenMetrics q=0.5");
	neg("text/plain;q=0.5, application/openmetrics-text;q=1", OM, "OpenMetrics q=1 over text");
	neg("application/openmetrics-text;q=0.5, text/plain;q=0.501", T, "thousandths count");
	neg("application/openmetrics-text;q=0,text/plain", T, "q=0 for OpenMetrics");
	neg("application/openmetrics-text;q=0.0", T, "q=0.0 is not acceptable");
	neg("application/openmetrics-text;q=0.000", T, "q=0.000 is not acceptable");
	neg("application/openmetrics-text;q=0.001", OM, "q=0.001 is acceptable");
	neg("application/openmetrics-text;q=0, */*", T,
	    "q=0 for OpenMetrics wins over */* (more specific)");
	neg("text/plain;q=0, */*", OM, "q=0 for text: */* gives OpenMetrics");
	neg("text/plain;q=0, application/openmetrics-text;q=0", T,
	    "neither acceptable: text, not 406");
	neg("text/*;q=0.3, application/*;q=0.6", OM, "type/* ranges weigh their types");
	neg("*/*;q=0.1, application/openmetrics-text;q=0.2", OM, "a range over */*");
	neg("application/openmetrics-text;q=0.5, text/plain;q=0.5", T,
	    "a tie: the server's preference, text");
	neg("application/openmetrics-text;q=0.5, text/*;q=0.5", OM,
	    "a tie: the more specific range first");
	neg("application/openmetrics-text, application/openmetrics-text;q=0", OM,
	    "the same range twice: the heavier");
}

static void
test_parameters(void)
{
	neg("application/openmetrics-text;version=0.0.1, text/plain;q=0.5", T,
	    "OpenMetrics 0.0.1 only: not the 1.0.0 served");
	neg("application/openmetrics-text;version=1.0.0;q=0.9, application/openmetrics-text;q=0",
	    OM, "version=1.0.0 is more specific than the bare type");
	neg("application/openmetrics-text;version=\"1.0.0\"", OM, "a quoted version");
	neg("application/openmetrics-text;charset=latin1, text/plain;q=0.1", T,
	    "a charset other than utf-8 does not match");
	neg("application/openmetrics-text;charset=UTF-8", OM, "charset is case-insensitive");
	neg("text/plain;version=1.0.0, application/openmetrics-text;q=0.2", OM,
	    "text 1.0.0 is not the 0.0.4 served");
	neg("application/openmetrics-text;escaping=allow-utf-8", OM,
	    "escaping=allow-utf-8 asks for nothing serve lacks");
	neg("application/openmetrics-text;q=0.9;version=0.0.1", OM,
	    "parameters after q are extensions, ignored");
	neg("text/plain;q=0.2, application/openmetrics-text;x=\"a,b;q=0\";q=0.5", OM,
	    "a comma and q=0 inside a quoted string");
}

static void
test_prometheus(void)
{
	/* Prometheus 2.x's scrape Accept header (scrape/scrape.go, acceptHeader) */
	neg("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
	    "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
	    OM, "Prometheus 2's default");
	/* Prometheus 2 with the text format only (scrape_classic_histograms / enable_openmetrics
	 * off) */
	neg("text/plain;version=0.0.4;q=1,*/*;q=0.1", T, "Prometheus 2 without OpenMetrics");
	/* Prometheus 3's default scrape_protocols */
	neg("application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,"
	    "application/openmetrics-text;version=0.0.1;q=0.4,"
	    "text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,"
	    "text/plain;version=0.0.4;q=0.2,*/*;q=0.1",
	    OM, "Prometheus 3's default");
	neg("text/plain;version=0.0.4;q=0.6,application/openmetrics-text;version=1.0.0;q=0.5,*/*;"
	    "q=0.1",
	    T, "Prometheus 3 preferring PrometheusText0.0.4");
}

static void
test_syntax(void)
{
	neg("APPLICATION/OpenMetrics-Text", OM, "type and subtype are case-insensitive");
	neg("application/openmetrics-text;Q=1, text/plain;Q=0.5", OM, "Q is case-insensitive");
	neg("application/openmetrics-text; VERSION=1.0.0", OM, "parameter names too");
	neg("  application/openmetrics-text \t;\t q=0.8 ,  text/plain ; q=0.2  ", OM,
	    "spaces and tabs around everything");
	neg(",, ,application/openmetrics-text,,", OM, "empty list elements");
	neg("application/openmetrics-text;;q=1", OM, "an empty parameter");
	neg("text/plain;q=0.5, application/openmetrics-text;q=2", T,
	    "q=2: malformed, that element ignored");
	neg("text/plain;q=0.5, application/openmetrics-text;q=1.5", T, "q=1.5: malformed");
	neg("text/plain;q=0.5, application/openmetrics-text;q=0.0001", T,
	    "four decimals: malformed");
	neg("text/plain;q=0.5, application/openmetrics-text;q=", T, "an empty q: malformed");
	neg("text/plain;q=0.5, application/openmetrics-text;q=-1", T, "q=-1: malformed");
	neg("text/plain;q=0.5, application/openmetrics-text;q=.5", T, "q=.5: malformed");
	neg("text/plain;q=0.5, application/openmetrics-text;q=1.000", OM, "q=1.000 is well formed");
	neg("text/plain;q=0.5, application/openmetrics-text;q=1.", OM, "q=1. is well formed");
	neg("application/openmetrics-text;q=0.5;q=0", OM, "a second q is an extension");
	neg("application/openmetrics-text;q=abc, */*;q=0.1", T, "q=abc ignored");
	neg("text/plain;q=0, application/openmetrics-text garbage", T,
	    "trailing garbage: the element ignored");
	neg("application/openmetrics-text;x=\"unterminated, text/plain", T,
	    "an unterminated quoted string");
	neg("application/openmetrics-text;=1", T, "a parameter without a name");
	neg("application/openmetrics-text;noequals", T, "a parameter without a value");
	neg("openmetrics-text", T, "no '/'");
	neg("/openmetrics-text", T, "no type");
	neg("application/", T, "no subtype");
	neg("*/openmetrics-text", T, "*/subtype is not a range");
	neg("application/openmetrics-text\x01", T, "a control character");
	neg("\xff\xfe, application/openmetrics-text", OM, "bytes that are not ASCII, then a range");
	neg(";;;,,,///", T, "punctuation");
}

int
main(void)
{
	test_basics();
	test_qvalues();
	test_parameters();
	test_prometheus();
	test_syntax();
	return done_testing();
}
