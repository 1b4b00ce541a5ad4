/*
 * Host-side facts about GPU processes, read from procfs under
 * cfg->proc_root. A sample of 200 processes must cost a few milliseconds,
 * so each file is opened and read once into one reused buffer, nothing
 * goes through stdio, and fd links are only read when we must check that
 * a pid in a nested namespace is really the driver's process.
 */
#include "core/procinfo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/config.h"
#include "core/err.h"
#include "core/fileio.h"
#include "core/gpu.h"
#include "core/parse.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

/*
 * Caps on what one read takes in. status is about 1.5 KiB and stat under
 * 400 bytes; a cgroup file lists at most a dozen hierarchies, but paths of
 * nested containers grow long; mountinfo of a Kubernetes node can hold
 * thousands of mounts.
 */
#define STATUS_CAP    (16 * 1024)
#define STAT_CAP      4096
#define CMDLINE_CAP   4096
#define CGROUP_CAP    (64 * 1024)
#define ENVIRON_CAP   (256 * 1024)
#define MOUNTINFO_CAP (4 * 1024 * 1024)
#define PASSWD_CAP    (16 * 1024 * 1024)

/* Bounds on the caches, so that a long-running daemon cannot grow without end. */
#define USER_CACHE_MAX 4096
#define CPU_CACHE_MAX  8192

#define CONTAINER_ID_LEN 12 /* as docker ps shows it */

#define PROCFS_MAGIC 0x9fa0 /* statfs() f_type of procfs (linux/magic.h) */

struct user_ent {
	uint32_t uid;
	uint32_t seq; /* line number in the passwd file: the first line wins */
	char *name;
};

/*
 * Seconds a process's owner, command line and cgroup are taken from the
 * cache before they are read again (a process may change its title with
 * setproctitle(), or move to another cgroup; both are rare).
 */
#define STATIC_REFRESH 10.0

/* The strings of a process kept in its cpu_ent, in the order they are stored. */
enum kept_str {
	K_NAME,
	K_USER,
	K_CONTAINER,
	K_POD,
	K_CGROUP,
	K_CMDLINE,
	K_SLURM_JOB,
	K_SLURM_STEP,
	K_SLURM_USER,
	K_NR
};

/*
 * What the previous samples saw of one process: CPU times, for CPU % over an
 * interval, and what rarely changes while it lives, so that a repeated
 * sample of a process in our pid namespace reads only its stat file. top
 * keeps one for each of its processes: 88 bytes on x86-64, its strings in
 * one allocation (with a pointer and an allocation each, it was 144 bytes
 * and six allocations).
 */
struct cpu_ent {
	uint32_t pid;
	unsigned gen;             /* the sample that last set cur_*; 0 = none yet */
	uint64_t start_ticks;     /* tells a reused pid from the process we saw */
	double prev_cpu, prev_up; /* CPU seconds and uptime at the sample before gen */
	double cur_cpu, cur_up;   /* ... and at sample gen */

	int statm_fd;     /* /proc/<pid>/statm kept open (read again with pread), or -1 */
	clockid_t clk;    /* the process's CPU-time clock, when statm_fd is open */
	bool has_prev;    /* prev_* hold a sample */
	bool have_static; /* the fields below hold a full read of this process */
	uint16_t kept;    /* bit K_*: strs holds that string (unset: unknown) */
	uint32_t uid;
	double static_at; /* clock_mono() of that read */
	const char *runtime;
	char *strs; /* owned: the strings of kept, in enum kept_str's order, each with its NUL */
};

/* --- Kubernetes names ------------------------------------------------------ */

/*
 * What the kubelet leaves on the node names pods and containers: a
 * directory /var/log/pods/<namespace>_<pod>_<uid>/ per pod, holding one
 * directory per container, and a symbolic link
 * /var/log/containers/<pod>_<namespace>_<container>-<id>.log per container.
 * Namespaces, pod and container names are DNS labels or subdomains, so '_'
 * splits them. Both listings are read at most every KUBE_REFRESH seconds,
 * and only when some process is in a pod or container.
 */
#define KUBE_REFRESH 5.0
#define KUBE_MAX     8192 /* entries kept of each listing */

struct kube_pod {
	char *uid, *ns, *name;
	char *dir;      /* its directory under var/log/pods */
	char *only_ctr; /* the name of its one container directory, when it has one */
	bool ctr_read;  /* only_ctr was looked for */
};

struct kube_ctr {
	char id[65]; /* the full id, 64 hex digits */
	char *name;
};

struct kube_cache {
	bool loaded;
	double at;            /* clock_mono() of the last listing */
	struct kube_pod *pod; /* sorted by uid */
	size_t nr_pod, alloc_pod;
	struct kube_ctr *ctr; /* sorted by id */
	size_t nr_ctr, alloc_ctr;
};

struct procinfo_ctx {
	const struct gs_config *cfg;
	double hz; /* clock ticks per second of stat's times */

	bool probed;      /* nested, hidepid and self_ns below are known */
	bool nested;      /* we run in a pid namespace below the one the driver reports */
	bool hidepid;     /* procfs hides other users' processes */
	char self_ns[64]; /* our pid namespace, "pid:[4026531836]"; "" when unknown */
	double page_size; /* bytes per page of stat's rss */
	bool no_status;   /* the process in hand is read without its status file */

	bool passwd_loaded;
	struct user_ent *user; /* sorted by uid */
	size_t nr_user, alloc_user;
	char user_spare[32]; /* a name that did not fit in the full cache */

	struct cpu_ent *cpu; /* sorted by pid */
	size_t nr_cpu, alloc_cpu;
	size_t nr_fd, fd_budget; /* statm files kept open, and how many may be */
	bool procfs;             /* proc_root is procfs (not a saved tree) */

	/* the sample in progress */
	unsigned gen;
	bool uptime_ok;
	double uptime; /* seconds since boot */
	double now;    /* seconds since the epoch */

	struct kube_cache kube; /* the kubelet's pod and container names */

	struct strbuf sb; /* the file being parsed */
};

/* --- small parsers; none reads past end, none trusts its input ---------- */

/*
 * Parse "12345.67" by hand: strtod() follows LC_NUMERIC, which a front end
 * may have set to a locale that writes a decimal comma.
 */
static bool
parse_seconds(const char **s, const char *end, double *v)
{
	uint64_t ip, fp = 0;
	double scale = 1;

	if (!parse_u64(s, end, &ip))
		return false;
	if (*s < end && **s == '.') {
		for ((*s)++; *s < end && parse_is_digit(**s); (*s)++) {
			if (scale < 1e15) {
				fp = fp * 10 + (uint64_t)(**s - '0');
				scale *= 10;
			}
		}
	}
	*v = (double)ip + (double)fp / scale;
	return true;
}

/* If the line [p, eol) starts with key, point *val just after it. */
static bool
has_key(const char *p, const char *eol, const char *key, const char **val)
{
	*val = p;
	return parse_skip_prefix(val, eol, key);
}

static bool
only_blanks(const char *p, const char *end)
{
	while (p < end && parse_is_blank(*p))
		p++;
	return p == end;
}

/* --- /proc/<pid>/status ---------------------------------------------------- */

struct status_info {
	const char *name; /* points into the buffer parsed */
	size_t name_len;
	uint64_t uid, nspid, rss_kb;
	unsigned nr_nspid;
	bool has_name, has_uid, has_rss;
	bool bad; /* a known key with a value we could not parse */
};

static void
status_line(const char *p, const char *eol, struct status_info *si)
{
	const char *v;
	uint64_t x;

	if (!si->has_name && has_key(p, eol, "Name:", &v)) {
		/* the kernel writes one tab; a comm may itself start with blanks */
		if (v < eol && *v == '\t')
			v++;
		si->name = v;
		si->name_len = (size_t)(eol - v);
		si->has_name = true;
	} else if (!si->has_uid && has_key(p, eol, "Uid:", &v)) {
		/* real, effective, saved, filesystem: the real one owns it */
		si->has_uid = parse_u64(&v, eol, &si->uid) && si->uid <= UINT32_MAX;
		si->bad |= !si->has_uid;
	} else if (!si->nr_nspid && has_key(p, eol, "NSpid:", &v)) {
		/* outermost first; the last is the pid in its own namespace */
		while (parse_u64(&v, eol, &x)) {
			si->nspid = x;
			si->nr_nspid++;
		}
		if (!only_blanks(v, eol) || si->nspid > UINT32_MAX) {
			si->nr_nspid = 0;
			si->bad = true;
		}
	} else if (!si->has_rss && has_key(p, eol, "VmRSS:", &v)) {
		si->has_rss =
		        parse_u64(&v, eol, &si->rss_kb) && eol - v == 3 && !memcmp(v, " kB", 3);
		si->bad |= !si->has_rss;
	}
}

static void
parse_status(const char *buf, size_t len, struct status_info *si)
{
	const char *p = buf, *end = buf + len;

	memset(si, 0, sizeof(*si));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;

		status_line(p, eol, si);
		p = nl ? nl + 1 : end;
	}
}

