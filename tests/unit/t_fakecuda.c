/*
 * The fake libcuda.so.1 (tests/fakecuda/, docs/fake-cuda.md) driven through
 * dlopen as gpuscope drives NVIDIA's: devices, contexts, PTX modules,
 * memory, launches through kernelParams with their results checked against
 * dev.h's definitions computed here, events timed at the modelled rates,
 * stream order and the spin kernel, each fault of the scenarios, the call
 * log, and the ABI check against cuda.h where the toolkit's header is. Each
 * scenario runs in a child process (the library reads its scenario once).
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/dev.h"
#include "harness.h"

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent;

static struct {
	CUresult (*Init)(unsigned);
	CUresult (*DriverGetVersion)(int *);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetName)(char *, int, CUdevice);
	CUresult (*DeviceGetUuid_v2)(unsigned char *, CUdevice);
	CUresult (*DeviceTotalMem_v2)(size_t *, CUdevice);
	CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
	CUresult (*DeviceGetPCIBusId)(char *, int, CUdevice);
	CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*DevicePrimaryCtxRelease_v2)(CUdevice);
	CUresult (*CtxCreate_v2)(CUcontext *, unsigned, CUdevice);
	CUresult (*CtxDestroy_v2)(CUcontext);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*CtxSynchronize)(void);
	CUresult (*ModuleLoadData)(CUmodule *, const void *);
	CUresult (*ModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
	                         unsigned, unsigned, CUstream, void **, void **);
	CUresult (*MemGetInfo_v2)(size_t *, size_t *);
	CUresult (*MemAlloc_v2)(CUdeviceptr *, size_t);
	CUresult (*MemFree_v2)(CUdeviceptr);
	CUresult (*MemHostAlloc)(void **, size_t, unsigned);
	CUresult (*MemFreeHost)(void *);
	CUresult (*MemHostGetDevicePointer_v2)(CUdeviceptr *, void *, unsigned);
	CUresult (*MemcpyHtoD_v2)(CUdeviceptr, const void *, size_t);
	CUresult (*MemcpyDtoH_v2)(void *, CUdeviceptr, size_t);
	CUresult (*MemcpyHtoDAsync_v2)(CUdeviceptr, const void *, size_t, CUstream);
	CUresult (*MemsetD32_v2)(CUdeviceptr, unsigned, size_t);
	CUresult (*StreamCreate)(CUstream *, unsigned);
	CUresult (*StreamDestroy_v2)(CUstream);
	CUresult (*StreamQuery)(CUstream);
	CUresult (*StreamSynchronize)(CUstream);
	CUresult (*EventCreate)(CUevent *, unsigned);
	CUresult (*EventRecord)(CUevent, CUstream);
	CUresult (*EventSynchronize)(CUevent);
	CUresult (*EventElapsedTime_v2)(float *, CUevent, CUevent);
	CUresult (*GetErrorName)(CUresult, const char **);
	CUresult (*GetErrorString)(CUresult, const char **);
	CUresult (*GetProcAddress_v2)(const char *, void **, int, unsigned long long, int *);
} cu;

static void *lib;
static char lib_path[512];

static int
load(void)
{
	static const char *const names[] = {
		"cuInit",
		"cuDriverGetVersion",
		"cuDeviceGetCount",
		"cuDeviceGet",
		"cuDeviceGetName",
		"cuDeviceGetUuid_v2",
		"cuDeviceTotalMem_v2",
		"cuDeviceGetAttribute",
		"cuDeviceGetPCIBusId",
		"cuDevicePrimaryCtxRetain",
		"cuDevicePrimaryCtxRelease_v2",
		"cuCtxCreate_v2",
		"cuCtxDestroy_v2",
		"cuCtxSetCurrent",
		"cuCtxSynchronize",
		"cuModuleLoadData",
		"cuModuleLoadDataEx",
		"cuModuleGetFunction",
		"cuLaunchKernel",
		"cuMemGetInfo_v2",
		"cuMemAlloc_v2",
		"cuMemFree_v2",
		"cuMemHostAlloc",
		"cuMemFreeHost",
		"cuMemHostGetDevicePointer_v2",
		"cuMemcpyHtoD_v2",
		"cuMemcpyDtoH_v2",
		"cuMemcpyHtoDAsync_v2",
		"cuMemsetD32_v2",
		"cuStreamCreate",
		"cuStreamDestroy_v2",
		"cuStreamQuery",
		"cuStreamSynchronize",
		"cuEventCreate",
		"cuEventRecord",
		"cuEventSynchronize",
		"cuEventElapsedTime_v2",
		"cuGetErrorName",
		"cuGetErrorString",
		"cuGetProcAddress_v2",
	};
	void **slot = (void **)&cu;

	_Static_assert(sizeof(cu) == sizeof(names) / sizeof(names[0]) * sizeof(void *), "cu");
	if (!(lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL))) {
		ok(0, "dlopen %s: %s", lib_path, dlerror());
		return -1;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *p = dlsym(lib, names[i]);
		if (!p) {
			ok(0, "dlsym %s", names[i]);
			return -1;
		}
		memcpy(&slot[i], &p, sizeof(p));
	}
	return 0;
}

/*
 * Run fn in a child with the scenario (and environment) given; its TAP
 * lines go to stdout, its counts come back through a pipe.
 */
