/*
 * Shared bits of the libFuzzer targets in tests/fuzz/ (see run.sh): the
 * entry point's prototype and a check that reports which invariant broke
 * before it aborts, so that libFuzzer saves the input as a crash.
 */
#ifndef GPUSCOPE_FUZZ_H
#define GPUSCOPE_FUZZ_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                             \
	do {                                                                              \
		if (!(cond)) {                                                            \
			fprintf(stderr, "\nfuzz check failed at %s:%d: %s\n  ", __FILE__, \
			        __LINE__, #cond);                                         \
			fprintf(stderr, __VA_ARGS__);                                     \
			fputc('\n', stderr);                                              \
			abort();                                                          \
		}                                                                         \
	} while (0)

/* Report a failed system call on path (the harness's own, not a finding) and abort. */
static inline void __attribute__((noreturn)) fuzz_die_errno(const char *what, const char *path)
{
	fprintf(stderr, "fuzz: %s '%s': %s\n", what, path, strerror(errno));
	abort();
}

/* Write len bytes of data to path (created, or truncated). */
static inline void
fuzz_write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		fuzz_die_errno("cannot create", path);
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0)
			fuzz_die_errno("cannot write", path);
		data = (const char *)data + n;
		len -= (size_t)n;
	}
	close(fd);
}

/* mkdir -p root/rel (root itself exists). */
static inline void
fuzz_make_dirs(const char *root, const char *rel)
{
	char path[8192];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1;; p++) {
		char c = *p;

		if (c != '/' && c)
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			fuzz_die_errno("cannot create", path);
		*p = c;
		if (!c)
			break;
	}
}

/* The lowest free file descriptor: it grows when one leaks. */
static inline int
fuzz_lowest_free_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		fuzz_die_errno("cannot open", "/dev/null");
	close(fd);
	return fd;
}

/*
 * Split size bytes of data at the byte sep into at most nr parts: part[i],
 * len[i], and present[i] for each part the input has (a part that is not
 * there stands for a missing file).
 */
static inline void
fuzz_split(const char *data, size_t size, char sep, const char **part, size_t *len, bool *present,
           int nr)
{
	const char *s = data, *end = data + size;

	for (int i = 0; i < nr && s <= end; i++) {
		const char *at = memchr(s, sep, (size_t)(end - s));

		part[i] = s;
		len[i] = at ? (size_t)(at - s) : (size_t)(end - s);
		present[i] = true;
		if (!at)
			break;
		s = at + 1;
	}
}

/* A NUL-terminated copy of the input (cut at its first NUL, as a C string is). */
static inline char *
fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Print s with C escapes, for the failure messages. */
static inline void
fuzz_dump(const char *what, const char *s, size_t n)
{
	fprintf(stderr, "  %s (%zu bytes): \"", what, n);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(stderr, "\\%c", c);
		else if (c >= 0x20 && c < 0x7f)
			fputc(c, stderr);
		else
			fprintf(stderr, "\\x%02x", c);
	}
	fprintf(stderr, "\"\n");
}

/* --- a scratch tree per fuzzer process -------------------------------------- */

static char fuzz_base[4096]; /* the tree of this process, "" when none */

static inline int
fuzz_rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

static inline void
fuzz_rm_tree(const char *dir)
{
	nftw(dir, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static inline void
fuzz_scratch_cleanup(void)
{
	if (fuzz_base[0])
		fuzz_rm_tree(fuzz_base);
}

/*
 * Make the scratch tree of target name: <dir>/gpuscope-fuzz-<name>.<pid>.XXXXXX,
 * dir being /dev/shm (memory: fast), else $TMPDIR, else /tmp. It is removed
 * at exit; the trees that crashed runs of the same target left behind (their
 * pid is gone) are removed first. Returns its path; aborts when it cannot.
 */
static inline const char *
fuzz_scratch(const char *name)
{
	const char *tmp = getenv("TMPDIR");
	char prefix[128];
	size_t plen;
	struct dirent *de;
	DIR *d;

	if (access("/dev/shm", W_OK) == 0)
		tmp = "/dev/shm";
	else if (!tmp || !*tmp)
		tmp = "/tmp";
	plen = (size_t)snprintf(prefix, sizeof(prefix), "gpuscope-fuzz-%s.", name);
	d = opendir(tmp);
	while (d && (de = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(de->d_name, prefix, plen))
			continue;
		pid = strtol(de->d_name + plen, &end, 10);
		if (*end != '.' || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(fuzz_base, sizeof(fuzz_base), "%s/%s", tmp, de->d_name);
		fuzz_rm_tree(fuzz_base);
	}
	if (d)
		closedir(d);
	snprintf(fuzz_base, sizeof(fuzz_base), "%s/%s%ld.XXXXXX", tmp, prefix, (long)getpid());
	if (!mkdtemp(fuzz_base)) {
		fprintf(stderr, "cannot create '%s': %s\n", fuzz_base, strerror(errno));
		abort();
	}
	atexit(fuzz_scratch_cleanup);
	return fuzz_base;
}

#endif
