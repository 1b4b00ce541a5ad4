/*
 * queue/store.h, queue/job.h and queue/jobjson.h: the database is created
 * 0600 in a 0700 directory, in WAL mode, and reopened; every field of a
 * job survives a write and a read; updates, the active and history lists,
 * events, GPU flags, fair-share decay and meta read back as written; a
 * file that is not ours or of a newer schema is refused and left
 * untouched; a commit survives a process that never closes; pruning keeps
 * ids unique; the JSON objects and the size and duration parsers.
 */
#include "queue/store.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/err.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "harness.h"
#include "queue/job.h"
#include "queue/jobjson.h"

#define UUID_A "GPU-0c3c1d2e-aaaa-bbbb-cccc-000000000001"
#define UUID_B "GPU-0c3c1d2e-aaaa-bbbb-cccc-000000000002"

static char base[256];

static char *
sub(const char *name)
{
	return xstrfmt("%s/%s", base, name);
}

static void
rm_rf(const char *path)
{
	char *cmd = xstrfmt("rm -rf '%s'", path);

	if (system(cmd) != 0)
		diag("could not remove %s", path);
	free(cmd);
}

static void
set_list(char **dst, size_t *len, const char *const *v, size_t n)
{
	struct strbuf sb;
	size_t i;

	strbuf_init(&sb, 64);
	for (i = 0; i < n; i++)
		strbuf_add(&sb, v[i], strlen(v[i]) + 1);
	*dst = strbuf_detach(&sb, len);
}

/* A job with every field set to something other than its zero. */
static void
full_job(struct qjob *j)
{
	static const char *const argv[] = { "python3", "train.py", "--lr", "0.1", "caf\xc3\xa9" };
	static const char *const env[] = { "PATH=/usr/bin", "HOME=/home/alice", "EMPTY=" };

	qjob_init(j);
	str_copy(j->name, sizeof(j->name), "train-\xff-bad");
	j->uid = 1234;
	j->gid = 567;
	str_copy(j->user, sizeof(j->user), "alice");
	j->state = QJ_RUNNING;
	j->req.gpus = 2;
	j->req.gpu_mem = 20ULL << 30;
	str_copy(j->req.want_uuid[0], QJ_UUID_LEN, UUID_A);
	str_copy(j->req.want_uuid[1], QJ_UUID_LEN, UUID_B);
	j->req.nr_want = 2;
	j->req.mode = QJ_MODE_SHARED;
	j->req.priority = -7;
	j->req.preemptible = true;
	j->req.requeue_on_loss = true;
	j->req.time_limit = 7200;
	j->req.grace = 45;
	j->req.after[0] = 3;
	j->req.after[1] = 18446744073709551615ULL;
	j->req.nr_after = 2;
	set_list(&j->argv, &j->argv_len, argv, ARRAY_SIZE(argv));
	set_list(&j->env, &j->env_len, env, ARRAY_SIZE(env));
	qjob_set_str(&j->cwd, "/home/alice/proj");
	qjob_set_str(&j->out_path, "/home/alice/out.log");
	qjob_set_str(&j->err_path, "/home/alice/err.log");
	j->submit_time = 1700000000.25;
	j->start_time = 1700000100.5;
	j->end_time = 1700000200.75;
	j->eligible_time = 1700000050.125;
	str_copy(j->gpu_uuid[0], QJ_UUID_LEN, UUID_B);
	j->nr_gpu = 1;
	str_copy(j->cgroup, sizeof(j->cgroup), "/sys/fs/cgroup/gpuscope/job-1");
	j->sup_pid = 4242;
	j->sup_start = 18446744073709551000ULL; /* over INT64_MAX: the bits must survive */
	j->pid = 4243;
	j->exit_code = 3;
	j->exit_signal = 9;
	j->has_exit = true;
	j->restarts = 2;
	j->gpu_seconds = 1234.5;
	j->peak_gpu_mem = 19ULL << 30;
	str_copy(j->reason, sizeof(j->reason), "waiting for GPU 1");
	j->stop_deadline = 1700000300.5;
	j->stop_cause = QJ_STOP_PREEMPT;
}

