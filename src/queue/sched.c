/*
 * The queue's policy (queue/sched.h): a memory ledger per GPU, placement,
 * the order of the waiting jobs, backfill behind one reservation, and
 * preemption. No I/O, no clock (cfg->now), no state between calls: the
 * daemon calls sched_plan() every second and must get the same answer for
 * the same machine (preemption is idempotent: jobs already stopping count
 * as going away).
 *
 * Time is modelled with a profile per GPU: a list of occupations, each
 * [t0, t1) with the memory it holds and whether it holds the GPU
 * exclusively. A running job occupies its GPUs from the past until its
 * start plus its time limit (forever without one); a job started by this
 * plan from now until now plus its limit; the reservation of the first
 * blocked job from the time it will fit until it ends (when that time is
 * unknown: from now, on the GPUs free now first, so that none that frees is
 * given away before it). A job fits on a GPU over a window when no
 * exclusive occupation overlaps it and, at every instant of the window,
 * the memory of the overlapping occupations leaves room for it. Starting
 * a job now is a fit over [now, now + limit): a later job therefore uses
 * the reserved GPUs only when its own limit ends it before the reserved
 * start. The estimated start of the other waiting jobs is the first end
 * of an occupation at which each fits, in order, each then occupying the
 * profile in turn (bounded work: the rest get 0, unknown).
 *
 * A shared job that declares no memory while the config's default_gpu_mem
 * is 0 is placed by slots (jobs_per_gpu) when that is set, and is treated
 * as exclusive when it is not: nothing else would bound what it shares.
 */
#include "queue/sched.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"

#define GIB        (1024.0 * 1024.0 * 1024.0)
#define T_NEVER    INFINITY
#define SIM_BUDGET 2000000ULL /* occupations the estimates may look at (some 50 ms) */

enum occ_kind {
	OCC_RUN,   /* a job of run[] */
	OCC_START, /* started by this plan */
	OCC_RESV,  /* the reservation of the first blocked job */
	OCC_SIM,   /* a waiting job where the estimate placed it */
};

struct occ {
	double t0, t1;
	uint64_t mem;
	bool excl;
	enum occ_kind kind;
	unsigned run; /* OCC_RUN: index in run[] */
};

struct occ_list {
	struct occ *v;
	size_t nr, alloc;
};

/* What to leave out of a fit check. */
struct skip {
	const bool *run_gone; /* per run[]: counted as gone */
	bool all_run;         /* every running job and every start of this plan */
	bool resv;            /* the reservation */
	bool foreign;         /* processes outside the queue */
};

/* A request, resolved against the config. */
struct need {
	unsigned n;            /* GPUs */
	bool excl;             /* exclusive (also: shared with nothing to bound it) */
	bool slots;            /* shared by jobs_per_gpu only */
	uint64_t mem;          /* bytes per GPU to reserve (excl: to fit at least) */
	int want[QJ_MAX_GPUS]; /* positions, when it names its GPUs */
	unsigned nr_want;      /* 0: any */
	bool want_missing;     /* names a GPU not in gpu[] */
	char missing[QJ_UUID_LEN];
	double dur; /* seconds; T_NEVER without a time limit */
};

struct user_count {
	uid_t uid;
	unsigned gpus, jobs;
};

struct ctx {
	const struct sched_input *in;
	const struct sched_config *cfg;
	unsigned ng;
	uint64_t foreign[SCHED_MAX_GPUS];
	unsigned jobs_on[SCHED_MAX_GPUS];   /* ours, with what this plan starts */
	unsigned run_on_nr[SCHED_MAX_GPUS]; /* run[] jobs on it */
	uint64_t run_first[SCHED_MAX_GPUS]; /* the first of them */
	struct occ_list occ[SCHED_MAX_GPUS];
	/* per run[]: its positions in gpu[] and its own memory there */
	int (*run_pos)[QJ_MAX_GPUS];
	uint64_t (*run_mem)[QJ_MAX_GPUS];
	bool *run_going; /* STOPPING or EXITING */
	struct user_count *users;
	size_t nr_users, alloc_users;
	unsigned long long work;
};

/* ---- small helpers ---- */

static double
gib(uint64_t b)
{
	return (double)b / GIB;
}

static void __attribute__((format(printf, 3, 4)))
bprintf(char *buf, size_t len, const char *fmt, ...)
{
	size_t at = strlen(buf);
	va_list ap;

	if (at + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + at, len - at, fmt, ap);
	va_end(ap);
}

