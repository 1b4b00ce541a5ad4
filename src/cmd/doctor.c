/*
 * gpuscope doctor: is this machine set up right for GPU work? Runs the
 * checks of src/doctor/ and prints their findings, worst first, as text or
 * JSON; exit status 0 all ok, 1 warnings, 2 errors, 3 doctor could not run.
 */
#include "cmd/cmd.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "backend/collect.h"
#include "backend/feed.h"
#include "core/config.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "backend/nvml_probe.h"
#include "doctor/doctor.h"
#include "doctor/logread.h"
#include "record/record.h"

/* the newest kernel log read: enough for days of a busy machine's messages */
#define KLOG_MAX (4u << 20)
/* a --log file, once unpacked: an nvidia-bug-report of a large machine fits */
#define LOG_MAX ((size_t)256 << 20)

#define DOCTOR_EXIT_FAILED 3

static void
doctor_usage(FILE *f)
{
	fputs("usage: gpuscope doctor [--json] [--log FILE] [--watch SEC [-d SEC]]\n"
	      "                       [--fail-on error|warning] [--skip ID,...]\n"
	      "       gpuscope doctor --recording FILE [--since TIME] [--log FILE]\n"
	      "       gpuscope doctor --explain ID | --list\n"
	      "Checks how this machine is set up for GPU work, the GPUs' health, the kernel log\n"
	      "and the workload, and says what to do.\n"
	      "  -j, --json          the findings as one JSON document (schema gpuscope.doctor/1)\n"
	      "      --log=FILE      judge the log in FILE alone ('-' for stdin): dmesg, journalctl\n"
	      "                      (any -o, json too), syslog, container logs, a pasted excerpt,\n"
	      "                      nvidia-bug-report.log.gz, a devcoredump; this machine's set-up\n"
	      "                      is checked only when --only names it\n"
	      "      --watch=SEC     sample the GPUs and their processes for SEC seconds first, to\n"
	      "                      judge trends and workload patterns (\"60\", \"5m\")\n"
	      "  -d, --interval=SEC  seconds between those samples (default 1)\n"
	      "      --recording=FILE  judge a recording of 'gpuscope record' instead of the live\n"
	      "                      GPUs (set-up checks are skipped: they are about this machine now)\n"
	      "      --since=TIME    with --recording: from TIME on (default -1h: the last hour);\n"
	      "                      TIME as for 'replay --from'\n"
	      "      --only=CHECK,...  run only these checks: setup (all of pci, nvidia, devices,\n"
	      "                      cuda-env, toolkit, python, render, video), health, klog,\n"
	      "                      workload, or any of the set-up checks by name\n"
	      "      --skip=ID,...   leave these findings out of the report and the exit status:\n"
	      "                      ids as --list prints them, or a prefix such as health.fan.*\n"
	      "                      (repeatable)\n"
	      "      --fail-on=SEV   the least severity that makes the exit status non-zero:\n"
	      "                      warning (the default) or error (warnings then exit 0)\n"
	      "      --explain=ID    the long explanation of a finding (ids are in the report)\n"
	      "      --list          every finding id, with its title\n"
	      "      --root=DIR      read /sys, /proc, /dev, /etc, /usr and home under DIR\n"
	      "exit status: 0 all ok (notes allowed), 1 warnings, 2 errors, 3 doctor could not run\n"
	      "(with --fail-on error: 0 unless an error)\n",
	      f);
}

/*
 * The GPUs, without processes and without a word on stderr: why there are
 * none is for the checks to say; and how libnvidia-ml answers, asked while
 * the collector still holds it open (a driver without persistence mode
 * starts its GPUs once, not twice). Returns whether snap holds a sample (it
 * is initialised either way).
 */
static bool
read_gpus(struct gs_config *cfg, struct gpu_snapshot *snap, struct nvml_probe *nvml)
{
	struct err err = ERR_INIT;
	struct collector *c = NULL;
	bool ok;

	gpu_snapshot_init(snap);
	ok = collector_open(cfg, &c, &err) == 0 && collector_scan(c, &err) == 0 &&
	     collector_sample(c, snap, 0, &err) == 0;
	nvml_probe(cfg, nvml);
	if (c)
		collector_close(c);
	return ok;
}

