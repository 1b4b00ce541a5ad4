/*
 * The queue's wire protocol: one line of compact JSON per message on a Unix
 * socket (proto.h).
 */
#include "queue/proto.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/err.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "queue/jobjson.h"

const char *
qproto_socket_path(const char *given)
{
	const char *env;

	if (given && *given)
		return given;
	env = getenv(QPROTO_SOCKET_ENV);
	if (env && *env)
		return env;
	return QPROTO_DEFAULT_SOCKET;
}

int
qproto_connect(const char *path, int *fd, struct err *err)
{
	struct sockaddr_un sa;
	int s, e;

	*fd = -1;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path))
		return err_set(
		        err, E_USAGE,
		        "the queue's socket path '%s' is too long (at most %zu bytes): give a "
		        "shorter --socket",
		        path, sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return err_set(err, E_IO, "cannot create a socket: %s", strerror(errno));
	while (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (errno == EINTR)
			continue;
		e = errno;
		close(s);
		if (e == ENOENT || e == ECONNREFUSED)
			return err_set(err, E_NOTFOUND,
			               "cannot reach the queue at %s: no daemon is running (start "
			               "'gpuscope queued' or 'systemctl start gpuscope-queued')",
			               path);
		if (e == EACCES || e == EPERM)
			return err_set(
			        err, E_PERM,
			        "permission denied connecting to the queue at %s: this daemon "
			        "does not take your user (a personal queue of another user?); "
			        "give --socket of your own queue",
			        path);
		if (e == ENOTSOCK || e == ENOTDIR)
			return err_set(err, E_NOTFOUND,
			               "cannot reach the queue at %s: it is not a socket (give the "
			               "daemon's --socket)",
			               path);
		return err_set(err, errno_status(e), "cannot reach the queue at %s: %s", path,
		               strerror(e));
	}
	*fd = s;
	return 0;
}

static int
send_all(int fd, const char *p, size_t len, struct err *err)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				struct pollfd pfd = { .fd = fd, .events = POLLOUT };

				if (poll(&pfd, 1, QPROTO_CALL_TIMEOUT_MS) == 0)
					return err_set(err, E_TIMEOUT,
					               "the queue's daemon takes nothing more: it "
					               "did not read for %d s",
					               QPROTO_CALL_TIMEOUT_MS / 1000);
				continue;
			}
			if (errno == EPIPE || errno == ECONNRESET)
				return err_set(err, E_IO,
				               "the queue's daemon closed the connection while "
				               "being sent a request");
			return err_set(err, E_IO, "cannot send to the queue's daemon: %s",
			               strerror(errno));
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
qproto_encode(json_t *msg, struct strbuf *out)
{
	char *s = json_dumps(msg, JSON_COMPACT);

	if (!s)
		return E_PARSE;
	strbuf_addstr(out, s);
	strbuf_addch(out, '\n');
	free(s);
	return 0;
}

int
qproto_send(int fd, json_t *msg, struct err *err)
{
	struct strbuf sb = STRBUF_INIT;
	int rc;

	if (qproto_encode(msg, &sb) < 0)
		return err_set(err, E_PARSE, "cannot encode a message as JSON");
	rc = send_all(fd, sb.buf, sb.len, err);
	strbuf_release(&sb);
	return rc;
}

int
qproto_decode(const char *line, size_t len, json_t **msg, struct err *err)
{
	json_error_t je;
	json_t *v;

	*msg = NULL;
	v = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	if (!v)
		return err_set(err, E_PARSE, "malformed JSON at column %d: %s", je.column, je.text);
	if (!json_is_object(v)) {
		json_decref(v);
		return err_set(err, E_PARSE, "a message must be a JSON object");
	}
	*msg = v;
	return 0;
}

/* milliseconds left until deadline (clock_mono()), -1 forever */
static int
ms_left(double deadline)
{
	double left;

	if (deadline < 0)
		return -1;
	left = (deadline - clock_mono()) * 1000.0;
	if (left <= 0)
		return 0;
	return left > 2e9 ? 2000000000 : (int)left + 1;
}

