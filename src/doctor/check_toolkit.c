/*
 * setup.cuda.toolkit*: the CUDA toolkits installed, found by reading files
 * only (nvcc is never run), and whether the driver can run what each one
 * builds, by the release table of cudaver.h (data/cuda/drivers.tsv).
 *
 * Where toolkits are looked for, and the facts about their layouts:
 *  - the first nvcc on PATH, symbolic links resolved under the root;
 *    <prefix>/bin/nvcc gives the prefix. A small "#!" script naming
 *    another nvcc is followed: Debian's and Ubuntu's nvidia-cuda-toolkit
 *    installs /usr/bin/nvcc as "#!/bin/sh / exec
 *    /usr/lib/nvidia-cuda-toolkit/bin/nvcc "$@"";
 *  - CUDA_HOME and CUDA_PATH, /usr/local/cuda (NVIDIA's packages make it a
 *    link to /usr/local/cuda-X.Y) and every /usr/local/cuda-*;
 *  - /usr/lib/nvidia-cuda-toolkit (Debian's package: bin/, libdevice/,
 *    compute-sanitizer/, no version file; its libcudart is
 *    /usr/lib/<triplet>/libcudart.so.X.Y.Z, from libcudartN);
 *  - a libcudart.so.X.Y.Z in an LD_LIBRARY_PATH directory outside them.
 * The version comes from, in order: <prefix>/version.json (parsed by
 * jansson, core/jsonin.h; CUDA 11.1 on:
 * {"cuda": {"name": "CUDA SDK", "version": "12.4.1"}, ...}),
 * <prefix>/version.txt (up to 11.0: "CUDA Version 10.2.89"), CUDART_VERSION
 * in include/cuda_runtime_api.h (13000: every toolkit has it, also one
 * assembled from pip wheels, which has neither version file), and the
 * real file names of libcudart (libcudart.so.12.4.127; the runtime's own
 * third number, not the toolkit update's).
 */
#include "doctor/doctor.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/nvml_probe.h"
#include "core/config.h"
#include "core/err.h"
#include "core/fileio.h"
#include "core/gpu.h"
#include "core/jsonin.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "doctor/cudaver.h"

/* NVIDIA's version.json is 2 to 3 KiB (CUDA 12); a file past this is no such file */
#define VERSION_JSON_MAX (64 * 1024)

/* How a toolkit was found (several at once once deduplicated). */
enum tk_via {
	VIA_PATH = 1 << 0,      /* the first nvcc on PATH */
	VIA_CUDA_HOME = 1 << 1, /* $CUDA_HOME */
	VIA_CUDA_PATH = 1 << 2, /* $CUDA_PATH */
	VIA_DEFAULT = 1 << 3,   /* /usr/local/cuda */
	VIA_LOCAL = 1 << 4,     /* /usr/local/cuda-* */
	VIA_DEBIAN = 1 << 5,    /* /usr/lib/nvidia-cuda-toolkit */
	VIA_LDPATH = 1 << 6,    /* a libcudart in an LD_LIBRARY_PATH directory */
};

struct toolkit {
	char real[PATH_MAX]; /* the prefix, links resolved ("/usr/local/cuda-12.4") */
	unsigned via;        /* enum tk_via */
	bool runtime_only;   /* only a libcudart (LD_LIBRARY_PATH) */
	char version[32];    /* "12.4.1", "13.0"; "" unknown */
	int major, minor;
	struct strbuf found;  /* evidence: how it was found */
	struct strbuf from;   /* evidence: where the version was read */
	struct strbuf cudart; /* evidence: libcudart files */
	struct strbuf tried;  /* what was read without finding a version */
};

struct tk_list {
	struct toolkit *v;
	size_t nr, alloc;
};

/* What is known of the driver. */
struct driver {
	char version[80]; /* "" unknown */
	int cuda;         /* 12040 form; 0 unknown */
	char from[320];   /* where it was read */
	bool nvidia_gpu;  /* an NVIDIA GPU is there */
	bool consumer;    /* a GeForce or TITAN: no forward compatibility */
};

/* --- paths under the root ----------------------------------------------------- */

/*
 * abs (absolute, as on the machine) with every symbolic link resolved
 * inside the root (an absolute target restarts at the root), into out.
 * Returns 0, or -1 when a component is missing or links loop.
 */
static int
resolve(const struct dr_ctx *ctx, const char *abs, char *out, size_t size)
{
	char todo[PATH_MAX], done[PATH_MAX] = "", full[PATH_MAX], next[PATH_MAX];
	char target[PATH_MAX];
	const char *p;
	int hops = 0;

	if (snprintf(todo, sizeof(todo), "%s", abs) >= (int)sizeof(todo))
		return -1;
	p = todo;
	while (*p) {
		size_t len, dlen = strlen(done);
		struct stat st;
		ssize_t n;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (!len)
			break;
		if (len == 1 && p[0] == '.') {
			p += len;
			continue;
		}
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			char *slash = strrchr(done, '/');

			if (slash)
				*slash = '\0';
			p += len;
			continue;
		}
		if (dlen + 1 + len >= sizeof(done))
			return -1;
		snprintf(done + dlen, sizeof(done) - dlen, "/%.*s", (int)len, p);
		p += len;
		dr_path(ctx, full, sizeof(full), done);
		if (lstat(full, &st))
			return -1;
		if (!S_ISLNK(st.st_mode))
			continue;
		if (++hops > 40)
			return -1;
		n = readlink(full, target, sizeof(target) - 1);
		if (n <= 0)
			return -1;
		target[n] = '\0';
		done[dlen] = '\0'; /* the link's directory */
		if (target[0] == '/')
			done[0] = '\0';
		if (snprintf(next, sizeof(next), "%s%s", target, p) >= (int)sizeof(next))
			return -1;
		memcpy(todo, next, sizeof(todo));
		p = todo;
	}
	snprintf(out, size, "%s", done[0] ? done : "/");
	return 0;
}

