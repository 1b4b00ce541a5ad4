/*
 * The price table of `gpuscope fit --rent` (data/prices/prices.tsv, built
 * in by prices_data.S, or the user's --prices FILE in the same format):
 * parsed into offers, each tied to one row of the spec table, and the
 * arithmetic of prices per hour, per million tokens and per run.
 *
 * A user's file is checked cell by cell: a malformed one is refused with
 * one line that names the file, line, column and what is wrong, rather
 * than ranking GPUs by a price that was misread.
 */
#include "fit/price.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/fileio.h"
#include "core/specs.h"
#include "core/xalloc.h"

extern const char prices_tsv[], prices_tsv_end[];

/*
 * Sanity bounds of a price per GPU-hour. The dearest GPU of any public
 * price list is under 20 USD per hour (AWS p5 H100 before the June 2025
 * cut: 98.32 USD for 8); 1000 leaves room for any contract and still
 * catches a price typed per month or in cents.
 */
#define PRICE_MAX 1000.0

enum pcol { P_GPU, P_PRICE, P_GPUS, P_PROVIDER, P_KIND, P_DATE, P_SOURCE, P_NOTES, P__COUNT };

static const char *const pcol_name[P__COUNT] = {
	"gpu", "usd_per_gpu_hour", "gpus", "provider", "kind", "date", "source", "notes",
};

/* The most GPUs an instance of one offer has: a rack of NVL72 is 72. */
#define GPUS_MAX 72

/* ---- dates ---- */

