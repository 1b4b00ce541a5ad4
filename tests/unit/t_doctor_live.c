/*
 * Tests of the doctor for front ends (doctor/live.h): health and workload
 * findings over the samples kept, worst first, window_short left out; the
 * ring of copies (the oldest dropped, copies independent of the caller's
 * samples); runs at most once a second of sample time, and "changed" only
 * when the findings change; the GPU of a finding and its short title; the
 * JSON array, escaped.
 */
#include "doctor/live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fields.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "doctor_test.h"
#include "harness.h"

#define GIB (1024.0 * 1024 * 1024)
#define T0  1700000000.0

/* One sample at t: GPU 0 at util % (HW slowdown when slow), a process named name. */
static void
fill(struct gpu_snapshot *s, double t, double util, bool slow, const char *name)
{
	struct gpu_device *d;
	struct gpu_proc *p;

	gpu_snapshot_init(s);
	s->time = t;
	d = gpu_snapshot_add_dev(s);
	d->index = 0;
	d->vendor = VENDOR_NVIDIA;
	snprintf(d->name, sizeof(d->name), "NVIDIA H100 80GB HBM3");
	snprintf(d->uuid, sizeof(d->uuid), "GPU-live-0");
	snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "00000000:18:00.0");
	dev_set(d, GF_UTIL_GPU, util);
	dev_set(d, GF_POWER_DRAW, util > 50 ? 600 : 90);
	dev_set(d, GF_POWER_LIMIT, 700);
	dev_set(d, GF_CLOCK_SM, 1980);
	dev_set(d, GF_CLOCK_MAX_SM, 1980);
	dev_set(d, GF_MEM_USED, 40 * GIB);
	dev_set(d, GF_MEM_TOTAL, 80 * GIB);
	dev_set(d, GF_CLOCK_REASONS, slow ? CR_HW_SLOWDOWN : 0);
	p = gpu_snapshot_add_proc(s);
	p->dev = 0;
	p->pid = 1234;
	p->type = PROC_COMPUTE;
	p->host = PHOST_OK;
	p->user = xstrdup("alice");
	p->name = xstrdup(name);
	p->cmdline = xstrdup("python train.py");
	p->start_ticks = 42;
	proc_set(p, PF_GPU_MEM, 38 * GIB);
	proc_set(p, PF_SM_UTIL, util > 50 ? 98 : 0);
	proc_set(p, PF_START_TIME, T0 - 3600);
}

static void
test_dr_live(void)
{
	struct gpu_snapshot s[60];
	struct dr_report r = DR_REPORT_INIT;

	dr_live(NULL, 0, 1, false, &r);
	is_int(r.nr, 0, "no samples: no findings");

	for (size_t k = 0; k < 3; k++)
		fill(&s[k], T0 + (double)k, 99, false, "python");
	dr_live(s, 3, 1, false, &r);
	ok(!find_id(&r, "workload.window_short"), "three samples: window_short left out");
	ok(find_id(&r, "health.ok"), "... the health is judged");
	is_int(dr_live_count(&r), 0, "... nothing worse than ok");
	dr_report_release(&r);
	for (size_t k = 0; k < 3; k++)
		gpu_snapshot_release(&s[k]);

	/* a starved GPU (period 10 s, busy 4) slowed by hardware in its busy phases */
	for (size_t k = 0; k < 60; k++)
		fill(&s[k], T0 + (double)k, k % 10 < 4 ? 99 : 2, k % 10 < 4, "python");
	dr_live(s, 60, 1, false, &r);
	ok(find_id(&r, "workload.starved"), "a minute: workload.starved");
	ok(find_id(&r, "health.throttle.hw_slowdown"), "... and health.throttle.hw_slowdown");
	for (size_t i = 1; i < r.nr; i++)
		if (r.f[i].severity > r.f[i - 1].severity) {
			ok(0, "worst first: %s after %s", r.f[i].id, r.f[i - 1].id);
			break;
		}
	ok(r.nr && r.f[r.nr - 1].severity <= r.f[0].severity, "worst first");
	is_int(dr_live_gpu(find_id(&r, "health.throttle.hw_slowdown")), 0,
	       "the GPU of a health finding");
	is_int(dr_live_gpu(find_id(&r, "workload.starved")), 0, "the GPU of a workload finding");
	is_str(dr_live_short_title(find_id(&r, "health.throttle.hw_slowdown")),
	       "hardware slowdown (clocks cut by half or more) under load",
	       "the short title drops the GPU's label");
	dr_report_release(&r);
	for (size_t k = 0; k < 60; k++)
		gpu_snapshot_release(&s[k]);
}

