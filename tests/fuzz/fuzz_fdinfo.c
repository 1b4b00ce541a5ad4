/*
 * libFuzzer target: the DRM fdinfo scanner (fdinfo_sample()) on a
 * temporary /proc and /sys whose fdinfo texts and debugfs clients list
 * are the input.
 *
 * Input: one flags byte, then the fdinfo text of the first sample, the
 * fdinfo text of the second (read by the same scanner 1 s later, so that
 * engine use becomes a rate) and the text of debugfs dri/0/clients,
 * separated by 0x1E bytes (ASCII record separator). A missing fdinfo part
 * removes the fdinfo file (the process closed its fd); a missing clients
 * part means no clients file (not root, or debugfs not mounted: /proc is
 * walked whole). Process PID holds fd 3 on the DRM node; its fdinfo is
 * the text. Flags:
 *   bit 0  process PID2 holds the same file (inherited over fork) as fd 5:
 *          the same text, one client for the two of them
 *   bit 1  PID holds it twice (a dup'd fd 4): the same text again
 *   bit 2  the node is the card node /dev/dri/card0 (minor 0), not
 *          renderD128 (minor 128)
 *   bit 3  the fd index is rebuilt at every sample (reindex 0), not kept
 *   bit 4  PID is a new process at the second sample (its stat start time
 *          changes): the same pid reused
 *   bit 5  no sysfs: the minor's device is unknown, and the clients list
 *          is not used
 *   bits 6-7  ignored: the seeds start with '@' + flags, which reads well
 *
 * The sysfs tree links card0 and renderD128 to one PCI device (driver
 * amdgpu), as a real one does. The trees are made once per process under
 * /dev/shm (or $TMPDIR, or /tmp) and removed at exit, or by the next run
 * when this one crashed. Checked, after each sample: fdinfo_sample()
 * returns 0; no crash, leak or file descriptor left open; at most one
 * entry per process, sorted, with only the pids that hold the file, none
 * when the fdinfo file is gone; each entry's start time as its stat said
 * when the index was built, its minor that of the node, nothing denied;
 * driver, pdev and engine names NUL-terminated, printable ASCII without
 * blanks, engine names non-empty and distinct; every engine percent NaN
 * or in [0, 100], and NaN while the client has no previous sample unless
 * the text gives percents (amdgpu before 5.19); memory figures finite,
 * >= 0, and 0 when not set; a file shared by two processes gives both the
 * same figures (the dup'd one counting twice where the driver prints no
 * client id); the clients list is not used when there is none.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/fdinfo.h"
#include "core/config.h"
#include "core/err.h"
#include "core/gpu.h"
#include "fuzz.h"

#define PID    4242
#define PID2   4243 /* a child that inherited PID's DRM file */
#define TID    4250 /* a thread of PID: status only, for the "pid" clients column */
#define SEP    0x1E
#define START1 100000ull
#define START2 200000ull /* PID's start time once it is a new process */
#define START3 100007ull /* PID2's */
#define NOW    100.0

int LLVMFuzzerInitialize(int *argc, char ***argv);

enum part { P_FDINFO1, P_FDINFO2, P_CLIENTS, NR_PARTS };

static char base[4096];
static char proc[4200], sys[4200], nosys[4200], clients_path[4300];

static void
write_file(const char *dir, const char *name, const void *data, size_t len)
{
	char path[8192];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fuzz_write_file(path, data, len);
}

static void
remove_path(const char *path)
{
	if (unlink(path) < 0 && errno != ENOENT)
		fuzz_die_errno("cannot remove", path);
}

static void
make_dir(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		fuzz_die_errno("cannot create", path);
}

/* dir/name -> target, replacing what is there; no link for a NULL target */
static void
set_link(const char *dir, const char *name, const char *target)
{
	char path[8192];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	remove_path(path);
	if (target && symlink(target, path) < 0)
		fuzz_die_errno("cannot create", path);
}