/* Is abs (under the root, links followed) a regular file? */
static bool
is_file(const struct dr_ctx *ctx, const char *abs)
{
	char path[PATH_MAX];
	struct stat st;

	dr_path(ctx, path, sizeof(path), abs);
	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/*
 * Read at most cap bytes of the regular file abs (under the root) into sb;
 * 0 or -1. Opened without blocking and checked before reading: a FIFO or a
 * device named version.json or nvcc is not read (opening a FIFO waits for
 * a writer for ever).
 */
static int
read_abs(const struct dr_ctx *ctx, const char *abs, struct strbuf *sb, size_t cap)
{
	char path[PATH_MAX];

	return file_read_regular(dr_path(ctx, path, sizeof(path), abs), sb, cap);
}

/* "12.4.1" -> major 12, minor 4; false when there is no "X.Y". */
static bool
parse_ver(const char *v, int *major, int *minor)
{
	char *end;
	long a, b;

	a = strtol(v, &end, 10);
	if (end == v || *end != '.')
		return false;
	v = end + 1;
	b = strtol(v, &end, 10);
	if (end == v || a < 1 || a > 99 || b < 0 || b > 99)
		return false;
	*major = (int)a;
	*minor = (int)b;
	return true;
}

static void
set_version(struct toolkit *t, const char *v, size_t len)
{
	snprintf(t->version, sizeof(t->version), "%.*s", (int)len, v);
	if (!parse_ver(t->version, &t->major, &t->minor))
		t->version[0] = '\0';
}

/* The length of "12.4" in libcudart's "12.4.127": its third number is its own. */
static size_t
runtime_len(const char *v)
{
	size_t n = strcspn(v, ".");

	return v[n] ? n + 1 + strspn(v + n + 1, "0123456789") : n;
}

/* --- where the version is written ---------------------------------------------- */

/*
 * version.json: the "version" string of the top-level "cuda" object, the
 * file parsed by jansson (core/jsonin.h). What is wrong with a file that
 * is there goes to t->tried, one line.
 */
static bool
version_json(const struct dr_ctx *ctx, struct toolkit *t)
{
	struct strbuf sb = STRBUF_INIT;
	struct err err = ERR_INIT;
	char path[PATH_MAX];
	const json_t *cuda, *v;
	json_t *root = NULL;
	bool got = false;

	path_fmt(path, sizeof(path), "%s/version.json", t->real);
	if (read_abs(ctx, path, &sb, VERSION_JSON_MAX + 1) < 0)
		goto out;
	if (sb.len > VERSION_JSON_MAX) {
		strbuf_addf(&t->tried, "%s: over 64 KiB, not CUDA's version.json; ", path);
		goto out;
	}
	root = jsonin_object(sb.buf, sb.len, path, &err);
	if (!root) {
		strbuf_addf(&t->tried, "%s; ", err.msg);
		goto out;
	}
	cuda = json_object_get(root, "cuda");
	v = json_is_object(cuda) ? json_object_get(cuda, "version") : NULL;
	if (!v) {
		strbuf_addf(&t->tried, "%s: no \"cuda\" version; ", path);
		goto out;
	}
	if (json_is_string(v)) {
		set_version(t, json_string_value(v), json_string_length(v));
		got = t->version[0];
	}
	if (got)
		strbuf_addf(&t->from, "%s: \"cuda\": { \"version\": \"%s\" }", path, t->version);
	else
		strbuf_addf(&t->tried, "%s: no \"cuda\" version string; ", path);
out:
	json_decref(root);
	strbuf_release(&sb);
	return got;
}

/* version.txt: "CUDA Version 10.2.89". */
static bool
version_txt(const struct dr_ctx *ctx, struct toolkit *t)
{
	struct strbuf sb = STRBUF_INIT;
	char path[PATH_MAX], line[128];
	const char *p;
	int rc;

	path_fmt(path, sizeof(path), "%s/version.txt", t->real);
	rc = read_abs(ctx, path, &sb, 4096);
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(sb.buf, "\r\n"), sb.buf);
	strbuf_release(&sb);
	if (rc < 0)
		return false;
	p = strstr(line, "CUDA Version ");
	if (!p) {
		strbuf_addf(&t->tried, "%s: \"%s\"; ", path, line);
		return false;
	}
	p += 13;
	set_version(t, p, strspn(p, "0123456789."));
	if (!t->version[0])
		return false;
	strbuf_addf(&t->from, "%s: \"%s\"", path, line);
	return true;
}

