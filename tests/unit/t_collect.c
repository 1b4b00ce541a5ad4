/*
 * The NVML backend and the collector over several samples, on the fake
 * driver library: what is asked of the driver (NOT_SUPPORTED remembered,
 * the slow PCIe throughput call never made), a GPU that hangs (not
 * responding within the deadline, skipped while its worker is stuck), a
 * GPU lost between two samples, device selection, the process list
 * layouts, Xid errors from NVML's events, the topology of two GPUs
 * (collector_topology), and the fake's live processes (FAKE_NVML_LIVE_DIR). Runs from the
 * repository root; O names the build directory.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#include "backend/collect.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/err.h"
#include "core/gpu.h"

static char fake_lib[512], log_path[512];

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

/* Lines of the fake's call log that start with "<fn> <gpu> ". */
static int
calls(const char *fn, const char *gpu)
{
	char line[512], want[256];
	int n = 0;
	FILE *f = fopen(log_path, "r");

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "%s %s ", fn, gpu);
	while (fgets(line, sizeof(line), f))
		n += !strncmp(line, want, strlen(want));
	fclose(f);
	return n;
}

static struct gpu_proc *
find(struct gpu_snapshot *s, unsigned gpu, uint32_t pid)
{
	for (size_t i = 0; i < s->nr_proc; i++)
		if (s->proc[i].pid == pid && s->dev[s->proc[i].dev].index == gpu)
			return &s->proc[i];
	return NULL;
}

static void
test_caching(void)
{
	struct gs_config cfg;
	struct collector *c;
	struct gpu_snapshot s;
	struct err err = ERR_INIT;

	setup(&cfg, "tests/scenarios/h100x2.scn");
	snprintf(log_path, sizeof(log_path), "/tmp/gpuscope-t_collect-%d.log", (int)getpid());
	unlink(log_path);
	setenv("FAKE_NVML_LOG", log_path, 1);
	setenv("FAKE_NVML_TIME", "0", 1);
	setenv("FAKE_NVML_EPOCH", "1767225600", 1);
	cfg.fixed_time = 1767225600;
	ok(collector_open(&cfg, &c, &err) == 0, "collector opens on the fake library");
	for (int round = 0; round < 3; round++) {
		gpu_snapshot_init(&s);
		collector_sample(c, &s, COLLECT_PROCS, &err);
		if (round == 0) {
			is_int(s.nr_dev, 2, "two GPUs");
			ok(s.simulated,
			   "the fake library is recognised: the snapshot says simulated");
			is_str(s.nvidia.driver_version, "590.48.01", "driver version");
			is_int(s.nvidia.cuda_version, 13010, "CUDA version");
			ok(!dev_has(&s.dev[0], GF_FAN), "fan unknown (NOT_SUPPORTED), not 0");
			is_dbl(s.dev[0].v[GF_POWER_DRAW], 698.42, 1e-9, "power in watts");
			is_dbl(s.dev[1].v[GF_MEM_USED], 48312.0 * 1048576, 0,
			       "memory used, v2 semantics");
			is_str(s.dev[1].mem_source, "v2", "memory from the v2 call");
			ok(find(&s, 0, 1001) && find(&s, 1, 2002) && find(&s, 1, 3003),
			   "processes listed");
			ok(!find(&s, 0, 8008) && !find(&s, 0, 9999),
			   "processes gone from /proc are dropped");
			ok(find(&s, 1, 4004) && !proc_has(find(&s, 1, 4004), PF_SM_UTIL),
			   "a utilisation sample over 100 %% is dropped: SM use unknown, not 150");
			ok(find(&s, 1, 7007) && !proc_has(find(&s, 1, 7007), PF_GPU_MEM),
			   "NVML_VALUE_NOT_AVAILABLE memory is unknown");
			is_int(find(&s, 1, 4004)->type, PROC_COMPUTE | PROC_GRAPHICS,
			       "C+G merged from two lists");
		}
		gpu_snapshot_release(&s);
	}
	collector_close(c);
	is_int(calls("nvmlDeviceGetFanSpeed", "0"), 1,
	       "a NOT_SUPPORTED call is asked once, then remembered");
	is_int(calls("nvmlDeviceGetTemperatureV", "0"), 3,
	       "a supported call is asked every sample");
	is_int(calls("nvmlDeviceGetPcieThroughput", "0") +
	               calls("nvmlDeviceGetPcieThroughput", "1"),
	       0, "the 20 ms PCIe throughput call is never made");
	is_int(calls("nvmlDeviceGetName", "0"), 1, "identity is read once, at the scan");
	unlink(log_path);
	unsetenv("FAKE_NVML_LOG");
}

