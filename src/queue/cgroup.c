/*
 * cgroup v2, /proc and atomic-file helpers of the queue's executor and its
 * supervisor (cgroup.h). Everything here is also called by the supervisor,
 * a small process of its own, so nothing keeps state between calls.
 */
#include "queue/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/err.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

/* The most processes one job's tree is read as (a fork bomb is killed through cgroup.kill). */
#define TREE_MAX_PIDS 65536

double
now_epoch(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

ssize_t
file_read_small(const char *path, char *buf, size_t size)
{
	size_t got = 0;
	int fd;

	if (size == 0)
		return -EINVAL;
	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	while (got < size - 1) {
		ssize_t n = read(fd, buf + got, size - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			close(fd);
			return -e;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return (ssize_t)got;
}

int
file_write_atomic(const char *dir, const char *name, const void *data, size_t len, mode_t mode,
                  bool durable, struct err *err)
{
	char tmp[4200], dst[4200];
	const char *p = data;
	int fd, dfd, rc = 0;

	snprintf(tmp, sizeof(tmp), "%s/%s.tmp", dir, name);
	snprintf(dst, sizeof(dst), "%s/%s", dir, name);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return err_set(err, errno_status(errno), "cannot create '%s': %s", tmp,
		               strerror(errno));
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = err_set(err, E_IO, "cannot write '%s': %s", tmp, strerror(errno));
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	if (!rc && durable && fsync(fd) < 0)
		rc = err_set(err, E_IO, "cannot write '%s': %s", tmp, strerror(errno));
	close(fd);
	if (!rc && rename(tmp, dst) < 0)
		rc = err_set(err, E_IO, "cannot rename '%s' to '%s': %s", tmp, dst,
		             strerror(errno));
	if (rc) {
		unlink(tmp);
		return rc;
	}
	if (!durable)
		return 0;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

/* Undo mountinfo's octal escapes (\040 for a blank) in place. */
static void
unescape_octal(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

int
cg_mount(char *buf, size_t len, struct err *err)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int rc = E_NOTFOUND;

	buf[0] = '\0';
	if (!f)
		return err_set(err, errno_status(errno), "cannot read '/proc/self/mountinfo': %s",
		               strerror(errno));
	while (getline(&line, &cap, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS */
		char *save = NULL, *tok, *mnt = NULL;
		int field = 0;
		bool dash = false;

		for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
			field++;
			if (field == 5)
				mnt = tok;
			else if (field > 6 && !dash && !strcmp(tok, "-"))
				dash = true;
			else if (dash)
				break;
		}
		if (mnt && dash && tok && !strcmp(tok, "cgroup2")) {
			unescape_octal(mnt);
			str_copy(buf, len, mnt);
			rc = 0;
			break;
		}
	}
	free(line);
	fclose(f);
	if (rc)
		return err_set(err, rc, "no cgroup v2 hierarchy is mounted (/proc/self/mountinfo)");
	return 0;
}

int
cg_self(char *buf, size_t len, struct err *err)
{
	char text[8192], *line, *save = NULL;
	ssize_t n = file_read_small("/proc/self/cgroup", text, sizeof(text));

	buf[0] = '\0';
	if (n < 0)
		return err_set(err, errno_status((int)-n), "cannot read '/proc/self/cgroup': %s",
		               strerror((int)-n));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "0::", 3)) {
			str_copy(buf, len, line + 3);
			return 0;
		}
	}
	return err_set(err, E_NOTFOUND,
	               "this process is in no cgroup v2 (no '0::' line in /proc/self/cgroup)");
}

int
cg_write(const char *cg, const char *file, const char *val, struct err *err)
{
	char path[1200];
	size_t len = strlen(val);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return err_set(err, errno_status(errno), "cannot open '%s': %s", path,
		               strerror(errno));
	do
		n = write(fd, val, len);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		int e = errno;

		close(fd);
		return err_set(err, errno_status(e), "cannot write '%s' to '%s': %s", val, path,
		               strerror(e));
	}
	close(fd);
	return 0;
}

int
cg_enter(const char *cg, pid_t pid, struct err *err)
{
	char v[32];

	snprintf(v, sizeof(v), "%ld", (long)pid);
	return cg_write(cg, "cgroup.procs", v, err);
}

/* The value of key in cg/cgroup.events, or -1. */
static int
cg_event(const char *cg, const char *key)
{
	char path[1200], text[512], *line, *save = NULL;
	size_t klen = strlen(key);

	snprintf(path, sizeof(path), "%s/cgroup.events", cg);
	if (file_read_small(path, text, sizeof(text)) < 0)
		return -1;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			return (int)strtol(line + klen + 1, NULL, 10);
	return -1;
}

bool
cg_populated(const char *cg)
{
	return cg_event(cg, "populated") == 1;
}

bool
cg_frozen(const char *cg)
{
	return cg_event(cg, "frozen") == 1;
}

