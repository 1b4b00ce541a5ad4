/*
 * Tests of doctor's rendering and video checks (setup.render.*,
 * setup.video.*) on the fixture roots of tests/fixtures/doctor/render,
 * copied to a temporary directory and completed per case: a VM with and
 * without a GPU, WSL, software-rendering variables, remote displays, render
 * nodes, two-GPU laptops; GPUs' video engines, ffmpeg static and dynamic
 * (a small ELF written here), NVIDIA's video libraries and VA drivers.
 */
#include "doctor/doctor.h"

#include <elf.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/gpu.h"
#include "doctor_test.h"
#include "harness.h"
#include "tree.h"

/* --- the environment of a case ----------------------------------------------------------- */

static const char *env_kv[16][2];

static void
env_clear(void)
{
	memset(env_kv, 0, sizeof(env_kv));
}

static void
env_put(const char *name, const char *value)
{
	for (size_t i = 0; i < 16; i++)
		if (!env_kv[i][0] || !strcmp(env_kv[i][0], name)) {
			env_kv[i][0] = name;
			env_kv[i][1] = value;
			return;
		}
}

static const char *
test_env(const char *name)
{
	for (size_t i = 0; i < 16 && env_kv[i][0]; i++)
		if (!strcmp(env_kv[i][0], name))
			return env_kv[i][1];
	return NULL;
}

/* --- running a check on a root -------------------------------------------------------------- */

static char root[PATH_MAX];

static void
run_on(const char *dir, const struct gpu_snapshot *snap,
       void (*check)(const struct dr_ctx *, struct dr_report *), struct dr_report *r)
{
	char sys[PATH_MAX], proc[PATH_MAX];
	struct gs_config cfg;
	struct dr_ctx ctx;

	join(sys, sizeof(sys), dir, "sys");
	join(proc, sizeof(proc), dir, "proc");
	gs_config_init(&cfg);
	cfg.root = dir;
	cfg.sysfs_root = sys;
	cfg.proc_root = proc;
	memset(&ctx, 0, sizeof(ctx));
	ctx.cfg = &cfg;
	ctx.snap = snap;
	ctx.getenv = test_env;
	check(&ctx, r);
}

static bool all_known = true;

static void
note_catalog(const struct dr_report *r)
{
	for (size_t i = 0; i < r->nr; i++)
		if (!dr_explain_find(r->f[i].id)) {
			diag("'%s' has no explanation", r->f[i].id);
			all_known = false;
		}
}

static void
render(const char *dir, struct dr_report *r)
{
	dr_report_release(r);
	run_on(dir, NULL, dr_check_render, r);
	note_catalog(r);
}

static void
video(const char *dir, const struct gpu_snapshot *s, struct dr_report *r)
{
	dr_report_release(r);
	run_on(dir, s, dr_check_video, r);
	note_catalog(r);
}

/* root/sys/bus/pci/devices/addr: a display device bound to driver. */
static void
add_pci(const char *dir, const char *addr, const char *vendor, const char *device,
        const char *driver, const char *boot)
{
	char d[PATH_MAX], target[256];

	fmt(d, sizeof(d), "%s/sys/bus/pci/devices/%s", dir, addr);
	make_dirs(d);
	write_at(d, "vendor", vendor);
	write_at(d, "device", device);
	write_at(d, "class", "0x030000\n");
	if (boot)
		write_at(d, "boot_vga", boot);
	fmt(target, sizeof(target), "../../../../bus/pci/drivers/%s", driver);
	link_at(d, "driver", target);
}

/* --- rendering ------------------------------------------------------------------------------- */

