/*
 * Tests of the kernel-log decoders of amdgpu, i915, xe and PCIe AER
 * (klog_drm.c): fixture logs split with klog_next(), each line given to the
 * decoders, then their reports; each finding triggered by one fixture and
 * absent from a clean log, storms counted once with their times, secondary
 * errors pointed at their cause, and AER blamed on the GPU only through a
 * PCI topology (made here) that puts the reporting device on its link.
 */
#include "doctor/doctor.h"
#include "doctor/klog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "doctor_test.h"
#include "harness.h"
#include "tree.h"

static char sys_gpu[4096], sys_nic[4096];
/* the log is a --log file (maybe of another machine): judged without the topology */
static bool foreign;

/* The fixture klog-drm/<name> through both decoders and their reports, into r. */
static void
run(const char *name, const char *sysfs, struct dr_report *r)
{
	char path[4096];
	struct klog_events ev = KLOG_EVENTS_INIT;
	struct klog_line l;
	struct gs_config cfg;
	struct dr_ctx ctx;
	size_t len, pos = 0;
	char *text;

	fmt(path, sizeof(path), "%s/doctor/klog-drm/%s", fixtures, name);
	text = slurp(path, &len);
	memset(&l, 0, sizeof(l));
	while (klog_next(text, len, &pos, &l, 2026)) {
		klog_drm_line(&l, &ev);
		klog_aer_line(&l, &ev);
	}
	gs_config_init(&cfg);
	cfg.sysfs_root = sysfs;
	memset(&ctx, 0, sizeof(ctx));
	ctx.cfg = &cfg;
	ctx.klog = text;
	ctx.klog_source = path;
	ctx.klog_foreign = foreign;
	klog_drm_report(&ctx, &ev, r);
	klog_aer_report(&ctx, &ev, r);
	/* the report owns its strings; the events point into text */
	klog_events_release(&ev);
	free(text);
}

static void
all_explained(const struct dr_report *r, const char *what)
{
	size_t nr_bad = 0;

	for (size_t i = 0; i < r->nr; i++)
		if (!dr_explain_find(r->f[i].id)) {
			diag("%s: '%s' has no explanation", what, r->f[i].id);
			nr_bad++;
		}
	ok(r->nr > 0 && nr_bad == 0, "%s: every id emitted (%zu findings) has an explanation", what,
	   r->nr);
}

/* A PCI device dir/<path> (class, vendor) linked from bus/pci/devices/<bdf>. */
static void
pci_dev(const char *sys, const char *path, const char *cls, const char *vendor)
{
	char dir[4096], bus[4096], target[4096];
	const char *bdf = strrchr(path, '/') + 1;

	fmt(dir, sizeof(dir), "%s/devices/%s", sys, path);
	make_dirs(dir);
	write_at(dir, "class", cls);
	write_at(dir, "vendor", vendor);
	write_at(dir, "device", "0x1234\n");
	fmt(bus, sizeof(bus), "%s/bus/pci/devices", sys);
	make_dirs(bus);
	fmt(target, sizeof(target), "../../../devices/%s", path);
	link_at(bus, bdf, target);
}

/* Two machines: the GPU below port 00:01.0; or a NIC there and the GPU below 00:03.0. */
static void
make_trees(void)
{
	make_tmp_dir("t_doctor_klog_drm");
	join(sys_gpu, sizeof(sys_gpu), tmp_dir, "gpu/sys");
	pci_dev(sys_gpu, "pci0000:00/0000:00:01.0", "0x060400\n", "0x8086\n");
	pci_dev(sys_gpu, "pci0000:00/0000:00:01.0/0000:01:00.0", "0x030200\n", "0x10de\n");
	pci_dev(sys_gpu, "pci0000:00/0000:00:1c.0", "0x060400\n", "0x8086\n");
	pci_dev(sys_gpu, "pci0000:00/0000:00:1c.0/0000:03:00.0", "0x020000\n", "0x8086\n");
	join(sys_nic, sizeof(sys_nic), tmp_dir, "nic/sys");
	pci_dev(sys_nic, "pci0000:00/0000:00:01.0", "0x060400\n", "0x8086\n");
	pci_dev(sys_nic, "pci0000:00/0000:00:01.0/0000:02:00.0", "0x020000\n", "0x8086\n");
	pci_dev(sys_nic, "pci0000:00/0000:00:03.0", "0x060400\n", "0x8086\n");
	pci_dev(sys_nic, "pci0000:00/0000:00:03.0/0000:01:00.0", "0x030200\n", "0x10de\n");
}

