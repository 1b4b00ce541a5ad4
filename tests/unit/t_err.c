/*
 * Tests of the error buffer and codes (core/err.c): the first message wins
 * and stays on one line, and errno values map to one status each.
 */
#include "core/err.h"

#include <errno.h>
#include <string.h>

#include "harness.h"

int
main(void)
{
	struct err err = ERR_INIT;

	is_int(errno_status(ENOENT), E_NOTFOUND, "errno: ENOENT is not found");
	is_int(errno_status(ENOTDIR), E_NOTFOUND, "errno: ENOTDIR is not found");
	is_int(errno_status(ESRCH), E_NOTFOUND, "errno: ESRCH (a process gone) is not found");
	is_int(errno_status(EACCES), E_PERM, "errno: EACCES is permission");
	is_int(errno_status(EPERM), E_PERM, "errno: EPERM is permission");
	is_int(errno_status(EIO), E_IO, "errno: EIO is I/O");
	is_int(errno_status(0), E_IO, "errno: anything else is I/O");

	is_int(err_set(&err, E_PERM, "cannot open '%s':\nrefused", "x"), E_PERM,
	       "err_set returns the code");
	is_str(err.msg, "cannot open 'x': refused", "err_set: one line");
	err_set(&err, E_IO, "second");
	ok(err.code == E_PERM && !strcmp(err.msg, "cannot open 'x': refused"),
	   "err_set: the first error wins");
	err_clear(&err);
	ok(err.code == 0 && !err.msg[0], "err_clear forgets it");
	is_int(err_set(NULL, E_IO, "nowhere"), E_IO, "err_set: a NULL err is fine");
	return done_testing();
}
