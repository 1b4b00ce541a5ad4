/*
 * The HTTP side of `gpuscope serve`, on libmicrohttpd (loaded at run time,
 * not linked: see http_load): one event loop on a thread of its own serves
 * every request from bodies prepared in advance (the collection thread
 * makes a new set after each sample), so a request never waits for a GPU
 * and costs no more than a copy to the socket.
 *
 * Paths: /metrics (the text format, or OpenMetrics when Accept asks for
 * it), /api/v1/status, /api/v1/findings, /api/v1/findings/live, /healthz, /
 * (the web page).
 * Only GET and HEAD are served. Connections are bounded in number, in
 * memory and in time (a request has a deadline to arrive; at the limit the
 * connection that has waited longest for its request goes), and bcrypt
 * runs on threads of its own with failed logins limited per address, so a
 * slow or hostile client cannot starve others.
 */
#ifndef GPUSCOPE_SERVE_HTTP_H
#define GPUSCOPE_SERVE_HTTP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct err;
struct strbuf;
struct web_config;

/* A prepared response body, shared by the requests it answers (reference counted). */
struct http_body;

/* Make a body of sb's contents (taken over: sb is left empty) with its content type. */
struct http_body *http_body_new(struct strbuf *sb, const char *content_type);
/* Drop the caller's reference; the body goes when the last request using it is done. */
void http_body_put(struct http_body *b);

enum serve_body {
	SB_METRICS, /* text format 0.0.4 */
	SB_OPENMETRICS,
	SB_STATUS,   /* gpuscope.status/1 */
	SB_FINDINGS, /* gpuscope.doctor/1 */
	SB_LIVE,     /* gpuscope.findings/1: health and workload, every second */
	SB__COUNT,
};

/* What the HTTP side serves, filled in by the collection thread. */
struct serve_state {
	pthread_mutex_t mu;
	struct http_body *body[SB__COUNT]; /* NULL until there is one */
	double last_sample;                /* clock_mono() of the last good sample, 0: none yet */
	double stale_after;                /* seconds after which /healthz says 503 */
	char why[256];                     /* the last collection's error, "" when it went well */
};

/* Replace body i of st with b (taking over the caller's reference). */
void serve_state_set(struct serve_state *st, enum serve_body i, struct http_body *b);

struct http_opts {
	const char *listen; /* "HOST:PORT", "[V6]:PORT", ":PORT" */
	unsigned max_connections;
	/*
	 * seconds a connection may stay idle, and that a request may take to
	 * arrive whole (from the accept, or from the last response on the
	 * connection), however slowly it trickles
	 */
	unsigned timeout;
	struct web_config *web; /* TLS and basic auth, or NULL */
	const char *page;       /* the web page's HTML */
	size_t page_len;
};

struct http_server;

/*
 * Load libmicrohttpd (dlopen; path, or NULL for libmicrohttpd.so.12) and
 * resolve the functions serve uses. Returns 0, or E_NOTSUP with err saying
 * what is missing and what to install. http_start() calls it too; serve
 * calls it first to fail before it reads a GPU.
 */
int http_load(const char *path, struct err *err);

/*
 * Listen and serve st from a thread of libmicrohttpd. Returns 0 with *out
 * set and url ("http://127.0.0.1:9947/") filled, or a negative status with
 * err saying why (the address is taken, not an address, TLS missing).
 */
int http_start(const struct http_opts *o, struct serve_state *st, struct http_server **out,
               char *url, size_t url_size, struct err *err);

/* Whether listen is an address http_start() takes; returns 0, or E_USAGE with err saying why. */
int http_check_listen(const char *listen, struct err *err);

/* Stop listening and serving; requests under way are closed. */
void http_stop(struct http_server *h);

#endif
