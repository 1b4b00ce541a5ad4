/*
 * The JOB and EVENT objects of the queue's protocol (queue/jobjson.h), built
 * with jansson from struct qjob and struct qevent. Every string goes
 * through qj_json_string(), so bytes that are not UTF-8 (a file name, an
 * argument) never make a job unprintable.
 */
#include "queue/jobjson.h"

#include <jansson.h>
#include <string.h>

#include "core/strbuf.h"
#include "queue/job.h"
#include "queue/store.h"

/* The length of the valid UTF-8 sequence at s (n bytes left), or 0 when invalid. */
static size_t
utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len, i;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates, beyond U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

struct json_t *
qj_json_string(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	struct strbuf sb;
	json_t *o;
	size_t i = 0, n;

	if (!s)
		return json_string("");
	for (i = 0; i < len; i += n) {
		n = utf8_seq(p + i, len - i);
		if (!n || !p[i])
			break;
	}
	if (i == len)
		return json_stringn(s, len);
	strbuf_init(&sb, len + 8);
	for (i = 0; i < len; i += n) {
		n = utf8_seq(p + i, len - i);
		if (!n || !p[i]) {
			/* U+FFFD for a bad byte (and for NUL, which the wire text must not hold) */
			strbuf_add(&sb, "\xef\xbf\xbd", 3);
			n = 1;
		} else {
			strbuf_add(&sb, s + i, n);
		}
	}
	o = json_stringn(sb.buf, sb.len);
	strbuf_release(&sb);
	return o;
}

static json_t *
jstr(const char *s)
{
	return qj_json_string(s, s ? strlen(s) : 0);
}

/* A NUL-separated list (argv) as an array of strings. */
static json_t *
list_array(const char *list, size_t len)
{
	json_t *a = json_array();
	size_t i = 0, n;

	while (list && i < len) {
		n = strnlen(list + i, len - i);
		json_array_append_new(a, qj_json_string(list + i, n));
		i += n + 1;
	}
	return a;
}

/*
 * NAME=VALUE\0... as an object; an entry with no '=' has an empty value, an
 * entry with an empty name is left out. Names are cleaned to UTF-8 as values
 * are, since object keys must be UTF-8 too.
 */
static json_t *
env_object(const char *list, size_t len)
{
	json_t *o = json_object(), *key, *val;
	size_t i = 0, n, k;

	while (list && i < len) {
		const char *e = list + i;

		n = strnlen(e, len - i);
		for (k = 0; k < n && e[k] != '='; k++)
			;
		key = qj_json_string(e, k);
		val = k < n ? qj_json_string(e + k + 1, n - k - 1) : json_string("");
		if (json_string_length(key))
			json_object_set_new(o, json_string_value(key), val);
		else
			json_decref(val);
		json_decref(key);
		i += n + 1;
	}
	return o;
}

static json_t *
time_or_null(double t)
{
	return t > 0 ? json_real(t) : json_null();
}

static const char *
mode_name(enum qj_mode m)
{
	switch (m) {
	case QJ_MODE_EXCLUSIVE:
		return "exclusive";
	case QJ_MODE_SHARED:
		return "shared";
	case QJ_MODE_DEFAULT:
		break;
	}
	return "default";
}

struct json_t *
qjob_to_json(const struct qjob *j, bool full)
{
	json_t *o = json_object(), *a;
	unsigned i;

	json_object_set_new(o, "id", json_integer((json_int_t)j->id));
	json_object_set_new(o, "name", jstr(j->name));
	json_object_set_new(o, "user", jstr(j->user));
	json_object_set_new(o, "uid", json_integer((json_int_t)j->uid));
	json_object_set_new(o, "state", json_string(qj_state_name(j->state)));
	json_object_set_new(o, "reason", jstr(j->reason));
	json_object_set_new(o, "priority", json_integer(j->req.priority));
	json_object_set_new(o, "gpus", json_integer(j->req.gpus));
	json_object_set_new(o, "gpu_mem",
	                    j->req.gpu_mem ? json_integer((json_int_t)j->req.gpu_mem)
	                                   : json_null());
	json_object_set_new(o, "mode", json_string(mode_name(j->req.mode)));
	json_object_set_new(o, "preemptible", json_boolean(j->req.preemptible));
	json_object_set_new(o, "requeue", json_boolean(j->req.requeue_on_loss));
	json_object_set_new(o, "time_limit",
	                    j->req.time_limit ? json_integer(j->req.time_limit) : json_null());
	json_object_set_new(o, "grace", j->req.grace ? json_integer(j->req.grace) : json_null());

	a = json_array();
	for (i = 0; i < j->req.nr_after && i < QJ_MAX_AFTER; i++)
		json_array_append_new(a, json_integer((json_int_t)j->req.after[i]));
	json_object_set_new(o, "after", a);
	a = json_array();
	for (i = 0; i < j->req.nr_want && i < QJ_MAX_GPUS; i++)
		json_array_append_new(a, qj_json_string(j->req.want_uuid[i],
		                                        strnlen(j->req.want_uuid[i], QJ_UUID_LEN)));
	json_object_set_new(o, "want_uuids", a);
	a = json_array();
	for (i = 0; i < j->nr_gpu && i < QJ_MAX_GPUS; i++)
		json_array_append_new(
		        a, qj_json_string(j->gpu_uuid[i], strnlen(j->gpu_uuid[i], QJ_UUID_LEN)));
	json_object_set_new(o, "gpu_uuids", a);

	json_object_set_new(o, "submit_time", time_or_null(j->submit_time));
	json_object_set_new(o, "start_time", time_or_null(j->start_time));
	json_object_set_new(o, "end_time", time_or_null(j->end_time));
	json_object_set_new(o, "exit_code", j->has_exit ? json_integer(j->exit_code) : json_null());
	json_object_set_new(o, "exit_signal",
	                    j->has_exit && j->exit_signal ? json_integer(j->exit_signal)
	                                                  : json_null());
	json_object_set_new(o, "restarts", json_integer(j->restarts));
	json_object_set_new(o, "gpu_seconds", json_real(j->gpu_seconds));
	json_object_set_new(o, "peak_gpu_mem", json_integer((json_int_t)j->peak_gpu_mem));
	json_object_set_new(o, "cwd", jstr(qjob_str(j->cwd)));
	json_object_set_new(o, "argv", list_array(j->argv, j->argv_len));
	json_object_set_new(o, "output", jstr(qjob_str(j->out_path)));
	json_object_set_new(o, "error", jstr(qjob_str(j->err_path)));
	if (full)
		json_object_set_new(o, "env", env_object(j->env, j->env_len));
	return o;
}

struct json_t *
qevent_to_json(const struct qevent *e, const char *user)
{
	json_t *o = json_object(), *detail = NULL;

	json_object_set_new(o, "id", json_integer((json_int_t)e->id));
	json_object_set_new(o, "time", json_real(e->time));
	json_object_set_new(o, "job", json_integer((json_int_t)e->job));
	json_object_set_new(o, "user", user ? jstr(user) : json_null());
	json_object_set_new(o, "uid",
	                    e->uid == (uid_t)-1 ? json_null() : json_integer((json_int_t)e->uid));
	json_object_set_new(o, "kind", jstr(e->kind));
	json_object_set_new(o, "text", jstr(e->text));
	if (e->detail)
		detail = json_loads(e->detail, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(detail)) {
		json_decref(detail);
		detail = json_object();
	}
	json_object_set_new(o, "detail", detail);
	return o;
}
