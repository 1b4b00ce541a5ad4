/*
 * log.amdgpu.*, log.intel.*: the kernel log's errors of the in-tree GPU
 * drivers (amdgpu, i915, xe), decoded one line at a time into events (a
 * storm of repeats is one event with a count and its first and last line),
 * then turned into findings that point a secondary error at its cause (a
 * GPU reset after a ring timeout). PCIe AER is in klog_aer.c.
 *
 * Keys are "field|field|...", the device's bus id first ("?" when the line
 * names none), so that the report can read them back.
 */
#include "doctor/doctor.h"
#include "doctor/klog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "core/xalloc.h"
#include "doctor/klog_dec.h"

/* --- the kinds of events (their addresses tell them apart) ---------------------------- */

static const char k_amd_ring[] = "amdgpu ring timeout";           /* bdf|ring */
static const char k_amd_ring_ok[] = "amdgpu ring reset ok";       /* bdf|ring */
static const char k_amd_ring_fail[] = "amdgpu ring reset failed"; /* bdf|ring */
static const char k_amd_reset[] = "amdgpu GPU reset";             /* bdf */
static const char k_amd_reset_ok[] = "amdgpu GPU reset ok";       /* bdf */
static const char k_amd_reset_fail[] = "amdgpu GPU reset failed"; /* bdf */
static const char k_amd_vram_lost[] = "amdgpu VRAM lost";         /* bdf */
static const char k_amd_fault[] = "amdgpu page fault";            /* bdf|hub|pasid */
static const char k_amd_fw[] = "amdgpu firmware";                 /* bdf|file */
static const char k_amd_init_fail[] = "amdgpu init failed";       /* bdf */
static const char k_amd_temp[] = "amdgpu over temperature";       /* bdf|sensor */

static const char k_int_hang[] = "intel GPU hang";                /* bdf|drv|process */
static const char k_int_hb[] = "intel reset";                     /* bdf|drv|what|reason */
static const char k_int_guc[] = "intel GuC";                      /* bdf|drv|init or runtime */
static const char k_int_wedged[] = "intel wedged";                /* bdf|drv */
static const char k_int_eng[] = "intel engine reset";             /* bdf|drv|GT|class */
static const char k_int_eng_fail[] = "intel engine reset failed"; /* bdf|drv */
static const char k_int_timedout[] = "intel timed-out job";       /* bdf|drv|process */

/* A ring timeout or fault and the line naming its process: at most this many lines apart. */
#define PROCESS_LINES 4

/* --- reading a line ------------------------------------------------------------------ */

/* The event of kind on device bdf whose last line is the latest; NULL when none. */
static struct klog_event *
latest(const struct klog_events *ev, const void *kind, const char *bdf)
{
	struct klog_event *best = NULL;
	char dev[32];

	for (size_t i = 0; i < ev->nr; i++) {
		struct klog_event *e = &ev->v[i];

		if (e->kind != kind || !klog_same_dev(klog_field(e->key, 0, dev, sizeof(dev)), bdf))
			continue;
		if (!best || e->last.lineno > best->last.lineno)
			best = e;
	}
	return best;
}

/* "process NAME pid N" at p: "NAME (pid N)" into out; false when it is not there. */
static bool
process_at(const char *p, const char *end, char *out, size_t size)
{
	const char *pid = NULL;
	char name[64], num[16];

	for (const char *q = p; q + 5 <= end; q++)
		if (!memcmp(q, " pid ", 5)) {
			pid = q;
			break;
		}
	if (!pid)
		return false;
	klog_take(name, sizeof(name), p, pid, "");
	klog_take(num, sizeof(num), pid + 5, end, " )");
	snprintf(out, size, "%s (pid %s)", name[0] ? name : "(no name)", num);
	return true;
}

/* --- amdgpu ----------------------------------------------------------------------------- */

/* Where a line names the process of the timeout or fault before it. */
static const char *const proc_marks[] = { "Process information: process ", " Process ",
	                                  " for process ", " in process " };

