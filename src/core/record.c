/*
 * The flight recorder (record.h): snapshots encoded as keyframes and
 * deltas, framed and checksummed records appended with one write(2) each,
 * rotation, repair of a torn tail on reopening, and a reader that
 * resynchronises after damage and seeks by time. The format is described
 * byte by byte in docs/record-format.md; keep the two in step.
 */
#include "core/record.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#ifndef GPUSCOPE_VERSION
#define GPUSCOPE_VERSION "unknown"
#endif

/* --- the format's constants (docs/record-format.md) ---------------------- */

static const unsigned char file_magic[8] = { 0x89, 'G', 'P', 'U', 'R', 'E', 'C', '\n' };
static const unsigned char rec_magic[4] = { 0xFB, 'R', 'E', 'C' };

#define FORMAT_VERSION 1
#define HDR_FIXED      18   /* magic, version, header length, field counts, note length */
#define HDR_MAX        4096 /* a longer header is damage */
#define REC_HDR        13   /* magic, payload length, type, CRC-32 */
#define REC_MAX        ((uint32_t)64 << 20) /* a longer payload is damage */
#define SCAN_CHUNK     65536

enum rec_type {
	REC_KEYFRAME = 1,
	REC_DELTA = 2,
};

/* Bounds on what one record may hold: a reader allocates no more than this. */
#define MAX_DEV    1024
#define MAX_PROC   65536
#define MAX_NOTE   4096
#define MAX_LEVELS 16 /* ARRAY_SIZE(struct clock_levels.mhz) */

/* delta: which parts of the snapshot follow */
enum {
	D_FLAGS = 1 << 0,
	D_HOST = 1 << 1,
	D_NVIDIA = 1 << 2,
	D_NOTES = 1 << 3,
	D_DEVS = 1 << 4,
	D_PROCS = 1 << 5,
	D__ALL = (1 << 6) - 1,
};

/* device block: which parts other than numeric fields follow */
enum {
	DO_STATE = 1 << 0,
	DO_STR = 1 << 1,
	DO_PCI = 1 << 2,
	DO_ENGINES = 1 << 3,
	DO_LEVELS_GFX = 1 << 4,
	DO_LEVELS_MEM = 1 << 5,
	DO_IDENT = 1 << 6,
	DO_PRIVATE = 1 << 7,
	DO__ALL = (1 << 8) - 1,
};

/* process block: the same */
enum {
	PO_TYPE = 1 << 0,
	PO_HOST = 1 << 1,
	PO_DENIED = 1 << 2,
	PO_ENGINES = 1 << 3,
	PO_STR = 1 << 4,
	PO__ALL = (1 << 5) - 1,
};

/* the device's strings, in the order of their bits */
struct str_field {
	size_t off, size;
};
#define DSTR(m)                                                                     \
	{                                                                           \
		offsetof(struct gpu_device, m), sizeof(((struct gpu_device *)0)->m) \
	}
static const struct str_field dev_str[] = {
	DSTR(state_msg),
	DSTR(name),
	DSTR(uuid),
	DSTR(serial),
	DSTR(pci_bus_id),
	DSTR(vbios),
	DSTR(inforom),
	DSTR(board_part),
	DSTR(brand),
	DSTR(architecture),
	DSTR(compute_cap),
	DSTR(driver),
	DSTR(card),
	DSTR(unique_id),
	DSTR(util_source),
	DSTR(util_note),
	DSTR(throttle_detail),
	DSTR(mem_source),
};

/* the process's strings, in the order of their bits; the last is the runtime */
enum { PS_USER, PS_NAME, PS_CMDLINE, PS_CONTAINER, PS_POD, PS_CGROUP, PS_RUNTIME, PS__COUNT };

/* The container runtimes procinfo.c names; a recorded name maps back to these strings. */
static const char *const runtimes[] = { "docker", "containerd", "cri-o",
	                                "podman", "lxc",        "kubernetes" };

static const struct gpu_device zero_dev;
static const struct gpu_proc zero_proc;

/* --- CRC-32 (IEEE 802.3, reflected, as zlib's crc32()) -------------------- */

static const uint32_t crc_table[256] = {
	0x00000000, 0x77073096, 0xee0e612c, 0x990951ba, 0x076dc419, 0x706af48f, 0xe963a535,
	0x9e6495a3, 0x0edb8832, 0x79dcb8a4, 0xe0d5e91e, 0x97d2d988, 0x09b64c2b, 0x7eb17cbd,
	0xe7b82d07, 0x90bf1d91, 0x1db71064, 0x6ab020f2, 0xf3b97148, 0x84be41de, 0x1adad47d,
	0x6ddde4eb, 0xf4d4b551, 0x83d385c7, 0x136c9856, 0x646ba8c0, 0xfd62f97a, 0x8a65c9ec,
	0x14015c4f, 0x63066cd9, 0xfa0f3d63, 0x8d080df5, 0x3b6e20c8, 0x4c69105e, 0xd56041e4,
	0xa2677172, 0x3c03e4d1, 0x4b04d447, 0xd20d85fd, 0xa50ab56b, 0x35b5a8fa, 0x42b2986c,
	0xdbbbc9d6, 0xacbcf940, 0x32d86ce3, 0x45df5c75, 0xdcd60dcf, 0xabd13d59, 0x26d930ac,
	0x51de003a, 0xc8d75180, 0xbfd06116, 0x21b4f4b5, 0x56b3c423, 0xcfba9599, 0xb8bda50f,
	0x2802b89e, 0x5f058808, 0xc60cd9b2, 0xb10be924, 0x2f6f7c87, 0x58684c11, 0xc1611dab,
	0xb6662d3d, 0x76dc4190, 0x01db7106, 0x98d220bc, 0xefd5102a, 0x71b18589, 0x06b6b51f,
	0x9fbfe4a5, 0xe8b8d433, 0x7807c9a2, 0x0f00f934, 0x9609a88e, 0xe10e9818, 0x7f6a0dbb,
	0x086d3d2d, 0x91646c97, 0xe6635c01, 0x6b6b51f4, 0x1c6c6162, 0x856530d8, 0xf262004e,
	0x6c0695ed, 0x1b01a57b, 0x8208f4c1, 0xf50fc457, 0x65b0d9c6, 0x12b7e950, 0x8bbeb8ea,
	0xfcb9887c, 0x62dd1ddf, 0x15da2d49, 0x8cd37cf3, 0xfbd44c65, 0x4db26158, 0x3ab551ce,
	0xa3bc0074, 0xd4bb30e2, 0x4adfa541, 0x3dd895d7, 0xa4d1c46d, 0xd3d6f4fb, 0x4369e96a,
	0x346ed9fc, 0xad678846, 0xda60b8d0, 0x44042d73, 0x33031de5, 0xaa0a4c5f, 0xdd0d7cc9,
	0x5005713c, 0x270241aa, 0xbe0b1010, 0xc90c2086, 0x5768b525, 0x206f85b3, 0xb966d409,
	0xce61e49f, 0x5edef90e, 0x29d9c998, 0xb0d09822, 0xc7d7a8b4, 0x59b33d17, 0x2eb40d81,
	0xb7bd5c3b, 0xc0ba6cad, 0xedb88320, 0x9abfb3b6, 0x03b6e20c, 0x74b1d29a, 0xead54739,
	0x9dd277af, 0x04db2615, 0x73dc1683, 0xe3630b12, 0x94643b84, 0x0d6d6a3e, 0x7a6a5aa8,
	0xe40ecf0b, 0x9309ff9d, 0x0a00ae27, 0x7d079eb1, 0xf00f9344, 0x8708a3d2, 0x1e01f268,
	0x6906c2fe, 0xf762575d, 0x806567cb, 0x196c3671, 0x6e6b06e7, 0xfed41b76, 0x89d32be0,
	0x10da7a5a, 0x67dd4acc, 0xf9b9df6f, 0x8ebeeff9, 0x17b7be43, 0x60b08ed5, 0xd6d6a3e8,
	0xa1d1937e, 0x38d8c2c4, 0x4fdff252, 0xd1bb67f1, 0xa6bc5767, 0x3fb506dd, 0x48b2364b,
	0xd80d2bda, 0xaf0a1b4c, 0x36034af6, 0x41047a60, 0xdf60efc3, 0xa867df55, 0x316e8eef,
	0x4669be79, 0xcb61b38c, 0xbc66831a, 0x256fd2a0, 0x5268e236, 0xcc0c7795, 0xbb0b4703,
	0x220216b9, 0x5505262f, 0xc5ba3bbe, 0xb2bd0b28, 0x2bb45a92, 0x5cb36a04, 0xc2d7ffa7,
	0xb5d0cf31, 0x2cd99e8b, 0x5bdeae1d, 0x9b64c2b0, 0xec63f226, 0x756aa39c, 0x026d930a,
	0x9c0906a9, 0xeb0e363f, 0x72076785, 0x05005713, 0x95bf4a82, 0xe2b87a14, 0x7bb12bae,
	0x0cb61b38, 0x92d28e9b, 0xe5d5be0d, 0x7cdcefb7, 0x0bdbdf21, 0x86d3d2d4, 0xf1d4e242,
	0x68ddb3f8, 0x1fda836e, 0x81be16cd, 0xf6b9265b, 0x6fb077e1, 0x18b74777, 0x88085ae6,
	0xff0f6a70, 0x66063bca, 0x11010b5c, 0x8f659eff, 0xf862ae69, 0x616bffd3, 0x166ccf45,
	0xa00ae278, 0xd70dd2ee, 0x4e048354, 0x3903b3c2, 0xa7672661, 0xd06016f7, 0x4969474d,
	0x3e6e77db, 0xaed16a4a, 0xd9d65adc, 0x40df0b66, 0x37d83bf0, 0xa9bcae53, 0xdebb9ec5,
	0x47b2cf7f, 0x30b5ffe9, 0xbdbdf21c, 0xcabac28a, 0x53b39330, 0x24b4a3a6, 0xbad03605,
	0xcdd70693, 0x54de5729, 0x23d967bf, 0xb3667a2e, 0xc4614ab8, 0x5d681b02, 0x2a6f2b94,
	0xb40bbe37, 0xc30c8ea1, 0x5a05df1b, 0x2d02ef8d,
};

