/*
 * Tests of doctor's NVIDIA driver checks (setup.nvidia.*) and of
 * nvml_probe(): the probe on the fake libnvidia-ml (a working driver, a
 * version mismatch, Unknown Error, no library, the CUDA stub), then each
 * finding triggered by one input and cleared by another, on the fixture
 * roots of tests/fixtures/doctor/nvidia with made-up probes, snapshots and
 * kernel logs. Every id emitted must be in the catalog, and every catalog
 * entry must be emitted by some test. Runs from the repository root; O (or
 * the directory of this program) names the build directory.
 */
#include "doctor/doctor.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/nvml_probe.h"
#include "core/config.h"
#include "core/gpu.h"
#include "doctor_test.h"
#include "harness.h"
#include "tree.h"

static char fake_dir[1024]; /* <O>/fakenvml */
static char scenarios[2100];

/* ids emitted by any test, to check that the catalog has no dead entry */
static const char *seen[64];
static size_t nr_seen;

static void
remember(const struct dr_report *r)
{
	for (size_t i = 0; i < r->nr; i++) {
		size_t j;

		for (j = 0; j < nr_seen; j++)
			if (!strcmp(seen[j], r->f[i].id))
				break;
		if (j == nr_seen && nr_seen < sizeof(seen) / sizeof(seen[0]))
			seen[nr_seen++] = r->f[i].id;
	}
}

/* --- the probe, on the fake library ----------------------------------------------- */

static void
probe_with(const char *lib, const char *scenario, const char *proc, struct nvml_probe *p)
{
	struct gs_config cfg;
	char path[2200];

	gs_config_init(&cfg);
	cfg.nvml_path = lib;
	cfg.sysfs_root = "tests/fixtures/sys-empty";
	cfg.proc_root = proc;
	join(path, sizeof(path), scenarios, scenario);
	setenv("FAKE_NVML_SCENARIO", path, 1);
	nvml_probe(&cfg, p);
}

static void
test_probe(void)
{
	char lib[1100], legacy[1100], stub[1100], open_proc[2100], old_proc[2100];
	struct nvml_probe p;

	join(lib, sizeof(lib), fake_dir, "current/libnvidia-ml.so.1");
	join(legacy, sizeof(legacy), fake_dir, "legacy/libnvidia-ml.so.1");
	join(stub, sizeof(stub), fake_dir, "stubs/libnvidia-ml.so.1");
	join(open_proc, sizeof(open_proc), fixtures, "doctor/nvidia/open/proc");
	join(old_proc, sizeof(old_proc), fixtures, "doctor/nvidia/old/proc");
	if (access(lib, R_OK)) {
		skip("the fake libnvidia-ml is not built");
		return;
	}

	probe_with(lib, "h100x2.scn", open_proc, &p);
	ok(p.loaded && strstr(p.library, "libnvidia-ml.so.1") && !p.load_error[0],
	   "probe: the fake library loads (%s)", p.library);
	is_int(p.init_rc, 0, "probe: nvmlInit succeeds");
	is_str(p.driver_version, "590.48.01", "probe: the driver version");
	is_str(p.nvml_version, "13.590.48.01", "probe: the NVML version");
	is_int(p.cuda_version, 13010, "probe: the CUDA version");
	is_str(p.module_version, "590.48.01", "probe: the open kernel module's version");
	is_str(p.library_version, "", "probe: libnvidia-ml.so.1 carries no version in its name");

	probe_with(lib, "init-mismatch.scn", old_proc, &p);
	is_int(p.init_rc, 18, "probe: the mismatch scenario answers LIB_RM_VERSION_MISMATCH");
	ok(p.init_error[0] && !p.driver_version[0] && !p.cuda_version,
	   "probe: an error string (%s), no versions after a failed init", p.init_error);
	is_str(p.module_version, "580.95.05", "probe: the proprietary module's version");

	probe_with(lib, "doctor-init-unknown.scn", "tests/fixtures/sys-empty", &p);
	is_int(p.init_rc, 999, "probe: Unknown Error");
	ok(strstr(p.init_error, "Unknown") != NULL, "probe: its string: %s", p.init_error);
	is_str(p.module_version, "", "probe: no module version without the file");

	probe_with("/nonexistent/libnvidia-ml.so.1", "h100x2.scn", open_proc, &p);
	ok(!p.loaded && p.init_rc == -1 && strstr(p.load_error, "/nonexistent"),
	   "probe: no library: not loaded, init not called, why: %s", p.load_error);

	probe_with(stub, "h100x2.scn", open_proc, &p);
	ok(!p.loaded && strstr(p.load_error, "stub"), "probe: the CUDA stub is refused: %s",
	   p.load_error);

	if (access(legacy, R_OK)) {
		skip("the legacy fake libnvidia-ml is not built");
	} else {
		probe_with(legacy, "h100x2.scn", open_proc, &p);
		ok(p.loaded && p.init_rc == 0 && !strcmp(p.driver_version, "590.48.01"),
		   "probe: an older library without the newest symbols works (CUDA %d)",
		   p.cuda_version);
	}
}

