/*
 * log.amdgpu.*, log.intel.*, log.aer.*: the kernel log's errors of the
 * in-tree GPU drivers (amdgpu, i915, xe) and the PCIe AER reports, decoded
 * one line at a time into events (a storm of repeats is one event with a
 * count and its first and last line), then turned into findings that point
 * a secondary error at its cause (a GPU reset after a ring timeout) and
 * blame the GPU for an AER error only when the reporting device is the GPU
 * or its upstream port.
 *
 * Keys are "field|field|...", the device's bus id first ("?" when the line
 * names none), so that the report can read them back.
 */
#include "doctor/doctor.h"
#include "doctor/klog.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/pci.h"
#include "core/config.h"
#include "core/err.h"
#include "core/fileio.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

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

static const char k_aer_recv[] = "aer received";    /* source|sev */
static const char k_aer_bus[] = "aer bus error";    /* bdf|sev|type|drv */
static const char k_aer_bit[] = "aer status bit";   /* bdf|name */
static const char k_aer_id[] = "aer device id";     /* bdf */
static const char k_aer_nrec[] = "aer unrecovered"; /* bdf */

/* A ring timeout or fault and the line naming its process: at most this many lines apart. */
#define PROCESS_LINES 4
/* Corrected AER errors on the GPU's link from this many on: a marginal link, not a blip. */
#define AER_MANY 10

/* --- reading a line ------------------------------------------------------------------ */

/* "0000:3b:00.0" at p (12 characters) */
static bool
is_bdf(const char *p, const char *end)
{
	static const char shape[] = "xxxx:xx:xx.d";

	if (end - p < 12)
		return false;
	for (int i = 0; i < 12; i++) {
		char c = shape[i];

		if (c == 'x'   ? !isxdigit((unsigned char)p[i])
		    : c == 'd' ? !isdigit((unsigned char)p[i])
		               : p[i] != c)
			return false;
	}
	return true;
}

/* "driver 0000:3b:00.0: rest": the driver and bus id of a line's device. */
struct pfx {
	char drv[32];
	char bdf[16];     /* "" when the line names no device */
	const char *rest; /* after "bdf: ", "AER: ", "amdgpu: ", "[drm] " */
	const char *end;
};

static void
prefix(const struct klog_line *l, struct pfx *p)
{
	const char *s = l->msg, *end = l->msg + l->len, *q = s;

	memset(p, 0, sizeof(*p));
	p->end = end;
	p->rest = s;
	while (q < end && (isalnum((unsigned char)*q) || *q == '_' || *q == '-'))
		q++;
	if (q > s && q < end && *q == ' ' && (size_t)(q - s) < sizeof(p->drv) &&
	    is_bdf(q + 1, end) && q + 13 < end && q[13] == ':') {
		memcpy(p->drv, s, (size_t)(q - s));
		memcpy(p->bdf, q + 1, 12);
		q += 14;
		for (;;) {
			while (q < end && *q == ' ')
				q++;
			if (end - q >= 5 && !memcmp(q, "AER: ", 5))
				q += 5;
			else if (end - q >= 8 && !memcmp(q, "amdgpu: ", 8))
				q += 8;
			else if (end - q >= 6 && !memcmp(q, "[drm] ", 6))
				q += 6;
			else
				break;
		}
		p->rest = q;
	}
}

static const char *
has(const struct klog_line *l, const char *s)
{
	return memmem(l->msg, l->len, s, strlen(s));
}

/* Copy p up to end or the first character of stops into out ("" when none). */
static void
take(char *out, size_t size, const char *p, const char *end, const char *stops)
{
	size_t n = 0;

	while (p + n < end && !strchr(stops, p[n]) && n + 1 < size)
		n++;
	memcpy(out, p, n);
	out[n] = '\0';
}

/* Field n (0-based) of a "a|b|c" key into out. */
static const char *
field(const char *key, int n, char *out, size_t size)
{
	const char *p = key;

	for (; n > 0 && p; n--) {
		p = strchr(p, '|');
		if (p)
			p++;
	}
	if (!p) {
		out[0] = '\0';
		return out;
	}
	take(out, size, p, p + strlen(p), "|");
	return out;
}

/* Same device: equal bus ids, or one of them unknown ("?"). */
static bool
same_dev(const char *a, const char *b)
{
	return !strcmp(a, b) || !strcmp(a, "?") || !strcmp(b, "?");
}

/* The event of kind on device bdf whose last line is the latest; NULL when none. */
static struct klog_event *
latest(const struct klog_events *ev, const void *kind, const char *bdf)
{
	struct klog_event *best = NULL;
	char dev[32];

	for (size_t i = 0; i < ev->nr; i++) {
		struct klog_event *e = &ev->v[i];

		if (e->kind != kind || !same_dev(field(e->key, 0, dev, sizeof(dev)), bdf))
			continue;
		if (!best || e->last.lineno > best->last.lineno)
			best = e;
	}
	return best;
}

/* Set e's detail to what and a when it has none, or append them to it. */
static void
add_detail(struct klog_event *e, const char *what, const char *a)
{
	struct strbuf sb = STRBUF_INIT;

	if (e->detail)
		strbuf_addf(&sb, "%s; ", e->detail);
	strbuf_addf(&sb, "%s%s", what, a);
	free(e->detail);
	e->detail = strbuf_detach(&sb, NULL);
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
	take(name, sizeof(name), p, pid, "");
	take(num, sizeof(num), pid + 5, end, " )");
	snprintf(out, size, "%s (pid %s)", name[0] ? name : "(no name)", num);
	return true;
}

/* --- amdgpu ----------------------------------------------------------------------------- */

/* Where a line names the process of the timeout or fault before it. */
static const char *const proc_marks[] = { "Process information: process ", " Process ",
	                                  " for process ", " in process " };