static void
test_vm(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;
	char vm[PATH_MAX], path[PATH_MAX];

	env_clear();
	copy_fixture("doctor/render/vm-qemu", vm, sizeof(vm));
	render(vm, &r);
	f = find_id(&r, "setup.render.vm_no_gpu");
	ok(f && f->severity == DR_WARNING, "vm: QEMU guest with virtio-gpu only: warning");
	ok(f && strstr(f->title, "QEMU/KVM") && evidence_has(f, "1af4:1050") &&
	           evidence_has(f, "virtio-gpu") && evidence_has(f, "sys_vendor 'QEMU'") &&
	           evidence_has(f, "'hypervisor'"),
	   "vm: evidence: the adapter, DMI and the cpuinfo flag");
	ok(f && f->action && strstr(f->action, "vfio-pci") && strstr(f->action, "virgl"),
	   "vm: action: VFIO passthrough, virgl's limits");
	ok(!find_id(&r, "setup.render.vm_gpu") && !find_id(&r, "setup.render.render_nodes"),
	   "vm: no ok line, no render-node finding without a session");

	env_put("DISPLAY", ":0");
	render(vm, &r);
	f = find_id(&r, "setup.render.no_render_node");
	ok(f && f->severity == DR_WARNING && evidence_has(f, "DISPLAY=:0"),
	   "vm: a display session without a render node: warning");
	env_clear();

	/* a GPU passed through */
	add_pci(vm, "0000:06:00.0", "0x10de\n", "0x26b9\n", "nvidia", "0\n");
	render(vm, &r);
	f = find_id(&r, "setup.render.vm_gpu");
	ok(f && f->severity == DR_OK && !find_id(&r, "setup.render.vm_no_gpu") &&
	           strstr(f->title, "1 GPU passed through"),
	   "vm: with an NVIDIA GPU passed through: ok");

	/* VMware: only DMI and its SVGA adapter, no flag */
	rm_tree(vm);
	copy_fixture("doctor/render/vm-qemu", vm, sizeof(vm));
	join(path, sizeof(path), vm, "proc/cpuinfo");
	write_str(path, "processor\t: 0\nflags\t\t: fpu vme sse2\n\n");
	join(path, sizeof(path), vm, "sys/class/dmi/id");
	write_at(path, "sys_vendor", "VMware, Inc.\n");
	write_at(path, "product_name", "VMware7,1\n");
	join(path, sizeof(path), vm, "sys/bus/pci/devices/0000:00:01.0");
	rm_tree(path);
	add_pci(vm, "0000:00:0f.0", "0x15ad\n", "0x0405\n", "vmwgfx", "1\n");
	render(vm, &r);
	f = find_id(&r, "setup.render.vm_no_gpu");
	ok(f && strstr(f->title, "VMware") && f->action &&
	           strstr(f->action, "Accelerate 3D graphics"),
	   "vm: VMware: its 3D acceleration setting named");

	/* VirtualBox by DMI alone */
	join(path, sizeof(path), vm, "sys/class/dmi/id");
	write_at(path, "sys_vendor", "innotek GmbH\n");
	write_at(path, "product_name", "VirtualBox\n");
	render(vm, &r);
	f = find_id(&r, "setup.render.vm_no_gpu");
	ok(f && strstr(f->title, "VirtualBox") && strstr(f->action, "Enable 3D Acceleration"),
	   "vm: VirtualBox: its 3D setting named");

	/* WSL 2: no DMI, the hypervisor flag, /dev/dxg */
	rm_tree(vm);
	copy_fixture("doctor/render/vm-qemu", vm, sizeof(vm));
	join(path, sizeof(path), vm, "sys/class/dmi");
	rm_tree(path);
	join(path, sizeof(path), vm, "sys/bus/pci/devices/0000:00:01.0");
	rm_tree(path);
	join(path, sizeof(path), vm, "dev");
	make_dirs(path);
	write_at(path, "dxg", "");
	render(vm, &r);
	f = find_id(&r, "setup.render.vm_gpu");
	ok(f && f->severity == DR_OK && strstr(f->title, "WSL") &&
	           !find_id(&r, "setup.render.vm_no_gpu"),
	   "vm: WSL 2 with /dev/dxg: ok");

	/* Hyper-V Gen 2: no PCI display, hyperv_drm on the VMBus, DMI */
	join(path, sizeof(path), vm, "dev/dxg");
	unlink(path);
	join(path, sizeof(path), vm, "sys/bus/vmbus/drivers/hyperv_drm");
	make_dirs(path);
	join(path, sizeof(path), vm, "sys/class/dmi/id");
	make_dirs(path);
	write_at(path, "sys_vendor", "Microsoft Corporation\n");
	write_at(path, "product_name", "Virtual Machine\n");
	render(vm, &r);
	f = find_id(&r, "setup.render.vm_no_gpu");
	ok(f && strstr(f->title, "Hyper-V") && evidence_has(f, "hyperv_drm") &&
	           strstr(f->action, "Add-VMGpuPartitionAdapter"),
	   "vm: Hyper-V without a GPU: GPU-P and DDA named");
	rm_tree(vm);
	dr_report_release(&r);
}

