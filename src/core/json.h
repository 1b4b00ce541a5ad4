/*
 * JSON output primitives, shared by every layer that writes JSON (the
 * status document, doctor's report, fit, serve). Reading JSON goes through
 * jansson (docs/design.md).
 */
#ifndef GPUSCOPE_CORE_JSON_H
#define GPUSCOPE_CORE_JSON_H

#include <stdbool.h>

struct strbuf;

/* Whether s is all of one number as JSON spells it (no hex, no leading zeros, no '+'). */
bool json_text_is_number(const char *s);

/* Append s as a JSON string (quoted, escaped; invalid UTF-8 bytes become U+FFFD). */
void json_str(struct strbuf *sb, const char *s);
/* Append a number with at most decimals digits after the point, trailing zeros dropped; NaN/inf →
 * null. */
void json_num(struct strbuf *sb, double v, int decimals);

#endif
