/*
 * Tests of workload.*: windows of made-up samples (a GPU and its processes
 * per sample) for each pattern and for the workloads that must stay quiet
 * (healthy training with short dips, a busy GPU at held-down clocks, an
 * inference server idle for a short while, memory full but flat, night
 * training); every id emitted in the catalog.
 */
#include "doctor/doctor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/gpu.h"
#include "core/xalloc.h"
#include "doctor_test.h"
#include "harness.h"

#define GIB         (1024.0 * 1024 * 1024)
#define T0          1700000000.0 /* 2023-11-14 22:13:20 UTC */
#define NIGHT       1700092800.0 /* 2023-11-16 00:00:00 UTC */
#define MAX_SAMPLES 4000

static struct gpu_snapshot win[MAX_SAMPLES];
static size_t nr_win;
static struct dr_report rep = DR_REPORT_INIT;
static bool all_explained = true;

static void
reset(void)
{
	for (size_t i = 0; i < nr_win; i++)
		gpu_snapshot_release(&win[i]);
	nr_win = 0;
	dr_report_release(&rep);
}

static struct gpu_snapshot *
sample(double t)
{
	struct gpu_snapshot *s;

	if (nr_win == MAX_SAMPLES)
		abort();
	s = &win[nr_win++];
	gpu_snapshot_init(s);
	s->time = t;
	return s;
}

static void
opt(struct gpu_device *d, enum gpu_field f, double v)
{
	if (!isnan(v))
		dev_set(d, f, v);
}

/* A GPU: utilisation %, power W (limit 700 W), SM clock MHz (max 1980), memory used GiB of 80. */
static struct gpu_device *
gpu(struct gpu_snapshot *s, double util, double power, double clk, double used)
{
	struct gpu_device *d = gpu_snapshot_add_dev(s);

	d->index = (unsigned)(s->nr_dev - 1);
	d->vendor = VENDOR_NVIDIA;
	snprintf(d->name, sizeof(d->name), "NVIDIA H100 80GB HBM3");
	snprintf(d->uuid, sizeof(d->uuid), "GPU-0000-%u", d->index);
	opt(d, GF_UTIL_GPU, util);
	opt(d, GF_POWER_DRAW, power);
	dev_set(d, GF_POWER_LIMIT, 700);
	opt(d, GF_CLOCK_SM, clk);
	dev_set(d, GF_CLOCK_MAX_SM, 1980);
	opt(d, GF_MEM_USED, used * GIB);
	dev_set(d, GF_MEM_TOTAL, 80 * GIB);
	return d;
}

/* A process on GPU dev: memory GiB, SM %, CPU % (NAN: not read), started at start. */
static struct gpu_proc *
proc(struct gpu_snapshot *s, unsigned dev, unsigned pid, const char *name, const char *cmdline,
     double mem, double sm, double cpu, double start)
{
	struct gpu_proc *p = gpu_snapshot_add_proc(s);

	p->dev = dev;
	p->pid = pid;
	p->type = PROC_COMPUTE;
	p->host = PHOST_OK;
	p->user = xstrdup("alice");
	p->name = xstrdup(name);
	p->cmdline = xstrdup(cmdline);
	p->start_ticks = (uint64_t)start;
	if (!isnan(mem))
		proc_set(p, PF_GPU_MEM, mem * GIB);
	if (!isnan(sm))
		proc_set(p, PF_SM_UTIL, sm);
	if (!isnan(cpu))
		proc_set(p, PF_CPU_PERCENT, cpu);
	proc_set(p, PF_START_TIME, start);
	return p;
}

static const char *
env(const char *name)
{
	return getenv(name);
}

static void
run_window(bool with_window)
{
	struct dr_window w = { win, nr_win, nr_win > 1 ? win[1].time - win[0].time : 1, "live" };
	struct dr_ctx ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx.snap = nr_win ? &win[nr_win - 1] : NULL;
	ctx.getenv = env;
	ctx.window = with_window ? &w : NULL;
	dr_report_release(&rep);
	dr_check_workload(&ctx, &rep);
	for (size_t i = 0; i < rep.nr; i++)
		if (!dr_explain_find(rep.f[i].id)) {
			all_explained = false;
			diag("no explanation for %s", rep.f[i].id);
		}
}

