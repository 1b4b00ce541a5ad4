/*
 * NVIDIA's kernel-log messages (log.nvidia.*): Xid errors, GPUs that fell
 * off the bus, RmInitAdapter failures, user-space/kernel version
 * mismatches and GSP firmware timeouts. Each line is counted as an event
 * keyed by what it is and the GPU's PCI address; the report turns the
 * events into findings, pointing secondary errors at their cause. What an
 * Xid means comes from data/nvidia/xid.tsv (xid_data.S).
 */
#include "doctor/klog.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "doctor/doctor.h"
#include "doctor/klog_dec.h"

extern const char nvidia_xid_tsv[], nvidia_xid_tsv_end[];

/* --- the catalog --------------------------------------------------------------------- */

static struct nv_xid *xids;
static size_t nr_xids;
static char *xid_text; /* the table's text, its cells NUL-terminated in place */
static pthread_once_t xid_once = PTHREAD_ONCE_INIT;

static void
parse_xids(void)
{
	size_t len = (size_t)(nvidia_xid_tsv_end - nvidia_xid_tsv), alloc = 0;
	char *p, *end;
	bool header = true;

	xid_text = xstrndup(nvidia_xid_tsv, len);
	p = xid_text;
	end = xid_text + len;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *cell[8];
		size_t n = 0;

		if (!nl)
			nl = end;
		*nl = '\0';
		if (*p && *p != '#') {
			for (char *c = p; n < 8;) {
				char *tab = strchr(c, '\t');

				cell[n++] = c;
				if (!tab)
					break;
				*tab = '\0';
				c = tab + 1;
			}
			if (header) {
				header = false;
			} else if (n == 8 && isdigit((unsigned char)cell[0][0])) {
				struct nv_xid *x;

				ALLOC_GROW(xids, nr_xids + 1, alloc);
				x = &xids[nr_xids++];
				x->code = (int)strtol(cell[0], NULL, 10);
				x->mnemonic = cell[1];
				x->severity = cell[2];
				x->meaning = cell[3];
				x->causes = cell[4];
				x->immediate = cell[5];
				x->followup = cell[6];
				x->source = cell[7];
			}
		}
		p = nl + 1;
	}
}

const struct nv_xid *
klog_nvidia_xid(int code)
{
	pthread_once(&xid_once, parse_xids);
	for (size_t i = 0; i < nr_xids; i++)
		if (xids[i].code == code)
			return &xids[i];
	return NULL;
}

size_t
klog_nvidia_xids(const struct nv_xid **out)
{
	pthread_once(&xid_once, parse_xids);
	*out = xids;
	return nr_xids;
}

static enum dr_severity
xid_severity(const struct nv_xid *x)
{
	if (!x)
		return DR_WARNING;
	if (!strcmp(x->severity, "error"))
		return DR_ERROR;
	if (!strcmp(x->severity, "info"))
		return DR_INFO;
	return DR_WARNING;
}

/* "1. a; 2. b; 3. c" from "a | b | c" */
static void
add_causes(struct strbuf *sb, const char *causes)
{
	int n = 1;

	if (!strstr(causes, " | ")) {
		strbuf_addstr(sb, causes);
		return;
	}
	for (const char *p = causes; *p;) {
		const char *bar = strstr(p, " | ");
		size_t len = bar ? (size_t)(bar - p) : strlen(p);

		strbuf_addf(sb, "%s%d. %.*s", n > 1 ? "; " : "", n, (int)len, p);
		n++;
		p += len + (bar ? 3 : 0);
	}
}

/* --- the lines ----------------------------------------------------------------------- */

/* The kinds of event (their addresses are what counts). */
static const char K_XID[] = "xid";               /* key "CODE BDF" */
static const char K_FALLEN[] = "fallen";         /* key "BDF": Xid 79 and the driver's own words */
static const char K_GSP[] = "gsp";               /* key "CODE BDF": Xid 119, 120 */
static const char K_GSP_RPC[] = "gsp-rpc";       /* key "GPUn": an RPC timeout without an Xid */
static const char K_RECOVERY[] = "recovery";     /* key "BDF ACTION": Xid 154 */
static const char K_RMINIT[] = "rminit";         /* key "BDF CODE" */
static const char K_API[] = "api";               /* key "CLIENT" */
static const char K_API_MODULE[] = "api-module"; /* key "MODULE": a split message's 2nd line */
static const char K_GPU_AT[] = "gpu-at";         /* key "BDF", detail the UUID */
static const char K_VERSION[] = "version";       /* key "VERSION": the module that loaded */
static const char K_RMINIT_AT[] = "rminit-at";   /* key "BDF": an RmInitAdapter line's GPU */
static const char K_RMINIT_SHORT[] = "rminit-short"; /* key "BDF": "rm_init_adapter failed" */
static const char K_GPU_LINE[] = "gpu-line";         /* key "last", detail the BDF: the last line */
/* "The NVIDIA GPU BDF" that said nothing else */

/* Does [p, end) start with s? */
static bool
starts(const char *p, const char *end, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(end - p) >= n && !memcmp(p, s, n);
}

static const char *
find(const char *p, const char *end, const char *s)
{
	return klog_search(p, end, s);
}

/*
 * A PCI address at *pp ("PCI:0000:3b:00", "0000:3b:00.0", "3b:00") as
 * "0000:3b:00" (domain, bus, device; lower case) into out; advances *pp past
 * it. Returns false when there is none.
 */
