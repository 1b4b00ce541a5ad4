/*
 * Finding Python environments and reading what their GPU frameworks were
 * built for, from files alone (no interpreter is run): the order of
 * sys.path follows CPython's site.py (PYTHONPATH, then the user site unless
 * a venv without system packages, then the environment's directories).
 */
#include "doctor/pyenv.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fileio.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

#define SMALL_FILE (64 * 1024) /* version.py, METADATA, build_info.py are a few KiB */

/* A regular file's first SMALL_FILE bytes (never a FIFO's: that would block). */
static int
read_small(const char *path, struct strbuf *sb)
{
	return file_read_regular(path, sb, SMALL_FILE);
}

const char *
py_normalize(char *buf, size_t size, const char *name, size_t len)
{
	size_t n = 0;

	if (!size)
		return NULL;
	for (size_t i = 0; i < len && name[i] && n + 1 < size; i++) {
		char c = name[i];

		buf[n++] = c == '-' || c == '.' ? '_' : (char)tolower((unsigned char)c);
	}
	buf[n] = '\0';
	/* a name cut short would be another one ("nvidia_x_cu12_long..." -> "nvidia_x_cu12") */
	if (n < len && name[n]) {
		buf[0] = '\0';
		return NULL;
	}
	return buf;
}

/* "%.*s" of s into buf; false (buf "") when it does not fit: a cut value means something else */
static bool
copy_exact(char *buf, size_t size, const char *s, size_t len)
{
	if (len >= size || memchr(s, '\0', len)) {
		buf[0] = '\0';
		return false;
	}
	memcpy(buf, s, len);
	buf[len] = '\0';
	return true;
}

static bool
is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

static bool
is_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && !S_ISDIR(st.st_mode);
}

/* A path from the environment, under root unless it is there already. */
static void
env_path(char *buf, size_t size, const char *root, const char *abs)
{
	size_t len = root ? strlen(root) : 0;

	while (len > 0 && root[len - 1] == '/')
		len--;
	if (!len || (!strncmp(abs, root, len) && (abs[len] == '/' || !abs[len])))
		snprintf(buf, size, "%s", abs);
	else
		snprintf(buf, size, "%.*s%s%s", (int)len, root, *abs == '/' ? "" : "/", abs);
}

static void
real_or_same(char *buf, size_t size, const char *path)
{
	char tmp[PATH_MAX];

	if (realpath(path, tmp))
		snprintf(buf, size, "%s", tmp);
	else
		snprintf(buf, size, "%s", path);
}

/* --- reading one site-packages directory ------------------------------------------ */

enum py_value {
	PV_ABSENT = 0, /* no such assignment */
	PV_NONE,       /* name = None */
	PV_STR,        /* name = 'x' */
	PV_OTHER,      /* something else: an expression, an unclosed string, a value too long */
};

/*
 * The value of a Python assignment "name = 'x'" / "name: T = 'x'" at the
 * start of a line of text into out ("" unless PV_STR); the last one counts,
 * as in Python.
 */
