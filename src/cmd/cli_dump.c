/*
 * gpuscope __cli-table: the table of cli.h as tab-separated lines, so that
 * tests/cli/cli-table.sh can hold it against the getopt_long() tables and
 * the --help of every command. A hidden command: no completion, no man page.
 *
 * One line per command, then one per option of it; the options every
 * command takes (cli_global_options) come first, under the command "*":
 *
 *   command  long  short  has-arg  value  list  hidden  choices
 *
 * A command's own line has an empty long name, "-" as short and has-arg,
 * its operand's kind as value, "-" as list, its hidden flag and its
 * operand_choices. Empty fields are "-" but for the long name.
 */
#include "cmd/cmd.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cli.h"

static const char *const value_names[] = {
	[CLI_NONE] = "none",
	[CLI_STRING] = "string",
	[CLI_NUMBER] = "number",
	[CLI_SECONDS] = "seconds",
	[CLI_SIZE] = "size",
	[CLI_TIME] = "time",
	[CLI_FILE] = "file",
	[CLI_DIR] = "dir",
	[CLI_CHOICE] = "choice",
	[CLI_GPU] = "gpu",
	[CLI_FIELD_GPU] = "field-gpu",
	[CLI_FIELD_APP] = "field-app",
	[CLI_DOCTOR_ID] = "doctor-id",
	[CLI_MODEL] = "model",
	[CLI_SPEC_GPU] = "spec-gpu",
	[CLI_BENCH_TEST] = "bench-test",
	[CLI_USER] = "user",
	[CLI_ADDR] = "addr",
	[CLI_COMMAND] = "command",
	[CLI_JOB] = "job",
	[CLI_SUBCOMMAND] = "subcommand",
};

static const char *
value_name(enum cli_value v)
{
	if ((unsigned)v < sizeof(value_names) / sizeof(value_names[0]) && value_names[v])
		return value_names[v];
	return "?";
}

static const char *
or_dash(const char *s)
{
	return s && *s ? s : "-";
}

static void
print_options(const char *command, const struct cli_option *o)
{
	for (; o && o->name; o++) {
		char shortname[2] = { o->short_name, 0 };

		printf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", command, o->name, or_dash(shortname),
		       o->value == CLI_NONE ? "none"
		       : o->optional        ? "optional"
		                            : "required",
		       value_name(o->value), o->list ? "list" : "-", o->hidden ? "hidden" : "-",
		       or_dash(o->choices));
	}
}

int
cmd_cli_dump(int argc, char **argv)
{
	if (argc > 1) {
		cmd_error("__cli-table takes no argument, not '%s'", argv[1]);
		return EXIT_USAGE;
	}
	print_options("*", cli_global_options);
	for (unsigned i = 0; i < cli_command_count(); i++) {
		const struct cli_command *c = cli_command_at(i);

		printf("%s\t\t-\t-\t%s\t-\t%s\t%s\n", c->name, value_name(c->operand),
		       c->hidden ? "hidden" : "-", or_dash(c->operand_choices));
		print_options(c->name, c->options);
	}
	if (fflush(stdout)) {
		cmd_error("cannot write the table: %s", strerror(errno));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}
