/*
 * The doctor's report: findings, their order and severity, and the text and
 * JSON front ends.
 */
#include "doctor/doctor.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/fmt.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

struct dr_finding *
dr_add(struct dr_report *r, const char *id, enum dr_severity sev, const char *fmt, ...)
{
	struct dr_finding *f;
	va_list ap;

	ALLOC_GROW(r->f, r->nr + 1, r->alloc);
	f = &r->f[r->nr++];
	memset(f, 0, sizeof(*f));
	f->id = id;
	f->severity = sev;
	va_start(ap, fmt);
	f->title = xstrvfmt(fmt, ap);
	va_end(ap);
	return f;
}

void
dr_evidence(struct dr_finding *f, const char *fmt, ...)
{
	va_list ap;

	ALLOC_GROW(f->evidence, f->nr_evidence + 1, f->alloc_evidence);
	va_start(ap, fmt);
	f->evidence[f->nr_evidence++] = xstrvfmt(fmt, ap);
	va_end(ap);
}

void
dr_meaning(struct dr_finding *f, const char *fmt, ...)
{
	va_list ap;

	free(f->meaning);
	va_start(ap, fmt);
	f->meaning = xstrvfmt(fmt, ap);
	va_end(ap);
}

void
dr_action(struct dr_finding *f, const char *fmt, ...)
{
	va_list ap;

	free(f->action);
	va_start(ap, fmt);
	f->action = xstrvfmt(fmt, ap);
	va_end(ap);
}

static void
finding_release(struct dr_finding *f)
{
	free(f->title);
	for (size_t j = 0; j < f->nr_evidence; j++)
		free(f->evidence[j]);
	free(f->evidence);
	free(f->meaning);
	free(f->action);
}

void
dr_report_release(struct dr_report *r)
{
	for (size_t i = 0; i < r->nr; i++)
		finding_release(&r->f[i]);
	free(r->f);
	r->f = NULL;
	r->nr = r->alloc = 0;
}

/* Whether pattern (an id, or a prefix ending in ".*") names id. */
static bool
id_matches(const char *pattern, const char *id)
{
	size_t len = strlen(pattern);

	if (len >= 2 && !strcmp(pattern + len - 2, ".*"))
		return !strncmp(id, pattern, len - 1);
	return !strcmp(id, pattern);
}

size_t
dr_report_drop(struct dr_report *r, const char *pattern)
{
	size_t kept = 0, nr = r->nr;

	for (size_t i = 0; i < nr; i++) {
		if (id_matches(pattern, r->f[i].id))
			finding_release(&r->f[i]);
		else
			r->f[kept++] = r->f[i];
	}
	r->nr = kept;
	return nr - kept;
}

bool
dr_catalog_matches(const char *pattern)
{
	size_t n = dr_catalog_list(NULL, 0);
	const struct dr_explain **e = xcalloc(n ? n : 1, sizeof(*e));
	bool found = false;

	dr_catalog_list(e, n);
	for (size_t i = 0; i < n && !found; i++)
		found = id_matches(pattern, e[i]->id);
	free(e);
	return found;
}

enum dr_severity
dr_worst(const struct dr_report *r)
{
	enum dr_severity w = DR_OK;

	for (size_t i = 0; i < r->nr; i++)
		if (r->f[i].severity > w)
			w = r->f[i].severity;
	return w;
}

const char *
dr_severity_key(enum dr_severity s)
{
	switch (s) {
	case DR_OK:
		return "ok";
	case DR_INFO:
		return "info";
	case DR_WARNING:
		return "warning";
	case DR_ERROR:
		return "error";
	}
	return "?";
}

int
dr_exit_code(const struct dr_report *r)
{
	switch (dr_worst(r)) {
	case DR_ERROR:
		return 2;
	case DR_WARNING:
		return r->fail_on == DR_ERROR ? 0 : 1;
	default:
		return 0;
	}
}

static const char *
sev_label(enum dr_severity s, bool colour)
{
	switch (s) {
	case DR_ERROR:
		return colour ? "\033[1;31mERROR\033[0m" : "ERROR";
	case DR_WARNING:
		return colour ? "\033[1;33mWARN \033[0m" : "WARN ";
	case DR_INFO:
		return colour ? "\033[36mINFO \033[0m" : "INFO ";
	case DR_OK:
		break;
	}
	return colour ? "\033[32mok   \033[0m" : "ok   ";
}

/*
 * Append text after a label, its later lines indented as far. The text is
 * shown as every text from outside (fmt_add_shown()): evidence quotes
 * kernel log lines, process and GPU names.
 */
static void
add_block(struct strbuf *sb, const char *label, const char *text)
{
	const char *p = text;

	strbuf_addf(sb, "        %-9s", label);
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		fmt_add_shown(sb, p, n);
		strbuf_addch(sb, '\n');
		if (!nl)
			break;
		p = nl + 1;
		if (*p)
			strbuf_addstr(sb, "                 ");
	}
}

