/*
 * Drives the fake NVML the way a monitor does, from several threads, for
 * test_fake.py to run under valgrind: init twice, query every GPU (each GPU
 * from its own thread) while another thread waits for events, the process
 * lists with the two-call pattern, then
 * shut down and do it all again, so that a second load of the scenario runs.
 *
 * Built by the test against the fake library:
 *   cc -Isrc -Itests/fakenvml exercise.c -L<dir> -l:libnvidia-ml.so.1 -lpthread
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "nvml_api.h"

#define ROUNDS 50

static int failures;
static pthread_mutex_t failures_lock = PTHREAD_MUTEX_INITIALIZER;

static void
expect(const char *what, nvmlReturn_t rc, nvmlReturn_t want)
{
	if (rc == want)
		return;
	fprintf(stderr, "exercise: %s: %u (%s), expected %u\n", what, rc, nvmlErrorString(rc),
	        want);
	pthread_mutex_lock(&failures_lock);
	failures++;
	pthread_mutex_unlock(&failures_lock);
}

/* NOT_SUPPORTED and the scenario's errors are answers too: only crashes and leaks count */
static void
query(nvmlDevice_t dev)
{
	nvmlProcessInfo_v2_t procs[16];
	nvmlProcessUtilizationSample_t samples[16];
	nvmlMemory_v2_t mem = { .version = nvmlMemory_v2 };
	nvmlFieldValue_t fv[2] = { { .fieldId = NVML_FI_DEV_MEMORY_TEMP },
		                   { .fieldId = NVML_FI_DEV_POWER_INSTANT } };
	nvmlPciInfo_t pci;
	unsigned long long reasons;
	unsigned int v, n;
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];

	nvmlDeviceGetName(dev, name, sizeof(name));
	nvmlDeviceGetPciInfo_v3(dev, &pci);
	nvmlDeviceGetMemoryInfo_v2(dev, &mem);
	nvmlDeviceGetTemperature(dev, NVML_TEMPERATURE_GPU, &v);
	nvmlDeviceGetPowerUsage(dev, &v);
	nvmlDeviceGetClockInfo(dev, NVML_CLOCK_SM, &v);
	nvmlDeviceGetCurrentClocksEventReasons(dev, &reasons);
	nvmlDeviceGetFieldValues(dev, 2, fv);
	n = 0;
	if (nvmlDeviceGetComputeRunningProcesses_v3(dev, &n, NULL) ==
	    NVML_ERROR_INSUFFICIENT_SIZE) {
		if (n > 16)
			n = 16;
		nvmlDeviceGetComputeRunningProcesses_v3(dev, &n, procs);
	}
	n = 16;
	nvmlDeviceGetProcessUtilization(dev, samples, &n, 0);
	nvmlDeviceGetPcieThroughput(dev, NVML_PCIE_UTIL_TX_BYTES, &v);
}

static void *
worker(void *arg)
{
	unsigned int index = (unsigned int)(size_t)arg;
	nvmlDevice_t dev;

	expect("nvmlDeviceGetHandleByIndex_v2", nvmlDeviceGetHandleByIndex_v2(index, &dev),
	       NVML_SUCCESS);
	for (int i = 0; i < ROUNDS; i++)
		query(dev);
	return NULL;
}

/* a monitor's event thread: short waits on GPU 0's Xids while the workers query */
static void *
waiter(void *arg)
{
	nvmlEventSet_t set;
	nvmlEventData_t data;
	nvmlDevice_t dev;

	(void)arg;
	expect("nvmlEventSetCreate", nvmlEventSetCreate(&set), NVML_SUCCESS);
	expect("nvmlDeviceGetHandleByIndex_v2", nvmlDeviceGetHandleByIndex_v2(0, &dev),
	       NVML_SUCCESS);
	expect("nvmlDeviceRegisterEvents",
	       nvmlDeviceRegisterEvents(dev, nvmlEventTypeXidCriticalError, set), NVML_SUCCESS);
	for (int i = 0; i < ROUNDS; i++)
		nvmlEventSetWait_v2(set, &data, 1);
	expect("nvmlEventSetFree", nvmlEventSetFree(set), NVML_SUCCESS);
	return NULL;
}

static void
session(void)
{
	pthread_t threads[FAKE_MAX_GPUS], events;
	unsigned int count = 0;

	expect("nvmlInit_v2", nvmlInit_v2(), NVML_SUCCESS);
	expect("nvmlInitWithFlags", nvmlInitWithFlags(0), NVML_SUCCESS);
	expect("nvmlDeviceGetCount_v2", nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
	pthread_create(&events, NULL, waiter, NULL);
	for (unsigned int i = 0; i < count; i++)
		pthread_create(&threads[i], NULL, worker, (void *)(size_t)i);
	for (unsigned int i = 0; i < count; i++)
		pthread_join(threads[i], NULL);
	pthread_join(events, NULL);
	expect("nvmlShutdown", nvmlShutdown(), NVML_SUCCESS);
	expect("nvmlShutdown", nvmlShutdown(), NVML_SUCCESS);
	expect("nvmlShutdown after the last", nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
}

int
main(void)
{
	session();
	session();
	return failures ? 1 : 0;
}
