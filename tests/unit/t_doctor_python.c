/*
 * Tests of the Python-framework checks (setup.python.*, setup.torch.*,
 * setup.tensorflow.*, setup.jax.*, setup.cupy.*) on the fixture trees of
 * tests/fixtures/pyenv and on small trees made here: each finding
 * triggered by one input and cleared by another, every id emitted in the
 * catalog, and nothing outside the fixture read (the root is always set).
 */
#include "doctor/doctor.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/nvml_probe.h"
#include "core/config.h"
#include "core/gpu.h"
#include "doctor_test.h"
#include "harness.h"
#include "tree.h"

/* --- the machine: environment, GPUs, driver ----------------------------------------- */

struct machine {
	const char *root;   /* fixture-relative or absolute; NULL: tests/fixtures/pyenv */
	const char *sysfs;  /* fixture name; NULL: sys-empty (no PCI GPU) */
	int nvidia, amd;    /* devices in the snapshot */
	const char *driver; /* NVML's driver version, NULL: NVML did not answer */
	int cuda;           /* NVML's CUDA version */
	const char *venv, *conda, *path, *home, *nousersite, *pythonpath, *pyenv_version;
};

static const struct machine *cur;

static const char *
test_env(const char *name)
{
	if (!strcmp(name, "VIRTUAL_ENV"))
		return cur->venv;
	if (!strcmp(name, "CONDA_PREFIX"))
		return cur->conda;
	if (!strcmp(name, "PATH"))
		return cur->path;
	if (!strcmp(name, "HOME"))
		return cur->home;
	if (!strcmp(name, "PYTHONNOUSERSITE"))
		return cur->nousersite;
	if (!strcmp(name, "PYTHONPATH"))
		return cur->pythonpath;
	if (!strcmp(name, "PYENV_VERSION"))
		return cur->pyenv_version;
	return NULL;
}

static char pyfix[PATH_MAX]; /* tests/fixtures/pyenv */

/* fixture tree name under tests/fixtures/pyenv, into a static buffer (4 of them) */
static const char *
fx(const char *name)
{
	static char buf[4][PATH_MAX + 64];
	static int n;
	char *b = buf[n++ % 4];

	fmt(b, sizeof(buf[0]), "%s/%s", pyfix, name);
	return b;
}