static void dump(void);

/* T_DUMP=1 in the environment prints every report */
static void
run(void)
{
	run_window(true);
	if (getenv("T_DUMP"))
		dump();
}

static void
dump(void)
{
	for (size_t i = 0; i < rep.nr; i++) {
		diag("%s [%s] %s", rep.f[i].id, dr_severity_key(rep.f[i].severity), rep.f[i].title);
		for (size_t k = 0; k < rep.f[i].nr_evidence; k++)
			diag("    %s", rep.f[i].evidence[k]);
		if (rep.f[i].meaning)
			diag("    meaning: %s", rep.f[i].meaning);
	}
}

/* Only ok findings (or none) from the workload patterns. */
static bool
quiet(void)
{
	for (size_t i = 0; i < rep.nr; i++)
		if (rep.f[i].severity != DR_OK)
			return false;
	return true;
}

/* --- windows ------------------------------------------------------------------------ */

/*
 * Training fed by a loader: busy for duty of each period (samples 1 s
 * apart), the process's CPU cpu_wait while the GPU waits, cpu_busy while
 * it computes.
 */
static void
training(size_t n, unsigned period, unsigned busy, double cpu_wait, double cpu_busy)
{
	for (size_t k = 0; k < n; k++) {
		struct gpu_snapshot *s = sample(T0 + (double)k);
		bool on = k % period < busy;

		gpu(s, on ? 99 : 2, on ? 600 : 90, on ? 1980 : 1980, 40);
		proc(s, 0, 1234, "python", "python train.py --epochs 10", 38, on ? 98 : 0,
		     on ? cpu_busy : cpu_wait, T0 - 3600);
	}
}

static void
test_no_window(void)
{
	reset();
	training(1, 10, 4, 100, 30);
	run_window(false);
	is_int(rep.nr, 0, "one sample (no window): nothing said");

	reset();
	training(3, 10, 4, 100, 30);
	run();
	ok(find_id(&rep, "workload.window_short"), "three samples: window_short");
	ok(says(find_id(&rep, "workload.window_short"), "--watch 60"), "... which says --watch 60");
	ok(!find_id(&rep, "workload.starved"), "... and no pattern");
}

static void
test_starved(void)
{
	const struct dr_finding *f;

	reset();
	training(60, 10, 4, 100, 30);
	run();
	f = find_id(&rep, "workload.starved");
	if (!ok(f, "starved: square 0/100 %%, period 10 s, 40 %% busy, one core busy in the waits"))
		dump();
	ok(f && f->severity == DR_WARNING, "... a warning");
	ok(says(f, "period about 10s"), "... period estimated from the transitions");
	ok(says(f, "duty cycle 40 %"), "... duty cycle shown");
	ok(evidence_has(f, "100 % of one core"), "... CPU in the waits shown");
	ok(says(f, "single-threaded input pipeline"), "... CPU-bound: single-threaded pipeline");
	ok(says(f, "num_workers") && says(f, "pin_memory=True") && says(f, "prefetch_factor"),
	   "... suggests workers, pinned memory, prefetching");
	ok(evidence_has(f, "pid 1234"), "... names the process");

	reset();
	training(60, 10, 4, NAN, NAN);
	run();
	f = find_id(&rep, "workload.starved");
	ok(f, "starved without CPU figures");
	ok(!says(f, "CPU-bound") && !says(f, "single-threaded input pipeline"),
	   "... does not claim CPU-bound");
	ok(says(f, "input stalls") && says(f, "slow storage") && says(f, "synchronisation"),
	   "... input stalls, causes ranked");

	reset();
	training(60, 10, 4, 5, 20);
	run();
	f = find_id(&rep, "workload.starved");
	ok(f && says(f, "storage") && !says(f, "single-threaded input pipeline"),
	   "starved with the CPU idle in the waits: storage or synchronisation");

	reset();
	training(60, 10, 4, 45, 45);
	run();
	f = find_id(&rep, "workload.starved");
	ok(f && says(f, "input stalls") && !says(f, "single-threaded input pipeline") &&
	           !says(f, "hardly uses"),
	   "starved, 45 %% CPU in both phases (a lifetime average): causes ranked, no claim");

	reset();
	training(60, 10, 4, 400, 100);
	run();
	f = find_id(&rep, "workload.starved");
	ok(f && says(f, "4.0 CPU cores"), "starved with four cores busy: several cores");

	/* sampling every 3 s of a 20 s cycle */
	reset();
	for (size_t k = 0; k < 40; k++) {
		double t = T0 + 3.0 * (double)k;
		struct gpu_snapshot *s = sample(t);
		bool on = fmod(t - T0, 20) < 8;

		gpu(s, on ? 100 : 0, on ? 600 : 90, 1980, 40);
	}
	run();
	f = find_id(&rep, "workload.starved");
	ok(f && says(f, "period about 2"),
	   "starved sampled every 3 s of a 20 s cycle: period ~20 s");
}

