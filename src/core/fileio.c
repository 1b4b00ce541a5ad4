/*
 * Small-file readers. Every read is bounded and every failure names the
 * file; errno is converted to a status code right after the call.
 */
#include "core/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/strbuf.h"

/* Append s to buf[0..at) (size bytes in all, one kept for the NUL), cut to fit. */
static size_t
path_put(char *buf, size_t size, size_t at, const char *s)
{
	size_t n = strlen(s);

	if (n > size - 1 - at)
		n = size - 1 - at;
	memcpy(buf + at, s, n);
	return at + n;
}

/* As snprintf("%s/%s") would, cut to size; without printf, as it runs for every
 * file of every process (status --json reads 800 for 200 processes). */
char *
path_join(char *buf, size_t size, const char *root, const char *path)
{
	size_t at = 0;

	if (!size)
		return buf;
	if (root && *root && strcmp(root, "/"))
		at = path_put(buf, size, at, root);
	if (*path != '/')
		at = path_put(buf, size, at, "/");
	at = path_put(buf, size, at, path);
	buf[at] = '\0';
	return buf;
}

int
file_read(const char *root, const char *path, struct strbuf *sb, size_t cap, struct err *err)
{
	return file_read_st(root, path, sb, cap, NULL, err);
}

int
file_open(const char *path)
{
	return open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

int
file_openat(int dirfd, const char *path)
{
	return openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

int
file_read_st(const char *root, const char *path, struct strbuf *sb, size_t cap, struct stat *st,
             struct err *err)
{
	char full[4096];
	int fd, e;

	strbuf_reset(sb);
	path_join(full, sizeof(full), root, path);
	fd = file_open(full);
	if (fd < 0) {
		e = errno;
		return err_set(err, errno_status(e), "cannot open '%s': %s", full, strerror(e));
	}
	if (st && fstat(fd, st) < 0) {
		e = errno;
		close(fd);
		return err_set(err, errno_status(e), "cannot stat '%s': %s", full, strerror(e));
	}
	while (sb->len < cap) {
		size_t want = cap - sb->len < 4096 ? cap - sb->len : 4096;
		ssize_t n;

		strbuf_grow(sb, want);
		n = read(fd, sb->buf + sb->len, want);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			e = errno;
			close(fd);
			return err_set(err, errno_status(e), "cannot read '%s': %s", full,
			               strerror(e));
		}
		if (n == 0)
			break;
		strbuf_setlen(sb, sb->len + (size_t)n);
		/* regular, sysfs and procfs files come whole: short means the end */
		if ((size_t)n < want)
			break;
	}
	close(fd);
	return 0;
}

int
file_read_line(const char *root, const char *path, char *buf, size_t size, struct err *err)
{
	struct strbuf sb = STRBUF_INIT;
	char *nl;
	int rc;

	rc = file_read(root, path, &sb, size ? size - 1 : 0, err);
	if (rc < 0)
		goto out;
	nl = memchr(sb.buf, '\n', sb.len);
	if (nl)
		strbuf_setlen(&sb, (size_t)(nl - sb.buf));
	strbuf_rtrim(&sb);
	snprintf(buf, size, "%s", sb.buf);
out:
	strbuf_release(&sb);
	return rc;
}

int
parse_u64_line(const char *line, uint64_t *v)
{
	unsigned long long x;
	char *end;

	while (*line == ' ' || *line == '\t')
		line++;
	if (*line == '-')
		return E_PARSE;
	errno = 0;
	x = strtoull(line, &end, 0);
	if (end == line || errno || (*end && *end != ' '))
		return E_PARSE;
	*v = x;
	return 0;
}

int
parse_s64_line(const char *line, int64_t *v)
{
	long long x;
	char *end;

	errno = 0;
	x = strtoll(line, &end, 0);
	if (end == line || errno || (*end && *end != ' '))
		return E_PARSE;
	*v = x;
	return 0;
}

/* The first line of root/path, which should hold a number; E_NOTFOUND for an empty path. */
static int
number_line(const char *root, const char *path, char *line, size_t size, struct err *err)
{
	if (!path[0])
		return err_set(err, E_NOTFOUND, "no file named under '%s'", root);
	return file_read_line(root, path, line, size, err);
}

static int
not_a_number(const char *root, const char *path, const char *line, struct err *err)
{
	return err_set(err, E_PARSE, "'%s' under '%s' is not a number: '%s'", path, root, line);
}

int
file_read_u64(const char *root, const char *path, uint64_t *v, struct err *err)
{
	char line[64];
	int rc = number_line(root, path, line, sizeof(line), err);

	if (rc < 0)
		return rc;
	return parse_u64_line(line, v) < 0 ? not_a_number(root, path, line, err) : 0;
}

int
file_read_s64(const char *root, const char *path, int64_t *v, struct err *err)
{
	char line[64];
	int rc = number_line(root, path, line, sizeof(line), err);

	if (rc < 0)
		return rc;
	return parse_s64_line(line, v) < 0 ? not_a_number(root, path, line, err) : 0;
}

bool
file_exists(const char *root, const char *path)
{
	char full[4096];
	struct stat st;

	return path[0] && stat(path_join(full, sizeof(full), root, path), &st) == 0;
}

void
file_link_base(const char *root, const char *path, char *buf, size_t size)
{
	char full[4096], target[4096];
	const char *slash;
	ssize_t n;

	buf[0] = '\0';
	if (!size)
		return;
	path_join(full, sizeof(full), root, path);
	n = readlink(full, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = '\0';
	slash = strrchr(target, '/');
	snprintf(buf, size, "%s", slash ? slash + 1 : target);
}

bool
path_fmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size) {
		if (size)
			buf[0] = '\0';
		return false;
	}
	return true;
}

int
file_read_regular(const char *path, struct strbuf *sb, size_t cap)
{
	struct stat st;
	int fd;

	strbuf_reset(sb);
	fd = file_open(path);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	while (sb->len < cap) {
		size_t want = cap - sb->len < 65536 ? cap - sb->len : 65536;
		ssize_t n;

		strbuf_grow(sb, want);
		n = read(fd, sb->buf + sb->len, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		strbuf_setlen(sb, sb->len + (size_t)n);
	}
	close(fd);
	return 0;
}