static bool
amd_line(const struct klog_line *l, const struct pfx *p, struct klog_events *ev)
{
	const char *bdf = p->bdf[0] ? p->bdf : "?", *s, *end = p->end;
	char a[96], b[64];
	struct klog_event *e;

	if (strcmp(p->drv, "amdgpu") && !has(l, "[drm:amdgpu_") && !has(l, "amdgpu: ") &&
	    !has(l, "[amdgpu]"))
		return false;

	/* "ring gfx_0.0.0 timeout, signaled seq=9910, emitted seq=9912" */
	if ((s = has(l, "ring ")) && has(l, " timeout")) {
		take(a, sizeof(a), s + 5, end, " ,");
		s += 5 + strlen(a);
		if (a[0] && end - s >= 8 && !memcmp(s, " timeout", 8)) {
			e = klog_event_add(ev, k_amd_ring, l, "%s|%s", bdf, a);
			if (e->count == 1 && (s = has(l, "signaled seq="))) {
				take(b, sizeof(b), s, end, "");
				add_detail(e, "", b);
			}
			return true;
		}
	}
	/* "[gfxhub0] no-retry page fault (src_id:0 ring:24 vmid:8 pasid:32768, for process ...)" */
	if ((s = has(l, "page fault (")) || (s = has(l, "VM fault")) ||
	    (s = has(l, "GPU fault detected:"))) {
		const char *hub = has(l, "hub"), *pasid = has(l, "pasid:");

		a[0] = '\0';
		if (hub) {
			const char *o = hub;

			while (o > l->msg && o[-1] != '[')
				o--;
			take(a, sizeof(a), o, end, "]");
		}
		b[0] = '\0';
		if (pasid)
			take(b, sizeof(b), pasid + 6, end, ",) ");
		e = klog_event_add(ev, k_amd_fault, l, "%s|%s|%s", bdf, a[0] ? a : "gmc", b);
		if (e->count == 1 && (s = has(l, "for process ")) &&
		    process_at(s + 12, end, a, sizeof(a)))
			add_detail(e, "process ", a);
		return true;
	}
	/* the process of the timeout or fault just before */
	for (size_t i = 0; i < ARRAY_SIZE(proc_marks); i++) {
		struct klog_event *r, *f, *t;

		if (!(s = has(l, proc_marks[i])))
			continue;
		s += strlen(proc_marks[i]);
		r = latest(ev, k_amd_ring, bdf);
		f = latest(ev, k_amd_fault, bdf);
		t = r && (!f || r->last.lineno > f->last.lineno) ? r : f;
		if (t && l->lineno - t->last.lineno <= PROCESS_LINES &&
		    process_at(s, end, a, sizeof(a))) {
			if (!t->detail || !strstr(t->detail, "process "))
				add_detail(t, "process ", a);
			return true;
		}
		break;
	}
	if (has(l, "GPU reset begin!")) {
		klog_event_add(ev, k_amd_reset, l, "%s", bdf);
		return true;
	}
	if (has(l, "GPU reset") && has(l, "succeeded")) {
		klog_event_add(ev, k_amd_reset_ok, l, "%s", bdf);
		return true;
	}
	if (has(l, "GPU Recovery Failed") || (has(l, "GPU reset") && has(l, "failed")) ||
	    ((s = has(l, "GPU reset end with ret = ")) && s + 25 < end && s[25] != '0')) {
		klog_event_add(ev, k_amd_reset_fail, l, "%s", bdf);
		return true;
	}
	if (has(l, "VRAM is lost")) {
		klog_event_add(ev, k_amd_vram_lost, l, "%s", bdf);
		return true;
	}
	/* "Ring gfx_0.0.0 reset succeeded" / "Ring gfx_0.0.0 reset failed" */
	if ((s = has(l, "Ring ")) && has(l, " reset ")) {
		take(a, sizeof(a), s + 5, end, " ");
		if (has(l, "reset succeeded"))
			klog_event_add(ev, k_amd_ring_ok, l, "%s|%s", bdf, a);
		else if (has(l, "reset failed"))
			klog_event_add(ev, k_amd_ring_fail, l, "%s|%s", bdf, a);
		else
			return false;
		return true;
	}
	/* "Direct firmware load for amdgpu/polaris12_mc.bin failed with error -2" */
	if ((s = has(l, "Direct firmware load for "))) {
		take(a, sizeof(a), s + 25, end, " ");
		e = klog_event_add(ev, k_amd_fw, l, "%s|%s", bdf, a);
		if (e->count == 1 && (s = has(l, "with error "))) {
			take(b, sizeof(b), s + 11, end, " ");
			add_detail(e, "", b);
		}
		return true;
	}
	if (has(l, "Fatal error during GPU init") || has(l, "amdgpu_device_ip_init failed")) {
		klog_event_add(ev, k_amd_init_fail, l, "%s", bdf);
		return true;
	}
	if ((s = has(l, "probe of ")) && has(l, "failed with error") && is_bdf(s + 9, end)) {
		take(a, sizeof(a), s + 9, s + 21, "");
		klog_event_add(ev, k_amd_init_fail, l, "%s", a);
		return true;
	}
	/* "GPU over temperature range detected", "GPU Hotspot ...", "(SW CTF)" */
	if (has(l, "over temperature range") || has(l, "SW CTF") || has(l, "HW CTF")) {
		const char *sensor = has(l, "CTF")       ? "CTF (critical shutdown)"
		                     : has(l, "Hotspot") ? "hotspot"
		                     : has(l, "Memory")  ? "memory"
		                                         : "edge";

		if (!p->bdf[0] && (s = has(l, "on PCIe "))) {
			take(a, sizeof(a), s + 3, end, "!");
			bdf = a;
		}
		klog_event_add(ev, k_amd_temp, l, "%s|%s", bdf, sensor);
		return true;
	}
	return false;
}

/* --- i915 and xe ------------------------------------------------------------------------- */

static bool
intel_line(const struct klog_line *l, const struct pfx *p, struct klog_events *ev)
{
	const char *bdf = p->bdf[0] ? p->bdf : "?", *s, *end = p->end;
	const char *drv = p->drv[0] ? p->drv : "i915";
	char a[96], b[96];
	struct klog_event *e;

	if (strcmp(drv, "i915") && strcmp(drv, "xe"))
		return false;
	/* "GPU HANG: ecode 12:1:85dffffb, in chrome [1234]" (the only one without a device, of old)
	 */
	if ((s = has(l, "GPU HANG: ecode "))) {
		const char *in = has(l, ", in ");

		take(a, sizeof(a), in ? in + 5 : end, end, "[,");
		while (a[0] && a[strlen(a) - 1] == ' ')
			a[strlen(a) - 1] = '\0';
		e = klog_event_add(ev, k_int_hang, l, "%s|%s|%s", bdf, drv, a);
		if (e->count == 1) {
			take(b, sizeof(b), s + 10, end, "");
			add_detail(e, "", b);
		}
		return true;
	}
	if (!p->bdf[0] && !has(l, "drm/i915") && !has(l, "[i915]"))
		return false;
	/* "Resetting rcs0 for stopped heartbeat on rcs0", "Resetting chip after gpu hang" */
	if ((s = has(l, "Resetting "))) {
		const char *why = NULL;

		take(a, sizeof(a), s + 10, end, " ");
		s += 10 + strlen(a);
		if (end - s > 5 && !memcmp(s, " for ", 5))
			why = s + 5;
		else if (end - s > 7 && !memcmp(s, " after ", 7))
			why = s + 1;
		if (why) {
			take(b, 64, why, end, "");
			klog_event_add(ev, k_int_hb, l, "%s|%s|%s|%s", bdf, drv, a, b);
			return true;
		}
	}
	/* "chrome[1818] context reset due to GPU hang": the process of the reset just before */
	if ((s = has(l, " context reset due to "))) {
		e = latest(ev, k_int_hb, bdf);
		if (e && l->lineno - e->last.lineno <= PROCESS_LINES) {
			take(a, sizeof(a), p->rest, s, "");
			if (!e->detail)
				add_detail(e, "context of ", a);
		}
		return true;
	}
	/* xe: "GT0: Engine reset: engine_class=ccs, logical_mask: 0x1, guc_id=2" */
	if ((s = has(l, "Engine reset: engine_class="))) {
		const char *gt = has(l, "GT");

		take(a, sizeof(a), s + 27, end, ", ");
		take(b, 8, gt && gt < s ? gt : end, end, ": ");
		klog_event_add(ev, k_int_eng, l, "%s|%s|%s|%s", bdf, drv, b[0] ? b : "GT0", a);
		return true;
	}
	if (has(l, "ngine reset failed")) {
		klog_event_add(ev, k_int_eng_fail, l, "%s|%s", bdf, drv);
		return true;
	}
	/* xe: "Timedout job: seqno=..., guc_id=2, flags=0x20 in llama-server [1538]" */
	if ((s = has(l, "Timedout job: "))) {
		const char *in = NULL;

		for (const char *q = s; (q = memmem(q, (size_t)(end - q), " in ", 4)); q += 4)
			in = q;
		take(a, sizeof(a), in ? in + 4 : end, end, " [");
		klog_event_add(ev, k_int_timedout, l, "%s|%s|%s", bdf, drv, a[0] ? a : "?");
		return true;
	}
	if (has(l, "declaring it wedged") || has(l, "set wedged")) {
		klog_event_add(ev, k_int_wedged, l, "%s|%s", bdf, drv);
		return true;
	}
	/* GuC: load, initialisation or runtime failures; its firmware missing */
	if (((has(l, "GuC") || has(l, "GUC")) &&
	     (has(l, "fail") || has(l, "Fail") || has(l, "timed out") || has(l, "No response"))) ||
	    (has(l, "Direct firmware load for ") && has(l, "_guc"))) {
		bool init = has(l, "load failed") || has(l, "initialization failed") ||
		            has(l, "fetch failed") || has(l, "Direct firmware load") ||
		            has(l, "Enabling uc failed");

		e = klog_event_add(ev, k_int_guc, l, "%s|%s|%s", bdf, drv,
		                   init ? "init" : "runtime");
		if (e->count == 1) {
			take(a, sizeof(a), p->rest, end, "");
			add_detail(e, "", a);
		}
		return true;
	}
	return false;
}

