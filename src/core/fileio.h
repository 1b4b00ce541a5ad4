/*
 * Bounded reads of small system files (sysfs, procfs) under a root
 * directory, so that tests can point the root at a fixture tree.
 */
#ifndef GPUSCOPE_FILEIO_H
#define GPUSCOPE_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct err;
struct strbuf;

/*
 * The one way gpuscope opens a file it reads from outside (sysfs, procfs,
 * a --root tree, the passwd file, a recording): read-only, close-on-exec,
 * never as the controlling terminal, and O_NONBLOCK, so that a FIFO put in
 * the file's place does not wait for a writer (a read of it then ends at
 * once). O_NONBLOCK changes nothing for regular, sysfs and procfs files.
 * file_openat() opens path relative to the directory dirfd. Return the
 * descriptor, or -1 with errno set.
 */
int file_open(const char *path);
int file_openat(int dirfd, const char *path);

/*
 * Read at most cap bytes of root/path into sb (replacing its contents).
 * Returns 0, E_NOTFOUND (no such file), E_PERM, or E_IO; the message names
 * the file. A file longer than cap is cut at cap bytes without error. A
 * read shorter than asked is taken as the end of the file (true of regular,
 * sysfs and procfs files; this saves a system call per file).
 */
int file_read(const char *root, const char *path, struct strbuf *sb, size_t cap, struct err *err);

struct stat;
/* file_read() that also fstat()s the open file into *st (when st is not NULL). */
int file_read_st(const char *root, const char *path, struct strbuf *sb, size_t cap, struct stat *st,
                 struct err *err);

/*
 * Read at most cap bytes of the file at path (absolute, or relative to the
 * working directory) into sb, whole reads until cap or the end, if it is a
 * regular file. Anything else is refused without waiting: opening a FIFO
 * for reading blocks until a writer comes, and a device may never end.
 * Returns 0, or -1 (no such file, not a regular file, unreadable).
 */
int file_read_regular(const char *path, struct strbuf *sb, size_t cap);

/*
 * Read root/path as one integer (decimal, or hex with 0x), possibly followed
 * by a blank and more ("1000 MHz"). An empty path names nothing: E_NOTFOUND.
 */
int file_read_u64(const char *root, const char *path, uint64_t *v, struct err *err);
int file_read_s64(const char *root, const char *path, int64_t *v, struct err *err);

/* The same for a line already read: 0, or E_PARSE. A '-' is no u64. */
int parse_u64_line(const char *line, uint64_t *v);
int parse_s64_line(const char *line, int64_t *v);

/* Does root/path exist? stat() only: a sysfs attribute's show() does not run. */
bool file_exists(const char *root, const char *path);

/* The last component of the target of the symbolic link root/path, or "" in buf. */
void file_link_base(const char *root, const char *path, char *buf, size_t size);

/* Read root/path's first line, trailing whitespace removed, into buf. */
int file_read_line(const char *root, const char *path, char *buf, size_t size, struct err *err);

/* Join root and path into buf ("root/path"); returns buf. */
char *path_join(char *buf, size_t size, const char *root, const char *path);

/*
 * snprintf() for a relative path: one that does not fit is left empty (it
 * names nothing, and the readers above find nothing there). False then.
 */
bool path_fmt(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
