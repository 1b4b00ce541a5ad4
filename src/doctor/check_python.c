/*
 * setup.python.*, setup.torch.*, setup.tensorflow.*, setup.jax.*,
 * setup.cupy.*: what the Python frameworks of the environments in use were
 * built for (CPU, CUDA x.y, ROCm), against the GPUs and the driver of this
 * machine; a torch that hides another; torch's nvidia-* wheels out of step.
 * The environments come from pyenv.c; nothing is imported or run.
 */
#include "doctor/doctor.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/nvml_probe.h"
#include "backend/pci.h"
#include "core/config.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"
#include "doctor/cudaver.h"
#include "doctor/pyenv.h"

extern const struct dr_explain dr_catalog_python[];

/* --- what the machine has ------------------------------------------------------------- */

struct gpu_env {
	bool nvidia, amd;
	const char *nvidia_from; /* where the NVIDIA GPU was seen */
	char driver[80];         /* "" unknown */
	int cuda;                /* 12040; 0 unknown */
	const char *driver_from;
};

static void
gpu_env_read(const struct dr_ctx *ctx, struct gpu_env *g)
{
	struct pci_gpu *pci = NULL;
	size_t nr = 0;

	memset(g, 0, sizeof(*g));
	if (ctx->nvml && ctx->nvml->init_rc == 0) {
		g->nvidia = true;
		g->nvidia_from = "NVML";
		snprintf(g->driver, sizeof(g->driver), "%s", ctx->nvml->driver_version);
		g->cuda = ctx->nvml->cuda_version;
		g->driver_from = "NVML";
	}
	if (ctx->snap) {
		for (size_t i = 0; i < ctx->snap->nr_dev; i++) {
			if (ctx->snap->dev[i].vendor == VENDOR_NVIDIA && !g->nvidia) {
				g->nvidia = true;
				g->nvidia_from = "the GPU snapshot";
			}
			if (ctx->snap->dev[i].vendor == VENDOR_AMD)
				g->amd = true;
		}
		if (!g->driver[0] && ctx->snap->nvidia.driver_version[0]) {
			snprintf(g->driver, sizeof(g->driver), "%s",
			         ctx->snap->nvidia.driver_version);
			g->cuda = ctx->snap->nvidia.cuda_version;
			g->driver_from = "the GPU snapshot";
		}
	}
	if (!g->driver[0] && ctx->nvml && ctx->nvml->module_version[0]) {
		snprintf(g->driver, sizeof(g->driver), "%s", ctx->nvml->module_version);
		g->driver_from = "the kernel module";
	}
	if (ctx->cfg && ctx->cfg->sysfs_root &&
	    !pci_list_gpus(ctx->cfg->sysfs_root, &pci, &nr, NULL)) {
		for (size_t i = 0; i < nr; i++) {
			if (pci[i].vendor == PCI_VENDOR_NVIDIA && !g->nvidia) {
				g->nvidia = true;
				g->nvidia_from = "the PCI bus";
			}
			if (pci[i].vendor == PCI_VENDOR_AMD)
				g->amd = true;
		}
	}
	free(pci);
	if (!g->cuda && g->driver[0])
		g->cuda = cuda_for_driver(g->driver);
}

static void
gpu_evidence(struct dr_finding *f, const struct gpu_env *g)
{
	char v[16];

	if (!g->nvidia) {
		dr_evidence(f, "this machine: %s",
		            g->amd ? "AMD GPU(s), no NVIDIA GPU" : "no GPU found");
		return;
	}
	if (g->driver[0] && g->cuda)
		dr_evidence(f,
		            "this machine: NVIDIA GPU (from %s); driver %s supports CUDA %s (%s)",
		            g->nvidia_from, g->driver, cuda_ver_str(g->cuda, v, sizeof(v)),
		            g->driver_from);
	else
		dr_evidence(f, "this machine: NVIDIA GPU (from %s); driver version unknown",
		            g->nvidia_from);
}

/* --- which CUDA and ROCm variants PyTorch published ----------------------------------- */

/*
 * The wheel variants of each torch release on download.pytorch.org, from
 * https://pytorch.org/get-started/previous-versions/ (checked for 2.0, 2.4,
 * 2.5, 2.6 and 2.9; 2.7's cu118/cu126/cu128 and 2.8's cu126/cu128/cu129 from
 * the release announcements and the cu12x indexes' wheel lists). rocm: the
 * newest ROCm index of the release (2.1 to 2.3 and 2.7, 2.8 from the release
 * notes, unverified). conda: the pytorch channel also published
 * pytorch-cuda=X.Y packages for these CUDA versions (it stopped after 2.5).
 */
static const struct torch_rel {
	const char *series;
	const char *cu[3]; /* oldest first */
	const char *rocm;
	bool conda;
} torch_rels[] = {
	{ "2.0", { "117", "118", NULL }, "rocm5.4.2", true },
	{ "2.1", { "118", "121", NULL }, "rocm5.6", true },
	{ "2.2", { "118", "121", NULL }, "rocm5.7", true },
	{ "2.3", { "118", "121", NULL }, "rocm6.0", true },
	{ "2.4", { "118", "121", "124" }, "rocm6.1", true },
	{ "2.5", { "118", "121", "124" }, "rocm6.2", true },
	{ "2.6", { "118", "124", "126" }, "rocm6.2.4", false },
	{ "2.7", { "118", "126", "128" }, "rocm6.3", false },
	{ "2.8", { "126", "128", "129" }, "rocm6.4", false },
	{ "2.9", { "126", "128", "130" }, "rocm6.4", false },
};

#define TORCH_INDEX "https://download.pytorch.org/whl/"

static const struct torch_rel *
torch_rel_find(const char *version)
{
	for (size_t i = 0; i < sizeof(torch_rels) / sizeof(torch_rels[0]); i++) {
		size_t n = strlen(torch_rels[i].series);

		if (!strncmp(version, torch_rels[i].series, n) &&
		    (version[n] == '.' || version[n] == '+' || !version[n]))
			return &torch_rels[i];
	}
	return NULL;
}

/* "124" -> 12, 4 */
static void
cu_split(const char *cu, int *major, int *minor)
{
	*major = (cu[0] - '0') * 10 + (cu[1] - '0');
	*minor = (int)strtol(cu + 2, NULL, 10);
}