bool
klog_drm_line(const struct klog_line *l, struct klog_events *ev)
{
	struct pfx p;

	if (l->len < 8)
		return false;
	prefix(l, &p);
	if (!strcmp(p.drv, "pcieport"))
		return false;
	return amd_line(l, &p, ev) || intel_line(l, &p, ev);
}

/* --- PCIe AER ---------------------------------------------------------------------------- */

enum aer_sev { AER_CORRECTED, AER_NONFATAL, AER_FATAL, AER_NR };

static const char *const sev_key[AER_NR] = { "corrected", "nonfatal", "fatal" };

static int
aer_sev(const struct klog_line *l)
{
	if (has(l, "(Fatal)"))
		return AER_FATAL;
	if (has(l, "Non-Fatal"))
		return AER_NONFATAL;
	if (has(l, "Corrected") || has(l, "Correctable"))
		return AER_CORRECTED;
	return -1;
}

/* The status bits the kernel names (new and old spellings), corrected ones first. */
static const struct aer_bit {
	const char *name;
	bool corrected;
	bool link; /* a sign of the link's signal: physical or data-link layer */
} aer_bits[] = {
	{ "RxErr", true, true },
	{ "Receiver Error", true, true },
	{ "BadTLP", true, true },
	{ "Bad TLP", true, true },
	{ "BadDLLP", true, true },
	{ "Bad DLLP", true, true },
	{ "Rollover", true, true },
	{ "RELAY_NUM Rollover", true, true },
	{ "Timeout", true, true },
	{ "Replay Timer Timeout", true, true },
	{ "NonFatalErr", true, false },
	{ "Advisory Non-Fatal", true, false },
	{ "CorrIntErr", true, false },
	{ "HeaderOF", true, false },
	{ "Undefined", false, false },
	{ "DLP", false, true },
	{ "Data Link Protocol", false, true },
	{ "SDES", false, true },
	{ "Surprise Down Error", false, true },
	{ "TLP", false, false },
	{ "Poisoned TLP", false, false },
	{ "FCP", false, true },
	{ "Flow Control Protocol", false, true },
	{ "CmpltTO", false, false },
	{ "Completion Timeout", false, false },
	{ "CmpltAbrt", false, false },
	{ "Completer Abort", false, false },
	{ "UnxCmplt", false, false },
	{ "Unexpected Completion", false, false },
	{ "RxOF", false, false },
	{ "Receiver Overflow", false, false },
	{ "MalfTLP", false, false },
	{ "Malformed TLP", false, false },
	{ "ECRC", false, false },
	{ "UnsupReq", false, false },
	{ "Unsupported Request", false, false },
	{ "ACSViol", false, false },
	{ "ACS Violation", false, false },
	{ "UncorrIntErr", false, false },
	{ "BlockedTLP", false, false },
	{ "AtomicOpBlocked", false, false },
	{ "TLPBlockedErr", false, false },
	{ "PoisonTLPBlocked", false, false },
};

static const struct aer_bit *
aer_bit(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(aer_bits); i++)
		if (!strcmp(aer_bits[i].name, name))
			return &aer_bits[i];
	return NULL;
}

/* "received: 0000:01:00.0", "received from 0000:01:00.0", or the old "id=00e5" */
static bool
aer_source(const char *p, const char *end, char *out, size_t size)
{
	unsigned id;
	char hex[8];

	if (is_bdf(p, end)) {
		take(out, size, p, p + 12, "");
		return true;
	}
	if (end - p >= 7 && !memcmp(p, "id=", 3)) {
		take(hex, sizeof(hex), p + 3, p + 7, "");
		if (strlen(hex) == 4 && sscanf(hex, "%x", &id) == 1) {
			snprintf(out, size, "0000:%02x:%02x.%u", id >> 8, (id >> 3) & 0x1f, id & 7);
			return true;
		}
	}
	return false;
}

bool
klog_aer_line(const struct klog_line *l, struct klog_events *ev)
{
	struct pfx p;
	const char *s, *end;
	char a[64];
	int sev;

	if (l->len < 8)
		return false;
	prefix(l, &p);
	end = p.end;
	/* "AER: Corrected error received: 0000:01:00.0", "Correctable error message received from"
	 */
	if (((s = has(l, " error received: ")) && (s += 17)) ||
	    ((s = has(l, " error message received from ")) && (s += 29))) {
		if ((sev = aer_sev(l)) < 0)
			return false;
		if (!aer_source(s, end, a, sizeof(a)))
			snprintf(a, sizeof(a), "%s", p.bdf[0] ? p.bdf : "?");
		klog_event_add(ev, k_aer_recv, l, "%s|%s", a, sev_key[sev]);
		return true;
	}
	/* "PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)" */
	if ((s = has(l, "PCIe Bus Error: severity=")) && (sev = aer_sev(l)) >= 0) {
		const char *t = has(l, "type=");

		take(a, sizeof(a), t ? t + 5 : end, end, ",");
		klog_event_add(ev, k_aer_bus, l, "%s|%s|%s|%s", p.bdf[0] ? p.bdf : "?",
		               sev_key[sev], a[0] ? a : "?", p.drv[0] ? p.drv : "?");
		return true;
	}
	if (!p.bdf[0])
		return false;
	/* "  device [10de:2330] error status/mask=00000001/0000e000" */
	if ((s = has(l, "device [")) && has(l, "error status/mask=")) {
		struct klog_event *e = klog_event_add(ev, k_aer_id, l, "%s", p.bdf);

		if (e->count == 1) {
			take(a, sizeof(a), s + 8, end, "]");
			add_detail(e, "", a);
		}
		return true;
	}
	/* "   [ 0] RxErr                  (First)" */
	s = p.rest;
	if (s < end && *s == '[') {
		const char *q = s + 1;

		while (q < end && *q == ' ')
			q++;
		while (q < end && isdigit((unsigned char)*q))
			q++;
		if (q < end && *q == ']') {
			size_t n;

			q++;
			while (q < end && *q == ' ')
				q++;
			take(a, sizeof(a), q, end, "(");
			n = strlen(a);
			while (n && a[n - 1] == ' ')
				a[--n] = '\0';
			if (aer_bit(a)) {
				klog_event_add(ev, k_aer_bit, l, "%s|%s", p.bdf, a);
				return true;
			}
		}
	}
	if (has(l, "AER: can't recover") || has(l, "AER: device recovery failed")) {
		klog_event_add(ev, k_aer_nrec, l, "%s", p.bdf);
		return true;
	}
	return false;
}

