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

/*
 * Open path for appending, creating it when there is none. A symbolic link
 * is followed to a file that exists, never to create one: O_EXCL refuses to
 * create through a link (as root, a dangling link would make its target
 * anywhere). Returns the descriptor, or a negative status.
 */
static int
open_or_create(const char *path, struct err *err)
{
	struct stat st;
	int e;

	for (int tries = 0; tries < 8; tries++) {
		/* O_NONBLOCK: opening a FIFO must not wait for its other end */
		int fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

		if (fd >= 0)
			return fd;
		e = errno;
		if (e != ENOENT)
			return err_set(err, errno_status(e), "cannot open '%s' for recording: %s",
			               path, strerror(e));
		fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0644);
		if (fd >= 0)
			return fd;
		e = errno;
		if (e != EEXIST)
			return err_set(err, errno_status(e), "cannot create '%s' for recording: %s",
			               path, strerror(e));
		if (!lstat(path, &st) && S_ISLNK(st.st_mode))
			return err_set(err, E_USAGE,
			               "'%s' is a symbolic link to a file that does not exist: "
			               "refusing to create its target (remove the link, or name "
			               "the file itself)",
			               path);
		/* another process created it since: open what it made */
	}
	return err_set(err, E_IO, "cannot open '%s' for recording: it keeps changing", path);
}

/* Does path still name the file open on fd? */
static bool
still_named(int fd, const char *path)
{
	struct stat a, b;

	return !fstat(fd, &a) && !stat(path, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static int
open_file(struct rec_writer *w, struct err *err)
{
	struct stat st;
	int e;

	for (int tries = 0;; tries++) {
		w->fd = open_or_create(w->path, err);
		if (w->fd < 0)
			return w->fd;
		if (fstat(w->fd, &st)) {
			e = errno;
			return err_set(err, E_IO, "cannot stat '%s': %s", w->path, strerror(e));
		}
		if (!S_ISREG(st.st_mode))
			return err_set(err, E_USAGE,
			               "'%s' is not a regular file: refusing to record into it",
			               w->path);
		if (flock(w->fd, LOCK_EX | LOCK_NB)) {
			e = errno;
			if (e == EWOULDBLOCK)
				return err_set(err, E_BUSY,
				               "'%s' is being recorded by another process",
				               w->path);
			return err_set(err, E_IO,
			               "cannot lock '%s' (%s): record onto a local filesystem",
			               w->path, strerror(e));
		}
		/*
		 * The recorder that held the lock may have rotated the file to
		 * FILE.1 between our open and our lock: ours is then the lock of
		 * an old file. Only the file that path names now is the recording.
		 */
		if (still_named(w->fd, w->path))
			break;
		close(w->fd);
		w->fd = -1;
		if (tries == 8)
			return err_set(
			        err, E_BUSY,
			        "'%s' is being recorded by another process (it keeps rotating)",
			        w->path);
	}
	if (fcntl(w->fd, F_SETFL, O_APPEND)) /* O_NONBLOCK off: a regular file */
		return err_set(err, E_IO, "cannot use '%s': %s", w->path, strerror(errno));
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

/*
 * The next file of the recording, made under a name no one else uses and
 * locked before anyone can see it: a second recorder that opens path at any
 * moment of a rotation finds a locked file. Returns its descriptor.
 */
static int
new_locked_file(const char *tmp, struct err *err)
{
	int fd, e;

	fd = open(tmp, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0600);
	if (fd < 0 && errno == EEXIST) {
		/* left by a recorder of this file that died while rotating: ours now */
		unlink(tmp);
		fd = open(tmp, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0600);
	}
	if (fd < 0) {
		e = errno;
		return err_set(err, errno_status(e), "cannot create '%s': %s", tmp, strerror(e));
	}
	if (flock(fd, LOCK_EX | LOCK_NB) || fchmod(fd, 0644)) {
		e = errno;
		close(fd);
		unlink(tmp);
		return err_set(err, E_IO, "cannot lock '%s': %s", tmp, strerror(e));
	}
	return fd;
}

/*
 * Put the new file tmp at path and the old one at old (path.1). Swapped in
 * one step where the filesystem can (renameat2 RENAME_EXCHANGE), so path
 * always names a locked file; else the old file is renamed and the new one
 * linked in (link fails rather than replace a file someone made between).
 */
static int
swap_in(const char *tmp, const char *path, const char *old, struct err *err)
{
	int e;

	if (!renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE)) {
		if (!rename(tmp, old))
			return 0;
		e = errno;
		return err_set(err, E_IO, "cannot rename '%s' to '%s': %s", tmp, old, strerror(e));
	}
	if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) {
		e = errno;
		return err_set(err, E_IO, "cannot rename '%s' to '%s': %s", tmp, path, strerror(e));
	}
	if (rename(path, old)) {
		e = errno;
		return err_set(err, E_IO, "cannot rename '%s' to '%s': %s", path, old, strerror(e));
	}
	if (!link(tmp, path)) {
		unlink(tmp);
		return 0;
	}
	e = errno;
	if (e == EEXIST)
		return err_set(err, E_BUSY,
		               "another process created '%s' while it was rotated: this recorder "
		               "stops (the samples so far are in '%s')",
		               path, old);
	/* no hard links here either: a plain rename, as old filesystems allow */
	if (!rename(tmp, path))
		return 0;
	e = errno;
	return err_set(err, E_IO, "cannot rename '%s' to '%s': %s", tmp, path, strerror(e));
}

/*
 * Rename path.(i-1) to path.i ... path to path.1, and start a new path.
 * On an error before the new file is in place, the old one stays open and
 * locked, and the next sample tries again.
 */
static int
rotate(struct rec_writer *w, struct err *err)
{
	char *tmp, *old;
	int rc = 0, e, fd;

	if (w->unsynced) {
		rc = sync_file(w, err);
		if (rc < 0)
			return rc;
	}
	if (w->o.keep <= 1)
		return start_file(w, err);
	tmp = xstrfmt("%s.rotating", w->path);
	fd = new_locked_file(tmp, err);
	if (fd < 0) {
		free(tmp);
		return fd;
	}
	for (unsigned i = w->o.keep - 1; i >= 2 && !rc; i--) {
		char *from = rec_rotated_name(w->path, i - 1);
		char *to = rec_rotated_name(w->path, i);

		if (rename(from, to) && errno != ENOENT) {
			e = errno;
			rc = err_set(err, E_IO, "cannot rename '%s' to '%s': %s", from, to,
			             strerror(e));
		}
		free(from);
		free(to);
	}
	old = rec_rotated_name(w->path, 1);
	if (!rc) {
		struct rec_writer was = *w;

		/* the header goes in before the file is seen */
		w->fd = fd;
		rc = start_file(w, err);
		if (!rc)
			rc = swap_in(tmp, w->path, old, err);
		if (rc < 0) {
			/* still on the old file, as it was */
			w->fd = was.fd;
			w->size = was.size;
			w->data = was.data;
			w->since_key = was.since_key;
			w->rotate = was.rotate;
			w->unsynced = was.unsynced;
		} else {
			w->fd = was.fd;
		}
	}
	if (rc < 0) {
		close(fd);
		unlink(tmp);
	} else {
		close(w->fd);
		w->fd = fd;
		rec_sync_dir(w->path);
	}
	free(tmp);
	free(old);
	return rc;
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
