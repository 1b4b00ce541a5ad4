/*
 * The gemm.* tests of bench/suite.c (cuBLASLt, bench/cublaslt.c) on the
 * fake libcuda.so.1 and the fake libcublasLt.so.13 (docs/fake-cuda.md):
 * the fastest of the heuristic's algorithms is kept, not its first; the
 * figure is the modelled rate; every type's result verifies against the
 * host's; a corrupted element is a wrong result; a type the library lacks,
 * a missing library, the toolkit's stub and FP8 below compute capability
 * 8.9 are unsupported with the reason. Both fakes read their scenarios once
 * a process, so each case runs in a child that sends its results back.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/cublaslt.h"
#include "bench/cuda.h"
#include "bench/dev.h"
#include "bench/suite.h"
#include "core/err.h"
#include "harness.h"

static char tmpdir[] = "/tmp/t_bench_gemm.XXXXXX";
static char cuda_lib[1024], lt_lib[1024], lt_stub[1024];

static int
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

struct outcome {
	int rc, ndev;
	size_t n;
	struct bench_result res[BENCH_SUITE_MAX];
};

/*
 * In a child: both scenarios written, GPUSCOPE_CUBLASLT set to lt (NULL:
 * unset), the gemm tests run on the fake's device 0.
 */
static int
run_case(const char *name, const char *cuda_scn, const char *lt_scn, const char *lt,
         struct outcome *o)
{
	char cpath[600], lpath[600];
	int fd[2], status;
	pid_t pid;

	memset(o, 0, sizeof(*o));
	snprintf(cpath, sizeof(cpath), "%s/%s.scn", tmpdir, name);
	snprintf(lpath, sizeof(lpath), "%s/%s.lt", tmpdir, name);
	if (write_file(cpath, cuda_scn) || write_file(lpath, lt_scn) || pipe(fd))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		static const char *const pattern[] = { "gemm" };
		struct bench_suite_opts opts = { .quick = true,
			                         .target_s = 0.002,
			                         .tests = pattern,
			                         .ntests = 1,
			                         .mem_limit = 2ull << 20 };
		struct bench_devs devs = { 0 };
		struct err e = ERR_INIT;
		struct outcome out = { 0 };

		close(fd[0]);
		setenv("GPUSCOPE_FAKECUDA_SCENARIO", cpath, 1);
		setenv("GPUSCOPE_FAKECUDA_REALTIME", "0", 1);
		setenv("GPUSCOPE_FAKECUBLASLT_SCENARIO", lpath, 1);
		if (lt)
			setenv("GPUSCOPE_CUBLASLT", lt, 1);
		else
			unsetenv("GPUSCOPE_CUBLASLT");
		out.ndev = bench_cuda_open(&devs, cuda_lib);
		if (out.ndev > 0)
			out.rc = bench_suite_run(devs.dev[0], &opts, out.res, &out.n, &e);
		bench_devs_close(&devs);
		if (write(fd[1], &out, sizeof(out)) != (ssize_t)sizeof(out))
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	ssize_t got = read(fd[0], o, sizeof(*o));
	close(fd[0]);
	waitpid(pid, &status, 0);
	return got == (ssize_t)sizeof(*o) && WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

static const struct bench_result *
find(const struct outcome *o, const char *name)
{
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->res[i].name, name))
			return &o->res[i];
	return NULL;
}

static const char h100[] = "[device]\nname = NVIDIA H100 80GB HBM3\ncompute_capability = 9.0\n";

