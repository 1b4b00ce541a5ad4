/*
 * libFuzzer target: the web configuration file of `gpuscope serve`
 * (src/serve/webconfig.c), the checks on the Basic credentials that
 * libmicrohttpd decodes, and the Accept negotiation of /metrics
 * (src/serve/negotiate.c).
 *
 * Input: the configuration text, then optionally a NUL byte and a tail;
 * without a NUL, the whole input is also the tail. The tail, up to a NUL of
 * its own, is an Accept header; the whole tail, NULs kept, split at its
 * first ':', is a user and a password as libmicrohttpd hands them over.
 *
 * web_config_parse() on the text returns 0, or a negative status with a
 * message that names the file (and a line of the text when it names one);
 * a refusal leaves nothing behind. What it accepts is what the format
 * allows: users with non-empty, unique names without ':' and a 60-character
 * bcrypt hash ($2a$, $2b$, $2y$), a certificate and a key both set or both
 * not, one of the two TLS priority strings; a second parse of the same text
 * gives the same answer; with no user, every request passes (checked
 * without bcrypt: a real hash is far too slow to check here). Leaks are
 * LeakSanitizer's to find.
 *
 * web_config_check_basic() refuses, before any bcrypt, credentials without
 * a password, with a NUL inside, or with a user longer than any name.
 *
 * metrics_negotiate() on the header gives one of the two formats, the same
 * one twice; the text format when the header names neither a wildcard nor
 * openmetrics-text; and a "*" "/" "*" range with q=0 appended changes
 * nothing (it makes nothing acceptable).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"
#include "fuzz.h"
#include "serve/negotiate.h"
#include "serve/webconfig.h"

#define PATH "fuzz.yml"

static bool
bcrypt_like(const char *h)
{
	return h && strlen(h) == 60 &&
	       (!strncmp(h, "$2a$", 4) || !strncmp(h, "$2b$", 4) || !strncmp(h, "$2y$", 4));
}

static void
check_empty(const struct web_config *wc, const char *what)
{
	FUZZ_CHECK(!wc->cert_file && !wc->key_file && !wc->cert_pem && !wc->key_pem &&
	                   !wc->tls_priorities && !wc->user && !wc->nr_user && !wc->cache,
	           "%s: something is left in the configuration", what);
}

static unsigned
count_lines(const char *text)
{
	unsigned n = 1;

	for (const char *p = text; (p = strchr(p, '\n')); p++)
		n++;
	return n;
}

static void
check_accepted(struct web_config *wc)
{
	FUZZ_CHECK((!wc->cert_file) == (!wc->key_file), "cert_file %s but key_file %s",
	           wc->cert_file ? wc->cert_file : "NULL", wc->key_file ? wc->key_file : "NULL");
	FUZZ_CHECK(!wc->cert_pem && !wc->key_pem, "parsing read a PEM file");
	FUZZ_CHECK(!wc->tls_priorities || strstr(wc->tls_priorities, "+VERS-TLS1.3"),
	           "TLS priorities '%s' without TLS 1.3", wc->tls_priorities);
	FUZZ_CHECK((wc->nr_user == 0) == (wc->user == NULL), "%zu users, user array %p",
	           wc->nr_user, (void *)wc->user);
	FUZZ_CHECK(web_config_auth(wc) == (wc->nr_user > 0), "web_config_auth() disagrees");
	for (size_t i = 0; i < wc->nr_user; i++) {
		const struct web_user *u = &wc->user[i];

		FUZZ_CHECK(u->name && u->name[0] && !strchr(u->name, ':') && strlen(u->name) < 128,
		           "user %zu: bad name '%s'", i, u->name ? u->name : "NULL");
		FUZZ_CHECK(bcrypt_like(u->hash), "user '%s': hash '%s' is not bcrypt", u->name,
		           u->hash ? u->hash : "NULL");
		for (size_t j = 0; j < i; j++)
			FUZZ_CHECK(strcmp(wc->user[j].name, u->name), "user '%s' listed twice",
			           u->name);
	}
	if (!wc->nr_user) {
		/* no users: everyone passes, and no bcrypt (nor cache) is needed for that */
		FUZZ_CHECK(web_config_check(wc, "user", "password"), "no users, yet refused");
		FUZZ_CHECK(!wc->cache, "no users, yet a cache was made");
	}
}

