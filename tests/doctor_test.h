/*
 * What the doctor's unit tests ask of a report: the first finding of an id,
 * how many there are, whether a finding's text holds a string.
 */
#ifndef GPUSCOPE_TESTS_DOCTOR_TEST_H
#define GPUSCOPE_TESTS_DOCTOR_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "doctor/doctor.h"

/* The first finding of id in r, or NULL. */
static inline const struct dr_finding *
find_id(const struct dr_report *r, const char *id)
{
	for (size_t i = 0; i < r->nr; i++)
		if (!strcmp(r->f[i].id, id))
			return &r->f[i];
	return NULL;
}

static inline size_t
count_id(const struct dr_report *r, const char *id)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nr; i++)
		n += !strcmp(r->f[i].id, id);
	return n;
}

/* Does an evidence line of f (NULL: none) hold s? */
static inline bool
evidence_has(const struct dr_finding *f, const char *s)
{
	for (size_t i = 0; f && i < f->nr_evidence; i++)
		if (strstr(f->evidence[i], s))
			return true;
	return false;
}

/* Does any text of f (title, evidence, meaning, action) hold s? */
static inline bool
says(const struct dr_finding *f, const char *s)
{
	if (!f)
		return false;
	return strstr(f->title, s) || (f->meaning && strstr(f->meaning, s)) ||
	       (f->action && strstr(f->action, s)) || evidence_has(f, s);
}

#endif
