/*
 * Internals of the fake libcuda.so.1 of the tests (docs/fake-cuda.md): the
 * scenario (scenario.c), the objects behind the driver's handles, the
 * per-stream worker threads and their queues (stream.c) and the kernels of
 * bench/dev.h computed on the CPU with their modelled durations
 * (kernels.c). api.c holds the exported entry points.
 */
#ifndef GPUSCOPE_FAKECUDA_FAKE_H
#define GPUSCOPE_FAKECUDA_FAKE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/dev.h"
#include "cuda_abi.h"

#define FCU_MAX_DEVICES 16
#define FCU_MAX_FAULTS  16
#define FCU_MAX_ARGS    8
#define FCU_MAX_LINKS   64

/* the kernel classes a scenario gives a rate to (operations per second) */
enum fcu_rate {
	FR_F64,
	FR_F32,
	FR_F16,
	FR_BF16,
	FR_I32,
	FR_I8,
	FR_MMA_F16,
	FR_MMA_BF16,
	FR_MMA_TF32,
	FR_MMA_I8,
	FR_MMA_FP8,
	FR_MATMUL,
	FR_MATMUL_F64,
	FR__COUNT
};

enum fcu_fault_kind {
	FF_LAUNCH_FAILED,   /* kernel's Nth launch: CUDA_ERROR_LAUNCH_FAILED, sticky */
	FF_ILLEGAL_ADDRESS, /* an operation ending past after_s: sticky */
	FF_ECC,             /* the same with CUDA_ERROR_ECC_UNCORRECTABLE */
	FF_CORRUPT,         /* kernel's output element index gets bit flipped */
	FF_HANG,            /* kernel's Nth launch never completes */
	FF_OOM,             /* cuMemAlloc past bytes in all: CUDA_ERROR_OUT_OF_MEMORY */
};

struct fcu_fault {
	enum fcu_fault_kind kind;
	int kern;                  /* enum bench_kern, or -1 */
	unsigned long long launch; /* 1-based; 0: every launch (corrupt) */
	unsigned long long index;  /* FF_CORRUPT: element of the output */
	unsigned bit;              /* FF_CORRUPT */
	double after_s;            /* FF_ILLEGAL_ADDRESS, FF_ECC: device seconds */
	unsigned long long bytes;  /* FF_OOM */
};

struct fcu_dev {
	int index;
	char name[256];
	char pci_bus_id[32]; /* "0000:17:00.0" */
	unsigned pci_domain, pci_bus, pci_device;
	unsigned char uuid[16];
	int cc_major, cc_minor;
	int sms, clock_khz, mem_clock_khz, bus_width, max_threads, async_engines, ecc;
	unsigned long long l2_bytes, mem_total, mem_used_other;
	double mem_Bps;                          /* device memory, bytes per second */
	double h2d_pinned_Bps, h2d_pageable_Bps; /* the link, per direction */
	double d2h_pinned_Bps, d2h_pageable_Bps;
	double launch_s; /* added to every kernel's duration */
	double rate[FR__COUNT];
	struct fcu_fault fault[FCU_MAX_FAULTS];
	size_t nfault;

	/* state, under fcu_lock */
	unsigned long long mem_alloc;             /* bytes of every context's buffers */
	unsigned long long launches[BK_NKERNELS]; /* cuLaunchKernel calls per kernel */
	struct CUctx_st *primary;
	int primary_refs;
};

/* a [link] section: what joins devices a and b (both directions alike) */
struct fcu_link {
	int a, b;
	bool p2p;    /* cuDeviceCanAccessPeer both ways */
	double Bps;  /* a peer copy's rate, per direction */
	int rank;    /* CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK */
	int atomics; /* CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED */
};

struct fcu_scenario {
	int driver_version;  /* cuDriverGetVersion, 13000 = CUDA 13.0 */
	CUresult init_error; /* what cuInit answers, CUDA_SUCCESS normally */
	double realtime;     /* wall seconds slept per modelled second */
	int ptx_max;         /* newest PTX ISA accepted, 10 x major + minor */
	struct fcu_dev dev[FCU_MAX_DEVICES];
	int ndev;
	struct fcu_link link[FCU_MAX_LINKS];
	int nlink;
};

/* A device buffer of cuMemAlloc (the fake's device memory is the host's). */
struct fcu_alloc {
	struct fcu_alloc *next;
	uintptr_t base;
	size_t bytes, mapped; /* asked for, and mmap()ed */
};

struct CUfunc_st {
	struct CUmod_st *mod;
	char name[128];
	int kern; /* enum bench_kern, -1: not a kernel of dev.h */
};

struct CUmod_st {
	struct CUmod_st *next;
	struct CUctx_st *ctx;
	struct CUfunc_st *func;
	size_t nfunc;
};

/* one kernel launch as queued: the arguments copied at the call, as the driver does */
struct fcu_launch {
	int kern;
	unsigned grid[3], block[3];
	union fcu_arg {
		uint64_t u64;
		int32_t i32;
		uint32_t u32;
		float f32;
		double f64;
	} arg[FCU_MAX_ARGS];
	bool fail, hang;
	const struct fcu_fault *corrupt;
};

enum fcu_op_kind { FO_COPY, FO_SET8, FO_SET32, FO_KERNEL, FO_EVENT, FO_HOOK };

/*
 * FO_HOOK's work (fcu_hook_enqueue): run(arg, true) on the stream's worker, in
 * order, or run(arg, false) when it never runs (the context went first), so
 * that it can free arg either way; a non-zero CUresult from a run is sticky.
 */
