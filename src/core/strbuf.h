/*
 * Growable NUL-terminated byte strings.
 *
 * Invariants: buf is never NULL (an empty strbuf points at a shared ""),
 * buf[len] is always '\0', and a zeroed struct strbuf is NOT valid: start
 * from STRBUF_INIT or strbuf_init().
 */
#ifndef GPUSCOPE_STRBUF_H
#define GPUSCOPE_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

struct strbuf {
	size_t alloc;
	size_t len;
	char *buf;
};

extern char strbuf_slopbuf[];
#define STRBUF_INIT                  \
	{                            \
		0, 0, strbuf_slopbuf \
	}

void strbuf_init(struct strbuf *sb, size_t hint);
/* Free the contents; the strbuf is then empty and reusable. */
void strbuf_release(struct strbuf *sb);
/* Hand the buffer to the caller (who frees it); the strbuf is reset. */
char *strbuf_detach(struct strbuf *sb, size_t *len);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_setlen(struct strbuf *sb, size_t len);
static inline void
strbuf_reset(struct strbuf *sb)
{
	strbuf_setlen(sb, 0);
}

void strbuf_add_slow(struct strbuf *sb, const void *data, size_t len);
static inline void
strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	/* the common case, room to spare, without a call */
	if (sb->alloc && len < sb->alloc - sb->len) {
		memcpy(sb->buf + sb->len, data, len);
		sb->len += len;
		sb->buf[sb->len] = '\0';
		return;
	}
	strbuf_add_slow(sb, data, len);
}
void strbuf_addstr(struct strbuf *sb, const char *s);
static inline void
strbuf_addbuf(struct strbuf *sb, const struct strbuf *other)
{
	strbuf_add(sb, other->buf, other->len);
}
static inline void
strbuf_addch(struct strbuf *sb, int c)
{
	char ch = (char)c;

	strbuf_add(sb, &ch, 1);
}
/* Append c n times. */
void strbuf_addchars(struct strbuf *sb, int c, size_t n);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
        __attribute__((format(printf, 2, 0)));
/* Remove trailing whitespace. */
void strbuf_rtrim(struct strbuf *sb);

/* A new string (the caller frees it) formatted as printf() would; aborts when out of memory. */
char *xstrfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xstrvfmt(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/*
 * Copy src into dst of size bytes, cutting it if needed; dst is always
 * NUL-terminated (when size > 0). Returns dst.
 */
char *str_copy(char *dst, size_t size, const char *src);

#endif
