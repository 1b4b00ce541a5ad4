/*
 * Tests of the queue's policy (queue/sched.c) on made-up machines: the
 * memory ledger (foreign processes, lazy allocation), admission by mode
 * (exclusive, shared by memory, slots), placement (pack, spread, topology),
 * GPUs that may not be used (reserved, drained, dirty, lost), quotas, the
 * order (priority, fair share), backfill behind a reservation that is never
 * starved, preemption and its idempotence, sched_possible()'s messages and
 * sched_decay(); and a 64-GPU, 2000-job plan, timed as a diagnostic.
 */
#include "queue/sched.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/xalloc.h"
#include "harness.h"

#define GB   (1024ULL * 1024 * 1024)
#define MB   (1024ULL * 1024)
#define T0   1000000.0
#define MAXJ 2100

struct mach {
	struct sched_config cfg;
	struct sched_gpu gpu[SCHED_MAX_GPUS];
	unsigned ng;
	enum sched_link link[SCHED_MAX_GPUS][SCHED_MAX_GPUS];
	struct qjob *rj; /* running jobs */
	struct sched_running *run;
	unsigned nr_run;
	struct qjob *wj; /* waiting jobs */
	struct sched_waiting *wait;
	unsigned nr_wait;
	struct sched_plan plan;
	bool planned;
};

static struct mach *
mach_new(unsigned ng, uint64_t total)
{
	struct mach *m = xcalloc(1, sizeof(*m));

	sched_config_defaults(&m->cfg);
	m->cfg.now = T0;
	m->ng = ng;
	for (unsigned g = 0; g < ng; g++) {
		snprintf(m->gpu[g].uuid, sizeof(m->gpu[g].uuid), "GPU-%04u", g);
		m->gpu[g].index = g;
		m->gpu[g].ok = true;
		m->gpu[g].total = total;
	}
	m->rj = xcalloc(MAXJ, sizeof(*m->rj));
	m->run = xcalloc(MAXJ, sizeof(*m->run));
	m->wj = xcalloc(MAXJ, sizeof(*m->wj));
	m->wait = xcalloc(MAXJ, sizeof(*m->wait));
	return m;
}

static void
mach_free(struct mach *m)
{
	if (m->planned)
		sched_plan_release(&m->plan);
	free(m->rj);
	free(m->run);
	free(m->wj);
	free(m->wait);
	free(m);
}

/* A running job on GPUs (positions, -1 ends the list), each using use bytes now. */
static struct sched_running *
run_add(struct mach *m, uint64_t id, uid_t uid, enum qj_mode mode, uint64_t mem, uint64_t use,
        const int *gpus)
{
	struct qjob *j = &m->rj[m->nr_run];
	struct sched_running *r = &m->run[m->nr_run++];

	memset(j, 0, sizeof(*j));
	j->id = id;
	j->uid = uid;
	j->gid = uid;
	snprintf(j->user, sizeof(j->user), "u%u", (unsigned)uid);
	j->state = QJ_RUNNING;
	j->req.mode = mode;
	j->req.gpu_mem = mem;
	j->start_time = T0 - 100;
	for (unsigned i = 0; gpus[i] >= 0; i++) {
		snprintf(j->gpu_uuid[i], sizeof(j->gpu_uuid[i]), "%s", m->gpu[gpus[i]].uuid);
		j->nr_gpu++;
		r->observed[i] = use;
		r->current[i] = use;
		m->gpu[gpus[i]].used += use;
	}
	j->req.gpus = j->nr_gpu;
	r->job = j;
	return r;
}

static struct sched_waiting *
wait_add(struct mach *m, uint64_t id, uid_t uid, unsigned gpus, uint64_t mem, enum qj_mode mode)
{
	struct qjob *j = &m->wj[m->nr_wait];
	struct sched_waiting *w = &m->wait[m->nr_wait++];

	memset(j, 0, sizeof(*j));
	memset(w, 0, sizeof(*w));
	j->id = id;
	j->uid = uid;
	j->gid = uid;
	snprintf(j->user, sizeof(j->user), "u%u", (unsigned)uid);
	j->state = QJ_QUEUED;
	j->req.gpus = gpus;
	j->req.gpu_mem = mem;
	j->req.mode = mode;
	j->submit_time = T0 - 1000 + (double)id;
	w->job = j;
	w->deps_done = true;
	return w;
}

/* The job of a waiting entry, to change what it asks. */
static struct qjob *
wjob(struct sched_waiting *w)
{
	return (struct qjob *)(uintptr_t)w->job;
}

static struct qjob *
rjob(struct sched_running *r)
{
	return (struct qjob *)(uintptr_t)r->job;
}

static struct sched_plan *
plan(struct mach *m)
{
	struct sched_input in;

	if (m->planned)
		sched_plan_release(&m->plan);
	memset(&in, 0, sizeof(in));
	in.cfg = &m->cfg;
	in.gpu = m->gpu;
	in.nr_gpu = m->ng;
	memcpy(in.link, m->link, sizeof(in.link));
	in.run = m->run;
	in.nr_run = m->nr_run;
	in.wait = m->wait;
	in.nr_wait = m->nr_wait;
	sched_plan(&in, &m->plan);
	m->planned = true;
	return &m->plan;
}

static const struct sched_action *
act_of(const struct sched_plan *p, enum sched_action_kind kind, uint64_t job)
{
	for (unsigned i = 0; i < p->nr_act; i++) {
		if (p->act[i].kind == kind && p->act[i].job == job)
			return &p->act[i];
	}
	return NULL;
}

static unsigned
count_acts(const struct sched_plan *p, enum sched_action_kind kind)
{
	unsigned n = 0;

	for (unsigned i = 0; i < p->nr_act; i++)
		n += p->act[i].kind == kind;
	return n;
}

/* The verdict on a job; one with an empty code when the plan has none (a failure below). */
static const struct sched_verdict *
verdict_of(const struct sched_plan *p, uint64_t job)
{
	static struct sched_verdict none;

	snprintf(none.code, sizeof(none.code), "(no verdict)");
	none.reason[0] = '\0';
	for (unsigned i = 0; i < p->nr_verdict; i++) {
		if (p->verdict[i].job == job)
			return &p->verdict[i];
	}
	return &none;
}

/* The GPU (position) a started job got first, or -1 when it does not start. */
static int
started_on(const struct sched_plan *p, uint64_t job)
{
	const struct sched_action *a = act_of(p, SA_START, job);

	return a ? (a->nr_gpu ? (int)a->gpu[0] : 99) : -1;
}

static bool
has(const char *s, const char *part)
{
	return s && strstr(s, part);
}

static const int G0[] = { 0, -1 }, G1[] = { 1, -1 }, G2[] = { 2, -1 }, G3[] = { 3, -1 };
static const int G01[] = { 0, 1, -1 };

static void
test_defaults(void)
{
	struct sched_config cfg;

	sched_config_defaults(&cfg);
	ok(cfg.default_mode == QJ_MODE_EXCLUSIVE && cfg.mem_margin == 256 * MB && cfg.backfill &&
	           cfg.preemption && cfg.jobs_per_gpu == 0 && cfg.default_gpu_mem == 0,
	   "defaults: exclusive, 256 MiB margin, backfill and preemption on");
}

