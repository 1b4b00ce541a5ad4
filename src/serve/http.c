/*
 * gpuscope serve's HTTP side on libmicrohttpd (see http.h). A body is a
 * struct MHD_Response: libmicrohttpd counts its references, so the
 * collection thread can replace a body while requests still send the old
 * one; it goes when the last of them is done.
 *
 * libmicrohttpd is loaded with dlopen by http_load(), not linked: it
 * brings GnuTLS and p11-kit, whose constructors would otherwise run at the
 * start of every gpuscope command (docs/design.md, serve). microhttpd.h
 * still gives the types and constants; each function used is resolved
 * into the table below.
 */
#include "serve/http.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core/clock.h"
#include "core/err.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "serve/negotiate.h"
#include "serve/webconfig.h"

#if MHD_VERSION < 0x00097100
typedef int MHD_Result_t;
#else
typedef enum MHD_Result MHD_Result_t;
#endif

#define MHD_LIBRARY "libmicrohttpd.so.12"

/* libmicrohttpd's functions, resolved by http_load() */
static struct {
	void *dl;
	__typeof__(MHD_create_response_from_buffer_with_free_callback)
	        *create_response_from_buffer_with_free_callback;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_is_feature_supported) *is_feature_supported;
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_free) *free;
	/*
	 * MHD_basic_auth_get_username_password: in every release (0.9.76 adds a
	 * "3" that also gives lengths, Debian 12 has 0.9.75); typed here, as later
	 * headers mark it deprecated
	 */
	char *(*basic_auth)(struct MHD_Connection *c, char **password);
} mhd;

#define MHD_SYM(f)                                      \
	{                                               \
		"MHD_" #f, offsetof(__typeof__(mhd), f) \
	}

static const struct {
	const char *name;
	size_t off;
} mhd_syms[] = {
	MHD_SYM(create_response_from_buffer_with_free_callback),
	MHD_SYM(create_response_from_buffer),
	MHD_SYM(add_response_header),
	MHD_SYM(destroy_response),
	MHD_SYM(queue_response),
	MHD_SYM(lookup_connection_value),
	MHD_SYM(is_feature_supported),
	MHD_SYM(start_daemon),
	MHD_SYM(get_daemon_info),
	MHD_SYM(stop_daemon),
	MHD_SYM(free),
	{ "MHD_basic_auth_get_username_password", offsetof(__typeof__(mhd), basic_auth) },
};

/* Drop what http_load() found; returns status. */
static int
unload(void *dl, int status)
{
	dlclose(dl);
	memset(&mhd, 0, sizeof(mhd));
	return status;
}

int
http_load(const char *path, struct err *err)
{
	const char *name = path ? path : MHD_LIBRARY;
	void *dl;

	if (mhd.dl)
		return 0;
	dl = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		return err_set(err, E_NOTSUP, "serve needs libmicrohttpd (%s): install %s",
		               dlerror(), path ? "it, or unset GPUSCOPE_MHD" : "libmicrohttpd12");
	for (size_t i = 0; i < sizeof(mhd_syms) / sizeof(mhd_syms[0]); i++) {
		void *fn = dlsym(dl, mhd_syms[i].name);

		if (!fn)
			return unload(dl, err_set(err, E_NOTSUP,
			                          "serve needs libmicrohttpd (%s has no %s, which "
			                          "serve calls): install libmicrohttpd12",
			                          name, mhd_syms[i].name));
		/* storing an object pointer into a function pointer slot is what dlsym is for */
		memcpy((char *)&mhd + mhd_syms[i].off, &fn, sizeof(fn));
	}
	mhd.dl = dl;
	return 0;
}

struct http_server {
	struct MHD_Daemon *d;
	struct serve_state *st;
	struct web_config *web;
	struct MHD_Response *page;
	struct sockaddr_storage addr;
	/* the logger's memory, so that a storm of refusals is one line, not thousands */
	pthread_mutex_t log_mu;
	char last_log[160];
	double last_log_time;
	unsigned long repeats;
};

struct http_body *
http_body_new(struct strbuf *sb, const char *content_type)
{
	size_t len;
	char *buf = strbuf_detach(sb, &len);
	struct MHD_Response *r = mhd.create_response_from_buffer_with_free_callback(len, buf, free);

	if (!r) {
		free(buf);
		return NULL;
	}
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	mhd.add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	return (struct http_body *)r;
}

void
http_body_put(struct http_body *b)
{
	if (b)
		mhd.destroy_response((struct MHD_Response *)b);
}

