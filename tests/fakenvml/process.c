/*
 * Processes of the fake NVML: the three running-process lists in their
 * three struct layouts, per-process utilisation samples, and process names,
 * from the [process PID] sections of the scenario and, in the compute list,
 * the live processes of live_dir (live.c).
 */
#include "fake.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nvml_api.h"

/* what one entry of a running-process list looks like to the caller */
enum layout {
	LAYOUT_V1, /* plain names: nvmlProcessInfo_v1_t, 16 bytes */
	LAYOUT_V2, /* _v2 and _v3: nvmlProcessInfo_v2_t, 24 bytes */
	LAYOUT_CC, /* _v3 of the R530/R535 window: nvmlProcessInfoCc_t, 32 bytes */
};

static bool
active(const struct proc *p, double t)
{
	return p->start <= t && t < p->end;
}

static unsigned long long
used_memory(const struct call *c, const struct proc *p)
{
	double v;

	/* absent, N/A or an error: what WDDM and missing permissions give */
	if (expr_eval(p->used_memory, c->t, &v) != NVML_SUCCESS)
		return NVML_VALUE_NOT_AVAILABLE_ULL;
	return to_ull(v);
}

static void
put_entry(const struct call *c, const struct proc *p, void *infos, unsigned int i,
          enum layout layout)
{
	switch (layout) {
	case LAYOUT_V1: {
		nvmlProcessInfo_v1_t *e = (nvmlProcessInfo_v1_t *)infos + i;

		memset(e, 0, sizeof(*e));
		e->pid = p->pid;
		e->usedGpuMemory = used_memory(c, p);
		break;
	}
	case LAYOUT_V2: {
		nvmlProcessInfo_v2_t *e = (nvmlProcessInfo_v2_t *)infos + i;

		memset(e, 0, sizeof(*e));
		e->pid = p->pid;
		e->usedGpuMemory = used_memory(c, p);
		e->gpuInstanceId = p->gpu_instance;
		e->computeInstanceId = p->compute_instance;
		break;
	}
	case LAYOUT_CC: {
		nvmlProcessInfoCc_t *e = (nvmlProcessInfoCc_t *)infos + i;

		memset(e, 0, sizeof(*e));
		e->pid = p->pid;
		e->usedGpuMemory = used_memory(c, p);
		e->gpuInstanceId = p->gpu_instance;
		e->computeInstanceId = p->compute_instance;
		break;
	}
	}
}

/* a process of live_dir, in the same layouts; MIG instances are not in those files */
static void
put_live(const struct live_entry *e, void *infos, unsigned int i, enum layout layout)
{
	switch (layout) {
	case LAYOUT_V1: {
		nvmlProcessInfo_v1_t *p = (nvmlProcessInfo_v1_t *)infos + i;

		memset(p, 0, sizeof(*p));
		p->pid = e->pid;
		p->usedGpuMemory = e->bytes;
		break;
	}
	case LAYOUT_V2: {
		nvmlProcessInfo_v2_t *p = (nvmlProcessInfo_v2_t *)infos + i;

		memset(p, 0, sizeof(*p));
		p->pid = e->pid;
		p->usedGpuMemory = e->bytes;
		p->gpuInstanceId = NVML_INSTANCE_ID_NONE;
		p->computeInstanceId = NVML_INSTANCE_ID_NONE;
		break;
	}
	case LAYOUT_CC: {
		nvmlProcessInfoCc_t *p = (nvmlProcessInfoCc_t *)infos + i;

		memset(p, 0, sizeof(*p));
		p->pid = e->pid;
		p->usedGpuMemory = e->bytes;
		p->gpuInstanceId = NVML_INSTANCE_ID_NONE;
		p->computeInstanceId = NVML_INSTANCE_ID_NONE;
		break;
	}
	}
}

/*
 * Whether p runs on the device of the call: its GPU, or on a MIG handle the
 * MIG device of its instance ids (mig.c).
 */
static bool
proc_here(const struct call *c, const struct proc *p)
{
	if (p->gpu != c->gpu->index)
		return false;
	return !c->gpu->parent || (p->gpu_instance == c->gpu->gpu_instance &&
	                           p->compute_instance == c->gpu->compute_instance);
}

