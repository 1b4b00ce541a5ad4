/*
 * The NVML entry points that the fake implements, with NVML's prototypes
 * (nvml.h, API 13), so that the compiler checks each definition against
 * them. Every other name of symbols.txt is a generated NOT_SUPPORTED stub
 * (notsup.c). The legacy build leaves out what old drivers did not have.
 */
#ifndef GPUSCOPE_FAKENVML_NVML_API_H
#define GPUSCOPE_FAKENVML_NVML_API_H

#include "fake.h"

/* runtime.c: life cycle */
FAKE_API nvmlReturn_t nvmlInit(void);
#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t nvmlInit_v2(void);
FAKE_API nvmlReturn_t nvmlInitWithFlags(unsigned int flags);
#endif
FAKE_API nvmlReturn_t nvmlShutdown(void);
FAKE_API const char *gpuscope_fake_nvml_scenario(void);

/* errors.c */
FAKE_API const char *nvmlErrorString(nvmlReturn_t result);

/* system.c: system queries and handles */
FAKE_API nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);
FAKE_API nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length);
FAKE_API nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion);
#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion);
#endif
FAKE_API nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount);
#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount);
#endif
FAKE_API nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device);
#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
#endif
FAKE_API nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device);
FAKE_API nvmlReturn_t nvmlDeviceGetHandleBySerial(const char *serial, nvmlDevice_t *device);
FAKE_API nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *pciBusId, nvmlDevice_t *device);
#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device);
#endif

/* device.c: device queries */
FAKE_API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
FAKE_API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
FAKE_API nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char *serial, unsigned int length);
FAKE_API nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t device, char *version,
                                                unsigned int length);
FAKE_API nvmlReturn_t nvmlDeviceGetInforomImageVersion(nvmlDevice_t device, char *version,
                                                       unsigned int length);
FAKE_API nvmlReturn_t nvmlDeviceGetBoardPartNumber(nvmlDevice_t device, char *partNumber,
                                                   unsigned int length);
FAKE_API nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t device, nvmlBrandType_t *type);
FAKE_API nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device,
                                                nvmlDeviceArchitecture_t *arch);
FAKE_API nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minorNumber);
FAKE_API nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index);
FAKE_API nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major,
                                                         int *minor);
FAKE_API nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t *pci);
#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci);
FAKE_API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci);
#endif
FAKE_API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device,
                                               nvmlTemperatureSensors_t sensorType,
                                               unsigned int *temp);
FAKE_API nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device,
                                                nvmlTemperature_v1_t *temperature);
FAKE_API nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device,
                                                        nvmlTemperatureThresholds_t thresholdType,
                                                        unsigned int *temp);
FAKE_API nvmlReturn_t nvmlDeviceGetMarginTemperature(nvmlDevice_t device,
                                                     nvmlMarginTemperature_v1_t *marginTempInfo);
FAKE_API nvmlReturn_t nvmlDeviceGetNumFans(nvmlDevice_t device, unsigned int *numFans);
FAKE_API nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int *speed);
#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t nvmlDeviceGetFanSpeed_v2(nvmlDevice_t device, unsigned int fan,
                                               unsigned int *speed);
#endif
FAKE_API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power);
FAKE_API nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit);
FAKE_API nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int *limit);
FAKE_API nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device,
                                                               unsigned int *defaultLimit);
FAKE_API nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device,
                                                                   unsigned int *minLimit,
                                                                   unsigned int *maxLimit);
FAKE_API nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device,
                                                          unsigned long long *energy);
FAKE_API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory);
#endif
FAKE_API nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device,
                                                  nvmlBAR1Memory_t *bar1Memory);
FAKE_API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                                    nvmlUtilization_t *utilization);
FAKE_API nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device,
                                                      unsigned int *utilization,
                                                      unsigned int *samplingPeriodUs);
FAKE_API nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device,
                                                      unsigned int *utilization,
                                                      unsigned int *samplingPeriodUs);
FAKE_API nvmlReturn_t nvmlDeviceGetJpgUtilization(nvmlDevice_t device, unsigned int *utilization,
                                                  unsigned int *samplingPeriodUs);
FAKE_API nvmlReturn_t nvmlDeviceGetOfaUtilization(nvmlDevice_t device, unsigned int *utilization,
                                                  unsigned int *samplingPeriodUs);
FAKE_API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                             unsigned int *clock);
FAKE_API nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                                unsigned int *clock);
FAKE_API nvmlReturn_t nvmlDeviceGetClock(nvmlDevice_t device, nvmlClockType_t clockType,
                                         nvmlClockId_t clockId, unsigned int *clockMHz);
FAKE_API nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t *pState);
#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t
nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *clocksEventReasons);
FAKE_API nvmlReturn_t nvmlDeviceGetSupportedClocksEventReasons(
        nvmlDevice_t device, unsigned long long *supportedClocksEventReasons);
#endif
FAKE_API nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(
        nvmlDevice_t device, unsigned long long *clocksThrottleReasons);
FAKE_API nvmlReturn_t nvmlDeviceGetSupportedClocksThrottleReasons(
        nvmlDevice_t device, unsigned long long *supportedClocksThrottleReasons);
FAKE_API nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device,
                                                          unsigned int *currLinkGen);
FAKE_API nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device,
                                                         unsigned int *maxLinkGen);
FAKE_API nvmlReturn_t nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t device,
                                                            unsigned int *maxLinkGenDevice);
