/*
 * What the subcommands share: error lines and taking one snapshot.
 */
#include "cmd.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backend/collect.h"
#include "core/config.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"

void
cmd_error(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("gpuscope: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int
cmd_output(const struct strbuf *out, const struct gpu_snapshot *snap)
{
	if (fwrite(out->buf, 1, out->len, stdout) != out->len || fflush(stdout) != 0) {
		cmd_error("cannot write the output: %s", strerror(errno));
		return EXIT_RUNTIME;
	}
	for (size_t i = 0; i < snap->nr_dev; i++)
		if (snap->dev[i].state != DEV_OK)
			return EXIT_PROBLEMS;
	return EXIT_OK;
}

int
cmd_snapshot(struct gs_config *cfg, const char *ids, unsigned flags, struct gpu_snapshot *snap)
{
	struct err err = ERR_INIT;
	struct collector *c = NULL;
	int rc = EXIT_OK;

	if (collector_open(cfg, &c, &err) < 0) {
		cmd_error("%s", err.msg);
		return EXIT_RUNTIME;
	}
	collector_scan(c, &err);
	if (!collector_count(c)) {
		const char *const *why = collector_reasons(c);

		if (!why[0])
			cmd_error("no GPU found");
		for (size_t i = 0; why[i]; i++)
			cmd_error("no GPU found: %s", why[i]);
		rc = EXIT_NOGPU;
		goto out;
	}
	if (collector_select(c, ids, &err) < 0) {
		cmd_error("%s", err.msg);
		rc = EXIT_USAGE;
		goto out;
	}
	if (collector_sample(c, snap, (flags & SNAP_PROCS) ? COLLECT_PROCS : 0, &err) < 0) {
		cmd_error("%s", err.msg);
		rc = EXIT_RUNTIME;
	}
out:
	collector_close(c);
	return rc;
}
