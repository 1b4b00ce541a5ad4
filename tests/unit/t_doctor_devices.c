/*
 * Tests of setup.dev.* and setup.container.*: trees made at run time in a
 * temporary directory stand for /, /sys and /proc, with regular files of
 * chosen modes for device nodes; each finding triggered by one input and
 * cleared by another, and every id emitted in the catalog.
 */
#include "doctor/doctor.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "backend/nvml_probe.h"
#include "core/config.h"
#include "doctor_test.h"
#include "harness.h"
#include "tree.h"

#define ALICE 4242u
#define USERS 100u

static unsigned node_gid; /* the group the test's nodes belong to (not 0) */
static char root[PATH_MAX], sys_root[PATH_MAX], proc_root[PATH_MAX];
static const char *seen[64]; /* ids emitted by any test */
static size_t nr_seen;
static bool all_explained = true;

/* --- the tree ---------------------------------------------------------------------- */

static void
fresh(const char *name)
{
	tmp_path(root, sizeof(root), name);
	make_dirs(root);
	join(sys_root, sizeof(sys_root), root, "sys");
	join(proc_root, sizeof(proc_root), root, "proc");
	make_dirs(sys_root);
	make_dirs(proc_root);
}

/* root/rel (an absolute-looking path such as "/dev/nvidia0") */
static void
at(char *buf, size_t size, const char *base, const char *rel)
{
	fmt(buf, size, "%s%s", base, rel);
}

