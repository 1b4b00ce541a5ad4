/*
 * The daemon's side of running jobs (queue/exec.h): the queue's cgroup,
 * each job's spec, cgroup and supervisor, the supervisor's reports, what a
 * restarted daemon finds of a job, signals, kills, freezing, the CUDA
 * checkpoint, and opening a user's files as the user. The supervisor itself
 * is supervise.c.
 */
#include "queue/exec.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "core/err.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "queue/cgroup.h"
#include "queue/job.h"

/* What the job's environment loses of the user's (common.md, "Environment of a job"). */
static const char *const env_drop[] = {
	"CUDA_VISIBLE_DEVICES",
	"NVIDIA_VISIBLE_DEVICES",
	"ROCR_VISIBLE_DEVICES",
	"HIP_VISIBLE_DEVICES",
	"GPU_DEVICE_ORDINAL",
	"CUDA_DEVICE_ORDER",
	"SSH_AUTH_SOCK",
	"DBUS_SESSION_BUS_ADDRESS",
	"XDG_RUNTIME_DIR",
	"TMUX",
	"TERM_SESSION_ID",
	"HOME",
	"USER",
	"LOGNAME",
};
static const char *const env_drop_prefix[] = { "GPUSCOPE_JOB_", "SUDO_" };

static void
job_dir(const struct exec_env *env, uint64_t id, char *buf, size_t len)
{
	snprintf(buf, len, "%s/jobs/%llu", env->state_dir, (unsigned long long)id);
}

/* The job's cgroup directory, "" without cgroups. */
static void
job_cgroup(const struct exec_env *env, const struct qjob *j, char *buf, size_t len)
{
	if (!env->cgroups)
		snprintf(buf, len, "%s", "");
	else if (j->cgroup[0])
		snprintf(buf, len, "%s", j->cgroup);
	else
		snprintf(buf, len, "%s/job-%llu", env->cgroup_root, (unsigned long long)j->id);
}

/* Without cgroups a job is its session: the id of the command's main process. */
static pid_t
job_sid(const struct exec_env *env, const struct qjob *j)
{
	char path[1200], text[64];

	if (j->pid > 0)
		return j->pid;
	snprintf(path, sizeof(path), "%s/jobs/%llu/pid", env->state_dir, (unsigned long long)j->id);
	if (file_read_small(path, text, sizeof(text)) <= 0)
		return 0;
	return (pid_t)strtol(text, NULL, 10);
}

static int
mkdir_mode(const char *path, mode_t mode, struct err *err)
{
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return err_set(err, errno_status(errno), "cannot create '%s': %s", path,
		               strerror(errno));
	return 0;
}

static int
mkdir_parents(const char *path, mode_t mode, struct err *err)
{
	char buf[1024];

	str_copy(buf, sizeof(buf), path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return err_set(err, errno_status(errno), "cannot create '%s': %s", buf,
			               strerror(errno));
		*p = '/';
	}
	return mkdir_mode(buf, mode, err);
}

/* systemd marks a cgroup it delegated (Delegate=yes) with this extended attribute. */
static bool
cg_delegated(const char *dir)
{
	char v[8];

	return getxattr(dir, "trusted.delegate", v, sizeof(v)) > 0 ||
	       getxattr(dir, "user.delegate", v, sizeof(v)) > 0;
}

/* Choose the queue's cgroup (exec.h); "" in root with why when there is none to use. */
static void
choose_root(struct exec_env *env, const char *mnt, const char *want, char *root, size_t len,
            bool *move_self)
{
	char self[512] = "", dir[1024];
	size_t mlen = strlen(mnt);

	*move_self = false;
	root[0] = '\0';
	if (want && *want) {
		if (want[0] != '/') {
			snprintf(root, len, "%s/%s", mnt, want);
		} else if (!strncmp(want, mnt, mlen) && want[mlen] == '/' && want[mlen + 1]) {
			snprintf(root, len, "%s", want);
		} else {
			snprintf(
			        env->why_no_cgroups, sizeof(env->why_no_cgroups),
			        "cgroup_root '%.80s' is not below the cgroup v2 hierarchy at '%.60s' (name a directory below it, or leave it empty)",
			        want, mnt);
		}
		return;
	}
	if (cg_self(self, sizeof(self), NULL) == 0 && strcmp(self, "/")) {
		size_t slen = strlen(self);

		/* a restarted daemon of a delegated unit is in the "daemon" leaf already */
		if (slen > 7 && !strcmp(self + slen - 7, "/daemon")) {
			snprintf(dir, sizeof(dir), "%s%.*s", mnt, (int)(slen - 7), self);
			if (cg_delegated(dir)) {
				snprintf(root, len, "%s", dir);
				return;
			}
		}
		snprintf(dir, sizeof(dir), "%s%s", mnt, self);
		if (cg_delegated(dir)) {
			snprintf(root, len, "%s", dir);
			*move_self = true;
			return;
		}
	}
	snprintf(root, len, "%s/gpuscope-queue", mnt);
}