static void
in_child(const char *scenario, const char *realtime, const char *logpath, void (*fn)(void))
{
	int fds[2], counts[2] = { 0, 0 }, status;
	pid_t pid;

	fflush(stdout);
	if (pipe(fds) || (pid = fork()) < 0) {
		ok(0, "fork for %s", scenario);
		return;
	}
	if (pid == 0) {
		close(fds[0]);
		if (scenario)
			setenv("GPUSCOPE_FAKECUDA_SCENARIO", scenario, 1);
		else
			unsetenv("GPUSCOPE_FAKECUDA_SCENARIO");
		if (realtime)
			setenv("GPUSCOPE_FAKECUDA_REALTIME", realtime, 1);
		if (logpath)
			setenv("GPUSCOPE_FAKECUDA_LOG", logpath, 1);
		if (load() == 0)
			fn();
		counts[0] = harness_n;
		counts[1] = harness_failed;
		fflush(stdout);
		if (write(fds[1], counts, sizeof(counts)) != (ssize_t)sizeof(counts))
			_exit(3);
		_exit(0);
	}
	close(fds[1]);
	ssize_t got = read(fds[0], counts, sizeof(counts));
	close(fds[0]);
	waitpid(pid, &status, 0);
	if (got == (ssize_t)sizeof(counts)) {
		harness_n = counts[0];
		harness_failed = counts[1];
	}
	ok(got == (ssize_t)sizeof(counts) && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "%s: the child ran to its end", scenario ? scenario : "no scenario");
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* dev.h's signatures, written here from dev.h again */
static const struct {
	const char *name, *params;
} sigs[] = {
	{ "gs_empty", "i" },
	{ "gs_spin", "pu" },
	{ "gs_stream_init", "pppfffu" },
	{ "gs_stream_triad", "pppfu" },
	{ "gs_stream_dot", "pppu" },
	{ "gs_fma_f32", "pffi" },
	{ "gs_fma_f64", "pffi" },
	{ "gs_fma_f16", "pffi" },
	{ "gs_fma_i32", "pffi" },
	{ "gs_dp4a_i8", "pffi" },
	{ "gs_mma_f16", "pfi" },
	{ "gs_copy_u4", "ppu" },
	{ "gs_matmul_tiled", "pppi" },
	{ "gs_compare_f32", "ppufp" },
	{ "gs_mem_fill", "puwi" },
	{ "gs_mem_check", "puwipp" },
};

/* a PTX text with an entry per kernel of sigs (bodies empty: the fake reads the declarations) */
static char *
ptx(const char *version, const char *target, const char *only)
{
	static char buf[16384];
	size_t n = 0;

	n += (size_t)snprintf(
	        buf + n, sizeof(buf) - n,
	        "//\n// a test's PTX\n//\n.version %s\n.target %s\n.address_size 64\n\n"
	        "// .entry gs_commented_out(\n",
	        version, target);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		if (only && strcmp(only, sigs[i].name))
			continue;
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, ".visible .entry %s(\n",
		                      sigs[i].name);
		for (size_t k = 0; sigs[i].params[k]; k++) {
			char c = sigs[i].params[k];
			const char *t = c == 'p' || c == 'u' ? ".u64"
			                : c == 'f'           ? ".f32"
			                : c == 'd'           ? ".f64"
			                                     : ".u32";
			n += (size_t)snprintf(buf + n, sizeof(buf) - n,
			                      "\t.param %s%s %s_param_%zu%s\n", t,
			                      c == 'p' ? " .ptr .align 4" : "", sigs[i].name, k,
			                      sigs[i].params[k + 1] ? "," : "");
		}
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, ")\n{\n\tret;\n}\n\n");
	}
	return buf;
}

static CUmodule mod;

static CUfunction
fn(const char *name)
{
	CUfunction f = NULL;

	if (cu.ModuleGetFunction(&f, mod, name) != 0)
		ok(0, "cuModuleGetFunction %s", name);
	return f;
}

static CUresult
launch(const char *name, unsigned gx, unsigned gy, unsigned bx, unsigned by, CUstream s,
       void **params)
{
	return cu.LaunchKernel(fn(name), gx, gy, 1, bx, by, 1, 0, s, params, NULL);
}

/* elapsed seconds between two events around what run() queues on s */
static double
timed(CUstream s, CUresult *r, void (*run)(void *), void *arg)
{
	CUevent a, b;
	float ms = -1;

	cu.EventCreate(&a, 0);
	cu.EventCreate(&b, 0);
	cu.EventRecord(a, s);
	run(arg);
	cu.EventRecord(b, s);
	*r = cu.EventSynchronize(b);
	if (*r == 0)
		*r = cu.EventElapsedTime_v2(&ms, a, b);
	return ms / 1e3;
}

/* a context of device d, current, with the test module loaded */
static int
setup(CUdevice d, CUcontext *ctx)
{
	int r;

	if ((r = cu.Init(0)) != 0 || (r = cu.DevicePrimaryCtxRetain(ctx, d)) != 0 ||
	    (r = cu.CtxSetCurrent(*ctx)) != 0 ||
	    (r = cu.ModuleLoadData(&mod, ptx("8.0", "sm_80", NULL))) != 0) {
		ok(0, "set up device %d: %d", d, r);
		return -1;
	}
	return 0;
}

/* the chains of dev.h, for one work-item */
static float
chain_f32(float seed, float c, int iters)
{
	float x[BENCH_FMA_CHAINS], s = 0;
	for (int j = 0; j < BENCH_FMA_CHAINS; j++)
		x[j] = seed + j / 64.0f;
	for (int t = 0; t < iters * BENCH_FMA_UNROLL; t++)
		for (int j = 0; j < BENCH_FMA_CHAINS; j++)
			x[j] = fmaf(x[j], x[j], c);
	for (int j = 0; j < BENCH_FMA_CHAINS; j++)
		s += x[j];
	return s;
}

#ifdef __FLT16_MAX__
static float
chain_f16(float seed, float c, int iters)
{
	_Float16 x[BENCH_FMA_CHAINS], s = 0, ch = (_Float16)c;
	for (int j = 0; j < BENCH_FMA_CHAINS; j++)
		x[j] = (_Float16)(seed + j / 64.0f);
	for (int t = 0; t < iters * BENCH_FMA_UNROLL; t++)
		for (int j = 0; j < BENCH_FMA_CHAINS; j++)
			x[j] = (_Float16)((double)x[j] * x[j] +
			                  ch); /* exact in double: one rounding */
	for (int j = 0; j < BENCH_FMA_CHAINS; j++)
		s = (_Float16)((double)s + x[j]);
	return (float)s;
}
#endif