static void
test_ring(void)
{
	struct dr_live *l = xcalloc(1, sizeof(*l));
	struct gpu_snapshot s;

	dr_live_init(l, 1, false);
	ok(!dr_live_update(l), "nothing kept: no run");
	for (size_t k = 0; k < DR_LIVE_SAMPLES + 15; k++) {
		fill(&s, T0 + (double)k, 99, false, "python");
		dr_live_push(l, &s);
		gpu_snapshot_release(&s); /* the ring keeps its own copy */
	}
	is_int(l->nr, DR_LIVE_SAMPLES, "the ring holds DR_LIVE_SAMPLES");
	is_dbl(l->ring[l->head].time, T0 + 15, 1e-9, "... the oldest dropped");
	is_str(l->ring[l->head].proc[0].name, "python", "... processes copied");
	ok(dr_live_update(l), "first update runs");
	ok(l->changed, "... and is a change");
	ok(find_id(&l->report, "workload.ok"), "... steady work: workload.ok");
	ok(!dr_live_update(l), "no new sample: no second run");

	fill(&s, T0 + DR_LIVE_SAMPLES + 14.5, 99, false, "python");
	dr_live_push(l, &s);
	gpu_snapshot_release(&s);
	ok(!dr_live_update(l), "half a second later: no run");
	fill(&s, T0 + DR_LIVE_SAMPLES + 15, 99, false, "python");
	dr_live_push(l, &s);
	gpu_snapshot_release(&s);
	ok(dr_live_update(l), "a second later: a run");
	ok(!l->changed, "... with the same findings: no change");

	for (size_t k = 0; k < 10; k++) {
		fill(&s, T0 + DR_LIVE_SAMPLES + 16 + (double)k, 99, true, "python");
		dr_live_push(l, &s);
		gpu_snapshot_release(&s);
	}
	ok(dr_live_update(l) && l->changed, "hardware slowdown: a change");
	ok(find_id(&l->report, "health.throttle.hw_slowdown"), "... found");
	dr_live_release(l);
	free(l);
}

static char title[160];

static void
set_title(struct dr_finding *f, const char *s)
{
	str_copy(title, sizeof(title), s);
	f->title = title;
}

/* Many processes with long command lines: fewer samples kept, never under DR_LIVE_MIN. */
static void
test_budget(void)
{
	struct dr_live *l = xcalloc(1, sizeof(*l));
	char cmd[1024];
	struct gpu_snapshot s;

	memset(cmd, 'x', sizeof(cmd) - 1);
	cmd[sizeof(cmd) - 1] = '\0';
	dr_live_init(l, 1, false);
	for (size_t k = 0; k < 12; k++) {
		fill(&s, T0 + (double)k, 99, false, "python");
		for (unsigned i = 0; i < 300; i++) {
			struct gpu_proc *p = gpu_snapshot_add_proc(&s);

			p->pid = 2000 + i;
			p->name = xstrdup("worker");
			cmd[0] = (char)('a' +
			                k); /* a new command line each sample: nothing shared */
			p->cmdline = xstrdup(cmd);
			p->cgroup = xstrdup("/kubepods/burstable/pod1234/abcdef");
		}
		dr_live_push(l, &s);
		gpu_snapshot_release(&s);
	}
	is_int(l->nr, DR_LIVE_MIN,
	       "300 processes of 1 KiB command lines: DR_LIVE_MIN samples kept");
	ok(l->ring[(l->head + l->nr - 1) % DR_LIVE_SAMPLES].proc[1].cgroup == NULL,
	   "... without their cgroup paths");
	{
		const struct gpu_proc *a =
		        &l->ring[(l->head + l->nr - 1) % DR_LIVE_SAMPLES].proc[1];
		const struct gpu_proc *b =
		        &l->ring[(l->head + l->nr - 2) % DR_LIVE_SAMPLES].proc[1];

		ok(a->name == b->name && a->cmdline != b->cmdline,
		   "the same name is shared between samples, a new command line is not");
	}
	for (size_t k = 12; k < 80; k++) {
		fill(&s, T0 + (double)k, 99, false, "python");
		dr_live_push(l, &s);
		gpu_snapshot_release(&s);
	}
	is_int(l->nr, DR_LIVE_SAMPLES, "small samples again: the ring fills up");
	dr_live_release(l);

	/* the same 300 processes every sample: their texts are held once, more samples fit */
	dr_live_init(l, 1, false);
	for (size_t k = 0; k < 12; k++) {
		fill(&s, T0 + (double)k, 99, false, "python");
		for (unsigned i = 0; i < 300; i++) {
			struct gpu_proc *p = gpu_snapshot_add_proc(&s);

			p->pid = 2000 + i;
			p->name = xstrdup("worker");
			p->cmdline = xstrdup(cmd);
		}
		dr_live_push(l, &s);
		gpu_snapshot_release(&s);
	}
	ok(l->nr > DR_LIVE_MIN, "unchanged processes: their strings shared, %zu samples kept",
	   l->nr);
	ok(l->total < DR_LIVE_BYTES, "... within the budget (%zu bytes)", l->total);
	dr_live_release(l);
	free(l);
}

