/*
 * The flight recorder's view of the sample model: one table per struct
 * (device, process, snapshot) that lists every member, with how it is
 * recorded and in which part of a block. The codec (codec.c) encodes and
 * decodes by these tables, and rec_snapshot_equal() compares by them, so
 * a member is named once; a member that is not a fact of the sample is in
 * the table too, as MK_SKIP with the reason.
 *
 * A member added to the model and not to its table is caught three ways:
 * the sizes asserted below stop the build, rec_snapshot_equal() compares
 * the bytes no member covers as well (so a round trip that loses it
 * fails), and tests/unit/t_record_fields.c checks that the tables cover
 * every byte of the structs but padding.
 */
#include "record/record.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "record/internal.h"

/*
 * The sizes of the structs the tables describe (x86-64 and AArch64). A
 * new member changes them: add it to its table below (and to
 * docs/record-format.md; a new part needs a new format version), then
 * update the size here.
 */
#if defined(__x86_64__) || defined(__aarch64__)
_Static_assert(sizeof(struct gpu_device) == 4224,
               "struct gpu_device changed: add the new member to dev_members[] in "
               "src/record/snapshot.c, then update this size");
_Static_assert(sizeof(struct gpu_proc) == 264,
               "struct gpu_proc changed: add the new member to proc_members[] in "
               "src/record/snapshot.c, then update this size");
_Static_assert(sizeof(struct gpu_snapshot) == 760,
               "struct gpu_snapshot changed: add the new member to snap_members[] in "
               "src/record/snapshot.c, then update this size");
#endif

#define M(T, m)  .name = #m, .off = offsetof(T, m), .size = sizeof(((T *)0)->m)
#define N(T, n)  .nr_off = offsetof(T, n), .nr_size = sizeof(((T *)0)->n)
#define D(m)     M(struct gpu_device, m)
#define P(m)     M(struct gpu_proc, m)
#define S(m)     M(struct gpu_snapshot, m)
#define V1       .since = 1
#define UINT(mx) .kind = MK_UINT, .max = (mx)

/* the parts of a device block: bit numbers of its "other" varint */
enum {
	DO_STATE,
	DO_STR,
	DO_PCI,
	DO_ENGINES,
	DO_LEVELS_GFX,
	DO_LEVELS_MEM,
	DO_IDENT,
	DO_PRIVATE,
	DO_XID,
	DO_NVLINK,
	DO_MIG,
	DO_XID_LAST
};

