/*
 * Tests of the message tables (data/messages/<family>.tsv, klog_msg.c): every row of every table
 * well formed (10 cells, a valid severity and id, a pattern with enough literal text, see
 * and after ids that exist) and matching its own example, which must give its id through
 * the whole kernel-log check; captures; "after" (a consequence reported as info, its cause
 * keeping the error; kernel findings as causes); a healthy log gives nothing; the anchor
 * index gives what trying every row gives, on a generated log; --explain and --list of the
 * tables' ids; bad input; the NVIDIA decoder's chains (Xid 45 "caused by previous Xid N",
 * a "fallen off the bus" split over lines, GSP heartbeats, rm_init_adapter).
 */
#include "doctor/doctor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "doctor/klog.h"
#include "harness.h"

static void
run(const char *text, struct dr_report *r)
{
	struct dr_ctx ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx.klog = text;
	ctx.klog_source = "test.log";
	dr_check_klog(&ctx, r);
}

static const struct dr_finding *
find_id(const struct dr_report *r, const char *id)
{
	for (size_t i = 0; i < r->nr; i++)
		if (!strcmp(r->f[i].id, id))
			return &r->f[i];
	return NULL;
}

static bool
has_evidence(const struct dr_finding *f, const char *s)
{
	for (size_t i = 0; f && i < f->nr_evidence; i++)
		if (strstr(f->evidence[i], s))
			return true;
	return false;
}

static void
dump(const struct dr_report *r)
{
	for (size_t i = 0; i < r->nr; i++)
		diag("  %s %s: %s", dr_severity_key(r->f[i].severity), r->f[i].id, r->f[i].title);
}

static enum dr_severity
sev_of(const char *s)
{
	return !strcmp(s, "error") ? DR_ERROR : !strcmp(s, "warning") ? DR_WARNING : DR_INFO;
}

/* 1. The tables: one test per table file, every problem of its rows as a diagnostic. */
static void
test_tables(void)
{
	struct strbuf problems = STRBUF_INIT;
	size_t n = klog_msg_check(&problems), rows = 0;
	const char *file = NULL;

	for (size_t i = 0;; i++) {
		const struct klog_msg_row *row = klog_msg_row(i);

		if (row && file && !strcmp(row->file, file)) {
			rows++;
			continue;
		}
		if (file) {
			size_t bad = 0;
			size_t flen = strlen(file);

			for (char *p = problems.buf; p && *p; p = strchr(p, '\n') + 1) {
				if (!strncmp(p, file, flen) && p[flen] == ':') {
					diag("%.*s", (int)strcspn(p, "\n"), p);
					bad++;
				}
			}
			ok(bad == 0, "%s: %zu rows, %zu problems", file, rows, bad);
		}
		if (!row)
			break;
		file = row->file;
		rows = 1;
	}
	ok(klog_msg_row(0) != NULL, "the tables have rows");
	if (n)
		diag("%zu problems in all", n);
	strbuf_release(&problems);
}

/* 2. Each row's example, as a log of one line, gives its id through dr_check_klog. */
static void
test_examples(void)
{
	size_t bad = 0, n = 0;

	for (size_t i = 0;; i++) {
		const struct klog_msg_row *row = klog_msg_row(i);
		struct dr_report r = DR_REPORT_INIT;
		const struct dr_finding *f;
		char *text;

		if (!row)
			break;
		n++;
		text = malloc(strlen(row->example) + 2);
		sprintf(text, "%s\n", row->example);
		run(text, &r);
		f = find_id(&r, row->id);
		/* the row's severity, or info when a kernel decoder's finding of the same line
		 * is one it follows from */
		if (!f || (f->severity != sev_of(row->severity) &&
		           !(f->severity == DR_INFO && strstr(f->title, "follows from ")))) {
			diag("%s:%zu: its example gives no %s finding of severity %s:", row->file,
			     row->line, row->id, row->severity);
			dump(&r);
			bad++;
		}
		dr_report_release(&r);
		free(text);
	}
	ok(bad == 0 && n > 0, "every row's example, as a log, gives its id (%zu rows)", n);
}

