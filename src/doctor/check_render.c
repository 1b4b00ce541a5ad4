/*
 * setup.render.*: can programs here render on a GPU at all? The Linux side
 * of "a D3D11-compatible GPU is required": a virtual machine with only an
 * emulated display adapter, Mesa forced to its software renderer, a remote
 * desktop or forwarded X display without a GPU, no DRM render node, and
 * the integrated GPU of a two-GPU machine taking the work by default.
 * Also the catalog of both this file and check_video.c (setup.video.*).
 */
#include "doctor/doctor.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "backend/pci.h"
#include "core/config.h"
#include "core/fileio.h"
#include "core/strbuf.h"

/* --- virtual machines ---------------------------------------------------------------- */

enum hv {
	HV_NONE = 0,
	HV_QEMU,
	HV_VMWARE,
	HV_VBOX,
	HV_HYPERV,
	HV_XEN,
	HV_PARALLELS,
	HV_CLOUD, /* a cloud's own hypervisor (EC2 Nitro, GCE) */
	HV_OTHER, /* only the CPU's hypervisor flag says so */
};

/* Emulated display adapters: a VM's screen, never a GPU. */
static const struct virt_adapter {
	unsigned vendor, device;
	const char *name;
	enum hv hv;
} virt_adapters[] = {
	{ 0x1af4, 0x1050, "virtio-gpu", HV_QEMU },
	{ 0x1b36, 0x0100, "QXL", HV_QEMU },
	{ 0x1234, 0x1111, "bochs/stdvga", HV_QEMU },
	{ 0x1013, 0x00b8, "Cirrus CLGD 5446", HV_QEMU },
	{ 0x15ad, 0x0405, "VMware SVGA II", HV_VMWARE },
	{ 0x80ee, 0xbeef, "VirtualBox Graphics Adapter", HV_VBOX },
	{ 0x1414, 0x5353, "Hyper-V video", HV_HYPERV },
	{ 0x1ab8, 0x4005, "Parallels display adapter", HV_PARALLELS },
};

static const struct virt_adapter *
virt_adapter(const struct pci_gpu *g)
{
	for (size_t i = 0; i < sizeof(virt_adapters) / sizeof(virt_adapters[0]); i++)
		if (virt_adapters[i].vendor == g->vendor && virt_adapters[i].device == g->device)
			return &virt_adapters[i];
	return NULL;
}

static const char *
hv_name(enum hv hv)
{
	switch (hv) {
	case HV_QEMU:
		return "QEMU/KVM";
	case HV_VMWARE:
		return "VMware";
	case HV_VBOX:
		return "VirtualBox";
	case HV_HYPERV:
		return "Hyper-V";
	case HV_XEN:
		return "Xen";
	case HV_PARALLELS:
		return "Parallels";
	case HV_CLOUD:
		return "a cloud's hypervisor";
	case HV_OTHER:
		return "hypervisor unknown";
	default:
		return "none";
	}
}

static bool
has_word(const char *s, const char *w)
{
	return strcasestr(s, w) != NULL;
}

/* The hypervisor that DMI's sys_vendor and product_name name, or HV_NONE. */
static enum hv
dmi_hypervisor(const char *vendor, const char *product)
{
	size_t plen = strlen(product);

	if (has_word(vendor, "QEMU") || has_word(vendor, "Bochs") || !strcmp(product, "KVM") ||
	    has_word(product, "Standard PC (") || has_word(product, "OpenStack") ||
	    has_word(vendor, "DigitalOcean") || has_word(product, "AHV"))
		return HV_QEMU;
	if (has_word(vendor, "VMware"))
		return HV_VMWARE;
	if (has_word(vendor, "innotek") || has_word(product, "VirtualBox"))
		return HV_VBOX;
	if (has_word(vendor, "Microsoft") && has_word(product, "Virtual Machine"))
		return HV_HYPERV;
	if (has_word(vendor, "Xen") || has_word(product, "HVM domU"))
		return HV_XEN;
	if (has_word(vendor, "Parallels"))
		return HV_PARALLELS;
	/* EC2's bare-metal instances say "Amazon EC2" too, with a product "*.metal" */
	if (has_word(vendor, "Amazon EC2") && !(plen > 6 && !strcmp(product + plen - 6, ".metal")))
		return HV_CLOUD;
	if (has_word(product, "Google Compute Engine"))
		return HV_CLOUD;
	return HV_NONE;
}

/* Does /proc/cpuinfo's first "flags" line hold "hypervisor"? */
static bool
cpu_hypervisor_flag(const struct dr_ctx *ctx)
{
	struct strbuf sb = STRBUF_INIT;
	bool found = false;
	const char *p;

	if (file_read(ctx->cfg->proc_root, "cpuinfo", &sb, 16384, NULL) == 0 &&
	    (p = strstr(sb.buf, "\nflags")) != NULL) {
		const char *end = strchr(p + 1, '\n');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		for (const char *q = p; q && q < p + n; q++) {
			q = strstr(q, " hypervisor");
			if (!q || q >= p + n)
				break;
			if (q[11] == ' ' || q[11] == '\n' || q[11] == '\0') {
				found = true;
				break;
			}
		}
	}
	strbuf_release(&sb);
	return found;
}

struct machine {
	struct pci_gpu *gpus;
	size_t nr;
	char dmi_vendor[128], dmi_product[128];
	enum hv dmi_hv;
	bool hv_flag;
	bool hyperv_video; /* hyperv_drm or hyperv_fb on the VMBus */
	bool dxg;          /* WSL 2: /dev/dxg */
	size_t nr_virtual, nr_real;
};

