/*
 * MIG devices on the fake driver library (tests/scenarios/mig.scn: an H100
 * split into two 3g.40gb instances): each is a device of its own after its
 * GPU, with its UUID, instance ids, profile and memory; its utilisation is
 * unknown, not 0; the GPU's processes move to the MIG device of their
 * instance ids; selection by "G:M" and MIG UUID; whole-GPU counts and the
 * doctor's view leave MIG devices out. Runs from the repository root; O
 * names the build directory.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#include "backend/collect.h"
#include "core/config.h"
#include "core/err.h"
#include "core/gpu.h"
#include "queue/gpus.h"

#define MiB (1024.0 * 1024.0)

static char fake_lib[512];

static void
setup(struct gs_config *cfg, const char *scenario)
{
	const char *o = getenv("O") ? getenv("O") : "build";

	snprintf(fake_lib, sizeof(fake_lib), "%s/fakenvml/current/libnvidia-ml.so.1", o);
	gs_config_init(cfg);
	cfg->nvml_path = fake_lib;
	cfg->proc_root = "tests/fixtures/proc";
	cfg->sysfs_root = "tests/fixtures/sys-empty";
	cfg->passwd_file = "tests/fixtures/passwd";
	setenv("FAKE_NVML_SCENARIO", scenario, 1);
}

/* One sample of scenario with -i ids (NULL: all), into s. */
static int
sample(const char *scenario, const char *ids, struct gpu_snapshot *s)
{
	struct gs_config cfg;
	struct collector *c = NULL;
	struct err err = ERR_INIT;
	int rc;

	setup(&cfg, scenario);
	gpu_snapshot_init(s);
	rc = collector_open(&cfg, &c, &err);
	if (rc == 0)
		rc = collector_select(c, ids, &err);
	if (rc == 0)
		rc = collector_sample(c, s, COLLECT_PROCS, &err);
	if (c)
		collector_close(c);
	return rc;
}

static const struct gpu_proc *
proc_of(const struct gpu_snapshot *s, uint32_t pid)
{
	for (size_t i = 0; i < s->nr_proc; i++)
		if (s->proc[i].pid == pid)
			return &s->proc[i];
	return NULL;
}