static bool
amd_line(const struct klog_line *l, const struct klog_pfx *p, struct klog_events *ev)
{
	const char *bdf = p->bdf[0] ? p->bdf : "?", *s, *end = p->end;
	char a[96], b[64];
	struct klog_event *e;

	/* one search for the lines of no amdgpu at all (most of a log), then the exact forms */
	if (strcmp(p->drv, "amdgpu") &&
	    (!klog_find(l, "amdgpu") || (!klog_find(l, "[drm:amdgpu_") &&
	                                 !klog_find(l, "amdgpu: ") && !klog_find(l, "[amdgpu]"))))
		return false;

	/* "ring gfx_0.0.0 timeout, signaled seq=9910, emitted seq=9912" */
	if ((s = klog_find(l, "ring ")) && klog_find(l, " timeout")) {
		klog_take(a, sizeof(a), s + 5, end, " ,");
		s += 5 + strlen(a);
		if (a[0] && end - s >= 8 && !memcmp(s, " timeout", 8)) {
			e = klog_event_add(ev, k_amd_ring, l, "%s|%s", bdf, a);
			if (e->count == 1 && (s = klog_find(l, "signaled seq="))) {
				klog_take(b, sizeof(b), s, end, "");
				klog_add_detail(e, "", b);
			}
			return true;
		}
	}
	/* "[gfxhub0] no-retry page fault (src_id:0 ring:24 vmid:8 pasid:32768, for process ...)" */
	if ((s = klog_find(l, "page fault (")) || (s = klog_find(l, "VM fault")) ||
	    (s = klog_find(l, "GPU fault detected:"))) {
		const char *hub = klog_find(l, "hub"), *pasid = klog_find(l, "pasid:");

		a[0] = '\0';
		if (hub) {
			const char *o = hub;

			while (o > l->msg && o[-1] != '[')
				o--;
			klog_take(a, sizeof(a), o, end, "]");
		}
		b[0] = '\0';
		if (pasid)
			klog_take(b, sizeof(b), pasid + 6, end, ",) ");
		e = klog_event_add(ev, k_amd_fault, l, "%s|%s|%s", bdf, a[0] ? a : "gmc", b);
		if (e->count == 1 && (s = klog_find(l, "for process ")) &&
		    process_at(s + 12, end, a, sizeof(a)))
			klog_add_detail(e, "process ", a);
		return true;
	}
	/* the process of the timeout or fault just before */
	for (size_t i = 0; i < ARRAY_SIZE(proc_marks); i++) {
		struct klog_event *r, *f, *t;

		if (!(s = klog_find(l, proc_marks[i])))
			continue;
		s += strlen(proc_marks[i]);
		r = latest(ev, k_amd_ring, bdf);
		f = latest(ev, k_amd_fault, bdf);
		t = r && (!f || r->last.lineno > f->last.lineno) ? r : f;
		if (t && l->lineno - t->last.lineno <= PROCESS_LINES &&
		    process_at(s, end, a, sizeof(a))) {
			if (!t->detail || !strstr(t->detail, "process "))
				klog_add_detail(t, "process ", a);
			return true;
		}
		break;
	}
	if (klog_find(l, "GPU reset begin!")) {
		klog_event_add(ev, k_amd_reset, l, "%s", bdf);
		return true;
	}
	if (klog_find(l, "GPU reset") && klog_find(l, "succeeded")) {
		klog_event_add(ev, k_amd_reset_ok, l, "%s", bdf);
		return true;
	}
	if (klog_find(l, "GPU Recovery Failed") ||
	    (klog_find(l, "GPU reset") && klog_find(l, "failed")) ||
	    ((s = klog_find(l, "GPU reset end with ret = ")) && s + 25 < end && s[25] != '0')) {
		klog_event_add(ev, k_amd_reset_fail, l, "%s", bdf);
		return true;
	}
	if (klog_find(l, "VRAM is lost")) {
		klog_event_add(ev, k_amd_vram_lost, l, "%s", bdf);
		return true;
	}
	/* "Ring gfx_0.0.0 reset succeeded" / "Ring gfx_0.0.0 reset failed" */
	if ((s = klog_find(l, "Ring ")) && klog_find(l, " reset ")) {
		klog_take(a, sizeof(a), s + 5, end, " ");
		if (klog_find(l, "reset succeeded"))
			klog_event_add(ev, k_amd_ring_ok, l, "%s|%s", bdf, a);
		else if (klog_find(l, "reset failed"))
			klog_event_add(ev, k_amd_ring_fail, l, "%s|%s", bdf, a);
		else
			return false;
		return true;
	}
	/* "Direct firmware load for amdgpu/polaris12_mc.bin failed with error -2" */
	if ((s = klog_find(l, "Direct firmware load for "))) {
		klog_take(a, sizeof(a), s + 25, end, " ");
		e = klog_event_add(ev, k_amd_fw, l, "%s|%s", bdf, a);
		if (e->count == 1 && (s = klog_find(l, "with error "))) {
			klog_take(b, sizeof(b), s + 11, end, " ");
			klog_add_detail(e, "", b);
		}
		return true;
	}
	if (klog_find(l, "Fatal error during GPU init") ||
	    klog_find(l, "amdgpu_device_ip_init failed")) {
		klog_event_add(ev, k_amd_init_fail, l, "%s", bdf);
		return true;
	}
	if ((s = klog_find(l, "probe of ")) && klog_find(l, "failed with error") &&
	    klog_is_bdf(s + 9, end)) {
		klog_take(a, sizeof(a), s + 9, s + 21, "");
		klog_event_add(ev, k_amd_init_fail, l, "%s", a);
		return true;
	}
	/* "GPU over temperature range detected", "GPU Hotspot ...", "(SW CTF)" */
	if (klog_find(l, "over temperature range") || klog_find(l, "SW CTF") ||
	    klog_find(l, "HW CTF")) {
		const char *sensor = klog_find(l, "CTF")       ? "CTF (critical shutdown)"
		                     : klog_find(l, "Hotspot") ? "hotspot"
		                     : klog_find(l, "Memory")  ? "memory"
		                                               : "edge";

		if (!p->bdf[0] && (s = klog_find(l, "on PCIe "))) {
			klog_take(a, sizeof(a), s + 3, end, "!");
			bdf = a;
		}
		klog_event_add(ev, k_amd_temp, l, "%s|%s", bdf, sensor);
		return true;
	}
	return false;
}

/* --- i915 and xe ------------------------------------------------------------------------- */

