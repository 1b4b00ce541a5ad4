/*
 * The web configuration file of `gpuscope serve` (exporter-toolkit's
 * format): what parses, what is refused and with which message, paths of
 * the certificate and key relative to the file, bcrypt hashes and the cache
 * of credentials that passed, and the checks on the credentials that
 * libmicrohttpd decodes from a Basic Authorization header.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#include "core/err.h"
#include "serve/webconfig.h"

/* A well-formed bcrypt hash (60 characters) for the parser; no password matches it here. */
#define HASH  "$2y$10$abcdefghijklmnopqrstuOabcdefghijklmnopqrstuvwxyz01234"
#define HASHB "$2b$10$abcdefghijklmnopqrstuOabcdefghijklmnopqrstuvwxyz01234"

static char tmp_dir[] = "/tmp/gpuscope-t-webconfig.XXXXXX";
static char empty_file[600]; /* made by mkstemp in tmp_dir, "" until then */
static bool tmp_made;

static int
parse(struct web_config *wc, const char *text, struct err *err)
{
	err_clear(err);
	return web_config_parse(wc, text, "web.yml", err);
}

/* text is accepted; wc keeps what it parsed (the caller releases it) */
static bool
accepts(struct web_config *wc, const char *text, const char *what)
{
	struct err err = ERR_INIT;
	int rc = parse(wc, text, &err);

	if (!ok(rc == 0, "accepted: %s", what))
		diag("rc %d: %s", rc, err.msg);
	return rc == 0;
}

/* text is refused with a message that holds each of the strings in want (NULL-terminated) */
static void
refuses_(const char *text, const char *what, const char *const *want)
{
	struct web_config wc;
	struct err err = ERR_INIT;
	int rc = parse(&wc, text, &err);
	bool all = rc < 0 && err.msg[0];

	for (const char *const *w = want; *w; w++)
		if (!strstr(err.msg, *w))
			all = false;
	if (!ok(all, "refused: %s", what))
		diag("rc %d, message '%s'", rc, err.msg);
	ok(!wc.cert_file && !wc.key_file && !wc.user && !wc.nr_user && !wc.cache,
	   "  nothing kept after the refusal");
	web_config_release(&wc);
}

#define refuses(text, what, ...)                                   \
	do {                                                       \
		const char *const want_[] = { __VA_ARGS__, NULL }; \
		refuses_(text, what, want_);                       \
	} while (0)