static float
chain_int(bool dp4a, float seed, float c, int iters)
{
	uint32_t x[BENCH_FMA_CHAINS], s = 0, cc = (uint32_t)(int32_t)(c * 64);
	for (int j = 0; j < BENCH_FMA_CHAINS; j++)
		x[j] = (uint32_t)(int32_t)(seed * 64) + (uint32_t)j;
	for (int t = 0; t < iters * BENCH_FMA_UNROLL; t++)
		for (int j = 0; j < BENCH_FMA_CHAINS; j++) {
			if (!dp4a) {
				x[j] = x[j] * x[j] + cc;
				continue;
			}
			int32_t sum = 0;
			for (int k = 0; k < 4; k++)
				sum += (int8_t)(x[j] >> (8 * k)) * (j + 1);
			x[j] += (uint32_t)sum;
		}
	for (int j = 0; j < BENCH_FMA_CHAINS; j++)
		s += x[j];
	return (float)(int32_t)s;
}

/* the H100 scenario's rates (tests/fakecuda/scenarios/h100.scn) */
#define MEM_BPS    3000e9
#define H2D_PINNED 55e9
#define LAUNCH_S   2.5e-6
#define F32_RATE   60e12

struct triad_args {
	CUdeviceptr a, b, c;
	float s;
	uint64_t n;
};

static void
run_triad(void *arg)
{
	struct triad_args *t = arg;
	void *p[] = { &t->a, &t->b, &t->c, &t->s, &t->n };
	launch("gs_stream_triad", 256, 1, 256, 1, NULL, p);
}

static void
t_no_scenario(void)
{
	int n = -1;

	is_int(cu.DeviceGetCount(&n), 3, "before cuInit: CUDA_ERROR_NOT_INITIALIZED");
	is_int(cu.Init(0), 100, "no scenario: cuInit says CUDA_ERROR_NO_DEVICE");
}

static void
t_init_fault(void)
{
	int n = -1;

	is_int(cu.Init(0), 803, "init_error: cuInit answers CUDA_ERROR_SYSTEM_DRIVER_MISMATCH");
	is_int(cu.DeviceGetCount(&n), 803, "and so does every call after it");
}

