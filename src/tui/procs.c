/*
 * top's process list: filters, sort orders and the parent/child tree. Cells
 * are formatted as the status table formats them, with the same helpers.
 */
#include "tui/procs.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "core/gpu.h"
#include "core/procinfo.h"
#include "core/xalloc.h"
#include "core/fmt.h"
#include "front/table.h"

#define NA "-"

static const struct pcol_info pcols[PCOL__COUNT] = {
	[PCOL_GPU] = { "GPU", 3, true, false },         [PCOL_PID] = { "PID", 7, true, false },
	[PCOL_TYPE] = { "Type", 4, false, false },      [PCOL_USER] = { "User", 8, false, false },
	[PCOL_GPUMEM] = { "GPU-Mem", 9, true, true },   [PCOL_SM] = { "GPU%", 4, true, true },
	[PCOL_ENCDEC] = { "Enc/Dec", 7, true, true },   [PCOL_CPU] = { "CPU%", 5, true, true },
	[PCOL_RSS] = { "RSS", 6, true, true },          [PCOL_TIME] = { "Time", 8, true, true },
	[PCOL_CTR] = { "Container", 12, false, false }, [PCOL_JOB] = { "Job", 16, false, false },
	[PCOL_CMD] = { "Command", 0, false, false },
};

const struct pcol_info *
pcol_info(enum pcol c)
{
	return &pcols[(unsigned)c < PCOL__COUNT ? c : PCOL_CMD];
}

const char *
pv_command(const struct gpu_proc *p)
{
	const char *cmd = p->cmdline && *p->cmdline ? p->cmdline : p->name ? p->name : NA;
	size_t first = strcspn(cmd, " ");
	const char *slash = memrchr(cmd, '/', first);

	if (p->host == PHOST_NOT_VISIBLE && !p->cmdline && !p->name)
		return "(not visible from this pid namespace)";
	return slash && slash[1] && slash[1] != ' ' ? slash + 1 : cmd;
}

/* What the GPU-Mem column holds: device memory, else the system memory mapped (APUs). */
static double
gpu_mem(const struct gpu_proc *p)
{
	if (proc_has(p, PF_GPU_MEM) && (p->v[PF_GPU_MEM] > 0 || !proc_has(p, PF_SYS_MEM)))
		return p->v[PF_GPU_MEM];
	if (proc_has(p, PF_SYS_MEM))
		return p->v[PF_SYS_MEM];
	return NAN;
}

/* the columns before the command are the status table's, in its order */
_Static_assert((int)PCOL_GPU == (int)TABLE_PC_GPU && (int)PCOL_CTR == (int)TABLE_PC_CTR &&
                       (int)PCOL_CMD == (int)TABLE_PC__COUNT,
               "the TUI's process columns follow the status table's");

void
pv_cell(char *buf, size_t size, const struct gpu_snapshot *snap, const struct gpu_proc *p,
        enum pcol c)
{
	if (c < PCOL_CMD)
		table_proc_cell(buf, size, snap, p, (enum table_pcol)c);
	else
		snprintf(buf, size, "%s", pv_command(p));
}

void
pv_init(struct proc_view *pv)
{
	memset(pv, 0, sizeof(*pv));
	pv->sort = PCOL_GPUMEM;
	pv->gpu = -1;
	strbuf_init(&pv->sb, 0);
}

void
pv_release(struct proc_view *pv)
{
	free(pv->row);
	free(pv->pp);
	strbuf_release(&pv->sb);
	memset(pv, 0, sizeof(*pv));
}

bool
pv_descending(const struct proc_view *pv)
{
	return pcol_info(pv->sort)->desc != pv->invert;
}

/* --- filters ------------------------------------------------------------------ */