static void
test_starved_quiet(void)
{
	reset();
	training(60, 10, 9, 100, 30); /* busy 90 %: dips */
	run();
	ok(!find_id(&rep, "workload.starved"), "healthy training with short dips: not starved");
	ok(find_id(&rep, "workload.ok"), "... workload.ok");

	reset();
	training(60, 20, 15, 100, 30); /* busy 75 % */
	run();
	ok(!find_id(&rep, "workload.starved"), "busy 75 %% of the time: not starved");

	reset();
	for (size_t k = 0; k < 60; k++) {
		struct gpu_snapshot *s = sample(T0 + (double)k);

		gpu(s, 45 + (double)(k % 3) * 5, 300, 1980, 40);
	}
	run();
	ok(!find_id(&rep, "workload.starved"),
	   "steady 50 %% utilisation: not starved (not bimodal)");

	reset();
	for (size_t k = 0; k < 60; k++) {
		struct gpu_snapshot *s = sample(T0 + (double)k);

		gpu(s, k % 10 < 4 ? 60 : 30, 300, 1980, 40);
	}
	run();
	ok(!find_id(&rep, "workload.starved"), "swinging between 30 and 60 %%: not near 0 and 100");

	reset();
	for (size_t k = 0; k < 60; k++) {
		struct gpu_snapshot *s = sample(T0 + (double)k);

		gpu(s, k < 30 ? 0 : 100, 300, 1980, 40);
	}
	run();
	ok(!find_id(&rep, "workload.starved"), "idle, then busy (one switch): not starved");

	reset();
	training(8, 2, 1, 100, 30);
	run();
	ok(!find_id(&rep, "workload.starved"), "eight samples: too few for the pattern");
}

/* util %, power W, clock MHz, the process's SM % (NAN: unknown) */
static void
busy(size_t n, double util, double power, double clk, double sm)
{
	for (size_t k = 0; k < n; k++) {
		struct gpu_snapshot *s = sample(T0 + (double)k);

		gpu(s, util, power, clk, 20);
		proc(s, 0, 777, "python", "python infer.py --batch-size 1", 18, sm, 100, T0 - 60);
	}
}

