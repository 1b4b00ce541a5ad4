/*
 * The messages around the kernel lines (log.<area>.*): what nvidia-smi, the container
 * toolkit, installers, CUDA, NCCL, the frameworks, ROCm, Level Zero, OpenCL and the
 * drivers print when a GPU job fails, one table per family in data/messages/<family>.tsv
 * (msg_data.S holds them all, concatenated by the Makefile, each after a "#file NAME"
 * line). Each row is a message's literal text with `*` and `{name}` wildcards, what it
 * means, its causes ranked, what to do, the set-up check that understands it, and the ids
 * it follows from.
 *
 * Matching is linear in the log: each row is indexed by an 8-byte run of its literal text
 * (its anchor, chosen among its runs as the one fewest rows share); a line is scanned once,
 * skipping ahead as Wu-Manber does (a 2-byte block that ends no anchor lets the 8-byte
 * window move past it), each window that may hold an anchor looked up in that index, and
 * only the rows whose anchor is there are matched against the line in full.
 */
#include "doctor/klog.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "core/xalloc.h"
#include "doctor/doctor.h"

extern const char doctor_msg_tsv[], doctor_msg_tsv_end[];

enum {
	NR_CELLS = 10,
	ANCHOR = 8,         /* bytes of a row's anchor */
	MIN_LITERAL = 12,   /* literal bytes a pattern needs */
	MAX_MSG = 8192,     /* bytes of a line the matcher reads */
	MAX_CAPS = 8,       /* captures a pattern may have */
	MAX_CAP_SHOWN = 160 /* bytes of a captured value shown */
};

enum tok_kind { TOK_LIT, TOK_STAR, TOK_CAP };

struct tok {
	enum tok_kind kind;
	const char *s; /* TOK_LIT: the text, unescaped; TOK_CAP: the name */
	size_t len;
};

struct row {
	struct klog_msg_row pub; /* first: a klog_msg_row * is a row * */
	size_t nr_cells;
	enum dr_severity sev;
	struct tok *tok;
	size_t nr_tok;
	size_t literal;  /* literal bytes of the pattern */
	const char *bad; /* why the pattern cannot be used, or NULL */
	uint64_t anchor; /* valid when !bad */
	size_t group;    /* index into groups: the rows of one id */
};

struct group {
	const char *id;
	size_t *rows;
	size_t nr_rows, alloc_rows;
};

struct slot {
	uint64_t v;
	size_t at, n; /* anchors[at..at+n) have v; n 0: empty */
};

static struct {
	char *text; /* the tables, cells NUL-terminated in place */
	struct row *rows;
	size_t nr_rows;
	struct group *groups;
	size_t nr_groups;
	size_t *anchors; /* row indices, sorted by anchor */
	size_t nr_anchors;
	struct slot *slots;
	size_t nr_slots; /* a power of two */
	/* Wu-Manber: for each 2-byte block, how far the 8-byte window may move on when the
	   block ends it (0: an anchor may end here; look it up) */
	unsigned char shift[65536];
	struct dr_explain *catalog;
	size_t nr_catalog;
} T;

static pthread_once_t parse_once = PTHREAD_ONCE_INIT;
static pthread_once_t catalog_once = PTHREAD_ONCE_INIT;

/* --- the tables ---------------------------------------------------------------------- */

static enum dr_severity
severity_of(const char *s)
{
	if (!strcmp(s, "error"))
		return DR_ERROR;
	if (!strcmp(s, "warning"))
		return DR_WARNING;
	if (!strcmp(s, "info"))
		return DR_INFO;
	return DR_OK; /* not valid: klog_msg_check says so */
}

static void
add_tok(struct row *r, size_t *alloc, enum tok_kind kind, const char *s, size_t len)
{
	ALLOC_GROW(r->tok, r->nr_tok + 1, *alloc);
	r->tok[r->nr_tok++] = (struct tok){ kind, s, len };
}

/* Ends the literal run lit[0..*n) as a token, if any. */
static void
end_lit(struct row *r, size_t *alloc, char *lit, size_t *n)
{
	if (!*n)
		return;
	add_tok(r, alloc, TOK_LIT, xstrndup(lit, *n), *n);
	r->literal += *n;
	*n = 0;
}

/* A wildcard token after the previous one: two in a row cannot be told apart. */
static bool
add_wild(struct row *r, size_t *alloc, enum tok_kind kind, const char *s, size_t len)
{
	if (r->nr_tok && r->tok[r->nr_tok - 1].kind != TOK_LIT) {
		r->bad = "two wildcards in a row ('*' or '{name}' must be followed by text)";
		return false;
	}
	add_tok(r, alloc, kind, s, len);
	return true;
}

