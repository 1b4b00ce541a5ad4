/*
 * JSON output: a few writer helpers, and the status document whose schema
 * docs/json-schema.md describes (schema "gpuscope.status/1").
 */
#ifndef GPUSCOPE_JSON_H
#define GPUSCOPE_JSON_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf;
struct gpu_snapshot;

#define JSON_STATUS_SCHEMA "gpuscope.status/1"
#define JSON_WATCH_SCHEMA  "gpuscope.watch/1"

/* Whether s is all of one number as JSON spells it (no hex, no leading zeros, no '+'). */
bool json_is_number(const char *s);

/* Append s as a JSON string (quoted, escaped; invalid UTF-8 bytes become U+FFFD). */
void json_str(struct strbuf *sb, const char *s);
/* Append a number with at most decimals digits after the point, trailing zeros dropped; NaN/inf →
 * null. */
void json_num(struct strbuf *sb, double v, int decimals);

/*
 * Append the status document for snap. pretty: indented, one key per line;
 * else one line (newline-delimited JSON friendly). with_procs: include the
 * "processes" array.
 */
void json_status(struct strbuf *sb, const struct gpu_snapshot *snap, bool pretty, bool with_procs);

/*
 * Append one line of `gpuscope watch --format ndjson`: device dev of snap as
 * one JSON object on one line (valid alone), its members those of a device
 * of the status document after schema, time, time_iso, hostname and
 * simulated.
 */
void json_watch_line(struct strbuf *sb, const struct gpu_snapshot *snap, size_t dev);

#endif
