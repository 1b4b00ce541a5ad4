/*
 * The list behind top's findings pane.
 */
#include "tui/findings.h"

#include <stdlib.h>

#include "core/strbuf.h"
#include "core/xalloc.h"

void
tui_findings_init(struct tui_findings *f)
{
	f->v = NULL;
	f->nr = f->alloc = 0;
	f->checked = false;
}

void
tui_findings_release(struct tui_findings *f)
{
	free(f->v);
	tui_findings_init(f);
}

void
tui_findings_begin(struct tui_findings *f)
{
	f->nr = 0;
	f->checked = true;
}

void
tui_findings_add(struct tui_findings *f, enum finding_severity sev, int gpu, const char *code,
                 const char *text)
{
	struct tui_finding *x;

	ALLOC_GROW(f->v, f->nr + 1, f->alloc);
	x = &f->v[f->nr++];
	x->severity = sev;
	x->gpu = gpu;
	str_copy(x->code, sizeof(x->code), code ? code : "");
	str_copy(x->text, sizeof(x->text), text ? text : "");
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