static bool
matches(const struct proc_view *pv, const struct gpu_snapshot *snap, const struct gpu_proc *p)
{
	char pid[16];

	if (pv->gpu >= 0 && snap->dev[p->dev].index != (unsigned long)pv->gpu)
		return false;
	if (pv->user[0] && (!p->user || strcmp(p->user, pv->user)))
		return false;
	if (!pv->filter[0])
		return true;
	snprintf(pid, sizeof(pid), "%" PRIu32, p->pid);
	return strstr(pid, pv->filter) || (p->cmdline && strcasestr(p->cmdline, pv->filter)) ||
	       (p->name && strcasestr(p->name, pv->filter)) ||
	       (p->user && strcasestr(p->user, pv->filter)) ||
	       (p->container && strcasestr(p->container, pv->filter)) ||
	       (p->container_name && strcasestr(p->container_name, pv->filter)) ||
	       (p->slurm_job && strcasestr(p->slurm_job, pv->filter)) ||
	       (p->pod_name && strcasestr(p->pod_name, pv->filter)) ||
	       (p->pod_namespace && strcasestr(p->pod_namespace, pv->filter));
}

/* --- sorting ------------------------------------------------------------------ */

struct sort_ctx {
	const struct proc_view *pv;
	const struct gpu_snapshot *snap;
	bool desc;
};

/* The column's value as a number, or NAN; strings give NAN and are compared apart. */
static double
num_key(const struct gpu_snapshot *snap, const struct gpu_proc *p, enum pcol c)
{
	switch (c) {
	case PCOL_GPU:
		return snap->dev[p->dev].index;
	case PCOL_PID:
		return p->pid;
	case PCOL_GPUMEM:
		return gpu_mem(p);
	case PCOL_SM:
		return proc_has(p, PF_SM_UTIL) && !p->gpu_denied ? p->v[PF_SM_UTIL] : NAN;
	case PCOL_ENCDEC:
		if (!proc_has(p, PF_ENC_UTIL) && !proc_has(p, PF_DEC_UTIL))
			return NAN;
		return (proc_has(p, PF_ENC_UTIL) ? p->v[PF_ENC_UTIL] : 0) +
		       (proc_has(p, PF_DEC_UTIL) ? p->v[PF_DEC_UTIL] : 0);
	case PCOL_CPU:
		return proc_has(p, PF_CPU_PERCENT) ? p->v[PF_CPU_PERCENT] : NAN;
	case PCOL_RSS:
		return proc_has(p, PF_RSS) ? p->v[PF_RSS] : NAN;
	case PCOL_TIME:
		/* running time: the earlier the start, the longer */
		return proc_has(p, PF_START_TIME) ? snap->time - p->v[PF_START_TIME] : NAN;
	case PCOL_TYPE:
	case PCOL_USER:
	case PCOL_CTR:
	case PCOL_JOB:
	case PCOL_CMD:
	case PCOL__COUNT:
		break;
	}
	return NAN;
}

static const char *
str_key(const struct gpu_proc *p, enum pcol c)
{
	switch (c) {
	case PCOL_TYPE:
		return table_proc_type(p->type);
	case PCOL_USER:
		return p->user;
	case PCOL_CTR:
		return p->container;
	case PCOL_JOB:
		return p->slurm_job ? p->slurm_job : p->pod_name;
	case PCOL_CMD:
		return p->cmdline || p->name ? pv_command(p) : NULL;
	default:
		return NULL;
	}
}

static bool
is_string_col(enum pcol c)
{
	return c == PCOL_TYPE || c == PCOL_USER || c == PCOL_CTR || c == PCOL_JOB || c == PCOL_CMD;
}

/* Unknown values go last whichever way the list is sorted. */
static int
cmp_rows(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *ctx = arg;
	const struct gpu_proc *p = &ctx->snap->proc[((const struct pv_row *)a)->proc];
	const struct gpu_proc *q = &ctx->snap->proc[((const struct pv_row *)b)->proc];
	enum pcol c = ctx->pv->sort;
	int r = 0;

	if (is_string_col(c)) {
		const char *x = str_key(p, c), *y = str_key(q, c);

		if (!x != !y)
			return x ? -1 : 1;
		if (x)
			r = strcasecmp(x, y);
	} else {
		double x = num_key(ctx->snap, p, c), y = num_key(ctx->snap, q, c);

		if (isnan(x) != isnan(y))
			return isnan(x) ? 1 : -1;
		if (!isnan(x))
			r = x < y ? -1 : x > y;
	}
	if (ctx->desc)
		r = -r;
	if (r)
		return r;
	/* ties: by GPU, then pid, always ascending, so the order is stable between frames */
	if (ctx->snap->dev[p->dev].index != ctx->snap->dev[q->dev].index)
		return ctx->snap->dev[p->dev].index < ctx->snap->dev[q->dev].index ? -1 : 1;
	return p->pid < q->pid ? -1 : p->pid > q->pid;
}

