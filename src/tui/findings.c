/*
 * The list behind top's findings pane.
 */
#include "tui/findings.h"

#include <stdlib.h>

#include "doctor/doctor.h"
#include "doctor/live.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

void
tui_findings_init(struct tui_findings *f)
{
	f->v = NULL;
	f->nr = f->alloc = 0;
	f->checked = false;
}

static void
forget(struct tui_findings *f)
{
	for (size_t i = 0; i < f->nr; i++)
		free(f->v[i].detail);
	f->nr = 0;
}

void
tui_findings_release(struct tui_findings *f)
{
	forget(f);
	free(f->v);
	tui_findings_init(f);
}

void
tui_findings_begin(struct tui_findings *f)
{
	forget(f);
	f->checked = true;
}

void
tui_findings_add(struct tui_findings *f, enum finding_severity sev, int gpu, const char *code,
                 const char *text, const char *detail)
{
	struct tui_finding *x;

	ALLOC_GROW(f->v, f->nr + 1, f->alloc);
	x = &f->v[f->nr++];
	x->severity = sev;
	x->gpu = gpu;
	str_copy(x->code, sizeof(x->code), code ? code : "");
	str_copy(x->text, sizeof(x->text), text ? text : "");
	x->detail = detail ? xstrdup(detail) : NULL;
}

static enum finding_severity
severity_of(enum dr_severity s)
{
	return s == DR_ERROR ? FINDING_ERROR : s == DR_WARNING ? FINDING_WARN : FINDING_INFO;
}

/* The full text of d: its title, evidence, meaning and action, one paragraph a line. */
static void
detail_of(struct strbuf *sb, const struct dr_finding *d)
{
	strbuf_addf(sb, "%s\n", d->title);
	if (d->nr_evidence)
		strbuf_addstr(sb, "\nEvidence:\n");
	for (size_t i = 0; i < d->nr_evidence; i++)
		strbuf_addf(sb, "  - %s\n", d->evidence[i]);
	if (d->meaning)
		strbuf_addf(sb, "\nMeaning: %s\n", d->meaning);
	if (d->action)
		strbuf_addf(sb, "\nWhat to do: %s\n", d->action);
	strbuf_addf(sb, "\nMore: 'gpuscope doctor --explain %s'\n", d->id);
}

void
tui_findings_from_report(struct tui_findings *f, const struct dr_report *r)
{
	struct strbuf sb = STRBUF_INIT, line = STRBUF_INIT;

	tui_findings_begin(f);
	for (size_t i = 0; i < r->nr; i++) {
		const struct dr_finding *d = &r->f[i];

		if (d->severity <= DR_OK)
			continue;
		strbuf_reset(&sb);
		strbuf_reset(&line);
		detail_of(&sb, d);
		strbuf_addf(&line, "%s  %s", d->id, dr_live_short_title(d));
		tui_findings_add(f, severity_of(d->severity), dr_live_gpu(d), d->id, line.buf,
		                 sb.buf);
	}
	strbuf_release(&sb);
	strbuf_release(&line);
}

const char *
tui_finding_severity_name(enum finding_severity sev)
{
	switch (sev) {
	case FINDING_WARN:
		return "warning";
	case FINDING_ERROR:
		return "error";
	case FINDING_INFO:
		break;
	}
	return "info";
}

const char *
tui_findings_empty_text(const struct tui_findings *f)
{
	return f->checked ? "nothing found" : "no checks yet";
}
