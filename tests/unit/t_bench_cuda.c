/*
 * bench/cuda.h: the CUDA driver API backend. Without a driver: a missing
 * library, the toolkit's link stub (refused from any stubs/ directory) and a
 * library that is not libcuda.so.1 each give their reason; CUresult codes
 * are named. On the fake libcuda.so.1 of tests/fakecuda/ ($O/fakecuda,
 * scenarios in tests/fakecuda/scenarios/): the devices and their info as
 * the scenario has them, buffers, copies and gs_stream_triad's values,
 * markers and their elapsed time, gs_spin holding stream 0 until its
 * mapped host flag is set, out of memory, a failed launch that is E_LOST
 * and stays so, and a hanging kernel that sync() gives up on within
 * timeout_s. Without the fake those cases are a skip (a failure under
 * GPUSCOPE_NO_SKIP=1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/cuda.h"
#include "bench/dev.h"
#include "core/clock.h"
#include "core/err.h"
#include "harness.h"

static char tmpdir[] = "/tmp/t_bench_cuda.XXXXXX";

static int
open_at(struct bench_devs *devs, const char *path)
{
	memset(devs, 0, sizeof(*devs));
	return bench_cuda_open(devs, path);
}

static int
copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	char buf[65536];
	size_t n;
	int rc = 0;

	if (!in || !out)
		rc = -1;
	while (rc == 0 && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			rc = -1;
	if (in)
		fclose(in);
	if (out && fclose(out) != 0)
		rc = -1;
	return rc;
}

static void
test_names(void)
{
	char buf[32];

	is_str(bench_cuda_error_name(0, buf, sizeof(buf)), "CUDA_SUCCESS", "code 0 is named");
	is_str(bench_cuda_error_name(2, buf, sizeof(buf)), "CUDA_ERROR_OUT_OF_MEMORY",
	       "code 2 is named");
	is_str(bench_cuda_error_name(719, buf, sizeof(buf)), "CUDA_ERROR_LAUNCH_FAILED",
	       "code 719 is named");
	is_str(bench_cuda_error_name(999, buf, sizeof(buf)), "CUDA_ERROR_UNKNOWN",
	       "code 999 is named");
	is_str(bench_cuda_error_name(12345, buf, sizeof(buf)), "CUDA error 12345",
	       "an unknown code is given by number");
}

static void
test_no_library(void)
{
	struct bench_devs devs;
	const char *libm = "/lib/x86_64-linux-gnu/libm.so.6";
	char stubdir[256], stub[300];
	int n;

	unsetenv("GPUSCOPE_CUDA");
	n = open_at(&devs, "/nonexistent/libcuda.so.1");
	is_int(n, -1, "a missing library: -1");
	ok(strstr(devs.cuda_reason, "cannot load '/nonexistent/libcuda.so.1'") != NULL,
	   "a missing library named: the reason names it (%s)", devs.cuda_reason);
	is_int(devs.ndev, 0, "a missing library: no device");

	setenv("GPUSCOPE_CUDA", "/nonexistent/libcuda.so.1", 1);
	n = open_at(&devs, NULL);
	ok(n == -1 && strstr(devs.cuda_reason, "named by GPUSCOPE_CUDA"),
	   "GPUSCOPE_CUDA is the library taken when path is NULL (%s)", devs.cuda_reason);
	setenv("GPUSCOPE_CUDA", "", 1);
	n = open_at(&devs, NULL);
	if (n == -1 && !strstr(devs.cuda_reason, "stub"))
		is_str(devs.cuda_reason,
		       "libcuda.so.1 not found: no NVIDIA driver (install the NVIDIA driver)",
		       "no driver: the documented reason (an empty GPUSCOPE_CUDA is not a name)");
	else
		skip("this machine has a libcuda.so.1 on the loader's path");
	bench_devs_close(&devs);
	unsetenv("GPUSCOPE_CUDA");

	if (access(libm, R_OK) != 0) {
		skip("no /lib/x86_64-linux-gnu/libm.so.6 to stand for a library that is not libcuda");
	} else {
		n = open_at(&devs, libm);
		ok(n == -1 && strstr(devs.cuda_reason, "is missing cuInit"),
		   "a library without cuInit is refused, naming the symbol (%s)", devs.cuda_reason);

		/* any library in a stubs/ directory is the toolkit's stub to us */
		snprintf(stubdir, sizeof(stubdir), "%s/stubs", tmpdir);
		snprintf(stub, sizeof(stub), "%s/libcuda.so.1", stubdir);
		ok(mkdir(stubdir, 0700) == 0 && copy_file(libm, stub) == 0,
		   "a stubs/ directory made");
		n = open_at(&devs, stub);
		ok(n == -1 && strstr(devs.cuda_reason, "link-time stub") &&
		           strstr(devs.cuda_reason, "/stubs/libcuda.so.1"),
		   "a library from a stubs/ directory is refused (%s)", devs.cuda_reason);
		unlink(stub);
		rmdir(stubdir);
	}
	if (access("/usr/local/cuda/lib64/stubs/libcuda.so", R_OK) == 0) {
		n = open_at(&devs, "/usr/local/cuda/lib64/stubs/libcuda.so");
		ok(n == -1 && strstr(devs.cuda_reason, "link-time stub"),
		   "the toolkit's own stub is refused (%s)", devs.cuda_reason);
	} else {
		skip("no CUDA toolkit stub at /usr/local/cuda/lib64/stubs/libcuda.so");
	}
}