/* the number of threads this process has (Threads: in /proc/self/status) */
static int
threads(void)
{
	char line[256];
	int n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

static void
test_hang(void)
{
	int threads0;
	struct gs_config cfg;
	struct collector *c;
	struct gpu_snapshot s;
	struct err err = ERR_INIT;
	double t0, t1;

	setup(&cfg, "tests/scenarios/hang.scn");
	cfg.timeout = 0.5;
	threads0 = threads();
	collector_open(&cfg, &c, &err);
	gpu_snapshot_init(&s);
	t0 = clock_mono();
	collector_sample(c, &s, 0, &err);
	t1 = clock_mono();
	ok(t1 - t0 < 1.8, "a GPU hung for 2 s costs the deadline, not 2 s (took %.2f s)", t1 - t0);
	is_int(s.dev[0].state, DEV_OK, "the other GPU is read");
	ok(dev_has(&s.dev[0], GF_POWER_DRAW), "and has its readings");
	is_int(s.dev[1].state, DEV_NOT_RESPONDING, "the hung GPU is not responding");
	is_str(s.dev[1].name, "NVIDIA L40S", "it keeps its identity");
	ok(!dev_has(&s.dev[1], GF_TEMP_GPU), "and has no readings");
	gpu_snapshot_release(&s);

	gpu_snapshot_init(&s);
	t0 = clock_mono();
	collector_sample(c, &s, 0, &err);
	t1 = clock_mono();
	is_int(s.dev[1].state, DEV_NOT_RESPONDING,
	       "while its worker is stuck, the GPU stays not responding");
	ok(t1 - t0 < 0.45, "without waiting for it again (took %.2f s)", t1 - t0);
	gpu_snapshot_release(&s);
	/* the stuck worker still holds the collector: it frees it when it comes back */
	collector_close(c);
	/* it comes back when its 2 s hang ends, frees the collector and exits:
	 * the process is back to the threads it had before the collector */
	for (int i = 0; i < 100 && threads() != threads0; i++)
		usleep(50000);
	{
		int now = threads();

		ok(threads0 > 0 && now == threads0,
		   "the stuck worker exits once its GPU answers (%d threads, %d before)", now,
		   threads0);
	}
}

static void
test_lost_midrun(void)
{
	struct gs_config cfg;
	struct collector *c;
	struct gpu_snapshot s;
	struct err err = ERR_INIT;
	char epoch[64];

	/* faults.scn loses GPU 1 at t = 10: start at t = 9.4, sample, wait, sample */
	setup(&cfg, "tests/scenarios/faults.scn");
	unsetenv("FAKE_NVML_TIME");
	snprintf(epoch, sizeof(epoch), "%.3f", clock_now(NULL) - 9.4);
	setenv("FAKE_NVML_EPOCH", epoch, 1);
	collector_open(&cfg, &c, &err);
	gpu_snapshot_init(&s);
	collector_sample(c, &s, COLLECT_PROCS, &err);
	is_int(s.dev[1].state, DEV_OK, "before t = 10 GPU 1 is fine");
	ok(dev_has(&s.dev[1], GF_TEMP_GPU), "and read");
	gpu_snapshot_release(&s);
	usleep(1200 * 1000);
	gpu_snapshot_init(&s);
	collector_sample(c, &s, COLLECT_PROCS, &err);
	is_int(s.dev[1].state, DEV_LOST, "after t = 10 it is lost");
	is_str(s.dev[1].uuid, "GPU-3c5e7a91-1b2d-4e6f-8a0c-9d1e2f3a4b5c",
	       "with its last known identity");
	ok(!dev_has(&s.dev[1], GF_TEMP_GPU), "and no readings");
	is_int(s.dev[0].state, DEV_OK, "GPU 0 keeps working");
	ok(dev_has(&s.dev[0], GF_TEMP_GPU), "and keeps its readings");
	gpu_snapshot_release(&s);
	gpu_snapshot_init(&s);
	collector_sample(c, &s, COLLECT_PROCS, &err);
	is_int(s.dev[1].state, DEV_LOST, "a lost GPU stays lost");
	gpu_snapshot_release(&s);
	collector_close(c);
	setenv("FAKE_NVML_TIME", "0", 1);
}

static void
test_select(void)
{
	static const struct {
		const char *ids;
		int rc;
		const char *want; /* indexes selected */
	} cases[] = {
		{ "1", 0, "1" },
		{ "0,1", 0, "01" },
		{ "1,0", 0, "01" }, /* scan order, as nvidia-smi */
		{ "GPU-9a8b", 0, "1" },
		{ "gpu-0B1C2D3E-4f50-6172-8394-a5b6c7d8e9f0", 0, "0" },
		{ "00000000:3B:00.0", 0, "1" },
		{ "0000:3b:00.0", 0, "1" },
		{ "3b:00.0", 0, "1" },
		{ "18:00.0, 1", 0, "01" },
		{ "2", E_USAGE, "" },
		{ "GPU-", E_USAGE, "" }, /* a prefix of both */
		{ "GPU-ffff", E_USAGE, "" },
		{ "ab:00.0", E_USAGE, "" },
		{ "zero", E_USAGE, "" },
	};
	struct gs_config cfg;

	setup(&cfg, "tests/scenarios/h100x2.scn");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct collector *c;
		struct gpu_snapshot s;
		struct err err = ERR_INIT;
		char got[8] = "";
		int rc;

		collector_open(&cfg, &c, &err);
		rc = collector_select(c, cases[i].ids, &err);
		is_int(rc, cases[i].rc, "select '%s': return code", cases[i].ids);
		if (rc == 0) {
			gpu_snapshot_init(&s);
			collector_sample(c, &s, 0, &err);
			for (size_t k = 0; k < s.nr_dev && k < 7; k++)
				got[k] = (char)('0' + s.dev[k].index);
			is_str(got, cases[i].want, "select '%s' picks the right GPUs",
			       cases[i].ids);
			gpu_snapshot_release(&s);
		} else {
			ok(strstr(err.msg, "matches") != NULL, "select '%s' says why: %s",
			   cases[i].ids, err.msg);
		}
		collector_close(c);
	}
}