/* --- the check ---------------------------------------------------------------------- */

static const char *env_display;

static const char *
test_env(const char *name)
{
	if (!strcmp(name, "DISPLAY"))
		return env_display;
	return NULL;
}

struct in {
	const char *root; /* under fixtures, or absolute (a temporary tree) */
	const struct nvml_probe *p;
	const struct gpu_snapshot *snap;
	const char *klog; /* a file under fixtures/doctor/nvidia/klog, or NULL: unreadable */
};

static void
run(const struct in *in, struct dr_report *r)
{
	struct gs_config cfg;
	struct dr_ctx ctx;
	char root[2200], path[2200];
	char *klog = NULL;

	if (in->root[0] == '/')
		fmt(root, sizeof(root), "%s", in->root);
	else
		join(root, sizeof(root), fixtures, in->root);
	gs_config_init(&cfg);
	gs_config_set_root(&cfg, root);
	memset(&ctx, 0, sizeof(ctx));
	ctx.cfg = &cfg;
	ctx.snap = in->snap;
	ctx.nvml = in->p;
	ctx.getenv = test_env;
	if (in->klog) {
		fmt(path, sizeof(path), "%s/doctor/nvidia/klog/%s", fixtures, in->klog);
		klog = slurp(path, NULL);
	}
	ctx.klog = klog;
	ctx.klog_why = klog ? NULL : "permission denied (kernel.dmesg_restrict = 1)";
	dr_check_nvidia(&ctx, r);
	free(klog);
	gs_config_release(&cfg);
	remember(r);
}

static bool
in_catalog(const struct dr_report *r)
{
	for (size_t i = 0; i < r->nr; i++)
		if (!dr_explain_find(r->f[i].id)) {
			diag("'%s' is not in the catalog", r->f[i].id);
			return false;
		}
	return true;
}

/* How many findings with id the input gives (-1 when an id is not in the catalog). */
static int
count(const struct in *in, const char *id)
{
	struct dr_report r = DR_REPORT_INIT;
	int n = 0;

	run(in, &r);
	for (size_t i = 0; i < r.nr; i++)
		n += !strcmp(r.f[i].id, id);
	if (!in_catalog(&r))
		n = -1;
	dr_report_release(&r);
	return n;
}

