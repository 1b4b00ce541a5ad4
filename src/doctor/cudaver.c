/*
 * The CUDA release table (data/cuda/drivers.tsv, built in by cuda_data.S),
 * parsed once on first use, and what it says about a driver.
 */
#include "doctor/cudaver.h"

#include <ctype.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

extern const char cuda_drivers_tsv[], cuda_drivers_tsv_end[];

static struct cuda_release *table;
static size_t table_nr;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

int
ver_cmp(const char *a, const char *b)
{
	while (*a || *b) {
		unsigned long x = 0, y = 0;

		while (isdigit((unsigned char)*a))
			x = x * 10 + (unsigned long)(*a++ - '0');
		while (isdigit((unsigned char)*b))
			y = y * 10 + (unsigned long)(*b++ - '0');
		if (x != y)
			return x < y ? -1 : 1;
		/* skip to the next number; a missing field counts as 0 */
		while (*a && !isdigit((unsigned char)*a))
			a++;
		while (*b && !isdigit((unsigned char)*b))
			b++;
	}
	return 0;
}

/* ">=575.51.03" -> "575.51.03"; "?" -> "" */
static void
cell_driver(char *dst, size_t size, const char *cell, size_t len)
{
	if (len >= 2 && cell[0] == '>' && cell[1] == '=') {
		cell += 2;
		len -= 2;
	}
	if (len == 1 && cell[0] == '?')
		len = 0;
	snprintf(dst, size, "%.*s", (int)len, cell);
}

static void
parse_table(void)
{
	const char *p = cuda_drivers_tsv, *end = cuda_drivers_tsv_end;
	size_t alloc = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *cell[5];
		size_t len[5], n = 0;
		struct cuda_release *r;
		const char *q;

		if (!eol)
			eol = end;
		if (*p == '#' || eol == p || !strncmp(p, "cuda\t", 5)) {
			p = eol + 1;
			continue;
		}
		for (q = p; n < 5 && q <= eol; n++) {
			const char *tab = memchr(q, '\t', (size_t)(eol - q));

			cell[n] = q;
			len[n] = (size_t)((tab ? tab : eol) - q);
			q = (tab ? tab : eol) + 1;
		}
		if (n >= 4 && isdigit((unsigned char)*cell[0])) {
			ALLOC_GROW(table, table_nr + 1, alloc);
			r = &table[table_nr++];
			memset(r, 0, sizeof(*r));
			snprintf(r->cuda, sizeof(r->cuda), "%.*s", (int)len[0], cell[0]);
			sscanf(r->cuda, "%d.%d", &r->major, &r->minor);
			cell_driver(r->min_driver, sizeof(r->min_driver), cell[1], len[1]);
			cell_driver(r->compat_driver, sizeof(r->compat_driver), cell[2], len[2]);
			r->nvml = (int)strtol(cell[3], NULL, 10);
		}
		p = eol + 1;
	}
}

size_t
cuda_releases(const struct cuda_release **out)
{
	pthread_once(&table_once, parse_table);
	*out = table;
	return table_nr;
}

const struct cuda_release *
cuda_release_find(int major, int minor)
{
	const struct cuda_release *t;
	size_t n = cuda_releases(&t);

	for (size_t i = 0; i < n; i++)
		if (t[i].major == major && t[i].minor == minor)
			return &t[i];
	return NULL;
}

int
cuda_for_driver(const char *driver)
{
	const struct cuda_release *t;
	size_t n = cuda_releases(&t);
	int best = 0;

	if (!driver || !isdigit((unsigned char)*driver))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (t[i].min_driver[0] && ver_cmp(driver, t[i].min_driver) >= 0 && t[i].nvml > best)
			best = t[i].nvml;
	return best;
}

enum cuda_support
cuda_support(int driver_cuda, const char *driver, int major, int minor)
{
	int want = major * 1000 + minor * 10;
	bool have_driver = driver && isdigit((unsigned char)*driver);
	const struct cuda_release *rel;

	if (!driver_cuda && have_driver) {
		driver_cuda = cuda_for_driver(driver);
		/* a readable driver older than every row predates CUDA 10.0 */
		if (!driver_cuda)
			return major >= 10 ? CUDA_TOO_NEW : CUDA_UNKNOWN;
	}
	if (!driver_cuda)
		return CUDA_UNKNOWN;
	if (want <= driver_cuda)
		return CUDA_FULL;
	/* minor-version compatibility: CUDA 11 on, within one major family */
	if (major < 11 || driver_cuda / 1000 != major)
		return CUDA_TOO_NEW;
	rel = cuda_release_find(major, minor);
	if (!have_driver || !rel || !rel->compat_driver[0]) {
		/*
		 * Without the driver's version, trust the family: every driver of a
		 * 12.x or 13.x CUDA version meets its family's floor. Not 11.0: its
		 * drivers (450.51.0x) are below the 11.x floor of 450.80.02.
		 */
		if (driver_cuda == 11000 && !have_driver)
			return CUDA_UNKNOWN;
		return CUDA_MINOR_COMPAT;
	}
	return ver_cmp(driver, rel->compat_driver) >= 0 ? CUDA_MINOR_COMPAT : CUDA_TOO_NEW;
}

int
cuda_toolkit_for(int driver_cuda)
{
	const struct cuda_release *t;
	size_t n = cuda_releases(&t);
	int best = 0, newest = 0;

	for (size_t i = 0; i < n; i++) {
		if (t[i].nvml > newest)
			newest = t[i].nvml;
		if (t[i].nvml <= driver_cuda && t[i].nvml > best)
			best = t[i].nvml;
	}
	if (driver_cuda <= 0)
		return 0;
	return driver_cuda > newest ? driver_cuda : best;
}

const char *
cuda_ver_str(int nvml, char *buf, size_t size)
{
	snprintf(buf, size, "%d.%d", nvml / 1000, nvml % 1000 / 10);
	return buf;
}
