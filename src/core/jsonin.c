/*
 * JSON input through jansson: strict parse of a whole file held in memory
 * into an object, and jansson's error (line, column, text) as one line of
 * struct err.
 */
#include "core/jsonin.h"

#include <jansson.h>
#include <string.h>

#include "core/err.h"

static bool
blank(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!strchr(" \t\r\n", buf[i]) || !buf[i])
			return false;
	return true;
}

/*
 * jansson quotes the token it stopped at ("near '...'"), which is input:
 * control bytes and bytes past ASCII become '?', so the message stays one
 * printable line.
 */
static void
printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			*s = '?';
}

static const char *
type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	case JSON_OBJECT:
		break;
	}
	return "an object";
}

/*
 * What Python's json module writes for float("nan") and float("inf"), not
 * JSON: jansson stops at "NaN" or "Infinity", or after the '-' of
 * "-Infinity" (position counts the bytes it read).
 */
static bool
python_literal(const char *buf, size_t len, const json_error_t *je)
{
	static const char inf[] = "Infinity";
	size_t at = je->position > 0 ? (size_t)je->position : 0;

	if (strstr(je->text, "near 'NaN'") || strstr(je->text, "near 'Infinity'"))
		return true;
	return strstr(je->text, "near '-'") && at <= len && len - at >= strlen(inf) &&
	       !memcmp(buf + at, inf, strlen(inf));
}

json_t *
jsonin_object(const char *buf, size_t len, const char *name, struct err *err)
{
	json_error_t je;
	json_t *root;

	if (blank(buf, len)) {
		err_set(err, E_PARSE, "%s: empty, not a JSON object", name);
		return NULL;
	}
	root = json_loadb(buf, len,
	                  JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, &je);
	if (!root) {
		je.text[sizeof(je.text) - 1] = '\0'; /* the last byte holds the error code */
		printable(je.text);
		if (je.line > 0)
			err_set(err, E_PARSE, "%s: malformed JSON at line %d, column %d: %s%s",
			        name, je.line, je.column, je.text,
			        python_literal(buf, len, &je) ? " (NaN and Infinity are not JSON)"
			                                      : "");
		else
			err_set(err, E_PARSE, "%s: malformed JSON: %s", name, je.text);
		return NULL;
	}
	if (!json_is_object(root)) {
		err_set(err, E_PARSE, "%s: not a JSON object (%s)", name, type_name(root));
		json_decref(root);
		return NULL;
	}
	return root;
}