static void
test_layouts(void)
{
	struct gs_config cfg;
	struct collector *c;
	struct gpu_snapshot s;
	struct err err = ERR_INIT;
	char legacy[512];
	const char *o = getenv("O") ? getenv("O") : "build";

	setup(&cfg, "tests/scenarios/cc-layout.scn");
	collector_open(&cfg, &c, &err);
	gpu_snapshot_init(&s);
	collector_sample(c, &s, COLLECT_PROCS, &err);
	is_int(s.nr_proc, 3, "32-byte _v3 entries (R530/R535): three processes, not garbage");
	ok(find(&s, 0, 1001) && find(&s, 0, 2002) && find(&s, 0, 3003), "with the right pids");
	ok(find(&s, 0, 2002) && find(&s, 0, 2002)->v[PF_GPU_MEM] == 3000.0 * 1048576,
	   "and the right memory");
	is_int(s.nr_note, 0, "and no complaint");
	gpu_snapshot_release(&s);
	collector_close(c);

	setup(&cfg, "tests/scenarios/legacy.scn");
	snprintf(legacy, sizeof(legacy), "%s/fakenvml/legacy/libnvidia-ml.so.1", o);
	cfg.nvml_path = legacy;
	collector_open(&cfg, &c, &err);
	gpu_snapshot_init(&s);
	collector_sample(c, &s, COLLECT_PROCS, &err);
	is_int(s.nr_dev, 1, "an old library without _v2/_v3 symbols still works");
	is_str(s.dev[0].mem_source, "v1", "memory from the v1 call, labelled");
	is_dbl(s.dev[0].v[GF_MEM_USED], 16350.0 * 1048576, 0, "v1 used includes reserved");
	ok(!dev_has(&s.dev[0], GF_MEM_RESERVED), "reserved unknown with v1");
	is_str(s.dev[0].pci_bus_id, "00000000:3B:00.0", "legacy bus id widened to NVML's spelling");
	is_int(s.nr_proc, 2, "16-byte v1 process entries");
	ok(find(&s, 0, 1001) && find(&s, 0, 1001)->v[PF_GPU_MEM] == 15000.0 * 1048576,
	   "with their memory");
	ok(find(&s, 0, 1001) && !proc_has(find(&s, 0, 1001), PF_GPU_INSTANCE),
	   "no MIG ids from v1");
	gpu_snapshot_release(&s);
	collector_close(c);

	/* a driver that rejects the v2 memory struct's version: the v1 call answers */
	{
		static const char scn[] =
		        "[system]\ndriver_version = 470.256.02\n[gpu]\n"
		        "name = Tesla T4\nmemory_total = 15360 MiB\n"
		        "memory_reserved = 250 MiB\nmemory_used = 1000 MiB\n"
		        "fail = nvmlDeviceGetMemoryInfo_v2 ARGUMENT_VERSION_MISMATCH\n"
		        "temperature = 41\nfail = nvmlDeviceGetTemperature NOT_SUPPORTED\n";
		char path[64];
		FILE *f;

		snprintf(path, sizeof(path), "/tmp/gpuscope-t_collect-%d.scn", (int)getpid());
		f = fopen(path, "w");
		fputs(scn, f);
		fclose(f);
		setup(&cfg, path);
		collector_open(&cfg, &c, &err);
		for (int round = 0; round < 2; round++) {
			gpu_snapshot_init(&s);
			collector_sample(c, &s, 0, &err);
			is_str(s.dev[0].mem_source, "v1",
			       "ARGUMENT_VERSION_MISMATCH from _v2: the v1 call answers (sample %d)",
			       round + 1);
			is_dbl(s.dev[0].v[GF_MEM_USED], 1250.0 * 1048576, 0,
			       "with used including reserved (sample %d)", round + 1);
			is_dbl(s.dev[0].v[GF_TEMP_GPU], 41, 0,
			       "a driver without the deprecated GetTemperature: GetTemperatureV answers (sample %d)",
			       round + 1);
			gpu_snapshot_release(&s);
		}
		collector_close(c);
		unlink(path);
	}

	setup(&cfg, "tests/scenarios/mig.scn");
	collector_open(&cfg, &c, &err);
	gpu_snapshot_init(&s);
	collector_sample(c, &s, COLLECT_PROCS, &err);
	ok(find(&s, 0, 1001) && find(&s, 0, 1001)->v[PF_GPU_INSTANCE] == 1, "MIG GPU instance id");
	/* on MIG device 1 of GPU 0 (t_mig.c) */
	ok(find(&s, 1, 2002) && find(&s, 1, 2002)->v[PF_COMPUTE_INSTANCE] == 0,
	   "MIG compute instance id");
	ok(find(&s, 0, 1001) && !proc_has(find(&s, 0, 1001), PF_SM_UTIL),
	   "per-process utilisation unknown under MIG, not 0");
	ok(!dev_has(&s.dev[0], GF_UTIL_GPU), "device utilisation unknown under MIG");
	gpu_snapshot_release(&s);
	collector_close(c);
}