static bool
same_job(const struct qjob *a, const struct qjob *b)
{
	unsigned i;
	bool same = a->id == b->id && !strcmp(a->name, b->name) && a->uid == b->uid &&
	            a->gid == b->gid && !strcmp(a->user, b->user) && a->state == b->state &&
	            a->req.gpus == b->req.gpus && a->req.gpu_mem == b->req.gpu_mem &&
	            a->req.nr_want == b->req.nr_want && a->req.mode == b->req.mode &&
	            a->req.priority == b->req.priority &&
	            a->req.preemptible == b->req.preemptible &&
	            a->req.requeue_on_loss == b->req.requeue_on_loss &&
	            a->req.time_limit == b->req.time_limit && a->req.grace == b->req.grace &&
	            a->req.nr_after == b->req.nr_after && a->argv_len == b->argv_len &&
	            a->env_len == b->env_len && !strcmp(qjob_str(a->cwd), qjob_str(b->cwd)) &&
	            !strcmp(qjob_str(a->out_path), qjob_str(b->out_path)) &&
	            !strcmp(qjob_str(a->err_path), qjob_str(b->err_path)) &&
	            a->submit_time == b->submit_time && a->start_time == b->start_time &&
	            a->end_time == b->end_time && a->eligible_time == b->eligible_time &&
	            a->nr_gpu == b->nr_gpu && !strcmp(a->cgroup, b->cgroup) &&
	            a->sup_pid == b->sup_pid && a->sup_start == b->sup_start && a->pid == b->pid &&
	            a->exit_code == b->exit_code && a->exit_signal == b->exit_signal &&
	            a->has_exit == b->has_exit && a->restarts == b->restarts &&
	            a->gpu_seconds == b->gpu_seconds && a->peak_gpu_mem == b->peak_gpu_mem &&
	            !strcmp(a->reason, b->reason) && a->stop_deadline == b->stop_deadline &&
	            a->stop_cause == b->stop_cause;

	for (i = 0; same && i < a->req.nr_want; i++)
		same = !strcmp(a->req.want_uuid[i], b->req.want_uuid[i]);
	for (i = 0; same && i < a->req.nr_after; i++)
		same = a->req.after[i] == b->req.after[i];
	for (i = 0; same && i < a->nr_gpu; i++)
		same = !strcmp(a->gpu_uuid[i], b->gpu_uuid[i]);
	if (same && a->argv_len)
		same = a->argv && b->argv && !memcmp(a->argv, b->argv, a->argv_len);
	if (same && a->env_len)
		same = a->env && b->env && !memcmp(a->env, b->env, a->env_len);
	return same;
}

static struct store *
open_ok(const char *dir, const char *what)
{
	struct err err = ERR_INIT;
	struct store *st = NULL;
	int rc = store_open(dir, &st, &err);

	if (!ok(rc == E_OK && st, "%s", what))
		diag("store_open: %d %s", rc, err.msg);
	return st;
}

