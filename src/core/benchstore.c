/*
 * The bench store (core/benchstore.h): records of measured figures, one JSON
 * file per GPU UUID, written atomically in a directory other users may read,
 * read back through jansson (core/jsonin.h) with every member checked.
 */
#include "core/benchstore.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fields.h"
#include "core/json.h"
#include "core/jsonin.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

/* A store directory holds at most this many files that are looked at (list). */
#define MAX_FILES 4096

/* --- records ------------------------------------------------------------------ */

void
bench_record_release(struct bench_record *r)
{
	free(r->fig);
	memset(r, 0, sizeof(*r));
}

void
bench_figure_init(struct bench_figure *f, const char *test)
{
	memset(f, 0, sizeof(*f));
	str_copy(f->test, sizeof(f->test), test ? test : "");
	f->best = f->median = f->spec = f->clock_peak = f->link_gbs = NAN;
	f->time = NAN;
}

static struct bench_figure *
find_mut(struct bench_record *r, const char *test)
{
	for (size_t i = 0; i < r->nr_fig; i++)
		if (!strcmp(r->fig[i].test, test))
			return &r->fig[i];
	return NULL;
}

const struct bench_figure *
bench_record_find(const struct bench_record *r, const char *test)
{
	for (size_t i = 0; r && i < r->nr_fig; i++)
		if (!strcmp(r->fig[i].test, test))
			return &r->fig[i];
	return NULL;
}

/* Add f to r; a figure of the same test is replaced when force, or when it is older. */
static void
set_fig(struct bench_record *r, const struct bench_figure *f, bool force)
{
	struct bench_figure *have = find_mut(r, f->test);

	if (have) {
		/* NaN times compare false: an unknown time never replaces a known one */
		if (force || !(have->time >= f->time))
			*have = *f;
		return;
	}
	ALLOC_GROW(r->fig, r->nr_fig + 1, r->alloc_fig);
	r->fig[r->nr_fig++] = *f;
}

void
bench_record_set(struct bench_record *r, const struct bench_figure *f)
{
	set_fig(r, f, false);
}

double
bench_figure_in(const struct bench_figure *f, double v, const char *kind, double scale)
{
	static const char *const rates[] = { "FLOP/s", "OP/s", "OPS", "FLOPS", NULL };
	const char *rest = f->unit + 1;
	double mult;

	switch (f->unit[0]) {
	case 'M':
		mult = 1e6;
		break;
	case 'G':
		mult = 1e9;
		break;
	case 'T':
		mult = 1e12;
		break;
	default:
		return NAN;
	}
	if (!strcmp(kind, "FLOP/s")) {
		for (const char *const *k = rates; *k; k++)
			if (!strcmp(rest, *k))
				return v * mult / scale;
		return NAN;
	}
	return strcmp(rest, kind) ? NAN : v * mult / scale;
}

bool
bench_store_uuid_ok(const char *uuid)
{
	size_t n = 0;

	if (!uuid)
		return false;
	for (; uuid[n]; n++)
		if (!((uuid[n] >= 'A' && uuid[n] <= 'Z') || (uuid[n] >= 'a' && uuid[n] <= 'z') ||
		      (uuid[n] >= '0' && uuid[n] <= '9') || uuid[n] == '-'))
			return false;
	/* a leading '-' would read as an option in a shell command naming the file */
	return n > 0 && n < sizeof(((struct bench_record *)0)->uuid) && uuid[0] != '-';
}

/* --- JSON out ------------------------------------------------------------------ */

static void
key_str(struct strbuf *sb, const char *ind, const char *key, const char *v, bool comma)
{
	strbuf_addf(sb, "%s\"%s\": ", ind, key);
	json_str(sb, v);
	strbuf_addstr(sb, comma ? ",\n" : "\n");
}

static void
key_num(struct strbuf *sb, const char *ind, const char *key, double v, int decimals)
{
	strbuf_addf(sb, "%s\"%s\": ", ind, key);
	json_num(sb, v, decimals);
	strbuf_addstr(sb, ",\n");
}

