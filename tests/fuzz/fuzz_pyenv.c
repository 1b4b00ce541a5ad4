/*
 * libFuzzer target: dr_check_python() on one Python environment whose files
 * are the input.
 *
 * Input: one flags byte, then these parts separated by 0x1E bytes (ASCII
 * record separator); a part that is not there is a missing file:
 *   0  torch/version.py
 *   1  torch's METADATA (in torch-<version>.dist-info, version from part 0's
 *      first quoted string, else 2.5.1)
 *   2  dist-info names, one a line: each made a directory (".dist-info"
 *      added when missing; '/' and NUL made '_'; at most 255 bytes, 64 names)
 *   3  tensorflow/python/platform/build_info.py
 *   4  pyvenv.cfg of the venv
 *   5  conda-meta file names, one a line (the environment is then
 *      CONDA_PREFIX's)
 * Flags:
 *   bits 0-1  the machine: 0 NVIDIA (driver 535.183.01, CUDA 12.2, from NVML),
 *             1 NVIDIA from the snapshot only (driver unknown), 2 AMD only,
 *             3 no GPU
 *   bit 2     the environment is found through PATH (<venv>/bin/python3),
 *             not VIRTUAL_ENV
 *   bit 3     a user site with its own torch/version.py (part 0 again):
 *             two torch installs
 *   bit 4     PYTHONPATH names the site-packages too (found once, listed twice)
 *   bits 5-7  ignored: the seeds start with '@' + flags, which reads well
 *
 * The tree is made once per run under /dev/shm (or $TMPDIR, or /tmp),
 * emptied for each input and removed at exit. Checked: no crash, leak or
 * file descriptor left open; every finding has a non-empty one-line title,
 * an id the catalog explains and a known severity; every evidence, meaning
 * and action string is NUL-terminated (ASan reads to the NUL) and of
 * plausible length.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/nvml_probe.h"
#include "core/config.h"
#include "core/gpu.h"
#include "doctor/doctor.h"
#include "fuzz.h"

#define SEP 0x1E
#define SP  "lib/python3.11/site-packages"

int LLVMFuzzerInitialize(int *argc, char ***argv);

enum part { P_VERSION, P_METADATA, P_NAMES, P_BUILD_INFO, P_CFG, P_CONDA, NR_PARTS };

static char base[4096], root[4096 + 16], sysfs[4096 + 16];
static const char *env_venv, *env_conda, *env_path, *env_home, *env_pythonpath;

static void
put(const char *rel, const char *data, size_t len)
{
	char path[8192], dir[8192];
	const char *slash = strrchr(rel, '/');

	if (slash) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - rel), rel);
		fuzz_make_dirs(root, dir);
	}
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fuzz_write_file(path, data, len);
}

static const char *
fuzz_env(const char *name)
{
	if (!strcmp(name, "VIRTUAL_ENV"))
		return env_venv;
	if (!strcmp(name, "CONDA_PREFIX"))
		return env_conda;
	if (!strcmp(name, "PATH"))
		return env_path;
	if (!strcmp(name, "HOME"))
		return env_home;
	if (!strcmp(name, "PYTHONPATH"))
		return env_pythonpath;
	return NULL;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(base, sizeof(base), "%s", fuzz_scratch("pyenv"));
	snprintf(root, sizeof(root), "%s/root", base);
	snprintf(sysfs, sizeof(sysfs), "%s/sys", base);
	if (mkdir(sysfs, 0755) < 0)
		fuzz_die_errno("cannot create", sysfs);
	return 0;
}

/* A file or directory name from len bytes of s: no '/', no NUL, 1 to max bytes. */
static void
safe_name(char *out, size_t max, const char *s, size_t len)
{
	size_t n = len < max ? len : max;

	for (size_t i = 0; i < n; i++)
		out[i] = s[i] == '/' || s[i] == '\0' ? '_' : s[i];
	out[n] = '\0';
	if (!n || !strcmp(out, ".") || !strcmp(out, ".."))
		snprintf(out, max + 1, "x");
}

static void
check_str(const char *what, const char *s, bool one_line)
{
	size_t len;

	if (!s)
		return;
	len = strlen(s); /* ASan: a missing NUL reads past the buffer */
	FUZZ_CHECK(len < (1u << 20), "%s is %zu bytes long", what, len);
	if (one_line)
		FUZZ_CHECK(!strchr(s, '\n'), "%s has a newline: '%s'", what, s);
}

