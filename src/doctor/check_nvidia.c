/*
 * setup.nvidia.*: is NVIDIA's driver set up so that CUDA and NVML work.
 * The kernel module against the user-space library (the version mismatch
 * left by an upgrade without a reboot), how nvmlInit answered, Secure Boot
 * refusing the unsigned module, and the per-GPU settings that stop or slow
 * CUDA: persistence mode on a headless server, the compute mode, MIG.
 *
 * A machine with no NVIDIA GPU on the bus, no nvidia module and no
 * libnvidia-ml gets no finding at all.
 */
#include "doctor/doctor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend/nvml_probe.h"
#include "backend/pci.h"
#include "core/config.h"
#include "core/err.h"
#include "core/fileio.h"
#include "core/gpu.h"
#include "core/strbuf.h"

/* NVML's return codes that get their own advice (nvml.h's values). */
#define NV_NO_PERMISSION     4
#define NV_DRIVER_NOT_LOADED 9
#define NV_LIBRARY_NOT_FOUND 12
#define NV_RM_MISMATCH       18
#define NV_UNKNOWN           999

/* EFI_GLOBAL_VARIABLE's GUID, as mokutil --sb-state reads it */
#define SECURE_BOOT_VAR "firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
#define MODULE_VERSION  "driver/nvidia/version"

/* Kernel log lines quoted as evidence, at most. */
#define MAX_KLOG_LINES 3

/* What every check below needs, read once. */
struct nv_state {
	const struct dr_ctx *ctx;
	const struct nvml_probe *p; /* NULL: not probed */
	struct pci_gpu *pci;
	size_t nr_pci;
	bool pci_ok;          /* the bus could be read */
	size_t nr_nv;         /* NVIDIA GPUs on the bus for this host (not vfio-pci's) */
	size_t nr_nouveau;    /* ... of them held by nouveau or nova_core */
	char kver[64];        /* the loaded module's version, "" none */
	bool kver_open;       /* the open kernel module */
	char kver_line[200];  /* the first line of MODULE_VERSION */
	bool module_loaded;   /* MODULE_VERSION or <sysfs>/module/nvidia exists */
	int secure_boot;      /* 1 on, 0 off, -1 unknown (no EFI variable) */
	char container[4400]; /* why this looks like a container, "" when it does not */
	char proc_path[4096]; /* <proc>/driver/nvidia/version */
};

/* --- reading -------------------------------------------------------------------- */

static void
read_module(struct nv_state *st)
{
	const struct gs_config *cfg = st->ctx->cfg;
	struct strbuf sb = STRBUF_INIT;

	path_join(st->proc_path, sizeof(st->proc_path), cfg->proc_root, MODULE_VERSION);
	if (file_read(cfg->proc_root, MODULE_VERSION, &sb, 4096, NULL) == 0) {
		snprintf(st->kver_line, sizeof(st->kver_line), "%.*s", (int)strcspn(sb.buf, "\n"),
		         sb.buf);
		nvml_parse_module_version(sb.buf, st->kver, sizeof(st->kver), &st->kver_open);
		st->module_loaded = true;
	}
	if (file_exists(cfg->sysfs_root, "module/nvidia"))
		st->module_loaded = true;
	strbuf_release(&sb);
}

/* 1 when the SecureBoot EFI variable says enabled, 0 disabled, -1 unknown. */
static int
read_secure_boot(const struct gs_config *cfg)
{
	struct strbuf sb = STRBUF_INIT;
	int on = -1;

	/* 4 bytes of attributes, then the value */
	if (file_read(cfg->sysfs_root, SECURE_BOOT_VAR, &sb, 64, NULL) == 0 && sb.len >= 5)
		on = sb.buf[4] == 1;
	strbuf_release(&sb);
	return on;
}

/* Why this looks like a container (into st->container), or "". */
static void
detect_container(struct nv_state *st)
{
	const struct gs_config *cfg = st->ctx->cfg;
	static const char *const runtimes[] = { "docker", "containerd", "kubepods",
		                                "libpod", "crio",       "lxc" };
	struct strbuf sb = STRBUF_INIT;
	char path[4096];

	st->container[0] = '\0';
	if (file_exists(cfg->root, "/.dockerenv")) {
		snprintf(st->container, sizeof(st->container), "%s exists",
		         dr_path(st->ctx, path, sizeof(path), "/.dockerenv"));
		goto out;
	}
	if (file_exists(cfg->root, "/run/.containerenv")) {
		snprintf(st->container, sizeof(st->container), "%s exists",
		         dr_path(st->ctx, path, sizeof(path), "/run/.containerenv"));
		goto out;
	}
	/* environ is NUL-separated: look at each variable */
	if (file_read(cfg->proc_root, "1/environ", &sb, 65536, NULL) == 0) {
		for (size_t i = 0; i < sb.len; i += strlen(sb.buf + i) + 1)
			if (!strncmp(sb.buf + i, "container=", 10)) {
				snprintf(st->container, sizeof(st->container), "%s: %.40s",
				         path_join(path, sizeof(path), cfg->proc_root, "1/environ"),
				         sb.buf + i);
				goto out;
			}
	}
	if (file_read(cfg->proc_root, "1/cgroup", &sb, 65536, NULL) == 0)
		for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
			if (strstr(sb.buf, runtimes[i])) {
				snprintf(st->container, sizeof(st->container), "%s names '%s'",
				         path_join(path, sizeof(path), cfg->proc_root, "1/cgroup"),
				         runtimes[i]);
				goto out;
			}
out:
	strbuf_release(&sb);
}

static void
state_init(struct nv_state *st, const struct dr_ctx *ctx)
{
	memset(st, 0, sizeof(*st));
	st->ctx = ctx;
	st->p = ctx->nvml;
	st->pci_ok = pci_list_gpus(ctx->cfg->sysfs_root, &st->pci, &st->nr_pci, NULL) == 0;
	for (size_t i = 0; i < st->nr_pci; i++) {
		if (st->pci[i].vendor != PCI_VENDOR_NVIDIA)
			continue;
		/* a GPU passed through to a virtual machine needs no driver here */
		if (!strcmp(st->pci[i].driver, "vfio-pci") ||
		    !strcmp(st->pci[i].driver, "pci-stub"))
			continue;
		st->nr_nv++;
		st->nr_nouveau += !strcmp(st->pci[i].driver, "nouveau") ||
		                  !strcmp(st->pci[i].driver, "nova_core");
	}
	read_module(st);
	st->secure_boot = read_secure_boot(ctx->cfg);
	detect_container(st);
}