static void
diag_report(const struct dr_report *r)
{
	for (size_t i = 0; i < r->nr; i++) {
		const struct dr_finding *f = &r->f[i];

		diag("%s [%s] %s", f->id, dr_severity_key(f->severity), f->title);
		for (size_t j = 0; j < f->nr_evidence; j++)
			diag("    %s", f->evidence[j]);
	}
}

static const char *const all_ids[] = {
	"log.amdgpu.ring_timeout", "log.amdgpu.gpu_reset",         "log.amdgpu.page_fault",
	"log.amdgpu.firmware",     "log.amdgpu.over_temp",         "log.intel.gpu_hang",
	"log.intel.guc",           "log.intel.heartbeat_reset",    "log.intel.engine_reset",
	"log.aer.corrected",       "log.aer.uncorrected_nonfatal", "log.aer.fatal",
};

static void
test_catalog(void)
{
	const struct dr_explain *e, *prev = NULL;
	bool sorted = true;

	size_t nr_bad = 0, nr = sizeof(all_ids) / sizeof(all_ids[0]);

	for (size_t i = 0; i < nr; i++) {
		e = dr_explain_find(all_ids[i]);
		if (!(e && e->title && e->text && strlen(e->text) > 100)) {
			diag("catalog: %s is not explained (missing, no title, or under 100 bytes)",
			     all_ids[i]);
			nr_bad++;
		}
	}
	is_int(nr_bad, 0, "catalog: each of the %zu ids has a title and an explanation", nr);
	for (e = dr_catalog_klog_drm; e->id; prev = e, e++)
		if (prev && strcmp(prev->id, e->id) >= 0)
			sorted = false;
	ok(sorted, "catalog: dr_catalog_klog_drm in id order");
}

static void
test_clean(void)
{
	struct dr_report r = DR_REPORT_INIT;

	run("clean.log", sys_gpu, &r);
	ok(r.nr == 0, "clean: a normal boot log gives no finding (%zu)", r.nr);
	for (size_t i = 0; i < (sizeof(all_ids) / sizeof(all_ids[0])); i++)
		if (count_id(&r, all_ids[i]))
			ok(0, "clean: %s absent", all_ids[i]);
	if (r.nr)
		diag_report(&r);
	dr_report_release(&r);
}