/* --- the tree ------------------------------------------------------------------ */

static int
cmp_pp(const void *a, const void *b)
{
	uint32_t x = ((const struct pid_ppid *)a)->pid, y = ((const struct pid_ppid *)b)->pid;

	return x < y ? -1 : x > y;
}

/* Parent of pid, from the sorted cache or read and cached (the cache stays sorted). */
static uint32_t
ppid_of(struct proc_view *pv, const char *proc_root, uint32_t pid)
{
	struct pid_ppid key = { pid, 0 }, *hit;
	size_t lo = 0, hi = pv->nr_pp;

	hit = pv->nr_pp ? bsearch(&key, pv->pp, pv->nr_pp, sizeof(*pv->pp), cmp_pp) : NULL;
	if (hit)
		return hit->ppid;
	if (!procinfo_read_stat(proc_root, pid, &pv->sb, &key.ppid, NULL))
		key.ppid = 0;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (pv->pp[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	ALLOC_GROW(pv->pp, pv->nr_pp + 1, pv->alloc_pp);
	memmove(pv->pp + lo + 1, pv->pp + lo, (pv->nr_pp - lo) * sizeof(*pv->pp));
	pv->pp[lo] = key;
	pv->nr_pp++;
	return key.ppid;
}

struct pid_row {
	uint32_t pid;
	unsigned dev;
	size_t row;
};

static int
cmp_pid_row(const void *a, const void *b)
{
	const struct pid_row *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/* The row of pid, preferring one on GPU dev; SIZE_MAX when pid has none. */
static size_t
row_of_pid(const struct pid_row *idx, size_t nr, uint32_t pid, unsigned dev)
{
	size_t lo = 0, hi = nr, best = SIZE_MAX;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (idx[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < nr && idx[lo].pid == pid; lo++) {
		if (best == SIZE_MAX)
			best = idx[lo].row;
		if (idx[lo].dev == dev)
			return idx[lo].row;
	}
	return best;
}

#define TREE_MAX_DEPTH 32
/* ancestors looked through for one that uses a GPU too */
#define TREE_MAX_HOPS 16

struct tree {
	size_t *parent, *first_child, *next_sibling;
	bool *done;
	struct pv_row *out;
	size_t nr_out;
};

static void
emit(struct tree *t, const struct pv_row *sorted, size_t r, unsigned depth, uint32_t more,
     bool last)
{
	struct pv_row *o;

	if (t->done[r])
		return;
	t->done[r] = true;
	o = &t->out[t->nr_out++];
	o->proc = sorted[r].proc;
	o->depth = depth;
	o->more = more;
	o->last = last;
	for (size_t c = t->first_child[r]; c != SIZE_MAX; c = t->next_sibling[c]) {
		bool c_last = t->next_sibling[c] == SIZE_MAX;
		uint32_t m = more;

		if (depth >= 1 && depth <= TREE_MAX_DEPTH && !last)
			m |= (uint32_t)1 << (depth - 1);
		emit(t, sorted, c, depth < TREE_MAX_DEPTH ? depth + 1 : depth, m, c_last);
	}
}

/*
 * Arrange the sorted rows as a forest: each process under its nearest
 * ancestor that is listed too (the same GPU's row when it has several),
 * siblings in the sort order.
 */
static void
build_tree(struct proc_view *pv, const struct gpu_snapshot *snap, const char *proc_root)
{
	size_t n = pv->nr;
	struct pid_row *idx = xcalloc(n ? n : 1, sizeof(*idx));
	struct tree t;

	t.parent = xcalloc(n ? n : 1, sizeof(size_t));
	t.first_child = xcalloc(n ? n : 1, sizeof(size_t));
	t.next_sibling = xcalloc(n ? n : 1, sizeof(size_t));
	t.done = xcalloc(n ? n : 1, sizeof(bool));
	t.out = xcalloc(n ? n : 1, sizeof(*t.out));
	t.nr_out = 0;
	pv->nr_pp = 0; /* parents are read afresh for every frame: pids come and go */
	for (size_t i = 0; i < n; i++) {
		const struct gpu_proc *p = &snap->proc[pv->row[i].proc];

		idx[i].pid = p->pid;
		idx[i].dev = p->dev;
		idx[i].row = i;
		t.first_child[i] = t.next_sibling[i] = SIZE_MAX;
	}
	qsort(idx, n, sizeof(*idx), cmp_pid_row);
	for (size_t i = 0; i < n; i++) {
		const struct gpu_proc *p = &snap->proc[pv->row[i].proc];
		uint32_t a = p->pid;

		t.parent[i] = SIZE_MAX;
		for (int hop = 0; hop < TREE_MAX_HOPS; hop++) {
			size_t r;

			a = ppid_of(pv, proc_root, a);
			if (a == 0 || a == p->pid)
				break;
			r = row_of_pid(idx, n, a, p->dev);
			if (r != SIZE_MAX) {
				t.parent[i] = r;
				break;
			}
			if (a == 1)
				break;
		}
	}
	/* children in sort order: walk backwards, pushing each at the front */
	for (size_t i = n; i-- > 0;) {
		if (t.parent[i] == SIZE_MAX)
			continue;
		t.next_sibling[i] = t.first_child[t.parent[i]];
		t.first_child[t.parent[i]] = i;
	}
	for (size_t i = 0; i < n; i++)
		if (t.parent[i] == SIZE_MAX)
			emit(&t, pv->row, i, 0, 0, true);
	/* a loop of parents (a damaged /proc tree) has no root: list what is left flat */
	for (size_t i = 0; i < n; i++)
		if (!t.done[i])
			emit(&t, pv->row, i, 0, 0, true);
	memcpy(pv->row, t.out, n * sizeof(*pv->row));
	free(idx);
	free(t.parent);
	free(t.first_child);
	free(t.next_sibling);
	free(t.done);
	free(t.out);
}

void
pv_tree_prefix(struct strbuf *sb, const struct pv_row *r, bool utf8)
{
	if (!r->depth)
		return;
	for (unsigned k = 1; k < r->depth && k <= TREE_MAX_DEPTH; k++) {
		bool bar = (r->more >> (k - 1)) & 1;

		strbuf_addstr(sb, bar ? (utf8 ? "\xe2\x94\x82 " : "| ") : "  ");
	}
	if (utf8)
		strbuf_addstr(sb,
		              r->last ? "\xe2\x94\x94\xe2\x94\x80" : "\xe2\x94\x9c\xe2\x94\x80");
	else
		strbuf_addstr(sb, r->last ? "`-" : "|-");
}

void
pv_build(struct proc_view *pv, const struct gpu_snapshot *snap, const char *proc_root)
{
	struct sort_ctx ctx = { pv, snap, pv_descending(pv) };

	pv->nr = 0;
	for (size_t i = 0; i < snap->nr_proc; i++) {
		if (!matches(pv, snap, &snap->proc[i]))
			continue;
		ALLOC_GROW(pv->row, pv->nr + 1, pv->alloc);
		pv->row[pv->nr].proc = i;
		pv->row[pv->nr].depth = 0;
		pv->row[pv->nr].more = 0;
		pv->row[pv->nr].last = true;
		pv->nr++;
	}
	if (pv->nr > 1)
		qsort_r(pv->row, pv->nr, sizeof(*pv->row), cmp_rows, &ctx);
	if (pv->tree && pv->nr)
		build_tree(pv, snap, proc_root);
}
