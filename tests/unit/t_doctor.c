/*
 * Tests of the doctor's report model (severity, order, exit code, JSON) and
 * of the checks: PCI on fixture sysfs trees, the CUDA environment on made-up
 * GPUs; each finding triggered by one input and cleared by another, and
 * every id emitted in the catalog.
 */
#include "doctor/doctor.h"

#include <stdio.h>
#include <string.h>

#include "core/config.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "doctor_test.h"
#include "harness.h"
#include "tree.h"

static void
pci_on(const char *fixture, struct dr_report *r)
{
	char root[4096];
	struct gs_config cfg;
	struct dr_ctx ctx;

	join(root, sizeof(root), fixtures, fixture);
	gs_config_init(&cfg);
	cfg.sysfs_root = root;
	ctx.cfg = &cfg;
	dr_check_pci(&ctx, r);
}

static void
all_in_catalog(const struct dr_report *r, const char *what)
{
	size_t nr_bad = 0;

	for (size_t i = 0; i < r->nr; i++)
		if (!dr_explain_find(r->f[i].id)) {
			diag("%s: '%s' has no explanation", what, r->f[i].id);
			nr_bad++;
		}
	ok(r->nr > 0 && nr_bad == 0, "%s: every id emitted (%zu findings) has an explanation", what,
	   r->nr);
}

/* --- the CUDA environment, on a snapshot of made-up GPUs --------------------------- */

static const char *env_cvd, *env_order;

static const char *
test_env(const char *name)
{
	if (!strcmp(name, "CUDA_VISIBLE_DEVICES"))
		return env_cvd;
	if (!strcmp(name, "CUDA_DEVICE_ORDER"))
		return env_order;
	return NULL;
}

static int
env_on(const struct gpu_snapshot *s, const char *cvd, const char *order, const char *want_id)
{
	struct gs_config cfg;
	struct dr_report r = DR_REPORT_INIT;
	struct dr_ctx ctx;
	int n;

	gs_config_init(&cfg);
	ctx.cfg = &cfg;
	ctx.snap = s;
	ctx.getenv = test_env;
	env_cvd = cvd;
	env_order = order;
	dr_check_cuda_env(&ctx, &r);
	n = (int)count_id(&r, want_id);
	for (size_t i = 0; i < r.nr; i++)
		if (!dr_explain_find(r.f[i].id))
			n = -1;
	dr_report_release(&r);
	return n;
}

static void
test_cuda_env(void)
{
	struct gpu_snapshot s;
	const char *names[] = { "NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3", "NVIDIA L40S" };

	gpu_snapshot_init(&s);
	for (unsigned i = 0; i < 3; i++) {
		struct gpu_device *d = gpu_snapshot_add_dev(&s);

		d->index = i;
		d->vendor = VENDOR_NVIDIA;
		snprintf(d->name, sizeof(d->name), "%s", names[i]);
		snprintf(d->uuid, sizeof(d->uuid), "GPU-%u0000000-1111-2222-3333-444444444444",
		         i + 1);
	}
	ok(env_on(&s, NULL, "PCI_BUS_ID", "setup.cuda.visible_devices") == 1,
	   "env: not set: ok, all GPUs");
	ok(env_on(&s, "", "PCI_BUS_ID", "setup.cuda.visible_devices_none") == 1,
	   "env: empty hides every GPU");
	ok(env_on(&s, "-1", "PCI_BUS_ID", "setup.cuda.visible_devices_none") == 1,
	   "env: -1 hides every GPU");
	ok(env_on(&s, "0,2", "PCI_BUS_ID", "setup.cuda.visible_devices") == 1,
	   "env: 0,2 names GPUs that exist");
	ok(env_on(&s, "GPU-2,1", "PCI_BUS_ID", "setup.cuda.visible_devices") == 1,
	   "env: a UUID prefix names a GPU");
	ok(env_on(&s, "0,3", "PCI_BUS_ID", "setup.cuda.visible_devices_unknown") == 1,
	   "env: index 3 of 3 GPUs does not exist");
	ok(env_on(&s, "GPU-9", "PCI_BUS_ID", "setup.cuda.visible_devices_unknown") == 1,
	   "env: an unknown UUID");
	ok(env_on(&s, "0,2", NULL, "setup.cuda.device_order") == 1,
	   "env: H100 and L40S without CUDA_DEVICE_ORDER: the order differs");
	ok(env_on(&s, "0,2", "PCI_BUS_ID", "setup.cuda.device_order") == 0,
	   "env: PCI_BUS_ID clears it");
	s.nr_dev = 2; /* two H100s: the same order either way */
	ok(env_on(&s, NULL, NULL, "setup.cuda.device_order") == 0,
	   "env: identical GPUs: no finding");
	s.nr_dev = 3;
	gpu_snapshot_release(&s);
	ok(env_on(NULL, "", NULL, "setup.cuda.visible_devices_none") == 0,
	   "env: no NVIDIA GPU: nothing to say");
}

