/*
 * The table of commands (cli.h): the two halves joined, and the options every
 * command takes.
 */
#include <stddef.h>
#include <string.h>

#include "cmd/cli.h"

const struct cli_option cli_global_options[] = {
	{ .name = "demo",
	  .value = CLI_NONE,
	  .help = "Run on a simulated 8-GPU H100 server (a fake NVIDIA driver built into gpuscope); "
	          "everything shown says it is simulated." },
	{ .name = "root",
	  .value = CLI_DIR,
	  .metavar = "DIR",
	  .help = "Read the machine from DIR/sys and DIR/proc (a saved tree, a chroot)." },
	{ .name = "list-gpus",
	  .short_name = 'L',
	  .value = CLI_NONE,
	  .help = "List the GPUs, one line each with its UUID, as nvidia-smi -L does, and exit." },
	{ .name = "version",
	  .short_name = 'V',
	  .value = CLI_NONE,
	  .help = "Print the version and exit." },
	{ .name = "help",
	  .short_name = 'h',
	  .value = CLI_NONE,
	  .help = "Print the usage and exit." },
	{ .name = NULL },
};

static unsigned
half_count(const struct cli_command *t)
{
	unsigned n = 0;

	while (t[n].name)
		n++;
	return n;
}

unsigned
cli_command_count(void)
{
	return half_count(cli_commands_mon) + half_count(cli_commands_work);
}

const struct cli_command *
cli_command_at(unsigned i)
{
	unsigned n = half_count(cli_commands_mon);

	if (i < n)
		return &cli_commands_mon[i];
	i -= n;
	return i < half_count(cli_commands_work) ? &cli_commands_work[i] : NULL;
}

const struct cli_command *
cli_find(const char *name)
{
	for (unsigned i = 0; i < cli_command_count(); i++) {
		const struct cli_command *c = cli_command_at(i);

		if (!strcmp(c->name, name))
			return c;
	}
	return NULL;
}
