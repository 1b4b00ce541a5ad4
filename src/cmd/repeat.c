/*
 * -l / -lms / -f of status and query (repeat.h): one snapshot or a feed of
 * them, each round rendered by the command and written to standard output,
 * appended to a file, or put in place of a file whole.
 */
#include "cmd/repeat.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/feed.h"
#include "cmd/cmd.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

/* "-lms=MS" rewritten: kept here so that they live as long as argv */
static char *rewritten[8];

void
repeat_rewrite_lms(int argc, char **argv)
{
	static char loop_ms[] = "--loop-ms";
	unsigned kept = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-lms")) {
			argv[i] = loop_ms;
		} else if (!strncmp(argv[i], "-lms=", 5) &&
		           kept < sizeof(rewritten) / sizeof(*rewritten)) {
			struct strbuf sb = STRBUF_INIT;

			strbuf_addf(&sb, "--loop-ms=%s", argv[i] + 5);
			free(rewritten[kept]);
			rewritten[kept] = strbuf_detach(&sb, NULL);
			argv[i] = rewritten[kept++];
		}
	}
}

int
repeat_parse_loop(const char *arg, bool ms, int argc, char **argv, double *interval)
{
	double v;

	if (!arg && !ms) {
		/* "-l" alone is nvidia-smi's 5 s; "-l 2" takes the next word when it is a duration
		 */
		if (optind < argc && argv[optind][0] != '-' &&
		    cmd_parse_seconds(argv[optind], &v) == 0) {
			arg = argv[optind++];
		} else {
			*interval = REPEAT_DEFAULT_LOOP;
			return 0;
		}
	}
	if (ms) {
		char *end;

		errno = 0;
		v = arg[0] >= '0' && arg[0] <= '9' ? strtod(arg, &end) / 1000 : -1;
		if (v < 0 || errno || *end)
			v = -1;
	} else if (cmd_parse_seconds(arg, &v) < 0) {
		v = -1;
	}
	if (v < 0.01 || v > 86400) {
		if (ms)
			cmd_error(
			        "--loop-ms (-lms) takes milliseconds from 10 to 86400000, not '%s'",
			        arg);
		else
			cmd_error(
			        "-l/--loop takes a duration from 0.01 s to 1 d (\"2\", \"500ms\", \"1m\"), not '%s'",
			        arg);
		return -1;
	}
	*interval = v;
	return 0;
}

/* Where the rounds go: stdout, a file appended to, or a file replaced whole. */
struct writer {
	const struct repeat_out *o;
	int fd;    /* stdout or the file appended to; -1 in atomic mode */
	char *tmp; /* atomic: FILE.tmp.PID */
	char *dir; /* atomic: the directory of FILE, for its fsync */
	bool own_fd;
};

static const char *
kind_of(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a named pipe (FIFO)";
	if (S_ISLNK(m))
		return "a symbolic link";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISCHR(m) || S_ISBLK(m))
		return "a device";
	return "not a regular file";
}

/* Check the target of an atomic -f and that a file can be made beside it. */
static int
atomic_open(struct writer *w)
{
	const char *path = w->o->path, *slash = strrchr(path, '/');
	struct strbuf sb = STRBUF_INIT;
	struct stat st;
	int fd;

	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		cmd_error(
		        "-f '%s' is %s: it is replaced whole each round (a new file renamed over it), so give the name of a regular file%s",
		        path, kind_of(st.st_mode),
		        S_ISLNK(st.st_mode) ? " (the link's target, not the link)" : "");
		return -1;
	}
	if (slash)
		strbuf_add(&sb, path, (size_t)(slash - path) + (slash == path));
	else
		strbuf_addch(&sb, '.');
	w->dir = strbuf_detach(&sb, NULL);
	strbuf_addf(&sb, "%s.tmp.%ld", path, (long)getpid());
	w->tmp = strbuf_detach(&sb, NULL);
	/* fail now, before the GPUs are read, when the directory is not writable */
	fd = open(w->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		cmd_error(
		        "cannot create '%s' beside -f '%s': %s (the directory must be writable by gpuscope: the new file is renamed over the old)",
		        w->tmp, path, strerror(errno));
		return -1;
	}
	close(fd);
	unlink(w->tmp);
	return 0;
}

static int
writer_open(struct writer *w, const struct repeat_out *o)
{
	memset(w, 0, sizeof(*w));
	w->o = o;
	w->fd = STDOUT_FILENO;
	if (!o->path)
		return 0;
	if (o->atomic) {
		w->fd = -1;
		return atomic_open(w);
	}
	/* as nvidia-smi -f: the file starts empty, each round is added to it */
	w->fd = open(o->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		cmd_error("cannot open -f '%s' for writing: %s", o->path, strerror(errno));
		return -1;
	}
	w->own_fd = true;
	return 0;
}