/* The newest variant of rel the driver fully supports, or NULL. */
static const char *
best_cu(const struct torch_rel *rel, const struct gpu_env *g)
{
	const char *best = NULL;

	for (size_t i = 0; i < 3 && rel->cu[i]; i++) {
		int ma, mi;

		cu_split(rel->cu[i], &ma, &mi);
		if (cuda_support(g->cuda, g->driver, ma, mi) == CUDA_FULL)
			best = rel->cu[i];
	}
	return best;
}

/* "2.5.1+cu124" -> "2.5.1" */
static void
base_version(char *buf, size_t size, const char *v)
{
	snprintf(buf, size, "%.*s", (int)strcspn(v, "+"), v);
}

/*
 * "12.4" (or "12.4.1") -> 12, 4; false when not a CUDA version: major 1 to
 * 99, minor 0 to 99 (what cuda_support() computes with), nothing but digits
 * and dots.
 */
static bool
parse_mm(const char *s, int *major, int *minor)
{
	size_t a, b;

	if (!s)
		return false;
	a = strspn(s, "0123456789");
	if (a < 1 || a > 2 || s[a] != '.')
		return false;
	b = strspn(s + a + 1, "0123456789");
	if (b < 1 || b > 2 || (s[a + 1 + b] && s[a + 1 + b] != '.'))
		return false;
	*major = (int)strtol(s, NULL, 10);
	*minor = (int)strtol(s + a + 1, NULL, 10);
	return *major > 0;
}

static const char *
site_kind_name(enum py_site_kind k)
{
	switch (k) {
	case PY_SITE_PATH:
		return "PYTHONPATH";
	case PY_SITE_USER:
		return "user site";
	case PY_SITE_ENV:
		return "environment";
	default:
		return "system";
	}
}

/* "Activate the environment first (source X/bin/activate). " and the like */
static void
where_to_run(struct strbuf *sb, const struct py_scan *s, const struct py_site *site)
{
	const struct py_interp *in = &s->in[site->owner];

	if (site->kind == PY_SITE_ENV && in->kind == PY_VENV)
		strbuf_addf(sb, "With the venv active (source %s/bin/activate): ", in->prefix);
	else if (site->kind == PY_SITE_ENV && in->kind == PY_CONDA)
		strbuf_addf(sb, "With the conda env active (conda activate %s): ", in->prefix);
	else if (site->kind == PY_SITE_SYSTEM)
		strbuf_addf(sb, "As the user who installed it (sudo for %s): ", site->dir);
}

/* The pip command that installs torch base from index into site's place. */
static void
pip_torch(struct strbuf *sb, const struct py_site *site, const char *base, const char *index)
{
	strbuf_addf(sb, "pip install --force-reinstall torch==%s --index-url " TORCH_INDEX "%s%s%s",
	            base, isdigit((unsigned char)index[0]) ? "cu" : "", index,
	            site->kind == PY_SITE_USER ? " --user" : "");
}

/*
 * The advice to install the CUDA build of torch base that this driver
 * supports: the exact command when the variant is known.
 */
static void
advise_cuda_build(struct strbuf *sb, const struct py_scan *s, const struct py_site *site,
                  const char *base, const struct gpu_env *g)
{
	const struct py_interp *in = &s->in[site->owner];
	const struct torch_rel *rel = torch_rel_find(base);
	const char *cu = rel ? best_cu(rel, g) : NULL;
	char v[16];

	if (rel && cu) {
		int ma, mi;

		cu_split(cu, &ma, &mi);
		where_to_run(sb, s, site);
		if (in->kind == PY_CONDA && in->conda_torch[0] && rel->conda)
			strbuf_addf(
			        sb,
			        "conda install pytorch==%s pytorch-cuda=%d.%d -c pytorch -c nvidia "
			        "(or, to use pip wheels instead: ",
			        base, ma, mi);
		pip_torch(sb, site, base, cu);
		if (in->kind == PY_CONDA && in->conda_torch[0] && rel->conda)
			strbuf_addstr(sb, ")");
		strbuf_addf(
		        sb,
		        ". cu%s is the newest CUDA variant PyTorch published for torch %s that this "
		        "driver (%s, CUDA %s) fully supports. Reinstall torchvision and torchaudio "
		        "from the same index if they are installed.",
		        cu, rel->series, g->driver[0] ? g->driver : "version unknown",
		        cuda_ver_str(g->cuda, v, sizeof(v)));
		return;
	}
	if (rel && g->cuda) {
		const struct cuda_release *oldest;
		int ma, mi;

		cu_split(rel->cu[0], &ma, &mi);
		oldest = cuda_release_find(ma, mi);
		strbuf_addf(
		        sb,
		        "No CUDA variant PyTorch published for torch %s (the oldest is cu%s) is "
		        "fully supported by this driver (CUDA %s). Update the NVIDIA driver to %s%s "
		        "or newer and then run: ",
		        rel->series, rel->cu[0], cuda_ver_str(g->cuda, v, sizeof(v)),
		        oldest && oldest->min_driver[0] ? oldest->min_driver : "one for CUDA ",
		        oldest && oldest->min_driver[0] ? "" : rel->cu[0]);
		pip_torch(sb, site, base, rel->cu[0]);
		strbuf_addstr(sb, "; or install an older torch whose CUDA this driver supports.");
		return;
	}
	if (rel) {
		strbuf_addf(sb,
		            "The driver's CUDA version is unknown: read it from nvidia-smi (\"CUDA "
		            "Version\") and pick the newest of cu%s%s%s%s%s not above it, e.g. ",
		            rel->cu[0], rel->cu[1] ? ", cu" : "", rel->cu[1] ? rel->cu[1] : "",
		            rel->cu[2] ? ", cu" : "", rel->cu[2] ? rel->cu[2] : "");
		pip_torch(sb, site, base, rel->cu[0]);
		strbuf_addstr(sb, ".");
		return;
	}
	/* a release this table does not know: the general rule */
	if (g->cuda) {
		char idx[16];

		snprintf(idx, sizeof(idx), "cu%d%d", g->cuda / 1000, g->cuda % 1000 / 10);
		strbuf_addf(sb,
		            "Install the CUDA build of torch %s for the newest CUDA not above the "
		            "driver's (%s), e.g. ",
		            base, cuda_ver_str(g->cuda, v, sizeof(v)));
		pip_torch(sb, site, base, idx);
		strbuf_addstr(sb,
		              "; which cuXYZ variants exist for this torch version must be "
		              "checked on https://pytorch.org/get-started/previous-versions/ (use "
		              "the newest one not above the driver's CUDA).");
	} else {
		strbuf_addf(
		        sb,
		        "Install the CUDA build of torch %s whose CUDA (cuXYZ index) is not above "
		        "the \"CUDA Version\" nvidia-smi shows; the variants of each release are "
		        "listed on https://pytorch.org/get-started/previous-versions/.",
		        base);
	}
}