static void
test_no_gpu(void)
{
	struct gs_config cfg;
	struct collector *c;
	struct err err = ERR_INIT;
	const char *const *why;

	setup(&cfg, "tests/scenarios/init-mismatch.scn");
	cfg.proc_root = "tests/fixtures/proc";
	collector_open(&cfg, &c, &err);
	collector_scan(c, &err);
	is_int(collector_count(c), 0, "version mismatch: no GPU");
	why = collector_reasons(c);
	ok(why[0] && strstr(why[0], "580.95.05") && strstr(why[0], "reboot"),
	   "the reason names the kernel module version and the fix: %s",
	   why[0] ? why[0] : "(none)");
	ok(collector_no_driver(c), "and no backend could look");
	collector_close(c);

	setup(&cfg, "tests/scenarios/h100x2.scn");
	cfg.nvml_path = "/nonexistent/libnvidia-ml.so.1";
	cfg.sysfs_root = "tests/fixtures/sys-nouveau";
	collector_open(&cfg, &c, &err);
	collector_scan(c, &err);
	why = collector_reasons(c);
	ok(why[0] && strstr(why[0], "nouveau") && strstr(why[0], "0000:01:00.0"),
	   "a card driven by nouveau is named: %s", why[0] ? why[0] : "(none)");
	collector_close(c);
}

