/*
 * top.conf: parse and format the settings of gpuscope top, and read and
 * write the file (atomically: a temporary file in the same directory, then
 * rename(2)). Only top's own settings live here; the interface applies them.
 */
#include "tui/topconf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tui/history.h"
#include "tui/procs.h"
#include "tui/tui.h"
#include "core/err.h"
#include "core/fileio.h"
#include "core/xalloc.h"

/* The values of sort, in the order of enum pcol. */
static const char *const sort_names[] = {
	"gpu", "pid", "type", "user",      "gpu_mem", "gpu_util", "enc_dec",
	"cpu", "rss", "time", "container", "job",     "command",
};
_Static_assert(ARRAY_SIZE(sort_names) == PCOL__COUNT, "a name for every column");

/* The values of chart, in the order of enum hist_metric. */
static const char *const chart_names[] = {
	"util", "mem", "power", "temp", "sm_clock", "mem_clock", "mem_util",
};
_Static_assert(ARRAY_SIZE(chart_names) == HM__COUNT, "a name for every metric");

static const char *const layout_names[] = { "auto", "full", "compact" };
_Static_assert(ARRAY_SIZE(layout_names) == TUI_LAYOUT_COMPACT + 1, "a name for every layout");

void
top_conf_init(struct top_conf *c)
{
	c->sort = PCOL_GPUMEM;
	c->sort_invert = false;
	c->tree = false;
	c->chart = HM_UTIL;
	c->layout = TUI_LAYOUT_AUTO;
	c->interval = 1.0;
	c->show_gpus = c->show_charts = c->show_findings = c->show_processes = true;
	c->detail_all = false;
	strbuf_init(&c->extra, 0);
}

void
top_conf_release(struct top_conf *c)
{
	strbuf_release(&c->extra);
}

void
top_conf_copy(struct top_conf *dst, const struct top_conf *src)
{
	struct strbuf extra = dst->extra;

	*dst = *src;
	dst->extra = extra;
	strbuf_reset(&dst->extra);
	strbuf_addbuf(&dst->extra, &src->extra);
}

static int
name_index(const char *const *names, size_t n, const char *v)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], v))
			return (int)i;
	return -1;
}

static int
parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = { "1", "true", "yes", "on" };
	static const char *const no[] = { "0", "false", "no", "off" };

	if (name_index(yes, ARRAY_SIZE(yes), v) >= 0) {
		*out = true;
		return 0;
	}
	if (name_index(no, ARRAY_SIZE(no), v) >= 0) {
		*out = false;
		return 0;
	}
	return -1;
}

static bool
key_chars_ok(const char *k)
{
	if (!*k)
		return false;
	for (; *k; k++)
		if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') ||
		      (*k >= '0' && *k <= '9') || *k == '_' || *k == '-' || *k == '.'))
			return false;
	return true;
}

/*
 * One key=value. 0 when applied (or kept in extra), else -1 with what is
 * wrong in why.
 */
static int
apply(struct top_conf *c, const char *k, const char *v, struct strbuf *why)
{
	static const struct {
		const char *key;
		size_t off;
	} bools[] = {
		{ "sort_invert", offsetof(struct top_conf, sort_invert) },
		{ "tree", offsetof(struct top_conf, tree) },
		{ "show_gpus", offsetof(struct top_conf, show_gpus) },
		{ "show_charts", offsetof(struct top_conf, show_charts) },
		{ "show_findings", offsetof(struct top_conf, show_findings) },
		{ "show_processes", offsetof(struct top_conf, show_processes) },
		{ "detail_all", offsetof(struct top_conf, detail_all) },
	};
	int i;

	if (!key_chars_ok(k)) {
		strbuf_addf(why, "'%s' is not a key (letters, digits, '_', '-', '.')", k);
		return -1;
	}
	if (!strcmp(k, "sort")) {
		i = name_index(sort_names, ARRAY_SIZE(sort_names), v);
		if (i < 0)
			goto bad_value;
		c->sort = i;
		return 0;
	}
	if (!strcmp(k, "chart")) {
		i = name_index(chart_names, ARRAY_SIZE(chart_names), v);
		if (i < 0)
			goto bad_value;
		c->chart = i;
		return 0;
	}
	if (!strcmp(k, "layout")) {
		i = name_index(layout_names, ARRAY_SIZE(layout_names), v);
		if (i < 0)
			goto bad_value;
		c->layout = i;
		return 0;
	}
	if (!strcmp(k, "interval")) {
		char *end;
		double d;

		errno = 0;
		d = strtod(v, &end);
		if (!*v || *end || errno || !(d >= 0.1 && d <= 86400))
			goto bad_value;
		c->interval = d;
		return 0;
	}
	for (size_t b = 0; b < ARRAY_SIZE(bools); b++) {
		if (strcmp(k, bools[b].key))
			continue;
		if (parse_bool(v, (bool *)((char *)c + bools[b].off)) < 0)
			goto bad_value;
		return 0;
	}
	/* a key of another version: kept as it was */
	strbuf_addf(&c->extra, "%s=%s\n", k, v);
	return 0;

bad_value:
	strbuf_addf(why, "'%s' is no value for '%s'", v, k);
	return -1;
}

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

