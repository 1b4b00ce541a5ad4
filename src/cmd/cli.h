/*
 * The one table of gpuscope's commands and options. The completions (gpuscope
 * completion bash|zsh|fish, src/cmd/completion.c), the man page of each
 * subcommand (gpuscope-CMD(1), src/cmd/manpage.c) are generated from it, and
 * tests/cli/cli-table.sh checks it against every command's getopt_long() table
 * and --help, both ways, so that none of them can drift from the code.
 *
 * The entries live in cli_table_mon.c (status, query, top, watch, record,
 * replay, doctor, serve) and cli_table_work.c (fit, specs, bench, burn, queue,
 * queued); cli_table.c joins them and holds the options every command takes.
 */
#ifndef GPUSCOPE_CMD_CLI_H
#define GPUSCOPE_CMD_CLI_H

#include <stdbool.h>

/* What an option's value (or a command's operand) is: what the shells complete it to. */
enum cli_value {
	CLI_NONE = 0,  /* a flag: no value */
	CLI_STRING,    /* free text: nothing to complete */
	CLI_NUMBER,    /* a whole or decimal number */
	CLI_SECONDS,   /* a duration: 2, 0.5, 500ms, 10m (cmd_parse_seconds) */
	CLI_SIZE,      /* a size: 64M, 1G (cmd_parse_size) */
	CLI_TIME,      /* a time of a recording (cmd_parse_time) */
	CLI_FILE,      /* a file name */
	CLI_DIR,       /* a directory */
	CLI_CHOICE,    /* one of .choices (with .list: a comma list of them) */
	CLI_GPU,       /* this machine's GPUs: index, UUID, PCI bus id (gpuscope __complete gpus) */
	CLI_FIELD_GPU, /* nvidia-smi --query-gpu field names */
	CLI_FIELD_APP, /* nvidia-smi --query-compute-apps field names */
	CLI_DOCTOR_ID, /* doctor's finding and check ids (doctor --list) */
	CLI_MODEL,     /* fit's model catalog (fit --list) */
	CLI_SPEC_GPU,  /* GPU names of the spec table (specs) */
	CLI_BENCH_TEST, /* bench's test names */
	CLI_USER,       /* a user name of this machine */
	CLI_ADDR,       /* HOST:PORT */
	CLI_COMMAND,    /* a program and its arguments (queue submit -- COMMAND...) */
	CLI_JOB,        /* a queue job id (gpuscope queue ls) */
	CLI_SUBCOMMAND, /* a command operand: one of the command's subcommands */
};

struct cli_option {
	const char *name; /* the long name without its dashes ("interval"); NULL ends a list */
	char short_name;  /* 'd', or 0 */
	bool optional;    /* --color[=WHEN]: the value is optional (then only after '=') */
	bool list;        /* the value is a comma-separated list */
	bool hidden;      /* taken but not shown (an alias such as --colour): no man line */
	enum cli_value value;
	const char *metavar; /* "SEC", "FILE"; NULL for a flag */
	const char *choices; /* CLI_CHOICE: "table,csv,ndjson"; NULL otherwise */
	const char *help;    /* what it does: one sentence or a short paragraph, plain text */
};

struct cli_command {
	const char *name; /* "status"; a subcommand of a command: "queue submit", "bench matmul" */
	const char *summary; /* the man page's NAME line: "what every GPU is and does, now" */
	const char *
	        synopsis; /* what follows "gpuscope NAME" in the SYNOPSIS: "[-i ID,...] [--json]" */
	const char *description;          /* plain text, paragraphs separated by a blank line */
	const struct cli_option *options; /* ended by an entry whose name is NULL */
	enum cli_value operand;      /* what its operands complete to (CLI_NONE: it takes none) */
	const char *operand_choices; /* CLI_CHOICE or CLI_SUBCOMMAND operands:
	                                "top,watch,status,record,info" */
	const char *exit_status;     /* plain text; NULL: the usual 0-4 of gpuscope(1) */
	const char *examples;        /* lines "COMMAND LINE  what it shows", one per example */
	const char *see_also;        /* "gpuscope-watch(1), nvidia-smi(1)" */
	bool hidden;                 /* an internal command: no completion, no man page */
};

/*
 * Every command and subcommand, in the order of gpuscope --help: the first
 * cli_command_count() entries of cli_command_at().
 */
unsigned cli_command_count(void);
const struct cli_command *cli_command_at(unsigned i);
/* The command named name ("status", "queue submit"), or NULL. */
const struct cli_command *cli_find(const char *name);
/* The options gpuscope takes before or after any command (--demo, --root, --version, -L, ...). */
extern const struct cli_option cli_global_options[];

/* The two halves of the table (cli_table_mon.c, cli_table_work.c), each ended by a NULL name. */
extern const struct cli_command cli_commands_mon[];
extern const struct cli_command cli_commands_work[];

#endif