/*
 * Thirty real processes on one GPU, and a driver whose size query answers
 * 1 (they started between the two calls): the second call comes back
 * INSUFFICIENT_SIZE and the list is asked again. Real pids, so that /proc
 * has them.
 */
static void
test_process_race(void)
{
	enum { N = 30 };
	pid_t kids[N];
	struct gs_config cfg;
	struct collector *c;
	struct gpu_snapshot s;
	struct err err = ERR_INIT;
	char path[64];
	FILE *f;
	size_t found = 0;

	for (int i = 0; i < N; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			pause();
			_exit(0);
		}
	}
	snprintf(path, sizeof(path), "/tmp/gpuscope-t_collect-race-%d.scn", (int)getpid());
	f = fopen(path, "w");
	fprintf(f,
	        "[system]\ndriver_version = 590.48.01\nprocess_count_hint = 1\n[gpu]\nname = NVIDIA H100\n"
	        "memory_total = 80 GiB\nmemory_used = 40 GiB\n");
	for (int i = 0; i < N; i++)
		fprintf(f, "[process %d]\ngpu = 0\nused_memory = %d MiB\n", (int)kids[i], 100 + i);
	fclose(f);
	setup(&cfg, path);
	cfg.proc_root = "/proc";
	cfg.passwd_file = NULL;
	collector_open(&cfg, &c, &err);
	gpu_snapshot_init(&s);
	collector_sample(c, &s, COLLECT_PROCS, &err);
	for (int i = 0; i < N; i++)
		found += find(&s, 0, (uint32_t)kids[i]) != NULL;
	is_int(found, N, "a process list that outgrew its size query is asked again: all %d listed",
	       N);
	ok(find(&s, 0, (uint32_t)kids[N - 1]) &&
	           find(&s, 0, (uint32_t)kids[N - 1])->v[PF_GPU_MEM] == (100.0 + N - 1) * 1048576,
	   "with their memory");
	ok(find(&s, 0, (uint32_t)kids[0]) && find(&s, 0, (uint32_t)kids[0])->host == PHOST_OK,
	   "and their /proc facts (real processes, real /proc)");
	gpu_snapshot_release(&s);
	collector_close(c);
	for (int i = 0; i < N; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	unlink(path);
}