int
main(void)
{
	struct dr_report r = DR_REPORT_INIT;
	struct strbuf sb = STRBUF_INIT;
	struct dr_finding *f;

	find_fixtures();

	/* the model */
	ok(dr_exit_code(&r) == 0 && dr_worst(&r) == DR_OK, "an empty report: exit 0");
	dr_add(&r, "setup.pci.bound", DR_OK, "fine");
	dr_add(&r, "setup.pci.vfio", DR_INFO, "a note");
	ok(dr_exit_code(&r) == 0, "ok and info: exit 0");
	f = dr_add(&r, "setup.pci.nouveau", DR_WARNING, "warn %d", 1);
	dr_evidence(f, "read %s", "here");
	dr_evidence(f, "and there");
	dr_meaning(f, "it means");
	dr_action(f, "do this");
	ok(dr_exit_code(&r) == 1, "a warning: exit 1");
	dr_add(&r, "setup.pci.no_driver", DR_ERROR, "bad \"quoted\"\nline");
	ok(dr_exit_code(&r) == 2 && dr_worst(&r) == DR_ERROR, "an error: exit 2");
	dr_text(&sb, &r, false);
	{
		const char *e = strstr(sb.buf, "ERROR"), *w = strstr(sb.buf, "WARN"),
		           *i = strstr(sb.buf, "INFO"), *o = strstr(sb.buf, "ok     fine");

		ok(e && w && i && o && e < w && w < i && i < o, "text: worst first, ok last");
	}
	ok(strstr(sb.buf, "1 error, 1 warning, 1 note, 1 ok") != NULL, "text: the summary line");
	ok(strstr(sb.buf, "evidence read here") && strstr(sb.buf, "and there") &&
	           strstr(sb.buf, "means    it means") && strstr(sb.buf, "do       do this"),
	   "text: evidence, meaning and action");
	strbuf_reset(&sb);
	dr_json(&sb, &r, 1767225600);
	ok(!strncmp(sb.buf, "{\"schema\":\"gpuscope.doctor/1\",\"time\":1767225600,", 48),
	   "json: schema and time first");
	ok(strstr(sb.buf, "\"worst\":\"error\",\"exit_code\":2") != NULL,
	   "json: worst and exit code");
	ok(strstr(sb.buf, "\"title\":\"bad \\\"quoted\\\"\\nline\"") != NULL,
	   "json: strings escaped");
	ok(strstr(sb.buf, "\"evidence\":[\"read here\",\"and there\"]") != NULL, "json: evidence");
	ok(strstr(sb.buf, "\"meaning\":null,\"action\":null") != NULL, "json: null when absent");
	dr_report_release(&r);

	/* paths under --root are named as the machine names them */
	f = dr_add(&r, "setup.pci.bound", DR_OK, "/x/root/dev/kfd and /x/rootless");
	dr_evidence(f, "/x/root/sys/bus/pci: /x/root");
	dr_report_unroot(&r, "/x/root/");
	ok(!strcmp(r.f[0].title, "/dev/kfd and /x/rootless") &&
	           !strcmp(r.f[0].evidence[0], "/sys/bus/pci: /x/root"),
	   "unroot: <root>/ becomes /, a longer name or the bare root is kept");
	dr_report_unroot(&r, "/");
	ok(!strcmp(r.f[0].title, "/dev/kfd and /x/rootless"), "unroot: root / changes nothing");
	dr_report_release(&r);

	/* the catalog is in id order and complete */
	{
		const struct dr_explain *all[512];
		size_t n = dr_catalog_list(all, 512);
		bool sorted = n > 0 && n <= 512;

		for (size_t i = 0; sorted && i + 1 < n; i++)
			sorted &= strcmp(all[i]->id, all[i + 1]->id) < 0;
		ok(sorted, "catalog: %zu ids, no duplicates", n);
		ok(dr_explain_find("setup.pci.nouveau") && !dr_explain_find("nope"),
		   "catalog: found by id");
	}

	/* PCI checks on fixtures */
	pci_on("sys-nouveau", &r);
	ok(count_id(&r, "setup.pci.nouveau") == 1 && dr_exit_code(&r) == 1,
	   "sys-nouveau: nouveau holds the NVIDIA card (warning)");
	ok(r.nr && r.f[0].nr_evidence && strstr(r.f[0].evidence[0], "0000:01:00.0") &&
	           r.f[0].action && strstr(r.f[0].action, "blacklist nouveau"),
	   "sys-nouveau: evidence names the card, action blacklists");
	all_in_catalog(&r, "sys-nouveau");
	dr_report_release(&r);

	pci_on("sys-unbound", &r);
	ok(count_id(&r, "setup.pci.no_driver") == 2 && dr_exit_code(&r) == 2,
	   "sys-unbound: two GPUs without a driver (error)");
	ok(count_id(&r, "setup.pci.nouveau") == 0, "sys-unbound: no nouveau finding");
	all_in_catalog(&r, "sys-unbound");
	dr_report_release(&r);

	pci_on("sys-empty", &r);
	ok(r.nr == 1 && count_id(&r, "setup.pci.no_gpu") == 1 && dr_exit_code(&r) == 0,
	   "sys-empty: no GPU on the bus (info)");
	dr_report_release(&r);

	pci_on("mixed/sys", &r);
	ok(r.nr > 0 && count_id(&r, "setup.pci.bound") == r.nr && dr_exit_code(&r) == 0,
	   "mixed: every GPU bound (%zu ok), nothing to fix", r.nr);
	all_in_catalog(&r, "mixed");
	dr_report_release(&r);

	/* a radeon card, made at run time; a sysfs that is not there */
	{
		char dev[4096], drv[4096];

		make_tmp_dir("t_doctor");
		join(dev, sizeof(dev), tmp_dir, "sys/bus/pci/devices/0000:01:00.0");
		make_dirs(dev);
		write_at(dev, "class", "0x030000\n");
		write_at(dev, "vendor", "0x1002\n");
		write_at(dev, "device", "0x6798\n");
		join(drv, sizeof(drv), tmp_dir, "sys/bus/pci/drivers/radeon");
		make_dirs(drv);
		link_at(dev, "driver", "../../drivers/radeon");
		{
			char root[4096];
			struct gs_config cfg;
			struct dr_ctx ctx = { 0 };

			join(root, sizeof(root), tmp_dir, "sys");
			gs_config_init(&cfg);
			cfg.sysfs_root = root;
			ctx.cfg = &cfg;
			dr_check_pci(&ctx, &r);
			ok(r.nr == 1 && count_id(&r, "setup.pci.radeon") == 1 &&
			           r.f[0].severity == DR_INFO &&
			           strstr(r.f[0].action, "amdgpu.si_support=1"),
			   "radeon: an AMD card on the legacy driver (info, how to move to amdgpu)");
			dr_report_release(&r);
			join(root, sizeof(root), tmp_dir, "no-such-sys");
			dr_check_pci(&ctx, &r);
			ok(r.nr == 1 && count_id(&r, "setup.pci.unreadable") == 1 &&
			           strstr(r.f[0].evidence[0], "no-such-sys/bus/pci/devices"),
			   "a sysfs that is not there: the PCI bus is unreadable (warning)");
			all_in_catalog(&r, "unreadable");
			dr_report_release(&r);
		}
		rm_tree(tmp_dir);
	}

	test_cuda_env();
	strbuf_release(&sb);
	return done_testing();
}