static void
test_exclusive(void)
{
	struct mach *m = mach_new(2, 80 * GB);
	struct sched_plan *p;

	wait_add(m, 1, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	p = plan(m);
	is_int(started_on(p, 1), 0, "exclusive on an empty machine: GPU 0 (ties by index)");
	is_str(verdict_of(p, 1)->code, "starting", "a job that starts has the code 'starting'");
	is_dbl(verdict_of(p, 1)->est_start, T0, 0, "a job that starts now is estimated now");
	mach_free(m);

	m = mach_new(2, 80 * GB);
	run_add(m, 5, 1000, QJ_MODE_SHARED, 1 * GB, 1 * GB, G0);
	wait_add(m, 1, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	p = plan(m);
	is_int(started_on(p, 1), 1, "exclusive avoids a GPU with a job of ours, even a small one");
	is_int(p->jobs_on[0], 1, "the ledger counts the job on GPU 0");
	mach_free(m);

	m = mach_new(2, 80 * GB);
	run_add(m, 5, 1000, QJ_MODE_EXCLUSIVE, 0, 1 * GB, G0);
	run_add(m, 6, 1000, QJ_MODE_EXCLUSIVE, 0, 1 * GB, G1);
	wait_add(m, 1, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	p = plan(m);
	is_int(started_on(p, 1), -1, "exclusive: no GPU free, it waits");
	ok(has(verdict_of(p, 1)->reason, "GPU 0 runs job 5") &&
	           has(verdict_of(p, 1)->reason, "GPU 1 runs job 6"),
	   "the reason names each GPU's job: %s", verdict_of(p, 1)->reason);
	is_str(verdict_of(p, 1)->code, "resources", "code 'resources'");
	mach_free(m);
}

static void
test_foreign(void)
{
	struct mach *m = mach_new(2, 80 * GB);
	struct sched_plan *p;

	m->gpu[0].used = 21 * GB; /* someone outside the queue */
	wait_add(m, 1, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	p = plan(m);
	is_int(started_on(p, 1), 1, "exclusive: a GPU used by a foreign process is not free");
	ok(p->foreign[0] == 21 * GB && p->available[0] == 59 * GB,
	   "ledger: 21 GiB foreign, 59 GiB available on GPU 0");
	mach_free(m);

	m = mach_new(1, 80 * GB);
	m->gpu[0].used = 21 * GB;
	wait_add(m, 1, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	p = plan(m);
	ok(started_on(p, 1) < 0 && has(verdict_of(p, 1)->reason,
	                               "GPU 0 has 21.0 GiB used by processes outside the queue"),
	   "the reason says so: %s", verdict_of(p, 1)->reason);
	mach_free(m);

	m = mach_new(1, 80 * GB);
	m->gpu[0].used = 100 * MB; /* the driver's own, under the margin */
	wait_add(m, 1, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	p = plan(m);
	is_int(started_on(p, 1), 0, "foreign use under mem_margin leaves the GPU free");
	mach_free(m);

	m = mach_new(1, 80 * GB);
	run_add(m, 5, 1000, QJ_MODE_SHARED, 10 * GB, 10 * GB, G0);
	m->gpu[0].used += 20 * GB;
	wait_add(m, 1, 1000, 1, 50 * GB, QJ_MODE_SHARED);
	p = plan(m);
	ok(p->foreign[0] == 20 * GB && p->available[0] == 50 * GB,
	   "foreign = used - our processes' use: 20 GiB, 50 GiB left");
	ok(started_on(p, 1) < 0, "shared: 50 GiB does not fit in 50 GiB with the margin");
	wjob(&m->wait[0])->req.gpu_mem = 49 * GB;
	p = plan(m);
	is_int(started_on(p, 1), 0, "49 GiB does");
	mach_free(m);
}

static void
test_shared(void)
{
	struct mach *m = mach_new(1, 80 * GB);
	struct sched_plan *p;

	run_add(m, 5, 1000, QJ_MODE_SHARED, 30 * GB, 5 * GB, G0);
	wait_add(m, 1, 1000, 1, 50 * GB, QJ_MODE_SHARED);
	wait_add(m, 2, 1000, 1, 40 * GB, QJ_MODE_SHARED);
	p = plan(m);
	is_int(p->available[0], 50 * GB, "available counts the declared 30 GiB, not the 5 used");
	ok(started_on(p, 1) < 0, "50 GiB + margin does not fit in 50 GiB");
	ok(has(verdict_of(p, 1)->reason, "needs 50.0 GiB on 1 GPU") &&
	           has(verdict_of(p, 1)->reason, "GPU 0 has 49.8 GiB available"),
	   "the reason gives sizes: %s", verdict_of(p, 1)->reason);
	ok(started_on(p, 2) < 0 && !strcmp(verdict_of(p, 2)->code, "reservation"),
	   "40 GiB would fit, but job 1 keeps its 50 GiB reserved (no end known): %s",
	   verdict_of(p, 2)->reason);
	m->nr_wait = 0;
	wait_add(m, 2, 1000, 1, 40 * GB, QJ_MODE_SHARED);
	p = plan(m);
	is_int(started_on(p, 2), 0, "alone, 40 GiB fits beside the 30 GiB job");
	mach_free(m);

	m = mach_new(1, 80 * GB);
	run_add(m, 5, 1000, QJ_MODE_EXCLUSIVE, 0, 1 * GB, G0);
	wait_add(m, 1, 1000, 1, 1 * GB, QJ_MODE_SHARED);
	p = plan(m);
	ok(started_on(p, 1) < 0 && has(verdict_of(p, 1)->reason, "runs job 5"),
	   "shared: not on a GPU held exclusively (%s)", verdict_of(p, 1)->reason);
	mach_free(m);

	/* two shared jobs of one plan are both counted */
	m = mach_new(1, 80 * GB);
	wait_add(m, 1, 1000, 1, 30 * GB, QJ_MODE_SHARED);
	wait_add(m, 2, 1000, 1, 30 * GB, QJ_MODE_SHARED);
	wait_add(m, 3, 1000, 1, 30 * GB, QJ_MODE_SHARED);
	p = plan(m);
	ok(started_on(p, 1) == 0 && started_on(p, 2) == 0 && started_on(p, 3) < 0,
	   "three 30 GiB jobs on 80 GiB: two start in one plan, the third waits");
	mach_free(m);
}

static void
test_lazy(void)
{
	struct mach *m = mach_new(1, 80 * GB);
	struct sched_plan *p;
	struct sched_running *r;

	/* declared 10 GiB, grew to 40 GiB: holds 40 */
	run_add(m, 5, 1000, QJ_MODE_SHARED, 10 * GB, 40 * GB, G0);
	wait_add(m, 1, 1000, 1, 45 * GB, QJ_MODE_SHARED);
	p = plan(m);
	ok(p->available[0] == 40 * GB && started_on(p, 1) < 0,
	   "observed > declared: the job holds what it uses (40 GiB available)");
	mach_free(m);

	/* declared 40 GiB, uses 10 so far (allocates late): still holds 40 */
	m = mach_new(1, 80 * GB);
	run_add(m, 5, 1000, QJ_MODE_SHARED, 40 * GB, 10 * GB, G0);
	wait_add(m, 1, 1000, 1, 45 * GB, QJ_MODE_SHARED);
	p = plan(m);
	ok(p->available[0] == 40 * GB && p->foreign[0] == 0 && started_on(p, 1) < 0,
	   "declared > observed: the declared memory stays reserved");
	mach_free(m);

	/* observed peak above current use: the peak counts */
	m = mach_new(1, 80 * GB);
	r = run_add(m, 5, 1000, QJ_MODE_SHARED, 0, 5 * GB, G0);
	r->observed[0] = 60 * GB;
	m->cfg.jobs_per_gpu = 4;
	wait_add(m, 1, 1000, 1, 25 * GB, QJ_MODE_SHARED);
	p = plan(m);
	ok(p->available[0] == 20 * GB && started_on(p, 1) < 0,
	   "the largest use seen since launch is held, not the last sample");
	mach_free(m);
}

static void
test_slots(void)
{
	struct mach *m = mach_new(1, 80 * GB);
	struct sched_plan *p;

	m->cfg.jobs_per_gpu = 2;
	run_add(m, 5, 1000, QJ_MODE_SHARED, 0, 1 * GB, G0);
	wait_add(m, 1, 1000, 1, 0, QJ_MODE_SHARED);
	wait_add(m, 2, 1000, 1, 0, QJ_MODE_SHARED);
	p = plan(m);
	ok(started_on(p, 1) == 0 && started_on(p, 2) < 0,
	   "jobs_per_gpu 2: one more job fits, the next waits");
	ok(has(verdict_of(p, 2)->reason, "at most 2 jobs per GPU"),
	   "the reason names the slots: %s", verdict_of(p, 2)->reason);
	mach_free(m);

	/* shared without memory and without slots: treated as exclusive */
	m = mach_new(2, 80 * GB);
	run_add(m, 5, 1000, QJ_MODE_SHARED, 10 * GB, 1 * GB, G0);
	wait_add(m, 1, 1000, 1, 0, QJ_MODE_SHARED);
	wait_add(m, 2, 1000, 1, 0, QJ_MODE_SHARED);
	p = plan(m);
	ok(started_on(p, 1) == 1 && started_on(p, 2) < 0,
	   "shared with no memory declared and no default: exclusive (GPU 1, then none)");
	mach_free(m);

	/* default_gpu_mem covers shared jobs that declare nothing */
	m = mach_new(1, 80 * GB);
	m->cfg.default_gpu_mem = 30 * GB;
	wait_add(m, 1, 1000, 1, 0, QJ_MODE_SHARED);
	wait_add(m, 2, 1000, 1, 0, QJ_MODE_DEFAULT);
	m->cfg.default_mode = QJ_MODE_SHARED;
	wait_add(m, 3, 1000, 1, 0, QJ_MODE_SHARED);
	p = plan(m);
	ok(started_on(p, 1) == 0 && started_on(p, 2) == 0 && started_on(p, 3) < 0,
	   "default_gpu_mem 30 GiB and default_mode shared: two fit in 80 GiB");
	mach_free(m);
}

static void
test_pack_spread(void)
{
	struct mach *m = mach_new(3, 80 * GB);
	struct sched_plan *p;

	run_add(m, 5, 1000, QJ_MODE_SHARED, 10 * GB, 10 * GB, G0); /* 70 left */
	run_add(m, 6, 1000, QJ_MODE_SHARED, 50 * GB, 10 * GB, G1); /* 30 left */
	run_add(m, 7, 1000, QJ_MODE_SHARED, 30 * GB, 10 * GB, G2); /* 50 left */
	wait_add(m, 1, 1000, 1, 20 * GB, QJ_MODE_SHARED);
	p = plan(m);
	is_int(started_on(p, 1), 1,
	       "shared packs: the GPU with the least memory that fits (30 GiB)");
	mach_free(m);

	m = mach_new(3, 80 * GB);
	m->gpu[0].used = 200 * MB;
	m->gpu[1].used = 0;
	m->gpu[2].used = 100 * MB;
	wait_add(m, 1, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	wait_add(m, 2, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	p = plan(m);
	ok(started_on(p, 1) == 1 && started_on(p, 2) == 2,
	   "exclusive spreads: the most free memory first (GPU 1, then 2)");
	mach_free(m);
}

static void
test_topology(void)
{
	struct mach *m = mach_new(4, 80 * GB);
	struct sched_plan *p;
	const struct sched_action *a;

	for (unsigned i = 0; i < 4; i++) {
		for (unsigned k = 0; k < 4; k++)
			m->link[i][k] = SL_SYSTEM;
	}
	m->link[0][2] = m->link[2][0] = SL_NVLINK;
	m->link[1][3] = m->link[3][1] = SL_SWITCH;
	wait_add(m, 1, 1000, 2, 0, QJ_MODE_EXCLUSIVE);
	p = plan(m);
	a = act_of(p, SA_START, 1);
	ok(a && a->nr_gpu == 2 &&
	           ((a->gpu[0] == 0 && a->gpu[1] == 2) || (a->gpu[0] == 2 && a->gpu[1] == 0)),
	   "a 2-GPU job gets the NVLink pair 0+2, not 0+1");
	mach_free(m);

	m = mach_new(4, 80 * GB);
	for (unsigned i = 0; i < 4; i++) {
		for (unsigned k = 0; k < 4; k++)
			m->link[i][k] = SL_SYSTEM;
	}
	m->link[0][2] = m->link[2][0] = SL_NVLINK;
	m->link[1][3] = m->link[3][1] = SL_SWITCH;
	run_add(m, 5, 1000, QJ_MODE_EXCLUSIVE, 0, 1 * GB, G2);
	wait_add(m, 1, 1000, 2, 0, QJ_MODE_EXCLUSIVE);
	p = plan(m);
	a = act_of(p, SA_START, 1);
	ok(a && a->nr_gpu == 2 &&
	           ((a->gpu[0] == 1 && a->gpu[1] == 3) || (a->gpu[0] == 3 && a->gpu[1] == 1)),
	   "with GPU 2 taken: the pair on one PCIe switch (1+3)");
	mach_free(m);

	m = mach_new(4, 80 * GB);
	run_add(m, 5, 1000, QJ_MODE_EXCLUSIVE, 0, 1 * GB, G0);
	wait_add(m, 1, 1000, 2, 0, QJ_MODE_EXCLUSIVE);
	p = plan(m);
	a = act_of(p, SA_START, 1);
	ok(a && a->nr_gpu == 2 && a->gpu[0] == 1 && a->gpu[1] == 2,
	   "no topology known: by index order (1, 2)");
	mach_free(m);
}

static void
test_unusable(void)
{
	struct mach *m = mach_new(2, 80 * GB);
	struct sched_plan *p;
	struct sched_waiting *w;

	m->gpu[0].flags = QG_RESERVED;
	m->gpu[0].reserved_uid[0] = 2000;
	m->gpu[0].nr_reserved_uid = 1;
	m->gpu[1].flags = QG_RESERVED;
	m->gpu[1].reserved_gid[0] = 300;
	m->gpu[1].nr_reserved_gid = 1;
	wait_add(m, 1, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	wait_add(m, 2, 2000, 1, 0, QJ_MODE_EXCLUSIVE);
	w = wait_add(m, 3, 3000, 1, 0, QJ_MODE_EXCLUSIVE);
	w->groups[0] = 300;
	w->nr_groups = 1;
	p = plan(m);
	ok(started_on(p, 1) < 0 && has(verdict_of(p, 1)->reason, "reserved for other users"),
	   "reserved GPUs: not for others (%s)", verdict_of(p, 1)->reason);
	is_int(started_on(p, 2), 0, "the listed uid gets its reserved GPU");
	is_int(started_on(p, 3), 1, "a member of the listed group gets its reserved GPU");
	mach_free(m);

	m = mach_new(1, 80 * GB);
	m->gpu[0].flags = QG_RESERVED; /* for nobody: admins only */
	w = wait_add(m, 1, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	w->owner_is_admin = true;
	p = plan(m);
	is_int(started_on(p, 1), 0, "an admin may use a GPU reserved for nobody");
	mach_free(m);

	m = mach_new(3, 80 * GB);
	m->gpu[0].flags = QG_DRAINED;
	m->gpu[1].flags = QG_DIRTY;
	wait_add(m, 1, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	wait_add(m, 2, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	p = plan(m);
	ok(started_on(p, 1) == 2 && started_on(p, 2) < 0,
	   "drained and dirty GPUs are skipped: only GPU 2 is given");
	ok(has(verdict_of(p, 2)->reason, "GPU 0 is drained") &&
	           has(verdict_of(p, 2)->reason, "GPU 1 is dirty"),
	   "the reason says which are drained and dirty: %s", verdict_of(p, 2)->reason);
	is_str(verdict_of(p, 2)->code, "resources", "GPU 2 will free: code 'resources'");
	mach_free(m);

	m = mach_new(2, 80 * GB);
	m->gpu[0].flags = QG_DRAINED;
	m->gpu[1].flags = QG_DIRTY;
	wait_add(m, 1, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	w = wait_add(m, 2, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	snprintf(wjob(w)->req.want_uuid[0], QJ_UUID_LEN, "%s", m->gpu[0].uuid);
	wjob(w)->req.nr_want = 1;
	p = plan(m);
	is_str(verdict_of(p, 1)->code, "dirty", "only a dirty GPU could take it: code 'dirty'");
	is_str(verdict_of(p, 2)->code, "drained", "it names a drained GPU: code 'drained'");
	ok(!verdict_of(p, 1)->reserved && !verdict_of(p, 2)->reserved,
	   "jobs that no usable GPU could take hold no reservation");
	mach_free(m);

	m = mach_new(2, 80 * GB);
	m->gpu[0].flags = QG_LOST | QG_DRAINED;
	m->gpu[1].ok = false;
	wait_add(m, 1, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	p = plan(m);
	ok(started_on(p, 1) < 0 && has(verdict_of(p, 1)->reason, "GPU 0 was lost") &&
	           has(verdict_of(p, 1)->reason, "GPU 1 is not answering"),
	   "lost and unanswering GPUs take nothing: %s", verdict_of(p, 1)->reason);
	mach_free(m);
}

static void
test_want(void)
{
	struct mach *m = mach_new(3, 80 * GB);
	struct sched_plan *p;
	struct sched_waiting *w;
	const struct sched_action *a;

	w = wait_add(m, 1, 1000, 0, 0, QJ_MODE_EXCLUSIVE);
	snprintf(wjob(w)->req.want_uuid[0], QJ_UUID_LEN, "%s", m->gpu[2].uuid);
	snprintf(wjob(w)->req.want_uuid[1], QJ_UUID_LEN, "%s", m->gpu[1].uuid);
	wjob(w)->req.nr_want = 2;
	p = plan(m);
	a = act_of(p, SA_START, 1);
	ok(a && a->nr_gpu == 2 && a->gpu[0] == 2 && a->gpu[1] == 1,
	   "--gpu: exactly the named GPUs, in their order");
	mach_free(m);

	m = mach_new(2, 80 * GB);
	run_add(m, 5, 1000, QJ_MODE_EXCLUSIVE, 0, 1 * GB, G1);
	w = wait_add(m, 1, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	snprintf(wjob(w)->req.want_uuid[0], QJ_UUID_LEN, "%s", m->gpu[1].uuid);
	wjob(w)->req.nr_want = 1;
	p = plan(m);
	ok(started_on(p, 1) < 0 && has(verdict_of(p, 1)->reason, "GPU 1 runs job 5"),
	   "--gpu of a busy GPU waits though GPU 0 is free: %s", verdict_of(p, 1)->reason);
	mach_free(m);
}

static void
test_quota(void)
{
	struct mach *m = mach_new(4, 80 * GB);
	struct sched_plan *p;
	struct sched_waiting *w;

	w = wait_add(m, 1, 1000, 2, 0, QJ_MODE_EXCLUSIVE);
	w->max_running_gpus = 2;
	w->user_running_gpus = 1;
	w->user_running_jobs = 1;
	wait_add(m, 2, 2000, 1, 0, QJ_MODE_EXCLUSIVE);
	p = plan(m);
	is_str(verdict_of(p, 1)->code, "quota", "1 running + 2 asked > 2: quota");
	ok(has(verdict_of(p, 1)->reason,
	       "u1000 has 1 GPU running of at most 2, and this job asks 2"),
	   "the quota reason has the numbers: %s", verdict_of(p, 1)->reason);
	ok(started_on(p, 2) >= 0, "a job over its quota does not block others");
	mach_free(m);

	m = mach_new(4, 80 * GB);
	for (unsigned i = 1; i <= 3; i++) {
		w = wait_add(m, i, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
		w->max_running_jobs = 2;
	}
	p = plan(m);
	ok(started_on(p, 1) >= 0 && started_on(p, 2) >= 0 && started_on(p, 3) < 0 &&
	           !strcmp(verdict_of(p, 3)->code, "quota"),
	   "what this plan starts counts against the quota (2 of 3 start)");
	mach_free(m);
}

static void
test_order(void)
{
	struct mach *m = mach_new(1, 80 * GB);
	struct sched_plan *p;
	struct sched_waiting *w;

	wait_add(m, 1, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	w = wait_add(m, 2, 2000, 1, 0, QJ_MODE_EXCLUSIVE);
	wjob(w)->req.priority = 5;
	p = plan(m);
	ok(started_on(p, 2) == 0 && started_on(p, 1) < 0, "higher priority first");
	ok(verdict_of(p, 2)->position == 1 && verdict_of(p, 1)->position == 2,
	   "positions follow the order");
	mach_free(m);

	m = mach_new(1, 80 * GB);
	w = wait_add(m, 1, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	w->usage = 100000;
	w = wait_add(m, 2, 2000, 1, 0, QJ_MODE_EXCLUSIVE);
	w->usage = 10;
	p = plan(m);
	ok(started_on(p, 2) == 0 && started_on(p, 1) < 0,
	   "fair share: same priority, the owner with less usage first");
	mach_free(m);

	m = mach_new(1, 80 * GB);
	w = wait_add(m, 7, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	wjob(w)->submit_time = T0 - 5;
	w = wait_add(m, 3, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	wjob(w)->submit_time = T0 - 5;
	w = wait_add(m, 9, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	wjob(w)->submit_time = T0 - 50;
	p = plan(m);
	ok(started_on(p, 9) == 0 && verdict_of(p, 3)->position == 2 &&
	           verdict_of(p, 7)->position == 3,
	   "then submit time, then id");
	mach_free(m);

	/* held and waiting for a dependency: a reason, nothing blocked */
	m = mach_new(1, 80 * GB);
	run_add(m, 12, 1000, QJ_MODE_SHARED, 1 * GB, 1 * GB, G0);
	m->cfg.jobs_per_gpu = 4;
	w = wait_add(m, 1, 1000, 1, 1 * GB, QJ_MODE_SHARED);
	wjob(w)->state = QJ_HELD;
	w = wait_add(m, 2, 1000, 1, 1 * GB, QJ_MODE_SHARED);
	w->deps_done = false;
	wjob(w)->req.after[0] = 12;
	wjob(w)->req.nr_after = 1;
	w = wait_add(m, 3, 1000, 1, 1 * GB, QJ_MODE_SHARED);
	w->dep_missing = true;
	wjob(w)->req.after[0] = 99;
	wjob(w)->req.nr_after = 1;
	wait_add(m, 4, 1000, 1, 1 * GB, QJ_MODE_SHARED);
	p = plan(m);
	ok(!strcmp(verdict_of(p, 1)->code, "held") && started_on(p, 1) < 0 &&
	           verdict_of(p, 1)->position == 0,
	   "held: code 'held', not started, no position");
	ok(!strcmp(verdict_of(p, 2)->code, "dependency") &&
	           has(verdict_of(p, 2)->reason, "waits for job 12 (running)"),
	   "dependency: %s", verdict_of(p, 2)->reason);
	ok(!strcmp(verdict_of(p, 3)->code, "dependency") &&
	           has(verdict_of(p, 3)->reason, "does not exist"),
	   "missing dependency: %s", verdict_of(p, 3)->reason);
	is_int(started_on(p, 4), 0, "held and dependent jobs block no one");
	is_int(count_acts(p, SA_FAIL), 0, "and nothing is failed");
	mach_free(m);
}

static void
test_backfill(void)
{
	struct mach *m = mach_new(2, 80 * GB);
	struct sched_plan *p;
	struct sched_running *r;
	struct sched_waiting *w;

	r = run_add(m, 5, 1000, QJ_MODE_EXCLUSIVE, 0, 1 * GB, G0);
	rjob(r)->req.time_limit = 200; /* started T0-100: ends T0+100 */
	w = wait_add(m, 1, 1000, 2, 0, QJ_MODE_EXCLUSIVE);
	wjob(w)->req.time_limit = 1000;
	w = wait_add(m, 2, 2000, 1, 0, QJ_MODE_EXCLUSIVE);
	wjob(w)->req.time_limit = 500;
	wait_add(m, 3, 2000, 1, 0, QJ_MODE_EXCLUSIVE);
	w = wait_add(m, 4, 2000, 1, 0, QJ_MODE_EXCLUSIVE);
	wjob(w)->req.time_limit = 50;
	p = plan(m);
	ok(verdict_of(p, 1)->reserved && verdict_of(p, 1)->est_start == T0 + 100,
	   "the 2-GPU job holds the reservation, estimated when job 5 ends (T0+100)");
	ok(started_on(p, 2) < 0 && !strcmp(verdict_of(p, 2)->code, "reservation"),
	   "a 500 s job would delay it: waits, code 'reservation' (%s)", verdict_of(p, 2)->reason);
	ok(started_on(p, 3) < 0 && has(verdict_of(p, 3)->reason, "without a time limit"),
	   "a job without a time limit waits: %s", verdict_of(p, 3)->reason);
	is_int(started_on(p, 4), 1,
	       "backfill: a 50 s job behind them runs on GPU 1 before the reservation");
	ok(verdict_of(p, 2)->est_start == T0 + 1100 && verdict_of(p, 3)->est_start == T0 + 1100,
	   "the others are estimated once the 2-GPU job has run (+%.0f, +%.0f)",
	   verdict_of(p, 2)->est_start - T0, verdict_of(p, 3)->est_start - T0);
	mach_free(m);

	/* strict order when backfill is off */
	m = mach_new(2, 80 * GB);
	m->cfg.backfill = false;
	r = run_add(m, 5, 1000, QJ_MODE_EXCLUSIVE, 0, 1 * GB, G0);
	rjob(r)->req.time_limit = 200;
	w = wait_add(m, 1, 1000, 2, 0, QJ_MODE_EXCLUSIVE);
	wjob(w)->req.time_limit = 1000;
	w = wait_add(m, 2, 2000, 1, 0, QJ_MODE_EXCLUSIVE);
	wjob(w)->req.time_limit = 50;
	w = wait_add(m, 3, 2000, 0, 0, QJ_MODE_EXCLUSIVE);
	p = plan(m);
	ok(started_on(p, 2) < 0 && !strcmp(verdict_of(p, 2)->code, "priority"),
	   "backfill off: nothing behind the blocked job starts (%s)", verdict_of(p, 2)->reason);
	is_dbl(verdict_of(p, 2)->est_start, T0 + 1100, 0,
	       "its estimate follows the first one's end");
	is_int(started_on(p, 3), 99, "a job with no GPU delays nobody: it starts");
	mach_free(m);

	/* unknown end: the reservation holds its GPUs from now */
	m = mach_new(2, 80 * GB);
	run_add(m, 5, 1000, QJ_MODE_EXCLUSIVE, 0, 1 * GB, G0);
	wait_add(m, 1, 1000, 2, 0, QJ_MODE_EXCLUSIVE);
	w = wait_add(m, 2, 2000, 1, 0, QJ_MODE_EXCLUSIVE);
	wjob(w)->req.time_limit = 10;
	p = plan(m);
	ok(verdict_of(p, 1)->reserved && verdict_of(p, 1)->est_start == 0,
	   "job 5 has no limit: the reservation's start is unknown (0)");
	ok(started_on(p, 2) < 0 && has(verdict_of(p, 2)->reason, "unknown"),
	   "even a 10 s job may not use the reserved GPU: %s", verdict_of(p, 2)->reason);
	mach_free(m);

	/* estimates by simulation */
	m = mach_new(1, 80 * GB);
	r = run_add(m, 5, 1000, QJ_MODE_EXCLUSIVE, 0, 1 * GB, G0);
	rjob(r)->req.time_limit = 200;
	w = wait_add(m, 1, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	wjob(w)->req.time_limit = 50;
	w = wait_add(m, 2, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	wjob(w)->req.time_limit = 30;
	w = wait_add(m, 3, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	p = plan(m);
	ok(verdict_of(p, 1)->est_start == T0 + 100 && verdict_of(p, 2)->est_start == T0 + 150 &&
	           verdict_of(p, 3)->est_start == T0 + 180,
	   "estimated starts follow the time limits: +100, +150, +180");
	mach_free(m);
}

/* Start what the plan says: the waiting job moves to run[], using 1 GiB on each GPU. */
static void
apply_starts(struct mach *m, const struct sched_plan *p)
{
	unsigned keep = 0;

	for (unsigned i = 0; i < p->nr_act; i++) {
		const struct sched_action *a = &p->act[i];
		struct qjob *j = &m->rj[m->nr_run];
		struct sched_running *r = &m->run[m->nr_run];
		unsigned wi;

		if (a->kind != SA_START)
			continue;
		for (wi = 0; wi < m->nr_wait && m->wait[wi].job->id != a->job; wi++)
			;
		if (wi == m->nr_wait)
			continue;
		m->nr_run++;
		memcpy(j, m->wait[wi].job, sizeof(*j));
		j->state = QJ_RUNNING;
		j->start_time = m->cfg.now;
		for (unsigned k = 0; k < a->nr_gpu; k++)
			snprintf(j->gpu_uuid[k], QJ_UUID_LEN, "%s", m->gpu[a->gpu[k]].uuid);
		j->nr_gpu = a->nr_gpu;
		memset(r, 0, sizeof(*r));
		r->job = j;
		for (unsigned k = 0; k < a->nr_gpu; k++) {
			r->observed[k] = r->current[k] = GB;
			m->gpu[a->gpu[k]].used += GB;
		}
		wjob(&m->wait[wi])->state = QJ_DONE; /* marked: dropped below */
	}
	for (unsigned wi = 0; wi < m->nr_wait; wi++) {
		if (m->wait[wi].job->state == QJ_DONE)
			continue;
		m->wj[keep] = *m->wait[wi].job;
		m->wait[keep] = m->wait[wi];
		m->wait[keep].job = &m->wj[keep];
		keep++;
	}
	m->nr_wait = keep;
}

/* Job r of run[] ends and its memory comes back. */
static void
end_run(struct mach *m, unsigned r)
{
	const struct qjob *j = m->run[r].job;

	for (unsigned k = 0; k < j->nr_gpu; k++) {
		for (unsigned g = 0; g < m->ng; g++) {
			if (!strcmp(m->gpu[g].uuid, j->gpu_uuid[k]))
				m->gpu[g].used -= m->run[r].current[k];
		}
	}
	for (unsigned i = r + 1; i < m->nr_run; i++) {
		m->rj[i - 1] = m->rj[i];
		m->run[i - 1] = m->run[i];
		m->run[i - 1].job = &m->rj[i - 1];
	}
	m->nr_run--;
}

/* No time limit anywhere: GPUs free one at a time, and small jobs keep coming. */
static void
test_no_starvation_unknown(void)
{
	struct mach *m = mach_new(4, 80 * GB);
	int started_round = -1;
	bool small_started = false;

	for (unsigned g = 0; g < 4; g++) {
		int gl[] = { (int)g, -1 };

		run_add(m, 10 + g, 1000, QJ_MODE_EXCLUSIVE, 0, GB, gl);
	}
	wait_add(m, 1, 3000, 2, 0, QJ_MODE_EXCLUSIVE);
	for (int round = 0; round < 20 && started_round < 0; round++) {
		struct sched_plan *p;

		wait_add(m, 100 + (uint64_t)round, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
		p = plan(m);
		if (act_of(p, SA_START, 1))
			started_round = round;
		else if (count_acts(p, SA_START))
			small_started = true;
		apply_starts(m, p);
		/* one of the first jobs ends (the last-started first: GPUs 3, 2, ...) */
		for (unsigned r = m->nr_run; r-- > 0;) {
			if (m->run[r].job->id < 100 && m->run[r].job->id >= 10) {
				end_run(m, r);
				break;
			}
		}
		m->cfg.now += 10;
	}
	ok(started_round == 2 && !small_started,
	   "no limits known: the GPUs that free are held, the 2-GPU job starts when two are free "
	   "(round %d)",
	   started_round);
	mach_free(m);
}

/* 8 GPUs; 1-GPU jobs keep coming for 20 rounds; the 8-GPU job must start when the first ones end.
 */
static void
test_no_starvation(void)
{
	struct mach *m = mach_new(8, 80 * GB);
	double first_est = 0;
	int started_round = -1;
	bool later = false;
	uint64_t next_id = 100;

	for (unsigned g = 0; g < 4; g++) {
		int gl[] = { (int)g, -1 };
		struct sched_running *r = run_add(m, 10 + g, 1000, QJ_MODE_EXCLUSIVE, 0, GB, gl);

		rjob(r)->req.time_limit = 60 + 20 * g; /* started T0-100: end T0-40 .. T0+20 */
		rjob(r)->start_time = T0 - 100 + 50;
	}
	wait_add(m, 1, 3000, 8, 0, QJ_MODE_EXCLUSIVE);
	for (int round = 0; round < 20 && started_round < 0; round++) {
		struct sched_plan *p;
		const struct sched_verdict *v;
		struct sched_waiting *w;
		unsigned keep = 0;

		/* a new 1-GPU job each round, some long */
		w = wait_add(m, next_id++, 1000 + round % 3, 1, 0, QJ_MODE_EXCLUSIVE);
		wjob(w)->req.time_limit = round % 2 ? 1000 : 5;
		w->usage = 0;
		p = plan(m);
		v = verdict_of(p, 1);
		if (act_of(p, SA_START, 1)) {
			started_round = round;
			break;
		}
		if (!first_est)
			first_est = v->est_start;
		if (v->est_start > first_est)
			later = true;
		/* start what the plan says */
		for (unsigned i = 0; i < p->nr_act; i++) {
			const struct sched_action *a = &p->act[i];
			unsigned wi;

			if (a->kind != SA_START)
				continue;
			for (wi = 0; wi < m->nr_wait && m->wait[wi].job->id != a->job; wi++)
				;
			{
				struct qjob *j = &m->rj[m->nr_run];
				struct sched_running *r = &m->run[m->nr_run++];

				memcpy(j, m->wait[wi].job, sizeof(*j));
				j->state = QJ_RUNNING;
				j->start_time = m->cfg.now;
				for (unsigned k = 0; k < a->nr_gpu; k++)
					snprintf(j->gpu_uuid[k], QJ_UUID_LEN, "%s",
					         m->gpu[a->gpu[k]].uuid);
				j->nr_gpu = a->nr_gpu;
				memset(r, 0, sizeof(*r));
				r->job = j;
				for (unsigned k = 0; k < a->nr_gpu; k++) {
					r->observed[k] = r->current[k] = GB;
					m->gpu[a->gpu[k]].used += GB;
				}
			}
			wjob(&m->wait[wi])->state = QJ_DONE; /* marked: dropped below */
		}
		for (unsigned wi = 0; wi < m->nr_wait; wi++) {
			if (m->wait[wi].job->state == QJ_DONE)
				continue;
			m->wj[keep] = *m->wait[wi].job;
			m->wait[keep] = m->wait[wi];
			m->wait[keep].job = &m->wj[keep];
			keep++;
		}
		m->nr_wait = keep;
		/* time passes; jobs past their limit end */
		m->cfg.now += 10;
		keep = 0;
		for (unsigned r = 0; r < m->nr_run; r++) {
			const struct qjob *j = m->run[r].job;

			if (j->req.time_limit && j->start_time + j->req.time_limit <= m->cfg.now) {
				/* its memory comes back */
				for (unsigned k = 0; k < j->nr_gpu; k++) {
					for (unsigned g = 0; g < m->ng; g++) {
						if (!strcmp(m->gpu[g].uuid, j->gpu_uuid[k]))
							m->gpu[g].used -= m->run[r].current[k];
					}
				}
				continue;
			}
			m->rj[keep] = *j;
			m->run[keep] = m->run[r];
			m->run[keep].job = &m->rj[keep];
			keep++;
		}
		m->nr_run = keep;
	}
	ok(first_est == T0 + 70,
	   "the 8-GPU job is estimated when the last running job ends (+%.0f)", first_est - T0);
	ok(started_round >= 0 && m->cfg.now <= first_est + 10,
	   "20 rounds of 1-GPU submissions never delay the 8-GPU job (started at +%.0f)",
	   m->cfg.now - T0);
	ok(!later, "its estimate never moved later");
	mach_free(m);
}

static void
test_preempt(void)
{
	struct mach *m = mach_new(1, 80 * GB);
	struct sched_plan *p;
	struct sched_running *r;
	struct sched_waiting *w;
	const struct sched_action *a;

	r = run_add(m, 5, 1000, QJ_MODE_EXCLUSIVE, 0, 10 * GB, G0);
	rjob(r)->req.preemptible = true;
	w = wait_add(m, 1, 2000, 1, 0, QJ_MODE_EXCLUSIVE);
	wjob(w)->req.priority = 10;
	wait_add(m, 2, 2000, 0, 0, QJ_MODE_EXCLUSIVE);
	p = plan(m);
	a = act_of(p, SA_PREEMPT, 5);
	ok(a && a->for_job == 1 && has(a->reason, "job 1"),
	   "a preemptible job of lower priority is preempted for job 1 (%s)", a ? a->reason : "");
	ok(verdict_of(p, 1)->reserved && started_on(p, 1) < 0,
	   "job 1 holds the reservation and waits for the memory to come back");
	is_int(started_on(p, 2), 99, "a CPU job still starts");

	/* next plan: job 5 is stopping */
	rjob(r)->state = QJ_STOPPING;
	rjob(r)->stop_cause = QJ_STOP_PREEMPT;
	rjob(r)->stop_deadline = T0 + 30;
	w = wait_add(m, 3, 2000, 1, 1 * GB, QJ_MODE_SHARED);
	p = plan(m);
	is_int(count_acts(p, SA_PREEMPT), 0,
	       "idempotent: nothing more is preempted while it stops");
	ok(started_on(p, 1) < 0 && started_on(p, 3) < 0 && verdict_of(p, 1)->reserved,
	   "nothing else starts on that GPU meanwhile");

	/* its memory is gone: job 1 starts */
	m->nr_run = 0;
	m->gpu[0].used = 0;
	p = plan(m);
	is_int(started_on(p, 1), 0, "once the GPU is released, job 1 starts");
	mach_free(m);

	m = mach_new(1, 80 * GB);
	r = run_add(m, 5, 1000, QJ_MODE_EXCLUSIVE, 0, 10 * GB, G0);
	w = wait_add(m, 1, 2000, 1, 0, QJ_MODE_EXCLUSIVE);
	wjob(w)->req.priority = 10;
	p = plan(m);
	is_int(count_acts(p, SA_PREEMPT), 0, "a job not marked preemptible is never preempted");
	rjob(r)->req.preemptible = true;
	wjob(w)->req.priority = 0;
	p = plan(m);
	is_int(count_acts(p, SA_PREEMPT), 0, "nor for a job of the same priority");
	wjob(w)->req.priority = 10;
	m->cfg.preemption = false;
	p = plan(m);
	is_int(count_acts(p, SA_PREEMPT), 0, "nor with preemption off");
	mach_free(m);

	/* which victims */
	m = mach_new(2, 80 * GB);
	r = run_add(m, 5, 1000, QJ_MODE_EXCLUSIVE, 0, 10 * GB, G0);
	rjob(r)->req.preemptible = true;
	rjob(r)->req.priority = 1;
	r = run_add(m, 6, 1000, QJ_MODE_EXCLUSIVE, 0, 10 * GB, G1);
	rjob(r)->req.preemptible = true;
	w = wait_add(m, 1, 2000, 1, 0, QJ_MODE_EXCLUSIVE);
	wjob(w)->req.priority = 10;
	p = plan(m);
	ok(act_of(p, SA_PREEMPT, 6) && count_acts(p, SA_PREEMPT) == 1,
	   "the lowest priority victim is chosen (job 6)");
	rjob(&m->run[0])->req.priority = 0;
	rjob(&m->run[0])->start_time = T0 - 10; /* started after job 6 */
	p = plan(m);
	ok(act_of(p, SA_PREEMPT, 5) && count_acts(p, SA_PREEMPT) == 1,
	   "same priority: the most recently started (job 5)");
	mach_free(m);

	m = mach_new(2, 80 * GB);
	m->cfg.jobs_per_gpu = 4;
	r = run_add(m, 5, 1000, QJ_MODE_SHARED, 10 * GB, 10 * GB, G0);
	rjob(r)->req.preemptible = true;
	r = run_add(m, 6, 1000, QJ_MODE_SHARED, 10 * GB, 10 * GB, G0);
	rjob(r)->req.preemptible = true;
	r = run_add(m, 7, 1000, QJ_MODE_EXCLUSIVE, 0, 10 * GB, G1);
	rjob(r)->req.preemptible = true;
	rjob(r)->start_time = T0 - 1000;
	w = wait_add(m, 1, 2000, 1, 0, QJ_MODE_EXCLUSIVE);
	wjob(w)->req.priority = 10;
	p = plan(m);
	ok(act_of(p, SA_PREEMPT, 7) && count_acts(p, SA_PREEMPT) == 1,
	   "the fewest jobs: one exclusive job rather than two shared ones");
	mach_free(m);

	m = mach_new(1, 80 * GB);
	m->cfg.jobs_per_gpu = 4;
	r = run_add(m, 5, 1000, QJ_MODE_SHARED, 30 * GB, 30 * GB, G0);
	rjob(r)->req.preemptible = true;
	r = run_add(m, 6, 1000, QJ_MODE_SHARED, 30 * GB, 30 * GB, G0);
	rjob(r)->req.preemptible = true;
	w = wait_add(m, 1, 2000, 1, 40 * GB, QJ_MODE_SHARED);
	wjob(w)->req.priority = 10;
	p = plan(m);
	ok(count_acts(p, SA_PREEMPT) == 1 && act_of(p, SA_PREEMPT, 6),
	   "shared: one 30 GiB victim frees enough for 40 GiB (the most recent, job 6)");
	mach_free(m);

	/* multi-GPU job 1 needs both GPUs: two victims */
	m = mach_new(2, 80 * GB);
	r = run_add(m, 5, 1000, QJ_MODE_EXCLUSIVE, 0, 10 * GB, G0);
	rjob(r)->req.preemptible = true;
	r = run_add(m, 6, 1000, QJ_MODE_EXCLUSIVE, 0, 10 * GB, G1);
	rjob(r)->req.preemptible = true;
	w = wait_add(m, 1, 2000, 2, 0, QJ_MODE_EXCLUSIVE);
	wjob(w)->req.priority = 10;
	p = plan(m);
	is_int(count_acts(p, SA_PREEMPT), 2, "a 2-GPU job preempts one job on each GPU");
	/* one of them cannot be preempted: none is */
	rjob(r)->req.preemptible = false;
	p = plan(m);
	is_int(count_acts(p, SA_PREEMPT), 0, "when it cannot fit even then, nothing is preempted");
	mach_free(m);
}

static void
test_possible(void)
{
	struct mach *m = mach_new(8, 80 * GB);
	struct sched_input in;
	struct qj_request req;
	char why[QJ_REASON_LEN];

	memset(&in, 0, sizeof(in));
	in.cfg = &m->cfg;
	in.gpu = m->gpu;
	in.nr_gpu = m->ng;
	memset(&req, 0, sizeof(req));
	req.gpus = 1;
	req.gpu_mem = 90 * GB;
	ok(!sched_possible(&in, &req, why, sizeof(why)) &&
	           has(why, "asks 90.0 GiB per GPU; the largest GPU here has 79.8 GiB"),
	   "more memory than any GPU: %s", why);
	req.gpu_mem = 79 * GB;
	ok(sched_possible(&in, &req, why, sizeof(why)), "79 GiB on 80 GiB GPUs is possible");
	req.gpu_mem = 0;
	req.gpus = 9;
	ok(!sched_possible(&in, &req, why, sizeof(why)) &&
	           has(why, "asks 9 GPUs; this machine has 8"),
	   "more GPUs than exist: %s", why);
	req.gpus = 8;
	m->gpu[3].flags = QG_DRAINED;
	ok(sched_possible(&in, &req, why, sizeof(why)), "a drained GPU still counts");
	m->gpu[3].flags = QG_LOST;
	ok(!sched_possible(&in, &req, why, sizeof(why)) && has(why, "this machine has 7"),
	   "a lost one does not: %s", why);
	req.gpus = 1;
	snprintf(req.want_uuid[0], QJ_UUID_LEN, "GPU-nope");
	req.nr_want = 1;
	ok(!sched_possible(&in, &req, why, sizeof(why)) &&
	           has(why, "GPU-nope, which is not on this machine"),
	   "an unknown UUID: %s", why);
	snprintf(req.want_uuid[0], QJ_UUID_LEN, "%s", m->gpu[3].uuid);
	ok(!sched_possible(&in, &req, why, sizeof(why)) && has(why, "was lost"),
	   "a lost GPU named: %s", why);
	m->gpu[4].total = 40 * GB;
	req.gpus = 4;
	req.nr_want = 0;
	req.gpu_mem = 60 * GB;
	m->gpu[5].total = m->gpu[6].total = m->gpu[7].total = 40 * GB;
	m->gpu[0].total = m->gpu[1].total = 40 * GB;
	ok(!sched_possible(&in, &req, why, sizeof(why)) &&
	           has(why, "asks 4 GPUs with 60.0 GiB each; only 1 GPU here has that much"),
	   "too few big GPUs: %s", why);
	mach_free(m);

	/* a queued job that became impossible (its GPU was lost) is failed by the plan */
	m = mach_new(1, 80 * GB);
	m->gpu[0].flags = QG_LOST | QG_DRAINED;
	wait_add(m, 1, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	ok(act_of(plan(m), SA_FAIL, 1) && !strcmp(verdict_of(&m->plan, 1)->code, "impossible"),
	   "SA_FAIL for a job no GPU here can ever take");
	m->ng = 0;
	ok(count_acts(plan(m), SA_FAIL) == 0, "no GPU sampled at all: nothing is failed");
	mach_free(m);
}

static void
test_decay(void)
{
	double d = 7 * 86400;

	is_dbl(sched_decay(100, 0, d, d), 50, 1e-9, "one half-life halves the usage");
	is_dbl(sched_decay(100, 0, 2 * d, d), 25, 1e-9, "two quarter it");
	is_dbl(sched_decay(100, 10, 5, d), 100, 0, "time going back: unchanged");
	is_dbl(sched_decay(100, 0, d, 0), 100, 0, "half-life 0: no decay");
}

static void
test_suspended(void)
{
	struct mach *m = mach_new(2, 80 * GB);
	struct sched_plan *p;
	struct sched_waiting *w;
	const struct sched_action *a;

	wait_add(m, 1, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	w = wait_add(m, 2, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	wjob(w)->state = QJ_SUSPENDED;
	snprintf(wjob(w)->gpu_uuid[0], QJ_UUID_LEN, "%s", m->gpu[1].uuid);
	wjob(w)->nr_gpu = 1;
	p = plan(m);
	a = act_of(p, SA_START, 2);
	ok(a && a->nr_gpu == 1 && a->gpu[0] == 1 && verdict_of(p, 2)->position == 1,
	   "a suspended job resumes on its own GPU, ahead of its priority band");
	/* its owner's quota counts it as running already: it still resumes */
	m->wait[1].max_running_gpus = 1;
	m->wait[1].user_running_gpus = 1;
	m->wait[1].max_running_jobs = 1;
	m->wait[1].user_running_jobs = 1;
	p = plan(m);
	ok(act_of(p, SA_START, 2) != NULL, "a suspended job is not held to its owner's quota");
	mach_free(m);
}

static void
test_scale(void)
{
	struct mach *m = mach_new(64, 80 * GB);
	struct sched_plan *p;
	struct timespec a, b;
	unsigned starts, estimated = 0;

	for (unsigned i = 0; i < 64; i++) {
		for (unsigned k = 0; k < 64; k++)
			m->link[i][k] =
			        i == k ? SL_UNKNOWN : (i / 8 == k / 8 ? SL_NVLINK : SL_SYSTEM);
	}
	for (unsigned g = 0; g < 48; g++) {
		int gl[] = { (int)g, -1 };
		struct sched_running *r = run_add(m, 10000 + g, 1000 + g % 7,
		                                  g % 2 ? QJ_MODE_SHARED : QJ_MODE_EXCLUSIVE,
		                                  g % 2 ? 20 * GB : 0, 10 * GB, gl);

		rjob(r)->req.time_limit = g % 3 ? 3600 : 0;
		rjob(r)->req.preemptible = g % 5 == 0;
	}
	for (unsigned i = 0; i < 2000; i++) {
		struct sched_waiting *w =
		        wait_add(m, 20000 + i, 1000 + i % 13, 1 + (i % 9 == 0 ? 3 : 0),
		                 i % 2 ? 10 * GB : 0, i % 2 ? QJ_MODE_SHARED : QJ_MODE_EXCLUSIVE);

		wjob(w)->req.priority = (int)(i % 4);
		wjob(w)->req.time_limit = i % 3 ? 600 + i : 0;
		w->usage = (double)(i % 17);
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	p = plan(m);
	clock_gettime(CLOCK_MONOTONIC, &b);
	starts = count_acts(p, SA_START);
	for (unsigned i = 0; i < p->nr_verdict; i++)
		estimated += p->verdict[i].est_start > 0;
	diag("64 GPUs, 48 running, 2000 waiting: planned in %.1f ms (%u starts, %u preemptions, %u estimated)",
	     (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6, starts,
	     count_acts(p, SA_PREEMPT), estimated);
	ok(starts > 0 && p->nr_verdict == 2000, "the large plan starts jobs and judges all 2000");
	mach_free(m);
}

static void
test_more(void)
{
	struct mach *m = mach_new(1, 80 * GB);
	struct sched_plan *p;
	struct sched_running *r;
	struct sched_waiting *w;
	char why[QJ_REASON_LEN];
	struct sched_input in;
	struct qj_request req;

	/* shared jobs count foreign use too */
	m->gpu[0].used = 70 * GB;
	wait_add(m, 1, 1000, 1, 20 * GB, QJ_MODE_SHARED);
	p = plan(m);
	ok(started_on(p, 1) < 0 && has(verdict_of(p, 1)->reason, "GPU 0 has 9.8 GiB available"),
	   "shared: 70 GiB of foreign use leaves 9.8 GiB (%s)", verdict_of(p, 1)->reason);
	wjob(&m->wait[0])->req.gpu_mem = 5 * GB;
	p = plan(m);
	is_int(started_on(p, 1), 0, "a 5 GiB shared job fits beside the foreign process");
	mach_free(m);

	/* a job being cancelled: the next one is estimated at its deadline, nothing preempted */
	m = mach_new(1, 80 * GB);
	r = run_add(m, 5, 1000, QJ_MODE_EXCLUSIVE, 0, 10 * GB, G0);
	rjob(r)->state = QJ_STOPPING;
	rjob(r)->stop_cause = QJ_STOP_CANCEL;
	rjob(r)->stop_deadline = T0 + 30;
	rjob(r)->req.preemptible = true;
	w = wait_add(m, 1, 2000, 1, 0, QJ_MODE_EXCLUSIVE);
	wjob(w)->req.priority = 10;
	p = plan(m);
	ok(verdict_of(p, 1)->est_start == T0 + 30 && verdict_of(p, 1)->reserved &&
	           count_acts(p, SA_PREEMPT) == 0,
	   "behind a stopping job: estimated at its grace's end, nothing preempted (%s)",
	   verdict_of(p, 1)->reason);
	mach_free(m);

	/* an exclusive job too big for the free GPU: the reason gives its size */
	m = mach_new(2, 80 * GB);
	m->gpu[1].total = 40 * GB;
	run_add(m, 5, 1000, QJ_MODE_EXCLUSIVE, 0, 10 * GB, G0);
	wait_add(m, 1, 1000, 1, 60 * GB, QJ_MODE_EXCLUSIVE);
	p = plan(m);
	ok(started_on(p, 1) < 0 && has(verdict_of(p, 1)->reason, "GPU 1 has 39.8 GiB available") &&
	           has(verdict_of(p, 1)->reason, "GPU 0 runs job 5"),
	   "exclusive with --gpu-mem: %s", verdict_of(p, 1)->reason);
	mach_free(m);

	/* a job's grace counts: it is killed only then */
	m = mach_new(1, 80 * GB);
	r = run_add(m, 5, 1000, QJ_MODE_EXCLUSIVE, 0, 10 * GB, G0);
	rjob(r)->req.time_limit = 200;
	rjob(r)->req.grace = 20;
	w = wait_add(m, 1, 2000, 1, 0, QJ_MODE_EXCLUSIVE);
	p = plan(m);
	is_dbl(verdict_of(p, 1)->est_start, T0 + 120, 0,
	       "a job's end is its start + time limit + its grace");
	mach_free(m);

	/* a starting job holds what it declared before it uses anything */
	m = mach_new(1, 80 * GB);
	r = run_add(m, 5, 1000, QJ_MODE_SHARED, 40 * GB, 0, G0);
	rjob(r)->state = QJ_STARTING;
	wait_add(m, 1, 1000, 1, 45 * GB, QJ_MODE_SHARED);
	p = plan(m);
	ok(p->available[0] == 40 * GB && started_on(p, 1) < 0,
	   "STARTING: the declared 40 GiB are held from launch");
	/* a job starting is never a victim */
	rjob(r)->req.preemptible = true;
	wjob(&m->wait[0])->req.priority = 10;
	p = plan(m);
	is_int(count_acts(p, SA_PREEMPT), 0, "a STARTING job is not preempted");
	mach_free(m);

	/* absurd sizes are refused, not wrapped around */
	m = mach_new(2, 80 * GB);
	memset(&in, 0, sizeof(in));
	in.cfg = &m->cfg;
	in.gpu = m->gpu;
	in.nr_gpu = m->ng;
	memset(&req, 0, sizeof(req));
	req.gpus = 1;
	req.gpu_mem = UINT64_MAX;
	ok(!sched_possible(&in, &req, why, sizeof(why)), "gpu_mem = 2^64-1 is impossible (%s)",
	   why);
	req.gpu_mem = 0;
	req.gpus = 17;
	ok(!sched_possible(&in, &req, why, sizeof(why)) && has(why, "at most 16"),
	   "more GPUs than one job may have: %s", why);
	w = wait_add(m, 1, 1000, 1, UINT64_MAX - 1, QJ_MODE_SHARED);
	p = plan(m);
	ok(act_of(p, SA_FAIL, 1) && started_on(p, 1) < 0,
	   "and a queued one is failed, not started");
	mach_free(m);

	/* one user's quota does not count another's starts */
	m = mach_new(4, 80 * GB);
	w = wait_add(m, 1, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	w->max_running_jobs = 1;
	wait_add(m, 2, 2000, 1, 0, QJ_MODE_EXCLUSIVE);
	wait_add(m, 3, 2000, 1, 0, QJ_MODE_EXCLUSIVE);
	w = wait_add(m, 4, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	w->max_running_jobs = 1;
	p = plan(m);
	ok(started_on(p, 1) >= 0 && started_on(p, 2) >= 0 && started_on(p, 3) >= 0 &&
	           started_on(p, 4) < 0 &&
	           has(verdict_of(p, 4)->reason, "1 job running of at most 1"),
	   "quotas are per owner (%s)", verdict_of(p, 4)->reason);
	mach_free(m);

	/* two shared jobs named on one GPU pack there */
	m = mach_new(2, 80 * GB);
	for (unsigned i = 1; i <= 2; i++) {
		w = wait_add(m, i, 1000, 1, 30 * GB, QJ_MODE_SHARED);
		snprintf(wjob(w)->req.want_uuid[0], QJ_UUID_LEN, "%s", m->gpu[1].uuid);
		wjob(w)->req.nr_want = 1;
	}
	p = plan(m);
	ok(started_on(p, 1) == 1 && started_on(p, 2) == 1, "two shared jobs on the GPU they name");
	mach_free(m);

	/* the same plan twice gives the same answer (the daemon plans every second) */
	m = mach_new(3, 80 * GB);
	r = run_add(m, 5, 1000, QJ_MODE_EXCLUSIVE, 0, 10 * GB, G0);
	rjob(r)->req.time_limit = 300;
	wait_add(m, 1, 1000, 3, 0, QJ_MODE_EXCLUSIVE);
	w = wait_add(m, 2, 1000, 1, 0, QJ_MODE_EXCLUSIVE);
	wjob(w)->req.time_limit = 60;
	{
		struct sched_plan a = *plan(m);
		unsigned nr_act = a.nr_act;
		double est1 = verdict_of(&a, 1)->est_start;
		int on2 = started_on(&a, 2);

		p = plan(m);
		ok(p->nr_act == nr_act && verdict_of(p, 1)->est_start == est1 &&
		           started_on(p, 2) == on2 && on2 >= 1,
		   "planning twice gives the same plan (job 2 backfills on GPU %d)", on2);
	}
	mach_free(m);
}

int
main(void)
{
	test_defaults();
	test_exclusive();
	test_foreign();
	test_shared();
	test_lazy();
	test_slots();
	test_pack_spread();
	test_topology();
	test_unusable();
	test_want();
	test_quota();
	test_order();
	test_backfill();
	test_no_starvation();
	test_no_starvation_unknown();
	test_preempt();
	test_possible();
	test_decay();
	test_suspended();
	test_more();
	test_scale();
	(void)G2;
	(void)G3;
	(void)G01;
	return done_testing();
}