/* The pattern into tokens: literal runs (unescaped), `*` and `{name}`. */
static void
compile(struct row *r)
{
	const char *p = r->pub.pattern;
	char *lit = xmalloc(strlen(p) + 1);
	size_t n = 0, alloc = 0, caps = 0;

	while (*p && !r->bad) {
		if (*p == '\\') {
			if (p[1] != '*' && p[1] != '{' && p[1] != '\\') {
				r->bad = "'\\' must be followed by '*', '{' or '\\'";
				break;
			}
			lit[n++] = p[1];
			p += 2;
		} else if (*p == '*') {
			end_lit(r, &alloc, lit, &n);
			add_wild(r, &alloc, TOK_STAR, NULL, 0);
			p++;
		} else if (*p == '{') {
			const char *close = strchr(p, '}');

			if (!close || close == p + 1) {
				r->bad = "'{' without a name and '}'";
				break;
			}
			if (++caps > MAX_CAPS) {
				r->bad = "more than 8 captures";
				break;
			}
			end_lit(r, &alloc, lit, &n);
			add_wild(r, &alloc, TOK_CAP, p + 1, (size_t)(close - p - 1));
			p = close + 1;
		} else {
			lit[n++] = *p++;
		}
	}
	end_lit(r, &alloc, lit, &n);
	free(lit);
	if (!r->bad && r->literal < MIN_LITERAL)
		r->bad = "fewer than 12 literal characters";
}

static uint64_t
load8(const char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static size_t
hash8(uint64_t v, size_t nr_slots)
{
	return (size_t)((v * 0x9E3779B97F4A7C15ull) >> 17) & (nr_slots - 1);
}

static struct slot *
slot_of(uint64_t v)
{
	size_t j = hash8(v, T.nr_slots);

	while (T.slots[j].n && T.slots[j].v != v)
		j = (j + 1) & (T.nr_slots - 1);
	return &T.slots[j];
}

/* How many rows' anchors are v so far (while choosing them). */
static size_t
anchor_uses(uint64_t v)
{
	return slot_of(v)->n;
}

/* The 8-byte run of r's literal text that the fewest rows chosen so far share. */
static bool
choose_anchor(struct row *r)
{
	size_t best = SIZE_MAX;

	for (size_t t = 0; t < r->nr_tok; t++) {
		const struct tok *k = &r->tok[t];

		for (size_t i = 0; k->kind == TOK_LIT && i + ANCHOR <= k->len; i++) {
			uint64_t v = load8(k->s + i);
			size_t uses = anchor_uses(v);

			if (uses < best) {
				best = uses;
				r->anchor = v;
			}
			if (!uses)
				return true;
		}
	}
	return best != SIZE_MAX;
}

static unsigned
block_at(const char *p)
{
	return (unsigned)(unsigned char)p[0] << 8 | (unsigned char)p[1];
}

/* The shift table of the anchors (Wu-Manber, blocks of 2 bytes). */
static void
build_shift(void)
{
	memset(T.shift, ANCHOR - 1, sizeof(T.shift));
	for (size_t i = 0; i < T.nr_rows; i++) {
		char a[ANCHOR];

		if (T.rows[i].bad)
			continue;
		memcpy(a, &T.rows[i].anchor, ANCHOR);
		for (size_t j = 0; j + 2 <= ANCHOR; j++) {
			unsigned b = block_at(a + j);
			unsigned char sh = (unsigned char)(ANCHOR - 2 - j);

			if (sh < T.shift[b])
				T.shift[b] = sh;
		}
	}
}

static int
by_anchor(const void *a, const void *b)
{
	uint64_t x = T.rows[*(const size_t *)a].anchor, y = T.rows[*(const size_t *)b].anchor;

	if (x != y)
		return x < y ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static void
build_index(void)
{
	T.nr_slots = 64;
	while (T.nr_slots < 4 * T.nr_rows)
		T.nr_slots *= 2;
	T.slots = xcalloc(T.nr_slots, sizeof(*T.slots));
	T.anchors = xcalloc(T.nr_rows ? T.nr_rows : 1, sizeof(*T.anchors));
	/* choose: each row's anchor counted as it is chosen, so later rows avoid it */
	for (size_t i = 0; i < T.nr_rows; i++) {
		struct row *r = &T.rows[i];

		if (r->bad)
			continue;
		if (!choose_anchor(r)) {
			r->bad = "no run of 8 literal characters (the anchor it is found by)";
			continue;
		}
		struct slot *s = slot_of(r->anchor);

		s->v = r->anchor;
		s->n++;
		T.anchors[T.nr_anchors++] = i;
	}
	qsort(T.anchors, T.nr_anchors, sizeof(*T.anchors), by_anchor);
	build_shift();
	for (size_t i = 0; i < T.nr_anchors; i++) {
		struct slot *s = slot_of(T.rows[T.anchors[i]].anchor);

		if (i == 0 || T.rows[T.anchors[i - 1]].anchor != s->v)
			s->at = i;
	}
}

static size_t
group_of(const char *id)
{
	for (size_t g = 0; g < T.nr_groups; g++)
		if (!strcmp(T.groups[g].id, id))
			return g;
	T.groups = xrealloc(T.groups, (T.nr_groups + 1) * sizeof(*T.groups));
	T.groups[T.nr_groups] = (struct group){ id, NULL, 0, 0 };
	return T.nr_groups++;
}

/* One line of a table (NUL-terminated, in place) into a row. */
static void
add_row(char *p, const char *file, size_t line, size_t *alloc)
{
	static char empty[1]; /* a missing cell */
	char *cell[NR_CELLS] = { 0 };
	size_t n = 0;
	struct row *r;

	for (char *c = p; c; n++) {
		char *tab = strchr(c, '\t');

		if (tab)
			*tab = '\0';
		if (n < NR_CELLS)
			cell[n] = c;
		c = tab ? tab + 1 : NULL;
	}
	ALLOC_GROW(T.rows, T.nr_rows + 1, *alloc);
	r = &T.rows[T.nr_rows++];
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < NR_CELLS; i++)
		if (!cell[i])
			cell[i] = empty;
	r->pub = (struct klog_msg_row){ cell[0], cell[1], cell[2], cell[3], cell[4], cell[5],
		                        cell[6], cell[7], cell[8], cell[9], file,    line };
	r->nr_cells = n;
	r->sev = severity_of(cell[1]);
	if (n != NR_CELLS)
		r->bad = "not 10 cells";
	else
		compile(r);
}

static void
parse(void)
{
	size_t len = (size_t)(doctor_msg_tsv_end - doctor_msg_tsv), alloc = 0, line = 0;
	const char *file = "data/messages";
	char *p, *end;

	T.text = xstrndup(doctor_msg_tsv, len);
	p = T.text;
	end = T.text + len;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl)
			nl = end;
		*nl = '\0';
		if (nl > p && nl[-1] == '\r')
			nl[-1] = '\0';
		line++;
		if (!strncmp(p, "#file ", 6)) {
			file = p + 6;
			line = 0;
		} else if (*p && *p != '#' && strncmp(p, "id\t", 3)) {
			add_row(p, file, line, &alloc);
		}
		p = nl + 1;
	}
	for (size_t i = 0; i < T.nr_rows; i++) {
		struct group *g;

		T.rows[i].group = group_of(T.rows[i].pub.id);
		g = &T.groups[T.rows[i].group];
		ALLOC_GROW(g->rows, g->nr_rows + 1, g->alloc_rows);
		g->rows[g->nr_rows++] = i;
	}
	build_index();
}