/* --- /proc/<pid>/stat ------------------------------------------------------ */

struct stat_info {
	const char *comm; /* into the buffer; not NUL-terminated */
	size_t comm_len;
	uint64_t ppid;
	uint64_t utime, stime; /* clock ticks */
	uint64_t starttime;    /* clock ticks after boot */
	uint64_t rss;          /* pages */
};

/*
 * The comm field is in parentheses and may itself hold ") (" and spaces,
 * so fields are counted from the last ')'. proc_pid_stat(5) numbers them
 * from 1: comm is 2, state 3, ppid 4, utime 14, stime 15, starttime 22, rss 24.
 */
static bool
parse_stat(const char *buf, size_t len, struct stat_info *st)
{
	const char *p = memrchr(buf, ')', len), *end = buf + len;
	const char *open = memchr(buf, '(', len);
	unsigned field;

	if (!p || !open || open > p)
		return false;
	st->comm = open + 1;
	st->comm_len = (size_t)(p - open - 1);
	p++;
	for (field = 3; field <= 24; field++) {
		const char *tok;
		uint64_t *dst = NULL;
		uint64_t x;

		while (p < end && parse_is_blank(*p))
			p++;
		tok = p;
		while (p < end && !parse_is_blank(*p) && *p != '\n')
			p++;
		if (p == tok)
			return false;
		if (field == 4)
			dst = &st->ppid;
		else if (field == 14)
			dst = &st->utime;
		else if (field == 15)
			dst = &st->stime;
		else if (field == 22)
			dst = &st->starttime;
		else if (field == 24)
			dst = &st->rss;
		if (!dst)
			continue;
		if (!parse_u64(&tok, p, &x) || tok != p)
			return false;
		*dst = x;
	}
	return true;
}

/* --- /proc/self/mountinfo -------------------------------------------------- */

/* Cut the next space-separated field of [*s, eol) into [*f, *s). */
static bool
next_field(const char **s, const char *eol, const char **f)
{
	const char *p = *s;

	while (p < eol && *p == ' ')
		p++;
	if (p == eol)
		return false;
	*f = p;
	while (p < eol && *p != ' ')
		p++;
	*s = p;
	return true;
}

/* Do the super options "rw,hidepid=2,..." hide other users' processes? */
static bool
opts_hidepid(const char *p, const char *end)
{
	static const char *const hiding[] = { "1", "2", "invisible", "noaccess" };

	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *oend = comma ? comma : end, *v;

		if (has_key(p, oend, "hidepid=", &v)) {
			for (size_t i = 0; i < sizeof(hiding) / sizeof(hiding[0]); i++)
				if (parse_span_is(v, oend, hiding[i]))
					return true;
		}
		p = comma ? comma + 1 : end;
	}
	return false;
}

/*
 * One mountinfo line: "36 25 0:5 / /proc rw,nosuid - proc proc rw,hidepid=2";
 * the optional fields before "-" vary in number.
 */
static bool
mount_hides(const char *p, const char *eol, const char *proc_root)
{
	const char *f, *mp = NULL, *mp_end = NULL, *fs = NULL, *fs_end = NULL;
	unsigned n = 0;
	bool after_dash = false;

	while (next_field(&p, eol, &f)) {
		n++;
		if (n == 5) {
			mp = f;
			mp_end = p;
		} else if (n > 6 && !after_dash && parse_span_is(f, p, "-")) {
			after_dash = true;
			n = 0;
		} else if (after_dash && n == 1) {
			fs = f;
			fs_end = p;
		} else if (after_dash && n == 3) {
			if (!fs || !parse_span_is(fs, fs_end, "proc") || !mp)
				return false;
			if (!parse_span_is(mp, mp_end, "/proc") &&
			    !parse_span_is(mp, mp_end, proc_root))
				return false;
			return opts_hidepid(f, p);
		}
	}
	return false;
}

static bool
mountinfo_hidepid(const char *buf, size_t len, const char *proc_root)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;

		if (mount_hides(p, eol, proc_root))
			return true;
		p = nl ? nl + 1 : end;
	}
	return false;
}

/* --- /proc/<pid>/cgroup ---------------------------------------------------- */

struct cg_line {
	const char *path;
	size_t len;
	bool v2; /* "0::path", the unified hierarchy */
};

/* Split the next "hierarchy:controllers:path" line off *s. */
static bool
next_cg_line(const char **s, struct cg_line *l)
{
	while (**s) {
		const char *p = *s, *nl = strchr(p, '\n');
		const char *eol = nl ? nl : p + strlen(p);
		const char *c1 = memchr(p, ':', (size_t)(eol - p));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(eol - c1 - 1)) : NULL;

		*s = nl ? nl + 1 : eol;
		if (!c2)
			continue;
		/* the path itself may hold ':' (runc's "slice:prefix:name" fallback) */
		l->path = c2 + 1;
		l->len = (size_t)(eol - c2 - 1);
		l->v2 = c1 == p + 1 && *p == '0' && c2 == c1 + 1;
		return true;
	}
	return false;
}

struct cg_match {
	const char *runtime; /* NULL: no container yet */
	const char *id;      /* points into the text */
	size_t id_len;
	char pod[64];    /* pod uid of the innermost pod seen so far, with dashes */
	char id_pod[64]; /* the pod the container was found in */
};

static bool
is_hex_id(const char *s, size_t n)
{
	if (n < CONTAINER_ID_LEN || n > 128)
		return false;
	/* runtimes write ids in lowercase */
	for (size_t i = 0; i < n; i++)
		if (!parse_is_digit(s[i]) && !(s[i] >= 'a' && s[i] <= 'f'))
			return false;
	return true;
}

/* Is [c, c+n) prefix + hex id (+ ".scope")? Then point *id at the id. */
static bool
prefixed_id(const char *c, size_t n, const char *prefix, const char **id, size_t *id_len)
{
	size_t pl = strlen(prefix);

	if (n <= pl || memcmp(c, prefix, pl))
		return false;
	c += pl;
	n -= pl;
	if (n > 6 && !memcmp(c + n - 6, ".scope", 6))
		n -= 6;
	if (!is_hex_id(c, n))
		return false;
	*id = c;
	*id_len = n;
	return true;
}

/*
 * A Kubernetes pod cgroup: "pod<uid>" (cgroupfs driver) or
 * "kubepods[-<qos>]-pod<uid_with_underscores>.slice" (systemd driver).
 */
static bool
pod_component(const char *c, size_t n, bool under_kubepods, char *pod, size_t pod_size)
{
	static const char *const slices[] = { "kubepods-pod", "kubepods-burstable-pod",
		                              "kubepods-besteffort-pod",
		                              "kubepods-guaranteed-pod" };
	const char *uid = NULL;
	size_t len = 0, i;

	for (i = 0; i < sizeof(slices) / sizeof(slices[0]) && !uid; i++) {
		size_t pl = strlen(slices[i]);

		if (n > pl + 6 && !memcmp(c, slices[i], pl) && !memcmp(c + n - 6, ".slice", 6)) {
			uid = c + pl;
			len = n - pl - 6;
		}
	}
	if (!uid && under_kubepods && n > 3 && !memcmp(c, "pod", 3)) {
		uid = c + 3;
		len = n - 3;
	}
	/* uids are 36 characters; static pods carry a 32-digit hash */
	if (!uid || len < 8 || len >= pod_size)
		return false;
	for (i = 0; i < len; i++)
		if (!parse_is_hex(uid[i]) && uid[i] != '-' && uid[i] != '_')
			return false;
	for (i = 0; i < len; i++)
		pod[i] = uid[i] == '_' ? '-' : uid[i];
	pod[len] = '\0';
	return true;
}

static void
set_match(struct cg_match *m, const char *runtime, const char *id, size_t len)
{
	m->runtime = runtime;
	m->id = id;
	m->id_len = len;
	memcpy(m->id_pod, m->pod, sizeof(m->pod));
}

/*
 * runc falls back to a literal "kubepods-...-pod<uid>.slice:cri-containerd:<id>"
 * path when it cannot reach systemd (kind, k3s nodes).
 */
static bool
colon_component(const char *c, size_t n, struct cg_match *m)
{
	const char *c1 = memchr(c, ':', n), *c2, *end = c + n;
	const char *rt = NULL;

	if (!c1)
		return false;
	c2 = memchr(c1 + 1, ':', (size_t)(end - c1 - 1));
	if (!c2 || !is_hex_id(c2 + 1, (size_t)(end - c2 - 1)))
		return false;
	if (parse_span_is(c1 + 1, c2, "cri-containerd"))
		rt = "containerd";
	else if (parse_span_is(c1 + 1, c2, "crio"))
		rt = "cri-o";
	else if (parse_span_is(c1 + 1, c2, "docker"))
		rt = "docker";
	if (!rt)
		return false;
	pod_component(c, (size_t)(c1 - c), false, m->pod, sizeof(m->pod));
	set_match(m, rt, c2 + 1, (size_t)(end - c2 - 1));
	return true;
}

