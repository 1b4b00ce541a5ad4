/*
 * The queue's state in one SQLite database, DIR/queue.db (queue/store.h):
 * WAL with synchronous=FULL, so that a commit is on disk when it returns
 * and a daemon killed at any point finds what it had decided. One
 * connection, its statements prepared once and kept.
 */
#include "queue/store.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#define SCHEMA_VERSION 1
/* PRAGMA application_id: "GPSQ", so that our file is told from other SQLite files */
#define APP_ID 0x47505351

/* history and events: how many rows a call returns when the caller says 0 */
#define DEFAULT_LIMIT 100

enum stmt_id {
	S_JOB_INSERT,
	S_JOB_UPDATE,
	S_JOB_GET,
	S_JOBS_ACTIVE,
	S_JOBS_HISTORY_ALL,
	S_JOBS_HISTORY_UID,
	S_USER_COUNTS,
	S_EVENT_ADD,
	S_EVENTS_SINCE,
	S_EVENTS_JOB,
	S_GPU_SET,
	S_GPU_GET,
	S_USAGE_SET,
	S_USAGE_GET,
	S_META_SET,
	S_META_GET,
	S_PRUNE_EVENTS,
	S_PRUNE_JOBS,
	S__COUNT
};

struct store {
	sqlite3 *db;
	char *path;
	sqlite3_stmt *stmt[S__COUNT];
	unsigned depth;   /* store_begin() nesting */
	bool rolled_back; /* an inner store_rollback(): the outer levels must not commit */
};

/*
 * The columns of jobs after id, in the order bind_job() binds and
 * read_job() reads them.
 */
static const char *const job_cols[] = {
	"name",       "uid",           "gid",         "user",       "state",       "gpus",
	"gpu_mem",    "want_uuid",     "mode",        "priority",   "preemptible", "requeue",
	"time_limit", "grace",         "after",       "argv",       "env",         "cwd",
	"out_path",   "err_path",      "submit_time", "start_time", "end_time",    "eligible_time",
	"gpu_uuid",   "nr_gpu",        "cgroup",      "sup_pid",    "sup_start",   "pid",
	"exit_code",  "exit_signal",   "has_exit",    "restarts",   "gpu_seconds", "peak_gpu_mem",
	"reason",     "stop_deadline", "stop_cause",
};
#define NR_JOB_COLS ARRAY_SIZE(job_cols)

static const char schema_sql[] =
        "CREATE TABLE jobs ("
        " id INTEGER PRIMARY KEY AUTOINCREMENT,"
        " name TEXT NOT NULL, uid INTEGER NOT NULL, gid INTEGER NOT NULL, user TEXT NOT NULL,"
        " state TEXT NOT NULL,"
        " gpus INTEGER NOT NULL, gpu_mem INTEGER NOT NULL, want_uuid TEXT NOT NULL,"
        " mode INTEGER NOT NULL, priority INTEGER NOT NULL, preemptible INTEGER NOT NULL,"
        " requeue INTEGER NOT NULL, time_limit INTEGER NOT NULL, grace INTEGER NOT NULL,"
        " after TEXT NOT NULL,"
        " argv BLOB, env BLOB, cwd TEXT NOT NULL, out_path TEXT NOT NULL, err_path TEXT NOT NULL,"
        " submit_time REAL NOT NULL, start_time REAL NOT NULL, end_time REAL NOT NULL,"
        " eligible_time REAL NOT NULL,"
        " gpu_uuid TEXT NOT NULL, nr_gpu INTEGER NOT NULL, cgroup TEXT NOT NULL,"
        " sup_pid INTEGER NOT NULL, sup_start INTEGER NOT NULL, pid INTEGER NOT NULL,"
        " exit_code INTEGER NOT NULL, exit_signal INTEGER NOT NULL, has_exit INTEGER NOT NULL,"
        " restarts INTEGER NOT NULL, gpu_seconds REAL NOT NULL, peak_gpu_mem INTEGER NOT NULL,"
        " reason TEXT NOT NULL, stop_deadline REAL NOT NULL, stop_cause INTEGER NOT NULL);"
        "CREATE INDEX jobs_state ON jobs(state);"
        "CREATE INDEX jobs_uid_end ON jobs(uid, end_time);"
        "CREATE INDEX jobs_end ON jobs(end_time);"
        "CREATE TABLE events ("
        " id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL, job INTEGER NOT NULL,"
        " uid INTEGER NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL, detail TEXT);"
        "CREATE INDEX events_time ON events(time);"
        "CREATE INDEX events_job ON events(job);"
        "CREATE TABLE gpus (uuid TEXT PRIMARY KEY, flags INTEGER NOT NULL, note TEXT NOT NULL,"
        " since REAL NOT NULL);"
        "CREATE TABLE usage (uid INTEGER PRIMARY KEY, value REAL NOT NULL, at REAL NOT NULL);"
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);";

/* --- errors ---------------------------------------------------------------------- */

static int
sql_status(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return E_BUSY;
	case SQLITE_PERM:
	case SQLITE_AUTH:
	case SQLITE_READONLY:
	case SQLITE_CANTOPEN:
		return E_PERM;
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
	case SQLITE_FORMAT:
		return E_PARSE;
	default:
		return E_IO;
	}
}

static int
sql_err(struct store *st, struct err *err, int rc, const char *what)
{
	const char *hint = "";

	if ((rc & 0xff) == SQLITE_FULL)
		hint = " (free some disk space)";
	else if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
		hint = " (is another gpuscope queued using this state_dir?)";
	else if ((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB)
		hint = ": move it away or set state_dir";
	return err_set(err, sql_status(rc), "queue database %s: %s: %s%s", st->path, what,
	               st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc), hint);
}

/* --- statements ------------------------------------------------------------------ */

static char *
job_select_sql(const char *tail)
{
	struct strbuf sb;
	size_t i;

	strbuf_init(&sb, 512);
	strbuf_addstr(&sb, "SELECT id");
	for (i = 0; i < NR_JOB_COLS; i++)
		strbuf_addf(&sb, ", %s", job_cols[i]);
	strbuf_addf(&sb, " FROM jobs %s", tail);
	return strbuf_detach(&sb, NULL);
}

