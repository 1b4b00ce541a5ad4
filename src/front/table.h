/*
 * The status table: a header, one block per GPU, then the processes.
 */
#ifndef GPUSCOPE_TABLE_H
#define GPUSCOPE_TABLE_H

#include <stdbool.h>

struct strbuf;
struct term;
struct gpu_snapshot;

/* Append the status table of snap, laid out for t (width, colour). */
void table_status(struct strbuf *sb, const struct gpu_snapshot *snap, const struct term *t,
                  bool with_procs);

/* "C", "G", "C+G" or "M": nvidia-smi's letters for a process type. */
const char *table_proc_type(unsigned type);

#endif