static void
test_parse_valid(void)
{
	struct web_config wc;

	if (accepts(&wc, "", "an empty file")) {
		ok(!wc.cert_file && !wc.key_file && !wc.nr_user && !wc.tls_priorities,
		   "  empty: no TLS, no users");
		ok(!web_config_auth(&wc), "  empty: basic auth off");
		ok(web_config_check(&wc, "anyone", "anything"), "  empty: every request passes");
		web_config_release(&wc);
	}
	if (accepts(&wc, "# only a comment\n\n---\n   \n", "comments, blank lines and ---"))
		web_config_release(&wc);
	if (accepts(&wc, "basic_auth_users: {}\n", "basic_auth_users: {}")) {
		ok(!web_config_auth(&wc), "  {}: no users, auth off");
		web_config_release(&wc);
	}
	if (accepts(&wc, "tls_server_config: ~\nbasic_auth_users: null\n", "null and ~ sections"))
		web_config_release(&wc);

	if (accepts(&wc,
	            "---\n"
	            "# exporter-toolkit web config\n"
	            "tls_server_config:\n"
	            "  cert_file: \"/etc/gpuscope/server.crt\"   # the certificate\n"
	            "  key_file: '/etc/gpuscope/server.key'\n"
	            "  min_version: TLS13\n"
	            "  client_auth_type: NoClientCert\n"
	            "http_server_config:\n"
	            "  http2: true\n"
	            "basic_auth_users:\n"
	            "  prometheus: " HASH "\n"
	            "  'grafana': \"" HASHB "\"  # quoted\n"
	            "  \"o'brien\": '" HASH "'\r\n",
	            "a full file: quotes, comments, CRLF")) {
		is_str(wc.cert_file, "/etc/gpuscope/server.crt", "  cert_file (double quotes)");
		is_str(wc.key_file, "/etc/gpuscope/server.key", "  key_file (single quotes)");
		ok(wc.tls_priorities && strstr(wc.tls_priorities, "+VERS-TLS1.3") &&
		           !strstr(wc.tls_priorities, "TLS1.2"),
		   "  min_version TLS13: TLS 1.3 only");
		is_int(wc.nr_user, 3, "  three users");
		if (wc.nr_user == 3) {
			is_str(wc.user[0].name, "prometheus", "  user 1");
			is_str(wc.user[0].hash, HASH, "  its hash");
			is_str(wc.user[1].name, "grafana", "  user 2 (quoted name)");
			is_str(wc.user[1].hash, HASHB, "  its $2b$ hash, quoted, comment cut");
			is_str(wc.user[2].name, "o'brien", "  user 3 (quote inside double quotes)");
			is_str(wc.user[2].hash, HASH, "  its hash, CR cut");
		}
		ok(web_config_auth(&wc), "  basic auth on");
		ok(!wc.cert_pem && !wc.key_pem, "  parsing reads no file");
		web_config_release(&wc);
	}
	if (accepts(&wc,
	            "tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n"
	            "  min_version: TLS12\n",
	            "min_version TLS12")) {
		ok(wc.tls_priorities && strstr(wc.tls_priorities, "+VERS-TLS1.2") &&
		           strstr(wc.tls_priorities, "+VERS-TLS1.3"),
		   "  min_version TLS12: 1.2 and 1.3");
		web_config_release(&wc);
	}
	if (accepts(&wc, "tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n",
	            "TLS without min_version")) {
		ok(!wc.tls_priorities, "  the library's default versions");
		web_config_release(&wc);
	}
	if (accepts(&wc, "basic_auth_users:\n    alice: \"" HASH "\"\n", "four-space indent"))
		web_config_release(&wc);
	if (accepts(&wc, "basic_auth_users:\n  'it''s': " HASH "\n", "'' in single quotes")) {
		if (wc.nr_user == 1)
			is_str(wc.user[0].name, "it's", "  '' is one quote");
		web_config_release(&wc);
	}
	if (accepts(&wc,
	            "tls_server_config:\n  cert_file: \"a \\\"b\\\" \\\\c#d\"\n"
	            "  key_file: k#1\n",
	            "escapes in double quotes, '#' not after a space")) {
		is_str(wc.cert_file, "a \"b\" \\c#d", "  \\\" and \\\\ unescaped, '#' kept");
		is_str(wc.key_file, "k#1", "  a '#' inside a plain value is kept");
		web_config_release(&wc);
	}
	/* a quote inside a plain value does not open a quoted string: the comment after it is cut
	 */
	if (accepts(&wc,
	            "tls_server_config:\n  cert_file: /etc/o'brien.crt  # it's the cert\n"
	            "  key_file: k.key # a comment\n",
	            "a quote inside a plain value, then a comment")) {
		is_str(wc.cert_file, "/etc/o'brien.crt", "  the comment cut after a plain o'brien");
		is_str(wc.key_file, "k.key", "  the next line's comment cut");
		web_config_release(&wc);
	}
	/* an escaped quote does not close a quoted string: a " #" after it is not a comment */
	if (accepts(&wc,
	            "tls_server_config:\n  cert_file: \"a\\\" #b\"  # c\n"
	            "  key_file: 'it'' #s'\n",
	            "' #' after an escaped quote, inside the quotes")) {
		is_str(wc.cert_file, "a\" #b", "  \\\" does not end a double-quoted value");
		is_str(wc.key_file, "it' #s", "  '' does not end a single-quoted value");
		web_config_release(&wc);
	}
}