static void
test_best_and_rate(void)
{
	struct outcome o;
	const struct bench_result *r;
	/* the heuristic's first is slow: the second is the one to keep */
	static const char lt[] = "algos = 4\ntflops = 10 40 20 5\ntflops.fp64 = 2 1 3\n";

	if (run_case("best", h100, lt, lt_lib, &o)) {
		ok(0, "the child ran the gemm tests");
		return;
	}
	is_int(o.rc, 0, "the suite ran");
	is_int((long long)o.n, 6, "six gemm tests");
	r = find(&o, "gemm.fp32");
	ok(r && r->status == BENCH_MEASURED, "gemm.fp32 measured (%s)", r ? r->why : "none");
	if (r && r->status == BENCH_MEASURED) {
		ok(fabs(r->best / 40000 - 1) < 0.01,
		   "gemm.fp32 at the fastest algorithm's 40 TFLOP/s "
		   "within 1 %% (%.1f GFLOP/s)",
		   r->best);
		ok(strstr(r->note, "#2 of 4") != NULL,
		   "the note names the heuristic's #2 of 4 as picked (%s)", r->note);
		ok(r->nextra >= 1 && !strcmp(r->extra[0].name, "heuristic") &&
		           fabs(r->extra[0].value / 10000 - 1) < 0.01,
		   "the heuristic's own pick is beside it at 10 TFLOP/s");
		ok(strstr(r->note, "4.00x its own pick") != NULL, "and how much faster: 4.00x");
	}
	r = find(&o, "gemm.fp64");
	ok(r && r->status == BENCH_MEASURED && fabs(r->best / 3000 - 1) < 0.01 &&
	           strstr(r->note, "#3 of 4"),
	   "gemm.fp64: its own rates, the third algorithm at 3 TFLOP/s (%s; %s)", r ? r->note : "",
	   r ? r->why : "");
	for (const char *const *t = (const char *const[]){ "gemm.tf32", "gemm.fp16", "gemm.bf16",
	                                                   "gemm.fp8", NULL };
	     *t; t++) {
		r = find(&o, *t);
		ok(r && r->status == BENCH_MEASURED && fabs(r->best / 40000 - 1) < 0.01,
		   "%s measured and verified at 40 TFLOP/s (%s)", *t, r ? r->why : "none");
	}
}

static void
test_corrupt(void)
{
	struct outcome o;
	const struct bench_result *r;
	/* the fastest algorithm (the second) flips an exponent bit of C[0, 0] */
	static const char lt[] = "algos = 3\ntflops = 10 40 20\ncorrupt = 1 0\n";

	if (run_case("corrupt", h100, lt, lt_lib, &o)) {
		ok(0, "the child ran the gemm tests");
		return;
	}
	for (const char *const *t = (const char *const[]){ "gemm.fp32", "gemm.bf16", "gemm.fp16",
	                                                   "gemm.fp64", NULL };
	     *t; t++) {
		r = find(&o, *t);
		ok(r && r->status == BENCH_WRONG && strstr(r->why, "C[0,0]"),
		   "%s: the corrupted element is a wrong result (%s)", *t, r ? r->why : "none");
	}
}

static void
test_unsupported(void)
{
	struct outcome o;
	const struct bench_result *r;

	if (run_case("unsup", h100, "unsupported = fp8 tf32\n", lt_lib, &o) == 0) {
		r = find(&o, "gemm.fp8");
		ok(r && r->status == BENCH_UNSUPPORTED &&
		           strstr(r->why, "CUBLAS_STATUS_NOT_SUPPORTED (15)"),
		   "a type the library lacks is unsupported, saying so (%s)", r ? r->why : "none");
		r = find(&o, "gemm.fp32");
		ok(r && r->status == BENCH_MEASURED, "the others still run");
	} else {
		ok(0, "the child ran the gemm tests");
	}
	if (run_case("missing", "[device]\ncompute_capability = 8.6\n", "",
	             "/nonexistent/libcublasLt.so.13", &o) == 0) {
		r = find(&o, "gemm.fp32");
		ok(r && r->status == BENCH_UNSUPPORTED && strstr(r->why, "cannot load") &&
		           strstr(r->why, "GPUSCOPE_CUBLASLT"),
		   "a missing library is unsupported with the reason (%s)", r ? r->why : "none");
		r = find(&o, "gemm.fp8");
		ok(r && r->status == BENCH_UNSUPPORTED && strstr(r->why, "8.9"),
		   "FP8 below compute capability 8.9 is unsupported (%s)", r ? r->why : "none");
	} else {
		ok(0, "the child ran the gemm tests");
	}
	if (run_case("stub", h100, "", lt_stub, &o) == 0) {
		r = find(&o, "gemm.bf16");
		ok(r && r->status == BENCH_UNSUPPORTED && strstr(r->why, "stub"),
		   "the toolkit's stub is refused (%s)", r ? r->why : "none");
	} else {
		ok(0, "the child ran the gemm tests");
	}
	if (run_case("nolt", h100, "", NULL, &o) == 0) {
		r = find(&o, "gemm.bf16");
		ok(r && r->status == BENCH_UNSUPPORTED && strstr(r->why, "fake"),
		   "over the fake driver, no library is searched for unless named (%s)",
		   r ? r->why : "none");
	} else {
		ok(0, "the child ran the gemm tests");
	}
}

