/*
 * A tiny TAP producer for the C unit tests: ok(), is_int(), is_str(),
 * is_dbl(), diag(), skip(), skip_missing() and done_testing(). Each t_*.c is one program;
 * tests/run-tests.sh counts its "ok"/"not ok" lines.
 */
#ifndef GPUSCOPE_TEST_HARNESS_H
#define GPUSCOPE_TEST_HARNESS_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int harness_n, harness_failed;

static inline void __attribute__((format(printf, 1, 2))) diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static inline int __attribute__((format(printf, 4, 5)))
ok_at(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	harness_n++;
	printf("%sok %d - ", cond ? "" : "not ", harness_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		harness_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) ok_at(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_int(got, want, ...)                                                  \
	do {                                                                    \
		long long is_g_ = (long long)(got), is_w_ = (long long)(want);  \
		if (!ok(is_g_ == is_w_, __VA_ARGS__))                           \
			diag("     got: %lld\n#   wanted: %lld", is_g_, is_w_); \
	} while (0)

#define is_dbl(got, want, eps, ...)                                               \
	do {                                                                      \
		double is_g_ = (got), is_w_ = (want);                             \
		if (!ok(fabs(is_g_ - is_w_) <= (eps), __VA_ARGS__))               \
			diag("     got: %.17g\n#   wanted: %.17g", is_g_, is_w_); \
	} while (0)

#define is_str(got, want, ...)                                                             \
	do {                                                                               \
		const char *is_g_ = (got), *is_w_ = (want);                                \
		int is_eq_ = (is_g_ && is_w_) ? !strcmp(is_g_, is_w_) : is_g_ == is_w_;    \
		if (!ok(is_eq_, __VA_ARGS__))                                              \
			diag("     got: '%s'\n#   wanted: '%s'", is_g_ ? is_g_ : "(null)", \
			     is_w_ ? is_w_ : "(null)");                                    \
	} while (0)

/* A case that cannot run, whatever the machine (by design): a skip. */
static inline void
skip(const char *why)
{
	harness_n++;
	printf("ok %d # SKIP %s\n", harness_n, why);
}

/*
 * A case that cannot run for want of something an install provides (a tool
 * CI installs): a skip, or a failure under GPUSCOPE_NO_SKIP=1.
 */
static inline void
skip_missing(const char *why)
{
	const char *no_skip = getenv("GPUSCOPE_NO_SKIP");

	if (no_skip && !strcmp(no_skip, "1"))
		ok(0, "%s (GPUSCOPE_NO_SKIP=1: a skip is a failure)", why);
	else
		skip(why);
}

static inline int
done_testing(void)
{
	printf("1..%d\n", harness_n);
	return harness_failed ? 1 : 0;
}

#endif