/* four devices, each with its own fault: dev.h's operations on the fake */
static const char scenario[] = "[system]\n"
                               "driver_version = 12080\n"
                               "realtime = 0\n"
                               "[device]\n"
                               "name = NVIDIA H200\n"
                               "uuid = GPU-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\n"
                               "pci_bus_id = 0000:1A:00.0\n"
                               "compute_capability = 9.0\n"
                               "sm_count = 132\n"
                               "clock_mhz = 1980\n"
                               "mem_clock_mhz = 3201\n"
                               "bus_width = 6144\n"
                               "l2 = 60 MiB\n"
                               "memory = 256 MiB\n"
                               "max_threads_per_block = 1024\n"
                               "mem_gbps = 1000\n"
                               "launch_us = 5\n"
                               "[device]\n"
                               "name = oom\n"
                               "fault = oom 64 MiB\n"
                               "[device]\n"
                               "name = launch fails\n"
                               "fault = launch_failed gs_empty 1\n"
                               "[device]\n"
                               "name = hangs\n"
                               "fault = hang gs_stream_triad 1\n";

static char fake_lib[512];

static int
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int rc = f && fputs(text, f) >= 0 ? 0 : -1;

	if (f && fclose(f) != 0)
		rc = -1;
	return rc;
}

static const unsigned one[2] = { 1, 1 };

/* cuInit's error: in a child, since the fake reads its scenario once a process */
static void
test_init_error(void)
{
	char path[300];
	int status = 0;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/init.scn", tmpdir);
	if (write_file(path, "[system]\ninit_error = NO_DEVICE\n") < 0) {
		ok(0, "write %s", path);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct bench_devs devs;
		int n;

		setenv("GPUSCOPE_FAKECUDA_SCENARIO", path, 1);
		n = open_at(&devs, fake_lib);
		_exit(n == 0 && devs.ndev == 0 &&
		                      !strncmp(devs.cuda_reason,
		                               "cuInit: CUDA_ERROR_NO_DEVICE (100)", 34)
		              ? 0
		              : 1);
	}
	ok(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	           WEXITSTATUS(status) == 0,
	   "cuInit failing: no device, and the reason names its error");
}

