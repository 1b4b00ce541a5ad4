/*
 * libFuzzer target: procinfo_fill() on one process whose /proc files are
 * the input.
 *
 * Input: one flags byte, then the status, stat, cmdline, cgroup and
 * (optionally) uptime files, separated by 0x1E bytes (ASCII record
 * separator). A file with no part is absent; with fewer than five parts
 * the root's own uptime is used. Flags:
 *   bits 0-1  the proc root: 0 plain; 1 nested pid namespace, the pid holds
 *             /dev/nvidia0; 2 nested, it holds no GPU file; 3 hidepid=2
 *   bit 2     p already holds strings and values (a process seen before)
 *   bit 3     sample it again, 100 s later, on the same context (CPU %)
 *   bit 4     the passwd file is missing (uids shown as numbers)
 *
 * The roots are made once per process under /dev/shm (or $TMPDIR, or
 * /tmp) and removed at exit. Checked: no crash, leak or file descriptor
 * left open; the return value and p->host agree with which files exist;
 * every field set is finite, the non-negative ones non-negative; every
 * string is NUL-terminated and plausible (container ids of at most 12
 * characters with a known runtime); a process not visible is untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
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
#define SEP        0x1E
#define NR_ROOTS   4
#define FIXED_TIME 1800000000.0

int LLVMFuzzerInitialize(int *argc, char ***argv);

enum part { P_STATUS, P_STAT, P_CMDLINE, P_CGROUP, P_UPTIME, NR_PARTS };

static const char *const part_name[NR_PARTS] = { "status", "stat", "cmdline", "cgroup", "uptime" };

static const char default_uptime[] = "350000.50 5312345.67\n";
static const char later_uptime[] = "350100.50 5312945.67\n";

static const char passwd[] = "root:x:0:0:root:/root:/bin/bash\n"
                             "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
                             "+@admins:x:::::\n"
                             "alice:x:1000:1000:Alice,,,:/home/alice:/bin/bash\n"
                             "bob:x:1002:1002::/home/bob:/bin/sh\n";

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

static void
die_errno(const char *what, const char *path)
{
	fprintf(stderr, "fuzz_procfiles: %s '%s': %s\n", what, path, strerror(errno));
	abort();
}

static void
write_file(const char *dir, const char *name, const void *data, size_t len)
{
	char path[4096 + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die_errno("cannot create", path);
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0)
			die_errno("cannot write", path);
		data = (const char *)data + n;
		len -= (size_t)n;
	}
	close(fd);
}

static void
remove_file(const char *dir, const char *name)
{
	char path[4096 + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (unlink(path) < 0 && errno != ENOENT)
		die_errno("cannot remove", path);
}

static void
make_dir(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		die_errno("cannot create", path);
}

static int
rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

static void
cleanup(void)
{
	if (base[0])
		nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
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
	write_file(root[i], "uptime", default_uptime, sizeof(default_uptime) - 1);
	snprintf(path, sizeof(path), "%s/%d", root[i], PID);
	make_dir(path);
	if (i == 1 || i == 2) {
		char fd[4096 + 128];

		snprintf(fd, sizeof(fd), "%s/fd", path);
		make_dir(fd);
		snprintf(path, sizeof(path), "%s/0", fd);
		if (symlink("/dev/null", path) < 0)
			die_errno("cannot create", path);
		if (i == 1) {
			snprintf(path, sizeof(path), "%s/5", fd);
			if (symlink("/dev/nvidia0", path) < 0)
				die_errno("cannot create", path);
		}
	}
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	if (access("/dev/shm", W_OK) == 0)
		tmp = "/dev/shm";
	else if (!tmp || !*tmp)
		tmp = "/tmp";
	snprintf(base, sizeof(base), "%s/gpuscope-fuzz-procfiles.XXXXXX", tmp);
	if (!mkdtemp(base))
		die_errno("cannot create", base);
	atexit(cleanup);
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

/* The lowest free file descriptor: it grows when one leaks. */
static int
lowest_free_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die_errno("cannot open", "/dev/null");
	close(fd);
	return fd;
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
check_proc(const struct gpu_proc *p, const struct gpu_proc *before, int rc, const bool *present,
           int r)
{
	FUZZ_CHECK(rc == 0 || rc == E_NOTFOUND, "procinfo_fill returned %d", rc);
	FUZZ_CHECK(p->pid == PID && p->dev == before->dev && p->type == before->type,
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
		FUZZ_CHECK(present[P_STATUS] && present[P_STAT] && present[P_CMDLINE],
		           "complete without status, stat or cmdline");
	}
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
one_fill(struct procinfo_ctx *ctx, struct gpu_proc *p, const bool *present, int r)
{
	struct gpu_proc before = *p;
	struct err err = ERR_INIT;
	int rc;

	rc = procinfo_fill(ctx, p, &err);
	check_proc(p, &before, rc, present, r);
	if (rc)
		FUZZ_CHECK(err.code == rc && err.msg[0], "error %d without its message", rc);
	/* strings replaced by the fill were freed by it; ASan tells if one was freed twice */
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *part[NR_PARTS] = { NULL };
	size_t len[NR_PARTS] = { 0 };
	bool present[NR_PARTS] = { false };
	struct gs_config cfg;
	struct procinfo_ctx *ctx;
	struct gpu_proc p;
	char dir[4096 + 32];
	unsigned flags;
	int r, fd0;

	if (!size)
		return 0;
	fd0 = lowest_free_fd();
	flags = data[0];
	r = (int)(flags & 3);
	/* split the rest at SEP; a part that is not there is a missing file */
	if (size > 1) {
		const char *s = (const char *)data + 1, *end = (const char *)data + size;

		for (int i = 0; i < NR_PARTS && s <= end; i++) {
			const char *sep = memchr(s, SEP, (size_t)(end - s));

			part[i] = s;
			len[i] = sep ? (size_t)(sep - s) : (size_t)(end - s);
			present[i] = true;
			if (!sep)
				break;
			s = sep + 1;
		}
	}
	snprintf(dir, sizeof(dir), "%s/%d", root[r], PID);
	for (int i = 0; i < P_UPTIME; i++) {
		if (present[i])
			write_file(dir, part_name[i], part[i], len[i]);
		else
			remove_file(dir, part_name[i]);
	}
	if (present[P_UPTIME])
		set_uptime(r, part[P_UPTIME], len[P_UPTIME]);
	else
		set_uptime(r, default_uptime, sizeof(default_uptime) - 1);

	gs_config_init(&cfg);
	cfg.proc_root = root[r];
	cfg.passwd_file = flags & 16 ? missing_path : passwd_path;
	cfg.fixed_time = FIXED_TIME;
	ctx = procinfo_new(&cfg);
	memset(&p, 0, sizeof(p));
	p.pid = PID;
	p.dev = 1;
	p.type = PROC_COMPUTE;
	if (flags & 4)
		prefill(&p);

	one_fill(ctx, &p, present, r);
	if (flags & 8) {
		/* 100 s later: CPU % over the interval */
		set_uptime(r, later_uptime, sizeof(later_uptime) - 1);
		one_fill(ctx, &p, present, r);
	}
	gpu_proc_release(&p);
	procinfo_free(ctx);
	FUZZ_CHECK(lowest_free_fd() == fd0, "a file descriptor leaked (lowest free %d, was %d)",
	           lowest_free_fd(), fd0);
	return 0;
}