/* Samples over time, owned. */
struct window {
	struct gpu_snapshot *s;
	size_t nr, alloc;
};

static struct gpu_snapshot *
window_add(struct window *w)
{
	ALLOC_GROW(w->s, w->nr + 1, w->alloc);
	gpu_snapshot_init(&w->s[w->nr]);
	return &w->s[w->nr++];
}

static void
window_release(struct window *w)
{
	for (size_t i = 0; i < w->nr; i++)
		gpu_snapshot_release(&w->s[i]);
	free(w->s);
	memset(w, 0, sizeof(*w));
}

/*
 * Sample the live GPUs, with their processes, every interval for seconds
 * (or until a signal), and ask NVML for its answer while the collector
 * still holds it. Returns 0, or an exit status after saying why.
 */
static int
watch_gpus(struct gs_config *cfg, double seconds, double interval, struct window *w,
           struct nvml_probe *nvml)
{
	struct err err = ERR_INIT;
	struct collector *c = NULL;
	struct feed *f;
	double start;

	if (collector_open(cfg, &c, &err) < 0 || collector_scan(c, &err) < 0) {
		nvml_probe(cfg, nvml);
		if (c)
			collector_close(c);
		return 0; /* no GPU to watch: the checks say why */
	}
	f = feed_new_live(c, true, interval); /* owns c */
	cmd_stop_on_signals();
	cmd_stop_feed(f);
	fprintf(stderr, "gpuscope doctor: watching the GPUs for %.0f s (Ctrl-C ends it early)\n",
	        seconds);
	start = clock_mono();
	while (!cmd_stopped()) {
		struct gpu_snapshot *s = window_add(w);

		if (feed_next(f, s, &err) != 0 || cmd_stopped()) {
			gpu_snapshot_release(s);
			w->nr--;
			break;
		}
		if (clock_mono() - start + interval > seconds + 1e-6)
			break;
	}
	nvml_probe(cfg, nvml);
	feed_close(f);
	return 0;
}

/* The samples of a recording from since on (default: its last hour). */
static int
read_recording(const char *path, const char *since, struct window *w)
{
	struct err err = ERR_INIT;
	struct rec_reader *r;
	double first, last, from;
	int rc;

	if (rec_reader_open(path, &r, &err) < 0) {
		cmd_error("%s", err.msg);
		return DOCTOR_EXIT_FAILED;
	}
	rec_reader_warn(r);
	rec_reader_span(r, &first, &last);
	if (cmd_parse_time(since ? since : "-1h", first, last, &from) < 0) {
		cmd_error(
		        "--since '%s' is not a time: give epoch seconds, 2026-11-30T03:00, 03:00, "
		        "-10m or +90s",
		        since);
		rec_reader_close(r);
		return DOCTOR_EXIT_FAILED;
	}
	if (from > last) {
		cmd_error("--since '%s' is after the recording's end", since ? since : "-1h");
		rec_reader_close(r);
		return DOCTOR_EXIT_FAILED;
	}
	if (from > first && rec_reader_seek(r, from, &err) < 0) {
		cmd_error("%s", err.msg);
		rec_reader_close(r);
		return DOCTOR_EXIT_FAILED;
	}
	for (;;) {
		struct gpu_snapshot *s = window_add(w);

		rc = rec_reader_next(r, s, &err);
		if (rc <= 0) {
			gpu_snapshot_release(s);
			w->nr--;
			break;
		}
		if (s->time < from - 0.5) { /* the sample before from, where seek put us */
			gpu_snapshot_release(s);
			w->nr--;
		}
	}
	rec_reader_close(r);
	if (rc < 0) {
		cmd_error("%s", err.msg);
		return DOCTOR_EXIT_FAILED;
	}
	if (!w->nr) {
		cmd_error("%s: no sample from %s on", path, since ? since : "-1h");
		return DOCTOR_EXIT_FAILED;
	}
	return 0;
}

/*
 * Mark in run[] the checks that list names ("setup" for every set-up
 * check); 0, or an exit status after naming what is not a check.
 */