static bool
bdf(const char **pp, const char *end, char out[24])
{
	const char *p = *pp, *q;
	char tok[24];
	size_t n = 0, colons = 0;

	if (starts(p, end, "PCI:"))
		p += 4;
	for (q = p; q < end && (isxdigit((unsigned char)*q) || *q == ':' || *q == '.'); q++) {
		if (*q == ':' && q + 1 < end && !isxdigit((unsigned char)q[1]))
			break; /* the ':' after the address */
		if (n + 1 < sizeof(tok))
			tok[n++] = (char)tolower((unsigned char)*q);
	}
	tok[n] = '\0';
	*strchrnul(tok, '.') = '\0';
	for (char *c = tok; *c; c++)
		colons += *c == ':';
	if (colons < 1 || colons > 2 || !isxdigit((unsigned char)tok[0]))
		return false;
	if (colons == 2 && strlen(tok) > 10 && !strncmp(tok, "0000", 4))
		snprintf(out, 24, "%s", tok + 4); /* NVML's 8-digit domain */
	else
		snprintf(out, 24, "%s%s", colons == 1 ? "0000:" : "", tok);
	*pp = q;
	return true;
}

/* The rest of the line from p, at most 240 bytes, as a detail string. */
static char *
rest(const char *p, const char *end)
{
	size_t n = (size_t)(end - p);

	while (n && isspace((unsigned char)p[n - 1]))
		n--;
	return xstrndup(p, n > 240 ? 240 : n);
}

static void
set_detail(struct klog_event *e, const char *p, const char *end)
{
	if (e->count == 1 && !e->detail)
		e->detail = rest(p, end);
}

static bool
xid_line(const struct klog_line *l, const char *p, const char *end, struct klog_events *ev)
{
	char addr[24];
	long code = 0;
	int digits = 0;
	struct klog_event *e;

	/* "Xid (PCI:0000:3b:00): 79, pid=..., name=..., text" */
	p += 5;
	if (!bdf(&p, end, addr))
		return true;
	if (p < end && *p == ')')
		p++;
	if (p < end && *p == ':')
		p++;
	while (p < end && *p == ' ')
		p++;
	while (p < end && isdigit((unsigned char)*p) && digits < 6) {
		code = code * 10 + (*p++ - '0');
		digits++;
	}
	if (!digits)
		return true;
	if (p < end && *p == ',')
		p++;
	while (p < end && *p == ' ')
		p++;
	if (code == 79) {
		e = klog_event_add(ev, K_FALLEN, l, "%s", addr);
	} else if (code == 119 || code == 120) {
		e = klog_event_add(ev, K_GSP, l, "%ld %s", code, addr);
	} else if (code == 154) {
		const char *to = find(p, end, " to ");
		const char *a = to ? to + 4 : p;
		const char *a_end = end;

		while (a_end > a && (a_end[-1] == '.' || isspace((unsigned char)a_end[-1])))
			a_end--;
		e = klog_event_add(ev, K_RECOVERY, l, "%s %.*s", addr, (int)(a_end - a), a);
	} else {
		e = klog_event_add(ev, K_XID, l, "%ld %s", code, addr);
	}
	set_detail(e, p, end);
	return true;
}

/* "loading NVIDIA UNIX [Open ]Kernel Module [for x86_64]  535.104.05  Release Build ..." */
static void
version_line(const struct klog_line *l, const char *p, const char *end, struct klog_events *ev)
{
	while (p < end) {
		const char *q = p;

		while (q < end && (isdigit((unsigned char)*q) || *q == '.'))
			q++;
		if (q > p && isdigit((unsigned char)*p) && memchr(p, '.', (size_t)(q - p)) &&
		    (q == end || *q == ' ')) {
			klog_event_add(ev, K_VERSION, l, "%.*s", (int)(q - p), p);
			return;
		}
		q = memchr(p, ' ', (size_t)(end - p));
		if (!q)
			return;
		p = q + 1;
	}
}

/* "... module has the version Y." in [p, end): Y into out; false when it is not there. */
static bool
module_version(const char *p, const char *end, char *out, size_t size)
{
	const char *k = find(p, end, "module has the version ");
	size_t n = 0;

	if (!k)
		return false;
	k += strlen("module has the version ");
	while (k + n < end && k[n] != ' ' && k[n] != ',' &&
	       !(k[n] == '.' && (k + n + 1 == end || k[n + 1] == ' ')))
		n++;
	if (!n)
		return false;
	snprintf(out, size, "%.*s", (int)n, k);
	return true;
}

/*
 * "API mismatch: the client has the version X, but this kernel module has the
 * version Y.  ..." (some drivers print it over several NVRM lines): key X.
 */
static void
api_line(const struct klog_line *l, const char *p, const char *end, struct klog_events *ev)
{
	const char *c = find(p, end, "client has the version ");
	size_t cl = 0;
	struct klog_event *e;

	if (c) {
		c += strlen("client has the version ");
		while (c + cl < end && c[cl] != ',' && c[cl] != ' ')
			cl++;
	}
	e = klog_event_add(ev, K_API, l, "%.*s", cl ? (int)cl : 1, cl ? c : "?");
	set_detail(e, p, end);
}

/*
 * GSP RPC timeouts printed without an Xid (and the lines that follow one), and the GSP's
 * missed heartbeats ("GPU6 _kgspIsHeartbeatTimedOut: Heartbeat timed out", "GPU6
 * _kgspLogRpcTimeout: ********* GSP Timeout"), which name the GPU first: counted as
 * K_GSP_RPC of "GPUn". Returns whether the line was one.
 */
static bool
gsp_line(const struct klog_line *l, const char *p, const char *end, struct klog_events *ev)
{
	const char *q, *g;
	struct klog_event *e;
	size_t n = 3;

	if ((q = find(p, end, "waiting for RPC response from GPU")) ||
	    (q = find(p, end, "GSP RPC timeout")))
		g = find(q, end, "GPU");
	else if (find(p, end, "rpcRecvPoll timedout"))
		g = NULL;
	else if (find(p, end, "_kgspIsHeartbeatTimedOut: Heartbeat timed out") ||
	         find(p, end, "GSP Timeout"))
		g = starts(p, end, "GPU") ? p : NULL;
	else
		return false;
	while (g && g + n < end && isdigit((unsigned char)g[n]))
		n++;
	e = klog_event_add(ev, K_GSP_RPC, l, "%.*s", g && n > 3 ? (int)n : 1, g && n > 3 ? g : "?");
	set_detail(e, p, end);
	return true;
}

