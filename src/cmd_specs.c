/* PLACEHOLDER: to be written (issue 7). */
#include "cmd.h"

int
cmd_specs(int argc, char **argv, struct gs_config *cfg)
{
	(void)argc;
	(void)argv;
	(void)cfg;
	cmd_error("not yet");
	return EXIT_USAGE;
}