static void
t_h100(void)
{
	int v = 0, ndev = 0;
	char name[256], bus[32];
	unsigned char uuid[16];
	size_t total = 0, free_b = 0;
	CUcontext ctx;
	CUresult r;
	const char *s;

	is_int(cu.Init(0), 0, "cuInit");
	cu.DriverGetVersion(&v);
	is_int(v, 13000, "cuDriverGetVersion");
	cu.DeviceGetCount(&ndev);
	is_int(ndev, 1, "one device");
	cu.DeviceGetName(name, sizeof(name), 0);
	is_str(name, "NVIDIA H100 80GB HBM3", "cuDeviceGetName");
	cu.DeviceGetUuid_v2(uuid, 0);
	ok(uuid[0] == 0x5f && uuid[1] == 0x0c && uuid[15] == 0xab,
	   "cuDeviceGetUuid_v2: the scenario's bytes");
	cu.DeviceGetPCIBusId(bus, sizeof(bus), 0);
	is_str(bus, "0000:17:00.0", "cuDeviceGetPCIBusId");
	cu.DeviceTotalMem_v2(&total, 0);
	is_int(total, 256 << 20, "cuDeviceTotalMem_v2");
	static const struct {
		int attr, want;
		const char *what;
	} attrs[] = {
		{ 16, 132, "MULTIPROCESSOR_COUNT" },
		{ 13, 1980000, "CLOCK_RATE (kHz)" },
		{ 36, 2619000, "MEMORY_CLOCK_RATE (kHz)" },
		{ 37, 5120, "GLOBAL_MEMORY_BUS_WIDTH" },
		{ 38, 50 << 20, "L2_CACHE_SIZE" },
		{ 75, 9, "COMPUTE_CAPABILITY_MAJOR" },
		{ 76, 0, "COMPUTE_CAPABILITY_MINOR" },
		{ 1, 1024, "MAX_THREADS_PER_BLOCK" },
		{ 33, 0x17, "PCI_BUS_ID" },
		{ 19, 1, "CAN_MAP_HOST_MEMORY" },
		{ 41, 1, "UNIFIED_ADDRESSING" },
		{ 40, 3, "ASYNC_ENGINE_COUNT" },
	};
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		v = -1;
		cu.DeviceGetAttribute(&v, attrs[i].attr, 0);
		is_int(v, attrs[i].want, "attribute %s", attrs[i].what);
	}
	is_int(cu.DeviceGetAttribute(&v, 100000, 0), 1,
	       "an unknown attribute: CUDA_ERROR_INVALID_VALUE");
	is_int(cu.DeviceGetAttribute(&v, 16, 1), 101, "device 1: CUDA_ERROR_INVALID_DEVICE");

	cu.GetErrorName(2, &s);
	is_str(s, "CUDA_ERROR_OUT_OF_MEMORY", "cuGetErrorName");
	cu.GetErrorString(2, &s);
	is_str(s, "out of memory", "cuGetErrorString");
	cu.GetErrorString(719, &s);
	is_str(s, "unspecified launch failure", "cuGetErrorString 719");
	is_int(cu.GetErrorName(12345, &s), 1, "an unknown code: CUDA_ERROR_INVALID_VALUE");

	void *p = NULL;
	int st = -1;
	r = cu.GetProcAddress_v2("cuMemAlloc", &p, 13000, 0, &st);
	ok(r == 0 && st == 0 && p == dlsym(lib, "cuMemAlloc_v2"),
	   "cuGetProcAddress: cuMemAlloc is cuMemAlloc_v2");
	r = cu.GetProcAddress_v2("cuCtxCreate", &p, 12000, 0, &st);
	ok(r == 0 && p == dlsym(lib, "cuCtxCreate_v3"),
	   "cuGetProcAddress: cuCtxCreate at 12.0 is _v3");
	r = cu.GetProcAddress_v2("cuEventElapsedTime", &p, 13000, 0, &st);
	ok(r == 0 && p == dlsym(lib, "cuEventElapsedTime_v2"),
	   "cuGetProcAddress: cuEventElapsedTime at 13.0 is _v2");
	r = cu.GetProcAddress_v2("cuMemAlloc", &p, 2000, 0, &st);
	ok(r == 500 && st == 2 && !p,
	   "cuGetProcAddress: too old a version: VERSION_NOT_SUFFICIENT");
	r = cu.GetProcAddress_v2("cuGraphLaunch", &p, 13000, 0, &st);
	ok(r == 500 && st == 1, "cuGetProcAddress: a name not implemented: CUDA_ERROR_NOT_FOUND");

	if (cu.DevicePrimaryCtxRetain(&ctx, 0) || cu.CtxSetCurrent(ctx)) {
		ok(0, "primary context");
		return;
	}
	/* modules */
	CUmodule m;
	char log[256] = "";
	int opts[] = { 5, 6 };
	void *vals[] = { log, (void *)(uintptr_t)sizeof(log) };
	is_int(cu.ModuleLoadData(&m, "not ptx"), 218,
	       "text without .version: CUDA_ERROR_INVALID_PTX");
	is_int(cu.ModuleLoadData(&m, ptx("8.0", "sm_100", NULL)), 209,
	       ".target sm_100 on a 9.0 device: CUDA_ERROR_NO_BINARY_FOR_GPU");
	is_int(cu.ModuleLoadData(&m, ptx("8.0", "sm_80a", NULL)), 209,
	       ".target sm_80a on a 9.0 device: CUDA_ERROR_NO_BINARY_FOR_GPU");
	is_int(cu.ModuleLoadData(&m, ptx("9.9", "sm_80", NULL)), 222,
	       ".version 9.9: CUDA_ERROR_UNSUPPORTED_PTX_VERSION");
	is_int(cu.ModuleLoadDataEx(&m, ptx("8.0", "sm_70", "gs_mma_f16"), 2, opts, vals), 218,
	       "mma under .target sm_70: CUDA_ERROR_INVALID_PTX");
	ok(strstr(log, "gs_mma_f16") != NULL, "and the JIT error log says why: %s", log);
	is_int(cu.ModuleLoadData(
	               &m,
	               ".version 8.0\n.target sm_80\n.visible .entry gs_stream_triad(\n"
	               "\t.param .u64 a, .param .u64 b, .param .u64 c, .param .f32 s\n)\n{ ret; }\n"),
	       218, "gs_stream_triad with dev.h's n missing: CUDA_ERROR_INVALID_PTX");
	if (cu.ModuleLoadData(&mod, ptx("8.0", "sm_80", NULL)) != 0) {
		ok(0, "cuModuleLoadData of the test's PTX");
		return;
	}
	CUfunction f;
	is_int(cu.ModuleGetFunction(&f, mod, "gs_stream_copy"), 500,
	       "a kernel not in the module: CUDA_ERROR_NOT_FOUND");
	is_int(cu.ModuleGetFunction(&f, mod, "gs_commented_out"), 500,
	       "a commented-out .entry is none");
	is_int(cu.ModuleGetFunction(&f, mod, "gs_stream_triad"), 0, "cuModuleGetFunction");

	/* memory, stream kernels, events */
	const uint64_t N = 1 << 20;
	CUdeviceptr a, b, c, part;
	float va = 0.1f, vb = 0.2f, vc = 0.5f, sc = 0.4f;
	cu.MemGetInfo_v2(&free_b, &total);
	is_int(free_b, 256 << 20, "cuMemGetInfo_v2: all free");
	is_int(cu.MemAlloc_v2(&a, 300 << 20), 2,
	       "more than the device has: CUDA_ERROR_OUT_OF_MEMORY");
	if (cu.MemAlloc_v2(&a, N * 4) || cu.MemAlloc_v2(&b, N * 4) || cu.MemAlloc_v2(&c, N * 4) ||
	    cu.MemAlloc_v2(&part, 1024 * 4)) {
		ok(0, "cuMemAlloc_v2");
		return;
	}
	cu.MemGetInfo_v2(&free_b, &total);
	is_int(free_b, (256 << 20) - 3 * N * 4 - 4096, "cuMemGetInfo_v2: less what was taken");
	uint64_t n = N;
	void *pi[] = { &a, &b, &c, &va, &vb, &vc, &n };
	is_int(launch("gs_stream_init", 1024, 1, 256, 1, NULL, pi), 0, "gs_stream_init");
	struct triad_args ta = { a, b, c, sc, N };
	double t = timed(NULL, &r, run_triad, &ta);
	is_int(r, 0, "events around gs_stream_triad");
	is_dbl(t, LAUNCH_S + 3.0 * 4 * N / MEM_BPS, 1e-9,
	       "elapsed: launch + 3 x 4 x n / bandwidth");
	float *h = malloc(N * 4);
	cu.MemcpyDtoH_v2(h, a, N * 4);
	size_t bad = 0;
	for (uint64_t i = 0; i < N; i++)
		bad += h[i] != vb + sc * vc;
	is_int(bad, 0, "gs_stream_triad: a = b + s x c everywhere");
	void *pd[] = { &a, &b, &part, &n };
	is_int(launch("gs_stream_dot", 4, 1, 128, 1, NULL, pd), 1,
	       "gs_stream_dot in blocks of 128: CUDA_ERROR_INVALID_VALUE");
	is_int(launch("gs_stream_dot", 1024, 1, 256, 1, NULL, pd), 0, "gs_stream_dot");
	cu.MemcpyDtoH_v2(h, part, 1024 * 4);
	double dot = 0;
	for (int i = 0; i < 1024; i++)
		dot += h[i];
	is_dbl(dot, (double)N * (vb + sc * vc) * vb, 1e-3 * N,
	       "gs_stream_dot: the partials add up");

	/* launch checks */
	is_int(launch("gs_stream_triad", 1, 1, 2048, 1, NULL, (void *[]){ &a, &b, &c, &sc, &n }), 1,
	       "a block of 2048: CUDA_ERROR_INVALID_VALUE");
	is_int(cu.LaunchKernel((CUfunction)&ta, 1, 1, 1, 1, 1, 1, 0, NULL, pi, NULL), 400,
	       "an unknown function: CUDA_ERROR_INVALID_HANDLE");

	/* FMA chains */
	CUdeviceptr out;
	/* dev.h's seed and c end in the cycle 0, -1: these stay chaotic, so the values differ */
	float seed = 0.3f, cm = -1.4f;
	int iters = 20;
	cu.MemAlloc_v2(&out, 256 * 4);
	cu.MemsetD32_v2(out, 0x7fc00000, 256);
	void *pf[] = { &out, &seed, &cm, &iters };
	CUevent e0, e1;
	float ms;
	cu.EventCreate(&e0, 0);
	cu.EventCreate(&e1, 0);
	cu.EventRecord(e0, NULL);
	launch("gs_fma_f32", 2, 1, 128, 1, NULL, pf);
	cu.EventRecord(e1, NULL);
	cu.EventSynchronize(e1);
	cu.EventElapsedTime_v2(&ms, e0, e1);
	is_dbl(ms / 1e3, LAUNCH_S + (double)iters * 8 * 16 * 2 * 256 / F32_RATE, 1e-9,
	       "gs_fma_f32: launch + iters x chains x unroll x 2 x threads / rate");
	cu.MemcpyDtoH_v2(h, out, 256 * 4);
	ok(h[0] == chain_f32(seed, cm, iters) && h[255] == h[0] && h[0] != 0,
	   "gs_fma_f32: every work-item's chain (%g)", h[0]);