/* mkdir -p of base/rel */
static void
make_dirs(const char *rel)
{
	char path[8192];

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	for (char *p = path + strlen(base) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		make_dir(path);
		*p = '/';
	}
	make_dir(path);
}

static void
write_stat(uint32_t pid, unsigned long long start)
{
	char dir[4300], text[512];
	int n;

	snprintf(dir, sizeof(dir), "%s/%u", proc, pid);
	n = snprintf(text, sizeof(text),
	             "%u (gl (worker) 1) S 1 %u %u 0 -1 4194560 120 0 0 0 250 50 0 0 20 0 4 0 "
	             "%llu 104857600 2560 0 0 0\n",
	             pid, pid, pid, start);
	write_file(dir, "stat", text, (size_t)n);
}

/* /proc: PID and PID2 with fd/ and fdinfo/, TID with a status only */
static void
make_proc(void)
{
	static const char status[] = "Name:\tgl\nUmask:\t0022\nState:\tS (sleeping)\n"
	                             "Tgid:\t4242\nNgid:\t0\nPid:\t4242\nPPid:\t1\n";
	static const char tstatus[] = "Name:\tworker\nUmask:\t0022\nState:\tS (sleeping)\n"
	                              "Tgid:\t4242\nNgid:\t0\nPid:\t4250\nPPid:\t1\n";
	const uint32_t pids[] = { PID, PID2 };
	char dir[4300], sub[4400];

	snprintf(proc, sizeof(proc), "%s/proc", base);
	make_dir(proc);
	for (int i = 0; i < 2; i++) {
		snprintf(dir, sizeof(dir), "%s/%u", proc, pids[i]);
		make_dir(dir);
		snprintf(sub, sizeof(sub), "%s/fdinfo", dir);
		make_dir(sub);
		snprintf(sub, sizeof(sub), "%s/fd", dir);
		make_dir(sub);
		/* links that are no DRM node, as in any process */
		set_link(sub, "0", "/dev/null");
		set_link(sub, "1", "pipe:[4711]");
		set_link(sub, "2", "/dev/dri-fake/renderD128");
		write_stat(pids[i], i ? START3 : START1);
	}
	snprintf(dir, sizeof(dir), "%s/%u", proc, PID);
	write_file(dir, "status", status, sizeof(status) - 1);
	snprintf(dir, sizeof(dir), "%s/%u", proc, TID);
	make_dir(dir);
	write_file(dir, "status", tstatus, sizeof(tstatus) - 1);
}

/* /sys: card0 and renderD128 of one amdgpu device, by class/drm and dev/char */
static void
make_sys(void)
{
	char path[4400];

	snprintf(sys, sizeof(sys), "%s/sys", base);
	snprintf(nosys, sizeof(nosys), "%s/no-sys", base);
	make_dirs("sys/devices/pci0000:00/0000:00:01.0/0000:03:00.0/drm/card0");
	make_dirs("sys/devices/pci0000:00/0000:00:01.0/0000:03:00.0/drm/renderD128");
	make_dirs("sys/class/drm");
	make_dirs("sys/dev/char");
	make_dirs("sys/kernel/debug/dri/0");
	snprintf(path, sizeof(path), "%s/devices/pci0000:00/0000:00:01.0/0000:03:00.0", sys);
	set_link(path, "driver", "../../../../bus/pci/drivers/amdgpu");
	snprintf(path, sizeof(path), "%s/devices/pci0000:00/0000:00:01.0/0000:03:00.0/drm/card0",
	         sys);
	set_link(path, "device", "../../../0000:03:00.0");
	snprintf(path, sizeof(path),
	         "%s/devices/pci0000:00/0000:00:01.0/0000:03:00.0/drm/renderD128", sys);
	set_link(path, "device", "../../../0000:03:00.0");
	snprintf(path, sizeof(path), "%s/class/drm", sys);
	set_link(path, "card0", "../../devices/pci0000:00/0000:00:01.0/0000:03:00.0/drm/card0");
	set_link(path, "renderD128",
	         "../../devices/pci0000:00/0000:00:01.0/0000:03:00.0/drm/renderD128");
	set_link(path, "card0-DP-1",
	         "../../devices/pci0000:00/0000:00:01.0/0000:03:00.0/drm/card0/card0-DP-1");
	write_file(path, "version", "drm 1.1.0 20060810\n", 19);
	snprintf(path, sizeof(path), "%s/dev/char", sys);
	set_link(path, "226:0", "../../devices/pci0000:00/0000:00:01.0/0000:03:00.0/drm/card0");
	set_link(path, "226:128",
	         "../../devices/pci0000:00/0000:00:01.0/0000:03:00.0/drm/renderD128");
	snprintf(clients_path, sizeof(clients_path), "%s/kernel/debug/dri/0/clients", sys);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(base, sizeof(base), "%s", fuzz_scratch("fdinfo"));
	make_proc();
	make_sys();
	return 0;
}