static void
figure_json(const struct bench_figure *f, struct strbuf *sb)
{
	static const char ind[] = "      ";
	const struct flag_name *names;
	unsigned nr, n = 0;

	strbuf_addstr(sb, "    {\n");
	key_str(sb, ind, "test", f->test, true);
	key_str(sb, ind, "unit", f->unit, true);
	key_num(sb, ind, "best", f->best, 4);
	key_num(sb, ind, "median", f->median, 4);
	key_num(sb, ind, "spec", f->spec, 4);
	key_num(sb, ind, "clock_peak", f->clock_peak, 4);
	key_num(sb, ind, "link_gbs", f->link_gbs, 4);
	key_num(sb, ind, "time", f->time, 3);
	key_str(sb, ind, "driver", f->driver, true);
	key_num(sb, ind, "sm_clock_mhz", f->sm_mhz, 0);
	key_num(sb, ind, "mem_clock_mhz", f->mem_mhz, 0);
	key_num(sb, ind, "pcie_gen", f->pcie_gen, 0);
	key_num(sb, ind, "pcie_width", f->pcie_width, 0);
	strbuf_addf(sb, "%s\"throttle\": [", ind);
	names = clock_reason_names(&nr);
	for (unsigned i = 0; i < nr; i++) {
		if (!(f->throttle & names[i].bit))
			continue;
		strbuf_addstr(sb, n++ ? ", " : "");
		json_str(sb, names[i].key);
	}
	strbuf_addstr(sb, "],\n");
	key_str(sb, ind, "notes", f->notes, false);
	strbuf_addstr(sb, "    }");
}

void
bench_record_json(const struct bench_record *r, struct strbuf *sb)
{
	static const char ind[] = "  ";

	strbuf_addstr(sb, "{\n");
	key_str(sb, ind, "schema", BENCH_STORE_SCHEMA, true);
	key_str(sb, ind, "uuid", r->uuid, true);
	key_str(sb, ind, "name", r->name, true);
	key_str(sb, ind, "pci_bus_id", r->pci_bus_id, true);
	key_str(sb, ind, "driver", r->driver, true);
	key_str(sb, ind, "gpuscope_version", r->version, true);
	key_str(sb, ind, "host", r->host, true);
	key_num(sb, ind, "time", r->time, 3);
	strbuf_addstr(sb, "  \"figures\": [");
	for (size_t i = 0; i < r->nr_fig; i++) {
		strbuf_addstr(sb, i ? ",\n" : "\n");
		figure_json(&r->fig[i], sb);
	}
	strbuf_addstr(sb, r->nr_fig ? "\n  ]\n}\n" : "]\n}\n");
}

/* --- JSON in ------------------------------------------------------------------ */

/*
 * One member of obj into a string field: absent is "", anything but a
 * string that fits is an error (a value cut to fit could name another GPU).
 */
