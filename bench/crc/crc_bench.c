/*
 * CRC-32 of the flight recorder's records: zlib's crc32() against the
 * byte-at-a-time table gpuscope had before (src/core/record.c up to format
 * version 1; the same CRC, IEEE 802.3 reflected), side by side in one run.
 *
 *   bench/crc/crc_bench [RECORD_BYTES [RUNS]]    (default 1549 and 15)
 *
 * Each run checksums 20000 buffers of RECORD_BYTES (the recorder's average
 * record of bench/record.sh: 8 H100s and 50 processes, 1549 bytes) over a
 * 4 MiB pool, so that the data is not all in L1; prints the median of the
 * runs in ns per record and MB/s for each, and the ratio. bench/crc/run.sh
 * builds and runs it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#define POOL    (4u << 20)
#define PER_RUN 20000u

static uint32_t table[256];

static void
make_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
		table[i] = c;
	}
}

/* The private implementation, as it was: one table lookup per byte. */
static uint32_t
crc_table(uint32_t crc, const unsigned char *p, size_t len)
{
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static uint32_t
crc_zlib(uint32_t crc, const unsigned char *p, size_t len)
{
	return (uint32_t)crc32(crc, p, (uInt)len);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ns per record of one run; *sink keeps the work from being optimised away. */
static double
run(uint32_t (*f)(uint32_t, const unsigned char *, size_t), const unsigned char *pool, size_t len,
    uint32_t *sink)
{
	double t0 = now();
	size_t off = 0;

	for (unsigned i = 0; i < PER_RUN; i++) {
		/* as the recorder does: the 5 bytes of length and type, then the payload */
		*sink ^= f(f(0, pool + off, 5), pool + off + 5, len - 5);
		off += len;
		if (off + len > POOL)
			off = 0;
	}
	return (now() - t0) / PER_RUN * 1e9;
}

int
main(int argc, char **argv)
{
	size_t len = argc > 1 ? strtoul(argv[1], NULL, 10) : 1549;
	unsigned runs = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 15;
	unsigned char *pool = malloc(POOL);
	double *tt, *tz, mt, mz;
	uint32_t st = 0, sz = 0, x = 2463534242u;

	if (!pool || len < 6 || len > POOL || runs < 1 || runs > 1000) {
		fprintf(stderr, "usage: crc_bench [RECORD_BYTES (6 to %u) [RUNS (1 to 1000)]]\n",
		        POOL);
		return 2;
	}
	tt = calloc(runs, sizeof(*tt));
	tz = calloc(runs, sizeof(*tz));
	for (size_t i = 0; i < POOL; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		pool[i] = (unsigned char)x;
	}
	make_table();
	if (crc_table(0, pool, POOL) != crc_zlib(0, pool, POOL)) {
		fprintf(stderr, "crc_bench: the two CRCs differ: a bug in this program\n");
		return 1;
	}
	/* interleaved, so that both see the same state of the machine */
	for (unsigned r = 0; r < runs; r++) {
		tt[r] = run(crc_table, pool, len, &st);
		tz[r] = run(crc_zlib, pool, len, &sz);
	}
	qsort(tt, runs, sizeof(*tt), cmp_dbl);
	qsort(tz, runs, sizeof(*tz), cmp_dbl);
	mt = tt[runs / 2];
	mz = tz[runs / 2];
	if (st != sz) {
		fprintf(stderr, "crc_bench: the two CRCs differ: a bug in this program\n");
		return 1;
	}
	printf("record of %zu bytes, median of %u runs of %u records\n", len, runs, PER_RUN);
	printf("table (private, byte at a time): %8.1f ns per record  %8.1f MB/s\n", mt,
	       (double)len / mt * 1e3);
	printf("zlib %-26s %8.1f ns per record  %8.1f MB/s\n", zlibVersion(), mz,
	       (double)len / mz * 1e3);
	printf("zlib is %.1f times as fast\n", mt / mz);
	free(pool);
	free(tt);
	free(tz);
	return 0;
}