void
serve_state_set(struct serve_state *st, enum serve_body i, struct http_body *b)
{
	struct http_body *old;

	pthread_mutex_lock(&st->mu);
	old = st->body[i];
	st->body[i] = b;
	pthread_mutex_unlock(&st->mu);
	http_body_put(old);
}

/* A small response made for this request only. */
static MHD_Result_t
reply(struct MHD_Connection *c, unsigned code, const char *type, const char *text,
      const char *hname, const char *hvalue)
{
	struct MHD_Response *r = mhd.create_response_from_buffer(
	        strlen(text), (void *)(uintptr_t)text, MHD_RESPMEM_MUST_COPY);
	MHD_Result_t ret;

	if (!r)
		return MHD_NO;
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	mhd.add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (hname)
		mhd.add_response_header(r, hname, hvalue);
	ret = mhd.queue_response(c, code, r);
	mhd.destroy_response(r);
	return ret;
}

static MHD_Result_t
reply_body(struct MHD_Connection *c, struct serve_state *st, enum serve_body i)
{
	MHD_Result_t ret;

	pthread_mutex_lock(&st->mu);
	if (st->body[i]) {
		/* queued under the lock: the body cannot be dropped between look-up and queue */
		ret = mhd.queue_response(c, MHD_HTTP_OK, (struct MHD_Response *)st->body[i]);
		pthread_mutex_unlock(&st->mu);
		return ret;
	}
	pthread_mutex_unlock(&st->mu);
	return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8",
	             i == SB_FINDINGS
	                     ? "doctor has not run yet (see --doctor-interval)\n"
	                     : "no sample yet: the GPUs are being read for the first time\n",
	             "Retry-After", "1");
}

static MHD_Result_t
reply_health(struct MHD_Connection *c, struct serve_state *st)
{
	char text[400];
	double last, stale, age;
	unsigned code = MHD_HTTP_OK;

	pthread_mutex_lock(&st->mu);
	last = st->last_sample;
	stale = st->stale_after;
	age = clock_mono() - last;
	if (last == 0) {
		code = MHD_HTTP_SERVICE_UNAVAILABLE;
		snprintf(text, sizeof(text), "starting: no sample yet\n");
	} else if (age > stale) {
		code = MHD_HTTP_SERVICE_UNAVAILABLE;
		snprintf(text, sizeof(text), "stale: the last good sample is %.0f s old%s%s\n", age,
		         st->why[0] ? ": " : "", st->why);
	} else {
		snprintf(text, sizeof(text), "ok\n");
	}
	pthread_mutex_unlock(&st->mu);
	return reply(c, code, "text/plain; charset=utf-8", text, NULL, NULL);
}

/* Basic auth: libmicrohttpd decodes the Authorization header, webconfig.c checks the hash. */
static bool
authorized(struct http_server *h, struct MHD_Connection *c)
{
	char *password = NULL, *user;
	bool ok = false;

	if (!h->web || !web_config_auth(h->web))
		return true;
	/* user NULL: no Basic credentials; password NULL: no ':' in them */
	user = mhd.basic_auth(c, &password);
	if (user && password)
		ok = web_config_check_basic(h->web, user, strlen(user), password, strlen(password));
	if (password) {
		explicit_bzero(password, strlen(password));
		mhd.free(password);
	}
	if (user)
		mhd.free(user);
	return ok;
}

static MHD_Result_t
handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
       const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct http_server *h = cls;

	static int request_seen;

	(void)version;
	(void)upload_data;
	/* at once, closing the connection: a body that may follow is not read */
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
		             "gpuscope serve answers GET and HEAD only\n", MHD_HTTP_HEADER_ALLOW,
		             "GET, HEAD");
	/*
	 * The first call only announces the request: a response queued then
	 * makes libmicrohttpd close the connection after it (it cannot know
	 * the request was read whole), so keep-alive needs the second call.
	 */
	if (!*con_cls) {
		*con_cls = &request_seen;
		return MHD_YES;
	}
	if (*upload_data_size) /* a GET with a body: refused, the connection closed */
		return MHD_NO;
	if (!authorized(h, c))
		return reply(c, MHD_HTTP_UNAUTHORIZED, "text/plain; charset=utf-8",
		             "unauthorized: this gpuscope serve wants basic auth\n",
		             MHD_HTTP_HEADER_WWW_AUTHENTICATE,
		             "Basic realm=\"gpuscope\", charset=\"UTF-8\"");
	if (!strcmp(url, "/metrics")) {
		const char *accept =
		        mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);

		return reply_body(c, h->st,
		                  metrics_negotiate(accept) == MF_OPENMETRICS ? SB_OPENMETRICS
		                                                              : SB_METRICS);
	}
	if (!strcmp(url, "/api/v1/status"))
		return reply_body(c, h->st, SB_STATUS);
	if (!strcmp(url, "/api/v1/findings"))
		return reply_body(c, h->st, SB_FINDINGS);
	if (!strcmp(url, "/healthz"))
		return reply_health(c, h->st);
	if (!strcmp(url, "/") || !strcmp(url, "/index.html"))
		return mhd.queue_response(c, MHD_HTTP_OK, h->page);
	return reply(c, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8",
	             "not found: gpuscope serve has /, /metrics, /api/v1/status, /api/v1/findings "
	             "and /healthz\n",
	             NULL, NULL);
}