static const struct member dev_members[] = {
	{ D(v), N(struct gpu_device, valid), .kind = MK_FIELDS, .part = PART_FIELDS, V1 },
	{ D(state), .kind = MK_ENUM, .part = DO_STATE, V1, .max = DEV_SUSPENDED,
	  .fallback = DEV_ERROR },
	/* the strings, in the order of their bits */
	{ D(state_msg), .kind = MK_STR, .part = DO_STR, V1 },
	{ D(name), .kind = MK_STR, .part = DO_STR, V1 },
	{ D(uuid), .kind = MK_STR, .part = DO_STR, V1 },
	{ D(serial), .kind = MK_STR, .part = DO_STR, V1 },
	{ D(pci_bus_id), .kind = MK_STR, .part = DO_STR, V1 },
	{ D(vbios), .kind = MK_STR, .part = DO_STR, V1 },
	{ D(inforom), .kind = MK_STR, .part = DO_STR, V1 },
	{ D(board_part), .kind = MK_STR, .part = DO_STR, V1 },
	{ D(brand), .kind = MK_STR, .part = DO_STR, V1 },
	{ D(architecture), .kind = MK_STR, .part = DO_STR, V1 },
	{ D(compute_cap), .kind = MK_STR, .part = DO_STR, V1 },
	{ D(driver), .kind = MK_STR, .part = DO_STR, V1 },
	{ D(card), .kind = MK_STR, .part = DO_STR, V1 },
	{ D(unique_id), .kind = MK_STR, .part = DO_STR, V1 },
	{ D(util_source), .kind = MK_STR, .part = DO_STR, V1 },
	{ D(util_note), .kind = MK_STR, .part = DO_STR, V1 },
	{ D(throttle_detail), .kind = MK_STR, .part = DO_STR, V1 },
	{ D(mem_source), .kind = MK_STR, .part = DO_STR, V1 },
	{ D(pci_device_id), UINT(UINT32_MAX), .part = DO_PCI, V1 },
	{ D(pci_subsys_id), UINT(UINT32_MAX), .part = DO_PCI, V1 },
	{ D(pci_domain), UINT(UINT_MAX), .part = DO_PCI, V1 },
	{ D(pci_bus), UINT(UINT_MAX), .part = DO_PCI, V1 },
	{ D(pci_dev), UINT(UINT_MAX), .part = DO_PCI, V1 },
	{ D(pci_func), UINT(UINT_MAX), .part = DO_PCI, V1 },
	{ D(pci_valid), .kind = MK_BOOL, .part = DO_PCI, V1 },
	{ D(engine), N(struct gpu_device, nr_engine), .kind = MK_ENGINES, .part = DO_ENGINES, V1 },
	{ D(levels_gfx), .kind = MK_LEVELS, .part = DO_LEVELS_GFX, V1 },
	{ D(levels_mem), .kind = MK_LEVELS, .part = DO_LEVELS_MEM, V1 },
	{ D(index), UINT(UINT_MAX), .part = DO_IDENT, V1 },
	{ D(vendor), .kind = MK_ENUM, .part = DO_IDENT, V1, .max = VENDOR_OTHER,
	  .fallback = VENDOR_UNKNOWN },
	{ D(backend), UINT(UINT_MAX), .part = DO_PRIVATE, V1 },
	{ D(handle), UINT(UINT_MAX), .part = DO_PRIVATE, V1 },
	/* format version 2: what the post-mortem of a GPU that fell off the bus needs */
	{ D(xid), N(struct gpu_device, nr_xid), .kind = MK_XID, .part = DO_XID, .since = 2 },
	{ D(xid_watched), .kind = MK_BOOL, .part = DO_XID, .since = 2 },
	/* format version 3: NVLink links, MIG devices, the kubelet's allocation */
	{ D(nvlink), N(struct gpu_device, nr_nvlink), .kind = MK_NVLINK, .part = DO_NVLINK,
	  .since = 3 },
	{ D(is_mig), .kind = MK_BOOL, .part = DO_MIG, .since = 3 },
	{ D(mig_sm_count), UINT(UINT_MAX), .part = DO_MIG, .since = 3 },
	{ D(mig_parent), UINT(MAX_DEV - 1), .part = DO_MIG, .since = 3 },
	{ D(mig_gi), UINT(UINT_MAX), .part = DO_MIG, .since = 3 },
	{ D(mig_ci), UINT(UINT_MAX), .part = DO_MIG, .since = 3 },
	{ D(xid_last), UINT(UINT32_MAX), .part = DO_XID_LAST, .since = 3 },
	/* strings of format 3: after those of format 1, so that the bits of old files stay */
	{ D(mig_profile), .kind = MK_STR, .part = DO_STR, .since = 3 },
	{ D(alloc_namespace), .kind = MK_STR, .part = DO_STR, .since = 3 },
	{ D(alloc_pod), .kind = MK_STR, .part = DO_STR, .since = 3 },
	{ D(alloc_container), .kind = MK_STR, .part = DO_STR, .since = 3 },
};

/* the parts of a process block */
enum { PO_TYPE, PO_HOST, PO_DENIED, PO_ENGINES, PO_STR };

