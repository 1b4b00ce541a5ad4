/*
 * The collector: backends opened once, devices scanned once, then samples
 * in which every selected device is read on its own thread against one
 * deadline. A device whose thread is still inside the driver when the
 * deadline passes is shown as not responding; its thread is left to finish
 * on its own and the device is skipped until it has.
 */
#include "backend/collect.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/podres.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/err.h"
#include "core/fileio.h"
#include "core/gpu.h"
#include "core/procinfo.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#define MAX_BACKENDS 8

struct slot {
	struct collector *c;
	struct backend *be;
	size_t base_index;        /* which device of c->base */
	struct gpu_device dev;    /* the worker's copy */
	struct gpu_snapshot part; /* its processes */
	double now;
	bool want_procs;
	struct err err;
	bool done;      /* guarded by c->mu */
	bool abandoned; /* guarded by c->mu: nobody waits for it any more */
};

struct collector {
	const struct gs_config *cfg;
	struct backend *be[MAX_BACKENDS];
	unsigned be_order[MAX_BACKENDS]; /* each one's place in backend_list */
	unsigned nr_be;
	char *why[MAX_BACKENDS];               /* per place in backend_list: why it found no GPU */
	const char *reasons[MAX_BACKENDS + 1]; /* NULL-terminated, in backend_list order */
	bool no_driver;
	bool scanned;
	struct gpu_snapshot base; /* identity and static fields from the scan */
	bool *selected;
	struct slot **busy; /* per base device: a worker that missed its deadline */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool closing; /* closed while workers were stuck: the last one frees it */
	struct procinfo_ctx *pi;
	struct podres_cache *podres; /* the kubelet's GPU allocations (podres.h) */
};

static void collector_destroy(struct collector *c);

/* The reasons keep backend_list's order, whichever step found them. */
static void
add_reason(struct collector *c, unsigned order, const char *msg)
{
	size_t n = 0;

	if (order >= MAX_BACKENDS || c->why[order])
		return;
	c->why[order] = xstrdup(msg);
	for (unsigned i = 0; i < MAX_BACKENDS; i++)
		if (c->why[i])
			c->reasons[n++] = c->why[i];
	c->reasons[n] = NULL;
}

int
collector_open(const struct gs_config *cfg, struct collector **out, struct err *err)
{
	struct collector *c = xcalloc(1, sizeof(*c));
	pthread_condattr_t ca;

	(void)err;
	c->cfg = cfg;
	gpu_snapshot_init(&c->base);
	pthread_mutex_init(&c->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);
	for (size_t i = 0; backend_list[i] && c->nr_be < MAX_BACKENDS; i++) {
		struct err e = ERR_INIT;
		struct backend *be;

		if (backend_open(backend_list[i], cfg, &be, &e) < 0) {
			add_reason(c, (unsigned)i, e.msg[0] ? e.msg : backend_list[i]->name);
			continue;
		}
		be->id = c->nr_be;
		c->be_order[c->nr_be] = (unsigned)i;
		c->be[c->nr_be++] = be;
	}
	c->no_driver = c->nr_be == 0;
	if (cfg->want_procs)
		c->pi = procinfo_new(cfg);
	if (!cfg->simulated)
		c->podres = podres_cache_new(cfg->root, cfg->timeout);
	*out = c;
	return 0;
}

int
collector_scan(struct collector *c, struct err *err)
{
	if (c->scanned)
		return 0;
	c->scanned = true;
	c->base.simulated = c->cfg->simulated;
	for (unsigned i = 0; i < c->nr_be; i++) {
		struct err e = ERR_INIT;
		size_t before = c->base.nr_dev;
		int rc = backend_scan(c->be[i], &c->base, &e);

		if (rc < 0 || c->base.nr_dev == before)
			add_reason(c, c->be_order[i], e.msg[0] ? e.msg : "no GPU found");
		if (rc < 0 && rc != E_NODEV)
			err_set(err, rc, "%s", e.msg);
	}
	/*
	 * One index for all GPUs: NVML's come first, so theirs equal NVML's (and
	 * nvidia-smi's); the DRM GPUs follow in bus order. A MIG device keeps
	 * its index within its GPU.
	 */
	for (size_t i = 0, n = 0; i < c->base.nr_dev; i++)
		if (!c->base.dev[i].is_mig)
			c->base.dev[i].index = (unsigned)n++;
	c->selected = xcalloc(c->base.nr_dev ? c->base.nr_dev : 1, sizeof(*c->selected));
	c->busy = xcalloc(c->base.nr_dev ? c->base.nr_dev : 1, sizeof(*c->busy));
	for (size_t i = 0; i < c->base.nr_dev; i++)
		c->selected[i] = true;
	return 0;
}