/* The SQL list of the names of the terminal states: 'done','failed',... */
static void
add_terminal_list(struct strbuf *sb)
{
	unsigned s;
	bool first = true;

	strbuf_addch(sb, '(');
	for (s = 0; s < QJ__COUNT; s++) {
		if (!qj_state_terminal(s))
			continue;
		strbuf_addf(sb, "%s'%s'", first ? "" : ",", qj_state_name(s));
		first = false;
	}
	strbuf_addch(sb, ')');
}

static char *
stmt_sql(enum stmt_id id)
{
	struct strbuf sb;
	size_t i;

	strbuf_init(&sb, 512);
	switch (id) {
	case S_JOB_INSERT:
		strbuf_addstr(&sb, "INSERT INTO jobs (");
		for (i = 0; i < NR_JOB_COLS; i++)
			strbuf_addf(&sb, "%s%s", i ? ", " : "", job_cols[i]);
		strbuf_addstr(&sb, ") VALUES (");
		for (i = 0; i < NR_JOB_COLS; i++)
			strbuf_addf(&sb, "%s?%zu", i ? ", " : "", i + 1);
		strbuf_addch(&sb, ')');
		break;
	case S_JOB_UPDATE:
		strbuf_addstr(&sb, "UPDATE jobs SET ");
		for (i = 0; i < NR_JOB_COLS; i++)
			strbuf_addf(&sb, "%s%s = ?%zu", i ? ", " : "", job_cols[i], i + 1);
		strbuf_addf(&sb, " WHERE id = ?%zu", NR_JOB_COLS + 1);
		break;
	case S_JOB_GET:
		strbuf_release(&sb);
		return job_select_sql("WHERE id = ?1");
	case S_JOBS_ACTIVE:
		strbuf_addstr(&sb, "WHERE state NOT IN ");
		add_terminal_list(&sb);
		strbuf_addstr(&sb, " ORDER BY id");
		break;
	case S_JOBS_HISTORY_ALL:
	case S_JOBS_HISTORY_UID:
		strbuf_addstr(&sb, "WHERE state IN ");
		add_terminal_list(&sb);
		if (id == S_JOBS_HISTORY_UID)
			strbuf_addstr(&sb, " AND uid = ?3");
		strbuf_addstr(&sb, " AND end_time >= ?1 ORDER BY end_time DESC, id DESC LIMIT ?2");
		break;
	case S_USER_COUNTS:
		strbuf_addstr(&sb,
		              "SELECT state, nr_gpu FROM jobs WHERE uid = ?1 AND state NOT IN ");
		add_terminal_list(&sb);
		break;
	case S_EVENT_ADD:
		strbuf_addstr(&sb, "INSERT INTO events (time, job, uid, kind, text, detail)"
		                   " VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
		break;
	case S_EVENTS_SINCE:
		strbuf_addstr(&sb, "SELECT id, time, job, uid, kind, text, detail FROM events"
		                   " WHERE id > ?1 ORDER BY id LIMIT ?2");
		break;
	case S_EVENTS_JOB:
		strbuf_addstr(&sb, "SELECT id, time, job, uid, kind, text, detail FROM events"
		                   " WHERE job = ?1 ORDER BY id LIMIT ?2");
		break;
	case S_GPU_SET:
		strbuf_addstr(&sb, "INSERT OR REPLACE INTO gpus (uuid, flags, note, since)"
		                   " VALUES (?1, ?2, ?3, ?4)");
		break;
	case S_GPU_GET:
		strbuf_addstr(&sb, "SELECT flags, note, since FROM gpus WHERE uuid = ?1");
		break;
	case S_USAGE_SET:
		strbuf_addstr(&sb,
		              "INSERT OR REPLACE INTO usage (uid, value, at) VALUES (?1, ?2, ?3)");
		break;
	case S_USAGE_GET:
		strbuf_addstr(&sb, "SELECT value, at FROM usage WHERE uid = ?1");
		break;
	case S_META_SET:
		strbuf_addstr(&sb, "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)");
		break;
	case S_META_GET:
		strbuf_addstr(&sb, "SELECT value FROM meta WHERE key = ?1");
		break;
	case S_PRUNE_EVENTS:
		/* the events of jobs still alive stay, whatever their age */
		strbuf_addstr(&sb, "DELETE FROM events WHERE time < ?1 AND (job = 0 OR job NOT IN"
		                   " (SELECT id FROM jobs WHERE state NOT IN ");
		add_terminal_list(&sb);
		strbuf_addstr(&sb, "))");
		break;
	case S_PRUNE_JOBS:
		/* a job that ended without an end time counts from its submission */
		strbuf_addstr(&sb, "DELETE FROM jobs WHERE state IN ");
		add_terminal_list(&sb);
		strbuf_addstr(&sb,
		              " AND (CASE WHEN end_time > 0 THEN end_time ELSE submit_time END)"
		              " < ?1");
		break;
	case S__COUNT:
		BUG("no statement %d", (int)id);
	}
	if (id == S_JOBS_ACTIVE || id == S_JOBS_HISTORY_ALL || id == S_JOBS_HISTORY_UID) {
		char *sql = job_select_sql(sb.buf);

		strbuf_release(&sb);
		return sql;
	}
	return strbuf_detach(&sb, NULL);
}

/* Statement id, prepared on first use, reset and unbound. */
static sqlite3_stmt *
stmt(struct store *st, enum stmt_id id, struct err *err)
{
	sqlite3_stmt *s = st->stmt[id];
	char *sql;
	int rc;

	if (s) {
		sqlite3_reset(s);
		sqlite3_clear_bindings(s);
		return s;
	}
	sql = stmt_sql(id);
	rc = sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL);
	free(sql);
	if (rc != SQLITE_OK) {
		sql_err(st, err, rc, "cannot prepare a statement");
		return NULL;
	}
	st->stmt[id] = s;
	return s;
}

