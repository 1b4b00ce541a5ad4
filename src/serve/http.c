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
 *
 * Two kinds of helper thread beside libmicrohttpd's: the password checkers
 * (bcrypt takes 50 to 400 ms; a request that needs it is suspended, checked
 * on one of AUTH_THREADS threads, and resumed, so that the event loop goes
 * on answering everyone else), and the watchdog, which closes connections
 * whose request has not arrived in time, however slowly it trickles, and,
 * when every connection is taken, the one that has waited longest for its
 * request, so that a client that sends its request at once gets in.
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
#include <time.h>

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
	__typeof__(MHD_suspend_connection) *suspend_connection;
	__typeof__(MHD_resume_connection) *resume_connection;
	__typeof__(MHD_get_connection_info) *get_connection_info;
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
	MHD_SYM(suspend_connection),
	MHD_SYM(resume_connection),
	MHD_SYM(get_connection_info),
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

#define AUTH_THREADS 2   /* bcrypt checks at once */
#define AUTH_QUEUE   32  /* requests waiting for a check; more are answered 503 */
#define TICK_S       0.2 /* how often the watchdog looks at the connections */
#define EVICT_WAIT_S 1.0 /* at the limit, a connection waiting this long for its request goes */

/* A request whose password is being checked (its con_cls); the connection is suspended. */
struct auth_job {
	struct MHD_Connection *c;
	char *user, *password;
	unsigned char key[16]; /* the client's address, for the limiter */
	size_t key_len;
	bool pass, closing; /* set by the checker before it resumes c */
	struct auth_job *next;
};

/* One connection, from libmicrohttpd's notice of its start to that of its end. */
struct conn {
	int fd;
	double since; /* accepted, or the last response on it sent */
	bool busy;    /* a request has arrived and is not answered yet */
	bool shut;    /* the watchdog closed it */
	struct conn *prev, *next;
};

struct http_server {
	struct MHD_Daemon *d;
	struct serve_state *st;
	struct web_config *web;
	struct MHD_Response *page;
	struct sockaddr_storage addr;
	unsigned max_connections;
	double deadline; /* seconds a request may take to arrive */

	/* the password checkers */
	struct web_limiter *limiter;
	pthread_mutex_t auth_mu;
	pthread_cond_t auth_cv;
	struct auth_job *queue, **queue_tail;
	unsigned nr_queued, nr_auth_threads;
	bool auth_closing;
	pthread_t auth_thread[AUTH_THREADS];