/* --- torch -------------------------------------------------------------------------- */

static void
torch_evidence(struct dr_finding *f, const struct py_scan *s, const struct py_site *site)
{
	const struct py_torch *t = &site->torch;
	const struct py_interp *in = &s->in[site->owner];

	if (t->version_py)
		dr_evidence(
		        f, "%s/torch/version.py: __version__ = '%s', cuda = %s%s%s, hip = %s%s%s",
		        site->dir, t->version, t->cuda[0] ? "'" : "", t->cuda[0] ? t->cuda : "None",
		        t->cuda[0] ? "'" : "", t->hip[0] ? "'" : "", t->hip[0] ? t->hip : "None",
		        t->hip[0] ? "'" : "");
	else if (t->dist_info[0])
		dr_evidence(f, "%s/%s: Version %s (no torch/version.py)", site->dir, t->dist_info,
		            t->meta_version);
	if (in->conda_torch[0] && site->kind == PY_SITE_ENV)
		dr_evidence(f, "%s/conda-meta/%s: pytorch %s, %s%s%s", in->prefix, in->conda_torch,
		            in->conda_version,
		            in->conda_cuda[0] ? "CUDA "
		            : in->conda_cpu   ? "CPU build"
		                              : "build",
		            in->conda_cuda, in->conda_pytorch_cuda[0] ? " (pytorch-cuda " : "");
	if (in->conda_torch[0] && site->kind == PY_SITE_ENV && in->conda_pytorch_cuda[0])
		dr_evidence(f, "%s/conda-meta: pytorch-cuda %s", in->prefix,
		            in->conda_pytorch_cuda);
	dr_evidence(f, "found through %s (%s)", in->how, in->prefix);
}

/* The CUDA version a torch site was built for ("" CPU or ROCm). */
static const char *
torch_cuda(const struct py_scan *s, const struct py_site *site)
{
	const struct py_interp *in = &s->in[site->owner];

	if (site->torch.version_py)
		return site->torch.cuda;
	if (in->kind == PY_CONDA && site->kind == PY_SITE_ENV && in->conda_torch[0])
		return in->conda_cuda;
	return "";
}

static void
torch_cuda_build(const struct dr_ctx *ctx, struct dr_report *r, const struct py_scan *s,
                 const struct py_site *site, const struct gpu_env *g, const char *cuda)
{
	const struct py_torch *t = &site->torch;
	const struct cuda_release *rel;
	struct strbuf sb = STRBUF_INIT;
	struct dr_finding *f;
	char base[PY_NAME], v[16];
	int ma, mi;
	enum cuda_support sup;

	(void)ctx;
	base_version(base, sizeof(base),
	             t->version[0] ? t->version : s->in[site->owner].conda_version);
	if (!parse_mm(cuda, &ma, &mi))
		return;
	if (!g->nvidia) {
		if (!g->amd)
			return;
		f = dr_add(
		        r, "setup.torch.cuda_on_amd", DR_ERROR,
		        "a CUDA build of PyTorch (torch %s, CUDA %s) on a machine with only AMD GPUs",
		        t->version, cuda);
		torch_evidence(f, s, site);
		gpu_evidence(f, g);
		dr_meaning(f,
		           "A CUDA build cannot use AMD GPUs: torch.cuda.is_available() is False "
		           "and everything runs on the CPU. AMD GPUs need the ROCm build.");
		{
			const struct torch_rel *tr = torch_rel_find(base);

			where_to_run(&sb, s, site);
			pip_torch(&sb, site, base, tr ? tr->rocm : "rocm6.2");
			strbuf_addf(
			        &sb,
			        "%s. The nvidia-* wheels it leaves behind can then be removed "
			        "(pip uninstall them).",
			        tr ? ""
			           : " (check on https://pytorch.org/get-started/previous-versions/ "
			             "which rocmX.Y index exists for this version)");
			dr_action(f, "Install the ROCm build of the same version: %s", sb.buf);
		}
		goto out;
	}
	sup = cuda_support(g->cuda, g->driver, ma, mi);
	rel = cuda_release_find(ma, mi);
	if (sup == CUDA_FULL) {
		f = dr_add(r, "setup.torch.ok", DR_OK,
		           "torch %s (CUDA %s) in %s: the driver supports CUDA %s", t->version,
		           cuda, site->dir, cuda_ver_str(g->cuda, v, sizeof(v)));
		torch_evidence(f, s, site);
		gpu_evidence(f, g);
		goto out;
	}
	if (sup == CUDA_UNKNOWN) {
		f = dr_add(
		        r, "setup.torch.ok", DR_INFO,
		        "torch %s (CUDA %s) in %s: the driver's CUDA version is unknown, not checked",
		        t->version, cuda, site->dir);
		torch_evidence(f, s, site);
		gpu_evidence(f, g);
		dr_action(
		        f,
		        "Compare CUDA %s with the \"CUDA Version\" that nvidia-smi shows: it must "
		        "not be lower.",
		        cuda);
		goto out;
	}
	f = dr_add(r, "setup.torch.cuda_too_new", sup == CUDA_TOO_NEW ? DR_ERROR : DR_WARNING,
	           "torch %s is built for CUDA %s, newer than the driver supports (CUDA %s)",
	           t->version, cuda, cuda_ver_str(g->cuda, v, sizeof(v)));
	torch_evidence(f, s, site);
	gpu_evidence(f, g);
	if (sup == CUDA_TOO_NEW)
		dr_meaning(f,
		           "torch.cuda.is_available() returns False with the warning \"The NVIDIA "
		           "driver on your system is too old\", and the work runs on the CPU. The "
		           "driver itself works: it supports CUDA %s, only this build needs more.",
		           cuda_ver_str(g->cuda, v, sizeof(v)));
	else
		dr_meaning(
		        f,
		        "PyTorch wheels bundle the CUDA %d runtime, so CUDA minor-version "
		        "compatibility usually lets this build run on a CUDA %s driver; but kernels "
		        "compiled at run time from PTX (a GPU newer than the build's targets, "
		        "triton and torch.compile) fail with \"the provided PTX was compiled with "
		        "an unsupported toolchain\".",
		        ma, cuda_ver_str(g->cuda, v, sizeof(v)));
	strbuf_addf(&sb,
	            "Update the NVIDIA driver to %s or newer (the minimum for CUDA %d.%d), or ",
	            rel && rel->min_driver[0] ? rel->min_driver : "one", ma, mi);
	strbuf_addstr(&sb, "install the build this driver supports. ");
	advise_cuda_build(&sb, s, site, base, g);
	dr_action(f, "%s", sb.buf);
out:
	strbuf_release(&sb);
}