static void
test_amdgpu(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;

	run("amdgpu-hang.log", sys_gpu, &r);
	f = find_id(&r, "log.amdgpu.ring_timeout");
	ok(count_id(&r, "log.amdgpu.ring_timeout") == 1 && f && f->severity == DR_ERROR,
	   "amdgpu hang: one ring_timeout finding for a storm of three");
	ok(says(f, "gfx_0.0.0") && says(f, "0000:0c:00.0") && says(f, "3 times"),
	   "amdgpu hang: ring, device and count in the title");
	ok(evidence_has(f, "[  312.522692]") && evidence_has(f, "[  530.250000]") &&
	           evidence_has(f, "3 such lines from [  312.522692] to [  530.250000]"),
	   "amdgpu hang: the first and last timeout quoted with their times");
	ok(says(f, "cosmic-comp (pid 2288)"), "amdgpu hang: the process is named");
	ok(evidence_has(f, "0 succeeded, 3 failed"), "amdgpu hang: ring resets counted");
	ok(f && f->meaning && strstr(f->meaning, "recovery from this timeout"),
	   "amdgpu hang: the timeout says the resets follow from it");
	f = find_id(&r, "log.amdgpu.gpu_reset");
	ok(count_id(&r, "log.amdgpu.gpu_reset") == 1 && f && f->severity == DR_WARNING &&
	           says(f, "3 times"),
	   "amdgpu hang: three GPU resets, one finding, a warning (all succeeded)");
	ok(f && f->meaning && strstr(f->meaning, "consequence of the ring timeout") &&
	           strstr(f->meaning, "gfx_0.0.0"),
	   "amdgpu hang: the reset points at the ring timeout as its cause");
	ok(says(f, "VRAM is lost") && f->meaning && strstr(f->meaning, "VRAM was lost"),
	   "amdgpu hang: VRAM loss quoted and explained");
	ok(!count_id(&r, "log.amdgpu.page_fault") && !count_id(&r, "log.aer.corrected"),
	   "amdgpu hang: nothing else");
	all_explained(&r, "amdgpu hang");
	dr_report_release(&r);

	run("amdgpu-old.log", sys_gpu, &r);
	f = find_id(&r, "log.amdgpu.ring_timeout");
	ok(f && says(f, "yuzu (pid 4828)") && !says(f, "of the GPU at"),
	   "amdgpu old format: the process of 'Process information' named; no device claimed");
	ok(evidence_has(f, "2026-11-10 21:23:34 UTC"), "amdgpu old format: syslog time shown");
	f = find_id(&r, "log.amdgpu.gpu_reset");
	ok(f && f->meaning && strstr(f->meaning, "consequence of the ring timeout") &&
	           evidence_has(f, "GPU reset(2) succeeded"),
	   "amdgpu old format: reset tied to the timeout that named no device");
	all_explained(&r, "amdgpu old format");
	dr_report_release(&r);

	run("amdgpu-fault.log", sys_gpu, &r);
	f = find_id(&r, "log.amdgpu.page_fault");
	ok(count_id(&r, "log.amdgpu.page_fault") == 1 && f && f->severity == DR_WARNING,
	   "amdgpu fault: one page_fault finding for three faults");
	ok(says(f, "pt_main_thread (pid 12924)") && says(f, "gfxhub0") && says(f, "3 times") &&
	           says(f, "pasid 32769"),
	   "amdgpu fault: process, hub, count and pasid");
	ok(evidence_has(f, "2026-11-30 10:00:01 UTC") && evidence_has(f, "2026-11-30 10:00:04 UTC"),
	   "amdgpu fault: first and last times (syslog, year 2026)");
	ok(f && f->meaning && strstr(f->meaning, "ring timeout that follows"),
	   "amdgpu fault: the timeout after it is its consequence");
	f = find_id(&r, "log.amdgpu.ring_timeout");
	ok(f && says(f, "comp_1.0.0") && says(f, "pt_main_thread") && f->meaning &&
	           strstr(f->meaning, "page faults on the same GPU came first") &&
	           strstr(f->meaning, "compute"),
	   "amdgpu fault: the compute ring timeout points at the faults before it");
	ok(!count_id(&r, "log.amdgpu.gpu_reset"), "amdgpu fault: no reset claimed");
	all_explained(&r, "amdgpu fault");
	dr_report_release(&r);

	run("amdgpu-firmware.log", sys_gpu, &r);
	f = find_id(&r, "log.amdgpu.firmware");
	ok(count_id(&r, "log.amdgpu.firmware") == 1 && f && f->severity == DR_ERROR &&
	           says(f, "amdgpu/arcturus_gpu_info.bin") && says(f, "ENOENT") &&
	           evidence_has(f, "Fatal error during GPU init"),
	   "amdgpu firmware: the missing file, -2 read as ENOENT, init failure: an error");
	ok(r.nr == 1, "amdgpu firmware: one finding (%zu)", r.nr);
	all_explained(&r, "amdgpu firmware");
	dr_report_release(&r);

	run("amdgpu-thermal.log", sys_gpu, &r);
	f = find_id(&r, "log.amdgpu.over_temp");
	ok(count_id(&r, "log.amdgpu.over_temp") == 1 && f && f->severity == DR_WARNING &&
	           says(f, "4 times") && says(f, "PCIe 3:0.0"),
	   "amdgpu thermal: one over_temp finding for four events");
	ok(evidence_has(f, "2026-11-30 10:00:00 UTC") && evidence_has(f, "2026-11-30 10:03:20 UTC"),
	   "amdgpu thermal: first and last times (journal)");
	ok(f && f->action && strstr(f->action, "--watch") && strstr(f->action, "airflow"),
	   "amdgpu thermal: points at the health checks and cooling");
	ok(f && f->meaning && strstr(f->meaning, "gives no temperature"),
	   "amdgpu thermal: says what the evidence shows, and what it does not");
	all_explained(&r, "amdgpu thermal");
	dr_report_release(&r);
}

