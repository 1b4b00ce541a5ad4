/*
 * gpuscope replay FILE [top|watch|status|record|info] [options]: a
 * recording of gpuscope record fed to the commands that show the live
 * machine, at any speed and from any time. The command runs as it runs
 * live; only its samples come from the file (cfg->replay, read by
 * cmd_open_feed() and cmd_snapshot()).
 */
#include "cmd/cmd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/err.h"
#include "core/fmt.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "record/record.h"

static void
replay_usage(FILE *f)
{
	fputs("usage: gpuscope replay FILE [top|watch|status|record|info] [--speed N] [--from TIME | --at TIME]\n"
	      "                       [options of the command]\n"
	      "TIME: seconds since the epoch, 2026-11-30T03:00[:SS][Z], 03:00[:SS] (the last such time\n"
	      "in the recording), -10m (before its end) or +90s (after its start)\n",
	      f);
}

static void
fmt_time(char *buf, size_t size, double t)
{
	time_t s = (time_t)t;
	struct tm tm;

	if (!localtime_r(&s, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S %Z", &tm))
		snprintf(buf, size, "%.0f", t);
}

/* s through fmt_add_shown(), "-" when empty */
static void
shown(struct strbuf *sb, const char *s)
{
	if (s[0])
		fmt_add_shown(sb, s, strlen(s));
	else
		strbuf_addch(sb, '-');
}

/* gpuscope replay FILE info: what a recording holds. */
static int
replay_info(const char *path)
{
	struct err err = ERR_INIT;
	struct rec_reader *r;
	struct gpu_snapshot s, first;
	unsigned long n = 0, lost = 0;
	double t0, t1;
	char a[64], b[64];
	struct strbuf sb = STRBUF_INIT;
	int rc;

	if (rec_reader_open(path, &r, &err) < 0) {
		cmd_error("%s", err.msg);
		return EXIT_RUNTIME;
	}
	rec_reader_warn(r);
	gpu_snapshot_init(&first);
	gpu_snapshot_init(&s);
	while ((rc = rec_reader_next(r, &s, &err)) > 0) {
		if (!n) {
			first = s;
			gpu_snapshot_init(&s);
		}
		for (size_t i = 0; i < s.nr_dev; i++)
			if (s.dev[i].state == DEV_LOST)
				lost++;
		n++;
	}
	gpu_snapshot_release(&s);
	if (rc < 0) {
		cmd_error("%s", err.msg);
		gpu_snapshot_release(&first);
		rec_reader_close(r);
		return EXIT_RUNTIME;
	}
	rec_reader_span(r, &t0, &t1);
	printf("recording  %s\n", path);
	printf("samples    %lu", n);
	if (rec_reader_skipped(r))
		printf(" (%lu damaged record%s skipped)", rec_reader_skipped(r),
		       rec_reader_skipped(r) == 1 ? "" : "s");
	putchar('\n');
	if (n) {
		fmt_time(a, sizeof(a), t0);
		fmt_time(b, sizeof(b), t1);
		printf("from       %s\nto         %s (%.0f s)\n", a, b, t1 - t0);
		/* what the recording says of the machine, shown as every text from outside */
		strbuf_addstr(&sb, "host       ");
		fmt_add_shown(&sb, first.hostname, strlen(first.hostname));
		printf("%s%s\n", sb.buf, first.simulated ? " (simulated)" : "");
		for (size_t i = 0; i < first.nr_dev; i++) {
			const struct gpu_device *d = &first.dev[i];

			strbuf_reset(&sb);
			strbuf_addf(&sb, "gpu %-6u ", d->index);
			shown(&sb, d->name);
			strbuf_addstr(&sb, "  ");
			shown(&sb, d->pci_bus_id);
			strbuf_addstr(&sb, "  ");
			shown(&sb, d->uuid);
			printf("%s\n", sb.buf);
		}
		if (lost)
			printf("lost       a GPU is lost in %lu sample%s\n", lost,
			       lost == 1 ? "" : "s");
	}
	strbuf_release(&sb);
	gpu_snapshot_release(&first);
	rec_reader_close(r);
	return EXIT_OK;
}

static bool
is_replay_opt(const char *a, const char *name, const char **val, int *i, int argc, char **argv)
{
	size_t n = strlen(name);

	if (strncmp(a, name, n))
		return false;
	if (a[n] == '=') {
		*val = a + n + 1;
		return true;
	}
	if (a[n])
		return false;
	*val = *i + 1 < argc ? argv[++*i] : NULL;
	return true;
}

int
cmd_replay(int argc, char **argv, struct gs_config *cfg)
{
	static char top_cmd[] = "top", status_cmd[] = "status";
	const char *file = NULL, *speed = NULL, *from = NULL, *val;
	char *sub = NULL;
	char **sargv = xcalloc((size_t)argc + 1, sizeof(*sargv));
	int sargc = 0, rc;
	bool at = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool ours = true;

		if (is_replay_opt(a, "--speed", &val, &i, argc, argv)) {
			speed = val;
		} else if (is_replay_opt(a, "--from", &val, &i, argc, argv)) {
			from = val;
		} else if (is_replay_opt(a, "--at", &val, &i, argc, argv)) {
			from = val;
			at = true;
		} else {
			ours = false;
		}
		if (ours) {
			if (!val) {
				cmd_error("option '%s' needs a value", a);
				free(sargv);
				return EXIT_USAGE;
			}
		} else if (!sub && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
			replay_usage(stdout);
			free(sargv);
			return EXIT_OK;
		} else if (!file && a[0] != '-') {
			file = a;
		} else if (file && !sub && a[0] != '-') {
			sub = argv[i];
			sargv[sargc++] = argv[i];
		} else if (sub) {
			sargv[sargc++] = argv[i];
		} else {
			cmd_error(
			        "unknown option '%s' for replay (options of a command go after it: 'gpuscope replay FILE watch %s')",
			        a, a);
			free(sargv);
			return EXIT_USAGE;
		}
	}
	if (!file) {
		cmd_error("replay needs the file a 'gpuscope record' wrote");
		replay_usage(stderr);
		free(sargv);
		return EXIT_USAGE;
	}
	if (!sub)
		sub = at ? status_cmd : top_cmd;
	if (!sargc)
		sargv[sargc++] = sub;
	sargv[sargc] = NULL;

	cfg->replay = file;
	/* top replays as it happened; the others, made for pipes, as fast as they read */
	cfg->replay_speed = !strcmp(sub, "top") ? 1.0 : 0;
	if (speed) {
		char *end;
		double v;

		errno = 0;
		v = strtod(speed, &end);
		if (*end == 'x')
			end++;
		if (!strcmp(speed, "max")) {
			v = 0;
		} else if (end == speed || *end || errno || v < 0 || v > 1e6) {
			cmd_error(
			        "--speed takes a factor (1 as recorded, 10 or 10x ten times as fast, 0 or max as fast as it reads), not '%s'",
			        speed);
			free(sargv);
			return EXIT_USAGE;
		}
		cfg->replay_speed = v;
	}
	if (from) {
		struct err err = ERR_INIT;
		struct rec_reader *r;
		double first, last;
		char a[64], b[64];

		if (rec_reader_open(file, &r, &err) < 0) {
			cmd_error("%s", err.msg);
			free(sargv);
			return EXIT_RUNTIME;
		}
		rec_reader_span(r, &first, &last);
		rec_reader_close(r);
		if (cmd_parse_time(from, first, last, &cfg->replay_from) < 0) {
			cmd_error(
			        "'%s' is not a time; use seconds since the epoch, 2026-11-30T03:00[:SS], 03:00[:SS], -10m or +90s",
			        from);
			free(sargv);
			return EXIT_USAGE;
		}
		fmt_time(a, sizeof(a), first);
		fmt_time(b, sizeof(b), last);
		if (cfg->replay_from < first - 0.5) {
			cmd_error("'%s' is before the recording, which runs from %s to %s", from, a,
			          b);
			free(sargv);
			return EXIT_USAGE;
		}
		if (cfg->replay_from > last + 0.5 && at)
			cmd_error(
			        "'%s' is after the end of the recording (%s): showing its last sample",
			        from, b);
	}

	if (!strcmp(sub, "info"))
		rc = sargc > 1 ? (cmd_error("unexpected argument '%s'", sargv[1]), EXIT_USAGE)
		               : replay_info(file);
	else if (!strcmp(sub, "top"))
		rc = cmd_top(sargc, sargv, cfg);
	else if (!strcmp(sub, "watch"))
		rc = cmd_watch(sargc, sargv, cfg);
	else if (!strcmp(sub, "status"))
		rc = cmd_status(sargc, sargv, cfg);
	else if (!strcmp(sub, "record"))
		rc = cmd_record(sargc, sargv, cfg);
	else {
		cmd_error("'%s' cannot replay a recording (top, watch, status, record or info can)",
		          sub);
		rc = EXIT_USAGE;
	}
	free(sargv);
	return rc;
}