/* include/cuda_runtime_api.h: "#define CUDART_VERSION 12040". */
static bool
version_header(const struct dr_ctx *ctx, struct toolkit *t, const char *incdir)
{
	struct strbuf sb = STRBUF_INIT;
	char path[PATH_MAX];
	const char *p;
	bool got = false;

	path_fmt(path, sizeof(path), "%s/cuda_runtime_api.h", incdir);
	if (read_abs(ctx, path, &sb, 256 * 1024) < 0)
		goto out;
	p = strstr(sb.buf, "#define CUDART_VERSION");
	if (p) {
		long v = strtol(p + 22, NULL, 10);

		if (v >= 1000) {
			snprintf(t->version, sizeof(t->version), "%ld.%ld", v / 1000,
			         v % 1000 / 10);
			got = parse_ver(t->version, &t->major, &t->minor);
		}
	}
	if (got)
		strbuf_addf(&t->from, "%s: CUDART_VERSION %ld", path, strtol(p + 22, NULL, 10));
	else
		strbuf_addf(&t->tried, "%s: no CUDART_VERSION; ", path);
out:
	strbuf_release(&sb);
	return got;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The libcudart.so.* files (not links) of dir (absolute, resolved) into
 * t->cudart; the newest "X.Y..." of their names into best (when there is
 * one). Returns how many there are.
 */
static size_t
scan_cudart(const struct dr_ctx *ctx, struct toolkit *t, const char *dir, char *best, size_t size)
{
	char path[PATH_MAX];
	char **names = NULL;
	size_t nr = 0, alloc = 0;
	struct dirent *de;
	DIR *d;

	dr_path(ctx, path, sizeof(path), dir);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char file[PATH_MAX];
		struct stat st;

		if (strncmp(de->d_name, "libcudart.so.", 13))
			continue;
		if (snprintf(file, sizeof(file), "%s/%s", path, de->d_name) >= (int)sizeof(file) ||
		    lstat(file, &st) || !S_ISREG(st.st_mode))
			continue;
		ALLOC_GROW(names, nr + 1, alloc);
		names[nr++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (nr > 1)
		qsort(names, nr, sizeof(*names), cmp_str);
	for (size_t i = 0; i < nr; i++) {
		const char *v = names[i] + 13;
		int a, b;

		strbuf_addf(&t->cudart, "%s%s/%s", t->cudart.len ? ", " : "", dir, names[i]);
		if (best && parse_ver(v, &a, &b) && (!best[0] || ver_cmp(v, best) > 0))
			snprintf(best, size, "%s", v);
		free(names[i]);
	}
	free(names);
	return nr;
}

/* The library directories of the toolkit at prefix, resolved and deduplicated. */
static size_t
lib_dirs(const struct dr_ctx *ctx, const struct toolkit *t, char dirs[][PATH_MAX], size_t max)
{
	static const char *const sub[] = { "lib64", "targets/x86_64-linux/lib",
		                           "targets/sbsa-linux/lib", "lib" };
	static const char *const debian[] = { "/usr/lib/x86_64-linux-gnu",
		                              "/usr/lib/aarch64-linux-gnu" };
	size_t n = 0;

	for (size_t i = 0; i < (t->via & VIA_DEBIAN ? 2u : 4u) && n < max; i++) {
		char abs[PATH_MAX], real[PATH_MAX];
		bool dup = false;

		if (t->via & VIA_DEBIAN)
			snprintf(abs, sizeof(abs), "%s", debian[i]);
		else
			path_fmt(abs, sizeof(abs), "%s/%s", t->real, sub[i]);
		if (resolve(ctx, abs, real, sizeof(real)))
			continue;
		for (size_t j = 0; j < n; j++)
			dup |= !strcmp(dirs[j], real);
		if (!dup)
			snprintf(dirs[n++], PATH_MAX, "%s", real);
	}
	return n;
}

static void
read_version(const struct dr_ctx *ctx, struct toolkit *t)
{
	char dirs[4][PATH_MAX], best[32] = "", inc[PATH_MAX];
	size_t n = lib_dirs(ctx, t, dirs, 4);

	for (size_t i = 0; i < n; i++)
		scan_cudart(ctx, t, dirs[i], best, sizeof(best));
	if (version_json(ctx, t) || version_txt(ctx, t))
		return;
	if (t->via & VIA_DEBIAN)
		snprintf(inc, sizeof(inc), "/usr/include");
	else
		path_fmt(inc, sizeof(inc), "%s/include", t->real);
	if (version_header(ctx, t, inc))
		return;
	if (best[0]) {
		set_version(t, best, runtime_len(best));
		if (t->version[0])
			strbuf_addf(&t->from, "libcudart.so.%s (the runtime's version)", best);
	}
}

/* --- finding the toolkits -------------------------------------------------------- */

static void
tk_release(struct tk_list *l)
{
	for (size_t i = 0; i < l->nr; i++) {
		strbuf_release(&l->v[i].found);
		strbuf_release(&l->v[i].from);
		strbuf_release(&l->v[i].cudart);
		strbuf_release(&l->v[i].tried);
	}
	free(l->v);
}

static struct toolkit *
tk_find(struct tk_list *l, const char *real)
{
	for (size_t i = 0; i < l->nr; i++)
		if (!strcmp(l->v[i].real, real))
			return &l->v[i];
	return NULL;
}

/* Does the directory real hold a toolkit? */
static bool
is_toolkit(const struct dr_ctx *ctx, const char *real)
{
	static const char *const marks[] = { "bin/nvcc", "version.json", "version.txt" };
	char abs[PATH_MAX];

	for (size_t i = 0; i < ARRAY_SIZE(marks); i++) {
		path_fmt(abs, sizeof(abs), "%s/%s", real, marks[i]);
		if (is_file(ctx, abs))
			return true;
	}
	return false;
}

/*
 * Add the toolkit at prefix (as named: how) found by via, or add via to
 * the one already there. force: add it even without the marks of a
 * toolkit (an nvcc was found there). Returns it, or NULL.
 */
static struct toolkit *
tk_add(const struct dr_ctx *ctx, struct tk_list *l, const char *prefix, unsigned via,
       const char *how, bool force)
{
	char real[PATH_MAX];
	struct toolkit *t;

	if (resolve(ctx, prefix, real, sizeof(real)))
		return NULL;
	t = tk_find(l, real);
	if (!t) {
		if (!force && !is_toolkit(ctx, real))
			return NULL;
		ALLOC_GROW(l->v, l->nr + 1, l->alloc);
		t = &l->v[l->nr++];
		memset(t, 0, sizeof(*t));
		snprintf(t->real, sizeof(t->real), "%s", real);
		strbuf_init(&t->found, 0);
		strbuf_init(&t->from, 0);
		strbuf_init(&t->cudart, 0);
		strbuf_init(&t->tried, 0);
		if (!strcmp(real, "/usr/lib/nvidia-cuda-toolkit"))
			via |= VIA_DEBIAN;
	}
	t->via |= via;
	strbuf_addf(&t->found, "%s%s", t->found.len ? "; " : "", how);
	return t;
}

/* In a short "#!" script at abs, the absolute path of the nvcc it runs, into out. */
static bool
wrapper_target(const struct dr_ctx *ctx, const char *abs, char *out, size_t size)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p, *q;
	bool got = false;

	if (read_abs(ctx, abs, &sb, 4096) < 0 || strncmp(sb.buf, "#!", 2))
		goto out;
	for (p = sb.buf; (p = strstr(p, "exec ")); p += 5) {
		size_t len;

		q = p + 5;
		q += strspn(q, " \t");
		len = strcspn(q, " \t\n\"'");
		if (*q == '/' && len > 9 && !strncmp(q + len - 9, "/bin/nvcc", 9)) {
			snprintf(out, size, "%.*s", (int)len, q);
			got = true;
			break;
		}
	}
out:
	strbuf_release(&sb);
	return got;
}

/* The first nvcc on PATH. */
static void
find_on_path(const struct dr_ctx *ctx, struct tk_list *l)
{
	const char *path = ctx->getenv("PATH");
	char nvcc[PATH_MAX], real[PATH_MAX], wrapped[PATH_MAX], how[3 * PATH_MAX];

	for (const char *p = path; p && *p;) {
		size_t len = strcspn(p, ":");

		if (len && *p == '/' &&
		    snprintf(nvcc, sizeof(nvcc), "%.*s/nvcc", (int)len, p) < (int)sizeof(nvcc) &&
		    !resolve(ctx, nvcc, real, sizeof(real)) && is_file(ctx, real)) {
			size_t rl = strlen(real);
			char prefix[PATH_MAX];

			snprintf(how, sizeof(how), "nvcc on PATH: %s%s%s", nvcc,
			         strcmp(nvcc, real) ? " -> " : "", strcmp(nvcc, real) ? real : "");
			if (wrapper_target(ctx, real, wrapped, sizeof(wrapped)) &&
			    !resolve(ctx, wrapped, real, sizeof(real))) {
				size_t hl = strlen(how);

				snprintf(how + hl, sizeof(how) - hl, ", a script that runs %s",
				         wrapped);
				rl = strlen(real);
			}
			if (rl > 9 && !strcmp(real + rl - 9, "/bin/nvcc"))
				snprintf(prefix, sizeof(prefix), "%.*s", (int)(rl - 9), real);
			else
				snprintf(prefix, sizeof(prefix), "%s", real);
			tk_add(ctx, l, prefix, VIA_PATH, how, true);
			return;
		}
		p += len;
		p += *p == ':';
	}
}

/* CUDA_HOME or CUDA_PATH: a toolkit, or a finding that it names none. */
static void
find_env(const struct dr_ctx *ctx, struct tk_list *l, struct dr_report *r, const char *name,
         unsigned via)
{
	const char *v = ctx->getenv(name);
	char how[PATH_MAX + 64], path[PATH_MAX];
	struct dr_finding *f;

	if (!v || !*v)
		return;
	snprintf(how, sizeof(how), "$%s=%s", name, v);
	if (*v == '/' && tk_add(ctx, l, v, via, how, false))
		return;
	f = dr_add(r, "setup.cuda.toolkit_home_missing", DR_WARNING, "%s=%s names no CUDA toolkit",
	           name, v);
	dr_evidence(f, "environment: %s=\"%s\"", name, v);
	dr_evidence(f, "%s: no bin/nvcc, version.json or version.txt there",
	            dr_path(ctx, path, sizeof(path), v));
	dr_meaning(f,
	           "Builds that take the toolkit from %s use it as it is and fail: PyTorch's "
	           "extension builds (torch.utils.cpp_extension, setup.py of flash-attn, "
	           "apex, ...) stop with \"No such file or directory: '%s/bin/nvcc'\".",
	           name, v);
	dr_action(f,
	          "Point %s at an installed toolkit (export %s=/usr/local/cuda), or unset it "
	          "('unset %s') and look for the export in your shell's start-up files.",
	          name, name, name);
}

/* Every /usr/local/cuda-*, in name order. */
static void
find_local(const struct dr_ctx *ctx, struct tk_list *l)
{
	char path[PATH_MAX];
	char **names = NULL;
	size_t nr = 0, alloc = 0;
	struct dirent *de;
	DIR *d;

	dr_path(ctx, path, sizeof(path), "/usr/local");
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "cuda-", 5)) {
			ALLOC_GROW(names, nr + 1, alloc);
			names[nr++] = xstrdup(de->d_name);
		}
	closedir(d);
	if (nr > 1)
		qsort(names, nr, sizeof(*names), cmp_str);
	for (size_t i = 0; i < nr; i++) {
		char abs[PATH_MAX], how[PATH_MAX + 32];

		snprintf(abs, sizeof(abs), "/usr/local/%s", names[i]);
		snprintf(how, sizeof(how), "%s", abs);
		tk_add(ctx, l, abs, VIA_LOCAL, how, false);
		free(names[i]);
	}
	free(names);
}

