/*
 * The DRM backend through the collector and the table, on fixture roots:
 * the mixed machine (eight GPUs of the fake NVML, an Intel iGPU and an AMD
 * dGPU) keeps NVML's indices and adds the DRM GPUs in bus order, skipping
 * the cards of nvidia-drm; a module's reason for an unknown or lesser
 * utilisation reaches the device; processes that cannot be inspected give
 * one note, only when a DRM GPU is shown. Runs from the repository root;
 * O names the build directory.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "tree.h"

#include "backend/collect.h"
#include "core/config.h"
#include "core/err.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/fmt.h"
#include "front/table.h"

#define DENIED_NOTE                                                                               \
	"2 processes could not be inspected for DRM GPU use: run as root or with CAP_SYS_PTRACE " \
	"to see them"

static char fake_lib[PATH_MAX], scenario[PATH_MAX];

/* cfg for a fixture root; with_nvml: the fake NVML with the mixed machine's scenario */
static void
setup(struct gs_config *cfg, const char *root, bool with_nvml)
{
	gs_config_init(cfg);
	gs_config_set_root(cfg, root);
	cfg->nvml_path = with_nvml ? fake_lib : "/nonexistent/libnvidia-ml.so.1";
	cfg->fixed_time = 1767225600;
	setenv("FAKE_NVML_SCENARIO", scenario, 1);
	setenv("FAKE_NVML_TIME", "0", 1);
}

static const struct gpu_device *
by_bus(const struct gpu_snapshot *s, const char *bus)
{
	for (size_t i = 0; i < s->nr_dev; i++)
		if (!strcmp(s->dev[i].pci_bus_id, bus))
			return &s->dev[i];
	return NULL;
}

static bool
has_note(const struct gpu_snapshot *s, const char *text)
{
	for (size_t i = 0; i < s->nr_note; i++)
		if (!strcmp(s->note[i], text))
			return true;
	return false;
}

static void
test_mixed(void)
{
	struct gs_config cfg;
	struct collector *c;
	struct gpu_snapshot s;
	struct err err = ERR_INIT;
	const struct gpu_device *intel, *amd;
	unsigned drm_cards = 0, nvml = 0;
	char root[PATH_MAX];

	join(root, sizeof(root), fixtures, "mixed");
	setup(&cfg, root, true);
	collector_open(&cfg, &c, &err);
	collector_scan(c, &err);
	is_int(collector_count(c), 10, "mixed: 8 NVIDIA GPUs, the iGPU and the dGPU, none twice");
	gpu_snapshot_init(&s);
	collector_sample(c, &s, COLLECT_WINDOW | COLLECT_PROCS, &err);
	for (size_t i = 0; i < s.nr_dev; i++) {
		drm_cards += s.dev[i].card[0] != '\0';
		nvml += s.dev[i].vendor == VENDOR_NVIDIA && !s.dev[i].card[0] && s.dev[i].index < 8;
	}
	is_int(nvml, 8, "mixed: indices 0-7 are NVML's GPUs");
	is_int(drm_cards, 2, "mixed: the nvidia-drm cards are left to NVML");
	intel = by_bus(&s, "00000000:00:02.0");
	amd = by_bus(&s, "00000000:03:00.0");
	ok(intel && intel->index == 8 && !strcmp(intel->driver, "i915"),
	   "mixed: 8 is the Intel iGPU (first on the bus)");
	ok(amd && amd->index == 9 && !strcmp(amd->driver, "amdgpu"), "mixed: 9 is the AMD dGPU");
	if (intel) {
		is_str(intel->util_source, "fdinfo", "i915 without PMU: Util from its clients");
		is_str(intel->util_note, "PMU: not read from a sysfs tree other than /sys",
		       "i915 without PMU: and the reason");
	}
	if (amd)
		is_str(amd->util_note, "", "amdgpu with gpu_busy_percent: no note");
	is_int(s.nr_note, 0, "mixed, as root: no note");
	gpu_snapshot_release(&s);
	collector_close(c);
	gs_config_release(&cfg);
}

static void
test_util_note(void)
{
	struct gs_config cfg;
	struct collector *c;
	struct gpu_snapshot s;
	struct err err = ERR_INIT;
	char root[PATH_MAX];

	/* no clients: Util stays unknown, and the module says why */
	join(root, sizeof(root), fixtures, "intel-i915");
	setup(&cfg, root, false);
	collector_open(&cfg, &c, &err);
	gpu_snapshot_init(&s);
	collector_sample(c, &s, COLLECT_WINDOW | COLLECT_PROCS, &err);
	ok(s.nr_dev == 2 && !dev_has(&s.dev[0], GF_UTIL_GPU) && !s.dev[0].util_source[0],
	   "i915, no clients: Util unknown");
	if (s.nr_dev)
		is_str(s.dev[0].util_note, "PMU: not read from a sysfs tree other than /sys",
		       "i915, no clients: the PMU's reason is kept");
	gpu_snapshot_release(&s);
	collector_close(c);
	gs_config_release(&cfg);
}