/* Remember addr as the GPU of the last "NVRM: The NVIDIA GPU BDF" line. */
static void
remember_gpu_line(const struct klog_line *l, const char *addr, struct klog_events *ev)
{
	struct klog_event *e = klog_event_add(ev, K_GPU_LINE, l, "last");

	free(e->detail);
	e->detail = xstrdup(addr);
}

/* The GPU of a message split over lines: that of a "The NVIDIA GPU BDF" line at most 3
   lines before l, or "?". */
static const char *
split_gpu(const struct klog_line *l, const struct klog_events *ev, char addr[24])
{
	const struct klog_event *e = klog_event_find(ev, K_GPU_LINE, "last");

	if (e && e->detail && e->last.lineno < l->lineno && l->lineno - e->last.lineno <= 3)
		snprintf(addr, 24, "%s", e->detail);
	else
		snprintf(addr, 24, "?");
	return addr;
}

bool
klog_nvidia_line(const struct klog_line *l, struct klog_events *ev)
{
	const char *p = l->msg, *end = l->msg + l->len, *q;
	char addr[24];
	struct klog_event *e;

	if (l->len < 6 || memcmp(p, "NVRM: ", 6)) {
		/* an Xid quoted inside another program's line ('... kernel output is: "NVRM:
		   Xid (PCI:0000:21:00): 31, ..."') */
		q = find(p, end, "NVRM: Xid (");
		return q ? xid_line(l, q + 6, end, ev) : false;
	}
	p += 6;
	if (starts(p, end, "Xid (")) {
		return xid_line(l, p, end, ev);
	} else if (starts(p, end, "GPU at ")) {
		q = p + 7;
		if (!bdf(&q, end, addr))
			return true;
		if (find(q, end, "fallen off the bus")) {
			klog_event_add(ev, K_FALLEN, l, "%s", addr);
		} else if ((q = find(q, end, "GPU-"))) {
			e = klog_event_add(ev, K_GPU_AT, l, "%s", addr);
			set_detail(e, q, end);
		}
		return true;
	} else if (starts(p, end, "GPU ") || starts(p, end, "The NVIDIA GPU ")) {
		q = p + (*p == 'G' ? 4 : 15);
		if (!bdf(&q, end, addr)) {
			gsp_line(l, p, end, ev);
			return true;
		}
		if (find(q, end, "fallen off the bus")) {
			klog_event_add(ev, K_FALLEN, l, "%s", addr);
		} else if ((q = find(q, end, "RmInitAdapter failed!"))) {
			const char *c = find(q, end, "(");
			const char *ce = c ? memchr(c, ')', (size_t)(end - c)) : NULL;

			klog_event_add(ev, K_RMINIT, l, "%s %.*s", addr,
			               c && ce ? (int)(ce + 1 - c) : 0, c ? c : "");
			klog_event_add(ev, K_RMINIT_AT, l, "%s", addr);
		} else if (find(p, end, "rm_init_adapter failed")) {
			/* the line that follows "RmInitAdapter failed!" (or stands alone) */
			klog_event_add(ev, K_RMINIT_SHORT, l, "%s", addr);
		} else {
			remember_gpu_line(l, addr, ev);
		}
		return true;
	} else if (find(p, end, "fallen off the bus")) {
		/* the last line of a message split over several ("NVRM: The NVIDIA GPU BDF" /
		   "NVRM: (PCI ID: ...) installed in this system has" / "NVRM: fallen off the
		   bus and is not responding to commands."): the GPU is on the first */
		klog_event_add(ev, K_FALLEN, l, "%s", split_gpu(l, ev, addr));
		return true;
	} else if (starts(p, end, "RmInitAdapter failed!")) {
		q = find(p, end, "(");
		const char *qe = q ? memchr(q, ')', (size_t)(end - q)) : NULL;

		klog_event_add(ev, K_RMINIT, l, "? %.*s", q && qe ? (int)(qe + 1 - q) : 0,
		               q ? q : "");
		return true;
	} else if (starts(p, end, "API mismatch:")) {
		api_line(l, p, end, ev);
		return true;
	} else if (starts(p, end, "this kernel module has the version ")) {
		/* the second line of a split API mismatch message */
		if (module_version(p, end, addr, sizeof(addr)))
			klog_event_add(ev, K_API_MODULE, l, "%s", addr);
		return true;
	} else if (starts(p, end, "loading NVIDIA UNIX")) {
		version_line(l, p, end, ev);
		return true;
	}
	gsp_line(l, p, end, ev);
	return true;
}

/* --- the report ---------------------------------------------------------------------- */

/*
 * What the report functions share. Every relation between events (the GPU's
 * UUID, the cause of a secondary Xid, the fatal event a 154 follows) is a
 * look-up in the events' index or in the lists below, never a walk of all
 * the events per event: a log of many GPUs and codes is reported in time
 * linear in its events.
 */
struct nv_report {
	const struct dr_ctx *ctx;
	const struct klog_events *ev;
	const char *version; /* the module version the log names last, or NULL */
	const char *module;  /* the version the last split API-mismatch line names, or NULL */
	/* per event (by index): for a 154, 1 + the index of the fatal event it follows (0:
	   none); for any event, 1 + the index of the first 154 that follows it, and of the
	   next 154 that follows the same one (0: no more) */
	size_t *owner, *rec_first, *rec_next;
};

static int
event_code(const struct klog_event *e)
{
	return (int)strtol(e->key, NULL, 10);
}

/* The "0000:3b:00" of e's key (after the code for K_XID and K_GSP). */
static const char *
event_bdf(const struct klog_event *e, char out[24])
{
	const char *k = e->key;

	if (e->kind == K_XID || e->kind == K_GSP)
		k = strchrnul(k, ' ') + (strchr(k, ' ') ? 1 : 0);
	snprintf(out, 24, "%.*s", (int)strcspn(k, " "), k);
	return out;
}