static void
torch_pins(struct dr_report *r, const struct py_scan *s, const struct py_site *site)
{
	const struct py_torch *t = &site->torch;
	struct strbuf bad = STRBUF_INIT, cmd = STRBUF_INIT;
	struct dr_finding *f;
	size_t nbad = 0;

	for (size_t i = 0; i < t->nr_pin; i++) {
		const struct py_dist *d = py_site_nvidia(site, t->pin[i].name);

		if (d && !strcmp(d->version, t->pin[i].version))
			continue;
		strbuf_addf(&bad, "%s%s: pinned %s, %s%s", nbad ? "; " : "", t->pin[i].name,
		            t->pin[i].version, d ? "installed " : "not installed here",
		            d ? d->version : "");
		strbuf_addf(&cmd, " %s==%s", t->pin[i].name, t->pin[i].version);
		nbad++;
	}
	if (!nbad)
		goto out;
	f = dr_add(
	        r, "setup.torch.nvidia_mismatch", DR_WARNING,
	        "torch %s in %s: %zu of its %zu nvidia-* CUDA library wheels differ from its pins",
	        t->version, site->dir, nbad, t->nr_pin);
	dr_evidence(f, "%s/%s/METADATA: %zu Requires-Dist nvidia-* pins", site->dir, t->dist_info,
	            t->nr_pin);
	dr_evidence(f, "%s/nvidia_*.dist-info: %s", site->dir, bad.buf);
	(void)s;
	dr_meaning(f, "torch loads the CUDA libraries of these wheels; other versions than the "
	              "ones it was built against (a partial upgrade, another package pinning "
	              "them) fail with undefined symbols (libcudnn, libcusparse, libnvJitLink) "
	              "or run with the wrong library.");
	dr_action(f,
	          "Install the pinned versions: pip install%s%s (or reinstall torch with pip "
	          "install --force-reinstall torch==%s from the index it came from).",
	          cmd.buf, site->kind == PY_SITE_USER ? " --user" : "", t->version);
out:
	strbuf_release(&bad);
	strbuf_release(&cmd);
}

static void
check_torch(const struct dr_ctx *ctx, struct dr_report *r, const struct py_scan *s,
            const struct py_site *site, const struct gpu_env *g)
{
	const struct py_torch *t = &site->torch;
	const char *cuda = torch_cuda(s, site);
	const struct py_interp *in = &s->in[site->owner];
	struct strbuf sb = STRBUF_INIT;
	struct dr_finding *f;
	char base[PY_NAME];

	base_version(base, sizeof(base), t->version[0] ? t->version : in->conda_version);
	if (cuda[0]) {
		torch_cuda_build(ctx, r, s, site, g, cuda);
		torch_pins(r, s, site);
	} else if (t->hip[0]) {
		if (g->nvidia && !g->amd) {
			f = dr_add(
			        r, "setup.torch.rocm_on_nvidia", DR_ERROR,
			        "a ROCm build of PyTorch (torch %s) on a machine with NVIDIA GPUs",
			        t->version);
			torch_evidence(f, s, site);
			gpu_evidence(f, g);
			dr_meaning(f,
			           "A ROCm (HIP) build drives AMD GPUs only: on this machine "
			           "torch.cuda.is_available() is False and everything runs on the "
			           "CPU.");
			strbuf_addstr(&sb, "Install the CUDA build of the same version. ");
			advise_cuda_build(&sb, s, site, base, g);
			dr_action(f, "%s", sb.buf);
		} else if (g->amd) {
			f = dr_add(r, "setup.torch.ok", DR_OK,
			           "torch %s (ROCm, HIP %s) in %s on AMD GPUs", t->version, t->hip,
			           site->dir);
			torch_evidence(f, s, site);
		}
	} else if (t->version_py || (in->conda_torch[0] && site->kind == PY_SITE_ENV)) {
		if (g->nvidia) {
			f = dr_add(r, "setup.torch.cpu_only", DR_ERROR,
			           "CPU-only PyTorch (torch %s) on a machine with an NVIDIA GPU",
			           t->version[0] ? t->version : in->conda_version);
			torch_evidence(f, s, site);
			gpu_evidence(f, g);
			dr_meaning(
			        f,
			        "This build has no CUDA: torch.cuda.is_available() is False and "
			        "everything runs on the CPU. pip installs it from the /whl/cpu "
			        "index, or from PyPI on a machine where the default wheel is CPU-only; "
			        "conda installs it with the cpuonly package.");
			advise_cuda_build(&sb, s, site, base, g);
			dr_action(f, "%s", sb.buf);
		} else {
			f = dr_add(
			        r, "setup.torch.ok", DR_OK,
			        "torch %s (CPU build) in %s: no NVIDIA GPU here, a CPU build fits",
			        t->version, site->dir);
			torch_evidence(f, s, site);
		}
	}
	strbuf_release(&sb);
}