const struct klog_msg_row *
klog_msg_row(size_t i)
{
	pthread_once(&parse_once, parse);
	return i < T.nr_rows ? &T.rows[i].pub : NULL;
}

/* --- matching ------------------------------------------------------------------------ */

struct cap {
	const char *s;
	size_t len;
};

/* The next occurrence of k's text in [p, end), or NULL. */
static const char *
find_lit(const struct tok *k, const char *p, const char *end)
{
	if (p > end)
		return NULL;
	return memmem(p, (size_t)(end - p), k->s, k->len);
}

/*
 * Tokens t.. of r at p (the text before p is matched). A wildcard takes the shortest run
 * up to an occurrence of the text after it that lets the rest match; a capture at least
 * one byte. *budget bounds the tries on a line that repeats a pattern's texts.
 */
static bool
match_at(const struct row *r, size_t t, const char *p, const char *end, struct cap *caps, size_t nc,
         unsigned *budget)
{
	const struct tok *k;

	if (t == r->nr_tok)
		return true;
	if (!*budget || !--*budget)
		return false;
	k = &r->tok[t];
	if (k->kind == TOK_LIT)
		return (size_t)(end - p) >= k->len && !memcmp(p, k->s, k->len) &&
		       match_at(r, t + 1, p + k->len, end, caps, nc, budget);
	if (t + 1 == r->nr_tok) { /* last: to the end of the line */
		if (k->kind == TOK_CAP) {
			if (p == end)
				return false;
			caps[nc] = (struct cap){ p, (size_t)(end - p) };
		}
		return true;
	}
	for (const char *q = find_lit(&r->tok[t + 1], p + (k->kind == TOK_CAP), end); q;
	     q = find_lit(&r->tok[t + 1], q + 1, end)) {
		if (k->kind == TOK_CAP)
			caps[nc] = (struct cap){ p, (size_t)(q - p) };
		if (match_at(r, t + 2, q + r->tok[t + 1].len, end, caps, nc + (k->kind == TOK_CAP),
		             budget))
			return true;
		if (!*budget)
			return false;
	}
	return false;
}