/* Run a statement that returns no row; the statement is reset after. */
static int
step_done(struct store *st, sqlite3_stmt *s, struct err *err, const char *what)
{
	int rc = sqlite3_step(s);

	if (rc == SQLITE_DONE) {
		sqlite3_reset(s);
		return E_OK;
	}
	rc = sql_err(st, err, rc, what);
	sqlite3_reset(s);
	/*
	 * SQLite rolls a transaction back by itself on some errors (a full disk,
	 * an I/O error): the writes after this one must not commit on their own.
	 */
	if (st->depth && sqlite3_get_autocommit(st->db))
		st->rolled_back = true;
	return rc;
}

static int
exec_sql(struct store *st, const char *sql, struct err *err, const char *what)
{
	int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);

	if (rc != SQLITE_OK)
		return sql_err(st, err, rc, what);
	return E_OK;
}

/* A write outside a transaction that an inner rollback ended would commit on its own. */
static int
check_writable(struct store *st, struct err *err)
{
	if (st->rolled_back)
		return err_set(err, E_BUSY,
		               "queue database %s: the transaction was rolled back after an error: "
		               "end it (store_rollback) before writing again",
		               st->path);
	return E_OK;
}

/* --- opening --------------------------------------------------------------------- */

/* mkdir -p dir: the missing parents 0755, dir itself 0700; an existing dir is left as it is. */
static int
make_dir(const char *dir, struct err *err)
{
	char *p = xstrdup(dir), *s;
	struct stat sb;
	size_t len = strlen(p);
	int rc = E_OK;

	/* "dir/" is dir: the last component gets 0700 */
	while (len > 1 && p[len - 1] == '/')
		p[--len] = '\0';
	for (s = p + 1; *s; s++) {
		if (*s != '/' || s[-1] == '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			rc = err_set(err, errno_status(errno),
			             "cannot create %s: %s (set state_dir)", p, strerror(errno));
			goto out;
		}
		*s = '/';
	}
	if (mkdir(p, 0700) < 0 && errno != EEXIST) {
		rc = err_set(err, errno_status(errno), "cannot create %s: %s (set state_dir)", p,
		             strerror(errno));
		goto out;
	}
	if (stat(p, &sb) < 0 || !S_ISDIR(sb.st_mode))
		rc = err_set(err, E_IO, "state_dir %s is not a directory: set state_dir", p);
out:
	free(p);
	return rc;
}

/* Create path 0600 when missing; refuse anything but a regular file. */
static int
make_file(const char *path, struct err *err)
{
	struct stat sb;
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		close(fd);
		return E_OK;
	}
	if (errno != EEXIST)
		return err_set(err, errno_status(errno), "cannot create %s: %s (check state_dir)",
		               path, strerror(errno));
	if (lstat(path, &sb) < 0)
		return err_set(err, errno_status(errno), "cannot read %s: %s", path,
		               strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return err_set(err, E_PARSE,
		               "%s is not a gpuscope queue database (not a regular file): move it "
		               "away or set state_dir",
		               path);
	return E_OK;
}

static int
pragma_int(struct store *st, const char *sql, int *v, struct err *err)
{
	sqlite3_stmt *s;
	int rc;

	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(s);
		if (rc == SQLITE_ROW) {
			*v = sqlite3_column_int(s, 0);
			rc = SQLITE_OK;
		}
		sqlite3_finalize(s);
	}
	if ((rc & 0xff) == SQLITE_NOTADB)
		return err_set(err, E_PARSE,
		               "%s is not a gpuscope queue database: move it away or set state_dir",
		               st->path);
	if (rc != SQLITE_OK)
		return sql_err(st, err, rc, "cannot read it");
	return E_OK;
}

/* Make sure the file is ours (or new), of a schema we know, then create the schema. */
static int
check_schema(struct store *st, struct err *err)
{
	int version = 0, app = 0, tables = 0, rc;
	char *sql;

	/* reads only: a file that is not SQLite fails here before anything is written */
	rc = pragma_int(st, "PRAGMA user_version", &version, err);
	if (rc < 0)
		return rc;
	rc = pragma_int(st, "PRAGMA application_id", &app, err);
	if (rc < 0)
		return rc;
	rc = pragma_int(st, "SELECT count(*) FROM sqlite_master", &tables, err);
	if (rc < 0)
		return rc;
	if (app != APP_ID && (tables || version))
		return err_set(err, E_PARSE,
		               "%s is not a gpuscope queue database: move it away or set state_dir",
		               st->path);
	if (version > SCHEMA_VERSION)
		return err_set(
		        err, E_VERSION,
		        "%s is not a gpuscope queue database this gpuscope can read (schema %d, "
		        "newer than %d): upgrade gpuscope, move it away or set state_dir",
		        st->path, version, SCHEMA_VERSION);
	if (app == APP_ID && version == SCHEMA_VERSION)
		return E_OK;
	if (app == APP_ID && tables)
		return err_set(
		        err, E_PARSE,
		        "%s is not a gpuscope queue database (schema %d): move it away or set "
		        "state_dir",
		        st->path, version);
	/* a new file: the schema, its version and our id in one transaction */
	rc = exec_sql(st, "BEGIN IMMEDIATE", err, "cannot start the schema");
	if (rc < 0)
		return rc;
	rc = exec_sql(st, schema_sql, err, "cannot create the schema");
	if (rc == E_OK) {
		sql = xstrfmt("PRAGMA user_version = %d; PRAGMA application_id = %d",
		              SCHEMA_VERSION, APP_ID);
		rc = exec_sql(st, sql, err, "cannot write the schema version");
		free(sql);
	}
	if (rc == E_OK)
		rc = exec_sql(st, "COMMIT", err, "cannot commit the schema");
	if (rc < 0)
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static int
set_pragmas(struct store *st, struct err *err)
{
	sqlite3_stmt *s;
	const char *mode;
	int rc;

	rc = sqlite3_busy_timeout(st->db, 5000);
	if (rc != SQLITE_OK)
		return sql_err(st, err, rc, "cannot set busy_timeout");
	rc = sqlite3_prepare_v2(st->db, "PRAGMA journal_mode = WAL", -1, &s, NULL);
	if (rc != SQLITE_OK)
		return sql_err(st, err, rc, "cannot set WAL mode");
	rc = sqlite3_step(s);
	mode = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(s, 0) : NULL;
	if (!mode || strcmp(mode, "wal")) {
		rc = rc == SQLITE_ROW ? err_set(err, E_NOTSUP,
		                                "queue database %s: WAL mode refused (journal_mode "
		                                "%s): put state_dir on a local file system",
		                                st->path, mode ? mode : "?")
		                      : sql_err(st, err, rc, "cannot set WAL mode");
		sqlite3_finalize(s);
		return rc;
	}
	sqlite3_finalize(s);
	rc = exec_sql(st, "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON", err,
	              "cannot set its pragmas");
	return rc;
}

int
store_open(const char *dir, struct store **out, struct err *err)
{
	struct store *st;
	int rc;

	*out = NULL;
	if (!dir || !*dir)
		return err_set(err, E_USAGE, "no state_dir for the queue database: set state_dir");
	rc = make_dir(dir, err);
	if (rc < 0)
		return rc;
	st = xcalloc(1, sizeof(*st));
	st->path = xstrfmt("%s/queue.db", dir);
	rc = make_file(st->path, err);
	if (rc < 0)
		goto fail;
	rc = sqlite3_open_v2(st->path, &st->db,
	                     SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_FULLMUTEX,
	                     NULL);
	if (rc != SQLITE_OK) {
		rc = sql_err(st, err, rc, "cannot open it");
		goto fail;
	}
	sqlite3_extended_result_codes(st->db, 1);
	rc = sqlite3_busy_timeout(st->db, 5000);
	if (rc != SQLITE_OK) {
		rc = sql_err(st, err, rc, "cannot set busy_timeout");
		goto fail;
	}
	rc = check_schema(st, err);
	if (rc < 0)
		goto fail;
	rc = set_pragmas(st, err);
	if (rc < 0)
		goto fail;
	*out = st;
	return E_OK;
fail:
	store_close(st);
	return rc;
}

void
store_close(struct store *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < S__COUNT; i++)
		sqlite3_finalize(st->stmt[i]);
	if (st->db) {
		if (!sqlite3_get_autocommit(st->db))
			sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close(st->db);
	}
	free(st->path);
	free(st);
}

