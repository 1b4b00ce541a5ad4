/*
 * bench/opencl.h on PoCL (Debian's CPU OpenCL, taken with take_cpu): the
 * naive and tiled kernels, kernel only and end to end, equal the CPU's
 * naive result at sizes that are and are not multiples of the tile; CL
 * error codes are named, and a buffer too large fails as one line naming
 * clCreateBuffer and its code; a missing loader and a CPU device left out
 * say why. Without PoCL the device cases are a skip (a failure under
 * GPUSCOPE_NO_SKIP=1).
 */
#include <string.h>

#include "bench/matmul.h"
#include "bench/opencl.h"
#include "core/err.h"
#include "core/strbuf.h"
#include "harness.h"

static const size_t sizes[] = { 1, 7, 15, 16, 17, 33, 100 };

static void
kernels_agree(struct bench_cl_ctx *ctx, const char *dev)
{
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s];
		float *a = bench_matrix_alloc(n), *b = bench_matrix_alloc(n);
		float *ref = bench_matrix_alloc(n), *c = bench_matrix_alloc(n);
		struct bench_norms nm;
		struct bench_check chk;
		struct err err = ERR_INIT;

		bench_matrix_fill(a, n, 21);
		bench_matrix_fill(b, n, 22);
		bench_norms_init(&nm, n, a, b);
		bench_naive(n, a, b, ref, NULL);
		ok(bench_cl_load(ctx, n, a, b, &err) == 0, "%s: load at %zu (%s)", dev, n, err.msg);
		for (int k = 0; k < BENCH_CL_NKERNELS; k++) {
			const char *name = bench_cl_kernel_name((enum bench_cl_kernel)k);

			memset(c, 0xff, n * n * sizeof(float)); /* NaNs: all must be written */
			ok(bench_cl_run_kernel(ctx, (enum bench_cl_kernel)k, &err) >= 0 &&
			           bench_cl_read(ctx, c, &err) == 0,
			   "%s: %s at %zu runs (%s)", dev, name, n, err.msg);
			bench_compare(&nm, c, ref, &chk);
			ok(chk.ok && chk.checked == n * n,
			   "%s: %s at %zu = naive (%zu wrong, ratio %.3g)", dev, name, n, chk.bad,
			   chk.max_ratio);
			memset(c, 0xff, n * n * sizeof(float));
			ok(bench_cl_run_e2e(ctx, (enum bench_cl_kernel)k, n, a, b, c, &err) >= 0,
			   "%s: %s end to end at %zu runs (%s)", dev, name, n, err.msg);
			bench_compare(&nm, c, ref, &chk);
			ok(chk.ok, "%s: %s end to end at %zu = naive (%zu wrong)", dev, name, n,
			   chk.bad);
			/* one wrong element is caught */
			c[n * n - 1] += 1.0f;
			bench_compare(&nm, c, ref, &chk);
			ok(!chk.ok && chk.bad == 1, "%s: a wrong element of %s at %zu is caught",
			   dev, name, n);
		}
		bench_cl_unload(ctx);
		bench_norms_release(&nm);
		bench_matrix_free(a);
		bench_matrix_free(b);
		bench_matrix_free(ref);
		bench_matrix_free(c);
	}
}

int
main(void)
{
	struct bench_cl cl;
	char buf[32];
	int nd;

	is_str(bench_cl_error_name(-5, buf, sizeof(buf)), "CL_OUT_OF_RESOURCES", "-5 is named");
	is_str(bench_cl_error_name(-4, buf, sizeof(buf)), "CL_MEM_OBJECT_ALLOCATION_FAILURE",
	       "-4 is named");
	is_str(bench_cl_error_name(-9999, buf, sizeof(buf)), "CL error -9999", "unknown codes too");

	ok(bench_cl_open(&cl, "/nonexistent/libOpenCL.so.1", true) == -1 && !cl.loaded &&
	           strstr(cl.reason, "cannot load /nonexistent/libOpenCL.so.1") &&
	           strstr(cl.reason, "apt install ocl-icd-libopencl1"),
	   "a missing loader says why and what to install: %s", cl.reason);
	bench_cl_close(&cl);

	nd = bench_cl_open(&cl, NULL, false);
	if (nd >= 0 && cl.cpu_skipped)
		ok(strstr(cl.reason, "--opencl-cpu") || nd > 0,
		   "CPU devices are left out unless asked for (%u skipped)", cl.cpu_skipped);
	bench_cl_close(&cl);

	nd = bench_cl_open(&cl, NULL, true);
	if (nd < 0) {
		skip_missing(
		        "no OpenCL loader (Debian: apt install ocl-icd-libopencl1 pocl-opencl-icd)");
		return done_testing();
	}
	for (size_t d = 0; d < cl.ndev; d++) {
		const struct bench_cl_device *dev = &cl.dev[d];
		struct err err = ERR_INIT;
		struct strbuf log = STRBUF_INIT;
		struct bench_cl_ctx *ctx;
		char label[300];

		if (strcmp(dev->type, "cpu"))
			continue; /* a real GPU is measured by bench, not here */
		snprintf(label, sizeof(label), "%s (%s)", dev->name, dev->platform);
		ok(dev->compute_units > 0 && dev->tile >= 8, "%s: %u compute units, tile %u", label,
		   dev->compute_units, dev->tile);
		ctx = bench_cl_ctx_new(&cl, d, &err, &log);
		ok(ctx != NULL, "%s: the program builds (%s%s)", label, err.msg, log.buf);
		if (ctx)
			kernels_agree(ctx, label);
		/* a buffer over the device's largest: one line naming the call and the code */
		if (ctx && dev->max_alloc && 46340ULL * 46340 * sizeof(float) > dev->max_alloc) {
			err_clear(&err);
			ok(bench_cl_load(ctx, 46340, NULL, NULL, &err) < 0 &&
			           !strncmp(err.msg, "clCreateBuffer: CL_", 19),
			   "%s: a buffer over %llu bytes fails as: %s", label, dev->max_alloc,
			   err.msg);
		}
		bench_cl_ctx_free(ctx);
		strbuf_release(&log);
		bench_cl_close(&cl);
		return done_testing();
	}
	skip_missing("no CPU OpenCL device (Debian: apt install pocl-opencl-icd)");
	bench_cl_close(&cl);
	return done_testing();
}