/* The GPU now at addr, from the snapshot (NVIDIA devices), or NULL. */
static const struct gpu_device *
snap_gpu(const struct dr_ctx *ctx, const char *addr)
{
	unsigned dom, bus, dev;

	if (!ctx || !ctx->snap || sscanf(addr, "%x:%x:%x", &dom, &bus, &dev) != 3)
		return NULL;
	for (size_t i = 0; i < ctx->snap->nr_dev; i++) {
		const struct gpu_device *d = &ctx->snap->dev[i];

		if (d->vendor == VENDOR_NVIDIA && d->pci_valid && d->pci_domain == dom &&
		    d->pci_bus == bus && d->pci_dev == dev)
			return d;
	}
	return NULL;
}

/* "0000:3b:00 (GPU-..., NVIDIA H100)" */
static void
gpu_label(const struct nv_report *nr, const char *addr, char *buf, size_t size)
{
	const struct klog_event *at = klog_event_find(nr->ev, K_GPU_AT, "%s", addr);
	const char *uuid = at ? at->detail : NULL;
	const struct gpu_device *d = snap_gpu(nr->ctx, addr);

	if (!strcmp(addr, "?"))
		snprintf(buf, size, "(address not logged)");
	else if (uuid && d && d->name[0])
		snprintf(buf, size, "%s (%s, %s)", addr, uuid, d->name);
	else if (uuid || (d && d->name[0]))
		snprintf(buf, size, "%s (%s)", addr, uuid ? uuid : d->name);
	else
		snprintf(buf, size, "%s", addr);
}

/* Evidence for e: its first line, and how often and when it repeated. */
static void
evidence_event(const struct nv_report *nr, struct dr_finding *f, const struct klog_event *e,
               const char *what)
{
	char a[48], b[48];
	const char *src = nr->ctx && nr->ctx->klog_source ? nr->ctx->klog_source : "kernel log";

	klog_when(&e->first, a, sizeof(a));
	dr_evidence(f, "%s %s: %.*s", src, a, (int)(e->first.len > 300 ? 300 : e->first.len),
	            e->first.msg);
	if (e->count > 1) {
		klog_when(&e->last, b, sizeof(b));
		dr_evidence(f, "%s %lu times, first %s, last %s (a storm counted as one finding)",
		            what, e->count, a, b);
	}
}

static void
evidence_version(const struct nv_report *nr, struct dr_finding *f)
{
	const struct gpu_snapshot *s = nr->ctx ? nr->ctx->snap : NULL;

	if (nr->version)
		dr_evidence(f, "kernel log: NVIDIA kernel module %s loaded", nr->version);
	if (s && s->nvidia.driver_version[0] && !s->simulated)
		dr_evidence(f, "NVML: driver %s now", s->nvidia.driver_version);
}

/* c when it came before r and after best (both may be NULL), else best */
static const struct klog_event *
later_before(const struct klog_event *best, const struct klog_event *c, const struct klog_event *r)
{
	if (!c || c->first.lineno >= r->first.lineno)
		return best;
	return !best || c->first.lineno > best->first.lineno ? c : best;
}

/*
 * The fatal event (an error-level Xid, a fall off the bus, a GSP error) on
 * r's GPU that a 154 follows: the latest to begin before it. Each of them
 * is one event per GPU (and code), so it is a look-up per fatal code.
 */
static const struct klog_event *
recovery_owner(const struct klog_events *ev, const struct klog_event *r)
{
	const struct klog_event *best = NULL;
	const struct nv_xid *x;
	size_t nx = klog_nvidia_xids(&x);
	char addr[24];

	event_bdf(r, addr);
	best = later_before(best, klog_event_find(ev, K_FALLEN, "%s", addr), r);
	best = later_before(best, klog_event_find(ev, K_GSP, "119 %s", addr), r);
	best = later_before(best, klog_event_find(ev, K_GSP, "120 %s", addr), r);
	for (size_t i = 0; i < nx; i++)
		if (xid_severity(&x[i]) == DR_ERROR)
			best = later_before(
			        best, klog_event_find(ev, K_XID, "%d %s", x[i].code, addr), r);
	return best;
}

/* The owners of the 154s (nr->owner) and each owner's list of them, in the log's order. */
static void
index_recoveries(struct nv_report *nr)
{
	size_t n = nr->ev->nr ? nr->ev->nr : 1;
	size_t *last = xcalloc(n, sizeof(*last));

	nr->owner = xcalloc(n, sizeof(*nr->owner));
	nr->rec_first = xcalloc(n, sizeof(*nr->rec_first));
	nr->rec_next = xcalloc(n, sizeof(*nr->rec_next));
	for (size_t i = 0; i < nr->ev->nr; i++) {
		const struct klog_event *o;
		size_t k;

		if (nr->ev->v[i].kind != K_RECOVERY || !(o = recovery_owner(nr->ev, &nr->ev->v[i])))
			continue;
		k = (size_t)(o - nr->ev->v);
		nr->owner[i] = k + 1;
		if (last[k])
			nr->rec_next[last[k] - 1] = i + 1;
		else
			nr->rec_first[k] = i + 1;
		last[k] = i + 1;
	}
	free(last);
}

/* "GPU Reset Required" out of "0x1 (GPU Reset Required)" */
static void
recovery_action(const struct klog_event *r, char *buf, size_t size)
{
	const char *k = strchr(r->key, ' ');
	const char *o = k ? strchr(k, '(') : NULL;

	if (o)
		snprintf(buf, size, "%.*s", (int)strcspn(o + 1, ")"), o + 1);
	else
		snprintf(buf, size, "%s", k ? k + 1 : "?");
}

