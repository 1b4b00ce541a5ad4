/*
 * Snapshot lifecycle and small helpers of the sample model.
 */
#include "gpu.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "xalloc.h"

void
gpu_snapshot_init(struct gpu_snapshot *s)
{
	memset(s, 0, sizeof(*s));
}

void
gpu_proc_release(struct gpu_proc *p)
{
	free(p->user);
	free(p->name);
	free(p->cmdline);
	free(p->container);
	free(p->pod);
	free(p->cgroup);
	memset(p, 0, sizeof(*p));
}

void
gpu_snapshot_release(struct gpu_snapshot *s)
{
	for (size_t i = 0; i < s->nr_proc; i++)
		gpu_proc_release(&s->proc[i]);
	for (size_t i = 0; i < s->nr_note; i++)
		free(s->note[i]);
	free(s->proc);
	free(s->dev);
	free(s->note);
	gpu_snapshot_init(s);
}

struct gpu_device *
gpu_snapshot_add_dev(struct gpu_snapshot *s)
{
	struct gpu_device *d;

	ALLOC_GROW(s->dev, s->nr_dev + 1, s->alloc_dev);
	d = &s->dev[s->nr_dev++];
	memset(d, 0, sizeof(*d));
	return d;
}

struct gpu_proc *
gpu_snapshot_add_proc(struct gpu_snapshot *s)
{
	struct gpu_proc *p;

	ALLOC_GROW(s->proc, s->nr_proc + 1, s->alloc_proc);
	p = &s->proc[s->nr_proc++];
	memset(p, 0, sizeof(*p));
	return p;
}

void
gpu_snapshot_note(struct gpu_snapshot *s, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	ALLOC_GROW(s->note, s->nr_note + 1, s->alloc_note);
	s->note[s->nr_note++] = strbuf_detach(&sb, NULL);
}

static int
cmp_proc(const void *a, const void *b)
{
	const struct gpu_proc *p = a, *q = b;

	if (p->dev != q->dev)
		return p->dev < q->dev ? -1 : 1;
	if (p->pid != q->pid)
		return p->pid < q->pid ? -1 : 1;
	return 0;
}

void
gpu_snapshot_sort_procs(struct gpu_snapshot *s)
{
	if (s->nr_proc > 1)
		qsort(s->proc, s->nr_proc, sizeof(*s->proc), cmp_proc);
}

void
gpu_device_clear_readings(struct gpu_device *d)
{
	memset(d->v, 0, sizeof(d->v));
	memset(&d->valid, 0, sizeof(d->valid));
	d->mem_source[0] = '\0';
}

double
dev_get(const struct gpu_device *d, enum gpu_field f)
{
	return dev_has(d, f) ? d->v[f] : NAN;
}

const char *
dev_state_key(enum dev_state st)
{
	switch (st) {
	case DEV_OK:
		return "ok";
	case DEV_LOST:
		return "lost";
	case DEV_RESET_REQUIRED:
		return "reset_required";
	case DEV_NOT_RESPONDING:
		return "not_responding";
	case DEV_NO_PERMISSION:
		return "no_permission";
	case DEV_ERROR:
		return "error";
	case DEV_SUSPENDED:
		return "suspended";
	}
	return "error";
}

const char *
vendor_key(enum gpu_vendor v)
{
	switch (v) {
	case VENDOR_NVIDIA:
		return "nvidia";
	case VENDOR_AMD:
		return "amd";
	case VENDOR_INTEL:
		return "intel";
	case VENDOR_OTHER:
		return "other";
	case VENDOR_UNKNOWN:
		break;
	}
	return "unknown";
}
