/*
 * wait4run: run one command and report what the whole process cost.
 *
 *   wait4run RESULT_FILE COMMAND [ARG...]
 *
 * Starts COMMAND (stdin, stdout and stderr inherited), waits for it with
 * wait4() and writes one line to RESULT_FILE:
 *
 *   <wall seconds> <user CPU seconds> <system CPU seconds> <peak RSS KiB> <exit status>
 *
 * The wall clock (CLOCK_MONOTONIC) runs from just before fork() to just after
 * wait4() returns, so it includes exec, dynamic loading and exit, as a user
 * of the command waits for them. CPU times and ru_maxrss come from the
 * kernel's accounting of the child.
 *
 * Why not Python's os.wait4 or /usr/bin/time: on exec, Linux seeds the
 * child's peak RSS with that of the memory image it replaces, which after
 * fork() is the caller's own. A Python harness would put a floor of ~10 MiB
 * under every figure; this program is linked statically (when the C library
 * allows) and is small, so the floor is a few hundred KiB (bench/status.sh
 * measures it and reports it). GNU time prints wall and CPU time to 10 ms
 * only, too coarse for a command that takes a few milliseconds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
tv(struct timeval t)
{
	return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

int
main(int argc, char **argv)
{
	struct rusage ru;
	double t0, t1;
	FILE *f;
	pid_t pid;
	int st, code;

	if (argc < 3) {
		fputs("usage: wait4run RESULT_FILE COMMAND [ARG...]\n", stderr);
		return 2;
	}
	t0 = mono();
	pid = fork();
	if (pid < 0) {
		perror("wait4run: fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "wait4run: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &st, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("wait4run: wait4");
			return 2;
		}
	}
	t1 = mono();
	code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	f = fopen(argv[1], "w");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	fprintf(f, "%.6f %.6f %.6f %ld %d\n", t1 - t0, tv(ru.ru_utime), tv(ru.ru_stime),
	        ru.ru_maxrss, code);
	if (fclose(f) != 0) {
		perror(argv[1]);
		return 2;
	}
	return 0;
}