static void
test_bare_metal(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;
	char hy[PATH_MAX], path[PATH_MAX];

	env_clear();
	copy_fixture("doctor/render/hybrid", hy, sizeof(hy));
	render(hy, &r);
	ok(!find_id(&r, "setup.render.vm_no_gpu") && !find_id(&r, "setup.render.vm_gpu"),
	   "laptop: not a VM");
	f = find_id(&r, "setup.render.prime");
	ok(f && f->severity == DR_INFO && strstr(f->title, "Intel GPU at 0000:00:02.0") &&
	           strstr(f->title, "NVIDIA GPU at 0000:01:00.0"),
	   "laptop: Intel iGPU + NVIDIA dGPU: PRIME note");
	ok(f && evidence_has(f, "boot_vga 1 (drives the display)") && f->action &&
	           strstr(f->action, "__NV_PRIME_RENDER_OFFLOAD=1 __GLX_VENDOR_LIBRARY_NAME=nvidia "
	                             "__VK_LAYER_NV_optimus=NVIDIA_only") &&
	           strstr(f->action, "prime-run"),
	   "laptop: evidence boot_vga, action PRIME render offload");
	ok(dr_exit_code(&r) == 0, "laptop: nothing worse than a note");

	env_put("__NV_PRIME_RENDER_OFFLOAD", "1");
	render(hy, &r);
	ok(find_id(&r, "setup.render.prime_set") && !find_id(&r, "setup.render.prime"),
	   "laptop: __NV_PRIME_RENDER_OFFLOAD=1 set: ok instead");
	f = find_id(&r, "setup.render.prime_set");
	ok(f && f->meaning && strstr(f->meaning, "GLX") &&
	           evidence_has(f, "__GLX_VENDOR_LIBRARY_NAME=(unset)") && f->action &&
	           strstr(f->action, "__GLX_VENDOR_LIBRARY_NAME=nvidia"),
	   "laptop: offload without __GLX_VENDOR_LIBRARY_NAME=nvidia: GLX still on the iGPU");
	env_put("__GLX_VENDOR_LIBRARY_NAME", "nvidia");
	render(hy, &r);
	f = find_id(&r, "setup.render.prime_set");
	ok(f && !f->meaning && !f->action, "laptop: both PRIME variables: ok, nothing to add");
	env_clear();

	/* an AMD dGPU instead: Mesa's DRI_PRIME */
	join(path, sizeof(path), hy, "sys/bus/pci/devices/0000:01:00.0");
	write_at(path, "vendor", "0x1002\n");
	write_at(path, "device", "0x73df\n");
	link_at(path, "driver", "../../../../bus/pci/drivers/amdgpu");
	render(hy, &r);
	f = find_id(&r, "setup.render.prime");
	ok(f && strstr(f->action, "DRI_PRIME=1") && strstr(f->action, "DRI_PRIME=pci-0000_01_00_0"),
	   "laptop: AMD dGPU: DRI_PRIME=1 and its pci- name");
	env_put("DRI_PRIME", "1");
	render(hy, &r);
	ok(find_id(&r, "setup.render.prime_set") && !find_id(&r, "setup.render.prime"),
	   "laptop: DRI_PRIME=1 set: ok");
	env_clear();

	/* a server: ASPEED BMC drives the display, no PRIME note */
	join(path, sizeof(path), hy, "sys/bus/pci/devices/0000:00:02.0");
	write_at(path, "vendor", "0x1a03\n");
	write_at(path, "device", "0x2000\n");
	render(hy, &r);
	ok(!find_id(&r, "setup.render.prime"), "server: a BMC's VGA at boot: no PRIME note");

	/* render nodes in a session */
	env_put("XDG_SESSION_TYPE", "wayland");
	render(hy, &r);
	f = find_id(&r, "setup.render.render_nodes");
	ok(f && f->severity == DR_OK && strstr(f->title, "renderD128") &&
	           !find_id(&r, "setup.render.no_render_node"),
	   "session: render nodes present: one ok line");
	env_clear();

	/* software rendering forced */
	env_put("LIBGL_ALWAYS_SOFTWARE", "1");
	render(hy, &r);
	f = find_id(&r, "setup.render.software_env");
	ok(f && f->severity == DR_WARNING && evidence_has(f, "LIBGL_ALWAYS_SOFTWARE=1"),
	   "env: LIBGL_ALWAYS_SOFTWARE=1: warning");
	env_put("LIBGL_ALWAYS_SOFTWARE", "0");
	render(hy, &r);
	ok(!find_id(&r, "setup.render.software_env"), "env: LIBGL_ALWAYS_SOFTWARE=0: nothing");
	env_put("GALLIUM_DRIVER", "llvmpipe");
	render(hy, &r);
	ok(evidence_has(find_id(&r, "setup.render.software_env"), "GALLIUM_DRIVER=llvmpipe"),
	   "env: GALLIUM_DRIVER=llvmpipe: warning");
	env_put("GALLIUM_DRIVER", "radeonsi");
	render(hy, &r);
	ok(!find_id(&r, "setup.render.software_env"), "env: GALLIUM_DRIVER=radeonsi: nothing");
	env_clear();

	/* remote displays */
	env_put("DISPLAY", "localhost:10.0");
	env_put("SSH_CONNECTION", "10.0.0.2 50000 10.0.0.1 22");
	render(hy, &r);
	f = find_id(&r, "setup.render.remote_x11");
	ok(f && f->severity == DR_INFO && strstr(f->action, "vglrun"),
	   "ssh -X: forwarded DISPLAY: note naming VirtualGL");
	env_put("DISPLAY", ":0");
	render(hy, &r);
	ok(!find_id(&r, "setup.render.remote_x11"), "ssh with a local DISPLAY :0: nothing");
	env_clear();

	join(path, sizeof(path), hy, "proc/2345");
	make_dirs(path);
	write_at(path, "comm", "Xtigervnc\n");
	write_bytes_at(path, "cmdline", "/usr/bin/Xtigervnc\0:1\0-geometry\0001920x1080\0", 43);
	join(path, sizeof(path), hy, "proc/77");
	make_dirs(path);
	write_at(path, "comm", "bash\n");
	env_put("DISPLAY", ":1");
	render(hy, &r);
	f = find_id(&r, "setup.render.remote_desktop");
	ok(f && f->severity == DR_WARNING && strstr(f->title, "Xtigervnc") &&
	           evidence_has(f, "display :1") &&
	           count_id(&r, "setup.render.remote_desktop") == 1,
	   "vnc: this session's display is Xtigervnc's: warning");
	env_put("DISPLAY", ":0");
	render(hy, &r);
	f = find_id(&r, "setup.render.remote_desktop");
	ok(f && f->severity == DR_INFO, "vnc: another display: a note");
	rm_tree(hy);
	dr_report_release(&r);
}

/* --- video ------------------------------------------------------------------------------------ */

static struct gpu_device *
add_dev(struct gpu_snapshot *s, enum gpu_vendor v, const char *name, bool enc, bool dec)
{
	struct gpu_device *d = gpu_snapshot_add_dev(s);

	d->vendor = v;
	d->state = DEV_OK;
	snprintf(d->name, sizeof(d->name), "%s", name);
	if (enc)
		dev_set(d, GF_UTIL_ENC, 0);
	if (dec)
		dev_set(d, GF_UTIL_DEC, 0);
	return d;
}

/* An executable file dir/name with len bytes. */
static void
write_exe(const char *dir, const char *name, const void *data, size_t len)
{
	char path[PATH_MAX];

	make_dirs(dir);
	join(path, sizeof(path), dir, name);
	write_bytes(path, data, len);
	chmod(path, 0755);
}