static char *
read_all(const char *path, size_t *len)
{
	struct strbuf sb;
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	strbuf_init(&sb, 64);
	if (fd < 0) {
		*len = 0;
		return strbuf_detach(&sb, NULL);
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		strbuf_add(&sb, buf, (size_t)n);
	close(fd);
	return strbuf_detach(&sb, len);
}

static void
test_open(void)
{
	char *dir = sub("state/deeper"), *db = sub("state/deeper/queue.db");
	struct store *st;
	struct stat sb;
	sqlite3 *raw;
	sqlite3_stmt *s;
	int rc;

	st = open_ok(dir, "a missing directory and database are created");
	rc = stat(dir, &sb);
	ok(rc == 0 && (sb.st_mode & 0777) == 0700, "the state directory is 0700 (%o)",
	   (unsigned)sb.st_mode & 0777);
	rc = stat(db, &sb);
	ok(rc == 0 && (sb.st_mode & 0777) == 0600, "the database is 0600 (%o)",
	   (unsigned)sb.st_mode & 0777);
	store_close(st);

	/* an existing directory keeps its mode */
	chmod(dir, 0755);
	st = open_ok(dir, "reopened");
	rc = stat(dir, &sb);
	ok(rc == 0 && (sb.st_mode & 0777) == 0755, "an existing directory is not chmod()ed (%o)",
	   (unsigned)sb.st_mode & 0777);

	{
		struct err err = ERR_INIT;
		char *wal = sub("state/deeper/queue.db-wal");

		store_meta_set(st, "k", "v", &err);
		rc = stat(wal, &sb);
		ok(rc == 0 && (sb.st_mode & 0777) == 0600, "the WAL file is 0600 too (%o)",
		   (unsigned)sb.st_mode & 0777);
		free(wal);
	}
	/* a trailing slash names the same directory */
	{
		char *slash = sub("slash/"), *plain = sub("slash");
		struct store *st2 = open_ok(slash, "a state_dir with a trailing slash");

		rc = stat(plain, &sb);
		ok(rc == 0 && (sb.st_mode & 0777) == 0700, "is created 0700 (%o)",
		   (unsigned)sb.st_mode & 0777);
		store_close(st2);
		free(slash);
		free(plain);
	}

	/* what another connection sees while the store is open */
	if (sqlite3_open_v2(db, &raw, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &s, NULL) == SQLITE_OK) {
		is_str(sqlite3_step(s) == SQLITE_ROW ? (const char *)sqlite3_column_text(s, 0) : "",
		       "wal", "journal_mode reads wal");
		sqlite3_finalize(s);
		if (sqlite3_prepare_v2(raw, "PRAGMA user_version", -1, &s, NULL) == SQLITE_OK) {
			is_int(sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : -1, 1,
			       "user_version is 1");
			sqlite3_finalize(s);
		}
	} else {
		ok(0, "the database opens with sqlite3 itself");
	}
	sqlite3_close(raw);
	store_close(st);
	free(dir);
	free(db);
}

static void
test_refused(void)
{
	static const char junk[] = "this is not a database, it is a user's precious notes\n";
	char *dir = sub("junk"), *db = sub("junk/queue.db"), *data, *msg;
	struct err err = ERR_INIT;
	struct store *st = NULL;
	sqlite3 *raw;
	size_t len;
	int fd, rc;

	mkdir(dir, 0700);
	fd = open(db, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		for (int i = 0; i < 200; i++) {
			if (write(fd, junk, sizeof(junk) - 1) < 0)
				break;
		}
		close(fd);
	}
	rc = store_open(dir, &st, &err);
	ok(rc < 0 && !st, "a file that is not SQLite is refused (%d)", rc);
	ok(strstr(err.msg, db) && strstr(err.msg, "not a gpuscope queue database") &&
	           !strchr(err.msg, '\n'),
	   "one line naming the file: %s", err.msg);
	data = read_all(db, &len);
	ok(len == 200 * (sizeof(junk) - 1) && !memcmp(data, junk, sizeof(junk) - 1),
	   "its bytes are unchanged");
	free(data);
	free(db);
	free(dir);

	/* a newer schema of ours */
	dir = sub("future");
	db = sub("future/queue.db");
	mkdir(dir, 0700);
	if (sqlite3_open(db, &raw) == SQLITE_OK)
		sqlite3_exec(raw,
		             "PRAGMA application_id = 1196446545; PRAGMA user_version = 2;"
		             "CREATE TABLE jobs2 (x);",
		             NULL, NULL, NULL);
	sqlite3_close(raw);
	err_clear(&err);
	rc = store_open(dir, &st, &err);
	ok(rc < 0 && !st, "user_version 2 is refused (%d)", rc);
	ok(strstr(err.msg, db) && strstr(err.msg, "schema 2"), "naming the file and schema: %s",
	   err.msg);
	free(db);
	free(dir);

	/* another program's SQLite database */
	dir = sub("other");
	db = sub("other/queue.db");
	mkdir(dir, 0700);
	if (sqlite3_open(db, &raw) == SQLITE_OK)
		sqlite3_exec(raw, "CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('x');",
		             NULL, NULL, NULL);
	sqlite3_close(raw);
	err_clear(&err);
	rc = store_open(dir, &st, &err);
	ok(rc < 0 && !st && strstr(err.msg, "not a gpuscope queue database"),
	   "another program's SQLite file is refused: %s", err.msg);
	free(db);
	free(dir);

	/* a symlink in place of the database */
	dir = sub("link");
	db = sub("link/queue.db");
	mkdir(dir, 0700);
	msg = sub("link/target");
	if (symlink(msg, db) < 0)
		diag("symlink: %s", strerror(errno));
	err_clear(&err);
	rc = store_open(dir, &st, &err);
	ok(rc < 0 && !st && access(msg, F_OK) < 0, "a symlink is refused, not followed: %s",
	   err.msg);
	free(msg);
	free(db);
	free(dir);

	err_clear(&err);
	rc = store_open("", &st, &err);
	ok(rc == E_USAGE && !st, "an empty state_dir: %s", err.msg);
}

static void
test_jobs(struct store *st)
{
	struct err err = ERR_INIT;
	struct qjob j, back, copy;
	struct qjob_list l;
	uint64_t first;
	int rc;

	full_job(&j);
	rc = store_job_insert(st, &j, &err);
	ok(rc == E_OK && j.id > 0, "a job is inserted (id %llu) %s", (unsigned long long)j.id,
	   err.msg);
	first = j.id;
	qjob_init(&back);
	rc = store_job_get(st, j.id, &back, &err);
	ok(rc == E_OK && same_job(&j, &back), "every field of a job round-trips %s", err.msg);
	qjob_copy(&copy, &back);
	ok(same_job(&copy, &back) && copy.argv != back.argv && copy.env != back.env && copy.cwd &&
	           copy.cwd != back.cwd && copy.out_path != back.out_path &&
	           copy.err_path != back.err_path,
	   "qjob_copy is deep");
	qjob_release(&copy);
	ok(!copy.argv && !copy.env && !copy.argv_len && !copy.cwd && !copy.out_path &&
	           !copy.err_path,
	   "qjob_release frees argv, env and the paths");
	qjob_release(&back);

	j.state = QJ_DONE;
	j.exit_code = 0;
	j.exit_signal = 0;
	j.nr_gpu = 0;
	str_copy(j.reason, sizeof(j.reason), "ended");
	rc = store_job_update(st, &j, &err);
	qjob_init(&back);
	ok(rc == E_OK && store_job_get(st, j.id, &back, &err) == E_OK && same_job(&j, &back),
	   "an update writes every field %s", err.msg);
	qjob_release(&back);

	j.id = 999999;
	err_clear(&err);
	ok(store_job_update(st, &j, &err) == E_NOTFOUND, "updating a missing job: %s", err.msg);
	err_clear(&err);
	qjob_init(&back);
	ok(store_job_get(st, 999999, &back, &err) == E_NOTFOUND, "getting a missing job: %s",
	   err.msg);
	qjob_release(&j);

	/* a minimal job: NULL argv/env and empty strings */
	qjob_init(&j);
	j.uid = 1000;
	j.state = QJ_QUEUED;
	j.submit_time = 100;
	err_clear(&err);
	rc = store_job_insert(st, &j, &err);
	ok(rc == E_OK && j.id == first + 1, "ids count up (%llu) %s", (unsigned long long)j.id,
	   err.msg);
	qjob_init(&back);
	ok(store_job_get(st, j.id, &back, &err) == E_OK && same_job(&j, &back) && !back.argv,
	   "an empty job round-trips");
	qjob_release(&back);

	/* held, running (2 GPUs) for uid 1000; one finished long ago */
	j.state = QJ_HELD;
	store_job_insert(st, &j, &err);
	j.state = QJ_RUNNING;
	j.nr_gpu = 2;
	str_copy(j.gpu_uuid[0], QJ_UUID_LEN, UUID_A);
	str_copy(j.gpu_uuid[1], QJ_UUID_LEN, UUID_B);
	store_job_insert(st, &j, &err);
	j.state = QJ_SUSPENDED;
	store_job_insert(st, &j, &err);
	j.state = QJ_FAILED;
	j.nr_gpu = 0;
	j.end_time = 50;
	store_job_insert(st, &j, &err);
	j.state = QJ_CANCELLED;
	j.end_time = 500;
	j.uid = 2000;
	store_job_insert(st, &j, &err);

	err_clear(&err);
	rc = store_jobs_active(st, &l, &err);
	ok(rc == E_OK && l.nr == 4, "four active jobs (%zu) %s", l.nr, err.msg);
	ok(l.nr == 4 && l.job[0].state == QJ_QUEUED && l.job[1].state == QJ_HELD &&
	           l.job[2].state == QJ_RUNNING && l.job[3].state == QJ_SUSPENDED &&
	           l.job[0].id < l.job[1].id && l.job[2].nr_gpu == 2 &&
	           !strcmp(l.job[2].gpu_uuid[1], UUID_B),
	   "by id, with their fields");
	store_jobs_free(&l);
	ok(!l.job && !l.nr, "store_jobs_free empties the list");

	rc = store_jobs_history(st, (uid_t)-1, 0, 0, &l, &err);
	ok(rc == E_OK && l.nr == 3, "three finished jobs in all (%zu)", l.nr);
	ok(l.nr == 3 && l.job[0].state == QJ_DONE && l.job[1].state == QJ_CANCELLED &&
	           l.job[2].state == QJ_FAILED,
	   "newest first");
	store_jobs_free(&l);
	rc = store_jobs_history(st, 1000, 0, 0, &l, &err);
	ok(rc == E_OK && l.nr == 1 && l.job[0].state == QJ_FAILED, "one of uid 1000 (%zu)", l.nr);
	store_jobs_free(&l);
	rc = store_jobs_history(st, (uid_t)-1, 100, 0, &l, &err);
	ok(rc == E_OK && l.nr == 2, "two ended since t=100 (%zu)", l.nr);
	store_jobs_free(&l);
	rc = store_jobs_history(st, (uid_t)-1, 0, 1, &l, &err);
	ok(rc == E_OK && l.nr == 1 && l.job[0].state == QJ_DONE, "limit 1: the newest");
	store_jobs_free(&l);

	{
		unsigned q = 99, r = 99, g = 99;

		rc = store_user_counts(st, 1000, &q, &r, &g, &err);
		ok(rc == E_OK && q == 3 && r == 1 && g == 2,
		   "uid 1000: 3 waiting, 1 running, 2 GPUs (%u %u %u)", q, r, g);
		rc = store_user_counts(st, 4321, &q, &r, &g, &err);
		ok(rc == E_OK && q == 0 && r == 0 && g == 0, "a user with no jobs: zeros");
	}
}

static void
test_transactions(struct store *st)
{
	struct err err = ERR_INIT;
	struct qjob j, back;
	uint64_t id;
	int rc;

	qjob_init(&j);
	j.uid = 77;
	ok(store_begin(st, &err) == E_OK && store_begin(st, &err) == E_OK, "nested begin");
	store_job_insert(st, &j, &err);
	id = j.id;
	ok(store_commit(st, &err) == E_OK, "inner commit");
	store_rollback(st);
	qjob_init(&back);
	err_clear(&err);
	ok(store_job_get(st, id, &back, &err) == E_NOTFOUND,
	   "rolling back the outer level undoes the inner commit");

	store_begin(st, &err);
	store_begin(st, &err);
	store_job_insert(st, &j, &err);
	id = j.id;
	store_rollback(st);
	err_clear(&err);
	rc = store_job_insert(st, &j, &err);
	ok(rc < 0, "after an inner rollback, writes are refused until the outer level ends: %s",
	   err.msg);
	err_clear(&err);
	rc = store_commit(st, &err);
	ok(rc < 0, "and the outer commit says nothing was committed: %s", err.msg);
	err_clear(&err);
	ok(store_job_get(st, id, &back, &err) == E_NOTFOUND, "the job is not there");

	err_clear(&err);
	ok(store_begin(st, &err) == E_OK, "a fresh transaction after that");
	store_job_insert(st, &j, &err);
	id = j.id;
	ok(store_commit(st, &err) == E_OK, "commits %s", err.msg);
	ok(store_job_get(st, id, &back, &err) == E_OK && back.uid == 77, "and the job is there");
	qjob_release(&back);
	err_clear(&err);
	ok(store_commit(st, &err) == E_USAGE, "a commit without begin: %s", err.msg);
}

static void
test_events(struct store *st)
{
	struct err err = ERR_INIT;
	struct qevent *ev;
	size_t nr;
	uint64_t last;
	json_t *o;
	int rc;

	rc = store_event_add(st, 10.5, 0, (uid_t)-1, "daemon-start", NULL, &err,
	                     "started after %d s", 42);
	ok(rc == E_OK, "an event of the daemon %s", err.msg);
	rc = store_event_add(st, 11, 7, 1000, "start", "{\"gpus\":[\"" UUID_A "\"]}", &err,
	                     "job %d started", 7);
	ok(rc == E_OK, "an event of a job with a detail %s", err.msg);
	err_clear(&err);
	ok(store_event_add(st, 12, 7, 1000, "x", "[1,2]", &err, "t") == E_USAGE,
	   "a detail that is not an object is refused: %s", err.msg);
	err_clear(&err);
	ok(store_event_add(st, 12, 7, 1000, "a-kind-that-is-much-too-long-to-keep", NULL, &err,
	                   "t") == E_USAGE,
	   "a kind too long is refused");

	rc = store_events_since(st, 0, 0, &ev, &nr, &err);
	ok(rc == E_OK && nr == 2, "two events (%zu)", nr);
	if (nr == 2) {
		ok(ev[0].id < ev[1].id && ev[0].job == 0 && ev[0].uid == (uid_t)-1 &&
		           !strcmp(ev[0].kind, "daemon-start") &&
		           !strcmp(ev[0].text, "started after 42 s") && !ev[0].detail &&
		           ev[0].time == 10.5,
		   "the daemon's event reads back");
		ok(ev[1].job == 7 && ev[1].uid == 1000 && ev[1].detail &&
		           strstr(ev[1].detail, UUID_A),
		   "the job's event reads back with its detail");
		o = qevent_to_json(&ev[1], "alice");
		ok(json_is_object(json_object_get(o, "detail")) &&
		           !strcmp(json_string_value(json_object_get(o, "user")), "alice") &&
		           !strcmp(json_string_value(json_object_get(o, "kind")), "start") &&
		           json_integer_value(json_object_get(o, "job")) == 7,
		   "qevent_to_json");
		json_decref(o);
		o = qevent_to_json(&ev[0], NULL);
		ok(json_is_null(json_object_get(o, "user")) &&
		           json_object_size(json_object_get(o, "detail")) == 0 &&
		           json_is_null(json_object_get(o, "uid")),
		   "the daemon's event: user and uid null, detail {}");
		json_decref(o);
		last = ev[0].id;
		store_events_free(ev, nr);
		rc = store_events_since(st, last, 0, &ev, &nr, &err);
		ok(rc == E_OK && nr == 1 && ev[0].id > last, "events after an id");
		store_events_free(ev, nr);
		rc = store_events_since(st, 0, 1, &ev, &nr, &err);
		ok(rc == E_OK && nr == 1 && ev[0].id == last, "limit 1: the oldest");
		store_events_free(ev, nr);
		rc = store_event_add(st, 13, 7, 1000, "exit", NULL, &err, "job 7 ended");
		ok(rc == E_OK, "a second event of job 7");
		rc = store_events_job(st, 7, 0, &ev, &nr, &err);
		ok(rc == E_OK && nr == 2 && ev[0].job == 7 && ev[1].job == 7 &&
		           !strcmp(ev[0].kind, "start") && !strcmp(ev[1].kind, "exit"),
		   "store_events_job: job 7's two events, oldest first (%zu)", nr);
		store_events_free(ev, nr);
		rc = store_events_job(st, 7, 1, &ev, &nr, &err);
		ok(rc == E_OK && nr == 1 && !strcmp(ev[0].kind, "start"),
		   "store_events_job: limit 1");
		store_events_free(ev, nr);
		rc = store_events_job(st, 99, 0, &ev, &nr, &err);
		ok(rc == E_OK && nr == 0, "store_events_job: none for a job without events");
	}
	store_events_free(ev, nr);
}

static void
test_gpus_usage_meta(struct store *st)
{
	struct err err = ERR_INIT;
	unsigned flags = 99;
	char note[64], small[4];
	double since = -1, u;
	int rc;

	rc = store_gpu_get(st, UUID_A, &flags, note, sizeof(note), &since, &err);
	ok(rc == E_OK && flags == 0 && !note[0] && since == 0, "a GPU never set: flags 0");
	rc = store_gpu_set(st, UUID_A, QG_DIRTY | QG_DRAINED, "job 4 left 2 GiB", 123.5, &err);
	ok(rc == E_OK, "set flags %s", err.msg);
	rc = store_gpu_get(st, UUID_A, &flags, note, sizeof(note), &since, &err);
	ok(rc == E_OK && flags == (QG_DIRTY | QG_DRAINED) && !strcmp(note, "job 4 left 2 GiB") &&
	           since == 123.5,
	   "flags, note and since read back");
	store_gpu_set(st, UUID_A, 0, NULL, 200, &err);
	store_gpu_get(st, UUID_A, &flags, note, sizeof(note), &since, &err);
	ok(flags == 0 && !note[0] && since == 200, "cleared");
	store_gpu_get(st, UUID_B, &flags, note, sizeof(note), &since, &err);
	ok(flags == 0, "another GPU is untouched");

	rc = store_usage_get(st, 1000, 0, 100, &u, &err);
	ok(rc == E_OK && u == 0, "no usage: 0");
	store_usage_add(st, 1000, 1000, 5000, 3600, &err);
	rc = store_usage_get(st, 1000, 5000, 3600, &u, &err);
	is_dbl(u, 1000, 1e-9, "usage right after adding");
	store_usage_get(st, 1000, 5000 + 3600, 3600, &u, &err);
	is_dbl(u, 500, 1e-9, "after one half-life it halves");
	store_usage_get(st, 1000, 5000 + 7200, 3600, &u, &err);
	is_dbl(u, 250, 1e-9, "after two, a quarter");
	store_usage_add(st, 1000, 100, 5000 + 3600, 3600, &err);
	store_usage_get(st, 1000, 5000 + 3600, 3600, &u, &err);
	is_dbl(u, 600, 1e-9, "adding decays what was there first");
	store_usage_get(st, 1000, 5000 + 7200, 3600, &u, &err);
	is_dbl(u, 300, 1e-9, "and the sum decays from the new time");
	store_usage_get(st, 1000, 5000 + 7200, 0, &u, &err);
	is_dbl(u, 600, 1e-9, "a half-life of 0: no decay");
	store_usage_get(st, 2000, 5000, 3600, &u, &err);
	is_dbl(u, 0, 0, "another user has none");

	err_clear(&err);
	ok(store_meta_get(st, "heartbeat", note, sizeof(note), &err) == E_NOTFOUND,
	   "meta unset: not found");
	ok(store_meta_set(st, "heartbeat", "1700000000.5", &err) == E_OK &&
	           store_meta_get(st, "heartbeat", note, sizeof(note), &err) == E_OK &&
	           !strcmp(note, "1700000000.5"),
	   "meta round-trips");
	store_meta_set(st, "heartbeat", "2", &err);
	store_meta_get(st, "heartbeat", note, sizeof(note), &err);
	is_str(note, "2", "meta is overwritten");
	err_clear(&err);
	store_meta_set(st, "long", "123456", &err);
	ok(store_meta_get(st, "long", small, sizeof(small), &err) < 0,
	   "a value longer than the buffer is an error, not cut: %s", err.msg);
}

static void
test_crash(void)
{
	char *dir = sub("crash");
	struct err err = ERR_INIT;
	struct store *st;
	struct qjob j;
	pid_t pid;
	int status = -1;

	st = open_ok(dir, "a store for the crash test");
	store_close(st);
	pid = fork();
	if (pid == 0) {
		struct store *cst = NULL;

		if (store_open(dir, &cst, NULL) < 0)
			_exit(2);
		qjob_init(&j);
		j.uid = 4242;
		str_copy(j.name, sizeof(j.name), "survivor");
		if (store_begin(cst, NULL) < 0 || store_job_insert(cst, &j, NULL) < 0 ||
		    store_event_add(cst, 1, j.id, 4242, "submit", NULL, NULL, "submitted") < 0 ||
		    store_commit(cst, NULL) < 0)
			_exit(3);
		/* an uncommitted write after it must vanish */
		store_begin(cst, NULL);
		j.uid = 1;
		store_job_insert(cst, &j, NULL);
		_exit(0); /* no store_close: as a daemon killed with -9 */
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child committed and exited");
	st = open_ok(dir, "reopened after the child died");
	if (st) {
		struct qjob_list l;

		qjob_init(&j);
		ok(store_job_get(st, 1, &j, &err) == E_OK && j.uid == 4242 &&
		           !strcmp(j.name, "survivor"),
		   "the committed job is there %s", err.msg);
		qjob_release(&j);
		store_jobs_active(st, &l, &err);
		ok(l.nr == 1, "the uncommitted one is not there (%zu)", l.nr);
		store_jobs_free(&l);
		store_close(st);
	}
	free(dir);
}

static void
test_prune(void)
{
	char *dir = sub("prune");
	struct err err = ERR_INIT;
	struct store *st = open_ok(dir, "a store to prune");
	struct qjob j, back;
	struct qevent *ev;
	size_t nr;
	uint64_t old_id, live_id;
	int rc;

	if (!st)
		return;
	qjob_init(&j);
	j.state = QJ_DONE;
	j.end_time = 100;
	store_job_insert(st, &j, &err);
	old_id = j.id;
	store_event_add(st, 90, old_id, 0, "exit", NULL, &err, "old");
	j.state = QJ_RUNNING;
	j.end_time = 0;
	j.submit_time = 10;
	store_job_insert(st, &j, &err);
	live_id = j.id;
	store_event_add(st, 20, live_id, 0, "start", NULL, &err, "old but alive");
	j.state = QJ_DONE;
	j.end_time = 5000;
	store_job_insert(st, &j, &err);
	store_event_add(st, 30, 0, (uid_t)-1, "daemon-start", NULL, &err, "old");
	store_event_add(st, 5000, 0, (uid_t)-1, "daemon-start", NULL, &err, "new");

	rc = store_prune(st, 1000, &err);
	is_int(rc, 1, "one job pruned %s", err.msg);
	qjob_init(&back);
	ok(store_job_get(st, old_id, &back, &err) == E_NOTFOUND, "the old finished job is gone");
	err_clear(&err);
	ok(store_job_get(st, live_id, &back, &err) == E_OK, "a running job stays, however old");
	qjob_release(&back);
	store_events_since(st, 0, 0, &ev, &nr, &err);
	ok(nr == 2 && !strcmp(ev[0].text, "old but alive") && !strcmp(ev[1].text, "new"),
	   "old events go except a live job's (%zu)", nr);
	store_events_free(ev, nr);

	/* the highest id is the one pruned: a new job must not take it again */
	store_close(st);
	st = open_ok(dir, "reopened after pruning");
	qjob_init(&j);
	j.state = QJ_DONE;
	j.end_time = 1;
	store_job_insert(st, &j, &err);
	old_id = j.id;
	store_prune(st, 1000, &err);
	store_job_insert(st, &j, &err);
	ok(j.id == old_id + 1, "ids are never reused after pruning (%llu after %llu)",
	   (unsigned long long)j.id, (unsigned long long)old_id);
	store_close(st);
	free(dir);
}

static void
test_json(void)
{
	struct qjob j;
	json_t *o, *a;
	char *s;

	full_job(&j);
	j.id = 12;
	o = qjob_to_json(&j, false);
	ok(o && json_integer_value(json_object_get(o, "id")) == 12, "qjob_to_json");
	ok(!json_object_get(o, "env") && !json_object_get(o, "est_start") &&
	           !json_object_get(o, "code") && !json_object_get(o, "gpu_indices"),
	   "no env, est_start, code, gpu_indices without full");
	is_str(json_string_value(json_object_get(o, "state")), "running", "state");
	is_str(json_string_value(json_object_get(o, "mode")), "shared", "mode");
	is_str(json_string_value(json_object_get(o, "name")), "train-\xef\xbf\xbd-bad",
	       "a byte that is not UTF-8 is replaced");
	a = json_object_get(o, "argv");
	ok(json_array_size(a) == 5 &&
	           !strcmp(json_string_value(json_array_get(a, 1)), "train.py") &&
	           !strcmp(json_string_value(json_array_get(a, 4)), "caf\xc3\xa9"),
	   "argv as an array, UTF-8 kept");
	a = json_object_get(o, "after");
	ok(json_array_size(a) == 2 && json_integer_value(json_array_get(a, 0)) == 3, "after");
	a = json_object_get(o, "gpu_uuids");
	ok(json_array_size(a) == 1 && !strcmp(json_string_value(json_array_get(a, 0)), UUID_B),
	   "gpu_uuids: the GPUs given");
	ok(json_integer_value(json_object_get(o, "gpu_mem")) == (json_int_t)(20ULL << 30) &&
	           json_integer_value(json_object_get(o, "time_limit")) == 7200 &&
	           json_integer_value(json_object_get(o, "exit_code")) == 3 &&
	           json_integer_value(json_object_get(o, "exit_signal")) == 9 &&
	           json_real_value(json_object_get(o, "submit_time")) == 1700000000.25 &&
	           json_is_true(json_object_get(o, "preemptible")),
	   "numbers and booleans");
	json_decref(o);

	o = qjob_to_json(&j, true);
	a = json_object_get(o, "env");
	ok(json_object_size(a) == 3 &&
	           !strcmp(json_string_value(json_object_get(a, "HOME")), "/home/alice") &&
	           !strcmp(json_string_value(json_object_get(a, "EMPTY")), ""),
	   "full adds env as an object");
	s = json_dumps(o, JSON_COMPACT);
	ok(s && !strchr(s, '\n'), "dumps as one line");
	free(s);
	json_decref(o);
	qjob_release(&j);

	qjob_init(&j);
	o = qjob_to_json(&j, false);
	ok(json_is_null(json_object_get(o, "gpu_mem")) &&
	           json_is_null(json_object_get(o, "time_limit")) &&
	           json_is_null(json_object_get(o, "exit_code")) &&
	           json_is_null(json_object_get(o, "exit_signal")) &&
	           json_is_null(json_object_get(o, "start_time")) &&
	           json_array_size(json_object_get(o, "argv")) == 0,
	   "an empty job: nulls and empty arrays");
	json_decref(o);
	j.has_exit = true;
	o = qjob_to_json(&j, false);
	ok(json_integer_value(json_object_get(o, "exit_code")) == 0 &&
	           json_is_null(json_object_get(o, "exit_signal")),
	   "exit 0: exit_code 0, exit_signal null");
	json_decref(o);

	o = qj_json_string("a\0b\xe0\x80\x80z", 7);
	is_str(json_string_value(o),
	       "a\xef\xbf\xbd"
	       "b\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz",
	       "NUL and an overlong sequence are replaced");
	json_decref(o);
}

static void
test_states(void)
{
	unsigned s;
	bool all = true;

	for (s = 0; s < QJ__COUNT; s++)
		all = all && qj_state_parse(qj_state_name(s)) == (int)s;
	ok(all, "every state's name parses back");
	is_int(qj_state_parse("bogus"), -1, "an unknown name: -1");
	is_int(qj_state_parse(NULL), -1, "NULL: -1");
	is_str(qj_state_name(QJ_CANCELLED), "cancelled", "cancelled");
	ok(qj_state_terminal(QJ_DONE) && qj_state_terminal(QJ_TIMEOUT) &&
	           !qj_state_terminal(QJ_EXITING) && !qj_state_terminal(QJ_QUEUED),
	   "terminal states");
	ok(qj_state_holds_gpus(QJ_STARTING) && qj_state_holds_gpus(QJ_EXITING) &&
	           qj_state_holds_gpus(QJ_STOPPING) && !qj_state_holds_gpus(QJ_SUSPENDED) &&
	           !qj_state_holds_gpus(QJ_QUEUED) && !qj_state_holds_gpus(QJ_DONE),
	   "states that hold GPUs");
}

static void
test_parse(void)
{
	static const struct {
		const char *s;
		uint64_t v;
	} sizes[] = {
		{ "0", 0 },
		{ "4096", 4096 },
		{ "4096B", 4096 },
		{ "512M", 512ULL << 20 },
		{ "20G", 20ULL << 30 },
		{ "20GiB", 20ULL << 30 },
		{ "20gb", 20ULL << 30 },
		{ "1.5T", 3ULL << 39 },
		{ "0.5k", 512 },
		{ "15E", 15ULL << 60 },
		{ "18446744073709551615", 18446744073709551615ULL },
	};
	static const char *const bad_sizes[] = {
		"",    "G",      "20X",  "20GG",         "-1",  "1.5",
		"1.",  ".5G",    "20 G", "99999999999T", "16E", "18446744073709551616",
		"1e9", "20Gi B",
	};
	static const struct {
		const char *s;
		uint32_t v;
	} durs[] = {
		{ "90", 90 },
		{ "90s", 90 },
		{ "10m", 600 },
		{ "2h", 7200 },
		{ "1d", 86400 },
		{ "1h30m", 5400 },
		{ "1:30:00", 5400 },
		{ "2-00:00:00", 172800 },
		{ "5:30", 330 },
		{ "1-12", 129600 },
		{ "1-0:30", 88200 },
		{ "0", 0 },
		{ "4294967295", 4294967295U },
	};
	static const char *const bad_durs[] = {
		"",     "s",          "10x",         "1h30",   "-5",   "1:2:3:4", "1-",  "-1:00",
		"1.5h", "4294967296", "99999999999", "50000d", "1::2", ":30",     "1 h",
	};
	size_t i;
	uint64_t v;
	uint32_t d;
	bool good = true;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		v = 7;
		if (qj_parse_size(sizes[i].s, &v) != E_OK || v != sizes[i].v) {
			good = false;
			diag("size '%s': %llu", sizes[i].s, (unsigned long long)v);
		}
	}
	ok(good, "sizes parse (binary units)");
	good = true;
	for (i = 0; i < ARRAY_SIZE(bad_sizes); i++) {
		v = 7;
		if (qj_parse_size(bad_sizes[i], &v) != E_PARSE || v != 7) {
			good = false;
			diag("size '%s' accepted: %llu", bad_sizes[i], (unsigned long long)v);
		}
	}
	ok(good, "bad sizes and overflow (99999999999T) are refused, the output untouched");
	ok(qj_parse_size(NULL, &v) == E_PARSE, "a NULL size is refused");

	good = true;
	for (i = 0; i < ARRAY_SIZE(durs); i++) {
		d = 7;
		if (qj_parse_duration(durs[i].s, &d) != E_OK || d != durs[i].v) {
			good = false;
			diag("duration '%s': %u", durs[i].s, d);
		}
	}
	ok(good, "durations parse (units, sums, Slurm's clock forms)");
	good = true;
	for (i = 0; i < ARRAY_SIZE(bad_durs); i++) {
		d = 7;
		if (qj_parse_duration(bad_durs[i], &d) != E_PARSE || d != 7) {
			good = false;
			diag("duration '%s' accepted: %u", bad_durs[i], d);
		}
	}
	ok(good, "bad durations and overflow are refused, the output untouched");
}

int
main(void)
{
	struct store *st;
	char *dir;
	const char *tmp = getenv("TMPDIR");

	snprintf(base, sizeof(base), "%s/t_queue_store.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(base)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_states();
	test_parse();
	test_json();
	test_open();
	test_refused();
	dir = sub("main");
	st = open_ok(dir, "a store for the job tests");
	if (st) {
		test_jobs(st);
		test_transactions(st);
		test_events(st);
		test_gpus_usage_meta(st);
		store_close(st);
	}
	st = open_ok(dir, "reopened");
	if (st) {
		struct qjob_list l;
		struct err err = ERR_INIT;

		int rc = store_jobs_active(st, &l, &err);

		ok(rc == E_OK && l.nr == 5, "what was written is there after reopening (%zu)",
		   l.nr);
		store_jobs_free(&l);
		store_close(st);
	}
	free(dir);
	test_crash();
	test_prune();
	rm_rf(base);
	return done_testing();
}
