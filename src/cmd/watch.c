/*
 * gpuscope watch: one line per GPU per interval, like nvidia-smi dmon and
 * nvidia-smi -l, as an aligned table for people, CSV in nvidia-smi's
 * spelling, or newline-delimited JSON (each line a document of its own).
 * Fields are named as nvidia-smi's --query-gpu names them; every line is
 * flushed as it is written, so a pipe sees it at once.
 */
#include "cmd/cmd.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/feed.h"
#include "core/config.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "core/json.h"
#include "doctor/live.h"
#include "front/json.h"
#include "front/query.h"

enum watch_format { WF_TABLE, WF_CSV, WF_NDJSON };

/* What the table shows when no --fields are given (dmon's choice, and memory). */
static const char default_fields[] = "utilization.gpu,utilization.memory,memory.used,memory.total,"
                                     "power.draw,temperature.gpu,clocks.sm,clocks.mem,pstate";

/* Short column labels for the table; other fields are headed by their name. */
static const struct {
	const char *field, *label, *unit;
} labels[] = {
	{ "index", "gpu", "idx" },
	{ "utilization.gpu", "gpu", "%" },
	{ "utilization.memory", "mem", "%" },
	{ "utilization.encoder", "enc", "%" },
	{ "utilization.decoder", "dec", "%" },
	{ "prof.sm_active", "smact", "%" },
	{ "prof.sm_occupancy", "smocc", "%" },
	{ "prof.tensor_active", "tensor", "%" },
	{ "prof.dram_active", "dram", "%" },
	{ "memory.used", "used", "MiB" },
	{ "memory.total", "total", "MiB" },
	{ "memory.free", "free", "MiB" },
	{ "memory.reserved", "resvd", "MiB" },
	{ "power.draw", "pwr", "W" },
	{ "power.draw.instant", "pwr", "W" },
	{ "power.limit", "plim", "W" },
	{ "temperature.gpu", "temp", "C" },
	{ "temperature.memory", "mtemp", "C" },
	{ "clocks.current.sm", "sm", "MHz" },
	{ "clocks.current.memory", "mclk", "MHz" },
	{ "clocks.current.graphics", "gclk", "MHz" },
	{ "clocks.current.video", "vclk", "MHz" },
	{ "fan.speed", "fan", "%" },
	{ "pstate", "pstate", "" },
	{ "pcie.link.gen.gpucurrent", "gen", "" },
	{ "pcie.link.width.current", "width", "" },
};

struct watch {
	enum watch_format format;
	struct query q; /* the fields (QUERY_GPU ids) */
	bool fields_given;
	struct query_format csv;
	unsigned *width; /* table: width of each column */
	bool *left;      /* table: left-aligned (text) column */
	bool header_done;
};

static void
watch_usage(FILE *f)
{
	fputs("usage: gpuscope watch [-i ID[,ID...]] [-d SEC] [-c COUNT] [--format table|csv[,noheader][,nounits]|ndjson]\n"
	      "                      [--fields FIELD,...] [--findings]\n"
	      "run 'gpuscope --help' for details, 'gpuscope query --help-query-gpu' for the fields\n",
	      f);
}

static void
label_of(const char *name, const char **label, const char **unit)
{
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
		if (!strcmp(labels[i].field, name)) {
			*label = labels[i].label;
			*unit = labels[i].unit;
			return;
		}
	}
	*label = name;
	*unit = "";
}

/* A value of query_value() that means "unknown" ("[N/A]", "[GPU is lost]", "N/A"). */
static bool
is_unknown(const char *v)
{
	return !*v || v[0] == '[' || !strcmp(v, "N/A");
}

static void
local_hms(char *buf, size_t size, double t)
{
	time_t s = (time_t)t;
	struct tm tm;

	if (!localtime_r(&s, &tm) || !strftime(buf, size, "%H:%M:%S", &tm))
		snprintf(buf, size, "-");
}