/* a + b, at most UINT64_MAX (a request may ask absurd sizes) */
static uint64_t
add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static const char *
plural(unsigned n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static int
gpu_pos(const struct sched_input *in, const char *uuid)
{
	for (unsigned g = 0; g < in->nr_gpu && g < SCHED_MAX_GPUS; g++) {
		if (!strcmp(in->gpu[g].uuid, uuid))
			return (int)g;
	}
	return -1;
}

static enum qj_mode
job_mode(const struct sched_config *cfg, const struct qjob *j)
{
	enum qj_mode m = j->req.mode;

	if (m == QJ_MODE_DEFAULT)
		m = cfg->default_mode;
	return m == QJ_MODE_SHARED ? QJ_MODE_SHARED : QJ_MODE_EXCLUSIVE;
}

/* The memory a job reserves per GPU by what it declared (shared: the config's default). */
static uint64_t
job_declared(const struct sched_config *cfg, const struct qjob *j)
{
	uint64_t m = j->req.gpu_mem;

	if (job_mode(cfg, j) == QJ_MODE_SHARED && m < cfg->default_gpu_mem)
		m = cfg->default_gpu_mem;
	return m;
}

/* Holds its GPUs to itself: exclusive, or shared with nothing to bound it. */
static bool
job_exclusive(const struct sched_config *cfg, const struct qjob *j)
{
	if (job_mode(cfg, j) == QJ_MODE_EXCLUSIVE)
		return true;
	return job_declared(cfg, j) == 0 && cfg->jobs_per_gpu == 0;
}

static void
need_init(const struct ctx *c, const struct qjob *j, struct need *n)
{
	memset(n, 0, sizeof(*n));
	n->excl = job_exclusive(c->cfg, j);
	n->mem = job_declared(c->cfg, j);
	if (j->state == QJ_SUSPENDED && j->peak_gpu_mem > n->mem && !n->excl)
		n->mem = j->peak_gpu_mem; /* it restores what it had */
	n->slots = !n->excl && n->mem == 0;
	/* at its limit it is signalled, and killed after its grace (when it has its own) */
	n->dur = j->req.time_limit ? (double)j->req.time_limit + j->req.grace : T_NEVER;
	n->n = j->req.gpus;
	if (j->state == QJ_SUSPENDED && j->nr_gpu) {
		/* it resumes on the GPUs it was checkpointed on, and only there */
		for (unsigned i = 0; i < j->nr_gpu && i < QJ_MAX_GPUS; i++) {
			n->want[n->nr_want] = gpu_pos(c->in, j->gpu_uuid[i]);
			if (n->want[n->nr_want] < 0 && !n->want_missing) {
				n->want_missing = true;
				snprintf(n->missing, sizeof(n->missing), "%s", j->gpu_uuid[i]);
			}
			n->nr_want++;
		}
		n->n = n->nr_want;
		return;
	}
	for (unsigned i = 0; i < j->req.nr_want && i < QJ_MAX_GPUS; i++) {
		n->want[n->nr_want] = gpu_pos(c->in, j->req.want_uuid[i]);
		if (n->want[n->nr_want] < 0 && !n->want_missing) {
			n->want_missing = true;
			snprintf(n->missing, sizeof(n->missing), "%s", j->req.want_uuid[i]);
		}
		n->nr_want++;
	}
	if (n->nr_want)
		n->n = n->nr_want;
	if (n->n > QJ_MAX_GPUS)
		n->n = QJ_MAX_GPUS;
}

/* ---- the ledger and the profile ---- */

static void
occ_add(struct ctx *c, unsigned g, const struct occ *o)
{
	struct occ_list *l = &c->occ[g];

	ALLOC_GROW(l->v, l->nr + 1, l->alloc);
	l->v[l->nr++] = *o;
}

static bool
occ_skipped(const struct occ *o, const struct skip *s)
{
	if (!s)
		return false;
	if (o->kind == OCC_RESV)
		return s->resv;
	if (s->all_run && (o->kind == OCC_RUN || o->kind == OCC_START))
		return true;
	return o->kind == OCC_RUN && s->run_gone && s->run_gone[o->run];
}

static double
run_end(const struct sched_config *cfg, const struct qjob *j)
{
	double end = T_NEVER;

	if (j->state == QJ_STOPPING)
		end = j->stop_deadline > 0 ? j->stop_deadline : cfg->now;
	else if (j->state == QJ_EXITING)
		end = cfg->now;
	else if (j->req.time_limit)
		end = (j->start_time > 0 ? j->start_time : cfg->now) + j->req.time_limit +
		      j->req.grace;
	/* whatever it holds, it holds it now: at least a second from now */
	return end < cfg->now + 1 ? cfg->now + 1 : end;
}

static void
ledger_build(struct ctx *c, struct sched_plan *out)
{
	const struct sched_input *in = c->in;
	uint64_t ours[SCHED_MAX_GPUS] = { 0 };

	c->run_pos = xcalloc(in->nr_run ? in->nr_run : 1, sizeof(*c->run_pos));
	c->run_mem = xcalloc(in->nr_run ? in->nr_run : 1, sizeof(*c->run_mem));
	c->run_going = xcalloc(in->nr_run ? in->nr_run : 1, sizeof(*c->run_going));
	for (unsigned r = 0; r < in->nr_run; r++) {
		const struct sched_running *sr = &in->run[r];
		const struct qjob *j = sr->job;
		uint64_t decl = job_declared(c->cfg, j);
		bool excl = job_exclusive(c->cfg, j);
		double end = run_end(c->cfg, j);

		c->run_going[r] = j->state == QJ_STOPPING || j->state == QJ_EXITING;
		for (unsigned i = 0; i < j->nr_gpu && i < QJ_MAX_GPUS; i++) {
			int g = gpu_pos(in, j->gpu_uuid[i]);
			struct occ o;

			c->run_pos[r][i] = g;
			if (g < 0)
				continue; /* a GPU that vanished: nothing to hold */
			c->run_mem[r][i] = sr->observed[i] > decl ? sr->observed[i] : decl;
			ours[g] = add_sat(ours[g], sr->current[i]);
			if (!c->run_on_nr[g])
				c->run_first[g] = j->id;
			c->run_on_nr[g]++;
			c->jobs_on[g]++;
			o = (struct occ){ .t0 = -T_NEVER,
				          .t1 = end,
				          .mem = c->run_mem[r][i],
				          .excl = excl,
				          .kind = OCC_RUN,
				          .run = r };
			occ_add(c, (unsigned)g, &o);
		}
	}
	for (unsigned g = 0; g < c->ng; g++) {
		const struct sched_gpu *gp = &in->gpu[g];
		uint64_t held = 0;

		c->foreign[g] = gp->used > ours[g] ? gp->used - ours[g] : 0;
		for (size_t k = 0; k < c->occ[g].nr; k++)
			held = add_sat(held, c->occ[g].v[k].mem);
		out->foreign[g] = c->foreign[g];
		out->available[g] = gp->total > add_sat(c->foreign[g], held)
		                            ? gp->total - c->foreign[g] - held
		                            : 0;
		out->jobs_on[g] = c->jobs_on[g];
	}
}

/* May the owner of w use GPU g at all (flags, reservation, answering)? */
static bool
gpu_allowed(const struct sched_gpu *gp, const struct sched_waiting *w)
{
	if (!(gp->flags & QG_RESERVED) || w->owner_is_admin)
		return true;
	for (unsigned i = 0; i < gp->nr_reserved_uid && i < 16; i++) {
		if (gp->reserved_uid[i] == w->job->uid)
			return true;
	}
	for (unsigned i = 0; i < gp->nr_reserved_gid && i < 16; i++) {
		if (gp->reserved_gid[i] == w->job->gid)
			return true;
		for (unsigned k = 0; k < w->nr_groups && k < 32; k++) {
			if (gp->reserved_gid[i] == w->groups[k])
				return true;
		}
	}
	return false;
}

static bool
gpu_usable(const struct sched_gpu *gp, const struct sched_waiting *w)
{
	return gp->ok && !(gp->flags & (QG_DRAINED | QG_DIRTY | QG_LOST)) && gpu_allowed(gp, w);
}

/*
 * Does a job of need n fit on GPU g over [a, b)? *room: the memory left for
 * it there (at the tightest instant), for placement.
 */
static bool
gpu_fits(struct ctx *c, unsigned g, const struct need *n, double a, double b, const struct skip *s,
         uint64_t *room)
{
	const struct sched_gpu *gp = &c->in->gpu[g];
	const struct occ_list *l = &c->occ[g];
	uint64_t foreign = s && s->foreign ? 0 : c->foreign[g];
	uint64_t cap = gp->total > foreign ? gp->total - foreign : 0;
	uint64_t maxload = 0;
	unsigned maxcount = 0;

	c->work += l->nr + 1;
	if (n->excl && foreign > c->cfg->mem_margin)
		return false;
	for (size_t k = 0; k < l->nr; k++) {
		const struct occ *o = &l->v[k];

		if (occ_skipped(o, s) || !(o->t0 < b && a < o->t1))
			continue;
		if (n->excl || o->excl)
			return false;
	}
	if (!n->excl) {
		bool later = false;

		/* the load at the window's start ... */
		for (size_t k = 0; k < l->nr; k++) {
			const struct occ *o = &l->v[k];

			if (occ_skipped(o, s))
				continue;
			if (o->t0 <= a && a < o->t1) {
				maxload = add_sat(maxload, o->mem);
				maxcount++;
			} else if (o->t0 > a && o->t0 < b) {
				later = true;
			}
		}
		/* ... or where an occupation begins inside it */
		for (size_t p = 0; later && p < l->nr; p++) {
			double at = l->v[p].t0;
			uint64_t load = 0;
			unsigned count = 0;

			if (occ_skipped(&l->v[p], s) || !(at > a && at < b))
				continue;
			c->work += l->nr;
			for (size_t k = 0; k < l->nr; k++) {
				const struct occ *o = &l->v[k];

				if (occ_skipped(o, s) || !(o->t0 <= at && at < o->t1))
					continue;
				load = add_sat(load, o->mem);
				count++;
			}
			if (load > maxload)
				maxload = load;
			if (count > maxcount)
				maxcount = count;
		}
		if (c->cfg->jobs_per_gpu && maxcount >= c->cfg->jobs_per_gpu)
			return false;
	}
	cap = cap > maxload ? cap - maxload : 0;
	if (cap < add_sat(n->mem, c->cfg->mem_margin))
		return false;
	*room = cap;
	return true;
}

static int
link_rank(const struct sched_input *in, unsigned a, unsigned b)
{
	enum sched_link l = in->link[a][b];

	if (l == SL_UNKNOWN)
		l = in->link[b][a];
	return l == SL_UNKNOWN ? SL_SYSTEM + 1 : (int)l;
}

/* Is candidate a better than b by the packing rule (pack shared, spread exclusive)? */
static bool
better(const struct ctx *c, const struct need *n, unsigned a, uint64_t room_a, unsigned b,
       uint64_t room_b)
{
	if (room_a != room_b)
		return n->excl ? room_a > room_b : room_a < room_b;
	if (c->jobs_on[a] != c->jobs_on[b])
		return n->excl ? c->jobs_on[a] < c->jobs_on[b] : c->jobs_on[a] > c->jobs_on[b];
	return c->in->gpu[a].index < c->in->gpu[b].index ||
	       (c->in->gpu[a].index == c->in->gpu[b].index && a < b);
}

/* Several GPUs with a known topology: greedy from each seed, the best worst-pair link wins. */
static void
choose_linked(const struct ctx *c, const struct need *n, const unsigned *fit, const uint64_t *room,
              unsigned nr_fit, unsigned *set)
{
	const struct sched_input *in = c->in;
	int best_worst = 0;
	double best_score = 0;
	bool have = false;

	for (unsigned seed = 0; seed < nr_fit; seed++) {
		bool in_set[SCHED_MAX_GPUS] = { false };
		int worst_to[SCHED_MAX_GPUS]; /* per fit[]: worst link to the set so far */
		unsigned pick[QJ_MAX_GPUS];
		int worst = 0;
		double score = 0;

		pick[0] = seed;
		in_set[seed] = true;
		for (unsigned i = 0; i < nr_fit; i++)
			worst_to[i] = link_rank(in, fit[i], fit[seed]);
		score += n->excl ? -(double)room[seed] : (double)room[seed];
		for (unsigned k = 1; k < n->n; k++) {
			int b = -1;

			for (unsigned i = 0; i < nr_fit; i++) {
				if (in_set[i])
					continue;
				if (b < 0 || worst_to[i] < worst_to[b] ||
				    (worst_to[i] == worst_to[b] &&
				     better(c, n, fit[i], room[i], fit[b], room[b])))
					b = (int)i;
			}
			pick[k] = (unsigned)b;
			in_set[b] = true;
			if (worst_to[b] > worst)
				worst = worst_to[b];
			score += n->excl ? -(double)room[b] : (double)room[b];
			for (unsigned i = 0; i < nr_fit; i++) {
				int l = link_rank(in, fit[i], fit[b]);

				if (l > worst_to[i])
					worst_to[i] = l;
			}
		}
		if (!have || worst < best_worst || (worst == best_worst && score < best_score)) {
			have = true;
			best_worst = worst;
			best_score = score;
			for (unsigned k = 0; k < n->n; k++)
				set[k] = fit[pick[k]];
		}
	}
}

/*
 * Choose n->n GPUs among the fitting ones fit[] (rooms room[]) into set[].
 * Single GPU: the packing rule. Several: the set with the best worst-pair
 * link (greedy from each seed), then the packing rule; no known link: the
 * first by index.
 */
static void
choose(const struct ctx *c, const struct need *n, const unsigned *fit, const uint64_t *room,
       unsigned nr_fit, unsigned *set)
{
	const struct sched_input *in = c->in;
	bool any_link = false;

	if (n->n == 1) {
		unsigned b = 0;

		for (unsigned i = 1; i < nr_fit; i++) {
			if (better(c, n, fit[i], room[i], fit[b], room[b]))
				b = i;
		}
		set[0] = fit[b];
		return;
	}
	for (unsigned i = 0; i < nr_fit && !any_link; i++) {
		for (unsigned k = i + 1; k < nr_fit; k++) {
			if (link_rank(in, fit[i], fit[k]) <= SL_SYSTEM) {
				any_link = true;
				break;
			}
		}
	}
	if (!any_link) {
		unsigned order[SCHED_MAX_GPUS];

		for (unsigned i = 0; i < nr_fit; i++)
			order[i] = i;
		/* by index (insertion sort: at most 64) */
		for (unsigned i = 1; i < nr_fit; i++) {
			unsigned v = order[i], k = i;

			while (k > 0 && in->gpu[fit[order[k - 1]]].index > in->gpu[fit[v]].index) {
				order[k] = order[k - 1];
				k--;
			}
			order[k] = v;
		}
		for (unsigned i = 0; i < n->n; i++)
			set[i] = fit[order[i]];
		return;
	}
	choose_linked(c, n, fit, room, nr_fit, set);
}

/*
 * Place the job of w (need n) over [a, a + n->dur): the positions in set[]
 * (n->n of them). usable: whether to keep to the GPUs it may use now.
 */
static bool
place(struct ctx *c, const struct sched_waiting *w, const struct need *n, double a,
      const struct skip *s, bool usable, unsigned *set)
{
	unsigned fit[SCHED_MAX_GPUS];
	uint64_t room[SCHED_MAX_GPUS];
	unsigned nr_fit = 0;
	double b = a + n->dur;

	if (n->n == 0)
		return true;
	if (n->want_missing)
		return false;
	if (n->nr_want) {
		for (unsigned i = 0; i < n->nr_want; i++) {
			unsigned g = (unsigned)n->want[i];
			uint64_t r;

			if (c->in->gpu[g].flags & QG_LOST)
				return false;
			if (usable && !gpu_usable(&c->in->gpu[g], w))
				return false;
			if (!gpu_fits(c, g, n, a, b, s, &r))
				return false;
			set[i] = g;
		}
		return true;
	}
	for (unsigned g = 0; g < c->ng; g++) {
		const struct sched_gpu *gp = &c->in->gpu[g];

		if (gp->flags & QG_LOST)
			continue;
		if (usable && !gpu_usable(gp, w))
			continue;
		if (gpu_fits(c, g, n, a, b, s, &room[nr_fit]))
			fit[nr_fit++] = g;
	}
	if (nr_fit < n->n)
		return false;
	choose(c, n, fit, room, nr_fit, set);
	return true;
}

static void
occupy(struct ctx *c, const struct need *n, const unsigned *set, double t0, enum occ_kind kind)
{
	for (unsigned i = 0; i < n->n; i++) {
		struct occ o = { .t0 = t0,
			         .t1 = t0 + n->dur,
			         .mem = n->mem,
			         .excl = n->excl,
			         .kind = kind,
			         .run = 0 };

		occ_add(c, set[i], &o);
	}
}

/* Times at which the profile changes: the finite ends of occupations, sorted, unique. */
struct times {
	double *v;
	size_t nr, alloc;
};

static int
dbl_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b;
}