int
exec_init(struct exec_env *env, const char *state_dir, const char *want, struct err *err)
{
	char mnt[512], root[1024], path[1200];
	struct err cerr = ERR_INIT;
	struct stat st;
	bool move_self;
	ssize_t n;
	int rc;

	memset(env, 0, sizeof(*env));
	if (!state_dir || !*state_dir)
		return err_set(err, E_USAGE, "no state directory given for the queue's jobs");
	str_copy(env->state_dir, sizeof(env->state_dir), state_dir);
	n = readlink("/proc/self/exe", env->self_exe, sizeof(env->self_exe) - 1);
	if (n < 0)
		return err_set(err, E_IO, "cannot read '/proc/self/exe': %s", strerror(errno));
	env->self_exe[n] = '\0';
	/* upgraded under a running daemon: the new binary at the same path is the one to run */
	if ((size_t)n > 10 && !strcmp(env->self_exe + n - 10, " (deleted)"))
		env->self_exe[n - 10] = '\0';

	rc = mkdir_parents(state_dir, 0711, err);
	if (rc)
		return rc;
	/* the users' logs are below it: they must be able to pass through (not to list it) */
	if (stat(state_dir, &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 0011) != 0011)
		chmod(state_dir, (st.st_mode & 07777) | 0011);
	snprintf(path, sizeof(path), "%s/jobs", state_dir);
	rc = mkdir_mode(path, 0700, err);
	if (!rc) {
		snprintf(path, sizeof(path), "%s/logs", state_dir);
		rc = mkdir_mode(path, 0755, err);
	}
	if (rc)
		return rc;

	if (cg_mount(mnt, sizeof(mnt), &cerr) < 0) {
		snprintf(env->why_no_cgroups, sizeof(env->why_no_cgroups), "%s", cerr.msg);
		return 0;
	}
	choose_root(env, mnt, want, root, sizeof(root), &move_self);
	if (!root[0])
		return 0;
	if (strlen(root) >= sizeof(env->cgroup_root) - 32) {
		snprintf(env->why_no_cgroups, sizeof(env->why_no_cgroups),
		         "the cgroup path '%.128s...' is too long", root);
		return 0;
	}
	if (mkdir_parents(root, 0755, &cerr) < 0)
		goto no_cgroups;
	if (move_self) {
		/* no process may sit in a cgroup whose children have controllers: a leaf of its own
		 */
		snprintf(path, sizeof(path), "%s/daemon", root);
		if (mkdir_mode(path, 0755, &cerr) < 0 || cg_enter(path, 0, &cerr) < 0)
			goto no_cgroups;
	}
	snprintf(path, sizeof(path), "%s/supervisors", root);
	if (mkdir_mode(path, 0755, &cerr) < 0)
		goto no_cgroups;
	snprintf(path, sizeof(path), "%s/supervisors/cgroup.procs", root);
	if (access(path, W_OK) < 0) {
		err_set(&cerr, E_PERM, "cannot write '%s': %s", path, strerror(errno));
		goto no_cgroups;
	}
	snprintf(path, sizeof(path), "%s/supervisors/cgroup.kill", root);
	env->can_kill = access(path, F_OK) == 0;
	str_copy(env->cgroup_root, sizeof(env->cgroup_root), root);
	env->cgroups = true;
	return 0;

no_cgroups:
	snprintf(env->why_no_cgroups, sizeof(env->why_no_cgroups),
	         "cannot set up the queue's cgroup '%s': %s", root, cerr.msg);
	return 0;
}

void
exec_default_output(const struct exec_env *env, const struct qjob *j, char *buf, size_t len)
{
	snprintf(buf, len, "%s/logs/%lu/%llu.out", env->state_dir, (unsigned long)j->uid,
	         (unsigned long long)j->id);
}

/* STATE/logs/UID: the owner's, 0700; something else in its place is refused. */
static int
ensure_log_dir(const struct exec_env *env, const struct qjob *j, struct err *err)
{
	char dir[1200];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/logs/%lu", env->state_dir, (unsigned long)j->uid);
	if (mkdir(dir, 0700) == 0) {
		if (chown(dir, j->uid, j->gid) < 0 && geteuid() == 0) {
			int e = errno;

			rmdir(dir);
			return err_set(err, errno_status(e), "cannot give '%s' to uid %lu: %s", dir,
			               (unsigned long)j->uid, strerror(e));
		}
		return 0;
	}
	if (errno != EEXIST)
		return err_set(err, errno_status(errno), "cannot create '%s': %s", dir,
		               strerror(errno));
	if (lstat(dir, &st) < 0)
		return err_set(err, errno_status(errno), "cannot read '%s': %s", dir,
		               strerror(errno));
	if (!S_ISDIR(st.st_mode) || st.st_uid != j->uid)
		return err_set(
		        err, E_PERM,
		        "'%s' is not a directory of uid %lu: remove it, the queue recreates it",
		        dir, (unsigned long)j->uid);
	return 0;
}

