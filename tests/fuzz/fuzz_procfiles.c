/*
 * libFuzzer target: procinfo_fill() on one process whose /proc files are
 * the input.
 *
 * Input: one flags byte, then the status, stat, cmdline and cgroup files,
 * the target of the ns/pid link and the uptime file, separated by 0x1E
 * bytes (ASCII record separator). A file with no part is absent. With no
 * ns part the process is in our pid namespace (procinfo then reads stat
 * in place of status); an empty one means no link (no way to tell, as on
 * old kernels); another value, "pid:[4026532999]", is another namespace
 * (a container seen from the host). With no uptime part the root's own
 * uptime is used. Flags:
 *   bits 0-1  the proc root: 0 plain; 1 nested pid namespace, the pid holds
 *             /dev/nvidia0; 2 nested, it holds no GPU file; 3 hidepid
 *   bit 2     p already holds strings and values (a process seen before)
 *   bit 3     sample it again, 100 s later, on the same context (CPU %)
 *   bit 4     the passwd file is missing (uids shown as numbers)
 *   bit 5     procinfo_enrich() on a snapshot that lists the pid on two
 *             GPUs, with a pid that does not exist between them
 *   bits 6-7  ignored: the seeds start with '@' + flags, which reads well
 *
 * The roots are made once per process under /dev/shm (or $TMPDIR, or
 * /tmp) and removed at exit, or by the next run when this one crashed.
 * Checked: no crash, leak or file descriptor left open; the return value
 * and p->host agree with which files exist; every field set is finite,
 * the non-negative ones non-negative; every string is NUL-terminated and
 * plausible (container ids of at most 12 characters with a known
 * runtime); a process not visible is untouched; procinfo_enrich() drops
 * exactly the processes that are gone, keeps the others in order, and
 * gives a process listed twice the same CPU %.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/procinfo.h"
#include "fuzz.h"

#define PID        4242
#define GONE_PID   999 /* no such directory in any root */
#define SEP        0x1E
#define NR_ROOTS   4
#define FIXED_TIME 1800000000.0

int LLVMFuzzerInitialize(int *argc, char ***argv);

enum part { P_STATUS, P_STAT, P_CMDLINE, P_CGROUP, P_NS, P_UPTIME, NR_PARTS };

/* the files of the pid's directory, in input order */
static const char *const file_name[P_NS] = { "status", "stat", "cmdline", "cgroup" };

/* What one input sets up for a pid. */
struct scene {
	int root;
	bool present[NR_PARTS];
	bool own_ns; /* a root not nested, and the pid's ns/pid is ours: no status read */
};

#define SELF_NS "pid:[4026531836]"

static const char default_uptime[] = "350000.50 5312345.67\n";
static const char later_uptime[] = "350100.50 5312945.67\n";

/* with the odd lines real files have: comments, NIS entries, no uid, a uid twice */
static const char passwd[] = "root:x:0:0:root:/root:/bin/bash\n"
                             "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
                             "# a comment\n"
                             "+@admins:x:::::\n"
                             "broken line without colons\n"
                             "nouid:x::1000:::\n"
                             "alice:x:1000:1000:Alice,,,:/home/alice:/bin/bash\n"
                             "\n"
                             "alias-of-alice:x:1000:1000::/home/alice:/bin/bash\n"
                             "bob:x:1002:1002::/home/bob:/bin/sh\n"
                             "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin";

static const char self_status[] = "Name:\tgpuscope\nUmask:\t0022\nState:\tR (running)\n"
                                  "Tgid:\t4321\nPid:\t4321\nPPid:\t1\n"
                                  "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n"
                                  "NStgid:\t4321\nNSpid:\t4321\nNSpgid:\t4321\nNSsid:\t4321\n"
                                  "VmRSS:\t    8192 kB\nThreads:\t1\n";

/* the same, seen from inside a container: two pid namespaces */
static const char self_status_nested[] = "Name:\tgpuscope\nState:\tR (running)\n"
                                         "Tgid:\t88\nPid:\t88\nPPid:\t1\n"
                                         "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n"
                                         "NStgid:\t4321\t88\nNSpid:\t4321\t88\n"
                                         "VmRSS:\t    8192 kB\nThreads:\t1\n";