static enum py_value
py_assign(const char *text, const char *name, char *out, size_t size)
{
	size_t nlen = strlen(name);
	enum py_value v = PV_ABSENT;

	out[0] = '\0';
	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		const char *p = line;

		if (!strncmp(p, name, nlen) &&
		    (p[nlen] == ' ' || p[nlen] == '=' || p[nlen] == ':')) {
			const char *eq = memchr(p, '=', (size_t)(end - p));

			if (eq) {
				const char *q;

				for (p = eq + 1; *p == ' ' || *p == '\t'; p++)
					;
				for (q = end; q > p && (q[-1] == ' ' || q[-1] == '\t' ||
				                        q[-1] == '\r' || q[-1] == ';');
				     q--)
					;
				out[0] = '\0';
				v = PV_OTHER;
				if ((*p == '\'' || *p == '"') && q - p >= 2 && q[-1] == *p &&
				    !memchr(p + 1, *p, (size_t)(q - p - 2)) &&
				    copy_exact(out, size, p + 1, (size_t)(q - p - 2)))
					v = PV_STR;
				else if (q - p == 4 && !strncmp(p, "None", 4))
					v = PV_NONE;
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	if (v != PV_STR)
		out[0] = '\0';
	return v;
}

/*
 * torch/version.py: __version__ and cuda must be read (hip may be absent,
 * as in old releases) for the file to count; a value that is no string
 * and no None leaves the build unknown rather than taken for a CPU one.
 */
static void
read_torch_version(struct py_site *site)
{
	struct py_torch *t = &site->torch;
	struct strbuf sb = STRBUF_INIT;
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/torch/version.py", site->dir);
	if (!read_small(path, &sb)) {
		enum py_value ver =
		        py_assign(sb.buf, "__version__", t->version, sizeof(t->version));
		enum py_value cuda = py_assign(sb.buf, "cuda", t->cuda, sizeof(t->cuda));
		enum py_value hip = py_assign(sb.buf, "hip", t->hip, sizeof(t->hip));

		py_assign(sb.buf, "git_version", t->git, sizeof(t->git));
		t->version_py = ver == PV_STR && t->version[0] &&
		                (cuda == PV_STR || cuda == PV_NONE) && hip != PV_OTHER;
		if (!t->version_py)
			t->version[0] = t->cuda[0] = t->hip[0] = t->git[0] = '\0';
	}
	strbuf_release(&sb);
}

/*
 * "nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\"" (or the old
 * "nvidia-cudnn-cu12 (==9.1.0.70)") into a pin; false for anything but one
 * exact == version (>=, ===, a marker's ==).
 */
static bool
parse_pin(struct py_dist *d, const char *p, size_t len)
{
	size_t nlen = strcspn(p, " =<>!~;([,");
	const char *v, *eq;
	size_t vlen;

	if (nlen > len)
		return false;
	eq = p + nlen;
	while (eq < p + len && (*eq == ' ' || *eq == '('))
		eq++;
	if (p + len - eq < 3 || eq[0] != '=' || eq[1] != '=' || eq[2] == '=')
		return false;
	for (v = eq + 2; v < p + len && *v == ' '; v++)
		;
	vlen = strcspn(v, " ;,)");
	if (v + vlen > p + len)
		vlen = (size_t)(p + len - v);
	if (!vlen || memchr(v, '*', vlen)) /* ==12.* is a range */
		return false;
	return py_normalize(d->name, sizeof(d->name), p, nlen) &&
	       copy_exact(d->version, sizeof(d->version), v, vlen);
}

/* METADATA's Version and its nvidia-*==x pins, extras left out. */
static void
read_torch_metadata(struct py_site *site)
{
	struct py_torch *t = &site->torch;
	struct strbuf sb = STRBUF_INIT;
	char path[PATH_MAX + 300];

	snprintf(path, sizeof(path), "%s/%s/METADATA", site->dir, t->dist_info);
	if (read_small(path, &sb))
		goto out;
	for (char *line = sb.buf; line && *line;) {
		char *eol = strchr(line, '\n');
		const char *p;
		size_t len;

		if (eol)
			*eol = '\0';
		len = strlen(line);
		while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
			line[--len] = '\0';
		if (!strncmp(line, "Version:", 8)) {
			char v[PY_NAME];

			for (p = line + 8; *p == ' '; p++)
				;
			if (copy_exact(v, sizeof(v), p, strlen(p)) && v[0])
				memcpy(t->meta_version, v, sizeof(v));
		} else if (!strncmp(line, "Requires-Dist:", 14) && !strstr(line, "extra ==") &&
		           !strstr(line, "extra==")) {
			struct py_dist d;

			for (p = line + 14; *p == ' '; p++)
				;
			/* the requirement, without its environment marker */
			if (!strncasecmp(p, "nvidia-", 7) && parse_pin(&d, p, strcspn(p, ";"))) {
				ALLOC_GROW(t->pin, t->nr_pin + 1, t->alloc_pin);
				t->pin[t->nr_pin++] = d;
			}
		}
		line = eol ? eol + 1 : NULL;
	}
out:
	strbuf_release(&sb);
}

/*
 * ('cuda_version', '12.3') or 'cuda_version': '12.3' in build_info.py (2.3
 * on), else the module-level "alt = '10.0'" of older releases; "" when
 * absent or when the value does not fit out.
 */
static void
tf_value(const char *text, const char *key, const char *alt, char *out, size_t size)
{
	char quoted[64];
	const char *p, *q;

	out[0] = '\0';
	snprintf(quoted, sizeof(quoted), "'%s'", key);
	p = strstr(text, quoted);
	if (!p) {
		if (py_assign(text, alt, out, size) == PV_OTHER) {
			/* is_cuda_build = True: a bare word */
			for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
				size_t alen = strlen(alt);

				if (strncmp(p, alt, alen) || (p[alen] != ' ' && p[alen] != '='))
					continue;
				for (p += alen; *p == ' ' || *p == '='; p++)
					;
				q = p +
				    strspn(p,
				           "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");
				copy_exact(out, size, p, (size_t)(q - p));
			}
		}
		return;
	}
	p += strlen(quoted);
	while (*p == ',' || *p == ':' || *p == ' ' || *p == ']' || *p == '=') /* d['k'] = v */
		p++;
	if (*p == '\'' || *p == '"') {
		q = strchr(p + 1, *p);
		if (q && !memchr(p + 1, '\n', (size_t)(q - p - 1)))
			copy_exact(out, size, p + 1, (size_t)(q - p - 1));
	} else {
		q = p + strcspn(p, ",)}\r\n");
		while (q > p && q[-1] == ' ')
			q--;
		copy_exact(out, size, p, (size_t)(q - p));
	}
}

static void
read_tf_build_info(struct py_site *site)
{
	struct strbuf sb = STRBUF_INIT;
	char path[PATH_MAX + 64], v[16];

	snprintf(path, sizeof(path), "%s/tensorflow/python/platform/build_info.py", site->dir);
	site->tf.is_cuda = site->tf.is_rocm = -1;
	if (!read_small(path, &sb)) {
		site->tf.build_info = true;
		tf_value(sb.buf, "cuda_version", "cuda_version_number", site->tf.cuda,
		         sizeof(site->tf.cuda));
		tf_value(sb.buf, "cudnn_version", "cudnn_version_number", site->tf.cudnn,
		         sizeof(site->tf.cudnn));
		tf_value(sb.buf, "is_cuda_build", "is_cuda_build", v, sizeof(v));
		site->tf.is_cuda = !strcmp(v, "True") ? 1 : !strcmp(v, "False") ? 0 : -1;
		tf_value(sb.buf, "is_rocm_build", "is_rocm_build", v, sizeof(v));
		site->tf.is_rocm = !strcmp(v, "True") ? 1 : !strcmp(v, "False") ? 0 : -1;
	}
	strbuf_release(&sb);
}

/* "jax_cuda12_plugin" -> 12; 0 when no CUDA major of one or two digits follows "cuda" */
static int
cuda_major_in(const char *name)
{
	const char *p = strstr(name, "cuda");
	size_t n;

	if (!p)
		return 0;
	n = strspn(p + 4, "0123456789");
	if (n < 1 || n > 2 || p[4] == '0')
		return 0;
	return n == 1 ? p[4] - '0' : (p[4] - '0') * 10 + (p[5] - '0');
}

/*
 * cupy_cuda12x, cupy_cuda11x: a major (minor -1); cupy_cuda117, cupy_cuda102:
 * major and minor; cupy_cuda92, cupy_cuda80: one digit each. Anything else:
 * major -1 (unknown).
 */
static void
cupy_cuda(struct py_cupy *c, const char *v)
{
	size_t n = strspn(v, "0123456789");

	c->major = c->minor = -1;
	if (v[0] == '0')
		return;
	if (n == 2 && !strcmp(v + 2, "x")) {
		c->major = (v[0] - '0') * 10 + (v[1] - '0');
	} else if (n == 2 && !v[2]) {
		c->major = v[0] - '0';
		c->minor = v[1] - '0';
	} else if (n == 3 && !v[3]) {
		c->major = (v[0] - '0') * 10 + (v[1] - '0');
		c->minor = v[2] - '0';
	}
}

/* One entry of the directory: a package dir or a dist-info. */
static void
site_entry(struct py_site *site, const char *name)
{
	size_t len = strlen(name);
	const char *dash, *dot = len > 10 ? name + len - 10 : NULL;
	char dn[PY_NAME], ver[PY_NAME];

	if (!dot || strcmp(dot, ".dist-info")) {
		if (!strcmp(name, "torch"))
			site->torch.found = true;
		else if (!strcmp(name, "tensorflow"))
			site->tf.found = true;
		return;
	}
	dash = memchr(name, '-', (size_t)(dot - name));
	/* a name or a version that does not fit is another one cut short: not taken */
	if (!dash || !py_normalize(dn, sizeof(dn), name, (size_t)(dash - name)) ||
	    !copy_exact(ver, sizeof(ver), dash + 1, (size_t)(dot - dash - 1)))
		return;
	if (!strcmp(dn, "torch")) {
		site->torch.found = true;
		snprintf(site->torch.dist_info, sizeof(site->torch.dist_info), "%s", name);
		snprintf(site->torch.meta_version, sizeof(site->torch.meta_version), "%s", ver);
	} else if (!strncmp(dn, "nvidia_", 7)) {
		struct py_dist *d;

		ALLOC_GROW(site->nv, site->nr_nv + 1, site->alloc_nv);
		d = &site->nv[site->nr_nv++];
		snprintf(d->name, sizeof(d->name), "%s", dn);
		snprintf(d->version, sizeof(d->version), "%s", ver);
	} else if (!strcmp(dn, "tensorflow") || !strcmp(dn, "tensorflow_cpu") ||
	           !strcmp(dn, "tensorflow_rocm")) {
		site->tf.found = true;
		snprintf(site->tf.version, sizeof(site->tf.version), "%s", ver);
	} else if (!strcmp(dn, "jax")) {
		site->jax.found = true;
		snprintf(site->jax.version, sizeof(site->jax.version), "%s", ver);
	} else if (!strcmp(dn, "jaxlib")) {
		site->jax.found = true;
		snprintf(site->jax.jaxlib, sizeof(site->jax.jaxlib), "%s", ver);
	} else if (!strncmp(dn, "jax_", 4) && strstr(dn, "_plugin")) {
		snprintf(site->jax.plugin, sizeof(site->jax.plugin), "%s", dn);
		snprintf(site->jax.plugin_version, sizeof(site->jax.plugin_version), "%s", ver);
		site->jax.plugin_cuda = cuda_major_in(dn);
		site->jax.plugin_rocm = strstr(dn, "rocm") != NULL;
	} else if (!strncmp(dn, "jax_", 4) && strstr(dn, "_pjrt")) {
		snprintf(site->jax.pjrt, sizeof(site->jax.pjrt), "%s", dn);
		snprintf(site->jax.pjrt_version, sizeof(site->jax.pjrt_version), "%s", ver);
	} else if (!strncmp(dn, "cupy_cuda", 9) || !strncmp(dn, "cupy_rocm", 9)) {
		struct py_cupy *c = &site->cupy;

		c->found = true;
		snprintf(c->dist, sizeof(c->dist), "%s", dn);
		snprintf(c->version, sizeof(c->version), "%s", ver);
		c->rocm = dn[5] == 'r';
		c->major = c->minor = -1;
		if (!c->rocm)
			cupy_cuda(c, dn + 9);
	}
}

static void
site_read(struct py_site *site)
{
	DIR *d = opendir(site->dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			site_entry(site, e->d_name);
	closedir(d);
	if (site->torch.found) {
		read_torch_version(site);
		if (!site->torch.version_py)
			snprintf(site->torch.version, sizeof(site->torch.version), "%s",
			         site->torch.meta_version);
		if (site->torch.dist_info[0])
			read_torch_metadata(site);
	}
	if (site->tf.found)
		read_tf_build_info(site);
}

/* --- building sys.path ------------------------------------------------------------- */

/* Put dir on in's path (reading it the first time it is seen); a missing dir is skipped. */
static void
add_site(struct py_scan *s, struct py_interp *in, const char *dir, enum py_site_kind kind)
{
	char real[PATH_MAX];
	size_t i, idx = (size_t)(in - s->in);

	if (!is_dir(dir))
		return;
	real_or_same(real, sizeof(real), dir);
	for (i = 0; i < s->nr_site; i++)
		if (!strcmp(s->site[i].real, real))
			break;
	if (i == s->nr_site) {
		struct py_site *site;

		ALLOC_GROW(s->site, s->nr_site + 1, s->alloc_site);
		site = &s->site[s->nr_site++];
		memset(site, 0, sizeof(*site));
		snprintf(site->dir, sizeof(site->dir), "%s", dir);
		snprintf(site->real, sizeof(site->real), "%s", real);
		site->kind = kind;
		site->owner = idx;
		site_read(site);
	}
	for (size_t k = 0; k < in->nr_site; k++)
		if (in->site[k] == i)
			return;
	ALLOC_GROW(in->site, in->nr_site + 1, in->alloc_site);
	in->site[in->nr_site++] = i;
}

/*
 * dir/python3.X/<leaf> for each python3.X in dir (only pyver's when known),
 * newest first.
 */
/* Add item to the list of places searched, once. */
static void
add_searched(struct py_scan *s, const char *item)
{
	size_t len = strlen(item);

	for (const char *p = s->searched.buf; (p = strstr(p, item)) != NULL; p++)
		if ((p == s->searched.buf || p[-1] == ' ') && (p[len] == ',' || !p[len]))
			return;
	if (s->searched.len)
		strbuf_addstr(&s->searched, ", ");
	strbuf_addstr(&s->searched, item);
}

static void
add_versioned(struct py_scan *s, struct py_interp *in, const char *dir, const char *leaf,
              enum py_site_kind kind)
{
	char names[8][32], path[PATH_MAX + 64];
	size_t n = 0;
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "%s/python3.%s/%s", dir, in->pyver[0] ? in->pyver + 2 : "*",
	         leaf);
	add_searched(s, path);
	if (in->pyver[0]) {
		snprintf(path, sizeof(path), "%s/python%s/%s", dir, in->pyver, leaf);
		add_site(s, in, path, kind);
		return;
	}
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d)) && n < 8)
		if (!strncmp(e->d_name, "python3.", 8) && isdigit((unsigned char)e->d_name[8]) &&
		    strlen(e->d_name) < sizeof(names[0]))
			snprintf(names[n++], sizeof(names[0]), "%s", e->d_name);
	closedir(d);
	/* newest first: python3.12 before python3.9 */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && (int)strtol(names[j] + 8, NULL, 10) >
		                                    (int)strtol(names[j - 1] + 8, NULL, 10);
		     j--) {
			char t[32];

			memcpy(t, names[j], sizeof(t));
			memcpy(names[j], names[j - 1], sizeof(t));
			memcpy(names[j - 1], t, sizeof(t));
		}
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s/%s", dir, names[i], leaf);
		add_site(s, in, path, kind);
	}
}