/* torch found at more than one place on one interpreter's path */
static void
check_shadowed(struct dr_report *r, const struct py_scan *s, bool *hidden)
{
	for (size_t i = 0; i < s->nr_in; i++) {
		const struct py_interp *in = &s->in[i];
		const struct py_site *active = NULL;

		for (size_t k = 0; k < in->nr_site; k++) {
			const struct py_site *site = &s->site[in->site[k]];
			const struct py_site *stray;
			struct dr_finding *f;
			char py[PATH_MAX + 32];

			if (!site->torch.found)
				continue;
			if (!active) {
				active = site;
				continue;
			}
			if (hidden[in->site[k]])
				continue;
			hidden[in->site[k]] = true;
			f = dr_add(
			        r, "setup.torch.shadowed", DR_WARNING,
			        "two torch installs: torch %s in the %s %s shadows torch %s in %s",
			        active->torch.version, site_kind_name(active->kind), active->dir,
			        site->torch.version, site->dir);
			dr_evidence(f, "%s/torch/version.py: __version__ = '%s', cuda = %s",
			            active->dir, active->torch.version,
			            active->torch.cuda[0] ? active->torch.cuda : "None");
			dr_evidence(f, "%s/torch/version.py: __version__ = '%s', cuda = %s",
			            site->dir, site->torch.version,
			            site->torch.cuda[0] ? site->torch.cuda : "None");
			dr_evidence(f, "sys.path of %s (%s): %s comes before %s", in->prefix,
			            in->how, site_kind_name(active->kind),
			            site_kind_name(site->kind));
			dr_meaning(
			        f,
			        "'import torch' loads %s from %s (%s); %s in %s is never imported. "
			        "Libraries installed for the hidden one (its nvidia-* wheels, "
			        "torchvision, triton) may not match the one that loads, and pip "
			        "list shows both.",
			        active->torch.version, active->dir,
			        active->kind == PY_SITE_USER ? "the user site precedes the system "
			                                       "directories on sys.path"
			        : active->kind == PY_SITE_PATH
			                ? "PYTHONPATH comes first on sys.path"
			                : "it comes first on sys.path",
			        site->torch.version, site->dir);
			if (in->kind == PY_VENV)
				snprintf(py, sizeof(py), "%s/bin/python3", in->prefix);
			else
				snprintf(py, sizeof(py), "python3");
			stray = active->kind == PY_SITE_USER || active->kind == PY_SITE_PATH
			                ? active
			                : site;
			if (stray->kind == PY_SITE_PATH)
				dr_action(
				        f,
				        "Remove %s from PYTHONPATH (in your shell start-up files or "
				        "the job script); then %s is imported.",
				        stray->dir, site->torch.version);
			else if (stray == active)
				dr_action(
				        f,
				        "Remove the stray user-site copy: %s -m pip uninstall torch (pip "
				        "removes the copy Python imports first: %s in %s); repeat for "
				        "torchvision/torchaudio if they are there too. Or run with "
				        "PYTHONNOUSERSITE=1 to ignore the user site.",
				        py, active->torch.version, active->dir);
			else
				dr_action(
				        f,
				        "Remove the hidden copy: PYTHONNOUSERSITE=1 %s%s -m pip uninstall "
				        "torch run so that %s comes first (or delete %s/torch and its "
				        "dist-info).",
				        stray->kind == PY_SITE_SYSTEM ? "sudo " : "", py,
				        stray->dir, stray->dir);
		}
	}
}

/* --- TensorFlow, JAX, CuPy ------------------------------------------------------------ */

/* The common verdict of a build for CUDA major.minor (minor -1: any of the family). */
static void
cuda_verdict(struct dr_report *r, const char *prefix, const char *what, const char *where,
             int major, int minor, const struct gpu_env *g, const char *evidence, const char *fix)
{
	enum cuda_support sup = cuda_support(g->cuda, g->driver, major, minor < 0 ? 0 : minor);
	char v[16], want[16];
	const char *id;
	struct dr_finding *f;

	if (minor < 0)
		snprintf(want, sizeof(want), "%d.x", major);
	else
		snprintf(want, sizeof(want), "%d.%d", major, minor);
	if (sup == CUDA_FULL || sup == CUDA_UNKNOWN) {
		id = !strcmp(prefix, "tensorflow") ? "setup.tensorflow.ok"
		     : !strcmp(prefix, "jax")      ? "setup.jax.ok"
		                                   : "setup.cupy.ok";
		if (sup == CUDA_FULL)
			f = dr_add(r, id, DR_OK, "%s (CUDA %s) in %s: the driver supports CUDA %s",
			           what, want, where, cuda_ver_str(g->cuda, v, sizeof(v)));
		else
			f = dr_add(
			        r, id, DR_INFO,
			        "%s (CUDA %s) in %s: the driver's CUDA version is unknown, not checked",
			        what, want, where);
		dr_evidence(f, "%s", evidence);
		gpu_evidence(f, g);
		return;
	}
	id = !strcmp(prefix, "tensorflow") ? "setup.tensorflow.cuda_too_new"
	     : !strcmp(prefix, "jax")      ? "setup.jax.cuda_too_new"
	                                   : "setup.cupy.cuda_too_new";
	f = dr_add(r, id, sup == CUDA_TOO_NEW ? DR_ERROR : DR_WARNING,
	           "%s is built for CUDA %s, newer than the driver supports (CUDA %s)", what, want,
	           cuda_ver_str(g->cuda, v, sizeof(v)));
	dr_evidence(f, "%s", evidence);
	gpu_evidence(f, g);
	if (sup == CUDA_TOO_NEW) {
		dr_meaning(
		        f,
		        "Its CUDA libraries refuse this driver (CUDA_ERROR_INSUFFICIENT_DRIVER "
		        "/ \"CUDA driver version is insufficient for CUDA runtime version\"), so "
		        "it finds no GPU and runs on the CPU.");
	} else {
		dr_meaning(f, "It runs through CUDA minor-version compatibility, but code compiled "
		              "at run time from PTX (XLA and Triton kernels, GPUs newer than the "
		              "build's targets) fails with \"unsupported toolchain\" errors.");
	}
	{
		const struct cuda_release *rel = cuda_release_find(major, minor < 0 ? 0 : minor);

		dr_action(f,
		          "Update the NVIDIA driver to %s or newer (the minimum for CUDA %s), or "
		          "%s.",
		          rel && rel->min_driver[0] ? rel->min_driver : "one supporting", want,
		          fix);
	}
}

