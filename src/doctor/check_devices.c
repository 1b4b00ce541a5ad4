/*
 * setup.dev.*, setup.container.*: can this user open the device nodes of
 * the GPUs present (NVIDIA's /dev/nvidia*, a DRM GPU's render node, ROCm's
 * /dev/kfd), and, inside a container, which GPU nodes were passed in.
 * Access is decided from stat() (and a POSIX ACL when the node has one)
 * against the context's uid and groups, never access(2), so fixture trees
 * stand for /dev.
 */
#include "doctor/doctor.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/xattr.h>

#include "backend/nvml_probe.h"
#include "backend/pci.h"
#include "core/config.h"
#include "core/err.h"
#include "core/fileio.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#define NVML_ERROR_UNKNOWN 999
#define FILE_CAP           (1 << 20)

enum node_kind {
	NK_PLAIN,
	NK_UVM, /* /dev/nvidia-uvm: made when nvidia-uvm loads */
	NK_KFD, /* /dev/kfd: only with a kernel built with HSA (KFD) */
};

enum node_state {
	NODE_OK,
	NODE_DENIED,
	NODE_MISSING,
};

struct node {
	char path[64];       /* as the user names it: "/dev/nvidia0" */
	char note[4400];     /* why it is expected ("the nvidia driver holds 0000:3b:00.0") */
	enum node_kind kind; /* */
	bool per_card;       /* one per GPU: a container may be given some on purpose */
	bool no_sysfs;       /* the driver made no node in sysfs either: nothing to stat */
	enum node_state state;
	int err; /* stat()'s errno when missing */
	struct stat st;
};

struct node_set {
	const char *vendor; /* "NVIDIA", "AMD", "Intel", "other" */
	struct node *v;
	size_t nr, alloc;
};

/* A DRM render node in sysfs and the device it belongs to. */
struct render {
	char name[32];   /* "renderD128" */
	char dev[64];    /* the device's sysfs name: "0000:03:00.0", "fd00000.gpu" */
	char driver[32]; /* its driver, "" when unknown */
	unsigned vendor; /* its PCI vendor, 0 when not PCI */
	bool used;       /* belongs to a PCI GPU already handled */
};

struct container {
	bool in;
	const char *kind; /* " (Docker)", " (Kubernetes)", ..., or "" */
	char kind_buf[32];
	struct strbuf evidence; /* lines, '\n' ended */
};

static bool
root_is_slash(const struct dr_ctx *ctx)
{
	const char *root = ctx->cfg->root;

	return !root || !*root || !strcmp(root, "/");
}

static int
read_abs(const char *path, struct strbuf *sb)
{
	strbuf_reset(sb);
	return file_read("", path, sb, FILE_CAP, NULL);
}

/* --- who is who: <root>/etc/passwd and <root>/etc/group ---------------------------- */

/* A uid or gid field: digits only ("", "abc", "-1" and comments are none). */
static bool
parse_id(const char *f, unsigned *v)
{
	char *end;
	unsigned long n;

	if (*f < '0' || *f > '9')
		return false;
	errno = 0;
	n = strtoul(f, &end, 10);
	if (*end || errno || n > 0xffffffffUL)
		return false;
	*v = (unsigned)n;
	return true;
}

/* Field n (0-based) of a ':' separated line, into buf. */
static bool
field(const char *line, const char *end, int n, char *buf, size_t size)
{
	const char *p = line, *q;

	for (; n > 0; n--) {
		p = memchr(p, ':', (size_t)(end - p));
		if (!p)
			return false;
		p++;
	}
	q = memchr(p, ':', (size_t)(end - p));
	if (!q)
		q = end;
	snprintf(buf, size, "%.*s", (int)(q - p), p);
	return true;
}

/* The name and primary group of uid: the passwd file, or getpwuid_r() on the real root. */
static bool
user_lookup(const struct dr_ctx *ctx, unsigned uid, char *name, size_t size, unsigned *gid)
{
	struct strbuf sb = STRBUF_INIT;
	char path[4096], f[64];
	bool found = false;
	unsigned id;

	name[0] = '\0';
	if (ctx->cfg->passwd_file)
		snprintf(path, sizeof(path), "%s", ctx->cfg->passwd_file);
	else
		dr_path(ctx, path, sizeof(path), "/etc/passwd");
	if (read_abs(path, &sb) == 0) {
		for (const char *p = sb.buf; *p && !found;) {
			const char *eol = strchr(p, '\n');

			if (!eol)
				eol = p + strlen(p);
			if (field(p, eol, 2, f, sizeof(f)) && parse_id(f, &id) && id == uid) {
				field(p, eol, 0, name, size);
				if (gid && field(p, eol, 3, f, sizeof(f)) && parse_id(f, &id))
					*gid = id;
				found = true;
			}
			p = *eol ? eol + 1 : eol;
		}
	}
	/* on the real root NSS has the final word: LDAP and sssd users are in no file */
	if (!found && root_is_slash(ctx) && !ctx->cfg->passwd_file) {
		struct passwd pw, *res = NULL;
		size_t len = 16384;
		char *buf = xmalloc(len);
		int rc;

		while ((rc = getpwuid_r((uid_t)uid, &pw, buf, len, &res)) == ERANGE &&
		       len < (1u << 24)) {
			len *= 2;
			buf = xrealloc(buf, len);
		}
		if (rc == 0 && res) {
			snprintf(name, size, "%s", pw.pw_name);
			if (gid)
				*gid = (unsigned)pw.pw_gid;
			found = true;
		}
		free(buf);
	}
	strbuf_release(&sb);
	return found;
}

struct group_info {
	bool found;
	char name[64];
	bool member;     /* user is listed in its members */
	char from[4096]; /* where it was read */
};

/* Group gid's name, and whether user (may be "") is a member: <root>/etc/group, or getgrgid_r(). */
static void
group_lookup(const struct dr_ctx *ctx, unsigned gid, const char *user, struct group_info *g)
{
	struct strbuf sb = STRBUF_INIT;
	char f[64];
	unsigned id;

	memset(g, 0, sizeof(*g));
	dr_path(ctx, g->from, sizeof(g->from), "/etc/group");
	if (read_abs(g->from, &sb) == 0) {
		for (const char *p = sb.buf; *p && !g->found;) {
			const char *eol = strchr(p, '\n');
			const char *members;

			if (!eol)
				eol = p + strlen(p);
			if (field(p, eol, 2, f, sizeof(f)) && parse_id(f, &id) && id == gid) {
				field(p, eol, 0, g->name, sizeof(g->name));
				g->found = true;
				members = p;
				for (int i = 0; i < 3 && members; i++) {
					members = memchr(members, ':', (size_t)(eol - members));
					if (members)
						members++;
				}
				while (members && members < eol && *user) {
					const char *comma =
					        memchr(members, ',', (size_t)(eol - members));
					const char *e = comma ? comma : eol;
					size_t len = strlen(user);

					if ((size_t)(e - members) == len &&
					    !memcmp(members, user, len))
						g->member = true;
					members = comma ? comma + 1 : NULL;
				}
			}
			p = *eol ? eol + 1 : eol;
		}
	}
	/* on the real root NSS has the final word (LDAP, sssd, systemd-userdb groups) */
	if (!g->found && root_is_slash(ctx)) {
		struct group gr, *res = NULL;
		size_t len = 16384;
		char *buf = xmalloc(len);
		int rc;

		/* a group with thousands of members needs more than any fixed buffer */
		while ((rc = getgrgid_r((gid_t)gid, &gr, buf, len, &res)) == ERANGE &&
		       len < (1u << 26)) {
			len *= 2;
			buf = xrealloc(buf, len);
		}
		if (rc == 0 && res) {
			snprintf(g->from, sizeof(g->from), "getgrgid_r()");
			snprintf(g->name, sizeof(g->name), "%s", gr.gr_name);
			g->found = true;
			for (char **m = gr.gr_mem; m && *m && *user; m++)
				if (!strcmp(*m, user))
					g->member = true;
		}
		free(buf);
	}
	strbuf_release(&sb);
}