static void
add_pythonpath(struct py_scan *s, struct py_interp *in, const char *root,
               const char *(*getenv_fn)(const char *))
{
	const char *pp = getenv_fn("PYTHONPATH");
	char dir[PATH_MAX], path[PATH_MAX];

	while (pp && *pp) {
		size_t len = strcspn(pp, ":");

		if (len && len < sizeof(dir)) {
			snprintf(dir, sizeof(dir), "%.*s", (int)len, pp);
			env_path(path, sizeof(path), root, dir);
			add_site(s, in, path, PY_SITE_PATH);
		}
		pp += len + (pp[len] == ':');
	}
}

static void
add_user_site(struct py_scan *s, struct py_interp *in, const char *root,
              const char *(*getenv_fn)(const char *))
{
	const char *home = getenv_fn("HOME"), *nous = getenv_fn("PYTHONNOUSERSITE");
	char dir[PATH_MAX];
	char lib[PATH_MAX + 16];

	if (nous && *nous) {
		strbuf_addf(&s->searched, "%s(user site: PYTHONNOUSERSITE is set)",
		            s->searched.len ? ", " : "");
		return;
	}
	if (!home || !*home)
		return;
	env_path(dir, sizeof(dir), root, home);
	snprintf(lib, sizeof(lib), "%s/.local/lib", dir);
	add_versioned(s, in, lib, "site-packages", PY_SITE_USER);
}