static void
test_parse_refused(void)
{
	refuses("tls_server_config:\n  cert_file: a\n  key_file: b\nweb_listen: x\n",
	        "an unknown top-level key", "web.yml line 4", "'web_listen'");
	refuses("tls_config:\n", "an unknown section", "web.yml line 1", "'tls_config'");
	refuses("http_server_config:\n  headers: {}\n", "http_server_config.headers",
	        "web.yml line 2", "http_server_config.headers");
	refuses("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: ca.crt\n",
	        "client_ca_file", "web.yml line 4", "tls_server_config.client_ca_file");
	refuses("tls_server_config:\n  cipher_suites: x\n", "cipher_suites", "web.yml line 2",
	        "tls_server_config.cipher_suites");
	refuses("tls_server_config:\n  cert_file: a\n  key_file: b\n"
	        "  client_auth_type: RequireAndVerifyClientCert\n",
	        "client_auth_type RequireAndVerifyClientCert", "web.yml line 4",
	        "client_auth_type RequireAndVerifyClientCert");
	refuses("tls_server_config:\n  client_auth_type: RequestClientCert\n",
	        "client_auth_type RequestClientCert", "web.yml line 2", "client_auth_type");
	refuses("tls_server_config:\n  min_version: TLS10\n", "min_version TLS10", "web.yml line 2",
	        "min_version 'TLS10'");
	refuses("tls_server_config:\n  min_version: TLS11\n", "min_version TLS11", "web.yml line 2",
	        "min_version 'TLS11'");
	refuses("tls_server_config:\n  min_version: tls13\n", "min_version tls13 (case)",
	        "web.yml line 2", "min_version 'tls13'");
	refuses("tls_server_config:\n  min_version: junk\n", "min_version junk", "web.yml line 2",
	        "min_version 'junk'");
	refuses("basic_auth_users:\n\talice: " HASH "\n", "a tab in the indentation",
	        "web.yml line 2", "tab");
	refuses("basic_auth_users:\n  \talice: " HASH "\n", "a tab after spaces", "web.yml line 2",
	        "tab");
	refuses("basic_auth_users:\n  alice: secret\n", "a clear-text password", "web.yml line 2",
	        "'alice'", "bcrypt");
	refuses("basic_auth_users:\n  alice: $1$abcdefgh$abcdefghijklmnopqrstuv\n",
	        "an MD5-crypt hash", "web.yml line 2", "'alice'", "bcrypt");
	refuses("basic_auth_users:\n  alice: " HASH "x\n", "a bcrypt hash of 61 characters",
	        "web.yml line 2", "bcrypt");
	refuses("basic_auth_users:\n  alice:\n", "a user without a password", "web.yml line 2",
	        "'alice'");
	refuses("basic_auth_users:\n  alice: " HASH "\n  bob: " HASH "\n  alice: " HASHB "\n",
	        "a user listed twice", "web.yml line 4", "'alice'", "twice");
	refuses("basic_auth_users:\n  'a:b': " HASH "\n", "a user name with a colon",
	        "web.yml line 2", "'a:b'");
	refuses("tls_server_config:\n  cert_file: server.crt\n", "cert_file without key_file",
	        "web.yml", "cert_file", "key_file");
	refuses("tls_server_config:\n  key_file: server.key\n", "key_file without cert_file",
	        "web.yml", "cert_file", "key_file");
	refuses("tls_server_config:\n  cert_file: \"server.crt\n  key_file: b\n",
	        "an unterminated double quote", "web.yml line 2", "quote");
	refuses("basic_auth_users:\n  'alice: " HASH "\n", "an unterminated single quote",
	        "web.yml line 2", "quote");
	refuses("tls_server_config:\n  cert_file: \"\n  key_file: b\n", "a lone quote",
	        "web.yml line 2", "quote");
	refuses("  cert_file: a\n", "an indented key outside a section", "web.yml line 1",
	        "outside a section");
	refuses("# comment\n\n  basic_auth_users: {}\n", "an indented section name",
	        "web.yml line 3", "outside a section");
	refuses("tls_server_config: /etc/x.crt\n", "a value on a section", "web.yml line 1",
	        "'tls_server_config'");
	refuses("basic_auth_users:\n  just some words\n", "a line that is not key: value",
	        "web.yml line 2", "key: value");
	refuses("tls_server_config:\n  cert_file:a\n", "no space after the colon", "web.yml line 2",
	        "key: value");
}

