/*
 * gpuscope serve: a Prometheus exporter and a live web page (docs/serve.md).
 *
 * Three kinds of thread: the collection thread samples the GPUs every
 * interval, runs doctor's checks every doctor interval, and prepares every
 * response body from the sample; libmicrohttpd's thread answers requests
 * from the bodies prepared last (serve/http.c), so a scrape never waits for
 * a GPU, with helpers of its own there (bcrypt's checkers, the watchdog of
 * slow clients); the main thread waits for a signal to stop.
 */
#include "cmd/cmd.h"

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/collect.h"
#include "backend/nvml_probe.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "doctor/doctor.h"
#include "doctor/live.h"
#include "front/json.h"
#include "front/prom.h"
#include "serve/http.h"
#include "serve/webconfig.h"

/* the web page, data/web/index.html, built in (serve/web_data.S) */
extern const char gpuscope_web_html[], gpuscope_web_html_end[];

#define SERVE_DEFAULT_LISTEN "127.0.0.1:9947"
#define SERVE_WINDOW_MAX     30         /* samples kept for doctor's checks over time */
#define SERVE_KLOG_MAX       (2u << 20) /* bytes of kernel log read for each doctor run */

/* doctor's checks that concern the GPUs and the driver, not the environment of whoever runs serve
 */
static const char *const serve_checks[] = { "pci", "nvidia", "health", "klog", "workload" };

struct serve {
	struct gs_config *cfg;
	struct collector *c;
	struct serve_state st;
	double interval, doctor_interval;
	unsigned max_procs;
	bool dcgm_names; /* --names dcgm: dcgm-exporter's names (prom_write_dcgm) */
	struct nvml_probe probe;

	/* the last samples, oldest first (for doctor's checks over time) */
	struct gpu_snapshot win[SERVE_WINDOW_MAX];
	size_t nr_win, max_win;

	/* doctor's findings, counted by id and severity (ids are the catalog's static strings) */
	struct prom_finding *findings;
	size_t nr_findings, alloc_findings;
	bool findings_known;
	double next_doctor;
	struct dr_live *live; /* health and workload every second, for the web page */

	unsigned long errors;
	char last_error[256];

	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
};

static void
serve_usage(FILE *f)
{
	fputs("usage: gpuscope serve [--listen ADDR] [--web-config FILE] [-d SEC] [--processes N]\n"
	      "                      [--web.listen-address ADDR] [--web.config.file FILE]\n"
	      "                      [--doctor-interval SEC] [--max-connections N]\n"
	      "                      [--connection-timeout SEC] [--user NAME]\n"
	      "                      [--names gpuscope|dcgm] [-i ID[,ID...]] [--timeout SEC]\n"
	      "       gpuscope serve --hash-password < FILE\n"
	      "run 'gpuscope --help' for details\n",
	      f);
}

static const char *
no_env(const char *name)
{
	(void)name;
	return NULL;
}

static void
count_finding(struct serve *sv, const char *id, const char *severity)
{
	for (size_t i = 0; i < sv->nr_findings; i++)
		if (!strcmp(sv->findings[i].id, id) &&
		    !strcmp(sv->findings[i].severity, severity)) {
			sv->findings[i].count++;
			return;
		}
	ALLOC_GROW(sv->findings, sv->nr_findings + 1, sv->alloc_findings);
	sv->findings[sv->nr_findings++] = (struct prom_finding){ id, severity, 1 };
}

