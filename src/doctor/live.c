/*
 * The doctor for front ends that sample all the time: health.* and
 * workload.* over the samples they keep (live.h).
 */
#include "doctor/live.h"

#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

/* --- running the checks ------------------------------------------------------------ */

static const char *
env_none(const char *name)
{
	(void)name;
	return NULL;
}

/* Free what a finding owns. */
static void
finding_free(struct dr_finding *f)
{
	free(f->title);
	for (size_t j = 0; j < f->nr_evidence; j++)
		free(f->evidence[j]);
	free(f->evidence);
	free(f->meaning);
	free(f->action);
	memset(f, 0, sizeof(*f));
}

/* Move the findings of r of severity sev to out, in their order; drop window_short. */
static void
take_severity(struct dr_report *r, enum dr_severity sev, struct dr_report *out)
{
	for (size_t i = 0; i < r->nr; i++) {
		struct dr_finding *f = &r->f[i];

		if (!f->id || f->severity != sev)
			continue;
		if (!strcmp(f->id, "workload.window_short")) {
			finding_free(f);
			continue;
		}
		ALLOC_GROW(out->f, out->nr + 1, out->alloc);
		out->f[out->nr++] = *f;
		memset(f, 0, sizeof(*f));
	}
}

void
dr_live(const struct gpu_snapshot *s, size_t nr, double interval, bool recorded,
        struct dr_report *r)
{
	struct dr_report all = DR_REPORT_INIT;
	struct dr_window w = { s, nr, interval, recorded ? "recording" : "live" };
	struct dr_ctx ctx;

	if (!s || !nr)
		return;
	memset(&ctx, 0, sizeof(ctx));
	ctx.snap = &s[nr - 1];
	ctx.getenv = env_none;
	ctx.window = nr > 1 ? &w : NULL;
	ctx.recorded = recorded;
	dr_check_health(&ctx, &all);
	dr_check_workload(&ctx, &all);
	for (int sev = DR_ERROR; sev >= DR_OK; sev--)
		take_severity(&all, (enum dr_severity)sev, r);
	free(all.f);
}

/* --- the samples kept ------------------------------------------------------------------ */

/*
 * The copies of one process in successive samples share its strings (its
 * user, name and command line rarely change): each is counted, and goes with
 * the last copy that holds it. So the ring holds a process's texts once, not
 * once a sample, and its copies are released here, never by
 * gpu_snapshot_release().
 */
struct shared_str {
	size_t refs;
	char s[];
};

static struct shared_str *
shared_of(char *s)
{
	return (struct shared_str *)(void *)(s - offsetof(struct shared_str, s));
}

/* src as a shared string: old's (one more reference) when it is the same text. */
static char *
share(const char *src, char *old, size_t *bytes)
{
	struct shared_str *h;
	size_t len;

	if (!src)
		return NULL;
	if (old && !strcmp(old, src)) {
		shared_of(old)->refs++;
		return old;
	}
	len = strlen(src);
	h = xmalloc(sizeof(*h) + len + 1);
	h->refs = 1;
	memcpy(h->s, src, len + 1);
	*bytes += sizeof(*h) + len + 1;
	return h->s;
}

static void
unshare(char *s)
{
	struct shared_str *h;

	if (!s)
		return;
	h = shared_of(s);
	if (!--h->refs)
		free(h);
}

/* A copy made by copy_snapshot(), released (and left empty). */
static void
ring_release(struct gpu_snapshot *s)
{
	for (size_t i = 0; i < s->nr_proc; i++) {
		unshare(s->proc[i].user);
		unshare(s->proc[i].name);
		unshare(s->proc[i].cmdline);
		unshare(s->proc[i].container);
		unshare(s->proc[i].pod);
		unshare(s->proc[i].pod_name);
		unshare(s->proc[i].pod_namespace);
		unshare(s->proc[i].container_name);
		unshare(s->proc[i].slurm_job);
		unshare(s->proc[i].slurm_step);
		unshare(s->proc[i].slurm_user);
	}
	free(s->proc);
	free(s->dev);
	gpu_snapshot_init(s);
}

/* The copy of the process src in prev (the sample before), or NULL; hint: where to look first. */
static const struct gpu_proc *
earlier(const struct gpu_snapshot *prev, const struct gpu_proc *src, size_t *hint)
{
	for (size_t k = 0; prev && k < 2; k++) {
		size_t i = *hint + k;

		if (i < prev->nr_proc && prev->proc[i].pid == src->pid &&
		    prev->proc[i].start_ticks == src->start_ticks &&
		    prev->proc[i].dev == src->dev) {
			*hint = i + 1;
			return &prev->proc[i];
		}
	}
	return NULL;
}