static int
select_checks(const char *list, bool *run)
{
	size_t n = 0;

	while (dr_checks[n].name)
		n++;
	memset(run, 0, n * sizeof(*run));
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		bool found = false;

		for (size_t i = 0; i < n; i++)
			if ((len == 5 && !strncmp(p, "setup", 5) && dr_checks[i].setup) ||
			    (strlen(dr_checks[i].name) == len &&
			     !strncmp(p, dr_checks[i].name, len)))
				found = run[i] = true;
		if (!found) {
			struct strbuf names = STRBUF_INIT;

			for (size_t i = 0; i < n; i++)
				strbuf_addf(&names, ", %s", dr_checks[i].name);
			cmd_error("--only: '%.*s' is not a check (setup%s)", (int)len, p,
			          names.buf);
			strbuf_release(&names);
			return DOCTOR_EXIT_FAILED;
		}
		p += len + (p[len] == ',');
	}
	return 0;
}

/*
 * --log without --only judges the text alone: it may come from another
 * machine, so this one's set-up is not checked; the health, bench and
 * workload checks run only on the samples --watch or --recording asks for.
 */
static void
log_checks(bool *run, bool sampled)
{
	for (size_t i = 0; dr_checks[i].name; i++)
		run[i] = !strcmp(dr_checks[i].name, "klog") || (sampled && !dr_checks[i].setup);
}

/* a --skip id, or prefix, at most this long */
#define SKIP_ID_MAX 128
/* --skip options at most */
#define SKIP_MAX 32

/*
 * The next id of a --skip list (ids split by commas) from *p into id;
 * returns false at the end of the list.
 */
static bool
next_skip(const char **p, char id[SKIP_ID_MAX])
{
	size_t len;

	while (**p == ',')
		(*p)++;
	if (!**p)
		return false;
	len = strcspn(*p, ",");
	snprintf(id, SKIP_ID_MAX, "%.*s", (int)(len < SKIP_ID_MAX ? len : SKIP_ID_MAX - 1), *p);
	if (len >= SKIP_ID_MAX)
		id[0] = '?'; /* too long to be an id: named as unknown */
	*p += len;
	return true;
}

/*
 * 0 when every id of a --skip list names a finding, or an exit status after
 * naming one that does not.
 */
static int
check_skips(const char *list)
{
	char id[SKIP_ID_MAX];

	while (next_skip(&list, id))
		if (!dr_catalog_matches(id)) {
			cmd_error(
			        "--skip: no finding is called '%s': 'gpuscope doctor --list' lists "
			        "the ids",
			        id);
			return DOCTOR_EXIT_FAILED;
		}
	return 0;
}

/* Take the findings the --skip lists name out of r. */
static void
drop_skips(struct dr_report *r, const char *const *skips, size_t nr)
{
	char id[SKIP_ID_MAX];

	for (size_t i = 0; i < nr; i++)
		for (const char *p = skips[i]; next_skip(&p, id);)
			dr_report_drop(r, id);
}

static const char *
env_get(const char *name)
{
	return getenv(name);
}

static int
explain(const char *id)
{
	const struct dr_explain *e = dr_explain_find(id);

	if (!e) {
		cmd_error("no finding is called '%s': 'gpuscope doctor --list' lists them", id);
		return DOCTOR_EXIT_FAILED;
	}
	printf("%s: %s\n\n%s\n", e->id, e->title, e->text);
	return EXIT_OK;
}

static int
list(void)
{
	size_t n = dr_catalog_list(NULL, 0);
	const struct dr_explain **e = xcalloc(n ? n : 1, sizeof(*e));

	dr_catalog_list(e, n);
	for (size_t i = 0; i < n; i++)
		printf("%-40s %s\n", e[i]->id, e[i]->title);
	free(e);
	return EXIT_OK;
}