/* Anything of NVIDIA's here: a GPU on the bus or in the snapshot, the module, the library. */
static bool
nvidia_machine(const struct nv_state *st)
{
	return st->nr_nv || st->module_loaded || (st->p && st->p->loaded) ||
	       gpu_snapshot_count(st->ctx->snap, VENDOR_NVIDIA);
}

/* --- evidence helpers ----------------------------------------------------------- */

static void
evidence_module(struct dr_finding *f, const struct nv_state *st)
{
	if (st->kver_line[0])
		dr_evidence(f, "%s: %s", st->proc_path, st->kver_line);
	else
		dr_evidence(f, "%s: absent (the nvidia kernel module is not loaded)",
		            st->proc_path);
}

static void
evidence_pci(struct dr_finding *f, const struct nv_state *st)
{
	for (size_t i = 0; i < st->nr_pci; i++)
		if (st->pci[i].vendor == PCI_VENDOR_NVIDIA)
			dr_evidence(f, "%s/bus/pci/devices/%s: NVIDIA GPU 0x%04x, driver %s",
			            st->ctx->cfg->sysfs_root, st->pci[i].addr, st->pci[i].device,
			            st->pci[i].driver[0] ? st->pci[i].driver : "(none)");
}

static void
evidence_init(struct dr_finding *f, const struct nvml_probe *p)
{
	dr_evidence(f, "nvmlInit in %s: returned %d (%s)", p->library, p->init_rc,
	            p->init_error[0] ? p->init_error : "no message");
}

/* Up to MAX_KLOG_LINES kernel log lines about the nvidia module (NVRM, nvidia:). */
static void
evidence_klog(struct dr_finding *f, const struct dr_ctx *ctx)
{
	const char *p = ctx->klog;
	size_t n = 0;

	while (p && *p && n < MAX_KLOG_LINES) {
		size_t len = strcspn(p, "\n");
		char line[240];

		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		if (strstr(line, "NVRM") || strcasestr(line, "nvidia")) {
			dr_evidence(f, "kernel log: %s", line);
			n++;
		}
		p += len + (p[len] == '\n');
	}
}

static void
gpu_label(char *buf, size_t size, const struct gpu_device *d)
{
	snprintf(buf, size, "GPU %u (%s%s%s)", d->index, d->name[0] ? d->name : "NVIDIA",
	         d->pci_bus_id[0] ? ", " : "", d->pci_bus_id);
}