/* Attach the 154s that follow e: evidence, and the action they announce. */
static void
attach_recovery(const struct nv_report *nr, struct dr_finding *f, const struct klog_event *e,
                struct strbuf *action)
{
	for (size_t i = nr->rec_first[e - nr->ev->v]; i; i = nr->rec_next[i - 1]) {
		const struct klog_event *r = &nr->ev->v[i - 1];
		char when[48], act[96];

		recovery_action(r, act, sizeof(act));
		evidence_event(nr, f, r, "Xid 154 repeated");
		if (strcmp(act, "None") && strcmp(act, "0x0")) {
			klog_when(&r->first, when, sizeof(when));
			strbuf_addf(action,
			            "The driver announced the recovery (Xid 154 at %s): %s. ", when,
			            act);
		}
	}
}

/*
 * The cause of a secondary Xid: the first event of one of codes on the same
 * GPU that began before e's last line (one event per code and GPU: a look-up
 * per code).
 */
static const struct klog_event *
cause_before(const struct klog_events *ev, const struct klog_event *e, const int *codes, size_t n)
{
	const struct klog_event *best = NULL;
	char addr[24];

	event_bdf(e, addr);
	for (size_t j = 0; j < n; j++) {
		const struct klog_event *c = klog_event_find(ev, K_XID, "%d %s", codes[j], addr);

		if (c && c != e && c->first.lineno < e->last.lineno &&
		    (!best || c->order < best->order))
			best = c;
	}
	return best;
}

static const struct klog_event *
find_xid(const struct klog_events *ev, const struct klog_event *e, int code)
{
	return cause_before(ev, e, &code, 1);
}

static const struct klog_event *
find_xid_after(const struct klog_events *ev, const struct klog_event *e, int code)
{
	char addr[24];
	const struct klog_event *c = klog_event_find(ev, K_XID, "%d %s", code, event_bdf(e, addr));

	return c && c->last.lineno > e->first.lineno ? c : NULL;
}

static const int nvlink_codes[] = { 74, 144, 145, 146, 147, 148, 149, 150 };
static const int cause45[] = { 48, 74, 144, 145, 146, 147, 148, 149, 150 };

/* N of "caused by previous Xid N" on e's first line (Xid 45: the driver names the error
   whose channels it cleaned up), or 0. */
static int
named_cause(const struct klog_event *e)
{
	const char *p = e->detail ? strstr(e->detail, "caused by previous Xid ") : NULL;

	return p ? (int)strtol(p + strlen("caused by previous Xid "), NULL, 10) : 0;
}

/*
 * Xid 45 whose line names its cause ("caused by previous Xid N"). With Xid N of the same
 * GPU in the log, it is that one's clean-up (info); without it (an excerpt, or an earlier
 * boot), the finding leads to Xid N: its meaning, causes and actions, its severity.
 */
static void
report_xid45_named(const struct nv_report *nr, const struct klog_event *e, int named,
                   struct dr_report *r)
{
	const struct nv_xid *x = klog_nvidia_xid(named);
	const struct klog_event *c;
	struct strbuf m = STRBUF_INIT, a = STRBUF_INIT;
	char addr[24], label[200], times[48] = "";
	struct dr_finding *f;

	gpu_label(nr, event_bdf(e, addr), label, sizeof(label));
	c = named == 79 ? klog_event_find(nr->ev, K_FALLEN, "%s", addr)
	                : find_xid(nr->ev, e, named);
	if (e->count > 1)
		snprintf(times, sizeof(times), ", %lu times", e->count);
	if (c) {
		f = dr_add(r, "log.nvidia.xid", DR_INFO,
		           "Xid 45 on GPU %s%s: clean-up after Xid %d on the same GPU (secondary)",
		           label, times, named);
		dr_meaning(
		        f,
		        "The driver cleaned up the channels of the programs that Xid %d hit, and "
		        "says so (\"caused by previous Xid %d\"): this one is secondary and needs "
		        "nothing of its own.",
		        named, named);
		dr_action(f, "Follow the finding for Xid %d on this GPU.", named);
		evidence_event(nr, f, e, "repeated");
		evidence_event(nr, f, c, "cause repeated");
		return;
	}
	f = dr_add(r, "log.nvidia.xid", xid_severity(x),
	           "Xid 45 on GPU %s%s: clean-up after Xid %d (%s), whose line is not in this log",
	           label, times, named, x ? x->meaning : "not in gpuscope's catalog");
	evidence_event(nr, f, e, "repeated");
	strbuf_addf(&m,
	            "Xid 45 is the driver cleaning up the channels of programs after an earlier "
	            "error, and its line names that error: \"caused by previous Xid %d\". Xid %d "
	            "is the cause to look at; its own line is not in this log (before the excerpt "
	            "starts, or in an earlier boot's log). ",
	            named, named);
	if (x) {
		strbuf_addf(&m, "Xid %d (%s): %s. ", named, x->mnemonic, x->meaning);
		strbuf_addstr(&m, strstr(x->causes, " | ") ? "Possible causes, most likely first: "
		                                           : "Cause: ");
		add_causes(&m, x->causes);
		strbuf_addstr(&m, ".");
		strbuf_addf(&a,
		            "Find the Xid %d lines ('journalctl -k -b', or 'journalctl -k -b -1' "
		            "for the boot before). Now: %s. If it recurs: %s.",
		            named, x->immediate, x->followup);
	} else {
		strbuf_addf(&a,
		            "Find the Xid %d lines ('journalctl -k -b') and look the code up in "
		            "NVIDIA's Xid catalog (docs.nvidia.com/deploy/xid-errors).",
		            named);
	}
	dr_meaning(f, "%s", m.buf);
	dr_action(f, "%s", a.buf);
	strbuf_release(&m);
	strbuf_release(&a);
}