int
proc_stat(pid_t pid, pid_t *sid, uint64_t *start)
{
	char path[64], text[2048], *p, *save = NULL, *tok;
	int field = 2;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (file_read_small(path, text, sizeof(text)) <= 0)
		return E_NOTFOUND;
	/* the command name may hold blanks and parentheses: the fields go on after the last ')' */
	p = strrchr(text, ')');
	if (!p)
		return E_PARSE;
	for (tok = strtok_r(p + 1, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		field++;
		if (field == 6 && sid)
			*sid = (pid_t)strtol(tok, NULL, 10);
		if (field == 22) {
			if (start)
				*start = strtoull(tok, NULL, 10);
			return 0;
		}
	}
	return E_PARSE;
}

static int
cg_pids(const char *cg, pid_t **pids, size_t *nr, struct err *err)
{
	char path[1200];
	FILE *f;
	size_t alloc = 0;
	long v;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT)
			return 0; /* no cgroup (yet, or any more): no process */
		return err_set(err, errno_status(errno), "cannot read '%s': %s", path,
		               strerror(errno));
	}
	while (*nr < TREE_MAX_PIDS && fscanf(f, "%ld", &v) == 1) {
		ALLOC_GROW(*pids, *nr + 1, alloc);
		(*pids)[(*nr)++] = (pid_t)v;
	}
	fclose(f);
	return 0;
}

static int
sid_pids(pid_t sid, pid_t **pids, size_t *nr, struct err *err)
{
	DIR *d;
	struct dirent *de;
	size_t alloc = 0;

	if (sid <= 1)
		return 0;
	d = opendir("/proc");
	if (!d)
		return err_set(err, errno_status(errno), "cannot read '/proc': %s",
		               strerror(errno));
	while ((de = readdir(d)) && *nr < TREE_MAX_PIDS) {
		char *end;
		long v = strtol(de->d_name, &end, 10);
		pid_t s = 0;

		if (*end || v <= 0)
			continue;
		if (proc_stat((pid_t)v, &s, NULL) < 0 || s != sid)
			continue;
		ALLOC_GROW(*pids, *nr + 1, alloc);
		(*pids)[(*nr)++] = (pid_t)v;
	}
	closedir(d);
	return 0;
}

int
tree_pids(const char *cg, pid_t sid, pid_t **pids, size_t *nr, struct err *err)
{
	*pids = NULL;
	*nr = 0;
	if (cg && *cg)
		return cg_pids(cg, pids, nr, err);
	return sid_pids(sid, pids, nr, err);
}

static bool
seen(const pid_t *v, size_t nr, pid_t pid)
{
	for (size_t i = 0; i < nr; i++)
		if (v[i] == pid)
			return true;
	return false;
}

int
tree_signal(const char *cg, pid_t sid, int sig, struct err *err)
{
	pid_t *done = NULL;
	size_t nr_done = 0, alloc = 0;
	int rc = 0;

	/* a process that forks while we go through the list: its child is signalled next pass */
	for (int pass = 0; pass < 100; pass++) {
		pid_t *pids = NULL;
		size_t nr = 0;
		bool fresh = false;

		rc = tree_pids(cg, sid, &pids, &nr, err);
		if (rc < 0) {
			free(pids);
			break;
		}
		for (size_t i = 0; i < nr; i++) {
			if (seen(done, nr_done, pids[i]))
				continue;
			fresh = true;
			if (kill(pids[i], sig) < 0 && errno != ESRCH && !rc)
				rc = err_set(err, errno_status(errno),
				             "cannot signal process %ld: %s", (long)pids[i],
				             strerror(errno));
			ALLOC_GROW(done, nr_done + 1, alloc);
			done[nr_done++] = pids[i];
		}
		free(pids);
		if (!fresh)
			break;
	}
	free(done);
	return rc;
}

static bool
tree_empty(const char *cg, pid_t sid)
{
	pid_t *pids = NULL;
	size_t nr = 0;

	if (tree_pids(cg, sid, &pids, &nr, NULL) < 0)
		nr = 1;
	free(pids);
	return nr == 0;
}

int
tree_kill(const char *cg, pid_t sid, bool can_kill, struct err *err)
{
	int rc = 0;

	if (cg && *cg && can_kill) {
		rc = cg_write(cg, "cgroup.kill", "1", err);
		if (rc == E_NOTFOUND) {
			/* the cgroup is gone: so is every process that was in it */
			err_clear(err);
			return 0;
		}
	} else if (cg && *cg) {
		/* frozen, nothing can fork between our reading the list and the kill */
		char path[1200];
		struct stat st;

		snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
		if (stat(path, &st) < 0)
			return 0;
		cg_write(cg, "cgroup.freeze", "1", NULL);
		rc = tree_signal(cg, 0, SIGKILL, err);
		cg_write(cg, "cgroup.freeze", "0", NULL);
	} else {
		for (int i = 0; i < 5 && !rc && !tree_empty(NULL, sid); i++)
			rc = tree_signal(NULL, sid, SIGKILL, err);
	}
	for (int i = 0; i < 40 && !tree_empty(cg, sid); i++) {
		struct timespec ts = { 0, 5 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	return rc;
}
