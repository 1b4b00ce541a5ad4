/*
 * The flight recorder's files: the header, records framed with their
 * length, type and CRC-32, reading a frame back, and finding the next good
 * record after damage (resynchronisation). Also the few file helpers the
 * writer and the reader share.
 *
 * The CRC-32 is zlib's crc32(): the same CRC as the table-driven one
 * gpuscope had (bench/crc/ compares the two; docs/performance.md has the
 * figures).
 */
#include "record/record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "core/err.h"
#include "core/fields.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "record/internal.h"

#ifndef GPUSCOPE_VERSION
#define GPUSCOPE_VERSION "unknown"
#endif

#define SCAN_CHUNK 65536

const unsigned char rec_file_magic[8] = { 0x89, 'G', 'P', 'U', 'R', 'E', 'C', '\n' };
const unsigned char rec_magic[4] = { 0xFB, 'R', 'E', 'C' };

uint32_t
rec_crc32(uint32_t crc, const void *p, size_t n)
{
	/* zlib takes a uInt length: feed it in pieces that fit */
	const unsigned char *b = p;

	while (n) {
		uInt k = n > 0x40000000u ? 0x40000000u : (uInt)n;

		crc = (uint32_t)crc32(crc, b, k);
		b += k;
		n -= k;
	}
	return crc;
}