/* Write s to dir/name. */
static void
put(const char *dir, const char *name, const char *s)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		diag("cannot create %s", path);
		return;
	}
	fputs(s, f);
	fclose(f);
}

#define PEM_CERT "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
#define PEM_KEY  "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"

static void
test_load(void)
{
	struct web_config wc;
	struct err err = ERR_INIT;
	char conf[512], sub[256], abs_cert[512], text[1024];
	int rc, fd;

	if (!mkdtemp(tmp_dir)) {
		skip("mkdtemp failed: no files for web_config_load");
		return;
	}
	tmp_made = true;
	snprintf(sub, sizeof(sub), "%s/conf", tmp_dir);
	mkdir(sub, 0700);
	put(sub, "server.crt", PEM_CERT);
	put(sub, "server.key", PEM_KEY);
	put(tmp_dir, "other.crt", PEM_CERT);
	put(sub, "junk.crt", "not a certificate\n");

	/* relative paths: against the file's directory, not the working directory */
	snprintf(conf, sizeof(conf), "%s/web.yml", sub);
	put(sub, "web.yml",
	    "tls_server_config:\n  cert_file: server.crt\n  key_file: ./server.key\n"
	    "basic_auth_users:\n  alice: " HASH "\n");
	err_clear(&err);
	rc = web_config_load(&wc, conf, &err);
	if (!ok(rc == 0, "load: relative cert and key found next to the config file"))
		diag("rc %d: %s", rc, err.msg);
	if (rc == 0) {
		is_str(wc.cert_pem, PEM_CERT, "  the certificate's contents");
		is_str(wc.key_pem, PEM_KEY, "  the key's contents");
		is_int(wc.nr_user, 1, "  and the users");
		web_config_release(&wc);
	}

	/* an absolute path is kept; "../" goes up from the file's directory */
	snprintf(abs_cert, sizeof(abs_cert), "%s/other.crt", tmp_dir);
	snprintf(text, sizeof(text),
	         "tls_server_config:\n  cert_file: %s\n  key_file: ../conf/server.key\n", abs_cert);
	put(sub, "abs.yml", text);
	snprintf(conf, sizeof(conf), "%s/abs.yml", sub);
	err_clear(&err);
	rc = web_config_load(&wc, conf, &err);
	if (!ok(rc == 0, "load: an absolute cert path, a ../ key path"))
		diag("rc %d: %s", rc, err.msg);
	if (rc == 0)
		web_config_release(&wc);

	/* a relative config path (no directory): paths relative to the working directory */
	if (chdir(sub) == 0) {
		err_clear(&err);
		rc = web_config_load(&wc, "web.yml", &err);
		if (!ok(rc == 0, "load: a config path without a directory"))
			diag("rc %d: %s", rc, err.msg);
		if (rc == 0)
			web_config_release(&wc);
		if (chdir("/") != 0)
			diag("cannot go back to /");
	} else {
		skip("cannot chdir into the temporary directory");
	}

	/* a certificate that is not PEM */
	put(sub, "junk.yml", "tls_server_config:\n  cert_file: junk.crt\n  key_file: server.key\n");
	snprintf(conf, sizeof(conf), "%s/junk.yml", sub);
	err_clear(&err);
	rc = web_config_load(&wc, conf, &err);
	ok(rc < 0 && strstr(err.msg, "junk.crt") && strstr(err.msg, "is not a PEM file"),
	   "load: a non-PEM certificate is refused, naming it (%s)", err.msg);
	ok(!wc.cert_file && !wc.cert_pem && !wc.key_pem, "  nothing kept");
	web_config_release(&wc);

	/* a key that is missing */
	put(sub, "nokey.yml",
	    "tls_server_config:\n  cert_file: server.crt\n  key_file: gone.key\n");
	snprintf(conf, sizeof(conf), "%s/nokey.yml", sub);
	err_clear(&err);
	rc = web_config_load(&wc, conf, &err);
	ok(rc < 0 && strstr(err.msg, "/conf/gone.key") && strstr(err.msg, "cannot be read"),
	   "load: a missing key is refused with its resolved path (%s)", err.msg);
	ok(!wc.cert_file && !wc.cert_pem && !wc.key_pem, "  nothing kept");
	web_config_release(&wc);

	/* the configuration file itself missing, or a directory */
	snprintf(conf, sizeof(conf), "%s/none.yml", sub);
	err_clear(&err);
	rc = web_config_load(&wc, conf, &err);
	ok(rc < 0 && strstr(err.msg, "none.yml") && strstr(err.msg, "cannot be read"),
	   "load: a missing config file is refused, naming it (%s)", err.msg);
	web_config_release(&wc);
	err_clear(&err);
	rc = web_config_load(&wc, sub, &err);
	ok(rc < 0 && strstr(err.msg, "cannot be read"), "load: a directory is refused (%s)",
	   err.msg);
	web_config_release(&wc);

	/* a parse error through load names the file and line */
	put(sub, "bad.yml", "basic_auth_users:\n  alice: plain\n");
	snprintf(conf, sizeof(conf), "%s/bad.yml", sub);
	err_clear(&err);
	rc = web_config_load(&wc, conf, &err);
	ok(rc < 0 && strstr(err.msg, "bad.yml line 2"),
	   "load: a parse error names the file and line (%s)", err.msg);
	web_config_release(&wc);

	/* an empty file made by mkstemp: no TLS, no auth */
	snprintf(empty_file, sizeof(empty_file), "%s/empty.XXXXXX", tmp_dir);
	fd = mkstemp(empty_file);
	if (fd >= 0) {
		close(fd);
		err_clear(&err);
		rc = web_config_load(&wc, empty_file, &err);
		ok(rc == 0 && !wc.cert_file && !wc.nr_user, "load: an empty file (%s)", err.msg);
		web_config_release(&wc);
	} else {
		empty_file[0] = '\0';
		skip("mkstemp failed");
	}
}

