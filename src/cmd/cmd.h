/*
 * The subcommands (one cmd_*.c each) and what they share: exit codes and
 * taking one snapshot with the user's selection.
 */
#ifndef GPUSCOPE_CMD_H
#define GPUSCOPE_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/fmt.h"

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
int cmd_top(int argc, char **argv, struct gs_config *cfg);
int cmd_watch(int argc, char **argv, struct gs_config *cfg);
int cmd_record(int argc, char **argv, struct gs_config *cfg);
int cmd_replay(int argc, char **argv, struct gs_config *cfg);
int cmd_doctor(int argc, char **argv, struct gs_config *cfg);
int cmd_fit(int argc, char **argv, struct gs_config *cfg);
int cmd_specs(int argc, char **argv, struct gs_config *cfg);
int cmd_bench(int argc, char **argv, struct gs_config *cfg);
/* gpuscope bench matmul (src/cmd/bench.c); cmd_bench() hands it its arguments */
int cmd_bench_matmul(int argc, char **argv, struct gs_config *cfg);
int cmd_serve(int argc, char **argv, struct gs_config *cfg);
int cmd_burn(int argc, char **argv, struct gs_config *cfg);
/* gpuscope queue (src/cmd/queue.c), the client; gpuscope queued (src/cmd/queued.c), the daemon */
int cmd_queue(int argc, char **argv, struct gs_config *cfg);
int cmd_queued(int argc, char **argv, struct gs_config *cfg);
/* gpuscope -L / --list-gpus (src/cmd/listgpus.c): nvidia-smi -L's one line per GPU */
int cmd_list_gpus(int argc, char **argv, struct gs_config *cfg);
/* gpuscope __cli-table (src/cmd/cli_dump.c): cli.h's table as TSV, for tests/cli/cli-table.sh */
int cmd_cli_dump(int argc, char **argv);
/* gpuscope completion bash|zsh|fish and the hidden __complete KIND (src/cmd/completion.c) */
int cmd_completion(int argc, char **argv, struct gs_config *cfg);
int cmd_complete(int argc, char **argv, struct gs_config *cfg);
/* gpuscope __man NAME | --list (src/cmd/manpage.c): the page gpuscope-NAME(1), from the table */
int cmd_man(int argc, char **argv);

enum snap_flags {
	SNAP_PROCS = 1 << 0, /* with processes */
};

/* Starting the driver and scanning the GPUs may take this many times cfg->timeout. */
#define CMD_START_TIMEOUT_FACTOR 6

/*
 * Open the backends, scan the GPUs and select those named by ids (NULL:
 * all), for a command that samples more than once. On success returns
 * EXIT_OK with *out set (the caller closes it); otherwise prints why, as
 * cmd_snapshot() does, and returns the exit code to use. ids that name no
 * GPU ("", ",": an empty variable) are EXIT_USAGE before anything is read.
 */
struct collector;
int cmd_open_collector(struct gs_config *cfg, const char *ids, struct collector **out);
/* The same, but finding no GPU is not an error: the collector is kept, with its reasons. */
int cmd_open_collector_any(struct gs_config *cfg, const char *ids, struct collector **out);

/*
 * A feed of snapshots every interval seconds (backend/feed.h): from the
 * recording when the command runs under 'gpuscope replay' (cfg->replay),
 * else from the live machine, opened as cmd_open_collector() does. Returns
 * EXIT_OK with *out set, or prints why and returns the exit code to use.
 */
struct feed;
int cmd_open_feed(struct gs_config *cfg, const char *ids, bool procs, double interval,
                  struct feed **out);

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
 * Close the collector of the last cmd_snapshot(), which stays open until
 * then so that the output is written before the driver shuts down (main()
 * calls this after the command; the next cmd_snapshot() does too).
 */
void cmd_close_deferred(void);