/* doctor's checks on the samples kept; the findings feed gpuscope_finding and /api/v1/findings */
static void
run_doctor(struct serve *sv)
{
	struct dr_report r = DR_REPORT_INIT;
	struct dr_ctx ctx;
	struct dr_window w;
	struct strbuf klog = STRBUF_INIT, out = STRBUF_INIT;
	char why[512] = "";
	gid_t gids[64];
	unsigned groups[64];
	int nr_gids;

	memset(&ctx, 0, sizeof(ctx));
	ctx.cfg = sv->cfg;
	ctx.getenv = no_env;
	ctx.nvml = &sv->probe;
	ctx.snap = sv->nr_win ? &sv->win[sv->nr_win - 1] : NULL;
	if (sv->nr_win > 1) {
		w.s = sv->win;
		w.nr = sv->nr_win;
		w.interval = sv->interval;
		w.source = "live";
		ctx.window = &w;
	}
	if (dr_klog_read(sv->cfg, &klog, SERVE_KLOG_MAX, why, sizeof(why)) == 0) {
		ctx.klog = klog.buf ? klog.buf : "";
		ctx.klog_source = "/dev/kmsg";
	} else {
		ctx.klog_why = why;
	}
	ctx.uid = getuid();
	ctx.gid = getgid();
	nr_gids = getgroups(64, gids);
	for (int i = 0; i < nr_gids; i++)
		groups[i] = gids[i];
	ctx.groups = groups;
	ctx.nr_groups = nr_gids > 0 ? (size_t)nr_gids : 0;
	for (size_t i = 0; dr_checks[i].name; i++)
		for (size_t k = 0; k < sizeof(serve_checks) / sizeof(serve_checks[0]); k++)
			if (!strcmp(dr_checks[i].name, serve_checks[k]))
				dr_checks[i].run(&ctx, &r);
	dr_report_unroot(&r, sv->cfg->root);

	sv->nr_findings = 0;
	for (size_t i = 0; i < r.nr; i++)
		if (r.f[i].severity != DR_OK)
			count_finding(sv, r.f[i].id, dr_severity_key(r.f[i].severity));
	sv->findings_known = true;
	dr_json(&out, &r, clock_now(sv->cfg));
	serve_state_set(&sv->st, SB_FINDINGS, http_body_new(&out, "application/json"));
	dr_report_release(&r);
	strbuf_release(&klog);
}

/* health.* and workload.* over the last samples, at most once a second: /api/v1/findings/live */
static void
run_live(struct serve *sv, const struct gpu_snapshot *snap)
{
	struct strbuf sb = STRBUF_INIT;

	dr_live_push(sv->live, snap);
	if (!dr_live_update(sv->live))
		return;
	dr_live_doc(&sb, &sv->live->report, snap->time, sv->live->nr);
	strbuf_addch(&sb, '\n');
	serve_state_set(&sv->st, SB_LIVE, http_body_new(&sb, "application/json"));
}

/* Keep snap (taken over) as the newest sample of the window. */
static void
window_push(struct serve *sv, struct gpu_snapshot *snap)
{
	if (sv->nr_win == sv->max_win) {
		gpu_snapshot_release(&sv->win[0]);
		memmove(&sv->win[0], &sv->win[1], (sv->nr_win - 1) * sizeof(sv->win[0]));
		sv->nr_win--;
	}
	sv->win[sv->nr_win++] = *snap;
	gpu_snapshot_init(snap);
}

/* Every body of the newest sample, made now so that requests only send them. */
static void
publish(struct serve *sv, double seconds)
{
	const struct gpu_snapshot *s = &sv->win[sv->nr_win - 1];
	struct prom_opts o = { sv->max_procs, seconds,         sv->errors,        false,
		               sv->findings,  sv->nr_findings, sv->findings_known };
	struct strbuf sb = STRBUF_INIT;

	if (sv->dcgm_names) {
		/* dcgm-exporter speaks the text format only: both bodies are it */
		prom_write_dcgm(&sb, s);
		serve_state_set(&sv->st, SB_OPENMETRICS, http_body_new(&sb, PROM_CONTENT_TYPE));
		prom_write_dcgm(&sb, s);
		serve_state_set(&sv->st, SB_METRICS, http_body_new(&sb, PROM_CONTENT_TYPE));
	} else {
		prom_write(&sb, s, &o);
		serve_state_set(&sv->st, SB_METRICS, http_body_new(&sb, PROM_CONTENT_TYPE));
		o.openmetrics = true;
		prom_write(&sb, s, &o);
		serve_state_set(&sv->st, SB_OPENMETRICS,
		                http_body_new(&sb, PROM_OPENMETRICS_CONTENT_TYPE));
	}
	json_status(&sb, s, false, true);
	strbuf_addch(&sb, '\n');
	serve_state_set(&sv->st, SB_STATUS, http_body_new(&sb, "application/json"));
	pthread_mutex_lock(&sv->st.mu);
	sv->st.last_sample = clock_mono();
	sv->st.why[0] = '\0';
	pthread_mutex_unlock(&sv->st.mu);
}

/* Wait until due (clock_mono) or until asked to stop; returns whether to stop. */
static bool
wait_until(struct serve *sv, double due)
{
	struct timespec ts;
	bool stop;

	pthread_mutex_lock(&sv->mu);
	while (!sv->stop && clock_mono() < due) {
		clock_mono_timespec(&ts, due);
		pthread_cond_timedwait(&sv->cv, &sv->mu, &ts);
	}
	stop = sv->stop;
	pthread_mutex_unlock(&sv->mu);
	return stop;
}

