/*
 * NVML's binary interface, written in this project from NVIDIA's documented
 * ABI (prototypes, struct layouts, version words, error codes and constants
 * of nvml.h, NVML API 13). No NVIDIA header is needed to build gpuscope.
 *
 * The names keep NVML's spelling so that the declarations can be checked
 * against the documentation line by line. Enums are plain unsigned ints in
 * the ABI; we use typedefs of unsigned int to keep that size exact.
 *
 * This header is shared by the NVML backend (src/backend/nvml.c) and by the
 * fake driver library of the test suite (tests/fakenvml/), which must honour
 * the same layouts. Layout facts are pinned by static assertions below.
 */
#ifndef GPUSCOPE_NVML_ABI_H
#define GPUSCOPE_NVML_ABI_H

#include <stddef.h>

typedef struct nvmlDevice_st *nvmlDevice_t;
typedef unsigned int nvmlReturn_t;
typedef unsigned int nvmlEnableState_t;
typedef unsigned int nvmlClockType_t;
typedef unsigned int nvmlClockId_t;
typedef unsigned int nvmlTemperatureSensors_t;
typedef unsigned int nvmlTemperatureThresholds_t;
typedef unsigned int nvmlPstates_t;
typedef unsigned int nvmlComputeMode_t;
typedef unsigned int nvmlMemoryErrorType_t;
typedef unsigned int nvmlEccCounterType_t;
typedef unsigned int nvmlPageRetirementCause_t;
typedef unsigned int nvmlBrandType_t;
typedef unsigned int nvmlDeviceArchitecture_t;
typedef unsigned int nvmlPcieUtilCounter_t;

/* nvmlReturn_t */
#define NVML_SUCCESS                         0
#define NVML_ERROR_UNINITIALIZED             1
#define NVML_ERROR_INVALID_ARGUMENT          2
#define NVML_ERROR_NOT_SUPPORTED             3
#define NVML_ERROR_NO_PERMISSION             4
#define NVML_ERROR_ALREADY_INITIALIZED       5
#define NVML_ERROR_NOT_FOUND                 6
#define NVML_ERROR_INSUFFICIENT_SIZE         7
#define NVML_ERROR_INSUFFICIENT_POWER        8
#define NVML_ERROR_DRIVER_NOT_LOADED         9
#define NVML_ERROR_TIMEOUT                   10
#define NVML_ERROR_IRQ_ISSUE                 11
#define NVML_ERROR_LIBRARY_NOT_FOUND         12
#define NVML_ERROR_FUNCTION_NOT_FOUND        13
#define NVML_ERROR_CORRUPTED_INFOROM         14
#define NVML_ERROR_GPU_IS_LOST               15
#define NVML_ERROR_RESET_REQUIRED            16
#define NVML_ERROR_OPERATING_SYSTEM          17
#define NVML_ERROR_LIB_RM_VERSION_MISMATCH   18
#define NVML_ERROR_IN_USE                    19
#define NVML_ERROR_MEMORY                    20
#define NVML_ERROR_NO_DATA                   21
#define NVML_ERROR_VGPU_ECC_NOT_SUPPORTED    22
#define NVML_ERROR_INSUFFICIENT_RESOURCES    23
#define NVML_ERROR_FREQ_NOT_SUPPORTED        24
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25
#define NVML_ERROR_DEPRECATED                26
#define NVML_ERROR_NOT_READY                 27
#define NVML_ERROR_GPU_NOT_FOUND             28
#define NVML_ERROR_INVALID_STATE             29
#define NVML_ERROR_RESET_TYPE_NOT_SUPPORTED  30
#define NVML_ERROR_UNKNOWN                   999

/* nvmlInitWithFlags flags */
#define NVML_INIT_FLAG_NO_GPUS    1
#define NVML_INIT_FLAG_NO_ATTACH  2
#define NVML_INIT_FLAG_FORCE_INIT 4

/* buffer sizes */
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE  80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE    80
#define NVML_DEVICE_NAME_BUFFER_SIZE            64
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE         96
#define NVML_DEVICE_UUID_BUFFER_SIZE            80
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE         96
#define NVML_DEVICE_SERIAL_BUFFER_SIZE          30
#define NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE   32
#define NVML_DEVICE_PART_NUMBER_BUFFER_SIZE     80
#define NVML_DEVICE_INFOROM_VERSION_BUFFER_SIZE 16
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE      32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE   16

