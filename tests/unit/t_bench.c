/*
 * bench/matmul.h: the three CPU kernels agree on every size (tile edges
 * included: 1, 7, 65, 130 are no multiple of the 6 x 16 tile or the 256
 * panel depth) on every instruction set this CPU has; the checker catches
 * one wrong element, a NaN, a wrong corner in its samples; the timing plan
 * is kept; and the peak is derived from cpuinfo texts of x86 (AVX2 and FMA,
 * AVX-512, SSE only), aarch64 and a fixture tree.
 */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/matmul.h"
#include "harness.h"

static const size_t sizes[] = { 1, 2, 5, 6, 7, 16, 17, 65, 130, 263 };

/* Every kernel against naive and the double-precision samples at each size. */
static void
kernels_agree(const char *isa, const struct bench_blas *blas)
{
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s];
		float *a = bench_matrix_alloc(n), *b = bench_matrix_alloc(n);
		float *ref = bench_matrix_alloc(n), *c = bench_matrix_alloc(n);
		struct bench_norms nm;
		struct bench_check chk, smp;

		bench_matrix_fill(a, n, 11);
		bench_matrix_fill(b, n, 12);
		bench_norms_init(&nm, n, a, b);
		bench_naive(n, a, b, ref, NULL);
		bench_check_sampled(&nm, a, b, ref, 64, &smp);
		ok(smp.ok, "%s: naive at %zu agrees with double-precision sums (ratio %.3g)", isa,
		   n, smp.max_ratio);
		for (unsigned t = 1; t <= 3; t += 2) {
			memset(c, 0xff,
			       n * n * sizeof(float)); /* NaNs: every element must be written */
			bench_blocked(n, a, b, c, t, NULL);
			bench_compare(&nm, c, ref, &chk);
			ok(chk.ok && chk.checked == n * n,
			   "%s: blocked on %u thread%s at %zu = naive (%zu wrong, ratio %.3g)", isa,
			   t, t == 1 ? "" : "s", n, chk.bad, chk.max_ratio);
		}
		if (blas && blas->loaded) {
			memset(c, 0xff, n * n * sizeof(float));
			bench_blas_run(blas, n, a, b, c);
			bench_compare(&nm, c, ref, &chk);
			ok(chk.ok, "%s: BLAS at %zu = naive (%zu wrong, ratio %.3g)", isa, n,
			   chk.bad, chk.max_ratio);
		}
		bench_norms_release(&nm);
		bench_matrix_free(a);
		bench_matrix_free(b);
		bench_matrix_free(ref);
		bench_matrix_free(c);
	}
}

static void
test_kernels(void)
{
	static const char *const isas[] = { "sse2", "neon", "generic", "avx2+fma", "avx512" };
	const char *best = bench_blocked_isa();
	struct bench_blas blas;
	unsigned tried = 0;

	if (bench_blas_open(&blas, NULL, 2) < 0) {
		skip_missing("no system BLAS to check (Debian: libopenblas0)");
		diag("%s", blas.reason);
	} else {
		diag("BLAS: %s, %s", blas.name, blas.path);
		ok(strstr(blas.path, "/") != NULL, "the BLAS's file is named");
	}
	for (size_t i = 0; i < sizeof(isas) / sizeof(isas[0]); i++) {
		if (bench_blocked_set_isa(isas[i]) < 0)
			continue;
		tried++;
		is_str(bench_blocked_isa(), isas[i], "the blocked kernel runs on %s", isas[i]);
		kernels_agree(isas[i], tried == 1 ? &blas : NULL);
	}
	ok(tried >= 1, "at least the baseline instruction set was tried (%u)", tried);
	ok(bench_blocked_set_isa("mmx") < 0, "an instruction set that is not one is refused");
	bench_blocked_set_isa(best);
	is_str(bench_blocked_isa(), best, "back on the best one, %s", best);
	bench_blas_close(&blas);

	struct bench_blas none;
	ok(bench_blas_open(&none, "libno-such-blas.so.9", 0) < 0 && !none.loaded,
	   "a BLAS that is not there is not loaded");
	ok(strstr(none.reason, "libno-such-blas.so.9") != NULL, "and the reason names it: %s",
	   none.reason);
	ok(bench_blas_open(&none, NULL, 0) == 0 || strstr(none.reason, "apt install libopenblas0"),
	   "no BLAS at all: the reason says how to install one");
	bench_blas_close(&none);
}

