/*
 * Which exposition format answers a scrape of gpuscope serve's /metrics:
 * content negotiation on the request's Accept header, as RFC 9110 section
 * 12.5.1 describes it, between the two formats serve renders.
 */
#ifndef GPUSCOPE_SERVE_NEGOTIATE_H
#define GPUSCOPE_SERVE_NEGOTIATE_H

enum metrics_format {
	MF_TEXT,        /* text/plain; version=0.0.4 */
	MF_OPENMETRICS, /* application/openmetrics-text; version=1.0.0 */
};

/*
 * The format for a request whose Accept header is accept (NULL: the
 * request has none). Every media range of the list is weighed with its
 * q-value (q=0: not acceptable), the most specific range that matches a
 * format gives that format's weight, and the heavier format wins; on a
 * tie, the one matched by the more specific range, then the text format.
 * A request that accepts neither gets the text format, as Prometheus's
 * client libraries answer. Malformed elements of the list are ignored.
 */
enum metrics_format metrics_negotiate(const char *accept);

#endif