/* Does r match msg[0..len) anywhere (a leading wildcard: from the start)? */
static bool
row_matches(const struct row *r, const char *msg, size_t len, struct cap *caps)
{
	const char *end = msg + len;
	unsigned budget = 4096;

	if (r->bad || !r->nr_tok)
		return false;
	if (r->tok[0].kind != TOK_LIT)
		return match_at(r, 0, msg, end, caps, 0, &budget);
	for (const char *q = find_lit(&r->tok[0], msg, end); q && budget;
	     q = find_lit(&r->tok[0], q + 1, end))
		if (match_at(r, 1, q + r->tok[0].len, end, caps, 0, &budget))
			return true;
	return false;
}

/* Is a better than b (more literal text, or as much and earlier)? */
static bool
better(const struct row *a, const struct row *b)
{
	return !b || a->literal > b->literal || (a->literal == b->literal && a < b);
}

/* Try r on the line, keeping it in *best (its captures in caps) if it matches and is better. */
static void
consider(const struct row *r, const char *msg, size_t len, const struct row **best,
         struct cap *caps)
{
	struct cap c[MAX_CAPS];

	if (!better(r, *best) || !row_matches(r, msg, len, c))
		return;
	*best = r;
	memcpy(caps, c, sizeof(c));
}

static const struct row *
match_naive(const char *msg, size_t len, struct cap *caps)
{
	const struct row *best = NULL;

	for (size_t i = 0; i < T.nr_rows; i++)
		consider(&T.rows[i], msg, len, &best, caps);
	return best;
}

static const struct row *
match_indexed(const char *msg, size_t len, struct cap *caps)
{
	const struct row *best = NULL;
	uint64_t seen[16]; /* anchors already tried on this line */
	size_t nr_seen = 0;

	for (size_t i = 0; i + ANCHOR <= len; i++) {
		unsigned char sh = T.shift[block_at(msg + i + ANCHOR - 2)];
		uint64_t v;
		const struct slot *s;
		bool again = false;

		if (sh) {
			i += sh - 1u; /* the window cannot hold an anchor before i + sh */
			continue;
		}
		v = load8(msg + i);
		s = slot_of(v);
		if (!s->n)
			continue;
		for (size_t j = 0; j < nr_seen && !again; j++)
			again = seen[j] == v;
		if (again)
			continue;
		if (nr_seen < sizeof(seen) / sizeof(seen[0]))
			seen[nr_seen++] = v;
		for (size_t j = s->at; j < s->at + s->n; j++)
			consider(&T.rows[T.anchors[j]], msg, len, &best, caps);
	}
	return best;
}

static const struct row *
match(const char *msg, size_t len, bool naive, struct cap *caps)
{
	pthread_once(&parse_once, parse);
	if (len > MAX_MSG)
		len = MAX_MSG;
	if (!T.nr_anchors || len < ANCHOR)
		return NULL;
	return naive ? match_naive(msg, len, caps) : match_indexed(msg, len, caps);
}

/* The captures of r as "name=value" lines (values trimmed and cut). */
static void
caps_text(struct strbuf *sb, const struct row *r, const struct cap *caps)
{
	size_t nc = 0;

	for (size_t t = 0; t < r->nr_tok; t++) {
		const struct tok *k = &r->tok[t];
		const struct cap *c;
		size_t a = 0, b;

		if (k->kind != TOK_CAP)
			continue;
		c = &caps[nc++];
		b = c->len;
		while (a < b && (c->s[a] == ' ' || c->s[a] == '\t'))
			a++;
		while (b > a && (c->s[b - 1] == ' ' || c->s[b - 1] == '\t'))
			b--;
		if (b - a > MAX_CAP_SHOWN)
			b = a + MAX_CAP_SHOWN;
		strbuf_addf(sb, "%.*s=%.*s\n", (int)k->len, k->s, (int)(b - a), c->s + a);
	}
}

const struct klog_msg_row *
klog_msg_match(const char *msg, size_t len, bool naive, struct strbuf *caps)
{
	struct cap c[MAX_CAPS];
	const struct row *r = match(msg, len, naive, c);

	if (r && caps)
		caps_text(caps, r, c);
	return r ? &r->pub : NULL;
}

bool
klog_msg_line(const struct klog_line *l, struct klog_events *ev)
{
	struct cap c[MAX_CAPS];
	const struct row *r = match(l->msg, l->len, false, c);
	struct klog_event *e;

	if (!r)
		return false;
	e = klog_event_add(ev, r, l, "%s", r->pub.id);
	if (e->count == 1) {
		struct strbuf sb = STRBUF_INIT;

		caps_text(&sb, r, c);
		e->detail = sb.len ? strbuf_detach(&sb, NULL) : NULL;
		strbuf_release(&sb);
	}
	return true;
}

/* --- the report ---------------------------------------------------------------------- */

/* One id's lines in a log: its rows' events together. */
struct hit {
	size_t group;
	const struct klog_event *first, *last; /* the first event, the one of the latest line */
	unsigned long count;
	enum dr_severity sev; /* the worst of its rows' */
};