static int
get_str(json_t *obj, const char *key, char *dst, size_t size, const char *name, struct err *err)
{
	json_t *v = json_object_get(obj, key);

	dst[0] = '\0';
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return err_set(err, E_PARSE, "%s: '%s' is not a string", name, key);
	if (json_string_length(v) >= size || strlen(json_string_value(v)) != json_string_length(v))
		return err_set(err, E_PARSE, "%s: '%s' is too long or holds a NUL byte", name, key);
	memcpy(dst, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

/* A number member: absent or null is NAN. */
static int
get_num(json_t *obj, const char *key, double *dst, const char *name, struct err *err)
{
	json_t *v = json_object_get(obj, key);

	*dst = NAN;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_number(v))
		return err_set(err, E_PARSE, "%s: '%s' is not a number", name, key);
	*dst = json_number_value(v);
	return 0;
}

/* A whole number from 0 to max: absent or null is 0. */
static int
get_uint(json_t *obj, const char *key, unsigned *dst, double max, const char *name, struct err *err)
{
	double v;

	*dst = 0;
	if (get_num(obj, key, &v, name, err) < 0)
		return E_PARSE;
	if (isnan(v))
		return 0;
	if (!(v >= 0 && v <= max) || v != floor(v))
		return err_set(err, E_PARSE, "%s: '%s' is not a whole number from 0 to %.0f", name,
		               key, max);
	*dst = (unsigned)v;
	return 0;
}

static int
parse_throttle(json_t *arr, unsigned *bits, const char *name, struct err *err)
{
	const struct flag_name *names;
	unsigned nr;
	size_t i;
	json_t *v;

	*bits = 0;
	if (!arr || json_is_null(arr))
		return 0;
	if (!json_is_array(arr))
		return err_set(err, E_PARSE, "%s: 'throttle' is not an array", name);
	names = clock_reason_names(&nr);
	json_array_foreach(arr, i, v)
	{
		if (!json_is_string(v))
			return err_set(err, E_PARSE, "%s: 'throttle' holds a non-string", name);
		/* a reason a later version names is kept in the notes' stead: passed over */
		for (unsigned k = 0; k < nr; k++)
			if (!strcmp(json_string_value(v), names[k].key))
				*bits |= (unsigned)names[k].bit;
	}
	return 0;
}

static int
parse_figure(json_t *o, struct bench_figure *f, const char *name, struct err *err)
{
	bench_figure_init(f, "");
	if (!json_is_object(o))
		return err_set(err, E_PARSE, "%s: a figure is not an object", name);
	if (get_str(o, "test", f->test, sizeof(f->test), name, err) < 0 ||
	    get_str(o, "unit", f->unit, sizeof(f->unit), name, err) < 0 ||
	    get_num(o, "best", &f->best, name, err) < 0 ||
	    get_num(o, "median", &f->median, name, err) < 0 ||
	    get_num(o, "spec", &f->spec, name, err) < 0 ||
	    get_num(o, "clock_peak", &f->clock_peak, name, err) < 0 ||
	    get_num(o, "link_gbs", &f->link_gbs, name, err) < 0 ||
	    get_num(o, "time", &f->time, name, err) < 0 ||
	    get_str(o, "driver", f->driver, sizeof(f->driver), name, err) < 0 ||
	    get_uint(o, "sm_clock_mhz", &f->sm_mhz, 1e6, name, err) < 0 ||
	    get_uint(o, "mem_clock_mhz", &f->mem_mhz, 1e6, name, err) < 0 ||
	    get_uint(o, "pcie_gen", &f->pcie_gen, 64, name, err) < 0 ||
	    get_uint(o, "pcie_width", &f->pcie_width, 64, name, err) < 0 ||
	    parse_throttle(json_object_get(o, "throttle"), &f->throttle, name, err) < 0 ||
	    get_str(o, "notes", f->notes, sizeof(f->notes), name, err) < 0)
		return E_PARSE;
	if (!f->test[0])
		return err_set(err, E_PARSE, "%s: a figure without a 'test'", name);
	return 0;
}

int
bench_record_parse(const char *buf, size_t len, const char *name, struct bench_record *r,
                   struct err *err)
{
	json_t *root, *v, *figs;
	int rc = E_PARSE;
	size_t i;

	bench_record_release(r);
	root = jsonin_object(buf, len, name, err);
	if (!root)
		return E_PARSE;
	v = json_object_get(root, "schema");
	if (!json_is_string(v) || strcmp(json_string_value(v), BENCH_STORE_SCHEMA)) {
		err_set(err, E_PARSE, "%s: not a bench store record (schema '%s' expected)", name,
		        BENCH_STORE_SCHEMA);
		goto out;
	}
	if (get_str(root, "uuid", r->uuid, sizeof(r->uuid), name, err) < 0 ||
	    get_str(root, "name", r->name, sizeof(r->name), name, err) < 0 ||
	    get_str(root, "pci_bus_id", r->pci_bus_id, sizeof(r->pci_bus_id), name, err) < 0 ||
	    get_str(root, "driver", r->driver, sizeof(r->driver), name, err) < 0 ||
	    get_str(root, "gpuscope_version", r->version, sizeof(r->version), name, err) < 0 ||
	    get_str(root, "host", r->host, sizeof(r->host), name, err) < 0 ||
	    get_num(root, "time", &r->time, name, err) < 0)
		goto out;
	if (!bench_store_uuid_ok(r->uuid)) {
		err_set(err, E_PARSE, "%s: 'uuid' is missing or not only letters, digits and '-'",
		        name);
		goto out;
	}
	figs = json_object_get(root, "figures");
	if (!json_is_array(figs)) {
		err_set(err, E_PARSE, "%s: 'figures' is missing or not an array", name);
		goto out;
	}
	if (json_array_size(figs) > BENCH_STORE_MAX_FIGURES) {
		err_set(err, E_PARSE, "%s: more than %d figures", name, BENCH_STORE_MAX_FIGURES);
		goto out;
	}
	json_array_foreach(figs, i, v)
	{
		struct bench_figure f;

		if (parse_figure(v, &f, name, err) < 0)
			goto out;
		if (find_mut(r, f.test)) {
			err_set(err, E_PARSE, "%s: test '%s' is there twice", name, f.test);
			goto out;
		}
		set_fig(r, &f, true);
	}
	rc = 0;
out:
	json_decref(root);
	if (rc < 0)
		bench_record_release(r);
	return rc;
}

/* --- places ------------------------------------------------------------------ */

static void
set_dir(char *dst, size_t size, const char *a, const char *b)
{
	size_t len = strlen(a);

	/* a path that does not fit names nothing rather than another directory */
	while (len > 1 && a[len - 1] == '/')
		len--;
	if ((size_t)snprintf(dst, size, "%.*s%s", (int)len, a, b) >= size)
		dst[0] = '\0';
}

void
bench_store_dirs_init(struct bench_store_dirs *d, const char *(*getenv_fn)(const char *),
                      const char *root)
{
	const char *env = getenv_fn ? getenv_fn(BENCH_STORE_ENV) : NULL;
	bool real = !root || !strcmp(root, "/") || !root[0];

	memset(d, 0, sizeof(*d));
	if (env && env[0] == '/') {
		set_dir(d->env, sizeof(d->env), env, "");
		return;
	}
	if (real) {
		set_dir(d->system, sizeof(d->system), BENCH_STORE_SYSTEM_DIR, "");
	} else {
		set_dir(d->system, sizeof(d->system), root, BENCH_STORE_SYSTEM_DIR);
		return; /* another machine's tree has no user of ours */
	}
	/* XDG: a relative XDG_STATE_HOME is invalid and to be ignored */
	env = getenv_fn ? getenv_fn("XDG_STATE_HOME") : NULL;
	if (env && env[0] == '/') {
		set_dir(d->user, sizeof(d->user), env, "/gpuscope/bench");
		return;
	}
	env = getenv_fn ? getenv_fn("HOME") : NULL;
	if (env && env[0] == '/')
		set_dir(d->user, sizeof(d->user), env, "/.local/state/gpuscope/bench");
}

/*
 * Open dir for the store: a real directory (a symlink in its place is
 * refused), owned by root or by us and not writable by every user (where
 * anyone may plant a record for fit and doctor to believe). E_NOTFOUND when
 * it is not there.
 */
static int
open_dir(const char *dir, struct err *err)
{
	struct stat st;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;

		if (e == ENOENT)
			return E_NOTFOUND;
		if (e == ELOOP || e == ENOTDIR)
			return err_set(err, E_PERM,
			               "%s: not a directory (a symlink or a file): refused", dir);
		return err_set(err, errno_status(e), "open %s: %s", dir, strerror(e));
	}
	if (fstat(fd, &st) < 0) {
		int e = errno;

		close(fd);
		return err_set(err, E_IO, "fstat %s: %s", dir, strerror(e));
	}
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & S_IWOTH)) {
		close(fd);
		return err_set(err, E_PERM,
		               "%s: owned by another user or writable by every user: not used",
		               dir);
	}
	return fd;
}

