/*
 * Tests of the queue's executor (src/queue/exec.c, supervise.c, cgroup.c):
 * real jobs under real supervisors, in a cgroup v2 of their own below the
 * hierarchy this machine mounts, as root and as 'nobody': reports, exit
 * codes, logs and their owners, launch errors, killing a tree, probing
 * without the pipe, the time-limit backstop, freezing, opening files as a
 * user, and the session fallback without cgroups. Needs root (skipped
 * otherwise), and a writable cgroup2 for the cgroup cases.
 *
 * The supervisor is this very program ("t_queue_exec __supervise JOBDIR"),
 * or GPUSCOPE_BIN (a built gpuscope) when set.
 */
#include "queue/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/err.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "harness.h"
#include "queue/cgroup.h"
#include "queue/job.h"

static char tmp[256];
static uint64_t next_id = 1;

struct run {
	bool started;
	pid_t pid;
	bool exited;
	struct exec_report exit;
};

static void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* A job of uid running argv (NULL-terminated), in tmp, with env (NAME=VALUE..., NULL). */
static void
make_job(struct qjob *j, uid_t uid, const char *const *argv, const char *const *env)
{
	struct passwd *pw = getpwuid(uid);
	struct strbuf sb;

	qjob_init(j);
	j->id = next_id++;
	j->uid = uid;
	j->gid = pw ? pw->pw_gid : (gid_t)uid;
	snprintf(j->user, sizeof(j->user), "%s", pw ? pw->pw_name : "?");
	snprintf(j->name, sizeof(j->name), "test-%llu", (unsigned long long)j->id);
	qjob_set_str(&j->cwd, tmp);
	strbuf_init(&sb, 0);
	for (size_t i = 0; argv[i]; i++)
		strbuf_add(&sb, argv[i], strlen(argv[i]) + 1);
	j->argv = strbuf_detach(&sb, &j->argv_len);
	strbuf_init(&sb, 0);
	for (size_t i = 0; env && env[i]; i++)
		strbuf_add(&sb, env[i], strlen(env[i]) + 1);
	j->env = strbuf_detach(&sb, &j->env_len);
	j->state = QJ_STARTING;
}

/* Read reports until the job has ended (or ms passed). */
static void
read_until_exit(int fd, struct run *r, int ms)
{
	for (int waited = 0; waited < ms && !r->exited;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct exec_report rep;

		if (poll(&p, 1, 100) == 0) {
			waited += 100;
			continue;
		}
		if (exec_read_report(fd, &rep) < 0)
			break;
		if (rep.kind == ER_STARTED) {
			r->started = true;
			r->pid = rep.pid;
		} else if (rep.kind == ER_EXIT) {
			r->exited = true;
			r->exit = rep;
		} else if (rep.kind == ER_EOF) {
			break;
		}
	}
}

static void
read_until_started(int fd, struct run *r, int ms)
{
	for (int waited = 0; waited < ms && !r->started && !r->exited;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct exec_report rep;

		if (poll(&p, 1, 100) == 0) {
			waited += 100;
			continue;
		}
		if (exec_read_report(fd, &rep) < 0 || rep.kind == ER_EOF)
			break;
		if (rep.kind == ER_STARTED) {
			r->started = true;
			r->pid = rep.pid;
		} else if (rep.kind == ER_EXIT) {
			r->exited = true;
			r->exit = rep;
		}
	}
}

/* Reap the supervisor (the daemon does that in its loop). */
static void
reap(const struct qjob *j)
{
	for (int i = 0; i < 100; i++) {
		if (waitpid(j->sup_pid, NULL, WNOHANG) != 0)
			return;
		sleep_ms(50);
	}
	diag("the supervisor %ld of job %llu did not end", (long)j->sup_pid,
	     (unsigned long long)j->id);
}

static bool
file_has(const char *path, const char *want)
{
	char text[4096];

	if (file_read_small(path, text, sizeof(text)) < 0)
		return false;
	return strstr(text, want) != NULL;
}

static size_t
count_pids(const struct exec_env *env, const struct qjob *j)
{
	pid_t *pids = NULL;
	size_t nr = 0;

	exec_pids(env, j, &pids, &nr, NULL);
	free(pids);
	return nr;
}

