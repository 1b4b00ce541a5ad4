/*
 * CPU cost of the DRM fdinfo scanner (src/backend/fdinfo.c), measured with
 * getrusage(RUSAGE_SELF) around each call:
 *   full    a first sample of a new scanner: the /proc walk and every read
 *   rebuild a sample of a warm scanner whose index is due (every reindex s)
 *   steady  a sample with the index cached: only the known fdinfo files
 * Each is repeated --iters times; the report gives median, p90 and min.
 *
 *   bench_fdinfo --proc DIR [--sys DIR] [--iters N] [--spawn N --spawn-fds K]
 *
 * --spawn starts N children that each hold K more fds (pipes, /dev/null)
 * and sleep, so that a small machine's real /proc has a few hundred
 * processes to walk; they are killed before exit. --raw also times bare
 * walks of the fd directories (fstatat vs readlinkat on every entry) to
 * show what each discovery method costs on this kernel.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/fdinfo.h"
#include "core/config.h"
#include "core/err.h"

static double
cpu_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void
report(const char *what, double *ms, int n)
{
	qsort(ms, (size_t)n, sizeof(*ms), cmp_dbl);
	printf("  %-8s CPU per sample: median %7.3f ms   p90 %7.3f ms   min %7.3f ms   (%d runs)\n",
	       what, ms[n / 2], ms[n * 9 / 10], ms[0], n);
}

/* How many fd entries there are under proc (readdir only: no call per entry). */
static long
count_entries(const char *proc, long *procs)
{
	DIR *d = opendir(proc);
	struct dirent *de;
	long n = 0;

	*procs = 0;
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char path[64];
		DIR *f;
		struct dirent *e;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		(*procs)++;
		snprintf(path, sizeof(path), "%.20s/fd", de->d_name);
		f = fdopendir(openat(dirfd(d), path, O_RDONLY | O_DIRECTORY));
		if (!f)
			continue;
		while ((e = readdir(f)))
			n += e->d_name[0] != '.';
		closedir(f);
	}
	closedir(d);
	return n;
}

static pid_t *children;
static int nr_children;

static void
spawn(int n, int fds)
{
	children = calloc((size_t)n, sizeof(*children));
	for (int i = 0; i < n; i++) {
		pid_t c = fork();

		if (c < 0) {
			perror("fork");
			break;
		}
		if (c == 0) {
			for (int k = 0; k < fds / 2; k++) {
				int p[2];

				if (pipe(p))
					break;
			}
			for (int k = 0; k < fds - fds / 2 * 2; k++)
				open("/dev/null", O_RDONLY);
			pause();
			_exit(0);
		}
		children[nr_children++] = c;
	}
	usleep(200000); /* let them open their files */
}

static void
reap(void)
{
	for (int i = 0; i < nr_children; i++)
		kill(children[i], SIGKILL);
	for (int i = 0; i < nr_children; i++)
		waitpid(children[i], NULL, 0);
	free(children);
}

/* Every fd entry under proc: stat them all (follow = 1) or read their links. */
static long
raw_walk(const char *proc, int follow)
{
	DIR *d = opendir(proc);
	struct dirent *de;
	long n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char path[64];
		DIR *f;
		struct dirent *e;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "%.20s/fd", de->d_name);
		f = fdopendir(openat(dirfd(d), path, O_RDONLY | O_DIRECTORY));
		if (!f)
			continue;
		while ((e = readdir(f))) {
			struct stat st;
			char buf[256];

			if (e->d_name[0] == '.')
				continue;
			if (follow)
				n += !fstatat(dirfd(f), e->d_name, &st, 0);
			else
				n += readlinkat(dirfd(f), e->d_name, buf, sizeof(buf)) > 0;
		}
		closedir(f);
	}
	closedir(d);
	return n;
}