/* What the unprivileged child found. */
struct denied_res {
	int rc;
	size_t nr_note;
	bool note, note_nvidia_only;
	bool listed_4242, denied_4242, kfd_mem_4242, listed_1500;
	char line_4242[128];
};

/* Sample the tree root into the struct denied_res res; for as_nobody(). */
static void
denied_sample(const void *root, void *res)
{
	struct denied_res *r = res;
	struct gs_config cfg;
	struct collector *c;
	struct gpu_snapshot s;
	struct err err = ERR_INIT;
	struct strbuf sb = STRBUF_INIT;
	struct term t = { .color = false, .utf8 = false, .width = 80 };
	const char *p;

	memset(r, 0, sizeof(*r));
	setup(&cfg, root, true);
	collector_open(&cfg, &c, &err);
	gpu_snapshot_init(&s);
	r->rc = collector_sample(c, &s, COLLECT_WINDOW | COLLECT_PROCS, &err);
	r->nr_note = s.nr_note;
	r->note = has_note(&s, DENIED_NOTE);
	for (size_t i = 0; i < s.nr_proc; i++) {
		if (s.proc[i].pid == 4242) {
			r->listed_4242 = true;
			r->denied_4242 = s.proc[i].gpu_denied;
			r->kfd_mem_4242 = proc_has(&s.proc[i], PF_GPU_MEM) &&
			                  s.proc[i].v[PF_GPU_MEM] == 1610612736.0;
		}
		r->listed_1500 |= s.proc[i].pid == 1500;
	}
	table_status(&sb, &s, &t, true);
	p = strstr(sb.buf, " 4242 ");
	if (p) {
		while (p > sb.buf && p[-1] != '\n')
			p--;
		snprintf(r->line_4242, sizeof(r->line_4242), "%.*s", (int)strcspn(p, "\n"), p);
	}
	strbuf_release(&sb);
	gpu_snapshot_release(&s);

	/* only an NVIDIA GPU shown: the DRM backend's note is not about it */
	gpu_snapshot_init(&s);
	if (collector_select(c, "18:00.0", &err) == 0) {
		collector_sample(c, &s, COLLECT_WINDOW | COLLECT_PROCS, &err);
		r->note_nvidia_only = has_note(&s, DENIED_NOTE) || s.nr_dev != 1;
	} else {
		r->note_nvidia_only = true;
	}
	gpu_snapshot_release(&s);
	collector_close(c);
	gs_config_release(&cfg);
}

static void
test_denied(void)
{
	char root[PATH_MAX], path[PATH_MAX];
	struct denied_res r;

	make_tmp_dir("t_drm");
	chmod(tmp_dir, 0755); /* the unprivileged child must get in */
	copy_fixture("mixed", root, sizeof(root));
	/* the desktop's fds are closed to us; the ROCm job's fdinfo too */
	join(path, sizeof(path), root, "proc/1500/fd");
	chmod(path, 0);
	join(path, sizeof(path), root, "proc/4242/fdinfo/4");
	chmod(path, 0);
	if (as_nobody(denied_sample, root, &r, sizeof(r))) {
		skip("cannot drop root to test unreadable files");
		goto out;
	}
	is_int(r.rc, 0, "denied: the sample succeeds");
	ok(r.note, "denied: one note counts both processes and says what to do");
	is_int(r.nr_note, 1, "denied: and it is the only note");
	ok(!r.listed_1500, "denied: a process whose fds are closed cannot be listed");
	ok(r.listed_4242 && r.denied_4242,
	   "denied: a DRM file found but unreadable: listed, denied");
	ok(r.kfd_mem_4242, "denied: its memory still known from KFD");
	ok(strstr(r.line_4242, "1536MiB    ?") != NULL,
	   "denied: the table shows KFD's memory and '?' for its GPU%%: '%s'", r.line_4242);
	ok(!r.note_nvidia_only, "denied: no DRM note when only an NVIDIA GPU is shown");
out:
	rm_tree(tmp_dir);
}

int
main(void)
{
	const char *o = getenv("O") ? getenv("O") : "build";
	char rel[PATH_MAX];

	/* absolute: the unprivileged child may not be able to resolve a relative path */
	snprintf(rel, sizeof(rel), "%s/fakenvml/current/libnvidia-ml.so.1", o);
	if (!realpath(rel, fake_lib))
		snprintf(fake_lib, sizeof(fake_lib), "%s", rel);
	if (!realpath("tests/scenarios/mixed-8.scn", scenario))
		snprintf(scenario, sizeof(scenario), "tests/scenarios/mixed-8.scn");
	find_fixtures();
	test_mixed();
	test_util_note();
	test_denied();
	return done_testing();
}