/* What the checks read of a process (its cgroup path and DRM engines are left out). */
static void
copy_proc(struct gpu_proc *dst, const struct gpu_proc *src, const struct gpu_proc *old,
          size_t *bytes)
{
	memcpy(dst, src, sizeof(*dst));
	dst->user = share(src->user, old ? old->user : NULL, bytes);
	dst->name = share(src->name, old ? old->name : NULL, bytes);
	dst->cmdline = share(src->cmdline, old ? old->cmdline : NULL, bytes);
	dst->container = share(src->container, old ? old->container : NULL, bytes);
	dst->pod = share(src->pod, old ? old->pod : NULL, bytes);
	dst->pod_name = share(src->pod_name, old ? old->pod_name : NULL, bytes);
	dst->pod_namespace = share(src->pod_namespace, old ? old->pod_namespace : NULL, bytes);
	dst->container_name = share(src->container_name, old ? old->container_name : NULL, bytes);
	dst->slurm_job = share(src->slurm_job, old ? old->slurm_job : NULL, bytes);
	dst->slurm_step = share(src->slurm_step, old ? old->slurm_step : NULL, bytes);
	dst->slurm_user = share(src->slurm_user, old ? old->slurm_user : NULL, bytes);
	dst->cgroup = NULL;
	dst->engine = NULL;
	dst->nr_engine = 0;
}

/*
 * The devices and processes of src into dst (released first), sharing
 * strings with prev (the newest copy before, or NULL); returns the bytes it
 * added.
 */
static size_t
copy_snapshot(struct gpu_snapshot *dst, const struct gpu_snapshot *src,
              const struct gpu_snapshot *prev)
{
	size_t bytes = src->nr_dev * sizeof(src->dev[0]) + src->nr_proc * sizeof(src->proc[0]);
	size_t hint = 0;

	ring_release(dst);
	dst->time = src->time;
	memcpy(dst->hostname, src->hostname, sizeof(dst->hostname));
	dst->simulated = src->simulated;
	dst->nvidia = src->nvidia;
	/* arrays of the exact size: dozens of them are held */
	if (src->nr_dev) {
		dst->dev = xmalloc(src->nr_dev * sizeof(*dst->dev));
		memcpy(dst->dev, src->dev, src->nr_dev * sizeof(*dst->dev));
		dst->nr_dev = dst->alloc_dev = src->nr_dev;
	}
	if (src->nr_proc) {
		dst->proc = xcalloc(src->nr_proc, sizeof(*dst->proc));
		dst->nr_proc = dst->alloc_proc = src->nr_proc;
	}
	for (size_t i = 0; i < src->nr_proc; i++)
		copy_proc(&dst->proc[i], &src->proc[i], earlier(prev, &src->proc[i], &hint),
		          &bytes);
	return bytes;
}

void
dr_live_init(struct dr_live *l, double interval, bool recorded)
{
	memset(l, 0, sizeof(*l));
	for (size_t i = 0; i < DR_LIVE_SAMPLES; i++)
		gpu_snapshot_init(&l->ring[i]);
	l->interval = interval > 0 ? interval : 1;
	l->recorded = recorded;
}

void
dr_live_release(struct dr_live *l)
{
	for (size_t i = 0; i < DR_LIVE_SAMPLES; i++)
		ring_release(&l->ring[i]);
	dr_report_release(&l->report);
	memset(l->bytes, 0, sizeof(l->bytes));
	l->nr = l->head = l->total = 0;
	l->ran = false;
}

/* Let the oldest sample go. */
static void
drop_oldest(struct dr_live *l)
{
	ring_release(&l->ring[l->head]);
	l->total -= l->bytes[l->head];
	l->bytes[l->head] = 0;
	l->head = (l->head + 1) % DR_LIVE_SAMPLES;
	l->nr--;
}

void
dr_live_push(struct dr_live *l, const struct gpu_snapshot *s)
{
	const struct gpu_snapshot *prev;
	size_t slot;

	if (l->nr == DR_LIVE_SAMPLES)
		drop_oldest(l);
	prev = l->nr ? &l->ring[(l->head + l->nr - 1) % DR_LIVE_SAMPLES] : NULL;
	slot = (l->head + l->nr) % DR_LIVE_SAMPLES;
	l->nr++;
	l->bytes[slot] = copy_snapshot(&l->ring[slot], s, prev);
	l->total += l->bytes[slot];
	while (l->nr > DR_LIVE_MIN && l->total > DR_LIVE_BYTES)
		drop_oldest(l);
}

/* The i-th finding of r worse than ok, from *at on; NULL past the end. */
static const struct dr_finding *
next_problem(const struct dr_report *r, size_t *at)
{
	while (*at < r->nr && r->f[*at].severity <= DR_OK)
		(*at)++;
	return *at < r->nr ? &r->f[(*at)++] : NULL;
}