static void
report_xid(const struct nv_report *nr, const struct klog_event *e, struct dr_report *r)
{
	int code = event_code(e);
	const struct nv_xid *x = klog_nvidia_xid(code);
	enum dr_severity sev = xid_severity(x);
	const struct klog_event *cause = NULL, *c;
	struct strbuf m = STRBUF_INIT, a = STRBUF_INIT, rec = STRBUF_INIT;
	char addr[24], label[200], when[48], times[48] = "";
	struct dr_finding *f;

	gpu_label(nr, event_bdf(e, addr), label, sizeof(label));
	if (e->count > 1)
		snprintf(times, sizeof(times), ", %lu times", e->count);
	if (code == 45)
		cause = cause_before(nr->ev, e, cause45, sizeof(cause45) / sizeof(cause45[0]));
	else if (code == 94 || code == 95 || code == 48)
		cause = cause_before(nr->ev, e, nvlink_codes,
		                     sizeof(nvlink_codes) / sizeof(nvlink_codes[0]));
	if (code == 45 && !cause && named_cause(e) > 0) {
		report_xid45_named(nr, e, named_cause(e), r);
		return;
	}
	if (code == 45 && cause)
		sev = DR_INFO;

	if (x) {
		strbuf_addf(&m, "Xid %d (%s): %s. ", code, x->mnemonic, x->meaning);
	} else {
		strbuf_addf(&m,
		            "Xid %d is not in gpuscope's catalog (data/nvidia/xid.tsv); NVIDIA's "
		            "Xid catalog (docs.nvidia.com/deploy/xid-errors) describes it. ",
		            code);
	}
	if (cause) {
		klog_when(&cause->first, when, sizeof(when));
		if (code == 45)
			strbuf_addf(
			        &m,
			        "It follows Xid %d on the same GPU (first at %s): the driver "
			        "cleaned up the work that error hit, so this one is secondary and "
			        "needs nothing of its own. ",
			        event_code(cause), when);
		else
			strbuf_addf(
			        &m,
			        "It follows NVLink Xid %d on the same GPU (first at %s), which can "
			        "cause it, here or on the peer GPU: look at that one first. ",
			        event_code(cause), when);
	}
	if (code == 63 || code == 64) {
		if ((c = find_xid(nr->ev, e, 48))) {
			klog_when(&c->first, when, sizeof(when));
			strbuf_addf(
			        &m,
			        "It follows the double-bit ECC error (Xid 48, first at %s) on this "
			        "GPU: it is the driver %s the failed memory row. ",
			        when, code == 63 ? "recording the remap of" : "failing to remap");
		}
	}
	if (code == 48) {
		if ((c = find_xid_after(nr->ev, e, 63)))
			strbuf_addf(&m, "Xid 63 follows: the failed row was remapped, which takes "
			                "effect at the next GPU reset. ");
		if ((c = find_xid_after(nr->ev, e, 64)))
			strbuf_addf(&m, "Xid 64 follows: the row could not be remapped, which is a "
			                "reason for an RMA. ");
	}
	if (code == 94 && find_xid_after(nr->ev, e, 95))
		strbuf_addf(&m,
		            "The same GPU also had an uncontained error (Xid 95): see that one. ");
	if (code == 95 && find_xid(nr->ev, e, 94))
		strbuf_addf(&m, "Contained errors (Xid 94) came before it on the same GPU. ");
	if (x && !(code == 45 && cause)) {
		strbuf_addstr(&m, strstr(x->causes, " | ") ? "Possible causes, most likely first: "
		                                           : "Cause: ");
		add_causes(&m, x->causes);
		strbuf_addstr(&m, ".");
		if (strstr(x->causes, " | "))
			strbuf_addstr(&m, " This log alone does not say which one it is.");
	}

	if (code == 45 && cause) {
		strbuf_addf(&a, "Follow the finding for Xid %d on this GPU.", event_code(cause));
	} else {
		if (x)
			strbuf_addf(&a, "Now: %s. If it recurs: %s.", x->immediate, x->followup);
		else
			strbuf_addstr(&a, "Look the code up in NVIDIA's Xid catalog; if the GPU "
			                  "misbehaves, reset it (nvidia-smi -r) or reboot.");
		if ((code == 63 || code == 64) && find_xid(nr->ev, e, 48))
			strbuf_addstr(&a,
			              " With the Xid 48 before it: drain the GPU's work and reset "
			              "it (nvidia-smi -r) or reboot.");
	}

	if (code == 45 && cause)
		f = dr_add(r, "log.nvidia.xid", sev,
		           "Xid 45 on GPU %s%s: clean-up after Xid %d on the same GPU (secondary)",
		           label, times, event_code(cause));
	else
		f = dr_add(r, "log.nvidia.xid", sev, "Xid %d on GPU %s%s: %s", code, label, times,
		           x ? x->meaning : "not in the catalog");
	evidence_event(nr, f, e, "repeated");
	if (cause)
		evidence_event(nr, f, cause, "cause repeated");
	attach_recovery(nr, f, e, &rec);
	strbuf_rtrim(&m);
	dr_meaning(f, "%s", m.buf);
	dr_action(f, "%s%s", rec.buf, a.buf);
	strbuf_release(&m);
	strbuf_release(&a);
	strbuf_release(&rec);
}

