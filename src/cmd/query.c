/*
 * gpuscope query: nvidia-smi's --query-gpu and --query-compute-apps, so
 * that scripts written for nvidia-smi run unchanged on gpuscope. Fields
 * and --format are checked before the GPUs are read, so a typo fails fast
 * even on a machine without a GPU.
 */
#include "cmd/cmd.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cmd/repeat.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "front/query.h"

static const char query_synopsis[] =
        "usage: gpuscope query --query-gpu=FIELD[,FIELD...] [--format=csv[,noheader][,nounits]] [-i ID[,ID...]]\n"
        "                      [-l SEC | -lms MS] [-f FILE]\n"
        "   or: gpuscope query --query-compute-apps=FIELD[,FIELD...] [--format=...] [-i ID[,ID...]]\n"
        "   or: gpuscope query --help-query-gpu | --help-query-compute-apps\n";

static const char query_options_help[] =
        "\n"
        "Print what nvidia-smi prints for the same query: a header line, then one line\n"
        "per GPU (or per compute process), values separated by \", \".\n"
        "\n"
        "    --query-gpu=FIELDS           fields of each GPU (see --help-query-gpu)\n"
        "    --query-compute-apps=FIELDS  fields of each compute process (see --help-query-compute-apps)\n"
        "    --format=csv[,noheader][,nounits]\n"
        "                                 leave out the header line, or the units after values\n"
        "                                 (default: csv)\n"
        "    -i, --id=ID[,ID...]          only these GPUs: indexes, UUIDs or PCI bus ids\n"
        "    -l, --loop[=SEC]             again every SEC seconds (default 5) until Ctrl-C or\n"
        "                                 SIGTERM; the header line once\n"
        "    --loop-ms=MS, -lms MS        the same, every MS milliseconds\n"
        "    -f, --filename=FILE          write to FILE instead of standard output (emptied\n"
        "                                 first, each round added, as nvidia-smi -f)\n"
        "    --help-query-gpu             list the fields of --query-gpu\n"
        "    --help-query-compute-apps    list the fields of --query-compute-apps\n"
        "    -h, --help                   show this help\n";

enum {
	OPT_QUERY_GPU = 256,
	OPT_QUERY_APPS,
	OPT_FORMAT,
	OPT_HELP_GPU,
	OPT_HELP_APPS,
	OPT_LOOP_MS,
};

static const struct option query_options[] = {
	{ "query-gpu", required_argument, NULL, OPT_QUERY_GPU },
	{ "query-compute-apps", required_argument, NULL, OPT_QUERY_APPS },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "id", required_argument, NULL, 'i' },
	{ "loop", optional_argument, NULL, 'l' },
	{ "loop-ms", required_argument, NULL, OPT_LOOP_MS },
	{ "filename", required_argument, NULL, 'f' },
	{ "help-query-gpu", no_argument, NULL, OPT_HELP_GPU },
	{ "help-query-compute-apps", no_argument, NULL, OPT_HELP_APPS },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct query_args {
	const char *gpu_fields; /* --query-gpu */
	const char *app_fields; /* --query-compute-apps */
	const char *format;     /* --format */
	const char *ids;        /* -i */
	const char *file;       /* -f */
	double interval;        /* -l, --loop-ms; 0: once */
	int help;               /* 0, 'h', OPT_HELP_GPU or OPT_HELP_APPS */
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "gpuscope: <message>" and the synopsis on stderr; returns EXIT_USAGE. */
static int
usage_error(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	cmd_error("%s", sb.buf);
	fputs(query_synopsis, stderr);
	strbuf_release(&sb);
	return EXIT_USAGE;
}

/* Parse argv into a; returns EXIT_OK or EXIT_USAGE (with the message printed). */
static int
parse_args(int argc, char **argv, struct query_args *a)
{
	int c;

	memset(a, 0, sizeof(*a));
	repeat_rewrite_lms(argc, argv);
	optind = 0; /* full reset: main may have used getopt already */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hi:l::f:", query_options, NULL)) != -1) {
		switch (c) {
		case OPT_QUERY_GPU:
			a->gpu_fields = optarg;
			break;
		case OPT_QUERY_APPS:
			a->app_fields = optarg;
			break;
		case OPT_FORMAT:
			a->format = optarg;
			break;
		case 'i':
			a->ids = optarg;
			break;
		case 'l':
		case OPT_LOOP_MS:
			if (repeat_parse_loop(optarg, c == OPT_LOOP_MS, argc, argv, &a->interval) <
			    0)
				return EXIT_USAGE;
			break;
		case 'f':
			if (!*optarg)
				return usage_error("-f/--filename needs a file name");
			a->file = optarg;
			break;
		case 'h':
		case OPT_HELP_GPU:
		case OPT_HELP_APPS:
			a->help = c;
			break;
		case ':':
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	return EXIT_OK;
}

static int
print_help(int which)
{
	struct strbuf sb = STRBUF_INIT;

	if (which == OPT_HELP_GPU)
		query_help(QUERY_GPU, &sb);
	else if (which == OPT_HELP_APPS)
		query_help(QUERY_APPS, &sb);
	else
		strbuf_addf(&sb, "%s%s", query_synopsis, query_options_help);
	fwrite(sb.buf, 1, sb.len, stdout);
	strbuf_release(&sb);
	return fflush(stdout) ? EXIT_RUNTIME : EXIT_OK;
}

/* Build q from the arguments; returns EXIT_OK or EXIT_USAGE (with the message printed). */
static int
make_query(const struct query_args *a, struct query *q)
{
	struct err err = ERR_INIT;

	if (a->gpu_fields && a->app_fields) {
		cmd_error("use either --query-gpu or --query-compute-apps, not both");
		return EXIT_USAGE;
	}
	if (!a->gpu_fields && !a->app_fields)
		return usage_error(
		        "'gpuscope query' needs --query-gpu=FIELDS or --query-compute-apps=FIELDS");
	query_init(q, a->gpu_fields ? QUERY_GPU : QUERY_APPS);
	if (query_add_fields(q, a->gpu_fields ? a->gpu_fields : a->app_fields, &err) ||
	    (a->format && query_parse_format(&q->fmt, a->format, &err))) {
		cmd_error("%s", err.msg);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

struct query_round {
	struct query *q;
	bool simulated; /* a round came from simulated GPUs */
};

/* One round of CSV: the header line only in the first, as nvidia-smi -l prints it. */
static void
query_render(void *arg, const struct gpu_snapshot *snap, int fd, struct strbuf *out)
{
	struct query_round *r = arg;

	(void)fd;
	query_print(r->q, snap, out);
	r->q->fmt.noheader = true;
	r->simulated |= snap->simulated;
}

int
cmd_query(int argc, char **argv, struct gs_config *cfg)
{
	struct query_args a;
	struct query q = QUERY_INIT;
	struct repeat_out o = { 0 };
	struct query_round r = { &q, false };
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc)
		goto out;
	if (a.help) {
		rc = print_help(a.help);
		goto out;
	}
	rc = make_query(&a, &q);
	if (rc)
		goto out;

	o.path = a.file;
	rc = repeat_run(cfg, a.ids, q.kind == QUERY_APPS, a.interval, &o, query_render, &r);
	/* the CSV must stay nvidia-smi's, so the label goes to stderr */
	if (r.simulated)
		cmd_error("note: simulated GPUs (a fake NVIDIA driver answered), not real ones");
out:
	query_release(&q);
	return rc;
}
