/*
 * The field walk of the flight recorder: every member of the sample model
 * comes back from a recording, as a keyframe and as a delta. For every
 * numeric field of the field table (core/fields.c: the one JSON, query and
 * Prometheus use), every process field, and every other member of a
 * device, a process and a snapshot (identity, strings, PCI, engines, clock
 * levels, the Xid counts and xid_watched, ...), the test sets a distinct
 * value, records it, reads it back and checks it, naming what did not come
 * back. Its list of members is its own, not the recorder's: a member the
 * recorder leaves out of its tables (src/record/snapshot.c) fails here.
 * And the list covers every byte of the structs but padding, so a member
 * added to the model and to neither list fails too.
 *
 * The devices' identity (index, vendor, UUID, PCI bus id) cannot change
 * in a delta: a change of it makes the writer write a keyframe, and that
 * is what is checked for them.
 */
#include "record/record.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/gpu.h"
#include "core/xalloc.h"
#include "harness.h"
#include "tree.h"

#define T0 1800000000.0

/* --- the members, as this test knows them ------------------------------------- */

enum kind {
	K_INT,
	K_STR,
	K_OSTR,
	K_RUNTIME,
	K_ENGINES,
	K_LEVELS,
	K_XID,
	K_NVLINK,
	K_FIELDS,
	K_OTHER
};

struct mem {
	const char *name;
	size_t off, size;
	enum kind kind;
	/* v: 0 the base value, 1 another; set member of o (a device, process or snapshot) */
	void (*set)(void *o, unsigned v);
};

#define DEV(m)  #m, offsetof(struct gpu_device, m), sizeof(((struct gpu_device *)0)->m)
#define PROC(m) #m, offsetof(struct gpu_proc, m), sizeof(((struct gpu_proc *)0)->m)
#define SNAP(m) #m, offsetof(struct gpu_snapshot, m), sizeof(((struct gpu_snapshot *)0)->m)

/* A distinct string for member name and value v, as much as fits in size. */
static void
str_of(char *buf, size_t size, const char *name, unsigned v)
{
	char tmp[128];
	size_t n = (size_t)snprintf(tmp, sizeof(tmp), "%u-%s", v + 1, name);

	/* cut to fit the member: the value first, so that it stays distinct */
	n = n < size ? n : size - 1;
	memcpy(buf, tmp, n);
	buf[n] = '\0';
}