/* 3. Captures, counts and evidence. */
static void
test_captures(void)
{
	struct strbuf caps = STRBUF_INIT;
	struct dr_report r = DR_REPORT_INIT;
	const struct klog_msg_row *row;
	const struct dr_finding *f;

	row = klog_msg_match("NVRM: BAR1 is 0M @ 0x0 (PCI:0000:65:00.0)", 41, false, &caps);
	ok(row && !strcmp(row->id, "log.nvidia.bar_mapping"), "BAR line: log.nvidia.bar_mapping");
	ok(!strcmp(caps.buf, "bar=1\nsize=0M\naddress=0\ngpu=0000:65:00.0\n"),
	   "BAR line: its four captures");
	if (strcmp(caps.buf, "bar=1\nsize=0M\naddress=0\ngpu=0000:65:00.0\n"))
		diag("caps: %s", caps.buf);
	strbuf_release(&caps);

	run("[    5.1] NVRM: The NVIDIA probe routine was not called for 2 device(s).\n"
	    "[    5.2] NVRM: This can occur when another driver was loaded and \n"
	    "[    5.3] NVRM: obtained ownership of the NVIDIA device(s).\n"
	    "[    9.1] NVRM: The NVIDIA probe routine was not called for 2 device(s).\n",
	    &r);
	f = find_id(&r, "log.nvidia.nouveau_bound");
	ok(f && f->severity == DR_ERROR && strstr(f->title, "2 NVIDIA GPU(s)"),
	   "probe not called: an error, the count captured into the title");
	ok(has_evidence(f, "3 such lines") && has_evidence(f, "count: 2") &&
	           has_evidence(f, "[    9.100000]") && has_evidence(f, "nvidia-kernel.tsv:"),
	   "probe not called: one finding for three lines, last time, capture, table row");
	ok(f && f->meaning && strstr(f->meaning, "Possible causes, most likely first: 1. ") &&
	           f->action && strstr(f->action, "1. 'lspci -nnk -d 10de:'") &&
	           strstr(f->action, "setup.pci.nouveau"),
	   "probe not called: causes ranked, actions in order, the set-up check named");
	if (!f)
		dump(&r);
	dr_report_release(&r);
}

/* 3b. A pipe inside a quoted command is not a list separator. */
static void
test_quoted_pipe(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;

	run("[ 3.0] nvidia: disagrees about version of symbol module_layout\n", &r);
	f = find_id(&r, "log.nvidia.module_mismatch");
	ok(f && f->action && strstr(f->action, "2. 'modinfo nvidia | grep vermagic' against") &&
	           !strstr(f->action, "3. "),
	   "a quoted 'a | b' command stays one action");
	if (f && f->action && strstr(f->action, "3. "))
		diag("%s", f->action);
	dr_report_release(&r);
}

/* 4. after: a consequence is info, its cause keeps the error; kernel findings count. */
static void
test_after(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f, *c;

	run("[    5.1] NVRM: The NVIDIA probe routine was not called for 1 device(s).\n"
	    "[    5.4] NVRM: No NVIDIA devices probed.\n",
	    &r);
	c = find_id(&r, "log.nvidia.nouveau_bound");
	f = find_id(&r, "log.nvidia.no_gpu_found");
	ok(c && c->severity == DR_ERROR, "after: the cause keeps its error");
	ok(f && f->severity == DR_INFO &&
	           !strncmp(f->title, "follows from log.nvidia.nouveau_bound: ", 39) &&
	           strstr(f->action, "Follow the finding log.nvidia.nouveau_bound first"),
	   "after: the consequence is info, 'follows from' its cause");
	ok(!find_id(&r, "log.ok"), "after: no ok line with an error");
	dr_report_release(&r);

	run("[    5.4] NVRM: No NVIDIA devices probed.\n", &r);
	f = find_id(&r, "log.nvidia.no_gpu_found");
	ok(f && f->severity == DR_ERROR && !strstr(f->title, "follows"),
	   "after: alone, the message keeps its own severity");
	dr_report_release(&r);

	/* a kernel decoder's finding as the cause */
	run("[  100.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off "
	    "the bus.\n"
	    "[  101.0] nvidia-modeset: ERROR: GPU:0: Error while waiting for GPU progress: "
	    "0x0000c67d:0 2:0:4048:4040\n",
	    &r);
	f = find_id(&r, "log.nvidia.modeset_error");
	ok(find_id(&r, "log.nvidia.fallen_off_bus") && f && f->severity == DR_INFO &&
	           strstr(f->title, "follows from log.nvidia.fallen_off_bus"),
	   "after: a kernel finding (fallen off the bus) is the cause of a table message");
	if (!f || f->severity != DR_INFO)
		dump(&r);
	dr_report_release(&r);
}

