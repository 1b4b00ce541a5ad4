/*
 * What GPUs cost to rent: a table of offers (data/prices/prices.tsv, built
 * into the binary, or a file of the user's own contract in the same format)
 * and the arithmetic of `gpuscope fit --rent`: the cheapest offer for a row
 * of the spec table, the price of k GPUs per hour, per million tokens at a
 * rate, and per run of T tokens; and how old the table is. Pure functions
 * but for price_load_file(), which reads the file.
 */
#ifndef GPUSCOPE_PRICE_H
#define GPUSCOPE_PRICE_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct err;
struct gpu_spec;

/*
 * A table is old when its newest price was read more than this many days
 * before now. On-demand GPU prices move by tens of percent within half a
 * year (H100 on-demand fell from about 8 to 2-3 USD per GPU-hour in
 * 2023-2025 on the GPU clouds; AWS cut P4/P5 prices by up to 45 % on
 * 2025-06-01), so after 180 days a price is likelier off by more than the
 * 15 % fit's other figures aim at than not: say so, and name the date.
 */
#define PRICE_OLD_DAYS 180

/* The most bytes a prices file may have: a table of every offer of every cloud is far less. */
#define PRICE_FILE_MAX (1u << 20)

enum price_kind {
	PRICE_ON_DEMAND = 1, /* "on-demand": by the hour, no commitment */
	PRICE_SPOT = 2,      /* "spot": interruptible */
	PRICE_RESERVED = 4,  /* "reserved": a commitment (1 year, 3 years, a contract) */
	PRICE_ANY = 7,
};

struct price_offer {
	const struct gpu_spec *gpu; /* the spec row the file's gpu cell names */
	double usd_per_gpu_hour;    /* > 0 */
	unsigned gpus;              /* GPUs per instance: k GPUs are rented in whole instances */
	const char *provider;       /* "AWS", "Lambda", ... */
	enum price_kind kind;
	long date;          /* the day the price was read: days since 1970-01-01; -1 unknown */
	const char *date_s; /* the same as written, "2026-11-30"; "" unknown */
	const char *source; /* URL; "" where a user file gives none */
	const char *notes;  /* instance, region; "" when none */
	unsigned line;      /* line in the file, for messages */
};

struct price_table {
	struct price_offer *offer;
	size_t nr;
	const char *origin; /* "built-in table" or the file's path (as given) */
	bool builtin;
	/*
	 * Dates (days since 1970-01-01) of the newest and oldest offer; -1 when
	 * no offer has a date (a user's file may leave it "?": never old then).
	 */
	long newest, oldest;
	/* owned: the cells point into text_ */
	char *text_, *origin_;
	size_t alloc_;
};

/*
 * Parse the built-in table into t. Fails only if the built-in file is
 * broken (a test catches that). Returns 0 or a negative status.
 */
int price_load_builtin(struct price_table *t, struct err *err);

/*
 * Read path (a regular file of at most PRICE_FILE_MAX bytes; a FIFO,
 * directory, device, symlink loop or larger file is refused without
 * waiting) and parse it into t. Returns 0, or E_NOTFOUND / E_PERM / E_IO /
 * E_PARSE with one line in err naming the file (and for E_PARSE the line,
 * column and what is wrong).
 */
int price_load_file(struct price_table *t, const char *path, struct err *err);

/*
 * Parse len bytes of text (the TSV format of data/prices/README.md) into t;
 * origin names it in messages. The gpu cell is matched with
 * gpu_spec_find()'s rules and must name exactly one row. A file with no
 * offer is an error. Returns 0 or E_PARSE.
 */
int price_parse(struct price_table *t, const char *text, size_t len, const char *origin,
                struct err *err);

/* Free what t holds; t is empty after it. */
void price_free(struct price_table *t);

/*
 * The cheapest offer for k GPUs of g (k >= 1) among the kinds in mask
 * (PRICE_ON_DEMAND, ...), by price_per_hour(o, k): an offer of 8-GPU
 * instances costs 8 GPUs for k = 1. NULL when there is none. Ties go to
 * the newest, then to the first.
 */
const struct price_offer *price_cheapest(const struct price_table *t, const struct gpu_spec *g,
                                         double k, unsigned mask);

/*
 * The kinds fit ranks by unless told: on-demand for the built-in table
 * (spot is interruptible and reserved needs a commitment, neither is what
 * "rent" means by default), any kind for a user's file (their contract).
 */
unsigned price_default_kinds(const struct price_table *t);

/*
 * Days from the table's newest price to now (may be negative if now is
 * earlier); NAN when no offer has a date.
 */
double price_age_days(const struct price_table *t, time_t now);

/* Days from o's date to now; NAN when it has none. */
double price_offer_age_days(const struct price_offer *o, time_t now);

/* Whether the table is old: price_age_days() > PRICE_OLD_DAYS. */
bool price_is_old(const struct price_table *t, time_t now);

/*
 * USD per hour for k GPUs of offer o (k >= 1): whole instances of o->gpus,
 * ceil(k / gpus) * gpus GPU-hours at usd_per_gpu_hour; NAN for a bad k.
 */
double price_per_hour(const struct price_offer *o, double k);

/*
 * USD per million tokens at tokens_per_s (aggregate over the k GPUs the
 * hourly price is for): usd_per_hour / (tokens_per_s * 3600) * 1e6. NAN
 * when tokens_per_s or usd_per_hour is not > 0 and finite.
 */
double price_per_mtok(double usd_per_hour, double tokens_per_s);

/*
 * USD for a run of tokens tokens at tokens_per_s: usd_per_hour * hours,
 * hours = tokens / tokens_per_s / 3600. NAN on bad input. price_run_hours()
 * is the hours alone.
 */
double price_per_run(double usd_per_hour, double tokens, double tokens_per_s);
double price_run_hours(double tokens, double tokens_per_s);

/* "on-demand", "spot", "reserved" (what the file says); "" for anything else. */
const char *price_kind_name(enum price_kind k);

/* The date of the table's newest offer as written ("2026-11-30"); "" for an empty table. */
const char *price_newest_s(const struct price_table *t);

/* Parse "YYYY-MM-DD" (a real calendar day, year 1970-9999) into days since 1970-01-01; -1 if not.
 */
long price_parse_date(const char *s);

#endif
