/*
 * The web configuration file (see webconfig.h): a small, strict reader of
 * the YAML that exporter-toolkit's format uses (two levels of "key: value",
 * comments, quoted scalars), and basic auth against bcrypt hashes through
 * libxcrypt's crypt_r.
 *
 * libcrypt is loaded with dlopen on first use (web_crypt_load()), not
 * linked: only serve's basic auth needs it, and linked it is mapped into
 * every command, top included, for its whole life (docs/performance.md,
 * top's memory). crypt.h still gives the types and constants.
 */
#include "serve/webconfig.h"

#include <crypt.h>
#include <ctype.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "core/err.h"
#include "core/fileio.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#define AUTH_CACHE    8
#define AUTH_CACHE_S  300 /* seconds a credential that passed is remembered */
#define AUTH_USER_MAX 128

struct auth_entry {
	char user[AUTH_USER_MAX];
	char digest[128];
	struct timespec expires;
};

struct web_auth_cache {
	pthread_mutex_t mu; /* the request thread looks entries up, the checking threads add them */
	char setting[64]; /* "$5$rounds=1000$<salt>$": the digest of a password under this process's
	                     salt */
	struct crypt_data cd; /* for the digests, under mu */
	struct auth_entry e[AUTH_CACHE];
	unsigned next;
};

static struct web_auth_cache *cache_new(void);

#ifndef CRYPT_LIBRARY
#define CRYPT_LIBRARY "libcrypt.so.1" /* libxcrypt's; Debian: libcrypt1 */
#endif

/* libcrypt's functions, resolved once by crypt_resolve() */
static struct {
	__typeof__(crypt_r) *crypt_r;
	__typeof__(crypt_gensalt_rn) *crypt_gensalt_rn;
	char error[256]; /* why they could not be resolved; "" when they were */
} lc;
static pthread_once_t lc_once = PTHREAD_ONCE_INIT;

static void
crypt_resolve(void)
{
	void *dl = dlopen(CRYPT_LIBRARY, RTLD_NOW | RTLD_LOCAL);
	void *r = dl ? dlsym(dl, "crypt_r") : NULL;
	void *g = dl ? dlsym(dl, "crypt_gensalt_rn") : NULL;

	if (!r || !g) {
		snprintf(lc.error, sizeof(lc.error), "%s",
		         dl ? CRYPT_LIBRARY " has no crypt_r or crypt_gensalt_rn" : dlerror());
		if (dl)
			dlclose(dl);
		return;
	}
	/* storing an object pointer into a function pointer is what dlsym is for */
	memcpy(&lc.crypt_r, &r, sizeof(r));
	memcpy(&lc.crypt_gensalt_rn, &g, sizeof(g));
}

/* Whether libcrypt's functions are there, loading it the first time. */
static bool
crypt_loaded(void)
{
	pthread_once(&lc_once, crypt_resolve);
	return lc.crypt_r != NULL;
}