static void
test_auth(void)
{
	struct web_config wc;
	char hash[128], hash2[128], text[512];
	int rc;

	rc = web_password_hash("s3cret", hash, sizeof(hash));
	ok(rc == 0, "web_password_hash: made a hash");
	if (rc) {
		skip("no bcrypt in the C library");
		return;
	}
	is_int(strlen(hash), 60, "  60 characters");
	ok(!strncmp(hash, "$2y$10$", 7), "  $2y$10$ (%s)", hash);
	ok(web_password_hash("s3cret", hash2, sizeof(hash2)) == 0 && strcmp(hash, hash2),
	   "  a new salt each time");
	ok(web_password_hash("s3cret", hash2, 60) < 0, "  refused when the buffer is too small");

	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: %s\n  bob: '%s'\n", hash, HASH);
	if (!accepts(&wc, text, "the hash it made, in basic_auth_users"))
		return;
	ok(web_config_check(&wc, "alice", "s3cret"), "check: the right password passes");
	ok(!web_config_check(&wc, "alice", "s3cret!"), "check: a wrong password fails");
	ok(!web_config_check(&wc, "alice", "S3cret"), "check: a password differing in case fails");
	ok(!web_config_check(&wc, "alice", ""), "check: an empty password fails");
	ok(!web_config_check(&wc, "mallory", "s3cret"), "check: an unknown user fails");
	ok(!web_config_check(&wc, "Alice", "s3cret"), "check: user names are case-sensitive");
	ok(!web_config_check(&wc, "", ""), "check: an empty user fails");
	ok(!web_config_check(&wc, "bob", "s3cret"), "check: another user's hash does not match");
	/* the cache of credentials that passed */
	ok(web_config_check(&wc, "alice", "s3cret"), "cache: the right password passes again");
	ok(wc.cache != NULL, "  a cache was made");
	ok(!web_config_check(&wc, "alice", "wrong"), "cache: a wrong password after a right one");
	ok(!web_config_check(&wc, "alice", ""), "cache: an empty one after a right one");
	ok(!web_config_check(&wc, "bob", "s3cret"),
	   "cache: alice's password that passed does not pass for bob");
	ok(!web_config_check(&wc, "mallory", "s3cret"), "cache: nor for an unknown user");
	ok(web_config_check(&wc, "alice", "s3cret"), "cache: and still passes for alice");
	web_config_release(&wc);

	/* the same hash as htpasswd's $2b$ spelling */
	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: $2b$%s\n", hash + 4);
	if (accepts(&wc, text, "the hash spelt $2b$")) {
		ok(web_config_check(&wc, "alice", "s3cret"), "check: $2b$ passes");
		ok(!web_config_check(&wc, "alice", "x"), "check: $2b$, a wrong password fails");
		web_config_release(&wc);
	}

	/* an empty password can be hashed and checked, like htpasswd allows */
	if (web_password_hash("", hash, sizeof(hash)) == 0) {
		snprintf(text, sizeof(text), "basic_auth_users:\n  guest: %s\n", hash);
		if (accepts(&wc, text, "a hash of the empty password")) {
			ok(web_config_check(&wc, "guest", ""), "check: its empty password passes");
			ok(!web_config_check(&wc, "guest", "x"), "check: another one fails");
			web_config_release(&wc);
		}
	}
}