/*
 * A dynamically linked x86-64 program in miniature: one PT_LOAD, a
 * PT_DYNAMIC with DT_NEEDED libc.so.6 and needed, and DT_RUNPATH runpath.
 */
static size_t
tiny_elf(unsigned char *buf, size_t size, const char *needed, const char *runpath)
{
	const uint64_t base = 0x400000, str_off = 64 + 2 * sizeof(Elf64_Phdr);
	Elf64_Ehdr eh;
	Elf64_Phdr ph[2];
	Elf64_Dyn dyn[6];
	size_t strsz, dyn_off, total;
	char str[3072];
	int n1, n2, n3;

	if (strlen(needed) + strlen(runpath) + 16 > sizeof(str))
		bail("tiny_elf: names too long");
	memset(buf, 0, size);
	memset(str, 0, sizeof(str));
	n1 = 1;
	memcpy(str + n1, "libc.so.6", 10);
	n2 = n1 + 10;
	memcpy(str + n2, needed, strlen(needed) + 1);
	n3 = n2 + (int)strlen(needed) + 1;
	memcpy(str + n3, runpath, strlen(runpath) + 1);
	strsz = (size_t)n3 + strlen(runpath) + 1;
	dyn_off = (str_off + strsz + 7) & ~(size_t)7;
	total = dyn_off + sizeof(dyn);

	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = 64;
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = 2;
	memset(ph, 0, sizeof(ph));
	ph[0].p_type = PT_LOAD;
	ph[0].p_vaddr = base;
	ph[0].p_filesz = ph[0].p_memsz = total;
	ph[1].p_type = PT_DYNAMIC;
	ph[1].p_offset = dyn_off;
	ph[1].p_vaddr = base + dyn_off;
	ph[1].p_filesz = ph[1].p_memsz = sizeof(dyn);
	dyn[0] = (Elf64_Dyn){ DT_NEEDED, { (uint64_t)n1 } };
	dyn[1] = (Elf64_Dyn){ DT_NEEDED, { (uint64_t)n2 } };
	dyn[2] = (Elf64_Dyn){ DT_STRTAB, { base + str_off } };
	dyn[3] = (Elf64_Dyn){ DT_STRSZ, { strsz } };
	dyn[4] = (Elf64_Dyn){ DT_RUNPATH, { (uint64_t)n3 } };
	dyn[5] = (Elf64_Dyn){ DT_NULL, { 0 } };
	if (total > size)
		bail("tiny_elf: buffer too small");
	memcpy(buf, &eh, sizeof(eh));
	memcpy(buf + 64, ph, sizeof(ph));
	memcpy(buf + str_off, str, strsz);
	memcpy(buf + dyn_off, dyn, sizeof(dyn));
	return total;
}

static const char nv_names[] = "ffmpeg version n7.1\n--enable-nvenc --enable-cuvid\n"
                               "h264_nvenc\nhevc_nvenc\nav1_nvenc\nh264_cuvid\nh264_nvdec\n";

/* dir's /opt/ff/bin/ffmpeg: len bytes of data, executable. */
static void
ffmpeg_is(const char *dir, const void *data, size_t len)
{
	char bin[PATH_MAX];

	join(bin, sizeof(bin), dir, "opt/ff/bin");
	write_exe(bin, "ffmpeg", data, len);
}

static void
alarm_fail(int sig)
{
	(void)sig;
	printf("not ok - a read blocked (a FIFO was opened)\n");
	fflush(stdout);
	_exit(1);
}

/*
 * Malformed ELF files as ffmpeg: cut short at every length, offsets and
 * counts pointing past the end (the file is one page long, so a read
 * beyond it faults), strings without their NUL; FIFOs, directories, empty
 * files and scripts where files are expected; long RUNPATHs.
 */