/* libmicrohttpd's messages, one line each, a message repeated within a minute counted instead. */
static void
log_line(void *cls, const char *fmt, va_list ap)
{
	struct http_server *h = cls;
	char msg[160];
	size_t n;
	double now = clock_mono();

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '.' || msg[n - 1] == ' '))
		msg[--n] = '\0';
	pthread_mutex_lock(&h->log_mu);
	if (!strcmp(msg, h->last_log) && now - h->last_log_time < 60) {
		h->repeats++;
	} else {
		if (h->repeats)
			fprintf(stderr, "gpuscope serve: (the last message %lu more times)\n",
			        h->repeats);
		fprintf(stderr, "gpuscope serve: %s\n", msg);
		snprintf(h->last_log, sizeof(h->last_log), "%s", msg);
		h->last_log_time = now;
		h->repeats = 0;
	}
	pthread_mutex_unlock(&h->log_mu);
}

/* Parse o->listen into h->addr (port in *port); sets *flags for IPv6 or all addresses. */
static int
parse_listen(const char *s, struct http_server *h, bool *any, unsigned *flags, uint16_t *port,
             struct err *err)
{
	const char *colon = strrchr(s, ':');
	char host[256], *end;
	unsigned long p;

	if (!colon)
		return err_set(
		        err, E_USAGE,
		        "--listen '%s': give HOST:PORT (127.0.0.1:9947), [IPv6]:PORT or :PORT "
		        "for every address",
		        s);
	p = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || p > 65535)
		return err_set(err, E_USAGE, "--listen '%s': '%s' is not a port", s, colon + 1);
	*port = (uint16_t)p;
	*any = colon == s;
	if (*any) {
		*flags |= MHD_USE_DUAL_STACK;
		return 0;
	}
	if ((size_t)(colon - s) >= sizeof(host))
		return err_set(err, E_USAGE, "--listen '%s': the host is too long", s);
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	if (host[0] == '[') {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&h->addr;
		size_t l = strlen(host);

		if (host[l - 1] != ']')
			return err_set(err, E_USAGE,
			               "--listen '%s': an IPv6 address is written [::1]:PORT", s);
		host[l - 1] = '\0';
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(*port);
		if (inet_pton(AF_INET6, host + 1, &a6->sin6_addr) != 1)
			return err_set(err, E_USAGE, "--listen '%s': '%s' is not an IPv6 address",
			               s, host + 1);
		*flags |= MHD_USE_IPv6;
		return 0;
	}
	{
		struct addrinfo hints, *res = NULL;
		int rc;

		memset(&hints, 0, sizeof(hints));
		hints.ai_family = AF_UNSPEC;
		hints.ai_socktype = SOCK_STREAM;
		rc = getaddrinfo(host, NULL, &hints, &res);
		if (rc || !res)
			return err_set(err, E_USAGE, "--listen '%s': cannot resolve '%s' (%s)", s,
			               host, gai_strerror(rc));
		memcpy(&h->addr, res->ai_addr, res->ai_addrlen);
		freeaddrinfo(res);
		if (h->addr.ss_family == AF_INET6) {
			((struct sockaddr_in6 *)&h->addr)->sin6_port = htons(*port);
			*flags |= MHD_USE_IPv6;
		} else {
			((struct sockaddr_in *)&h->addr)->sin_port = htons(*port);
		}
	}
	return 0;
}

int
http_check_listen(const char *listen, struct err *err)
{
	struct http_server h;
	bool any = false;
	unsigned flags = 0;
	uint16_t port;

	memset(&h, 0, sizeof(h));
	return parse_listen(listen, &h, &any, &flags, &port, err) < 0 ? E_USAGE : 0;
}