static bool
env_dropped(const char *kv)
{
	size_t n = strcspn(kv, "=");

	if (!kv[n] || n == 0)
		return true; /* not NAME=VALUE */
	for (size_t i = 0; i < ARRAY_SIZE(env_drop); i++)
		if (strlen(env_drop[i]) == n && !strncmp(kv, env_drop[i], n))
			return true;
	for (size_t i = 0; i < ARRAY_SIZE(env_drop_prefix); i++)
		if (!strncmp(kv, env_drop_prefix[i], strlen(env_drop_prefix[i])))
			return true;
	return false;
}

static void
env_add(json_t *a, const char *name, const char *value)
{
	char *kv = xstrfmt("%s=%s", name, value);

	json_array_append_new(a, json_string(kv));
	free(kv);
}

/* The job's whole environment: the user's, less what env_drop names, plus the queue's. */
static json_t *
job_environment(const struct qjob *j, const struct passwd *pw)
{
	json_t *a = json_array();
	struct strbuf uuids;
	char num[32];

	for (size_t off = 0; j->env && off < j->env_len;) {
		const char *kv = j->env + off;
		size_t n = strnlen(kv, j->env_len - off);

		if (n > 0 && !env_dropped(kv)) {
			char *s = xstrndup(kv, n);
			json_t *v = json_string(s);

			/* a value that is not UTF-8 cannot be carried in the spec: dropped */
			if (v)
				json_array_append_new(a, v);
			free(s);
		}
		off += n + 1;
	}
	strbuf_init(&uuids, 0);
	for (unsigned i = 0; i < j->nr_gpu && i < QJ_MAX_GPUS; i++) {
		if (i)
			strbuf_addch(&uuids, ',');
		strbuf_addstr(&uuids, j->gpu_uuid[i]);
	}
	env_add(a, "CUDA_VISIBLE_DEVICES", uuids.buf);
	env_add(a, "NVIDIA_VISIBLE_DEVICES", uuids.buf);
	env_add(a, "CUDA_DEVICE_ORDER", "PCI_BUS_ID");
	snprintf(num, sizeof(num), "%llu", (unsigned long long)j->id);
	env_add(a, "GPUSCOPE_JOB_ID", num);
	env_add(a, "GPUSCOPE_JOB_NAME", j->name);
	snprintf(num, sizeof(num), "%u", j->nr_gpu);
	env_add(a, "GPUSCOPE_JOB_GPUS", num);
	env_add(a, "HOME", pw->pw_dir);
	env_add(a, "USER", pw->pw_name);
	env_add(a, "LOGNAME", pw->pw_name);
	strbuf_release(&uuids);
	return a;
}

static json_t *
job_argv(const struct qjob *j)
{
	json_t *a = json_array();

	for (size_t off = 0; j->argv && off < j->argv_len;) {
		size_t n = strnlen(j->argv + off, j->argv_len - off);
		char *s = xstrndup(j->argv + off, n);
		json_t *v = json_string(s);

		free(s);
		if (!v) {
			json_decref(a);
			return NULL;
		}
		json_array_append_new(a, v);
		off += n + 1;
	}
	return a;
}

static int
write_spec(const struct exec_env *env, const struct qjob *j, const char *dir, const char *cg,
           const struct passwd *pw, const struct exec_launch *l, struct err *err)
{
	char out[4200], sup_cg[1100] = "";
	json_t *spec, *argv, *gpus, *name;
	char *text;
	int rc;

	argv = job_argv(j);
	if (!argv || json_array_size(argv) == 0) {
		json_decref(argv);
		return err_set(err, E_USAGE,
		               "job %llu has no command to run (or one that is not UTF-8)",
		               (unsigned long long)j->id);
	}
	if (qjob_str(j->out_path)[0])
		str_copy(out, sizeof(out), j->out_path);
	else
		exec_default_output(env, j, out, sizeof(out));
	if (env->cgroups)
		snprintf(sup_cg, sizeof(sup_cg), "%s/supervisors", env->cgroup_root);
	name = json_string(j->name);
	if (!name)
		name = json_string("");
	gpus = json_array();
	for (unsigned i = 0; i < j->nr_gpu && i < QJ_MAX_GPUS; i++)
		json_array_append_new(gpus, json_string(j->gpu_uuid[i]));
	spec = json_pack(
	        "{s:I, s:o, s:o, s:o, s:s, s:I, s:I, s:s, s:s, s:s, s:s, s:s, s:I, s:f, s:o}",
	        "job", (json_int_t)j->id, "name", name, "argv", argv, "env", job_environment(j, pw),
	        "cwd", qjob_str(j->cwd)[0] ? j->cwd : "/", "uid", (json_int_t)j->uid, "gid",
	        (json_int_t)j->gid, "user", pw->pw_name, "out", out, "err", qjob_str(j->err_path),
	        "cgroup", cg, "sup_cgroup", sup_cg, "time_limit", (json_int_t)j->req.time_limit,
	        "grace", l->grace > 0 ? l->grace : 30.0, "gpus", gpus);
	if (!spec)
		return err_set(err, E_USAGE, "job %llu: a path or name is not UTF-8",
		               (unsigned long long)j->id);
	text = json_dumps(spec, JSON_COMPACT);
	json_decref(spec);
	if (!text)
		return err_set(err, E_IO, "cannot write the spec of job %llu",
		               (unsigned long long)j->id);
	rc = file_write_atomic(dir, "spec", text, strlen(text), 0600, false, err);
	free(text);
	return rc;
}