static bool
leap(long y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Leap years in [1970, y): those divisible by 4, less by 100, plus by 400. */
static long
leaps_before(long y)
{
	long n = y - 1;

	return (n / 4 - n / 100 + n / 400) - (1969 / 4 - 1969 / 100 + 1969 / 400);
}

long
price_parse_date(const char *s)
{
	static const int mdays[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	long y = 0, m = 0, d = 0, days;

	if (!s || strlen(s) != 10 || s[4] != '-' || s[7] != '-')
		return -1;
	for (int i = 0; i < 10; i++) {
		if (i == 4 || i == 7)
			continue;
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (i < 4)
			y = y * 10 + (s[i] - '0');
		else if (i < 7)
			m = m * 10 + (s[i] - '0');
		else
			d = d * 10 + (s[i] - '0');
	}
	if (y < 1970 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1] + (m == 2 && leap(y) ? 1 : 0))
		return -1;
	days = (y - 1970) * 365 + leaps_before(y);
	for (long i = 1; i < m; i++)
		days += mdays[i - 1] + (i == 2 && leap(y) ? 1 : 0);
	return days + d - 1;
}

static double
days_of(time_t now)
{
	return (double)now / 86400.0;
}

/* ---- parsing ---- */

static bool
cell_unknown(const char *c)
{
	return !c || !*c || !strcmp(c, "?");
}

/* A price: a plain decimal ("2.99", "0.4"), > 0 and <= PRICE_MAX. */
static bool
parse_price(const char *c, double *v)
{
	char *end;
	const char *p = c;
	int dots = 0, digits = 0;

	for (; *p; p++) {
		if (*p == '.')
			dots++;
		else if (*p >= '0' && *p <= '9')
			digits++;
		else
			return false;
	}
	if (!digits || dots > 1)
		return false;
	errno = 0;
	*v = strtod(c, &end);
	return !errno && !*end && isfinite(*v) && *v > 0 && *v <= PRICE_MAX;
}

static int
parse_kind(const char *c)
{
	if (!strcmp(c, "on-demand"))
		return PRICE_ON_DEMAND;
	if (!strcmp(c, "spot"))
		return PRICE_SPOT;
	if (!strcmp(c, "reserved"))
		return PRICE_RESERVED;
	return 0;
}

const char *
price_kind_name(enum price_kind k)
{
	switch (k) {
	case PRICE_ON_DEMAND:
		return "on-demand";
	case PRICE_SPOT:
		return "spot";
	case PRICE_RESERVED:
		return "reserved";
	default:
		return "";
	}
}

struct parse {
	struct price_table *t;
	const char *origin;
	unsigned line;
	size_t nr_header; /* cells of the header line */
	struct err *err;
};

static int __attribute__((format(printf, 4, 5)))
cell_error(struct parse *ps, int col, const char *name, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(ps->err, E_PARSE, "%s: line %u, column %d (%s): %s", ps->origin, ps->line,
	               col + 1, name, msg);
}

/* s, printable and cut to a short quote for a message. */
static const char *
quote(const char *s, char *buf, size_t size)
{
	size_t n = 0, len = strlen(s);

	for (; *s && n + 4 < size; s++)
		buf[n++] = (*s >= 0x20 && *s < 0x7f) || (unsigned char)*s >= 0x80 ? *s : '?';
	if (n < len) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
	return buf;
}

static int
gpu_error(struct parse *ps, int col, const char *name, const struct gpu_spec **close,
          size_t nr_close)
{
	char list[200] = "", q[64];
	size_t at = 0;

	for (size_t i = 0; i < nr_close && at + 4 < sizeof(list); i++) {
		int n = snprintf(list + at, sizeof(list) - at, "%s\"%s\"", i ? ", " : "",
		                 close[i]->name);
		if (n < 0 || (size_t)n >= sizeof(list) - at) {
			list[at] = '\0';
			break;
		}
		at += (size_t)n;
	}
	quote(name, q, sizeof(q));
	if (nr_close)
		return err_set(ps->err, E_PARSE,
		               "%s: line %u, column %d (gpu): \"%s\" is not one GPU of the spec "
		               "table (close: %s)",
		               ps->origin, ps->line, col + 1, q, list);
	return err_set(ps->err, E_PARSE,
	               "%s: line %u, column %d (gpu): \"%s\" is no GPU of the spec table "
	               "('gpuscope specs' lists them)",
	               ps->origin, ps->line, col + 1, q);
}

static int
parse_offer(struct parse *ps, char **cell, size_t nr_cell, const int *map)
{
	struct price_table *t = ps->t;
	struct price_offer o;
	const struct gpu_spec *close[5];
	size_t nr_close = 0;
	const char *v[P__COUNT];
	char q[64];
	int k;

	if (nr_cell > ps->nr_header)
		return err_set(ps->err, E_PARSE,
		               "%s: line %u: %zu cells, more than the header's %zu", ps->origin,
		               ps->line, nr_cell, ps->nr_header);
	for (int i = 0; i < P__COUNT; i++)
		v[i] = map[i] >= 0 && (size_t)map[i] < nr_cell ? cell[map[i]] : NULL;
	memset(&o, 0, sizeof(o));
	o.line = ps->line;

	if (cell_unknown(v[P_GPU]))
		return cell_error(ps, map[P_GPU], "gpu", "no GPU named");
	o.gpu = gpu_spec_find(v[P_GPU], close, ARRAY_SIZE(close), &nr_close);
	if (!o.gpu)
		return gpu_error(ps, map[P_GPU], v[P_GPU], close, nr_close);

	if (cell_unknown(v[P_PRICE]))
		return cell_error(ps, map[P_PRICE], "usd_per_gpu_hour", "no price given");
	if (!parse_price(v[P_PRICE], &o.usd_per_gpu_hour))
		return cell_error(ps, map[P_PRICE], "usd_per_gpu_hour",
		                  "\"%s\" is not a price in USD per GPU-hour (a number above 0 "
		                  "and at most 1000, like 2.49)",
		                  quote(v[P_PRICE], q, sizeof(q)));

	o.gpus = 1;
	if (!cell_unknown(v[P_GPUS])) {
		char *e;
		long n;

		errno = 0;
		n = strtol(v[P_GPUS], &e, 10);
		if (errno || *e || e == v[P_GPUS] || n < 1 || n > GPUS_MAX || *v[P_GPUS] == '+')
			return cell_error(ps, map[P_GPUS], "gpus",
			                  "\"%s\" is not a number of GPUs per instance (1 to 72)",
			                  quote(v[P_GPUS], q, sizeof(q)));
		o.gpus = (unsigned)n;
	}
	o.provider = cell_unknown(v[P_PROVIDER]) ? "" : v[P_PROVIDER];
	if (cell_unknown(v[P_KIND])) {
		if (t->builtin)
			return cell_error(ps, map[P_KIND], "kind", "no kind given");
		o.kind = PRICE_ON_DEMAND;
	} else {
		k = parse_kind(v[P_KIND]);
		if (!k)
			return cell_error(ps, map[P_KIND], "kind",
			                  "\"%s\" is not on-demand, spot or reserved",
			                  quote(v[P_KIND], q, sizeof(q)));
		o.kind = (enum price_kind)k;
	}

	if (cell_unknown(v[P_DATE])) {
		if (t->builtin)
			return cell_error(ps, map[P_DATE], "date", "no date given");
		o.date = -1;
		o.date_s = "";
	} else {
		o.date = price_parse_date(v[P_DATE]);
		if (o.date < 0)
			return cell_error(ps, map[P_DATE], "date",
			                  "\"%s\" is not a date YYYY-MM-DD (from 1970)",
			                  quote(v[P_DATE], q, sizeof(q)));
		o.date_s = v[P_DATE];
	}

	o.source = cell_unknown(v[P_SOURCE]) ? "" : v[P_SOURCE];
	if (t->builtin && strncmp(o.source, "https://", 8) && strncmp(o.source, "http://", 7))
		return cell_error(ps, map[P_SOURCE], "source", "no URL of the price's source");
	o.notes = cell_unknown(v[P_NOTES]) ? "" : v[P_NOTES];

	ALLOC_GROW(t->offer, t->nr + 1, t->alloc_);
	t->offer[t->nr++] = o;
	if (o.date >= 0) {
		if (t->newest < 0 || o.date > t->newest)
			t->newest = o.date;
		if (t->oldest < 0 || o.date < t->oldest)
			t->oldest = o.date;
	}
	return 0;
}

/* The header line: which cell is which column; unknown names are allowed (and ignored). */
static int
parse_header(struct parse *ps, char **cell, size_t n, int *map)
{
	ps->nr_header = n;
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < P__COUNT; c++)
			if (!strcmp(cell[i], pcol_name[c])) {
				if (map[c] >= 0)
					return err_set(
					        ps->err, E_PARSE,
					        "%s: line %u, column %zu: a second \"%s\" column",
					        ps->origin, ps->line, i + 1, pcol_name[c]);
				map[c] = (int)i;
			}
	for (int c = 0; c < P__COUNT; c++) {
		bool need = c == P_GPU || c == P_PRICE ||
		            (ps->t->builtin && (c == P_KIND || c == P_DATE || c == P_SOURCE));

		if (need && map[c] < 0)
			return err_set(
			        ps->err, E_PARSE,
			        "%s: line %u: the header names no \"%s\" column (columns: gpu, "
			        "usd_per_gpu_hour, gpus, provider, kind, date, source, notes)",
			        ps->origin, ps->line, pcol_name[c]);
	}
	return 0;
}

