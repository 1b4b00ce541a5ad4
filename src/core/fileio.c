/*
 * Small-file readers. Every read is bounded and every failure names the
 * file; errno is converted to a status code right after the call.
 */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "strbuf.h"

char *
path_join(char *buf, size_t size, const char *root, const char *path)
{
	if (!root || !*root || !strcmp(root, "/"))
		snprintf(buf, size, "%s%s", *path == '/' ? "" : "/", path);
	else
		snprintf(buf, size, "%s%s%s", root, *path == '/' ? "" : "/", path);
	return buf;
}

static int
errno_status(int e)
{
	switch (e) {
	case ENOENT:
	case ENOTDIR:
	case ESRCH:
		return E_NOTFOUND;
	case EACCES:
	case EPERM:
		return E_PERM;
	default:
		return E_IO;
	}
}

int
file_read(const char *root, const char *path, struct strbuf *sb, size_t cap, struct err *err)
{
	return file_read_st(root, path, sb, cap, NULL, err);
}

int
file_read_st(const char *root, const char *path, struct strbuf *sb, size_t cap, struct stat *st,
             struct err *err)
{
	char full[4096];
	int fd, e;

	strbuf_reset(sb);
	path_join(full, sizeof(full), root, path);
	fd = open(full, O_RDONLY | O_CLOEXEC);
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
file_read_u64(const char *root, const char *path, uint64_t *v, struct err *err)
{
	char line[64], *end;
	unsigned long long x;
	int rc;

	rc = file_read_line(root, path, line, sizeof(line), err);
	if (rc < 0)
		return rc;
	errno = 0;
	x = strtoull(line, &end, 0);
	if (end == line || errno || (*end && *end != ' '))
		return err_set(err, E_PARSE, "'%s' under '%s' is not a number: '%s'", path, root,
		               line);
	*v = x;
	return 0;
}
