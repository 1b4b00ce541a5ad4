/*
 * The bench store: what `gpuscope bench` measured, kept per GPU (one JSON
 * file named by the GPU's UUID, schema gpuscope.bench.store/1, docs/bench.md)
 * so that `gpuscope fit` uses this GPU's measured bandwidth and FLOPS and
 * `gpuscope doctor` can tell a GPU that measures far below its model.
 *
 * Where: GPUSCOPE_BENCH_DIR when set (tests); else writes go to the system
 * place, /var/lib/gpuscope/bench (readable by every user; created 0755 when
 * run as root, used by others when they may write there), or failing that to
 * the user's $XDG_STATE_HOME/gpuscope/bench (~/.local/state/gpuscope/bench);
 * reads look in the user's place, then the system's, and take the newest
 * record. Files are written atomically (a temporary file in the same
 * directory, fsync, rename) and 0644; a symlink, FIFO or anything but a
 * regular file where a record should be is refused, never followed.
 */
#ifndef GPUSCOPE_CORE_BENCHSTORE_H
#define GPUSCOPE_CORE_BENCHSTORE_H

#include <stdbool.h>
#include <stddef.h>

struct err;
struct strbuf;

#define BENCH_STORE_SCHEMA     "gpuscope.bench.store/1"
#define BENCH_STORE_ENV        "GPUSCOPE_BENCH_DIR"
#define BENCH_STORE_SYSTEM_DIR "/var/lib/gpuscope/bench"
/* A record file larger than this is refused (a full run is about 10 kB). */
#define BENCH_STORE_MAX_BYTES (1024 * 1024)
/* Figures of one record at most. */
#define BENCH_STORE_MAX_FIGURES 256

/* One measured figure. Numbers NAN (or 0 for clocks and the link) when unknown. */
struct bench_figure {
	char test[48];            /* "stream.triad", "fma.fp32", "mma.bf16", "h2d.pinned", ... */
	char unit[16];            /* "GB/s", "GFLOP/s", "us" */
	double best;              /* the best sample */
	double median;            /* the median sample */
	double spec;              /* the spec sheet's figure it was held against */
	double clock_peak;        /* the peak derived from the clocks seen */
	double link_gbs;          /* the PCIe link's theoretical rate during the test, GB/s */
	double time;              /* when it was measured, seconds since the epoch */
	char driver[64];          /* the driver version then (NVML's "550.54.15"), or "" */
	unsigned sm_mhz, mem_mhz; /* clocks seen during the test, 0 unknown */
	unsigned pcie_gen, pcie_width; /* the link during the test, 0 unknown */
	unsigned throttle;             /* enum clock_reason bits seen during the test */
	char notes[256];               /* free text ("no spin kernel: ..."), or "" */
};

/* What is kept of one GPU. A zeroed record is empty and valid. */
struct bench_record {
	char uuid[96];       /* "GPU-0c3c...": the file's name */
	char name[128];      /* the device's name */
	char pci_bus_id[32]; /* "0000:17:00.0" */
	char driver[64];     /* the driver version of the latest run */
	char version[32];    /* gpuscope's version of the latest run */
	char host[256];      /* the host name of the latest run */
	double time;         /* the latest run, seconds since the epoch */
	struct bench_figure *fig;
	size_t nr_fig, alloc_fig;
	char path[4096]; /* the file it was read from, or "" */
};

void bench_record_release(struct bench_record *r);
/* A figure with every number unknown and test set to name (cut to fit). */
void bench_figure_init(struct bench_figure *f, const char *test);
/* Add f to r, replacing a figure of the same test unless that one is newer. */
void bench_record_set(struct bench_record *r, const struct bench_figure *f);
/* r's figure for test, or NULL. */
const struct bench_figure *bench_record_find(const struct bench_record *r, const char *test);

/*
 * f's value v (its best, median, spec or clock peak, in f's unit) in
 * multiples of scale (1e9: GB/s or GFLOP/s; 1e12: TFLOP/s), when f's unit
 * is kind ("B/s", "FLOP/s"; "OP/s", "OPS" and "FLOPS" count as FLOP/s) with
 * an M, G or T before it; NAN otherwise.
 */
double bench_figure_in(const struct bench_figure *f, double v, const char *kind, double scale);

/* Whether uuid can name a record file: 1 to 95 of [A-Za-z0-9-]. */
bool bench_store_uuid_ok(const char *uuid);

/* r as the store's JSON document. */
void bench_record_json(const struct bench_record *r, struct strbuf *sb);
/*
 * Parse a store document (len bytes at buf, the file name, for messages)
 * into r (released first). Returns 0, or E_PARSE with err set to one line
 * naming name: malformed JSON, another schema, a member of the wrong type,
 * a UUID that cannot name a file.
 */
int bench_record_parse(const char *buf, size_t len, const char *name, struct bench_record *r,
                       struct err *err);

/* The places of the store: each an absolute directory, or "" for none. */
struct bench_store_dirs {
	char env[4096];    /* GPUSCOPE_BENCH_DIR: the only place when set */
	char user[4096];   /* $XDG_STATE_HOME/gpuscope/bench */
	char system[4096]; /* BENCH_STORE_SYSTEM_DIR (under a --root tree: root/var/lib/...) */
};

/*
 * Fill d from the environment (getenv_fn: getenv, or a test's) and root
 * (what stands for /; NULL or "/" is the machine itself: under another root
 * there is no user place, and the system place is root's).
 */
void bench_store_dirs_init(struct bench_store_dirs *d, const char *(*getenv_fn)(const char *),
                           const char *root);

/*
 * Merge r's figures into what is stored for r->uuid (every place that can
 * be read: a later quick run of some tests keeps the others' figures) and
 * save the result in the place writes go to, creating its directory.
 * r's identity (name, bus id, driver, version, host, time) replaces the
 * stored one. where (size bytes, may be NULL) receives the file written.
 * Returns 0, E_USAGE (a UUID that cannot name a file), E_PARSE (the record
 * to be replaced is malformed: it is left as it is), E_PERM, E_IO.
 */
int bench_store_put(const struct bench_store_dirs *d, const struct bench_record *r, char *where,
                    size_t size, struct err *err);

/*
 * The newest stored record of uuid into out (released first). Returns 0,
 * E_NOTFOUND when no place has one, or another status (E_PARSE, E_IO,
 * E_PERM, E_USAGE) with err set when the only record found cannot be read.
 */
int bench_store_get(const struct bench_store_dirs *d, const char *uuid, struct bench_record *out,
                    struct err *err);

/*
 * Every stored record (one per UUID, the newest), sorted by UUID, into a
 * new array *out of *nr (free with bench_store_list_free). Files that
 * cannot be read are passed over; the first one's error is in err. Returns 0
 * (an empty or missing store is no error).
 */
int bench_store_list(const struct bench_store_dirs *d, struct bench_record **out, size_t *nr,
                     struct err *err);
void bench_store_list_free(struct bench_record *v, size_t nr);

/* Where writes go now (the directory), and why, for --help and docs: a few lines into sb. */
void bench_store_explain(const struct bench_store_dirs *d, struct strbuf *sb);

/* The directory a write would go to, into buf; false when there is none. */
bool bench_store_write_dir(const struct bench_store_dirs *d, char *buf, size_t size);

#endif