/* Is dir (resolved) inside the toolkit t? */
static bool
inside(const struct toolkit *t, const char *dir)
{
	size_t n = strlen(t->real);

	return !strncmp(dir, t->real, n) && (dir[n] == '/' || !dir[n]);
}

/* libcudart in the LD_LIBRARY_PATH directories. */
static void
find_ldpath(const struct dr_ctx *ctx, struct tk_list *l)
{
	const char *v = ctx->getenv("LD_LIBRARY_PATH");

	for (const char *p = v; p && *p;) {
		size_t len = strcspn(p, ":");
		char dir[PATH_MAX], real[PATH_MAX], best[32] = "";
		struct toolkit *t = NULL, tmp;

		if (len && *p == '/' &&
		    snprintf(dir, sizeof(dir), "%.*s", (int)len, p) < (int)len + 1 &&
		    !resolve(ctx, dir, real, sizeof(real))) {
			for (size_t i = 0; i < l->nr && !t; i++)
				if (inside(&l->v[i], real))
					t = &l->v[i];
			if (t) {
				t->via |= VIA_LDPATH;
			} else {
				memset(&tmp, 0, sizeof(tmp));
				strbuf_init(&tmp.cudart, 0);
				if (scan_cudart(ctx, &tmp, real, best, sizeof(best)) && best[0]) {
					char how[PATH_MAX + 64];

					snprintf(how, sizeof(how), "LD_LIBRARY_PATH: %s", dir);
					t = tk_add(ctx, l, real, VIA_LDPATH, how, true);
				}
				if (t && !t->cudart.len) {
					t->runtime_only = true;
					strbuf_addbuf(&t->cudart, &tmp.cudart);
					set_version(t, best, runtime_len(best));
					strbuf_addf(&t->from,
					            "libcudart.so.%s (the runtime's version)",
					            best);
				}
				strbuf_release(&tmp.cudart);
			}
		}
		p += len;
		p += *p == ':';
	}
}

/* --- the driver ----------------------------------------------------------------- */