static void
test_root_job(const struct exec_env *env)
{
	const char *argv[] = {
		"sh", "-c",
		"echo hi; echo \"cvd=$CUDA_VISIBLE_DEVICES nvd=$NVIDIA_VISIBLE_DEVICES "
		"order=$CUDA_DEVICE_ORDER id=$GPUSCOPE_JOB_ID n=$GPUSCOPE_JOB_GPUS "
		"ssh=$SSH_AUTH_SOCK sudo=$SUDO_USER keep=$KEEP home=$HOME\"; "
		"echo oops >&2; exit 3",
		NULL
	};
	const char *envv[] = { "KEEP=yes",           "SSH_AUTH_SOCK=/tmp/agent",
		               "SUDO_USER=bob",      "CUDA_VISIBLE_DEVICES=0",
		               "PATH=/usr/bin:/bin", NULL };
	struct exec_launch l = { .grace = 5 };
	struct err err = ERR_INIT;
	struct run r = { 0 };
	struct qjob j;
	char out[4200], want[512], dir[1200];
	struct stat st;
	int rc;

	make_job(&j, 0, argv, envv);
	j.nr_gpu = 2;
	snprintf(j.gpu_uuid[0], QJ_UUID_LEN, "GPU-aaaa");
	snprintf(j.gpu_uuid[1], QJ_UUID_LEN, "GPU-bbbb");
	rc = exec_start(env, &j, &l, &err);
	is_int(rc, 0, "root job: exec_start (%s)", err.msg);
	if (rc)
		return;
	ok(j.sup_pid > 0 && j.sup_start > 0, "root job: the supervisor's pid and start time");
	if (env->cgroups)
		ok(strstr(j.cgroup, "/job-") != NULL, "root job: its cgroup is '%s'", j.cgroup);
	read_until_exit(l.report_fd, &r, 10000);
	ok(r.started && r.pid > 0, "root job: reported started");
	ok(r.exited, "root job: reported its end");
	is_int(r.exit.exit_code, 3, "root job: exit code 3");
	is_int(r.exit.exit_signal, 0, "root job: no signal");
	ok(!r.exit.launch_error && !r.exit.timed_out,
	   "root job: neither a launch error nor a time out");
	exec_default_output(env, &j, out, sizeof(out));
	ok(file_has(out, "hi\n"), "root job: stdout in '%s'", out);
	ok(file_has(out, "oops\n"), "root job: stderr with stdout");
	snprintf(
	        want, sizeof(want),
	        "cvd=GPU-aaaa,GPU-bbbb nvd=GPU-aaaa,GPU-bbbb order=PCI_BUS_ID id=%llu n=2 ssh= sudo= keep=yes home=/root",
	        (unsigned long long)j.id);
	ok(file_has(out, want), "root job: its environment (%s)", want);
	ok(stat(out, &st) == 0 && st.st_uid == 0 && (st.st_mode & 0777) == 0600,
	   "root job: the log is root's, 0600");
	snprintf(dir, sizeof(dir), "%s/state/jobs/%llu/exit", tmp, (unsigned long long)j.id);
	ok(file_has(dir, "exit 3\n"), "root job: JOBDIR/exit says 'exit 3'");
	close(l.report_fd);
	reap(&j);
	is_int(exec_cleanup(env, &j, &err), 0, "root job: exec_cleanup (%s)", err.msg);
	snprintf(dir, sizeof(dir), "%s/state/jobs/%llu", tmp, (unsigned long long)j.id);
	ok(access(dir, F_OK) < 0 && (!j.cgroup[0] || access(j.cgroup, F_OK) < 0),
	   "root job: JOBDIR and the cgroup are gone");
	qjob_release(&j);
}

