/*
 * Growable strings (see strbuf.h for the invariants).
 */
#include "core/strbuf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

char strbuf_slopbuf[1];

void
strbuf_init(struct strbuf *sb, size_t hint)
{
	sb->alloc = 0;
	sb->len = 0;
	sb->buf = strbuf_slopbuf;
	if (hint)
		strbuf_grow(sb, hint);
}

void
strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb, 0);
}

char *
strbuf_detach(struct strbuf *sb, size_t *len)
{
	char *res;

	strbuf_grow(sb, 0);
	res = sb->buf;
	if (len)
		*len = sb->len;
	strbuf_init(sb, 0);
	return res;
}

void
strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t need = st_add(st_add(sb->len, extra), 1);

	if (need <= sb->alloc)
		return;
	if (!sb->alloc)
		sb->buf = NULL;
	ALLOC_GROW(sb->buf, need, sb->alloc);
	if (!sb->len)
		sb->buf[0] = '\0';
}

void
strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (len > (sb->alloc ? sb->alloc - 1 : 0))
		BUG("strbuf_setlen beyond allocation");
	sb->len = len;
	if (sb->alloc)
		sb->buf[len] = '\0';
}

void
strbuf_add_slow(struct strbuf *sb, const void *data, size_t len)
{
	strbuf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	strbuf_setlen(sb, sb->len + len);
}

void
strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void
strbuf_addchars(struct strbuf *sb, int c, size_t n)
{
	strbuf_grow(sb, n);
	memset(sb->buf + sb->len, c, n);
	strbuf_setlen(sb, sb->len + n);
}

void
strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	strbuf_grow(sb, 64);
	va_copy(cp, ap);
	n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, cp);
	va_end(cp);
	if (n < 0)
		BUG("vsnprintf failed for format '%s'", fmt);
	if ((size_t)n >= sb->alloc - sb->len) {
		strbuf_grow(sb, (size_t)n);
		n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
	}
	strbuf_setlen(sb, sb->len + (size_t)n);
}

void
strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

char *
xstrvfmt(const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_vaddf(&sb, fmt, ap);
	return strbuf_detach(&sb, NULL);
}

char *
xstrfmt(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xstrvfmt(fmt, ap);
	va_end(ap);
	return s;
}

void
strbuf_rtrim(struct strbuf *sb)
{
	while (sb->len && isspace((unsigned char)sb->buf[sb->len - 1]))
		sb->len--;
	if (sb->alloc)
		sb->buf[sb->len] = '\0';
}

char *
str_copy(char *dst, size_t size, const char *src)
{
	size_t n;

	if (!size)
		return dst;
	n = strnlen(src, size - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
	return dst;
}