static const struct row *
row_of(const struct klog_event *e)
{
	const struct row *r = e->kind;

	return r >= T.rows && r < T.rows + T.nr_rows ? r : NULL;
}

/* Does the comma-separated list have id? ("-" is empty) */
static bool
list_has(const char *list, const char *id)
{
	size_t n = strlen(id);

	for (const char *p = list; *p;) {
		size_t len;

		while (*p == ' ' || *p == ',')
			p++;
		len = strcspn(p, ", ");
		if (len == n && !memcmp(p, id, n))
			return true;
		p += len;
	}
	return false;
}

/* Does g's rows' "after" lists in this log name id? */
static bool
group_after_has(const struct klog_events *ev, size_t g, const char *id)
{
	for (size_t i = 0; i < ev->nr; i++) {
		const struct row *row = row_of(&ev->v[i]);

		if (row && row->group == g && list_has(row->pub.after, id))
			return true;
	}
	return false;
}

/* Is the token tok[0..len) the string s? */
static bool
token_is(const char *tok, size_t len, const char *s)
{
	return strlen(s) == len && !memcmp(tok, s, len);
}

/*
 * The distinct ids of r's first nr findings (the kernel decoders' and any set-up check's),
 * into a new array *out; returns how many. A storm of one id costs one comparison a line.
 */
static size_t
report_ids(const struct dr_report *r, size_t nr, const char ***out)
{
	const char **v = NULL, *last = NULL;
	size_t n = 0, alloc = 0;

	for (size_t k = 0; k < nr; k++) {
		const char *id = r->f[k].id;
		bool seen = id == last;

		for (size_t j = 0; j < n && !seen; j++)
			seen = v[j] == id || !strcmp(v[j], id);
		last = id;
		if (!seen) {
			ALLOC_GROW(v, n + 1, alloc);
			v[n++] = id;
		}
	}
	*out = v;
	return n;
}

/*
 * The id h follows from: the first of its rows' "after" ids (in the order they list them)
 * that the report already has (ids: a kernel decoder's finding), or that another id of
 * this log has, unless that one follows from h and came later (then h is the cause); NULL
 * when none.
 */
static const char *
cause_of(const struct klog_events *ev, const struct hit *hits, const size_t *hit_of,
         const struct hit *h, const char *const *ids, size_t nr_ids)
{
	const char *id = T.groups[h->group].id;

	for (size_t i = 0; i < ev->nr; i++) {
		const struct row *row = row_of(&ev->v[i]);

		if (!row || row->group != h->group)
			continue;
		for (const char *p = row->pub.after; *p;) {
			size_t len;

			while (*p == ' ' || *p == ',')
				p++;
			len = strcspn(p, ", ");
			for (size_t j = 0; len && j < nr_ids; j++)
				if (token_is(p, len, ids[j]))
					return ids[j];
			for (size_t g = 0; len && g < T.nr_groups; g++) {
				const struct hit *o;

				if (!token_is(p, len, T.groups[g].id))
					continue;
				o = hit_of[g] == SIZE_MAX || g == h->group ? NULL
				                                           : &hits[hit_of[g]];
				if (o && !(group_after_has(ev, g, id) &&
				           o->first->order > h->first->order))
					return T.groups[g].id;
				break;
			}
			p += len;
		}
	}
	return NULL;
}

/* text with each "{name}" replaced by its value in detail ("name=value" lines), or by
 * missing (when NULL: left as it is). */
static void
fill(struct strbuf *sb, const char *text, const char *detail, const char *missing)
{
	for (const char *p = text; *p;) {
		const char *open = strchr(p, '{'), *close = open ? strchr(open, '}') : NULL;
		const char *v = NULL;
		size_t n;

		if (!open || !close) {
			strbuf_addstr(sb, p);
			return;
		}
		strbuf_add(sb, p, (size_t)(open - p));
		n = (size_t)(close - open - 1);
		for (const char *d = detail; d && *d; d = strchr(d, '\n') + 1) {
			if (!strncmp(d, open + 1, n) && d[n] == '=') {
				v = d + n + 1;
				break;
			}
		}
		if (v)
			strbuf_add(sb, v, strcspn(v, "\n"));
		else if (missing)
			strbuf_addstr(sb, missing);
		else
			strbuf_add(sb, open, (size_t)(close - open + 1));
		p = close + 1;
	}
}

/*
 * The next " | " of a list in p, or NULL: not one inside a quoted command ('dmesg | grep
 * xid'). A quote opens after a space, '(' or the start and closes before a space, a
 * punctuation mark or the end, so that an apostrophe ("driver's") is not one.
 */