/* What one input set up. */
struct scene {
	bool present[NR_PARTS];
	const char *part[NR_PARTS];
	size_t len[NR_PARTS];
	bool shared, dup;
	int minor;
};

/* What one sample may give. */
struct expect {
	bool text;       /* the fdinfo files hold a text (else they are gone) */
	bool no_history; /* no client can have a previous sample */
	bool pid_new;    /* PID's client cannot have one: PID is a new process */
	bool pct_text;   /* the text holds a '%': a percent taken as it is */
	uint64_t start;  /* PID's start time in the index */
};

/* Write (or remove) the fdinfo files of every fd that holds the node. */
static void
set_fdinfo(const struct scene *sc, enum part i)
{
	char path[4400];

	snprintf(path, sizeof(path), "%s/%u/fdinfo/3", proc, PID);
	if (sc->present[i])
		fuzz_write_file(path, sc->part[i], sc->len[i]);
	else
		remove_path(path);
	snprintf(path, sizeof(path), "%s/%u/fdinfo/4", proc, PID);
	if (sc->present[i] && sc->dup)
		fuzz_write_file(path, sc->part[i], sc->len[i]);
	else
		remove_path(path);
	snprintf(path, sizeof(path), "%s/%u/fdinfo/5", proc, PID2);
	if (sc->present[i] && sc->shared)
		fuzz_write_file(path, sc->part[i], sc->len[i]);
	else
		remove_path(path);
}

/* A name from the text: NUL-terminated in its buffer, printable ASCII without blanks. */
static void
check_name(const char *what, const char *s, size_t size, uint32_t pid, bool may_be_empty)
{
	size_t n = strnlen(s, size);

	FUZZ_CHECK(n < size, "pid %u: %s not NUL-terminated", pid, what);
	FUZZ_CHECK(n || may_be_empty, "pid %u: empty %s", pid, what);
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK((unsigned char)s[i] > ' ' && (unsigned char)s[i] < 0x7f,
		           "pid %u: %s '%s' holds byte %#x", pid, what, s,
		           (unsigned)(unsigned char)s[i]);
}