#ifdef __FLT16_MAX__
	launch("gs_fma_f16", 2, 1, 128, 1, NULL, pf);
	cu.MemcpyDtoH_v2(h, out, 256 * 4);
	ok(h[7] == chain_f16(seed, cm, iters) && h[7] != chain_f32(seed, cm, iters),
	   "gs_fma_f16: the chain in _Float16 (%g, %g)", h[7], chain_f16(seed, cm, iters));
#else
	skip("gcc without _Float16");
#endif
	launch("gs_fma_i32", 2, 1, 128, 1, NULL, pf);
	cu.MemcpyDtoH_v2(h, out, 256 * 4);
	ok(h[3] == chain_int(false, seed, cm, iters), "gs_fma_i32 (%g)", h[3]);
	launch("gs_dp4a_i8", 2, 1, 128, 1, NULL, pf);
	cu.MemcpyDtoH_v2(h, out, 256 * 4);
	ok(h[3] == chain_int(true, seed, cm, iters), "gs_dp4a_i8 (%g)", h[3]);
	void *pm[] = { &out, &seed, &iters };
	is_int(launch("gs_mma_f16", 1, 1, 48, 1, NULL, pm), 1,
	       "gs_mma_f16 in blocks of 48: CUDA_ERROR_INVALID_VALUE");
	seed = 0.5f;
	launch("gs_mma_f16", 2, 1, 128, 1, NULL, pm);
	cu.MemcpyDtoH_v2(h, out, 256 * 4);
	is_dbl(h[0], 20.0 * 16 * 0.25 * 4 * BENCH_MMA_CHAINS, 1e-3,
	       "gs_mma_f16: iters x K x seed^2 per element, summed");

	/* matmul against the triple loop */
	int mn = 40;
	CUdeviceptr ma, mb, mc;
	float *A = malloc(40 * 40 * 4), *B = malloc(40 * 40 * 4), *C = malloc(40 * 40 * 4);
	for (int i = 0; i < 40 * 40; i++)
		A[i] = (float)(i % 7) - 3, B[i] = (float)(i % 5) * 0.5f;
	cu.MemAlloc_v2(&ma, 40 * 40 * 4);
	cu.MemAlloc_v2(&mb, 40 * 40 * 4);
	cu.MemAlloc_v2(&mc, 40 * 40 * 4);
	cu.MemcpyHtoD_v2(ma, A, 40 * 40 * 4);
	cu.MemcpyHtoD_v2(mb, B, 40 * 40 * 4);
	void *pmm[] = { &ma, &mb, &mc, &mn };
	is_int(launch("gs_matmul_tiled", 3, 3, 8, 8, NULL, pmm), 1,
	       "gs_matmul_tiled in 8 x 8 blocks: CUDA_ERROR_INVALID_VALUE");
	is_int(launch("gs_matmul_tiled", 3, 3, 16, 16, NULL, pmm), 0, "gs_matmul_tiled");
	cu.MemcpyDtoH_v2(C, mc, 40 * 40 * 4);
	bad = 0;
	for (int i = 0; i < 40; i++)
		for (int j = 0; j < 40; j++) {
			float s2 = 0;
			for (int k = 0; k < 40; k++)
				s2 += A[i * 40 + k] * B[k * 40 + j];
			bad += C[i * 40 + j] != s2;
		}
	is_int(bad, 0, "gs_matmul_tiled: C = A x B");

	/* the memory test, and gs_compare_f32 */
	CUdeviceptr cnt, first;
	uint32_t pattern = 0x1234, zero = 0;
	int mode = BENCH_MEM_RANDOM;
	uint64_t umax = UINT64_MAX, got_first = 0;
	cu.MemAlloc_v2(&cnt, 4);
	cu.MemAlloc_v2(&first, 8);
	cu.MemcpyHtoD_v2(cnt, &zero, 4);
	cu.MemcpyHtoD_v2(first, &umax, 8);
	void *pfill[] = { &a, &n, &pattern, &mode };
	void *pchk[] = { &a, &n, &pattern, &mode, &cnt, &first };
	launch("gs_mem_fill", 512, 1, 256, 1, NULL, pfill);
	cu.MemsetD32_v2(a + 77 * 4, 0xdeadbeef, 1);
	cu.MemsetD32_v2(a + 900 * 4, 0xdeadbeef, 1);
	launch("gs_mem_check", 512, 1, 256, 1, NULL, pchk);
	uint32_t got_cnt = 0;
	cu.MemcpyDtoH_v2(&got_cnt, cnt, 4);
	cu.MemcpyDtoH_v2(&got_first, first, 8);
	ok(got_cnt == 2 && got_first == 77,
	   "gs_mem_check: 2 words differ, the first at 77 (%u, %llu)", got_cnt,
	   (unsigned long long)got_first);
	cu.MemcpyDtoH_v2(h, a, 4 * 4);
	ok(((uint32_t *)h)[3] == bench_mem_word(3, pattern, mode),
	   "gs_mem_fill writes bench_mem_word()");
	float tol = 0;
	cu.MemcpyHtoD_v2(cnt, &zero, 4);
	void *pcmp[] = { &b, &b, &n, &tol, &cnt };
	launch("gs_compare_f32", 64, 1, 256, 1, NULL, pcmp);
	cu.MemcpyDtoH_v2(&got_cnt, cnt, 4);
	is_int(got_cnt, 0, "gs_compare_f32 of a buffer with itself: 0");

	/* host memory, the spin kernel, async order */
	int32_t *flag;
	float *pinned;
	CUdeviceptr dflag, dpinned;
	CUstream st1;
	uint64_t max_ns = 20000000000ull;
	if (cu.MemHostAlloc((void **)&flag, 4096, 2) ||
	    cu.MemHostAlloc((void **)&pinned, N * 4, 2) ||
	    cu.MemHostGetDevicePointer_v2(&dflag, flag, 0) ||
	    cu.MemHostGetDevicePointer_v2(&dpinned, pinned, 0) || cu.StreamCreate(&st1, 1)) {
		ok(0, "pinned memory and a stream");
		return;
	}
	ok(dflag == (CUdeviceptr)(uintptr_t)flag,
	   "cuMemHostGetDevicePointer_v2: unified addressing");
	is_int(cu.MemHostGetDevicePointer_v2(&dflag, h, 0), 1,
	       "of pageable memory: CUDA_ERROR_INVALID_VALUE");
	for (uint64_t i = 0; i < N; i++)
		pinned[i] = (float)i;
	*flag = 0;
	void *pspin[] = { &dflag, &max_ns };
	is_int(launch("gs_spin", 1, 1, 1, 1, st1, pspin), 0, "gs_spin queued");
	cu.MemcpyHtoDAsync_v2(c, pinned, N * 4, st1);
	usleep(50000);
	is_int(cu.StreamQuery(st1), 600, "the spin holds the stream: CUDA_ERROR_NOT_READY");
	__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
	is_int(cu.StreamSynchronize(st1), 0, "the flag set, the stream completes");
	is_int(cu.StreamQuery(st1), 0, "cuStreamQuery: CUDA_SUCCESS");
	CUevent x0, x1;
	cu.EventCreate(&x0, 0);
	cu.EventCreate(&x1, 0);
	*flag = 0;
	launch("gs_spin", 1, 1, 1, 1, st1, pspin);
	cu.EventRecord(x0, st1);
	for (int i = 0; i < 4; i++)
		cu.MemcpyHtoDAsync_v2(c, pinned, N * 4, st1);
	cu.EventRecord(x1, st1);
	is_int(cu.EventElapsedTime_v2(&ms, x0, x1), 600,
	       "events behind the spin: CUDA_ERROR_NOT_READY");
	__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
	cu.EventSynchronize(x1);
	is_int(cu.EventElapsedTime_v2(&ms, x0, x1), 0, "cuEventElapsedTime_v2 after the spin");
	is_dbl(ms / 1e3, 4.0 * N * 4 / H2D_PINNED, 1e-9,
	       "4 pinned H2D copies at the link's rate, nvbandwidth's way");
	cu.MemcpyDtoH_v2(h, c, N * 4);
	ok(h[12345] == 12345.0f, "the copies landed");
	uint64_t n4 = N / 4;
	void *pcp[] = { &dpinned, &b, &n4 };
	cu.EventRecord(x0, st1);
	launch("gs_copy_u4", 128, 1, 512, 1, st1, pcp);
	cu.EventRecord(x1, st1);
	cu.EventSynchronize(x1);
	cu.EventElapsedTime_v2(&ms, x0, x1);
	is_dbl(ms / 1e3, LAUNCH_S + 16.0 * n4 / H2D_PINNED, 1e-9,
	       "gs_copy_u4 from mapped memory: at the link's rate");
	cu.MemcpyDtoH_v2(h, b, N * 4);
	ok(h[777] == 777.0f, "gs_copy_u4 copied");
	is_int(cu.StreamDestroy_v2(st1), 0, "cuStreamDestroy_v2");
	is_int(cu.StreamQuery(st1), 400, "a destroyed stream: CUDA_ERROR_INVALID_HANDLE");
	cu.MemFreeHost(flag);
	cu.MemFreeHost(pinned);
	is_int(cu.MemFree_v2(a), 0, "cuMemFree_v2");
	is_int(cu.MemFree_v2(a), 1, "twice: CUDA_ERROR_INVALID_VALUE");
	is_int(cu.DevicePrimaryCtxRelease_v2(0), 0, "cuDevicePrimaryCtxRelease_v2");
	is_int(cu.DevicePrimaryCtxRelease_v2(0), 201, "once more: CUDA_ERROR_INVALID_CONTEXT");
	free(h);
	free(A);
	free(B);
	free(C);
}

