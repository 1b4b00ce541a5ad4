/*
 * Error buffer helpers: first error wins, messages are one line.
 */
#include "core/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int
err_set(struct err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err || err->code)
		return code;
	err->code = code ? code : E_IO;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	/* keep messages on one line whatever the input held */
	for (char *p = err->msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return code;
}

int
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

void
err_clear(struct err *err)
{
	if (!err)
		return;
	err->code = 0;
	err->msg[0] = '\0';
}

const char *
status_str(int code)
{
	switch (code) {
	case E_OK:
		return "ok";
	case E_NOTSUP:
		return "not supported";
	case E_NODEV:
		return "no device";
	case E_PERM:
		return "permission denied";
	case E_IO:
		return "i/o error";
	case E_PARSE:
		return "parse error";
	case E_BUSY:
		return "busy";
	case E_TIMEOUT:
		return "timed out";
	case E_LOST:
		return "device lost";
	case E_VERSION:
		return "version mismatch";
	case E_USAGE:
		return "usage error";
	case E_NOTFOUND:
		return "not found";
	}
	return "unknown error";
}
