/*
 * The web configuration file of `gpuscope serve`, in the format Prometheus's
 * exporters read (exporter-toolkit's --web.config.file):
 *
 *   tls_server_config:
 *     cert_file: /etc/gpuscope/server.crt
 *     key_file: /etc/gpuscope/server.key
 *     min_version: TLS12            # or TLS13
 *   basic_auth_users:
 *     prometheus: $2y$10$...        # bcrypt hash
 *
 * A key this file format has but gpuscope does not support (client
 * certificates, extra headers, ...) is refused with its name rather than
 * ignored: a security setting that silently does nothing is worse than an
 * error.
 */
#ifndef GPUSCOPE_WEBCONFIG_H
#define GPUSCOPE_WEBCONFIG_H

#include <stdbool.h>
#include <stddef.h>

struct err;

/* bcrypt reads the first 72 bytes of a password: a longer one is refused, never cut */
#define WEB_PASSWORD_MAX 72
/* the largest web configuration file (and certificate or key) read; a larger one is an error */
#define WEB_FILE_MAX (1 << 20)

struct web_user {
	char *name; /* owned */
	char *hash; /* owned; bcrypt ($2a$, $2b$, $2y$) */
};

struct web_config {
	char *cert_file, *key_file; /* owned paths, or NULL: no TLS */
	char *cert_pem, *key_pem;   /* owned contents, read by web_config_load */
	const char *tls_priorities; /* GnuTLS priority string, or NULL for the library's default */
	struct web_user *user;
	size_t nr_user;
	/*
	 * the bcrypt setting an unknown user's password is checked against: the
	 * highest cost among the users, so that an unknown name costs as long as
	 * the slowest known one
	 */
	char dummy[40];
	/* credentials that passed recently: user and a salted digest of the password */
	struct web_auth_cache *cache;
};

/*
 * Parse text (the file's contents; path only names it in messages) into
 * wc, which the caller releases. Returns 0, or a negative status with err
 * naming the line and what is wrong.
 */
int web_config_parse(struct web_config *wc, const char *text, const char *path, struct err *err);

/* Read and parse the file at path, then read the certificate and key it names. */
int web_config_load(struct web_config *wc, const char *path, struct err *err);

/*
 * Whether user and password match an entry of basic_auth_users (always
 * true when there is none): web_config_check_fast(), then
 * web_config_check_slow() when it says so. Checking a bcrypt hash is slow
 * by design, so credentials that passed are remembered, as a salted
 * digest, for a while. Safe to call from several threads at once.
 */
bool web_config_check(struct web_config *wc, const char *user, const char *password);

enum web_auth {
	WEB_AUTH_PASS, /* no users, or credentials that passed lately (the cache) */
	WEB_AUTH_FAIL, /* refused without bcrypt: missing, a NUL inside, too long */
	WEB_AUTH_SLOW, /* bcrypt must tell: web_config_check_slow() */
};

/*
 * The quick part of a check, for the request thread: the credentials'
 * shape and the cache of those that passed (one SHA-crypt of 1000 rounds
 * when the cache holds any, under a millisecond). password_len over
 * WEB_PASSWORD_MAX is WEB_AUTH_FAIL: bcrypt would compare its first 72
 * bytes only.
 */
enum web_auth web_config_check_fast(struct web_config *wc, const char *user, size_t user_len,
                                    const char *password, size_t password_len);

/*
 * The slow part: bcrypt against the user's hash, or against wc->dummy for
 * an unknown user (in the same time as the slowest user). A pass is
 * remembered in the cache. Call it after web_config_check_fast() said
 * WEB_AUTH_SLOW, from any thread.
 */
bool web_config_check_slow(struct web_config *wc, const char *user, const char *password);

/* Whether basic auth is on. */
static inline bool
web_config_auth(const struct web_config *wc)
{
	return wc->nr_user > 0;
}

/*
 * web_config_check() on the credentials of a Basic Authorization header as
 * libmicrohttpd decodes them: user and password with their lengths, the
 * password NULL when the header had no ':'. Refused when either is
 * missing, holds a NUL, or the user is longer than any user name can be.
 */
bool web_config_check_basic(struct web_config *wc, const char *user, size_t user_len,
                            const char *password, size_t password_len);

/*
 * Load libcrypt (libxcrypt's libcrypt.so.1, with dlopen; once, whatever the
 * thread), which every bcrypt check and hash needs. web_config_parse() and
 * web_password_hash() call it; a command may call it first for the message.
 * Returns 0, or E_NOTSUP with err naming the library and its package.
 */
int web_crypt_load(struct err *err);

/*
 * A bcrypt hash ("$2y$10$...") of password, for basic_auth_users (what
 * `gpuscope serve --hash-password` prints). Returns 0; -2 when password is
 * longer than WEB_PASSWORD_MAX bytes (bcrypt would ignore the rest, so it
 * could never be told from its first 72 bytes); -1 when libcrypt is
 * missing (web_crypt_load() says why), cannot make one, or out is too small.
 */
int web_password_hash(const char *password, char *out, size_t size);

/*
 * Failed logins per client address, for the HTTP side: each address may
 * fail WEB_FAIL_BURST times at once, then once more every WEB_FAIL_EVERY_S
 * seconds (a leaky bucket); checks under way count as failures until they
 * end. Addresses are opaque keys of up to 16 bytes; time is the caller's
 * (seconds on a monotonic clock). Thread-safe.
 */
#define WEB_FAIL_BURST   10
#define WEB_FAIL_EVERY_S 6.0
#define WEB_FAIL_ADDRS   256 /* addresses remembered; the one with the fewest failures goes */

struct web_limiter;

struct web_limiter *web_limiter_new(void);
void web_limiter_free(struct web_limiter *l);

/*
 * Before a bcrypt check for the address key: returns 0 and counts the
 * check as under way, or the seconds (1 or more) until the address may try
 * again, counting nothing.
 */
unsigned web_limiter_begin(struct web_limiter *l, const void *key, size_t key_len, double now);

/* After it: the check under way ends; failed adds a failure to the address. */
void web_limiter_end(struct web_limiter *l, const void *key, size_t key_len, bool failed,
                     double now);

void web_config_release(struct web_config *wc);

#endif