static const char *
next_bar(const char *p)
{
	bool quoted = false;

	for (const char *q = p; *q; q++) {
		if (*q == '\'') {
			char before = q > p ? q[-1] : ' ', after = q[1];

			if (!quoted && (before == ' ' || before == '(' || before == '"'))
				quoted = true;
			else if (quoted && (!after || strchr(" .,;:)\"", after)))
				quoted = false;
		} else if (!quoted && !strncmp(q, " | ", 3)) {
			return q;
		}
	}
	return NULL;
}

/* "a | b | c" as "1. a; 2. b; 3. c", its "{name}"s filled. */
static void
add_list(struct strbuf *sb, const char *list, const char *detail)
{
	struct strbuf filled = STRBUF_INIT;
	int n = 1;

	fill(&filled, list, detail, "?");
	if (!next_bar(filled.buf)) {
		strbuf_addbuf(sb, &filled);
		strbuf_release(&filled);
		return;
	}
	for (const char *p = filled.buf; *p; n++) {
		const char *bar = next_bar(p);
		size_t len = bar ? (size_t)(bar - p) : strlen(p);

		strbuf_addf(sb, "%s%d. %.*s", n > 1 ? "; " : "", n, (int)len, p);
		p += len + (bar ? 3 : 0);
	}
	strbuf_release(&filled);
}

/* Ends what sb holds with a full stop. */
static void
end_sentence(struct strbuf *sb)
{
	strbuf_rtrim(sb);
	if (sb->len && !strchr(".!?", sb->buf[sb->len - 1]))
		strbuf_addch(sb, '.');
}

/* a sentence: its first letter capitalised and ending with a full stop */
static void
add_sentence(struct strbuf *sb, const char *s)
{
	size_t at = sb->len;

	strbuf_addstr(sb, s);
	if (sb->len > at && sb->buf[at] >= 'a' && sb->buf[at] <= 'z')
		sb->buf[at] = (char)(sb->buf[at] - 'a' + 'A');
	end_sentence(sb);
}

static void
evidence_hit(const struct dr_ctx *ctx, struct dr_finding *f, const struct hit *h,
             const struct row *row)
{
	const char *src = ctx && ctx->klog_source ? ctx->klog_source : "log";
	const struct klog_line *a = &h->first->first, *b = &h->last->last;
	char wa[48], wb[48];

	klog_when(a, wa, sizeof(wa));
	dr_evidence(f, "%s %s: %.*s", src, wa, (int)(a->len > 300 ? 300 : a->len), a->msg);
	if (h->count > 1) {
		klog_when(b, wb, sizeof(wb));
		dr_evidence(f, "%lu such lines, first %s, last %s: %.*s", h->count, wa, wb,
		            (int)(b->len > 300 ? 300 : b->len), b->msg);
	}
	for (const char *d = h->first->detail; d && *d; d = strchr(d, '\n') + 1) {
		const char *eq = strchr(d, '=');

		dr_evidence(f, "%.*s: %.*s", (int)(eq - d), d, (int)strcspn(eq + 1, "\n"), eq + 1);
	}
	dr_evidence(f, "the message is in %s:%zu (from %s)", row->pub.file, row->pub.line,
	            row->pub.source);
}

static void
report_hit(const struct dr_ctx *ctx, const struct hit *h, const char *cause, struct dr_report *r)
{
	const struct row *row = row_of(h->first);
	const char *detail = h->first->detail;
	struct strbuf t = STRBUF_INIT, m = STRBUF_INIT, a = STRBUF_INIT;
	struct dr_finding *f;

	fill(&t, row->pub.meaning, detail, "?");
	strbuf_rtrim(&t);
	while (t.len && t.buf[t.len - 1] == '.')
		strbuf_setlen(&t, t.len - 1);
	if (cause)
		f = dr_add(r, row->pub.id, DR_INFO, "follows from %s: %s", cause, t.buf);
	else
		f = dr_add(r, row->pub.id, h->sev, "%s", t.buf);
	evidence_hit(ctx, f, h, row);

	add_sentence(&m, t.buf);
	if (cause)
		strbuf_addf(&m,
		            " It follows from %s, found in the same log: that is the cause to "
		            "look at first, and this message its consequence.",
		            cause);
	strbuf_addstr(&m, next_bar(row->pub.causes) ? " Possible causes, most likely first: "
	                                            : " Possible cause: ");
	add_list(&m, row->pub.causes, detail);
	end_sentence(&m);
	dr_meaning(f, "%s", m.buf);

	if (cause)
		strbuf_addf(&a, "Follow the finding %s first. Then: ", cause);
	add_list(&a, row->pub.actions, detail);
	end_sentence(&a);
	if (strcmp(row->pub.see, "-") && *row->pub.see) {
		const struct dr_explain *e = dr_explain_find(row->pub.see);

		strbuf_addf(
		        &a,
		        " doctor's set-up check %s%s%s%s covers this (gpuscope doctor --explain "
		        "%s): run 'gpuscope doctor' on the machine that printed it.",
		        row->pub.see, e ? " (" : "", e ? e->title : "", e ? ")" : "", row->pub.see);
	}
	dr_action(f, "%s", a.buf);
	strbuf_release(&t);
	strbuf_release(&m);
	strbuf_release(&a);
}

