/*
 * The queue daemon's configuration (src/queue/conf.c) and the wire
 * protocol's framing (src/queue/proto.c): the parts of the daemon that take
 * input from people and programs, with no daemon running.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../harness.h"
#include "core/err.h"
#include "core/strbuf.h"
#include "queue/conf.h"
#include "queue/proto.h"

static int
parse(struct qconf *c, const char *text, struct err *err)
{
	err_clear(err);
	return qconf_parse(c, text, strlen(text), "q.conf", err);
}

static void
test_defaults(void)
{
	struct qconf c;

	qconf_defaults(&c);
	is_str(c.socket, "/run/gpuscope/queue.sock", "default socket");
	is_str(c.state_dir, "/var/lib/gpuscope/queue", "default state_dir");
	is_str(c.cgroup_root, "", "default cgroup_root: choose");
	is_str(c.admin_group, "gpuscope-admin", "default admin_group");
	is_int(c.default_mode, QJ_MODE_EXCLUSIVE, "default mode exclusive");
	is_int(c.mem_margin, 256ull << 20, "default mem_margin 256M");
	ok(c.backfill && c.preemption && c.resume_queue, "backfill, preemption, resume_queue on");
	is_int(c.preempt_mode, QPM_KILL, "default preempt_mode kill");
	is_dbl(c.grace, 30, 0, "default grace 30s");
	is_dbl(c.cleanup_timeout, 60, 0, "default cleanup_timeout 60s");
	is_dbl(c.sample_interval, 1, 0, "default sample_interval 1s");
	is_dbl(c.fairshare_half_life, 7 * 86400, 0, "default half-life 7d");
	is_int(c.max_clients, 64, "default max_clients");
	is_int(c.max_request, 1 << 20, "default max_request 1M");
	is_dbl(c.nvml_timeout, 5, 0, "default nvml_timeout 5s");
	is_dbl(c.history_keep, 30 * 86400, 0, "default history_keep 30d");
	qconf_release(&c);
}

static void
test_parse(void)
{
	struct err err = ERR_INIT;
	struct qconf c;
	const char *text = "# a comment\n"
	                   "socket = /tmp/q.sock   # trailing comment\n"
	                   "state_dir=/tmp/state\n"
	                   "  default_mode = shared\n"
	                   "default_gpu_mem = 20G\n"
	                   "mem_margin = 512MiB\n"
	                   "backfill = no\n"
	                   "preempt_mode = checkpoint\n"
	                   "grace = 2m\n"
	                   "sample_interval = 0.2s\n"
	                   "max_priority = -5\n"
	                   "max_time = 1d\n"
	                   "max_request = 64K\n"
	                   "\n"
	                   "[group ml]\n"
	                   "max_running_gpus = 4\n"
	                   "max_priority = 10\n"
	                   "[group big]\n"
	                   "max_running_gpus = 0\n"
	                   "[user alice]\n"
	                   "max_running_gpus = 2\n"
	                   "max_time = 2h\n"
	                   "[gpu GPU-1234]\n"
	                   "reserve = user:alice, group:ml\n"
	                   "drain = yes\n";
	struct qconf_user_limits l;
	const char *ml[] = { "users", "ml" }, *both[] = { "ml", "big" };
	const struct qconf_gpu *g;

	qconf_defaults(&c);
	is_int(parse(&c, text, &err), 0, "a full file parses");
	if (err.code)
		diag("%s", err.msg);
	is_str(c.socket, "/tmp/q.sock", "socket (a trailing comment cut)");
	is_str(c.state_dir, "/tmp/state", "state_dir without spaces round =");
	is_int(c.default_mode, QJ_MODE_SHARED, "default_mode shared");
	is_int(c.default_gpu_mem, 20ull << 30, "20G");
	is_int(c.mem_margin, 512ull << 20, "512MiB");
	ok(!c.backfill, "backfill = no");
	is_int(c.preempt_mode, QPM_CHECKPOINT, "preempt_mode checkpoint");
	is_dbl(c.grace, 120, 0, "2m");
	is_dbl(c.sample_interval, 0.2, 1e-9, "0.2s");
	is_int(c.max_priority, -5, "negative max_priority");
	is_int(c.max_time, 86400, "1d");
	is_int(c.max_request, 65536, "64K");
	is_int(c.nr_limit, 3, "three sections of limits");
	is_int(c.nr_gpu, 1, "one GPU section");

	qconf_limits_for(&c, "bob", NULL, 0, &l);
	is_int(l.max_running_gpus, 0, "bob: the global (unlimited)");
	is_int(l.max_priority, -5, "bob: the global max_priority");
	qconf_limits_for(&c, "bob", ml, 2, &l);
	is_int(l.max_running_gpus, 4, "bob in ml: the group's");
	is_int(l.max_priority, 10, "bob in ml: the group's max_priority");
	is_int(l.max_time, 86400, "bob in ml: the global max_time");
	qconf_limits_for(&c, "bob", both, 2, &l);
	is_int(l.max_running_gpus, 0, "bob in ml and big: the most generous (0 = unlimited)");
	qconf_limits_for(&c, "alice", ml, 2, &l);
	is_int(l.max_running_gpus, 2, "alice: her own section beats her group's");
	is_int(l.max_priority, 10, "alice: the group's max_priority, hers is unset");
	is_int(l.max_time, 7200, "alice: her own max_time");

	g = qconf_gpu_find(&c, "GPU-1234");
	ok(g != NULL, "the [gpu] section is found");
	if (g) {
		ok(g->drain && g->reserved, "drained and reserved");
		is_int(g->nr_reserve_user, 1, "one user");
		is_int(g->nr_reserve_group, 1, "one group");
		is_str(g->reserve_user[0], "alice", "user alice");
		is_str(g->reserve_group[0], "ml", "group ml");
	}
	ok(qconf_gpu_find(&c, "GPU-9") == NULL, "another GPU has no section");
	qconf_release(&c);
}

static void
test_errors(void)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "foo = 1\n", "q.conf:1: unknown key 'foo'" },
		{ "\n\ngrace = soon\n", "q.conf:3: grace = 'soon' is not a duration" },
		{ "mem_margin = 12Q\n", "q.conf:1: mem_margin = '12Q' is not a size" },
		{ "backfill = maybe\n", "q.conf:1: backfill = 'maybe' is not yes or no" },
		{ "default_mode = greedy\n",
		  "q.conf:1: default_mode = 'greedy' is not exclusive or shared" },
		{ "jobs_per_gpu = -1\n", "q.conf:1: jobs_per_gpu = '-1' is not a whole number" },
		{ "just words\n", "q.conf:1: expected 'key = value'" },
		{ "[pool x]\n", "q.conf:1: unknown section [pool]" },
		{ "[user]\n", "q.conf:1: section [user] needs a valid name" },
		{ "[user a]\nsocket = /x\n",
		  "q.conf:2: unknown key 'socket' in a [user]/[group] section" },
		{ "[gpu G]\nreserve = alice\n",
		  "q.conf:2: reserve entry 'alice' must be user:NAME" },
		{ "[gpu G]\nweight = 2\n", "q.conf:2: unknown key 'weight' in a [gpu] section" },
		{ "socket = relative.sock\n", "q.conf: socket must be an absolute path" },
		{ "sample_interval = 0\n", "q.conf:1: sample_interval must be between" },
		{ "max_request = 10\n", "q.conf:1: max_request must be between 1K and 1G" },
		{ "max_clients = 0\n", "q.conf: max_clients must be 1 or more" },
		{ "[user a\n", "q.conf:1: a section line is" },
	};
	struct err err = ERR_INIT;
	struct qconf c;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		qconf_defaults(&c);
		c.grace = 7;
		ok(parse(&c, bad[i].text, &err) == E_PARSE, "refused: %s", bad[i].want);
		if (!ok(!strncmp(err.msg, bad[i].want, strlen(bad[i].want)), "message: %s",
		        bad[i].want))
			diag("got: %s", err.msg);
		is_dbl(c.grace, 7, 0, "the config is unchanged after an error");
		qconf_release(&c);
	}
}

static void
test_units(void)
{
	static const struct {
		const char *text;
		double grace, interval;
	} good[] = {
		{ "grace = 90\n", 90, 1 },
		{ "grace = 1h30m\n", 5400, 1 },
		{ "grace = 1-00:00:00\n", 86400, 1 },
		{ "sample_interval = 0.2s\n", 30, 0.2 },
		{ "sample_interval = 250ms\n", 30, 0.25 },
		{ "sample_interval = 0.5\n", 30, 0.5 },
	};
	static const char *const bad[] = {
		"grace = soon\n",
		"grace = 5y\n",
		"grace = -1\n",
		"grace =\n",
		"mem_margin = 1Gx\n",
		"mem_margin = -1\n",
		"mem_margin = 99999999999999E\n",
	};
	struct err err = ERR_INIT;
	struct qconf c;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		qconf_defaults(&c);
		is_int(parse(&c, good[i].text, &err), 0, "takes %.30s", good[i].text);
		is_dbl(c.grace, good[i].grace, 1e-9, "grace");
		is_dbl(c.sample_interval, good[i].interval, 1e-9, "sample_interval");
		qconf_release(&c);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		qconf_defaults(&c);
		ok(parse(&c, bad[i], &err) == E_PARSE, "refuses %.30s", bad[i]);
		qconf_release(&c);
	}
	qconf_defaults(&c);
	is_int(parse(&c, "mem_margin = 1.5G\ndefault_gpu_mem = 4096\n", &err), 0, "sizes");
	is_int(c.mem_margin, 3ull << 29, "1.5G");
	is_int(c.default_gpu_mem, 4096, "bytes");
	qconf_release(&c);
}

static void
test_load(void)
{
	struct err err = ERR_INIT;
	struct qconf c;
	char path[] = "/tmp/t_queue_daemon.XXXXXX";
	int fd;

	qconf_defaults(&c);
	is_int(qconf_load(&c, "/nonexistent/queue.conf", false, &err), 0,
	       "a missing default file: the defaults");
	is_str(c.path, "", "no file read");
	ok(qconf_load(&c, "/nonexistent/queue.conf", true, &err) == E_NOTFOUND,
	   "a missing named file: an error");
	ok(strstr(err.msg, "/nonexistent/queue.conf") != NULL, "naming the file");
	err_clear(&err);
	ok(qconf_load(&c, "/tmp", true, &err) < 0, "a directory is refused");
	fd = mkstemp(path);
	if (fd >= 0) {
		const char *text = "grace = 3s\n";

		if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
			diag("short write");
		close(fd);
		err_clear(&err);
		is_int(qconf_load(&c, path, true, &err), 0, "a file loads");
		is_dbl(c.grace, 3, 0, "its value");
		is_str(c.path, path, "its path kept");
		unlink(path);
	} else {
		skip("cannot create a temporary file");
	}
	qconf_release(&c);
}

static void
test_proto(void)
{
	struct err err = ERR_INIT;
	struct strbuf sb = STRBUF_INIT;
	json_t *m, *s;
	int sv[2];

	m = json_pack("{s:s, s:s}", "op", "ping", "x", "a\nb");
	is_int(qproto_encode(m, &sb), 0, "encode");
	ok(sb.len && sb.buf[sb.len - 1] == '\n' && !memchr(sb.buf, '\n', sb.len - 1),
	   "one line, the newline in a string escaped");
	json_decref(m);
	is_int(qproto_decode(sb.buf, sb.len - 1, &m, &err), 0, "decodes back");
	is_str(json_string_value(json_object_get(m, "x")), "a\nb", "the string intact");
	json_decref(m);
	err_clear(&err);
	ok(qproto_decode("[1]", 3, &m, &err) == E_PARSE && !m, "an array is not a message");
	err_clear(&err);
	ok(qproto_decode("{\"a\":1,\"a\":2}", 13, &m, &err) == E_PARSE, "duplicate keys refused");
	err_clear(&err);
	ok(qproto_decode("{bad", 4, &m, &err) == E_PARSE, "malformed refused");
	strbuf_release(&sb);

	s = qproto_error("invalid", "bad \xff byte");
	is_str(json_string_value(json_object_get(s, "error")), "bad \xef\xbf\xbd byte",
	       "an error message with a bad byte is still JSON");
	json_decref(s);
	m = qproto_error("denied", "job %d is bob's", 3);
	err_clear(&err);
	ok(qproto_check(m, &err) == E_PERM, "an error answer maps to its status");
	is_str(err.msg, "job 3 is bob's", "with its message");
	json_decref(m);
	err_clear(&err);
	m = json_pack("{s:b}", "ok", 1);
	is_int(qproto_check(m, &err), 0, "ok: true");
	json_decref(m);
	is_int(qproto_code_status("notfound"), E_NOTFOUND, "notfound");
	is_str(qproto_status_code(E_BUSY), "busy", "busy");

	/* two lines in one write: each recv takes exactly one */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0) {
		const char *two = "{\"n\":1}\n{\"n\":2}\n{\"n\":";

		if (write(sv[0], two, strlen(two)) != (ssize_t)strlen(two))
			diag("short write");
		err_clear(&err);
		is_int(qproto_recv(sv[1], &m, 1000, &err), 0, "first line");
		is_int(json_integer_value(json_object_get(m, "n")), 1, "its value");
		json_decref(m);
		is_int(qproto_recv(sv[1], &m, 1000, &err), 0, "second line");
		is_int(json_integer_value(json_object_get(m, "n")), 2, "its value");
		json_decref(m);
		is_int(qproto_recv(sv[1], &m, 100, &err), E_TIMEOUT, "half a line: a timeout");
		close(sv[0]);
		err_clear(&err);
		is_int(qproto_recv(sv[1], &m, 1000, &err), E_IO, "then the peer closes: E_IO");
		ok(strstr(err.msg, "closed") != NULL, "saying so: %s", err.msg);
		close(sv[1]);
	} else {
		skip("no socketpair");
	}
	err_clear(&err);
	ok(qproto_connect("/nonexistent/q.sock", &sv[0], &err) == E_NOTFOUND,
	   "no daemon: E_NOTFOUND");
	ok(strstr(err.msg, "no daemon is running") != NULL, "and what to do: %s", err.msg);
	setenv(QPROTO_SOCKET_ENV, "/tmp/x.sock", 1);
	is_str(qproto_socket_path(NULL), "/tmp/x.sock", "the environment's socket");
	is_str(qproto_socket_path("/a.sock"), "/a.sock", "--socket wins");
	unsetenv(QPROTO_SOCKET_ENV);
	is_str(qproto_socket_path(NULL), QPROTO_DEFAULT_SOCKET, "the default");
}

int
main(void)
{
	test_defaults();
	test_parse();
	test_errors();
	test_units();
	test_load();
	test_proto();
	return done_testing();
}
