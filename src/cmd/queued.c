/*
 * gpuscope queued: the job queue's daemon (src/queue/daemon.c). It runs in
 * the foreground (systemd's Type=simple; contrib/systemd/gpuscope-queued.service)
 * and never forks itself away; --check-config reads the configuration,
 * says what is wrong with it and exits.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/config.h"
#include "core/err.h"
#include "queue/conf.h"
#include "queue/daemon.h"

static void
queued_usage(FILE *f)
{
	fputs("usage: gpuscope queued [--config FILE] [--socket PATH] [--state-dir DIR]\n"
	      "                       [--foreground] [--check-config] [--timeout SEC]\n"
	      "\n"
	      "The daemon of 'gpuscope queue': it keeps the queue's state, starts each job on\n"
	      "the GPUs the scheduler gives it, in a cgroup of its own under a supervisor, and\n"
	      "answers 'gpuscope queue' on a Unix socket. It runs in the foreground (as systemd\n"
	      "runs it: contrib/systemd/gpuscope-queued.service); SIGTERM stops it and leaves\n"
	      "the jobs running (the next start adopts them), SIGHUP re-reads the configuration.\n"
	      "\n"
	      "  --config FILE     the configuration (default $GPUSCOPE_QUEUE_CONF, else\n"
	      "                    " QCONF_DEFAULT_PATH "; a missing default file means defaults)\n"
	      "  --socket PATH     listen here (overrides the file's socket)\n"
	      "  --state-dir DIR   keep the state here (overrides the file's state_dir)\n"
	      "  --foreground      the default: never forks into the background\n"
	      "  --check-config    read the configuration, print what is wrong, exit\n"
	      "                    (0 when it is good, 1 when not)\n"
	      "  --timeout SEC     how long to wait for one GPU's readings (nvml_timeout)\n"
	      "  -h, --help        this help\n",
	      f);
}

int
cmd_queued(int argc, char **argv, struct gs_config *cfg)
{
	enum { OPT_CONFIG = 256, OPT_SOCKET, OPT_STATE, OPT_FG, OPT_CHECK };
	static const struct option opts[] = {
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "state-dir", required_argument, NULL, OPT_STATE },
		{ "foreground", no_argument, NULL, OPT_FG },
		{ "check-config", no_argument, NULL, OPT_CHECK },
		{ "timeout", required_argument, NULL, CMD_OPT_TIMEOUT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct qdaemon_opts o = { .gs = cfg };
	struct err err = ERR_INIT;
	const char *env = getenv(QCONF_ENV);
	bool check = false;
	int c, rc;

	o.config = QCONF_DEFAULT_PATH;
	if (env && *env) {
		o.config = env;
		o.config_given = true;
	}
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_CONFIG:
			o.config = optarg;
			o.config_given = true;
			break;
		case OPT_SOCKET:
			if (optarg[0] != '/') {
				cmd_error("--socket takes an absolute path, not '%s'", optarg);
				return EXIT_USAGE;
			}
			o.socket = optarg;
			break;
		case OPT_STATE:
			if (optarg[0] != '/') {
				cmd_error("--state-dir takes an absolute path, not '%s'", optarg);
				return EXIT_USAGE;
			}
			o.state_dir = optarg;
			break;
		case OPT_FG:
			break;
		case OPT_CHECK:
			check = true;
			break;
		default:
			rc = cmd_common_option(c, argv, cfg, NULL, queued_usage);
			if (rc != CMD_NEXT_OPTION)
				return rc;
		}
	}
	rc = cmd_no_operands(argc, argv, queued_usage);
	if (rc != EXIT_OK)
		return rc;
	if (check) {
		struct qconf q;

		qconf_defaults(&q);
		if (qconf_load(&q, o.config, o.config_given, &err) < 0) {
			cmd_error("%s", err.msg);
			qconf_release(&q);
			return 1;
		}
		printf("%s: good (socket %s, state_dir %s, %zu user/group sections, %zu GPU "
		       "sections)\n",
		       q.path[0] ? q.path : "no configuration file, the defaults", q.socket,
		       q.state_dir, q.nr_limit, q.nr_gpu);
		qconf_release(&q);
		return EXIT_OK;
	}
	/* the daemon's own line buffering: its log is the journal */
	setvbuf(stderr, NULL, _IOLBF, 0);
	rc = qdaemon_run(&o, &err);
	if (rc < 0) {
		cmd_error("queued: %s", err.msg);
		return rc == E_USAGE ? EXIT_USAGE : EXIT_RUNTIME;
	}
	return EXIT_OK;
}