static void
check_sample(const struct fdinfo_scan *s, const struct scene *sc, const struct expect *e,
             int sample)
{
	const struct fdinfo_proc *procs, *mine = NULL, *child = NULL;
	size_t nr;

	procs = fdinfo_procs(s, &nr);
	FUZZ_CHECK(nr <= (size_t)(sc->shared ? 2 : 1), "sample %d: %zu processes", sample, nr);
	if (!e->text)
		FUZZ_CHECK(nr == 0, "sample %d: %zu processes, but no fdinfo file is left", sample,
		           nr);
	FUZZ_CHECK(!fdinfo_some_denied(s) && fdinfo_nr_denied(s) == 0,
	           "sample %d: %zu denied, with every file readable", sample, fdinfo_nr_denied(s));
	if (!sc->present[P_CLIENTS])
		FUZZ_CHECK(!fdinfo_listed(s), "sample %d: listed without a clients file", sample);
	for (size_t i = 0; i < nr; i++) {
		const struct fdinfo_proc *p = &procs[i];

		FUZZ_CHECK(p->pid == PID || (sc->shared && p->pid == PID2),
		           "sample %d: pid %u holds no DRM file", sample, p->pid);
		FUZZ_CHECK(i == 0 || p->pid > procs[i - 1].pid,
		           "sample %d: pid %u after pid %u (one device: one entry per process)",
		           sample, p->pid, procs[i - 1].pid);
		if (p->pid == PID) {
			mine = p;
			FUZZ_CHECK(p->start_ticks == e->start,
			           "sample %d: start time %" PRIu64 ", not %" PRIu64, sample,
			           p->start_ticks, e->start);
		} else {
			child = p;
			FUZZ_CHECK(p->start_ticks == START3, "sample %d: start time %" PRIu64,
			           sample, p->start_ticks);
		}
		FUZZ_CHECK(p->minor == sc->minor, "sample %d: pid %u has minor %d, not %d", sample,
		           p->pid, p->minor, sc->minor);
		FUZZ_CHECK(!p->denied, "sample %d: pid %u denied", sample, p->pid);
		check_name("driver", p->driver, sizeof(p->driver), p->pid, true);
		check_name("pdev", p->pdev, sizeof(p->pdev), p->pid, true);
		FUZZ_CHECK(p->nr_engine <= GPU_MAX_ENGINES, "sample %d: %u engines", sample,
		           p->nr_engine);
		for (unsigned k = 0; k < p->nr_engine; k++) {
			const struct engine_use *u = &p->engine[k];

			check_name("engine name", u->name, sizeof(u->name), p->pid, false);
			for (unsigned j = 0; j < k; j++)
				FUZZ_CHECK(strcmp(p->engine[j].name, u->name),
				           "sample %d: engine '%s' listed twice", sample, u->name);
			FUZZ_CHECK(isnan(u->percent) || (u->percent >= 0 && u->percent <= 100),
			           "sample %d: engine '%s' at %g %%", sample, u->name, u->percent);
			if ((e->no_history || (p->pid == PID && e->pid_new)) && !e->pct_text)
				FUZZ_CHECK(
				        isnan(u->percent),
				        "sample %d: engine '%s' at %g %% without a previous sample",
				        sample, u->name, u->percent);
		}
		FUZZ_CHECK(isfinite(p->mem_local) && p->mem_local >= 0 && isfinite(p->mem_system) &&
		                   p->mem_system >= 0,
		           "sample %d: memory %g local, %g system", sample, p->mem_local,
		           p->mem_system);
		FUZZ_CHECK((p->has_local || p->mem_local == 0) &&
		                   (p->has_system || p->mem_system == 0),
		           "sample %d: memory %g local, %g system, not set", sample, p->mem_local,
		           p->mem_system);
	}
	/*
	 * Both listed: the file has no client id (keyed by pid and fd), or no
	 * stats at all. Either way the same text gives the same figures, the
	 * dup'd fd of PID a second client of its own.
	 */
	if (mine && child) {
		double k = sc->dup ? 2 : 1;

		FUZZ_CHECK(!strcmp(mine->driver, child->driver) && !strcmp(mine->pdev, child->pdev),
		           "sample %d: one text, drivers '%s' and '%s', pdevs '%s' and '%s'",
		           sample, mine->driver, child->driver, mine->pdev, child->pdev);
		FUZZ_CHECK(mine->has_local == child->has_local &&
		                   mine->has_system == child->has_system &&
		                   mine->mem_local == k * child->mem_local &&
		                   mine->mem_system == k * child->mem_system,
		           "sample %d: one text, memory %g/%g local and %g/%g system", sample,
		           mine->mem_local, child->mem_local, mine->mem_system, child->mem_system);
		FUZZ_CHECK(mine->nr_engine == child->nr_engine,
		           "sample %d: one text, %u and %u engines", sample, mine->nr_engine,
		           child->nr_engine);
	}
}

