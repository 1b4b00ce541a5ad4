/*
 * The queue daemon's sampling worker (gpus.h).
 */
#include "queue/gpus.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/collect.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/err.h"
#include "core/fields.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

struct qgpus {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct gs_config cfg;
	double interval;
	int notify_fd;
	bool stop, poke, done;
	struct qgpu_sample latest;
	bool have;
	uint64_t seq;
	char status[256];
	pthread_t thread;
};

void
qgpu_sample_init(struct qgpu_sample *s)
{
	memset(s, 0, sizeof(*s));
}

void
qgpu_sample_release(struct qgpu_sample *s)
{
	free(s->gpu);
	free(s->proc);
	qgpu_sample_init(s);
}

void
qgpu_sample_copy(struct qgpu_sample *dst, const struct qgpu_sample *src)
{
	qgpu_sample_release(dst);
	*dst = *src;
	dst->gpu = NULL;
	dst->proc = NULL;
	if (src->nr_gpu) {
		dst->gpu = xmalloc(st_mult(src->nr_gpu, sizeof(*src->gpu)));
		memcpy(dst->gpu, src->gpu, src->nr_gpu * sizeof(*src->gpu));
	}
	if (src->nr_proc) {
		dst->proc = xmalloc(st_mult(src->nr_proc, sizeof(*src->proc)));
		memcpy(dst->proc, src->proc, src->nr_proc * sizeof(*src->proc));
	}
}

static void set_status(struct qgpus *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
set_status(struct qgpus *g, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&g->mu);
	va_start(ap, fmt);
	vsnprintf(g->status, sizeof(g->status), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&g->mu);
}

static void
notify(struct qgpus *g)
{
	uint64_t one = 1;
	ssize_t n;

	do
		n = write(g->notify_fd, &one, sizeof(one));
	while (n < 0 && errno == EINTR);
}

/* Turn a snapshot into our sample; pos[i] = the snapshot's position of our gpu[i]. */
static void
convert(const struct gpu_snapshot *snap, struct qgpu_sample *s, unsigned *pos, double mono)
{
	unsigned map[256];
	size_t alloc_proc = 0;

	s->time = snap->time;
	s->mono = mono;
	s->nr_gpu = 0;
	s->gpu = snap->nr_dev ? xcalloc(snap->nr_dev, sizeof(*s->gpu)) : NULL;
	for (size_t i = 0; i < snap->nr_dev && i < 256; i++) {
		const struct gpu_device *d = &snap->dev[i];
		struct qgpu_info *q;

		map[i] = UINT32_MAX;
		/*
		 * The queue hands out whole GPUs; a MIG device's processes (listed
		 * on it) are its GPU's, which comes before it.
		 */
		if (d->is_mig) {
			if (d->mig_parent < i)
				map[i] = map[d->mig_parent];
			continue;
		}
		/* the queue hands out CUDA devices: NVIDIA's, by UUID */
		if (d->vendor != VENDOR_NVIDIA || !d->uuid[0] || s->nr_gpu >= SCHED_MAX_GPUS)
			continue;
		map[i] = (unsigned)s->nr_gpu;
		pos[s->nr_gpu] = (unsigned)i;
		q = &s->gpu[s->nr_gpu++];
		str_copy(q->uuid, sizeof(q->uuid), d->uuid);
		str_copy(q->name, sizeof(q->name), d->name);
		q->index = d->index;
		q->ok = d->state == DEV_OK;
		q->lost = d->state == DEV_LOST || d->state == DEV_RESET_REQUIRED;
		str_copy(q->state_msg, sizeof(q->state_msg), d->state_msg);
		if (dev_has(d, GF_MEM_TOTAL))
			q->total = (uint64_t)d->v[GF_MEM_TOTAL];
		if (dev_has(d, GF_MEM_USED))
			q->used = (uint64_t)d->v[GF_MEM_USED];
		/* what the driver reserves is nobody's to allocate */
		if (dev_has(d, GF_MEM_RESERVED) && q->total > (uint64_t)d->v[GF_MEM_RESERVED])
			q->total -= (uint64_t)d->v[GF_MEM_RESERVED];
		if (q->ok && (!dev_has(d, GF_MEM_TOTAL) || !dev_has(d, GF_MEM_USED))) {
			q->ok = false;
			str_copy(q->state_msg, sizeof(q->state_msg),
			         "its memory could not be read");
		}
	}
	s->nr_proc = 0;
	s->proc = NULL;
	for (size_t i = 0; i < snap->nr_proc; i++) {
		const struct gpu_proc *p = &snap->proc[i];
		struct qgpu_proc *q;

		if (p->dev >= snap->nr_dev || p->dev >= 256 || map[p->dev] == UINT32_MAX)
			continue;
		ALLOC_GROW(s->proc, s->nr_proc + 1, alloc_proc);
		q = &s->proc[s->nr_proc++];
		q->pid = p->pid;
		q->gpu = map[p->dev];
		q->used = (p->valid & (1u << PF_GPU_MEM)) ? (uint64_t)p->v[PF_GPU_MEM] : 0;
	}
}

