/*
 * File trees for the C unit tests: where tests/fixtures is, a temporary
 * directory, and making, writing, copying and removing the trees a test
 * reads. Header-only, like harness.h; every function is static inline, so
 * a test that does not use one still builds with -Werror.
 *
 * A helper that cannot do its job stops the test with a TAP "Bail out!"
 * line and exit status 99: a tree the test did not get is no result.
 */
#ifndef GPUSCOPE_TEST_TREE_H
#define GPUSCOPE_TEST_TREE_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static char fixtures[2048] __attribute__((unused)); /* tests/fixtures: find_fixtures() */
static char tmp_dir[256] __attribute__((unused));   /* make_tmp_dir(); rm_tree() it at the end */

/* Stop the test: "Bail out! <message>", exit status 99. */
static inline void __attribute__((noreturn, format(printf, 1, 2))) bail(const char *format, ...)
{
	va_list ap;

	printf("Bail out! ");
	va_start(ap, format);
	vprintf(format, ap);
	va_end(ap);
	printf("\n");
	exit(99);
}

/* Bail out with what failed on path, and errno's reason. */
static inline void __attribute__((noreturn)) die_errno(const char *what, const char *path)
{
	bail("%s '%s': %s", what, path, strerror(errno));
}

/* snprintf() for paths and commands: one that does not fit bails out. */
static inline void __attribute__((format(printf, 3, 4)))
fmt(char *buf, size_t size, const char *format, ...)
{
	va_list ap;
	int n;

	va_start(ap, format);
	n = vsnprintf(buf, size, format, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size)
		bail("path too long: '%s'", buf);
}

/* buf = a/b, or bail out when it does not fit. */
static inline void
join(char *buf, size_t size, const char *a, const char *b)
{
	fmt(buf, size, "%s/%s", a, b);
}

/*
 * tests/fixtures in fixtures: $GPUSCOPE_FIXTURES, or else the directory
 * beside this header, as the compiler found it (relative to where make ran).
 */
static inline void
find_fixtures(void)
{
	const char *env = getenv("GPUSCOPE_FIXTURES");
	const char *slash = strrchr(__FILE__, '/');

	if (env && *env)
		fmt(fixtures, sizeof(fixtures), "%s", env);
	else if (slash)
		fmt(fixtures, sizeof(fixtures), "%.*s/fixtures", (int)(slash - __FILE__), __FILE__);
	else
		fmt(fixtures, sizeof(fixtures), "fixtures");
}

/* The directory path, mode 0755 whatever the umask; one that exists is fine. */
static inline void
make_dir(const char *path)
{
	if (mkdir(path, 0755) && errno != EEXIST)
		die_errno("cannot create", path);
	chmod(path, 0755);
}

/* mkdir -p path: the directories it makes are 0755, those that exist stay as they are. */
static inline void
make_dirs(const char *path)
{
	char dir[PATH_MAX];

	fmt(dir, sizeof(dir), "%s", path);
	if (!dir[0])
		return;
	for (char *p = dir + 1;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (!mkdir(dir, 0755))
			chmod(dir, 0755);
		else if (errno != EEXIST)
			die_errno("cannot create", dir);
		*p = c;
		if (!c)
			break;
	}
}

/* The file path made or truncated, with len bytes of data, mode 0644 whatever the umask. */
static inline void
write_bytes(const char *path, const void *data, size_t len)
{
	const char *p = data;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || fchmod(fd, 0644))
		die_errno("cannot write", path);
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die_errno("cannot write", path);
		p += n;
		len -= (size_t)n;
	}
	if (close(fd))
		die_errno("cannot write", path);
}

/* The file path with the text s. */
static inline void
write_str(const char *path, const char *s)
{
	write_bytes(path, s, strlen(s));
}

/* The file dir/name with len bytes of data. */
static inline void
write_bytes_at(const char *dir, const char *name, const void *data, size_t len)
{
	char path[PATH_MAX];

	join(path, sizeof(path), dir, name);
	write_bytes(path, data, len);
}

/* The file dir/name with the text s. */
static inline void
write_at(const char *dir, const char *name, const char *s)
{
	write_bytes_at(dir, name, s, strlen(s));
}

/* dir/name, a symbolic link to target (what was there before is replaced). */
static inline void
link_at(const char *dir, const char *name, const char *target)
{
	char path[PATH_MAX];

	join(path, sizeof(path), dir, name);
	unlink(path);
	if (symlink(target, path))
		die_errno("cannot link", path);
}

/*
 * The whole file path in a malloc'd buffer with a NUL after it (free() it);
 * its size in *len unless len is NULL.
 */