static void
test_checker(void)
{
	size_t n = 65;
	float *a = bench_matrix_alloc(n), *b = bench_matrix_alloc(n), *c = bench_matrix_alloc(n);
	float *ref = bench_matrix_alloc(n);
	struct bench_norms nm;
	struct bench_check chk;

	bench_matrix_fill(a, n, 3);
	bench_matrix_fill(b, n, 4);
	bench_norms_init(&nm, n, a, b);
	bench_naive(n, a, b, ref, NULL);
	bench_blocked(n, a, b, c, 2, NULL);
	bench_compare(&nm, c, ref, &chk);
	ok(chk.ok && chk.bad == 0, "blocked = naive before the corruption");
	ok(chk.max_ratio < 0.5, "with room to spare under the tolerance (ratio %.3g)",
	   chk.max_ratio);

	/* one element off by a hundredth: far above 2 n eps |a_i| |b_j| (about 4e-4 here) */
	c[40 * n + 17] += 0.01f;
	bench_compare(&nm, c, ref, &chk);
	ok(!chk.ok, "one wrong element fails the full compare");
	is_int(chk.bad, 1, "exactly one element is wrong");
	ok(chk.worst_i == 40 && chk.worst_j == 17, "and it is named: C[%zu][%zu]", chk.worst_i,
	   chk.worst_j);
	ok(chk.max_error > 0.009 && chk.max_error < 0.011, "its error is measured (%.4g)",
	   chk.max_error);
	c[40 * n + 17] -= 0.01f;

	c[7] = NAN;
	bench_compare(&nm, c, ref, &chk);
	ok(!chk.ok && chk.bad == 1, "a NaN fails");
	c[7] = ref[7];

	/* the corners are always among the samples */
	c[(n - 1) * n + n - 1] *= 2.0f;
	c[(n - 1) * n + n - 1] += 1.0f;
	bench_check_sampled(&nm, a, b, c, 16, &chk);
	ok(!chk.ok && chk.worst_i == n - 1 && chk.worst_j == n - 1,
	   "a wrong corner fails the sampled check");
	bench_check_sampled(&nm, a, b, ref, 16, &chk);
	ok(chk.ok && chk.checked == 16, "the reference passes it (%zu samples)", chk.checked);

	bench_norms_release(&nm);
	bench_matrix_free(a);
	bench_matrix_free(b);
	bench_matrix_free(c);
	bench_matrix_free(ref);
}

static int stop_now;
static int
stop_fn(void)
{
	return stop_now;
}

static void
test_timing(void)
{
	size_t n = 16;
	float *a = bench_matrix_alloc(n), *b = bench_matrix_alloc(n), *c = bench_matrix_alloc(n);
	struct bench_job job = { .kernel = BENCH_NAIVE, .n = n, .a = a, .b = b, .c = c };
	struct bench_plan plan = { .min_seconds = 0.02,
		                   .min_runs = 3,
		                   .max_seconds = 5,
		                   .long_run = 1,
		                   .max_runs = 100000 };
	struct bench_timing t;

	bench_matrix_fill(a, n, 1);
	bench_matrix_fill(b, n, 2);
	bench_time(&job, &plan, &t);
	ok(t.runs >= 3 && !t.stopped && !t.warmup_counted, "runs to the time asked (%u runs)",
	   t.runs);
	ok(t.best > 0 && t.best <= t.median, "best %.3g s <= median %.3g s", t.best, t.median);
	plan.max_runs = 4;
	bench_time(&job, &plan, &t);
	is_int(t.runs, 4, "never more than max_runs");

	plan.long_run = 1e-12; /* any warm-up is long: it counts, and max_seconds ends it */
	plan.max_seconds = 1e-12;
	plan.max_runs = 100;
	bench_time(&job, &plan, &t);
	ok(t.warmup_counted && t.runs == 1,
	   "a long warm-up counts, and no run starts past max_seconds");

	job.stop = stop_fn;
	stop_now = 1;
	plan = (struct bench_plan){ .min_seconds = 10, .min_runs = 3, .max_runs = 10 };
	bench_time(&job, &plan, &t);
	ok(t.stopped && t.runs == 0, "a stop ends the timing at once");
	stop_now = 0;

	is_dbl(bench_gflops(1024, 1.0), 2.147483648, 1e-9, "GFLOP/s = 2 N^3 / s / 1e9");
	ok(isnan(bench_gflops(1024, 0)), "no time, no rate");
	is_str(bench_kernel_name(BENCH_BLOCKED), "blocked", "kernel names");
	bench_matrix_free(a);
	bench_matrix_free(b);
	bench_matrix_free(c);
}

