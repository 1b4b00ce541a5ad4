/*
 * A job and an event as the queue's JSON objects (the JOB and EVENT objects
 * of docs/queue.md and the wire protocol), and the parsers of the sizes and
 * durations users type ("20G", "2h", "1-12:00:00"), shared by the daemon
 * (config, submit) and the command line.
 */
#ifndef GPUSCOPE_QUEUE_JOBJSON_H
#define GPUSCOPE_QUEUE_JOBJSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_t;
struct qjob;
struct qevent;

/*
 * A new JSON object (the caller owns the reference) with the JOB keys: id,
 * name, user, uid, state, reason (as is), priority, gpus (the count asked),
 * gpu_mem (bytes or null), mode ("default", "exclusive", "shared"),
 * preemptible, requeue, time_limit (s or null), grace (s or null), after
 * [ids], want_uuids [the --gpu UUIDs asked], gpu_uuids [given], submit_time,
 * start_time, end_time (epoch seconds as JSON reals, null when not yet),
 * exit_code and exit_signal (int or null), restarts, gpu_seconds,
 * peak_gpu_mem, cwd, argv [..], output, error. full adds env {NAME: VALUE}
 * (for the owner or an admin). est_start, code, gpu_indices and events are
 * the daemon's to add. Strings that are not UTF-8 have their bad bytes
 * replaced by U+FFFD, so that this never fails.
 */
struct json_t *qjob_to_json(const struct qjob *j, bool full);

/*
 * The EVENT object: id, time (real), job, user (the name given, null when
 * NULL), uid (null for the daemon's own), kind, text, detail (the stored object, {} when there is
 * none or it does not parse). The caller owns the reference.
 */
struct json_t *qevent_to_json(const struct qevent *e, const char *user);

/*
 * A JSON string of the len bytes at s, with invalid UTF-8 replaced by
 * U+FFFD (never NULL). The caller owns the reference.
 */
struct json_t *qj_json_string(const char *s, size_t len);

/*
 * Bytes from "512M", "20G", "20GiB", "20GB", "1.5T", "4096", "4096B"
 * (units K M G T P E, case-insensitive, all binary: G = 2^30). 0 on success,
 * E_PARSE on anything else (and on a value over 2^64 - 1); *bytes is set
 * only on success.
 */
int qj_parse_size(const char *s, uint64_t *bytes);

/*
 * Seconds from "90" (seconds), "90s", "10m", "2h", "1d", sums such as
 * "1h30m", and Slurm's clock forms "M:S", "H:M:S", "D-H", "D-H:M",
 * "D-H:M:S" ("1:30:00" = 5400, "2-00:00:00" = 172800). 0 on success,
 * E_PARSE on anything else (and on more than 2^32 - 1 seconds); *sec is set
 * only on success.
 */
int qj_parse_duration(const char *s, uint32_t *sec);

#endif