static void
test_busy_low_power(void)
{
	const struct dr_finding *f;

	reset();
	busy(30, 100, 80, 700, 12);
	run();
	f = find_id(&rep, "workload.busy_low_power");
	if (!ok(f, "100 %% busy at 80 W of 700 W, 700 of 1980 MHz, SM 12 %%: busy_low_power"))
		dump();
	ok(f && f->severity == DR_INFO, "... info");
	ok(evidence_has(f, "80 W of a 700 W limit (11 %)"), "... power evidence");
	ok(evidence_has(f, "700 MHz of 1980 MHz"), "... clock evidence");
	ok(says(f, "Nsight Systems") && says(f, "batches"), "... profiling and batching");

	reset();
	busy(30, 100, 80, 1980, 12);
	run();
	ok(find_id(&rep, "workload.busy_low_power"), "low power, clocks at max, SM 12 %%: found");

	reset();
	busy(30, 100, 80, 700, NAN);
	run();
	ok(!find_id(&rep, "workload.busy_low_power"),
	   "low power and clocks, SM unknown: a busy GPU at held clocks looks the same: quiet");

	reset();
	busy(30, 100, 650, 1980, 95);
	run();
	ok(!find_id(&rep, "workload.busy_low_power"), "100 %% busy at full power: quiet");

	reset();
	busy(30, 100, 200, 700, 95);
	run();
	ok(!find_id(&rep, "workload.busy_low_power"),
	   "idle-clocked but truly busy (SM 95 %%): not misflagged");

	reset();
	busy(30, 100, 200, 1980, NAN);
	run();
	ok(!find_id(&rep, "workload.busy_low_power"),
	   "low power, clocks at max, SM unknown: not enough to tell, quiet");

	reset();
	busy(30, 40, 80, 700, 10);
	run();
	ok(!find_id(&rep, "workload.busy_low_power"), "40 %% utilisation: not 'busy', quiet");
}

/*
 * n samples step seconds apart; a process holding mem GiB, SM 0 % from
 * sample busy_until on (busy before).
 */
static void
holder(size_t n, double step, const char *name, const char *cmd, double mem, size_t busy_until)
{
	for (size_t k = 0; k < n; k++) {
		struct gpu_snapshot *s = sample(T0 + step * (double)k);
		bool on = k < busy_until;

		gpu(s, on ? 90 : 0, on ? 500 : 70, on ? 1980 : 345, mem + 0.5);
		proc(s, 0, 4242, name, cmd, mem, on ? 90 : 0, 0.3, T0 - 7200);
	}
}

static void
test_idle_holder(void)
{
	const struct dr_finding *f;

	setenv("TZ", "UTC", 1);
	tzset();
	reset();
	holder(41, 30, "python", "/opt/conda/bin/python -m ipykernel_launcher -f kernel-1.json", 20,
	       0);
	run();
	f = find_id(&rep, "workload.idle_holder");
	if (!ok(f, "notebook kernel with 20 GiB, SM 0 %% for 20 minutes: idle_holder"))
		dump();
	ok(f && f->severity == DR_WARNING, "... a warning");
	ok(says(f, "Notebook kernel"), "... says notebook kernel");
	ok(evidence_has(f, "20.0 GiB held (25 % of 80.0 GiB)"), "... how much");
	ok(evidence_has(f, "pid 4242") && evidence_has(f, "user alice"), "... who");
	ok(evidence_has(f, "ipykernel_launcher"), "... the command");
	ok(evidence_has(f, "started 2023-11-14 20:13"), "... since when");
	ok(says(f, "torch.cuda.empty_cache()") && says(f, "idle-culler"),
	   "... free it, shut down, cull idle kernels");

	reset();
	holder(41, 30, "python", "python train.py", 20, 0);
	run();
	f = find_id(&rep, "workload.idle_holder");
	ok(f && says(f, "Process pid 4242") && !says(f, "idle-culler"),
	   "plain process: idle_holder without Jupyter advice");

	reset();
	holder(41, 30, "python", "python train.py", 20, 20);
	run();
	f = find_id(&rep, "workload.idle_holder");
	ok(f && evidence_has(f, "over 10:00"), "busy, then idle for 10:00 up to now: idle_holder");

	reset();
	holder(41, 30, "python", "python train.py", 20, 25);
	run();
	ok(!find_id(&rep, "workload.idle_holder"), "idle for the last 8 minutes only: quiet");

	reset();
	holder(21, 15, "python", "python train.py", 20, 0);
	run();
	ok(!find_id(&rep, "workload.idle_holder"), "a 5-minute window: quiet");

	reset();
	holder(41, 30, "python", "python train.py", 0.5, 0);
	run();
	ok(!find_id(&rep, "workload.idle_holder"), "0.5 GiB of 80 GiB held: quiet");

	/* pid reused: a new process with the same pid after 10 minutes */
	reset();
	for (size_t k = 0; k < 41; k++) {
		struct gpu_snapshot *s = sample(T0 + 30.0 * (double)k);

		gpu(s, 0, 70, 345, 20);
		proc(s, 0, 4242, "python", "python train.py", 20, 0, 0.3,
		     k < 22 ? T0 - 7200 : T0 + 650);
	}
	run();
	ok(!find_id(&rep, "workload.idle_holder"),
	   "same pid, another process after 11 minutes: neither idle 10 minutes, quiet");

	/* no per-process SM figures: an idle GPU stands for them */
	reset();
	for (size_t k = 0; k < 41; k++) {
		struct gpu_snapshot *s = sample(T0 + 30.0 * (double)k);

		gpu(s, 0, 70, 345, 20);
		proc(s, 0, 4242, "python", "python train.py", 20, NAN, 0.3, T0 - 7200);
	}
	run();
	ok(find_id(&rep, "workload.idle_holder"), "no per-process SM use, GPU idle: idle_holder");
}