FAKE_API nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device,
                                                     unsigned int *currLinkWidth);
FAKE_API nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device,
                                                    unsigned int *maxLinkWidth);
FAKE_API nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned int *value);
FAKE_API nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device,
                                                  nvmlPcieUtilCounter_t counter,
                                                  unsigned int *value);
FAKE_API nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t *mode);
FAKE_API nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t *mode);
FAKE_API nvmlReturn_t nvmlDeviceGetDisplayMode(nvmlDevice_t device, nvmlEnableState_t *display);
FAKE_API nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t device, nvmlEnableState_t *isActive);
FAKE_API nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode,
                                           unsigned int *pendingMode);
FAKE_API nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t *current,
                                           nvmlEnableState_t *pending);
FAKE_API nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device,
                                                  nvmlMemoryErrorType_t errorType,
                                                  nvmlEccCounterType_t counterType,
                                                  unsigned long long *eccCounts);
FAKE_API nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device,
                                                nvmlPageRetirementCause_t cause,
                                                unsigned int *pageCount,
                                                unsigned long long *addresses);
FAKE_API nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device,
                                                             nvmlEnableState_t *isPending);
FAKE_API nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows,
                                                unsigned int *uncRows, unsigned int *isPending,
                                                unsigned int *failureOccurred);
FAKE_API nvmlReturn_t nvmlDeviceGetEncoderStats(nvmlDevice_t device, unsigned int *sessionCount,
                                                unsigned int *averageFps,
                                                unsigned int *averageLatency);
FAKE_API nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount,
                                               nvmlFieldValue_t *values);

/* topology.c: PCIe topology and NVLink */
FAKE_API nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1,
                                                          nvmlDevice_t device2,
                                                          nvmlGpuTopologyLevel_t *pathInfo);
FAKE_API nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                               nvmlEnableState_t *isActive);
FAKE_API nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t device, unsigned int link,
                                                       nvmlPciInfo_t *pci);
#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
                                                          nvmlPciInfo_t *pci);
#endif
FAKE_API nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(
        nvmlDevice_t device, unsigned int link, nvmlIntNvLinkDeviceType_t *pNvLinkDeviceType);

/* nvlink.c: NVLink counters, and the violation counters */
FAKE_API nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t device, unsigned int link,
                                                 unsigned int *version);
FAKE_API nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t device, unsigned int link,
                                                      nvmlNvLinkErrorCounter_t counter,
                                                      unsigned long long *counterValue);
FAKE_API nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t device,
                                                   nvmlPerfPolicyType_t perfPolicyType,
                                                   nvmlViolationTime_t *violTime);

/* process.c: processes */
FAKE_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device,
                                                           unsigned int *infoCount,
                                                           nvmlProcessInfo_v1_t *infos);
FAKE_API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device,
                                                            unsigned int *infoCount,
                                                            nvmlProcessInfo_v1_t *infos);
FAKE_API nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses(nvmlDevice_t device,
                                                              unsigned int *infoCount,
                                                              nvmlProcessInfo_v1_t *infos);
#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device,
                                                              unsigned int *infoCount,
                                                              nvmlProcessInfo_v2_t *infos);
FAKE_API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device,
                                                               unsigned int *infoCount,
                                                               nvmlProcessInfo_v2_t *infos);
FAKE_API nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v2(nvmlDevice_t device,
                                                                 unsigned int *infoCount,
                                                                 nvmlProcessInfo_v2_t *infos);
FAKE_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
                                                              unsigned int *infoCount,
                                                              nvmlProcessInfo_v2_t *infos);
FAKE_API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device,
                                                               unsigned int *infoCount,
                                                               nvmlProcessInfo_v2_t *infos);
FAKE_API nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t device,
                                                                 unsigned int *infoCount,
                                                                 nvmlProcessInfo_v2_t *infos);
#endif
FAKE_API nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                                      nvmlProcessUtilizationSample_t *utilization,
                                                      unsigned int *processSamplesCount,
                                                      unsigned long long lastSeenTimeStamp);
FAKE_API nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length);

/* mig.c: MIG devices */
FAKE_API nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count);
FAKE_API nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                          nvmlDevice_t *migDevice);
FAKE_API nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int *isMigDevice);
FAKE_API nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice,
                                                                   nvmlDevice_t *device);
FAKE_API nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id);
FAKE_API nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id);
FAKE_API nvmlReturn_t nvmlDeviceGetAttributes(nvmlDevice_t device,
                                              nvmlDeviceAttributes_t *attributes);
#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device,
                                                 nvmlDeviceAttributes_t *attributes);
#endif

/* event.c: events */
FAKE_API nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set);
FAKE_API nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set);
FAKE_API nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device,
                                                       unsigned long long *eventTypes);
FAKE_API nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes,
                                               nvmlEventSet_t set);
FAKE_API nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t *data,
                                       unsigned int timeoutms);
#ifndef FAKE_LEGACY
FAKE_API nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data,
                                          unsigned int timeoutms);
#endif

/* gpm.c: GPM samples and metrics */
FAKE_API nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t *gpmSupport);
FAKE_API nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *gpmSample);
FAKE_API nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t gpmSample);
FAKE_API nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t gpmSample);
FAKE_API nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t device, unsigned int gpuInstanceId,
                                          nvmlGpmSample_t gpmSample);
FAKE_API nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *metricsGet);

#endif
