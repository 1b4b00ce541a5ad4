/*
 * bench/p2p.c on the fake libcuda.so.1 (tests/fakecuda/, docs/fake-cuda.md):
 * p2p.scn's NVLink pair gives its 200 GB/s each way (within 1 %) and 400
 * both ways at once, its PCIe pair 25 GB/s, each with the link the driver's
 * attributes tell, and the pair that cannot peer one result saying so;
 * selection, the link callback, progress, stop and a buffer that does not
 * fit; every buffer freed. p2p-lost.scn loses device 0 in its first test:
 * that pair and the next one with device 0 fail, the third pair is measured.
 * The fake reads its scenario once a process, so each scenario runs in a
 * child whose TAP lines continue the parent's count.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/cuda.h"
#include "bench/dev.h"
#include "bench/p2p.h"
#include "core/err.h"
#include "harness.h"

#define MIB (1024ull * 1024)

static char fake_lib[4096];

static int progress_calls, stop_after;
static char first_test[64];
static double last_left = -1;

static void
on_progress(void *arg, const char *test, double done, double left_s)
{
	(void)arg;
	(void)done;
	if (!progress_calls++)
		snprintf(first_test, sizeof(first_test), "%s", test);
	last_left = left_s;
}

static int
stop_soon(void)
{
	return --stop_after < 0;
}

static int
link_nvml(void *arg, const struct bench_dev_info *a, const struct bench_dev_info *b, char *out,
          size_t size)
{
	(void)arg;
	if (!strcmp(a->id, "cuda:0") && !strcmp(b->id, "cuda:1")) {
		snprintf(out, size, "NVLink x18");
		return 1;
	}
	return 0;
}

static bool
near(double got, double want)
{
	return got > want * 0.99 && got < want * 1.01;
}

static int
open_fake(const char *scn, struct bench_devs *devs, int want)
{
	char path[512];
	int n;

	snprintf(path, sizeof(path), "tests/fakecuda/scenarios/%s", scn);
	setenv("GPUSCOPE_FAKECUDA_SCENARIO", path, 1);
	/* the modelled clock times the copies: no need to sleep through them */
	setenv("GPUSCOPE_FAKECUDA_REALTIME", "0", 1);
	memset(devs, 0, sizeof(*devs));
	n = bench_cuda_open(devs, fake_lib);
	is_int(n, want, "%s: %d devices (%s)", scn, want, devs->cuda_reason);
	return n == want ? 0 : -1;
}

static unsigned long long
free_of(struct bench_dev *d)
{
	unsigned long long f = 0, t = 0;

	d->ops->mem_info(d, &f, &t, NULL);
	return f;
}

static void
check_rate(const struct bench_p2p_result *x, const char *name, const char *src, const char *dst,
           double want, const char *link)
{
	ok(!strcmp(x->name, name) && !strcmp(x->src_id, src) && !strcmp(x->dst_id, dst),
	   "%s %s to %s (%s %s to %s)", name, src, dst, x->name, x->src_id, x->dst_id);
	is_int(x->status, BENCH_MEASURED, "%s %s to %s measured (%s)", name, src, dst, x->why);
	ok(near(x->median, want) && near(x->best, want), "%s to %s: %.2f GB/s, best %.2f (want %g)",
	   src, dst, x->median, x->best, want);
	is_str(x->link, link, "%s to %s: the link", src, dst);
}

/*
 * The fake's peer calls as the driver answers them, after a run left
 * cuda:0's context with access to cuda:1's: enabled once, disabled once,
 * refused where the link says no. Access is enabled again at the end, as
 * the backend believes it to be.
 */