/* 5. A healthy log gives no table finding and one ok line. */
static void
test_healthy(void)
{
	static const char healthy[] =
	        "[    0.000000] Linux version 6.8.0-48-generic (buildd@lcy02-amd64-010)\n"
	        "[    1.234567] pci 0000:3b:00.0: [10de:2330] type 00 class 0x030200\n"
	        "[    4.100000] nvidia: loading out-of-tree module taints kernel.\n"
	        "[    4.100001] nvidia: module license 'NVIDIA' taints kernel.\n"
	        "[    4.100002] Disabling lock debugging due to kernel taint\n"
	        "[    4.100003] nvidia: module verification failed: signature and/or required key "
	        "missing - tainting kernel\n"
	        "[    4.200000] nvidia-nvlink: Nvlink Core is being initialized, major device "
	        "number 508\n"
	        "[    4.300000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.127.05  Tue Oct "
	        " 8 03:05:04 UTC 2024\n"
	        "[    4.400000] nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX "
	        "platforms  550.127.05  Tue Oct  8 02:56:05 UTC 2024\n"
	        "[    4.500000] [drm] [nvidia-drm] [GPU ID 0x00003b00] Loading driver\n"
	        "[    4.600000] nvidia_uvm: module uses symbols nvUvmInterfaceDisableAccessCntr "
	        "from proprietary module nvidia, inheriting taint.\n"
	        "[    5.000000] nvidia-persistenced[1234]: Started (1234)\n"
	        "[    5.100000] systemd[1]: Started nvidia-persistenced.service - NVIDIA "
	        "Persistence Daemon.\n"
	        "[    6.000000] pcieport 0000:00:1c.0: AER: Corrected error received: "
	        "0000:02:00.0\n"
	        "[    7.000000] EXT4-fs (nvme0n1p2): mounted filesystem with ordered data mode.\n"
	        "[    8.000000] e1000e 0000:00:1f.6 eno1: NIC Link is Up 1000 Mbps Full Duplex\n";
	struct dr_report r = DR_REPORT_INIT;
	size_t worse = 0;

	run(healthy, &r);
	for (size_t i = 0; i < r.nr; i++)
		if (r.f[i].severity > DR_INFO)
			worse++;
	ok(worse == 0 && find_id(&r, "log.ok"), "a healthy log: no warning or error, log.ok");
	for (size_t i = 0; i < r.nr; i++)
		if (klog_msg_row(0) && dr_explain_find(r.f[i].id) && strcmp(r.f[i].id, "log.ok") &&
		    strcmp(r.f[i].id, "log.aer.corrected"))
			diag("healthy log gave %s: %s", r.f[i].id, r.f[i].title);
	if (worse)
		dump(&r);
	dr_report_release(&r);
}

/* A random lowercase word */
static void
add_noise(struct strbuf *sb, unsigned *seed, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		*seed = *seed * 1103515245u + 12345u;
		strbuf_addch(sb, (*seed >> 16) % 7 ? (char)('a' + (*seed >> 8) % 26) : ' ');
	}
}

