/*
 * gpuscope burn's engine: a stress test of one device (bench/dev.h), run on
 * a thread of its own while the command samples the GPUs beside it.
 *
 * The GEMM load is gpu-burn's: two random n x n matrices A and B (a fixed
 * seed), result slots filling about 90 % of the free memory, each GEMM
 * writing the next slot, every slot compared on the device with the first
 * result (the reference, computed once and itself checked against sums in
 * double precision on sampled elements, so a device wrong from the start is
 * caught). Identical inputs on a healthy device give identical outputs, so
 * any element past the tolerance is silent data corruption.
 *
 * The tensor precisions (tf32, fp16, bf16) run the same load through
 * cuBLASLt (bench/cublaslt.h) on a CUDA device: the heuristic's first
 * algorithm, inputs exact in the type (bench_gemm_fill()), the reference
 * checked against bench_gemm_reference() (double sums of those inputs,
 * held to the type's own bound), the slots compared with gs_compare_f32
 * (fp16's binary16 output two elements a word, bit for bit).
 *
 * The memory test is cuda_memtest's and DCGM memtest's: walking ones and
 * zeros, moving inversions (the address pattern, then its complement) and
 * random patterns over the same memory, each word checked on the device.
 *
 * Nothing here prints: the command (src/cmd/burn.c) draws the lines.
 */
#ifndef GPUSCOPE_BENCH_BURN_H
#define GPUSCOPE_BENCH_BURN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bench_dev;

enum burn_precision {
	BURN_FP32,
	BURN_FP64,
	BURN_TF32,   /* cuBLASLt, fp32 in and out, TF32 tensor cores: sm_80 and later */
	BURN_FP16,   /* cuBLASLt, fp16 in and out, fp16 accumulate: sm_70 and later */
	BURN_BF16,   /* cuBLASLt, bf16 in, fp32 out and accumulate: sm_80 and later */
	BURN_TENSOR, /* the best of those the device has: bf16 (sm_80+), else fp16 (sm_70+) */
};

enum burn_memtest {
	BURN_MEMTEST_EDGES, /* default: a short pass before the GEMM load and one after */
	BURN_MEMTEST_ONLY,  /* the whole run is the memory test (--memtest) */
	BURN_MEMTEST_OFF,   /* the GEMM load alone (--no-memtest) */
};

#define BURN_MAX_N       8192           /* the GEMM's largest size (gpu-burn's) */
#define BURN_MIN_N       256            /* the smallest size the rule picks */
#define BURN_GEMM_MAX_S  0.5            /* the rule: one GEMM at most this long ... */
#define BURN_MEM_FRAC    0.9            /* ... buffers in this fraction of free memory ... */
#define BURN_MEM_MARGIN  (256ULL << 20) /* ... leaving at least this much free */
#define BURN_CPU_MAX_MEM (64ULL << 20)  /* a CPU device (PoCL): at most this much */
#define BURN_MAX_SLOTS   4096
#define BURN_SAMPLES     64  /* elements of the reference checked on the host */
#define BURN_EDGE_FRAC   0.1 /* each edge memtest pass: this fraction of the duration */
#define BURN_BATCH_S     1.0 /* GEMMs queued between two read-backs of the counts */

struct burn_opts {
	enum burn_precision precision;
	enum burn_memtest memtest;
	double duration;              /* seconds, setup included */
	size_t n;                     /* GEMM size; 0: the rule (burn_pick_n()) */
	unsigned long long max_bytes; /* at most this much device memory; 0: the rule alone */
	unsigned seed;                /* A and B; 0: the default */
};

void burn_opts_init(struct burn_opts *o);

/* "fp32", "fp64", "tf32", "fp16", "bf16", "tensor" */
const char *burn_precision_name(enum burn_precision p);
/* The precision named s into *p: 0, or -1 for a name not one of those. */
int burn_precision_parse(const char *s, enum burn_precision *p);
/* Whether p runs through cuBLASLt (tf32, fp16, bf16, tensor). */
bool burn_precision_tensor(enum burn_precision p);
/*
 * The precision p means on a CUDA device of compute capability
 * major.minor: tensor resolved (bf16 on 8.0 and later, fp16 on 7.x), the
 * others as they are. Returns 0, or -1 with why (size bytes) saying what
 * the device lacks ("bf16 needs tensor cores of compute capability 8.0 or
 * later; this device is 7.5").
 */
int burn_precision_resolve(enum burn_precision p, int major, int minor, enum burn_precision *out,
                           char *why, size_t size);
/* "edges", "only", "off" */
const char *burn_memtest_name(enum burn_memtest m);

enum burn_phase {
	BP_SETUP,
	BP_MEMTEST_START,
	BP_GEMM,
	BP_MEMTEST_END,
	BP_MEMTEST, /* --memtest */
	BP_DONE,
};
/* "setup", "memtest", "gemm", ... */
const char *burn_phase_name(enum burn_phase p);

enum burn_state {
	BS_RUNNING,
	BS_DONE,   /* ran to its end (or was stopped: see stopped) */
	BS_LOST,   /* E_LOST or E_TIMEOUT: the device is not used again */
	BS_FAILED, /* another call failed: it could not run */
};
/* "running", "done", "lost", "failed" */
const char *burn_state_name(enum burn_state s);