/* A JOBDIR left by an earlier run of the same job (requeued): its files go. */
static void
clear_job_dir(const char *dir)
{
	static const char *const names[] = { "exit", "exit.tmp", "pid",  "pid.tmp",
		                             "sup",  "sup.tmp",  "spec", "spec.tmp" };
	char path[1300];

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
}

static int
get_passwd(uid_t uid, struct passwd *pw, char *buf, size_t len, struct err *err)
{
	struct passwd *res = NULL;
	int e = getpwuid_r(uid, pw, buf, len, &res);

	if (!res)
		return err_set(err, E_NOTFOUND,
		               "uid %lu has no passwd entry%s%s: the job cannot run",
		               (unsigned long)uid, e ? ": " : "", e ? strerror(e) : "");
	return 0;
}

int
exec_start(const struct exec_env *env, struct qjob *j, struct exec_launch *l, struct err *err)
{
	char dir[1200], cg[1100], path[1300], pwbuf[4096], exit_path[1300], exit_text[1100],
	        rep_text[400];
	struct passwd pw;
	int lockfd = -1, pfd[2] = { -1, -1 }, rc, exit_len, rep_len, ex;
	long maxfd;
	pid_t pid;

	l->report_fd = -1;
	if (geteuid() != 0 && j->uid != geteuid())
		return err_set(
		        err, E_PERM,
		        "a queue not run by root runs jobs of its own user only (uid %lu), not of uid %lu",
		        (unsigned long)geteuid(), (unsigned long)j->uid);
	rc = get_passwd(j->uid, &pw, pwbuf, sizeof(pwbuf), err);
	if (rc)
		return rc;
	job_dir(env, j->id, dir, sizeof(dir));
	rc = mkdir_mode(dir, 0700, err);
	if (rc)
		return rc;
	snprintf(path, sizeof(path), "%s/lock", dir);
	lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lockfd < 0)
		return err_set(err, errno_status(errno), "cannot open '%s': %s", path,
		               strerror(errno));
	if (flock(lockfd, LOCK_EX | LOCK_NB) < 0) {
		rc = err_set(err, E_BUSY, "a supervisor of job %llu still runs (it holds '%s')",
		             (unsigned long long)j->id, path);
		goto fail;
	}
	clear_job_dir(dir);
	if (!qjob_str(j->out_path)[0]) {
		rc = ensure_log_dir(env, j, err);
		if (rc)
			goto fail;
	}
	cg[0] = '\0';
	if (env->cgroups) {
		snprintf(cg, sizeof(cg), "%s/job-%llu", env->cgroup_root,
		         (unsigned long long)j->id);
		if (mkdir(cg, 0755) < 0 && errno != EEXIST) {
			rc = err_set(err, errno_status(errno), "cannot create the cgroup '%s': %s",
			             cg, strerror(errno));
			goto fail;
		}
		if (cg_populated(cg)) {
			rc = err_set(
			        err, E_BUSY,
			        "processes of an earlier run of job %llu remain in '%s': kill them first",
			        (unsigned long long)j->id, cg);
			goto fail;
		}
	}
	rc = write_spec(env, j, dir, cg, &pw, l, err);
	if (rc)
		goto fail;
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		rc = err_set(err, E_IO, "cannot make a pipe for job %llu: %s",
		             (unsigned long long)j->id, strerror(errno));
		goto fail;
	}
	maxfd = sysconf(_SC_OPEN_MAX);
	if (maxfd < 0 || maxfd > 65536)
		maxfd = 65536;
	/* what the child says when the supervisor cannot be executed, made before the fork */
	snprintf(exit_path, sizeof(exit_path), "%s/exit", dir);
	exit_len = snprintf(exit_text, sizeof(exit_text),
	                    "error cannot execute the supervisor '%.900s'\n%.3f\n", env->self_exe,
	                    now_epoch());
	rep_len = snprintf(rep_text, sizeof(rep_text),
	                   "error %.3f cannot execute the supervisor '%.200s'\n", now_epoch(),
	                   env->self_exe);
	if (exit_len < 0 || (size_t)exit_len >= sizeof(exit_text))
		exit_len = 0;
	if (rep_len < 0 || (size_t)rep_len >= sizeof(rep_text))
		rep_len = 0;

	pid = fork();
	if (pid < 0) {
		rc = err_set(err, E_IO, "cannot start the supervisor of job %llu: %s",
		             (unsigned long long)j->id, strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		/* only async-signal-safe calls here: the daemon has threads */
		char a0[] = "gpuscope", a1[] = "__supervise",
		     e0[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
		char *const args[] = { a0, a1, dir, NULL };
		char *const envp[] = { e0, NULL };
		int lk = fcntl(lockfd, F_DUPFD, 10), wr = fcntl(pfd[1], F_DUPFD, 10);

		setsid();
		if (lk < 0 || wr < 0 || dup2(wr, 3) < 0 || dup2(lk, 4) < 0)
			_exit(127);
		if (close_range(0, 2, 0) < 0 || close_range(5, ~0U, 0) < 0)
			for (long fd = 0; fd < maxfd; fd++)
				if (fd != 3 && fd != 4)
					close((int)fd);
		execve(env->self_exe, args, envp);
		ex = open(exit_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (ex >= 0) {
			if (write(ex, exit_text, (size_t)exit_len) < 0) {
				/* the report below says it still */
			}
			close(ex);
		}
		if (write(3, rep_text, (size_t)rep_len) < 0) {
			/* nobody listens: the exit file says it */
		}
		_exit(127);
	}
	close(lockfd);
	close(pfd[1]);
	fcntl(pfd[0], F_SETFL, fcntl(pfd[0], F_GETFL) | O_NONBLOCK);
	l->report_fd = pfd[0];
	j->sup_pid = pid;
	j->sup_start = 0;
	proc_stat(pid, NULL, &j->sup_start);
	j->pid = 0;
	str_copy(j->cgroup, sizeof(j->cgroup), cg);
	return 0;

fail:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	close(lockfd);
	return rc;
}

/* "exit CODE TIME TIMEOUT" | "signal N TIME TIMEOUT" | "error TIME TEXT" | "started PID TIME" */
static int
parse_report(char *line, struct exec_report *r)
{
	char word[16];
	long a = 0;
	double t = 0;
	int to = 0, off = 0;

	memset(r, 0, sizeof(*r));
	if (sscanf(line, "%15s", word) != 1)
		return E_PARSE;
	if (!strcmp(word, "started") && sscanf(line, "started %ld %lf", &a, &t) == 2 && a > 0) {
		r->kind = ER_STARTED;
		r->pid = (pid_t)a;
	} else if (!strcmp(word, "exit") && sscanf(line, "exit %ld %lf %d", &a, &t, &to) >= 2) {
		r->kind = ER_EXIT;
		r->exit_code = (int)a;
	} else if (!strcmp(word, "signal") && sscanf(line, "signal %ld %lf %d", &a, &t, &to) >= 2) {
		r->kind = ER_EXIT;
		r->exit_signal = (int)a;
		r->exit_code = 128 + (int)a;
	} else if (!strcmp(word, "error") && sscanf(line, "error %lf %n", &t, &off) >= 1 &&
	           off > 0) {
		r->kind = ER_EXIT;
		r->launch_error = true;
		r->exit_code = 127;
		str_copy(r->text, sizeof(r->text), line + off);
	} else {
		return E_PARSE;
	}
	r->time = t;
	r->timed_out = to == 1;
	if (r->timed_out)
		snprintf(r->text, sizeof(r->text), "%s",
		         "stopped at its time limit by its supervisor");
	return 0;
}

int
exec_read_report(int fd, struct exec_report *r)
{
	char line[512];
	size_t n = 0;
	int waits = 0;

	memset(r, 0, sizeof(*r));
	/*
	 * A report is one line of less than PIPE_BUF bytes, written at once: when its
	 * first byte is there, so is the rest. Byte by byte, nothing is read beyond it.
	 */
	while (n < sizeof(line) - 1) {
		char c;
		ssize_t got = read(fd, &c, 1);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && n == 0) {
			r->kind = ER_NONE;
			return 0;
		}
		if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct timespec ts = { 0, 1000 * 1000 };

			/* a line cut short by its writer: not ours */
			if (++waits > 100)
				return E_PARSE;
			nanosleep(&ts, NULL);
			continue;
		}
		if (got < 0)
			return errno_status(errno);
		if (got == 0) {
			if (n == 0) {
				r->kind = ER_EOF;
				return 0;
			}
			break;
		}
		if (c == '\n')
			break;
		line[n++] = c;
	}
	line[n] = '\0';
	return parse_report(line, r);
}