void
dr_text(struct strbuf *sb, const struct dr_report *r, bool colour)
{
	size_t count[DR_ERROR + 1] = { 0 };

	for (int sev = DR_ERROR; sev >= DR_INFO; sev--) {
		for (size_t i = 0; i < r->nr; i++) {
			const struct dr_finding *f = &r->f[i];

			if ((int)f->severity != sev)
				continue;
			strbuf_addf(sb, "%s  ", sev_label(f->severity, colour));
			fmt_add_shown(sb, f->title, strlen(f->title));
			strbuf_addf(sb, "\n        %-9s%s\n", "id", f->id);
			for (size_t j = 0; j < f->nr_evidence; j++)
				add_block(sb, j ? "" : "evidence", f->evidence[j]);
			if (f->meaning)
				add_block(sb, "means", f->meaning);
			if (f->action)
				add_block(sb, "do", f->action);
			strbuf_addch(sb, '\n');
		}
	}
	for (size_t i = 0; i < r->nr; i++) {
		count[r->f[i].severity]++;
		if (r->f[i].severity == DR_OK) {
			strbuf_addf(sb, "%s  ", sev_label(DR_OK, colour));
			fmt_add_shown(sb, r->f[i].title, strlen(r->f[i].title));
			strbuf_addch(sb, '\n');
		}
	}
	strbuf_addf(sb, "%s%zu error%s, %zu warning%s, %zu note%s, %zu ok",
	            count[DR_OK] ? "\n" : "", count[DR_ERROR], count[DR_ERROR] == 1 ? "" : "s",
	            count[DR_WARNING], count[DR_WARNING] == 1 ? "" : "s", count[DR_INFO],
	            count[DR_INFO] == 1 ? "" : "s", count[DR_OK]);
	strbuf_addstr(sb, r->nr ? "; 'gpuscope doctor --explain ID' says more\n" : "\n");
}

static void
json_key_str(struct strbuf *sb, const char *key, const char *val, bool comma)
{
	if (comma)
		strbuf_addch(sb, ',');
	json_str(sb, key);
	strbuf_addch(sb, ':');
	if (val)
		json_str(sb, val);
	else
		strbuf_addstr(sb, "null");
}

void
dr_json(struct strbuf *sb, const struct dr_report *r, double time)
{
	strbuf_addch(sb, '{');
	json_key_str(sb, "schema", DR_JSON_SCHEMA, false);
	strbuf_addstr(sb, ",\"time\":");
	json_num(sb, time, 3);
	json_key_str(sb, "worst", dr_severity_key(dr_worst(r)), true);
	strbuf_addf(sb, ",\"exit_code\":%d,\"findings\":[", dr_exit_code(r));
	for (size_t i = 0; i < r->nr; i++) {
		strbuf_addstr(sb, i ? ",{" : "{");
		dr_json_finding(sb, &r->f[i]);
		strbuf_addch(sb, '}');
	}
	strbuf_addstr(sb, "]}\n");
}

void
dr_json_finding(struct strbuf *sb, const struct dr_finding *f)
{
	json_key_str(sb, "id", f->id, false);
	json_key_str(sb, "severity", dr_severity_key(f->severity), true);
	json_key_str(sb, "title", f->title, true);
	strbuf_addstr(sb, ",\"evidence\":[");
	for (size_t j = 0; j < f->nr_evidence; j++) {
		if (j)
			strbuf_addch(sb, ',');
		json_str(sb, f->evidence[j]);
	}
	strbuf_addch(sb, ']');
	json_key_str(sb, "meaning", f->meaning, true);
	json_key_str(sb, "action", f->action, true);
}

/* s with every "<root>/" made "/", or NULL when it holds none. */
static char *
unrooted(const char *s, const char *root, size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = s, *hit;

	for (;;) {
		hit = strstr(p, root);
		while (hit && hit[len] != '/')
			hit = strstr(hit + 1, root);
		if (!hit)
			break;
		strbuf_add(&sb, p, (size_t)(hit - p));
		p = hit + len;
	}
	if (p == s) {
		strbuf_release(&sb);
		return NULL;
	}
	strbuf_addstr(&sb, p);
	return strbuf_detach(&sb, NULL);
}

static void
unroot_str(char **s, const char *root, size_t len)
{
	char *n = *s ? unrooted(*s, root, len) : NULL;

	if (n) {
		free(*s);
		*s = n;
	}
}

void
dr_report_unroot(struct dr_report *r, const char *root)
{
	size_t len = root ? strlen(root) : 0;
	char *copy;

	while (len > 0 && root[len - 1] == '/')
		len--;
	if (!len)
		return;
	copy = xstrndup(root, len);
	for (size_t i = 0; i < r->nr; i++) {
		struct dr_finding *f = &r->f[i];

		unroot_str(&f->title, copy, len);
		unroot_str(&f->meaning, copy, len);
		unroot_str(&f->action, copy, len);
		for (size_t j = 0; j < f->nr_evidence; j++)
			unroot_str(&f->evidence[j], copy, len);
	}
	free(copy);
}
