/*
 * bench/dev.h on OpenCL devices (AMD, Intel, Mesa's rusticl, Arm, Qualcomm,
 * NVIDIA's ICD, PoCL): the ICD loader libOpenCL.so.1 is loaded with dlopen,
 * so no OpenCL SDK is needed to build gpuscope and none to run it; dev.h's
 * kernels are OpenCL C built at run time with clBuildProgram. The few
 * types, constants and prototypes used are declared in opencl.c from the
 * Khronos specification (OpenCL 1.2). Nothing here prints.
 */
#ifndef GPUSCOPE_BENCH_OPENCL_H
#define GPUSCOPE_BENCH_OPENCL_H

#include <stdbool.h>
#include <stddef.h>

struct err;

/* One OpenCL device taken for the benchmark. */
struct bench_cl_device {
	char platform[128];            /* CL_PLATFORM_NAME */
	char name[128];                /* CL_DEVICE_NAME */
	char vendor[128];              /* CL_DEVICE_VENDOR */
	char driver[64];               /* CL_DRIVER_VERSION */
	char version[64];              /* CL_DEVICE_VERSION ("OpenCL 3.0 PoCL ...") */
	const char *type;              /* "gpu", "accelerator", "cpu", "other" */
	unsigned compute_units;        /* CL_DEVICE_MAX_COMPUTE_UNITS */
	unsigned clock_mhz;            /* CL_DEVICE_MAX_CLOCK_FREQUENCY, 0: not told */
	unsigned long long global_mem; /* bytes */
	unsigned long long max_alloc;  /* the largest buffer, bytes */
	size_t max_work_group;         /* work-items of a work-group */
	void *platform_id, *device_id;
};

/* The loader and the devices it offers; a zeroed struct is empty. */
struct bench_cl {
	bool loaded;
	char path[256];   /* the loader's real path */
	char reason[512]; /* why no device is taken (also set when loaded but none fits) */
	struct bench_cl_device *dev;
	size_t ndev;
	unsigned platforms;
	unsigned cpu_skipped; /* CPU devices left out (take_cpu false) */
	void *handle;
	const struct bench_cl_sym *sym;
};

/*
 * dlopen path (NULL: "libOpenCL.so.1"), and list the GPU and accelerator
 * devices of every platform, and the CPU devices too when take_cpu. Returns
 * the devices taken (0 or more), or -1 when the loader cannot be used;
 * cl->reason says why there is none (with what to install) when 0 or -1.
 */
int bench_cl_open(struct bench_cl *cl, const char *path, bool take_cpu);
void bench_cl_close(struct bench_cl *cl);

/* The name of a CL error code: "CL_OUT_OF_RESOURCES", or "CL error -N" when unknown. */
const char *bench_cl_error_name(int code, char *buf, size_t size);

/*
 * bench/dev.h on OpenCL. bench_cl_devs_open() adds one struct bench_dev per
 * OpenCL GPU or accelerator (and CPU device when take_cpu) to devs with
 * bench_devs_add(); a device whose PCI bus id (cl_khr_pci_bus_info, or
 * NVIDIA's CL_DEVICE_PCI_BUS_ID_NV/SLOT_ID_NV, AMD's CL_DEVICE_TOPOLOGY_AMD)
 * is in skip_pci (a NULL-terminated list of "0000:17:00.0" strings, may be
 * NULL) is left out, since CUDA measures it. Returns the number added, or -1
 * when the loader cannot be used; when none, devs->opencl_reason says why
 * and what to install. path: NULL -> $GPUSCOPE_OPENCL or libOpenCL.so.1.
 * Each device has its own context, two in-order profiling queues (streams 0
 * and 1) and the dev.h kernels built from OpenCL C; the loader is dlclose()d
 * with the last device.
 */
struct bench_devs;
int bench_cl_devs_open(struct bench_devs *devs, const char *path, bool take_cpu,
                       const char *const *skip_pci);

/*
 * Whether PCI bus id pci ("0000:17:00.0", "00000000:17:00.0" or "17:00.0",
 * any case) names the same function as an entry of skip (NULL-terminated,
 * may be NULL). An empty or malformed pci matches nothing.
 */
bool bench_cl_pci_listed(const char *pci, const char *const *skip);

/*
 * A 16-byte CL_DEVICE_UUID_KHR as dev.h's uuid: nvidia-smi's
 * "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" for an NVIDIA device, "" for
 * any other (dev.h's uuid is nvidia-smi's form or nothing) and for an
 * all-zero UUID. size at least 41.
 */
void bench_cl_uuid_str(const unsigned char uuid[16], bool nvidia, char *buf, size_t size);

/*
 * For the tests, whose one device (PoCL) has every feature: the devices
 * opened after this call act as one without them would. max_atom64 2: 64-bit
 * atom_min where the device has it; 1: at most the compare-and-swap loop of
 * cl_khr_int64_base_atomics; 0: the 32-bit index. marker_events: time with
 * a tiny kernel's event in place of a marker's, as on a platform that gives
 * markers no profiling times. (2, false) is the default.
 */
void bench_cl_test_limits(int max_atom64, bool marker_events);

#endif