static void
test_user_job(const struct exec_env *env)
{
	const char *argv[] = {
		"sh", "-c",
		"echo uid=$(id -u) gid=$(id -g) user=$USER; touch made 2>/dev/null; exit 0", NULL
	};
	struct exec_launch l = { .grace = 5 };
	struct err err = ERR_INIT;
	struct run r = { 0 };
	struct qjob j;
	char out[4200], logdir[1200], made[600];
	struct stat st;
	int rc;

	make_job(&j, 65534, argv, NULL);
	rc = exec_start(env, &j, &l, &err);
	is_int(rc, 0, "nobody's job: exec_start (%s)", err.msg);
	if (rc)
		return;
	read_until_exit(l.report_fd, &r, 10000);
	is_int(r.exit.exit_code, 0, "nobody's job: exit code 0");
	exec_default_output(env, &j, out, sizeof(out));
	ok(file_has(out, "uid=65534 gid=65534 user=nobody"), "nobody's job: runs as nobody");
	ok(stat(out, &st) == 0 && st.st_uid == 65534, "nobody's job: the log is nobody's");
	snprintf(logdir, sizeof(logdir), "%s/state/logs/65534", tmp);
	ok(stat(logdir, &st) == 0 && st.st_uid == 65534 && (st.st_mode & 0777) == 0700,
	   "nobody's job: logs/65534 is nobody's, 0700");
	snprintf(made, sizeof(made), "%s/made", tmp);
	ok(access(made, F_OK) < 0, "nobody's job: cannot write in root's 0755 directory");
	close(l.report_fd);
	reap(&j);
	exec_cleanup(env, &j, NULL);
	qjob_release(&j);

	/* a log directory that is not the owner's: refused */
	make_job(&j, 65534, argv, NULL);
	chown(logdir, 0, 0);
	rc = exec_start(env, &j, &l, &err);
	ok(rc < 0 && strstr(err.msg, "not a directory of uid 65534"),
	   "a log directory not of the owner: refused (%s)", err.msg);
	chown(logdir, 65534, 65534);
	if (rc == 0) {
		close(l.report_fd);
		reap(&j);
	}
	exec_cleanup(env, &j, NULL);
	qjob_release(&j);
}

static void
test_launch_errors(const struct exec_env *env)
{
	const char *argv[] = { "/nonexistent/command", "x", NULL };
	const char *argv2[] = { "true", NULL };
	struct exec_launch l = { .grace = 5 };
	struct err err = ERR_INIT;
	struct run r = { 0 };
	struct qjob j;
	char out[4200];
	int rc;

	make_job(&j, 65534, argv, NULL);
	rc = exec_start(env, &j, &l, &err);
	is_int(rc, 0, "missing command: exec_start (%s)", err.msg);
	if (rc)
		return;
	read_until_exit(l.report_fd, &r, 10000);
	ok(!r.started, "missing command: never reported started");
	ok(r.exited && r.exit.launch_error, "missing command: a launch error");
	ok(strstr(r.exit.text, "cannot run '/nonexistent/command': No such file or directory") !=
	           NULL,
	   "missing command: says why (%s)", r.exit.text);
	exec_default_output(env, &j, out, sizeof(out));
	ok(file_has(out, "gpuscope queue: cannot run '/nonexistent/command'"),
	   "missing command: the log says it too");
	close(l.report_fd);
	reap(&j);
	exec_cleanup(env, &j, NULL);
	qjob_release(&j);

	memset(&r, 0, sizeof(r));
	make_job(&j, 65534, argv2, NULL);
	{
		char dir[QJ_PATH_LEN];

		snprintf(dir, sizeof(dir), "%s/no-such-dir", tmp);
		qjob_set_str(&j.cwd, dir);
	}
	rc = exec_start(env, &j, &l, &err);
	is_int(rc, 0, "missing directory: exec_start (%s)", err.msg);
	if (rc)
		return;
	read_until_exit(l.report_fd, &r, 10000);
	ok(r.exited && r.exit.launch_error && strstr(r.exit.text, "cannot enter the directory"),
	   "missing directory: a launch error (%s)", r.exit.text);
	close(l.report_fd);
	reap(&j);
	exec_cleanup(env, &j, NULL);
	qjob_release(&j);
}

/* A supervisor that cannot be executed: the job ends with a launch error, on the pipe and on disk.
 */
static void
test_no_supervisor(const struct exec_env *env)
{
	const char *argv[] = { "true", NULL };
	struct exec_launch l = { .grace = 5 };
	struct exec_env bad = *env;
	struct err err = ERR_INIT;
	struct exec_probe p;
	struct run r = { 0 };
	struct qjob j;
	int rc;

	snprintf(bad.self_exe, sizeof(bad.self_exe), "%s", "/nonexistent/gpuscope");
	make_job(&j, 65534, argv, NULL);
	rc = exec_start(&bad, &j, &l, &err);
	is_int(rc, 0, "no supervisor: exec_start (%s)", err.msg);
	if (rc)
		return;
	read_until_exit(l.report_fd, &r, 10000);
	ok(r.exited && r.exit.launch_error && strstr(r.exit.text, "cannot execute the supervisor"),
	   "no supervisor: a launch error (%s)", r.exit.text);
	close(l.report_fd);
	reap(&j);
	exec_probe(&bad, &j, &p, NULL);
	ok(p.ended && p.exit.launch_error && !p.sup_alive, "no supervisor: JOBDIR/exit says so");
	exec_cleanup(&bad, &j, NULL);
	qjob_release(&j);
}

