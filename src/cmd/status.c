/*
 * gpuscope status: every GPU and the processes using it, as a table for
 * people, as one JSON document for programs, or in Prometheus's text format
 * for node_exporter's textfile collector; once, or again every -l SEC.
 */
#include "cmd/cmd.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/repeat.h"
#include "core/config.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/fmt.h"
#include "front/json.h"
#include "front/prom.h"
#include "front/table.h"

static void
status_usage(FILE *f)
{
	fputs("usage: gpuscope [status] [--json | --format=table|json|prom] [-i ID[,ID...]] [--no-processes]\n"
	      "                [-l SEC | -lms MS] [-f FILE] [--color=WHEN] [--timeout=SEC]\n"
	      "run 'gpuscope --help' for details\n",
	      f);
}

enum status_format { SF_TABLE, SF_JSON, SF_PROM };

struct status_ctx {
	enum status_format format;
	bool compact, procs;
	enum color_mode color;
};

/* Processes in --format prom: as many as serve shows by default. */
#define STATUS_PROM_PROCS 50

static void
status_render(void *arg, const struct gpu_snapshot *snap, int fd, struct strbuf *out)
{
	const struct status_ctx *x = arg;
	struct term t;

	if (x->format == SF_JSON) {
		json_status(out, snap, !x->compact, x->procs);
	} else if (x->format == SF_PROM) {
		/* no timestamps: node_exporter's textfile collector refuses them */
		struct prom_opts o = { .max_procs = x->procs ? STATUS_PROM_PROCS : 0,
			               .collect_seconds = NAN };

		prom_write(out, snap, &o);
	} else {
		term_detect(&t, fd, fd < 0 ? COLOR_NEVER : x->color);
		table_status(out, snap, &t, x->procs);
	}
}

static int
parse_format(const char *arg, enum status_format *f)
{
	if (!strcmp(arg, "table"))
		*f = SF_TABLE;
	else if (!strcmp(arg, "json"))
		*f = SF_JSON;
	else if (!strcmp(arg, "prom") || !strcmp(arg, "prometheus"))
		*f = SF_PROM;
	else
		return -1;
	return 0;
}

int
cmd_status(int argc, char **argv, struct gs_config *cfg)
{
	enum { OPT_NOPROC = 256, OPT_COMPACT, OPT_LOOP_MS, OPT_FORMAT };
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "id", required_argument, NULL, 'i' },
		{ "no-processes", no_argument, NULL, OPT_NOPROC },
		{ "loop", optional_argument, NULL, 'l' },
		{ "loop-ms", required_argument, NULL, OPT_LOOP_MS },
		{ "filename", required_argument, NULL, 'f' },
		{ "color", required_argument, NULL, CMD_OPT_COLOR },
		{ "colour", required_argument, NULL, CMD_OPT_COLOR },
		{ "timeout", required_argument, NULL, CMD_OPT_TIMEOUT },
		{ "compact", no_argument, NULL, OPT_COMPACT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct status_ctx x = { .format = SF_TABLE, .color = COLOR_AUTO };
	struct repeat_out o = { 0 };
	double interval = 0;
	const char *ids = NULL;
	int c, rc;

	repeat_rewrite_lms(argc, argv);
	optind = 0; /* full reset of getopt's state */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ji:l::f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			x.format = SF_JSON;
			break;
		case OPT_FORMAT:
			if (parse_format(optarg, &x.format) < 0) {
				cmd_error("--format takes table, json or prom, not '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'i':
			ids = optarg;
			break;
		case 'l':
		case OPT_LOOP_MS:
			if (repeat_parse_loop(optarg, c == OPT_LOOP_MS, argc, argv, &interval) < 0)
				return EXIT_USAGE;
			break;
		case 'f':
			if (!*optarg) {
				cmd_error("-f/--filename needs a file name");
				return EXIT_USAGE;
			}
			o.path = optarg;
			break;
		case OPT_NOPROC:
			cfg->want_procs = false;
			break;
		case OPT_COMPACT:
			x.compact = true;
			break;
		default:
			rc = cmd_common_option(c, argv, cfg, &x.color, status_usage);
			if (rc != CMD_NEXT_OPTION)
				return rc;
		}
	}
	rc = cmd_no_operands(argc, argv, status_usage);
	if (rc != EXIT_OK)
		return rc;
	x.procs = cfg->want_procs;
	/* a textfile collector must never read half a file */
	o.atomic = x.format == SF_PROM;
	return repeat_run(cfg, ids, x.procs, interval, &o, status_render, &x);
}
