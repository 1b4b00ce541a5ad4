/*
 * gpuscope top: the GPUs and the processes using them, live and full
 * screen (the interface is in src/tui/). Under 'gpuscope replay FILE top'
 * the samples come from a recording.
 */
#include "cmd/cmd.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "backend/feed.h"
#include "core/config.h"
#include "core/err.h"
#include "tui/topconf.h"
#include "tui/tui.h"

static const char top_help[] =
        "usage: gpuscope top [-d SECONDS] [-i ID[,ID...]] [--no-processes] [--compact]\n"
        "                    [--color=WHEN] [--read-only] [--timeout=SEC]\n"
        "\n"
        "The GPUs (bars for utilisation, memory, power and temperature, history\n"
        "charts), the processes using them and doctor's health and workload\n"
        "findings, refreshed every interval, in the terminal. F1 or ? lists the\n"
        "keys; F2 sets up what is shown; F shows a finding's full text; q quits.\n"
        "The settings are kept in $XDG_CONFIG_HOME/gpuscope/top.conf (written on\n"
        "quit); -d and --compact win over it for one run.\n"
        "\n"
        "  -d, --interval=SEC  seconds between samples (default 1; also \"500ms\", \"2s\"; at least 0.1)\n"
        "  -i, --id=ID,...     only these GPUs: index, UUID (or a unique prefix), or PCI bus id\n"
        "      --no-processes  GPUs only\n"
        "      --compact       one line per GPU from the start (m switches)\n"
        "      --color=WHEN    auto (default: unless NO_COLOR is set), always, never\n"
        "      --read-only     never send signals to processes\n"
        "      --timeout=SEC   show a GPU as not responding after SEC seconds (default 5)\n";

static void
top_usage(FILE *f)
{
	fputs("usage: gpuscope top [-d SECONDS] [-i ID[,ID...]] [--no-processes] [--compact]\n"
	      "                    [--color=WHEN] [--read-only] [--timeout=SEC]\n"
	      "run 'gpuscope top --help' for details\n",
	      f);
}

int
cmd_top(int argc, char **argv, struct gs_config *cfg)
{
	enum { OPT_NOPROC = 256, OPT_COMPACT, OPT_READONLY };
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'd' },
		{ "delay", required_argument, NULL, 'd' },
		{ "id", required_argument, NULL, 'i' },
		{ "no-processes", no_argument, NULL, OPT_NOPROC },
		{ "compact", no_argument, NULL, OPT_COMPACT },
		{ "color", required_argument, NULL, CMD_OPT_COLOR },
		{ "colour", required_argument, NULL, CMD_OPT_COLOR },
		{ "read-only", no_argument, NULL, OPT_READONLY },
		{ "readonly", no_argument, NULL, OPT_READONLY },
		{ "timeout", required_argument, NULL, CMD_OPT_TIMEOUT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tui_options opt = {
		cfg, 1.0, cfg->want_procs, false, TUI_COLOR_AUTO, TUI_LAYOUT_AUTO, NULL
	};
	enum color_mode color = COLOR_AUTO;
	const char *ids = NULL, *no_color;
	struct err err = ERR_INIT, conf_err = ERR_INIT, save_err = ERR_INIT;
	struct top_conf conf, loaded;
	char conf_path[PATH_MAX];
	bool have_path, interval_given = false, compact_given = false;
	struct feed *feed;
	int c, rc;

	optind = 0; /* full reset of getopt's state */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:i:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (cmd_parse_seconds(optarg, &opt.interval) < 0 || opt.interval < 0.1 ||
			    opt.interval > 86400) {
				cmd_error(
				        "--interval takes a duration from 0.1 s to 1 d (\"2\", \"500ms\", \"1m\"), not '%s'",
				        optarg);
				return EXIT_USAGE;
			}
			interval_given = true;
			break;
		case 'i':
			ids = optarg;
			break;
		case OPT_NOPROC:
			opt.procs = false;
			break;
		case OPT_COMPACT:
			opt.layout = TUI_LAYOUT_COMPACT;
			compact_given = true;
			break;
		case OPT_READONLY:
			opt.read_only = true;
			break;
		case 'h':
			fputs(top_help, stdout);
			return EXIT_OK;
		default:
			rc = cmd_common_option(c, argv, cfg, &color, top_usage);
			if (rc != CMD_NEXT_OPTION)
				return rc;
		}
	}
	rc = cmd_no_operands(argc, argv, top_usage);
	if (rc != EXIT_OK)
		return rc;
	opt.color = color == COLOR_ALWAYS  ? TUI_COLOR_ALWAYS
	            : color == COLOR_NEVER ? TUI_COLOR_NEVER
	                                   : TUI_COLOR_AUTO;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		cmd_error("top needs a terminal; 'gpuscope status' prints one snapshot");
		return EXIT_USAGE;
	}
	/* as the status table: NO_COLOR set and not empty means no colour unless forced */
	no_color = getenv("NO_COLOR");
	if (opt.color == TUI_COLOR_AUTO && no_color && *no_color)
		opt.color = TUI_COLOR_NEVER;

	/* the settings of the last run; the command line wins over them */
	top_conf_init(&conf);
	top_conf_init(&loaded);
	have_path = top_conf_path(conf_path, sizeof(conf_path)) == 0;
	if (have_path)
		top_conf_load(&conf, conf_path, &conf_err);
	top_conf_copy(&loaded, &conf);
	/* a replay keeps the pace of its recording: the file's interval is not for it */
	if (!interval_given && !cfg->replay)
		opt.interval = conf.interval;
	if (!compact_given)
		opt.layout = (enum tui_layout)conf.layout;
	opt.conf = &conf;

	rc = cmd_open_feed(cfg, ids, opt.procs, opt.interval, &feed);
	if (rc == EXIT_OK) {
		if (tui_run(feed, &opt, &err) < 0) {
			cmd_error("%s", err.msg);
			rc = err.code == E_USAGE ? EXIT_USAGE : EXIT_RUNTIME;
		}
		feed_close(feed);
	}
	/*
	 * What -d and --compact set is for this run: the file keeps its own
	 * unless the user changed it on the screen (+, -, m, F2).
	 */
	if (interval_given && conf.interval == opt.interval)
		conf.interval = loaded.interval;
	if (compact_given && conf.layout == TUI_LAYOUT_COMPACT)
		conf.layout = loaded.layout;
	/* notes after the screen is gone, so that they are seen */
	if (conf_err.code)
		fprintf(stderr, "gpuscope: note: %s\n", conf_err.msg);
	if (rc != EXIT_OK || !have_path || top_conf_equal(&conf, &loaded))
		; /* nothing to write */
	else if (conf_err.code && conf_err.code != E_PARSE)
		/* a FIFO, a directory, a huge file: the user's, not ours to replace */
		fprintf(stderr, "gpuscope: note: settings not saved: '%s' was not read\n",
		        conf_path);
	else if (top_conf_save(&conf, conf_path, &save_err) < 0)
		fprintf(stderr, "gpuscope: note: settings not saved: %s\n", save_err.msg);
	top_conf_release(&conf);
	top_conf_release(&loaded);
	return rc;
}