static void
check_report(const struct dr_report *r)
{
	for (size_t i = 0; i < r->nr; i++) {
		const struct dr_finding *f = &r->f[i];

		FUZZ_CHECK(f->id && dr_explain_find(f->id), "finding id '%s' not in the catalog",
		           f->id ? f->id : "(null)");
		FUZZ_CHECK(f->severity >= DR_OK && f->severity <= DR_ERROR, "severity %d",
		           (int)f->severity);
		FUZZ_CHECK(f->title && f->title[0], "finding '%s' without a title", f->id);
		check_str("title", f->title, false);
		check_str("meaning", f->meaning, false);
		check_str("action", f->action, false);
		for (size_t k = 0; k < f->nr_evidence; k++) {
			FUZZ_CHECK(f->evidence[k], "finding '%s': evidence %zu is NULL", f->id, k);
			check_str("evidence", f->evidence[k], false);
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *part[NR_PARTS] = { NULL };
	size_t len[NR_PARTS] = { 0 };
	bool present[NR_PARTS] = { false };
	char prefix[64], rel[8192], ver[64] = "2.5.1", venv_abs[8192], sp_abs[8192];
	struct gs_config cfg;
	struct gpu_snapshot snap;
	struct nvml_probe nvml;
	struct dr_report r = DR_REPORT_INIT;
	struct dr_ctx ctx;
	unsigned flags;
	int machine, fd0;

	if (!size)
		return 0;
	fd0 = fuzz_lowest_free_fd();
	flags = data[0];
	machine = (int)(flags & 3);
	if (size > 1)
		fuzz_split((const char *)data + 1, size - 1, SEP, part, len, present, NR_PARTS);

	fuzz_rm_tree(root);
	if (mkdir(root, 0755) < 0)
		fuzz_die_errno("cannot create", root);
	snprintf(prefix, sizeof(prefix), "%s", present[P_CONDA] ? "env" : "venv");
	snprintf(rel, sizeof(rel), "%s/" SP, prefix);
	fuzz_make_dirs(root, rel);
	snprintf(rel, sizeof(rel), "%s/bin/python3", prefix);
	put(rel, "", 0);
	if (present[P_VERSION]) {
		const char *q = memchr(part[P_VERSION], '\'', len[P_VERSION]);

		snprintf(rel, sizeof(rel), "%s/" SP "/torch/version.py", prefix);
		put(rel, part[P_VERSION], len[P_VERSION]);
		if (q) {
			size_t rest = len[P_VERSION] - (size_t)(q + 1 - part[P_VERSION]);
			const char *e = memchr(q + 1, '\'', rest);

			if (e && e > q + 1)
				safe_name(ver, sizeof(ver) - 1, q + 1, (size_t)(e - q - 1));
		}
	}
	if (present[P_METADATA]) {
		snprintf(rel, sizeof(rel), "%s/" SP "/torch-%s.dist-info/METADATA", prefix, ver);
		put(rel, part[P_METADATA], len[P_METADATA]);
	}
	if (present[P_NAMES]) {
		const char *s = part[P_NAMES], *end = s + len[P_NAMES];

		for (int n = 0; s < end && n < 64; n++) {
			const char *nl = memchr(s, '\n', (size_t)(end - s));
			size_t l = nl ? (size_t)(nl - s) : (size_t)(end - s);
			char name[256];
			size_t nl_len;

			safe_name(name, 245, s, l);
			nl_len = strlen(name);
			snprintf(rel, sizeof(rel), "%s/" SP "/%s%s", prefix, name,
			         nl_len >= 10 && !strcmp(name + nl_len - 10, ".dist-info")
			                 ? ""
			                 : ".dist-info");
			fuzz_make_dirs(root, rel);
			s = nl ? nl + 1 : end;
		}
	}
	if (present[P_BUILD_INFO]) {
		snprintf(rel, sizeof(rel), "%s/" SP "/tensorflow/python/platform/build_info.py",
		         prefix);
		put(rel, part[P_BUILD_INFO], len[P_BUILD_INFO]);
	}
	if (present[P_CFG]) {
		snprintf(rel, sizeof(rel), "%s/pyvenv.cfg", prefix);
		put(rel, part[P_CFG], len[P_CFG]);
	}
	if (present[P_CONDA]) {
		const char *s = part[P_CONDA], *end = s + len[P_CONDA];

		snprintf(rel, sizeof(rel), "%s/conda-meta", prefix);
		fuzz_make_dirs(root, rel);
		for (int n = 0; s < end && n < 16; n++) {
			const char *nl = memchr(s, '\n', (size_t)(end - s));
			char name[256];

			safe_name(name, 255, s, nl ? (size_t)(nl - s) : (size_t)(end - s));
			snprintf(rel, sizeof(rel), "%s/conda-meta/%s", prefix, name);
			put(rel, "{}\n", 3);
			s = nl ? nl + 1 : end;
		}
	}
	if ((flags & 8) && present[P_VERSION])
		put("home/u/.local/" SP "/torch/version.py", part[P_VERSION], len[P_VERSION]);

	snprintf(venv_abs, sizeof(venv_abs), "/%s", prefix);
	snprintf(sp_abs, sizeof(sp_abs), "/%s/" SP, prefix);
	env_venv = env_conda = env_path = env_pythonpath = NULL;
	env_home = "/home/u";
	if (flags & 4) {
		snprintf(rel, sizeof(rel), "/usr/local/bin:%s/bin:/usr/bin", venv_abs);
		env_path = rel;
	} else if (present[P_CONDA]) {
		env_conda = venv_abs;
	} else {
		env_venv = venv_abs;
	}
	if (flags & 16)
		env_pythonpath = sp_abs;

	gs_config_init(&cfg);
	cfg.root = root;
	cfg.sysfs_root = sysfs;
	gpu_snapshot_init(&snap);
	memset(&nvml, 0, sizeof(nvml));
	nvml.init_rc = -1;
	if (machine == 0 || machine == 1 || machine == 2) {
		struct gpu_device *d = gpu_snapshot_add_dev(&snap);

		d->index = 0;
		d->vendor = machine == 2 ? VENDOR_AMD : VENDOR_NVIDIA;
	}
	if (machine == 0) {
		nvml.loaded = true;
		nvml.init_rc = 0;
		snprintf(nvml.driver_version, sizeof(nvml.driver_version), "535.183.01");
		nvml.cuda_version = 12020;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.cfg = &cfg;
	ctx.snap = &snap;
	ctx.nvml = &nvml;
	ctx.getenv = fuzz_env;
	dr_check_python(&ctx, &r);
	check_report(&r);
	dr_report_release(&r);
	gpu_snapshot_release(&snap);
	FUZZ_CHECK(fuzz_lowest_free_fd() == fd0,
	           "a file descriptor leaked (lowest free %d, was %d)", fuzz_lowest_free_fd(), fd0);
	return 0;
}