static void
machine_read(const struct dr_ctx *ctx, struct machine *m)
{
	char path[4096];
	struct stat st;

	memset(m, 0, sizeof(*m));
	pci_list_gpus(ctx->cfg->sysfs_root, &m->gpus, &m->nr, NULL);
	for (size_t i = 0; i < m->nr; i++) {
		if (virt_adapter(&m->gpus[i]))
			m->nr_virtual++;
		else if (strcmp(m->gpus[i].driver, "vfio-pci"))
			m->nr_real++;
	}
	file_read_line(ctx->cfg->sysfs_root, "class/dmi/id/sys_vendor", m->dmi_vendor,
	               sizeof(m->dmi_vendor), NULL);
	file_read_line(ctx->cfg->sysfs_root, "class/dmi/id/product_name", m->dmi_product,
	               sizeof(m->dmi_product), NULL);
	m->dmi_hv = dmi_hypervisor(m->dmi_vendor, m->dmi_product);
	m->hv_flag = cpu_hypervisor_flag(ctx);
	m->hyperv_video = file_exists(ctx->cfg->sysfs_root, "bus/vmbus/drivers/hyperv_drm") ||
	                  file_exists(ctx->cfg->sysfs_root, "bus/vmbus/drivers/hyperv_fb");
	m->dxg = stat(dr_path(ctx, path, sizeof(path), "/dev/dxg"), &st) == 0;
}

/* What the VM is, from DMI first, then its display adapters. */
static enum hv
machine_hv(const struct machine *m)
{
	if (m->dmi_hv != HV_NONE)
		return m->dmi_hv;
	for (size_t i = 0; i < m->nr; i++) {
		const struct virt_adapter *a = virt_adapter(&m->gpus[i]);

		if (a)
			return a->hv;
	}
	if (m->hyperv_video)
		return HV_HYPERV;
	return m->hv_flag ? HV_OTHER : HV_NONE;
}

static void
vm_evidence(const struct dr_ctx *ctx, struct dr_finding *f, const struct machine *m)
{
	if (m->dmi_vendor[0] || m->dmi_product[0])
		dr_evidence(f, "%s/class/dmi/id: sys_vendor '%s', product_name '%s'",
		            ctx->cfg->sysfs_root, m->dmi_vendor, m->dmi_product);
	if (m->hv_flag)
		dr_evidence(f, "%s/cpuinfo: the CPU flags include 'hypervisor'",
		            ctx->cfg->proc_root);
	if (m->hyperv_video)
		dr_evidence(f,
		            "%s/bus/vmbus/drivers: Hyper-V synthetic video (hyperv_drm/hyperv_fb)",
		            ctx->cfg->sysfs_root);
	for (size_t i = 0; i < m->nr; i++) {
		const struct virt_adapter *a = virt_adapter(&m->gpus[i]);
		const struct pci_gpu *g = &m->gpus[i];

		dr_evidence(f, "%s/bus/pci/devices/%s: %04x:%04x, %s, driver %s",
		            ctx->cfg->sysfs_root, g->addr, g->vendor, g->device,
		            a ? a->name : "a GPU", g->driver[0] ? g->driver : "(none)");
	}
}

static void
vm_no_gpu_action(struct dr_finding *f, enum hv hv)
{
	switch (hv) {
	case HV_QEMU:
	case HV_OTHER:
		dr_action(
		        f,
		        "Pass a GPU through with VFIO: on the host enable the IOMMU (intel_iommu=on or "
		        "amd_iommu=on on the kernel command line), bind the GPU to vfio-pci "
		        "(vfio-pci.ids=10de:xxxx), and give it to the guest (virt-manager: Add "
		        "Hardware > PCI Host Device; qemu: -device vfio-pci,host=01:00.0; Proxmox: "
		        "Hardware > Add > PCI Device). Or give it a vGPU (NVIDIA vGPU, Intel SR-IOV). "
		        "virtio-gpu with virgl (-device virtio-vga-gl -display gtk,gl=on) forwards "
		        "OpenGL to the host's GPU, but gives no CUDA, no Vulkan compute and no D3D11 "
		        "feature level.");
		break;
	case HV_VMWARE:
		dr_action(f,
		          "VMware's 'Accelerate 3D graphics' setting (VM Settings > Display) "
		          "translates OpenGL and D3D11 to the host's GPU, with limits (no CUDA, no "
		          "Vulkan compute, older feature levels). For a real GPU use DirectPath "
		          "I/O passthrough or NVIDIA vGPU on ESXi.");
		break;
	case HV_VBOX:
		dr_action(f, "VirtualBox's 'Enable 3D Acceleration' (Settings > Display, with the "
		             "VMSVGA adapter and the Guest Additions) gives limited OpenGL and D3D "
		             "through the host; it gives no CUDA or compute. For GPU work use a "
		             "hypervisor with passthrough (KVM/VFIO, Hyper-V DDA, ESXi).");
		break;
	case HV_HYPERV:
		dr_action(
		        f,
		        "Give the VM a GPU: GPU partitioning (Add-VMGpuPartitionAdapter) or "
		        "Discrete Device Assignment (Add-VMAssignableDevice) on the Hyper-V host; "
		        "on Azure, an N-series size (NC, ND, NV). WSL 2 shares the Windows GPU "
		        "through /dev/dxg instead.");
		break;
	case HV_XEN:
		dr_action(f, "Pass a GPU through: 'pci = [ \"01:00.0\" ]' in the domain's "
		             "configuration (xl), with the device made assignable "
		             "(xl pci-assignable-add 01:00.0).");
		break;
	default:
		dr_action(f, "Choose an instance type with a GPU (EC2 g4dn, g5, g6, p4d, p5; GCE "
		             "with --accelerator; Azure N-series), or pass a GPU through to this "
		             "VM with the hypervisor's PCI passthrough.");
		break;
	}
}

/* Whether a desktop session (X11 or Wayland) is in the environment. */
static bool
session(const struct dr_ctx *ctx)
{
	const char *x = ctx->getenv("DISPLAY"), *w = ctx->getenv("WAYLAND_DISPLAY");

	return (x && *x) || (w && *w);
}