static uint32_t
crc32_add(uint32_t crc, const void *data, size_t len)
{
	const unsigned char *p = data;

	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* --- little-endian integers ---------------------------------------------- */

static void
put_le(unsigned char *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t
get_le(const unsigned char *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* --- encoding ----------------------------------------------------------- */

static uint64_t
zigzag(int64_t v)
{
	return v < 0 ? ~((uint64_t)v << 1) : (uint64_t)v << 1;
}

static int64_t
unzigzag(uint64_t u)
{
	return (u & 1) ? -(int64_t)(u >> 1) - 1 : (int64_t)(u >> 1);
}

static unsigned
varint_len(uint64_t v)
{
	unsigned n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void
put_u64(struct strbuf *sb, uint64_t v)
{
	unsigned char b[10];
	size_t n = 0;

	while (v >= 0x80) {
		b[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	b[n++] = (unsigned char)v;
	strbuf_add(sb, b, n);
}

static void
put_s64(struct strbuf *sb, int64_t v)
{
	put_u64(sb, zigzag(v));
}

static bool
same_bits(double a, double b)
{
	return !memcmp(&a, &b, sizeof(a));
}

/*
 * The scales of a value: m / 10^s for s 0..3 (decimals), m * 2^10, 2^12
 * and 2^20 for s 4..6 (KiB, pages, MiB: memory sizes and their steps).
 */
#define NR_SCALES   7
#define EXACT_LIMIT 9007199254740992.0 /* 2^53: every integer below is a double */
static const double scale_tab[NR_SCALES] = { 1, 10, 100, 1000, 1024, 4096, 1048576 };

/* m at scale s: the one expression the writer checks and the reader computes. */
static double
scaled(int64_t m, unsigned s)
{
	return s < 4 ? (double)m / scale_tab[s] : (double)m * scale_tab[s];
}

/*
 * The varint header of v as m at scale s, absolute or as a step from base,
 * into *h; false when that does not give v back bit for bit. Absolute
 * integers have the short form (kind 0).
 */
static bool
scaled_header(double v, double base, bool rel, unsigned s, uint64_t *h)
{
	double d = rel ? v - base : v;
	double x = s < 4 ? d * scale_tab[s] : d / scale_tab[s];
	double got;
	int64_t m;

	if (!(fabs(x) < EXACT_LIMIT))
		return false; /* too large, infinite or NaN */
	m = (int64_t)llround(x);
	got = rel ? base + scaled(m, s) : scaled(m, s);
	if (!same_bits(got, v))
		return false;
	if (!rel && !s)
		*h = zigzag(m) << 2;
	else
		*h = zigzag(m) << 5 | (uint64_t)s << 2 | (rel ? 3 : 1);
	return true;
}

/*
 * A value, exactly: the shortest of m at a scale (an integer, a decimal of
 * 1 to 3 digits, a multiple of KiB, pages or MiB), the same as a step from
 * base when there is one, or the 8 bytes of the double. The varint's low 2
 * bits say which (docs/record-format.md, "Values").
 */
static void
put_value(struct strbuf *sb, double v, const double *base)
{
	uint64_t best = 0;
	unsigned best_len = 9;

	for (unsigned s = 0; s < NR_SCALES * 2; s++) {
		bool rel = s >= NR_SCALES;
		uint64_t h;

		if (rel && !base)
			break;
		if (scaled_header(v, rel ? *base : 0, rel, s % NR_SCALES, &h) &&
		    varint_len(h) < best_len) {
			best = h;
			best_len = varint_len(h);
		}
	}
	if (best_len < 9) {
		put_u64(sb, best);
	} else {
		unsigned char raw[8];
		uint64_t bits;

		memcpy(&bits, &v, sizeof(bits));
		put_le(raw, bits, 8);
		put_u64(sb, 2);
		strbuf_add(sb, raw, sizeof(raw));
	}
}

/* A string of a fixed array (which need not hold a NUL). */
static void
put_fixed(struct strbuf *sb, const char *s, size_t size)
{
	size_t len = strnlen(s, size);

	put_u64(sb, len);
	strbuf_add(sb, s, len);
}

/* An owned string: its length plus one, 0 for NULL. */
static void
put_ostr(struct strbuf *sb, const char *s)
{
	size_t len = s ? strlen(s) : 0;

	put_u64(sb, s ? (uint64_t)len + 1 : 0);
	strbuf_add(sb, s ? s : "", len);
}

/* --- decoding ----------------------------------------------------------- */

/*
 * A cursor over a payload. The first malformed read marks it bad and
 * empties it, so every later read fails too and every count bounded by
 * what remains is 0: callers check bad once, at the end.
 */
struct dec {
	const unsigned char *p, *end;
	bool bad;
};

static void
dec_fail(struct dec *d)
{
	d->bad = true;
	d->p = d->end;
}

static size_t
dec_left(const struct dec *d)
{
	return (size_t)(d->end - d->p);
}

static uint64_t
get_u64(struct dec *d)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		unsigned char b;

		if (d->p >= d->end)
			break;
		b = *d->p++;
		if (shift == 63 && b > 1)
			break; /* more than 64 bits */
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	dec_fail(d);
	return 0;
}

static uint64_t
get_max(struct dec *d, uint64_t max)
{
	uint64_t v = get_u64(d);

	if (v > max) {
		dec_fail(d);
		return 0;
	}
	return v;
}

/* A count of items that take at least a byte each (after it), at most max. */
static size_t
get_count(struct dec *d, size_t max)
{
	uint64_t v = get_u64(d);

	if (v > max || v > dec_left(d)) {
		dec_fail(d);
		return 0;
	}
	return (size_t)v;
}

static int64_t
get_s64(struct dec *d)
{
	return unzigzag(get_u64(d));
}

static bool
get_bool(struct dec *d)
{
	return get_max(d, 1) != 0;
}

static double
get_value(struct dec *d, const double *base)
{
	uint64_t h = get_u64(d), bits;
	unsigned s = (unsigned)(h >> 2) & 7;
	double v;

	switch (h & 3) {
	case 0:
		return (double)unzigzag(h >> 2);
	case 1:
		if (s < NR_SCALES)
			return scaled(unzigzag(h >> 5), s);
		break;
	case 2:
		if (h == 2 && dec_left(d) >= 8) {
			bits = get_le(d->p, 8);
			d->p += 8;
			memcpy(&v, &bits, sizeof(v));
			return v;
		}
		break;
	case 3:
		if (base && s < NR_SCALES)
			return *base + scaled(unzigzag(h >> 5), s);
		break;
	}
	dec_fail(d);
	return 0;
}

/* A string into a fixed array, cut to fit (a newer writer may have larger arrays). */
static void
get_fixed(struct dec *d, char *buf, size_t size)
{
	size_t len = get_count(d, SIZE_MAX);

	memcpy(buf, d->p, len < size ? len : size - 1);
	buf[len < size ? len : size - 1] = '\0';
	d->p += len;
}

/* An owned string (NULL for 0); a NUL inside ends it, as it would in C. */
static char *
get_ostr(struct dec *d)
{
	uint64_t n = get_u64(d);
	char *s;

	if (n > (uint64_t)dec_left(d) + 1)
		dec_fail(d);
	if (!n || d->bad)
		return NULL;
	s = xstrndup((const char *)d->p, n - 1);
	d->p += n - 1;
	return s;
}

static const char *
runtime_name(const char *name)
{
	/* names this gpuscope does not know (a newer one wrote them), kept for the process */
	static char extra[16][32];
	static unsigned nr_extra;
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	const char *found = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(runtimes); i++)
		if (!strcmp(name, runtimes[i]))
			return runtimes[i];
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < nr_extra && !found; i++)
		if (!strcmp(name, extra[i]))
			found = extra[i];
	if (!found && nr_extra < ARRAY_SIZE(extra) && strlen(name) < sizeof(extra[0])) {
		str_copy(extra[nr_extra], sizeof(extra[0]), name);
		found = extra[nr_extra++];
	}
	pthread_mutex_unlock(&lock);
	return found ? found : "other";
}

/* --- snapshots: copy and compare ---------------------------------------- */

static char *
xstrdup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void
proc_copy(struct gpu_proc *dst, const struct gpu_proc *src)
{
	*dst = *src;
	dst->user = xstrdup_or_null(src->user);
	dst->name = xstrdup_or_null(src->name);
	dst->cmdline = xstrdup_or_null(src->cmdline);
	dst->container = xstrdup_or_null(src->container);
	dst->pod = xstrdup_or_null(src->pod);
	dst->cgroup = xstrdup_or_null(src->cgroup);
}

static void
notes_copy(struct gpu_snapshot *dst, const struct gpu_snapshot *src)
{
	for (size_t i = 0; i < src->nr_note; i++) {
		ALLOC_GROW(dst->note, dst->nr_note + 1, dst->alloc_note);
		dst->note[dst->nr_note++] = xstrdup(src->note[i]);
	}
}

/* dst (whatever it held is released) becomes a deep copy of src. */
static void
snapshot_copy(struct gpu_snapshot *dst, const struct gpu_snapshot *src)
{
	gpu_snapshot_release(dst);
	dst->time = src->time;
	memcpy(dst->hostname, src->hostname, sizeof(dst->hostname));
	dst->simulated = src->simulated;
	dst->nvidia = src->nvidia;
	for (size_t i = 0; i < src->nr_dev; i++)
		*gpu_snapshot_add_dev(dst) = src->dev[i];
	for (size_t i = 0; i < src->nr_proc; i++)
		proc_copy(gpu_snapshot_add_proc(dst), &src->proc[i]);
	notes_copy(dst, src);
}

static void
notes_release(struct gpu_snapshot *s)
{
	for (size_t i = 0; i < s->nr_note; i++)
		free(s->note[i]);
	s->nr_note = 0;
}

static const char *
proc_str(const struct gpu_proc *p, unsigned i)
{
	switch (i) {
	case PS_USER:
		return p->user;
	case PS_NAME:
		return p->name;
	case PS_CMDLINE:
		return p->cmdline;
	case PS_CONTAINER:
		return p->container;
	case PS_POD:
		return p->pod;
	case PS_CGROUP:
		return p->cgroup;
	}
	return p->container_runtime;
}

/* The owned string i of p; not for PS_RUNTIME, which is static. */
static char **
proc_str_slot(struct gpu_proc *p, unsigned i)
{
	switch (i) {
	case PS_USER:
		return &p->user;
	case PS_NAME:
		return &p->name;
	case PS_CMDLINE:
		return &p->cmdline;
	case PS_CONTAINER:
		return &p->container;
	case PS_POD:
		return &p->pod;
	}
	return &p->cgroup;
}

static bool
ostr_equal(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

static const char *
dev_str_at(const struct gpu_device *d, unsigned i)
{
	return (const char *)d + dev_str[i].off;
}

static bool
dev_str_equal(const struct gpu_device *a, const struct gpu_device *b, unsigned i)
{
	return !strncmp(dev_str_at(a, i), dev_str_at(b, i), dev_str[i].size);
}

static bool
engines_equal(const struct engine_use *a, unsigned na, const struct engine_use *b, unsigned nb,
              bool values)
{
	if (na != nb || na > GPU_MAX_ENGINES)
		return false;
	for (unsigned i = 0; i < na; i++)
		if (strncmp(a[i].name, b[i].name, sizeof(a[i].name)) ||
		    (values && !same_bits(a[i].percent, b[i].percent)))
			return false;
	return true;
}

static bool
levels_equal(const struct clock_levels *a, const struct clock_levels *b, bool current)
{
	if (a->nr != b->nr || a->nr > MAX_LEVELS || (current && a->current != b->current))
		return false;
	for (unsigned i = 0; i < a->nr; i++)
		if (a->mhz[i] != b->mhz[i])
			return false;
	return true;
}

static bool
pci_equal(const struct gpu_device *a, const struct gpu_device *b)
{
	return a->pci_device_id == b->pci_device_id && a->pci_subsys_id == b->pci_subsys_id &&
	       a->pci_domain == b->pci_domain && a->pci_bus == b->pci_bus &&
	       a->pci_dev == b->pci_dev && a->pci_func == b->pci_func &&
	       a->pci_valid == b->pci_valid;
}

#define SAY(...)                                              \
	do {                                                  \
		if (why && why_size)                          \
			snprintf(why, why_size, __VA_ARGS__); \
		return false;                                 \
	} while (0)

static bool
dev_equal(const struct gpu_device *a, const struct gpu_device *b, size_t n, char *why,
          size_t why_size)
{
	if (a->index != b->index || a->vendor != b->vendor)
		SAY("dev[%zu]: index or vendor %u/%d vs %u/%d", n, a->index, a->vendor, b->index,
		    b->vendor);
	if (a->state != b->state)
		SAY("dev[%zu]: state %d vs %d", n, a->state, b->state);
	for (unsigned i = 0; i < ARRAY_SIZE(dev_str); i++)
		if (!dev_str_equal(a, b, i))
			SAY("dev[%zu]: string %u '%.*s' vs '%.*s'", n, i, (int)dev_str[i].size,
			    dev_str_at(a, i), (int)dev_str[i].size, dev_str_at(b, i));
	if (!pci_equal(a, b))
		SAY("dev[%zu]: PCI ids or address", n);
	for (unsigned f = 0; f < GF__COUNT; f++) {
		const char *key = field_info(f)->key;

		if (dev_has(a, f) != dev_has(b, f))
			SAY("dev[%zu]: %s known %d vs %d", n, key, dev_has(a, f), dev_has(b, f));
		if (dev_has(a, f) && !same_bits(a->v[f], b->v[f]))
			SAY("dev[%zu]: %s %.17g vs %.17g", n, key, a->v[f], b->v[f]);
	}
	if (!engines_equal(a->engine, a->nr_engine, b->engine, b->nr_engine, true))
		SAY("dev[%zu]: engines", n);
	if (!levels_equal(&a->levels_gfx, &b->levels_gfx, true) ||
	    !levels_equal(&a->levels_mem, &b->levels_mem, true))
		SAY("dev[%zu]: clock levels", n);
	if (a->backend != b->backend || a->handle != b->handle)
		SAY("dev[%zu]: backend or handle", n);
	return true;
}

static const char *
str_or_null(const char *s)
{
	return s ? s : "(null)";
}

static bool
proc_equal(const struct gpu_proc *a, const struct gpu_proc *b, size_t n, char *why, size_t why_size)
{
	uint32_t mask = ((uint32_t)1 << PF__COUNT) - 1;

	if (a->pid != b->pid || a->dev != b->dev || a->start_ticks != b->start_ticks)
		SAY("proc[%zu]: pid %u on GPU %u vs pid %u on GPU %u (or another start time)", n,
		    a->pid, a->dev, b->pid, b->dev);
	if (a->type != b->type || a->host != b->host || a->gpu_denied != b->gpu_denied)
		SAY("proc[%zu] (pid %u): type, host or gpu_denied", n, a->pid);
	if ((a->valid & mask) != (b->valid & mask))
		SAY("proc[%zu] (pid %u): fields known 0x%x vs 0x%x", n, a->pid, a->valid & mask,
		    b->valid & mask);
	for (unsigned f = 0; f < PF__COUNT; f++)
		if (proc_has(a, f) && !same_bits(a->v[f], b->v[f]))
			SAY("proc[%zu] (pid %u): field %u %.17g vs %.17g", n, a->pid, f, a->v[f],
			    b->v[f]);
	for (unsigned i = 0; i < PS__COUNT; i++)
		if (!ostr_equal(proc_str(a, i), proc_str(b, i)))
			SAY("proc[%zu] (pid %u): string %u '%s' vs '%s'", n, a->pid, i,
			    str_or_null(proc_str(a, i)), str_or_null(proc_str(b, i)));
	if (!engines_equal(a->engine, a->nr_engine, b->engine, b->nr_engine, true))
		SAY("proc[%zu] (pid %u): engines", n, a->pid);
	return true;
}

bool
rec_snapshot_equal(const struct gpu_snapshot *a, const struct gpu_snapshot *b, char *why,
                   size_t why_size)
{
	const struct nvidia_sysinfo *na = &a->nvidia, *nb = &b->nvidia;

	if (!same_bits(a->time, b->time))
		SAY("time %.17g vs %.17g", a->time, b->time);
	if (strncmp(a->hostname, b->hostname, sizeof(a->hostname)) || a->simulated != b->simulated)
		SAY("hostname or simulated: '%.*s'/%d vs '%.*s'/%d", (int)sizeof(a->hostname),
		    a->hostname, a->simulated, (int)sizeof(b->hostname), b->hostname, b->simulated);
	if (strncmp(na->driver_version, nb->driver_version, sizeof(na->driver_version)) ||
	    strncmp(na->nvml_version, nb->nvml_version, sizeof(na->nvml_version)) ||
	    strncmp(na->library, nb->library, sizeof(na->library)) ||
	    na->cuda_version != nb->cuda_version)
		SAY("nvidia driver, NVML, CUDA or library");
	if (a->nr_note != b->nr_note)
		SAY("%zu notes vs %zu", a->nr_note, b->nr_note);
	for (size_t i = 0; i < a->nr_note; i++)
		if (strcmp(a->note[i], b->note[i]))
			SAY("note[%zu] '%s' vs '%s'", i, a->note[i], b->note[i]);
	if (a->nr_dev != b->nr_dev)
		SAY("%zu GPUs vs %zu", a->nr_dev, b->nr_dev);
	for (size_t i = 0; i < a->nr_dev; i++)
		if (!dev_equal(&a->dev[i], &b->dev[i], i, why, why_size))
			return false;
	if (a->nr_proc != b->nr_proc)
		SAY("%zu processes vs %zu", a->nr_proc, b->nr_proc);
	for (size_t i = 0; i < a->nr_proc; i++)
		if (!proc_equal(&a->proc[i], &b->proc[i], i, why, why_size))
			return false;
	return true;
}

#undef SAY

/* --- encoding snapshots ------------------------------------------------- */

/* The writer's scratch space, kept between records. */
struct enc {
	struct strbuf blk, body, devs, procs;
	size_t *order; /* indices of the previous processes, by key */
	size_t alloc_order;
	bool *used;
	size_t alloc_used;
};

static void
enc_release(struct enc *e)
{
	strbuf_release(&e->blk);
	strbuf_release(&e->body);
	strbuf_release(&e->devs);
	strbuf_release(&e->procs);
	free(e->order);
	free(e->used);
}

/* Engines: the values that changed when the names did not, else the whole list. */
static void
put_engines(struct strbuf *sb, const struct engine_use *b, unsigned nb, const struct engine_use *c,
            unsigned nc)
{
	uint64_t changed = 0;

	if (!engines_equal(b, nb, c, nc, false)) {
		put_u64(sb, 0);
		put_u64(sb, nc);
		for (unsigned i = 0; i < nc; i++) {
			put_fixed(sb, c[i].name, sizeof(c[i].name));
			put_value(sb, c[i].percent, NULL);
		}
		return;
	}
	for (unsigned i = 0; i < nc; i++)
		if (!same_bits(b[i].percent, c[i].percent))
			changed |= (uint64_t)1 << i;
	put_u64(sb, changed << 1 | 1);
	for (unsigned i = 0; i < nc; i++)
		if (changed >> i & 1)
			put_value(sb, c[i].percent, &b[i].percent);
}

/* Clock levels: the current one alone when the list is the same, else all. */
static void
put_levels(struct strbuf *sb, const struct clock_levels *b, const struct clock_levels *c)
{
	if (levels_equal(b, c, false)) {
		put_u64(sb, 1);
	} else {
		put_u64(sb, 0);
		put_u64(sb, c->nr);
		for (unsigned i = 0; i < c->nr; i++)
			put_u64(sb, c->mhz[i]);
	}
	put_s64(sb, c->current);
}

/*
 * The numeric fields of a block: (h, ids and values set, ids unset). h
 * tells how many were set and whether unset ids and other parts follow.
 */
static void
put_fields(struct strbuf *sb, const double *bv, const double *cv, unsigned count,
           bool (*has)(const void *, unsigned), const void *b, const void *c, bool other)
{
	unsigned set = 0, unset = 0;

	for (unsigned f = 0; f < count; f++) {
		if (has(c, f) && (!has(b, f) || !same_bits(bv[f], cv[f])))
			set++;
		else if (!has(c, f) && has(b, f))
			unset++;
	}
	put_u64(sb, (uint64_t)set << 2 | (other ? 2 : 0) | (unset ? 1 : 0));
	for (unsigned f = 0; f < count; f++) {
		if (has(c, f) && (!has(b, f) || !same_bits(bv[f], cv[f]))) {
			put_u64(sb, f);
			put_value(sb, cv[f], has(b, f) ? &bv[f] : NULL);
		}
	}
	if (!unset)
		return;
	put_u64(sb, unset);
	for (unsigned f = 0; f < count; f++)
		if (!has(c, f) && has(b, f))
			put_u64(sb, f);
}

static bool
dev_has_v(const void *d, unsigned f)
{
	return dev_has(d, (enum gpu_field)f);
}

static bool
proc_has_v(const void *p, unsigned f)
{
	return proc_has(p, (enum proc_field)f);
}

/* What changed from device b to c: a single 0 byte when nothing did. */
static void
put_dev(struct strbuf *sb, const struct gpu_device *b, const struct gpu_device *c)
{
	uint64_t other = 0, strs = 0;

	if (b->state != c->state)
		other |= DO_STATE;
	for (unsigned i = 0; i < ARRAY_SIZE(dev_str); i++)
		if (!dev_str_equal(b, c, i))
			strs |= (uint64_t)1 << i;
	if (strs)
		other |= DO_STR;
	if (!pci_equal(b, c))
		other |= DO_PCI;
	if (!engines_equal(b->engine, b->nr_engine, c->engine, c->nr_engine, true))
		other |= DO_ENGINES;
	if (!levels_equal(&b->levels_gfx, &c->levels_gfx, true))
		other |= DO_LEVELS_GFX;
	if (!levels_equal(&b->levels_mem, &c->levels_mem, true))
		other |= DO_LEVELS_MEM;
	if (b->index != c->index || b->vendor != c->vendor)
		other |= DO_IDENT;
	if (b->backend != c->backend || b->handle != c->handle)
		other |= DO_PRIVATE;

	put_fields(sb, b->v, c->v, GF__COUNT, dev_has_v, b, c, other != 0);
	if (!other)
		return;
	put_u64(sb, other);
	if (other & DO_STATE)
		put_u64(sb, (uint64_t)c->state);
	if (other & DO_STR) {
		put_u64(sb, strs);
		for (unsigned i = 0; i < ARRAY_SIZE(dev_str); i++)
			if (strs >> i & 1)
				put_fixed(sb, dev_str_at(c, i), dev_str[i].size);
	}
	if (other & DO_PCI) {
		put_u64(sb, c->pci_device_id);
		put_u64(sb, c->pci_subsys_id);
		put_u64(sb, c->pci_domain);
		put_u64(sb, c->pci_bus);
		put_u64(sb, c->pci_dev);
		put_u64(sb, c->pci_func);
		put_u64(sb, c->pci_valid);
	}
	if (other & DO_ENGINES)
		put_engines(sb, b->engine, b->nr_engine, c->engine, c->nr_engine);
	if (other & DO_LEVELS_GFX)
		put_levels(sb, &b->levels_gfx, &c->levels_gfx);
	if (other & DO_LEVELS_MEM)
		put_levels(sb, &b->levels_mem, &c->levels_mem);
	if (other & DO_IDENT) {
		put_u64(sb, c->index);
		put_u64(sb, (uint64_t)c->vendor);
	}
	if (other & DO_PRIVATE) {
		put_u64(sb, c->backend);
		put_u64(sb, c->handle);
	}
}

/* What changed from process b to c (the same key): a single 0 byte when nothing did. */
static void
put_proc(struct strbuf *sb, const struct gpu_proc *b, const struct gpu_proc *c)
{
	uint64_t other = 0, strs = 0;

	if (b->type != c->type)
		other |= PO_TYPE;
	if (b->host != c->host)
		other |= PO_HOST;
	if (b->gpu_denied != c->gpu_denied)
		other |= PO_DENIED;
	if (!engines_equal(b->engine, b->nr_engine, c->engine, c->nr_engine, true))
		other |= PO_ENGINES;
	for (unsigned i = 0; i < PS__COUNT; i++)
		if (!ostr_equal(proc_str(b, i), proc_str(c, i)))
			strs |= (uint64_t)1 << i;
	if (strs)
		other |= PO_STR;

	put_fields(sb, b->v, c->v, PF__COUNT, proc_has_v, b, c, other != 0);
	if (!other)
		return;
	put_u64(sb, other);
	if (other & PO_TYPE)
		put_u64(sb, c->type);
	if (other & PO_HOST)
		put_u64(sb, (uint64_t)c->host);
	if (other & PO_DENIED)
		put_u64(sb, c->gpu_denied);
	if (other & PO_ENGINES)
		put_engines(sb, b->engine, b->nr_engine, c->engine, c->nr_engine);
	if (other & PO_STR) {
		put_u64(sb, strs);
		for (unsigned i = 0; i < PS__COUNT; i++)
			if (strs >> i & 1)
				put_ostr(sb, proc_str(c, i));
	}
}

static void
put_new_proc(struct strbuf *sb, const struct gpu_proc *p)
{
	put_u64(sb, p->pid);
	put_u64(sb, p->dev);
	put_u64(sb, p->start_ticks);
	put_proc(sb, &zero_proc, p);
}

static bool
blk_empty(const struct strbuf *sb)
{
	return sb->len == 1 && sb->buf[0] == 0;
}

static void
put_nvidia(struct strbuf *sb, const struct nvidia_sysinfo *n)
{
	put_fixed(sb, n->driver_version, sizeof(n->driver_version));
	put_fixed(sb, n->nvml_version, sizeof(n->nvml_version));
	put_s64(sb, n->cuda_version);
	put_fixed(sb, n->library, sizeof(n->library));
}

static void
put_notes(struct strbuf *sb, const struct gpu_snapshot *s)
{
	put_u64(sb, s->nr_note);
	for (size_t i = 0; i < s->nr_note; i++)
		put_ostr(sb, s->note[i]);
}

static void
put_keyframe(struct strbuf *sb, const struct gpu_snapshot *s)
{
	put_value(sb, s->time, NULL);
	put_u64(sb, s->simulated);
	put_fixed(sb, s->hostname, sizeof(s->hostname));
	put_nvidia(sb, &s->nvidia);
	put_notes(sb, s);
	put_u64(sb, s->nr_dev);
	for (size_t i = 0; i < s->nr_dev; i++)
		put_dev(sb, &zero_dev, &s->dev[i]);
	put_u64(sb, s->nr_proc);
	for (size_t i = 0; i < s->nr_proc; i++)
		put_new_proc(sb, &s->proc[i]);
}

static bool
notes_equal(const struct gpu_snapshot *a, const struct gpu_snapshot *b)
{
	if (a->nr_note != b->nr_note)
		return false;
	for (size_t i = 0; i < a->nr_note; i++)
		if (strcmp(a->note[i], b->note[i]))
			return false;
	return true;
}

/* Whether b and c list the same GPUs in the same order, so that c can be a delta on b. */
static bool
same_devices(const struct gpu_snapshot *b, const struct gpu_snapshot *c)
{
	if (b->nr_dev != c->nr_dev)
		return false;
	for (size_t i = 0; i < c->nr_dev; i++) {
		const struct gpu_device *x = &b->dev[i], *y = &c->dev[i];

		if (x->index != y->index || x->vendor != y->vendor ||
		    strncmp(x->uuid, y->uuid, sizeof(x->uuid)) ||
		    strncmp(x->pci_bus_id, y->pci_bus_id, sizeof(x->pci_bus_id)))
			return false;
	}
	return true;
}

/* The devices that changed: (count, then for each the gap from the last one and its block). */
static bool
put_dev_section(struct enc *e, const struct gpu_snapshot *b, const struct gpu_snapshot *c)
{
	size_t n = 0, next = 0;

	strbuf_reset(&e->body);
	for (size_t i = 0; i < c->nr_dev; i++) {
		strbuf_reset(&e->blk);
		put_dev(&e->blk, &b->dev[i], &c->dev[i]);
		if (blk_empty(&e->blk))
			continue;
		put_u64(&e->body, i - next);
		strbuf_addbuf(&e->body, &e->blk);
		next = i + 1;
		n++;
	}
	strbuf_reset(&e->devs);
	put_u64(&e->devs, n);
	strbuf_addbuf(&e->devs, &e->body);
	return n != 0;
}

/* A process's key: (pid, GPU, start time); two processes with one key are told apart by order. */
static int
cmp_key(const struct gpu_proc *p, const struct gpu_proc *q)
{
	if (p->pid != q->pid)
		return p->pid < q->pid ? -1 : 1;
	if (p->dev != q->dev)
		return p->dev < q->dev ? -1 : 1;
	if (p->start_ticks != q->start_ticks)
		return p->start_ticks < q->start_ticks ? -1 : 1;
	return 0;
}

struct sort_ctx {
	const struct gpu_proc *proc;
};

static int
cmp_order(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *ctx = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = cmp_key(&ctx->proc[i], &ctx->proc[j]);

	if (c)
		return c;
	return i < j ? -1 : i > j;
}

/* The first unused process of b with p's key, or SIZE_MAX. */
static size_t
find_prev(const struct enc *e, const struct gpu_snapshot *b, const struct gpu_proc *p)
{
	size_t lo = 0, hi = b->nr_proc;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_key(&b->proc[e->order[mid]], p) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < b->nr_proc && !cmp_key(&b->proc[e->order[lo]], p); lo++)
		if (!e->used[e->order[lo]])
			return e->order[lo];
	return SIZE_MAX;
}

static void
flush_run(struct enc *e, size_t *run, size_t *ops)
{
	if (!*run)
		return;
	put_u64(&e->body, (uint64_t)*run << 1);
	(*ops)++;
	*run = 0;
}

/*
 * The processes of c as operations on those of b: a new process (0, then
 * it whole), one of b with what changed (odd: its index relative to the
 * one after the last used), or a run of b's unchanged ones (even: twice
 * their number). Those of b no operation names are gone. False when the
 * list is unchanged.
 */
static bool
put_proc_section(struct enc *e, const struct gpu_snapshot *b, const struct gpu_snapshot *c)
{
	struct sort_ctx ctx = { b->proc };
	size_t ops = 0, next = 0, run = 0;
	bool same = b->nr_proc == c->nr_proc;

	ALLOC_GROW(e->order, b->nr_proc, e->alloc_order);
	ALLOC_GROW(e->used, b->nr_proc, e->alloc_used);
	for (size_t i = 0; i < b->nr_proc; i++) {
		e->order[i] = i;
		e->used[i] = false;
	}
	if (b->nr_proc > 1)
		qsort_r(e->order, b->nr_proc, sizeof(*e->order), cmp_order, &ctx);
	strbuf_reset(&e->body);
	for (size_t i = 0; i < c->nr_proc; i++) {
		const struct gpu_proc *p = &c->proc[i];
		size_t j = SIZE_MAX;

		if (next < b->nr_proc && !e->used[next] && !cmp_key(&b->proc[next], p))
			j = next;
		else
			j = find_prev(e, b, p);
		if (j == SIZE_MAX) {
			flush_run(e, &run, &ops);
			put_u64(&e->body, 0);
			put_new_proc(&e->body, p);
			ops++;
			same = false;
			continue;
		}
		e->used[j] = true;
		strbuf_reset(&e->blk);
		put_proc(&e->blk, &b->proc[j], p);
		if (j == next && blk_empty(&e->blk)) {
			run++;
		} else {
			flush_run(e, &run, &ops);
			put_u64(&e->body, zigzag((int64_t)j - (int64_t)next) << 1 | 1);
			strbuf_addbuf(&e->body, &e->blk);
			ops++;
			same = false;
		}
		next = j + 1;
	}
	flush_run(e, &run, &ops);
	strbuf_reset(&e->procs);
	put_u64(&e->procs, ops);
	strbuf_addbuf(&e->procs, &e->body);
	return !same;
}

static bool
nvidia_equal(const struct nvidia_sysinfo *a, const struct nvidia_sysinfo *b)
{
	return !strncmp(a->driver_version, b->driver_version, sizeof(a->driver_version)) &&
	       !strncmp(a->nvml_version, b->nvml_version, sizeof(a->nvml_version)) &&
	       !strncmp(a->library, b->library, sizeof(a->library)) &&
	       a->cuda_version == b->cuda_version;
}

/* c as the changes from b, which lists the same devices (same_devices()). */
static void
put_delta(struct enc *e, struct strbuf *sb, const struct gpu_snapshot *b,
          const struct gpu_snapshot *c)
{
	uint64_t mask = 0;

	if (b->simulated != c->simulated)
		mask |= D_FLAGS;
	if (strncmp(b->hostname, c->hostname, sizeof(b->hostname)))
		mask |= D_HOST;
	if (!nvidia_equal(&b->nvidia, &c->nvidia))
		mask |= D_NVIDIA;
	if (!notes_equal(b, c))
		mask |= D_NOTES;
	if (put_dev_section(e, b, c))
		mask |= D_DEVS;
	if (put_proc_section(e, b, c))
		mask |= D_PROCS;

	put_value(sb, c->time, NULL);
	put_u64(sb, mask);
	if (mask & D_FLAGS)
		put_u64(sb, c->simulated);
	if (mask & D_HOST)
		put_fixed(sb, c->hostname, sizeof(c->hostname));
	if (mask & D_NVIDIA)
		put_nvidia(sb, &c->nvidia);
	if (mask & D_NOTES)
		put_notes(sb, c);
	if (mask & D_DEVS)
		strbuf_addbuf(sb, &e->devs);
	if (mask & D_PROCS)
		strbuf_addbuf(sb, &e->procs);
}

/* --- decoding snapshots ------------------------------------------------- */

static void
get_engines(struct dec *d, struct engine_use *e, unsigned *nr)
{
	uint64_t h = get_u64(d);

	if (h & 1) {
		uint64_t changed = h >> 1;

		if (*nr > GPU_MAX_ENGINES || changed >> *nr) {
			dec_fail(d); /* a value for an engine there is not */
			return;
		}
		for (unsigned i = 0; i < *nr; i++)
			if (changed >> i & 1)
				e[i].percent = get_value(d, &e[i].percent);
		return;
	}
	if (h) {
		dec_fail(d);
		return;
	}
	*nr = (unsigned)get_max(d, GPU_MAX_ENGINES);
	memset(e, 0, GPU_MAX_ENGINES * sizeof(*e));
	for (unsigned i = 0; i < *nr; i++) {
		get_fixed(d, e[i].name, sizeof(e[i].name));
		e[i].percent = get_value(d, NULL);
	}
}

static void
get_levels(struct dec *d, struct clock_levels *l)
{
	uint64_t h = get_max(d, 1);
	int64_t cur;

	if (!h) {
		memset(l->mhz, 0, sizeof(l->mhz));
		l->nr = (unsigned)get_max(d, MAX_LEVELS);
		for (unsigned i = 0; i < l->nr; i++)
			l->mhz[i] = (uint32_t)get_max(d, UINT32_MAX);
	}
	cur = get_s64(d);
	if (cur < -1 || cur >= MAX_LEVELS)
		dec_fail(d);
	else
		l->current = (int)cur;
}

/* The numeric fields of a block onto v/valid; returns whether other parts follow. */
static bool
get_dev_fields(struct dec *d, struct gpu_device *dev)
{
	uint64_t h = get_u64(d), set = h >> 2;

	if (set > dec_left(d))
		dec_fail(d);
	for (uint64_t i = 0; i < set && !d->bad; i++) {
		uint64_t f = get_u64(d);
		double unknown = 0;

		if (f < GF__COUNT)
			dev_set(dev, (enum gpu_field)f,
			        get_value(d, dev_has(dev, (enum gpu_field)f) ? &dev->v[f] : NULL));
		else
			get_value(d, &unknown); /* a field of a newer gpuscope: skipped */
	}
	if (h & 1) {
		size_t unset = get_count(d, SIZE_MAX);

		for (size_t i = 0; i < unset; i++) {
			uint64_t f = get_u64(d);

			if (f < GF__COUNT)
				dev_unset(dev, (enum gpu_field)f);
		}
	}
	return (h & 2) != 0;
}

static enum dev_state
state_of(uint64_t v)
{
	/* a state a newer gpuscope added is some failure this one cannot name */
	return v <= DEV_SUSPENDED ? (enum dev_state)v : DEV_ERROR;
}

static enum gpu_vendor
vendor_of(uint64_t v)
{
	return v <= VENDOR_OTHER ? (enum gpu_vendor)v : VENDOR_UNKNOWN;
}

/* Apply a device block to dev (the device it was written against). */
static void
get_dev(struct dec *d, struct gpu_device *dev)
{
	uint64_t other;

	if (!get_dev_fields(d, dev))
		return;
	other = get_u64(d);
	if (other & ~(uint64_t)DO__ALL) {
		dec_fail(d);
		return;
	}
	if (other & DO_STATE)
		dev->state = state_of(get_u64(d));
	if (other & DO_STR) {
		uint64_t strs = get_u64(d);

		if (strs >> ARRAY_SIZE(dev_str))
			dec_fail(d);
		for (unsigned i = 0; i < ARRAY_SIZE(dev_str); i++)
			if (strs >> i & 1)
				get_fixed(d, (char *)dev + dev_str[i].off, dev_str[i].size);
	}
	if (other & DO_PCI) {
		dev->pci_device_id = (uint32_t)get_max(d, UINT32_MAX);
		dev->pci_subsys_id = (uint32_t)get_max(d, UINT32_MAX);
		dev->pci_domain = (unsigned)get_max(d, UINT_MAX);
		dev->pci_bus = (unsigned)get_max(d, UINT_MAX);
		dev->pci_dev = (unsigned)get_max(d, UINT_MAX);
		dev->pci_func = (unsigned)get_max(d, UINT_MAX);
		dev->pci_valid = get_bool(d);
	}
	if (other & DO_ENGINES)
		get_engines(d, dev->engine, &dev->nr_engine);
	if (other & DO_LEVELS_GFX)
		get_levels(d, &dev->levels_gfx);
	if (other & DO_LEVELS_MEM)
		get_levels(d, &dev->levels_mem);
	if (other & DO_IDENT) {
		dev->index = (unsigned)get_max(d, UINT_MAX);
		dev->vendor = vendor_of(get_u64(d));
	}
	if (other & DO_PRIVATE) {
		dev->backend = (unsigned)get_max(d, UINT_MAX);
		dev->handle = (unsigned)get_max(d, UINT_MAX);
	}
}

static void
get_proc_fields(struct dec *d, struct gpu_proc *p, uint64_t h)
{
	uint64_t set = h >> 2;

	if (set > dec_left(d))
		dec_fail(d);
	for (uint64_t i = 0; i < set && !d->bad; i++) {
		uint64_t f = get_u64(d);
		double unknown = 0;

		if (f < PF__COUNT)
			proc_set(p, (enum proc_field)f,
			         get_value(d, proc_has(p, (enum proc_field)f) ? &p->v[f] : NULL));
		else
			get_value(d, &unknown);
	}
	if (h & 1) {
		size_t unset = get_count(d, SIZE_MAX);

		for (size_t i = 0; i < unset; i++) {
			uint64_t f = get_u64(d);

			if (f < PF__COUNT) {
				p->v[f] = 0;
				p->valid &= ~((uint32_t)1 << f);
			}
		}
	}
}

static void
get_proc_strings(struct dec *d, struct gpu_proc *p)
{
	uint64_t strs = get_u64(d);

	if (strs >> PS__COUNT)
		dec_fail(d);
	for (unsigned i = 0; i < PS__COUNT && !d->bad; i++) {
		char *s;

		if (!(strs >> i & 1))
			continue;
		s = get_ostr(d);
		if (i == PS_RUNTIME) {
			p->container_runtime = s ? runtime_name(s) : NULL;
			free(s);
		} else {
			char **slot = proc_str_slot(p, i);

			free(*slot);
			*slot = s;
		}
	}
}

static enum proc_host
host_of(uint64_t v)
{
	return v <= PHOST_NOT_VISIBLE ? (enum proc_host)v : PHOST_PARTIAL;
}

/* Apply a process block to p (the process it was written against). */
static void
get_proc(struct dec *d, struct gpu_proc *p)
{
	uint64_t h = get_u64(d), other;

	get_proc_fields(d, p, h);
	if (!(h & 2))
		return;
	other = get_u64(d);
	if (other & ~(uint64_t)PO__ALL) {
		dec_fail(d);
		return;
	}
	if (other & PO_TYPE)
		p->type = (unsigned)get_max(d, UINT_MAX);
	if (other & PO_HOST)
		p->host = host_of(get_u64(d));
	if (other & PO_DENIED)
		p->gpu_denied = get_bool(d);
	if (other & PO_ENGINES)
		get_engines(d, p->engine, &p->nr_engine);
	if (other & PO_STR)
		get_proc_strings(d, p);
}

static void
get_new_proc(struct dec *d, struct gpu_proc *p)
{
	p->pid = (uint32_t)get_max(d, UINT32_MAX);
	p->dev = (unsigned)get_max(d, UINT_MAX);
	p->start_ticks = get_u64(d);
	get_proc(d, p);
}

static void
get_nvidia(struct dec *d, struct nvidia_sysinfo *n)
{
	int64_t cuda;

	get_fixed(d, n->driver_version, sizeof(n->driver_version));
	get_fixed(d, n->nvml_version, sizeof(n->nvml_version));
	cuda = get_s64(d);
	if (cuda < INT_MIN || cuda > INT_MAX)
		dec_fail(d);
	else
		n->cuda_version = (int)cuda;
	get_fixed(d, n->library, sizeof(n->library));
}

static void
get_notes(struct dec *d, struct gpu_snapshot *s)
{
	size_t n = get_count(d, MAX_NOTE);

	notes_release(s);
	for (size_t i = 0; i < n && !d->bad; i++) {
		char *note = get_ostr(d);

		if (!note) {
			dec_fail(d);
			break;
		}
		ALLOC_GROW(s->note, s->nr_note + 1, s->alloc_note);
		s->note[s->nr_note++] = note;
	}
}

static void
get_flags(struct dec *d, struct gpu_snapshot *s)
{
	s->simulated = get_bool(d);
}

/* Every process on a GPU of the snapshot (front ends index dev[] with it). */
static void
check_procs(struct dec *d, const struct gpu_snapshot *s)
{
	for (size_t i = 0; i < s->nr_proc; i++)
		if (s->proc[i].dev >= s->nr_dev)
			dec_fail(d);
}

/* A keyframe into s, which is empty. */
static void
get_keyframe(struct dec *d, struct gpu_snapshot *s)
{
	size_t n;

	s->time = get_value(d, NULL);
	get_flags(d, s);
	get_fixed(d, s->hostname, sizeof(s->hostname));
	get_nvidia(d, &s->nvidia);
	get_notes(d, s);
	n = get_count(d, MAX_DEV);
	for (size_t i = 0; i < n && !d->bad; i++)
		get_dev(d, gpu_snapshot_add_dev(s));
	n = get_count(d, MAX_PROC);
	for (size_t i = 0; i < n && !d->bad; i++)
		get_new_proc(d, gpu_snapshot_add_proc(s));
	check_procs(d, s);
}

static void
get_dev_section(struct dec *d, struct gpu_snapshot *s)
{
	size_t n = get_count(d, s->nr_dev), next = 0;

	for (size_t i = 0; i < n && !d->bad; i++) {
		uint64_t gap = get_u64(d);

		if (gap >= s->nr_dev - next) {
			dec_fail(d);
			break;
		}
		next += (size_t)gap;
		get_dev(d, &s->dev[next++]);
	}
}

/* The operations of put_proc_section() on the processes of s. */
static void
get_proc_section(struct dec *d, struct gpu_snapshot *s)
{
	struct gpu_snapshot out; /* only its process list is used */
	size_t ops = get_count(d, SIZE_MAX), next = 0;

	gpu_snapshot_init(&out);
	for (size_t i = 0; i < ops && !d->bad; i++) {
		uint64_t h = get_u64(d);

		if (h == 0) {
			if (out.nr_proc >= MAX_PROC) {
				dec_fail(d);
				break;
			}
			get_new_proc(d, gpu_snapshot_add_proc(&out));
		} else if (h & 1) {
			int64_t rel = unzigzag(h >> 1);

			if (out.nr_proc >= MAX_PROC || rel < -(int64_t)next ||
			    rel >= (int64_t)(s->nr_proc - next)) {
				dec_fail(d);
				break;
			}
			next = (size_t)((int64_t)next + rel);
			proc_copy(gpu_snapshot_add_proc(&out), &s->proc[next++]);
			get_proc(d, &out.proc[out.nr_proc - 1]);
		} else {
			uint64_t run = h >> 1;

			if (run > s->nr_proc - next || run > MAX_PROC - out.nr_proc) {
				dec_fail(d);
				break;
			}
			for (uint64_t k = 0; k < run; k++)
				proc_copy(gpu_snapshot_add_proc(&out), &s->proc[next++]);
		}
	}
	for (size_t i = 0; i < s->nr_proc; i++)
		gpu_proc_release(&s->proc[i]);
	free(s->proc);
	s->proc = out.proc;
	s->nr_proc = out.nr_proc;
	s->alloc_proc = out.alloc_proc;
}

/* A delta onto s, a copy of the snapshot it was written against. */
static void
get_delta(struct dec *d, struct gpu_snapshot *s)
{
	uint64_t mask;

	s->time = get_value(d, NULL);
	mask = get_u64(d);
	if (mask & ~(uint64_t)D__ALL) {
		dec_fail(d);
		return;
	}
	if (mask & D_FLAGS)
		get_flags(d, s);
	if (mask & D_HOST)
		get_fixed(d, s->hostname, sizeof(s->hostname));
	if (mask & D_NVIDIA)
		get_nvidia(d, &s->nvidia);
	if (mask & D_NOTES)
		get_notes(d, s);
	if (mask & D_DEVS)
		get_dev_section(d, s);
	if (mask & D_PROCS)
		get_proc_section(d, s);
	check_procs(d, s);
}

/* Decode a payload of type onto s (empty for a keyframe); E_PARSE when it is malformed. */
static int
decode(const unsigned char *p, size_t len, unsigned type, struct gpu_snapshot *s)
{
	struct dec d = { p, p + len, false };

	if (type == REC_KEYFRAME)
		get_keyframe(&d, s);
	else
		get_delta(&d, s);
	return d.bad || d.p != d.end ? E_PARSE : 0;
}

/* --- files: header, frames, resynchronisation ----------------------------- */

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

static int
errno_status(int e)
{
	switch (e) {
	case ENOENT:
	case ENOTDIR:
		return E_NOTFOUND;
	case EACCES:
	case EPERM:
		return E_PERM;
	default:
		return E_IO;
	}
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

/* Write all of buf; returns 0 or an errno value. */
static int
write_all(int fd, const void *buf, size_t n)
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

static void
build_header(struct strbuf *sb)
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
	memcpy(fixed, file_magic, sizeof(file_magic));
	put_le(fixed + 8, FORMAT_VERSION, 2);
	put_le(fixed + 10, HDR_FIXED + nl + 4, 2);
	put_le(fixed + 12, GF__COUNT, 2);
	put_le(fixed + 14, PF__COUNT, 2);
	put_le(fixed + 16, nl, 2);
	strbuf_reset(sb);
	strbuf_add(sb, fixed, sizeof(fixed));
	strbuf_add(sb, note, nl);
	put_le(crc, crc32_add(0, sb->buf, sb->len), 4);
	strbuf_add(sb, crc, sizeof(crc));
}

/* Read and check f's header (f->fd, f->size set); fills the rest of f on HDR_OK. */
static int
read_header(struct rfile *f, enum hdr_state *st, struct err *err)
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
	if (memcmp(buf, file_magic, len < sizeof(file_magic) ? len : sizeof(file_magic))) {
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
	if (f->version != FORMAT_VERSION)
		*st = f->version > FORMAT_VERSION ? HDR_VERSION : HDR_BAD;
	else if (f->data < HDR_FIXED + nl + 4 || f->data > HDR_MAX)
		*st = HDR_BAD;
	else if (len < f->data)
		*st = len == f->size ? HDR_TORN : HDR_BAD;
	else if (crc32_add(0, buf, f->data - 4) != get_le(buf + f->data - 4, 4))
		*st = HDR_BAD;
	else
		*st = HDR_OK;
	if (*st == HDR_TORN)
		f->data = len;
	return 0;
}

enum frame {
	FR_OK,
	FR_END, /* off is the end of the file */
	FR_BAD, /* no good record at off: damage, or a torn last record */
};

/* The record at off: FR_OK with its payload, type and end, FR_END, FR_BAD, or E_IO. */
static int
frame_at(const struct rfile *f, uint64_t off, struct strbuf *payload, unsigned *type, uint64_t *end,
         struct err *err)
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
	crc = crc32_add(crc32_add(0, h + 4, 5), payload->buf, len);
	if (crc != get_le(h + 9, 4))
		return FR_BAD;
	*type = h[8];
	*end = off + REC_HDR + len;
	return FR_OK;
io:
	n = errno;
	return err_set(err, E_IO, "cannot read '%s': %s", f->path, strerror((int)n));
}

/*
 * The first good record at or after from (only a keyframe when want_key),
 * passing over good deltas, which *intact counts. Returns 1 with *found,
 * 0 when there is none, or E_IO.
 */
static int
resync(const struct rfile *f, uint64_t from, bool want_key, struct strbuf *tmp, uint64_t *found,
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
			fr = frame_at(f, pos + i, tmp, &type, &end, err);
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

/* The directory of path, as a path of its own (free() it). */
static char *
dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	return xstrndup(path, slash == path ? 1 : (size_t)(slash - path));
}

static void
sync_dir(const char *path)
{
	char *dir = dir_of(path);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	/* best effort: some file systems cannot sync a directory */
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

/* --- the writer ----------------------------------------------------------- */

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
	struct enc enc;
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

	build_header(&hdr);
	if (ftruncate(w->fd, 0)) {
		e = errno;
		strbuf_release(&hdr);
		return err_set(err, E_IO, "cannot truncate '%s': %s", w->path, strerror(e));
	}
	w->size = 0;
	e = write_all(w->fd, hdr.buf, hdr.len);
	if (!e)
		w->size = w->data = hdr.len;
	strbuf_release(&hdr);
	if (e)
		return err_set(err, E_IO, "cannot write to '%s': %s", w->path, strerror(e));
	w->since_key = 0;
	w->rotate = false;
	sync_dir(w->path);
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
		rc = frame_at(f, off, &tmp, &type, &next, err);
		if (rc == FR_OK) {
			off = end = next;
			continue;
		}
		if (rc != FR_BAD)
			break;
		rc = resync(f, off + 1, false, &tmp, &off, &intact, err);
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
	int rc = read_header(&f, &st, err);

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
	/* a file's header says which fields its records know: start a new file for ours */
	w->rotate = f.nr_gf != GF__COUNT || f.nr_pf != PF__COUNT;
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
	enc_release(&w->enc);
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
	strbuf_init(&w->enc.blk, 0);
	strbuf_init(&w->enc.body, 0);
	strbuf_init(&w->enc.devs, 0);
	strbuf_init(&w->enc.procs, 0);
	rc = open_file(w, err);
	if (rc < 0) {
		writer_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

static char *
rotated_name(const char *path, unsigned n)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "%s.%u", path, n);
	return strbuf_detach(&sb, NULL);
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
		char *from = i > 1 ? rotated_name(w->path, i - 1) : xstrdup(w->path);
		char *to = rotated_name(w->path, i);

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
	unsigned char *h;
	size_t len;

	strbuf_reset(&w->rec);
	strbuf_addchars(&w->rec, 0, REC_HDR);
	if (key)
		put_keyframe(&w->rec, s);
	else
		put_delta(&w->enc, &w->rec, &w->prev, s);
	len = w->rec.len - REC_HDR;
	h = (unsigned char *)w->rec.buf;
	memcpy(h, rec_magic, sizeof(rec_magic));
	put_le(h + 4, len, 4);
	h[8] = key ? REC_KEYFRAME : REC_DELTA;
	put_le(h + 9, crc32_add(crc32_add(0, h + 4, 5), h + REC_HDR, len), 4);
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
	key = !w->since_key || w->since_key >= w->o.keyframe_every || !same_devices(&w->prev, snap);
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
	e = write_all(w->fd, w->rec.buf, w->rec.len);
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
	snapshot_copy(&w->prev, snap);
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

/* --- the reader ----------------------------------------------------------- */

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
		int rc = frame_at(f, r->off, &r->payload, type, &end, err);

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
		rc = resync(f, r->off + 1, true, &r->payload, &found, &intact, err);
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
			snapshot_copy(&r->work, &r->cur);
		} else {
			/* a delta with nothing to apply it to; other types are for later versions
			 */
			if (type == REC_DELTA)
				count_skip(r, fi, off, 1);
			continue;
		}
		if (decode((const unsigned char *)r->payload.buf, r->payload.len, type, &r->work)) {
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

	f.fd = open(path, O_RDONLY | O_CLOEXEC);
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
	rc = read_header(&f, &st, err);
	if (rc < 0)
		goto fail;
	if (st == HDR_NOT)
		rc = err_set(err, E_PARSE, "'%s' is not a gpuscope recording", path);
	else if (st == HDR_BAD)
		rc = err_set(err, E_PARSE, "'%s' is a recording with a damaged header", path);
	else if (st == HDR_VERSION)
		rc = err_set(
		        err, E_VERSION,
		        "'%s' is a recording of format version %u; this gpuscope reads version %d",
		        path, f.version, FORMAT_VERSION);
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
	char *dir = dir_of(path);
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
		struct dec d = { (const unsigned char *)r->payload.buf,
			         (const unsigned char *)r->payload.buf + r->payload.len, false };
		double t = get_value(&d, NULL);

		if (d.bad || (type != REC_KEYFRAME && type != REC_DELTA)) {
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

int
rec_reader_open(const char *path, struct rec_reader **out, struct err *err)
{
	struct rec_reader *r = xcalloc(1, sizeof(*r));
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
		char *name = rotated_name(path, num[i]);

		rc = add_file(r, name, err);
		free(name);
	}
	free(num);
	if (rc >= 0)
		rc = add_file(r, path, err);
	if (rc > 0 && !r->nr_file)
		rc = err_set(err, E_NOTFOUND, "cannot open '%s': %s", path, strerror(ENOENT));
	if (rc >= 0)
		rc = build_index(r, err);
	if (rc < 0) {
		rec_reader_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

int
rec_reader_next(struct rec_reader *r, struct gpu_snapshot *snap, struct err *err)
{
	int rc;

	gpu_snapshot_release(snap);
	if (r->pending) {
		r->pending = false;
		snapshot_copy(snap, &r->cur);
		return 1;
	}
	rc = advance(r, err);
	if (rc > 0)
		snapshot_copy(snap, &r->cur);
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
		snapshot_copy(&cand, &r->cur);
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
	free(r);
}