enum cg_prev {
	PREV_OTHER,
	PREV_DOCKER,     /* "docker": the id follows (cgroupfs driver) */
	PREV_CONTAINERD, /* "containerd" */
	PREV_LXC,        /* "lxc" or "lxc.payload": the name follows */
	PREV_POD,        /* a pod cgroup: a bare id is its container */
};

/*
 * The runtimes that name a container "<prefix><id>[.scope]". The conmon
 * monitors ("crio-conmon-<id>", "libpod-conmon-<id>") run outside the
 * container; "conmon-..." is not hex, so they never match.
 */
static const struct {
	const char *prefix;
	const char *runtime;
} scope_rules[] = {
	{ "docker-", "docker" },      { "cri-containerd-", "containerd" },
	{ "nerdctl-", "containerd" }, { "crio-", "cri-o" },
	{ "libpod-", "podman" },
};

/* Look at one path component; returns what it makes of the next one. */
static enum cg_prev
match_component(const char *c, size_t n, enum cg_prev prev, bool *kubepods, struct cg_match *m)
{
	const char *id;
	size_t len, i;

	if (prev == PREV_DOCKER && is_hex_id(c, n))
		set_match(m, "docker", c, n);
	else if (prev == PREV_CONTAINERD && is_hex_id(c, n))
		set_match(m, "containerd", c, n);
	else if (prev == PREV_POD && is_hex_id(c, n))
		set_match(m, "kubernetes", c, n); /* the path does not name the runtime */
	else if (prev == PREV_LXC)
		set_match(m, "lxc", c, n);
	else if (n > 12 && !memcmp(c, "lxc.payload.", 12))
		set_match(m, "lxc", c + 12, n - 12);
	if (parse_span_is(c, c + n, "docker"))
		return PREV_DOCKER;
	if (parse_span_is(c, c + n, "containerd"))
		return PREV_CONTAINERD;
	if (parse_span_is(c, c + n, "lxc") || parse_span_is(c, c + n, "lxc.payload"))
		return PREV_LXC;
	if (n >= 8 && !memcmp(c, "kubepods", 8))
		*kubepods = true;
	if (pod_component(c, n, *kubepods, m->pod, sizeof(m->pod)))
		return PREV_POD;
	for (i = 0; i < sizeof(scope_rules) / sizeof(scope_rules[0]); i++) {
		if (prefixed_id(c, n, scope_rules[i].prefix, &id, &len)) {
			set_match(m, scope_rules[i].runtime, id, len);
			return PREV_OTHER;
		}
	}
	colon_component(c, n, m);
	return PREV_OTHER;
}

/* Walk a cgroup path; the innermost container wins (kind: a pod inside a docker node). */
static bool
match_path(const char *path, size_t len, struct cg_match *m)
{
	const char *p = path, *end = path + len;
	enum cg_prev prev = PREV_OTHER;
	bool kubepods = false;

	/* what the walk reads of *m (pod and id_pod are strings) */
	m->runtime = NULL;
	m->id = NULL;
	m->id_len = 0;
	m->pod[0] = '\0';
	m->id_pod[0] = '\0';
	while (p < end) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		const char *cend = slash ? slash : end;

		if (cend > p)
			prev = match_component(p, (size_t)(cend - p), prev, &kubepods, m);
		p = slash ? slash + 1 : end;
	}
	return m->runtime && m->id_len;
}

/*
 * One walk of a cgroup file for both of its uses. The container, into *m:
 * the unified hierarchy names the cgroup the process really runs in, the v1
 * lines are the fallback on legacy and hybrid systems (the first line that
 * names one, of each). When shown is set, the cgroup path to show: the
 * unified one, else the first non-empty one (shown->path NULL: none).
 * Returns whether a container was found.
 */
static bool
scan_cgroup(const char *text, struct cg_match *m, struct cg_line *shown)
{
	struct cg_match v1;
	struct cg_line l;
	bool v1_found = false, have_v2 = false;

	if (shown)
		shown->path = NULL;
	for (const char *s = text; next_cg_line(&s, &l);) {
		if (l.v2) {
			if (shown && !have_v2)
				*shown = l;
			have_v2 = true;
			/* a unified line before it was the first: nothing left to find */
			if (match_path(l.path, l.len, m))
				return true;
		} else {
			if (shown && !shown->path && l.len)
				*shown = l;
			if (!v1_found)
				v1_found = match_path(l.path, l.len, &v1);
		}
	}
	if (v1_found)
		*m = v1;
	return v1_found;
}

/* procinfo_container(), and the cgroup path to show into *shown when it is set */
static bool
container_and_path(const char *cgroup_text, char *id, size_t id_size, const char **runtime,
                   char *pod, size_t pod_size, struct cg_line *shown)
{
	struct cg_match m;

	if (id_size)
		id[0] = '\0';
	if (pod_size)
		pod[0] = '\0';
	*runtime = NULL;
	if (shown)
		shown->path = NULL;
	if (!cgroup_text || !scan_cgroup(cgroup_text, &m, shown))
		return false;
	if (id_size) {
		size_t n = m.id_len < CONTAINER_ID_LEN ? m.id_len : CONTAINER_ID_LEN;

		snprintf(id, id_size, "%.*s", (int)n, m.id);
	}
	if (pod_size)
		snprintf(pod, pod_size, "%s", m.id_pod);
	*runtime = m.runtime;
	return true;
}

bool
procinfo_container(const char *cgroup_text, char *id, size_t id_size, const char **runtime,
                   char *pod, size_t pod_size)
{
	return container_and_path(cgroup_text, id, id_size, runtime, pod, pod_size, NULL);
}

/* --- Slurm jobs ------------------------------------------------------------ */

/*
 * Slurm's special step ids, as an environment may carry them: since 20.11
 * 0xfffffffa..0xfffffffc (interactive, batch, extern), before it 0xfffffffe
 * (batch) and 0xffffffff (extern).
 */
static const char *
special_step(uint64_t id)
{
	switch (id) {
	case 0xfffffffaull:
		return "interactive";
	case 0xfffffffbull:
	case 0xfffffffeull:
		return "batch";
	case 0xfffffffcull:
	case 0xffffffffull:
		return "extern";
	default:
		return NULL;
	}
}

/* Is [s, s+n) a decimal number that fits a uint32_t (Slurm's ids)? */
static bool
span_u32(const char *s, size_t n, uint64_t *v)
{
	const char *p = s;

	if (!n || n > 10 || !parse_u64(&p, s + n, v) || p != s + n)
		return false;
	return *v <= UINT32_MAX;
}

/* A step name as Slurm writes it in a cgroup path: a number, batch, extern, interactive. */
static bool
step_name_ok(const char *s, size_t n)
{
	uint64_t v;

	return span_u32(s, n, &v) || parse_span_is(s, s + n, "batch") ||
	       parse_span_is(s, s + n, "extern") || parse_span_is(s, s + n, "interactive");
}

static bool
ends_with(const char *c, size_t n, const char *suffix)
{
	size_t sl = strlen(suffix);

	return n >= sl && !memcmp(c + n - sl, suffix, sl);
}

/*
 * One cgroup path in Slurm's layouts: v1 "/slurm[_<node>]/uid_<uid>/job_<id>
 * /step_<step>/task_<n>", v2 "/system.slice/[<node>_]slurmstepd.scope/job_<id>
 * /step_<step>/user/task_<n>" (or ".../step_<step>/slurm" for slurmstepd).
 * A job_ component counts only right after uid_ or the scope, so that a
 * user's own cgroup named job_1 is not taken for one.
 */
static bool
slurm_path(const char *path, size_t len, struct procinfo_slurm *s)
{
	const char *p = path, *end = path + len;
	bool anchor = false, in_job = false;
	int64_t uid = -1;

	while (p < end) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		const char *cend = slash ? slash : end;
		size_t n = (size_t)(cend - p);
		uint64_t v;

		p = slash ? slash + 1 : end;
		if (!n)
			continue;
		if (in_job) {
			if (n > 5 && !memcmp(cend - n, "step_", 5) &&
			    step_name_ok(cend - n + 5, n - 5))
				snprintf(s->step, sizeof(s->step), "%.*s", (int)(n - 5),
				         cend - n + 5);
			break;
		}
		if (anchor && n > 4 && !memcmp(cend - n, "job_", 4) &&
		    span_u32(cend - n + 4, n - 4, &v)) {
			snprintf(s->job, sizeof(s->job), "%.*s", (int)(n - 4), cend - n + 4);
			s->uid = uid;
			in_job = true;
			continue;
		}
		anchor = false;
		uid = -1;
		if (n > 4 && !memcmp(cend - n, "uid_", 4) && span_u32(cend - n + 4, n - 4, &v)) {
			anchor = true;
			uid = (int64_t)v;
		} else if (ends_with(cend - n, n, "slurmstepd.scope")) {
			anchor = true;
		}
	}
	return in_job;
}