static void
test_inference_server(void)
{
	const struct dr_finding *f;

	reset();
	holder(21, 15, "tritonserver", "tritonserver --model-repository=/models", 30, 0);
	run();
	ok(!find_id(&rep, "workload.idle_holder"), "tritonserver idle for 5 minutes: quiet");
	ok(quiet(), "... nothing above ok");

	reset();
	holder(21, 15, "python3", "python3 -m vllm.entrypoints.openai.api_server --model x", 60, 0);
	run();
	ok(!find_id(&rep, "workload.idle_holder"), "vllm idle for 5 minutes: quiet");

	reset();
	holder(121, 30, "ollama", "/usr/local/bin/ollama serve", 12, 0);
	run();
	f = find_id(&rep, "workload.idle_holder");
	ok(f && f->severity == DR_INFO, "ollama idle for an hour: info only");
	ok(says(f, "Inference server"), "... says inference server");

	reset();
	holder(121, 30, "text-generation-launcher", "text-generation-launcher --model-id m", 40, 0);
	run();
	f = find_id(&rep, "workload.idle_holder");
	ok(f && f->severity == DR_INFO, "text-generation-launcher idle for an hour: info only");
}

/* memory used GiB over n samples: from a to b (linear), then flat from flat_at on */
static void
memory(size_t n, double a, double b, size_t flat_at, double noise)
{
	for (size_t k = 0; k < n; k++) {
		struct gpu_snapshot *s = sample(T0 + 10.0 * (double)k);
		size_t kk = k < flat_at ? k : flat_at;
		double used = a + (b - a) * (double)kk / (double)(n - 1);

		used += (k % 5 == 1) ? noise : 0;
		gpu(s, 95, 600, 1980, used);
		proc(s, 0, 9000, "python", "python serve_leaky.py", used - 1, 95, 100, T0 - 600);
		proc(s, 0, 9001, "python", "python other.py", 1, 5, 100, T0 - 600);
	}
}