static bool
all_gone(const pid_t *pids, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		if (kill(pids[i], 0) == 0 || errno != ESRCH)
			return false;
	return true;
}

static void
test_kill_tree(const struct exec_env *env, const char *what)
{
	const char *argv[] = { "sh", "-c", "sleep 100 & sleep 100 & wait", NULL };
	struct exec_launch l = { .grace = 5 };
	struct err err = ERR_INIT;
	struct run r = { 0 };
	pid_t *pids = NULL;
	size_t nr = 0;
	struct qjob j;
	bool mine = true;
	int rc;

	make_job(&j, 65534, argv, NULL);
	rc = exec_start(env, &j, &l, &err);
	is_int(rc, 0, "%s: kill: exec_start (%s)", what, err.msg);
	if (rc)
		return;
	read_until_started(l.report_fd, &r, 10000);
	ok(r.started, "%s: kill: started", what);
	j.pid = r.pid;
	for (int i = 0; i < 100 && count_pids(env, &j) < 3; i++)
		sleep_ms(20);
	exec_pids(env, &j, &pids, &nr, &err);
	is_int(nr, 3, "%s: kill: three processes in the job", what);
	for (size_t i = 0; i < nr; i++)
		if (exec_pid_job(env, pids[i]) != j.id)
			mine = false;
	ok(nr && mine, "%s: exec_pid_job gives the job of each", what);
	is_int(exec_pid_job(env, getpid()), 0, "%s: exec_pid_job of a process not of a job: 0",
	       what);
	rc = exec_kill(env, &j, &err);
	is_int(rc, 0, "%s: exec_kill (%s)", what, err.msg);
	for (int i = 0; i < 100 && !all_gone(pids, nr); i++)
		sleep_ms(20);
	ok(all_gone(pids, nr), "%s: kill: every process is gone", what);
	is_int(count_pids(env, &j), 0, "%s: kill: nothing left in the job", what);
	read_until_exit(l.report_fd, &r, 10000);
	ok(r.exited && r.exit.exit_signal == SIGKILL, "%s: kill: reported killed by signal 9",
	   what);
	free(pids);
	close(l.report_fd);
	reap(&j);
	is_int(exec_cleanup(env, &j, &err), 0, "%s: kill: exec_cleanup (%s)", what, err.msg);
	qjob_release(&j);
}

static void
test_probe(const struct exec_env *env)
{
	const char *argv[] = { "sh", "-c", "sleep 1; exit 5", NULL };
	struct exec_launch l = { .grace = 5 };
	struct err err = ERR_INIT;
	struct exec_probe p;
	struct run r = { 0 };
	struct qjob j;
	int rc;

	make_job(&j, 65534, argv, NULL);
	rc = exec_start(env, &j, &l, &err);
	is_int(rc, 0, "probe: exec_start (%s)", err.msg);
	if (rc)
		return;
	read_until_started(l.report_fd, &r, 10000);
	/* the daemon dies: the pipe is forgotten, the supervisor carries on (EPIPE ignored) */
	close(l.report_fd);
	rc = exec_probe(env, &j, &p, &err);
	is_int(rc, 0, "probe: while it runs (%s)", err.msg);
	ok(p.sup_alive && p.started && !p.ended && p.populated && p.pid == r.pid,
	   "probe: supervisor alive, started (pid %ld), not ended, populated", (long)p.pid);
	for (int i = 0; i < 100; i++) {
		exec_probe(env, &j, &p, NULL);
		if (p.ended && !p.sup_alive)
			break;
		waitpid(j.sup_pid, NULL, WNOHANG);
		sleep_ms(100);
	}
	ok(p.ended && p.exit.exit_code == 5 && !p.exit.launch_error,
	   "probe: ended with exit code 5 (got %d)", p.exit.exit_code);
	ok(!p.sup_alive && !p.populated, "probe: supervisor gone, nothing left");
	reap(&j);
	exec_cleanup(env, &j, NULL);
	qjob_release(&j);
}