static struct nvml_probe
probe_ok(const char *version)
{
	struct nvml_probe p;

	memset(&p, 0, sizeof(p));
	p.loaded = true;
	snprintf(p.library, sizeof(p.library), "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
	snprintf(p.driver_version, sizeof(p.driver_version), "%s", version);
	snprintf(p.library_version, sizeof(p.library_version), "%s", version);
	p.cuda_version = 13010;
	return p;
}

static struct nvml_probe
probe_fail(int rc, const char *msg)
{
	struct nvml_probe p = probe_ok("590.48.01");

	p.init_rc = rc;
	snprintf(p.init_error, sizeof(p.init_error), "%s", msg);
	p.driver_version[0] = '\0';
	p.cuda_version = 0;
	return p;
}

static void
test_versions(void)
{
	struct nvml_probe p = probe_ok("590.48.01");
	struct nvml_probe mm = probe_fail(18, "RM has detected an NVML/RM version mismatch.");
	struct in in = { "doctor/nvidia/loaded", &p, NULL, "clean.txt" };
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;

	run(&in, &r);
	f = find_id(&r, "setup.nvidia.version");
	ok(f && f->severity == DR_OK && says(f, "590.48.01") && says(f, "CUDA 13.1"),
	   "version: module and library 590.48.01 agree: ok, with the CUDA version: %s",
	   f ? f->title : "(none)");
	ok(!find_id(&r, "setup.nvidia.version_mismatch"), "version: no mismatch");
	ok(says(f, "/proc/driver/nvidia/version"), "version: the evidence names the file");
	dr_report_release(&r);

	in.root = "doctor/nvidia/open";
	is_int(count(&in, "setup.nvidia.version"), 1, "version: the open kernel module's line");

	in.root = "doctor/nvidia/old";
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.version_mismatch");
	ok(f && f->severity == DR_ERROR && says(f, "580.95.05") && says(f, "590.48.01"),
	   "version: module 580.95.05, library 590.48.01: error naming both");
	ok(says(f, "rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia") && says(f, "Reboot") &&
	           says(f, "dkms status"),
	   "version: the action: reboot, reload the modules, check the upgrade");
	ok(!find_id(&r, "setup.nvidia.version"), "version: no ok beside the error");
	dr_report_release(&r);

	/* NVML's own answer, with the version from the library's file name */
	in.p = &mm;
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.version_mismatch");
	ok(f && says(f, "returned 18"), "version: LIB_RM_VERSION_MISMATCH is quoted");
	ok(!find_id(&r, "setup.nvidia.init_failed"), "version: and not reported twice");
	dr_report_release(&r);
	in.root = "doctor/nvidia/loaded";
	mm.library_version[0] = '\0';
	is_int(count(&in, "setup.nvidia.version_mismatch"), 1,
	       "version: NVML's mismatch alone is enough");
	in.p = &p;
	is_int(count(&in, "setup.nvidia.version_mismatch"), 0, "version: init works: cleared");
}

static void
test_init(void)
{
	struct nvml_probe p = probe_ok("590.48.01");
	struct in in = { "doctor/nvidia/unloaded", &p, NULL, "clean.txt" };
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;
	char tmp_root[1024];

	/* driver not loaded */
	p = probe_fail(9, "Driver Not Loaded");
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.init_driver_not_loaded");
	ok(f && f->severity == DR_ERROR && says(f, "modprobe nvidia") &&
	           says(f, "dkms autoinstall") && says(f, "0000:01:00.0"),
	   "init: DRIVER_NOT_LOADED with an NVIDIA GPU on the bus: error, modprobe, DKMS");
	dr_report_release(&r);
	in.root = "doctor/nvidia/intel";
	run(&in, &r);
	ok(!find_id(&r, "setup.nvidia.init_driver_not_loaded"),
	   "init: DRIVER_NOT_LOADED with no NVIDIA GPU: nothing to drive");
	dr_report_release(&r);
	in.root = "doctor/nvidia/loaded";
	p = probe_ok("590.48.01");
	run(&in, &r);
	ok(!find_id(&r, "setup.nvidia.init_driver_not_loaded") && r.nr == 1,
	   "init: NVML works: only the version finding (%zu)", r.nr);
	dr_report_release(&r);

	/* no permission */
	p = probe_fail(4, "Insufficient Permissions");
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.init_no_permission");
	ok(f && f->severity == DR_ERROR && says(f, "/dev/nvidiactl: absent") && says(f, "usermod"),
	   "init: NO_PERMISSION: error, the device nodes and the group advice");
	dr_report_release(&r);
	p = probe_ok("590.48.01");
	is_int(count(&in, "setup.nvidia.init_no_permission"), 0,
	       "init: works: no permission error");

	/* library not found, and no library at all */
	p = probe_fail(12, "Library Not Found");
	is_int(count(&in, "setup.nvidia.library_missing"), 1,
	       "init: LIBRARY_NOT_FOUND: the library is incomplete");
	memset(&p, 0, sizeof(p));
	p.init_rc = -1;
	snprintf(p.load_error, sizeof(p.load_error),
	         "nvml: the NVIDIA driver library libnvidia-ml.so.1 is not installed");
	in.root = "doctor/nvidia/unloaded";
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.library_missing");
	ok(f && f->severity == DR_ERROR && says(f, "not installed") && says(f, "ubuntu-drivers"),
	   "init: no library, an NVIDIA GPU on the bus: error, install the driver");
	dr_report_release(&r);
	in.root = "doctor/nvidia/container";
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.library_missing");
	ok(says(f, "--gpus all"), "init: no library in a container: start it with the GPUs");
	dr_report_release(&r);
	in.root = "doctor/nvidia/intel";
	run(&in, &r);
	ok(r.nr == 0,
	   "init: no library, no NVIDIA GPU, no module: not an NVIDIA machine, "
	   "nothing said (%zu)",
	   r.nr);
	dr_report_release(&r);
	in.p = NULL;
	in.klog = "lockdown.txt";
	run(&in, &r);
	ok(r.nr == 0, "init: not probed, Intel only, a lockdown line: still nothing (%zu)", r.nr);
	dr_report_release(&r);
	in.p = &p;
	in.klog = "clean.txt";

	/* Unknown Error: in a container, and outside one */
	p = probe_fail(999, "Unknown Error");
	in.root = "doctor/nvidia/container";
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.init_unknown");
	ok(f && f->severity == DR_ERROR && says(f, "container") && says(f, ".dockerenv") &&
	           says(f, "daemon-reload") && says(f, "create-dev-char-symlinks --create-all") &&
	           says(f, "start it again"),
	   "init: Unknown Error in a container (/.dockerenv): daemon-reload, recreate, "
	   "nvidia-ctk");
	ok(says(f, "/lib/udev/rules.d/71-nvidia-dev-char.rules") &&
	           says(f, "DEVPATH==\"/bus/pci/drivers/nvidia\"") &&
	           says(f, "native.cgroupdriver=cgroupfs") && says(f, "/etc/docker/daemon.json") &&
	           !says(f, "cdi generate"),
	   "init: Unknown Error: NVIDIA's documented workarounds (the udev rule that makes the "
	   "/dev/char links, docker's cgroupfs driver), not CDI, which is not one");
	ok(strstr(dr_explain_find("setup.nvidia.init_unknown")->text, "71-nvidia-dev-char.rules") &&
	           !strstr(dr_explain_find("setup.nvidia.init_unknown")->text, "cdi generate"),
	   "init: the catalog gives the same workarounds");
	dr_report_release(&r);
	in.root = "doctor/nvidia/container-cgroup";
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.init_unknown");
	ok(says(f, "daemon-reload") && says(f, "'docker'"),
	   "init: a container found through /proc/1/cgroup");
	dr_report_release(&r);
	/* container= in /proc/1/environ, NUL-separated: written here */
	fmt(tmp_root, sizeof(tmp_root), "%s/environ", tmp_dir);
	{
		char from[2200], dir[1100];
		static const char env_block[] = "HOME=/\0container=podman\0TERM=xterm\0";

		join(from, sizeof(from), fixtures, "doctor/nvidia/unloaded");
		copy_tree(from, tmp_root);
		join(dir, sizeof(dir), tmp_root, "proc/1");
		make_dirs(dir);
		write_bytes_at(dir, "environ", env_block, sizeof(env_block) - 1);
	}
	in.root = tmp_root;
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.init_unknown");
	ok(says(f, "container=podman"), "init: a container found through /proc/1/environ");
	dr_report_release(&r);
	in.root = "doctor/nvidia/unloaded";
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.init_unknown");
	ok(f && !says(f, "daemon-reload") && !says(f, "(in a container)") && says(f, "reboot"),
	   "init: Unknown Error outside a container: reboot, reinstall; no container story");
	dr_report_release(&r);
	p = probe_ok("590.48.01");
	in.root = "doctor/nvidia/loaded";
	is_int(count(&in, "setup.nvidia.init_unknown"), 0, "init: works: no Unknown Error");

	/* anything else */
	p = probe_fail(15, "GPU is lost");
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.init_failed");
	ok(f && f->severity == DR_ERROR && says(f, "GPU is lost") && says(f, "returned 15"),
	   "init: another error: init_failed with NVML's words");
	dr_report_release(&r);
	p = probe_ok("590.48.01");
	is_int(count(&in, "setup.nvidia.init_failed"), 0, "init: works: cleared");
}

/* Two (or nr) NVIDIA GPUs with the per-GPU settings given. */
static void
make_snap(struct gpu_snapshot *s, unsigned nr, double persist, double display, double mode,
          double mig, double mig_pending)
{
	gpu_snapshot_init(s);
	for (unsigned i = 0; i < nr; i++) {
		struct gpu_device *d = gpu_snapshot_add_dev(s);

		d->index = i;
		d->vendor = VENDOR_NVIDIA;
		snprintf(d->name, sizeof(d->name), "NVIDIA H100 80GB HBM3");
		snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "00000000:%02X:00.0", 0x18 + i);
		if (persist >= 0)
			dev_set(d, GF_PERSISTENCE, persist);
		if (display >= 0)
			dev_set(d, GF_DISPLAY_ACTIVE, display);
		if (mode >= 0)
			dev_set(d, GF_COMPUTE_MODE, mode);
		if (mig >= 0)
			dev_set(d, GF_MIG_MODE, mig);
		if (mig_pending >= 0)
			dev_set(d, GF_MIG_MODE_PENDING, mig_pending);
	}
}

