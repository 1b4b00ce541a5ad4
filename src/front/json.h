/*
 * The status document whose schema docs/json-schema.md describes (schema
 * "gpuscope.status/1"), and watch's ndjson lines. The JSON primitives are
 * core/json.h.
 */
#ifndef GPUSCOPE_JSON_H
#define GPUSCOPE_JSON_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf;
struct gpu_snapshot;

#define JSON_STATUS_SCHEMA "gpuscope.status/1"
#define JSON_WATCH_SCHEMA  "gpuscope.watch/1"

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
