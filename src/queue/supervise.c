/*
 * The per-job supervisor, "gpuscope __supervise JOBDIR" (queue/exec.h): it
 * holds JOBDIR/lock on fd 4 for as long as it lives, starts the job's
 * command as its owner in the job's cgroup, reports on fd 3, enforces the
 * time limit while the daemon is away, and leaves the exit status in
 * JOBDIR/exit before it ends. Run as root by the daemon with a clean
 * environment of its own; the command gets the environment of the spec.
 */
#include "queue/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fileio.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "queue/cgroup.h"

#define REPORT_FD 3
#define LOCK_FD   4
/* the spec carries the user's environment: the daemon's max_request bounds it, this bounds us */
#define SPEC_MAX (16u << 20)
/* the backstop fires after the daemon's own time limit, so that a live daemon acts first */
#define LIMIT_SLACK 2.0

extern char **environ;

struct spec {
	json_t *root;
	const char *dir, *cwd, *user, *out, *err, *cg;
	char **argv, **envp;
	uid_t uid;
	gid_t gid;
	double time_limit, grace;
};

static double
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One line on the report pipe; a dead daemon (EPIPE) does not matter. */
static void __attribute__((format(printf, 1, 2))) report(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	/* one line, no newline inside: the reader parses by lines */
	for (int i = 0; i < n; i++)
		if (line[i] == '\n')
			line[i] = ' ';
	line[n++] = '\n';
	while (write(REPORT_FD, line, (size_t)n) < 0 && errno == EINTR)
		;
}

static char **
str_array(json_t *a)
{
	size_t n = json_array_size(a);
	char **v = xcalloc(n + 1, sizeof(*v));

	for (size_t i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(a, i));

		v[i] = xstrdup(s ? s : "");
	}
	return v;
}