static void
test_devices(void)
{
	struct nvml_probe p = probe_ok("590.48.01");
	struct gpu_snapshot s;
	struct in in = { "doctor/nvidia/loaded", &p, &s, "clean.txt" };
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;

	/* persistence */
	make_snap(&s, 2, 0, 0, -1, -1, -1);
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.persistence_off");
	ok(f && f->severity == DR_INFO && says(f, "2 of 2") &&
	           says(f, "systemctl enable --now nvidia-persistenced") &&
	           says(f, "nvidia-smi -pm 1") && says(f, "GPU 1 (NVIDIA H100"),
	   "persistence: off on a headless server: the daemon, then nvidia-smi -pm 1");
	dr_report_release(&r);
	s.dev[1].v[GF_DISPLAY_ACTIVE] = 1;
	is_int(count(&in, "setup.nvidia.persistence_off"), 0,
	       "persistence: a GPU drives a display: not a server, nothing said");
	dev_unset(&s.dev[0], GF_DISPLAY_ACTIVE);
	dev_unset(&s.dev[1], GF_DISPLAY_ACTIVE);
	env_display = ":0";
	is_int(count(&in, "setup.nvidia.persistence_off"), 0,
	       "persistence: display state unknown, DISPLAY set: nothing said");
	env_display = NULL;
	is_int(count(&in, "setup.nvidia.persistence_off"), 1,
	       "persistence: display state unknown, no DISPLAY: headless");
	s.dev[0].v[GF_PERSISTENCE] = 1;
	s.dev[1].v[GF_PERSISTENCE] = 1;
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.persistence");
	ok(f && f->severity == DR_OK && !find_id(&r, "setup.nvidia.persistence_off"),
	   "persistence: on: ok (%s)", f ? f->title : "none");
	dr_report_release(&r);
	gpu_snapshot_release(&s);

	/* compute mode */
	make_snap(&s, 2, 1, 0, CM_DEFAULT, -1, -1);
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.compute_mode");
	ok(f && f->severity == DR_OK && !find_id(&r, "setup.nvidia.compute_prohibited") &&
	           !find_id(&r, "setup.nvidia.compute_exclusive"),
	   "compute: DEFAULT everywhere: ok");
	dr_report_release(&r);
	s.dev[1].v[GF_COMPUTE_MODE] = CM_PROHIBITED;
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.compute_prohibited");
	ok(f && f->severity == DR_WARNING && says(f, "nvidia-smi -i 1 -c DEFAULT") &&
	           !find_id(&r, "setup.nvidia.compute_mode"),
	   "compute: GPU 1 PROHIBITED, GPU 0 usable: a warning, reset GPU 1 to DEFAULT");
	dr_report_release(&r);
	s.dev[0].v[GF_COMPUTE_MODE] = CM_PROHIBITED;
	run(&in, &r);
	ok(r.nr >= 2 && dr_worst(&r) == DR_ERROR,
	   "compute: every NVIDIA GPU PROHIBITED: nothing left for CUDA, an error");
	for (size_t i = 0; i < r.nr; i++)
		if (!strcmp(r.f[i].id, "setup.nvidia.compute_prohibited") &&
		    r.f[i].severity != DR_ERROR)
			ok(0, "compute: all prohibited: each is an error");
	dr_report_release(&r);
	s.dev[0].v[GF_COMPUTE_MODE] = CM_DEFAULT;
	s.dev[1].v[GF_COMPUTE_MODE] = CM_EXCLUSIVE_PROCESS;
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.compute_exclusive");
	ok(f && f->severity == DR_INFO && says(f, "EXCLUSIVE_PROCESS") &&
	           says(f, "busy or unavailable") &&
	           !find_id(&r, "setup.nvidia.compute_prohibited"),
	   "compute: EXCLUSIVE_PROCESS: a note naming the error a second job gets");
	dr_report_release(&r);
	gpu_snapshot_release(&s);

	/* MIG */
	make_snap(&s, 1, 1, 0, CM_DEFAULT, 1, 1);
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.mig_enabled");
	ok(f && f->severity == DR_INFO && says(f, "CUDA_VISIBLE_DEVICES") && says(f, "MIG-") &&
	           !find_id(&r, "setup.nvidia.mig_pending"),
	   "mig: enabled: a note on CUDA seeing only MIG devices");
	dr_report_release(&r);
	s.dev[0].v[GF_MIG_MODE] = 0;
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.mig_pending");
	ok(f && f->severity == DR_WARNING && says(f, "off -> on") &&
	           says(f, "nvidia-smi -i 0 -r") && !find_id(&r, "setup.nvidia.mig_enabled"),
	   "mig: off, on pending: warning, reset the GPU");
	dr_report_release(&r);
	s.dev[0].v[GF_MIG_MODE_PENDING] = 0;
	run(&in, &r);
	ok(!find_id(&r, "setup.nvidia.mig_pending") && !find_id(&r, "setup.nvidia.mig_enabled"),
	   "mig: off: nothing");
	dr_report_release(&r);
	gpu_snapshot_release(&s);
}