static void
test_gpu_and_title(void)
{
	struct dr_finding f;

	memset(&f, 0, sizeof(f));
	set_title(&f, "GPU 12 (NVIDIA A100 (PCIe), 0000:01:00.0): too hot");
	is_int(dr_live_gpu(&f), 12, "GPU 12 at the start");
	is_str(dr_live_short_title(&f), "too hot", "nested brackets skipped");
	set_title(&f, "Possible cryptominer on GPU 3: pid 1");
	is_int(dr_live_gpu(&f), 3, "... on GPU 3");
	is_str(dr_live_short_title(&f), f.title, "a title without the label stays whole");
	set_title(&f, "GPUs 0, 1 held at the power limit");
	is_int(dr_live_gpu(&f), -1, "several GPUs: -1");
	set_title(&f, "GPU 0, 1 held");
	is_int(dr_live_gpu(&f), -1, "'GPU 0, 1': -1");
	set_title(&f, "GPU (broken: no index");
	is_int(dr_live_gpu(&f), -1, "no index: -1");
	is_str(dr_live_short_title(&f), f.title, "... title whole");
	set_title(&f, "GPU 0 (unclosed: x");
	is_str(dr_live_short_title(&f), f.title, "an unclosed bracket: title whole");
}

static void
test_json(void)
{
	struct dr_report r = DR_REPORT_INIT;
	struct strbuf sb = STRBUF_INIT;
	struct dr_finding *f;

	dr_live_json(&sb, &r);
	is_str(sb.buf, "[]", "no findings: []");
	strbuf_reset(&sb);
	dr_add(&r, "health.ok", DR_OK, "fine");
	f = dr_add(&r, "workload.suspect_process", DR_WARNING,
	           "Possible cryptominer on GPU 0: pid 7 (<script>\"x\")");
	dr_evidence(f, "name: <b>");
	dr_live_json(&sb, &r);
	ok(!strstr(sb.buf, "health.ok"), "ok findings left out");
	ok(strstr(sb.buf, "\"id\":\"workload.suspect_process\",\"severity\":\"warning\",") &&
	           strstr(sb.buf, ",\"gpu\":0}"),
	   "id, severity, gpu");
	ok(strstr(sb.buf, "(<script>\\\"x\\\")"), "quotes escaped (HTML is the page's to escape)");
	ok(strstr(sb.buf,
	          "\"evidence\":[\"name: <b>\"],\"meaning\":null,\"action\":null,\"gpu\":0}]"),
	   "evidence array, null meaning and action");
	strbuf_release(&sb);
	dr_report_release(&r);
}

int
main(void)
{
	test_dr_live();
	test_ring();
	test_budget();
	test_gpu_and_title();
	test_json();
	return done_testing();
}