static bool
has_byte(const struct scene *sc, enum part i, char c)
{
	return sc->present[i] && memchr(sc->part[i], c, sc->len[i]) != NULL;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct scene sc;
	struct expect e;
	const char *node;
	struct gs_config cfg;
	struct fdinfo_scan *s;
	struct err err = ERR_INIT;
	char dir[4400];
	unsigned flags;
	bool rebuild, restart;
	int fd0, rc;

	if (!size)
		return 0;
	memset(&sc, 0, sizeof(sc));
	fd0 = fuzz_lowest_free_fd();
	flags = data[0];
	sc.shared = flags & 1;
	sc.dup = flags & 2;
	sc.minor = flags & 4 ? 0 : 128;
	node = flags & 4 ? "/dev/dri/card0" : "/dev/dri/renderD128";
	rebuild = flags & 8;
	restart = flags & 16;
	/* split the rest at SEP; a part that is not there is a missing file */
	if (size > 1) {
		const char *p = (const char *)data + 1, *end = (const char *)data + size;

		for (int i = 0; i < NR_PARTS && p <= end; i++) {
			const char *sep = memchr(p, SEP, (size_t)(end - p));

			sc.part[i] = p;
			sc.len[i] = sep ? (size_t)(sep - p) : (size_t)(end - p);
			sc.present[i] = true;
			if (!sep)
				break;
			p = sep + 1;
		}
	}

	snprintf(dir, sizeof(dir), "%s/%u/fd", proc, PID);
	set_link(dir, "3", node);
	set_link(dir, "4", sc.dup ? node : NULL);
	snprintf(dir, sizeof(dir), "%s/%u/fd", proc, PID2);
	set_link(dir, "5", sc.shared ? node : NULL);
	write_stat(PID, START1);
	set_fdinfo(&sc, P_FDINFO1);
	if (sc.present[P_CLIENTS])
		fuzz_write_file(clients_path, sc.part[P_CLIENTS], sc.len[P_CLIENTS]);
	else
		remove_path(clients_path);

	gs_config_init(&cfg);
	cfg.proc_root = proc;
	cfg.sysfs_root = flags & 32 ? nosys : sys;
	cfg.reindex = rebuild ? 0 : 60;
	s = fdinfo_new(&cfg);

	rc = fdinfo_sample(s, NOW, &err);
	FUZZ_CHECK(rc == 0, "first sample: %d (%s)", rc, err.msg);
	e.text = sc.present[P_FDINFO1];
	e.no_history = true;
	e.pid_new = false;
	e.pct_text = has_byte(&sc, P_FDINFO1, '%');
	e.start = START1;
	check_sample(s, &sc, &e, 1);

	/* 1 s later: the counters of the second text, maybe a new process of the same pid */
	set_fdinfo(&sc, P_FDINFO2);
	if (restart)
		write_stat(PID, START2);
	rc = fdinfo_sample(s, NOW + 1, &err);
	FUZZ_CHECK(rc == 0, "second sample: %d (%s)", rc, err.msg);
	e.text = sc.present[P_FDINFO1] && sc.present[P_FDINFO2];
	e.no_history = false;
	e.pid_new = restart && rebuild;
	e.pct_text = has_byte(&sc, P_FDINFO2, '%');
	e.start = restart && rebuild ? START2 : START1;
	if (!sc.present[P_FDINFO1] && rebuild) {
		/* the first sample dropped the fd; the rebuilt index finds it again */
		e.text = sc.present[P_FDINFO2];
		e.no_history = true;
	}
	check_sample(s, &sc, &e, 2);

	fdinfo_free(s);
	FUZZ_CHECK(fuzz_lowest_free_fd() == fd0,
	           "a file descriptor leaked (lowest free %d, was %d)", fuzz_lowest_free_fd(), fd0);
	return 0;
}