static void
test_secure_boot(void)
{
	static const unsigned char sb_on[] = { 0x06, 0, 0, 0, 1 }, sb_off[] = { 0x06, 0, 0, 0, 0 };
	struct nvml_probe p = probe_fail(9, "Driver Not Loaded");
	char root[1024], from[2200], efi[1100];
	struct in in = { NULL, &p, NULL, "lockdown.txt" };
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;

	fmt(root, sizeof(root), "%s/sb", tmp_dir);
	join(from, sizeof(from), fixtures, "doctor/nvidia/unloaded");
	copy_tree(from, root);
	join(efi, sizeof(efi), root, "sys/firmware/efi/efivars");
	make_dirs(efi);
	write_bytes_at(efi, "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", sb_on,
	               sizeof(sb_on));
	in.root = root;

	run(&in, &r);
	f = find_id(&r, "setup.nvidia.secure_boot_refused");
	ok(f && f->severity == DR_ERROR && says(f, "Lockdown: modprobe") &&
	           says(f, "1 (enabled)") && says(f, "mokutil --import") &&
	           says(f, "linux-modules-nvidia") && says(f, "disable Secure Boot"),
	   "secure boot: lockdown refused the module: error, sign / signed packages / disable");
	ok(f && strstr(f->action, "mokutil") < strstr(f->action, "disable Secure Boot"),
	   "secure boot: disabling it is the last resort");
	dr_report_release(&r);

	in.klog = "rejected.txt";
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.secure_boot_refused");
	ok(says(f, "nvidia: Key was rejected by service"),
	   "secure boot: 'Key was rejected by service' naming nvidia is a refusal");
	dr_report_release(&r);

	in.klog = "taint.txt";
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.module_unsigned");
	ok(!find_id(&r, "setup.nvidia.secure_boot_refused") && f && f->severity == DR_INFO &&
	           says(f, "tainting kernel") && !says(f, "refused the"),
	   "secure boot: the taint note alone is not a refusal (an info)");
	dr_report_release(&r);

	in.klog = "clean.txt";
	run(&in, &r);
	ok(!find_id(&r, "setup.nvidia.secure_boot_refused") &&
	           !find_id(&r, "setup.nvidia.module_unsigned") &&
	           !find_id(&r, "setup.nvidia.secure_boot_likely"),
	   "secure boot: a log without a refusal: nothing about Secure Boot");
	dr_report_release(&r);

	in.root = "doctor/nvidia/loaded";
	in.klog = "lockdown.txt";
	p = probe_ok("590.48.01");
	is_int(count(&in, "setup.nvidia.secure_boot_refused"), 0,
	       "secure boot: the module is loaded: an old lockdown line is not about it");
	p = probe_fail(9, "Driver Not Loaded");
	in.root = root;

	/* the kernel log could not be read */
	in.klog = NULL;
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.secure_boot_likely");
	ok(f && f->severity == DR_WARNING && says(f, "dmesg_restrict") && says(f, "1 (enabled)") &&
	           says(f, "Key was rejected by service") && says(f, "mokutil"),
	   "secure boot: log unreadable, module absent, Secure Boot on: a likely cause, ranked");
	dr_report_release(&r);
	write_bytes_at(efi, "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", sb_off,
	               sizeof(sb_off));
	is_int(count(&in, "setup.nvidia.secure_boot_likely"), 0, "secure boot: off: not a cause");
	in.root = "doctor/nvidia/unloaded";
	is_int(count(&in, "setup.nvidia.secure_boot_likely"), 0,
	       "secure boot: no EFI variable: nothing said");
}