#define CELLS_MAX 32

/* The built-in table must give every cell; a user's file may leave kind, date and source out. */
static int
parse_text(struct price_table *t, const char *text, size_t len, const char *origin, bool builtin,
           struct err *err)
{
	struct parse ps = { t, origin ? origin : "prices", 0, 0, err };
	int map[P__COUNT];
	bool have_header = false;
	char *p, *end;
	int ret = 0;

	memset(t, 0, sizeof(*t));
	t->builtin = builtin;
	t->newest = t->oldest = -1;
	t->origin_ = xstrdup(ps.origin);
	t->origin = ps.origin = t->origin_;
	if (memchr(text, '\0', len)) {
		ret = err_set(err, E_PARSE, "%s: a NUL byte: not a text file", ps.origin);
		goto fail;
	}
	t->text_ = xmalloc(len + 1);
	memcpy(t->text_, text, len);
	t->text_[len] = '\0';
	p = t->text_;
	end = p + len;
	if (len >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		p += 3; /* a UTF-8 byte order mark, as some editors write */
	for (int i = 0; i < P__COUNT; i++)
		map[i] = -1;

	while (p < end) {
		char *eol = memchr(p, '\n', (size_t)(end - p)), *cell[CELLS_MAX];
		size_t n = 0;

		ps.line++;
		if (!eol)
			eol = end;
		*eol = '\0';
		if (eol > p && eol[-1] == '\r')
			eol[-1] = '\0';
		if (*p && *p != '#' && strspn(p, " \t") != strlen(p)) {
			for (char *q = p; q; n++) {
				char *tab = strchr(q, '\t');

				if (n == CELLS_MAX) {
					ret = err_set(
					        err, E_PARSE,
					        "%s: line %u: more than %d tab-separated cells",
					        ps.origin, ps.line, CELLS_MAX);
					goto fail;
				}
				cell[n] = q;
				if (tab)
					*tab++ = '\0';
				q = tab;
			}
			if (!have_header) {
				ret = parse_header(&ps, cell, n, map);
				have_header = true;
			} else {
				ret = parse_offer(&ps, cell, n, map);
			}
			if (ret < 0)
				goto fail;
		}
		p = eol + 1;
	}
	if (!t->nr) {
		ret = err_set(err, E_PARSE, "%s: no price in it (%s)", ps.origin,
		              have_header ? "a header and no rows" : "no header line");
		goto fail;
	}
	return 0;
fail:
	price_free(t);
	return ret;
}

int
price_parse(struct price_table *t, const char *text, size_t len, const char *origin,
            struct err *err)
{
	return parse_text(t, text, len, origin, false, err);
}

int
price_load_builtin(struct price_table *t, struct err *err)
{
	return parse_text(t, prices_tsv, (size_t)(prices_tsv_end - prices_tsv), "built-in table",
	                  true, err);
}

int
price_load_file(struct price_table *t, const char *path, struct err *err)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd, ret;

