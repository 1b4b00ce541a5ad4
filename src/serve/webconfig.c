/*
 * The web configuration file (see webconfig.h): a small, strict reader of
 * the YAML that exporter-toolkit's format uses (two levels of "key: value",
 * comments, quoted scalars), and basic auth against bcrypt hashes through
 * the C library's crypt_r (libxcrypt).
 */
#include "serve/webconfig.h"

#include <crypt.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "core/err.h"
#include "core/fileio.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#define WEB_FILE_MAX  (1 << 20)
#define AUTH_CACHE    8
#define AUTH_CACHE_S  300 /* seconds a credential that passed is remembered */
#define AUTH_USER_MAX 128

struct auth_entry {
	char user[AUTH_USER_MAX];
	char digest[128];
	struct timespec expires;
};

struct web_auth_cache {
	char setting[64]; /* "$5$rounds=1000$<salt>$": the digest of a password under this process's
	                     salt */
	struct crypt_data cd;
	struct auth_entry e[AUTH_CACHE];
	unsigned next;
};

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

static bool
bcrypt_hash(const char *h)
{
	return strlen(h) == 60 &&
	       (!strncmp(h, "$2a$", 4) || !strncmp(h, "$2b$", 4) || !strncmp(h, "$2y$", 4));
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
	if (rc)
		web_config_release(wc);
	return rc;
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
	rc = file_read_regular(p.buf, &sb, WEB_FILE_MAX);
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
	if (file_read_regular(path, &sb, WEB_FILE_MAX) < 0) {
		strbuf_release(&sb);
		return err_set(err, E_IO,
		               "--web-config %s cannot be read: check the path and its "
		               "permissions",
		               path);
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
	return c;
}

static bool
expired(const struct timespec *t, const struct timespec *now)
{
	return now->tv_sec > t->tv_sec || (now->tv_sec == t->tv_sec && now->tv_nsec >= t->tv_nsec);
}

bool
web_config_check(struct web_config *wc, const char *user, const char *password)
{
	const struct web_user *u = NULL;
	struct web_auth_cache *c;
	struct timespec now;
	const char *h, *digest;
	char mine[128];

	if (!wc->nr_user)
		return true;
	for (size_t i = 0; i < wc->nr_user; i++)
		if (!strcmp(wc->user[i].name, user))
			u = &wc->user[i];
	if (!wc->cache)
		wc->cache = cache_new();
	c = wc->cache;
	clock_gettime(CLOCK_MONOTONIC, &now);
	digest = crypt_r(password, c->setting, &c->cd);
	if (!digest || digest[0] == '*')
		return false;
	snprintf(mine, sizeof(mine), "%s", digest);
	for (unsigned i = 0; u && i < AUTH_CACHE; i++)
		if (c->e[i].user[0] && !strcmp(c->e[i].user, user) &&
		    !expired(&c->e[i].expires, &now) && same(c->e[i].digest, mine))
			return true;
	/* the slow check; an unknown user costs the same, so that timing does not tell users apart
	 */
	h = crypt_r(password, u ? u->hash : "$2b$10$abcdefghijklmnopqrstuu", &c->cd);
	if (!u || !h || h[0] == '*' || !same(h, u->hash))
		return false;
	snprintf(c->e[c->next].user, sizeof(c->e[c->next].user), "%s", user);
	snprintf(c->e[c->next].digest, sizeof(c->e[c->next].digest), "%s", mine);
	c->e[c->next].expires = now;
	c->e[c->next].expires.tv_sec += AUTH_CACHE_S;
	c->next = (c->next + 1) % AUTH_CACHE;
	return true;
}

bool
web_config_check_basic(struct web_config *wc, const char *user, size_t user_len,
                       const char *password, size_t password_len)
{
	/* a NUL inside either would make them mean something else as C strings */
	if (!user || !password || strlen(user) != user_len || strlen(password) != password_len)
		return false;
	if (user_len >= AUTH_USER_MAX)
		return false; /* longer than any name basic_auth_users takes */
	return web_config_check(wc, user, password);
}

int
web_password_hash(const char *password, char *out, size_t size)
{
	char setting[CRYPT_GENSALT_OUTPUT_SIZE];
	struct crypt_data *cd;
	const char *h;
	int rc = -1;

	/* "$2b$" is what libxcrypt makes; "$2y$" is the same algorithm, as htpasswd spells it */
	if (!crypt_gensalt_rn("$2b$", 10, NULL, 0, setting, sizeof(setting)))
		return -1;
	cd = xcalloc(1, sizeof(*cd));
	h = crypt_r(password, setting, cd);
	if (h && bcrypt_hash(h) && strlen(h) < size) {
		snprintf(out, size, "$2y$%s", h + 4);
		rc = 0;
	}
	free(cd);
	return rc;
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
	free(wc->cache);
	memset(wc, 0, sizeof(*wc));
}