static void
check_tf(struct dr_report *r, const struct py_site *site, const struct gpu_env *g)
{
	const struct py_tf *t = &site->tf;
	struct dr_finding *f;
	char ev[PATH_MAX + 256], what[96];
	int ma, mi;

	if (!t->build_info || !g->nvidia)
		return;
	snprintf(ev, sizeof(ev),
	         "%s/tensorflow/python/platform/build_info.py: cuda_version '%s', cudnn_version "
	         "'%s', is_cuda_build %s, is_rocm_build %s",
	         site->dir, t->cuda, t->cudnn,
	         t->is_cuda == 1   ? "True"
	         : t->is_cuda == 0 ? "False"
	                           : "(not read)",
	         t->is_rocm == 1   ? "True"
	         : t->is_rocm == 0 ? "False"
	                           : "(not read)");
	snprintf(what, sizeof(what), "TensorFlow%s%s", t->version[0] ? " " : "", t->version);
	/* a build_info.py that says neither: a CUDA build when it names a CUDA version */
	if (t->is_cuda != 0 && t->is_rocm != 1 && parse_mm(t->cuda, &ma, &mi)) {
		char fix[256];

		snprintf(
		        fix, sizeof(fix),
		        "install a TensorFlow release built for the CUDA this driver supports (the "
		        "tested configurations are listed on https://www.tensorflow.org/install/"
		        "source#gpu)");
		cuda_verdict(r, "tensorflow", what, site->dir, ma, mi, g, ev, fix);
		return;
	}
	/* a CUDA build whose version is not read, or a build_info.py that says nothing */
	if (t->is_cuda != 0 && t->is_rocm != 1)
		return;
	f = dr_add(r, "setup.tensorflow.cpu_only", DR_WARNING,
	           "%s in %s has no CUDA support, on a machine with an NVIDIA GPU", what,
	           site->dir);
	dr_evidence(f, "%s", ev);
	gpu_evidence(f, g);
	dr_meaning(f,
	           "tf.config.list_physical_devices('GPU') is empty and everything runs on the "
	           "CPU (a tensorflow-cpu package, a %s build, or a platform without CUDA "
	           "wheels).",
	           t->is_rocm == 1 ? "ROCm" : "CPU-only");
	dr_action(f,
	          "Install TensorFlow with its CUDA libraries: pip install --force-reinstall "
	          "\"tensorflow[and-cuda]%s%s\"%s",
	          t->version[0] ? "==" : "", t->version,
	          site->kind == PY_SITE_USER ? " --user" : "");
}

static void
check_jax(struct dr_report *r, const struct py_site *site, const struct gpu_env *g)
{
	const struct py_jax *j = &site->jax;
	struct dr_finding *f;
	char ev[PATH_MAX + 1024], what[320];
	const char *lib = j->jaxlib[0] ? j->jaxlib : j->version;

	if (!g->nvidia || j->plugin_rocm)
		return;
	snprintf(ev, sizeof(ev), "%s: jax-%s, jaxlib-%s%s%s%s%s%s%s", site->dir,
	         j->version[0] ? j->version : "(none)", j->jaxlib[0] ? j->jaxlib : "(none)",
	         j->plugin[0] ? ", " : ", no jax CUDA plugin", j->plugin, j->plugin[0] ? "-" : "",
	         j->plugin_version, j->pjrt[0] ? ", " : "", j->pjrt);
	if (j->plugin_cuda && ((j->pjrt[0] && strcmp(j->plugin_version, lib)) ||
	                       (j->pjrt[0] && strcmp(j->pjrt_version, j->plugin_version)) ||
	                       !j->pjrt[0] || strcmp(j->plugin_version, lib))) {
		f = dr_add(r, "setup.jax.plugin_mismatch", DR_WARNING,
		           "jax's CUDA plugin %s %s does not match jaxlib %s in %s", j->plugin,
		           j->plugin_version, lib, site->dir);
		dr_evidence(f, "%s", ev);
		if (!j->pjrt[0])
			dr_evidence(f, "%s: no jax_cuda%d_pjrt dist-info", site->dir,
			            j->plugin_cuda);
		dr_meaning(f,
		           "jax loads the CUDA plugin only when its version matches jaxlib's (and "
		           "the plugin needs its PJRT package): otherwise it warns and falls back "
		           "to the CPU.");
		dr_action(f, "Install matching versions: pip install -U \"jax[cuda%d]\"",
		          j->plugin_cuda);
		return;
	}
	if (j->plugin_cuda) {
		char fix[320];

		snprintf(what, sizeof(what), "jax %s with %s %s", j->version, j->plugin,
		         j->plugin_version);
		snprintf(fix, sizeof(fix),
		         "install a jax release for an older CUDA (pip install -U "
		         "\"jax[cuda%d]\" picks the plugin of this major version)",
		         j->plugin_cuda - 1);
		cuda_verdict(r, "jax", what, site->dir, j->plugin_cuda, -1, g, ev, fix);
		return;
	}
	if (!j->version[0] && !j->jaxlib[0])
		return;
	f = dr_add(r, "setup.jax.cpu_only", DR_WARNING,
	           "jax %s in %s has no CUDA plugin, on a machine with an NVIDIA GPU", lib,
	           site->dir);
	dr_evidence(f, "%s", ev);
	gpu_evidence(f, g);
	dr_meaning(f, "jaxlib alone runs on the CPU: jax.devices() lists only CpuDevice. The GPU "
	              "support is the separate jax-cuda12-plugin (and jax-cuda12-pjrt) package.");
	dr_action(f, "Install jax with its CUDA plugin: pip install -U \"jax[cuda12]\"%s",
	          site->kind == PY_SITE_USER ? " --user" : "");
}

static void
check_cupy(struct dr_report *r, const struct py_site *site, const struct gpu_env *g)
{
	const struct py_cupy *c = &site->cupy;
	char ev[PATH_MAX + 1024], what[256], fix[512];

	if (!g->nvidia || c->rocm || c->major < 0)
		return;
	snprintf(ev, sizeof(ev), "%s/%s-%s.dist-info: CuPy for CUDA %d.%s", site->dir, c->dist,
	         c->version, c->major, c->minor < 0 ? "x" : "");
	if (c->minor >= 0)
		snprintf(ev + strlen(ev), sizeof(ev) - strlen(ev), "%d", c->minor);
	snprintf(what, sizeof(what), "CuPy %s (%s)", c->version, c->dist);
	snprintf(fix, sizeof(fix),
	         "install the CuPy wheel for the CUDA this driver supports (pip uninstall %s; pip "
	         "install cupy-cuda%dx)",
	         c->dist, g->cuda ? g->cuda / 1000 : 12);
	cuda_verdict(r, "cupy", what, site->dir, c->major, c->minor, g, ev, fix);
}