static bool
intel_line(const struct klog_line *l, const struct klog_pfx *p, struct klog_events *ev)
{
	const char *bdf = p->bdf[0] ? p->bdf : "?", *s, *end = p->end;
	/* logread.c gives an Xe devcoredump as "xe devcoredump: GPU HANG: ecode ..., in PROCESS" */
	const char *drv = p->drv[0]                                                ? p->drv
	                  : l->len > 16 && !memcmp(l->msg, "xe devcoredump: ", 16) ? "xe"
	                                                                           : "i915";
	char a[96], b[96];
	struct klog_event *e;

	if (strcmp(drv, "i915") && strcmp(drv, "xe"))
		return false;
	/*
	 * A line that names no driver (most lines of a log) is one of i915's only with one of
	 * its words in it: the old "[drm] GPU HANG: ecode", a GuC line, "i915" in the text
	 */
	if (!p->drv[0] && drv[0] == 'i' && !klog_find(l, "GPU HANG") && !klog_find(l, "i915") &&
	    !klog_find(l, "GuC") && !klog_find(l, "wedged"))
		return false;
	/* "GPU HANG: ecode 12:1:85dffffb, in chrome [1234]" (the only one without a device, of old)
	 */
	if ((s = klog_find(l, "GPU HANG: ecode "))) {
		const char *in = klog_find(l, ", in ");

		klog_take(a, sizeof(a), in ? in + 5 : end, end, "[,");
		while (a[0] && a[strlen(a) - 1] == ' ')
			a[strlen(a) - 1] = '\0';
		e = klog_event_add(ev, k_int_hang, l, "%s|%s|%s", bdf, drv, a);
		if (e->count == 1) {
			klog_take(b, sizeof(b), s + 10, end, "");
			klog_add_detail(e, "", b);
		}
		return true;
	}
	if (!p->bdf[0] && !klog_find(l, "drm/i915") && !klog_find(l, "[i915]"))
		return false;
	/* "Resetting rcs0 for stopped heartbeat on rcs0", "Resetting chip after gpu hang" */
	if ((s = klog_find(l, "Resetting "))) {
		const char *why = NULL;

		klog_take(a, sizeof(a), s + 10, end, " ");
		s += 10 + strlen(a);
		if (end - s > 5 && !memcmp(s, " for ", 5))
			why = s + 5;
		else if (end - s > 7 && !memcmp(s, " after ", 7))
			why = s + 1;
		if (why) {
			klog_take(b, 64, why, end, "");
			klog_event_add(ev, k_int_hb, l, "%s|%s|%s|%s", bdf, drv, a, b);
			return true;
		}
	}
	/* "chrome[1818] context reset due to GPU hang": the process of the reset just before */
	if ((s = klog_find(l, " context reset due to "))) {
		e = latest(ev, k_int_hb, bdf);
		if (e && l->lineno - e->last.lineno <= PROCESS_LINES) {
			klog_take(a, sizeof(a), p->rest, s, "");
			if (!e->detail)
				klog_add_detail(e, "context of ", a);
		}
		return true;
	}
	/* xe: "GT0: Engine reset: engine_class=ccs, logical_mask: 0x1, guc_id=2" */
	if ((s = klog_find(l, "Engine reset: engine_class="))) {
		const char *gt = klog_find(l, "GT");

		klog_take(a, sizeof(a), s + 27, end, ", ");
		klog_take(b, 8, gt && gt < s ? gt : end, end, ": ");
		klog_event_add(ev, k_int_eng, l, "%s|%s|%s|%s", bdf, drv, b[0] ? b : "GT0", a);
		return true;
	}
	if (klog_find(l, "ngine reset failed")) {
		klog_event_add(ev, k_int_eng_fail, l, "%s|%s", bdf, drv);
		return true;
	}
	/* xe: "Timedout job: seqno=..., guc_id=2, flags=0x20 in llama-server [1538]" */
	if ((s = klog_find(l, "Timedout job: "))) {
		const char *in = NULL;

		for (const char *q = s; (q = memmem(q, (size_t)(end - q), " in ", 4)); q += 4)
			in = q;
		klog_take(a, sizeof(a), in ? in + 4 : end, end, " [");
		klog_event_add(ev, k_int_timedout, l, "%s|%s|%s", bdf, drv, a[0] ? a : "?");
		return true;
	}
	if (klog_find(l, "declaring it wedged") || klog_find(l, "set wedged")) {
		klog_event_add(ev, k_int_wedged, l, "%s|%s", bdf, drv);
		return true;
	}
	/* GuC: load, initialisation or runtime failures; its firmware missing */
	if (((klog_find(l, "GuC") || klog_find(l, "GUC")) &&
	     (klog_find(l, "fail") || klog_find(l, "Fail") || klog_find(l, "timed out") ||
	      klog_find(l, "No response"))) ||
	    (klog_find(l, "Direct firmware load for ") && klog_find(l, "_guc"))) {
		bool init =
		        klog_find(l, "load failed") || klog_find(l, "initialization failed") ||
		        klog_find(l, "init failed") || /* xe: "GT0: GuC init failed with -EINVAL" */
		        klog_find(l, "fetch failed") || klog_find(l, "Direct firmware load") ||
		        klog_find(l, "Enabling uc failed");

		e = klog_event_add(ev, k_int_guc, l, "%s|%s|%s", bdf, drv,
		                   init ? "init" : "runtime");
		if (e->count == 1) {
			klog_take(a, sizeof(a), p->rest, end, "");
			klog_add_detail(e, "", a);
		}
		return true;
	}
	return false;
}

bool
klog_drm_line(const struct klog_line *l, struct klog_events *ev)
{
	struct klog_pfx p;

	if (l->len < 8)
		return false;
	klog_prefix(l, &p);
	if (!strcmp(p.drv, "pcieport"))
		return false;
	return amd_line(l, &p, ev) || intel_line(l, &p, ev);
}

/* --- findings ---------------------------------------------------------------------------- */

/* The first line of a storm, and its count, span and last line. */
static void
storm(struct dr_finding *f, const struct klog_event *e)
{
	char t1[64], t2[64];

	klog_quote(f, &e->first);
	if (e->count > 1) {
		dr_evidence(f, "... %lu such lines from %s to %s; the last:", e->count,
		            klog_when(&e->first, t1, sizeof(t1)),
		            klog_when(&e->last, t2, sizeof(t2)));
		klog_quote(f, &e->last);
	}
}

static const char *
ring_engine(const char *ring)
{
	if (!strncmp(ring, "gfx", 3))
		return "graphics";
	if (!strncmp(ring, "comp", 4))
		return "compute";
	if (!strncmp(ring, "sdma", 4))
		return "copy (SDMA)";
	if (!strncmp(ring, "vcn", 3) || !strncmp(ring, "uvd", 3) || !strncmp(ring, "vce", 3) ||
	    !strncmp(ring, "jpeg", 4))
		return "video";
	return "an";
}