static void
test_video_robust(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;
	struct gpu_snapshot s;
	char dir[PATH_MAX], path[PATH_MAX], lib[PATH_MAX];
	static unsigned char elf[4096], bad[4096];
	Elf64_Ehdr *eh = (Elf64_Ehdr *)bad;
	Elf64_Phdr *ph = (Elf64_Phdr *)(bad + 64);
	size_t n, survived = 0, cases = 0;
	static char longpath[1400];

	env_clear();
	copy_fixture("doctor/render/hybrid", dir, sizeof(dir));
	gpu_snapshot_init(&s);
	add_dev(&s, VENDOR_NVIDIA, "NVIDIA L40S", true, true);
	env_put("PATH", "/opt/ff/bin");
	join(lib, sizeof(lib), dir, "opt/ff/lib");
	make_dirs(lib);
	write_at(lib, "libavcodec.so.61", nv_names);

	n = tiny_elf(elf, sizeof(elf), "libavcodec.so.61", "$ORIGIN/../lib");
	ffmpeg_is(dir, elf, n);
	video(dir, &s, &r);
	ok(find_id(&r, "setup.video.ffmpeg_gpu") != NULL,
	   "robust: the intact ELF finds libavcodec");

	/* cut short at every length */
	for (size_t len = 0; len < n; len++) {
		ffmpeg_is(dir, elf, len);
		video(dir, &s, &r);
		cases++;
		survived += r.nr > 0;
	}
	ok(survived == cases, "robust: ELF cut at each of %zu lengths: no fault, a finding", n);

	/* corrupted in place, padded to a page with non-NUL bytes at the end */
#define CORRUPT(what, stmt)                                 \
	do {                                                \
		memcpy(bad, elf, sizeof(bad));              \
		memset(bad + 4000, 'A', 96);                \
		stmt;                                       \
		ffmpeg_is(dir, bad, sizeof(bad));           \
		video(dir, &s, &r);                         \
		ok(r.nr > 0, "robust: %s: no fault", what); \
	} while (0)
	CORRUPT("e_phoff at the last bytes", eh->e_phoff = 4096 - 8);
	CORRUPT("e_phoff wrapping", eh->e_phoff = UINT64_MAX - 16);
	CORRUPT("e_phnum 65535", eh->e_phnum = 0xffff);
	CORRUPT("e_phentsize 0", eh->e_phentsize = 0);
	CORRUPT("EI_CLASS 7", bad[EI_CLASS] = 7);
	CORRUPT("32-bit class on a 64-bit header", bad[EI_CLASS] = ELFCLASS32);
	CORRUPT("PT_DYNAMIC past the end", ph[1].p_offset = 4090);
	CORRUPT("PT_DYNAMIC huge", (ph[1].p_offset = 4000, ph[1].p_filesz = UINT64_MAX / 2));
	CORRUPT("PT_DYNAMIC wrapping", (ph[1].p_offset = UINT64_MAX - 8, ph[1].p_filesz = 64));
	CORRUPT("PT_LOAD past the end", (ph[0].p_offset = UINT64_MAX - 4, ph[0].p_filesz = 4096));
	/* DT_STRTAB at the last 96 bytes, which have no NUL: no string there */
	memcpy(bad, elf, sizeof(bad));
	memset(bad + 4000, 'A', 96);
	ph[0].p_filesz = 4096;
	for (Elf64_Dyn *dy = (Elf64_Dyn *)(bad + ph[1].p_offset); dy->d_tag != DT_NULL; dy++)
		if (dy->d_tag == DT_STRTAB)
			dy->d_un.d_ptr = 0x400000 + 4000;
		else if (dy->d_tag == DT_STRSZ)
			dy->d_un.d_val = 96;
		else if (dy->d_tag == DT_NEEDED)
			dy->d_un.d_val = 0;
		else if (dy->d_tag == DT_RUNPATH)
			dy->d_un.d_val = UINT64_MAX - 1;
	ffmpeg_is(dir, bad, sizeof(bad));
	video(dir, &s, &r);
	f = find_id(&r, "setup.video.ffmpeg_no_gpu");
	ok(f && evidence_has(f, "(static)"),
	   "robust: DT_NEEDED strings without a NUL before the end: none read, searched itself");
#undef CORRUPT

	/* a RUNPATH longer than 1 KiB, libavcodec's directory last */
	memset(longpath, 0, sizeof(longpath));
	while (strlen(longpath) < 1200) {
		size_t l = strlen(longpath);

		snprintf(longpath + l, sizeof(longpath) - l, "/nonexistent/lib/dir:");
	}
	snprintf(longpath + strlen(longpath), sizeof(longpath) - strlen(longpath), "/srv/lib");
	rm_tree(lib);
	join(path, sizeof(path), dir, "srv/lib");
	make_dirs(path);
	write_at(path, "libavcodec.so.61", nv_names);
	n = tiny_elf(elf, sizeof(elf), "libavcodec.so.61", longpath);
	ffmpeg_is(dir, elf, n);
	video(dir, &s, &r);
	f = find_id(&r, "setup.video.ffmpeg_gpu");
	ok(f && evidence_has(f, "/srv/lib/libavcodec.so.61"),
	   "robust: a RUNPATH of %zu bytes is followed to its last directory", strlen(longpath));

	/* "$ORIGINAL/lib" is a directory of that name, not $ORIGIN + "AL/lib" */
	join(path, sizeof(path), dir, "opt/ff/binAL/lib");
	make_dirs(path);
	write_at(path, "libavcodec.so.61", nv_names);
	n = tiny_elf(elf, sizeof(elf), "libavcodec.so.61", "$ORIGINAL/lib");
	ffmpeg_is(dir, elf, n);
	video(dir, &s, &r);
	f = find_id(&r, "setup.video.no_ffmpeg");
	ok(f && strstr(f->title, "needs libavcodec.so.61") && !evidence_has(f, "binAL"),
	   "robust: $ORIGINAL is not $ORIGIN");

	/* a FIFO in ld.so.conf.d (and as ld.so.conf): never opened */
	n = tiny_elf(elf, sizeof(elf), "libavcodec.so.61", "/nowhere");
	ffmpeg_is(dir, elf, n);
	join(path, sizeof(path), dir, "etc/ld.so.conf.d");
	make_dirs(path);
	join(path, sizeof(path), dir, "etc/ld.so.conf.d/fifo.conf");
	unlink(path);
	if (mkfifo(path, 0644))
		die_errno("mkfifo", path);
	join(path, sizeof(path), dir, "etc/ld.so.conf.d/ok.conf");
	write_str(path, "  /srv/lib   # the media libraries\n/cut/at/the/en");
	join(path, sizeof(path), dir, "etc/ld.so.conf");
	unlink(path);
	if (mkfifo(path, 0644))
		die_errno("mkfifo", path);
	signal(SIGALRM, alarm_fail);
	alarm(20);
	video(dir, &s, &r);
	alarm(0);
	f = find_id(&r, "setup.video.ffmpeg_gpu");
	ok(f && evidence_has(f, "/srv/lib/libavcodec.so.61"),
	   "robust: ld.so.conf FIFOs skipped; an indented line with a comment read");
	unlink(path);
	join(path, sizeof(path), dir, "etc/ld.so.conf.d/fifo.conf");
	unlink(path);

	/* ffmpeg on PATH: a FIFO and a directory first, then nothing usable */
	env_put("PATH", "/opt/fifo:/opt/dir:/opt/ff/bin");
	join(path, sizeof(path), dir, "opt/fifo");
	make_dirs(path);
	join(path, sizeof(path), dir, "opt/fifo/ffmpeg");
	if (mkfifo(path, 0755))
		die_errno("mkfifo", path);
	join(path, sizeof(path), dir, "opt/dir/ffmpeg");
	make_dirs(path);
	ffmpeg_is(dir, "", 0);
	alarm(20);
	video(dir, &s, &r);
	alarm(0);
	f = find_id(&r, "setup.video.no_ffmpeg");
	ok(f && strstr(f->title, "/opt/ff/bin/ffmpeg") && strstr(f->title, "empty") &&
	           !find_id(&r, "setup.video.ffmpeg_no_gpu"),
	   "robust: FIFO and directory named ffmpeg skipped; an empty one is no 'built without'");
	ffmpeg_is(dir, "#!/bin/sh\nexec /opt/real/ffmpeg \"$@\"\n", 33);
	video(dir, &s, &r);
	f = find_id(&r, "setup.video.no_ffmpeg");
	ok(f && strstr(f->title, "script") && !find_id(&r, "setup.video.ffmpeg_no_gpu"),
	   "robust: a wrapper script is not taken for an ffmpeg without NVENC");

	/* a link loop named ffmpeg */
	join(path, sizeof(path), dir, "opt/ff/bin/ffmpeg");
	unlink(path);
	join(path, sizeof(path), dir, "opt/ff/bin");
	link_at(path, "ffmpeg", "ffmpeg2");
	link_at(path, "ffmpeg2", "ffmpeg");
	video(dir, &s, &r);
	ok(find_id(&r, "setup.video.no_ffmpeg") != NULL, "robust: a link loop is no ffmpeg");

	gpu_snapshot_release(&s);
	dr_report_release(&r);
	env_clear();
}