int
web_crypt_load(struct err *err)
{
	if (crypt_loaded())
		return 0;
	return err_set(err, E_NOTSUP, "basic auth needs libcrypt (%s): install libcrypt1",
	               lc.error);
}

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* A scalar: plain, or in single or double quotes (with \" and \\ in double quotes). */
static int
scalar(char *v, char **out)
{
	size_t n = strlen(v);

	if (n && (v[0] == '"' || v[0] == '\'')) {
		char q = v[0], *w = v;

		if (n < 2 || v[n - 1] != q)
			return -1;
		v[n - 1] = '\0';
		for (char *r = v + 1; *r; r++) {
			if (q == '"' && *r == '\\' && (r[1] == '"' || r[1] == '\\'))
				r++;
			else if (q == '\'' && *r == '\'' && r[1] == '\'')
				r++;
			*w++ = *r;
		}
		*w = '\0';
	}
	*out = v;
	return 0;
}

/* Whether p starts a key or value of line s: only there does a quote open a quoted scalar. */
static bool
scalar_start(const char *s, const char *p)
{
	while (p > s && p[-1] == ' ')
		p--;
	return p == s || p[-1] == ':';
}

/* Cut a comment: '#' at the start or after a space, outside quotes. */
static void
cut_comment(char *s)
{
	char q = 0;

	for (char *p = s; *p; p++) {
		if (q) {
			if ((q == '"' && *p == '\\' && p[1]) || (q == '\'' && *p == q && p[1] == q))
				p++; /* \" or \\ in double quotes, '' in single quotes */
			else if (*p == q)
				q = 0;
		} else if ((*p == '"' || *p == '\'') && scalar_start(s, p)) {
			q = *p;
		} else if (*p == '#' && (p == s || p[-1] == ' ')) {
			*p = '\0';
			return;
		}
	}
}

/* The cost of bcrypt hash h ("$2y$10$...": 10), or 0 when h is not one. */
static unsigned
bcrypt_cost(const char *h)
{
	unsigned cost;

	if (strlen(h) != 60 ||
	    (strncmp(h, "$2a$", 4) && strncmp(h, "$2b$", 4) && strncmp(h, "$2y$", 4)) ||
	    !isdigit((unsigned char)h[4]) || !isdigit((unsigned char)h[5]) || h[6] != '$')
		return 0;
	cost = (unsigned)(h[4] - '0') * 10 + (unsigned)(h[5] - '0');
	return cost >= 4 && cost <= 31 ? cost : 0;
}

static bool
bcrypt_hash(const char *h)
{
	return bcrypt_cost(h) > 0;
}

static int
set_tls(struct web_config *wc, const char *key, const char *val, const char *where, struct err *err)
{
	if (!strcmp(key, "cert_file")) {
		free(wc->cert_file);
		wc->cert_file = xstrdup(val);
	} else if (!strcmp(key, "key_file")) {
		free(wc->key_file);
		wc->key_file = xstrdup(val);
	} else if (!strcmp(key, "min_version")) {
		if (!strcmp(val, "TLS13"))
			wc->tls_priorities = "NORMAL:-VERS-ALL:+VERS-TLS1.3";
		else if (!strcmp(val, "TLS12"))
			wc->tls_priorities = "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2";
		else
			return err_set(err, E_PARSE,
			               "%s: min_version '%s' is not supported: use TLS12 or TLS13",
			               where, val);
	} else if (!strcmp(key, "client_auth_type")) {
		if (strcmp(val, "NoClientCert"))
			return err_set(err, E_PARSE,
			               "%s: client certificates (client_auth_type %s) are not "
			               "supported by gpuscope serve; use basic_auth_users",
			               where, val);
	} else {
		return err_set(err, E_PARSE,
		               "%s: tls_server_config.%s is not supported by gpuscope serve (it "
		               "reads cert_file, key_file, min_version)",
		               where, key);
	}
	return 0;
}

static int
add_user(struct web_config *wc, const char *name, const char *hash, const char *where,
         struct err *err)
{
	size_t alloc = wc->nr_user;

	if (!*name || strlen(name) >= AUTH_USER_MAX || strchr(name, ':'))
		return err_set(err, E_PARSE, "%s: '%s' is not a user name", where, name);
	if (!bcrypt_hash(hash))
		return err_set(err, E_PARSE,
		               "%s: the password of '%s' is not a bcrypt hash ($2y$...; make one "
		               "with: htpasswd -nBC 10 '' | tr -d ':\\n')",
		               where, name);
	for (size_t i = 0; i < wc->nr_user; i++)
		if (!strcmp(wc->user[i].name, name))
			return err_set(err, E_PARSE, "%s: user '%s' is listed twice", where, name);
	ALLOC_GROW(wc->user, wc->nr_user + 1, alloc);
	wc->user[wc->nr_user].name = xstrdup(name);
	wc->user[wc->nr_user].hash = xstrdup(hash);
	wc->nr_user++;
	return 0;
}

int
web_config_parse(struct web_config *wc, const char *text, const char *path, struct err *err)
{
	enum { SEC_NONE, SEC_TLS, SEC_HTTP, SEC_USERS } sec = SEC_NONE;
	char *copy = xstrdup(text), *line = copy, *next;
	unsigned lineno = 0;
	int rc = 0;

	memset(wc, 0, sizeof(*wc));
	for (; line && !rc; line = next) {
		char where[300], *key, *colon, *val;
		size_t indent = 0;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		snprintf(where, sizeof(where), "%s line %u", path, lineno);
		cut_comment(line);
		while (line[indent] == ' ')
			indent++;
		if (line[indent] == '\t') {
			rc = err_set(err, E_PARSE,
			             "%s: a tab in the indentation (YAML takes spaces)", where);
			break;
		}
		key = trim(line);
		if (!*key || !strcmp(key, "---"))
			continue;
		colon = strstr(key, ": ");
		if (!colon && key[strlen(key) - 1] == ':')
			colon = key + strlen(key) - 1;
		if (!colon) {
			rc = err_set(err, E_PARSE, "%s: expected 'key: value'", where);
			break;
		}
		*colon = '\0';
		val = trim(colon + 1);
		key = trim(key);
		if (scalar(key, &key) < 0 || scalar(val, &val) < 0) {
			rc = err_set(err, E_PARSE, "%s: an unterminated quote", where);
			break;
		}
		if (indent == 0) {
			bool empty_map =
			        !strcmp(val, "{}") || !strcmp(val, "null") || !strcmp(val, "~");

			if (*val && !empty_map) {
				rc = err_set(err, E_PARSE, "%s: '%s' takes indented keys below it",
				             where, key);
			} else if (!strcmp(key, "tls_server_config")) {
				sec = SEC_TLS;
			} else if (!strcmp(key, "http_server_config")) {
				sec = SEC_HTTP;
			} else if (!strcmp(key, "basic_auth_users")) {
				sec = SEC_USERS;
			} else {
				rc = err_set(
				        err, E_PARSE,
				        "%s: '%s' is not supported by gpuscope serve (it reads "
				        "tls_server_config, http_server_config and "
				        "basic_auth_users)",
				        where, key);
			}
			continue;
		}
		switch (sec) {
		case SEC_NONE:
			rc = err_set(err, E_PARSE, "%s: an indented key outside a section", where);
			break;
		case SEC_TLS:
			rc = set_tls(wc, key, val, where, err);
			break;
		case SEC_HTTP:
			/* HTTP/2 is not served: asking for it changes nothing; headers would */
			if (strcmp(key, "http2"))
				rc = err_set(
				        err, E_PARSE,
				        "%s: http_server_config.%s is not supported by gpuscope "
				        "serve",
				        where, key);
			break;
		case SEC_USERS:
			rc = add_user(wc, key, val, where, err);
			break;
		}
	}
	free(copy);
	if (!rc && (!wc->cert_file) != (!wc->key_file))
		rc = err_set(err, E_PARSE,
		             "%s: tls_server_config needs both cert_file and key_file", path);
	if (rc) {
		web_config_release(wc);
		return rc;
	}
	if (wc->nr_user) {
		unsigned cost = 4;

		/* an unknown user is checked at the highest cost, as long as the slowest user */
		for (size_t i = 0; i < wc->nr_user; i++)
			if (bcrypt_cost(wc->user[i].hash) > cost)
				cost = bcrypt_cost(wc->user[i].hash);
		snprintf(wc->dummy, sizeof(wc->dummy), "$2b$%02u$abcdefghijklmnopqrstuu", cost);
		/* every check needs libcrypt: without it, say so now rather than refuse everyone */
		if (!crypt_loaded()) {
			web_config_release(wc);
			return err_set(
			        err, E_NOTSUP,
			        "%s: basic_auth_users needs libcrypt (%s): install libcrypt1", path,
			        lc.error);
		}
		wc->cache = cache_new();
	}
	return 0;
}

/* A path of the file, relative to the directory of the configuration file as exporters do. */
static int
read_pem(const char *conf, const char *file, char **out, struct err *err)
{
	struct strbuf sb = STRBUF_INIT, p = STRBUF_INIT;
	const char *slash = strrchr(conf, '/');
	int rc;

	if (file[0] != '/' && slash)
		strbuf_addf(&p, "%.*s/%s", (int)(slash - conf), conf, file);
	else
		strbuf_addstr(&p, file);
	rc = file_read_regular(p.buf, &sb, WEB_FILE_MAX + 1);
	if (rc == 0 && (sb.len > WEB_FILE_MAX || strlen(sb.buf ? sb.buf : "") != sb.len)) {
		err_set(err, E_PARSE,
		        "%s: %s %s, so it cannot be read whole: give a PEM file (a certificate or "
		        "key is a few KiB)",
		        conf, p.buf,
		        sb.len > WEB_FILE_MAX ? "is larger than 1 MiB" : "holds a NUL byte");
		strbuf_release(&sb);
		strbuf_release(&p);
		return E_PARSE;
	}
	if (rc < 0 || !strstr(sb.buf ? sb.buf : "", "-----BEGIN ")) {
		err_set(err, rc < 0 ? E_IO : E_PARSE, "%s: %s %s", conf, p.buf,
		        rc < 0 ? "cannot be read" : "is not a PEM file");
		strbuf_release(&sb);
		strbuf_release(&p);
		return rc < 0 ? E_IO : E_PARSE;
	}
	*out = strbuf_detach(&sb, NULL);
	strbuf_release(&p);
	return 0;
}

int
web_config_load(struct web_config *wc, const char *path, struct err *err)
{
	struct strbuf sb = STRBUF_INIT;
	int rc;

	memset(wc, 0, sizeof(*wc));
	if (file_read_regular(path, &sb, WEB_FILE_MAX + 1) < 0) {
		strbuf_release(&sb);
		return err_set(err, E_IO,
		               "--web-config %s cannot be read: check the path and its "
		               "permissions",
		               path);
	}
	/* a part of it would be a different configuration: users past a cut, auth off */
	if (sb.len > WEB_FILE_MAX || strlen(sb.buf ? sb.buf : "") != sb.len) {
		bool big = sb.len > WEB_FILE_MAX;

		strbuf_release(&sb);
		return err_set(err, E_PARSE,
		               "--web-config %s %s, so it cannot be read whole: a web config is a "
		               "few lines of text; check the path",
		               path, big ? "is larger than 1 MiB" : "holds a NUL byte");
	}
	rc = web_config_parse(wc, sb.buf ? sb.buf : "", path, err);
	strbuf_release(&sb);
	if (rc)
		return rc;
	if (wc->cert_file && (read_pem(path, wc->cert_file, &wc->cert_pem, err) < 0 ||
	                      read_pem(path, wc->key_file, &wc->key_pem, err) < 0)) {
		web_config_release(wc);
		return E_IO;
	}
	return 0;
}

static bool
same(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = la != lb;

	for (size_t i = 0; i < la && i < lb; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

static struct web_auth_cache *
cache_new(void)
{
	static const char abc[] =
	        "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	struct web_auth_cache *c = xcalloc(1, sizeof(*c));
	unsigned char rnd[16] = { 0 };
	char salt[17];

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		memcpy(rnd, &ts, sizeof(ts) < sizeof(rnd) ? sizeof(ts) : sizeof(rnd));
	}
	for (size_t i = 0; i < 16; i++)
		salt[i] = abc[rnd[i] % 64];
	salt[16] = '\0';
	snprintf(c->setting, sizeof(c->setting), "$5$rounds=1000$%s$", salt);
	pthread_mutex_init(&c->mu, NULL);
	return c;
}

static bool
expired(const struct timespec *t, const struct timespec *now)
{
	return now->tv_sec > t->tv_sec || (now->tv_sec == t->tv_sec && now->tv_nsec >= t->tv_nsec);
}

/* The digest of password under the cache's salt into out (under c->mu); false if none. */
static bool
cache_digest(struct web_auth_cache *c, const char *password, char *out, size_t size)
{
	const char *d = lc.crypt_r(password, c->setting, &c->cd);

	if (!d || d[0] == '*')
		return false;
	snprintf(out, size, "%s", d);
	return true;
}

/*
 * Whether user and password passed lately. The digest is made whenever the
 * cache holds a live entry, whoever the user: what it costs does not tell
 * which users have one.
 */
static bool
cache_hit(struct web_auth_cache *c, const char *user, const char *password)
{
	struct timespec now;
	char mine[128];
	bool live = false, hit = false;

	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&c->mu);
	for (unsigned i = 0; i < AUTH_CACHE; i++)
		if (c->e[i].user[0] && !expired(&c->e[i].expires, &now))
			live = true;
	if (live && cache_digest(c, password, mine, sizeof(mine)))
		for (unsigned i = 0; i < AUTH_CACHE; i++)
			if (c->e[i].user[0] && !strcmp(c->e[i].user, user) &&
			    !expired(&c->e[i].expires, &now) && same(c->e[i].digest, mine))
				hit = true;
	pthread_mutex_unlock(&c->mu);
	explicit_bzero(mine, sizeof(mine));
	return hit;
}

static void
cache_add(struct web_auth_cache *c, const char *user, const char *password)
{
	struct timespec now;
	struct auth_entry *e;

	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&c->mu);
	e = &c->e[c->next];
	if (cache_digest(c, password, e->digest, sizeof(e->digest))) {
		snprintf(e->user, sizeof(e->user), "%s", user);
		e->expires = now;
		e->expires.tv_sec += AUTH_CACHE_S;
		c->next = (c->next + 1) % AUTH_CACHE;
	}
	pthread_mutex_unlock(&c->mu);
}