/* the host side: inputs exact in their type, the reference, the decoders */
static void
test_host(void)
{
	unsigned char buf[16];
	double tol, v;

	for (int t = 0; t < BG_NTYPES; t++) {
		bool in_range = true;

		for (uint64_t i = 0; i < 1000; i++) {
			v = bench_gemm_value(t, 0, i);
			in_range &= v >= -1 && v <= 1;
		}
		ok(in_range, "%s inputs lie in [-1, 1]", bench_gemm_type_name(t));
	}
	/* fp16 1.0 and -0.5, bf16 and fp8 by their bits */
	memcpy(buf, (uint16_t[]){ 0x3c00 }, 2);
	is_dbl(bench_gemm_decode(BG_FP16, buf), 1.0, 0, "binary16 0x3c00 is 1");
	memcpy(buf, (uint16_t[]){ 0x3f80 }, 2);
	is_dbl(bench_gemm_decode(BG_FP8, buf), 1.0, 0, "bfloat16 0x3f80 (fp8's output) is 1");
	for (uint64_t i = 0; i < 64; i++) {
		uint8_t q;
		uint16_t h;

		bench_gemm_fill(BG_FP8, 1, i, 1, &q);
		bench_gemm_fill(BG_FP16, 1, i, 1, &h);
		memcpy(buf, &h, 2);
		if (bench_gemm_decode(BG_FP16, buf) != bench_gemm_value(BG_FP16, 1, i)) {
			ok(0, "fp16 element %llu round-trips", (unsigned long long)i);
			return;
		}
		/* e4m3: 1.f x 2^(e - 7) */
		int e = q >> 3 & 15, f = q & 7;
		double d = e ? ldexp(8 + f, e - 10) : ldexp(f, -9);
		if ((q & 0x80 ? -d : d) != bench_gemm_value(BG_FP8, 1, i)) {
			ok(0, "fp8 element %llu encodes exactly", (unsigned long long)i);
			return;
		}
	}
	ok(1, "fp16 and fp8 inputs encode exactly");
	v = bench_gemm_reference(BG_FP32, 4, 1, 2, &tol);
	{
		double want = 0;

		for (unsigned l = 0; l < 4; l++)
			want += bench_gemm_value(BG_FP32, 0, 1 + l * 4) *
			        bench_gemm_value(BG_FP32, 1, l + 2 * 4);
		is_dbl(v, want, 0, "the reference is the column-major product");
		ok(tol > 0 && tol < 1e-5, "fp32's tolerance is small (%g)", tol);
	}
}

int
main(void)
{
	const char *o = getenv("O") ? getenv("O") : "build";

	test_host();
	snprintf(cuda_lib, sizeof(cuda_lib), "%s/fakecuda/libcuda.so.1", o);
	snprintf(lt_lib, sizeof(lt_lib), "%s/fakecublaslt/libcublasLt.so.13", o);
	snprintf(lt_stub, sizeof(lt_stub), "%s/fakecublaslt/stubs/libcublasLt.so.13", o);
	if (access(cuda_lib, R_OK) || access(lt_lib, R_OK) || access(lt_stub, R_OK)) {
		skip_missing("the fake libcuda.so.1 and libcublasLt.so.13 are not built");
		return done_testing();
	}
	if (!mkdtemp(tmpdir)) {
		ok(0, "mkdtemp");
		return done_testing();
	}
	/* a relative path would be the loader's search, not the file */
	{
		static char abs1[1024], abs2[1024], abs3[1024];

		if (realpath(cuda_lib, abs1))
			snprintf(cuda_lib, sizeof(cuda_lib), "%s", abs1);
		if (realpath(lt_lib, abs2))
			snprintf(lt_lib, sizeof(lt_lib), "%s", abs2);
		if (realpath(lt_stub, abs3))
			snprintf(lt_stub, sizeof(lt_stub), "%s", abs3);
	}
	test_best_and_rate();
	test_corrupt();
	test_unsupported();
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			diag("could not remove %s", tmpdir);
	}
	return done_testing();
}
