/*
 * The findings pane of top: what doctor's health and workload checks
 * (doctor/live.h) find over top's own last samples, worst first. Until they
 * have run the pane says so plainly ("no checks yet") rather than implying
 * all is well. They run on the UI thread with each new snapshot (take() in
 * tui.c), at most once a second: tui_findings_begin(), then
 * tui_findings_add() for each finding (tui_findings_from_report() does both).
 */
#ifndef GPUSCOPE_TUI_FINDINGS_H
#define GPUSCOPE_TUI_FINDINGS_H

#include <stdbool.h>
#include <stddef.h>

enum finding_severity {
	FINDING_INFO,
	FINDING_WARN,
	FINDING_ERROR,
};

struct tui_finding {
	enum finding_severity severity;
	int gpu;        /* the GPU's index, or -1 for the machine */
	char code[64];  /* the finding's id ("health.throttle.thermal") */
	char text[200]; /* one line for people: what was found */
	char *detail;   /* owned, or NULL: the full text (evidence, meaning, action), lines */
};

struct tui_findings {
	struct tui_finding *v;
	size_t nr, alloc;
	bool checked; /* a checker has run: an empty list then means "nothing found" */
};

#define TUI_FINDINGS_INIT         \
	{                         \
		NULL, 0, 0, false \
	}

void tui_findings_init(struct tui_findings *f);
void tui_findings_release(struct tui_findings *f);

/* Forget the findings of the last run and mark the list as checked (a run begins). */
void tui_findings_begin(struct tui_findings *f);

/* Add one finding; text is cut to fit; detail (NULL: none) is copied. */
void tui_findings_add(struct tui_findings *f, enum finding_severity sev, int gpu, const char *code,
                      const char *text, const char *detail);

/*
 * The findings of r worse than ok, in its order (dr_live gives them worst
 * first), in place of the last run's.
 */
struct dr_report;
void tui_findings_from_report(struct tui_findings *f, const struct dr_report *r);

/* "info", "warning", "error". */
const char *tui_finding_severity_name(enum finding_severity sev);

/*
 * The line the pane shows when it has no finding to list: "no checks yet"
 * before any checker ran, "nothing found" after.
 */
const char *tui_findings_empty_text(const struct tui_findings *f);

#endif