static void
test_intel(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;

	run("intel-i915.log", sys_gpu, &r);
	f = find_id(&r, "log.intel.gpu_hang");
	ok(count_id(&r, "log.intel.gpu_hang") == 1 && f && says(f, "chrome") &&
	           says(f, "2 times") && says(f, "i915"),
	   "i915: two hangs in chrome, one finding");
	ok(evidence_has(f, "2026-11-30 10:10:01 UTC") && evidence_has(f, "2026-11-30 10:12:31 UTC"),
	   "i915: times of the first and last hang (dmesg -T)");
	ok(f && f->meaning && strstr(f->meaning, "same incident"),
	   "i915: the hang points at the heartbeat reset of the same incident");
	f = find_id(&r, "log.intel.heartbeat_reset");
	ok(count_id(&r, "log.intel.heartbeat_reset") == 1 && f && says(f, "rcs0") &&
	           says(f, "stopped heartbeat") && says(f, "chrome[1818]"),
	   "i915: heartbeat resets of rcs0 with the context's process");
	ok(!count_id(&r, "log.intel.guc"), "i915: a GuC that loaded is no finding");
	all_explained(&r, "i915");
	dr_report_release(&r);

	run("intel-guc.log", sys_gpu, &r);
	f = find_id(&r, "log.intel.guc");
	ok(count_id(&r, "log.intel.guc") == 1 && f && f->severity == DR_ERROR &&
	           says(f, "2 times") && evidence_has(f, "declaring it wedged"),
	   "i915 GuC: load failure, counted, wedged quoted, an error");
	all_explained(&r, "i915 GuC");
	dr_report_release(&r);

	run("intel-xe.log", sys_gpu, &r);
	f = find_id(&r, "log.intel.engine_reset");
	ok(count_id(&r, "log.intel.engine_reset") == 1 && f && f->severity == DR_WARNING &&
	           says(f, "ccs") && says(f, "GT0") && says(f, "3 times") && says(f, "xe"),
	   "xe: three ccs engine resets, one finding");
	ok(evidence_has(f, "llama-server (3)"), "xe: the timed-out jobs' program counted");
	ok(evidence_has(f, "[  100.000000]") && evidence_has(f, "[  400.000000]"),
	   "xe: first and last times");
	ok(!count_id(&r, "log.intel.guc"), "xe: GuC firmware in use is no finding");
	all_explained(&r, "xe");
	dr_report_release(&r);
}