/* JOBDIR/exit: "exit CODE" | "signal N" | "error TEXT", the end time, maybe "timeout". */
static int
read_exit(const char *dir, struct exec_report *r)
{
	char path[1300], text[1024], *nl, *second;
	bool timeout;
	double t = 0;

	memset(r, 0, sizeof(*r));
	snprintf(path, sizeof(path), "%s/exit", dir);
	if (file_read_small(path, text, sizeof(text)) <= 0)
		return E_NOTFOUND;
	nl = strchr(text, '\n');
	if (!nl)
		return E_PARSE;
	*nl = '\0';
	second = nl + 1;
	t = strtod(second, NULL);
	timeout = strstr(second, "\ntimeout") != NULL;
	r->kind = ER_EXIT;
	r->time = t;
	if (!strncmp(text, "exit ", 5)) {
		r->exit_code = (int)strtol(text + 5, NULL, 10);
	} else if (!strncmp(text, "signal ", 7)) {
		r->exit_signal = (int)strtol(text + 7, NULL, 10);
		r->exit_code = 128 + r->exit_signal;
	} else if (!strncmp(text, "error ", 6)) {
		r->launch_error = true;
		r->exit_code = 127;
		str_copy(r->text, sizeof(r->text), text + 6);
	} else {
		return E_PARSE;
	}
	r->timed_out = timeout;
	if (timeout)
		snprintf(r->text, sizeof(r->text), "%s",
		         "stopped at its time limit by its supervisor");
	return 0;
}

