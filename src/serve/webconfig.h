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
 * true when there is none). Checking a bcrypt hash is slow by design, so
 * credentials that passed are remembered, as a salted digest, for a while.
 * Safe to call from one thread at a time.
 */
bool web_config_check(struct web_config *wc, const char *user, const char *password);

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
 * A bcrypt hash ("$2y$10$...") of password, for basic_auth_users (what
 * `gpuscope serve --hash-password` prints). Returns 0, or -1 when the C
 * library cannot make one.
 */
int web_password_hash(const char *password, char *out, size_t size);

void web_config_release(struct web_config *wc);

#endif