static void
test_info(struct bench_devs *devs)
{
	const struct bench_dev_info *in = &devs->dev[0]->info;

	is_str(in->api, "cuda", "api");
	is_str(in->id, "cuda:0", "id");
	is_str(devs->dev[3]->info.id, "cuda:3", "the fourth device's id");
	is_str(in->name, "NVIDIA H200", "name");
	is_str(in->vendor, "NVIDIA", "vendor");
	is_str(in->uuid, "GPU-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "uuid in nvidia-smi's form");
	is_str(in->pci_bus_id, "0000:1a:00.0", "pci bus id, lowercase");
	is_str(in->driver, "12.8", "driver: the CUDA version it supports");
	is_int(in->cc_major, 9, "cc major");
	is_int(in->cc_minor, 0, "cc minor");
	is_int(in->units, 132, "SMs");
	is_int(in->clock_mhz, 1980, "clock");
	is_int(in->mem_clock_mhz, 3201, "memory clock");
	is_int(in->mem_bus_bits, 6144, "bus width");
	is_int(in->l2_bytes, 60 << 20, "L2");
	is_int(in->mem_total, 256 << 20, "memory");
	is_int(in->max_alloc, 256 << 20, "max_alloc = memory");
	is_int(in->max_block, 1024, "max block");
	ok(in->has_fp64 && in->has_fp16 && in->host_mapped && !in->cpu, "flags");
	is_str(devs->dev[1]->info.name, "oom", "the second device's name");
	is_dbl(devs->dev[0]->timeout_s, 60, 0, "timeout 60 s unless set");
}

/* alloc, write, gs_stream_triad between markers, read; and the checks before the driver */
static void
test_triad(struct bench_dev *d)
{
	enum { N = 1 << 16 };
	static float hb[N], hc[N], ha[N];
	struct err err = ERR_INIT;
	uint64_t a = 0, b = 0, c = 0;
	unsigned grid[2] = { 64, 1 }, block[2] = { 256, 1 };
	struct bench_arg args[5];
	unsigned long long fr = 0, tot = 0;
	double s = 0, want;
	size_t bad = 0;
	int rc;

	ok(d->ops->has(d, BK_STREAM_TRIAD), "has gs_stream_triad");
	ok(!d->ops->has(d, BK_NKERNELS), "has no kernel past the set");
	for (size_t i = 0; i < N; i++) {
		hb[i] = (float)i;
		hc[i] = (float)(i % 7);
	}
	rc = d->ops->alloc(d, N * 4, &a, &err);
	rc = rc ? rc : d->ops->alloc(d, N * 4, &b, &err);
	rc = rc ? rc : d->ops->alloc(d, N * 4, &c, &err);
	is_int(rc, 0, "three buffers (%s)", err.msg);
	rc = d->ops->mem_info(d, &fr, &tot, &err);
	ok(rc == 0 && tot == 256 << 20 && fr <= tot - 3 * N * 4, "mem_info: %llu free of %llu (%s)",
	   fr, tot, err.msg);
	rc = d->ops->write(d, 0, b, 0, hb, N * 4, false, &err);
	rc = rc ? rc : d->ops->write(d, 1, c, 0, hc, N * 4, true, &err);
	rc = rc ? rc : d->ops->sync(d, -1, &err);
	is_int(rc, 0, "writes on both streams (%s)", err.msg);
	args[0] = bench_arg_buf(a, 0);
	args[1] = bench_arg_buf(b, 0);
	args[2] = bench_arg_buf(c, 0);
	args[3] = bench_arg_f32(0.5f);
	args[4] = bench_arg_u64(N);
	rc = d->ops->mark(d, 0, 2, &err);
	rc = rc ? rc : d->ops->launch(d, 0, BK_STREAM_TRIAD, grid, block, args, 5, &err);
	rc = rc ? rc : d->ops->mark(d, 0, 3, &err);
	rc = rc ? rc : d->ops->read(d, 0, a, 0, ha, N * 4, true, &err);
	is_int(rc, 0, "triad queued and read back (%s)", err.msg);
	for (size_t i = 0; i < N; i++)
		bad += ha[i] != hb[i] + 0.5f * hc[i];
	is_int(bad, 0, "a = b + 0.5 c at every element");
	rc = d->ops->elapsed(d, 2, 3, &s, &err);
	/* the fake's model: 3 x 4 x n bytes at 1000 GB/s, and the launch's 5 us */
	want = 12.0 * N / 1e12 + 5e-6;
	ok(rc == 0 && s > want * 0.98 && s < want * 1.02, "elapsed %.3g s, the modelled %.3g (%s)",
	   s, want, err.msg);

	/* an offset into a buffer */
	args[0].v.b.off = 4 * (N - 16);
	args[1].v.b.off = 4 * (N - 16);
	args[2].v.b.off = 4 * (N - 16);
	args[3] = bench_arg_f32(2.0f);
	args[4] = bench_arg_u64(16);
	rc = d->ops->launch(d, 1, BK_STREAM_TRIAD, one, one, args, 5, &err);
	rc = rc ? rc : d->ops->read(d, 1, a, 4 * (N - 16), ha, 64, true, &err);
	ok(rc == 0 && ha[15] == hb[N - 1] + 2.0f * hc[N - 1],
	   "a launch on stream 1 at an offset into the buffers (%s)", err.msg);
	err_clear(&err);

	args[0].v.b.off = 0;
	args[3] = bench_arg_i32(1);
	rc = d->ops->launch(d, 0, BK_STREAM_TRIAD, grid, block, args, 5, &err);
	ok(rc == E_USAGE && strstr(err.msg, "argument 3 is not f32"), "a wrong argument type (%s)",
	   err.msg);
	err_clear(&err);
	rc = d->ops->launch(d, 0, BK_STREAM_TRIAD, grid, block, args, 4, &err);
	ok(rc == E_USAGE && strstr(err.msg, "4 arguments, the kernel takes 5"),
	   "a wrong argument count (%s)", err.msg);
	err_clear(&err);
	rc = d->ops->read(d, 0, a, 8, ha, N * 4, true, &err);
	ok(rc == E_USAGE && strstr(err.msg, "past the end"), "a read past the end (%s)", err.msg);
	err_clear(&err);
	rc = d->ops->write(d, 2, a, 0, hb, 4, true, &err);
	ok(rc == E_USAGE, "stream 2 does not exist (%s)", err.msg);
	err_clear(&err);
	rc = d->ops->mark(d, 0, BENCH_MARKS, &err);
	ok(rc == E_USAGE, "marker slot past BENCH_MARKS (%s)", err.msg);
	err_clear(&err);
	rc = d->ops->elapsed(d, 2, 5, &s, &err);
	ok(rc == E_USAGE && strstr(err.msg, "marker 5 was never queued"),
	   "elapsed to a marker never queued (%s)", err.msg);
	err_clear(&err);
	rc = d->ops->read(d, 0, a, 0, ha, N * 4, true, &err);
	rc = rc ? rc : d->ops->copy(d, 0, c, a, N * 4, &err);
	rc = rc ? rc : d->ops->read(d, 0, c, 0, hc, N * 4, true, &err);
	ok(rc == 0 && !memcmp(hc, ha, sizeof(ha)) && hc[3] == 3.0f + 0.5f * 3,
	   "copy device to device (%s)", err.msg);
	err_clear(&err);
	d->ops->free(d, b);
	rc = d->ops->write(d, 0, b, 0, hb, 4, true, &err);
	ok(rc == E_USAGE && strstr(err.msg, "not a buffer"), "a freed buffer is refused (%s)",
	   err.msg);
	err_clear(&err);
	rc = d->ops->alloc(d, 512u << 20, &b, &err);
	ok(rc == E_IO && strstr(err.msg, "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2)"),
	   "more than the memory: out of memory (%s)", err.msg);
	err_clear(&err);
	d->ops->free(d, a);
	d->ops->free(d, c);
}

/* nvbandwidth's method: gs_spin holds stream 0 until its mapped host flag is set */
static void
test_spin(struct bench_dev *d)
{
	struct err err = ERR_INIT;
	volatile int32_t *flag = NULL;
	void *fp = NULL, *hp = NULL;
	uint64_t a = 0;
	struct bench_arg sp[2];
	float *h;
	int rc;

	ok(d->ops->has(d, BK_SPIN), "has gs_spin");
	rc = d->ops->host_alloc(d, 64, true, &fp, &err);
	rc = rc ? rc : d->ops->host_alloc(d, 4096, false, &hp, &err);
	rc = rc ? rc : d->ops->alloc(d, 4096, &a, &err);
	if (!ok(rc == 0, "mapped and pinned host memory, a buffer (%s)", err.msg))
		return;
	flag = fp;
	h = hp;
	*flag = 0;
	memset(h, 0, 4096);
	for (int i = 0; i < 1024; i++)
		h[i] = (float)i;
	rc = d->ops->write(d, 1, a, 0, h, 4096, true, &err);
	memset(h, 0, 4096);
	sp[0] = (struct bench_arg){ .type = BA_HOST };
	sp[0].v.host = fp;
	sp[1] = bench_arg_u64(30000000000ull);
	rc = rc ? rc : d->ops->launch(d, 0, BK_SPIN, one, one, sp, 2, &err);
	rc = rc ? rc : d->ops->read(d, 0, a, 0, h, 4096, false, &err);
	is_int(rc, 0, "spin, and a read queued behind it (%s)", err.msg);
	usleep(100000);
	ok(h[1023] == 0.0f, "the read waits behind the spin");
	rc = d->ops->write(d, 1, a, 0, h, 4, true, &err);
	is_int(rc, 0, "stream 1 runs meanwhile (%s)", err.msg);
	*flag = 1;
	rc = d->ops->sync(d, 0, &err);
	ok(rc == 0 && h[1023] == 1023.0f, "the flag set: the spin ends and the read is done (%s)",
	   err.msg);
	sp[0].v.host = (char *)hp + 8;
	rc = d->ops->launch(d, 0, BK_SPIN, one, one, sp, 2, &err);
	ok(rc == E_USAGE, "memory not mapped is no BA_HOST (%s)", err.msg);
	d->ops->host_free(d, fp);
	d->ops->host_free(d, hp);
	d->ops->free(d, a);
}

static void
test_oom(struct bench_dev *d)
{
	struct err err = ERR_INIT;
	uint64_t a = 0, b = 0, c = 0;
	int rc;

	rc = d->ops->alloc(d, 48u << 20, &a, &err);
	is_int(rc, 0, "48 MiB of 64 (%s)", err.msg);
	rc = d->ops->alloc(d, 32u << 20, &b, &err);
	ok(rc == E_IO && !strcmp(err.msg, "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2)"),
	   "32 MiB more: out of memory, one line (%s)", err.msg);
	err_clear(&err);
	rc = d->ops->alloc(d, 8u << 20, &c, &err);
	is_int(rc, 0, "the device is still usable after (%s)", err.msg);
	d->ops->free(d, a);
	d->ops->free(d, c);
}

static void
test_launch_failed(struct bench_dev *d)
{
	struct err err = ERR_INIT;
	struct bench_arg e = bench_arg_i32(0);
	char first[256];
	uint64_t a = 0;
	int rc;

	rc = d->ops->alloc(d, 4096, &a, &err);
	is_int(rc, 0, "a buffer before (%s)", err.msg);
	rc = d->ops->launch(d, 0, BK_EMPTY, one, one, &e, 1, &err);
	if (rc == 0)
		rc = d->ops->sync(d, 0, &err);
	ok(rc == E_LOST && strstr(err.msg, "CUDA_ERROR_LAUNCH_FAILED (719)"),
	   "a failed launch is E_LOST (%s)", err.msg);
	snprintf(first, sizeof(first), "%s", err.msg);
	err_clear(&err);
	rc = d->ops->alloc(d, 4096, &a, &err);
	ok(rc == E_LOST && !strcmp(err.msg, first), "and stays so: alloc (%s)", err.msg);
	err_clear(&err);
	rc = d->ops->sync(d, -1, &err);
	ok(rc == E_LOST && !strcmp(err.msg, first), "and sync (%s)", err.msg);
	ok(!d->ops->has(d, BK_EMPTY), "a lost device has no kernel");
}

static void
test_hang(struct bench_dev *d)
{
	struct err err = ERR_INIT;
	struct bench_arg args[5];
	uint64_t a = 0;
	double t0, t;
	int rc;

	d->timeout_s = 0.5;
	rc = d->ops->alloc(d, 4096, &a, &err);
	args[0] = bench_arg_buf(a, 0);
	args[1] = bench_arg_buf(a, 0);
	args[2] = bench_arg_buf(a, 0);
	args[3] = bench_arg_f32(1);
	args[4] = bench_arg_u64(1024);
	rc = rc ? rc : d->ops->launch(d, 0, BK_STREAM_TRIAD, one, one, args, 5, &err);
	is_int(rc, 0, "a kernel that will hang is queued (%s)", err.msg);
	t0 = clock_mono();
	rc = d->ops->sync(d, 0, &err);
	t = clock_mono() - t0;
	ok(rc == E_TIMEOUT &&
	           !strcmp(err.msg, "cuStreamQuery: stream 0 still busy after 0.5 s: the GPU or "
	                            "its driver does not answer (see dmesg for an Xid)"),
	   "sync gives up (%s)", err.msg);
	ok(t >= 0.5 && t < 1.5, "after timeout_s: %.3f s", t);
	err_clear(&err);
	t0 = clock_mono();
	rc = d->ops->alloc(d, 4096, &a, &err);
	ok(rc == E_TIMEOUT && strstr(err.msg, "still busy") && clock_mono() - t0 < 0.1,
	   "later operations fail at once with it (%s)", err.msg);
}

static void
test_fake(void)
{
	char scn[300], ptx[300];
	struct bench_devs devs;
	struct err err = ERR_INIT;
	double t0;
	int n;

	snprintf(scn, sizeof(scn), "%s/four.scn", tmpdir);
	snprintf(ptx, sizeof(ptx), "%s/two.ptx", tmpdir);
	if (write_file(scn, scenario) < 0 ||
	    write_file(ptx, ".version 7.0\n.target sm_80\n.address_size 64\n"
	                    ".visible .entry gs_stream_triad(.param .u64 a, .param .u64 b,\n"
	                    "\t.param .u64 c, .param .f32 s, .param .u64 n)\n{\n\tret;\n}\n"
	                    ".visible .entry gs_empty(.param .u32 unused)\n{\n\tret;\n}\n") < 0) {
		ok(0, "scenario files written in %s", tmpdir);
		return;
	}
	test_init_error();
	setenv("GPUSCOPE_FAKECUDA_SCENARIO", scn, 1);
	setenv("GPUSCOPE_CUDA", fake_lib, 1);
	n = open_at(&devs, NULL);
	is_int(n, 4, "four devices (%s)", devs.cuda_reason);
	is_str(devs.cuda_reason, "", "no reason when there are devices");
	if (n != 4) {
		bench_devs_close(&devs);
		return;
	}
	test_info(&devs);
	/* device 0 takes the built-in PTX, device 1 a file of two kernels (the test hook) */
	test_triad(devs.dev[0]);
	test_spin(devs.dev[0]);
	setenv("GPUSCOPE_BENCH_PTX", ptx, 1);
	ok(devs.dev[1]->ops->has(devs.dev[1], BK_STREAM_TRIAD) &&
	           !devs.dev[1]->ops->has(devs.dev[1], BK_FMA_F32),
	   "GPUSCOPE_BENCH_PTX: has() is what the file has");
	{
		struct bench_arg args[4] = { bench_arg_buf(0, 0), bench_arg_f32(0.5f),
			                     bench_arg_f32(-1), bench_arg_i32(1) };
		uint64_t o = 0;

		n = devs.dev[1]->ops->alloc(devs.dev[1], 4096, &o, &err);
		args[0] = bench_arg_buf(o, 0);
		n = n ? n
		      : devs.dev[1]->ops->launch(devs.dev[1], 0, BK_FMA_F32, one, one, args, 4,
		                                 &err);
		ok(n == E_NOTSUP && strstr(err.msg, "gs_fma_f32"),
		   "a kernel not in the module: E_NOTSUP naming it (%s)", err.msg);
		err_clear(&err);
		devs.dev[1]->ops->free(devs.dev[1], o);
	}
	unsetenv("GPUSCOPE_BENCH_PTX");
	test_oom(devs.dev[1]);
	test_launch_failed(devs.dev[2]);
	test_hang(devs.dev[3]);
	t0 = clock_mono();
	bench_devs_close(&devs);
	ok(clock_mono() - t0 < 2, "closing, the hung device included, does not wait on it");
	unsetenv("GPUSCOPE_CUDA");
	unsetenv("GPUSCOPE_FAKECUDA_SCENARIO");
}
int
main(void)
{
	if (!mkdtemp(tmpdir)) {
		printf("1..0 # SKIP cannot make a temporary directory\n");
		return 0;
	}
	test_names();
	test_no_library();
	snprintf(fake_lib, sizeof(fake_lib), "%s/fakecuda/libcuda.so.1",
	         getenv("O") && *getenv("O") ? getenv("O") : "build");
	if (access(fake_lib, R_OK) == 0)
		test_fake();
	else
		skip_missing("no fake libcuda.so.1 built (tests/fakecuda/, mk/fakecuda.mk)");
	rmdir(tmpdir);
	return done_testing();
}