/* The system's directories: Debian's dist-packages, then the usual site-packages. */
static void
add_system_sites(struct py_scan *s, struct py_interp *in, const char *root)
{
	char dir[PATH_MAX];

	env_path(dir, sizeof(dir), root, "/usr/local/lib");
	add_versioned(s, in, dir, "dist-packages", PY_SITE_SYSTEM);
	env_path(dir, sizeof(dir), root, "/usr/lib/python3/dist-packages");
	add_searched(s, dir);
	add_site(s, in, dir, PY_SITE_SYSTEM);
	env_path(dir, sizeof(dir), root, "/usr/lib");
	add_versioned(s, in, dir, "dist-packages", PY_SITE_SYSTEM);
	env_path(dir, sizeof(dir), root, "/usr/local/lib");
	add_versioned(s, in, dir, "site-packages", PY_SITE_SYSTEM);
	env_path(dir, sizeof(dir), root, "/usr/lib64");
	add_versioned(s, in, dir, "site-packages", PY_SITE_SYSTEM);
	env_path(dir, sizeof(dir), root, "/usr/lib");
	add_versioned(s, in, dir, "site-packages", PY_SITE_SYSTEM);
}

/* pyvenv.cfg's "key = value" into out; false when absent. */
static bool
cfg_value(const char *text, const char *key, char *out, size_t size)
{
	size_t klen = strlen(key);

	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n'), *p;

		if (!strncmp(line, key, klen) && (line[klen] == ' ' || line[klen] == '=')) {
			p = strchr(line, '=');
			if (p && (!eol || p < eol)) {
				size_t len;

				for (p++; *p == ' '; p++)
					;
				len = eol ? (size_t)(eol - p) : strlen(p);
				while (len && (p[len - 1] == ' ' || p[len - 1] == '\r'))
					len--;
				snprintf(out, size, "%.*s", (int)len, p);
				return true;
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	return false;
}

/* "3.11.9" -> "3.11"; "" for what is no Python 3 version (the paths are python3.N) */
static void
short_ver(char *out, size_t size, const char *v)
{
	size_t len = 0;

	if (v[0] == '3' && v[1] == '.' && isdigit((unsigned char)v[2]))
		len = 2 + strspn(v + 2, "0123456789");
	if (!copy_exact(out, size, v, len))
		out[0] = '\0';
}

/* conda-meta/pytorch-<version>-<build>.json and pytorch-cuda-<version>-<build>.json */
static void
read_conda_meta(struct py_interp *in)
{
	char dir[PATH_MAX + 16];
	DIR *d;
	struct dirent *e;

	snprintf(dir, sizeof(dir), "%s/conda-meta", in->prefix);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		const char *n = e->d_name, *v, *b, *c;
		size_t len = strlen(n);

		if (len < 6 || strcmp(n + len - 5, ".json"))
			continue;
		if (!strncmp(n, "pytorch-cuda-", 13) && isdigit((unsigned char)n[13])) {
			v = n + 13;

			size_t vlen = strcspn(v, "-");

			if (vlen > len - 18) /* up to ".json" */
				vlen = len - 18;
			copy_exact(in->conda_pytorch_cuda, sizeof(in->conda_pytorch_cuda), v, vlen);
		} else if (!strncmp(n, "pytorch-", 8) && isdigit((unsigned char)n[8])) {
			v = n + 8;
			b = strchr(v, '-');
			if (!b)
				continue;
			if (!copy_exact(in->conda_version, sizeof(in->conda_version), v,
			                (size_t)(b - v)))
				continue;
			snprintf(in->conda_torch, sizeof(in->conda_torch), "%s", n);
			/* the build string, without ".json": py3.11_cuda12.1_cudnn9.1.0_0 */
			in->conda_cuda[0] = '\0';
			c = strstr(b, "cuda");
			if (c && c < n + len - 5 && isdigit((unsigned char)c[4])) {
				size_t clen = strspn(c + 4, "0123456789.");

				if (c + 4 + clen > n + len - 5)
					clen = (size_t)(n + len - 5 - (c + 4));
				while (clen && c[4 + clen - 1] == '.')
					clen--;
				copy_exact(in->conda_cuda, sizeof(in->conda_cuda), c + 4, clen);
			}
			in->conda_cpu = strstr(b, "cpu") != NULL;
		}
	}
	closedir(d);
}

static struct py_interp *
new_interp(struct py_scan *s, const char *prefix, const char *how)
{
	char real[PATH_MAX];
	struct py_interp *in;

	real_or_same(real, sizeof(real), prefix);
	for (size_t i = 0; i < s->nr_in; i++)
		if (!strcmp(s->in[i].real, real))
			return NULL;
	ALLOC_GROW(s->in, s->nr_in + 1, s->alloc_in);
	in = &s->in[s->nr_in++];
	memset(in, 0, sizeof(*in));
	snprintf(in->prefix, sizeof(in->prefix), "%s", prefix);
	snprintf(in->real, sizeof(in->real), "%s", real);
	in->how = how;
	return in;
}

/* An interpreter at prefix (a venv, a conda env, or a plain installation). */
static void
add_interp(struct py_scan *s, const char *root, const char *prefix, const char *how,
           const char *(*getenv_fn)(const char *))
{
	char path[PATH_MAX + 32], lib[PATH_MAX + 8], val[PATH_MAX];
	struct strbuf cfg = STRBUF_INIT;
	struct py_interp *in;
	size_t idx;
	bool system;

	in = new_interp(s, prefix, how);
	if (!in)
		return;
	idx = (size_t)(in - s->in);
	snprintf(path, sizeof(path), "%s/pyvenv.cfg", prefix);
	snprintf(lib, sizeof(lib), "%s/lib", prefix);
	if (!read_small(path, &cfg)) {
		in->kind = PY_VENV;
		if (cfg_value(cfg.buf, "include-system-site-packages", val, sizeof(val)))
			in->system_site = !strcasecmp(val, "true");
		if (cfg_value(cfg.buf, "version", val, sizeof(val)) ||
		    cfg_value(cfg.buf, "version_info", val, sizeof(val)))
			short_ver(in->pyver, sizeof(in->pyver), val);
	} else {
		snprintf(path, sizeof(path), "%s/conda-meta", prefix);
		in->kind = is_dir(path) ? PY_CONDA : PY_SYSTEM;
	}
	if (in->kind == PY_CONDA)
		read_conda_meta(in);
	if (!in->pyver[0]) {
		/* bin/python3 -> python3.11: the version without running it */
		char link[64];
		ssize_t n;

		snprintf(path, sizeof(path), "%s/bin/python3", prefix);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0) {
			const char *b;

			link[n] = '\0';
			b = strrchr(link, '/');
			b = b ? b + 1 : link;
			if (!strncmp(b, "python3.", 8) && isdigit((unsigned char)b[8]))
				short_ver(in->pyver, sizeof(in->pyver), b + 6);
		}
	}
	env_path(val, sizeof(val), root, "/usr");
	system = in->kind == PY_SYSTEM && !strcmp(prefix, val);
	env_path(val, sizeof(val), root, "/usr/local");
	system = system || (in->kind == PY_SYSTEM && !strcmp(prefix, val));

	add_pythonpath(s, in, root, getenv_fn);
	/* site.py: a venv without system packages turns the user site off */
	if (in->kind != PY_VENV || in->system_site)
		add_user_site(s, in, root, getenv_fn);
	in = &s->in[idx];
	if (system) {
		add_system_sites(s, in, root);
	} else {
		add_versioned(s, in, lib, "site-packages", PY_SITE_ENV);
		in = &s->in[idx];
	}
	if (in->kind == PY_VENV && in->system_site &&
	    cfg_value(cfg.buf, "home", val, sizeof(val))) {
		/* home = /usr/bin: the base installation's directories follow */
		char base[PATH_MAX], *slash;

		env_path(base, sizeof(base), root, val);
		while (strlen(base) > 1 && base[strlen(base) - 1] == '/')
			base[strlen(base) - 1] = '\0';
		slash = strrchr(base, '/');
		if (slash && slash != base)
			*slash = '\0';
		snprintf(lib, sizeof(lib), "%s/lib", base);
		add_versioned(s, in, lib, "site-packages", PY_SITE_SYSTEM);
		in = &s->in[idx];
		add_system_sites(s, in, root);
	}
	strbuf_release(&cfg);
}