/* --- the check ----------------------------------------------------------------------- */

static const char *
env_or_null(const char *name)
{
	(void)name;
	return NULL;
}

void
dr_check_python(const struct dr_ctx *ctx, struct dr_report *r)
{
	struct py_scan s;
	struct gpu_env g;
	bool *hidden, any = false;
	const char *root = ctx->cfg && ctx->cfg->root ? ctx->cfg->root : "/";

	py_scan(&s, root, ctx->getenv ? ctx->getenv : env_or_null);
	py_scan_show_under(&s, root);
	gpu_env_read(ctx, &g);
	hidden = xcalloc(s.nr_site + 1, sizeof(*hidden));
	check_shadowed(r, &s, hidden);
	for (size_t i = 0; i < s.nr_site; i++) {
		const struct py_site *site = &s.site[i];

		if (!py_site_has_framework(site))
			continue;
		any = true;
		if (site->torch.found && !hidden[i])
			check_torch(ctx, r, &s, site, &g);
		if (site->tf.found)
			check_tf(r, site, &g);
		if (site->jax.found)
			check_jax(r, site, &g);
		if (site->cupy.found)
			check_cupy(r, site, &g);
	}
	if (!any) {
		struct dr_finding *f =
		        dr_add(r, "setup.python.none", DR_INFO,
		               "no Python environment with torch, TensorFlow, JAX or "
		               "CuPy found");

		dr_evidence(f, "searched: %s", s.searched.len ? s.searched.buf : "(nothing)");
		for (size_t i = 0; i < s.nr_in; i++)
			dr_evidence(
			        f, "%s: %s (%zu director%s on its path, none with a GPU framework)",
			        s.in[i].how, s.in[i].prefix, s.in[i].nr_site,
			        s.in[i].nr_site == 1 ? "y" : "ies");
	}
	free(hidden);
	py_scan_release(&s);
}

/* --- the explanations ---------------------------------------------------------------- */