static const char cpuinfo_avx2[] =
        "processor\t: 0\n"
        "vendor_id\t: AuthenticAMD\n"
        "model name\t: AMD EPYC 7B13 64-Core Processor\n"
        "cpu MHz\t\t: 2449.998\n"
        "flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat "
        "sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm pni pclmulqdq ssse3 fma cx16 "
        "sse4_1 sse4_2 movbe popcnt aes xsave avx f16c rdrand hypervisor lahf_lm avx2 bmi2\n"
        "\n"
        "processor\t: 1\n"
        "model name\t: AMD EPYC 7B13 64-Core Processor\n"
        "cpu MHz\t\t: 3000.000\n"
        "flags\t\t: fpu sse sse2 avx2 fma\n";

static const char cpuinfo_avx512[] =
        "processor\t: 0\n"
        "model name\t: Intel(R) Xeon(R) Platinum 8480+\n"
        "cpu MHz\t\t: 2000.000\n"
        "flags\t\t: fpu sse sse2 avx fma avx2 avx512f avx512dq avx512bw avx512vl amx_tile\n";

static const char cpuinfo_aarch64[] =
        "processor\t: 0\n"
        "BogoMIPS\t: 50.00\n"
        "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid "
        "asimdrdm lrcpc dcpop asimddp ssbs\n"
        "CPU implementer\t: 0x41\n"
        "CPU architecture: 8\n"
        "CPU variant\t: 0x3\n"
        "CPU part\t: 0xd0c\n";

static const char cpuinfo_sse[] = "model name\t: Old\ncpu MHz\t: 1000\nflags\t: fpu sse sse2\n";
static const char cpuinfo_avx_nofma[] = "cpu MHz\t: 1000\nflags\t: sse avx\n";
static const char cpuinfo_avx512_word[] = "cpu MHz\t: 1000\nflags\t: sse avx512fx avx2\n";

static void
test_peak(void)
{
	struct bench_cpu_peak p;

	bench_cpu_peak_parse(cpuinfo_avx2, 0, NULL, 4, &p);
	is_int(p.lanes, 8, "avx2 + fma: 8 FP32 lanes");
	is_str(p.isa, "avx2+fma", "named avx2+fma");
	is_dbl(p.mhz, 3000.0, 1e-9, "the highest cpu MHz of cpuinfo");
	is_str(p.clock_source, "cpuinfo \"cpu MHz\"", "and it says where the clock came from");
	is_dbl(p.gflops, 4 * 3.0 * 8 * 2, 1e-9, "peak = 4 CPUs x 3 GHz x 8 x 2 = 192 GFLOP/s");
	is_str(p.model, "AMD EPYC 7B13 64-Core Processor", "the model");
	ok(strstr(p.how, "4 CPUs x 3000 MHz") && strstr(p.how, "x 8 FP32 lanes (avx2+fma)") &&
	           strstr(p.how, "= 192.0 GFLOP/s"),
	   "the derivation is spelt out: %s", p.how);

	bench_cpu_peak_parse(cpuinfo_avx2, 3500000, "cpufreq cpuinfo_max_freq", 4, &p);
	is_dbl(p.mhz, 3500.0, 1e-9, "cpuinfo_max_freq (kHz) wins over cpu MHz");
	is_str(p.clock_source, "cpufreq cpuinfo_max_freq", "and is named");
	is_dbl(p.gflops, 4 * 3.5 * 8 * 2, 1e-9, "peak 224 GFLOP/s");

	bench_cpu_peak_parse(cpuinfo_avx512, 0, NULL, 56, &p);
	is_int(p.lanes, 16, "avx512f: 16 lanes");
	is_str(p.isa, "avx512f", "named avx512f");
	is_dbl(p.gflops, 56 * 2.0 * 16 * 2, 1e-9, "peak = 56 x 2 GHz x 16 x 2 = 3584 GFLOP/s");

	bench_cpu_peak_parse(cpuinfo_aarch64, 0, NULL, 8, &p);
	is_int(p.lanes, 4, "aarch64 asimd: 4 lanes (NEON)");
	is_str(p.isa, "neon", "named neon");
	ok(p.gflops == 0 && p.mhz == 0, "no clock on aarch64's cpuinfo: no peak");
	ok(strstr(p.how, "unknown") != NULL, "and it says why: %s", p.how);
	is_str(p.model, "Arm CPU implementer 0x41 part 0xd0c", "the Arm part");
	bench_cpu_peak_parse(cpuinfo_aarch64, 2600000, "cpufreq cpuinfo_max_freq", 8, &p);
	is_dbl(p.gflops, 8 * 2.6 * 4 * 2, 1e-9, "with cpufreq: 8 x 2.6 GHz x 4 x 2 = 166.4");

	bench_cpu_peak_parse(cpuinfo_sse, 0, NULL, 1, &p);
	ok(p.lanes == 4 && !strcmp(p.isa, "sse"), "sse only: 4 lanes");
	ok(strstr(p.how, "no FMA") && strstr(p.how, "1 CPU x"), "no FMA, one CPU: %s", p.how);
	bench_cpu_peak_parse(cpuinfo_avx_nofma, 0, NULL, 2, &p);
	ok(p.lanes == 8 && !strcmp(p.isa, "avx"), "avx without fma: 8 lanes, named avx");
	bench_cpu_peak_parse(cpuinfo_avx512_word, 0, NULL, 2, &p);
	ok(p.lanes == 4 && !strcmp(p.isa, "sse"),
	   "flags are whole words (avx512fx is not avx512f)");
	bench_cpu_peak_parse("", 0, NULL, 0, &p);
	ok(p.cpus == 1 && p.lanes == 1 && p.gflops == 0,
	   "an empty cpuinfo: one scalar CPU, no peak");
}