static void
check_vm(const struct dr_ctx *ctx, struct dr_report *r, const struct machine *m)
{
	enum hv hv = machine_hv(m);
	struct dr_finding *f;

	if (hv == HV_NONE && !m->nr_virtual)
		return;
	if (m->dxg) {
		f = dr_add(r, "setup.render.vm_gpu", DR_OK,
		           "WSL 2: the Windows host's GPU is shared through /dev/dxg");
		vm_evidence(ctx, f, m);
		return;
	}
	if (m->nr_real) {
		f = dr_add(r, "setup.render.vm_gpu", DR_OK,
		           "a virtual machine (%s) with %zu GPU%s passed through", hv_name(hv),
		           m->nr_real, m->nr_real == 1 ? "" : "s");
		vm_evidence(ctx, f, m);
		return;
	}
	/*
	 * A warning where something wants to draw (an emulated adapter, a
	 * session); a note on a headless VM, whose lack of a GPU the other
	 * checks already report.
	 */
	f = dr_add(r, "setup.render.vm_no_gpu",
	           m->nr_virtual || session(ctx) ? DR_WARNING : DR_INFO,
	           "a virtual machine (%s) without a GPU: 3D and compute run in software",
	           hv == HV_CLOUD ? m->dmi_vendor : hv_name(hv));
	vm_evidence(ctx, f, m);
	dr_meaning(f, "The only display adapter is the one the hypervisor emulates (or none). "
	              "OpenGL and Vulkan fall back to Mesa's llvmpipe/lavapipe on the CPU (or "
	              "virgl's host-side OpenGL at best); CUDA, ROCm and programs that need a "
	              "D3D11-class GPU find none.");
	vm_no_gpu_action(f, hv);
}

/* --- the session: software renderers, remote displays, render nodes ------------------ */

static bool
env_true(const char *v)
{
	return v && (!strcasecmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") ||
	             !strcasecmp(v, "y"));
}

static bool
env_set(const char *v)
{
	return v && *v;
}

static void
check_software_env(const struct dr_ctx *ctx, struct dr_report *r)
{
	static const char *const soft[] = { "llvmpipe", "softpipe", "swr", "swrast", "kms_swrast" };
	const char *always = ctx->getenv("LIBGL_ALWAYS_SOFTWARE");
	const char *gallium = ctx->getenv("GALLIUM_DRIVER");
	const char *loader = ctx->getenv("MESA_LOADER_DRIVER_OVERRIDE");
	const char *icd = ctx->getenv("VK_ICD_FILENAMES");
	const char *vkd = ctx->getenv("VK_DRIVER_FILES");
	struct dr_finding *f = NULL;
	bool g_soft = false, l_soft = false;

	for (size_t i = 0; i < sizeof(soft) / sizeof(soft[0]); i++) {
		g_soft |= gallium && !strcmp(gallium, soft[i]);
		l_soft |= loader && !strcmp(loader, soft[i]);
	}
	if (!env_true(always) && !g_soft && !l_soft && !(icd && strstr(icd, "lvp_icd")) &&
	    !(vkd && strstr(vkd, "lvp_icd")))
		return;
	f = dr_add(r, "setup.render.software_env", DR_WARNING,
	           "the environment forces software rendering");
	if (env_true(always))
		dr_evidence(f, "environment: LIBGL_ALWAYS_SOFTWARE=%s", always);
	if (g_soft)
		dr_evidence(f, "environment: GALLIUM_DRIVER=%s", gallium);
	if (l_soft)
		dr_evidence(f, "environment: MESA_LOADER_DRIVER_OVERRIDE=%s", loader);
	if (icd && strstr(icd, "lvp_icd"))
		dr_evidence(f, "environment: VK_ICD_FILENAMES=%s (lavapipe)", icd);
	if (vkd && strstr(vkd, "lvp_icd"))
		dr_evidence(f, "environment: VK_DRIVER_FILES=%s (lavapipe)", vkd);
	dr_meaning(f, "Programs started from this environment render OpenGL (and Vulkan, with "
	              "lavapipe) on the CPU through Mesa's software rasteriser, even where a GPU "
	              "is present: slow, and below what a D3D11-class program needs.");
	dr_action(f, "Unset the variables ('unset LIBGL_ALWAYS_SOFTWARE GALLIUM_DRIVER "
	             "MESA_LOADER_DRIVER_OVERRIDE'), and find where they are set: ~/.profile, "
	             "~/.bashrc, /etc/environment, /etc/environment.d, a desktop file or the "
	             "launcher script of the program.");
}

/* ":1" or "host:10.0" -> display number, or -1; *remote when a host part is given. */
static int
display_number(const char *display, bool *remote)
{
	const char *colon = display ? strrchr(display, ':') : NULL;

	*remote = false;
	if (!colon || !isdigit((unsigned char)colon[1]))
		return -1;
	/* "unix:0" is local; "u:0" or "un:0" are host names */
	*remote = colon != display && !(colon - display == 4 && !strncmp(display, "unix", 4));
	return (int)strtol(colon + 1, NULL, 10);
}

/* X servers (and remote-desktop daemons) that have no GPU behind them. */
static const char *const gpuless_x[] = { "Xvnc", "Xtigervnc", "Xtightvnc", "Xvfb",
	                                 "xrdp", "nxagent",   "x2goagent" };

struct xserver {
	char comm[32];
	int display; /* from its command line, or -1 */
	unsigned pid;
};

/* The display (":1") in a process's command line, or -1. */
static int
cmdline_display(const struct dr_ctx *ctx, const char *pid)
{
	struct strbuf sb = STRBUF_INIT;
	char rel[300];
	int d = -1;

	snprintf(rel, sizeof(rel), "%s/cmdline", pid);
	if (file_read(ctx->cfg->proc_root, rel, &sb, 4096, NULL) == 0)
		for (size_t i = 0; i < sb.len; i += strlen(sb.buf + i) + 1)
			if (sb.buf[i] == ':' && isdigit((unsigned char)sb.buf[i + 1])) {
				d = (int)strtol(sb.buf + i + 1, NULL, 10);
				break;
			}
	strbuf_release(&sb);
	return d;
}

/* One pass over /proc/[0-9]*\/comm; up to max GPU-less X servers into xs. */
static size_t
find_gpuless_x(const struct dr_ctx *ctx, struct xserver *xs, size_t max)
{
	DIR *d = opendir(ctx->cfg->proc_root);
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return 0;
	while (n < max && (de = readdir(d))) {
		char rel[300], comm[32];

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(rel, sizeof(rel), "%s/comm", de->d_name);
		if (file_read_line(ctx->cfg->proc_root, rel, comm, sizeof(comm), NULL) < 0)
			continue;
		for (size_t i = 0; i < sizeof(gpuless_x) / sizeof(gpuless_x[0]); i++) {
			if (strcmp(comm, gpuless_x[i]))
				continue;
			snprintf(xs[n].comm, sizeof(xs[n].comm), "%s", comm);
			xs[n].pid = (unsigned)strtoul(de->d_name, NULL, 10);
			xs[n].display = cmdline_display(ctx, de->d_name);
			n++;
			break;
		}
	}
	closedir(d);
	return n;
}