static void
test_time_limit(const struct exec_env *env)
{
	const char *argv[] = { "sh", "-c", "trap '' TERM; while :; do sleep 1; done", NULL };
	struct exec_launch l = { .grace = 1 };
	struct err err = ERR_INIT;
	struct exec_probe p;
	struct run r = { 0 };
	struct qjob j;
	int rc;

	make_job(&j, 65534, argv, NULL);
	j.req.time_limit = 1;
	rc = exec_start(env, &j, &l, &err);
	is_int(rc, 0, "time limit: exec_start (%s)", err.msg);
	if (rc)
		return;
	read_until_exit(l.report_fd, &r, 15000);
	ok(r.exited && r.exit.timed_out, "time limit: the supervisor stopped it");
	is_int(r.exit.exit_signal, SIGKILL, "time limit: SIGTERM ignored, SIGKILL after the grace");
	exec_probe(env, &j, &p, NULL);
	ok(p.ended && p.exit.timed_out, "time limit: JOBDIR/exit says so");
	close(l.report_fd);
	reap(&j);
	exec_kill(env, &j, NULL);
	exec_cleanup(env, &j, NULL);
	qjob_release(&j);
}

/* Frozen (suspended) time does not count against the time limit. */
static void
test_time_limit_frozen(const struct exec_env *env)
{
	const char *argv[] = { "sh", "-c", "while :; do sleep 0.1; done", NULL };
	struct exec_launch l = { .grace = 1 };
	struct err err = ERR_INIT;
	struct exec_probe p;
	struct run r = { 0 };
	struct qjob j;
	int rc;

	make_job(&j, 65534, argv, NULL);
	j.req.time_limit = 1;
	rc = exec_start(env, &j, &l, &err);
	is_int(rc, 0, "time limit, frozen: exec_start (%s)", err.msg);
	if (rc)
		return;
	read_until_started(l.report_fd, &r, 10000);
	j.pid = r.pid;
	exec_freeze(env, &j, true, NULL);
	sleep_ms(3800);
	exec_probe(env, &j, &p, NULL);
	ok(!p.ended && p.populated, "time limit, frozen: not stopped while frozen past its limit");
	exec_freeze(env, &j, false, NULL);
	read_until_exit(l.report_fd, &r, 15000);
	ok(r.exited && r.exit.timed_out, "time limit, frozen: stopped once it ran out of time");
	close(l.report_fd);
	reap(&j);
	exec_kill(env, &j, NULL);
	exec_cleanup(env, &j, NULL);
	qjob_release(&j);
}

static void
test_freeze(const struct exec_env *env)
{
	const char *argv[] = { "sh", "-c", "while :; do sleep 0.05; echo x; done", NULL };
	struct exec_launch l = { .grace = 1 };
	struct err err = ERR_INIT;
	struct run r = { 0 };
	struct qjob j;
	char out[4200], ev[1300];
	struct stat a, b;
	int rc;

	make_job(&j, 65534, argv, NULL);
	rc = exec_start(env, &j, &l, &err);
	is_int(rc, 0, "freeze: exec_start (%s)", err.msg);
	if (rc)
		return;
	read_until_started(l.report_fd, &r, 10000);
	sleep_ms(200);
	rc = exec_freeze(env, &j, true, &err);
	is_int(rc, 0, "freeze: exec_freeze (%s)", err.msg);
	snprintf(ev, sizeof(ev), "%s/cgroup.events", j.cgroup);
	ok(file_has(ev, "frozen 1"), "freeze: cgroup.events says frozen");
	exec_default_output(env, &j, out, sizeof(out));
	stat(out, &a);
	sleep_ms(300);
	stat(out, &b);
	ok(a.st_size == b.st_size, "freeze: the job writes nothing while frozen");
	rc = exec_freeze(env, &j, false, &err);
	is_int(rc, 0, "thaw: exec_freeze (%s)", err.msg);
	sleep_ms(300);
	stat(out, &b);
	ok(file_has(ev, "frozen 0") && b.st_size > a.st_size, "thaw: it runs again");
	exec_kill(env, &j, NULL);
	read_until_exit(l.report_fd, &r, 10000);
	close(l.report_fd);
	reap(&j);
	exec_cleanup(env, &j, NULL);
	qjob_release(&j);
}