/* The first word of the first line of file (a pyenv version file) into buf. */
static bool
first_word(const char *file, char *buf, size_t size)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p;
	size_t len;

	if (file_read_regular(file, &sb, 4096) < 0) {
		strbuf_release(&sb);
		return false;
	}
	p = sb.buf + strspn(sb.buf, " \t\r\n");
	len = strcspn(p, " \t\r\n:");
	snprintf(buf, size, "%.*s", (int)len, p);
	strbuf_release(&sb);
	return len > 0;
}

/*
 * pyenv: PATH finds a shim (<pyenv root>/shims/python3, a shell script),
 * and pyenv picks the interpreter from PYENV_VERSION, a .python-version
 * file in the working directory or above it, or <pyenv root>/version.
 * Fills prefix with <pyenv root>/versions/<version> and returns 1; returns
 * 0 for "system" (the next python3 on PATH is the one), -1 when shims is
 * no pyenv's.
 */
static int
pyenv_prefix(char *prefix, size_t size, const char *shims, const char *root,
             const char *(*getenv_fn)(const char *))
{
	char top[PATH_MAX], file[PATH_MAX + 32], ver[128] = "";
	const char *v = getenv_fn("PYENV_VERSION");
	char *slash;

	snprintf(top, sizeof(top), "%s", shims);
	slash = strrchr(top, '/');
	if (!slash || strcmp(slash, "/shims") != 0)
		return -1;
	*slash = '\0';
	snprintf(file, sizeof(file), "%s/versions", top);
	if (!is_dir(file))
		return -1;
	if (v && *v)
		snprintf(ver, sizeof(ver), "%.*s", (int)strcspn(v, ":"), v);
	if (!ver[0] && !*root) { /* the working directory is the real machine's */
		char cwd[PATH_MAX];

		if (getcwd(cwd, sizeof(cwd) - 20)) {
			for (;;) {
				char *end;

				snprintf(file, sizeof(file), "%s/.python-version", cwd);
				if (first_word(file, ver, sizeof(ver)) ||
				    !(end = strrchr(cwd, '/')) || end == cwd)
					break;
				*end = '\0';
			}
		}
	}
	if (!ver[0]) {
		snprintf(file, sizeof(file), "%s/version", top);
		first_word(file, ver, sizeof(ver));
	}
	if (!ver[0] || !strcmp(ver, "system") || strchr(ver, '/') || !strcmp(ver, ".") ||
	    !strcmp(ver, ".."))
		return 0;
	if ((size_t)snprintf(prefix, size, "%s/versions/%s", top, ver) >= size)
		return 0;
	return is_dir(prefix) ? 1 : 0;
}

