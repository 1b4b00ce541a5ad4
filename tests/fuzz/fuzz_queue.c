/*
 * libFuzzer target: what the queue daemon reads from others, its
 * configuration file (qconf_parse(), src/queue/conf.c) and the lines its
 * clients send (qproto_decode(), src/queue/proto.c), with the parsers of
 * what users type (qj_parse_size(), qj_parse_duration(), src/queue/job.c).
 *
 * The first byte picks the parser; the rest is its input.
 *   0: the configuration text. qconf_parse() returns 0 or a negative
 *      status with a message naming the file; a refusal leaves the
 *      configuration as it was (its defaults, compared field by field for
 *      the scalars); an accepted one has a non-empty socket and state_dir,
 *      a positive sample interval, and a second parse of the same text
 *      gives the same answer.
 *   1: one protocol line. qproto_decode() gives an object, or E_PARSE with
 *      a message; an object encodes back into one line with its newline
 *      and no newline inside, which decodes again.
 *   2: a size and a duration (the text up to a NUL, then the rest).
 *      Parsing never writes the result on failure, and a size printed back
 *      in bytes parses to the same number.
 *   3: log data: qj_json_string() of any bytes is a valid string that
 *      encodes.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "core/err.h"
#include "core/strbuf.h"
#include "fuzz.h"
#include "queue/conf.h"
#include "queue/jobjson.h"
#include "queue/proto.h"

static void
fuzz_conf(const char *text, size_t len)
{
	struct qconf c, d;
	struct err err = ERR_INIT, err2 = ERR_INIT;
	int rc, rc2;

	qconf_defaults(&c);
	qconf_defaults(&d);
	rc = qconf_parse(&c, text, len, "fuzz.conf", &err);
	if (rc < 0) {
		FUZZ_CHECK(err.msg[0], "refused without a message");
		FUZZ_CHECK(!strncmp(err.msg, "fuzz.conf", 9),
		           "the message does not name the file: %s", err.msg);
		FUZZ_CHECK(!strcmp(c.socket, d.socket) && !strcmp(c.state_dir, d.state_dir) &&
		                   c.default_mode == d.default_mode && c.grace == d.grace &&
		                   c.jobs_per_gpu == d.jobs_per_gpu && c.nr_limit == 0 &&
		                   c.nr_gpu == 0,
		           "a refused file changed the configuration");
	} else {
		FUZZ_CHECK(rc == 0, "qconf_parse returned %d", rc);
		FUZZ_CHECK(c.socket[0] && c.state_dir[0],
		           "an empty socket or state_dir was accepted");
		FUZZ_CHECK(c.sample_interval > 0, "sample_interval %g", c.sample_interval);
	}
	qconf_release(&c);
	qconf_defaults(&c);
	rc2 = qconf_parse(&c, text, len, "fuzz.conf", &err2);
	FUZZ_CHECK((rc < 0) == (rc2 < 0), "two parses disagree: %d then %d", rc, rc2);
	qconf_release(&c);
	qconf_release(&d);
}

static void
fuzz_line(const char *line, size_t len)
{
	struct err err = ERR_INIT;
	struct strbuf sb = STRBUF_INIT;
	json_t *msg = NULL, *again = NULL;
	int rc = qproto_decode(line, len, &msg, &err);

	if (rc < 0) {
		FUZZ_CHECK(!msg, "a refused line gave an object");
		FUZZ_CHECK(err.msg[0], "refused without a message");
		return;
	}
	FUZZ_CHECK(json_is_object(msg), "decoded to a non-object");
	if (qproto_encode(msg, &sb) == 0) {
		FUZZ_CHECK(sb.len > 0 && sb.buf[sb.len - 1] == '\n', "encoded without its newline");
		FUZZ_CHECK(!memchr(sb.buf, '\n', sb.len - 1), "a newline inside an encoded line");
		err_clear(&err);
		FUZZ_CHECK(qproto_decode(sb.buf, sb.len - 1, &again, &err) == 0,
		           "an encoded line does not decode: %s", err.msg);
		FUZZ_CHECK(json_equal(msg, again), "a line changed through encode and decode");
		json_decref(again);
	}
	strbuf_release(&sb);
	json_decref(msg);
}

static void
fuzz_units(const char *data, size_t len)
{
	char a[64], b[64], back[32];
	size_t na = strnlen(data, len), nb;
	uint64_t bytes = 12345, bytes2 = 0;
	uint32_t sec = 777;

	if (na >= sizeof(a))
		na = sizeof(a) - 1;
	memcpy(a, data, na);
	a[na] = 0;
	nb = len > na + 1 ? len - na - 1 : 0;
	if (nb >= sizeof(b))
		nb = sizeof(b) - 1;
	memcpy(b, data + (len > na ? na + 1 : len), nb);
	b[nb] = 0;
	if (qj_parse_size(a, &bytes) < 0) {
		FUZZ_CHECK(bytes == 12345, "a refused size was written");
	} else {
		snprintf(back, sizeof(back), "%llu", (unsigned long long)bytes);
		FUZZ_CHECK(qj_parse_size(back, &bytes2) == 0 && bytes2 == bytes,
		           "%s read as %llu does not read back", a, (unsigned long long)bytes);
	}
	if (qj_parse_duration(b, &sec) < 0)
		FUZZ_CHECK(sec == 777, "a refused duration was written");
}

static void
fuzz_lossy(const char *data, size_t len)
{
	json_t *s = qj_json_string(data, len);
	char *text;

	FUZZ_CHECK(s && json_is_string(s), "qj_json_string gave no string");
	text = json_dumps(s, JSON_ENCODE_ANY);
	FUZZ_CHECK(text, "a lossy string does not encode");
	free(text);
	json_decref(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data + 1;

	if (size < 1)
		return 0;
	switch (data[0] % 4) {
	case 0:
		fuzz_conf(text, size - 1);
		break;
	case 1:
		fuzz_line(text, size - 1);
		break;
	case 2:
		fuzz_units(text, size - 1);
		break;
	default:
		fuzz_lossy(text, size - 1);
		break;
	}
	return 0;
}