static void
test_memory_growth(void)
{
	const struct dr_finding *f;

	reset();
	memory(60, 72, 78, 60, 0);
	run();
	f = find_id(&rep, "workload.memory_growth");
	if (!ok(f, "memory 90 -> 97.5 %% full, steady growth: memory_growth"))
		dump();
	ok(f && f->severity == DR_WARNING, "... a warning");
	ok(evidence_has(f, "78.0 GiB of 80.0 GiB"), "... how full");
	ok(evidence_has(f, "growing: pid 9000"), "... names the growing process");
	ok(evidence_has(f, "full in about"), "... time to full");
	ok(says(f, "out of memory"), "... out-of-memory risk");

	reset();
	memory(60, 72, 78, 60, -0.3);
	run();
	ok(find_id(&rep, "workload.memory_growth"), "steady growth with small dips: found");

	/* a slow leak sampled often: 14 MiB a second with 3 MiB of jitter */
	reset();
	for (size_t k = 0; k < 60; k++) {
		struct gpu_snapshot *s = sample(T0 + (double)k);
		double jitter = (k % 4 == 3) ? -3.0 / 1024 : 0;

		gpu(s, 97, 620, 1980, 74 + 14.0 * (double)k / 1024 + jitter);
	}
	run();
	ok(find_id(&rep, "workload.memory_growth"), "a slow leak sampled every second: found");

	reset();
	memory(60, 76, 76, 60, 0);
	run();
	ok(!find_id(&rep, "workload.memory_growth"), "95 %% full but flat: quiet");

	reset();
	memory(60, 30, 40, 60, 0);
	run();
	ok(!find_id(&rep, "workload.memory_growth"), "growing at 50 %% full: quiet");

	reset();
	memory(60, 40, 77, 20, 0);
	run();
	ok(!find_id(&rep, "workload.memory_growth"),
	   "grew to 96 %% at start-up, flat since: quiet (not growing now)");

	reset();
	for (size_t k = 0; k < 60; k++) {
		struct gpu_snapshot *s = sample(T0 + 10.0 * (double)k);

		gpu(s, 95, 600, 1980, k % 2 ? 78 : 73 + (double)k / 20);
	}
	run();
	ok(!find_id(&rep, "workload.memory_growth"), "see-saw memory, up and down: quiet");
}

static void
one(const char *name, const char *cmd, double start, size_t n, double step, double sm)
{
	reset();
	for (size_t k = 0; k < n; k++) {
		struct gpu_snapshot *s = sample(start + step * (double)k);

		gpu(s, sm, 600, 1980, 10);
		proc(s, 0, 31337, name, cmd, 2, sm, 100, start - 60);
	}
	run();
}

static void
test_suspect(void)
{
	const struct dr_finding *f;

	setenv("TZ", "UTC", 1);
	tzset();
	one("xmrig", "./xmrig -o pool.example:3333 -u wallet", T0, 10, 1, 100);
	f = find_id(&rep, "workload.suspect_process");
	if (!ok(f, "xmrig: suspect_process"))
		dump();
	ok(f && f->severity == DR_WARNING, "... a warning");
	ok(says(f, "Possible") || says(f, "possible"), "... says possible");
	ok(evidence_has(f, "known cryptocurrency miner"), "... evidence: the name");
	ok(says(f, "/proc/31337/exe"), "... how to check");

	one("sshd", "sshd -o stratum+tcp://pool.example:4444", T0, 10, 1, 100);
	ok(evidence_has(find_id(&rep, "workload.suspect_process"), "mining pool"),
	   "stratum URL in the command line: suspect_process");

	one("kdevtmpfsi", "/tmp/.X11-lock/kdevtmpfsi", T0, 10, 1, 100);
	ok(evidence_has(find_id(&rep, "workload.suspect_process"), "temporary directory"),
	   "executable in /tmp: suspect_process");

	one("/dev/shm/.x/run (deleted)", "/dev/shm/.x/run", T0, 10, 1, 100);
	f = find_id(&rep, "workload.suspect_process");
	ok(evidence_has(f, "deleted") && evidence_has(f, "temporary directory"),
	   "deleted executable in /dev/shm: both signs");

	one("[kworker/0:2]", "", T0, 10, 1, 100);
	ok(evidence_has(find_id(&rep, "workload.suspect_process"), "kernel thread"),
	   "a kernel thread's name on a GPU: suspect_process");

	one("python", "", NIGHT + 3600, 10, 60, 100);
	f = find_id(&rep, "workload.suspect_process");
	ok(evidence_has(f, "00:00 and 05:00") && evidence_has(f, "empty"),
	   "empty command line and heavy use at 01:00: suspect_process");

	one("python", "python train.py --config night.yaml", NIGHT + 3600, 30, 60, 100);
	ok(!find_id(&rep, "workload.suspect_process"),
	   "training all night (01:00, 30 minutes, outside a container): not suspect");

	one("python", "python train.py", T0, 10, 1, 100);
	ok(!find_id(&rep, "workload.suspect_process"), "python train.py: not suspect");

	one("miner-dashboard", "node /srv/miner-dashboard/index.js", T0, 10, 1, 5);
	ok(!find_id(&rep, "workload.suspect_process"),
	   "a name that merely contains 'miner': not suspect");

	/* one process on two GPUs: reported once */
	reset();
	for (size_t k = 0; k < 10; k++) {
		struct gpu_snapshot *s = sample(T0 + (double)k);

		gpu(s, 100, 600, 1980, 10);
		gpu(s, 100, 600, 1980, 10);
		proc(s, 0, 666, "t-rex", "t-rex -a kawpow -o stratum+ssl://x:1", 2, 100, 100, T0);
		proc(s, 1, 666, "t-rex", "t-rex -a kawpow -o stratum+ssl://x:1", 2, 100, 100, T0);
	}
	run();
	is_int(count_id(&rep, "workload.suspect_process"), 1, "a miner on two GPUs: reported once");

	/* names are found from one sample too */
	one("nbminer", "nbminer -a ethash", T0, 2, 1, 100);
	ok(find_id(&rep, "workload.suspect_process") && find_id(&rep, "workload.window_short"),
	   "two samples: a miner's name is still reported");
}