int
cmd_doctor(int argc, char **argv, struct gs_config *cfg)
{
	enum {
		OPT_EXPLAIN = 256,
		OPT_LIST,
		OPT_LOG,
		OPT_WATCH,
		OPT_RECORDING,
		OPT_SINCE,
		OPT_ONLY,
		OPT_SKIP,
		OPT_FAIL_ON
	};
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "log", required_argument, NULL, OPT_LOG },
		{ "watch", required_argument, NULL, OPT_WATCH },
		{ "interval", required_argument, NULL, 'd' },
		{ "recording", required_argument, NULL, OPT_RECORDING },
		{ "since", required_argument, NULL, OPT_SINCE },
		{ "only", required_argument, NULL, OPT_ONLY },
		{ "skip", required_argument, NULL, OPT_SKIP },
		{ "fail-on", required_argument, NULL, OPT_FAIL_ON },
		{ "explain", required_argument, NULL, OPT_EXPLAIN },
		{ "list", no_argument, NULL, OPT_LIST },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dr_report r = DR_REPORT_INIT;
	struct dr_ctx ctx = { 0 };
	struct nvml_probe nvml;
	struct strbuf klog = STRBUF_INIT;
	char klog_why[512] = "";
	gid_t gids[256];
	unsigned groups[256];
	int nr_gids;
	struct gpu_snapshot snap;
	bool have_snap = false;
	struct strbuf out = STRBUF_INIT;
	const char *skips[SKIP_MAX];
	size_t nr_skips = 0;
	struct window win = { NULL, 0, 0 };
	struct dr_window dw;
	const char *log_path = NULL, *recording = NULL, *since = NULL, *only = NULL;
	bool run[64];
	double watch = 0, interval = 1;
	bool json = false;
	int c, rc;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jhd:", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case OPT_LOG:
			log_path = optarg;
			break;
		case OPT_WATCH:
			if (cmd_parse_seconds(optarg, &watch) < 0 || watch <= 0) {
				cmd_error("--watch needs a duration, such as 60, 90s or 5m");
				return DOCTOR_EXIT_FAILED;
			}
			break;
		case 'd':
			if (cmd_parse_seconds(optarg, &interval) < 0 || interval < 0.1) {
				cmd_error(
				        "--interval needs at least 0.1 s (\"1\", \"500ms\", \"2s\")");
				return DOCTOR_EXIT_FAILED;
			}
			break;
		case OPT_RECORDING:
			recording = optarg;
			break;
		case OPT_SINCE:
			since = optarg;
			break;
		case OPT_ONLY:
			only = optarg;
			break;
		case OPT_SKIP:
			if (check_skips(optarg))
				return DOCTOR_EXIT_FAILED;
			if (nr_skips == SKIP_MAX) {
				cmd_error("--skip: at most %d of them; give the ids as one list "
				          "(--skip A,B,C)",
				          SKIP_MAX);
				return DOCTOR_EXIT_FAILED;
			}
			skips[nr_skips++] = optarg;
			break;
		case OPT_FAIL_ON:
			if (!strcmp(optarg, "error")) {
				r.fail_on = DR_ERROR;
			} else if (!strcmp(optarg, "warning")) {
				r.fail_on = DR_WARNING;
			} else {
				cmd_error("--fail-on '%s': give error or warning", optarg);
				return DOCTOR_EXIT_FAILED;
			}
			break;
		case OPT_EXPLAIN:
			return explain(optarg);
		case OPT_LIST:
			return list();
		case 'h':
			doctor_usage(stdout);
			return EXIT_OK;
		default:
			cmd_bad_option(c, argv, doctor_usage);
			return DOCTOR_EXIT_FAILED;
		}
	}
	if (optind < argc) {
		cmd_error("unexpected argument '%s'", argv[optind]);
		doctor_usage(stderr);
		return DOCTOR_EXIT_FAILED;
	}
	if (cfg->simulated) {
		cmd_error(
		        "doctor checks this machine's own set-up, which --demo does not simulate: "
		        "run 'gpuscope doctor' without --demo");
		return DOCTOR_EXIT_FAILED;
	}
	for (size_t i = 0; i < sizeof(run) / sizeof(run[0]); i++)
		run[i] = true;
	if (only && select_checks(only, run))
		return DOCTOR_EXIT_FAILED;
	if (log_path && !only)
		log_checks(run, watch > 0 || recording);
	if (since && !recording) {
		cmd_error("--since goes with --recording FILE");
		return DOCTOR_EXIT_FAILED;
	}
	if (recording && watch > 0) {
		cmd_error(
		        "--watch samples the live GPUs; --recording reads samples: one or the other");
		return DOCTOR_EXIT_FAILED;
	}
	memset(&nvml, 0, sizeof(nvml));
	nvml.init_rc = -1;
	gpu_snapshot_init(&snap);
	if (recording) {
		rc = read_recording(recording, since, &win);
		if (rc) {
			/* the samples read, or none but the array grown for the first */
			window_release(&win);
			return rc;
		}
	} else if (watch > 0) {
		cfg->want_procs = true;
		watch_gpus(cfg, watch, interval, &win, &nvml);
	} else if (!log_path || only) {
		cfg->want_procs =
		        false; /* one sample: the set-up and health, not who uses the GPUs */
		have_snap = read_gpus(cfg, &snap, &nvml);
	}
	/* the checks reason about GPUs: a MIG device's processes are its GPU's */
	for (size_t i = 0; i < win.nr; i++)
		gpu_snapshot_fold_mig(&win.s[i]);
	if (have_snap)
		gpu_snapshot_fold_mig(&snap);
	ctx.cfg = cfg;
	ctx.getenv = env_get;
	ctx.nvml = recording ? NULL : &nvml;
	ctx.recorded = recording != NULL;
	if (win.nr) {
		dw.s = win.s;
		dw.nr = win.nr;
		dw.interval = recording && win.nr > 1 ? (win.s[win.nr - 1].time - win.s[0].time) /
		                                                (double)(win.nr - 1)
		                                      : interval;
		dw.source = recording ? recording : "live";
		ctx.window = win.nr > 1 ? &dw : NULL;
		ctx.snap = &win.s[win.nr - 1];
	} else {
		ctx.snap = have_snap ? &snap : NULL;
	}
	if (log_path) {
		char why[512];

		if (!strcmp(log_path, "-") && isatty(STDIN_FILENO))
			fputs("gpuscope doctor: reading the log from the terminal: paste it, then "
			      "Ctrl-D\n",
			      stderr);
		if (dr_log_load(log_path, &klog, LOG_MAX, why, sizeof(why)) < 0) {
			cmd_error("--log %s", why);
			strbuf_release(&klog);
			window_release(&win);
			gpu_snapshot_release(&snap);
			return DOCTOR_EXIT_FAILED;
		}
		ctx.klog = klog.buf;
		ctx.klog_source = strcmp(log_path, "-") ? log_path : "standard input";
		ctx.klog_foreign = true;
	} else if (recording) {
		ctx.klog_why = "the kernel log of the recording's time was not given: add "
		               "--log FILE (a saved dmesg or 'journalctl -k' of that time)";
	} else if (dr_klog_read(cfg, &klog, KLOG_MAX, klog_why, sizeof(klog_why)) == 0) {
		ctx.klog = klog.buf;
		ctx.klog_source = "/dev/kmsg";
	} else {
		char jwhy[256];

		/* dmesg_restrict: the journal may still be readable (systemd-journal, adm) */
		if (dr_klog_journal(cfg, &klog, KLOG_MAX, jwhy, sizeof(jwhy)) == 0) {
			ctx.klog = klog.buf;
			ctx.klog_source = "journalctl --dmesg --boot";
		} else {
			size_t l = strlen(klog_why);

			snprintf(klog_why + l, sizeof(klog_why) - l, "; %s", jwhy);
			ctx.klog_why = klog_why;
		}
	}
	ctx.uid = getuid();
	ctx.gid = getgid();
	nr_gids = getgroups(sizeof(gids) / sizeof(gids[0]), gids);
	for (int i = 0; i < nr_gids; i++)
		groups[i] = gids[i];
	ctx.groups = groups;
	ctx.nr_groups = nr_gids > 0 ? (size_t)nr_gids : 0;
	for (size_t i = 0; dr_checks[i].name; i++)
		if (run[i] && !(recording && dr_checks[i].setup))
			dr_checks[i].run(&ctx, &r);
	drop_skips(&r, skips, nr_skips);
	dr_report_unroot(&r, cfg->root);
	if (json)
		dr_json(&out, &r, clock_now(cfg));
	else
		dr_text(&out, &r, isatty(STDOUT_FILENO) && !getenv("NO_COLOR"));
	rc = dr_exit_code(&r);
	if (fwrite(out.buf, 1, out.len, stdout) != out.len || fflush(stdout) != 0) {
		cmd_error("cannot write the report");
		rc = DOCTOR_EXIT_FAILED;
	}
	strbuf_release(&out);
	strbuf_release(&klog);
	dr_report_release(&r);
	gpu_snapshot_release(&snap);
	window_release(&win);
	return rc;
}