static void
test_devices(void)
{
	struct gpu_snapshot s;
	const struct gpu_device *g, *m0, *m1;
	const struct gpu_proc *p;

	is_int(sample("tests/scenarios/mig.scn", NULL, &s), 0, "mig.scn samples");
	is_int(s.nr_dev, 3, "the GPU and its two MIG devices");
	if (s.nr_dev != 3) {
		gpu_snapshot_release(&s);
		return;
	}
	g = &s.dev[0];
	m0 = &s.dev[1];
	m1 = &s.dev[2];
	ok(!g->is_mig && m0->is_mig && m1->is_mig, "MIG devices follow their GPU");
	is_int(gpu_snapshot_count(&s, VENDOR_NVIDIA), 1, "one NVIDIA GPU: MIG devices not counted");
	is_int(m0->mig_parent, 0, "parent of MIG device 0");
	is_int(m1->mig_parent, 0, "parent of MIG device 1");
	is_int(m0->index, 0, "MIG device 0: index within its GPU");
	is_int(m1->index, 1, "MIG device 1: index within its GPU");
	is_int(g->index, 0, "the GPU keeps index 0");
	is_int(m0->mig_gi, 1, "GPU instance id 1");
	is_int(m1->mig_gi, 2, "GPU instance id 2");
	is_int(m0->mig_ci, 0, "compute instance id 0");
	is_str(m0->mig_profile, "3g.40gb", "profile from the MIG device's name");
	is_int(m0->mig_sm_count, 60, "SM count from nvmlDeviceGetAttributes_v2");
	is_str(m0->name, "NVIDIA H100 80GB HBM3 MIG 3g.40gb", "the MIG device's own name");
	is_str(m0->uuid, "MIG-44444444-5555-6666-7777-888888880100", "the fake's default MIG UUID");
	is_str(m1->uuid, "MIG-6e1c8b0a-2f3d-5b7e-9a41-c0d2e3f4a5b6", "the scenario's MIG UUID");
	is_str(m1->pci_bus_id, g->pci_bus_id, "a MIG device is on its GPU's bus");
	is_dbl(dev_get(m0, GF_MEM_TOTAL), 40448 * MiB, 0.5, "MIG device 0: its own memory total");
	is_dbl(dev_get(m0, GF_MEM_USED), 20013 * MiB, 0.5, "MIG device 0: its own memory used");
	is_dbl(dev_get(m1, GF_MEM_USED), 9013 * MiB, 0.5, "MIG device 1: its own memory used");
	is_dbl(dev_get(g, GF_MEM_TOTAL), 81559 * MiB, 0.5, "the GPU: the whole memory");
	ok(!dev_has(m0, GF_UTIL_GPU) && !dev_has(m0, GF_UTIL_MEM),
	   "MIG device utilisation unknown (NOT_SUPPORTED), not 0");
	ok(!dev_has(m0, GF_POWER_DRAW) && !dev_has(m0, GF_TEMP_GPU),
	   "power and temperature are the GPU's, not read on a MIG device");
	ok(dev_has(g, GF_POWER_DRAW), "the GPU's power is read");
	p = proc_of(&s, 1001);
	ok(p && p->dev == 1, "process of GPU instance 1 on MIG device 0");
	ok(p && p->v[PF_GPU_INSTANCE] == 1 && p->v[PF_COMPUTE_INSTANCE] == 0,
	   "it keeps its instance ids");
	p = proc_of(&s, 2002);
	ok(p && p->dev == 2, "process of GPU instance 2 on MIG device 1");
	is_int(s.nr_proc, 2, "each process listed once");
	ok(gpu_snapshot_procs_unknown(&s, NULL) == 0, "MIG devices' process lists are known");

	gpu_snapshot_fold_mig(&s);
	is_int(s.nr_dev, 1, "folded: the GPU alone");
	ok(proc_of(&s, 1001) && proc_of(&s, 1001)->dev == 0 && proc_of(&s, 2002) &&
	           proc_of(&s, 2002)->dev == 0,
	   "folded: the processes back on the GPU");
	gpu_snapshot_release(&s);
}

static void
test_select(void)
{
	struct gpu_snapshot s;
	struct gpu_device dev[4];
	struct err err = ERR_INIT;
	bool sel[4];

	is_int(sample("tests/scenarios/mig.scn", "0:1", &s), 0, "-i 0:1");
	is_int(s.nr_dev, 2, "0:1: MIG device 1 and its GPU");
	ok(s.nr_dev == 2 && s.dev[1].is_mig && s.dev[1].mig_gi == 2 && s.dev[1].mig_parent == 0,
	   "0:1: mig_parent is the GPU's position in the sample");
	ok(!proc_of(&s, 1001), "0:1: the other instance's process is left out");
	ok(proc_of(&s, 2002) && proc_of(&s, 2002)->dev == 1, "0:1: its own process on it");
	gpu_snapshot_release(&s);

	is_int(sample("tests/scenarios/mig.scn", "MIG-6e1c8b0a", &s), 0, "-i by MIG UUID prefix");
	ok(s.nr_dev == 2 && !strcmp(s.dev[1].uuid, "MIG-6e1c8b0a-2f3d-5b7e-9a41-c0d2e3f4a5b6"),
	   "the MIG UUID selects that MIG device (and its GPU)");
	gpu_snapshot_release(&s);

	is_int(sample("tests/scenarios/mig.scn", "0", &s), 0, "-i 0");
	is_int(s.nr_dev, 3, "a GPU named selects its MIG devices");
	gpu_snapshot_release(&s);

	/* the core rules, on a hand-made list */
	memset(dev, 0, sizeof(dev));
	dev[0].index = 0;
	dev[1].is_mig = true, dev[1].index = 0, dev[1].mig_parent = 0;
	dev[2].is_mig = true, dev[2].index = 1, dev[2].mig_parent = 0;
	dev[3].index = 1;
	is_int(gpu_select(dev, 4, "1", sel, &err), 0, "'1' selects");
	ok(!sel[0] && !sel[1] && !sel[2] && sel[3], "'1' is GPU 1, not MIG device 1 of GPU 0");
	is_int(gpu_select(dev, 4, "1:0", sel, &err), E_USAGE, "'1:0': GPU 1 has no MIG device");
	ok(strstr(err.msg, "from 0 to 1"), "the message counts GPUs only: %s", err.msg);
	err_clear(&err);
}