enum web_auth
web_config_check_fast(struct web_config *wc, const char *user, size_t user_len,
                      const char *password, size_t password_len)
{
	if (!wc->nr_user)
		return WEB_AUTH_PASS;
	/* a NUL inside either would make them mean something else as C strings */
	if (!user || !password || strlen(user) != user_len || strlen(password) != password_len)
		return WEB_AUTH_FAIL;
	if (user_len >= AUTH_USER_MAX)
		return WEB_AUTH_FAIL; /* longer than any name basic_auth_users takes */
	if (password_len > WEB_PASSWORD_MAX)
		return WEB_AUTH_FAIL; /* bcrypt would match its first 72 bytes: never a prefix */
	return cache_hit(wc->cache, user, password) ? WEB_AUTH_PASS : WEB_AUTH_SLOW;
}

bool
web_config_check_slow(struct web_config *wc, const char *user, const char *password)
{
	const struct web_user *u = NULL;
	struct crypt_data *cd;
	const char *h;
	bool pass;

	if (!wc->nr_user)
		return true;
	for (size_t i = 0; i < wc->nr_user; i++)
		if (!strcmp(wc->user[i].name, user))
			u = &wc->user[i];
	/* an unknown user costs the same as the slowest known one: timing does not tell them apart
	 */
	cd = xcalloc(1, sizeof(*cd));
	h = lc.crypt_r(password, u ? u->hash : wc->dummy, cd);
	pass = u && h && h[0] != '*' && same(h, u->hash);
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	if (pass)
		cache_add(wc->cache, user, password);
	return pass;
}

