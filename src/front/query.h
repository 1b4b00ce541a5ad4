/*
 * nvidia-smi's --query-gpu and --query-compute-apps interface: the field
 * names (with nvidia-smi's aliases), the --format options, and the CSV
 * itself, spelled value for value as nvidia-smi spells it ("81559 MiB",
 * "631.95 W", "P0", "Enabled", "0x233010DE", "[N/A]", ...), so that
 * scripts written for nvidia-smi keep working on gpuscope's snapshot.
 *
 * Everything here is a pure function of its arguments: no I/O, no clock
 * (the timestamp column is the snapshot's time in the local time zone).
 */
#ifndef GPUSCOPE_QUERY_H
#define GPUSCOPE_QUERY_H

#include <stdbool.h>
#include <stddef.h>

struct err;
struct gpu_snapshot;
struct strbuf;

enum query_kind {
	QUERY_GPU,  /* --query-gpu: one line per GPU */
	QUERY_APPS, /* --query-compute-apps: one line per compute (or MPS) process */
};

/* What --format asks for; "csv" alone is both false. */
struct query_format {
	bool noheader; /* no header line */
	bool nounits;  /* values without their unit ("81559", not "81559 MiB") */
};

/*
 * A validated list of fields to print, in the order asked for (repeats
 * allowed). A zeroed struct query is a valid empty --query-gpu list.
 */
struct query {
	enum query_kind kind;
	unsigned *field; /* ids into the field table of kind */
	size_t nr, alloc;
	struct query_format fmt;
};

#define QUERY_INIT                     \
	{                              \
		QUERY_GPU, NULL, 0, 0, \
		{                      \
			false, false   \
		}                      \
	}

void query_init(struct query *q, enum query_kind kind);
void query_release(struct query *q);

/*
 * Append the fields of a comma-separated list ("name,memory.used") to q.
 * Blanks around names and empty items are ignored; names match case-
 * insensitively, aliases included ("gpu_name" is "name"). Returns 0, or
 * E_USAGE with a message naming the first bad field: an unknown one (with
 * up to three close matches), or one nvidia-smi has that gpuscope does not
 * support. q is unchanged on error.
 */
int query_add_fields(struct query *q, const char *list, struct err *err);

/*
 * Parse a --format value: "csv" plus optional "noheader" and "nounits", in
 * any order, separated by commas. Returns 0, or E_USAGE with a message.
 */
int query_parse_format(struct query_format *fmt, const char *spec, struct err *err);

/*
 * Append the CSV for snap to out: the header line (unless fmt.noheader),
 * then one line per device of snap (QUERY_GPU) or per process with a
 * compute or MPS context (QUERY_APPS), values joined by ", ". As in
 * nvidia-smi the header names each field by its main name and keeps the
 * unit in brackets even with nounits ("memory.used [MiB]").
 */
void query_print(const struct query *q, const struct gpu_snapshot *snap, struct strbuf *out);

/*
 * Append the value of field id of kind for row `row` of snap (a device
 * index for QUERY_GPU, a process index for QUERY_APPS), as query_print()
 * spells it. id and row must be in range.
 */
void query_value(enum query_kind kind, unsigned id, const struct gpu_snapshot *snap, size_t row,
                 bool nounits, struct strbuf *out);

/* Field id of name (main name or alias, any case), or -1. */
int query_field_lookup(enum query_kind kind, const char *name);
/* Number of supported fields of kind; ids run from 0 to this minus one. */
unsigned query_field_count(enum query_kind kind);
/* Main name of a field ("memory.used"). */
const char *query_field_name(enum query_kind kind, unsigned id);
/* Unit shown in the header ("MiB"), or NULL when the field has none. */
const char *query_field_unit(enum query_kind kind, unsigned id);

/*
 * Append the --help-query-gpu (or --help-query-compute-apps) text: every
 * supported field with its aliases and a one-line description, laid out as
 * nvidia-smi lays out its own list.
 */
void query_help(enum query_kind kind, struct strbuf *out);

#endif