/* mkdir -p dir, new directories 0755 (umask permitting). */
static int
make_dirs(const char *dir, struct err *err)
{
	char path[4096];
	size_t len = strlen(dir);

	if (len == 0 || len >= sizeof(path) || dir[0] != '/')
		return err_set(err, E_USAGE, "'%s': not an absolute directory", dir);
	memcpy(path, dir, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		path[i] = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			int e = errno;

			return err_set(err, errno_status(e), "mkdir %s: %s", path, strerror(e));
		}
		if (i < len)
			path[i] = '/';
	}
	return 0;
}

bool
bench_store_write_dir(const struct bench_store_dirs *d, char *buf, size_t size)
{
	const char *pick = NULL;

	if (d->env[0]) {
		pick = d->env;
	} else if (d->system[0] && geteuid() == 0) {
		pick = d->system;
	} else if (d->system[0]) {
		int fd = open_dir(d->system, NULL);

		if (fd >= 0) {
			if (faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) == 0)
				pick = d->system;
			close(fd);
		}
	}
	if (!pick && d->user[0])
		pick = d->user;
	if (!pick || strlen(pick) >= size)
		return false;
	memcpy(buf, pick, strlen(pick) + 1);
	return true;
}

/* The places reads look in, in order. */
static size_t
read_dirs(const struct bench_store_dirs *d, const char *out[2])
{
	size_t n = 0;

	if (d->env[0]) {
		out[n++] = d->env;
		return n;
	}
	if (d->user[0])
		out[n++] = d->user;
	if (d->system[0])
		out[n++] = d->system;
	return n;
}