/* --- transactions ---------------------------------------------------------------- */

int
store_begin(struct store *st, struct err *err)
{
	int rc;

	if (st->depth) {
		/* an inner level: nothing to do, unless the outer one is already lost */
		rc = check_writable(st, err);
		if (rc == E_OK)
			st->depth++;
		return rc;
	}
	st->depth = 1;
	rc = exec_sql(st, "BEGIN IMMEDIATE", err, "cannot begin a transaction");
	if (rc < 0)
		st->depth = 0;
	return rc;
}

int
store_commit(struct store *st, struct err *err)
{
	int rc;

	if (!st->depth)
		return err_set(err, E_USAGE, "queue database %s: commit without a transaction",
		               st->path);
	if (--st->depth)
		return check_writable(st, err);
	if (st->rolled_back) {
		st->rolled_back = false;
		return err_set(
		        err, E_BUSY,
		        "queue database %s: the transaction was rolled back, nothing committed",
		        st->path);
	}
	rc = exec_sql(st, "COMMIT", err, "cannot commit");
	if (rc < 0 && !sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int
store_rollback(struct store *st)
{
	if (!st->depth)
		return E_OK;
	if (!st->rolled_back && !sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	if (--st->depth)
		st->rolled_back = true;
	else
		st->rolled_back = false;
	return E_OK;
}

/* --- jobs ------------------------------------------------------------------------ */

static char *
uuids_json(const char (*uuid)[QJ_UUID_LEN], unsigned nr)
{
	json_t *a = json_array();
	char *s;
	unsigned i;

	for (i = 0; i < nr && i < QJ_MAX_GPUS; i++)
		json_array_append_new(a,
		                      json_stringn_nocheck(uuid[i], strnlen(uuid[i], QJ_UUID_LEN)));
	s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return s;
}

static char *
ids_json(const uint64_t *ids, unsigned nr)
{
	json_t *a = json_array();
	char *s;
	unsigned i;

	for (i = 0; i < nr && i < QJ_MAX_AFTER; i++)
		json_array_append_new(a, json_integer((json_int_t)ids[i]));
	s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return s;
}

static int
bind_text(sqlite3_stmt *s, int i, const char *v, size_t max)
{
	return sqlite3_bind_text(s, i, v, (int)strnlen(v, max), SQLITE_TRANSIENT);
}

static int
bind_blob(sqlite3_stmt *s, int i, const char *v, size_t len)
{
	if (!v || !len)
		return sqlite3_bind_null(s, i);
	return sqlite3_bind_blob64(s, i, v, len, SQLITE_TRANSIENT);
}

/* Bind the columns of job_cols[] from j at parameters 1..NR_JOB_COLS. */
static int
bind_job(sqlite3_stmt *s, const struct qjob *j)
{
	char *want = uuids_json(j->req.want_uuid, j->req.nr_want);
	char *after = ids_json(j->req.after, j->req.nr_after);
	char *given = uuids_json(j->gpu_uuid, j->nr_gpu);
	int rc = SQLITE_OK, i = 1;

#define B(call)                      \
	do {                         \
		if (rc == SQLITE_OK) \
			rc = (call); \
		i++;                 \
	} while (0)
	B(bind_text(s, i, j->name, sizeof(j->name)));
	B(sqlite3_bind_int64(s, i, (sqlite3_int64)j->uid));
	B(sqlite3_bind_int64(s, i, (sqlite3_int64)j->gid));
	B(bind_text(s, i, j->user, sizeof(j->user)));
	B(sqlite3_bind_text(s, i, qj_state_name(j->state), -1, SQLITE_STATIC));
	B(sqlite3_bind_int64(s, i, j->req.gpus));
	B(sqlite3_bind_int64(s, i, (sqlite3_int64)j->req.gpu_mem));
	B(sqlite3_bind_text(s, i, want ? want : "[]", -1, SQLITE_TRANSIENT));
	B(sqlite3_bind_int(s, i, (int)j->req.mode));
	B(sqlite3_bind_int(s, i, j->req.priority));
	B(sqlite3_bind_int(s, i, j->req.preemptible));
	B(sqlite3_bind_int(s, i, j->req.requeue_on_loss));
	B(sqlite3_bind_int64(s, i, j->req.time_limit));
	B(sqlite3_bind_int64(s, i, j->req.grace));
	B(sqlite3_bind_text(s, i, after ? after : "[]", -1, SQLITE_TRANSIENT));
	B(bind_blob(s, i, j->argv, j->argv_len));
	B(bind_blob(s, i, j->env, j->env_len));
	B(bind_text(s, i, qjob_str(j->cwd), QJ_PATH_LEN));
	B(bind_text(s, i, qjob_str(j->out_path), QJ_PATH_LEN));
	B(bind_text(s, i, qjob_str(j->err_path), QJ_PATH_LEN));
	B(sqlite3_bind_double(s, i, j->submit_time));
	B(sqlite3_bind_double(s, i, j->start_time));
	B(sqlite3_bind_double(s, i, j->end_time));
	B(sqlite3_bind_double(s, i, j->eligible_time));
	B(sqlite3_bind_text(s, i, given ? given : "[]", -1, SQLITE_TRANSIENT));
	B(sqlite3_bind_int64(s, i, j->nr_gpu));
	B(bind_text(s, i, j->cgroup, sizeof(j->cgroup)));
	B(sqlite3_bind_int64(s, i, j->sup_pid));
	B(sqlite3_bind_int64(s, i, (sqlite3_int64)j->sup_start));
	B(sqlite3_bind_int64(s, i, j->pid));
	B(sqlite3_bind_int(s, i, j->exit_code));
	B(sqlite3_bind_int(s, i, j->exit_signal));
	B(sqlite3_bind_int(s, i, j->has_exit));
	B(sqlite3_bind_int64(s, i, j->restarts));
	B(sqlite3_bind_double(s, i, j->gpu_seconds));
	B(sqlite3_bind_int64(s, i, (sqlite3_int64)j->peak_gpu_mem));
	B(bind_text(s, i, j->reason, sizeof(j->reason)));
	B(sqlite3_bind_double(s, i, j->stop_deadline));
	B(sqlite3_bind_int(s, i, j->stop_cause));
#undef B
	if (rc == SQLITE_OK && i != (int)NR_JOB_COLS + 1)
		BUG("bind_job bound %d columns of %zu", i - 1, NR_JOB_COLS);
	free(want);
	free(after);
	free(given);
	return rc;
}

static void
col_text(sqlite3_stmt *s, int c, char *dst, size_t size)
{
	const char *v = (const char *)sqlite3_column_text(s, c);

	str_copy(dst, size, v ? v : "");
}

/* A path column (cwd, out_path, err_path) into the job's owned string *dst, cut at QJ_PATH_LEN. */
static void
col_path(sqlite3_stmt *s, int c, char **dst)
{
	const char *v = (const char *)sqlite3_column_text(s, c);
	char *p = NULL;

	if (v && *v) {
		size_t n = strnlen(v, QJ_PATH_LEN - 1);

		p = xmalloc(n + 1);
		memcpy(p, v, n);
		p[n] = '\0';
	}
	free(*dst);
	*dst = p;
}

static char *
col_blob(sqlite3_stmt *s, int c, size_t *len)
{
	const void *v = sqlite3_column_blob(s, c);
	size_t n = (size_t)sqlite3_column_bytes(s, c);
	char *p;

	*len = 0;
	if (!v || !n)
		return NULL;
	p = xmalloc(n + 1);
	memcpy(p, v, n);
	p[n] = '\0';
	*len = n;
	return p;
}

/* A JSON array of strings into uuid[]; false when it is not one. */
static bool
col_uuids(sqlite3_stmt *s, int c, char (*uuid)[QJ_UUID_LEN], unsigned *nr)
{
	const char *v = (const char *)sqlite3_column_text(s, c);
	json_t *a = v ? json_loads(v, 0, NULL) : NULL, *e;
	size_t i;
	bool good = json_is_array(a) && json_array_size(a) <= QJ_MAX_GPUS;

	*nr = 0;
	json_array_foreach(a, i, e)
	{
		if (!good || !json_is_string(e) || json_string_length(e) >= QJ_UUID_LEN) {
			good = false;
			break;
		}
		str_copy(uuid[i], QJ_UUID_LEN, json_string_value(e));
		*nr = (unsigned)i + 1;
	}
	json_decref(a);
	return good;
}

static bool
col_ids(sqlite3_stmt *s, int c, uint64_t *ids, unsigned *nr)
{
	const char *v = (const char *)sqlite3_column_text(s, c);
	json_t *a = v ? json_loads(v, 0, NULL) : NULL, *e;
	size_t i;
	bool good = json_is_array(a) && json_array_size(a) <= QJ_MAX_AFTER;

	*nr = 0;
	json_array_foreach(a, i, e)
	{
		if (!good || !json_is_integer(e)) {
			good = false;
			break;
		}
		ids[i] = (uint64_t)json_integer_value(e);
		*nr = (unsigned)i + 1;
	}
	json_decref(a);
	return good;
}

/* Read the row at s (id, then job_cols[]) into j, which it qjob_init()s first. */
static int
read_job(struct store *st, sqlite3_stmt *s, struct qjob *j, struct err *err)
{
	const char *state;
	int c = 0, k;

	qjob_init(j);
	j->id = (uint64_t)sqlite3_column_int64(s, c++);
	col_text(s, c++, j->name, sizeof(j->name));
	j->uid = (uid_t)sqlite3_column_int64(s, c++);
	j->gid = (gid_t)sqlite3_column_int64(s, c++);
	col_text(s, c++, j->user, sizeof(j->user));
	state = (const char *)sqlite3_column_text(s, c++);
	k = qj_state_parse(state);
	if (k < 0)
		return err_set(
		        err, E_PARSE,
		        "queue database %s: job %llu has an unknown state '%s': move the file "
		        "away or set state_dir",
		        st->path, (unsigned long long)j->id, state ? state : "");
	j->state = (enum qj_state)k;
	j->req.gpus = (unsigned)sqlite3_column_int64(s, c++);
	j->req.gpu_mem = (uint64_t)sqlite3_column_int64(s, c++);
	if (!col_uuids(s, c++, j->req.want_uuid, &j->req.nr_want))
		goto bad;
	k = sqlite3_column_int(s, c++);
	if (k < QJ_MODE_DEFAULT || k > QJ_MODE_SHARED)
		goto bad;
	j->req.mode = (enum qj_mode)k;
	j->req.priority = sqlite3_column_int(s, c++);
	j->req.preemptible = sqlite3_column_int(s, c++) != 0;
	j->req.requeue_on_loss = sqlite3_column_int(s, c++) != 0;
	j->req.time_limit = (uint32_t)sqlite3_column_int64(s, c++);
	j->req.grace = (uint32_t)sqlite3_column_int64(s, c++);
	if (!col_ids(s, c++, j->req.after, &j->req.nr_after))
		goto bad;
	j->argv = col_blob(s, c++, &j->argv_len);
	j->env = col_blob(s, c++, &j->env_len);
	col_path(s, c++, &j->cwd);
	col_path(s, c++, &j->out_path);
	col_path(s, c++, &j->err_path);
	j->submit_time = sqlite3_column_double(s, c++);
	j->start_time = sqlite3_column_double(s, c++);
	j->end_time = sqlite3_column_double(s, c++);
	j->eligible_time = sqlite3_column_double(s, c++);
	if (!col_uuids(s, c++, j->gpu_uuid, &j->nr_gpu))
		goto bad;
	c++; /* nr_gpu: the same as the array's length, kept for store_user_counts() */
	col_text(s, c++, j->cgroup, sizeof(j->cgroup));
	j->sup_pid = (pid_t)sqlite3_column_int64(s, c++);
	j->sup_start = (uint64_t)sqlite3_column_int64(s, c++);
	j->pid = (pid_t)sqlite3_column_int64(s, c++);
	j->exit_code = sqlite3_column_int(s, c++);
	j->exit_signal = sqlite3_column_int(s, c++);
	j->has_exit = sqlite3_column_int(s, c++) != 0;
	j->restarts = (unsigned)sqlite3_column_int64(s, c++);
	j->gpu_seconds = sqlite3_column_double(s, c++);
	j->peak_gpu_mem = (uint64_t)sqlite3_column_int64(s, c++);
	col_text(s, c++, j->reason, sizeof(j->reason));
	j->stop_deadline = sqlite3_column_double(s, c++);
	j->stop_cause = sqlite3_column_int(s, c++);
	if (c != (int)NR_JOB_COLS + 1)
		BUG("read_job read %d columns of %zu", c, NR_JOB_COLS + 1);
	return E_OK;
bad:
	qjob_release(j);
	return err_set(err, E_PARSE,
	               "queue database %s: job %llu has a malformed column %s: move the file away "
	               "or set state_dir",
	               st->path, (unsigned long long)j->id, job_cols[c - 2]);
}

int
store_job_insert(struct store *st, struct qjob *j, struct err *err)
{
	sqlite3_stmt *s;
	int rc;

	rc = check_writable(st, err);
	if (rc < 0)
		return rc;
	s = stmt(st, S_JOB_INSERT, err);
	if (!s)
		return E_IO;
	rc = bind_job(s, j);
	if (rc != SQLITE_OK)
		return sql_err(st, err, rc, "cannot write a job");
	rc = step_done(st, s, err, "cannot write a job");
	if (rc < 0)
		return rc;
	j->id = (uint64_t)sqlite3_last_insert_rowid(st->db);
	return E_OK;
}

int
store_job_update(struct store *st, const struct qjob *j, struct err *err)
{
	sqlite3_stmt *s;
	int rc;

	rc = check_writable(st, err);
	if (rc < 0)
		return rc;
	s = stmt(st, S_JOB_UPDATE, err);
	if (!s)
		return E_IO;
	rc = bind_job(s, j);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(s, (int)NR_JOB_COLS + 1, (sqlite3_int64)j->id);
	if (rc != SQLITE_OK)
		return sql_err(st, err, rc, "cannot write a job");
	rc = step_done(st, s, err, "cannot write a job");
	if (rc < 0)
		return rc;
	if (sqlite3_changes(st->db) == 0)
		return err_set(err, E_NOTFOUND, "no job %llu in the queue",
		               (unsigned long long)j->id);
	return E_OK;
}

int
store_job_get(struct store *st, uint64_t id, struct qjob *j, struct err *err)
{
	sqlite3_stmt *s;
	int rc;

	s = stmt(st, S_JOB_GET, err);
	if (!s)
		return E_IO;
	sqlite3_bind_int64(s, 1, (sqlite3_int64)id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		rc = read_job(st, s, j, err);
	else if (rc == SQLITE_DONE)
		rc = err_set(err, E_NOTFOUND, "no job %llu in the queue", (unsigned long long)id);
	else
		rc = sql_err(st, err, rc, "cannot read a job");
	sqlite3_reset(s);
	return rc;
}

void
store_jobs_free(struct qjob_list *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->nr; i++)
		qjob_release(&l->job[i]);
	FREE_AND_NULL(l->job);
	l->nr = 0;
}

/* Every row of the bound statement s into out. */
static int
read_jobs(struct store *st, sqlite3_stmt *s, struct qjob_list *out, struct err *err)
{
	size_t alloc = 0;
	int rc;

	out->job = NULL;
	out->nr = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		ALLOC_GROW(out->job, out->nr + 1, alloc);
		rc = read_job(st, s, &out->job[out->nr], err);
		if (rc < 0)
			goto fail;
		out->nr++;
	}
	if (rc != SQLITE_DONE) {
		rc = sql_err(st, err, rc, "cannot read the jobs");
		goto fail;
	}
	sqlite3_reset(s);
	return E_OK;
fail:
	sqlite3_reset(s);
	store_jobs_free(out);
	return rc;
}

int
store_jobs_active(struct store *st, struct qjob_list *out, struct err *err)
{
	sqlite3_stmt *s = stmt(st, S_JOBS_ACTIVE, err);

	out->job = NULL;
	out->nr = 0;
	if (!s)
		return E_IO;
	return read_jobs(st, s, out, err);
}

int
store_jobs_history(struct store *st, uid_t uid, double since, unsigned limit, struct qjob_list *out,
                   struct err *err)
{
	bool all = uid == (uid_t)-1;
	sqlite3_stmt *s = stmt(st, all ? S_JOBS_HISTORY_ALL : S_JOBS_HISTORY_UID, err);

	out->job = NULL;
	out->nr = 0;
	if (!s)
		return E_IO;
	sqlite3_bind_double(s, 1, since > 0 ? since : -INFINITY);
	sqlite3_bind_int64(s, 2, limit ? limit : DEFAULT_LIMIT);
	if (!all)
		sqlite3_bind_int64(s, 3, (sqlite3_int64)uid);
	return read_jobs(st, s, out, err);
}

int
store_user_counts(struct store *st, uid_t uid, unsigned *queued, unsigned *running, unsigned *gpus,
                  struct err *err)
{
	sqlite3_stmt *s = stmt(st, S_USER_COUNTS, err);
	unsigned q = 0, r = 0, g = 0;
	int rc;

	if (!s)
		return E_IO;
	sqlite3_bind_int64(s, 1, (sqlite3_int64)uid);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int state = qj_state_parse((const char *)sqlite3_column_text(s, 0));

		if (state < 0)
			continue;
		if (qj_state_holds_gpus(state)) {
			r++;
			g += (unsigned)sqlite3_column_int64(s, 1);
		} else {
			q++; /* queued, held, suspended: waiting for GPUs */
		}
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return sql_err(st, err, rc, "cannot count a user's jobs");
	if (queued)
		*queued = q;
	if (running)
		*running = r;
	if (gpus)
		*gpus = g;
	return E_OK;
}

int
store_prune(struct store *st, double before, struct err *err)
{
	sqlite3_stmt *s;
	int rc, jobs;

	rc = store_begin(st, err);
	if (rc < 0)
		return rc;
	s = stmt(st, S_PRUNE_JOBS, err);
	if (!s) {
		rc = E_IO;
		goto fail;
	}
	sqlite3_bind_double(s, 1, before);
	rc = step_done(st, s, err, "cannot prune old jobs");
	if (rc < 0)
		goto fail;
	jobs = sqlite3_changes(st->db);
	s = stmt(st, S_PRUNE_EVENTS, err);
	if (!s) {
		rc = E_IO;
		goto fail;
	}
	sqlite3_bind_double(s, 1, before);
	rc = step_done(st, s, err, "cannot prune old events");
	if (rc < 0)
		goto fail;
	rc = store_commit(st, err);
	return rc < 0 ? rc : jobs;
fail:
	store_rollback(st);
	return rc;
}

/* --- events ---------------------------------------------------------------------- */

int
store_event_add(struct store *st, double time, uint64_t job, uid_t uid, const char *kind,
                const char *detail, struct err *err, const char *fmt, ...)
{
	char text[sizeof(((struct qevent *)NULL)->text)];
	sqlite3_stmt *s;
	va_list ap;
	json_t *d;
	int rc;

	if (!kind || !*kind || strlen(kind) >= sizeof(((struct qevent *)NULL)->kind))
		return err_set(err, E_USAGE, "an event needs a kind of at most 31 characters");
	if (detail) {
		d = json_loads(detail, JSON_REJECT_DUPLICATES, NULL);
		rc = json_is_object(d);
		json_decref(d);
		if (!rc)
			return err_set(err, E_USAGE,
			               "the detail of event '%s' is not a JSON object", kind);
	}
	rc = check_writable(st, err);
	if (rc < 0)
		return rc;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	s = stmt(st, S_EVENT_ADD, err);
	if (!s)
		return E_IO;
	sqlite3_bind_double(s, 1, time);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)job);
	sqlite3_bind_int64(s, 3, uid == (uid_t)-1 ? -1 : (sqlite3_int64)uid);
	sqlite3_bind_text(s, 4, kind, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 5, text, -1, SQLITE_TRANSIENT);
	if (detail)
		sqlite3_bind_text(s, 6, detail, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, 6);
	return step_done(st, s, err, "cannot write an event");
}