/* --- findings ---------------------------------------------------------------------------- */

/* Add a sentence to f's meaning (dr_meaning() replaces it). */
static void __attribute__((format(printf, 2, 3))) mean(struct dr_finding *f, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (f->meaning)
		strbuf_addf(&sb, "%s ", f->meaning);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	dr_meaning(f, "%s", sb.buf);
	strbuf_release(&sb);
}

/* Quote a line: "[  12.345678] message" */
static void
quote(struct dr_finding *f, const struct klog_line *l)
{
	char when[64];
	int n = l->len > 300 ? 300 : (int)l->len;

	dr_evidence(f, "%s %.*s", klog_when(l, when, sizeof(when)), n, l->msg);
}

/* The first line of a storm, and its count, span and last line. */
static void
storm(struct dr_finding *f, const struct klog_event *e)
{
	char t1[64], t2[64];

	quote(f, &e->first);
	if (e->count > 1) {
		dr_evidence(f, "... %lu such lines from %s to %s; the last:", e->count,
		            klog_when(&e->first, t1, sizeof(t1)),
		            klog_when(&e->last, t2, sizeof(t2)));
		quote(f, &e->last);
	}
}

static const char *
times(unsigned long n, char *buf, size_t size)
{
	if (n == 1)
		snprintf(buf, size, "once");
	else
		snprintf(buf, size, "%lu times", n);
	return buf;
}