static bool
in_groups(const struct dr_ctx *ctx, unsigned gid)
{
	if (ctx->gid == gid)
		return true;
	for (size_t i = 0; i < ctx->nr_groups; i++)
		if (ctx->groups[i] == gid)
			return true;
	return false;
}

/* --- access from stat() and the POSIX ACL ------------------------------------------ */

#define ACL_EA_VERSION 2
#define ACL_USER_OBJ   0x01
#define ACL_USER       0x02
#define ACL_GROUP_OBJ  0x04
#define ACL_GROUP      0x08
#define ACL_MASK       0x10
#define ACL_OTHER      0x20
#define RW             6 /* read and write, in an ACL entry's or a mode's triplet */

static unsigned
le16(const unsigned char *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static uint32_t
le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * Does the node's access ACL (system.posix_acl_access: systemd-logind's
 * "uaccess" gives the user at the seat one) admit ctx for read and write?
 * 1 yes, 0 no, -1 no ACL.
 */
static int
acl_allows(const struct dr_ctx *ctx, const char *path, const struct stat *st)
{
	unsigned char buf[1024];
	unsigned mask = 7, other = 0;
	bool group_matched = false, group_ok = false;
	ssize_t n = getxattr(path, "system.posix_acl_access", buf, sizeof(buf));

	if (n < 4 || (n - 4) % 8 || le32(buf) != ACL_EA_VERSION)
		return -1;
	for (ssize_t i = 4; i < n; i += 8)
		if (le16(buf + i) == ACL_MASK)
			mask = le16(buf + i + 2);
	for (ssize_t i = 4; i < n; i += 8) {
		unsigned tag = le16(buf + i), perm = le16(buf + i + 2);
		uint32_t id = le32(buf + i + 4);

		switch (tag) {
		case ACL_USER_OBJ:
			if (ctx->uid == st->st_uid)
				return (perm & RW) == RW;
			break;
		case ACL_USER:
			if (ctx->uid == id && ctx->uid != st->st_uid)
				return (perm & mask & RW) == RW;
			break;
		case ACL_GROUP_OBJ:
		case ACL_GROUP:
			if (in_groups(ctx, tag == ACL_GROUP ? id : (unsigned)st->st_gid)) {
				group_matched = true;
				group_ok |= (perm & mask & RW) == RW;
			}
			break;
		case ACL_OTHER:
			other = perm;
			break;
		default:
			break;
		}
	}
	if (group_matched)
		return group_ok;
	return (other & RW) == RW;
}

/* stat() the node and decide whether ctx may open it for reading and writing. */
static void
node_check(const struct dr_ctx *ctx, struct node *n)
{
	char full[4096];
	unsigned bits;

	if (n->no_sysfs) {
		n->state = NODE_MISSING;
		n->err = ENOENT;
		return;
	}
	dr_path(ctx, full, sizeof(full), n->path);
	if (stat(full, &n->st) < 0) {
		n->state = NODE_MISSING;
		n->err = errno;
		return;
	}
	if (!S_ISCHR(n->st.st_mode) && !S_ISREG(n->st.st_mode)) {
		n->state = NODE_MISSING;
		n->err = ENODEV;
		return;
	}
	n->state = NODE_OK;
	if (ctx->uid == 0)
		return;
	switch (acl_allows(ctx, full, &n->st)) {
	case 1:
		return;
	case 0:
		n->state = NODE_DENIED;
		return;
	default:
		break;
	}
	if (ctx->uid == n->st.st_uid)
		bits = (n->st.st_mode >> 6) & 7;
	else if (in_groups(ctx, n->st.st_gid))
		bits = (n->st.st_mode >> 3) & 7;
	else
		bits = n->st.st_mode & 7;
	if ((bits & RW) != RW)
		n->state = NODE_DENIED;
}

static void
mode_string(mode_t m, char *buf)
{
	static const char rwx[] = "rwxrwxrwx";

	buf[0] = S_ISCHR(m) ? 'c' : S_ISREG(m) ? '-' : '?';
	for (int i = 0; i < 9; i++)
		buf[1 + i] = (m & (1u << (8 - i))) ? rwx[i] : '-';
	buf[10] = '\0';
}

/* "/dev/kfd (root:render, crw-rw----) under <root>" */
static void
node_evidence(const struct dr_ctx *ctx, struct dr_finding *f, const struct node *n)
{
	char full[4096], owner[64], mode[12];
	struct group_info g;

	dr_path(ctx, full, sizeof(full), n->path);
	if (n->state == NODE_MISSING) {
		if (n->no_sysfs)
			dr_evidence(f, "%s: %s", n->path, n->note);
		else
			dr_evidence(f, "%s: %s (%s)", full, strerror(n->err), n->note);
		return;
	}
	if (!user_lookup(ctx, (unsigned)n->st.st_uid, owner, sizeof(owner), NULL))
		snprintf(owner, sizeof(owner), "%u", (unsigned)n->st.st_uid);
	group_lookup(ctx, (unsigned)n->st.st_gid, "", &g);
	mode_string(n->st.st_mode, mode);
	dr_evidence(f, "%s: owner %s, group %s (gid %u), mode %s (%s)", full, owner,
	            g.found ? g.name : "(no name)", (unsigned)n->st.st_gid, mode, n->note);
}

/* --- what the GPUs present need -------------------------------------------------- */

static struct node *
add_node(struct node_set *s, const char *path, enum node_kind kind, bool per_card)
{
	struct node *n;

	for (size_t i = 0; i < s->nr; i++)
		if (!strcmp(s->v[i].path, path))
			return NULL;
	ALLOC_GROW(s->v, s->nr + 1, s->alloc);
	n = &s->v[s->nr++];
	memset(n, 0, sizeof(*n));
	snprintf(n->path, sizeof(n->path), "%s", path);
	n->kind = kind;
	n->per_card = per_card;
	return n;
}

/* The minor of /dev/nvidiaN for the GPU at addr: <proc>/driver/nvidia/gpus/ADDR/information. */
static bool
nvidia_minor(const struct dr_ctx *ctx, const char *addr, unsigned *minor)
{
	struct strbuf sb = STRBUF_INIT;
	char rel[128];
	const char *p;
	bool found = false;

	if (path_fmt(rel, sizeof(rel), "driver/nvidia/gpus/%s/information", addr) &&
	    file_read(ctx->cfg->proc_root, rel, &sb, 16384, NULL) == 0) {
		p = strstr(sb.buf, "Device Minor:");
		if (p) {
			const char *q = p + strlen("Device Minor:");
			char *end;
			unsigned long v;

			q += strspn(q, " \t");
			v = strtoul(q, &end, 10);
			/* GPUs' minors are 0..253: 254 is nvidia-modeset, 255 nvidiactl */
			if (*q >= '0' && *q <= '9' && end != q && v <= 253) {
				*minor = (unsigned)v;
				found = true;
			}
		}
	}
	strbuf_release(&sb);
	return found;
}