static void
fake_peer_calls(void)
{
	typedef unsigned (*retain_fn)(void **, int);
	typedef unsigned (*release_fn)(int);
	typedef unsigned (*ctx_fn)(void *);
	typedef unsigned (*enable_fn)(void *, unsigned);
	typedef unsigned (*can_fn)(int *, int, int);
	void *dl = dlopen(fake_lib, RTLD_NOW | RTLD_LOCAL);
	void *ctx[3] = { NULL, NULL, NULL }, *fn[6];
	const char *names[6] = { "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease_v2",
		                 "cuCtxSetCurrent",          "cuCtxEnablePeerAccess",
		                 "cuCtxDisablePeerAccess",   "cuDeviceCanAccessPeer" };
	retain_fn retain;
	release_fn release;
	ctx_fn set, disable;
	enable_fn enable;
	can_fn can;
	int yes = -1, no = -1;

	for (int i = 0; i < 6; i++)
		if (!dl || !(fn[i] = dlsym(dl, names[i]))) {
			ok(0, "the fake exports %s", names[i]);
			if (dl)
				dlclose(dl);
			return;
		}
	/* POSIX lets dlsym's void * become a function pointer */
	memcpy(&retain, &fn[0], sizeof(retain));
	memcpy(&release, &fn[1], sizeof(release));
	memcpy(&set, &fn[2], sizeof(set));
	memcpy(&enable, &fn[3], sizeof(enable));
	memcpy(&disable, &fn[4], sizeof(disable));
	memcpy(&can, &fn[5], sizeof(can));
	for (int i = 0; i < 3; i++)
		retain(&ctx[i], i);
	ok(can(&yes, 0, 1) == 0 && yes == 1 && can(&no, 1, 2) == 0 && no == 0,
	   "cuDeviceCanAccessPeer: 0 and 1 yes, 1 and 2 no");
	set(ctx[0]);
	is_int(enable(ctx[1], 0), 704,
	       "enabled by the run: CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED");
	is_int(enable(ctx[0], 0), 201, "itself: CUDA_ERROR_INVALID_CONTEXT");
	is_int(enable(ctx[2], 1), 1, "flags: CUDA_ERROR_INVALID_VALUE");
	is_int(disable(ctx[1]), 0, "cuCtxDisablePeerAccess");
	is_int(disable(ctx[1]), 705, "again: CUDA_ERROR_PEER_ACCESS_NOT_ENABLED");
	is_int(enable(ctx[1], 0), 0, "enabled again");
	set(ctx[1]);
	is_int(enable(ctx[2], 0), 217, "1 to 2, p2p = 0: CUDA_ERROR_PEER_ACCESS_UNSUPPORTED");
	set(NULL);
	for (int i = 0; i < 3; i++)
		release(i);
	dlclose(dl);
}