static void
read_driver(const struct dr_ctx *ctx, struct driver *d)
{
	const struct nvml_probe *n = ctx->nvml;
	const struct gpu_snapshot *s = ctx->snap;

	memset(d, 0, sizeof(*d));
	if (n && n->loaded && n->init_rc == 0 && (n->driver_version[0] || n->cuda_version)) {
		snprintf(d->version, sizeof(d->version), "%s", n->driver_version);
		d->cuda = n->cuda_version;
		snprintf(d->from, sizeof(d->from), "NVML (%s)",
		         n->library[0] ? n->library : "loaded");
		d->nvidia_gpu = true;
	} else if (s && (s->nvidia.driver_version[0] || s->nvidia.cuda_version)) {
		snprintf(d->version, sizeof(d->version), "%s", s->nvidia.driver_version);
		d->cuda = s->nvidia.cuda_version;
		snprintf(d->from, sizeof(d->from), "the GPU snapshot%s%s",
		         s->nvidia.library[0] ? ": " : "", s->nvidia.library);
	}
	if (!d->cuda && d->version[0])
		d->cuda = cuda_for_driver(d->version);
	for (size_t i = 0; s && i < s->nr_dev; i++) {
		if (s->dev[i].vendor != VENDOR_NVIDIA)
			continue;
		d->nvidia_gpu = true;
		if (strstr(s->dev[i].name, "GeForce") || strstr(s->dev[i].name, "TITAN"))
			d->consumer = true;
	}
}

/* "driver 550.54.15 (CUDA 12.4)" */
static const char *
driver_str(const struct driver *d, char *buf, size_t size)
{
	char c[16];

	if (d->version[0] && d->cuda)
		snprintf(buf, size, "driver %s (CUDA %s)", d->version,
		         cuda_ver_str(d->cuda, c, sizeof(c)));
	else if (d->version[0])
		snprintf(buf, size, "driver %s", d->version);
	else
		snprintf(buf, size, "the driver (CUDA %s)", cuda_ver_str(d->cuda, c, sizeof(c)));
	return buf;
}

/* --- the findings --------------------------------------------------------------- */

/* The table's row for t: its exact release, or the GA of major.minor. */
static const struct cuda_release *
release_of(const struct toolkit *t)
{
	const struct cuda_release *v;
	size_t n = cuda_releases(&v);

	if (strchr(strchr(t->version, '.') + 1, '.') && !t->runtime_only)
		for (size_t i = 0; i < n; i++)
			if (!ver_cmp(v[i].cuda, t->version))
				return &v[i];
	return cuda_release_find(t->major, t->minor);
}

static void
add_evidence(struct dr_finding *f, const struct toolkit *t, const struct driver *d)
{
	const struct cuda_release *rel = release_of(t);

	dr_evidence(f, "found as: %s", t->found.buf);
	if (t->from.len)
		dr_evidence(f, "version: %s", t->from.buf);
	if (t->cudart.len)
		dr_evidence(f, "libcudart: %s", t->cudart.buf);
	if (d && (d->version[0] || d->cuda)) {
		char buf[128];

		dr_evidence(f, "%s, from %s", driver_str(d, buf, sizeof(buf)), d->from);
	}
	if (rel && rel->major < 11)
		dr_evidence(f,
		            "data/cuda/drivers.tsv: CUDA %s needs driver >= %s (no minor-version "
		            "compatibility before CUDA 11)",
		            rel->cuda, rel->min_driver[0] ? rel->min_driver : "? (not confirmed)");
	else if (rel)
		dr_evidence(f,
		            "data/cuda/drivers.tsv: CUDA %s needs driver >= %s (full support), "
		            ">= %s (minor-version compatibility)",
		            rel->cuda, rel->min_driver[0] ? rel->min_driver : "? (not confirmed)",
		            rel->compat_driver[0] ? rel->compat_driver : "?");
}

/* "CUDA 12.4 toolkit (/usr/local/cuda-12.4)" */
static const char *
tk_name(const struct toolkit *t, char *buf, size_t size)
{
	snprintf(buf, size, "CUDA %s %s (%s)", t->version, t->runtime_only ? "runtime" : "toolkit",
	         t->real);
	return buf;
}

/* The install command for the toolkit CUDA c (12040 form). */
static void
toolkit_pkg(int c, char *buf, size_t size)
{
	snprintf(buf, size, "cuda-toolkit-%d-%d", c / 1000, c % 1000 / 10);
}

static void
driver_upgrade(struct strbuf *sb, const struct cuda_release *rel, const struct toolkit *t)
{
	if (rel && rel->min_driver[0]) {
		char branch[16];

		snprintf(branch, sizeof(branch), "%.*s", (int)strcspn(rel->min_driver, "."),
		         rel->min_driver);
		strbuf_addf(sb,
		            "update the driver to %s or newer, the table's minimum for CUDA %s "
		            "(Ubuntu: 'sudo apt install nvidia-driver-%s', or NVIDIA's repository: "
		            "'sudo apt install cuda-drivers'; then reboot)",
		            rel->min_driver, rel->cuda, branch);
	} else {
		strbuf_addf(sb,
		            "update the driver to one that supports CUDA %d.%d (the table has no "
		            "confirmed minimum: see the CUDA %d.%d release notes, section \"CUDA "
		            "Driver\")",
		            t->major, t->minor, t->major, t->minor);
	}
}