static void
amd_ring(const struct dr_ctx *ctx, const struct klog_events *ev, struct dr_report *r,
         const struct klog_event *e)
{
	char dev[32], ring[64], n[32];
	const struct klog_event *fault, *reset;
	unsigned long nfault, nreset, nok, nfail;
	struct dr_finding *f;

	(void)ctx;
	klog_field(e->key, 0, dev, sizeof(dev));
	klog_field(e->key, 1, ring, sizeof(ring));
	f = dr_add(r, "log.amdgpu.ring_timeout", DR_ERROR,
	           "amdgpu: a job on ring %s%s%s timed out %s", ring,
	           strcmp(dev, "?") ? " of the GPU at " : "", strcmp(dev, "?") ? dev : "",
	           klog_times(e->count, n, sizeof(n)));
	storm(f, e);
	if (e->detail)
		dr_evidence(f, "first timeout: %s", e->detail);
	nok = klog_count_on(ev, k_amd_ring_ok, dev, NULL);
	nfail = klog_count_on(ev, k_amd_ring_fail, dev, NULL);
	if (nok || nfail)
		dr_evidence(f, "the driver reset the ring itself: %lu succeeded, %lu failed", nok,
		            nfail);
	nreset = klog_count_on(ev, k_amd_reset, dev, &reset);
	nfault = klog_count_on(ev, k_amd_fault, dev, &fault);
	klog_mean(f,
	          "A job the %s engine was given (ring %s) did not finish within the driver's "
	          "lockup timeout (amdgpu.lockup_timeout), so the driver declared it hung%s%s%s",
	          ring_engine(ring), ring, e->detail && strstr(e->detail, "process ") ? " (" : "",
	          e->detail && strstr(e->detail, "process ") ? strstr(e->detail, "process ") : "",
	          e->detail && strstr(e->detail, "process ") ? " submitted it)." : ".");
	if (nfault && fault->first.lineno < e->first.lineno)
		klog_mean(
		        f,
		        "GPU page faults on the same GPU came first (log.amdgpu.page_fault): a job "
		        "that reads or writes memory it does not own stops there, and its ring then "
		        "times out. Look at the fault first.");
	if (nreset && reset->first.lineno > e->first.lineno)
		klog_mean(
		        f,
		        "The %lu GPU reset(s) that follow (log.amdgpu.gpu_reset) are the driver's "
		        "recovery from this timeout; the application that owned the job loses its "
		        "context (Vulkan VK_ERROR_DEVICE_LOST, ROCm 'HW Exception').",
		        nreset);
	klog_mean(f,
	          "Causes, most likely first: (1) a bug in the user-space driver or the program's "
	          "shaders or kernels (Mesa RADV/radeonsi, the ROCm runtime): it follows one "
	          "program and changes with the Mesa or ROCm version; (2) a kernel driver or GPU "
	          "firmware bug: several programs, since a kernel or linux-firmware update; "
	          "(3)%s (4) unstable hardware (overclock or undervolt, power delivery, heat): it "
	          "goes away at stock clocks, and over-temperature or PCIe errors come with it.",
	          !strncmp(ring, "comp", 4)
	                  ? " a compute kernel that legitimately runs longer than the timeout: "
	                    "only long compute jobs, on a comp ring;"
	                  : " a job that is only too long for the timeout: rare outside compute;");
	dr_action(
	        f,
	        "Note the program and what it was doing. Update Mesa or ROCm, the kernel and "
	        "linux-firmware (the amdgpu/ firmware files) together, and retry. For long compute "
	        "jobs raise the timeout (amdgpu.lockup_timeout=, in ms). Only if it persists across "
	        "versions and programs: run at stock clocks and check cooling and power.");
}

static void
amd_reset(const struct klog_events *ev, struct dr_report *r, const struct klog_event *e)
{
	char dev[32], n[32];
	const struct klog_event *ring, *ok, *fail, *lost;
	unsigned long nring, nok, nfail, nlost;
	struct dr_finding *f;

	klog_field(e->key, 0, dev, sizeof(dev));
	nring = klog_count_on(ev, k_amd_ring, dev, &ring);
	nok = klog_count_on(ev, k_amd_reset_ok, dev, &ok);
	nfail = klog_count_on(ev, k_amd_reset_fail, dev, &fail);
	nlost = klog_count_on(ev, k_amd_vram_lost, dev, &lost);
	f = dr_add(r, "log.amdgpu.gpu_reset", nfail ? DR_ERROR : DR_WARNING,
	           "amdgpu: the GPU at %s was reset %s%s", dev, klog_times(e->count, n, sizeof(n)),
	           nfail ? ", and a reset failed" : "");
	storm(f, e);
	if (nok)
		klog_quote(f, &ok->first);
	if (nfail)
		klog_quote(f, &fail->first);
	if (nlost)
		klog_quote(f, &lost->first);
	if (nring && ring->first.lineno < e->first.lineno) {
		char rn[64];

		klog_mean(
		        f,
		        "This reset is the consequence of the ring timeout before it (ring %s, "
		        "log.amdgpu.ring_timeout): the driver resets the GPU to recover from a hung "
		        "job. Find out why the job hung; the reset itself is the cure, not the "
		        "disease.",
		        klog_field(ring->key, 1, rn, sizeof(rn)));
	} else {
		klog_mean(
		        f,
		        "The driver reset the GPU. The log read shows no ring timeout before it, so "
		        "it does not say why: a hang detected otherwise (a firmware or RAS error "
		        "interrupt, told by the lines just before the reset), a reset asked for by "
		        "hand (debugfs amdgpu_gpu_recover), or the start of the hang fell outside "
		        "the log read.");
	}
	if (nlost)
		klog_mean(f, "VRAM was lost: every program using the GPU lost its buffers and must "
		             "restart; desktop sessions often crash with it.");
	if (nfail)
		klog_mean(f,
		          "A reset failed: the GPU stays unusable until the driver is reloaded or "
		          "the machine rebooted.");
	dr_action(
	        f,
	        "Look at the cause first (the ring timeout, page faults or RAS errors just before "
	        "the reset). Keep the kernel, linux-firmware and Mesa or ROCm current; a reset "
	        "that fails on a current stack, or resets without any hung job, point at the "
	        "hardware: check power and cooling%s.",
	        nfail ? ", and reboot to get the GPU back" : "");
}