static int read_events(struct store *st, enum stmt_id which, uint64_t key, unsigned limit,
                       struct qevent **out, size_t *nr, struct err *err);

int
store_events_since(struct store *st, uint64_t after, unsigned limit, struct qevent **out,
                   size_t *nr, struct err *err)
{
	return read_events(st, S_EVENTS_SINCE, after, limit, out, nr, err);
}

int
store_events_job(struct store *st, uint64_t job, unsigned limit, struct qevent **out, size_t *nr,
                 struct err *err)
{
	return read_events(st, S_EVENTS_JOB, job, limit, out, nr, err);
}

/* The events statement id with ?1 = key, ?2 = limit. */
static int
read_events(struct store *st, enum stmt_id which, uint64_t key, unsigned limit, struct qevent **out,
            size_t *nr, struct err *err)
{
	sqlite3_stmt *s = stmt(st, which, err);
	struct qevent *ev = NULL;
	size_t n = 0, alloc = 0;
	int rc;

	*out = NULL;
	*nr = 0;
	if (!s)
		return E_IO;
	sqlite3_bind_int64(s, 1, (sqlite3_int64)key);
	sqlite3_bind_int64(s, 2, limit ? limit : DEFAULT_LIMIT);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct qevent *e;
		const char *detail;
		sqlite3_int64 uid;

		ALLOC_GROW(ev, n + 1, alloc);
		e = &ev[n++];
		memset(e, 0, sizeof(*e));
		e->id = (uint64_t)sqlite3_column_int64(s, 0);
		e->time = sqlite3_column_double(s, 1);
		e->job = (uint64_t)sqlite3_column_int64(s, 2);
		uid = sqlite3_column_int64(s, 3);
		e->uid = uid < 0 ? (uid_t)-1 : (uid_t)uid;
		col_text(s, 4, e->kind, sizeof(e->kind));
		col_text(s, 5, e->text, sizeof(e->text));
		detail = (const char *)sqlite3_column_text(s, 6);
		e->detail = detail ? xstrdup(detail) : NULL;
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE) {
		store_events_free(ev, n);
		return sql_err(st, err, rc, "cannot read the events");
	}
	*out = ev;
	*nr = n;
	return E_OK;
}

