/*
 * How far apart two strings are, for "did you mean" suggestions (query
 * field names, GPU names of the spec table, model names).
 */
#ifndef GPUSCOPE_STRDIST_H
#define GPUSCOPE_STRDIST_H

#include <stddef.h>

/* Longest string str_distance() compares; longer ones are far from everything. */
#define STR_DISTANCE_MAX 128

/*
 * Edit distance with adjacent transpositions counted as one edit (optimal
 * string alignment), ignoring ASCII case; SIZE_MAX when a string is longer
 * than STR_DISTANCE_MAX.
 */
size_t str_distance(const char *a, const char *b);

#endif
