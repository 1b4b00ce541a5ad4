/*
 * With --json, an error is a JSON document on stdout too (schema
 * gpuscope.error/1, docs/json-schema.md), so that a script reading stdout
 * never reads an empty stream: main() turns it on, cmd_error() notes each
 * message, and the document is written when the command ends with an
 * error without having written anything on stdout itself.
 */
#ifndef GPUSCOPE_CMD_JSONERR_H
#define GPUSCOPE_CMD_JSONERR_H

#include <stdbool.h>

struct gs_config;

/*
 * Look at the whole command line (argv as main() has it): when its command
 * takes --json (status, replay FILE status, doctor, fit, specs, bench, burn,
 * queue, and a word that is no command at all) and -j/--json is in it,
 * turn the error document on and count what is written on stdout from now
 * on. cfg gives the clock; it must live until the program ends.
 */
void jsonerr_setup(int argc, char **argv, const struct gs_config *cfg);

/* Whether error documents are on. */
bool jsonerr_on(void);

/* Note one message printed on stderr (without "gpuscope: "), for "errors". */
void jsonerr_note(const char *msg);

/*
 * The command ended with rc: when error documents are on, rc is not 0 and
 * nothing came on stdout, write the error document. Returns rc.
 */
int jsonerr_finish(int rc);

/* End the program at once with rc (from any thread), after jsonerr_finish(rc). */
void jsonerr_exit(int rc) __attribute__((noreturn));

#endif