#define NVML_VALUE_NOT_AVAILABLE_ULL (~0ULL)
#define NVML_INSTANCE_ID_NONE        0xFFFFFFFFu

/* nvmlEnableState_t */
#define NVML_FEATURE_DISABLED 0
#define NVML_FEATURE_ENABLED  1

/* nvmlGpuTopologyLevel_t: the closest common ancestor of two GPUs */
typedef unsigned int nvmlGpuTopologyLevel_t;
#define NVML_TOPOLOGY_INTERNAL   0  /* the same board */
#define NVML_TOPOLOGY_SINGLE     10 /* one PCIe switch */
#define NVML_TOPOLOGY_MULTIPLE   20 /* PCIe switches, no host bridge */
#define NVML_TOPOLOGY_HOSTBRIDGE 30 /* one host bridge */
#define NVML_TOPOLOGY_NODE       40 /* host bridges of one CPU (NUMA node) */
#define NVML_TOPOLOGY_SYSTEM     50 /* across CPUs */

#define NVML_NVLINK_MAX_LINKS 18

/* nvmlDeviceGetNvLinkErrorCounter: the data-link layer's counters of a link */
typedef unsigned int nvmlNvLinkErrorCounter_t;
#define NVML_NVLINK_ERROR_DL_REPLAY   0
#define NVML_NVLINK_ERROR_DL_RECOVERY 1
#define NVML_NVLINK_ERROR_DL_CRC_FLIT 2
#define NVML_NVLINK_ERROR_DL_CRC_DATA 3

/* nvmlDeviceGetViolationStatus: what held the clocks down */
typedef unsigned int nvmlPerfPolicyType_t;
#define NVML_PERF_POLICY_POWER             0
#define NVML_PERF_POLICY_THERMAL           1
#define NVML_PERF_POLICY_SYNC_BOOST        2
#define NVML_PERF_POLICY_BOARD_LIMIT       3
#define NVML_PERF_POLICY_LOW_UTILIZATION   4
#define NVML_PERF_POLICY_RELIABILITY       5
#define NVML_PERF_POLICY_TOTAL_APP_CLOCKS  10
#define NVML_PERF_POLICY_TOTAL_BASE_CLOCKS 11

typedef struct nvmlViolationTime_st {
	unsigned long long referenceTime; /* CPU timestamp, microseconds */
	unsigned long long violationTime; /* nanoseconds held down, since the driver loaded */
} nvmlViolationTime_t;

/* nvmlIntNvLinkDeviceType_t: what the far end of an NVLink is */
typedef unsigned int nvmlIntNvLinkDeviceType_t;
#define NVML_NVLINK_DEVICE_TYPE_GPU     0x00
#define NVML_NVLINK_DEVICE_TYPE_IBMNPU  0x01
#define NVML_NVLINK_DEVICE_TYPE_SWITCH  0x02
#define NVML_NVLINK_DEVICE_TYPE_UNKNOWN 0xFF

/* nvmlClockType_t */
#define NVML_CLOCK_GRAPHICS 0
#define NVML_CLOCK_SM       1
#define NVML_CLOCK_MEM      2
#define NVML_CLOCK_VIDEO    3

/* nvmlTemperatureSensors_t */
#define NVML_TEMPERATURE_GPU 0

/* nvmlTemperatureThresholds_t */
#define NVML_TEMPERATURE_THRESHOLD_SHUTDOWN      0
#define NVML_TEMPERATURE_THRESHOLD_SLOWDOWN      1
#define NVML_TEMPERATURE_THRESHOLD_MEM_MAX       2
#define NVML_TEMPERATURE_THRESHOLD_GPU_MAX       3
#define NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MIN  4
#define NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_CURR 5
#define NVML_TEMPERATURE_THRESHOLD_ACOUSTIC_MAX  6
#define NVML_TEMPERATURE_THRESHOLD_GPS_CURR      7

/* nvmlPstates_t: 0..15, and */
#define NVML_PSTATE_UNKNOWN 32

/* nvmlComputeMode_t */
#define NVML_COMPUTEMODE_DEFAULT           0
#define NVML_COMPUTEMODE_EXCLUSIVE_THREAD  1
#define NVML_COMPUTEMODE_PROHIBITED        2
#define NVML_COMPUTEMODE_EXCLUSIVE_PROCESS 3

