/*
 * gpuscope status: every GPU and the processes using it, as a table for
 * people or as one JSON document for programs.
 */
#include "cmd/cmd.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/config.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/fmt.h"
#include "front/json.h"
#include "front/table.h"

static void
status_usage(FILE *f)
{
	fputs("usage: gpuscope [status] [--json] [-i ID[,ID...]] [--no-processes] [--color=WHEN] [--timeout=SEC]\n"
	      "run 'gpuscope --help' for details\n",
	      f);
}

int
cmd_status(int argc, char **argv, struct gs_config *cfg)
{
	enum { OPT_NOPROC = 256, OPT_COMPACT };
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "id", required_argument, NULL, 'i' },
		{ "no-processes", no_argument, NULL, OPT_NOPROC },
		{ "color", required_argument, NULL, CMD_OPT_COLOR },
		{ "colour", required_argument, NULL, CMD_OPT_COLOR },
		{ "timeout", required_argument, NULL, CMD_OPT_TIMEOUT },
		{ "compact", no_argument, NULL, OPT_COMPACT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum color_mode color = COLOR_AUTO;
	bool json = false, compact = false;
	const char *ids = NULL;
	struct gpu_snapshot snap;
	struct strbuf out = STRBUF_INIT;
	struct term t;
	int c, rc;

	optind = 0; /* full reset of getopt's state */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ji:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'i':
			ids = optarg;
			break;
		case OPT_NOPROC:
			cfg->want_procs = false;
			break;
		case OPT_COMPACT:
			compact = true;
			break;
		default:
			rc = cmd_common_option(c, argv, cfg, &color, status_usage);
			if (rc != CMD_NEXT_OPTION)
				return rc;
		}
	}
	rc = cmd_no_operands(argc, argv, status_usage);
	if (rc != EXIT_OK)
		return rc;

	gpu_snapshot_init(&snap);
	rc = cmd_snapshot(cfg, ids, cfg->want_procs ? SNAP_PROCS : 0, &snap);
	if (rc != EXIT_OK)
		goto out;
	if (json) {
		json_status(&out, &snap, !compact, cfg->want_procs);
	} else {
		term_detect(&t, STDOUT_FILENO, color);
		table_status(&out, &snap, &t, cfg->want_procs);
	}
	rc = cmd_output(&out, &snap);
out:
	strbuf_release(&out);
	gpu_snapshot_release(&snap);
	return rc;
}