static void
test_open_as(void)
{
	char link[600], mine[600], roots[600], fifo[600];
	struct err err = ERR_INIT;
	int fd;

	snprintf(link, sizeof(link), "%s/shadow-link", tmp);
	snprintf(mine, sizeof(mine), "%s/nobodys", tmp);
	snprintf(roots, sizeof(roots), "%s/roots", tmp);
	snprintf(fifo, sizeof(fifo), "%s/fifo", tmp);
	symlink("/etc/shadow", link);
	lchown(link, 65534, 65534);
	fd = exec_open_as(65534, 65534, link, O_RDONLY, 0, &err);
	ok(fd == E_PERM, "open_as: a user's symlink to /etc/shadow is refused (%s)", err.msg);
	if (fd >= 0)
		close(fd);

	close(open(roots, O_WRONLY | O_CREAT, 0600));
	err_clear(&err);
	fd = exec_open_as(65534, 65534, roots, O_RDONLY, 0, &err);
	ok(fd == E_PERM, "open_as: root's 0600 file is refused to nobody (%s)", err.msg);
	if (fd >= 0)
		close(fd);
	fd = exec_open_as(0, 0, roots, O_RDONLY, 0, NULL);
	ok(fd >= 0, "open_as: root may open it");
	if (fd >= 0)
		close(fd);

	close(open(mine, O_WRONLY | O_CREAT, 0600));
	chown(mine, 65534, 65534);
	fd = exec_open_as(65534, 65534, mine, O_RDONLY, 0, &err);
	ok(fd >= 0, "open_as: nobody's own file opens");
	ok(fd >= 0 && !(fcntl(fd, F_GETFL) & O_NONBLOCK), "open_as: O_NONBLOCK only when asked");
	if (fd >= 0)
		close(fd);

	mkfifo(fifo, 0666);
	chown(fifo, 65534, 65534);
	err_clear(&err);
	fd = exec_open_as(65534, 65534, fifo, O_RDONLY, 0, &err);
	ok(fd == E_PERM && strstr(err.msg, "not a regular file"),
	   "open_as: a FIFO is refused at once (%s)", err.msg);
	if (fd >= 0)
		close(fd);
	/* the daemon's own identity came back */
	fd = open(roots, O_RDONLY);
	ok(fd >= 0, "open_as: the caller is root again afterwards");
	if (fd >= 0)
		close(fd);
}

static void
test_reports(void)
{
	struct exec_report r;
	int p[2];

	if (pipe2(p, O_NONBLOCK) < 0) {
		ok(0, "pipe");
		return;
	}
	is_int(exec_read_report(p[0], &r), 0, "report: an empty pipe");
	is_int(r.kind, ER_NONE, "report: nothing yet");
	if (write(p[1], "nonsense here\nexit 7 12.5 0\nsignal 15 13 1\n", 43) != 43)
		diag("short write");
	is_int(exec_read_report(p[0], &r), E_PARSE, "report: a line that is no report");
	exec_read_report(p[0], &r);
	ok(r.kind == ER_EXIT && r.exit_code == 7 && r.time == 12.5 && !r.timed_out,
	   "report: exit 7 at 12.5");
	exec_read_report(p[0], &r);
	ok(r.kind == ER_EXIT && r.exit_signal == 15 && r.timed_out, "report: signal 15, timed out");
	close(p[1]);
	exec_read_report(p[0], &r);
	is_int(r.kind, ER_EOF, "report: the end of the pipe");
	close(p[0]);
}

/* Without a libcuda there is no checkpoint (in a child: the answer is kept for the process). */
static void
test_checkpoint_none(void)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		setenv("GPUSCOPE_CUDA", "/nonexistent/libcuda.so.1", 1);
		_exit(exec_checkpoint_supported() ? 1 : 0);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "checkpoint: not supported without a libcuda");
}