/* The events of ev, one hit per id, in order of first appearance. */
static size_t
collect_hits(const struct klog_events *ev, struct hit *hits, size_t *hit_of)
{
	size_t n = 0;

	for (size_t g = 0; g < T.nr_groups; g++)
		hit_of[g] = SIZE_MAX;
	for (size_t i = 0; i < ev->nr; i++) {
		const struct klog_event *e = &ev->v[i];
		const struct row *row = row_of(e);
		struct hit *h;

		if (!row)
			continue;
		if (hit_of[row->group] == SIZE_MAX) {
			hit_of[row->group] = n;
			hits[n++] = (struct hit){ row->group, e, e, 0, DR_INFO };
		}
		h = &hits[hit_of[row->group]];
		h->count += e->count;
		if (e->last.lineno > h->last->last.lineno)
			h->last = e;
		if (row->sev > h->sev)
			h->sev = row->sev;
	}
	return n;
}

void
klog_msg_report(const struct dr_ctx *ctx, const struct klog_events *ev, struct dr_report *r)
{
	struct hit *hits;
	size_t *hit_of, n, nr_ids;
	const char **causes, **ids;

	pthread_once(&parse_once, parse);
	if (!ev->nr || !T.nr_groups)
		return;
	hits = xcalloc(ev->nr, sizeof(*hits));
	hit_of = xcalloc(T.nr_groups, sizeof(*hit_of));
	n = collect_hits(ev, hits, hit_of);
	causes = xcalloc(n ? n : 1, sizeof(*causes));
	/* causes first: the findings added below must not count as kernel ones */
	nr_ids = report_ids(r, r->nr, &ids);
	for (size_t i = 0; i < n; i++)
		causes[i] = cause_of(ev, hits, hit_of, &hits[i], ids, nr_ids);
	for (size_t i = 0; i < n; i++)
		report_hit(ctx, &hits[i], causes[i], r);
	free(ids);
	free(causes);
	free(hit_of);
	free(hits);
}

/* --- checking the tables ------------------------------------------------------------- */

static bool
id_valid(const char *id)
{
	const char *dot1 = strchr(id, '.'), *dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;

	if (strncmp(id, "log.", 4) || !dot2 || dot2 == dot1 + 1 || !dot2[1])
		return false;
	for (const char *p = id; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '.' ||
		      *p == '_'))
			return false;
	return true;
}

static bool
known_id(const char *id, size_t len)
{
	char buf[128];

	if (len >= sizeof(buf))
		return false;
	memcpy(buf, id, len);
	buf[len] = '\0';
	for (size_t g = 0; g < T.nr_groups; g++)
		if (!strcmp(T.groups[g].id, buf))
			return true;
	return dr_explain_find(buf) != NULL;
}

static size_t __attribute__((format(printf, 3, 4)))
problem(struct strbuf *out, const struct row *r, const char *fmt, ...)
{
	va_list ap;

	strbuf_addf(out, "%s:%zu: %s: ", r->pub.file, r->pub.line,
	            *r->pub.id ? r->pub.id : "(no id)");
	va_start(ap, fmt);
	strbuf_vaddf(out, fmt, ap);
	va_end(ap);
	strbuf_addch(out, '\n');
	return 1;
}

static size_t
check_ids(struct strbuf *out, const struct row *r)
{
	size_t n = 0;

	if (strcmp(r->pub.see, "-") && !known_id(r->pub.see, strlen(r->pub.see)))
		n += problem(out, r, "see: no finding is called '%s'", r->pub.see);
	if (!strcmp(r->pub.after, "-"))
		return n;
	for (const char *p = r->pub.after; *p;) {
		size_t len;

		while (*p == ' ' || *p == ',')
			p++;
		len = strcspn(p, ", ");
		if (len && !known_id(p, len))
			n += problem(out, r, "after: no finding is called '%.*s'", (int)len, p);
		p += len;
	}
	return n;
}

static size_t
check_example(struct strbuf *out, const struct row *r)
{
	struct cap c[MAX_CAPS];
	const struct row *best;

	if (!row_matches(r, r->pub.example, strlen(r->pub.example), c))
		return problem(out, r, "the pattern does not match its example '%s'",
		               r->pub.example);
	best = match(r->pub.example, strlen(r->pub.example), false, c);
	if (!best || strcmp(best->pub.id, r->pub.id))
		return problem(out, r,
		               "its example gives another id, %s (a row with more literal "
		               "text matches it)",
		               best ? best->pub.id : "none");
	return 0;
}