static void
check_remote(const struct dr_ctx *ctx, struct dr_report *r)
{
	const char *display = ctx->getenv("DISPLAY");
	const char *ssh = ctx->getenv("SSH_CONNECTION");
	struct xserver xs[8];
	struct dr_finding *f;
	bool remote;
	int dnum = display_number(display, &remote);
	size_t n;

	if (remote && env_set(ssh)) {
		f = dr_add(r, "setup.render.remote_x11", DR_INFO,
		           "DISPLAY=%s is forwarded over SSH: OpenGL there does not use this "
		           "machine's GPU",
		           display);
		dr_evidence(f, "environment: DISPLAY=%s, SSH_CONNECTION=%s", display, ssh);
		dr_meaning(f, "With 'ssh -X' a program draws on the X server of the machine you "
		              "came from. OpenGL goes over the network as indirect GLX or falls "
		              "back to llvmpipe on the CPU; compute (CUDA, ROCm, headless EGL) is "
		              "not affected.");
		dr_action(f, "Render on this machine's GPU and send the pixels instead: VirtualGL "
		             "('vglrun APP' through 'vglconnect' or a VNC session), a "
		             "GPU-accelerated remote desktop (Sunshine/Moonlight, NICE DCV, "
		             "TurboVNC with VirtualGL), or run the program headless with EGL.");
	}
	n = find_gpuless_x(ctx, xs, sizeof(xs) / sizeof(xs[0]));
	for (size_t i = 0; i < n; i++) {
		bool ours = !remote && dnum >= 0 && xs[i].display == dnum;

		if (ours)
			f = dr_add(r, "setup.render.remote_desktop", DR_WARNING,
			           "this session's display %s is served by %s, which has no GPU",
			           display, xs[i].comm);
		else
			f = dr_add(r, "setup.render.remote_desktop", DR_INFO,
			           "%s runs: sessions on it render OpenGL in software", xs[i].comm);
		dr_evidence(f, "%s/%u/comm: %s%s", ctx->cfg->proc_root, xs[i].pid, xs[i].comm,
		            xs[i].display >= 0 ? "" : " (no display in its command line)");
		if (xs[i].display >= 0)
			dr_evidence(f, "%s/%u/cmdline: display :%d", ctx->cfg->proc_root, xs[i].pid,
			            xs[i].display);
		if (display)
			dr_evidence(f, "environment: DISPLAY=%s", display);
		dr_meaning(f,
		           "%s is an X server (or remote-desktop server) without a DRI device: "
		           "OpenGL in its sessions is Mesa's llvmpipe on the CPU, so programs "
		           "that need a GPU are slow or refuse to start.",
		           xs[i].comm);
		dr_action(f,
		          "Run GPU programs in it through VirtualGL ('vglrun APP', which renders "
		          "on the GPU's X server or EGL device and copies the frames), or use a "
		          "remote desktop that captures a GPU-driven session (Sunshine, NICE DCV, "
		          "GNOME Remote Desktop, xorgxrdp-glamor), or run the program headless "
		          "with EGL.");
	}
}

/* The renderD* nodes under /sys/class/drm, names joined into list. */
static size_t
render_nodes(const struct dr_ctx *ctx, struct strbuf *list)
{
	char dir[4096];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	d = opendir(path_join(dir, sizeof(dir), ctx->cfg->sysfs_root, "class/drm"));
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char rel[300], drv[64];

		if (strncmp(de->d_name, "renderD", 7))
			continue;
		snprintf(rel, sizeof(rel), "class/drm/%s/device/driver", de->d_name);
		file_link_base(ctx->cfg->sysfs_root, rel, drv, sizeof(drv));
		strbuf_addf(list, "%s%s (%s)", n ? ", " : "", de->d_name,
		            drv[0] ? drv : "driver unknown");
		n++;
	}
	closedir(d);
	return n;
}

static void
check_render_node(const struct dr_ctx *ctx, struct dr_report *r)
{
	const char *display = ctx->getenv("DISPLAY"), *wayland = ctx->getenv("WAYLAND_DISPLAY");
	const char *type = ctx->getenv("XDG_SESSION_TYPE");
	struct strbuf list = STRBUF_INIT;
	struct dr_finding *f;
	size_t n;

	if (!env_set(display) && !env_set(wayland) &&
	    !(type && (!strcmp(type, "x11") || !strcmp(type, "wayland"))))
		return;
	n = render_nodes(ctx, &list);
	if (n) {
		f = dr_add(r, "setup.render.render_nodes", DR_OK, "%zu DRM render node%s: %s", n,
		           n == 1 ? "" : "s", list.buf);
		dr_evidence(f, "%s/class/drm: %s", ctx->cfg->sysfs_root, list.buf);
		goto out;
	}
	f = dr_add(r, "setup.render.no_render_node", DR_WARNING,
	           "a display session without any DRM render node: rendering is in software");
	dr_evidence(f, "%s/class/drm: no renderD* entry", ctx->cfg->sysfs_root);
	dr_evidence(f, "environment: DISPLAY=%s, WAYLAND_DISPLAY=%s, XDG_SESSION_TYPE=%s",
	            display ? display : "(unset)", wayland ? wayland : "(unset)",
	            type ? type : "(unset)");
	dr_meaning(f, "Mesa and Vulkan drivers reach a GPU through /dev/dri/renderD*; with none, "
	              "OpenGL is llvmpipe and Vulkan is lavapipe (or nothing). No GPU driver with "
	              "rendering is loaded: a VM's emulated adapter, a display-only driver "
	              "(simpledrm, efifb, ast), or a GPU without its driver.");
	dr_action(f, "See the setup.pci findings for the GPU and its driver, and load it (for "
	             "NVIDIA, nvidia-drm creates the render node: 'sudo modprobe nvidia-drm'). In "
	             "a container, pass /dev/dri (docker run --device /dev/dri).");
out:
	strbuf_release(&list);
}