/* The fake libcuda's checkpoint calls: suspend locks, checkpoints, freezes; resume undoes it. */
static void
test_suspend(const struct exec_env *env)
{
	char lib[1200], ckdir[600], live[600], envck[700], envlive[700], st[700], lf[700];
	char script[600], exe[1024];
	const char *argv[] = { "sh", "-c", script, NULL };
	const char *envv[] = { envck, envlive, NULL };
	struct exec_launch l = { .grace = 1 };
	struct err err = ERR_INIT;
	struct run r = { 0 };
	struct qjob j;
	ssize_t n;
	int rc;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	if (strrchr(exe, '/'))
		*strrchr(exe, '/') = '\0';
	snprintf(lib, sizeof(lib), "%s/../fakecuda/libcuda.so.1", exe);
	if (access(lib, R_OK) < 0) {
		skip_missing("no fake libcuda.so.1 built (mk/fakecuda.mk): suspend not tried");
		return;
	}
	setenv("GPUSCOPE_CUDA", lib, 1);
	ok(exec_checkpoint_supported(), "checkpoint: the fake libcuda has the calls");
	snprintf(ckdir, sizeof(ckdir), "%s/ck", tmp);
	snprintf(live, sizeof(live), "%s/live", tmp);
	mkdir(ckdir, 01777);
	chmod(ckdir, 01777);
	mkdir(live, 01777);
	chmod(live, 01777);
	setenv("FAKE_CUDA_CHECKPOINT_DIR", ckdir, 1);
	setenv("FAKE_NVML_LIVE_DIR", live, 1);
	snprintf(envck, sizeof(envck), "FAKE_CUDA_CHECKPOINT_DIR=%s", ckdir);
	snprintf(envlive, sizeof(envlive), "FAKE_NVML_LIVE_DIR=%s", live);
	snprintf(
	        script, sizeof(script),
	        "echo 'GPU-aaaa 100' > $FAKE_NVML_LIVE_DIR/$$; echo running > $FAKE_CUDA_CHECKPOINT_DIR/$$; "
	        "while :; do sleep 0.05; done");
	make_job(&j, 65534, argv, envv);
	rc = exec_start(env, &j, &l, &err);
	is_int(rc, 0, "suspend: exec_start (%s)", err.msg);
	if (rc)
		return;
	read_until_started(l.report_fd, &r, 10000);
	j.pid = r.pid;
	snprintf(st, sizeof(st), "%s/%ld", ckdir, (long)r.pid);
	for (int i = 0; i < 100 && !file_has(st, "running"); i++)
		sleep_ms(20);
	rc = exec_suspend(env, &j, &err);
	is_int(rc, 0, "suspend: exec_suspend (%s)", err.msg);
	ok(file_has(st, "checkpointed"), "suspend: the CUDA process is checkpointed");
	snprintf(lf, sizeof(lf), "%s/ckpt-%ld", live, (long)r.pid);
	ok(access(lf, F_OK) == 0, "suspend: its GPU memory is released (the fake NVML's file)");
	if (env->cgroups) {
		char ev[1300];

		snprintf(ev, sizeof(ev), "%s/cgroup.events", j.cgroup);
		ok(file_has(ev, "frozen 1"), "suspend: the cgroup is frozen");
	}
	rc = exec_resume(env, &j, &err);
	is_int(rc, 0, "resume: exec_resume (%s)", err.msg);
	ok(file_has(st, "running"), "resume: the CUDA process runs again");
	snprintf(lf, sizeof(lf), "%s/%ld", live, (long)r.pid);
	ok(access(lf, F_OK) == 0, "resume: its GPU memory is back");
	exec_kill(env, &j, NULL);
	read_until_exit(l.report_fd, &r, 10000);
	close(l.report_fd);
	reap(&j);
	exec_cleanup(env, &j, NULL);
	qjob_release(&j);
	unsetenv("GPUSCOPE_CUDA");
}

/* A personal queue: the daemon runs as an ordinary user, its jobs run as that user, no others. */
static void
test_personal(const char *self_exe)
{
	char state[600], out[4200];
	int status = 0;
	pid_t pid;

	snprintf(state, sizeof(state), "%s/pstate", tmp);
	mkdir(state, 0700);
	chown(state, 65534, 65534);
	pid = fork();
	if (pid == 0) {
		const char *argv[] = { "sh", "-c", "echo me=$(id -u)", NULL };
		struct exec_launch l = { .grace = 1 };
		struct exec_env e;
		struct run r = { 0 };
		struct qjob j;
		int bits = 0;

		if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
			_exit(255);
		if (exec_init(&e, state, "", NULL) < 0)
			_exit(254);
		snprintf(e.self_exe, sizeof(e.self_exe), "%s", self_exe);
		make_job(&j, 65534, argv, NULL);
		if (exec_start(&e, &j, &l, NULL) == 0) {
			read_until_exit(l.report_fd, &r, 10000);
			exec_default_output(&e, &j, out, sizeof(out));
			if (r.exited && r.exit.exit_code == 0 && file_has(out, "me=65534"))
				bits |= 1;
			close(l.report_fd);
			reap(&j);
			exec_cleanup(&e, &j, NULL);
		}
		qjob_release(&j);
		make_job(&j, 0, argv, NULL);
		if (exec_start(&e, &j, &l, NULL) == E_PERM)
			bits |= 2;
		qjob_release(&j);
		if (exec_open_as(0, 0, "/etc/passwd", O_RDONLY, 0, NULL) == E_PERM)
			bits |= 4;
		if (!e.cgroups && e.why_no_cgroups[0])
			bits |= 8;
		_exit(bits);
	}
	waitpid(pid, &status, 0);
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
	ok(status & 1, "personal queue: its user's job runs as that user (%d)", status);
	ok(status & 2, "personal queue: a job of another uid is refused");
	ok(status & 4, "personal queue: no file is opened as another uid");
	ok(status & 8, "personal queue: without a writable cgroup, no cgroups, and why");
}

