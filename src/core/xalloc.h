/*
 * Allocation that never returns NULL: out of memory is not an error path in
 * gpuscope, it aborts with a message. Also the small array helpers every
 * module uses (ALLOC_GROW, ARRAY_SIZE, container_of).
 */
#ifndef GPUSCOPE_XALLOC_H
#define GPUSCOPE_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t n) __attribute__((malloc, alloc_size(1)));
void *xcalloc(size_t nmemb, size_t size) __attribute__((malloc, alloc_size(1, 2)));
void *xrealloc(void *p, size_t n) __attribute__((alloc_size(2)));
char *xstrdup(const char *s) __attribute__((malloc));
char *xstrndup(const char *s, size_t n) __attribute__((malloc));

/* a * b, aborting on overflow */
size_t st_mult(size_t a, size_t b);
/* a + b, aborting on overflow */
size_t st_add(size_t a, size_t b);

/* Print "gpuscope: fatal: ..." and abort; for impossible states only. */
void BUG_fl(const char *file, int line, const char *fmt, ...)
        __attribute__((noreturn, format(printf, 3, 4)));
#define BUG(...) BUG_fl(__FILE__, __LINE__, __VA_ARGS__)

#define ARRAY_SIZE(a)                                                                             \
	(sizeof(a) / sizeof((a)[0]) +                                                             \
	 sizeof(char[1 - 2 * __builtin_types_compatible_p(__typeof__(a), __typeof__(&(a)[0]))]) - \
	 1)

#define container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

#define FREE_AND_NULL(p)    \
	do {                \
		free(p);    \
		(p) = NULL; \
	} while (0)

/* Grow array x (x_alloc slots, x_nr used) so that at least nr slots exist. */
#define ALLOC_GROW(x, nr, alloc)                                                      \
	do {                                                                          \
		if ((nr) > (alloc)) {                                                 \
			size_t alloc_grow_n_ = (alloc) < 8 ? 8 : st_mult((alloc), 2); \
			if (alloc_grow_n_ < (nr))                                     \
				alloc_grow_n_ = (nr);                                 \
			(x) = xrealloc((x), st_mult(alloc_grow_n_, sizeof(*(x))));    \
			(alloc) = alloc_grow_n_;                                      \
		}                                                                     \
	} while (0)

#endif