int
exec_probe(const struct exec_env *env, const struct qjob *j, struct exec_probe *p, struct err *err)
{
	char dir[1200], path[1300], text[64], cg[1100];
	pid_t *pids = NULL;
	size_t nr = 0;
	int fd, rc;

	memset(p, 0, sizeof(*p));
	job_dir(env, j->id, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/lock", dir);
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		if (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK)
			p->sup_alive = true;
		close(fd);
	}
	snprintf(path, sizeof(path), "%s/pid", dir);
	if (file_read_small(path, text, sizeof(text)) > 0) {
		p->started = true;
		p->pid = (pid_t)strtol(text, NULL, 10);
	}
	rc = read_exit(dir, &p->exit);
	p->ended = rc == 0;
	if (rc == E_PARSE)
		return err_set(err, E_PARSE, "'%s/exit' is not an exit record", dir);
	job_cgroup(env, j, cg, sizeof(cg));
	rc = tree_pids(cg, cg[0] ? 0 : (p->pid ? p->pid : job_sid(env, j)), &pids, &nr, err);
	free(pids);
	if (rc)
		return rc;
	p->nr_procs = (unsigned)nr;
	p->populated = nr > 0;
	return 0;
}

int
exec_pids(const struct exec_env *env, const struct qjob *j, pid_t **pids, size_t *nr,
          struct err *err)
{
	char cg[1100];

	job_cgroup(env, j, cg, sizeof(cg));
	return tree_pids(cg, cg[0] ? 0 : job_sid(env, j), pids, nr, err);
}

/* Without cgroups: the job whose JOBDIR/pid is pid's session. */
static uint64_t
sid_job(const struct exec_env *env, pid_t pid)
{
	char path[1300], text[64];
	struct dirent *de;
	uint64_t id = 0;
	pid_t sid = 0;
	DIR *d;

	if (proc_stat(pid, &sid, NULL) < 0 || sid <= 1)
		return 0;
	snprintf(path, sizeof(path), "%s/jobs", env->state_dir);
	d = opendir(path);
	if (!d)
		return 0;
	while (!id && (de = readdir(d))) {
		char *end;
		unsigned long long v = strtoull(de->d_name, &end, 10);

		if (*end || !v)
			continue;
		snprintf(path, sizeof(path), "%s/jobs/%s/pid", env->state_dir, de->d_name);
		if (file_read_small(path, text, sizeof(text)) > 0 && strtol(text, NULL, 10) == sid)
			id = v;
	}
	closedir(d);
	return id;
}

uint64_t
exec_pid_job(const struct exec_env *env, pid_t pid)
{
	char path[64], text[4096], *line, *save = NULL;

	if (pid <= 0)
		return 0;
	if (!env->cgroups)
		return sid_job(env, pid);
	snprintf(path, sizeof(path), "/proc/%ld/cgroup", (long)pid);
	if (file_read_small(path, text, sizeof(text)) <= 0)
		return 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *base, *end;
		size_t dlen, rlen = strlen(env->cgroup_root);
		unsigned long long id;

		if (strncmp(line, "0::", 3))
			continue;
		line += 3;
		base = strrchr(line, '/');
		if (!base || base == line || strncmp(base, "/job-", 5))
			return 0;
		id = strtoull(base + 5, &end, 10);
		if (*end || !id)
			return 0;
		/* the path's directory must be the queue's cgroup: its tail, below the mount */
		dlen = (size_t)(base - line);
		if (dlen > rlen || strncmp(env->cgroup_root + rlen - dlen, line, dlen))
			return 0;
		return id;
	}
	return 0;
}

int
exec_signal(const struct exec_env *env, const struct qjob *j, int sig, struct err *err)
{
	char cg[1100];
	pid_t sid = 0;

	job_cgroup(env, j, cg, sizeof(cg));
	if (!cg[0]) {
		sid = job_sid(env, j);
		if (sid <= 1)
			return 0; /* not started: nothing to signal */
	}
	return tree_signal(cg, sid, sig, err);
}

int
exec_kill(const struct exec_env *env, const struct qjob *j, struct err *err)
{
	char cg[1100];
	pid_t sid = 0;

	job_cgroup(env, j, cg, sizeof(cg));
	if (!cg[0]) {
		sid = job_sid(env, j);
		if (sid <= 1)
			return 0;
	}
	return tree_kill(cg, sid, env->can_kill, err);
}