static void
amd_fault(struct dr_report *r, const struct klog_event *e, const struct klog_events *ev)
{
	char dev[32], hub[32], pasid[32], n[32];
	const struct klog_event *ring;
	struct dr_finding *f;
	const char *proc = e->detail ? strstr(e->detail, "process ") : NULL;

	klog_field(e->key, 0, dev, sizeof(dev));
	klog_field(e->key, 1, hub, sizeof(hub));
	klog_field(e->key, 2, pasid, sizeof(pasid));
	f = dr_add(r, "log.amdgpu.page_fault", DR_WARNING,
	           "amdgpu: GPU page fault%s%s on %s (%s) %s", proc ? " in " : "",
	           proc ? proc + 8 : "", strcmp(dev, "?") ? dev : "the GPU", hub,
	           klog_times(e->count, n, sizeof(n)));
	storm(f, e);
	if (pasid[0])
		dr_evidence(f, "address space: pasid %s%s%s", pasid, proc ? ", " : "",
		            proc ? proc : "");
	klog_mean(f,
	          "The GPU accessed an address that is not mapped in %s GPU address space: the "
	          "GPU's segmentation fault. The offending work is usually killed (ROCm prints "
	          "'Memory access fault by GPU node-N').",
	          proc ? "that process's" : "a process's");
	if (klog_count_on(ev, k_amd_ring, dev, &ring) && ring->first.lineno > e->first.lineno)
		klog_mean(f,
		          "The ring timeout that follows (log.amdgpu.ring_timeout) is most likely "
		          "the consequence: the faulting job stopped.");
	klog_mean(f,
	          "Causes, most likely first: (1) a bug in the program or the library it runs "
	          "(an out-of-bounds access, a freed buffer still in use): one process, "
	          "reproducible with its workload; (2) a user-space driver bug (Mesa, ROCm): "
	          "several programs, changes with its version; (3) a kernel driver bug (memory "
	          "management, SVM/XNACK retry faults): since a kernel update; (4) faulty memory, "
	          "only if RAS/ECC errors are logged too.");
	dr_action(f,
	          "Run the program with its debug tools (ROCm: AMD_LOG_LEVEL=4, HSA_TOOLS; "
	          "Vulkan: validation layers) to find the access. Update Mesa or ROCm and the "
	          "kernel. Suspect the hardware only when faults come from every program and RAS "
	          "errors are logged.");
}

static void
amd_fw(struct dr_report *r, const struct klog_event *e, const struct klog_events *ev)
{
	char dev[32], file[96];
	const struct klog_event *init;
	bool fatal, optional, missing = e->detail && !strcmp(e->detail, "-2");
	struct dr_finding *f;

	klog_field(e->key, 0, dev, sizeof(dev));
	klog_field(e->key, 1, file, sizeof(file));
	fatal = klog_count_on(ev, k_amd_init_fail, dev, &init) > 0;
	/* the PSP's trusted applications (HDCP, DTM, RAS, secure display) are optional */
	optional = !fatal && strlen(file) > 7 && !strcmp(file + strlen(file) - 7, "_ta.bin");
	f = dr_add(r, "log.amdgpu.firmware",
	           fatal      ? DR_ERROR
	           : optional ? DR_INFO
	                      : DR_WARNING,
	           "amdgpu: firmware %s could not be loaded%s", file,
	           fatal ? ", and the GPU did not initialise" : "");
	storm(f, e);
	if (fatal)
		klog_quote(f, &init->first);
	klog_mean(f, "amdgpu asked for /lib/firmware/%s and got error %s%s. %s", file,
	          e->detail ? e->detail : "?",
	          missing ? " (ENOENT: no such file, in the root file system or the initramfs)"
	                  : "",
	          fatal ? "The driver gave up on this GPU: no /dev/dri node, no ROCm device."
	                : "The driver went on without it: some files are optional (the PSP's "
	                  "trusted applications, *_ta.bin), others disable a block (video, power "
	                  "management) or fail the GPU later.");
	dr_action(f,
	          "Install or update the linux-firmware package (or the amdgpu-dkms firmware of "
	          "ROCm's installer, which must match its driver), check that %s exists under "
	          "/lib/firmware, then rebuild the initramfs ('sudo update-initramfs -u' or 'sudo "
	          "dracut --force') so that early boot finds it, and reboot. A GPU newer than the "
	          "kernel needs a newer kernel too.",
	          file);
}

static void
amd_temp(struct dr_report *r, const struct klog_event *e)
{
	char dev[32], sensor[32], n[32];
	bool ctf;
	struct dr_finding *f;

	klog_field(e->key, 0, dev, sizeof(dev));
	klog_field(e->key, 1, sensor, sizeof(sensor));
	ctf = !strncmp(sensor, "CTF", 3);
	f = dr_add(r, "log.amdgpu.over_temp", ctf ? DR_ERROR : DR_WARNING,
	           "amdgpu: the GPU at %s reported over-temperature (%s) %s", dev, sensor,
	           klog_times(e->count, n, sizeof(n)));
	storm(f, e);
	klog_mean(f,
	          "The GPU's thermal interrupt fired: its %s sensor crossed the limit set in its "
	          "firmware, %s. The log gives no temperature; the GPU throttles its clocks to "
	          "cool down%s.",
	          sensor, e->count > 1 ? "repeatedly, over the span shown" : "once",
	          ctf ? ", and a critical thermal fault shuts it (or the machine) down" : "");
	klog_mean(
	        f,
	        "Causes, most likely first: (1) the fan curve or fan control (a quiet consumer "
	        "fan curve under compute load, a fan controller left in manual mode): fans slow "
	        "while hot; (2) airflow: a closed case, dust, a card starved by its neighbour; "
	        "(3) the cooler's contact (paste, pads): hotspot or memory far above the edge "
	        "temperature at normal fan speed; (4) an overclock or a raised power limit; (5) a "
	        "failing fan.");
	dr_action(f,
	          "Watch the GPU under its load with 'gpuscope doctor --watch 30' (the health.* "
	          "checks show temperatures, fan speed and throttling) or rocm-smi. Restore stock "
	          "clocks and power limit, raise the fan curve, clean the cooler and improve "
	          "airflow; repaste or service the card only after that.");
}