static void
scenario_p2p(void)
{
	struct bench_devs devs;
	struct bench_p2p_opts o = { .mem_limit = 8 * MIB, .progress = on_progress };
	struct bench_p2p_result *res = NULL;
	struct err err = ERR_INIT;
	bool lost[3] = { false, false, false }, sel[3] = { true, false, true };
	unsigned long long before[3];
	size_t n = 0;
	int rc;

	if (open_fake("p2p.scn", &devs, 3))
		return;
	for (int i = 0; i < 3; i++)
		before[i] = free_of(devs.dev[i]);
	o.lost = lost;
	rc = bench_p2p_run(&devs, NULL, &o, &res, &n, &err);
	is_int(rc, 0, "run: 0 (%s)", err.msg);
	is_int(n, 7, "3 tests for each of two peer pairs, 1 for the pair that cannot peer");
	if (n == 7) {
		check_rate(&res[0], "p2p.ce", "cuda:0", "cuda:1", 200, "NVLink");
		ok(strstr(res[0].link_from, "native peer atomics") != NULL,
		   "NVLink told by the native peer atomics (%s)", res[0].link_from);
		is_int(res[0].rank, 1, "the performance rank");
		is_int(res[0].bytes, 4 * MIB, "buffers in half of mem_limit: 4 MiB");
		is_int(res[0].samples, 3, "3 samples");
		ok(res[0].count == 4.0 * MIB * 16, "a sample counts 16 copies' bytes once");
		ok(strstr(res[0].note, "counted once") && !strstr(res[0].note, "no spin"),
		   "the note says how bytes count, and the spin kernel held the stream (%s)",
		   res[0].note);
		check_rate(&res[1], "p2p.ce", "cuda:1", "cuda:0", 200, "NVLink");
		check_rate(&res[2], "p2p.ce.bidir", "cuda:0", "cuda:1", 400, "NVLink");
		ok(res[2].bidir && near(res[2].fwd, 200) && near(res[2].rev, 200),
		   "both ways at once: %.2f and %.2f GB/s", res[2].fwd, res[2].rev);
		check_rate(&res[3], "p2p.ce", "cuda:0", "cuda:2", 25, "PCIe");
		check_rate(&res[4], "p2p.ce", "cuda:2", "cuda:0", 25, "PCIe");
		check_rate(&res[5], "p2p.ce.bidir", "cuda:0", "cuda:2", 50, "PCIe");
		ok(!strcmp(res[6].name, "p2p") && res[6].status == BENCH_UNSUPPORTED &&
		           res[6].src == 1 && res[6].dst == 2 &&
		           strstr(res[6].why, "no peer access between cuda:1 and cuda:2") &&
		           strstr(res[6].why, "host memory"),
		   "the pair that cannot peer: unsupported, saying why (%s)", res[6].why);
		ok(isnan(res[6].best) && isnan(res[6].median), "and no figure");
	}
	ok(progress_calls > 0 && !strcmp(first_test, "p2p cuda:0>cuda:1") && last_left == 0,
	   "progress: %d calls, first '%s', ending with 0 s left (%g)", progress_calls, first_test,
	   last_left);
	ok(!lost[0] && !lost[1] && !lost[2], "no device lost");
	for (int i = 0; i < 3; i++)
		is_int(free_of(devs.dev[i]), before[i], "cuda:%d: every buffer freed", i);
	free(res);

	fake_peer_calls();

	/* two of the three, and the link from outside (NVML's part) */
	o.link = link_nvml;
	rc = bench_p2p_run(&devs, sel, &o, &res, &n, &err);
	ok(rc == 0 && n == 3 && res && res[0].dst == 2 && !strcmp(res[0].link, "PCIe"),
	   "selected 0 and 2: their pair only (%zu results)", n);
	free(res);
	sel[2] = false;
	rc = bench_p2p_run(&devs, sel, &o, &res, &n, &err);
	ok(rc == 0 && n == 0 && !res, "one device selected: nothing to measure");
	rc = bench_p2p_run(&devs, NULL, &o, &res, &n, &err);
	ok(rc == 0 && n == 7 && !strcmp(res[0].link, "NVLink x18") &&
	           !strcmp(res[0].link_from, "the link callback") && !strcmp(res[3].link, "PCIe"),
	   "the link callback's answer where it has one (%s), the driver's where not",
	   n ? res[0].link : "");
	free(res);

	/* stopped in the first test: it and the rest say so */
	o.stop = stop_soon;
	stop_after = 8;
	rc = bench_p2p_run(&devs, NULL, &o, &res, &n, &err);
	ok(rc == 1 && n == 7 && res[0].status == BENCH_STOPPED && res[5].status == BENCH_STOPPED &&
	           strstr(res[5].why, "before it ran"),
	   "stop: 1, the test running and those after stopped (%s)", n ? res[0].why : "");
	for (int i = 0; i < 3; i++)
		is_int(free_of(devs.dev[i]), before[i], "cuda:%d: freed after the stop", i);
	free(res);

	/* buffers that do not fit */
	o.stop = NULL;
	o.mem_limit = MIB;
	rc = bench_p2p_run(&devs, NULL, &o, &res, &n, &err);
	ok(rc == 0 && n == 7 && res[0].status == BENCH_SKIPPED &&
	           strstr(res[0].why, "not enough free memory") &&
	           res[6].status == BENCH_UNSUPPORTED,
	   "no room for 1 MiB buffers: skipped (%s)", n ? res[0].why : "");
	free(res);
	bench_devs_close(&devs);
}