int
exec_freeze(const struct exec_env *env, const struct qjob *j, bool freeze, struct err *err)
{
	char cg[1100];
	int rc;

	job_cgroup(env, j, cg, sizeof(cg));
	if (!cg[0]) {
		pid_t sid = job_sid(env, j);

		if (sid <= 1)
			return err_set(err, E_NOTFOUND, "job %llu has no process to %s",
			               (unsigned long long)j->id, freeze ? "freeze" : "thaw");
		return tree_signal(NULL, sid, freeze ? SIGSTOP : SIGCONT, err);
	}
	rc = cg_write(cg, "cgroup.freeze", freeze ? "1" : "0", err);
	if (rc)
		return rc;
	/* freezing takes effect when each task reaches the kernel's signal check: wait for it */
	for (int i = 0; i < 200 && cg_populated(cg) && cg_frozen(cg) != freeze; i++) {
		struct timespec ts = { 0, 5 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	if (cg_populated(cg) && cg_frozen(cg) != freeze)
		return err_set(err, E_TIMEOUT, "job %llu's cgroup did not %s within a second",
		               (unsigned long long)j->id, freeze ? "freeze" : "thaw");
	return 0;
}

int
exec_cleanup(const struct exec_env *env, const struct qjob *j, struct err *err)
{
	char cg[1100], dir[1200], path[1300];

	job_cgroup(env, j, cg, sizeof(cg));
	if (cg[0] && rmdir(cg) < 0 && errno != ENOENT) {
		if (errno == EBUSY)
			return err_set(
			        err, E_BUSY,
			        "job %llu's cgroup '%s' still has processes: kill them first",
			        (unsigned long long)j->id, cg);
		return err_set(err, errno_status(errno), "cannot remove '%s': %s", cg,
		               strerror(errno));
	}
	job_dir(env, j->id, dir, sizeof(dir));
	clear_job_dir(dir);
	snprintf(path, sizeof(path), "%s/lock", dir);
	unlink(path);
	if (rmdir(dir) < 0 && errno != ENOENT)
		return err_set(err, errno_status(errno), "cannot remove '%s': %s", dir,
		               strerror(errno));
	return 0;
}

/*
 * The thread's file-system identity: setfsuid/setfsgid and the raw setgroups
 * system call act on the calling thread only (glibc's setgroups() would
 * change every thread of the daemon).
 */
static int
fs_identity(uid_t uid, gid_t gid, const gid_t *groups, size_t nr)
{
	if (syscall(SYS_setgroups, nr, groups) < 0)
		return -1;
	setfsgid(gid);
	setfsuid(uid);
	/* both return the previous id; a second call says whether the first took */
	if ((uid_t)setfsuid((uid_t)-1) != uid || (gid_t)setfsgid((gid_t)-1) != gid)
		return -1;
	return 0;
}

int
exec_open_as(uid_t uid, gid_t gid, const char *path, int flags, mode_t mode, struct err *err)
{
	gid_t saved[256], groups[256];
	int nsaved, ngroups = (int)ARRAY_SIZE(groups), fd, e = 0;
	char pwbuf[4096];
	struct passwd pw;
	struct stat st;
	bool as_root = geteuid() == 0;

	if (!as_root && uid != geteuid())
		return err_set(err, E_PERM,
		               "cannot open '%s' as uid %lu: the queue does not run as root", path,
		               (unsigned long)uid);
	if (as_root && uid != 0) {
		if (get_passwd(uid, &pw, pwbuf, sizeof(pwbuf), NULL) == 0) {
			if (getgrouplist(pw.pw_name, gid, groups, &ngroups) < 0)
				ngroups = (int)ARRAY_SIZE(groups);
		} else {
			groups[0] = gid;
			ngroups = 1;
		}
		nsaved = getgroups((int)ARRAY_SIZE(saved), saved);
		if (nsaved < 0)
			return err_set(err, E_IO, "cannot read the daemon's groups: %s",
			               strerror(errno));
		if (fs_identity(uid, gid, groups, (size_t)ngroups) < 0) {
			e = errno;
			fs_identity(0, getegid(), saved, (size_t)nsaved);
			return err_set(err, E_PERM,
			               "cannot take the identity of uid %lu to open '%s': %s",
			               (unsigned long)uid, path, strerror(e));
		}
		fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, mode);
		e = errno;
		if (fs_identity(0, getegid(), saved, (size_t)nsaved) < 0)
			BUG("cannot restore the daemon's identity after opening '%s'", path);
	} else {
		fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, mode);
		e = errno;
	}
	if (fd < 0) {
		if (e == ELOOP)
			return err_set(err, E_PERM, "'%s' is a symbolic link: refused", path);
		return err_set(err, errno_status(e), "cannot open '%s' as uid %lu: %s", path,
		               (unsigned long)uid, strerror(e));
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return err_set(err, E_PERM, "'%s' is not a regular file: refused", path);
	}
	if (!(flags & O_NONBLOCK))
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/* NVIDIA's CUDA checkpoint (driver 550+, in cuda.h since 12.8), found at run time. */
typedef int cu_init_fn(unsigned flags);
typedef int cu_ck_fn(int pid, void *args);
typedef int cu_state_fn(int pid, int *state);

enum {
	CU_PROCESS_STATE_RUNNING = 0,
	CU_PROCESS_STATE_LOCKED = 1,
	CU_PROCESS_STATE_CHECKPOINTED = 2
};

struct cu_lock_args {
	unsigned int timeout_ms;
	unsigned int reserved0;
	uint64_t reserved1[7];
};

static struct {
	pthread_once_t once;
	void *lib;
	cu_init_fn *init;
	cu_ck_fn *lock, *checkpoint, *restore, *unlock;
	cu_state_fn *state;
	bool inited;
	char why[256];
} ck = { PTHREAD_ONCE_INIT };
static pthread_mutex_t ck_mu = PTHREAD_MUTEX_INITIALIZER;

static void
ck_load(void)
{
	const char *path = getenv("GPUSCOPE_CUDA");

	if (!path || !*path)
		path = "libcuda.so.1";
	ck.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!ck.lib) {
		snprintf(ck.why, sizeof(ck.why), "cannot load '%s': %s", path, dlerror());
		return;
	}
	ck.init = (cu_init_fn *)dlsym(ck.lib, "cuInit");
	ck.lock = (cu_ck_fn *)dlsym(ck.lib, "cuCheckpointProcessLock");
	ck.checkpoint = (cu_ck_fn *)dlsym(ck.lib, "cuCheckpointProcessCheckpoint");
	ck.restore = (cu_ck_fn *)dlsym(ck.lib, "cuCheckpointProcessRestore");
	ck.unlock = (cu_ck_fn *)dlsym(ck.lib, "cuCheckpointProcessUnlock");
	ck.state = (cu_state_fn *)dlsym(ck.lib, "cuCheckpointProcessGetState");
	if (!ck.lock || !ck.checkpoint || !ck.restore || !ck.unlock || !ck.state) {
		snprintf(
		        ck.why, sizeof(ck.why),
		        "'%s' has no CUDA checkpoint calls (cuCheckpointProcessLock: driver 550 or later)",
		        path);
		ck.lock = NULL;
	}
}