/* A GPU passed through to a virtual machine (vfio-pci) needs no NVIDIA driver on the host. */
static void
test_vfio(void)
{
	static const unsigned char sb_on[] = { 0x06, 0, 0, 0, 1 };
	struct nvml_probe p;
	char root[1024], from[2200], dir[2200];
	struct in in = { NULL, &p, NULL, NULL };
	struct dr_report r = DR_REPORT_INIT;

	fmt(root, sizeof(root), "%s/vfio", tmp_dir);
	join(from, sizeof(from), fixtures, "doctor/nvidia/unloaded");
	copy_tree(from, root);
	join(dir, sizeof(dir), root, "sys/bus/pci/devices/0000:01:00.0");
	link_at(dir, "driver", "../../../../bus/pci/drivers/vfio-pci");
	join(dir, sizeof(dir), root, "sys/firmware/efi/efivars");
	make_dirs(dir);
	write_bytes_at(dir, "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c", sb_on,
	               sizeof(sb_on));
	in.root = root;

	memset(&p, 0, sizeof(p));
	p.init_rc = -1;
	snprintf(p.load_error, sizeof(p.load_error),
	         "nvml: the NVIDIA driver library libnvidia-ml.so.1 is not installed");
	run(&in, &r);
	ok(r.nr == 0,
	   "vfio: the only NVIDIA GPU is a VM's, no library, Secure Boot on, log unread: "
	   "nothing (%zu)",
	   r.nr);
	dr_report_release(&r);

	p = probe_fail(9, "Driver Not Loaded");
	in.klog = "clean.txt";
	run(&in, &r);
	ok(!find_id(&r, "setup.nvidia.init_driver_not_loaded") && dr_worst(&r) < DR_WARNING,
	   "vfio: the library installed, DRIVER_NOT_LOADED: not an error for a VM's GPU");
	dr_report_release(&r);

	/* the same GPU given back to the host: the library is missing again */
	join(dir, sizeof(dir), root, "sys/bus/pci/devices/0000:01:00.0");
	link_at(dir, "driver", "../../../../bus/pci/drivers/nouveau");
	memset(&p, 0, sizeof(p));
	p.init_rc = -1;
	is_int(count(&in, "setup.nvidia.library_missing"), 1,
	       "vfio: the GPU bound to a host driver instead: the library is missing");
}