/* --- Intel ------------------------------------------------------------------------------ */

static void
int_hang(struct dr_report *r, const struct klog_event *e, const struct klog_events *ev)
{
	char dev[32], drv[16], proc[64], n[32];
	const struct klog_event *hb;
	struct dr_finding *f;

	klog_field(e->key, 0, dev, sizeof(dev));
	klog_field(e->key, 1, drv, sizeof(drv));
	klog_field(e->key, 2, proc, sizeof(proc));
	f = dr_add(r, "log.intel.gpu_hang", DR_WARNING, "%s: GPU hang%s%s on %s, %s", drv,
	           proc[0] ? " in " : "", proc, strcmp(dev, "?") ? dev : "the GPU",
	           klog_times(e->count, n, sizeof(n)));
	storm(f, e);
	klog_mean(f,
	          "The driver found work of %s stuck on the GPU, reset it, and saved an error "
	          "state to /sys/class/drm/card*/error. The program loses its GPU context "
	          "(Vulkan device lost, a frozen tab in a browser).",
	          proc[0] ? proc : "a program");
	if (klog_count_on(ev, k_int_hb, dev, &hb) && hb->first.lineno <= e->first.lineno) {
		char why[96];

		klog_mean(f,
		          "The reset just before it ('%s', log.intel.heartbeat_reset) belongs to "
		          "the same incident: the hang report is the driver's record of it.",
		          klog_field(hb->key, 3, why, sizeof(why)));
	}
	klog_mean(f, "Causes, most likely first: (1) a user-space driver or program bug (Mesa, the "
	             "media driver, the compute runtime): the same program each time, changes with "
	             "their versions; (2) a kernel driver or GuC firmware bug: several programs, "
	             "since a kernel or linux-firmware update; (3) hardware, only after both.");
	dr_action(
	        f,
	        "Save /sys/class/drm/card*/error at once (the next hang replaces it). Update Mesa, "
	        "intel-media-driver or the compute runtime, the kernel and linux-firmware; report "
	        "a hang that persists with the error state to the driver's tracker.");
}

static void
int_hb(struct dr_report *r, const struct klog_event *e, const struct klog_events *ev)
{
	char dev[32], drv[16], what[32], why[96], n[32];
	const struct klog_event *guc;
	struct dr_finding *f;
	bool chip;

	klog_field(e->key, 0, dev, sizeof(dev));
	klog_field(e->key, 1, drv, sizeof(drv));
	klog_field(e->key, 2, what, sizeof(what));
	klog_field(e->key, 3, why, sizeof(why));
	chip = !strcmp(what, "chip");
	f = dr_add(r, "log.intel.heartbeat_reset", chip ? DR_ERROR : DR_WARNING,
	           "%s: the driver reset %s on %s for '%s', %s", drv, chip ? "the whole GPU" : what,
	           strcmp(dev, "?") ? dev : "the GPU", why, klog_times(e->count, n, sizeof(n)));
	storm(f, e);
	if (e->detail)
		dr_evidence(f, "first reset: %s", e->detail);
	klog_mean(
	        f,
	        "The driver's watchdog (the engine heartbeat, or the preemption timeout) found "
	        "%s no longer making progress and reset %s; the context that ran there is lost%s.",
	        chip ? "the GPU" : what, chip ? "the whole GPU (every context)" : "that engine",
	        e->detail ? " (named above)" : "");
	if (strstr(why, "GuC"))
		klog_mean(f, "The reason names the GuC: the firmware could not reset the engine "
		             "itself, so the driver reset the chip (see log.intel.guc).");
	else if (klog_count_on(ev, k_int_guc, dev, &guc) && guc->first.lineno < e->first.lineno)
		klog_mean(f, "GuC errors came before (log.intel.guc): a GuC that stopped answering "
		             "leaves engines without a scheduler, and the watchdog then fires.");
	klog_mean(f,
	          "Causes, most likely first: (1) a program's work that never ends or cannot be "
	          "preempted (a shader or kernel bug, or very long compute kernels): one program; "
	          "(2) a driver or firmware bug (kernel, GuC, Mesa): since an update, several "
	          "programs; (3) hardware, last. Long compute jobs can be allowed more time "
	          "through /sys/class/drm/card*/engine/*/preempt_timeout_ms and "
	          "heartbeat_interval_ms.");
	dr_action(
	        f,
	        "Update the kernel, linux-firmware (GuC) and the user-space driver; for a compute "
	        "job that is only long, raise the engine's preempt_timeout_ms. Report a reset "
	        "that persists with /sys/class/drm/card*/error.");
}

