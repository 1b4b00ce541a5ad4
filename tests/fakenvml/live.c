/*
 * Live processes of the fake NVML (docs/scenario-format.md, `live_processes`):
 * real processes that a test registers by writing DIR/<pid>, one line
 * `GPU MIB [leak]` per GPU they use. While /proc/<pid> is a process that is
 * not a zombie, the fake lists it as a compute process of those GPUs and
 * counts its memory as used; a `leak` line keeps its memory counted once the
 * process is gone, as a driver that does not give memory back.
 *
 * The directory is read again by every call that needs it, with nothing
 * kept between calls: no lock, no state, and the answer always follows the
 * files. A file the fake cannot make sense of, or a line of one, is passed
 * over: a test's helper must not crash the program under test.
 */
#include "fake.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* more than a test has; a file past it is passed over */
#define LIVE_MAX_FILE (64 * 1024)
#define LIVE_MAX_PIDS 4096
#define LIVE_MAX_MIB  (1ULL << 30) /* a PiB: more is a typo */

/* The pid of a file name: digits only, no leading zero, above 0. */
static bool
pid_name(const char *name, unsigned int *pid)
{
	unsigned long v = 0;

	if (name[0] < '1' || name[0] > '9')
		return false;
	for (const char *p = name; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return false;
		v = v * 10 + (unsigned long)(*p - '0');
		if (v > INT_MAX)
			return false;
	}
	*pid = (unsigned int)v;
	return true;
}

/*
 * Is pid a process, and not a zombie? A zombie has given its GPU memory back
 * (the driver frees it when the process's files close, before it is reaped).
 */
bool
live_pid_running(unsigned int pid)
{
	char path[64], buf[512];
	const char *state;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "PID (COMM) S ...": the command may hold blanks and parentheses */
	state = strrchr(buf, ')');
	if (!state || state[1] != ' ')
		return false;
	return state[2] != 'Z' && state[2] != 'X' && state[2] != 'x';
}

/* A GPU as a line names it: its UUID, or its index. */
static bool
find_gpu(const struct scenario *sc, const char *word, unsigned int *gpu)
{
	unsigned long v = 0;
	const char *p;

	for (unsigned int i = 0; i < sc->nr_gpus; i++) {
		const char *uuid = sc->gpus[i].str[GS_UUID];

		if (uuid && !strcmp(uuid, word)) {
			*gpu = i;
			return true;
		}
	}
	for (p = word; isdigit((unsigned char)*p) && v < FAKE_MAX_GPUS; p++)
		v = v * 10 + (unsigned long)(*p - '0');
	if (p == word || *p || v >= sc->nr_gpus)
		return false;
	*gpu = (unsigned int)v;
	return true;
}

/* MIB as a whole number of MiB */
static bool
parse_mib(const char *word, unsigned long long *bytes)
{
	unsigned long long v = 0;
	const char *p;

	for (p = word; isdigit((unsigned char)*p); p++) {
		v = v * 10 + (unsigned long long)(*p - '0');
		if (v > LIVE_MAX_MIB)
			return false;
	}
	if (p == word || *p)
		return false;
	*bytes = v << 20;
	return true;
}

/* e at the end of l, or added to the entry of the same GPU from the same file (at or after from) */
static bool
push(struct live_list *l, const struct live_entry *e, size_t from)
{
	/* the same process on the same GPU twice: one entry, as NVML has */
	for (size_t i = from; i < l->n; i++) {
		struct live_entry *o = &l->v[i];

		if (o->pid == e->pid && o->gpu == e->gpu) {
			o->bytes += e->bytes;
			o->leaked += e->leaked;
			return true;
		}
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct live_entry *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return false;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *e;
	return true;
}

/* One `GPU MIB [leak]` line; anything else is passed over. */
static void
parse_line(const struct scenario *sc, char *line, unsigned int pid, bool running,
           struct live_list *l, size_t from)
{
	char *word[4], *save = NULL;
	struct live_entry e = { .pid = pid, .running = running };
	size_t n = 0;

	for (char *w = strtok_r(line, " \t\r", &save); w; w = strtok_r(NULL, " \t\r", &save)) {
		if (n == 3)
			return;
		word[n++] = w;
	}
	if (n < 2 || (n == 3 && strcmp(word[2], "leak")))
		return;
	if (!find_gpu(sc, word[0], &e.gpu) || !parse_mib(word[1], &e.bytes))
		return;
	e.leaked = n == 3 ? e.bytes : 0;
	push(l, &e, from);
}

/* the lines of DIR/name, a regular file of at most LIVE_MAX_FILE bytes */
static void
read_file(const struct scenario *sc, int dirfd, const char *name, unsigned int pid,
          struct live_list *l)
{
	char *text = NULL, *save = NULL;
	size_t from = l->n, size;
	struct stat st;
	bool running;
	ssize_t n;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > LIVE_MAX_FILE)
		goto out;
	size = (size_t)st.st_size;
	text = malloc(size + 1);
	if (!text)
		goto out;
	n = read(fd, text, size);
	if (n <= 0)
		goto out;
	text[n] = '\0';
	running = live_pid_running(pid);
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		parse_line(sc, line, pid, running, l, from);
out:
	free(text);
	close(fd);
}

static int
by_pid(const void *a, const void *b)
{
	const struct live_entry *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->gpu < y->gpu ? -1 : x->gpu > y->gpu;
}

void
live_read(const struct scenario *sc, struct live_list *out)
{
	size_t files = 0;
	struct dirent *d;
	DIR *dir;

	memset(out, 0, sizeof(*out));
	if (!sc->live_dir)
		return;
	dir = opendir(sc->live_dir);
	if (!dir)
		return;
	while ((d = readdir(dir)) && files < LIVE_MAX_PIDS) {
		unsigned int pid;

		/* "." and "..", and the .tmp files of writers, start with a dot */
		if (!pid_name(d->d_name, &pid))
			continue;
		files++;
		read_file(sc, dirfd(dir), d->d_name, pid, out);
	}
	closedir(dir);
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(out->v[0]), by_pid);
}

void
live_free(struct live_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

unsigned long long
live_used(const struct live_list *l, unsigned int gpu)
{
	unsigned long long sum = 0;

	for (size_t i = 0; i < l->n; i++) {
		const struct live_entry *e = &l->v[i];

		if (e->gpu == gpu)
			sum += e->running ? e->bytes : e->leaked;
	}
	return sum;
}

bool
live_find(const struct live_list *l, unsigned int pid)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].pid == pid && l->v[i].running)
			return true;
	return false;
}
