/*
 * Snapshot lifecycle and small helpers of the sample model.
 */
#include "core/gpu.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

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
	free(p->pod_name);
	free(p->pod_namespace);
	free(p->container_name);
	free(p->slurm_job);
	free(p->slurm_step);
	free(p->slurm_user);
	free(p->cgroup);
	free(p->engine);
	memset(p, 0, sizeof(*p));
}

void
gpu_proc_set_engines(struct gpu_proc *p, const struct engine_use *e, unsigned nr)
{
	free(p->engine);
	p->engine = NULL;
	p->nr_engine = nr;
	if (nr) {
		p->engine = xmalloc(nr * sizeof(*e));
		memcpy(p->engine, e, nr * sizeof(*e));
	}
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
	va_list ap;

	ALLOC_GROW(s->note, s->nr_note + 1, s->alloc_note);
	va_start(ap, fmt);
	s->note[s->nr_note++] = xstrvfmt(fmt, ap);
	va_end(ap);
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

static const struct dev_state_name {
	const char *key, *word, *smi;
} dev_states[] = {
	[DEV_OK] = { "ok", "ok", NULL },
	[DEV_LOST] = { "lost", "LOST", "[GPU is lost]" },
	[DEV_RESET_REQUIRED] = { "reset_required", "RESET REQUIRED", "[GPU requires reset]" },
	[DEV_NOT_RESPONDING] = { "not_responding", "NOT RESPONDING", "[Timeout]" },
	[DEV_NO_PERMISSION] = { "no_permission", "NO PERMISSION", "[Insufficient Permissions]" },
	[DEV_ERROR] = { "error", "ERROR", "[Unknown Error]" },
	[DEV_SUSPENDED] = { "suspended", "SUSPENDED", "[GPU is suspended]" },
};

static const struct dev_state_name *
state_name(enum dev_state st)
{
	if ((unsigned)st >= ARRAY_SIZE(dev_states) || !dev_states[st].key)
		return &dev_states[DEV_ERROR];
	return &dev_states[st];
}

bool
gpu_device_procs_known(const struct gpu_device *d)
{
	return d->state == DEV_OK || d->state == DEV_SUSPENDED;
}

size_t
gpu_snapshot_procs_unknown(const struct gpu_snapshot *snap, struct strbuf *why)
{
	size_t n = 0, last = 0;
	unsigned states = 0; /* a bit per state met */

	for (size_t i = 0; i < snap->nr_dev; i++)
		if (!gpu_device_procs_known(&snap->dev[i])) {
			n++;
			last = i;
			states |= 1u << (unsigned)snap->dev[i].state;
		}
	if (!n || !why)
		return n;
	strbuf_reset(why);
	strbuf_addstr(why, "the processes of ");
	for (size_t i = 0, k = 0; i < snap->nr_dev; i++) {
		if (gpu_device_procs_known(&snap->dev[i]))
			continue;
		if (k++)
			strbuf_addstr(why, i == last ? " and " : ", ");
		strbuf_addf(why, "GPU %u", snap->dev[i].index);
	}
	strbuf_addstr(why, " are unknown: ");
	for (unsigned st = 0, k = 0; st < 32; st++)
		if (states & (1u << st)) {
			const char *key = dev_state_key((enum dev_state)st);

			if (k++)
				strbuf_addstr(why, ", ");
			for (; *key; key++)
				strbuf_addch(why, *key == '_' ? ' ' : *key);
		}
	return n;
}

const char *
dev_state_key(enum dev_state st)
{
	return state_name(st)->key;
}

const char *
dev_state_word(enum dev_state st)
{
	return state_name(st)->word;
}

const char *
dev_state_smi(enum dev_state st)
{
	return state_name(st)->smi;
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

/* Parse "[domain:]bus:dev[.fn]" (hex) into its parts. */
static bool
parse_bus_id(const char *s, unsigned long v[4])
{
	unsigned long part[4] = { 0 };
	int n = 0;
	char *end;

	while (*s && n < 4) {
		part[n++] = strtoul(s, &end, 16);
		if (end == s)
			return false;
		s = end;
		if (*s == ':' || *s == '.')
			s++;
		else if (*s)
			return false;
	}
	if (n == 4) { /* domain:bus:dev.fn */
		memcpy(v, part, sizeof(part));
		return true;
	}
	if (n == 3) { /* bus:dev.fn, or domain:bus:dev without a function */
		v[0] = 0, v[1] = part[0], v[2] = part[1], v[3] = part[2];
		return true;
	}
	return false;
}

bool
gpu_match_id(const struct gpu_device *d, const char *id, bool *ambiguous_prefix)
{
	size_t len = strlen(id);
	bool digits = len > 0;

	*ambiguous_prefix = false;
	for (size_t i = 0; i < len; i++)
		digits &= isdigit((unsigned char)id[i]) != 0;
	/* a MIG device's index is within its GPU: "0:1" (gpu_select) names it */
	if (digits)
		return !d->is_mig && strtoul(id, NULL, 10) == d->index;
	if (!strncasecmp(id, "GPU-", 4) || !strncasecmp(id, "MIG-", 4)) {
		*ambiguous_prefix = strlen(d->uuid) != len;
		return d->uuid[0] && !strncasecmp(d->uuid, id, len);
	}
	if (strchr(id, ':') && d->pci_valid && !d->is_mig) {
		unsigned long want[4], have[4];

		if (!parse_bus_id(id, want) || !parse_bus_id(d->pci_bus_id, have))
			return false;
		return want[0] == have[0] && want[1] == have[1] && want[2] == have[2] &&
		       want[3] == have[3];
	}
	return false;
}

/* "G:M": MIG device M of GPU G, as nvidia-smi's "GPU" and "MIG dev" columns say */
static bool
match_at(const struct gpu_device *dev, size_t nr, size_t i, const char *id, bool *prefix)
{
	unsigned long g, m;
	char *end;

	if (isdigit((unsigned char)id[0])) {
		g = strtoul(id, &end, 10);
		if (*end == ':' && isdigit((unsigned char)end[1])) {
			m = strtoul(end + 1, &end, 10);
			if (!*end) {
				*prefix = false;
				return dev[i].is_mig && dev[i].mig_parent < nr &&
				       dev[dev[i].mig_parent].index == g && dev[i].index == m;
			}
		}
	}
	return gpu_match_id(&dev[i], id, prefix);
}

/*
 * A MIG device shows under its GPU, whose process list holds its processes:
 * a selected MIG device selects its GPU, and a GPU named by an id its MIG
 * devices.
 */
static void
select_mig(const struct gpu_device *dev, size_t nr, bool *selected)
{
	bool *named = xcalloc(nr ? nr : 1, sizeof(*named));

	memcpy(named, selected, nr * sizeof(*named));
	for (size_t i = 0; i < nr; i++) {
		if (!dev[i].is_mig || dev[i].mig_parent >= nr)
			continue;
		if (named[i])
			selected[dev[i].mig_parent] = true;
		else if (named[dev[i].mig_parent])
			selected[i] = true;
	}
	free(named);
}

int
gpu_select(const struct gpu_device *dev, size_t nr, const char *ids, bool *selected,
           struct err *err)
{
	char *copy, *tok, *save = NULL;
	size_t gpus = 0;
	int rc = 0;

	for (size_t i = 0; i < nr; i++) {
		selected[i] = !ids || !*ids;
		gpus += !dev[i].is_mig;
	}
	if (!ids || !*ids)
		return 0;
	copy = xstrdup(ids);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t hits = 0, exact = 0, last = 0;

		while (isspace((unsigned char)*tok))
			tok++;
		if (!*tok)
			continue;
		for (size_t i = 0; i < nr; i++) {
			bool prefix;

			if (match_at(dev, nr, i, tok, &prefix)) {
				hits++;
				exact += !prefix;
				last = i;
			}
		}
		if (hits == 1 || (hits > 1 && exact == 1)) {
			if (hits > 1)
				for (size_t i = 0; i < nr; i++) {
					bool prefix;

					if (match_at(dev, nr, i, tok, &prefix) && !prefix)
						last = i;
				}
			selected[last] = true;
			continue;
		}
		if (hits > 1)
			rc = err_set(err, E_USAGE, "'%s' matches %zu GPUs: give more of the UUID",
			             tok, hits);
		else if (gpus)
			rc = err_set(
			        err, E_USAGE,
			        "no GPU matches '%s' (give an index from 0 to %zu, a UUID or a PCI bus id)",
			        tok, gpus - 1);
		else
			rc = err_set(err, E_USAGE, "no GPU matches '%s'", tok);
		break;
	}
	free(copy);
	if (!rc)
		select_mig(dev, nr, selected);
	return rc;
}

void
gpu_snapshot_fold_mig(struct gpu_snapshot *s)
{
	size_t *to, n = 0;

	if (!s->nr_dev)
		return;
	to = xcalloc(s->nr_dev, sizeof(*to));
	for (size_t i = 0; i < s->nr_dev; i++) {
		const struct gpu_device *d = &s->dev[i];

		if (d->is_mig) {
			/* its GPU comes before it; one that does not is kept */
			if (d->mig_parent < i && !s->dev[d->mig_parent].is_mig) {
				to[i] = to[d->mig_parent];
				continue;
			}
		}
		to[i] = n;
		if (n != i)
			s->dev[n] = s->dev[i];
		n++;
	}
	for (size_t i = 0; i < s->nr_proc; i++)
		if (s->proc[i].dev < s->nr_dev)
			s->proc[i].dev = (unsigned)to[s->proc[i].dev];
	s->nr_dev = n;
	free(to);
	gpu_snapshot_sort_procs(s);
}

const struct gpu_device *
gpu_snapshot_gpu_of(const struct gpu_snapshot *s, const struct gpu_device *d)
{
	return d->is_mig && d->mig_parent < s->nr_dev ? &s->dev[d->mig_parent] : d;
}

char *
gpu_device_label(const struct gpu_snapshot *s, const struct gpu_device *d, char *buf, size_t size)
{
	const struct gpu_device *g = gpu_snapshot_gpu_of(s, d);

	if (g != d)
		snprintf(buf, size, "%u:%u", g->index, d->index);
	else
		snprintf(buf, size, "%u", d->index);
	return buf;
}

size_t
gpu_snapshot_count(const struct gpu_snapshot *s, enum gpu_vendor vendor)
{
	size_t n = 0;

	for (size_t i = 0; s && i < s->nr_dev; i++)
		n += s->dev[i].vendor == vendor && !s->dev[i].is_mig;
	return n;
}