static inline char *
slurp(const char *path, size_t *len)
{
	size_t size = 4096, used = 0;
	char *buf = malloc(size);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (!buf)
		bail("out of memory reading '%s'", path);
	if (fd < 0)
		die_errno("cannot read", path);
	for (;;) {
		ssize_t n;

		if (size - used < 2) {
			char *more = realloc(buf, size * 2);

			if (!more)
				bail("out of memory reading '%s'", path);
			buf = more;
			size *= 2;
		}
		n = read(fd, buf + used, size - used - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die_errno("cannot read", path);
		if (n == 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	buf[used] = '\0';
	if (len)
		*len = used;
	return buf;
}

/* The file src copied to dst, byte for byte, mode 0644. */
static inline void
copy_file(const char *src, const char *dst)
{
	size_t len;
	char *data = slurp(src, &len);

	write_bytes(dst, data, len);
	free(data);
}

/*
 * src copied to dst as cp -r would, but with modes for the tests: a
 * directory tree (directories 0755, a dst that exists is fine), a file
 * (0644) or a symbolic link (the same target).
 */
static inline void
copy_tree(const char *src, const char *dst)
{
	struct stat st;

	if (lstat(src, &st))
		die_errno("cannot copy", src);
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(src);
		struct dirent *de;

		if (!d)
			die_errno("cannot open", src);
		make_dir(dst);
		while ((de = readdir(d))) {
			char s[PATH_MAX], t[PATH_MAX];

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			join(s, sizeof(s), src, de->d_name);
			join(t, sizeof(t), dst, de->d_name);
			copy_tree(s, t);
		}
		closedir(d);
	} else if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlink(src, target, sizeof(target) - 1);

		if (n < 0)
			die_errno("cannot read link", src);
		target[n] = '\0';
		if (symlink(target, dst))
			die_errno("cannot link", dst);
	} else if (S_ISREG(st.st_mode)) {
		copy_file(src, dst);
	} else {
		bail("cannot copy '%s': not a file, directory or link", src);
	}
}

/*
 * rm -rf path, also where a test closed a directory (mode 0): it is
 * opened up first. A path that is not there is fine.
 */
static inline void
rm_tree(const char *path)
{
	struct stat st;
	struct dirent *de;
	DIR *d;

	if (lstat(path, &st))
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlink(path);
		return;
	}
	chmod(path, 0700);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		char sub[PATH_MAX];

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		join(sub, sizeof(sub), path, de->d_name);
		rm_tree(sub);
	}
	if (d)
		closedir(d);
	rmdir(path);
}

/* tmp_dir: a new directory $TMPDIR/<name>.XXXXXX (or under /tmp), mode 0700. */
static inline void
make_tmp_dir(const char *name)
{
	const char *tmp = getenv("TMPDIR");

	fmt(tmp_dir, sizeof(tmp_dir), "%s/%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
	if (!mkdtemp(tmp_dir))
		die_errno("cannot create a temporary directory", tmp_dir);
}

/* buf = tmp_dir/name, with whatever was there removed. */
static inline void
tmp_path(char *buf, size_t size, const char *name)
{
	join(buf, size, tmp_dir, name);
	rm_tree(buf);
}

/* A fresh copy of the fixture tests/fixtures/<name> at tmp_dir/<name>; that path in out. */
static inline void
copy_fixture(const char *name, char *out, size_t size)
{
	char src[PATH_MAX];

	join(src, sizeof(src), fixtures, name);
	tmp_path(out, size, name);
	copy_tree(src, out);
}

/*
 * fn(arg, res) as user nobody (uid and gid 65534, no groups), since root
 * reads through any file mode: in a child when we are root, which sends
 * back the res_size bytes of res through a pipe; here when we are not.
 * Returns -1 when the child could not be run or did not report.
 */
static inline int
as_nobody(void (*fn)(const void *arg, void *res), const void *arg, void *res, size_t res_size)
{
	int fds[2], status;
	size_t got = 0;
	ssize_t n;
	pid_t child;

	if (geteuid() != 0) {
		fn(arg, res);
		return 0;
	}
	if (pipe(fds))
		return -1;
	fflush(stdout);
	child = fork();
	if (child < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (child == 0) {
		close(fds[0]);
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(3);
		fn(arg, res);
		for (; got < res_size; got += (size_t)n)
			if ((n = write(fds[1], (char *)res + got, res_size - got)) <= 0)
				_exit(4);
		_exit(0);
	}
	close(fds[1]);
	while (got < res_size && (n = read(fds[0], (char *)res + got, res_size - got)) > 0)
		got += (size_t)n;
	close(fds[0]);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) ||
	    got != res_size)
		return -1;
	return 0;
}

#endif
