/*
 * Error codes and the error message buffer passed down every call that can
 * fail. A failing function returns a negative enum status and records a
 * one-line message in an optional struct err; the first message wins.
 */
#ifndef GPUSCOPE_ERR_H
#define GPUSCOPE_ERR_H

#include <stdbool.h>

enum status {
	E_OK = 0,
	E_NOTSUP = -1,  /* the device or library cannot give this */
	E_NODEV = -2,   /* no such device, or no driver/library */
	E_PERM = -3,    /* permission denied */
	E_IO = -4,      /* a read or write failed */
	E_PARSE = -5,   /* malformed input */
	E_BUSY = -6,    /* try again */
	E_TIMEOUT = -7, /* did not answer in time */
	E_LOST = -8,    /* the device fell off the bus or needs a reset */
	E_VERSION = -9, /* version mismatch (driver vs library, struct version) */
	E_USAGE = -10,  /* bad command-line or caller input */
	E_NOTFOUND = -11,
};

struct err {
	int code;      /* 0 until the first err_set() */
	char msg[256]; /* lowercase, no final full stop */
};

#define ERR_INIT      \
	{             \
		0, "" \
	}

/*
 * Record code and a printf-style message in err unless a message is already
 * there (the first error wins). err may be NULL. Returns code, so that
 * "return err_set(err, E_IO, ...);" reads naturally.
 */
int err_set(struct err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Forget any recorded error. */
void err_clear(struct err *err);

/*
 * The status for a failed system call's errno e: E_NOTFOUND for a missing
 * path or process (ENOENT, ENOTDIR, ESRCH), E_PERM when refused (EACCES,
 * EPERM), E_IO for anything else.
 */
int errno_status(int e);

/* A short lowercase name for a status code ("not supported", ...). */
const char *status_str(int code);

#endif