static void
run_on(const struct machine *m, struct dr_report *r)
{
	char sysfs[4096];
	struct gs_config cfg;
	struct gpu_snapshot snap;
	struct nvml_probe nvml;
	struct dr_ctx ctx;

	cur = m;
	gs_config_init(&cfg);
	cfg.root = m->root ? m->root : pyfix;
	join(sysfs, sizeof(sysfs), fixtures, m->sysfs ? m->sysfs : "sys-empty");
	cfg.sysfs_root = sysfs;
	gpu_snapshot_init(&snap);
	for (int i = 0; i < m->nvidia + m->amd; i++) {
		struct gpu_device *d = gpu_snapshot_add_dev(&snap);

		d->index = (unsigned)i;
		d->vendor = i < m->nvidia ? VENDOR_NVIDIA : VENDOR_AMD;
	}
	memset(&nvml, 0, sizeof(nvml));
	nvml.init_rc = -1;
	if (m->driver) {
		nvml.loaded = true;
		nvml.init_rc = 0;
		snprintf(nvml.driver_version, sizeof(nvml.driver_version), "%s", m->driver);
		nvml.cuda_version = m->cuda;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.cfg = &cfg;
	ctx.snap = &snap;
	ctx.nvml = &nvml;
	ctx.getenv = test_env;
	dr_check_python(&ctx, r);
	gpu_snapshot_release(&snap);
}

static size_t ids_checked;
static bool all_explained = true;

static void
check_catalog(const struct dr_report *r)
{
	for (size_t i = 0; i < r->nr; i++) {
		ids_checked++;
		if (!dr_explain_find(r->f[i].id)) {
			diag("no explanation for '%s'", r->f[i].id);
			all_explained = false;
		}
	}
}

/* Run m; return the finding id (or NULL) in *f; the report stays in r until reset. */
static struct dr_report R = DR_REPORT_INIT;

static void
on(const struct machine *m)
{
	dr_report_release(&R);
	run_on(m, &R);
	check_catalog(&R);
}

/* --- the drivers used ----------------------------------------------------------------- */

#define R550 "550.54.15", 12040  /* CUDA 12.4 */
#define R535 "535.183.01", 12020 /* CUDA 12.2 */
#define R525 "525.60.13", 12000  /* CUDA 12.0 */
#define R470 "470.256.02", 11040 /* CUDA 11.4 */

/* --- the fixture trees ---------------------------------------------------------------- */

static void
test_cuda_venv(void)
{
	const struct dr_finding *f;
	struct machine m = { .nvidia = 8, .driver = R550 };

	m.venv = fx("cuda-venv");
	on(&m);
	f = find_id(&R, "setup.torch.ok");
	ok(f && f->severity == DR_OK && strstr(f->title, "torch 2.5.1+cu124 (CUDA 12.4)") &&
	           strstr(f->title, "the driver supports CUDA 12.4"),
	   "cuda-venv on R550: torch ok line");
	ok(evidence_has(f, "cuda-venv/lib/python3.11/site-packages/torch/version.py: "
	                   "__version__ = '2.5.1+cu124', cuda = '12.4'"),
	   "cuda-venv: evidence names version.py and its values");
	ok(!find_id(&R, "setup.torch.nvidia_mismatch"), "cuda-venv: the 12 nvidia-* pins match");
	ok(!find_id(&R, "setup.torch.cuda_too_new") && !find_id(&R, "setup.python.none"),
	   "cuda-venv on R550: nothing else");

	m = (struct machine){ .nvidia = 1, .driver = R535 };
	m.venv = fx("cuda-venv");
	on(&m);
	f = find_id(&R, "setup.torch.cuda_too_new");
	ok(f && f->severity == DR_WARNING, "cuda-venv on R535 (CUDA 12.2): CUDA 12.4 build newer "
	                                   "than the driver, minor-version compatible: warning");
	ok(f && f->action && strstr(f->action, "550.54.14") &&
	           strstr(f->action, "pip install --force-reinstall torch==2.5.1 --index-url "
	                             "https://download.pytorch.org/whl/cu121"),
	   "cuda-venv on R535: update to 550.54.14, or the cu121 build (exact command)");
	ok(!find_id(&R, "setup.torch.ok"), "cuda-venv on R535: no ok line");

	m = (struct machine){ .nvidia = 1, .driver = R470 };
	m.venv = fx("cuda-venv");
	on(&m);
	f = find_id(&R, "setup.torch.cuda_too_new");
	ok(f && f->severity == DR_ERROR && f->meaning &&
	           strstr(f->meaning, "The NVIDIA driver on your system is too old"),
	   "cuda-venv on R470 (CUDA 11.4): error");
	ok(f && f->action && strstr(f->action, "520.61.05"),
	   "cuda-venv on R470: no variant of 2.5 fits: update the driver to 520.61.05 (cu118)");

	/* found through PATH instead of VIRTUAL_ENV */
	m = (struct machine){ .nvidia = 1, .driver = R550 };
	m.path = fx("cuda-venv/bin");
	on(&m);
	f = find_id(&R, "setup.torch.ok");
	ok(f && evidence_has(f, "python3 on PATH"), "cuda-venv through PATH: found, ok");

	/* on an AMD machine */
	m = (struct machine){ .amd = 2 };
	m.venv = fx("cuda-venv");
	on(&m);
	f = find_id(&R, "setup.torch.cuda_on_amd");
	ok(f && f->severity == DR_ERROR && f->action &&
	           strstr(f->action, "pip install --force-reinstall torch==2.5.1 --index-url "
	                             "https://download.pytorch.org/whl/rocm6.2"),
	   "cuda-venv on AMD only: cuda_on_amd with the rocm6.2 command");
	m.nvidia = 1;
	on(&m);
	ok(!find_id(&R, "setup.torch.cuda_on_amd"), "cuda-venv on AMD + NVIDIA: cleared");
}

static void
test_cpu_venv(void)
{
	const struct dr_finding *f;
	struct machine m = { .nvidia = 1, .driver = R550 };

	m.venv = fx("cpu-venv");
	on(&m);
	f = find_id(&R, "setup.torch.cpu_only");
	ok(f && f->severity == DR_ERROR && strstr(f->title, "2.5.1+cpu"),
	   "cpu-venv on NVIDIA: CPU-only PyTorch, error");
	ok(f && f->action &&
	           strstr(f->action, "pip install --force-reinstall torch==2.5.1 --index-url "
	                             "https://download.pytorch.org/whl/cu124") &&
	           strstr(f->action, "source ") && strstr(f->action, "cpu-venv/bin/activate"),
	   "cpu-venv on R550: the cu124 command, run in the venv");

	m = (struct machine){ .nvidia = 1, .driver = R535 };
	m.venv = fx("cpu-venv");
	on(&m);
	f = find_id(&R, "setup.torch.cpu_only");
	ok(f && f->action && strstr(f->action, "whl/cu121."), "cpu-venv on R535: cu121");

	/* an NVIDIA GPU on the PCI bus without a driver: still an NVIDIA machine */
	m = (struct machine){ .sysfs = "sys-nouveau" };
	m.venv = fx("cpu-venv");
	on(&m);
	f = find_id(&R, "setup.torch.cpu_only");
	ok(f && evidence_has(f, "the PCI bus") && f->action && strstr(f->action, "nvidia-smi"),
	   "cpu-venv, NVIDIA on PCI only: cpu_only, variant chosen by the user");

	m = (struct machine){ 0 };
	m.venv = fx("cpu-venv");
	on(&m);
	f = find_id(&R, "setup.torch.ok");
	ok(!find_id(&R, "setup.torch.cpu_only") && f && f->severity == DR_OK,
	   "cpu-venv without GPU: cleared (a CPU build fits)");
	m.amd = 1;
	on(&m);
	ok(!find_id(&R, "setup.torch.cpu_only"), "cpu-venv on AMD: no cpu_only");
}

static void
test_rocm_venv(void)
{
	const struct dr_finding *f;
	struct machine m = { .nvidia = 4, .driver = R550 };

	m.venv = fx("rocm-venv");
	on(&m);
	f = find_id(&R, "setup.torch.rocm_on_nvidia");
	ok(f && f->severity == DR_ERROR && f->action &&
	           strstr(f->action, "pip install --force-reinstall torch==2.5.1 --index-url "
	                             "https://download.pytorch.org/whl/cu124"),
	   "rocm-venv on NVIDIA: rocm_on_nvidia with the cu124 command");
	ok(evidence_has(f, "hip = '6.2.41133-dd7f95766'"), "rocm-venv: evidence has hip");

	m = (struct machine){ .amd = 1 };
	m.venv = fx("rocm-venv");
	on(&m);
	f = find_id(&R, "setup.torch.ok");
	ok(!find_id(&R, "setup.torch.rocm_on_nvidia") && f && strstr(f->title, "ROCm"),
	   "rocm-venv on AMD: ok");
}

static void
test_conda_env(void)
{
	const struct dr_finding *f;
	struct machine m = { .nvidia = 1, .driver = R550 };

	m.conda = fx("conda-env");
	on(&m);
	f = find_id(&R, "setup.torch.ok");
	ok(f && strstr(f->title, "(CUDA 12.1)") &&
	           evidence_has(f, "conda-meta/pytorch-2.5.1-py3.11_cuda12.1_cudnn9.1.0_0.json") &&
	           evidence_has(f, "CONDA_PREFIX"),
	   "conda-env on R550: CUDA 12.1 build ok, conda-meta in the evidence");
	ok(!find_id(&R, "setup.torch.nvidia_mismatch"), "conda-env: no pip pins to check");

	m = (struct machine){ .nvidia = 1, .driver = R525 };
	m.conda = fx("conda-env");
	on(&m);
	f = find_id(&R, "setup.torch.cuda_too_new");
	ok(f && f->severity == DR_WARNING && f->action &&
	           strstr(f->action, "conda install pytorch==2.5.1 pytorch-cuda=11.8 -c pytorch "
	                             "-c nvidia") &&
	           strstr(f->action, "conda activate"),
	   "conda-env on R525 (CUDA 12.0): 12.1 build: the conda command for cu118");

	m = (struct machine){ .nvidia = 1, .driver = R470 };
	m.conda = fx("conda-env");
	on(&m);
	f = find_id(&R, "setup.torch.cuda_too_new");
	ok(f && f->severity == DR_ERROR, "conda-env on R470: error");
}

static void
test_shadowed(void)
{
	const struct dr_finding *f;
	struct machine m = { .nvidia = 1, .driver = R550, .home = "/home/user" };

	m.root = fx("shadowed");
	on(&m);
	f = find_id(&R, "setup.torch.shadowed");
	ok(f && f->severity == DR_WARNING && strstr(f->title, "2.1.0+cu118") &&
	           strstr(f->title, "2.5.1+cu124") && strstr(f->title, "user site"),
	   "shadowed: the user-site 2.1.0+cu118 shadows the system 2.5.1+cu124");
	ok(f && evidence_has(f, "home/user/.local/lib/python3.11/site-packages/torch/version.py") &&
	           evidence_has(f, "usr/local/lib/python3.11/dist-packages/torch/version.py"),
	   "shadowed: evidence names both version.py files");
	ok(f && f->action && strstr(f->action, "pip uninstall torch"),
	   "shadowed: the uninstall command");
	f = find_id(&R, "setup.torch.ok");
	ok(count_id(&R, "setup.torch.ok") == 1 && f && strstr(f->title, "2.1.0+cu118"),
	   "shadowed: only the imported torch is checked against the driver");

	/* HOME given with the root in it */
	m.home = fx("shadowed/home/user");
	on(&m);
	ok(find_id(&R, "setup.torch.shadowed") != NULL, "shadowed: HOME under the root as given");

	m.nousersite = "1";
	on(&m);
	f = find_id(&R, "setup.torch.ok");
	ok(!find_id(&R, "setup.torch.shadowed") && f && strstr(f->title, "2.5.1+cu124"),
	   "shadowed with PYTHONNOUSERSITE: cleared, the system torch is the one");
}

static void
test_tf_jax_cupy(void)
{
	const struct dr_finding *f;
	struct machine m = { .nvidia = 1, .driver = R550 };

	m.venv = fx("tf-jax-cupy");
	on(&m);
	f = find_id(&R, "setup.tensorflow.ok");
	ok(f && f->severity == DR_OK && strstr(f->title, "TensorFlow 2.17.0 (CUDA 12.3)") &&
	           evidence_has(f, "build_info.py: cuda_version '12.3', cudnn_version '8'"),
	   "tf-jax-cupy on R550: TensorFlow CUDA 12.3 / cuDNN 8 ok");
	f = find_id(&R, "setup.jax.ok");
	ok(f && strstr(f->title, "jax_cuda12_plugin 0.4.31"), "tf-jax-cupy: JAX CUDA-12 plugin ok");
	f = find_id(&R, "setup.cupy.ok");
	ok(f && strstr(f->title, "cupy_cuda12x") && strstr(f->title, "CUDA 12.x"),
	   "tf-jax-cupy: CuPy for CUDA 12.x ok");
	ok(!find_id(&R, "setup.jax.cpu_only") && !find_id(&R, "setup.jax.plugin_mismatch") &&
	           !find_id(&R, "setup.tensorflow.cpu_only"),
	   "tf-jax-cupy: no cpu_only, no plugin mismatch");

	m = (struct machine){ .nvidia = 1, .driver = R535 };
	m.venv = fx("tf-jax-cupy");
	on(&m);
	f = find_id(&R, "setup.tensorflow.cuda_too_new");
	ok(f && f->severity == DR_WARNING && f->action && strstr(f->action, "545.23.06"),
	   "tf-jax-cupy on R535: TF 12.3 newer than the driver (warning, update to 545.23.06)");
	ok(find_id(&R, "setup.jax.ok") && find_id(&R, "setup.cupy.ok"),
	   "tf-jax-cupy on R535: jax and CuPy for 12.x are fine");

	m = (struct machine){ .nvidia = 1, .driver = R470 };
	m.venv = fx("tf-jax-cupy");
	on(&m);
	ok(find_id(&R, "setup.jax.cuda_too_new") &&
	           find_id(&R, "setup.jax.cuda_too_new")->severity == DR_ERROR &&
	           find_id(&R, "setup.cupy.cuda_too_new") &&
	           find_id(&R, "setup.tensorflow.cuda_too_new"),
	   "tf-jax-cupy on R470 (CUDA 11.4): TF, jax and CuPy all need a newer driver");

	m = (struct machine){ 0 };
	m.venv = fx("tf-jax-cupy");
	on(&m);
	ok(R.nr == 0, "tf-jax-cupy without GPU: nothing to say");
}

/* --- trees made here ------------------------------------------------------------------ */

static void
put(const char *base, const char *rel, const char *text)
{
	char path[PATH_MAX], dir[PATH_MAX];
	const char *slash;

	join(path, sizeof(path), base, rel);
	slash = strrchr(path, '/');
	fmt(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	make_dirs(dir);
	if (text)
		write_str(path, text);
	else
		make_dirs(path);
}

#define SP       "lib/python3.11/site-packages/"
#define VENV_CFG "home = /usr/bin\ninclude-system-site-packages = %s\nversion = 3.11.9\n"

/* PATH finds pyenv's shim: the interpreter is the version pyenv would pick. */
static void
test_pyenv_shim(void)
{
	char root[PATH_MAX], pyenv[PATH_MAX];
	const struct dr_finding *f;
	struct machine m = { .nvidia = 1, .driver = R550 };

	join(root, sizeof(root), tmp_dir, "pyenv-root");
	join(pyenv, sizeof(pyenv), root, "home/u/.pyenv");
	put(pyenv, "shims/python3", "#!/usr/bin/env bash\nexec pyenv exec python3 \"$@\"\n");
	put(pyenv, "version", "3.11.7\n");
	put(pyenv, "versions/3.11.7/bin/python3", "");
	put(pyenv, "versions/3.11.7/" SP "torch/version.py",
	    "__version__ = '2.5.1+cpu'\ncuda = None\nhip = None\n");
	put(pyenv, "versions/3.12.1/bin/python3", "");
	m.root = root;
	m.path = "/home/u/.pyenv/shims:/usr/bin";
	m.home = "/home/u";
	on(&m);
	f = find_id(&R, "setup.torch.cpu_only");
	ok(f && evidence_has(f, "versions/3.11.7/"),
	   "pyenv: the shim on PATH leads to the version in ~/.pyenv/version (3.11.7)");
	m.pyenv_version = "3.12.1";
	on(&m);
	ok(!find_id(&R, "setup.torch.cpu_only"), "pyenv: PYENV_VERSION=3.12.1 (no torch) wins");
	m.pyenv_version = "system";
	on(&m);
	ok(!find_id(&R, "setup.torch.cpu_only"),
	   "pyenv: 'system' means the next python3 on PATH, not the shim's versions");
}

/* A venv under tmp_dir/<name> with pyvenv.cfg (3.11, no system site); its site-packages dir. */
static void
bad_venv(char *venv, size_t size, char *sp, size_t spsize, const char *name)
{
	char cfg[256];

	join(venv, size, tmp_dir, name);
	fmt(cfg, sizeof(cfg), VENV_CFG, "false");
	put(venv, "pyvenv.cfg", cfg);
	fmt(sp, spsize, "%s/" SP, venv);
	make_dirs(sp);
}

static bool
any_torch_verdict(const struct dr_report *r)
{
	return find_id(r, "setup.torch.ok") || find_id(r, "setup.torch.cpu_only") ||
	       find_id(r, "setup.torch.cuda_too_new") || find_id(r, "setup.torch.rocm_on_nvidia");
}

/* Malformed files, odd names and odd environments: no wrong verdict, no hang. */
static void
test_malformed(void)
{
	char venv[PATH_MAX], sp[PATH_MAX + 64], path[PATH_MAX + 128], root[PATH_MAX];
	char big[80 * 1024], name[300];
	const struct dr_finding *f;
	struct machine m = { .nvidia = 1, .driver = R550, .home = "/home/none" };

	m.root = tmp_dir;

	/* a FIFO as version.py: not opened (an open() would block for good) */
	bad_venv(venv, sizeof(venv), sp, sizeof(sp), "fifo");
	put(sp, "torch-2.5.1+cu124.dist-info/METADATA", "Name: torch\nVersion: 2.5.1+cu124\n");
	fmt(path, sizeof(path), "%storch", sp);
	make_dirs(path);
	join(path, sizeof(path), sp, "torch/version.py");
	if (mkfifo(path, 0644))
		die_errno("cannot make the FIFO", path);
	m.venv = venv;
	alarm(20);
	on(&m);
	alarm(0);
	ok(!any_torch_verdict(&R), "a FIFO as torch/version.py: not read, no verdict, no hang");

	/* version.py that cannot be parsed: the build is unknown, not CPU-only */
	bad_venv(venv, sizeof(venv), sp, sizeof(sp), "garbage");
	put(sp, "torch/version.py", "__version__ = '2.5.1+cu124'\ncuda = '12.4\n");
	m.venv = venv;
	on(&m);
	ok(!find_id(&R, "setup.torch.cpu_only") && !any_torch_verdict(&R),
	   "version.py with an unclosed cuda string: no cpu_only verdict");
	put(sp, "torch/version.py", "__version__ = '2.5.1+cu124'\ncuda = get_cuda()\n");
	on(&m);
	ok(!any_torch_verdict(&R), "version.py with cuda = an expression: no verdict");
	{
		static const char bin[] = "\x7f"
		                          "ELF\0\0\0__version__ = '2.5.1'\0cuda = None\n";

		join(path, sizeof(path), sp, "torch/version.py");
		write_bytes(path, bin, sizeof(bin) - 1);
	}
	on(&m);
	ok(!any_torch_verdict(&R), "binary version.py (NUL bytes): no verdict");
	memset(big, '#', sizeof(big));
	big[sizeof(big) - 1] = '\0';
	memcpy(big + sizeof(big) - 40, "\ncuda = None\n__version__ = '2.5.1'\n", 35);
	join(path, sizeof(path), sp, "torch/version.py");
	write_bytes(path, big, strlen(big));
	on(&m);
	ok(!any_torch_verdict(&R), "80 KiB version.py, values past 64 KiB: not read, no verdict");
	put(sp, "torch/version.py",
	    "__version__ = '2.5.1+cu124'\r\ncuda = '12.4'\r\nhip = None\r\ncuda = '12.4'");
	on(&m);
	f = find_id(&R, "setup.torch.ok");
	ok(f && strstr(f->title, "torch 2.5.1+cu124 (CUDA 12.4)"),
	   "version.py with CRLF and no newline at the end: read");
	put(sp, "torch/version.py", "__version__ = '2.5.1+cu124'\ncuda = '99999999.1'\n");
	on(&m);
	ok(!any_torch_verdict(&R),
	   "cuda = '99999999.1': no CUDA version, no verdict (no overflow)");

	/* METADATA: a marker's == is no pin; CRLF lines; names too long to keep */
	bad_venv(venv, sizeof(venv), sp, sizeof(sp), "meta");
	put(sp, "torch/version.py", "__version__ = '2.5.1+cu124'\ncuda = '12.4'\nhip = None\n");
	put(sp, "torch-2.5.1+cu124.dist-info/METADATA",
	    "Name: torch\r\nVersion: 2.5.1+cu124\r\n"
	    "Requires-Dist: nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\"\r\n"
	    "Requires-Dist: nvidia-nccl-cu12>=2.21; platform_system == \"Linux\"\r\n"
	    "Requires-Dist: nvidia-cusparse-cu12===12.3; platform_system == \"Linux\"\r\n"
	    "Requires-Dist: nvidia-cufft-cu12 (==11.2.1.3)\r\n"
	    "Requires-Dist: nvidia-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "-a==1.0\r\n");
	put(sp, "nvidia_cudnn_cu12-9.1.0.70.dist-info", NULL);
	put(sp, "nvidia_nccl_cu12-2.21.5.dist-info", NULL);
	put(sp, "nvidia_cufft_cu12-11.2.1.3.dist-info", NULL);
	put(sp,
	    "nvidia_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_b-2.0.dist-info",
	    NULL);
	m.venv = venv;
	on(&m);
	f = find_id(&R, "setup.torch.nvidia_mismatch");
	ok(!f,
	   "METADATA with CRLF, a >= with a marker, ===, (==x), a long name: no false mismatch");
	if (f)
		diag("%s", f->evidence[1]);
	put(sp, "nvidia_cufft_cu12-11.0.0.0.dist-info", NULL);
	fmt(path, sizeof(path), "%s%s", sp, "nvidia_cufft_cu12-11.2.1.3.dist-info");
	rmdir(path);
	on(&m);
	f = find_id(&R, "setup.torch.nvidia_mismatch");
	ok(f && evidence_has(f, "nvidia_cufft_cu12: pinned 11.2.1.3, installed 11.0.0.0"),
	   "the old (==x) form is a pin");

	/* jax and CuPy names with numbers too big, CuPy's one-digit names */
	bad_venv(venv, sizeof(venv), sp, sizeof(sp), "names");
	put(sp, "jax-0.4.31.dist-info", NULL);
	put(sp, "jaxlib-0.4.31.dist-info", NULL);
	put(sp, "jax_cuda2147483648_plugin-0.4.31.dist-info", NULL);
	put(sp, "cupy_cuda92-7.8.0.dist-info", NULL);
	m = (struct machine){ .nvidia = 1, .driver = R470, .root = tmp_dir, .venv = venv };
	on(&m);
	ok(!find_id(&R, "setup.jax.plugin_mismatch") && !find_id(&R, "setup.jax.ok") &&
	           find_id(&R, "setup.jax.cpu_only"),
	   "jax_cuda2147483648_plugin: no CUDA major read (no overflow), jax has no CUDA plugin");
	f = find_id(&R, "setup.cupy.ok");
	ok(f && strstr(f->title, "(CUDA 9.2)"),
	   "cupy_cuda92: CUDA 9.2, fine on a CUDA 11.4 driver");
	fmt(path, sizeof(path), "%s%s", sp, "cupy_cuda92-7.8.0.dist-info");
	rmdir(path);
	put(sp, "cupy_cuda99999999999x-1.0.dist-info", NULL);
	on(&m);
	ok(!find_id(&R, "setup.cupy.ok") && !find_id(&R, "setup.cupy.cuda_too_new"),
	   "cupy_cuda99999999999x: CUDA unknown, no verdict");
	memset(name, 'a', sizeof(name));
	memcpy(name, "torch-", 6);
	memcpy(name + 240, ".dist-info", 11);
	put(sp, name, NULL);
	on(&m);
	ok(!find_id(&R, "setup.torch.ok") && !find_id(&R, "setup.torch.cpu_only"),
	   "a 250-byte torch dist-info name: no crash, no verdict");

	/* TensorFlow: the module-level form of old releases; a file that says nothing */
	bad_venv(venv, sizeof(venv), sp, sizeof(sp), "tf");
	put(sp, "tensorflow-2.2.0.dist-info", NULL);
	put(sp, "tensorflow/python/platform/build_info.py",
	    "is_rocm_build = False\nis_cuda_build = True\ncuda_version_number = '10.1'\n"
	    "cudnn_version_number = '7'");
	m = (struct machine){ .nvidia = 1, .driver = R470, .root = tmp_dir, .venv = venv };
	on(&m);
	f = find_id(&R, "setup.tensorflow.ok");
	ok(f && strstr(f->title, "(CUDA 10.1)") && !find_id(&R, "setup.tensorflow.cpu_only"),
	   "TensorFlow 2.2's build_info.py (module-level names): CUDA 10.1, not CPU-only");
	put(sp, "tensorflow/python/platform/build_info.py", "# empty\n");
	on(&m);
	ok(R.nr == 0, "build_info.py that says nothing: no cpu_only claim");

	/* VIRTUAL_ENV naming a file, CONDA_PREFIX a missing directory */
	join(path, sizeof(path), tmp_dir, "not-a-venv");
	write_str(path, "x\n");
	m = (struct machine){ .nvidia = 1, .driver = R550, .root = tmp_dir, .venv = path };
	m.conda = "/no/such/env";
	m.home = "/home/none";
	on(&m);
	f = find_id(&R, "setup.python.none");
	ok(f && evidence_has(f, "VIRTUAL_ENV /not-a-venv (no such directory)") &&
	           evidence_has(f, "CONDA_PREFIX /no/such/env (no such directory)") &&
	           !evidence_has(f, "VIRTUAL_ENV: "),
	   "VIRTUAL_ENV a file, CONDA_PREFIX missing: said so, no interpreter for them");

	/* PATH with empty and relative entries and "/": the prefix stays under the root */
	join(root, sizeof(root), tmp_dir, "pathroot");
	put(root, "python3", "#!/bin/sh\n");
	put(root, "bin/.keep", "");
	m = (struct machine){ .nvidia = 1, .driver = R550, .root = root, .home = "/h" };
	m.path = "::bin:./bin:/";
	on(&m);
	f = find_id(&R, "setup.python.none");
	ok(f && evidence_has(f, "python3 on PATH: / (") &&
	           !evidence_has(f, "python3 on PATH: /tmp"),
	   "PATH '::bin:./bin:/': python3 at the root's top, prefix the root, not above it");

	/* a venv with system site packages whose home has a trailing slash */
	join(root, sizeof(root), tmp_dir, "homeslash");
	fmt(path, sizeof(path), "%s/venv", root);
	put(path, "pyvenv.cfg",
	    "home = /opt/py/bin/\ninclude-system-site-packages = true\nversion = 3.11.9\n");
	put(root, "opt/py/" SP "torch/version.py", "__version__ = '2.5.1+cpu'\ncuda = None\n");
	m = (struct machine){ .nvidia = 1, .driver = R550, .root = root, .venv = "/venv" };
	on(&m);
	ok(find_id(&R, "setup.torch.cpu_only") != NULL,
	   "home = /opt/py/bin/ (trailing slash): the base's site-packages is on the path");

	/* conda: a build string right before ".json" */
	join(root, sizeof(root), tmp_dir, "condajson");
	put(root, "env/conda-meta/pytorch-2.5.1-cuda12.1.json", "{}\n");
	put(root, "env/" SP "torch/.keep", "");
	m = (struct machine){ .nvidia = 1, .driver = R550, .root = root, .conda = "/env" };
	on(&m);
	f = find_id(&R, "setup.torch.ok");
	ok(f && strstr(f->title, "(CUDA 12.1)") && evidence_has(f, "CUDA 12.1") &&
	           !evidence_has(f, "CUDA 12.1."),
	   "conda-meta/pytorch-2.5.1-cuda12.1.json: CUDA 12.1, not 12.1.");

	/* symbolic link loops for site-packages and torch */
	bad_venv(venv, sizeof(venv), sp, sizeof(sp), "loops");
	link_at(sp, "torch", "torch");
	fmt(path, sizeof(path), "%s/lib/python3.11", venv);
	m = (struct machine){ .nvidia = 1, .driver = R550, .root = tmp_dir, .venv = venv };
	on(&m);
	ok(!any_torch_verdict(&R), "torch a link to itself: found, nothing read, no verdict");
	rm_tree(sp);
	link_at(path, "site-packages", "site-packages");
	on(&m);
	ok(find_id(&R, "setup.python.none") != NULL, "site-packages a link to itself: skipped");
}

static void
test_made_trees(void)
{
	char venv[PATH_MAX], root[PATH_MAX], empty[PATH_MAX], cfg[256];
	const struct dr_finding *f;
	struct machine m = { .nvidia = 1, .driver = R550 };

	make_tmp_dir("t_doctor_python");

	/* torch whose nvidia-* wheels are not the pinned ones */
	join(venv, sizeof(venv), tmp_dir, "mixed");
	fmt(cfg, sizeof(cfg), VENV_CFG, "false");
	put(venv, "pyvenv.cfg", cfg);
	put(venv, SP "torch/version.py",
	    "__version__ = '2.5.1+cu124'\ncuda: Optional[str] = '12.4'\nhip = None\n");
	put(venv, SP "torch-2.5.1+cu124.dist-info/METADATA",
	    "Name: torch\nVersion: 2.5.1+cu124\n"
	    "Requires-Dist: nvidia-cudnn-cu12==9.1.0.70; platform_system == \"Linux\"\n"
	    "Requires-Dist: nvidia-cublas-cu12==12.4.5.8; platform_system == \"Linux\"\n"
	    "Requires-Dist: nvidia-nccl-cu12==2.99; extra == \"dist\"\n");
	put(venv, SP "nvidia_cudnn_cu12-8.9.2.26.dist-info", NULL);
	put(venv, SP "nvidia_cublas_cu12-12.4.5.8.dist-info", NULL);
	m.root = tmp_dir;
	m.venv = venv;
	on(&m);
	f = find_id(&R, "setup.torch.nvidia_mismatch");
	ok(f && f->severity == DR_WARNING &&
	           evidence_has(f, "nvidia_cudnn_cu12: pinned 9.1.0.70, "
	                           "installed 8.9.2.26") &&
	           !evidence_has(f, "cublas") && !evidence_has(f, "nccl"),
	   "mixed: cuDNN 8.9 against the 9.1.0.70 pin (extras ignored)");
	ok(f && f->action && strstr(f->action, "pip install nvidia_cudnn_cu12==9.1.0.70"),
	   "mixed: the command installs the pinned version");
	ok(find_id(&R, "setup.torch.ok") != NULL, "mixed: the build itself is ok");

	/* jax without a plugin, a plugin of another version, TensorFlow without CUDA */
	join(venv, sizeof(venv), tmp_dir, "cpuish");
	put(venv, "pyvenv.cfg", cfg);
	put(venv, SP "jax-0.4.31.dist-info", NULL);
	put(venv, SP "jaxlib-0.4.31.dist-info", NULL);
	put(venv, SP "tensorflow-2.17.0.dist-info", NULL);
	put(venv, SP "tensorflow/python/platform/build_info.py",
	    "build_info = collections.OrderedDict([('cuda_version', ''), ('is_cuda_build', False), "
	    "('is_rocm_build', False)])\n");
	m.venv = venv;
	on(&m);
	f = find_id(&R, "setup.jax.cpu_only");
	ok(f && f->severity == DR_WARNING && f->action &&
	           strstr(f->action, "pip install -U \"jax[cuda12]\""),
	   "cpuish: jax without CUDA plugin: warning, pip install -U \"jax[cuda12]\"");
	f = find_id(&R, "setup.tensorflow.cpu_only");
	ok(f && f->action && strstr(f->action, "tensorflow[and-cuda]"),
	   "cpuish: CPU-only TensorFlow: tensorflow[and-cuda]");
	put(venv, SP "jax_cuda12_plugin-0.4.30.dist-info", NULL);
	put(venv, SP "jax_cuda12_pjrt-0.4.30.dist-info", NULL);
	on(&m);
	ok(find_id(&R, "setup.jax.plugin_mismatch") && !find_id(&R, "setup.jax.cpu_only"),
	   "cpuish: plugin 0.4.30 with jaxlib 0.4.31: mismatch");
	m = (struct machine){ .root = tmp_dir, .venv = venv };
	on(&m);
	ok(!find_id(&R, "setup.jax.plugin_mismatch") && !find_id(&R, "setup.tensorflow.cpu_only"),
	   "cpuish without an NVIDIA GPU: nothing");

	/* a venv with system site packages: the user site comes before the venv (site.py) */
	join(root, sizeof(root), tmp_dir, "machine");
	fmt(venv, sizeof(venv), "%s/home/u/venv", root);
	fmt(cfg, sizeof(cfg), VENV_CFG, "true");
	put(venv, "pyvenv.cfg", cfg);
	put(venv, SP "torch/version.py",
	    "__version__ = '2.6.0+cu126'\ncuda = '12.6'\nhip = None\n");
	put(root, "home/u/.local/" SP "torch/version.py",
	    "__version__ = '2.4.1+cu121'\ncuda = '12.1'\nhip = None\n");
	m = (struct machine){
		.nvidia = 1, .driver = R550, .root = root, .venv = "/home/u/venv", .home = "/home/u"
	};
	on(&m);
	f = find_id(&R, "setup.torch.shadowed");
	ok(f && strstr(f->title, "torch 2.4.1+cu121 in the user site") &&
	           strstr(f->title, "shadows torch 2.6.0+cu126"),
	   "system-site venv: the user site shadows the venv's torch");
	fmt(cfg, sizeof(cfg), VENV_CFG, "false");
	put(venv, "pyvenv.cfg", cfg);
	on(&m);
	f = find_id(&R, "setup.torch.cuda_too_new");
	ok(!find_id(&R, "setup.torch.shadowed") && f && strstr(f->title, "2.6.0+cu126"),
	   "plain venv: user site off, no shadowing; cu126 on a 12.4 driver is too new");
	ok(f && f->action && strstr(f->action, "whl/cu124"), "plain venv: 2.6 has a cu124 build");

	/* PYTHONPATH first */
	put(root, "opt/stale/torch/version.py", "__version__ = '1.13.1+cu117'\ncuda = '11.7'\n");
	m.pythonpath = "/opt/stale";
	on(&m);
	f = find_id(&R, "setup.torch.shadowed");
	ok(f && strstr(f->title, "1.13.1+cu117 in the PYTHONPATH") && f->action &&
	           strstr(f->action, "PYTHONPATH"),
	   "PYTHONPATH: a stale torch shadows the venv's");

	/* a torch release not in the table: the general rule */
	put(venv, SP "torch/version.py", "__version__ = '3.1.0+cpu'\ncuda = None\nhip = None\n");
	m.pythonpath = NULL;
	on(&m);
	f = find_id(&R, "setup.torch.cpu_only");
	ok(f && f->action &&
	           strstr(f->action, "torch==3.1.0 --index-url "
	                             "https://download.pytorch.org/whl/cu124") &&
	           strstr(f->action, "previous-versions"),
	   "unknown release: cu124 from the driver, to be checked on pytorch.org");

	/* the system python3 is 3.11 (its link says so): a python3.8 user site is not on its path
	 */
	join(root, sizeof(root), tmp_dir, "upgraded");
	put(root, "usr/bin/python3.11", "# placeholder\n");
	link_at(root, "usr/bin/python3", "python3.11");
	put(root, "usr/local/lib/python3.11/dist-packages/torch/version.py",
	    "__version__ = '2.5.1+cu124'\ncuda = '12.4'\n");
	put(root, "home/u/.local/lib/python3.8/site-packages/torch/version.py",
	    "__version__ = '1.13.1+cu117'\ncuda = '11.7'\n");
	m = (struct machine){ .nvidia = 1, .driver = R550, .root = root, .home = "/home/u" };
	on(&m);
	f = find_id(&R, "setup.torch.ok");
	ok(!find_id(&R, "setup.torch.shadowed") && count_id(&R, "setup.torch.ok") == 1 && f &&
	           strstr(f->title, "2.5.1+cu124"),
	   "python3 -> python3.11: the python3.8 user site is not on its path");

	/* nothing at all */
	join(empty, sizeof(empty), tmp_dir, "empty");
	make_dirs(empty);
	m = (struct machine){ .nvidia = 1, .driver = R550, .root = empty, .home = "/home/none" };
	on(&m);
	f = find_id(&R, "setup.python.none");
	ok(R.nr == 1 && f && f->severity == DR_INFO && evidence_has(f, "searched:"),
	   "empty root: one info line saying what was searched");
	m.root = NULL; /* the fixtures: the venv is under the root */
	m.venv = fx("cuda-venv");
	on(&m);
	ok(!find_id(&R, "setup.python.none"), "a framework found: no setup.python.none");

	test_pyenv_shim();
	test_malformed();
	rm_tree(tmp_dir);
}

int
main(void)
{
	find_fixtures();
	{
		char rel[4096];

		join(rel, sizeof(rel), fixtures, "pyenv");
		if (!realpath(rel, pyfix))
			bail("no fixtures at %s", rel);
	}

	test_cuda_venv();
	test_cpu_venv();
	test_rocm_venv();
	test_conda_env();
	test_shadowed();
	test_tf_jax_cupy();
	test_made_trees();
	ok(all_explained && ids_checked > 0, "every id emitted (%zu findings) has an explanation",
	   ids_checked);
	{
		const struct dr_explain *e = NULL;
		bool sorted = true;

		for (e = dr_catalog_python; e->id && e[1].id; e++)
			sorted &= strcmp(e->id, e[1].id) < 0;
		ok(sorted, "dr_catalog_python is in id order");
	}
	dr_report_release(&R);
	return done_testing();
}
