/*
 * Inside the flight recorder (record/record.h): what its files share. Only
 * the files of src/record/ include this.
 *
 *   snapshot.c  the member tables of the sample model, and snapshot copy and compare
 *   codec.c     values, keyframes and deltas (the payload of a record)
 *   frame.c     the file header, record frames with their CRC-32, resynchronisation
 *   writer.c    the writer, rotation, repair of a torn tail
 *   reader.c    the reader, its index of keyframes, seeking by time
 *
 * The format is described byte by byte in docs/record-format.md; keep the
 * two in step.
 */
#ifndef GPUSCOPE_RECORD_INTERNAL_H
#define GPUSCOPE_RECORD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "core/strbuf.h"

struct err;
struct gpu_snapshot;
struct gpu_proc;

/* --- the format's constants (docs/record-format.md) ---------------------- */

/*
 * 1: the first format. 2: a device block's part 8 (Xid counts and
 * xid_watched). 3: a device block's parts 9 (NVLink links) and 10 (MIG
 * device) and four more device strings; six more process strings. A
 * reader reads every version from 1 to FORMAT_VERSION.
 */
#define FORMAT_VERSION 3
#define FORMAT_OLDEST  1
#define HDR_FIXED      18   /* magic, version, header length, field counts, note length */
#define HDR_MAX        4096 /* a longer header is damage */
#define REC_HDR        13   /* magic, payload length, type, CRC-32 */
#define REC_MAX        ((uint32_t)64 << 20) /* a longer payload is damage */

extern const unsigned char rec_file_magic[8];
extern const unsigned char rec_magic[4];

enum rec_type {
	REC_KEYFRAME = 1,
	REC_DELTA = 2,
};

/* Bounds on what one record may hold: a reader allocates no more than this. */
#define MAX_DEV    1024
#define MAX_PROC   65536
#define MAX_NOTE   4096
#define MAX_LEVELS 16 /* ARRAY_SIZE(struct clock_levels.mhz) */

