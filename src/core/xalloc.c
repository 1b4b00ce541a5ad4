/*
 * The only place that calls malloc and friends directly.
 */
#include "core/xalloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void __attribute__((noreturn)) oom(size_t n)
{
	fprintf(stderr, "gpuscope: fatal: out of memory allocating %zu bytes\n", n);
	abort();
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom(n);
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		oom(st_mult(nmemb, size));
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		oom(n);
	return q;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = xmalloc(st_add(len, 1));

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

size_t
st_mult(size_t a, size_t b)
{
	if (b && a > SIZE_MAX / b)
		BUG("size overflow: %zu * %zu", a, b);
	return a * b;
}

size_t
st_add(size_t a, size_t b)
{
	if (a > SIZE_MAX - b)
		BUG("size overflow: %zu + %zu", a, b);
	return a + b;
}

void
BUG_fl(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "gpuscope: BUG at %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}