unsigned
collector_count(const struct collector *c)
{
	return (unsigned)c->base.nr_dev;
}

const char *const *
collector_reasons(const struct collector *c)
{
	return c->reasons;
}

bool
collector_no_driver(const struct collector *c)
{
	return c->no_driver;
}

int
collector_select(struct collector *c, const char *ids, struct err *err)
{
	collector_scan(c, NULL);
	return gpu_select(c->base.dev, c->base.nr_dev, ids, c->selected, err);
}

static void *
worker(void *arg)
{
	struct slot *sl = arg;
	struct collector *c = sl->c;
	bool abandoned;

	bool last = false;

	backend_read_device(sl->be, &sl->dev, &sl->err);
	if (sl->want_procs && sl->dev.state == DEV_OK &&
	    backend_read_procs(sl->be, &sl->dev, sl->now, &sl->part, &sl->err) == E_LOST) {
		/* lost between reading it and listing its processes */
		sl->dev.state = DEV_LOST;
		str_copy(sl->dev.state_msg, sizeof(sl->dev.state_msg), DEV_LOST_MSG);
		gpu_device_clear_readings(&sl->dev);
		for (size_t i = 0; i < sl->part.nr_proc; i++)
			gpu_proc_release(&sl->part.proc[i]);
		sl->part.nr_proc = 0;
	}

	pthread_mutex_lock(&c->mu);
	sl->done = true;
	abandoned = sl->abandoned;
	if (abandoned) {
		c->busy[sl->base_index] = NULL;
		if (c->closing) {
			last = true;
			for (size_t i = 0; i < c->base.nr_dev; i++)
				last &= c->busy[i] == NULL;
		}
	} else {
		pthread_cond_broadcast(&c->cv);
	}
	pthread_mutex_unlock(&c->mu);
	if (abandoned) {
		gpu_snapshot_release(&sl->part);
		free(sl);
	}
	if (last)
		collector_destroy(c);
	return NULL;
}

/* Whether p, listed by its GPU at base[b], is on a MIG device of base. */
static bool
mig_of(const struct gpu_device *base, size_t nr_base, size_t b, const struct gpu_proc *p)
{
	for (size_t i = 0; i < nr_base; i++)
		if (base[i].is_mig && base[i].mig_parent == b &&
		    base[i].mig_gi == p->v[PF_GPU_INSTANCE] &&
		    (!proc_has(p, PF_COMPUTE_INSTANCE) ||
		     base[i].mig_ci == p->v[PF_COMPUTE_INSTANCE]))
			return true;
	return false;
}

/*
 * MIG devices in a sample: mig_parent becomes the GPU's position in snap
 * (pos: 1 + a base device's, 0: not sampled), and each process its GPU
 * lists with instance ids moves to the MIG device of those ids, as
 * nvidia-smi shows it under "GI ID" and "CI ID": one row, on the instance.
 * A process of a MIG device that was not selected is left out with it.
 */
static void
mig_place(struct gpu_snapshot *snap, const size_t *pos, const struct gpu_device *base,
          size_t nr_base)
{
	size_t kept = 0;

	for (size_t i = 0; i < snap->nr_dev; i++) {
		struct gpu_device *d = &snap->dev[i];

		if (!d->is_mig)
			continue;
		/* gpu_select() samples a MIG device's GPU with it */
		d->mig_parent = d->mig_parent < nr_base && pos[d->mig_parent]
		                        ? (unsigned)(pos[d->mig_parent] - 1)
		                        : (unsigned)i;
	}
	for (size_t k = 0; k < snap->nr_proc; k++) {
		struct gpu_proc *p = &snap->proc[k];
		bool placed = !proc_has(p, PF_GPU_INSTANCE);

		for (size_t i = 0; i < snap->nr_dev && !placed; i++) {
			const struct gpu_device *d = &snap->dev[i];

			if (d->is_mig && d->mig_parent == p->dev &&
			    d->mig_gi == p->v[PF_GPU_INSTANCE] &&
			    (!proc_has(p, PF_COMPUTE_INSTANCE) ||
			     d->mig_ci == p->v[PF_COMPUTE_INSTANCE])) {
				p->dev = (unsigned)i;
				placed = true;
			}
		}
		for (size_t b = 0; b < nr_base && !placed; b++)
			if (pos[b] == (size_t)p->dev + 1) {
				if (mig_of(base, nr_base, b, p)) {
					gpu_proc_release(p);
					p = NULL;
				}
				break;
			}
		if (p)
			snap->proc[kept++] = *p;
	}
	snap->nr_proc = kept;
}