typedef CUresult fcu_hook_fn(void *arg, bool run);

struct fcu_op {
	struct fcu_op *next;
	enum fcu_op_kind kind;
	double enq_clock; /* the context's device clock when queued */
	/* the legacy default stream's ordering: wait for these counts of done */
	struct CUstream_st **wait;
	uint64_t *wait_n;
	size_t nwait;
	/* FO_COPY, FO_SET*: dst and src checked at the call */
	void *dst;
	const void *src;
	size_t bytes;
	uint32_t value;
	double Bps; /* FO_COPY, FO_SET*: the modelled rate */
	struct fcu_launch launch;
	struct CUevent_st *event;
	/* FO_HOOK: the work and its modelled seconds */
	fcu_hook_fn *hook;
	void *hook_arg;
	double hook_s;
};

struct CUstream_st {
	struct CUstream_st *next;
	struct CUctx_st *ctx;
	unsigned flags;
	bool is_null;   /* the context's default stream (0) */
	bool destroyed; /* by cuStreamDestroy: the worker ends once its queue is empty */
	bool stop;      /* the worker ends now (context destroyed) */
	bool started;
	pthread_t thread;
	struct fcu_op *head, *tail;
	uint64_t enq, done; /* operations queued, and completed */
	double clock;       /* device seconds at the end of the last operation */
};

struct CUevent_st {
	struct CUevent_st *next;
	struct CUctx_st *ctx;
	unsigned flags;
	bool destroyed;
	uint64_t enq, done; /* records queued, and reached */
	double t;           /* device seconds of the last record reached */
};

struct CUctx_st {
	struct CUctx_st *next; /* every live context */
	struct fcu_dev *dev;
	bool primary;
	pthread_mutex_t mu; /* everything below, the streams' queues and the events */
	pthread_cond_t cv;  /* broadcast when an operation completes or state changes */
	CUresult sticky;    /* the lost context's error, CUDA_SUCCESS while well */
	bool dying;
	double clock; /* the device clock: the latest end of any stream's operation */
	struct fcu_alloc *alloc;
	struct CUmod_st *mod;
	struct CUstream_st *stream; /* the default stream first */
	struct CUevent_st *event;
	/* contexts whose buffers this one may reach (cuCtxEnablePeerAccess); under fcu_lock */
	struct CUctx_st *peer[FCU_MAX_DEVICES];
	int npeer;
};

/* scenario.c: read path into sc; 0, or -1 after a message on stderr */
int fcu_scenario_read(const char *path, struct fcu_scenario *sc);
/* a CUresult for a name ("OUT_OF_MEMORY", "CUDA_ERROR_OUT_OF_MEMORY" or "2"), -1 if none */
long fcu_result_by_name(const char *name);
/* the [link] between devices a and b of sc (either order), or NULL */
const struct fcu_link *fcu_link_of(const struct fcu_scenario *sc, int a, int b);

/* api.c */
extern pthread_mutex_t fcu_lock; /* the device table, the contexts' list, pinned memory */
extern struct fcu_scenario fcu_sc;
/* the bytes [addr, addr + bytes) as a host pointer, if they lie in one buffer
 * of ctx or in pinned host memory; *pinned says which */
void *fcu_mem(struct CUctx_st *ctx, uint64_t addr, size_t bytes, bool *pinned);
/* whether host pointer p starts bytes of pinned memory */
bool fcu_is_pinned(const void *p, size_t bytes);
void fcu_log(const char *fn, int dev, CUresult r, const char *extra);

/*
 * The hooks of the fake libcublasLt.so.13 (tests/fakecublaslt/, docs/fake-cuda.md's
 * last section), exported beside the driver's API and found by dlsym; not in
 * NVIDIA's library. fcu_hook_mem: the calling thread's context's device bytes
 * [addr, addr + bytes) as a host pointer, NULL if they are not within one of
 * its buffers (or pinned memory). fcu_hook_enqueue: queue fn on stream h of
 * that context as an operation lasting seconds of device time.
 */
FCU_API void *fcu_hook_mem(uint64_t addr, size_t bytes);
FCU_API CUresult fcu_hook_enqueue(CUstream h, fcu_hook_fn *fn, void *arg, double seconds);

/* stream.c: queue op on s (taking it); the worker runs it in order */
CUresult fcu_stream_start(struct CUstream_st *s);
void fcu_enqueue(struct CUstream_st *s, struct fcu_op *op);
/* wait for everything queued on s to complete, or poll once (query) */
CUresult fcu_stream_wait(struct CUstream_st *s, bool query);
/* stop the workers of ctx at once (ctx->dying set) and join them */
void fcu_streams_stop(struct CUctx_st *ctx);

/* kernels.c */
/* the kernel's parameters ('p' pointer, 'u' u64, 'i' i32, 'w' u32, 'f' f32, 'd' f64) */
const char *fcu_kern_params(int kern);
/* whether dev can run it (its architecture has the instructions) */
int fcu_kern_min_cc(int kern);
/*
 * Run launch L on the CPU with ctx's memory and give its modelled duration;
 * CUDA_ERROR_ILLEGAL_ADDRESS when a pointer it follows is outside every
 * buffer. spin: the worker's own loop (stream.c), not this.
 */
CUresult fcu_kern_run(struct CUctx_st *ctx, const struct fcu_launch *L, double *seconds);

#endif
