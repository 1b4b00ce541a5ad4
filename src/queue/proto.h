/*
 * The job queue's wire protocol: a SOCK_STREAM Unix socket on which every
 * message is one line of compact JSON ending in "\n". A request is
 * {"op": OP, ...}; a response {"ok": true, ...} or {"ok": false, "error":
 * "one line", "code": "usage|denied|notfound|invalid|busy|internal"}.
 * The client's identity is the socket's peer credentials (SO_PEERCRED),
 * never anything in a message. docs/queue.md lists the ops.
 *
 * The client API (qproto_connect ... qproto_call) is what 'gpuscope queue'
 * uses; the framing helpers below it are shared with the daemon.
 */
#ifndef GPUSCOPE_QUEUE_PROTO_H
#define GPUSCOPE_QUEUE_PROTO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct err;
struct strbuf;

#define QPROTO_VERSION        1
#define QPROTO_DEFAULT_SOCKET "/run/gpuscope/queue.sock"
#define QPROTO_SOCKET_ENV     "GPUSCOPE_QUEUE_SOCKET"
/* the longest request line the daemon takes by default (max_request) */
#define QPROTO_MAX_REQUEST (1024 * 1024)
/* the longest response line a client takes (ls of a large queue) */
#define QPROTO_MAX_RESPONSE (256 * 1024 * 1024)
/* how long qproto_call() waits for the answer */
#define QPROTO_CALL_TIMEOUT_MS 60000

/* The socket to use: given when not NULL (--socket), else $GPUSCOPE_QUEUE_SOCKET, else the default.
 */
const char *qproto_socket_path(const char *given);

/*
 * Connect to the daemon's socket at path. Errors say what to do: no daemon
 * running (ENOENT, ECONNREFUSED) is E_NOTFOUND, permission denied E_PERM.
 */
int qproto_connect(const char *path, int *fd, struct err *err);

/* Send msg as one line (steals no reference). Never raises SIGPIPE. */
int qproto_send(int fd, json_t *msg, struct err *err);

/*
 * Receive one line and parse it; *msg is a new reference to an object.
 * timeout_ms -1 waits forever. E_TIMEOUT when nothing whole came in time,
 * E_IO when the daemon closed the connection (the message says so),
 * E_PARSE for a line that is not a JSON object. Reads nothing past the line.
 */
int qproto_recv(int fd, json_t **msg, int timeout_ms, struct err *err);

/*
 * Connect to socket_path (NULL: qproto_socket_path(NULL)), send req, wait for
 * one response (QPROTO_CALL_TIMEOUT_MS) and close. Returns 0 with *resp set
 * (a new reference) whatever its "ok" says; see qproto_check().
 */
int qproto_call(const char *socket_path, json_t *req, json_t **resp, struct err *err);

/*
 * 0 when resp says {"ok": true}; otherwise the status its "code" maps to
 * (qproto_code_status()) with its "error" in err.
 */
int qproto_check(const json_t *resp, struct err *err);

/* "usage" -> E_USAGE, "denied" -> E_PERM, "notfound" -> E_NOTFOUND, "invalid" -> E_PARSE,
 * "busy" -> E_BUSY, anything else E_IO. */
int qproto_code_status(const char *code);
/* The reverse: the code word of a status. */
const char *qproto_status_code(int status);

/* {"ok": false, "error": msg, "code": code}: a new reference. */
json_t *qproto_error(const char *code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append msg to out as one compact line with its "\n". Returns 0, or E_PARSE when it cannot
 * be encoded. */
int qproto_encode(json_t *msg, struct strbuf *out);

/*
 * Parse one line (without its "\n") of len bytes into an object; E_PARSE with
 * a message otherwise.
 */
int qproto_decode(const char *line, size_t len, json_t **msg, struct err *err);

#endif