bool
procinfo_slurm_cgroup(const char *cgroup_text, struct procinfo_slurm *s)
{
	struct procinfo_slurm v1;
	struct cg_line l;
	bool v1_found = false;

	memset(s, 0, sizeof(*s));
	s->uid = -1;
	if (!cgroup_text)
		return false;
	for (const char *t = cgroup_text; next_cg_line(&t, &l);) {
		struct procinfo_slurm cur;

		memset(&cur, 0, sizeof(cur));
		cur.uid = -1;
		if (!slurm_path(l.path, l.len, &cur))
			continue;
		/* the unified hierarchy names where the process really runs */
		if (l.v2) {
			*s = cur;
			return true;
		}
		if (!v1_found) {
			v1 = cur;
			v1_found = true;
		}
	}
	if (v1_found)
		*s = v1;
	return v1_found;
}

/* The value of NAME=value in a NUL-separated environment, or NULL. */
static const char *
env_get(const char *env, size_t len, const char *name, size_t *vlen)
{
	size_t nl = strlen(name);

	for (const char *p = env, *end = env + len; p < end;) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		const char *eol = nul ? nul : end;

		if ((size_t)(eol - p) > nl && !memcmp(p, name, nl) && p[nl] == '=') {
			*vlen = (size_t)(eol - p - nl - 1);
			return p + nl + 1;
		}
		p = nul ? nul + 1 : end;
	}
	return NULL;
}

/* A decimal id of the environment, or false. */
static bool
env_u32(const char *env, size_t len, const char *name, uint64_t *v)
{
	size_t n;
	const char *s = env_get(env, len, name, &n);

	return s && span_u32(s, n, v);
}

/* A user name fit to show: printable, no blanks. */
static bool
user_ok(const char *s, size_t n)
{
	if (!n || n >= sizeof(((struct procinfo_slurm *)0)->user))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
			return false;
	return true;
}

bool
procinfo_slurm_environ(const char *env, size_t len, struct procinfo_slurm *s)
{
	uint64_t job, step, ajob, atask;
	const char *u;
	size_t n;

	memset(s, 0, sizeof(*s));
	s->uid = -1;
	if (!env)
		return false;
	if (!env_u32(env, len, "SLURM_JOB_ID", &job) && !env_u32(env, len, "SLURM_JOBID", &job))
		return false;
	if (env_u32(env, len, "SLURM_ARRAY_JOB_ID", &ajob) &&
	    env_u32(env, len, "SLURM_ARRAY_TASK_ID", &atask))
		snprintf(s->job, sizeof(s->job), "%" PRIu64 "_%" PRIu64, ajob, atask);
	else
		snprintf(s->job, sizeof(s->job), "%" PRIu64, job);
	if (env_u32(env, len, "SLURM_STEP_ID", &step) || env_u32(env, len, "SLURM_STEPID", &step)) {
		const char *sp = special_step(step);

		if (sp)
			snprintf(s->step, sizeof(s->step), "%s", sp);
		else
			snprintf(s->step, sizeof(s->step), "%" PRIu64, step);
	}
	u = env_get(env, len, "SLURM_JOB_USER", &n);
	if (u && user_ok(u, n))
		snprintf(s->user, sizeof(s->user), "%.*s", (int)n, u);
	return true;
}

/* --- user names ------------------------------------------------------------ */

/* Index of uid in the sorted cache, or where it would go. */
static size_t
user_find(const struct procinfo_ctx *ctx, uint32_t uid, bool *found)
{
	size_t lo = 0, hi = ctx->nr_user;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ctx->user[mid].uid < uid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < ctx->nr_user && ctx->user[lo].uid == uid;
	return lo;
}

static int
cmp_user(const void *a, const void *b)
{
	const struct user_ent *x = a, *y = b;

	if (x->uid != y->uid)
		return x->uid < y->uid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* One passwd(5) line: "name:password:uid:gid:gecos:home:shell". */
static void
passwd_line(struct procinfo_ctx *ctx, const char *p, const char *eol, uint32_t seq)
{
	const char *c1 = memchr(p, ':', (size_t)(eol - p)), *c2, *v;
	uint64_t uid;

	/* '+' and '-' are NIS compat entries, not users */
	if (!c1 || c1 == p || *p == '#' || *p == '+' || *p == '-')
		return;
	c2 = memchr(c1 + 1, ':', (size_t)(eol - c1 - 1));
	if (!c2)
		return;
	v = c2 + 1;
	if (v == eol || !parse_is_digit(*v) || !parse_u64(&v, eol, &uid) || v == eol || *v != ':' ||
	    uid > UINT32_MAX)
		return;
	ALLOC_GROW(ctx->user, ctx->nr_user + 1, ctx->alloc_user);
	ctx->user[ctx->nr_user].uid = (uint32_t)uid;
	ctx->user[ctx->nr_user].seq = seq;
	ctx->user[ctx->nr_user].name = xstrndup(p, (size_t)(c1 - p));
	ctx->nr_user++;
}

/* Load the whole file once: a process table asks for few uids, but asks often. */
static void
passwd_load(struct procinfo_ctx *ctx)
{
	const char *file = ctx->cfg->passwd_file;
	struct strbuf sb = STRBUF_INIT;
	const char *p, *end;
	uint32_t seq = 0;
	size_t i, j;

	ctx->passwd_loaded = true;
	if (file_read(*file == '/' ? NULL : ".", file, &sb, PASSWD_CAP, NULL) < 0)
		goto out;
	for (p = sb.buf, end = sb.buf + sb.len; p < end; seq++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		passwd_line(ctx, p, nl ? nl : end, seq);
		p = nl ? nl + 1 : end;
	}
	if (ctx->nr_user > 1)
		qsort(ctx->user, ctx->nr_user, sizeof(*ctx->user), cmp_user);
	/* like getpwuid(), the first line with a uid wins */
	for (i = j = 0; i < ctx->nr_user; i++) {
		if (j && ctx->user[j - 1].uid == ctx->user[i].uid)
			free(ctx->user[i].name);
		else
			ctx->user[j++] = ctx->user[i];
	}
	ctx->nr_user = j;
out:
	strbuf_release(&sb);
}

/* getpwuid_r() into a fresh string, or NULL when the uid has no name. */
static char *
lookup_getpw(uint32_t uid)
{
	struct passwd pw, *res = NULL;
	long hint = sysconf(_SC_GETPW_R_SIZE_MAX);
	size_t size = hint > 0 ? (size_t)hint : 1024;
	char *buf = NULL, *name = NULL;
	int rc;

	for (;;) {
		buf = xrealloc(buf, size);
		rc = getpwuid_r((uid_t)uid, &pw, buf, size, &res);
		if (rc != ERANGE || size >= 1024 * 1024)
			break;
		size *= 2;
	}
	if (!rc && res && res->pw_name && *res->pw_name)
		name = xstrdup(res->pw_name);
	free(buf);
	return name;
}

/* The user name of uid, or the uid as text; valid until the next call. */
static const char *
user_name(struct procinfo_ctx *ctx, uint32_t uid)
{
	char *name = NULL;
	bool found;
	size_t i;

	if (ctx->cfg->passwd_file && !ctx->passwd_loaded)
		passwd_load(ctx);
	i = user_find(ctx, uid, &found);
	if (found)
		return ctx->user[i].name;
	if (!ctx->cfg->passwd_file)
		name = lookup_getpw(uid);
	if (ctx->nr_user >= USER_CACHE_MAX) {
		if (name && strlen(name) < sizeof(ctx->user_spare))
			snprintf(ctx->user_spare, sizeof(ctx->user_spare), "%s", name);
		else
			snprintf(ctx->user_spare, sizeof(ctx->user_spare), "%" PRIu32, uid);
		free(name);
		return ctx->user_spare;
	}
	if (!name) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addf(&sb, "%" PRIu32, uid);
		name = strbuf_detach(&sb, NULL);
	}
	ALLOC_GROW(ctx->user, ctx->nr_user + 1, ctx->alloc_user);
	memmove(ctx->user + i + 1, ctx->user + i, (ctx->nr_user - i) * sizeof(*ctx->user));
	ctx->user[i].uid = uid;
	ctx->user[i].seq = 0;
	ctx->user[i].name = name;
	ctx->nr_user++;
	return name;
}

/* --- CPU % ----------------------------------------------------------------- */

static void
ent_forget_static(struct procinfo_ctx *ctx, struct cpu_ent *e)
{
	if (e->statm_fd >= 0) {
		close(e->statm_fd);
		ctx->nr_fd--;
	}
	e->statm_fd = -1;
	free(e->strs);
	e->strs = NULL;
	e->kept = 0;
	e->runtime = NULL;
	e->have_static = false;
}

/* Forget the processes the current sample did not see. */
static void
cpu_prune(struct procinfo_ctx *ctx)
{
	size_t i, j = 0;

	for (i = 0; i < ctx->nr_cpu; i++) {
		if (ctx->cpu[i].gen == ctx->gen)
			ctx->cpu[j++] = ctx->cpu[i];
		else
			ent_forget_static(ctx, &ctx->cpu[i]);
	}
	ctx->nr_cpu = j;
}

