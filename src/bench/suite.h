/*
 * The measurements of gpuscope bench, written once over bench/dev.h so that
 * a figure means the same on every API: clpeak's FMA chains and mma, and
 * BabelStream's five kernels, nvbandwidth's host <-> device copies and the
 * launch latency, each calibrated, timed on the device's clock and checked.
 * Nothing here prints: the results go into an array the command draws, and a
 * progress callback says which test runs and how long is left.
 */
#ifndef GPUSCOPE_BENCH_SUITE_H
#define GPUSCOPE_BENCH_SUITE_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/peak.h"

struct bench_dev;
struct err;

/* Every test, in the order they run (30). */
#define BENCH_SUITE_MAX 30

enum bench_status {
	BENCH_MEASURED,    /* best and median hold the figures */
	BENCH_UNSUPPORTED, /* the device cannot run it (why says what it lacks) */
	BENCH_SKIPPED,     /* it could, but did not (not enough memory...) */
	BENCH_FAILED,      /* a call failed: why is the error line */
	BENCH_WRONG,       /* ran, but the result did not verify: why says how */
	BENCH_STOPPED,     /* the stop callback asked to stop before it finished */
};

/* "measured", "unsupported", ... */
const char *bench_status_name(enum bench_status s);

/* A figure beside best and median ("p99", "h2d"), in the result's unit. */
struct bench_extra {
	const char *name;
	double value;
};

struct bench_result {
	const char *name; /* "stream.triad": the test's name, a static string */
	const char *unit; /* "GFLOP/s", "GOP/s", "GB/s" or "us" */
	enum bench_status status;
	char why[256]; /* the reason for every status but measured */
	double best;   /* a rate: the highest; "us": the lowest */
	double median; /* of the samples */
	unsigned samples;
	double seconds; /* wall time the test took, set-up and checks included */
	double count;   /* bytes or operations one sample counts */
	char note[192]; /* how it was measured where it matters, or "" */
	struct bench_extra extra[3];
	unsigned nextra;
	struct bench_peak peak; /* left empty here: bench_peak_fill() */
};

/*
 * progress(arg, test, done, left_s): test starts or is done to the fraction
 * done (0 to 1); left_s estimates the seconds left of the whole run.
 */
typedef void bench_progress_fn(void *arg, const char *test, double done, double left_s);

/*
 * A run's stop and progress bookkeeping, one for bench_suite_run() and
 * bench_p2p_run(): the caller's stop and progress callbacks, whether stop
 * has said so (it is asked once more only until it has), and the plan's
 * seconds, of the test running (cur_plan, named test) and of those not yet
 * started (plan_left), from which the time left is told.
 */
struct bench_pace {
	int (*stop)(void);
	bench_progress_fn *progress;
	void *progress_arg;
	bool stopped;
	double plan_left, cur_plan;
	const char *test;
};

/* Whether to stop now: once the callback has said so, every later call says so too. */
bool bench_pace_stop(struct bench_pace *p);
/* Tell the progress callback (if any) that p->test is done to the fraction done. */
void bench_pace_progress(const struct bench_pace *p, double done);

struct bench_suite_opts {
	bool quick;               /* about 15 s a device in all */
	double target_s;          /* a calibrated test's time; 0: 0.5 s (quick 0.1) */
	const char *const *tests; /* names or prefixes ("stream", "fma.fp32"); NULL: all */
	size_t ntests;
	int (*stop)(void); /* non-zero: stop now (checked between launches); NULL: never */
	unsigned long long
	        mem_limit; /* device bytes the suite may hold at once; 0: free less a margin */
	unsigned long long host_limit; /* host bytes for copy buffers; 0: MemAvailable / 4 */
	unsigned stream_reps;          /* BabelStream's repetitions; 0: 100 (quick 20) */
	bench_progress_fn *progress;
	void *progress_arg;
};

/* The name of test i (0 to BENCH_SUITE_MAX - 1), in run order. */
const char *bench_suite_test_name(size_t i);
/* Whether pattern names a test or is a prefix of tests' names ("stream", "fma."). */
bool bench_suite_pattern_valid(const char *pattern);

/*
 * Run the selected tests on d, one result each in res[] (room for
 * BENCH_SUITE_MAX) in run order, their number in *nres. Every buffer is
 * freed on every path. An E_LOST or E_TIMEOUT from d fails every later test
 * ("device lost: ..."), and the device must not be used again (the return
 * value is then that status). Returns 0 otherwise, 1 when stopped by
 * opts->stop; a test's own failures are in its result only.
 */
int bench_suite_run(struct bench_dev *d, const struct bench_suite_opts *opts,
                    struct bench_result *res, size_t *nres, struct err *err);

/*
 * The sizes the suite picks, for tests and the command's notes. budget:
 * device bytes the suite may hold. 0 when nothing fits.
 */
/* FMA work-items: max(32 Mi, units x 2048 x 256) on a GPU, units x 4096 on a CPU, in 256s. */
unsigned long long bench_suite_fma_items(const struct bench_dev_info *info,
                                         unsigned long long budget);
/* BabelStream's n: max(2^25, 4 x L2 / 4) floats, three arrays in free / 4 and budget, in 1024s. */
unsigned long long bench_suite_stream_n(const struct bench_dev_info *info,
                                        unsigned long long free_bytes, unsigned long long budget);

#endif
