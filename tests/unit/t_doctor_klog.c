/*
 * Tests of doctor's kernel-log check (log.*, NVIDIA's part): each fixture
 * of tests/fixtures/doctor/klog with the findings its .expect lists; storms
 * counted once; secondary errors pointed at their cause; the recovery
 * action of Xid 154 attached to the Xid before it; the power limit of the
 * GPU that fell off the bus; log.unread; the Xid catalog (data/nvidia/
 * xid.tsv) against the explanation of log.nvidia.xid. Every log.nvidia.*
 * id emitted must be in the catalog, and every one of its ids emitted.
 */
#include "doctor/doctor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu.h"
#include "core/strbuf.h"
#include "doctor/klog.h"
#include "doctor_test.h"
#include "harness.h"
#include "tree.h"

static const char *seen[32];
static size_t nr_seen, nr_findings, nr_unexplained;

/* Every id a test saw: checked against the catalog once, at the end. */
static void
remember(const struct dr_report *r)
{
	for (size_t i = 0; i < r->nr; i++) {
		size_t j;

		nr_findings++;
		if (!dr_explain_find(r->f[i].id)) {
			diag("not in the catalog: %s", r->f[i].id);
			nr_unexplained++;
		}
		for (j = 0; j < nr_seen; j++)
			if (!strcmp(seen[j], r->f[i].id))
				break;
		if (j == nr_seen && nr_seen < sizeof(seen) / sizeof(seen[0]))
			seen[nr_seen++] = r->f[i].id;
	}
}

static void
run(const char *text, const struct gpu_snapshot *snap, struct dr_report *r)
{
	struct dr_ctx ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx.klog = text;
	ctx.klog_source = "test.log";
	ctx.snap = snap;
	dr_check_klog(&ctx, r);
	remember(r);
}

static enum dr_severity
sev_of(const char *s)
{
	if (!strcmp(s, "error"))
		return DR_ERROR;
	if (!strcmp(s, "warning"))
		return DR_WARNING;
	if (!strcmp(s, "info"))
		return DR_INFO;
	return DR_OK;
}

static void
dump(const struct dr_report *r)
{
	struct strbuf sb = STRBUF_INIT;

	dr_text(&sb, r, false);
	for (char *p = sb.buf, *nl; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		diag("%.*s", nl ? (int)(nl - p) : (int)strlen(p), p);
	}
	strbuf_release(&sb);
}