/* One finding per GPU that fell off the bus, with its checklist, software first. */
static void
report_fallen(const struct nv_report *nr, const struct klog_event *e, struct dr_report *r)
{
	const struct nv_xid *x = klog_nvidia_xid(79);
	const struct gpu_device *d = snap_gpu(nr->ctx, e->key);
	struct strbuf m = STRBUF_INIT, a = STRBUF_INIT, rec = STRBUF_INIT;
	char label[200], when[48], at[64];
	struct dr_finding *f;

	gpu_label(nr, e->key, label, sizeof(label));
	klog_when(&e->first, when, sizeof(when));
	if (e->first.clock == KLOG_WALL) {
		time_t s = (time_t)e->first.t - 60;
		struct tm tm;

		gmtime_r(&s, &tm);
		strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%SZ", &tm);
	} else {
		snprintf(at, sizeof(at), "TIME");
	}

	strbuf_addstr(&m, "The host lost the GPU's PCIe link: the GPU stopped answering, every "
	                  "program using it failed, and it stays unusable until the machine is "
	                  "rebooted. Possible causes, most likely first: ");
	add_causes(&m, x ? x->causes : "not in the catalog");
	strbuf_addstr(&m, ". The log line alone cannot tell these apart: PCIe errors (log.aer) "
	                  "before it point at the link, a repeat on the same GPU in another slot "
	                  "at the GPU, a repeat in the same slot with another GPU at the slot or "
	                  "its power.");

	strbuf_addstr(&a, "Check in this order, cheapest first: ");
	strbuf_addstr(&a, "1. Driver: ");
	if (nr->version)
		strbuf_addf(&a, "the log shows driver %s; ", nr->version);
	strbuf_addstr(&a, "update to the current driver of your branch (and the system BIOS): some "
	                  "of these are driver or firmware bugs fixed in later releases. ");
	strbuf_addstr(&a, "2. Power: ");
	if (d && dev_has(d, GF_POWER_LIMIT))
		strbuf_addf(&a, "this GPU may draw up to %.0f W (its power limit), and ",
		            d->v[GF_POWER_LIMIT]);
	strbuf_addstr(&a,
	              "the supply must carry each GPU's power limit plus the rest of the machine, "
	              "with headroom for millisecond spikes well above the limit; use one "
	              "cable per power connector (no splitters or daisy chains) and check "
	              "they are fully seated; capping power (nvidia-smi -pl) or clocks "
	              "(nvidia-smi -lgc) as a test tells whether it is power. ");
	strbuf_addstr(&a, "3. PCIe: a riser, the slot or an external cable (OCuLink, "
	                  "Thunderbolt) can drop the link; look at this report's log.aer findings "
	                  "for errors on this GPU's link before the event; rule out link "
	                  "power-state changes by booting with pcie_aspm=off, and try a lower "
	                  "PCIe generation in the BIOS. ");
	strbuf_addf(&a,
	            "4. Temperature before the event: if gpuscope recorded this machine, "
	            "'gpuscope replay FILE status --at %s' shows the GPUs just before it. ",
	            at);
	strbuf_addstr(&a, "5. Reseat the card and its power connectors; then swap it with "
	                  "another GPU or slot to see whether the fault follows the GPU or the "
	                  "slot; if it follows the GPU, ask for an RMA.");

	f = dr_add(r, "log.nvidia.fallen_off_bus", DR_ERROR, "GPU %s fell off the bus at %s%s",
	           label, when, e->count > 1 ? " (repeated)" : "");
	evidence_event(nr, f, e, "lines about it");
	evidence_version(nr, f);
	if (d && dev_has(d, GF_POWER_LIMIT))
		dr_evidence(f, "NVML: power limit %.0f W", d->v[GF_POWER_LIMIT]);
	attach_recovery(nr, f, e, &rec);
	dr_meaning(f, "%s", m.buf);
	dr_action(f, "%sReboot first. %s", rec.buf, a.buf);
	strbuf_release(&m);
	strbuf_release(&a);
	strbuf_release(&rec);
}

static void
report_gsp(const struct nv_report *nr, const struct klog_event *e, struct dr_report *r,
           bool add_rpc)
{
	int code = e ? event_code(e) : 0;
	const struct nv_xid *x = klog_nvidia_xid(code ? code : 119);
	struct strbuf m = STRBUF_INIT, rec = STRBUF_INIT;
	char addr[24] = "?", label[200];
	struct dr_finding *f;

	if (e)
		event_bdf(e, addr);
	gpu_label(nr, addr, label, sizeof(label));
	if (code)
		strbuf_addf(&m, "Xid %d (%s): %s. ", code, x->mnemonic, x->meaning);
	else
		strbuf_addstr(&m, "The driver timed out waiting for the GPU System Processor (GSP) "
		                  "firmware, without an Xid naming the GPU. ");
	strbuf_addstr(&m, "Possible causes, most likely first: ");
	add_causes(&m, x->causes);
	strbuf_addstr(&m, ". A bug is the likelier cause when it started with a driver update or "
	                  "a resume from suspend; hardware when it stays on a current driver.");

	if (e)
		f = dr_add(r, "log.nvidia.gsp_timeout", DR_ERROR,
		           "GSP firmware %s on GPU %s (Xid %d%s)",
		           code == 120 ? "error" : "timeout", label, code,
		           e->count > 1 ? ", repeated" : "");
	else
		f = dr_add(r, "log.nvidia.gsp_timeout", DR_ERROR,
		           "the driver timed out waiting for the GSP firmware");
	if (e)
		evidence_event(nr, f, e, "repeated");
	for (size_t i = 0; add_rpc && i < nr->ev->nr; i++)
		if (nr->ev->v[i].kind == K_GSP_RPC)
			evidence_event(nr, f, &nr->ev->v[i], "RPC timeout lines");
	evidence_version(nr, f);
	if (e)
		attach_recovery(nr, f, e, &rec);
	dr_meaning(f, "%s", m.buf);
	dr_action(f,
	          "%sReset the GPU (nvidia-smi -r) or reboot. Update to the current driver of "
	          "your branch (timeouts like this were fixed in several releases, such as "
	          "525.105.17). If it persists on a current driver, run the GPU's diagnostics "
	          "and report it to NVIDIA with nvidia-bug-report.sh.",
	          rec.buf);
	strbuf_release(&m);
	strbuf_release(&rec);
}

static void
report_recovery_alone(const struct nv_report *nr, const struct klog_event *e, struct dr_report *r)
{
	const struct nv_xid *x = klog_nvidia_xid(154);
	char addr[24], label[200], act[96];
	bool none;
	struct dr_finding *f;

	recovery_action(e, act, sizeof(act));
	none = !strcmp(act, "None") || !strcmp(act, "0x0");
	gpu_label(nr, event_bdf(e, addr), label, sizeof(label));
	f = dr_add(r, "log.nvidia.xid", none ? DR_INFO : DR_WARNING,
	           "Xid 154 on GPU %s: the driver says the GPU needs: %s", label, act);
	evidence_event(nr, f, e, "repeated");
	dr_meaning(f,
	           "Xid 154 (%s): %s. The error it is about is not in this log (it may have "
	           "been rotated out, or come before the part that was read).",
	           x ? x->mnemonic : "GPU_RECOVERY_ACTION_CHANGED",
	           x ? x->meaning : "the recovery action changed");
	dr_action(f, "%s", x ? x->immediate : "Do what it announces.");
}

