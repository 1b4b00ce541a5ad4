/*
 * Accept negotiation for /metrics (see negotiate.h).
 *
 * The grammar is RFC 9110's (sections 5.6 and 12.5.1):
 *
 *   Accept     = #( media-range [ weight ] )
 *   media-range = ( "*" "/" "*" / type "/" "*" / type "/" subtype ) parameters
 *   parameters = *( OWS ";" OWS [ token "=" ( token / quoted-string ) ] )
 *   weight     = OWS ";" OWS "q=" qvalue
 *   qvalue     = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
 *
 * Type, subtype and parameter names are case-insensitive; empty list
 * elements are allowed and skipped; the parameters after q are extensions,
 * ignored. An element that does not parse, its q-value included, is left
 * out and the rest of the list still counts.
 *
 * A range with parameters matches a format only if they agree with it:
 * version must be the format's (0.0.4, 1.0.0) and charset utf-8. Other
 * parameters, such as Prometheus 3's escaping=allow-utf-8, ask for nothing
 * serve's output does not already satisfy (its names are all legacy
 * names), so they do not prevent a match.
 *
 * When neither format is acceptable, the text format is served rather than
 * 406 Not Acceptable, as Prometheus's Go client library does (expfmt's
 * Negotiate falls back to the text format) and as Prometheus's exposition
 * format documentation has scrapers rely on.
 */
#include "serve/negotiate.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

struct format {
	const char *type, *subtype, *version;
};

/* in the server's order of preference, for ties */
static const struct format formats[] = {
	[MF_TEXT] = { "text", "plain", "0.0.4" },
	[MF_OPENMETRICS] = { "application", "openmetrics-text", "1.0.0" },
};

#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

struct span {
	const char *p;
	size_t n;
};

/* One element of the list, parsed. */
struct range {
	struct span type, subtype, version, charset;
	bool has_version, has_charset;
	unsigned q; /* thousandths */
};

static bool
tchar(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static const char *
ows(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static const char *
token(const char *s, struct span *out)
{
	const char *p = s;

	while (tchar((unsigned char)*p))
		p++;
	out->p = s;
	out->n = (size_t)(p - s);
	return p;
}

/* A parameter value: a token, or a quoted string (its inside, escapes kept). NULL: malformed. */
static const char *
value(const char *s, struct span *out)
{
	if (*s != '"') {
		s = token(s, out);
		return out->n ? s : NULL;
	}
	out->p = ++s;
	while (*s && *s != '"') {
		if (*s == '\\' && s[1])
			s++;
		s++;
	}
	if (*s != '"')
		return NULL;
	out->n = (size_t)(s - out->p);
	return s + 1;
}

static bool
is(const struct span *s, const char *word)
{
	return s->n == strlen(word) && !strncasecmp(s->p, word, s->n);
}

/* A qvalue, whole: 0, 0.5, 1.000; returns false on anything else. */
static bool
qvalue(const struct span *v, unsigned *q)
{
	const char *p = v->p, *end = v->p + v->n;
	unsigned frac = 0, digits = 0;

	if (p == end || (*p != '0' && *p != '1'))
		return false;
	*q = (unsigned)(*p++ - '0') * 1000;
	if (p == end)
		return true;
	if (*p++ != '.')
		return false;
	for (; p < end; p++, digits++) {
		if (digits == 3 || *p < '0' || *p > '9')
			return false;
		frac = frac * 10 + (unsigned)(*p - '0');
	}
	while (digits++ < 3)
		frac *= 10;
	if (*q == 1000 && frac)
		return false;
	*q += frac;
	return true;
}

/* Past the end of the element at s: the next ',' outside a quoted string, or the end. */
static const char *
skip_element(const char *s)
{
	bool quoted = false;

	for (; *s; s++) {
		if (quoted && *s == '\\' && s[1])
			s++;
		else if (*s == '"')
			quoted = !quoted;
		else if (*s == ',' && !quoted)
			break;
	}
	return s;
}

/* Parse the element at s into r; returns whether it is well formed. */
static bool
parse_range(const char *s, struct range *r)
{
	bool ext = false; /* past q: accept-ext parameters, ignored */

	memset(r, 0, sizeof(*r));
	r->q = 1000;
	s = token(s, &r->type);
	if (!r->type.n || *s != '/')
		return false;
	s = token(s + 1, &r->subtype);
	if (!r->subtype.n)
		return false;
	if (is(&r->type, "*") && !is(&r->subtype, "*"))
		return false;
	for (;;) {
		struct span name, val;

		s = ows(s);
		if (!*s || *s == ',')
			return true;
		if (*s != ';')
			return false;
		s = ows(s + 1);
		if (!*s || *s == ',' || *s == ';')
			continue; /* an empty parameter */
		s = token(s, &name);
		if (!name.n || *s != '=')
			return false;
		s = value(s + 1, &val);
		if (!s)
			return false;
		if (ext)
			continue;
		if (is(&name, "q")) {
			if (!qvalue(&val, &r->q))
				return false;
			ext = true;
		} else if (is(&name, "version")) {
			r->version = val;
			r->has_version = true;
		} else if (is(&name, "charset")) {
			r->charset = val;
			r->has_charset = true;
		}
	}
}

/* How specifically r matches f: -1 not at all, 0 for * / *, 1 type / *, 2 and up the type. */
static int
specificity(const struct range *r, const struct format *f)
{
	int spec = 2;

	if (is(&r->type, "*"))
		return 0;
	if (!is(&r->type, f->type))
		return -1;
	if (is(&r->subtype, "*"))
		return 1;
	if (!is(&r->subtype, f->subtype))
		return -1;
	if (r->has_version) {
		if (r->version.n != strlen(f->version) ||
		    strncmp(r->version.p, f->version, r->version.n))
			return -1;
		spec++;
	}
	if (r->has_charset) {
		if (!is(&r->charset, "utf-8"))
			return -1;
		spec++;
	}
	return spec;
}

enum metrics_format
metrics_negotiate(const char *accept)
{
	int spec[NFORMATS];
	unsigned q[NFORMATS];
	size_t best = MF_TEXT;

	if (!accept)
		return MF_TEXT;
	for (size_t i = 0; i < NFORMATS; i++) {
		spec[i] = -1;
		q[i] = 0;
	}
	for (const char *s = accept; *s;) {
		struct range r;

		s = ows(s);
		if (*s == ',') { /* an empty element */
			s++;
			continue;
		}
		if (!*s)
			break;
		if (parse_range(s, &r)) {
			for (size_t i = 0; i < NFORMATS; i++) {
				int sp = specificity(&r, &formats[i]);

				/* the most specific range decides; of equally specific ones, the
				 * heaviest */
				if (sp > spec[i] || (sp == spec[i] && sp >= 0 && r.q > q[i])) {
					spec[i] = sp;
					q[i] = r.q;
				}
			}
		}
		s = skip_element(s);
		if (*s == ',')
			s++;
	}
	for (size_t i = 1; i < NFORMATS; i++)
		if (q[i] > q[best] || (q[i] == q[best] && spec[i] > spec[best]))
			best = i;
	return q[best] ? (enum metrics_format)best : MF_TEXT;
}
