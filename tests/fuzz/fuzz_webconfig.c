/*
 * libFuzzer target: the web configuration file of `gpuscope serve`
 * (src/serve/webconfig.c) and the Authorization header it checks.
 *
 * Input: the configuration text, then optionally a NUL byte and the value
 * of an Authorization header ("Basic dXNlcjpwYXNz"); without a NUL, the
 * whole input is also tried as a header.
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
 * web_basic_auth_decode() on the header, into buffers of exactly the size
 * given (AddressSanitizer sees a write past them): on success user and
 * password are NUL-terminated inside them and the user has no ':'; smaller
 * buffers give the same answer when it fits, else a refusal.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "fuzz.h"
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

/* A heap buffer of exactly size bytes (at least 1), filled with junk. */
static char *
junk_buf(size_t size)
{
	char *b = malloc(size ? size : 1);

	if (!b)
		abort();
	memset(b, 0xA5, size ? size : 1);
	return b;
}

static int
decode(const char *header, char **user, size_t user_size, char **pass, size_t pass_size)
{
	int rc;

	*user = junk_buf(user_size);
	*pass = junk_buf(pass_size);
	rc = web_basic_auth_decode(header, *user, user_size, *pass, pass_size);
	FUZZ_CHECK(rc == 0 || rc == -1, "status %d", rc);
	if (!rc) {
		FUZZ_CHECK(user_size && memchr(*user, '\0', user_size),
		           "user not NUL-terminated in its %zu bytes", user_size);
		FUZZ_CHECK(pass_size && memchr(*pass, '\0', pass_size),
		           "password not NUL-terminated in its %zu bytes", pass_size);
		FUZZ_CHECK(!strchr(*user, ':'), "user '%s' holds a ':'", *user);
	}
	return rc;
}

static void
check_header(const char *header, size_t small_user, size_t small_pass)
{
	char *user, *pass, *su, *sp;
	int rc = decode(header, &user, 600, &pass, 600), src;

	if (!rc) {
		FUZZ_CHECK(!strncasecmp(header, "Basic ", 6), "decoded a header without 'Basic '");
		FUZZ_CHECK(strlen(user) + 1 + strlen(pass) < 512,
		           "decoded %zu + %zu bytes, past the decoder's buffer", strlen(user),
		           strlen(pass));
	}
	src = decode(header, &su, small_user, &sp, small_pass);
	if (rc || strlen(user) >= small_user || strlen(pass) >= small_pass) {
		FUZZ_CHECK(src == -1, "decoded with %zu/%zu-byte buffers, but not with 600",
		           small_user, small_pass);
	} else {
		FUZZ_CHECK(src == 0 && !strcmp(su, user) && !strcmp(sp, pass),
		           "with %zu/%zu-byte buffers: %d '%s' '%s', with 600: '%s' '%s'",
		           small_user, small_pass, src, src ? "" : su, src ? "" : sp, user, pass);
	}
	free(user);
	free(pass);
	free(su);
	free(sp);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstr(data, size);
	const uint8_t *nul = memchr(data, '\0', size);
	char *header;

	check_parse(text);
	if (nul)
		header = fuzz_cstr(nul + 1, size - (size_t)(nul + 1 - data));
	else
		header = fuzz_cstr(data, size);
	check_header(header, size % 20, (size / 20) % 40);
	free(header);
	free(text);
	return 0;
}