static void
read_hostname(const struct gs_config *cfg, char *buf, size_t size)
{
	if (file_read_line(cfg->proc_root, "sys/kernel/hostname", buf, size, NULL) == 0 && *buf)
		return;
	if (gethostname(buf, size) < 0)
		buf[0] = '\0';
	buf[size - 1] = '\0';
}

static void
not_responding(struct gpu_device *d, double timeout)
{
	d->state = DEV_NOT_RESPONDING;
	snprintf(
	        d->state_msg, sizeof(d->state_msg),
	        "did not answer within %.1f s: the driver may be hung on this GPU (check the kernel log)",
	        timeout);
}

int
collector_sample(struct collector *c, struct gpu_snapshot *snap, unsigned flags, struct err *err)
{
	const struct gs_config *cfg = c->cfg;
	struct slot **slots;
	struct timespec ts;
	double deadline;
	size_t *pos; /* 1 + each base device's position in snap; 0: not in it */

	collector_scan(c, err);
	if (flags & COLLECT_WINDOW) {
		bool want = false;

		for (unsigned i = 0; i < c->nr_be; i++)
			want |= backend_wants_window(c->be[i]);
		if (want) {
			struct gpu_snapshot first;
			struct timespec pause;

			gpu_snapshot_init(&first);
			collector_sample(c, &first, (flags & ~COLLECT_WINDOW) | COLLECT_NO_ENRICH,
			                 err);
			gpu_snapshot_release(&first);
			pause.tv_sec = (time_t)cfg->window;
			pause.tv_nsec = (long)((cfg->window - (double)pause.tv_sec) * 1e9);
			while (nanosleep(&pause, &pause) < 0 && errno == EINTR)
				;
		}
	}
	for (unsigned i = 0; i < c->nr_be; i++) {
		struct err e = ERR_INIT;

		if (backend_begin_sample(c->be[i], clock_mono(), &e) < 0 && e.msg[0])
			gpu_snapshot_note(snap, "%s", e.msg);
	}
	snap->time = clock_now(cfg);
	read_hostname(cfg, snap->hostname, sizeof(snap->hostname));
	snap->simulated = c->base.simulated || cfg->simulated;
	snap->nvidia = c->base.nvidia;
	slots = xcalloc(c->base.nr_dev ? c->base.nr_dev : 1, sizeof(*slots));

	/* start a worker for every selected device that is free */
	for (size_t i = 0; i < c->base.nr_dev; i++) {
		struct slot *sl;
		pthread_t t;

		if (!c->selected[i] || c->busy[i])
			continue;
		sl = xcalloc(1, sizeof(*sl));
		sl->c = c;
		sl->be = c->be[c->base.dev[i].backend];
		sl->base_index = i;
		sl->dev = c->base.dev[i];
		gpu_snapshot_init(&sl->part);
		sl->now = snap->time;
		sl->want_procs = (flags & COLLECT_PROCS) != 0;
		slots[i] = sl;
		if (pthread_create(&t, NULL, worker, sl) == 0)
			pthread_detach(t);
		else
			worker(sl); /* no thread to be had: read it here */
	}

	/* wait for all of them, or the deadline */
	deadline = clock_mono() + (cfg->timeout > 0 ? cfg->timeout : 5.0);
	pthread_mutex_lock(&c->mu);
	for (;;) {
		size_t pending = 0;

		for (size_t i = 0; i < c->base.nr_dev; i++)
			pending += slots[i] && !slots[i]->done;
		if (!pending || clock_mono() >= deadline)
			break;
		/* each worker signals when it is done */
		clock_mono_timespec(&ts, deadline);
		pthread_cond_timedwait(&c->cv, &c->mu, &ts);
	}
	for (size_t i = 0; i < c->base.nr_dev; i++)
		if (slots[i] && !slots[i]->done) {
			slots[i]->abandoned = true;
			c->busy[i] = slots[i];
			slots[i] = NULL;
		}
	pthread_mutex_unlock(&c->mu);

	/* assemble the snapshot in scan order, into a process array of the right size */
	{
		size_t nr = snap->nr_proc;

		for (size_t i = 0; i < c->base.nr_dev; i++)
			nr += slots[i] ? slots[i]->part.nr_proc : 0;
		ALLOC_GROW(snap->proc, nr, snap->alloc_proc);
	}
	pos = xcalloc(c->base.nr_dev ? c->base.nr_dev : 1, sizeof(*pos));
	for (size_t i = 0; i < c->base.nr_dev; i++) {
		struct slot *sl = slots[i];
		struct gpu_device *d;
		size_t di;

		if (!c->selected[i])
			continue;
		di = snap->nr_dev;
		pos[i] = di + 1;
		d = gpu_snapshot_add_dev(snap);
		if (!sl) {
			*d = c->base.dev[i];
			not_responding(d, cfg->timeout);
			continue;
		}
		*d = sl->dev;
		/* a lost GPU stays lost: remember it for the next sample */
		if (d->state == DEV_LOST || d->state == DEV_RESET_REQUIRED) {
			c->base.dev[i].state = d->state;
			str_copy(c->base.dev[i].state_msg, sizeof(c->base.dev[i].state_msg),
			         d->state_msg);
		}
		if (sl->err.code && sl->err.msg[0])
			gpu_snapshot_note(snap, "%s", sl->err.msg);
		for (size_t k = 0; k < sl->part.nr_proc; k++) {
			struct gpu_proc *p = gpu_snapshot_add_proc(snap);

			*p = sl->part.proc[k]; /* moves the strings */
			p->dev = (unsigned)di;
		}
		sl->part.nr_proc = 0;
		gpu_snapshot_release(&sl->part);
		free(sl);
	}
	free(slots);
	mig_place(snap, pos, c->base.dev, c->base.nr_dev);
	free(pos);
	for (unsigned i = 0; i < c->nr_be; i++) {
		bool shown = false;

		for (size_t k = 0; k < snap->nr_dev && !shown; k++)
			shown = snap->dev[k].backend == i;
		if (shown)
			backend_add_notes(c->be[i], snap);
	}
	for (size_t i = 0; i < c->base.nr_note; i++)
		gpu_snapshot_note(snap, "%s", c->base.note[i]);
	if (c->podres && !(flags & COLLECT_NO_ENRICH))
		podres_cache_fill(c->podres, snap, clock_mono());
	if ((flags & COLLECT_PROCS) && !(flags & COLLECT_NO_ENRICH) && c->pi)
		procinfo_enrich(c->pi, snap);
	gpu_snapshot_sort_procs(snap);
	return 0;
}