/* --- files ------------------------------------------------------------------ */

/* Read dir/file (dfd open on dir) as a record. E_NOTFOUND when there is none. */
static int
read_record(int dfd, const char *dir, const char *file, struct bench_record *r, struct err *err)
{
	struct strbuf sb = STRBUF_INIT;
	char name[4200];
	struct stat st;
	int fd, rc = 0;

	snprintf(name, sizeof(name), "%s/%s", dir, file);
	/* O_NOFOLLOW: a symlink planted in the file's place is never followed; O_NONBLOCK: a FIFO
	 */
	fd = openat(dfd, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		if (e == ENOENT)
			return E_NOTFOUND;
		if (e == ELOOP)
			return err_set(err, E_PERM, "%s: a symbolic link, not a record: refused",
			               name);
		return err_set(err, errno_status(e), "open %s: %s", name, strerror(e));
	}
	if (fstat(fd, &st) < 0) {
		rc = err_set(err, E_IO, "fstat %s: %s", name, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = err_set(err, E_PERM, "%s: not a regular file: refused", name);
		goto out;
	}
	if (st.st_size > BENCH_STORE_MAX_BYTES) {
		rc = err_set(err, E_PARSE, "%s: larger than %d bytes, not a record", name,
		             BENCH_STORE_MAX_BYTES);
		goto out;
	}
	strbuf_grow(&sb, (size_t)st.st_size + 1);
	for (;;) {
		ssize_t got;

		strbuf_grow(&sb, 4096);
		got = read(fd, sb.buf + sb.len, sb.alloc - sb.len - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = err_set(err, E_IO, "read %s: %s", name, strerror(errno));
			goto out;
		}
		if (got == 0)
			break;
		strbuf_setlen(&sb, sb.len + (size_t)got);
		if (sb.len > BENCH_STORE_MAX_BYTES) {
			rc = err_set(err, E_PARSE, "%s: larger than %d bytes, not a record", name,
			             BENCH_STORE_MAX_BYTES);
			goto out;
		}
	}
	rc = bench_record_parse(sb.buf, sb.len, name, r, err);
	if (rc == 0) {
		char want[sizeof(r->uuid) + 8];

		/* a file named for one GPU that holds another's figures is not believed */
		snprintf(want, sizeof(want), "%s.json", r->uuid);
		if (strcmp(want, file)) {
			rc = err_set(err, E_PARSE, "%s: holds the record of another GPU (%s)", name,
			             r->uuid);
			bench_record_release(r);
		} else {
			str_copy(r->path, sizeof(r->path), name);
		}
	}
out:
	close(fd);
	strbuf_release(&sb);
	return rc;
}

/* The record of uuid in dir: 0, E_NOTFOUND (no directory or no file), or an error. */
static int
read_in(const char *dir, const char *uuid, struct bench_record *r, struct err *err)
{
	char file[128];
	int dfd = open_dir(dir, err), rc;

	if (dfd < 0)
		return dfd;
	snprintf(file, sizeof(file), "%s.json", uuid);
	rc = read_record(dfd, dir, file, r, err);
	close(dfd);
	return rc;
}

static int
write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Write doc as dir/file: a temporary file beside it, fsync, rename, fsync of the directory. */
static int
write_atomic(int dfd, const char *dir, const char *file, const struct strbuf *doc, struct err *err)
{
	static unsigned counter;
	char tmp[200];
	struct stat st;
	int fd = -1, e;

	/* rename() would replace a symlink or a FIFO itself; still, what is there is not ours */
	if (fstatat(dfd, file, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
		return err_set(err, E_PERM, "%s/%s: not a regular file: refused, left as it is",
		               dir, file);
	for (int tries = 0; fd < 0 && tries < 100; tries++) {
		snprintf(tmp, sizeof(tmp), ".%s.%ld.%u.tmp", file, (long)getpid(), counter++);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST) {
			e = errno;
			return err_set(err, errno_status(e), "create %s/%s: %s", dir, tmp,
			               strerror(e));
		}
	}
	if (fd < 0)
		return err_set(err, E_IO, "create a temporary file in %s: every name taken", dir);
	/* 0644 whatever the umask: the point of the system place is that others read it */
	if (write_all(fd, doc->buf, doc->len) < 0 || fchmod(fd, 0644) < 0 || fsync(fd) < 0) {
		e = errno;
		close(fd);
		unlinkat(dfd, tmp, 0);
		return err_set(err, e == ENOSPC ? E_IO : errno_status(e), "write %s/%s: %s", dir,
		               tmp, strerror(e ? e : EIO));
	}
	if (close(fd) < 0) {
		e = errno;
		unlinkat(dfd, tmp, 0);
		return err_set(err, E_IO, "close %s/%s: %s", dir, tmp, strerror(e));
	}
	if (renameat(dfd, tmp, dfd, file) < 0) {
		e = errno;
		unlinkat(dfd, tmp, 0);
		return err_set(err, errno_status(e), "rename %s/%s to %s: %s", dir, tmp, file,
		               strerror(e));
	}
	/* the rename itself reaches the disk with the directory */
	fsync(dfd);
	return 0;
}

/* --- put, get, list ------------------------------------------------------------------ */

int
bench_store_put(const struct bench_store_dirs *d, const struct bench_record *r, char *where,
                size_t size, struct err *err)
{
	struct bench_record merged = { 0 };
	struct strbuf doc = STRBUF_INIT;
	const char *dirs[2];
	char wdir[4096], file[128];
	size_t n = read_dirs(d, dirs);
	double now = (double)time(NULL);
	int dfd = -1, rc;

	if (where && size)
		where[0] = '\0';
	if (!bench_store_uuid_ok(r->uuid))
		return err_set(err, E_USAGE,
		               "bench store: GPU UUID '%.96s' is not only letters, digits and '-'",
		               r->uuid);
	if (!bench_store_write_dir(d, wdir, sizeof(wdir)))
		return err_set(err, E_NOTFOUND,
		               "bench store: no place to write (no HOME, and %s not writable)",
		               BENCH_STORE_SYSTEM_DIR);
	for (size_t i = 0; i < n; i++) {
		struct bench_record old = { 0 };
		struct err e = ERR_INIT;

		rc = read_in(dirs[i], r->uuid, &old, &e);
		if (rc == 0) {
			for (size_t k = 0; k < old.nr_fig; k++)
				set_fig(&merged, &old.fig[k], false);
		} else if (rc != E_NOTFOUND && !strcmp(dirs[i], wdir)) {
			/* the file to be replaced: keep it for a person to look at */
			rc = err_set(err, rc, "%s%s", e.msg,
			             rc == E_PARSE ? "; remove it to store new figures" : "");
			bench_record_release(&old);
			goto out;
		}
		bench_record_release(&old);
	}
	for (size_t k = 0; k < r->nr_fig; k++) {
		struct bench_figure f = r->fig[k];

		if (!(f.time > 0))
			f.time = r->time > 0 ? r->time : now;
		if (!f.driver[0])
			str_copy(f.driver, sizeof(f.driver), r->driver);
		set_fig(&merged, &f, true);
	}
	if (merged.nr_fig > BENCH_STORE_MAX_FIGURES) {
		rc = err_set(err, E_USAGE, "bench store: more than %d figures for %s",
		             BENCH_STORE_MAX_FIGURES, r->uuid);
		goto out;
	}
	memcpy(merged.uuid, r->uuid, sizeof(merged.uuid));
	memcpy(merged.name, r->name, sizeof(merged.name));
	memcpy(merged.pci_bus_id, r->pci_bus_id, sizeof(merged.pci_bus_id));
	memcpy(merged.driver, r->driver, sizeof(merged.driver));
	memcpy(merged.version, r->version, sizeof(merged.version));
	memcpy(merged.host, r->host, sizeof(merged.host));
	merged.uuid[sizeof(merged.uuid) - 1] = merged.name[sizeof(merged.name) - 1] = '\0';
	merged.pci_bus_id[sizeof(merged.pci_bus_id) - 1] = '\0';
	merged.driver[sizeof(merged.driver) - 1] = merged.version[sizeof(merged.version) - 1] =
	        '\0';
	merged.host[sizeof(merged.host) - 1] = '\0';
	if (!merged.version[0])
		str_copy(merged.version, sizeof(merged.version), GPUSCOPE_VERSION);
	if (!merged.host[0] && gethostname(merged.host, sizeof(merged.host) - 1) < 0)
		merged.host[0] = '\0';
	merged.time = r->time > 0 ? r->time : now;

	if ((rc = make_dirs(wdir, err)) < 0)
		goto out;
	if ((dfd = open_dir(wdir, err)) < 0) {
		rc = dfd;
		goto out;
	}
	bench_record_json(&merged, &doc);
	snprintf(file, sizeof(file), "%s.json", merged.uuid);
	if ((rc = write_atomic(dfd, wdir, file, &doc, err)) < 0)
		goto out;
	if (where && size)
		snprintf(where, size, "%s/%s", wdir, file);
out:
	if (dfd >= 0)
		close(dfd);
	strbuf_release(&doc);
	bench_record_release(&merged);
	return rc;
}

int
bench_store_get(const struct bench_store_dirs *d, const char *uuid, struct bench_record *out,
                struct err *err)
{
	const char *dirs[2];
	size_t n = read_dirs(d, dirs);
	struct err first = ERR_INIT;
	bool found = false;

	bench_record_release(out);
	if (!bench_store_uuid_ok(uuid))
		return err_set(err, E_USAGE, "GPU UUID '%.96s' is not only letters, digits and '-'",
		               uuid ? uuid : "");
	for (size_t i = 0; i < n; i++) {
		struct bench_record r = { 0 };
		int rc = read_in(dirs[i], uuid, &r, &first);

		if (rc < 0)
			continue;
		/* the newest wins; on a tie the user's, read first */
		if (!found || r.time > out->time) {
			bench_record_release(out);
			*out = r;
			found = true;
		} else {
			bench_record_release(&r);
		}
	}
	if (found)
		return 0;
	if (first.code)
		return err_set(err, first.code, "%s", first.msg);
	return E_NOTFOUND;
}

static int
by_uuid(const void *a, const void *b)
{
	return strcmp(((const struct bench_record *)a)->uuid,
	              ((const struct bench_record *)b)->uuid);
}

static void
list_dir(const char *dir, struct bench_record **v, size_t *nr, size_t *alloc, struct err *err)
{
	int dfd = open_dir(dir, err), fd2;
	DIR *dh;
	struct dirent *de;
	size_t seen = 0;

	if (dfd < 0)
		return;
	fd2 = dup(dfd);
	dh = fd2 >= 0 ? fdopendir(fd2) : NULL;
	if (!dh) {
		if (fd2 >= 0)
			close(fd2);
		err_set(err, E_IO, "read the directory %s: %s", dir, strerror(errno));
		close(dfd);
		return;
	}
	while ((de = readdir(dh)) && seen < MAX_FILES) {
		size_t len = strlen(de->d_name);
		char uuid[128];
		struct bench_record r = { 0 };
		size_t at;

		if (len <= 5 || strcmp(de->d_name + len - 5, ".json") || len - 5 >= sizeof(uuid))
			continue;
		memcpy(uuid, de->d_name, len - 5);
		uuid[len - 5] = '\0';
		if (!bench_store_uuid_ok(uuid))
			continue;
		seen++;
		if (read_record(dfd, dir, de->d_name, &r, err) < 0)
			continue;
		for (at = 0; at < *nr; at++)
			if (!strcmp((*v)[at].uuid, r.uuid))
				break;
		if (at < *nr) {
			if (r.time > (*v)[at].time) {
				bench_record_release(&(*v)[at]);
				(*v)[at] = r;
			} else {
				bench_record_release(&r);
			}
			continue;
		}
		ALLOC_GROW(*v, *nr + 1, *alloc);
		(*v)[(*nr)++] = r;
	}
	closedir(dh);
	close(dfd);
}

int
bench_store_list(const struct bench_store_dirs *d, struct bench_record **out, size_t *nr,
                 struct err *err)
{
	const char *dirs[2];
	size_t n = read_dirs(d, dirs), alloc = 0;
	struct err first = ERR_INIT;

	*out = NULL;
	*nr = 0;
	for (size_t i = 0; i < n; i++)
		list_dir(dirs[i], out, nr, &alloc, &first);
	if (*nr > 1)
		qsort(*out, *nr, sizeof(**out), by_uuid);
	/* a missing place is no error: the store is simply empty there */
	if (first.code && first.code != E_NOTFOUND)
		err_set(err, first.code, "%s", first.msg);
	return 0;
}

void
bench_store_list_free(struct bench_record *v, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		bench_record_release(&v[i]);
	free(v);
}

void
bench_store_explain(const struct bench_store_dirs *d, struct strbuf *sb)
{
	char w[4096];
	bool have = bench_store_write_dir(d, w, sizeof(w));

	if (d->env[0]) {
		strbuf_addf(sb,
		            "bench results are kept per GPU in %s/UUID.json (%s is set: the only "
		            "place read and written)\n",
		            d->env, BENCH_STORE_ENV);
		return;
	}
	if (have && !strcmp(w, d->system))
		strbuf_addf(
		        sb,
		        "bench results are kept per GPU in %s/UUID.json, readable by every user, "
		        "so that fit and doctor of everyone on this machine use them\n",
		        w);
	else if (have)
		strbuf_addf(sb,
		            "bench results are kept per GPU in %s/UUID.json: %s is not writable by "
		            "this user (run bench once as root to create it, readable by every "
		            "user)\n",
		            w, d->system[0] ? d->system : BENCH_STORE_SYSTEM_DIR);
	else
		strbuf_addf(sb, "bench results cannot be kept: no HOME, and %s is not writable\n",
		            d->system[0] ? d->system : BENCH_STORE_SYSTEM_DIR);
	strbuf_addf(sb, "fit and doctor read %s%s%s, the newest record of a GPU winning\n",
	            d->user[0] ? d->user : "", d->user[0] && d->system[0] ? " then " : "",
	            d->system);
}