/* Both halves, one after the other, on the caller's thread. */
static bool
check_both(struct web_config *wc, const char *user, size_t user_len, const char *password,
           size_t password_len)
{
	switch (web_config_check_fast(wc, user, user_len, password, password_len)) {
	case WEB_AUTH_PASS:
		return true;
	case WEB_AUTH_FAIL:
		return false;
	case WEB_AUTH_SLOW:
		break;
	}
	return web_config_check_slow(wc, user, password);
}

bool
web_config_check(struct web_config *wc, const char *user, const char *password)
{
	return check_both(wc, user, user ? strlen(user) : 0, password,
	                  password ? strlen(password) : 0);
}

bool
web_config_check_basic(struct web_config *wc, const char *user, size_t user_len,
                       const char *password, size_t password_len)
{
	return user && password && check_both(wc, user, user_len, password, password_len);
}

int
web_password_hash(const char *password, char *out, size_t size)
{
	char setting[CRYPT_GENSALT_OUTPUT_SIZE];
	struct crypt_data *cd;
	const char *h;
	int rc = -1;

	if (strlen(password) > WEB_PASSWORD_MAX)
		return -2;
	if (!crypt_loaded())
		return -1;
	/* "$2b$" is what libxcrypt makes; "$2y$" is the same algorithm, as htpasswd spells it */
	if (!lc.crypt_gensalt_rn("$2b$", 10, NULL, 0, setting, sizeof(setting)))
		return -1;
	cd = xcalloc(1, sizeof(*cd));
	h = lc.crypt_r(password, setting, cd);
	if (h && bcrypt_hash(h) && strlen(h) < size) {
		snprintf(out, size, "$2y$%s", h + 4);
		rc = 0;
	}
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	return rc;
}