void
store_events_free(struct qevent *ev, size_t nr)
{
	size_t i;

	for (i = 0; ev && i < nr; i++)
		free(ev[i].detail);
	free(ev);
}

/* --- GPUs, usage, meta ----------------------------------------------------------- */

int
store_gpu_set(struct store *st, const char *uuid, unsigned flags, const char *note, double since,
              struct err *err)
{
	sqlite3_stmt *s;
	int rc;

	if (!uuid || !*uuid)
		return err_set(err, E_USAGE, "a GPU's flags need its UUID");
	rc = check_writable(st, err);
	if (rc < 0)
		return rc;
	s = stmt(st, S_GPU_SET, err);
	if (!s)
		return E_IO;
	sqlite3_bind_text(s, 1, uuid, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 2, flags);
	sqlite3_bind_text(s, 3, note ? note : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(s, 4, since);
	return step_done(st, s, err, "cannot write a GPU's flags");
}

int
store_gpu_get(struct store *st, const char *uuid, unsigned *flags, char *note, size_t note_len,
              double *since, struct err *err)
{
	sqlite3_stmt *s = stmt(st, S_GPU_GET, err);
	int rc;

	if (!s)
		return E_IO;
	if (flags)
		*flags = 0;
	if (note && note_len)
		note[0] = '\0';
	if (since)
		*since = 0;
	sqlite3_bind_text(s, 1, uuid ? uuid : "", -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		if (flags)
			*flags = (unsigned)sqlite3_column_int64(s, 0);
		if (note && note_len)
			col_text(s, 1, note, note_len);
		if (since)
			*since = sqlite3_column_double(s, 2);
		rc = SQLITE_DONE;
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return sql_err(st, err, rc, "cannot read a GPU's flags");
	return E_OK;
}

/* value recorded at time at, decayed to now with half-life hl (none when hl <= 0) */
static double
decay(double value, double at, double now, double hl)
{
	if (hl <= 0 || now <= at)
		return value;
	return value * exp2(-(now - at) / hl);
}

static int
usage_read(struct store *st, uid_t uid, double *value, double *at, struct err *err)
{
	sqlite3_stmt *s = stmt(st, S_USAGE_GET, err);
	int rc;

	if (!s)
		return E_IO;
	*value = 0;
	*at = 0;
	sqlite3_bind_int64(s, 1, (sqlite3_int64)uid);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*value = sqlite3_column_double(s, 0);
		*at = sqlite3_column_double(s, 1);
		rc = SQLITE_DONE;
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return sql_err(st, err, rc, "cannot read a user's usage");
	return E_OK;
}

int
store_usage_add(struct store *st, uid_t uid, double gpu_seconds, double now, double hl,
                struct err *err)
{
	sqlite3_stmt *s;
	double value, at;
	int rc;

	rc = check_writable(st, err);
	if (rc < 0)
		return rc;
	rc = usage_read(st, uid, &value, &at, err);
	if (rc < 0)
		return rc;
	value = decay(value, at, now, hl) + gpu_seconds;
	if (!isfinite(value) || value < 0)
		value = 0;
	s = stmt(st, S_USAGE_SET, err);
	if (!s)
		return E_IO;
	sqlite3_bind_int64(s, 1, (sqlite3_int64)uid);
	sqlite3_bind_double(s, 2, value);
	sqlite3_bind_double(s, 3, now > at ? now : at);
	return step_done(st, s, err, "cannot write a user's usage");
}

int
store_usage_get(struct store *st, uid_t uid, double now, double hl, double *out, struct err *err)
{
	double value, at;
	int rc;

	rc = usage_read(st, uid, &value, &at, err);
	if (rc < 0)
		return rc;
	*out = decay(value, at, now, hl);
	return E_OK;
}

int
store_meta_set(struct store *st, const char *key, const char *value, struct err *err)
{
	sqlite3_stmt *s;
	int rc;

	if (!key || !*key)
		return err_set(err, E_USAGE, "a meta value needs a key");
	rc = check_writable(st, err);
	if (rc < 0)
		return rc;
	s = stmt(st, S_META_SET, err);
	if (!s)
		return E_IO;
	sqlite3_bind_text(s, 1, key, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 2, value ? value : "", -1, SQLITE_TRANSIENT);
	return step_done(st, s, err, "cannot write a meta value");
}

int
store_meta_get(struct store *st, const char *key, char *value, size_t len, struct err *err)
{
	sqlite3_stmt *s = stmt(st, S_META_GET, err);
	const char *v;
	int rc;

	if (!s)
		return E_IO;
	sqlite3_bind_text(s, 1, key ? key : "", -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		v = (const char *)sqlite3_column_text(s, 0);
		if (!v)
			v = "";
		if (strlen(v) >= len) {
			rc = err_set(err, E_USAGE,
			             "queue database %s: meta '%s' is longer than %zu", st->path,
			             key, len ? len - 1 : 0);
		} else {
			str_copy(value, len, v);
			rc = E_OK;
		}
	} else if (rc == SQLITE_DONE) {
		rc = err_set(err, E_NOTFOUND, "no meta '%s' in the queue database", key);
	} else {
		rc = sql_err(st, err, rc, "cannot read a meta value");
	}
	sqlite3_reset(s);
	return rc;
}
