/*
 * The flight recorder's reader: a recording's files (FILE.N ... FILE.1,
 * then FILE) read in order, an index of their keyframes built when opened,
 * samples decoded one by one, damage passed over up to the next keyframe
 * (and counted), and seeking by time. Files of every format version from
 * FORMAT_OLDEST are read.
 */
#include "record/record.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fileio.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "record/internal.h"

struct keyframe {
	size_t file;
	uint64_t off;
	double time;
};

struct rec_reader {
	char *path;
	struct rfile *file; /* oldest first */
	size_t nr_file, alloc_file;
	size_t fi;    /* the position of the next record: file index ... */
	uint64_t off; /* ... and offset */
	struct gpu_snapshot cur, work;
	bool have_base; /* cur is what the next delta applies to */
	bool pending;   /* rec_reader_seek() left cur for the next rec_reader_next() */
	bool quiet;     /* building the index: damage is counted when read */
	struct strbuf payload;
	unsigned long skipped;
	bool marked; /* damage up to (mark_file, mark_off) is counted: seeks read it again */
	size_t mark_file;
	uint64_t mark_off;
	struct keyframe *kf;
	size_t nr_kf, alloc_kf;
	bool any;
	double first, last;
	char **warn; /* files passed over, one line each */
	size_t nr_warn, alloc_warn;
};

static void
count_skip(struct rec_reader *r, size_t fi, uint64_t off, unsigned long n)
{
	if (r->quiet || !n)
		return;
	if (r->marked && (fi < r->mark_file || (fi == r->mark_file && off <= r->mark_off)))
		return;
	r->skipped += n;
	r->marked = true;
	r->mark_file = fi;
	r->mark_off = off;
}

static void
goto_file(struct rec_reader *r, size_t fi)
{
	r->fi = fi;
	r->off = fi < r->nr_file ? r->file[fi].data : 0;
	r->have_base = false;
}

/*
 * The next good record into r->payload, its type and where it starts.
 * Returns 1, 0 at the end, or E_IO. Damage is passed over up to the next
 * keyframe (and counted); nothing good after it is a torn end.
 */
static int
next_record(struct rec_reader *r, unsigned *type, size_t *fi, uint64_t *off, struct err *err)
{
	while (r->fi < r->nr_file) {
		const struct rfile *f = &r->file[r->fi];
		unsigned long intact;
		uint64_t end, found;
		int rc = rec_frame_at(f, r->off, &r->payload, type, &end, err);

		if (rc < 0)
			return rc;
		if (rc == FR_OK) {
			*fi = r->fi;
			*off = r->off;
			r->off = end;
			return 1;
		}
		if (rc == FR_END) {
			goto_file(r, r->fi + 1);
			continue;
		}
		rc = rec_resync(f, r->off + 1, true, &r->payload, &found, &intact, err);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			/* a torn end, unless good deltas follow the damage */
			if (intact)
				count_skip(r, r->fi, r->off, 1 + intact);
			goto_file(r, r->fi + 1);
			continue;
		}
		count_skip(r, r->fi, r->off, 1 + intact);
		r->off = found;
		r->have_base = false;
	}
	return 0;
}

/* Decode the next sample into r->cur. Returns 1, 0 at the end, or E_IO. */
static int
advance(struct rec_reader *r, struct err *err)
{
	for (;;) {
		struct gpu_snapshot tmp;
		unsigned type;
		uint64_t off;
		size_t fi;
		int rc = next_record(r, &type, &fi, &off, err);

		if (rc <= 0)
			return rc;
		if (type == REC_KEYFRAME) {
			gpu_snapshot_release(&r->work);
		} else if (type == REC_DELTA && r->have_base) {
			rec_snapshot_copy(&r->work, &r->cur);
		} else {
			/* a delta with nothing to apply it to; other types are for later versions
			 */
			if (type == REC_DELTA)
				count_skip(r, fi, off, 1);
			continue;
		}
		if (rec_decode((const unsigned char *)r->payload.buf, r->payload.len, type,
		               r->file[fi].version, &r->work)) {
			count_skip(r, fi, off, 1);
			r->have_base = false;
			continue;
		}
		tmp = r->cur;
		r->cur = r->work;
		r->work = tmp;
		r->have_base = true;
		return 1;
	}
}