/* The base device at position pos of collector_sample()'s list; -1 if none. */
static ssize_t
sample_position(const struct collector *c, unsigned pos)
{
	unsigned n = 0;

	for (size_t i = 0; i < c->base.nr_dev; i++)
		if (c->selected[i] && n++ == pos)
			return (ssize_t)i;
	return -1;
}

int
collector_topology(struct collector *c, unsigned a, unsigned b, int *level)
{
	const struct gpu_device *da, *db;
	ssize_t ia, ib;
	bool busy;

	collector_scan(c, NULL);
	ia = sample_position(c, a);
	ib = sample_position(c, b);
	if (ia < 0 || ib < 0 || ia == ib || !level)
		return E_USAGE;
	da = &c->base.dev[ia];
	db = &c->base.dev[ib];
	if (da->backend != db->backend || da->backend >= c->nr_be)
		return E_NOTSUP;
	if (da->state == DEV_LOST || da->state == DEV_RESET_REQUIRED || db->state == DEV_LOST ||
	    db->state == DEV_RESET_REQUIRED)
		return E_LOST;
	/* a device whose worker is still inside the driver would hang this thread too */
	pthread_mutex_lock(&c->mu);
	busy = c->busy[ia] || c->busy[ib];
	pthread_mutex_unlock(&c->mu);
	if (busy)
		return E_BUSY;
	return backend_topology(c->be[da->backend], da, db, level);
}

void
collector_close(struct collector *c)
{
	bool running = false;

	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	for (size_t i = 0; i < c->base.nr_dev; i++)
		running |= c->busy[i] != NULL;
	/*
	 * A worker still inside the driver would use freed memory or a closed
	 * library: the last one to come back closes everything instead.
	 */
	c->closing = running;
	pthread_mutex_unlock(&c->mu);
	if (!running)
		collector_destroy(c);
}

static void
collector_destroy(struct collector *c)
{
	for (unsigned i = 0; i < c->nr_be; i++)
		backend_close(c->be[i]);
	for (unsigned i = 0; i < MAX_BACKENDS; i++)
		free(c->why[i]);
	free(c->selected);
	free(c->busy);
	procinfo_free(c->pi);
	podres_cache_free(c->podres);
	gpu_snapshot_release(&c->base);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}