static void
int_guc(struct dr_report *r, const struct klog_event *e, const struct klog_events *ev)
{
	char dev[32], drv[16], phase[16], n[32];
	const struct klog_event *w;
	bool init, wedged;
	struct dr_finding *f;

	klog_field(e->key, 0, dev, sizeof(dev));
	klog_field(e->key, 1, drv, sizeof(drv));
	klog_field(e->key, 2, phase, sizeof(phase));
	init = !strcmp(phase, "init");
	wedged = klog_count_on(ev, k_int_wedged, dev, &w) > 0;
	f = dr_add(r, "log.intel.guc", init || wedged ? DR_ERROR : DR_WARNING,
	           "%s: the GuC %s on %s (%s)", drv,
	           init ? "firmware failed to load or start" : "failed while running",
	           strcmp(dev, "?") ? dev : "the GPU", klog_times(e->count, n, sizeof(n)));
	storm(f, e);
	if (wedged)
		klog_quote(f, &w->first);
	klog_mean(f,
	          "The GuC is the GPU's microcontroller that schedules work on the engines (and, "
	          "on newer GPUs, manages power). %s",
	          init ? "It did not start: without it the driver cannot submit work on GPUs that "
	                 "need it (Alder Lake and newer, Arc, every xe GPU), and declares the GPU "
	                 "wedged: no rendering, no compute, only the display."
	               : "It stopped answering or failed a request while running: engines hang "
	                 "and get reset, and the GPU may be wedged.");
	klog_mean(f,
	          "Causes, most likely first: (1) the firmware file is missing or older than the "
	          "kernel wants (error -2 or ENOENT: not found; a 'load failed' status with a "
	          "version mismatch): the kernel log names the file it asked for; (2) a firmware "
	          "or driver bug fixed in a newer GuC or kernel: the file loads but fails later; "
	          "(3) firmware kept from an out-of-tree driver (DKMS i915 backports) mixed with "
	          "the in-tree driver.");
	dr_action(f,
	          "Update linux-firmware (the %s/ files), rebuild the initramfs ('sudo "
	          "update-initramfs -u' or 'sudo dracut --force'), reboot, and check the log for "
	          "'GuC firmware ... version'. Then update the kernel. Remove leftover out-of-tree "
	          "i915/xe modules.",
	          drv);
}

static void
int_eng(struct dr_report *r, const struct klog_event *e, const struct klog_events *ev)
{
	char dev[32], drv[16], gt[16], cls[32], n[32], p[64];
	const struct klog_event *fail, *guc;
	unsigned long nfail;
	struct dr_finding *f;
	struct strbuf procs = STRBUF_INIT;

	klog_field(e->key, 0, dev, sizeof(dev));
	klog_field(e->key, 1, drv, sizeof(drv));
	klog_field(e->key, 2, gt, sizeof(gt));
	klog_field(e->key, 3, cls, sizeof(cls));
	nfail = klog_count_on(ev, k_int_eng_fail, dev, &fail);
	for (size_t i = 0; i < ev->nr; i++) {
		const struct klog_event *t = &ev->v[i];
		char d[32];

		if (t->kind != k_int_timedout ||
		    !klog_same_dev(klog_field(t->key, 0, d, sizeof(d)), dev))
			continue;
		strbuf_addf(&procs, "%s%s (%lu)", procs.len ? ", " : "",
		            klog_field(t->key, 2, p, sizeof(p)), t->count);
	}
	f = dr_add(r, "log.intel.engine_reset", nfail ? DR_ERROR : DR_WARNING,
	           "%s: %s engine %s of %s was reset %s%s", drv, gt, cls,
	           strcmp(dev, "?") ? dev : "the GPU", klog_times(e->count, n, sizeof(n)),
	           nfail ? ", and an engine reset failed" : "");
	storm(f, e);
	if (nfail)
		klog_quote(f, &fail->first);
	if (procs.len)
		dr_evidence(f, "jobs that timed out, by program: %s", procs.buf);
	klog_mean(f,
	          "A job on the %s engine (ccs: compute, rcs: render, bcs: copy, vcs/vecs: video) "
	          "did not finish or could not be preempted in time, and the GuC reset the "
	          "engine; the queue of the program that submitted it is banned%s.",
	          cls, procs.len ? " (the programs are named above)" : "");
	if (klog_count_on(ev, k_int_guc, dev, &guc) && guc->first.lineno < e->first.lineno)
		klog_mean(f, "GuC failures came first (log.intel.guc): a misbehaving GuC causes "
		             "resets; look there first.");
	if (nfail)
		klog_mean(f, "An engine reset failed: the driver falls back to a full GPU reset, "
		             "or wedges the GPU until reboot.");
	klog_mean(f,
	          "Causes, most likely first: (1) a GuC firmware or kernel driver bug: several "
	          "programs, fixed by a newer linux-firmware or kernel; (2) a program's job that "
	          "never ends or is longer than the preemption timeout (long compute kernels): "
	          "one program, its workload; (3) hardware, last.");
	dr_action(f,
	          "Update linux-firmware (the GuC: %s/*_guc_*.bin) and the kernel, then the "
	          "compute runtime or Mesa. For long compute jobs, raise "
	          "/sys/class/drm/card*/device/tile0/gt0/engines/%s/job_timeout_ms and "
	          "preempt_timeout_us (xe). A reset that persists belongs in the driver's tracker "
	          "with the devcoredump (/sys/class/drm/card*/device/devcoredump/data).",
	          drv, cls);
	strbuf_release(&procs);
}

void
klog_drm_report(const struct dr_ctx *ctx, const struct klog_events *ev, struct dr_report *r)
{
	for (size_t i = 0; i < ev->nr; i++) {
		const struct klog_event *e = &ev->v[i];

		if (e->kind == k_amd_ring)
			amd_ring(ctx, ev, r, e);
		else if (e->kind == k_amd_reset)
			amd_reset(ev, r, e);
		else if (e->kind == k_amd_fault)
			amd_fault(r, e, ev);
		else if (e->kind == k_amd_fw)
			amd_fw(r, e, ev);
		else if (e->kind == k_amd_temp)
			amd_temp(r, e);
		else if (e->kind == k_int_hang)
			int_hang(r, e, ev);
		else if (e->kind == k_int_hb)
			int_hb(r, e, ev);
		else if (e->kind == k_int_guc)
			int_guc(r, e, ev);
		else if (e->kind == k_int_eng)
			int_eng(r, e, ev);
	}
}