/* The table: two header lines (labels, units), then aligned values. */
static void
table_lines(struct watch *w, const struct gpu_snapshot *snap, struct strbuf *out)
{
	struct strbuf v = STRBUF_INIT;
	char hms[16];

	if (!w->header_done) {
		const char *label, *unit;

		w->width = xcalloc(w->q.nr ? w->q.nr : 1, sizeof(*w->width));
		w->left = xcalloc(w->q.nr ? w->q.nr : 1, sizeof(*w->left));
		for (size_t i = 0; i < w->q.nr; i++) {
			size_t n;

			label_of(query_field_name(QUERY_GPU, w->q.field[i]), &label, &unit);
			n = strlen(label) > strlen(unit) ? strlen(label) : strlen(unit);
			for (size_t d = 0; d < snap->nr_dev; d++) {
				strbuf_reset(&v);
				query_value(QUERY_GPU, w->q.field[i], snap, d, true, &v);
				if (is_unknown(v.buf))
					continue;
				if (v.len + 1 > n)
					n = v.len + 1;
				if (!json_text_is_number(v.buf))
					w->left[i] = true;
			}
			w->width[i] = (unsigned)(n < 4 ? 4 : n);
		}
		for (int line = 0; line < 2; line++) {
			strbuf_addstr(out, line ? "# HH:MM:SS  idx" : "# time      gpu");
			for (size_t i = 0; i < w->q.nr; i++) {
				label_of(query_field_name(QUERY_GPU, w->q.field[i]), &label, &unit);
				strbuf_addf(out, w->left[i] ? "  %-*s" : "  %*s", (int)w->width[i],
				            line ? unit : label);
			}
			strbuf_rtrim(out);
			strbuf_addch(out, '\n');
		}
		w->header_done = true;
	}
	local_hms(hms, sizeof(hms), snap->time);
	for (size_t d = 0; d < snap->nr_dev; d++) {
		const struct gpu_device *dev = &snap->dev[d];
		char idx[24];

		/* a MIG device: "GPU:MIG dev", under its GPU */
		gpu_device_label(snap, dev, idx, sizeof(idx));
		strbuf_addf(out, "  %-8s  %3s", hms, idx);
		for (size_t i = 0; i < w->q.nr; i++) {
			strbuf_reset(&v);
			query_value(QUERY_GPU, w->q.field[i], snap, d, true, &v);
			strbuf_addf(out, w->left[i] ? "  %-*s" : "  %*s", (int)w->width[i],
			            is_unknown(v.buf) ? "-" : v.buf);
		}
		strbuf_rtrim(out);
		if (dev->state != DEV_OK)
			strbuf_addf(out, "  [%s]", dev_state_key(dev->state));
		strbuf_addch(out, '\n');
	}
	strbuf_release(&v);
}

/* ndjson with --fields: time, the GPU, then each field, typed. */
static void
ndjson_field_lines(struct watch *w, const struct gpu_snapshot *snap, struct strbuf *out)
{
	struct strbuf v = STRBUF_INIT;

	for (size_t d = 0; d < snap->nr_dev; d++) {
		const struct gpu_device *dev = &snap->dev[d];

		strbuf_addstr(out, "{\"schema\":");
		json_str(out, JSON_WATCH_SCHEMA);
		strbuf_addstr(out, ",\"time\":");
		json_num(out, snap->time, 3);
		strbuf_addf(out, ",\"index\":%u,\"uuid\":", dev->index);
		json_str(out, dev->uuid);
		strbuf_addstr(out, ",\"state\":");
		json_str(out, dev_state_key(dev->state));
		for (size_t i = 0; i < w->q.nr; i++) {
			strbuf_addch(out, ',');
			json_str(out, query_field_name(QUERY_GPU, w->q.field[i]));
			strbuf_addch(out, ':');
			strbuf_reset(&v);
			query_value(QUERY_GPU, w->q.field[i], snap, d, true, &v);
			if (is_unknown(v.buf))
				strbuf_addstr(out, "null");
			else if (json_text_is_number(v.buf))
				strbuf_addbuf(out, &v);
			else
				json_str(out, v.buf);
		}
		strbuf_addstr(out, "}\n");
	}
	strbuf_release(&v);
}

static void
format_sample(struct watch *w, const struct gpu_snapshot *snap, struct strbuf *out)
{
	switch (w->format) {
	case WF_TABLE:
		table_lines(w, snap, out);
		break;
	case WF_CSV: {
		struct query q = w->q;

		q.fmt = w->csv;
		q.fmt.noheader = w->csv.noheader || w->header_done;
		query_print(&q, snap, out);
		w->header_done = true;
		break;
	}
	case WF_NDJSON:
		if (w->fields_given)
			ndjson_field_lines(w, snap, out);
		else
			for (size_t d = 0; d < snap->nr_dev; d++)
				json_watch_line(out, snap, d);
		break;
	}
}

/*
 * --findings: doctor's health and workload findings over the last samples,
 * a record of their own ("gpuscope.findings/1") when they change.
 */
static void
findings_record(struct dr_live *live, const struct gpu_snapshot *snap, struct strbuf *out)
{
	dr_live_push(live, snap);
	if (!dr_live_update(live) || !live->changed)
		return;
	dr_live_doc(out, &live->report, snap->time, live->nr);
	strbuf_addch(out, '\n');
}

static int
parse_format(struct watch *w, const char *spec)
{
	struct err err = ERR_INIT;

	if (!strcmp(spec, "table")) {
		w->format = WF_TABLE;
	} else if (!strcmp(spec, "ndjson") || !strcmp(spec, "json")) {
		w->format = WF_NDJSON;
	} else if (!strncmp(spec, "csv", 3)) {
		if (query_parse_format(&w->csv, spec, &err) < 0) {
			cmd_error("--format: %s", err.msg);
			return -1;
		}
		w->format = WF_CSV;
	} else {
		cmd_error("--format takes table, csv[,noheader][,nounits] or ndjson, not '%s'",
		          spec);
		return -1;
	}
	return 0;
}