static const struct member proc_members[] = {
	/* the key, in its order */
	{ P(pid), UINT(UINT32_MAX), .part = PART_KEY, V1 },
	{ P(dev), UINT(UINT_MAX), .part = PART_KEY, V1 },
	{ P(start_ticks), .kind = MK_U64, .part = PART_KEY, V1 },
	{ P(v), N(struct gpu_proc, valid), .kind = MK_FIELDS, .part = PART_FIELDS, V1 },
	{ P(type), UINT(UINT_MAX), .part = PO_TYPE, V1 },
	{ P(host), .kind = MK_ENUM, .part = PO_HOST, V1, .max = PHOST_NOT_VISIBLE,
	  .fallback = PHOST_PARTIAL },
	{ P(gpu_denied), .kind = MK_BOOL, .part = PO_DENIED, V1 },
	{ P(engine), N(struct gpu_proc, nr_engine), .kind = MK_OENGINES, .part = PO_ENGINES, V1 },
	/* the strings, in the order of their bits */
	{ P(user), .kind = MK_OSTR, .part = PO_STR, V1 },
	{ P(name), .kind = MK_OSTR, .part = PO_STR, V1 },
	{ P(cmdline), .kind = MK_OSTR, .part = PO_STR, V1 },
	{ P(container), .kind = MK_OSTR, .part = PO_STR, V1 },
	{ P(pod), .kind = MK_OSTR, .part = PO_STR, V1 },
	{ P(cgroup), .kind = MK_OSTR, .part = PO_STR, V1 },
	{ P(container_runtime), .kind = MK_RUNTIME, .part = PO_STR, V1 },
	/* format version 3: who the process works for (Kubernetes, Slurm) */
	{ P(pod_name), .kind = MK_OSTR, .part = PO_STR, .since = 3 },
	{ P(pod_namespace), .kind = MK_OSTR, .part = PO_STR, .since = 3 },
	{ P(container_name), .kind = MK_OSTR, .part = PO_STR, .since = 3 },
	{ P(slurm_job), .kind = MK_OSTR, .part = PO_STR, .since = 3 },
	{ P(slurm_step), .kind = MK_OSTR, .part = PO_STR, .since = 3 },
	{ P(slurm_user), .kind = MK_OSTR, .part = PO_STR, .since = 3 },
};

/* the parts of a delta (a keyframe has them all, without the bits) */
enum { SD_FLAGS, SD_HOST, SD_NVIDIA, SD_NOTES, SD_DEVS, SD_PROCS };

static const struct member snap_members[] = {
	{ S(time), .kind = MK_TIME, .part = PART_FIRST, V1 },
	{ S(simulated), .kind = MK_BOOL, .part = SD_FLAGS, V1 },
	{ S(hostname), .kind = MK_STR, .part = SD_HOST, V1 },
	{ S(nvidia.driver_version), .kind = MK_STR, .part = SD_NVIDIA, V1 },
	{ S(nvidia.nvml_version), .kind = MK_STR, .part = SD_NVIDIA, V1 },
	{ S(nvidia.cuda_version), .kind = MK_INT, .part = SD_NVIDIA, V1 },
	{ S(nvidia.library), .kind = MK_STR, .part = SD_NVIDIA, V1 },
	{ S(note), N(struct gpu_snapshot, nr_note), .kind = MK_NOTES, .part = SD_NOTES, V1 },
	{ S(dev), N(struct gpu_snapshot, nr_dev), .kind = MK_DEVS, .part = SD_DEVS, V1 },
	{ S(proc), N(struct gpu_snapshot, nr_proc), .kind = MK_PROCS, .part = SD_PROCS, V1 },
	{ S(alloc_dev), .kind = MK_SKIP, .part = PART_NONE, V1,
	  .why = "the capacity of dev[], not a fact of the sample" },
	{ S(alloc_proc), .kind = MK_SKIP, .part = PART_NONE, V1,
	  .why = "the capacity of proc[], not a fact of the sample" },
	{ S(alloc_note), .kind = MK_SKIP, .part = PART_NONE, V1,
	  .why = "the capacity of note[], not a fact of the sample" },
};

const struct mtable rec_dev_table = { "struct gpu_device",
	                              sizeof(struct gpu_device),
	                              dev_members,
	                              ARRAY_SIZE(dev_members),
	                              DO_STR,
	                              DO_XID_LAST + 1 };
const struct mtable rec_proc_table = {
	"struct gpu_proc", sizeof(struct gpu_proc), proc_members, ARRAY_SIZE(proc_members), PO_STR,
	PO_STR + 1
};
const struct mtable rec_snap_table = { "struct gpu_snapshot",
	                               sizeof(struct gpu_snapshot),
	                               snap_members,
	                               ARRAY_SIZE(snap_members),
	                               UINT_MAX,
	                               SD_PROCS + 1 };

uint64_t
rec_parts_known(const struct mtable *t, unsigned version)
{
	uint64_t bits = 0;

	for (size_t i = 0; i < t->nr; i++)
		if (t->m[i].part < 64 && t->m[i].since <= version)
			bits |= (uint64_t)1 << t->m[i].part;
	return bits;
}