/* Open path and check its header; 1 when it is not there. */
static int
add_file(struct rec_reader *r, const char *path, struct err *err)
{
	struct rfile f = { xstrdup(path), -1, 0, 0, 0, 0, 0 };
	enum hdr_state st = HDR_OK;
	struct stat sb;
	int rc = 0, e;

	/* O_NONBLOCK: a FIFO in a recording's place must not wait for a writer */
	f.fd = file_open(path);
	if (f.fd < 0) {
		e = errno;
		if (e == ENOENT) {
			rc = 1;
			goto fail;
		}
		rc = err_set(err, errno_status(e), "cannot open '%s': %s", path, strerror(e));
		goto fail;
	}
	if (fstat(f.fd, &sb)) {
		e = errno;
		rc = err_set(err, E_IO, "cannot stat '%s': %s", path, strerror(e));
		goto fail;
	}
	if (!S_ISREG(sb.st_mode)) {
		rc = err_set(err, E_PARSE, "'%s' is not a recording: not a regular file", path);
		goto fail;
	}
	f.size = (uint64_t)sb.st_size;
	rc = rec_read_header(&f, &st, err);
	if (rc < 0)
		goto fail;
	if (st == HDR_NOT)
		rc = err_set(err, E_PARSE, "'%s' is not a gpuscope recording", path);
	else if (st == HDR_BAD)
		rc = err_set(err, E_PARSE, "'%s' is a recording with a damaged header", path);
	else if (st == HDR_VERSION)
		rc = err_set(
		        err, E_VERSION,
		        "'%s' is a recording of format version %u; this gpuscope reads versions %d to %d",
		        path, f.version, FORMAT_OLDEST, FORMAT_VERSION);
	if (rc < 0)
		goto fail;
	ALLOC_GROW(r->file, r->nr_file + 1, r->alloc_file);
	r->file[r->nr_file++] = f;
	return 0;
fail:
	if (f.fd >= 0)
		close(f.fd);
	free(f.path);
	return rc;
}

static int
cmp_desc(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x > y ? -1 : x < y;
}

/* The numbers N of the files path.N there are. */
static void
rotated_numbers(const char *path, unsigned **out, size_t *nr)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	char *dir = rec_dir_of(path);
	size_t blen = strlen(base), alloc = 0;
	DIR *d = blen ? opendir(dir) : NULL;
	struct dirent *de;

	*out = NULL;
	*nr = 0;
	while (d && (de = readdir(d))) {
		const char *num;
		size_t len;

		if (strncmp(de->d_name, base, blen) || de->d_name[blen] != '.')
			continue;
		num = de->d_name + blen + 1;
		len = strlen(num);
		if (len < 1 || len > 9 || num[0] == '0' || strspn(num, "0123456789") != len)
			continue;
		ALLOC_GROW(*out, *nr + 1, alloc);
		(*out)[(*nr)++] = (unsigned)strtoul(num, NULL, 10);
	}
	if (d)
		closedir(d);
	free(dir);
	if (*nr > 1)
		qsort(*out, *nr, sizeof(**out), cmp_desc);
}

/* The keyframes' places and times, and the span, without decoding the samples. */
static int
build_index(struct rec_reader *r, struct err *err)
{
	unsigned type;
	uint64_t off;
	size_t fi;
	int rc;

	r->quiet = true;
	goto_file(r, 0);
	while ((rc = next_record(r, &type, &fi, &off, err)) > 0) {
		double t;
		bool good =
		        rec_payload_time((const unsigned char *)r->payload.buf, r->payload.len, &t);

		if (!good || (type != REC_KEYFRAME && type != REC_DELTA)) {
			r->have_base &= type != REC_KEYFRAME;
			continue;
		}
		if (type == REC_KEYFRAME) {
			ALLOC_GROW(r->kf, r->nr_kf + 1, r->alloc_kf);
			r->kf[r->nr_kf++] = (struct keyframe){ fi, off, t };
			r->have_base = true;
		} else if (!r->have_base) {
			continue;
		}
		if (!r->any)
			r->first = t;
		r->last = t;
		r->any = true;
	}
	r->quiet = false;
	goto_file(r, 0);
	return rc;
}

/*
 * Add a file of the recording. One that is damaged, not a recording, or of
 * a version this gpuscope does not read is passed over with a warning
 * (its message is kept) so that the rest still replays; *first keeps the
 * first such error, for when nothing else is left.
 */