/* the Xid errors of xid.scn through NVML's events, played 10 times as fast */
static void
test_xid(void)
{
	struct gs_config cfg;
	struct collector *c;
	struct gpu_snapshot s;
	struct err err = ERR_INIT;
	char epoch[64];
	double t0;
	bool seen = false;

	setup(&cfg, "tests/scenarios/xid.scn");
	unsetenv("FAKE_NVML_TIME");
	setenv("FAKE_NVML_SPEED", "10", 1);
	snprintf(epoch, sizeof(epoch), "%.3f", clock_now(NULL));
	setenv("FAKE_NVML_EPOCH", epoch, 1);
	collector_open(&cfg, &c, &err);
	gpu_snapshot_init(&s);
	/* Xid 79, 13, 13 at 0.5, 0.6, 0.7 s; the event thread looks every 0.5 s */
	for (int i = 0; i < 60 && !seen; i++) {
		gpu_snapshot_release(&s);
		gpu_snapshot_init(&s);
		collector_sample(c, &s, 0, &err);
		seen = s.nr_dev == 2 && s.dev[1].nr_xid == 2 && s.dev[1].xid[1].count == 2;
		if (!seen)
			usleep(100 * 1000);
	}
	ok(seen, "GPU 1's Xids are counted within 6 s");
	ok(s.dev[0].xid_watched && s.dev[0].nr_xid == 0, "GPU 0 is watched and has none");
	ok(s.dev[1].xid_watched, "GPU 1 is watched");
	ok(s.dev[1].xid[0].xid == 79 && s.dev[1].xid[0].count == 1, "Xid 79 once, first");
	ok(s.dev[1].xid[1].xid == 13 && s.dev[1].xid[1].count == 2, "then Xid 13 twice");
	gpu_snapshot_release(&s);
	t0 = clock_mono();
	collector_close(c);
	ok(clock_mono() - t0 < 0.25,
	   "close does not wait for the event thread's next look (%.3f s)", clock_mono() - t0);
	unsetenv("FAKE_NVML_SPEED");
	setenv("FAKE_NVML_TIME", "0", 1);
	setenv("FAKE_NVML_EPOCH", "1767225600", 1);

	setup(&cfg, "tests/scenarios/h100x2.scn");
	collector_open(&cfg, &c, &err);
	gpu_snapshot_init(&s);
	collector_sample(c, &s, 0, &err);
	ok(s.nr_dev == 2 && !s.dev[0].xid_watched && !s.dev[1].xid_watched,
	   "GPUs without NVML events are not watched");
	gpu_snapshot_release(&s);
	collector_close(c);
}

/* A scenario of a few lines in a file of its own, for the cases below. */
static const char *
write_scenario(const char *name, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/gpuscope-t_collect-%d-%s.scn", (int)getpid(), name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		diag("cannot write %s", path);
		return NULL;
	}
	return path;
}

static int
topo(struct collector *c, unsigned a, unsigned b)
{
	int level = -1, rc = collector_topology(c, a, b, &level);

	return rc < 0 ? rc : level;
}

/*
 * collector_topology on the queue's server (tests/scenarios/queue.scn): the
 * NVLink pair, the PCIe switch, across CPUs, by position in the sample's list.
 */