/* "13.1" from 13010 */
static void
cuda_str(char *buf, size_t size, int v)
{
	snprintf(buf, size, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* --- kernel module against library ---------------------------------------------- */

static void
check_versions(const struct nv_state *st, struct dr_report *r)
{
	const struct nvml_probe *p = st->p;
	const struct gpu_snapshot *snap = st->ctx->snap;
	bool nvml_says = p && p->loaded && p->init_rc == NV_RM_MISMATCH;
	const char *lver = NULL, *lib = p && p->library[0] ? p->library : "libnvidia-ml.so.1";
	char lsrc[400], cuda[16] = "";
	struct dr_finding *f;
	int cv = 0;

	if (p && p->loaded && p->init_rc == 0 && p->driver_version[0]) {
		lver = p->driver_version;
		snprintf(lsrc, sizeof(lsrc), "%s: nvmlSystemGetDriverVersion() = %s", lib, lver);
	} else if (p && p->loaded && p->library_version[0]) {
		lver = p->library_version;
		snprintf(lsrc, sizeof(lsrc), "%s: the library's file name says %s", lib, lver);
	} else if (!p && snap && snap->nvidia.driver_version[0]) {
		lver = snap->nvidia.driver_version;
		snprintf(lsrc, sizeof(lsrc), "%s: nvmlSystemGetDriverVersion() = %s",
		         snap->nvidia.library[0] ? snap->nvidia.library : lib, lver);
	}
	if (p && p->cuda_version > 0)
		cv = p->cuda_version;
	else if (snap && snap->nvidia.cuda_version > 0)
		cv = snap->nvidia.cuda_version;
	if (cv)
		cuda_str(cuda, sizeof(cuda), cv);

	if (!nvml_says && (!st->kver[0] || !lver))
		return;
	if (!nvml_says && !strcmp(st->kver, lver)) {
		if (cuda[0])
			f = dr_add(r, "setup.nvidia.version", DR_OK,
			           "the NVIDIA kernel module and libnvidia-ml are both %s (CUDA %s "
			           "supported)",
			           lver, cuda);
		else
			f = dr_add(r, "setup.nvidia.version", DR_OK,
			           "the NVIDIA kernel module and libnvidia-ml are both %s", lver);
		evidence_module(f, st);
		dr_evidence(f, "%s", lsrc);
		return;
	}

	f = dr_add(r, "setup.nvidia.version_mismatch", DR_ERROR,
	           "the NVIDIA kernel module (%s) does not match the driver library (%s)",
	           st->kver[0] ? st->kver : "version unknown", lver ? lver : "version unknown");
	evidence_module(f, st);
	if (lver)
		dr_evidence(f, "%s", lsrc);
	if (nvml_says)
		evidence_init(f, p);
	dr_meaning(f, "The kernel module and the user-space libraries of NVIDIA's driver must be "
	              "the same release. They differ after a driver upgrade without a reboot (the "
	              "old module is still loaded), or when an upgrade stopped half-way. NVML, "
	              "nvidia-smi (\"Failed to initialize NVML: Driver/library version mismatch\") "
	              "and CUDA all refuse to start.");
	if (st->container[0])
		dr_action(f,
		          "This looks like a container (%s): the library normally comes from the "
		          "host (NVIDIA Container Toolkit), so a different version means the image "
		          "ships its own driver libraries (a libnvidia-compute or nvidia-driver "
		          "package): remove them from the image. Otherwise fix it on the host: "
		          "reboot, or stop every GPU user and 'sudo rmmod nvidia_uvm nvidia_drm "
		          "nvidia_modeset nvidia && sudo modprobe nvidia'.",
		          st->container);
	else
		dr_action(f,
		          "1. Reboot: the installed module then loads. 2. Without a reboot: stop "
		          "every program using the GPU ('sudo lsof /dev/nvidia*': the display "
		          "manager, nvidia-persistenced, containers, jobs), then 'sudo rmmod "
		          "nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia'. "
		          "3. If they still differ after a reboot, the upgrade did not finish: "
		          "check 'dkms status' and the installed packages ('apt list --installed "
		          "| grep nvidia' or 'rpm -qa | grep -i nvidia'), finish it ('sudo apt-get "
		          "-f install', 'sudo dnf distro-sync') and rebuild the initramfs.");
}

/* --- NVML's answer ---------------------------------------------------------------- */

static void
library_missing(const struct nv_state *st, struct dr_report *r)
{
	const struct nvml_probe *p = st->p;
	struct dr_finding *f;

	if (p->loaded)
		f = dr_add(r, "setup.nvidia.library_missing", DR_ERROR,
		           "libnvidia-ml loaded but cannot find the rest of NVIDIA's driver");
	else
		f = dr_add(r, "setup.nvidia.library_missing", DR_ERROR,
		           "an NVIDIA GPU is on the PCI bus but libnvidia-ml could not be loaded");
	if (p->loaded)
		evidence_init(f, p);
	else
		dr_evidence(f, "loading libnvidia-ml.so.1: %s",
		            p->load_error[0] ? p->load_error : "not found");
	evidence_pci(f, st);
	evidence_module(f, st);
	dr_meaning(f, "libnvidia-ml.so.1 is part of NVIDIA's driver (its user-space half, "
	              "installed with the kernel module): without it nvidia-smi, NVML and CUDA "
	              "cannot reach the GPU.");
	if (p->load_error[0] && strstr(p->load_error, "stub"))
		dr_action(f, "The library found is the CUDA toolkit's link-time stub: remove its "
		             "stubs/ directory from LD_LIBRARY_PATH and /etc/ld.so.conf.d, run "
		             "'sudo ldconfig', and install the driver if it is missing.");
	else if (st->container[0])
		dr_action(f,
		          "In a container (%s) the driver's libraries are injected by the NVIDIA "
		          "Container Toolkit: start it with the GPUs ('docker run --gpus all', "
		          "'podman run --device nvidia.com/gpu=all', or the Kubernetes device "
		          "plugin), and check 'nvidia-ctk --version' on the host.",
		          st->container);
	else
		dr_action(f,
		          "Install NVIDIA's driver, the user-space libraries with it, at the "
		          "version of the kernel module%s%s ('sudo ubuntu-drivers install' on "
		          "Ubuntu, the distribution's nvidia-driver packages, or NVIDIA's "
		          "installer); then 'sudo ldconfig' and check 'ldconfig -p | grep "
		          "libnvidia-ml'. A library installed elsewhere can be named with "
		          "GPUSCOPE_NVML.",
		          st->kver[0] ? " " : "", st->kver);
}

static void
init_driver_not_loaded(const struct nv_state *st, struct dr_report *r)
{
	struct dr_finding *f;

	f = dr_add(r, "setup.nvidia.init_driver_not_loaded", DR_ERROR,
	           "NVML says the NVIDIA kernel driver is not loaded");
	evidence_init(f, st->p);
	evidence_module(f, st);
	dr_evidence(f, "%s/module/nvidia: %s", st->ctx->cfg->sysfs_root,
	            file_exists(st->ctx->cfg->sysfs_root, "module/nvidia") ? "present" : "absent");
	evidence_pci(f, st);
	evidence_klog(f, st->ctx);
	dr_meaning(f,
	           "The library is installed but the nvidia kernel module is not running, so "
	           "there is no /dev/nvidiactl and no GPU for NVML or CUDA%s.",
	           st->container[0] ? " (in a container: the container was not given the GPUs, "
	                              "or the host has no driver loaded)"
	                            : "");
	if (st->nr_nouveau)
		dr_action(f,
		          "An NVIDIA GPU is held by nouveau: see setup.pci.nouveau (blacklist it, "
		          "rebuild the initramfs, reboot). Then 'sudo modprobe nvidia'.");
	else
		dr_action(f,
		          "1. Load it: 'sudo modprobe nvidia', and read its answer and 'sudo dmesg "
		          "| grep -i -E \"nvidia|nvrm\"'. 2. 'Module nvidia not found' or 'Exec "
		          "format error', usually after a kernel upgrade: the module was not built "
		          "for this kernel: install the headers (linux-headers-$(uname -r) or "
		          "kernel-devel) and run 'sudo dkms autoinstall', or reinstall the driver "
		          "package for this kernel. 3. 'Key was rejected by service': Secure Boot "
		          "refuses the unsigned module (setup.nvidia.secure_boot_refused). 4. In "
		          "a container: start it with the GPUs ('docker run --gpus all').");
}

static void
evidence_dev_node(struct dr_finding *f, const struct dr_ctx *ctx, const char *abs)
{
	char path[4096];
	struct stat sb;

	dr_path(ctx, path, sizeof(path), abs);
	if (stat(path, &sb) == 0)
		dr_evidence(f, "%s: mode %03o, owner %u, group %u", path,
		            (unsigned)(sb.st_mode & 0777), (unsigned)sb.st_uid,
		            (unsigned)sb.st_gid);
	else
		dr_evidence(f, "%s: absent", path);
}

static void
init_no_permission(const struct nv_state *st, struct dr_report *r)
{
	struct dr_finding *f;

	f = dr_add(r, "setup.nvidia.init_no_permission", DR_ERROR,
	           "NVML has no permission to open the NVIDIA device files");
	evidence_init(f, st->p);
	evidence_dev_node(f, st->ctx, "/dev/nvidiactl");
	evidence_dev_node(f, st->ctx, "/dev/nvidia0");
	dr_evidence(f, "this user: uid %u, gid %u, %zu supplementary group%s", st->ctx->uid,
	            st->ctx->gid, st->ctx->nr_groups, st->ctx->nr_groups == 1 ? "" : "s");
	dr_meaning(f, "The driver is loaded, but this user cannot open /dev/nvidiactl or "
	              "/dev/nvidia<N>: nvidia-smi and CUDA fail the same way.");
	dr_action(f, "Look at 'ls -l /dev/nvidia*': NVIDIA's default is crw-rw-rw- root root. "
	             "Driver options (NVreg_DeviceFileMode, NVreg_DeviceFileGID in "
	             "/etc/modprobe.d) or a udev rule may restrict them to a group: add this user "
	             "to it ('sudo usermod -aG GROUP USER', then log in again). In a container, "
	             "pass the devices in ('docker run --gpus all', CDI '--device "
	             "nvidia.com/gpu=all'); a cgroup device rule (systemd DeviceAllow=, a "
	             "container's device list) also answers permission denied.");
}

static void
init_unknown(const struct nv_state *st, struct dr_report *r)
{
	struct dr_finding *f;

	f = dr_add(r, "setup.nvidia.init_unknown", DR_ERROR,
	           "NVML failed to initialise: Unknown Error%s",
	           st->container[0] ? " (in a container)" : "");
	evidence_init(f, st->p);
	if (st->container[0])
		dr_evidence(f, "container: %s", st->container);
	evidence_module(f, st);
	if (st->container[0]) {
		dr_meaning(f,
		           "\"Failed to initialize NVML: Unknown Error\" inside a container that "
		           "worked before is the known effect of 'systemctl daemon-reload' (or a "
		           "package upgrade that runs it) on the host: systemd rewrites the "
		           "container's device cgroup and drops the rules that let it open "
		           "/dev/nvidia*, which the container runtime had added behind its back. "
		           "The device files are still there; opening them is denied.");
		dr_action(f,
		          "Now: delete the container and start it again ('docker rm -f NAME' and "
		          "run it anew, or delete the pod): a new container gets its GPUs back. "
		          "Durably, on the host (only runc with systemd cgroup management is "
		          "affected), NVIDIA's workaround: 'sudo nvidia-ctk system "
		          "create-dev-char-symlinks --create-all' (NVIDIA Container Toolkit 1.12 "
		          "or later), run at every boot after the driver loads by a udev rule in "
		          "/lib/udev/rules.d/71-nvidia-dev-char.rules: 'ACTION==\"add\", "
		          "DEVPATH==\"/bus/pci/drivers/nvidia\", RUN+=\"/usr/bin/nvidia-ctk system "
		          "create-dev-char-symlinks --create-all\"'. For Docker, the other "
		          "documented workaround is the cgroupfs driver: '\"exec-opts\": "
		          "[\"native.cgroupdriver=cgroupfs\"]' in /etc/docker/daemon.json, then "
		          "'sudo systemctl restart docker'. On Kubernetes, the GPU Operator "
		          "(22.9.2 or later) makes the links itself.");
	} else {
		dr_meaning(f, "NVML gave no reason. Outside a container this usually means the "
		              "driver is in a bad state (after a GPU error, or a partly replaced "
		              "installation).");
		dr_action(f, "Read 'sudo dmesg | grep -i -E \"nvrm|xid\"' for the driver's own "
		             "error, then reboot. If it persists, reinstall the driver (kernel "
		             "module and libraries together). Only then suspect the GPU.");
	}
}

static void
init_failed(const struct nv_state *st, struct dr_report *r)
{
	struct dr_finding *f;

	f = dr_add(r, "setup.nvidia.init_failed", DR_ERROR, "NVML failed to initialise: %s",
	           st->p->init_error[0] ? st->p->init_error : "no message");
	evidence_init(f, st->p);
	evidence_module(f, st);
	evidence_klog(f, st->ctx);
	dr_meaning(f, "nvmlInit failed, so nvidia-smi and NVML-based tools see no GPU; CUDA "
	              "usually fails as well.");
	dr_action(f, "Run 'nvidia-smi' for the same error in NVIDIA's words, and read 'sudo "
	             "dmesg | grep -i -E \"nvrm|xid\"'. Reboot; if it persists, reinstall the "
	             "driver. Only then suspect the GPU.");
}

static void
check_init(const struct nv_state *st, struct dr_report *r)
{
	const struct nvml_probe *p = st->p;

	if (!p)
		return;
	if (!p->loaded) {
		if (st->nr_nv)
			library_missing(st, r);
		return;
	}
	switch (p->init_rc) {
	case -1:
	case 0:
	case NV_RM_MISMATCH: /* check_versions */
		return;
	case NV_DRIVER_NOT_LOADED:
		/* no NVIDIA GPU on a readable bus: nothing for the driver to drive */
		if (!st->pci_ok || st->nr_nv || st->module_loaded)
			init_driver_not_loaded(st, r);
		return;
	case NV_NO_PERMISSION:
		init_no_permission(st, r);
		return;
	case NV_LIBRARY_NOT_FOUND:
		library_missing(st, r);
		return;
	case NV_UNKNOWN:
		init_unknown(st, r);
		return;
	default:
		init_failed(st, r);
		return;
	}
}

/* --- Secure Boot -------------------------------------------------------------------- */

/* What a kernel log line says about module signing. */
enum sig_line {
	SIG_NONE,
	SIG_REFUSED, /* names nvidia: the module was refused */
	SIG_GENERIC, /* some module was refused; the line does not say which */
	SIG_TAINT,   /* nvidia loaded unsigned: a taint note, no refusal */
};

static enum sig_line
classify(const char *line)
{
	bool nv = strcasestr(line, "nvidia") != NULL;

	if (strstr(line, "module verification failed"))
		return !nv ? SIG_NONE : strstr(line, "tainting") ? SIG_TAINT : SIG_REFUSED;
	if (strstr(line, "Key was rejected by service"))
		return nv ? SIG_REFUSED : SIG_NONE;
	if (strstr(line, "unsigned module loading is restricted") ||
	    strstr(line, "Loading of unsigned module is rejected") ||
	    strstr(line, "Loading of module with unavailable key is rejected"))
		return nv ? SIG_REFUSED : SIG_GENERIC;
	return SIG_NONE;
}

static const char *
sb_state(const struct nv_state *st)
{
	return st->secure_boot == 1   ? "1 (enabled)"
	       : st->secure_boot == 0 ? "0 (disabled)"
	                              : "absent (no EFI, or efivarfs not mounted)";
}

/* What to do about Secure Boot refusing the module, best first. */
#define SECURE_BOOT_ACTIONS                                                                    \
	"1. Sign the module with a Machine Owner Key: DKMS makes one "                         \
	"(/var/lib/dkms/mok.pub); enrol it with 'sudo mokutil --import "                       \
	"/var/lib/dkms/mok.pub', reboot and confirm it in the blue MokManager screen, then "   \
	"'sudo dkms autoinstall' (or reinstall the driver) and 'sudo modprobe nvidia'. 2. Or " \
	"use the distribution's signed driver packages (Ubuntu: 'sudo ubuntu-drivers "         \
	"install', which uses the signed linux-modules-nvidia-* packages). 3. Last resort: "   \
	"disable Secure Boot in the firmware settings. 'mokutil --sb-state' shows the state."

static void
check_secure_boot(const struct nv_state *st, struct dr_report *r)
{
	const struct dr_ctx *ctx = st->ctx;
	char path[4096], lines[MAX_KLOG_LINES][240];
	size_t nr = 0, nr_taint = 0;
	char taint[240] = "";
	struct dr_finding *f;

	path_join(path, sizeof(path), ctx->cfg->sysfs_root, SECURE_BOOT_VAR);
	if (!ctx->klog) {
		if (st->module_loaded || st->secure_boot != 1 || !st->nr_nv)
			return;
		f = dr_add(r, "setup.nvidia.secure_boot_likely", DR_WARNING,
		           "Secure Boot is on and the nvidia module is not loaded: it may be "
		           "refusing it");
		dr_evidence(f, "%s: %s", path, sb_state(st));
		evidence_module(f, st);
		dr_evidence(f, "kernel log: could not be read (%s)",
		            ctx->klog_why ? ctx->klog_why : "no reason given");
		evidence_pci(f, st);
		dr_meaning(f,
		           "The kernel log, which would say why the module is not loaded, could "
		           "not be read. The likely causes, in order: 1. the module is not built "
		           "or not installed for this kernel; 2. Secure Boot is on and refuses an "
		           "unsigned module (NVIDIA's installer and DKMS build unsigned modules "
		           "unless a key is enrolled); 3. nouveau holds the GPU.");
		dr_action(f,
		          "Run 'sudo modprobe nvidia': 'Key was rejected by service' is Secure "
		          "Boot; 'Module nvidia not found' is a missing build ('sudo dkms "
		          "autoinstall'). Read the log with 'sudo dmesg | grep -i -E "
		          "\"nvidia|lockdown|verification|rejected\"'. If it is Secure Boot: %s",
		          SECURE_BOOT_ACTIONS);
		return;
	}

	for (const char *p = ctx->klog; *p;) {
		size_t len = strcspn(p, "\n");
		char line[240];
		enum sig_line k;

		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		p += len + (p[len] == '\n');
		k = classify(line);
		if (k == SIG_TAINT) {
			nr_taint++;
			str_copy(taint, sizeof(taint), line);
		}
		/* a refusal that names no module is nvidia's only when nvidia is not loaded */
		if (k == SIG_REFUSED || (k == SIG_GENERIC && st->nr_nv)) {
			if (nr < MAX_KLOG_LINES)
				str_copy(lines[nr], sizeof(lines[nr]), line);
			nr++;
		}
	}
	if (nr && !st->module_loaded) {
		f = dr_add(r, "setup.nvidia.secure_boot_refused", DR_ERROR,
		           "the kernel refused the unsigned nvidia module%s",
		           st->secure_boot == 1 ? " (Secure Boot is on)" : "");
		for (size_t i = 0; i < nr && i < MAX_KLOG_LINES; i++)
			dr_evidence(f, "kernel log: %s", lines[i]);
		dr_evidence(f, "%s: %s", path, sb_state(st));
		evidence_module(f, st);
		dr_meaning(
		        f,
		        "The kernel loads only modules signed by a key it trusts when Secure Boot is "
		        "on (lockdown) or module.sig_enforce=1. NVIDIA's module, built by DKMS "
		        "or NVIDIA's installer, is unsigned unless a Machine Owner Key was "
		        "enrolled, so it is refused and no GPU is usable.");
		dr_action(f, "%s", SECURE_BOOT_ACTIONS);
		return;
	}
	if (nr_taint) {
		f = dr_add(r, "setup.nvidia.module_unsigned", DR_INFO,
		           "the nvidia module is unsigned (it loaded; the kernel is tainted)");
		dr_evidence(f, "kernel log: %s", taint);
		dr_evidence(f, "%s: %s", path, sb_state(st));
		dr_meaning(f, "The kernel notes that it loaded a module without a valid signature "
		              "and marks itself tainted. This is not a refusal: signatures are "
		              "not enforced here (Secure Boot off, or module.sig_enforce=0).");
		dr_action(f, "Nothing, unless Secure Boot is to be turned on: then sign the module "
		             "first (a DKMS MOK enrolled with 'sudo mokutil --import "
		             "/var/lib/dkms/mok.pub'), or it will be refused.");
	}
}

/* --- per-GPU settings ------------------------------------------------------------- */

/* No GPU drives a display: a server. Unknown display state falls back on $DISPLAY. */
static bool
headless(const struct dr_ctx *ctx)
{
	const struct gpu_snapshot *s = ctx->snap;
	bool known = false;
	const char *d;

	for (size_t i = 0; s && i < s->nr_dev; i++) {
		if (!dev_has(&s->dev[i], GF_DISPLAY_ACTIVE))
			continue;
		known = true;
		if (s->dev[i].v[GF_DISPLAY_ACTIVE] != 0)
			return false;
	}
	if (known)
		return true;
	d = ctx->getenv ? ctx->getenv("DISPLAY") : NULL;
	if (d && *d)
		return false;
	d = ctx->getenv ? ctx->getenv("WAYLAND_DISPLAY") : NULL;
	return !(d && *d);
}

static void
check_persistence(const struct nv_state *st, struct dr_report *r)
{
	const struct gpu_snapshot *s = st->ctx->snap;
	struct dr_finding *f = NULL;
	size_t on = 0, off = 0;
	char label[200];

	for (size_t i = 0; s && i < s->nr_dev; i++) {
		const struct gpu_device *d = &s->dev[i];

		if (d->vendor != VENDOR_NVIDIA || !dev_has(d, GF_PERSISTENCE))
			continue;
		if (d->v[GF_PERSISTENCE] != 0) {
			on++;
			continue;
		}
		off++;
	}
	if (!on && !off)
		return;
	if (!off) {
		dr_add(r, "setup.nvidia.persistence", DR_OK,
		       "persistence mode is on for %zu NVIDIA GPU%s", on, on == 1 ? "" : "s");
		return;
	}
	if (!headless(st->ctx))
		return; /* the display server keeps the driver initialised */
	f = dr_add(r, "setup.nvidia.persistence_off", DR_INFO,
	           "persistence mode is off on %zu of %zu NVIDIA GPU%s of a headless machine", off,
	           on + off, on + off == 1 ? "" : "s");
	for (size_t i = 0; i < s->nr_dev; i++) {
		const struct gpu_device *d = &s->dev[i];

		if (d->vendor != VENDOR_NVIDIA || !dev_has(d, GF_PERSISTENCE) ||
		    d->v[GF_PERSISTENCE] != 0)
			continue;
		gpu_label(label, sizeof(label), d);
		dr_evidence(f, "%s: persistence mode off (NVML)", label);
	}
	dr_evidence(f, "no GPU has a display active");
	dr_meaning(f, "Without a display server or a persistence daemon holding the GPUs open, the "
	              "driver tears its state down whenever the last program closes them and "
	              "rebuilds it on the next open: every first CUDA call and every nvidia-smi "
	              "takes seconds longer, and settings made with nvidia-smi (clocks, power "
	              "limits) can be lost.");
	dr_action(f, "Start NVIDIA's persistence daemon and keep it at boot: 'sudo systemctl "
	             "enable --now nvidia-persistenced' (preferred). Or the older way, lost at "
	             "reboot: 'sudo nvidia-smi -pm 1'.");
}

/* NVIDIA GPUs whose compute mode is known */
static size_t
snap_compute_modes(const struct gpu_snapshot *s)
{
	size_t n = 0;

	for (size_t i = 0; s && i < s->nr_dev; i++)
		n += s->dev[i].vendor == VENDOR_NVIDIA && dev_has(&s->dev[i], GF_COMPUTE_MODE);
	return n;
}

static void
check_compute_mode(const struct nv_state *st, struct dr_report *r)
{
	const struct gpu_snapshot *s = st->ctx->snap;
	size_t nr = 0, odd = 0, prohibited = 0;
	char label[200], name[32];
	struct dr_finding *f;

	for (size_t i = 0; s && i < s->nr_dev; i++) {
		const struct gpu_device *d = &s->dev[i];

		if (d->vendor == VENDOR_NVIDIA && dev_has(d, GF_COMPUTE_MODE))
			prohibited += (int)d->v[GF_COMPUTE_MODE] == CM_PROHIBITED;
	}
	for (size_t i = 0; s && i < s->nr_dev; i++) {
		const struct gpu_device *d = &s->dev[i];
		int mode;

		if (d->vendor != VENDOR_NVIDIA || !dev_has(d, GF_COMPUTE_MODE))
			continue;
		nr++;
		mode = (int)d->v[GF_COMPUTE_MODE];
		if (mode == CM_DEFAULT)
			continue;
		odd++;
		gpu_label(label, sizeof(label), d);
		if (mode == CM_PROHIBITED) {
			/* an error only when no NVIDIA GPU is left for CUDA */
			f = dr_add(r, "setup.nvidia.compute_prohibited",
			           prohibited == snap_compute_modes(s) ? DR_ERROR : DR_WARNING,
			           "%s is in compute mode PROHIBITED: no CUDA program can use it",
			           label);
			dr_evidence(f, "%s: compute mode %d (PROHIBITED), from NVML", label, mode);
			dr_meaning(f, "No process may create a CUDA context on this GPU: CUDA "
			              "programs fail with 'all CUDA-capable devices are busy or "
			              "unavailable' or do not list it.");
		} else {
			if (mode == CM_EXCLUSIVE_PROCESS)
				str_copy(name, sizeof(name), "EXCLUSIVE_PROCESS");
			else if (mode == CM_EXCLUSIVE_THREAD)
				str_copy(name, sizeof(name), "EXCLUSIVE_THREAD");
			else
				snprintf(name, sizeof(name), "%d (unknown)", mode);
			f = dr_add(r, "setup.nvidia.compute_exclusive", DR_INFO,
			           "%s is in compute mode %s: one process at a time", label, name);
			dr_evidence(f, "%s: compute mode %d, from NVML", label, mode);
			dr_meaning(f,
			           "Only one process can hold a CUDA context on this GPU; a "
			           "second one fails with 'all CUDA-capable devices are busy or "
			           "unavailable'. Clusters set this on purpose (one job per GPU, "
			           "or an MPS server); elsewhere it is a leftover.");
		}
		dr_action(f,
		          "If that is not intended: 'sudo nvidia-smi -i %u -c DEFAULT'. The "
		          "setting is lost at driver reload unless something (a boot script, the "
		          "cluster's prolog) sets it again: look there if it comes back.",
		          d->index);
	}
	if (nr && !odd)
		dr_add(r, "setup.nvidia.compute_mode", DR_OK,
		       "compute mode is DEFAULT on %zu NVIDIA GPU%s", nr, nr == 1 ? "" : "s");
}

static void
check_mig(const struct nv_state *st, struct dr_report *r)
{
	const struct gpu_snapshot *s = st->ctx->snap;
	char label[200];
	struct dr_finding *f;

	for (size_t i = 0; s && i < s->nr_dev; i++) {
		const struct gpu_device *d = &s->dev[i];
		bool cur, pending;

		if (d->vendor != VENDOR_NVIDIA || !dev_has(d, GF_MIG_MODE))
			continue;
		cur = d->v[GF_MIG_MODE] != 0;
		pending = dev_has(d, GF_MIG_MODE_PENDING) ? d->v[GF_MIG_MODE_PENDING] != 0 : cur;
		gpu_label(label, sizeof(label), d);
		if (cur) {
			f = dr_add(r, "setup.nvidia.mig_enabled", DR_INFO,
			           "%s is in MIG mode: CUDA sees only its MIG instances", label);
			dr_evidence(f, "%s: MIG mode current 1, pending %d (NVML)", label, pending);
			dr_meaning(
			        f,
			        "A GPU in MIG mode is split into GPU instances; CUDA can run only "
			        "on their compute instances, not on the whole GPU. With no "
			        "instance created, CUDA finds no device on it. "
			        "CUDA_VISIBLE_DEVICES must name MIG UUIDs (MIG-...), not the "
			        "GPU's.");
			dr_action(
			        f,
			        "List the instances with 'nvidia-smi -L' (and 'sudo nvidia-smi mig "
			        "-lgi'); create some with 'sudo nvidia-smi mig -i %u -cgi PROFILES "
			        "-C'. To use the whole GPU: 'sudo nvidia-smi -i %u -mig 0'.",
			        d->index, d->index);
		}
		if (pending != cur) {
			f = dr_add(r, "setup.nvidia.mig_pending", DR_WARNING,
			           "%s has a MIG mode change pending (%s -> %s)", label,
			           cur ? "on" : "off", pending ? "on" : "off");
			dr_evidence(f, "%s: MIG mode current %d, pending %d (NVML)", label, cur,
			            pending);
			dr_meaning(f,
			           "MIG mode was changed but the change applies only after a GPU "
			           "reset; until then the GPU stays in its current mode.");
			dr_action(
			        f,
			        "Stop the programs using it, then reset it: 'sudo nvidia-smi -i %u "
			        "-r' (a GPU held by the display or by nvidia-persistenced may need "
			        "those stopped too), or reboot.",
			        d->index);
		}
	}
}

void
dr_check_nvidia(const struct dr_ctx *ctx, struct dr_report *r)
{
	struct nv_state st;

	state_init(&st, ctx);
	if (nvidia_machine(&st)) {
		check_secure_boot(&st, r);
		check_versions(&st, r);
		check_init(&st, r);
		check_persistence(&st, r);
		check_compute_mode(&st, r);
		check_mig(&st, r);
	}
	free(st.pci);
}

/* --- the catalog ------------------------------------------------------------------ */

const struct dr_explain dr_catalog_nvidia[] = {
	{ "setup.nvidia.compute_exclusive", "A GPU allows one CUDA process at a time",
	  "The compute mode EXCLUSIVE_PROCESS (or the old EXCLUSIVE_THREAD) lets only one\n"
	  "process hold a CUDA context on the GPU. A second one fails with 'all\n"
	  "CUDA-capable devices are busy or unavailable' (cudaErrorDevicesUnavailable).\n"
	  "Causes, most likely first:\n"
	  "  1. Set on purpose: batch clusters give each job a whole GPU, and an MPS\n"
	  "     server needs it. Then nothing is wrong: run one job per GPU, or share\n"
	  "     through MPS.\n"
	  "  2. A leftover from an earlier job or an administrator's test.\n"
	  "Tell them apart by asking who sets it (a boot script, the scheduler's prolog).\n"
	  "Reset it with 'sudo nvidia-smi -i N -c DEFAULT'; it does not survive a driver\n"
	  "reload." },
	{ "setup.nvidia.compute_mode", "Every NVIDIA GPU is in compute mode DEFAULT",
	  "The compute mode (nvidia-smi -q: 'Compute Mode') decides how many processes may\n"
	  "use a GPU: DEFAULT any number, EXCLUSIVE_PROCESS one, PROHIBITED none." },
	{ "setup.nvidia.compute_prohibited", "A GPU is in compute mode PROHIBITED",
	  "In compute mode PROHIBITED no process may create a CUDA context on the GPU: CUDA\n"
	  "programs fail with 'all CUDA-capable devices are busy or unavailable' or skip\n"
	  "the GPU. Graphics still work. It is only ever set deliberately: by an\n"
	  "administrator draining a GPU, or by a scheduler that hides GPUs from jobs. Set\n"
	  "it back with 'sudo nvidia-smi -i N -c DEFAULT'; if it returns, find what sets\n"
	  "it (boot scripts, the scheduler's prolog or health check)." },
	{ "setup.nvidia.init_driver_not_loaded", "NVML: the NVIDIA kernel driver is not loaded",
	  "nvmlInit returned NVML_ERROR_DRIVER_NOT_LOADED (9): libnvidia-ml is installed\n"
	  "but there is no nvidia kernel module (no /proc/driver/nvidia, no\n"
	  "/dev/nvidiactl). Causes, most likely first:\n"
	  "  1. After a kernel upgrade the module was not rebuilt for the new kernel\n"
	  "     (DKMS missing, or the headers were not installed): 'modprobe nvidia' says\n"
	  "     'Module nvidia not found'. Install linux-headers-$(uname -r) (or\n"
	  "     kernel-devel) and run 'sudo dkms autoinstall', or reinstall the driver.\n"
	  "  2. Secure Boot refused the unsigned module: 'Key was rejected by service'\n"
	  "     (see setup.nvidia.secure_boot_refused).\n"
	  "  3. nouveau holds the card, so nvidia cannot bind (setup.pci.nouveau).\n"
	  "  4. Nothing loads it at boot: 'sudo modprobe nvidia' works. Then add it to\n"
	  "     /etc/modules-load.d.\n"
	  "  5. In a container: the container was started without the GPUs.\n"
	  "'sudo modprobe nvidia' and the kernel log ('sudo dmesg | grep -i nvidia')\n"
	  "tell these apart." },
	{ "setup.nvidia.init_failed", "NVML failed to initialise",
	  "nvmlInit returned an error doctor has no specific advice for. nvidia-smi shows\n"
	  "the same error; the kernel log (NVRM lines, Xid errors) usually says more.\n"
	  "Reboot, then reinstall the driver, before suspecting the hardware." },
	{ "setup.nvidia.init_no_permission", "NVML may not open the NVIDIA device files",
	  "nvmlInit returned NVML_ERROR_NO_PERMISSION (4): /dev/nvidiactl or /dev/nvidiaN\n"
	  "cannot be opened by this user. Causes, most likely first:\n"
	  "  1. The driver's NVreg_DeviceFileMode/NVreg_DeviceFileGID options, or a udev\n"
	  "     rule, restrict the nodes to a group this user is not in. 'ls -l\n"
	  "     /dev/nvidia*' shows it; add the user to the group and log in again.\n"
	  "  2. In a container the devices were not passed in, or a cgroup device rule\n"
	  "     denies them (docker run --gpus all; CDI --device nvidia.com/gpu=all).\n"
	  "  3. A systemd service with DevicePolicy=/DeviceAllow= that omits the GPUs." },
	{ "setup.nvidia.init_unknown", "NVML failed with 'Unknown Error'",
	  "nvmlInit returned NVML_ERROR_UNKNOWN (999): nvidia-smi prints 'Failed to\n"
	  "initialize NVML: Unknown Error'. Causes, most likely first:\n"
	  "  1. In a container that worked before: 'systemctl daemon-reload' on the host\n"
	  "     (run by many package upgrades) made systemd rewrite the container's device\n"
	  "     cgroup, dropping the rules that allowed /dev/nvidia*. The files are there,\n"
	  "     opening them is denied. Only runc with systemd cgroup management is\n"
	  "     affected. Delete the container and start it again now; durably, NVIDIA's\n"
	  "     workaround on the host: 'sudo nvidia-ctk system create-dev-char-symlinks\n"
	  "     --create-all' (toolkit 1.12 or later), run at boot by a udev rule in\n"
	  "     /lib/udev/rules.d/71-nvidia-dev-char.rules (ACTION==\"add\",\n"
	  "     DEVPATH==\"/bus/pci/drivers/nvidia\", RUN+=\"/usr/bin/nvidia-ctk system\n"
	  "     create-dev-char-symlinks --create-all\"); or, for Docker, the cgroupfs\n"
	  "     driver (\"exec-opts\": [\"native.cgroupdriver=cgroupfs\"] in\n"
	  "     /etc/docker/daemon.json). The GPU Operator 22.9.2+ makes the links itself.\n"
	  "  2. Outside a container: the driver is in a bad state after a GPU error, or\n"
	  "     the installation is half replaced. Read the kernel log (NVRM, Xid),\n"
	  "     reboot, and reinstall the driver if it persists.\n"
	  "Whether doctor runs in a container is judged from /.dockerenv,\n"
	  "/run/.containerenv, container= in /proc/1/environ, or /proc/1/cgroup." },
	{ "setup.nvidia.library_missing", "libnvidia-ml is missing or incomplete",
	  "An NVIDIA GPU is on the PCI bus, but libnvidia-ml.so.1, the driver's\n"
	  "user-space half, could not be loaded, or loaded and answered\n"
	  "NVML_ERROR_LIBRARY_NOT_FOUND (12) because the rest of the driver is missing.\n"
	  "Causes, most likely first:\n"
	  "  1. The driver is not installed, or only its kernel module is (a headless\n"
	  "     or 'server' package without the compute libraries).\n"
	  "  2. In a container: started without the NVIDIA Container Toolkit's injection\n"
	  "     (docker run --gpus all, CDI, the Kubernetes device plugin).\n"
	  "  3. Only the CUDA toolkit's link-time stub (.../stubs/libnvidia-ml.so) is on\n"
	  "     the search path: it is not a driver and gpuscope refuses it.\n"
	  "  4. Installed outside the loader's path: 'ldconfig -p | grep libnvidia-ml'\n"
	  "     finds nothing; set GPUSCOPE_NVML or add the directory to ld.so.conf.d." },
	{ "setup.nvidia.mig_enabled", "A GPU is in MIG mode",
	  "Multi-Instance GPU splits an A100, H100 or later GPU into isolated GPU\n"
	  "instances. In MIG mode CUDA cannot use the whole GPU: it sees one device per\n"
	  "compute instance, and none when no instance has been created ('no\n"
	  "CUDA-capable device is detected'). CUDA_VISIBLE_DEVICES must then name MIG\n"
	  "UUIDs (MIG-..., from 'nvidia-smi -L'); a GPU index or GPU UUID selects\n"
	  "nothing useful. Create instances with 'nvidia-smi mig -cgi ... -C', or turn\n"
	  "MIG off with 'nvidia-smi -i N -mig 0'." },
	{ "setup.nvidia.mig_pending", "A MIG mode change waits for a GPU reset",
	  "'nvidia-smi -mig 1' (or 0) records the new mode; it takes effect only after the\n"
	  "GPU is reset ('nvidia-smi -i N -r', which needs every process off the GPU) or\n"
	  "the machine reboots. On some systems (hypervisors, GPUs held by the display or\n"
	  "a persistence daemon) only a reboot works." },
	{ "setup.nvidia.module_unsigned", "The nvidia module is unsigned (a taint note)",
	  "'module verification failed: signature and/or required key missing - tainting\n"
	  "kernel' means the kernel loaded an unsigned module and marked itself tainted.\n"
	  "It is not a refusal: signature enforcement is off (Secure Boot disabled, or\n"
	  "module.sig_enforce not set). Turning Secure Boot on later makes the kernel\n"
	  "refuse the module unless it is signed with an enrolled key first." },
	{ "setup.nvidia.persistence", "Persistence mode is on",
	  "With persistence mode (nvidia-persistenced, or nvidia-smi -pm 1) the driver\n"
	  "keeps the GPUs initialised while no program uses them." },
	{ "setup.nvidia.persistence_off", "Persistence mode is off on a headless machine",
	  "On a machine without a display server, the driver de-initialises a GPU when the\n"
	  "last program closes it, and initialises it again on the next open. Each first\n"
	  "CUDA call, and each nvidia-smi, then waits for that (seconds on large\n"
	  "machines), and settings made through nvidia-smi can be lost in between.\n"
	  "NVIDIA's nvidia-persistenced daemon keeps the GPUs open: 'sudo systemctl\n"
	  "enable --now nvidia-persistenced'. The legacy 'nvidia-smi -pm 1' does the same\n"
	  "until the next reboot. A desktop's display server already keeps its GPU\n"
	  "initialised, so doctor says nothing there." },
	{ "setup.nvidia.secure_boot_likely", "Secure Boot may be refusing the nvidia module",
	  "The nvidia module is not loaded, Secure Boot is on, and the kernel log (which\n"
	  "would say why) could not be read. Causes, most likely first:\n"
	  "  1. The module is not built or installed for the running kernel.\n"
	  "  2. Secure Boot refuses it because it is unsigned.\n"
	  "  3. nouveau holds the GPU.\n"
	  "'sudo modprobe nvidia' tells them apart: 'Module nvidia not found' (1), 'Key\n"
	  "was rejected by service' (2). Running doctor with sudo lets it read the log." },
	{ "setup.nvidia.secure_boot_refused", "Secure Boot refused the nvidia module",
	  "With Secure Boot on, the kernel enforces module signatures (lockdown).\n"
	  "Modules built locally by DKMS or NVIDIA's .run installer are unsigned unless a\n"
	  "Machine Owner Key was made and enrolled, so the kernel refuses them: the log\n"
	  "says 'Loading of unsigned module is rejected', 'Lockdown: modprobe: unsigned\n"
	  "module loading is restricted', or modprobe answers 'Key was rejected by\n"
	  "service'. (A line 'module verification failed ... tainting kernel' alone is\n"
	  "only a note: that module was loaded.) What to do, best first:\n"
	  "  1. Enrol DKMS's key: 'sudo mokutil --import /var/lib/dkms/mok.pub', reboot,\n"
	  "     confirm it in MokManager, then rebuild ('sudo dkms autoinstall').\n"
	  "  2. Use the distribution's signed modules (Ubuntu: 'sudo ubuntu-drivers\n"
	  "     install', the linux-modules-nvidia-* packages).\n"
	  "  3. Disable Secure Boot in the firmware, the last resort.\n"
	  "The state is in the SecureBoot EFI variable (mokutil --sb-state)." },
	{ "setup.nvidia.version", "The NVIDIA kernel module and library versions",
	  "The kernel module's version is read from /proc/driver/nvidia/version, the\n"
	  "library's from nvmlSystemGetDriverVersion (or, when NVML does not start, from\n"
	  "the library's file name, libnvidia-ml.so.<version>). The CUDA version named is\n"
	  "the newest the driver supports (nvmlSystemGetCudaDriverVersion)." },
	{ "setup.nvidia.version_mismatch", "The NVIDIA kernel module and library differ",
	  "NVIDIA's kernel module and its user-space libraries must be the same release;\n"
	  "nvmlInit returns NVML_ERROR_LIB_RM_VERSION_MISMATCH (18) and nvidia-smi says\n"
	  "'Failed to initialize NVML: Driver/library version mismatch'. Causes, most\n"
	  "likely first:\n"
	  "  1. The driver was upgraded (often by unattended upgrades) and the old module\n"
	  "     is still loaded: reboot, or stop every GPU user ('sudo lsof /dev/nvidia*')\n"
	  "     and 'sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo\n"
	  "     modprobe nvidia'.\n"
	  "  2. The upgrade stopped half-way, or the module was not rebuilt (DKMS failed):\n"
	  "     after a reboot they still differ. Check 'dkms status' and the installed\n"
	  "     packages, and finish the upgrade.\n"
	  "  3. In a container, the image ships its own driver libraries instead of the\n"
	  "     host's: remove them from the image.\n"
	  "  4. An initramfs holding the old module: rebuild it after the upgrade." },
	{ NULL, NULL, NULL },
};