static void *
collect_main(void *arg)
{
	struct serve *sv = arg;
	double due = clock_mono();
	bool first = true;

	while (!wait_until(sv, due)) {
		struct gpu_snapshot snap;
		struct err err = ERR_INIT;
		double t0 = clock_mono(), dt;
		int rc;

		gpu_snapshot_init(&snap);
		rc = collector_sample(sv->c, &snap, COLLECT_PROCS | (first ? COLLECT_WINDOW : 0),
		                      &err);
		dt = clock_mono() - t0;
		first = false;
		due += sv->interval;
		if (due < clock_mono())
			due = clock_mono() + sv->interval; /* a slow sample: start again from now */
		if (rc < 0) {
			sv->errors++;
			if (strcmp(err.msg, sv->last_error))
				fprintf(stderr, "gpuscope serve: a collection failed: %s\n",
				        err.msg);
			snprintf(sv->last_error, sizeof(sv->last_error), "%s", err.msg);
			pthread_mutex_lock(&sv->st.mu);
			snprintf(sv->st.why, sizeof(sv->st.why), "%s", err.msg);
			pthread_mutex_unlock(&sv->st.mu);
			gpu_snapshot_release(&snap);
			continue;
		}
		sv->last_error[0] = '\0';
		if (sv->live)
			run_live(sv, &snap);
		window_push(sv, &snap);
		if (sv->doctor_interval > 0 && clock_mono() >= sv->next_doctor) {
			run_doctor(sv);
			sv->next_doctor = clock_mono() + sv->doctor_interval;
		}
		publish(sv, dt);
	}
	return NULL;
}

/* Become user name (when root), keeping the port and the GPUs open. */
static int
drop_privileges(const char *name)
{
	struct passwd *pw = getpwnam(name);

	if (!pw) {
		cmd_error("--user %s: no such user", name);
		return -1;
	}
	if (geteuid() != 0) {
		if (geteuid() == pw->pw_uid)
			return 0;
		cmd_error("--user %s: only root can switch users; run without --user", name);
		return -1;
	}
	if (initgroups(pw->pw_name, pw->pw_gid) < 0 || setgid(pw->pw_gid) < 0 ||
	    setuid(pw->pw_uid) < 0) {
		cmd_error("--user %s: cannot switch to it: %s", name, strerror(errno));
		return -1;
	}
	if (setuid(0) == 0) {
		cmd_error("--user %s: root could be regained after switching; stopping", name);
		return -1;
	}
	return 0;
}

/*
 * --hash-password: a bcrypt hash of the password on standard input (its
 * first line), for basic_auth_users. What bcrypt cannot tell apart is
 * refused rather than cut: more than 72 bytes, a NUL byte.
 */
static int
hash_password(void)
{
	char buf[1024], hash[128];
	size_t n = 0, len;
	char *nl;
	int rc;

	if (isatty(STDIN_FILENO))
		fprintf(stderr, "password: ");
	/* the first line only; a terminal's line comes alone, a pipe's with the rest */
	while (n < sizeof(buf) - 1) {
		int ch = getchar();

		if (ch == EOF)
			break;
		buf[n++] = (char)ch;
		if (ch == '\n')
			break;
	}
	buf[n] = '\0';
	if (!n) {
		cmd_error("--hash-password reads the password from standard input; none came");
		return EXIT_USAGE;
	}
	nl = memchr(buf, '\n', n);
	len = nl ? (size_t)(nl - buf) : n;
	if (len && buf[len - 1] == '\r')
		len--;
	if (memchr(buf, '\0', len)) {
		explicit_bzero(buf, sizeof(buf));
		cmd_error("--hash-password: the password holds a NUL byte, which no login can send "
		          "whole; choose one without");
		return EXIT_USAGE;
	}
	buf[len] = '\0';
	if (!len) {
		cmd_error("--hash-password: the password is empty");
		return EXIT_USAGE;
	}
	if (len > WEB_PASSWORD_MAX) {
		explicit_bzero(buf, sizeof(buf));
		cmd_error("--hash-password: the password is %s%zu bytes long; bcrypt reads the "
		          "first %d only, so choose one of %d bytes or fewer",
		          n == sizeof(buf) - 1 && !nl ? "over " : "", len, WEB_PASSWORD_MAX,
		          WEB_PASSWORD_MAX);
		return EXIT_USAGE;
	}
	{
		struct err err = ERR_INIT;

		if (web_crypt_load(&err) < 0) {
			explicit_bzero(buf, sizeof(buf));
			cmd_error("--hash-password: %s", err.msg);
			return EXIT_RUNTIME;
		}
	}
	rc = web_password_hash(buf, hash, sizeof(hash));
	explicit_bzero(buf, sizeof(buf));
	if (rc < 0) {
		cmd_error(
		        "--hash-password: this C library cannot make bcrypt hashes (libxcrypt can)");
		return EXIT_RUNTIME;
	}
	printf("%s\n", hash);
	return EXIT_OK;
}