/* --- two GPUs: PRIME render offload ---------------------------------------------------- */

static int
boot_vga(const struct dr_ctx *ctx, const struct pci_gpu *g)
{
	char rel[128];
	uint64_t v;

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/boot_vga", g->addr);
	if (file_read_u64(ctx->cfg->sysfs_root, rel, &v, NULL) < 0)
		return -1;
	return v != 0;
}

static void
check_prime(const struct dr_ctx *ctx, struct dr_report *r, const struct machine *m)
{
	const char *nv = ctx->getenv("__NV_PRIME_RENDER_OFFLOAD"), *dri = ctx->getenv("DRI_PRIME");
	const char *glx = ctx->getenv("__GLX_VENDOR_LIBRARY_NAME");
	const struct pci_gpu *boot = NULL, *dgpu = NULL;
	struct dr_finding *f;
	int boot_flags[64];
	bool is_nvidia;
	char slot[32];

	for (size_t i = 0; i < m->nr && i < 64; i++) {
		const struct pci_gpu *g = &m->gpus[i];

		boot_flags[i] = boot_vga(ctx, g);
		if (boot_flags[i] == 1 && !virt_adapter(g))
			boot = g;
	}
	/* no boot_vga (older kernels, some fixtures): Intel's iGPU sits on bus 0 */
	for (size_t i = 0; !boot && i < m->nr && i < 64; i++)
		if (m->gpus[i].vendor == PCI_VENDOR_INTEL &&
		    !strncmp(m->gpus[i].addr + 5, "00:", 3))
			boot = &m->gpus[i];
	if (!boot || (boot->vendor != PCI_VENDOR_INTEL && boot->vendor != PCI_VENDOR_AMD))
		return;
	for (size_t i = 0; !dgpu && i < m->nr && i < 64; i++) {
		const struct pci_gpu *g = &m->gpus[i];

		if (g != boot && !virt_adapter(g) && g->driver[0] &&
		    strcmp(g->driver, "vfio-pci") &&
		    (g->vendor == PCI_VENDOR_NVIDIA || g->vendor == PCI_VENDOR_AMD ||
		     g->vendor == PCI_VENDOR_INTEL))
			dgpu = g;
	}
	if (!dgpu)
		return;
	is_nvidia = !strcmp(dgpu->driver, "nvidia");
	/* "0000:01:00.0" -> "pci-0000_01_00_0", DRI_PRIME's spelling */
	snprintf(slot, sizeof(slot), "pci-%s", dgpu->addr);
	for (char *p = slot + 4; *p; p++)
		if (*p == ':' || *p == '.')
			*p = '_';
	if ((is_nvidia && env_true(nv)) || (!is_nvidia && env_set(dri) && strcmp(dri, "0"))) {
		f = dr_add(r, "setup.render.prime_set", DR_OK,
		           "%s is set: programs started from here render on the %s GPU at %s",
		           is_nvidia ? "__NV_PRIME_RENDER_OFFLOAD" : "DRI_PRIME",
		           pci_vendor_name(dgpu->vendor), dgpu->addr);
		dr_evidence(f, "environment: %s=%s",
		            is_nvidia ? "__NV_PRIME_RENDER_OFFLOAD" : "DRI_PRIME",
		            is_nvidia ? nv : dri);
		if (is_nvidia && !(glx && !strcmp(glx, "nvidia"))) {
			/* NVIDIA's README: Vulkan and EGL need only the first; GLX needs both */
			dr_evidence(f, "environment: __GLX_VENDOR_LIBRARY_NAME=%s",
			            glx ? glx : "(unset)");
			dr_meaning(f,
			           "Vulkan and EGL programs render on the NVIDIA GPU; GLX (OpenGL "
			           "under X11) programs still render on the integrated GPU, since "
			           "GLVND picks the NVIDIA GLX library only with "
			           "__GLX_VENDOR_LIBRARY_NAME=nvidia.");
			dr_action(f, "For OpenGL programs too, also set "
			             "__GLX_VENDOR_LIBRARY_NAME=nvidia (or use 'prime-run APP').");
		}
		return;
	}
	f = dr_add(r, "setup.render.prime", DR_INFO,
	           "two GPUs: programs render on the %s GPU at %s unless told to use the %s GPU "
	           "at %s",
	           pci_vendor_name(boot->vendor), boot->addr, pci_vendor_name(dgpu->vendor),
	           dgpu->addr);
	dr_evidence(f, "%s/bus/pci/devices/%s: %s, driver %s, boot_vga %s", ctx->cfg->sysfs_root,
	            boot->addr, pci_vendor_name(boot->vendor),
	            boot->driver[0] ? boot->driver : "(none)",
	            boot_flags[boot - m->gpus] == 1 ? "1 (drives the display)" : "unknown");
	dr_evidence(f, "%s/bus/pci/devices/%s: %s, driver %s, boot_vga %d", ctx->cfg->sysfs_root,
	            dgpu->addr, pci_vendor_name(dgpu->vendor), dgpu->driver,
	            boot_flags[dgpu - m->gpus] == 1 ? 1 : 0);
	if (env_set(nv) || env_set(dri))
		dr_evidence(f, "environment: __NV_PRIME_RENDER_OFFLOAD=%s, DRI_PRIME=%s",
		            nv ? nv : "(unset)", dri ? dri : "(unset)");
	dr_meaning(f, "The integrated GPU drives the display, and OpenGL and Vulkan programs run "
	              "on it by default (a game or 3D program then reports an old or slow GPU). "
	              "Compute (CUDA, ROCm) picks its GPU itself and is not affected.");
	if (is_nvidia)
		dr_action(f,
		          "Start the program on the NVIDIA GPU with PRIME render offload: "
		          "'__NV_PRIME_RENDER_OFFLOAD=1 __GLX_VENDOR_LIBRARY_NAME=nvidia "
		          "__VK_LAYER_NV_optimus=NVIDIA_only APP' (or 'prime-run APP'), or the "
		          "desktop's 'Launch using Discrete Graphics Card' (switcherooctl launch "
		          "APP). Check with 'glxinfo -B' under the same variables.");
	else
		dr_action(
		        f,
		        "Start the program on the other GPU with Mesa's 'DRI_PRIME=1 APP' (or "
		        "'DRI_PRIME=%s APP' to name it), or the desktop's 'Launch using Discrete "
		        "Graphics Card' (switcherooctl launch APP). Check with 'glxinfo -B' under "
		        "the same variable.",
		        slot);
}