static const char *
str_of(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static int
spec_read(const char *dir, struct spec *sp, struct err *err)
{
	char path[1200];
	struct strbuf sb;
	json_error_t je;
	json_t *argv, *envv;

	memset(sp, 0, sizeof(*sp));
	sp->dir = dir;
	snprintf(path, sizeof(path), "%s/spec", dir);
	strbuf_init(&sb, 0);
	if (file_read_regular(path, &sb, SPEC_MAX) < 0) {
		strbuf_release(&sb);
		return err_set(err, E_IO, "cannot read the job's spec '%s'", path);
	}
	sp->root = json_loadb(sb.buf, sb.len, 0, &je);
	strbuf_release(&sb);
	if (!json_is_object(sp->root))
		return err_set(err, E_PARSE, "the job's spec '%s' is not valid: %s", path, je.text);
	argv = json_object_get(sp->root, "argv");
	envv = json_object_get(sp->root, "env");
	if (!json_is_array(argv) || json_array_size(argv) == 0 || !json_is_array(envv) ||
	    !json_is_integer(json_object_get(sp->root, "uid")) ||
	    !json_is_integer(json_object_get(sp->root, "gid")))
		return err_set(err, E_PARSE, "the job's spec '%s' lacks argv, env, uid or gid",
		               path);
	sp->argv = str_array(argv);
	sp->envp = str_array(envv);
	sp->uid = (uid_t)json_integer_value(json_object_get(sp->root, "uid"));
	sp->gid = (gid_t)json_integer_value(json_object_get(sp->root, "gid"));
	sp->cwd = str_of(sp->root, "cwd");
	sp->user = str_of(sp->root, "user");
	sp->out = str_of(sp->root, "out");
	sp->err = str_of(sp->root, "err");
	sp->cg = str_of(sp->root, "cgroup");
	sp->time_limit = json_number_value(json_object_get(sp->root, "time_limit"));
	sp->grace = json_number_value(json_object_get(sp->root, "grace"));
	if (sp->grace <= 0)
		sp->grace = 30;
	return 0;
}

static void
str_array_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static void
spec_release(struct spec *sp)
{
	str_array_free(sp->argv);
	str_array_free(sp->envp);
	json_decref(sp->root);
}

/* In the command's child: say why it cannot run (to the supervisor, and in the log) and end. */
static void __attribute__((noreturn, format(printf, 4, 5)))
child_fail(int errfd, int logfd, int code, const char *fmt, ...)
{
	char msg[400], line[440];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (write(errfd, msg, strlen(msg)) < 0) {
		/* the supervisor is gone: the log still says it */
	}
	if (logfd >= 0) {
		n = snprintf(line, sizeof(line), "gpuscope queue: %s\n", msg);
		if (n > 0 && write(logfd, line, (size_t)n) < 0) {
			/* nothing more to do */
		}
	}
	_exit(code);
}

static int
open_log(const char *path)
{
	int fd =
	        open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0600);

	if (fd >= 0)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

static void
default_signals(void)
{
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* The command's side of the fork: never returns. */
static void __attribute__((noreturn)) run_command(const struct spec *sp, int errfd)
{
	bool root = geteuid() == 0;
	int out = -1, errf = -1, in;

	default_signals();
	umask(022);
	if (sp->cg[0]) {
		struct err e = ERR_INIT;

		if (cg_enter(sp->cg, 0, &e) < 0)
			child_fail(errfd, -1, 126, "cannot enter the job's cgroup: %s", e.msg);
	}
	setsid();
	if (root) {
		if (initgroups(sp->user, sp->gid) < 0)
			child_fail(errfd, -1, 126, "cannot set the groups of '%s': %s", sp->user,
			           strerror(errno));
		if (setgid(sp->gid) < 0 || setuid(sp->uid) < 0)
			child_fail(errfd, -1, 126, "cannot become uid %lu gid %lu: %s",
			           (unsigned long)sp->uid, (unsigned long)sp->gid, strerror(errno));
	} else if (sp->uid != getuid()) {
		child_fail(errfd, -1, 126, "a supervisor of uid %lu cannot run a job of uid %lu",
		           (unsigned long)getuid(), (unsigned long)sp->uid);
	}
	if (getuid() != sp->uid || geteuid() != sp->uid || (root && getgid() != sp->gid) ||
	    (sp->uid != 0 && setuid(0) == 0))
		child_fail(errfd, -1, 126, "the command would not run as uid %lu only",
		           (unsigned long)sp->uid);
	/* an absolute log path can take the message of a bad directory */
	if (sp->out[0] == '/')
		out = open_log(sp->out);
	if (chdir(sp->cwd) < 0)
		child_fail(errfd, out, 126, "cannot enter the directory '%s': %s", sp->cwd,
		           strerror(errno));
	if (out < 0)
		out = open_log(sp->out);
	if (out < 0)
		child_fail(errfd, -1, 126, "cannot open the output file '%s': %s", sp->out,
		           strerror(errno));
	if (sp->err[0]) {
		errf = open_log(sp->err);
		if (errf < 0)
			child_fail(errfd, out, 126, "cannot open the error file '%s': %s", sp->err,
			           strerror(errno));
	}
	in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(errf >= 0 ? errf : out, 2) < 0)
		child_fail(errfd, out, 126, "cannot set up the standard streams: %s",
		           strerror(errno));
	environ = sp->envp;
	execvp(sp->argv[0], sp->argv);
	child_fail(errfd, 2, errno == ENOENT ? 127 : 126, "cannot run '%s': %s", sp->argv[0],
	           strerror(errno));
}

/* JOBDIR/exit, then the report: the file first, so a daemon that misses the report finds it. */
static void
finish(const struct spec *sp, const char *first, const char *rep, bool timed_out)
{
	char text[600];
	double t = now_epoch();
	int n;

	n = snprintf(text, sizeof(text), "%s\n%.3f\n%s", first, t, timed_out ? "timeout\n" : "");
	file_write_atomic(sp->dir, "exit", text,
	                  (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1, 0600, true,
	                  NULL);
	if (rep)
		report("%s %.3f %d", rep, t, timed_out ? 1 : 0);
	else
		report("error %.3f %s", t, first + 6);
}

/* Is the job stopped (its cgroup frozen, or, without one, its main process stopped)? */
static bool
job_frozen(const struct spec *sp, pid_t pid)
{
	char path[64], text[1024], *p;

	if (sp->cg[0])
		return cg_frozen(sp->cg);
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (file_read_small(path, text, sizeof(text)) <= 0)
		return false;
	p = strrchr(text, ')');
	return p && p[1] == ' ' && (p[2] == 'T' || p[2] == 't');
}

/*
 * Wait for the main process, enforcing the time limit: SIGTERM, then after
 * the grace SIGKILL. Time spent frozen (a suspended job) does not count:
 * with a limit, the supervisor looks every second.
 */
static int
wait_command(const struct spec *sp, pid_t pid, bool *timed_out)
{
	double term_at = sp->time_limit > 0 ? mono() + sp->time_limit + LIMIT_SLACK : 0,
	       kill_at = 0;
	double last = mono();
	char path[1200];
	sigset_t chld;
	int status = 0;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	*timed_out = false;
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		double at, now = mono();

		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR)
			return -1;
		if (term_at && !kill_at && job_frozen(sp, pid))
			term_at += now - last;
		last = now;
		at = kill_at ? kill_at : term_at;
		if (!at) {
			sigwaitinfo(&chld, NULL);
			continue;
		}
		if (now >= at) {
			if (!kill_at) {
				*timed_out = true;
				tree_signal(sp->cg, pid, SIGTERM, NULL);
				kill_at = mono() + sp->grace;
			} else {
				snprintf(path, sizeof(path), "%s/cgroup.kill", sp->cg);
				tree_kill(sp->cg, pid, sp->cg[0] && access(path, F_OK) == 0, NULL);
				kill(pid, SIGKILL);
				term_at = kill_at = 0;
			}
			continue;
		}
		{
			double left = at - now < 1.0 ? at - now : 1.0;
			struct timespec ts = { (time_t)left,
				               (long)((left - (double)(time_t)left) * 1e9) };

			sigtimedwait(&chld, NULL, &ts);
		}
	}
}

