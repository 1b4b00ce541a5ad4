/*
 * gpuscope record: the flight recorder. Every sample (devices and
 * processes) is appended to a compact file (record/record.h) that survives a
 * crash or a power cut mid-write, bounded in size by rotation, until the
 * program is stopped (Ctrl-C, SIGTERM) or has taken --count samples.
 * gpuscope replay reads it back.
 */
#include "cmd/cmd.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/feed.h"
#include "core/config.h"
#include "core/err.h"
#include "core/gpu.h"
#include "record/record.h"

#define RECORD_DEFAULT_FILE "gpuscope.rec"

static void
record_usage(FILE *f)
{
	fputs("usage: gpuscope record [-o FILE] [-d SEC] [-c COUNT] [--max-size SIZE] [--keep N]\n"
	      "                       [-i ID[,ID...]] [--no-processes] [--quiet]\n"
	      "run 'gpuscope --help' for details\n",
	      f);
}

static void
human_size(char *buf, size_t size, uint64_t n)
{
	if (n >= (uint64_t)1 << 30 && n % ((uint64_t)1 << 30) == 0)
		snprintf(buf, size, "%llu GiB", (unsigned long long)(n >> 30));
	else if (n >= (uint64_t)1 << 20)
		snprintf(buf, size, "%.0f MiB", (double)n / (1 << 20));
	else
		snprintf(buf, size, "%.0f KiB", (double)n / 1024);
}