static void
put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void
test_peak_files(void)
{
	char root[] = "/tmp/t_bench.XXXXXX", path[512], dir[256];
	struct bench_cpu_peak p;
	cpu_set_t set;
	int first = 0;

	if (!mkdtemp(root)) {
		ok(0, "mkdtemp");
		return;
	}
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		while (first < CPU_SETSIZE - 1 && !CPU_ISSET(first, &set))
			first++;
	snprintf(path, sizeof(path), "%s/proc", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/proc/cpuinfo", root);
	put(path, cpuinfo_avx512);
	snprintf(path, sizeof(path), "%s/proc/meminfo", root);
	put(path, "MemTotal:       32000000 kB\nMemFree:  100 kB\nMemAvailable:   16000000 kB\n");
	snprintf(dir, sizeof(dir), "%s/sys", root);
	bench_cpu_peak_read(dir, dir, 2, &p); /* no cpuinfo, no cpufreq there */
	ok(p.gflops == 0 && p.lanes == 1, "no files: no peak, and no failure");
	snprintf(dir, sizeof(dir), "%s/proc", root);
	bench_cpu_peak_read(dir, "/nonexistent", 2, &p);
	is_dbl(p.gflops, 2 * 2.0 * 16 * 2, 1e-9, "cpuinfo from the proc root: 128 GFLOP/s");
	is_int(bench_mem_available(dir), 16000000ULL * 1024, "MemAvailable from the proc root");

	const char *parts[] = { "sys", "sys/devices", "sys/devices/system",
		                "sys/devices/system/cpu" };
	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/%s", root, parts[i]);
		mkdir(path, 0755);
	}
	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%d", root, first);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%d/cpufreq", root, first);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%d/cpufreq/cpuinfo_max_freq",
	         root, first);
	put(path, "3800000\n");
	snprintf(path, sizeof(path), "%s/sys", root);
	bench_cpu_peak_read(dir, path, 2, &p);
	is_dbl(p.mhz, 3800.0, 1e-9, "cpuinfo_max_freq from the sysfs root");
	is_dbl(p.gflops, 2 * 3.8 * 16 * 2, 1e-9, "peak 243.2 GFLOP/s");
	ok(bench_cpus() >= 1, "at least one CPU to run on (%u)", bench_cpus());

	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		diag("could not remove %s", root);
}

int
main(void)
{
	test_kernels();
	test_checker();
	test_timing();
	test_peak();
	test_peak_files();
	return done_testing();
}