/*
 * The credentials libmicrohttpd decodes from a Basic Authorization header,
 * checked: what it hands over may hold a NUL or lack the password.
 */
static void
test_check_basic(void)
{
	struct web_config wc;
	char hash[128], text[512], longuser[200];

	if (web_password_hash("s3cret", hash, sizeof(hash)) < 0) {
		skip("no bcrypt in the C library");
		return;
	}
	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: %s\n", hash);
	if (!accepts(&wc, text, "basic_auth_users for the decoded credentials"))
		return;
	ok(web_config_check_basic(&wc, "alice", 5, "s3cret", 6),
	   "check_basic: the right user and password pass");
	/* alice's credentials are in the cache now: what follows must not ride on them */
	ok(web_config_check(&wc, "alice", "s3cret"), "  and again, from the cache");
	ok(!web_config_check_basic(&wc, "alice", 5, NULL, 0),
	   "check_basic: no password (no ':' in the header) fails");
	ok(!web_config_check_basic(&wc, NULL, 0, "s3cret", 6), "check_basic: no user fails");
	ok(!web_config_check_basic(&wc, "alice\0x", 7, "s3cret", 6),
	   "check_basic: a NUL inside the user fails");
	ok(!web_config_check_basic(&wc, "alice", 5, "s3cret\0x", 8),
	   "check_basic: a NUL inside the password fails");
	ok(!web_config_check_basic(&wc, "alice", 5, "s3cre", 5),
	   "check_basic: a wrong password fails");
	ok(!web_config_check_basic(&wc, "alic", 4, "s3cret", 6), "check_basic: another user fails");
	memset(longuser, 'a', sizeof(longuser) - 1);
	longuser[sizeof(longuser) - 1] = '\0';
	ok(!web_config_check_basic(&wc, longuser, strlen(longuser), "s3cret", 6),
	   "check_basic: a user longer than any name fails");
	ok(web_config_check_basic(&wc, "alice", 5, "s3cret", 6),
	   "check_basic: and the right one still passes");
	web_config_release(&wc);

	/* no users: every request passes, without bcrypt */
	if (accepts(&wc, "basic_auth_users: {}\n", "no users")) {
		ok(web_config_check_basic(&wc, "x", 1, "y", 1), "check_basic: no users, it passes");
		ok(!wc.cache, "  and no cache was made");
		web_config_release(&wc);
	}
}