/* nvmlMemoryErrorType_t, nvmlEccCounterType_t */
#define NVML_MEMORY_ERROR_TYPE_CORRECTED   0
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1
#define NVML_VOLATILE_ECC                  0
#define NVML_AGGREGATE_ECC                 1

/* nvmlPageRetirementCause_t */
#define NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS 0
#define NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR           1

/* nvmlPcieUtilCounter_t */
#define NVML_PCIE_UTIL_TX_BYTES 0
#define NVML_PCIE_UTIL_RX_BYTES 1

/* MIG mode */
#define NVML_DEVICE_MIG_DISABLE 0
#define NVML_DEVICE_MIG_ENABLE  1

/* nvmlDeviceArchitecture_t */
#define NVML_DEVICE_ARCH_KEPLER    2
#define NVML_DEVICE_ARCH_MAXWELL   3
#define NVML_DEVICE_ARCH_PASCAL    4
#define NVML_DEVICE_ARCH_VOLTA     5
#define NVML_DEVICE_ARCH_TURING    6
#define NVML_DEVICE_ARCH_AMPERE    7
#define NVML_DEVICE_ARCH_ADA       8
#define NVML_DEVICE_ARCH_HOPPER    9
#define NVML_DEVICE_ARCH_BLACKWELL 10
#define NVML_DEVICE_ARCH_T23X      11
#define NVML_DEVICE_ARCH_RUBIN     13
#define NVML_DEVICE_ARCH_UNKNOWN   0xffffffffu

/* clocks event (formerly "throttle") reasons */
#define nvmlClocksEventReasonGpuIdle                   0x1ULL
#define nvmlClocksEventReasonApplicationsClocksSetting 0x2ULL
#define nvmlClocksEventReasonSwPowerCap                0x4ULL
#define nvmlClocksThrottleReasonHwSlowdown             0x8ULL
#define nvmlClocksEventReasonSyncBoost                 0x10ULL
#define nvmlClocksEventReasonSwThermalSlowdown         0x20ULL
#define nvmlClocksThrottleReasonHwThermalSlowdown      0x40ULL
#define nvmlClocksThrottleReasonHwPowerBrakeSlowdown   0x80ULL
#define nvmlClocksEventReasonDisplayClockSetting       0x100ULL
#define nvmlClocksEventReasonNone                      0x0ULL
#define nvmlClocksEventReasonAll                       0x1FFULL

/* struct version words: sizeof(struct) | (version << 24) */
#define NVML_STRUCT_VERSION(size, ver) ((unsigned int)(size) | ((unsigned int)(ver) << 24U))