static void
t_two(void)
{
	int n = 0, cc = 0;
	CUcontext c0, c1;
	char name[64];

	cu.Init(0);
	cu.DeviceGetCount(&n);
	is_int(n, 2, "two devices");
	cu.DeviceGetName(name, sizeof(name), 1);
	is_str(name, "NVIDIA A100-SXM4-40GB", "the second's name");
	cu.DeviceGetAttribute(&cc, 75, 1);
	is_int(cc, 8, "the second is compute capability 8");
	if (cu.CtxCreate_v2(&c1, 0, 1) != 0 || cu.CtxCreate_v2(&c0, 0, 0) != 0) {
		ok(0, "cuCtxCreate_v2");
		return;
	}
	cu.CtxSetCurrent(c1);
	CUmodule m;
	is_int(cu.ModuleLoadData(&m, ptx("8.0", "sm_89", NULL)), 209,
	       "sm_89 PTX on the 8.0 device: refused");
	is_int(cu.ModuleLoadData(&m, ptx("8.0", "sm_80", NULL)), 0, "sm_80 PTX on it: loaded");
	/* realtime = 1: wall time keeps up with the modelled one */
	size_t bytes = 64 << 20;
	void *host = malloc(bytes);
	CUdeviceptr d;
	memset(host, 1, bytes);
	cu.MemAlloc_v2(&d, bytes);
	double t0 = now_s();
	is_int(cu.MemcpyHtoD_v2(d, host, bytes), 0, "a 64 MiB pageable copy");
	double wall = now_s() - t0;
	ok(wall >= 0.95 * bytes / 6e9, "it took the link's time at least (%.4f s, modelled %.4f s)",
	   wall, bytes / 6e9);
	size_t fr, tot;
	cu.MemGetInfo_v2(&fr, &tot);
	is_int(tot, 128 << 20, "the second's memory");
	is_int(cu.CtxDestroy_v2(c1), 0, "cuCtxDestroy_v2");
	is_int(cu.MemGetInfo_v2(&fr, &tot), 201,
	       "with no current context: CUDA_ERROR_INVALID_CONTEXT");
	is_int(cu.CtxDestroy_v2(c0), 0, "the other");
	free(host);
}