static void
rm_tree(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		diag("cannot remove %s", dir);
}

int
main(int argc, char **argv)
{
	struct exec_env env, nocg;
	struct err err = ERR_INIT;
	char mnt[512], want[700];
	const char *bin = getenv("GPUSCOPE_BIN");
	int rc;

	if (argc > 1 && !strcmp(argv[1], "__supervise"))
		return exec_supervise_main(argc - 1, argv + 1);

	test_reports();
	test_checkpoint_none();
	if (geteuid() != 0 || !getpwuid(65534)) {
		skip("not root, or no user 65534: the executor's jobs are not tried");
		return done_testing();
	}
	snprintf(tmp, sizeof(tmp), "/tmp/t_queue_exec.XXXXXX");
	if (!mkdtemp(tmp)) {
		ok(0, "mkdtemp");
		return done_testing();
	}
	chmod(tmp, 0755);
	test_open_as();

	if (cg_mount(mnt, sizeof(mnt), NULL) < 0) {
		skip("no cgroup v2 hierarchy: the cgroup cases are not tried");
		want[0] = '\0';
	} else {
		snprintf(want, sizeof(want), "%s/gpuscope-test-exec-%ld", mnt, (long)getpid());
	}
	snprintf(mnt + 0, sizeof(mnt), "%s/state", tmp);
	rc = exec_init(&env, mnt, want[0] ? want : "/not/a/cgroup", &err);
	is_int(rc, 0, "exec_init (%s)", err.msg);
	if (bin && *bin)
		snprintf(env.self_exe, sizeof(env.self_exe), "%s", bin);
	if (want[0] && env.cgroups) {
		char sup[800];

		is_str(env.cgroup_root, want, "exec_init: the cgroup asked for");
		snprintf(sup, sizeof(sup), "%s/supervisors", want);
		ok(access(sup, F_OK) == 0, "exec_init: the supervisors' leaf");
		test_root_job(&env);
		test_user_job(&env);
		test_launch_errors(&env);
		test_no_supervisor(&env);
		test_kill_tree(&env, "cgroup");
		test_probe(&env);
		test_time_limit(&env);
		test_freeze(&env);
		test_time_limit_frozen(&env);
		test_suspend(&env);
	} else if (want[0]) {
		skip("cgroup v2 is not writable here: the cgroup cases are not tried");
		diag("%s", env.why_no_cgroups);
	}

	/* the same without cgroups: jobs tracked by their session */
	snprintf(mnt, sizeof(mnt), "%s/state", tmp);
	rc = exec_init(&nocg, mnt, "/not/a/cgroup", &err);
	ok(rc == 0 && !nocg.cgroups && strstr(nocg.why_no_cgroups, "not below"),
	   "exec_init: a cgroup_root outside the hierarchy: no cgroups (%s)", nocg.why_no_cgroups);
	snprintf(nocg.self_exe, sizeof(nocg.self_exe), "%s", env.self_exe);
	test_root_job(&nocg);
	test_kill_tree(&nocg, "session");
	test_personal(env.self_exe);

	if (want[0] && env.cgroups) {
		char sup[800];

		snprintf(sup, sizeof(sup), "%s/supervisors", want);
		rmdir(sup);
		rc = rmdir(want);
		ok(rc == 0, "the test's cgroup is left empty (%s)",
		   rc ? strerror(errno) : "removed");
	}
	rm_tree(tmp);
	return done_testing();
}