/*
 * The first python3 on PATH (under root); its prefix is the directory above
 * bin/ (a pyenv shim: the version pyenv would run), never above root.
 * Empty and relative entries (the working directory, for a shell) are
 * skipped: doctor's own directory is not where the user's jobs run.
 */
static bool
python_on_path(char *prefix, size_t size, const char *root, const char *(*getenv_fn)(const char *))
{
	const char *p = getenv_fn("PATH");
	char dir[PATH_MAX], full[PATH_MAX], exe[PATH_MAX + 16];
	size_t rlen = strlen(root);

	while (rlen > 0 && root[rlen - 1] == '/')
		rlen--;

	while (p && *p) {
		size_t len = strcspn(p, ":");

		if (len && len < sizeof(dir) && p[0] == '/') {
			snprintf(dir, sizeof(dir), "%.*s", (int)len, p);
			env_path(full, sizeof(full), root, dir);
			snprintf(exe, sizeof(exe), "%s/python3", full);
			if (is_file(exe)) {
				char *slash;
				int shim;

				while (strlen(full) > 1 && full[strlen(full) - 1] == '/')
					full[strlen(full) - 1] = '\0';
				shim = pyenv_prefix(prefix, size, full, root, getenv_fn);
				if (shim == 1)
					return true;
				if (shim == 0) { /* pyenv's "system": the next python3 on PATH */
					p += len + (p[len] == ':');
					continue;
				}
				slash = strrchr(full, '/');
				if (slash && slash != full && (size_t)(slash - full) >= rlen)
					*slash = '\0';
				snprintf(prefix, size, "%s", full);
				return true;
			}
		}
		p += len + (p[len] == ':');
	}
	return false;
}

