/* The table of commands (cli.h): placeholder until it is filled. */
#include <stddef.h>

#include "cmd/cli.h"

const struct cli_command cli_commands_mon[] = {
	{ .name = NULL },
};
