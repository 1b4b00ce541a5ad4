/*
 * The Python environments of a machine and the GPU frameworks installed in
 * them, found without running Python: which interpreters are in use
 * (VIRTUAL_ENV, CONDA_PREFIX, python3 on PATH, the system one), the
 * directories each puts on sys.path in import order, and, per directory,
 * what torch, TensorFlow, JAX and CuPy say about their builds. Reads a few
 * small files per directory (one opendir, then version.py, METADATA,
 * build_info.py); never walks a tree.
 */
#ifndef GPUSCOPE_PYENV_H
#define GPUSCOPE_PYENV_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/strbuf.h"

#define PY_NAME 64

/* A distribution: normalized name ("nvidia_cublas_cu12") and version. */
struct py_dist {
	char name[PY_NAME];
	char version[PY_NAME];
};

struct py_torch {
	bool found;      /* a torch/ package or a torch dist-info */
	bool version_py; /* torch/version.py was read: __version__ and cuda (a string or None) */
	char version[PY_NAME]; /* __version__ ("2.5.1+cu124"), or the dist-info's */
	char cuda[32];         /* torch.version.cuda, "" for None */
	char hip[PY_NAME];     /* torch.version.hip, "" for None */
	char git[48];          /* torch.version.git_version */
	char dist_info[256];   /* "torch-2.5.1+cu124.dist-info", "" when none */
	char meta_version[PY_NAME];
	struct py_dist *pin; /* METADATA's nvidia-* == pins (not extras) */
	size_t nr_pin, alloc_pin;
};

struct py_tf {
	bool found;
	char version[PY_NAME];    /* from the dist-info name */
	bool build_info;          /* build_info.py was read */
	char cuda[16], cudnn[16]; /* "" unknown */
	int is_cuda, is_rocm;     /* 1, 0, or -1 unknown */
};

struct py_jax {
	bool found; /* jax or jaxlib */
	char version[PY_NAME], jaxlib[PY_NAME];
	char plugin[PY_NAME], plugin_version[PY_NAME]; /* "jax_cuda12_plugin" */
	char pjrt[PY_NAME], pjrt_version[PY_NAME];     /* "jax_cuda12_pjrt" */
	int plugin_cuda;                               /* 12 for a cuda12 plugin, 0 none */
	bool plugin_rocm;
};

struct py_cupy {
	bool found;
	char dist[PY_NAME], version[PY_NAME]; /* "cupy_cuda12x", "13.3.0" */
	int major, minor;                     /* 12, -1 ("12x": any 12.x); 11, 7 (cupy-cuda117) */
	bool rocm;
};

enum py_site_kind {
	PY_SITE_PATH = 0, /* a PYTHONPATH entry */
	PY_SITE_USER,     /* ~/.local/lib/python3.X/site-packages */
	PY_SITE_ENV,      /* the environment's own site-packages */
	PY_SITE_SYSTEM,   /* a system directory (/usr/local/lib/python3.X/dist-packages, ...) */
};

/* One directory on sys.path that was read. */
struct py_site {
	char dir[PATH_MAX];  /* as read (under the root) */
	char real[PATH_MAX]; /* realpath(dir), to find it twice */
	enum py_site_kind kind;
	size_t owner; /* the first interpreter that puts it on its path */
	struct py_torch torch;
	struct py_tf tf;
	struct py_jax jax;
	struct py_cupy cupy;
	struct py_dist *nv; /* nvidia_*.dist-info installed here */
	size_t nr_nv, alloc_nv;
};

enum py_interp_kind {
	PY_VENV = 0,
	PY_CONDA,
	PY_SYSTEM,
};

/* A Python interpreter and its sys.path. */
struct py_interp {
	char prefix[PATH_MAX]; /* as read (under the root) */
	char real[PATH_MAX];
	const char *how; /* "VIRTUAL_ENV", "CONDA_PREFIX", "python3 on PATH", "system Python" */
	enum py_interp_kind kind;
	bool system_site; /* a venv with include-system-site-packages = true */
	char pyver[16];   /* "3.11", "" unknown */
	size_t *site;     /* indices into py_scan.site, in import order */
	size_t nr_site, alloc_site;
	/* conda-meta/pytorch-<version>-<build>.json, when a conda env */
	char conda_torch[256]; /* that file's name, "" none */
	char conda_version[PY_NAME];
	char conda_cuda[16];         /* "12.1" from the build string, "" none */
	bool conda_cpu;              /* a cpu_ build */
	char conda_pytorch_cuda[16]; /* the pytorch-cuda package's version, "" none */
};

struct py_scan {
	struct py_site *site;
	size_t nr_site, alloc_site;
	struct py_interp *in;
	size_t nr_in, alloc_in;
	struct strbuf searched; /* what was looked at, for a report of nothing found */
};

/*
 * Find the interpreters and read their directories. root stands for /
 * (paths from the environment that already start with root are taken as
 * they are); getenv gives VIRTUAL_ENV, CONDA_PREFIX, PATH, HOME,
 * PYTHONNOUSERSITE, PYTHONPATH. s is filled (py_scan_release() it).
 */
void py_scan(struct py_scan *s, const char *root, const char *(*getenv_fn)(const char *));
void py_scan_release(struct py_scan *s);

/*
 * Take root off the front of every directory in s (and of the places in
 * searched), so that reports name them as the machine does: /usr/lib/...,
 * not <root>/usr/lib/... For after py_scan(), once nothing is read.
 */
void py_scan_show_under(struct py_scan *s, const char *root);

/* Does the site hold any framework doctor knows? */
bool py_site_has_framework(const struct py_site *site);

/* The installed nvidia dist of the given normalized name in site, or NULL. */
const struct py_dist *py_site_nvidia(const struct py_site *site, const char *name);

/*
 * "nvidia-cublas-cu12" -> "nvidia_cublas_cu12" (lowercase, '-' and '.' to '_')
 * into buf (the first len bytes of name, up to a NUL). Returns buf, or NULL
 * (buf "") when the name does not fit: cut short, it would be another one.
 */
const char *py_normalize(char *buf, size_t size, const char *name, size_t len);

#endif