static inline void
put_le(unsigned char *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint64_t
get_le(const unsigned char *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Whether two doubles have the same 64 bits (-0 is not 0; a NaN equals itself). */
static inline bool
same_bits(double a, double b)
{
	return !memcmp(&a, &b, sizeof(a));
}

/* --- snapshot.c: the members of the sample model ---------------------------- */

/* What a member is, and so how it is compared, encoded and decoded. */
enum mkind {
	MK_UINT,     /* an unsigned integer (unsigned, uint32_t): a varint up to max */
	MK_U64,      /* uint64_t: a varint */
	MK_INT,      /* int: an svarint */
	MK_ENUM,     /* an enum: a varint; above max it reads as fallback */
	MK_BOOL,     /* a varint 0 or 1 */
	MK_TIME,     /* a double: a value */
	MK_STR,      /* a char array (need not hold a NUL): str */
	MK_OSTR,     /* an owned char *, NULL allowed: ostr */
	MK_RUNTIME,  /* gpu_proc.container_runtime, a static string: ostr, by name */
	MK_FIELDS,   /* v[] and valid: the numeric fields (core/fields.c, or enum proc_field) */
	MK_ENGINES,  /* engine[] and its count */
	MK_OENGINES, /* gpu_proc.engine, owned (NULL when none), and its count: as MK_ENGINES */
	MK_LEVELS,   /* struct clock_levels */
	MK_XID,      /* xid[] and its count */
	MK_NVLINK,   /* nvlink[] and its count */
	MK_NOTES,    /* the snapshot's notes and their count */
	MK_DEVS,     /* the snapshot's devices and their count */
	MK_PROCS,    /* the snapshot's processes and their count */
	MK_SKIP,     /* not a fact of the sample: neither recorded nor compared (see why) */
};

/* Where a member goes in a block (docs/record-format.md). */
enum {
	PART_KEY = 100,    /* a process's key, before its block */
	PART_FIELDS = 101, /* the numeric fields, first in a block */
	PART_FIRST = 102,  /* a snapshot's time, first in a payload */
	PART_NONE = 103,   /* MK_SKIP */
};

struct member {
	const char *name;
	size_t off, size;       /* the member */
	size_t nr_off, nr_size; /* its count (engines, Xids, notes, devices, processes), or 0 */
	enum mkind kind;
	unsigned part;     /* the bit of its part in the block, or a PART_ */
	unsigned since;    /* the format version that added it */
	uint64_t max;      /* MK_UINT, MK_ENUM: the largest value */
	uint64_t fallback; /* MK_ENUM: what a larger value reads as */
	const char *why;   /* MK_SKIP: why it is not recorded */
};

/* The members of one struct, in the order the format writes them. */
struct mtable {
	const char *what; /* "struct gpu_device" */
	size_t size;      /* sizeof it */
	const struct member *m;
	size_t nr;
	unsigned str_part; /* the part written as a bitmap of strings */
	unsigned nr_parts; /* parts are bits 0 .. nr_parts - 1 */
};

extern const struct mtable rec_dev_table, rec_proc_table, rec_snap_table;

/* The bits of the parts of t that a record of format version may hold. */
uint64_t rec_parts_known(const struct mtable *t, unsigned version);

/*
 * Whether member m of a and b holds the same facts (strings to their NUL,
 * engines, levels and Xids to their counts, fields where valid, values bit
 * for bit, runtimes by name). Not for MK_NOTES, MK_DEVS, MK_PROCS.
 */
bool rec_member_equal(const struct member *m, const void *a, const void *b);

/* Whether every member of t in part is the same in a and b. */
bool rec_part_equal(const struct mtable *t, unsigned part, const void *a, const void *b);

/* dst (whatever it held is released) becomes a deep copy of src. */
void rec_snapshot_copy(struct gpu_snapshot *dst, const struct gpu_snapshot *src);
/* dst (empty) becomes a deep copy of src. */
void rec_proc_copy(struct gpu_proc *dst, const struct gpu_proc *src);

/* The static string of a container runtime named name (a newer one's kept in a table). */
const char *rec_runtime_name(const char *name);

/* --- codec.c: payloads ------------------------------------------------------- */

/* The writer's scratch space, kept between records. */
struct rec_enc {
	struct strbuf blk, body, devs, procs;
	size_t *order; /* indices of the previous processes, by key */
	size_t alloc_order;
	bool *used;
	size_t alloc_used;
};

void rec_enc_init(struct rec_enc *e);
void rec_enc_release(struct rec_enc *e);

/* The whole snapshot s, appended to sb. */
void rec_put_keyframe(struct strbuf *sb, const struct gpu_snapshot *s);
/* c as the changes from b, which lists the same devices (rec_same_devices()). */
void rec_put_delta(struct rec_enc *e, struct strbuf *sb, const struct gpu_snapshot *b,
                   const struct gpu_snapshot *c);
/* Whether b and c list the same GPUs in the same order, so that c can be a delta on b. */
bool rec_same_devices(const struct gpu_snapshot *b, const struct gpu_snapshot *c);

/*
 * Decode a payload of type, from a file of format version, onto s (empty
 * for a keyframe, the snapshot it was written against for a delta).
 * Returns 0, or E_PARSE when it is malformed.
 */
int rec_decode(const unsigned char *p, size_t len, unsigned type, unsigned version,
               struct gpu_snapshot *s);
/* The time of a payload (its first item), without decoding the rest; false when malformed. */
bool rec_payload_time(const unsigned char *p, size_t len, double *t);

/* --- frame.c: files, frames, resynchronisation ---------------------------------- */

/* CRC-32 (IEEE 802.3, reflected, zlib's crc32()) of n bytes at p, continuing crc (0 to start). */
uint32_t rec_crc32(uint32_t crc, const void *p, size_t n);

enum hdr_state {
	HDR_OK,
	HDR_TORN,    /* a prefix of a header (an empty file too): nothing recorded yet */
	HDR_NOT,     /* not a recording */
	HDR_BAD,     /* a recording whose header is damaged */
	HDR_VERSION, /* a newer format */
};

struct rfile {
	char *path;
	int fd;
	uint64_t size; /* when opened: a reader reads no further */
	uint64_t data; /* where the records start */
	unsigned version, nr_gf, nr_pf;
};

enum frame {
	FR_OK,
	FR_END, /* off is the end of the file */
	FR_BAD, /* no good record at off: damage, or a torn last record */
};

/* A new file's header (this version, this gpuscope's field counts) into sb. */
void rec_build_header(struct strbuf *sb);
/* Read and check f's header (f->fd, f->size set); fills the rest of f on HDR_OK. */
int rec_read_header(struct rfile *f, enum hdr_state *st, struct err *err);
/* Frame the payload that follows REC_HDR reserved bytes of sb as a record of type. */
void rec_frame(struct strbuf *sb, unsigned type);
/* The record at off: FR_OK with its payload, type and end, FR_END, FR_BAD, or E_IO. */
int rec_frame_at(const struct rfile *f, uint64_t off, struct strbuf *payload, unsigned *type,
                 uint64_t *end, struct err *err);
/*
 * The first good record at or after from (only a keyframe when want_key),
 * passing over good deltas, which *intact counts. Returns 1 with *found,
 * 0 when there is none, or E_IO.
 */
int rec_resync(const struct rfile *f, uint64_t from, bool want_key, struct strbuf *tmp,
               uint64_t *found, unsigned long *intact, struct err *err);

/* Write all of buf; returns 0 or an errno value. */
int rec_write_all(int fd, const void *buf, size_t n);
/* The directory of path, as a path of its own (free() it). */
char *rec_dir_of(const char *path);
/* fsync() the directory of path, as far as the file system can. */
void rec_sync_dir(const char *path);
/* "path.n" (free() it). */
char *rec_rotated_name(const char *path, unsigned n);

#endif
