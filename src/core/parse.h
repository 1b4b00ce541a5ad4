/*
 * Bounded parsing of text that comes from outside (procfs, fdinfo): each
 * helper reads a span [p, end) that need not be NUL-terminated, never reads
 * past end and takes no sign, hex or locale where a decimal is wanted
 * (strtoull() and strtod() do).
 */
#ifndef GPUSCOPE_PARSE_H
#define GPUSCOPE_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/* A blank inside a line: space, tab, or the '\r' of a CRLF ending. */
static inline bool
parse_is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* An ASCII decimal digit, whatever the locale. */
static inline bool
parse_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* An ASCII hex digit, either case. */
static inline bool
parse_is_hex(char c)
{
	return parse_is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/*
 * The decimal number at *p, after blanks, into *v, and *p moved past it.
 * False, with *p and *v untouched, when there is no digit or the number
 * does not fit in 64 bits.
 */
bool parse_u64(const char **p, const char *end, uint64_t *v);

/* If [*p, end) starts with prefix, move *p past it and return true. */
bool parse_skip_prefix(const char **p, const char *end, const char *prefix);

/* Is [p, end) exactly s? */
bool parse_span_is(const char *p, const char *end, const char *s);

#endif