static size_t
check_row(struct strbuf *out, const struct row *r)
{
	size_t n = 0;

	if (r->nr_cells != NR_CELLS)
		return problem(out, r, "%zu cells, not 10 (tab-separated)", r->nr_cells);
	if (!id_valid(r->pub.id))
		n += problem(out, r, "the id '%s' is not log.<area>.<condition>", r->pub.id);
	if (r->sev == DR_OK)
		n += problem(out, r, "severity '%s' is not error, warning or info",
		             r->pub.severity);
	if (r->bad)
		return n + problem(out, r, "pattern: %s", r->bad);
	for (const char *const *c = &r->pub.meaning; c <= &r->pub.source; c++)
		if (!**c || !strcmp(*c, "-"))
			if (c != &r->pub.see && c != &r->pub.after)
				n += problem(out, r, "%s",
				             "a cell that must say something is empty");
	return n + check_ids(out, r) + check_example(out, r);
}

size_t
klog_msg_check(struct strbuf *out)
{
	size_t n = 0;

	pthread_once(&parse_once, parse);
	for (size_t i = 0; i < T.nr_rows; i++)
		n += check_row(out, &T.rows[i]);
	return n;
}

/* --- the catalog --------------------------------------------------------------------- */

/* "a | b" as indented numbered lines */
static void
add_lines(struct strbuf *sb, const char *list)
{
	int n = 1;

	for (const char *p = list; *p; n++) {
		const char *bar = next_bar(p);
		size_t len = bar ? (size_t)(bar - p) : strlen(p);

		strbuf_addf(sb, "  %d. %.*s\n", n, (int)len, p);
		p += len + (bar ? 3 : 0);
	}
}

static void
explain_group(struct dr_explain *e, const struct group *g)
{
	const struct row *first = &T.rows[g->rows[0]];
	struct strbuf t = STRBUF_INIT, sb = STRBUF_INIT;

	/* the title without the captured details ("...: {segment}", "... ({status})") */
	{
		const char *m = first->pub.meaning, *cut = strstr(m, ": {"),
		           *paren = strstr(m, " ({");

		if (paren && (!cut || paren < cut))
			cut = paren;
		if (cut && cut > m) {
			char *head = xstrndup(m, (size_t)(cut - m));

			fill(&t, head, NULL, "...");
			free(head);
		} else {
			fill(&t, m, NULL, "...");
		}
	}
	strbuf_rtrim(&t);
	while (t.len && t.buf[t.len - 1] == '.')
		strbuf_setlen(&t, t.len - 1);
	add_sentence(&sb, first->pub.meaning);
	strbuf_addstr(&sb, "\n\nPossible causes, most likely first:\n");
	add_lines(&sb, first->pub.causes);
	strbuf_addstr(&sb, "\nWhat to do, in order:\n");
	add_lines(&sb, first->pub.actions);
	if (strcmp(first->pub.see, "-"))
		strbuf_addf(&sb,
		            "\ndoctor's set-up check %s covers this: run 'gpuscope doctor' on "
		            "the machine that printed it.\n",
		            first->pub.see);
	strbuf_addstr(&sb, "\nThe messages it matches:\n");
	for (size_t i = 0; i < g->nr_rows; i++) {
		const struct row *r = &T.rows[g->rows[i]];

		strbuf_addf(&sb, "  %s  %s  (%s:%zu)\n    e.g. %s\n    from %s\n", r->pub.severity,
		            r->pub.pattern, r->pub.file, r->pub.line, r->pub.example,
		            r->pub.source);
		if (strcmp(r->pub.after, "-"))
			strbuf_addf(&sb,
			            "    reported as info, following from it, when the log "
			            "also has %s\n",
			            r->pub.after);
		if (i && strcmp(r->pub.meaning, first->pub.meaning))
			strbuf_addf(&sb, "    meaning: %s\n", r->pub.meaning);
	}
	strbuf_rtrim(&sb);
	e->id = g->id;
	e->title = strbuf_detach(&t, NULL);
	e->text = strbuf_detach(&sb, NULL);
}

static int
explain_by_id(const void *a, const void *b)
{
	return strcmp(((const struct dr_explain *)a)->id, ((const struct dr_explain *)b)->id);
}

static void
build_catalog(void)
{
	pthread_once(&parse_once, parse);
	T.catalog = xcalloc(T.nr_groups + 1, sizeof(*T.catalog));
	for (size_t g = 0; g < T.nr_groups; g++)
		if (*T.groups[g].id)
			explain_group(&T.catalog[T.nr_catalog++], &T.groups[g]);
	qsort(T.catalog, T.nr_catalog, sizeof(*T.catalog), explain_by_id);
}

size_t
klog_msg_catalog(const struct dr_explain **out)
{
	pthread_once(&catalog_once, build_catalog);
	*out = T.catalog;
	return T.nr_catalog;
}
