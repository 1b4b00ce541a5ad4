/*
 * The error document of --json (schema gpuscope.error/1): what was said on
 * stderr, on stdout too, when the command wrote no document of its own.
 */
#include "cmd/jsonerr.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/clock.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

static struct {
	pthread_mutex_t mu;
	bool on;
	bool done;        /* the document (or the command's) is out */
	char command[64]; /* "status", "queue ls", "bench matmul" */
	const struct gs_config *cfg;
	char **msgs; /* what cmd_error() said, in order */
	size_t nr_msgs;
	size_t written; /* bytes that reached stdout */
} je = { PTHREAD_MUTEX_INITIALIZER, false, false, "", NULL, NULL, 0, 0 };

/*
 * The commands that do not take --json: every other (status, doctor, fit,
 * specs, bench, burn, queue) does, and so does a word that is no command;
 * replay only as 'replay FILE status'.
 */
static const char *const other_cmds[] = {
	"query",      "top",        "watch", "record", "serve",       "queued",
	"completion", "__complete", "__man", "help",   "__supervise", NULL,
};

static bool
in_list(const char *const *list, const char *s)
{
	for (size_t i = 0; list[i]; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

/* stdout, counted: every byte goes on to file descriptor 1 as it would have */
static ssize_t
counted_write(void *cookie, const char *buf, size_t size)
{
	size_t done = 0;

	(void)cookie;
	while (done < size) {
		ssize_t w = write(STDOUT_FILENO, buf + done, size - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
		__atomic_add_fetch(&je.written, (size_t)w, __ATOMIC_SEQ_CST);
	}
	return done ? (ssize_t)done : -1;
}

/*
 * stdout through counted_write(). false when it cannot be: then no error
 * document, lest one follow the command's.
 */
static bool
count_stdout(void)
{
	static const cookie_io_functions_t fns = { .write = counted_write };
	FILE *f = fopencookie(NULL, "w", fns);

	if (!f)
		return false;
	if (setvbuf(f, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ)) {
		fclose(f);
		return false;
	}
	stdout = f;
	return true;
}

void
jsonerr_setup(int argc, char **argv, const struct gs_config *cfg)
{
	const char *cmd = NULL;
	bool json = false, status;
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-L") || !strcmp(argv[i], "--list-gpus"))
			return; /* nvidia-smi -L: no --json */
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--demo") || !strncmp(argv[i], "--root=", 7))
			continue;
		if (!strcmp(argv[i], "--root")) {
			i++;
			continue;
		}
		break;
	}
	if (i + 2 < argc && !strcmp(argv[i], "replay") && !strcmp(argv[i + 2], "status")) {
		cmd = "replay status"; /* replay FILE status: status's options */
		i += 3;
	} else if (i < argc && argv[i][0] != '-') {
		cmd = argv[i++];
		if (in_list(other_cmds, cmd) || !strcmp(cmd, "replay"))
			return;
	} else if (i < argc && !strncmp(argv[i], "--query-", 8)) {
		return; /* query, spelt as nvidia-smi does */
	}
	status = !cmd || !strcmp(cmd, "status") || !strcmp(cmd, "replay status");
	snprintf(je.command, sizeof(je.command), "%s", cmd ? cmd : "status");
	/* a subcommand: "queue ls", "bench matmul" (bench's other operands are tests) */
	if (cmd && i < argc && argv[i][0] != '-' &&
	    (!strcmp(cmd, "queue") || (!strcmp(cmd, "bench") && !strcmp(argv[i], "matmul"))))
		snprintf(je.command, sizeof(je.command), "%s %s", cmd, argv[i]);
	for (; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--root"))
			i++; /* its directory */
		else if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j") ||
		         (status && (!strcmp(argv[i], "--format=json") ||
		                     (!strcmp(argv[i], "--format") && i + 1 < argc &&
		                      !strcmp(argv[i + 1], "json")))))
			json = true;
	}
	if (!json)
		return;
	je.cfg = cfg;
	je.on = count_stdout();
}

bool
jsonerr_on(void)
{
	return je.on;
}

void
jsonerr_note(const char *msg)
{
	if (!je.on)
		return;
	pthread_mutex_lock(&je.mu);
	je.msgs = xrealloc(je.msgs, (je.nr_msgs + 1) * sizeof(*je.msgs));
	je.msgs[je.nr_msgs++] = xstrdup(msg);
	pthread_mutex_unlock(&je.mu);
}

/* error.code: what the exit code means for this command */
static const char *
code_of(int rc)
{
	bool queue = !strncmp(je.command, "queue", 5);

	switch (rc) {
	case EXIT_PROBLEMS:
		return queue ? "refused" : "problems";
	case EXIT_USAGE:
		return "usage";
	case EXIT_RUNTIME:
		/* doctor's 3: it could not run, a bad option included */
		if (!strcmp(je.command, "doctor"))
			return "cannot_run";
		return queue ? "unreachable" : "runtime";
	case EXIT_NOGPU:
		return "no_gpu";
	}
	return rc > 128 ? "signal" : "failed";
}

static void
write_document(int rc)
{
	struct strbuf sb = STRBUF_INIT;
	char host[256];

	strbuf_addstr(&sb, "{\"schema\":\"gpuscope.error/1\",\"gpuscope_version\":");
	json_str(&sb, GPUSCOPE_VERSION);
	strbuf_addstr(&sb, ",\"time\":");
	json_num(&sb, clock_now(je.cfg), 3);
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		strbuf_addstr(&sb, ",\"hostname\":");
		json_str(&sb, host);
	}
	strbuf_addstr(&sb, ",\"command\":");
	json_str(&sb, je.command);
	strbuf_addf(&sb, ",\"exit_code\":%d,\"error\":{\"code\":", rc);
	json_str(&sb, code_of(rc));
	strbuf_addstr(&sb, ",\"message\":");
	if (je.nr_msgs) {
		json_str(&sb, je.msgs[0]);
	} else {
		char msg[64];

		snprintf(msg, sizeof(msg), "gpuscope ended with exit status %d", rc);
		json_str(&sb, msg);
	}
	strbuf_addstr(&sb, "},\"errors\":[");
	for (size_t i = 0; i < je.nr_msgs; i++) {
		if (i)
			strbuf_addch(&sb, ',');
		json_str(&sb, je.msgs[i]);
	}
	strbuf_addstr(&sb, "]}\n");
	fwrite(sb.buf, 1, sb.len, stdout);
	fflush(stdout);
	strbuf_release(&sb);
}

int
jsonerr_finish(int rc)
{
	if (!je.on)
		return rc;
	fflush(stdout);
	pthread_mutex_lock(&je.mu);
	if (!je.done && rc != EXIT_OK && !__atomic_load_n(&je.written, __ATOMIC_SEQ_CST))
		write_document(rc);
	je.done = true;
	for (size_t i = 0; i < je.nr_msgs; i++)
		free(je.msgs[i]);
	free(je.msgs);
	je.msgs = NULL;
	je.nr_msgs = 0;
	pthread_mutex_unlock(&je.mu);
	return rc;
}

void
jsonerr_exit(int rc)
{
	jsonerr_finish(rc);
	_exit(rc);
}