int
top_conf_parse(struct top_conf *c, const char *text, size_t len, int *bad_line, struct strbuf *bad)
{
	struct strbuf line = STRBUF_INIT, why = STRBUF_INIT;
	size_t pos = 0;
	int nr = 0, nbad = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		char *l, *eq;

		nr++;
		strbuf_reset(&line);
		strbuf_add(&line, text + pos, n);
		pos += n + (nl ? 1 : 0);
		strbuf_reset(&why);
		/* before trim(), which ends the line with NULs of its own */
		if (memchr(line.buf, '\0', n))
			strbuf_addstr(&why, "a NUL byte in the line");
		l = trim(line.buf);
		if (!why.len && (!*l || *l == '#'))
			continue;
		eq = strchr(l, '=');
		if (!why.len && !eq)
			strbuf_addstr(&why, "not key=value");
		if (!why.len) {
			*eq = '\0';
			if (apply(c, trim(l), trim(eq + 1), &why) == 0)
				continue;
		}
		if (!nbad++) {
			if (bad_line)
				*bad_line = nr;
			if (bad) {
				strbuf_reset(bad);
				strbuf_addbuf(bad, &why);
			}
		}
	}
	strbuf_release(&line);
	strbuf_release(&why);
	return nbad;
}

void
top_conf_format(const struct top_conf *c, struct strbuf *out)
{
	unsigned sort = (unsigned)c->sort < PCOL__COUNT ? (unsigned)c->sort : PCOL_GPUMEM;
	unsigned chart = (unsigned)c->chart < HM__COUNT ? (unsigned)c->chart : HM_UTIL;
	unsigned layout = (unsigned)c->layout < ARRAY_SIZE(layout_names) ? (unsigned)c->layout : 0;

	strbuf_addstr(
	        out,
	        "# gpuscope top's settings, written when it quits (F2 in top changes them).\n"
	        "# key=value lines; keys this version does not know are kept, comments are not.\n"
	        "# See 'man gpuscope', section top.\n");
	strbuf_addf(out, "sort=%s\n", sort_names[sort]);
	strbuf_addf(out, "sort_invert=%d\n", c->sort_invert);
	strbuf_addf(out, "tree=%d\n", c->tree);
	strbuf_addf(out, "chart=%s\n", chart_names[chart]);
	strbuf_addf(out, "layout=%s\n", layout_names[layout]);
	strbuf_addf(out, "interval=%g\n", c->interval);
	strbuf_addf(out, "show_gpus=%d\n", c->show_gpus);
	strbuf_addf(out, "show_charts=%d\n", c->show_charts);
	strbuf_addf(out, "show_findings=%d\n", c->show_findings);
	strbuf_addf(out, "show_processes=%d\n", c->show_processes);
	strbuf_addf(out, "detail_all=%d\n", c->detail_all);
	strbuf_addbuf(out, &c->extra);
}

bool
top_conf_equal(const struct top_conf *a, const struct top_conf *b)
{
	struct strbuf sa = STRBUF_INIT, sb = STRBUF_INIT;
	bool eq;

	top_conf_format(a, &sa);
	top_conf_format(b, &sb);
	eq = sa.len == sb.len && !memcmp(sa.buf, sb.buf, sa.len);
	strbuf_release(&sa);
	strbuf_release(&sb);
	return eq;
}

int
top_conf_path(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int n;

	/* the specification: a relative XDG_CONFIG_HOME is invalid and ignored */
	if (xdg && xdg[0] == '/')
		n = snprintf(buf, size, "%s/gpuscope/top.conf", xdg);
	else if (home && home[0])
		n = snprintf(buf, size, "%s/.config/gpuscope/top.conf", home);
	else
		return E_NOTFOUND;
	return n < 0 || (size_t)n >= size ? E_NOTFOUND : 0;
}