static void
report_one(const struct dr_ctx *ctx, struct dr_report *r, const struct toolkit *t,
           const struct driver *d)
{
	const struct cuda_release *rel;
	enum cuda_support s;
	struct dr_finding *f;
	struct strbuf act = STRBUF_INIT;
	char name[PATH_MAX + 64], drv[128], have[16], tk[16], pkg[32];
	int tk_cuda;

	(void)ctx;
	if (!t->version[0]) {
		f = dr_add(r, "setup.cuda.toolkit_version_unknown", DR_INFO,
		           "a CUDA %s at %s whose version could not be read",
		           t->runtime_only ? "runtime" : "toolkit", t->real);
		dr_evidence(f, "found as: %s", t->found.buf);
		dr_evidence(f, "read: %s/version.json, %s/version.txt (none there)%s%s", t->real,
		            t->real, t->tried.len ? "; " : "", t->tried.buf);
		if (t->cudart.len)
			dr_evidence(f, "libcudart: %s", t->cudart.buf);
		dr_meaning(f, "Without its version doctor cannot tell whether the driver runs what "
		              "it builds.");
		dr_action(f, "Run '%s/bin/nvcc --version' to see it (the \"release X.Y\" line).",
		          t->real);
		return;
	}
	tk_name(t, name, sizeof(name));
	if (!d->version[0] && !d->cuda) {
		f = dr_add(
		        r, "setup.cuda.toolkit_no_driver", DR_INFO,
		        "%s: no NVIDIA driver here, so what it builds cannot run on this machine",
		        name);
		add_evidence(f, t, NULL);
		if (ctx->nvml && ctx->nvml->load_error[0]) /* "nvml: ..." already */
			dr_evidence(f, "%s", ctx->nvml->load_error);
		else if (ctx->nvml && ctx->nvml->init_error[0])
			dr_evidence(f, "NVML: nvmlInit: %s", ctx->nvml->init_error);
		else
			dr_evidence(f,
			            "no NVML answer and no NVIDIA driver version in the snapshot");
		dr_meaning(
		        f,
		        "Compiling and linking work: nvcc needs no GPU. Running needs the NVIDIA "
		        "driver (libcuda.so) and a GPU: here a CUDA program stops at its first "
		        "call with cudaErrorInsufficientDriver (\"CUDA driver version is "
		        "insufficient for CUDA runtime version\") or cudaErrorNoDevice.");
		rel = release_of(t);
		if (rel && rel->min_driver[0])
			dr_action(
			        f,
			        "Nothing, if this machine only builds. To run here, install the "
			        "NVIDIA driver %s or newer (the minimum for CUDA %s) on a machine "
			        "with an NVIDIA GPU.",
			        rel->min_driver, rel->cuda);
		else
			dr_action(f,
			          "Nothing, if this machine only builds. To run here, install an "
			          "NVIDIA driver that supports this CUDA, on a machine with an "
			          "NVIDIA GPU.");
		return;
	}
	s = cuda_support(d->cuda, d->version, t->major, t->minor);
	rel = release_of(t);
	driver_str(d, drv, sizeof(drv));
	cuda_ver_str(d->cuda, have, sizeof(have));
	/* the toolkit to suggest: R565 drivers say CUDA 12.7, which has no toolkit */
	tk_cuda = cuda_toolkit_for(d->cuda);
	cuda_ver_str(tk_cuda, tk, sizeof(tk));
	toolkit_pkg(tk_cuda, pkg, sizeof(pkg));
	switch (s) {
	case CUDA_FULL:
		f = dr_add(r, "setup.cuda.toolkit", DR_OK,
		           "%s: the %s supports CUDA %d.%d: fine as it is, no driver update needed",
		           name, drv, t->major, t->minor);
		add_evidence(f, t, d);
		break;
	case CUDA_MINOR_COMPAT:
		f = dr_add(r, "setup.cuda.toolkit_minor_compat", DR_WARNING,
		           "%s is newer than the %s: its programs run only through minor-version "
		           "compatibility",
		           name, drv);
		add_evidence(f, t, d);
		dr_meaning(f,
		           "Programs built with it start (this driver meets the CUDA %d.x floor "
		           "of minor-version compatibility) but with limits: PTX that this toolkit "
		           "made cannot be JIT-compiled by the older driver "
		           "(cudaErrorUnsupportedPtxVersion, \"PTX JIT compilation failed\"), so "
		           "they must carry SASS for the GPU; APIs newer than CUDA %s fail with "
		           "cudaErrorCallRequiresNewerDriver.",
		           t->major, have);
		strbuf_addstr(&act,
		              "Fine if the programs ship SASS for the GPU "
		              "('nvcc -gencode arch=compute_XX,code=sm_XX'). For full support, ");
		driver_upgrade(&act, rel, t);
		if (tk_cuda)
			strbuf_addf(&act,
			            "; or build with CUDA %s, the newest toolkit this driver fully "
			            "supports ('sudo apt install %s' from NVIDIA's repository)",
			            tk, pkg);
		strbuf_addch(&act, '.');
		dr_action(f, "%s", act.buf);
		break;
	case CUDA_TOO_NEW:
	case CUDA_UNKNOWN:
	default:
		if (s != CUDA_TOO_NEW) {
			f = dr_add(r, "setup.cuda.toolkit_no_driver", DR_INFO,
			           "%s: whether the %s runs what it builds could not be told", name,
			           drv);
			add_evidence(f, t, d);
			dr_meaning(
			        f,
			        "The driver's CUDA version is not known well enough to compare.");
			dr_action(f,
			          "Run 'nvidia-smi' and compare its \"CUDA Version\" with %d.%d.",
			          t->major, t->minor);
			break;
		}
		f = dr_add(r, "setup.cuda.toolkit_too_new", DR_WARNING,
		           "%s is newer than the %s supports", name, drv);
		add_evidence(f, t, d);
		dr_meaning(f,
		           "Programs built with it fail at their first CUDA call with "
		           "cudaErrorInsufficientDriver (\"CUDA driver version is insufficient for "
		           "CUDA runtime version\"). Minor-version compatibility does not cover "
		           "them: %s.",
		           t->major < 11 ? "there is none before CUDA 11"
		           : d->cuda / 1000 != t->major
		                   ? "it works only within one major CUDA version, and this "
		                     "driver's is another"
		                   : "the driver is older than that compatibility's floor");
		driver_upgrade(&act, rel, t);
		act.buf[0] = 'U';
		if (tk_cuda)
			strbuf_addf(
			        &act,
			        ". Or install the toolkit that matches the driver: CUDA %s, the "
			        "newest it supports ('sudo apt install %s' from NVIDIA's "
			        "repository)",
			        tk, pkg);
		if (!d->consumer)
			strbuf_addf(
			        &act,
			        ". On a data-centre GPU (not GeForce), the forward-compatibility "
			        "package cuda-compat-%d-%d runs these programs on this driver",
			        t->major, t->minor);
		strbuf_addstr(&act, ".");
		dr_action(f, "%s", act.buf);
		break;
	}
	strbuf_release(&act);
}