static void
t_oom(void)
{
	CUcontext ctx;
	CUdeviceptr a, b;
	size_t fr, tot;

	if (setup(0, &ctx))
		return;
	is_int(cu.MemAlloc_v2(&a, 32 << 20), 0, "32 MiB");
	is_int(cu.MemAlloc_v2(&b, 40 << 20), 2,
	       "40 more past the fault's 64: CUDA_ERROR_OUT_OF_MEMORY");
	cu.MemGetInfo_v2(&fr, &tot);
	ok(fr > (40u << 20), "though cuMemGetInfo_v2 says %zu bytes are free", fr);
}

static struct triad_args ftriad;

static int
fault_setup(CUcontext *ctx, uint64_t n)
{
	float one = 1, two = 2, zero = 0;
	if (setup(0, ctx) || cu.MemAlloc_v2(&ftriad.a, n * 4) || cu.MemAlloc_v2(&ftriad.b, n * 4) ||
	    cu.MemAlloc_v2(&ftriad.c, n * 4))
		return -1;
	ftriad.n = n;
	ftriad.s = 0.5f;
	void *pi[] = { &ftriad.a, &ftriad.b, &ftriad.c, &zero, &one, &two, &ftriad.n };
	return launch("gs_stream_init", 64, 1, 256, 1, NULL, pi);
}

static void
t_launch_failed(void)
{
	CUcontext ctx;
	CUdeviceptr d;

	if (fault_setup(&ctx, 4096))
		return;
	run_triad(&ftriad);
	run_triad(&ftriad);
	is_int(cu.CtxSynchronize(), 0, "two triads");
	run_triad(&ftriad);
	is_int(cu.CtxSynchronize(), 719, "the third: CUDA_ERROR_LAUNCH_FAILED");
	is_int(cu.MemAlloc_v2(&d, 4096), 719, "sticky: cuMemAlloc_v2 says it too");
	is_int(cu.MemFree_v2(ftriad.a), 719, "cuMemFree_v2 frees, and says it");
	is_int(cu.DevicePrimaryCtxRelease_v2(0), 0, "the context goes");
}

static void
t_lost(CUresult want, const char *what)
{
	CUcontext ctx;
	CUresult r;

	/* 3 x 4 x 16 Mi bytes at 3 TB/s: 67 us for the init, as much for a triad */
	if (fault_setup(&ctx, 16 << 20))
		return;
	is_int(cu.CtxSynchronize(), 0, "before 100 us of device time: well");
	run_triad(&ftriad);
	r = cu.CtxSynchronize();
	is_int(r, want, "an operation ending past 100 us: %s", what);
	is_int(cu.StreamQuery(NULL), want, "every later call says it");
	cu.DevicePrimaryCtxRelease_v2(0);
}

static void
t_oob(void)
{
	CUcontext ctx;

	if (fault_setup(&ctx, 4096))
		return;
	ftriad.n = 4097;
	run_triad(&ftriad);
	is_int(cu.CtxSynchronize(), 700,
	       "a kernel reading past its buffer: CUDA_ERROR_ILLEGAL_ADDRESS");
}

static void
t_illegal(void)
{
	t_lost(700, "CUDA_ERROR_ILLEGAL_ADDRESS");
}

static void
t_ecc(void)
{
	t_lost(214, "CUDA_ERROR_ECC_UNCORRECTABLE");
}