static void
test_video(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;
	struct gpu_snapshot s;
	char dir[PATH_MAX], path[PATH_MAX], bin[PATH_MAX], lib[PATH_MAX];
	unsigned char elf[1024];
	size_t n;

	env_clear();
	copy_fixture("doctor/render/hybrid", dir, sizeof(dir));
	join(bin, sizeof(bin), dir, "usr/bin");
	join(lib, sizeof(lib), dir, "usr/lib");
	make_dirs(bin);
	make_dirs(lib);
	env_put("PATH", "/usr/local/bin:/usr/bin");

	/* no GPU at all: nothing */
	gpu_snapshot_init(&s);
	video(dir, &s, &r);
	ok(r.nr == 0, "video: no GPU: nothing");

	/* a board whose driver reports no video engine; two alike make one finding */
	add_dev(&s, VENDOR_NVIDIA, "NVIDIA CMP 170HX", false, false);
	add_dev(&s, VENDOR_NVIDIA, "NVIDIA CMP 170HX", false, false);
	video(dir, &s, &r);
	f = find_id(&r, "setup.video.no_engines");
	ok(f && f->severity == DR_INFO && count_id(&r, "setup.video.no_engines") == 1 &&
	           strstr(f->title, "GPUs 0, 1 (NVIDIA CMP 170HX)") &&
	           evidence_has(f, "encoder utilisation not supported"),
	   "video: no encoder or decoder reported: one note for both GPUs");
	gpu_snapshot_release(&s);
	gpu_snapshot_init(&s);

	/* an L40S (NVENC, NVDEC) and an H100 (NVDEC only) */
	add_dev(&s, VENDOR_NVIDIA, "NVIDIA L40S", true, true);
	add_dev(&s, VENDOR_NVIDIA, "NVIDIA H100 80GB HBM3", false, true);
	video(dir, &s, &r);
	f = find_id(&r, "setup.video.engines");
	ok(f && f->severity == DR_OK && strstr(f->title, "GPU 0 (NVIDIA L40S)") &&
	           strstr(f->title, "NVENC") && strstr(f->title, "NVDEC") &&
	           evidence_has(f, "NVML: encoder utilisation readable"),
	   "video: L40S: NVENC and NVDEC, from NVML");
	f = find_id(&r, "setup.video.no_nvenc");
	ok(f && f->severity == DR_INFO && strstr(f->title, "GPU 1 (NVIDIA H100 80GB HBM3)") &&
	           strstr(f->title, "NVDEC decoders but no NVENC"),
	   "video: H100: NVDEC but no NVENC");
	f = find_id(&r, "setup.video.no_ffmpeg");
	ok(f && f->severity == DR_INFO && count_id(&r, "setup.video.no_ffmpeg") == 1 &&
	           !find_id(&r, "setup.video.ffmpeg_gpu") &&
	           !find_id(&r, "setup.video.ffmpeg_no_gpu"),
	   "video: no ffmpeg on PATH: one note, nothing else about ffmpeg");
	f = find_id(&r, "setup.video.nvidia_libs_missing");
	ok(f && f->severity == DR_INFO && strstr(f->title, "libnvidia-encode.so.1") &&
	           strstr(f->title, "libnvcuvid.so.1"),
	   "video: NVIDIA's video libraries missing, no ffmpeg to use them: a note");
	env_put("NVIDIA_DRIVER_CAPABILITIES", "compute,utility");
	video(dir, &s, &r);
	ok(evidence_has(find_id(&r, "setup.video.nvidia_libs_missing"), "no 'video'"),
	   "video: NVIDIA_DRIVER_CAPABILITIES without video: said so");
	env_put("NVIDIA_DRIVER_CAPABILITIES", NULL);
	write_at(lib, "libnvidia-encode.so.1", "x");
	write_at(lib, "libnvcuvid.so.1.550.54", "x");
	link_at(lib, "libnvcuvid.so.1", "libnvcuvid.so.1.550.54");
	video(dir, &s, &r);
	ok(find_id(&r, "setup.video.nvidia_libs") &&
	           !find_id(&r, "setup.video.nvidia_libs_missing"),
	   "video: libnvidia-encode.so.1 and libnvcuvid.so.1 (a link) found: ok");

	/* a static ffmpeg without NVENC (the names of a VA-API-only build) */
	write_exe(bin, "ffmpeg", "h264_vaapi\nhevc_vaapi\nh264_nvenc_hidden\n", 40);
	video(dir, &s, &r);
	f = find_id(&r, "setup.video.ffmpeg_no_gpu");
	ok(f && f->severity == DR_WARNING && strstr(f->title, "/usr/bin/ffmpeg") &&
	           strstr(f->title, "NVENC and NVDEC") && evidence_has(f, "(static)") &&
	           evidence_has(f, "has h264_vaapi, hevc_vaapi"),
	   "video: static ffmpeg without NVENC: warning (h264_nvenc_hidden is no name)");
	ok(f && f->action && strstr(f->action, "BtbN") && strstr(f->action, "johnvansickle") &&
	           strstr(f->action, "gpuscope top"),
	   "video: action: where to get one, how to see the engines");
	ok(!find_id(&r, "setup.video.no_ffmpeg"), "video: ffmpeg found: no note");

	/* a static ffmpeg with NVENC */
	write_exe(bin, "ffmpeg", nv_names, strlen(nv_names));
	video(dir, &s, &r);
	f = find_id(&r, "setup.video.ffmpeg_gpu");
	ok(f && f->severity == DR_OK && strstr(f->title, "NVENC and NVDEC") &&
	           evidence_has(f, "h264_nvenc, hevc_nvenc, av1_nvenc") &&
	           evidence_has(f, "h264_nvdec, h264_cuvid") && f->action &&
	           strstr(f->action, "-hwaccel cuda -hwaccel_output_format cuda") &&
	           strstr(f->action, "utilization.encoder,utilization.decoder"),
	   "video: static ffmpeg with NVENC: ok, the command line");
	ok(!find_id(&r, "setup.video.ffmpeg_no_gpu"), "video: ... and no warning");
	join(path, sizeof(path), lib, "libnvidia-encode.so.1");
	unlink(path);
	video(dir, &s, &r);
	f = find_id(&r, "setup.video.nvidia_libs_missing");
	ok(f && f->severity == DR_WARNING && strstr(f->title, "libnvidia-encode.so.1"),
	   "video: that ffmpeg without libnvidia-encode.so.1: a warning");
	write_at(lib, "libnvidia-encode.so.1", "x");

	/* not executable: not on PATH */
	join(path, sizeof(path), bin, "ffmpeg");
	chmod(path, 0644);
	video(dir, &s, &r);
	ok(find_id(&r, "setup.video.no_ffmpeg") != NULL,
	   "video: a non-executable ffmpeg is skipped");
	unlink(path);

	/* a dynamic ffmpeg in /opt/ff/bin, libavcodec found through $ORIGIN/../lib */
	n = tiny_elf(elf, sizeof(elf), "libavcodec.so.61", "$ORIGIN/../lib");
	join(path, sizeof(path), dir, "opt/ff/bin");
	write_exe(path, "ffmpeg", elf, n);
	env_put("PATH", "/opt/ff/bin:/usr/bin");
	video(dir, &s, &r);
	f = find_id(&r, "setup.video.no_ffmpeg");
	ok(f && strstr(f->title, "needs libavcodec.so.61") && evidence_has(f, "/opt/ff/lib"),
	   "video: dynamic ffmpeg, libavcodec missing: note with the directories searched");
	join(path, sizeof(path), dir, "opt/ff/lib");
	make_dirs(path);
	write_at(path, "libavcodec.so.61.19.100", nv_names);
	link_at(path, "libavcodec.so.61", "libavcodec.so.61.19.100");
	video(dir, &s, &r);
	f = find_id(&r, "setup.video.ffmpeg_gpu");
	ok(f &&
	           evidence_has(f, "/opt/ff/bin/ffmpeg: dynamically linked, DT_NEEDED "
	                           "libavcodec.so.61") &&
	           evidence_has(f, "/opt/ff/lib/libavcodec.so.61.19.100: has h264_nvenc"),
	   "video: dynamic ffmpeg: DT_NEEDED and DT_RUNPATH ($ORIGIN) followed to libavcodec");

	/* LD_LIBRARY_PATH */
	join(path, sizeof(path), dir, "opt/ff/lib");
	rm_tree(path);
	join(path, sizeof(path), dir, "srv/av");
	make_dirs(path);
	write_at(path, "libavcodec.so.61", "h264_vaapi\n");
	env_put("LD_LIBRARY_PATH", "/srv/av");
	video(dir, &s, &r);
	f = find_id(&r, "setup.video.ffmpeg_no_gpu");
	ok(f && evidence_has(f, "/srv/av/libavcodec.so.61"),
	   "video: libavcodec found through LD_LIBRARY_PATH");
	env_put("LD_LIBRARY_PATH", NULL);

	/* a real ELF program without libavcodec: searched itself, finds nothing */
	{
		struct stat st;

		if (stat("/usr/bin/ls", &st) == 0) {
			join(path, sizeof(path), dir, "opt/ff/bin/ffmpeg");
			copy_file("/usr/bin/ls", path);
			chmod(path, 0755);
			video(dir, &s, &r);
			f = find_id(&r, "setup.video.ffmpeg_no_gpu");
			ok(f && evidence_has(f, "(static)"),
			   "video: /usr/bin/ls as ffmpeg: parsed, no libavcodec, no names");
		} else {
			skip_missing("video: no /usr/bin/ls to use as an ffmpeg");
		}
	}
	gpu_snapshot_release(&s);

	/* AMD and Intel: VA-API, QSV, VA drivers */
	gpu_snapshot_init(&s);
	{
		struct gpu_device *d =
		        add_dev(&s, VENDOR_AMD, "AMD Radeon RX 7800 XT", false, false);

		snprintf(d->card, sizeof(d->card), "card1");
		snprintf(d->engine[0].name, sizeof(d->engine[0].name), "gfx");
		snprintf(d->engine[1].name, sizeof(d->engine[1].name), "dec");
		snprintf(d->engine[2].name, sizeof(d->engine[2].name), "enc");
		d->nr_engine = 3;
		d = add_dev(&s, VENDOR_INTEL, "Intel Arc A380", false, false);
		snprintf(d->card, sizeof(d->card), "card0");
		snprintf(d->engine[0].name, sizeof(d->engine[0].name), "render");
		snprintf(d->engine[1].name, sizeof(d->engine[1].name), "video");
		d->nr_engine = 2;
	}
	join(path, sizeof(path), dir, "opt/ff/bin");
	write_exe(path, "ffmpeg", "h264_vaapi\nhevc_vaapi\n", 22);
	video(dir, &s, &r);
	ok(count_id(&r, "setup.video.engines") == 2 &&
	           evidence_has(find_id(&r, "setup.video.engines"), "DRM fdinfo engines of card1"),
	   "video: AMD (dec, enc) and Intel (video) engines from fdinfo names");
	ok(count_id(&r, "setup.video.ffmpeg_gpu") == 2 && !find_id(&r, "setup.video.ffmpeg_no_gpu"),
	   "video: ffmpeg with VA-API: ok for AMD and for Intel");
	f = find_id(&r, "setup.video.ffmpeg_gpu");
	ok(f && strstr(f->action, "h264_vaapi"), "video: the VA-API command line");
	ok(count_id(&r, "setup.video.va_driver_missing") == 2 &&
	           strstr(find_id(&r, "setup.video.va_driver_missing")->action, "mesa-va-drivers"),
	   "video: no VA drivers: a warning each");
	ok(!find_id(&r, "setup.video.nvidia_libs") &&
	           !find_id(&r, "setup.video.nvidia_libs_missing"),
	   "video: no NVIDIA GPU: its libraries are not looked for");
	join(path, sizeof(path), dir, "usr/lib/dri");
	make_dirs(path);
	write_at(path, "radeonsi_drv_video.so", "x");
	write_at(path, "iHD_drv_video.so", "x");
	write_exe(bin, "ffmpeg", "h264_qsv\n", 9);
	env_put("PATH", "/usr/bin");
	video(dir, &s, &r);
	ok(count_id(&r, "setup.video.va_driver") == 2 &&
	           !find_id(&r, "setup.video.va_driver_missing"),
	   "video: radeonsi and iHD installed: ok");
	f = find_id(&r, "setup.video.ffmpeg_no_gpu");
	ok(f && strstr(f->title, "AMD") && count_id(&r, "setup.video.ffmpeg_no_gpu") == 1 &&
	           count_id(&r, "setup.video.ffmpeg_gpu") == 1,
	   "video: QSV-only ffmpeg: ok for Intel, warning for AMD");
	gpu_snapshot_release(&s);

	/* no snapshot: the vendors come from the PCI bus (the laptop's Intel and NVIDIA) */
	video(dir, NULL, &r);
	ok(find_id(&r, "setup.video.ffmpeg_no_gpu") && find_id(&r, "setup.video.nvidia_libs") &&
	           find_id(&r, "setup.video.va_driver") && !find_id(&r, "setup.video.engines"),
	   "video: no snapshot: vendors from PCI, no engine lines");
	rm_tree(dir);
	dr_report_release(&r);
}

static void
test_catalog(void)
{
	bool sorted = true, prefixed = true;
	size_t n = 0;

	for (const struct dr_explain *e = dr_catalog_render; e->id; e++, n++) {
		if (e[1].id && strcmp(e->id, e[1].id) >= 0)
			sorted = false;
		if (strncmp(e->id, "setup.render.", 13) && strncmp(e->id, "setup.video.", 12))
			prefixed = false;
		if (!e->title || !e->text || !*e->text)
			prefixed = false;
	}
	ok(n >= 19 && sorted, "catalog: %zu entries in id order", n);
	ok(prefixed, "catalog: setup.render.* and setup.video.*, each with a title and text");
	ok(all_known, "catalog: every id emitted has an explanation");
}

int
main(void)
{
	find_fixtures();
	make_tmp_dir("t_doctor_render");
	join(root, sizeof(root), tmp_dir, "doctor/render");
	make_dirs(root);
	test_vm();
	test_bare_metal();
	test_video();
	test_video_robust();
	test_catalog();
	rm_tree(tmp_dir);
	return done_testing();
}
