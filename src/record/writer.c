/*
 * The flight recorder's writer: records appended with one write(2) each to
 * a file opened O_APPEND and locked, a keyframe every keyframe_every
 * records (and whenever the GPUs change), fdatasync() at most every
 * sync_every seconds, rotation before a file passes max_bytes, and, on
 * opening an existing recording, the repair of a torn last record.
 */
#include "record/record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "record/internal.h"

struct rec_writer {
	char *path;
	struct rec_options o;
	int fd;        /* -1 after a failed rotation: the next append opens path again */
	uint64_t size; /* of the file */
	uint64_t data; /* where its records start */
	bool rotate;   /* rotate before the next record: the file has other field counts */
	bool unsynced; /* written since the last fdatasync() */
	double synced; /* clock_mono() of the last fdatasync(), < 0: none yet */
	/* records since the last keyframe, it included; 0: a keyframe is next */
	unsigned since_key;
	size_t last_size;
	struct gpu_snapshot prev; /* the last sample written */
	struct strbuf rec;
	struct rec_enc enc;
};

void
rec_options_init(struct rec_options *o)
{
	o->max_bytes = (uint64_t)64 << 20;
	o->keep = 4;
	o->keyframe_every = 60;
	o->sync_every = 10;
}

static int
sync_file(struct rec_writer *w, struct err *err)
{
	if (fdatasync(w->fd)) {
		int e = errno;

		return err_set(err, E_IO, "cannot sync '%s': %s", w->path, strerror(e));
	}
	w->unsynced = false;
	w->synced = clock_mono();
	return 0;
}

/* Make the file a new recording: truncated, with a header; the next record is a keyframe. */
static int
start_file(struct rec_writer *w, struct err *err)
{
	struct strbuf hdr = STRBUF_INIT;
	int e;

	rec_build_header(&hdr);
	if (ftruncate(w->fd, 0)) {
		e = errno;
		strbuf_release(&hdr);
		return err_set(err, E_IO, "cannot truncate '%s': %s", w->path, strerror(e));
	}
	w->size = 0;
	e = rec_write_all(w->fd, hdr.buf, hdr.len);
	if (!e)
		w->size = w->data = hdr.len;
	strbuf_release(&hdr);
	if (e)
		return err_set(err, E_IO, "cannot write to '%s': %s", w->path, strerror(e));
	w->since_key = 0;
	w->rotate = false;
	rec_sync_dir(w->path);
	return sync_file(w, err);
}

/* The end of the last good record of f (its header's end when there is none). */
static int
last_good_end(const struct rfile *f, uint64_t *out, struct err *err)
{
	struct strbuf tmp = STRBUF_INIT;
	uint64_t off = f->data, end = f->data, next;
	unsigned long intact;
	unsigned type;
	int rc;

	for (;;) {
		rc = rec_frame_at(f, off, &tmp, &type, &next, err);
		if (rc == FR_OK) {
			off = end = next;
			continue;
		}
		if (rc != FR_BAD)
			break;
		rc = rec_resync(f, off + 1, false, &tmp, &off, &intact, err);
		if (rc <= 0)
			break;
	}
	strbuf_release(&tmp);
	*out = end;
	return rc < 0 ? rc : 0;
}

/* Take over the file open on w->fd, of size bytes: check it is a recording, cut a torn tail. */
static int
adopt(struct rec_writer *w, uint64_t size, struct err *err)
{
	struct rfile f = { w->path, w->fd, size, 0, 0, 0, 0 };
	enum hdr_state st;
	uint64_t end;
	int rc = rec_read_header(&f, &st, err);

	if (rc < 0)
		return rc;
	switch (st) {
	case HDR_NOT:
		return err_set(
		        err, E_USAGE,
		        "'%s' exists and is not a gpuscope recording: refusing to write to it",
		        w->path);
	case HDR_BAD:
		return err_set(
		        err, E_PARSE,
		        "'%s' is a recording with a damaged header: refusing to append to it",
		        w->path);
	case HDR_VERSION:
		return err_set(
		        err, E_VERSION,
		        "'%s' is a recording of format version %u; this gpuscope writes version %d",
		        w->path, f.version, FORMAT_VERSION);
	case HDR_TORN:
		return start_file(w, err);
	case HDR_OK:
		break;
	}
	rc = last_good_end(&f, &end, err);
	if (rc < 0)
		return rc;
	if (end < size && ftruncate(w->fd, (off_t)end)) {
		int e = errno;

		return err_set(err, E_IO, "cannot cut the torn end of '%s': %s", w->path,
		               strerror(e));
	}
	w->size = end;
	w->data = f.data;
	w->since_key = 0;
	/*
	 * a file's header says which fields its records know, and which
	 * version of the format they are in: start a new file for ours
	 */
	w->rotate = f.nr_gf != GF__COUNT || f.nr_pf != PF__COUNT || f.version != FORMAT_VERSION;
	return 0;
}