/* live processes are not on MIG devices */
static bool
live_here(const struct call *c, const struct live_entry *e)
{
	return e->gpu == c->gpu->index && e->running && !c->gpu->parent;
}

/*
 * The two-call pattern of NVML: *infoCount too small gives INSUFFICIENT_SIZE
 * and the count needed; no process gives SUCCESS and 0. The compute list
 * shows the running processes of live_dir after those of the scenario.
 */
static nvmlReturn_t
running(const struct call *c, unsigned int types, unsigned int *infoCount, void *infos,
        enum layout layout)
{
	struct live_list live = { 0 };
	unsigned int n = 0, i = 0;
	nvmlReturn_t rc = NVML_SUCCESS;

	if (!infoCount)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (types & PT_COMPUTE)
		live_read(c->sc, &live);
	for (const struct proc *p = c->sc->procs; p; p = p->next)
		if (proc_here(c, p) && (p->types & types) && active(p, c->t))
			n++;
	for (size_t k = 0; k < live.n; k++)
		n += live_here(c, &live.v[k]);
	if (*infoCount < n) {
		/* processes that start between a caller's two calls */
		*infoCount = !infos && c->sc->count_hint && c->sc->count_hint < n
		                     ? c->sc->count_hint
		                     : n;
		rc = NVML_ERROR_INSUFFICIENT_SIZE;
		goto out;
	}
	if (n > 0 && !infos) {
		rc = NVML_ERROR_INVALID_ARGUMENT;
		goto out;
	}
	for (const struct proc *p = c->sc->procs; p; p = p->next)
		if (proc_here(c, p) && (p->types & types) && active(p, c->t))
			put_entry(c, p, infos, i++, layout);
	for (size_t k = 0; k < live.n; k++)
		if (live_here(c, &live.v[k]))
			put_live(&live.v[k], infos, i++, layout);
	*infoCount = n;
out:
	live_free(&live);
	return rc;
}

/* MPS clients run compute work: the compute list shows them too */
#define COMPUTE_LIST (PT_COMPUTE | PT_MPS)

FAKE_API nvmlReturn_t
nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                     nvmlProcessInfo_v1_t *infos)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = running(&c, COMPUTE_LIST, infoCount, infos, LAYOUT_V1);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                      nvmlProcessInfo_v1_t *infos)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = running(&c, PT_GRAPHICS, infoCount, infos, LAYOUT_V1);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetMPSComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                        nvmlProcessInfo_v1_t *infos)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = running(&c, PT_MPS, infoCount, infos, LAYOUT_V1);
	return call_end(&c, rc);
}

#ifndef FAKE_LEGACY
/* process_v3_layout = cc: the 32-byte entries of the R530/R535 window */
static enum layout
v3_layout(const struct call *c)
{
	return c->sc->cc_layout ? LAYOUT_CC : LAYOUT_V2;
}

FAKE_API nvmlReturn_t
nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                        nvmlProcessInfo_v2_t *infos)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = running(&c, COMPUTE_LIST, infoCount, infos, LAYOUT_V2);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                         nvmlProcessInfo_v2_t *infos)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = running(&c, PT_GRAPHICS, infoCount, infos, LAYOUT_V2);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetMPSComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                           nvmlProcessInfo_v2_t *infos)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = running(&c, PT_MPS, infoCount, infos, LAYOUT_V2);
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                        nvmlProcessInfo_v2_t *infos)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = running(&c, COMPUTE_LIST, infoCount, infos, v3_layout(&c));
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                         nvmlProcessInfo_v2_t *infos)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = running(&c, PT_GRAPHICS, infoCount, infos, v3_layout(&c));
	return call_end(&c, rc);
}

FAKE_API nvmlReturn_t
nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                           nvmlProcessInfo_v2_t *infos)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);

	if (rc == NVML_SUCCESS)
		rc = running(&c, PT_MPS, infoCount, infos, v3_layout(&c));
	return call_end(&c, rc);
}
#endif