/* The events of kind on device bdf (any, when bdf is "?"): how many lines in all. */
static unsigned long
count_on(const struct klog_events *ev, const void *kind, const char *bdf,
         const struct klog_event **first)
{
	unsigned long n = 0;
	char dev[32];

	if (first)
		*first = NULL;
	for (size_t i = 0; i < ev->nr; i++) {
		const struct klog_event *e = &ev->v[i];

		if (e->kind != kind || !same_dev(field(e->key, 0, dev, sizeof(dev)), bdf))
			continue;
		n += e->count;
		if (first && (!*first || e->first.lineno < (*first)->first.lineno))
			*first = e;
	}
	return n;
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
	field(e->key, 0, dev, sizeof(dev));
	field(e->key, 1, ring, sizeof(ring));
	f = dr_add(r, "log.amdgpu.ring_timeout", DR_ERROR,
	           "amdgpu: a job on ring %s%s%s timed out %s", ring,
	           strcmp(dev, "?") ? " of the GPU at " : "", strcmp(dev, "?") ? dev : "",
	           times(e->count, n, sizeof(n)));
	storm(f, e);
	if (e->detail)
		dr_evidence(f, "first timeout: %s", e->detail);
	nok = count_on(ev, k_amd_ring_ok, dev, NULL);
	nfail = count_on(ev, k_amd_ring_fail, dev, NULL);
	if (nok || nfail)
		dr_evidence(f, "the driver reset the ring itself: %lu succeeded, %lu failed", nok,
		            nfail);
	nreset = count_on(ev, k_amd_reset, dev, &reset);
	nfault = count_on(ev, k_amd_fault, dev, &fault);
	mean(f,
	     "A job the %s engine was given (ring %s) did not finish within the driver's "
	     "lockup timeout (amdgpu.lockup_timeout), so the driver declared it hung%s%s%s",
	     ring_engine(ring), ring, e->detail && strstr(e->detail, "process ") ? " (" : "",
	     e->detail && strstr(e->detail, "process ") ? strstr(e->detail, "process ") : "",
	     e->detail && strstr(e->detail, "process ") ? " submitted it)." : ".");
	if (nfault && fault->first.lineno < e->first.lineno)
		mean(f,
		     "GPU page faults on the same GPU came first (log.amdgpu.page_fault): a job "
		     "that reads or writes memory it does not own stops there, and its ring then "
		     "times out. Look at the fault first.");
	if (nreset && reset->first.lineno > e->first.lineno)
		mean(f,
		     "The %lu GPU reset(s) that follow (log.amdgpu.gpu_reset) are the driver's "
		     "recovery from this timeout; the application that owned the job loses its "
		     "context (Vulkan VK_ERROR_DEVICE_LOST, ROCm 'HW Exception').",
		     nreset);
	mean(f,
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

	field(e->key, 0, dev, sizeof(dev));
	nring = count_on(ev, k_amd_ring, dev, &ring);
	nok = count_on(ev, k_amd_reset_ok, dev, &ok);
	nfail = count_on(ev, k_amd_reset_fail, dev, &fail);
	nlost = count_on(ev, k_amd_vram_lost, dev, &lost);
	f = dr_add(r, "log.amdgpu.gpu_reset", nfail ? DR_ERROR : DR_WARNING,
	           "amdgpu: the GPU at %s was reset %s%s", dev, times(e->count, n, sizeof(n)),
	           nfail ? ", and a reset failed" : "");
	storm(f, e);
	if (nok)
		quote(f, &ok->first);
	if (nfail)
		quote(f, &fail->first);
	if (nlost)
		quote(f, &lost->first);
	if (nring && ring->first.lineno < e->first.lineno) {
		char rn[64];

		mean(f,
		     "This reset is the consequence of the ring timeout before it (ring %s, "
		     "log.amdgpu.ring_timeout): the driver resets the GPU to recover from a hung "
		     "job. Find out why the job hung; the reset itself is the cure, not the "
		     "disease.",
		     field(ring->key, 1, rn, sizeof(rn)));
	} else {
		mean(f,
		     "The driver reset the GPU. The log read shows no ring timeout before it, so "
		     "it does not say why: a hang detected otherwise (a firmware or RAS error "
		     "interrupt, told by the lines just before the reset), a reset asked for by "
		     "hand (debugfs amdgpu_gpu_recover), or the start of the hang fell outside "
		     "the log read.");
	}
	if (nlost)
		mean(f, "VRAM was lost: every program using the GPU lost its buffers and must "
		        "restart; desktop sessions often crash with it.");
	if (nfail)
		mean(f, "A reset failed: the GPU stays unusable until the driver is reloaded or "
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

	field(e->key, 0, dev, sizeof(dev));
	field(e->key, 1, hub, sizeof(hub));
	field(e->key, 2, pasid, sizeof(pasid));
	f = dr_add(r, "log.amdgpu.page_fault", DR_WARNING,
	           "amdgpu: GPU page fault%s%s on %s (%s) %s", proc ? " in " : "",
	           proc ? proc + 8 : "", strcmp(dev, "?") ? dev : "the GPU", hub,
	           times(e->count, n, sizeof(n)));
	storm(f, e);
	if (pasid[0])
		dr_evidence(f, "address space: pasid %s%s%s", pasid, proc ? ", " : "",
		            proc ? proc : "");
	mean(f,
	     "The GPU accessed an address that is not mapped in %s GPU address space: the "
	     "GPU's segmentation fault. The offending work is usually killed (ROCm prints "
	     "'Memory access fault by GPU node-N').",
	     proc ? "that process's" : "a process's");
	if (count_on(ev, k_amd_ring, dev, &ring) && ring->first.lineno > e->first.lineno)
		mean(f, "The ring timeout that follows (log.amdgpu.ring_timeout) is most likely "
		        "the consequence: the faulting job stopped.");
	mean(f, "Causes, most likely first: (1) a bug in the program or the library it runs "
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
	bool fatal, missing = e->detail && !strcmp(e->detail, "-2");
	struct dr_finding *f;

	field(e->key, 0, dev, sizeof(dev));
	field(e->key, 1, file, sizeof(file));
	fatal = count_on(ev, k_amd_init_fail, dev, &init) > 0;
	f = dr_add(r, "log.amdgpu.firmware", fatal ? DR_ERROR : DR_WARNING,
	           "amdgpu: firmware %s could not be loaded%s", file,
	           fatal ? ", and the GPU did not initialise" : "");
	storm(f, e);
	if (fatal)
		quote(f, &init->first);
	mean(f, "amdgpu asked for /lib/firmware/%s and got error %s%s. %s", file,
	     e->detail ? e->detail : "?",
	     missing ? " (ENOENT: no such file, in the root file system or the initramfs)" : "",
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

	field(e->key, 0, dev, sizeof(dev));
	field(e->key, 1, sensor, sizeof(sensor));
	ctf = !strncmp(sensor, "CTF", 3);
	f = dr_add(r, "log.amdgpu.over_temp", ctf ? DR_ERROR : DR_WARNING,
	           "amdgpu: the GPU at %s reported over-temperature (%s) %s", dev, sensor,
	           times(e->count, n, sizeof(n)));
	storm(f, e);
	mean(f,
	     "The GPU's thermal interrupt fired: its %s sensor crossed the limit set in its "
	     "firmware, %s. The log gives no temperature; the GPU throttles its clocks to "
	     "cool down%s.",
	     sensor, e->count > 1 ? "repeatedly, over the span shown" : "once",
	     ctf ? ", and a critical thermal fault shuts it (or the machine) down" : "");
	mean(f, "Causes, most likely first: (1) the fan curve or fan control (a quiet consumer "
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

	field(e->key, 0, dev, sizeof(dev));
	field(e->key, 1, drv, sizeof(drv));
	field(e->key, 2, proc, sizeof(proc));
	f = dr_add(r, "log.intel.gpu_hang", DR_WARNING, "%s: GPU hang%s%s on %s, %s", drv,
	           proc[0] ? " in " : "", proc, strcmp(dev, "?") ? dev : "the GPU",
	           times(e->count, n, sizeof(n)));
	storm(f, e);
	mean(f,
	     "The driver found work of %s stuck on the GPU, reset it, and saved an error "
	     "state to /sys/class/drm/card*/error. The program loses its GPU context "
	     "(Vulkan device lost, a frozen tab in a browser).",
	     proc[0] ? proc : "a program");
	if (count_on(ev, k_int_hb, dev, &hb) && hb->first.lineno <= e->first.lineno) {
		char why[96];

		mean(f,
		     "The reset just before it ('%s', log.intel.heartbeat_reset) belongs to "
		     "the same incident: the hang report is the driver's record of it.",
		     field(hb->key, 3, why, sizeof(why)));
	}
	mean(f, "Causes, most likely first: (1) a user-space driver or program bug (Mesa, the "
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

	field(e->key, 0, dev, sizeof(dev));
	field(e->key, 1, drv, sizeof(drv));
	field(e->key, 2, what, sizeof(what));
	field(e->key, 3, why, sizeof(why));
	chip = !strcmp(what, "chip");
	f = dr_add(r, "log.intel.heartbeat_reset", chip ? DR_ERROR : DR_WARNING,
	           "%s: the driver reset %s on %s for '%s', %s", drv, chip ? "the whole GPU" : what,
	           strcmp(dev, "?") ? dev : "the GPU", why, times(e->count, n, sizeof(n)));
	storm(f, e);
	if (e->detail)
		dr_evidence(f, "first reset: %s", e->detail);
	mean(f,
	     "The driver's watchdog (the engine heartbeat, or the preemption timeout) found "
	     "%s no longer making progress and reset %s; the context that ran there is lost%s.",
	     chip ? "the GPU" : what, chip ? "the whole GPU (every context)" : "that engine",
	     e->detail ? " (named above)" : "");
	if (strstr(why, "GuC"))
		mean(f, "The reason names the GuC: the firmware could not reset the engine "
		        "itself, so the driver reset the chip (see log.intel.guc).");
	else if (count_on(ev, k_int_guc, dev, &guc) && guc->first.lineno < e->first.lineno)
		mean(f, "GuC errors came before (log.intel.guc): a GuC that stopped answering "
		        "leaves engines without a scheduler, and the watchdog then fires.");
	mean(f, "Causes, most likely first: (1) a program's work that never ends or cannot be "
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

	field(e->key, 0, dev, sizeof(dev));
	field(e->key, 1, drv, sizeof(drv));
	field(e->key, 2, phase, sizeof(phase));
	init = !strcmp(phase, "init");
	wedged = count_on(ev, k_int_wedged, dev, &w) > 0;
	f = dr_add(r, "log.intel.guc", init || wedged ? DR_ERROR : DR_WARNING,
	           "%s: the GuC %s on %s (%s)", drv,
	           init ? "firmware failed to load or start" : "failed while running",
	           strcmp(dev, "?") ? dev : "the GPU", times(e->count, n, sizeof(n)));
	storm(f, e);
	if (wedged)
		quote(f, &w->first);
	mean(f,
	     "The GuC is the GPU's microcontroller that schedules work on the engines (and, "
	     "on newer GPUs, manages power). %s",
	     init ? "It did not start: without it the driver cannot submit work on GPUs that "
	            "need it (Alder Lake and newer, Arc, every xe GPU), and declares the GPU "
	            "wedged: no rendering, no compute, only the display."
	          : "It stopped answering or failed a request while running: engines hang "
	            "and get reset, and the GPU may be wedged.");
	mean(f, "Causes, most likely first: (1) the firmware file is missing or older than the "
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

	field(e->key, 0, dev, sizeof(dev));
	field(e->key, 1, drv, sizeof(drv));
	field(e->key, 2, gt, sizeof(gt));
	field(e->key, 3, cls, sizeof(cls));
	nfail = count_on(ev, k_int_eng_fail, dev, &fail);
	for (size_t i = 0; i < ev->nr; i++) {
		const struct klog_event *t = &ev->v[i];
		char d[32];

		if (t->kind != k_int_timedout || !same_dev(field(t->key, 0, d, sizeof(d)), dev))
			continue;
		strbuf_addf(&procs, "%s%s (%lu)", procs.len ? ", " : "",
		            field(t->key, 2, p, sizeof(p)), t->count);
	}
	f = dr_add(r, "log.intel.engine_reset", nfail ? DR_ERROR : DR_WARNING,
	           "%s: %s engine %s of %s was reset %s%s", drv, gt, cls,
	           strcmp(dev, "?") ? dev : "the GPU", times(e->count, n, sizeof(n)),
	           nfail ? ", and an engine reset failed" : "");
	storm(f, e);
	if (nfail)
		quote(f, &fail->first);
	if (procs.len)
		dr_evidence(f, "jobs that timed out, by program: %s", procs.buf);
	mean(f,
	     "A job on the %s engine (ccs: compute, rcs: render, bcs: copy, vcs/vecs: video) "
	     "did not finish or could not be preempted in time, and the GuC reset the "
	     "engine; the queue of the program that submitted it is banned%s.",
	     cls, procs.len ? " (the programs are named above)" : "");
	if (count_on(ev, k_int_guc, dev, &guc) && guc->first.lineno < e->first.lineno)
		mean(f, "GuC failures came first (log.intel.guc): a misbehaving GuC causes "
		        "resets; look there first.");
	if (nfail)
		mean(f, "An engine reset failed: the driver falls back to a full GPU reset, "
		        "or wedges the GPU until reboot.");
	mean(f, "Causes, most likely first: (1) a GuC firmware or kernel driver bug: several "
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

/* --- AER findings ------------------------------------------------------------------------ */

/* A device with AER errors: the one named in "received: BDF" or in "PCIe Bus Error". */
struct aer_dev {
	char bdf[32];
	char drv[32];
	unsigned long n[AER_NR];
	const struct klog_line *first[AER_NR], *last[AER_NR];
	char type[AER_NR][48];
	size_t order;
};

/* The GPUs and their upstream ports, from the PCI topology in sysfs. */
struct topo {
	struct pci_gpu *gpus;
	size_t nr;
	char (*up)[16]; /* each GPU's upstream port, "" when on a root bus */
	bool read;
};

static void
topo_read(const struct dr_ctx *ctx, struct topo *t)
{
	struct err err = ERR_INIT;

	memset(t, 0, sizeof(*t));
	if (!ctx || !ctx->cfg || !ctx->cfg->sysfs_root)
		return;
	if (pci_list_gpus(ctx->cfg->sysfs_root, &t->gpus, &t->nr, &err) < 0)
		return;
	t->read = true;
	t->up = xcalloc(t->nr ? t->nr : 1, sizeof(*t->up));
	for (size_t i = 0; i < t->nr; i++) {
		char path[4096], link[4096];
		ssize_t n;

		if (!path_fmt(path, sizeof(path), "%s/bus/pci/devices/%s", ctx->cfg->sysfs_root,
		              t->gpus[i].addr))
			continue;
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		/* ".../pci0000:00/0000:00:01.0/0000:01:00.0": the parent directory */
		{
			char *last = strrchr(link, '/'), *parent;

			if (!last)
				continue;
			*last = '\0';
			parent = strrchr(link, '/');
			parent = parent ? parent + 1 : link;
			if (is_bdf(parent, parent + strlen(parent)))
				snprintf(t->up[i], sizeof(t->up[i]), "%.12s", parent);
		}
	}
}

static void
topo_release(struct topo *t)
{
	free(t->gpus);
	free(t->up);
}

enum role { ROLE_OTHER, ROLE_GPU, ROLE_PORT, ROLE_UNKNOWN };

/* What bdf is to the GPUs; *gpu the GPU it belongs to. */
static enum role
role_of(const struct topo *t, const struct aer_dev *d, size_t *gpu)
{
	for (size_t i = 0; i < t->nr; i++) {
		*gpu = i;
		/* the GPU, or another function of it (its audio) */
		if (!strncmp(t->gpus[i].addr, d->bdf, 10))
			return ROLE_GPU;
		if (t->up[i][0] && !strcmp(t->up[i], d->bdf))
			return ROLE_PORT;
	}
	*gpu = (size_t)-1;
	if (!strcmp(d->drv, "nvidia") || !strcmp(d->drv, "amdgpu") || !strcmp(d->drv, "i915") ||
	    !strcmp(d->drv, "xe") || !strcmp(d->drv, "nouveau"))
		return ROLE_GPU;
	if (!t->read || !t->nr)
		return ROLE_UNKNOWN;
	return ROLE_OTHER;
}

static struct aer_dev *
dev_get(struct aer_dev **v, size_t *nr, size_t *alloc, const char *bdf, size_t order)
{
	struct aer_dev *d;

	for (size_t i = 0; i < *nr; i++)
		if (!strcmp((*v)[i].bdf, bdf)) {
			if (order < (*v)[i].order)
				(*v)[i].order = order;
			return &(*v)[i];
		}
	ALLOC_GROW(*v, *nr + 1, *alloc);
	d = &(*v)[(*nr)++];
	memset(d, 0, sizeof(*d));
	snprintf(d->bdf, sizeof(d->bdf), "%s", bdf);
	d->order = order;
	return d;
}

static int
sev_of(const char *key)
{
	for (int s = 0; s < AER_NR; s++)
		if (!strcmp(key, sev_key[s]))
			return s;
	return -1;
}

static int
by_order(const void *a, const void *b)
{
	const struct aer_dev *x = a, *y = b;

	return x->order < y->order ? -1 : x->order > y->order;
}

/* "RxErr x12, BadTLP x3" for device bdf (corrected or not), into sb; true when a link bit. */
static bool
bits_of(const struct klog_events *ev, const char *bdf, bool corrected, struct strbuf *sb)
{
	bool link = false;
	char d[32], name[64];

	for (size_t i = 0; i < ev->nr; i++) {
		const struct klog_event *e = &ev->v[i];
		const struct aer_bit *b;

		if (e->kind != k_aer_bit || strcmp(field(e->key, 0, d, sizeof(d)), bdf))
			continue;
		b = aer_bit(field(e->key, 1, name, sizeof(name)));
		if (!b || b->corrected != corrected)
			continue;
		link |= b->link;
		strbuf_addf(sb, "%s%s x%lu", sb->len ? ", " : "", name, e->count);
	}
	return link;
}

static const char *
class_name(const struct dr_ctx *ctx, const char *bdf, char *buf, size_t size)
{
	char path[256];
	uint64_t cls;

	snprintf(buf, size, "a device that is not a GPU");
	if (!path_fmt(path, sizeof(path), "bus/pci/devices/%s/class", bdf) ||
	    file_read_u64(ctx->cfg->sysfs_root, path, &cls, NULL) < 0)
		return buf;
	switch (cls >> 16) {
	case 0x01:
		snprintf(buf, size, "a storage controller (class 0x%06llx)",
		         (unsigned long long)cls);
		break;
	case 0x02:
		snprintf(buf, size, "a network controller (class 0x%06llx)",
		         (unsigned long long)cls);
		break;
	case 0x06:
		snprintf(buf, size, "a bridge or port (class 0x%06llx) with no GPU below it",
		         (unsigned long long)cls);
		break;
	case 0x0c:
		snprintf(buf, size, "a USB or serial-bus controller (class 0x%06llx)",
		         (unsigned long long)cls);
		break;
	default:
		snprintf(buf, size, "a device of class 0x%06llx, not a GPU",
		         (unsigned long long)cls);
	}
	return buf;
}

static void
aer_evidence(struct dr_finding *f, const struct aer_dev *d, int s)
{
	char t1[64], t2[64];

	quote(f, d->first[s]);
	if (d->n[s] > 1 && d->last[s] != d->first[s]) {
		dr_evidence(f, "... %lu %s errors from %s to %s; the last:", d->n[s],
		            s == AER_CORRECTED ? "corrected" : "uncorrectable",
		            klog_when(d->first[s], t1, sizeof(t1)),
		            klog_when(d->last[s], t2, sizeof(t2)));
		quote(f, d->last[s]);
	}
}

static void
aer_gpu(const struct dr_ctx *ctx, const struct klog_events *ev, struct dr_report *r,
        const struct aer_dev *d, const struct topo *t, enum role role, size_t gi)
{
	static const char *const ids[AER_NR] = { "log.aer.corrected",
		                                 "log.aer.uncorrected_nonfatal", "log.aer.fatal" };
	char who[160], n[32];
	const struct klog_event *id;

	if (gi != (size_t)-1 && role == ROLE_PORT)
		snprintf(who, sizeof(who), "the PCIe port above the %s GPU at %s (%s)",
		         pci_vendor_name(t->gpus[gi].vendor), t->gpus[gi].addr, d->bdf);
	else if (gi != (size_t)-1)
		snprintf(who, sizeof(who), "the %s GPU at %s", pci_vendor_name(t->gpus[gi].vendor),
		         d->bdf);
	else
		snprintf(who, sizeof(who), "the GPU at %s (%s)", d->bdf, d->drv);
	for (int s = AER_FATAL; s >= 0; s--) {
		struct strbuf bits = STRBUF_INIT;
		struct dr_finding *f;
		enum dr_severity sev;
		bool link;

		if (!d->n[s])
			continue;
		link = bits_of(ev, d->bdf, s == AER_CORRECTED, &bits);
		sev = s != AER_CORRECTED ? DR_ERROR : d->n[s] >= AER_MANY ? DR_WARNING : DR_INFO;
		f = dr_add(r, ids[s], sev, "PCIe %s errors on %s: %s",
		           s == AER_CORRECTED ? "corrected"
		           : s == AER_FATAL   ? "fatal uncorrectable"
		                              : "uncorrectable (non-fatal)",
		           who, times(d->n[s], n, sizeof(n)));
		aer_evidence(f, d, s);
		if (d->type[s][0])
			dr_evidence(f, "error type: %s%s%s", d->type[s],
			            bits.len ? "; status: " : "", bits.buf ? bits.buf : "");
		if (count_on(ev, k_aer_id, d->bdf, &id) && id->detail)
			dr_evidence(f, "device [%s] (PCI vendor:device)", id->detail);
		if (gi != (size_t)-1)
			dr_evidence(f, "%s/bus/pci/devices/%s: upstream port %s",
			            ctx->cfg->sysfs_root, t->gpus[gi].addr,
			            t->up[gi][0] ? t->up[gi] : "(none: root bus)");
		if (s == AER_CORRECTED) {
			mean(f,
			     "The PCIe link %s saw transmission errors that the link layer "
			     "corrected by retrying: no data was lost, but each retry costs "
			     "bandwidth. %s",
			     role == ROLE_PORT ? "between this port and the GPU" : "of the GPU",
			     d->n[s] >= AER_MANY
			             ? "This many, on the GPU's link, mean a marginal link."
			             : "A few over a long uptime are common; many are not.");
			if (link || !bits.len)
				mean(f,
				     "Causes, most likely first: (1) the signal path: a riser or "
				     "extension cable, a card not fully seated, a dirty or worn slot; "
				     "the errors follow the path, not the card, when the card is moved "
				     "or the riser removed; (2) ASPM link power management: errors at "
				     "idle-to-busy transitions, gone with pcie_aspm=off; (3) a link "
				     "speed above what the path carries (Gen4/Gen5 through a Gen3 "
				     "riser): gone when the slot is set to a lower generation in the "
				     "firmware setup; (4) the card or the board, when none of these "
				     "changes anything.");
			dr_action(
			        f,
			        "Update the system firmware (BIOS) and the GPU driver; try booting "
			        "with pcie_aspm=off. Then check 'sudo lspci -vvs %s' for a link "
			        "running below its speed or width, reseat the card, remove any riser "
			        "or cable, try another slot, or set the slot's PCIe generation lower.",
			        gi != (size_t)-1 ? t->gpus[gi].addr : d->bdf);
		} else {
			mean(f,
			     "The link %s lost data it could not recover by retrying%s; drivers "
			     "then see failed transactions, and the GPU may fall off the bus "
			     "(NVIDIA Xid 79, amdgpu resets) until it is reset or the machine "
			     "rebooted.",
			     role == ROLE_PORT ? "between this port and the GPU" : "of the GPU",
			     s == AER_FATAL ? " and the link itself was declared unreliable (the "
			                      "kernel resets it)"
			                    : "");
			if (count_on(ev, k_aer_nrec, d->bdf, NULL))
				mean(f, "The kernel could not recover the device ('can't recover' "
				        "or 'device recovery failed' in the log).");
			mean(f, "Causes, most likely first: (1) the signal path (riser, cable, "
			        "seating, slot): corrected errors on the same link come with it; "
			        "(2) power: the card drops out under load spikes (PSU, its power "
			        "connectors); (3) a GPU that hung and stopped answering "
			        "(completion timeouts, CmpltTO) after a driver or firmware fault; "
			        "(4) the card or board.");
			dr_action(
			        f,
			        "Update the GPU driver and the system firmware; then reseat the card "
			        "and its power connectors, remove risers, try another slot and check "
			        "the power supply's rating. Reboot to recover a GPU that fell off the "
			        "bus.");
		}
		strbuf_release(&bits);
	}
}

void
klog_aer_report(const struct dr_ctx *ctx, const struct klog_events *ev, struct dr_report *r)
{
	struct aer_dev *v = NULL;
	size_t nr = 0, alloc = 0;
	struct topo t;
	/* count per device and severity: received lines and bus-error lines, the larger */
	unsigned long *nrecv = NULL;

	for (size_t i = 0; i < ev->nr; i++) {
		const struct klog_event *e = &ev->v[i];
		char bdf[32], sevk[16], type[48], drv[32];
		struct aer_dev *d;
		int s;

		if (e->kind != k_aer_recv && e->kind != k_aer_bus)
			continue;
		field(e->key, 0, bdf, sizeof(bdf));
		s = sev_of(field(e->key, 1, sevk, sizeof(sevk)));
		if (s < 0)
			continue;
		d = dev_get(&v, &nr, &alloc, bdf, e->order);
		if (e->kind == k_aer_bus) {
			field(e->key, 2, type, sizeof(type));
			field(e->key, 3, drv, sizeof(drv));
			if (strcmp(drv, "?") && strcmp(drv, "pcieport"))
				snprintf(d->drv, sizeof(d->drv), "%s", drv);
			else if (!d->drv[0])
				snprintf(d->drv, sizeof(d->drv), "%s", drv);
			if (!d->type[s][0])
				snprintf(d->type[s], sizeof(d->type[s]), "%s", type);
			d->n[s] += e->count;
		}
		if (!d->first[s] || e->first.lineno < d->first[s]->lineno)
			d->first[s] = &e->first;
		if (!d->last[s] || e->last.lineno > d->last[s]->lineno)
			d->last[s] = &e->last;
	}
	/* the received lines: a count of their own, the larger of the two wins */
	if (nr) {
		nrecv = xcalloc(nr * AER_NR, sizeof(*nrecv));
		for (size_t i = 0; i < ev->nr; i++) {
			const struct klog_event *e = &ev->v[i];
			char bdf[32], sevk[16];
			int s;

			if (e->kind != k_aer_recv)
				continue;
			field(e->key, 0, bdf, sizeof(bdf));
			s = sev_of(field(e->key, 1, sevk, sizeof(sevk)));
			for (size_t j = 0; s >= 0 && j < nr; j++)
				if (!strcmp(v[j].bdf, bdf))
					nrecv[j * AER_NR + (size_t)s] += e->count;
		}
		for (size_t j = 0; j < nr; j++)
			for (int s = 0; s < AER_NR; s++)
				if (nrecv[j * AER_NR + (size_t)s] > v[j].n[s])
					v[j].n[s] = nrecv[j * AER_NR + (size_t)s];
	}
	free(nrecv);
	if (!nr)
		return;
	qsort(v, nr, sizeof(*v), by_order);
	topo_read(ctx, &t);
	for (size_t i = 0; i < nr; i++) {
		struct aer_dev *d = &v[i];
		size_t gi;
		enum role role = role_of(&t, d, &gi);
		int worst = d->n[AER_FATAL]      ? AER_FATAL
		            : d->n[AER_NONFATAL] ? AER_NONFATAL
		                                 : AER_CORRECTED;
		static const char *const ids[AER_NR] = { "log.aer.corrected",
			                                 "log.aer.uncorrected_nonfatal",
			                                 "log.aer.fatal" };
		struct dr_finding *f;
		char what[128], n[32];

		if (!d->n[worst] || !d->first[worst])
			continue;
		if (role == ROLE_GPU || role == ROLE_PORT) {
			aer_gpu(ctx, ev, r, d, &t, role, gi);
			continue;
		}
		if (role == ROLE_OTHER)
			class_name(ctx, d->bdf, what, sizeof(what));
		f = dr_add(r, ids[worst], DR_INFO, "PCIe %s errors on %s%s%s: %s",
		           worst == AER_CORRECTED ? "corrected" : "uncorrectable", d->bdf,
		           role == ROLE_OTHER ? ", " : "", role == ROLE_OTHER ? what : "",
		           role == ROLE_OTHER ? "not the GPU" : "not known to be the GPU's link");
		aer_evidence(f, d, worst);
		dr_evidence(f, "%s errors: %s", sev_key[worst], times(d->n[worst], n, sizeof(n)));
		if (role == ROLE_OTHER) {
			for (size_t g = 0; g < t.nr; g++)
				dr_evidence(f, "%s/bus/pci/devices/%s: the GPU, upstream port %s",
				            ctx->cfg->sysfs_root, t.gpus[g].addr,
				            t.up[g][0] ? t.up[g] : "(none: root bus)");
			mean(f, "The device that reported these errors is neither a GPU nor the "
			        "port above one: they do not explain a GPU problem. (They matter "
			        "for that device: a NIC or NVMe drive on a marginal link.)");
		} else {
			mean(f,
			     "The PCI topology could not be read (no GPU found under %s/bus/pci), "
			     "so whether this device is the GPU or the port above it is unknown.",
			     ctx && ctx->cfg && ctx->cfg->sysfs_root ? ctx->cfg->sysfs_root
			                                             : "/sys");
		}
		dr_action(f,
		          "Nothing for the GPU. Compare the bus id with 'lspci -tv' to see which "
		          "device and slot it is.");
	}
	topo_release(&t);
	free(v);
}

/* --- the catalog ------------------------------------------------------------------------- */

const struct dr_explain dr_catalog_klog_drm[] = {
	{ "log.aer.corrected", "PCIe corrected errors (AER) on the GPU's link",
	  "The PCIe link layer detected bad symbols or packets (RxErr: receiver errors;\n"
	  "BadTLP, BadDLLP: packets with a bad checksum; Rollover, Timeout: replays) and\n"
	  "recovered by resending. Nothing was lost, but a steady stream of them means a\n"
	  "marginal link, which can degrade into uncorrectable errors. doctor blames the\n"
	  "GPU only when the device named in 'error received: BDF' or in the 'PCIe Bus\n"
	  "Error' line is the GPU (or another function of it) or the port directly above\n"
	  "it in /sys/devices; errors on a NIC or an NVMe drive are reported as not the\n"
	  "GPU. Causes, most likely first:\n"
	  "  1. The signal path: a riser or extension cable, a card not fully seated, a\n"
	  "     dirty slot. The errors stay with the path when the card is moved.\n"
	  "  2. ASPM (link power management) transitions: they stop with pcie_aspm=off.\n"
	  "  3. A link generation above what the path carries: they stop when the slot is\n"
	  "     set to a lower generation in the firmware setup.\n"
	  "  4. The card or the board, when none of these changes anything.\n"
	  "Update the system firmware and the driver first; 'lspci -vv' shows the link's\n"
	  "speed and width (LnkSta) against what it can do (LnkCap)." },
	{ "log.aer.fatal", "PCIe fatal uncorrectable errors (AER)",
	  "A fatal uncorrectable error makes the link itself unreliable: the kernel resets\n"
	  "the link, and the device's driver must recover it or lose it. On the GPU's link\n"
	  "this is the typical cause of a GPU falling off the bus (NVIDIA Xid 79). Causes,\n"
	  "most likely first: the signal path (riser, seating, slot), power (the card\n"
	  "dropping out under load: power supply, connectors), a GPU that hung and stopped\n"
	  "answering (completion timeouts) after a driver or firmware fault, then the card\n"
	  "or board. Errors on another device are reported as not the GPU." },
	{ "log.aer.uncorrected_nonfatal", "PCIe uncorrectable non-fatal errors (AER)",
	  "A transaction failed and could not be retried (a completion timeout, an\n"
	  "unsupported request, a poisoned or malformed packet), but the link still works.\n"
	  "The driver sees a failed read or write; a GPU often needs a reset after it.\n"
	  "Causes as for fatal errors: the signal path, power, a hung GPU (CmpltTO), then\n"
	  "the hardware. Errors on another device are reported as not the GPU." },
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