static int
open_file(struct rec_writer *w, struct err *err)
{
	struct stat st;
	int e;

	w->fd = open(w->path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		e = errno;
		return err_set(err, errno_status(e), "cannot open '%s' for recording: %s", w->path,
		               strerror(e));
	}
	if (fstat(w->fd, &st)) {
		e = errno;
		return err_set(err, E_IO, "cannot stat '%s': %s", w->path, strerror(e));
	}
	if (!S_ISREG(st.st_mode))
		return err_set(err, E_USAGE,
		               "'%s' is not a regular file: refusing to record into it", w->path);
	if (flock(w->fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK)
		return err_set(err, E_BUSY, "'%s' is being recorded by another process", w->path);
	return adopt(w, (uint64_t)st.st_size, err);
}

static void
writer_free(struct rec_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	free(w->path);
	gpu_snapshot_release(&w->prev);
	strbuf_release(&w->rec);
	rec_enc_release(&w->enc);
	free(w);
}

int
rec_writer_open(const char *path, const struct rec_options *o, struct rec_writer **out,
                struct err *err)
{
	struct rec_writer *w;
	int rc;

	*out = NULL;
	if (o->keep < 1 || o->keyframe_every < 1 || !(o->sync_every >= 0))
		return err_set(
		        err, E_USAGE,
		        "cannot record into '%s': keep and keyframe_every must be at least 1, "
		        "sync_every not negative",
		        path);
	w = xcalloc(1, sizeof(*w));
	w->path = xstrdup(path);
	w->o = *o;
	w->synced = -1;
	gpu_snapshot_init(&w->prev);
	strbuf_init(&w->rec, 0);
	rec_enc_init(&w->enc);
	rc = open_file(w, err);
	if (rc < 0) {
		writer_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

/* Rename path.(i-1) to path.i ... path to path.1, and start a new path. */
static int
rotate(struct rec_writer *w, struct err *err)
{
	int rc = 0, e;

	if (w->unsynced) {
		rc = sync_file(w, err);
		if (rc < 0)
			return rc;
	}
	if (w->o.keep <= 1)
		return start_file(w, err);
	for (unsigned i = w->o.keep - 1; i >= 1 && !rc; i--) {
		char *from = i > 1 ? rec_rotated_name(w->path, i - 1) : xstrdup(w->path);
		char *to = rec_rotated_name(w->path, i);

		if (rename(from, to) && (errno != ENOENT || i == 1)) {
			e = errno;
			rc = err_set(err, E_IO, "cannot rename '%s' to '%s': %s", from, to,
			             strerror(e));
		}
		free(from);
		free(to);
	}
	if (rc < 0)
		return rc;
	close(w->fd);
	w->fd = open(w->path, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		e = errno;
		return err_set(err, E_IO, "cannot create '%s': %s", w->path, strerror(e));
	}
	flock(w->fd, LOCK_EX | LOCK_NB);
	return start_file(w, err);
}

/* What the format cannot hold, or a reader would refuse. */
static int
check_snapshot(const struct rec_writer *w, const struct gpu_snapshot *s, struct err *err)
{
	if (s->nr_dev > MAX_DEV || s->nr_proc > MAX_PROC || s->nr_note > MAX_NOTE)
		return err_set(err, E_USAGE,
		               "cannot record %zu GPUs, %zu processes and %zu notes into '%s' "
		               "(at most %d, %d and %d)",
		               s->nr_dev, s->nr_proc, s->nr_note, w->path, MAX_DEV, MAX_PROC,
		               MAX_NOTE);
	for (size_t i = 0; i < s->nr_dev; i++) {
		const struct gpu_device *d = &s->dev[i];
		const struct clock_levels *l[2] = { &d->levels_gfx, &d->levels_mem };
		bool bad = d->nr_engine > GPU_MAX_ENGINES || (unsigned)d->vendor > VENDOR_OTHER ||
		           (unsigned)d->state > DEV_SUSPENDED;

		for (unsigned k = 0; k < 2; k++)
			bad |= l[k]->nr > MAX_LEVELS || l[k]->current < -1 ||
			       l[k]->current >= MAX_LEVELS;
		if (bad)
			return err_set(
			        err, E_USAGE,
			        "cannot record GPU %zu into '%s': its engines, clock levels, "
			        "vendor or state are out of range",
			        i, w->path);
	}
	for (size_t i = 0; i < s->nr_proc; i++) {
		const struct gpu_proc *p = &s->proc[i];

		if (p->dev >= s->nr_dev || p->nr_engine > GPU_MAX_ENGINES ||
		    (unsigned)p->host > PHOST_NOT_VISIBLE)
			return err_set(
			        err, E_USAGE,
			        "cannot record process %u into '%s': its GPU, engines or host "
			        "state are out of range",
			        p->pid, w->path);
	}
	for (size_t i = 0; i < s->nr_note; i++)
		if (!s->note[i])
			return err_set(err, E_USAGE, "cannot record a NULL note into '%s'",
			               w->path);
	return 0;
}

/* The whole record (frame and payload) in w->rec. */
static void
build_record(struct rec_writer *w, const struct gpu_snapshot *s, bool key)
{
	strbuf_reset(&w->rec);
	strbuf_addchars(&w->rec, 0, REC_HDR);
	if (key)
		rec_put_keyframe(&w->rec, s);
	else
		rec_put_delta(&w->enc, &w->rec, &w->prev, s);
	rec_frame(&w->rec, key ? REC_KEYFRAME : REC_DELTA);
}

int
rec_writer_append(struct rec_writer *w, const struct gpu_snapshot *snap, struct err *err)
{
	bool key;
	int rc, e;

	w->last_size = 0;
	rc = check_snapshot(w, snap, err);
	if (rc < 0)
		return rc;
	if (w->fd < 0) {
		/* a rotation failed after the renames: start over on path */
		rc = open_file(w, err);
		if (rc < 0) {
			if (w->fd >= 0)
				close(w->fd);
			w->fd = -1;
			return rc;
		}
	}
	if (w->rotate) {
		/* the file's header has other field counts: a new file, unless it is empty */
		rc = w->size > w->data ? rotate(w, err) : start_file(w, err);
		if (rc < 0)
			return rc;
	}
	key = !w->since_key || w->since_key >= w->o.keyframe_every ||
	      !rec_same_devices(&w->prev, snap);
	build_record(w, snap, key);
	if (w->rec.len - REC_HDR > REC_MAX)
		return err_set(err, E_USAGE,
		               "a sample of %zu bytes is too large to record into '%s'", w->rec.len,
		               w->path);
	if (w->o.max_bytes && w->size > w->data && w->size + w->rec.len > w->o.max_bytes) {
		rc = rotate(w, err);
		if (rc < 0)
			return rc;
		if (!key)
			build_record(w, snap, (key = true));
	}
	e = rec_write_all(w->fd, w->rec.buf, w->rec.len);
	if (e) {
		/*
		 * Leave no torn record behind; should that fail, the keyframe
		 * that comes next lets a reader resynchronise.
		 */
		int cut = ftruncate(w->fd, (off_t)w->size);

		w->since_key = 0;
		return err_set(err, E_IO, "cannot write to '%s': %s%s", w->path, strerror(e),
		               cut ? " (and cannot cut off the partial record)" : "");
	}
	w->size += w->rec.len;
	w->unsynced = true;
	w->last_size = w->rec.len;
	w->since_key = key ? 1 : w->since_key + 1;
	rec_snapshot_copy(&w->prev, snap);
	if (w->o.sync_every > 0 && w->synced >= 0 && clock_mono() - w->synced < w->o.sync_every)
		return 0;
	return sync_file(w, err);
}

size_t
rec_writer_last_size(const struct rec_writer *w)
{
	return w->last_size;
}

int
rec_writer_close(struct rec_writer *w, struct err *err)
{
	int rc = 0;

	if (!w)
		return 0;
	if (w->fd >= 0 && w->unsynced)
		rc = sync_file(w, err);
	if (w->fd >= 0 && close(w->fd) && !rc) {
		int e = errno;

		rc = err_set(err, E_IO, "cannot close '%s': %s", w->path, strerror(e));
	}
	w->fd = -1;
	writer_free(w);
	return rc;
}