/* The quick and the slow half of a check, as serve's request thread and checkers use them. */
static void
test_fast_slow(void)
{
	struct web_config wc;
	char hash[128], text[512], p73[80];

	if (web_password_hash("s3cret", hash, sizeof(hash)) < 0) {
		skip("no bcrypt in the C library");
		return;
	}
	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: %s\n  bob: " HASH "\n", hash);
	if (!accepts(&wc, text, "users for the two halves"))
		return;
	is_str(wc.dummy, "$2b$10$abcdefghijklmnopqrstuu", "  an unknown user's setting: cost 10");
	is_int(web_config_check_fast(&wc, "alice", 5, "s3cret", 6), WEB_AUTH_SLOW,
	       "fast: not cached yet, bcrypt must tell");
	is_int(web_config_check_fast(&wc, "alice", 5, NULL, 0), WEB_AUTH_FAIL,
	       "fast: no password fails at once");
	is_int(web_config_check_fast(&wc, "alice", 5, "s3\0ret", 6), WEB_AUTH_FAIL,
	       "fast: a NUL fails at once");
	memset(p73, 'x', 73);
	p73[73] = '\0';
	is_int(web_config_check_fast(&wc, "alice", 5, p73, 73), WEB_AUTH_FAIL,
	       "fast: 73 bytes fail at once");
	ok(!web_config_check_slow(&wc, "nobody", "s3cret"), "slow: an unknown user fails");
	ok(!web_config_check_slow(&wc, "alice", "wrong"), "slow: a wrong password fails");
	is_int(web_config_check_fast(&wc, "alice", 5, "wrong", 5), WEB_AUTH_SLOW,
	       "  and is not cached");
	ok(web_config_check_slow(&wc, "alice", "s3cret"), "slow: the right password passes");
	is_int(web_config_check_fast(&wc, "alice", 5, "s3cret", 6), WEB_AUTH_PASS,
	       "fast: then it is cached");
	is_int(web_config_check_fast(&wc, "bob", 3, "s3cret", 6), WEB_AUTH_SLOW,
	       "fast: alice's password is not cached for bob");
	web_config_release(&wc);

	/* the unknown user's cost follows the highest */
	if (accepts(&wc,
	            "basic_auth_users:\n"
	            "  a: $2y$04$abcdefghijklmnopqrstuOabcdefghijklmnopqrstuvwxyz01234\n"
	            "  b: $2b$13$abcdefghijklmnopqrstuOabcdefghijklmnopqrstuvwxyz01234\n"
	            "  c: $2a$07$abcdefghijklmnopqrstuOabcdefghijklmnopqrstuvwxyz01234\n",
	            "users at costs 4, 13 and 7")) {
		is_str(wc.dummy, "$2b$13$abcdefghijklmnopqrstuu", "  an unknown user: cost 13");
		web_config_release(&wc);
	}
	refuses("basic_auth_users:\n  a: $2y$03$abcdefghijklmnopqrstuOabcdefghijklmnopqrstuvwxyz01234\n",
	        "a bcrypt cost under 4", "web.yml line 2", "bcrypt");
	refuses("basic_auth_users:\n  a: $2y$1x$abcdefghijklmnopqrstuOabcdefghijklmnopqrstuvwxyz01234\n",
	        "a bcrypt cost that is not a number", "web.yml line 2", "bcrypt");
}