	/* the connections and their watchdog */
	pthread_mutex_t conn_mu;
	pthread_cond_t conn_cv;
	struct conn *conns;
	bool watchdog_stop, have_watchdog;
	pthread_t watchdog;

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
	             i == SB_FINDINGS || i == SB_LIVE
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

/* the con_cls of a request seen once (the first call only announces it) */
static int request_seen;

enum auth_result {
	AUTH_PASS,
	AUTH_FAIL,
	AUTH_LIMITED, /* too many failures from this address: 429 */
	AUTH_BUSY,    /* the checkers' queue is full, or serve is stopping: 503 */
	AUTH_PENDING, /* suspended until a checker has run bcrypt */
};

/* The client's address of c as a key of at most 16 bytes (IPv4-mapped IPv6 as IPv4). */
static size_t
client_key(struct MHD_Connection *c, unsigned char *key)
{
	const union MHD_ConnectionInfo *ci =
	        mhd.get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	if (sa && sa->sa_family == AF_INET) {
		memcpy(key, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
		return 4;
	}
	if (sa && sa->sa_family == AF_INET6) {
		const unsigned char *a =
		        ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr;
		static const unsigned char mapped[12] = {
			0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
		};

		if (!memcmp(a, mapped, 12)) {
			memcpy(key, a + 12, 4);
			return 4;
		}
		memcpy(key, a, 16);
		return 16;
	}
	key[0] = 0;
	return 1;
}

static void
free_secret(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

/*
 * Basic auth: libmicrohttpd decodes the Authorization header, webconfig.c
 * checks it. Credentials that passed lately are answered at once; others
 * go to a checker thread (AUTH_PENDING: c is suspended, *con_cls is the
 * job), unless their address has failed too often (*retry: the seconds it
 * must wait).
 */
static enum auth_result
authorize(struct http_server *h, struct MHD_Connection *c, void **con_cls, unsigned *retry)
{
	char *password = NULL, *user;
	enum auth_result res = AUTH_FAIL;
	enum web_auth fast;
	struct auth_job *j;

	if (!h->web || !web_config_auth(h->web))
		return AUTH_PASS;
	/* user NULL: no Basic credentials; password NULL: no ':' in them */
	user = mhd.basic_auth(c, &password);
	fast = user && password ? web_config_check_fast(h->web, user, strlen(user), password,
	                                                strlen(password))
	                        : WEB_AUTH_FAIL;
	if (fast != WEB_AUTH_SLOW) {
		res = fast == WEB_AUTH_PASS ? AUTH_PASS : AUTH_FAIL;
		goto out;
	}
	j = xcalloc(1, sizeof(*j));
	j->c = c;
	j->key_len = client_key(c, j->key);
	*retry = web_limiter_begin(h->limiter, j->key, j->key_len, clock_mono());
	if (*retry) {
		free(j);
		res = AUTH_LIMITED;
		goto out;
	}
	pthread_mutex_lock(&h->auth_mu);
	if (h->auth_closing || h->nr_queued >= AUTH_QUEUE) {
		pthread_mutex_unlock(&h->auth_mu);
		web_limiter_end(h->limiter, j->key, j->key_len, false, clock_mono());
		free(j);
		res = AUTH_BUSY;
		goto out;
	}
	j->user = xstrdup(user);
	j->password = xstrdup(password);
	/* suspended before a checker can see the job, which resumes it */
	mhd.suspend_connection(c);
	*h->queue_tail = j;
	h->queue_tail = &j->next;
	h->nr_queued++;
	pthread_cond_signal(&h->auth_cv);
	pthread_mutex_unlock(&h->auth_mu);
	*con_cls = j;
	res = AUTH_PENDING;
out:
	if (password) {
		explicit_bzero(password, strlen(password));
		mhd.free(password);
	}
	if (user)
		mhd.free(user);
	return res;
}

/* A checker thread: bcrypt for the suspended requests, one at a time. */
static void *
auth_main(void *arg)
{
	struct http_server *h = arg;

	for (;;) {
		struct auth_job *j;
		bool closing;

		pthread_mutex_lock(&h->auth_mu);
		while (!h->queue && !h->auth_closing)
			pthread_cond_wait(&h->auth_cv, &h->auth_mu);
		j = h->queue;
		if (!j) {
			pthread_mutex_unlock(&h->auth_mu);
			return NULL;
		}
		h->queue = j->next;
		if (!h->queue)
			h->queue_tail = &h->queue;
		h->nr_queued--;
		closing = h->auth_closing;
		pthread_mutex_unlock(&h->auth_mu);

		/* stopping: the requests still waiting are answered 503 without bcrypt */
		j->closing = closing;
		j->pass = !closing && web_config_check_slow(h->web, j->user, j->password);
		web_limiter_end(h->limiter, j->key, j->key_len, !closing && !j->pass, clock_mono());
		free_secret(j->password);
		free_secret(j->user);
		j->password = j->user = NULL;
		mhd.resume_connection(j->c);
	}
}

/* A request is done (answered or not): its job goes, its connection waits for the next one. */
static void
request_done(void *cls, struct MHD_Connection *c, void **con_cls,
             enum MHD_RequestTerminationCode toe)
{
	struct http_server *h = cls;
	const union MHD_ConnectionInfo *ci =
	        mhd.get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *cn = ci ? ci->socket_context : NULL;

	(void)toe;
	if (*con_cls && *con_cls != &request_seen) {
		struct auth_job *j = *con_cls;

		free_secret(j->password);
		free_secret(j->user);
		free(j);
	}
	*con_cls = NULL;
	if (cn) {
		pthread_mutex_lock(&h->conn_mu);
		cn->busy = false;
		cn->since = clock_mono();
		pthread_mutex_unlock(&h->conn_mu);
	}
}

/* A request has arrived whole on c: the watchdog leaves its connection alone until it is done. */
static void
request_arrived(struct http_server *h, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	        mhd.get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *cn = ci ? ci->socket_context : NULL;

	if (cn) {
		pthread_mutex_lock(&h->conn_mu);
		cn->busy = true;
		pthread_mutex_unlock(&h->conn_mu);
	}
}

/* libmicrohttpd's notices of a connection's start and end. */
static void
conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
            enum MHD_ConnectionNotificationCode toe)
{
	struct http_server *h = cls;
	struct conn *cn;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
		        mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

		cn = xcalloc(1, sizeof(*cn));
		cn->fd = ci ? ci->connect_fd : -1;
		cn->since = clock_mono();
		pthread_mutex_lock(&h->conn_mu);
		cn->next = h->conns;
		if (h->conns)
			h->conns->prev = cn;
		h->conns = cn;
		pthread_mutex_unlock(&h->conn_mu);
		*socket_context = cn;
		return;
	}
	/* closed: called before libmicrohttpd closes the socket, so the watchdog never shuts
	 * down a descriptor that another connection has taken over */
	cn = *socket_context;
	if (!cn)
		return;
	pthread_mutex_lock(&h->conn_mu);
	if (cn->prev)
		cn->prev->next = cn->next;
	else
		h->conns = cn->next;
	if (cn->next)
		cn->next->prev = cn->prev;
	pthread_mutex_unlock(&h->conn_mu);
	free(cn);
	*socket_context = NULL;
}

/* Close cn's connection: libmicrohttpd sees the end of its stream and lets it go. */
static void
conn_shut(struct conn *cn)
{
	if (cn->fd >= 0)
		shutdown(cn->fd, SHUT_RDWR);
	cn->shut = true;
}

/*
 * The watchdog: a connection whose request has not arrived within the
 * deadline (since it was accepted, or since its last response) is closed,
 * however it trickles; when every connection is taken, the one that has
 * waited longest for its request (at least EVICT_WAIT_S) goes too, so that
 * a client in the listen queue gets in.
 */
static void *
watchdog_main(void *arg)
{
	struct http_server *h = arg;
	struct timespec ts;

	pthread_mutex_lock(&h->conn_mu);
	while (!h->watchdog_stop) {
		double now = clock_mono();
		struct conn *oldest = NULL;
		unsigned live = 0;

		for (struct conn *cn = h->conns; cn; cn = cn->next) {
			if (cn->shut)
				continue;
			if (!cn->busy && now - cn->since >= h->deadline) {
				conn_shut(cn);
				continue;
			}
			live++;
			if (!cn->busy && now - cn->since >= EVICT_WAIT_S &&
			    (!oldest || cn->since < oldest->since))
				oldest = cn;
		}
		if (live >= h->max_connections && oldest)
			conn_shut(oldest);
		clock_mono_timespec(&ts, clock_mono() + TICK_S);
		pthread_cond_timedwait(&h->conn_cv, &h->conn_mu, &ts);
	}
	pthread_mutex_unlock(&h->conn_mu);
	return NULL;
}

/* Stop the helper threads; every suspended request is resumed first (libmicrohttpd needs it). */
static void
helpers_stop(struct http_server *h)
{
	if (h->have_watchdog) {
		pthread_mutex_lock(&h->conn_mu);
		h->watchdog_stop = true;
		pthread_cond_signal(&h->conn_cv);
		pthread_mutex_unlock(&h->conn_mu);
		pthread_join(h->watchdog, NULL);
		h->have_watchdog = false;
	}
	pthread_mutex_lock(&h->auth_mu);
	h->auth_closing = true;
	pthread_cond_broadcast(&h->auth_cv);
	pthread_mutex_unlock(&h->auth_mu);
	for (unsigned i = 0; i < h->nr_auth_threads; i++)
		pthread_join(h->auth_thread[i], NULL);
	h->nr_auth_threads = 0;
}

/* Start the checkers and the watchdog; false when a thread cannot be made. */
static bool
helpers_start(struct http_server *h)
{
	if (h->web && web_config_auth(h->web))
		for (unsigned i = 0; i < AUTH_THREADS; i++) {
			if (pthread_create(&h->auth_thread[i], NULL, auth_main, h) != 0)
				return false;
			h->nr_auth_threads++;
		}
	if (pthread_create(&h->watchdog, NULL, watchdog_main, h) != 0)
		return false;
	h->have_watchdog = true;
	return true;
}

static MHD_Result_t
handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
       const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct http_server *h = cls;
	enum auth_result auth;
	unsigned retry = 0;