/* The memory test's patterns, in the order a pass runs them. */
struct burn_pattern {
	uint32_t pattern;
	int mode;      /* enum bench_mem_mode */
	char name[24]; /* "zeros", "walking-one-7", "inversion-a", "random-2" */
};
/* The i-th pattern of a pass (0 to burn_npatterns() - 1) into *p. */
unsigned burn_npatterns(void);
void burn_pattern(unsigned i, struct burn_pattern *p);

struct burn_stats {
	enum burn_precision precision; /* the one run: tensor resolved once the device is known */
	char library[48];              /* tensor precisions: "cuBLASLt 13.1.0", once loaded */
	enum burn_phase phase;
	enum burn_state state;
	bool stopped;    /* the stop flag ended it early */
	char error[320]; /* BS_LOST, BS_FAILED: the call and its error */
	double seconds;  /* since the start */

	/* the load */
	size_t n;
	unsigned slots;                  /* result slots, the reference's included */
	unsigned long long bytes;        /* device memory taken */
	double gemm_seconds;             /* one GEMM, as measured before the load */
	double tolerance;                /* of the device compare */
	bool ref_done;                   /* the reference was computed and checked */
	unsigned ref_checked, ref_wrong; /* sampled elements of the reference, and wrong ones */
	double ref_max_ratio;            /* the largest |got - want| / tolerance among them */
	unsigned long long gemms;        /* GEMMs compared with the reference */
	double load_seconds;             /* wall seconds of those */
	double tflops_last;              /* of the last batch */
	unsigned long long wrong;        /* elements past the tolerance, all GEMMs together */
	unsigned long long wrong_gemms;  /* GEMMs with at least one */

	/* the memory test */
	unsigned mem_chunks;
	unsigned long long mem_bytes;    /* tested at once */
	unsigned long long mem_patterns; /* patterns written and checked */
	unsigned mem_passes;             /* whole passes (every pattern) */
	unsigned long long mem_words;    /* words checked */
	unsigned long long mem_bad;      /* words that differed */
	bool mem_first_set;
	unsigned mem_first_chunk;
	uint64_t mem_first_index; /* word in that chunk */
	uint32_t mem_first_want, mem_first_got;
	bool mem_first_got_read; /* got could be read back */
	char mem_first_pattern[24];
};

/* Whether st shows a fault: a wrong element, a memtest error, a wrong reference, a lost device. */
bool burn_stats_fault(const struct burn_stats *st);

/*
 * One device's burn. init() takes d (not owned) and a stop flag shared by
 * every unit (non-zero: end as soon as the current step is done); run()
 * does the whole burn on the calling thread; start() runs it on a thread
 * of its own, join() waits for it.
 */
struct burn_unit {
	struct bench_dev *dev;
	struct burn_opts opts;
	atomic_int *stop;
	pthread_mutex_t lock;
	struct burn_stats st; /* under lock */
	double t0;            /* clock_mono() at the start of run() */
	pthread_t thread;
	bool started;
	atomic_bool finished;
};

void burn_unit_init(struct burn_unit *u, struct bench_dev *d, const struct burn_opts *o,
                    atomic_int *stop);
void burn_unit_run(struct burn_unit *u);
/* 0, or -1 when no thread could be made (then st says so). */
int burn_unit_start(struct burn_unit *u);
void burn_unit_join(struct burn_unit *u);
/* A copy of the unit's figures, from any thread. */
void burn_unit_stats(struct burn_unit *u, struct burn_stats *out);
void burn_unit_release(struct burn_unit *u);

/*
 * The size rule: the largest n, a power of two from BURN_MIN_N to
 * BURN_MAX_N (smaller only when memory allows no more), with A, B and two
 * result slots within budget bytes and one matrix within max_alloc; the
 * timing part of the rule (one GEMM at most BURN_GEMM_MAX_S) is applied by
 * the run, which measures. esize: 4 or 8. 0 when not even 16 fits.
 */
size_t burn_pick_n(unsigned long long budget, unsigned long long max_alloc, size_t esize);

/*
 * The memory a burn may take on a device with free bytes free (and total
 * total): BURN_MEM_FRAC of free, never more than free - BURN_MEM_MARGIN; a
 * CPU device at most a quarter of total and BURN_CPU_MAX_MEM; max (not 0)
 * caps it.
 */
unsigned long long burn_budget(unsigned long long free, unsigned long long total, bool cpu,
                               unsigned long long max);

/*
 * The device compare's tolerance for n x n: n x eps x sqrt(n) / 3, eps
 * FLT_EPSILON or DBL_EPSILON (sqrt(n) / 3 is the spread of an element of C
 * for entries uniform in [-1, 1)); tf32 and bf16 (fp32 out, tensor
 * accumulation of about 22 bits) with eps 2^-22; fp16 0, its binary16
 * results compared bit for bit (burn.c says why).
 */
double burn_tolerance(size_t n, enum burn_precision p);

#endif
