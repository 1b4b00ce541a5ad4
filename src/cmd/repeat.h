/*
 * nvidia-smi's -l SEC / -lms MS and -f FILE for the commands that show one
 * snapshot (status, query): the same output again every interval until
 * Ctrl-C or SIGTERM, from one collector kept open, written to standard
 * output or to a file.
 */
#ifndef GPUSCOPE_CMD_REPEAT_H
#define GPUSCOPE_CMD_REPEAT_H

#include <stdbool.h>

struct gs_config;
struct gpu_snapshot;
struct strbuf;

/* nvidia-smi's interval when -l is given without one */
#define REPEAT_DEFAULT_LOOP 5.0

/*
 * Before getopt_long(): rewrite nvidia-smi's single-dash "-lms MS" and
 * "-lms=MS" in argv[1..argc) into "--loop-ms" forms (the strings are
 * replaced, never written into). The other arguments are left alone.
 */
void repeat_rewrite_lms(int argc, char **argv);

/*
 * The value of -l / --loop (arg may be NULL: "-l" alone, nvidia-smi's 5 s;
 * then a following duration in argv[optind] is taken, as nvidia-smi does
 * with "-l 2") or of --loop-ms (ms: the value is milliseconds). Sets
 * *interval and returns 0, or prints why and returns -1.
 */
int repeat_parse_loop(const char *arg, bool ms, int argc, char **argv, double *interval);

/* What -f / --filename writes to, and how. */
struct repeat_out {
	const char *path; /* NULL: standard output */
	/*
	 * Each round replaces path whole (FILE.tmp.PID beside it, fsync,
	 * rename), for readers such as node_exporter's textfile collector; else
	 * path is truncated once and each round appended, as nvidia-smi -f does.
	 */
	bool atomic;
};

/*
 * Append one round's output for snap to out; fd is where it goes (for
 * colours: a terminal or not). ctx is the command's own.
 */
typedef void repeat_render_fn(void *ctx, const struct gpu_snapshot *snap, int fd,
                              struct strbuf *out);

/*
 * Show the GPUs named by ids (NULL: all): once when interval is 0 (as
 * cmd_snapshot() does), else every interval seconds until SIGINT, SIGTERM
 * or SIGHUP (the round under way is finished) or the end of a replayed
 * recording. procs: with processes. Returns the exit code: that of
 * cmd_snapshot() or cmd_open_feed() when the GPUs cannot be read,
 * EXIT_RUNTIME when the output cannot be written (one line saying why),
 * EXIT_PROBLEMS when a GPU was not in a good state in some round, else
 * EXIT_OK.
 */
int repeat_run(struct gs_config *cfg, const char *ids, bool procs, double interval,
               const struct repeat_out *o, repeat_render_fn *render, void *ctx);

#endif