/* --- failed logins per address ------------------------------------------------------------ */

struct limit_entry {
	unsigned char key[16];
	size_t len;        /* 0: a free slot */
	unsigned inflight; /* checks under way */
	double score;      /* failures, less one every WEB_FAIL_EVERY_S since at */
	double at;
};

struct web_limiter {
	pthread_mutex_t mu;
	struct limit_entry e[WEB_FAIL_ADDRS];
};

struct web_limiter *
web_limiter_new(void)
{
	struct web_limiter *l = xcalloc(1, sizeof(*l));

	pthread_mutex_init(&l->mu, NULL);
	return l;
}

void
web_limiter_free(struct web_limiter *l)
{
	if (!l)
		return;
	pthread_mutex_destroy(&l->mu);
	free(l);
}

static double
decayed(const struct limit_entry *e, double now)
{
	double s = e->score - (now - e->at) / WEB_FAIL_EVERY_S;

	return s > 0 ? s : 0;
}

/* The entry of key; when there is none and make: a new one, in place of the least failed. */
static struct limit_entry *
limit_find(struct web_limiter *l, const void *key, size_t len, double now, bool make)
{
	struct limit_entry *best = NULL;
	double best_score = 0;

	if (len > sizeof(l->e[0].key))
		len = sizeof(l->e[0].key);
	for (size_t i = 0; i < WEB_FAIL_ADDRS; i++) {
		struct limit_entry *e = &l->e[i];
		double sc;

		if (e->len == len && !memcmp(e->key, key, len))
			return e;
		if (!make || e->inflight)
			continue;
		sc = e->len ? decayed(e, now) + 1 : 0; /* a free slot first */
		if (!best || sc < best_score) {
			best = e;
			best_score = sc;
		}
	}
	if (!best)
		return NULL;
	memset(best, 0, sizeof(*best));
	memcpy(best->key, key, len);
	best->len = len;
	best->at = now;
	return best;
}

