/*
 * What doctor needs to know about the NVIDIA driver's user-space side,
 * apart from the devices: which libnvidia-ml was loaded, how nvmlInit
 * answered, and the versions the kernel module and the library report.
 */
#ifndef GPUSCOPE_NVML_PROBE_H
#define GPUSCOPE_NVML_PROBE_H

#include <stdbool.h>
#include <stddef.h>

struct gs_config;

struct nvml_probe {
	bool loaded;              /* a libnvidia-ml was found and loaded */
	char library[256];        /* its path (as dlopen resolved it), "" when none */
	char load_error[256];     /* why none could be loaded, "" when one was */
	int init_rc;              /* nvmlInit's return code (NVML_SUCCESS = 0); -1 not called */
	char init_error[128];     /* nvmlErrorString(init_rc), or our name for it */
	char driver_version[80];  /* nvmlSystemGetDriverVersion, "" unknown */
	char nvml_version[80];    /* nvmlSystemGetNVMLVersion, "" unknown */
	int cuda_version;         /* nvmlSystemGetCudaDriverVersion (12040 = 12.4), 0 unknown */
	char module_version[64];  /* from <proc>/driver/nvidia/version, "" unknown */
	char library_version[64]; /* from the library's file name (libnvidia-ml.so.590.48.01) */
};

/*
 * The version in the first line of /proc/driver/nvidia/version's text:
 * "NVRM version: NVIDIA UNIX x86_64 Kernel Module  590.48.01  ..." or
 * "... Open Kernel Module for x86_64  590.48.01 ..." (*open set). "" when
 * there is none, or it does not fit buf (a cut version would be another).
 */
void nvml_parse_module_version(const char *text, char *buf, size_t size, bool *open);

/*
 * Load libnvidia-ml the way the NVML backend does (cfg->nvml_path, then the
 * usual names), call nvmlInit, read the system versions, shut down. Never
 * fails: what could not be learnt stays empty, and the reason is in p.
 */
void nvml_probe(const struct gs_config *cfg, struct nvml_probe *p);

/*
 * True once an nvmlShutdown did not return within the timeout: a thread is
 * still inside the driver library, so the program should end with _exit()
 * (its output flushed) rather than run the library's destructors.
 */
bool nvml_abandoned(void);

#endif