int
main(int argc, char **argv)
{
	const char *proc = NULL, *sys = "/nonexistent";
	int iters = 200, nspawn = 0, spawn_fds = 20, raw = 0;
	bool listed = false;
	struct gs_config cfg;
	struct fdinfo_scan *s;
	const struct fdinfo_proc *p;
	double *ms, t0, now = 1000;
	size_t nr;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--proc") && i + 1 < argc)
			proc = argv[++i];
		else if (!strcmp(argv[i], "--sys") && i + 1 < argc)
			sys = argv[++i];
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--spawn") && i + 1 < argc)
			nspawn = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--spawn-fds") && i + 1 < argc)
			spawn_fds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--raw"))
			raw = 1;
		else
			iters = 0; /* usage */
	}
	if (!proc || iters < 1) {
		fprintf(stderr, "usage: bench_fdinfo --proc DIR [--sys DIR] [--iters N] "
		                "[--spawn N [--spawn-fds K]] [--raw]\n");
		return 2;
	}
	if (nspawn)
		spawn(nspawn, spawn_fds);
	ms = calloc((size_t)iters, sizeof(*ms));
	gs_config_init(&cfg);
	cfg.proc_root = proc;
	cfg.sysfs_root = sys;

	/* (a) a first sample, walk included, of a new scanner each time */
	for (int i = 0; i < iters; i++) {
		s = fdinfo_new(&cfg);
		t0 = cpu_now();
		if (fdinfo_sample(s, now, NULL)) {
			fprintf(stderr, "bench_fdinfo: cannot read '%s'\n", proc);
			return 1;
		}
		ms[i] = (cpu_now() - t0) * 1e3;
		if (i == iters - 1) {
			p = fdinfo_procs(s, &nr);
			printf("  %s: %zu DRM process entries (%s), %zu processes not inspectable;\n"
			       "  index from %s\n",
			       proc, nr, nr ? (p[0].driver[0] ? p[0].driver : "no driver") : "-",
			       fdinfo_nr_denied(s),
			       fdinfo_listed(s)
			               ? "DRM's debugfs clients lists (the listed processes only)"
			               : "a walk of every process");
			listed = fdinfo_listed(s);
		}
		fdinfo_free(s);
	}
	report("full", ms, iters);
	if (!listed) {
		long procs, entries = count_entries(proc, &procs);

		qsort(ms, (size_t)iters, sizeof(*ms), cmp_dbl);
		printf("  (walk: %ld processes, %ld fd entries: %.2f us of CPU per fd entry)\n",
		       procs, entries, entries ? ms[iters / 2] * 1e3 / (double)entries : 0);
	}

	/* (b) a warm scanner whose index is due at every sample */
	cfg.reindex = 0;
	s = fdinfo_new(&cfg);
	fdinfo_sample(s, now, NULL);
	for (int i = 0; i < iters; i++) {
		now += 1;
		t0 = cpu_now();
		fdinfo_sample(s, now, NULL);
		ms[i] = (cpu_now() - t0) * 1e3;
	}
	fdinfo_free(s);
	report("rebuild", ms, iters);

	/* (c) steady state: the index cached */
	cfg.reindex = 1e12;
	s = fdinfo_new(&cfg);
	fdinfo_sample(s, now, NULL);
	for (int i = 0; i < iters; i++) {
		now += 1;
		t0 = cpu_now();
		fdinfo_sample(s, now, NULL);
		ms[i] = (cpu_now() - t0) * 1e3;
	}
	p = fdinfo_procs(s, &nr);
	fdinfo_free(s);
	report("steady", ms, iters);

	if (raw) {
		for (int follow = 1; follow >= 0; follow--) {
			long n = 0;

			for (int i = 0; i < iters; i++) {
				t0 = cpu_now();
				n = raw_walk(proc, follow);
				ms[i] = (cpu_now() - t0) * 1e3;
			}
			qsort(ms, (size_t)iters, sizeof(*ms), cmp_dbl);
			printf("  raw walk, %-10s on %ld fd entries: median %7.3f ms CPU\n",
			       follow ? "fstatat" : "readlinkat", n, ms[iters / 2]);
		}
	}
	free(ms);
	if (nspawn)
		reap();
	return 0;
}