static void
test_fixture(const char *name)
{
	char path[2300], exp[2300];
	char *text, *want;
	struct dr_report r = DR_REPORT_INIT;
	bool failed = false;

	fmt(path, sizeof(path), "%s/doctor/klog/%s.log", fixtures, name);
	fmt(exp, sizeof(exp), "%s/doctor/klog/%s.expect", fixtures, name);
	text = slurp(path, NULL);
	want = slurp(exp, NULL);
	run(text, NULL, &r);
	char *save = NULL;

	for (char *line = strtok_r(want, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char id[64], sev[16];
		int n, off = 0;

		if (!strcmp(line, "none")) {
			failed |= !ok(r.nr == 1 && !strcmp(r.f[0].id, "log.ok") &&
			                      r.f[0].severity == DR_OK,
			              "%s: no GPU error, said as one ok line (log.ok)", name);
		} else if (sscanf(line, "count %63s %d", id, &n) == 2) {
			size_t got = count_id(&r, id);

			failed |= !ok(got == (size_t)n, "%s: %d x %s (got %zu)", name, n, id, got);
		} else if (sscanf(line, "%63s %15s %n", id, sev, &off) == 2 && off) {
			const char *text_want = line + off;
			bool found = false;

			for (size_t i = 0; i < r.nr; i++)
				if (!strcmp(r.f[i].id, id) && r.f[i].severity == sev_of(sev) &&
				    says(&r.f[i], text_want))
					found = true;
			failed |= !ok(found, "%s: %s %s says '%s'", name, id, sev, text_want);
		}
	}
	if (failed)
		dump(&r);
	dr_report_release(&r);
	free(text);
	free(want);
}

/* A storm of a million-line log: one finding, counted, first and last time. */
static void
test_storm(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;

	for (int i = 0; i < 20000; i++) {
		strbuf_addf(&sb,
		            "[%6d.%06d] NVRM: Xid (PCI:0000:41:00): 31, pid=%d, name=a.out, "
		            "Ch 00000010, intr 10000000. MMU Fault: ENGINE GRAPHICS\n",
		            10 + i, i, 1000 + i % 7);
		if (i % 1000 == 0)
			strbuf_addf(&sb, "[%6d.%06d] eth0: link up\n", 10 + i, i);
	}
	run(sb.buf, NULL, &r);
	is_int(count_id(&r, "log.nvidia.xid"), 1, "storm: one finding");
	f = find_id(&r, "log.nvidia.xid");
	ok(f && strstr(f->title, "20000 times"), "storm: counted (%s)", f ? f->title : "-");
	ok(evidence_has(f, "[   10.000000]") && evidence_has(f, "[20009.019999]"),
	   "storm: first and last time");
	ok(f && f->severity == DR_WARNING, "storm: Xid 31 is the application's: a warning");
	dr_report_release(&r);
	strbuf_release(&sb);
}

/* Secondary errors on another GPU, or before their cause, stay primary. */
static void
test_secondary(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;

	run("[1.0] NVRM: Xid (PCI:0000:18:00): 45, pid=1, name=a, Ch 00000001\n"
	    "[2.0] NVRM: Xid (PCI:0000:18:00): 48, pid=1, name=a, DBE\n"
	    "[3.0] NVRM: Xid (PCI:0000:19:00): 45, pid=1, name=a, Ch 00000001\n",
	    NULL, &r);
	is_int(count_id(&r, "log.nvidia.xid"), 3, "secondary: three findings");
	for (size_t i = 0; i < r.nr; i++)
		if (strstr(r.f[i].title, "Xid 45"))
			ok(r.f[i].severity == DR_WARNING && !says(&r.f[i], "secondary)"),
			   "45 before the DBE or on another GPU is not secondary: %s",
			   r.f[i].title);
	dr_report_release(&r);

	/* 63 and 64 after a DBE; 94 after an NVLink5 error; 154 with no Xid before it */
	run("[1.0] NVRM: Xid (PCI:0000:18:00): 48, pid=1, name=a, DBE\n"
	    "[2.0] NVRM: Xid (PCI:0000:18:00): 64, pid=1, name=a, row remap failed\n"
	    "[3.0] NVRM: Xid (PCI:0000:20:00): 149, pid=1, name=a, NETIR_LINK_EVT Fatal\n"
	    "[4.0] NVRM: Xid (PCI:0000:20:00): 94, pid=1, name=a, Contained: SM\n"
	    "[5.0] NVRM: Xid (PCI:0000:30:00): 154, GPU recovery action changed from 0x0 "
	    "(None) to 0x2 (Node Reboot Required)\n",
	    NULL, &r);
	f = find_id(&r, "log.nvidia.xid");
	ok(f && strstr(f->title, "Xid 48") && says(f, "Xid 64 follows") && says(f, "RMA"),
	   "48 names the failed remap after it");
	for (size_t i = 0; i < r.nr; i++) {
		if (strstr(r.f[i].title, "Xid 64"))
			ok(r.f[i].severity == DR_ERROR && says(&r.f[i], "failing to remap") &&
			           says(&r.f[i], "drain"),
			   "64 after 48: drain and reset");
		if (strstr(r.f[i].title, "Xid 94"))
			ok(says(&r.f[i], "It follows NVLink Xid 149"), "94 after 149 points at it");
		if (strstr(r.f[i].title, "Xid 154"))
			ok(r.f[i].severity == DR_WARNING && says(&r.f[i], "Node Reboot Required") &&
			           says(&r.f[i], "not in this log"),
			   "154 alone is its own finding");
	}
	dr_report_release(&r);
}

/* The GPU that fell off the bus, with its power limit from the snapshot. */
static void
test_fallen_power(void)
{
	struct gpu_snapshot s;
	struct gpu_device *d;
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;

	gpu_snapshot_init(&s);
	d = gpu_snapshot_add_dev(&s);
	d->vendor = VENDOR_NVIDIA;
	str_copy(d->name, sizeof(d->name), "NVIDIA GeForce RTX 4090");
	d->pci_valid = true;
	d->pci_bus = 0x3b;
	dev_set(d, GF_POWER_LIMIT, 450);
	run("2026-11-30T10:00:00Z host kernel: NVRM: The NVIDIA GPU 0000:3b:00.0 (PCI ID: "
	    "10de:2684) installed in this system has fallen off the bus and is not responding "
	    "to commands.\n",
	    &s, &r);
	f = find_id(&r, "log.nvidia.fallen_off_bus");
	ok(f && f->severity == DR_ERROR && strstr(f->title, "RTX 4090"), "fallen: named");
	ok(says(f, "up to 450 W"), "fallen: the power limit");
	ok(says(f, "--at 2026-11-30T09:59:00Z"), "fallen: replay a minute before it");
	ok(f && f->action && strstr(f->action, "1. Driver") < strstr(f->action, "2. Power") &&
	           strstr(f->action, "2. Power") < strstr(f->action, "3. PCIe") &&
	           strstr(f->action, "3. PCIe") < strstr(f->action, "4. Temperature") &&
	           strstr(f->action, "4. Temperature") < strstr(f->action, "5. Reseat"),
	   "fallen: the checklist in order, software first");
	dr_report_release(&r);
	gpu_snapshot_release(&s);
}

static void
test_unread(void)
{
	struct dr_ctx ctx;
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;

	memset(&ctx, 0, sizeof(ctx));
	ctx.klog_why = "permission denied (kernel.dmesg_restrict = 1)";
	dr_check_klog(&ctx, &r);
	remember(&r);
	f = find_id(&r, "log.unread");
	ok(f && f->severity == DR_INFO && r.nr == 1, "unread: one info finding");
	ok(says(f, "dmesg_restrict") && says(f, "--log") && says(f, "journalctl -k") &&
	           says(f, "root"),
	   "unread: why, and what to do");
	dr_report_release(&r);

	run("", NULL, &r);
	ok(r.nr == 1 && !strcmp(r.f[0].id, "log.ok") && strstr(r.f[0].title, "0 lines"),
	   "an empty log: one ok line (no GPU error in 0 lines)");
	dr_report_release(&r);
}

/* The table built in, and the explanation listing every code of it. */
static void
test_catalog(void)
{
	const struct nv_xid *x;
	size_t n = klog_nvidia_xids(&x);
	const struct dr_explain *e = dr_explain_find("log.nvidia.xid");
	size_t missing = 0;

	ok(n >= 35, "xid.tsv: %zu codes", n);
	ok(klog_nvidia_xid(79) && !strcmp(klog_nvidia_xid(79)->mnemonic,
	                                  "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS"),
	   "xid.tsv: 79");
	ok(!klog_nvidia_xid(1000), "xid.tsv: unknown code");
	for (size_t i = 0; i < n; i++) {
		char want[300];

		fmt(want, sizeof(want), "\n  %-4d %-8s %s\n", x[i].code, x[i].severity,
		    x[i].meaning);
		if (!e || !strstr(e->text, want)) {
			diag("explain lacks: %s", want + 1);
			missing++;
		}
		if (strcmp(x[i].severity, "error") && strcmp(x[i].severity, "warning") &&
		    strcmp(x[i].severity, "info"))
			missing++;
		if (!*x[i].meaning || !*x[i].causes || !*x[i].immediate || !*x[i].followup)
			missing++;
		if (i && x[i].code <= x[i - 1].code)
			missing++;
	}
	is_int(missing, 0, "explain log.nvidia.xid lists every code of xid.tsv, rows complete");
}

int
main(void)
{
	static const char *const names[] = { "fallen-dmesg", "dbe-syslog",   "nvlink-journal",
		                             "gsp-kmsg",     "init-dmesg-T", "app-crlf",
		                             "quiet" };

	find_fixtures();
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		test_fixture(names[i]);
	test_storm();
	test_secondary();
	test_fallen_power();
	test_unread();
	test_catalog();

	is_int(nr_unexplained, 0, "every id of the %zu findings above is in the catalog",
	       nr_findings);
	/* every id of this check's catalog is emitted by some test */
	{
		size_t nr_entries = 0, nr_unseen = 0;

		for (const struct dr_explain *e = dr_catalog_klog; e->id; e++) {
			size_t j;

			nr_entries++;
			for (j = 0; j < nr_seen; j++)
				if (!strcmp(seen[j], e->id))
					break;
			if (j == nr_seen) {
				diag("no test emits catalog entry %s", e->id);
				nr_unseen++;
			}
		}
		ok(nr_entries > 0 && nr_unseen == 0,
		   "each of the %zu entries of the catalog is emitted by a test (%zu not)",
		   nr_entries, nr_unseen);
	}
	return done_testing();
}