bool
exec_checkpoint_supported(void)
{
	pthread_once(&ck.once, ck_load);
	return ck.lock != NULL;
}

static int
ck_ready(struct err *err)
{
	if (!exec_checkpoint_supported())
		return err_set(err, E_NOTSUP, "%s", ck.why);
	pthread_mutex_lock(&ck_mu);
	if (!ck.inited && ck.init)
		ck.init(0);
	ck.inited = true;
	pthread_mutex_unlock(&ck_mu);
	return 0;
}

static int
ck_call(cu_ck_fn *fn, const char *what, pid_t pid, void *args, struct err *err)
{
	int r = fn((int)pid, args);

	if (r != 0)
		return err_set(err, E_IO, "%s of process %ld failed (CUresult %d)", what, (long)pid,
		               r);
	return 0;
}

int
exec_suspend(const struct exec_env *env, const struct qjob *j, struct err *err)
{
	pid_t *pids = NULL, *done = NULL;
	size_t nr = 0, nr_done = 0;
	int rc;

	rc = ck_ready(err);
	if (!rc)
		rc = exec_pids(env, j, &pids, &nr, err);
	if (rc)
		goto out;
	done = xcalloc(nr ? nr : 1, sizeof(*done));
	for (size_t i = 0; i < nr && !rc; i++) {
		struct cu_lock_args la = { .timeout_ms = 10000 };
		int state = -1;

		/* a process without CUDA has no state: nothing of it is on a GPU */
		if (ck.state((int)pids[i], &state) != 0 || state != CU_PROCESS_STATE_RUNNING)
			continue;
		rc = ck_call(ck.lock, "cuCheckpointProcessLock", pids[i], &la, err);
		if (rc)
			break;
		rc = ck_call(ck.checkpoint, "cuCheckpointProcessCheckpoint", pids[i], NULL, err);
		if (rc) {
			ck.unlock((int)pids[i], NULL);
			break;
		}
		done[nr_done++] = pids[i];
	}
	if (!rc)
		rc = exec_freeze(env, j, true, err);
	if (rc) {
		/* all or nothing: those checkpointed get their GPU memory back */
		for (size_t i = 0; i < nr_done; i++) {
			ck.restore((int)done[i], NULL);
			ck.unlock((int)done[i], NULL);
		}
	}
out:
	free(done);
	free(pids);
	return rc;
}

int
exec_resume(const struct exec_env *env, const struct qjob *j, struct err *err)
{
	pid_t *pids = NULL;
	size_t nr = 0;
	int rc;

	rc = ck_ready(err);
	if (!rc)
		rc = exec_freeze(env, j, false, err);
	if (!rc)
		rc = exec_pids(env, j, &pids, &nr, err);
	for (size_t i = 0; !rc && i < nr; i++) {
		int state = -1;

		if (ck.state((int)pids[i], &state) != 0)
			continue;
		if (state == CU_PROCESS_STATE_CHECKPOINTED)
			rc = ck_call(ck.restore, "cuCheckpointProcessRestore", pids[i], NULL, err);
		if (!rc &&
		    (state == CU_PROCESS_STATE_CHECKPOINTED || state == CU_PROCESS_STATE_LOCKED))
			rc = ck_call(ck.unlock, "cuCheckpointProcessUnlock", pids[i], NULL, err);
	}
	free(pids);
	return rc;
}
