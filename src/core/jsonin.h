/*
 * JSON input: every JSON file gpuscope reads (a model's config.json, CUDA's
 * version.json) is parsed by jansson through this one function, so that all
 * of them get the same strict parse, the same limits and the same one-line
 * error. The JSON writer is core/json.h.
 */
#ifndef GPUSCOPE_JSONIN_H
#define GPUSCOPE_JSONIN_H

#include <stddef.h>

struct err;
struct json_t;

/*
 * Parse the len bytes at buf, the contents of the file name (used in the
 * message only), as one JSON object by RFC 8259: no trailing commas, no
 * NaN or Infinity, strings in UTF-8, a member name at most once in an
 * object. Every number comes back as a json_real (JSON_DECODE_INT_AS_REAL),
 * so an integer past 2^63 is a large double instead of a parse error; a
 * number past the range of a double is one. Nesting is limited by jansson
 * (JSON_PARSER_MAX_DEPTH, 2048).
 *
 * Returns a new reference the caller json_decref()s, or NULL with err set
 * (E_PARSE) to one line: "NAME: malformed JSON at line L, column C: what
 * jansson says", "NAME: empty, not a JSON object" or "NAME: not a JSON
 * object (an array)".
 */
struct json_t *jsonin_object(const char *buf, size_t len, const char *name, struct err *err);

#endif