static void
test_aer(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;

	/* errors on the GPU itself */
	run("aer-gpu.log", sys_gpu, &r);
	f = find_id(&r, "log.aer.corrected");
	ok(f && f->severity == DR_WARNING && says(f, "12 times") &&
	           says(f, "NVIDIA GPU at 0000:01:00.0"),
	   "aer gpu: 12 corrected errors on the GPU: a warning");
	ok(evidence_has(f, "RxErr x12") && evidence_has(f, "Physical Layer") &&
	           evidence_has(f, "10de:2330") && evidence_has(f, "upstream port 0000:00:01.0"),
	   "aer gpu: status bits, layer, device id and topology in the evidence");
	ok(evidence_has(f, "[ 1001.000001]") && evidence_has(f, "[ 1012.000002]"),
	   "aer gpu: the first and last lines of the storm");
	ok(f && f->meaning && strstr(f->meaning, "marginal link") && strstr(f->meaning, "riser") &&
	           strstr(f->meaning, "ASPM"),
	   "aer gpu: a marginal link, with ranked causes");
	ok(f && f->action && strstr(f->action, "firmware") < strstr(f->action, "reseat"),
	   "aer gpu: software first, then hardware");
	f = find_id(&r, "log.aer.fatal");
	ok(f && f->severity == DR_ERROR && evidence_has(f, "CmpltTO") && f->meaning &&
	           strstr(f->meaning, "could not recover"),
	   "aer gpu: a fatal error on the GPU: an error, not recovered");
	ok(!count_id(&r, "log.aer.uncorrected_nonfatal"), "aer gpu: no non-fatal error claimed");
	all_explained(&r, "aer gpu");
	dr_report_release(&r);

	/* errors reported by port 00:01.0: the GPU's upstream port, or a NIC's */
	run("aer-port.log", sys_gpu, &r);
	f = find_id(&r, "log.aer.corrected");
	ok(f && f->severity == DR_WARNING && says(f, "port above the NVIDIA GPU at 0000:01:00.0") &&
	           says(f, "11 times") && evidence_has(f, "Timeout x11"),
	   "aer port: the GPU's upstream port: blamed on the GPU's link");
	f = find_id(&r, "log.aer.uncorrected_nonfatal");
	ok(f && f->severity == DR_ERROR && evidence_has(f, "CmpltTO"),
	   "aer port: an uncorrectable error on the GPU's link is an error");
	all_explained(&r, "aer port");
	dr_report_release(&r);

	run("aer-port.log", sys_nic, &r);
	ok(r.nr == 1 && r.f[0].severity == DR_INFO && says(&r.f[0], "not the GPU"),
	   "aer port, NIC below it: one info line that says it is not the GPU");
	ok(r.nr == 1 && says(&r.f[0], "no GPU below it") &&
	           evidence_has(&r.f[0], "upstream port 0000:00:03.0"),
	   "aer port, NIC below it: names what it is and where the GPU is");
	all_explained(&r, "aer port nic");
	dr_report_release(&r);

	run("aer-nic.log", sys_gpu, &r);
	ok(r.nr == 2 && dr_worst(&r) == DR_INFO, "aer nic: info only (%zu findings)", r.nr);
	ok(r.nr >= 1 && says(&r.f[0], "0000:03:00.0") && says(&r.f[0], "not the GPU") &&
	           says(&r.f[0], "2 times"),
	   "aer nic: the NIC's errors counted, not the GPU");
	ok(r.nr == 2 && says(&r.f[1], "0000:00:1c.5"),
	   "aer nic: the old 'id=00e5' source read as 0000:00:1c.5");
	all_explained(&r, "aer nic");
	if (r.nr != 2)
		diag_report(&r);
	dr_report_release(&r);

	/*
	 * --log: another machine's log, not judged by this one's topology; the log's own
	 * lines tell which port is above a GPU (the nvidia driver in the port's recovery)
	 */
	foreign = true;
	run("aer-port.log", sys_gpu, &r);
	ok(r.nr >= 1 && dr_worst(&r) == DR_INFO,
	   "aer port, --log: this machine's topology does not make another's port a GPU's");
	dr_report_release(&r);
	run("aer-port-foreign.log", sys_nic, &r);
	ok(find_id(&r, "log.aer.fatal") && find_id(&r, "log.aer.fatal")->severity == DR_ERROR &&
	           says(find_id(&r, "log.aer.fatal"), "above the GPU at 0000:03:00.0"),
	   "aer port, --log: the GPU driver's recovery line puts the port above the GPU");
	dr_report_release(&r);
	run("aer-port-foreign-nic.log", sys_gpu, &r);
	ok(r.nr == 1 && dr_worst(&r) == DR_INFO && says(&r.f[0], "not known to be the GPU"),
	   "aer port, --log: a NIC in the port's recovery is not a GPU");
	if (r.nr != 1)
		diag_report(&r);
	dr_report_release(&r);
	foreign = false;

	/* no sysfs: a GPU driver's own line still tells */
	run("aer-gpu.log", "/nonexistent", &r);
	ok(find_id(&r, "log.aer.fatal") && find_id(&r, "log.aer.fatal")->severity == DR_ERROR,
	   "aer gpu without sysfs: the nvidia driver's line names the GPU");
	dr_report_release(&r);
}

int
main(void)
{
	find_fixtures();
	make_trees();
	test_catalog();
	test_clean();
	test_amdgpu();
	test_intel();
	test_aer();
	rm_tree(tmp_dir);
	return done_testing();
}