	memset(t, 0, sizeof(*t));
	if (!path || !*path)
		return err_set(err, E_USAGE, "no prices file given");
	fd = file_open(path);
	if (fd < 0) {
		int e = errno;

		return err_set(err, errno_status(e), "%s: %s", path,
		               e == ELOOP    ? "a loop of symbolic links"
		               : e == ENOENT ? "no such file"
		               : e == EACCES ? "permission denied"
		                             : strerror(e));
	}
	if (fstat(fd, &st) < 0) {
		ret = err_set(err, E_IO, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = err_set(err, E_USAGE, "%s: not a regular file (%s)", path,
		              S_ISDIR(st.st_mode)                          ? "a directory"
		              : S_ISFIFO(st.st_mode)                       ? "a FIFO"
		              : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
		                                                           : "a socket or other");
		goto out;
	}
	if (st.st_size > (off_t)PRICE_FILE_MAX) {
		ret = err_set(err, E_USAGE, "%s: %lld bytes, more than a prices file may have (%u)",
		              path, (long long)st.st_size, PRICE_FILE_MAX);
		goto out;
	}
	/* read to the cap and one byte more: a file that grows while read is still caught */
	buf = xmalloc(PRICE_FILE_MAX + 1);
	for (;;) {
		ssize_t n = read(fd, buf + len, PRICE_FILE_MAX + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = err_set(err, E_IO, "%s: %s", path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > PRICE_FILE_MAX) {
			ret = err_set(err, E_USAGE,
			              "%s: more than a prices file may have (%u bytes)", path,
			              PRICE_FILE_MAX);
			goto out;
		}
	}
	ret = price_parse(t, buf, len, path, err);
out:
	free(buf);
	close(fd);
	return ret;
}

void
price_free(struct price_table *t)
{
	if (!t)
		return;
	free(t->offer);
	free(t->text_);
	free(t->origin_);
	memset(t, 0, sizeof(*t));
	t->newest = t->oldest = -1;
}

/* ---- look-ups and arithmetic ---- */

const struct price_offer *
price_cheapest(const struct price_table *t, const struct gpu_spec *g, double k, unsigned mask)
{
	const struct price_offer *best = NULL;
	double best_ph = NAN;

	if (!t || !g || !isfinite(k) || k < 1)
		return NULL;
	for (size_t i = 0; i < t->nr; i++) {
		const struct price_offer *o = &t->offer[i];
		double ph;

		if (o->gpu != g || !(o->kind & mask))
			continue;
		ph = price_per_hour(o, k);
		if (!best || ph < best_ph || (ph == best_ph && o->date > best->date)) {
			best = o;
			best_ph = ph;
		}
	}
	return best;
}

unsigned
price_default_kinds(const struct price_table *t)
{
	return t && t->builtin ? PRICE_ON_DEMAND : PRICE_ANY;
}

const char *
price_newest_s(const struct price_table *t)
{
	if (!t || t->newest < 0)
		return "";
	for (size_t i = 0; i < t->nr; i++)
		if (t->offer[i].date == t->newest)
			return t->offer[i].date_s;
	return "";
}

double
price_age_days(const struct price_table *t, time_t now)
{
	if (!t || t->newest < 0)
		return NAN;
	return days_of(now) - (double)t->newest;
}

double
price_offer_age_days(const struct price_offer *o, time_t now)
{
	if (!o || o->date < 0)
		return NAN;
	return days_of(now) - (double)o->date;
}

bool
price_is_old(const struct price_table *t, time_t now)
{
	return price_age_days(t, now) > PRICE_OLD_DAYS;
}

double
price_per_hour(const struct price_offer *o, double k)
{
	double paid;

	if (!o || !isfinite(k) || k < 1 || k > 1e6)
		return NAN;
	paid = ceil(k / o->gpus) * o->gpus;
	return o->usd_per_gpu_hour * paid;
}

static bool
positive(double x)
{
	return isfinite(x) && x > 0;
}

double
price_per_mtok(double usd_per_hour, double tokens_per_s)
{
	if (!positive(usd_per_hour) || !positive(tokens_per_s))
		return NAN;
	return usd_per_hour / (tokens_per_s * 3600.0) * 1e6;
}

double
price_run_hours(double tokens, double tokens_per_s)
{
	if (!positive(tokens) || !positive(tokens_per_s))
		return NAN;
	return tokens / tokens_per_s / 3600.0;
}

double
price_per_run(double usd_per_hour, double tokens, double tokens_per_s)
{
	double h = price_run_hours(tokens, tokens_per_s);

	if (!positive(usd_per_hour) || isnan(h))
		return NAN;
	return usd_per_hour * h;
}
