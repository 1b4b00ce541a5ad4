/*
 * Bounded parsers of decimal numbers and fixed words in spans of outside
 * text, shared by the procfs and fdinfo readers.
 */
#include "core/parse.h"

#include <string.h>

bool
parse_u64(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	while (s < end && parse_is_blank(*s))
		s++;
	if (s == end || !parse_is_digit(*s))
		return false;
	for (; s < end && parse_is_digit(*s); s++) {
		unsigned d = (unsigned)(*s - '0');

		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*p = s;
	*v = x;
	return true;
}

bool
parse_skip_prefix(const char **p, const char *end, const char *prefix)
{
	size_t n = strlen(prefix);

	if ((size_t)(end - *p) < n || memcmp(*p, prefix, n))
		return false;
	*p += n;
	return true;
}

bool
parse_span_is(const char *p, const char *end, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(end - p) == n && !memcmp(p, s, n);
}