typedef struct nvmlPciInfo_st {
	char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
	unsigned int domain;
	unsigned int bus;
	unsigned int device;
	unsigned int pciDeviceId;    /* (device id << 16) | vendor id */
	unsigned int pciSubSystemId; /* (subsystem id << 16) | subsystem vendor */
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

typedef struct nvmlMemory_st {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used; /* includes driver-reserved memory */
} nvmlMemory_t;

typedef struct nvmlMemory_v2_st {
	unsigned int version; /* nvmlMemory_v2 */
	unsigned long long total;
	unsigned long long reserved;
	unsigned long long free;
	unsigned long long used; /* excludes reserved */
} nvmlMemory_v2_t;
#define nvmlMemory_v2 NVML_STRUCT_VERSION(sizeof(nvmlMemory_v2_t), 2)

typedef struct nvmlBAR1Memory_st {
	unsigned long long bar1Total;
	unsigned long long bar1Free;
	unsigned long long bar1Used;
} nvmlBAR1Memory_t;

typedef struct nvmlUtilization_st {
	unsigned int gpu;
	unsigned int memory;
} nvmlUtilization_t;

/* nvmlDeviceGetAttributes(_v2): of a MIG device, its share of the GPU */
typedef struct nvmlDeviceAttributes_st {
	unsigned int multiprocessorCount;
	unsigned int sharedCopyEngineCount;
	unsigned int sharedDecoderCount;
	unsigned int sharedEncoderCount;
	unsigned int sharedJpegCount;
	unsigned int sharedOfaCount;
	unsigned int gpuInstanceSliceCount;
	unsigned int computeInstanceSliceCount;
	unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

/* plain nvmlDevice*RunningProcesses (the oldest entry points) */
typedef struct nvmlProcessInfo_v1_st {
	unsigned int pid;
	unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

/* used by the _v2 and the _v3 entry points of shipped drivers */
typedef struct nvmlProcessInfo_v2_st {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;

/*
 * The layout that a window of R530/R535 drivers wrote from the _v3 entry
 * points (one DCGM copy of nvml.h had it): 8 more bytes per entry. Only used
 * to recognise and survive those drivers.
 */
typedef struct nvmlProcessInfoCc_st {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
	unsigned long long usedGpuCcProtectedMemory;
} nvmlProcessInfoCc_t;

typedef struct nvmlProcessUtilizationSample_st {
	unsigned int pid;
	unsigned long long timeStamp; /* CPU timestamp in microseconds */
	unsigned int smUtil;
	unsigned int memUtil;
	unsigned int encUtil;
	unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

/* nvmlDeviceGetTemperatureV, which replaces nvmlDeviceGetTemperature in NVML 13 */
typedef struct nvmlTemperature_v1_st {
	unsigned int version; /* nvmlTemperature_v1 */
	nvmlTemperatureSensors_t sensorType;
	int temperature;
} nvmlTemperature_v1_t;
#define nvmlTemperature_v1 NVML_STRUCT_VERSION(sizeof(nvmlTemperature_v1_t), 1)

typedef struct nvmlMarginTemperature_v1_st {
	unsigned int version; /* nvmlMarginTemperature_v1 */
	int marginTemperature;
} nvmlMarginTemperature_v1_t;
#define nvmlMarginTemperature_v1 NVML_STRUCT_VERSION(sizeof(nvmlMarginTemperature_v1_t), 1)

/* nvmlDeviceGetFieldValues */
typedef unsigned int nvmlValueType_t;
#define NVML_VALUE_TYPE_DOUBLE             0
#define NVML_VALUE_TYPE_UNSIGNED_INT       1
#define NVML_VALUE_TYPE_UNSIGNED_LONG      2
#define NVML_VALUE_TYPE_UNSIGNED_LONG_LONG 3
#define NVML_VALUE_TYPE_SIGNED_LONG_LONG   4
#define NVML_VALUE_TYPE_SIGNED_INT         5
#define NVML_VALUE_TYPE_UNSIGNED_SHORT     6

typedef union nvmlValue_st {
	double dVal;
	int siVal;
	unsigned int uiVal;
	unsigned long ulVal;
	unsigned long long ullVal;
	signed long long sllVal;
	unsigned short usVal;
} nvmlValue_t;

typedef struct nvmlFieldValue_st {
	unsigned int fieldId;
	unsigned int scopeId;
	long long timestamp; /* CPU timestamp in microseconds */
	long long latencyUsec;
	nvmlValueType_t valueType;
	nvmlReturn_t nvmlReturn;
	nvmlValue_t value;
} nvmlFieldValue_t;

/* events (nvmlDeviceRegisterEvents, nvmlEventSetWait_v2) */
typedef struct nvmlEventSet_st *nvmlEventSet_t;

#define nvmlEventTypeSingleBitEccError 0x1ULL
#define nvmlEventTypeDoubleBitEccError 0x2ULL
#define nvmlEventTypePState            0x4ULL
#define nvmlEventTypeXidCriticalError  0x8ULL /* eventData: the Xid code */
#define nvmlEventTypeClock             0x10ULL
#define nvmlEventTypePowerSourceChange 0x80ULL
#define nvmlEventMigConfigChange       0x100ULL
#define nvmlEventTypeNone              0x0ULL

/*
 * What a wait returns. The plain nvmlEventSetWait dates from before MIG and
 * writes device, eventType and eventData only (24 bytes); _v2 writes all of it.
 */
typedef struct nvmlEventData_st {
	nvmlDevice_t device;
	unsigned long long eventType;
	unsigned long long eventData;
	unsigned int gpuInstanceId; /* NVML_INSTANCE_ID_NONE outside MIG */
	unsigned int computeInstanceId;
} nvmlEventData_t;

/*
 * GPM, the GPU performance monitoring of Hopper and later: the library turns
 * two samples of a device's counters into metrics over the time between them.
 */
typedef struct nvmlGpmSample_st *nvmlGpmSample_t;

#define NVML_GPM_METRIC_GRAPHICS_UTIL           1
#define NVML_GPM_METRIC_SM_UTIL                 2
#define NVML_GPM_METRIC_SM_OCCUPANCY            3
#define NVML_GPM_METRIC_INTEGER_UTIL            4
#define NVML_GPM_METRIC_ANY_TENSOR_UTIL         5
#define NVML_GPM_METRIC_DRAM_BW_UTIL            10
#define NVML_GPM_METRIC_FP64_UTIL               11
#define NVML_GPM_METRIC_FP32_UTIL               12
#define NVML_GPM_METRIC_FP16_UTIL               13
#define NVML_GPM_METRIC_PCIE_TX_PER_SEC         20 /* MiB/s */
#define NVML_GPM_METRIC_PCIE_RX_PER_SEC         21
#define NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC 60 /* MiB/s, all links */
#define NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC 61
#define NVML_GPM_METRIC_MAX                     477 /* one past the last id (NVML 13) */

#define NVML_GPM_METRICS_GET_VERSION 1
#define NVML_GPM_SUPPORT_VERSION     1

typedef struct nvmlGpmMetric_st {
	unsigned int metricId;   /* in: an NVML_GPM_METRIC_* */
	nvmlReturn_t nvmlReturn; /* out: whether value was computed */
	double value;
	struct {
		char *shortName;
		char *longName;
		char *unit;
	} metricInfo; /* out: the library's own strings */
} nvmlGpmMetric_t;

/* The library reads metrics[0..numMetrics-1] only: a caller may pass a shorter array. */
typedef struct nvmlGpmMetricsGet_st {
	unsigned int version; /* NVML_GPM_METRICS_GET_VERSION */
	unsigned int numMetrics;
	nvmlGpmSample_t sample1; /* the earlier */
	nvmlGpmSample_t sample2;
	nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

typedef struct nvmlGpmSupport_st {
	unsigned int version; /* NVML_GPM_SUPPORT_VERSION */
	unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

/* field ids used by gpuscope */
#define NVML_FI_DEV_MEMORY_TEMP         82
#define NVML_FI_DEV_PCIE_REPLAY_COUNTER 94
#define NVML_FI_DEV_POWER_AVERAGE       185
#define NVML_FI_DEV_POWER_INSTANT       186
/* per link (scopeId = link number), KiB since the driver loaded */
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX 138
#define NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX 139

/* Layout facts of the x86-64 ABI (nvml.h, API 13). */
_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t layout");
_Static_assert(offsetof(nvmlPciInfo_t, pciDeviceId) == 28, "nvmlPciInfo_t layout");
_Static_assert(offsetof(nvmlPciInfo_t, busId) == 36, "nvmlPciInfo_t layout");
_Static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t layout");
_Static_assert(sizeof(nvmlDeviceAttributes_t) == 40, "nvmlDeviceAttributes_t layout");
_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t layout");
_Static_assert(nvmlMemory_v2 == 0x02000028, "nvmlMemory_v2 version word");
_Static_assert(sizeof(nvmlProcessInfo_v1_t) == 16, "nvmlProcessInfo_v1_t layout");
_Static_assert(sizeof(nvmlProcessInfo_v2_t) == 24, "nvmlProcessInfo_v2_t layout");
_Static_assert(sizeof(nvmlProcessInfoCc_t) == 32, "nvmlProcessInfoCc_t layout");
_Static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32, "sample layout");
_Static_assert(sizeof(nvmlMarginTemperature_v1_t) == 8, "margin layout");
_Static_assert(nvmlTemperature_v1 == 0x0100000C, "nvmlTemperature_v1 version word");
_Static_assert(nvmlMarginTemperature_v1 == 0x01000008, "margin version word");
_Static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t layout");
_Static_assert(sizeof(nvmlViolationTime_t) == 16, "nvmlViolationTime_t layout");
_Static_assert(sizeof(nvmlEventData_t) == 32, "nvmlEventData_t layout");
_Static_assert(offsetof(nvmlEventData_t, gpuInstanceId) == 24, "nvmlEventData_t layout");
_Static_assert(sizeof(nvmlGpmMetric_t) == 40, "nvmlGpmMetric_t layout");
_Static_assert(offsetof(nvmlGpmMetricsGet_t, metrics) == 24, "nvmlGpmMetricsGet_t layout");
_Static_assert(sizeof(nvmlGpmSupport_t) == 8, "nvmlGpmSupport_t layout");

#endif
