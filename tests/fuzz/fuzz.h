/*
 * Shared bits of the libFuzzer targets in tests/fuzz/ (see run.sh): the
 * entry point's prototype and a check that reports which invariant broke
 * before it aborts, so that libFuzzer saves the input as a crash.
 */
#ifndef GPUSCOPE_FUZZ_H
#define GPUSCOPE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                             \
	do {                                                                              \
		if (!(cond)) {                                                            \
			fprintf(stderr, "\nfuzz check failed at %s:%d: %s\n  ", __FILE__, \
			        __LINE__, #cond);                                         \
			fprintf(stderr, __VA_ARGS__);                                     \
			fputc('\n', stderr);                                              \
			abort();                                                          \
		}                                                                         \
	} while (0)

/* A NUL-terminated copy of the input (cut at its first NUL, as a C string is). */
static inline char *
fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Print s with C escapes, for the failure messages. */
static inline void
fuzz_dump(const char *what, const char *s, size_t n)
{
	fprintf(stderr, "  %s (%zu bytes): \"", what, n);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(stderr, "\\%c", c);
		else if (c >= 0x20 && c < 0x7f)
			fputc(c, stderr);
		else
			fprintf(stderr, "\\x%02x", c);
	}
	fprintf(stderr, "\"\n");
}

#endif