static void
writer_close(struct writer *w)
{
	if (w->own_fd)
		close(w->fd);
	free(w->tmp);
	free(w->dir);
}

static int
write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Put out in place of FILE: the temp file written and synced, then renamed over it. */
static int
atomic_write(struct writer *w, const struct strbuf *out)
{
	sigset_t set, old;
	int fd, rc = -1, dfd;

	/* a signal must not leave the temp file behind: it waits until the rename is done */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	fd = open(w->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		cmd_error("cannot create '%s': %s", w->tmp, strerror(errno));
		goto out;
	}
	if (write_all(fd, out->buf, out->len) < 0 || fsync(fd) < 0) {
		cmd_error("cannot write '%s': %s", w->tmp, strerror(errno));
		close(fd);
		unlink(w->tmp);
		goto out;
	}
	if (close(fd) < 0 || rename(w->tmp, w->o->path) < 0) {
		cmd_error("cannot put '%s' in place of '%s': %s", w->tmp, w->o->path,
		          strerror(errno));
		unlink(w->tmp);
		goto out;
	}
	/* the rename itself survives a power cut once the directory is synced */
	dfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	rc = 0;
out:
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

static bool
in_trouble(const struct gpu_snapshot *snap)
{
	for (size_t d = 0; d < snap->nr_dev; d++)
		if (snap->dev[d].state != DEV_OK && snap->dev[d].state != DEV_SUSPENDED)
			return true;
	return false;
}

/* Write one round; EXIT_RUNTIME (said why) or EXIT_OK. */
static int
writer_put(struct writer *w, const struct strbuf *out)
{
	if (w->o->path && w->o->atomic)
		return atomic_write(w, out) < 0 ? EXIT_RUNTIME : EXIT_OK;
	if (write_all(w->fd, out->buf, out->len) < 0) {
		cmd_error("cannot write %s%s%s: %s", w->o->path ? "'" : "the output",
		          w->o->path ? w->o->path : "", w->o->path ? "'" : "", strerror(errno));
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

static int
run_once(struct gs_config *cfg, const char *ids, bool procs, struct writer *w,
         repeat_render_fn *render, void *ctx)
{
	struct gpu_snapshot snap;
	struct strbuf out = STRBUF_INIT;
	int rc;

	gpu_snapshot_init(&snap);
	rc = cmd_snapshot(cfg, ids, procs ? SNAP_PROCS : 0, &snap);
	if (rc != EXIT_OK)
		goto out;
	render(ctx, &snap, w->fd < 0 ? -1 : w->fd, &out);
	if (!w->o->path) {
		rc = cmd_output(&out, &snap);
	} else {
		rc = writer_put(w, &out);
		if (rc == EXIT_OK && in_trouble(&snap))
			rc = EXIT_PROBLEMS;
	}
out:
	strbuf_release(&out);
	gpu_snapshot_release(&snap);
	return rc;
}

static int
run_loop(struct gs_config *cfg, const char *ids, bool procs, double interval, struct writer *w,
         repeat_render_fn *render, void *ctx)
{
	struct err err = ERR_INIT;
	struct feed *feed = NULL;
	struct strbuf out = STRBUF_INIT;
	unsigned long done = 0;
	bool trouble = false;
	int rc;

	cmd_stop_on_signals();
	rc = cmd_open_feed(cfg, ids, procs, interval, &feed);
	if (rc != EXIT_OK)
		goto out;
	cmd_stop_feed(feed);
	while (!cmd_stopped()) {
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
		render(ctx, &snap, w->fd, &out);
		trouble |= in_trouble(&snap);
		gpu_snapshot_release(&snap);
		rc = writer_put(w, &out);
		if (rc != EXIT_OK)
			break;
		done++;
	}
	if (rc == EXIT_OK && trouble)
		rc = EXIT_PROBLEMS;
out:
	cmd_stop_feed(NULL); /* a signal from now on must not wake a closed feed */
	feed_close(feed);
	strbuf_release(&out);
	return rc;
}

int
repeat_run(struct gs_config *cfg, const char *ids, bool procs, double interval,
           const struct repeat_out *o, repeat_render_fn *render, void *ctx)
{
	struct writer w;
	int rc;

	if (writer_open(&w, o) < 0) {
		writer_close(&w);
		return EXIT_RUNTIME;
	}
	if (interval > 0)
		rc = run_loop(cfg, ids, procs, interval, &w, render, ctx);
	else
		rc = run_once(cfg, ids, procs, &w, render, ctx);
	writer_close(&w);
	return rc;
}