/* nvcc on PATH, CUDA_HOME and /usr/local/cuda naming different toolkits. */
static void
report_several(struct dr_report *r, const struct tk_list *l)
{
	const struct toolkit *path = NULL, *home = NULL, *def = NULL, *other = NULL;
	struct dr_finding *f;
	char a[PATH_MAX + 64], b[PATH_MAX + 64];

	for (size_t i = 0; i < l->nr; i++) {
		if (l->v[i].via & VIA_PATH)
			path = &l->v[i];
		if (l->v[i].via & (VIA_CUDA_HOME | VIA_CUDA_PATH) && !home)
			home = &l->v[i];
		if (l->v[i].via & VIA_DEFAULT)
			def = &l->v[i];
	}
	if (!path)
		path = home;
	if (!path)
		return;
	if (def && def != path)
		other = def;
	else if (home && home != path)
		other = home;
	if (!other)
		return;
	snprintf(a, sizeof(a), "CUDA %s (%s)", path->version[0] ? path->version : "?", path->real);
	snprintf(b, sizeof(b), "CUDA %s (%s)", other->version[0] ? other->version : "?",
	         other->real);
	f = dr_add(r, "setup.cuda.toolkit_several", DR_INFO,
	           "several CUDA toolkits: %s is %s, %s is %s",
	           path->via & VIA_PATH ? "nvcc on PATH" : "CUDA_HOME", a,
	           other == def ? "/usr/local/cuda" : "CUDA_HOME", b);
	dr_evidence(f, "%s: %s", a, path->found.buf);
	dr_evidence(f, "%s: %s", b, other->found.buf);
	dr_meaning(f, "Which one a build uses depends on the tool: 'nvcc' typed in a shell and "
	              "most Makefiles take the first on PATH; CMake (enable_language(CUDA), "
	              "FindCUDAToolkit) takes CUDACXX or CUDAToolkit_ROOT, then nvcc on PATH, "
	              "then /usr/local/cuda; PyTorch's extension builds take CUDA_HOME or "
	              "CUDA_PATH, then nvcc on PATH, then /usr/local/cuda. Programs load the "
	              "libcudart that LD_LIBRARY_PATH or ld.so.conf finds first.");
	dr_action(f, "Make them agree: put the one to use first on PATH "
	             "(export PATH=/usr/local/cuda/bin:$PATH) and set CUDA_HOME to the same "
	             "prefix, or point /usr/local/cuda at it ('sudo update-alternatives --config "
	             "cuda' with NVIDIA's packages).");
}

void
dr_check_cuda_toolkit(const struct dr_ctx *ctx, struct dr_report *r)
{
	struct tk_list l = { NULL, 0, 0 };
	struct driver d;
	struct dr_finding *f;

	read_driver(ctx, &d);
	find_on_path(ctx, &l);
	find_env(ctx, &l, r, "CUDA_HOME", VIA_CUDA_HOME);
	find_env(ctx, &l, r, "CUDA_PATH", VIA_CUDA_PATH);
	tk_add(ctx, &l, "/usr/local/cuda", VIA_DEFAULT, "/usr/local/cuda", false);
	find_local(ctx, &l);
	tk_add(ctx, &l, "/usr/lib/nvidia-cuda-toolkit", VIA_DEBIAN, "/usr/lib/nvidia-cuda-toolkit",
	       false);
	for (size_t i = 0; i < l.nr; i++)
		if (!l.v[i].runtime_only)
			read_version(ctx, &l.v[i]);
	find_ldpath(ctx, &l);
	for (size_t i = 0; i < l.nr; i++)
		report_one(ctx, r, &l.v[i], &d);
	report_several(r, &l);
	if (!l.nr && d.nvidia_gpu) {
		f = dr_add(
		        r, "setup.cuda.toolkit_none", DR_INFO,
		        "no CUDA toolkit: not needed to run PyTorch wheels, which bring their own "
		        "CUDA libraries");
		dr_evidence(
		        f,
		        "no nvcc on PATH; no toolkit at $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, "
		        "/usr/local/cuda-*, /usr/lib/nvidia-cuda-toolkit (under %s)",
		        ctx->cfg->root ? ctx->cfg->root : "/");
		dr_meaning(f,
		           "Running CUDA programs needs only the driver. Building CUDA code "
		           "(nvcc, PyTorch extensions, CuPy kernels from source) needs a toolkit.");
		if (cuda_toolkit_for(d.cuda)) {
			char have[16], pkg[32];

			/* a toolkit that exists: a CUDA 12.7 driver (R565) gets 12.6 */
			cuda_ver_str(cuda_toolkit_for(d.cuda), have, sizeof(have));
			toolkit_pkg(cuda_toolkit_for(d.cuda), pkg, sizeof(pkg));
			dr_action(
			        f,
			        "Nothing, unless you build CUDA code; then install CUDA %s or "
			        "older, which this driver supports ('sudo apt install %s' from "
			        "NVIDIA's repository, or 'conda install -c nvidia cuda-toolkit=%s').",
			        have, pkg, have);
		} else {
			dr_action(
			        f,
			        "Nothing, unless you build CUDA code; then install a toolkit "
			        "that the driver supports (nvidia-smi shows its \"CUDA Version\").");
		}
	}
	tk_release(&l);
}