void
py_scan(struct py_scan *s, const char *root, const char *(*getenv_fn)(const char *))
{
	const char *v;
	char prefix[PATH_MAX], path[PATH_MAX + 16];

	memset(s, 0, sizeof(*s));
	strbuf_init(&s->searched, 256);
	if (!root || !strcmp(root, "/"))
		root = "";

	v = getenv_fn("VIRTUAL_ENV");
	if (v && *v) {
		env_path(prefix, sizeof(prefix), root, v);
		if (is_dir(prefix))
			add_interp(s, root, prefix, "VIRTUAL_ENV", getenv_fn);
		else /* a venv since removed, or a file: no interpreter there */
			strbuf_addf(&s->searched, "VIRTUAL_ENV %s (no such directory)", prefix);
	} else {
		strbuf_addstr(&s->searched, "VIRTUAL_ENV (unset)");
	}
	v = getenv_fn("CONDA_PREFIX");
	if (v && *v) {
		env_path(prefix, sizeof(prefix), root, v);
		if (is_dir(prefix))
			add_interp(s, root, prefix, "CONDA_PREFIX", getenv_fn);
		else
			strbuf_addf(&s->searched, "%sCONDA_PREFIX %s (no such directory)",
			            s->searched.len ? ", " : "", prefix);
	} else {
		strbuf_addf(&s->searched, "%sCONDA_PREFIX (unset)", s->searched.len ? ", " : "");
	}
	if (python_on_path(prefix, sizeof(prefix), root, getenv_fn))
		add_interp(s, root, prefix, "python3 on PATH", getenv_fn);
	else
		strbuf_addf(&s->searched, "%spython3 on PATH (none)", s->searched.len ? ", " : "");
	/* the system's Python, whether or not PATH finds it first */
	env_path(prefix, sizeof(prefix), root, "/usr");
	snprintf(path, sizeof(path), "%s/bin/python3", prefix);
	if (is_file(path))
		add_interp(s, root, prefix, "system Python", getenv_fn);
	else
		strbuf_addf(&s->searched, "%s%s (none)", s->searched.len ? ", " : "", path);
}