static void
test_topology(void)
{
	static const char three[] = "[system]\n"
	                            "[gpu]\nuuid = GPU-a\nmemory_total = 1 GiB\nmemory_used = 0\n"
	                            "topology_group = 0\n"
	                            "[gpu]\nuuid = GPU-b\nmemory_total = 1 GiB\nmemory_used = 0\n"
	                            "topology_group = 1\n"
	                            "[gpu]\nuuid = GPU-c\nmemory_total = 1 GiB\nmemory_used = 0\n"
	                            "lost = 0\n";
	static const char nvswitch[] = "[system]\n"
	                               "[gpu]\nuuid = GPU-a\ntopology_group = 0\n"
	                               "nvlink_peers = switch,switch\n"
	                               "[gpu]\nuuid = GPU-b\ntopology_group = 1\n"
	                               "nvlink_peers = switch\n"
	                               "[gpu]\nuuid = GPU-c\ntopology_group = 2\n";
	struct gs_config cfg;
	struct collector *c;
	struct gpu_snapshot s;
	struct err err = ERR_INIT;
	const char *path;

	setup(&cfg, "tests/scenarios/queue.scn");
	collector_open(&cfg, &c, &err);
	collector_scan(c, &err);
	is_int(collector_count(c), 4, "queue.scn: four GPUs");
	is_int(topo(c, 0, 1), CL_NVLINK, "H100 0 and 1: NVLink");
	is_int(topo(c, 1, 0), CL_NVLINK, "H100 1 and 0: NVLink");
	is_int(topo(c, 2, 3), CL_SWITCH, "L40S 2 and 3: one PCIe switch");
	is_int(topo(c, 3, 2), CL_SWITCH, "L40S 3 and 2: one PCIe switch");
	is_int(topo(c, 0, 2), CL_SYSTEM, "H100 0 and L40S 2: across CPUs");
	is_int(topo(c, 3, 1), CL_SYSTEM, "L40S 3 and H100 1: across CPUs");
	is_int(topo(c, 1, 1), E_USAGE, "a GPU and itself: E_USAGE");
	is_int(topo(c, 0, 4), E_USAGE, "a position past the list: E_USAGE");
	collector_close(c);

	/* positions count the selected GPUs only, as collector_sample() lists them */
	collector_open(&cfg, &c, &err);
	ok(collector_select(c, "1,2,3", &err) == 0, "select 1,2,3");
	is_int(topo(c, 1, 2), CL_SWITCH, "selected positions 1 and 2 are GPUs 2 and 3");
	is_int(topo(c, 0, 1), CL_SYSTEM, "selected positions 0 and 1 are GPUs 1 and 2");
	is_int(topo(c, 0, 3), E_USAGE, "position 3 of three: E_USAGE");
	collector_close(c);

	/* no topology in the scenario: the driver cannot tell */
	setup(&cfg, "tests/scenarios/h100x2.scn");
	collector_open(&cfg, &c, &err);
	is_int(topo(c, 0, 1), E_NOTSUP, "no topology known: E_NOTSUP");
	collector_close(c);

	/* an HGX board: every GPU on NVSwitches reaches every other over NVLink */
	path = write_scenario("nvswitch", nvswitch);
	if (!path)
		return;
	setup(&cfg, path);
	collector_open(&cfg, &c, &err);
	is_int(topo(c, 0, 1), CL_NVLINK, "two GPUs on NVSwitches: NVLink");
	is_int(topo(c, 1, 0), CL_NVLINK, "... either way");
	is_int(topo(c, 0, 2), CL_HOSTBRIDGE, "a GPU without NVLink: its PCIe path");
	collector_close(c);
	unlink(path);

	path = write_scenario("topo", three);
	if (!path)
		return;
	setup(&cfg, path);
	collector_open(&cfg, &c, &err);
	gpu_snapshot_init(&s);
	collector_sample(c, &s, 0, &err);
	is_int(topo(c, 0, 1), CL_HOSTBRIDGE, "two PCIe switches of one CPU: host bridge");
	is_int(topo(c, 0, 2), E_LOST, "a lost GPU: E_LOST");
	gpu_snapshot_release(&s);
	collector_close(c);
	unlink(path);
}

static bool
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	return f && fputs(text, f) >= 0 && fclose(f) == 0;
}

/*
 * Live processes (FAKE_NVML_LIVE_DIR): a process of the test registered on
 * GPUs by UUID and by index is listed with its memory, which the GPU's used
 * memory holds too; a leak of a process that is gone stays used but is not
 * listed; malformed lines and files are passed over.
 */