const struct dr_explain dr_catalog_toolkit[] = {
	{ "setup.cuda.toolkit", "A CUDA toolkit that the driver supports",
	  "A CUDA toolkit (nvcc, libcudart) was found, and the driver supports its CUDA\n"
	  "version fully: the driver's CUDA version (nvidia-smi's \"CUDA Version\", NVML's\n"
	  "nvmlSystemGetCudaDriverVersion) is at least the toolkit's, or the driver is at\n"
	  "least the table's minimum for that release (data/cuda/drivers.tsv). Drivers\n"
	  "are backward compatible, so a driver newer than needed is no problem, and\n"
	  "there is no need to upgrade one that already supports the toolkit: newer is\n"
	  "not always better (a driver update means a reboot and new risks)." },
	{ "setup.cuda.toolkit_home_missing", "CUDA_HOME or CUDA_PATH names no toolkit",
	  "CUDA_HOME (or CUDA_PATH) names a directory without bin/nvcc or a version\n"
	  "file. Causes, most likely first:\n"
	  "  1. A stale export in ~/.bashrc, ~/.profile or a module file, naming a\n"
	  "     toolkit that was removed or upgraded (cuda-11.8 after installing 12.x).\n"
	  "  2. A typo, or a path of another machine (a shared home directory).\n"
	  "  3. A container without the toolkit, started with the host's environment.\n"
	  "Tools that read it (PyTorch's cpp_extension, many setup.py files, CMake\n"
	  "projects) use it without checking and fail to find nvcc. Set it to an\n"
	  "installed prefix (export CUDA_HOME=/usr/local/cuda) or unset it." },
	{ "setup.cuda.toolkit_minor_compat",
	  "A CUDA toolkit newer than the driver, covered by minor-version compatibility",
	  "Since CUDA 11, programs built with any toolkit of a major version run on a\n"
	  "driver of that major version's first branch or newer (R450 for 11.x, from\n"
	  "450.80.02; R525 for 12.x; R580 for 13.x), with limits:\n"
	  "  - PTX made by the newer toolkit cannot be JIT-compiled by the older driver\n"
	  "    (cudaErrorUnsupportedPtxVersion): ship SASS for each GPU architecture\n"
	  "    ('nvcc -gencode arch=compute_XX,code=sm_XX'); runtime compilation (NVRTC\n"
	  "    to PTX) is affected the same way.\n"
	  "  - APIs newer than the driver fail with cudaErrorCallRequiresNewerDriver.\n"
	  "To tell whether a program is hit: it runs but a kernel launch or module load\n"
	  "fails with one of those errors. What to do, in order: build with SASS for the\n"
	  "GPU; build with the toolkit the driver fully supports; or update the driver\n"
	  "to the table's minimum for the toolkit's release." },
	{ "setup.cuda.toolkit_no_driver", "A CUDA toolkit on a machine without a usable driver",
	  "A toolkit is installed, but no NVIDIA driver answered (NVML could not be\n"
	  "loaded or initialised, and no driver version was read). Causes:\n"
	  "  1. A build machine or container without a GPU: nvcc compiles and links\n"
	  "     fine, and nothing needs to change.\n"
	  "  2. A container started without the GPU (docker run without --gpus, or\n"
	  "     without the NVIDIA container toolkit): the driver libraries are missing.\n"
	  "  3. The driver is not installed or not loaded (see the setup.nvidia and\n"
	  "     setup.pci findings).\n"
	  "Programs built here fail to run here with cudaErrorInsufficientDriver or\n"
	  "cudaErrorNoDevice. To run them, install a driver at least the table's\n"
	  "minimum for the toolkit's release, on a machine with an NVIDIA GPU." },
	{ "setup.cuda.toolkit_none", "No CUDA toolkit, on a machine with an NVIDIA GPU",
	  "No nvcc on PATH and no toolkit in the usual places. That is fine for running\n"
	  "CUDA programs: PyTorch, TensorFlow and JAX wheels bring their own CUDA\n"
	  "runtime and libraries (pip's nvidia-* packages), and need only the driver.\n"
	  "A toolkit is needed to build CUDA code: PyTorch extensions, flash-attn from\n"
	  "source, your own .cu files. Install one the driver supports: its CUDA\n"
	  "version or older (nvidia-smi shows it)." },
	{ "setup.cuda.toolkit_several", "Several CUDA toolkits, used by different tools",
	  "nvcc on PATH, CUDA_HOME/CUDA_PATH and /usr/local/cuda name different\n"
	  "toolkits. Each build tool picks its own: a shell and make take PATH; CMake\n"
	  "takes CUDACXX or CUDAToolkit_ROOT, then PATH, then /usr/local/cuda; PyTorch's\n"
	  "cpp_extension takes CUDA_HOME, then PATH, then /usr/local/cuda. Mixing them\n"
	  "gives builds that compile with one version and link or load another\n"
	  "(undefined symbols, \"version mismatch\" errors). Make them agree: one prefix\n"
	  "first on PATH and in CUDA_HOME, and /usr/local/cuda pointing at it." },
	{ "setup.cuda.toolkit_too_new", "A CUDA toolkit newer than the driver supports",
	  "Programs built with the toolkit need a newer driver: they fail at their\n"
	  "first CUDA call with cudaErrorInsufficientDriver (\"CUDA driver version is\n"
	  "insufficient for CUDA runtime version\"). Minor-version compatibility does\n"
	  "not help: it needs the same major version (a CUDA 13 toolkit on a CUDA 12\n"
	  "driver is not covered), does not exist before CUDA 11, and for 11.x needs\n"
	  "450.80.02 or newer. Causes: a toolkit installed without its driver (the\n"
	  "runfile with the driver unticked, cuda-toolkit-X-Y instead of cuda-X-Y), or\n"
	  "a driver held back by the distribution. What to do, in order:\n"
	  "  1. Update the driver to the table's minimum for the release (or newer).\n"
	  "  2. Or install the toolkit that matches the driver (its CUDA version).\n"
	  "  3. On data-centre GPUs, the forward-compatibility package\n"
	  "     cuda-compat-X-Y runs newer CUDA on the older driver; not on GeForce\n"
	  "     (cudaErrorCompatNotSupportedOnDevice)." },
	{ "setup.cuda.toolkit_version_unknown", "A CUDA toolkit whose version could not be read",
	  "doctor reads the version from version.json (CUDA 11.1 on), version.txt (up\n"
	  "to 11.0), CUDART_VERSION in include/cuda_runtime_api.h, or libcudart's file\n"
	  "name; none of them was there. A partial install (nvcc only, from a pip\n"
	  "wheel or conda package) is the usual cause. 'nvcc --version' prints it." },
	{ NULL, NULL, NULL },
};