	(void)version;
	(void)upload_data;
	if (!*con_cls)
		request_arrived(h, c);
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
	if (*con_cls != &request_seen) {
		/* resumed: a checker has run bcrypt on this request's credentials */
		const struct auth_job *j = *con_cls;

		auth = j->closing ? AUTH_BUSY : j->pass ? AUTH_PASS : AUTH_FAIL;
	} else {
		auth = authorize(h, c, con_cls, &retry);
	}
	if (auth == AUTH_PENDING)
		return MHD_YES;
	if (auth == AUTH_LIMITED) {
		char after[16];

		snprintf(after, sizeof(after), "%u", retry);
		return reply(c, MHD_HTTP_TOO_MANY_REQUESTS, "text/plain; charset=utf-8",
		             "too many failed logins from this address: try again later\n",
		             "Retry-After", after);
	}
	if (auth == AUTH_BUSY)
		return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8",
		             "busy checking passwords: try again in a second\n", "Retry-After",
		             "1");
	if (auth == AUTH_FAIL)
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
	if (!strcmp(url, "/api/v1/findings/live"))
		return reply_body(c, h->st, SB_LIVE);
	if (!strcmp(url, "/healthz"))
		return reply_health(c, h->st);
	if (!strcmp(url, "/") || !strcmp(url, "/index.html"))
		return mhd.queue_response(c, MHD_HTTP_OK, h->page);
	return reply(c, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8",
	             "not found: gpuscope serve has /, /metrics, /api/v1/status, /api/v1/findings, "
	             "/api/v1/findings/live and /healthz\n",
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

static void
server_free(struct http_server *h)
{
	web_limiter_free(h->limiter);
	pthread_cond_destroy(&h->conn_cv);
	pthread_mutex_destroy(&h->conn_mu);
	pthread_cond_destroy(&h->auth_cv);
	pthread_mutex_destroy(&h->auth_mu);
	pthread_mutex_destroy(&h->log_mu);
	free(h);
}

int
http_start(const struct http_opts *o, struct serve_state *st, struct http_server **out, char *url,
           size_t url_size, struct err *err)
{
	struct http_server *h = xcalloc(1, sizeof(*h));
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG |
	                 MHD_ALLOW_SUSPEND_RESUME;
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
	pthread_mutex_init(&h->auth_mu, NULL);
	pthread_cond_init(&h->auth_cv, NULL);
	pthread_mutex_init(&h->conn_mu, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&h->conn_cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	h->queue_tail = &h->queue;
	h->limiter = web_limiter_new();
	h->st = st;
	h->web = o->web;
	h->max_connections = o->max_connections;
	h->deadline = o->timeout;
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
		OPT(MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)request_done, h);
		OPT(MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)conn_notify, h);
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
	if (h->d && !helpers_start(h)) {
		helpers_stop(h);
		mhd.stop_daemon(h->d);
		h->d = NULL;
		err_set(err, E_IO,
		        "cannot start serve's threads: too many threads or too little memory");
		goto fail;
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
	server_free(h);
	return err->code ? err->code : E_IO;
}

void
http_stop(struct http_server *h)
{
	if (!h)
		return;
	/* no suspended request may be left when libmicrohttpd stops */
	helpers_stop(h);
	mhd.stop_daemon(h->d);
	mhd.destroy_response(h->page);
	server_free(h);
}
