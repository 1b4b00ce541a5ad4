/*
 * gpuscope doctor: is this machine set up right for GPU work? Runs the
 * checks of src/doctor/ and prints their findings, worst first, as text or
 * JSON; exit status 0 all ok, 1 warnings, 2 errors, 3 doctor could not run.
 */
#include "cmd.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "backend/collect.h"
#include "core/config.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "backend/nvml_probe.h"
#include "doctor/doctor.h"

/* the newest kernel log read: enough for days of a busy machine's messages */
#define KLOG_MAX (4u << 20)

#define DOCTOR_EXIT_FAILED 3

static void
doctor_usage(FILE *f)
{
	fputs("usage: gpuscope doctor [--json] [--explain ID | --list]\n"
	      "Checks how this machine is set up for GPU work and says what to do.\n"
	      "  -j, --json          the findings as one JSON document (schema gpuscope.doctor/1)\n"
	      "      --explain=ID    the long explanation of a finding (ids are in the report)\n"
	      "      --list          every finding id, with its title\n"
	      "      --root=DIR      read /sys, /proc, /dev, /etc, /usr and home under DIR\n"
	      "exit status: 0 all ok (notes allowed), 1 warnings, 2 errors, 3 doctor could not run\n",
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
	enum { OPT_EXPLAIN = 256, OPT_LIST };
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
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
	bool have_snap;
	struct strbuf out = STRBUF_INIT;
	bool json = false;
	int c, rc;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
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
	cfg->want_procs = false; /* part 1 checks the set-up, not who uses the GPUs */
	have_snap = read_gpus(cfg, &snap, &nvml);
	ctx.cfg = cfg;
	ctx.getenv = env_get;
	ctx.snap = have_snap ? &snap : NULL;
	ctx.nvml = &nvml;
	if (dr_klog_read(cfg, &klog, KLOG_MAX, klog_why, sizeof(klog_why)) == 0)
		ctx.klog = klog.buf;
	else
		ctx.klog_why = klog_why;
	ctx.uid = getuid();
	ctx.gid = getgid();
	nr_gids = getgroups(sizeof(gids) / sizeof(gids[0]), gids);
	for (int i = 0; i < nr_gids; i++)
		groups[i] = gids[i];
	ctx.groups = groups;
	ctx.nr_groups = nr_gids > 0 ? (size_t)nr_gids : 0;
	for (const struct dr_check *chk = dr_checks; chk->name; chk++)
		chk->run(&ctx, &r);
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
	return rc;
}
