/*
 * A log given to doctor --log, read into lines of text for the kernel-log
 * check: a file, a pipe or standard input; gzip'd (nvidia-bug-report.log.gz)
 * or not; the journal's JSON export turned into one line per record; an
 * nvidia-bug-report log with its base64 blocks skipped and the kernel lines
 * it repeats in several sections kept once; an amdgpu or Xe devcoredump
 * given lines that the drm decoder reads.
 */
#ifndef GPUSCOPE_DOCTOR_LOGREAD_H
#define GPUSCOPE_DOCTOR_LOGREAD_H

#include <stddef.h>

struct strbuf;

/*
 * Read path ("-": standard input) into out as text, NUL-terminated, with no
 * NUL inside, at most max bytes once unpacked. Returns 0, or -1 with a
 * one-line reason in why ("kern.log: is a directory: give a log file ...").
 */
int dr_log_load(const char *path, struct strbuf *out, size_t max, char *why, size_t why_size);

/*
 * The same on bytes already read (the tests' and the fuzzer's way in):
 * gzip inflated, the formats above recognised. name is for the reasons.
 */
int dr_log_text(const char *name, const char *data, size_t len, struct strbuf *out, size_t max,
                char *why, size_t why_size);

#endif