int
top_conf_load(struct top_conf *c, const char *path, struct err *err)
{
	struct strbuf text = STRBUF_INIT, why = STRBUF_INIT;
	struct stat st;
	int fd, rc = 0, line = 0;
	ssize_t n;

	fd = file_open(path);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0; /* not there yet: the defaults */
		return err_set(err, errno_status(errno), "cannot read '%s': %s; not read", path,
		               strerror(errno));
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = err_set(err, E_IO, "'%s' is not a regular file; not read", path);
		goto out;
	}
	if (st.st_size > TOP_CONF_MAX) {
		rc = err_set(err, E_IO, "'%s' is bigger than %d KiB; not read", path,
		             TOP_CONF_MAX / 1024);
		goto out;
	}
	strbuf_grow(&text, TOP_CONF_MAX + 1);
	while (text.len <= TOP_CONF_MAX) {
		n = read(fd, text.buf + text.len, TOP_CONF_MAX + 1 - text.len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = err_set(err, errno_status(errno), "cannot read '%s': %s; not read",
			             path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		strbuf_setlen(&text, text.len + (size_t)n);
	}
	if (text.len > TOP_CONF_MAX) {
		rc = err_set(err, E_IO, "'%s' is bigger than %d KiB; not read", path,
		             TOP_CONF_MAX / 1024);
		goto out;
	}
	n = top_conf_parse(c, text.buf, text.len, &line, &why);
	if (n > 0)
		err_set(err, E_PARSE, "'%s' line %d: %s; %s ignored", path, line, why.buf,
		        n == 1 ? "that line" : "it and the other malformed lines");
out:
	close(fd);
	strbuf_release(&text);
	strbuf_release(&why);
	return rc;
}

/* mkdir -p of the directory of path (0700 for what is made). */
static int
make_dirs(const char *path, struct err *err)
{
	char dir[PATH_MAX];
	char *slash;

	if (!str_copy(dir, sizeof(dir), path) || strlen(path) >= sizeof(dir))
		return err_set(err, E_IO, "cannot write '%s': the path is too long", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	for (char *p = dir + 1;; p++) {
		bool last = !*p;

		if (*p != '/' && !last)
			continue;
		*p = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			return err_set(err, errno_status(errno),
			               "cannot make the directory '%s': %s", dir, strerror(errno));
		if (last)
			break;
		*p = '/';
	}
	return 0;
}

int
top_conf_save(const struct top_conf *c, const char *path, struct err *err)
{
	struct strbuf text = STRBUF_INIT;
	char real[PATH_MAX], tmp[PATH_MAX + 32];
	const char *dst = path, *base;
	struct stat st;
	int fd = -1, rc = 0, n;
	size_t done = 0;

	/* a link (a dotfiles repository's): replace what it points to, keep the link */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && realpath(path, real))
		dst = real;
	rc = make_dirs(dst, err);
	if (rc < 0)
		return rc;
	base = strrchr(dst, '/');
	base = base ? base + 1 : dst;
	n = snprintf(tmp, sizeof(tmp), "%.*s.%s.%ld.tmp", (int)(base - dst), dst, base,
	             (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return err_set(err, E_IO, "cannot write '%s': the path is too long", path);
	top_conf_format(c, &text);
	unlink(tmp); /* one a killed run of this pid left */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		rc = err_set(err, errno_status(errno), "cannot write '%s': %s", tmp,
		             strerror(errno));
		goto out;
	}
	while (done < text.len) {
		ssize_t w = write(fd, text.buf + done, text.len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = err_set(err, E_IO, "cannot write '%s': %s", tmp,
			             w < 0 ? strerror(errno) : "nothing written");
			goto out;
		}
		done += (size_t)w;
	}
	if (fsync(fd) < 0) {
		rc = err_set(err, E_IO, "cannot write '%s': %s", tmp, strerror(errno));
		goto out;
	}
	if (close(fd) < 0) {
		fd = -1;
		rc = err_set(err, E_IO, "cannot write '%s': %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, dst) < 0)
		rc = err_set(err, errno_status(errno), "cannot replace '%s': %s", dst,
		             strerror(errno));
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		unlink(tmp);
	strbuf_release(&text);
	return rc;
}