#define SET_STR(T, m)                              \
	static void set_##m(void *o, unsigned v)   \
	{                                          \
		T *x = o;                          \
		memset(x->m, 0, sizeof(x->m));     \
		str_of(x->m, sizeof(x->m), #m, v); \
	}
#define SET_INT(T, m, a, b)                      \
	static void set_##m(void *o, unsigned v) \
	{                                        \
		T *x = o;                        \
		x->m = v ? (b) : (a);            \
	}

SET_INT(struct gpu_device, index, 3, 5)
SET_INT(struct gpu_device, vendor, VENDOR_NVIDIA, VENDOR_AMD)
SET_INT(struct gpu_device, state, DEV_OK, DEV_RESET_REQUIRED)
SET_STR(struct gpu_device, state_msg)
SET_STR(struct gpu_device, name)
SET_STR(struct gpu_device, uuid)
SET_STR(struct gpu_device, serial)
SET_STR(struct gpu_device, pci_bus_id)
SET_STR(struct gpu_device, vbios)
SET_STR(struct gpu_device, inforom)
SET_STR(struct gpu_device, board_part)
SET_STR(struct gpu_device, brand)
SET_STR(struct gpu_device, architecture)
SET_STR(struct gpu_device, compute_cap)
SET_STR(struct gpu_device, driver)
SET_STR(struct gpu_device, card)
SET_STR(struct gpu_device, unique_id)
SET_STR(struct gpu_device, util_source)
SET_STR(struct gpu_device, util_note)
SET_STR(struct gpu_device, throttle_detail)
SET_STR(struct gpu_device, mem_source)
SET_INT(struct gpu_device, pci_device_id, 0x233010de, 0x744c1002)
SET_INT(struct gpu_device, pci_subsys_id, 0x16c110de, 0x0e3b1002)
SET_INT(struct gpu_device, pci_domain, 1, 2)
SET_INT(struct gpu_device, pci_bus, 0x18, 0x2a)
SET_INT(struct gpu_device, pci_dev, 3, 4)
SET_INT(struct gpu_device, pci_func, 1, 2)
SET_INT(struct gpu_device, pci_valid, false, true)
SET_INT(struct gpu_device, xid_watched, false, true)
SET_INT(struct gpu_device, backend, 1, 2)
SET_INT(struct gpu_device, handle, 7, 9)
SET_INT(struct gpu_device, is_mig, false, true)
SET_INT(struct gpu_device, mig_parent, 0, 1)
SET_INT(struct gpu_device, mig_sm_count, 16, 66)
SET_INT(struct gpu_device, xid_last, 0, 79)
SET_INT(struct gpu_device, mig_gi, 1, 7)
SET_INT(struct gpu_device, mig_ci, 0, 3)
SET_STR(struct gpu_device, mig_profile)
SET_STR(struct gpu_device, alloc_namespace)
SET_STR(struct gpu_device, alloc_pod)
SET_STR(struct gpu_device, alloc_container)

/* NVLink: 4 links, counters near 2^40 that grow; another value has 6 links, one down, other counts
 */
static void
set_nvlink(void *o, unsigned v)
{
	struct gpu_device *d = o;

	memset(d->nvlink, 0, sizeof(d->nvlink));
	d->nr_nvlink = 4 + 2 * v;
	for (unsigned i = 0; i < d->nr_nvlink; i++) {
		struct nvlink_link *l = &d->nvlink[i];

		l->present = true;
		l->active = !(v && i == 1);
		l->version = 4;
		l->valid = v ? 0x3f : 0x33;
		for (unsigned k = 0; k < NL__COUNT; k++)
			if (l->valid >> k & 1)
				l->v[k] = (1ull << 40) + 1000 * i + k + 77 * v;
	}
}

static void
set_engine(void *o, unsigned v)
{
	struct gpu_device *d = o;

	memset(d->engine, 0, sizeof(d->engine));
	d->nr_engine = 2 + v;
	for (unsigned i = 0; i < d->nr_engine; i++) {
		snprintf(d->engine[i].name, sizeof(d->engine[i].name), "eng%u-%u", i, v);
		d->engine[i].percent = 10.5 * (i + 1) + v;
	}
}

static void
set_levels(struct clock_levels *l, unsigned v, uint32_t base)
{
	memset(l, 0, sizeof(*l));
	l->nr = 3 + v;
	for (unsigned i = 0; i < l->nr; i++)
		l->mhz[i] = base + 100 * i + v;
	l->current = (int)(1 + v);
}

static void
set_levels_gfx(void *o, unsigned v)
{
	set_levels(&((struct gpu_device *)o)->levels_gfx, v, 500);
}

static void
set_levels_mem(void *o, unsigned v)
{
	set_levels(&((struct gpu_device *)o)->levels_mem, v, 96);
}

/* Xid 79 (fell off the bus) and 13, counted; another value has one more code and other counts. */
static void
set_xid(void *o, unsigned v)
{
	struct gpu_device *d = o;

	memset(d->xid, 0, sizeof(d->xid));
	d->nr_xid = 2 + v;
	d->xid[0] = (struct xid_count){ 79, 1 + v };
	d->xid[1] = (struct xid_count){ 13, 2 + 5 * v };
	if (v)
		d->xid[2] = (struct xid_count){ 48, 1ull << 40 };
}

static const struct mem dev_mem[] = {
	{ DEV(index), K_INT, set_index },
	{ DEV(vendor), K_INT, set_vendor },
	{ DEV(state), K_INT, set_state },
	{ DEV(state_msg), K_STR, set_state_msg },
	{ DEV(name), K_STR, set_name },
	{ DEV(uuid), K_STR, set_uuid },
	{ DEV(serial), K_STR, set_serial },
	{ DEV(pci_bus_id), K_STR, set_pci_bus_id },
	{ DEV(vbios), K_STR, set_vbios },
	{ DEV(inforom), K_STR, set_inforom },
	{ DEV(board_part), K_STR, set_board_part },
	{ DEV(brand), K_STR, set_brand },
	{ DEV(architecture), K_STR, set_architecture },
	{ DEV(compute_cap), K_STR, set_compute_cap },
	{ DEV(driver), K_STR, set_driver },
	{ DEV(card), K_STR, set_card },
	{ DEV(unique_id), K_STR, set_unique_id },
	{ DEV(util_source), K_STR, set_util_source },
	{ DEV(util_note), K_STR, set_util_note },
	{ DEV(throttle_detail), K_STR, set_throttle_detail },
	{ DEV(pci_device_id), K_INT, set_pci_device_id },
	{ DEV(pci_subsys_id), K_INT, set_pci_subsys_id },
	{ DEV(pci_domain), K_INT, set_pci_domain },
	{ DEV(pci_bus), K_INT, set_pci_bus },
	{ DEV(pci_dev), K_INT, set_pci_dev },
	{ DEV(pci_func), K_INT, set_pci_func },
	{ DEV(pci_valid), K_INT, set_pci_valid },
	{ DEV(v), K_FIELDS, NULL },     /* walked field by field below */
	{ DEV(valid), K_FIELDS, NULL }, /* with v */
	{ DEV(mem_source), K_STR, set_mem_source },
	{ DEV(engine), K_ENGINES, set_engine },
	{ DEV(nr_engine), K_OTHER, NULL }, /* with engine */
	{ DEV(levels_gfx), K_LEVELS, set_levels_gfx },
	{ DEV(levels_mem), K_LEVELS, set_levels_mem },
	{ DEV(xid), K_XID, set_xid },
	{ DEV(nr_xid), K_OTHER, NULL }, /* with xid */
	{ DEV(xid_watched), K_INT, set_xid_watched },
	{ DEV(backend), K_INT, set_backend },
	{ DEV(handle), K_INT, set_handle },
	{ DEV(nvlink), K_NVLINK, set_nvlink },
	{ DEV(nr_nvlink), K_OTHER, NULL }, /* with nvlink */
	{ DEV(is_mig), K_INT, set_is_mig },
	{ DEV(mig_parent), K_INT, set_mig_parent },
	{ DEV(mig_sm_count), K_INT, set_mig_sm_count },
	{ DEV(xid_last), K_INT, set_xid_last },
	{ DEV(mig_gi), K_INT, set_mig_gi },
	{ DEV(mig_ci), K_INT, set_mig_ci },
	{ DEV(mig_profile), K_STR, set_mig_profile },
	{ DEV(alloc_namespace), K_STR, set_alloc_namespace },
	{ DEV(alloc_pod), K_STR, set_alloc_pod },
	{ DEV(alloc_container), K_STR, set_alloc_container },
};

SET_INT(struct gpu_proc, dev, 1, 0)
SET_INT(struct gpu_proc, pid, 4242, 4343)
SET_INT(struct gpu_proc, type, PROC_COMPUTE, PROC_GRAPHICS | PROC_MPS)
SET_INT(struct gpu_proc, host, PHOST_OK, PHOST_NOT_VISIBLE)
SET_INT(struct gpu_proc, start_ticks, 123456, 1ull << 50)
SET_INT(struct gpu_proc, gpu_denied, false, true)

#define SET_OSTR(m)                                  \
	static void pset_##m(void *o, unsigned v)    \
	{                                            \
		struct gpu_proc *p = o;              \
		char buf[64];                        \
		str_of(buf, sizeof(buf), #m, v);     \
		free(p->m);                          \
		p->m = v == 2 ? NULL : xstrdup(buf); \
	}
SET_OSTR(user)
SET_OSTR(name)
SET_OSTR(cmdline)
SET_OSTR(container)
SET_OSTR(pod)
SET_OSTR(cgroup)
SET_OSTR(pod_name)
SET_OSTR(pod_namespace)
SET_OSTR(container_name)
SET_OSTR(slurm_job)
SET_OSTR(slurm_step)
SET_OSTR(slurm_user)

static void
set_container_runtime(void *o, unsigned v)
{
	((struct gpu_proc *)o)->container_runtime = v ? "podman" : "docker";
}

static void
set_proc_engine(void *o, unsigned v)
{
	struct gpu_proc *p = o;
	struct engine_use e[GPU_MAX_ENGINES] = { 0 };
	unsigned nr = 1 + v;

	for (unsigned i = 0; i < nr; i++) {
		snprintf(e[i].name, sizeof(e[i].name), "pe%u-%u", i, v);
		e[i].percent = 3.25 * (i + 1) + v;
	}
	gpu_proc_set_engines(p, e, nr);
}

static const struct mem proc_mem[] = {
	{ PROC(dev), K_INT, set_dev },
	{ PROC(pid), K_INT, set_pid },
	{ PROC(type), K_INT, set_type },
	{ PROC(v), K_FIELDS, NULL },
	{ PROC(valid), K_FIELDS, NULL },
	{ PROC(host), K_INT, set_host },
	{ PROC(user), K_OSTR, pset_user },
	{ PROC(name), K_OSTR, pset_name },
	{ PROC(cmdline), K_OSTR, pset_cmdline },
	{ PROC(container), K_OSTR, pset_container },
	{ PROC(container_runtime), K_RUNTIME, set_container_runtime },
	{ PROC(pod), K_OSTR, pset_pod },
	{ PROC(cgroup), K_OSTR, pset_cgroup },
	{ PROC(pod_name), K_OSTR, pset_pod_name },
	{ PROC(pod_namespace), K_OSTR, pset_pod_namespace },
	{ PROC(container_name), K_OSTR, pset_container_name },
	{ PROC(slurm_job), K_OSTR, pset_slurm_job },
	{ PROC(slurm_step), K_OSTR, pset_slurm_step },
	{ PROC(slurm_user), K_OSTR, pset_slurm_user },
	{ PROC(start_ticks), K_INT, set_start_ticks },
	{ PROC(gpu_denied), K_INT, set_gpu_denied },
	{ PROC(engine), K_ENGINES, set_proc_engine },
	{ PROC(nr_engine), K_OTHER, NULL },
};

SET_STR(struct gpu_snapshot, hostname)
SET_INT(struct gpu_snapshot, simulated, false, true)

static void
set_time(void *o, unsigned v)
{
	((struct gpu_snapshot *)o)->time = T0 + 0.125 + v; /* also made to grow by the walk */
}

static void
set_nvidia(void *o, unsigned v)
{
	struct nvidia_sysinfo *n = &((struct gpu_snapshot *)o)->nvidia;

	memset(n, 0, sizeof(*n));
	str_of(n->driver_version, sizeof(n->driver_version), "driver", v);
	str_of(n->nvml_version, sizeof(n->nvml_version), "nvml", v);
	n->cuda_version = v ? 13010 : 12090;
	str_of(n->library, sizeof(n->library), "library", v);
}

static void
set_note(void *o, unsigned v)
{
	struct gpu_snapshot *s = o;

	for (size_t i = 0; i < s->nr_note; i++)
		free(s->note[i]);
	s->nr_note = 0;
	gpu_snapshot_note(s, "note one-%u", v);
	if (v)
		gpu_snapshot_note(s, "note two");
}

static const struct mem snap_mem[] = {
	{ SNAP(time), K_OTHER, set_time },
	{ SNAP(hostname), K_STR, set_hostname },
	{ SNAP(simulated), K_INT, set_simulated },
	{ SNAP(nvidia), K_OTHER, set_nvidia },
	{ SNAP(dev), K_OTHER, NULL },        /* the walk's devices */
	{ SNAP(nr_dev), K_OTHER, NULL },     /* with dev */
	{ SNAP(alloc_dev), K_OTHER, NULL },  /* capacity */
	{ SNAP(proc), K_OTHER, NULL },       /* the walk's processes */
	{ SNAP(nr_proc), K_OTHER, NULL },    /* with proc */
	{ SNAP(alloc_proc), K_OTHER, NULL }, /* capacity */
	{ SNAP(note), K_OTHER, set_note },
	{ SNAP(nr_note), K_OTHER, NULL },    /* with note */
	{ SNAP(alloc_note), K_OTHER, NULL }, /* capacity */
};

/* --- comparing one member ------------------------------------------------------------ */

static const void *
at(const void *o, size_t off)
{
	return (const char *)o + off;
}

static bool
engines_same(const struct engine_use *a, unsigned na, const struct engine_use *b, unsigned nb)
{
	if (na != nb)
		return false;
	for (unsigned i = 0; i < na; i++)
		if (strcmp(a[i].name, b[i].name) || memcmp(&a[i].percent, &b[i].percent, 8))
			return false;
	return true;
}

/* Whether member m of got is what it is in want. */
static bool
mem_same(const struct mem *m, const void *got, const void *want, bool proc)
{
	const void *g = at(got, m->off), *w = at(want, m->off);

	switch (m->kind) {
	case K_INT:
		return !memcmp(g, w, m->size);
	case K_STR:
		return !strncmp(g, w, m->size);
	case K_OSTR:
	case K_RUNTIME: {
		const char *x = *(char *const *)g, *y = *(char *const *)w;

		return x && y ? !strcmp(x, y) : x == y;
	}
	case K_ENGINES:
		if (proc)
			return engines_same(((const struct gpu_proc *)got)->engine,
			                    ((const struct gpu_proc *)got)->nr_engine,
			                    ((const struct gpu_proc *)want)->engine,
			                    ((const struct gpu_proc *)want)->nr_engine);
		return engines_same(g, ((const struct gpu_device *)got)->nr_engine, w,
		                    ((const struct gpu_device *)want)->nr_engine);
	case K_LEVELS: {
		const struct clock_levels *x = g, *y = w;

		return x->nr == y->nr && x->current == y->current &&
		       !memcmp(x->mhz, y->mhz, x->nr * sizeof(x->mhz[0]));
	}
	case K_XID: {
		const struct gpu_device *x = got, *y = want;

		return x->nr_xid == y->nr_xid &&
		       !memcmp(x->xid, y->xid, x->nr_xid * sizeof(x->xid[0]));
	}
	case K_NVLINK: {
		const struct gpu_device *x = got, *y = want;

		return x->nr_nvlink == y->nr_nvlink &&
		       !memcmp(x->nvlink, y->nvlink, x->nr_nvlink * sizeof(x->nvlink[0]));
	}
	case K_FIELDS:
	case K_OTHER:
		break;
	}
	return true;
}

/* --- the walk ---------------------------------------------------------------------- */

/*
 * One case of the walk: member mem (or numeric field field of a device,
 * pfield of a process) set to its other value in want.
 */
struct step {
	char what[96];
	struct gpu_snapshot want;
};

static struct step *steps;
static size_t nr_steps, alloc_steps;

/* The base: two devices and two processes, every member at its first value, every field valid. */
static void
make_base(struct gpu_snapshot *s)
{
	gpu_snapshot_release(s);
	set_time(s, 0);
	set_hostname(s, 0);
	set_simulated(s, 0);
	set_nvidia(s, 0);
	set_note(s, 0);
	for (unsigned i = 0; i < 2; i++) {
		struct gpu_device *d = gpu_snapshot_add_dev(s);

		for (size_t k = 0; k < ARRAY_SIZE(dev_mem); k++)
			if (dev_mem[k].set)
				dev_mem[k].set(d, 0);
		d->index += i; /* two devices the writer tells apart */
		d->uuid[0] = (char)('A' + i);
		for (unsigned f = 0; f < GF__COUNT; f++)
			dev_set(d, (enum gpu_field)f, 1000.0 * (i + 1) + f + 0.5);
	}
	for (unsigned j = 0; j < 2; j++) {
		struct gpu_proc *p = gpu_snapshot_add_proc(s);

		for (size_t k = 0; k < ARRAY_SIZE(proc_mem); k++)
			if (proc_mem[k].set)
				proc_mem[k].set(p, 0);
		p->pid += j;
		p->dev = j;
		for (unsigned f = 0; f < PF__COUNT; f++)
			proc_set(p, (enum proc_field)f, 200.0 * (j + 1) + f + 0.25);
	}
}

/* A step named what, name and then, with a copy of the base. */
static struct gpu_snapshot *
add_step(const char *what, const char *name, const char *then)
{
	struct step *st;

	ALLOC_GROW(steps, nr_steps + 1, alloc_steps);
	st = &steps[nr_steps++];
	snprintf(st->what, sizeof(st->what), "%s%s%s", what, name, then);
	gpu_snapshot_init(&st->want);
	make_base(&st->want);
	/* each step a little later, as samples are */
	st->want.time += (double)nr_steps;
	return &st->want;
}

/* The steps: the base, then one member or field changed at a time, on device 1 and process 1. */
static void
make_steps(void)
{
	char name[64];

	add_step("the base sample", "", "");
	for (size_t k = 0; k < ARRAY_SIZE(snap_mem); k++)
		if (snap_mem[k].set && strcmp(snap_mem[k].name, "time"))
			snap_mem[k].set(add_step("snapshot member ", snap_mem[k].name, ""), 1);
	for (size_t k = 0; k < ARRAY_SIZE(dev_mem); k++)
		if (dev_mem[k].set)
			dev_mem[k].set(&add_step("device member ", dev_mem[k].name, "")->dev[1], 1);
	for (unsigned f = 0; f < GF__COUNT; f++) {
		struct gpu_snapshot *s = add_step("device field ", field_info(f)->key, "");

		dev_set(&s->dev[1], (enum gpu_field)f, -12345.678 - f);
		s = add_step("device field ", field_info(f)->key, " unknown");
		dev_unset(&s->dev[1], (enum gpu_field)f);
	}
	for (size_t k = 0; k < ARRAY_SIZE(proc_mem); k++) {
		if (!proc_mem[k].set)
			continue;
		proc_mem[k].set(&add_step("process member ", proc_mem[k].name, "")->proc[1], 1);
		if (proc_mem[k].kind == K_OSTR)
			proc_mem[k].set(
			        &add_step("process member ", proc_mem[k].name, " NULL")->proc[1],
			        2);
	}
	for (unsigned f = 0; f < PF__COUNT; f++) {
		struct gpu_snapshot *s;

		snprintf(name, sizeof(name), "%u", f);
		s = add_step("process field ", name, "");
		proc_set(&s->proc[1], (enum proc_field)f, 77.125 + f);
		s = add_step("process field ", name, " unknown");
		s->proc[1].valid &= ~(1u << f);
		s->proc[1].v[f] = 0;
	}
	/* the last: everything at its other value at once */
	{
		struct gpu_snapshot *s = add_step("every member at its other value", "", "");

		set_hostname(s, 1);
		set_simulated(s, 1);
		set_nvidia(s, 1);
		set_note(s, 1);
		for (size_t k = 0; k < ARRAY_SIZE(dev_mem); k++)
			if (dev_mem[k].set)
				dev_mem[k].set(&s->dev[1], 1);
		for (size_t k = 0; k < ARRAY_SIZE(proc_mem); k++)
			if (proc_mem[k].set)
				proc_mem[k].set(&s->proc[1], 1);
	}
}

/* The first thing got lacks of want, named, into why; false when there is none. */
static bool
first_loss(const struct gpu_snapshot *got, const struct gpu_snapshot *want, char *why, size_t size)
{
	if (got->nr_dev != want->nr_dev || got->nr_proc != want->nr_proc)
		return snprintf(why, size, "%zu GPUs and %zu processes, wanted %zu and %zu",
		                got->nr_dev, got->nr_proc, want->nr_dev, want->nr_proc) > 0;
	if (memcmp(&got->time, &want->time, sizeof(got->time)))
		return snprintf(why, size, "snapshot member time") > 0;
	if (memcmp(&got->nvidia, &want->nvidia, sizeof(got->nvidia)) &&
	    (strcmp(got->nvidia.driver_version, want->nvidia.driver_version) ||
	     strcmp(got->nvidia.nvml_version, want->nvidia.nvml_version) ||
	     strcmp(got->nvidia.library, want->nvidia.library) ||
	     got->nvidia.cuda_version != want->nvidia.cuda_version))
		return snprintf(why, size, "snapshot member nvidia") > 0;
	if (got->nr_note != want->nr_note)
		return snprintf(why, size, "snapshot member note (%zu notes, wanted %zu)",
		                got->nr_note, want->nr_note) > 0;
	for (size_t i = 0; i < got->nr_note; i++)
		if (strcmp(got->note[i], want->note[i]))
			return snprintf(why, size, "snapshot member note[%zu]", i) > 0;
	for (size_t k = 0; k < ARRAY_SIZE(snap_mem); k++)
		if (!mem_same(&snap_mem[k], got, want, false))
			return snprintf(why, size, "snapshot member %s", snap_mem[k].name) > 0;
	for (size_t i = 0; i < got->nr_dev; i++) {
		for (size_t k = 0; k < ARRAY_SIZE(dev_mem); k++)
			if (!mem_same(&dev_mem[k], &got->dev[i], &want->dev[i], false))
				return snprintf(why, size, "device %zu member %s", i,
				                dev_mem[k].name) > 0;
		for (unsigned f = 0; f < GF__COUNT; f++) {
			const struct gpu_device *g = &got->dev[i], *w = &want->dev[i];

			if (dev_has(g, f) != dev_has(w, f) ||
			    (dev_has(w, f) && memcmp(&g->v[f], &w->v[f], sizeof(double))))
				return snprintf(why, size,
				                "device %zu field %s (known %d, wanted %d)", i,
				                field_info(f)->key, dev_has(g, f),
				                dev_has(w, f)) > 0;
		}
	}
	for (size_t i = 0; i < got->nr_proc; i++) {
		const struct gpu_proc *g = &got->proc[i], *w = &want->proc[i];

		for (size_t k = 0; k < ARRAY_SIZE(proc_mem); k++)
			if (!mem_same(&proc_mem[k], g, w, true))
				return snprintf(why, size, "process %zu member %s", i,
				                proc_mem[k].name) > 0;
		for (unsigned f = 0; f < PF__COUNT; f++)
			if (proc_has(g, f) != proc_has(w, f) ||
			    (proc_has(w, f) && memcmp(&g->v[f], &w->v[f], sizeof(double))))
				return snprintf(why, size, "process %zu field %u", i, f) > 0;
	}
	return false;
}

/*
 * Write the steps with a keyframe every keyframe_every records, read them
 * back, and check each: what did not come back is named, once per step.
 */
static void
walk(const char *label, unsigned keyframe_every)
{
	char path[512], why[256];
	struct rec_options o;
	struct rec_writer *w;
	struct rec_reader *r = NULL;
	struct gpu_snapshot got;
	struct err err = ERR_INIT;
	size_t n = 0, lost = 0, unequal = 0;
	int rc;

	rec_options_init(&o);
	o.keyframe_every = keyframe_every;
	o.sync_every = 3600;
	fmt(path, sizeof(path), "%s/walk-%s.rec", tmp_dir, label);
	rc = rec_writer_open(path, &o, &w, &err);
	for (size_t i = 0; i < nr_steps && rc == 0; i++)
		rc = rec_writer_append(w, &steps[i].want, &err);
	if (rc == 0)
		rc = rec_writer_close(w, &err);
	ok(rc == 0, "%s: %zu samples recorded: %s", label, nr_steps, err.msg);
	gpu_snapshot_init(&got);
	if (rc == 0)
		rc = rec_reader_open(path, &r, &err);
	while (rc == 0 && (rc = rec_reader_next(r, &got, &err)) > 0) {
		rc = 0;
		if (n >= nr_steps) {
			n++;
			continue;
		}
		if (first_loss(&got, &steps[n].want, why, sizeof(why))) {
			if (lost++ < 40)
				diag("%s: %s: not round-tripped: %s", label, steps[n].what, why);
		} else if (!rec_snapshot_equal(&got, &steps[n].want, why, sizeof(why))) {
			if (unequal++ < 10)
				diag("%s: %s: came back, but rec_snapshot_equal() says: %s", label,
				     steps[n].what, why);
		}
		n++;
	}
	ok(rc == 0 && n == nr_steps, "%s: %zu samples read back, wanted %zu: %s", label, n,
	   nr_steps, err.msg);
	ok(lost == 0, "%s: every member and field came back (%zu samples lost something)", label,
	   lost);
	ok(unequal == 0, "%s: and rec_snapshot_equal() agrees (%zu samples)", label, unequal);
	if (r)
		rec_reader_close(r);
	gpu_snapshot_release(&got);
}

/* rec_snapshot_equal() sees each change of the walk, naming it. */
static void
test_compare(void)
{
	size_t missed = 0;
	char why[256];

	for (size_t i = 1; i < nr_steps; i++) {
		struct gpu_snapshot base;

		gpu_snapshot_init(&base);
		make_base(&base);
		base.time = steps[i].want.time;
		if (rec_snapshot_equal(&base, &steps[i].want, why, sizeof(why)) && missed++ < 20)
			diag("compare: %s: not seen by rec_snapshot_equal()", steps[i].what);
		gpu_snapshot_release(&base);
	}
	ok(missed == 0, "compare: rec_snapshot_equal() sees every one of %zu changes (%zu missed)",
	   nr_steps - 1, missed);
}

/*
 * The lists above cover every byte of each struct but padding: a member
 * added to the model without being added here (and to the recorder) fails.
 */
static void
covers(const char *what, const struct mem *m, size_t nr, size_t size)
{
	unsigned char *seen = calloc(1, size);
	size_t gap = 0, bad = 0;

	for (size_t k = 0; k < nr; k++)
		memset(seen + m[k].off, 1, m[k].size);
	for (size_t off = 0; off <= size; off++) {
		if (off < size && !seen[off]) {
			gap++;
			continue;
		}
		if (gap >= 8) { /* more than any alignment pads */
			diag("%s: bytes %zu to %zu are in no member this test knows", what,
			     off - gap, off - 1);
			bad++;
		}
		gap = 0;
	}
	ok(!bad, "%s: the members listed cover all its %zu bytes but padding", what, size);
	free(seen);
}

int
main(void)
{
	if (!getenv("TMPDIR") && access("/dev/shm", W_OK) == 0)
		setenv("TMPDIR", "/dev/shm", 1);
	make_tmp_dir("t_record_fields");
	covers("struct gpu_device", dev_mem, ARRAY_SIZE(dev_mem), sizeof(struct gpu_device));
	covers("struct gpu_proc", proc_mem, ARRAY_SIZE(proc_mem), sizeof(struct gpu_proc));
	covers("struct gpu_snapshot", snap_mem, ARRAY_SIZE(snap_mem), sizeof(struct gpu_snapshot));
	make_steps();
	diag("%zu samples: %d device fields, %d process fields, %zu device, %zu process and %zu "
	     "snapshot members",
	     nr_steps, GF__COUNT, PF__COUNT, ARRAY_SIZE(dev_mem), ARRAY_SIZE(proc_mem),
	     ARRAY_SIZE(snap_mem));
	walk("keyframes", 1);
	walk("deltas", 100000);
	test_compare();
	for (size_t i = 0; i < nr_steps; i++)
		gpu_snapshot_release(&steps[i].want);
	free(steps);
	rm_tree(tmp_dir);
	return done_testing();
}