/* A malformed /proc/driver/nvidia/version: no version is made up, nothing cut. */
static void
test_module_version(void)
{
	struct nvml_probe p = probe_ok("590.48.01");
	char root[1024], from[2200], dir[2200], text[512];
	struct in in = { NULL, &p, NULL, "clean.txt" };
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;

	fmt(root, sizeof(root), "%s/modver", tmp_dir);
	join(from, sizeof(from), fixtures, "doctor/nvidia/loaded");
	copy_tree(from, root);
	join(dir, sizeof(dir), root, "proc/driver/nvidia");
	in.root = root;

	/* a version longer than any buffer: unknown, not cut into a false mismatch */
	fmt(text, sizeof(text), "NVRM version: NVIDIA UNIX x86_64 Kernel Module  590.48.01%0100d\n",
	    0);
	write_at(dir, "version", text);
	run(&in, &r);
	ok(!find_id(&r, "setup.nvidia.version_mismatch") && !find_id(&r, "setup.nvidia.version"),
	   "module version: a 109-character version is unknown: no mismatch made up");
	dr_report_release(&r);

	/* a suffix after the digits: the version is the digits */
	write_at(dir, "version",
	         "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  590.48.01-custom  "
	         "Release Build\n");
	run(&in, &r);
	f = find_id(&r, "setup.nvidia.version");
	ok(f && !find_id(&r, "setup.nvidia.version_mismatch") && says(f, "590.48.01-custom"),
	   "module version: '590.48.01-custom' is 590.48.01, the evidence quotes the line");
	dr_report_release(&r);

	/* "Kernel Module" only on a later line: not the version line */
	write_at(dir, "version", "NVRM version: garbage\nGCC version: Kernel Module 1.2.3\n");
	run(&in, &r);
	ok(!find_id(&r, "setup.nvidia.version_mismatch"),
	   "module version: a first line without it: unknown, no mismatch with 1.2.3");
	dr_report_release(&r);

	/* no version file at all, the library works: nothing to compare, nothing said */
	join(dir, sizeof(dir), root, "proc/driver/nvidia/version");
	unlink(dir);
	run(&in, &r);
	ok(!find_id(&r, "setup.nvidia.version_mismatch") && in_catalog(&r),
	   "module version: the file missing: no mismatch");
	dr_report_release(&r);
}