const struct dr_explain dr_catalog_python[] = {
	{ "setup.cupy.cuda_too_new", "CuPy is built for a newer CUDA than the driver supports",
	  "A cupy-cudaXXx wheel is built for one CUDA major version (cupy-cuda12x: any\n"
	  "12.x; old names such as cupy-cuda117 name major and minor). Causes, most\n"
	  "likely first:\n"
	  "  1. The wheel was chosen for a newer machine or copied from a requirements\n"
	  "     file (cupy-cuda12x on a driver that supports only CUDA 11.x).\n"
	  "  2. The driver is old: nvidia-smi shows the newest CUDA it supports in its\n"
	  "     header (\"CUDA Version\").\n"
	  "Tell them apart by that \"CUDA Version\" against the wheel's name. Fix: install\n"
	  "the cupy-cudaNNx wheel of the driver's CUDA major version (pip uninstall the\n"
	  "other first: two CuPy wheels in one environment conflict), or update the\n"
	  "driver to the minimum that doctor names." },
	{ "setup.cupy.ok", "CuPy's CUDA build and the driver",
	  "The CUDA version of the installed cupy-cuda wheel, read from its dist-info\n"
	  "name, is supported by the driver (or the driver's version is unknown, and the\n"
	  "line says so)." },
	{ "setup.jax.cpu_only", "jax has no CUDA plugin on a machine with an NVIDIA GPU",
	  "Since jax 0.4.26 the jaxlib wheel on PyPI is CPU-only; the GPU support is a\n"
	  "plugin (jax-cuda12-plugin with jax-cuda12-pjrt), installed by the extra\n"
	  "'jax[cuda12]'. Without it jax.devices() lists only CPU devices, silently.\n"
	  "Causes: 'pip install jax' without the extra; a requirements file that pins\n"
	  "jax and jaxlib only; a plugin installed in another environment than the one\n"
	  "in use. Fix: pip install -U \"jax[cuda12]\" in the environment that runs the\n"
	  "program." },
	{ "setup.jax.cuda_too_new", "jax's CUDA plugin needs a newer driver",
	  "The jax-cudaNN-plugin is built for CUDA major version NN and needs a driver\n"
	  "that supports it (for CUDA 12, driver 525.60.13 or newer on Linux). With an\n"
	  "older driver the plugin fails to initialise and jax falls back to the CPU\n"
	  "with a warning. Update the driver, or use a jax release for the driver's\n"
	  "CUDA major version." },
	{ "setup.jax.ok", "jax's CUDA plugin and the driver",
	  "jax with a CUDA plugin whose CUDA major version the driver supports (or the\n"
	  "driver's version is unknown, and the line says so)." },
	{ "setup.jax.plugin_mismatch", "jax's CUDA plugin does not match jaxlib",
	  "jax loads the CUDA plugin only when the plugin's version equals jaxlib's, and\n"
	  "the plugin needs its PJRT package (jax-cuda12-pjrt) of the same version.\n"
	  "Causes: upgrading jax and jaxlib without the plugin ('pip install -U jax'),\n"
	  "or a plugin left from another release. jax then warns that the plugin is\n"
	  "incompatible and runs on the CPU. Fix: pip install -U \"jax[cuda12]\", which\n"
	  "installs all of them at one version." },
	{ "setup.python.none", "No Python GPU framework found",
	  "doctor looked for torch, TensorFlow, JAX and CuPy in the Python environments\n"
	  "it could find without running Python: $VIRTUAL_ENV, $CONDA_PREFIX, the\n"
	  "python3 first on $PATH, the user site (~/.local/lib/python3.X/site-packages,\n"
	  "unless PYTHONNOUSERSITE is set), PYTHONPATH, and the system directories\n"
	  "(/usr/local/lib/python3.X/dist-packages, /usr/lib/python3/dist-packages,\n"
	  "site-packages). An environment that is not active (a venv not activated, a\n"
	  "conda env not selected) is not seen: run doctor from the shell or job that\n"
	  "runs the program." },
	{ "setup.tensorflow.cpu_only", "TensorFlow has no CUDA support on an NVIDIA machine",
	  "TensorFlow's build_info.py says is_cuda_build False: a tensorflow-cpu package,\n"
	  "a ROCm build, or a platform without CUDA wheels. tf.config.list_physical_\n"
	  "devices('GPU') is empty. On Linux x86_64, 'pip install tensorflow[and-cuda]'\n"
	  "installs the CUDA build together with the nvidia-* library wheels it needs.\n"
	  "A CUDA build that still finds no GPU usually lacks those libraries: the log\n"
	  "says 'Could not load dynamic library' or 'Cannot dlopen some GPU libraries'." },
	{ "setup.tensorflow.cuda_too_new", "TensorFlow is built for a newer CUDA than the driver",
	  "TensorFlow's build_info.py names the CUDA and cuDNN it was built with (2.17:\n"
	  "CUDA 12.3, cuDNN 8). With a driver for an older CUDA of the same major\n"
	  "version TensorFlow runs through minor-version compatibility, but XLA compiles\n"
	  "PTX at run time and fails ('unsupported toolchain', or slow fallbacks); with\n"
	  "an older major version it finds no GPU. Update the driver to the minimum\n"
	  "doctor names, or use a TensorFlow release built for the driver's CUDA (the\n"
	  "tested build configurations: tensorflow.org/install/source#gpu)." },
	{ "setup.tensorflow.ok", "TensorFlow's CUDA build and the driver",
	  "The CUDA version TensorFlow was built with (build_info.py) is supported by\n"
	  "the driver (or the driver's version is unknown, and the line says so)." },
	{ "setup.torch.cpu_only", "CPU-only PyTorch on a machine with an NVIDIA GPU",
	  "torch/version.py says cuda = None and hip = None (a +cpu build, or a conda\n"
	  "cpuonly build): torch.cuda.is_available() is False and the program runs on\n"
	  "the CPU, often without an error. Causes, most likely first:\n"
	  "  1. torch was installed from the /whl/cpu index (a copied command, a\n"
	  "     requirements file with --index-url .../cpu or torch==X+cpu).\n"
	  "  2. Another package's install replaced the CUDA build with a CPU one\n"
	  "     (pip resolving torch again from an index that has only CPU wheels).\n"
	  "  3. conda chose the cpuonly variant (pytorch-mutex ... cpu).\n"
	  "Fix: reinstall the same version from the CUDA index that suits the driver\n"
	  "(doctor gives the exact command: the newest cuXYZ variant PyTorch published\n"
	  "for that release that the driver fully supports), and reinstall torchvision\n"
	  "and torchaudio from the same index." },
	{ "setup.torch.cuda_on_amd", "A CUDA build of PyTorch on a machine with only AMD GPUs",
	  "torch/version.py names a CUDA version and no HIP version: this build cannot\n"
	  "drive AMD GPUs. Install the ROCm build from download.pytorch.org/whl/rocmX.Y\n"
	  "(doctor names the index of that release), with a ROCm-capable amdgpu driver." },
	{ "setup.torch.cuda_too_new", "PyTorch is built for a newer CUDA than the driver supports",
	  "A driver supports every CUDA up to the one nvidia-smi shows as 'CUDA\n"
	  "Version'. A torch build for a newer CUDA of another major version (cu124 on\n"
	  "a CUDA 11.x driver) cannot run: torch.cuda.is_available() is False with 'The\n"
	  "NVIDIA driver on your system is too old'. Within one major version (cu124 on\n"
	  "a 12.2 driver) minor-version compatibility usually lets it run, since the\n"
	  "wheels bundle the CUDA runtime, but kernels compiled at run time from PTX\n"
	  "(triton, torch.compile, GPUs newer than the wheel's targets) fail. Either\n"
	  "update the driver to the minimum for that CUDA (doctor names it, from\n"
	  "NVIDIA's release notes), or install the torch variant that the driver\n"
	  "supports (doctor gives the command)." },
	{ "setup.torch.nvidia_mismatch", "torch's nvidia-* CUDA wheels differ from its pins",
	  "CUDA builds of torch from PyPI and the cu12x indexes depend on nvidia-*-cu12\n"
	  "wheels at exact versions (METADATA Requires-Dist ==). Another version in the\n"
	  "same site-packages comes from a partial upgrade, another package pinning a\n"
	  "different cuDNN or cuBLAS, or 'pip install --no-deps'; torch then fails at\n"
	  "import with undefined symbols (libcudnn, libcusparse, libnvJitLink) or runs\n"
	  "with an untested library. Install the pinned versions, or reinstall torch." },
	{ "setup.torch.ok", "PyTorch's build and this machine's GPUs",
	  "The torch build (CUDA x.y, ROCm, or CPU) fits the GPUs and the driver: a CUDA\n"
	  "build the driver supports, a ROCm build on AMD GPUs, or a CPU build where\n"
	  "there is no NVIDIA GPU. An info line instead of ok means the driver's CUDA\n"
	  "version could not be read, so the build was not checked against it." },
	{ "setup.torch.rocm_on_nvidia", "A ROCm build of PyTorch on a machine with NVIDIA GPUs",
	  "torch/version.py names a HIP version (a +rocmX.Y build): it drives AMD GPUs\n"
	  "only, so on NVIDIA GPUs torch.cuda.is_available() is False. This usually\n"
	  "comes from an environment or image made for AMD machines. Reinstall the same\n"
	  "version from the CUDA index doctor names." },
	{ "setup.torch.shadowed", "Two torch installs: one hides the other",
	  "Python imports the first torch on sys.path. The order is PYTHONPATH, then\n"
	  "the user site (~/.local/lib/python3.X/site-packages; also in a venv made with\n"
	  "--system-site-packages, where it even precedes the venv's own directory),\n"
	  "then the environment's and the system's directories. 'pip install --user'\n"
	  "over a system-wide torch, or a PYTHONPATH left in a shell start-up file, makes\n"
	  "a second copy that wins; the other is never imported, and its CUDA libraries\n"
	  "and torchvision may not match the one that loads. Find which one loads with\n"
	  "python3 -c 'import torch; print(torch.__file__)'. Remove the stray copy\n"
	  "(doctor gives the command), or set PYTHONNOUSERSITE=1." },
	{ NULL, NULL, NULL },
};