int
http_start(const struct http_opts *o, struct serve_state *st, struct http_server **out, char *url,
           size_t url_size, struct err *err)
{
	struct http_server *h = xcalloc(1, sizeof(*h));
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG;
	bool any = false, tls = o->web && o->web->cert_pem;
	uint16_t port = 0;
	const union MHD_DaemonInfo *info;
	char host[INET6_ADDRSTRLEN + 2] = "";

	*out = NULL;
	if (http_load(NULL, err) < 0) {
		free(h);
		return err->code;
	}
	pthread_mutex_init(&h->log_mu, NULL);
	h->st = st;
	h->web = o->web;
	if (parse_listen(o->listen, h, &any, &flags, &port, err) < 0)
		goto fail;
	if (tls && mhd.is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		err_set(err, E_NOTSUP,
		        "this libmicrohttpd was built without TLS: serve without "
		        "tls_server_config, or behind a TLS proxy");
		goto fail;
	}
	if (tls)
		flags |= MHD_USE_TLS;
	h->page = mhd.create_response_from_buffer(o->page_len, (void *)(uintptr_t)o->page,
	                                          MHD_RESPMEM_PERSISTENT);
	mhd.add_response_header(h->page, MHD_HTTP_HEADER_CONTENT_TYPE, "text/html; charset=utf-8");
	mhd.add_response_header(h->page, "Content-Security-Policy",
	                        "default-src 'self'; script-src 'unsafe-inline'; style-src "
	                        "'unsafe-inline'; img-src 'self' data:");
	mhd.add_response_header(h->page, "X-Content-Type-Options", "nosniff");
	{
		struct MHD_OptionItem op[16];
		unsigned n = 0;

#define OPT(o_, v_, p_) op[n++] = (struct MHD_OptionItem){ (o_), (intptr_t)(v_), (p_) }
		OPT(MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)log_line, h);
		OPT(MHD_OPTION_CONNECTION_LIMIT, o->max_connections, NULL);
		OPT(MHD_OPTION_CONNECTION_TIMEOUT, o->timeout, NULL);
		OPT(MHD_OPTION_CONNECTION_MEMORY_LIMIT, 16384, NULL);
		OPT(MHD_OPTION_LISTEN_BACKLOG_SIZE, 128, NULL);
		if (!any)
			OPT(MHD_OPTION_SOCK_ADDR, 0, &h->addr);
		if (tls) {
			OPT(MHD_OPTION_HTTPS_MEM_CERT, 0, o->web->cert_pem);
			OPT(MHD_OPTION_HTTPS_MEM_KEY, 0, o->web->key_pem);
			if (o->web->tls_priorities)
				OPT(MHD_OPTION_HTTPS_PRIORITIES, 0,
				    (void *)(uintptr_t)o->web->tls_priorities);
		}
		OPT(MHD_OPTION_END, 0, NULL);
#undef OPT
		h->d = mhd.start_daemon(flags, port, NULL, NULL, handle, h, MHD_OPTION_ARRAY, op,
		                        MHD_OPTION_END);
	}
	if (!h->d) {
		err_set(err, E_IO,
		        "cannot listen on %s: the port may be taken (another gpuscope serve?) or the "
		        "address not this machine's; choose another with --listen",
		        o->listen);
		goto fail;
	}
	info = mhd.get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	if (info)
		port = info->port;
	if (any)
		snprintf(host, sizeof(host), "0.0.0.0");
	else if (h->addr.ss_family == AF_INET6) {
		size_t l;

		host[0] = '[';
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&h->addr)->sin6_addr, host + 1,
		          sizeof(host) - 2);
		l = strlen(host);
		host[l] = ']';
		host[l + 1] = '\0';
	} else {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&h->addr)->sin_addr, host, sizeof(host));
	}
	snprintf(url, url_size, "%s://%s:%u/", tls ? "https" : "http", host, (unsigned)port);
	*out = h;
	return 0;
fail:
	if (h->page)
		mhd.destroy_response(h->page);
	pthread_mutex_destroy(&h->log_mu);
	free(h);
	return err->code ? err->code : E_IO;
}

void
http_stop(struct http_server *h)
{
	if (!h)
		return;
	mhd.stop_daemon(h->d);
	mhd.destroy_response(h->page);
	pthread_mutex_destroy(&h->log_mu);
	free(h);
}