/* Read n bytes at off; returns how many there were (fewer at the end), or -1 with errno. */
static ssize_t
pread_full(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int
rec_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t r = write(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno;
		if (r == 0)
			return EIO;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

void
rec_build_header(struct strbuf *sb)
{
	unsigned char fixed[HDR_FIXED], crc[4];
	char note[128], when[32] = "";
	time_t now = time(NULL);
	struct tm tm;
	size_t nl;

	if (gmtime_r(&now, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(note, sizeof(note), "gpuscope %s flight recorder, created %s", GPUSCOPE_VERSION,
	         when);
	nl = strlen(note);
	memcpy(fixed, rec_file_magic, sizeof(rec_file_magic));
	put_le(fixed + 8, FORMAT_VERSION, 2);
	put_le(fixed + 10, HDR_FIXED + nl + 4, 2);
	put_le(fixed + 12, GF__COUNT, 2);
	put_le(fixed + 14, PF__COUNT, 2);
	put_le(fixed + 16, nl, 2);
	strbuf_reset(sb);
	strbuf_add(sb, fixed, sizeof(fixed));
	strbuf_add(sb, note, nl);
	put_le(crc, rec_crc32(0, sb->buf, sb->len), 4);
	strbuf_add(sb, crc, sizeof(crc));
}

int
rec_read_header(struct rfile *f, enum hdr_state *st, struct err *err)
{
	unsigned char buf[HDR_MAX];
	size_t want = f->size < HDR_MAX ? (size_t)f->size : HDR_MAX, len, nl;
	ssize_t n = pread_full(f->fd, buf, want, 0);

	if (n < 0) {
		int e = errno;

		return err_set(err, E_IO, "cannot read '%s': %s", f->path, strerror(e));
	}
	len = (size_t)n;
	f->data = len;
	if (memcmp(buf, rec_file_magic,
	           len < sizeof(rec_file_magic) ? len : sizeof(rec_file_magic))) {
		*st = HDR_NOT;
		return 0;
	}
	*st = HDR_TORN;
	if (len < HDR_FIXED)
		return 0;
	f->version = (unsigned)get_le(buf + 8, 2);
	f->data = get_le(buf + 10, 2);
	f->nr_gf = (unsigned)get_le(buf + 12, 2);
	f->nr_pf = (unsigned)get_le(buf + 14, 2);
	nl = (size_t)get_le(buf + 16, 2);
	if (f->version < FORMAT_OLDEST || f->version > FORMAT_VERSION)
		*st = f->version > FORMAT_VERSION ? HDR_VERSION : HDR_BAD;
	else if (f->data < HDR_FIXED + nl + 4 || f->data > HDR_MAX)
		*st = HDR_BAD;
	else if (len < f->data)
		*st = len == f->size ? HDR_TORN : HDR_BAD;
	else if (rec_crc32(0, buf, f->data - 4) != get_le(buf + f->data - 4, 4))
		*st = HDR_BAD;
	else
		*st = HDR_OK;
	if (*st == HDR_TORN)
		f->data = len;
	return 0;
}

int
rec_frame_at(const struct rfile *f, uint64_t off, struct strbuf *payload, unsigned *type,
             uint64_t *end, struct err *err)
{
	unsigned char h[REC_HDR];
	uint32_t len, crc;
	ssize_t n;

	if (off >= f->size)
		return FR_END;
	if (f->size - off < REC_HDR)
		return FR_BAD;
	n = pread_full(f->fd, h, REC_HDR, off);
	if (n < 0)
		goto io;
	if (n < REC_HDR || memcmp(h, rec_magic, sizeof(rec_magic)))
		return FR_BAD;
	len = (uint32_t)get_le(h + 4, 4);
	if (len > REC_MAX || len > f->size - off - REC_HDR)
		return FR_BAD;
	strbuf_reset(payload);
	strbuf_grow(payload, len);
	n = pread_full(f->fd, payload->buf, len, off + REC_HDR);
	if (n < 0)
		goto io;
	if ((size_t)n < len)
		return FR_BAD; /* the file shrank since we looked */
	strbuf_setlen(payload, len);
	crc = rec_crc32(rec_crc32(0, h + 4, 5), payload->buf, len);
	if (crc != get_le(h + 9, 4))
		return FR_BAD;
	*type = h[8];
	*end = off + REC_HDR + len;
	return FR_OK;
io:
	n = errno;
	return err_set(err, E_IO, "cannot read '%s': %s", f->path, strerror((int)n));
}

int
rec_resync(const struct rfile *f, uint64_t from, bool want_key, struct strbuf *tmp, uint64_t *found,
           unsigned long *intact, struct err *err)
{
	unsigned char *buf = xmalloc(SCAN_CHUNK);
	uint64_t pos = from;
	int rc = 0;

	*intact = 0;
	while (pos < f->size && f->size - pos >= REC_HDR && !rc) {
		size_t want = f->size - pos < SCAN_CHUNK ? (size_t)(f->size - pos) : SCAN_CHUNK;
		ssize_t n = pread_full(f->fd, buf, want, pos);
		bool jumped = false;

		if (n < 0) {
			int e = errno;

			rc = err_set(err, E_IO, "cannot read '%s': %s", f->path, strerror(e));
			break;
		}
		if (n < (ssize_t)sizeof(rec_magic))
			break;
		for (size_t i = 0; i + sizeof(rec_magic) <= (size_t)n; i++) {
			unsigned char *m =
			        memmem(buf + i, (size_t)n - i, rec_magic, sizeof(rec_magic));
			uint64_t end;
			unsigned type;
			int fr;

			if (!m)
				break;
			i = (size_t)(m - buf);
			fr = rec_frame_at(f, pos + i, tmp, &type, &end, err);
			if (fr < 0) {
				rc = fr;
				break;
			}
			if (fr != FR_OK)
				continue;
			if (type == REC_KEYFRAME || !want_key) {
				*found = pos + i;
				rc = 1;
				break;
			}
			if (type == REC_DELTA)
				(*intact)++;
			pos = end; /* go on after it */
			jumped = true;
			break;
		}
		/* on to the next chunk; a magic may straddle the two */
		if (!jumped)
			pos += (uint64_t)n - (sizeof(rec_magic) - 1);
	}
	free(buf);
	return rc;
}

char *
rec_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	return xstrndup(path, slash == path ? 1 : (size_t)(slash - path));
}

void
rec_sync_dir(const char *path)
{
	char *dir = rec_dir_of(path);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	/* best effort: some file systems cannot sync a directory */
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

char *
rec_rotated_name(const char *path, unsigned n)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "%s.%u", path, n);
	return strbuf_detach(&sb, NULL);
}

void
rec_frame(struct strbuf *sb, unsigned type)
{
	unsigned char *h = (unsigned char *)sb->buf;
	size_t len = sb->len - REC_HDR;

	memcpy(h, rec_magic, sizeof(rec_magic));
	put_le(h + 4, len, 4);
	h[8] = (unsigned char)type;
	put_le(h + 9, rec_crc32(rec_crc32(0, h + 4, 5), h + REC_HDR, len), 4);
}
