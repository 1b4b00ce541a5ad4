/*
 * Bounded reads of small system files (sysfs, procfs) under a root
 * directory, so that tests can point the root at a fixture tree.
 */
#ifndef GPUSCOPE_FILEIO_H
#define GPUSCOPE_FILEIO_H

#include <stddef.h>
#include <stdint.h>

struct err;
struct strbuf;

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

/* Read root/path as one unsigned integer (decimal, or hex with 0x). */
int file_read_u64(const char *root, const char *path, uint64_t *v, struct err *err);

/* Read root/path's first line, trailing whitespace removed, into buf. */
int file_read_line(const char *root, const char *path, char *buf, size_t size, struct err *err);

/* Join root and path into buf ("root/path"); returns buf. */
char *path_join(char *buf, size_t size, const char *root, const char *path);

#endif