/* 6. The anchor index gives what trying every row gives, on a generated log. */
static void
test_index(void)
{
	unsigned seed = 42;
	size_t lines = 0, same = 0, matched = 0, nr_rows = 0;

	while (klog_msg_row(nr_rows))
		nr_rows++;
	for (size_t k = 0; k < 4000; k++) {
		struct strbuf line = STRBUF_INIT, ca = STRBUF_INIT, cb = STRBUF_INIT;
		const struct klog_msg_row *row = nr_rows ? klog_msg_row(k % nr_rows) : NULL;
		const struct klog_msg_row *a, *b;
		const char *ex = row ? row->example : "";
		size_t len = strlen(ex);

		/* noise, then a whole example, a cut one, or the halves of two joined */
		add_noise(&line, &seed, seed % 40);
		switch (k / (nr_rows ? nr_rows : 1) % 4) {
		case 0:
			strbuf_addstr(&line, ex);
			break;
		case 1:
			strbuf_add(&line, ex, len / 2);
			break;
		case 2:
			strbuf_add(&line, ex + len / 3, len - len / 3);
			break;
		default:
			strbuf_add(&line, ex, len / 2);
			if (klog_msg_row((k + 7) % nr_rows))
				strbuf_addstr(&line, klog_msg_row((k + 7) % nr_rows)->example);
			break;
		}
		add_noise(&line, &seed, seed % 20);
		a = klog_msg_match(line.buf, line.len, false, &ca);
		b = klog_msg_match(line.buf, line.len, true, &cb);
		lines++;
		matched += a != NULL;
		if (a == b && !strcmp(ca.buf ? ca.buf : "", cb.buf ? cb.buf : ""))
			same++;
		else
			diag("differs: '%s': index %s, naive %s", line.buf, a ? a->id : "none",
			     b ? b->id : "none");
		strbuf_release(&line);
		strbuf_release(&ca);
		strbuf_release(&cb);
	}
	ok(same == lines && matched > 0,
	   "index and naive matcher agree on %zu generated lines (%zu matched)", lines, matched);
}

/* 7. --explain and --list know the tables' ids. */
static void
test_catalog(void)
{
	const struct dr_explain *e = dr_explain_find("log.nvidia.nouveau_bound");
	const struct dr_explain *table, **all;
	size_t n = klog_msg_catalog(&table), nr_all = dr_catalog_list(NULL, 0), found = 0;

	ok(e && e->title && strstr(e->text, "Possible causes, most likely first:") &&
	           strstr(e->text, "probe routine was not called") &&
	           strstr(e->text, "nvidia-kernel.tsv") &&
	           strstr(e->text, "open-gpu-kernel-modules"),
	   "--explain log.nvidia.nouveau_bound: causes, the messages, their sources");
	ok(e && !strchr(e->title, '{'), "a table id's title has no {capture}");
	{
		size_t braces = 0;

		for (size_t i = 0; i < n; i++) {
			if (strchr(table[i].title, '{') || strstr(table[i].title, ": ...")) {
				diag("title with a capture: %s: %s", table[i].id, table[i].title);
				braces++;
			}
		}
		ok(braces == 0, "no table title shows a capture or ends in ': ...'");
	}
	all = calloc(nr_all, sizeof(*all));
	dr_catalog_list(all, nr_all);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < nr_all; j++)
			if (!strcmp(all[j]->id, table[i].id)) {
				found++;
				break;
			}
	ok(n > 0 && found == n, "--list has every table id (%zu)", n);
	for (size_t j = 0; j + 1 < nr_all; j++)
		if (strcmp(all[j]->id, all[j + 1]->id) >= 0)
			diag("not sorted or twice: %s", all[j]->id);
	free(all);
	ok(dr_explain_find("log.nvidia.xid") && !dr_explain_find("log.nope.nope"),
	   "built-in ids still found, unknown ones not");
}