static void
test_desktop(void)
{
	const struct dr_finding *f;

	reset();
	for (size_t k = 0; k < 10; k++) {
		struct gpu_snapshot *s = sample(T0 + (double)k);

		gpu(s, 3, 30, 300, 1);
		proc(s, 0, 1500, "/usr/lib/xorg/Xorg", "/usr/lib/xorg/Xorg vt2 -displayfd 3", 0.2,
		     1, 2, T0)
		        ->type = PROC_GRAPHICS;
		proc(s, 0, 1800, "gnome-shell", "/usr/bin/gnome-shell", 0.3, 2, 5, T0)->type =
		        PROC_GRAPHICS;
	}
	run();
	f = find_id(&rep, "workload.desktop");
	if (!ok(f, "Xorg and gnome-shell alone on a GPU: desktop"))
		dump();
	ok(f && f->severity == DR_INFO, "... info");
	ok(evidence_has(f, "gnome-shell 1800"), "... names them");
	ok(!find_id(&rep, "workload.suspect_process") && !find_id(&rep, "workload.idle_holder"),
	   "... nothing else");

	reset();
	for (size_t k = 0; k < 10; k++) {
		struct gpu_snapshot *s = sample(T0 + (double)k);

		gpu(s, 90, 500, 1980, 30);
		proc(s, 0, 1500, "Xorg", "/usr/lib/xorg/Xorg vt2", 0.2, 1, 2, T0);
		proc(s, 0, 2000, "python", "python train.py", 28, 88, 100, T0);
	}
	run();
	ok(!find_id(&rep, "workload.desktop"), "Xorg beside a training job: no desktop finding");
}

static void
test_large(void)
{
	clock_t c0;
	double secs;

	reset();
	for (size_t k = 0; k < 3600; k++) {
		struct gpu_snapshot *s = sample(T0 + (double)k);

		for (unsigned d = 0; d < 8; d++)
			gpu(s, 95, 600, 1980, 40);
		for (unsigned i = 0; i < 64; i++)
			proc(s, i % 8, 10000 + i, "python", "python train.py", 4, 95, 100, T0 - 60);
	}
	c0 = clock();
	run();
	secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
	ok(find_id(&rep, "workload.ok") && quiet(), "an hour of 8 GPUs and 64 processes: ok");
	ok(secs < 5.0, "... in linear time (%.3f s)", secs);
}

int
main(void)
{
	test_no_window();
	test_starved();
	test_starved_quiet();
	test_busy_low_power();
	test_idle_holder();
	test_inference_server();
	test_memory_growth();
	test_suspect();
	test_desktop();
	test_large();
	reset();
	ok(all_explained, "every id emitted has an explanation");
	return done_testing();
}