static void
check_parse(const char *text)
{
	struct web_config wc, again;
	struct err err = ERR_INIT, err2 = ERR_INIT;
	int rc, rc2;

	memset(&wc, 0xA5, sizeof(wc)); /* must be overwritten */
	rc = web_config_parse(&wc, text, PATH, &err);
	FUZZ_CHECK(rc <= 0, "status %d", rc);
	if (rc < 0) {
		const char *l = strstr(err.msg, PATH " line ");

		FUZZ_CHECK(err.msg[0], "refused (%d) without a message", rc);
		FUZZ_CHECK(err.code == rc, "status %d, message code %d", rc, err.code);
		FUZZ_CHECK(!strncmp(err.msg, PATH, strlen(PATH)),
		           "the message does not start with the file: %s", err.msg);
		if (l) {
			unsigned long n = strtoul(l + strlen(PATH " line "), NULL, 10);

			FUZZ_CHECK(n >= 1 && n <= count_lines(text),
			           "line %lu of a text of %u lines: %s", n, count_lines(text),
			           err.msg);
		}
		check_empty(&wc, "refused");
	} else {
		FUZZ_CHECK(!err.msg[0] && !err.code, "accepted with a message: %s", err.msg);
		check_accepted(&wc);
	}

	/* the same text again: the same answer */
	rc2 = web_config_parse(&again, text, PATH, &err2);
	FUZZ_CHECK(rc2 == rc && !strcmp(err.msg, err2.msg), "second parse: %d '%s', first: %d '%s'",
	           rc2, err2.msg, rc, err.msg);
	if (!rc) {
		FUZZ_CHECK(again.nr_user == wc.nr_user, "second parse: %zu users, first %zu",
		           again.nr_user, wc.nr_user);
		for (size_t i = 0; i < wc.nr_user; i++)
			FUZZ_CHECK(!strcmp(again.user[i].name, wc.user[i].name) &&
			                   !strcmp(again.user[i].hash, wc.user[i].hash),
			           "second parse: user %zu differs", i);
		FUZZ_CHECK(again.tls_priorities == wc.tls_priorities,
		           "second parse: other TLS priorities");
		FUZZ_CHECK((!again.cert_file && !wc.cert_file) ||
		                   (again.cert_file && wc.cert_file &&
		                    !strcmp(again.cert_file, wc.cert_file) &&
		                    !strcmp(again.key_file, wc.key_file)),
		           "second parse: other certificate or key");
	}
	web_config_release(&again);
	web_config_release(&wc);
	check_empty(&wc, "released");
	web_config_release(&wc); /* twice: harmless */
}

/* A bcrypt hash that no password matches here, and a configuration with one user. */
#define HASH "$2y$10$abcdefghijklmnopqrstuOabcdefghijklmnopqrstuvwxyz01234"

static void
check_basic(const uint8_t *tail, size_t size)
{
	struct web_config wc;
	struct err err = ERR_INIT;
	const uint8_t *colon = memchr(tail, ':', size);
	size_t ulen = colon ? (size_t)(colon - tail) : size;
	size_t plen = colon ? size - ulen - 1 : 0;
	char *user = fuzz_cstr(tail, ulen), *pass = colon ? fuzz_cstr(colon + 1, plen) : NULL;
	bool nul = memchr(tail, '\0', size) != NULL;

	FUZZ_CHECK(web_config_parse(&wc, "basic_auth_users:\n  alice: " HASH "\n", PATH, &err) == 0,
	           "the configuration of one user is refused: %s", err.msg);
	/*
	 * what is refused before bcrypt: the request thread's quick half says
	 * so (it never hands these to a checker thread), and they are refused
	 */
	if (!pass || nul || ulen >= 128 || plen > WEB_PASSWORD_MAX) {
		const char *why = !pass         ? "no password"
		                  : nul         ? "a NUL inside"
		                  : ulen >= 128 ? "a long user"
		                                : "a password bcrypt would cut";

		FUZZ_CHECK(web_config_check_fast(&wc, user, ulen, pass, plen) == WEB_AUTH_FAIL,
		           "credentials of %zu + %zu bytes (%s) would reach bcrypt", ulen, plen,
		           why);
		FUZZ_CHECK(!web_config_check_basic(&wc, user, ulen, pass, plen),
		           "credentials of %zu + %zu bytes (%s) passed", ulen, plen, why);
	}
	web_config_release(&wc);
	free(user);
	free(pass);
}

static void
check_negotiate(const char *accept)
{
	enum metrics_format f = metrics_negotiate(accept);
	size_t n = strlen(accept);
	char *more = malloc(n + 16);
	bool named = strchr(accept, '*') != NULL;

	if (!more)
		abort();
	FUZZ_CHECK(f == MF_TEXT || f == MF_OPENMETRICS, "format %d", (int)f);
	FUZZ_CHECK(metrics_negotiate(accept) == f, "a second negotiation differs");
	for (const char *p = accept; !named && (p = strchr(p, '-')); p++)
		named = p - accept >= 11 && !strncasecmp(p - 11, "openmetrics-text", 16);
	FUZZ_CHECK(named || f == MF_TEXT, "OpenMetrics for a header that does not name it");
	memcpy(more, accept, n);
	memcpy(more + n, ", */*;q=0", sizeof(", */*;q=0"));
	FUZZ_CHECK(metrics_negotiate(more) == f, "\", */*;q=0\" appended changes the format");
	free(more);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	const uint8_t *nul = memchr(data, '\0', size);
	const uint8_t *tail = nul ? nul + 1 : data;
	size_t tail_size = nul ? size - (size_t)(nul + 1 - data) : size;
	char *header = fuzz_cstr(tail, tail_size);

	check_parse(text);
	check_negotiate(header);
	check_basic(tail, tail_size);
	free(header);
	free(text);
	return 0;
}