/* 8. Bad input: nothing crashes, nothing matches by accident. */
static void
test_bad_input(void)
{
	struct strbuf big = STRBUF_INIT;
	struct dr_report r = DR_REPORT_INIT;

	ok(!klog_msg_match("", 0, false, NULL) && !klog_msg_match("NVRM", 4, false, NULL),
	   "an empty or short line matches nothing");
	for (int i = 0; i < 20000; i++)
		strbuf_addstr(&big, "NVRM: BAR");
	strbuf_addstr(&big, "\n\n\n");
	run(big.buf, &r);
	ok(r.nr >= 1, "a 180 kB line of a pattern's repeated start: no crash, %zu findings", r.nr);
	dr_report_release(&r);
	strbuf_release(&big);
}

/* 9. The NVIDIA decoder's chains: a line that names an earlier error leads to it. */
static void
test_nvidia_chains(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;

	/* Xid 45 "caused by previous Xid 149", without the 149 line */
	run("kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 "
	    "caused by previous Xid 149\n",
	    &r);
	f = find_id(&r, "log.nvidia.xid");
	ok(f && f->severity == DR_ERROR && strstr(f->title, "clean-up after Xid 149") &&
	           strstr(f->meaning, "Xid 149 (") && strstr(f->action, "Find the Xid 149 lines"),
	   "Xid 45 caused by previous Xid 149 (not in the log): leads to Xid 149, an error");
	if (!f || f->severity != DR_ERROR)
		dump(&r);
	dr_report_release(&r);

	/* ... and with it: the 45 is secondary */
	run("[  10.0] NVRM: Xid (PCI:0000:dc:00): 13, pid=1, name=a, Graphics Exception\n"
	    "[  10.5] NVRM: Xid (PCI:0000:dc:00): 45, pid=1, name=a, Ch 00000001 caused by "
	    "previous Xid 13\n",
	    &r);
	f = NULL;
	for (size_t i = 0; i < r.nr; i++)
		if (strstr(r.f[i].title, "Xid 45"))
			f = &r.f[i];
	ok(f && f->severity == DR_INFO && strstr(f->title, "clean-up after Xid 13") &&
	           strstr(f->title, "secondary"),
	   "Xid 45 caused by previous Xid 13 (in the log): secondary, info");
	dr_report_release(&r);

	/* "fallen off the bus" over three lines, the GPU on the first */
	run("[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
	    "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
	    "               NVRM: fallen off the bus and is not responding to commands.\n",
	    &r);
	f = find_id(&r, "log.nvidia.fallen_off_bus");
	ok(f && f->severity == DR_ERROR && strstr(f->title, "0000:b3:00"),
	   "fallen off the bus, split over three lines: the GPU of the first");
	dr_report_release(&r);

	/* the GSP's missed heartbeat */
	run("[   24.302465] NVRM: GPU6 _kgspIsHeartbeatTimedOut: Heartbeat timed out, "
	    "currentTimeMs 812751949 heartbeat 1899482\n",
	    &r);
	ok(find_id(&r, "log.nvidia.gsp_timeout") != NULL, "GSP heartbeat timed out: gsp_timeout");
	dr_report_release(&r);

	/* rm_init_adapter failed: alone a finding, after RmInitAdapter failed! one */
	run("[ 1.1] NVRM: GPU 0000:04:01.0: rm_init_adapter failed, device minor number 0\n", &r);
	ok(r.nr == 1 && find_id(&r, "log.nvidia.rm_init_failed"),
	   "rm_init_adapter failed alone: log.nvidia.rm_init_failed");
	dr_report_release(&r);
	run("[ 1.0] NVRM: GPU 0000:04:01.0: RmInitAdapter failed! (0x11:0x45:2525)\n"
	    "[ 1.1] NVRM: GPU 0000:04:01.0: rm_init_adapter failed, device minor number 0\n",
	    &r);
	ok(r.nr == 1 && find_id(&r, "log.nvidia.rm_init_failed"),
	   "rm_init_adapter failed after RmInitAdapter failed!: one finding");
	dr_report_release(&r);
}

int
main(void)
{
	test_tables();
	test_examples();
	test_captures();
	test_quoted_pipe();
	test_after();
	test_healthy();
	test_index();
	test_catalog();
	test_bad_input();
	test_nvidia_chains();
	return done_testing();
}
