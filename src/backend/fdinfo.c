/*
 * DRM clients from /proc/<pid>/fdinfo. A walk of /proc finds the DRM fds
 * (fstatat on procfs, readlink on a fixture tree) into an index that is
 * kept for cfg->reindex seconds; each sample reads the indexed fdinfo files,
 * parses drm-usage-stats leniently, deduplicates clients, turns counters
 * into rates against the previous sample, and groups clients per process
 * and device. Every path is relative to one proc_root directory fd.
 */
#include "backend/fdinfo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>

#include "core/config.h"
#include "core/err.h"
#include "core/fileio.h"
#include "core/parse.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#define DRM_MAJOR        226    /* /dev/dri/card*, renderD* */
#define PROC_SUPER_MAGIC 0x9fa0 /* statfs f_type of procfs (linux/magic.h) */
#define PF_KTHREAD       0x00200000u

/*
 * Bounds on what outside input can make us hold or do. A process with
 * more fds than FDS_EXAMINED_MAX has the rest ignored (servers with 100k
 * sockets would otherwise cost a second per walk); a GPU client keeps its
 * DRM fd among the first ones in practice.
 */
#define FDS_EXAMINED_MAX 8192  /* fd entries looked at per process and walk */
#define DRM_FDS_MAX      64    /* DRM fds indexed per process */
#define INDEX_MAX        8192  /* DRM fds indexed in all */
#define FDINFO_CAP       16384 /* bytes of one fdinfo file (amdgpu's is about 2 KiB) */
#define REGIONS_MAX      16    /* memory regions per client (amdgpu has 8) */
#define DEVS_MAX         64    /* minors resolved to devices per walk */
#define DENTS_SIZE       32768 /* getdents64 buffer */
#define DEVKEY_SIZE      40
#define CLIENTS_CAP      (1 << 20) /* bytes of a debugfs clients list (~100 per open file) */

/*
 * A counter may run a little ahead of our clock: now is taken before the
 * files are read, and reading them takes time. Up to this factor over the
 * elapsed time is read jitter (clamped to 100 %); beyond it, a bad delta.
 */
#define SLACK 1.05

/* What one engine's keys gave. */
enum {
	EK_NS = 1 << 0,      /* drm-engine-<e>: busy ns */
	EK_CYCLES = 1 << 1,  /* drm-cycles-<e> */
	EK_TOTAL = 1 << 2,   /* drm-total-cycles-<e> */
	EK_MAXFREQ = 1 << 3, /* drm-maxfreq-<e> */
	EK_PCT = 1 << 4,     /* amdgpu 5.14-5.18 "gfx0: 12.5%" */
	EK_USE = EK_NS | EK_CYCLES | EK_PCT,
};

struct eng_raw {
	char name[24];
	unsigned have;     /* EK_* */
	unsigned capacity; /* drm-engine-capacity-<e>, 1 when absent */
	uint64_t ns, cycles, total;
	double maxfreq; /* Hz */
	double pct;     /* legacy percent, rings summed */
	double when;    /* monotonic seconds of the ns/cycles kept for the next delta */
};

/* Which of a region's keys were seen. */
enum { RK_TOTAL = 1 << 0, RK_RESIDENT = 1 << 1, RK_LEGACY = 1 << 2 };

struct region {
	char name[24];
	unsigned have;
	double total, resident, legacy; /* bytes */
};

/* One fdinfo file, parsed. */
struct parsed {
	bool has_driver, has_id, has_pasid, has_ino, legacy;
	char driver[24];
	char pdev[16];
	uint64_t id, pasid, ino;
	struct region reg[REGIONS_MAX];
	unsigned nr_reg;
	struct eng_raw eng[GPU_MAX_ENGINES];
	unsigned nr_eng;
};

/* One DRM client (struct drm_file) as one sample saw it. */
struct client {
	char devkey[DEVKEY_SIZE]; /* pdev, else the device of the minor, else "minor:N" */
	bool noid;                /* neither drm-client-id nor pasid: keyed by (pid, fd) */
	uint64_t id;
	uint32_t pid; /* the holder it is given to: the lowest pid */
	int fd;
	uint64_t start_ticks;
	int minor;
	double when; /* the sample that read it */
	char driver[24];
	char pdev[16];
	bool has_local, has_system;
	double mem_local, mem_system;
	struct eng_raw eng[GPU_MAX_ENGINES];
	double pct[GPU_MAX_ENGINES];
	unsigned nr_eng;
};

/* How an indexed fd read last time. */
enum { FD_NEW = 0, FD_STATS, FD_PLAIN };

/* One DRM fd found by the walk. */
struct idx_fd {
	uint32_t pid;
	int fd;
	int minor;
	uint64_t start_ticks;
	int state;    /* FD_* */
	uint64_t ino; /* fdinfo's ino at the first read; 0 = none */
	bool drop;
};

/* A DRM fd that gave no client: no stats (nouveau, nvidia-drm) or unreadable. */
struct holder {
	uint32_t pid;
	uint64_t start_ticks;
	int minor;
	bool denied;
	char devkey[DEVKEY_SIZE];
	char driver[24];
};

/* The device behind a minor, from sysfs dev/char/226:N. */
struct devname {
	int minor;
	char key[DEVKEY_SIZE];
	char driver[24];
};

/* A client or holder on its way into the per-process list. */
struct part {
	uint32_t pid;
	uint64_t start_ticks;
	const char *devkey;
	int minor;
	const struct client *c; /* NULL for a holder */
	const struct holder *h;
};

enum { MODE_UNKNOWN = 0, MODE_STAT, MODE_LINK };

struct fdinfo_scan {
	const struct gs_config *cfg;
	int mode;      /* MODE_STAT on procfs, MODE_LINK on a fixture tree */
	uint32_t self; /* our pid on procfs, not listed; 0 otherwise */
	bool indexed;
	bool listed; /* the last index came from debugfs clients lists, not a walk of /proc */
	double index_time;
	size_t nr_blind; /* processes of the last walk whose fd directory we could not open */
	size_t nr_denied_pids;

	uint32_t *pid; /* the walk's pids */
	size_t nr_pid, alloc_pid;
	struct idx_fd *idx;
	size_t nr_idx, alloc_idx;
	struct devname *dev;
	size_t nr_dev, alloc_dev;

	struct client *cur, *hist;
	size_t nr_cur, alloc_cur, nr_hist, alloc_hist;
	struct holder *hold;
	size_t nr_hold, alloc_hold;
	struct part *part;
	size_t nr_part, alloc_part;
	struct fdinfo_proc *out;
	size_t nr_out, alloc_out;

	char *buf;   /* FDINFO_CAP + 1 */
	char *dents; /* DENTS_SIZE */
	struct strbuf clients;
};

/* --- small helpers ---------------------------------------------------------- */