int
cmd_serve(int argc, char **argv, struct gs_config *cfg)
{
	enum {
		OPT_LISTEN = 256,
		OPT_WEBCONFIG,
		OPT_PROCS,
		OPT_DOCTOR,
		OPT_MAXCONN,
		OPT_USER,
		OPT_CONNTIMEOUT,
		OPT_HASH,
		OPT_NAMES,
	};
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "web-config", required_argument, NULL, OPT_WEBCONFIG },
		/* node_exporter's spellings, so that its service files and roles work */
		{ "web.listen-address", required_argument, NULL, OPT_LISTEN },
		{ "web.config.file", required_argument, NULL, OPT_WEBCONFIG },
		{ "interval", required_argument, NULL, 'd' },
		{ "processes", required_argument, NULL, OPT_PROCS },
		{ "doctor-interval", required_argument, NULL, OPT_DOCTOR },
		{ "max-connections", required_argument, NULL, OPT_MAXCONN },
		{ "connection-timeout", required_argument, NULL, OPT_CONNTIMEOUT },
		{ "hash-password", no_argument, NULL, OPT_HASH },
		{ "names", required_argument, NULL, OPT_NAMES },
		{ "user", required_argument, NULL, OPT_USER },
		{ "id", required_argument, NULL, 'i' },
		{ "timeout", required_argument, NULL, CMD_OPT_TIMEOUT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct serve *sv;
	struct web_config web;
	bool have_web = false;
	struct http_opts ho = { .listen = SERVE_DEFAULT_LISTEN,
		                .max_connections = 64,
		                .timeout = 10 };
	struct http_server *http = NULL;
	const char *ids = NULL, *user = NULL, *web_path = NULL;
	double interval = 1, doctor_interval = 30;
	unsigned max_procs = 50;
	bool dcgm_names = false;
	unsigned long n;
	char url[128];
	struct err err = ERR_INIT;
	sigset_t sigs;
	int c, sig = 0, rc;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:i:h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_LISTEN:
			ho.listen = optarg;
			break;
		case OPT_WEBCONFIG:
			web_path = optarg;
			break;
		case 'd':
			if (cmd_parse_seconds(optarg, &interval) < 0 || interval < 0.05 ||
			    interval > 3600) {
				cmd_error("--interval takes a duration from 50ms to 1h, not '%s'",
				          optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_PROCS:
			if (cmd_parse_count("--processes", optarg, 0, 100000, &n) < 0)
				return EXIT_USAGE;
			max_procs = (unsigned)n;
			break;
		case OPT_DOCTOR:
			if (cmd_parse_seconds(optarg, &doctor_interval) < 0 ||
			    doctor_interval < 0) {
				cmd_error("--doctor-interval takes a duration (0: never), not '%s'",
				          optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_MAXCONN:
			if (cmd_parse_count("--max-connections", optarg, 1, 10000, &n) < 0)
				return EXIT_USAGE;
			ho.max_connections = (unsigned)n;
			break;
		case OPT_CONNTIMEOUT:
			if (cmd_parse_count("--connection-timeout", optarg, 1, 3600, &n) < 0)
				return EXIT_USAGE;
			ho.timeout = (unsigned)n;
			break;
		case OPT_USER:
			user = optarg;
			break;
		case OPT_HASH:
			return hash_password();
		case OPT_NAMES:
			if (strcmp(optarg, "gpuscope") && strcmp(optarg, "dcgm")) {
				cmd_error("--names takes gpuscope (the default) or dcgm "
				          "(dcgm-exporter's), not '%s'",
				          optarg);
				return EXIT_USAGE;
			}
			dcgm_names = !strcmp(optarg, "dcgm");
			break;
		case 'i':
			ids = optarg;
			break;
		default:
			rc = cmd_common_option(c, argv, cfg, NULL, serve_usage);
			if (rc != CMD_NEXT_OPTION)
				return rc;
		}
	}
	rc = cmd_no_operands(argc, argv, serve_usage);
	if (rc != EXIT_OK)
		return rc;
	if (cfg->replay) {
		cmd_error("serve shows the live machine; a recording is replayed with 'gpuscope "
		          "replay FILE top|watch|status'");
		return EXIT_USAGE;
	}
	if (http_check_listen(ho.listen, &err) < 0) {
		cmd_error("%s", err.msg);
		return EXIT_USAGE;
	}
	/* libmicrohttpd is loaded here, not linked: no other command pays for it */
	if (http_load(cfg->mhd_path, &err) < 0) {
		cmd_error("%s", err.msg);
		return EXIT_RUNTIME;
	}
	if (user && !getpwnam(user)) {
		cmd_error("--user %s: no such user", user);
		return EXIT_USAGE;
	}
	if (web_path) {
		if (web_config_load(&web, web_path, &err) < 0) {
			cmd_error("%s", err.msg);
			return EXIT_USAGE;
		}
		have_web = true;
		ho.web = &web;
	}
	ho.page = gpuscope_web_html;
	ho.page_len = (size_t)(gpuscope_web_html_end - gpuscope_web_html);

	sv = xcalloc(1, sizeof(*sv));
	sv->cfg = cfg;
	sv->interval = interval;
	sv->doctor_interval = doctor_interval;
	sv->max_procs = max_procs;
	sv->dcgm_names = dcgm_names;
	sv->max_win = doctor_interval > 0 ? SERVE_WINDOW_MAX : 1;
	pthread_mutex_init(&sv->mu, NULL);
	pthread_mutex_init(&sv->st.mu, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&sv->cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	sv->st.stale_after = 3 * interval + cfg->timeout + cfg->window + 1;

	/*
	 * A long-running process whose threads (one per GPU read, the
	 * collection, the HTTP loop) allocate and free bodies of 100 KiB and
	 * more every second: few malloc arenas, and large blocks mapped and
	 * unmapped rather than left in a heap, keep its memory flat.
	 */
#ifdef M_ARENA_MAX
	mallopt(M_ARENA_MAX, 2);
	mallopt(M_MMAP_THRESHOLD, 64 * 1024);
	mallopt(M_TRIM_THRESHOLD, 256 * 1024);
#endif
	cfg->want_procs = true;
	if (doctor_interval > 0) {
		nvml_probe(cfg, &sv->probe);
		sv->live = xmalloc(sizeof(*sv->live));
		dr_live_init(sv->live, interval, false);
	}
	rc = cmd_open_collector_any(cfg, ids, &sv->c);
	if (rc != EXIT_OK)
		goto out;
	if (http_start(&ho, &sv->st, &http, url, sizeof(url), &err) < 0) {
		cmd_error("%s", err.msg);
		rc = err.code == E_USAGE ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}
	if (user && drop_privileges(user) < 0) {
		rc = EXIT_RUNTIME;
		goto out;
	}
	if (geteuid() == 0)
		fprintf(stderr, "gpuscope serve: running as root; --user NAME (or the systemd unit "
		                "in contrib/systemd) runs it as an unprivileged user\n");

	/* signals go to this thread only, which waits for them below */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (pthread_create(&sv->thread, NULL, collect_main, sv) != 0) {
		cmd_error("cannot start the collection thread");
		rc = EXIT_RUNTIME;
		goto out;
	}
	fprintf(stderr, "gpuscope serve: listening on %s (%u GPU%s, every %g s)\n", url,
	        collector_count(sv->c), collector_count(sv->c) == 1 ? "" : "s", interval);
	while (sigwait(&sigs, &sig) == 0 && sig != SIGINT && sig != SIGTERM && sig != SIGHUP)
		;
	fprintf(stderr, "gpuscope serve: stopping (%s)\n", strsignal(sig));
	pthread_mutex_lock(&sv->mu);
	sv->stop = true;
	pthread_cond_signal(&sv->cv);
	pthread_mutex_unlock(&sv->mu);
	pthread_join(sv->thread, NULL);
	rc = EXIT_OK;
out:
	http_stop(http);
	for (int i = 0; i < SB__COUNT; i++)
		http_body_put(sv->st.body[i]);
	for (size_t i = 0; i < sv->nr_win; i++)
		gpu_snapshot_release(&sv->win[i]);
	if (sv->c)
		collector_close(sv->c);
	if (sv->live)
		dr_live_release(sv->live);
	free(sv->live);
	free(sv->findings);
	pthread_cond_destroy(&sv->cv);
	pthread_mutex_destroy(&sv->mu);
	pthread_mutex_destroy(&sv->st.mu);
	free(sv);
	if (have_web)
		web_config_release(&web);
	return rc;
}
