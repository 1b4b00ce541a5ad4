/*
 * The system BLAS's cblas_sgemm, loaded with dlopen (bench/matmul.h): no
 * BLAS is needed to build gpuscope or to run it, and the one the machine
 * has (OpenBLAS, BLIS, the reference BLAS) is the one measured.
 */
#include "bench/matmul.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"

#define CBLAS_ROW_MAJOR 101
#define CBLAS_NO_TRANS  111

static const char *const blas_libs[] = {
	"libopenblas.so.0",
	"libblis.so.4",
	"libcblas.so.3",
	"libblas.so.3",
};

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);

static void
describe(struct bench_blas *blas, unsigned threads)
{
	void *h = blas->handle;
	char *(*get_config)(void) = (char *(*)(void))dlsym(h, "openblas_get_config");
	char *(*get_core)(void) = (char *(*)(void))dlsym(h, "openblas_get_corename");
	void (*set_threads)(int) = (void (*)(int))dlsym(h, "openblas_set_num_threads");
	int (*get_threads)(void) = (int (*)(void))dlsym(h, "openblas_get_num_threads");
	Dl_info info;

	if (dladdr((void *)blas->sgemm, &info) && info.dli_fname) {
		char real[PATH_MAX];

		str_copy(blas->path, sizeof(blas->path),
		         realpath(info.dli_fname, real) ? real : info.dli_fname);
	}
	if (get_config) {
		str_copy(blas->name, sizeof(blas->name), "OpenBLAS");
		str_copy(blas->config, sizeof(blas->config), get_config());
		if (get_core)
			str_copy(blas->corename, sizeof(blas->corename), get_core());
	} else if (dlsym(h, "bli_info_get_version_str")) {
		const char *(*ver)(void) =
		        (const char *(*)(void))dlsym(h, "bli_info_get_version_str");

		str_copy(blas->name, sizeof(blas->name), "BLIS");
		snprintf(blas->config, sizeof(blas->config), "BLIS %s", ver());
		set_threads = (void (*)(int))dlsym(h, "bli_thread_set_num_threads");
		get_threads = NULL;
	} else if (strstr(blas->path, "/blas/libblas.so") ||
	           strstr(blas->path, "/blas/libcblas.so")) {
		/* Debian's libblas3: netlib's Fortran loops, built portably */
		str_copy(blas->name, sizeof(blas->name), "reference BLAS (netlib, not optimised)");
	} else if (dlsym(h, "MKL_Set_Num_Threads")) {
		str_copy(blas->name, sizeof(blas->name), "MKL");
	} else {
		str_copy(blas->name, sizeof(blas->name), "unknown");
	}
	if (threads && set_threads) {
		set_threads((int)threads);
		blas->threads = (int)threads;
	}
	if (get_threads)
		blas->threads = get_threads();
}

int
bench_blas_open(struct bench_blas *blas, const char *path, unsigned threads)
{
	const char *one[1] = { path };
	const char *const *libs = path ? one : blas_libs;
	size_t nlibs = path ? 1 : sizeof(blas_libs) / sizeof(blas_libs[0]);
	struct strbuf why = STRBUF_INIT;

	memset(blas, 0, sizeof(*blas));
	for (size_t i = 0; i < nlibs; i++) {
		void *h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
		void *f;

		if (!h)
			continue;
		f = dlsym(h, "cblas_sgemm");
		if (!f) {
			strbuf_addf(&why, "%s%s has no cblas_sgemm", why.len ? ", " : "", libs[i]);
			dlclose(h);
			continue;
		}
		blas->handle = h;
		blas->sgemm = (sgemm_fn)f;
		blas->loaded = true;
		describe(blas, threads);
		strbuf_release(&why);
		return 0;
	}
	if (path)
		snprintf(blas->reason, sizeof(blas->reason), "%s: %s", path,
		         why.len ? why.buf : "cannot be loaded");
	else
		snprintf(
		        blas->reason, sizeof(blas->reason),
		        "no BLAS with cblas_sgemm found (tried libopenblas.so.0, libblis.so.4, "
		        "libcblas.so.3, libblas.so.3%s%s); Debian, Ubuntu: apt install libopenblas0",
		        why.len ? "; " : "", why.buf);
	strbuf_release(&why);
	return -1;
}

void
bench_blas_close(struct bench_blas *blas)
{
	/* not dlclose()d: OpenBLAS's threads may still be winding down */
	blas->loaded = false;
	blas->sgemm = NULL;
}

void
bench_blas_run(const struct bench_blas *blas, size_t n, const float *a, const float *b, float *c)
{
	int m = n < INT_MAX ? (int)n : INT_MAX;

	blas->sgemm(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, CBLAS_NO_TRANS, m, m, m, 1.0f, a, m, b, m,
	            0.0f, c, m);
}