/* Write v in decimal at p; returns the end. */
static char *
put_uint(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* A whole string of at most 10 digits as a number, or -1. */
static long long
name_number(const char *s)
{
	long long v = 0;
	int n = 0;

	for (; *s; s++, n++) {
		if (!parse_is_digit(*s) || n == 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return n ? v : -1;
}

/* Copy [p, end) into buf as a name: non-empty, printable ASCII without blanks, fits. */
static bool
copy_name(char *buf, size_t size, const char *p, const char *end)
{
	size_t n = (size_t)(end - p);

	if (!n || n >= size)
		return false;
	/* printable ASCII only: a NUL or a control character would cut or garble it */
	for (const char *q = p; q < end; q++)
		if ((unsigned char)*q <= ' ' || (unsigned char)*q >= 0x7f)
			return false;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return true;
}

/* Read at most cap bytes of dirfd/path into buf (NUL-terminated); the length, or -errno. */
static ssize_t
read_at(int dirfd, const char *path, char *buf, size_t cap)
{
	size_t len = 0;
	int fd = file_openat(dirfd, path);

	if (fd < 0)
		return -errno;
	while (len < cap) {
		size_t want = cap - len;
		ssize_t n = read(fd, buf + len, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			close(fd);
			return -e;
		}
		len += (size_t)n;
		/* procfs and regular files come whole: a short read is the end */
		if ((size_t)n < want)
			break;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

/* --- parsing one fdinfo ----------------------------------------------------- */

/*
 * A value "<uint>[ unit]": the number and the unit word ("" when none). By
 * hand, because strtoull() takes signs, hex and leading blanks we do not
 * want, and strtod() follows the locale.
 */
static bool
parse_value(const char *p, const char *end, uint64_t *v, const char **unit, const char **unit_end)
{
	if (!parse_u64(&p, end, v))
		return false;
	while (p < end && parse_is_blank(*p))
		p++;
	while (end > p && parse_is_blank(end[-1]))
		end--;
	for (const char *q = p; q < end; q++)
		if (parse_is_blank(*q))
			return false; /* "12 34", "5 KiB x" */
	*unit = p;
	*unit_end = end;
	return true;
}

/* "12.5%" (amdgpu before 5.19; blanks allowed before the sign). */
static bool
parse_percent(const char *p, const char *end, double *v)
{
	uint64_t ip, fp = 0;
	double scale = 1;

	if (!parse_u64(&p, end, &ip))
		return false;
	if (p < end && *p == '.') {
		for (p++; p < end && parse_is_digit(*p); p++) {
			if (scale < 1e15) {
				fp = fp * 10 + (uint64_t)(*p - '0');
				scale *= 10;
			}
		}
	}
	while (p < end && parse_is_blank(*p))
		p++;
	while (end > p && parse_is_blank(end[-1]))
		end--;
	if (!parse_span_is(p, end, "%"))
		return false;
	*v = (double)ip + (double)fp / scale;
	return true;
}

/* Bytes per unit of a memory value: none = bytes; "kB" is amdgpu's before 5.19. */
static double
mem_unit(const char *u, const char *end)
{
	if (u == end || parse_span_is(u, end, "B"))
		return 1;
	if (parse_span_is(u, end, "KiB") || parse_span_is(u, end, "kB"))
		return 1024.0;
	if (parse_span_is(u, end, "MiB"))
		return 1048576.0;
	if (parse_span_is(u, end, "GiB"))
		return 1073741824.0;
	return 0;
}

static double
freq_unit(const char *u, const char *end)
{
	if (u == end || parse_span_is(u, end, "Hz"))
		return 1;
	if (parse_span_is(u, end, "kHz") || parse_span_is(u, end, "KHz"))
		return 1e3;
	if (parse_span_is(u, end, "MHz"))
		return 1e6;
	if (parse_span_is(u, end, "GHz"))
		return 1e9;
	return 0;
}

/* The engine slot named [p, end), made when missing; NULL when it cannot be. */
static struct eng_raw *
engine_slot(struct parsed *f, const char *p, const char *end)
{
	char name[sizeof(f->eng[0].name)];
	struct eng_raw *e;

	if (!copy_name(name, sizeof(name), p, end))
		return NULL;
	for (unsigned i = 0; i < f->nr_eng; i++)
		if (!strcmp(f->eng[i].name, name))
			return &f->eng[i];
	if (f->nr_eng == GPU_MAX_ENGINES)
		return NULL;
	e = &f->eng[f->nr_eng++];
	memset(e, 0, sizeof(*e));
	str_copy(e->name, sizeof(e->name), name);
	e->capacity = 1;
	return e;
}

static struct region *
region_slot(struct parsed *f, const char *p, const char *end)
{
	char name[sizeof(f->reg[0].name)];
	struct region *r;

	if (!copy_name(name, sizeof(name), p, end))
		return NULL;
	for (unsigned i = 0; i < f->nr_reg; i++)
		if (!strcmp(f->reg[i].name, name))
			return &f->reg[i];
	if (f->nr_reg == REGIONS_MAX)
		return NULL;
	r = &f->reg[f->nr_reg++];
	memset(r, 0, sizeof(*r));
	str_copy(r->name, sizeof(r->name), name);
	return r;
}

static void
set_region(struct parsed *f, const char *name, const char *name_end, unsigned kind, const char *v,
           const char *vend)
{
	const char *u, *uend;
	struct region *r;
	uint64_t n;
	double mul;

	if (!parse_value(v, vend, &n, &u, &uend))
		return;
	mul = mem_unit(u, uend);
	if (mul == 0)
		return;
	r = region_slot(f, name, name_end);
	if (!r)
		return;
	r->have |= kind;
	if (kind == RK_TOTAL)
		r->total = (double)n * mul;
	else if (kind == RK_RESIDENT)
		r->resident = (double)n * mul;
	else
		r->legacy = (double)n * mul;
}

/* An engine counter key: "<uint>" with the one unit it may carry ("" = none needed). */
static void
set_engine(struct parsed *f, const char *name, const char *name_end, unsigned kind, const char *v,
           const char *vend)
{
	const char *u, *uend;
	struct eng_raw *e;
	uint64_t n;
	double mul = 1;

	if (!parse_value(v, vend, &n, &u, &uend))
		return;
	if (kind == EK_NS && u != uend && !parse_span_is(u, uend, "ns"))
		return;
	if (kind == EK_MAXFREQ) {
		mul = freq_unit(u, uend);
		if (mul == 0 || n == 0)
			return;
	} else if (kind != EK_NS && u != uend) {
		return;
	}
	e = engine_slot(f, name, name_end);
	if (!e)
		return;
	e->have |= kind;
	if (kind == EK_NS)
		e->ns = n;
	else if (kind == EK_CYCLES)
		e->cycles = n;
	else if (kind == EK_TOTAL)
		e->total = n;
	else
		e->maxfreq = (double)n * mul;
}

static void
set_capacity(struct parsed *f, const char *name, const char *name_end, const char *v,
             const char *vend)
{
	const char *u, *uend;
	struct eng_raw *e;
	uint64_t n;

	/* never 0 by the spec; 0 or absurd is ignored, leaving 1 */
	if (!parse_value(v, vend, &n, &u, &uend) || u != uend || n == 0 || n > 1024)
		return;
	e = engine_slot(f, name, name_end);
	if (e)
		e->capacity = (unsigned)n;
}

/* amdgpu's IP names before 5.19, in "gfx0: 12.5%" lines */
static const char *const legacy_ip[] = { "gfx", "compute", "dma", "dec", "enc_1", "enc", "jpeg" };

/* A legacy "<ip><ring>: <pct>%" line: rings of one IP add up. */
static bool
legacy_engine(struct parsed *f, const char *k, const char *kend, const char *v, const char *vend)
{
	for (size_t i = 0; i < ARRAY_SIZE(legacy_ip); i++) {
		const char *p = k;
		struct eng_raw *e;
		double pct;

		if (!parse_skip_prefix(&p, kend, legacy_ip[i]) || p == kend)
			continue;
		while (p < kend && parse_is_digit(*p))
			p++;
		if (p != kend)
			continue;
		if (!parse_percent(v, vend, &pct))
			return false;
		e = engine_slot(f, legacy_ip[i], legacy_ip[i] + strlen(legacy_ip[i]));
		if (!e)
			return true;
		e->have |= EK_PCT;
		e->pct += pct;
		f->legacy = true;
		return true;
	}
	return false;
}

/* amdgpu's memory lines before 5.19: "vram mem:\t1024 kB" */
static bool
legacy_memory(struct parsed *f, const char *k, const char *kend, const char *v, const char *vend)
{
	static const char *const region[] = { "vram", "gtt", "cpu" };

	for (size_t i = 0; i < ARRAY_SIZE(region); i++) {
		const char *p = k, *r = region[i];

		if (parse_skip_prefix(&p, kend, r) && parse_span_is(p, kend, " mem")) {
			set_region(f, r, r + strlen(r), RK_LEGACY, v, vend);
			f->legacy = true;
			return true;
		}
	}
	return false;
}

static void
copy_id(char *buf, size_t size, const char *v, const char *vend)
{
	while (v < vend && parse_is_blank(*v))
		v++;
	while (vend > v && parse_is_blank(vend[-1]))
		vend--;
	if (!copy_name(buf, size, v, vend))
		buf[0] = '\0';
}

static void
parse_id(const char *v, const char *vend, bool *has, uint64_t *id)
{
	const char *u, *uend;

	*has = parse_value(v, vend, id, &u, &uend) && u == uend;
}

/* One "key: value" line. Unknown keys, and known keys with bad values, are ignored. */
static void
parse_line(struct parsed *f, const char *k, const char *kend, const char *v, const char *vend)
{
	const char *p = k;

	if (parse_skip_prefix(&p, kend, "drm-")) {
		if (parse_span_is(p, kend, "driver")) {
			copy_id(f->driver, sizeof(f->driver), v, vend);
			f->has_driver = f->driver[0] != '\0';
		} else if (parse_span_is(p, kend, "pdev")) {
			copy_id(f->pdev, sizeof(f->pdev), v, vend);
		} else if (parse_span_is(p, kend, "client-id")) {
			parse_id(v, vend, &f->has_id, &f->id);
		} else if (parse_skip_prefix(&p, kend, "engine-capacity-")) {
			set_capacity(f, p, kend, v, vend);
		} else if (parse_skip_prefix(&p, kend, "engine-")) {
			set_engine(f, p, kend, EK_NS, v, vend);
		} else if (parse_skip_prefix(&p, kend, "cycles-")) {
			set_engine(f, p, kend, EK_CYCLES, v, vend);
		} else if (parse_skip_prefix(&p, kend, "total-cycles-")) {
			set_engine(f, p, kend, EK_TOTAL, v, vend);
		} else if (parse_skip_prefix(&p, kend, "maxfreq-")) {
			set_engine(f, p, kend, EK_MAXFREQ, v, vend);
		} else if (parse_skip_prefix(&p, kend, "total-")) {
			set_region(f, p, kend, RK_TOTAL, v, vend);
		} else if (parse_skip_prefix(&p, kend, "resident-")) {
			set_region(f, p, kend, RK_RESIDENT, v, vend);
		} else if (parse_skip_prefix(&p, kend, "memory-")) {
			set_region(f, p, kend, RK_LEGACY, v, vend);
		}
		/*
		 * drm-shared-, -purgeable-, -active-<region> are parts of
		 * total or resident; drm-curfreq-, -client-name and the rest
		 * say nothing we show
		 */
		return;
	}
	/* amdgpu before 5.19: no drm- keys at all */
	if (parse_span_is(k, kend, "pdev")) {
		copy_id(f->pdev, sizeof(f->pdev), v, vend);
		f->legacy = true;
	} else if (parse_span_is(k, kend, "pasid")) {
		parse_id(v, vend, &f->has_pasid, &f->pasid);
	} else if (parse_span_is(k, kend, "ino")) {
		parse_id(v, vend, &f->has_ino, &f->ino);
	} else if (!legacy_memory(f, k, kend, v, vend)) {
		/* driver-prefixed keys (amd-*, panthor-*, v3d-jobs-*) and pos, flags, mnt_id */
		legacy_engine(f, k, kend, v, vend);
	}
}

/*
 * Parse an fdinfo text. Lines are "key:<blanks>value"; pasted copies and
 * amdgpu's "drm-memory-gtt: \t" have spaces too, so blanks around both are
 * dropped. A cut last line (the file filled the cap) is not trusted.
 */
static void
parse_fdinfo(const char *buf, size_t len, bool cut, struct parsed *f)
{
	const char *p = buf, *end = buf + len;

	memset(f, 0, sizeof(*f));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end, *k = p, *colon, *kend;

		p = nl ? nl + 1 : end;
		if (!nl && cut)
			break;
		while (k < eol && parse_is_blank(*k))
			k++;
		colon = memchr(k, ':', (size_t)(eol - k));
		if (!colon)
			continue;
		kend = colon;
		while (kend > k && parse_is_blank(kend[-1]))
			kend--;
		if (kend > k)
			parse_line(f, k, kend, colon + 1, eol);
	}
}

/* --- memory ----------------------------------------------------------------- */

enum mem_class { MEM_NONE, MEM_LOCAL, MEM_SYSTEM };

/* Is s the word, optionally followed by an instance number ("vram", "vram0")? */
static bool
word_n(const char *s, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(s, word, n))
		return false;
	for (s += n; *s; s++)
		if (!parse_is_digit(*s))
			return false;
	return true;
}

/*
 * Stolen memory (i915 stolen-system0 / stolen-local0, xe stolen) is set
 * aside for the GPU by the firmware, out of the operating system's reach
 * even when it is carved from RAM, so it counts as device memory. amdgpu's
 * gds, gws, oa, doorbell and mmioremap are on-chip pools and apertures,
 * not memory a user would add up: ignored, like any unknown region.
 */
static enum mem_class
region_class(const char *r)
{
	if (word_n(r, "vram") || word_n(r, "local") || !strncmp(r, "stolen", 6))
		return MEM_LOCAL;
	if (word_n(r, "gtt") || word_n(r, "system") || !strcmp(r, "cpu") || !strcmp(r, "memory"))
		return MEM_SYSTEM;
	return MEM_NONE;
}

/* Resident bytes per region: drm-resident-, else the deprecated drm-memory-, else drm-total-. */
static void
client_memory(struct client *c, const struct parsed *f)
{
	for (unsigned i = 0; i < f->nr_reg; i++) {
		const struct region *r = &f->reg[i];
		enum mem_class cls = region_class(r->name);
		double v;

		if (cls == MEM_NONE)
			continue;
		if (r->have & RK_RESIDENT)
			v = r->resident;
		else if (r->have & RK_LEGACY)
			v = r->legacy;
		else
			v = r->total;
		if (cls == MEM_LOCAL) {
			c->mem_local += v;
			c->has_local = true;
		} else {
			c->mem_system += v;
			c->has_system = true;
		}
	}
}

/* --- the device behind a minor ---------------------------------------------- */

static const char *
base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * sysfs dev/char/226:<minor> links to ".../<device>/drm/renderD128": the
 * device's name ("0000:03:00.0", "3d00000.gpu") puts the card and render
 * node of one GPU together when the driver prints no drm-pdev, and its
 * driver names the GPU of a file without stats. Without sysfs (a fixture)
 * the minor itself is the key. Resolved once per minor and walk.
 */
static void
device_of(struct fdinfo_scan *s, int minor, char *key, char *driver)
{
	char rel[64], path[4096], target[4096];
	struct devname *d;
	char *drm;
	ssize_t n;

	for (size_t i = 0; i < s->nr_dev; i++) {
		if (s->dev[i].minor == minor) {
			memcpy(key, s->dev[i].key, DEVKEY_SIZE);
			memcpy(driver, s->dev[i].driver, sizeof(s->dev[i].driver));
			return;
		}
	}
	snprintf(key, DEVKEY_SIZE, "minor:%d", minor);
	driver[0] = '\0';
	snprintf(rel, sizeof(rel), "dev/char/%d:%d", DRM_MAJOR, minor);
	path_join(path, sizeof(path), s->cfg->sysfs_root, rel);
	n = readlink(path, target, sizeof(target) - 1);
	if (n > 0) {
		target[n] = '\0';
		drm = strstr(target, "/drm/");
		if (drm) {
			*drm = '\0';
			str_copy(key, DEVKEY_SIZE, base_name(target));
		}
		snprintf(rel, sizeof(rel), "dev/char/%d:%d/device/driver", DRM_MAJOR, minor);
		file_link_base(s->cfg->sysfs_root, rel, driver, sizeof(s->dev[0].driver));
	}
	if (s->nr_dev == DEVS_MAX)
		return;
	ALLOC_GROW(s->dev, s->nr_dev + 1, s->alloc_dev);
	d = &s->dev[s->nr_dev++];
	d->minor = minor;
	memcpy(d->key, key, DEVKEY_SIZE);
	str_copy(d->driver, sizeof(d->driver), driver);
}

/* --- the walk: which fds are DRM files -------------------------------------- */

/*
 * The minor of a DRM node link target of len bytes ("/dev/dri/renderD128",
 * "../dri/card1"), or -1. Most targets ("pipe:[4711]", "socket:[12]",
 * "/usr/lib/libc.so.6") fail the first test.
 */
static int
link_minor(const char *target, size_t len)
{
	const char *b = target + len;
	long long m;

	if (len < 9 || !parse_is_digit(b[-1]))
		return -1;
	while (b > target && b[-1] != '/')
		b--;
	if (b - target < 4 || memcmp(b - 4, "dri/", 4))
		return -1;
	if (!strncmp(b, "renderD", 7))
		m = name_number(b + 7);
	else if (!strncmp(b, "card", 4))
		m = name_number(b + 4);
	else
		return -1;
	return m < 0 || m > (1 << 20) ? -1 : (int)m;
}

struct pstat {
	char state;
	uint64_t flags;
	uint64_t start; /* clock ticks after boot */
};

/*
 * /proc/<pid>/stat fields 3 (state), 9 (flags) and 22 (starttime). comm
 * may hold ") (" and blanks, so fields are counted from the last ')'.
 */
static bool
read_pstat(struct fdinfo_scan *s, int procfd, uint32_t pid, struct pstat *ps)
{
	char path[24], *p = put_uint(path, pid);
	const char *q, *end;
	ssize_t n;

	memcpy(p, "/stat", 6);
	n = read_at(procfd, path, s->buf, 4095);
	if (n <= 0)
		return false;
	end = s->buf + n;
	q = memrchr(s->buf, ')', (size_t)n);
	if (!q)
		return false;
	q++;
	memset(ps, 0, sizeof(*ps));
	for (unsigned field = 3; field <= 22; field++) {
		const char *tok;

		while (q < end && *q == ' ')
			q++;
		tok = q;
		while (q < end && *q != ' ' && *q != '\n')
			q++;
		if (q == tok)
			return false;
		if (field == 3) {
			ps->state = *tok;
		} else if (field == 9 || field == 22) {
			uint64_t v;

			if (!parse_u64(&tok, q, &v) || tok != q)
				return false;
			if (field == 9)
				ps->flags = v;
			else
				ps->start = v;
		}
	}
	return true;
}

/* A process whose fd directory we may not open: worth a note unless it holds no files. */
static void
note_blind(struct fdinfo_scan *s, int procfd, uint32_t pid)
{
	struct pstat ps;

	if (read_pstat(s, procfd, pid, &ps) &&
	    ((ps.flags & PF_KTHREAD) || ps.state == 'Z' || ps.state == 'X'))
		return;
	s->nr_blind++;
}

static bool
add_index(struct fdinfo_scan *s, uint32_t pid, int fd, int minor)
{
	struct idx_fd *x;

	if (s->nr_idx == INDEX_MAX)
		return false;
	ALLOC_GROW(s->idx, s->nr_idx + 1, s->alloc_idx);
	x = &s->idx[s->nr_idx++];
	memset(x, 0, sizeof(*x));
	x->pid = pid;
	x->fd = fd;
	x->minor = minor;
	return true;
}

/*
 * Index the DRM fds in the fd directory fdd of pid. On procfs, fstatat()
 * follows each fd's link to the file itself: a character device of the
 * DRM major is a DRM file, without the cost of building its path as
 * readlink() does. A fixture holds symbolic links instead. Returns false
 * when the fds cannot be examined (no ptrace read rights).
 */
static bool
walk_fds(struct fdinfo_scan *s, int fdd, uint32_t pid)
{
	size_t seen = 0, found = 0;
	bool eof = false;

	for (;;) {
		ssize_t n = getdents64(fdd, s->dents, DENTS_SIZE);

		if (n <= 0)
			return true;
		/*
		 * procfs fills the buffer while entries remain: room for
		 * another entry left over means the end, without the call
		 * that would return 0 (one system call per process saved)
		 */
		if (s->mode == MODE_STAT && (size_t)n + sizeof(struct dirent64) <= DENTS_SIZE)
			eof = true;
		for (ssize_t off = 0; off < n;) {
			const struct dirent64 *de = (const void *)(s->dents + off);
			long long fd = name_number(de->d_name);
			int minor;

			off += de->d_reclen;
			if (fd < 0 || fd > INT32_MAX)
				continue;
			if (++seen > FDS_EXAMINED_MAX)
				return true;
			if (s->mode == MODE_STAT) {
				struct stat st;

				if (fstatat(fdd, de->d_name, &st, 0)) {
					if (errno == EACCES || errno == EPERM)
						return false;
					continue; /* closed meanwhile */
				}
				if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != DRM_MAJOR)
					continue;
				minor = (int)minor(st.st_rdev);
			} else {
				char target[256];
				ssize_t len =
				        readlinkat(fdd, de->d_name, target, sizeof(target) - 1);

				if (len <= 0)
					continue;
				target[len] = '\0';
				minor = link_minor(target, (size_t)len);
				if (minor < 0)
					continue;
			}
			if (found == DRM_FDS_MAX || !add_index(s, pid, (int)fd, minor))
				return true;
			found++;
		}
		if (eof)
			return true;
	}
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int
cmp_idx(const void *a, const void *b)
{
	const struct idx_fd *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->fd < y->fd ? -1 : x->fd > y->fd;
}

/* The numeric names of the directory dfd (pids), sorted. */
static void
list_pids(struct fdinfo_scan *s, int dfd)
{
	s->nr_pid = 0;
	for (;;) {
		ssize_t n = getdents64(dfd, s->dents, DENTS_SIZE);

		if (n <= 0)
			break;
		for (ssize_t off = 0; off < n;) {
			const struct dirent64 *de = (const void *)(s->dents + off);
			long long pid = name_number(de->d_name);

			off += de->d_reclen;
			if (pid <= 0 || pid > INT32_MAX || (uint32_t)pid == s->self)
				continue;
			ALLOC_GROW(s->pid, s->nr_pid + 1, s->alloc_pid);
			s->pid[s->nr_pid++] = (uint32_t)pid;
		}
	}
	if (s->nr_pid > 1)
		qsort(s->pid, s->nr_pid, sizeof(*s->pid), cmp_u32);
}

/* --- the short cut: DRM's own list of its clients ---------------------------- */

/*
 * A pid in the second column of a debugfs clients line, or -1 when the line
 * is not one. The kernel prints "%20s %5d %3d   %c    %c %5d %10u" and, on
 * newer kernels, a name and a client id: comm (at most 15 bytes, right-
 * aligned) fills the first 20 columns, so the pid starts after them even
 * when comm holds blanks. Anything else fails, and the caller walks /proc.
 */
static long long
clients_line_pid(const char *p, const char *end)
{
	uint64_t pid, minor;
	const char *q;

	if (end - p < 21 || p[20] != ' ')
		return -1;
	q = p + 20;
	if (!parse_u64(&q, end, &pid) || q == end || !parse_is_blank(*q) || pid > INT32_MAX)
		return -1;
	/* the minor, then the master and authenticated flags */
	if (!parse_u64(&q, end, &minor))
		return -1;
	while (q < end && *q == ' ')
		q++;
	if (q == end || (*q != 'y' && *q != 'n'))
		return -1;
	q++;
	while (q < end && *q == ' ')
		q++;
	if (q == end || (*q != 'y' && *q != 'n'))
		return -1;
	return (long long)pid;
}

/* The process (thread group) a task id belongs to, from /proc/<id>/status; 0 when gone. */
static uint32_t
tgid_of(struct fdinfo_scan *s, int procfd, uint32_t id)
{
	char path[24], *p = put_uint(path, id);
	const char *t;
	uint64_t tgid;
	ssize_t n;

	memcpy(p, "/status", 8);
	n = read_at(procfd, path, s->buf, 4095);
	if (n <= 0)
		return 0;
	t = strstr(s->buf, "\nTgid:");
	if (!t)
		return 0;
	t += 6;
	if (!parse_u64(&t, s->buf + n, &tgid) || !tgid || tgid > INT32_MAX)
		return 0;
	return (uint32_t)tgid;
}

/* Add the pids of one clients file to s->pid; false when it cannot be read or parsed. */
static bool
clients_file_pids(struct fdinfo_scan *s, int procfd, const char *rel)
{
	const char *p, *end, *eol;
	bool tids;
	int rc;

	strbuf_reset(&s->clients);
	rc = file_read(s->cfg->sysfs_root, rel, &s->clients, CLIENTS_CAP, NULL);
	if (rc < 0 || s->clients.len == CLIENTS_CAP)
		return false;
	p = s->clients.buf;
	end = p + s->clients.len;
	eol = memchr(p, '\n', (size_t)(end - p));
	if (!eol)
		return false;
	/*
	 * The header names the column "tgid" since Linux 6.4; before, "pid"
	 * held the id of the thread that opened the file, whose process we
	 * look up.
	 */
	{
		const char *h = p;

		while (h < eol && *h == ' ')
			h++;
		if (eol - h < 12 || memcmp(h, "command ", 8))
			return false;
		h += 8;
		while (h < eol && *h == ' ')
			h++;
		if (eol - h > 5 && !memcmp(h, "tgid ", 5))
			tids = false;
		else if (eol - h > 4 && !memcmp(h, "pid ", 4))
			tids = true;
		else
			return false;
	}
	for (p = eol + 1; p < end; p = eol + 1) {
		long long pid;
		uint32_t id;

		eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		if (eol == p)
			continue;
		pid = clients_line_pid(p, eol);
		if (pid < 0)
			return false;
		if (pid == 0)
			continue; /* its opener is gone, or outside our pid namespace */
		id = tids ? tgid_of(s, procfd, (uint32_t)pid) : (uint32_t)pid;
		if (!id || id == s->self)
			continue;
		ALLOC_GROW(s->pid, s->nr_pid + 1, s->alloc_pid);
		s->pid[s->nr_pid++] = id;
	}
	return true;
}

/*
 * The processes to look at, from DRM's lists of open files: debugfs
 * dri/<minor>/clients (root only, debugfs mounted) lists every open file of
 * its device with the pid of the process that opened it (or, since Linux
 * 6.x, last used it). When every DRM device in sysfs class/drm has such a
 * list, only the listed processes' fd directories are walked, a few dozen
 * instead of thousands. A process that inherited a DRM file over fork()
 * without using it is not listed; its file is the listed process's anyway.
 * False when any device has no readable list: then /proc is walked whole.
 */
static bool
listed_pids(struct fdinfo_scan *s, int procfd)
{
	char devs[DEVS_MAX][DEVKEY_SIZE];
	bool covered[DEVS_MAX];
	size_t nr_devs = 0;
	char path[4096];
	struct dirent *de;
	DIR *d;

	s->nr_pid = 0;
	path_join(path, sizeof(path), s->cfg->sysfs_root, "class/drm");
	d = opendir(path);
	if (!d)
		return false;
	while ((de = readdir(d))) {
		const char *num = NULL;
		char rel[300], key[DEVKEY_SIZE];
		size_t k;

		if (!strncmp(de->d_name, "renderD", 7))
			num = de->d_name + 7;
		else if (!strncmp(de->d_name, "card", 4))
			num = de->d_name + 4;
		if (!num || name_number(num) < 0)
			continue; /* connectors (card0-DP-1), version, ... */
		snprintf(rel, sizeof(rel), "class/drm/%s/device", de->d_name);
		file_link_base(s->cfg->sysfs_root, rel, key, sizeof(key));
		if (!key[0])
			str_copy(key, sizeof(key), de->d_name);
		for (k = 0; k < nr_devs && strcmp(devs[k], key); k++)
			;
		if (k == nr_devs) {
			if (nr_devs == DEVS_MAX)
				goto walk;
			memcpy(devs[nr_devs], key, DEVKEY_SIZE);
			covered[nr_devs++] = false;
		}
		if (covered[k])
			continue;
		snprintf(rel, sizeof(rel), "kernel/debug/dri/%s/clients", num);
		covered[k] = clients_file_pids(s, procfd, rel);
	}
	closedir(d);
	d = NULL;
	if (!nr_devs)
		goto walk;
	for (size_t k = 0; k < nr_devs; k++)
		if (!covered[k])
			goto walk;
	if (s->nr_pid > 1) {
		size_t n = 1;

		qsort(s->pid, s->nr_pid, sizeof(*s->pid), cmp_u32);
		for (size_t i = 1; i < s->nr_pid; i++)
			if (s->pid[i] != s->pid[n - 1])
				s->pid[n++] = s->pid[i];
		s->nr_pid = n;
	}
	return true;
walk:
	if (d)
		closedir(d);
	s->nr_pid = 0;
	return false;
}

/*
 * Build the index: the processes DRM lists as its clients when it lists
 * them all, else every process (readdir /proc once). Open each one's fd
 * directory relative to procfd (kernel threads have an empty one, a
 * fixture's have none), and index its DRM fds with the start time of
 * their process.
 */
static void
rebuild(struct fdinfo_scan *s, int procfd)
{
	s->nr_idx = 0;
	s->nr_blind = 0;
	s->nr_dev = 0;
	s->listed = listed_pids(s, procfd);
	if (!s->listed)
		list_pids(s, procfd);
	for (size_t i = 0; i < s->nr_pid; i++) {
		uint32_t pid = s->pid[i];
		char path[24], *p = put_uint(path, pid);
		size_t from = s->nr_idx;
		struct pstat ps;
		int fdd;

		memcpy(p, "/fd", 4);
		fdd = openat(procfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fdd < 0) {
			if (errno == EACCES || errno == EPERM)
				note_blind(s, procfd, pid);
			continue; /* exited, or no fd directory */
		}
		if (!walk_fds(s, fdd, pid)) {
			s->nr_idx = from;
			s->nr_blind++;
		}
		close(fdd);
		if (s->nr_idx == from)
			continue;
		qsort(s->idx + from, s->nr_idx - from, sizeof(*s->idx), cmp_idx);
		if (!read_pstat(s, procfd, pid, &ps))
			ps.start = 0;
		for (size_t k = from; k < s->nr_idx; k++)
			s->idx[k].start_ticks = ps.start;
	}
}

/* --- reading the indexed fdinfo files --------------------------------------- */

static void
add_holder(struct fdinfo_scan *s, const struct idx_fd *x, bool denied)
{
	struct holder *h;

	ALLOC_GROW(s->hold, s->nr_hold + 1, s->alloc_hold);
	h = &s->hold[s->nr_hold++];
	memset(h, 0, sizeof(*h));
	h->pid = x->pid;
	h->start_ticks = x->start_ticks;
	h->minor = x->minor;
	h->denied = denied;
	device_of(s, x->minor, h->devkey, h->driver);
}

static void
add_client(struct fdinfo_scan *s, const struct idx_fd *x, const struct parsed *f, double now)
{
	char driver[sizeof(s->dev[0].driver)];
	struct client *c;

	ALLOC_GROW(s->cur, s->nr_cur + 1, s->alloc_cur);
	c = &s->cur[s->nr_cur++];
	memset(c, 0, sizeof(*c));
	c->pid = x->pid;
	c->fd = x->fd;
	c->start_ticks = x->start_ticks;
	c->minor = x->minor;
	c->when = now;
	str_copy(c->driver, sizeof(c->driver), f->has_driver ? f->driver : "amdgpu");
	str_copy(c->pdev, sizeof(c->pdev), f->pdev);
	if (c->pdev[0])
		str_copy(c->devkey, sizeof(c->devkey), c->pdev);
	else
		device_of(s, x->minor, c->devkey, driver);
	/* amdgpu before 5.19 has no client id; its pasid is one per drm_file too */
	if (f->has_id || f->has_pasid) {
		c->id = f->has_id ? f->id : f->pasid;
	} else {
		c->noid = true;
		c->id = (uint64_t)x->pid << 32 | (uint32_t)x->fd;
	}
	client_memory(c, f);
	for (unsigned i = 0; i < f->nr_eng; i++) {
		if (!(f->eng[i].have & EK_USE))
			continue; /* a capacity or a frequency alone */
		c->eng[c->nr_eng] = f->eng[i];
		c->eng[c->nr_eng].when = now;
		c->nr_eng++;
	}
}

/*
 * Read every indexed fdinfo. One that is gone (ENOENT, ESRCH: the process
 * exited or closed the fd) leaves the index at once; one that now names
 * another file (its ino changed, or it lost its drm- keys) too, and the
 * next walk finds whatever replaced it.
 */
static void
read_clients(struct fdinfo_scan *s, int procfd, double now)
{
	size_t kept = 0;

	s->nr_cur = 0;
	s->nr_hold = 0;
	for (size_t i = 0; i < s->nr_idx; i++) {
		struct idx_fd *x = &s->idx[i];
		char path[48], *p = put_uint(path, x->pid);
		struct parsed f;
		ssize_t n;

		memcpy(p, "/fdinfo/", 8);
		p = put_uint(p + 8, (uint64_t)x->fd);
		*p = '\0';
		n = read_at(procfd, path, s->buf, FDINFO_CAP);
		if (n == -ENOENT || n == -ESRCH) {
			x->drop = true;
		} else if (n == -EACCES || n == -EPERM) {
			add_holder(s, x, true);
		} else if (n >= 0) {
			parse_fdinfo(s->buf, (size_t)n, n == FDINFO_CAP, &f);
			if (f.has_ino && x->ino && f.ino != x->ino) {
				x->drop = true;
			} else if (!f.has_driver && !f.legacy) {
				/* a DRM file without stats (nouveau), or no longer a DRM file */
				x->drop = x->state == FD_STATS;
				x->state = FD_PLAIN;
				if (!x->drop)
					add_holder(s, x, false);
			} else {
				x->state = FD_STATS;
				add_client(s, x, &f, now);
			}
			if (f.has_ino && !x->ino)
				x->ino = f.ino;
		}
		/* other errors: try again at the next sample */
		if (!x->drop)
			s->idx[kept++] = *x;
	}
	s->nr_idx = kept;
}

/* --- clients: deduplication and rates --------------------------------------- */

static int
cmp_client_key(const struct client *x, const struct client *y)
{
	int c = strcmp(x->devkey, y->devkey);

	if (c)
		return c;
	if (x->noid != y->noid)
		return x->noid ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int
cmp_client_key_v(const void *a, const void *b)
{
	return cmp_client_key(a, b);
}

static int
cmp_client(const void *a, const void *b)
{
	const struct client *x = a, *y = b;
	int c = cmp_client_key(x, y);

	if (c)
		return c;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->fd < y->fd ? -1 : x->fd > y->fd;
}

static double
clamp_pct(double v)
{
	return v > 100 ? 100 : v < 0 ? 0 : v;
}

/*
 * The use of engine e since its previous reading p (NULL: none; then, if
 * the client was seen at hist_when, a busy-ns counter it did not print was
 * zero, as amdgpu prints only engines that ran). A counter that stepped
 * back keeps the previous reading, as the spec asks ("stay with the larger
 * previous value until a monotonic update is seen"); one that ran ahead of
 * the time elapsed is a bad reading, and the next delta starts from it.
 */
static double
engine_pct(struct eng_raw *e, const struct eng_raw *p, bool seen, double hist_when)
{
	double cap = e->capacity;

	if (e->have & EK_PCT)
		return clamp_pct(e->pct);
	if (e->have & EK_NS) {
		uint64_t pns = 0;
		double pwhen = hist_when, dt;

		if (p && (p->have & EK_NS)) {
			pns = p->ns;
			pwhen = p->when;
		} else if (p || !seen) {
			return NAN;
		}
		dt = (e->when - pwhen) * 1e9 * cap;
		if (e->ns < pns || !(dt > 0)) {
			e->ns = pns;
			e->when = pwhen;
			return NAN;
		}
		if ((double)(e->ns - pns) > dt * SLACK)
			return NAN;
		return clamp_pct((double)(e->ns - pns) / dt * 100);
	}
	if (!p || !(e->have & EK_CYCLES) || !(p->have & EK_CYCLES))
		return NAN;
	if ((e->have & EK_TOTAL) && (p->have & EK_TOTAL)) {
		double dtot;

		if (e->cycles < p->cycles || e->total <= p->total) {
			e->cycles = p->cycles;
			e->total = p->total;
			e->when = p->when;
			return NAN;
		}
		dtot = (double)(e->total - p->total) * cap;
		if ((double)(e->cycles - p->cycles) > dtot * SLACK)
			return NAN;
		return clamp_pct((double)(e->cycles - p->cycles) / dtot * 100);
	}
	if ((e->have & EK_MAXFREQ) && !(e->have & EK_TOTAL)) {
		double dmax = (e->when - p->when) * e->maxfreq * cap;

		if (e->cycles < p->cycles || !(dmax > 0)) {
			e->cycles = p->cycles;
			e->when = p->when;
			return NAN;
		}
		if ((double)(e->cycles - p->cycles) > dmax * SLACK)
			return NAN;
		return clamp_pct((double)(e->cycles - p->cycles) / dmax * 100);
	}
	return NAN;
}

static const struct eng_raw *
find_engine(const struct client *c, const char *name)
{
	for (unsigned i = 0; i < c->nr_eng; i++)
		if (!strcmp(c->eng[i].name, name))
			return &c->eng[i];
	return NULL;
}

/*
 * Sort the clients read, keep one of each (the lowest pid, then fd, that
 * holds it), compute their rates against the previous sample, and make
 * them the history of the next one.
 */
static void
rate_clients(struct fdinfo_scan *s)
{
	size_t nr = 0;
	struct client *tmp;

	if (s->nr_cur > 1)
		qsort(s->cur, s->nr_cur, sizeof(*s->cur), cmp_client);
	for (size_t i = 0; i < s->nr_cur; i++)
		if (!nr || cmp_client_key(&s->cur[nr - 1], &s->cur[i]))
			s->cur[nr++] = s->cur[i];
	s->nr_cur = nr;
	for (size_t i = 0; i < s->nr_cur; i++) {
		struct client *c = &s->cur[i];
		const struct client *h = s->nr_hist ? bsearch(c, s->hist, s->nr_hist,
		                                              sizeof(*s->hist), cmp_client_key_v)
		                                    : NULL;

		/* the same pid started anew: the same client id is a coincidence */
		if (h && h->pid == c->pid && h->start_ticks != c->start_ticks)
			h = NULL;
		for (unsigned k = 0; k < c->nr_eng; k++)
			c->pct[k] =
			        engine_pct(&c->eng[k], h ? find_engine(h, c->eng[k].name) : NULL,
			                   h != NULL, h ? h->when : 0);
	}
	tmp = s->hist;
	s->hist = s->cur;
	s->cur = tmp;
	s->nr_hist = s->nr_cur;
	s->nr_cur = 0;
	nr = s->alloc_hist;
	s->alloc_hist = s->alloc_cur;
	s->alloc_cur = nr;
}

/* --- per process and device ------------------------------------------------- */

static int
cmp_part(const void *a, const void *b)
{
	const struct part *x = a, *y = b;
	int c;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	c = strcmp(x->devkey, y->devkey);
	if (c)
		return c;
	if (!x->c != !y->c)
		return x->c ? -1 : 1; /* clients first: their minor stands for the entry */
	return x->minor < y->minor ? -1 : x->minor > y->minor;
}

static void
add_engine(struct fdinfo_proc *o, const char *name, double pct)
{
	unsigned j;

	for (j = 0; j < o->nr_engine; j++)
		if (!strcmp(o->engine[j].name, name))
			break;
	if (j == o->nr_engine) {
		if (j == GPU_MAX_ENGINES)
			return;
		str_copy(o->engine[j].name, sizeof(o->engine[j].name), name);
		o->engine[j].percent = pct;
		o->nr_engine++;
	} else if (!isnan(pct)) {
		o->engine[j].percent =
		        isnan(o->engine[j].percent) ? pct : o->engine[j].percent + pct;
	}
}

/* One entry from the parts [from, to) of one process on one device. */
static void
make_proc(struct fdinfo_scan *s, const struct part *from, const struct part *to)
{
	struct fdinfo_proc *o;
	bool denied = false, clients = false;

	ALLOC_GROW(s->out, s->nr_out + 1, s->alloc_out);
	o = &s->out[s->nr_out++];
	memset(o, 0, sizeof(*o));
	o->pid = from->pid;
	o->start_ticks = from->start_ticks;
	o->minor = from->minor;
	for (const struct part *p = from; p < to; p++) {
		const struct client *c = p->c;

		if (!c) {
			denied |= p->h->denied;
			if (!o->driver[0])
				str_copy(o->driver, sizeof(o->driver), p->h->driver);
			continue;
		}
		if (!clients)
			str_copy(o->driver, sizeof(o->driver), c->driver);
		clients = true;
		if (!o->pdev[0])
			str_copy(o->pdev, sizeof(o->pdev), c->pdev);
		o->has_local |= c->has_local;
		o->has_system |= c->has_system;
		o->mem_local += c->mem_local;
		o->mem_system += c->mem_system;
		for (unsigned k = 0; k < c->nr_eng; k++)
			add_engine(o, c->eng[k].name, c->pct[k]);
	}
	for (unsigned k = 0; k < o->nr_engine; k++)
		if (o->engine[k].percent > 100)
			o->engine[k].percent = 100;
	o->denied = denied && !clients;
}

static void
build_procs(struct fdinfo_scan *s)
{
	size_t n = s->nr_hist + s->nr_hold, start = 0;

	s->nr_out = 0;
	s->nr_denied_pids = 0;
	ALLOC_GROW(s->part, n, s->alloc_part);
	s->nr_part = 0;
	for (size_t i = 0; i < s->nr_hist; i++) {
		const struct client *c = &s->hist[i];

		s->part[s->nr_part++] =
		        (struct part){ c->pid, c->start_ticks, c->devkey, c->minor, c, NULL };
	}
	for (size_t i = 0; i < s->nr_hold; i++) {
		const struct holder *h = &s->hold[i];

		s->part[s->nr_part++] =
		        (struct part){ h->pid, h->start_ticks, h->devkey, h->minor, NULL, h };
	}
	if (s->nr_part > 1)
		qsort(s->part, s->nr_part, sizeof(*s->part), cmp_part);
	for (size_t i = 1; i <= s->nr_part; i++) {
		if (i < s->nr_part && s->part[i].pid == s->part[start].pid &&
		    !strcmp(s->part[i].devkey, s->part[start].devkey))
			continue;
		make_proc(s, &s->part[start], &s->part[i]);
		start = i;
	}
	/* sorted by pid: count each denied pid once */
	for (size_t i = 0; i < s->nr_out; i++) {
		bool seen = false;

		if (!s->out[i].denied)
			continue;
		for (size_t k = i; k > 0 && s->out[k - 1].pid == s->out[i].pid; k--)
			seen |= s->out[k - 1].denied;
		s->nr_denied_pids += !seen;
	}
}

/* --- public ----------------------------------------------------------------- */

struct fdinfo_scan *
fdinfo_new(const struct gs_config *cfg)
{
	struct fdinfo_scan *s = xcalloc(1, sizeof(*s));

	s->cfg = cfg;
	s->buf = xmalloc(FDINFO_CAP + 1);
	s->dents = xmalloc(DENTS_SIZE);
	strbuf_init(&s->clients, 0);
	return s;
}

void
fdinfo_free(struct fdinfo_scan *s)
{
	if (!s)
		return;
	free(s->pid);
	free(s->idx);
	free(s->dev);
	free(s->cur);
	free(s->hist);
	free(s->hold);
	free(s->part);
	free(s->out);
	free(s->buf);
	free(s->dents);
	strbuf_release(&s->clients);
	free(s);
}

int
fdinfo_sample(struct fdinfo_scan *s, double now, struct err *err)
{
	int procfd, e;

	s->nr_out = 0;
	s->nr_denied_pids = 0;
	procfd = open(s->cfg->proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0) {
		e = errno;
		s->indexed = false;
		s->nr_idx = s->nr_hist = s->nr_blind = 0;
		/* a saved tree (--root) without /proc has no processes to show */
		if (e == ENOENT && strcmp(s->cfg->root, "/"))
			return 0;
		return err_set(err, errno_status(e), "cannot open '%s': %s", s->cfg->proc_root,
		               strerror(e));
	}
	if (s->mode == MODE_UNKNOWN) {
		struct statfs sfs;

		s->mode = !fstatfs(procfd, &sfs) && sfs.f_type == PROC_SUPER_MAGIC ? MODE_STAT
		                                                                   : MODE_LINK;
		/* gpuscope itself is not one of the GPU processes it shows */
		s->self = s->mode == MODE_STAT ? (uint32_t)getpid() : 0;
	}
	if (!s->indexed || !(now - s->index_time < s->cfg->reindex) || now < s->index_time) {
		rebuild(s, procfd);
		s->indexed = true;
		s->index_time = now;
	}
	read_clients(s, procfd, now);
	close(procfd);
	rate_clients(s);
	build_procs(s);
	return 0;
}

const struct fdinfo_proc *
fdinfo_procs(const struct fdinfo_scan *s, size_t *nr)
{
	*nr = s->nr_out;
	return s->out;
}

bool
fdinfo_some_denied(const struct fdinfo_scan *s)
{
	return s->nr_blind || s->nr_denied_pids;
}

size_t
fdinfo_nr_denied(const struct fdinfo_scan *s)
{
	return s->nr_blind + s->nr_denied_pids;
}

bool
fdinfo_listed(const struct fdinfo_scan *s)
{
	return s->listed;
}