int
qproto_recv(int fd, json_t **msg, int timeout_ms, struct err *err)
{
	struct strbuf sb = STRBUF_INIT;
	double deadline = timeout_ms < 0 ? -1 : clock_mono() + timeout_ms / 1000.0;
	char buf[65536];
	int rc;

	*msg = NULL;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;
		char *nl;
		size_t take;
		int pr = poll(&pfd, 1, ms_left(deadline));

		if (pr < 0) {
			if (errno == EINTR)
				continue;
			rc = err_set(err, E_IO, "cannot wait for the queue's daemon: %s",
			             strerror(errno));
			goto out;
		}
		if (pr == 0) {
			rc = err_set(err, E_TIMEOUT,
			             "the queue's daemon did not answer within %.0f s: it may be "
			             "hung (see 'journalctl -u gpuscope-queued')",
			             timeout_ms / 1000.0);
			goto out;
		}
		/* look without taking, so that nothing past the line is consumed */
		n = recv(fd, buf, sizeof(buf), MSG_PEEK);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
				continue;
			rc = err_set(err, E_IO, "cannot read from the queue's daemon: %s",
			             strerror(errno));
			goto out;
		}
		if (n == 0) {
			rc = err_set(err, E_IO,
			             "the queue's daemon closed the connection without an answer%s",
			             sb.len ? " (in the middle of a line)" : "");
			goto out;
		}
		nl = memchr(buf, '\n', (size_t)n);
		take = nl ? (size_t)(nl - buf) + 1 : (size_t)n;
		n = recv(fd, buf, take, 0);
		if (n < 0) {
			rc = err_set(err, E_IO, "cannot read from the queue's daemon: %s",
			             strerror(errno));
			goto out;
		}
		if (nl && (size_t)n == take) {
			strbuf_add(&sb, buf, take - 1);
			break;
		}
		strbuf_add(&sb, buf, (size_t)n);
		if (sb.len > QPROTO_MAX_RESPONSE) {
			rc = err_set(err, E_PARSE, "the queue's daemon sent a line over %d MiB",
			             QPROTO_MAX_RESPONSE >> 20);
			goto out;
		}
	}
	{
		struct err e2 = ERR_INIT;

		rc = qproto_decode(sb.buf, sb.len, msg, &e2);
		if (rc < 0)
			err_set(err, rc, "the queue's daemon sent a bad line: %s", e2.msg);
	}
out:
	strbuf_release(&sb);
	return rc;
}

int
qproto_call(const char *socket_path, json_t *req, json_t **resp, struct err *err)
{
	int fd, rc;

	*resp = NULL;
	socket_path = qproto_socket_path(socket_path);
	rc = qproto_connect(socket_path, &fd, err);
	if (rc < 0)
		return rc;
	rc = qproto_send(fd, req, err);
	if (rc == 0)
		rc = qproto_recv(fd, resp, QPROTO_CALL_TIMEOUT_MS, err);
	close(fd);
	return rc;
}

int
qproto_code_status(const char *code)
{
	static const struct {
		const char *code;
		int status;
	} map[] = {
		{ "usage", E_USAGE },   { "denied", E_PERM }, { "notfound", E_NOTFOUND },
		{ "invalid", E_PARSE }, { "busy", E_BUSY },   { "internal", E_IO },
	};

	for (size_t i = 0; code && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(code, map[i].code))
			return map[i].status;
	return E_IO;
}

const char *
qproto_status_code(int status)
{
	switch (status) {
	case E_USAGE:
		return "usage";
	case E_PERM:
		return "denied";
	case E_NOTFOUND:
		return "notfound";
	case E_PARSE:
		return "invalid";
	case E_BUSY:
		return "busy";
	default:
		return "internal";
	}
}

int
qproto_check(const json_t *resp, struct err *err)
{
	const json_t *ok = json_object_get(resp, "ok");
	const char *msg, *code;

	if (json_is_true(ok))
		return 0;
	msg = json_string_value(json_object_get(resp, "error"));
	code = json_string_value(json_object_get(resp, "code"));
	if (!json_is_false(ok) && !msg)
		return err_set(err, E_PARSE, "the queue's daemon sent an answer without \"ok\"");
	return err_set(err, qproto_code_status(code), "%s",
	               msg ? msg : "the queue's daemon refused without saying why");
}

json_t *
qproto_error(const char *code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	json_t *o;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o = json_object();
	json_object_set_new(o, "ok", json_false());
	json_object_set_new(o, "error", qj_json_string(msg, strlen(msg)));
	json_object_set_new(o, "code", json_string(code));
	return o;
}