/* the four utilisations of p now; absent, N/A or an error count as 0 */
static bool
proc_sample(const struct call *c, const struct proc *p, unsigned int util[PU__COUNT])
{
	bool busy = false;

	for (int i = 0; i < PU__COUNT; i++) {
		double v;

		util[i] = expr_eval(p->util[i], c->t, &v) == NVML_SUCCESS ? to_uint(v) : 0;
		busy |= util[i] != 0;
	}
	return busy;
}

/*
 * One sample per active process of the GPU that is doing something, stamped
 * now, and only when now is after lastSeenTimeStamp. Values above 100 are
 * returned as written: real drivers do that.
 */
FAKE_API nvmlReturn_t
nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t *utilization,
                                unsigned int *processSamplesCount,
                                unsigned long long lastSeenTimeStamp)
{
	struct call c;
	nvmlReturn_t rc = call_device(&c, __func__, device);
	unsigned long long now_us = 0;
	unsigned int util[PU__COUNT], n = 0, i = 0;

	if (rc == NVML_SUCCESS && !processSamplesCount)
		rc = NVML_ERROR_INVALID_ARGUMENT;
	if (rc != NVML_SUCCESS)
		return call_end(&c, rc);
	now_us = call_wall_us(&c);
	for (const struct proc *p = c.sc->procs; p && now_us > lastSeenTimeStamp; p = p->next)
		if (proc_here(&c, p) && active(p, c.t) && proc_sample(&c, p, util))
			n++;
	if (n == 0) {
		rc = NVML_ERROR_NOT_FOUND;
	} else if (!utilization || *processSamplesCount < n) {
		*processSamplesCount = n;
		rc = NVML_ERROR_INSUFFICIENT_SIZE;
	} else {
		for (const struct proc *p = c.sc->procs; p; p = p->next) {
			nvmlProcessUtilizationSample_t *s = &utilization[i];

			if (!proc_here(&c, p) || !active(p, c.t) || !proc_sample(&c, p, util))
				continue;
			memset(s, 0, sizeof(*s));
			s->pid = p->pid;
			s->timeStamp = now_us;
			s->smUtil = util[PU_SM];
			s->memUtil = util[PU_MEM];
			s->encUtil = util[PU_ENC];
			s->decUtil = util[PU_DEC];
			i++;
		}
		*processSamplesCount = n;
	}
	return call_end(&c, rc);
}

/*
 * The command of a running process, as the driver gives it: argv[0] of
 * /proc/PID/cmdline (its comm for a kernel thread or a process that cleared it).
 */
static bool
proc_command(unsigned int pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, size - 1);
		close(fd);
	}
	if (n <= 0 || !buf[0]) {
		snprintf(path, sizeof(path), "/proc/%u/comm", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return false;
		n = read(fd, buf, size - 1);
		close(fd);
		if (n <= 0)
			return false;
		if (buf[n - 1] == '\n')
			n--;
	}
	buf[n] = '\0';
	return true;
}

/*
 * The name of any process of the scenario, whether it runs now or not, or of
 * a running process of live_dir. A PID neither knows gives NOT_FOUND, as a
 * PID with no /proc entry.
 */
FAKE_API nvmlReturn_t
nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length)
{
	struct call c;
	nvmlReturn_t rc = call_system(&c, __func__);
	const struct proc *p, *known = NULL;

	if (rc != NVML_SUCCESS)
		return call_end(&c, rc);
	for (p = c.sc->procs; p && !(p->pid == pid && p->name); p = p->next)
		if (p->pid == pid)
			known = p;
	if (p) {
		rc = put_string(p->name, name, length);
	} else if (!name) {
		rc = NVML_ERROR_INVALID_ARGUMENT;
	} else if (known) {
		rc = NVML_ERROR_NOT_SUPPORTED;
	} else {
		struct live_list live;
		char command[4096];

		live_read(c.sc, &live);
		if (live_find(&live, pid) && proc_command(pid, command, sizeof(command)))
			rc = put_string(command, name, length);
		else
			rc = NVML_ERROR_NOT_FOUND;
		live_free(&live);
	}
	return call_end(&c, rc);
}
