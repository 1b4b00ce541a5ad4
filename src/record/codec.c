/*
 * The payload of a record: a snapshot encoded whole (a keyframe) or as
 * what changed since the one before (a delta). Devices, processes and the
 * snapshot itself are written member by member from the tables of
 * snapshot.c, so what the model holds is what is recorded; numeric fields
 * go by their ids (core/fields.h, enum proc_field). Values are exact: the
 * shortest form that gives back the same 64 bits (docs/record-format.md,
 * "Values").
 */
#include "record/record.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "record/internal.h"

static const struct gpu_device zero_dev;
static const struct gpu_proc zero_proc;

/* --- integers ------------------------------------------------------------- */

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

/* --- values --------------------------------------------------------------- */

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

/* --- decoding primitives ---------------------------------------------------- */

/*
 * A cursor over a payload. The first malformed read marks it bad and
 * empties it, so every later read fails too and every count bounded by
 * what remains is 0: callers check bad once, at the end.
 */
struct dec {
	const unsigned char *p, *end;
	bool bad;
	uint64_t dev_parts, proc_parts, snap_parts; /* the parts its format version has */
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

/* --- members ------------------------------------------------------------------ */

static void *
at(void *base, size_t off)
{
	return (char *)base + off;
}

static const void *
cat(const void *base, size_t off)
{
	return (const char *)base + off;
}

static uint64_t
load_uint(const void *p, size_t size)
{
	uint64_t v = 0;

	if (size == sizeof(uint64_t)) {
		memcpy(&v, p, sizeof(v));
	} else if (size == sizeof(uint32_t)) {
		uint32_t u;

		memcpy(&u, p, sizeof(u));
		v = u;
	} else if (size == sizeof(bool)) {
		v = *(const unsigned char *)p;
	}
	return v;
}

static void
store_uint(void *p, size_t size, uint64_t v)
{
	if (size == sizeof(uint64_t)) {
		memcpy(p, &v, sizeof(v));
	} else if (size == sizeof(uint32_t)) {
		uint32_t u = (uint32_t)v;

		memcpy(p, &u, sizeof(u));
	} else if (size == sizeof(bool)) {
		*(bool *)p = v != 0;
	}
}

/* The numeric fields: whether f is valid in a block (device or process, by the member). */
static bool
f_has(const struct member *m, const void *o, unsigned f)
{
	if (m->nr_size == sizeof(uint32_t))
		return proc_has(o, (enum proc_field)f);
	return dev_has(o, (enum gpu_field)f);
}

static void
f_set(const struct member *m, void *o, unsigned f, double v)
{
	if (m->nr_size == sizeof(uint32_t))
		proc_set(o, (enum proc_field)f, v);
	else
		dev_set(o, (enum gpu_field)f, v);
}

static void
f_unset(const struct member *m, void *o, unsigned f)
{
	if (m->nr_size == sizeof(uint32_t)) {
		struct gpu_proc *p = o;

		p->v[f] = 0;
		p->valid &= ~((uint32_t)1 << f);
	} else {
		dev_unset(o, (enum gpu_field)f);
	}
}

static unsigned
f_count(const struct member *m)
{
	return (unsigned)(m->size / sizeof(double));
}

/*
 * The numeric fields of a block: (h, ids and values set, ids unset). h
 * tells how many were set and whether unset ids and other parts follow.
 */
static void
put_fields(struct strbuf *sb, const struct member *m, const void *b, const void *c, bool other)
{
	const double *bv = cat(b, m->off), *cv = cat(c, m->off);
	unsigned set = 0, unset = 0, count = f_count(m);

	for (unsigned f = 0; f < count; f++) {
		if (f_has(m, c, f) && (!f_has(m, b, f) || !same_bits(bv[f], cv[f])))
			set++;
		else if (!f_has(m, c, f) && f_has(m, b, f))
			unset++;
	}
	put_u64(sb, (uint64_t)set << 2 | (other ? 2 : 0) | (unset ? 1 : 0));
	for (unsigned f = 0; f < count; f++) {
		if (f_has(m, c, f) && (!f_has(m, b, f) || !same_bits(bv[f], cv[f]))) {
			put_u64(sb, f);
			put_value(sb, cv[f], f_has(m, b, f) ? &bv[f] : NULL);
		}
	}
	if (!unset)
		return;
	put_u64(sb, unset);
	for (unsigned f = 0; f < count; f++)
		if (!f_has(m, c, f) && f_has(m, b, f))
			put_u64(sb, f);
}

/* The numeric fields of a block onto o; returns whether other parts follow. */
static bool
get_fields(struct dec *d, const struct member *m, void *o)
{
	uint64_t h = get_u64(d), set = h >> 2;
	unsigned count = f_count(m);
	double *v = at(o, m->off);

	if (set > dec_left(d))
		dec_fail(d);
	for (uint64_t i = 0; i < set && !d->bad; i++) {
		uint64_t f = get_u64(d);
		double unknown = 0;

		if (f < count)
			f_set(m, o, (unsigned)f,
			      get_value(d, f_has(m, o, (unsigned)f) ? &v[f] : NULL));
		else
			get_value(d, &unknown); /* a field of a newer gpuscope: skipped */
	}
	if (h & 1) {
		size_t unset = get_count(d, SIZE_MAX);

		for (size_t i = 0; i < unset; i++) {
			uint64_t f = get_u64(d);

			if (f < count)
				f_unset(m, o, (unsigned)f);
		}
	}
	return (h & 2) != 0;
}

static bool
engine_names_equal(const struct engine_use *a, unsigned na, const struct engine_use *b, unsigned nb)
{
	if (na != nb || na > GPU_MAX_ENGINES)
		return false;
	for (unsigned i = 0; i < na; i++)
		if (strncmp(a[i].name, b[i].name, sizeof(a[i].name)))
			return false;
	return true;
}

/* Engines: the values that changed when the names did not, else the whole list. */
static void
put_engines(struct strbuf *sb, const struct engine_use *b, unsigned nb, const struct engine_use *c,
            unsigned nc)
{
	uint64_t changed = 0;

	if (!engine_names_equal(b, nb, c, nc)) {
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

/*
 * The same onto a process's engines, an array of their own size: decoded
 * into a full one, as get_engines() needs, then copied back.
 */
static void
get_proc_engines(struct dec *d, struct gpu_proc *p)
{
	struct engine_use e[GPU_MAX_ENGINES] = { 0 };
	unsigned n = p->nr_engine <= GPU_MAX_ENGINES ? p->nr_engine : 0;

	if (n)
		memcpy(e, p->engine, n * sizeof(e[0]));
	get_engines(d, e, &n);
	gpu_proc_set_engines(p, e, n);
}

static bool
level_list_equal(const struct clock_levels *a, const struct clock_levels *b)
{
	if (a->nr != b->nr || a->nr > MAX_LEVELS)
		return false;
	for (unsigned i = 0; i < a->nr; i++)
		if (a->mhz[i] != b->mhz[i])
			return false;
	return true;
}

/* Clock levels: the current one alone when the list is the same, else all. */
static void
put_levels(struct strbuf *sb, const struct clock_levels *b, const struct clock_levels *c)
{
	if (level_list_equal(b, c)) {
		put_u64(sb, 1);
	} else {
		put_u64(sb, 0);
		put_u64(sb, c->nr);
		for (unsigned i = 0; i < c->nr; i++)
			put_u64(sb, c->mhz[i]);
	}
	put_s64(sb, c->current);
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

/* Xid counts: the count of codes, then each code and its count. */
static void
put_xid(struct strbuf *sb, const struct xid_count *x, unsigned nr)
{
	put_u64(sb, nr);
	for (unsigned i = 0; i < nr; i++) {
		put_u64(sb, x[i].xid);
		put_u64(sb, x[i].count);
	}
}

static void
get_xid(struct dec *d, struct xid_count *x, unsigned *nr)
{
	*nr = (unsigned)get_max(d, GPU_MAX_XID);
	memset(x, 0, GPU_MAX_XID * sizeof(*x));
	for (unsigned i = 0; i < *nr; i++) {
		x[i].xid = (uint32_t)get_max(d, UINT32_MAX);
		x[i].count = get_u64(d);
	}
}

/*
 * NVLink links: the count, then each link's flags (1 present, 2 active),
 * version and valid bits, and each valid counter as the svarint of its
 * change from the same counter of the base (0 where the base has none).
 */
static uint64_t
nvlink_base(const struct nvlink_link *b, unsigned nb, unsigned i, unsigned k)
{
	return i < nb && (b[i].valid >> k & 1) ? b[i].v[k] : 0;
}

static void
put_nvlink(struct strbuf *sb, const struct nvlink_link *b, unsigned nb, const struct nvlink_link *c,
           unsigned nc)
{
	put_u64(sb, nc);
	for (unsigned i = 0; i < nc; i++) {
		put_u64(sb, (uint64_t)c[i].present | (uint64_t)c[i].active << 1);
		put_u64(sb, c[i].version);
		put_u64(sb, c[i].valid);
		for (unsigned k = 0; k < NL__COUNT; k++)
			if (c[i].valid >> k & 1)
				put_s64(sb, (int64_t)(c[i].v[k] - nvlink_base(b, nb, i, k)));
	}
}

static void
get_nvlink(struct dec *d, struct nvlink_link *l, unsigned *nr)
{
	struct nvlink_link c[GPU_MAX_NVLINK];
	unsigned n = (unsigned)get_max(d, GPU_MAX_NVLINK);

	memset(c, 0, sizeof(c));
	for (unsigned i = 0; i < n && !d->bad; i++) {
		uint64_t flags = get_max(d, 3);

		c[i].present = flags & 1;
		c[i].active = flags >> 1 & 1;
		c[i].version = (unsigned)get_max(d, UINT_MAX);
		c[i].valid = (unsigned)get_max(d, (1u << NL__COUNT) - 1);
		for (unsigned k = 0; k < NL__COUNT; k++)
			if (c[i].valid >> k & 1)
				c[i].v[k] = nvlink_base(l, *nr, i, k) + (uint64_t)get_s64(d);
	}
	if (d->bad)
		return;
	memcpy(l, c, sizeof(c));
	*nr = n;
}

static void
put_notes(struct strbuf *sb, const struct gpu_snapshot *s)
{
	put_u64(sb, s->nr_note);
	for (size_t i = 0; i < s->nr_note; i++)
		put_ostr(sb, s->note[i]);
}

static void
get_notes(struct dec *d, struct gpu_snapshot *s)
{
	size_t n = get_count(d, MAX_NOTE);

	for (size_t i = 0; i < s->nr_note; i++)
		free(s->note[i]);
	s->nr_note = 0;
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

/* Member m of c, written against the same member of b (engines and levels are steps). */
static void
put_member(struct strbuf *sb, const struct member *m, const void *b, const void *c)
{
	const void *pb = cat(b, m->off), *pc = cat(c, m->off);
	unsigned nb = m->nr_size ? (unsigned)load_uint(cat(b, m->nr_off), m->nr_size) : 0;
	unsigned nc = m->nr_size ? (unsigned)load_uint(cat(c, m->nr_off), m->nr_size) : 0;
	int iv;

	switch (m->kind) {
	case MK_UINT:
	case MK_U64:
	case MK_BOOL:
		put_u64(sb, load_uint(pc, m->size));
		break;
	case MK_ENUM:
	case MK_INT:
		memcpy(&iv, pc, sizeof(iv));
		if (m->kind == MK_ENUM)
			put_u64(sb, (uint64_t)(unsigned)iv);
		else
			put_s64(sb, iv);
		break;
	case MK_TIME:
		put_value(sb, *(const double *)pc, NULL);
		break;
	case MK_STR:
		put_fixed(sb, pc, m->size);
		break;
	case MK_OSTR:
	case MK_RUNTIME:
		put_ostr(sb, *(char *const *)pc);
		break;
	case MK_ENGINES:
		put_engines(sb, pb, nb, pc, nc);
		break;
	case MK_OENGINES:
		put_engines(sb, *(struct engine_use *const *)pb, nb,
		            *(struct engine_use *const *)pc, nc);
		break;
	case MK_LEVELS:
		put_levels(sb, pb, pc);
		break;
	case MK_XID:
		put_xid(sb, pc, nc);
		break;
	case MK_NVLINK:
		put_nvlink(sb, pb, nb, pc, nc);
		break;
	case MK_NOTES:
		put_notes(sb, c);
		break;
	case MK_FIELDS:
	case MK_DEVS:
	case MK_PROCS:
	case MK_SKIP:
		break; /* written by their blocks and sections */
	}
}

/* Member m onto o, the object it was written against. */
static void
get_member(struct dec *d, const struct member *m, void *o)
{
	void *p = at(o, m->off);
	unsigned *nr = m->nr_size == sizeof(unsigned) ? at(o, m->nr_off) : NULL;
	int64_t iv;
	uint64_t v;
	char *s;

	switch (m->kind) {
	case MK_UINT:
		store_uint(p, m->size, get_max(d, m->max));
		break;
	case MK_U64:
		store_uint(p, m->size, get_u64(d));
		break;
	case MK_BOOL:
		store_uint(p, m->size, get_max(d, 1));
		break;
	case MK_ENUM:
		v = get_u64(d);
		iv = (int64_t)(v <= m->max ? v : m->fallback); /* a value a newer gpuscope added */
		memcpy(p, &(int){ (int)iv }, sizeof(int));
		break;
	case MK_INT:
		iv = get_s64(d);
		if (iv < INT_MIN || iv > INT_MAX)
			dec_fail(d);
		else
			memcpy(p, &(int){ (int)iv }, sizeof(int));
		break;
	case MK_TIME:
		*(double *)p = get_value(d, NULL);
		break;
	case MK_STR:
		get_fixed(d, p, m->size);
		break;
	case MK_OSTR:
		s = get_ostr(d);
		free(*(char **)p);
		*(char **)p = s;
		break;
	case MK_RUNTIME:
		s = get_ostr(d);
		*(const char **)p = s ? rec_runtime_name(s) : NULL;
		free(s);
		break;
	case MK_ENGINES:
		if (nr)
			get_engines(d, p, nr);
		break;
	case MK_OENGINES:
		get_proc_engines(d, o); /* the only member of this kind */
		break;
	case MK_LEVELS:
		get_levels(d, p);
		break;
	case MK_XID:
		if (nr)
			get_xid(d, p, nr);
		break;
	case MK_NVLINK:
		if (nr)
			get_nvlink(d, p, nr);
		break;
	case MK_NOTES:
		get_notes(d, o);
		break;
	case MK_FIELDS:
	case MK_DEVS:
	case MK_PROCS:
	case MK_SKIP:
		break;
	}
}

/* --- blocks: a device or a process ----------------------------------------------- */

static const struct member *
fields_of(const struct mtable *t)
{
	for (size_t i = 0; i < t->nr; i++)
		if (t->m[i].kind == MK_FIELDS)
			return &t->m[i];
	return NULL;
}

/* What changed from b to c (of table t): a single 0 byte when nothing did. */
static void
put_block(struct strbuf *sb, const struct mtable *t, const void *b, const void *c)
{
	uint64_t other = 0, strs = 0;
	unsigned si = 0;

	for (size_t i = 0; i < t->nr; i++) {
		const struct member *m = &t->m[i];

		if (m->part >= 64)
			continue;
		if (m->part == t->str_part) {
			if (!rec_member_equal(m, b, c))
				strs |= (uint64_t)1 << si;
			si++;
		} else if (!rec_member_equal(m, b, c)) {
			other |= (uint64_t)1 << m->part;
		}
	}
	if (strs)
		other |= (uint64_t)1 << t->str_part;
	put_fields(sb, fields_of(t), b, c, other != 0);
	if (!other)
		return;
	put_u64(sb, other);
	for (unsigned part = 0; part < t->nr_parts; part++) {
		if (!(other >> part & 1))
			continue;
		if (part == t->str_part)
			put_u64(sb, strs);
		si = 0;
		for (size_t i = 0; i < t->nr; i++) {
			const struct member *m = &t->m[i];

			if (m->part != part)
				continue;
			if (part != t->str_part || (strs >> si & 1))
				put_member(sb, m, b, c);
			si++;
		}
	}
}

/* Apply a block of table t to o (what it was written against); known: the parts there may be. */
static void
get_block(struct dec *d, const struct mtable *t, void *o, uint64_t known)
{
	uint64_t other, strs = 0;
	unsigned nstr = 0;

	if (!get_fields(d, fields_of(t), o))
		return;
	other = get_u64(d);
	if (other & ~known) {
		dec_fail(d);
		return;
	}
	for (size_t i = 0; i < t->nr; i++)
		nstr += t->m[i].part == t->str_part;
	for (unsigned part = 0; part < t->nr_parts && !d->bad; part++) {
		unsigned si = 0;

		if (!(other >> part & 1))
			continue;
		if (part == t->str_part) {
			strs = get_u64(d);
			if (nstr < 64 && strs >> nstr)
				dec_fail(d);
		}
		for (size_t i = 0; i < t->nr && !d->bad; i++) {
			const struct member *m = &t->m[i];

			if (m->part != part)
				continue;
			if (part != t->str_part || (strs >> si & 1))
				get_member(d, m, o);
			si++;
		}
	}
}

/* A process's key (pid, GPU, start time), before its block when it is new. */
static void
put_key(struct strbuf *sb, const struct gpu_proc *p)
{
	for (size_t i = 0; i < rec_proc_table.nr; i++)
		if (rec_proc_table.m[i].part == PART_KEY)
			put_member(sb, &rec_proc_table.m[i], &zero_proc, p);
}

static void
get_key(struct dec *d, struct gpu_proc *p)
{
	for (size_t i = 0; i < rec_proc_table.nr; i++)
		if (rec_proc_table.m[i].part == PART_KEY)
			get_member(d, &rec_proc_table.m[i], p);
}

static void
put_new_proc(struct strbuf *sb, const struct gpu_proc *p)
{
	put_key(sb, p);
	put_block(sb, &rec_proc_table, &zero_proc, p);
}

static void
get_new_proc(struct dec *d, struct gpu_proc *p)
{
	get_key(d, p);
	get_block(d, &rec_proc_table, p, d->proc_parts);
}

/* --- the writer's scratch space ------------------------------------------------- */

void
rec_enc_init(struct rec_enc *e)
{
	memset(e, 0, sizeof(*e));
	strbuf_init(&e->blk, 0);
	strbuf_init(&e->body, 0);
	strbuf_init(&e->devs, 0);
	strbuf_init(&e->procs, 0);
}

void
rec_enc_release(struct rec_enc *e)
{
	strbuf_release(&e->blk);
	strbuf_release(&e->body);
	strbuf_release(&e->devs);
	strbuf_release(&e->procs);
	free(e->order);
	free(e->used);
}

static bool
blk_empty(const struct strbuf *sb)
{
	return sb->len == 1 && sb->buf[0] == 0;
}

bool
rec_same_devices(const struct gpu_snapshot *b, const struct gpu_snapshot *c)
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
put_dev_section(struct rec_enc *e, const struct gpu_snapshot *b, const struct gpu_snapshot *c)
{
	size_t n = 0, next = 0;

	strbuf_reset(&e->body);
	for (size_t i = 0; i < c->nr_dev; i++) {
		strbuf_reset(&e->blk);
		put_block(&e->blk, &rec_dev_table, &b->dev[i], &c->dev[i]);
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
find_prev(const struct rec_enc *e, const struct gpu_snapshot *b, const struct gpu_proc *p)
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
flush_run(struct rec_enc *e, size_t *run, size_t *ops)
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
put_proc_section(struct rec_enc *e, const struct gpu_snapshot *b, const struct gpu_snapshot *c)
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
		put_block(&e->blk, &rec_proc_table, &b->proc[j], p);
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

/* --- snapshots -------------------------------------------------------------------- */

/* The members of the snapshot in part, as in a keyframe (devices and processes whole). */
static void
put_snap_part(struct strbuf *sb, unsigned part, const struct gpu_snapshot *s)
{
	for (size_t i = 0; i < rec_snap_table.nr; i++) {
		const struct member *m = &rec_snap_table.m[i];

		if (m->part != part)
			continue;
		if (m->kind == MK_DEVS) {
			put_u64(sb, s->nr_dev);
			for (size_t k = 0; k < s->nr_dev; k++)
				put_block(sb, &rec_dev_table, &zero_dev, &s->dev[k]);
		} else if (m->kind == MK_PROCS) {
			put_u64(sb, s->nr_proc);
			for (size_t k = 0; k < s->nr_proc; k++)
				put_new_proc(sb, &s->proc[k]);
		} else {
			put_member(sb, m, s, s);
		}
	}
}

void
rec_put_keyframe(struct strbuf *sb, const struct gpu_snapshot *s)
{
	put_snap_part(sb, PART_FIRST, s);
	for (unsigned part = 0; part < rec_snap_table.nr_parts; part++)
		put_snap_part(sb, part, s);
}

void
rec_put_delta(struct rec_enc *e, struct strbuf *sb, const struct gpu_snapshot *b,
              const struct gpu_snapshot *c)
{
	uint64_t mask = 0;

	for (size_t i = 0; i < rec_snap_table.nr; i++) {
		const struct member *m = &rec_snap_table.m[i];

		if (m->part >= 64 || (mask >> m->part & 1))
			continue;
		if (m->kind == MK_DEVS    ? put_dev_section(e, b, c)
		    : m->kind == MK_PROCS ? put_proc_section(e, b, c)
		                          : !rec_member_equal(m, b, c))
			mask |= (uint64_t)1 << m->part;
	}
	put_snap_part(sb, PART_FIRST, c);
	put_u64(sb, mask);
	for (unsigned part = 0; part < rec_snap_table.nr_parts; part++) {
		if (!(mask >> part & 1))
			continue;
		for (size_t i = 0; i < rec_snap_table.nr; i++) {
			const struct member *m = &rec_snap_table.m[i];

			if (m->part != part)
				continue;
			if (m->kind == MK_DEVS)
				strbuf_addbuf(sb, &e->devs);
			else if (m->kind == MK_PROCS)
				strbuf_addbuf(sb, &e->procs);
			else
				put_member(sb, m, b, c);
		}
	}
}

/* Every process on a GPU of the snapshot (front ends index dev[] with it). */
static void
check_procs(struct dec *d, const struct gpu_snapshot *s)
{
	for (size_t i = 0; i < s->nr_proc; i++)
		if (s->proc[i].dev >= s->nr_dev)
			dec_fail(d);
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
		get_block(d, &rec_dev_table, &s->dev[next++], d->dev_parts);
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
			rec_proc_copy(gpu_snapshot_add_proc(&out), &s->proc[next++]);
			get_block(d, &rec_proc_table, &out.proc[out.nr_proc - 1], d->proc_parts);
		} else {
			uint64_t run = h >> 1;

			if (run > s->nr_proc - next || run > MAX_PROC - out.nr_proc) {
				dec_fail(d);
				break;
			}
			for (uint64_t k = 0; k < run; k++)
				rec_proc_copy(gpu_snapshot_add_proc(&out), &s->proc[next++]);
		}
	}
	for (size_t i = 0; i < s->nr_proc; i++)
		gpu_proc_release(&s->proc[i]);
	free(s->proc);
	s->proc = out.proc;
	s->nr_proc = out.nr_proc;
	s->alloc_proc = out.alloc_proc;
}

/* The members of the snapshot in part onto s; key: as in a keyframe. */
static void
get_snap_part(struct dec *d, unsigned part, struct gpu_snapshot *s, bool key)
{
	for (size_t i = 0; i < rec_snap_table.nr && !d->bad; i++) {
		const struct member *m = &rec_snap_table.m[i];
		size_t n;

		if (m->part != part)
			continue;
		if (m->kind == MK_DEVS && key) {
			n = get_count(d, MAX_DEV);
			for (size_t k = 0; k < n && !d->bad; k++)
				get_block(d, &rec_dev_table, gpu_snapshot_add_dev(s), d->dev_parts);
		} else if (m->kind == MK_DEVS) {
			get_dev_section(d, s);
		} else if (m->kind == MK_PROCS && key) {
			n = get_count(d, MAX_PROC);
			for (size_t k = 0; k < n && !d->bad; k++)
				get_new_proc(d, gpu_snapshot_add_proc(s));
		} else if (m->kind == MK_PROCS) {
			get_proc_section(d, s);
		} else {
			get_member(d, m, s);
		}
	}
}

int
rec_decode(const unsigned char *p, size_t len, unsigned type, unsigned version,
           struct gpu_snapshot *s)
{
	struct dec d = { p,
		         p + len,
		         false,
		         rec_parts_known(&rec_dev_table, version),
		         rec_parts_known(&rec_proc_table, version),
		         rec_parts_known(&rec_snap_table, version) };
	uint64_t mask = d.snap_parts;

	get_snap_part(&d, PART_FIRST, s, type == REC_KEYFRAME);
	if (type != REC_KEYFRAME) {
		mask = get_u64(&d);
		if (mask & ~d.snap_parts)
			dec_fail(&d);
	}
	for (unsigned part = 0; part < rec_snap_table.nr_parts && !d.bad; part++)
		if (mask >> part & 1)
			get_snap_part(&d, part, s, type == REC_KEYFRAME);
	check_procs(&d, s);
	return d.bad || d.p != d.end ? E_PARSE : 0;
}

bool
rec_payload_time(const unsigned char *p, size_t len, double *t)
{
	struct dec d = { p, p + len, false, 0, 0, 0 };

	*t = get_value(&d, NULL);
	return !d.bad;
}