/* --- comparing members -------------------------------------------------------- */

static const void *
at(const void *base, size_t off)
{
	return (const char *)base + off;
}

static uint64_t
uint_at(const void *base, size_t off, size_t size)
{
	uint64_t v = 0;

	if (size == sizeof(uint64_t)) {
		memcpy(&v, at(base, off), sizeof(v));
	} else if (size == sizeof(uint32_t)) {
		uint32_t u;

		memcpy(&u, at(base, off), sizeof(u));
		v = u;
	} else if (size == sizeof(uint16_t)) {
		uint16_t u;

		memcpy(&u, at(base, off), sizeof(u));
		v = u;
	} else if (size == sizeof(uint8_t)) {
		v = *(const uint8_t *)at(base, off);
	}
	return v;
}

static bool
ostr_equal(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

static bool
engines_equal(const struct engine_use *a, uint64_t na, const struct engine_use *b, uint64_t nb)
{
	if (na != nb || na > GPU_MAX_ENGINES)
		return false;
	for (unsigned i = 0; i < na; i++)
		if (strncmp(a[i].name, b[i].name, sizeof(a[i].name)) ||
		    !same_bits(a[i].percent, b[i].percent))
			return false;
	return true;
}

static bool
levels_equal(const struct clock_levels *a, const struct clock_levels *b)
{
	if (a->nr != b->nr || a->nr > MAX_LEVELS || a->current != b->current)
		return false;
	for (unsigned i = 0; i < a->nr; i++)
		if (a->mhz[i] != b->mhz[i])
			return false;
	return true;
}

static bool
xid_equal(const struct xid_count *a, uint64_t na, const struct xid_count *b, uint64_t nb)
{
	if (na != nb || na > GPU_MAX_XID)
		return false;
	for (unsigned i = 0; i < na; i++)
		if (a[i].xid != b[i].xid || a[i].count != b[i].count)
			return false;
	return true;
}

static bool
nvlink_equal(const struct nvlink_link *a, uint64_t na, const struct nvlink_link *b, uint64_t nb)
{
	if (na != nb || na > GPU_MAX_NVLINK)
		return false;
	for (unsigned i = 0; i < na; i++) {
		if (a[i].present != b[i].present || a[i].active != b[i].active ||
		    a[i].version != b[i].version || a[i].valid != b[i].valid)
			return false;
		for (unsigned k = 0; k < NL__COUNT; k++)
			if ((a[i].valid >> k & 1) && a[i].v[k] != b[i].v[k])
				return false;
	}
	return true;
}

static bool
notes_equal(const struct gpu_snapshot *a, const struct gpu_snapshot *b)
{
	if (a->nr_note != b->nr_note)
		return false;
	for (size_t i = 0; i < a->nr_note; i++)
		if (!ostr_equal(a->note[i], b->note[i]))
			return false;
	return true;
}

/* Field f of a block (dev or proc: by the table the member m is of). */
static bool
field_has(const struct member *m, const void *base, unsigned f)
{
	if (m->nr_size == sizeof(uint32_t))
		return proc_has(base, (enum proc_field)f);
	return dev_has(base, (enum gpu_field)f);
}

/* The first field that differs between a and b, or -1. */
static int
fields_diff(const struct member *m, const void *a, const void *b)
{
	const double *va = at(a, m->off), *vb = at(b, m->off);

	for (unsigned f = 0; f < m->size / sizeof(double); f++) {
		bool ha = field_has(m, a, f), hb = field_has(m, b, f);

		if (ha != hb || (ha && !same_bits(va[f], vb[f])))
			return (int)f;
	}
	return -1;
}

bool
rec_member_equal(const struct member *m, const void *a, const void *b)
{
	const void *pa = at(a, m->off), *pb = at(b, m->off);
	uint64_t na = m->nr_size ? uint_at(a, m->nr_off, m->nr_size) : 0;
	uint64_t nb = m->nr_size ? uint_at(b, m->nr_off, m->nr_size) : 0;

	switch (m->kind) {
	case MK_UINT:
	case MK_U64:
	case MK_BOOL:
		return uint_at(a, m->off, m->size) == uint_at(b, m->off, m->size);
	case MK_INT:
	case MK_ENUM:
		return !memcmp(pa, pb, m->size);
	case MK_TIME:
		return same_bits(*(const double *)pa, *(const double *)pb);
	case MK_STR:
		return !strncmp(pa, pb, m->size);
	case MK_OSTR:
	case MK_RUNTIME:
		return ostr_equal(*(char *const *)pa, *(char *const *)pb);
	case MK_FIELDS:
		return fields_diff(m, a, b) < 0;
	case MK_ENGINES:
		return engines_equal(pa, na, pb, nb);
	case MK_OENGINES:
		return engines_equal(*(struct engine_use *const *)pa, na,
		                     *(struct engine_use *const *)pb, nb);
	case MK_LEVELS:
		return levels_equal(pa, pb);
	case MK_XID:
		return xid_equal(pa, na, pb, nb);
	case MK_NVLINK:
		return nvlink_equal(pa, na, pb, nb);
	case MK_NOTES:
		return notes_equal(a, b);
	case MK_DEVS:
	case MK_PROCS:
	case MK_SKIP:
		break; /* devices and processes: compared one by one (rec_snapshot_equal()) */
	}
	return true;
}

bool
rec_part_equal(const struct mtable *t, unsigned part, const void *a, const void *b)
{
	for (size_t i = 0; i < t->nr; i++)
		if (t->m[i].part == part && !rec_member_equal(&t->m[i], a, b))
			return false;
	return true;
}

/* --- copying ---------------------------------------------------------------- */

void
rec_proc_copy(struct gpu_proc *dst, const struct gpu_proc *src)
{
	memcpy(dst, src, sizeof(*dst));
	for (size_t i = 0; i < rec_proc_table.nr; i++) {
		const struct member *m = &rec_proc_table.m[i];

		if (m->kind == MK_OSTR) {
			char **slot = (char **)((char *)dst + m->off);

			*slot = *slot ? xstrdup(*slot) : NULL;
		}
	}
	dst->engine = NULL;
	gpu_proc_set_engines(dst, src->engine, src->nr_engine);
}

void
rec_snapshot_copy(struct gpu_snapshot *dst, const struct gpu_snapshot *src)
{
	gpu_snapshot_release(dst);
	dst->time = src->time;
	memcpy(dst->hostname, src->hostname, sizeof(dst->hostname));
	dst->simulated = src->simulated;
	dst->nvidia = src->nvidia;
	for (size_t i = 0; i < src->nr_dev; i++)
		memcpy(gpu_snapshot_add_dev(dst), &src->dev[i], sizeof(src->dev[i]));
	for (size_t i = 0; i < src->nr_proc; i++)
		rec_proc_copy(gpu_snapshot_add_proc(dst), &src->proc[i]);
	for (size_t i = 0; i < src->nr_note; i++) {
		ALLOC_GROW(dst->note, dst->nr_note + 1, dst->alloc_note);
		dst->note[dst->nr_note++] = xstrdup(src->note[i]);
	}
}

/* --- comparing snapshots ------------------------------------------------------ */

/* Which bytes of each struct a member covers, by table: made once. */
static unsigned char dev_covered[sizeof(struct gpu_device)];
static unsigned char proc_covered[sizeof(struct gpu_proc)];
static unsigned char snap_covered[sizeof(struct gpu_snapshot)];
static pthread_once_t covered_once = PTHREAD_ONCE_INIT;

static void
cover(const struct mtable *t, unsigned char *covered)
{
	for (size_t i = 0; i < t->nr; i++) {
		const struct member *m = &t->m[i];

		memset(covered + m->off, 1, m->size);
		if (m->nr_size)
			memset(covered + m->nr_off, 1, m->nr_size);
	}
}

static void
make_covered(void)
{
	cover(&rec_dev_table, dev_covered);
	cover(&rec_proc_table, proc_covered);
	cover(&rec_snap_table, snap_covered);
}

/*
 * The bytes of a and b (of table t) that no member covers and that
 * differ: the first one's offset, or -1. Padding is zero in what the
 * collectors, the reader and the tests make (calloc, memcpy), so a
 * difference there is a member the table does not know.
 */
static long
unlisted_diff(const struct mtable *t, const void *a, const void *b)
{
	const unsigned char *x = a, *y = b, *covered;

	pthread_once(&covered_once, make_covered);
	covered = t == &rec_dev_table    ? dev_covered
	          : t == &rec_proc_table ? proc_covered
	                                 : snap_covered;
	for (size_t off = 0; off < t->size; off++)
		if (!covered[off] && x[off] != y[off])
			return (long)off;
	return -1;
}

struct why {
	char *buf;
	size_t size;
};

static bool __attribute__((format(printf, 2, 3))) say(struct why *w, const char *fmt, ...)
{
	va_list ap;

	if (w->buf && w->size) {
		va_start(ap, fmt);
		vsnprintf(w->buf, w->size, fmt, ap);
		va_end(ap);
	}
	return false;
}

/* Whether members of t in a and b are the same, every one but those of kinds handled above. */
static bool
members_equal(const struct mtable *t, const void *a, const void *b, const char *where,
              struct why *w)
{
	long off;

	for (size_t i = 0; i < t->nr; i++) {
		const struct member *m = &t->m[i];
		int f;

		if (rec_member_equal(m, a, b))
			continue;
		if (m->kind != MK_FIELDS)
			return say(w, "%s%s differs", where, m->name);
		f = fields_diff(m, a, b);
		if (t == &rec_dev_table)
			return say(w, "%s%s differs (known %d vs %d, %.17g vs %.17g)", where,
			           field_info((enum gpu_field)f)->key, field_has(m, a, (unsigned)f),
			           field_has(m, b, (unsigned)f), ((const double *)at(a, m->off))[f],
			           ((const double *)at(b, m->off))[f]);
		return say(w, "%sprocess field %d differs (known %d vs %d, %.17g vs %.17g)", where,
		           f, field_has(m, a, (unsigned)f), field_has(m, b, (unsigned)f),
		           ((const double *)at(a, m->off))[f], ((const double *)at(b, m->off))[f]);
	}
	if ((off = unlisted_diff(t, a, b)) >= 0)
		return say(w,
		           "%sbyte %ld of %s differs, in no member of its table in "
		           "src/record/snapshot.c: add the member there",
		           where, off, t->what);
	return true;
}

bool
rec_snapshot_equal(const struct gpu_snapshot *a, const struct gpu_snapshot *b, char *why,
                   size_t why_size)
{
	struct why w = { why, why_size };
	char where[64];

	if (a->nr_note != b->nr_note)
		return say(&w, "%zu notes vs %zu", a->nr_note, b->nr_note);
	for (size_t i = 0; i < a->nr_note; i++)
		if (!ostr_equal(a->note[i], b->note[i]))
			return say(&w, "note[%zu] '%s' vs '%s'", i,
			           a->note[i] ? a->note[i] : "(null)",
			           b->note[i] ? b->note[i] : "(null)");
	if (!members_equal(&rec_snap_table, a, b, "", &w))
		return false;
	if (a->nr_dev != b->nr_dev)
		return say(&w, "%zu GPUs vs %zu", a->nr_dev, b->nr_dev);
	for (size_t i = 0; i < a->nr_dev; i++) {
		snprintf(where, sizeof(where), "dev[%zu]: ", i);
		if (!members_equal(&rec_dev_table, &a->dev[i], &b->dev[i], where, &w))
			return false;
	}
	if (a->nr_proc != b->nr_proc)
		return say(&w, "%zu processes vs %zu", a->nr_proc, b->nr_proc);
	for (size_t i = 0; i < a->nr_proc; i++) {
		snprintf(where, sizeof(where), "proc[%zu] (pid %u): ", i, a->proc[i].pid);
		if (!members_equal(&rec_proc_table, &a->proc[i], &b->proc[i], where, &w))
			return false;
	}
	return true;
}

/* --- container runtimes ------------------------------------------------------- */

/* The container runtimes procinfo.c names; a recorded name maps back to these strings. */
static const char *const runtimes[] = { "docker", "containerd", "cri-o",
	                                "podman", "lxc",        "kubernetes" };

const char *
rec_runtime_name(const char *name)
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