int
cmd_record(int argc, char **argv, struct gs_config *cfg)
{
	enum { OPT_MAXSIZE = 256, OPT_KEEP, OPT_NOPROC, OPT_KEYFRAME, OPT_SYNC };
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "interval", required_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'c' },
		{ "id", required_argument, NULL, 'i' },
		{ "max-size", required_argument, NULL, OPT_MAXSIZE },
		{ "keep", required_argument, NULL, OPT_KEEP },
		{ "keyframe-every", required_argument, NULL, OPT_KEYFRAME },
		{ "sync-every", required_argument, NULL, OPT_SYNC },
		{ "no-processes", no_argument, NULL, OPT_NOPROC },
		{ "timeout", required_argument, NULL, CMD_OPT_TIMEOUT },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rec_options ro;
	struct err err = ERR_INIT;
	const char *path = RECORD_DEFAULT_FILE, *ids = NULL;
	double interval = 1.0;
	unsigned long count = 0, done = 0;
	struct rec_writer *wr = NULL;
	struct feed *feed = NULL;
	bool quiet = false, trouble = false, existed;
	int c, rc = EXIT_OK;

	rec_options_init(&ro);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:d:c:i:qh", opts, NULL)) != -1) {
		unsigned long n;

		switch (c) {
		case 'o':
			path = optarg;
			break;
		case 'd':
			if (cmd_parse_seconds(optarg, &interval) < 0 || interval < 0.05 ||
			    interval > 86400) {
				cmd_error(
				        "--interval takes a duration from 0.05 s to 1 d (\"1\", \"500ms\", \"1m\"), not '%s'",
				        optarg);
				return EXIT_USAGE;
			}
			break;
		case 'c':
		case OPT_KEEP:
		case OPT_KEYFRAME:
			if (cmd_parse_count(c == 'c'        ? "--count"
			                    : c == OPT_KEEP ? "--keep"
			                                    : "--keyframe-every",
			                    optarg, 1, 1000000, &n) < 0)
				return EXIT_USAGE;
			if (c == 'c')
				count = n;
			else if (c == OPT_KEEP)
				ro.keep = (unsigned)n;
			else
				ro.keyframe_every = (unsigned)n;
			break;
		case OPT_MAXSIZE:
			if (cmd_parse_size(optarg, &ro.max_bytes) < 0 ||
			    (ro.max_bytes && ro.max_bytes < 64 * 1024)) {
				cmd_error(
				        "--max-size takes a size of 64k or more (\"64M\", \"1G\"), or 0 for no limit, not '%s'",
				        optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_SYNC:
			if (cmd_parse_seconds(optarg, &ro.sync_every) < 0) {
				cmd_error(
				        "--sync-every takes a duration (\"0\" for every sample, \"10s\"), not '%s'",
				        optarg);
				return EXIT_USAGE;
			}
			break;
		case 'i':
			ids = optarg;
			break;
		case OPT_NOPROC:
			cfg->want_procs = false;
			break;
		case 'q':
			quiet = true;
			break;
		default:
			rc = cmd_common_option(c, argv, cfg, NULL, record_usage);
			if (rc != CMD_NEXT_OPTION)
				return rc;
			rc = EXIT_OK;
		}
	}
	if (optind < argc) {
		cmd_error("unexpected argument '%s' (the file is given with -o FILE)",
		          argv[optind]);
		record_usage(stderr);
		return EXIT_USAGE;
	}
	if (cfg->replay && !strcmp(cfg->replay, path)) {
		cmd_error("cannot record into '%s' while replaying it; choose another file with -o",
		          path);
		return EXIT_USAGE;
	}

	/* the file first: a bad path is reported before the GPUs are woken */
	existed = access(path, F_OK) == 0;
	if (rec_writer_open(path, &ro, &wr, &err) < 0) {
		cmd_error("%s", err.msg);
		return err.code == E_USAGE ? EXIT_USAGE : EXIT_RUNTIME;
	}
	cmd_stop_on_signals();
	rc = cmd_open_feed(cfg, ids, cfg->want_procs, interval, &feed);
	if (rc != EXIT_OK)
		goto out;
	cmd_stop_feed(feed);
	if (!quiet) {
		char size[32];

		human_size(size, sizeof(size), ro.max_bytes);
		if (ro.max_bytes)
			fprintf(stderr,
			        "gpuscope: recording every %g s into %s (at most %s a file, %u files); Ctrl-C stops\n",
			        interval, path, size, ro.keep);
		else
			fprintf(stderr, "gpuscope: recording every %g s into %s; Ctrl-C stops\n",
			        interval, path);
	}
	while (!cmd_stopped() && (!count || done < count)) {
		struct gpu_snapshot snap;
		int r;

		gpu_snapshot_init(&snap);
		r = feed_next(feed, &snap, &err);
		if (r == FEED_END) {
			gpu_snapshot_release(&snap);
			break;
		}
		if (r < 0) {
			cmd_error("%s", err.msg);
			gpu_snapshot_release(&snap);
			rc = EXIT_RUNTIME;
			break;
		}
		/* a sample cut short by a stop signal is still a whole sample: keep it */
		r = rec_writer_append(wr, &snap, &err);
		for (size_t d = 0; d < snap.nr_dev; d++)
			if (snap.dev[d].state != DEV_OK && snap.dev[d].state != DEV_SUSPENDED)
				trouble = true;
		gpu_snapshot_release(&snap);
		if (r < 0) {
			cmd_error("%s (the recording up to here is intact)", err.msg);
			rc = EXIT_RUNTIME;
			break;
		}
		done++;
	}
out:
	cmd_stop_feed(NULL); /* a signal from now on must not wake a closed feed */
	feed_close(feed);
	if (rec_writer_close(wr, &err) < 0 && rc == EXIT_OK) {
		cmd_error("%s", err.msg);
		rc = EXIT_RUNTIME;
	}
	/* no GPU, or stopped before the first sample: leave no empty recording behind */
	if (!existed && !done)
		unlink(path);
	if (!quiet && done)
		fprintf(stderr, "gpuscope: %lu sample%s recorded into %s\n", done,
		        done == 1 ? "" : "s", path);
	if (rc == EXIT_OK && trouble)
		rc = EXIT_PROBLEMS; /* as watch: a GPU was lost or did not answer */
	return rc;
}