int
cmd_watch(int argc, char **argv, struct gs_config *cfg)
{
	enum { OPT_FIELDS = 256, OPT_FORMAT, OPT_NOHEADER, OPT_FINDINGS };
	static const struct option opts[] = {
		{ "id", required_argument, NULL, 'i' },
		{ "interval", required_argument, NULL, 'd' },
		{ "loop", required_argument, NULL, 'l' },
		{ "count", required_argument, NULL, 'c' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "fields", required_argument, NULL, OPT_FIELDS },
		{ "query-gpu", required_argument, NULL, OPT_FIELDS },
		{ "findings", no_argument, NULL, OPT_FINDINGS },
		{ "timeout", required_argument, NULL, CMD_OPT_TIMEOUT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct watch w = { 0 };
	struct err err = ERR_INIT;
	const char *ids = NULL, *fields = NULL;
	double interval = 1.0;
	unsigned long count = 0, done = 0;
	struct feed *feed = NULL;
	struct strbuf out = STRBUF_INIT;
	bool trouble = false, findings = false;
	struct dr_live *live = NULL;
	int c, rc = EXIT_OK;

	query_init(&w.q, QUERY_GPU);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:d:l:c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			ids = optarg;
			break;
		case 'd':
		case 'l':
			if (cmd_parse_seconds(optarg, &interval) < 0 || interval < 0.05 ||
			    interval > 86400) {
				cmd_error(
				        "--interval takes a duration from 0.05 s to 1 d (\"2\", \"500ms\", \"1m\"), not '%s'",
				        optarg);
				rc = EXIT_USAGE;
				goto out;
			}
			break;
		case 'c':
			if (cmd_parse_count("--count", optarg, 1, 1000000000, &count) < 0) {
				rc = EXIT_USAGE;
				goto out;
			}
			break;
		case OPT_FORMAT:
			if (parse_format(&w, optarg) < 0) {
				rc = EXIT_USAGE;
				goto out;
			}
			break;
		case OPT_FIELDS:
			fields = optarg;
			break;
		case OPT_FINDINGS:
			findings = true;
			break;
		default:
			rc = cmd_common_option(c, argv, cfg, NULL, watch_usage);
			if (rc != CMD_NEXT_OPTION)
				goto out;
			rc = EXIT_OK;
		}
	}
	rc = cmd_no_operands(argc, argv, watch_usage);
	if (rc != EXIT_OK)
		goto out;
	if (findings && w.format != WF_NDJSON) {
		cmd_error("--findings needs --format ndjson (its findings are JSON records)");
		rc = EXIT_USAGE;
		goto out;
	}
	w.fields_given = fields != NULL;
	if (!fields)
		fields = w.format == WF_CSV ? "timestamp,index,name," : "";
	if ((*fields && query_add_fields(&w.q, fields, &err) < 0) ||
	    (!w.fields_given && w.format != WF_NDJSON &&
	     query_add_fields(&w.q, default_fields, &err) < 0)) {
		cmd_error("--fields: %s", err.msg);
		rc = EXIT_USAGE;
		goto out;
	}
	if (w.fields_given && !w.q.nr) {
		cmd_error("--fields names no field; 'gpuscope query --help-query-gpu' lists them");
		rc = EXIT_USAGE;
		goto out;
	}

	cmd_stop_on_signals();
	rc = cmd_open_feed(cfg, ids, findings, interval, &feed);
	if (rc != EXIT_OK)
		goto out;
	if (findings) {
		live = xmalloc(sizeof(*live));
		dr_live_init(live, interval, cfg->replay != NULL);
	}
	cmd_stop_feed(feed);
	while (!cmd_stopped() && (!count || done < count)) {
		struct gpu_snapshot snap;
		int r;

		gpu_snapshot_init(&snap);
		r = feed_next(feed, &snap, &err);
		if (r == FEED_END || (r == 0 && cmd_stopped() && done)) {
			gpu_snapshot_release(&snap);
			break;
		}
		if (r < 0) {
			cmd_error("%s", err.msg);
			gpu_snapshot_release(&snap);
			rc = EXIT_RUNTIME;
			break;
		}
		strbuf_reset(&out);
		format_sample(&w, &snap, &out);
		if (live)
			findings_record(live, &snap, &out);
		for (size_t d = 0; d < snap.nr_dev; d++)
			if (snap.dev[d].state != DEV_OK && snap.dev[d].state != DEV_SUSPENDED)
				trouble = true;
		gpu_snapshot_release(&snap);
		if (fwrite(out.buf, 1, out.len, stdout) != out.len || fflush(stdout) != 0) {
			cmd_error("cannot write the output: %s", strerror(errno));
			rc = EXIT_RUNTIME;
			break;
		}
		done++;
	}
	if (rc == EXIT_OK && trouble)
		rc = EXIT_PROBLEMS;
out:
	cmd_stop_feed(NULL); /* a signal from now on must not wake a closed feed */
	feed_close(feed);
	if (live)
		dr_live_release(live);
	free(live);
	strbuf_release(&out);
	query_release(&w.q);
	free(w.width);
	free(w.left);
	return rc;
}