unsigned
web_limiter_begin(struct web_limiter *l, const void *key, size_t key_len, double now)
{
	struct limit_entry *e;
	unsigned wait = 0;

	pthread_mutex_lock(&l->mu);
	e = limit_find(l, key, key_len, now, true);
	if (e) {
		double s = decayed(e, now), over;

		e->score = s;
		e->at = now;
		over = s + e->inflight - (WEB_FAIL_BURST - 1);
		if (over > 0) {
			double w = ceil(over * WEB_FAIL_EVERY_S);

			wait = w < 1 ? 1 : (unsigned)w;
		} else {
			e->inflight++;
		}
	}
	pthread_mutex_unlock(&l->mu);
	return wait;
}

void
web_limiter_end(struct web_limiter *l, const void *key, size_t key_len, bool failed, double now)
{
	struct limit_entry *e;

	pthread_mutex_lock(&l->mu);
	e = limit_find(l, key, key_len, now, false);
	if (e) {
		if (e->inflight)
			e->inflight--;
		e->score = decayed(e, now) + (failed ? 1 : 0);
		e->at = now;
	}
	pthread_mutex_unlock(&l->mu);
}

void
web_config_release(struct web_config *wc)
{
	free(wc->cert_file);
	free(wc->key_file);
	free(wc->cert_pem);
	free(wc->key_pem);
	for (size_t i = 0; i < wc->nr_user; i++) {
		free(wc->user[i].name);
		free(wc->user[i].hash);
	}
	free(wc->user);
	if (wc->cache) {
		pthread_mutex_destroy(&wc->cache->mu);
		explicit_bzero(wc->cache, sizeof(*wc->cache));
		free(wc->cache);
	}
	memset(wc, 0, sizeof(*wc));
}
