/*
 * top's process list as a model, without the screen: which processes of a
 * snapshot are shown (filters by text, user and GPU), in which order (any
 * column, either way), and as a flat list or as a parent/child tree, with
 * the text of each cell. The parent of a process is read from
 * <proc root>/<pid>/stat, since the sample model has no parent pid.
 */
#ifndef GPUSCOPE_TUI_PROCS_H
#define GPUSCOPE_TUI_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/strbuf.h"

struct gpu_proc;
struct gpu_snapshot;

/* The columns, in the order the status table shows them. */
enum pcol {
	PCOL_GPU,
	PCOL_PID,
	PCOL_TYPE,
	PCOL_USER,
	PCOL_GPUMEM,
	PCOL_SM,
	PCOL_ENCDEC,
	PCOL_CPU,
	PCOL_RSS,
	PCOL_TIME,
	PCOL_CTR,
	PCOL_JOB,
	PCOL_CMD,
	PCOL__COUNT
};

struct pcol_info {
	const char *title; /* "GPU-Mem" */
	unsigned width;    /* columns; 0 for the command, which takes what is left */
	bool right;        /* right-aligned */
	bool desc;         /* sorted largest first unless inverted (numbers) */
};

const struct pcol_info *pcol_info(enum pcol c);

/* Text of one cell ("-" when unknown), the same as the status table shows. */
void pv_cell(char *buf, size_t size, const struct gpu_snapshot *snap, const struct gpu_proc *p,
             enum pcol c);

/* The command as shown: the command line without its program's directory. */
const char *pv_command(const struct gpu_proc *p);

struct pv_row {
	size_t proc;    /* index into the snapshot's proc[] */
	unsigned depth; /* tree: 0 for a root */
	uint32_t more;  /* tree: bit k set when the ancestor at depth k+1 has siblings below */
	bool last;      /* tree: the last child of its parent */
};

struct pid_ppid {
	uint32_t pid, ppid;
};

struct proc_view {
	struct pv_row *row;
	size_t nr, alloc;

	/* how rows are chosen and ordered */
	enum pcol sort;
	bool invert; /* the other way round from the column's natural order */
	bool tree;
	char filter[128]; /* case-insensitive substring of command, user, pid or container */
	char user[64];    /* "" = every user */
	long gpu;         /* a GPU's index, or -1 for every GPU */

	/* tree: parents read from /proc, for one build */
	struct pid_ppid *pp;
	size_t nr_pp, alloc_pp;
	struct strbuf sb;
};

void pv_init(struct proc_view *pv);
void pv_release(struct proc_view *pv);

/*
 * Choose and order the rows for snap. proc_root is where /proc is read
 * from for parent pids (only in tree mode).
 */
void pv_build(struct proc_view *pv, const struct gpu_snapshot *snap, const char *proc_root);

/* Whether the sort is largest (or last) first. */
bool pv_descending(const struct proc_view *pv);

/*
 * The tree's branch drawing for row r ("│ ├─", ASCII "| |-" without UTF-8)
 * into sb, appended.
 */
void pv_tree_prefix(struct strbuf *sb, const struct pv_row *r, bool utf8);

#endif