static void
t_corrupt(void)
{
	CUcontext ctx;
	float *h = malloc(4096 * 4);
	size_t bad = 0;

	if (fault_setup(&ctx, 4096))
		return;
	run_triad(&ftriad);
	cu.MemcpyDtoH_v2(h, ftriad.a, 4096 * 4);
	for (int i = 0; i < 4096; i++)
		bad += h[i] != 1 + 0.5f * 2;
	ok(bad == 1 && h[1000] != 2.0f, "one element differs, the 1000th (%g)", h[1000]);
	CUdeviceptr want, cnt;
	uint32_t zero = 0, got = 0;
	float tol = 1e-6f, two = 2.0f;
	uint64_t n = 4096;
	for (int i = 0; i < 4096; i++)
		h[i] = two;
	cu.MemAlloc_v2(&want, 4096 * 4);
	cu.MemAlloc_v2(&cnt, 4);
	cu.MemcpyHtoD_v2(want, h, 4096 * 4);
	cu.MemcpyHtoD_v2(cnt, &zero, 4);
	void *p[] = { &want, &ftriad.a, &n, &tol, &cnt };
	launch("gs_compare_f32", 16, 1, 256, 1, NULL, p);
	cu.MemcpyDtoH_v2(&got, cnt, 4);
	is_int(got, 1, "gs_compare_f32 counts it");
	free(h);
}

static void
t_hang(void)
{
	CUcontext ctx;
	CUdeviceptr buf, cnt, first;
	uint64_t n = 1024;
	uint32_t pat = 0;
	int mode = 0;

	if (setup(0, &ctx) || cu.CtxCreate_v2(&ctx, 0, 0) ||
	    cu.ModuleLoadData(&mod, ptx("8.0", "sm_80", NULL)) || cu.MemAlloc_v2(&buf, n * 4) ||
	    cu.MemAlloc_v2(&cnt, 4) || cu.MemAlloc_v2(&first, 8)) {
		ok(0, "hang setup");
		return;
	}
	void *pf[] = { &buf, &n, &pat, &mode };
	void *pc[] = { &buf, &n, &pat, &mode, &cnt, &first };
	launch("gs_mem_fill", 4, 1, 256, 1, NULL, pf);
	is_int(launch("gs_mem_check", 4, 1, 256, 1, NULL, pc), 0,
	       "the launch that hangs is queued");
	int ready = 0;
	for (int i = 0; i < 20; i++) {
		ready |= cu.StreamQuery(NULL) != 600;
		usleep(10000);
	}
	ok(!ready, "cuStreamQuery says CUDA_ERROR_NOT_READY for 200 ms");
	double t0 = now_s();
	is_int(cu.CtxDestroy_v2(ctx), 0, "cuCtxDestroy_v2 of the hung context");
	ok(now_s() - t0 < 1, "at once");
}

static const char *logpath;

static void
t_log(void)
{
	CUcontext ctx;
	FILE *f;
	char line[256];
	bool init = false, launched = false;

	if (setup(0, &ctx))
		return;
	launch("gs_empty", 1, 1, 1, 1, NULL, (void *[]){ &(int){ 0 } });
	cu.CtxSynchronize();
	if (!(f = fopen(logpath, "r"))) {
		ok(0, "the log %s", logpath);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		init |= !strcmp(line, "cuInit - 0\n");
		launched |= !strcmp(line, "cuLaunchKernel 0 0 gs_empty\n");
	}
	fclose(f);
	ok(init && launched,
	   "GPUSCOPE_FAKECUDA_LOG: 'cuInit - 0' and 'cuLaunchKernel 0 0 gs_empty'");
}

static void
abi_check(const char *o)
{
	const char *cuda_h = "/usr/local/cuda/include/cuda.h";
	char cmd[1024];

	if (access(cuda_h, R_OK) != 0) {
		skip_missing(
		        "no /usr/local/cuda/include/cuda.h: the ABI check needs the toolkit's header");
		return;
	}
	snprintf(
	        cmd, sizeof(cmd),
	        "%s -std=gnu11 -Wall -Werror -D__CUDA_API_VERSION_INTERNAL -I/usr/local/cuda/include "
	        "-Itests/fakecuda -fsyntax-only tests/fakecuda/abi_check.c >%s/fakecuda/abi.log 2>&1",
	        getenv("CC") ? getenv("CC") : "cc", o);
	ok(system(cmd) == 0,
	   "tests/fakecuda/abi_check.c compiles against cuda.h (log in %s/fakecuda/abi.log)", o);
}

int
main(void)
{
	const char *o = getenv("O") ? getenv("O") : "build";
	char logbuf[512];

	snprintf(lib_path, sizeof(lib_path), "%s/fakecuda/libcuda.so.1", o);
	if (access(lib_path, R_OK) != 0) {
		ok(0, "%s is built", lib_path);
		return done_testing();
	}
	abi_check(o);
	in_child(NULL, NULL, NULL, t_no_scenario);
	in_child("tests/fakecuda/scenarios/fault-init.scn", NULL, NULL, t_init_fault);
	in_child("tests/fakecuda/scenarios/h100.scn", "0", NULL, t_h100);
	in_child("tests/fakecuda/scenarios/h100.scn", "0", NULL, t_oob);
	in_child("tests/fakecuda/scenarios/two.scn", NULL, NULL, t_two);
	in_child("tests/fakecuda/scenarios/fault-oom.scn", "0", NULL, t_oom);
	in_child("tests/fakecuda/scenarios/fault-launch.scn", "0", NULL, t_launch_failed);
	in_child("tests/fakecuda/scenarios/fault-illegal-address.scn", "0", NULL, t_illegal);
	in_child("tests/fakecuda/scenarios/fault-ecc.scn", "0", NULL, t_ecc);
	in_child("tests/fakecuda/scenarios/fault-corrupt.scn", "0", NULL, t_corrupt);
	in_child("tests/fakecuda/scenarios/fault-hang.scn", "0", NULL, t_hang);
	snprintf(logbuf, sizeof(logbuf), "%s/fakecuda/t_fakecuda.log", o);
	remove(logbuf);
	logpath = logbuf;
	in_child("tests/fakecuda/scenarios/h100.scn", "0", logbuf, t_log);
	return done_testing();
}