static void
report_rminit(const struct nv_report *nr, const struct klog_event *e, struct dr_report *r)
{
	char addr[24], label[200];
	const char *code = strchr(e->key, ' ');
	struct dr_finding *f;

	event_bdf(e, addr);
	gpu_label(nr, addr, label, sizeof(label));
	f = dr_add(r, "log.nvidia.rm_init_failed", DR_ERROR,
	           "the driver could not initialise GPU %s (RmInitAdapter failed%s%s%s)", label,
	           code && code[1] ? " " : "", code && code[1] ? code + 1 : "",
	           e->count > 1 ? ", repeated" : "");
	evidence_event(nr, f, e, "tried");
	evidence_version(nr, f);
	dr_meaning(f,
	           "The nvidia module loaded, but bringing this GPU up failed, so it cannot be "
	           "used. The code in parentheses names the failing step for NVIDIA, not the "
	           "cause. Possible causes, most likely first: 1. a driver that does not fit: "
	           "too old or too new for this GPU, the open module on a GPU it does not "
	           "support, or mixed versions (see log.nvidia.api_mismatch); 2. the GPU's "
	           "firmware (GSP) failing to start; 3. firmware settings: a large-BAR GPU "
	           "without 'Above 4G decoding' in the BIOS, or a virtual machine's passthrough "
	           "set-up; 4. power or PCIe trouble (see log.nvidia.fallen_off_bus, Xid 54 and "
	           "log.aer); 5. a faulty GPU. Lines just before it in the log usually say which.");
	dr_action(f, "Read the NVRM lines just before it (sudo dmesg | grep -i nvrm). Check the "
	             "driver supports this GPU and that all its components have one version; "
	             "reinstall the current driver of your branch, then reboot. Enable 'Above 4G "
	             "decoding' in the BIOS for data-centre GPUs. If it persists, run "
	             "nvidia-bug-report.sh and try the GPU in another machine or slot.");
}

static void
report_api(const struct nv_report *nr, const struct klog_event *e, struct dr_report *r)
{
	const char *client = e->key;
	char module[64] = "?";
	struct dr_finding *f;

	if (!module_version(e->last.msg, e->last.msg + e->last.len, module, sizeof(module)) &&
	    !module_version(e->first.msg, e->first.msg + e->first.len, module, sizeof(module)) &&
	    nr->module)
		snprintf(module, sizeof(module), "%s", nr->module);
	f = dr_add(r, "log.nvidia.api_mismatch", DR_ERROR,
	           "NVIDIA user-space libraries %s talk to kernel module %s: versions differ%s",
	           client, module, e->count > 1 ? " (repeated)" : "");
	evidence_event(nr, f, e, "refused");
	evidence_version(nr, f);
	dr_meaning(f,
	           "The driver's libraries (libcuda, libnvidia-ml) must have the kernel module's "
	           "exact version; the module refuses a client that does not, so CUDA and "
	           "nvidia-smi fail. Likely causes, most likely first: 1. the driver was updated "
	           "and the old module is still loaded (no reboot since); 2. a container or "
	           "another install brings libraries of another version; 3. two driver installs "
	           "(distribution packages and NVIDIA's .run installer) mixed.");
	dr_action(f,
	          "Reboot, or unload and reload the modules (sudo rmmod nvidia_uvm nvidia_drm "
	          "nvidia_modeset nvidia; sudo modprobe nvidia), so module %s is replaced by the "
	          "installed one. If it persists, check which libraries are in use (ldconfig -p "
	          "| grep libcuda; in a container, how the NVIDIA runtime mounts them) and "
	          "reinstall one driver so every component has one version.",
	          module);
}

void
klog_nvidia_report(const struct dr_ctx *ctx, const struct klog_events *ev, struct dr_report *r)
{
	struct nv_report nr = { ctx, ev, NULL, NULL, NULL, NULL, NULL };
	bool gsp_xid = false, rpc = false;

	for (size_t i = 0; i < ev->nr; i++) {
		if (ev->v[i].kind == K_VERSION)
			nr.version = ev->v[i].key;
		if (ev->v[i].kind == K_API_MODULE)
			nr.module = ev->v[i].key;
		gsp_xid |= ev->v[i].kind == K_GSP;
		rpc |= ev->v[i].kind == K_GSP_RPC;
	}
	index_recoveries(&nr);
	for (size_t i = 0; i < ev->nr; i++) {
		const struct klog_event *e = &ev->v[i];

		if (e->kind == K_XID) {
			report_xid(&nr, e, r);
		} else if (e->kind == K_FALLEN) {
			report_fallen(&nr, e, r);
		} else if (e->kind == K_GSP) {
			report_gsp(&nr, e, r, rpc);
			rpc = false; /* the RPC lines go with the first */
		} else if (e->kind == K_RECOVERY) {
			if (!nr.owner[i])
				report_recovery_alone(&nr, e, r);
		} else if (e->kind == K_RMINIT) {
			report_rminit(&nr, e, r);
		} else if (e->kind == K_RMINIT_SHORT) {
			if (!klog_event_find(ev, K_RMINIT_AT, "%s", e->key))
				report_rminit(&nr, e, r);
		} else if (e->kind == K_API) {
			report_api(&nr, e, r);
		}
	}
	if (rpc && !gsp_xid)
		report_gsp(&nr, NULL, r, true);
	free(nr.owner);
	free(nr.rec_first);
	free(nr.rec_next);
}