static const char mountinfo[] =
        "22 28 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
        "23 28 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
        "28 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro\n";

static const char mountinfo_hidepid[] =
        "22 28 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
        "23 28 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc "
        "rw,hidepid=invisible\n"
        "28 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro\n";

static char base[4096];
static char root[NR_ROOTS][4096];
static char passwd_path[4096], missing_path[4096];
/* what each root's uptime file holds now: NULL = default_uptime */
static char *uptime_now[NR_ROOTS];
static size_t uptime_len[NR_ROOTS];
/* where PID's ns/pid link in each root points now: NULL = no link */
static char *ns_now[NR_ROOTS];

static void
write_file(const char *dir, const char *name, const void *data, size_t len)
{
	char path[4096 + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fuzz_write_file(path, data, len);
}

static void
remove_file(const char *dir, const char *name)
{
	char path[4096 + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (unlink(path) < 0 && errno != ENOENT)
		fuzz_die_errno("cannot remove", path);
}

static void
make_dir(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		fuzz_die_errno("cannot create", path);
}

static void
make_root(int i)
{
	char path[4096 + 64];

	snprintf(root[i], sizeof(root[i]), "%s/proc%d", base, i);
	make_dir(root[i]);
	snprintf(path, sizeof(path), "%s/self", root[i]);
	make_dir(path);
	if (i == 1 || i == 2)
		write_file(path, "status", self_status_nested, sizeof(self_status_nested) - 1);
	else
		write_file(path, "status", self_status, sizeof(self_status) - 1);
	if (i == 3)
		write_file(path, "mountinfo", mountinfo_hidepid, sizeof(mountinfo_hidepid) - 1);
	else
		write_file(path, "mountinfo", mountinfo, sizeof(mountinfo) - 1);
	snprintf(path, sizeof(path), "%s/self/ns", root[i]);
	make_dir(path);
	snprintf(path, sizeof(path), "%s/self/ns/pid", root[i]);
	if (symlink(SELF_NS, path) < 0)
		fuzz_die_errno("cannot create", path);
	write_file(root[i], "uptime", default_uptime, sizeof(default_uptime) - 1);
	snprintf(path, sizeof(path), "%s/%d", root[i], PID);
	make_dir(path);
	snprintf(path, sizeof(path), "%s/%d/ns", root[i], PID);
	make_dir(path);
	if (i == 1 || i == 2) {
		char fd[4096 + 128];

		snprintf(fd, sizeof(fd), "%s/fd", path);
		make_dir(fd);
		snprintf(path, sizeof(path), "%s/0", fd);
		if (symlink("/dev/null", path) < 0)
			fuzz_die_errno("cannot create", path);
		if (i == 1) {
			snprintf(path, sizeof(path), "%s/5", fd);
			if (symlink("/dev/nvidia0", path) < 0)
				fuzz_die_errno("cannot create", path);
		}
	}
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(base, sizeof(base), "%s", fuzz_scratch("procfiles"));
	for (int i = 0; i < NR_ROOTS; i++)
		make_root(i);
	write_file(base, "passwd", passwd, sizeof(passwd) - 1);
	snprintf(passwd_path, sizeof(passwd_path), "%s/passwd", base);
	snprintf(missing_path, sizeof(missing_path), "%s/no-such-passwd", base);
	return 0;
}

static void
set_uptime(int r, const char *data, size_t len)
{
	if (uptime_len[r] == len && uptime_now[r] && !memcmp(uptime_now[r], data, len))
		return;
	write_file(root[r], "uptime", data, len);
	free(uptime_now[r]);
	uptime_now[r] = malloc(len ? len : 1);
	if (!uptime_now[r])
		abort();
	memcpy(uptime_now[r], data, len);
	uptime_len[r] = len;
}

/* Point PID's ns/pid link at target (cut at a NUL and at 255 bytes), or remove it for NULL. */
static void
set_ns(int r, const char *target, size_t len)
{
	char path[4096 + 64], *t = NULL;

	if (target) {
		len = strnlen(target, len < 255 ? len : 255);
		t = malloc(len + 1);
		if (!t)
			abort();
		memcpy(t, target, len);
		t[len] = '\0';
	}
	if ((!t && !ns_now[r]) || (t && ns_now[r] && !strcmp(t, ns_now[r]))) {
		free(t);
		return;
	}
	snprintf(path, sizeof(path), "%s/%d/ns/pid", root[r], PID);
	if (unlink(path) < 0 && errno != ENOENT)
		fuzz_die_errno("cannot remove", path);
	if (t && t[0] && symlink(t, path) < 0)
		fuzz_die_errno("cannot create", path);
	free(ns_now[r]);
	ns_now[r] = t && t[0] ? t : NULL;
	if (ns_now[r] != t)
		free(t);
}

static char *
dup_str(const char *s)
{
	char *d = strdup(s);

	if (!d)
		abort();
	return d;
}

static void
prefill(struct gpu_proc *p)
{
	p->user = dup_str("olduser");
	p->name = dup_str("oldname");
	p->cmdline = dup_str("/old/cmd --flag");
	p->container = dup_str("0123456789ab");
	p->container_runtime = "docker";
	p->pod = dup_str("be3fd6e7-7c98-00b7-6f67-72c733e5669f");
	p->cgroup = dup_str("/old.slice");
	proc_set(p, PF_GPU_MEM, 123456789.0);
	proc_set(p, PF_UID, 999);
	proc_set(p, PF_CPU_PERCENT, 12.5);
}

/* The fields procinfo fills; the others belong to the driver's side. */
#define HOST_FIELDS                                                                         \
	((1u << PF_UID) | (1u << PF_NSPID) | (1u << PF_CPU_TIME) | (1u << PF_CPU_PERCENT) | \
	 (1u << PF_RSS) | (1u << PF_START_TIME))

static const char *const runtimes[] = { "docker", "containerd", "cri-o",
	                                "podman", "lxc",        "kubernetes" };

static void
check_str(const char *what, const char *s)
{
	if (!s)
		return;
	/* strlen() reads to the NUL: AddressSanitizer reports a missing one */
	FUZZ_CHECK(strlen(s) < (1u << 20), "%s is %zu bytes long", what, strlen(s));
}

static void
check_proc(const struct gpu_proc *p, const struct gpu_proc *before, int rc, const struct scene *sc)
{
	const bool *present = sc->present;
	int r = sc->root;

	FUZZ_CHECK(rc == 0 || rc == E_NOTFOUND, "procinfo_fill returned %d", rc);
	FUZZ_CHECK(p->pid == before->pid && p->dev == before->dev && p->type == before->type,
	           "the driver's fields changed");
	FUZZ_CHECK((p->valid & ~HOST_FIELDS) == (before->valid & ~HOST_FIELDS) &&
	                   p->v[PF_GPU_MEM] == before->v[PF_GPU_MEM],
	           "a driver-side value changed");
	if (rc == E_NOTFOUND) {
		/* gone: only when status, stat or cmdline is missing */
		FUZZ_CHECK(!present[P_STATUS] || !present[P_STAT] || !present[P_CMDLINE],
		           "E_NOTFOUND with status, stat and cmdline all there");
	} else {
		FUZZ_CHECK(p->host == PHOST_OK || p->host == PHOST_PARTIAL ||
		                   p->host == PHOST_NOT_VISIBLE,
		           "host state %d after a fill", (int)p->host);
	}
	if (rc == 0 && p->host == PHOST_NOT_VISIBLE) {
		FUZZ_CHECK(r != 0 || !present[P_STATUS],
		           "not visible in a plain root with a status file");
		FUZZ_CHECK(!sc->own_ns, "not visible, but in our own pid namespace");
		FUZZ_CHECK(p->valid == before->valid && p->user == before->user &&
		                   p->name == before->name && p->cmdline == before->cmdline &&
		                   p->container == before->container && p->pod == before->pod &&
		                   p->cgroup == before->cgroup &&
		                   p->container_runtime == before->container_runtime,
		           "a process not visible was changed");
		for (int f = 0; f < PF__COUNT; f++)
			FUZZ_CHECK(p->v[f] == before->v[f] ||
			                   (isnan(p->v[f]) && isnan(before->v[f])),
			           "a process not visible had field %d changed", f);
	}
	if (rc == 0 && p->host == PHOST_OK) {
		FUZZ_CHECK(p->name && p->user && proc_has(p, PF_UID) && proc_has(p, PF_CPU_TIME),
		           "complete, but name, user, uid or CPU time missing");
		FUZZ_CHECK((present[P_STATUS] || sc->own_ns) && present[P_STAT] &&
		                   present[P_CMDLINE],
		           "complete without status, stat or cmdline");
	}
	if (rc == 0 && sc->own_ns)
		FUZZ_CHECK(proc_has(p, PF_NSPID) && p->v[PF_NSPID] == p->pid,
		           "in our pid namespace, but its namespace pid is not %u",
		           (unsigned)p->pid);
	if (rc == 0 && r == 2 && present[P_STATUS])
		FUZZ_CHECK(p->host == PHOST_NOT_VISIBLE,
		           "nested pid without a GPU file taken for the driver's process");
	for (int f = 0; f < PF__COUNT; f++) {
		if (!proc_has(p, (enum proc_field)f))
			continue;
		FUZZ_CHECK(isfinite(p->v[f]), "field %d is %g", f, p->v[f]);
		if (f != PF_START_TIME)
			FUZZ_CHECK(p->v[f] >= 0, "field %d is negative: %g", f, p->v[f]);
	}
	if (proc_has(p, PF_START_TIME))
		FUZZ_CHECK(p->v[PF_START_TIME] <= FIXED_TIME, "started %g, after now",
		           p->v[PF_START_TIME]);
	if (proc_has(p, PF_UID))
		FUZZ_CHECK(p->v[PF_UID] <= 4294967295.0 && p->v[PF_UID] == floor(p->v[PF_UID]),
		           "uid %g", p->v[PF_UID]);
	check_str("user", p->user);
	check_str("name", p->name);
	check_str("cmdline", p->cmdline);
	check_str("cgroup", p->cgroup);
	check_str("pod", p->pod);
	check_str("container", p->container);
	if (p->user)
		FUZZ_CHECK(p->user[0], "empty user name");
	if (p->cmdline && p->cmdline != before->cmdline)
		FUZZ_CHECK(p->cmdline[0], "empty command line");
	if (p->container) {
		bool known = false;

		FUZZ_CHECK(p->container[0] && strlen(p->container) <= 12, "container id '%s'",
		           p->container);
		FUZZ_CHECK(p->container_runtime, "container '%s' without a runtime", p->container);
		for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
			known |= !strcmp(p->container_runtime, runtimes[i]);
		FUZZ_CHECK(known, "unknown runtime '%s'", p->container_runtime);
	}
	if (p->pod)
		FUZZ_CHECK(p->pod[0] && strlen(p->pod) < 64, "pod uid '%s'", p->pod);
}

static void
one_fill(struct procinfo_ctx *ctx, struct gpu_proc *p, const struct scene *sc)
{
	struct gpu_proc before = *p;
	struct err err = ERR_INIT;
	int rc;

	rc = procinfo_fill(ctx, p, &err);
	check_proc(p, &before, rc, sc);
	if (rc)
		FUZZ_CHECK(err.code == rc && err.msg[0], "error %d without its message", rc);
	/* strings replaced by the fill were freed by it; ASan tells if one was freed twice */
}

/* procinfo_enrich() on PID (GPU 0), GONE_PID (GPU 1) and PID again (GPU 2). */
static void
enrich(struct procinfo_ctx *ctx, const struct scene *sc, unsigned flags)
{
	static const uint32_t pids[3] = { PID, GONE_PID, PID };
	struct scene none = { sc->root, { false }, false };
	int r = sc->root;
	struct gpu_proc before[3];
	struct gpu_snapshot s;
	int pass;

	gpu_snapshot_init(&s);
	for (unsigned i = 0; i < 3; i++) {
		struct gpu_proc *p = gpu_snapshot_add_proc(&s);

		p->dev = i;
		p->pid = pids[i];
		p->type = PROC_COMPUTE;
		if (flags & 4)
			prefill(p);
	}
	for (pass = 0; pass < (flags & 8 ? 2 : 1); pass++) {
		size_t nr_pid = 0, nr_gone = 0;

		if (pass)
			set_uptime(r, later_uptime, sizeof(later_uptime) - 1);
		for (size_t i = 0; i < s.nr_proc; i++)
			before[s.proc[i].dev] = s.proc[i];
		procinfo_enrich(ctx, &s);
		for (size_t i = 0; i < s.nr_proc; i++) {
			const struct gpu_proc *p = &s.proc[i];

			FUZZ_CHECK(p->dev < 3 && (i == 0 || p->dev > s.proc[i - 1].dev),
			           "enrich reordered the processes");
			check_proc(p, &before[p->dev], 0, p->pid == PID ? sc : &none);
			nr_pid += p->pid == PID;
			nr_gone += p->pid == GONE_PID;
		}
		/* in a plain root a missing pid is gone; nested or hidepid, it is not visible */
		FUZZ_CHECK(nr_gone == (r != 0), "pid %d kept %zu times in root %d", GONE_PID,
		           nr_gone, r);
		FUZZ_CHECK(nr_pid == 0 || nr_pid == 2, "pid %d kept %zu times of 2", PID, nr_pid);
		if (nr_pid == 2) {
			const struct gpu_proc *a = &s.proc[0], *b = &s.proc[s.nr_proc - 1];

			FUZZ_CHECK(proc_has(a, PF_CPU_PERCENT) == proc_has(b, PF_CPU_PERCENT) &&
			                   a->v[PF_CPU_PERCENT] == b->v[PF_CPU_PERCENT] &&
			                   a->host == b->host,
			           "one process on two GPUs: CPU %% %g and %g, host %d and %d",
			           a->v[PF_CPU_PERCENT], b->v[PF_CPU_PERCENT], (int)a->host,
			           (int)b->host);
		}
	}
	gpu_snapshot_release(&s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *part[NR_PARTS] = { NULL };
	size_t len[NR_PARTS] = { 0 };
	struct scene sc = { 0, { false }, false };
	bool *present = sc.present;
	struct gs_config cfg;
	struct procinfo_ctx *ctx;
	struct gpu_proc p;
	char dir[4096 + 32];
	unsigned flags;
	int r, fd0;

	if (!size)
		return 0;
	fd0 = fuzz_lowest_free_fd();
	flags = data[0];
	r = (int)(flags & 3);
	sc.root = r;
	/* split the rest at SEP; a part that is not there is a missing file */
	if (size > 1)
		fuzz_split((const char *)data + 1, size - 1, SEP, part, len, present, NR_PARTS);
	snprintf(dir, sizeof(dir), "%s/%d", root[r], PID);
	for (int i = 0; i < P_NS; i++) {
		if (present[i])
			write_file(dir, file_name[i], part[i], len[i]);
		else
			remove_file(dir, file_name[i]);
	}
	if (present[P_NS])
		set_ns(r, part[P_NS], len[P_NS]);
	else
		set_ns(r, SELF_NS, sizeof(SELF_NS) - 1);
	sc.own_ns = (r == 0 || r == 3) && ns_now[r] && !strcmp(ns_now[r], SELF_NS);
	if (present[P_UPTIME])
		set_uptime(r, part[P_UPTIME], len[P_UPTIME]);
	else
		set_uptime(r, default_uptime, sizeof(default_uptime) - 1);

	gs_config_init(&cfg);
	cfg.proc_root = root[r];
	cfg.passwd_file = flags & 16 ? missing_path : passwd_path;
	cfg.fixed_time = FIXED_TIME;
	ctx = procinfo_new(&cfg);
	if (flags & 32) {
		enrich(ctx, &sc, flags);
	} else {
		memset(&p, 0, sizeof(p));
		p.pid = PID;
		p.dev = 1;
		p.type = PROC_COMPUTE;
		if (flags & 4)
			prefill(&p);
		one_fill(ctx, &p, &sc);
		if (flags & 8) {
			/* 100 s later: CPU % over the interval */
			set_uptime(r, later_uptime, sizeof(later_uptime) - 1);
			one_fill(ctx, &p, &sc);
		}
		gpu_proc_release(&p);
	}
	procinfo_free(ctx);
	FUZZ_CHECK(fuzz_lowest_free_fd() == fd0,
	           "a file descriptor leaked (lowest free %d, was %d)", fuzz_lowest_free_fd(), fd0);
	return 0;
}