/* Failed logins per address: a burst, then one more every WEB_FAIL_EVERY_S. */
static void
test_limiter(void)
{
	struct web_limiter *l = web_limiter_new();
	unsigned char a[4] = { 10, 0, 0, 1 }, b[4] = { 10, 0, 0, 2 }, other[16];
	double t = 1000;
	unsigned wait, i;

	for (i = 0; i < WEB_FAIL_BURST; i++) {
		if (web_limiter_begin(l, a, 4, t))
			break;
		web_limiter_end(l, a, 4, true, t);
	}
	is_int(i, WEB_FAIL_BURST, "limiter: %d failures in a row are checked", WEB_FAIL_BURST);
	wait = web_limiter_begin(l, a, 4, t);
	ok(wait >= 1 && wait <= (unsigned)WEB_FAIL_EVERY_S,
	   "  the next one is refused, for %u s (1 to %g)", wait, WEB_FAIL_EVERY_S);
	is_int(web_limiter_begin(l, b, 4, t), 0, "  another address is not");
	web_limiter_end(l, b, 4, false, t);
	ok(web_limiter_begin(l, a, 4, t + WEB_FAIL_EVERY_S - 0.5) > 0, "  nor %g s later",
	   WEB_FAIL_EVERY_S - 0.5);
	is_int(web_limiter_begin(l, a, 4, t + WEB_FAIL_EVERY_S + 0.01), 0, "  one more after %g s",
	       WEB_FAIL_EVERY_S);
	web_limiter_end(l, a, 4, true, t + WEB_FAIL_EVERY_S + 0.01);
	ok(web_limiter_begin(l, a, 4, t + WEB_FAIL_EVERY_S + 0.02) > 0, "  and only one");
	is_int(web_limiter_begin(l, a, 4, t + 100 * WEB_FAIL_EVERY_S), 0,
	       "  all forgotten in time");
	web_limiter_end(l, a, 4, false, t + 100 * WEB_FAIL_EVERY_S);

	/* checks under way count: a burst of them at once, then refused until they end */
	t += 1000;
	for (i = 0; i < WEB_FAIL_BURST + 5; i++)
		if (web_limiter_begin(l, b, 4, t))
			break;
	is_int(i, WEB_FAIL_BURST, "limiter: %d checks under way at once, no more", WEB_FAIL_BURST);
	for (unsigned k = 0; k < i; k++)
		web_limiter_end(l, b, 4, false, t);
	is_int(web_limiter_begin(l, b, 4, t), 0, "  once they passed, the address may go on");
	web_limiter_end(l, b, 4, false, t);

	/* more addresses than it remembers: the least failed are forgotten, a's failures kept */
	t += 1000;
	for (i = 0; i < WEB_FAIL_BURST; i++) {
		web_limiter_begin(l, a, 4, t);
		web_limiter_end(l, a, 4, true, t);
	}
	memset(other, 0, sizeof(other));
	for (i = 0; i < 2 * WEB_FAIL_ADDRS; i++) {
		memcpy(other, &i, sizeof(i));
		if (web_limiter_begin(l, other, 16, t) == 0)
			web_limiter_end(l, other, 16, false, t);
	}
	ok(web_limiter_begin(l, a, 4, t) > 0,
	   "limiter: %d other addresses later, the failing one is still refused",
	   2 * WEB_FAIL_ADDRS);
	web_limiter_free(l);
}

/* Remove what test_load made (the tree is small and known). */
static void
cleanup(void)
{
	static const char *const names[] = { "conf/server.crt", "conf/server.key", "conf/junk.crt",
		                             "conf/web.yml",    "conf/abs.yml",    "conf/junk.yml",
		                             "conf/nokey.yml",  "conf/bad.yml",    "other.crt" };
	char path[512];

	if (!tmp_made)
		return;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp_dir, names[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/conf", tmp_dir);
	rmdir(path);
	if (empty_file[0])
		unlink(empty_file);
	if (rmdir(tmp_dir) != 0)
		diag("cannot remove %s", tmp_dir);
}

int
main(void)
{
	test_parse_valid();
	test_parse_refused();
	test_load();
	test_auth();
	test_check_basic();
	test_fast_slow();
	test_limiter();
	cleanup();
	return done_testing();
}