void
dr_check_render(const struct dr_ctx *ctx, struct dr_report *r)
{
	struct machine m;

	machine_read(ctx, &m);
	check_vm(ctx, r, &m);
	check_software_env(ctx, r);
	check_remote(ctx, r);
	check_render_node(ctx, r);
	check_prime(ctx, r, &m);
	free(m.gpus);
}

/* --- the catalog of setup.render.* and setup.video.* (check_video.c), in id order ---------- */

const struct dr_explain dr_catalog_render[] = {
	{ "setup.render.no_render_node", "A display session without any DRM render node",
	  "OpenGL and Vulkan drivers open a GPU through its render node, /dev/dri/renderD*,\n"
	  "listed in /sys/class/drm. A desktop session (DISPLAY, WAYLAND_DISPLAY or\n"
	  "XDG_SESSION_TYPE set) with no render node at all renders in software: Mesa's\n"
	  "llvmpipe for OpenGL, lavapipe for Vulkan. Causes, most likely first:\n"
	  "  1. No GPU driver with rendering is loaded: the GPU has no driver (see\n"
	  "     setup.pci.no_driver), or NVIDIA's nvidia-drm module is not loaded\n"
	  "     ('sudo modprobe nvidia-drm'; nvidia-drm.modeset=1 for Wayland).\n"
	  "  2. The display is driven by a display-only driver: simpledrm or efifb (the\n"
	  "     firmware framebuffer, before or instead of the GPU driver), ast or mgag200\n"
	  "     (a server's BMC), or a VM's emulated adapter.\n"
	  "  3. A container that was not given /dev/dri, or a /sys that hides it.\n"
	  "'ls -l /dev/dri' and 'lspci -k' tell them apart." },
	{ "setup.render.prime", "Two GPUs: programs render on the integrated one by default",
	  "On a laptop, or a desktop with the CPU's graphics enabled, the integrated GPU\n"
	  "(Intel or AMD; boot_vga = 1 in sysfs) drives the display and every OpenGL and\n"
	  "Vulkan program runs on it unless told otherwise; the discrete GPU sleeps.\n"
	  "This is by design (battery life), not a fault. To run one program on the\n"
	  "discrete GPU:\n"
	  "  NVIDIA (proprietary driver): PRIME render offload,\n"
	  "    __NV_PRIME_RENDER_OFFLOAD=1 __GLX_VENDOR_LIBRARY_NAME=nvidia \\\n"
	  "    __VK_LAYER_NV_optimus=NVIDIA_only APP\n"
	  "    (Debian and Ubuntu ship this as 'prime-run APP').\n"
	  "  AMD, Intel or nouveau (Mesa): DRI_PRIME=1 APP, or DRI_PRIME=pci-0000_01_00_0\n"
	  "    to name the GPU by its PCI address.\n"
	  "  GNOME and KDE: right-click > 'Launch using Discrete Graphics Card', which\n"
	  "    switcheroo-control sets up ('switcherooctl launch APP' from a shell).\n"
	  "'glxinfo -B' and 'vulkaninfo --summary' under the same variables show which\n"
	  "GPU renders. Compute (CUDA, ROCm, OpenCL) chooses its device itself and does\n"
	  "not need any of this. nvidia-prime's 'prime-select nvidia' makes the NVIDIA\n"
	  "GPU render everything, at the cost of power." },
	{ "setup.render.prime_set", "PRIME render offload is set in the environment",
	  "__NV_PRIME_RENDER_OFFLOAD=1 (NVIDIA's driver) or DRI_PRIME (Mesa) is set, so\n"
	  "programs started from this environment render on the discrete GPU. Set in a\n"
	  "shell start-up file, it applies to everything started from it, which costs\n"
	  "battery on a laptop." },
	{ "setup.render.remote_desktop", "An X server without a GPU (VNC, RDP, Xvfb) is running",
	  "Xvnc (TigerVNC, TightVNC), Xvfb, xrdp's X server, nxagent and x2goagent are\n"
	  "X servers that draw into memory: they have no DRI device, so OpenGL in their\n"
	  "sessions is Mesa's llvmpipe on the CPU ('OpenGL renderer string: llvmpipe' in\n"
	  "glxinfo -B), and programs that need a GPU are slow or refuse to start. A\n"
	  "warning when this session's DISPLAY is on such a server, a note otherwise.\n"
	  "What to do:\n"
	  "  - VirtualGL: 'vglrun APP' renders on the GPU (through the GPU's own X server\n"
	  "    or an EGL device) and copies the frames into the VNC session; TurboVNC\n"
	  "    with VirtualGL is the usual pairing.\n"
	  "  - A remote desktop that captures a GPU-driven session: Sunshine/Moonlight,\n"
	  "    NICE DCV, GNOME Remote Desktop, xorgxrdp-glamor for xrdp.\n"
	  "  - For programs that need no window: headless EGL (EGL_PLATFORM=surfaceless\n"
	  "    or the device platform) or Vulkan without a surface." },
	{ "setup.render.remote_x11", "The X display is forwarded over SSH",
	  "With 'ssh -X' or 'ssh -Y', DISPLAY is localhost:10.0 (or similar) and programs\n"
	  "draw on the X server of the machine you came from. OpenGL then goes over the\n"
	  "network as indirect GLX (old OpenGL only, if the local server allows it) or\n"
	  "falls back to llvmpipe: this machine's GPU is not used for drawing. Compute\n"
	  "(CUDA, ROCm) and headless EGL are not affected. Use VirtualGL ('vglconnect'\n"
	  "then 'vglrun APP'), a GPU-accelerated remote desktop, or render headless." },
	{ "setup.render.render_nodes", "DRM render nodes are present",
	  "The render nodes in /sys/class/drm (renderD128, ...) are what Mesa, Vulkan\n"
	  "drivers, VA-API and ROCm open; each belongs to one GPU driver." },
	{ "setup.render.software_env", "The environment forces software rendering",
	  "Mesa reads LIBGL_ALWAYS_SOFTWARE=1 (use the software rasteriser),\n"
	  "GALLIUM_DRIVER=llvmpipe|softpipe and MESA_LOADER_DRIVER_OVERRIDE=swrast; the\n"
	  "Vulkan loader reads VK_ICD_FILENAMES / VK_DRIVER_FILES, and lvp_icd is\n"
	  "lavapipe, Vulkan on the CPU. Any of them makes programs render on the CPU\n"
	  "whatever GPU is present. They are usually left over from working around a\n"
	  "driver problem, set in ~/.profile, ~/.bashrc, /etc/environment, a desktop file\n"
	  "or a program's launcher script; containers built for CI set them too. Unset\n"
	  "them and check with 'glxinfo -B' (the renderer should name the GPU)." },
	{ "setup.render.vm_gpu", "A virtual machine with a GPU of its own",
	  "The machine is a virtual machine (DMI, the CPU's hypervisor flag or an\n"
	  "emulated display adapter say so) with a real GPU passed through (VFIO, DDA,\n"
	  "DirectPath I/O, a vGPU), or WSL 2, which shares the Windows GPU through\n"
	  "/dev/dxg. Programs can use that GPU as on bare metal; the emulated adapter,\n"
	  "if any, only draws the VM's console." },
	{ "setup.render.vm_no_gpu", "A virtual machine without a GPU",
	  "The machine is a virtual machine, and the only display adapters on its PCI\n"
	  "bus are emulated: virtio-gpu (1af4:1050), QXL (1b36:0100), bochs/stdvga\n"
	  "(1234:1111), Cirrus (1013:00b8), VMware SVGA II (15ad:0405), VirtualBox\n"
	  "(80ee:beef), Hyper-V (1414:5353 or hyperv_drm on the VMBus), or none. It is\n"
	  "told by /sys/class/dmi/id (sys_vendor QEMU, VMware, innotek GmbH, Microsoft\n"
	  "Corporation 'Virtual Machine', Xen, Amazon EC2, ...), the 'hypervisor' CPU\n"
	  "flag in /proc/cpuinfo, and those adapters.\n"
	  "OpenGL and Vulkan then run on the CPU (llvmpipe, lavapipe); virtio-gpu with\n"
	  "virgl forwards OpenGL to the host's GPU, and VMware's and VirtualBox's '3D\n"
	  "acceleration' settings translate OpenGL and D3D to the host, with limits\n"
	  "(older feature levels, no compute). CUDA and ROCm need a real GPU.\n"
	  "What to do, by hypervisor:\n"
	  "  - QEMU/KVM, libvirt, Proxmox: PCI passthrough with VFIO (IOMMU on, the GPU\n"
	  "    bound to vfio-pci on the host, given as a hostdev), or a vGPU (NVIDIA\n"
	  "    vGPU, Intel SR-IOV).\n"
	  "  - VMware ESXi: DirectPath I/O or NVIDIA vGPU; Workstation: 3D acceleration\n"
	  "    only.\n"
	  "  - VirtualBox: 3D acceleration only (no passthrough in current versions).\n"
	  "  - Hyper-V: GPU partitioning or Discrete Device Assignment; Azure: N-series.\n"
	  "  - Clouds: an instance type with a GPU (EC2 g4dn/g5/g6/p4d/p5, GCE with an\n"
	  "    accelerator)." },
	{ "setup.video.engines", "The video encoders and decoders of a GPU",
	  "GPUs have fixed-function video engines apart from their shader cores: NVIDIA\n"
	  "NVENC (encode) and NVDEC (decode); AMD VCN (both; UVD and VCE on older\n"
	  "cards); Intel Quick Sync (the video engines vcs/vecs). doctor finds them from\n"
	  "NVML (encoder and decoder utilisation readable), the DRM engines a driver\n"
	  "reports in fdinfo (enc, dec, vcn_*, video, vcs), and sysfs (amdgpu's\n"
	  "vcn_busy_percent and fw_version/vcn_fw_version, i915's engine/vcs0, xe's\n"
	  "tile0/gt*/engines/vcs). Their load shows in 'gpuscope top' (ENC/DEC) and\n"
	  "'gpuscope watch --fields utilization.encoder,utilization.decoder'." },
	{ "setup.video.ffmpeg_gpu", "ffmpeg can use the GPU's video engines",
	  "The ffmpeg on PATH was built with the GPU's video APIs: its libavcodec (found\n"
	  "through the program's DT_NEEDED entry, RUNPATH, LD_LIBRARY_PATH, ld.so.conf\n"
	  "and the default directories; a static ffmpeg is searched itself) holds the\n"
	  "encoder and hwaccel names. Being built with them is not using them: ffmpeg\n"
	  "uses the GPU only when told to.\n"
	  "  NVIDIA: ffmpeg -hwaccel cuda -hwaccel_output_format cuda -i in.mp4 \\\n"
	  "            -c:v h264_nvenc -preset p4 out.mp4\n"
	  "  VA-API (AMD, Intel): ffmpeg -hwaccel vaapi -hwaccel_output_format vaapi \\\n"
	  "            -vaapi_device /dev/dri/renderD128 -i in.mp4 -c:v h264_vaapi out.mp4\n"
	  "          (frames from the CPU: -vf format=nv12,hwupload)\n"
	  "  Quick Sync: ffmpeg -hwaccel qsv -hwaccel_output_format qsv -i in.mp4 \\\n"
	  "            -c:v h264_qsv out.mp4\n"
	  "Filters that run on the CPU between decoder and encoder (scale without\n"
	  "scale_cuda/scale_vaapi) copy every frame back and forth and can make the GPU\n"
	  "path slower than expected. During a transcode the encoder and decoder load\n"
	  "shows in 'gpuscope top' (ENC/DEC columns) or 'gpuscope watch --fields\n"
	  "utilization.encoder,utilization.decoder'; if both stay at 0, the GPU is not\n"
	  "in use." },
	{ "setup.video.ffmpeg_no_gpu", "ffmpeg was built without the GPU's video APIs",
	  "The usual reason \"GPU acceleration does nothing\": the ffmpeg that runs has no\n"
	  "h264_nvenc / h264_vaapi / h264_qsv at all ('Unknown encoder'), and programs\n"
	  "that call it (transcoders, media servers) quietly use the CPU. Causes:\n"
	  "  1. A static build without them: johnvansickle.com's builds have no NVENC;\n"
	  "     some distributions' minimal builds leave hardware APIs out.\n"
	  "  2. An ffmpeg built from source without nv-codec-headers (NVENC, NVDEC) or\n"
	  "     libva's headers (VA-API) installed: configure leaves them out silently.\n"
	  "  3. Another ffmpeg earlier on PATH than the one you think ('type -a ffmpeg').\n"
	  "What has them: Debian's and Ubuntu's ffmpeg (NVENC, NVDEC, VA-API, QSV,\n"
	  "loading the drivers' libraries at run time), RPM Fusion's on Fedora, BtbN's\n"
	  "FFmpeg-Builds, jellyfin-ffmpeg. 'ffmpeg -hide_banner -encoders | grep -E\n"
	  "\"nvenc|vaapi|qsv\"' and 'ffmpeg -hide_banner -hwaccels' list what one has." },
	{ "setup.video.no_engines", "A GPU reports no video encoder or decoder",
	  "NVML answers 'not supported' for both the encoder and the decoder\n"
	  "utilisation of this GPU. Some boards have no video engines (compute-only and\n"
	  "mining cards); a vGPU profile or MIG instance may not expose them (MIG: only\n"
	  "instances with a media extension, '+me' profiles, get NVDEC)." },
	{ "setup.video.no_ffmpeg", "No usable ffmpeg on PATH",
	  "doctor looks for ffmpeg in PATH's directories to check what it was built\n"
	  "with; none was found, or its libavcodec was not. Programs that bundle their\n"
	  "own ffmpeg (Jellyfin's /usr/lib/jellyfin-ffmpeg/ffmpeg, Plex, HandBrake,\n"
	  "OBS) are not checked." },
	{ "setup.video.no_nvenc", "A data-centre GPU without NVENC",
	  "NVIDIA's compute GPUs (A100, A30, H100, H200, GH200, B200 and their export\n"
	  "variants) have NVDEC and NVJPG but no NVENC encoder. Encoding with\n"
	  "h264_nvenc fails on them ('OpenEncodeSessionEx failed: unsupported device'\n"
	  "or 'No capable devices found'), whatever the driver and ffmpeg. Decode on\n"
	  "the GPU (-hwaccel cuda) and encode on the CPU (libx264, libx265, libsvtav1),\n"
	  "or encode on a GPU with NVENC (L4, L40S, A10, A16, RTX). NVIDIA's Video\n"
	  "Encode and Decode support matrix lists every model." },
	{ "setup.video.nvidia_libs", "NVIDIA's video libraries are installed",
	  "libnvidia-encode.so.1 (NVENC) and libnvcuvid.so.1 (NVDEC, CUVID) are part of\n"
	  "the driver and are loaded at run time by ffmpeg, GStreamer and OBS." },
	{ "setup.video.nvidia_libs_missing", "NVIDIA's video libraries are missing",
	  "ffmpeg's NVENC and NVDEC code loads libnvidia-encode.so.1 and libnvcuvid.so.1\n"
	  "with dlopen when used, so an ffmpeg built with NVENC still fails ('Cannot load\n"
	  "libnvidia-encode.so.1', 'Cannot load libnvcuvid.so.1') without them. Causes:\n"
	  "  1. Distributions package them apart from the driver: Ubuntu\n"
	  "     libnvidia-encode-<branch> and libnvidia-decode-<branch> (pulled in by\n"
	  "     nvidia-driver-<branch> but not by the -server or headless variants),\n"
	  "     Debian libnvidia-encode1 and libnvcuvid1, RPM Fusion\n"
	  "     xorg-x11-drv-nvidia-cuda-libs.\n"
	  "  2. In a container, the NVIDIA Container Toolkit mounts only the libraries of\n"
	  "     the capabilities asked for: NVIDIA_DRIVER_CAPABILITIES must include\n"
	  "     'video' (or be 'all'); the default is compute,utility.\n"
	  "  3. They are installed in a directory the loader does not search: add it to\n"
	  "     /etc/ld.so.conf.d and run 'sudo ldconfig'.\n"
	  "Their version must match the kernel module's." },
	{ "setup.video.va_driver", "A VA-API driver is installed",
	  "VA-API programs load a driver for the GPU from the dri directory\n"
	  "(/usr/lib/<triplet>/dri, or LIBVA_DRIVERS_PATH): iHD or i965 for Intel,\n"
	  "radeonsi for AMD. 'vainfo' lists the profiles it offers." },
	{ "setup.video.va_driver_missing", "No VA-API driver for an AMD or Intel GPU",
	  "libva finds no driver for the GPU ('vaInitialize failed', 'libva error:\n"
	  "/usr/lib/x86_64-linux-gnu/dri/iHD_drv_video.so init failed'), so h264_vaapi,\n"
	  "h264_qsv and hardware decoding in browsers and players fall back to the CPU.\n"
	  "Intel: intel-media-va-driver(-non-free) (Debian, Ubuntu) or intel-media-driver\n"
	  "(Fedora) for Broadwell and newer, i965-va-driver before. AMD: mesa-va-drivers\n"
	  "(Debian, Ubuntu); Fedora's Mesa leaves H.264 and HEVC out, RPM Fusion's\n"
	  "mesa-va-drivers-freeworld has them. LIBVA_DRIVER_NAME forces a driver name\n"
	  "(iHD, i965, radeonsi) when the wrong one is chosen." },
	{ NULL, NULL, NULL },
};
