/*
 * The doctor for front ends that sample all the time (top, serve, watch):
 * health.* and workload.* over the last samples they took, nothing of the
 * machine's set-up and no kernel log. A front end keeps its samples in a
 * struct dr_live (copies, at most DR_LIVE_SAMPLES, the oldest dropped) and
 * asks for the findings as often as it likes: they are worked out again at
 * most once every DR_LIVE_EVERY seconds of the samples' own time, so that a
 * display refreshed ten times a second runs the checks once a second.
 */
#ifndef GPUSCOPE_DOCTOR_LIVE_H
#define GPUSCOPE_DOCTOR_LIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/gpu.h"
#include "doctor/doctor.h"

struct strbuf;

/*
 * A minute at the default interval of one second; workload patterns need 6.
 * The copies are held to about DR_LIVE_BYTES (a machine with a thousand GPU
 * processes keeps fewer samples), but never to fewer than DR_LIVE_MIN.
 */
#define DR_LIVE_SAMPLES 60
#define DR_LIVE_MIN     6
#define DR_LIVE_BYTES   (1u << 20)
/* Seconds of sample time between two runs of the checks. */
#define DR_LIVE_EVERY 1.0

/*
 * Run dr_check_health and dr_check_workload over s[0..nr) (oldest first;
 * nr 0 gives an empty report), each sample taken interval seconds apart;
 * recorded: the samples come from a recording. Findings go to r, worst
 * first (in the order found within a severity); workload.window_short is
 * left out (a live window grows by itself).
 */
void dr_live(const struct gpu_snapshot *s, size_t nr, double interval, bool recorded,
             struct dr_report *r);

struct dr_live {
	struct gpu_snapshot ring[DR_LIVE_SAMPLES]; /* owned copies */
	size_t bytes[DR_LIVE_SAMPLES];             /* what each copy holds, about */
	size_t nr, head, total;                    /* samples held; slot of the oldest; bytes */
	double interval;                           /* seconds between samples, as asked */
	bool recorded;                             /* the samples come from a recording */
	struct dr_report report;                   /* the last run's findings */
	double ran_at;                             /* the newest sample's time at that run */
	bool ran, changed;                         /* a run happened; its findings differ */
};

void dr_live_init(struct dr_live *l, double interval, bool recorded);
void dr_live_release(struct dr_live *l);

/*
 * Keep a copy of s (processes and all); the oldest go when DR_LIVE_SAMPLES
 * are held, or when the copies pass DR_LIVE_BYTES (down to DR_LIVE_MIN).
 */
void dr_live_push(struct dr_live *l, const struct gpu_snapshot *s);

/*
 * The findings over the samples held, worked out again when DR_LIVE_EVERY
 * seconds of sample time have passed since the last run (or none ran).
 * Returns whether they were; l->changed then says whether they differ from
 * the run before (the ids, severities or titles of those worse than ok).
 */
bool dr_live_update(struct dr_live *l);

/*
 * The GPU a finding is about, from its title ("GPU 3 (...): ...", "... on
 * GPU 3"), or -1 when it names none or several.
 */
int dr_live_gpu(const struct dr_finding *f);

/* The title without its leading "GPU N (name, bus id): " label. */
const char *dr_live_short_title(const struct dr_finding *f);

/* The number of findings in r worse than ok. */
size_t dr_live_count(const struct dr_report *r);

/*
 * The findings worse than ok as a JSON array: [{"id", "severity", "gpu"
 * (number or null), "title", "evidence" (array), "meaning", "action"}].
 */
void dr_live_json(struct strbuf *sb, const struct dr_report *r);

/*
 * The findings as one JSON document (no newline): {"schema":
 * "gpuscope.findings/1", "time" (the newest sample's), "samples" (how many
 * were judged), "worst" ("ok", "info", "warning", "error"), "findings"
 * (dr_live_json's array)}. watch --findings writes it as a record of its
 * own; serve answers it at /api/findings.
 */
#define DR_LIVE_JSON_SCHEMA "gpuscope.findings/1"
void dr_live_doc(struct strbuf *sb, const struct dr_report *r, double time, size_t samples);

#endif
