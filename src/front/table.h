/*
 * The status table: a header, one block per GPU, then the processes.
 */
#ifndef GPUSCOPE_TABLE_H
#define GPUSCOPE_TABLE_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf;
struct term;
struct gpu_snapshot;

/* Append the status table of snap, laid out for t (width, colour). */
void table_status(struct strbuf *sb, const struct gpu_snapshot *snap, const struct term *t,
                  bool with_procs);

/* "C", "G", "C+G" or "M": nvidia-smi's letters for a process type. */
const char *table_proc_type(unsigned type);

/* The columns of the process table, in its order (the command comes after). */
enum table_pcol {
	TABLE_PC_GPU,
	TABLE_PC_PID,
	TABLE_PC_TYPE,
	TABLE_PC_USER,
	TABLE_PC_GPUMEM,
	TABLE_PC_SM,
	TABLE_PC_ENCDEC,
	TABLE_PC_CPU,
	TABLE_PC_RSS,
	TABLE_PC_TIME,
	TABLE_PC_CTR,
	TABLE_PC_JOB, /* Slurm job, else Kubernetes namespace/pod */
	TABLE_PC__COUNT
};

/*
 * The text of one cell of process p of snap, as the table shows it ("-" when
 * unknown, "?" when it may not be read), into buf.
 */
struct gpu_proc;
void table_proc_cell(char *buf, size_t size, const struct gpu_snapshot *snap,
                     const struct gpu_proc *p, enum table_pcol col);

/*
 * How close GPU d runs to its slowdown temperature (90 C when unknown): 2
 * within 5 degrees, 1 within 15, 0 below, -1 when its temperature is unknown.
 */
struct gpu_device;
int table_temp_level(const struct gpu_device *d);

#endif