static int
cmp_render(const void *a, const void *b)
{
	const struct render *x = a, *y = b;
	size_t lx = strlen(x->name), ly = strlen(y->name);

	return lx != ly ? (lx < ly ? -1 : 1) : strcmp(x->name, y->name);
}

/* The render nodes sysfs knows: <sysfs>/class/drm/renderD*. */
static struct render *
list_renders(const struct dr_ctx *ctx, size_t *nr)
{
	char dir[4096], rel[160];
	struct render *v = NULL;
	size_t n = 0, alloc = 0;
	struct dirent *de;
	DIR *d;

	*nr = 0;
	path_join(dir, sizeof(dir), ctx->cfg->sysfs_root, "class/drm");
	d = opendir(dir);
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		struct render *r;
		uint64_t vendor;

		if (strncmp(de->d_name, "renderD", 7) || strlen(de->d_name) >= sizeof(r->name))
			continue;
		ALLOC_GROW(v, n + 1, alloc);
		r = &v[n++];
		memset(r, 0, sizeof(*r));
		snprintf(r->name, sizeof(r->name), "%s", de->d_name);
		if (path_fmt(rel, sizeof(rel), "class/drm/%s/device", r->name))
			file_link_base(ctx->cfg->sysfs_root, rel, r->dev, sizeof(r->dev));
		if (path_fmt(rel, sizeof(rel), "class/drm/%s/device/driver", r->name))
			file_link_base(ctx->cfg->sysfs_root, rel, r->driver, sizeof(r->driver));
		if (path_fmt(rel, sizeof(rel), "class/drm/%s/device/vendor", r->name) &&
		    file_read_u64(ctx->cfg->sysfs_root, rel, &vendor, NULL) == 0)
			r->vendor = (unsigned)vendor;
	}
	closedir(d);
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_render);
	*nr = n;
	return v;
}

enum { SET_NVIDIA, SET_AMD, SET_INTEL, SET_OTHER, NR_SETS };

static int
set_of(unsigned vendor)
{
	switch (vendor) {
	case PCI_VENDOR_NVIDIA:
		return SET_NVIDIA;
	case PCI_VENDOR_AMD:
		return SET_AMD;
	case PCI_VENDOR_INTEL:
		return SET_INTEL;
	default:
		return SET_OTHER;
	}
}

/* Drivers that make a render node for their GPU (so its absence is a fault). */
static bool
renders(const char *driver)
{
	static const char *const names[] = { "amdgpu", "radeon", "i915", "xe", "nouveau", NULL };

	for (int i = 0; names[i]; i++)
		if (!strcmp(driver, names[i]))
			return true;
	return false;
}

static void
nvidia_nodes(const struct dr_ctx *ctx, struct node_set *s, const struct pci_gpu *gpus, size_t nr)
{
	unsigned nth = 0;
	struct node *n;

	for (size_t i = 0; i < nr; i++) {
		char path[64];
		unsigned minor;
		bool known;

		if (strcmp(gpus[i].driver, "nvidia"))
			continue;
		if (!nth) {
			n = add_node(s, "/dev/nvidiactl", NK_PLAIN, false);
			snprintf(n->note, sizeof(n->note), "the NVIDIA driver's control device");
		}
		known = nvidia_minor(ctx, gpus[i].addr, &minor);
		if (!known)
			minor = nth;
		nth++;
		snprintf(path, sizeof(path), "/dev/nvidia%u", minor);
		n = add_node(s, path, NK_PLAIN, true);
		if (n)
			snprintf(
			        n->note, sizeof(n->note), "the GPU at %s, minor %u%s", gpus[i].addr,
			        minor,
			        known ? " from /proc/driver/nvidia/gpus"
			              : ", assumed from bus order: /proc/driver/nvidia/gpus unread");
	}
	if (nth) {
		n = add_node(s, "/dev/nvidia-uvm", NK_UVM, false);
		snprintf(n->note, sizeof(n->note), "CUDA's unified memory device, from nvidia-uvm");
	}
}

static void
drm_nodes(const struct dr_ctx *ctx, struct node_set *sets, const struct pci_gpu *gpus, size_t nr,
          struct render *rv, size_t nr_render)
{
	char path[64];
	struct node *n;

	for (size_t i = 0; i < nr; i++) {
		const struct pci_gpu *g = &gpus[i];
		struct node_set *s = &sets[set_of(g->vendor)];
		bool found = false;

		for (size_t j = 0; j < nr_render; j++)
			if (!strcmp(rv[j].dev, g->addr))
				rv[j].used = true;
		if (!g->driver[0] || !strcmp(g->driver, "nvidia") ||
		    !strcmp(g->driver, "vfio-pci") || !strcmp(g->driver, "pci-stub"))
			continue;
		for (size_t j = 0; j < nr_render; j++) {
			if (strcmp(rv[j].dev, g->addr))
				continue;
			snprintf(path, sizeof(path), "/dev/dri/%s", rv[j].name);
			n = add_node(s, path, NK_PLAIN, true);
			if (n)
				snprintf(n->note, sizeof(n->note),
				         "the render node of the GPU at %s, driven by %s", g->addr,
				         g->driver);
			found = true;
		}
		if (!found && renders(g->driver)) {
			snprintf(path, sizeof(path), "/dev/dri/renderD* of %s", g->addr);
			n = add_node(s, path, NK_PLAIN, true);
			if (n) {
				n->no_sysfs = true;
				snprintf(
				        n->note, sizeof(n->note),
				        "no renderD* in %s/class/drm belongs to the GPU at %s, which %s "
				        "drives",
				        ctx->cfg->sysfs_root, g->addr, g->driver);
			}
		}
		if (!strcmp(g->driver, "amdgpu")) {
			n = add_node(s, "/dev/kfd", NK_KFD, false);
			if (n)
				snprintf(n->note, sizeof(n->note),
				         "ROCm's compute device (HSA kernel driver)");
		}
	}
	/* render nodes of GPUs not on the PCI list: SoC GPUs, accelerators of other classes */
	for (size_t j = 0; j < nr_render; j++) {
		if (rv[j].used || !strcmp(rv[j].driver, "nvidia"))
			continue;
		snprintf(path, sizeof(path), "/dev/dri/%s", rv[j].name);
		n = add_node(&sets[set_of(rv[j].vendor)], path, NK_PLAIN, true);
		if (!strcmp(rv[j].driver, "amdgpu")) {
			struct node *k = add_node(&sets[SET_AMD], "/dev/kfd", NK_KFD, false);

			if (k)
				snprintf(k->note, sizeof(k->note),
				         "ROCm's compute device (HSA kernel driver)");
		}
		if (n)
			snprintf(n->note, sizeof(n->note), "the render node of %s, driven by %s",
			         rv[j].dev[0] ? rv[j].dev : "a device",
			         rv[j].driver[0] ? rv[j].driver : "driver unknown");
	}
}

/* --- containers -------------------------------------------------------------------- */