static void
put(const char *base, const char *rel, const char *text)
{
	char path[PATH_MAX], dir[PATH_MAX];

	at(path, sizeof(path), base, rel);
	fmt(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	make_dirs(dir);
	write_str(path, text);
}

static void
put_fixture(const char *base, const char *rel, const char *fixture)
{
	char src[PATH_MAX], path[PATH_MAX];

	fmt(src, sizeof(src), "%s/doctor/devices/%s", fixtures, fixture);
	put(base, rel, "");
	at(path, sizeof(path), base, rel);
	copy_file(src, path);
}

/* A device node: a regular file with this mode, in node_gid. */
static void
node(const char *rel, mode_t mode)
{
	char path[PATH_MAX];

	put(root, rel, "");
	at(path, sizeof(path), root, rel);
	if (geteuid() == 0 && chown(path, (uid_t)-1, node_gid))
		die_errno("cannot chown", path);
	if (chmod(path, mode))
		die_errno("cannot chmod", path);
}

static void
unnode(const char *rel)
{
	char path[PATH_MAX];

	at(path, sizeof(path), root, rel);
	unlink(path);
}

static void
sys_dirs(const char *rel)
{
	char path[PATH_MAX];

	at(path, sizeof(path), sys_root, rel);
	make_dirs(path);
}

/* A display-class PCI device bound to driver ("" for none). */
static void
pci(const char *addr, unsigned vendor, const char *driver)
{
	char dir[PATH_MAX], text[32], target[128];

	fmt(dir, sizeof(dir), "%s/bus/pci/devices/%s", sys_root, addr);
	make_dirs(dir);
	write_at(dir, "class", "0x030000\n");
	fmt(text, sizeof(text), "0x%04x\n", vendor);
	write_at(dir, "vendor", text);
	write_at(dir, "device", "0x1234\n");
	if (*driver) {
		fmt(target, sizeof(target), "../../../../bus/pci/drivers/%s", driver);
		link_at(dir, "driver", target);
	}
}

/* sysfs's render node name for the PCI device addr */
static void
render(const char *name, const char *addr)
{
	char dir[PATH_MAX], target[128];

	fmt(dir, sizeof(dir), "%s/class/drm/%s", sys_root, name);
	make_dirs(dir);
	fmt(target, sizeof(target), "../../../bus/pci/devices/%s", addr);
	link_at(dir, "device", target);
}

static void
groups_file(const char *members)
{
	char text[256];

	fmt(text, sizeof(text), "root:x:0:\nusers:x:%u:\nrender:x:%u:%s\n", USERS, node_gid,
	    members);
	put(root, "/etc/group", text);
}

/* --- running the check -------------------------------------------------------------- */

struct who {
	unsigned uid;
	bool in_group; /* node_gid among the groups */
};

static const struct who alice = { ALICE, false }, alice_render = { ALICE, true },
                        superuser = { 0, false };
static struct nvml_probe nvml;
static bool use_nvml;
static const unsigned *many_groups; /* instead of the who's groups, when set */
static size_t nr_many_groups;

static void
run(const struct who *w, struct dr_report *r)
{
	struct gs_config cfg;
	struct dr_ctx ctx = { 0 };
	unsigned groups[2] = { USERS, node_gid };

	gs_config_init(&cfg);
	cfg.root = root;
	cfg.sysfs_root = sys_root;
	cfg.proc_root = proc_root;
	cfg.passwd_file = NULL;
	ctx.cfg = &cfg;
	ctx.nvml = use_nvml ? &nvml : NULL;
	ctx.uid = w->uid;
	ctx.gid = USERS;
	ctx.groups = groups;
	ctx.nr_groups = w->in_group ? 2 : 1;
	if (many_groups) {
		ctx.groups = many_groups;
		ctx.nr_groups = nr_many_groups;
	}
	dr_check_devices(&ctx, r);
	for (size_t i = 0; i < r->nr; i++) {
		bool known = false;

		if (!dr_explain_find(r->f[i].id)) {
			all_explained = false;
			diag("no explanation for '%s'", r->f[i].id);
		}
		for (size_t j = 0; j < nr_seen; j++)
			known |= !strcmp(seen[j], r->f[i].id);
		if (!known && nr_seen < 64)
			seen[nr_seen++] = r->f[i].id;
	}
}

static bool
action_has(const struct dr_finding *f, const char *s)
{
	return f && f->action && strstr(f->action, s);
}

/* A fresh report of the check run as w; its finding id, or NULL. */
static const struct dr_finding *
expect(const struct who *w, struct dr_report *r, const char *id)
{
	dr_report_release(r);
	run(w, r);
	return find_id(r, id);
}

/* --- NVIDIA ------------------------------------------------------------------------- */

static void
test_nvidia(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;

	fresh("nvidia");
	pci("0000:3b:00.0", 0x10de, "nvidia");
	put_fixture(proc_root, "/driver/nvidia/gpus/0000:3b:00.0/information",
	            "nvidia-information-minor2");
	put_fixture(proc_root, "/modules", "modules-no-uvm");
	put(root, "/usr/bin/nvidia-modprobe", "");
	node("/dev/nvidiactl", 0666);
	node("/dev/nvidia2", 0666);
	node("/dev/nvidia-uvm", 0666);

	f = expect(&alice, &r, "setup.dev.ok");
	ok(f && f->severity == DR_OK && r.nr == 1 && strstr(f->title, "NVIDIA") &&
	           strstr(f->title, "/dev/nvidia2") && strstr(f->title, "/dev/nvidiactl") &&
	           strstr(f->title, "/dev/nvidia-uvm"),
	   "nvidia: nodes 0666: one ok line, minor 2 from /proc/driver/nvidia/gpus");

	unnode("/dev/nvidia-uvm");
	f = expect(&alice, &r, "setup.dev.nvidia_uvm");
	ok(f && f->severity == DR_WARNING && !find_id(&r, "setup.dev.ok") &&
	           evidence_has(f, "nvidia_uvm is not loaded") &&
	           action_has(f, "modprobe nvidia-uvm"),
	   "nvidia: no /dev/nvidia-uvm on the host: warning, modprobe nvidia-uvm");
	node("/dev/nvidia-uvm", 0666);
	ok(!expect(&alice, &r, "setup.dev.nvidia_uvm"), "nvidia: /dev/nvidia-uvm back: cleared");

	unnode("/dev/nvidia2");
	f = expect(&alice, &r, "setup.dev.missing");
	ok(f && f->severity == DR_ERROR && strstr(f->title, "/dev/nvidia2") &&
	           action_has(f, "nvidia-modprobe"),
	   "nvidia: /dev/nvidia2 missing while nvidia holds the GPU: error, nvidia-modprobe");
	node("/dev/nvidia2", 0666);
	ok(!expect(&alice, &r, "setup.dev.missing"), "nvidia: /dev/nvidia2 back: cleared");

	/* without /proc/driver/nvidia/gpus the minor follows the bus order */
	put(proc_root, "/driver/nvidia/gpus/0000:3b:00.0/information", "garbage\n");
	f = expect(&alice, &r, "setup.dev.missing");
	ok(f && strstr(f->title, "/dev/nvidia0") && evidence_has(f, "assumed from bus order"),
	   "nvidia: minor unknown: /dev/nvidia0 assumed, and said so");
	/* a minor that cannot be a GPU's: not believed */
	put(proc_root, "/driver/nvidia/gpus/0000:3b:00.0/information", "Device Minor: \t -1\n");
	f = expect(&alice, &r, "setup.dev.missing");
	ok(f && strstr(f->title, "/dev/nvidia0") && evidence_has(f, "assumed from bus order") &&
	           !strstr(f->title, "/dev/nvidia4294967295"),
	   "nvidia: 'Device Minor: -1': bus order, not /dev/nvidia4294967295");
	put(proc_root, "/driver/nvidia/gpus/0000:3b:00.0/information",
	    "Model: X\nDevice Minor: 4294967298\n");
	f = expect(&alice, &r, "setup.dev.missing");
	ok(f && strstr(f->title, "/dev/nvidia0") && !strstr(f->title, "/dev/nvidia2,") &&
	           evidence_has(f, "assumed from bus order"),
	   "nvidia: a minor past 32 bits is not wrapped to 2");
	put(proc_root, "/driver/nvidia/gpus/0000:3b:00.0/information", "Device Minor: 255\n");
	f = expect(&alice, &r, "setup.dev.missing");
	ok(f && strstr(f->title, "/dev/nvidia0") && evidence_has(f, "assumed from bus order"),
	   "nvidia: minor 255 is nvidiactl's, not a GPU's");
	put(proc_root, "/driver/nvidia/gpus/0000:3b:00.0/information", "garbage\n");
	node("/dev/nvidia0", 0600);
	f = expect(&alice, &r, "setup.dev.no_access");
	ok(f && f->severity == DR_ERROR && strstr(f->title, "/dev/nvidia0") &&
	           evidence_has(f, "mode -rw-------") && action_has(f, "NVreg_DeviceFileMode"),
	   "nvidia: /dev/nvidia0 0600: no access, no group helps: NVreg_DeviceFileMode");
	ok(expect(&superuser, &r, "setup.dev.ok") && !find_id(&r, "setup.dev.no_access"),
	   "nvidia: root opens a 0600 node");
	dr_report_release(&r);
}

/* --- AMD, Intel: render nodes, /dev/kfd, groups ---------------------------------------- */

static void
test_drm(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;
	char path[PATH_MAX];

	fresh("amd");
	pci("0000:03:00.0", 0x1002, "amdgpu");
	render("renderD128", "0000:03:00.0");
	sys_dirs("/class/kfd/kfd");
	put_fixture(root, "/etc/passwd", "passwd");
	groups_file("");
	node("/dev/dri/renderD128", 0660);
	node("/dev/kfd", 0660);

	f = expect(&alice, &r, "setup.dev.no_access");
	ok(f && f->severity == DR_ERROR && strstr(f->title, "/dev/kfd") &&
	           strstr(f->title, "/dev/dri/renderD128") && evidence_has(f, "group render") &&
	           evidence_has(f, "mode -rw-rw----") &&
	           action_has(f, "sudo usermod -aG render $USER") && action_has(f, "newgrp render"),
	   "amd: nodes 0660 of render, alice not in it: no access, join render");
	ok(!find_id(&r, "setup.dev.relogin") && !find_id(&r, "setup.dev.ok"),
	   "amd: not a relogin case, no ok line");
	f = expect(&alice_render, &r, "setup.dev.ok");
	ok(f && r.nr == 1 && strstr(f->title, "AMD"), "amd: alice in render: one ok line");

	groups_file("alice");
	f = expect(&alice, &r, "setup.dev.relogin");
	ok(f && f->severity == DR_ERROR && !find_id(&r, "setup.dev.no_access") &&
	           evidence_has(f, "alice is a member of render") && action_has(f, "Log out"),
	   "amd: /etc/group lists alice, the session lacks it: log in again");
	ok(!expect(&alice_render, &r, "setup.dev.relogin"),
	   "amd: a session with the group: no relogin");
	groups_file("");

	/* /dev/kfd */
	unnode("/dev/kfd");
	f = expect(&alice_render, &r, "setup.dev.missing");
	ok(f && strstr(f->title, "/dev/kfd") && !find_id(&r, "setup.dev.no_kfd"),
	   "amd: sysfs has class/kfd/kfd, /dev/kfd missing: error");
	at(path, sizeof(path), sys_root, "/class/kfd");
	rm_tree(path);
	f = expect(&alice_render, &r, "setup.dev.no_kfd");
	ok(f && f->severity == DR_INFO && !find_id(&r, "setup.dev.missing") &&
	           find_id(&r, "setup.dev.ok"),
	   "amd: no KFD in the kernel: a note, the render node still ok");
	node("/dev/kfd", 0660);
	ok(!expect(&alice_render, &r, "setup.dev.no_kfd"), "amd: /dev/kfd present: no note");

	/* the render node */
	unnode("/dev/dri/renderD128");
	f = expect(&alice_render, &r, "setup.dev.missing");
	ok(f && strstr(f->title, "/dev/dri/renderD128") && action_has(f, "udevadm trigger"),
	   "amd: renderD128 in sysfs but not in /dev: error");
	node("/dev/dri/renderD128", 0660);

	/* the group has no name (a host gid in a container, or a removed group) */
	put(root, "/etc/group", "root:x:0:\n");
	f = expect(&alice, &r, "setup.dev.no_access");
	ok(f && evidence_has(f, "(no name)") && action_has(f, "has no name in /etc/group"),
	   "amd: a group without a name: said so");
	groups_file("");

	/* Intel: i915 bound, no render node in sysfs at all */
	fresh("intel");
	pci("0000:00:02.0", 0x8086, "i915");
	f = expect(&alice, &r, "setup.dev.missing");
	ok(f && evidence_has(f, "no renderD* in") && action_has(f, "dmesg"),
	   "intel: i915 made no render node: the driver is at fault");
	render("renderD128", "0000:00:02.0");
	node("/dev/dri/renderD128", 0666);
	f = expect(&alice, &r, "setup.dev.ok");
	ok(f && strstr(f->title, "Intel") && !find_id(&r, "setup.dev.missing") &&
	           !find_id(&r, "setup.dev.no_kfd"),
	   "intel: render node present: ok, no /dev/kfd asked of Intel");

	/* a display-only chip (a BMC's ast) needs no render node */
	fresh("ast");
	pci("0000:02:00.0", 0x1a03, "ast");
	ok(!expect(&alice, &r, "setup.dev.missing") && r.nr == 0,
	   "ast: a display-only driver without a render node: nothing");
	dr_report_release(&r);
}

/* Malformed /etc/passwd and /etc/group lines; a session in thousands of groups. */
static void
test_accounts(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;
	static unsigned lots[5000];
	char text[512];

	fresh("accounts");
	pci("0000:03:00.0", 0x1002, "amdgpu");
	render("renderD128", "0000:03:00.0");
	sys_dirs("/class/kfd/kfd");
	node("/dev/dri/renderD128", 0660);
	node("/dev/kfd", 0660);
	/* "4242x" and "" are no uid: mallory and the comment are not alice */
	put(root, "/etc/passwd",
	    "# comment:x::\nmallory:x:4242x:100::/:/bin/sh\nalice:x:4242:100::/home/alice:/bin/sh\n");
	fmt(text, sizeof(text), "bogus:x:%ux:\nusers:x:%u:\nrender:x:%u:alice\n", node_gid, USERS,
	    node_gid);
	put(root, "/etc/group", text);
	f = expect(&alice, &r, "setup.dev.relogin");
	ok(f && evidence_has(f, "uid 4242 (alice)") &&
	           evidence_has(f, "alice is a member of render") && !evidence_has(f, "mallory") &&
	           !evidence_has(f, "bogus"),
	   "accounts: uid '4242x' and gid '%ux' are not numbers: alice and render are found",
	   node_gid);

	/* a session in 5000 groups: a bounded evidence line, the rest counted */
	for (size_t i = 0; i < sizeof(lots) / sizeof(lots[0]); i++)
		lots[i] = 10000u + (unsigned)i;
	many_groups = lots;
	nr_many_groups = sizeof(lots) / sizeof(lots[0]);
	f = expect(&alice, &r, "setup.dev.relogin");
	ok(f && evidence_has(f, "and 4968 more") && !evidence_has(f, "10032(") &&
	           evidence_has(f, "10031(?)"),
	   "accounts: 5000 groups: 32 named, 'and 4968 more'");
	many_groups = NULL;
	nr_many_groups = 0;

	/* no passwd entry for this uid at all, /etc/group unreadable (absent) */
	put(root, "/etc/passwd", "root:x:0:0::/root:/bin/sh\n");
	unnode("/etc/group");
	f = expect(&alice, &r, "setup.dev.no_access");
	ok(f && evidence_has(f, "uid 4242 (?)") && !find_id(&r, "setup.dev.relogin") &&
	           action_has(f, "(gid "),
	   "accounts: a uid without a passwd entry, no /etc/group: no access, gid by number");
	dr_report_release(&r);
}

/* A POSIX ACL (system.posix_acl_access) admitting alice, as systemd-logind's uaccess does. */
static void
test_acl(void)
{
	struct dr_report r = DR_REPORT_INIT;
	char path[PATH_MAX];
	unsigned char acl[4 + 5 * 8] = { 2, 0, 0, 0 };
	const unsigned short tags[5] = { 0x01, 0x02, 0x04, 0x10, 0x20 };
	const unsigned short perms[5] = { 6, 6, 6, 6, 0 };

	fresh("acl");
	pci("0000:03:00.0", 0x1002, "amdgpu");
	render("renderD128", "0000:03:00.0");
	put_fixture(root, "/etc/passwd", "passwd");
	groups_file("");
	node("/dev/dri/renderD128", 0660);
	for (int i = 0; i < 5; i++) {
		unsigned id = tags[i] == 0x02 ? ALICE : 0xffffffffu;
		unsigned char *e = acl + 4 + 8 * i;

		e[0] = (unsigned char)tags[i];
		e[1] = 0;
		e[2] = (unsigned char)perms[i];
		e[3] = 0;
		for (int b = 0; b < 4; b++)
			e[4 + b] = (unsigned char)(id >> (8 * b));
	}
	at(path, sizeof(path), root, "/dev/dri/renderD128");
	if (setxattr(path, "system.posix_acl_access", acl, sizeof(acl), 0)) {
		printf("ok %d # skip ACLs not supported here\n", ++harness_n);
		printf("ok %d # skip ACLs not supported here\n", ++harness_n);
		rm_tree(root);
		return;
	}
	ok(expect(&alice, &r, "setup.dev.ok") && !find_id(&r, "setup.dev.no_access"),
	   "acl: user:alice:rw- admits alice outside render");
	acl[4 + 8 * 3 + 2] = 4; /* mask r--: the named entry loses write */
	if (setxattr(path, "system.posix_acl_access", acl, sizeof(acl), 0))
		die_errno("cannot set the ACL of", path);
	ok(expect(&alice, &r, "setup.dev.no_access") != NULL, "acl: mask r-- shuts alice out");
	dr_report_release(&r);
}

/* --- containers --------------------------------------------------------------------- */

static void
test_container(void)
{
	struct dr_report r = DR_REPORT_INIT;
	const struct dr_finding *f;
	char path[PATH_MAX];

	/* a host with the NVIDIA GPU but no nodes: an error about nodes, not containers */
	fresh("ctr");
	pci("0000:3b:00.0", 0x10de, "nvidia");
	put_fixture(proc_root, "/self/cgroup", "cgroup-host");
	put_fixture(proc_root, "/1/cgroup", "cgroup-dockerd");
	put_fixture(proc_root, "/self/mountinfo", "mountinfo-host");
	ok(expect(&alice, &r, "setup.dev.missing") && !find_id(&r, "setup.container.no_gpu") &&
	           !find_id(&r, "setup.container.gpu"),
	   "host (dockerd's cgroup is a .service): nodes missing, no container finding");

	put(root, "/.dockerenv", "");
	f = expect(&alice, &r, "setup.container.no_gpu");
	ok(f && f->severity == DR_ERROR && r.nr == 1 && evidence_has(f, ".dockerenv exists") &&
	           evidence_has(f, "0000:3b:00.0") && action_has(f, "docker run --gpus all") &&
	           action_has(f, "nvidia-ctk runtime configure --runtime=docker") &&
	           action_has(f, "nvidia.com/gpu: 1") && !action_has(f, "/dev/kfd"),
	   "docker, NVIDIA GPU on the host's bus, no nodes: --gpus all, toolkit, Kubernetes");
	at(path, sizeof(path), root, "/.dockerenv");
	unlink(path);

	/* each way of telling a container, with no GPU anywhere */
	fresh("ctr2");
	put(root, "/run/.containerenv", "engine=\"podman-4.9.3\"\n");
	f = expect(&alice, &r, "setup.container.no_gpu");
	ok(f && strstr(f->title, "Podman") &&
	           action_has(f, "--device /dev/kfd --device /dev/dri "
	                         "--group-add video") &&
	           action_has(f, "--device /dev/dri IMAGE"),
	   "podman (.containerenv), no GPU seen: every vendor's way to pass one");
	fresh("ctr3");
	at(path, sizeof(path), proc_root, "/1");
	make_dirs(path);
	write_bytes_at(path, "environ", "PATH=/usr/bin\0container=lxc\0HOME=/\0", 35);
	f = expect(&alice, &r, "setup.container.no_gpu");
	ok(f && strstr(f->title, "(lxc)") && evidence_has(f, "container=lxc"),
	   "container= in /proc/1/environ");
	fresh("ctr4");
	put_fixture(proc_root, "/1/cgroup", "cgroup-kubepods");
	f = expect(&alice, &r, "setup.container.no_gpu");
	ok(f && strstr(f->title, "Kubernetes") && evidence_has(f, "kubepods"),
	   "kubepods in /proc/1/cgroup");
	put_fixture(proc_root, "/1/cgroup", "cgroup-host");
	put_fixture(proc_root, "/self/cgroup", "cgroup-docker");
	ok(expect(&alice, &r, "setup.container.no_gpu") != NULL,
	   "docker-*.scope in /proc/self/cgroup");
	put_fixture(proc_root, "/self/cgroup", "cgroup-host");
	put_fixture(proc_root, "/self/mountinfo", "mountinfo-overlay");
	ok(expect(&alice, &r, "setup.container.no_gpu") != NULL, "an overlay root in mountinfo");
	put_fixture(proc_root, "/self/mountinfo", "mountinfo-host");
	ok(!expect(&alice, &r, "setup.container.no_gpu") && r.nr == 0,
	   "no sign of a container, no GPU: nothing");

	/* a container given one of two NVIDIA GPUs */
	fresh("ctr5");
	put(root, "/.dockerenv", "");
	pci("0000:3b:00.0", 0x10de, "nvidia");
	pci("0000:86:00.0", 0x10de, "nvidia");
	node("/dev/nvidiactl", 0666);
	node("/dev/nvidia0", 0666);
	node("/dev/nvidia-uvm", 0666);
	f = expect(&alice, &r, "setup.container.gpu");
	ok(f && f->severity == DR_INFO && evidence_has(f, "not passed in") &&
	           evidence_has(f, "/dev/nvidia1") && find_id(&r, "setup.dev.ok") &&
	           !find_id(&r, "setup.dev.missing"),
	   "docker given GPU 0 of 2: info naming /dev/nvidia1, no missing-node error");
	node("/dev/nvidia1", 0666);
	f = expect(&alice, &r, "setup.container.gpu");
	ok(f && f->severity == DR_OK && strstr(f->title, "/dev/nvidia1") && dr_worst(&r) == DR_OK,
	   "docker given both GPUs: ok");

	/* NVML's Unknown Error: evidence only, no finding of its own */
	use_nvml = true;
	memset(&nvml, 0, sizeof(nvml));
	nvml.init_rc = 999;
	f = expect(&alice, &r, "setup.container.gpu");
	ok(f && f->severity == DR_INFO && evidence_has(f, "999 (Unknown Error)") &&
	           evidence_has(f, "setup.nvidia") && r.nr == 2,
	   "NVML 999 in a container: noted with the nodes, no duplicate finding");
	nvml.init_rc = 0;
	f = expect(&alice, &r, "setup.container.gpu");
	ok(f && f->severity == DR_OK, "NVML works: the note goes");
	use_nvml = false;

	unnode("/dev/nvidia-uvm");
	f = expect(&alice, &r, "setup.dev.nvidia_uvm");
	ok(f && f->severity == DR_ERROR && action_has(f, "restart this container"),
	   "container without /dev/nvidia-uvm: an error (nothing inside can load it)");
	node("/dev/nvidia-uvm", 0666);
	unnode("/dev/nvidiactl");
	f = expect(&alice, &r, "setup.dev.missing");
	ok(f && strstr(f->title, "/dev/nvidiactl") && action_has(f, "--gpus all"),
	   "container given nvidia0 without nvidiactl: missing, pass the rest");
	node("/dev/nvidiactl", 0666);

	/* a render node whose host gid has no name inside */
	fresh("ctr6");
	put(root, "/.dockerenv", "");
	pci("0000:00:02.0", 0x8086, "i915");
	render("renderD128", "0000:00:02.0");
	put(root, "/etc/group", "root:x:0:\n");
	node("/dev/dri/renderD128", 0660);
	f = expect(&alice, &r, "setup.dev.no_access");
	ok(f && action_has(f, "--group-add GID") && find_id(&r, "setup.container.gpu"),
	   "container, render node of an unnamed host gid: --group-add");
	ok(expect(&alice_render, &r, "setup.dev.ok") && find_id(&r, "setup.container.gpu"),
	   "container started with --group-add: ok");
	dr_report_release(&r);
}

int
main(void)
{
	find_fixtures();
	make_tmp_dir("t_doctor_devices");
	node_gid = geteuid() == 0 ? 4300 : (unsigned)getegid();
	if (node_gid == 0 || node_gid == USERS)
		node_gid = 4300;

	test_nvidia();
	test_drm();
	test_accounts();
	test_acl();
	test_container();

	ok(all_explained, "every id emitted has an explanation");
	{
		const char *ids[] = { "setup.container.gpu", "setup.container.no_gpu",
			              "setup.dev.missing",   "setup.dev.no_access",
			              "setup.dev.no_kfd",    "setup.dev.nvidia_uvm",
			              "setup.dev.ok",        "setup.dev.relogin" };
		size_t hit = 0, n = 0;

		for (const struct dr_explain *e = dr_catalog_devices; e->id; e++, n++)
			for (size_t j = 0; j < nr_seen; j++)
				hit += !strcmp(e->id, seen[j]);
		ok(n == sizeof(ids) / sizeof(ids[0]) && hit == n,
		   "every catalog id (%zu) was emitted by some test (%zu)", n, hit);
		for (size_t i = 0; i + 1 < n; i++)
			if (strcmp(dr_catalog_devices[i].id, dr_catalog_devices[i + 1].id) >= 0)
				n = 0;
		ok(n == sizeof(ids) / sizeof(ids[0]), "the catalog is in id order");
	}
	rm_tree(tmp_dir);
	return done_testing();
}