static void
scenario_lost(void)
{
	struct bench_devs devs;
	struct bench_p2p_opts o = { .mem_limit = 8 * MIB };
	struct bench_p2p_result *res = NULL;
	struct err err = ERR_INIT;
	bool lost[3] = { false, false, false };
	size_t n = 0;
	int rc;

	if (open_fake("p2p-lost.scn", &devs, 3))
		return;
	o.lost = lost;
	rc = bench_p2p_run(&devs, NULL, &o, &res, &n, &err);
	is_int(rc, 0, "a lost device is in the results, not the return (%s)", err.msg);
	is_int(n, 9, "three pairs, three tests each");
	if (n == 9) {
		ok(res[0].status == BENCH_FAILED &&
		           strstr(res[0].why, "CUDA_ERROR_ILLEGAL_ADDRESS"),
		   "cuda:0 lost in its first test: failed with the driver's error (%s)",
		   res[0].why);
		for (int i = 1; i < 6; i++)
			ok(res[i].status == BENCH_FAILED &&
			           !strncmp(res[i].why, "device lost: ", 13),
			   "%s %s to %s, after: device lost (%s)", res[i].name, res[i].src_id,
			   res[i].dst_id, res[i].why);
		for (int i = 6; i < 9; i++)
			ok(res[i].status == BENCH_MEASURED &&
			           near(res[i].median, res[i].bidir ? 400 : 200),
			   "%s %s to %s, without cuda:0: measured, %.2f GB/s (%s)", res[i].name,
			   res[i].src_id, res[i].dst_id, res[i].median, res[i].why);
	}
	ok(lost[0] && !lost[1] && !lost[2], "lost[]: cuda:0 only");
	free(res);
	bench_devs_close(&devs);
}

/* Run fn in a child (a scenario a process); its TAP lines continue this count. */
static void
in_child(void (*fn)(void))
{
	int fd[2], status = 0, counts[2] = { 0, 0 };
	pid_t pid;

	fflush(stdout);
	if (pipe(fd) < 0) {
		ok(0, "pipe");
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(fd[0]);
		fn();
		counts[0] = harness_n;
		counts[1] = harness_failed;
		fflush(stdout);
		if (write(fd[1], counts, sizeof(counts)) != (ssize_t)sizeof(counts))
			_exit(2);
		/* exit(), not _exit(): LeakSanitizer looks at the child's end too */
		exit(0);
	}
	close(fd[1]);
	if (pid < 0 || read(fd[0], counts, sizeof(counts)) != (ssize_t)sizeof(counts)) {
		close(fd[0]);
		if (pid > 0)
			waitpid(pid, &status, 0);
		ok(0, "the scenario's child ran to its end");
		return;
	}
	close(fd[0]);
	waitpid(pid, &status, 0);
	harness_n = counts[0];
	harness_failed = counts[1];
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the scenario's child exited cleanly");
}

int
main(void)
{
	struct bench_devs none = { 0 };
	struct bench_p2p_result *res = (void *)&none;
	struct err err = ERR_INIT;
	size_t n = 5;

	ok(bench_p2p_run(&none, NULL, NULL, &res, &n, &err) == 0 && n == 0 && !res,
	   "no devices: no results");
	ok(bench_p2p_run(NULL, NULL, NULL, &res, &n, &err) == E_USAGE && strstr(err.msg, "p2p"),
	   "no list: E_USAGE (%s)", err.msg);
	snprintf(fake_lib, sizeof(fake_lib), "%s/fakecuda/libcuda.so.1",
	         getenv("O") && *getenv("O") ? getenv("O") : "build");
	if (access(fake_lib, R_OK) != 0) {
		skip_missing("no fake libcuda.so.1 built (tests/fakecuda/, mk/fakecuda.mk)");
		return done_testing();
	}
	in_child(scenario_p2p);
	in_child(scenario_lost);
	return done_testing();
}