/* A cgroup line that names a container runtime's cgroup (not its daemon's service). */
static bool
container_cgroup(const char *line, size_t len)
{
	static const char *const words[] = { "docker", "kubepods", "containerd",
		                             "libpod", "lxc",      NULL };
	char buf[512];

	snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
	if (len >= 8 && !memcmp(line + len - 8, ".service", 8))
		return false;
	for (int i = 0; words[i]; i++)
		if (strstr(buf, words[i]))
			return true;
	return false;
}

static const char *
cgroup_kind(const char *line)
{
	if (strstr(line, "kubepods"))
		return " (Kubernetes)";
	if (strstr(line, "docker"))
		return " (Docker)";
	if (strstr(line, "libpod"))
		return " (Podman)";
	if (strstr(line, "lxc"))
		return " (LXC)";
	return " (containerd)";
}

static void
mark_container(struct container *c, const char *kind)
{
	if (!c->in)
		c->kind = kind;
	c->in = true;
}

static void
detect_container(const struct dr_ctx *ctx, struct container *c)
{
	struct strbuf sb = STRBUF_INIT;
	static const char *const cgroups[] = { "1/cgroup", "self/cgroup", NULL };
	char path[4096];

	if (file_exists(NULL, dr_path(ctx, path, sizeof(path), "/.dockerenv"))) {
		mark_container(c, " (Docker)");
		strbuf_addf(&c->evidence, "%s exists (Docker makes it)\n", path);
	}
	if (file_exists(NULL, dr_path(ctx, path, sizeof(path), "/run/.containerenv"))) {
		mark_container(c, " (Podman)");
		strbuf_addf(&c->evidence, "%s exists (Podman makes it)\n", path);
	}
	if (file_read(ctx->cfg->proc_root, "1/environ", &sb, 65536, NULL) == 0) {
		for (size_t off = 0; off < sb.len;) {
			const char *v = sb.buf + off;
			size_t len = strnlen(v, sb.len - off);

			if (len > 10 && !strncmp(v, "container=", 10)) {
				snprintf(c->kind_buf, sizeof(c->kind_buf), " (%.*s)",
				         (int)(len - 10), v + 10);
				mark_container(c, c->kind_buf);
				strbuf_addf(&c->evidence, "%s/1/environ: %.*s\n",
				            ctx->cfg->proc_root, (int)len, v);
				break;
			}
			off += len + 1;
		}
	}
	for (int i = 0; cgroups[i]; i++) {
		strbuf_reset(&sb);
		if (file_read(ctx->cfg->proc_root, cgroups[i], &sb, 65536, NULL) < 0)
			continue;
		for (const char *p = sb.buf; *p;) {
			const char *eol = strchr(p, '\n');

			if (!eol)
				eol = p + strlen(p);
			if (container_cgroup(p, (size_t)(eol - p))) {
				char line[256];

				snprintf(line, sizeof(line), "%.*s", (int)(eol - p), p);
				mark_container(c, cgroup_kind(line));
				strbuf_addf(&c->evidence, "%s/%s: %s\n", ctx->cfg->proc_root,
				            cgroups[i], line);
				break;
			}
			p = *eol ? eol + 1 : eol;
		}
	}
	strbuf_reset(&sb);
	if (file_read(ctx->cfg->proc_root, "self/mountinfo", &sb, FILE_CAP, NULL) == 0) {
		/* "36 35 98:0 / / rw,noatime master:1 - overlay overlay rw,lowerdir=..." */
		for (const char *p = sb.buf; *p;) {
			const char *eol = strchr(p, '\n'), *dash;

			if (!eol)
				eol = p + strlen(p);
			dash = strstr(p, " - ");
			if (dash && dash < eol && strstr(p, " / / ") && strstr(p, " / / ") < dash &&
			    !strncmp(dash + 3, "overlay ", 8)) {
				mark_container(c, "");
				strbuf_addf(&c->evidence,
				            "%s/self/mountinfo: / is an overlay file system\n",
				            ctx->cfg->proc_root);
				break;
			}
			p = *eol ? eol + 1 : eol;
		}
	}
	strbuf_release(&sb);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The GPU nodes present in /dev ("/dev/nvidia0", "/dev/dri/renderD128", "/dev/kfd"), sorted. */
static size_t
dev_nodes(const struct dr_ctx *ctx, struct strbuf *out)
{
	char **v = NULL, path[4096];
	size_t n = 0, alloc = 0;
	static const char *const dirs[] = { "/dev", "/dev/dri", NULL };

	for (int i = 0; dirs[i]; i++) {
		DIR *d = opendir(dr_path(ctx, path, sizeof(path), dirs[i]));
		struct dirent *de;

		while (d && (de = readdir(d))) {
			char name[300];
			struct stat st;

			if (de->d_name[0] == '.')
				continue;
			if (i == 0 && strncmp(de->d_name, "nvidia", 6) && strcmp(de->d_name, "kfd"))
				continue;
			if (i == 1 && strncmp(de->d_name, "card", 4) &&
			    strncmp(de->d_name, "render", 6))
				continue;
			snprintf(name, sizeof(name), "%s/%s", dirs[i], de->d_name);
			if (stat(dr_path(ctx, path, sizeof(path), name), &st) < 0 ||
			    (!S_ISCHR(st.st_mode) && !S_ISREG(st.st_mode)))
				continue;
			ALLOC_GROW(v, n + 1, alloc);
			v[n++] = xstrdup(name);
		}
		if (d)
			closedir(d);
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++) {
		strbuf_addf(out, "%s%s", i ? ", " : "", v[i]);
		free(v[i]);
	}
	free(v);
	return n;
}

static void
container_evidence(struct dr_finding *f, const struct container *c)
{
	const char *p = c->evidence.buf;

	while (*p) {
		const char *eol = strchr(p, '\n');

		if (!eol)
			eol = p + strlen(p);
		dr_evidence(f, "%.*s", (int)(eol - p), p);
		p = *eol ? eol + 1 : eol;
	}
}

static void
nvml_unknown_evidence(const struct dr_ctx *ctx, struct dr_finding *f)
{
	if (ctx->nvml && ctx->nvml->init_rc == NVML_ERROR_UNKNOWN)
		dr_evidence(f,
		            "NVML: nvmlInit answered %d (Unknown Error), explained by the "
		            "setup.nvidia findings; in a container it usually follows a "
		            "'systemctl daemon-reload' on the host that dropped the container's "
		            "device access: the nodes above are what the container was given",
		            ctx->nvml->init_rc);
}

static void
no_gpu(const struct dr_ctx *ctx, struct dr_report *r, const struct container *c,
       const struct pci_gpu *gpus, size_t nr)
{
	bool vendor[NR_SETS] = { false }, any = false;
	char path[4096];
	struct strbuf act = STRBUF_INIT;
	struct dr_finding *f;

	for (size_t i = 0; i < nr; i++)
		vendor[set_of(gpus[i].vendor)] = any = true;
	if (!any)
		vendor[SET_NVIDIA] = vendor[SET_AMD] = vendor[SET_INTEL] = true;
	/* an error when the host shows a GPU; with none in sight the host may have none */
	f = dr_add(r, "setup.container.no_gpu", nr ? DR_ERROR : DR_WARNING,
	           "this container%s was given no GPU: no GPU device node in /dev", c->kind);
	container_evidence(f, c);
	dr_evidence(f, "%s: no nvidia*, no kfd, no dri/card* or dri/renderD*",
	            dr_path(ctx, path, sizeof(path), "/dev"));
	if (nr)
		for (size_t i = 0; i < nr; i++)
			dr_evidence(f,
			            "%s/bus/pci/devices/%s: vendor 0x%04x, driver %s (on the host)",
			            ctx->cfg->sysfs_root, gpus[i].addr, gpus[i].vendor,
			            gpus[i].driver[0] ? gpus[i].driver : "none");
	else
		dr_evidence(f, "%s/bus/pci/devices: no display-class device", ctx->cfg->sysfs_root);
	nvml_unknown_evidence(ctx, f);
	if (nr)
		dr_meaning(f, "The host has a GPU (its PCI bus shows through /sys), but the "
		              "container was started without its device nodes, so no program in it "
		              "can use the GPU.");
	else
		dr_meaning(f,
		           "No GPU device node was passed in, and the PCI bus seen here shows no "
		           "GPU: either the host has none (a CPU-only machine or instance), or the "
		           "container sees neither the host's /sys nor its /dev.");
	strbuf_addstr(&act, "Start the container with the GPU passed in.");
	if (vendor[SET_NVIDIA])
		strbuf_addstr(&act,
		              " NVIDIA: 'docker run --gpus all IMAGE', with the NVIDIA Container "
		              "Toolkit installed on the host and docker configured for it ('sudo "
		              "nvidia-ctk runtime configure --runtime=docker' then 'sudo systemctl "
		              "restart docker'); Podman: 'podman run --device nvidia.com/gpu=all' "
		              "after 'sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml'; "
		              "Kubernetes: 'resources: limits: nvidia.com/gpu: 1' with the NVIDIA "
		              "device plugin (or GPU Operator) on the node.");
	if (vendor[SET_AMD])
		strbuf_addstr(&act,
		              " AMD (ROCm): 'docker run --device /dev/kfd --device /dev/dri "
		              "--group-add video IMAGE' (add '--group-add render' where the "
		              "host's render nodes belong to render); Kubernetes: 'amd.com/gpu: "
		              "1' with AMD's device plugin.");
	if (vendor[SET_INTEL] || vendor[SET_OTHER])
		strbuf_addstr(&act,
		              " Intel and other DRM GPUs: 'docker run --device /dev/dri IMAGE' "
		              "(with '--group-add' of the gid that owns /dev/dri/renderD* on the "
		              "host); Kubernetes: 'gpu.intel.com/i915: 1' with Intel's device "
		              "plugin.");
	if (!nr)
		strbuf_addstr(&act, " If the host has no GPU, run where one is.");
	dr_action(f, "%s", act.buf);
	strbuf_release(&act);
}

/* --- the findings ---------------------------------------------------------------- */

#define MAX_LISTED 64
/* supplementary groups named in the evidence, at most */
#define MAX_GROUPS_NAMED 32

struct judged {
	struct node *denied[MAX_LISTED], *relogin[MAX_LISTED], *missing[MAX_LISTED], *uvm, *no_kfd;
	size_t nr_denied, nr_relogin, nr_missing;
	size_t present_cards, cards;
};

static void
push(struct node **v, size_t *nr, struct node *n)
{
	if (*nr < MAX_LISTED)
		v[(*nr)++] = n;
}

/* Is the user listed in the node's group, without it in this session's groups? */
static bool
needs_relogin(const struct dr_ctx *ctx, const struct node *n, const char *user, unsigned user_gid)
{
	struct group_info g;

	if (!*user || (n->st.st_mode & 060) != 060 || in_groups(ctx, (unsigned)n->st.st_gid))
		return false;
	if (user_gid == (unsigned)n->st.st_gid)
		return true;
	group_lookup(ctx, (unsigned)n->st.st_gid, user, &g);
	return g.member;
}

static void
list_paths(struct strbuf *sb, struct node *const *v, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		strbuf_addf(sb, "%s%s", i ? ", " : "", v[i]->path);
}

static void
session_evidence(const struct dr_ctx *ctx, struct dr_finding *f, const char *user)
{
	struct strbuf sb = STRBUF_INIT;
	struct group_info g;

	size_t listed = 0, more = 0;

	group_lookup(ctx, ctx->gid, "", &g);
	strbuf_addf(&sb, "%u(%s)", ctx->gid, g.found ? g.name : "?");
	/* each name is a lookup: a session in thousands of groups gets the first few */
	for (size_t i = 0; i < ctx->nr_groups; i++) {
		if (ctx->groups[i] == ctx->gid)
			continue;
		if (listed == MAX_GROUPS_NAMED) {
			more++;
			continue;
		}
		listed++;
		group_lookup(ctx, ctx->groups[i], "", &g);
		strbuf_addf(&sb, ", %u(%s)", ctx->groups[i], g.found ? g.name : "?");
	}
	if (more)
		strbuf_addf(&sb, " and %zu more", more);
	dr_evidence(f, "this session: uid %u (%s), groups %s", ctx->uid, *user ? user : "?",
	            sb.buf);
	strbuf_release(&sb);
}

static void
report_denied(const struct dr_ctx *ctx, struct dr_report *r, const struct node_set *s,
              const struct container *c, struct node *const *v, size_t nr, const char *user)
{
	struct strbuf paths = STRBUF_INIT, groups = STRBUF_INIT, act = STRBUF_INIT;
	const char *first_group = NULL;
	char first_buf[64] = "";
	bool strict = false, unnamed = false;
	struct dr_finding *f;

	list_paths(&paths, v, nr);
	if (nr == 1)
		f = dr_add(r, "setup.dev.no_access", DR_ERROR, "this user cannot open %s",
		           v[0]->path);
	else
		f = dr_add(r, "setup.dev.no_access", DR_ERROR,
		           "this user cannot open the %s device nodes %s", s->vendor, paths.buf);
	for (size_t i = 0; i < nr; i++) {
		struct group_info g;

		node_evidence(ctx, f, v[i]);
		if ((v[i]->st.st_mode & 060) != 060 || v[i]->st.st_gid == 0) {
			strict = true;
			continue;
		}
		group_lookup(ctx, (unsigned)v[i]->st.st_gid, "", &g);
		if (!g.found) {
			unnamed = true;
			strbuf_addf(&groups, "%s%u", groups.len ? ", " : "",
			            (unsigned)v[i]->st.st_gid);
			continue;
		}
		if (!strstr(groups.buf, g.name))
			strbuf_addf(&groups, "%s%s", groups.len ? ", " : "", g.name);
		if (!first_group) {
			snprintf(first_buf, sizeof(first_buf), "%s", g.name);
			first_group = first_buf;
		}
	}
	session_evidence(ctx, f, user);
	dr_meaning(f,
	           "Opening a GPU needs read and write access to its device node; without it "
	           "the %s GPU is invisible to this user (CUDA: 'no CUDA-capable device is "
	           "detected'; ROCm, Vulkan and OpenCL: no device).",
	           s->vendor);
	if (first_group)
		strbuf_addf(&act,
		            "Join the node's group: 'sudo usermod -aG %s $USER', then log out and "
		            "back in (or 'newgrp %s' in this shell); 'id' shows the groups of the "
		            "current session. Groups: %s.",
		            first_group, first_group, groups.buf);
	if (unnamed) {
		if (c->in)
			strbuf_addf(
			        &act,
			        "%sThe node's group has no name in this container (the host's gid): "
			        "start the container with '--group-add GID' (gid %s).",
			        act.len ? " " : "", groups.buf);
		else
			strbuf_addf(
			        &act,
			        "%sThe node's group (gid %s) has no name in /etc/group: add the "
			        "user to that gid, or fix the udev rule that set it.",
			        act.len ? " " : "", groups.buf);
	}
	if (strict)
		strbuf_addf(
		        &act,
		        "%sA node's mode admits no group (or only root's): the udev rule or "
		        "driver option that made it is too strict. DRM: a rule such as "
		        "'SUBSYSTEM==\"drm\", KERNEL==\"renderD*\", GROUP=\"render\", "
		        "MODE=\"0660\"' in /etc/udev/rules.d/70-gpu.rules, then 'sudo udevadm "
		        "trigger'. NVIDIA: 'options nvidia NVreg_DeviceFileMode=0666' (or "
		        "NVreg_DeviceFileGID=GID with 0660) in /etc/modprobe.d/nvidia.conf, then "
		        "reload the driver. Running as root works meanwhile.",
		        act.len ? " " : "");
	dr_action(f, "%s", act.buf);
	strbuf_release(&paths);
	strbuf_release(&groups);
	strbuf_release(&act);
}

static void
report_relogin(const struct dr_ctx *ctx, struct dr_report *r, struct node *const *v, size_t nr,
               const char *user)
{
	struct strbuf paths = STRBUF_INIT;
	struct group_info g;
	struct dr_finding *f;

	list_paths(&paths, v, nr);
	group_lookup(ctx, (unsigned)v[0]->st.st_gid, user, &g);
	f = dr_add(r, "setup.dev.relogin", DR_ERROR,
	           "%s is in group %s, but this login session predates it: %s cannot be opened",
	           user, g.found ? g.name : "?", paths.buf);
	for (size_t i = 0; i < nr; i++)
		node_evidence(ctx, f, v[i]);
	dr_evidence(f, "%s: %s is a member of %s (gid %u)", g.from, user, g.found ? g.name : "?",
	            (unsigned)v[0]->st.st_gid);
	session_evidence(ctx, f, user);
	dr_meaning(f, "Group membership is read at login: the user was added to the group "
	              "after this session started, so its processes still lack the group.");
	dr_action(f,
	          "Log out and back in (a desktop session: log out of it entirely; ssh: open a "
	          "new connection; a tmux or screen server keeps the old groups until it is "
	          "restarted), or run 'newgrp %s' in this shell. 'id' then lists %s.",
	          g.found ? g.name : "GROUP", g.found ? g.name : "the group");
	strbuf_release(&paths);
}

static void
report_missing(const struct dr_ctx *ctx, struct dr_report *r, const struct node_set *s,
               const struct container *c, struct node *const *v, size_t nr)
{
	struct strbuf paths = STRBUF_INIT;
	bool nvidia = !strcmp(s->vendor, "NVIDIA");
	struct dr_finding *f;

	list_paths(&paths, v, nr);
	f = dr_add(r, "setup.dev.missing", DR_ERROR,
	           "%s %s missing though its driver is loaded: %s", s->vendor,
	           nr == 1 ? "GPU device node is" : "GPU device nodes are", paths.buf);
	for (size_t i = 0; i < nr; i++)
		node_evidence(ctx, f, v[i]);
	if (c->in)
		container_evidence(f, c);
	dr_meaning(f,
	           "The kernel driver holds the %s GPU, but programs reach it through these "
	           "nodes; without them it cannot be used.",
	           s->vendor);
	if (c->in)
		dr_action(f,
		          "This container was given only some of the GPU's nodes: pass the rest in "
		          "too ('docker run --gpus all' for NVIDIA; '--device /dev/kfd --device "
		          "/dev/dri --group-add video' for ROCm; '--device /dev/dri' otherwise).");
	else if (nvidia)
		dr_action(f,
		          "Create the nodes: 'sudo nvidia-modprobe -c 0 -u' (nvidia-modprobe comes "
		          "with the driver), or check that the driver's udev rules are installed "
		          "and run 'sudo udevadm trigger'. If they vanish again, something removes "
		          "them (a container runtime hook, a tmpfs /dev).");
	else
		dr_action(
		        f,
		        "The driver did not create its node: read 'sudo dmesg | grep -iE "
		        "\"drm|amdgpu|i915|xe|kfd\"' for its error (missing firmware is the usual "
		        "cause); if sysfs has the node but /dev does not, udev did not run: 'sudo "
		        "udevadm trigger' (or check that /dev is a devtmpfs).");
	strbuf_release(&paths);
}

static void
report_uvm(const struct dr_ctx *ctx, struct dr_report *r, const struct container *c, struct node *n)
{
	struct strbuf sb = STRBUF_INIT;
	char path[4096];
	bool loaded = false, tool;
	struct dr_finding *f;

	if (file_read(ctx->cfg->proc_root, "modules", &sb, FILE_CAP, NULL) == 0)
		loaded = !strncmp(sb.buf, "nvidia_uvm ", 11) || strstr(sb.buf, "\nnvidia_uvm ");
	tool = file_exists(NULL, dr_path(ctx, path, sizeof(path), "/usr/bin/nvidia-modprobe"));
	f = dr_add(r, "setup.dev.nvidia_uvm", c->in ? DR_ERROR : DR_WARNING,
	           "/dev/nvidia-uvm is missing: CUDA programs will fail%s",
	           c->in ? "" : " unless it is made on their first start");
	node_evidence(ctx, f, n);
	dr_evidence(f, "%s/modules: nvidia_uvm %s", ctx->cfg->proc_root,
	            loaded   ? "is loaded"
	            : sb.len ? "is not loaded"
	                     : "unknown (unread)");
	if (!c->in)
		dr_evidence(f, "%s: %s", path, tool ? "present" : "absent");
	else
		container_evidence(f, c);
	dr_meaning(f, "CUDA needs /dev/nvidia-uvm (unified memory) besides /dev/nvidiactl and "
	              "/dev/nvidiaN; it exists only once the nvidia-uvm module is loaded. On a "
	              "host, libcuda runs the setuid nvidia-modprobe to load it; in a container "
	              "nothing can.");
	if (c->in)
		dr_action(f, "On the host: 'sudo modprobe nvidia-uvm' (or 'sudo nvidia-modprobe -u "
		             "-c 0'), then restart this container so that the node is passed in.");
	else
		dr_action(
		        f,
		        "Load it: 'sudo modprobe nvidia-uvm' (or 'sudo nvidia-modprobe -u -c "
		        "0'); to have it at boot, add nvidia-uvm to /etc/modules-load.d/. %s",
		        tool ? ""
		             : "nvidia-modprobe is not installed, so CUDA cannot load it itself.");
	strbuf_release(&sb);
}

static void
report_no_kfd(const struct dr_ctx *ctx, struct dr_report *r, struct node *n)
{
	struct dr_finding *f = dr_add(r, "setup.dev.no_kfd", DR_INFO,
	                              "no /dev/kfd: ROCm compute is not available on the AMD GPU");

	node_evidence(ctx, f, n);
	dr_evidence(f, "%s/class/kfd/kfd: absent (the kernel made no KFD device)",
	            ctx->cfg->sysfs_root);
	dr_meaning(f, "amdgpu drives the GPU for graphics (and OpenCL through Mesa's rusticl), "
	              "but ROCm (HIP, PyTorch for ROCm) needs the KFD, which this kernel lacks "
	              "or did not start for this GPU.");
	dr_action(f, "Use a kernel built with CONFIG_HSA_AMD=y (distribution kernels are); 'sudo "
	             "dmesg | grep -i kfd' tells whether it skipped this GPU (an unsupported "
	             "chip, or amdgpu.ppfeaturemask/iommu settings).");
}

static void
judge_set(const struct dr_ctx *ctx, struct node_set *s, const struct container *c, const char *user,
          unsigned user_gid, struct judged *j)
{
	memset(j, 0, sizeof(*j));
	for (size_t i = 0; i < s->nr; i++) {
		struct node *n = &s->v[i];

		node_check(ctx, n);
		if (n->per_card) {
			j->cards++;
			j->present_cards += n->state != NODE_MISSING;
		}
	}
	for (size_t i = 0; i < s->nr; i++) {
		struct node *n = &s->v[i];

		if (n->state == NODE_DENIED) {
			if (needs_relogin(ctx, n, user, user_gid))
				push(j->relogin, &j->nr_relogin, n);
			else
				push(j->denied, &j->nr_denied, n);
		} else if (n->state == NODE_MISSING) {
			if (c->in && n->per_card)
				continue; /* given a subset on purpose: the container finding lists
				             it */
			if (n->kind == NK_UVM)
				j->uvm = n;
			else if (n->kind == NK_KFD &&
			         !file_exists(ctx->cfg->sysfs_root, "class/kfd/kfd") && !c->in)
				j->no_kfd = n;
			else
				push(j->missing, &j->nr_missing, n);
		}
	}
}

static void
check_set(const struct dr_ctx *ctx, struct dr_report *r, struct node_set *s,
          const struct container *c, const char *user, unsigned user_gid, struct strbuf *left_out)
{
	struct strbuf paths = STRBUF_INIT;
	struct dr_finding *f;
	struct judged j;

	if (!s->nr)
		return;
	judge_set(ctx, s, c, user, user_gid, &j);
	if (c->in) {
		for (size_t i = 0; i < s->nr; i++)
			if (s->v[i].state == NODE_MISSING && (s->v[i].per_card || !j.present_cards))
				strbuf_addf(left_out, "%s%s", left_out->len ? ", " : "",
				            s->v[i].path);
		if (!j.present_cards)
			return; /* this vendor's GPUs were not passed in */
	}
	if (j.nr_relogin)
		report_relogin(ctx, r, j.relogin, j.nr_relogin, user);
	if (j.nr_denied)
		report_denied(ctx, r, s, c, j.denied, j.nr_denied, user);
	if (j.nr_missing)
		report_missing(ctx, r, s, c, j.missing, j.nr_missing);
	if (j.uvm)
		report_uvm(ctx, r, c, j.uvm);
	if (j.no_kfd)
		report_no_kfd(ctx, r, j.no_kfd);
	if (j.nr_relogin || j.nr_denied || j.nr_missing || j.uvm)
		return;
	for (size_t i = 0; i < s->nr; i++)
		if (s->v[i].state == NODE_OK)
			strbuf_addf(&paths, "%s%s", paths.len ? ", " : "", s->v[i].path);
	f = dr_add(r, "setup.dev.ok", DR_OK, "this user can open the %s device nodes: %s",
	           s->vendor, paths.buf);
	for (size_t i = 0; i < s->nr; i++)
		if (s->v[i].state == NODE_OK)
			node_evidence(ctx, f, &s->v[i]);
	strbuf_release(&paths);
}

static void
container_gpu(const struct dr_ctx *ctx, struct dr_report *r, const struct container *c,
              const struct strbuf *nodes, const struct strbuf *left_out)
{
	bool note = left_out->len || (ctx->nvml && ctx->nvml->init_rc == NVML_ERROR_UNKNOWN);
	struct dr_finding *f;

	f = dr_add(r, "setup.container.gpu", note ? DR_INFO : DR_OK,
	           "in a container%s with GPU device nodes: %s", c->kind, nodes->buf);
	container_evidence(f, c);
	dr_evidence(f, "passed in: %s", nodes->buf);
	if (left_out->len)
		dr_evidence(f, "not passed in (the host's, as /sys shows them): %s", left_out->buf);
	nvml_unknown_evidence(ctx, f);
	if (note) {
		dr_meaning(f, "Programs here see only the GPUs whose nodes were passed in%s.",
		           ctx->nvml && ctx->nvml->init_rc == NVML_ERROR_UNKNOWN
		                   ? "; NVML failing with 'Unknown Error' while the nodes exist "
		                     "points at the container's device access, not at the nodes"
		                   : "");
		dr_action(f, "Nothing, if this is the set of GPUs meant for this container. "
		             "Otherwise restart it with more ('docker run --gpus all', or "
		             "--gpus '\"device=0,1\"'; '--device /dev/dri/renderD129').");
	}
}

void
dr_check_devices(const struct dr_ctx *ctx, struct dr_report *r)
{
	static const char *const names[NR_SETS] = { "NVIDIA", "AMD", "Intel", "other" };
	struct container c = { .evidence = STRBUF_INIT };
	struct strbuf nodes = STRBUF_INIT, left_out = STRBUF_INIT;
	struct node_set sets[NR_SETS];
	struct pci_gpu *gpus = NULL;
	struct render *rv;
	size_t nr = 0, nr_render = 0, nr_nodes;
	char user[64];
	unsigned user_gid = (unsigned)-1;

	memset(sets, 0, sizeof(sets));
	for (int i = 0; i < NR_SETS; i++)
		sets[i].vendor = names[i];
	detect_container(ctx, &c);
	if (pci_list_gpus(ctx->cfg->sysfs_root, &gpus, &nr, NULL) < 0)
		nr = 0;
	rv = list_renders(ctx, &nr_render);
	nvidia_nodes(ctx, &sets[SET_NVIDIA], gpus, nr);
	drm_nodes(ctx, sets, gpus, nr, rv, nr_render);
	nr_nodes = dev_nodes(ctx, &nodes);
	if (!user_lookup(ctx, ctx->uid, user, sizeof(user), &user_gid))
		user[0] = '\0';

	if (c.in && !nr_nodes) {
		no_gpu(ctx, r, &c, gpus, nr);
		goto out;
	}
	for (int i = 0; i < NR_SETS; i++)
		check_set(ctx, r, &sets[i], &c, user, user_gid, &left_out);
	if (c.in)
		container_gpu(ctx, r, &c, &nodes, &left_out);
out:
	for (int i = 0; i < NR_SETS; i++)
		free(sets[i].v);
	free(rv);
	free(gpus);
	strbuf_release(&nodes);
	strbuf_release(&left_out);
	strbuf_release(&c.evidence);
}

const struct dr_explain dr_catalog_devices[] = {
	{ "setup.container.gpu", "Running in a container that was given GPU device nodes",
	  "doctor runs inside a container: /.dockerenv (Docker), /run/.containerenv\n"
	  "(Podman), container= in the environment of process 1 (systemd-nspawn, LXC,\n"
	  "Podman), a docker, containerd, kubepods, libpod or lxc cgroup in\n"
	  "/proc/1/cgroup or /proc/self/cgroup, or an overlay root file system. A\n"
	  "container sees only the device nodes it was started with, while /sys\n"
	  "usually shows all of the host's GPUs; the finding lists the nodes passed in\n"
	  "and the host's GPUs whose nodes were not (often on purpose: --gpus\n"
	  "'\"device=0\"', one GPU per Kubernetes pod).\n"
	  "If NVML fails with 'Unknown Error' (999) while the nodes are here, the\n"
	  "usual cause is a 'systemctl daemon-reload' on the host (or a systemd\n"
	  "update) that rewrote the container's cgroup device rules: the nodes exist\n"
	  "but opening them is refused. Restarting the container restores access; the\n"
	  "lasting fix is in the setup.nvidia findings (docker's\n"
	  "native.cgroupdriver=cgroupfs, or the NVIDIA Container Toolkit's\n"
	  "nvidia-ctk system create-dev-char-symlinks rule)." },
	{ "setup.container.no_gpu", "A container was started without a GPU",
	  "No GPU device node (/dev/nvidia*, /dev/kfd, /dev/dri/*) exists in this\n"
	  "container. Causes, most likely first:\n"
	  "  1. The container was started without asking for a GPU: docker and podman\n"
	  "     pass no devices by default. NVIDIA: 'docker run --gpus all' (needs the\n"
	  "     NVIDIA Container Toolkit on the host, and 'nvidia-ctk runtime configure\n"
	  "     --runtime=docker'); Podman: '--device nvidia.com/gpu=all' with a CDI\n"
	  "     spec from 'nvidia-ctk cdi generate'. AMD (ROCm): '--device /dev/kfd\n"
	  "     --device /dev/dri --group-add video'. Intel and other DRM GPUs:\n"
	  "     '--device /dev/dri'.\n"
	  "  2. Kubernetes: the pod asks for no GPU ('resources: limits:\n"
	  "     nvidia.com/gpu: 1', amd.com/gpu, gpu.intel.com/i915), or the vendor's\n"
	  "     device plugin is not running on the node.\n"
	  "  3. '--gpus' was given but the toolkit is not set up: docker then fails\n"
	  "     with 'could not select device driver \"\" with capabilities: [[gpu]]'.\n"
	  "  4. The host has no GPU. /sys normally shows the host's PCI bus, so the\n"
	  "     evidence lists any GPU the host has; none there suggests a CPU-only\n"
	  "     host." },
	{ "setup.dev.missing", "A GPU's device node is missing although its driver is loaded",
	  "Each GPU is used through device nodes: NVIDIA's /dev/nvidiactl and\n"
	  "/dev/nvidiaN (N is the 'Device Minor' in /proc/driver/nvidia/gpus/*/\n"
	  "information), a DRM GPU's /dev/dri/renderD* (sysfs links it to its PCI\n"
	  "device under /sys/class/drm), and ROCm's /dev/kfd. Causes:\n"
	  "  1. NVIDIA: the nodes are made by nvidia-modprobe or udev rules, not by the\n"
	  "     kernel; on a headless server without them they are absent until\n"
	  "     'sudo nvidia-modprobe -c 0 -u' (or nvidia-smi run as root) makes them.\n"
	  "  2. udev did not run, or /dev is not a devtmpfs (a chroot, a minimal\n"
	  "     container): sysfs has the node, /dev does not. 'sudo udevadm trigger'.\n"
	  "  3. The driver did not create it: sysfs has no renderD* for the GPU. The\n"
	  "     kernel log says why (firmware missing, an unsupported chip).\n"
	  "  4. In a container: it was given some of the nodes but not this one.\n"
	  "     Tell apart by the evidence: a 'No such file' for the /dev path while\n"
	  "     sysfs lists the node points at udev or the container; no node in sysfs\n"
	  "     at the driver." },
	{ "setup.dev.no_access", "This user cannot open a GPU's device node",
	  "Opening a GPU needs read and write access to its node. doctor decides it\n"
	  "from the node's owner, group and mode (and its POSIX ACL, which\n"
	  "systemd-logind adds for the user at the seat) against the uid and groups\n"
	  "of the session that runs doctor. Causes, most likely first:\n"
	  "  1. The user is not in the node's group: render nodes and /dev/kfd belong\n"
	  "     to 'render' (older distributions: 'video'). 'sudo usermod -aG render\n"
	  "     $USER', then log out and back in.\n"
	  "  2. The user was added to the group after logging in: groups are read at\n"
	  "     login, so the running session still lacks it ('id' shows the\n"
	  "     session's groups, 'getent group render' the configured members). A new\n"
	  "     login or 'newgrp render' fixes it. doctor reports this case as\n"
	  "     setup.dev.relogin when /etc/group lists the user.\n"
	  "  3. In a container, the node keeps the host's gid, which may have no name\n"
	  "     inside: start it with '--group-add GID'.\n"
	  "  4. A udev rule or driver option made the node stricter than usual (NVIDIA:\n"
	  "     NVreg_DeviceFileMode, NVreg_DeviceFileGID, NVreg_DeviceFileUID; DRM: a\n"
	  "     rule in /etc/udev/rules.d). A mode that admits no group cannot be fixed\n"
	  "     by joining one." },
	{ "setup.dev.no_kfd", "An AMD GPU without ROCm's /dev/kfd",
	  "ROCm (HIP, PyTorch for ROCm, TensorFlow-ROCm) opens /dev/kfd, the HSA\n"
	  "kernel fusion driver's node, besides the render node. It exists when\n"
	  "amdgpu is built with CONFIG_HSA_AMD and found a GPU it supports; then\n"
	  "/sys/class/kfd/kfd exists too. Without it graphics, Vulkan and Mesa's\n"
	  "OpenCL still work; ROCm does not. 'dmesg | grep -i kfd' tells whether the\n"
	  "kernel skipped the GPU and why." },
	{ "setup.dev.nvidia_uvm", "/dev/nvidia-uvm is missing",
	  "CUDA opens /dev/nvidia-uvm (unified memory) as well as /dev/nvidiactl and\n"
	  "/dev/nvidiaN; nvidia-smi does not, so nvidia-smi works while CUDA fails\n"
	  "(cudaErrorUnknown, 'CUDA driver initialization failed', PyTorch's 'CUDA\n"
	  "unknown error'). The node appears when the nvidia-uvm module is loaded.\n"
	  "On a host, libcuda loads it by running the setuid nvidia-modprobe, so it\n"
	  "is only a fault where nvidia-modprobe is missing or not setuid; 'sudo\n"
	  "modprobe nvidia-uvm' (and nvidia-uvm in /etc/modules-load.d) makes it\n"
	  "certain. In a container nothing can load it: load it on the host and\n"
	  "restart the container." },
	{ "setup.dev.ok", "This user can open the GPU's device nodes",
	  "Every device node the GPUs present need (NVIDIA: nvidiactl, nvidiaN,\n"
	  "nvidia-uvm; DRM GPUs: their render node; AMD: /dev/kfd) exists and admits\n"
	  "this user for reading and writing. Access was decided from owner, group,\n"
	  "mode and ACL; a container's device cgroup can still refuse an open." },
	{ "setup.dev.relogin", "The user is in the GPU's group, but this session predates it",
	  "/etc/group lists the user as a member of the group that owns the device\n"
	  "node (or it is the user's primary group in /etc/passwd), yet the groups of\n"
	  "the session running doctor do not include it: the user was added with\n"
	  "usermod after logging in. Group membership is fixed at login, for every\n"
	  "process started from that session (a tmux or screen server, a desktop\n"
	  "session, systemd --user services keep the old set). Log out entirely and\n"
	  "back in, or run 'newgrp GROUP' for one shell; 'id' then lists the group." },
	{ NULL, NULL, NULL },
};