/* Whole GPUs keep NVML's numbering when a MIG device comes between them. */
static void
test_numbering(void)
{
	char path[] = "/tmp/t_mig_XXXXXX";
	struct gpu_snapshot s;
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!f) {
		ok(0, "temporary scenario");
		return;
	}
	fputs("[gpu]\nname = NVIDIA A100-SXM4-40GB\nuuid = GPU-aaaaaaaa-0000-0000-0000-000000000000\n"
	      "mig_mode = 1\nmemory_total = 40960 MiB\nmemory_used = 10 MiB\n"
	      "[mig]\nprofile = 7g.40gb\ngpu_instance = 0\nmemory_total = 40192 MiB\n"
	      "memory_used = 5 MiB\n"
	      "[gpu]\nname = NVIDIA A100-SXM4-40GB\nuuid = GPU-bbbbbbbb-0000-0000-0000-000000000000\n"
	      "mig_mode = 0\nmemory_total = 40960 MiB\nmemory_used = 10 MiB\n",
	      f);
	fclose(f);
	is_int(sample(path, NULL, &s), 0, "two GPUs, the first with a MIG device");
	ok(s.nr_dev == 3 && !s.dev[2].is_mig && s.dev[2].index == 1,
	   "the second GPU is GPU 1, after the first's MIG device");
	ok(s.nr_dev == 3 && s.dev[1].is_mig && s.dev[1].mig_ci == 0 && s.dev[1].mig_gi == 0,
	   "compute instance 0 by default");
	is_int(gpu_snapshot_count(&s, VENDOR_NVIDIA), 2, "two GPUs counted");
	gpu_snapshot_release(&s);
	unlink(path);
}

/* The queue hands out whole GPUs: a MIG GPU is one, its processes on it. */
static void
test_queue(void)
{
	struct gs_config cfg;
	struct qgpus *g = NULL;
	struct qgpu_sample q;
	struct err err = ERR_INIT;
	int pipefd[2];
	bool got = false;

	setup(&cfg, "tests/scenarios/mig.scn");
	if (pipe(pipefd) < 0 || qgpus_start(&cfg, 0.2, 5, pipefd[1], &g, &err) < 0) {
		ok(0, "the queue's GPU worker starts: %s", err.msg);
		return;
	}
	qgpu_sample_init(&q);
	for (int i = 0; i < 100 && !got; i++) {
		got = qgpus_latest(g, &q, NULL, 0);
		if (!got)
			usleep(50000);
	}
	ok(got, "the queue's worker samples mig.scn");
	is_int(q.nr_gpu, 1, "the queue sees one GPU, not its MIG devices");
	is_int(q.nr_proc, 2, "and both processes of its MIG devices");
	ok(q.nr_proc == 2 && q.proc[0].gpu == 0 && q.proc[1].gpu == 0, "on that GPU");
	qgpu_sample_release(&q);
	qgpus_stop(g);
	close(pipefd[0]);
	close(pipefd[1]);
}

int
main(void)
{
	test_devices();
	test_select();
	test_numbering();
	test_queue();
	return done_testing();
}