static void
topology(struct collector *c, struct qgpu_sample *s, const unsigned *pos,
         enum sched_link link[SCHED_MAX_GPUS][SCHED_MAX_GPUS])
{
	for (size_t a = 0; a < s->nr_gpu; a++)
		for (size_t b = 0; b < s->nr_gpu; b++) {
			int level = 0;

			link[a][b] = SL_UNKNOWN;
			if (a == b)
				continue;
			if (collector_topology(c, pos[a], pos[b], &level) == 0 &&
			    level >= SL_NVLINK && level <= SL_SYSTEM)
				link[a][b] = (enum sched_link)level;
		}
}

static bool
wait_interval(struct qgpus *g)
{
	double deadline;
	struct timespec ts;
	bool stop;

	pthread_mutex_lock(&g->mu);
	deadline = clock_mono() + g->interval;
	while (!g->stop && !g->poke && clock_mono() < deadline) {
		clock_mono_timespec(&ts, deadline);
		pthread_cond_timedwait(&g->cv, &g->mu, &ts);
	}
	g->poke = false;
	stop = g->stop;
	pthread_mutex_unlock(&g->mu);
	return !stop;
}

static void
publish(struct qgpus *g, struct qgpu_sample *s)
{
	pthread_mutex_lock(&g->mu);
	s->seq = ++g->seq;
	qgpu_sample_release(&g->latest);
	g->latest = *s;
	g->have = true;
	pthread_mutex_unlock(&g->mu);
	qgpu_sample_init(s);
	notify(g);
}