static void
test_live(void)
{
	struct gs_config cfg;
	struct collector *c;
	struct gpu_snapshot s;
	struct err err = ERR_INIT;
	char dir[256], path[512], text[512];
	const struct gpu_proc *p;
	double used0[4];
	pid_t dead;
	int status;

	snprintf(dir, sizeof(dir), "/tmp/gpuscope-t_collect-%d-live", (int)getpid());
	if (mkdir(dir, 01777) && errno != EEXIST) {
		ok(0, "cannot make %s", dir);
		return;
	}
	setenv("FAKE_NVML_LIVE_DIR", dir, 1);
	setup(&cfg, "tests/scenarios/queue.scn");
	cfg.proc_root = "/proc";

	collector_open(&cfg, &c, &err);
	gpu_snapshot_init(&s);
	collector_sample(c, &s, COLLECT_PROCS, &err);
	is_int(s.nr_dev, 4, "live: four GPUs");
	is_int(s.nr_proc, 0, "live: an empty folder lists no process");
	for (size_t i = 0; i < 4 && i < s.nr_dev; i++)
		used0[i] = dev_get(&s.dev[i], GF_MEM_USED);
	is_dbl(used0[0], 600.0 * 1048576, 1, "live: 600 MiB used on GPU 0 with no process");
	gpu_snapshot_release(&s);

	/* this process on GPU 1 by UUID and GPU 3 by index, and lines to pass over */
	snprintf(path, sizeof(path), "%s/%d", dir, (int)getpid());
	write_file(path, "GPU-5a1e0001-0000-4000-8000-000000000001 1234\n"
	                 "3 100\n3 20\n"
	                 "\n9 500\nGPU-nope 500\n2 lots\n2 7 leak extra\n2 -5\n2 8 spill\n");
	/* a process that is gone: its plain line is nothing, its leak stays used */
	dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, &status, 0);
	snprintf(path, sizeof(path), "%s/%d", dir, (int)dead);
	write_file(path, "0 300 leak\n1 999\n");
	/* names that are not pids, and a folder */
	snprintf(path, sizeof(path), "%s/.%d.tmp", dir, (int)getpid());
	write_file(path, "0 5000\n");
	snprintf(path, sizeof(path), "%s/0123", dir);
	write_file(path, "0 5000\n");
	snprintf(path, sizeof(path), "%s/1", dir);
	mkdir(path, 0755);

	gpu_snapshot_init(&s);
	collector_sample(c, &s, COLLECT_PROCS, &err);
	is_int(s.nr_proc, 2, "live: this process, on two GPUs");
	p = find(&s, 1, (uint32_t)getpid());
	ok(p && proc_has(p, PF_GPU_MEM) && p->v[PF_GPU_MEM] == 1234.0 * 1048576,
	   "live: GPU 1 (by UUID) lists it with 1234 MiB");
	p = find(&s, 3, (uint32_t)getpid());
	ok(p && proc_has(p, PF_GPU_MEM) && p->v[PF_GPU_MEM] == 120.0 * 1048576,
	   "live: GPU 3 (by index, two lines) lists it with 120 MiB");
	ok(!find(&s, 0, (uint32_t)dead) && !find(&s, 1, (uint32_t)dead),
	   "live: a process that is gone is not listed");
	if (s.nr_dev == 4) {
		is_dbl(dev_get(&s.dev[0], GF_MEM_USED) - used0[0], 300.0 * 1048576, 1,
		       "live: GPU 0 holds the 300 MiB leak of the gone process");
		is_dbl(dev_get(&s.dev[1], GF_MEM_USED) - used0[1], 1234.0 * 1048576, 1,
		       "live: GPU 1 used grows by 1234 MiB (not by the gone process's 999)");
		is_dbl(dev_get(&s.dev[2], GF_MEM_USED) - used0[2], 0, 1,
		       "live: malformed lines add nothing to GPU 2");
		is_dbl(dev_get(&s.dev[3], GF_MEM_USED) - used0[3], 120.0 * 1048576, 1,
		       "live: GPU 3 used grows by 120 MiB");
		is_dbl(dev_get(&s.dev[1], GF_MEM_FREE),
		       dev_get(&s.dev[1], GF_MEM_TOTAL) - dev_get(&s.dev[1], GF_MEM_USED) -
		               dev_get(&s.dev[1], GF_MEM_RESERVED),
		       1, "live: free shrinks as used grows");
	}
	gpu_snapshot_release(&s);

	/* deleting the files ends it all: the leak as well */
	snprintf(path, sizeof(path), "%s/%d", dir, (int)getpid());
	unlink(path);
	snprintf(path, sizeof(path), "%s/%d", dir, (int)dead);
	unlink(path);
	gpu_snapshot_init(&s);
	collector_sample(c, &s, COLLECT_PROCS, &err);
	is_int(s.nr_proc, 0, "live: no file, no process");
	if (s.nr_dev == 4)
		is_dbl(dev_get(&s.dev[0], GF_MEM_USED), used0[0], 1,
		       "live: the leak ends with its file");
	gpu_snapshot_release(&s);
	collector_close(c);

	snprintf(text, sizeof(text), "rm -rf '%s'", dir);
	if (system(text) != 0)
		diag("cannot remove %s", dir);
	unsetenv("FAKE_NVML_LIVE_DIR");
}

int
main(void)
{
	test_caching();
	test_process_race();
	test_select();
	test_layouts();
	test_no_gpu();
	test_lost_midrun();
	test_xid();
	/* before test_hang: its stuck worker keeps its scenario loaded for a while */
	test_topology();
	test_live();
	test_hang();
	return done_testing();
}