static int
add_or_pass(struct rec_reader *r, const char *path, struct err *first, struct err *err)
{
	struct err e = ERR_INIT;
	int rc = add_file(r, path, &e);

	if (rc >= 0)
		return rc;
	if (rc != E_PARSE && rc != E_VERSION && rc != E_PERM && rc != E_IO)
		return err_set(err, rc, "%s", e.msg);
	err_set(first, rc, "%s", e.msg);
	ALLOC_GROW(r->warn, r->nr_warn + 1, r->alloc_warn);
	r->warn[r->nr_warn++] = xstrfmt("%s: passed over", e.msg);
	return 1;
}

int
rec_reader_open(const char *path, struct rec_reader **out, struct err *err)
{
	struct rec_reader *r = xcalloc(1, sizeof(*r));
	struct err first = ERR_INIT;
	unsigned *num;
	size_t nr;
	int rc = 0;

	*out = NULL;
	r->path = xstrdup(path);
	gpu_snapshot_init(&r->cur);
	gpu_snapshot_init(&r->work);
	strbuf_init(&r->payload, 0);
	rotated_numbers(path, &num, &nr);
	for (size_t i = 0; i < nr && rc >= 0; i++) {
		char *name = rec_rotated_name(path, num[i]);

		rc = add_or_pass(r, name, &first, err);
		free(name);
	}
	free(num);
	if (rc >= 0)
		rc = add_or_pass(r, path, &first, err);
	if (rc >= 0 && !r->nr_file)
		rc = first.code ? err_set(err, first.code, "%s", first.msg)
		                : err_set(err, E_NOTFOUND, "cannot open '%s': %s", path,
		                          strerror(ENOENT));
	if (rc >= 0)
		rc = build_index(r, err);
	if (rc < 0) {
		rec_reader_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

size_t
rec_reader_nr_warnings(const struct rec_reader *r)
{
	return r->nr_warn;
}

const char *
rec_reader_warning(const struct rec_reader *r, size_t i)
{
	return i < r->nr_warn ? r->warn[i] : NULL;
}

void
rec_reader_warn(const struct rec_reader *r)
{
	fflush(stdout);
	for (size_t i = 0; i < r->nr_warn; i++)
		fprintf(stderr, "gpuscope: warning: %s\n", r->warn[i]);
}

int
rec_reader_next(struct rec_reader *r, struct gpu_snapshot *snap, struct err *err)
{
	int rc;

	gpu_snapshot_release(snap);
	if (r->pending) {
		r->pending = false;
		rec_snapshot_copy(snap, &r->cur);
		return 1;
	}
	rc = advance(r, err);
	if (rc > 0)
		rec_snapshot_copy(snap, &r->cur);
	return rc;
}

int
rec_reader_seek(struct rec_reader *r, double t, struct err *err)
{
	struct gpu_snapshot cand;
	size_t k = 0, cand_fi = 0;
	uint64_t cand_off = 0;
	bool have = false;
	int rc;

	if (!r->nr_kf)
		return err_set(err, E_NOTFOUND, "the recording '%s' holds no sample", r->path);
	for (size_t i = 0; i < r->nr_kf; i++)
		if (r->kf[i].time <= t)
			k = i;
	r->fi = r->kf[k].file;
	r->off = r->kf[k].off;
	r->have_base = false;
	r->pending = false;
	gpu_snapshot_init(&cand);
	/* replay from the keyframe up to the last sample at or before t */
	while ((rc = advance(r, err)) > 0) {
		if (have && r->cur.time > t)
			break;
		rec_snapshot_copy(&cand, &r->cur);
		cand_fi = r->fi;
		cand_off = r->off;
		have = true;
		if (r->cur.time > t)
			break; /* t is before the first sample */
	}
	if (rc < 0 || !have) {
		gpu_snapshot_release(&cand);
		return rc < 0 ? rc : 0;
	}
	gpu_snapshot_release(&r->cur);
	r->cur = cand;
	r->fi = cand_fi;
	r->off = cand_off;
	r->have_base = true;
	r->pending = true;
	return 0;
}

void
rec_reader_span(struct rec_reader *r, double *first, double *last)
{
	*first = r->any ? r->first : 0;
	*last = r->any ? r->last : 0;
}

unsigned long
rec_reader_skipped(const struct rec_reader *r)
{
	return r->skipped;
}

void
rec_reader_close(struct rec_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nr_file; i++) {
		close(r->file[i].fd);
		free(r->file[i].path);
	}
	free(r->file);
	free(r->path);
	gpu_snapshot_release(&r->cur);
	gpu_snapshot_release(&r->work);
	strbuf_release(&r->payload);
	free(r->kf);
	for (size_t i = 0; i < r->nr_warn; i++)
		free(r->warn[i]);
	free(r->warn);
	free(r);
}
