/*
 * The subcommands (one cmd_*.c each) and what they share: exit codes and
 * taking one snapshot with the user's selection.
 */
#ifndef GPUSCOPE_CMD_H
#define GPUSCOPE_CMD_H

struct gs_config;
struct gpu_snapshot;

/* Exit codes, documented in gpuscope(1). */
enum exit_code {
	EXIT_OK = 0,       /* all went well */
	EXIT_PROBLEMS = 1, /* done, but a GPU is lost or not responding */
	EXIT_USAGE = 2,    /* bad command line */
	EXIT_RUNTIME = 3,  /* something failed while running */
	EXIT_NOGPU = 4,    /* no GPU found, or no driver to read one */
};

int cmd_status(int argc, char **argv, struct gs_config *cfg);
int cmd_query(int argc, char **argv, struct gs_config *cfg);

enum snap_flags {
	SNAP_PROCS = 1 << 0, /* with processes */
};

/* Starting the driver and scanning the GPUs may take this many times cfg->timeout. */
#define CMD_START_TIMEOUT_FACTOR 6

/*
 * Take one snapshot of the GPUs named by ids (NULL: all). On success returns
 * EXIT_OK and fills snap. Otherwise prints one clear line per problem on
 * stderr ("gpuscope: ...") and returns the exit code to use: EXIT_NOGPU
 * with the reason when there is no GPU or no driver, EXIT_USAGE for an id
 * that matches nothing, EXIT_RUNTIME for anything else. When the driver
 * does not start within CMD_START_TIMEOUT_FACTOR * cfg->timeout, the
 * program ends with EXIT_RUNTIME and a message.
 */
int cmd_snapshot(struct gs_config *cfg, const char *ids, unsigned flags, struct gpu_snapshot *snap);

/*
 * Write out to stdout. Returns EXIT_RUNTIME (with the reason printed) when
 * that fails, else EXIT_PROBLEMS when a GPU of snap is not in a good state,
 * else EXIT_OK.
 */
struct strbuf;
int cmd_output(const struct strbuf *out, const struct gpu_snapshot *snap);

/* Print "gpuscope: <msg>" on stderr. */
void cmd_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