static void
strip_root(char *path, const char *root, size_t len)
{
	if (!strncmp(path, root, len) && path[len] == '/')
		memmove(path, path + len, strlen(path + len) + 1);
	else if (!strncmp(path, root, len) && !path[len]) /* the root itself */
		snprintf(path, 2, "/");
}

void
py_scan_show_under(struct py_scan *s, const char *root)
{
	size_t len = root ? strlen(root) : 0;
	struct strbuf out = STRBUF_INIT;

	while (len > 0 && root[len - 1] == '/')
		len--;
	if (!len)
		return;
	for (size_t i = 0; i < s->nr_site; i++)
		strip_root(s->site[i].dir, root, len);
	for (size_t i = 0; i < s->nr_in; i++)
		strip_root(s->in[i].prefix, root, len);
	for (const char *p = s->searched.buf; *p;) {
		const char *hit = p;

		/* root without its trailing slashes, then a '/' */
		while (*hit && (strncmp(hit, root, len) || hit[len] != '/'))
			hit++;
		if (!*hit) {
			strbuf_addstr(&out, p);
			break;
		}
		strbuf_add(&out, p, (size_t)(hit - p));
		p = hit + len;
	}
	strbuf_release(&s->searched);
	s->searched = out;
}

void
py_scan_release(struct py_scan *s)
{
	for (size_t i = 0; i < s->nr_site; i++) {
		free(s->site[i].torch.pin);
		free(s->site[i].nv);
	}
	for (size_t i = 0; i < s->nr_in; i++)
		free(s->in[i].site);
	free(s->site);
	free(s->in);
	strbuf_release(&s->searched);
	memset(s, 0, sizeof(*s));
}

bool
py_site_has_framework(const struct py_site *site)
{
	return site->torch.found || site->tf.found || site->jax.found || site->cupy.found;
}

const struct py_dist *
py_site_nvidia(const struct py_site *site, const char *name)
{
	for (size_t i = 0; i < site->nr_nv; i++)
		if (!strcmp(site->nv[i].name, name))
			return &site->nv[i];
	return NULL;
}