/* The entry of pid, or NULL. */
static struct cpu_ent *
cpu_find(struct procinfo_ctx *ctx, uint32_t pid)
{
	size_t lo = 0, hi = ctx->nr_cpu, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (ctx->cpu[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ctx->nr_cpu && ctx->cpu[lo].pid == pid ? &ctx->cpu[lo] : NULL;
}

/* The entry of pid, added when missing; NULL when the cache is full. */
static struct cpu_ent *
cpu_entry(struct procinfo_ctx *ctx, uint32_t pid)
{
	size_t lo = 0, hi, mid;

	if (ctx->nr_cpu >= CPU_CACHE_MAX)
		cpu_prune(ctx);
	hi = ctx->nr_cpu;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (ctx->cpu[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ctx->nr_cpu && ctx->cpu[lo].pid == pid)
		return &ctx->cpu[lo];
	if (ctx->nr_cpu >= CPU_CACHE_MAX)
		return NULL;
	ALLOC_GROW(ctx->cpu, ctx->nr_cpu + 1, ctx->alloc_cpu);
	memmove(ctx->cpu + lo + 1, ctx->cpu + lo, (ctx->nr_cpu - lo) * sizeof(*ctx->cpu));
	memset(&ctx->cpu[lo], 0, sizeof(ctx->cpu[lo]));
	ctx->cpu[lo].statm_fd = -1;
	ctx->cpu[lo].pid = pid;
	ctx->nr_cpu++;
	return &ctx->cpu[lo];
}

/*
 * CPU % over the interval since the previous sample that saw this process,
 * else over its lifetime (as ps(1) shows). elapsed: seconds since it started.
 */
static void
set_cpu_percent(struct procinfo_ctx *ctx, struct gpu_proc *p, double cpu, double elapsed)
{
	struct cpu_ent *e = cpu_entry(ctx, p->pid);
	double pct = elapsed > 0 ? cpu / elapsed * 100 : 0;

	if (e && e->start_ticks != p->start_ticks) {
		/* the pid was reused by a new process */
		ent_forget_static(ctx, e);
		memset(e, 0, sizeof(*e));
		e->statm_fd = -1;
		e->pid = p->pid;
		e->start_ticks = p->start_ticks;
	}
	/* a process on two GPUs is filled twice in one sample: keep its previous sample */
	if (e && e->gen && e->gen != ctx->gen) {
		e->prev_cpu = e->cur_cpu;
		e->prev_up = e->cur_up;
		e->has_prev = true;
	}
	if (e) {
		e->cur_cpu = cpu;
		e->cur_up = ctx->uptime;
		e->gen = ctx->gen;
	}
	if (e && e->has_prev && e->cur_up > e->prev_up && cpu >= e->prev_cpu)
		pct = (cpu - e->prev_cpu) / (e->cur_up - e->prev_up) * 100;
	proc_set(p, PF_CPU_PERCENT, pct);
}

/* --- one process ----------------------------------------------------------- */

/*
 * "<pid>/<name>" into buf, as snprintf("%u/%s") would write it, without
 * printf: four of these per process per sample.
 */
static char *
pid_path(char *buf, size_t size, uint32_t pid, const char *name)
{
	char digits[10]; /* UINT32_MAX has 10 */
	size_t n = 0, at = 0;

	do {
		digits[n++] = (char)('0' + pid % 10);
		pid /= 10;
	} while (pid);
	while (n && at + 1 < size)
		buf[at++] = digits[--n];
	if (at + 1 < size)
		buf[at++] = '/';
	if (size)
		str_copy(buf + at, size - at, name);
	return buf;
}

static int
read_pid_file(struct procinfo_ctx *ctx, uint32_t pid, const char *name, size_t cap)
{
	char rel[64];

	pid_path(rel, sizeof(rel), pid, name);
	return file_read(ctx->cfg->proc_root, rel, &ctx->sb, cap, NULL);
}

static bool
pid_exists(struct procinfo_ctx *ctx, uint32_t pid)
{
	char rel[64], full[4096];

	pid_path(rel, sizeof(rel), pid, "status");
	path_join(full, sizeof(full), ctx->cfg->proc_root, rel);
	return access(full, F_OK) == 0;
}

/*
 * Does pid hold an open /dev/nvidia* file? Returns 1 when it does, 0 when it
 * does not (or is gone), E_PERM when we may not look.
 */
static int
holds_nvidia(struct procinfo_ctx *ctx, uint32_t pid)
{
	char rel[64], full[4096], link[64];
	struct dirent *de;
	bool denied = false;
	int rc = 0, e;
	DIR *d;

	pid_path(rel, sizeof(rel), pid, "fd");
	path_join(full, sizeof(full), ctx->cfg->proc_root, rel);
	d = opendir(full);
	if (!d) {
		e = errno;
		return e == EACCES || e == EPERM ? E_PERM : 0;
	}
	for (;;) {
		ssize_t n;

		de = readdir(d);
		if (!de)
			break;
		if (de->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n < 0) {
			e = errno;
			denied |= e == EACCES || e == EPERM;
			continue;
		}
		link[n] = '\0';
		if (!strncmp(link, "/dev/nvidia", 11)) {
			rc = 1;
			break;
		}
	}
	closedir(d);
	return rc == 0 && denied ? E_PERM : rc;
}

static void
replace_str(char **dst, char *s)
{
	free(*dst);
	*dst = s;
}

static char *
dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* --- Kubernetes names: lookups ------------------------------------------ */

static void
kube_clear(struct kube_cache *k)
{
	for (size_t i = 0; i < k->nr_pod; i++) {
		free(k->pod[i].uid);
		free(k->pod[i].ns);
		free(k->pod[i].name);
		free(k->pod[i].dir);
		free(k->pod[i].only_ctr);
	}
	for (size_t i = 0; i < k->nr_ctr; i++)
		free(k->ctr[i].name);
	k->nr_pod = k->nr_ctr = 0;
}

static int
cmp_kube_pod(const void *a, const void *b)
{
	return strcmp(((const struct kube_pod *)a)->uid, ((const struct kube_pod *)b)->uid);
}

static int
cmp_kube_ctr(const void *a, const void *b)
{
	return strcmp(((const struct kube_ctr *)a)->id, ((const struct kube_ctr *)b)->id);
}

/* "<namespace>_<pod>_<uid>" */
static void
kube_add_pod(struct kube_cache *k, const char *d)
{
	const char *u1 = strchr(d, '_'), *u2 = u1 ? strchr(u1 + 1, '_') : NULL;
	struct kube_pod *e;

	if (!u1 || !u2 || u1 == d || u2 == u1 + 1 || !u2[1] || strchr(u2 + 1, '_'))
		return;
	ALLOC_GROW(k->pod, k->nr_pod + 1, k->alloc_pod);
	e = &k->pod[k->nr_pod++];
	memset(e, 0, sizeof(*e));
	e->ns = xstrndup(d, (size_t)(u1 - d));
	e->name = xstrndup(u1 + 1, (size_t)(u2 - u1 - 1));
	e->uid = xstrdup(u2 + 1);
	e->dir = xstrdup(d);
}

/* "<pod>_<namespace>_<container>-<64 hex>.log" */
static void
kube_add_ctr(struct kube_cache *k, const char *d)
{
	size_t n = strlen(d);
	const char *u1, *u2, *id;
	struct kube_ctr *e;

	if (n < 4 + 65 + 5 || strcmp(d + n - 4, ".log"))
		return;
	id = d + n - 4 - 64;
	if (id[-1] != '-' || !is_hex_id(id, 64))
		return;
	u1 = strchr(d, '_');
	u2 = u1 ? strchr(u1 + 1, '_') : NULL;
	if (!u2 || u2 + 1 >= id - 1)
		return;
	ALLOC_GROW(k->ctr, k->nr_ctr + 1, k->alloc_ctr);
	e = &k->ctr[k->nr_ctr++];
	memcpy(e->id, id, 64);
	e->id[64] = '\0';
	e->name = xstrndup(u2 + 1, (size_t)(id - 1 - u2 - 1));
}

/* Call add for each entry of root/rel not starting with '.', at most KUBE_MAX. */
static void
kube_list(const char *root, const char *rel, struct kube_cache *k,
          void (*add)(struct kube_cache *, const char *), const size_t *nr)
{
	char full[4096];
	struct dirent *de;
	DIR *d;

	path_join(full, sizeof(full), root, rel);
	d = opendir(full);
	if (!d)
		return;
	while (*nr < KUBE_MAX && (de = readdir(d)))
		if (de->d_name[0] != '.')
			add(k, de->d_name);
	closedir(d);
}

static void
kube_load(struct procinfo_ctx *ctx)
{
	struct kube_cache *k = &ctx->kube;
	const char *root = ctx->cfg->root ? ctx->cfg->root : "/";
	double now = clock_mono();

	if (k->loaded && now - k->at < KUBE_REFRESH)
		return;
	kube_clear(k);
	k->loaded = true;
	k->at = now;
	kube_list(root, "var/log/pods", k, kube_add_pod, &k->nr_pod);
	kube_list(root, "var/log/containers", k, kube_add_ctr, &k->nr_ctr);
	if (k->nr_pod)
		qsort(k->pod, k->nr_pod, sizeof(*k->pod), cmp_kube_pod);
	if (k->nr_ctr)
		qsort(k->ctr, k->nr_ctr, sizeof(*k->ctr), cmp_kube_ctr);
}

static struct kube_pod *
kube_find_pod(struct kube_cache *k, const char *uid)
{
	size_t lo = 0, hi = k->nr_pod;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(k->pod[mid].uid, uid);

		if (!c)
			return &k->pod[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The container whose id starts with the 12 (or more) hex digits of id. */
static const struct kube_ctr *
kube_find_ctr(const struct kube_cache *k, const char *id)
{
	size_t lo = 0, hi = k->nr_ctr, n = strlen(id);

	if (n < CONTAINER_ID_LEN || n > 64)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strncmp(k->ctr[mid].id, id, n);

		if (!c)
			return &k->ctr[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The name of a pod's one container directory (its logs), read once. */
static const char *
kube_only_ctr(const char *root, struct kube_pod *pod)
{
	char rel[600], full[4096];
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	if (pod->ctr_read)
		return pod->only_ctr;
	pod->ctr_read = true;
	if (!path_fmt(rel, sizeof(rel), "var/log/pods/%s", pod->dir))
		return NULL;
	path_join(full, sizeof(full), root, rel);
	d = opendir(full);
	if (!d)
		return NULL;
	while ((de = readdir(d)) && n < 2) {
		if (de->d_name[0] == '.')
			continue;
		n++;
		free(pod->only_ctr);
		pod->only_ctr = xstrdup(de->d_name);
	}
	closedir(d);
	if (n != 1) {
		free(pod->only_ctr);
		pod->only_ctr = NULL;
	}
	return pod->only_ctr;
}

/* Pod and container names of a process in a pod or container, when the kubelet's files say. */
static void
kube_names(struct procinfo_ctx *ctx, struct gpu_proc *p)
{
	struct kube_cache *k = &ctx->kube;
	const struct kube_ctr *c = NULL;
	struct kube_pod *pod = NULL;

	if (!p->pod && !p->container)
		return;
	kube_load(ctx);
	if (p->pod && (pod = kube_find_pod(k, p->pod))) {
		replace_str(&p->pod_namespace, xstrdup(pod->ns));
		replace_str(&p->pod_name, xstrdup(pod->name));
	}
	if (p->container)
		c = kube_find_ctr(k, p->container);
	if (c)
		replace_str(&p->container_name, xstrdup(c->name));
	else if (pod && kube_only_ctr(ctx->cfg->root ? ctx->cfg->root : "/", pod))
		replace_str(&p->container_name, xstrdup(pod->only_ctr));
}

/* Returns false when the status file lacks what every process has. */
static bool
apply_status(struct procinfo_ctx *ctx, struct gpu_proc *p)
{
	struct status_info si;

	parse_status(ctx->sb.buf, ctx->sb.len, &si);
	if (si.has_name)
		replace_str(&p->name, xstrndup(si.name, si.name_len));
	if (si.has_uid) {
		proc_set(p, PF_UID, (double)si.uid);
		replace_str(&p->user, xstrdup(user_name(ctx, (uint32_t)si.uid)));
	}
	if (si.nr_nspid)
		proc_set(p, PF_NSPID, (double)si.nspid);
	/* kernel threads and zombies have no VmRSS: that is not a failure */
	if (si.has_rss)
		proc_set(p, PF_RSS, (double)si.rss_kb * 1024);
	return si.has_name && si.has_uid && !si.bad;
}

static bool
apply_stat(struct procinfo_ctx *ctx, struct gpu_proc *p)
{
	struct stat_info st;
	double cpu, elapsed;

	if (!parse_stat(ctx->sb.buf, ctx->sb.len, &st))
		return false;
	if (ctx->no_status) {
		replace_str(&p->name, xstrndup(st.comm, st.comm_len));
		/* the same counter as status's VmRSS; 0 for kernel threads and zombies */
		if (st.rss)
			proc_set(p, PF_RSS, (double)st.rss * ctx->page_size);
	}
	cpu = ((double)st.utime + (double)st.stime) / ctx->hz;
	p->start_ticks = st.starttime;
	proc_set(p, PF_CPU_TIME, cpu);
	if (!ctx->uptime_ok)
		return true;
	/* a process born after we read the uptime has a start in the future */
	elapsed = ctx->uptime - (double)st.starttime / ctx->hz;
	if (elapsed < 0)
		elapsed = 0;
	proc_set(p, PF_START_TIME, ctx->now - elapsed);
	set_cpu_percent(ctx, p, cpu, elapsed);
	return true;
}

static void
apply_cmdline(struct procinfo_ctx *ctx, struct gpu_proc *p)
{
	struct strbuf *sb = &ctx->sb;
	size_t n = sb->len, i;

	/* the last argument's NUL ends it; setproctitle() pads with more */
	while (n && sb->buf[n - 1] == '\0')
		n--;
	if (!n) {
		/* a zombie or kernel thread: show the name as ps(1) does */
		if (p->name) {
			strbuf_reset(sb);
			strbuf_addf(sb, "[%s]", p->name);
			replace_str(&p->cmdline, xstrdup(sb->buf));
		}
		return;
	}
	for (i = 0; i < n; i++)
		if (sb->buf[i] == '\0')
			sb->buf[i] = ' ';
	replace_str(&p->cmdline, xstrndup(sb->buf, n));
}

/*
 * The Slurm job of p: its user from the job's cgroup (v1's uid_<uid>), or
 * the environment's SLURM_JOB_USER, else the owner of the process (the job
 * runs as its user).
 */
static void
apply_slurm(struct procinfo_ctx *ctx, struct gpu_proc *p, const struct procinfo_slurm *s)
{
	const char *user = p->user;

	if (s->user[0])
		user = s->user;
	else if (s->uid >= 0)
		user = user_name(ctx, (uint32_t)s->uid);
	replace_str(&p->slurm_job, xstrdup(s->job));
	replace_str(&p->slurm_step, s->step[0] ? xstrdup(s->step) : NULL);
	replace_str(&p->slurm_user, dup_or_null(user));
}

/*
 * Can a process without a job cgroup still be a Slurm job's? Not one in a
 * container: a job's container runs in the job's cgroup, or in none of its
 * own (enroot). Anywhere else it can: slurmstepd's children stay in
 * slurmd's cgroup (system.slice/slurmd.service), or in whatever cgroup
 * slurmd was started from (a login session, "/" on a host without systemd).
 * So a container host's GPU processes cost no fifth file.
 */
static bool
may_be_slurm_job(const struct gpu_proc *p)
{
	return !p->container;
}

/*
 * Without a job cgroup (proctrack/linuxproc, no cgroup plugin), the job
 * Slurm started a process in is in its environment, which only root and its
 * owner may read: a refusal is no failure. Read after the cgroup file, into
 * the same buffer.
 */
static void
slurm_from_environ(struct procinfo_ctx *ctx, struct gpu_proc *p)
{
	struct procinfo_slurm s;

	if (p->slurm_job || !may_be_slurm_job(p) ||
	    read_pid_file(ctx, p->pid, "environ", ENVIRON_CAP) < 0)
		return;
	if (procinfo_slurm_environ(ctx->sb.buf, ctx->sb.len, &s))
		apply_slurm(ctx, p, &s);
}

/* Returns false when no line of the file could be parsed. */
static bool
apply_cgroup(struct procinfo_ctx *ctx, struct gpu_proc *p)
{
	char id[CONTAINER_ID_LEN + 1], pod[64];
	struct procinfo_slurm sl;
	const char *rt;
	struct cg_line shown;

	if (container_and_path(ctx->sb.buf, id, sizeof(id), &rt, pod, sizeof(pod), &shown)) {
		replace_str(&p->container, xstrdup(id));
		p->container_runtime = rt;
		replace_str(&p->pod, pod[0] ? xstrdup(pod) : NULL);
	}
	if (procinfo_slurm_cgroup(ctx->sb.buf, &sl))
		apply_slurm(ctx, p, &sl);
	if (!shown.path)
		return false;
	replace_str(&p->cgroup, xstrndup(shown.path, shown.len));
	return true;
}

/*
 * Read stat, cmdline and cgroup after status. Returns E_NOTFOUND when the
 * process exited in between, else 0 with *partial set for what failed.
 */
static int
fill_rest(struct procinfo_ctx *ctx, struct gpu_proc *p, bool *partial)
{
	int rc;

	if (ctx->no_status) {
		/* /proc/<pid>/stat is owned by the process's effective uid */
		char rel[64];
		struct stat st;

		pid_path(rel, sizeof(rel), p->pid, "stat");
		rc = file_read_st(ctx->cfg->proc_root, rel, &ctx->sb, STAT_CAP, &st, NULL);
		if (rc == 0) {
			proc_set(p, PF_UID, (double)st.st_uid);
			replace_str(&p->user, xstrdup(user_name(ctx, (uint32_t)st.st_uid)));
		}
	} else {
		rc = read_pid_file(ctx, p->pid, "stat", STAT_CAP);
	}
	if (rc == E_NOTFOUND)
		return rc;
	*partial |= rc < 0 || !apply_stat(ctx, p);

	rc = read_pid_file(ctx, p->pid, "cmdline", CMDLINE_CAP);
	if (rc == E_NOTFOUND)
		return rc;
	if (rc == 0)
		apply_cmdline(ctx, p);
	*partial |= rc < 0;

	/* a kernel built without cgroups has no such file, but still has the process */
	rc = read_pid_file(ctx, p->pid, "cgroup", CGROUP_CAP);
	if (rc == E_NOTFOUND && !pid_exists(ctx, p->pid))
		return rc;
	if (rc == 0)
		*partial |= !apply_cgroup(ctx, p);
	else if (rc != E_NOTFOUND)
		*partial = true;
	slurm_from_environ(ctx, p);
	return 0;
}

/* Is pid in our pid namespace? False when we cannot tell. */
static bool
same_pid_ns(struct procinfo_ctx *ctx, uint32_t pid)
{
	char rel[48], full[4096], ns[64];
	ssize_t n;

	if (!ctx->self_ns[0])
		return false;
	pid_path(rel, sizeof(rel), pid, "ns/pid");
	path_join(full, sizeof(full), ctx->cfg->proc_root, rel);
	n = readlink(full, ns, sizeof(ns) - 1);
	if (n <= 0)
		return false;
	ns[n] = '\0';
	return !strcmp(ns, ctx->self_ns);
}

/* The string k kept in e, or NULL when it is unknown. */
static const char *
ent_str(const struct cpu_ent *e, enum kept_str k)
{
	const char *s = e->strs;

	if (!(e->kept & (1u << k)))
		return NULL;
	for (unsigned i = 0; i < k; i++)
		if (e->kept & (1u << i))
			s += strlen(s) + 1;
	return s;
}

/* The strings of p kept in e (e's earlier ones freed), read now: one allocation for all. */
static void
keep_strings(struct cpu_ent *e, const struct gpu_proc *p)
{
	const char *v[K_NR];
	size_t len[K_NR], size = 0;
	char *w;

	v[K_NAME] = p->name;
	v[K_USER] = p->user;
	v[K_CONTAINER] = p->container;
	v[K_POD] = p->pod;
	v[K_CGROUP] = p->cgroup;
	v[K_CMDLINE] = p->cmdline;
	v[K_SLURM_JOB] = p->slurm_job;
	v[K_SLURM_STEP] = p->slurm_step;
	v[K_SLURM_USER] = p->slurm_user;
	free(e->strs);
	e->strs = NULL;
	e->kept = 0;
	for (unsigned k = 0; k < K_NR; k++) {
		len[k] = v[k] ? strlen(v[k]) + 1 : 0;
		size += len[k];
	}
	w = e->strs = size ? xmalloc(size) : NULL;
	for (unsigned k = 0; k < K_NR; k++) {
		if (!v[k])
			continue;
		memcpy(w, v[k], len[k]);
		w += len[k];
		e->kept |= (uint16_t)(1u << k);
	}
	e->runtime = p->container_runtime;
	/* spread the refreshes of processes first seen together over a few seconds */
	e->static_at = clock_mono() + (double)(e->pid % 8);
}

/*
 * Seconds of CPU time on clk, to the millisecond (stat's ticks are 10 ms; a
 * whole number of milliseconds is also what a recording stores compactly),
 * or a negative number.
 */
static double
clock_seconds(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts) < 0)
		return -1;
	return (double)((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000) / 1000.0;
}

/*
 * CPU time and resident memory of a process whose statm file is kept open:
 * CPU time from its CPU-time clock (all its threads), memory from statm,
 * which together cost the kernel a third of what its stat line does. A
 * process that is gone makes statm say ESRCH (so a reused pid is never taken
 * for it). Returns 0, or -1 when it must be read from /proc in full.
 */
static int
fill_live(struct procinfo_ctx *ctx, struct gpu_proc *p, struct cpu_ent *e)
{
	uint64_t start = e->start_ticks, size, resident;
	double cpu = clock_seconds(e->clk), elapsed;
	const char *s, *end;
	char buf[256];
	ssize_t n;

	if (cpu < 0)
		return -1;
	/* statm after the clock: if it answers, the clock was this process's */
	n = pread(e->statm_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	s = buf;
	end = buf + n;
	if (!parse_u64(&s, end, &size) || !parse_u64(&s, end, &resident))
		return -1;
	/* e is not used after this: set_cpu_percent() may move the cache */
	p->start_ticks = start;
	proc_set(p, PF_CPU_TIME, cpu);
	if (resident)
		proc_set(p, PF_RSS, (double)resident * ctx->page_size);
	if (!ctx->uptime_ok)
		return 0;
	elapsed = ctx->uptime - (double)start / ctx->hz;
	if (elapsed < 0)
		elapsed = 0;
	proc_set(p, PF_START_TIME, ctx->now - elapsed);
	set_cpu_percent(ctx, p, cpu, elapsed);
	return 0;
}

/* Command line and cgroup read again into p. Returns E_NOTFOUND, or 0 with *partial. */
static int
refresh_strings(struct procinfo_ctx *ctx, struct gpu_proc *p, bool *partial)
{
	int rc = read_pid_file(ctx, p->pid, "cmdline", CMDLINE_CAP);

	if (rc == E_NOTFOUND)
		return rc;
	if (rc == 0)
		apply_cmdline(ctx, p);
	*partial |= rc < 0;
	rc = read_pid_file(ctx, p->pid, "cgroup", CGROUP_CAP);
	if (rc == 0)
		*partial |= !apply_cgroup(ctx, p);
	else
		*partial |= rc != E_NOTFOUND;
	slurm_from_environ(ctx, p);
	return 0;
}

/*
 * A process seen for the second time (so a one-shot command never pays for
 * it): open its statm file and find its CPU-time clock for fill_live(), on
 * procfs only (a saved tree's files do not follow a process, and it has no
 * clock), and take the clock's reading as this sample's CPU time, so that
 * the next sample's CPU % compares readings of the same clock.
 */
static void
keep_live(struct procinfo_ctx *ctx, struct cpu_ent *e)
{
	char rel[64], full[4096];
	double cpu;
	int fd;

	if (!ctx->procfs || e->statm_fd >= 0 || ctx->nr_fd >= ctx->fd_budget || e->gen != ctx->gen)
		return;
	pid_path(rel, sizeof(rel), e->pid, "statm");
	path_join(full, sizeof(full), ctx->cfg->proc_root, rel);
	fd = file_open(full);
	if (fd < 0)
		return;
	if (clock_getcpuclockid((pid_t)e->pid, &e->clk) != 0 || (cpu = clock_seconds(e->clk)) < 0) {
		close(fd);
		return;
	}
	e->statm_fd = fd;
	ctx->nr_fd++;
	e->cur_cpu = cpu;
}

/*
 * A process read in full before, in our pid namespace, and still the same
 * process: its CPU time and memory read anew (fill_live(), or its stat
 * file in a saved tree), owner and pid from the cache, and its name,
 * command line and cgroup too unless STATIC_REFRESH has passed, when they
 * are read again (and its start time checked). Returns 0 (done),
 * E_NOTFOUND (it exited), or 1 when it must be read in full.
 */
static int
fill_cached(struct procinfo_ctx *ctx, struct gpu_proc *p)
{
	struct cpu_ent *e = cpu_find(ctx, p->pid);
	struct stat_info st;
	bool refresh, partial = false, live;
	int rc;

	if (!e || !e->have_static)
		return 1;
	refresh = clock_mono() - e->static_at >= STATIC_REFRESH;
	live = e->statm_fd >= 0;
	if (!live || refresh) {
		rc = read_pid_file(ctx, p->pid, "stat", STAT_CAP);
		if (rc == E_NOTFOUND)
			return rc;
		if (rc < 0 || !parse_stat(ctx->sb.buf, ctx->sb.len, &st) ||
		    st.starttime != e->start_ticks) {
			ent_forget_static(ctx, e); /* a new process, or unreadable: in full */
			return 1;
		}
	}
	if (live) {
		if (refresh)
			replace_str(&p->name, xstrndup(st.comm, st.comm_len));
		if (fill_live(ctx, p, e) < 0) {
			ent_forget_static(ctx, e); /* fill_live() failed before it could move it */
			return 1;
		}
	} else {
		ctx->no_status = true;
		apply_stat(ctx, p);
		ctx->no_status = false;
	}
	e = cpu_find(ctx, p->pid); /* the cache may have moved */
	if (!e || !e->have_static)
		return 1;
	proc_set(p, PF_NSPID, p->pid);
	proc_set(p, PF_UID, e->uid);
	replace_str(&p->user, dup_or_null(ent_str(e, K_USER)));
	if (refresh) {
		if (refresh_strings(ctx, p, &partial) == E_NOTFOUND)
			return E_NOTFOUND;
		if (partial) {
			ent_forget_static(ctx, e); /* read in full next time */
			p->host = PHOST_PARTIAL;
			return 0;
		}
		keep_strings(e, p);
	} else {
		if (live)
			replace_str(&p->name, dup_or_null(ent_str(e, K_NAME)));
		replace_str(&p->cmdline, dup_or_null(ent_str(e, K_CMDLINE)));
		replace_str(&p->container, dup_or_null(ent_str(e, K_CONTAINER)));
		replace_str(&p->pod, dup_or_null(ent_str(e, K_POD)));
		replace_str(&p->cgroup, dup_or_null(ent_str(e, K_CGROUP)));
		replace_str(&p->slurm_job, dup_or_null(ent_str(e, K_SLURM_JOB)));
		replace_str(&p->slurm_step, dup_or_null(ent_str(e, K_SLURM_STEP)));
		replace_str(&p->slurm_user, dup_or_null(ent_str(e, K_SLURM_USER)));
		p->container_runtime = e->runtime;
	}
	if (!live)
		keep_live(ctx, e);
	p->host = PHOST_OK;
	return 0;
}

/* Keep what fill_cached() reuses of a process just read in full. */
static void
remember_static(struct procinfo_ctx *ctx, const struct gpu_proc *p)
{
	struct cpu_ent *e = cpu_find(ctx, p->pid);

	if (!e || e->start_ticks != p->start_ticks || !proc_has(p, PF_UID))
		return;
	e->uid = (uint32_t)p->v[PF_UID]; /* a uid_t, from status or the owner of the files */
	keep_strings(e, p);
	e->have_static = true;
}

/*
 * status gives the real uid and the pid inside the process's own namespace,
 * and costs the kernel as much to write as the other three files together.
 * For a process in our own pid namespace that we may look into (the usual
 * case), the owner of its files (its effective uid, what htop shows) and its
 * pid stand in for them, and stat gives the name and resident memory.
 */
static int
fill_one(struct procinfo_ctx *ctx, struct gpu_proc *p, struct err *err)
{
	bool partial = false;
	int rc;

	if (!ctx->nested) {
		rc = fill_cached(ctx, p);
		if (rc == E_NOTFOUND)
			goto gone;
		if (rc == 0)
			return 0;
	}
	if (!ctx->nested && same_pid_ns(ctx, p->pid)) {
		proc_set(p, PF_NSPID, p->pid);
		ctx->no_status = true;
		rc = fill_rest(ctx, p, &partial);
		ctx->no_status = false;
		if (rc == E_NOTFOUND)
			goto gone;
		p->host = partial ? PHOST_PARTIAL : PHOST_OK;
		if (!partial)
			remember_static(ctx, p);
		return 0;
	}
	rc = read_pid_file(ctx, p->pid, "status", STATUS_CAP);
	if (rc == E_NOTFOUND && !ctx->nested && !ctx->hidepid)
		goto gone;
	/* status is world-readable: a refusal is hidepid=1 or a security module */
	if (rc == E_NOTFOUND || rc == E_PERM) {
		p->host = PHOST_NOT_VISIBLE;
		return 0;
	}
	if (rc < 0) {
		p->host = PHOST_PARTIAL;
		return 0;
	}
	if (ctx->nested) {
		/* our pid N may be another process than the host's pid N */
		rc = holds_nvidia(ctx, p->pid);
		if (rc == 0) {
			p->host = PHOST_NOT_VISIBLE;
			return 0;
		}
		partial = rc == E_PERM;
	}
	partial |= !apply_status(ctx, p);
	if (fill_rest(ctx, p, &partial) == E_NOTFOUND)
		goto gone;
	p->host = partial ? PHOST_PARTIAL : PHOST_OK;
	return 0;
gone:
	return err_set(err, E_NOTFOUND, "process %" PRIu32 " has exited", p->pid);
}

/* --- the context ----------------------------------------------------------- */

/* Learn, once, whether we are in a nested pid namespace and whether procfs hides processes. */
static void
probe_self(struct procinfo_ctx *ctx)
{
	const char *root = ctx->cfg->proc_root;
	struct strbuf sb = STRBUF_INIT;
	struct status_info si;

	ctx->probed = true;
	{
		struct statfs sf;

		ctx->procfs = statfs(root, &sf) == 0 && sf.f_type == PROCFS_MAGIC;
	}
	/* kernels before 4.1 have no NSpid: we then assume the root namespace */
	if (!file_read(root, "self/status", &sb, STATUS_CAP, NULL)) {
		parse_status(sb.buf, sb.len, &si);
		ctx->nested = si.nr_nspid > 1;
	}
	if (!file_read(root, "self/mountinfo", &sb, MOUNTINFO_CAP, NULL))
		ctx->hidepid = mountinfo_hidepid(sb.buf, sb.len, root);
	{
		char full[4096];
		ssize_t n;

		path_join(full, sizeof(full), root, "self/ns/pid");
		n = readlink(full, ctx->self_ns, sizeof(ctx->self_ns) - 1);
		ctx->self_ns[n > 0 ? n : 0] = '\0';
	}
	strbuf_release(&sb);
}

static void
begin_sample(struct procinfo_ctx *ctx)
{
	const char *s, *end;

	if (!ctx->probed)
		probe_self(ctx);
	ctx->gen++;
	if (!ctx->gen)
		ctx->gen = 1; /* 0 means "never seen" in the CPU cache */
	ctx->now = clock_now(ctx->cfg);
	ctx->uptime_ok = false;
	if (file_read(ctx->cfg->proc_root, "uptime", &ctx->sb, 256, NULL) < 0)
		return;
	s = ctx->sb.buf;
	end = s + ctx->sb.len;
	ctx->uptime_ok = parse_seconds(&s, end, &ctx->uptime);
}

/*
 * How many statm files a context may keep open: half of what this process may
 * open, after lifting its soft limit to the hard one (up to 16384; only
 * descriptors below 1024 may go to select(), and ours never do), so that
 * a thousand GPU processes each cost one read a sample, not an open, a read
 * and a close.
 */
static size_t
kept_fd_budget(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	if (rl.rlim_cur < 16384 && rl.rlim_max > rl.rlim_cur) {
		rlim_t want = rl.rlim_max < 16384 ? rl.rlim_max : 16384;
		struct rlimit up = { want, rl.rlim_max };

		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			rl.rlim_cur = want;
	}
	return rl.rlim_cur > 256 ? (size_t)(rl.rlim_cur / 2) : 0;
}

struct procinfo_ctx *
procinfo_new(const struct gs_config *cfg)
{
	struct procinfo_ctx *ctx = xcalloc(1, sizeof(*ctx));
	long hz = sysconf(_SC_CLK_TCK);
	long page = sysconf(_SC_PAGESIZE);

	ctx->cfg = cfg;
	ctx->fd_budget = kept_fd_budget();
	ctx->hz = hz > 0 ? (double)hz : 100;
	ctx->page_size = page > 0 ? (double)page : 4096;
	strbuf_init(&ctx->sb, 4096);
	return ctx;
}

void
procinfo_free(struct procinfo_ctx *ctx)
{
	if (!ctx)
		return;
	for (size_t i = 0; i < ctx->nr_user; i++)
		free(ctx->user[i].name);
	free(ctx->user);
	for (size_t i = 0; i < ctx->nr_cpu; i++)
		ent_forget_static(ctx, &ctx->cpu[i]);
	free(ctx->cpu);
	kube_clear(&ctx->kube);
	free(ctx->kube.pod);
	free(ctx->kube.ctr);
	strbuf_release(&ctx->sb);
	free(ctx);
}

int
procinfo_fill(struct procinfo_ctx *ctx, struct gpu_proc *p, struct err *err)
{
	int rc;

	begin_sample(ctx);
	rc = fill_one(ctx, p, err);
	if (rc == 0)
		kube_names(ctx, p);
	return rc;
}

void
procinfo_enrich(struct procinfo_ctx *ctx, struct gpu_snapshot *snap)
{
	size_t i, j = 0;

	begin_sample(ctx);
	for (i = 0; i < snap->nr_proc; i++) {
		struct gpu_proc *p = &snap->proc[i];

		if (fill_one(ctx, p, NULL) == E_NOTFOUND) {
			gpu_proc_release(p);
			continue;
		}
		kube_names(ctx, p);
		if (i != j) {
			snap->proc[j] = *p; /* moves ownership of its strings */
			memset(p, 0, sizeof(*p));
		}
		j++;
	}
	snap->nr_proc = j;
	cpu_prune(ctx);
}

bool
procinfo_read_stat(const char *proc_root, uint32_t pid, struct strbuf *scratch, uint32_t *ppid,
                   uint64_t *start_ticks)
{
	struct stat_info st;
	char rel[32];

	pid_path(rel, sizeof(rel), pid, "stat");
	if (file_read(proc_root, rel, scratch, STAT_CAP, NULL) < 0 ||
	    !parse_stat(scratch->buf, scratch->len, &st) || st.ppid > UINT32_MAX)
		return false;
	if (ppid)
		*ppid = (uint32_t)st.ppid;
	if (start_ticks)
		*start_ticks = st.starttime;
	return true;
}