static void
times_build(const struct ctx *c, struct times *t)
{
	size_t u = 0;

	t->nr = 0;
	for (unsigned g = 0; g < c->ng; g++) {
		for (size_t k = 0; k < c->occ[g].nr; k++) {
			double e = c->occ[g].v[k].t1;

			if (!isfinite(e))
				continue;
			ALLOC_GROW(t->v, t->nr + 1, t->alloc);
			t->v[t->nr++] = e;
		}
	}
	if (t->nr)
		qsort(t->v, t->nr, sizeof(*t->v), dbl_cmp);
	for (size_t i = 0; i < t->nr; i++) {
		if (!u || t->v[i] != t->v[u - 1])
			t->v[u++] = t->v[i];
	}
	t->nr = u;
}

/* The first index whose time is >= x. */
static size_t
times_find(const struct times *t, double x)
{
	size_t lo = 0, hi = t->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
times_add(struct times *t, double x)
{
	size_t at;

	if (!isfinite(x))
		return;
	at = times_find(t, x);
	if (at < t->nr && t->v[at] == x)
		return;
	ALLOC_GROW(t->v, t->nr + 1, t->alloc);
	memmove(t->v + at + 1, t->v + at, (t->nr - at) * sizeof(*t->v));
	t->v[at] = x;
	t->nr++;
}

/* The earliest time from t at which w fits, by the ends in the profile; T_NEVER: unknown. */
static double
earliest(struct ctx *c, const struct sched_waiting *w, const struct need *n, double t,
         const struct times *ends, unsigned *set, unsigned long long budget)
{
	if (place(c, w, n, t, NULL, true, set))
		return t;
	for (size_t i = times_find(ends, t); i < ends->nr && c->work < budget; i++) {
		if (ends->v[i] > t && place(c, w, n, ends->v[i], NULL, true, set))
			return ends->v[i];
	}
	return T_NEVER;
}

/* ---- reasons ---- */

static void
list_jobs_on(const struct ctx *c, unsigned g, char *buf, size_t len)
{
	unsigned nr = c->run_on_nr[g];
	uint64_t first = c->run_first[g];

	if (nr == 1)
		bprintf(buf, len, "runs job %llu", (unsigned long long)first);
	else if (nr > 1)
		bprintf(buf, len, "runs jobs %llu and %u more", (unsigned long long)first, nr - 1);
	else
		bprintf(buf, len, "is taken by a job this plan starts");
}

/* Why GPU g does not take the job now, in words (appended to buf). */
static void
gpu_why(struct ctx *c, const struct sched_waiting *w, const struct need *n, unsigned g,
        uint64_t resv_job, char *buf, size_t len)
{
	const struct sched_gpu *gp = &c->in->gpu[g];
	struct skip noresv = { .resv = true };
	uint64_t room;

	bprintf(buf, len, "GPU %u ", gp->index);
	if (gp->flags & QG_LOST) {
		bprintf(buf, len, "was lost");
	} else if (gp->flags & QG_DRAINED) {
		bprintf(buf, len, "is drained");
	} else if (gp->flags & QG_DIRTY) {
		bprintf(buf, len, "is dirty (an ended job's memory did not come back)");
	} else if (!gp->ok) {
		bprintf(buf, len, "is not answering");
	} else if (!gpu_allowed(gp, w)) {
		bprintf(buf, len, "is reserved for other users");
	} else if (n->excl && c->foreign[g] > c->cfg->mem_margin) {
		bprintf(buf, len, "has %.1f GiB used by processes outside the queue",
		        gib(c->foreign[g]));
	} else if (gpu_fits(c, g, n, c->cfg->now, c->cfg->now + n->dur, &noresv, &room)) {
		bprintf(buf, len, "is reserved for job %llu", (unsigned long long)resv_job);
	} else if (c->jobs_on[g] &&
	           (n->excl || (c->cfg->jobs_per_gpu && c->jobs_on[g] >= c->cfg->jobs_per_gpu))) {
		list_jobs_on(c, g, buf, len);
	} else {
		struct need probe = *n;

		/* how much room there is for it, whatever it asks */
		probe.mem = 0;
		if (gpu_fits(c, g, &probe, c->cfg->now, c->cfg->now + n->dur, &noresv, &room) &&
		    room >= c->cfg->mem_margin)
			bprintf(buf, len, "has %.1f GiB available", gib(room - c->cfg->mem_margin));
		else if (c->jobs_on[g])
			list_jobs_on(c, g, buf, len);
		else
			bprintf(buf, len, "has %.1f GiB available", 0.0);
	}
}

static void
describe_need(const struct ctx *c, const struct need *n, char *buf, size_t len)
{
	if (n->excl && n->mem)
		bprintf(buf, len, "needs %u %s to itself with %.1f GiB each", n->n,
		        plural(n->n, "GPU", "GPUs"), gib(n->mem));
	else if (n->excl)
		bprintf(buf, len, "needs %u %s to itself", n->n, plural(n->n, "GPU", "GPUs"));
	else if (n->slots)
		bprintf(buf, len, "needs a free slot on %u %s (at most %u jobs per GPU)", n->n,
		        plural(n->n, "GPU", "GPUs"), c->cfg->jobs_per_gpu);
	else
		bprintf(buf, len, "needs %.1f GiB on %u %s (and a margin of %.1f GiB)", gib(n->mem),
		        n->n, plural(n->n, "GPU", "GPUs"), gib(c->cfg->mem_margin));
}

/* The reason a job that does not fit now waits: what it needs and what each GPU lacks. */
static void
explain(struct ctx *c, const struct sched_waiting *w, const struct need *n, uint64_t resv_job,
        char *buf, size_t len)
{
	unsigned fits = 0, listed = 0, left = 0;
	uint64_t room;

	buf[0] = '\0';
	describe_need(c, n, buf, len);
	for (unsigned g = 0; g < c->ng; g++) {
		if (!(c->in->gpu[g].flags & QG_LOST) && gpu_usable(&c->in->gpu[g], w) &&
		    gpu_fits(c, g, n, c->cfg->now, c->cfg->now + n->dur, NULL, &room))
			fits++;
	}
	if (n->nr_want)
		bprintf(buf, len, ": ");
	else if (fits)
		bprintf(buf, len, "; only %u %s it now: ", fits,
		        plural(fits, "GPU fits", "GPUs fit"));
	else
		bprintf(buf, len, "; none fits now: ");
	for (unsigned i = 0; i < (n->nr_want ? n->nr_want : c->ng); i++) {
		unsigned g = n->nr_want ? (unsigned)n->want[i] : i;
		char one[160] = "";

		if (gpu_usable(&c->in->gpu[g], w) &&
		    gpu_fits(c, g, n, c->cfg->now, c->cfg->now + n->dur, NULL, &room))
			continue; /* this one would do */
		gpu_why(c, w, n, g, resv_job, one, sizeof(one));
		if (strlen(buf) + strlen(one) + 2 + 24 >= len) {
			left++;
			continue;
		}
		bprintf(buf, len, "%s%s", listed ? ", " : "", one);
		listed++;
	}
	if (left)
		bprintf(buf, len, " and %u more", left);
}

/* ---- order ---- */

struct key {
	int priority;
	bool suspended;
	double usage, submit;
	uint64_t id;
	unsigned idx;
};

static int
key_cmp(const void *pa, const void *pb)
{
	const struct key *a = pa, *b = pb;

	if (a->priority != b->priority)
		return a->priority > b->priority ? -1 : 1;
	if (a->suspended != b->suspended)
		return a->suspended ? -1 : 1;
	if (a->usage != b->usage)
		return a->usage < b->usage ? -1 : 1;
	if (a->submit != b->submit)
		return a->submit < b->submit ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return 0;
}

static struct user_count *
user_get(struct ctx *c, uid_t uid)
{
	for (size_t i = 0; i < c->nr_users; i++) {
		if (c->users[i].uid == uid)
			return &c->users[i];
	}
	ALLOC_GROW(c->users, c->nr_users + 1, c->alloc_users);
	c->users[c->nr_users] = (struct user_count){ .uid = uid };
	return &c->users[c->nr_users++];
}

static struct sched_action *
act_add(struct sched_plan *p, size_t *alloc, enum sched_action_kind kind, uint64_t job)
{
	struct sched_action *a;

	ALLOC_GROW(p->act, (size_t)p->nr_act + 1, *alloc);
	a = &p->act[p->nr_act++];
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	a->job = job;
	return a;
}

static const char *
state_word(enum qj_state s)
{
	switch (s) {
	case QJ_QUEUED:
		return "queued";
	case QJ_HELD:
		return "held";
	case QJ_STARTING:
		return "starting";
	case QJ_RUNNING:
		return "running";
	case QJ_STOPPING:
		return "stopping";
	case QJ_SUSPENDED:
		return "suspended";
	case QJ_EXITING:
		return "exiting";
	default:
		return "ended";
	}
}

static void
explain_deps(const struct sched_input *in, const struct sched_waiting *w, char *buf, size_t len)
{
	const struct qjob *j = w->job;
	unsigned listed = 0;

	buf[0] = '\0';
	if (w->dep_missing) {
		bprintf(buf, len, "waits for a job that does not exist (--after");
		for (unsigned i = 0; i < j->req.nr_after && i < QJ_MAX_AFTER; i++)
			bprintf(buf, len, "%s%llu", i ? "," : " ",
			        (unsigned long long)j->req.after[i]);
		bprintf(buf, len, ")");
		return;
	}
	bprintf(buf, len, "waits for ");
	for (unsigned i = 0; i < j->req.nr_after && i < QJ_MAX_AFTER; i++) {
		uint64_t id = j->req.after[i];
		const char *st = NULL;

		for (unsigned r = 0; r < in->nr_run && !st; r++) {
			if (in->run[r].job->id == id)
				st = state_word(in->run[r].job->state);
		}
		for (unsigned k = 0; k < in->nr_wait && !st; k++) {
			if (in->wait[k].job->id == id)
				st = state_word(in->wait[k].job->state);
		}
		if (!st)
			continue; /* ended, as far as this plan sees */
		bprintf(buf, len, "%sjob %llu (%s)", listed ? ", " : "", (unsigned long long)id,
		        st);
		listed++;
	}
	if (!listed) {
		bprintf(buf, len, "the %s it depends on to end (--after",
		        plural(j->req.nr_after, "job", "jobs"));
		for (unsigned i = 0; i < j->req.nr_after && i < QJ_MAX_AFTER; i++)
			bprintf(buf, len, "%s%llu", i ? "," : " ",
			        (unsigned long long)j->req.after[i]);
		bprintf(buf, len, ")");
	}
}

/* Can it fit on the GPUs it may use once our jobs (and foreign ones) are gone? */
static bool
fits_some_day(struct ctx *c, const struct sched_waiting *w, const struct need *n, unsigned *set)
{
	struct skip s = { .all_run = true, .resv = true };

	if (place(c, w, n, c->cfg->now, &s, true, set))
		return true;
	s.foreign = true;
	return place(c, w, n, c->cfg->now, &s, true, set);
}

/*
 * The GPUs to hold for the first blocked job when the time it will fit is
 * unknown: every GPU that would take it now, then the ones it would need
 * besides once everything ended (the best linked to those first, then by
 * index). Holding the free ones matters: a GPU that frees is then kept for
 * it rather than given to the next small job, which would starve it.
 */
static bool
hold_set(struct ctx *c, const struct sched_waiting *w, const struct need *n, unsigned *set)
{
	struct skip later = { .all_run = true, .resv = true };
	struct skip later_nf = { .all_run = true, .resv = true, .foreign = true };
	bool taken[SCHED_MAX_GPUS] = { false };
	int pool[SCHED_MAX_GPUS] = { 0 }; /* 1: fits once our jobs ended; 2: and foreign ones */
	unsigned nr = 0;
	uint64_t room;

	if (n->nr_want)
		return fits_some_day(c, w, n, set);
	for (unsigned g = 0; g < c->ng; g++) {
		const struct sched_gpu *gp = &c->in->gpu[g];
		double a = c->cfg->now, b = a + n->dur;

		if ((gp->flags & QG_LOST) || !gpu_usable(gp, w))
			continue;
		if (nr < n->n && gpu_fits(c, g, n, a, b, NULL, &room)) {
			taken[g] = true;
			set[nr++] = g;
		} else if (gpu_fits(c, g, n, a, b, &later, &room)) {
			pool[g] = 1;
		} else if (gpu_fits(c, g, n, a, b, &later_nf, &room)) {
			pool[g] = 2;
		}
	}
	while (nr < n->n) {
		int b = -1, b_worst = 0, b_pool = 0;

		for (unsigned g = 0; g < c->ng; g++) {
			int worst = 0;

			if (taken[g] || !pool[g])
				continue;
			for (unsigned k = 0; k < nr; k++) {
				int l = link_rank(c->in, g, set[k]);

				if (l > worst)
					worst = l;
			}
			if (b < 0 || pool[g] < b_pool || (pool[g] == b_pool && worst < b_worst)) {
				b = (int)g;
				b_worst = worst;
				b_pool = pool[g];
			}
		}
		if (b < 0)
			return false;
		taken[b] = true;
		set[nr++] = (unsigned)b;
	}
	return true;
}

/* Why it can never fit on what it may use, as a code: "dirty", "drained" or "resources". */
static const char *
unusable_code(struct ctx *c, const struct sched_waiting *w, const struct need *n, char *buf,
              size_t len)
{
	unsigned dirty = 0, drained = 0, i_max = n->nr_want ? n->nr_want : c->ng;

	for (unsigned i = 0; i < i_max; i++) {
		const struct sched_gpu *gp = &c->in->gpu[n->nr_want ? (unsigned)n->want[i] : i];

		if (gp->flags & QG_LOST)
			continue;
		if (gp->flags & QG_DIRTY)
			dirty++;
		else if (gp->flags & QG_DRAINED)
			drained++;
	}
	explain(c, w, n, 0, buf, len);
	if (dirty && dirty >= drained)
		return "dirty";
	if (drained)
		return "drained";
	return "resources";
}

/* ---- preemption ---- */

static bool
victim_ok(const struct sched_running *r, int prio)
{
	const struct qjob *j = r->job;

	return j->state == QJ_RUNNING && j->req.preemptible && j->req.priority < prio;
}

/* Is victim a cheaper than b: lower priority, then more recently started? */
static bool
cheaper(const struct qjob *a, const struct qjob *b)
{
	if (a->req.priority != b->req.priority)
		return a->req.priority < b->req.priority;
	if (a->start_time != b->start_time)
		return a->start_time > b->start_time;
	return a->id > b->id;
}

/* Is the job of run[r] on GPU g? */
static bool
run_on(const struct ctx *c, unsigned r, unsigned g)
{
	const struct qjob *j = c->in->run[r].job;

	for (unsigned i = 0; i < j->nr_gpu && i < QJ_MAX_GPUS; i++) {
		if (c->run_pos[r][i] == (int)g)
			return true;
	}
	return false;
}

/* Its largest memory on any GPU, to stop the fewest jobs on a shared GPU. */
static uint64_t
run_big(const struct ctx *c, unsigned r)
{
	uint64_t m = 0;

	for (unsigned i = 0; i < c->in->run[r].job->nr_gpu && i < QJ_MAX_GPUS; i++) {
		if (c->run_mem[r][i] > m)
			m = c->run_mem[r][i];
	}
	return m;
}

/*
 * Stop candidates on GPU g (by_mem: the largest first, else the cheapest
 * first) into trial[] (a copy of gone[]) until the job fits there. Returns
 * how many it took, 0 when it cannot fit there; *worst: their highest priority.
 */
static unsigned
victims_on(struct ctx *c, const struct need *n, int prio, unsigned g, const bool *gone, bool *trial,
           bool by_mem, int *worst)
{
	const struct sched_input *in = c->in;
	struct skip s = { .run_gone = trial, .resv = true };
	unsigned cnt = 0;
	uint64_t room;

	memcpy(trial, gone, in->nr_run * sizeof(*trial));
	*worst = 0;
	for (;;) {
		int pick = -1;

		for (unsigned r = 0; r < in->nr_run; r++) {
			if (trial[r] || !victim_ok(&in->run[r], prio) || !run_on(c, r, g))
				continue;
			if (pick < 0) {
				pick = (int)r;
			} else if (by_mem && run_big(c, r) != run_big(c, (unsigned)pick)) {
				if (run_big(c, r) > run_big(c, (unsigned)pick))
					pick = (int)r;
			} else if (cheaper(in->run[r].job, in->run[pick].job)) {
				pick = (int)r;
			}
		}
		if (pick < 0)
			return 0;
		trial[pick] = true;
		if (!cnt || in->run[pick].job->req.priority > *worst)
			*worst = in->run[pick].job->req.priority;
		cnt++;
		if (gpu_fits(c, g, n, c->cfg->now, c->cfg->now + n->dur, &s, &room))
			return cnt;
	}
}

/*
 * Find the jobs to preempt so that w fits now: GPU by GPU, the one that
 * needs the fewest extra victims (then of the lowest priority; on each GPU
 * the lowest priority and most recently started go first), until it fits.
 * gone[] (on entry: the jobs already going away) gets the victims; set[]:
 * where w then goes. Returns whether such a set exists.
 */
static bool
find_victims(struct ctx *c, const struct sched_waiting *w, const struct need *n, bool *gone,
             unsigned *set)
{
	const struct sched_input *in = c->in;
	int prio = w->job->req.priority;
	struct skip s = { .run_gone = gone, .resv = true };
	bool *trial, *best;
	bool found = false, any = false;

	for (unsigned r = 0; r < in->nr_run; r++)
		any = any || (victim_ok(&in->run[r], prio) && !gone[r]);
	if (!any)
		return false;
	trial = xcalloc(in->nr_run, sizeof(*trial));
	best = xcalloc(in->nr_run, sizeof(*best));
	for (unsigned round = 0; round <= c->ng; round++) {
		unsigned best_cnt = 0;
		int best_worst = 0;
		bool have = false;

		found = place(c, w, n, c->cfg->now, &s, true, set);
		if (found)
			break;
		for (unsigned g = 0; g < c->ng; g++) {
			uint64_t room;
			bool wanted = !n->nr_want;

			for (unsigned i = 0; i < n->nr_want; i++)
				wanted = wanted || n->want[i] == (int)g;
			if (!wanted || !gpu_usable(&in->gpu[g], w) ||
			    gpu_fits(c, g, n, c->cfg->now, c->cfg->now + n->dur, &s, &room))
				continue;
			for (int by_mem = 0; by_mem < 2; by_mem++) {
				int worst;
				unsigned cnt =
				        victims_on(c, n, prio, g, gone, trial, by_mem, &worst);

				if (!cnt)
					continue;
				if (!have || cnt < best_cnt ||
				    (cnt == best_cnt && worst < best_worst)) {
					have = true;
					best_cnt = cnt;
					best_worst = worst;
					memcpy(best, trial, in->nr_run * sizeof(*best));
				}
			}
		}
		if (!have)
			break;
		memcpy(gone, best, in->nr_run * sizeof(*gone));
	}
	free(trial);
	free(best);
	if (!found)
		return false;
	/* keep only the victims on the GPUs it takes (a greedy step may have overshot) */
	for (unsigned r = 0; r < in->nr_run; r++) {
		bool on = false;

		if (!gone[r] || c->run_going[r])
			continue;
		for (unsigned k = 0; k < n->n; k++)
			on = on || run_on(c, r, set[k]);
		if (!on)
			gone[r] = false;
	}
	return true;
}

/* ---- the plan ---- */

void
sched_config_defaults(struct sched_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->default_mode = QJ_MODE_EXCLUSIVE;
	cfg->default_gpu_mem = 0;
	cfg->jobs_per_gpu = 0;
	cfg->mem_margin = 256ULL << 20;
	cfg->backfill = true;
	cfg->preemption = true;
	cfg->now = 0;
}

static void
set_verdict(struct sched_verdict *v, const char *code, double est)
{
	snprintf(v->code, sizeof(v->code), "%s", code);
	v->est_start = est;
}

struct walk {
	struct ctx *c;
	struct sched_plan *out;
	size_t act_alloc;
	int resv_w;    /* index in wait[] of the reservation; -1 = none */
	double resv_t; /* its start; T_NEVER = unknown */
	unsigned resv_set[QJ_MAX_GPUS];
	bool *simulate; /* per wait[]: its estimate is to be simulated */
	/*
	 * Jobs that ask the same (and may use the same GPUs) get the same answer:
	 * during the walk the profile only fills, so a shape that did not fit
	 * with some time limit does not fit later with that limit or a longer
	 * one, and its verdict holds until something starts or is reserved
	 * (gen). The estimates reuse it the same way.
	 */
	struct shape *shapes;
	size_t nr_shapes, alloc_shapes;
	bool any_reserved; /* some GPU is reserved: shapes are per user */
	unsigned gen;
};

#define MAX_SHAPES 512

struct shape {
	unsigned n;
	bool excl, slots, admin;
	uint64_t mem;
	uid_t uid;
	gid_t gid;
	int someday; /* fits once everything ended: -1 not known yet */
	bool failed; /* did not fit now with a time limit of fail_dur or more */
	double fail_dur;
	bool have; /* the verdict below is valid at gen */
	unsigned gen;
	bool sim;
	char code[32];
	char reason[QJ_REASON_LEN];
	bool sim_have; /* the estimates: one found at sim_from for sim_dur */
	double sim_from, sim_dur;
	bool sim_never; /* one was unknown, for never_dur or more */
	double never_dur;
};

static struct shape *
shape_get(struct walk *wk, const struct sched_waiting *w, const struct need *n)
{
	const struct qjob *j = w->job;
	uid_t uid = wk->any_reserved ? j->uid : 0;
	gid_t gid = wk->any_reserved ? j->gid : 0;
	bool admin = wk->any_reserved && w->owner_is_admin;
	struct shape *e;

	if (!n->n || n->nr_want || j->state == QJ_SUSPENDED)
		return NULL;
	for (size_t i = 0; i < wk->nr_shapes; i++) {
		e = &wk->shapes[i];
		if (e->n == n->n && e->excl == n->excl && e->slots == n->slots &&
		    e->mem == n->mem && e->uid == uid && e->gid == gid && e->admin == admin)
			return e;
	}
	if (wk->nr_shapes >= MAX_SHAPES)
		return NULL;
	ALLOC_GROW(wk->shapes, wk->nr_shapes + 1, wk->alloc_shapes);
	e = &wk->shapes[wk->nr_shapes++];
	memset(e, 0, sizeof(*e));
	e->n = n->n;
	e->excl = n->excl;
	e->slots = n->slots;
	e->mem = n->mem;
	e->uid = uid;
	e->gid = gid;
	e->admin = admin;
	e->someday = -1;
	return e;
}

static void
shape_keep(struct walk *wk, struct shape *e, const struct sched_verdict *v, bool sim)
{
	if (!e)
		return;
	e->have = true;
	e->gen = wk->gen;
	e->sim = sim;
	snprintf(e->code, sizeof(e->code), "%s", v->code);
	snprintf(e->reason, sizeof(e->reason), "%s", v->reason);
}

/* Emit the preemptions of the victims in gone[] (those not already going) for wait[wi]. */
static void
preempt_for(struct walk *wk, unsigned wi, const struct need *n, const bool *gone,
            const unsigned *set)
{
	struct ctx *c = wk->c;
	const struct sched_input *in = c->in;
	const struct sched_waiting *w = &in->wait[wi];
	struct sched_verdict *v = &wk->out->verdict[wi];
	unsigned nr_v = 0;

	snprintf(v->reason, sizeof(v->reason), "preempting");
	for (unsigned r = 0; r < in->nr_run; r++) {
		struct sched_action *a;
		const struct qjob *vj = in->run[r].job;

		if (!gone[r] || c->run_going[r])
			continue;
		a = act_add(wk->out, &wk->act_alloc, SA_PREEMPT, vj->id);
		a->for_job = w->job->id;
		snprintf(a->reason, sizeof(a->reason),
		         "preempted for job %llu (priority %d, above its %d)",
		         (unsigned long long)w->job->id, w->job->req.priority, vj->req.priority);
		bprintf(v->reason, sizeof(v->reason), "%s job %llu", nr_v++ ? "," : "",
		        (unsigned long long)vj->id);
	}
	bprintf(v->reason, sizeof(v->reason), " (lower priority) to make room on %s",
	        plural(n->n, "GPU", "GPUs"));
	for (unsigned k = 0; k < n->n; k++)
		bprintf(v->reason, sizeof(v->reason), "%s%u", k ? ", " : " ",
		        in->gpu[set[k]].index);
	set_verdict(v, "resources", 0);
}

/* The first blocked job: where and when it will fit, preempting for it if it may. */
static void
reserve(struct walk *wk, unsigned wi, const struct need *n)
{
	struct ctx *c = wk->c;
	const struct sched_input *in = c->in;
	const struct sched_waiting *w = &in->wait[wi];
	struct sched_verdict *v = &wk->out->verdict[wi];
	bool *gone = xcalloc(in->nr_run ? in->nr_run : 1, sizeof(*gone));
	struct skip s = { .run_gone = gone };
	struct times ends = { NULL, 0, 0 };
	unsigned set[QJ_MAX_GPUS];
	double t;

	wk->resv_w = (int)wi;
	v->reserved = true;
	/* jobs already stopping make room: wait for them, preempt no more */
	for (unsigned r = 0; r < in->nr_run; r++)
		gone[r] = c->run_going[r];
	if (place(c, w, n, c->cfg->now, &s, true, set)) {
		explain(c, w, n, 0, v->reason, sizeof(v->reason));
		bprintf(v->reason, sizeof(v->reason),
		        "; it goes next, once the stopping jobs there are gone");
		times_build(c, &ends);
		t = earliest(c, w, n, c->cfg->now, &ends, wk->resv_set, ~0ULL);
		wk->resv_t = T_NEVER;
		memcpy(wk->resv_set, set, sizeof(set));
		set_verdict(v, "resources", isfinite(t) ? t : 0);
		goto occupy;
	}
	if (c->cfg->preemption && find_victims(c, w, n, gone, set)) {
		preempt_for(wk, wi, n, gone, set);
		wk->resv_t = T_NEVER;
		memcpy(wk->resv_set, set, sizeof(set));
		goto occupy;
	}
	explain(c, w, n, 0, v->reason, sizeof(v->reason));
	bprintf(v->reason, sizeof(v->reason), "; it is next: GPUs are kept for it as they free");
	times_build(c, &ends);
	t = earliest(c, w, n, c->cfg->now, &ends, set, ~0ULL);
	if (isfinite(t)) {
		wk->resv_t = t;
		memcpy(wk->resv_set, set, sizeof(set));
		set_verdict(v, "resources", t);
	} else {
		/* no end known: hold GPUs for it from now */
		if (!hold_set(c, w, n, set)) {
			/* cannot happen: the caller checked; keep nothing */
			wk->resv_w = -1;
			v->reserved = false;
			set_verdict(v, "resources", 0);
			free(gone);
			free(ends.v);
			return;
		}
		wk->resv_t = T_NEVER;
		memcpy(wk->resv_set, set, sizeof(set));
		set_verdict(v, "resources", 0);
	}
occupy:
	free(gone);
	free(ends.v);
	if (isfinite(wk->resv_t)) {
		occupy(c, n, wk->resv_set, wk->resv_t, OCC_RESV);
	} else {
		struct need forever = *n;

		forever.dur = T_NEVER;
		occupy(c, &forever, wk->resv_set, c->cfg->now, OCC_RESV);
	}
}

/* Why a job that would fit but for the reservation waits. */
static void
reservation_reason(const struct walk *wk, const struct need *n, struct sched_verdict *v)
{
	const struct qjob *rj = wk->c->in->wait[wk->resv_w].job;

	snprintf(v->reason, sizeof(v->reason),
	         "the GPUs free now are reserved for job %llu, which is ahead in the order; ",
	         (unsigned long long)rj->id);
	if (!isfinite(wk->resv_t))
		bprintf(v->reason, sizeof(v->reason),
		        "the time it starts is unknown, so only it may use them");
	else if (n->dur == T_NEVER)
		bprintf(v->reason, sizeof(v->reason), "a job without a time limit would delay it");
	else
		bprintf(v->reason, sizeof(v->reason),
		        "this job may run %.0f s by its time limit, which would delay it", n->dur);
	set_verdict(v, "reservation", 0);
}

/*
 * What decides a job before its resources do: held, can never fit, waits
 * for a dependency, over its owner's quota. Returns whether it did.
 */
static bool
walk_gate(struct walk *wk, unsigned wi, const struct need *n, const struct user_count *u)
{
	struct ctx *c = wk->c;
	const struct sched_input *in = c->in;
	const struct sched_waiting *w = &in->wait[wi];
	const struct qjob *j = w->job;
	struct sched_verdict *v = &wk->out->verdict[wi];
	char why[QJ_REASON_LEN];

	if (j->state == QJ_HELD) {
		snprintf(v->reason, sizeof(v->reason),
		         "held: it starts only once released ('gpuscope queue release %llu')",
		         (unsigned long long)j->id);
		set_verdict(v, "held", 0);
	} else if (n->n && c->ng == 0) {
		snprintf(v->reason, sizeof(v->reason), "no GPU has been sampled yet");
		set_verdict(v, "resources", 0);
	} else if (n->n && j->state != QJ_SUSPENDED &&
	           !sched_possible(in, &j->req, why, sizeof(why))) {
		struct sched_action *a = act_add(wk->out, &wk->act_alloc, SA_FAIL, j->id);

		snprintf(a->reason, sizeof(a->reason), "%s", why);
		snprintf(v->reason, sizeof(v->reason), "%s", why);
		set_verdict(v, "impossible", 0);
	} else if (n->want_missing) {
		snprintf(v->reason, sizeof(v->reason), "GPU %s is not on this machine now",
		         n->missing);
		set_verdict(v, "impossible", 0);
	} else if (!w->deps_done || w->dep_missing) {
		explain_deps(in, w, v->reason, sizeof(v->reason));
		set_verdict(v, "dependency", 0);
	} else if (j->state != QJ_SUSPENDED && w->max_running_gpus &&
	           w->user_running_gpus + u->gpus + n->n > w->max_running_gpus) {
		snprintf(v->reason, sizeof(v->reason),
		         "quota: %s has %u %s running of at most %u, and this job asks %u", j->user,
		         w->user_running_gpus + u->gpus,
		         plural(w->user_running_gpus + u->gpus, "GPU", "GPUs"), w->max_running_gpus,
		         n->n);
		set_verdict(v, "quota", 0);
	} else if (j->state != QJ_SUSPENDED && w->max_running_jobs &&
	           w->user_running_jobs + u->jobs + 1 > w->max_running_jobs) {
		snprintf(v->reason, sizeof(v->reason), "quota: %s has %u %s running of at most %u",
		         j->user, w->user_running_jobs + u->jobs,
		         plural(w->user_running_jobs + u->jobs, "job", "jobs"),
		         w->max_running_jobs);
		set_verdict(v, "quota", 0);
	} else {
		return false;
	}
	return true;
}

static void
walk_one(struct walk *wk, unsigned wi, bool *strict_block, uint64_t *blocker)
{
	struct ctx *c = wk->c;
	const struct sched_input *in = c->in;
	const struct sched_waiting *w = &in->wait[wi];
	const struct qjob *j = w->job;
	struct sched_verdict *v = &wk->out->verdict[wi];
	struct user_count *u = user_get(c, j->uid);
	struct need n;
	struct shape *e;
	unsigned set[QJ_MAX_GPUS];

	need_init(c, j, &n);
	if (walk_gate(wk, wi, &n, u))
		return;
	e = shape_get(wk, w, &n);
	if (e && e->have && e->gen == wk->gen && (!*strict_block || !e->sim) &&
	    (!e->sim || (e->failed && n.dur >= e->fail_dur))) {
		if (!strcmp(e->code, "reservation"))
			reservation_reason(wk, &n, v);
		else
			snprintf(v->reason, sizeof(v->reason), "%s", e->reason);
		set_verdict(v, e->code, 0);
		wk->simulate[wi] = e->sim;
		return;
	}
	if (e && e->someday < 0)
		e->someday = n.n ? fits_some_day(c, w, &n, set) : 1;
	if (n.n && !(e ? e->someday : fits_some_day(c, w, &n, set))) {
		const char *code = unusable_code(c, w, &n, v->reason, sizeof(v->reason));

		set_verdict(v, code, 0);
		shape_keep(wk, e, v, false);
		return;
	}
	if (n.n && *strict_block) {
		snprintf(v->reason, sizeof(v->reason),
		         "waits behind job %llu, first in the order (backfill is off)",
		         (unsigned long long)*blocker);
		set_verdict(v, "priority", 0);
		wk->simulate[wi] = true;
		return;
	}
	if (!(e && e->failed && n.dur >= e->fail_dur) &&
	    place(c, w, &n, c->cfg->now, NULL, true, set)) {
		struct sched_action *a = act_add(wk->out, &wk->act_alloc, SA_START, j->id);

		memcpy(a->gpu, set, sizeof(set[0]) * n.n);
		a->nr_gpu = n.n;
		occupy(c, &n, set, c->cfg->now, OCC_START);
		for (unsigned k = 0; k < n.n; k++)
			c->jobs_on[set[k]]++;
		if (j->state != QJ_SUSPENDED) {
			/* a suspended one counts as running already */
			u->gpus += n.n;
			u->jobs++;
		}
		v->reason[0] = '\0';
		set_verdict(v, "starting", c->cfg->now);
		if (n.n)
			wk->gen++;
		return;
	}
	if (e && (!e->failed || n.dur < e->fail_dur)) {
		e->failed = true;
		e->fail_dur = n.dur;
	}
	if (wk->resv_w < 0) {
		reserve(wk, wi, &n);
		wk->gen++;
		if (!c->cfg->backfill) {
			*strict_block = true;
			*blocker = j->id;
		}
		return;
	}
	wk->simulate[wi] = true;
	{
		struct skip noresv = { .resv = true };
		unsigned tmp[QJ_MAX_GPUS];

		if (place(c, w, &n, c->cfg->now, &noresv, true, tmp)) {
			reservation_reason(wk, &n, v);
			shape_keep(wk, e, v, true);
			return;
		}
	}
	explain(c, w, &n, in->wait[wk->resv_w].job->id, v->reason, sizeof(v->reason));
	set_verdict(v, "resources", 0);
	shape_keep(wk, e, v, true);
}

/* Estimated starts of the jobs that wait for resources, in order, bounded. */
static void
simulate(struct walk *wk, const struct key *keys, unsigned nr)
{
	struct ctx *c = wk->c;
	const struct sched_input *in = c->in;
	double floor_t = c->cfg->now;
	bool unknown = false;
	unsigned long long budget = c->work + SIM_BUDGET;
	struct times ends = { NULL, 0, 0 };

	if (wk->resv_w >= 0 && !c->cfg->backfill) {
		double rt = wk->out->verdict[wk->resv_w].est_start;

		if (rt > 0)
			floor_t = rt;
		else
			unknown = true;
	}
	for (unsigned k = 0; k < nr; k++) {
		unsigned wi = keys[k].idx;
		struct sched_verdict *v = &wk->out->verdict[wi];
		struct need n;
		struct shape *e;
		unsigned set[QJ_MAX_GPUS];
		double t, from;

		if (!wk->simulate[wi])
			continue;
		if (unknown || c->work >= budget) {
			v->est_start = 0;
			continue;
		}
		need_init(c, in->wait[wi].job, &n);
		e = shape_get(wk, &in->wait[wi], &n);
		if (e && e->sim_never && n.dur >= e->never_dur) {
			v->est_start = 0;
			continue;
		}
		if (!ends.v)
			times_build(c, &ends);
		from = floor_t;
		if (e && e->sim_have && n.dur >= e->sim_dur && e->sim_from > from)
			from = e->sim_from; /* as long, on a fuller profile: not sooner */
		t = earliest(c, &in->wait[wi], &n, from, &ends, set, budget);
		if (!isfinite(t)) {
			v->est_start = 0;
			if (e && c->work < budget && (!e->sim_never || n.dur < e->never_dur)) {
				e->sim_never = true;
				e->never_dur = n.dur;
			}
			if (!c->cfg->backfill)
				unknown =
				        true; /* strict order: nothing behind it is known either */
			continue;
		}
		if (e) {
			e->sim_have = true;
			e->sim_from = t;
			e->sim_dur = n.dur;
		}
		v->est_start = t;
		occupy(c, &n, set, t, OCC_SIM);
		times_add(&ends, t + n.dur);
		if (!c->cfg->backfill)
			floor_t = t;
	}
	free(ends.v);
}

int
sched_plan(const struct sched_input *in, struct sched_plan *out)
{
	struct ctx c;
	struct walk wk;
	struct key *keys;
	bool strict_block = false;
	uint64_t blocker = 0;
	unsigned pos = 0;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	c.in = in;
	c.cfg = in->cfg;
	c.ng = in->nr_gpu < SCHED_MAX_GPUS ? in->nr_gpu : SCHED_MAX_GPUS;
	ledger_build(&c, out);

	out->nr_verdict = in->nr_wait;
	out->verdict = xcalloc(in->nr_wait ? in->nr_wait : 1, sizeof(*out->verdict));
	keys = xcalloc(in->nr_wait ? in->nr_wait : 1, sizeof(*keys));
	for (unsigned i = 0; i < in->nr_wait; i++) {
		const struct qjob *j = in->wait[i].job;

		keys[i] = (struct key){ .priority = j->req.priority,
			                .suspended = j->state == QJ_SUSPENDED,
			                .usage = in->wait[i].usage,
			                .submit = j->submit_time,
			                .id = j->id,
			                .idx = i };
		out->verdict[i].job = j->id;
	}
	qsort(keys, in->nr_wait, sizeof(*keys), key_cmp);

	memset(&wk, 0, sizeof(wk));
	wk.c = &c;
	wk.out = out;
	wk.resv_w = -1;
	wk.resv_t = T_NEVER;
	wk.simulate = xcalloc(in->nr_wait ? in->nr_wait : 1, sizeof(*wk.simulate));
	for (unsigned g = 0; g < c.ng; g++)
		wk.any_reserved = wk.any_reserved || (in->gpu[g].flags & QG_RESERVED);
	for (unsigned k = 0; k < in->nr_wait; k++) {
		unsigned wi = keys[k].idx;

		if (in->wait[wi].job->state != QJ_HELD)
			out->verdict[wi].position = ++pos;
		walk_one(&wk, wi, &strict_block, &blocker);
	}
	simulate(&wk, keys, in->nr_wait);

	free(wk.simulate);
	free(wk.shapes);
	free(keys);
	for (unsigned g = 0; g < SCHED_MAX_GPUS; g++)
		free(c.occ[g].v);
	free(c.run_pos);
	free(c.run_mem);
	free(c.run_going);
	free(c.users);
	return 0;
}

void
sched_plan_release(struct sched_plan *p)
{
	free(p->act);
	free(p->verdict);
	p->act = NULL;
	p->verdict = NULL;
	p->nr_act = p->nr_verdict = 0;
}

/* sched_possible() for a job that names its GPUs (mem: per GPU, with the shared default). */
static bool
possible_named(const struct sched_input *in, const struct qj_request *req, uint64_t mem, char *why,
               size_t why_len)
{
	const struct sched_config *cfg = in->cfg;

	for (unsigned i = 0; i < req->nr_want; i++) {
		int g = gpu_pos(in, req->want_uuid[i]);

		if (g < 0) {
			snprintf(why, why_len, "asks for GPU %s, which is not on this machine",
			         req->want_uuid[i]);
			return false;
		}
		if (in->gpu[g].flags & QG_LOST) {
			snprintf(why, why_len, "asks for GPU %u (%s), which was lost",
			         in->gpu[g].index, req->want_uuid[i]);
			return false;
		}
		for (unsigned k = 0; k < i; k++) {
			if (!strcmp(req->want_uuid[k], req->want_uuid[i])) {
				snprintf(why, why_len, "names GPU %u twice", in->gpu[g].index);
				return false;
			}
		}
		if (mem && in->gpu[g].total < add_sat(mem, cfg->mem_margin)) {
			uint64_t can = in->gpu[g].total > cfg->mem_margin
			                       ? in->gpu[g].total - cfg->mem_margin
			                       : 0;

			snprintf(
			        why, why_len,
			        "asks %.1f GiB per GPU; GPU %u has %.1f GiB for jobs (%.1f GiB less a margin of %.1f GiB)",
			        gib(mem), in->gpu[g].index, gib(can), gib(in->gpu[g].total),
			        gib(cfg->mem_margin));
			return false;
		}
	}
	return true;
}

bool
sched_possible(const struct sched_input *in, const struct qj_request *req, char *why,
               size_t why_len)
{
	const struct sched_config *cfg = in->cfg;
	unsigned ng = in->nr_gpu < SCHED_MAX_GPUS ? in->nr_gpu : SCHED_MAX_GPUS;
	unsigned n = req->nr_want ? req->nr_want : req->gpus;
	unsigned present = 0, big = 0;
	uint64_t largest = 0, mem = req->gpu_mem;
	enum qj_mode mode = req->mode == QJ_MODE_DEFAULT ? cfg->default_mode : req->mode;

	if (mode == QJ_MODE_SHARED && mem < cfg->default_gpu_mem)
		mem = cfg->default_gpu_mem;
	if (why_len)
		why[0] = '\0';
	if (req->nr_want && req->gpus && req->gpus != req->nr_want) {
		snprintf(why, why_len, "asks %u %s but names %u", req->gpus,
		         plural(req->gpus, "GPU", "GPUs"), req->nr_want);
		return false;
	}
	if (n > QJ_MAX_GPUS) {
		snprintf(why, why_len, "asks %u GPUs; one job may have at most %u", n, QJ_MAX_GPUS);
		return false;
	}
	if (n == 0)
		return true;
	if (req->nr_want)
		return possible_named(in, req, mem, why, why_len);
	for (unsigned g = 0; g < ng; g++) {
		uint64_t can;

		if (in->gpu[g].flags & QG_LOST)
			continue;
		present++;
		can = in->gpu[g].total > cfg->mem_margin ? in->gpu[g].total - cfg->mem_margin : 0;
		if (can > largest)
			largest = can;
		if (can >= mem)
			big++;
	}
	if (n > present) {
		snprintf(why, why_len, "asks %u GPUs; this machine has %u", n, present);
		return false;
	}
	if (big < n) {
		if (!big)
			snprintf(
			        why, why_len,
			        "asks %.1f GiB per GPU; the largest GPU here has %.1f GiB for jobs (its total less a margin of %.1f GiB)",
			        gib(mem), gib(largest), gib(cfg->mem_margin));
		else
			snprintf(why, why_len,
			         "asks %u GPUs with %.1f GiB each; only %u %s here %s that much", n,
			         gib(mem), big, plural(big, "GPU", "GPUs"),
			         plural(big, "has", "have"));
		return false;
	}
	return true;
}

double
sched_decay(double usage, double t0, double t, double hl)
{
	if (!(hl > 0) || !(t > t0))
		return usage;
	return usage * exp2(-(t - t0) / hl);
}