/*
 * Write out to stdout. Returns EXIT_RUNTIME (with the reason printed) when
 * that fails, else EXIT_PROBLEMS when a GPU of snap is not in a good state,
 * else EXIT_OK.
 */
struct strbuf;
int cmd_output(const struct strbuf *out, const struct gpu_snapshot *snap);

/*
 * A duration: "2", "0.5", "2s", "500ms", "10m", "1h", "1d" (a number alone
 * is seconds). Returns 0 with *out set, or -1.
 */
int cmd_parse_seconds(const char *s, double *out);

/* A size in bytes: "1000", "64k", "64M", "64MiB", "1G", powers of 1024. Returns 0 or -1. */
/*
 * A TIME of the command line as seconds since the epoch, against a
 * recording's span [first, last]: epoch seconds, 2026-11-30T03:00[:SS][Z],
 * 03:00[:SS] (the last such moment at or before last), -10m (before last),
 * +90s (after first). Returns 0, or -1 when it is not a time.
 */
int cmd_parse_time(const char *s, double first, double last, double *out);

int cmd_parse_size(const char *s, uint64_t *out);

/*
 * The whole number arg of option opt (its name, "--count"), from min to max.
 * Returns 0 with *out set, or prints "OPT takes a whole number from MIN to
 * MAX, not 'ARG'" and returns -1.
 */
int cmd_parse_count(const char *opt, const char *arg, unsigned long min, unsigned long max,
                    unsigned long *out);

/*
 * For commands that run until stopped (watch, record): call before opening
 * the feed. SIGINT, SIGTERM and SIGHUP are then handled by a thread of
 * their own: before cmd_stop_feed() they end the program at once (exit
 * 128 + signal); after, they wake the feed and make cmd_stopped() return
 * the signal, so the command finishes its current line and closes cleanly.
 * Call cmd_stop_feed(NULL) before closing the feed.
 */
void cmd_stop_on_signals(void);
void cmd_stop_feed(struct feed *f);
int cmd_stopped(void); /* the signal that asked to stop, or 0 */

/*
 * --timeout's value into cfg->timeout: a duration above 0 and up to an
 * hour. Returns 0, or prints why and returns -1.
 */
int cmd_set_timeout(struct gs_config *cfg, const char *arg);

/*
 * The options that several commands share: the values of their entries in
 * a command's getopt_long() table ("color" and "colour", "timeout"; "help"
 * is 'h'), above any command's own, and cmd_common_option() for the
 * default branch of its loop.
 */
enum cmd_common_opt { CMD_OPT_COLOR = 0x1000, CMD_OPT_TIMEOUT };

/* What cmd_common_option() returns when the command goes on with its next option. */
#define CMD_NEXT_OPTION (-1)

/*
 * Take option c, as getopt_long() returned it, that the command's own
 * cases did not: --color=auto|always|never into *color (NULL for a command
 * without --color), --timeout into cfg (cmd_set_timeout()), -h/--help
 * (usage on stdout), and anything else as cmd_bad_option() does. Returns
 * CMD_NEXT_OPTION, or the exit code for the command to return at once:
 * EXIT_OK after -h, EXIT_USAGE (the reason printed) for a bad value or an
 * option the command does not take.
 */
int cmd_common_option(int c, char **argv, struct gs_config *cfg, enum color_mode *color,
                      void (*usage)(FILE *f));

/*
 * After the options: EXIT_OK when no argument is left, else print
 * "unexpected argument 'ARG'" and the usage on stderr and return EXIT_USAGE.
 */
int cmd_no_operands(int argc, char **argv, void (*usage)(FILE *f));

/*
 * What getopt_long() returned for an option it did not take (':' for a
 * missing value, anything else for an unknown option): print why and the
 * usage on stderr. Returns EXIT_USAGE.
 */
int cmd_bad_option(int c, char **argv, void (*usage)(FILE *f));

/* Print "gpuscope: <msg>" on stderr. */
void cmd_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