/* --- the catalog ------------------------------------------------------------------------- */

const struct dr_explain dr_catalog_klog_drm[] = {
	{ "log.amdgpu.firmware", "amdgpu could not load a firmware file",
	  "amdgpu loads its microcode (PSP, SMU, GFX, SDMA, VCN, DMCUB ...) from\n"
	  "/lib/firmware/amdgpu. 'Direct firmware load ... failed with error -2' means the\n"
	  "file is not there: linux-firmware is too old for the GPU or the kernel, the\n"
	  "initramfs was built without it, or ROCm's amdgpu-dkms firmware was removed.\n"
	  "Some files are optional (the PSP's *_ta.bin); a missing required one ends in\n"
	  "'Fatal error during GPU init' and no usable GPU. Update linux-firmware, rebuild\n"
	  "the initramfs and reboot." },
	{ "log.amdgpu.gpu_reset", "amdgpu reset the GPU",
	  "amdgpu resets the GPU to recover from a hang: after a ring timeout (the usual\n"
	  "case; then the timeout is the cause to look at), after a RAS error, or on\n"
	  "request. Programs using the GPU lose their contexts; with 'VRAM is lost' every\n"
	  "buffer is gone and desktop sessions often crash. A failed reset leaves the GPU\n"
	  "unusable until reboot. Resets without a hung job, or failing on a current\n"
	  "kernel and firmware, point at the hardware (power, heat)." },
	{ "log.amdgpu.over_temp", "amdgpu reported an over-temperature event",
	  "The GPU's firmware raises a thermal interrupt when a sensor (edge, hotspot or\n"
	  "memory) crosses its limit; the GPU throttles, and at the critical limit (CTF)\n"
	  "it shuts down. The log does not say how hot: watch it under load (gpuscope\n"
	  "doctor --watch, rocm-smi). Causes, most likely first: a quiet fan curve under\n"
	  "compute load, poor airflow or dust, the cooler's contact (hotspot far above\n"
	  "edge), an overclock or raised power limit, a failing fan." },
	{ "log.amdgpu.page_fault", "amdgpu GPU page fault",
	  "The GPU accessed an address not mapped in the process's GPU address space (the\n"
	  "line names the hub, the VMID and the PASID; the process is named on it or on\n"
	  "the line after). It is the GPU's segmentation fault: a bug in the program or\n"
	  "its libraries, in the user-space driver (Mesa, ROCm), or in the kernel's memory\n"
	  "management; faulty memory only with RAS/ECC errors alongside. A ring timeout\n"
	  "after the fault is its consequence." },
	{ "log.amdgpu.ring_timeout", "amdgpu ring timeout (a GPU job hung)",
	  "A job on a ring (gfx: graphics, comp: compute, sdma: copies, vcn: video) did\n"
	  "not finish within amdgpu.lockup_timeout. The line after it names the process.\n"
	  "The driver then resets the ring or the whole GPU (log.amdgpu.gpu_reset), and\n"
	  "the program loses its context. Causes, most likely first: a bug in the\n"
	  "user-space driver or the program's shaders (one program; changes with Mesa or\n"
	  "ROCm), a kernel driver or firmware bug (several programs, after an update), a\n"
	  "compute job longer than the timeout, unstable hardware (overclock, power,\n"
	  "heat). Page faults before the timeout are its likely cause." },
	{ "log.intel.engine_reset", "An Intel GPU engine was reset (xe, GuC)",
	  "With GuC submission (xe, and i915 on newer GPUs) the GuC resets an engine whose\n"
	  "job does not finish or cannot be preempted in time; xe logs 'Engine reset:\n"
	  "engine_class=...' and 'Timedout job: ... in PROGRAM'. The program's queue is\n"
	  "banned. Causes, most likely first: GuC firmware or kernel driver bugs (fixed by\n"
	  "updates; several programs), jobs longer than the preemption timeout (one\n"
	  "program), hardware last. The devcoredump in sysfs holds the details." },
	{ "log.intel.gpu_hang", "i915 GPU hang",
	  "'GPU HANG: ecode ..., in PROGRAM [PID]' is i915's record of work that stopped\n"
	  "making progress; the driver resets the engine and saves the error state to\n"
	  "/sys/class/drm/card*/error (keep it for a bug report). Causes: a user-space\n"
	  "driver or program bug (the same program each time), a kernel or GuC firmware\n"
	  "bug (after updates, several programs), then hardware." },
	{ "log.intel.guc", "The Intel GuC firmware failed",
	  "The GuC microcontroller schedules work on newer Intel GPUs (Alder Lake and\n"
	  "later, Arc, every xe GPU). If it fails to load ('GuC initialization failed',\n"
	  "'load failed', a missing i915/ or xe/ *_guc_*.bin) the GPU is declared wedged:\n"
	  "no rendering or compute. Failures while running (no response, reset failures)\n"
	  "hang engines. Update linux-firmware and rebuild the initramfs, then the kernel;\n"
	  "remove leftover out-of-tree i915 modules." },
	{ "log.intel.heartbeat_reset", "i915 reset an engine or the GPU (heartbeat, preemption)",
	  "i915 sends heartbeats through each engine and times preemption; an engine that\n"
	  "stops making progress is reset ('Resetting rcs0 for stopped heartbeat',\n"
	  "'for preemption time out'), and when that fails, the whole chip. The context\n"
	  "that ran there is lost; a 'GPU HANG' line for the same incident follows.\n"
	  "Causes: work that never ends or cannot be preempted (a program bug, or long\n"
	  "compute kernels: raise preempt_timeout_ms), driver or GuC bugs, hardware last." },
	{ NULL, NULL, NULL },
};