static int
supervise(const char *dir)
{
	struct err e = ERR_INIT;
	struct spec sp;
	char text[128], msg[420], first[440];
	int epipe[2], status;
	uint64_t start = 0;
	bool timed_out;
	ssize_t n;
	pid_t pid;

	if (spec_read(dir, &sp, &e) < 0) {
		snprintf(first, sizeof(first), "error %s", e.msg);
		finish(&sp, first, NULL, false);
		spec_release(&sp);
		return 0;
	}
	if (json_string_value(json_object_get(sp.root, "sup_cgroup")) &&
	    *str_of(sp.root, "sup_cgroup"))
		cg_enter(str_of(sp.root, "sup_cgroup"), 0, NULL);
	proc_stat(getpid(), NULL, &start);
	n = snprintf(text, sizeof(text), "%ld %llu\n", (long)getpid(), (unsigned long long)start);
	file_write_atomic(dir, "sup", text, (size_t)n, 0600, false, NULL);

	if (pipe2(epipe, O_CLOEXEC) < 0) {
		snprintf(first, sizeof(first), "error cannot make a pipe: %s", strerror(errno));
		finish(&sp, first, NULL, false);
		spec_release(&sp);
		return 0;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(first, sizeof(first), "error cannot fork the command: %s",
		         strerror(errno));
		finish(&sp, first, NULL, false);
		spec_release(&sp);
		return 0;
	}
	if (pid == 0) {
		close(epipe[0]);
		run_command(&sp, epipe[1]);
	}
	close(epipe[1]);
	do
		n = read(epipe[0], msg, sizeof(msg) - 1);
	while (n < 0 && errno == EINTR);
	close(epipe[0]);
	if (n > 0) {
		msg[n] = '\0';
		waitpid(pid, &status, 0);
		snprintf(first, sizeof(first), "error %s", msg);
		finish(&sp, first, NULL, false);
		spec_release(&sp);
		return 0;
	}
	n = snprintf(text, sizeof(text), "%ld\n", (long)pid);
	file_write_atomic(dir, "pid", text, (size_t)n, 0600, false, NULL);
	report("started %ld %.3f", (long)pid, now_epoch());

	status = wait_command(&sp, pid, &timed_out);
	if (status < 0) {
		snprintf(first, sizeof(first), "error the supervisor lost its command: %s",
		         strerror(errno));
		finish(&sp, first, NULL, false);
	} else if (WIFSIGNALED(status)) {
		snprintf(first, sizeof(first), "signal %d", WTERMSIG(status));
		snprintf(text, sizeof(text), "signal %d", WTERMSIG(status));
		finish(&sp, first, text, timed_out);
	} else {
		snprintf(first, sizeof(first), "exit %d", WEXITSTATUS(status));
		snprintf(text, sizeof(text), "exit %d", WEXITSTATUS(status));
		finish(&sp, first, text, timed_out);
	}
	spec_release(&sp);
	return 0;
}

int
exec_supervise_main(int argc, char **argv)
{
	sigset_t chld;
	int fd;

	if (argc != 2 || fcntl(REPORT_FD, F_GETFD) < 0 || fcntl(LOCK_FD, F_GETFD) < 0 ||
	    flock(LOCK_FD, LOCK_EX | LOCK_NB) < 0) {
		fputs("gpuscope: '__supervise' is started by 'gpuscope queued' only\n", stderr);
		return 2;
	}
	/* the command must inherit neither the lock (the sign that we live) nor the pipe */
	fcntl(REPORT_FD, F_SETFD, FD_CLOEXEC);
	fcntl(LOCK_FD, F_SETFD, FD_CLOEXEC);
	/* 0, 1 and 2 on /dev/null: nothing we open takes their place */
	while ((fd = open("/dev/null", O_RDWR)) >= 0 && fd <= 2)
		;
	if (fd > 2)
		close(fd);
	default_signals();
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	clearenv();
	setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", 1);
	umask(077);
	return supervise(argv[1]);
}