/* Same findings worse than ok (ids, severities, titles); ok lines, whose counts move, aside. */
static bool
same_findings(const struct dr_report *a, const struct dr_report *b)
{
	size_t i = 0, j = 0;

	for (;;) {
		const struct dr_finding *x = next_problem(a, &i), *y = next_problem(b, &j);

		if (!x || !y)
			return !x && !y;
		if (x->severity != y->severity || strcmp(x->id, y->id) ||
		    strcmp(x->title, y->title))
			return false;
	}
}

bool
dr_live_update(struct dr_live *l)
{
	struct gpu_snapshot *order;
	struct dr_report next = DR_REPORT_INIT;
	double newest;

	if (!l->nr)
		return false;
	newest = l->ring[(l->head + l->nr - 1) % DR_LIVE_SAMPLES].time;
	if (l->ran && newest >= l->ran_at && newest - l->ran_at < DR_LIVE_EVERY)
		return false;
	/* the window in order: shallow copies of the ring's samples, read only */
	order = xcalloc(l->nr, sizeof(*order));
	for (size_t i = 0; i < l->nr; i++)
		order[i] = l->ring[(l->head + i) % DR_LIVE_SAMPLES];
	dr_live(order, l->nr, l->interval, l->recorded, &next);
	free(order);
	l->changed = !l->ran || !same_findings(&l->report, &next);
	dr_report_release(&l->report);
	l->report = next;
	l->ran_at = newest;
	l->ran = true;
	return true;
}

/* --- reading a finding ------------------------------------------------------------------ */

/* The GPU index right after "GPU " at p, or -1. */
static int
index_at(const char *p)
{
	long v = 0;

	if (strncmp(p, "GPU ", 4))
		return -1;
	p += 4;
	if (!isdigit((unsigned char)*p))
		return -1;
	while (isdigit((unsigned char)*p) && v < 100000)
		v = v * 10 + (*p++ - '0');
	/* "GPU 0, 1": several GPUs */
	if (*p == ',' || v >= 100000)
		return -1;
	return (int)v;
}

int
dr_live_gpu(const struct dr_finding *f)
{
	const char *p;

	if (!f || !f->title)
		return -1;
	if (!strncmp(f->title, "GPU ", 4))
		return index_at(f->title);
	p = strstr(f->title, " GPU ");
	return p ? index_at(p + 1) : -1;
}

const char *
dr_live_short_title(const struct dr_finding *f)
{
	const char *p;
	int depth = 0;

	if (!f->title || dr_live_gpu(f) < 0 || strncmp(f->title, "GPU ", 4))
		return f->title ? f->title : "";
	/* skip "GPU N (...): " with its brackets, which may nest */
	for (p = f->title + 4; *p && *p != ':' && *p != '('; p++)
		;
	for (; *p == '('; p++) {
		for (; *p; p++) {
			depth += *p == '(';
			depth -= *p == ')';
			if (!depth)
				break;
		}
		if (!*p)
			return f->title;
	}
	if (*p != ':' || p[1] != ' ')
		return f->title;
	return p + 2;
}

size_t
dr_live_count(const struct dr_report *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nr; i++)
		n += r->f[i].severity > DR_OK;
	return n;
}

void
dr_live_json(struct strbuf *sb, const struct dr_report *r)
{
	bool first = true;

	strbuf_addch(sb, '[');
	for (size_t i = 0; i < r->nr; i++) {
		const struct dr_finding *f = &r->f[i];
		int gpu = dr_live_gpu(f);

		if (f->severity <= DR_OK)
			continue;
		strbuf_addstr(sb, first ? "{" : ",{");
		first = false;
		dr_json_finding(sb, f);
		if (gpu >= 0)
			strbuf_addf(sb, ",\"gpu\":%d", gpu);
		else
			strbuf_addstr(sb, ",\"gpu\":null");
		strbuf_addch(sb, '}');
	}
	strbuf_addch(sb, ']');
}

void
dr_live_doc(struct strbuf *sb, const struct dr_report *r, double time, size_t samples)
{
	strbuf_addstr(sb, "{\"schema\":");
	json_str(sb, DR_LIVE_JSON_SCHEMA);
	strbuf_addstr(sb, ",\"time\":");
	json_num(sb, time, 3);
	strbuf_addf(sb, ",\"samples\":%zu", samples);
	strbuf_addstr(sb, ",\"worst\":");
	json_str(sb, dr_severity_key(dr_worst(r)));
	strbuf_addstr(sb, ",\"findings\":");
	dr_live_json(sb, r);
	strbuf_addch(sb, '}');
}