static void *
worker_main(void *arg)
{
	struct qgpus *g = arg;
	struct collector *c = NULL;
	struct err err = ERR_INIT;
	enum sched_link(*link)[SCHED_MAX_GPUS] = xcalloc(SCHED_MAX_GPUS, sizeof(*link));
	unsigned pos[SCHED_MAX_GPUS];
	char topo_uuids[SCHED_MAX_GPUS][QJ_UUID_LEN];
	size_t nr_topo = 0;
	bool topo_done = false;

	if (collector_open(&g->cfg, &c, &err) < 0) {
		set_status(g, "unavailable: %s", err.msg);
		c = NULL;
	} else {
		collector_scan(c, &err);
		if (!collector_count(c)) {
			const char *const *why = collector_reasons(c);

			set_status(g, "unavailable: %s", why[0] ? why[0] : "no GPU found");
		} else {
			set_status(g, "ok");
		}
	}
	do {
		struct qgpu_sample s;
		struct gpu_snapshot snap;
		double mono = clock_mono();

		qgpu_sample_init(&s);
		gpu_snapshot_init(&snap);
		if (c && collector_count(c)) {
			err_clear(&err);
			if (collector_sample(c, &snap, COLLECT_PROCS | COLLECT_NO_ENRICH, &err) <
			    0) {
				set_status(g, "unavailable: %s", err.msg);
				gpu_snapshot_release(&snap);
				if (!wait_interval(g))
					break;
				continue;
			}
			convert(&snap, &s, pos, mono);
			/* the topology once, and again should the GPUs change */
			{
				bool same = topo_done && nr_topo == s.nr_gpu;

				for (size_t i = 0; same && i < s.nr_gpu; i++)
					same = !strcmp(topo_uuids[i], s.gpu[i].uuid);
				if (!same) {
					topology(c, &s, pos, link);
					nr_topo = s.nr_gpu;
					for (size_t i = 0; i < s.nr_gpu; i++)
						str_copy(topo_uuids[i], QJ_UUID_LEN, s.gpu[i].uuid);
					topo_done = true;
				}
			}
			memcpy(s.link, link, sizeof(s.link));
			pthread_mutex_lock(&g->mu);
			if (!strncmp(g->status, "unavailable: ", 13) && collector_count(c))
				str_copy(g->status, sizeof(g->status), "ok");
			pthread_mutex_unlock(&g->mu);
		} else {
			s.time = (double)time(NULL);
			s.mono = mono;
		}
		gpu_snapshot_release(&snap);
		publish(g, &s);
	} while (wait_interval(g));
	if (c)
		collector_close(c);
	free(link);
	pthread_mutex_lock(&g->mu);
	g->done = true;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

int
qgpus_start(const struct gs_config *cfg, double interval, double timeout, int notify_fd,
            struct qgpus **out, struct err *err)
{
	struct qgpus *g = xcalloc(1, sizeof(*g));
	pthread_condattr_t ca;

	*out = NULL;
	pthread_mutex_init(&g->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->cv, &ca);
	pthread_condattr_destroy(&ca);
	g->cfg = *cfg;
	g->cfg.timeout = timeout;
	g->cfg.want_procs = true;
	g->interval = interval;
	g->notify_fd = notify_fd;
	str_copy(g->status, sizeof(g->status), "opening");
	qgpu_sample_init(&g->latest);
	if (pthread_create(&g->thread, NULL, worker_main, g) != 0) {
		pthread_cond_destroy(&g->cv);
		pthread_mutex_destroy(&g->mu);
		free(g);
		return err_set(err, E_IO, "cannot start the GPU sampling thread");
	}
	*out = g;
	return 0;
}

void
qgpus_set_interval(struct qgpus *g, double interval)
{
	pthread_mutex_lock(&g->mu);
	g->interval = interval;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

void
qgpus_poke(struct qgpus *g)
{
	pthread_mutex_lock(&g->mu);
	g->poke = true;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

bool
qgpus_latest(struct qgpus *g, struct qgpu_sample *out, char *status, size_t status_len)
{
	bool have;

	pthread_mutex_lock(&g->mu);
	have = g->have;
	if (have)
		qgpu_sample_copy(out, &g->latest);
	if (status)
		str_copy(status, status_len, g->status);
	pthread_mutex_unlock(&g->mu);
	return have;
}

uint64_t
qgpus_seq(struct qgpus *g)
{
	uint64_t seq;

	pthread_mutex_lock(&g->mu);
	seq = g->seq;
	pthread_mutex_unlock(&g->mu);
	return seq;
}

void
qgpus_stop(struct qgpus *g)
{
	struct timespec ts;
	double deadline = clock_mono() + 3;
	bool done;

	if (!g)
		return;
	pthread_mutex_lock(&g->mu);
	g->stop = true;
	pthread_cond_broadcast(&g->cv);
	while (!g->done && clock_mono() < deadline) {
		clock_mono_timespec(&ts, deadline);
		pthread_cond_timedwait(&g->cv, &g->mu, &ts);
	}
	done = g->done;
	pthread_mutex_unlock(&g->mu);
	if (!done) {
		/* hung in the driver: leave it behind, the process is ending */
		pthread_detach(g->thread);
		return;
	}
	pthread_join(g->thread, NULL);
	qgpu_sample_release(&g->latest);
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
	free(g);
}
