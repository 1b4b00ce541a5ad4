/*
 * The flight recorder's file: every sample (devices and processes) appended
 * to a compact file that survives a crash or a power cut mid-write.
 *
 * A file is a header, then records. Each record is framed (magic, length,
 * CRC-32 of the payload) and written with one write(2) to a file opened
 * O_APPEND, so a crash can only leave its last record torn; the reader
 * detects that (a length past the end, a bad CRC) and stops before it,
 * keeping everything earlier. A record is a keyframe (the whole snapshot)
 * or a delta against the record before it (only what changed); a keyframe
 * is written every keyframe_every records and at the start of every file,
 * so a reader can start at any keyframe, and corruption in the middle of a
 * file costs at most the records up to the next keyframe.
 *
 * Size: the writer rotates when a file would pass max_bytes: FILE becomes
 * FILE.1 (FILE.1 becomes FILE.2, ...), keeping at most keep files in all.
 * A reader opened on FILE reads the rotated files first, oldest first.
 *
 * What is recorded is the sample model as front ends see it (struct
 * gpu_snapshot): every member of every device and process, numeric fields,
 * strings, Xid counts, exactly: a snapshot read back compares equal to the
 * one written (rec_snapshot_equal()), by the member tables of
 * record/snapshot.c. The format is described in docs/record-format.md; a
 * reader reads every version of it, a writer writes the latest.
 *
 * The code: record/snapshot.c (member tables, copy, compare), codec.c
 * (payloads), frame.c (header, frames, CRC, resynchronisation), writer.c,
 * reader.c, and feed_replay.c (the replay feed, record/replay.h).
 */
#ifndef GPUSCOPE_RECORD_RECORD_H
#define GPUSCOPE_RECORD_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct err;
struct gpu_snapshot;

struct rec_options {
	uint64_t max_bytes;      /* rotate before a file passes this size (0: never) */
	unsigned keep;           /* files kept in all, FILE included (>= 1) */
	unsigned keyframe_every; /* a keyframe every this many records (>= 1) */
	double sync_every;       /* fdatasync() at most this often, seconds (0: every record) */
};

/* 64 MiB per file, 4 files, a keyframe every 60 records, a sync every 10 s. */
void rec_options_init(struct rec_options *o);

struct rec_writer;

/*
 * Open path for appending (created 0644 when missing). An existing file
 * that is a recording is appended to (after a torn last record, which is
 * cut off first); an existing file that is something else is refused with
 * E_USAGE, so a typo cannot overwrite a file. A recording with a damaged
 * header is refused with E_PARSE, one of a newer format with E_VERSION,
 * and one another writer holds (flock()) with E_BUSY.
 */
int rec_writer_open(const char *path, const struct rec_options *o, struct rec_writer **out,
                    struct err *err);

/* Append one sample. On error the file holds every earlier record intact. */
int rec_writer_append(struct rec_writer *w, const struct gpu_snapshot *snap, struct err *err);

/* Bytes the last append added (framing included), for the benchmark. */
size_t rec_writer_last_size(const struct rec_writer *w);

/* Sync and close; w may be NULL. */
int rec_writer_close(struct rec_writer *w, struct err *err);

struct rec_reader;

/*
 * Open a recording for reading: path's rotated predecessors (path.N ...
 * path.1) first, then path. Fails with E_NOTFOUND, E_PARSE (not a
 * recording) or E_VERSION (a newer format) naming the file. The files are
 * read as they were when opened: what a writer appends later is not seen.
 */
int rec_reader_open(const char *path, struct rec_reader **out, struct err *err);

/*
 * The next sample into snap (released and re-initialised first). Returns 1
 * with a sample, 0 at the end (a torn last record is the end), or a
 * negative status. Damage in the middle of a file is skipped up to the next
 * keyframe, and counted (rec_reader_skipped()).
 */
int rec_reader_next(struct rec_reader *r, struct gpu_snapshot *snap, struct err *err);

/*
 * Position the reader so that the next rec_reader_next() returns the last
 * sample taken at or before time t (the first one when t is earlier than
 * all). Returns 0, or E_NOTFOUND when the recording is empty.
 */
int rec_reader_seek(struct rec_reader *r, double t, struct err *err);

/* Times of the first and last sample of the recording (0, 0 when empty). */
void rec_reader_span(struct rec_reader *r, double *first, double *last);

/* Records skipped because they were damaged (not counting a torn last record). */
unsigned long rec_reader_skipped(const struct rec_reader *r);

/*
 * The files of the recording that were passed over when it was opened
 * (damaged, not a recording, a version this gpuscope does not read, or
 * unreadable), one line each naming the file: the rest was read. A command
 * prints them as warnings.
 */
size_t rec_reader_nr_warnings(const struct rec_reader *r);
const char *rec_reader_warning(const struct rec_reader *r, size_t i);
/* Print them to stderr, "gpuscope: warning: ..." each. */
void rec_reader_warn(const struct rec_reader *r);

void rec_reader_close(struct rec_reader *r);

/*
 * Whether two snapshots hold the same facts: every member of the snapshot,
 * its devices and processes (record/snapshot.c lists them, and the few it
 * leaves out, with the reason), and every byte of a device or process no
 * member covers. What a round trip through a recording must keep. When
 * they differ and why is not NULL, it says where first, naming the member.
 */
bool rec_snapshot_equal(const struct gpu_snapshot *a, const struct gpu_snapshot *b, char *why,
                        size_t why_size);

#endif