/* The probe's load_error is cut at a clause, never inside one. */
static void
test_probe_long_error(void)
{
	struct gs_config cfg;
	struct nvml_probe p;
	char root[1024], dir[2200], name[64];
	const char *end;

	fmt(root, sizeof(root), "%s/many/sys", tmp_dir);
	for (unsigned i = 0; i < 8; i++) {
		fmt(name, sizeof(name), "bus/pci/devices/0000:%02x:00.0", 0x18 + i);
		join(dir, sizeof(dir), root, name);
		make_dirs(dir);
		write_at(dir, "class", "0x030200\n");
		write_at(dir, "vendor", "0x10de\n");
		write_at(dir, "device", "0x2330\n");
	}
	gs_config_init(&cfg);
	cfg.nvml_path = "/nonexistent/a/rather/long/directory/name/lib/libnvidia-ml.so.1";
	cfg.sysfs_root = root;
	cfg.proc_root = "tests/fixtures/sys-empty";
	nvml_probe(&cfg, &p);
	end = p.load_error + strlen(p.load_error);
	ok(!p.loaded && strstr(p.load_error, "/nonexistent/a/rather") &&
	           strlen(p.load_error) < sizeof(p.load_error) && end - p.load_error >= 5 &&
	           !strcmp(end - 5, "; ..."),
	   "probe: 8 GPUs without a driver: whole clauses, then '; ...': %s", p.load_error);
	{
		bool whole = true;

		for (const char *q = strstr(p.load_error, "GPU at "); q;
		     q = strstr(q + 1, "GPU at "))
			whole &= strncmp(q + 19, " has no kernel driver bound", 27) == 0;
		ok(whole, "probe: each GPU's clause kept is whole");
	}
}

static void
test_catalog(void)
{
	const struct dr_explain *prev = NULL;
	bool sorted = true, complete = true, emitted = true;

	for (const struct dr_explain *e = dr_catalog_nvidia; e->id; e++) {
		if (prev && strcmp(prev->id, e->id) >= 0)
			sorted = false;
		if (strncmp(e->id, "setup.nvidia.", 13) || !e->title || !e->text ||
		    dr_explain_find(e->id) != e)
			complete = false;
		bool found = false;
		for (size_t i = 0; i < nr_seen; i++)
			found |= !strcmp(seen[i], e->id);
		if (!found) {
			diag("'%s' was emitted by no test", e->id);
			emitted = false;
		}
		prev = e;
	}
	ok(sorted, "catalog: in id order");
	ok(complete, "catalog: setup.nvidia.* ids with a title and a text, found by "
	             "dr_explain_find");
	ok(emitted, "catalog: every entry is emitted by some test");
	for (size_t i = 0; i < nr_seen; i++)
		if (!dr_explain_find(seen[i])) {
			ok(0, "catalog: '%s' is explained", seen[i]);
			return;
		}
	ok(nr_seen > 0, "catalog: all %zu ids emitted are explained", nr_seen);
}

int
main(int argc, char **argv)
{
	const char *o = getenv("O");
	char self[1024];

	(void)argc;
	find_fixtures();
	fmt(scenarios, sizeof(scenarios), "%s/../scenarios", fixtures);
	if (o && *o) {
		join(fake_dir, sizeof(fake_dir), o, "fakenvml");
	} else {
		fmt(self, sizeof(self), "%s", argv[0]);
		fmt(fake_dir, sizeof(fake_dir), "%s/../fakenvml", dirname(self));
	}
	make_tmp_dir("t_doctor_nvidia");

	test_probe();
	test_versions();
	test_init();
	test_devices();
	test_secure_boot();
	test_vfio();
	test_module_version();
	test_probe_long_error();
	test_catalog();

	rm_tree(tmp_dir);
	return done_testing();
}
